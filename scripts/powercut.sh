#!/usr/bin/env bash
# Power-cut trials: real beekon-ingest / beekon processes with their databases on a FUSE
# filesystem that drops every write not fsynced when the power is "cut" (scripts/powercut/lazyfs.py).
#
#   scripts/powercut.sh --trials 50                       # every configuration, 50 power cuts each
#   scripts/powercut.sh --trials 5 --config agent-local   # one configuration (repeatable)
#   scripts/powercut.sh --self-test                       # the harness's own test (can fail, no false alarms)
#   scripts/powercut.sh --help                            # every option
#
# Binaries: --ingest PATH (default .build/debug/beekon-ingest) and --agent PATH (default
# .build/debug/beekon); build them first. Needs root, /dev/fuse, Debian's fuse3 and mfusepy (PyPI),
# which .ci/run installs. Prints a table per configuration; exits 1 when a target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--self-test" ]; then
  exec python3 scripts/powercut/selftest.py
fi
exec python3 scripts/powercut/trials.py "$@"
