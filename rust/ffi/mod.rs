// SPDX-License-Identifier: GPL-2.0

//! Rust -> C: the boundary with the C side (`include/rdma_mrbond_glue.h`,
//! `include/rdma_mrbond_knobs.h`).
//!
//! The glue's prototypes and the ABI structs (generated from the headers:
//! `abi_generated.rs`) and safe wrappers around the C objects; the C -> Rust
//! entry points are `entry.rs`. The rest of the crate sees only safe types.

use core::{ffi::c_void, pin::Pin, ptr::NonNull};

use kernel::{error::to_result, ffi::c_int, prelude::*};

use crate::{policy::congestion::Errno, rdma::bindings as rdma, rdma::member_device::IbDevice};

/// Longest RDMA device name plus its NUL (`IB_DEVICE_NAME_MAX`).
pub(crate) const NAME_MAX: usize = abi::MRBOND_NAME_MAX as usize;
/// `MRBOND_MAX_MEMBERS`, which the policy core has as its own.
pub(crate) const MAX_MEMBERS: usize = abi::MRBOND_MAX_MEMBERS as usize;
const _: () = assert!(MAX_MEMBERS == crate::policy::MAX_MEMBERS);
/// The most SGEs a post may carry: the room of the member's copy of a WR.
pub(crate) const MAX_SGE: u32 = crate::rdma::bindings::MRBOND_RDMA_MAX_SGE;

/// The C side of the ABI, generated from its headers by `tools/abi-regen.sh`
/// (with compile-time layout assertions): no struct shared with C is written
/// twice, and the C functions are declared from their prototypes.
#[allow(
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    unreachable_pub
)]
mod abi {
    use kernel::ffi;
    include!("abi_generated.rs");
}

pub(crate) mod entry;

/// The C glue's functions (see the headers), as `glue::...`.
use abi as glue;

/// `struct mrbond_member_spec`.
pub(crate) type MemberSpec = abi::mrbond_member_spec;
/// `struct mrbond_bond_spec`: one netlink request.
pub(crate) type BondSpec = abi::mrbond_bond_spec;
/// `struct mrbond_member_info`.
pub(crate) type MemberInfo = abi::mrbond_member_info;
/// `struct mrbond_bond_info`: a snapshot for replies, dumps and events.
pub(crate) type BondInfo = abi::mrbond_bond_info;
/// `struct mrbond_netdev_state`.
pub(crate) type NetdevState = abi::mrbond_netdev_state;

impl BondSpec {
    /// The members the request carries.
    pub(crate) fn members(&self) -> &[MemberSpec] {
        let n = usize::try_from(self.nmembers).unwrap_or(0).min(MAX_MEMBERS);
        self.members.get(..n).unwrap_or(&[])
    }
}

// ---- module-wide registrations ----

/// The glue's registrations (ib_client, notifier, netlink, link ops) and
/// the context they call back into, which they own.
///
/// # Invariants
///
/// `mrbond_glue_init()` succeeded with the address of `ctx`, which is
/// pinned and dropped only after `mrbond_glue_exit()` (`Drop`).
pub(crate) struct Glue<T: GlueContext> {
    ctx: Pin<KBox<T>>,
}

/// What the glue calls back into: implemented only by the type the entry
/// points cast the glue's context pointer back to (`entry.rs`).
pub(crate) trait GlueContext {
    /// Ends what the callbacks made, once no new request can come and
    /// while the registrations that report devices leaving still run.
    fn teardown(&self);
}

impl<T: GlueContext> Glue<T> {
    /// Registers everything; `ctx` receives every callback from now on,
    /// until the value is dropped.
    pub(crate) fn new(ctx: Pin<KBox<T>>) -> Result<Self> {
        let ptr = core::ptr::from_ref(ctx.as_ref().get_ref())
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: the context is pinned in a box that the returned value
        // owns and drops only after the glue's exit (`Drop`), so the
        // pointer stays its address for every callback. On failure
        // nothing is registered.
        to_result(unsafe { glue::mrbond_glue_init(ptr) })?;
        // INVARIANT: initialised just above with `ctx`'s address.
        Ok(Self { ctx })
    }
}

