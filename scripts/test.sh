#!/usr/bin/env bash
# Runs every test of the project: the SDK/agent package, the availability check (Tools/AvailabilityCheck)
# and the ingest server package. Arguments go to each `swift test` (e.g. --filter).
#
# One build folder: the server package builds into this package's .build (--scratch-path): it
# depends on this package, so the modules both need (the SDK, GRDB, swift-crypto's BoringSSL,
# swift-log, the NIO family) are compiled once, not once per package.
# One pipeline (Linux): the SDK's tests run while the server package compiles (they use about one
# core of the two a CI machine has; the compiler takes the rest), then the server's tests run.
# `swift test` holds .build's build database while it runs, so the SDK's test binary runs
# directly (what `swift test --skip-build` runs: Swift Testing, no XCTest cases in the tree).
# The availability check's own package builds and tests while the server's tests run.
# Elsewhere (macOS) the SDK's tests run before the server package compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT

# SwiftPM keeps one cached build plan per scratch path (description.json): the one the other
# package left there can name a source file since deleted ("missing inputs"). Each build here
# plans afresh (seconds) instead of trusting it.
plan_afresh() { rm -f .build/*/debug/description.json; }

echo "== building the SDK/agent package and its tests =="
plan_afresh
swift build --build-tests

build_server() {
  plan_afresh
  [ ! -f Server/Package.swift ] ||
    swift build --package-path Server --scratch-path .build --build-tests >"$logs/server-build.log" 2>&1 || server_build=$?
}
server_build=0
sdk_status=0
if [ "$(uname)" = Linux ]; then
  echo "== Beekon SDK, sources and agent (tests; the server package compiles meanwhile) =="
  "$(swift build --show-bin-path)/BeekonPackageTests.xctest" --testing-library swift-testing "$@" &
  sdk=$!
  build_server
  wait "$sdk" || sdk_status=$?
else
  echo "== Beekon SDK, sources and agent =="
  swift test --skip-build "$@" || sdk_status=$?
  build_server
fi

status=$sdk_status
if [ -f Server/Package.swift ]; then
  if [ "$server_build" != 0 ]; then
    cat "$logs/server-build.log"
    echo "test.sh: the server package did not build" >&2
    exit 1
  fi
fi
# The availability check's package (its own .build, swift-syntax) compiles and tests while the
# server's tests run; its output is printed after theirs.
availability=
if [ -f Tools/AvailabilityCheck/Package.swift ]; then
  swift test --package-path Tools/AvailabilityCheck "$@" >"$logs/availability.log" 2>&1 &
  availability=$!
fi
if [ -f Server/Package.swift ]; then
  echo "== beekon-ingest server =="
  swift test --package-path Server --scratch-path .build --skip-build "$@" || status=1
fi
if [ -n "$availability" ]; then
  echo "== availability check (planted misuses, symbol table) =="
  wait "$availability" || status=1
  grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Emitting|Write|Wrapping|Linking)' "$logs/availability.log" || true
fi
[ "$sdk_status" = 0 ] || echo "test.sh: the SDK/agent package's tests failed (above)" >&2
exit "$status"
