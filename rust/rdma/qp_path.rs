// SPDX-License-Identifier: GPL-2.0

//! The data path of a device's RC QPs, each backed by a QP on one member
//! device: posts go to the member QP with the keys translated
//! ([`super::wr`]), and every WR takes a place in the QP's shadow ring so
//! that it completes exactly once, by the member (translated back in a
//! poll, [`QpPath::translate`]) or, once the member QP is gone, by a flush
//! the device synthesises into the QP's CQ. No allocation and no sleeping
//! here: the member's WR lives on the stack, the rings are sized at
//! creation. On a member that needs DMA mapping the rings also hold each
//! WR's mappings ([`super::dma`]): made at the post, undone when the WR
//! retires or, for WRs the member never completes, once its QP is gone.
//!
//! A member WR id names the QP ([`QpIds`]) and the WR's ring sequence
//! ([`crate::policy::wrid`]).

use core::{
    mem::offset_of,
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
};

use kernel::{error::to_result, ffi::c_int, prelude::*, types::Opaque};

use super::{
    bindings,
    cm::CmRecord,
    cq::{Cq, Polling, Wc},
    device::{Device, DeviceOps},
    dma::{DmaMap, MemberDma},
    irq_lock::{new_spinlock_irq, SpinLockIrq},
    mr::MrTable,
    qp_ring::{Ring, WrSlot},
    qp_set::QpPaths,
    wr::{self, LocalDmaSges, Refused, Target},
    xarray::XArray,
};
use crate::policy::{resume::SendOp, wrid, MAX_MEMBERS};

mod relocate;

/// The data path's counters of one member.
#[derive(Default)]
pub(crate) struct MemberCounters {
    /// QPs hosted (kept by the QP verbs).
    qps: AtomicI64,
    /// WRs posted and not completed.
    outstanding: AtomicI64,
    /// Posts refused: a key of another member's MR.
    wrong_key: AtomicU64,
    /// WRs completed with a flush error.
    flushed: AtomicU64,
}

/// What [`MemberCounters`] read at one moment.
#[derive(Clone, Copy, Default)]
pub(crate) struct MemberLoad {
    pub(crate) qps: u32,
    pub(crate) outstanding: u32,
    pub(crate) wrong_key: u64,
    pub(crate) flushed: u64,
}

impl MemberCounters {
    /// Counts a QP made (`1`) or destroyed (`-1`) on the member.
    pub(crate) fn add_qps(&self, delta: i64) {
        self.qps.fetch_add(delta, Ordering::Relaxed);
    }

    /// A WR took its place in a ring.
    pub(super) fn posted(&self) {
        self.outstanding.fetch_add(1, Ordering::Relaxed);
    }

    /// `wrs` WRs moved to this member with their QP.
    pub(super) fn adopt(&self, wrs: u64) {
        self.outstanding
            .fetch_add(i64::try_from(wrs).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    /// `wrs` WRs left their rings.
    pub(super) fn retire(&self, wrs: u64) {
        self.outstanding
            .fetch_sub(i64::try_from(wrs).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    /// `n` WRs completed with a flush the device made.
    pub(super) fn add_flushed(&self, n: u64) {
        self.flushed.fetch_add(n, Ordering::Relaxed);
    }

    fn clamp(v: i64) -> u32 {
        u32::try_from(v.max(0)).unwrap_or(u32::MAX)
    }

    /// The counters now.
    pub(crate) fn load(&self) -> MemberLoad {
        MemberLoad {
            qps: Self::clamp(self.qps.load(Ordering::Relaxed)),
            outstanding: Self::clamp(self.outstanding.load(Ordering::Relaxed)),
            wrong_key: self.wrong_key.load(Ordering::Relaxed),
            flushed: self.flushed.load(Ordering::Relaxed),
        }
    }

    /// WRs completed with a flush error so far.
    pub(crate) fn flushed(&self) -> u64 {
        self.flushed.load(Ordering::Relaxed)
    }
}

/// The data path's counters of every member slot of a device.
#[derive(Default)]
pub(crate) struct PathCounters([MemberCounters; MAX_MEMBERS]);

impl PathCounters {
    /// Member `slot`'s; `None` past the last slot.
    pub(crate) fn get(&self, slot: usize) -> Option<&MemberCounters> {
        self.0.get(slot)
    }
}

/// What a post takes from the device: its MRs and its members' counters.
pub(crate) struct Posting<'a> {
    pub(crate) mrs: &'a MrTable,
    pub(crate) counters: &'a PathCounters,
}

impl<'a> Posting<'a> {
    /// A post's view of `bound`, the binding of a path of device `dev`,
    /// taken under the path's lock; `None` for a slot past the last.
    fn bind(&self, bound: &Binding, dev: *const bindings::ib_device) -> Option<Bound<'a>> {
        Some(Bound {
            target: Target {
                mrs: self.mrs,
                dev,
                slot: bound.slot,
                local_dma_lkey: bound.local_dma_lkey,
            },
            counters: self.counters.get(bound.slot)?,
            dma: bound.dma,
        })
    }
}

/// The member a post goes to, as it was under the path's lock.
struct Bound<'a> {
    target: Target<'a>,
    counters: &'a MemberCounters,
    dma: Option<MemberDma>,
}

impl Bound<'_> {
    fn dma(&self) -> Option<&MemberDma> {
        self.dma.as_ref()
    }
}

