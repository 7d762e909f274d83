// SPDX-License-Identifier: GPL-2.0

//! Every RDMA device the module knows and every bond: creation, deletion,
//! membership, and the evaluation pass of the ordered workqueue.

#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{
    c_str, new_mutex,
    prelude::*,
    str::CStr,
    sync::{Arc, Mutex},
};

use crate::{
    ctl::bond::{Bond, BondState, Member},
    ctl::options::{ReqError, ReqResult, Target},
    ctl::text::Name,
    ffi::{self, bond_change, BondInfo, BondSpec, MemberSpec, MAX_MEMBERS, NAME_MAX},
    inject::{inject, Inject},
    policy::{
        eligibility::AdminState,
        knobs::{self, BondMode, ConfigError},
        options::{self, BondOption, Input, MemberOption, MemberSetting},
        placement::Policy,
    },
    rdma::member_device::{IbDevice, RawIbDevice},
    vdev::attrs as vdev_attrs,
    vdev::handle::Vdev,
};

/// Most RDMA devices tracked at once (members and candidates).
const MAX_DEVICES: usize = 64;
/// Most settings one MEMBER_SET carries: weight, admin state and capacity
/// of each member.
const MEMBER_SET_MAX: usize = MAX_MEMBERS * 3;
/// Most bonds at once.
const MAX_BONDS: usize = 16;
/// `BOND_MODE_ACTIVEBACKUP` and `BOND_MODE_8023AD` (`include/uapi/linux/if_bonding.h`).
const BOND_MODE_ACTIVEBACKUP: u32 = 1;
const BOND_MODE_8023AD: u32 = 4;
/// Locally administered prefix of the node GUIDs of bonds created without
/// a member ("mrb").
const GUID_BASE: u64 = 0x026d_7262_0000_0000;
/// The universal/local bit of an EUI-64, flipped in a member's GUID to make
/// its bond's.
const GUID_LOCAL_BIT: u64 = 0x0200_0000_0000_0000;

/// The node GUID of a bond whose first member has node GUID `first`: that
/// GUID with its universal/local bit flipped, so unique across hosts as
/// the member's is, and the same for the same member after a reboot (the
/// failover channel tells its ends apart by GUID: `tfo_session::Role`).
/// Without a member, `GUID_BASE` and a count of this host's bonds.
fn bond_guid(first: Option<u64>, count: u64) -> u64 {
    first.map_or(GUID_BASE | count, |g| g ^ GUID_LOCAL_BIT)
}

/// What the registry lock protects.
struct RegistryInner {
    /// RDMA devices reported by the `ib_client` (never our vdevs).
    devices: [Option<IbDevice>; MAX_DEVICES],
    /// Live bonds.
    bonds: [Option<Arc<Bond>>; MAX_BONDS],
    /// Next node GUID suffix.
    next_guid: u64,
}

/// The module's state, reachable from every C callback.
///
/// Lock order: a bond's membership, then `inner`, then a bond's state, then
/// its vdev.
#[pin_data]
pub(crate) struct Registry {
    /// Devices and bonds; held briefly, never across RDMA registration,
    /// sysfs removal or anything that takes RTNL.
    #[pin]
    inner: Mutex<RegistryInner>,
    /// A device was renamed since the last evaluation pass, which follows
    /// it ([`Self::follow_renames`]).
    renamed: AtomicBool,
}

