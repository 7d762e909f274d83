//! Replays placement and failover scenarios through the policy core and
//! prints per-member shares and Jain's fairness index.
//!
//! `mrbond-sim [placements]` (default 100000 per scenario).
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

use mrbond_policy::policy::wrr;
use mrbond_policy::{
    workload::Rng, AdminState, Debounce, EligibilitySet, FlowKey, Inputs, LacpState, MemberIndex,
    MemberMask, MemberView, PlaceRequest, Placer, Planner, PlannerConfig, Policy, QpEntry,
    RebalanceConfig, Transitions, Usability, MAX_MEMBERS,
};

fn mi(i: usize) -> MemberIndex {
    MemberIndex::new(i).expect("member index")
}

/// Flows of this file's own shape over the shared generator.
trait Flows {
    fn flow(&mut self) -> FlowKey;
}

impl Flows for Rng {
    fn flow(&mut self) -> FlowKey {
        let r = self.next_u64();
        FlowKey::ipv4(
            [10, 0, 0, (r & 0x3f) as u8],
            [10, 1, 0, ((r >> 8) & 0x3f) as u8],
            (r >> 16) as u16 | 0xc000,
        )
    }
}

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

fn placer(policy: Policy, weights: &[u16]) -> Placer {
    let mut p = Placer::new(policy);
    for (i, w) in weights.iter().enumerate() {
        p.add_member(mi(i), *w).expect("add member");
    }
    p.set_usable_mask(MemberMask::first_n(weights.len()));
    p
}

fn place_many(p: &mut Placer, n: u64, rng: &mut Rng) -> [u64; MAX_MEMBERS] {
    let mut counts = [0u64; MAX_MEMBERS];
    for _ in 0..n {
        let m = p.place(&PlaceRequest::new(rng.flow())).expect("placement");
        counts[m.get()] += 1;
        p.qp_added(m);
    }
    counts
}

/// Prints shares (and, with `weights`, the ideal shares) plus Jain's index
/// of the weight-normalised counts over `members`.
fn report(label: &str, counts: &[u64; MAX_MEMBERS], members: &[usize], weights: Option<&[f64]>) {
    let total: u64 = members.iter().map(|&m| counts[m]).sum();
    let wsum: f64 = weights.map_or(0.0, |w| members.iter().map(|&m| w[m]).sum());
    print!("  {label:<28}");
    for &m in members {
        let share = 100.0 * counts[m] as f64 / total.max(1) as f64;
        match weights {
            Some(w) => print!(" m{m}={share:5.1}% (ideal {:4.1})", 100.0 * w[m] / wsum),
            None => print!(" m{m}={share:5.1}%"),
        }
    }
    let norm: Vec<f64> = members
        .iter()
        .map(|&m| counts[m] as f64 / weights.map_or(1.0, |w| w[m]))
        .collect();
    println!("  Jain={:.4}", jain(&norm));
}

fn seed_scenario(n: u64) {
    println!("== seed: equal admin weights, member 0 at 80 % utilisation, member 1 at 50 %");
    println!(
        "   formula: effective = admin_weight * ({} - util_permille), floor {} permille",
        wrr::HEADROOM_SCALE,
        wrr::HEADROOM_FLOOR_PERMILLE
    );
    let mut p = placer(Policy::Wrr, &[100, 100]);
    p.set_utilisation(mi(0), 800);
    p.set_utilisation(mi(1), 500);
    let eff: Vec<f64> = (0..2)
        .map(|i| f64::from(p.effective_weight(mi(i))))
        .collect();
    println!(
        "   effective weights: m0={} m1={} -> m1 ideal share {:.1} %",
        eff[0],
        eff[1],
        100.0 * eff[1] / (eff[0] + eff[1])
    );
    let counts = place_many(&mut p, n, &mut Rng(1));
    report("wrr seed", &counts, &[0, 1], Some(&eff));
    println!(
        "   member 1 received {:.2} % of {} new QPs",
        100.0 * counts[1] as f64 / n as f64,
        n
    );
}

