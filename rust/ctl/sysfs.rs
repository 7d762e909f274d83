// SPDX-License-Identifier: GPL-2.0

//! Contents of `/sys/class/infiniband/<bond>/mrbond/`: its files, and
//! their formatting and writes
//! (`Documentation/ABI/testing/sysfs-class-infiniband-mrbond`), which go
//! through the option table. A refused write returns `-EINVAL` and changes
//! nothing.

#![deny(unsafe_code)]

use core::ffi::CStr;

use kernel::{error::to_result, prelude::*};

use crate::{
    ctl::bond::{self, utilisation, Bond},
    ctl::options,
    ctl::text::{emit, BufWriter},
    ffi, knobs,
    knobs::sysfs::knob_attr,
    policy::{
        congestion::{COUNTER_COUNT, COUNTER_NAMES},
        knobs::{self as knob_policy, Knob},
        options::{admin_name, BondOption, MemberOption},
        MemberIndex,
    },
    rdma::sysfs::{AttrList, Dir, DirType, File, Group, GroupList, Layout},
    vdev::VdevVerbs,
};

/// Which file of `mrbond/` or `mrbond/members/<dev>/` a show or store is
/// for, besides the knob files.
mod attr {
    pub(super) const BOND_MODE: u32 = 0;
    pub(super) const BOND_POLICY: u32 = 1;
    pub(super) const BOND_MEMBERS: u32 = 2;
    pub(super) const BOND_USABLE: u32 = 3;
    pub(super) const BOND_LACP_SOURCE: u32 = 4;
    pub(super) const BOND_SPEED: u32 = 5;
    pub(super) const MEMBER_NETDEV: u32 = 0;
    pub(super) const MEMBER_STATE: u32 = 1;
    pub(super) const MEMBER_REASON: u32 = 2;
    pub(super) const MEMBER_WEIGHT: u32 = 3;
    pub(super) const MEMBER_ADMIN: u32 = 4;
    pub(super) const MEMBER_QPS: u32 = 5;
    pub(super) const MEMBER_OUTSTANDING: u32 = 6;
    pub(super) const MEMBER_TRANSITIONS: u32 = 7;
    pub(super) const MEMBER_LACP: u32 = 8;
    pub(super) const MEMBER_UTILISATION: u32 = 9;
    pub(super) const MEMBER_CAPACITY: u32 = 10;
}
use attr::*;

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
                    knob_policy::BondMode::Rail => "rail",
                    knob_policy::BondMode::ActiveBackup => "active-backup",
                }
            ),
        ),
        BOND_POLICY => {
            let p = bond.state.lock().placer.policy();
            emit(page, format_args!("{}\n", p.name()))
        }
        BOND_MEMBERS => {
            let st = bond.state.lock();
            // One line, space-separated (as bonding's `slaves`).
            let mut w = BufWriter::new(page);
            for (i, m) in st.members.iter().flatten().enumerate() {
                let sep = if i == 0 { "" } else { " " };
                let _ =
                    core::fmt::Write::write_fmt(&mut w, format_args!("{sep}{}", m.name.as_cstr()));
            }
            let _ = core::fmt::Write::write_str(&mut w, "\n");
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
            // One value: the state the two inputs make.
            let state = match (
                member.seen.bond_slave != 0,
                member.seen.link_up != 0,
                member.seen.tx_enabled != 0,
            ) {
                (false, _, _) => "none",
                (true, false, _) => "link-down",
                (true, true, false) => "not-distributing",
                (true, true, true) => "distributing",
            };
            emit(page, format_args!("{state}\n"))
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

/// File ids of the knob files (`knobs::sysfs`): [`KNOB_FILE`] plus the
/// knob's id or its `knob_attr`; below it, the ids of `sysfs_attr`.
const KNOB_FILE: u32 = 0x100;

/// sysfs show of file `id` of directory `dir`.
pub(crate) fn show(bond: &Bond, dir: Dir, id: u32, page: &mut [u8]) -> isize {
    match (dir, id.checked_sub(KNOB_FILE)) {
        (Dir::Device, None) => bond_show(bond, id, page),
        (Dir::Device, Some(knob)) => knobs::sysfs::bond_show(bond, knob, page),
        (Dir::Member(slot), None) => member_show(bond, slot, id, page),
        (Dir::Member(slot), Some(knob)) => knobs::sysfs::member_show(bond, slot, knob, page),
    }
}

/// sysfs store to file `id` of directory `dir`.
pub(crate) fn store(bond: &Bond, dir: Dir, id: u32, input: &[u8]) -> Result {
    to_result(match (dir, id.checked_sub(KNOB_FILE)) {
        (Dir::Device, None) => bond_store(bond, id, input),
        (Dir::Device, Some(knob)) => knobs::sysfs::bond_store(bond, knob, input),
        (Dir::Member(slot), None) => member_store(bond, slot, id, input),
        (Dir::Member(slot), Some(knob)) => knobs::sysfs::member_store(bond, slot, knob, input),
    })
}

type VFile = File<VdevVerbs>;

/// A file of an ECN knob, by its id.
const fn ecn(name: &'static CStr, knob: Knob) -> VFile {
    VFile::rw(name, KNOB_FILE + knob as u32)
}

/// `mrbond/`.
static BOND_FILES: [VFile; 6] = [
    VFile::ro(c"mode", BOND_MODE),
    VFile::rw(c"policy", BOND_POLICY),
    VFile::ro(c"member_list", BOND_MEMBERS),
    VFile::ro(c"usable", BOND_USABLE),
    VFile::ro(c"lacp_source", BOND_LACP_SOURCE),
    VFile::ro(c"speed", BOND_SPEED),
];

/// `mrbond/ecn/`: every ECN knob.
static ECN_FILES: [VFile; ffi::KNOB_ECN_COUNT] = [
    ecn(c"enable", Knob::EcnEnable),
    ecn(c"tclass", Knob::Tclass),
    ecn(c"np_enable", Knob::NpEnable),
    ecn(c"np_min_time_between_cnps", Knob::NpMinTimeBetweenCnps),
    ecn(c"np_cnp_dscp", Knob::NpCnpDscp),
    ecn(c"np_cnp_802p_prio", Knob::NpCnp802pPrio),
    ecn(c"rp_enable", Knob::RpEnable),
    ecn(c"rp_clamp_tgt_rate", Knob::RpClampTgtRate),
    ecn(c"rp_rpg_time_reset", Knob::RpRpgTimeReset),
    ecn(c"rp_rpg_byte_reset", Knob::RpRpgByteReset),
    ecn(c"rp_rpg_threshold", Knob::RpRpgThreshold),
    ecn(c"rp_rpg_ai_rate", Knob::RpRpgAiRate),
    ecn(c"rp_rpg_hai_rate", Knob::RpRpgHaiRate),
    ecn(c"rp_rpg_gd", Knob::RpRpgGd),
    ecn(c"rp_rpg_min_dec_fac", Knob::RpRpgMinDecFac),
    ecn(c"rp_rpg_min_rate", Knob::RpRpgMinRate),
    ecn(c"rp_dce_tcp_g", Knob::RpDceTcpG),
    ecn(c"rp_dce_tcp_rtt", Knob::RpDceTcpRtt),
    ecn(c"rp_initial_alpha_value", Knob::RpInitialAlphaValue),
    ecn(
        c"rp_rate_reduce_monitor_period",
        Knob::RpRateReduceMonitorPeriod,
    ),
];

/// `mrbond/pfc/`.
static PFC_FILES: [VFile; 1] = [VFile::rw(
    c"enable_bitmap",
    KNOB_FILE + knob_attr::PFC_ENABLE,
)];

/// `counters/`, of the bond (sums) and of each member: one file per
/// congestion counter, named as in `policy::congestion::COUNTER_NAMES`.
static COUNTER_FILES: [VFile; COUNTER_COUNT] = {
    let mut files = [const { VFile::ro(c"", 0) }; COUNTER_COUNT];
    let mut i = 0;
    while i < COUNTER_COUNT {
        files[i] = VFile::ro(COUNTER_NAMES[i], KNOB_FILE + knob_attr::COUNTER0 + i as u32);
        i += 1;
    }
    files
};

/// `mrbond/members/<member ibdev>/status/`: a knob's status on the member.
static STATUS_FILES: [VFile; 4] = [
    VFile::ro(c"ecn_enable", KNOB_FILE + knob_attr::STATUS_ECN_ENABLE),
    VFile::ro(c"tclass", KNOB_FILE + knob_attr::STATUS_TCLASS),
    VFile::ro(c"dcqcn", KNOB_FILE + knob_attr::STATUS_DCQCN),
    VFile::ro(c"pfc", KNOB_FILE + knob_attr::STATUS_PFC),
];

/// `mrbond/members/<member ibdev>/`.
static MEMBER_FILES: [VFile; 13] = [
    VFile::ro(c"netdev", MEMBER_NETDEV),
    VFile::ro(c"state", MEMBER_STATE),
    VFile::ro(c"reason", MEMBER_REASON),
    VFile::rw(c"weight", MEMBER_WEIGHT),
    VFile::rw(c"admin", MEMBER_ADMIN),
    VFile::ro(c"qps", MEMBER_QPS),
    VFile::ro(c"outstanding", MEMBER_OUTSTANDING),
    VFile::ro(c"transitions", MEMBER_TRANSITIONS),
    VFile::ro(c"lacp", MEMBER_LACP),
    VFile::ro(c"utilisation", MEMBER_UTILISATION),
    VFile::rw(c"capacity_mbps", MEMBER_CAPACITY),
    VFile::rw(c"pfc_override", KNOB_FILE + knob_attr::PFC_OVERRIDE),
    VFile::ro(c"pfc_target", KNOB_FILE + knob_attr::PFC_TARGET),
];

static BOND_ATTRS: AttrList<VdevVerbs, 7> = AttrList::new(&BOND_FILES);
static ECN_ATTRS: AttrList<VdevVerbs, { ffi::KNOB_ECN_COUNT + 1 }> = AttrList::new(&ECN_FILES);
static PFC_ATTRS: AttrList<VdevVerbs, 2> = AttrList::new(&PFC_FILES);
static COUNTER_ATTRS: AttrList<VdevVerbs, { COUNTER_COUNT + 1 }> = AttrList::new(&COUNTER_FILES);
static STATUS_ATTRS: AttrList<VdevVerbs, 5> = AttrList::new(&STATUS_FILES);
static MEMBER_ATTRS: AttrList<VdevVerbs, 14> = AttrList::new(&MEMBER_FILES);
static BOND_GROUP: Group<VdevVerbs> = Group::new(None, &BOND_ATTRS);
static ECN_GROUP: Group<VdevVerbs> = Group::new(Some(c"ecn"), &ECN_ATTRS);
static PFC_GROUP: Group<VdevVerbs> = Group::new(Some(c"pfc"), &PFC_ATTRS);
static COUNTER_GROUP: Group<VdevVerbs> = Group::new(Some(c"counters"), &COUNTER_ATTRS);
static STATUS_GROUP: Group<VdevVerbs> = Group::new(Some(c"status"), &STATUS_ATTRS);
static MEMBER_GROUP: Group<VdevVerbs> = Group::new(None, &MEMBER_ATTRS);
static BOND_GROUPS: GroupList<VdevVerbs, 5> =
    GroupList::new([&BOND_GROUP, &ECN_GROUP, &PFC_GROUP, &COUNTER_GROUP]);
static MEMBER_GROUPS: GroupList<VdevVerbs, 4> =
    GroupList::new([&MEMBER_GROUP, &STATUS_GROUP, &COUNTER_GROUP]);
static BOND_DIR: DirType<VdevVerbs, 5> = DirType::new(&BOND_GROUPS);
static MEMBER_DIR: DirType<VdevVerbs, 4> = DirType::new(&MEMBER_GROUPS);

/// The vdev's directories: `mrbond/` and `mrbond/members/<member ibdev>/`.
pub(crate) static LAYOUT: Layout<VdevVerbs> = Layout::new(&BOND_DIR, &MEMBER_DIR);
