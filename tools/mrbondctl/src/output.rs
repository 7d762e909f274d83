// SPDX-License-Identifier: GPL-2.0
//! Rendering of bonds, members, events and errors as text or JSON.
//!
//! Interface names are looked up through a caller-supplied resolver
//! (`if_indextoname` in the tool, a fixed table in the tests).

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::attrs::{self, AdminState, Mode, Policy, Reason, Usability};
use crate::cli::Opts;
use crate::error::Error;
use crate::knob_output::{
    bond_knobs_json, knob_counters_text, knob_details_text, member_knobs_json,
};
use crate::msg::{Bond, Member};

/// Maps an ifindex to its interface name, if any.
pub type IfName<'a> = &'a dyn Fn(u32) -> Option<String>;

/// JSON value of a u32 enum attribute: its spec name, the number if this
/// tool does not know it, null if absent.
fn enum_json(v: Option<u32>, name: fn(u32) -> Option<&'static str>) -> Value {
    match v {
        None => Value::Null,
        Some(v) => name(v).map_or_else(|| json!(v), |n| json!(n)),
    }
}

fn mode_name(v: u32) -> Option<&'static str> {
    Mode::from_value(v).map(Mode::name)
}
fn policy_name(v: u32) -> Option<&'static str> {
    Policy::from_value(v).map(Policy::name)
}
fn admin_name(v: u32) -> Option<&'static str> {
    AdminState::from_value(v).map(AdminState::name)
}
fn usability_name(v: u32) -> Option<&'static str> {
    Usability::from_value(v).map(Usability::name)
}
fn reason_name(v: u32) -> Option<&'static str> {
    Reason::from_value(v).map(Reason::name)
}

/// JSON object of one member; `ifname` and `netdev`/`netdev_index` as
/// `rdma -j link` names them.
pub fn member_json(m: &Member, ifname: IfName) -> Value {
    let (knobs, pfc_override, counters) = member_knobs_json(m);
    json!({
        "ifname": m.ibdev,
        "netdev_index": m.netdev_ifindex,
        "netdev": m.netdev_ifindex.and_then(ifname),
        "weight": m.weight,
        "utilisation_permille": m.utilisation,
        "capacity_mbps": m.capacity_mbps,
        "placements": m.placements,
        "flushed_wr": m.flushed_wr,
        "wrong_member_key": m.wrong_member_key,
        "admin": enum_json(m.admin, admin_name),
        "usability": enum_json(m.usability, usability_name),
        "reason": enum_json(m.reason, reason_name),
        "qps": m.qps,
        "outstanding": m.outstanding,
        "transitions": m.transitions,
        "lacp": {
            "slave": m.lacp_slave,
            "link_up": m.link_up,
            "tx_enabled": m.tx_enabled,
        },
        "knobs": knobs,
        "pfc_override": pfc_override,
        "counters": counters,
    })
}

/// JSON object of one bond with its members; `ifindex` and `ifname` as
/// `rdma -j dev` names them.
pub fn bond_json(b: &Bond, ifname: IfName) -> Value {
    let (ecn, pfc, counters) = bond_knobs_json(b);
    json!({
        "ifindex": b.ibdev_index,
        "ifname": b.name,
        "mode": enum_json(b.mode, mode_name),
        "policy": enum_json(b.policy, policy_name),
        "lacp_source": b.lacp_source,
        "lacp_source_ifname": b.lacp_source.and_then(ifname),
        "usable_members": b.usable_members,
        "placements": b.placements,
        "placement_failures": b.placement_failures,
        "members": b.members.iter().map(|m| member_json(m, ifname)).collect::<Vec<_>>(),
        "ecn": ecn,
        "pfc": pfc,
        "counters": counters,
    })
}

/// `bond show -j`: an array of bonds (also for a single bond).
pub fn bonds_json(bonds: &[Bond], ifname: IfName) -> Value {
    Value::Array(bonds.iter().map(|b| bond_json(b, ifname)).collect())
}

/// `bond add -j`: what the kernel created.
pub fn created_json(b: &Bond) -> Value {
    json!({ "ifindex": b.ibdev_index, "ifname": b.name })
}

/// `member show -j`: every member of `bonds` (those named `ibdev` only, if
/// given), each with its bond's `ifname` as `bond`.
pub fn members_json(bonds: &[Bond], ibdev: Option<&str>, ifname: IfName) -> Value {
    let mut out = Vec::new();
    for b in bonds {
        for m in b
            .members
            .iter()
            .filter(|m| ibdev.is_none_or(|d| d == m.ibdev))
        {
            let mut v = member_json(m, ifname);
            v["bond"] = json!(b.name);
            out.push(v);
        }
    }
    Value::Array(out)
}

