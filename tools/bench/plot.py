#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Plots of a benchmark's results.json, as PNG and SVG beside it:
aggregate.{png,svg} (bandwidth per variant, median with min-max whiskers,
one panel per rail count) and latency.{png,svg} (p50 and p99, raw member
against the bond). A separate step: results.json and report.md never
depend on it."""

import json
import pathlib
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot.py: matplotlib is missing (tools/testbed/install-deps.sh installs "
             "python3-matplotlib)")

# Reproducible SVGs: no date, fixed ids.
plt.rcParams["svg.hashsalt"] = "mrbond-bench"
COLOURS = {"sum_members": "#8c8c8c", "by_hand": "#4c72b0", "bond": "#dd8452",
           "raw": "#4c72b0"}
LABELS = {"sum_members": "Σ members alone", "by_hand": "multi-rail by hand", "bond": "mrbond0",
          "raw": "raw member"}


def save(fig, out, name):
    for ext in ("png", "svg"):
        fig.savefig(out / f"{name}.{ext}", dpi=110, metadata={"Date": None}
                    if ext == "svg" else None)
    plt.close(fig)
    return [out / f"{name}.png", out / f"{name}.svg"]


def whisker(s):
    med = s["median"] or 0
    return med, [[med - (s["min"] or med)], [(s["max"] or med) - med]]


def plot_aggregate(res, out):
    rails = sorted({a["rails"] for a in res["aggregate"]})
    if not rails:
        return []
    fig, axes = plt.subplots(1, len(rails), figsize=(5.5 * len(rails), 4), squeeze=False)
    for ax, n in zip(axes[0], rails):
        cases = [a for a in res["aggregate"] if a["rails"] == n]
        width = 0.27
        for k, key in enumerate(("sum_members", "by_hand", "bond")):
            for i, a in enumerate(cases):
                med, err = whisker(a[key])
                ax.bar(i + (k - 1) * width, med, width, yerr=err, capsize=3,
                       color=COLOURS[key], label=LABELS[key] if i == 0 else None)
        for i, a in enumerate(cases):
            if a["bond_vs_sum"]:
                ax.annotate(f"{a['bond_vs_sum']:.2f}×Σ", (i + width, a["bond"]["median"] or 0),
                            ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(cases)),
                      [f"{a['op']} {a['size_bytes'] // 1024} KiB\n{a['qps']} QPs" for a in cases])
        ax.set_ylabel("payload Mbit/s")
        ax.set_title(f"{n} rails at {res['meta']['rate']} each")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return save(fig, out, "aggregate")


def plot_latency(res, out):
    if not res["latency"]:
        return []
    fig, ax = plt.subplots(figsize=(5.5, 4))
    entry = res["latency"][0]
    width = 0.35
    for k, variant in enumerate(("raw", "bond")):
        for i, p in enumerate(("p50", "p99")):
            med, err = whisker(entry[variant][p])
            ax.bar(i + (k - 0.5) * width, med, width, yerr=err, capsize=3,
                   color=COLOURS[variant], label=LABELS[variant] if i == 0 else None)
    ax.set_xticks([0, 1], ["p50", "p99"])
    ax.set_ylabel("round trip, µs")
    ax.set_title(f"{entry['size_bytes']} B {entry['op'].upper()} ping-pong across the guests")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, out, "latency")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS_DIR (holding results.json)")
    out = pathlib.Path(sys.argv[1])
    res = json.loads((out / "results.json").read_text())
    for path in plot_aggregate(res, out) + plot_latency(res, out):
        print(f"plot: {path}")


if __name__ == "__main__":
    main()
