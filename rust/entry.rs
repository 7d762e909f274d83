// SPDX-License-Identifier: GPL-2.0

//! The C -> Rust entry points: every `#[no_mangle] extern "C"` function the
//! C side calls (`mrbond_rs_*` in `include/rdma_mrbond_{glue,vdev,knobs}.h`),
//! each a trampoline that turns its raw arguments into the safe types of
//! [`crate::ffi`] and hands them to the control plane. Rust -> C goes the
//! other way, through `ffi.rs`.

use core::{ffi::c_void, ptr::NonNull};

use kernel::{
    error::from_result,
    ffi::{c_char, c_int, c_ulong},
    prelude::*,
    str::CStr,
    sync::{Arc, ArcBorrow},
    types::ForeignOwnable,
};

use crate::{
    bond::Bond,
    ffi::*,
    policy::qpn::QpEnd,
    rdma::{
        ah::Ah,
        bindings::{
            ib_ah, ib_cq, ib_device, ib_pd, ib_qp, ib_recv_wr, ib_send_wr, ib_wc, rdma_ah_attr,
        },
        cq::{Cq, Wc},
        device::OpsTable,
        pd::{MemberPd, Pd},
        qp_path::{MemberCounters, NewQpPath, QpPath},
        qp_set,
        wr::Target,
    },
    registry::Registry,
    vdev_pd::VdevPd,
    vdev_verbs::VdevVerbs,
};

/// What sysfs hands a show callback (`PAGE_SIZE`).
const SYSFS_BUF_LEN: usize = 4096;

/// The glue's context is the registry: `registry()` casts it back.
impl GlueContext for Registry {}

/// Recovers the registry from the glue's context pointer.
///
/// # Safety
///
/// `ctx` must be the pointer given to `mrbond_glue_init()`, still alive.
unsafe fn registry<'a>(ctx: *mut c_void) -> &'a Registry {
    // SAFETY: the caller guarantees `ctx` is the live registry.
    unsafe { &*ctx.cast::<Registry>() }
}

/// Borrows the bond a vdev callback passes back.
///
/// # Safety
///
/// `bond` must be the pointer given to `mrbond_vdev_alloc()` for a vdev that
/// has not yet called `mrbond_rs_vdev_release()`.
unsafe fn bond<'a>(bond: *mut c_void) -> ArcBorrow<'a, Bond> {
    // SAFETY: the vdev still owns its reference, as the caller guarantees.
    unsafe { <Arc<Bond> as ForeignOwnable>::borrow(bond) }
}

/// A C string argument as a byte slice without its NUL.
///
/// # Safety
///
/// `s` must be a valid NUL-terminated string for `'a`.
unsafe fn c_bytes<'a>(s: *const c_char) -> &'a [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_char_ptr(s) }.as_bytes()
}

/// The bytes a sysfs store was handed.
///
/// # Safety
///
/// `buf` must be readable for `len` bytes for `'a` (the store's buffer).
unsafe fn sysfs_input<'a>(buf: *const c_char, len: usize) -> &'a [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), len) }
}

/// A sysfs page as a writable slice.
///
/// # Safety
///
/// `buf` must be sysfs's `PAGE_SIZE` buffer of the current callback.
unsafe fn sysfs_page<'a>(buf: *mut c_char) -> &'a mut [u8] {
    // SAFETY: guaranteed by the caller.
    unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), SYSFS_BUF_LEN) }
}

/// Stores a static extack message for the netlink glue.
fn set_extack(out: *mut *const c_char, msg: Option<&'static [u8]>) {
    if let Some(msg) = msg {
        if !out.is_null() {
            // SAFETY: `out` is the netlink glue's writable out-parameter; the
            // message is a static NUL-terminated string.
            unsafe { out.write(msg.as_ptr().cast()) };
        }
    }
}

macro_rules! request_entry {
    ($name:ident, $spec:ty, $handler:path, $doc:literal) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// Called by the netlink glue with the registry context, a valid
        /// spec and a writable extack out-parameter.
        #[no_mangle]
        pub(crate) unsafe extern "C" fn $name(
            ctx: *mut c_void,
            spec: *const $spec,
            extack: *mut *const c_char,
        ) -> c_int {
            // SAFETY: the glue passes its live context and a valid spec.
            let (reg, spec) = unsafe { (registry(ctx), &*spec) };
            match $handler(reg, spec) {
                Ok(()) => 0,
                Err(e) => {
                    set_extack(extack, e.message);
                    e.errno.to_errno()
                }
            }
        }
    };
}