/// The QPs of a device by id, for the translation of member completions.
///
/// # Invariants
///
/// Every entry of `xa` is the [`QpPath`] of a live QP: a path is stored
/// once it is initialised and erased before it is freed, by
/// [`QpPath::end`], which then passes the poll locks of the QP's CQs.
#[pin_data]
pub(crate) struct QpIds {
    /// Ids are handed out cyclically, so that a stale completion finds no
    /// new QP for a long while.
    #[pin]
    xa: XArray<QpPath>,
}

impl QpIds {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            xa <- XArray::new_allocating(),
        })
    }

    /// The path of QP `id`, if it is live, for the translation of one of
    /// its completions.
    fn get<'a>(&'a self, id: u32, _polling: &'a Polling<'_>) -> Option<&'a QpPath> {
        // SAFETY: by the type invariant a stored path is live until
        // `QpPath::end`, which erases it first and then passes the poll
        // locks of the QP's CQs: the caller holds the poll lock of the CQ
        // its completion came from (`_polling`), one of the QP's, and the
        // reference does not outlive that proof.
        self.xa.load(id).map(|p| unsafe { p.as_ref() })
    }
}

/// A QP this module created on a member device, not owned: the QP verbs
/// create and destroy it, taking it out of its [`QpPath`] first.
///
/// # Invariants
///
/// `0` is a live member QP, until the path it is in gives it up.
struct MemberQp(NonNull<bindings::ib_qp>);

// SAFETY: a QP may be posted to from any thread.
unsafe impl Send for MemberQp {}

impl MemberQp {
    fn post_send(&self, wr: &bindings::mrbond_rdma_send) -> Result {
        // SAFETY: by the type invariant the QP is live; `wr` is a member
        // WR whose SGEs it points at, valid for the call.
        to_result(unsafe {
            bindings::mrbond_rdma_post_send(
                self.0.as_ptr(),
                // CAST: every variant of the union starts with its
                // `ib_send_wr`.
                core::ptr::from_ref(&wr.u).cast(),
            )
        })
    }

    fn post_recv(&self, wr: &bindings::mrbond_rdma_recv) -> Result {
        // SAFETY: as for `post_send`.
        to_result(unsafe { bindings::mrbond_rdma_post_recv(self.0.as_ptr(), &wr.wr) })
    }
}

/// The member a path posts to: what a move to another member (issue 17)
/// changes, in one swap under the path's lock, so that every post sees
/// either the old member's keys and mappings or the new one's.
#[derive(Clone, Copy)]
pub(crate) struct Binding {
    /// The member slot.
    pub(crate) slot: usize,
    /// The `local_dma_lkey` of the member PD.
    pub(crate) local_dma_lkey: u32,
    /// The member device, if it needs the WRs' buffers DMA-mapped.
    pub(crate) dma: Option<MemberDma>,
}

/// What lock "mrbond:qp" protects.
struct Rings {
    bound: Binding,
    /// `None` once the member is detached.
    member: Option<MemberQp>,
    /// A detach took `member` and is destroying it: posts only queue in
    /// the rings until the detach flushes them ([`QpPath::flush_detached`]).
    detaching: bool,
    /// The QP's state as the consumer last set it, or ERR once its member
    /// failed or left (`enum ib_qp_state`).
    state: bindings::ib_qp_state,
    sq: Ring,
    rq: Ring,
    /// Sends posted that consume a receive at the peer (SEND, WRITE with
    /// immediate): the next one's consuming count.
    tx_consuming: u64,
    /// Receives completed with success: what the peer's consuming sends
    /// took. With `tx_consuming`, what transparent failover tells the peer
    /// ([`crate::policy::resume`]).
    rx_consumed: u64,
    /// A move to another member is on (issue 17): new sends are held in
    /// the ring, and so are receives until the new member QP is made.
    moving: Option<Moving>,
    /// A move's new member QP, made and in INIT, with its binding: put in
    /// the old one's place once that one is drained
    /// ([`QpPath::install`]).
    next: Option<(MemberQp, Binding)>,
    /// A send named a remote key (the peer's: RDMA READ or WRITE, an
    /// atomic, SEND_WITH_INV) or registered an MR (whose rkey the peer may
    /// hold): keys of the current members, which a move would leave
    /// behind. Such a QP takes the flush path until keys move too.
    keys_used: bool,
}

/// A move's state in the path ([`super::tfo_move`] drives it).
#[derive(Clone, Copy, Default)]
pub(super) struct Moving {
    /// The old member QP is in ERR: its error completions are kept in the
    /// rings, unresolved, instead of reaching the consumer.
    draining: bool,
    /// Past the last WR of each queue the old member QP returned with an
    /// error.
    sq_upto: u64,
    rq_upto: u64,
    /// The old member QP returned every WR it held.
    drained: bool,
    /// The session was told of the drain.
    drain_told: bool,
    /// The new member QP is there: receives go to it.
    receives_live: bool,
}

impl Rings {
    /// A send of `op` took its place in the ring.
    fn count_consuming(&mut self, op: SendOp) {
        if op == SendOp::Consuming {
            self.tx_consuming = self.tx_consuming.wrapping_add(1);
        }
    }
}

