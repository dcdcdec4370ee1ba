#!/usr/bin/env bash
# Runs every test of the project: the SDK/agent package, the availability check (Tools/AvailabilityCheck),
# then the ingest server package.
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
  (cd Server && swift test "$@")
fi
