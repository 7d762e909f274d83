#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark's results: reads the raw runs tools/bench/guest.sh left in
RUN/bench/raw/ of each guest boot given (one per rail count) and writes
results.json and report.md into the output folder.

Every figure is computed here from the runs' own counters; nothing is
assumed. Each ratio is of medians of runs measured in one boot, side by
side. With --check, exits non-zero unless every figure is present, finite
and in range (CI's smoke check: it judges the pipeline, not the speed).
"""

import argparse
import json
import math
import pathlib
import statistics
import subprocess
import sys

GOAL = 0.97          # issue 14: bond / sum and bond / by hand
LINK_BOUND = 0.9     # a member alone must reach this share of its shaped rate


def read_kv(path):
    out = {}
    for line in path.read_text().splitlines():
        key, sep, val = line.partition("=")
        if sep:
            out[key] = val
    return out


def num(kv, key):
    val = kv.get(key)
    return int(val) if val is not None and val.lstrip("-").isdigit() else None


class Run:
    """One xperf run: both sides' results and the rails' counters around it."""

    def __init__(self, case, variant, seq, base, links):
        self.case, self.variant, self.seq, self.links = case, variant, seq, links
        self.client = read_kv(base.with_name(base.name + ".hosta.kv"))
        server = base.with_name(base.name + ".hostb.kv")
        self.server = read_kv(server) if server.exists() else {}
        self.rails = {}
        for role in ("hosta", "hostb"):
            before = base.with_name(f"{base.name}.{role}.before")
            after = base.with_name(f"{base.name}.{role}.after")
            if before.exists() and after.exists():
                b, a = read_kv(before), read_kv(after)
                self.rails[role] = {k: int(a[k]) - int(b[k]) for k in a
                                    if k in b and a[k].lstrip("-").isdigit()
                                    and not k.endswith(".backlog")}

    @property
    def ok(self):
        return self.client.get("status") == "ok" and self.server.get("status") == "ok"

    def mbps(self):
        """Payload goodput from the client's bytes and time, in Mbit/s."""
        b, ns = num(self.client, "bytes"), num(self.client, "elapsed_ns")
        return b * 8 / ns * 1000 if b and ns else None

    def wire_mbps(self, rail):
        """What the rail's qdisc sent during the run (the client's side)."""
        ns = num(self.client, "elapsed_ns")
        sent = self.rails.get("hosta", {}).get(f"rail{rail}.qdisc_bytes")
        return sent * 8 / ns * 1000 if sent and ns else None


def load_runs(raw, links):
    runs = []
    for kv in sorted(raw.glob("*/*/*.hosta.kv")):
        seq = kv.name.split(".")[0]
        runs.append(Run(kv.parent.parent.name, kv.parent.name, int(seq),
                        kv.with_name(seq), links))
    runs.sort(key=lambda r: r.seq)
    return runs


def spread(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return {"runs": [], "min": None, "median": None, "max": None}
    return {"runs": [round(v, 3) for v in vals], "min": round(min(vals), 3),
            "median": round(statistics.median(vals), 3), "max": round(max(vals), 3)}


def ratio(a, b):
    return round(a / b, 4) if a and b else None


def aggregate(runs):
    out = []
    for links, case in sorted({(r.links, r.case) for r in runs
                               if r.case.startswith("aggregate-")}):
        _, op, size = case.split("-")
        mine = [r for r in runs if r.case == case and r.links == links]
        alone = sorted({r.variant for r in mine if r.variant.startswith("alone")})
        # Rep k of the sum: rep k of every member alone.
        per_member = {v: [r.mbps() for r in mine if r.variant == v] for v in alone}
        reps = min((len(v) for v in per_member.values()), default=0)
        sums = [sum(per_member[v][k] or 0 for v in alone) for k in range(reps)]
        bond = spread(r.mbps() for r in mine if r.variant == "bond")
        by_hand = spread(r.mbps() for r in mine if r.variant == "by_hand")
        total = spread(sums)
        bond_rails = {}
        for r in mine:
            if r.variant == "bond":
                for rail in range(links):
                    bond_rails.setdefault(f"rail{rail}", []).append(r.wire_mbps(rail))
        out.append({
            "op": op, "size_bytes": int(size), "rails": links, "unit": "Mbit/s",
            "qps": next((num(r.client, "conns") for r in mine if r.variant != "alone0"
                         and not r.variant.startswith("alone")), None),
            "qps_alone": next((num(r.client, "conns") for r in mine
                               if r.variant.startswith("alone")), None),
            "member_alone": {v: spread(per_member[v]) for v in alone},
            "sum_members": total, "by_hand": by_hand, "bond": bond,
            "bond_per_rail_wire": {k: spread(v) for k, v in bond_rails.items()},
            "bond_vs_sum": ratio(bond["median"], total["median"]),
            "bond_vs_by_hand": ratio(bond["median"], by_hand["median"]),
            "goal": GOAL,
        })
    return out


def latency(runs):
    out = []
    for case in sorted({r.case for r in runs if r.case.startswith("latency-")}):
        _, op, size = case.split("-")
        entry = {"op": op, "size_bytes": int(size), "unit": "us"}
        for variant in ("raw", "bond"):
            mine = [r for r in runs if r.case == case and r.variant == variant]
            entry[variant] = {
                "p50": spread(num(r.client, "lat_p50_ns") / 1000 for r in mine
                              if num(r.client, "lat_p50_ns")),
                "p99": spread(num(r.client, "lat_p99_ns") / 1000 for r in mine
                              if num(r.client, "lat_p99_ns")),
            }
        for p in ("p50", "p99"):
            entry[f"ratio_{p}"] = ratio(entry["bond"][p]["median"], entry["raw"][p]["median"])
        out.append(entry)
    return out


def checks(runs, meta, agg):
    """Is the link the bottleneck? A member alone must reach LINK_BOUND of
    its shaped rate (payload), and the qdisc must have dropped nothing."""
    rate = meta["rate_bits"] / 1e6
    out = []
    for a in agg:
        for variant, s in a["member_alone"].items():
            if s["median"] is not None:
                out.append({"name": f"link_bound {a['op']} {a['size_bytes']} {variant}",
                            "value": round(s["median"] / rate, 4), "threshold": LINK_BOUND,
                            "ok": s["median"] / rate >= LINK_BOUND})
    drops = sum(v for r in runs for side in r.rails.values() for k, v in side.items()
                if k.endswith(".drops"))
    out.append({"name": "qdisc_drops", "value": drops, "threshold": 0, "ok": drops == 0})
    failed = [f"{r.case}/{r.variant}/{r.seq}" for r in runs if not r.ok]
    out.append({"name": "runs_ok", "value": len(runs) - len(failed), "threshold": len(runs),
                "ok": not failed, "failed": failed})
    return out


def git_commit(root):
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                                    capture_output=True, text=True, check=True).stdout.strip())
        return sha, dirty
    except (OSError, subprocess.CalledProcessError):
        return None, None


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def report_md(res):
    m = res["meta"]
    lines = [
        "# rdma_mrbond benchmark",
        "",
        f"Commit `{m['commit']}`{' (dirty)' if m['dirty'] else ''}, kernel {m['kernel']}, "
        f"rails shaped to {m['rate']} each ({', '.join(map(str, m['links']))} rails, one boot "
        f"each), {m['reps']} rep(s) of "
        f"{m['duration_ms']} ms, guests with {m['vcpus']} vCPU(s) under TCG"
        f"{', quick mode' if m['quick'] else ''}. Members: {m['members']}.",
        "",
        "## Aggregate bandwidth (payload Mbit/s, median [min–max])",
        "",
        "| rails | op | size | QPs | Σ members alone | by hand | bond | bond/Σ | bond/by hand |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in res["aggregate"]:
        cell = lambda s: f"{fmt(s['median'])} [{fmt(s['min'])}–{fmt(s['max'])}]"  # noqa: E731
        lines.append(f"| {a['rails']} | {a['op']} | {a['size_bytes']} | {a['qps']} | "
                     f"{cell(a['sum_members'])} | "
                     f"{cell(a['by_hand'])} | {cell(a['bond'])} | {fmt(a['bond_vs_sum'], 3)} | "
                     f"{fmt(a['bond_vs_by_hand'], 3)} |")
    lines += ["", f"Goal for both ratios: ≥ {GOAL}.", "",
              "## Latency (µs, median of runs)", "",
              "| op | size | raw p50 | bond p50 | raw p99 | bond p99 | ratio p50 | ratio p99 |",
              "|---|---|---|---|---|---|---|---|"]
    for entry in res["latency"]:
        raw, bond = entry["raw"], entry["bond"]
        lines.append(f"| {entry['op']} | {entry['size_bytes']} | {fmt(raw['p50']['median'])} | "
                     f"{fmt(bond['p50']['median'])} | {fmt(raw['p99']['median'])} | "
                     f"{fmt(bond['p99']['median'])} | {fmt(entry['ratio_p50'], 3)} | "
                     f"{fmt(entry['ratio_p99'], 3)} |")
    lines += ["", "## Is the link the bottleneck?", "", "| check | value | threshold | ok |",
              "|---|---|---|---|"]
    for c in res["checks"]:
        lines.append(f"| {c['name']} | {c['value']} | {c['threshold']} | "
                     f"{'yes' if c['ok'] else '**no**'} |")
    if not all(c["ok"] for c in res["checks"] if c["name"].startswith("link_bound")):
        lines += ["", "A member alone did not reach its shaped rate: the ratios above measure "
                  "the guests' CPUs as much as the links."]
    return "\n".join(lines) + "\n"


def sane(res):
    """Every figure present, finite, in range. Returns the problems."""
    bad = []

    def need(what, v, lo=0.0, hi=math.inf):
        if v is None or not math.isfinite(v) or not lo < v <= hi:
            bad.append(f"{what}: {v}")

    if not res["aggregate"]:
        bad.append("no aggregate case")
    for a in res["aggregate"]:
        name = f"aggregate {a['op']} {a['size_bytes']}"
        for key in ("sum_members", "by_hand", "bond"):
            need(f"{name} {key}", a[key]["median"])
        need(f"{name} bond_vs_sum", a["bond_vs_sum"], hi=2)
        need(f"{name} bond_vs_by_hand", a["bond_vs_by_hand"], hi=2)
    if not res["latency"]:
        bad.append("no latency case")
    for entry in res["latency"]:
        for v in ("raw", "bond"):
            need(f"latency {v} p50", entry[v]["p50"]["median"])
            need(f"latency {v} p99", entry[v]["p99"]["median"])
            if (entry[v]["p50"]["median"] or 0) > (entry[v]["p99"]["median"] or 0):
                bad.append(f"latency {v}: p50 above p99")
    runs_ok = next(c for c in res["checks"] if c["name"] == "runs_ok")
    if not runs_ok["ok"]:
        bad.append(f"failed runs: {', '.join(runs_ok['failed'])}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out", type=pathlib.Path, help="where results.json and report.md go")
    ap.add_argument("runs", type=pathlib.Path, nargs="+",
                    help="testbed run folders (holding bench/raw/), one per boot")
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).parents[2])
    ap.add_argument("--check", action="store_true", help="fail unless every figure is sane")
    args = ap.parse_args()
    sha, dirty = git_commit(args.root)
    runs, boots = [], []
    for run_dir in args.runs:
        raw = run_dir / "bench" / "raw"
        kv = read_kv(raw / "meta.hosta")
        boots.append(kv)
        runs += load_runs(raw, int(kv["links"]))
    first = boots[0]
    meta = {"schema": "mrbond-bench/1", "commit": sha, "dirty": dirty,
            "kernel": first.get("kernel"), "links": [int(b["links"]) for b in boots],
            "rate": first.get("rate"), "rate_bits": int(first["rate_bits"]),
            "quick": first.get("quick") == "1", "reps": int(first["reps"]),
            "duration_ms": int(first["duration_ms"]), "vcpus": int(first["vcpus"]),
            "members": first.get("members"), "accel": "tcg"}
    agg = aggregate(runs)
    res = {"meta": meta, "aggregate": agg, "latency": latency(runs)}
    res["checks"] = checks(runs, meta, agg)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    (args.out / "report.md").write_text(report_md(res))
    print(f"report: {args.out / 'report.md'}")
    if args.check:
        bad = sane(res)
        for b in bad:
            print(f"check: {b}", file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
