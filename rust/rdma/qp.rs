// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: the object the core allocates for a QP of a device whose QP
//! verbs are Rust's ([`Qp`]), and those verbs.
//!
//! An RC QP is backed by a QP on the member its driver places it on
//! ([`DeviceOps::place_qp`]): the member QP's number is the QP's (the peer
//! addresses it), claimed from the driver ([`DeviceOps::claim_qpn`]); its
//! WRs go through its data path ([`QpPath`]). QP1 is the device's
//! [`GsiQp`], whose MADs the GSI proxy carries. Member objects are made
//! and destroyed under the device's objects lock ([`ObjectsGuard`]), which
//! orders them against a member's detach.

use core::{
    ffi::c_void,
    mem::{align_of, size_of},
    ptr::{addr_of, addr_of_mut, null_mut, NonNull},
    sync::atomic::{AtomicU32, Ordering},
};

use kernel::{
    error::{from_err_ptr, from_result, to_result},
    ffi::c_int,
    prelude::*,
    str::CStr,
    types::{ForeignOwnable, Opaque},
};

use super::{
    bindings,
    cm::{copy_attr, copy_init, CmRecord},
    cq::Cq,
    device::{Adapter, Device, DeviceOps, ObjectsGuard},
    dma::MemberDma,
    gsi::GsiQp,
    pd::{MemberPd, Pd},
    qp_path::{Binding, NewQpPath, Posting, QpPath},
    tfo_channel::{self, SessionAttrs},
    tfo_move,
};
use crate::policy::tfo_session::Endpoint;

/// The SGEs a WR may have: as many as the member's copy has room for.
const MAX_SGE: u32 = bindings::MRBOND_RDMA_MAX_SGE;

/// The object the core allocates for a QP (`size_ib_qp` bytes, zeroed): the
/// core's `ib_qp` first, as `INIT_RDMA_OBJ_SIZE` requires, then ours.
///
/// # Invariants
///
/// A `&Qp` exists only for a QP whose `create_qp` initialised `kind` and
/// whose `destroy_qp` has not taken it yet.
#[repr(C)]
pub(crate) struct Qp {
    ibqp: Opaque<bindings::ib_qp>,
    kind: QpKind,
}

enum QpKind {
    Rc(RcQp),
    Gsi(Pin<KBox<GsiQp>>),
}

/// An RC QP: its data path and the GSI proxy's record of it.
struct RcQp {
    path: Pin<KBox<QpPath>>,
    cm: Pin<KBox<CmRecord>>,
    /// The device port of the last `IB_QP_PORT` or AV, 0 before: what
    /// `query_qp` reports (the member's port is its own).
    vport: AtomicU32,
}

// SAFETY: a `&Qp` gives out only the core's QP, which the core shares
// between threads, and state behind atomics or locks.
unsafe impl Sync for Qp {}

impl Qp {
    /// The QP whose `ib_qp` is at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `ib_qp` of a [`Qp`] whose `kind` is initialised
    /// and stays so for `'a`: after its `create_qp` succeeded and before
    /// its `destroy_qp`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::ib_qp) -> &'a Self {
        // CAST: `Qp` is `repr(C)` with the `ib_qp` at offset 0.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the object is live for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The state `query_qp` reports for a QP with no member QP to ask.
    fn state(&self) -> bindings::ib_qp_state {
        match &self.kind {
            QpKind::Rc(rc) => rc.path.state(),
            QpKind::Gsi(gsi) => gsi.state.load(Ordering::Relaxed),
        }
    }

    fn vport(&self) -> u32 {
        match &self.kind {
            QpKind::Rc(rc) => rc.vport.load(Ordering::Relaxed),
            QpKind::Gsi(_) => 0,
        }
    }

    /// The member QP that carries an RC QP; live while the device's
    /// objects lock is held. None for QP1 or a QP without a member.
    fn member_qp(&self) -> Option<NonNull<bindings::ib_qp>> {
        match &self.kind {
            QpKind::Rc(rc) => rc.path.member_qp(),
            QpKind::Gsi(_) => None,
        }
    }
}

/// A QP this module created on a member device, destroyed when dropped
/// unless given to a data path.
///
/// # Invariants
///
/// `0` is a live member QP that nothing else destroys.
struct MemberQpOwned(NonNull<bindings::ib_qp>);

impl MemberQpOwned {
    fn qp_num(&self) -> u32 {
        // SAFETY: by the type invariant the QP is live; its number is set
        // at creation.
        unsafe { (*self.0.as_ptr()).qp_num }
    }

    /// Gives the QP up, to a data path that destroys it.
    fn into_raw(self) -> *mut bindings::ib_qp {
        let qp = self.0.as_ptr();
        core::mem::forget(self);
        qp
    }
}