/// One MEMBER_CHANGE_NTF member as a JSON event.
pub fn event_json(b: &Bond, m: &Member) -> Value {
    json!({
        "event": "member-change",
        "ifname": b.name,
        "ifindex": b.ibdev_index,
        "member": m.ibdev,
        "usability": enum_json(m.usability, usability_name),
        "reason": enum_json(m.reason, reason_name),
    })
}

/// A BOND_CHANGE_NTF as a JSON event: what changed, by spec name.
pub fn bond_change_json(b: &Bond) -> Value {
    json!({
        "event": "bond-change",
        "ifname": b.name,
        "ifindex": b.ibdev_index,
        "changes": b.changes.map(attrs::bond_change_names),
    })
}

/// A BOND_CHANGE_NTF as a text line (no newline).
pub fn bond_change_text(b: &Bond) -> String {
    let changes = b.changes.map_or_else(
        || "-".to_string(),
        |c| attrs::bond_change_names(c).join(","),
    );
    format!("{}: bond {}", b.name, changes)
}

/// One MEMBER_CHANGE_NTF member as a text line (no newline).
pub fn event_text(b: &Bond, m: &Member) -> String {
    format!(
        "{}: member {} usability {} reason {}",
        b.name,
        m.ibdev,
        opt_enum(m.usability, Usability::label),
        opt_enum(m.reason, Reason::label),
    )
}

