// SPDX-License-Identifier: GPL-2.0

//! Failover planning: which QPs to error when members fail, where their
//! replacements should land, and the optional hysteretic rebalance.
//!
//! The caller passes its QP table (`&[QpEntry]`: id, member, load in any unit
//! the module likes, 1 per QP being the simplest) and a [`MemberView`] built
//! from eligibility and the placer. Results go into a caller-provided
//! `&mut [Action]`; nothing is allocated.
//!
//! **Failover** ([`plan_failover`]): every QP on a member that is neither
//! usable nor draining is errored, exactly once. Its replacement target is
//! chosen by water-filling over the usable survivors: the survivor with the
//! lowest `(load + qp_load) / admin_weight` after taking it, ties to the one
//! that received fewer replacements, then the lowest index. The load table is a
//! snapshot, so the planner trusts it only so far: no survivor receives more
//! than `ceil(n * w / W)` of the `n` replacements (its weight share), so with
//! two or more comparable survivors the replacements are never all sent to one.
//! Admin weights are used rather than live headroom because utilisation
//! lags and is caused by the very QPs being moved.
//!
//! **Failback** is not automatic: a recovered member gets new QPs through
//! placement, and existing QPs are never moved back on the recovery event
//! itself (moving a healthy QP means erroring it). A QP appears at most once in
//! one plan.
//!
//! **Rebalance** ([`plan_rebalance`], off by default via
//! [`PlannerConfig::rebalance`]): moves QPs from the most to the least
//! weight-normalised loaded usable member while the imbalance exceeds a
//! hysteresis threshold, at most `max_moves` per call, each only if it does not
//! overshoot (the source stays at least as loaded as the destination). Every
//! such move strictly lowers `sum(load^2 / weight)`, so repeated ticks on an
//! unchanged table converge and can never move QPs back and forth. [`Planner`]
//! adds the timing rules: no rebalance within `settle_ns` of a member change
//! (a member that just recovered must prove stable first) and at most one per
//! `min_interval_ns`.

use super::eligibility::EligibilitySet;
use super::placement::Placer;
use super::{MemberIndex, MemberMask, MAX_MEMBERS};

/// One QP of the caller's table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct QpEntry {
    /// The caller's QP identifier (e.g. vdev QPN).
    pub id: u32,
    /// The member hosting it.
    pub member: MemberIndex,
    /// Its load (1 per QP, or outstanding WQEs, or bytes/s: one unit per table).
    pub load: u32,
}

/// Why an action was planned.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ActionKind {
    /// The QP's member is unusable: error it; its replacement goes to `to`.
    Failover,
    /// Periodic rebalance: error it so its ULP reconnects onto `to`.
    Rebalance,
}

/// One planned action.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Action {
    /// Position of the QP in the table passed in.
    pub qp_index: usize,
    /// The QP's id (copied from the table).
    pub qp_id: u32,
    /// Member hosting it now.
    pub from: MemberIndex,
    /// Member its replacement should land on; `None` when no member is usable.
    pub to: Option<MemberIndex>,
    /// Why.
    pub kind: ActionKind,
}

/// What the planner needs to know about members.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MemberView {
    /// Members that may receive replacements.
    pub usable: MemberMask,
    /// Members whose QPs stay where they are (usable or draining).
    pub keep: MemberMask,
    /// Admin weights; 0 counts as 1 so a usable member is never divided away.
    pub weights: [u32; MAX_MEMBERS],
}

impl MemberView {
    /// A view from explicit sets and weights.
    pub fn new(usable: MemberMask, draining: MemberMask, weights: [u32; MAX_MEMBERS]) -> Self {
        MemberView {
            usable,
            keep: usable.or(draining),
            weights,
        }
    }

    /// The view the module uses: usability from eligibility, weights from the
    /// placer (usable means usable in both).
    pub fn from_state(eligibility: &EligibilitySet, placer: &Placer) -> Self {
        let usable = eligibility.usable_mask().and(placer.present());
        MemberView::new(usable, eligibility.draining_mask(), placer.admin_weights())
    }

    fn weight(&self, m: MemberIndex) -> u64 {
        match self.weights.get(m.get()) {
            Some(&w) if w > 0 => u64::from(w),
            _ => 1,
        }
    }
}

/// Counts from one plan.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PlanSummary {
    /// QPs that must be errored because their member is unusable.
    pub errored: usize,
    /// Of those, how many got a replacement target.
    pub replaced: usize,
    /// QPs moved by rebalance.
    pub rebalanced: usize,
    /// Actions written to the output slice.
    pub written: usize,
    /// The output slice was too small: `written` < actions planned. Failover
    /// actions are never dropped silently; give a slice as long as the table.
    pub truncated: bool,
}

