// SPDX-License-Identifier: GPL-2.0

//! RCU read-side critical sections, which 6.12's kernel crate lacks: the
//! data path looks objects up under one ([`Guard`]) while their owners
//! free them only after a grace period ([`synchronize`], `call_rcu`).

use core::marker::PhantomData;

use super::bindings;

/// An RCU read-side critical section, from `new()` to the drop. Objects
/// found under it stay allocated until it ends if their owner frees them
/// after a grace period.
///
/// # Invariants
///
/// The critical section was entered by `new()` on this CPU and is left by
/// the drop; the guard is `!Send`, so both happen in the same context.
pub(crate) struct Guard(PhantomData<*mut ()>);

impl Guard {
    /// Enters a critical section. Nothing under it may sleep.
    pub(crate) fn new() -> Self {
        // SAFETY: always callable; the drop leaves the section.
        unsafe { bindings::mrbond_rdma_rcu_read_lock() };
        // INVARIANT: entered just above.
        Self(PhantomData)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: by the type invariant, `new()` entered it here.
        unsafe { bindings::mrbond_rdma_rcu_read_unlock() };
    }
}

/// Waits until every critical section that began before the call has
/// ended. Sleeps.
pub(crate) fn synchronize() {
    // SAFETY: always callable from process context.
    unsafe { kernel::bindings::synchronize_rcu() };
}
