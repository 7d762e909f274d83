// SPDX-License-Identifier: GPL-2.0

//! The allocation behind each device of this module (`ib_alloc_device()`'s
//! container): the `ib_device` first, then what the abstractions keep per
//! device. Those are the driver data, the member slots under the objects
//! lock, the work queues of the device's own callbacks and of QP1's
//! sends, the GID rescan after a port binding changes, and the driver's
//! sysfs directories.
//!
//! [`OwnedDevice`] is the driver's handle: it allocates, binds ports,
//! registers, and unregisters or frees on drop. [`DeviceHold`] is a
//! counted reference for what stays safe on a device the core
//! unregistered meanwhile. The core's `.dealloc_driver`, the last op it
//! calls on a device, releases the driver data.

use core::{
    ffi::c_void,
    mem::{offset_of, size_of},
    ptr::{addr_of_mut, null_mut, NonNull},
    sync::atomic::{AtomicPtr, Ordering},
};

use kernel::{
    bindings as kbindings,
    error::to_result,
    ffi::c_int,
    new_mutex,
    prelude::*,
    str::CStr,
    sync::{
        lock::{mutex::MutexBackend, Guard},
        Mutex,
    },
    types::{ForeignOwnable, Opaque},
};

use super::{
    bindings,
    device::{Device, DeviceOps, OpsTable},
    member::Departure,
    member_device::IbDevice,
    sysfs::{Layout, SysfsDir},
};
use crate::policy::MAX_MEMBERS;

/// The most ports a device has (`MRBOND_MAX_PORTS`).
const MAX_PORTS: usize = bindings::MRBOND_RDMA_MAX_PORTS as usize;

/// A member slot: the device that hosts the slot's objects, held from the
/// member's attach to its detach, and its port.
struct MemberSlot {
    dev: Option<IbDevice>,
    port: u32,
}

/// The member slots, which the objects lock guards (see [`ObjectsLock`]).
pub(super) struct MemberSlots([MemberSlot; MAX_MEMBERS]);

impl MemberSlots {
    const EMPTY: MemberSlot = MemberSlot { dev: None, port: 0 };

    /// Slot `slot`'s device and port, if a member is attached.
    pub(super) fn get(&self, slot: usize) -> Option<(&IbDevice, u32)> {
        let s = self.0.get(slot)?;
        Some((s.dev.as_ref()?, s.port))
    }

    /// Slot `slot` hosts objects on `dev` (port 1) from now on; `None`
    /// empties it. The device it held before.
    pub(super) fn set(&mut self, slot: usize, dev: Option<IbDevice>) -> Result<Option<IbDevice>> {
        let s = self.0.get_mut(slot).ok_or(EINVAL)?;
        let port = if dev.is_some() { 1 } else { 0 };
        Ok(core::mem::replace(s, MemberSlot { dev, port }).dev)
    }

    /// Empties every slot: the devices they held.
    fn take_all(&mut self) -> [Option<IbDevice>; MAX_MEMBERS] {
        core::array::from_fn(|i| self.0.get_mut(i).and_then(|s| s.dev.take()))
    }
}

/// The `struct device` of `ibdev`, which holds its references.
///
/// # Safety
///
/// `ibdev` must point at an allocated `ib_device`.
unsafe fn device_of(ibdev: *mut bindings::ib_device) -> *mut kbindings::device {
    // SAFETY: as the caller guarantees; no reference is made. The union
    // field is a marker at the start of the union, which is the device.
    unsafe { addr_of_mut!((*ibdev).__bindgen_anon_1.dev).cast() }
}

/// The objects lock of a device: see [`super::device::ObjectsGuard`].
pub(super) type ObjectsLock = Mutex<MemberSlots>;

/// The driver's sysfs directories (see [`super::sysfs`]): the device's
/// one and a member's each.
struct SysfsDirs {
    device: Option<SysfsDir>,
    member: [Option<SysfsDir>; MAX_MEMBERS],
}

impl SysfsDirs {
    const NONE: Self = Self {
        device: None,
        member: [const { None }; MAX_MEMBERS],
    };
}

/// What the lifecycle lock guards.
struct Lifecycle {
    /// `.dealloc_driver` ran: add nothing, neither a binding (its netdev
    /// hold would last until the final put and block the netdev's
    /// unregistration meanwhile) nor a sysfs directory.
    dead: bool,
    sysfs: SysfsDirs,
}