/// The data path of one RC QP of a device.
///
/// # Invariants
///
/// `qp` is the device's QP this path belongs to and `scq`, `rcq` its CQs,
/// [`Cq`]s of the device; `cm` is the QP's record of its connection
/// exchange: all outlive the path (the QP verbs free it before the QP and
/// its record go, and the core keeps a QP's CQs while it lives).
#[pin_data]
pub(crate) struct QpPath {
    qp: NonNull<bindings::ib_qp>,
    scq: NonNull<bindings::ib_cq>,
    rcq: NonNull<bindings::ib_cq>,
    /// In [`QpIds`] and in the member WR ids.
    id: u32,
    /// The QP was made with `IB_SIGNAL_ALL_WR`: every send is signaled.
    signal_all: bool,
    /// The device's record of the QP's connection exchange.
    cm: NonNull<CmRecord>,
    /// Lock "mrbond:qp": the member QP and the shadow rings; held across
    /// the member post, so that a post never races with the member QP's
    /// destruction. Inside a CQ's "mrbond:cq-poll"; "mrbond:cq-swq"
    /// nests inside it.
    #[pin]
    rings: SpinLockIrq<Rings>,
    /// `IB_EVENT_QP_FATAL` is queued or sent: the consumer gets it once.
    failed: AtomicBool,
    /// A move began here, or its drain finished: the device's move work
    /// has a step to take for this path ([`super::tfo_move`]).
    move_pending: AtomicBool,
    /// The connection can move: both ends run the failover channel.
    capable: AtomicBool,
    /// Sends `IB_EVENT_QP_FATAL` from the device's callback workqueue,
    /// after the flushes queued before it are announced.
    #[pin]
    fatal_work: Opaque<kernel::bindings::work_struct>,
}

// SAFETY: the pointers are of objects the core shares between threads; the
// rest is behind the lock or immutable.
unsafe impl Send for QpPath {}
// SAFETY: as above.
unsafe impl Sync for QpPath {}

/// How a [`QpPath`] is made: the QP verbs' description of a new RC QP.
pub(crate) struct NewQpPath {
    /// The device's QP, its send and receive CQs.
    pub(crate) qp: *mut bindings::ib_qp,
    pub(crate) scq: *mut bindings::ib_cq,
    pub(crate) rcq: *mut bindings::ib_cq,
    /// The member the QP is made on, and its member QP.
    pub(crate) bound: Binding,
    pub(crate) member_qp: *mut bindings::ib_qp,
    /// Every send is signaled (`IB_SIGNAL_ALL_WR`).
    pub(crate) signal_all: bool,
    /// The queues' sizes and SGEs per WR, as the member QP was made.
    pub(crate) send_wrs: u32,
    pub(crate) recv_wrs: u32,
    pub(crate) send_sges: u32,
    pub(crate) recv_sges: u32,
    /// The device's record of the QP's connection exchange, which a
    /// member's departure ends ([`QpPath::abort_cm`]); it outlives the
    /// path.
    pub(crate) cm: NonNull<CmRecord>,
}

impl QpPath {
    /// Makes the path of a new QP, joins it to `paths` and publishes it in
    /// `ids`. May sleep.
    ///
    /// # Safety
    ///
    /// `new` must describe a QP being created on a device whose CQs are
    /// [`Cq`]s and whose completions are translated through `ids`: its
    /// pointers live until [`QpPath::end`] is called on the result, and
    /// the member QP is live until the path gives it up.
    pub(crate) unsafe fn new<T: DeviceOps>(
        new: &NewQpPath,
        ids: &QpIds,
        paths: &QpPaths,
    ) -> Result<Pin<KBox<Self>>> {
        if new.bound.slot >= MAX_MEMBERS {
            return Err(EINVAL);
        }
        let (qp, scq, rcq, member, cm) = (
            NonNull::new(new.qp).ok_or(EINVAL)?,
            NonNull::new(new.scq).ok_or(EINVAL)?,
            NonNull::new(new.rcq).ok_or(EINVAL)?,
            NonNull::new(new.member_qp).ok_or(EINVAL)?,
            new.cm,
        );
        let dma = new.bound.dma.is_some();
        let sq = Ring::new(new.send_wrs, new.send_sges, true, dma)?;
        let rq = Ring::new(new.recv_wrs, new.recv_sges, false, dma)?;
        // Reserved now, published once the path is complete.
        let id = ids.xa.reserve_cyclic(1, wrid::QP_ID_MAX)?;
        let path = KBox::pin_init(
            pin_init!(Self {
                qp,
                scq,
                rcq,
                id,
                signal_all: new.signal_all,
                cm,
                // INVARIANT: as the caller guarantees, the member QP is live.
                rings <- new_spinlock_irq!(
                    Rings {
                        bound: new.bound,
                        member: Some(MemberQp(member)),
                        detaching: false,
                        state: bindings::ib_qp_state_IB_QPS_RESET,
                        sq,
                        rq,
                        tx_consuming: 0,
                        rx_consumed: 0,
                        moving: None,
                        next: None,
                        keys_used: false,
                    },
                    "mrbond:qp"
                ),
                failed: AtomicBool::new(false),
                move_pending: AtomicBool::new(false),
                capable: AtomicBool::new(false),
                // SAFETY: `slot` is the work's, valid for writes.
                fatal_work <- Opaque::ffi_init(|slot| unsafe {
                    bindings::mrbond_rdma_init_work(slot, Some(fatal_work::<T>))
                }),
            }),
            GFP_KERNEL,
        );
        let path = match path.and_then(|path| paths.insert(&path).map(|()| path)) {
            Ok(path) => path,
            Err(e) => {
                ids.xa.erase(id);
                return Err(e);
            }
        };
        // INVARIANT: the path is initialised; `end` erases it before the
        // box is dropped.
        ids.xa.store_reserved(id, NonNull::from(&*path));
        Ok(path)
    }

