// SPDX-License-Identifier: GPL-2.0

//! Weighted placement: the headroom formula and smooth weighted round robin.
//!
//! # Effective weight (the headroom formula)
//!
//! ```text
//! effective = admin_weight * (HEADROOM_FLOOR_PERMILLE + 1000 - min(util_permille, 1000))
//!           = admin_weight * (1400 - util_permille)
//! ```
//!
//! `util_permille` is the member's transmit rate against its link rate. The
//! floor of 400 permille is there because utilisation is a lagging, noisy signal
//! caused partly by the very QPs we place: pure headroom (`1000 - util`) would
//! give a saturated member zero new QPs and an idle one everything, so the next
//! sample flips the picture and placements oscillate. With the floor, live load
//! can move a member's share by at most 1400/400 = 3.5x against an idle peer of
//! the same admin weight; admin weight keeps the last word.
//!
//! Seed scenario (equal admin weights, member 0 at 80 %, member 1 at 50 %):
//! `(1400 - 800) : (1400 - 500) = 600 : 900`, so member 1 gets **60.0 %** of
//! new QPs (plain `100 - util` would give 71 %; `200 - util` only 56 %).
//!
//! Admin weights are `MIN_WEIGHT..=MAX_WEIGHT` (1..=1000, default 100); a member
//! that must take no new QPs is drained through its admin state instead of a
//! zero weight, so a usable member always has a positive effective weight
//! (at least 400, at most 1 400 000).
//!
//! # Smooth weighted round robin
//!
//! nginx's algorithm: every pick adds each eligible member's weight to its
//! `current`, picks the largest `current` (lowest index on ties) and subtracts
//! the total weight from the winner. Over a round of `total / gcd` picks each
//! member is chosen exactly in proportion to its weight, and after any prefix
//! of a round each member's count is within one of its ideal share, without
//! the bursts of classic WRR.

use super::{MaskIter, MemberIndex, MemberMask, MAX_MEMBERS};

/// Smallest admin weight.
pub const MIN_WEIGHT: u16 = 1;
/// Largest admin weight.
pub const MAX_WEIGHT: u16 = 1000;
/// Admin weight of a member that was given none.
pub const DEFAULT_WEIGHT: u16 = 100;
/// Share of the headroom scale (out of 1000) that a fully loaded member keeps,
/// so live utilisation cannot starve a member (see the module docs).
pub const HEADROOM_FLOOR_PERMILLE: u32 = 400;
/// Utilisation at which a link counts as full.
pub const FULL_PERMILLE: u16 = 1000;

/// Effective WRR weight from admin weight and utilisation (module docs).
pub const fn effective_weight(admin_weight: u16, util_permille: u16) -> u32 {
    let util = if util_permille > FULL_PERMILLE {
        FULL_PERMILLE
    } else {
        util_permille
    };
    // Cannot underflow: util <= 1000 < 1400.
    let headroom = (HEADROOM_FLOOR_PERMILLE + FULL_PERMILLE as u32).saturating_sub(util as u32);
    (admin_weight as u32).saturating_mul(headroom)
}

/// Transmit utilisation in permille of the link rate, from a counter delta.
///
/// `tx_bytes_delta` bytes sent in `interval_ns` on a link of `link_speed_mbps`
/// Mb/s: `util = tx_bytes * 8e6 / (interval_ns * link_speed_mbps)`, clamped to
/// 1000. Returns `None` when the interval or the speed is zero (no sample). Wide
/// inputs are scaled down together instead of overflowing.
pub fn utilisation_permille(
    tx_bytes_delta: u64,
    interval_ns: u64,
    link_speed_mbps: u32,
) -> Option<u16> {
    const SCALE: u64 = 8_000_000;
    if interval_ns == 0 || link_speed_mbps == 0 {
        return None;
    }
    let mut bytes = tx_bytes_delta;
    let mut interval = interval_ns;
    // Halving both keeps the ratio; at most 64 rounds each, and only for
    // absurd deltas (> 2.3 TB per sample) or intervals (> 58 years at 100G).
    while bytes.checked_mul(SCALE).is_none() {
        bytes = bytes.checked_shr(1).unwrap_or(0);
        interval = interval.checked_shr(1).unwrap_or(0);
    }
    let mut num = bytes.saturating_mul(SCALE);
    while interval.checked_mul(u64::from(link_speed_mbps)).is_none() {
        interval = interval.checked_shr(1).unwrap_or(0);
        num = num.checked_shr(1).unwrap_or(0);
    }
    let den = interval.saturating_mul(u64::from(link_speed_mbps));
    let util = match num.checked_div(den) {
        Some(u) => u,
        // The interval was scaled to zero by a huge byte count: link is full.
        None => u64::from(FULL_PERMILLE),
    };
    Some(if util > u64::from(FULL_PERMILLE) {
        FULL_PERMILLE
    } else {
        util as u16
    })
}

