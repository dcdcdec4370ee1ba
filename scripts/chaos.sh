#!/usr/bin/env bash
# Chaos harness: real agents + real beekon-ingest behind a fault-injecting proxy,
# SIGKILLs of both, live viewers, then a loss/duplicate/crash check. The harness is the
# Server package's `beekon-chaos` executable (Server/Sources/beekon-chaos), built on the
# same ChaosProxy, ChildProcess and PostgresCluster as the Server tests.
#
#   scripts/chaos.sh --trials N [--seed S] [--store sqlite|postgres] [--agents K] [--viewers V] [--duration SECONDS]
#                    [--drain-timeout SECONDS] [--jobs J] [--speeds max,60,...] [--auth key|tokens|mixed]
#                    [--disk-full auto|off] [--keep]
#
# Binaries: release builds of beekon-chaos, beekon-ingest and the agent `beekon`, from one
# release build of the Server package (built here when missing or stale). Set
# BEEKON_CHAOS_BINARY, BEEKON_BINARY and BEEKON_INGEST_BINARY to use other builds (all
# three set: nothing is built).
# Exit status: 0 when every trial kept every invariant, 1 otherwise, 2 on bad usage.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
release="$root/.build/release"  # the server package builds into the root package's .build
if [[ -z "${BEEKON_CHAOS_BINARY:-}" || -z "${BEEKON_BINARY:-}" || -z "${BEEKON_INGEST_BINARY:-}" ]]; then
    for product in beekon-chaos beekon-ingest beekon; do
        echo "chaos.sh: swift build -c release --product $product (Server package)" >&2
        swift build --package-path "$root/Server" --scratch-path "$root/.build" -c release --product "$product" >&2 || {
            echo "chaos.sh: building $product failed" >&2
            exit 2
        }
    done
fi
chaos="${BEEKON_CHAOS_BINARY:-$release/beekon-chaos}"
beekon="${BEEKON_BINARY:-$release/beekon}"
ingest="${BEEKON_INGEST_BINARY:-$release/beekon-ingest}"
for bin in "$chaos" "$beekon" "$ingest"; do
    if [[ ! -x "$bin" ]]; then
        echo "chaos.sh: $bin is not built" >&2
        exit 2
    fi
done
"$chaos" --beekon "$beekon" --ingest "$ingest" --data "$root/Tests/Data" "$@" || status=$?
status=${status:-0}
# ArgumentParser's usage errors exit 64: keep the documented 2.
[[ $status -eq 64 ]] && exit 2
exit "$status"
