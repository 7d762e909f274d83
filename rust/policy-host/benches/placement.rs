//! Criterion benchmark: ns per placement decision (`place` + `qp_added`) for
//! every policy at 2, 4, 8 and 16 members. For p50/p99 per decision run the
//! `mrbond-placement-bench` binary, which records the distribution.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mrbond_policy::{
    FlowKey, MemberIndex, MemberMask, Pin, PinScope, PlaceRequest, Placer, Policy,
};

const RING: usize = 1024;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn mi(i: usize) -> MemberIndex {
    MemberIndex::new(i).expect("member index")
}

fn setup(policy: Policy, members: usize) -> (Placer, Vec<PlaceRequest>) {
    let mut rng = Rng(0x5eed ^ members as u64);
    let mut p = Placer::new(policy);
    for i in 0..members {
        p.add_member(mi(i), 50 + (rng.next() % 200) as u16)
            .expect("add");
        p.set_utilisation(mi(i), (rng.next() % 900) as u16);
        p.set_outstanding_wqes(mi(i), (rng.next() % 64) as u32);
    }
    p.set_usable_mask(MemberMask::first_n(members));
    let reqs = (0..RING)
        .map(|_| {
            let r = rng.next();
            PlaceRequest {
                flow: FlowKey::ipv4(
                    [10, 0, 0, r as u8],
                    [10, 1, 0, (r >> 8) as u8],
                    (r >> 16) as u16,
                ),
                pin: (policy == Policy::Pinned).then(|| Pin {
                    member: mi((r >> 40) as usize % members),
                    scope: PinScope::Qp,
                }),
            }
        })
        .collect();
    (p, reqs)
}

fn placement(c: &mut Criterion) {
    for policy in Policy::ALL {
        let mut group = c.benchmark_group(format!("place/{}", policy.name()));
        group.throughput(Throughput::Elements(1));
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_millis(700));
        group.sample_size(30);
        for members in [2usize, 4, 8, 16] {
            let (mut p, reqs) = setup(policy, members);
            let mut idx = 0usize;
            group.bench_with_input(BenchmarkId::from_parameter(members), &members, |b, _| {
                b.iter(|| {
                    let req = &reqs[idx & (RING - 1)];
                    idx = idx.wrapping_add(1);
                    if let Ok(m) = p.place(black_box(req)) {
                        p.qp_added(m);
                        m.get()
                    } else {
                        usize::MAX
                    }
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, placement);
criterion_main!(benches);
