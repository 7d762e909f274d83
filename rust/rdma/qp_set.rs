// SPDX-License-Identifier: GPL-2.0

//! The live RC QPs of a device ([`QpPaths`]), for what a member's failure
//! or departure does to the QPs on it: they enter ERR, the connection
//! exchange in flight for each ends, and their consumers get
//! `IB_EVENT_QP_FATAL`; a departure also destroys their member QPs and
//! completes every WR left with a flush.
//!
//! A member QP is destroyed only by [`detach_member`] or by `destroy_qp`
//! after its path has left the set ([`QpPath::end`]), both under the set's
//! lock: a walk of the set may use the member QPs it finds.

use core::ptr::null_mut;

use kernel::prelude::*;

use super::{
    bindings,
    qp_path::{MemberCounters, QpPath},
    set::ObjectSet,
};

/// The data paths of a device's RC QPs; lock "mrbond:qps", inside the
/// device's objects lock. A walk takes a path's "mrbond:qp" and the member
/// device's verbs inside it.
pub(crate) type QpPaths = ObjectSet<QpPath>;

/// Member `slot` turned unusable: each of its QPs not yet reported either
/// moves to another member (`try_move`, transparent failover: true if its
/// move began) or enters ERR on the member, which flushes its outstanding
/// WRs through the member CQs (translated by the polls as any completion),
/// and is reported fatal. How many QPs. May sleep.
///
/// # Safety
///
/// The caller must hold the device's objects lock ([`QpPath::abort_cm`]).
pub(crate) unsafe fn fail_member(
    paths: &QpPaths,
    slot: usize,
    mut try_move: impl FnMut(&QpPath) -> bool,
) -> u32 {
    let mut moved = 0u32;
    paths.for_each(|path| {
        if path.slot() != slot || path.failed() {
            return;
        }
        if try_move(path) {
            moved = moved.saturating_add(1);
            return;
        }
        let Some(mqp) = path.member_qp() else {
            return;
        };
        let mut attr = bindings::ib_qp_attr {
            qp_state: bindings::ib_qp_state_IB_QPS_ERR,
            ..Default::default()
        };
        // SAFETY: the member QP of a path in the set is live while the
        // set's lock is held (see the module's documentation).
        let ret = unsafe {
            bindings::ib_modify_qp(
                mqp.as_ptr(),
                &mut attr,
                bindings::ib_qp_attr_mask_IB_QP_STATE as i32,
            )
        };
        if ret != 0 {
            pr_warn!(
                "QP {} did not enter ERR on member {}: {}\n",
                path.qp_num(),
                slot,
                ret
            );
        }
        let was = path.enter_error();
        // SAFETY: the caller holds the objects lock.
        unsafe { path.abort_cm(was) };
        path.report_fatal();
        moved = moved.saturating_add(1);
    });
    moved
}

/// Member `slot` is going away: each of its QPs enters ERR and loses its
/// member QP, destroyed here; the WRs left, with any posted meanwhile,
/// complete with a flush through the QP's CQs, which the caller kicks
/// before it reports the QPs fatal ([`report_fatal`]). `window` runs before
/// each member QP's destruction (fault injection). How many member QPs
/// were destroyed. May sleep.
///
/// # Safety
///
/// The caller must hold the device's objects lock ([`QpPath::abort_cm`]),
/// and have unhooked the member's CQs from every poll.
pub(crate) unsafe fn detach_member(
    paths: &QpPaths,
    counters: &MemberCounters,
    slot: usize,
    window: impl Fn(),
) -> u32 {
    let mut destroyed = 0u32;
    paths.for_each(|path| {
        if let Some((next, _)) = path.take_next_on(slot) {
            // A move's new member QP, unused: the move gives up later.
            // SAFETY: the path gave it up; no post reaches it.
            unsafe { bindings::ib_destroy_qp_user(next.as_ptr(), null_mut()) };
            counters.add_qps(-1);
        }
        if path.slot() != slot {
            return;
        }
        // Posts arriving now queue behind the member's WRs.
        let mqp = path.detach();
        let was = path.enter_error();
        // SAFETY: the caller holds the objects lock.
        unsafe { path.abort_cm(was) };
        let Some(mqp) = mqp else {
            return;
        };
        window();
        // SAFETY: the path gave the member QP up, no post reaches it, and
        // no poll reads its CQs (the caller unhooked them); nothing else
        // destroys it. `ib_destroy_qp()` is this call with no user data.
        unsafe { bindings::ib_destroy_qp_user(mqp.as_ptr(), null_mut()) };
        counters.add_qps(-1);
        path.flush_detached(counters);
        destroyed = destroyed.saturating_add(1);
    });
    destroyed
}

/// The consumers of member `slot`'s QPs learn that they are dead, after
/// the flushes queued before.
pub(crate) fn report_fatal(paths: &QpPaths, slot: usize) {
    paths.for_each(|path| {
        if path.slot() == slot {
            path.report_fatal();
        }
    });
}