impl Drop for MemberQpOwned {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the QP is live and ours to destroy.
        // `ib_destroy_qp()` is this call with no user data.
        unsafe { bindings::ib_destroy_qp_user(self.0.as_ptr(), null_mut()) };
    }
}

/// A member QP's event is its device QP's: passed to that QP's consumer.
///
/// # Safety
///
/// Called by the member's driver with the context given at creation: the
/// device's live QP, which destroys the member QP before it goes.
unsafe extern "C" fn member_qp_event(mev: *mut bindings::ib_event, ctx: *mut c_void) {
    let ibqp = ctx.cast::<bindings::ib_qp>();
    // SAFETY: as the caller guarantees, `ibqp` is a live QP of ours. Its
    // member QPs raise events only on errors, which come after `create_qp`
    // initialised `kind`; `destroy_qp` takes `kind` out but frees the path
    // only after destroying the member QPs, so the bits read here stay
    // valid until no event can come. The event names the member QP.
    let (qp, from) = unsafe { (Qp::from_raw(ibqp), *(*mev).element.qp.as_ref()) };
    if let QpKind::Rc(rc) = &qp.kind {
        // A move's old member QP, or its new one before it takes over:
        // the move handles their errors, the consumer must not see them.
        if rc.path.is_moving() || rc.path.member_qp().map(NonNull::as_ptr) != Some(from) {
            return;
        }
    }
    let mut ev = bindings::ib_event::default();
    // SAFETY: as the caller guarantees, `ibqp` is live; the core set its
    // device, handler and context before `create_qp`. The member's event is
    // valid for the call.
    let (device, handler, qp_ctx, event) = unsafe {
        (
            (*ibqp).device,
            (*ibqp).event_handler,
            (*ibqp).qp_context,
            (*mev).event,
        )
    };
    ev.device = device;
    // SAFETY: writes the union's QP member, the one a QP event names.
    unsafe { *ev.element.qp.as_mut() = ibqp };
    ev.event = event;
    if let Some(handler) = handler {
        // SAFETY: the core's handler of the QP, with an event of it.
        unsafe { handler(&mut ev, qp_ctx) };
    }
}

/// Whether the SGEs asked for (`struct ib_qp_cap`) fit the posts' copies.
fn caps_fit(cap: &bindings::ib_qp_cap) -> bool {
    cap.max_send_sge <= MAX_SGE && cap.max_recv_sge <= MAX_SGE
}

impl<T: DeviceOps> Adapter<T> {
    /// `size_ib_qp`: the core allocates a [`Qp`] for every QP.
    pub(super) const QP_SIZE: usize = {
        // `kzalloc()` aligns to `ARCH_KMALLOC_MINALIGN` (at least 8).
        assert!(align_of::<Qp>() <= 8);
        size_of::<Qp>()
    };

    /// Creates on member `slot` the member QP of RC QP `ibqp`, taking a
    /// number free on the device: members hand out the same QPN sequence,
    /// so after any imbalance a member's next numbers may all be taken.
    /// Colliding QPs are kept until a free number comes, so that the
    /// member does not hand the same one back; a member can collide at
    /// most once per number the device holds, which bounds the tries.
    /// `init` gets the capabilities the member granted. May sleep.
    fn create_member_qp(
        data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
        mpd: &MemberPd,
        init: &mut bindings::ib_qp_init_attr,
        cm: &CmRecord,
    ) -> Result<MemberQpOwned> {
        let tries = T::qpns_held(data).checked_add(1).ok_or(ENOMEM)?;
        let mut taken = KVec::<MemberQpOwned>::with_capacity(tries, GFP_KERNEL)?;
        for _ in 0..tries {
            // SAFETY: plain C data, copied bit for bit.
            let mut attr = unsafe { core::ptr::read(init) };
            // SAFETY: `mpd` is a live member PD; `attr` names member CQs
            // and a context that outlive the QP (see `create_rc`).
            let mqp =
                from_err_ptr(unsafe { bindings::mrbond_rdma_create_qp(mpd.as_raw(), &mut attr) })?;
            // INVARIANT: just created; ours until given to a path.
            let mqp = MemberQpOwned(NonNull::new(mqp).ok_or(ENOMEM)?);
            match T::claim_qpn(data, mqp.qp_num(), cm) {
                Ok(()) => {
                    *init = attr;
                    return Ok(mqp);
                }
                Err(e) if e == EBUSY => taken.push(mqp, GFP_KERNEL)?,
                Err(e) => return Err(e),
            }
        }
        Err(EBUSY)
    }