/// The container `ib_alloc_device()` allocates for each device.
#[repr(C)]
pub(super) struct Container {
    /// At offset 0, as `ib_alloc_device()` requires.
    ibdev: Opaque<bindings::ib_device>,
    inner: Inner,
}

#[pin_data]
struct Inner {
    /// The driver data (`T::Data` made foreign), until `.dealloc_driver`.
    data: AtomicPtr<c_void>,
    /// "mrbond:vdev": the `dead` flag and the sysfs directories, against
    /// `.dealloc_driver`, which `rdma link del` may run in any thread.
    /// Never held while a kobject is removed: removal waits for running
    /// show/store, which call into the driver, which may call back here.
    #[pin]
    lifecycle: Mutex<Lifecycle>,
    /// "mrbond:vdev-objects": member objects are made and destroyed, and
    /// members attached and detached, under it; the QP verbs take it after
    /// their placement. Inside it nest the MR table's lock
    /// ("mrbond:mrs"), the PDs' ("mrbond:pds", "mrbond:pd"), the CQs'
    /// ("mrbond:cqs"), the QPNs' ("mrbond:qpns"), the members' MAD agents
    /// and listeners' ("mrbond:gsi-members"), the QP set's ("mrbond:qps",
    /// whose walks end connection exchanges: a QP's "mrbond:qp-cm", then
    /// QP1's "mrbond:gsi") and the QP data paths' ("mrbond:qp"); never
    /// the driver's own locks. The data path's locks, all IRQ-safe
    /// spinlocks: a CQ's "mrbond:cq-poll" -> a QP's "mrbond:qp" -> a CQ's
    /// "mrbond:cq-swq"; "mrbond:gsi" -> "mrbond:gsi-rq" and
    /// "mrbond:cq-swq". See Documentation/dev-tools/notes/data-path-plan.md.
    #[pin]
    objects: ObjectsLock,
    /// Adds the GIDs of the ports' netdevs after a binding changed on a
    /// registered device (`ib_device_set_netdev()` triggers no rescan;
    /// mlx5 does the same by hand).
    rescan_work: Opaque<kbindings::work_struct>,
    /// Takes the next step of the QP moves whose drains finished
    /// ([`super::tfo_move::run`]); on `cb_wq`.
    moves_work: Opaque<kbindings::work_struct>,
    /// While a move is on, every `MOVE_TICK_MS`: retransmissions and
    /// deadlines ([`super::tfo_move::tick`]); on `cb_wq`.
    moves_tick: Opaque<kbindings::delayed_work>,
    /// Sends MADs through members from process context; ordered.
    gsi_wq: NonNull<kbindings::workqueue_struct>,
    /// Runs the consumer callbacks the device raises itself (completion
    /// events of the completions it makes, QP_FATAL), so that none is
    /// called with a lock held or from inside the consumer's own post;
    /// ordered, so that a QP's flushes are announced before its death.
    cb_wq: NonNull<kbindings::workqueue_struct>,
}

impl Inner {
    fn new(
        data: *mut c_void,
        gsi_wq: NonNull<kbindings::workqueue_struct>,
        cb_wq: NonNull<kbindings::workqueue_struct>,
    ) -> impl PinInit<Self> {
        pin_init!(Self {
            data: AtomicPtr::new(data),
            lifecycle <- new_mutex!(
                Lifecycle {
                    dead: false,
                    sysfs: SysfsDirs::NONE,
                },
                "mrbond:vdev"
            ),
            objects <- new_mutex!(
                MemberSlots([MemberSlots::EMPTY; MAX_MEMBERS]),
                "mrbond:vdev-objects"
            ),
            rescan_work: Opaque::uninit(),
            moves_work: Opaque::uninit(),
            moves_tick: Opaque::uninit(),
            gsi_wq,
            cb_wq,
        })
    }
}

/// Run by the callback queue with a container's `moves_work`.
///
/// # Safety
///
/// `work` is the `moves_work` of a live container initialised with `T`'s
/// table.
unsafe extern "C" fn moves<T: DeviceOps>(work: *mut kbindings::work_struct) {
    // SAFETY: as the caller guarantees; the device is the container's
    // first field.
    let dev = unsafe {
        Device::from_raw(
            work.byte_sub(offset_of!(Container, inner.moves_work))
                .cast::<bindings::ib_device>(),
        )
    };
    super::tfo_move::run::<T>(dev);
}

