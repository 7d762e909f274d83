// SPDX-License-Identifier: GPL-2.0

//! Completion queues of a device whose QPs live on other devices (members).
//!
//! ULPs share one CQ between QPs on different members (`ib_cq_pool_get()`)
//! and create it before any QP, so a [`Cq`] is backed lazily by one member
//! CQ per member, plus a software queue of the completions the device makes
//! itself (flushes of WRs whose member QP is gone, GSI completions). A poll
//! drains the software queue first, then the member CQs round robin, and
//! has the driver translate every member completion back to its own QP
//! ([`DeviceOps::translate_wc`]). Ordering within a QP holds: a QP's WRs
//! all complete on one member CQ or, once it is gone, all in the software
//! queue.

use core::{
    ffi::c_void,
    marker::PhantomData,
    mem::{align_of, offset_of, size_of, MaybeUninit},
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicBool, Ordering},
};

use kernel::{
    error::{from_err_ptr, from_result},
    ffi::c_int,
    prelude::*,
    types::Opaque,
};

use super::{
    bindings,
    device::{Adapter, Device, DeviceOps},
    irq_lock::{new_spinlock_irq, SpinLockIrq},
    set::ObjectSet,
};
use crate::policy::MAX_MEMBERS;

/// Completions the software queue of a CQ can hold at most: 2^20 (72 MiB
/// of `ib_wc`). Past it an overflow is reported as `IB_EVENT_CQ_ERR`, as a
/// hardware CQ reports an overrun.
const SWQ_MAX: usize = 1 << 20;

/// The software queue's size for a CQ of `cqe` entries: every WR of the
/// CQ's QPs may come back as a synthesised flush, and the ULP sized the CQ
/// for those WRs; twice is a margin for drain markers and WRs the member
/// had already retired unsignaled.
fn swq_size(cqe: u32) -> usize {
    usize::try_from(cqe)
        .ok()
        .and_then(|c| c.checked_mul(2))
        .and_then(|c| c.checked_add(16))
        .and_then(usize::checked_next_power_of_two)
        .map_or(SWQ_MAX, |size| size.min(SWQ_MAX))
}

/// A work completion (`struct ib_wc`).
#[repr(transparent)]
#[derive(Default)]
pub(crate) struct Wc(bindings::ib_wc);

impl Clone for Wc {
    fn clone(&self) -> Self {
        // SAFETY: an `ib_wc` is plain data: it owns nothing, and a bitwise
        // copy is a valid one (bindgen derives no `Clone` for its unions).
        unsafe { core::ptr::read(self) }
    }
}

// SAFETY: a completion is plain data; its QP pointer is only compared here,
// and dereferenced by the consumer that owns the QP.
unsafe impl Send for Wc {}

impl Wc {
    /// The completion's `wr_id` (its `wr_cqe` for a consumer that posts
    /// by CQE: the device hands back whichever the WR carried).
    pub(crate) fn wr_id(&self) -> u64 {
        // SAFETY: `wr_id` and `wr_cqe` are the same 64 initialised bits;
        // any of them is a valid `u64`.
        unsafe { *self.0.__bindgen_anon_1.wr_id.as_ref() }
    }

    /// Whether the WR was flushed (`IB_WC_WR_FLUSH_ERR`).
    pub(crate) fn is_flush(&self) -> bool {
        self.0.status == bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR
    }

    /// Whether the WR failed for the path rather than for itself: its QP
    /// ran out of transport retries, or the device put the QP in error
    /// (rxe does when its link goes down). Transparent failover moves the
    /// QP then; any other error is the WR's own, and its consumer's.
    pub(crate) fn failed_on_path(&self) -> bool {
        self.0.status == bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR || self.is_flush()
    }

    /// Whether the WR succeeded (`IB_WC_SUCCESS`).
    pub(crate) fn is_success(&self) -> bool {
        self.0.status == bindings::ib_wc_status_IB_WC_SUCCESS
    }

    /// The rkey a received SEND_WITH_INV invalidated, if any.
    pub(crate) fn invalidated_rkey(&self) -> Option<u32> {
        let flag = bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE as c_int;
        // SAFETY: with the flag set, the union holds the invalidated rkey;
        // any of its values is a valid `u32`.
        (self.0.wc_flags & flag != 0).then(|| unsafe { *self.0.ex.invalidate_rkey.as_ref() })
    }

