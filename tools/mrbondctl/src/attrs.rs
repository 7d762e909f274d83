// SPDX-License-Identifier: GPL-2.0
//! Constants of the `rdma_mrbond` generic netlink family.
//!
//! Every number comes from `include/uapi/rdma_mrbond.h` (ynl-gen-c output
//! of `Documentation/netlink/specs/rdma_mrbond.yaml`) through bindgen
//! (`uapi_generated.rs`, written and checked by `tools/ynl-regen.sh`);
//! this file adds the names and the types.

use std::fmt;
use std::str::FromStr;

use neli::neli_enum;

/// The UAPI header's constants.
#[allow(dead_code, non_camel_case_types, non_upper_case_globals, clippy::all)]
mod uapi {
    include!("uapi_generated.rs");
}
use uapi::*;

/// `RDMA_MRBOND_FAMILY_NAME`
pub const FAMILY_NAME: &str = c_str(RDMA_MRBOND_FAMILY_NAME);
/// `RDMA_MRBOND_FAMILY_VERSION`
pub const FAMILY_VERSION: u8 = RDMA_MRBOND_FAMILY_VERSION as u8;
/// `RDMA_MRBOND_MCGRP_EVENTS`
pub const MCGRP_EVENTS: &str = c_str(RDMA_MRBOND_MCGRP_EVENTS);