/// Run by the callback queue with a container's `moves_tick`.
///
/// # Safety
///
/// `work` is the work of the `moves_tick` of a live container initialised
/// with `T`'s table.
unsafe extern "C" fn tick<T: DeviceOps>(work: *mut kbindings::work_struct) {
    // SAFETY: as the caller guarantees; a delayed work starts with its
    // work, and the device is the container's first field.
    let dev = unsafe {
        Device::from_raw(
            work.byte_sub(offset_of!(Container, inner.moves_tick))
                .cast::<bindings::ib_device>(),
        )
    };
    super::tfo_move::tick::<T>(dev);
}

/// An ordered work queue that may run during memory reclaim.
fn alloc_ordered_wq(
    name: &'static core::ffi::CStr,
) -> Result<NonNull<kbindings::workqueue_struct>> {
    // SAFETY: `name` is NUL-terminated; the queue is the caller's.
    NonNull::new(unsafe { bindings::mrbond_rdma_alloc_ordered_wq(name.as_ptr().cast()) })
        .ok_or(ENOMEM)
}

impl Container {
    /// The container of `dev`.
    fn of(dev: &Device) -> &Self {
        // SAFETY: by `Device`'s invariant its `ib_device` is this module's,
        // and every one of those is the first field of a `Container`
        // (`OwnedDevice::new`), initialised before its ops are set.
        unsafe { &*dev.raw().cast::<Self>() }
    }

    fn ibdev(&self) -> *mut bindings::ib_device {
        self.ibdev.get()
    }

    /// The device, as its verbs see it.
    fn device(&self) -> &Device {
        // SAFETY: a container is reached only once `OwnedDevice::new` has
        // initialised it and set its ops table; its `ib_device` is
        // allocated while `self` is.
        unsafe { Device::from_raw(self.ibdev()) }
    }

    /// The GID rescan of every port after a binding changed.
    ///
    /// # Safety
    ///
    /// Run by the work queue with the `rescan_work` of a container, which
    /// holds a registration reference that the queuer handed over.
    unsafe extern "C" fn rescan(work: *mut kbindings::work_struct) {
        // SAFETY: the work is the `rescan_work` of a live container.
        let this = unsafe {
            &*work
                .byte_sub(offset_of!(Container, inner.rescan_work))
                .cast::<Container>()
        };
        let ibdev = this.ibdev();
        // SAFETY: the registration reference keeps the device registered.
        // Adding a GID that is present is a no-op, so every port is
        // rescanned. Deferred to here because the rescan takes RTNL.
        unsafe {
            for port in 1..=this.device().port_count() {
                bindings::rdma_roce_rescan_port(ibdev, port);
            }
            bindings::ib_device_put(ibdev);
        }
    }

