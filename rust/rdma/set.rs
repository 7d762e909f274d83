// SPDX-License-Identifier: GPL-2.0

//! The live objects of one kind of a device (its PDs, its CQs), for what a
//! device-wide event must do to each: a member going away frees its member
//! PDs and CQs.

use core::ptr::NonNull;

use kernel::{
    prelude::*,
    str::CStr,
    sync::{LockClassKey, Mutex},
};

/// A pointer to a live object of an [`ObjectSet`].
struct ObjectRef<T>(NonNull<T>);

// SAFETY: the set hands the object only to a closure run under its lock, as
// a shared reference; `T: Sync` makes that reference usable from any
// thread.
unsafe impl<T: Sync> Send for ObjectRef<T> {}

/// The live objects of one kind of a device.
///
/// # Invariants
///
/// Every pointer in `objects` is that of a live `T`: its adapter adds an
/// object once it is initialised, and ends its life only under `objects`'
/// lock, after removing it.
#[pin_data]
pub(crate) struct ObjectSet<T> {
    /// Objects join and leave, and walks run, under this lock (named by
    /// the owner of the set). Inside the vdev's objects lock; only the
    /// objects' own locks nest inside. Free slots (`None`) are reused:
    /// 6.12's `KVec` cannot remove.
    #[pin]
    objects: Mutex<KVec<Option<ObjectRef<T>>>>,
}

impl<T: Sync> ObjectSet<T> {
    /// An empty set whose lock is `name`, of lock class `key`.
    pub(crate) fn new(name: &'static CStr, key: &'static LockClassKey) -> impl PinInit<Self> {
        pin_init!(Self {
            objects <- Mutex::new(KVec::new(), name, key),
        })
    }

    /// Adds `object`, just initialised.
    pub(super) fn insert(&self, object: &T) -> Result {
        let new = ObjectRef(NonNull::from(object));
        let mut objects = self.objects.lock();
        // INVARIANT: `object` is live until `remove_then` takes it out.
        match objects.iter_mut().find(|o| o.is_none()) {
            Some(free) => *free = Some(new),
            None => objects.push(Some(new), GFP_KERNEL).map_err(|_| ENOMEM)?,
        }
        Ok(())
    }

    /// Removes the object at `object` and runs `end` (which ends its life)
    /// before anyone can walk the set again.
    pub(super) fn remove_then(&self, object: *const T, end: impl FnOnce()) {
        let mut objects = self.objects.lock();
        if let Some(slot) = objects.iter_mut().find(|o| {
            o.as_ref()
                .is_some_and(|o| o.0.as_ptr().cast_const() == object)
        }) {
            *slot = None;
        }
        end();
    }

    /// Runs `f` on every live object, none joining or leaving meanwhile.
    /// May sleep.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&T)) {
        let objects = self.objects.lock();
        for o in objects.iter().flatten() {
            // SAFETY: by the type invariant the object is live while it is
            // in the set, and it cannot leave while the lock is held.
            f(unsafe { o.0.as_ref() });
        }
    }
}
