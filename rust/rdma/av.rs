// SPDX-License-Identifier: GPL-2.0

//! Address vectors of the device made a member's: an RC QP's path (its
//! `modify_qp`) and the GSI proxy's sends. By GID value onto the member's
//! own GID table (a rail member has the service address on its own rail),
//! with the destination MAC resolved again on another rail than the device
//! port's.

use core::ptr::{self, NonNull};

use kernel::{
    error::{from_err_ptr, to_result},
    ffi::c_int,
    prelude::*,
};

use super::{
    bindings,
    device::{GidAttrRef, ObjectsGuard},
    ratelimit::RateLimit,
    rcu,
};

static NO_SOURCE: RateLimit = RateLimit::new();
static NO_NEIGHBOUR: RateLimit = RateLimit::new();

/// A GID as a log line shows it: eight groups of four hex digits.
pub(super) struct Gid(pub(super) [u8; 16]);

impl core::fmt::Display for Gid {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, pair) in self.0.chunks_exact(2).enumerate() {
            if let [hi, lo] = pair {
                let sep = if i == 0 { "" } else { ":" };
                write!(f, "{sep}{hi:02x}{lo:02x}")?;
            }
        }
        Ok(())
    }
}

/// A GID's bytes.
pub(super) fn gid_raw(gid: &bindings::ib_gid) -> [u8; 16] {
    // SAFETY: every bit pattern of the union is a valid byte array.
    unsafe { *gid.raw.as_ref() }
}

/// What makes two GIDs of different members the same kind of address: an
/// IPv4-mapped one, a link-local one, or another IPv6 one.
#[derive(PartialEq, Eq)]
enum GidClass {
    Ipv4Mapped,
    LinkLocal,
    Ipv6,
}

fn gid_class(gid: &[u8; 16]) -> GidClass {
    match gid {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ..] => GidClass::Ipv4Mapped,
        [0xfe, b, ..] if b & 0xc0 == 0x80 => GidClass::LinkLocal,
        _ => GidClass::Ipv6,
    }
}

