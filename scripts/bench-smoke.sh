#!/usr/bin/env bash
# Smoke run of every benchmark binary at tiny sizes: a debug build, each binary run end to
# end, and a check that every row it reports was printed, so a benchmark that no longer runs
# is caught before someone needs scripts/bench.sh. Then BeekonBench's ratios are held to the
# generous limits of Benchmarks/thresholds.tsv (scripts/bench_thresholds.py): not timings to
# quote, but an index turned into a scan or a per-fix cost multiplied fails here. Called by .ci/run.
#
#   scripts/bench-smoke.sh
#
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fail=0
expect() {  # expect FILE PATTERN...: every pattern must match a line of FILE
  local file=$1; shift
  for p in "$@"; do
    grep -Eq -- "$p" "$file" || { echo "bench smoke: no row matching '$p' in $(basename "$file")" >&2; fail=1; }
  done
}
# Every binary (beekon-ingest beekon-load IngestBench LiveBench HistoryBench BeekonBench) in one
# build of the server package into this package's .build, as scripts/test.sh builds it: after
# the tests this is a check that nothing is stale, not a compilation.
swift build --package-path Server --scratch-path .build >/dev/null
bin=.build/debug

"$bin/IngestBench" --fixes 400 --clients 2 > "$out/ingest.txt"
expect "$out/ingest.txt" "^PostgreSQL batch=100" "^PostgreSQL batch=1000" "^SQLite batch=100" "^SQLite batch=1000" \
  "ingest\+dedupe .* fixes/s" "replay \(all dup\) .* fixes/s" "plain COPY .* fixes/s" "raw INSERT .* fixes/s"

BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" "$bin/LiveBench" --viewers 4 --batches 3 --backfill 200 > "$out/live.txt"
expect "$out/live.txt" "^\(a\) commit→event latency" "^\(b\) commit→event latency" "^\(c\) backfill after reconnect \(SQLite\)" \
  "^\(c\) backfill after reconnect \(PostgreSQL\)" "^\(d\) RSS per 1,000 idle viewers \(SQLite, in-process" \
  "^\(d\) RSS per 1,000 idle viewers \(SQLite, beekon-ingest process alone" "^    baseline"

BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" "$bin/HistoryBench" --fixes 2000 --days 1 --runs 1 --backend both > "$out/history.txt"
expect "$out/history.txt" "^SQLite: \(a\) first-render request" "^PostgreSQL: \(a\) first-render request" "\(b\) raw track"

python3 scripts/ingest_rate.py --binary smoke="$(pwd)/$bin/beekon-ingest" --devices 2,20 --requests 20 --runs 1 > "$out/rate.txt"
expect "$out/rate.txt" "^smoke devices=2 req/s [0-9]+ cpu_ms_per_req" "^smoke devices=20 req/s [0-9]+ cpu_ms_per_req"
python3 scripts/ingest_rate.py --database postgres --binary pg-group="$(pwd)/$bin/beekon-ingest" \
  --binary "pg-single=$(pwd)/$bin/beekon-ingest --no-group-commit" --devices 2 --requests 20 --runs 1 > "$out/rate-pg.txt"
expect "$out/rate-pg.txt" "^pg-group devices=2 req/s [0-9]+ cpu_ms_per_req" "^pg-single devices=2 req/s [0-9]+ cpu_ms_per_req"

python3 scripts/slow_conns.py --binary "$(pwd)/$bin/beekon-ingest" --connections 20 --probes 10 --exhaust 400 > "$out/slow.txt" ||
  { echo "bench smoke: slow_conns.py exited non-zero" >&2; fail=1; }
expect "$out/slow.txt" "^slow-conns idle: healthz p50 [0-9.]+ p99 [0-9.]+ rss_mib" "^slow-conns held 20 \(open 20\): healthz p50" \
  "^slow-conns exhaust 400 at nofile 256: recovered_ms [0-9]+"

