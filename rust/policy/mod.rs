// SPDX-License-Identifier: GPL-2.0

//! Policy core of rdma_mrbond: every bonding decision that needs no kernel object.
//!
//! This directory is compiled twice from the same files: into the kernel module
//! (`#[path = "policy/mod.rs"] pub mod policy;` in `rust/rdma_mrbond_main.rs`, and
//! into the KUnit module) and into the host crate `rust/policy-host` for
//! `cargo test`, property tests, benchmarks and the simulator. So it uses `core`
//! only: no `alloc`, no floats, no clock reads (the caller passes monotonic
//! nanoseconds), no panicking operations, and all storage is fixed-capacity
//! arrays of [`MAX_MEMBERS`] entries owned by the caller.
//!
//! Parts, one job each:
//! - [`placement`]: which member hosts a new QP ([`placement::Policy`]: wrr, lqf,
//!   hash, rr, pinned), switchable at run time.
//! - [`wrr`]: smooth weighted round robin and the headroom formula that turns
//!   admin weight and live utilisation into an effective weight.
//! - [`hash`]: the static layer3+4 flow hash (bonding's fold).
//! - [`eligibility`]: whether a member may take QPs (usable / draining /
//!   unusable, with a reason) including updelay/downdelay debounce.
//! - [`failover`]: which QPs to error when members fail, where their
//!   replacements go, and the optional hysteretic rebalance.
//! - [`knobs`]: validation of user-supplied values (ECN/DCQCN, PFC, bond knobs)
//!   into typed errors with static extack text.
//! - [`congestion`]: the traffic class of bond QPs, the per-member status of
//!   the ECN/DCQCN/PFC knobs, and the PFC fan-out's per-member decisions.
//! - [`caps`]: the vdev's device attributes, the intersection of its
//!   members', and whether a joining member covers them.
//! - [`qpn`]: when a destroyed QP's number may be taken again.
//! - [`resume`]: on a transparent failover, which unresolved send WRs the
//!   peer executed and which are posted again.
//! - [`mad`]: the network header the GSI proxy writes in front of a MAD it
//!   hands to the device's QP1.
//! - [`probe`]: gray failures: a rail's heartbeats tell which direction
//!   drops packets.
//! - [`rkey`]: bond rkeys, and a connection's table that turns the peer's
//!   into member rkeys on the current rail.
//! - [`tfo_wire`]: the vendor MADs of transparent failover's control
//!   channel (HELLO, HEARTBEAT, RESUME).
//! - [`tfo_session`]: one end's state of a connection's move to another
//!   rail: which end decides, what is sent when, when to give up.
//! - [`selfcheck`]: deterministic scenarios run by both `cargo test` and KUnit.
//!
//! The kernel target is x86_64 (and arm64): `u64` division is used outside the
//! per-decision paths; `u128` is never used because the kernel's
//! `compiler_builtins` has no `u128` multiply/divide helpers.

#![deny(unsafe_code)]

pub mod caps;
pub mod congestion;
pub mod eligibility;
pub mod failover;
pub mod hash;
pub mod knobs;
pub mod mad;
pub mod options;
pub mod placement;
pub mod pma;
pub mod port;
pub mod probe;
pub mod qpn;
pub mod resume;
pub mod rkey;
pub mod selfcheck;
pub mod tfo_session;
pub mod tfo_wire;
pub mod ulp;
pub mod wrid;
pub mod wrr;

/// Minimum of 8 keys as a balanced tree: straight-line code with no
/// data-dependent branch (the placement scans rely on it for speed).
#[inline]
pub(crate) fn min_of_8<T: Ord + Copy>(k: [T; 8]) -> T {
    let [a0, a1, a2, a3, a4, a5, a6, a7] = k;
    a0.min(a1).min(a2.min(a3)).min(a4.min(a5).min(a6.min(a7)))
}

/// Minimum of [`MAX_MEMBERS`] keys, as [`min_of_8`].
#[inline]
pub(crate) fn min_of_all<T: Ord + Copy>(k: [T; MAX_MEMBERS]) -> T {
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = k;
    min_of_8([a0, a1, a2, a3, a4, a5, a6, a7]).min(min_of_8([a8, a9, a10, a11, a12, a13, a14, a15]))
}