    /// The completion's fields, for one the device makes itself.
    pub(super) fn raw_mut(&mut self) -> &mut bindings::ib_wc {
        &mut self.0
    }

    /// Makes this a completion of QP `qp`'s WR `wr_id`.
    pub(crate) fn set_qp(&mut self, qp: *mut bindings::ib_qp, wr_id: u64) {
        self.0.qp = qp;
        // SAFETY: `wr_id` and `wr_cqe` are the same 64 bits; writing either
        // is writing the union.
        unsafe { *self.0.__bindgen_anon_1.wr_id.as_mut() = wr_id };
    }

    /// Makes this a flush completion of QP `qp`, its WR set by
    /// [`Wc::set_wr`].
    pub(crate) fn set_flush(&mut self, qp: *mut bindings::ib_qp) {
        self.0.status = bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR;
        self.0.qp = qp;
    }

    /// Makes this a successful completion of QP `qp`'s WR `wr_id` of
    /// `opcode`: one the peer executed before a move, which the old
    /// member QP returned with an error.
    pub(crate) fn set_success(
        &mut self,
        qp: *mut bindings::ib_qp,
        wr_id: u64,
        opcode: bindings::ib_wc_opcode,
    ) {
        self.set_wr(wr_id, opcode);
        self.0.status = bindings::ib_wc_status_IB_WC_SUCCESS;
        self.0.qp = qp;
    }

    /// The flushed WR: the consumer's `wr_id` and the opcode its success
    /// would have had.
    pub(crate) fn set_wr(&mut self, wr_id: u64, opcode: bindings::ib_wc_opcode) {
        // SAFETY: as in `set_qp`.
        unsafe { *self.0.__bindgen_anon_1.wr_id.as_mut() = wr_id };
        self.0.opcode = opcode;
    }
}

/// Proof that the holder runs under the poll lock ("mrbond:cq-poll") of
/// the CQ whose member completion it translates: only a poll of a [`Cq`]
/// makes one. Whatever the translation looks up for a completion of a QP
/// stays live under it, since destroying a QP passes that lock
/// ([`Cq::forget_qp`]).
pub(crate) struct Polling<'a>(PhantomData<&'a ()>);

/// A CQ this module created on a member device, destroyed when dropped.
///
/// # Invariants
///
/// `0` is a CQ `ib_create_cq()` returned, whose context is the [`Cq`] that
/// holds this handle, on a device that stays registered until it is
/// dropped.
struct MemberCq(NonNull<bindings::ib_cq>);

// SAFETY: a CQ may be polled, armed and destroyed from any thread.
unsafe impl Send for MemberCq {}

impl MemberCq {
    /// Polls at most `out.len()` completions into `out`; how many.
    fn poll(&self, out: &mut [MaybeUninit<Wc>]) -> usize {
        let want = c_int::try_from(out.len()).unwrap_or(c_int::MAX);
        // SAFETY: by the type invariant the CQ is live; `out` has room for
        // `want` completions, which the member writes.
        let got = unsafe {
            bindings::mrbond_rdma_poll_cq(self.0.as_ptr(), want, out.as_mut_ptr().cast())
        };
        usize::try_from(got).unwrap_or(0).min(out.len())
    }

    /// Arms the CQ; whether completions may have been missed.
    fn req_notify(&self, flags: bindings::ib_cq_notify_flags) -> bool {
        // SAFETY: by the type invariant the CQ is live.
        unsafe { bindings::mrbond_rdma_req_notify_cq(self.0.as_ptr(), flags) > 0 }
    }
}

impl Drop for MemberCq {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the CQ is live and its device
        // registered; no QP uses it any more (the member QPs of a CQ's QPs
        // go before it), and nothing uses the handle after this.
        unsafe { bindings::ib_destroy_cq_user(self.0.as_ptr(), core::ptr::null_mut()) };
    }
}

/// The member CQs of a [`Cq`].
struct Members {
    /// By member slot.
    cq: [Option<MemberCq>; MAX_MEMBERS],
    /// A leaving member's CQ: out of the polls, destroyed once its QPs are
    /// ([`Cq::unhook`], [`Cq::free_unhooked`]).
    unhooked: Option<MemberCq>,
    /// Where the next poll starts, so that no member starves the others.
    next: usize,
}

/// The completions a device made itself, a ring.
struct Swq {
    ring: KVVec<Wc>,
    /// Next to push and next to pop; they wrap, `head - tail` is the fill.
    head: u32,
    tail: u32,
    /// `IB_EVENT_CQ_ERR` went to the consumer.
    overflowed: bool,
}

