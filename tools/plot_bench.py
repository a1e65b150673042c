#!/usr/bin/env python3
"""Draws the CSV of `sgemm-tune bench` (or of `tune --shapes --csv`: the same columns) as a bar
chart of the tuned/cuBLAS speed ratio per shape.

Usage: plot_bench.py RESULTS.csv OUT.png|OUT.svg

One bar per shape (labelled "MxNxK LAYOUT"), its height the ratio cuBLAS time / tuned time (above
1: the tuned kernel is faster), a line at 1.0 and one at the geometric mean, the GPU and date in
the title. Shapes that were not measured (untuned, no config, failed) are listed with their status
instead of a bar. Needs matplotlib (Debian/Ubuntu: apt-get install python3-matplotlib).

Files written by earlier versions are read too: tune's `ratio_to_cublas` column (the same
quantity) stands in for `ratio`, a `pct_of_cublas` column (in percent) is divided by 100, and
without `status`, `gpu` or `date` a row is `ok` when it has a ratio and the title names no GPU.

Exit codes: 0 written, 2 bad arguments or CSV, 3 matplotlib missing.
"""

import csv
import math
import os
import sys

REQUIRED = ("shape", "layout")
# The ratio's column, newest name first, and the factor that turns it into cuBLAS time / ours.
RATIO_COLUMNS = (("ratio", 1.0), ("ratio_to_cublas", 1.0), ("pct_of_cublas", 0.01))
OPTIONAL = ("status", "gpu", "date")


def fail(code, msg):
    print(f"plot_bench.py: error: {msg}", file=sys.stderr)
    sys.exit(code)


def read_rows(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            missing = [c for c in REQUIRED if c not in fields]
            column = next(((c, f) for c, f in RATIO_COLUMNS if c in fields), None)
            if column is None:
                missing.append("ratio")
            if missing:
                fail(2, f"{path}: not a bench or tune CSV (missing columns: {', '.join(missing)})")
            rows = list(reader)
    except OSError as e:
        fail(2, f"cannot read {path}: {e.strerror}")
    if not rows:
        fail(2, f"{path}: no rows")
    name, factor = column
    for i, r in enumerate(rows, start=2):
        text = (r.get(name) or "").strip()
        try:
            q = float(text) * factor if text else None
        except ValueError:
            fail(2, f"{path}:{i}: bad {name} '{text}'")
        # Older tune CSVs wrote 0 for a shape that was not measured.
        if q == 0 and name != "ratio":
            q = None
        if q is not None and not (q > 0 and math.isfinite(q)):
            fail(2, f"{path}:{i}: {name} must be positive, not '{text}'")
        r["ratio"] = q
        for c in OPTIONAL:
            r[c] = r.get(c) or ""
        if not r["status"]:
            r["status"] = "ok" if q is not None else "not measured"
    return rows


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2)
    csv_path, out = argv[1], argv[2]
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".png", ".svg"):
        fail(2, f"'{out}': expected a .png or .svg file name")
    rows = read_rows(csv_path)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(3, f"matplotlib is not installed for {sys.executable} "
                "(Debian/Ubuntu: apt-get install python3-matplotlib)")

    labels = [f"{r['shape']} {r['layout']}" for r in rows]
    ratios = [r["ratio"] for r in rows]
    measured = [q for q in ratios if q is not None]
    geomean = math.exp(sum(math.log(q) for q in measured) / len(measured)) if measured else None

    gpus = sorted({r["gpu"] for r in rows if r["gpu"]})
    dates = sorted({r["date"][:10] for r in rows if r["date"]})
    title = "Tuned SGEMM vs cuBLAS FP32"
    if gpus:
        title += " on " + ", ".join(gpus)
    if dates:
        title += " (" + (dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}") + ")"

    fig, ax = plt.subplots(figsize=(max(8.0, 0.55 * len(rows) + 2.5), 5.5))
    xs = list(range(len(rows)))
    heights = [q if q is not None else 0.0 for q in ratios]
    colors = ["#c0392b" if q is not None and q < 0.90 else "#2e86c1" for q in ratios]
    ax.bar(xs, heights, color=colors, width=0.7)
    top = max(measured + [1.0]) * 1.15
    for x, q, r in zip(xs, ratios, rows):
        if q is None:
            ax.text(x, 0.02 * top, r["status"] or "not measured", rotation=90, ha="center",
                    va="bottom", fontsize=8, color="#555555")
        else:
            ax.text(x, q + 0.01 * top, f"{q:.2f}", ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="black", linewidth=1.0, label="cuBLAS FP32 (1.0)")
    if geomean is not None:
        ax.axhline(geomean, color="#27ae60", linestyle="--", linewidth=1.2,
                   label=f"geometric mean {geomean:.3f}")
    ax.set_ylim(0, top)
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=55, ha="right", fontsize=8)
    ax.set_ylabel("tuned speed / cuBLAS speed")
    subtitle = f"{len(measured)} of {len(rows)} shapes measured"
    if measured:
        subtitle += f"; min {min(measured):.3f}; below 0.90: {sum(q < 0.90 for q in measured)}"
    ax.set_title(f"{title}\n{subtitle}", fontsize=10)
    from matplotlib.patches import Patch

    handles, _ = ax.get_legend_handles_labels()
    handles += [Patch(color="#2e86c1", label="ratio >= 0.90"),
                Patch(color="#c0392b", label="ratio < 0.90")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    try:
        fig.savefig(out, format=ext[1:], dpi=120)
    except OSError as e:
        fail(2, f"cannot write {out}: {e.strerror}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
