// SPDX-License-Identifier: GPL-2.0

//! Transparent failover's moves (issue 17): a capable connection's
//! [`crate::policy::tfo_session::Session`] decides, this module does its
//! actions and feeds back what became of them. Everything runs under the
//! device's objects lock, in process context, which none of it drops (a
//! path it holds stays live): a member's failure ([`rail_failed`]), a
//! message from the peer ([`received`], in ib_mad's work), and the
//! device's move work ([`run`]) once a path's old member QP is drained.
//!
//! The device's move tick ([`tick`]) retransmits and ends moves past
//! their deadline. A QP that named a member's memory key does not move yet
//! (`QpPath::movable`): it takes today's flush path, its peer told.

use kernel::{prelude::*, types::ForeignOwnable};

use super::{
    cm::CmRecord,
    device::{Adapter, Device, DeviceOps, ObjectsGuard},
    qp::{self, member_qp_to_error},
    qp_path::{Posting, QpPath},
    tfo_channel,
};
use crate::{
    ffi::now_ns,
    policy::{
        resume::{plan_resume, Fate, SendOp},
        tfo_session::{Action, Actions, Msg, RailSet, State},
        MAX_MEMBERS,
    },
};

/// The most unresolved sends a replay plans at once: a move of a QP with
/// more in flight takes the flush path.
const MAX_UNRESOLVED: usize = 256;

/// What the actions of one QP's move need.
struct Ctx<'a, 'd, 'g, T: DeviceOps> {
    dev: &'a Device,
    data: &'a <T::Data as ForeignOwnable>::Borrowed<'d>,
    objects: &'a mut ObjectsGuard<'g>,
    path: &'a QpPath,
    record: &'a CmRecord,
}

/// The rails usable at both ends: ours whose port is active, among those
/// the peer named.
fn usable(objects: &ObjectsGuard<'_>, record: &CmRecord) -> RailSet {
    let theirs = record.peer_rails();
    let mut set: RailSet = 0;
    for slot in 0..MAX_MEMBERS {
        let Ok(rail) = u8::try_from(slot) else {
            break;
        };
        let up = objects
            .member(slot)
            .is_some_and(|(m, port)| m.port_active(port));
        if up && theirs.get(rail).is_some() {
            set |= 1u32.checked_shl(u32::from(rail)).unwrap_or(0);
        }
    }
    set
}

/// Member `slot` failed under `path`: if its connection can move, the
/// move begins and the caller leaves the QP alone; false for today's
/// flush path.
pub(crate) fn rail_failed<T: DeviceOps>(
    dev: &Device,
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    objects: &mut ObjectsGuard<'_>,
    path: &QpPath,
    slot: usize,
) -> bool {
    let record = path.record();
    let mut ctx = Ctx::<T> {
        dev,
        data,
        objects,
        path,
        record,
    };
    start(&mut ctx, slot)
}

/// The session of `ctx`'s QP learns that the rail of member `slot`
/// failed: true if a move began; else it took the flush path, the peer
/// told, and the caller flushes the QP.
fn start<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>, slot: usize) -> bool {
    let Ok(rail) = u8::try_from(slot) else {
        return false;
    };
    let set = usable(ctx.objects, ctx.record);
    let now = now_ns();
    if ctx.record.moving() {
        // A move is on (its poll saw the failure first): it goes on, or,
        // if this is its new rail, gives up itself. Either way it is the
        // move's, not the caller's.
        if let Some(actions) = ctx.record.session_step(|s| s.rail_failed(rail, set, now)) {
            execute(ctx, actions);
        }
        return true;
    }
    let movable = ctx.path.movable();
    let Some(actions) = ctx.record.session_step(|s| {
        if movable {
            s.rail_failed(rail, set, now)
        } else {
            // The peer names the old member's rkeys, or we its: give up
            // (the peer is told) before anything is held.
            s.replay_failed()
        }
    }) else {
        return false;
    };
    let moving = !actions.iter().any(|a| a == Action::Flush) && !actions.is_empty();
    if moving {
        execute(ctx, actions);
    } else {
        // The caller takes the flush path itself: only the peer is told.
        for a in actions.iter() {
            if let Action::Send(msg) = a {
                send(ctx, msg);
            }
        }
        if actions.iter().any(|a| a == Action::Flush) {
            T::gsi_members(ctx.data)
                .channel_counters()
                .count_move(false);
            ctx.path.forbid_moves();
        }
    }
    moving
}

/// The peer's message `msg` about the connection `record` keeps.
pub(crate) fn received<T: DeviceOps>(
    dev: &Device,
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    objects: &mut ObjectsGuard<'_>,
    record: &CmRecord,
    msg: Msg,
) {
    let Some(path) = qp::path_of(record) else {
        return;
    };
    let set = usable(objects, record);
    let now = now_ns();
    let movable = path.movable();
    let Some(actions) = record.session_step(|s| {
        let actions = s.receive(msg, set, now);
        if !movable && actions.iter().any(|a| a == Action::Drain) {
            // Cannot move (see `rail_failed`): the move is given up
            // before it begins here.
            return s.replay_failed();
        }
        actions
    }) else {
        return;
    };
    let mut ctx = Ctx::<T> {
        dev,
        data,
        objects,
        path,
        record,
    };
    execute(&mut ctx, actions);
}

