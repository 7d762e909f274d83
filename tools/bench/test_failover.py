#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""failover.analyse on synthetic timelines: python3 tools/bench/test_failover.py"""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import failover  # noqa: E402

RATE = 20e6  # one rail's shaped rate, bit/s


def timeline(d, rates, pull, plug, notice):
    """rates(t) -> (rail0, rail1) Mbit/s; times in s from start 1000.0."""
    t0 = 1000.0
    (d / "marks").write_text(f"start={t0}\nrail=0\npull={t0 + pull}\nplug={t0 + plug}\n")
    rows, b = [], [0, 0]
    t = 0.0
    while t < plug + 2:
        rows.append(f"{t0 + t:.3f},{int(b[0])},{int(b[1])}")
        for i, r in enumerate(rates(t)):
            b[i] += r * 1e6 / 8 * 0.01
        t += 0.01
    (d / "rails.csv").write_text("\n".join(rows) + "\n")
    (d / "dmesg.hosta").write_text(
        f"[   10.000000] bench: clock {t0}\n"
        f"[   {10 + notice:.6f}] rdma_mrbond: member rxe0: usable -> unusable (link-down), "
        "100 us after the netdev event\n")


class FullRate(unittest.TestCase):
    def analyse(self, rates, pull, plug, notice):
        with tempfile.TemporaryDirectory() as tmp:
            d = pathlib.Path(tmp)
            timeline(d, rates, pull, plug, notice)
            return failover.analyse(d, {"rate_bits": RATE})

    def test_outage_before_the_notice(self):
        # CI: the carrier went only after a barrier; a stall of both rails
        # ended before the bond's notice, and full rate came from it.
        def rates(t):
            if t < 2.5:
                return (20, 20)
            if t < 3.0:
                return (0, 0)
            return (0, 20)
        fo = self.analyse(rates, pull=2.0, plug=8.0, notice=3.5)
        self.assertIsNotNone(fo["full_rate_ms"])
        self.assertGreaterEqual(fo["full_rate_ms"], 0)

    def test_outage_the_bond_ends(self):
        # The usual case: notice, outage, the survivor back at full rate.
        def rates(t):
            if t < 2.0:
                return (20, 20)
            if t < 3.0:
                return (0, 0)
            return (0, 20)
        fo = self.analyse(rates, pull=2.0, plug=8.0, notice=2.1)
        self.assertGreater(fo["zero_throughput_ms"], 800)
        self.assertGreater(fo["full_rate_ms"], 800)


if __name__ == "__main__":
    unittest.main()
