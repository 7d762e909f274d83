// SPDX-License-Identifier: GPL-2.0
//! The failover control channel's MADs: what is encoded decodes to the same
//! message, a MAD of another class, OUI, version or attribute is not ours,
//! and no input makes decoding fail other than with `None`.

use mrbond_policy::policy::tfo_session::{Endpoint, Half, Msg};
use mrbond_policy::policy::tfo_wire::{
    decode, encode, from_move, to_move, Connection, Control, Heartbeat, Hello, Message,
    MoveControl, RailAddrs, Resume, Stage, CLASS_TFO, HELLO_RAILS, KEYS_PER_MAD, MAD_SIZE,
};
use proptest::prelude::*;

fn conn() -> impl Strategy<Value = Connection> {
    (0u32..1 << 24, 0u32..1 << 24).prop_map(|(local_qpn, remote_qpn)| Connection {
        local_qpn,
        remote_qpn,
    })
}

/// Up to [`HELLO_RAILS`] of the 16 rails, each with a GID.
fn rail_addrs() -> impl Strategy<Value = RailAddrs> {
    prop::collection::btree_map(0u8..16, any::<[u8; 16]>(), 0..=HELLO_RAILS).prop_map(|named| {
        let mut rails = RailAddrs::NONE;
        for (rail, gid) in named {
            assert!(rails.push(rail, gid));
        }
        rails
    })
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (
            conn(),
            any::<u64>(),
            any::<u16>(),
            any::<bool>(),
            rail_addrs()
        )
            .prop_map(|(conn, node_guid, heartbeat_ms, heard, rails)| {
                Message::Hello(Hello {
                    conn,
                    node_guid,
                    heartbeat_ms,
                    heard,
                    rails,
                })
            }),
        (any::<u8>(), any::<u32>(), any::<u32>())
            .prop_map(|(rail, seq, echo)| Message::Heartbeat(Heartbeat { rail, seq, echo })),
        (
            conn(),
            any::<u64>(),
            0u32..1 << 24,
            0u32..1 << 24,
            any::<u8>(),
            any::<u16>(),
            prop::collection::vec((any::<u32>(), any::<u32>()), 0..=KEYS_PER_MAD),
            (
                any::<u16>(),
                prop::sample::select(vec![Stage::Offer, Stage::Answer])
            ),
        )
            .prop_map(
                |(conn, rx_consumed, member_qpn, psn, rail, keys_left, pairs, (epoch, stage))| {
                    let mut keys = [(0, 0); KEYS_PER_MAD];
                    keys[..pairs.len()].copy_from_slice(&pairs);
                    Message::Resume(Resume {
                        conn,
                        epoch,
                        stage,
                        rx_consumed,
                        member_qpn,
                        psn,
                        rail,
                        keys_left,
                        nkeys: pairs.len() as u8,
                        keys,
                    })
                }
            ),
        (
            conn(),
            any::<u16>(),
            prop::sample::select(vec![Control::Request, Control::Go, Control::Abort]),
        )
            .prop_map(|(conn, epoch, control)| Message::Move(MoveControl {
                conn,
                epoch,
                control,
            })),
    ]
}

proptest! {
    #[test]
    fn what_is_encoded_decodes_the_same(msg in message(), tid in any::<u64>()) {
        let mut mad = [0xa5; MAD_SIZE];
        encode(&msg, tid, &mut mad);
        prop_assert_eq!(decode(&mad), Some((msg, tid)));
    }

    #[test]
    fn a_changed_class_oui_version_or_attribute_is_not_ours(
        msg in message(),
        at in prop::sample::select(vec![0usize, 1, 2, 3, 16, 17, 37, 38, 39]),
        flip in 1u8..=255,
    ) {
        let mut mad = [0; MAD_SIZE];
        encode(&msg, 7, &mut mad);
        mad[at] ^= flip;
        // An attribute changed into another known one may still decode, as
        // that message: never as the original.
        prop_assert_ne!(decode(&mad).map(|(m, _)| m), Some(msg));
    }

    #[test]
    fn any_bytes_decode_or_not_without_failing(bytes in prop::collection::vec(any::<u8>(), MAD_SIZE)) {
        let mut mad = [0; MAD_SIZE];
        mad.copy_from_slice(&bytes);
        mad[1] = CLASS_TFO;
        let _ = decode(&mad);
    }
}