impl<T: GlueContext> Drop for Glue<T> {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the glue is registered.
        unsafe { glue::mrbond_glue_stop() };
        self.ctx.teardown();
        // SAFETY: by the type invariant the glue is registered, and the
        // context it calls back into is dropped only after this.
        unsafe { glue::mrbond_glue_exit() };
    }
}

/// Schedules a re-evaluation of every member on the module's workqueue.
pub(crate) fn kick() {
    // SAFETY: callable any time after module init.
    unsafe { glue::mrbond_glue_kick() }
}

/// Sleeps `ms` milliseconds. Process context.
pub(crate) fn sleep_ms(ms: u32) {
    // SAFETY: callable in process context.
    unsafe { kernel::bindings::msleep(ms) }
}

/// Waits `ms` milliseconds: sleeps where the context may, spins where not.
pub(crate) fn wait_ms_any_context(ms: u32) {
    // SAFETY: callable in any context.
    unsafe { rdma::mrbond_rdma_wait_ms(ms) }
}

/// A debugfs directory, removed with everything in it when the handle made
/// by [`DebugfsDir::new`] drops. debugfs failures are ignored, as its API
/// asks: a test build without debugfs just has no files.
///
/// # Invariants
///
/// `dentry` is a debugfs dentry, an error pointer or NULL; `owned` handles
/// remove it on drop, and outlive the handles of its subdirectories.
pub(crate) struct DebugfsDir {
    dentry: *mut kernel::bindings::dentry,
    owned: bool,
}

// SAFETY: debugfs is internally synchronised; the handle only removes.
unsafe impl Send for DebugfsDir {}
// SAFETY: every method takes `&self` and is safe to call concurrently.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    /// Directory `name` at the debugfs root.
    pub(crate) fn new(name: &'static core::ffi::CStr) -> Self {
        // SAFETY: `name` is NUL-terminated; NULL parent: the root.
        let dentry =
            unsafe { rdma::debugfs_create_dir(name.as_ptr().cast(), core::ptr::null_mut()) };
        // INVARIANT: a dentry or an error pointer, removed on drop.
        Self {
            dentry,
            owned: true,
        }
    }

    /// Subdirectory `name`, removed with this one.
    pub(crate) fn subdir(&self, name: &'static core::ffi::CStr) -> Self {
        // SAFETY: `name` is NUL-terminated; debugfs takes an error
        // pointer as a parent and returns one.
        let dentry = unsafe { rdma::debugfs_create_dir(name.as_ptr().cast(), self.dentry) };
        // INVARIANT: removed with its parent, which outlives this handle.
        Self {
            dentry,
            owned: false,
        }
    }

    /// File `name` that reads and writes `value` (removed with the
    /// directory, before the static goes).
    pub(crate) fn atomic_file(
        &self,
        name: &'static core::ffi::CStr,
        mode: u16,
        value: &'static core::sync::atomic::AtomicI32,
    ) {
        // SAFETY: `name` is NUL-terminated; an `AtomicI32` has the layout of
        // an `atomic_t`, which C reads and writes atomically, and lives for
        // the module's lifetime.
        unsafe {
            rdma::debugfs_create_atomic_t(
                name.as_ptr().cast(),
                mode,
                self.dentry,
                value.as_ptr().cast(),
            )
        };
    }
}

impl Drop for DebugfsDir {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: by the invariant ours to remove; NULL and error
            // pointers are no-ops.
            unsafe { rdma::debugfs_remove(self.dentry) };
        }
    }
}

/// The record of an RC QP's connection exchange (`rdma::cm::CmRecord`), as
/// the QPN table keeps it: by address only, handed back to QP1's send work
/// (`rdma::gsi_send`).
#[derive(Clone)]
pub(crate) struct ProxyQp(NonNull<c_void>);

