// SPDX-License-Identifier: GPL-2.0

//! Memory regions of a device that stands for other devices, its members.
//! An [`Mr`] is either the local DMA MR, valid on every member, or bound
//! to one MR on one member: an rkey is valid only on the HCA that issued
//! it, and every FRWR ULP but RDS advertises `mr->rkey` before it posts
//! REG_MR, so the member is chosen at `alloc_mr`. The device hands out its
//! own lkeys (index << 8 | key byte), unique over all members, so that a
//! post can tell which member an SGE's key belongs to; rkeys are the
//! member's own. [`MrTable`] finds MRs by key under RCU, for the data path,
//! and orphans a leaving member's MRs.

use core::{
    ptr::{self, NonNull},
    sync::atomic::{AtomicPtr, AtomicU32, Ordering},
};

use kernel::{
    error::from_err_ptr,
    ffi::{c_int, c_uint},
    new_mutex,
    prelude::*,
    sync::Mutex,
    types::Opaque,
};

use super::{
    bindings,
    device::{Adapter, Device, DeviceOps},
    dma::MemberDma,
    irq_lock::{new_spinlock_irq, SpinLockIrq},
    member_device::MemberDevice,
    mr_pages::MrPages,
    pd::{MemberPd, Pd},
    rcu,
    xarray::XArray,
};
use crate::policy::MAX_MEMBERS;

/// The device's reserved local DMA lkey (`IBK_LOCAL_DMA_LKEY`): index 0.
const LOCAL_DMA_LKEY: u32 = bindings::MRBOND_RDMA_LOCAL_DMA_LKEY;
/// A key is an index above a key byte that the ULP may change.
const KEY_BYTE_BITS: u32 = 8;
const KEY_BYTE: u32 = (1 << KEY_BYTE_BITS) - 1;
/// Index 0 is the local DMA lkey; an lkey has 24 bits of index.
const LKEY_INDEX_MAX: u32 = (1 << (32 - KEY_BYTE_BITS)) - 1;

/// Where the MR of a member MR is filed in [`MrTable`]'s rkey index: the
/// member's slot above the rkey's index, which is unique on that member.
fn rkey_slot_index(slot: usize, rkey: u32) -> u32 {
    const _: () = assert!(MAX_MEMBERS <= 1 << KEY_BYTE_BITS);
    // `slot < MAX_MEMBERS`, which fits in the key byte's bits: no overflow.
    let slot = u32::try_from(slot).unwrap_or(0);
    (slot << (32 - KEY_BYTE_BITS)) | (rkey >> KEY_BYTE_BITS)
}

/// The member an MR is bound to, fixed at allocation.
#[derive(Clone, Copy)]
struct Binding {
    slot: usize,
    /// The member MR's lkey without its key byte.
    lkey_base: u32,
    /// The member MR's rkey, as it was allocated.
    rkey: u32,
}

/// An MR of the device, allocated by `alloc_mr` or `get_dma_mr` and freed
/// one RCU grace period after `dereg_mr`.
///
/// # Invariants
///
/// A `&Mr` exists only for an MR between its allocation and the end of
/// the grace period after its `dereg_mr`: through the core (its `ib_mr`)
/// until `dereg_mr`, through an [`MrTable`] lookup under an RCU read lock.
/// `member_mr`, if not null, is an MR this MR owns on the member of
/// `binding`.
#[repr(C)]
#[pin_data]
pub(crate) struct Mr {
    #[pin]
    ibmr: Opaque<bindings::ib_mr>,
    rcu: Opaque<kernel::bindings::callback_head>,
    binding: Option<Binding>,
    /// Its index in the table's lkey index; written once, under the
    /// table's lock, before the core sees the MR.
    lkey_index: AtomicU32,
    /// The member MR: null for the DMA MR and once the member has gone.
    /// Cleared under the table's lock; read under RCU.
    member_mr: AtomicPtr<bindings::ib_mr>,
    /// A member MR taken by a detach, deregistered after a grace period;
    /// only under the table's lock.
    orphan: AtomicPtr<bindings::ib_mr>,
    /// Lock "mrbond:mr-pages": the MR's pages on a member that needs DMA
    /// mapping (`None` otherwise). Taken by `map_mr_sg`, by the poll path
    /// when a completion ends the registration (inside "mrbond:qp"), and
    /// by `dereg_mr` and a detach (inside "mrbond:mrs").
    #[pin]
    pages: SpinLockIrq<Option<MrPages>>,
}