impl Swq {
    fn mask(&self) -> u32 {
        // The ring is a power of two of at most `SWQ_MAX` entries.
        u32::try_from(self.ring.len()).map_or(0, |len| len.wrapping_sub(1))
    }

    fn at(&mut self, seq: u32) -> Option<&mut Wc> {
        let mask = self.mask();
        self.ring.get_mut(usize::try_from(seq & mask).ok()?)
    }

    fn is_empty(&self) -> bool {
        self.head == self.tail
    }
}

/// The object the core allocates for a CQ (`size_ib_cq` bytes, zeroed): the
/// core's `ib_cq` first, as `INIT_RDMA_OBJ_SIZE` requires, then ours.
///
/// # Invariants
///
/// A `&Cq` exists only for a CQ whose `create_cq` initialised `inner` and
/// whose `destroy_cq` has not dropped it yet.
#[repr(C)]
#[pin_data]
pub(crate) struct Cq {
    ibcq: Opaque<bindings::ib_cq>,
    #[pin]
    inner: CqInner,
}

#[pin_data]
struct CqInner {
    /// Lock "mrbond:cq-poll": polls of the member CQs, and their
    /// replacement. Inside a QP's lock never; the software queue's nests
    /// inside it.
    #[pin]
    members: SpinLockIrq<Members>,
    /// Lock "mrbond:cq-swq": the software queue. Innermost; taken inside
    /// a QP's lock by the post path's flushes.
    #[pin]
    swq: SpinLockIrq<Swq>,
    /// The CQ's size and completion vector, for its member CQs.
    cqe: u32,
    comp_vector: u32,
    /// `req_notify_cq` since the last callback: an arm is good for one,
    /// and a consumer that never arms (`IB_POLL_DIRECT`) must get none.
    armed: AtomicBool,
    /// Runs the consumer's callback for completions the device queued
    /// ([`Cq::kick_later`]), on the device's callback workqueue.
    #[pin]
    kick_work: Opaque<kernel::bindings::work_struct>,
    /// Reports the software queue's overflow (`IB_EVENT_CQ_ERR`), likewise.
    #[pin]
    err_work: Opaque<kernel::bindings::work_struct>,
}

/// The race windows of the CQ verbs ([`DeviceOps::cq_window`]).
pub(crate) enum CqWindow {
    /// `destroy_cq`: called, the CQ still in the device's set, where a
    /// member's detach kicks it. Process context.
    Destroy,
    /// A CQ's callback work, before it reads its CQ. Process context.
    KickWork,
}

/// The live CQs of a device: a member going away unhooks and frees its
/// member CQs in each.
pub(crate) type CqSet = ObjectSet<Cq>;

// SAFETY: a `&Cq` gives out only the core's CQ, which the core shares
// between threads, and state behind locks and atomics.
unsafe impl Sync for Cq {}

