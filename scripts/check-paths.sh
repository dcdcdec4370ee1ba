#!/usr/bin/env bash
# Fails when two tracked paths differ only by case (they collapse into one on a
# case-insensitive volume, the default on macOS): every path and every parent folder.
set -euo pipefail
cd "$(dirname "$0")/.."
collisions=$(git ls-files | awk -F/ '{ p = ""; for (i = 1; i <= NF; i++) { p = (i == 1 ? $1 : p "/" $i); print p } }' \
  | sort -u | awk '{ k = tolower($0); if (k in seen && seen[k] != $0) print seen[k] " <-> " $0; else seen[k] = $0 }')
if [ -n "$collisions" ]; then
  echo "paths that differ only by case:" >&2
  echo "$collisions" >&2
  exit 1
fi
echo "no tracked paths differ only by case"

# One lock type: `Locked<State>` (Sources/BeekonPrimitives/Locked.swift) is the only
# place that may name a lock primitive; everything else keeps its state inside a `Locked`.
locks=$(git grep -nE 'NSLock|NSRecursiveLock|os_unfair_lock|pthread_mutex' -- Sources Server/Sources Benchmarks Server/Benchmarks \
  ':!Sources/BeekonPrimitives/Locked.swift' || true)
if [ -n "$locks" ]; then
  echo "lock primitives outside Locked (use Locked<State> from BeekonPrimitives):" >&2
  echo "$locks" >&2
  exit 1
fi
echo "one lock type: no lock primitive outside Locked"

# Requirement ids: every id the code cites (`SY-6`, `BY-4`, …) is listed in docs/requirements.md.
cited=$(git grep -ohE '\b(LC|FX|ST|SY|AU|GF|SRC|IN|BY|XR)-[0-9]+\b' -- Sources Tests Server/Sources Server/Tests Benchmarks Server/Benchmarks \
  Tools/AvailabilityCheck/Sources Tools/AvailabilityCheck/Tests Examples scripts | sort -u)
listed=$(sed -nE 's/^- \*\*([A-Z]+-[0-9]+)\*\*.*/\1/p' docs/requirements.md | sort -u)
unlisted=$(comm -23 <(echo "$cited") <(echo "$listed"))
if [ -n "$unlisted" ]; then
  echo "requirement ids cited in the code but not listed in docs/requirements.md:" >&2
  echo "$unlisted" >&2
  exit 1
fi
echo "requirement ids: all $(echo "$cited" | wc -l) cited ids are listed in docs/requirements.md"

# The README is a front door: what it is, the quick start, one snippet, links (CONTRIBUTING.md).
readme_lines=$(wc -l < README.md)
if [ "$readme_lines" -gt 250 ]; then
  echo "README.md has $readme_lines lines (at most 250): move the detail to the DocC catalogue or docs/" >&2
  exit 1
fi
echo "README.md: $readme_lines lines (at most 250)"

# One build folder for both packages (scripts/test.sh builds Server into the root's .build): a
# dependency both packages pin must be pinned to the same version, or each package's build checks
# out its own and recompiles it, and the other's build recompiles it back.
pins() { python3 -c 'import json,sys; [print(p["identity"], p["state"].get("version") or p["state"].get("revision")) for p in json.load(open(sys.argv[1]))["pins"]]' "$1" | sort; }
differ=$(join <(pins Package.resolved) <(pins Server/Package.resolved) | awk '$2 != $3')
if [ -n "$differ" ]; then
  echo "dependencies pinned differently in Package.resolved and Server/Package.resolved (identity, root, server):" >&2
  echo "$differ" >&2
  exit 1
fi
echo "one build folder: the shared dependencies are pinned alike in both packages"
