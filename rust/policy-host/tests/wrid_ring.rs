// SPDX-License-Identifier: GPL-2.0
//! Member WR ids: the QP, the generation and the ring sequence come back
//! from a completion, across the 39-bit wrap of the sequence and for every
//! QP id.

use mrbond_policy::policy::wrid::{encode, generation_of, qp_of, seq_of, QP_ID_MAX};

#[test]
fn the_qp_and_queue_come_back() {
    for id in [1, 2, 0x1234, QP_ID_MAX] {
        for (recv, generation) in [(false, false), (true, false), (false, true), (true, true)] {
            for seq in [0, 1, (1 << 39) - 1, 1 << 39, 1 << 40, u64::MAX] {
                let wr_id = encode(id, generation, seq, recv);
                assert_eq!(qp_of(wr_id), (id, recv));
                assert_eq!(generation_of(wr_id), generation);
            }
        }
    }
}

#[test]
fn the_sequence_comes_back_at_or_past_the_tail() {
    let tails = [0, 5, (1 << 39) - 3, 1 << 39, 3 << 39, u64::MAX - 100];
    for tail in tails {
        for ahead in [0u64, 1, 63, 1 << 20, (1 << 39) - 1] {
            let seq = tail.wrapping_add(ahead);
            for (recv, generation) in [(false, false), (true, true)] {
                let wr_id = encode(QP_ID_MAX, generation, seq, recv);
                assert_eq!(seq_of(wr_id, tail), seq);
            }
        }
    }
}

#[test]
fn a_completion_of_a_wr_already_retired_maps_far_ahead() {
    // A WR behind the tail (flushed by the bond) comes back as a sequence
    // about 2^39 ahead, which no ring of fewer WRs holds: it is dropped.
    let tail = 1000;
    for generation in [false, true] {
        let seq = seq_of(encode(7, generation, tail - 1, false), tail);
        assert_eq!(seq - tail, (1 << 39) - 1);
    }
}