request_entry!(
    mrbond_rs_bond_del,
    BondSpec,
    Registry::bond_del,
    "BOND_DEL."
);
request_entry!(
    mrbond_rs_bond_set,
    BondSpec,
    Registry::bond_set,
    "BOND_SET."
);
request_entry!(
    mrbond_rs_member_add,
    BondSpec,
    Registry::member_add,
    "MEMBER_ADD."
);
request_entry!(
    mrbond_rs_member_del,
    BondSpec,
    Registry::member_del,
    "MEMBER_DEL."
);
request_entry!(
    mrbond_rs_member_set,
    BondSpec,
    Registry::member_set,
    "MEMBER_SET."
);
request_entry!(
    mrbond_rs_ecn_set,
    EcnSpec,
    crate::knobs::netlink::ecn_set,
    "ECN_SET."
);
request_entry!(
    mrbond_rs_pfc_set,
    PfcSpec,
    crate::knobs::netlink::pfc_set,
    "PFC_SET."
);

/// BOND_NEW.
///
/// # Safety
///
/// Called by the netlink glue with its context, a valid spec, a writable
/// reply and a writable extack out-parameter.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_bond_new(
    ctx: *mut c_void,
    spec: *const BondSpec,
    reply: *mut BondInfo,
    extack: *mut *const c_char,
) -> c_int {
    // SAFETY: the glue passes its live context, a valid spec and reply.
    let (reg, spec, reply) = unsafe { (registry(ctx), &*spec, &mut *reply) };
    match reg.bond_new(spec, reply) {
        Ok(()) => 0,
        Err(e) => {
            set_extack(extack, e.message);
            e.errno.to_errno()
        }
    }
}

/// BOND_GET and dumps: the bond named `name`, or the `pos`-th bond.
///
/// # Safety
///
/// Called by the netlink glue with its context, `name` NULL or a valid
/// string, and a writable `info`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_bond_info(
    ctx: *mut c_void,
    name: *const c_char,
    pos: u32,
    info: *mut BondInfo,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (reg, info) = unsafe { (registry(ctx), &mut *info) };
    let name = if name.is_null() {
        None
    } else {
        // SAFETY: non-NULL names are valid strings.
        Some(unsafe { c_bytes(name) })
    };
    match reg.bond_info(name, pos, info) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `rdma link add NAME type mrbond netdev IFINDEX`.
///
/// # Safety
///
/// Called by `rdma_link_ops.newlink` with the glue's context and a valid name.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_link_new(
    ctx: *mut c_void,
    name: *const c_char,
    ifindex: u32,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (reg, name) = unsafe { (registry(ctx), CStr::from_char_ptr(name)) };
    from_result(|| {
        reg.link_new(name, ifindex)?;
        Ok(0)
    })
}

/// `ib_client.add` for every device that is not one of our vdevs.
///
/// # Safety
///
/// Called only by the glue's `ib_client.add` with its context and device.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ib_device_added(
    ctx: *mut c_void,
    dev: *mut RawIbDevice,
) -> c_int {
    // SAFETY: the glue passes its live context.
    let reg = unsafe { registry(ctx) };
    from_result(|| {
        let ptr = NonNull::new(dev).ok_or(EINVAL)?;
        // SAFETY: the core passes a device inside its `.add` call.
        let dev = unsafe { IbDevice::hold(ptr) }.ok_or(ENODEV)?;
        reg.device_added(dev)?;
        Ok(0)
    })
}

/// `ib_client.remove`: a member device is going away.
///
/// # Safety
///
/// Called only by the glue's `ib_client.remove` with its context and device.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ib_device_removed(
    ctx: *mut c_void,
    dev: *mut RawIbDevice,
) {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.device_removed(dev);
}

/// The ordered work item: re-evaluates every member; returns the delay in ms
/// until the next debounce deadline, 0 for none.
///
/// # Safety
///
/// Called only by the glue's work function with its context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_evaluate(ctx: *mut c_void, event_ns: u64) -> u32 {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.evaluate(event_ns)
}

