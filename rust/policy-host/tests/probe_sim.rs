// SPDX-License-Identifier: GPL-2.0
//! Rail probes at both ends of a simulated rail whose two directions drop
//! heartbeats on a schedule: the side that stops hearing says "receive",
//! the side that is not heard says "transmit", within the detection time;
//! a rail comes back only after its hold-down and a run of good intervals,
//! and a clean rail never goes down whatever the jitter.

use mrbond_policy::policy::probe::{Direction, Health, ProbeConfig, RailProbe};
use proptest::prelude::*;

const CFG: ProbeConfig = ProbeConfig::DEFAULT;
const MS: u64 = 1_000_000;

/// Which heartbeats a direction loses: sent at `t`, lost if true.
type Loss<'a> = dyn Fn(u64) -> bool + 'a;

struct Run {
    /// Every health change: (time, end, health).
    changes: Vec<(u64, char, Health)>,
}

/// Both ends for `until` ns; `a_to_b` and `b_to_a` say which heartbeats are
/// lost; each end's timer ticks every interval / 3 with `jitter(k)` added.
fn simulate(until: u64, a_to_b: &Loss<'_>, b_to_a: &Loss<'_>, jitter: &dyn Fn(u64) -> u64) -> Run {
    let mut a = RailProbe::new(CFG, 0);
    let mut b = RailProbe::new(CFG, 0);
    let mut changes = Vec::new();
    let delay = 50_000; // one way, ns
    let step = CFG.interval_ns / 3;
    // Heartbeats in flight: (arrival, to_b, seq, echo).
    let mut wire: Vec<(u64, bool, u32, u32)> = Vec::new();
    let mut k = 0u64;
    let mut now = 0u64;
    while now < until {
        if k % 3 == 0 {
            let (seq, echo) = a.heartbeat();
            if !a_to_b(now) {
                wire.push((now + delay, true, seq, echo));
            }
        }
        if k % 3 == 1 {
            let (seq, echo) = b.heartbeat();
            if !b_to_a(now) {
                wire.push((now + delay, false, seq, echo));
            }
        }
        wire.sort_by_key(|w| w.0);
        while let Some(&(at, to_b, seq, echo)) = wire.first() {
            if at > now {
                break;
            }
            wire.remove(0);
            if to_b {
                b.heard(seq, echo, at);
            } else {
                a.heard(seq, echo, at);
            }
        }
        if let Some(h) = a.tick(now) {
            changes.push((now, 'a', h));
        }
        if let Some(h) = b.tick(now) {
            changes.push((now, 'b', h));
        }
        k += 1;
        now = k * step + jitter(k);
    }
    Run { changes }
}

fn never(_: u64) -> bool {
    false
}

fn detect_bound() -> u64 {
    // The misses, one interval for the last heartbeat before the loss, and
    // a tick.
    CFG.interval_ns * (u64::from(CFG.misses) + 2)
}

#[test]
fn a_clean_rail_never_goes_down() {
    let run = simulate(5_000 * MS, &never, &never, &|_| 0);
    assert!(run.changes.is_empty(), "{:?}", run.changes);
}

#[test]
fn one_lost_direction_is_named_at_both_ends() {
    let from = 200 * MS;
    let run = simulate(400 * MS, &|t| t >= from, &never, &|_| 0);
    let a = run.changes.iter().find(|c| c.1 == 'a').expect("a notices");
    let b = run.changes.iter().find(|c| c.1 == 'b').expect("b notices");
    assert!(matches!(a.2, Health::Down(Direction::Transmit, _)), "{a:?}");
    assert!(matches!(b.2, Health::Down(Direction::Receive, _)), "{b:?}");
    for c in [a, b] {
        assert!(c.0 >= from && c.0 - from <= detect_bound(), "{c:?}");
    }
}

#[test]
fn both_directions_lost_is_receive_at_both_ends() {
    let from = 100 * MS;
    let lost = |t: u64| t >= from;
    let run = simulate(200 * MS, &lost, &lost, &|_| 0);
    let downs: Vec<_> = run
        .changes
        .iter()
        .filter(|c| matches!(c.2, Health::Down(..)))
        .collect();
    assert_eq!(downs.len(), 2, "{downs:?}");
    assert!(downs
        .iter()
        .all(|c| matches!(c.2, Health::Down(Direction::Receive, _))));
}

#[test]
fn a_rail_comes_back_after_its_hold_down_and_good_intervals() {
    let (from, to) = (100 * MS, 150 * MS);
    let lost = |t: u64| (from..to).contains(&t);
    let run = simulate(3_000 * MS, &lost, &never, &|_| 0);
    for end in ['a', 'b'] {
        let seq: Vec<_> = run.changes.iter().filter(|c| c.1 == end).collect();
        assert_eq!(seq.len(), 2, "{end}: {seq:?}");
        let Health::Down(_, since) = seq[0].2 else {
            panic!("{end}: first change {seq:?}")
        };
        assert_eq!(seq[1].2, Health::Up);
        let up = seq[1].0;
        assert!(
            up >= since + CFG.hold_down_ns,
            "{end}: up before its hold-down"
        );
        assert!(
            up <= since + CFG.hold_down_ns + CFG.interval_ns * u64::from(CFG.recover + 2),
            "{end}: up too late, {} ms after going down",
            (up - since) / MS
        );
    }
}

#[test]
fn a_flapping_rail_stays_down() {
    // 20 ms lost, 20 ms fine, over and over.
    let flap = |t: u64| t >= 100 * MS && (t / (20 * MS)) % 2 == 0;
    let run = simulate(3_000 * MS, &flap, &never, &|_| 0);
    let a: Vec<_> = run.changes.iter().filter(|c| c.1 == 'a').collect();
    assert_eq!(a.len(), 1, "{a:?}");
}

proptest! {
    #[test]
    fn timer_jitter_below_an_interval_third_never_takes_a_clean_rail_down(
        seed in any::<u64>(),
    ) {
        let jitter = move |k: u64| (seed.rotate_left((k % 64) as u32) ^ k) % (CFG.interval_ns / 3);
        let run = simulate(1_000 * MS, &never, &never, &jitter);
        prop_assert!(run.changes.is_empty(), "{:?}", run.changes);
    }
}