    /// A registration reference, if the device is registered: the GID
    /// table and the device's sysfs directory stay while it is held.
    fn try_get(&self) -> Option<Registered<'_>> {
        // SAFETY: the device is allocated.
        unsafe { bindings::mrbond_rdma_device_try_get(self.ibdev()) }.then_some(Registered(self))
    }

    /// Unbinds `port`. Neither this nor [`Container::bind`] takes RTNL or
    /// sleeps on anything a netdev notifier holds: both may be called from
    /// a notifier or with the driver's locks held.
    fn unbind(&self, port: u32) -> Result {
        let ibdev = self.ibdev();
        let live = self.try_get();
        // SAFETY: registered, so the core's port data exists; the netdev
        // comes with a reference taken, or NULL.
        let old = live.as_ref().map_or(null_mut(), |_| unsafe {
            bindings::ib_device_get_netdev(ibdev, port)
        });
        // SAFETY: valid in any state, even after `.dealloc_driver`.
        let ret = unsafe { bindings::ib_device_set_netdev(ibdev, null_mut(), port) };
        if live.is_some() && ret == 0 && !old.is_null() {
            // SAFETY: registered and `old` held; the core drops them on
            // NETDEV_UNREGISTER, not on unbind.
            unsafe { bindings::roce_del_all_netdev_gids(ibdev, port, old) };
        }
        drop(live);
        // SAFETY: the reference `ib_device_get_netdev()` took; NULL is a
        // no-op.
        unsafe { bindings::mrbond_rdma_dev_put(old) };
        to_result(ret)
    }

    /// Binds `port` to `ndev`, which the core then holds.
    fn bind(&self, port: u32, ndev: *mut kbindings::net_device) -> Result {
        let ibdev = self.ibdev();
        let life = self.inner.lifecycle.lock();
        if life.dead {
            return Err(ENODEV);
        }
        // Registered: the GIDs must follow (unregistered: registration
        // scans them).
        let live = self.try_get();
        // SAFETY: as in `unbind`.
        let old = live.as_ref().map_or(null_mut(), |_| unsafe {
            bindings::ib_device_get_netdev(ibdev, port)
        });
        // SAFETY: `ndev` is held by the caller; the core takes its own
        // hold. One made before `.dealloc_driver` is dropped by
        // `ib_dealloc_device()`, which runs it first.
        let ret = unsafe { bindings::ib_device_set_netdev(ibdev, ndev, port) };
        drop(life);
        if let Some(reg) = live {
            if ret == 0 && old != ndev {
                if !old.is_null() {
                    // SAFETY: registered and `old` held.
                    unsafe { bindings::roce_del_all_netdev_gids(ibdev, port, old) };
                }
                // SAFETY: the work is initialised and lives with the
                // container; `.dealloc_driver` flushes it.
                let queued = unsafe {
                    kbindings::queue_work_on(
                        kbindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                        kbindings::system_wq,
                        self.inner.rescan_work.get(),
                    )
                };
                // The work inherits the registration reference, unless
                // one is pending: it runs after this binding anyway.
                if queued {
                    core::mem::forget(reg);
                }
            }
        }
        // SAFETY: as in `unbind`.
        unsafe { bindings::mrbond_rdma_dev_put(old) };
        to_result(ret)
    }

    /// Removes the driver's sysfs directories, members' first; waits for
    /// their running show/store. Idempotent.
    fn sysfs_del(&self) {
        let dirs = core::mem::replace(&mut self.inner.lifecycle.lock().sysfs, SysfsDirs::NONE);
        for dir in Iterator::chain(dirs.member.into_iter(), [dirs.device]).flatten() {
            dir.remove();
        }
    }
}

/// A registration reference of a device, put on drop.
struct Registered<'a>(&'a Container);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        // SAFETY: taken by `Container::try_get`.
        unsafe { bindings::ib_device_put(self.0.ibdev()) };
    }
}

impl Device {
    /// The objects lock and the member slots it guards.
    pub(super) fn objects_lock(&self) -> &ObjectsLock {
        &Container::of(self).inner.objects
    }

    /// The raw driver data, NULL once `.dealloc_driver` took it.
    pub(super) fn raw_driver_data(&self) -> *mut c_void {
        Container::of(self).inner.data.load(Ordering::Acquire)
    }

    /// Queues `work` on the queue of the consumer callbacks the device
    /// raises itself.
    ///
    /// # Safety
    ///
    /// `work` must be initialised and stay valid until it ran or was
    /// cancelled; the device's objects must still exist (they are gone
    /// before `.dealloc_driver` destroys the queue).
    pub(super) unsafe fn queue_callback(&self, work: *mut kbindings::work_struct) {
        // SAFETY: the queue lives until `.dealloc_driver`; `work` is valid
        // as the caller guarantees.
        unsafe { Self::queue(Container::of(self).inner.cb_wq, work) };
    }

    /// Queues the device's move work ([`super::tfo_move::run`]), if it is
    /// not queued already. Any context.
    pub(crate) fn queue_moves(&self) {
        let c = Container::of(self);
        // SAFETY: initialised by `OwnedDevice::new`; the queue lives until
        // `.dealloc_driver`, which drains it, and the work stays with the
        // container.
        unsafe { Self::queue(c.inner.cb_wq, c.inner.moves_work.get()) };
    }

    /// Queues the device's move tick in `ms` ([`super::tfo_move::tick`]),
    /// if it is not queued already. Any context.
    pub(crate) fn queue_move_tick(&self, ms: u32) {
        let c = Container::of(self);
        // SAFETY: initialised by `OwnedDevice::new`; `.dealloc_driver`
        // cancels it before it destroys the queue.
        unsafe {
            bindings::mrbond_rdma_queue_delayed_work(
                c.inner.cb_wq.as_ptr(),
                c.inner.moves_tick.get(),
                ms,
            )
        };
    }

    /// Queues `work` on QP1's send queue.
    ///
    /// # Safety
    ///
    /// As for [`Device::queue_callback`], with QP1 as the object.
    pub(super) unsafe fn queue_gsi(&self, work: *mut kbindings::work_struct) {
        // SAFETY: as for `queue_callback`.
        unsafe { Self::queue(Container::of(self).inner.gsi_wq, work) };
    }