fn equal_weights(n: u64) {
    println!("== equal weights, {n} placements per row");
    for members in [2usize, 4, 8, 16] {
        for policy in [Policy::Wrr, Policy::Lqf, Policy::Hash, Policy::RoundRobin] {
            let mut p = placer(policy, &vec![100; members]);
            let counts = place_many(&mut p, n, &mut Rng(7 + members as u64));
            let ms: Vec<usize> = (0..members).collect();
            if members <= 4 {
                report(&format!("{} x{members}", policy.name()), &counts, &ms, None);
            } else {
                let norm: Vec<f64> = ms.iter().map(|&m| counts[m] as f64).collect();
                let (lo, hi) = ms.iter().fold((u64::MAX, 0), |(lo, hi), &m| {
                    (lo.min(counts[m]), hi.max(counts[m]))
                });
                println!(
                    "  {:<28} min={lo} max={hi}  Jain={:.4}",
                    format!("{} x{members}", policy.name()),
                    jain(&norm)
                );
            }
        }
    }
}

fn weighted(n: u64) {
    println!("== weighted wrr: admin weights 100/200/300/400, utilisation 0/0/50/90 %");
    let mut p = placer(Policy::Wrr, &[100, 200, 300, 400]);
    for (i, u) in [0u16, 0, 500, 900].iter().enumerate() {
        p.set_utilisation(mi(i), *u);
    }
    let eff: Vec<f64> = (0..4)
        .map(|i| f64::from(p.effective_weight(mi(i))))
        .collect();
    let counts = place_many(&mut p, n, &mut Rng(3));
    report("wrr weighted", &counts, &[0, 1, 2, 3], Some(&eff));
}

fn utilisation_feedback() {
    println!("== utilisation feedback: 4 x 100G members, background load 60/20/0/0 Gb/s,");
    println!("   each new QP adds 0.5 Gb/s; counters sampled every 1000 placements");
    let mut p = placer(Policy::Wrr, &[100; 4]);
    let background = [60.0f64, 20.0, 0.0, 0.0];
    let mut qps = [0u64; MAX_MEMBERS];
    let mut rng = Rng(11);
    for round in 0..8 {
        let got = place_many(&mut p, 1000, &mut rng);
        for m in 0..4 {
            qps[m] += got[m];
            // Gb/s -> bytes in a 1 s interval, capped at line rate.
            let gbps = (background[m] + 0.5 * qps[m] as f64 / 8.0).min(100.0);
            let bytes = (gbps * 1e9 / 8.0) as u64;
            p.update_utilisation(mi(m), bytes, 1_000_000_000, 100_000);
        }
        let utils: Vec<String> = (0..4)
            .map(|m| format!("{:4}", p.utilisation(mi(m))))
            .collect();
        let shares: Vec<String> = (0..4)
            .map(|m| format!("{:5.1}%", 100.0 * got[m] as f64 / 1000.0))
            .collect();
        println!(
            "  round {round}: util permille [{}]  shares of this round [{}]",
            utils.join(" "),
            shares.join(" ")
        );
    }
}

