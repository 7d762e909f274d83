// SPDX-License-Identifier: GPL-2.0
//! The keyword arguments of `ecn set` and `pfc set`, iproute2 style:
//! `KEY VALUE` pairs. Only the syntax is checked here (names, numbers that
//! fit the u32 attributes); ranges are the kernel's to check, so that its
//! extack message is what the user sees.

use crate::attrs::{DCQCN_KNOBS, ECN_KNOBS, KNOB_NAMES};
use crate::msg::PfcOverride;

/// Knob id of `ecn set`'s `enable`.
const ENABLE: usize = ECN_KNOBS - 1;
/// Knob id of `ecn set`'s `tclass`.
const TCLASS: usize = DCQCN_KNOBS;

/// A number as `ip`/`dcb` take it: decimal, or hexadecimal after `0x`.
pub fn parse_u32(s: &str) -> Result<u32, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse::<u32>(),
    };
    parsed.map_err(|_| format!("invalid number \"{s}\""))
}

fn pairs(args: &[String]) -> Result<Vec<(&str, &str)>, String> {
    if args.is_empty() {
        return Err("nothing to set".into());
    }
    args.chunks(2)
        .map(|c| match c {
            [k, v] => Ok((k.as_str(), v.as_str())),
            [k] => Err(format!("\"{k}\" needs a value")),
            _ => Err("bad arguments".into()),
        })
        .collect()
}

/// The knob id of an `ecn set` key: `enable`, `tclass`, or a DCQCN
/// parameter by its mlx5 name, with `-` or `_`.
pub fn ecn_key(key: &str) -> Option<usize> {
    let key = key.replace('-', "_");
    match key.as_str() {
        "enable" => Some(ENABLE),
        "tclass" => Some(TCLASS),
        _ => KNOB_NAMES.iter().take(DCQCN_KNOBS).position(|n| *n == key),
    }
}

/// The `ecn set` key of a knob id (`enable`, `tclass`, `rp-rpg-gd`).
pub fn ecn_key_name(id: usize) -> String {
    match id {
        ENABLE => "enable".into(),
        TCLASS => "tclass".into(),
        _ => KNOB_NAMES
            .get(id)
            .map_or_else(|| format!("knob{id}"), |n| n.replace('_', "-")),
    }
}

/// `ecn set` arguments into (knob id, value) pairs.
pub fn parse_ecn(args: &[String]) -> Result<Vec<(usize, u32)>, String> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    for (k, v) in pairs(args)? {
        let id = ecn_key(k).ok_or_else(|| format!("unknown ECN setting \"{k}\""))?;
        if out.iter().any(|(i, _)| *i == id) {
            return Err(format!("\"{k}\" given twice"));
        }
        let value = match (id, v) {
            (ENABLE, "on") => 1,
            (ENABLE, "off") => 0,
            _ => parse_u32(v)?,
        };
        out.push((id, value));
    }
    Ok(out)
}

/// What `pfc set` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PfcArgs {
    pub bitmap: Option<u32>,
    /// `prio-pfc`: priorities turned on or off, the others kept.
    pub prio: Vec<(u8, bool)>,
    pub member: Option<(String, PfcOverride)>,
}

impl PfcArgs {
    /// The bitmap to send, given the bond's current one (`None`: unset).
    pub fn bitmap_from(&self, current: Option<u32>) -> Option<u32> {
        if self.prio.is_empty() {
            return self.bitmap;
        }
        let bitmap = self.prio.iter().fold(current.unwrap_or(0), |b, &(p, on)| {
            if on {
                b | 1 << p
            } else {
                b & !(1 << p)
            }
        });
        Some(bitmap)
    }
}

/// A `prio-pfc` item, `PRIO:on|off` as `dcb pfc` takes it.
fn prio_item(s: &str) -> Option<(u8, bool)> {
    let (prio, state) = s.split_once(':')?;
    let prio = prio.parse::<u8>().ok().filter(|p| *p < 8)?;
    match state {
        "on" => Some((prio, true)),
        "off" => Some((prio, false)),
        _ => None,
    }
}