impl Mr {
    fn new(binding: Option<Binding>, member_mr: *mut bindings::ib_mr) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: zeroes are a valid `ib_mr`, which the core expects
            // from a driver (it fills in the rest after `alloc_mr`).
            ibmr <- Opaque::ffi_init(|p: *mut bindings::ib_mr| unsafe { p.write_bytes(0, 1) }),
            rcu: Opaque::uninit(),
            binding,
            lkey_index: AtomicU32::new(0),
            member_mr: AtomicPtr::new(member_mr),
            orphan: AtomicPtr::new(ptr::null_mut()),
            pages <- new_spinlock_irq!(None, "mrbond:mr-pages"),
        })
    }

    /// The registration of the MR's pages on the member is over: their
    /// mapping, if any, is undone. Any context.
    fn registration_over(&self) {
        if let Some(pages) = self.pages.lock().as_mut() {
            pages.unmap();
        }
    }

    /// The MR whose `ib_mr` is at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `ib_mr` of an `Mr` of a device whose table is
    /// built from a [`DeviceOps`], whose `dereg_mr` has not returned
    /// successfully before `'a` ends.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_mr) -> &'a Self {
        // CAST: `Mr` is `repr(C)` with the `ib_mr` at offset 0.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the object is live for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The member MR that a REG_MR of this MR on a QP of member `slot`
    /// registers, or `None` if the MR is another member's, orphaned, or
    /// the DMA MR. Any context.
    pub(crate) fn member_mr_on(&self, slot: usize) -> Option<NonNull<bindings::ib_mr>> {
        let binding = self.binding?;
        if binding.slot != slot {
            return None;
        }
        NonNull::new(self.member_mr.load(Ordering::Acquire))
    }

    /// Frees the MR once the readers that may have found it are done, as
    /// `kfree_rcu()` does: no callback of this module runs after the grace
    /// period, so an unload need not wait for it.
    ///
    /// # Safety
    ///
    /// `this` must come from `KBox::into_raw()` of a pinned `Mr` that no
    /// table indexes any more and the core has handed back.
    unsafe fn free_after_grace(this: *mut Self) {
        // Freed without a drop: nothing in it has a destructor.
        const { assert!(!core::mem::needs_drop::<Mr>()) };
        // SAFETY: the caller guarantees the MR is unindexed and ours, from
        // `kmalloc()` (`KBox`); its `rcu` is unused until now.
        unsafe { kernel::bindings::kvfree_call_rcu((*this).rcu.get(), this.cast()) };
    }
}

/// What the key of an SGE posted on a QP of one member stands for.
pub(crate) enum Lkey {
    /// The local DMA MR: the QP's member PD's `local_dma_lkey`.
    LocalDma,
    /// This member lkey.
    Member(u32),
    /// An MR of another member, or orphaned: refused, and counted.
    WrongMember,
    /// No MR of the device.
    Unknown,
}

/// The race windows of the MR verbs ([`DeviceOps::mr_window`]).
pub(crate) enum MrWindow {
    /// `map_mr_sg`: the member MR read, not yet mapped; under an RCU read
    /// lock, which a member's detach waits for.
    MemberMap,
    /// `alloc_mr`: the member chosen, its MR not yet allocated; under the
    /// table's lock, which a member's detach waits for. May sleep.
    MemberAlloc,
}

impl MemberPd {
    /// Allocates a PD on member device `dev`. May sleep.
    pub(crate) fn alloc_on(dev: &MemberDevice) -> Result<Self> {
        // SAFETY: by `MemberDevice`'s invariant the device stays
        // registered until the PD is dropped.
        unsafe { Self::alloc(dev.as_raw()) }
    }
}

