#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the Grafana dashboard of rdma_mrbond against the exporter.

    check-dashboard.py DASHBOARD.json EXPORTER

The dashboard must be well formed (unique panel ids, panels inside the
24-column grid and not overlapping, a query in every panel), every query
must be valid PromQL (promtool checks it as a recording rule, with
Grafana's variables filled in), and every metric it names must be one that
`EXPORTER --list` says the exporter writes. Exit status 1 on any problem.
"""
import json
import re
import subprocess
import sys
import tempfile

PANEL_TYPES = {"timeseries", "state-timeline", "table", "stat", "gauge", "bargauge"}
# Grafana's variables, as a query sees them once Grafana filled them in.
VARIABLES = {"$__rate_interval": "1m", "$bond": ".*"}
METRIC = re.compile(r"\b(mrbond_[a-z0-9_]+)\b")
# A variable's query: Grafana's label_values(SELECTOR, LABEL).
LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$")


def queries(dash):
    """(where, expr) of every query: panel targets and template variables."""
    for p in dash.get("panels", []):
        for t in p.get("targets", []):
            yield f"panel {p.get('id')} ({p.get('title')})", t.get("expr", "")
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query", "") if isinstance(q, dict) else q or ""
            m = LABEL_VALUES.match(q)
            yield f"variable {v.get('name')}", m.group(1) if m else q


def layout_problems(dash):
    problems, ids, cells = [], set(), {}
    for key in ("title", "uid", "schemaVersion", "panels"):
        if key not in dash:
            problems.append(f"no {key}")
    for p in dash.get("panels", []):
        where = f"panel {p.get('id')} ({p.get('title')})"
        if not isinstance(p.get("id"), int) or p["id"] in ids:
            problems.append(f"{where}: id missing or repeated")
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES:
            problems.append(f"{where}: unknown type {p.get('type')}")
        if not p.get("title"):
            problems.append(f"{where}: no title")
        if not p.get("targets"):
            problems.append(f"{where}: no query")
        refs = [t.get("refId") for t in p.get("targets", [])]
        if len(set(refs)) != len(refs) or None in refs:
            problems.append(f"{where}: refIds missing or repeated")
        g = p.get("gridPos", {})
        x, y, w, h = (g.get(k) for k in "xywh")
        if not all(isinstance(v, int) for v in (x, y, w, h)) or x < 0 or w < 1 or h < 1 or x + w > 24:
            problems.append(f"{where}: gridPos {g} outside the 24-column grid")
            continue
        area = [(cx, cy) for cx in range(x, x + w) for cy in range(y, y + h)]
        other = next((cells[c] for c in area if c in cells), None)
        if other is not None:
            problems.append(f"{where}: overlaps panel {other}")
        cells.update((c, p.get("id")) for c in area)
    return problems


def promql_problems(exprs):
    """promtool's verdict on every expression, as recording rules."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query{i}", "expr": e} for i, (_, e) in enumerate(exprs)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        json.dump(rules, f)  # JSON is YAML
        f.flush()
        r = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
    return [] if r.returncode == 0 else [f"promtool: {(r.stdout + r.stderr).strip()}"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dash = json.load(open(sys.argv[1]))
    exported = set(subprocess.run([sys.argv[2], "--list"], capture_output=True, text=True,
                                  check=True).stdout.split())
    problems = layout_problems(dash)
    exprs = []
    for where, expr in queries(dash):
        if not expr.strip():
            problems.append(f"{where}: empty query")
            continue
        for var, value in VARIABLES.items():
            expr = expr.replace(var, value)
        if "$" in expr:
            problems.append(f"{where}: unknown variable in {expr}")
        for m in METRIC.findall(expr):
            if m not in exported:
                problems.append(f"{where}: {m} is not a metric the exporter writes")
        exprs.append((where, expr))
    problems += promql_problems(exprs)
    for p in problems:
        print(p)
    print(f"{sys.argv[1]}: {len(dash.get('panels', []))} panels, {len(exprs)} queries, "
          f"{len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
