// SPDX-License-Identifier: GPL-2.0
//! Constants of the `rdma_mrbond` generic netlink family.
//!
//! Everything here mirrors `include/uapi/rdma_mrbond.h`, which ynl-gen-c
//! generates from `Documentation/netlink/specs/rdma_mrbond.yaml`. Keep the
//! numbers in sync with that header: commands and attributes start at 1,
//! the value enums (mode, policy, admin-state, usability, reason) at 0.

use std::fmt;
use std::str::FromStr;

use neli::neli_enum;

/// `RDMA_MRBOND_FAMILY_NAME`
pub const FAMILY_NAME: &str = "rdma_mrbond";
/// `RDMA_MRBOND_FAMILY_VERSION`
pub const FAMILY_VERSION: u8 = 1;
/// `RDMA_MRBOND_MCGRP_EVENTS`
pub const MCGRP_EVENTS: &str = "events";

/// `enum { RDMA_MRBOND_CMD_* }`: the genetlink `cmd` byte.
#[neli_enum(serialized_type = "u8")]
pub enum Cmd {
    BondGet = 1,
    BondNew = 2,
    BondDel = 3,
    BondSet = 4,
    MemberAdd = 5,
    MemberDel = 6,
    MemberSet = 7,
    MemberChangeNtf = 8,
    EcnSet = 9,
    PfcSet = 10,
}
impl neli::consts::genl::Cmd for Cmd {}

/// `enum { RDMA_MRBOND_A_BOND_* }`: top-level attributes (set "bond").
#[neli_enum(serialized_type = "u16")]
pub enum BondAttr {
    IbdevIndex = 1,
    Name = 2,
    Mode = 3,
    Policy = 4,
    LacpSource = 5,
    Member = 6,
    UsableMembers = 7,
    Placements = 8,
    PlacementFailures = 9,
    Ecn = 10,
    Pfc = 11,
    Counters = 12,
}
impl neli::consts::genl::NlAttrType for BondAttr {}

/// `enum { RDMA_MRBOND_A_MEMBER_* }`: attributes nested in `BondAttr::Member`.
#[neli_enum(serialized_type = "u16")]
pub enum MemberAttr {
    Ibdev = 1,
    NetdevIfindex = 2,
    Weight = 3,
    Admin = 4,
    Usability = 5,
    Reason = 6,
    Qps = 7,
    Outstanding = 8,
    Transitions = 9,
    LacpSlave = 10,
    LinkUp = 11,
    TxEnabled = 12,
    KnobStatus = 13,
    Counters = 14,
    PfcOverride = 15,
    PfcOverrideClear = 16,
    Utilisation = 17,
    CapacityMbps = 18,
}
impl neli::consts::genl::NlAttrType for MemberAttr {}

/// `enum { RDMA_MRBOND_A_KNOB_STATUS_* }`: nested in `MemberAttr::KnobStatus`.
#[neli_enum(serialized_type = "u16")]
pub enum KnobStatusAttr {
    Knobs = 1,
    State = 2,
    Reason = 3,
    Errno = 4,
}
impl neli::consts::genl::NlAttrType for KnobStatusAttr {}

/// `enum { RDMA_MRBOND_A_PFC_* }`: nested in `BondAttr::Pfc`.
#[neli_enum(serialized_type = "u16")]
pub enum PfcAttr {
    EnableBitmap = 1,
}
impl neli::consts::genl::NlAttrType for PfcAttr {}

/// Knob names by id (bit of `enum rdma_mrbond_knob`); the ECN knobs are the
/// first [`ECN_KNOBS`], carried in the `ecn` nest as attribute id + 1.
pub const KNOB_NAMES: [&str; 21] = [
    "np_enable",
    "np_min_time_between_cnps",
    "np_cnp_dscp",
    "np_cnp_802p_prio",
    "rp_enable",
    "rp_clamp_tgt_rate",
    "rp_rpg_time_reset",
    "rp_rpg_byte_reset",
    "rp_rpg_threshold",
    "rp_rpg_ai_rate",
    "rp_rpg_hai_rate",
    "rp_rpg_gd",
    "rp_rpg_min_dec_fac",
    "rp_rpg_min_rate",
    "rp_dce_tcp_g",
    "rp_dce_tcp_rtt",
    "rp_initial_alpha_value",
    "rp_rate_reduce_monitor_period",
    "tclass",
    "ecn_enable",
    "pfc_enable",
];

/// Number of ECN knobs (ids `0..ECN_KNOBS`): DCQCN, tclass, ecn_enable.
pub const ECN_KNOBS: usize = 20;
/// Number of DCQCN parameters (ids `0..DCQCN_KNOBS`).
pub const DCQCN_KNOBS: usize = 18;

/// How the module's extack of a PFC_SET begins when the request was applied
/// but a member failed (`rust/knobs/netlink.rs`), unlike a refusal.
pub const PFC_MEMBER_FAILED: &str = "mrbond: PFC failed on a member";

/// Counter names by attribute number - 1 (`enum { RDMA_MRBOND_A_COUNTERS_* }`):
/// the module's own list, from the policy core it is built from.
pub use mrbond_policy::policy::congestion::COUNTERS as COUNTER_NAMES;

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
        MemberAttr::UnrecognizedConst(_) => return None,
    })
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
            $( $(#[$vmeta:meta])* $var:ident = $val:literal => $spec:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $var = $val, )+
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
                match v {
                    $( $val => Some($name::$var), )+
                    _ => None,
                }
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
        Rail = 0 => "rail",
        ActiveBackup = 1 => "active-backup",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_policy`
    Policy, "policy" {
        Wrr = 0 => "wrr",
        Lqf = 1 => "lqf",
        Hash = 2 => "hash",
        Rr = 3 => "rr",
        Pinned = 4 => "pinned",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_admin_state`
    AdminState, "admin state" {
        Up = 0 => "up",
        Drain = 1 => "drain",
        Down = 2 => "down",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_usability`
    Usability, "usability" {
        Usable = 0 => "usable",
        Draining = 1 => "draining",
        Unusable = 2 => "unusable",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_reason`
    Reason, "reason" {
        Ready = 0 => "ready",
        NotMember = 1 => "not-member",
        AdminDrain = 2 => "admin-drain",
        AdminDown = 3 => "admin-down",
        DeviceAbsent = 4 => "device-absent",
        PortDown = 5 => "port-down",
        LinkDown = 6 => "link-down",
        LacpNotDistributing = 7 => "lacp-not-distributing",
        UpDelay = 8 => "up-delay",
        DownDelay = 9 => "down-delay",
        Quiesced = 10 => "quiesced",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_knob_state`
    KnobState, "knob state" {
        Unset = 0 => "unset",
        Pending = 1 => "pending",
        Applied = 2 => "applied",
        Unsupported = 3 => "unsupported",
        Failed = 4 => "failed",
    }
}

uapi_enum! {
    /// `enum rdma_mrbond_unsupported_reason`
    UnsupportedReason, "unsupported reason" {
        DcqcnNoKernelInterface = 0 => "dcqcn-no-kernel-interface",
        NoDcbnlSetpfc = 1 => "no-dcbnl-setpfc",
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
        assert_eq!(member_attr_name(19), None);
        assert_eq!(u8::from(Cmd::EcnSet), 9);
        assert_eq!(u8::from(Cmd::PfcSet), 10);
        assert_eq!(u16::from(BondAttr::Counters), 12);
        assert_eq!(KNOB_NAMES[ECN_KNOBS], "pfc_enable");
        assert_eq!(KNOB_NAMES[DCQCN_KNOBS], "tclass");
    }
}
