// SPDX-License-Identifier: GPL-2.0

//! Rust -> C: the boundary with the C side (`include/rdma_mrbond_glue.h`,
//! `include/rdma_mrbond_knobs.h`).
//!
//! The glue's prototypes and the ABI structs (generated from the headers:
//! `abi_generated.rs`) and safe wrappers around the C objects; the C -> Rust
//! entry points are `entry.rs`. The rest of the crate sees only safe types.

use core::{ffi::c_void, pin::Pin, ptr::NonNull};

use kernel::{error::to_result, ffi::c_int, prelude::*, str::CStr, sync::Arc};

use crate::{
    ctl::bond::Bond,
    inject::{inject, inject_fail, Inject},
    policy::caps::{self, DeviceCaps, Limit},
    policy::congestion::Errno,
    rdma::bindings as rdma,
    rdma::container::{DeviceHold, OwnedDevice},
    vdev::VdevVerbs,
};

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

/// `struct ib_device`, whose layout Rust never looks into.
pub(crate) type RawIbDevice = abi::ib_device;
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

/// The glue's registrations (ib_client, notifier, netlink, link ops).
///
/// # Invariants
///
/// `mrbond_glue_init()` succeeded with a context that outlives this value.
pub(crate) struct Glue(());

/// What the glue calls back into: implemented only by the type the entry
/// points cast the glue's context pointer back to (`entry.rs`), so that
/// `Glue::init` cannot be handed anything else, such as the box holding it.
pub(crate) trait GlueContext {}

impl Glue {
    /// Registers everything; `ctx` receives every callback from now on.
    ///
    /// # Safety
    ///
    /// `ctx` must stay valid until the returned value is dropped.
    pub(crate) unsafe fn init<T: GlueContext>(ctx: Pin<&T>) -> Result<Self> {
        let ctx = core::ptr::from_ref(ctx.get_ref())
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: the caller keeps the context alive until `Drop`; it is
        // pinned, so the pointer stays its address.
        to_result(unsafe { glue::mrbond_glue_init(ctx) })?;
        // INVARIANT: initialised just above.
        Ok(Self(()))
    }

    /// Stops new requests; bonds can then be torn down.
    pub(crate) fn stop(&self) {
        // SAFETY: by the type invariant the glue is registered.
        unsafe { glue::mrbond_glue_stop() };
    }
}

impl Drop for Glue {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the glue is registered, and the
        // context it calls back into outlives this value (module `Drop`).
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

/// Multicasts a member-change event built from `info`.
pub(crate) fn notify_member(info: &BondInfo, slot: u32) {
    // SAFETY: `info` is a valid snapshot for the duration of the call.
    unsafe { glue::mrbond_glue_notify_member(info, slot) }
}

// ---- member RDMA devices ----

/// A member RDMA device the `ib_client` was told about.
///
/// # Invariants
///
/// Every handle holds one registration reference of the device, so the
/// device stays registered while it exists: the RDMA core's unregistration
/// waits for the references after calling the `ib_client` `.remove`, which
/// deletes every handle (under the registry and bond locks). A handle kept
/// past `.remove` makes that unregistration wait, never a use after free.
pub(crate) struct IbDevice {
    ptr: NonNull<RawIbDevice>,
}

// SAFETY: the device is usable from any thread; the invariant above is upheld
// by the locks that protect every handle, not by the thread that holds it.
unsafe impl Send for IbDevice {}

impl Drop for IbDevice {
    fn drop(&mut self) {
        // SAFETY: by the invariant this handle holds one reference.
        unsafe { rdma::ib_device_put(self.rdma()) }
    }
}

impl IbDevice {
    /// A handle of a device the core announced to our `ib_client` `.add`;
    /// `None` if it is no longer registered.
    ///
    /// # Safety
    ///
    /// `ptr` must point to an `ib_device` the core has not freed: one it
    /// passed to `.add`, before the matching `.remove` returned.
    pub(crate) unsafe fn hold(ptr: NonNull<RawIbDevice>) -> Option<Self> {
        // SAFETY: the caller guarantees the device is alive.
        let held = unsafe { rdma::mrbond_rdma_device_try_get(ptr.as_ptr().cast()) };
        // INVARIANT: the registration reference was just taken.
        held.then_some(Self { ptr })
    }

