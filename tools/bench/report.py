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

import failover  # tools/bench/failover.py

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
        self.base = base
        self.client = read_kv(base.with_name(base.name + ".hosta.kv"))
        server = base.with_name(base.name + ".hostb.kv")
        self.server = read_kv(server) if server.exists() else {}
        # Traffic beside the run (placement-foreign): each side's status.
        self.beside = [read_kv(f) for f in sorted(base.parent.glob(base.name + ".*.foreign"))]
        self.rails = {}
        for role in ("hosta", "hostb"):
            before = base.with_name(f"{base.name}.{role}.before")
            after = base.with_name(f"{base.name}.{role}.after")
            if before.exists() and after.exists():
                b, a = read_kv(before), read_kv(after)
                self.rails[role] = {k: int(a[k]) - int(b[k]) for k in a
                                    if k in b and a[k].lstrip("-").isdigit()
                                    and not k.endswith(".backlog")}

    def rail_steady_mbps(self, rails):
        """Each rail's goodput while all connections were open: the client's
        per-connection bytes, on the rail the server's side of the
        connection says (a bond's passive QP lives on the rail the request
        came in on: its port)."""
        ns = num(self.client, "steady_ns")
        port = {}
        for key, val in self.server.items():
            f = val.split(",")
            if key.startswith("conn") and len(f) >= 5:
                port[int(f[4])] = int(f[3])
        out = [0.0] * rails
        for key, val in self.client.items():
            f = val.split(",")
            if not (key.startswith("conn") and key[4:].isdigit() and len(f) >= 3 and ns):
                continue
            p = port.get(int(key[4:]), 0)
            if not 1 <= p <= rails:
                return None
            out[p - 1] += int(f[2]) * 8 / ns * 1000
        return out

    def conn_steady_mbps(self):
        """Each connection's goodput while all were open."""
        ns = num(self.client, "steady_ns")
        out = []
        for key, val in self.client.items():
            if key.startswith("conn") and key[4:].isdigit():
                fields = val.split(",")
                if len(fields) >= 3 and ns:
                    out.append(int(fields[2]) * 8 / ns * 1000)
        return out

    @property
    def ok(self):
        """Both sides' status ok, and the traffic beside the run, if any:
        without it a foreign-traffic run measured nothing foreign."""
        return (self.client.get("status") == "ok" and self.server.get("status") == "ok"
                and all(b.get("status") == "ok" for b in self.beside))

    def mbps(self):
        """Payload goodput while the client posted, in Mbit/s: xperf's
        paced rate (each connection from its first completion to its
        last, summed; see xperf_main.c)."""
        paced = num(self.client, "paced_kbps")
        return paced / 1000 if paced is not None else None

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
        # A failed run measured nothing: runs_ok lists it, the figures leave it out.
        mine = [r for r in runs if r.case == case and r.links == links and r.ok]
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
            mine = [r for r in runs if r.case == case and r.variant == variant and r.ok]
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


def jain(values):
    vals = [v for v in values if v is not None]
    sq = sum(v * v for v in vals)
    return round(sum(vals) ** 2 / (len(vals) * sq), 4) if vals and sq else None


def placement(runs, meta):
    """Per variant and policy: total goodput, the members' QPs once all
    connections were open, each rail's wire rate and utilisation (against
    its shaped rate; the last rail is the hot one) and Jain's index."""
    rate = meta["rate_bits"] / 1e6
    out = []
    for r in runs:
        if not r.case.startswith("placement-"):
            continue
        variant = r.case.split("-", 1)[1]
        caps = [rate] * r.links
        if variant == "quarter":
            caps[-1] = rate / 4
        wire = r.rail_steady_mbps(r.links) or [None] * r.links
        util = [(w or 0) / caps[i] for i, w in enumerate(wire)]
        conns = r.conn_steady_mbps()
        qps_file = r.base.with_name(r.base.name + ".hosta.qps")
        qps = {k: int(v) for k, v in read_kv(qps_file).items()} if qps_file.exists() else {}
        steady_ns = num(r.client, "steady_ns")
        total = (num(r.client, "steady_bytes") or 0) * 8 / steady_ns * 1000 if steady_ns else None
        out.append({"variant": variant, "policy": r.variant, "rails": r.links,
                    "conns": num(r.client, "conns"), "unit": "Mbit/s",
                    "total": None if total is None else round(total, 3),
                    "capacity": round(sum(caps), 3),
                    "qps_per_member": qps,
                    "rail_goodput": [None if w is None else round(w, 3) for w in wire],
                    "rail_utilisation": [round(u, 4) for u in util],
                    "conn_min": round(min(conns), 3) if conns else None,
                    "conn_max": round(max(conns), 3) if conns else None,
                    "jain_conns": jain(conns),
                    "jain": jain(util), "ok": r.ok})
    return out


