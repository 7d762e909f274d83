// SPDX-License-Identifier: GPL-2.0

//! Live utilisation of the members, which WRR weighs (`policy::wrr`): each
//! member's transmit rate, sampled every [`SAMPLE_PERIOD_MS`] from where its
//! RDMA traffic is counted, against its capacity.
//!
//! Where the traffic is counted: software RoCE (rxe, any member on virtual
//! DMA) sends through its netdev, so the netdev's `tx_bytes` carries it. A
//! PCI HCA's RoCE traffic bypasses its netdev counters; such a member hosts
//! no QPs yet (the verbs proxy refuses it at attach), so it is not sampled
//! and shows no utilisation rather than a wrong one.
//!
//! The capacity is the member's `capacity_mbps` knob when set (a rail
//! limited elsewhere: a shaped link, an oversubscribed uplink), else the
//! netdev's link speed. Without either the member's utilisation is unknown:
//! it weighs as idle and reports so.

#![deny(unsafe_code)]

use super::{Bond, BondState, Member};
use crate::{
    ffi::{self, MAX_MEMBERS},
    policy::MemberIndex,
};

/// Time between two samples of every member.
pub(crate) const SAMPLE_PERIOD_MS: u32 = 1000;

/// A member's transmit counter at one sample.
#[derive(Clone, Copy)]
pub(crate) struct TxSample {
    /// The netdev it was read from: a member that moves starts afresh.
    pub(crate) netdev: u32,
    pub(crate) tx_bytes: u64,
    pub(crate) at_ns: u64,
}

/// What one sample read for a member, outside the bond's locks.
#[derive(Clone, Copy)]
struct Reading {
    netdev: u32,
    tx_bytes: Option<u64>,
    capacity_mbps: u32,
}

/// Whether a member's RDMA traffic shows in its netdev's counters.
fn counted_in_netdev(member: &Member) -> bool {
    member.dev.as_ref().is_some_and(|d| d.uses_virt_dma())
}

impl Bond {
    /// Takes one sample of every member's transmit rate and feeds it to the
    /// placer. Runs on the module's ordered workqueue; reads the counters
    /// and link speeds (RTNL) with no bond lock held.
    pub(crate) fn sample_utilisation(&self) {
        let mut wanted: [Option<(u32, u32)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        {
            let st = self.state.lock();
            for (dst, member) in wanted.iter_mut().zip(st.members.iter()) {
                if let Some(m) = member.as_ref().filter(|m| counted_in_netdev(m)) {
                    *dst = (m.netdev != 0).then_some((m.netdev, m.capacity_mbps));
                }
            }
        }
        let mut readings: [Option<Reading>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        for (dst, want) in readings.iter_mut().zip(wanted.iter()) {
            let Some((netdev, capacity)) = *want else {
                continue;
            };
            *dst = Some(Reading {
                netdev,
                tx_bytes: ffi::netdev_tx_bytes(netdev),
                capacity_mbps: if capacity != 0 {
                    capacity
                } else {
                    ffi::netdev_speed_mbps(netdev)
                },
            });
        }
        let now = ffi::now_ns();
        let mut guard = self.state.lock();
        let st = &mut *guard;
        for (slot, reading) in readings.iter().enumerate() {
            let Some(m) = MemberIndex::new(slot) else {
                continue;
            };
            let Some(Some(member)) = st.members.get_mut(slot) else {
                continue;
            };
            let Some(r) = reading.filter(|r| r.netdev == member.netdev) else {
                // Not sampled, or it moved while we read: start afresh.
                member.tx_last = None;
                st.placer.clear_utilisation(m);
                continue;
            };
            let last = member.tx_last.filter(|l| l.netdev == r.netdev);
            member.tx_last = r.tx_bytes.map(|tx_bytes| TxSample {
                netdev: r.netdev,
                tx_bytes,
                at_ns: now,
            });
            match (last, r.tx_bytes) {
                // A counter that went back (the netdev was reset) gives no rate.
                (Some(l), Some(b)) if r.capacity_mbps != 0 && b >= l.tx_bytes => {
                    let delta = b.saturating_sub(l.tx_bytes);
                    let interval = now.saturating_sub(l.at_ns);
                    let _ = st
                        .placer
                        .update_utilisation(m, delta, interval, r.capacity_mbps);
                }
                (_, None) => st.placer.clear_utilisation(m),
                _ if r.capacity_mbps == 0 => st.placer.clear_utilisation(m),
                // The first reading of a counter: a rate needs two.
                _ => {}
            }
        }
    }
}

/// A member's utilisation in permille of its capacity, `None` while unknown.
pub(crate) fn utilisation_of(bond_state: &BondState, m: MemberIndex) -> Option<u16> {
    bond_state
        .placer
        .utilisation_known(m)
        .then(|| bond_state.placer.utilisation(m))
}
