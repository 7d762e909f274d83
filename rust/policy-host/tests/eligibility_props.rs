//! Property tests of the eligibility state machine against a reference model.
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

mod common;

use common::mi;
use mrbond_policy::{
    AdminState, Debounce, EligibilitySet, Inputs, LacpState, MemberIndex, Reason, Status,
    Usability, MAX_MEMBERS,
};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Ev {
    Admin(AdminState),
    Device(bool),
    Port(bool),
    Link(bool),
    Lacp(LacpState),
    Poll,
}

fn ev_strategy() -> impl Strategy<Value = Ev> {
    prop_oneof![
        1 => prop::sample::select(vec![AdminState::Up, AdminState::Drain, AdminState::Down]).prop_map(Ev::Admin),
        1 => any::<bool>().prop_map(Ev::Device),
        2 => any::<bool>().prop_map(Ev::Port),
        3 => any::<bool>().prop_map(Ev::Link),
        2 => (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(s, l, t)| Ev::Lacp(if s {
            LacpState::Slave { link_up: l, tx_enabled: t }
        } else {
            LacpState::NotSlave
        })),
        3 => Just(Ev::Poll),
    ]
}

/// Independent model: the debounced link is "up" at time t iff the raw link
/// has been ok since some point `s` with `s + updelay <= t` after the last
/// time it was debounced down, etc. Written as an explicit timeline instead
/// of a state enum so that it does not share the implementation's structure.
#[derive(Clone, Debug)]
struct Model {
    up: u64,
    down: u64,
    inputs: Inputs,
    /// Debounced link: Some(true)=up, Some(false)=down.
    stable_up: bool,
    /// When the raw link last changed away from `stable_up` (pending change).
    pending_since: Option<u64>,
}

impl Model {
    fn link_ok(i: &Inputs) -> bool {
        i.link_up && i.port_active && i.lacp.distributing()
    }

    fn settle(&mut self, now: u64) {
        if let Some(since) = self.pending_since {
            let delay = if self.stable_up { self.down } else { self.up };
            if now >= since + delay {
                self.stable_up = !self.stable_up;
                self.pending_since = None;
            }
        }
    }

    fn set(&mut self, inputs: Inputs, now: u64) {
        self.settle(now);
        self.inputs = inputs;
        let ok = Self::link_ok(&inputs);
        if ok == self.stable_up {
            self.pending_since = None;
        } else if self.pending_since.is_none() {
            let delay = if self.stable_up { self.down } else { self.up };
            if delay == 0 {
                self.stable_up = ok;
            } else {
                self.pending_since = Some(now);
            }
        }
    }

    fn status(&self) -> Status {
        let s = |usability, reason| Status { usability, reason };
        let i = &self.inputs;
        if !i.device_present {
            return s(Usability::Unusable, Reason::DeviceAbsent);
        }
        if i.admin == AdminState::Down {
            return s(Usability::Unusable, Reason::AdminDown);
        }
        match (self.stable_up, self.pending_since.is_some()) {
            (true, true) => s(Usability::Draining, Reason::DownDelay),
            (false, true) => s(Usability::Unusable, Reason::UpDelay),
            (false, false) => s(Usability::Unusable, i.link_fault().unwrap()),
            (true, false) if i.admin == AdminState::Drain => {
                s(Usability::Draining, Reason::AdminDrain)
            }
            (true, false) => Status::READY,
        }
    }

    fn deadline(&self) -> Option<u64> {
        self.pending_since
            .map(|s| s + if self.stable_up { self.down } else { self.up })
    }
}