    fn cq(&self, recv: bool) -> &Cq {
        let cq = if recv { self.rcq } else { self.scq };
        // SAFETY: by the type invariant, a CQ of the device that outlives
        // the path.
        unsafe { Cq::from_raw(cq.as_ptr()) }
    }

    /// The QP's record of its connection.
    pub(crate) fn record(&self) -> &CmRecord {
        // SAFETY: by the type invariant the record outlives the path.
        unsafe { self.cm.as_ref() }
    }

    /// The QP's send and receive CQs.
    pub(crate) fn cqs(&self) -> (&Cq, &Cq) {
        (self.cq(false), self.cq(true))
    }

    /// Lets the consumers of the QP's CQs know of completions the device
    /// queued.
    pub(crate) fn kick_cqs(&self) {
        self.cq(false).kick_later();
        self.cq(true).kick_later();
    }

    /// Whether a move could take the QP to another member: no key of the
    /// current members is in use ([`Rings`]' `keys_used`), no inline send
    /// or atomic is unresolved (checked again at the replay).
    pub(crate) fn movable(&self) -> bool {
        !self.rings.lock().keys_used
    }

    /// The member slot the QP is bound to now.
    pub(crate) fn slot(&self) -> usize {
        self.rings.lock().bound.slot
    }

    /// The device of the QP.
    pub(crate) fn device(&self) -> *const bindings::ib_device {
        // SAFETY: by the type invariant the QP outlives the path; the core
        // set its device before `create_qp` and never changes it.
        unsafe { (*self.qp.as_ptr()).device }
    }

    /// The member QP while the member is attached. The caller orders its
    /// use against [`QpPath::detach`] and [`QpPath::end`] (the QP verbs'
    /// objects lock).
    pub(crate) fn member_qp(&self) -> Option<NonNull<bindings::ib_qp>> {
        self.rings.lock().member.as_ref().map(|m| m.0)
    }

    /// A post of a WR to a QP whose member QP is gone: the WR takes its
    /// place in the ring. While a detach still destroys the member QP,
    /// the detach flushes it with the WRs before it; after, it is flushed
    /// now, with any WR still ahead of it, so that every WR completes
    /// exactly once and in order whatever the interleaving. Whether the
    /// CQ must be kicked.
    fn post_without_member(
        &self,
        detaching: bool,
        ring: &mut Ring,
        recv: bool,
        on: &Bound<'_>,
    ) -> bool {
        ring.commit(on.counters);
        if detaching {
            return false;
        }
        ring.flush(self.qp.as_ptr(), self.cq(recv), on.counters, on.dma());
        true
    }

    /// Posts the chain of send WRs at `wr`; on an error, `*bad` is the WR
    /// that failed and none after it is posted. Any context.
    ///
    /// # Safety
    ///
    /// `wr` must be a consumer's chain of send WRs for this QP, valid for
    /// the call (each inside the container its opcode implies), and `bad`
    /// valid for writes.
    pub(crate) unsafe fn post_send(
        &self,
        posting: &Posting<'_>,
        mut wr: *const bindings::ib_send_wr,
        bad: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        let mut kick = false;
        let mut ret = 0;
        let mut rings = self.rings.lock();
        let Some(on) = posting.bind(&rings.bound, self.device()) else {
            // Not reached: `new` refuses a slot past the last. Nothing is
            // posted, from the first WR on.
            // SAFETY: as the caller guarantees, `bad` is writable.
            unsafe { *bad = wr };
            return EINVAL.to_errno();
        };
        while !wr.is_null() {
            // SAFETY: as the caller guarantees.
            let posted = unsafe { self.post_one_send(&mut rings, &on, wr, &mut kick) };
            if let Err(e) = posted {
                // SAFETY: as the caller guarantees, `bad` is writable.
                unsafe { *bad = wr };
                ret = e.to_errno();
                break;
            }
            // SAFETY: as the caller guarantees, the chain is valid.
            wr = unsafe { (*wr).next };
        }
        drop(rings);
        if kick {
            self.cq(false).kick_later();
        }
        ret
    }