/// The periodic work item: one utilisation sample of every member; returns
/// the delay in ms until the next.
///
/// # Safety
///
/// Called only by the glue's work function with its context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_sample_utilisation(ctx: *mut c_void) -> u32 {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.sample_utilisation()
}

/// NETDEV_UNREGISTER (RTNL held): drop vdev port bindings to `ifindex`.
///
/// # Safety
///
/// Called only by the glue's netdev notifier with its context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_netdev_unregister(ctx: *mut c_void, ifindex: u32) {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.netdev_unregister(ifindex);
}

/// The vdev's verbs that Rust implements (`vdev_verbs.rs`): `mrbond_vdev.c`
/// sets them before its own table, which fills the rest.
#[export_name = "mrbond_rs_dev_ops"]
pub(crate) static VDEV_OPS: OpsTable = OpsTable::new::<VdevVerbs>();

/// Borrows a vdev PD the verbs proxy passes.
///
/// # Safety
///
/// `ibpd` must be a PD of a vdev whose `alloc_pd` succeeded and whose
/// `dealloc_pd` has not been called, for `'a`.
unsafe fn vdev_pd<'a>(ibpd: *mut ib_pd) -> &'a Pd<VdevPd> {
    // SAFETY: the vdev's table is `VdevVerbs`', whose `PdData` is `VdevPd`;
    // the caller guarantees the PD is live.
    unsafe { Pd::from_raw(ibpd) }
}

/// A member slot from C, which the callers keep below `MAX_MEMBERS`.
fn slot_of(slot: u32) -> Result<usize> {
    usize::try_from(slot)
        .ok()
        .filter(|&s| s < MAX_MEMBERS)
        .ok_or(EINVAL)
}

/// The member slot for a new QP of vdev PD `ibpd`, for vdev `port` (0:
/// unknown); or -errno.
///
/// # Safety
///
/// Called by the verbs proxy with the bond of a live vdev and a live PD of
/// it, in process context, holding no lock.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_place_qp(
    bond_ptr: *mut c_void,
    ibpd: *mut ib_pd,
    port: u32,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, pd) = unsafe { (bond(bond_ptr), vdev_pd(ibpd)) };
    match bond.place_qp(pd.ulp().as_bytes(), pd.data().home(), port) {
        Ok(slot) => c_int::try_from(slot).unwrap_or(-(kernel::bindings::EINVAL as c_int)),
        Err(e) => e.to_errno(),
    }
}

/// Stores in `*out` the object of vdev PD `ibpd` on member `slot`, whose
/// device is `mdev` (NULL: none), made on first use; 0 or -errno.
///
/// # Safety
///
/// Called by the verbs proxy with a live PD of a vdev and a valid `out`,
/// holding the vdev's `objs_lock`, under which `mdev` is the device of
/// member `slot`: it stays registered until the member's detach, which
/// frees the member PDs (`mrbond_rs_pds_detach()`) before its device goes.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_pd_member(
    ibpd: *mut ib_pd,
    slot: u32,
    mdev: *mut ib_device,
    out: *mut *mut ib_pd,
) -> c_int {
    from_result(|| {
        if mdev.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: as the caller guarantees.
        let pd = unsafe { vdev_pd(ibpd) };
        let member_pd = pd.data().with_member_pd(
            slot_of(slot)?,
            // SAFETY: the caller keeps `mdev` registered until the detach
            // that drops this PD.
            || unsafe { MemberPd::alloc(mdev) },
            MemberPd::as_raw,
        )?;
        // SAFETY: the caller passes a valid `out`.
        unsafe { out.write(member_pd) };
        Ok(0)
    })
}

/// The current task created a QP of vdev PD `ibpd` on member `slot`.
///
/// # Safety
///
/// Called by the verbs proxy with a live PD of a vdev, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_pd_note_qp(ibpd: *mut ib_pd, slot: u32) {
    // SAFETY: as the caller guarantees.
    let pd = unsafe { vdev_pd(ibpd) };
    if let Ok(slot) = slot_of(slot) {
        pd.data().note_qp(slot);
    }
}

