// SPDX-License-Identifier: GPL-2.0

//! Bindings of the kernel's RDMA core (`<rdma/*.h>`, see `bindings.h`),
//! which 6.12's `kernel::bindings` does not cover, and of the C helpers the
//! abstractions call (`include/rdma_mrbond_rdma_helpers.h`). Kbuild
//! generates them for each kernel build with the kernel's bindgen options
//! and this module's C flags, keeping only the RDMA items: every other type
//! they name is `kernel::bindings`' own, so a `net_device` here is the
//! kernel crate's.
//! Only the abstractions (`crate::rdma`) and `crate::ffi` use them.

#![allow(
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    improper_ctypes,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unreachable_pub,
    unsafe_op_in_unsafe_fn
)]

use kernel::bindings::*;
use kernel::ffi;

include!("bindings_generated.rs");