/// A UAPI string constant without its NUL, checked at compile time.
const fn c_str(bytes: &'static [u8]) -> &'static str {
    let Some((0, text)) = bytes.split_last() else {
        panic!("UAPI string without its NUL");
    };
    match std::str::from_utf8(text) {
        Ok(t) => t,
        Err(_) => panic!("UAPI string not UTF-8"),
    }
}

/// `enum { RDMA_MRBOND_CMD_* }`: the genetlink `cmd` byte.
#[neli_enum(serialized_type = "u8")]
pub enum Cmd {
    BondGet = RDMA_MRBOND_CMD_BOND_GET as u8,
    BondNew = RDMA_MRBOND_CMD_BOND_NEW as u8,
    BondDel = RDMA_MRBOND_CMD_BOND_DEL as u8,
    BondSet = RDMA_MRBOND_CMD_BOND_SET as u8,
    MemberAdd = RDMA_MRBOND_CMD_MEMBER_ADD as u8,
    MemberDel = RDMA_MRBOND_CMD_MEMBER_DEL as u8,
    MemberSet = RDMA_MRBOND_CMD_MEMBER_SET as u8,
    MemberChangeNtf = RDMA_MRBOND_CMD_MEMBER_CHANGE_NTF as u8,
    EcnSet = RDMA_MRBOND_CMD_ECN_SET as u8,
    PfcSet = RDMA_MRBOND_CMD_PFC_SET as u8,
    BondChangeNtf = RDMA_MRBOND_CMD_BOND_CHANGE_NTF as u8,
}
impl neli::consts::genl::Cmd for Cmd {}

/// `enum { RDMA_MRBOND_A_BOND_* }`: top-level attributes (set "bond").
#[neli_enum(serialized_type = "u16")]
pub enum BondAttr {
    IbdevIndex = RDMA_MRBOND_A_BOND_IBDEV_INDEX as u16,
    Name = RDMA_MRBOND_A_BOND_NAME as u16,
    Mode = RDMA_MRBOND_A_BOND_MODE as u16,
    Policy = RDMA_MRBOND_A_BOND_POLICY as u16,
    LacpSource = RDMA_MRBOND_A_BOND_LACP_SOURCE as u16,
    Member = RDMA_MRBOND_A_BOND_MEMBER as u16,
    UsableMembers = RDMA_MRBOND_A_BOND_USABLE_MEMBERS as u16,
    Placements = RDMA_MRBOND_A_BOND_PLACEMENTS as u16,
    PlacementFailures = RDMA_MRBOND_A_BOND_PLACEMENT_FAILURES as u16,
    Ecn = RDMA_MRBOND_A_BOND_ECN as u16,
    Pfc = RDMA_MRBOND_A_BOND_PFC as u16,
    Counters = RDMA_MRBOND_A_BOND_COUNTERS as u16,
    Changes = RDMA_MRBOND_A_BOND_CHANGES as u16,
}
impl neli::consts::genl::NlAttrType for BondAttr {}

/// `enum { RDMA_MRBOND_A_MEMBER_* }`: attributes nested in `BondAttr::Member`.
#[neli_enum(serialized_type = "u16")]
pub enum MemberAttr {
    Ibdev = RDMA_MRBOND_A_MEMBER_IBDEV as u16,
    NetdevIfindex = RDMA_MRBOND_A_MEMBER_NETDEV_IFINDEX as u16,
    Weight = RDMA_MRBOND_A_MEMBER_WEIGHT as u16,
    Admin = RDMA_MRBOND_A_MEMBER_ADMIN as u16,
    Usability = RDMA_MRBOND_A_MEMBER_USABILITY as u16,
    Reason = RDMA_MRBOND_A_MEMBER_REASON as u16,
    Qps = RDMA_MRBOND_A_MEMBER_QPS as u16,
    Outstanding = RDMA_MRBOND_A_MEMBER_OUTSTANDING as u16,
    Transitions = RDMA_MRBOND_A_MEMBER_TRANSITIONS as u16,
    LacpSlave = RDMA_MRBOND_A_MEMBER_LACP_SLAVE as u16,
    LinkUp = RDMA_MRBOND_A_MEMBER_LINK_UP as u16,
    TxEnabled = RDMA_MRBOND_A_MEMBER_TX_ENABLED as u16,
    KnobStatus = RDMA_MRBOND_A_MEMBER_KNOB_STATUS as u16,
    Counters = RDMA_MRBOND_A_MEMBER_COUNTERS as u16,
    PfcOverride = RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE as u16,
    PfcOverrideClear = RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE_CLEAR as u16,
    Utilisation = RDMA_MRBOND_A_MEMBER_UTILISATION as u16,
    CapacityMbps = RDMA_MRBOND_A_MEMBER_CAPACITY_MBPS as u16,
    Placements = RDMA_MRBOND_A_MEMBER_PLACEMENTS as u16,
    FlushedWr = RDMA_MRBOND_A_MEMBER_FLUSHED_WR as u16,
    WrongMemberKey = RDMA_MRBOND_A_MEMBER_WRONG_MEMBER_KEY as u16,
}
impl neli::consts::genl::NlAttrType for MemberAttr {}

/// `enum { RDMA_MRBOND_A_KNOB_STATUS_* }`: nested in `MemberAttr::KnobStatus`.
#[neli_enum(serialized_type = "u16")]
pub enum KnobStatusAttr {
    Knobs = RDMA_MRBOND_A_KNOB_STATUS_KNOBS as u16,
    State = RDMA_MRBOND_A_KNOB_STATUS_STATE as u16,
    Reason = RDMA_MRBOND_A_KNOB_STATUS_REASON as u16,
    Errno = RDMA_MRBOND_A_KNOB_STATUS_ERRNO as u16,
}
impl neli::consts::genl::NlAttrType for KnobStatusAttr {}

/// `enum { RDMA_MRBOND_A_PFC_* }`: nested in `BondAttr::Pfc`.
#[neli_enum(serialized_type = "u16")]
pub enum PfcAttr {
    EnableBitmap = RDMA_MRBOND_A_PFC_ENABLE_BITMAP as u16,
}
impl neli::consts::genl::NlAttrType for PfcAttr {}

/// Knob names by id (bit of `enum rdma_mrbond_knob`); the ECN knobs are the
/// first [`ECN_KNOBS`], carried in the `ecn` nest as attribute id + 1. The
/// policy core names them (its knob ids are the UAPI's).
pub const KNOB_NAMES: [&str; 21] = {
    let mut names = [""; 21];
    let mut id = 0;
    while id < names.len() {
        names[id] = Knob::ALL[id].name();
        id += 1;
    }
    names
};

/// Number of ECN knobs (ids `0..ECN_KNOBS`): DCQCN, tclass, ecn_enable.
pub const ECN_KNOBS: usize = 20;
/// Number of DCQCN parameters (ids `0..DCQCN_KNOBS`).
pub const DCQCN_KNOBS: usize = 18;

/// How the module's extack of a PFC_SET begins when the request was applied
/// but a member failed (`rust/knobs/netlink.rs`), unlike a refusal.
pub const PFC_MEMBER_FAILED: &str = "mrbond: PFC failed on a member";

/// Counter names by attribute number - 1 (`enum { RDMA_MRBOND_A_COUNTERS_* }`):
/// the module's own list, from the policy core it is built from.
pub use mrbond_policy::policy::congestion::{
    COUNTERS as COUNTER_NAMES, PAUSE_COUNTERS, PFC_COUNTERS, PFC_PRIOS,
};
use mrbond_policy::policy::knobs::Knob;

/// Spec name of a bond attribute number, for extack "missing attribute" reports.
pub fn bond_attr_name(nr: u16) -> Option<&'static str> {
    Some(match BondAttr::from(nr) {
        BondAttr::IbdevIndex => "ibdev-index",
        BondAttr::Name => "name",
        BondAttr::Mode => "mode",
        BondAttr::Policy => "policy",
        BondAttr::LacpSource => "lacp-source",
        BondAttr::Member => "member",
        BondAttr::UsableMembers => "usable-members",
        BondAttr::Placements => "placements",
        BondAttr::PlacementFailures => "placement-failures",
        BondAttr::Ecn => "ecn",
        BondAttr::Pfc => "pfc",
        BondAttr::Counters => "counters",
        BondAttr::Changes => "changes",
        BondAttr::UnrecognizedConst(_) => return None,
    })
}