fn apply(i: &mut Inputs, ev: Ev) {
    match ev {
        Ev::Admin(a) => i.admin = a,
        Ev::Device(d) => i.device_present = d,
        Ev::Port(p) => i.port_active = p,
        Ev::Link(l) => i.link_up = l,
        Ev::Lacp(l) => i.lacp = l,
        Ev::Poll => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn matches_reference_model(
        up in prop::sample::select(vec![0u64, 1, 50, 100, 1000]),
        down in prop::sample::select(vec![0u64, 1, 50, 200, 1000]),
        start_ok in any::<bool>(),
        events in prop::collection::vec((0usize..3, ev_strategy(), 0u64..400), 1..200),
    ) {
        let deb = Debounce { updelay_ns: up, downdelay_ns: down };
        let mut set = EligibilitySet::new(deb);
        let start = if start_ok { Inputs::HEALTHY } else { Inputs { link_up: false, ..Inputs::HEALTHY } };
        let mut models: Vec<Model> = (0..3).map(|_| Model {
            up, down, inputs: start, stable_up: start_ok, pending_since: None,
        }).collect();
        let mut last: Vec<Status> = vec![Status::NOT_MEMBER; MAX_MEMBERS];
        for m in 0..3 {
            let t = set.add_member(mi(m), start, 0);
            for tr in t.iter() {
                prop_assert_eq!(tr.from, last[m]);
                last[m] = tr.to;
            }
        }
        let mut now = 0u64;
        for (m, ev, dt) in events {
            now += dt;
            let member: MemberIndex = mi(m);
            let t = match ev {
                Ev::Poll => {
                    for md in models.iter_mut() {
                        md.settle(now);
                    }
                    set.poll(now)
                }
                _ => {
                    let mut i = models[m].inputs;
                    apply(&mut i, ev);
                    models[m].set(i, now);
                    set.update(member, i, now)
                }
            };
            let mut prev_at = 0;
            for tr in t.iter() {
                let k = tr.member.get();
                prop_assert_eq!(tr.from, last[k], "transition chain broken");
                prop_assert_ne!(tr.from, tr.to, "empty transition");
                prop_assert!(tr.at_ns <= now);
                if tr.member == member {
                    prop_assert!(tr.at_ns >= prev_at);
                    prev_at = tr.at_ns;
                }
                last[k] = tr.to;
            }
            for (k, md) in models.iter().enumerate() {
                prop_assert_eq!(set.status(mi(k)), last[k], "status without transition");
                if matches!(ev, Ev::Poll) || k == m {
                    prop_assert_eq!(set.status(mi(k)), md.status(), "member {} diverges from model", k);
                }
            }
            if matches!(ev, Ev::Poll) {
                let want = models.iter().filter_map(|md| md.deadline()).min();
                prop_assert_eq!(set.next_deadline(), want);
                if let Some(d) = want {
                    prop_assert!(d > now);
                }
            }
            let u = set.usable_mask();
            let d = set.draining_mask();
            let x = set.unusable_mask();
            prop_assert!(u.and(d).is_empty() && u.and(x).is_empty() && d.and(x).is_empty());
            prop_assert_eq!(u.or(d).or(x), set.present());
        }
    }

    /// With zero delays, status is a pure function of the inputs.
    #[test]
    fn zero_delay_is_memoryless(events in prop::collection::vec(ev_strategy(), 1..100)) {
        let mut set = EligibilitySet::new(Debounce::default());
        set.add_member(mi(0), Inputs::HEALTHY, 0);
        let mut fresh_inputs = Inputs::HEALTHY;
        for (t, ev) in events.into_iter().enumerate() {
            apply(&mut fresh_inputs, ev);
            set.update(mi(0), fresh_inputs, t as u64);
            let mut fresh = EligibilitySet::new(Debounce::default());
            fresh.add_member(mi(0), fresh_inputs, 0);
            prop_assert_eq!(set.status(mi(0)), fresh.status(mi(0)));
            prop_assert_eq!(set.next_deadline(), None);
        }
    }
}

#[test]
fn draining_member_is_not_usable_for_placement_but_keeps_qps() {
    let mut set = EligibilitySet::new(Debounce {
        updelay_ns: 0,
        downdelay_ns: 100,
    });
    set.add_member(mi(0), Inputs::HEALTHY, 0);
    set.add_member(mi(1), Inputs::HEALTHY, 0);
    set.set_link_up(mi(1), false, 10);
    assert_eq!(set.usable_mask().bits(), 0b01);
    assert_eq!(set.draining_mask().bits(), 0b10);
    assert!(set.unusable_mask().is_empty());
}
