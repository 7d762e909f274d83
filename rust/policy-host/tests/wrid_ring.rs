// SPDX-License-Identifier: GPL-2.0
//! Member WR ids: the QP and the ring sequence come back from a completion,
//! across the 40-bit wrap of the sequence and for every QP id.

use mrbond_policy::policy::wrid::{encode, qp_of, seq_of, QP_ID_MAX};

#[test]
fn the_qp_and_queue_come_back() {
    for id in [1, 2, 0x1234, QP_ID_MAX] {
        for recv in [false, true] {
            for seq in [0, 1, (1 << 40) - 1, 1 << 40, u64::MAX] {
                assert_eq!(qp_of(encode(id, seq, recv)), (id, recv));
            }
        }
    }
}

#[test]
fn the_sequence_comes_back_at_or_past_the_tail() {
    let tails = [0, 5, (1 << 40) - 3, 1 << 40, 3 << 40, u64::MAX - 100];
    for tail in tails {
        for ahead in [0u64, 1, 63, 1 << 20, (1 << 40) - 1] {
            let seq = tail.wrapping_add(ahead);
            for recv in [false, true] {
                assert_eq!(seq_of(encode(QP_ID_MAX, seq, recv), tail), seq);
            }
        }
    }
}

#[test]
fn a_completion_of_a_wr_already_retired_maps_far_ahead() {
    // A WR behind the tail (flushed by the bond) comes back as a sequence
    // about 2^40 ahead, which no ring of fewer WRs holds: it is dropped.
    let tail = 1000;
    let seq = seq_of(encode(7, tail - 1, false), tail);
    assert_eq!(seq - tail, (1 << 40) - 1);
}