    /// # Safety
    ///
    /// `wq` must be live and `work` valid until it ran or was cancelled.
    unsafe fn queue(wq: NonNull<kbindings::workqueue_struct>, work: *mut kbindings::work_struct) {
        // SAFETY: as the caller guarantees.
        unsafe {
            kbindings::queue_work_on(
                kbindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                wq.as_ptr(),
                work,
            )
        };
    }

    /// Removes the driver's sysfs directories; waits for their running
    /// show/store. For `ib_client.remove` of a device the core unregisters
    /// on its own (`rdma link del`): before `device_del()`.
    pub(crate) fn sysfs_del(&self) {
        Container::of(self).sysfs_del();
    }
}

/// A device of this module, owned by its driver: freed, or unregistered,
/// exactly once, on drop.
///
/// # Invariants
///
/// `dev` is a fully initialised [`Container`] whose ops table is `T`'s and
/// whose driver data is a `T::Data`; the handle holds a device reference
/// (`get_device()`) from registration on.
pub(crate) struct OwnedDevice<T: DeviceOps + 'static> {
    dev: NonNull<Container>,
    registered: bool,
    sysfs: &'static Layout<T>,
}

// SAFETY: the container is internally synchronised; the handle passes it on.
unsafe impl<T: DeviceOps + 'static> Send for OwnedDevice<T> {}
// SAFETY: every `&self` method is safe to call concurrently (the core and
// the lifecycle lock synchronise).
unsafe impl<T: DeviceOps + 'static> Sync for OwnedDevice<T> {}

