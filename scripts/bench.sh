#!/usr/bin/env bash
# One benchmark command (issue 9): builds in release and prints one table of every measure
# next to the baseline measured in the same run, with the ratio; writes JSON with --json.
#
#   scripts/bench.sh [--runs N] [--json PATH] [--quick]
#
#   P1 per-fix pipeline vs raw GRDB insert        P2 gzipped bytes per fix at batch 1/10/100/1000
#   P3 drain of 100,000 fixes vs raw HTTP client   P4 ingest with dedupe vs COPY / raw SQLite inserts
#   P3 pinned (issue 31): P3 again with beekon-ingest on CPU 0 and the bench (both client arms,
#      interleaved run by run) on CPU 1 (`taskset`); the unpinned P3 stays as the second row.
#      P3-cpu: the SDK's CPU per batch vs the same work done directly (SELECT, writer, gzip, UPDATE)
#   W1 the server's decode of a 1,000-fix upload (one-pass reader) vs JSONDecoder alone
#   S  /healthz p99 and server RSS while 1,000 slow-head connections are held vs idle (issue 28),
#      and the recovery time after descriptor exhaustion (nofile 256, 400 connections; target 2 s)
#   P5 one day of history vs raw SQL               P6 geofence evaluation 1k/10k/100k vs brute force
#   P6-page Apple region re-page at 100k fences (target < 1 ms) vs a scan of every fence
#   P7 peak RSS: agent tracking vs agent idle; server under load vs server idle
#   L  live stream (issue 14): commit→event latency p50/p99 at 1,000 SSE viewers (one SQLite
#      instance; two instances on PostgreSQL), backfill events/s, RSS per 1,000 idle viewers
#   Fidelity: `beekon fidelity` for every track in Tests/Data/gpx (stored %, max/p95 error), with the
#   error-bounded rows (maxDeviationMeters 25) and offline Douglas–Peucker at 25 m, and their ratio
#   P1-pipeline (issue 16): P1 with the activity classifier, a heartbeat and a 200 m blur vs P1 (target ≤ 1.1×)
#   D1 diagnostic log ring buffer: database + WAL size after 10k/100k/1M events (bounded by the cap)
#   Activity: `beekon activity` confusion table for every track in Tests/Data/gpx (walk: walking, bus: automotive),
#      and `beekon activity --evaluate Tests/Data/labelled` (issue 29: evaluation set, training set, leave-one-out)
#   AT attacks (issue 50): ingest p50/p99 at 500 uploads/s alone and with 200 idle long-polls, 400 never-reading
#      streams, one address holding every connection, a flood of bad credentials (scripts/attack_bench.py)
#   H  history (issue 15): a 30-day 1 Hz device history (2.6 M fixes; --quick: 30 days at 0.1 Hz) — the dashboard's
#      first-render request (overview tier) vs the raw track, time and bytes, and the page's first render in chromium
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5; json=""; quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2;;
    --json) json="$2"; shift 2;;
    --quick) quick=1; shift;;
    *) echo "usage: scripts/bench.sh [--runs N] [--json PATH] [--quick]" >&2; exit 2;;
  esac
done
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
data=Tests/Data

SECONDS=0
stage() { echo "== $1 (at ${SECONDS} s) =="; }
stage "building (release)"
# Every binary from the Server package's build, which depends on this package: the
# dependencies both share (swift-crypto with its BoringSSL, GRDB, swift-argument-parser,
# swift-log) are compiled once instead of once per package.
# (Into this package's .build, as scripts/test.sh builds the server package.)
for product in beekon-ingest IngestBench LiveBench HistoryBench beekon BeekonBench; do
  swift build --package-path Server --scratch-path .build -c release --product "$product" >/dev/null
done
bin=.build/release

stage "P1 P1-pipeline P2 P3 W1 P5 P6 P8 D1 B1 (BeekonBench)"
BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" "$bin/BeekonBench" --runs "$runs" --json "$out/sdk.json" | tee "$out/sdk.txt"

