// SPDX-License-Identifier: GPL-2.0

//! Gray failures (issue 17): a rail whose link is up but which drops
//! packets, found by heartbeats between the two bonds, as BFD does.
//!
//! Each end sends a heartbeat on every rail every `interval_ns`
//! ([`crate::policy::tfo_wire::Heartbeat`]): its own sequence number and the
//! last one it heard from the other end. A [`RailProbe`] per rail reads the
//! other end's, and tells:
//! - nothing heard for `misses` intervals: the rail is down for receiving
//!   (whether ours get through cannot be known then);
//! - heard, but the echo of our own numbers stopped advancing for `misses`
//!   intervals: the other end does not hear us: down for sending;
//! - down, then both directions fresh again for `recover` intervals in a
//!   row, and at least `hold_down_ns` after it went down: up again (a
//!   flapping rail stays down).
//!
//! The caller passes monotonic nanoseconds; sequence numbers wrap.

/// The probes' timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeConfig {
    /// Between two heartbeats of one end on one rail.
    pub interval_ns: u64,
    /// Intervals without progress before a rail is down.
    pub misses: u32,
    /// Intervals of progress in a row before a down rail is up again.
    pub recover: u32,
    /// The least time a rail stays down.
    pub hold_down_ns: u64,
}

impl ProbeConfig {
    /// 3.3 ms heartbeats, down after 3 misses (10 ms); up after 1 s down
    /// at least and 30 good intervals in a row (100 ms: a rail that drops
    /// packets for a few ms every few tens of ms stays down).
    pub const DEFAULT: Self = Self {
        interval_ns: 3_300_000,
        misses: 3,
        recover: 30,
        hold_down_ns: 1_000_000_000,
    };

    fn detect_ns(&self) -> u64 {
        self.interval_ns.saturating_mul(u64::from(self.misses))
    }
}

/// Which direction of a rail fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Nothing arrives from the other end (ours may or may not get there).
    Receive,
    /// The other end's heartbeats arrive, ours do not reach it.
    Transmit,
}

/// A rail's health as its probe sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Health {
    /// Both directions carry heartbeats.
    Up,
    /// Down since the given time, for this direction.
    Down(Direction, u64),
}

/// The probe of one rail at one end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RailProbe {
    cfg: ProbeConfig,
    health: Health,
    /// The sequence number of our next heartbeat.
    next_seq: u32,
    /// The last sequence number heard from the other end.
    heard: u32,
    /// When we last heard from the other end.
    heard_at: u64,
    /// The highest of our numbers the other end echoed.
    echoed: u32,
    /// When that echo last advanced.
    echoed_at: u64,
    /// Intervals in a row with both directions fresh, while down.
    good: u32,
    /// When `good` last counted.
    good_at: u64,
}

impl RailProbe {
    /// A probe started at `now`: up, with a first detection interval of
    /// grace.
    pub const fn new(cfg: ProbeConfig, now: u64) -> Self {
        Self {
            cfg,
            health: Health::Up,
            next_seq: 1,
            heard: 0,
            heard_at: now,
            echoed: 0,
            echoed_at: now,
            good: 0,
            good_at: now,
        }
    }

    /// The rail's health.
    pub const fn health(&self) -> Health {
        self.health
    }

    /// The next heartbeat's (sequence number, echo).
    pub fn heartbeat(&mut self) -> (u32, u32) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        (seq, self.heard)
    }

    /// A heartbeat from the other end arrived at `now`.
    pub fn heard(&mut self, seq: u32, echo: u32, now: u64) {
        if newer(seq, self.heard) {
            self.heard = seq;
            self.heard_at = now;
        }
        // An echo of a number we never sent is a stale or foreign one.
        let sent = self.next_seq.wrapping_sub(1);
        if newer(echo, self.echoed) && !newer(echo, sent) {
            self.echoed = echo;
            self.echoed_at = now;
        }
    }

    /// The health at `now`, and whether it changed.
    pub fn tick(&mut self, now: u64) -> Option<Health> {
        let detect = self.cfg.detect_ns();
        let rx_fresh = now.saturating_sub(self.heard_at) < detect;
        let tx_fresh = now.saturating_sub(self.echoed_at) < detect;
        let next = match self.health {
            Health::Up if !rx_fresh => Health::Down(Direction::Receive, now),
            Health::Up if !tx_fresh => Health::Down(Direction::Transmit, now),
            Health::Up => Health::Up,
            Health::Down(dir, since) => {
                if !(rx_fresh && tx_fresh) {
                    self.good = 0;
                } else if now.saturating_sub(self.good_at) >= self.cfg.interval_ns {
                    self.good = self.good.saturating_add(1);
                    self.good_at = now;
                }
                let held = now.saturating_sub(since) >= self.cfg.hold_down_ns;
                if held && self.good >= self.cfg.recover {
                    Health::Up
                } else {
                    Health::Down(dir, since)
                }
            }
        };
        if next == self.health {
            return None;
        }
        if let Health::Down(..) = next {
            self.good = 0;
            self.good_at = now;
        }
        self.health = next;
        Some(next)
    }
}

/// Whether sequence number `a` is after `b`, across the wrap.
fn newer(a: u32, b: u32) -> bool {
    let d = a.wrapping_sub(b);
    d != 0 && d < 1 << 31
}
