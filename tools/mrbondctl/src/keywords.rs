// SPDX-License-Identifier: GPL-2.0
//! The keyword arguments of `bond add`, `bond set`, `member add` and
//! `member set`, iproute2 style (`mode rail policy wrr member mlx5_0 weight
//! 200 member mlx5_1`). Only the syntax is checked here; ranges are the
//! kernel's to check, so that its extack message is what the user sees.

use crate::attrs::{AdminState, Mode, Policy};
use crate::knob_args::parse_u32;
use crate::msg::MemberSpec;

/// What `bond add` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BondAdd {
    pub mode: Option<Mode>,
    pub policy: Option<Policy>,
    pub lacp_source: Option<String>,
    pub members: Vec<MemberSpec>,
}

/// The tokens of a command's ARGS, each keyword taking the next as its
/// value.
struct Tokens<'a>(std::iter::Peekable<std::slice::Iter<'a, String>>);

impl<'a> Tokens<'a> {
    fn new(args: &'a [String]) -> Self {
        Self(args.iter().peekable())
    }

    fn keyword(&mut self) -> Option<&'a str> {
        self.0.next().map(String::as_str)
    }

    fn value(&mut self, key: &str) -> Result<&'a str, String> {
        self.0
            .next()
            .map(String::as_str)
            .ok_or_else(|| format!("\"{key}\" needs a value"))
    }

    /// The value of `key` if it is the next keyword.
    fn optional(&mut self, key: &str) -> Result<Option<&'a str>, String> {
        if self.0.peek().map(|s| s.as_str()) != Some(key) {
            return Ok(None);
        }
        self.0.next();
        self.value(key).map(Some)
    }
}

/// Sets `slot` once; a second `key` is an error.
fn once<T>(slot: &mut Option<T>, key: &str, v: T) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("\"{key}\" given twice"));
    }
    *slot = Some(v);
    Ok(())
}

fn parse_enum<T: std::str::FromStr>(v: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    v.parse::<T>().map_err(|e| e.to_string())
}

/// `bond add` ARGS: `[mode M] [policy P] [lacp-source IFNAME] member IBDEV
/// [weight N]...`.
pub fn parse_bond_add(args: &[String]) -> Result<BondAdd, String> {
    let mut out = BondAdd::default();
    let mut t = Tokens::new(args);
    while let Some(key) = t.keyword() {
        match key {
            "mode" => once(&mut out.mode, key, parse_enum(t.value(key)?)?)?,
            "policy" => once(&mut out.policy, key, parse_enum(t.value(key)?)?)?,
            "lacp-source" => once(&mut out.lacp_source, key, t.value(key)?.to_string())?,
            "member" => {
                let mut m = MemberSpec::new(t.value(key)?);
                if let Some(w) = t.optional("weight")? {
                    m.weight = Some(parse_u32(w)?);
                }
                out.members.push(m);
            }
            _ => return Err(format!("unknown bond setting \"{key}\"")),
        }
    }
    if out.members.is_empty() {
        return Err("a bond needs at least one \"member IBDEV\"".into());
    }
    Ok(out)
}

/// `bond set` ARGS: `policy P`.
pub fn parse_bond_set(args: &[String]) -> Result<Policy, String> {
    let mut policy = None;
    let mut t = Tokens::new(args);
    while let Some(key) = t.keyword() {
        match key {
            "policy" => once(&mut policy, key, parse_enum(t.value(key)?)?)?,
            _ => return Err(format!("unknown bond setting \"{key}\"")),
        }
    }
    policy.ok_or_else(|| "nothing to set".into())
}

/// `member add` ARGS: `[weight N]`.
pub fn parse_member_add(ibdev: &str, args: &[String]) -> Result<MemberSpec, String> {
    let mut m = MemberSpec::new(ibdev);
    let mut t = Tokens::new(args);
    while let Some(key) = t.keyword() {
        match key {
            "weight" => once(&mut m.weight, key, parse_u32(t.value(key)?)?)?,
            _ => return Err(format!("unknown member setting \"{key}\"")),
        }
    }
    Ok(m)
}

