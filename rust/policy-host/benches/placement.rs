//! Criterion benchmark: ns per placement decision (`place` + `qp_added`) for
//! every policy at 2, 4, 8 and 16 members. For p50/p99 per decision run the
//! `mrbond-placement-bench` binary, which records the distribution.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mrbond_policy::{
    workload::{self, Rng},
    PlaceRequest, Placer, Policy,
};

const RING: usize = 1024;

fn setup(policy: Policy, members: usize) -> (Placer, Vec<PlaceRequest>) {
    let mut rng = Rng(0x5eed ^ members as u64);
    let p = workload::loaded_placer(policy, members, &mut rng);
    let reqs = (0..RING)
        .map(|_| workload::request(policy, members, &mut rng))
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
