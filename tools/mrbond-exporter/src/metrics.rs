// SPDX-License-Identifier: GPL-2.0
//! The metrics of a scrape: the bonds as BOND_GET reports them, and the
//! traffic counters of each member's port and netdev where the member has
//! them. Names follow Prometheus' conventions: counters end in `_total`,
//! units are base units (bytes, ratios), gauges are not counters.

use mrbondctl::attrs::{
    KnobState, Mode, Policy, Reason, Usability, PAUSE_COUNTERS, PFC_COUNTERS, PFC_PRIOS,
};
use mrbondctl::knob_output::knob_names;
use mrbondctl::msg::{Bond, Member};

use crate::expo::{Family, Kind};
use crate::host::{Host, PortTraffic};

/// Index in `COUNTER_NAMES` of each ECN/DCQCN counter the exporter names
/// (the pause and PFC ones: `PAUSE_COUNTERS`, `PFC_COUNTERS`).
const ECN_MARKED: usize = 0;
const CNP_SENT: usize = 1;
const CNP_HANDLED: usize = 2;
const CNP_IGNORED: usize = 3;

/// Every family the exporter can write, each with its help and type, in
/// the order written. `mrbond-exporter --list` prints the names; the
/// Grafana dashboard's check reads them from there.
pub const FAMILIES: &[(&str, Kind, &str)] = &[
    (
        "mrbond_up",
        Kind::Gauge,
        "1 if the rdma_mrbond netlink family answered, else 0.",
    ),
    (
        "mrbond_bond_info",
        Kind::Gauge,
        "A bond's mode and placement policy (always 1).",
    ),
    (
        "mrbond_bond_usable_members",
        Kind::Gauge,
        "Members QPs can be placed on.",
    ),
    (
        "mrbond_placements_total",
        Kind::Counter,
        "QPs the bond placed since it was created.",
    ),
    (
        "mrbond_placement_failures_total",
        Kind::Counter,
        "Placements refused for lack of a usable member.",
    ),
    (
        "mrbond_member_usable",
        Kind::Gauge,
        "1 while the member takes new QPs; reason says why not.",
    ),
    (
        "mrbond_member_weight",
        Kind::Gauge,
        "The member's admin weight for wrr.",
    ),
    ("mrbond_member_qps", Kind::Gauge, "QPs the member hosts."),
    (
        "mrbond_member_outstanding_wr",
        Kind::Gauge,
        "WRs posted on the member's QPs and not yet completed.",
    ),
    (
        "mrbond_member_utilisation_ratio",
        Kind::Gauge,
        "Transmit utilisation of the member's capacity (0..1), while known.",
    ),
    (
        "mrbond_member_link_up",
        Kind::Gauge,
        "1 if the member's netdev, a bond slave, has its link up.",
    ),
    (
        "mrbond_member_tx_enabled",
        Kind::Gauge,
        "1 if LACP lets the member's netdev transmit.",
    ),
    (
        "mrbond_member_transitions_total",
        Kind::Counter,
        "Changes of the member's usability.",
    ),
    (
        "mrbond_member_placements_total",
        Kind::Counter,
        "QPs placed on the member since it joined.",
    ),
    (
        "mrbond_flushed_wr_total",
        Kind::Counter,
        "WRs of the member's QPs completed with a flush error.",
    ),
    (
        "mrbond_wrong_member_key_total",
        Kind::Counter,
        "Posts refused because a key was another member's.",
    ),
    (
        "mrbond_knob_status",
        Kind::Gauge,
        "1 for a knob's status on a member: unset, pending, applied, unsupported or failed.",
    ),
    (
        "mrbond_pfc_pause_frames_total",
        Kind::Counter,
        "Per-priority PFC pause frames of the member's port (dcbnl ieee_getpfc).",
    ),
    (
        "mrbond_pause_frames_total",
        Kind::Counter,
        "IEEE 802.3x (global) pause frames of the member's port.",
    ),
    (
        "mrbond_ecn_marked_packets_total",
        Kind::Counter,
        "RoCE packets the member received with ECN CE marked.",
    ),
    (
        "mrbond_cnp_sent_total",
        Kind::Counter,
        "CNPs the member sent (notification point).",
    ),
    (
        "mrbond_cnp_handled_total",
        Kind::Counter,
        "CNPs the member's reaction point acted on.",
    ),
    (
        "mrbond_cnp_ignored_total",
        Kind::Counter,
        "CNPs the member's reaction point ignored.",
    ),
    (
        "mrbond_member_port_transmit_bytes_total",
        Kind::Counter,
        "RDMA bytes the member's port sent (port counters, where the HCA has them).",
    ),
    (
        "mrbond_member_port_receive_bytes_total",
        Kind::Counter,
        "RDMA bytes the member's port received (port counters, where the HCA has them).",
    ),
    (
        "mrbond_member_port_transmit_packets_total",
        Kind::Counter,
        "RDMA packets the member's port sent.",
    ),
    (
        "mrbond_member_port_receive_packets_total",
        Kind::Counter,
        "RDMA packets the member's port received.",
    ),
    (
        "mrbond_member_netdev_transmit_bytes_total",
        Kind::Counter,
        "Bytes the member's netdev sent, RDMA and other traffic.",
    ),
    (
        "mrbond_member_netdev_receive_bytes_total",
        Kind::Counter,
        "Bytes the member's netdev received, RDMA and other traffic.",
    ),
];