impl Registry {
    /// An empty registry.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            inner <- new_mutex!(
                RegistryInner {
                    devices: [const { None }; MAX_DEVICES],
                    bonds: [const { None }; MAX_BONDS],
                    next_guid: 1,
                },
                "mrbond:registry"
            ),
            renamed: AtomicBool::new(false),
        })
    }

    /// `ib_client.rename`: a device took a new name (`rdma dev set DEV name
    /// NEW`; rdma-core's stable names at boot). The core calls this with
    /// its device list locked, under which a member's sysfs directory must
    /// not be replaced: the ordered work follows it ([`Self::follow_renames`]).
    pub(crate) fn device_renamed(&self) {
        self.renamed.store(true, Ordering::Release);
        ffi::kick();
    }

    /// Members are named by their devices: a member takes its device's new
    /// name (and its sysfs directory with it), and an absent member whose
    /// name a device not in any bond now has gets that device back, as if
    /// it had just registered under it.
    fn follow_renames(&self) {
        if !self.renamed.swap(false, Ordering::AcqRel) {
            return;
        }
        let bonds = self.bonds();
        for bond in bonds.iter().flatten() {
            let _membership = bond.membership.lock();
            let mut renamed: [Option<Name>; MAX_MEMBERS] = [None; MAX_MEMBERS];
            {
                let st = &mut *bond.state.lock();
                for (member, new) in st.members.iter_mut().zip(renamed.iter_mut()) {
                    let Some(member) = member else { continue };
                    let Some(dev) = member.dev.as_ref() else {
                        continue;
                    };
                    if dev.name().as_bytes() == member.name.as_bytes() {
                        continue;
                    }
                    if let Some(name) = Name::new(dev.name().as_bytes()) {
                        pr_info!(
                            "member {} is now {}\n",
                            member.name.as_cstr(),
                            name.as_cstr()
                        );
                        member.name = name;
                        *new = Some(name);
                    }
                }
            }
            if renamed.iter().all(Option::is_none) {
                continue;
            }
            inject(Inject::RenameFollow);
            // The old directory goes with no lock held (its removal waits for
            // running stores, which may take the vdev lock); the new one
            // comes under the vdev lock, as a new member's does.
            let slots = renamed
                .iter()
                .enumerate()
                .filter_map(|(slot, name)| Some((u32::try_from(slot).ok()?, name.as_ref()?)));
            if let Some(v) = bond.vdev_ref() {
                for (slot, _) in slots.clone() {
                    v.sysfs_member_del(slot);
                }
            }
            if let Some(v) = bond.vdev.lock().as_ref() {
                for (slot, name) in slots {
                    let _ = v.sysfs_member_add(slot, name.as_cstr());
                }
            }
            bond.announce_change(bond_change::MEMBER_SET);
        }
        self.rejoin_renamed_devices();
    }

    /// The absent members a device now answers to by name, unless that
    /// device is a member already.
    fn rejoin_renamed_devices(&self) {
        let inner = &mut *self.inner.lock();
        // One bond's state at a time: which devices are members.
        let mut taken = [false; MAX_DEVICES];
        for bond in inner.bonds.iter().flatten() {
            let st = bond.state.lock();
            for m in st.members.iter().flatten() {
                let Some(md) = m.dev.as_ref() else { continue };
                for (d, t) in inner.devices.iter().zip(taken.iter_mut()) {
                    if d.as_ref().is_some_and(|d| md.same(d.as_raw())) {
                        *t = true;
                    }
                }
            }
        }
        let free = inner.devices.iter().zip(taken).filter(|(_, t)| !t);
        for dev in free.filter_map(|(d, _)| d.as_ref()) {
            for bond in inner.bonds.iter().flatten() {
                Self::rejoin(&mut bond.state.lock(), dev, c_str!(" (renamed to it)"));
            }
        }
    }

    /// Gives `dev` back to the absent members of its name (a device that
    /// registered, or was renamed, under it).
    fn rejoin(st: &mut BondState, dev: &IbDevice, how: &CStr) {
        let mut renewed = [false; MAX_MEMBERS];
        for (member, r) in st.members.iter_mut().zip(renewed.iter_mut()) {
            let Some(member) = member else { continue };
            if member.dev.is_none() && member.name.as_bytes() == dev.name().as_bytes() {
                pr_info!("member {} is back{}\n", dev.name(), how);
                member.dev = Some(dev.duplicate());
                *r = true;
            }
        }
        for (slot, _) in renewed.iter().enumerate().filter(|(_, r)| **r) {
            st.device_renewed(slot);
        }
    }

    /// `ib_client.add`: remember the device; rejoin bond slots of its name.
    pub(crate) fn device_added(&self, dev: IbDevice) -> Result {
        if !dev.is_roce() {
            // As uverbs does for devices it does not serve.
            return Err(Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32)));
        }
        pr_info!("sees RDMA device {}\n", dev.name());
        let mut inner = self.inner.lock();
        // Room first: a refused device must leave no handle in a bond, as
        // the core calls no `.remove` for it.
        if inner.devices.iter().all(Option::is_some) {
            return Err(ENOSPC);
        }
        for bond in inner.bonds.iter().flatten() {
            Self::rejoin(&mut bond.state.lock(), &dev, c_str!(""));
        }
        let slot = inner
            .devices
            .iter_mut()
            .find(|d| d.is_none())
            .ok_or(ENOSPC)?;
        *slot = Some(dev);
        drop(inner);
        ffi::kick();
        Ok(())
    }

    /// `ib_client.remove`: forget every handle of the device before
    /// returning, as [`IbDevice`]'s invariant requires.
    pub(crate) fn device_removed(&self, raw: *mut RawIbDevice) {
        let mut bonds: [Option<Arc<Bond>>; MAX_BONDS] = [const { None }; MAX_BONDS];
        {
            let mut inner = self.inner.lock();
            for d in inner.devices.iter_mut() {
                if d.as_ref().is_some_and(|d| d.same(raw)) {
                    if let Some(d) = d.as_ref() {
                        pr_info!("RDMA device {} removed\n", d.name());
                    }
                    *d = None;
                }
            }
            for (dst, src) in bonds.iter_mut().zip(inner.bonds.iter()) {
                dst.clone_from(src);
            }
        }
        // Not under the registry lock: a detach destroys objects and waits
        // for RCU, while the netdev notifier takes that lock under RTNL.
        for bond in bonds.iter().flatten() {
            let mut gone: [Option<Name>; MAX_MEMBERS] = [None; MAX_MEMBERS];
            {
                let mut st = bond.state.lock();
                for (member, g) in st.members.iter_mut().zip(gone.iter_mut()) {
                    if let Some(member) = member {
                        if member.dev.as_ref().is_some_and(|d| d.same(raw)) {
                            member.dev = None;
                            *g = Some(member.name);
                        }
                    }
                }
            }
            // Synchronously: the device's objects must be gone before its
            // unregistration goes on, and every WR on them completed.
            for (slot, name) in gone.iter().enumerate() {
                if let Some(name) = name {
                    bond.detach_member(slot, name.as_cstr());
                }
            }
        }
        ffi::kick();
    }

    /// The RDMA core unregisters one of our vdevs on its own.
    pub(crate) fn vdev_unregistering(&self, raw: *mut RawIbDevice) {
        let mut found = None;
        {
            let mut inner = self.inner.lock();
            for slot in inner.bonds.iter_mut() {
                let ours = slot
                    .as_ref()
                    .is_some_and(|b| b.vdev.lock().as_ref().is_some_and(|v| v.is(raw)));
                if ours {
                    found = slot.take();
                }
            }
        }
        if let Some(bond) = found {
            if let Some(v) = bond.vdev.lock().take() {
                pr_info!("{} unregistered by the RDMA core\n", v.name());
                v.release_unregistering();
            }
        }
    }

    /// NETDEV_UNREGISTER (RTNL held): vdev ports must let go of the netdev.
    pub(crate) fn netdev_unregister(&self, ifindex: u32) {
        let inner = self.inner.lock();
        for bond in inner.bonds.iter().flatten() {
            let mut st = bond.state.lock();
            let vdev = bond.vdev.lock();
            let Some(v) = vdev.as_ref() else { continue };
            // The evaluation binds the port again when a netdev is back.
            for (slot, bound) in st.port_netdev.iter_mut().enumerate() {
                if *bound == ifindex {
                    let port = u32::try_from(slot).unwrap_or(0).saturating_add(1);
                    let _ = v.set_port_netdev(port, 0);
                    *bound = 0;
                }
            }
        }
    }

    /// One pass of the ordered workqueue; returns the delay in ms until the
    /// next debounce deadline (0 for none).
    pub(crate) fn evaluate(&self, event_ns: u64) -> u32 {
        self.follow_renames();
        let bonds = self.bonds();
        let now = ffi::now_ns();
        let mut next: Option<u64> = None;
        for bond in bonds.iter().flatten() {
            if let Some(d) = bond.evaluate(now, event_ns) {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
            // Takes RTNL: never under a lock the notifiers need.
            crate::knobs::apply_pending_pfc(bond);
        }
        next.map_or(0, |d| {
            let ms = d.saturating_sub(now).div_ceil(1_000_000).max(1);
            u32::try_from(ms).unwrap_or(u32::MAX)
        })
    }

    /// One utilisation sample of every bond's members (the module's ordered
    /// workqueue); returns the delay in ms until the next one.
    pub(crate) fn sample_utilisation(&self) -> u32 {
        for bond in self.bonds().iter().flatten() {
            bond.sample_utilisation();
        }
        crate::ctl::bond::utilisation::SAMPLE_PERIOD_MS
    }

    /// A reference to every bond, taken under the registry lock and used
    /// without it (the work items call into C that takes RTNL).
    fn bonds(&self) -> [Option<Arc<Bond>>; MAX_BONDS] {
        let mut bonds: [Option<Arc<Bond>>; MAX_BONDS] = [const { None }; MAX_BONDS];
        let inner = self.inner.lock();
        for (dst, src) in bonds.iter_mut().zip(inner.bonds.iter()) {
            dst.clone_from(src);
        }
        bonds
    }

    fn find_bond(inner: &RegistryInner, name: &[u8]) -> Option<Arc<Bond>> {
        inner
            .bonds
            .iter()
            .flatten()
            .find(|b| b.is_named(name))
            .cloned()
    }

    fn member_of_any_bond(inner: &RegistryInner, name: &[u8]) -> bool {
        inner.bonds.iter().flatten().any(|b| {
            b.state
                .lock()
                .members
                .iter()
                .flatten()
                .any(|m| m.name.as_bytes() == name)
        })
    }

    fn find_device<'a>(inner: &'a RegistryInner, name: &[u8]) -> Option<&'a IbDevice> {
        inner
            .devices
            .iter()
            .flatten()
            .find(|d| d.name().as_bytes() == name)
    }

    /// The known RoCE device `name`, if no bond has it yet.
    fn free_device<'a>(inner: &'a RegistryInner, name: &Name) -> ReqResult<&'a IbDevice> {
        if Self::member_of_any_bond(inner, name.as_bytes()) {
            return Err(ReqError::new(
                EBUSY,
                c_str!("device is already a bond member"),
            ));
        }
        Self::find_device(inner, name.as_bytes())
            .ok_or(ReqError::new(ENODEV, c_str!("no such RoCE RDMA device")))
    }

    /// Refuses a MEMBER_ADD that names one device twice: two slots of one
    /// device would share its CM listeners and its counters (BOND_NEW
    /// checks its list as it builds it).
    fn refuse_duplicates(members: &[MemberSpec]) -> ReqResult {
        for (i, a) in members.iter().enumerate() {
            let a = Name::new(&a.ibdev)
                .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
            let twice = members
                .iter()
                .skip(i.saturating_add(1))
                .filter_map(|b| Name::new(&b.ibdev))
                .any(|b| b.as_bytes() == a.as_bytes());
            if twice {
                return Err(ReqError::new(EINVAL, c_str!("member listed twice")));
            }
        }
        Ok(())
    }

    /// BOND_NEW from netlink.
    pub(crate) fn bond_new(&self, spec: &BondSpec, reply: &mut BondInfo) -> ReqResult {
        let mode = match (spec.has_mode != 0, spec.mode) {
            (false, _) | (true, 0) => BondMode::Rail,
            (true, 1) => BondMode::ActiveBackup,
            _ => return Err(ReqError::from(ConfigError::UnknownMode)),
        };
        let policy = if spec.has_policy != 0 {
            options::policy_from_id(u64::from(spec.policy)).ok_or(ConfigError::UnknownPolicy)?
        } else {
            Policy::Wrr
        };
        let mut names: [Option<(Name, u16, AdminState)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        knobs::validate_member_count(spec.members().len())?;
        for (i, m) in spec.members().iter().enumerate() {
            let name = Name::new(&m.ibdev)
                .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
            let weight = if m.has_weight != 0 {
                knobs::validate_weight(u64::from(m.weight))?
            } else {
                100
            };
            let admin = if m.has_admin != 0 {
                options::admin_from_id(u64::from(m.admin))?
            } else {
                AdminState::Up
            };
            if names
                .iter()
                .flatten()
                .any(|(n, _, _)| n.as_bytes() == name.as_bytes())
            {
                return Err(ReqError::new(EINVAL, c_str!("member listed twice")));
            }
            if let Some(slot) = names.get_mut(i) {
                *slot = Some((name, weight, admin));
            }
        }
        self.check_lacp_source(mode, spec.lacp_source)?;
        let user_name = if spec.has_name != 0 {
            let n = Name::new(&spec.name).ok_or(ReqError::new(EINVAL, c_str!("bad bond name")))?;
            if n.as_bytes().contains(&b'%') {
                return Err(ReqError::new(EINVAL, c_str!("bond name may not contain %")));
            }
            Some(n)
        } else {
            None
        };
        let bond = self.create(mode, policy, spec.lacp_source, &names, user_name)?;
        bond.info(reply);
        Ok(())
    }

    /// Refuses an LACP source that is not a bond, and data over 802.3ad.
    fn check_lacp_source(&self, mode: BondMode, ifindex: u32) -> ReqResult {
        if ifindex == 0 {
            return Ok(());
        }
        let bond_mode = ffi::bond_mode(ifindex)
            .map_err(|_| ReqError::new(EINVAL, c_str!("lacp-source is not a bond netdev")))?;
        if mode == BondMode::ActiveBackup && bond_mode == BOND_MODE_8023AD {
            // Brief section 2: the partner's LAG hash picks the ingress HCA.
            return Err(ReqError::from(ConfigError::Mode8023adRefused));
        }
        if mode == BondMode::ActiveBackup && bond_mode != BOND_MODE_ACTIVEBACKUP {
            return Err(ReqError::new(
                EINVAL,
                c_str!("active-backup needs an active-backup bond as lacp-source"),
            ));
        }
        Ok(())
    }

    /// Creates, registers and publishes a bond over `members`.
    fn create(
        &self,
        mode: BondMode,
        policy: Policy,
        lacp_source: u32,
        members: &[Option<(Name, u16, AdminState)>; MAX_MEMBERS],
        user_name: Option<Name>,
    ) -> ReqResult<Arc<Bond>> {
        let count = members.iter().flatten().count();
        let ports = match mode {
            BondMode::Rail => u32::try_from(count).map_err(|_| ReqError::internal(EINVAL))?,
            BondMode::ActiveBackup => 1,
        };
        let bond;
        let mut vdev;
        {
            let mut inner = self.inner.lock();
            let free = inner
                .bonds
                .iter()
                .position(Option::is_none)
                .ok_or(ReqError::new(ENOSPC, c_str!("too many bonds")))?;
            let nth = inner.next_guid;
            inner.next_guid = inner.next_guid.wrapping_add(1);
            let mut devs: [Option<&IbDevice>; MAX_MEMBERS] = [None; MAX_MEMBERS];
            // Checked before the new bond's lock is taken: the check locks
            // the other bonds, and two locks of one class are never nested.
            for (slot, (name, _, _)) in members.iter().flatten().enumerate() {
                let dev = Self::free_device(&inner, name)?;
                if let Some(d) = devs.get_mut(slot) {
                    *d = Some(dev);
                }
            }
            let first = devs.iter().flatten().next().map(|d| d.node_guid());
            let guid = bond_guid(first, nth);
            bond = Bond::new(mode, policy, lacp_source, ports, vdev_attrs::freeze(&devs))
                .map_err(|e| ReqError::new(e, c_str!("cannot allocate the bond")))?;
            vdev = Vdev::alloc(bond.clone(), ports, guid)
                .map_err(|e| ReqError::new(e, c_str!("cannot allocate the RDMA device")))?;
            {
                let mut st = bond.state.lock();
                for (slot, (name, weight, admin)) in members.iter().flatten().enumerate() {
                    let dev = devs
                        .get(slot)
                        .copied()
                        .flatten()
                        .ok_or(ReqError::internal(EINVAL))?;
                    let m =
                        crate::policy::MemberIndex::new(slot).ok_or(ReqError::internal(EINVAL))?;
                    st.placer.add_member(m, *weight)?;
                    let netdev = dev.netdev_ifindex();
                    if mode == BondMode::Rail || slot == 0 {
                        let port = u32::try_from(slot).unwrap_or(0).saturating_add(1);
                        vdev.set_port_netdev(port, netdev).map_err(|e| {
                            ReqError::new(e, c_str!("cannot bind a port to the member's netdev"))
                        })?;
                        if let Some(b) = st.port_netdev.get_mut(slot) {
                            *b = netdev;
                        }
                    }
                    st.insert_member(slot, Member::new(*name, dev, *admin), ffi::now_ns())
                        .map_err(ReqError::internal)?;
                }
            }
            if let Some(slot) = inner.bonds.get_mut(free) {
                *slot = Some(bond.clone());
            }
        }
        let name = user_name
            .as_ref()
            .map_or(c_str!("mrbond%d"), |n| n.as_cstr());
        if let Err(e) = vdev.register(name, user_name.is_some()) {
            self.unpublish(&bond);
            drop(vdev);
            return Err(if e.to_errno() == ENFILE.to_errno() {
                ReqError::new(EEXIST, c_str!("an RDMA device of that name exists"))
            } else {
                ReqError::new(e, c_str!("registering the RDMA device failed"))
            });
        }
        pr_info!(
            "{}: created, {} member(s), {} port(s)\n",
            vdev.name(),
            count,
            ports
        );
        self.warn_device_order(&bond, &vdev);
        // sysfs with no lock held: its removal waits for show/store.
        let _ = vdev.sysfs_add();
        {
            let st = bond.state.lock();
            for (slot, member) in st.members.iter().enumerate() {
                if let Some(member) = member {
                    let _ = vdev
                        .sysfs_member_add(u32::try_from(slot).unwrap_or(0), member.name.as_cstr());
                }
            }
        }
        *bond.vdev.lock() = Some(vdev);
        ffi::kick();
        bond.announce_change(bond_change::CREATED);
        Ok(bond)
    }

    /// rdma_cm's active side takes the first device in its list that holds
    /// the source GID: a member registered before the bond wins it.
    fn warn_device_order(&self, bond: &Bond, vdev: &Vdev) {
        let st = bond.state.lock();
        for member in st.members.iter().flatten() {
            if let Some(dev) = member.dev.as_ref() {
                if dev.index() < vdev.index() {
                    pr_warn!(
                        "{} is behind member {} in rdma_cm's device order: connections by address may use the member directly\n",
                        vdev.name(),
                        dev.name()
                    );
                }
            }
        }
    }

    fn unpublish(&self, bond: &Arc<Bond>) {
        let mut inner = self.inner.lock();
        for slot in inner.bonds.iter_mut() {
            if slot.as_ref().is_some_and(|b| Arc::ptr_eq(b, bond)) {
                *slot = None;
            }
        }
    }

    /// Unpublishes and unregisters a bond; no lock is held while the RDMA
    /// core unregisters the device.
    fn destroy(&self, bond: Arc<Bond>) {
        self.unpublish(&bond);
        let mut name = [0u8; NAME_MAX];
        bond.name(&mut name);
        let vdev = bond.vdev.lock().take();
        if let Some(v) = vdev {
            pr_info!("{}: destroyed\n", v.name());
            let index = v.index();
            drop(v);
            ffi::notify_bond(&name, index, bond_change::DELETED);
        }
    }

    /// The bond named `name` (for the knob requests, `crate::knobs`).
    pub(crate) fn bond_named(&self, name: &[u8]) -> Option<Arc<Bond>> {
        let inner = self.inner.lock();
        Self::find_bond(&inner, name)
    }

    fn bond_by_spec(&self, spec: &BondSpec) -> ReqResult<Arc<Bond>> {
        let name = Name::new(&spec.name).ok_or(ReqError::new(EINVAL, c_str!("bad bond name")))?;
        let inner = self.inner.lock();
        Self::find_bond(&inner, name.as_bytes())
            .ok_or(ReqError::new(ENODEV, c_str!("no such bond")))
    }

    /// BOND_DEL.
    pub(crate) fn bond_del(&self, spec: &BondSpec) -> ReqResult {
        let bond = self.bond_by_spec(spec)?;
        self.destroy(bond);
        Ok(())
    }

    /// BOND_SET: the placement policy.
    pub(crate) fn bond_set(&self, spec: &BondSpec) -> ReqResult {
        let bond = self.bond_by_spec(spec)?;
        if spec.has_policy == 0 {
            return Err(ReqError::new(
                EINVAL,
                c_str!("nothing to set: give a policy"),
            ));
        }
        let policy = BondOption::Policy.parse(Input::Number(u64::from(spec.policy)))?;
        crate::ctl::options::apply(&bond, &[Some(policy)], &[])
    }

    /// MEMBER_ADD: fills free slots (rail bonds keep their port count).
    pub(crate) fn member_add(&self, spec: &BondSpec) -> ReqResult {
        let bond = self.bond_by_spec(spec)?;
        let _membership = bond.membership.lock();
        if spec.members().is_empty() {
            return Err(ReqError::from(ConfigError::NoMembers));
        }
        Self::refuse_duplicates(spec.members())?;
        let mut added: [Option<(u32, Name)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        {
            let inner = self.inner.lock();
            // Validate everything first: a refused request changes nothing.
            for m in spec.members() {
                let name = Name::new(&m.ibdev)
                    .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
                let dev = Self::free_device(&inner, &name)?;
                if m.has_weight != 0 {
                    knobs::validate_weight(u64::from(m.weight))?;
                }
                if let Some(v) = bond.vdev.lock().as_ref() {
                    if let Some(attr) = bond.weaker_attribute(dev) {
                        pr_warn!("{}: {} refused: weaker {}\n", v.name(), dev.name(), attr);
                        return Err(ReqError::new(
                            EINVAL,
                            c_str!("member is weaker than the bond's frozen attributes"),
                        ));
                    }
                }
            }
            let mut st = bond.state.lock();
            let free = st
                .members
                .iter()
                .take(usize::try_from(st.ports).unwrap_or(0))
                .filter(|m| m.is_none())
                .count();
            if bond.mode == BondMode::Rail && free < spec.members().len() {
                return Err(ReqError::new(
                    ENOSPC,
                    c_str!("no free port: a rail bond keeps the port count it was created with"),
                ));
            }
            for (i, m) in spec.members().iter().enumerate() {
                let name = Name::new(&m.ibdev)
                    .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
                let dev = Self::find_device(&inner, name.as_bytes())
                    .ok_or(ReqError::new(ENODEV, c_str!("no such RDMA device")))?;
                let limit = match bond.mode {
                    BondMode::Rail => usize::try_from(st.ports).unwrap_or(0),
                    BondMode::ActiveBackup => MAX_MEMBERS,
                };
                let slot = st
                    .members
                    .iter()
                    .take(limit)
                    .position(Option::is_none)
                    .ok_or(ReqError::new(ENOSPC, c_str!("no free member slot")))?;
                let idx =
                    crate::policy::MemberIndex::new(slot).ok_or(ReqError::internal(EINVAL))?;
                let weight = if m.has_weight != 0 {
                    u16::try_from(m.weight).unwrap_or(100)
                } else {
                    100
                };
                st.placer.add_member(idx, weight)?;
                // The evaluation kicked below binds the member's port.
                st.insert_member(slot, Member::new(name, dev, AdminState::Up), ffi::now_ns())
                    .map_err(ReqError::internal)?;
                if let Some(a) = added.get_mut(i) {
                    *a = Some((u32::try_from(slot).unwrap_or(0), name));
                }
            }
        }
        if let Some(v) = bond.vdev.lock().as_ref() {
            for (slot, name) in added.iter().flatten() {
                let _ = v.sysfs_member_add(*slot, name.as_cstr());
            }
        }
        ffi::kick();
        bond.announce_change(bond_change::MEMBER_ADDED);
        Ok(())
    }

    /// MEMBER_DEL.
    pub(crate) fn member_del(&self, spec: &BondSpec) -> ReqResult {
        let bond = self.bond_by_spec(spec)?;
        let _membership = bond.membership.lock();
        let mut removed: [Option<u32>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        let mut names: [Option<Name>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        {
            let mut st = bond.state.lock();
            for m in spec.members() {
                let name = Name::new(&m.ibdev)
                    .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
                if !st
                    .members
                    .iter()
                    .flatten()
                    .any(|x| x.name.as_bytes() == name.as_bytes())
                {
                    return Err(ReqError::new(ENOENT, c_str!("not a member of this bond")));
                }
            }
            let now = ffi::now_ns();
            for (i, m) in spec.members().iter().enumerate() {
                let name = Name::new(&m.ibdev)
                    .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
                let Some(slot) = st.members.iter().position(|x| {
                    x.as_ref()
                        .is_some_and(|x| x.name.as_bytes() == name.as_bytes())
                }) else {
                    continue;
                };
                let idx =
                    crate::policy::MemberIndex::new(slot).ok_or(ReqError::internal(EINVAL))?;
                let _ = st.elig.remove_member(idx, now);
                if bond.mode == BondMode::Rail {
                    // Unbound below; a later member of this slot binds again.
                    if let Some(b) = st.port_netdev.get_mut(slot) {
                        *b = 0;
                    }
                }
                let _ = st.placer.remove_member(idx);
                if let Some(s) = st.members.get_mut(slot) {
                    *s = None;
                }
                if let Some(r) = removed.get_mut(i) {
                    *r = Some(u32::try_from(slot).unwrap_or(0));
                }
                if let Some(n) = names.get_mut(i) {
                    *n = Some(name);
                }
            }
            st.sync_placer();
        }
        for (slot, name) in removed.iter().zip(names.iter()) {
            if let (Some(slot), Some(name)) = (slot, name) {
                bond.detach_member(usize::try_from(*slot).unwrap_or(usize::MAX), name.as_cstr());
            }
        }
        if bond.mode == BondMode::Rail {
            if let Some(v) = bond.vdev.lock().as_ref() {
                for slot in removed.iter().flatten() {
                    let _ = v.set_port_netdev(slot.saturating_add(1), 0);
                }
            }
        }
        // Not under the vdev lock: removing a member directory waits for
        // its running stores, and a PFC store takes that lock to announce
        // the member's quiescing.
        if let Some(v) = bond.vdev_ref() {
            for slot in removed.iter().flatten() {
                v.sysfs_member_del(*slot);
                if bond.mode == BondMode::Rail {
                    v.port_event(slot.saturating_add(1), false);
                }
            }
        }
        ffi::kick();
        bond.announce_change(bond_change::MEMBER_REMOVED);
        Ok(())
    }

    /// MEMBER_SET: weight, admin state, capacity; all validated before any
    /// change.
    pub(crate) fn member_set(&self, spec: &BondSpec) -> ReqResult {
        let bond = self.bond_by_spec(spec)?;
        let mut changes: [Option<(Target, MemberSetting)>; MEMBER_SET_MAX] = [None; MEMBER_SET_MAX];
        let mut free = changes.iter_mut();
        for m in spec.members() {
            let target = Target::Named(
                Name::new(&m.ibdev)
                    .ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?,
            );
            let given = [
                (m.has_weight, MemberOption::Weight, m.weight),
                (m.has_admin, MemberOption::Admin, m.admin),
                (m.has_capacity, MemberOption::CapacityMbps, m.capacity_mbps),
            ];
            if given.iter().all(|&(has, _, _)| has == 0) {
                return Err(ReqError::new(
                    EINVAL,
                    c_str!("nothing to set: give weight, admin or capacity-mbps"),
                ));
            }
            for (_, opt, value) in given.into_iter().filter(|&(has, _, _)| has != 0) {
                let setting = opt.parse(Input::Number(u64::from(value)))?;
                let slot = free.next().ok_or(ReqError::internal(EINVAL))?;
                *slot = Some((target, setting));
            }
        }
        crate::ctl::options::apply(&bond, &[], &changes)
    }

    /// A snapshot of the bond named `name`, or of the `pos`-th bond.
    pub(crate) fn bond_info(&self, name: Option<&[u8]>, pos: u32, out: &mut BondInfo) -> Result {
        let bond = {
            let inner = self.inner.lock();
            match name {
                Some(n) => Self::find_bond(&inner, n),
                None => inner
                    .bonds
                    .iter()
                    .flatten()
                    .nth(usize::try_from(pos).map_err(|_| ENOENT)?)
                    .cloned(),
            }
        }
        .ok_or(ENOENT)?;
        bond.info(out);
        Ok(())
    }

    /// `rdma link add NAME type mrbond netdev X`: X is a bond master (its
    /// slaves' RDMA devices become members; 802.3ad serves only as the LACP
    /// source of rail members) or a single member's netdev.
    pub(crate) fn link_new(&self, name: &CStr, ifindex: u32) -> Result {
        let mut slaves = [0u32; MAX_MEMBERS];
        let (mode, lacp_source, count) = match ffi::bond_mode(ifindex) {
            Ok(m) => {
                let n = ffi::bond_slaves(ifindex, &mut slaves)?;
                let mode = if m == BOND_MODE_ACTIVEBACKUP {
                    BondMode::ActiveBackup
                } else {
                    BondMode::Rail
                };
                (mode, ifindex, n)
            }
            Err(_) => {
                if let Some(s) = slaves.get_mut(0) {
                    *s = ifindex;
                }
                (BondMode::Rail, 0, 1)
            }
        };
        let mut members: [Option<(Name, u16, AdminState)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        {
            let inner = self.inner.lock();
            let mut n = 0;
            for &slave in slaves.iter().take(count) {
                let dev = inner
                    .devices
                    .iter()
                    .flatten()
                    .find(|d| d.netdev_ifindex() == slave);
                if let (Some(dev), Some(dst)) = (dev, members.get_mut(n)) {
                    *dst = Some((
                        Name::new(dev.name().as_bytes()).ok_or(EINVAL)?,
                        100,
                        AdminState::Up,
                    ));
                    n += 1;
                }
            }
            if n == 0 {
                pr_warn!(
                    "rdma link add {}: no RoCE RDMA device on that netdev or its slaves\n",
                    name
                );
                return Err(ENODEV);
            }
        }
        let user = Name::new(name.as_bytes()).ok_or(EINVAL)?;
        self.create(mode, Policy::Wrr, lacp_source, &members, Some(user))
            .map(|_| ())
            .map_err(|e| {
                if let Some(msg) = e.message {
                    pr_warn!(
                        "rdma link add {}: {}\n",
                        name,
                        CStr::from_bytes_with_nul(msg).unwrap_or(c_str!("refused"))
                    );
                }
                e.errno
            })
    }

    /// Module exit: destroy every bond, with no lock held while doing so.
    pub(crate) fn teardown(&self) {
        loop {
            let next = {
                let inner = self.inner.lock();
                inner.bonds.iter().flatten().next().cloned()
            };
            match next {
                Some(b) => self.destroy(b),
                None => break,
            }
        }
    }
}
