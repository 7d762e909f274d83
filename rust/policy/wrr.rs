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
//! The state is nginx's: each member has a `current`; a pick adds every
//! eligible member's weight to its `current` and subtracts the total weight
//! `S` from the winner, so after `k` picks `current_i = k * w_i - count_i * S`
//! (the member's lag behind its ideal share, times `S`), and the currents
//! always sum to zero. Like nginx, weight changes keep the currents, so a
//! utilisation update bends the shares without restarting the rotation.
//!
//! The winner is not nginx's largest `current`, though: nginx keeps exact
//! shares per round but can drift more than one pick from `k * w_i / S` inside
//! a round (1.6 picks measured with 13 members of weights 1..1000). Instead
//! this is Pfair scheduling on one server: member `i`'s `j`-th pick is
//! released at slot `floor((j - 1) * S / w_i)` and due by `ceil(j * S / w_i)`,
//! and the earliest deadline among released members wins (lowest index on
//! ties). EDF is optimal for unit jobs on one server and Pfair windows are
//! feasible when the weights add up to `S`, so every member stays strictly
//! within one pick of its ideal share after every prefix, and a full round of
//! `S / gcd(w)` picks is exact. In terms of nginx's state, "released" is
//! `current + w > 0` and the deadline orders `(S - current - w) / w`.
//!
//! The release and deadline of each member's next pick are kept as integers
//! and advanced Bresenham-style (quotient and remainder of `N / w`, where
//! `N = S - current` at the last re-origin plus `S` per pick of that member),
//! so a pick is one compare-and-select per member and O(1) to update the
//! winner, with no multiply or divide. Weight changes convert the state back to
//! currents and re-origin it (a few divisions, off the hot path).

use super::{MemberIndex, MemberMask, MAX_MEMBERS};

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
/// Headroom of an idle member: the floor plus the full scale (1400).
pub const HEADROOM_SCALE: u32 = 1400;

/// Effective WRR weight from admin weight and utilisation (module docs).
pub const fn effective_weight(admin_weight: u16, util_permille: u16) -> u32 {
    let util = if util_permille > FULL_PERMILLE {
        FULL_PERMILLE
    } else {
        util_permille
    };
    // util <= 1000, so the headroom never drops below the floor.
    let headroom = HEADROOM_SCALE.saturating_sub(util as u32);
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
    (old as u32).saturating_add(sample as u32).div_ceil(2) as u16
}

/// Bias that makes every selection key non-negative.
const KEY_BIAS: i64 = 1 << 58;

/// Selection key of a deadline: `(deadline + 2^58) * 16 + index`, so one
/// integer minimum finds the earliest deadline and, on ties, the lowest
/// index. Deadlines stay well inside +-2^57: currents are bounded by the
/// member count times the total weight (< 2^41 for u32 weights) and the state
/// is re-origined every 2^32 picks, so the key is non-negative and below
/// `i64::MAX`.
#[inline(always)]
fn deadline_key(deadline: i64, index: usize) -> i64 {
    deadline.wrapping_add(KEY_BIAS).wrapping_shl(4) | (index & (MAX_MEMBERS - 1)) as i64
}

/// `floor(n / d)` and `n - d * floor(n / d)` for `d > 0`. Hand-written
/// instead of `div_euclid`: core's version carries an overflow-check panic
/// path when core itself is built with overflow checks, as in the kernel.
fn floor_divmod(n: i64, d: i64) -> (i64, i64) {
    let q = n.checked_div(d).unwrap_or(0);
    let r = n.checked_rem(d).unwrap_or(0);
    if r < 0 {
        (q.saturating_sub(1), r.saturating_add(d))
    } else {
        (q, r)
    }
}

/// Picks after which the slot counter is re-origined, keeping every
/// integer in the state far from overflow.
const REBASE_AT: i64 = 1 << 32;

/// Smooth weighted round robin over up to [`MAX_MEMBERS`] members (module
/// docs: nginx's state, Pfair earliest-deadline selection).
#[derive(Clone, Copy, Debug)]
pub struct SmoothWrr {
    weight: [i64; MAX_MEMBERS],
    /// `N / w` as quotient and remainder (`0 <= rem < w`).
    quo: [i64; MAX_MEMBERS],
    rem: [i64; MAX_MEMBERS],
    /// Slot from which the member's next pick may happen.
    release: [i64; MAX_MEMBERS],
    /// Slot by which the member's next pick is due, as the selection key
    /// `deadline * 16 + index` (see `pick`); `i64::MAX` when not eligible.
    deadline: [i64; MAX_MEMBERS],
    /// `S / w` and `S % w`: how far a pick moves the member's window.
    step_quo: [i64; MAX_MEMBERS],
    step_rem: [i64; MAX_MEMBERS],
    /// Picks since the last re-origin.
    slot: i64,
    /// Sum of `weight` over `eligible` (`S`).
    total: i64,
    active: MemberMask,
    /// `active` minus zero-weight members.
    eligible: MemberMask,
}

