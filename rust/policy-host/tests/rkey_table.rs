// SPDX-License-Identifier: GPL-2.0
//! Bond rkeys: the peer's key byte survives re-registration (FRWR) without
//! a table update, a rail change invalidates every key until the peer's
//! updates, and a batch with a key out of range changes nothing.

use mrbond_policy::policy::rkey::{bond_rkey, split, KeyError, RemoteKeys, INDEX_MAX};
use proptest::prelude::*;

#[test]
fn a_bond_rkey_carries_its_index_and_key_byte() {
    assert_eq!(bond_rkey(5, 0x7f), Some(0x57f));
    assert_eq!(split(0x57f), (5, 0x7f));
    assert_eq!(bond_rkey(INDEX_MAX, 0xff), Some(u32::MAX));
    assert_eq!(bond_rkey(INDEX_MAX + 1, 0), None);
}

#[test]
fn the_key_byte_of_a_new_registration_needs_no_update() {
    let mut store = [Some(0xdead); 8];
    let mut keys = RemoteKeys::new(&mut store);
    assert_eq!(
        keys.translate(0x301),
        Err(KeyError::Unknown),
        "a new table is empty"
    );
    keys.update(&[(0x301, 0x0012_3401)]).expect("in range");
    assert_eq!(keys.translate(0x301), Ok(0x0012_3401));
    // The ULP registers the MR again with the next key byte.
    assert_eq!(keys.translate(0x302), Ok(0x0012_3402));
    assert_eq!(keys.translate(0x901), Err(KeyError::OutOfRange));
}

#[test]
fn a_rail_change_invalidates_every_key_until_the_peers_updates() {
    let mut store = [None; 4];
    let mut keys = RemoteKeys::new(&mut store);
    keys.update(&[(0x001, 0xaa00), (0x101, 0xbb00)])
        .expect("in range");
    keys.clear();
    assert_eq!(keys.translate(0x001), Err(KeyError::Unknown));
    keys.update(&[(0x001, 0xcc05)]).expect("in range");
    assert_eq!(
        keys.translate(0x007),
        Ok(0xcc07),
        "the new rail's base, the ULP's byte"
    );
    assert_eq!(keys.translate(0x101), Err(KeyError::Unknown));
    keys.forget(0);
    assert_eq!(keys.translate(0x007), Err(KeyError::Unknown));
}

proptest! {
    #[test]
    fn a_batch_with_a_key_out_of_range_changes_nothing(
        pairs in prop::collection::vec((0u32..0x1000, any::<u32>()), 1..8),
        known in prop::collection::vec((0u32..0x800, any::<u32>()), 0..8),
    ) {
        let mut store = [None; 8];
        let mut keys = RemoteKeys::new(&mut store);
        keys.update(&known).expect("indexes 0..8");
        let before: Vec<_> = (0..8u32).map(|i| keys.translate(i << 8)).collect();
        let in_range = pairs.iter().all(|(bond, _)| split(*bond).0 < 8);
        prop_assert_eq!(keys.update(&pairs).is_ok(), in_range);
        if !in_range {
            let after: Vec<_> = (0..8u32).map(|i| keys.translate(i << 8)).collect();
            prop_assert_eq!(before, after);
        } else {
            for (bond, _) in &pairs {
                // The last pair for an index wins.
                let last = pairs.iter().rev().find(|(b, _)| split(*b).0 == split(*bond).0);
                let (_, member) = last.expect("the pair itself");
                prop_assert_eq!(keys.translate(*bond), Ok(member & !0xff | (bond & 0xff)));
            }
        }
    }
}
