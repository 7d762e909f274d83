// SPDX-License-Identifier: GPL-2.0
//! `ecn show` and `pfc show`: one object's view of a bond, as text or
//! JSON. Text shows each member's status of the object's knobs, `-d` the
//! DCQCN parameters too, `-s` the object's counters; JSON has everything.

use std::fmt::Write as _;
use std::ops::Range;

use serde_json::{json, Map, Value};

use crate::attrs::{DCQCN_KNOBS, ECN_KNOBS, KNOB_NAMES, PAUSE_COUNTERS, PFC_PRIOS};
use crate::cli::Opts;
use crate::knob_output::{counters_text, hex, status_json, status_text};
use crate::msg::{Bond, Counters, KnobStatus, Member};

/// Knob ids of the statuses `ecn show` reports, and their labels.
const ECN_STATUS: [(usize, &str); 3] = [
    (ECN_KNOBS - 1, "ecn_enable"),
    (DCQCN_KNOBS, "tclass"),
    // Every DCQCN parameter has the status of the first.
    (0, "dcqcn"),
];
/// Knob id of the PFC bitmap.
const PFC_ENABLE: usize = ECN_KNOBS;
/// The counters of each object.
const ECN_COUNTERS: Range<usize> = 0..PAUSE_COUNTERS;
const PFC_COUNTERS: Range<usize> = PAUSE_COUNTERS..crate::attrs::COUNTER_NAMES.len();

/// The status group of `m` that holds knob `id`.
fn status_of(m: &Member, id: usize) -> Option<&KnobStatus> {
    m.knob_status.iter().find(|k| k.knobs & (1 << id) != 0)
}

fn status_label(m: &Member, id: usize) -> String {
    status_of(m, id).map_or_else(|| "-".into(), status_text)
}

fn counters_subset_json(c: Option<&Counters>, range: Range<usize>) -> Value {
    let all = crate::knob_output::counters_json(c);
    let names = &crate::attrs::COUNTER_NAMES[range];
    let o: Map<String, Value> = names
        .iter()
        .map(|n| ((*n).to_string(), all[*n].clone()))
        .collect();
    Value::Object(o)
}

fn statuses_json(m: &Member, labels: &[(usize, &str)]) -> Value {
    let o: Map<String, Value> = labels
        .iter()
        .map(|(id, label)| {
            let v = status_of(m, *id).map_or(Value::Null, status_json);
            ((*label).to_string(), v)
        })
        .collect();
    Value::Object(o)
}

/// `ecn show`, text.
pub fn ecn_text(b: &Bond, opts: Opts) -> String {
    let mut s = String::new();
    let Some(ecn) = &b.ecn else {
        let _ = writeln!(s, "{}: no knob support", b.name);
        return s;
    };
    let get = |i: usize| ecn.0[i].map_or_else(|| "-".into(), |v| v.to_string());
    let _ = writeln!(
        s,
        "{}: enable {} tclass {}",
        b.name,
        get(ECN_KNOBS - 1),
        get(DCQCN_KNOBS)
    );
    if opts.details {
        let dcqcn: Vec<String> = (0..DCQCN_KNOBS)
            .map(|i| format!("{} {}", KNOB_NAMES[i], get(i)))
            .collect();
        let _ = writeln!(s, "    dcqcn: {}", dcqcn.join(" "));
    }
    for m in &b.members {
        let st: Vec<String> = ECN_STATUS
            .iter()
            .map(|(id, label)| format!("{label} {}", status_label(m, *id)))
            .collect();
        let _ = writeln!(s, "    {}: {}", m.ibdev, st.join(" "));
    }
    if opts.stats {
        counters_lines(&mut s, b, ECN_COUNTERS);
    }
    s
}

/// `ecn show -j`: one bond.
pub fn ecn_json(b: &Bond) -> Value {
    let (ecn, _, _) = crate::knob_output::bond_knobs_json(b);
    let members: Vec<Value> = b
        .members
        .iter()
        .map(|m| {
            json!({
                "ifname": m.ibdev,
                "status": statuses_json(m, &ECN_STATUS),
                "counters": counters_subset_json(m.counters.as_ref(), ECN_COUNTERS),
            })
        })
        .collect();
    json!({
        "ifindex": b.ibdev_index,
        "ifname": b.name,
        "ecn": ecn,
        "counters": counters_subset_json(b.counters.as_ref(), ECN_COUNTERS),
        "members": members,
    })
}