stage "P3 pinned: beekon-ingest on CPU 0, both client arms on CPU 1 (taskset)"
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  BEEKON_INGEST_CPUS=0 BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" taskset -c 1 "$bin/BeekonBench" --only P3 --runs "$runs" \
    --json "$out/p3-pinned.json" | tee "$out/p3-pinned.txt"
else
  echo "P3 pinned skipped: needs 2 CPUs and taskset"
fi

stage "P4 (IngestBench)"
fixes=100000; [ "$quick" = 1 ] && fixes=20000
"$bin/IngestBench" --fixes "$fixes" --clients 4 | tee "$out/ingest.txt"

stage "I ingest throughput and CPU per upload (scripts/ingest_rate.py)"
irequests=4000; iruns=3; [ "$quick" = 1 ] && irequests=1000 && iruns=1
python3 scripts/ingest_rate.py --binary ingest="$(pwd)/$bin/beekon-ingest" --devices 10,10000 --requests "$irequests" \
  --runs "$iruns" | tee "$out/rate.txt"
# PostgreSQL (a throw-away cluster with fsync on), group commit on vs off in the same run (issue 32).
python3 scripts/ingest_rate.py --database postgres --binary pg-group="$(pwd)/$bin/beekon-ingest" \
  --binary "pg-single=$(pwd)/$bin/beekon-ingest --no-group-commit" --devices 10 --requests "$irequests" --concurrency 16 \
  --runs "$iruns" | tee "$out/rate-pg.txt"

stage "S /healthz and RSS while 1,000 slow connections are held (scripts/slow_conns.py)"
python3 scripts/slow_conns.py --binary "$(pwd)/$bin/beekon-ingest" --connections 1000 --probes 400 | tee "$out/slow.txt"

stage "AT attacks (scripts/attack_bench.py): ingest at 500 uploads/s alone and with each attack of issue 50"
arounds=3; aduration=15; [ "$quick" = 1 ] && arounds=1 && aduration=5
python3 scripts/attack_bench.py --binary "$(pwd)/$bin/beekon-ingest" --rounds "$arounds" --duration "$aduration" \
  --json "$out/attack.json" | tee "$out/attack.txt"

stage "L live stream (LiveBench)"
viewers=1000; backfill=100000; [ "$quick" = 1 ] && viewers=200 && backfill=20000
"$bin/LiveBench" --viewers "$viewers" --backfill "$backfill" | tee "$out/live.txt"

stage "H history first render (HistoryBench)"
hfixes=2592000; hbackend=both; [ "$quick" = 1 ] && hfixes=259200 && hbackend=sqlite
BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" "$bin/HistoryBench" --fixes "$hfixes" --backend "$hbackend" | tee "$out/history.txt"

stage "P7 peak RSS"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
agent_db="$out/agent.sqlite"
cat > "$out/agent.json" <<JSON
{"preset": "precision", "sync": {"url": "http://127.0.0.1:$port/v1/locations", "batchSize": 1000}}
JSON
srv=$(pwd)/$bin/beekon-ingest
python3 scripts/rss.py --for 3 -- "$srv" --port "$port" --database "sqlite:$out/idle.sqlite" > "$out/srv-idle.json"
"$srv" --port "$port" --database "sqlite:$out/ingest.sqlite" >/dev/null 2>&1 &
srv_pid=$!
python3 - "$port" <<'PY'
import sys, time, urllib.request
for _ in range(300):
    try: urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=1); break
    except Exception: time.sleep(0.1)
PY
python3 scripts/rss.py -- "$bin/beekon" track --source "replay:$data/gpx/movingpandas_304_to_UL_bus_1hz.gpx" \
  --speed max --db "$agent_db" --config "$out/agent.json" > "$out/agent-track.json"
# Baseline: the same agent, SDK and database open, tracking a source that never delivers a fix.
python3 scripts/rss.py -- "$bin/beekon" track --source gpsd://127.0.0.1:1 --source-timeout 3 \
  --db "$out/idle-agent.sqlite" > "$out/agent-idle.json"
kill -TERM "$srv_pid"; wait "$srv_pid" || true
python3 scripts/rss.py --load "http://127.0.0.1:$port/v1/locations" 400 -- "$srv" --port "$port" --database "sqlite:$out/load.sqlite" > "$out/srv-load.json"

