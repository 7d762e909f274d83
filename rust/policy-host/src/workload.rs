// SPDX-License-Identifier: GPL-2.0

//! Deterministic workloads shared by the benchmarks, the simulator and the
//! tests: a seeded xorshift64* generator and placers in a realistic state.

use crate::{FlowKey, MemberIndex, MemberMask, Pin, PinScope, PlaceRequest, Placer, Policy};

/// xorshift64*: reproducible flows without a dependency.
pub struct Rng(pub u64);

impl Rng {
    /// The next pseudo-random value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }
}

/// A placer with `members` usable members of varied weight (50..250),
/// utilisation (0..90 %) and outstanding work (0..64 WQEs).
pub fn loaded_placer(policy: Policy, members: usize, rng: &mut Rng) -> Placer {
    let mut p = Placer::new(policy);
    for m in (0..members).filter_map(MemberIndex::new) {
        let weight = u16::try_from(rng.below(200).saturating_add(50)).unwrap_or(100);
        let _ = p.add_member(m, weight);
        p.set_utilisation(m, u16::try_from(rng.below(900)).unwrap_or(0));
        p.set_outstanding_wqes(m, u32::try_from(rng.below(64)).unwrap_or(0));
    }
    p.set_usable_mask(MemberMask::first_n(members));
    p
}

/// A new-QP request with a random flow; under `pinned`, pinned by PD to a
/// random one of `members`.
pub fn request(policy: Policy, members: usize, rng: &mut Rng) -> PlaceRequest {
    let r = rng.next_u64();
    let byte = |shift: u32| (r >> shift) as u8;
    let flow = FlowKey::ipv4(
        [10, 0, byte(8), byte(0)],
        [10, 1, byte(24), byte(16)],
        ((r >> 32) as u16) | 0xc000,
    );
    let pin = if policy == Policy::Pinned {
        let slot = usize::try_from(r >> 48)
            .ok()
            .and_then(|v| v.checked_rem(members));
        slot.and_then(MemberIndex::new).map(|member| Pin {
            member,
            scope: PinScope::Pd,
        })
    } else {
        None
    };
    PlaceRequest { flow, pin }
}