    /// # Safety
    ///
    /// As [`QpPath::post_send`], for the one WR `wr`.
    unsafe fn post_one_send(
        &self,
        rings: &mut Rings,
        on: &Bound<'_>,
        wr: *const bindings::ib_send_wr,
        kick: &mut bool,
    ) -> Result {
        // SAFETY: as the caller guarantees, `wr` is valid for the call.
        let (wr_id, opcode, num_sge, op, send_flags) = unsafe {
            let one = &*wr;
            // `wr_id` and `wr_cqe` are the same 64 initialised bits.
            (
                *one.__bindgen_anon_1.wr_id.as_ref(),
                one.opcode,
                one.num_sge,
                wr::send_op(one),
                one.send_flags,
            )
        };
        let invalidates = (opcode == bindings::ib_wr_opcode_IB_WR_LOCAL_INV)
            // SAFETY: a LOCAL_INV's `ex` is the rkey to invalidate.
            .then(|| unsafe { *(*wr).ex.invalidate_rkey.as_ref() });
        let entry = WrSlot {
            wr_id,
            opcode: flush_opcode(opcode),
            invalidates,
            signaled: self.signal_all || send_flags & bindings::ib_send_flags_IB_SEND_SIGNALED != 0,
            num_sge: 0,
        };
        let head = rings.sq.reserve(num_sge, entry)?;
        let (Some(kept), sges) = rings.sq.keep(head) else {
            return Err(EINVAL);
        };
        // SAFETY: as the caller guarantees, `wr` is a consumer's send WR
        // for this QP, in its container.
        unsafe { wr::keep_send(wr, kept, sges) }.map_err(|r| refused(r, on.counters))?;
        rings.keys_used |= !matches!(
            opcode,
            bindings::ib_wr_opcode_IB_WR_SEND
                | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
                | bindings::ib_wr_opcode_IB_WR_LOCAL_INV
        );
        if rings.moving.is_some() {
            // Posted once the move is done, or flushed if it fails.
            rings.count_consuming(op);
            rings.sq.commit(on.counters);
            return Ok(());
        }
        if rings.member.is_none() {
            rings.count_consuming(op);
            *kick |= self.post_without_member(rings.detaching, &mut rings.sq, false, on);
            return Ok(());
        }
        self.post_kept_send(rings, on, head)?;
        rings.count_consuming(op);
        rings.sq.commit_posted(on.counters);
        Ok(())
    }

    /// Posts the member's copy of the kept send WR of `seq` to the member
    /// QP: at its post, or again on a new member QP after a move.
    fn post_kept_send(&self, rings: &mut Rings, on: &Bound<'_>, seq: u64) -> Result {
        let Some(member) = rings.member.as_ref() else {
            return Err(EINVAL);
        };
        let mut m = bindings::mrbond_rdma_send::default();
        let (Some(kept), sges) = rings.sq.kept(seq) else {
            return Err(EINVAL);
        };
        let (opcode, num_sge) = (wr::kept_opcode(kept), sges.len());
        // SAFETY: the kept WR is a consumer's send WR for this QP, whose
        // member QP is live.
        let local =
            unsafe { on.target.send(kept, sges, &mut m) }.map_err(|r| refused(r, on.counters))?;
        if let Some(dma) = on.dma() {
            let to_device = sends_to_device(opcode);
            map_sges(
                dma,
                &mut m.sge,
                num_sge,
                local,
                to_device,
                rings.sq.maps(seq),
            )?;
        }
        // SAFETY: every variant of the copy starts with its `ib_send_wr`.
        unsafe {
            *m.u.wr.as_mut().__bindgen_anon_1.wr_id.as_mut() =
                wrid::encode(self.id, rings.sq.generation, seq, false)
        };
        if let Err(e) = member.post_send(&m) {
            rings.sq.unmap(seq, on.dma());
            return Err(e);
        }
        Ok(())
    }

    /// Posts the chain of receive WRs at `wr`, as [`QpPath::post_send`]
    /// does sends.
    ///
    /// # Safety
    ///
    /// `wr` must be a consumer's chain of receive WRs for this QP, valid
    /// for the call, and `bad` valid for writes.
    pub(crate) unsafe fn post_recv(
        &self,
        posting: &Posting<'_>,
        mut wr: *const bindings::ib_recv_wr,
        bad: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        let mut kick = false;
        let mut ret = 0;
        let mut rings = self.rings.lock();
        let Some(on) = posting.bind(&rings.bound, self.device()) else {
            // Not reached: `new` refuses a slot past the last. Nothing is
            // posted, from the first WR on.
            // SAFETY: as the caller guarantees, `bad` is writable.
            unsafe { *bad = wr };
            return EINVAL.to_errno();
        };
        while !wr.is_null() {
            // SAFETY: as the caller guarantees, `wr` is valid for the call.
            let one = unsafe { &*wr };
            if let Err(e) = self.post_one_recv(&mut rings, &on, one, &mut kick) {
                // SAFETY: as the caller guarantees, `bad` is writable.
                unsafe { *bad = wr };
                ret = e.to_errno();
                break;
            }
            wr = one.next;
        }
        drop(rings);
        if kick {
            self.cq(true).kick_later();
        }
        ret
    }

    fn post_one_recv(
        &self,
        rings: &mut Rings,
        on: &Bound<'_>,
        wr: &bindings::ib_recv_wr,
        kick: &mut bool,
    ) -> Result {
        let entry = WrSlot {
            // SAFETY: `wr_id` and `wr_cqe` are the same 64 initialised bits.
            wr_id: unsafe { *wr.__bindgen_anon_1.wr_id.as_ref() },
            opcode: bindings::ib_wc_opcode_IB_WC_RECV,
            signaled: true,
            ..WrSlot::default()
        };
        let head = rings.rq.reserve(wr.num_sge, entry)?;
        // SAFETY: `wr` is a consumer's receive WR, valid for the call.
        unsafe { wr::keep_recv(wr, rings.rq.keep(head).1) }.map_err(|r| refused(r, on.counters))?;
        if rings.moving.is_some_and(|m| !m.receives_live) {
            // Posted to the new member QP once it is made.
            rings.rq.commit(on.counters);
            return Ok(());
        }
        if rings.member.is_none() {
            *kick |= self.post_without_member(rings.detaching, &mut rings.rq, true, on);
            return Ok(());
        }
        self.post_kept_recv(rings, on, head)?;
        rings.rq.commit_posted(on.counters);
        Ok(())
    }