/// Member `slot` of the vdev is going away: every PD frees its object there.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, after the member's QPs and MRs are destroyed.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_pds_detach(bond_ptr: *mut c_void, slot: u32) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    if let Ok(slot) = slot_of(slot) {
        bond.pds.for_each(|pd| pd.data().detach(slot));
    }
}

/// Member `slot`'s device is `mdev` until `mrbond_rs_mrs_detach()`; 0 or
/// -errno.
///
/// # Safety
///
/// Called by the member's attach with the bond of a live vdev, holding its
/// `objs_lock`, with a registered `mdev` that stays registered until the
/// member's detach has called `mrbond_rs_mrs_detach()` and
/// `mrbond_rs_pds_detach()`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_mrs_attach(
    bond_ptr: *mut c_void,
    slot: u32,
    mdev: *mut ib_device,
) -> c_int {
    from_result(|| {
        // SAFETY: as the caller guarantees.
        let bond = unsafe { bond(bond_ptr) };
        // SAFETY: the caller keeps `mdev` registered past the detach of its
        // MRs and PDs.
        unsafe { bond.mrs.attach(slot_of(slot)?, mdev) }?;
        Ok(0)
    })
}

/// Member `slot` is going away, its QPs destroyed: its MRs become orphans.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_mrs_detach(bond_ptr: *mut c_void, slot: u32) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    if let Ok(slot) = slot_of(slot) {
        bond.mrs.detach(slot);
    }
}

/// The data path a QP's `path_new` made.
///
/// # Safety
///
/// `path` must be a pointer `mrbond_rs_qp_path_new()` returned and
/// `mrbond_rs_qp_path_free()` has not taken back, valid for `'a`.
unsafe fn qp_path<'a>(path: *mut c_void) -> &'a QpPath {
    // SAFETY: as the caller guarantees, a `QpPath` pinned in its box.
    unsafe { &*path.cast::<QpPath>() }
}

/// The data path of RC QP `qp`, its member QP `mqp` on member `slot`; an
/// `ERR_PTR` on failure.
///
/// # Safety
///
/// Called by the QP verbs with the bond of the live vdev of `qp`, which is
/// being created with CQs `scq` and `rcq` (vdev CQs); `mqp` is the member
/// QP, live until the path gives it up. Process context.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_path_new(
    bond_ptr: *mut c_void,
    qp: *mut ib_qp,
    scq: *mut ib_cq,
    rcq: *mut ib_cq,
    slot: u32,
    mqp: *mut ib_qp,
    local_dma_lkey: u32,
    send_wrs: u32,
    recv_wrs: u32,
) -> *mut c_void {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    let made = slot_of(slot).and_then(|slot| {
        let new = NewQpPath {
            qp,
            scq,
            rcq,
            slot,
            member_qp: mqp,
            local_dma_lkey,
            send_wrs,
            recv_wrs,
        };
        // SAFETY: as the caller guarantees; `path_free` ends the path
        // before the QP and its CQs go.
        unsafe { QpPath::new::<VdevVerbs>(&new, &bond.qp_ids, &bond.qp_paths) }
    });
    match made {
        // SAFETY: the path stays pinned until `path_free` takes it back
        // with `Pin::new_unchecked(KBox::from_raw())`.
        Ok(path) => KBox::into_raw(unsafe { Pin::into_inner_unchecked(path) }).cast(),
        Err(e) => e.to_ptr(),
    }
}

/// Runs `post` with the QP's [`Target`] and its member's counters.
///
/// # Safety
///
/// As the post trampolines below.
unsafe fn post_with(
    bond_ptr: *mut c_void,
    path: *mut c_void,
    post: impl FnOnce(&QpPath, &Target<'_>, &MemberCounters) -> c_int,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, path) = unsafe { (bond(bond_ptr), qp_path(path)) };
    let Some(counters) = bond.counters.get(path.slot()) else {
        return EINVAL.to_errno();
    };
    let target = Target {
        mrs: &bond.mrs,
        dev: path.device(),
        slot: path.slot(),
        local_dma_lkey: path.local_dma_lkey(),
    };
    post(path, &target, counters)
}

/// `post_send` of an RC QP of a vdev.
///
/// # Safety
///
/// Called by the vdev's `post_send` with its bond, the live data path of
/// the QP, the consumer's chain of send WRs and `bad_wr`, valid for the
/// call; any context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_post_send(
    bond_ptr: *mut c_void,
    path: *mut c_void,
    wr: *const ib_send_wr,
    bad_wr: *mut *const ib_send_wr,
) -> c_int {
    // SAFETY: as the caller guarantees.
    unsafe { post_with(bond_ptr, path, |p, t, c| p.post_send(t, c, wr, bad_wr)) }
}