/// The MRs of a device, by key, and its members' devices.
///
/// # Invariants
///
/// Every entry of `lkeys` and `rkeys` is a live [`Mr`]: it is erased under
/// `members`' lock before its `dereg_mr` frees it after a grace period.
/// An MR's entry in `rkeys` exists while its `member_mr` is not null.
#[pin_data]
pub(crate) struct MrTable {
    /// lkey >> 8 -> `Mr`; index 0 is never used (the local DMA lkey).
    #[pin]
    lkeys: XArray<Mr>,
    /// [`rkey_slot_index`] -> the `Mr` whose member MR has that rkey.
    #[pin]
    rkeys: XArray<Mr>,
    /// Lock "mrbond:mrs": MRs join and leave the indexes, and members come
    /// and go, under it. Inside the vdev's objects lock; only the PDs'
    /// locks and the members' own MR and PD verbs nest inside it.
    #[pin]
    members: Mutex<[Option<MemberDevice>; MAX_MEMBERS]>,
}

impl MrTable {
    /// An empty table with no member.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            lkeys <- XArray::new_allocating(),
            rkeys <- XArray::new(),
            members <- new_mutex!([const { None }; MAX_MEMBERS], "mrbond:mrs"),
        })
    }

    /// Member `slot`'s device is `dev` until [`MrTable::detach`].
    ///
    /// # Safety
    ///
    /// `dev` must stay registered until `detach(slot)` has returned and
    /// every [`MemberPd`] made on it (through [`DeviceOps::with_member_pd`])
    /// is dropped.
    pub(crate) unsafe fn attach(&self, slot: usize, dev: *mut bindings::ib_device) -> Result {
        let dev = NonNull::new(dev).ok_or(EINVAL)?;
        let mut members = self.members.lock();
        let entry = members.get_mut(slot).ok_or(EINVAL)?;
        // SAFETY: as the caller guarantees.
        *entry = Some(unsafe { MemberDevice::from_raw(dev) });
        Ok(())
    }

    /// Member `slot` is going away, its QPs destroyed: its MRs become
    /// orphans (posts and REG_MRs with them are refused, mapping them
    /// computes only iova and length) and their member MRs are freed.
    /// Sleeps.
    pub(crate) fn detach(&self, slot: usize) {
        let mut members = self.members.lock();
        let Some(entry) = members.get_mut(slot) else {
            return;
        };
        *entry = None;
        self.for_each(|mr| {
            let Some(b) = mr.binding.filter(|b| b.slot == slot) else {
                return;
            };
            let mmr = mr.member_mr.swap(ptr::null_mut(), Ordering::AcqRel);
            if !mmr.is_null() {
                self.rkeys.erase(rkey_slot_index(slot, b.rkey));
                mr.orphan.store(mmr, Ordering::Relaxed);
            }
        });
        // Key lookups and mappings read `member_mr` under RCU.
        rcu::synchronize();
        self.for_each(|mr| {
            let orphan = mr.orphan.swap(ptr::null_mut(), Ordering::Relaxed);
            if !orphan.is_null() {
                // SAFETY: by `Mr`'s invariant this MR owned it on the member,
                // whose device the table held until now; nothing reads it
                // after the grace period above.
                unsafe { bindings::mrbond_rdma_dereg_mr(orphan) };
                // The member MR is gone: its pages may go too, while the
                // member's device is still held.
                mr.registration_over();
            }
        });
        drop(members);
    }

    /// Runs `f` on every MR of the device; under `members`' lock, so none
    /// joins or leaves meanwhile.
    fn for_each(&self, mut f: impl FnMut(&Mr)) {
        for mr in self.lkeys.entries() {
            // SAFETY: by the type invariant the entry is a live `Mr`, which
            // cannot leave while the caller holds the lock.
            f(unsafe { mr.as_ref() });
        }
    }

    /// The MR at `index` of `xa`, valid while `_guard` is held.
    fn load<'g>(xa: &XArray<Mr>, index: u32, _guard: &'g rcu::Guard) -> Option<&'g Mr> {
        // SAFETY: by the type invariant an entry is a live `Mr`, freed
        // only a grace period after it was erased: after `_guard`. Any
        // thread may read it: what changes after it is filed is atomic.
        xa.load(index).map(|mr| unsafe { mr.as_ref() })
    }

    /// What `lkey`, posted on a QP of member `slot`, stands for. Any
    /// context; takes no lock.
    pub(crate) fn lkey(&self, slot: usize, lkey: u32) -> Lkey {
        if lkey == LOCAL_DMA_LKEY {
            return Lkey::LocalDma;
        }
        let guard = rcu::Guard::new();
        let Some(mr) = Self::load(&self.lkeys, lkey >> KEY_BYTE_BITS, &guard) else {
            return Lkey::Unknown;
        };
        match mr.binding {
            None => Lkey::LocalDma,
            Some(b) if b.slot == slot && !mr.member_mr.load(Ordering::Acquire).is_null() => {
                Lkey::Member(b.lkey_base | (lkey & KEY_BYTE))
            }
            Some(_) => Lkey::WrongMember,
        }
    }

    /// Whether `rkey`, invalidated on a QP of member `slot`, is an MR of
    /// another member (refused, and counted); an rkey the device does not
    /// know is the member's to judge. Any context; takes no lock.
    pub(crate) fn rkey_is_other_members(&self, slot: usize, rkey: u32) -> bool {
        let guard = rcu::Guard::new();
        if Self::load(&self.rkeys, rkey_slot_index(slot, rkey), &guard).is_some() {
            return false;
        }
        (0..MAX_MEMBERS)
            .filter(|&m| m != slot)
            .any(|m| Self::load(&self.rkeys, rkey_slot_index(m, rkey), &guard).is_some())
    }

    /// A completion on a QP of member `slot` ended the registration of
    /// member rkey `rkey` (a LOCAL_INV, or a RECV that invalidated it):
    /// the MR's pages, if mapped for the member, are unmapped. Any
    /// context; takes no lock of the table.
    pub(crate) fn invalidated(&self, slot: usize, rkey: u32) {
        let guard = rcu::Guard::new();
        if let Some(mr) = Self::load(&self.rkeys, rkey_slot_index(slot, rkey), &guard) {
            mr.registration_over();
        }
    }

    /// Deregisters `mr`'s member MR and takes it out of the indexes; on an
    /// error it stays as it was.
    fn remove(&self, mr: &Mr) -> Result {
        let members = self.members.lock();
        let mmr = mr.member_mr.load(Ordering::Acquire);
        if !mmr.is_null() {
            // SAFETY: by `Mr`'s invariant the MR owns it; the core calls
            // `dereg_mr` after the MR's last use.
            kernel::error::to_result(unsafe { bindings::mrbond_rdma_dereg_mr(mmr) })?;
            mr.member_mr.store(ptr::null_mut(), Ordering::Release);
            if let Some(b) = mr.binding {
                self.rkeys.erase(rkey_slot_index(b.slot, b.rkey));
            }
        }
        self.lkeys.erase(mr.lkey_index.load(Ordering::Relaxed));
        drop(members);
        // No member MR maps the pages any more.
        let pages = mr.pages.lock().take();
        if let Some(pages) = pages {
            pages.free();
        }
        Ok(())
    }

    /// Files a new MR, which `member_mr` (if any) belongs to, and hands it
    /// to the core.
    fn insert(
        &self,
        binding: Option<Binding>,
        member_mr: *mut bindings::ib_mr,
        member_lkey: u32,
        pages: Option<MrPages>,
    ) -> Result<*mut bindings::ib_mr> {
        let mr = match KBox::pin_init(Mr::new(binding, member_mr), GFP_KERNEL) {
            Ok(mr) => mr,
            Err(e) => {
                if let Some(pages) = pages {
                    pages.free();
                }
                return Err(e);
            }
        };
        *mr.pages.lock() = pages;
        // SAFETY: the MR stays pinned: it is freed only by
        // `free_after_grace`, through this raw pointer.
        let raw = KBox::into_raw(unsafe { core::pin::Pin::into_inner_unchecked(mr) });
        // SAFETY: `raw` comes from `KBox::into_raw`: not null.
        let entry = unsafe { NonNull::new_unchecked(raw) };
        let filed = self
            .lkeys
            .alloc(entry, 1, LKEY_INDEX_MAX)
            .and_then(|index| {
                let Some(b) = binding else {
                    return Ok(index);
                };
                self.rkeys
                    .insert(rkey_slot_index(b.slot, b.rkey), entry)
                    .inspect_err(|_| self.lkeys.erase(index))
                    .map(|()| index)
            });
        let index = match filed {
            Ok(index) => index,
            Err(e) => {
                // SAFETY: indexed nowhere; the member MR is the caller's again.
                let mr = unsafe { KBox::from_raw(raw) };
                let pages = mr.pages.lock().take();
                if let Some(pages) = pages {
                    pages.free();
                }
                return Err(e);
            }
        };
        // SAFETY: `raw` is live; its `ib_mr` is the core's only after the
        // return.
        unsafe {
            (*raw).lkey_index.store(index, Ordering::Relaxed);
            let ibmr = (*raw).ibmr.get();
            (*ibmr).lkey = (index << KEY_BYTE_BITS) | (member_lkey & KEY_BYTE);
            (*ibmr).rkey = binding.map_or(0, |b| b.rkey);
        }
        Ok(raw.cast())
    }
}

