// SPDX-License-Identifier: GPL-2.0

//! Contents of `/sys/class/infiniband/<bond>/mrbond/`: formatting and
//! writes (`Documentation/ABI/testing/sysfs-class-infiniband-mrbond`), which
//! go through the option table. A refused write returns `-EINVAL` and
//! changes nothing.

#![deny(unsafe_code)]

use kernel::prelude::*;

use crate::{
    bond::{self, utilisation, Bond},
    ffi::{self, sysfs_attr::*},
    options,
    policy::{
        knobs,
        options::{admin_name, BondOption, MemberOption},
        MemberIndex,
    },
    text::{emit, BufWriter},
};

fn ifname(ifindex: u32) -> [u8; 16] {
    let mut name = [0u8; 16];
    if !ffi::netdev_name(ifindex, &mut name) {
        name = [0; 16];
    }
    name
}

fn as_str(bytes: &[u8]) -> &str {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    core::str::from_utf8(bytes.get(..end).unwrap_or(&[])).unwrap_or("?")
}

/// Shows a bond attribute.
pub(crate) fn bond_show(bond: &Bond, attr: u32, page: &mut [u8]) -> isize {
    match attr {
        BOND_MODE => emit(
            page,
            format_args!(
                "{}\n",
                match bond.mode {
                    knobs::BondMode::Rail => "rail",
                    knobs::BondMode::ActiveBackup => "active-backup",
                }
            ),
        ),
        BOND_POLICY => {
            let p = bond.state.lock().placer.policy();
            emit(page, format_args!("{}\n", p.name()))
        }
        BOND_MEMBERS => {
            let st = bond.state.lock();
            let mut w = BufWriter::new(page);
            for m in st.members.iter().flatten() {
                let _ = core::fmt::Write::write_fmt(&mut w, format_args!("{}\n", m.name.as_cstr()));
            }
            isize::try_from(w.len()).unwrap_or(0)
        }
        BOND_USABLE => {
            let n = bond.state.lock().elig.usable_mask().count();
            emit(page, format_args!("{}\n", n))
        }
        BOND_LACP_SOURCE => {
            let name = ifname(bond.lacp_source);
            emit(page, format_args!("{}\n", as_str(&name)))
        }
        BOND_SPEED => {
            // Netdevs gathered under the lock, speeds read without it
            // (ethtool takes RTNL).
            let mut netdevs = [0u32; crate::ffi::MAX_MEMBERS];
            {
                let st = bond.state.lock();
                let usable = st.elig.usable_mask();
                for (slot, (dst, m)) in netdevs.iter_mut().zip(st.members.iter()).enumerate() {
                    if let Some(m) = m {
                        if MemberIndex::new(slot).is_some_and(|i| usable.contains(i)) {
                            *dst = m.netdev;
                        }
                    }
                }
            }
            let total = netdevs.iter().filter(|&&n| n != 0).fold(0u64, |acc, &n| {
                acc.saturating_add(u64::from(ffi::netdev_speed_mbps(n)))
            });
            emit(page, format_args!("{}\n", total))
        }
        _ => EINVAL.to_errno() as isize,
    }
}

/// Stores a bond attribute (only `policy` is writable).
pub(crate) fn bond_store(bond: &Bond, attr: u32, input: &[u8]) -> i32 {
    let opt = (attr == BOND_POLICY).then_some(BondOption::Policy);
    options::store_bond(bond, opt, input)
}

/// Shows a member attribute.
pub(crate) fn member_show(bond: &Bond, slot: u32, attr: u32, page: &mut [u8]) -> isize {
    let Some(m) = usize::try_from(slot).ok().and_then(MemberIndex::new) else {
        return EINVAL.to_errno() as isize;
    };
    // The data path's counters, lock-free: a show may run while the vdev
    // lock is held to remove this very file.
    let load = bond
        .counters
        .get(m.get())
        .map(|c| c.load())
        .unwrap_or_default();
    match attr {
        MEMBER_QPS => return emit(page, format_args!("{}\n", load.qps)),
        MEMBER_OUTSTANDING => return emit(page, format_args!("{}\n", load.outstanding)),
        _ => {}
    }
    let st = bond.state.lock();
    let Some(Some(member)) = st.members.get(m.get()) else {
        return ENODEV.to_errno() as isize;
    };
    let status = st.elig.status(m);
    match attr {
        MEMBER_NETDEV => {
            let name = ifname(member.netdev);
            emit(page, format_args!("{}\n", as_str(&name)))
        }
        MEMBER_STATE => emit(
            page,
            format_args!("{}\n", bond::usability_name(status.usability)),
        ),
        MEMBER_REASON => emit(page, format_args!("{}\n", status.reason.name())),
        MEMBER_WEIGHT => emit(page, format_args!("{}\n", st.placer.admin_weight(m))),
        MEMBER_ADMIN => emit(page, format_args!("{}\n", admin_name(member.admin))),
        MEMBER_TRANSITIONS => emit(page, format_args!("{}\n", member.transitions)),
        MEMBER_LACP => {
            if member.seen.bond_slave != 0 {
                emit(
                    page,
                    format_args!(
                        "link_up={} tx_enabled={}\n",
                        member.seen.link_up, member.seen.tx_enabled
                    ),
                )
            } else {
                emit(page, format_args!("none\n"))
            }
        }
        MEMBER_UTILISATION => match utilisation::utilisation_of(&st, m) {
            Some(u) => emit(page, format_args!("{u}\n")),
            None => emit(page, format_args!("unknown\n")),
        },
        MEMBER_CAPACITY => emit(page, format_args!("{}\n", member.capacity_mbps)),
        _ => EINVAL.to_errno() as isize,
    }
}

/// Stores a member attribute (`weight`, `admin`, `capacity_mbps`).
pub(crate) fn member_store(bond: &Bond, slot: u32, attr: u32, input: &[u8]) -> i32 {
    let opt = match attr {
        MEMBER_WEIGHT => Some(MemberOption::Weight),
        MEMBER_CAPACITY => Some(MemberOption::CapacityMbps),
        MEMBER_ADMIN => Some(MemberOption::Admin),
        _ => None,
    };
    options::store_member(bond, slot, opt, input)
}