/// `member set` ARGS: `[weight N] [admin A] [capacity-mbps N]`, at least one.
pub fn parse_member_set(ibdev: &str, args: &[String]) -> Result<MemberSpec, String> {
    let mut m = MemberSpec::new(ibdev);
    let mut t = Tokens::new(args);
    while let Some(key) = t.keyword() {
        match key {
            "weight" => once(&mut m.weight, key, parse_u32(t.value(key)?)?)?,
            "admin" => once(&mut m.admin, key, parse_enum::<AdminState>(t.value(key)?)?)?,
            "capacity-mbps" => once(&mut m.capacity_mbps, key, parse_u32(t.value(key)?)?)?,
            _ => return Err(format!("unknown member setting \"{key}\"")),
        }
    }
    if m.weight.is_none() && m.admin.is_none() && m.capacity_mbps.is_none() {
        return Err("nothing to set".into());
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bond_add() {
        let a = parse_bond_add(&v(&[
            "mode",
            "active-backup",
            "policy",
            "lqf",
            "member",
            "mlx5_0",
            "weight",
            "200",
            "member",
            "mlx5_1",
            "lacp-source",
            "bond0",
        ]))
        .expect("parses");
        assert_eq!(a.mode, Some(Mode::ActiveBackup));
        assert_eq!(a.policy, Some(Policy::Lqf));
        assert_eq!(a.lacp_source.as_deref(), Some("bond0"));
        let devs: Vec<_> = a
            .members
            .iter()
            .map(|m| (m.ibdev.as_str(), m.weight))
            .collect();
        assert_eq!(devs, [("mlx5_0", Some(200)), ("mlx5_1", None)]);
    }

    #[test]
    fn bond_add_refusals() {
        let err = |args: &[&str]| parse_bond_add(&v(args)).unwrap_err();
        assert_eq!(
            err(&["mode", "rail"]),
            "a bond needs at least one \"member IBDEV\""
        );
        assert_eq!(err(&["member"]), "\"member\" needs a value");
        assert_eq!(err(&["member", "r", "weight"]), "\"weight\" needs a value");
        assert_eq!(err(&["member", "r", "weight", "x"]), "invalid number \"x\"");
        assert_eq!(
            err(&["policy", "wfq", "member", "r"]),
            "unknown policy \"wfq\""
        );
        assert_eq!(
            err(&["mode", "rail", "mode", "rail", "member", "r"]),
            "\"mode\" given twice"
        );
        assert_eq!(err(&["--member", "r"]), "unknown bond setting \"--member\"");
    }

    #[test]
    fn bond_set() {
        assert_eq!(parse_bond_set(&v(&["policy", "rr"])), Ok(Policy::Rr));
        assert!(parse_bond_set(&v(&["weight", "1"])).is_err());
        assert!(parse_bond_set(&v(&["policy"])).is_err());
    }

    #[test]
    fn member_add_and_set() {
        assert_eq!(
            parse_member_add("rxe2", &v(&["weight", "0x10"])).map(|m| m.weight),
            Ok(Some(16))
        );
        assert_eq!(parse_member_add("rxe2", &[]).map(|m| m.weight), Ok(None));
        assert!(parse_member_add("rxe2", &v(&["admin", "up"])).is_err());
        let m = parse_member_set("rxe0", &v(&["admin", "drain", "capacity-mbps", "0"]))
            .expect("parses");
        assert_eq!(
            (m.admin, m.capacity_mbps, m.weight),
            (Some(AdminState::Drain), Some(0), None)
        );
        assert_eq!(parse_member_set("rxe0", &[]).unwrap_err(), "nothing to set");
        assert!(parse_member_set("rxe0", &v(&["admin", "off"])).is_err());
    }
}