/// The device's move work: the paths whose old member QP is drained go
/// on with their moves.
pub(crate) fn run<T: DeviceOps>(dev: &Device) {
    // SAFETY: the device's table is `T`'s; its data is there until its
    // `.dealloc_driver`, which drains the queue this work runs on.
    let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
        return;
    };
    let mut objects = dev.lock_objects();
    T::qp_paths(&data).for_each(|path| {
        if !path.take_move_pending() {
            return;
        }
        let record = path.record();
        let mut ctx = Ctx::<T> {
            dev,
            data: &data,
            objects: &mut objects,
            path,
            record,
        };
        if path.is_moving() && !record.moving() {
            // The member QP failed in a poll: the session learns it now.
            if !start(&mut ctx, path.slot()) {
                // Counted, and the peer told, by `start`.
                flush_qp(&mut ctx);
                return;
            }
        }
        if let Some(rx) = path.take_drained() {
            let now = now_ns();
            if let Some(actions) = record.session_step(|s| s.drained(rx, now)) {
                execute(&mut ctx, actions);
            }
        }
    });
}

/// Between two ticks of the device's moves: the session's retransmission
/// period.
const MOVE_TICK_MS: u32 = 20;

/// The device's move tick: each moving session's retransmission or
/// deadline; again in [`MOVE_TICK_MS`] while a move is on.
pub(crate) fn tick<T: DeviceOps>(dev: &Device) {
    // SAFETY: as in `run`.
    let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
        return;
    };
    let mut objects = dev.lock_objects();
    let mut again = false;
    T::qp_paths(&data).for_each(|path| {
        let record = path.record();
        let now = now_ns();
        let Some(actions) = record.session_step(|s| s.tick(now)) else {
            return;
        };
        let mut ctx = Ctx::<T> {
            dev,
            data: &data,
            objects: &mut objects,
            path,
            record,
        };
        execute(&mut ctx, actions);
        again |= record.moving();
    });
    drop(objects);
    if again {
        dev.queue_move_tick(MOVE_TICK_MS);
    }
}

/// The most actions one step of a move leads to, its own included.
const MAX_STEPS: usize = 16;

fn push(queue: &mut [Option<Action>; MAX_STEPS], tail: &mut usize, a: Action) {
    if let Some(slot) = queue.get_mut(*tail) {
        *slot = Some(a);
        *tail = tail.saturating_add(1);
    }
}

/// Does `actions` in order, and the ones what became of them brings.
fn execute<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>, actions: Actions) {
    let mut queue: [Option<Action>; MAX_STEPS] = [None; MAX_STEPS];
    let (mut head, mut tail) = (0usize, 0usize);
    for a in actions.iter() {
        push(&mut queue, &mut tail, a);
    }
    while let Some(action) = queue.get(head).copied().flatten() {
        head = head.saturating_add(1);
        let next = match action {
            // Begun together, by `QpPath::begin_move`.
            Action::Hold => None,
            Action::Drain => {
                drain(ctx);
                None
            }
            Action::Prepare { rail } => Some(
                match Adapter::<T>::prepare_move(ctx.data, ctx.objects, ctx.path, ctx.record, rail)
                {
                    Ok(endpoint) => {
                        let now = now_ns();
                        ctx.record.session_step(|s| s.prepared(endpoint, now))
                    }
                    Err(e) => {
                        pr_warn!(
                            "QP {}: move: no QP on rail {}: {:?}\n",
                            ctx.record.qpn(),
                            rail,
                            e
                        );
                        ctx.record.session_step(|s| s.replay_failed())
                    }
                },
            ),
            Action::Send(msg) => {
                send(ctx, msg);
                None
            }
            Action::Connect(peer) => {
                if let Err(e) =
                    Adapter::<T>::connect_move(ctx.data, ctx.objects, ctx.path, ctx.record, peer)
                {
                    // The Replay after it, or the Go awaited, ends the move.
                    pr_warn!("QP {}: move: connect failed: {:?}\n", ctx.record.qpn(), e);
                }
                None
            }
            Action::Replay { peer_rx_consumed } => match replay(ctx, peer_rx_consumed) {
                Err(e) => {
                    pr_warn!("QP {}: move: replay refused: {:?}\n", ctx.record.qpn(), e);
                    // The actions after it are skipped.
                    head = tail;
                    Some(ctx.record.session_step(|s| s.replay_failed()))
                }
                Ok(()) => {
                    T::gsi_members(ctx.data).channel_counters().count_move(true);
                    pr_info!(
                        "QP {}: moved to member {}, its consumer none the wiser\n",
                        ctx.record.qpn(),
                        ctx.path.slot()
                    );
                    None
                }
            },
            Action::Flush => {
                flush(ctx);
                None
            }
        };
        if let Some(Some(more)) = next {
            for a in more.iter() {
                push(&mut queue, &mut tail, a);
            }
        }
    }
}

