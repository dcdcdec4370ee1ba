#!/usr/bin/env bash
# Runs every test of the project: the SDK/agent package, then the ingest server package.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Beekon SDK, sources and agent =="
swift test "$@"
if [ -f Server/Package.swift ]; then
  echo "== beekon-ingest server =="
  (cd Server && swift test "$@")
fi