/// Spec name of a member attribute number, for extack "missing attribute" reports.
pub fn member_attr_name(nr: u16) -> Option<&'static str> {
    Some(match MemberAttr::from(nr) {
        MemberAttr::Ibdev => "ibdev",
        MemberAttr::NetdevIfindex => "netdev-ifindex",
        MemberAttr::Weight => "weight",
        MemberAttr::Admin => "admin",
        MemberAttr::Usability => "usability",
        MemberAttr::Reason => "reason",
        MemberAttr::Qps => "qps",
        MemberAttr::Outstanding => "outstanding",
        MemberAttr::Transitions => "transitions",
        MemberAttr::LacpSlave => "lacp-slave",
        MemberAttr::LinkUp => "link-up",
        MemberAttr::TxEnabled => "tx-enabled",
        MemberAttr::KnobStatus => "knob-status",
        MemberAttr::Counters => "counters",
        MemberAttr::PfcOverride => "pfc-override",
        MemberAttr::PfcOverrideClear => "pfc-override-clear",
        MemberAttr::Utilisation => "utilisation",
        MemberAttr::CapacityMbps => "capacity-mbps",
        MemberAttr::Placements => "placements",
        MemberAttr::FlushedWr => "flushed-wr",
        MemberAttr::WrongMemberKey => "wrong-member-key",
        MemberAttr::UnrecognizedConst(_) => return None,
    })
}

/// `enum rdma_mrbond_bond_change`: the bits of a bond-change-ntf, with
/// their spec names.
pub const BOND_CHANGES: [(u32, &str); 8] = [
    (RDMA_MRBOND_BOND_CHANGE_CREATED, "created"),
    (RDMA_MRBOND_BOND_CHANGE_DELETED, "deleted"),
    (RDMA_MRBOND_BOND_CHANGE_POLICY, "policy"),
    (RDMA_MRBOND_BOND_CHANGE_ECN, "ecn"),
    (RDMA_MRBOND_BOND_CHANGE_PFC, "pfc"),
    (RDMA_MRBOND_BOND_CHANGE_MEMBER_SET, "member-set"),
    (RDMA_MRBOND_BOND_CHANGE_MEMBER_ADDED, "member-added"),
    (RDMA_MRBOND_BOND_CHANGE_MEMBER_REMOVED, "member-removed"),
];

/// The spec names of the bits set in `changes`, and `unknown(N)` for the
/// bits this tool does not know.
pub fn bond_change_names(changes: u32) -> Vec<String> {
    let mut names: Vec<String> = BOND_CHANGES
        .iter()
        .filter(|(bit, _)| changes & bit != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known = BOND_CHANGES.iter().fold(0, |m, (bit, _)| m | bit);
    if changes & !known != 0 {
        names.push(format!("unknown({:#x})", changes & !known));
    }
    names
}

/// Error for a name that is not an entry of a spec enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// Spec enum name, e.g. "policy".
    pub what: &'static str,
    /// The name that did not match.
    pub name: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} \"{}\"", self.what, self.name)
    }
}

impl std::error::Error for UnknownName {}