#[test]
fn a_resume_with_more_keys_than_fit_or_a_wide_psn_is_refused() {
    let mut keys = [(0, 0); KEYS_PER_MAD];
    keys[0] = (0x1234, 0x5678);
    let resume = Resume {
        conn: Connection {
            local_qpn: 0x11,
            remote_qpn: 0x12,
        },
        epoch: 1,
        stage: Stage::Offer,
        rx_consumed: 9,
        member_qpn: 0x20,
        psn: 0x123,
        rail: 1,
        keys_left: 0,
        nkeys: 1,
        keys,
    };
    let mut mad = [0; MAD_SIZE];
    encode(&Message::Resume(resume), 1, &mut mad);
    assert!(decode(&mad).is_some());
    let mut wide = mad;
    wide[40 + 25] = KEYS_PER_MAD as u8 + 1; // nkeys
    assert_eq!(decode(&wide), None);
    let mut wide = mad;
    wide[40 + 20] = 1; // the PSN's top byte
    assert_eq!(decode(&wide), None);
    let mut unknown = mad;
    unknown[40 + 30] = 3; // neither offer nor answer
    assert_eq!(decode(&unknown), None);
}

#[test]
fn rails_are_named_in_order_up_to_the_room_and_found_again() {
    let mut rails = RailAddrs::NONE;
    assert!(rails.push(1, [1; 16]));
    assert!(!rails.push(1, [9; 16]), "a rail twice");
    assert!(!rails.push(0, [9; 16]), "a rail below the last");
    assert!(!rails.push(16, [9; 16]), "past the 16th");
    assert!(rails.push(3, [3; 16]));
    assert_eq!(rails.get(1), Some([1; 16]));
    assert_eq!(rails.get(3), Some([3; 16]));
    assert_eq!(rails.get(2), None);
    assert_eq!(rails.get(200), None);
    assert_eq!(rails.mask(), 0b1010);
    let mut full = RailAddrs::NONE;
    for rail in 0..HELLO_RAILS as u8 {
        assert!(full.push(rail, [rail; 16]));
    }
    assert!(!full.push(15, [15; 16]), "no room past HELLO_RAILS");
    assert_eq!(full.iter().count(), HELLO_RAILS);
}

#[test]
fn a_hello_naming_more_rails_than_fit_is_refused() {
    let mut rails = RailAddrs::NONE;
    rails.push(2, [0xfe; 16]);
    let hello = Message::Hello(Hello {
        conn: Connection {
            local_qpn: 1,
            remote_qpn: 2,
        },
        node_guid: 3,
        heartbeat_ms: 0,
        heard: true,
        rails,
    });
    let mut mad = [0; MAD_SIZE];
    encode(&hello, 1, &mut mad);
    assert_eq!(decode(&mad), Some((hello, 1)));
    mad[40 + 20] = 0xff; // the rail mask: 16 rails
    mad[40 + 21] = 0xff;
    assert_eq!(decode(&mad), None);
}

#[test]
fn a_move_control_of_unknown_kind_is_refused() {
    let msg = Message::Move(MoveControl {
        conn: Connection {
            local_qpn: 1,
            remote_qpn: 2,
        },
        epoch: 3,
        control: Control::Go,
    });
    let mut mad = [0; MAD_SIZE];
    encode(&msg, 5, &mut mad);
    assert_eq!(decode(&mad), Some((msg, 5)));
    mad[40 + 10] = 0;
    assert_eq!(decode(&mad), None);
}

fn half() -> impl Strategy<Value = Half> {
    (any::<u64>(), 0u32..1 << 24, 0u32..1 << 24, any::<u8>()).prop_map(
        |(rx_consumed, qpn, psn, rail)| Half {
            rx_consumed,
            endpoint: Endpoint { qpn, psn },
            rail,
        },
    )
}

fn move_msg() -> impl Strategy<Value = Msg> {
    prop_oneof![
        any::<u16>().prop_map(|epoch| Msg::Request { epoch }),
        (any::<u16>(), half()).prop_map(|(epoch, half)| Msg::Offer { epoch, half }),
        (any::<u16>(), half()).prop_map(|(epoch, half)| Msg::Answer { epoch, half }),
        any::<u16>().prop_map(|epoch| Msg::Go { epoch }),
        any::<u16>().prop_map(|epoch| Msg::Abort { epoch }),
    ]
}

proptest! {
    #[test]
    fn a_move_message_crosses_the_wire_unchanged(c in conn(), msg in move_msg(), tid in any::<u64>()) {
        let mut mad = [0; MAD_SIZE];
        encode(&from_move(c, msg), tid, &mut mad);
        let (decoded, _) = decode(&mad).expect("ours");
        prop_assert_eq!(to_move(&decoded), Some((c, msg)));
    }

    #[test]
    fn a_resume_with_keys_to_come_completes_no_move(c in conn(), h in half(), left in 1u16..) {
        let Message::Resume(mut r) = from_move(c, Msg::Offer { epoch: 1, half: h }) else {
            unreachable!("an offer is a RESUME");
        };
        r.keys_left = left;
        prop_assert_eq!(to_move(&Message::Resume(r)), None);
    }
}
