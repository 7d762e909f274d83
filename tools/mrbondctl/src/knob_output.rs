// SPDX-License-Identifier: GPL-2.0
//! Rendering of the ECN/DCQCN/PFC knobs: a bond's settings and counter
//! sums, and every member's per-knob status, override and counters, as
//! JSON or text; and the warnings `ecn set`/`pfc set` print for members
//! where a knob is not applied.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use crate::attrs::{
    KnobState, UnsupportedReason, COUNTER_NAMES, DCQCN_KNOBS, ECN_KNOBS, KNOB_NAMES,
};
use crate::msg::{Bond, Counters, KnobStatus, Member};
use crate::sys;

/// `0x08`.
pub(crate) fn hex(v: u32) -> String {
    format!("0x{v:02x}")
}

/// The knob names of a bit mask, in id order.
pub fn knob_names(mask: u32) -> Vec<&'static str> {
    KNOB_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// JSON of one status: `{"state": ..., "reason"/"errno"...}`.
pub(crate) fn status_json(k: &KnobStatus) -> Value {
    let mut o = Map::new();
    let state = k.state.and_then(KnobState::from_value);
    o.insert(
        "state".into(),
        match (state, k.state) {
            (Some(s), _) => json!(s.name()),
            (None, Some(v)) => json!(v),
            (None, None) => Value::Null,
        },
    );
    if state == Some(KnobState::Unsupported) {
        let r = k.reason.and_then(UnsupportedReason::from_value);
        o.insert(
            "reason".into(),
            json!(k.reason.map(UnsupportedReason::label)),
        );
        o.insert("text".into(), json!(r.map(UnsupportedReason::text)));
    }
    if state == Some(KnobState::Failed) {
        o.insert("errno".into(), json!(k.errno));
        o.insert(
            "strerror".into(),
            json!(k.errno.map(|e| sys::strerror(e as i32))),
        );
    }
    Value::Object(o)
}

/// Counters as `{name: value | null}`: `null` is a counter the member's
/// driver does not have (never a made-up 0).
pub fn counters_json(c: Option<&Counters>) -> Value {
    let mut o = Map::new();
    for (i, name) in COUNTER_NAMES.iter().enumerate() {
        let v = c.and_then(|c| c.0[i]);
        o.insert((*name).into(), json!(v));
    }
    Value::Object(o)
}

/// A member's knob fields (`null` from a kernel without knobs).
pub fn member_knobs_json(m: &Member) -> (Value, Value, Value) {
    if m.knob_status.is_empty() {
        return (Value::Null, Value::Null, Value::Null);
    }
    let mut knobs = Map::new();
    for k in &m.knob_status {
        for name in knob_names(k.knobs) {
            knobs.insert(name.into(), status_json(k));
        }
    }
    (
        Value::Object(knobs),
        json!(m.pfc_override),
        counters_json(m.counters.as_ref()),
    )
}

/// A bond's `ecn`, `pfc` and `counters` (`null` without knob support).
pub fn bond_knobs_json(b: &Bond) -> (Value, Value, Value) {
    let Some(ecn) = &b.ecn else {
        return (Value::Null, Value::Null, Value::Null);
    };
    let mut e = Map::new();
    for (i, v) in ecn.0.iter().enumerate() {
        let name = match i {
            _ if i == ECN_KNOBS - 1 => "enable",
            _ => KNOB_NAMES[i],
        };
        e.insert(name.into(), json!(v));
    }
    (
        Value::Object(e),
        json!({ "enable_bitmap": b.pfc_bitmap }),
        counters_json(b.counters.as_ref()),
    )
}

/// Names of a group, with `dcqcn (np_*, rp_*)` for all DCQCN parameters.
fn group_label(mask: u32) -> String {
    let all_dcqcn = (1u32 << DCQCN_KNOBS) - 1;
    let mut parts = Vec::new();
    if mask & all_dcqcn == all_dcqcn {
        parts.push("np_*,rp_*");
    }
    let rest = if mask & all_dcqcn == all_dcqcn {
        mask & !all_dcqcn
    } else {
        mask
    };
    parts.extend(knob_names(rest));
    parts.join(",")
}

pub(crate) fn status_text(k: &KnobStatus) -> String {
    match k.state.and_then(KnobState::from_value) {
        Some(KnobState::Unsupported) => format!(
            "unsupported ({})",
            k.reason
                .and_then(UnsupportedReason::from_value)
                .map_or("?", UnsupportedReason::text)
        ),
        Some(KnobState::Failed) => format!(
            "failed ({})",
            k.errno
                .map_or_else(|| "?".into(), |e| sys::strerror(e as i32))
        ),
        Some(s) => s.name().to_string(),
        None => k.state.map_or_else(|| "-".into(), KnobState::label),
    }
}