def connect(runs):
    """create_qp to ESTABLISHED per connection, bond against a raw member."""
    out = []
    for case in sorted({r.case for r in runs if r.case.startswith("connect-")},
                       key=lambda c: int(c.split("-")[1])):
        entry = {"conns": int(case.split("-")[1]), "unit": "us"}
        for variant in ("raw", "bond"):
            mine = [r for r in runs if r.case == case and r.variant == variant and r.ok]
            entry[variant] = {p: spread(num(r.client, f"connect_{p}_ns") / 1000 for r in mine
                                        if num(r.client, f"connect_{p}_ns"))
                              for p in ("p50", "p99", "max")}
        entry["ratio_p50"] = ratio(entry["bond"]["p50"]["median"], entry["raw"]["p50"]["median"])
        out.append(entry)
    return out


def placement_decisions(path):
    """The host placement bench's table: ns per decision by policy and
    member count."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 5 and f[1].isdigit():
            try:
                out.append({"policy": f[0], "members": int(f[1]), "p50_ns": float(f[2]),
                            "p99_ns": float(f[3])})
            except ValueError:
                pass
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
    # selfcheck-*: runs corrupted on purpose, which must fail (guest.sh).
    failed = [f"{r.case}/{r.variant}/{r.seq}" for r in runs
              if not r.ok and not r.case.startswith("selfcheck-")]
    caught = [r for r in runs if r.case.startswith("selfcheck-") and not r.ok]
    out.append({"name": "corruption_detected", "value": len(caught),
                "threshold": sum(r.case.startswith("selfcheck-") for r in runs),
                "ok": len(caught) == sum(r.case.startswith("selfcheck-") for r in runs)})
    out.append({"name": "runs_ok", "value": len(runs) - len(failed) - len(caught),
                "threshold": len(runs) - len(caught),
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
        "## Aggregate bandwidth (payload Mbit/s, median [min–max] ×runs)",
        "",
        "| rails | op | size | QPs | Σ members alone | by hand | bond | bond/Σ | bond/by hand |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in res["aggregate"]:
        cell = lambda s: (f"{fmt(s['median'])} [{fmt(s['min'])}–{fmt(s['max'])}] "  # noqa: E731
                          f"×{len(s['runs'])}")
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
    if res["placement"]:
        lines += ["", "## Placement under a hot rail", "",
                  "The last rail is the hot one: shaped to a quarter of the others' rate "
                  "(quarter) or carrying an ib_write_bw the bond does not see (foreign). "
                  "Connections are opened over time; the figures are from the moment all "
                  "were open: QPs per member, each rail's goodput over its shaped rate "
                  "(utilisation; payload, so at most about 0.95), and each connection's goodput (what a ULP on it sees: "
                  "with greedy senders the total fills every rail that has a QP whatever "
                  "the spread; the spread decides how fairly the connections share).", "",
                  "| variant | policy | conns | total Mbit/s | of capacity | QPs per member | "
                  "rail utilisation | Jain (rails) | per connection min–max | Jain (conns) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for pl in res["placement"]:
            qps = " ".join(f"{k}:{v}" for k, v in sorted(pl["qps_per_member"].items()))
            util = " ".join(f"{u:.2f}" for u in pl["rail_utilisation"])
            lines.append(f"| {pl['variant']} | {pl['policy']} | {pl['conns']} | "
                         f"{fmt(pl['total'])} | {fmt(pl['capacity'])} | {qps} | {util} | "
                         f"{fmt(pl['jain'], 3)} | {fmt(pl['conn_min'])}–{fmt(pl['conn_max'])} | "
                         f"{fmt(pl['jain_conns'], 3)} |")
    titles = {"nvme": "NVMe-oF, fio through mrbond0 (the pulled rail carries the I/O queue)",
              "xperf": "mrbond_xperf WRITEs, 2 connections per rail, each reconnecting on a flush"}
    for fo in res["failover"]:
        lines += ["", f"## Failover timeline ({titles[fo['traffic']]})", ""]
        if "error" in fo:
            lines.append(f"**Missing**: {fo['error']}")
            continue
        for key, label in (("request_to_notice_ms", "cable pull requested to the bond's "
                            "notice (the request crosses the host runner and QMP)"),
                           ("detection_ms", "carrier loss (the netdev event) to the member "
                            "unusable, by the bond's own clock"),
                           ("bond_work_ms", "the bond's detach (QPs moved to error, WRs "
                            "flushed)"),
                           ("zero_throughput_ms", "time with zero total throughput"),
                           ("full_rate_ms", "the bond's notice to full rate on the survivor"),
                           ("usable_again_ms", "cable back (requested) to the member usable "
                            "again (LACP converging)")):
            lines.append(f"- {label}: {fmt(fo.get(key), 3 if key == 'bond_work_ms' else 1)} ms")
        lines.append(f"- events (ms from the traffic's start): "
                     + ", ".join(f"{k} {fmt(v)}" for k, v in fo["events_ms"].items()))
    if res["connect"]:
        lines += ["", "## Control path: QP creation to ESTABLISHED (µs, median of runs)", "",
                  "| connections | raw p50 | bond p50 | raw max | bond max | bond/raw p50 |",
                  "|---|---|---|---|---|---|"]
        for c in res["connect"]:
            lines.append(f"| {c['conns']} | {fmt(c['raw']['p50']['median'])} | "
                         f"{fmt(c['bond']['p50']['median'])} | {fmt(c['raw']['max']['median'])} | "
                         f"{fmt(c['bond']['max']['median'])} | {fmt(c['ratio_p50'], 3)} |")
    if res["placement_decision_ns"]:
        lines += ["", "Placement decision (host bench, ns): "
                  + ", ".join(f"{d['policy']}@{d['members']} p50 {d['p50_ns']:.1f}"
                              for d in res["placement_decision_ns"]
                              if d["policy"] in ("wrr", "lqf"))]
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
    ops = {entry["op"] for entry in res["latency"]}
    for op in ("send", "write"):
        if op not in ops:
            bad.append(f"no {op} latency case")
    for entry in res["latency"]:
        for v in ("raw", "bond"):
            need(f"latency {v} p50", entry[v]["p50"]["median"])
            need(f"latency {v} p99", entry[v]["p99"]["median"])
            if (entry[v]["p50"]["median"] or 0) > (entry[v]["p99"]["median"] or 0):
                bad.append(f"latency {v}: p50 above p99")
    for pl in res["placement"]:
        name = f"placement {pl['variant']} {pl['policy']}"
        need(f"{name} total", pl["total"])
        need(f"{name} jain", pl["jain"], hi=1.0001)
        if sum(pl["qps_per_member"].values()) != pl["conns"]:
            bad.append(f"{name}: members hold {pl['qps_per_member']}, {pl['conns']} opened")
    for fo in res["failover"]:
        if "error" in fo:
            bad.append(f"failover: {fo['error']}")
            continue
        for key in ("detection_ms", "zero_throughput_ms", "full_rate_ms"):
            v = fo.get(key)
            if v is None or not math.isfinite(v) or v < 0:
                bad.append(f"failover {key}: {v}")
    for c in res["connect"]:
        for v in ("raw", "bond"):
            need(f"connect {c['conns']} {v} p50", c[v]["p50"]["median"])
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
    res = {"meta": meta, "aggregate": agg, "latency": latency(runs),
           "placement": placement(runs, meta), "connect": connect(runs),
           "placement_decision_ns": placement_decisions(args.out / "placement-bench.txt")}
    res["failover"] = []
    for run_dir in args.runs:
        for kind in ("nvme", "xperf"):
            d = run_dir / "bench" / "raw" / f"failover-{kind}" / "bond"
            if d.exists():
                res["failover"].append({"traffic": kind, **failover.analyse(d, meta)})
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