impl<T: DeviceOps + 'static> OwnedDevice<T> {
    /// Allocates an unregistered device with `ports` RoCE v2 ports that
    /// owns `data`, until `.dealloc_driver` releases it; its sysfs
    /// directories are of `sysfs`' kinds.
    pub(crate) fn new(
        ops: &'static OpsTable<T>,
        sysfs: &'static Layout<T>,
        data: T::Data,
        ports: u32,
        node_guid: u64,
    ) -> Result<Self> {
        if ports == 0 || ports as usize > MAX_PORTS {
            return Err(EINVAL);
        }
        let gsi_wq = alloc_ordered_wq(c"mrbond_gsi")?;
        let cb_wq = alloc_ordered_wq(c"mrbond_cb").inspect_err(|_| {
            // SAFETY: allocated above, unused.
            unsafe { kbindings::destroy_workqueue(gsi_wq.as_ptr()) };
        })?;
        // SAFETY: the size covers a `Container`, whose `ib_device` is first.
        let raw = unsafe { bindings::_ib_alloc_device(size_of::<Container>()) };
        let Some(ibdev) = NonNull::new(raw) else {
            // SAFETY: allocated above, unused.
            unsafe {
                kbindings::destroy_workqueue(cb_wq.as_ptr());
                kbindings::destroy_workqueue(gsi_wq.as_ptr());
            }
            return Err(ENOMEM);
        };
        let container = ibdev.cast::<Container>();
        let foreign = data.into_foreign().cast_mut();
        // SAFETY: the allocation is ours and zeroed past the `ib_device`,
        // which the core initialised; `inner` is pinned there until the
        // core frees the container, which runs no destructor (nothing in
        // `Inner` needs one: `.dealloc_driver` destroys the queues).
        let init = unsafe {
            Inner::new(foreign, gsi_wq, cb_wq)
                .__pinned_init(addr_of_mut!((*container.as_ptr()).inner))
        };
        match init {
            Ok(()) => {}
            Err(never) => match never {},
        }
        // SAFETY: as above; nothing else sees the device yet. The port
        // count goes before any binding: `ib_device_set_netdev()` sizes
        // the port data from it.
        unsafe {
            let c = &*container.as_ptr();
            bindings::mrbond_rdma_init_work(c.inner.rescan_work.get(), Some(Container::rescan));
            // Its own lock class: it takes the objects lock, under which
            // `destroy_qp` cancels QPs' fatal works.
            bindings::mrbond_rdma_init_moves_work(c.inner.moves_work.get(), Some(moves::<T>));
            bindings::mrbond_rdma_init_delayed_work(c.inner.moves_tick.get(), Some(tick::<T>));
            let d = &mut *ibdev.as_ptr();
            d.local_dma_lkey = bindings::MRBOND_RDMA_LOCAL_DMA_LKEY;
            d.node_type = bindings::RDMA_NODE_IB_CA as u8;
            d.phys_port_cnt = ports;
            d.num_comp_vectors = 1;
            d.node_guid = node_guid.to_be();
            for (dst, src) in d.node_desc.iter_mut().zip(b"mrbond\0") {
                *dst = *src as _;
            }
            // From here on `.dealloc_driver` runs when the device goes.
            bindings::ib_set_device_ops(ibdev.as_ptr(), ops.as_raw());
        }
        // INVARIANT: initialised above, with `T`'s table and data.
        Ok(Self {
            dev: container,
            registered: false,
            sysfs,
        })
    }

    fn container(&self) -> &Container {
        // SAFETY: by the type invariant the container is allocated while
        // the handle lives.
        unsafe { self.dev.as_ref() }
    }

    /// The device, for its objects.
    pub(crate) fn device(&self) -> &Device {
        self.container().device()
    }

    /// Whether `raw` is this device.
    pub(crate) fn is(&self, raw: *const bindings::ib_device) -> bool {
        core::ptr::eq(self.dev.as_ptr().cast::<bindings::ib_device>(), raw)
    }

    /// See [`Device::attach_member`]. May sleep.
    pub(crate) fn attach_member(&self, slot: usize, dev: IbDevice) -> Result {
        // SAFETY: by the type invariant the ops table is `T`'s.
        unsafe { self.device().attach_member::<T>(slot, dev) }
    }

    /// See [`Device::fail_member`]. May sleep.
    pub(crate) fn fail_member(&self, slot: usize) -> u32 {
        // SAFETY: by the type invariant the ops table is `T`'s.
        unsafe { self.device().fail_member::<T>(slot) }
    }

    /// See [`Device::detach_member`]. May sleep.
    pub(crate) fn detach_member(&self, slot: usize) -> Option<Departure> {
        // SAFETY: by the type invariant the ops table is `T`'s.
        unsafe { self.device().detach_member::<T>(slot) }
    }

    /// Binds 1-based `port` to the netdev `ifindex` in the initial
    /// namespace; 0 unbinds.
    pub(crate) fn set_port_netdev(&self, port: u32, ifindex: u32) -> Result {
        if port < 1 || port > self.device().port_count() {
            return Err(EINVAL);
        }
        if ifindex == 0 {
            return self.container().unbind(port);
        }
        let ifindex = c_int::try_from(ifindex).map_err(|_| EINVAL)?;
        // SAFETY: returns a held netdev or NULL.
        let ndev = unsafe { bindings::mrbond_rdma_dev_get_by_index(ifindex) };
        if ndev.is_null() {
            return Err(ENODEV);
        }
        let ret = self.container().bind(port, ndev);
        // SAFETY: the hold taken above.
        unsafe { bindings::mrbond_rdma_dev_put(ndev) };
        ret
    }

    /// Registers the device as `name` (`mrbond%d` picks a free index).
    /// Not from an `ib_client` callback.
    pub(crate) fn register(&mut self, name: &CStr, user_named: bool) -> Result {
        if self.registered {
            return Err(EBUSY);
        }
        let ibdev = self.container().ibdev();
        // SAFETY: allocated and unregistered: nothing else writes it.
        unsafe {
            if user_named {
                bindings::mrbond_rdma_mark_name_assigned_by_user(ibdev);
            }
            // The handle's reference, taken first: with IBK_ALLOW_USER_UNREG
            // a racing `rdma link del` may unregister and dealloc the
            // device even before `ib_register_device()` returns; the
            // memory must outlive that until `drop`.
            kbindings::get_device(device_of(ibdev));
        }
        // SAFETY: `name` is NUL-terminated; no DMA device (software).
        let ret = unsafe { bindings::ib_register_device(ibdev, name.as_char_ptr(), null_mut()) };
        if ret != 0 {
            // SAFETY: the reference taken above; `drop` frees the rest.
            unsafe { kbindings::put_device(device_of(ibdev)) };
            return to_result(ret);
        }
        // INVARIANT: the device reference is held from here on.
        self.registered = true;
        Ok(())
    }

    /// The device name; empty before registration.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: the core keeps a NUL-terminated name in the device,
        // which outlives `self`.
        unsafe { CStr::from_char_ptr((*self.container().ibdev()).name.as_ptr()) }
    }

    /// The `ib_device` index.
    pub(crate) fn index(&self) -> u32 {
        // SAFETY: set at registration, constant after.
        unsafe { (*self.container().ibdev()).index }
    }

    /// A counted reference for calls made without the driver's locks.
    pub(crate) fn hold(&self) -> DeviceHold {
        let ibdev = self.container().ibdev();
        // SAFETY: allocated; released by `DeviceHold::drop`.
        unsafe { kbindings::get_device(device_of(ibdev)) };
        // INVARIANT: one device reference, taken just above.
        DeviceHold { dev: self.dev }
    }

    /// Creates the driver's sysfs directory under the device's, with its
    /// `members/`. Not with a lock held that show/store take.
    pub(crate) fn sysfs_add(&self) -> Result {
        let c = self.container();
        let reg = c.try_get().ok_or(ENODEV)?;
        let mut life = c.inner.lifecycle.lock();
        if life.dead {
            return Err(ENODEV);
        }
        if life.sysfs.device.is_some() {
            return Err(EEXIST);
        }
        // SAFETY: registered, so the device's kobject is in sysfs; the data
        // is `T::Data` and outlives the directory (`.dealloc_driver`
        // removes it first).
        let dir = unsafe {
            SysfsDir::device(
                self.sysfs,
                addr_of_mut!((*device_of(c.ibdev())).kobj),
                kernel::c_str!("mrbond"),
                c.inner.data.load(Ordering::Acquire),
            )
        }?;
        life.sysfs.device = Some(dir);
        drop(life);
        drop(reg);
        Ok(())
    }

    /// Creates `members/<name>` for member `slot`.
    pub(crate) fn sysfs_member_add(&self, slot: usize, name: &CStr) -> Result {
        let c = self.container();
        let reg = c.try_get().ok_or(ENODEV)?;
        let mut guard = c.inner.lifecycle.lock();
        let life = &mut *guard;
        let Some(parent) = life.sysfs.device.as_ref().filter(|_| !life.dead) else {
            return Err(ENODEV);
        };
        let entry = life.sysfs.member.get_mut(slot).ok_or(EINVAL)?;
        if entry.is_some() {
            return Err(EEXIST);
        }
        let slot_u32 = u32::try_from(slot).map_err(|_| EINVAL)?;
        *entry = Some(parent.member(self.sysfs, slot_u32, name)?);
        drop(guard);
        drop(reg);
        Ok(())
    }

    /// Lets go of a device the core is unregistering on its own (`rdma
    /// link del`): from its `ib_client.remove`, where unregistering again
    /// would deadlock. The core's unregistration ends in `.dealloc_driver`.
    pub(crate) fn release_unregistering(self) {
        let this = core::mem::ManuallyDrop::new(self);
        if this.registered {
            let ibdev = this.container().ibdev();
            // SAFETY: the handle's reference, taken at registration.
            unsafe { kbindings::put_device(device_of(ibdev)) };
        } else {
            // SAFETY: never registered: freeing runs `.dealloc_driver`.
            unsafe { bindings::ib_dealloc_device(this.container().ibdev()) };
        }
    }
}