# scripts/load.sh: devices stepped twice on SQLite after a warm-up, with the read-back, then viewers
# over two instances on one PostgreSQL after a warm-up, with the delivery check; each exits non-zero on a loss.
scripts/load.sh --debug --devices 5 --rate 20 --step 20 --max-rate 40 --p99-limit 60000 --duration 1 --warmup 1 > "$out/load.txt" ||
  { echo "bench smoke: load.sh devices exited non-zero" >&2; fail=1; }
expect "$out/load.txt" "^warm-up at 20 req/s × 1 s \(not counted\): achieved [0-9]+ req/s \(20 ok, 0 failed\)" \
  "^rate 20 req/s × 1 s: achieved [0-9]+ req/s \(20 ok, 0 failed\); latency ms p50 .* p99\.9 .* max" \
  "^  CPU: servers [0-9.]+ cores, [0-9.]+ ms per upload answered; beekon-load [0-9.]+ cores" \
  "^rate 40 req/s" "^saturation: " "^read back 800 fixes: 0 lost, 0 stored twice"
scripts/load.sh --debug --postgres --instances 2 --viewers 6 --devices 2 --batch 1 --rate 10 --duration 1 --warmup 1 \
  > "$out/viewers.txt" || { echo "bench smoke: load.sh viewers exited non-zero" >&2; fail=1; }
expect "$out/viewers.txt" "^RSS idle: .* MiB per 1,000 idle viewers" \
  "^warm-up at 10/s × 1 s \(not counted\): 10 uploads, upload → 200 p99 [0-9.]+ ms, 0 failed" \
  "^commit→event latency .* p50 .* p99 " "^delivered 20 events to 6 viewers: 0 deliveries missing, 0 extra"

# scripts/attack_bench.py: each attack of issue 50 at tiny sizes, ingest alone and attacked (rows, not timings).
python3 scripts/attack_bench.py --binary "$(pwd)/$bin/beekon-ingest" --quick > "$out/attack.txt" ||
  { echo "bench smoke: attack_bench.py exited non-zero" >&2; fail=1; }
expect "$out/attack.txt" "^AT1 20 idle long-polls, one credential \(defaults\): alone p50 .* held 4 refused429 16" \
  "^AT1 20 idle long-polls, one credential \(cap lifted\): .* held 20 refused429 0" \
  "^AT2 20 never-reading viewers \+ 20 idle long-polls \(caps lifted\): alone p50 .* ratio p50 .* p99 " \
  "^AT3 one address holding every connection it can .* probes [1-9]" "^AT4 flood of bad codes.* 429:[1-9]" \
  "^target AT1 " "^target AT2 ingest p99" "^target AT2 server RSS" "^target AT3 "

# BeekonBench: every row at its tiny size (--tiny), P3 draining into the debug beekon-ingest.
BEEKON_INGEST_BINARY="$(pwd)/$bin/beekon-ingest" "$bin/BeekonBench" --tiny --runs 1 --json "$out/sdk.json" > "$out/sdk.txt"
expect "$out/sdk.txt" "^P1 " "^P1-dev25 " "^P1-pipeline " "^P5 " "^P2/1 " "^P2/10 " "^P2/100 " "^P2/1000 " \
  "^P3 .* s " "^P3-cpu .* ms/batch" "^W1 " "^P6-1k " "^P6-10k " "^P6-100k " "^P6-page-100k " "^P8-frames " "^P8-ranging " \
  "^D1 after [0-9]+ events" "^P3: .*receiver=beekon-ingest"
python3 scripts/bench_thresholds.py Benchmarks/thresholds.tsv "$out/sdk.json" > "$out/thresholds.txt" ||
  { echo "bench smoke: a ratio is outside Benchmarks/thresholds.tsv" >&2; fail=1; }

if [ "$fail" != 0 ]; then
  for f in "$out"/*.txt; do echo "--- $(basename "$f")"; cat "$f"; done
  exit 1
fi
cat "$out/thresholds.txt"
echo "bench smoke: every row of IngestBench, LiveBench, HistoryBench, ingest_rate.py, slow_conns.py, load.sh, attack_bench.py and BeekonBench produced"