    /// `create_qp` of an RC QP: placed on a member, created there under the
    /// objects lock.
    ///
    /// # Safety
    ///
    /// As [`Adapter::create_qp`]; `init` is the core's, valid for the call.
    unsafe fn create_rc(
        data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
        dev: &Device,
        ibqp: *mut bindings::ib_qp,
        init: &mut bindings::ib_qp_init_attr,
    ) -> Result<RcQp> {
        if !caps_fit(&init.cap) {
            return Err(EINVAL);
        }
        // SAFETY: the core sets the QP's PD before `create_qp`; it is a
        // live `Pd` of the device while the QP exists.
        let pd = unsafe { Pd::<T::PdData>::from_raw((*ibqp).pd) };
        // rdma_create_qp() passes the port of the connection.
        let port = if init.port_num <= dev.port_count() {
            init.port_num
        } else {
            0
        };
        // The placement takes the bond's locks: before the objects lock.
        let slot = T::place_qp(data, pd, port)?;
        let objects = dev.lock_objects();
        let (mdev, mport) = objects.member(slot).ok_or_else(super::enetdown)?;
        // SAFETY: the core's CQs of the QP, `Cq`s of the device, live while
        // the QP does.
        let (scq, rcq) = unsafe { (Cq::from_raw(init.send_cq), Cq::from_raw(init.recv_cq)) };
        // SAFETY: under the objects lock `mdev` is member `slot`'s device,
        // registered until its detach, which frees the member CQs first.
        let (mscq, mrcq) = unsafe {
            (
                scq.member(slot, mdev.as_raw())?,
                rcq.member(slot, mdev.as_raw())?,
            )
        };
        // SAFETY: the QP outlives its record (`destroy_qp` drops it), and the
        // device's data, which holds the QP1 table, outlives its QPs.
        let cm = unsafe { CmRecord::new(ibqp, slot, T::gsi_ports(data)) }?;
        let made = T::with_member_pd(pd, slot, &mdev, |mpd| {
            // SAFETY: plain C data, copied bit for bit.
            let mut minit = unsafe { core::ptr::read(init) };
            // `init.port_num` is the device's port; the member has its own.
            minit.port_num = mport;
            minit.send_cq = mscq;
            minit.recv_cq = mrcq;
            minit.qp_context = ibqp.cast();
            minit.event_handler = Some(member_qp_event);
            // rdma_rw contexts belong to the device's QP, whose MRs are ours.
            minit.cap.max_rdma_ctxs = 0;
            let mqp = Self::create_member_qp(data, mpd, &mut minit, &cm)?;
            cm.record_init(&minit);
            Ok((mqp, minit.cap, mpd.local_dma_lkey()))
        });
        let (mqp, cap, lkey) = made?;
        // SAFETY: the member slot holds its device until its detach, which
        // destroys this QP's member QP and undoes its mappings first, as
        // `destroy_qp` does under the objects lock.
        let dma = mdev
            .needs_dma_mapping()
            .then(|| unsafe { MemberDma::new(mdev.as_non_null()) });
        let qpn = mqp.qp_num();
        let new = NewQpPath {
            qp: ibqp,
            scq: init.send_cq,
            rcq: init.recv_cq,
            bound: Binding {
                slot,
                local_dma_lkey: lkey,
                dma,
            },
            member_qp: mqp.0.as_ptr(),
            signal_all: init.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
            send_wrs: cap.max_send_wr,
            recv_wrs: cap.max_recv_wr,
            send_sges: cap.max_send_sge,
            recv_sges: cap.max_recv_sge,
            cm: NonNull::from(&*cm),
        };
        // SAFETY: the QP, its CQs and the record live until `destroy_qp`
        // ends the path; the member QP until the path gives it up.
        let path = unsafe { QpPath::new::<T>(&new, T::qp_ids(data), T::qp_paths(data)) };
        let path = match path {
            Ok(path) => path,
            Err(e) => {
                T::release_qpn(data, qpn);
                drop(mqp);
                return Err(e);
            }
        };
        // The path owns the member QP now.
        let _ = mqp.into_raw();
        init.cap = cap;
        init.cap.max_rdma_ctxs = 0;
        // SAFETY: the core's QP, ours during `create_qp`.
        unsafe { (*ibqp).qp_num = qpn };
        T::qp_placed(pd, slot);
        if let Some(c) = T::path_counters(data).get(slot) {
            c.add_qps(1);
        }
        drop(objects);
        Ok(RcQp {
            path,
            cm,
            vport: AtomicU32::new(0),
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core with a zeroed [`Qp`] of `QP_SIZE` bytes whose
    /// `ib_qp` it filled in, on a device whose table is `T`'s and whose
    /// driver data is a `T::Data`, with its `init`.
    pub(super) unsafe extern "C" fn create_qp(
        ibqp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // No ucontext exists until userspace verbs do.
            if !udata.is_null() {
                return Err(super::eopnotsupp());
            }
            // SAFETY: the core sets the QP's device before `create_qp`; the
            // device is allocated while it has QPs.
            let dev = unsafe { Device::from_raw((*ibqp).device) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            // SAFETY: the core's, valid for the call.
            let init = unsafe { &mut *init };
            let kind = match init.qp_type {
                // SAFETY: as this function's caller guarantees.
                bindings::ib_qp_type_IB_QPT_GSI => {
                    // SAFETY: as this function's caller guarantees; `destroy_qp`
                    // ends it.
                    QpKind::Gsi(unsafe { GsiQp::new(dev, T::gsi_ports(&data), ibqp, init) }?)
                }
                // UD waits for a use; SRQs are not offered (max_srq 0).
                bindings::ib_qp_type_IB_QPT_RC if init.srq.is_null() && init.create_flags == 0 => {
                    // SAFETY: as this function's caller guarantees.
                    QpKind::Rc(unsafe { Self::create_rc(&data, dev, ibqp, init) }?)
                }
                _ => return Err(super::eopnotsupp()),
            };
            let raw = ibqp.cast::<Qp>();
            // SAFETY: the object is a `Qp` (`QP_SIZE` bytes, `repr(C)` with
            // the `ib_qp` first) whose `kind` nothing has seen yet.
            unsafe { addr_of_mut!((*raw).kind).write(kind) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core, once, on a QP whose `create_qp` succeeded,
    /// after its last post.
    pub(super) unsafe extern "C" fn destroy_qp(
        ibqp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let raw = ibqp.cast::<Qp>();
        // SAFETY: `create_qp` initialised `kind`; the core frees the object
        // after this returns and calls nothing else on the QP, so this
        // takes it out for good.
        let kind = unsafe { addr_of!((*raw).kind).read() };
        // SAFETY: the QP's device is allocated while it has QPs.
        let dev = unsafe { Device::from_raw((*ibqp).device) };
        // SAFETY: the core's QP; its number never changes.
        let qpn = unsafe { (*ibqp).qp_num };
        // Held to the end: a member's detach must not walk a path half
        // ended, and the GSI proxy finds records by QPN under it.
        let _objects = dev.lock_objects();
        match kind {
            QpKind::Gsi(gsi) => {
                // SAFETY: as below.
                match unsafe { dev.driver_data::<T::Data>() } {
                    Ok(data) => gsi.end(T::gsi_ports(&data)),
                    Err(_) => drop(gsi),
                }
            }
            QpKind::Rc(rc) => {
                // SAFETY: the device is `T`'s and holds its data until its
                // `.dealloc_driver`, which the core calls after the last
                // QP is gone.
                let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
                    return 0;
                };
                // No poll translates a completion of the QP after this, nor
                // returns one the device synthesised for it: members may
                // still hold CQEs of a destroyed QP (rxe does not purge
                // them).
                let (ids, counters) = (T::qp_ids(&data), T::path_counters(&data));
                QpPath::end(rc.path, ids, T::qp_paths(&data), counters, |mqp, c| {
                    // INVARIANT: the path gave it up; destroyed here.
                    drop(MemberQpOwned(mqp));
                    c.add_qps(-1);
                });
                T::quarantine_qpn(&data, qpn, rc.cm.aborted());
            }
        }
        0
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a live QP of a device whose table is
    /// `T`'s, with `attr` valid for the call.
    pub(super) unsafe extern "C" fn modify_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            let unsupported = bindings::ib_qp_attr_mask_IB_QP_ALT_PATH
                | bindings::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE;
            let bits = u32::try_from(mask).map_err(|_| EINVAL)?;
            if !udata.is_null() || bits & unsupported != 0 {
                return Err(super::eopnotsupp());
            }
            // SAFETY: as the caller guarantees.
            let (qp, attr) = unsafe { (Qp::from_raw(ibqp), &*attr) };
            // SAFETY: the QP's device is allocated while it has QPs.
            let dev = unsafe { Device::from_raw((*ibqp).device) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            let tc = T::traffic_class(&data, attr.ah_attr.grh.traffic_class);
            let mut objects = dev.lock_objects();
            let state = bits & bindings::ib_qp_attr_mask_IB_QP_STATE != 0;
            match &qp.kind {
                QpKind::Gsi(gsi) => {
                    if state {
                        gsi.state.store(attr.qp_state, Ordering::Relaxed);
                    }
                    Ok(0)
                }
                QpKind::Rc(rc) => {
                    rc.modify(dev, &mut objects, attr, tc, mask, bits)?;
                    let ends = [
                        bindings::ib_qp_state_IB_QPS_ERR,
                        bindings::ib_qp_state_IB_QPS_RESET,
                    ];
                    if state && ends.contains(&attr.qp_state) {
                        tfo_move::consumer_ended::<T>(&data, &rc.path);
                    }
                    if state && attr.qp_state == bindings::ib_qp_state_IB_QPS_RTS {
                        // SAFETY: the core's QP, whose number never changes.
                        let qpn = unsafe { (*ibqp).qp_num };
                        tfo_channel::ready::<T>(dev, &data, &objects, &rc.cm, qpn);
                    }
                    Ok(0)
                }
            }
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a live QP of a device whose table is
    /// `T`'s, with `attr` and `init` valid for writes for the call.
    pub(super) unsafe extern "C" fn query_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        from_result(|| {
            // SAFETY: as the caller guarantees.
            let qp = unsafe { Qp::from_raw(ibqp) };
            // SAFETY: the QP's device is allocated while it has QPs.
            let dev = unsafe { Device::from_raw((*ibqp).device) };
            let objects = dev.lock_objects();
            match qp.member_qp() {
                Some(mqp) => {
                    // SAFETY: the member QP is live under the objects lock
                    // (a detach destroys it under that lock); `attr` and
                    // `init` are the caller's.
                    to_result(unsafe { bindings::ib_query_qp(mqp.as_ptr(), attr, mask, init) })?
                }
                None => {
                    let state = qp.state();
                    // SAFETY: the caller's, valid for writes.
                    unsafe {
                        attr.write(bindings::ib_qp_attr {
                            qp_state: state,
                            cur_qp_state: state,
                            ..Default::default()
                        });
                        init.write(bindings::ib_qp_init_attr::default());
                    }
                }
            }
            drop(objects);
            let vport = qp.vport();
            // SAFETY: the caller's, valid for writes; the core's QP, whose
            // CQs, context and type are set at creation.
            unsafe {
                // The device's view: its port, its CQs, the ULP's context.
                (*attr).port_num = vport;
                (*attr).ah_attr.port_num = vport;
                (*attr).ah_attr.grh.sgid_attr = core::ptr::null();
                (*init).send_cq = (*ibqp).send_cq;
                (*init).recv_cq = (*ibqp).recv_cq;
                (*init).qp_context = (*ibqp).qp_context;
                (*init).event_handler = None;
                (*init).qp_type = (*ibqp).qp_type;
                (*init).cap.max_rdma_ctxs = 0;
            }
            Ok(0)
        })
    }

    /// `rdma res show qp -dd`: the member that hosts the QP, the member
    /// QP's number (what the wire and the member's own counters show),
    /// whether the connection could move to another rail (`tfo_capable`)
    /// and the counts a move exchanges: sends posted that consume a
    /// receive at the peer (`tfo_tx_consuming`), receives consumed
    /// (`tfo_rx_consumed`).
    /// Nothing for a QP without a member QP (QP1, or failed over).
    ///
    /// # Safety
    ///
    /// Called by the RDMA core (nldev's resource dump, process context) on
    /// a live QP of a device whose table is `T`'s, with `msg` the reply
    /// being built.
    pub(super) unsafe extern "C" fn fill_res_qp_entry(
        msg: *mut kernel::bindings::sk_buff,
        ibqp: *mut bindings::ib_qp,
    ) -> c_int {
        // `-EMSGSIZE` (6.12's `kernel::error::code` has no EMSGSIZE).
        const MSG_FULL: c_int = -(kernel::bindings::EMSGSIZE as c_int);
        // SAFETY: as the caller guarantees.
        let qp = unsafe { Qp::from_raw(ibqp) };
        // SAFETY: the QP's device is allocated while it has QPs.
        let dev = unsafe { Device::from_raw((*ibqp).device) };
        let objects = dev.lock_objects();
        let Some(mqp) = qp.member_qp() else {
            return 0;
        };
        // Whether the peer runs the failover channel and heard our HELLO.
        let (capable, (tx, rx), session) = match &qp.kind {
            QpKind::Rc(rc) => (
                u32::from(rc.cm.capable()),
                rc.path.consuming_counts(),
                match SessionAttrs::of(&rc.cm) {
                    Ok(s) => Some(s),
                    Err(e) => return e.to_errno(),
                },
            ),
            QpKind::Gsi(_) => (0, (0, 0), None),
        };
        // SAFETY: the member QP and its device are live under the objects
        // lock (a detach destroys the QP under it); the device's name is
        // NUL-terminated; `msg` is the caller's, and the nest is closed or
        // cancelled before it is given back.
        let ret = unsafe {
            let mdev = (*mqp.as_ptr()).device;
            let name = (*mdev).name.as_ptr();
            let qpn = (*mqp.as_ptr()).qp_num;
            // The rdma tool reads driver attributes inside this nest only.
            let nest = bindings::mrbond_rdma_nl_driver_nest_start(msg);
            if nest.is_null() {
                return MSG_FULL;
            }
            let put = bindings::rdma_nl_put_driver_string(msg, c"member".as_ptr().cast(), name)
                == 0
                && bindings::rdma_nl_put_driver_u32(msg, c"member_qpn".as_ptr().cast(), qpn) == 0
                && bindings::rdma_nl_put_driver_u32(msg, c"tfo_capable".as_ptr().cast(), capable)
                    == 0
                && bindings::rdma_nl_put_driver_u64(msg, c"tfo_tx_consuming".as_ptr().cast(), tx)
                    == 0
                && bindings::rdma_nl_put_driver_u64(msg, c"tfo_rx_consumed".as_ptr().cast(), rx)
                    == 0
                && session.as_ref().map_or(true, |s| {
                    let string = |name: &core::ffi::CStr, value: &CStr| {
                        bindings::rdma_nl_put_driver_string(
                            msg,
                            name.as_ptr().cast(),
                            value.as_char_ptr(),
                        ) == 0
                    };
                    string(c"tfo_role", s.role)
                        && string(c"tfo_state", s.state)
                        && string(c"tfo_peer_rails", &s.peer_rails)
                        && s.rail.map_or(true, |rail| {
                            bindings::rdma_nl_put_driver_u32(msg, c"tfo_rail".as_ptr().cast(), rail)
                                == 0
                        })
                });
            if put {
                bindings::mrbond_rdma_nl_nest_end(msg, nest);
                0
            } else {
                bindings::mrbond_rdma_nl_nest_cancel(msg, nest);
                MSG_FULL
            }
        };
        drop(objects);
        ret
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a live QP of a device whose table is
    /// `T`'s, with a consumer's chain of send WRs and `bad_wr` valid for
    /// the call; any context.
    pub(super) unsafe extern "C" fn post_send(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: as the caller guarantees.
        let qp = unsafe { Qp::from_raw(ibqp) };
        match &qp.kind {
            // SAFETY: the caller's chain, on QP1 of the QP's device, allocated
            // while it has QPs, whose table is `T`'s.
            QpKind::Gsi(gsi) => unsafe {
                let dev = Device::from_raw((*ibqp).device);
                match dev.driver_data::<T::Data>() {
                    Ok(data) => gsi.post_send::<T>(dev, T::gsi_ports(&data), wr, bad_wr),
                    Err(e) => {
                        *bad_wr = wr;
                        e.to_errno()
                    }
                }
            },
            // SAFETY: as the caller guarantees.
            QpKind::Rc(rc) => unsafe {
                Self::post_rc(ibqp, &rc.path, |p, posting| {
                    p.post_send(posting, wr, bad_wr)
                })
            },
        }
    }

    /// # Safety
    ///
    /// As [`Adapter::post_send`], with receive WRs.
    pub(super) unsafe extern "C" fn post_recv(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: as the caller guarantees.
        let qp = unsafe { Qp::from_raw(ibqp) };
        match &qp.kind {
            // SAFETY: the caller's chain.
            QpKind::Gsi(gsi) => unsafe { gsi.post_recv(wr, bad_wr) },
            // SAFETY: as the caller guarantees.
            QpKind::Rc(rc) => unsafe {
                Self::post_rc(ibqp, &rc.path, |p, posting| {
                    p.post_recv(posting, wr, bad_wr)
                })
            },
        }
    }
}

impl<T: DeviceOps> Adapter<T> {
    /// Runs `post` on an RC QP's path with what it takes from the device.
    ///
    /// # Safety
    ///
    /// `ibqp` must be a live QP of a device whose table is `T`'s, and
    /// `path` its data path.
    unsafe fn post_rc(
        ibqp: *mut bindings::ib_qp,
        path: &QpPath,
        post: impl FnOnce(&QpPath, &Posting<'_>) -> c_int,
    ) -> c_int {
        // SAFETY: the QP's device is allocated while it has QPs.
        let dev = unsafe { Device::from_raw((*ibqp).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last verb.
        let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
            return ENODEV.to_errno();
        };
        let posting = Posting {
            mrs: T::mrs(&data),
            counters: T::path_counters(&data),
        };
        post(path, &posting)
    }
}

/// The data path of the QP whose record is `record`. Under the objects
/// lock, which keeps the QP (`destroy_qp` takes it).
pub(crate) fn path_of(record: &CmRecord) -> Option<&QpPath> {
    // SAFETY: a record lives inside its RC QP's `Qp`, whose `kind` is
    // initialised from `create_qp` to `destroy_qp`; the caller holds the
    // objects lock, which `destroy_qp` takes before the record goes.
    let qp = unsafe { Qp::from_raw(record.ibqp()) };
    match &qp.kind {
        QpKind::Rc(rc) => Some(&rc.path),
        QpKind::Gsi(_) => None,
    }
}

/// Destroys `mqp`, a member QP a path gave up (a move's new one, unused).
pub(crate) fn destroy_member_qp(mqp: NonNull<bindings::ib_qp>) {
    // INVARIANT: as the caller says, ours to destroy.
    drop(MemberQpOwned(mqp));
}

/// Moves member QP `mqp` to ERR: its WRs come back flushed.
pub(crate) fn member_qp_to_error(mqp: NonNull<bindings::ib_qp>) -> Result {
    let mut attr = bindings::ib_qp_attr {
        qp_state: bindings::ib_qp_state_IB_QPS_ERR,
        ..Default::default()
    };
    // SAFETY: a live member QP (the caller holds the objects lock, under
    // which member QPs are destroyed).
    to_result(unsafe {
        bindings::ib_modify_qp(
            mqp.as_ptr(),
            &mut attr,
            bindings::ib_qp_attr_mask_IB_QP_STATE as c_int,
        )
    })
}

impl<T: DeviceOps> Adapter<T> {
    /// A move's Prepare: a member QP for `path` on member `rail`, made as
    /// the QP's first was and taken to INIT as the consumer did, kept by
    /// the path until Connect puts it in the old one's place
    /// ([`QpPath::keep_next`], [`QpPath::install`]). Its number and first
    /// PSN. May sleep.
    pub(crate) fn prepare_move(
        data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
        objects: &mut ObjectsGuard<'_>,
        path: &QpPath,
        record: &CmRecord,
        rail: u8,
    ) -> Result<Endpoint> {
        let slot = usize::from(rail);
        let ibqp = record.ibqp();
        // SAFETY: the QP is live under the objects lock; its PD a `Pd` of
        // the device while it exists.
        let pd = unsafe { Pd::<T::PdData>::from_raw((*ibqp).pd) };
        let (mdev, mport) = objects.member(slot).ok_or_else(super::enetdown)?;
        let (scq, rcq) = path.cqs();
        // SAFETY: under the objects lock `mdev` is member `slot`'s device,
        // registered until its detach, which frees the member CQs first.
        let (mscq, mrcq) = unsafe {
            (
                scq.member(slot, mdev.as_raw())?,
                rcq.member(slot, mdev.as_raw())?,
            )
        };
        let (init, init_mask) = record
            .with_recorded(|r| r.init.as_ref().map(|(a, m)| (copy_attr(a), *m)))
            .ok_or(EINVAL)?;
        let made = T::with_member_pd(pd, slot, &mdev, |mpd| {
            let mut minit = record.with_recorded(|r| copy_init(&r.member_init));
            minit.port_num = mport;
            minit.send_cq = mscq;
            minit.recv_cq = mrcq;
            minit.qp_context = ibqp.cast();
            minit.event_handler = Some(member_qp_event);
            // SAFETY: `mpd` is a live member PD; `minit` names member CQs
            // and a context that outlive the QP.
            let mqp =
                from_err_ptr(unsafe { bindings::mrbond_rdma_create_qp(mpd.as_raw(), &mut minit) })?;
            // INVARIANT: just created; ours until given to the path.
            let mqp = MemberQpOwned(NonNull::new(mqp).ok_or(ENOMEM)?);
            Ok((mqp, mpd.local_dma_lkey()))
        });
        let (mqp, lkey) = made?;
        let mut attr = init;
        attr.port_num = mport;
        // SAFETY: the new member QP is ours; `attr` is the consumer's INIT
        // with the member's port.
        to_result(unsafe { bindings::ib_modify_qp(mqp.0.as_ptr(), &mut attr, init_mask) })?;
        // SAFETY: as in `create_rc`.
        let dma = mdev
            .needs_dma_mapping()
            .then(|| unsafe { MemberDma::new(mdev.as_non_null()) });
        let qpn = mqp.qp_num();
        if !path.keep_next(
            Binding {
                slot,
                local_dma_lkey: lkey,
                dma,
            },
            mqp.0,
        ) {
            return Err(EINVAL);
        }
        // The path owns the new member QP now.
        let _ = mqp.into_raw();
        if let Some(c) = T::path_counters(data).get(slot) {
            c.add_qps(1);
        }
        let psn = u32::try_from(crate::ffi::now_ns() & 0x00ff_ffff).unwrap_or(0);
        record.set_move_psn(psn);
        Ok(Endpoint { qpn, psn })
    }

    /// A move's Connect: the new member QP of `path` put in the old one's
    /// place (now drained: the session connects only after), then to RTR
    /// towards the peer's `endpoint` on the move's rail and to RTS, as the
    /// consumer took the QP there. May sleep.
    pub(crate) fn connect_move(
        data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
        objects: &mut ObjectsGuard<'_>,
        path: &QpPath,
        record: &CmRecord,
        endpoint: Endpoint,
    ) -> Result {
        let old_slot = path.slot();
        let posting = Posting {
            mrs: T::mrs(data),
            counters: T::path_counters(data),
        };
        let (_, old) = path.install(&posting)?;
        if let Some(old) = old {
            // INVARIANT: the path gave it up, drained; destroyed here.
            drop(MemberQpOwned(old));
            if let Some(c) = T::path_counters(data).get(old_slot) {
                c.add_qps(-1);
            }
        }
        let slot = path.slot();
        let rail = u8::try_from(slot)?;
        let peer = record.peer_av().ok_or(EINVAL)?;
        let (sgid, dgid) = record.rail_gids(rail).ok_or(EINVAL)?;
        let (mut rtr, rtr_mask, mut rts, rts_mask) = record
            .with_recorded(|r| {
                let (a, am) = r.rtr.as_ref()?;
                let (b, bm) = r.rts.as_ref()?;
                Some((copy_attr(a), *am, copy_attr(b), *bm))
            })
            .ok_or(EINVAL)?;
        let _gid = objects.rail_av(slot, &peer.av, sgid, dgid, &mut rtr.ah_attr)?;
        let mqp = path.member_qp().ok_or_else(super::enetdown)?;
        rtr.dest_qp_num = endpoint.qpn;
        rtr.rq_psn = endpoint.psn;
        // SAFETY: the member QP is live under the objects lock.
        to_result(unsafe { bindings::ib_modify_qp(mqp.as_ptr(), &mut rtr, rtr_mask) })?;
        rts.sq_psn = record.move_psn();
        // SAFETY: as above.
        to_result(unsafe { bindings::ib_modify_qp(mqp.as_ptr(), &mut rts, rts_mask) })
    }
}

impl RcQp {
    /// `modify_qp` of an RC QP: passed to its member QP, with the device's
    /// port and address vector made the member's. Under the objects lock,
    /// which the AV translation may drop.
    fn modify(
        &self,
        dev: &Device,
        objects: &mut ObjectsGuard<'_>,
        attr: &bindings::ib_qp_attr,
        traffic_class: u8,
        mask: c_int,
        bits: u32,
    ) -> Result {
        let slot = self.path.slot();
        let to_state = (bits & bindings::ib_qp_attr_mask_IB_QP_STATE != 0).then_some(attr.qp_state);
        let Some(mqp) = self.path.member_qp() else {
            // The member is gone; only the way out is open.
            return match to_state {
                Some(
                    s @ (bindings::ib_qp_state_IB_QPS_ERR | bindings::ib_qp_state_IB_QPS_RESET),
                ) => {
                    self.path.set_state(s);
                    Ok(())
                }
                _ => Err(super::enetdown()),
            };
        };
        let (_, mport) = objects.member(slot).ok_or_else(super::enetdown)?;
        // SAFETY: plain C data, copied bit for bit.
        let mut mattr = KBox::new(unsafe { core::ptr::read(attr) }, GFP_KERNEL)?;
        if bits & bindings::ib_qp_attr_mask_IB_QP_PORT != 0 {
            if attr.port_num < 1 || attr.port_num > dev.port_count() {
                return Err(EINVAL);
            }
            self.vport.store(attr.port_num, Ordering::Relaxed);
            mattr.port_num = mport;
        }
        let _gid = if bits & bindings::ib_qp_attr_mask_IB_QP_AV != 0 {
            let gid = objects.member_av(slot, &attr.ah_attr, &mut mattr.ah_attr)?;
            mattr.ah_attr.grh.traffic_class = traffic_class;
            self.vport.store(attr.ah_attr.port_num, Ordering::Relaxed);
            // The objects lock may have been dropped: is the member QP
            // still there?
            if self.path.member_qp() != Some(mqp) {
                return Err(super::enetdown());
            }
            Some(gid)
        } else {
            None
        };
        // SAFETY: the member QP is live under the objects lock; `mattr` is
        // a valid attribute set for `mask`.
        to_result(unsafe { bindings::ib_modify_qp(mqp.as_ptr(), &mut *mattr, mask) })?;
        if let Some(state) = to_state {
            self.path.set_state(state);
            if state == bindings::ib_qp_state_IB_QPS_ERR
                || state == bindings::ib_qp_state_IB_QPS_RESET
            {
                // The consumer ends the connection: its flushes are its
                // own, not a failure to move from.
                self.path.forbid_moves();
                self.cm.end_moves();
            }
        }
        self.cm.record_modify(attr, mask);
        let rtr = bindings::ib_qp_attr_mask_IB_QP_AV | bindings::ib_qp_attr_mask_IB_QP_DEST_QPN;
        if bits & rtr == rtr {
            self.cm.connected(attr.dest_qp_num, &mattr.ah_attr);
        }
        Ok(())
    }
}
