// SPDX-License-Identifier: GPL-2.0
//! Persistent bonds: `/etc/rdma_mrbond/<bond>.conf`, and the plan that
//! `mrbondctl apply` carries out to make the running bond match it.
//!
//! The file says what `mrbondctl` says, one setting per line, in the same
//! keyword grammar (`#` starts a comment):
//!
//! ```text
//! mode rail
//! policy wrr
//! lacp-source bond0
//! member mlx5_0 weight 200
//! member mlx5_1
//! ecn enable on tclass 104
//! pfc bitmap 0x08
//! pfc member mlx5_1 override 0x0c
//! cm-order bond-first
//! ```
//!
//! `cm-order` says what apply does about members registered before the
//! bond, which rdma_cm would pick over it ([`crate::cm_order`]):
//! `bond-first` (the default) re-registers them, `leave` only warns.
//!
//! [`plan`] compares it with the bond as BOND_GET reports it and lists the
//! requests that close the gap, none when they already match: applying
//! twice changes nothing the second time. A member whose RDMA device is not
//! there yet (at boot, HCAs come up one by one) is waited for, not an
//! error: its arrival starts the unit, which applies the file again. A rail
//! bond, whose ports are fixed when it is registered, is created once all
//! its members are there; an active-backup bond over those that are, the
//! others added as they come.

use crate::attrs::{Mode, Policy, ECN_KNOBS};
use crate::keywords::{self, BondAdd};
use crate::knob_args;
use crate::msg::{Bond, MemberSpec, PfcOverride};

/// A bond as its file declares it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BondConfig {
    pub name: String,
    pub bond: BondAdd,
    /// ECN settings, (knob id, value).
    pub ecn: Vec<(usize, u32)>,
    pub pfc_bitmap: Option<u32>,
    /// PFC overrides, (member, bitmap).
    pub pfc_overrides: Vec<(String, u32)>,
    /// `cm-order leave`: members ahead of the bond are not re-registered.
    pub cm_order_leave: bool,
}

/// Splits a line into words, without its comment.
fn words(line: &str) -> Vec<String> {
    let line = line.split('#').next().unwrap_or("");
    line.split_whitespace().map(str::to_string).collect()
}

/// Parses the file of bond `name`; errors name the line.
pub fn parse(name: &str, text: &str) -> Result<BondConfig, String> {
    let mut bond_words: Vec<String> = Vec::new();
    let mut cfg = BondConfig {
        name: name.to_string(),
        ..BondConfig::default()
    };
    for (n, line) in text.lines().enumerate() {
        let w = words(line);
        let at = |e: String| format!("line {}: {e}", n + 1);
        match w.first().map(String::as_str) {
            None => {}
            Some("mode" | "policy" | "lacp-source" | "member") => {
                // Checked alone, so that an error names its line.
                let mut alone = w.clone();
                if w[0] != "member" {
                    alone.extend(["member".to_string(), "x".to_string()]);
                }
                keywords::parse_bond_add(&alone).map_err(at)?;
                bond_words.extend(w);
            }
            Some("ecn") => {
                for (id, v) in knob_args::parse_ecn(&w[1..]).map_err(at)? {
                    cfg.ecn.retain(|(i, _)| *i != id);
                    cfg.ecn.push((id, v));
                }
            }
            Some("pfc") => {
                let a = knob_args::parse_pfc(&w[1..]).map_err(at)?;
                if !a.prio.is_empty() {
                    return Err(at(
                        "use \"pfc bitmap N\" in a file (prio-pfc changes a bitmap)".into(),
                    ));
                }
                if a.bitmap.is_some() {
                    cfg.pfc_bitmap = a.bitmap;
                }
                match a.member {
                    Some((dev, PfcOverride::Set(v))) => {
                        cfg.pfc_overrides.retain(|(d, _)| *d != dev);
                        cfg.pfc_overrides.push((dev, v));
                    }
                    Some((_, PfcOverride::Clear)) => {
                        return Err(at(
                            "an override in a file is a bitmap (leave the line out for none)"
                                .into(),
                        ));
                    }
                    None => {}
                }
            }
            Some("cm-order") => match w.get(1..).unwrap_or_default() {
                [v] if v == "bond-first" => cfg.cm_order_leave = false,
                [v] if v == "leave" => cfg.cm_order_leave = true,
                _ => return Err(at("cm-order is bond-first or leave".into())),
            },
            Some(other) => return Err(at(format!("unknown setting \"{other}\""))),
        }
    }
    cfg.bond = keywords::parse_bond_add(&bond_words)?;
    for (dev, _) in &cfg.pfc_overrides {
        if !cfg.bond.members.iter().any(|m| m.ibdev == *dev) {
            return Err(format!("pfc override for {dev}, which is not a member"));
        }
    }
    Ok(cfg)
}