stage "fidelity"
for f in "$data"/gpx/*.gpx; do "$bin/beekon" fidelity --source "replay:$f" --json > "$out/fidelity-$(basename "$f" .gpx).json"; done

stage "activity"
for f in "$data"/gpx/*.gpx; do
  case "$(basename "$f")" in *walk*) label=walking;; *bus*) label=automotive;; *) label=unknown;; esac
  { echo "  $(basename "$f" .gpx) (label $label)"; "$bin/beekon" activity --source "replay:$f" --label "$label" | sed 's/^/    /'; } >> "$out/activity.txt"
done
# Issue 29: the labelled set, split named in Tests/Data/labelled/SPLIT.md (evaluation, training, leave-one-recording-out).
"$bin/beekon" activity --evaluate "$data/labelled" | sed 's/^/  /' >> "$out/activity.txt"

python3 - "$out" "$json" <<'PY'
import json, os, re, sys
out, dest = sys.argv[1], sys.argv[2]
sdk = json.load(open(os.path.join(out, "sdk.json")))
pinned_path = os.path.join(out, "p3-pinned.json")
pinned = {r["id"]: r for r in json.load(open(pinned_path))["results"]} if os.path.exists(pinned_path) else {}
rows = []
def sdk_row(name, r):
    return (name, r["unit"], r["ours"]["median"], r["ours"]["min"], r["ours"]["max"],
            r["baseline"]["median"], r["baseline"]["min"], r["baseline"]["max"], r["ratio"])
for r in sdk["results"]:
    if r["id"] in pinned:  # issue 31: the pinned figure first, the unpinned one as the second row
        rows.append(sdk_row(r["id"] + " pinned srv0/bench1", pinned[r["id"]]))
        rows.append(sdk_row(r["id"] + " unpinned", r))
    else:
        rows.append(sdk_row(r["id"], r))
group = ""
for line in open(os.path.join(out, "ingest.txt")):
    if re.match(r"^(PostgreSQL|SQLite) batch=\d+", line):
        group = line.split()[0].replace("PostgreSQL", "PG") + " " + line.split()[1]
    m = re.match(r"\s*(.+?)\s+(\d+) fixes/s .*ratio vs (.+?): ([\d.]+)", line)
    if m and not m.group(1).strip().startswith(("plain", "raw")):
        rows.append((f"P4 {group} {m.group(1).strip()} vs {m.group(3)}", "fixes/s", float(m.group(2)),
                     None, None, float(m.group(2)) / float(m.group(4)), None, None, float(m.group(4))))
rate = {}
for line in open(os.path.join(out, "rate.txt")):
    m = re.match(r"ingest devices=(\d+) req/s ([\d.]+) cpu_ms_per_req ([\d.]+)", line)
    if m: rate[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
if 10 in rate and 10000 in rate:
    rows.append(("I ingest 10-fix uploads, 10 devices", "req/s", rate[10][0], None, None, rate[10000][0], None, None,
                 rate[10][0] / rate[10000][0]))
    rows.append(("I server CPU/upload 10k vs 10 dev", "ms", rate[10000][1], None, None, rate[10][1], None, None,
                 rate[10000][1] / rate[10][1]))
pg = {}
for line in open(os.path.join(out, "rate-pg.txt")):
    m = re.match(r"(pg-group|pg-single) devices=\d+ req/s ([\d.]+)", line)
    if m: pg[m.group(1)] = float(m.group(2))
if "pg-group" in pg and "pg-single" in pg:
    rows.append(("I PG group commit on vs off", "req/s", pg["pg-group"], None, None, pg["pg-single"], None, None,
                 pg["pg-group"] / pg["pg-single"]))
slow = {}
for line in open(os.path.join(out, "slow.txt")):
    m = re.match(r"slow-conns (idle|held).*healthz p50 ([\d.]+) p99 ([\d.]+) rss_mib ([\d.]+)", line)
    if m: slow[m.group(1)] = (float(m.group(3)), float(m.group(4)))
if "idle" in slow and "held" in slow:  # issue 28: the server keeps answering while its accept path is held
    rows.append(("S /healthz p99, 1,000 slow conns", "ms", slow["held"][0], None, None, slow["idle"][0], None, None,
                 slow["held"][0] / slow["idle"][0]))
    rows.append(("S server RSS, 1,000 slow conns", "MiB", slow["held"][1], None, None, slow["idle"][1], None, None,
                 slow["held"][1] / slow["idle"][1]))
for r in json.load(open(os.path.join(out, "attack.json")))["rows"]:  # issue 50: same server, alone vs attacked
    rows.append((f"{r['id']} ingest p99, {r['label']}"[:60], "ms", r["attacked_p99_ms"], None, None, r["alone_p99_ms"], None, None,
                 r["ratio_p99"]))
def rss(name): return json.load(open(os.path.join(out, name)))["peak_kib"] / 1024
p7 = [("P7 agent tracking", rss("agent-track.json"), rss("agent-idle.json")),
      ("P7 server under load", rss("srv-load.json"), rss("srv-idle.json"))]
for name, ours, base in p7:
    rows.append((name, "MiB peak RSS", ours, None, None, base, None, None, ours / base if base else float("nan")))
fid = {}
for f in sorted(os.listdir(out)):
    if f.startswith("fidelity-"):
        fid[f[9:-5]] = json.load(open(os.path.join(out, f)))
def n(v): return "-" if v is None else (f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}")
print("\n%-34s %-12s %22s %22s %8s" % ("measure", "unit", "ours (min–max)", "baseline (min–max)", "ratio"))
for r in rows:
    o = n(r[2]) + ("" if r[3] is None else f" ({n(r[3])}–{n(r[4])})")
    b = n(r[5]) + ("" if r[6] is None else f" ({n(r[6])}–{n(r[7])})")
    print("%-34s %-12s %22s %22s %7.2f×" % (r[0], r[1], o, b, r[8]))
for line in open(os.path.join(out, "slow.txt")):
    if line.startswith("slow-conns exhaust"): print("\n" + line.rstrip())
print("\nlive stream (LiveBench; targets: p99 < 100 ms at 1,000 viewers, backfill ≥ 50,000 events/s, < 20 MiB per 1,000 idle viewers)")
for line in open(os.path.join(out, "live.txt")):
    if line.startswith("(") or line.startswith("    baseline"): print("  " + line.rstrip())
print("\nhistory (HistoryBench; target: first render < 1 s and < 1 MB for 30 days at 1 Hz)")
for line in open(os.path.join(out, "history.txt")):
    if not line.startswith(("History benchmark", "---")): print("  " + line.rstrip())
print("\nfidelity (stored % of raw fixes, max / p95 distance from raw fixes to the stored polyline, m)")
for track, items in fid.items():
    print("  " + track)
    for i in items:
        print("    %-20s %5.1f%%  max %6.1f  p95 %6.1f" % (i["config"], i["stored_percent"], i["max_error_m"], i["p95_error_m"]))
    by = {i["config"]: i for i in items}
    for name, row in by.items():
        m = re.match(r"(deviation|faithful)(\d+)$", name)
        dp = by.get("douglas-peucker" + m.group(2)) if m else None
        if dp and dp["stored"]:
            print("    %-20s %.2f× the fixes of offline Douglas–Peucker (target ≤ 1.3×, limit 1.5×)" % (name, row["stored"] / dp["stored"]))
print("\nactivity (beekon activity; targets: walk ≥ 90 % of moving fixes walking, bus ≥ 80 % automotive)")
print(open(os.path.join(out, "activity.txt")).read().rstrip())
for line in open(os.path.join(out, "sdk.txt")):
    if line.startswith("D1 "): print(line.rstrip())
if dest:
    json.dump({"rows": [dict(zip(["id","unit","ours","ours_min","ours_max","baseline","baseline_min","baseline_max","ratio"], r)) for r in rows],
               "fidelity": fid}, open(dest, "w"), indent=2)
    print("written", dest)
PY
echo "== done in ${SECONDS} s =="
