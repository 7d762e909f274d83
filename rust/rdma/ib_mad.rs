// SPDX-License-Identifier: GPL-2.0

//! MADs as the RDMA core hands them over (`struct ib_mad`, aligned for its
//! header's 64-bit transaction ID) and as the driver reads and writes them:
//! `IB_MGMT_MAD_SIZE` bytes, whose fields `policy::mad` and `policy::pma`
//! know.

use super::{bindings, gsi::MAD_SIZE};

const _: () = assert!(core::mem::size_of::<bindings::ib_mad>() == MAD_SIZE);

/// `bytes` as an `ib_mad`.
pub(crate) fn to_ib_mad(bytes: &[u8; MAD_SIZE]) -> bindings::ib_mad {
    // SAFETY: all zeroes is a valid `ib_mad` (bytes and integers).
    let mut mad: bindings::ib_mad = unsafe { core::mem::zeroed() };
    // SAFETY: both are MAD_SIZE bytes (asserted above) and do not overlap;
    // any bytes are a valid `ib_mad`.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), (&raw mut mad).cast::<u8>(), MAD_SIZE)
    };
    mad
}

/// The bytes of `mad`.
pub(crate) fn bytes_of(mad: &bindings::ib_mad) -> [u8; MAD_SIZE] {
    // SAFETY: `mad` is MAD_SIZE initialised bytes (asserted above).
    unsafe { *(mad as *const bindings::ib_mad).cast::<[u8; MAD_SIZE]>() }
}
