// SPDX-License-Identifier: GPL-2.0

//! The C -> Rust entry points: every `#[no_mangle] extern "C"` function the
//! C side calls (`mrbond_rs_*` in `include/rdma_mrbond_{glue,vdev,knobs}.h`),
//! each a trampoline that turns its raw arguments into the safe types of
//! [`crate::ffi`] and hands them to the control plane. Rust -> C goes the
//! other way, through the rest of [`crate::ffi`].

use core::{ffi::c_void, ptr::NonNull};

use kernel::{
    error::from_result,
    ffi::{c_char, c_int},
    prelude::*,
    str::CStr,
};

use crate::{
    ctl::registry::Registry,
    ffi::*,
    rdma::{
        device::OpsTable,
        member_device::{IbDevice, RawIbDevice},
    },
    vdev::VdevVerbs,
};

/// The glue's context is the registry: `registry()` casts it back.
impl GlueContext for Registry {
    fn teardown(&self) {
        Registry::teardown(self);
    }
}

/// Recovers the registry from the glue's context pointer.
///
/// # Safety
///
/// `ctx` must be the pointer given to `mrbond_glue_init()`, still alive.
unsafe fn registry<'a>(ctx: *mut c_void) -> &'a Registry {
    // SAFETY: the caller guarantees `ctx` is the live registry.
    unsafe { &*ctx.cast::<Registry>() }
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

/// `ib_client.rename`: a member device (or a candidate) took a new name.
///
/// # Safety
///
/// Called only by the glue's `ib_client.rename` with its context.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ib_device_renamed(
    ctx: *mut c_void,
    _dev: *mut RawIbDevice,
) {
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.device_renamed();
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

// `struct module` has a member of no fields on this arch: only the address
// is taken, as the `module!` macro's `THIS_MODULE` does.
#[allow(improper_ctypes)]
extern "C" {
    /// This module, as modpost's `.mod.c` defines it.
    static __this_module: kernel::types::Opaque<kernel::bindings::module>;
}

/// The vdev's ops table (`vdev/mod.rs`), owned by this module. Exported
/// for the glue, which tells our vdevs from members by it.
#[export_name = "mrbond_rs_dev_ops"]
pub(crate) static VDEV_OPS: OpsTable<VdevVerbs> = OpsTable::new(
    // SAFETY: only the address of `__this_module` is taken.
    unsafe { __this_module.get() },
);

/// `.remove` of one of our own vdevs: the RDMA core unregisters it (e.g.
/// `rdma link del`); forget its bond.
///
/// # Safety
///
/// Called only by the glue's `ib_client.remove` with its context and a vdev.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_vdev_unregistering(
    ctx: *mut c_void,
    ibdev: *mut crate::rdma::bindings::ib_device,
) {
    // SAFETY: the core's `.remove` runs on an allocated device, one of
    // ours as the glue checked.
    let dev = unsafe { crate::rdma::device::Device::from_raw(ibdev) };
    // Before `device_del()`: `rdma link del` unregisters us directly.
    dev.sysfs_del();
    // SAFETY: the glue passes its live context.
    unsafe { registry(ctx) }.vdev_unregistering(ibdev.cast());
}

// ---- knobs: ECN, DCQCN, PFC (include/rdma_mrbond_knobs.h) ----

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