/// An orphan's pages go nowhere: only iova and length are computed.
///
/// # Safety
///
/// Called by `ib_sg_to_pages()`; touches nothing.
unsafe extern "C" fn orphan_set_page(_mr: *mut bindings::ib_mr, _addr: u64) -> c_int {
    0
}

impl<T: DeviceOps> Adapter<T> {
    /// The local DMA MR (ib_alloc_pd without `IBK_LOCAL_DMA_LKEY`, or a
    /// ULP's own `get_dma_mr`): valid on whichever member the QP lives
    /// on, as its lkey is that member PD's at post time. Remote access
    /// would need one rkey on every member: refused.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core with a live PD of a device whose table is
    /// `T`'s and whose driver data is a `T::Data`.
    pub(super) unsafe extern "C" fn get_dma_mr(
        ibpd: *mut bindings::ib_pd,
        access: c_int,
    ) -> *mut bindings::ib_mr {
        let local_write = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE as c_int;
        if access & !local_write != 0 {
            return super::eopnotsupp().to_ptr();
        }
        // SAFETY: the core calls a verb with a PD of an allocated device.
        let dev = unsafe { Device::from_raw((*ibpd).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last verb.
        let mr = unsafe { dev.driver_data::<T::Data>() }
            .and_then(|data| T::mrs(&data).insert(None, ptr::null_mut(), 0, None));
        mr.unwrap_or_else(|e| e.to_ptr())
    }

    /// An FRWR MR, bound to the member [`DeviceOps::mr_member`] names.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core with a live PD of a device whose table is
    /// `T`'s and whose driver data is a `T::Data`, in process context.
    pub(super) unsafe extern "C" fn alloc_mr(
        ibpd: *mut bindings::ib_pd,
        mr_type: bindings::ib_mr_type,
        max_num_sg: u32,
    ) -> *mut bindings::ib_mr {
        if mr_type != bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
            return super::eopnotsupp().to_ptr();
        }
        // SAFETY: the core calls a verb with a PD of an allocated device.
        let dev = unsafe { Device::from_raw((*ibpd).device) };
        // SAFETY: the PD is `T`'s, live for the call.
        let pd = unsafe { Pd::<T::PdData>::from_raw(ibpd) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last verb.
        let mr = unsafe { dev.driver_data::<T::Data>() }
            .and_then(|data| Self::alloc_bound(T::mrs(&data), pd, max_num_sg));
        mr.unwrap_or_else(|e| e.to_ptr())
    }

    fn alloc_bound(
        mrs: &MrTable,
        pd: &Pd<T::PdData>,
        max_num_sg: u32,
    ) -> Result<*mut bindings::ib_mr> {
        // Held until the MR is filed: a detach then finds it.
        let members = mrs.members.lock();
        let slot = T::mr_member(pd)?;
        let dev = members.get(slot).and_then(Option::as_ref).ok_or(ENODEV)?;
        // The consumer's pages come with kernel virtual addresses: a member
        // that needs DMA mapping gets its own, mapped at `map_mr_sg`.
        let pages = if dev.needs_dma_mapping() {
            // SAFETY: the table holds the device until the member's
            // detach, which undoes the MR's mapping first
            // (`MrTable::detach`), as `dereg_mr` does.
            let dma = unsafe { MemberDma::new(dev.as_non_null()) };
            Some(MrPages::new(dma, max_num_sg)?)
        } else {
            None
        };
        T::mr_window(MrWindow::MemberAlloc);
        let mmr = T::with_member_pd(pd, slot, dev, |mpd| {
            let mr_type = bindings::ib_mr_type_IB_MR_TYPE_MEM_REG;
            // SAFETY: `mpd` is a live PD of the member.
            from_err_ptr(unsafe { bindings::ib_alloc_mr(mpd.as_raw(), mr_type, max_num_sg) })
        });
        let mmr = match mmr {
            Ok(mmr) => mmr,
            Err(e) => {
                if let Some(pages) = pages {
                    pages.free();
                }
                return Err(e);
            }
        };
        // SAFETY: just allocated, not an error.
        let (lkey, rkey) = unsafe { ((*mmr).lkey, (*mmr).rkey) };
        let binding = Binding {
            slot,
            lkey_base: lkey & !KEY_BYTE,
            rkey,
        };
        mrs.insert(Some(binding), mmr, lkey, pages)
            .inspect_err(|_| {
                // SAFETY: ours, indexed nowhere.
                unsafe { bindings::mrbond_rdma_dereg_mr(mmr) };
            })
    }

    /// No ucontext exists until userspace verbs do.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core.
    pub(super) unsafe extern "C" fn reg_user_mr(
        _pd: *mut bindings::ib_pd,
        _start: u64,
        _length: u64,
        _virt_addr: u64,
        _access: c_int,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        super::eopnotsupp().to_ptr()
    }

    /// # Safety
    ///
    /// Called by the RDMA core, once per successful call, on an MR of a
    /// device whose table is `T`'s, after the MR's last use.
    pub(super) unsafe extern "C" fn dereg_mr(
        ibmr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: as the caller guarantees.
        let mr = unsafe { Mr::from_raw(ibmr) };
        // SAFETY: the MR's device is allocated while the MR lives.
        let dev = unsafe { Device::from_raw((*ibmr).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last MR is gone.
        let ret = unsafe { dev.driver_data::<T::Data>() }.and_then(|data| T::mrs(&data).remove(mr));
        match ret {
            Ok(()) => {
                // SAFETY: indexed nowhere now, and the core's no more.
                unsafe { Mr::free_after_grace(ibmr.cast()) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// Maps on the member MR. The SG list's DMA addresses are kernel
    /// virtual ones (the device has no DMA device): valid as they are for
    /// a member with virtual DMA (software RoCE); a member that needs DMA
    /// mapping gets the pages mapped for it ([`MrPages`]). The member computes iova and length; the ULP reads them from
    /// this MR. An orphan maps as a CPU-side operation would still succeed
    /// on a failed HCA: its REG_MR then flushes on the dead QP, which sends
    /// the ULP to its error recovery, where a failed map would fail the
    /// I/O instead. Does not sleep (ULPs map from blk-mq's `queue_rq`).
    ///
    /// # Safety
    ///
    /// Called by the RDMA core on a live MR of a device whose table is
    /// `T`'s, with the ULP's SG list.
    pub(super) unsafe extern "C" fn map_mr_sg(
        ibmr: *mut bindings::ib_mr,
        sg: *mut kernel::bindings::scatterlist,
        sg_nents: c_int,
        sg_offset: *mut c_uint,
    ) -> c_int {
        // SAFETY: as the caller guarantees.
        let mr = unsafe { Mr::from_raw(ibmr) };
        {
            // A detach deregisters the member MR after a grace period: hold
            // it off from reading the pointer until the member is done.
            let _guard = rcu::Guard::new();
            let mmr = mr.member_mr.load(Ordering::Acquire);
            if !mmr.is_null() {
                T::mr_window(MrWindow::MemberMap);
                // SAFETY: `ibmr` is the core's, with its page size set for
                // this call.
                let page_size = unsafe { (*ibmr).page_size };
                let n = match mr.pages.lock().as_mut() {
                    // SAFETY: `mmr` is live until the guard drops, and the
                    // consumer maps an MR only between registrations; `sg`
                    // and `sg_offset` are the consumer's, for the call.
                    Some(pages) => unsafe { pages.map(mmr, sg, sg_nents, sg_offset, page_size) },
                    // SAFETY: as above; the addresses are valid for a
                    // member with virtual DMA as they are.
                    None => unsafe {
                        bindings::ib_map_mr_sg(mmr, sg, sg_nents, sg_offset, page_size)
                    },
                };
                // SAFETY: both MRs are live; the member computed its iova
                // and length, which the consumer reads from ours.
                unsafe {
                    (*ibmr).iova = (*mmr).iova;
                    (*ibmr).length = (*mmr).length;
                }
                return n;
            }
        }
        // SAFETY: as above; the callback only computes.
        unsafe { bindings::ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, Some(orphan_set_page)) }
    }
}
