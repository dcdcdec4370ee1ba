#!/usr/bin/env bash
# Runs every fuzzer of both packages (track readers, gpsd decoder, agent config parser,
# ingest endpoint) at the scale that reaches N inputs in total, then prints one table.
#
#   scripts/fuzz.sh [--inputs N] [--seed S]      (default N = 1000000, S = 8)
#
# Builds the debug test products, runs only the fuzz tests with BEEKON_FUZZ_SCALE,
# BEEKON_FUZZ_SEED and BEEKON_FUZZ_REPORT set (each fuzzer appends a JSON line to the
# report), and exits 0 only when no fuzzer crashed or failed and N inputs were reached.
# A fuzzer that started but never reported is counted as a crash. Reproduce a failure
# with the same --seed and --inputs; the failing input's seed and index are in the log.
# Scratch paths: FUZZ_SCRATCH (root package, default .build) and FUZZ_SERVER_SCRATCH
# (Server/, default .build).
set -uo pipefail
cd "$(dirname "$0")/.."

inputs=1000000
seed=8
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs) inputs="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (use --inputs N, --seed S)" >&2; exit 2 ;;
  esac
done
case "$inputs$seed" in *[!0-9]*|'') echo "fuzz.sh: --inputs and --seed take whole numbers" >&2; exit 2 ;; esac

# Inputs per unit of BEEKON_FUZZ_SCALE, summed over the fuzzers that scale linearly:
# random reader input 4 × 400, gpsd lines 3 × 600, config files 600 in-process,
# ingest bodies 3,000 decoded + 3,000 through the app. On top, samples that grow only up
# to a cap: whole mutated track files (5×), config files through the binary (4×),
# ingest bodies over loopback HTTP (2×).
per_scale=10000
scale=$(( (inputs + per_scale - 1) / per_scale ))
[ "$scale" -ge 1 ] || scale=1

root_scratch="${FUZZ_SCRATCH:-.build}"
server_scratch="${FUZZ_SERVER_SCRATCH:-../.build}"  # relative to Server/: the root package's .build, as scripts/test.sh
report="$(mktemp "${TMPDIR:-/tmp}/beekon-fuzz.XXXXXX")"
logs="$(mktemp -d "${TMPDIR:-/tmp}/beekon-fuzz-logs.XXXXXX")"
export BEEKON_FUZZ_SCALE="$scale" BEEKON_FUZZ_SEED="$seed" BEEKON_FUZZ_REPORT="$report"

echo "fuzzing: $inputs inputs requested, seed $seed, BEEKON_FUZZ_SCALE=$scale; logs in $logs"
start=$(date +%s)
status=0

run() { # name dir scratch filter
  local name="$1" dir="$2" scratch="$3" filter="$4"
  echo "== $name: building tests =="
  if ! (cd "$dir" && swift build --build-tests --scratch-path "$scratch" >"$logs/$name-build.log" 2>&1); then
    tail -n 30 "$logs/$name-build.log"; echo "fuzz.sh: $name did not build" >&2; exit 1
  fi
  echo "== $name: fuzzing =="
  (cd "$dir" && swift test --skip-build --scratch-path "$scratch" --filter "$filter" >"$logs/$name-test.log" 2>&1)
  local rc=$?
  grep -E '^(✔|✘) Test run|error:|Fatal error|signal' "$logs/$name-test.log" | tail -n 5
  if [ $rc -ne 0 ]; then
    status=1
    grep -E '^✘ Test .* (failed|recorded an issue)' "$logs/$name-test.log" | head -n 20
  fi
  echo "$name $rc" >>"$logs/exit-codes"
}

run root . "$root_scratch" 'FuzzTests|GPSDFixAssemblerTests/fuzz|AgentHardeningTests/mutatedConfig'
run server Server "$server_scratch" 'IngestFuzzTests'

python3 - "$report" "$inputs" "$(( $(date +%s) - start ))" "$logs/exit-codes" <<'EOF' || status=1
import json, sys
report, wanted, wall, codes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
started, done = [], {}
for line in open(report):
    r = json.loads(line)
    if r.get("started"):
        started.append(r["name"])
    else:
        done[r["name"]] = r
rows = [done.get(n) or {"name": n, "inputs": 0, "crashes": 1, "failures": 0, "seconds": 0} for n in dict.fromkeys(started)]
width = max([len(r["name"]) for r in rows] + [len("fuzzer")])
print(f"\n{'fuzzer':<{width}}  {'inputs':>10}  {'crashes':>7}  {'500s/failures':>13}  {'seconds':>8}")
for r in rows:
    print(f"{r['name']:<{width}}  {r['inputs']:>10,}  {r['crashes']:>7}  {r['failures']:>13}  {r['seconds']:>8.1f}")
total = {k: sum(r[k] for r in rows) for k in ("inputs", "crashes", "failures", "seconds")}
print(f"{'total':<{width}}  {total['inputs']:>10,}  {total['crashes']:>7}  {total['failures']:>13}  {total['seconds']:>8.1f}")
print(f"wall time {wall} s (builds included); test exit codes: {' '.join(open(codes).read().split())}")
bad = total["crashes"] + total["failures"]
if total["inputs"] < wanted:
    print(f"fuzz.sh: only {total['inputs']:,} of {wanted:,} inputs ran"); bad += 1
sys.exit(1 if bad else 0)
EOF
[ $status -eq 0 ] && echo "fuzz.sh: no crash, no failure" || echo "fuzz.sh: FAILED (see $logs)"
exit $status