/// The error object printed to stderr with `-j`.
pub fn error_json(e: &Error) -> Value {
    match e {
        Error::Kernel(k) => json!({
            "error": e.to_string(),
            "errno": k.errno,
            "strerror": k.strerror(),
            "extack": k.msg,
            "offset": k.offset,
            "missing_attribute": k.missing_attr(),
        }),
        _ => json!({ "error": e.to_string() }),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn opt_enum(v: Option<u32>, label: fn(u32) -> String) -> String {
    v.map_or_else(|| "-".to_string(), label)
}

fn onoff(v: Option<bool>, on: &str, off: &str) -> String {
    match v {
        Some(true) => on.to_string(),
        Some(false) => off.to_string(),
        None => "?".to_string(),
    }
}

/// `name (ifindex)`, or just the ifindex if it has no name (any more).
fn netdev(idx: Option<u32>, ifname: IfName) -> String {
    match idx {
        None => "-".to_string(),
        Some(i) => match ifname(i) {
            Some(n) => format!("{n} ({i})"),
            None => i.to_string(),
        },
    }
}

fn lacp_text(m: &Member) -> String {
    if !m.lacp_slave {
        return "-".to_string();
    }
    format!(
        "slave link:{} tx:{}",
        onoff(m.link_up, "up", "down"),
        onoff(m.tx_enabled, "on", "off")
    )
}

/// Utilisation as a percentage with one decimal, `-` while unknown.
fn util_text(permille: Option<u32>) -> String {
    permille.map_or_else(|| "-".to_string(), |p| format!("{}.{}%", p / 10, p % 10))
}

/// Capacity in Mb/s, `link` when it follows the link speed.
fn capacity_text(mbps: Option<u32>) -> String {
    match mbps {
        Some(0) => "link".to_string(),
        Some(c) => format!("{c}M"),
        None => "-".to_string(),
    }
}

const MEMBER_COLUMNS: [&str; 12] = [
    "IBDEV",
    "NETDEV",
    "WEIGHT",
    "UTIL",
    "CAPACITY",
    "ADMIN",
    "USABILITY",
    "REASON",
    "QPS",
    "OUTSTANDING",
    "TRANSITIONS",
    "LACP",
];

/// Text rendering of one bond: two summary lines and a member table; `-d`
/// adds the knobs and their status on every member, `-s` the counters.
pub fn bond_text(b: &Bond, ifname: IfName, opts: Opts) -> String {
    let mut s = String::new();
    let lacp = match b.lacp_source {
        Some(_) => netdev(b.lacp_source, ifname),
        None => "none".to_string(),
    };
    // Writing to a String cannot fail.
    let _ = writeln!(
        s,
        "{}: ibdev_index {} mode {} policy {} lacp_source {}",
        b.name,
        opt(b.ibdev_index),
        opt_enum(b.mode, Mode::label),
        opt_enum(b.policy, Policy::label),
        lacp,
    );
    let _ = writeln!(
        s,
        "    members {} usable {} placements {} placement_failures {}",
        b.members.len(),
        opt(b.usable_members),
        opt(b.placements),
        opt(b.placement_failures),
    );
    s.push_str(&members_text(&b.members, ifname));
    if opts.details {
        s.push_str(&knob_details_text(b));
    }
    if opts.stats {
        s.push_str(&knob_counters_text(b));
    }
    s
}

/// The member table (empty without members).
pub fn members_text<'a>(members: impl IntoIterator<Item = &'a Member>, ifname: IfName) -> String {
    let mut s = String::new();
    let rows: Vec<[String; 12]> = members
        .into_iter()
        .map(|m| {
            [
                m.ibdev.clone(),
                netdev(m.netdev_ifindex, ifname),
                opt(m.weight),
                util_text(m.utilisation),
                capacity_text(m.capacity_mbps),
                opt_enum(m.admin, AdminState::label),
                opt_enum(m.usability, Usability::label),
                opt_enum(m.reason, Reason::label),
                opt(m.qps),
                opt(m.outstanding),
                opt(m.transitions),
                lacp_text(m),
            ]
        })
        .collect();
    if rows.is_empty() {
        return s;
    }
    let mut width = MEMBER_COLUMNS.map(str::len);
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    let header = MEMBER_COLUMNS.map(str::to_string);
    for r in std::iter::once(&header).chain(&rows) {
        let mut line = String::from("    ");
        for (i, (cell, w)) in r.iter().zip(width).enumerate() {
            if i + 1 == r.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::KernelError;
    use crate::msg::tests::canned_bond;

    fn names(i: u32) -> Option<String> {
        match i {
            3 => Some("eth1".into()),
            9 => Some("bond0".into()),
            _ => None,
        }
    }

    /// Every JSON value is typed: numbers are numbers, absent values null;
    /// only names and enum labels are strings (`cli_json_types`).
    #[test]
    fn json_values_are_typed() {
        const STRINGS: &[&str] = &[
            "ifname",
            "bond",
            "netdev",
            "mode",
            "policy",
            "admin",
            "usability",
            "reason",
            "lacp_source_ifname",
            "state",
            "text",
            "strerror",
            "event",
            "member",
            "changes",
        ];
        fn walk(v: &Value, key: &str, bad: &mut Vec<String>) {
            match v {
                Value::String(s) if !STRINGS.contains(&key) => bad.push(format!("{key}: \"{s}\"")),
                Value::Object(o) => o.iter().for_each(|(k, v)| walk(v, k, bad)),
                Value::Array(a) => a.iter().for_each(|v| walk(v, key, bad)),
                _ => {}
            }
        }
        let mut b = canned_bond();
        b.members[0] = crate::knob_output::tests::member();
        b.pfc_bitmap = Some(8);
        b.ecn = Some(crate::msg::Ecn([Some(1); crate::attrs::ECN_KNOBS]));
        b.counters = b.members[0].counters.clone();
        b.changes = Some(0x21);
        let mut bad = Vec::new();
        // Every JSON output: bond, member, ecn and pfc show, and events.
        for v in [
            bonds_json(std::slice::from_ref(&b), &names),
            members_json(std::slice::from_ref(&b), None, &names),
            crate::knob_show::ecn_json(&b),
            crate::knob_show::pfc_json(&b),
            bond_change_json(&b),
            event_json(&b, &b.members[1]),
        ] {
            walk(&v, "", &mut bad);
        }
        assert!(bad.is_empty(), "strings that should be typed: {bad:?}");
    }

    #[test]
    fn bond_json_shape() {
        let v = bonds_json(&[canned_bond()], &names);
        let expected = json!([{
            "ifindex": 5,
            "ifname": "mrbond0",
            "mode": "active-backup",
            "policy": "lqf",
            "lacp_source": 9,
            "lacp_source_ifname": "bond0",
            "usable_members": 1,
            "placements": 123456,
            "placement_failures": 2,
            "ecn": null,
            "pfc": null,
            "counters": null,
            "members": [
                {
                    "ifname": "rxe0",
                    "netdev_index": 3,
                    "netdev": "eth1",
                    "weight": 100,
                    "utilisation_permille": 375,
                    "capacity_mbps": 0,
                    "placements": 9,
                    "flushed_wr": 40,
                    "wrong_member_key": 2,
                    "admin": "up",
                    "usability": "usable",
                    "reason": "ready",
                    "qps": 7,
                    "outstanding": 12,
                    "transitions": 1,
                    "lacp": { "slave": true, "link_up": true, "tx_enabled": true },
                    "knobs": null,
                    "pfc_override": null,
                    "counters": null
                },
                {
                    "ifname": "rxe1",
                    "netdev_index": 4,
                    "netdev": null,
                    "weight": 50,
                    "utilisation_permille": null,
                    "capacity_mbps": 100,
                    "placements": null,
                    "flushed_wr": null,
                    "wrong_member_key": null,
                    "admin": "drain",
                    "usability": "unusable",
                    "reason": "lacp-not-distributing",
                    "qps": 0,
                    "outstanding": 0,
                    "transitions": 8589934592u64,
                    "lacp": { "slave": false, "link_up": null, "tx_enabled": null },
                    "knobs": null,
                    "pfc_override": null,
                    "counters": null
                }
            ]
        }]);
        assert_eq!(v, expected);
    }

    #[test]
    fn unknown_and_absent_values_in_json() {
        let b = Bond {
            name: "mrbond3".into(),
            policy: Some(17),
            members: vec![Member {
                ibdev: "rxe9".into(),
                reason: Some(99),
                ..Member::default()
            }],
            ..Bond::default()
        };
        let v = bond_json(&b, &names);
        assert_eq!(v["policy"], json!(17));
        assert_eq!(v["mode"], Value::Null);
        assert_eq!(v["lacp_source_ifname"], Value::Null);
        assert_eq!(v["members"][0]["reason"], json!(99));
        assert_eq!(v["members"][0]["usability"], Value::Null);
    }

    #[test]
    fn event_json_and_text() {
        let b = canned_bond();
        let m = &b.members[1];
        assert_eq!(
            event_json(&b, m),
            json!({
                "event": "member-change",
                "ifname": "mrbond0",
                "ifindex": 5,
                "member": "rxe1",
                "usability": "unusable",
                "reason": "lacp-not-distributing",
            })
        );
        assert_eq!(
            event_text(&b, m),
            "mrbond0: member rxe1 usability unusable reason lacp-not-distributing"
        );
    }

    #[test]
    fn bond_change_json_and_text() {
        let b = Bond {
            name: "mrbond0".into(),
            ibdev_index: Some(5),
            changes: Some(0x18),
            ..Bond::default()
        };
        assert_eq!(
            bond_change_json(&b),
            json!({"event": "bond-change", "ifname": "mrbond0", "ifindex": 5, "changes": ["ecn", "pfc"]})
        );
        assert_eq!(bond_change_text(&b), "mrbond0: bond ecn,pfc");
    }

    #[test]
    fn error_json_shape() {
        let e = Error::Kernel(KernelError {
            errno: libc::EINVAL,
            msg: Some("weight out of range".into()),
            offset: Some(36),
            ..KernelError::default()
        });
        assert_eq!(
            error_json(&e),
            json!({
                "error": "Invalid argument: weight out of range",
                "errno": 22,
                "strerror": "Invalid argument",
                "extack": "weight out of range",
                "offset": 36,
                "missing_attribute": null,
            })
        );
        assert_eq!(
            error_json(&Error::NoFamily),
            json!({ "error": "rdma_mrbond module not loaded (modprobe rdma_mrbond)" })
        );
    }

    #[test]
    fn bond_text_layout() {
        let text = bond_text(&canned_bond(), &names, Opts::default());
        let expected = "\
mrbond0: ibdev_index 5 mode active-backup policy lqf lacp_source bond0 (9)
    members 2 usable 1 placements 123456 placement_failures 2
    IBDEV  NETDEV    WEIGHT  UTIL   CAPACITY  ADMIN  USABILITY  REASON                 QPS  OUTSTANDING  TRANSITIONS  LACP
    rxe0   eth1 (3)  100     37.5%  link      up     usable     ready                  7    12           1            slave link:up tx:on
    rxe1   4         50      -      100M      drain  unusable   lacp-not-distributing  0    0            8589934592   -
";
        assert_eq!(text, expected);
    }

    #[test]
    fn bond_text_without_members() {
        let b = Bond {
            name: "mrbond1".into(),
            ibdev_index: Some(8),
            mode: Some(0),
            policy: Some(0),
            usable_members: Some(0),
            ..Bond::default()
        };
        assert_eq!(
            bond_text(&b, &names, Opts::default()),
            "mrbond1: ibdev_index 8 mode rail policy wrr lacp_source none\n    \
             members 0 usable 0 placements - placement_failures -\n"
        );
    }
}