/// `post_recv` of an RC QP of a vdev.
///
/// # Safety
///
/// As `mrbond_rs_qp_post_send()`, with receive WRs.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_post_recv(
    bond_ptr: *mut c_void,
    path: *mut c_void,
    wr: *const ib_recv_wr,
    bad_wr: *mut *const ib_recv_wr,
) -> c_int {
    // SAFETY: as the caller guarantees.
    unsafe { post_with(bond_ptr, path, |p, t, c| p.post_recv(t, c, wr, bad_wr)) }
}

/// The QP's member QP, NULL once detached.
///
/// # Safety
///
/// Called by the QP verbs with a live data path, under `objs_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_member_qp(path: *mut c_void) -> *mut ib_qp {
    // SAFETY: as the caller guarantees.
    let path = unsafe { qp_path(path) };
    path.member_qp()
        .map_or(core::ptr::null_mut(), NonNull::as_ptr)
}

/// The QP's state as its consumer last set it, ERR once its member failed
/// or left.
///
/// # Safety
///
/// Called by the QP verbs with a live data path.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_state(path: *mut c_void) -> u32 {
    // SAFETY: as the caller guarantees.
    unsafe { qp_path(path) }.state()
}

/// The consumer moved the QP to `state`.
///
/// # Safety
///
/// Called by the QP verbs with a live data path.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_set_state(path: *mut c_void, state: u32) {
    // SAFETY: as the caller guarantees.
    unsafe { qp_path(path) }.set_state(state);
}

/// Member `slot` turned unusable: its QPs enter ERR and are reported fatal;
/// how many.
///
/// # Safety
///
/// Called by the member's failure with the bond of a live vdev, holding its
/// `objs_lock`, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qps_fail(bond_ptr: *mut c_void, slot: u32) -> u32 {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    match slot_of(slot) {
        // SAFETY: the caller holds `objs_lock`.
        Ok(slot) => unsafe { qp_set::fail_member(&bond.qp_paths, slot) },
        Err(_) => 0,
    }
}

/// Member `slot` is going away: its QPs enter ERR, their member QPs are
/// destroyed and their WRs left flushed; how many member QPs.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, after the member's CQs are unhooked; process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qps_detach(bond_ptr: *mut c_void, slot: u32) -> u32 {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    let Some((slot, counters)) = slot_of(slot)
        .ok()
        .and_then(|s| Some((s, bond.counters.get(s)?)))
    else {
        return 0;
    };
    let window = || inject(Inject::DetachQp);
    // SAFETY: the caller holds `objs_lock` and unhooked the member's CQs.
    unsafe { qp_set::detach_member(&bond.qp_paths, counters, slot, window) }
}

/// The consumers of member `slot`'s QPs learn that they are dead.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, after it
/// kicked the CQs; process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qps_fatal(bond_ptr: *mut c_void, slot: u32) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    if let Ok(slot) = slot_of(slot) {
        qp_set::report_fatal(&bond.qp_paths, slot);
    }
}

/// Ends a QP's data path; the member QP left for the caller to destroy.
///
/// # Safety
///
/// Called by `destroy_qp` with the bond of a live vdev and a data path of
/// it, which nothing uses after this. Process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_path_free(
    bond_ptr: *mut c_void,
    path: *mut c_void,
) -> *mut ib_qp {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    // SAFETY: as the caller guarantees, the box `path_new` leaked, still
    // pinned, now taken back.
    let path = unsafe { Pin::new_unchecked(KBox::from_raw(path.cast::<QpPath>())) };
    let Some(counters) = bond.counters.get(path.slot()) else {
        return core::ptr::null_mut();
    };
    QpPath::end(path, &bond.qp_ids, &bond.qp_paths, counters)
        .map_or(core::ptr::null_mut(), NonNull::as_ptr)
}

