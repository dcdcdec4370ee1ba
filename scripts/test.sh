#!/usr/bin/env bash
# Runs every test of the project: the SDK/agent package, the availability check (Tools/AvailabilityCheck),
# then the ingest server package. The server package builds into this package's .build (its
# scratch path): it depends on this package, and the modules both build (the SDK, GRDB,
# swift-crypto's BoringSSL, swift-log, the NIO family) are compiled once, not once per package.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Beekon SDK, sources and agent =="
swift test "$@"
if [ -f Tools/AvailabilityCheck/Package.swift ]; then
  echo "== availability check (planted misuses, symbol table) =="
  swift test --package-path Tools/AvailabilityCheck "$@"
fi
if [ -f Server/Package.swift ]; then
  echo "== beekon-ingest server =="
  swift test --package-path Server --scratch-path .build "$@"
fi