/// One request of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// BOND_NEW with the file's mode, policy and LACP source, and those of
    /// its members that are there.
    Create(BondAdd),
    /// No request: the member's device is not there yet.
    Wait(String),
    /// BOND_SET.
    SetPolicy(Policy),
    /// MEMBER_ADD.
    AddMember(MemberSpec),
    /// MEMBER_DEL.
    DelMember(String),
    /// MEMBER_SET of the weight.
    SetWeight(String, u32),
    /// ECN_SET of the values that differ.
    SetEcn(Vec<(usize, u32)>),
    /// PFC_SET of the bond's bitmap.
    SetPfc(u32),
    /// PFC_SET of a member's override.
    SetOverride(String, PfcOverride),
}

/// The kernel's default weight, which a member without `weight` gets.
const DEFAULT_WEIGHT: u32 = 100;

/// What `apply` must do to make `current` (BOND_GET's, `None`: no such
/// bond) what `cfg` says. Settings the kernel cannot change on a live
/// bond (its mode, its LACP source) are an error, not a silent rebuild.
///
/// `present` says whether an RDMA device exists: a member the bond does not
/// have and whose device is absent is waited for ([`Action::Wait`]); one
/// the bond has keeps its slot while its device is away (the kernel
/// re-attaches it when it returns).
pub fn plan(
    cfg: &BondConfig,
    current: Option<&Bond>,
    lacp_ifindex: Option<u32>,
    present: &dyn Fn(&str) -> bool,
) -> Result<Vec<Action>, String> {
    let mut out = Vec::new();
    let Some(cur) = current else {
        let (here, away): (Vec<&MemberSpec>, Vec<&MemberSpec>) =
            cfg.bond.members.iter().partition(|m| present(&m.ibdev));
        out.extend(away.iter().map(|m| Action::Wait(m.ibdev.clone())));
        // A rail bond has a port per member, fixed when it is registered:
        // it waits for all of them. An active-backup bond (one port) starts
        // with those there and takes the others as they come.
        let whole = cfg.bond.mode.unwrap_or(Mode::Rail) != Mode::Rail || away.is_empty();
        if here.is_empty() || !whole {
            return Ok(out);
        }
        out.push(Action::Create(BondAdd {
            members: here.into_iter().cloned().collect(),
            ..cfg.bond.clone()
        }));
        if !cfg.ecn.is_empty() {
            out.push(Action::SetEcn(cfg.ecn.clone()));
        }
        out.extend(pfc_actions(cfg, None, present));
        return Ok(out);
    };
    let want_mode = cfg.bond.mode.unwrap_or(Mode::Rail);
    if cur.mode.is_some_and(|m| m != want_mode.value()) {
        return Err(format!(
            "{}: mode is {}, the file says {want_mode}: delete the bond to change it",
            cfg.name,
            cur.mode.map_or_else(|| "-".into(), Mode::label)
        ));
    }
    if cur.lacp_source != lacp_ifindex && !(cur.lacp_source == Some(0) && lacp_ifindex.is_none()) {
        return Err(format!(
            "{}: the LACP source differs from the file's: delete the bond to change it",
            cfg.name
        ));
    }
    let want_policy = cfg.bond.policy.unwrap_or(Policy::Wrr);
    if cur.policy != Some(want_policy.value()) {
        out.push(Action::SetPolicy(want_policy));
    }
    for m in &cur.members {
        if !cfg.bond.members.iter().any(|w| w.ibdev == m.ibdev) {
            out.push(Action::DelMember(m.ibdev.clone()));
        }
    }
    for w in &cfg.bond.members {
        let weight = w.weight.unwrap_or(DEFAULT_WEIGHT);
        match cur.members.iter().find(|m| m.ibdev == w.ibdev) {
            None if present(&w.ibdev) => out.push(Action::AddMember(w.clone())),
            None => out.push(Action::Wait(w.ibdev.clone())),
            Some(m) if m.weight != Some(weight) => {
                out.push(Action::SetWeight(w.ibdev.clone(), weight))
            }
            Some(_) => {}
        }
    }
    let differ: Vec<(usize, u32)> = cfg
        .ecn
        .iter()
        .copied()
        .filter(|&(id, v)| id >= ECN_KNOBS || cur.ecn.as_ref().and_then(|e| e.0[id]) != Some(v))
        .collect();
    if !differ.is_empty() {
        out.push(Action::SetEcn(differ));
    }
    out.extend(pfc_actions(cfg, Some(cur), present));
    Ok(out)
}