/// Most members one bond can have: every per-member table is this long and a
/// [`MemberMask`] has one bit per member.
pub const MAX_MEMBERS: usize = 16;

/// Index of a member slot, always `< MAX_MEMBERS` (checked at construction, so
/// holders never need to re-check it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct MemberIndex(u8);

impl MemberIndex {
    /// Member 0, for constant initialisers.
    pub const FIRST: MemberIndex = MemberIndex(0);

    /// Returns the index, or `None` when `index >= MAX_MEMBERS`.
    pub const fn new(index: usize) -> Option<Self> {
        if index < MAX_MEMBERS {
            Some(MemberIndex(index as u8))
        } else {
            None
        }
    }

    /// The index as a `usize`, for table look-ups.
    pub const fn get(self) -> usize {
        self.0 as usize
    }

    /// The index as a `u8`, for compact storage and C interfaces.
    pub const fn as_u8(self) -> u8 {
        self.0
    }

    /// This member's bit in a [`MemberMask`].
    pub const fn bit(self) -> u16 {
        match 1u16.checked_shl(self.0 as u32) {
            Some(b) => b,
            None => 0,
        }
    }
}

/// A set of members as a 16-bit mask (bit i = member i). `Copy` and branch-free
/// to test, which is why the hot paths use it instead of lists.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Debug)]
pub struct MemberMask(u16);

impl MemberMask {
    /// The empty set.
    pub const EMPTY: MemberMask = MemberMask(0);

    /// A set from raw bits (bit i = member i).
    pub const fn from_bits(bits: u16) -> Self {
        MemberMask(bits)
    }

    /// The set of members `0..count` (all of them when `count >= MAX_MEMBERS`).
    pub const fn first_n(count: usize) -> Self {
        if count >= MAX_MEMBERS {
            MemberMask(u16::MAX)
        } else {
            match 1u16.checked_shl(count as u32) {
                Some(b) => MemberMask(b.wrapping_sub(1)),
                None => MemberMask(u16::MAX),
            }
        }
    }

    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Whether `m` is in the set.
    pub const fn contains(self, m: MemberIndex) -> bool {
        self.0 & m.bit() != 0
    }

    /// The set with `m` added.
    pub const fn with(self, m: MemberIndex) -> Self {
        MemberMask(self.0 | m.bit())
    }

    /// The set with `m` removed.
    pub const fn without(self, m: MemberIndex) -> Self {
        MemberMask(self.0 & !m.bit())
    }

    /// Members in both sets.
    pub const fn and(self, other: MemberMask) -> Self {
        MemberMask(self.0 & other.0)
    }

    /// Members in either set.
    pub const fn or(self, other: MemberMask) -> Self {
        MemberMask(self.0 | other.0)
    }

    /// Members in `self` but not in `other`.
    pub const fn minus(self, other: MemberMask) -> Self {
        MemberMask(self.0 & !other.0)
    }

    /// Number of members in the set.
    pub const fn count(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Lowest-indexed member, if any.
    pub const fn first(self) -> Option<MemberIndex> {
        if self.0 == 0 {
            None
        } else {
            MemberIndex::new(self.0.trailing_zeros() as usize)
        }
    }

    /// Members in ascending index order.
    pub const fn iter(self) -> MaskIter {
        MaskIter(self.0)
    }
}

impl IntoIterator for MemberMask {
    type Item = MemberIndex;
    type IntoIter = MaskIter;

    fn into_iter(self) -> MaskIter {
        self.iter()
    }
}

/// Iterator over the members of a [`MemberMask`], lowest index first.
#[derive(Clone, Copy, Debug)]
pub struct MaskIter(u16);

impl Iterator for MaskIter {
    type Item = MemberIndex;

    fn next(&mut self) -> Option<MemberIndex> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        // Clears the lowest set bit (blsr), so each bit is yielded once.
        self.0 &= self.0.wrapping_sub(1);
        MemberIndex::new(i)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}
