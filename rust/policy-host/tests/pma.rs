// SPDX-License-Identifier: GPL-2.0
//! The PMA replies of a bond port (`policy::pma`): which MADs it answers,
//! its ClassPortInfo, and the members' counters summed field by field.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use mrbond_policy::policy::mad::MAD_SIZE;
use mrbond_policy::policy::pma::*;

const CLASS_PERF: u8 = 0x04;
const METHOD_GET: u8 = 0x01;
const METHOD_GET_RESP: u8 = 0x81;
const DATA: usize = 64;
const PORT_SELECT: usize = 65;

fn get(attr: u16) -> [u8; MAD_SIZE] {
    let mut m = [0u8; MAD_SIZE];
    m[..4].copy_from_slice(&[1, CLASS_PERF, 1, METHOD_GET]);
    m[8] = 0xab; // TID
    m[16..18].copy_from_slice(&attr.to_be_bytes());
    m
}

#[test]
fn recognizes_only_pma_gets() {
    assert_eq!(pma_get(&get(0x0001)), Some(PmaGet::ClassPortInfo));
    assert_eq!(
        pma_get(&get(0x0012)),
        Some(PmaGet::Counters(CounterSet::Basic))
    );
    assert_eq!(
        pma_get(&get(0x001D)),
        Some(PmaGet::Counters(CounterSet::Extended))
    );
    assert_eq!(pma_get(&get(0x0016)), None);
    let mut set = get(0x0012);
    set[3] = 0x02;
    assert_eq!(pma_get(&set), None);
    let mut cm = get(0x0012);
    cm[1] = 0x07;
    assert_eq!(pma_get(&cm), None);
    assert_eq!(pma_get(&[1, 4]), None);
}

#[test]
fn class_port_info_has_ext_width() {
    let r = class_port_info(&get(0x0001));
    assert_eq!(r[3], METHOD_GET_RESP);
    assert_eq!(r[8], 0xab);
    assert_eq!(&r[DATA..DATA + 4], &[1, 1, 0x02, 0x00]);
}

#[test]
fn sums_saturate_per_field() {
    let mut a = [0u8; MAD_SIZE];
    let mut b = [0u8; MAD_SIZE];
    // PortXmitData (32 bits) near its top, SymbolErrorCounter, nibbles.
    a[DATA + 24..DATA + 28].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
    b[DATA + 24..DATA + 28].copy_from_slice(&0x20u32.to_be_bytes());
    a[DATA + 4..DATA + 6].copy_from_slice(&7u16.to_be_bytes());
    b[DATA + 4..DATA + 6].copy_from_slice(&5u16.to_be_bytes());
    a[DATA + 19] = 0xe3;
    b[DATA + 19] = 0x34;
    add_counters(CounterSet::Basic, &mut a, &b);
    assert_eq!(&a[DATA + 24..DATA + 28], &0xffff_ffffu32.to_be_bytes());
    assert_eq!(&a[DATA + 4..DATA + 6], &12u16.to_be_bytes());
    assert_eq!(a[DATA + 19], 0xf7);
    let mut x = [0u8; MAD_SIZE];
    let mut y = [0u8; MAD_SIZE];
    x[DATA + 8..DATA + 16].copy_from_slice(&(1u64 << 40).to_be_bytes());
    y[DATA + 8..DATA + 16].copy_from_slice(&3u64.to_be_bytes());
    add_counters(CounterSet::Extended, &mut x, &y);
    assert_eq!(&x[DATA + 8..DATA + 16], &((1u64 << 40) + 3).to_be_bytes());
}

#[test]
fn replies_carry_the_bond_port() {
    let req = for_member_port(&get(0x001D), 1);
    assert_eq!(req[PORT_SELECT], 1);
    let mut sum = [0u8; MAD_SIZE];
    sum[DATA + 8] = 9;
    let r = counters_reply(&get(0x001D), &sum, 2);
    assert_eq!(
        (r[3], r[PORT_SELECT], r[DATA + 8], r[8]),
        (METHOD_GET_RESP, 2, 9, 0xab)
    );
}