impl Default for SmoothWrr {
    fn default() -> Self {
        Self::new()
    }
}

/// Table index of a member, masked so the compiler can drop bounds checks
/// (`MemberIndex` is always below `MAX_MEMBERS`, a power of two).
#[inline(always)]
const fn ix(m: MemberIndex) -> usize {
    m.get() & (MAX_MEMBERS - 1)
}

impl SmoothWrr {
    /// All weights zero, no member active.
    pub const fn new() -> Self {
        SmoothWrr {
            weight: [0; MAX_MEMBERS],
            quo: [0; MAX_MEMBERS],
            rem: [0; MAX_MEMBERS],
            release: [i64::MAX; MAX_MEMBERS],
            deadline: [i64::MAX; MAX_MEMBERS],
            step_quo: [0; MAX_MEMBERS],
            step_rem: [0; MAX_MEMBERS],
            slot: 0,
            total: 0,
            active: MemberMask::EMPTY,
            eligible: MemberMask::EMPTY,
        }
    }

    /// Sets a member's effective weight. The members' currents are kept
    /// (nginx's behaviour), so shares follow the new weights from the next
    /// pick on; if the set of members with non-zero weight changes, a fresh
    /// round starts instead.
    pub fn set_weight(&mut self, m: MemberIndex, weight: u32) {
        let currents = self.currents();
        if let Some(w) = self.weight.get_mut(ix(m)) {
            *w = i64::from(weight);
        }
        if self.recompute() {
            self.load_currents(&[0; MAX_MEMBERS]);
        } else {
            self.load_currents(&currents);
        }
    }

    /// Sets which members may be picked. A change of the set starts a fresh
    /// round, because leftover lag of a departed member would skew the
    /// survivors' shares.
    pub fn set_active(&mut self, active: MemberMask) {
        if active != self.active {
            self.active = active;
            self.recompute();
            self.reset();
        }
    }

    /// Forgets the running state (fresh round).
    pub fn reset(&mut self) {
        self.load_currents(&[0; MAX_MEMBERS]);
    }