/// Counts a QP made (`delta` 1) or destroyed (-1) on member `slot`.
///
/// # Safety
///
/// Called by the QP verbs with the bond of a live vdev.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_qps_add(
    bond_ptr: *mut c_void,
    slot: u32,
    delta: c_int,
) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    if let Some(c) = slot_of(slot).ok().and_then(|s| bond.counters.get(s)) {
        c.add_qps(i64::from(delta));
    }
}

/// WRs of member `slot` completed with a flush error so far.
///
/// # Safety
///
/// Called by the verbs proxy with the bond of a live vdev.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_flushed(bond_ptr: *mut c_void, slot: u32) -> u64 {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    slot_of(slot)
        .ok()
        .and_then(|s| bond.counters.get(s))
        .map_or(0, |c| c.flushed())
}

/// The attributes vdev AH `ibah` was created with.
///
/// # Safety
///
/// Called by the GSI proxy with a live AH of a vdev, in any context; the
/// pointer is used while the AH lives.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ah_attr(ibah: *mut ib_ah) -> *const rdma_ah_attr {
    // SAFETY: as the caller guarantees.
    unsafe { Ah::from_raw(ibah) }.attr()
}

/// Vdev CQ `ibcq`'s member CQ on member `slot`, whose device is `mdev`,
/// created on first use; an `ERR_PTR` on failure.
///
/// # Safety
///
/// Called by the verbs proxy with a live CQ of a vdev, holding its
/// `objs_lock`, under which `mdev` is the device of member `slot`: it stays
/// registered until the member's detach, which frees its member CQs
/// (`mrbond_rs_cqs_unhook()`, `mrbond_rs_cqs_free_unhooked()`) first.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cq_member(
    ibcq: *mut ib_cq,
    slot: u32,
    mdev: *mut ib_device,
) -> *mut ib_cq {
    let member = || {
        let slot = slot_of(slot)?;
        if mdev.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: as the caller guarantees, the CQ is live and `mdev`
        // registered until the member CQ is freed.
        unsafe { Cq::from_raw(ibcq).member(slot, mdev) }
    };
    member().unwrap_or_else(|e| e.to_ptr())
}

/// Queues `wc`, a completion the vdev made, on vdev CQ `ibcq`; false if
/// the CQ overflowed (its consumer gets `IB_EVENT_CQ_ERR`).
///
/// # Safety
///
/// Called by the verbs proxy with a live CQ of a vdev and a valid `wc`, in
/// any context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cq_push(ibcq: *mut ib_cq, wc: *const ib_wc) -> bool {
    // SAFETY: as the caller guarantees.
    unsafe { Cq::from_raw(ibcq).push(Wc::from_raw(wc)) }
}

/// Has the consumer of vdev CQ `ibcq` told, from the vdev's callback
/// workqueue, of the completions the vdev queued, if it armed the CQ.
///
/// # Safety
///
/// Called by the verbs proxy with a live CQ of a vdev, in any context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cq_kick_later(ibcq: *mut ib_cq) {
    // SAFETY: as the caller guarantees.
    unsafe { Cq::from_raw(ibcq) }.kick_later();
}

/// Member `slot` is going away: no poll of any vdev CQ reads its CQs.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, before the member's QPs are destroyed.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cqs_unhook(bond_ptr: *mut c_void, slot: u32) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    if let Ok(slot) = slot_of(slot) {
        bond.cqs.for_each(|cq| cq.unhook(slot));
    }
}

/// The member's QPs are destroyed: its CQs, unhooked, are freed.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cqs_free_unhooked(bond_ptr: *mut c_void) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    bond.cqs.for_each(Cq::free_unhooked);
}

/// The consumers of every vdev CQ are told of the flushes a detach queued.
///
/// # Safety
///
/// Called by the member's detach with the bond of a live vdev, holding its
/// `objs_lock`, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_cqs_kick_later(bond_ptr: *mut c_void) {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    bond.cqs.for_each(Cq::kick_later);
}