/// The families of one scrape; `bonds` is `None` when the netlink family
/// did not answer (module not loaded).
pub fn collect(bonds: Option<&[Bond]>, host: &dyn Host) -> Vec<Family> {
    let mut fams: Vec<Family> = FAMILIES
        .iter()
        .map(|(name, kind, help)| Family::new(name, *kind, help))
        .collect();
    let mut out = Families(&mut fams);
    out.push("mrbond_up", &[], f64::from(u8::from(bonds.is_some())));
    for b in bonds.unwrap_or_default() {
        bond(&mut out, b, host);
    }
    fams
}

/// Families by name: a name not in [`FAMILIES`] is a bug the tests catch.
struct Families<'a>(&'a mut Vec<Family>);

impl Families<'_> {
    fn push(&mut self, name: &str, labels: &[(&'static str, &str)], value: f64) {
        match self.0.iter_mut().find(|f| f.name == name) {
            Some(f) => f.push(labels, value),
            None => debug_assert!(false, "{name} is not in FAMILIES"),
        }
    }

    fn push_opt(&mut self, name: &str, labels: &[(&'static str, &str)], value: Option<f64>) {
        if let Some(v) = value {
            self.push(name, labels, v);
        }
    }
}

fn u(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

fn flag(v: Option<bool>) -> Option<f64> {
    v.map(|v| f64::from(u8::from(v)))
}

fn bond(out: &mut Families, b: &Bond, host: &dyn Host) {
    let name = b.name.as_str();
    let mode = b.mode.map_or_else(|| "unknown".into(), Mode::label);
    let policy = b.policy.map_or_else(|| "unknown".into(), Policy::label);
    out.push(
        "mrbond_bond_info",
        &[("bond", name), ("mode", &mode), ("policy", &policy)],
        1.0,
    );
    let l = [("bond", name)];
    out.push_opt(
        "mrbond_bond_usable_members",
        &l,
        b.usable_members.map(f64::from),
    );
    out.push_opt("mrbond_placements_total", &l, u(b.placements));
    out.push_opt(
        "mrbond_placement_failures_total",
        &l,
        u(b.placement_failures),
    );
    for m in &b.members {
        member(out, name, m, host);
    }
}

fn member(out: &mut Families, bond: &str, m: &Member, host: &dyn Host) {
    let netdev = m
        .netdev_ifindex
        .and_then(|i| host.ifname(i))
        .unwrap_or_default();
    let l = [("bond", bond), ("member", m.ibdev.as_str())];
    if let Some(usability) = m.usability {
        let reason = m.reason.map_or_else(|| "unknown".into(), Reason::label);
        let usable = Usability::from_value(usability) == Some(Usability::Usable);
        out.push(
            "mrbond_member_usable",
            &[
                ("bond", bond),
                ("member", &m.ibdev),
                ("netdev", &netdev),
                ("reason", &reason),
            ],
            f64::from(u8::from(usable)),
        );
    }
    out.push_opt("mrbond_member_weight", &l, m.weight.map(f64::from));
    out.push_opt("mrbond_member_qps", &l, m.qps.map(f64::from));
    out.push_opt("mrbond_member_outstanding_wr", &l, u(m.outstanding));
    let util = m.utilisation.map(|p| f64::from(p) / 1000.0);
    out.push_opt("mrbond_member_utilisation_ratio", &l, util);
    out.push_opt("mrbond_member_link_up", &l, flag(m.link_up));
    out.push_opt("mrbond_member_tx_enabled", &l, flag(m.tx_enabled));
    out.push_opt("mrbond_member_transitions_total", &l, u(m.transitions));
    out.push_opt("mrbond_member_placements_total", &l, u(m.placements));
    out.push_opt("mrbond_flushed_wr_total", &l, u(m.flushed_wr));
    out.push_opt("mrbond_wrong_member_key_total", &l, u(m.wrong_member_key));
    for k in &m.knob_status {
        let status = k.state.map_or_else(|| "unknown".into(), KnobState::label);
        for knob in knob_names(k.knobs) {
            out.push(
                "mrbond_knob_status",
                &[
                    ("bond", bond),
                    ("member", &m.ibdev),
                    ("knob", knob),
                    ("status", &status),
                ],
                1.0,
            );
        }
    }
    congestion(out, &l, m);
    traffic(
        out,
        &l,
        host.port_traffic(&m.ibdev),
        host.netdev_bytes(&netdev),
    );
}

/// The member's ECN and pause counters that it has (the kernel leaves out
/// what the member's driver cannot tell).
fn congestion(out: &mut Families, l: &[(&'static str, &str); 2], m: &Member) {
    let Some(c) = &m.counters else { return };
    let get = |i: usize| u(c.0.get(i).copied().flatten());
    out.push_opt("mrbond_ecn_marked_packets_total", l, get(ECN_MARKED));
    out.push_opt("mrbond_cnp_sent_total", l, get(CNP_SENT));
    out.push_opt("mrbond_cnp_handled_total", l, get(CNP_HANDLED));
    out.push_opt("mrbond_cnp_ignored_total", l, get(CNP_IGNORED));
    for (i, dir) in ["tx", "rx"].into_iter().enumerate() {
        let dl = [l[0], l[1], ("dir", dir)];
        out.push_opt("mrbond_pause_frames_total", &dl, get(PAUSE_COUNTERS + i));
        for prio in 0..PFC_PRIOS {
            let p = prio.to_string();
            let pl = [l[0], l[1], ("prio", p.as_str()), ("dir", dir)];
            out.push_opt(
                "mrbond_pfc_pause_frames_total",
                &pl,
                get(PFC_COUNTERS + PFC_PRIOS * i + prio),
            );
        }
    }
}

fn traffic(
    out: &mut Families,
    l: &[(&'static str, &str); 2],
    port: PortTraffic,
    netdev: Option<(u64, u64)>,
) {
    out.push_opt(
        "mrbond_member_port_transmit_bytes_total",
        l,
        u(port.tx_bytes),
    );
    out.push_opt(
        "mrbond_member_port_receive_bytes_total",
        l,
        u(port.rx_bytes),
    );
    out.push_opt(
        "mrbond_member_port_transmit_packets_total",
        l,
        u(port.tx_packets),
    );
    out.push_opt(
        "mrbond_member_port_receive_packets_total",
        l,
        u(port.rx_packets),
    );
    if let Some((tx, rx)) = netdev {
        out.push("mrbond_member_netdev_transmit_bytes_total", l, tx as f64);
        out.push("mrbond_member_netdev_receive_bytes_total", l, rx as f64);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use mrbondctl::attrs::{AdminState, COUNTER_NAMES};
    use mrbondctl::msg::{Counters, KnobStatus};

    use super::*;
    use crate::expo::encode;

    /// A host whose every member has every counter.
    struct Full;

    impl Host for Full {
        fn ifname(&self, ifindex: u32) -> Option<String> {
            Some(format!("eth{ifindex}"))
        }
        fn port_traffic(&self, _: &str) -> PortTraffic {
            PortTraffic {
                tx_bytes: Some(4000),
                rx_bytes: Some(8000),
                tx_packets: Some(4),
                rx_packets: Some(8),
            }
        }
        fn netdev_bytes(&self, _: &str) -> Option<(u64, u64)> {
            Some((5000, 9000))
        }
    }

    fn sample() -> Bond {
        let mut counters = Counters::default();
        for (i, c) in counters.0.iter_mut().enumerate() {
            *c = Some(i as u64 * 10);
        }
        let ready = Member {
            ibdev: "rxe0".into(),
            netdev_ifindex: Some(3),
            weight: Some(100),
            admin: Some(AdminState::Up.value()),
            usability: Some(Usability::Usable.value()),
            reason: Some(Reason::Ready.value()),
            qps: Some(7),
            outstanding: Some(12),
            transitions: Some(1),
            lacp_slave: true,
            link_up: Some(true),
            tx_enabled: Some(true),
            knob_status: vec![KnobStatus {
                knobs: 1 << 20,
                state: Some(KnobState::Unsupported.value()),
                reason: Some(1),
                errno: None,
            }],
            counters: Some(counters),
            pfc_override: None,
            utilisation: Some(375),
            capacity_mbps: Some(0),
            placements: Some(9),
            flushed_wr: Some(40),
            wrong_member_key: Some(0),
        };
        let pulled = Member {
            ibdev: "rxe1".into(),
            netdev_ifindex: Some(4),
            usability: Some(Usability::Unusable.value()),
            reason: Some(Reason::LinkDown.value()),
            ..Member::default()
        };
        Bond {
            ibdev_index: Some(5),
            name: "mrbond0".into(),
            mode: Some(Mode::Rail.value()),
            policy: Some(Policy::Wrr.value()),
            members: vec![ready, pulled],
            usable_members: Some(1),
            placements: Some(9),
            placement_failures: Some(0),
            ..Bond::default()
        }
    }

    fn scrape() -> String {
        encode(&collect(Some(&[sample()]), &Full))
    }

    #[test]
    fn every_family_is_written_for_a_full_member() {
        let fams = collect(Some(&[sample()]), &Full);
        let empty: Vec<_> = fams
            .iter()
            .filter(|f| f.is_empty())
            .map(|f| f.name)
            .collect();
        assert!(empty.is_empty(), "no samples: {empty:?}");
    }

    #[test]
    fn states_and_counters() {
        let out = scrape();
        for line in [
            "mrbond_up 1",
            "mrbond_bond_info{bond=\"mrbond0\",mode=\"rail\",policy=\"wrr\"} 1",
            "mrbond_member_usable{bond=\"mrbond0\",member=\"rxe0\",netdev=\"eth3\",reason=\"ready\"} 1",
            "mrbond_member_usable{bond=\"mrbond0\",member=\"rxe1\",netdev=\"eth4\",reason=\"link-down\"} 0",
            "mrbond_member_utilisation_ratio{bond=\"mrbond0\",member=\"rxe0\"} 0.375",
            "mrbond_flushed_wr_total{bond=\"mrbond0\",member=\"rxe0\"} 40",
            "mrbond_knob_status{bond=\"mrbond0\",member=\"rxe0\",knob=\"pfc_enable\",status=\"unsupported\"} 1",
            "mrbond_pause_frames_total{bond=\"mrbond0\",member=\"rxe0\",dir=\"rx\"} 50",
            "mrbond_pfc_pause_frames_total{bond=\"mrbond0\",member=\"rxe0\",prio=\"3\",dir=\"tx\"} 90",
            "mrbond_pfc_pause_frames_total{bond=\"mrbond0\",member=\"rxe0\",prio=\"7\",dir=\"rx\"} 210",
            "mrbond_ecn_marked_packets_total{bond=\"mrbond0\",member=\"rxe0\"} 0",
            "mrbond_member_port_transmit_bytes_total{bond=\"mrbond0\",member=\"rxe0\"} 4000",
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line} in\n{out}");
        }
        // Absent in the reply, absent in the scrape: no made-up zeros.
        assert!(!out.contains("mrbond_member_qps{bond=\"mrbond0\",member=\"rxe1\"}"));
        assert_eq!(COUNTER_NAMES[PFC_COUNTERS + 3], "tx_pfc_prio3");
        assert_eq!(COUNTER_NAMES[CNP_IGNORED], "rp_cnp_ignored");
    }

    #[test]
    fn module_not_loaded() {
        assert_eq!(
            encode(&collect(None, &Full)),
            "# HELP mrbond_up 1 if the rdma_mrbond netlink family answered, else 0.\n\
             # TYPE mrbond_up gauge\nmrbond_up 0\n"
        );
    }

    /// promtool (Debian's `prometheus`, installed by the test command's
    /// install-deps.sh) lints the scrape as Prometheus does.
    #[test]
    fn sample_scrape_passes_promtool() {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool (tools/testbed/install-deps.sh installs it)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(scrape().as_bytes())
            .expect("writes");
        let out = child.wait_with_output().expect("runs");
        assert!(
            out.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
