#!/usr/bin/env python3
"""Summarises where a kernel's warps stall, from Nsight Compute's source page.

Usage:
  ncu --section SourceCounters --section WarpStateStats -o prof <program ...>
  ncu --import prof.ncu-rep --page source --csv --print-source sass > source.csv
  ncu_stalls.py source.csv [--kernel TEXT] [--hot N] [--range LO HI] [--json]

For each kernel in the export (or the ones whose name contains --kernel):
  - the instruction mix: executed warp instructions per opcode;
  - the samples of warps that did not issue, per opcode and per stall reason (these are the
    cycles to win back: a warp that was eligible but not selected is not counted);
  - the N instructions with the most such samples, with their three largest reasons;
  - with --range, every instruction between two addresses (hex, inclusive), e.g. a main loop.

Only the standard library. Exit codes: 0 written, 2 bad arguments or export.
"""

import argparse
import collections
import csv
import json
import sys

ADDRESS = "Address"
SOURCE = "Source"
EXECUTED = "Instructions Executed"
ALL_SAMPLES = "Warp Stall Sampling (All Samples)"
NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
NOT_ISSUED_SUFFIX = " (Not Issued)"
REQUIRED = (ADDRESS, SOURCE, EXECUTED, ALL_SAMPLES, NOT_ISSUED)