/// Rebalance settings (hysteresis and pacing).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RebalanceConfig {
    /// Act only when the most loaded member carries more than
    /// `1 + threshold/1000` times the least loaded one (weight-normalised).
    pub threshold_permille: u32,
    /// Most QPs moved per call.
    pub max_moves: u32,
    /// Quiet time after a member change before rebalancing.
    pub settle_ns: u64,
    /// Least time between two rebalances.
    pub min_interval_ns: u64,
}

impl RebalanceConfig {
    /// 25 % hysteresis, 8 moves per tick, 10 s settle, 5 s between ticks.
    pub const DEFAULT: RebalanceConfig = RebalanceConfig {
        threshold_permille: 250,
        max_moves: 8,
        settle_ns: 10_000_000_000,
        min_interval_ns: 5_000_000_000,
    };
}

/// Planner settings.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PlannerConfig {
    /// Periodic rebalance; `None` (the default) disables it.
    pub rebalance: Option<RebalanceConfig>,
}

/// Per-member load of the QPs that stay put.
fn staying_loads(view: &MemberView, qps: &[QpEntry]) -> ([u64; MAX_MEMBERS], usize) {
    let mut loads = [0u64; MAX_MEMBERS];
    let mut failed = 0usize;
    for q in qps {
        if view.keep.contains(q.member) {
            if let Some(l) = loads.get_mut(q.member.get()) {
                *l = l.saturating_add(u64::from(q.load));
            }
        } else {
            failed = failed.saturating_add(1);
        }
    }
    (loads, failed)
}

fn load_of(loads: &[u64; MAX_MEMBERS], m: MemberIndex) -> u64 {
    loads.get(m.get()).copied().unwrap_or(0)
}

fn add_load(loads: &mut [u64; MAX_MEMBERS], m: MemberIndex, delta: u64) {
    if let Some(l) = loads.get_mut(m.get()) {
        *l = l.saturating_add(delta);
    }
}

fn sub_load(loads: &mut [u64; MAX_MEMBERS], m: MemberIndex, delta: u64) {
    if let Some(l) = loads.get_mut(m.get()) {
        *l = l.saturating_sub(delta);
    }
}

/// `a / wa < b / wb`, without division.
fn ratio_lt(a: u64, wa: u64, b: u64, wb: u64) -> bool {
    a.saturating_mul(wb) < b.saturating_mul(wa)
}

/// Errors every QP on a member outside `view.keep` and assigns each a
/// replacement target (module docs). Actions follow table order.
pub fn plan_failover(view: &MemberView, qps: &[QpEntry], out: &mut [Action]) -> PlanSummary {
    let mut sum = PlanSummary::default();
    let (mut loads, failed) = staying_loads(view, qps);
    if failed == 0 {
        return sum;
    }
    let survivors = view.usable;
    let mut total_w: u64 = 0;
    for s in survivors.iter() {
        total_w = total_w.saturating_add(view.weight(s));
    }
    let n = failed as u64;
    let mut cap = [0u64; MAX_MEMBERS];
    for s in survivors.iter() {
        // ceil(n * w / W); W > 0 whenever there is a survivor.
        let share = n
            .saturating_mul(view.weight(s))
            .saturating_add(total_w.saturating_sub(1))
            .checked_div(total_w)
            .unwrap_or(n);
        if let Some(c) = cap.get_mut(s.get()) {
            *c = share;
        }
    }
    let mut got = [0u64; MAX_MEMBERS];

    // Index loops instead of `enumerate()`: its counter increment inherits
    // the caller's overflow checks and can leave a panic path in the kernel
    // object, while a range over `0..len` cannot overflow.
    for i in 0..qps.len() {
        let Some(q) = qps.get(i) else { break };
        if view.keep.contains(q.member) {
            continue;
        }
        let l = u64::from(q.load);
        let mut best: Option<MemberIndex> = None;
        for s in survivors.iter() {
            let g = got.get(s.get()).copied().unwrap_or(0);
            if g >= cap.get(s.get()).copied().unwrap_or(0) {
                continue;
            }
            let better = match best {
                None => true,
                Some(b) => {
                    let (a_s, w_s) = (load_of(&loads, s).saturating_add(l), view.weight(s));
                    let (a_b, w_b) = (load_of(&loads, b).saturating_add(l), view.weight(b));
                    if ratio_lt(a_s, w_s, a_b, w_b) {
                        true
                    } else if ratio_lt(a_b, w_b, a_s, w_s) {
                        false
                    } else {
                        g < got.get(b.get()).copied().unwrap_or(0)
                    }
                }
            };
            if better {
                best = Some(s);
            }
        }
        if let Some(t) = best {
            add_load(&mut loads, t, l);
            if let Some(g) = got.get_mut(t.get()) {
                *g = g.saturating_add(1);
            }
            sum.replaced = sum.replaced.saturating_add(1);
        }
        sum.errored = sum.errored.saturating_add(1);
        let action = Action {
            qp_index: i,
            qp_id: q.id,
            from: q.member,
            to: best,
            kind: ActionKind::Failover,
        };
        match out.get_mut(sum.written) {
            Some(slot) => {
                *slot = action;
                sum.written = sum.written.saturating_add(1);
            }
            None => sum.truncated = true,
        }
    }
    sum
}

