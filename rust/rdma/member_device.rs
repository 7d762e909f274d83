// SPDX-License-Identifier: GPL-2.0

//! The RDMA devices a device of this module is bonded over, in the two
//! ways it holds them.
//!
//! [`IbDevice`] is a counted registration reference: what an `ib_client`
//! keeps of a device it was told about, and what a member slot owns
//! between the member's attach and its detach, so the device cannot finish
//! unregistering under the slot. [`MemberDevice`] is the uncounted view of
//! a slot's device that the objects lock and the MR table lend out, valid
//! while they hold the slot's reference.

use core::ptr::NonNull;

use kernel::{ffi::c_int, str::CStr};

use super::bindings;
use crate::policy::caps::{self, DeviceCaps, Limit};

/// `ib_uses_virt_dma()`, a static inline: whether `dev` takes kernel
/// virtual addresses as its DMA addresses (software RoCE).
fn uses_virt_dma(dev: &bindings::ib_device) -> bool {
    cfg!(CONFIG_INFINIBAND_VIRT_DMA) && dev.dma_device.is_null()
}

/// An `ib_device` as the RDMA core hands it to a callback, for telling
/// devices apart: never dereferenced outside this layer.
pub(crate) type RawIbDevice = bindings::ib_device;

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
    ptr: NonNull<bindings::ib_device>,
}

// SAFETY: the device is usable from any thread; the invariant above is upheld
// by the locks that protect every handle, not by the thread that holds it.
unsafe impl Send for IbDevice {}

impl Drop for IbDevice {
    fn drop(&mut self) {
        // SAFETY: by the invariant this handle holds one reference.
        unsafe { bindings::ib_device_put(self.as_raw()) }
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
    pub(crate) unsafe fn hold(ptr: NonNull<bindings::ib_device>) -> Option<Self> {
        // SAFETY: the caller guarantees the device is alive.
        let held = unsafe { bindings::mrbond_rdma_device_try_get(ptr.as_ptr()) };
        // INVARIANT: the registration reference was just taken.
        held.then_some(Self { ptr })
    }

    /// Another handle to the same device, with a reference of its own.
    pub(crate) fn duplicate(&self) -> Self {
        // SAFETY: `self` holds a reference, so the count cannot be zero
        // and the device is allocated.
        unsafe { kernel::bindings::refcount_inc(&raw mut (*self.as_raw()).refcount) };
        // INVARIANT: the reference was just taken.
        Self { ptr: self.ptr }
    }

    /// Whether both handles name the same device.
    pub(crate) fn same(&self, raw: *const bindings::ib_device) -> bool {
        core::ptr::eq(self.ptr.as_ptr(), raw)
    }

    /// The `ib_device`, for a call that the reference keeps valid.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_device {
        self.ptr.as_ptr()
    }

    /// As [`IbDevice::as_raw`], for a [`MemberDevice`] lent out of it.
    pub(super) fn as_non_null(&self) -> NonNull<bindings::ib_device> {
        self.ptr
    }

    /// The device's node GUID, in host byte order.
    pub(crate) fn node_guid(&self) -> u64 {
        // SAFETY: by the invariant the device is registered; its driver
        // set the GUID before registering it.
        u64::from_be(unsafe { (*self.as_raw()).node_guid })
    }

    /// The device's name, e.g. `rxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: by the invariant the device is registered; its name is a
        // NUL-terminated array it owns.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The answer of the device's own PMA (its `process_mad`, as the core's
    /// sysfs `ports/N/counters/` asks it: no work completion, M_Key
    /// ignored) to `request` for port `port`; `None` if it has no
    /// `process_mad` or does not reply. May sleep.
    pub(crate) fn pma_query(
        &self,
        port: u32,
        request: &[u8; super::gsi::MAD_SIZE],
    ) -> Option<[u8; super::gsi::MAD_SIZE]> {
        let process_mad = self.core().ops.process_mad?;
        let input = super::ib_mad::to_ib_mad(request);
        // SAFETY: all zeroes is a valid `ib_mad` (bytes and integers).
        let mut output: bindings::ib_mad = unsafe { core::mem::zeroed() };
        let mut size = core::mem::size_of::<bindings::ib_mad>();
        let mut pkey_index = 0u16;
        // SAFETY: by the invariant the device is registered; the MADs, the
        // size and the P_Key index are valid for the call, which the core's
        // sysfs makes the same way (NULL work completion and GRH).
        let ret = unsafe {
            process_mad(
                self.as_raw(),
                bindings::ib_process_mad_flags_IB_MAD_IGNORE_MKEY as c_int,
                port,
                core::ptr::null(),
                core::ptr::null(),
                &input,
                &mut output,
                &mut size,
                &mut pkey_index,
            )
        };
        let replied = (bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS
            | bindings::ib_mad_result_IB_MAD_RESULT_REPLY) as c_int;
        (ret & replied == replied).then(|| super::ib_mad::bytes_of(&output))
    }

    /// The first port (`rdma_start_port()`: 0 only on a switch).
    pub(crate) fn start_port(&self) -> u32 {
        u32::from(self.core().is_switch() == 0)
    }