    /// Another handle to the same device, with a reference of its own.
    pub(crate) fn duplicate(&self) -> Self {
        // SAFETY: `self` holds a reference, so the count cannot be zero
        // and the device is allocated.
        unsafe { kernel::bindings::refcount_inc(&raw mut (*self.rdma()).refcount) };
        // INVARIANT: the reference was just taken.
        Self { ptr: self.ptr }
    }

    /// Whether both handles name the same device.
    pub(crate) fn same(&self, raw: *const RawIbDevice) -> bool {
        core::ptr::eq(self.ptr.as_ptr(), raw)
    }

    fn raw(&self) -> *mut RawIbDevice {
        self.ptr.as_ptr()
    }

    /// The device as the RDMA bindings name it.
    fn rdma(&self) -> *mut rdma::ib_device {
        self.raw().cast()
    }

    /// The device's name, e.g. `rxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: by the invariant the device is registered; its name is a
        // NUL-terminated array it owns.
        unsafe { CStr::from_char_ptr((*self.rdma()).name.as_ptr()) }
    }

    /// The first port (`rdma_start_port()`: 0 only on a switch).
    fn start_port(&self) -> u32 {
        u32::from(self.core().is_switch() == 0)
    }

    /// The RDMA core's own view of the device (`crate::rdma::bindings`).
    fn core(&self) -> &crate::rdma::bindings::ib_device {
        // SAFETY: by the invariant the device is registered, so alive for
        // as long as `self`; the fields read through this reference are set
        // before registration and not written while it lasts.
        unsafe { &*self.raw().cast::<crate::rdma::bindings::ib_device>() }
    }

    /// The device index, which orders rdma_cm's device list.
    pub(crate) fn index(&self) -> u32 {
        self.core().index
    }

    /// Whether port 1 is `IB_PORT_ACTIVE` (cached state: no RTNL).
    pub(crate) fn port_active(&self) -> bool {
        let mut state = rdma::ib_port_state_IB_PORT_NOP;
        // SAFETY: by the invariant the device is registered; `state` is
        // valid for the call.
        let ret =
            unsafe { rdma::ib_get_cached_port_state(self.rdma(), self.start_port(), &mut state) };
        ret == 0 && state == rdma::ib_port_state_IB_PORT_ACTIVE
    }

    /// Ifindex of port 1's netdev, 0 if none.
    pub(crate) fn netdev_ifindex(&self) -> u32 {
        // SAFETY: by the invariant the device is registered; the netdev
        // comes with a reference, or NULL.
        let ndev = unsafe { rdma::ib_device_get_netdev(self.rdma(), self.start_port()) };
        if ndev.is_null() {
            return 0;
        }
        // SAFETY: held until the put.
        let ifindex = unsafe { rdma::mrbond_rdma_netdev_ifindex(ndev) };
        // SAFETY: the reference `ib_device_get_netdev()` took.
        unsafe { rdma::mrbond_rdma_dev_put(ndev) };
        u32::try_from(ifindex).unwrap_or(0)
    }

    /// Whether the device uses virtual DMA (software RoCE, e.g. rxe): its
    /// traffic goes through its netdev and needs no mapping.
    pub(crate) fn uses_virt_dma(&self) -> bool {
        // ib_uses_virt_dma(), a static inline.
        cfg!(CONFIG_INFINIBAND_VIRT_DMA) && self.core().dma_device.is_null()
    }