/// Records `qpn` as that of proxy QP `qp`: 0, or -EBUSY if the number is
/// live or in quarantine (a collision), -ENOMEM.
///
/// # Safety
///
/// Called by the verbs proxy with the bond of a live vdev, holding its
/// `objs_lock`, in process context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qpn_claim(
    bond_ptr: *mut c_void,
    qpn: u32,
    qp: *mut c_void,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    from_result(|| {
        bond.qpns.claim(qpn, ProxyQp::new(qp).ok_or(EINVAL)?)?;
        Ok(0)
    })
}

/// Forgets `qpn`, claimed by a QP whose creation then failed.
///
/// # Safety
///
/// As `mrbond_rs_qpn_claim()`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qpn_release(bond_ptr: *mut c_void, qpn: u32) {
    // SAFETY: as the caller guarantees.
    unsafe { bond(bond_ptr) }.qpns.release(qpn);
}

/// `qpn`'s QP is destroyed (`aborted`: after the bond ended its connection
/// exchange): the number goes into quarantine.
///
/// # Safety
///
/// As `mrbond_rs_qpn_claim()`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qpn_quarantine(
    bond_ptr: *mut c_void,
    qpn: u32,
    aborted: bool,
) {
    let end = if aborted {
        QpEnd::ExchangeAborted
    } else {
        QpEnd::Destroyed
    };
    // SAFETY: as the caller guarantees.
    unsafe { bond(bond_ptr) }.qpns.quarantine(qpn, end);
}

/// Drops the quarantines that are over; how many numbers are left, live
/// or in quarantine: those a new member QP can collide with.
///
/// # Safety
///
/// As `mrbond_rs_qpn_claim()`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qpns_prune(bond_ptr: *mut c_void) -> c_ulong {
    // SAFETY: as the caller guarantees.
    let left = unsafe { bond(bond_ptr) }.qpns.prune();
    c_ulong::try_from(left).unwrap_or(c_ulong::MAX)
}

/// The proxy QP that `qpn` is live for, or NULL.
///
/// # Safety
///
/// As `mrbond_rs_qpn_claim()`; the QP stays alive while the caller holds
/// `objs_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qpn_qp(bond_ptr: *mut c_void, qpn: u32) -> *mut c_void {
    // SAFETY: as the caller guarantees.
    unsafe { bond(bond_ptr) }
        .qpns
        .live(qpn)
        .map_or(core::ptr::null_mut(), |qp| qp.as_raw())
}

/// The member slot that sends the MADs of vdev `port`, -1 if none is usable.
///
/// # Safety
///
/// Called by the GSI proxy with the bond of a live vdev, in process context,
/// holding no lock.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_gsi_member(bond_ptr: *mut c_void, port: u32) -> c_int {
    // SAFETY: as the caller guarantees.
    let bond = unsafe { bond(bond_ptr) };
    bond.gsi_member(port)
        .and_then(|s| c_int::try_from(s).ok())
        .unwrap_or(-1)
}

/// The vdev is being freed: drop its bond reference.
///
/// # Safety
///
/// Called exactly once per vdev, by `mrbond_vdev.c`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_vdev_release(bond_ptr: *mut c_void) {
    // SAFETY: the vdev gives back the reference `Vdev::alloc` gave it.
    drop(unsafe { <Arc<Bond> as ForeignOwnable>::from_foreign(bond_ptr) });
}

/// sysfs show of a bond attribute.
///
/// # Safety
///
/// Called by `mrbond_sysfs.c` with a live vdev's bond and the sysfs page.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_bond_attr_show(
    bond_ptr: *mut c_void,
    attr: u32,
    buf: *mut c_char,
) -> isize {
    // SAFETY: as the caller guarantees.
    let (bond, page) = unsafe { (bond(bond_ptr), sysfs_page(buf)) };
    crate::sysfs::bond_show(&bond, attr, page)
}

/// sysfs store of a bond attribute.
///
/// # Safety
///
/// Called by `mrbond_sysfs.c` with a live vdev's bond and `len` readable bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_bond_attr_store(
    bond_ptr: *mut c_void,
    attr: u32,
    buf: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, input) = unsafe { (bond(bond_ptr), sysfs_input(buf, len)) };
    crate::sysfs::bond_store(&bond, attr, input)
}