/// PFC requests: the bitmap, then the overrides (set where they differ,
/// cleared on members the file gives none) of the members the bond has or
/// is about to get.
fn pfc_actions(
    cfg: &BondConfig,
    cur: Option<&Bond>,
    present: &dyn Fn(&str) -> bool,
) -> Vec<Action> {
    let mut out = Vec::new();
    if let Some(b) = cfg.pfc_bitmap {
        if cur.is_none_or(|c| c.pfc_bitmap != Some(b)) {
            out.push(Action::SetPfc(b));
        }
    }
    let joins = |ibdev: &str| {
        present(ibdev) || cur.is_some_and(|c| c.members.iter().any(|m| m.ibdev == ibdev))
    };
    for w in cfg.bond.members.iter().filter(|w| joins(&w.ibdev)) {
        let want = cfg
            .pfc_overrides
            .iter()
            .find(|(d, _)| *d == w.ibdev)
            .map(|(_, v)| *v);
        let have = cur
            .and_then(|c| c.members.iter().find(|m| m.ibdev == w.ibdev))
            .and_then(|m| m.pfc_override);
        match (want, have) {
            (Some(v), h) if h != Some(v) => {
                out.push(Action::SetOverride(w.ibdev.clone(), PfcOverride::Set(v)))
            }
            (None, Some(_)) => out.push(Action::SetOverride(w.ibdev.clone(), PfcOverride::Clear)),
            _ => {}
        }
    }
    out
}

