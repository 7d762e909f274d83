// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables local interrupts while held
//! (`spin_lock_irqsave()`), which 6.12's kernel crate lacks: the data
//! path's locks are taken from a member's completion interrupt as well as
//! from process context.

use kernel::{
    bindings,
    ffi::{c_char, c_ulong},
    sync::lock::{Backend, Lock},
};

/// A `spinlock_t` taken with interrupts disabled (see [`IrqSaveBackend`]).
pub(crate) type SpinLockIrq<T> = Lock<T, IrqSaveBackend>;

/// Creates a [`SpinLockIrq`] initialiser with a name and a lock class of
/// its own, as `kernel::new_spinlock!` does.
macro_rules! new_spinlock_irq {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::rdma::irq_lock::SpinLockIrq::new(
            $inner,
            ::kernel::c_str!($name),
            ::kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_irq;

/// The backend of [`SpinLockIrq`]: the guard keeps the interrupt flags
/// that `spin_lock_irqsave()` saved, and gives them back on unlock.
pub(crate) struct IrqSaveBackend;

// SAFETY: the kernel's `spinlock_t` ensures mutual exclusion; `relock` is
// the default, which locks the same way as `lock`.
unsafe impl Backend for IrqSaveBackend {
    type State = bindings::spinlock_t;
    type GuardState = c_ulong;

    unsafe fn init(ptr: *mut Self::State, name: *const c_char, key: *mut bindings::lock_class_key) {
        // SAFETY: the caller guarantees `ptr` is valid for writes and that
        // `name` and `key` live forever.
        unsafe { bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: the caller guarantees `ptr` is an initialised lock.
        unsafe { super::bindings::mrbond_rdma_spin_lock_irqsave(ptr) }
    }

    unsafe fn unlock(ptr: *mut Self::State, flags: &Self::GuardState) {
        // SAFETY: the caller owns the lock, which `lock` took with these
        // flags.
        unsafe { super::bindings::mrbond_rdma_spin_unlock_irqrestore(ptr, *flags) }
    }
}