    /// Posts the member's copy of the kept receive WR of `seq` to the
    /// member QP: at its post, or again on a new member QP after a move.
    fn post_kept_recv(&self, rings: &mut Rings, on: &Bound<'_>, seq: u64) -> Result {
        let Some(member) = rings.member.as_ref() else {
            return Err(EINVAL);
        };
        let mut m = bindings::mrbond_rdma_recv::default();
        let sges = rings.rq.kept(seq).1;
        let num_sge = sges.len();
        let local = on
            .target
            .recv(sges, &mut m)
            .map_err(|r| refused(r, on.counters))?;
        if let Some(dma) = on.dma() {
            map_sges(dma, &mut m.sge, num_sge, local, false, rings.rq.maps(seq))?;
        }
        // SAFETY: writing either member of the union writes its 64 bits.
        unsafe {
            *m.wr.__bindgen_anon_1.wr_id.as_mut() =
                wrid::encode(self.id, rings.rq.generation, seq, true)
        };
        if let Err(e) = member.post_recv(&m) {
            rings.rq.unmap(seq, on.dma());
            return Err(e);
        }
        Ok(())
    }

    /// Makes member completion `wc` the device's: its QP, the consumer's
    /// wr_id. A send completion also retires the unsignaled WRs before it
    /// (a send queue completes in order). False for a completion of a WR
    /// the device already flushed, which must not complete twice. On a
    /// member that needs DMA mapping, the retired WRs' mappings are undone,
    /// and so are those of the MRs a successful completion invalidated
    /// (`mrs`). Under the poll lock of the CQ it came from.
    fn translate(&self, counters: &PathCounters, mrs: &MrTable, wc: &mut Wc) -> bool {
        let wr_id = wc.wr_id();
        let mut rings = self.rings.lock();
        let bound = rings.bound;
        let Some(counters) = counters.get(bound.slot) else {
            return false;
        };
        let recv = wrid::qp_of(wr_id).1;
        let seq = {
            let ring = if recv { &rings.rq } else { &rings.sq };
            // A completion of a member QP the ring no longer posts to.
            if wrid::generation_of(wr_id) != ring.generation {
                return false;
            }
            let seq = wrid::seq_of(wr_id, ring.tail);
            if seq.wrapping_sub(ring.tail) >= ring.len() {
                return false;
            }
            seq
        };
        if wc.failed_on_path() && rings.moving.is_none() && !rings.keys_used && self.capable() {
            // The member QP failed before the bond heard of a failure (its
            // link went down, its retries ran out): a move begins here, and
            // the device's move work tells the connection's session.
            rings.moving = Some(Moving {
                draining: true,
                sq_upto: rings.sq.tail,
                rq_upto: rings.rq.tail,
                ..Moving::default()
            });
            self.queue_move_step();
        }
        let draining = rings.moving.is_some_and(|m| m.draining);
        let ring = if recv { &mut rings.rq } else { &mut rings.sq };
        if draining && !wc.is_success() {
            // Unresolved: the move posts it again or completes it.
            if let Some(m) = rings.moving.as_mut() {
                let upto = seq.wrapping_add(1);
                if recv {
                    m.rq_upto = upto;
                } else {
                    m.sq_upto = upto;
                }
            }
            self.note_drain(&mut rings);
            return false;
        }
        let retired = seq.wrapping_sub(ring.tail).wrapping_add(1);
        let Some(consumer_wr_id) = ring.slot(seq).map(|s| s.wr_id) else {
            return false;
        };
        // The member is done with every WR up to this one: the data it
        // wrote is copied back before the consumer sees the completion.
        if bound.dma.is_some() {
            let ok = wc.is_success();
            let mut s = ring.tail;
            while s != seq.wrapping_add(1) {
                ring.unmap(s, bound.dma.as_ref());
                // An unsignaled LOCAL_INV before a success succeeded too.
                if let Some(rkey) = ring.slot(s).and_then(|e| e.invalidates).filter(|_| ok) {
                    mrs.invalidated(bound.slot, rkey);
                }
                s = s.wrapping_add(1);
            }
            if let Some(rkey) = wc.invalidated_rkey().filter(|_| ok) {
                mrs.invalidated(bound.slot, rkey);
            }
        }
        ring.tail = seq.wrapping_add(1);
        if recv && wc.is_success() {
            rings.rx_consumed = rings.rx_consumed.wrapping_add(1);
        }
        if draining {
            self.note_drain(&mut rings);
        }
        drop(rings);
        counters.retire(retired);
        if wc.is_flush() {
            counters.flushed.fetch_add(1, Ordering::Relaxed);
        }
        wc.set_qp(self.qp.as_ptr(), consumer_wr_id);
        true
    }

    /// The consuming sends posted and the receives consumed so far: what
    /// the two ends' counts of a connection are compared by (each end's
    /// first is the other's second once no message is in flight).
    pub(crate) fn consuming_counts(&self) -> (u64, u64) {
        let rings = self.rings.lock();
        (rings.tx_consuming, rings.rx_consumed)
    }