/// Defines a u32 value enum of the spec with its spec names.
///
/// Each gets `ALL`, `value()`, `name()`, `from_value()`, `label()` (name, or
/// `unknown(N)` for a value this tool does not know), `FromStr`, `Display`
/// and `clap::ValueEnum` (so the CLI accepts exactly the spec names).
macro_rules! uapi_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $( $(#[$vmeta:meta])* $var:ident = $val:expr => $spec:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $var = $val as isize, )+
        }

        impl $name {
            /// Every entry, in UAPI order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// Numeric value carried in the u32 attribute.
            // Usability and reason are only ever received.
            #[allow(dead_code)]
            pub fn value(self) -> u32 {
                self as u32
            }

            /// Spec name of the entry.
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$var => $spec, )+
                }
            }

            /// Entry for a numeric value, if this tool knows it.
            pub fn from_value(v: u32) -> Option<Self> {
                Self::ALL.iter().copied().find(|e| e.value() == v)
            }

            /// Spec name of a numeric value, or `unknown(N)`.
            pub fn label(v: u32) -> String {
                match Self::from_value(v) {
                    Some(e) => e.name().to_string(),
                    None => format!("unknown({v})"),
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|e| e.name() == s)
                    .ok_or_else(|| UnknownName { what: $what, name: s.to_string() })
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl clap::ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                Self::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()))
            }
        }
    };
}

