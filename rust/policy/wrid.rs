// SPDX-License-Identifier: GPL-2.0

//! The ids of the work requests a bond posts to its members.
//!
//! A member WR id names the bond QP and the WR's place in that QP's shadow
//! ring: bit 63 set for receives, the QP's id in the 23 bits below it, then
//! the ring's generation bit, then the low 39 bits of the ring sequence. A
//! completion is traced back by id, never through its QP pointer: members
//! may return completions of a QP already destroyed (rxe does not purge
//! them).
//!
//! The generation changes each time the QP moves to a new member QP
//! (transparent failover): a completion the old member QP returns late
//! names the old generation and is told from the new QP's, whose sequences
//! continue the same ring.

/// Bit 63: a receive.
const RECV: u64 = 1 << 63;
/// The ring sequence's bits.
const SEQ_BITS: u32 = 39;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
/// The generation bit, just above the sequence.
const GENERATION: u64 = 1 << SEQ_BITS;
/// Where the QP id starts.
const QP_SHIFT: u32 = SEQ_BITS + 1;

/// The largest QP id.
pub const QP_ID_MAX: u32 = (1 << 23) - 1;

/// The member WR id of the WR at ring sequence `seq` of QP `qp_id` (at
/// most [`QP_ID_MAX`]), posted to the member QP of generation `generation`.
pub const fn encode(qp_id: u32, generation: bool, seq: u64, recv: bool) -> u64 {
    let recv = if recv { RECV } else { 0 };
    let generation = if generation { GENERATION } else { 0 };
    recv | (((qp_id & QP_ID_MAX) as u64) << QP_SHIFT) | generation | (seq & SEQ_MASK)
}

/// The QP id and queue (receive: true) a member WR id names.
pub const fn qp_of(wr_id: u64) -> (u32, bool) {
    (((wr_id & !RECV) >> QP_SHIFT) as u32, wr_id & RECV != 0)
}

/// The generation of the member QP a member WR id was posted to.
pub const fn generation_of(wr_id: u64) -> bool {
    wr_id & GENERATION != 0
}

/// The ring sequence a member WR id stands for, in a ring whose oldest WR
/// is `tail`: the first sequence at or past `tail` with the id's low bits.
/// Right while fewer than 2^39 WRs are outstanding.
pub const fn seq_of(wr_id: u64, tail: u64) -> u64 {
    tail.wrapping_add(wr_id.wrapping_sub(tail) & SEQ_MASK)
}
