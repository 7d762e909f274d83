# SPDX-License-Identifier: GPL-2.0
"""A failover timeline: the rails' byte samples (~10 ms), fio's 10 ms
bandwidth log if the traffic was fio's (tools/bench/guest.sh failover_nvme;
otherwise the rails' sum is the total: the demo's xperf run), the cable
marks and the kernel log, put on one clock (ms since the traffic started),
and the figures the benchmark reports."""

import re

MEMBER = "rxe0"      # rail 0's member: the rail whose cable is pulled
FULL_RATE = 0.9      # of one rail's shaped rate: "full rate on the survivor"
WINDOW_MS = 100      # moving average for that
ZERO_MBPS = 0.5      # below this a window carried nothing but LACPDUs


def _kv(path):
    out = {}
    for line in path.read_text().splitlines():
        key, sep, val = line.partition("=")
        if sep:
            out[key] = float(val)
    return out


def _fio_series(d):
    """(ms since fio's start, Mbit/s) per logged window: fio's bandwidth
    log in KiB/s, one line per 10 ms window with I/O completing in it."""
    logs = sorted(d.glob("fio_bw*.log"))
    series = []
    for line in logs[0].read_text().splitlines() if logs else []:
        f = [x.strip() for x in line.split(",")]
        if len(f) >= 2 and f[0].isdigit():
            series.append((int(f[0]), int(f[1]) * 8 * 1024 / 1e6))
    return series


def _rail_series(d, t0):
    """Per rail, (ms since fio's start, Mbit/s) from the sampler's counters."""
    rows = []
    for line in (d / "rails.csv").read_text().splitlines():
        f = line.split(",")
        try:
            rows.append([float(f[0])] + [int(x) for x in f[1:]])
        except ValueError:
            continue
    rails = [[] for _ in range(len(rows[0]) - 1)] if rows else []
    for a, b in zip(rows, rows[1:]):
        dt = b[0] - a[0]
        if dt <= 0:
            continue
        for i in range(len(rails)):
            rails[i].append((round((b[0] - t0) * 1000, 1), (b[i + 1] - a[i + 1]) * 8 / dt / 1e6))
    return rails


def _kernel_events(d, t0):
    """Kernel log lines as (ms since fio's start, text), through the
    "bench: clock W" marker logged at wall time W."""
    path = d / "dmesg.hosta"
    if not path.exists():
        return []
    stamped = []
    for line in path.read_text().splitlines():
        m = re.match(r"\[\s*(\d+\.\d+)\]\s(.*)", line)
        if m:
            stamped.append((float(m.group(1)), m.group(2)))
    clock = [(ts, float(text.split()[-1])) for ts, text in stamped
             if text.startswith("bench: clock ")]
    if not clock:
        return []
    ts0, wall0 = clock[-1]
    return [((wall0 + ts - ts0 - t0) * 1000, text) for ts, text in stamped if ts >= ts0]


def _first(events, after, pattern):
    for t, text in events:
        if t >= after and re.search(pattern, text):
            return round(t, 1)
    return None


def analyse(d, meta):
    marks = _kv(d / "marks") if (d / "marks").exists() else {}
    missing = [k for k in ("start", "pull", "plug") if k not in marks]
    if missing or not (d / "rails.csv").exists():
        return {"error": f"no timeline in {d}: marks {', '.join(missing) or 'present'}, "
                         f"rails.csv {'present' if (d / 'rails.csv').exists() else 'missing'}",
                "events_ms": {}}
    t0 = marks["start"]
    pull = round((marks["pull"] - t0) * 1000, 1)
    plug = round((marks["plug"] - t0) * 1000, 1)
    fio = _fio_series(d)
    rails = _rail_series(d, t0)
    total = fio or [(t, sum(r[k][1] for r in rails)) for k, (t, _) in enumerate(rails[0])] \
        if rails else fio
    events = _kernel_events(d, t0)
    one_rail = meta["rate_bits"] / 1e6

    # Zero total throughput after the pull: logged windows of 0, and the
    # gaps where fio logged nothing (no I/O completed in them).
    zero, resumed, prev = 0.0, None, None
    for t, mbps in total:
        if t > pull and prev is not None and prev[0] >= pull - 10 and t <= plug:
            gap = t - prev[0] - 10
            if gap > 0:
                zero += gap
            if mbps < ZERO_MBPS:
                zero += 10
            elif resumed is None and zero > 0:
                resumed = t
        prev = (t, mbps)
    full = None
    for i, (t, _) in enumerate(total):
        if t <= pull:
            continue
        win = [m for u, m in total[i:] if u < t + WINDOW_MS]
        span = [u for u, _ in total[i:] if u < t + WINDOW_MS]
        if span and span[-1] - t >= WINDOW_MS - 20 and \
                sum(win) / len(win) >= FULL_RATE * one_rail:
            full = round(t - pull, 1)
            break
    notice = _first(events, pull, rf"member {MEMBER}: usable -> unusable")
    detached = _first(events, pull, rf"member {MEMBER} detached")
    usable = _first(events, plug, rf"member {MEMBER}: unusable -> usable")
    work = None
    if detached is not None:
        m = re.search(r"flushed in (\d+) us", next(text for t, text in events
                                                  if round(t, 1) == detached and "detached" in text))
        work = int(m.group(1)) / 1000 if m else None
    return {
        "source": ("fio --write_bw_log --log_avg_msec=10 through mrbond0" if fio else
                   "the rails' sum") + "; rails sampled ~10 ms",
        "unit": "ms",
        "events_ms": {"pull": pull, "bond_notices": notice, "qps_flushed": detached,
                      "traffic_resumed": resumed, "cable_back": plug, "member_usable": usable},
        "detection_ms": None if notice is None else round(notice - pull, 1),
        "bond_work_ms": work,
        "zero_throughput_ms": round(zero, 1),
        "full_rate_ms": full,
        "usable_again_ms": None if usable is None else round(usable - plug, 1),
        "nvme_log": [(round(t, 1), text) for t, text in events
                     if t >= pull - 100 and "nvme" in text][:20],
        "series": {"total_mbps": total, "total_source": "fio" if fio else "rails",
                   "rails_mbps": rails},
    }