impl Cq {
    /// The CQ whose `ib_cq` is at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `ib_cq` of a `Cq` of a device whose table is built
    /// from a [`DeviceOps`], after its `create_cq` succeeded and before its
    /// `destroy_cq`, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_cq) -> &'a Self {
        // CAST: `Cq` is `repr(C)` with the `ib_cq` at offset 0.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the object is live for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn raw(&self) -> *mut bindings::ib_cq {
        self.ibcq.get()
    }

    /// The CQ's member CQ on member `slot`, whose device is `dev`, created
    /// on first use and armed if this CQ is. May sleep.
    ///
    /// # Safety
    ///
    /// `dev` must be a registered device that stays registered until this
    /// CQ's member CQ there is dropped: by a [`Cq::unhook`] and
    /// [`Cq::free_unhooked`] of `slot` before the device goes, or by the
    /// CQ's `destroy_cq`.
    pub(crate) unsafe fn member(
        &self,
        slot: usize,
        dev: *mut bindings::ib_device,
    ) -> Result<*mut bindings::ib_cq> {
        let inner = &self.inner;
        if let Some(mcq) = inner.members.lock().cq.get(slot).ok_or(EINVAL)? {
            return Ok(mcq.0.as_ptr());
        }
        // SAFETY: the caller guarantees `dev` is registered.
        let vectors = unsafe { (*dev).num_comp_vectors }.max(1);
        let vector = c_int::try_from(inner.comp_vector % u32::try_from(vectors).unwrap_or(1))?;
        let cqe = c_int::try_from(inner.cqe)?;
        let ctx = core::ptr::from_ref(self).cast_mut().cast::<c_void>();
        // SAFETY: `dev` is registered; the handlers are given this CQ,
        // which outlives the member CQ (dropped in `destroy_cq` at the
        // latest, before `inner`'s memory goes).
        let mcq = from_err_ptr(unsafe {
            bindings::mrbond_rdma_create_cq(
                dev,
                Some(member_comp),
                Some(member_event),
                ctx,
                cqe,
                vector,
            )
        })?;
        // INVARIANT: just created with this CQ as its context; the caller
        // keeps `dev` registered until it is dropped.
        let mcq = MemberCq(NonNull::new(mcq).ok_or(ENOMEM)?);
        // This CQ may be armed already: so must its new member CQ be.
        mcq.req_notify(bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP);
        let raw = mcq.0.as_ptr();
        let mut members = inner.members.lock();
        let Some(entry) = members.cq.get_mut(slot) else {
            // Checked above; a CQ is never destroyed under the spinlock.
            drop(members);
            drop(mcq);
            return Err(EINVAL);
        };
        if let Some(first) = entry {
            // Another caller won; ours is destroyed outside the lock.
            let first = first.0.as_ptr();
            drop(members);
            drop(mcq);
            return Ok(first);
        }
        *entry = Some(mcq);
        Ok(raw)
    }

    /// Queues a completion the device made; false if the software queue is
    /// full: the CQ is then in error, as on a hardware CQ overrun, and its
    /// consumer gets `IB_EVENT_CQ_ERR` (once). Any context.
    pub(crate) fn push(&self, wc: &Wc) -> bool {
        let mut swq = self.inner.swq.lock();
        if swq.head.wrapping_sub(swq.tail) <= swq.mask() {
            let head = swq.head;
            if let Some(slot) = swq.at(head) {
                *slot = wc.clone();
                swq.head = head.wrapping_add(1);
                return true;
            }
        }
        if !swq.overflowed {
            swq.overflowed = true;
            drop(swq);
            pr_err!("CQ overrun by completions of the device\n");
            self.queue(&self.inner.err_work);
        }
        false
    }

    /// Tells the consumer there is something to poll, if it armed the CQ.
    /// From a member's completion callback, as a hardware CQ would, or from
    /// the callback workqueue; never with a lock of the device held.
    fn kick(&self) {
        if !self.inner.armed.swap(false, Ordering::AcqRel) {
            return;
        }
        let ibcq = self.raw();
        // SAFETY: the core set the handler and context before `create_cq`
        // and never changes them.
        let (handler, ctx) = unsafe { ((*ibcq).comp_handler, (*ibcq).cq_context) };
        if let Some(handler) = handler {
            // SAFETY: the consumer's handler, called as the core's contract
            // for a CQ with completions to poll.
            unsafe { handler(ibcq, ctx) };
        }
    }

    /// [`Cq::kick`] for completions the device queued itself, from
    /// wherever it did (a post of the consumer's, a detach, the GSI proxy
    /// under a spinlock): the callback runs from the device's callback
    /// workqueue, never re-entering the consumer from its own post nor
    /// under a lock of the device. Any context.
    pub(crate) fn kick_later(&self) {
        if self.inner.armed.load(Ordering::Acquire) {
            self.queue(&self.inner.kick_work);
        }
    }

    fn queue(&self, work: &Opaque<kernel::bindings::work_struct>) {
        // SAFETY: the CQ's device is allocated while the CQ lives; the work
        // is initialised, and `destroy_cq` cancels it before `inner` goes.
        unsafe { Device::from_raw((*self.raw()).device).queue_callback(work.get()) };
    }

    /// Passes `ev` of a member CQ, or of the CQ itself, to the consumer.
    fn raise(&self, event: bindings::ib_event_type) {
        let ibcq = self.raw();
        let mut ev = bindings::ib_event::default();
        // SAFETY: the core set the device, handler and context before
        // `create_cq` and never changes them.
        let (device, handler, ctx) =
            unsafe { ((*ibcq).device, (*ibcq).event_handler, (*ibcq).cq_context) };
        ev.device = device;
        // SAFETY: writes the union's CQ member, the one a CQ event names.
        unsafe { *ev.element.cq.as_mut() = ibcq };
        ev.event = event;
        if let Some(handler) = handler {
            // SAFETY: the consumer's handler, with an event of its CQ.
            unsafe { handler(&mut ev, ctx) };
        }
    }

    /// QP `qp` is being destroyed, its completions no longer translatable:
    /// once this returns, no poll still translates one, and the synthesised
    /// ones queued for it are gone, so that no consumer sees a completion
    /// of a QP it destroyed. The consumer destroys only after its QP's WRs
    /// are done with (drained or abandoned), so nothing it waits for is
    /// dropped. Any context.
    pub(crate) fn forget_qp(&self, qp: *const bindings::ib_qp) {
        // The poll lock: a poll running now has translated, or will find
        // the QP's id gone.
        let _polls = self.inner.members.lock();
        let mut swq = self.inner.swq.lock();
        let (mut at, mut kept, head) = (swq.tail, swq.tail, swq.head);
        while at != head {
            let wc = swq.at(at).map(|wc| wc.clone());
            at = at.wrapping_add(1);
            let Some(wc) = wc.filter(|wc| wc.0.qp.cast_const() != qp) else {
                continue;
            };
            if let Some(slot) = swq.at(kept) {
                *slot = wc;
            }
            kept = kept.wrapping_add(1);
        }
        swq.head = kept;
    }

    /// A member is going away, step 1: no poll may touch its CQ any more,
    /// so that none reads a completion of a member QP about to be
    /// destroyed. Process context: a CQ left unhooked by an earlier step 1
    /// is destroyed here.
    pub(crate) fn unhook(&self, slot: usize) {
        let mut members = self.inner.members.lock();
        let cq = members.cq.get_mut(slot).and_then(Option::take);
        let earlier = core::mem::replace(&mut members.unhooked, cq);
        drop(members);
        // Only if step 2 never ran: destroyed outside the spinlock.
        drop(earlier);
    }

    /// Step 2, after the member's QPs are destroyed: frees its CQ. May
    /// sleep.
    pub(crate) fn free_unhooked(&self) {
        let cq = self.inner.members.lock().unhooked.take();
        drop(cq);
    }

    /// Polls at most `out.len()` completions into `out`, `translate`
    /// making each member completion the device's (false: drop it, a
    /// completion of a WR already flushed), under the poll lock; how many.
    /// Any context.
    fn poll(
        &self,
        out: &mut [MaybeUninit<Wc>],
        mut translate: impl FnMut(&mut Wc, &Polling<'_>) -> bool,
    ) -> usize {
        let mut members = self.inner.members.lock();
        let polling = Polling(PhantomData);
        let mut got = self.pop_swq(out);
        let start = members.next;
        for i in 0..MAX_MEMBERS {
            let Some(room) = out.get_mut(got..).filter(|r| !r.is_empty()) else {
                break;
            };
            let Some(Some(mcq)) = members.cq.get((start + i) % MAX_MEMBERS) else {
                continue;
            };
            let n = mcq.poll(room);
            let mut kept = 0;
            for j in 0..n {
                // SAFETY: the member wrote the first `n` entries of `room`.
                let Some(mut wc) = room.get(j).map(|wc| unsafe { wc.assume_init_read() }) else {
                    break;
                };
                if translate(&mut wc, &polling) {
                    if let Some(to) = room.get_mut(kept) {
                        to.write(wc);
                        kept += 1;
                    }
                }
            }
            got += kept;
        }
        members.next = (start + 1) % MAX_MEMBERS;
        got
    }

    /// Pops synthesised completions into `out`; how many.
    fn pop_swq(&self, out: &mut [MaybeUninit<Wc>]) -> usize {
        let mut swq = self.inner.swq.lock();
        let mut got = 0;
        for entry in out.iter_mut() {
            if swq.is_empty() {
                break;
            }
            let tail = swq.tail;
            if let Some(wc) = swq.at(tail) {
                entry.write(wc.clone());
                got += 1;
            }
            swq.tail = tail.wrapping_add(1);
        }
        got
    }

    /// Arms the CQ and its member CQs; whether completions may have been
    /// missed (with `IB_CQ_REPORT_MISSED_EVENTS`). Any context.
    fn req_notify(&self, flags: bindings::ib_cq_notify_flags) -> bool {
        self.inner.armed.store(true, Ordering::Release);
        let members = self.inner.members.lock();
        let mut missed = false;
        for mcq in members.cq.iter().flatten() {
            missed |= mcq.req_notify(flags);
        }
        if flags & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0 {
            missed |= !self.inner.swq.lock().is_empty();
        }
        missed
    }

    /// Cancels the CQ's work items and waits for running ones. May sleep.
    fn cancel_work(&self) {
        // SAFETY: the works were initialised by `create_cq`.
        unsafe {
            kernel::bindings::cancel_work_sync(self.inner.kick_work.get());
            kernel::bindings::cancel_work_sync(self.inner.err_work.get());
        }
    }

    /// The CQ whose work `work` is at offset `offset` of.
    ///
    /// # Safety
    ///
    /// `work` must be the `offset` work of a live `Cq`.
    unsafe fn of_work<'a>(work: *mut kernel::bindings::work_struct, offset: usize) -> &'a Self {
        // SAFETY: as the caller guarantees, `work` lies `offset` bytes into
        // a live `Cq`.
        unsafe { Self::from_raw(work.byte_sub(offset).cast()) }
    }
}

