// SPDX-License-Identifier: GPL-2.0

//! Crate root of `rdma_mrbond_kunit.ko`: runs the policy core's self-check
//! scenarios inside the kernel.
//!
//! The scenarios are the very source files the module compiles
//! (`rust/policy/`), and the host crate runs the same list under `cargo test`,
//! so a pass here proves the shared policy builds and behaves identically in
//! kernel context. 6.12 has no `#[kunit_tests]`; the suite is declared in C
//! (`shim/policy_kunit_glue.c`) and calls the `extern "C"` functions below.

#[path = "../policy/mod.rs"]
pub mod policy;

use kernel::ffi::c_int;

/// Writes a `&'static str` to the caller's (pointer, length) out-parameters.
///
/// # Safety
///
/// `ptr` and `len` must be valid for writes.
unsafe fn write_str(text: &'static str, ptr: *mut *const u8, len: *mut usize) {
    // SAFETY: the caller guarantees both pointers are valid for writes.
    unsafe {
        ptr.write(text.as_ptr());
        len.write(text.len());
    }
}

/// The number of self-check scenarios.
#[no_mangle]
pub extern "C" fn mrbond_kunit_case_count() -> usize {
    policy::selfcheck::CASES.len()
}

/// Stores the name of scenario `index` (not NUL-terminated) and returns 0, or
/// returns -1 if there is no such scenario.
///
/// # Safety
///
/// `name` and `len` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn mrbond_kunit_case_name(
    index: usize,
    name: *mut *const u8,
    len: *mut usize,
) -> c_int {
    match policy::selfcheck::CASES.get(index) {
        Some((case_name, _)) => {
            // SAFETY: the caller guarantees the out-parameters are writable.
            unsafe { write_str(case_name, name, len) };
            0
        }
        None => -1,
    }
}

/// Runs scenario `index`: returns 0 on success; on failure returns 1 and
/// stores the failure message (not NUL-terminated); -1 for no such scenario.
///
/// # Safety
///
/// `msg` and `len` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn mrbond_kunit_case_run(
    index: usize,
    msg: *mut *const u8,
    len: *mut usize,
) -> c_int {
    let Some((_, case)) = policy::selfcheck::CASES.get(index) else {
        return -1;
    };
    match case() {
        Ok(()) => 0,
        Err(failure) => {
            // SAFETY: the caller guarantees the out-parameters are writable.
            unsafe { write_str(failure, msg, len) };
            1
        }
    }
}