/// Holds the posts and takes the old member QP to ERR; its completions
/// drain into the path ([`run`] goes on once they have).
fn drain<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>) {
    if !ctx.path.begin_move() {
        return;
    }
    ctx.dev.queue_move_tick(MOVE_TICK_MS);
    if let Some(mqp) = ctx.path.member_qp() {
        let _ = member_qp_to_error(mqp);
    }
}

/// Sends `msg` on the rail the connection goes to (a move's new rail, or
/// the one it runs on once moved), or else on the first usable rail but
/// the failed one.
fn send<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>, msg: Msg) {
    let set = usable(ctx.objects, ctx.record);
    let is_usable = |r: u8| set & 1u32.checked_shl(u32::from(r)).unwrap_or(0) != 0;
    let (to, failed) = match ctx.record.session_view().session.map(|s| s.state()) {
        Some(State::Moving(m)) => (m.to, Some(m.from)),
        Some(State::Running { rail, .. }) => (Some(rail), None),
        _ => (None, u8::try_from(ctx.path.slot()).ok()),
    };
    let rail = to.filter(|&r| is_usable(r)).or_else(|| {
        (0u8..32)
            .filter(|&r| is_usable(r))
            .find(|&r| Some(r) != failed)
    });
    let Some(rail) = rail else {
        return;
    };
    if let Err(e) =
        tfo_channel::send_move::<T>(ctx.dev, ctx.data, ctx.objects, ctx.record, rail, msg)
    {
        pr_warn!("QP {}: move message not sent: {:?}\n", ctx.record.qpn(), e);
    }
}

/// Resumes the send ring with the peer's count.
fn replay<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>, peer_rx_consumed: u64) -> Result {
    let mut ops = KVec::from_elem(SendOp::Unresumable, MAX_UNRESOLVED, GFP_KERNEL)?;
    let (n, consumed_before) = ctx.path.unresolved(&mut ops).ok_or(EINVAL)?;
    let ops = ops.get(..n).ok_or(EINVAL)?;
    let mut fates = KVec::from_elem(Fate::Repost, n, GFP_KERNEL)?;
    plan_resume(ops, consumed_before, peer_rx_consumed, &mut fates).map_err(|_| EINVAL)?;
    // A success behind a WR posted again would complete out of order.
    let prefix = fates.iter().take_while(|f| **f == Fate::Succeed).count();
    if fates.iter().skip(prefix).any(|f| *f == Fate::Succeed) {
        return Err(EINVAL);
    }
    let posting = Posting {
        mrs: T::mrs(ctx.data),
        counters: T::path_counters(ctx.data),
    };
    ctx.path.replay(&posting, &fates)
}

/// The consumer moved `path`'s QP to ERR or RESET: a move on ends, the
/// WRs it held complete with a flush as the consumer expects.
pub(crate) fn consumer_ended<T: DeviceOps>(
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    path: &QpPath,
) {
    end_move::<T>(data, path);
}

/// Ends `path`'s move, if one is on: the WRs it held and kept complete
/// with a flush, and the new member QP it made, unused, is destroyed.
fn end_move<T: DeviceOps>(data: &<T::Data as ForeignOwnable>::Borrowed<'_>, path: &QpPath) {
    if let Some(counters) = T::path_counters(data).get(path.slot()) {
        if path.abandon_move(counters) {
            path.kick_cqs();
        }
    }
    if let Some((next, slot)) = path.take_next() {
        qp::destroy_member_qp(next);
        if let Some(c) = T::path_counters(data).get(slot) {
            c.add_qps(-1);
        }
    }
}

/// Today's flush path, for a QP whose move ended: counted.
fn flush<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>) {
    T::gsi_members(ctx.data)
        .channel_counters()
        .count_move(false);
    flush_qp(ctx);
}

/// Today's flush path: the WRs held and unresolved complete with a flush,
/// the member QP is in ERR and the consumer learns the QP is dead.
fn flush_qp<T: DeviceOps>(ctx: &mut Ctx<'_, '_, '_, T>) {
    pr_info!("QP {}: move given up: flushed\n", ctx.record.qpn());
    // Its session is over for good: a failed completion starts no move.
    ctx.path.forbid_moves();
    end_move::<T>(ctx.data, ctx.path);
    if let Some(mqp) = ctx.path.member_qp() {
        let _ = member_qp_to_error(mqp);
    }
    ctx.path.enter_error();
    ctx.path.report_fatal();
}
