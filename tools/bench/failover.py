# SPDX-License-Identifier: GPL-2.0
"""A failover timeline: the rails' byte samples (~10 ms), fio's 10 ms
bandwidth log if the traffic was fio's (tools/bench/guest.sh failover_nvme;
otherwise the rails' sum is the total: the demo's xperf run), the cable
marks and the kernel log, put on one clock (ms since the traffic started),
and the figures the benchmark reports."""

import re

MEMBER_PREFIX = "rxe"  # the pulled rail's member: rxe<rail>
FULL_RATE = 0.9      # of one rail's shaped rate: "full rate on the survivor"
WINDOW_MS = 100      # moving average for that
ZERO_MBPS = 0.5      # below this a window carried nothing but LACPDUs
ZERO_SPAN_MS = 50    # the shortest outage counted
RESUMED = 0.25       # of one rail's rate: data flows again
# The ULP's own account: nvme-rdma's error recovery, or mrbond_xperf's.
ULP_BROKE = r"nvme.*starting error recovery|mrbond_xperf: conn \d+ on .*reconnecting"
ULP_BACK = r"nvme.*Successfully reconnected|mrbond_xperf: conn \d+: reconnected"


def _kv(path):
    out = {}
    for line in path.read_text().splitlines():
        key, sep, val = line.partition("=")
        if sep:
            out[key] = float(val)
    return out


def _unused_fio_series(d):
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


def _first_average(series, start, level):
    """The first time from index start on where the WINDOW_MS average of the
    series reaches level."""
    for i in range(start, len(series)):
        t = series[i][0]
        win = [m for u, m in series[i:] if u < t + WINDOW_MS]
        span = [u for u, _ in series[i:] if u < t + WINDOW_MS]
        if span and span[-1] - t >= WINDOW_MS - 20 and sum(win) / len(win) >= level:
            return round(t, 1)
    return None


def _first_us(events, after, pattern):
    """The microseconds a kernel log line matching pattern (its one group)
    reports, from the first such line at or after after, in ms."""
    for t, text in events:
        m = re.search(pattern, text)
        if m and t >= after:
            return int(m.group(1)) / 1000
    return None


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
    rail = int(marks.get("rail", 0))
    member = f"{MEMBER_PREFIX}{rail}"
    pull = round((marks["pull"] - t0) * 1000, 1)
    plug = round((marks["plug"] - t0) * 1000, 1)
    rails = _rail_series(d, t0)
    events = _kernel_events(d, t0)
    one_rail = meta["rate_bits"] / 1e6
    # The total is the rails' wire rate: fio's 10 ms log is too sparse at
    # these rates (a 64 KiB write completes every ~26 ms per rail).
    total = [(t, sum(r[k][1] for r in rails)) for k, (t, _) in enumerate(rails[0])] \
        if rails else []

    # Zero throughput: the first span after the pull of at least ZERO_SPAN_MS
    # in which no sample carried data (a single empty sample is a scheduling
    # hiccup of the guest, not an outage), to the moment data flows again: a
    # WINDOW_MS average of RESUMED of one rail's rate (the connections'
    # setup traffic alone stays below). None: the survivor carried on.
    zero_from, resumed = None, None
    i = 0
    while i < len(total):
        t, m = total[i]
        if pull < t < plug and m < ZERO_MBPS:
            j = i
            while j + 1 < len(total) and total[j + 1][1] < ZERO_MBPS:
                j += 1
            end = total[j + 1][0] if j + 1 < len(total) else plug
            if end - t >= ZERO_SPAN_MS:
                zero_from = t
                resumed = _first_average(total, j, RESUMED * one_rail)
                break
            i = j
        i += 1
    zero = 0.0 if zero_from is None else round((resumed or plug) - zero_from, 1)
    notice = _first(events, pull, rf"member {member}: usable -> unusable")
    # Full rate on the survivor: after the bond's notice, and after the
    # outage if there was one. An outage that ended before the notice was
    # not the bond's to end (the testbed's barriers put up to seconds
    # between the pull's mark and the carrier loss, CI once 4.7 s): from
    # the notice, never before it, which gave a negative time.
    after = max(t for t in (resumed if zero_from is not None else None, notice or pull)
                if t is not None)
    start = next((i for i, (t, _) in enumerate(total) if after is not None and t > after), None)
    full_at = None if start is None else _first_average(total, start, FULL_RATE * one_rail)
    # From the bond's notice: the request's trip through the runner is the
    # testbed's, not the bond's.
    full = None if full_at is None else round(full_at - (notice or pull), 1)
    moved = _first(events, pull, rf"member {member} (unusable|detached): .* in \d+ us")
    usable = _first(events, plug, rf"member {member}: unusable -> usable")
    # The bond's own account of its detection: how long after the netdev
    # event (the carrier loss the guest saw) it turned the member unusable;
    # and of its detach.
    detect = _first_us(events, pull, rf"member {member}: usable -> unusable .*?(\d+) us after "
                       "the netdev")
    work = _first_us(events, pull, rf"member {member} (?:unusable|detached): .* in (\d+) us")
    return {
        "source": "the rails' wire bytes, sampled every ~10 ms; events from the kernel log",
        "unit": "ms", "rail": rail, "member": member,
        "events_ms": {"pull": pull, "bond_notices": notice, "qps_flushed": moved,
                      "ulp_error_recovery": _first(events, pull, ULP_BROKE),
                      "ulp_reconnected": _first(events, pull, ULP_BACK),
                      "traffic_resumed": resumed, "cable_back": plug, "member_usable": usable},
        "request_to_notice_ms": None if notice is None else round(notice - pull, 1),
        "detection_ms": detect,
        "bond_work_ms": work,
        "zero_throughput_ms": zero,
        "full_rate_ms": full,
        "usable_again_ms": None if usable is None else round(usable - plug, 1),
        "kernel_log": [(round(t, 1), text) for t, text in events
                       if t >= pull - 100 and re.search("nvme|rdma_mrbond|mrbond_xperf", text)]
                      [:40],
        "series": {"total_mbps": total, "total_source": "rails", "rails_mbps": rails},
    }
