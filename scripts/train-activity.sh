#!/usr/bin/env bash
# Trains the fix-stream activity model (BY-4, XR-5) on the *training* recordings named
# in Tests/Data/labelled/SPLIT.md — never the evaluation ones — and writes its coefficients to
# Sources/Beekon/Activity/ActivityModel+Trained.swift. Deterministic: the same recordings give
# the same numbers (a test checks the shipped file against a fresh training run).
#
#   scripts/train-activity.sh            then: beekon activity --evaluate Tests/Data/labelled
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product beekon >/dev/null
out=Sources/Beekon/Activity/ActivityModel+Trained.swift
.build/debug/beekon activity --train Tests/Data/labelled > "$out.tmp"
mv "$out.tmp" "$out"
# Thirteen coefficients a row are longer than a line: the formatter wraps them (CI lints the file).
swift format --in-place --configuration .swift-format "$out"
echo "wrote $out; rebuild, then: .build/debug/beekon activity --evaluate Tests/Data/labelled"