/// `prio-pfc 0:off 1:off 2:off 3:on ...` of a bitmap, as `dcb pfc show`.
fn prio_pfc_text(bitmap: u32) -> String {
    (0..PFC_PRIOS)
        .map(|p| format!("{p}:{}", if bitmap & (1 << p) != 0 { "on" } else { "off" }))
        .collect::<Vec<_>>()
        .join(" ")
}

fn bitmap_text(v: Option<u32>) -> String {
    v.map_or_else(|| "none".into(), hex)
}

/// `pfc show`, text.
pub fn pfc_text(b: &Bond, opts: Opts) -> String {
    let mut s = String::new();
    if b.ecn.is_none() {
        let _ = writeln!(s, "{}: no knob support", b.name);
        return s;
    }
    let _ = write!(s, "{}: pfc-enable {}", b.name, bitmap_text(b.pfc_bitmap));
    if let Some(bitmap) = b.pfc_bitmap {
        let _ = write!(s, " prio-pfc {}", prio_pfc_text(bitmap));
    }
    s.push('\n');
    for m in &b.members {
        let _ = writeln!(
            s,
            "    {}: target {} override {} status {}",
            m.ibdev,
            bitmap_text(m.pfc_override.or(b.pfc_bitmap)),
            bitmap_text(m.pfc_override),
            status_label(m, PFC_ENABLE)
        );
    }
    if opts.stats {
        counters_lines(&mut s, b, PFC_COUNTERS);
    }
    s
}

/// `pfc show -j`: one bond.
pub fn pfc_json(b: &Bond) -> Value {
    let members: Vec<Value> = b
        .members
        .iter()
        .map(|m| {
            json!({
                "ifname": m.ibdev,
                "target": m.pfc_override.or(b.pfc_bitmap),
                "override": m.pfc_override,
                "status": statuses_json(m, &[(PFC_ENABLE, "pfc_enable")])["pfc_enable"],
                "counters": counters_subset_json(m.counters.as_ref(), PFC_COUNTERS),
            })
        })
        .collect();
    json!({
        "ifindex": b.ibdev_index,
        "ifname": b.name,
        "enable_bitmap": b.pfc_bitmap,
        "counters": counters_subset_json(b.counters.as_ref(), PFC_COUNTERS),
        "members": members,
    })
}

/// `-s`: the bond's sums, then every member's, of the counters in `range`.
fn counters_lines(s: &mut String, b: &Bond, range: Range<usize>) {
    let _ = writeln!(
        s,
        "    counters: {}",
        counters_text(b.counters.as_ref(), range.clone())
    );
    for m in &b.members {
        let _ = writeln!(
            s,
            "    {}: counters: {}",
            m.ibdev,
            counters_text(m.counters.as_ref(), range.clone())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob_output::tests::member;

    fn bond() -> Bond {
        Bond {
            name: "mrbond0".into(),
            ibdev_index: Some(5),
            members: vec![member()],
            pfc_bitmap: Some(0x08),
            ecn: Some(crate::msg::Ecn([Some(1); ECN_KNOBS])),
            ..Bond::default()
        }
    }

    #[test]
    fn pfc_text_as_dcb_shows_it() {
        let opts = Opts {
            stats: true,
            ..Opts::default()
        };
        let text = pfc_text(&bond(), opts);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(
                "mrbond0: pfc-enable 0x08 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
            )
        );
        assert_eq!(
            lines.next(),
            Some("    rxe1: target 0x0c override 0x0c status failed (Input/output error)")
        );
        assert!(text.contains(
            "rxe1: counters: tx_pause_frames 3 rx_pause_frames 4 tx_pfc_prio0 unavailable"
        ));
        assert!(!pfc_text(&bond(), Opts::default()).contains("counters"));
    }

    #[test]
    fn ecn_text_statuses() {
        let text = ecn_text(&bond(), Opts::default());
        assert_eq!(
            text,
            "mrbond0: enable 1 tclass 1\n    rxe1: ecn_enable applied tclass applied \
             dcqcn unsupported (no kernel interface for DCQCN parameters)\n"
        );
    }

    #[test]
    fn object_json() {
        let v = pfc_json(&bond());
        assert_eq!(v["enable_bitmap"], json!(8));
        assert_eq!(v["members"][0]["target"], json!(12));
        assert_eq!(v["members"][0]["status"]["state"], json!("failed"));
        assert_eq!(v["members"][0]["counters"]["tx_pfc_prio3"], json!(7));
        assert!(v["counters"].get("np_cnp_sent").is_none());
        let v = ecn_json(&bond());
        assert_eq!(
            v["members"][0]["status"]["tclass"]["state"],
            json!("applied")
        );
        assert_eq!(
            v["counters"].as_object().map(Map::len),
            Some(PAUSE_COUNTERS)
        );
    }
}