impl ObjectsGuard<'_> {
    /// Member `slot`'s address of the same kind as `like` (an entry of
    /// another member's): the lowest entry of its GID table with the same
    /// GID type and [`GidClass`]. `None` without a member there or such an
    /// entry. Where a connection can go on that member's rail.
    pub(crate) fn member_gid_like(&self, slot: usize, like: &GidAttrRef) -> Option<[u8; 16]> {
        self.member(slot)?;
        let kind = |a: &bindings::ib_gid_attr| (a.gid_type, gid_class(&gid_raw(&a.gid)));
        let want = kind(like.attr());
        for index in 0..=u8::MAX {
            match self.member_gid(slot, index) {
                Ok(gid) if kind(gid.attr()) == want => return Some(gid_raw(&gid.attr().gid)),
                // Past the table's end.
                Err(e) if e == EINVAL => return None,
                // Another kind, or an empty entry.
                Ok(_) | Err(_) => {}
            }
        }
        None
    }

    /// `template`, a member address vector of a connection, made one on
    /// member `slot`'s rail in `mav`: from our GID `sgid` there to `dgid`
    /// (the peer's on that rail, from its HELLO), the destination MAC
    /// resolved on the rail. The source GID entry, held while the result
    /// lives. Unlike [`ObjectsGuard::member_av`] it keeps the lock during
    /// the resolution (up to a second): a move holds QPs it must not see
    /// destroyed meanwhile, and is rare. May sleep.
    pub(crate) fn rail_av(
        &self,
        slot: usize,
        template: &bindings::rdma_ah_attr,
        sgid: [u8; 16],
        dgid: [u8; 16],
        mav: &mut bindings::rdma_ah_attr,
    ) -> Result<GidAttrRef> {
        let (member, port) = self.member(slot).ok_or_else(super::enetdown)?;
        let mdev = member.as_raw();
        let mut gid = bindings::ib_gid::default();
        // SAFETY: every byte array is a valid GID.
        unsafe { *gid.raw.as_mut() = sgid };
        // SAFETY: the member device is registered under the lock; the GID
        // is read for the call.
        let m = from_err_ptr(unsafe {
            bindings::rdma_find_gid_by_port(
                mdev,
                &gid,
                bindings::ib_gid_type_IB_GID_TYPE_ROCE_UDP_ENCAP,
                port,
                ptr::null_mut(),
            )
            .cast_mut()
        })?;
        // SAFETY: the lookup took a reference for us.
        let m = unsafe { GidAttrRef::from_raw(NonNull::new(m).ok_or(EINVAL)?) };
        // SAFETY: plain C data, copied bit for bit; its source GID entry is
        // replaced just below by the one the result holds.
        *mav = unsafe { ptr::read(template) };
        mav.port_num = port;
        mav.grh.sgid_index = u8::try_from(m.attr().index).map_err(|_| EINVAL)?;
        mav.grh.sgid_attr = ptr::from_ref(m.attr());
        // SAFETY: every byte array is a valid GID.
        unsafe { *mav.grh.dgid.raw.as_mut() = dgid };
        // SAFETY: the RoCE member of the union: the template is a RoCE AV.
        let dmac = unsafe { mav.__bindgen_anon_1.roce.as_mut() };
        if dgid == sgid {
            // Loopback: the member knows it by its own MAC.
            let _rcu = rcu::Guard::new();
            // SAFETY: the entry is held; its netdev is read under RCU.
            let ndev = from_err_ptr(unsafe { bindings::rdma_read_gid_attr_ndev_rcu(m.attr()) })?;
            // SAFETY: the netdev stays while the RCU section lasts.
            unsafe { bindings::mrbond_rdma_netdev_mac(ndev, dmac.dmac.as_mut_ptr()) };
            return Ok(m);
        }
        // SAFETY: plain C data, copied bit for bit.
        let dest = unsafe { ptr::read(&mav.grh.dgid) };
        // SAFETY: the member device is registered under the lock, and the
        // held entry keeps its GID, for the call.
        to_result(unsafe {
            bindings::mrbond_rdma_resolve_dmac(m.attr(), &dest, dmac.dmac.as_mut_ptr())
        })?;
        Ok(m)
    }

    /// Entry `index` of member `slot`'s GID table on its port, held.
    pub(crate) fn member_gid(&self, slot: usize, index: u8) -> Result<GidAttrRef> {
        let (member, port) = self.member(slot).ok_or_else(super::enetdown)?;
        // SAFETY: the member device is registered under the lock.
        let attr = from_err_ptr(unsafe {
            bindings::rdma_get_gid_attr(member.as_raw(), port, c_int::from(index)).cast_mut()
        })?;
        // SAFETY: the lookup took a reference for us.
        Ok(unsafe { GidAttrRef::from_raw(NonNull::new(attr).ok_or(EINVAL)?) })
    }

    /// `vav`, an address vector of the device, made member `slot`'s in
    /// `mav`: the same source GID value on the member's port, and on
    /// another rail than the device port's the destination MAC resolved
    /// on the member's rail. The member's GID entry, held while the result
    /// lives. The resolution drops the lock for up to a second, hence
    /// `&mut`: the caller checks again whatever it read under the lock
    /// before. May sleep.
    pub(crate) fn member_av(
        &mut self,
        slot: usize,
        vav: &bindings::rdma_ah_attr,
        mav: &mut bindings::rdma_ah_attr,
    ) -> Result<GidAttrRef> {
        let grh = &vav.grh;
        if u32::from(vav.ah_flags) & bindings::ib_ah_flags_IB_AH_GRH == 0 {
            return Err(EINVAL);
        }
        // SAFETY: the consumer's AV holds a reference on its source GID
        // entry while it is used.
        let vgid = unsafe { grh.sgid_attr.as_ref() }.ok_or(EINVAL)?;
        let (member, port) = self.member(slot).ok_or_else(super::enetdown)?;
        let mdev = member.as_raw();
        // SAFETY: the member device is registered under the lock; the GID
        // is read for the call.
        let mgid = from_err_ptr(unsafe {
            bindings::rdma_find_gid_by_port(mdev, &vgid.gid, vgid.gid_type, port, ptr::null_mut())
                .cast_mut()
        })
        .map_err(|_| {
            if NO_SOURCE.allow() {
                pr_warn!(
                    "source {} is not an address of member {}: give every rail the service address\n",
                    Gid(gid_raw(&vgid.gid)),
                    member.name()
                );
            }
            super::enetunreach()
        })?;
        // SAFETY: the lookup took a reference for us.
        let mgid = unsafe { GidAttrRef::from_raw(NonNull::new(mgid).ok_or(EINVAL)?) };
        let m = mgid.attr();

        // SAFETY: plain C data, copied bit for bit; the copy's source GID
        // entry is replaced below by one the result holds.
        *mav = unsafe { ptr::read(vav) };
        mav.port_num = port;
        mav.grh.sgid_index = u8::try_from(m.index).map_err(|_| EINVAL)?;
        mav.grh.sgid_attr = ptr::from_ref(m);

        let dgid = gid_raw(&grh.dgid);
        // SAFETY: the RoCE member of the union: both AVs are RoCE ones.
        let dmac = unsafe { mav.__bindgen_anon_1.roce.as_mut() };
        let other_rail = {
            let _rcu = rcu::Guard::new();
            // SAFETY: both entries are held; their netdevs are read under
            // RCU, as the call requires.
            let (vndev, mndev) = unsafe {
                (
                    bindings::rdma_read_gid_attr_ndev_rcu(vgid),
                    bindings::rdma_read_gid_attr_ndev_rcu(m),
                )
            };
            let mndev = from_err_ptr(mndev).ok();
            let other = from_err_ptr(vndev).is_err() || mndev != Some(vndev);
            match mndev {
                // A QP talking to its own address: the core would answer
                // with the MAC of the first netdev holding it, but the
                // member (rxe) knows loopback by its own rail's MAC.
                Some(mndev) if other && dgid == gid_raw(&m.gid) => {
                    // SAFETY: the netdev stays while the RCU section lasts.
                    unsafe { bindings::mrbond_rdma_netdev_mac(mndev, dmac.dmac.as_mut_ptr()) };
                    false
                }
                _ => other,
            }
        };
        if other_rail {
            // SAFETY: the member device is registered under the lock.
            if !unsafe { bindings::mrbond_rdma_device_try_get(mdev) } {
                return Err(super::enetdown());
            }
            // SAFETY: our registration reference keeps the device, and the
            // held entry its GID, for the call.
            let ret = self.unlocked(|| unsafe {
                bindings::mrbond_rdma_resolve_dmac(m, &grh.dgid, dmac.dmac.as_mut_ptr())
            });
            // SAFETY: the reference taken above.
            unsafe { bindings::ib_device_put(mdev) };
            if ret != 0 {
                if NO_NEIGHBOUR.allow() {
                    pr_warn!(
                        "no neighbour for {} on the rail of member {}: {}\n",
                        Gid(dgid),
                        slot,
                        ret
                    );
                }
                return Err(Error::from_errno(ret));
            }
            // Detached meanwhile?
            if self
                .member(slot)
                .map_or(true, |(now, _)| now.as_raw() != mdev)
            {
                return Err(super::enetdown());
            }
        }
        Ok(mgid)
    }
}