    /// The QP's state, as the consumer last set it or ERR once its member
    /// failed or left.
    pub(crate) fn state(&self) -> bindings::ib_qp_state {
        self.rings.lock().state
    }

    /// The consumer moved the QP to `state`.
    pub(crate) fn set_state(&self, state: bindings::ib_qp_state) {
        self.rings.lock().state = state;
    }

    /// The member failed or left: the QP is in ERR; the state it was in.
    pub(super) fn enter_error(&self) -> bindings::ib_qp_state {
        core::mem::replace(
            &mut self.rings.lock().state,
            bindings::ib_qp_state_IB_QPS_ERR,
        )
    }

    /// Whether `IB_EVENT_QP_FATAL` was queued already.
    pub(super) fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Queues `IB_EVENT_QP_FATAL` for the consumer, once per QP, on the
    /// device's callback workqueue: behind the completions' callbacks
    /// queued before it, with no lock of the device held. Any context.
    pub(super) fn report_fatal(&self) {
        if self.failed.swap(true, Ordering::AcqRel) {
            return;
        }
        // SAFETY: by the type invariant the QP, and so its device, outlive
        // the path; the work is initialised, and `end` cancels it before
        // the path goes.
        unsafe {
            Device::from_raw((*self.qp.as_ptr()).device).queue_callback(self.fatal_work.get())
        };
    }

    /// Passes `IB_EVENT_QP_FATAL` to the consumer.
    fn raise_fatal(&self) {
        let ibqp = self.qp.as_ptr();
        let mut ev = bindings::ib_event::default();
        // SAFETY: by the type invariant the QP outlives the path; the core
        // set its device, handler and context before `create_qp` and never
        // changes them.
        let (device, handler, ctx) =
            unsafe { ((*ibqp).device, (*ibqp).event_handler, (*ibqp).qp_context) };
        ev.device = device;
        // SAFETY: writes the union's QP member, the one a QP event names.
        unsafe { *ev.element.qp.as_mut() = ibqp };
        ev.event = bindings::ib_event_type_IB_EVENT_QP_FATAL;
        if let Some(handler) = handler {
            // SAFETY: the core's handler of the QP, with an event of it.
            unsafe { handler(&mut ev, ctx) };
        }
    }

    /// The QP's number, for messages.
    pub(super) fn qp_num(&self) -> u32 {
        // SAFETY: by the type invariant the QP outlives the path; its
        // number is set at creation and never changes.
        unsafe { (*self.qp.as_ptr()).qp_num }
    }

    /// The member left while the QP was in `was`: the device ends the
    /// connection exchange that was in flight for it, if any. May sleep.
    ///
    /// # Safety
    ///
    /// The caller must hold the device's objects lock, under which the
    /// device keeps its QPs' exchange records.
    pub(super) unsafe fn abort_cm(&self, was: bindings::ib_qp_state) {
        // SAFETY: by the type invariant the record outlives the path.
        unsafe { self.cm.as_ref() }.abort(was);
    }

    /// A detach takes the member QP to destroy it (posts meanwhile only
    /// queue in the rings); `None` if it was gone already.
    pub(super) fn detach(&self) -> Option<NonNull<bindings::ib_qp>> {
        let mut rings = self.rings.lock();
        let member = rings.member.take();
        rings.detaching = member.is_some();
        member.map(|m| m.0)
    }

    /// The member QP is destroyed: every WR still in the rings, including
    /// those posted while it was being destroyed, completes now with a
    /// flush, in ring order, through the QP's CQs. The caller kicks the
    /// CQs. Any context.
    pub(super) fn flush_detached(&self, counters: &MemberCounters) {
        let mut rings = self.rings.lock();
        let rings = &mut *rings;
        let (qp, dma) = (self.qp.as_ptr(), rings.bound.dma);
        rings.sq.flush(qp, self.cq(false), counters, dma.as_ref());
        rings.rq.flush(qp, self.cq(true), counters, dma.as_ref());
        rings.detaching = false;
        // A move on cannot go on without the QP's WRs: its session gives
        // up at its next step.
        rings.moving = None;
    }

    /// The QP is being destroyed: the path leaves `ids`, no poll translates
    /// a completion of it any more, nor returns one the device synthesised
    /// for it; the member QP, if any, is handed to `destroy_member`; the
    /// WRs left are dropped (the consumer destroys without waiting for
    /// them), their mappings undone after the member QP is gone. May sleep.
    pub(crate) fn end(
        this: Pin<KBox<Self>>,
        ids: &QpIds,
        paths: &QpPaths,
        counters: &PathCounters,
        destroy_member: impl Fn(NonNull<bindings::ib_qp>, &MemberCounters),
    ) {
        // Out of the set first: a member's failure, which queues the fatal
        // work of every path in the set, queues none here any more.
        paths.remove_then(&*this, || ());
        // SAFETY: initialised by `new`.
        unsafe { kernel::bindings::cancel_work_sync(this.fatal_work.get()) };
        ids.xa.erase(this.id);
        let qp = this.qp.as_ptr().cast_const();
        this.cq(false).forget_qp(qp);
        if this.rcq != this.scq {
            this.cq(true).forget_qp(qp);
        }
        let (member, bound, next) = {
            let mut rings = this.rings.lock();
            (rings.member.take(), rings.bound, rings.next.take())
        };
        if let Some((next, b)) = next {
            if let Some(c) = counters.get(b.slot) {
                destroy_member(next.0, c);
            }
        }
        let Some(counters) = counters.get(bound.slot) else {
            // `new` refuses a slot past the last.
            return;
        };
        if let Some(m) = member {
            destroy_member(m.0, counters);
        }
        let mut guard = this.rings.lock();
        let rings = &mut *guard;
        let left = rings.sq.len().wrapping_add(rings.rq.len());
        for ring in [&mut rings.sq, &mut rings.rq] {
            while ring.tail != ring.head {
                ring.unmap(ring.tail, bound.dma.as_ref());
                ring.tail = ring.tail.wrapping_add(1);
            }
        }
        drop(guard);
        counters.retire(left);
    }
}