/// `name value` pairs of the counters in `range` (`unavailable` where
/// the member has none).
pub(crate) fn counters_text(c: Option<&Counters>, range: std::ops::Range<usize>) -> String {
    COUNTER_NAMES
        .iter()
        .enumerate()
        .skip(range.start)
        .take(range.len())
        .map(|(i, n)| match c.and_then(|c| c.0[i]) {
            Some(v) => format!("{n} {v}"),
            None => format!("{n} unavailable"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `bond show -d`: a bond's knob settings and every member's knob
/// status and PFC override (empty without knob support).
pub fn knob_details_text(b: &Bond) -> String {
    let mut s = String::new();
    let Some(ecn) = &b.ecn else {
        return s;
    };
    let get = |i: usize| ecn.0[i].map_or_else(|| "-".into(), |v| v.to_string());
    let _ = writeln!(
        s,
        "    ecn: enable {} tclass {} pfc: enable_bitmap {}",
        get(ECN_KNOBS - 1),
        get(DCQCN_KNOBS),
        b.pfc_bitmap.map_or_else(|| "none".into(), hex)
    );
    let dcqcn: Vec<String> = (0..DCQCN_KNOBS)
        .map(|i| format!("{} {}", KNOB_NAMES[i], get(i)))
        .collect();
    let _ = writeln!(s, "    dcqcn: {}", dcqcn.join(" "));
    for m in b.members.iter().filter(|m| !m.knob_status.is_empty()) {
        let groups: Vec<String> = m
            .knob_status
            .iter()
            .map(|k| format!("{} {}", group_label(k.knobs), status_text(k)))
            .collect();
        let _ = writeln!(
            s,
            "    {}: pfc_override {}; {}",
            m.ibdev,
            m.pfc_override.map_or_else(|| "none".into(), hex),
            groups.join("; ")
        );
    }
    s
}

/// `bond show -s`: the congestion counters of the bond (sums) and of
/// every member (empty without knob support).
pub fn knob_counters_text(b: &Bond) -> String {
    let mut s = String::new();
    if b.ecn.is_none() {
        return s;
    }
    let all = 0..COUNTER_NAMES.len();
    let _ = writeln!(
        s,
        "    counters: {}",
        counters_text(b.counters.as_ref(), all.clone())
    );
    for m in b.members.iter().filter(|m| !m.knob_status.is_empty()) {
        let _ = writeln!(
            s,
            "    {}: counters: {}",
            m.ibdev,
            counters_text(m.counters.as_ref(), all.clone())
        );
    }
    s
}

/// One warning per member on which any of the `knobs` (bit mask) is not
/// applied after a set.
pub fn not_applied_warnings(b: &Bond, knobs: u32) -> Vec<String> {
    let mut out = Vec::new();
    for m in &b.members {
        for k in &m.knob_status {
            let hit = k.knobs & knobs;
            let applied = k.state == Some(KnobState::Applied.value());
            if hit != 0 && !applied {
                out.push(format!(
                    "warning: {}: {}: {}",
                    m.ibdev,
                    group_label(hit),
                    status_text(k)
                ));
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn member() -> Member {
        Member {
            ibdev: "rxe1".into(),
            knob_status: vec![
                KnobStatus {
                    knobs: (1 << 18) - 1,
                    state: Some(3),
                    reason: Some(0),
                    errno: None,
                },
                KnobStatus {
                    knobs: (1 << 18) | (1 << 19),
                    state: Some(2),
                    ..KnobStatus::default()
                },
                KnobStatus {
                    knobs: 1 << 20,
                    state: Some(4),
                    errno: Some(5),
                    ..KnobStatus::default()
                },
            ],
            counters: Some(Counters({
                let mut c = [None; COUNTER_NAMES.len()];
                c[4] = Some(3);
                c[5] = Some(4);
                c[9] = Some(7); // tx_pfc_prio3
                c
            })),
            pfc_override: Some(0x0c),
            ..Member::default()
        }
    }

    #[test]
    fn member_json_lists_every_knob() {
        let (knobs, o, c) = member_knobs_json(&member());
        assert_eq!(knobs.as_object().map(Map::len), Some(21));
        assert_eq!(
            knobs["rp_rpg_gd"],
            json!({"state": "unsupported", "reason": "dcqcn-no-kernel-interface",
                   "text": "no kernel interface for DCQCN parameters"})
        );
        assert_eq!(knobs["ecn_enable"], json!({"state": "applied"}));
        assert_eq!(knobs["pfc_enable"]["state"], json!("failed"));
        assert_eq!(knobs["pfc_enable"]["errno"], json!(5));
        assert_eq!(o, json!(12));
        assert_eq!(c["np_cnp_sent"], Value::Null);
        assert_eq!(c["tx_pause_frames"], json!(3));
        assert_eq!(c["tx_pfc_prio3"], json!(7));
        assert_eq!(c["rx_pfc_prio3"], Value::Null);
    }

    #[test]
    fn warnings_name_what_is_not_applied() {
        let b = Bond {
            members: vec![member()],
            ..Bond::default()
        };
        let w = not_applied_warnings(&b, (1 << 11) | (1 << 19));
        assert_eq!(
            w,
            vec![
                "warning: rxe1: rp_rpg_gd: unsupported (no kernel interface for DCQCN parameters)"
            ]
        );
        assert_eq!(not_applied_warnings(&b, 1 << 20).len(), 1);
        assert_eq!(group_label((1 << 18) - 1), "np_*,rp_*");
    }
}
