#!/usr/bin/env bash
# The toolchain's formatter over every Swift file of both packages, with .swift-format.
#   scripts/format.sh          rewrites the files in place
#   scripts/format.sh --lint   changes nothing; exits non-zero on any finding (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Benchmarks Shims Server/Package.swift Server/Sources Server/Tests Server/Benchmarks
  Tools/AvailabilityCheck/Package.swift Tools/AvailabilityCheck/Sources Tools/AvailabilityCheck/Tests
  Examples/BeekonSample/Package.swift Examples/BeekonSample/Sources)
if [ "${1:-}" = "--lint" ]; then
  swift format lint --strict --recursive --parallel --configuration .swift-format "${paths[@]}"
  echo "swift format: no findings"
else
  swift format --in-place --recursive --parallel --configuration .swift-format "${paths[@]}"
fi