impl<T: DeviceOps + 'static> Drop for OwnedDevice<T> {
    fn drop(&mut self) {
        let ibdev = self.container().ibdev();
        if self.registered {
            // sysfs first, with no lock held.
            self.container().sysfs_del();
            // SAFETY: a no-op if `rdma link del` got there first; else it
            // ends in `.dealloc_driver`. Concurrent calls are fenced by the
            // core's unregistration lock. Then the handle's reference.
            unsafe {
                bindings::ib_unregister_device(ibdev);
                kbindings::put_device(device_of(ibdev));
            }
        } else {
            // SAFETY: never registered: runs `.dealloc_driver` (releasing
            // the data) and frees the device.
            unsafe { bindings::ib_dealloc_device(ibdev) };
        }
    }
}

/// A counted reference to a device's memory (`get_device()`), taken under
/// a driver lock and used without it: removing a member's sysfs directory
/// waits for its running show/store, which may take that lock. Offers only
/// what stays safe on a device the core unregistered meanwhile.
///
/// # Invariants
///
/// `dev` is an initialised [`Container`] with one device reference that
/// this handle owns.
pub(crate) struct DeviceHold {
    dev: NonNull<Container>,
}

// SAFETY: a device reference may be dropped from any thread; the calls
// below are internally synchronised.
unsafe impl Send for DeviceHold {}
// SAFETY: every method takes `&self` and is safe to call concurrently.
unsafe impl Sync for DeviceHold {}

