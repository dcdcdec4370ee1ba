#!/usr/bin/env bash
# Chaos harness: real agents + real beekon-ingest behind a fault-injecting proxy,
# SIGKILLs of both, then a loss/duplicate/crash check. See scripts/chaos.py.
#
#   scripts/chaos.sh --trials N [--seed S] [--store sqlite|postgres] [--agents K] [--viewers V] [--duration SECONDS]
#                    [--jobs J] [--speeds max,60,...] [--auth key|tokens|mixed] [--disk-full auto|off] [--keep]
#
# Binaries: $BEEKON_BINARY (default .build/debug/beekon) and $BEEKON_INGEST_BINARY
# (default Server/.build/debug/beekon-ingest); build them first (swift build; cd Server && swift build).
# Exit status: 0 when every trial kept every invariant, 1 otherwise, 2 on bad usage.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
beekon="${BEEKON_BINARY:-$root/.build/debug/beekon}"
ingest="${BEEKON_INGEST_BINARY:-$root/Server/.build/debug/beekon-ingest}"
for bin in "$beekon" "$ingest"; do
    if [[ ! -x "$bin" ]]; then
        echo "chaos.sh: $bin is not built (swift build; cd Server && swift build), or set BEEKON_BINARY / BEEKON_INGEST_BINARY" >&2
        exit 2
    fi
done
command -v python3 >/dev/null || { echo "chaos.sh: python3 is required" >&2; exit 2; }
exec python3 "$root/scripts/chaos.py" --beekon "$beekon" --ingest "$ingest" "$@"