    /// The attributes the vdev's intersection reads (`rust/policy/caps.rs`).
    pub(crate) fn caps(&self) -> DeviceCaps {
        let a = &self.core().attrs;
        // A negative `int` limit (never seen in a driver) counts as none.
        let int = |v: c_int| u64::try_from(v).unwrap_or(0);
        let mut caps = DeviceCaps {
            limits: [0; caps::LIMIT_COUNT],
            page_size_cap: a.page_size_cap,
            cap_flags: a.device_cap_flags,
            local_ca_ack_delay: a.local_ca_ack_delay,
        };
        for (limit, v) in Limit::ALL.iter().zip(caps.limits.iter_mut()) {
            *v = match limit {
                Limit::MaxMrSize => a.max_mr_size,
                Limit::MaxQp => int(a.max_qp),
                Limit::MaxQpWr => int(a.max_qp_wr),
                Limit::MaxSendSge => int(a.max_send_sge),
                Limit::MaxRecvSge => int(a.max_recv_sge),
                Limit::MaxSgeRd => int(a.max_sge_rd),
                Limit::MaxCq => int(a.max_cq),
                Limit::MaxCqe => int(a.max_cqe),
                Limit::MaxMr => int(a.max_mr),
                Limit::MaxPd => int(a.max_pd),
                Limit::MaxQpRdAtom => int(a.max_qp_rd_atom),
                Limit::MaxResRdAtom => int(a.max_res_rd_atom),
                Limit::MaxQpInitRdAtom => int(a.max_qp_init_rd_atom),
                Limit::AtomicCap => u64::from(a.atomic_cap),
                Limit::MaskedAtomicCap => u64::from(a.masked_atomic_cap),
                Limit::MaxAh => int(a.max_ah),
                Limit::MaxFastRegPageListLen => u64::from(a.max_fast_reg_page_list_len),
            };
        }
        caps
    }

    /// Whether the device speaks RoCE.
    pub(crate) fn is_roce(&self) -> bool {
        // rdma_protocol_roce(), a static inline.
        let roce = rdma::RDMA_CORE_CAP_PROT_ROCE | rdma::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP;
        let Ok(port) = usize::try_from(self.start_port()) else {
            return false;
        };
        // SAFETY: by the invariant the device is registered, so its port
        // data (indexed by port number) is allocated and immutable.
        let flags = unsafe { (*self.core().port_data.add(port)).immutable.core_cap_flags };
        flags & roce != 0
    }
}

/// A bond's virtual ib_device: the module's only handle, which unregisters
/// or frees it on drop.
pub(crate) struct Vdev(OwnedDevice<VdevVerbs>);

impl Vdev {
    /// Allocates an unregistered vdev that owns `bond`, the driver data its
    /// verbs and callbacks borrow, until its `.dealloc_driver`.
    pub(crate) fn alloc(bond: Arc<Bond>, nports: u32, guid: u64) -> Result<Self> {
        OwnedDevice::new(
            &crate::ffi::entry::VDEV_OPS,
            &crate::ctl::sysfs::LAYOUT,
            bond,
            nports,
            guid,
        )
        .map(Self)
    }

    /// Binds 1-based `port` to the netdev `ifindex` (0 unbinds).
    pub(crate) fn set_port_netdev(&self, port: u32, ifindex: u32) -> Result {
        self.0.set_port_netdev(port, ifindex)
    }

    /// Registers the device as `name` (`mrbond%d` picks the index).
    pub(crate) fn register(&mut self, name: &CStr, user_named: bool) -> Result {
        self.0.register(name, user_named)
    }

    /// The registered device name.
    pub(crate) fn name(&self) -> &CStr {
        self.0.name()
    }

    /// The ib_device index.
    pub(crate) fn index(&self) -> u32 {
        self.0.index()
    }

    /// Whether `raw` is this vdev.
    pub(crate) fn is(&self, raw: *const RawIbDevice) -> bool {
        self.0.is(raw.cast())
    }

    fn device(&self) -> &crate::rdma::device::Device {
        self.0.device()
    }

    /// Lets the vdev create objects on `dev` in member `slot`, until
    /// [`Vdev::member_detach`]. May sleep.
    pub(crate) fn member_attach(&self, slot: usize, dev: &IbDevice) -> Result {
        inject_fail(Inject::AttachFail)?;
        // ULPs map their buffers with the vdev, which has no DMA device:
        // the addresses are kernel virtual ones, right only for software
        // members. A PCI HCA would need them mapped for it at every post.
        if !dev.uses_virt_dma() {
            pr_warn!(
                "{}: {} needs DMA mapping, which the vdev does not do yet: it hosts no objects\n",
                self.name(),
                dev.name()
            );
            return Err(crate::rdma::eopnotsupp());
        }
        // SAFETY: every vdev's ops table is `VdevVerbs`' (`OwnedDevice`);
        // the bond detaches `dev` from the vdev before its
        // `ib_client.remove` returns, and holds a registration reference
        // meanwhile.
        unsafe {
            self.device()
                .attach_member::<VdevVerbs>(slot, dev.raw().cast())
        }
    }