// SAFETY: a pointer the table never dereferences; its users order their
// uses by the vdev's objects lock.
unsafe impl Send for ProxyQp {}

impl ProxyQp {
    /// The QP at `ptr`, or `None` for NULL.
    pub(crate) fn new(ptr: *mut c_void) -> Option<Self> {
        NonNull::new(ptr).map(Self)
    }

    /// The pointer C gave.
    pub(crate) fn as_raw(&self) -> *mut c_void {
        self.0.as_ptr()
    }
}

/// Monotonic nanoseconds.
pub(crate) fn now_ns() -> u64 {
    // SAFETY: a plain clock read.
    unsafe { glue::mrbond_glue_now_ns() }
}

/// Snapshot of a netdev's carrier and bond lower state.
pub(crate) fn netdev_state(ifindex: u32) -> NetdevState {
    let mut st = NetdevState::default();
    // SAFETY: `st` is a valid, writable `struct mrbond_netdev_state`.
    unsafe { glue::mrbond_glue_netdev_state(ifindex, &mut st) };
    st
}

/// Bonding mode (`BOND_MODE_*`) of a bond master.
pub(crate) fn bond_mode(ifindex: u32) -> Result<u32> {
    // SAFETY: a read-only lookup under RCU.
    let mode = unsafe { glue::mrbond_glue_bond_mode(ifindex) };
    to_result(mode)?;
    u32::try_from(mode).map_err(|_| EINVAL)
}

/// The slaves of a bond master (takes RTNL: call with no lock of ours held).
pub(crate) fn bond_slaves(ifindex: u32, out: &mut [u32; MAX_MEMBERS]) -> Result<usize> {
    // SAFETY: `out` holds MAX_MEMBERS writable entries.
    let n = unsafe { glue::mrbond_glue_bond_slaves(ifindex, out.as_mut_ptr(), 16) };
    to_result(n)?;
    usize::try_from(n).map_err(|_| EINVAL)
}

/// Link speed of a netdev in Mb/s, 0 if unknown (takes RTNL: call with no
/// lock of ours held).
pub(crate) fn netdev_speed_mbps(ifindex: u32) -> u32 {
    // SAFETY: a lookup by index; no pointer crosses.
    unsafe { glue::mrbond_glue_netdev_speed_mbps(ifindex) }
}

/// Bytes a netdev has transmitted (its stats64 counter), `None` if gone.
pub(crate) fn netdev_tx_bytes(ifindex: u32) -> Option<u64> {
    let mut tx_bytes = 0u64;
    // SAFETY: a lookup by index under RCU; `tx_bytes` is writable.
    unsafe { glue::mrbond_glue_netdev_tx_bytes(ifindex, &mut tx_bytes) }.then_some(tx_bytes)
}

/// Writes the netdev's name into `out` (NUL-terminated); false if gone.
pub(crate) fn netdev_name(ifindex: u32, out: &mut [u8; 16]) -> bool {
    // SAFETY: `out` has IFNAMSIZ writable bytes.
    unsafe { glue::mrbond_glue_netdev_name(ifindex, out.as_mut_ptr().cast()) == 0 }
}

/// The bits of a bond-change-ntf (`enum rdma_mrbond_bond_change`).
pub(crate) mod bond_change {
    use super::abi;

    pub(crate) const CREATED: u32 = abi::RDMA_MRBOND_BOND_CHANGE_CREATED;
    pub(crate) const DELETED: u32 = abi::RDMA_MRBOND_BOND_CHANGE_DELETED;
    pub(crate) const POLICY: u32 = abi::RDMA_MRBOND_BOND_CHANGE_POLICY;
    pub(crate) const ECN: u32 = abi::RDMA_MRBOND_BOND_CHANGE_ECN;
    pub(crate) const PFC: u32 = abi::RDMA_MRBOND_BOND_CHANGE_PFC;
    pub(crate) const MEMBER_SET: u32 = abi::RDMA_MRBOND_BOND_CHANGE_MEMBER_SET;
    pub(crate) const MEMBER_ADDED: u32 = abi::RDMA_MRBOND_BOND_CHANGE_MEMBER_ADDED;
    pub(crate) const MEMBER_REMOVED: u32 = abi::RDMA_MRBOND_BOND_CHANGE_MEMBER_REMOVED;
}