/// Where the fatal work lies in a [`QpPath`].
const FATAL_WORK: usize = offset_of!(QpPath, fatal_work);

/// The race windows of the QPs ([`DeviceOps::qp_window`]).
pub(crate) enum QpWindow {
    /// A QP's `IB_EVENT_QP_FATAL` work, before it reads its QP. Process
    /// context.
    FatalWork,
    /// A member's departure, before it destroys one of its member QPs,
    /// under the objects lock. Process context.
    DetachQp,
}

/// # Safety
///
/// Called by the workqueue with the fatal work of a live [`QpPath`] of a
/// device whose table is `T`'s (`QpPath::end` cancels it before the path
/// goes).
unsafe extern "C" fn fatal_work<T: DeviceOps>(work: *mut kernel::bindings::work_struct) {
    T::qp_window(QpWindow::FatalWork);
    // SAFETY: as the caller guarantees, `work` lies `FATAL_WORK` bytes into
    // a live `QpPath`.
    let path = unsafe { &*work.byte_sub(FATAL_WORK).cast::<QpPath>() };
    path.raise_fatal();
}

/// Makes member completion `wc` the device's through the QP its id names
/// ([`QpPath::translate`]); false for one to drop. Under the poll lock of
/// the CQ it came from.
pub(crate) fn translate_wc(
    ids: &QpIds,
    counters: &PathCounters,
    mrs: &MrTable,
    wc: &mut Wc,
    polling: &Polling<'_>,
) -> bool {
    ids.get(wrid::qp_of(wc.wr_id()).0, polling)
        .is_some_and(|path| path.translate(counters, mrs, wc))
}

/// A WR of another member's MR is counted and fails the post as any bad
/// key does.
fn refused(r: Refused, counters: &MemberCounters) -> Error {
    if r == Refused::WrongMember {
        counters.wrong_key.fetch_add(1, Ordering::Relaxed);
        return EINVAL;
    }
    r.into()
}

/// Maps the first `num_sge` SGEs of a member WR, those of `local` (whose
/// addresses are kernel virtual ones), on `dma`, recording each mapping in
/// `maps`; on a failure undoes them and refuses the WR.
fn map_sges(
    dma: &MemberDma,
    sges: &mut [bindings::ib_sge],
    num_sge: usize,
    local: LocalDmaSges,
    to_device: bool,
    maps: &mut [DmaMap],
) -> Result {
    let n = num_sge;
    // More SGEs than the member QP takes: the member would refuse the WR.
    if n > maps.len() || n > sges.len() {
        return Err(EINVAL);
    }
    for (i, (sge, map)) in sges.iter_mut().zip(maps.iter_mut()).take(n).enumerate() {
        if !local.contains(i) || sge.length == 0 {
            continue;
        }
        match dma.map(sge.addr, sge.length, to_device) {
            Ok(m) => {
                sge.addr = m.dma();
                *map = m;
            }
            Err(e) => {
                maps.iter_mut().for_each(|m| dma.unmap(m));
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Whether the SGEs of a send WR are read by the member (SEND, WRITE) or
/// written (the sink of a READ, the result of an atomic).
fn sends_to_device(op: bindings::ib_wr_opcode) -> bool {
    !matches!(
        op,
        bindings::ib_wr_opcode_IB_WR_RDMA_READ
            | bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
            | bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD
    )
}

/// The completion opcode of a send WR's flush.
fn flush_opcode(op: bindings::ib_wr_opcode) -> bindings::ib_wc_opcode {
    match op {
        bindings::ib_wr_opcode_IB_WR_RDMA_WRITE
        | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM => {
            bindings::ib_wc_opcode_IB_WC_RDMA_WRITE
        }
        bindings::ib_wr_opcode_IB_WR_RDMA_READ => bindings::ib_wc_opcode_IB_WC_RDMA_READ,
        bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP => bindings::ib_wc_opcode_IB_WC_COMP_SWAP,
        bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => bindings::ib_wc_opcode_IB_WC_FETCH_ADD,
        bindings::ib_wr_opcode_IB_WR_REG_MR => bindings::ib_wc_opcode_IB_WC_REG_MR,
        bindings::ib_wr_opcode_IB_WR_LOCAL_INV => bindings::ib_wc_opcode_IB_WC_LOCAL_INV,
        _ => bindings::ib_wc_opcode_IB_WC_SEND,
    }
}
