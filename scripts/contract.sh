#!/usr/bin/env bash
# API fuzzing from the contract: starts a real beekon-ingest (embedded SQLite, auth off)
# on loopback and runs schemathesis against it from the server's own /openapi.json:
# every documented operation, generated valid and invalid inputs, and every check
# (no 5xx, status codes / content types / response bodies as documented). Bounded in
# examples per operation and in time. Exit 0 only when schemathesis found nothing.
#
#   scripts/contract.sh [--examples N] [--seed S] [--time-limit SECONDS]
#
# GET /v1/live, a circle's live stream and the locate command channel (a long poll) are left out: they stay open by design (their contracts are
# tested in LiveStreamTests and LocateTests). Needs `pip install schemathesis` (.ci/run installs it). A
# failure it finds becomes a regression test (ContractTests, DecoderTests).
set -euo pipefail
cd "$(dirname "$0")/.."
examples=40 seed=2026 limit=600
while [ $# -gt 0 ]; do
  case "$1" in
    --examples) examples=$2; shift 2;;
    --seed) seed=$2; shift 2;;
    --time-limit) limit=$2; shift 2;;
    *) echo "usage: scripts/contract.sh [--examples N] [--seed S] [--time-limit SECONDS]" >&2; exit 2;;
  esac
done
python3 -c "import schemathesis" 2>/dev/null || { echo "schemathesis is not installed: pip install schemathesis" >&2; exit 2; }
bin=.build/debug/beekon-ingest  # the server package builds into this package's .build (scripts/test.sh)
[ -x "$bin" ] || swift build --package-path Server --scratch-path .build --product beekon-ingest >/dev/null
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
# The fuzzer's refused token requests all come from 127.0.0.1: lift the per-address budget of
# failed credentials (tested on its own in IsolationTests), or its valid cases would meet a 429.
"$bin" --port 0 --database "sqlite:$dir/ingest.sqlite" --log-level warning --auth-failures-per-minute 1000000 \
  > "$dir/out" 2> "$dir/err" &
pid=$!
port=
for _ in $(seq 1 300); do
  port=$(sed -n 's/^.*listening on 127\.0\.0\.1:\([0-9]*\).*$/\1/p' "$dir/out" "$dir/err" | head -1)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/err" >&2; echo "beekon-ingest exited before listening" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "beekon-ingest did not listen within 30 s" >&2; exit 1; }
echo "== schemathesis against beekon-ingest on 127.0.0.1:$port ($examples examples per operation, seed $seed) =="
status=0
timeout "$limit" python3 -m schemathesis.cli --no-color --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
  --checks all --max-examples "$examples" --seed "$seed" --workers 1 \
  --request-timeout 20 --exclude-path /v1/live --exclude-path '/v1/devices/{install_id}/commands' \
  --exclude-path '/v1/circles/{circle_id}/live' || status=$?
if ! kill -0 "$pid" 2>/dev/null; then
  echo "beekon-ingest died during the run:" >&2; tail -20 "$dir/err" >&2; exit 1
fi
if [ "$status" = 124 ]; then echo "schemathesis did not finish within $limit s" >&2; fi
exit "$status"
