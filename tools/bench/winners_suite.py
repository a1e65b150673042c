#!/usr/bin/env python3
"""Turn a bench CSV into a suite whose every problem's space is its recorded winner alone.

    tools/bench/winners_suite.py BENCH.csv OUTDIR

Writes OUTDIR/suite.json (for `tune --shapes` and `bench --suite`) and one space file per row,
OUTDIR/<shape>-<layout>.json, holding exactly that row's config (every knob a one-value list). Tuning
that suite with --strategy exhaustive re-measures the winners of an earlier run with today's code,
so `bench --no-tune` on the database gives that run's figure again without searching anything.

Only rows with status ok and a config are used; a config name that does not parse is an error.
"""
import csv
import json
import pathlib
import re
import sys

# The canonical name: fixed fields, then optional suffixes in this order (tuner/core/config.cpp).
FIXED = re.compile(r"^wt_(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_wn(\d+)_t(\d+)x(\d+)_n(\d+)_mb(\d+)")
FIXED_FIELDS = ["BM", "BN", "BK", "WM", "WN", "WNITER", "TM", "TN", "NUM_THREADS", "MIN_BLOCKS"]
SUFFIXES = [("_s", "STAGES"), ("_p", "PAD_A"), ("_g", "GROUP_M"), ("_k", "SPLIT_K"),
            ("_o", "FMA_ORDER"), ("_b", "PAD_B"), ("_x", "PACK"), ("_c", "STAGE_C"),
            ("_m", "TMA")]


def parse_name(name):
    m = FIXED.match(name)
    if not m:
        raise ValueError(f"not a config name: {name!r}")
    fields = {f: int(v) for f, v in zip(FIXED_FIELDS, m.groups())}
    rest = name[m.end():]
    for lit, field in SUFFIXES:
        s = re.match(re.escape(lit) + r"(\d+)", rest)
        if s:
            fields[field] = int(s.group(1))
            rest = rest[s.end():]
    if rest:
        raise ValueError(f"not a config name: {name!r} (left over: {rest!r})")
    return fields


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, out = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    shapes = []
    with src.open(newline="") as f:
        for row in csv.DictReader(f):
            if row.get("status") != "ok" or not row.get("config"):
                continue
            try:
                fields = parse_name(row["config"])
            except ValueError as e:
                print(f"{src}: {e}", file=sys.stderr)
                return 2
            key = f"{row['shape']}-{row['layout']}"
            space = {
                "name": f"winner-{key}",
                "description": f"the winner of {row['shape']} {row['layout']} in {src.name}: "
                               f"{row['config']}",
                "parameters": {k: [v] for k, v in fields.items()},
                "limits": {"max_accumulators": 256},
            }
            (out / f"{key}.json").write_text(json.dumps(space, indent=2) + "\n")
            shapes.append({"shape": row["shape"], "layout": row["layout"],
                           "space": str((out / f"{key}.json").resolve())})
    if not shapes:
        print(f"{src}: no row with status ok and a config", file=sys.stderr)
        return 1
    (out / "suite.json").write_text(json.dumps({"shapes": shapes}, indent=2) + "\n")
    print(f"{len(shapes)} problems -> {out / 'suite.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