/// Where the works lie in a [`Cq`].
const KICK_WORK: usize = offset_of!(Cq, inner) + offset_of!(CqInner, kick_work);
const ERR_WORK: usize = offset_of!(Cq, inner) + offset_of!(CqInner, err_work);

/// # Safety
///
/// Called by the workqueue with the kick work of a live [`Cq`] of a device
/// whose table is `T`'s (`destroy_cq` cancels it before the CQ goes).
unsafe extern "C" fn kick_work<T: DeviceOps>(work: *mut kernel::bindings::work_struct) {
    T::cq_window(CqWindow::KickWork);
    // SAFETY: as the caller guarantees.
    unsafe { Cq::of_work(work, KICK_WORK) }.kick();
}

/// # Safety
///
/// As [`kick_work`], with the error work.
unsafe extern "C" fn err_work(work: *mut kernel::bindings::work_struct) {
    // SAFETY: as the caller guarantees.
    unsafe { Cq::of_work(work, ERR_WORK) }.raise(bindings::ib_event_type_IB_EVENT_CQ_ERR);
}

/// A member CQ has completions: so has ours. Any context.
///
/// # Safety
///
/// Called by the member's driver with the context given at creation: a live
/// [`Cq`], which destroys the member CQ before it goes.
unsafe extern "C" fn member_comp(_mcq: *mut bindings::ib_cq, ctx: *mut c_void) {
    // SAFETY: as the caller guarantees.
    unsafe { Cq::from_raw(ctx.cast()) }.kick();
}