impl DeviceHold {
    fn container(&self) -> &Container {
        // SAFETY: the reference keeps the container allocated.
        unsafe { self.dev.as_ref() }
    }

    /// Removes `members/<slot>`; waits for its running show/store. A no-op
    /// once the driver's sysfs is gone.
    pub(crate) fn sysfs_member_del(&self, slot: usize) {
        let dir = {
            let mut life = self.container().inner.lifecycle.lock();
            life.sysfs.member.get_mut(slot).and_then(Option::take)
        };
        // Taken out under the lock, removed without it.
        if let Some(dir) = dir {
            dir.remove();
        }
    }

    /// Reports PORT_ACTIVE or PORT_ERR on `port`, while registered. The
    /// core's queued work holds no device reference: dispatching only
    /// while registered lets `ib_cache_cleanup_one()`'s flush cover it.
    pub(crate) fn port_event(&self, port: u32, active: bool) {
        let c = self.container();
        if port < 1 || port > c.device().port_count() {
            return;
        }
        let Some(reg) = c.try_get() else { return };
        let mut ev = bindings::ib_event {
            device: c.ibdev(),
            event: if active {
                bindings::ib_event_type_IB_EVENT_PORT_ACTIVE
            } else {
                bindings::ib_event_type_IB_EVENT_PORT_ERR
            },
            ..Default::default()
        };
        // SAFETY: `port_num` is the member of a port event.
        unsafe { *ev.element.port_num.as_mut() = port };
        // SAFETY: registered while `reg` is held; `ev` is valid for the
        // call, which copies what it queues.
        unsafe { bindings::ib_dispatch_event(&ev) };
        drop(reg);
    }
}

impl Drop for DeviceHold {
    fn drop(&mut self) {
        // SAFETY: by the invariant this handle owns one reference.
        unsafe { kbindings::put_device(device_of(self.container().ibdev())) };
    }
}

/// `.dealloc_driver`: the last op the core calls, from
/// `ib_dealloc_device()` (`rdma link del`, `ib_unregister_device()` or a
/// never-registered device's drop). The container itself is freed by the
/// core at the last `put_device()`.
///
/// # Safety
///
/// Called once by the RDMA core, on a device whose container was
/// initialised by [`OwnedDevice::new`] with `T`'s table.
pub(super) unsafe extern "C" fn dealloc_driver<T: DeviceOps>(ibdev: *mut bindings::ib_device) {
    // SAFETY: the core calls it on an allocated device of this module.
    let dev = unsafe { Device::from_raw(ibdev) };
    let c = Container::of(dev);
    // Nothing is added from here on.
    c.inner.lifecycle.lock().dead = true;
    // SAFETY: initialised; not pending (it holds a registration reference,
    // all dropped by now), but it may still be returning: its code is ours.
    unsafe { kbindings::flush_work(c.inner.rescan_work.get()) };
    // The directories pin the device: they go before its last put, and
    // their running show/store still borrow the data.
    c.sysfs_del();
    let data = c.inner.data.swap(null_mut(), Ordering::AcqRel);
    // SAFETY: initialised; with the data gone it queues itself no more.
    unsafe { kbindings::cancel_delayed_work_sync(c.inner.moves_tick.get()) };
    // SAFETY: the queues are ours. Queued MADs go out first, and the
    // members' agents then flush what is in flight; every CQ and QP is
    // gone, and with them their callbacks' work.
    unsafe {
        kbindings::destroy_workqueue(c.inner.gsi_wq.as_ptr());
        kbindings::destroy_workqueue(c.inner.cb_wq.as_ptr());
    }
    if !data.is_null() {
        {
            // SAFETY: the data is a `T::Data`, still owned by the device.
            let borrowed = unsafe { <T::Data as ForeignOwnable>::borrow(data) };
            // The members' MAD agents and REQ listeners.
            T::gsi_members(&borrowed).release_all();
        }
        // SAFETY: the device's reference, given by `OwnedDevice::new`; the
        // core destroyed every object first, so nothing borrows it any more.
        drop(unsafe { <T::Data as ForeignOwnable>::from_foreign(data) });
    }
    // The members still attached (the core unregistered the device on its
    // own, `rdma link del`): their registration references go last, after
    // every object made on them, so their own unregistration can finish.
    let held = c.inner.objects.lock().take_all();
    drop(held);
}

/// The objects lock, held.
pub(super) type ObjectsLockGuard<'a> = Guard<'a, MemberSlots, MutexBackend>;
