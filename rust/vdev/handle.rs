// SPDX-License-Identifier: GPL-2.0

//! A bond's vdev as the control plane holds it: the one owner of the
//! registered device ([`Vdev`]), and the counted reference ([`VdevRef`])
//! for the calls that must not run under the bond's vdev lock. Members
//! attach, fail and leave through it, with the log lines an operator reads.

use kernel::{prelude::*, str::CStr, sync::Arc};

use super::VdevVerbs;
use crate::{
    ctl::bond::Bond,
    ffi,
    inject::{inject, inject_fail, Inject},
    rdma::{
        container::{DeviceHold, OwnedDevice},
        member_device::{IbDevice, RawIbDevice},
    },
};

/// A bond's virtual ib_device: the module's only handle, which unregisters
/// or frees it on drop.
pub(crate) struct Vdev(OwnedDevice<VdevVerbs>);

impl Vdev {
    /// Allocates an unregistered vdev that owns `bond`, the driver data its
    /// verbs and callbacks borrow, until its `.dealloc_driver`.
    pub(crate) fn alloc(bond: Arc<Bond>, nports: u32, guid: u64) -> Result<Self> {
        OwnedDevice::new(
            &ffi::entry::VDEV_OPS,
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
        self.0.is(raw)
    }

    /// Lets the vdev create objects on `dev` in member `slot`, until
    /// [`Vdev::member_detach`]. May sleep.
    pub(crate) fn member_attach(&self, slot: usize, dev: &IbDevice) -> Result {
        inject_fail(Inject::AttachFail)?;
        // A member that needs DMA mapping (a PCI HCA) gets the WRs' local
        // DMA buffers mapped for it at each post, and its FRWR MRs' pages
        // at `map_mr_sg` (`rdma::dma`, `rdma::mr_pages`).
        if !dev.uses_virt_dma() {
            pr_info!(
                "{}: {} needs DMA mapping: buffers and MR pages are mapped for it\n",
                self.name(),
                dev.name()
            );
        }
        self.0.attach_member(slot, dev.duplicate())
    }

    /// Moves every QP of member `slot`, named `name`, to ERR and reports it
    /// fatal. May sleep.
    pub(crate) fn member_fail(&self, slot: usize, name: &CStr) {
        inject(Inject::MemberFail);
        let start = ffi::now_ns();
        let qps = self.0.fail_member(slot);
        if qps > 0 {
            pr_info!(
                "{}: member {} unusable: {} QPs moved to error in {} us\n",
                self.name(),
                name,
                qps,
                ffi::now_ns().saturating_sub(start) / 1000
            );
        }
    }

    /// Destroys every object of member `slot`, named `name`, and flushes
    /// its WRs; before the member device's `ib_client.remove` returns. May
    /// sleep.
    pub(crate) fn member_detach(&self, slot: usize, name: &CStr) {
        let start = ffi::now_ns();
        if let Some(gone) = self.0.detach_member(slot) {
            pr_info!(
                "{}: member {} detached: {} QPs, {} WRs flushed in {} us\n",
                self.name(),
                name,
                gone.qps,
                gone.flushed,
                ffi::now_ns().saturating_sub(start) / 1000
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