/// Folds a new utilisation sample into the running value (EWMA, alpha = 1/2),
/// so one bursty interval moves the weight only half way.
pub const fn smooth_utilisation(old: u16, sample: u16) -> u16 {
    ((old as u32 + sample as u32 + 1) / 2) as u16
}

/// Smooth weighted round robin over up to [`MAX_MEMBERS`] members.
#[derive(Clone, Copy, Debug)]
pub struct SmoothWrr {
    weight: [u32; MAX_MEMBERS],
    current: [i64; MAX_MEMBERS],
    /// Sum of `weight` over `eligible`; kept current so a pick is one pass.
    total: i64,
    active: MemberMask,
    /// `active` minus zero-weight members, which must never win a tie.
    eligible: MemberMask,
}

impl Default for SmoothWrr {
    fn default() -> Self {
        Self::new()
    }
}

impl SmoothWrr {
    /// All weights zero, no member active.
    pub const fn new() -> Self {
        SmoothWrr {
            weight: [0; MAX_MEMBERS],
            current: [0; MAX_MEMBERS],
            total: 0,
            active: MemberMask::EMPTY,
            eligible: MemberMask::EMPTY,
        }
    }

    /// Sets a member's effective weight. Running state is kept: nginx's
    /// invariant (the sum of `current` over eligible members is zero) survives
    /// weight changes, so shares follow the new weights from the next pick on.
    pub fn set_weight(&mut self, m: MemberIndex, weight: u32) {
        if let Some(w) = self.weight.get_mut(m.get()) {
            *w = weight;
        }
        self.recompute();
    }

    /// Sets which members may be picked. A change of the set starts a fresh
    /// round, because leftover `current` of a departed member would skew the
    /// survivors' shares.
    pub fn set_active(&mut self, active: MemberMask) {
        if active != self.active {
            self.active = active;
            self.reset();
            self.recompute();
        }
    }

    /// Forgets the running state (fresh round).
    pub fn reset(&mut self) {
        self.current = [0; MAX_MEMBERS];
    }

    /// A member's effective weight.
    pub fn weight(&self, m: MemberIndex) -> u32 {
        self.weight.get(m.get()).copied().unwrap_or(0)
    }

    /// Sum of the eligible members' weights (the length of a round, before
    /// dividing by the weights' gcd).
    pub const fn total(&self) -> i64 {
        self.total
    }

    /// Members that can currently win (active with non-zero weight).
    pub const fn eligible(&self) -> MemberMask {
        self.eligible
    }

    fn recompute(&mut self) {
        let mut total: i64 = 0;
        let mut eligible = MemberMask::EMPTY;
        for m in self.active.iter() {
            let w = self.weight(m);
            if w != 0 {
                total = total.saturating_add(i64::from(w));
                eligible = eligible.with(m);
            }
        }
        if eligible != self.eligible {
            // A zero-weight member leaving or joining changes the round too.
            self.reset();
        }
        self.total = total;
        self.eligible = eligible;
    }

    /// Picks the next member, or `None` when no member is eligible.
    #[inline]
    pub fn pick(&mut self) -> Option<MemberIndex> {
        let mut best = MAX_MEMBERS;
        let mut best_current = i64::MIN;
        let members: MaskIter = self.eligible.iter();
        for m in members {
            let i = m.get();
            if let (Some(c), Some(&w)) = (self.current.get_mut(i), self.weight.get(i)) {
                let v = c.saturating_add(i64::from(w));
                *c = v;
                // Strictly greater: ties go to the lowest index, as in nginx.
                if best == MAX_MEMBERS || v > best_current {
                    best_current = v;
                    best = i;
                }
            }
        }
        let c = self.current.get_mut(best)?;
        *c = c.saturating_sub(self.total);
        MemberIndex::new(best)
    }
}
