// SPDX-License-Identifier: GPL-2.0

//! The boundary with the C glue (`include/rdma_mrbond_glue.h`).
//!
//! All `unsafe` of the module lives here: the glue's prototypes, safe wrappers
//! around the C objects it hands out, and the `extern "C"` entry points through
//! which C calls into Rust.

use core::{marker::PhantomData, ptr::NonNull};

use kernel::{error::from_result, prelude::*, str::CStr, types::Opaque};

/// Prototypes of `mrbond_glue.c`; see `include/rdma_mrbond_glue.h`.
mod glue {
    use super::RawIbDevice;
    use kernel::ffi::{c_char, c_int};

    extern "C" {
        pub(super) fn mrbond_glue_client_register() -> c_int;
        pub(super) fn mrbond_glue_client_unregister();
        pub(super) fn mrbond_glue_ib_device_name(dev: *const RawIbDevice) -> *const c_char;
        pub(super) fn mrbond_glue_ib_device_port_count(dev: *const RawIbDevice) -> u32;
        pub(super) fn mrbond_glue_ib_device_driver_id(dev: *const RawIbDevice) -> u32;
    }
}

/// `struct ib_device`, whose layout Rust never looks into.
#[repr(C)]
pub(crate) struct RawIbDevice {
    _opaque: Opaque<[u8; 0]>,
}

/// A borrowed RDMA device handed to us by the RDMA core.
///
/// # Invariants
///
/// `ptr` points to a registered `struct ib_device` that stays valid for `'a`.
pub(crate) struct IbDevice<'a> {
    ptr: NonNull<RawIbDevice>,
    _lifetime: PhantomData<&'a RawIbDevice>,
}

impl IbDevice<'_> {
    /// Wraps a device pointer the RDMA core passed to a client callback.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a registered `struct ib_device` that stays valid for
    /// the returned lifetime (true for the duration of an `ib_client` callback).
    unsafe fn from_raw<'a>(ptr: NonNull<RawIbDevice>) -> IbDevice<'a> {
        // INVARIANT: the caller guarantees validity for `'a`.
        IbDevice {
            ptr,
            _lifetime: PhantomData,
        }
    }

    /// The device's name, e.g. `rxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: by the type invariant the device is valid; its name is a
        // NUL-terminated string owned by the device and stable while registered.
        unsafe { CStr::from_char_ptr(glue::mrbond_glue_ib_device_name(self.ptr.as_ptr())) }
    }

    /// How many ports the device has.
    pub(crate) fn port_count(&self) -> u32 {
        // SAFETY: by the type invariant the device is valid.
        unsafe { glue::mrbond_glue_ib_device_port_count(self.ptr.as_ptr()) }
    }

    /// The driver's `enum rdma_driver_id` value.
    pub(crate) fn driver_id(&self) -> u32 {
        // SAFETY: by the type invariant the device is valid.
        unsafe { glue::mrbond_glue_ib_device_driver_id(self.ptr.as_ptr()) }
    }
}

/// Proof that our `ib_client` is registered; unregisters it when dropped.
///
/// # Invariants
///
/// `mrbond_glue_client_register()` succeeded and has not been undone.
pub(crate) struct ClientRegistration(());

impl ClientRegistration {
    /// Registers the module's `ib_client`.
    pub(crate) fn register() -> Result<Self> {
        // SAFETY: called once from module init, in process context.
        kernel::error::to_result(unsafe { glue::mrbond_glue_client_register() })?;
        // INVARIANT: registration succeeded just above.
        Ok(Self(()))
    }
}

impl Drop for ClientRegistration {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the client is registered; the RDMA core
        // calls `.remove` for every device before this returns.
        unsafe { glue::mrbond_glue_client_unregister() };
    }
}

/// `ib_client.add`: the RDMA core reports a device.
///
/// # Safety
///
/// Called only by the C glue's `ib_client.add` with the device it was given.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ib_device_added(
    dev: *mut RawIbDevice,
) -> kernel::ffi::c_int {
    from_result(|| {
        let dev = NonNull::new(dev).ok_or(EINVAL)?;
        // SAFETY: the RDMA core keeps `dev` registered for the whole callback.
        let dev = unsafe { IbDevice::from_raw(dev) };
        crate::client::device_added(&dev)?;
        Ok(0)
    })
}

/// `ib_client.remove`: a reported device is going away.
///
/// # Safety
///
/// Called only by the C glue's `ib_client.remove` with the device it was given.
#[no_mangle]
pub(crate) unsafe extern "C" fn mrbond_rs_ib_device_removed(dev: *mut RawIbDevice) {
    if let Some(dev) = NonNull::new(dev) {
        // SAFETY: the device stays valid until `.remove` returns.
        let dev = unsafe { IbDevice::from_raw(dev) };
        crate::client::device_removed(&dev);
    }
}
