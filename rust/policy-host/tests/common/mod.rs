//! Helpers shared by the host integration tests (floats allowed here, never
//! in `rust/policy`).
#![allow(dead_code)]

use mrbond_policy::{MemberIndex, MemberMask, Placer, Policy, MAX_MEMBERS};

pub fn mi(i: usize) -> MemberIndex {
    MemberIndex::new(i).unwrap()
}

/// A placer with `weights.len()` members, all usable.
pub fn placer(policy: Policy, weights: &[u16]) -> Placer {
    let mut p = Placer::new(policy);
    for (i, w) in weights.iter().enumerate() {
        p.add_member(mi(i), *w).unwrap();
    }
    p.set_usable_mask(MemberMask::first_n(weights.len()));
    p
}

/// Jain's fairness index of `xs`: (sum x)^2 / (n * sum x^2).
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

/// Counts per member as f64, normalised by `weights` when given.
pub fn normalised(
    counts: &[u64; MAX_MEMBERS],
    members: &[usize],
    weights: Option<&[u32]>,
) -> Vec<f64> {
    members
        .iter()
        .map(|&i| {
            let c = counts[i] as f64;
            match weights {
                Some(w) => c / w[i] as f64,
                None => c,
            }
        })
        .collect()
}
