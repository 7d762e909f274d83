// SPDX-License-Identifier: GPL-2.0
//! The vdev's device attributes: the intersection of its members', and the
//! check a joining member must pass.

use mrbond_policy::policy::caps::{intersect, weaker, DeviceCaps, Limit, LIMIT_COUNT};
use proptest::prelude::*;

const INHERITED: u64 = 0b1011;

fn caps(limit: u64, pages: u64, flags: u64, delay: u8) -> DeviceCaps {
    DeviceCaps {
        limits: [limit; LIMIT_COUNT],
        page_size_cap: pages,
        cap_flags: flags,
        local_ca_ack_delay: delay,
    }
}

fn arb_caps() -> impl Strategy<Value = DeviceCaps> {
    (
        prop::array::uniform17(any::<u64>()),
        any::<u64>(),
        any::<u64>(),
        any::<u8>(),
    )
        .prop_map(
            |(limits, page_size_cap, cap_flags, local_ca_ack_delay)| DeviceCaps {
                limits,
                page_size_cap,
                cap_flags,
                local_ca_ack_delay,
            },
        )
}

#[test]
fn no_member_promises_nothing() {
    assert_eq!(intersect(&[], INHERITED), DeviceCaps::NONE);
}

#[test]
fn one_member_keeps_its_limits_and_only_inherited_flags() {
    let m = caps(100, 0x3000, 0b1111_0110, 8);
    let v = intersect(&[m], INHERITED);
    assert_eq!(v.limits, m.limits);
    assert_eq!(v.page_size_cap, 0x3000);
    assert_eq!(v.cap_flags, 0b0010);
    assert_eq!(v.local_ca_ack_delay, 8);
}

#[test]
fn limits_are_minima_pages_and_flags_intersect_delay_is_slowest() {
    let mut a = caps(100, 0x7000, 0b1011, 4);
    let b = caps(50, 0x3000, 0b0011, 15);
    a.limits[3] = 2; // max_send_sge
    let v = intersect(&[a, b], INHERITED);
    assert_eq!(v.get(Limit::MaxMrSize), 50);
    assert_eq!(v.get(Limit::MaxSendSge), 2);
    assert_eq!(v.page_size_cap, 0x3000);
    assert_eq!(v.cap_flags, 0b0011);
    assert_eq!(v.local_ca_ack_delay, 15);
}

#[test]
fn weaker_names_the_first_attribute_short_of_the_vdev() {
    let v = intersect(&[caps(100, 0x3000, 0b0011, 8)], INHERITED);
    assert_eq!(weaker(&caps(100, 0x3000, 0b0011, 8), &v), None);
    let mut m = caps(100, 0x3000, 0b0011, 8);
    m.limits[1] = 99; // max_qp
    m.limits[4] = 1; // max_recv_sge
    assert_eq!(weaker(&m, &v), Some("max_qp"));
    assert_eq!(
        weaker(&caps(100, 0x1000, 0b0011, 8), &v),
        Some("page_size_cap")
    );
    assert_eq!(
        weaker(&caps(100, 0x3000, 0b0001, 8), &v),
        Some("device_cap_flags")
    );
    assert_eq!(
        weaker(&caps(100, 0x3000, 0b0011, 9), &v),
        Some("local_ca_ack_delay")
    );
    // Flags the vdev does not inherit are not asked of a member.
    assert_eq!(
        weaker(
            &caps(100, 0x3000, 0b0011, 8),
            &intersect(&[caps(100, 0x3000, 0b0111, 8)], INHERITED)
        ),
        None
    );
}

#[test]
fn clamp_lowers_one_limit_only() {
    let mut v = caps(100, 0, 0, 0);
    v.clamp(Limit::MaxSgeRd, 16);
    v.clamp(Limit::MaxQp, 1000);
    assert_eq!(v.get(Limit::MaxSgeRd), 16);
    assert_eq!(v.get(Limit::MaxQp), 100);
    assert_eq!(v.get(Limit::MaxSendSge), 100);
}

#[test]
fn names_are_the_ib_device_attr_fields_in_order() {
    let names: Vec<_> = Limit::ALL.iter().map(|l| l.name()).collect();
    assert_eq!(names.first(), Some(&"max_mr_size"));
    assert_eq!(names.last(), Some(&"max_fast_reg_page_list_len"));
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), LIMIT_COUNT);
}

proptest! {
    /// Every member covers the vdev built over them, in any order: a bond
    /// never refuses a member it was created with.
    #[test]
    fn every_member_covers_the_intersection(members in prop::collection::vec(arb_caps(), 1..6)) {
        let v = intersect(&members, INHERITED);
        for m in &members {
            prop_assert_eq!(weaker(m, &v), None);
        }
        let mut rev = members.clone();
        rev.reverse();
        prop_assert_eq!(intersect(&rev, INHERITED), v);
    }

    /// A member covers the vdev exactly when adding it changes nothing.
    #[test]
    fn covering_means_adding_changes_nothing(members in prop::collection::vec(arb_caps(), 1..5), new in arb_caps()) {
        let v = intersect(&members, INHERITED);
        let mut with = members.clone();
        with.push(new);
        prop_assert_eq!(weaker(&new, &v).is_none(), intersect(&with, INHERITED) == v);
    }
}