uapi_enum! {
    /// `enum rdma_mrbond_mode`
    Mode, "mode" {
        Rail = RDMA_MRBOND_MODE_RAIL => "rail",
        ActiveBackup = RDMA_MRBOND_MODE_ACTIVE_BACKUP => "active-backup",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_policy`
    Policy, "policy" {
        Wrr = RDMA_MRBOND_POLICY_WRR => "wrr",
        Lqf = RDMA_MRBOND_POLICY_LQF => "lqf",
        Hash = RDMA_MRBOND_POLICY_HASH => "hash",
        Rr = RDMA_MRBOND_POLICY_RR => "rr",
        Pinned = RDMA_MRBOND_POLICY_PINNED => "pinned",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_admin_state`
    AdminState, "admin state" {
        Up = RDMA_MRBOND_ADMIN_STATE_UP => "up",
        Drain = RDMA_MRBOND_ADMIN_STATE_DRAIN => "drain",
        Down = RDMA_MRBOND_ADMIN_STATE_DOWN => "down",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_usability`
    Usability, "usability" {
        Usable = RDMA_MRBOND_USABILITY_USABLE => "usable",
        Draining = RDMA_MRBOND_USABILITY_DRAINING => "draining",
        Unusable = RDMA_MRBOND_USABILITY_UNUSABLE => "unusable",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_reason`
    Reason, "reason" {
        Ready = RDMA_MRBOND_REASON_READY => "ready",
        NotMember = RDMA_MRBOND_REASON_NOT_MEMBER => "not-member",
        AdminDrain = RDMA_MRBOND_REASON_ADMIN_DRAIN => "admin-drain",
        AdminDown = RDMA_MRBOND_REASON_ADMIN_DOWN => "admin-down",
        DeviceAbsent = RDMA_MRBOND_REASON_DEVICE_ABSENT => "device-absent",
        PortDown = RDMA_MRBOND_REASON_PORT_DOWN => "port-down",
        LinkDown = RDMA_MRBOND_REASON_LINK_DOWN => "link-down",
        LacpNotDistributing = RDMA_MRBOND_REASON_LACP_NOT_DISTRIBUTING => "lacp-not-distributing",
        UpDelay = RDMA_MRBOND_REASON_UP_DELAY => "up-delay",
        DownDelay = RDMA_MRBOND_REASON_DOWN_DELAY => "down-delay",
        Quiesced = RDMA_MRBOND_REASON_QUIESCED => "quiesced",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_knob_state`
    KnobState, "knob state" {
        Unset = RDMA_MRBOND_KNOB_STATE_UNSET => "unset",
        Pending = RDMA_MRBOND_KNOB_STATE_PENDING => "pending",
        Applied = RDMA_MRBOND_KNOB_STATE_APPLIED => "applied",
        Unsupported = RDMA_MRBOND_KNOB_STATE_UNSUPPORTED => "unsupported",
        Failed = RDMA_MRBOND_KNOB_STATE_FAILED => "failed",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_unsupported_reason`
    UnsupportedReason, "unsupported reason" {
        DcqcnNoKernelInterface = RDMA_MRBOND_UNSUPPORTED_REASON_DCQCN_NO_KERNEL_INTERFACE => "dcqcn-no-kernel-interface",
        NoDcbnlSetpfc = RDMA_MRBOND_UNSUPPORTED_REASON_NO_DCBNL_SETPFC => "no-dcbnl-setpfc",
    }
}

impl UnsupportedReason {
    /// The sentence shown to the user (as the kernel's sysfs says it).
    pub fn text(self) -> &'static str {
        match self {
            UnsupportedReason::DcqcnNoKernelInterface => "no kernel interface for DCQCN parameters",
            UnsupportedReason::NoDcbnlSetpfc => "no dcbnl ieee_setpfc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks spec name <-> value pairs exactly as numbered by the UAPI header,
    /// and that the enum has no other entries.
    macro_rules! check_names {
        ($t:ty, [$(($name:literal, $value:literal)),+ $(,)?]) => {{
            let expected: &[(&str, u32)] = &[$(($name, $value)),+];
            for (name, value) in expected {
                let e: $t = name.parse().expect("spec name parses");
                assert_eq!(e.value(), *value, "{name}");
                assert_eq!(e.name(), *name);
                assert_eq!(<$t>::from_value(*value), Some(e));
            }
            assert_eq!(<$t>::ALL.len(), expected.len());
        }};
    }

    #[test]
    fn mode_names() {
        check_names!(Mode, [("rail", 0), ("active-backup", 1)]);
    }

    #[test]
    fn policy_names() {
        check_names!(
            Policy,
            [
                ("wrr", 0),
                ("lqf", 1),
                ("hash", 2),
                ("rr", 3),
                ("pinned", 4)
            ]
        );
    }

    #[test]
    fn admin_state_names() {
        check_names!(AdminState, [("up", 0), ("drain", 1), ("down", 2)]);
    }

    #[test]
    fn usability_names() {
        check_names!(Usability, [("usable", 0), ("draining", 1), ("unusable", 2)]);
    }

    #[test]
    fn reason_names() {
        check_names!(
            Reason,
            [
                ("ready", 0),
                ("not-member", 1),
                ("admin-drain", 2),
                ("admin-down", 3),
                ("device-absent", 4),
                ("port-down", 5),
                ("link-down", 6),
                ("lacp-not-distributing", 7),
                ("up-delay", 8),
                ("down-delay", 9),
                ("quiesced", 10),
            ]
        );
    }

    #[test]
    fn values_round_trip_and_unknown_values_are_labelled() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_value(p.value()), Some(*p));
        }
        assert_eq!(Reason::label(7), "lacp-not-distributing");
        assert_eq!(Reason::label(42), "unknown(42)");
        assert_eq!(Mode::from_value(2), None);
    }

    #[test]
    fn unknown_names_are_rejected() {
        let err = "wfq".parse::<Policy>().err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("unknown policy \"wfq\"".to_string())
        );
        assert!("Rail".parse::<Mode>().is_err());
    }

    #[test]
    fn command_and_attribute_numbers_match_uapi() {
        assert_eq!(u8::from(Cmd::BondGet), 1);
        assert_eq!(u8::from(Cmd::MemberSet), 7);
        assert_eq!(u8::from(Cmd::MemberChangeNtf), 8);
        assert_eq!(u16::from(BondAttr::Member), 6);
        assert_eq!(u16::from(BondAttr::PlacementFailures), 9);
        assert_eq!(u16::from(MemberAttr::LacpSlave), 10);
        assert_eq!(u16::from(MemberAttr::TxEnabled), 12);
        assert_eq!(bond_attr_name(5), Some("lacp-source"));
        assert_eq!(member_attr_name(3), Some("weight"));
        assert_eq!(member_attr_name(13), Some("knob-status"));
        assert_eq!(member_attr_name(17), Some("utilisation"));
        assert_eq!(member_attr_name(18), Some("capacity-mbps"));
        assert_eq!(member_attr_name(19), Some("placements"));
        assert_eq!(member_attr_name(21), Some("wrong-member-key"));
        assert_eq!(member_attr_name(22), None);
        assert_eq!(u8::from(Cmd::EcnSet), 9);
        assert_eq!(u8::from(Cmd::PfcSet), 10);
        assert_eq!(u16::from(BondAttr::Counters), 12);
        assert_eq!(u16::from(BondAttr::Changes), 13);
        assert_eq!(u8::from(Cmd::BondChangeNtf), 11);
        assert_eq!(bond_change_names(0x21), ["created", "member-set"]);
        assert_eq!(bond_change_names(0x104), ["policy", "unknown(0x100)"]);
        assert_eq!(KNOB_NAMES[ECN_KNOBS], "pfc_enable");
        // The knob bits of the UAPI are the policy core's ids.
        assert_eq!(RDMA_MRBOND_KNOB_PFC_ENABLE, 1 << ECN_KNOBS);
        assert_eq!(RDMA_MRBOND_KNOB_TCLASS, 1 << DCQCN_KNOBS);
        assert_eq!(KNOB_NAMES[DCQCN_KNOBS], "tclass");
    }
}