/// # Safety
///
/// As [`member_comp`], with an event of the member CQ.
unsafe extern "C" fn member_event(ev: *mut bindings::ib_event, ctx: *mut c_void) {
    // SAFETY: as the caller guarantees.
    let cq = unsafe { Cq::from_raw(ctx.cast()) };
    // SAFETY: the event is the member driver's, valid for the call.
    cq.raise(unsafe { (*ev).event });
}

impl<T: DeviceOps> Adapter<T> {
    /// `size_ib_cq`: the core allocates a [`Cq`] for every CQ.
    pub(super) const CQ_SIZE: usize = {
        // `kzalloc()` aligns to `ARCH_KMALLOC_MINALIGN` (at least 8).
        assert!(align_of::<Cq>() <= 8);
        size_of::<Cq>()
    };

    /// # Safety
    ///
    /// Called by the RDMA core with a zeroed [`Cq`] of `CQ_SIZE` bytes whose
    /// `ib_cq` it filled in, on a device whose table is `T`'s and whose
    /// driver data is a `T::Data`, with `attr` of this call.
    pub(super) unsafe extern "C" fn create_cq(
        ibcq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `attr` is the core's, valid for the call.
            let (cqe, comp_vector, flags) =
                unsafe { ((*attr).cqe, (*attr).comp_vector, (*attr).flags) };
            // No ucontext exists until userspace verbs do.
            if !attrs.is_null() || flags != 0 {
                return Err(super::eopnotsupp());
            }
            // SAFETY: the core sets the CQ's device before `create_cq`; the
            // device is allocated while it has CQs.
            let dev = unsafe { Device::from_raw((*ibcq).device) };
            if cqe < 1 || cqe > dev.max_cqe() {
                return Err(EINVAL);
            }
            let core_cqe = c_int::try_from(cqe)?;
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            let ring = KVVec::from_elem(Wc::default(), swq_size(cqe), GFP_KERNEL)?;
            let init = pin_init!(CqInner {
                members <- new_spinlock_irq!(
                    Members { cq: [const { None }; MAX_MEMBERS], unhooked: None, next: 0 },
                    "mrbond:cq-poll"
                ),
                swq <- new_spinlock_irq!(
                    Swq { ring, head: 0, tail: 0, overflowed: false },
                    "mrbond:cq-swq"
                ),
                cqe,
                comp_vector,
                armed: AtomicBool::new(false),
                // SAFETY: `slot` is the work's, valid for writes.
                kick_work <- Opaque::ffi_init(|slot| unsafe {
                    bindings::mrbond_rdma_init_work(slot, Some(kick_work::<T>))
                }),
                // SAFETY: as above.
                err_work <- Opaque::ffi_init(|slot| unsafe {
                    bindings::mrbond_rdma_init_work(slot, Some(err_work))
                }),
            });
            let raw = ibcq.cast::<Cq>();
            // SAFETY: the object is a `Cq` (`CQ_SIZE` bytes, `repr(C)` with
            // the `ib_cq` first) whose `inner` nothing has seen yet; on an
            // error the initialiser leaves it uninitialised.
            unsafe { init.__pinned_init(addr_of_mut!((*raw).inner)) }?;
            // SAFETY: the core's `ib_cq`, ours during the call.
            unsafe { (*ibcq).cqe = core_cqe };
            // SAFETY: `inner` is initialised; the CQ lives until the
            // `destroy_cq` below.
            let cq = unsafe { Cq::from_raw(ibcq) };
            if let Err(e) = T::cqs(&data).insert(cq) {
                // SAFETY: initialised above, in no set, seen by no one; the
                // core frees the object without a `destroy_cq`.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*raw).inner)) };
                return Err(e);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core, once, on a CQ whose `create_cq` succeeded,
    /// after its last QP is gone.
    pub(super) unsafe extern "C" fn destroy_cq(
        ibcq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        T::cq_window(CqWindow::Destroy);
        let raw = ibcq.cast::<Cq>();
        let end = || {
            // Out of the set: a member's detach, which kicks every CQ of
            // the set, queues no work here any more. Cancelled before,
            // a work queued meanwhile would run after the free.
            // SAFETY: as the caller guarantees, the CQ is live.
            unsafe { Cq::from_raw(ibcq) }.cancel_work();
            // SAFETY: `create_cq` initialised `inner`; the core frees the
            // object after this returns and calls nothing else on the CQ,
            // so this ends its life (and destroys its member CQs).
            unsafe { core::ptr::drop_in_place(addr_of_mut!((*raw).inner)) }
        };
        // SAFETY: the CQ's device is allocated while it has CQs.
        let dev = unsafe { Device::from_raw((*ibcq).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, which the core calls after the last CQ is gone.
        match unsafe { dev.driver_data::<T::Data>() } {
            Ok(data) => T::cqs(&data).remove_then(raw, end),
            // No set is left to leave.
            Err(_) => end(),
        }
        0
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a live CQ of a device whose table is
    /// `T`'s, with room for `num_entries` completions at `wc`.
    pub(super) unsafe extern "C" fn poll_cq(
        ibcq: *mut bindings::ib_cq,
        num_entries: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        let want = usize::try_from(num_entries).unwrap_or(0);
        if want == 0 || wc.is_null() {
            return 0;
        }
        // SAFETY: as the caller guarantees, `wc` has room for `want`
        // completions, the caller's for the call; `Wc` is transparent.
        let out = unsafe { core::slice::from_raw_parts_mut(wc.cast::<MaybeUninit<Wc>>(), want) };
        // SAFETY: as the caller guarantees, the CQ is live.
        let cq = unsafe { Cq::from_raw(ibcq) };
        // SAFETY: the CQ's device is allocated while it has CQs.
        let dev = unsafe { Device::from_raw((*ibcq).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last CQ is gone.
        let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
            return 0;
        };
        let got = cq.poll(out, |wc, polling| T::translate_wc(&data, wc, polling));
        c_int::try_from(got).unwrap_or(num_entries)
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a live CQ of a device whose table is `T`'s.
    pub(super) unsafe extern "C" fn req_notify_cq(
        ibcq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: as the caller guarantees, the CQ is live.
        c_int::from(unsafe { Cq::from_raw(ibcq) }.req_notify(flags))
    }
}
