// SPDX-License-Identifier: GPL-2.0

//! The QPNs of a vdev: which are live, which are in quarantine
//! (`policy::qpn`), and the QP each live one belongs to, for the GSI proxy,
//! which finds the QP a CM MAD speaks for by its QPN.

#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{new_mutex, prelude::*, sync::Mutex};

use crate::{
    ffi::{self, ProxyQp},
    policy::qpn::{QpEnd, QpnState},
};

/// A QPN the vdev knows.
struct Entry {
    qpn: u32,
    state: QpnState,
    /// The QP, while the number is live.
    qp: Option<ProxyQp>,
}

/// The vdev's QPNs.
#[pin_data]
pub(crate) struct QpnTable {
    /// Lock "mrbond:qpns": numbers are claimed, quarantined and looked up
    /// under it. Inside the vdev's objects lock; nothing nests inside.
    /// Free slots (`None`) are reused: 6.12's `KVec` cannot remove.
    #[pin]
    entries: Mutex<KVec<Option<Entry>>>,
    /// Member QPs made again because their number was taken.
    collisions: AtomicU64,
}

impl QpnTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            entries <- new_mutex!(KVec::new(), "mrbond:qpns"),
            collisions: AtomicU64::new(0),
        })
    }

    /// Records `qpn` as `qp`'s; `EBUSY` (a collision, counted) if the
    /// number is live or in quarantine.
    pub(crate) fn claim(&self, qpn: u32, qp: ProxyQp) -> Result {
        let now = ffi::now_ns();
        let mut entries = self.entries.lock();
        let live = Entry {
            qpn,
            state: QpnState::Live,
            qp: Some(qp),
        };
        if let Some(entry) = entries.iter_mut().flatten().find(|e| e.qpn == qpn) {
            if !entry.state.claimable(now) {
                self.collisions.fetch_add(1, Ordering::Relaxed);
                return Err(EBUSY);
            }
            *entry = live;
            return Ok(());
        }
        match entries.iter_mut().find(|e| e.is_none()) {
            Some(free) => *free = Some(live),
            None => entries.push(Some(live), GFP_KERNEL)?,
        }
        Ok(())
    }

    /// Forgets `qpn`, claimed by a QP whose creation then failed.
    pub(crate) fn release(&self, qpn: u32) {
        let mut entries = self.entries.lock();
        if let Some(slot) = entries
            .iter_mut()
            .find(|e| e.as_ref().is_some_and(|e| e.qpn == qpn))
        {
            *slot = None;
        }
    }

    /// `qpn`'s QP ended as `end`: the number goes into quarantine. Needs
    /// no allocation: the live entry becomes the quarantined one.
    pub(crate) fn quarantine(&self, qpn: u32, end: QpEnd) {
        let now = ffi::now_ns();
        let mut entries = self.entries.lock();
        if let Some(entry) = entries.iter_mut().flatten().find(|e| e.qpn == qpn) {
            entry.state = QpnState::after(end, now);
            entry.qp = None;
        }
    }

    /// Drops the quarantines that are over; how many numbers are left
    /// (live, or still in quarantine): those a new member QP can collide
    /// with.
    pub(crate) fn prune(&self) -> usize {
        let now = ffi::now_ns();
        let mut entries = self.entries.lock();
        let mut left = 0;
        for slot in entries.iter_mut() {
            match slot {
                Some(e) if e.state.claimable(now) => *slot = None,
                Some(_) => left += 1,
                None => {}
            }
        }
        left
    }

    /// The QP that `qpn` is live for.
    pub(crate) fn live(&self, qpn: u32) -> Option<ProxyQp> {
        let entries = self.entries.lock();
        entries
            .iter()
            .flatten()
            .find(|e| e.qpn == qpn)
            .and_then(|e| e.qp.clone())
    }

    /// Member QPs made again because their number was taken.
    pub(crate) fn collisions(&self) -> u64 {
        self.collisions.load(Ordering::Relaxed)
    }
}