    /// The RDMA core's own view of the device.
    fn core(&self) -> &bindings::ib_device {
        // SAFETY: by the invariant the device is registered, so alive for
        // as long as `self`; the fields read through this reference are set
        // before registration and not written while it lasts.
        unsafe { &*self.as_raw() }
    }

    /// The device index, which orders rdma_cm's device list.
    pub(crate) fn index(&self) -> u32 {
        self.core().index
    }

    /// Whether port 1 is `IB_PORT_ACTIVE` (cached state: no RTNL).
    pub(crate) fn port_active(&self) -> bool {
        let mut state = bindings::ib_port_state_IB_PORT_NOP;
        // SAFETY: by the invariant the device is registered; `state` is
        // valid for the call.
        let ret = unsafe {
            bindings::ib_get_cached_port_state(self.as_raw(), self.start_port(), &mut state)
        };
        ret == 0 && state == bindings::ib_port_state_IB_PORT_ACTIVE
    }

    /// Ifindex of port 1's netdev, 0 if none.
    pub(crate) fn netdev_ifindex(&self) -> u32 {
        // SAFETY: by the invariant the device is registered; the netdev
        // comes with a reference, or NULL.
        let ndev = unsafe { bindings::ib_device_get_netdev(self.as_raw(), self.start_port()) };
        if ndev.is_null() {
            return 0;
        }
        // SAFETY: held until the put.
        let ifindex = unsafe { bindings::mrbond_rdma_netdev_ifindex(ndev) };
        // SAFETY: the reference `ib_device_get_netdev()` took.
        unsafe { bindings::mrbond_rdma_dev_put(ndev) };
        u32::try_from(ifindex).unwrap_or(0)
    }

    /// Whether the device uses virtual DMA (software RoCE, e.g. rxe): its
    /// traffic goes through its netdev and needs no mapping.
    pub(crate) fn uses_virt_dma(&self) -> bool {
        uses_virt_dma(self.core())
    }

    /// The attributes the vdev's intersection reads (`policy::caps`).
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
        let roce = bindings::RDMA_CORE_CAP_PROT_ROCE | bindings::RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP;
        let Ok(port) = usize::try_from(self.start_port()) else {
            return false;
        };
        // SAFETY: by the invariant the device is registered, so its port
        // data (indexed by port number) is allocated and immutable.
        let flags = unsafe { (*self.core().port_data.add(port)).immutable.core_cap_flags };
        flags & roce != 0
    }
}

/// A member's RDMA device, as the table holds it between the member's
/// attach and detach.
///
/// # Invariants
///
/// `0` is a registered device that stays registered while the table holds
/// it and until every [`super::pd::MemberPd`] made on it through the table is
/// dropped (see [`super::mr::MrTable::attach`]).
pub(crate) struct MemberDevice(NonNull<bindings::ib_device>);

// SAFETY: a registered device may be used from any thread.
unsafe impl Send for MemberDevice {}
// SAFETY: as above.
unsafe impl Sync for MemberDevice {}

impl MemberDevice {
    /// Member device `dev`, as the device's objects lock holds it.
    ///
    /// # Safety
    ///
    /// `dev` must stay registered while the handle lives and until every
    /// [`super::pd::MemberPd`] made on it is dropped.
    pub(super) unsafe fn from_raw(dev: NonNull<bindings::ib_device>) -> Self {
        // INVARIANT: as the caller guarantees.
        Self(dev)
    }

    /// The `ib_device`, for the member objects made on it.
    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.as_ptr()
    }

    /// As [`MemberDevice::as_raw`].
    pub(super) fn as_non_null(&self) -> NonNull<bindings::ib_device> {
        self.0
    }

    /// Whether the device needs the buffers it is given DMA-mapped for it
    /// (`!ib_uses_virt_dma()`): a PCI HCA, not software RoCE.
    pub(crate) fn needs_dma_mapping(&self) -> bool {
        // SAFETY: by the type invariant the device is registered; its DMA
        // device is set before registration and not written after.
        !uses_virt_dma(unsafe { self.0.as_ref() })
    }

    /// Whether its `port` is `IB_PORT_ACTIVE` (cached state: no RTNL).
    pub(crate) fn port_active(&self, port: u32) -> bool {
        let mut state = bindings::ib_port_state_IB_PORT_NOP;
        // SAFETY: by the type invariant the device is registered; `state`
        // is valid for the call.
        let ret = unsafe { bindings::ib_get_cached_port_state(self.as_raw(), port, &mut state) };
        ret == 0 && state == bindings::ib_port_state_IB_PORT_ACTIVE
    }

    /// The device's name, e.g. `rxe0`, for a log line.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: by the type invariant the device is registered. Its name
        // is an array in it whose last byte is always NUL (zeroed at
        // allocation; names are shorter), so the read stops inside it even
        // if a rename (`strscpy`) runs meanwhile and the line shows a mix.
        unsafe { CStr::from_char_ptr((*self.0.as_ptr()).name.as_ptr()) }
    }
}
