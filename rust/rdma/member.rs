// SPDX-License-Identifier: GPL-2.0

//! Members coming and going under a device's objects, as its driver says:
//! a member that attaches may host objects; one that turns unusable has
//! its QPs moved to ERR (the member flushes them) and reported fatal; one
//! that goes away loses its objects, and every WR still outstanding on
//! them completes with a flush from the device's rings. The device itself
//! stays: nvme-rdma deletes, rather than reconnects, the controllers of a
//! device that disappears.
//!
//! The order of a departure is what keeps it memory safe, so it lives
//! here, not in the driver: no poll may read a member CQ once its QPs are
//! destroyed, MRs are orphaned before the PDs they were made in go, and
//! the consumers learn of the flushes before they learn that the QPs died.

use kernel::prelude::*;

use super::{
    cq::Cq,
    device::{Device, DeviceOps},
    member_device::IbDevice,
    qp_path::{QpPath, QpWindow},
    qp_set, tfo_move,
};
use crate::policy::MAX_MEMBERS;

/// What a member's departure did.
pub(crate) struct Departure {
    /// Member QPs destroyed.
    pub(crate) qps: u32,
    /// WRs completed with a flush error by the device.
    pub(crate) flushed: u64,
}

fn check_slot(slot: usize) -> Result {
    if slot >= MAX_MEMBERS {
        return Err(EINVAL);
    }
    Ok(())
}

impl Device {
    /// Member `slot`'s device is `dev` from now on: new objects may go
    /// there, and the slot keeps `dev`'s registration reference until
    /// [`Device::detach_member`] or `.dealloc_driver`. Attaching the device
    /// a slot has is a no-op; another one is `EBUSY` (the old one was never
    /// detached). May sleep.
    ///
    /// # Safety
    ///
    /// The device's ops table must be `T`'s.
    pub(crate) unsafe fn attach_member<T: DeviceOps>(&self, slot: usize, dev: IbDevice) -> Result {
        check_slot(slot)?;
        // SAFETY: the table is `T`'s, as the caller guarantees.
        let data = unsafe { self.driver_data::<T::Data>() }?;
        let mut guard = self.lock_objects();
        if let Some((held, _)) = guard.member(slot) {
            return if held.as_raw() == dev.as_raw() {
                Ok(())
            } else {
                Err(EBUSY)
            };
        }
        let raw = dev.as_raw();
        // SAFETY: the slot holds `dev` from just below until the detach,
        // which drops the table's hold and the member PDs first.
        unsafe { T::mrs(&data).attach(slot, raw) }?;
        // SAFETY: the slot was empty, so no object is left on a device.
        unsafe { guard.set_member(slot, Some(dev)) }.inspect_err(|_| T::mrs(&data).detach(slot))?;
        let port = guard.member(slot).map_or(1, |(_, port)| port);
        // SAFETY: the table is `T`'s; the driver data holding both tables
        // outlives the agents and listeners (the device releases them
        // first, in `.dealloc_driver`); the slot holds the device until
        // after the detach dropped what the agents take, and
        // `.dealloc_driver` releases them before it empties the slots.
        unsafe { T::gsi_members(&data).attach::<T>(self, T::gsi_ports(&data), slot, raw, port) };
        drop(guard);
        Ok(())
    }

    /// Member `slot` turned unusable: each of its QPs enters ERR and is
    /// reported fatal; its objects stay. How many QPs. May sleep.
    ///
    /// # Safety
    ///
    /// The device's ops table must be `T`'s.
    pub(crate) unsafe fn fail_member<T: DeviceOps>(&self, slot: usize) -> u32 {
        // SAFETY: the table is `T`'s, as the caller guarantees.
        let Ok(data) = (unsafe { self.driver_data::<T::Data>() }) else {
            return 0;
        };
        let mut guard = self.lock_objects();
        let try_move =
            |path: &QpPath| tfo_move::rail_failed::<T>(self, &data, &mut guard, path, slot);
        // SAFETY: the objects lock is held.
        unsafe { qp_set::fail_member(T::qp_paths(&data), slot, try_move) }
    }

    /// Member `slot` goes away: its QPs are failed and their member QPs
    /// destroyed, every WR left on them completes with a flush, and its
    /// CQs, MRs and PDs are freed; `None` if no device was attached. Before
    /// the member device's `ib_client.remove` returns. May sleep.
    ///
    /// # Safety
    ///
    /// The device's ops table must be `T`'s.
    pub(crate) unsafe fn detach_member<T: DeviceOps>(&self, slot: usize) -> Option<Departure> {
        check_slot(slot).ok()?;
        // SAFETY: the table is `T`'s, as the caller guarantees.
        let data = unsafe { self.driver_data::<T::Data>() }.ok()?;
        let counters = T::path_counters(&data).get(slot)?;
        let mut guard = self.lock_objects();
        guard.member(slot)?;
        let flushed = counters.flushed();
        // Released after the lock (see `Leaving`).
        let gsi = T::gsi_members(&data).take(slot);
        T::cqs(&data).for_each(|cq| cq.unhook(slot));
        let window = || T::qp_window(QpWindow::DetachQp);
        // SAFETY: the objects lock is held and the member's CQs unhooked.
        let qps = unsafe { qp_set::detach_member(T::qp_paths(&data), counters, slot, window) };
        T::cqs(&data).for_each(Cq::free_unhooked);
        T::mrs(&data).detach(slot);
        T::pds(&data).for_each(|pd| T::member_gone(pd, slot));
        // SAFETY: the member's objects are all gone.
        let held = unsafe { guard.set_member(slot, None) };
        debug_assert!(held.is_ok());
        // Consumers learn of the flushes, then that the QPs are dead.
        T::cqs(&data).for_each(Cq::kick_later);
        qp_set::report_fatal(T::qp_paths(&data), slot);
        drop(guard);
        drop(gsi);
        // The device's registration reference, after the agents on it.
        drop(held);
        Some(Departure {
            qps,
            flushed: counters.flushed().saturating_sub(flushed),
        })
    }
}
