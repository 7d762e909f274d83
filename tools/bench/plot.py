#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Plots of a benchmark's results.json, as PNG and SVG beside it:
aggregate (bandwidth per variant, median with min-max whiskers, one panel
per rail count), latency (p50 and p99, raw member against the bond) and
failover (per-rail and total throughput against time, events marked); or,
with --timeline, one run's timeline alone (the demo's). A separate step:
results.json and report.md never depend on it."""

import argparse
import json
import pathlib
import sys

import failover  # tools/bench/failover.py

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


SMOOTH_MS = 50


def smooth(series):
    """A SMOOTH_MS moving average of (ms, value) samples taken ~12 ms apart."""
    out = []
    for i, (t, _) in enumerate(series):
        win = [m for u, m in series[max(0, i - 8):i + 1] if u > t - SMOOTH_MS]
        out.append((t, sum(win) / len(win)))
    return out


def plot_timeline(fo, out, name, title):
    """Per-rail and total throughput against time, the events marked."""
    fig, ax = plt.subplots(figsize=(9, 4))
    series = fo["series"]
    total = smooth(series["total_mbps"])
    ax.plot([t / 1000 for t, _ in total], [m for _, m in total], lw=3, color="#bbbbbb",
            label="total")
    for i, rail in enumerate(series["rails_mbps"]):
        rail = smooth(rail)
        ax.plot([t / 1000 for t, _ in rail], [m for _, m in rail], lw=1,
                label=f"rail {i}")
    styles = {"pull": "red", "bond_notices": "orange", "qps_flushed": "purple",
              "traffic_resumed": "green", "cable_back": "blue", "member_usable": "teal"}
    for key, t in fo["events_ms"].items():
        if t is not None:
            ax.axvline(t / 1000, color=styles.get(key, "grey"), ls="--", lw=0.8,
                       label=key.replace("_", " "))
    ax.set_xlabel(f"s since the traffic started (wire rates, {SMOOTH_MS} ms average)")
    ax.set_ylabel("Mbit/s")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=3, loc="upper right")
    fig.tight_layout()
    return save(fig, out, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", type=pathlib.Path, nargs="?",
                    help="folder holding results.json; the plots go there")
    ap.add_argument("--timeline", type=pathlib.Path,
                    help="a run's timeline folder (marks, rails.csv, kernel log): plot it alone")
    ap.add_argument("--rate-bits", type=int, default=20_000_000,
                    help="with --timeline: one rail's shaped rate")
    ap.add_argument("--out", type=pathlib.Path, help="with --timeline: where the plot goes")
    args = ap.parse_args()
    if args.timeline:
        fo = failover.analyse(args.timeline, {"rate_bits": args.rate_bits})
        paths = plot_timeline(fo, args.out or args.timeline, "timeline",
                              "mrbond0: traffic through a cable pull and back")
    else:
        res = json.loads((args.results / "results.json").read_text())
        paths = plot_aggregate(res, args.results) + plot_latency(res, args.results)
        titles = {"nvme": "NVMe-oF (fio) through mrbond0", "xperf": "mrbond_xperf, reconnecting"}
        for fo in res.get("failover", []):
            if "series" in fo:
                paths += plot_timeline(fo, args.results, f"failover-{fo['traffic']}",
                                       f"{titles[fo['traffic']]}: rail {fo['rail']}'s cable "
                                       "pulled and back")
    for path in paths:
        print(f"plot: {path}")


if __name__ == "__main__":
    main()