/// Plans up to `cfg.max_moves` hysteretic moves between usable members
/// (module docs). QPs on draining or unusable members are not touched; run
/// [`plan_failover`] first when members failed.
pub fn plan_rebalance(
    view: &MemberView,
    cfg: &RebalanceConfig,
    qps: &[QpEntry],
    out: &mut [Action],
) -> PlanSummary {
    let mut sum = PlanSummary::default();
    let (mut loads, _) = staying_loads(view, qps);
    let usable = view.usable;
    if usable.count() < 2 {
        return sum;
    }
    let mut moves: u32 = 0;
    while moves < cfg.max_moves {
        let (mut src, mut dst) = match usable.first() {
            Some(f) => (f, f),
            None => break,
        };
        for m in usable.iter() {
            let (lm, wm) = (load_of(&loads, m), view.weight(m));
            if ratio_lt(load_of(&loads, src), view.weight(src), lm, wm) {
                src = m;
            }
            if ratio_lt(lm, wm, load_of(&loads, dst), view.weight(dst)) {
                dst = m;
            }
        }
        let (ls, ws) = (load_of(&loads, src), view.weight(src));
        let (ld, wd) = (load_of(&loads, dst), view.weight(dst));
        // Hysteresis: ls/ws > (ld/wd) * (1 + threshold/1000).
        let lhs = ls.saturating_mul(wd).saturating_mul(1000);
        let rhs = ld
            .saturating_mul(ws)
            .saturating_mul(u64::from(cfg.threshold_permille).saturating_add(1000));
        if src == dst || lhs <= rhs {
            break;
        }
        let mut pick: Option<(usize, &QpEntry)> = None;
        for i in 0..qps.len() {
            let Some(q) = qps.get(i) else { break };
            if q.member != src || q.load == 0 {
                continue;
            }
            let l = u64::from(q.load);
            // No overshoot: (ls - l)/ws >= (ld + l)/wd.
            if ls < l || ratio_lt(ls.saturating_sub(l), ws, ld.saturating_add(l), wd) {
                continue;
            }
            let already = out
                .get(..sum.written)
                .is_some_and(|done| done.iter().any(|a| a.qp_index == i));
            if !already {
                pick = Some((i, q));
                break;
            }
        }
        let Some((i, q)) = pick else { break };
        let Some(slot) = out.get_mut(sum.written) else {
            sum.truncated = true;
            break;
        };
        *slot = Action {
            qp_index: i,
            qp_id: q.id,
            from: src,
            to: Some(dst),
            kind: ActionKind::Rebalance,
        };
        sum.written = sum.written.saturating_add(1);
        sum.rebalanced = sum.rebalanced.saturating_add(1);
        sub_load(&mut loads, src, u64::from(q.load));
        add_load(&mut loads, dst, u64::from(q.load));
        moves = moves.saturating_add(1);
    }
    sum
}

/// Failover and rebalance with their timing rules (module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Planner {
    config: PlannerConfig,
    last_change_ns: Option<u64>,
    last_rebalance_ns: Option<u64>,
}

impl Planner {
    /// A planner with the given settings.
    pub const fn new(config: PlannerConfig) -> Self {
        Planner {
            config,
            last_change_ns: None,
            last_rebalance_ns: None,
        }
    }

    /// The settings in force.
    pub const fn config(&self) -> PlannerConfig {
        self.config
    }

    /// Changes the settings.
    pub fn set_config(&mut self, config: PlannerConfig) {
        self.config = config;
    }

    /// A member's usability changed at `now`: plan the failover. Failback is
    /// never planned here (module docs).
    pub fn on_member_change(
        &mut self,
        view: &MemberView,
        qps: &[QpEntry],
        out: &mut [Action],
        now: u64,
    ) -> PlanSummary {
        self.last_change_ns = Some(now);
        plan_failover(view, qps, out)
    }

    /// Periodic tick: rebalance if enabled, settled and not too soon.
    pub fn on_tick(
        &mut self,
        view: &MemberView,
        qps: &[QpEntry],
        out: &mut [Action],
        now: u64,
    ) -> PlanSummary {
        let Some(cfg) = self.config.rebalance else {
            return PlanSummary::default();
        };
        if let Some(t) = self.last_change_ns {
            if now < t.saturating_add(cfg.settle_ns) {
                return PlanSummary::default();
            }
        }
        if let Some(t) = self.last_rebalance_ns {
            if now < t.saturating_add(cfg.min_interval_ns) {
                return PlanSummary::default();
            }
        }
        let sum = plan_rebalance(view, &cfg, qps, out);
        if sum.rebalanced > 0 {
            self.last_rebalance_ns = Some(now);
        }
        sum
    }
}
