// SPDX-License-Identifier: GPL-2.0

//! Bond rkeys (issue 17): remote keys that outlive a rail.
//!
//! An rkey is valid only on the HCA that issued it, so a connection that
//! moves to another rail would leave its peer holding keys of the old one.
//! With failover, the ULP hands its peer *bond* rkeys instead, built as the
//! bond's lkeys are: the bond MR's index above the ULP's key byte. The
//! posting side, the peer's bond, translates each bond rkey of an RDMA
//! READ, WRITE or invalidation through [`RemoteKeys`]: per bond MR index,
//! the member rkey's base on the rail the connection uses now, with the
//! ULP's key byte put back. FRWR changes only the key byte
//! (`ib_update_fast_reg_key`), so the table changes when an MR is made and
//! when the connection changes rails (RESUME's key updates), never on a
//! registration.

/// The key byte's bits.
pub const KEY_BITS: u32 = 8;
const KEY_MASK: u32 = (1 << KEY_BITS) - 1;
/// The largest bond MR index an rkey can carry.
pub const INDEX_MAX: u32 = u32::MAX >> KEY_BITS;

/// The bond rkey of MR `index` (at most [`INDEX_MAX`]) with key byte `key`.
pub const fn bond_rkey(index: u32, key: u8) -> Option<u32> {
    if index > INDEX_MAX {
        return None;
    }
    Some(index << KEY_BITS | key as u32)
}

/// The bond MR index and the key byte of a bond rkey.
pub const fn split(rkey: u32) -> (u32, u8) {
    (rkey >> KEY_BITS, (rkey & KEY_MASK) as u8)
}

/// Why a remote key cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyError {
    /// No member rkey is known for that bond MR on the current rail.
    Unknown,
    /// The index is beyond the table the connection was given.
    OutOfRange,
}

/// A connection's table of its peer's MRs on the current rail: for each
/// bond MR index, the member rkey's base (key byte clear). The storage is
/// the caller's, sized when the connection is made (never on the data
/// path).
pub struct RemoteKeys<'a> {
    bases: &'a mut [Option<u32>],
}

impl<'a> RemoteKeys<'a> {
    /// A table over `bases`, which it empties.
    pub fn new(bases: &'a mut [Option<u32>]) -> Self {
        bases.fill(None);
        Self { bases }
    }

    /// The member rkey the peer's `bond_rkey` stands for now.
    pub fn translate(&self, bond_rkey: u32) -> Result<u32, KeyError> {
        let (index, key) = split(bond_rkey);
        let slot = usize::try_from(index).map_err(|_| KeyError::OutOfRange)?;
        match self.bases.get(slot) {
            None => Err(KeyError::OutOfRange),
            Some(None) => Err(KeyError::Unknown),
            Some(Some(base)) => Ok(base | u32::from(key)),
        }
    }

    /// (bond rkey, member rkey) pairs from the peer: new MRs, or their
    /// keys on a new rail. All or nothing: a pair out of range refuses the
    /// batch and changes no entry.
    pub fn update(&mut self, pairs: &[(u32, u32)]) -> Result<(), KeyError> {
        let len = self.bases.len();
        if pairs
            .iter()
            .any(|(bond, _)| usize::try_from(split(*bond).0).map_or(true, |slot| slot >= len))
        {
            return Err(KeyError::OutOfRange);
        }
        for (bond, member) in pairs {
            if let Some(entry) = usize::try_from(split(*bond).0)
                .ok()
                .and_then(|slot| self.bases.get_mut(slot))
            {
                *entry = Some(member & !KEY_MASK);
            }
        }
        Ok(())
    }

    /// The peer's MR `index` is gone (deregistered).
    pub fn forget(&mut self, index: u32) {
        if let Some(entry) = usize::try_from(index)
            .ok()
            .and_then(|slot| self.bases.get_mut(slot))
        {
            *entry = None;
        }
    }

    /// The connection changed rails: every key is the old rail's until
    /// RESUME's updates.
    pub fn clear(&mut self) {
        self.bases.fill(None);
    }
}
