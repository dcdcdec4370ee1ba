#!/usr/bin/env bash
# Runs every test of the project: the SDK/agent package, the availability check (Tools/AvailabilityCheck)
# and the ingest server package. Arguments go to each `swift test` (e.g. --filter).
#
# One build folder: the server package builds into this package's .build (--scratch-path): it
# depends on this package, so the modules both need (the SDK, GRDB, swift-crypto's BoringSSL,
# swift-log, the NIO family) are compiled once, not once per package.
# One pipeline: the SDK's tests run while the server package compiles (they use about one core
# of the two a CI machine has; the compiler takes the rest), then the server's tests run. The
# server's build waits for nothing (--ignore-lock: SwiftPM's lock on .build is held by the
# running `swift test --skip-build`, which writes nothing there).
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT

echo "== building the SDK/agent package and its tests =="
swift build --build-tests

echo "== Beekon SDK, sources and agent (tests; the server package compiles meanwhile) =="
swift test --skip-build "$@" &
sdk=$!
server_build=0
if [ -f Server/Package.swift ]; then
  swift build --package-path Server --scratch-path .build --build-tests --ignore-lock >"$logs/server-build.log" 2>&1 ||
    server_build=$?
fi
sdk_status=0
wait "$sdk" || sdk_status=$?

status=$sdk_status
if [ -f Tools/AvailabilityCheck/Package.swift ]; then
  echo "== availability check (planted misuses, symbol table) =="
  swift test --package-path Tools/AvailabilityCheck "$@" || status=1
fi
if [ -f Server/Package.swift ]; then
  echo "== beekon-ingest server =="
  if [ "$server_build" != 0 ]; then
    cat "$logs/server-build.log"
    echo "test.sh: the server package did not build" >&2
    exit 1
  fi
  swift test --package-path Server --scratch-path .build --skip-build "$@" || status=1
fi
[ "$sdk_status" = 0 ] || echo "test.sh: the SDK/agent package's tests failed (above)" >&2
exit "$status"