/// sysfs show of a member attribute.
///
/// # Safety
///
/// Called by `mrbond_sysfs.c` with a live vdev's bond and the sysfs page.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_attr_show(
    bond_ptr: *mut c_void,
    slot: u32,
    attr: u32,
    buf: *mut c_char,
) -> isize {
    // SAFETY: as the caller guarantees.
    let (bond, page) = unsafe { (bond(bond_ptr), sysfs_page(buf)) };
    crate::sysfs::member_show(&bond, slot, attr, page)
}

/// sysfs store of a member attribute.
///
/// # Safety
///
/// Called by `mrbond_sysfs.c` with a live vdev's bond and `len` readable bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_attr_store(
    bond_ptr: *mut c_void,
    slot: u32,
    attr: u32,
    buf: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, input) = unsafe { (bond(bond_ptr), sysfs_input(buf, len)) };
    crate::sysfs::member_store(&bond, slot, attr, input)
}

/// `.remove` of one of our own vdevs: the RDMA core unregisters it (e.g.
/// `rdma link del`); forget its bond.
///
/// # Safety
///
/// Called only by the glue's `ib_client.remove` with its context and a vdev.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_vdev_unregistering(ctx: *mut c_void, v: *mut RawVdev) {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.vdev_unregistering(v);
}

// ---- knobs: ECN, DCQCN, PFC (include/rdma_mrbond_knobs.h) ----

/// Traffic class of a bond QP; see `include/rdma_mrbond_knobs.h`.
///
/// # Safety
///
/// Called by the vdev's data path with the bond pointer of a live vdev.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_qp_traffic_class(
    bond_ptr: *mut c_void,
    requested: u8,
) -> u8 {
    // SAFETY: the vdev holds its reference, as the caller guarantees.
    unsafe { bond(bond_ptr) }.knobs.qp_traffic_class(requested)
}

/// The knob snapshot of the bond named `name`, for BOND_GET.
///
/// # Safety
///
/// Called by the netlink glue with its context, a valid name and a
/// writable, zeroed `info`.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_knobs_info(
    ctx: *mut c_void,
    name: *const c_char,
    info: *mut KnobsInfo,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (reg, name, info) = unsafe { (registry(ctx), c_bytes(name), &mut *info) };
    match crate::knobs::netlink::knobs_info(reg, name, info) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// sysfs show of `mrbond/ecn/*` and `mrbond/pfc/*`.
///
/// # Safety
///
/// Called by `mrbond_sysfs_knobs.c` with a live vdev's bond and the sysfs page.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_knob_attr_show(
    bond_ptr: *mut c_void,
    attr: u32,
    buf: *mut c_char,
) -> isize {
    // SAFETY: as the caller guarantees.
    let (bond, page) = unsafe { (bond(bond_ptr), sysfs_page(buf)) };
    crate::knobs::sysfs::bond_show(&bond, attr, page)
}

/// sysfs store of `mrbond/ecn/*` and `mrbond/pfc/*`.
///
/// # Safety
///
/// Called by `mrbond_sysfs_knobs.c` with a live vdev's bond and `len`
/// readable bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_knob_attr_store(
    bond_ptr: *mut c_void,
    attr: u32,
    buf: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, input) = unsafe { (bond(bond_ptr), sysfs_input(buf, len)) };
    crate::knobs::sysfs::bond_store(&bond, attr, input)
}

/// sysfs show of `members/<dev>/pfc_override`.
///
/// # Safety
///
/// Called by `mrbond_sysfs_knobs.c` with a live vdev's bond and the sysfs page.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_knob_attr_show(
    bond_ptr: *mut c_void,
    slot: u32,
    attr: u32,
    buf: *mut c_char,
) -> isize {
    // SAFETY: as the caller guarantees.
    let (bond, page) = unsafe { (bond(bond_ptr), sysfs_page(buf)) };
    crate::knobs::sysfs::member_show(&bond, slot, attr, page)
}

/// sysfs store of `members/<dev>/pfc_override`.
///
/// # Safety
///
/// Called by `mrbond_sysfs_knobs.c` with a live vdev's bond and `len`
/// readable bytes.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_member_knob_attr_store(
    bond_ptr: *mut c_void,
    slot: u32,
    attr: u32,
    buf: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (bond, input) = unsafe { (bond(bond_ptr), sysfs_input(buf, len)) };
    crate::knobs::sysfs::member_store(&bond, slot, attr, input)
}