fn failover_scenario() {
    println!("== failover: 4 members, 400 QPs by wrr; member 2 loses LACP (downdelay 200 ms)");
    let ms = 1_000_000u64;
    let mut elig = EligibilitySet::new(Debounce {
        updelay_ns: 100 * ms,
        downdelay_ns: 200 * ms,
    });
    let slave = LacpState::Slave {
        link_up: true,
        tx_enabled: true,
    };
    let mut p = placer(Policy::Wrr, &[100; 4]);
    for m in 0..4 {
        elig.add_member(
            mi(m),
            Inputs {
                lacp: slave,
                ..Inputs::HEALTHY
            },
            0,
        );
    }
    p.set_usable_mask(elig.usable_mask());
    let mut qps: Vec<QpEntry> = Vec::new();
    let mut rng = Rng(5);
    for id in 0..400 {
        let m = p.place(&PlaceRequest::new(rng.flow())).expect("place");
        p.qp_added(m);
        qps.push(QpEntry {
            id,
            member: m,
            load: 1,
        });
    }
    let print_loads = |label: &str, qps: &[QpEntry], view_usable: MemberMask| {
        let mut c = [0u64; MAX_MEMBERS];
        for q in qps {
            c[q.member.get()] += 1;
        }
        let members: Vec<usize> = view_usable.iter().map(|m| m.get()).collect();
        report(label, &c, &members, None);
    };
    print_loads("before", &qps, MemberMask::first_n(4));

    let mut planner = Planner::new(PlannerConfig {
        rebalance: Some(RebalanceConfig::DEFAULT),
    });
    let off = LacpState::Slave {
        link_up: true,
        tx_enabled: false,
    };
    let mut now = 1000 * ms;
    print_transitions(&elig.set_lacp(mi(2), off, now), ms);
    p.set_usable_mask(elig.usable_mask());
    now = elig.next_deadline().expect("deadline");
    print_transitions(&elig.poll(now), ms);
    p.set_usable_mask(elig.usable_mask());
    let view = MemberView::from_state(&elig, &p);
    let mut out = vec![
        mrbond_policy::Action {
            qp_index: 0,
            qp_id: 0,
            from: MemberIndex::FIRST,
            to: None,
            kind: mrbond_policy::ActionKind::Failover,
        };
        qps.len()
    ];
    let sum = planner.on_member_change(&view, &qps, &mut out, now);
    println!(
        "  failover plan: errored={} replaced={} written={}",
        sum.errored, sum.replaced, sum.written
    );
    for a in &out[..sum.written] {
        qps[a.qp_index].member = a.to.expect("survivor");
    }
    print_loads("after failover", &qps, view.usable);

    // Member 2 comes back; nothing moves on the event itself.
    now += 5000 * ms;
    elig.set_lacp(mi(2), slave, now);
    now = elig.next_deadline().expect("updelay");
    elig.poll(now);
    p.set_usable_mask(elig.usable_mask());
    let view = MemberView::from_state(&elig, &p);
    let sum = planner.on_member_change(&view, &qps, &mut out, now);
    println!(
        "  member 2 usable again at t={} ms: failback moves on the event = {}",
        now / ms,
        sum.written
    );
    for tick in 0..40 {
        now += 5000 * ms;
        let sum = planner.on_tick(&view, &qps, &mut out, now);
        for a in &out[..sum.written] {
            qps[a.qp_index].member = a.to.expect("target");
        }
        let mut c = [0u64; MAX_MEMBERS];
        for q in &qps {
            c[q.member.get()] += 1;
        }
        let norm: Vec<f64> = (0..4).map(|m| c[m] as f64).collect();
        if tick > 3 && sum.rebalanced != 0 && tick % 4 != 0 {
            continue;
        }
        println!(
            "  rebalance tick {tick:2} (t={:6} ms): moved {:2}  loads {:?}  Jain={:.4}",
            now / ms,
            sum.rebalanced,
            &c[..4],
            jain(&norm)
        );
        if sum.rebalanced == 0 && tick > 2 {
            break;
        }
    }
}

fn flap_scenario() {
    println!("== flap storm: carrier bounces on member 1, downdelay 200 ms, updelay 100 ms");
    let ms = 1_000_000u64;
    for period in [50u64, 150, 300, 600] {
        let mut e = EligibilitySet::new(Debounce {
            updelay_ns: 100 * ms,
            downdelay_ns: 200 * ms,
        });
        e.add_member(mi(1), Inputs::HEALTHY, 0);
        let (mut unusable, mut transitions) = (0, 0);
        let mut now = 0;
        let mut up = true;
        for _ in 0..200 {
            now += period * ms;
            // Deadlines fire on their own timer between flaps.
            while let Some(d) = e.next_deadline() {
                if d > now {
                    break;
                }
                for t in e.poll(d).iter() {
                    transitions += 1;
                    if t.to.usability == Usability::Unusable
                        && t.from.usability != Usability::Unusable
                    {
                        unusable += 1;
                    }
                }
            }
            up = !up;
            for t in e.set_link_up(mi(1), up, now).iter() {
                transitions += 1;
                if t.to.usability == Usability::Unusable && t.from.usability != Usability::Unusable
                {
                    unusable += 1;
                }
            }
        }
        println!(
            "  flap every {period:3} ms: 100 outages -> {unusable:3} failovers, {transitions} transitions logged"
        );
    }
    let mut e = EligibilitySet::new(Debounce::default());
    e.add_member(mi(0), Inputs::HEALTHY, 0);
    let t = e.set_admin(mi(0), AdminState::Drain, 1);
    println!(
        "  admin drain: {:?}/{} (keeps QPs, no new ones)",
        t.get(0).map(|t| t.to.usability),
        t.get(0).map_or("", |t| t.to.reason.name())
    );
}

fn print_transitions(tr: &Transitions, ms: u64) {
    for t in tr.iter() {
        println!(
            "  t={:5} ms member {} {:?}/{} -> {:?}/{}",
            t.at_ns / ms,
            t.member.get(),
            t.from.usability,
            t.from.reason.name(),
            t.to.usability,
            t.to.reason.name()
        );
    }
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    seed_scenario(n);
    weighted(n);
    equal_weights(n);
    utilisation_feedback();
    failover_scenario();
    flap_scenario();
}