    /// Moves every QP of member `slot`, named `name`, to ERR and reports it
    /// fatal. May sleep.
    pub(crate) fn member_fail(&self, slot: usize, name: &CStr) {
        inject(Inject::MemberFail);
        let start = now_ns();
        // SAFETY: every vdev's ops table is `VdevVerbs`'.
        let qps = unsafe { self.device().fail_member::<VdevVerbs>(slot) };
        if qps > 0 {
            pr_info!(
                "{}: member {} unusable: {} QPs moved to error in {} us\n",
                self.name(),
                name,
                qps,
                now_ns().saturating_sub(start) / 1000
            );
        }
    }

    /// Destroys every object of member `slot`, named `name`, and flushes
    /// its WRs; before the member device's `ib_client.remove` returns. May
    /// sleep.
    pub(crate) fn member_detach(&self, slot: usize, name: &CStr) {
        let start = now_ns();
        // SAFETY: every vdev's ops table is `VdevVerbs`'.
        if let Some(gone) = unsafe { self.device().detach_member::<VdevVerbs>(slot) } {
            pr_info!(
                "{}: member {} detached: {} QPs, {} WRs flushed in {} us\n",
                self.name(),
                name,
                gone.qps,
                gone.flushed,
                now_ns().saturating_sub(start) / 1000
            );
        }
    }

    /// Creates `mrbond/` in sysfs. Never with the bond's state lock held.
    pub(crate) fn sysfs_add(&self) -> Result {
        self.0.sysfs_add()
    }

    /// Creates `mrbond/members/<name>`. Never with the state lock held.
    pub(crate) fn sysfs_member_add(&self, slot: u32, name: &CStr) -> Result {
        self.0.sysfs_member_add(usize::try_from(slot)?, name)
    }

    /// A counted reference for the calls that must not run under the
    /// bond's vdev lock.
    pub(crate) fn hold(&self) -> VdevRef {
        VdevRef(self.0.hold())
    }

    /// Lets go of a vdev the RDMA core is unregistering on its own
    /// (`rdma link del`): called from its `.remove`, where unregistering
    /// again would deadlock.
    pub(crate) fn release_unregistering(self) {
        self.0.release_unregistering();
    }
}

/// A counted reference to a vdev, taken under the bond's vdev lock and used
/// without it: removing a member's sysfs directory waits for its running
/// show/store callbacks, which may take that lock (a PFC store announces
/// the member's quiescing). Only offers calls that stay safe on a vdev the
/// RDMA core unregistered meanwhile.
pub(crate) struct VdevRef(DeviceHold);

impl VdevRef {
    /// Removes `mrbond/members/<slot>`; waits for running show/store
    /// callbacks. A no-op once the vdev's sysfs is gone.
    pub(crate) fn sysfs_member_del(&self, slot: u32) {
        if let Ok(slot) = usize::try_from(slot) {
            self.0.sysfs_member_del(slot);
        }
    }

    /// Reports PORT_ACTIVE or PORT_ERR on `port`, if still registered.
    pub(crate) fn port_event(&self, port: u32, active: bool) {
        self.0.port_event(port, active);
    }
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
        names: &[&CStr; HW_COUNTER_MAX],
        values: &mut [u64; HW_COUNTER_MAX],
    ) -> u32 {
        let ptrs = names.map(|n| n.as_char_ptr());
        // SAFETY: by the invariant the device is registered; `ptrs` holds
        // HW_COUNTER_MAX NUL-terminated strings and `values` as many slots.
        unsafe {
            knobs_glue::mrbond_glue_ibdev_hw_counters(
                self.raw(),
                ptrs.as_ptr(),
                HW_COUNTER_MAX as u32,
                values.as_mut_ptr(),
            )
        }
    }
}