/// Multicasts a bond-change-ntf for the bond named `name` (NUL-padded; an
/// unregistered bond's empty name sends nothing).
pub(crate) fn notify_bond(name: &[u8; NAME_MAX], ibdev_index: u32, changes: u32) {
    let Ok(name) = core::ffi::CStr::from_bytes_until_nul(name) else {
        return;
    };
    if name.is_empty() {
        return;
    }
    // SAFETY: `name` is NUL-terminated and lives through the call.
    unsafe { glue::mrbond_glue_notify_bond(name.as_ptr().cast(), ibdev_index, changes) }
}

/// Multicasts a member-change event built from `info`.
pub(crate) fn notify_member(info: &BondInfo, slot: u32) {
    // SAFETY: `info` is a valid snapshot for the duration of the call.
    unsafe { glue::mrbond_glue_notify_member(info, slot) }
}

// ---- knobs: ECN, DCQCN, PFC (include/rdma_mrbond_knobs.h) ----

/// `MRBOND_KNOB_ECN_COUNT`: knob ids below it are the ECN settings.
pub(crate) const KNOB_ECN_COUNT: usize = abi::MRBOND_KNOB_ECN_COUNT as usize;
/// `MRBOND_HW_COUNTER_MAX`: the first counters, read from member hw counters.
pub(crate) const HW_COUNTER_MAX: usize = abi::MRBOND_HW_COUNTER_MAX as usize;

/// `struct mrbond_pfc`: `struct ieee_pfc` field by field.
pub(crate) type Pfc = abi::mrbond_pfc;
/// `struct mrbond_ecn_spec`: one ECN_SET request.
pub(crate) type EcnSpec = abi::mrbond_ecn_spec;
/// `struct mrbond_pfc_member_spec`.
pub(crate) type PfcMemberSpec = abi::mrbond_pfc_member_spec;
/// `struct mrbond_pfc_spec`: one PFC_SET request.
pub(crate) type PfcSpec = abi::mrbond_pfc_spec;
/// `struct mrbond_knob_group`.
pub(crate) type KnobGroup = abi::mrbond_knob_group;
/// `struct mrbond_knobs_member`.
pub(crate) type KnobsMember = abi::mrbond_knobs_member;
/// `struct mrbond_knobs_info`: a bond's knob snapshot.
pub(crate) type KnobsInfo = abi::mrbond_knobs_info;

impl Pfc {
    /// The same settings with `pfc_en` replaced.
    pub(crate) fn with_enabled(self, pfc_en: u8) -> Pfc {
        Pfc { pfc_en, ..self }
    }
}

impl PfcSpec {
    /// The member entries the request carries.
    pub(crate) fn members(&self) -> &[PfcMemberSpec] {
        let n = usize::try_from(self.nmembers).unwrap_or(0).min(MAX_MEMBERS);
        self.members.get(..n).unwrap_or(&[])
    }
}

// SAFETY: plain integers and arrays of them, as in C: all zeroes is a
// valid value (the glue kzalloc()s the same struct).
unsafe impl kernel::init::Zeroable for KnobGroup {}
// SAFETY: integers, byte arrays and `KnobGroup`s, all valid when zero.
unsafe impl kernel::init::Zeroable for KnobsMember {}
// SAFETY: integers, arrays and `KnobsMember`s, all valid when zero.
unsafe impl kernel::init::Zeroable for KnobsInfo {}