/// An action as a line of `--dry-run`, in the grammar of the command
/// that would do it.
pub fn describe(name: &str, a: &Action) -> String {
    match a {
        Action::Create(b) => {
            let mut line = format!("bond add {name}");
            if let Some(m) = b.mode {
                line += &format!(" mode {m}");
            }
            if let Some(p) = b.policy {
                line += &format!(" policy {p}");
            }
            for m in &b.members {
                line += &format!(" member {}", m.ibdev);
                if let Some(w) = m.weight {
                    line += &format!(" weight {w}");
                }
            }
            if let Some(l) = &b.lacp_source {
                line += &format!(" lacp-source {l}");
            }
            line
        }
        Action::Wait(d) => format!("{name}: waiting for {d} (no such RDMA device yet)"),
        Action::SetPolicy(p) => format!("bond set {name} policy {p}"),
        Action::AddMember(m) => match m.weight {
            Some(w) => format!("member add {name} {} weight {w}", m.ibdev),
            None => format!("member add {name} {}", m.ibdev),
        },
        Action::DelMember(d) => format!("member del {name} {d}"),
        Action::SetWeight(d, w) => format!("member set {name} {d} weight {w}"),
        Action::SetEcn(v) => {
            let pairs: Vec<String> = v
                .iter()
                .map(|(id, val)| format!("{} {val}", crate::knob_args::ecn_key_name(*id)))
                .collect();
            format!("ecn set {name} {}", pairs.join(" "))
        }
        Action::SetPfc(b) => format!("pfc set {name} bitmap {b:#04x}"),
        Action::SetOverride(d, PfcOverride::Set(v)) => {
            format!("pfc set {name} member {d} override {v:#04x}")
        }
        Action::SetOverride(d, PfcOverride::Clear) => {
            format!("pfc set {name} member {d} override none")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::{Ecn, Member};

    const FILE: &str = "\
# two rails
mode rail
policy lqf   # least queued
member mlx5_0 weight 200
member mlx5_1
ecn enable on tclass 104
pfc bitmap 0x08
pfc member mlx5_1 override 0x0c
";

    fn running() -> Bond {
        let mut ecn = [Some(0); ECN_KNOBS];
        ecn[ECN_KNOBS - 1] = Some(1);
        ecn[crate::attrs::DCQCN_KNOBS] = Some(104);
        Bond {
            name: "mrbond0".into(),
            mode: Some(Mode::Rail.value()),
            policy: Some(Policy::Lqf.value()),
            lacp_source: Some(0),
            members: vec![
                Member {
                    ibdev: "mlx5_0".into(),
                    weight: Some(200),
                    ..Member::default()
                },
                Member {
                    ibdev: "mlx5_1".into(),
                    weight: Some(100),
                    pfc_override: Some(0x0c),
                    ..Member::default()
                },
            ],
            ecn: Some(Ecn(ecn)),
            pfc_bitmap: Some(8),
            ..Bond::default()
        }
    }

    fn all(_: &str) -> bool {
        true
    }

    #[test]
    fn parses_the_documented_format() {
        let c = parse("mrbond0", FILE).expect("parses");
        assert_eq!(c.bond.mode, Some(Mode::Rail));
        assert_eq!(c.bond.policy, Some(Policy::Lqf));
        assert_eq!(c.bond.members.len(), 2);
        assert_eq!(c.bond.members[0].weight, Some(200));
        assert_eq!(
            c.ecn,
            [(ECN_KNOBS - 1, 1), (crate::attrs::DCQCN_KNOBS, 104)]
        );
        assert_eq!(c.pfc_bitmap, Some(8));
        assert_eq!(c.pfc_overrides, [("mlx5_1".to_string(), 12)]);
    }

    #[test]
    fn refusals_name_the_line() {
        assert_eq!(
            parse("b", "member r\npolicy wfq\n").unwrap_err(),
            "line 2: unknown policy \"wfq\""
        );
        assert_eq!(
            parse("b", "member r\nweight 3\n").unwrap_err(),
            "line 2: unknown setting \"weight\""
        );
        assert!(parse("b", "mode rail\n").is_err()); // no member
        assert!(parse("b", "member r\npfc member s override 1\n").is_err());
        assert!(parse("b", "member r\npfc prio-pfc 3:on\n").is_err());
        assert_eq!(
            parse("b", "member r\ncm-order first\n").unwrap_err(),
            "line 2: cm-order is bond-first or leave"
        );
        assert!(
            parse("b", "member r\ncm-order leave\n")
                .expect("parses")
                .cm_order_leave
        );
    }

    #[test]
    fn nothing_to_do_when_it_matches() {
        let c = parse("mrbond0", FILE).expect("parses");
        assert_eq!(plan(&c, Some(&running()), None, &all), Ok(vec![]));
    }

    #[test]
    fn creates_then_sets_knobs() {
        let c = parse("mrbond0", FILE).expect("parses");
        let p = plan(&c, None, None, &all).expect("plans");
        assert_eq!(p[0], Action::Create(c.bond.clone()));
        assert!(matches!(p[1], Action::SetEcn(_)));
        assert_eq!(p[2], Action::SetPfc(8));
        assert_eq!(
            p[3],
            Action::SetOverride("mlx5_1".into(), PfcOverride::Set(12))
        );
    }

    #[test]
    fn closes_every_gap() {
        let c = parse("mrbond0", FILE).expect("parses");
        let mut b = running();
        b.policy = Some(Policy::Rr.value());
        b.members[0].weight = Some(100);
        b.members[1].pfc_override = None;
        b.members.push(Member {
            ibdev: "mlx5_9".into(),
            ..Member::default()
        });
        b.members.remove(0);
        b.pfc_bitmap = None;
        if let Some(e) = b.ecn.as_mut() {
            e.0[ECN_KNOBS - 1] = Some(0);
        }
        let p = plan(&c, Some(&b), None, &all).expect("plans");
        let lines: Vec<String> = p.iter().map(|a| describe("mrbond0", a)).collect();
        assert_eq!(
            lines,
            [
                "bond set mrbond0 policy lqf",
                "member del mrbond0 mlx5_9",
                "member add mrbond0 mlx5_0 weight 200",
                "ecn set mrbond0 enable 1",
                "pfc set mrbond0 bitmap 0x08",
                "pfc set mrbond0 member mlx5_1 override 0x0c",
            ]
        );
    }

    #[test]
    fn waits_for_members_not_there_yet() {
        let c = parse("mrbond0", FILE).expect("parses");
        let only0 = |d: &str| d == "mlx5_0";
        let none = |_: &str| false;
        let lines =
            |p: Vec<Action>| -> Vec<String> { p.iter().map(|a| describe("mrbond0", a)).collect() };
        // Nothing there: no bond yet, nothing to do but wait.
        assert_eq!(
            lines(plan(&c, None, None, &none).expect("plans")),
            [
                "mrbond0: waiting for mlx5_0 (no such RDMA device yet)",
                "mrbond0: waiting for mlx5_1 (no such RDMA device yet)",
            ]
        );
        // The first HCA up: a rail bond waits for its second port.
        assert_eq!(
            lines(plan(&c, None, None, &only0).expect("plans")),
            ["mrbond0: waiting for mlx5_1 (no such RDMA device yet)"]
        );
        // An active-backup one starts over it; mlx5_1's override comes later.
        let ab =
            parse("mrbond0", &FILE.replace("mode rail", "mode active-backup")).expect("parses");
        assert_eq!(
            lines(plan(&ab, None, None, &only0).expect("plans")),
            [
                "mrbond0: waiting for mlx5_1 (no such RDMA device yet)",
                "bond add mrbond0 mode active-backup policy lqf member mlx5_0 weight 200",
                "ecn set mrbond0 enable 1 tclass 104",
                "pfc set mrbond0 bitmap 0x08",
            ]
        );
        // Then the second: added with its override; a member the bond has
        // keeps its slot while its device is away.
        let mut b = running();
        b.members.remove(1);
        assert_eq!(
            lines(plan(&c, Some(&b), None, &all).expect("plans")),
            [
                "member add mrbond0 mlx5_1",
                "pfc set mrbond0 member mlx5_1 override 0x0c",
            ]
        );
        assert_eq!(plan(&c, Some(&running()), None, &none), Ok(vec![]));
    }

    #[test]
    fn refuses_what_a_live_bond_cannot_change() {
        let c = parse("mrbond0", "mode active-backup\nmember mlx5_0\n").expect("parses");
        assert!(plan(&c, Some(&running()), None, &all)
            .unwrap_err()
            .contains("delete the bond"));
        let c = parse("mrbond0", FILE).expect("parses");
        assert!(plan(&c, Some(&running()), Some(7), &all).is_err());
    }
}