/// `pfc set` arguments: `[bitmap N | prio-pfc PRIO:on|off...] [member DEV
/// override N|none]`.
pub fn parse_pfc(args: &[String]) -> Result<PfcArgs, String> {
    let mut out = PfcArgs::default();
    let mut it = args.iter().map(String::as_str).peekable();
    while let Some(key) = it.next() {
        match key {
            "bitmap" | "prio-pfc" if out.bitmap.is_some() || !out.prio.is_empty() => {
                return Err("give \"bitmap\" or \"prio-pfc\", once".into());
            }
            "bitmap" => {
                let v = it.next().ok_or("\"bitmap\" needs a value")?;
                out.bitmap = Some(parse_u32(v)?);
            }
            "prio-pfc" => {
                while let Some(item) = it.peek().and_then(|s| s.contains(':').then_some(*s)) {
                    let p = prio_item(item).ok_or_else(|| {
                        format!("invalid prio-pfc \"{item}\" (PRIO:on|off, PRIO 0..7)")
                    })?;
                    if out.prio.iter().any(|(q, _)| *q == p.0) {
                        return Err(format!("priority {} given twice", p.0));
                    }
                    out.prio.push(p);
                    it.next();
                }
                if out.prio.is_empty() {
                    return Err("\"prio-pfc\" needs PRIO:on|off".into());
                }
            }
            "member" if out.member.is_none() => {
                let dev = it.next().ok_or("\"member\" needs a device")?;
                if it.next() != Some("override") {
                    return Err(format!("expected \"override\" after \"member {dev}\""));
                }
                let v = it.next().ok_or("\"override\" needs a value or none")?;
                let o = match v {
                    "none" => PfcOverride::Clear,
                    _ => PfcOverride::Set(parse_u32(v)?),
                };
                out.member = Some((dev.to_string(), o));
            }
            "member" => return Err(format!("\"{key}\" given twice")),
            _ => return Err(format!("unknown PFC setting \"{key}\"")),
        }
    }
    if out.bitmap.is_none() && out.prio.is_empty() && out.member.is_none() {
        return Err("nothing to set".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ecn_keys() {
        assert_eq!(
            parse_ecn(&v(&[
                "enable",
                "off",
                "tclass",
                "0x68",
                "np-cnp-dscp",
                "48"
            ])),
            Ok(vec![(19, 0), (18, 0x68), (2, 48)])
        );
        assert_eq!(
            parse_ecn(&v(&["rp_rate_reduce_monitor_period", "4"])),
            Ok(vec![(17, 4)])
        );
        // Ranges are the kernel's: 16 goes out and comes back refused.
        assert_eq!(parse_ecn(&v(&["rp-rpg-gd", "16"])), Ok(vec![(11, 16)]));
        assert!(parse_ecn(&v(&["rp-rpg-gd"])).is_err());
        assert!(parse_ecn(&v(&["pfc-enable", "1"])).is_err());
        assert!(parse_ecn(&v(&["enable", "on", "enable", "off"])).is_err());
        assert!(parse_ecn(&v(&["tclass", "4294967296"])).is_err());
        assert!(parse_ecn(&v(&[])).is_err());
    }

    #[test]
    fn pfc_args() {
        assert_eq!(
            parse_pfc(&v(&["bitmap", "0x08"])),
            Ok(PfcArgs {
                bitmap: Some(8),
                ..PfcArgs::default()
            })
        );
        assert_eq!(
            parse_pfc(&v(&[
                "member", "rxe1", "override", "none", "bitmap", "0x100"
            ])),
            Ok(PfcArgs {
                bitmap: Some(0x100),
                prio: vec![],
                member: Some(("rxe1".into(), PfcOverride::Clear))
            })
        );
        assert_eq!(
            parse_pfc(&v(&["member", "rxe1", "override", "0x0c"])).map(|a| a.member),
            Ok(Some(("rxe1".into(), PfcOverride::Set(0x0c))))
        );
        assert!(parse_pfc(&v(&["member", "rxe1", "0x0c"])).is_err());
        assert!(parse_pfc(&v(&["bitmap"])).is_err());
        assert!(parse_pfc(&v(&["bitmap", "1", "bitmap", "2"])).is_err());
        assert!(parse_pfc(&v(&[])).is_err());
        assert!(parse_pfc(&v(&["prio", "3"])).is_err());
    }

    #[test]
    fn prio_pfc_as_dcb_takes_it() {
        let a = parse_pfc(&v(&[
            "prio-pfc", "3:on", "0:off", "member", "rxe0", "override", "1",
        ]))
        .expect("parses");
        assert_eq!(a.prio, [(3, true), (0, false)]);
        assert_eq!(a.bitmap_from(None), Some(0x08));
        assert_eq!(a.bitmap_from(Some(0x03)), Some(0x0a));
        assert_eq!(a.member, Some(("rxe0".into(), PfcOverride::Set(1))));
        assert!(parse_pfc(&v(&["prio-pfc"])).is_err());
        assert!(parse_pfc(&v(&["prio-pfc", "8:on"])).is_err());
        assert!(parse_pfc(&v(&["prio-pfc", "3:yes"])).is_err());
        assert!(parse_pfc(&v(&["prio-pfc", "3:on", "3:off"])).is_err());
        assert!(parse_pfc(&v(&["bitmap", "1", "prio-pfc", "3:on"])).is_err());
        // Without prio-pfc the bitmap is sent as given.
        assert_eq!(
            parse_pfc(&v(&["bitmap", "4"])).map(|a| a.bitmap_from(Some(1))),
            Ok(Some(4))
        );
    }
}