impl KnobsInfo {
    /// A zeroed snapshot on the heap (it is too large for the stack).
    pub(crate) fn new_boxed() -> Result<KBox<KnobsInfo>> {
        KBox::init(kernel::init::zeroed(), GFP_KERNEL)
    }
}

/// The functions of `shim/mrbond_dcb.c` and the counter reads of the glue.
use abi as knobs_glue;

/// `Ok` for a non-negative return, else its errno.
fn errno_result(ret: c_int) -> core::result::Result<(), Errno> {
    match Errno::from_ret(ret) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// RTNL, held until this guard is dropped: the dcbnl ops need it, and one
/// member's read, change and read-back happen under one hold.
///
/// # Invariants
///
/// RTNL is held by this thread while the value exists.
pub(crate) struct Rtnl(());

impl Rtnl {
    /// Takes RTNL. Never with a lock of ours held: the netdev notifier
    /// takes the registry and bond locks under RTNL.
    pub(crate) fn lock() -> Self {
        // SAFETY: a plain rtnl_lock(); released by `Drop`.
        unsafe { knobs_glue::mrbond_dcb_rtnl_lock() };
        // INVARIANT: taken just above.
        Self(())
    }

    /// dcbnl `ieee_getpfc` of netdev `ifindex`.
    pub(crate) fn get_pfc(&self, ifindex: u32) -> core::result::Result<Pfc, Errno> {
        let mut pfc = Pfc::default();
        // SAFETY: RTNL is held (type invariant); `pfc` is writable.
        errno_result(unsafe { knobs_glue::mrbond_dcb_getpfc(ifindex, &mut pfc) })?;
        Ok(pfc)
    }

    /// dcbnl `ieee_setpfc` of netdev `ifindex`.
    pub(crate) fn set_pfc(&self, ifindex: u32, pfc: &Pfc) -> core::result::Result<(), Errno> {
        // SAFETY: RTNL is held (type invariant); `pfc` is readable.
        errno_result(unsafe { knobs_glue::mrbond_dcb_setpfc(ifindex, pfc) })
    }

    /// Tells DCB listeners (lldpad, `dcb monitor`) that the settings changed.
    pub(crate) fn notify_dcb(&self, ifindex: u32) {
        // SAFETY: RTNL is held (type invariant).
        unsafe { knobs_glue::mrbond_dcb_notify(ifindex) }
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        // SAFETY: RTNL is held by this thread (type invariant).
        unsafe { knobs_glue::mrbond_dcb_rtnl_unlock() }
    }
}

/// IEEE 802.3x pause frames (tx, rx) of a netdev, if its driver counts
/// them (takes RTNL: call with no lock of ours held).
pub(crate) fn pause_stats(ifindex: u32) -> Option<(u64, u64)> {
    let (mut tx, mut rx) = (0u64, 0u64);
    // SAFETY: both out-parameters are writable; no pointer is kept.
    let ret = unsafe { knobs_glue::mrbond_dcb_pause_stats(ifindex, &mut tx, &mut rx) };
    (ret == 0).then_some((tx, rx))
}

impl IbDevice {
    /// Port 1 hw counters named `names`: `values[i]` and bit `i` of the
    /// result for each one the device has. May sleep.
    pub(crate) fn hw_counters(
        &self,
        names: &[&core::ffi::CStr; HW_COUNTER_MAX],
        values: &mut [u64; HW_COUNTER_MAX],
    ) -> u32 {
        let ptrs = names.map(|n| n.as_ptr().cast::<u8>());
        // SAFETY: by the invariant the device is registered; `ptrs` holds
        // HW_COUNTER_MAX NUL-terminated strings and `values` as many slots.
        unsafe {
            knobs_glue::mrbond_glue_ibdev_hw_counters(
                self.as_raw().cast(),
                ptrs.as_ptr(),
                HW_COUNTER_MAX as u32,
                values.as_mut_ptr(),
            )
        }
    }
}