    /// A member's effective weight.
    pub fn weight(&self, m: MemberIndex) -> u32 {
        self.weight
            .get(ix(m))
            .map_or(0, |&w| u32::try_from(w).unwrap_or(u32::MAX))
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

    /// nginx's `current` of a member: its lag behind the ideal share, times
    /// the total weight (0 for members that are not eligible).
    pub fn current(&self, m: MemberIndex) -> i64 {
        self.currents().get(ix(m)).copied().unwrap_or(0)
    }

    /// Recomputes `total` and `eligible`; returns whether `eligible` changed.
    fn recompute(&mut self) -> bool {
        let mut total: i64 = 0;
        let mut eligible = MemberMask::EMPTY;
        for m in self.active.iter() {
            let w = self.weight.get(ix(m)).copied().unwrap_or(0);
            if w > 0 {
                total = total.saturating_add(w);
                eligible = eligible.with(m);
            }
        }
        let changed = eligible != self.eligible;
        self.total = total;
        self.eligible = eligible;
        changed
    }

    /// Currents implied by the window state: `c = S + slot * w - N` with
    /// `N = quo * w + rem`.
    fn currents(&self) -> [i64; MAX_MEMBERS] {
        let mut c = [0i64; MAX_MEMBERS];
        for m in self.eligible.iter() {
            let i = ix(m);
            let (Some(&w), Some(&q), Some(&r)) =
                (self.weight.get(i), self.quo.get(i), self.rem.get(i))
            else {
                continue;
            };
            let n = q.saturating_mul(w).saturating_add(r);
            if let Some(ci) = c.get_mut(i) {
                *ci = self
                    .total
                    .saturating_add(self.slot.saturating_mul(w))
                    .saturating_sub(n);
            }
        }
        c
    }

    /// Re-origins the window state at slot 0 from currents (weights, `total`
    /// and `eligible` already set).
    fn load_currents(&mut self, c: &[i64; MAX_MEMBERS]) {
        let s = self.total;
        self.slot = 0;
        for i in 0..MAX_MEMBERS {
            let w = self.weight.get(i).copied().unwrap_or(0);
            let on = MemberIndex::new(i).is_some_and(|m| self.eligible.contains(m)) && w > 0;
            let ci = c.get(i).copied().unwrap_or(0);
            let n = s.saturating_sub(ci);
            let (q, r, rel, sq, sr) = if on {
                let (q, r) = floor_divmod(n, w);
                let (rel, _) = floor_divmod(n.saturating_sub(s), w);
                (
                    q,
                    r,
                    rel,
                    s.checked_div(w).unwrap_or(0),
                    s.checked_rem(w).unwrap_or(0),
                )
            } else {
                (0, 0, i64::MAX, 0, 0)
            };
            let dl = if on {
                deadline_key(q.saturating_add(i64::from(r > 0)), i)
            } else {
                i64::MAX
            };
            if let (Some(qq), Some(rr), Some(re), Some(d), Some(a), Some(b)) = (
                self.quo.get_mut(i),
                self.rem.get_mut(i),
                self.release.get_mut(i),
                self.deadline.get_mut(i),
                self.step_quo.get_mut(i),
                self.step_rem.get_mut(i),
            ) {
                *qq = q;
                *rr = r;
                *re = rel;
                *d = dl;
                *a = sq;
                *b = sr;
            }
        }
    }

    /// Selection keys of the first `N` slots at `slot`: the deadline key of
    /// released members, `i64::MAX` for the others.
    #[inline(always)]
    fn keys<const N: usize>(&self, slot: i64) -> [i64; N] {
        let mut keys = [i64::MAX; N];
        // An index loop: nested `zip` keeps an overflow-check panic path of
        // core's in the object when core is built with overflow checks.
        for i in 0..N {
            if let (Some(k), Some(&r), Some(&d)) =
                (keys.get_mut(i), self.release.get(i), self.deadline.get(i))
            {
                // Branch-free select: all ones when not released yet. Real
                // releases and `slot` are small and `slot - i64::MAX` is
                // negative, so the subtraction never wraps.
                let not_released = slot.wrapping_sub(r).wrapping_shr(63);
                // Keys are non-negative (biased), so OR-ing in i64::MAX
                // gives i64::MAX. Plain bit operations rather than a select:
                // LLVM turns a select on a loaded value into a branch.
                *k = d | (not_released & i64::MAX);
            }
        }
        keys
    }

    /// Picks the next member, or `None` when no member is eligible.
    #[inline]
    pub fn pick(&mut self) -> Option<MemberIndex> {
        let slot = self.slot;
        // The minimum key is the earliest deadline among released members,
        // lowest index on ties. Every slot of the table is scanned (members
        // that cannot win have release = i64::MAX) because a fixed trip
        // count unrolls into straight-line code with no data-dependent
        // branch; only the first 8 slots when no higher member is eligible,
        // a branch that is predictable because membership rarely changes.
        let best_key = if self.eligible.bits() <= 0xff {
            super::min_of_8(self.keys::<8>(slot))
        } else {
            super::min_of_all(self.keys::<MAX_MEMBERS>(slot))
        };
        let best = if best_key == i64::MAX {
            // The currents sum to zero, so some member is always released;
            // this only guards the type system's view.
            ix(self.eligible.first()?)
        } else {
            (best_key & 0xf) as usize
        };
        // Advance the winner's window by S / w: N += S.
        if let (Some(q), Some(r), Some(rel), Some(dl), Some(&w), Some(&sq), Some(&sr)) = (
            self.quo.get_mut(best),
            self.rem.get_mut(best),
            self.release.get_mut(best),
            self.deadline.get_mut(best),
            self.weight.get(best),
            self.step_quo.get(best),
            self.step_rem.get(best),
        ) {
            // Values stay below 2^33 + S between re-origins, so plain
            // wrapping arithmetic never wraps.
            *rel = *q;
            let mut nr = r.wrapping_add(sr);
            let mut nq = q.wrapping_add(sq);
            if nr >= w {
                nr = nr.wrapping_sub(w);
                nq = nq.wrapping_add(1);
            }
            *q = nq;
            *r = nr;
            *dl = deadline_key(nq.wrapping_add(i64::from(nr > 0)), best);
        }
        self.slot = slot.wrapping_add(1);
        if self.slot >= REBASE_AT {
            self.rebase();
        }
        MemberIndex::new(best)
    }

    /// Re-origins the window state at slot 0 without changing any decision
    /// (done every 2^32 picks; public so tests can exercise it).
    pub fn rebase(&mut self) {
        let c = self.currents();
        self.load_currents(&c);
    }
}
