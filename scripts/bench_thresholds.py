#!/usr/bin/env python3
"""Checks BeekonBench's JSON (`--json PATH`) against a thresholds file (Benchmarks/thresholds.tsv).

usage: bench_thresholds.py THRESHOLDS JSON

Every row of the thresholds file names a benchmark row id, an operator (<= or >=) and a limit
on that row's ratio (ours ÷ baseline, as BeekonBench prints it). Prints one line per row and
exits 1 when a ratio is outside its limit or a named row is missing from the results, so a
renamed or dropped row cannot pass silently. Called by scripts/bench-smoke.sh.
"""
import json, sys


def load_thresholds(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cells = line.split("\t")
            if len(cells) < 3 or cells[1] not in ("<=", ">="):
                sys.exit(f"{path}:{number}: expected 'id<TAB><= or >=<TAB>limit<TAB>why', got {line!r}")
            rows.append((cells[0], cells[1], float(cells[2])))
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    thresholds = load_thresholds(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        results = {r["id"]: r["ratio"] for r in json.load(f)["results"]}
    failures = 0
    for row_id, op, limit in thresholds:
        ratio = results.get(row_id)
        if ratio is None:
            print(f"FAIL {row_id}: no such row in the results")
            failures += 1
            continue
        ok = ratio <= limit if op == "<=" else ratio >= limit
        print(f"{'ok  ' if ok else 'FAIL'} {row_id}: ratio {ratio:.4g} {op} {limit:g}")
        failures += 0 if ok else 1
    print(f"bench thresholds: {len(thresholds) - failures} of {len(thresholds)} hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