def fail(msg):
    print(f"ncu_stalls.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def number(text):
    """ncu writes counts with or without thousands separators; an empty cell is 0."""
    text = text.replace(",", "").strip()
    if not text:
        return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def opcode(sass):
    """The mnemonic without predicate and modifiers: '@!P1 LDG.E.128 R4, [R2]' -> 'LDG'."""
    words = sass.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def read_kernels(path):
    """The export as [(kernel name, header, rows)]: each kernel's block starts with a
    '"Kernel Name","..."' line, then a header line, then one line per instruction."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        fail(f"{path} is not a CSV export: {e}")
    kernels = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if len(line) >= 2 and line[0] == "Kernel Name":
            if i + 1 >= len(lines):
                fail(f"{path}: kernel '{line[1]}' has no header line")
            header = lines[i + 1]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                fail(f"{path}: kernel '{line[1]}' lacks the columns {', '.join(missing)} "
                     "(export with --page source --csv --print-source sass, from a report "
                     "collected with --section SourceCounters)")
            rows = []
            i += 2
            while i < len(lines) and not (lines[i] and lines[i][0] == "Kernel Name"):
                if len(lines[i]) == len(header):
                    rows.append(dict(zip(header, lines[i])))
                i += 1
            kernels.append((line[1], header, rows))
        else:
            i += 1
    if not kernels:
        fail(f"{path}: no kernel found (expected ncu --page source --csv output)")
    return kernels


def reasons_of(header):
    """The not-issued stall reason columns, as (column, short name)."""
    out = []
    for col in header:
        if col.startswith("stall_") and col.endswith(NOT_ISSUED_SUFFIX):
            out.append((col, col[len("stall_"):-len(NOT_ISSUED_SUFFIX)]))
    return out


def parse_address(text):
    try:
        return int(text, 16)
    except ValueError:
        return None


def summarise(name, header, rows, hot, lo, hi):
    reasons = reasons_of(header)
    mix = collections.Counter()
    by_opcode = collections.Counter()
    by_reason = collections.Counter()
    instructions = []
    total_all = 0.0
    for r in rows:
        op = opcode(r[SOURCE])
        executed = number(r[EXECUTED])
        ni = number(r[NOT_ISSUED])
        total_all += number(r[ALL_SAMPLES])
        mix[op] += executed
        by_opcode[op] += ni
        top = collections.Counter()
        for col, short in reasons:
            v = number(r[col])
            if v:
                by_reason[short] += v
                top[short] = v
        instructions.append({
            "address": r[ADDRESS],
            "sass": r[SOURCE].strip(),
            "executed": int(executed),
            "not_issued": int(ni),
            "reasons": {k: int(v) for k, v in top.most_common(3)},
        })
    executed_total = sum(mix.values())
    ni_total = sum(by_opcode.values())

    def shares(counter, key):
        total = sum(counter.values())
        return [{key: k, "count": int(v), "percent": round(100.0 * v / total, 2) if total else 0.0}
                for k, v in counter.most_common() if v]

    listed = []
    if lo is not None:
        for ins in instructions:
            a = parse_address(ins["address"])
            if a is not None and lo <= a <= hi:
                listed.append(ins)
    return {
        "kernel": name,
        "instructions_executed": int(executed_total),
        "samples": int(total_all),
        "not_issued_samples": int(ni_total),
        "mix": shares(mix, "opcode"),
        "not_issued_by_opcode": shares(by_opcode, "opcode"),
        "not_issued_by_reason": shares(by_reason, "reason"),
        "hot": sorted((i for i in instructions if i["not_issued"]),
                      key=lambda i: -i["not_issued"])[:hot],
        "range": listed,
    }


def print_text(s, top):
    print(f"kernel: {s['kernel']}")
    print(f"warp instructions executed: {s['instructions_executed']:,}; stall samples: "
          f"{s['samples']:,}, of which not issued: {s['not_issued_samples']:,}")
    print("instruction mix (executed):")
    for e in s["mix"][:top]:
        print(f"  {e['opcode']:<10} {e['count']:>16,} {e['percent']:6.2f} %")
    print("not-issued samples by opcode:")
    for e in s["not_issued_by_opcode"][:top]:
        print(f"  {e['opcode']:<10} {e['count']:>10,} {e['percent']:6.2f} %")
    print("not-issued samples by reason:")
    for e in s["not_issued_by_reason"][:top]:
        print(f"  {e['reason']:<18} {e['count']:>10,} {e['percent']:6.2f} %")

    def line(i):
        why = " ".join(f"{k}:{v}" for k, v in i["reasons"].items())
        return (f"  {i['address']} {i['executed']:>12,} {i['not_issued']:>7,}  "
                f"{i['sass'][:64]:<64} {why}")

    if s["hot"]:
        print(f"hottest {len(s['hot'])} instructions (address, executed, not issued, SASS, "
              "reasons):")
        for i in s["hot"]:
            print(line(i))
    if s["range"]:
        print(f"range ({len(s['range'])} instructions):")
        for i in s["range"]:
            print(line(i))


def main():
    ap = argparse.ArgumentParser(
        description="Where a kernel's warps stall, from `ncu --page source --csv "
        "--print-source sass` (a report collected with --section SourceCounters).")
    ap.add_argument("csv", help="the exported source page")
    ap.add_argument("--kernel", help="only kernels whose name contains this text")
    ap.add_argument("--hot", type=int, default=20,
                    help="how many of the most-stalled instructions to list (default 20)")
    ap.add_argument("--range", nargs=2, metavar=("LO", "HI"),
                    help="also list every instruction with LO <= address <= HI (hex)")
    ap.add_argument("--top", type=int, default=12,
                    help="rows per table in the text output (default 12)")
    ap.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    args = ap.parse_args()
    if args.hot < 0 or args.top < 1:
        fail("--hot must be >= 0 and --top >= 1")
    lo = hi = None
    if args.range:
        lo, hi = parse_address(args.range[0]), parse_address(args.range[1])
        if lo is None or hi is None or lo > hi:
            fail(f"--range needs two hex addresses, low then high: {' '.join(args.range)}")

    kernels = read_kernels(args.csv)
    if args.kernel:
        kernels = [k for k in kernels if args.kernel in k[0]]
        if not kernels:
            fail(f"{args.csv}: no kernel whose name contains '{args.kernel}'")
    summaries = [summarise(n, h, r, args.hot, lo, hi) for n, h, r in kernels]
    if args.json:
        json.dump({"kernels": summaries}, sys.stdout, indent=2)
        print()
    else:
        for i, s in enumerate(summaries):
            if i:
                print()
            print_text(s, args.top)


if __name__ == "__main__":
    main()
