#!/usr/bin/env python3
"""Plots `sgemm-tune strategy-bench` CSV: the mean fraction of the optimum per strategy against
the share of the candidates measured. Usage: plot_strategy_bench.py RESULTS.csv OUT.png"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POINTS = [("frac_1pct", 1), ("frac_2pct", 2), ("frac_5pct", 5), ("frac_10pct", 10), ("frac_25pct", 25)]


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    sums = defaultdict(lambda: [0.0] * len(POINTS))
    counts = defaultdict(int)
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            counts[row["strategy"]] += 1
            for i, (key, _) in enumerate(POINTS):
                sums[row["strategy"]][i] += float(row[key])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in sorted(sums):
        ys = [v / counts[name] for v in sums[name]]
        ax.plot([p for _, p in POINTS], ys, marker="o", label=f"{name} ({counts[name]} runs)")
    ax.axhline(0.99, color="grey", linestyle=":", linewidth=1)
    ax.axhline(0.98, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xticks([p for _, p in POINTS])
    ax.set_xticklabels([f"{p}%" for _, p in POINTS])
    ax.set_xlabel("candidates measured")
    ax.set_ylabel("mean fraction of the optimum (best time / best found)")
    ax.set_title("Search strategies on recorded datasets (leave one shape out)")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
