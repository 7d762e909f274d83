// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual RoCE ib_device of a bond, as a container: allocation,
 * registration and teardown, port binding and the member slots. Every verb
 * is Rust's (rust/vdev_verbs.rs), and so are members coming and going
 * (rust/rdma/member.rs); this file keeps only .dealloc_driver.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/stddef.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev.h"
#include "rdma_mrbond_vdev_priv.h"

static struct mrbond_vdev *to_mrbond_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mrbond_vdev, ibdev);
}

/*
 * Adds the GIDs of the ports' netdevs after a binding changed on a
 * registered vdev (ib_device_set_netdev() triggers no rescan; mlx5 does the
 * same by hand). Deferred because the rescan takes RTNL, and the caller may
 * hold RTNL or locks that a netdev notifier takes. Adding a GID that is
 * present is a no-op, so every port is rescanned.
 */
static void mrbond_vdev_rescan_work(struct work_struct *work)
{
	struct mrbond_vdev *v = container_of(work, struct mrbond_vdev,
					     rescan_work);
	u32 port;

	for (port = 1; port <= v->nports; port++)
		rdma_roce_rescan_port(&v->ibdev, port);
	/* The registration reference that its queuer handed over. */
	ib_device_put(&v->ibdev);
}

void *mrbond_rdma_driver_data(struct ib_device *ibdev)
{
	return to_mrbond_vdev(ibdev)->bond;
}

void mrbond_rdma_vdev_queue_cb(struct ib_device *ibdev,
			       struct work_struct *work)
{
	queue_work(to_mrbond_vdev(ibdev)->cb_wq, work);
}

void mrbond_rdma_vdev_queue_gsi(struct ib_device *ibdev,
				struct work_struct *work)
{
	queue_work(to_mrbond_vdev(ibdev)->gsi_wq, work);
}

void mrbond_rdma_vdev_objs_lock(struct ib_device *ibdev)
{
	mutex_lock(&to_mrbond_vdev(ibdev)->objs_lock);
}

void mrbond_rdma_vdev_objs_unlock(struct ib_device *ibdev)
{
	mutex_unlock(&to_mrbond_vdev(ibdev)->objs_lock);
}

struct ib_device *mrbond_rdma_vdev_member(struct ib_device *ibdev, u32 slot,
					  u32 *port)
{
	struct mrbond_vdev *v = to_mrbond_vdev(ibdev);

	lockdep_assert_held(&v->objs_lock);
	if (slot >= MRBOND_MAX_MEMBERS)
		return NULL;
	*port = v->member[slot].port;
	return v->member[slot].dev;
}

int mrbond_rdma_vdev_set_member(struct ib_device *ibdev, u32 slot,
				struct ib_device *dev)
{
	struct mrbond_vdev *v = to_mrbond_vdev(ibdev);

	lockdep_assert_held(&v->objs_lock);
	if (slot >= MRBOND_MAX_MEMBERS)
		return -EINVAL;
	v->member[slot].dev = dev;
	v->member[slot].port = 1;
	return 0;
}

/*
 * The last op the core calls, from ib_dealloc_device(): `rdma link del`,
 * ib_unregister_device() or mrbond_vdev_free(). The container itself is
 * freed by the core at the last put_device().
 */
static void mrbond_dealloc_driver(struct ib_device *ibdev)
{
	struct mrbond_vdev *v = to_mrbond_vdev(ibdev);
	void *bond;

	/* Nothing is added from here on. */
	mutex_lock(&v->lock);
	bond = v->dead ? NULL : v->bond;
	v->dead = true;
	mutex_unlock(&v->lock);

	/*
	 * Not pending (it holds a registration reference, all dropped by
	 * now), but it may still be returning: wait, its code is ours.
	 */
	flush_work(&v->rescan_work);
	/*
	 * Our kobjects pin the device: drop them before its last put. Their
	 * running show/store still read v->bond: it goes only after them.
	 */
	mrbond_sysfs_del(v);
	mutex_lock(&v->lock);
	v->bond = NULL;
	mutex_unlock(&v->lock);
	/* Queued MADs go out first; the agents then flush what is in flight. */
	if (v->gsi_wq)
		destroy_workqueue(v->gsi_wq);
	/* Every CQ and QP is gone, and with them their callbacks' work. */
	if (v->cb_wq)
		destroy_workqueue(v->cb_wq);
	if (bond) {
		/* The members' MAD agents and REQ listeners. */
		mrbond_rs_gsi_release(bond);
		/* The core destroyed every object first: only quarantine is left. */
		mrbond_rs_vdev_release(bond);
	}
}

/*
 * The verbs still in C, set after Rust's table (mrbond_rs_dev_ops), whose
 * entries ib_set_device_ops() keeps: a verb moved to Rust leaves this table
 * in the same change.
 *
 * Without every one of the 17 ops that ib_device_check_mandatory() checks,
 * the device registers but kverbs_provider is false and no kernel ULP
 * (mad, cm, rdma_cm, nvme, ...) ever sees it.
 */
static const struct ib_device_ops mrbond_dev_ops = {
	.owner = THIS_MODULE,
	/* Never a real driver's id: those container_of our device. */
	.driver_id = RDMA_DRIVER_UNKNOWN,

	/*
	 * query_device, the port verbs, the counters, the PD verbs (with
	 * size_ib_pd), the MR verbs, the CQ verbs (with size_ib_cq), the AH
	 * verbs (with size_ib_ah) and the QP verbs (with size_ib_qp):
	 * mrbond_rs_dev_ops (rust/vdev_verbs.rs). No drain_sq/drain_rq: the
	 * core's drain (ERR, then a marker WR) is right, since a post to a QP
	 * in ERR always completes, flushed by the member or, once the member
	 * is gone, by the vdev.
	 */

	/* Required by `rdma link del` (ib_unregister_device_and_put). */
	.dealloc_driver = mrbond_dealloc_driver,

};

struct mrbond_vdev *mrbond_vdev_alloc(void *bond, u32 nports, u64 node_guid)
{
	struct mrbond_vdev *v;

	if (!nports || nports > MRBOND_MAX_PORTS)
		return NULL;

	v = ib_alloc_device(mrbond_vdev, ibdev);
	if (!v)
		return NULL;

	v->bond = bond;
	v->nports = nports;
	mutex_init(&v->lock);
	mutex_init(&v->objs_lock);
	v->ibdev.local_dma_lkey = MRBOND_RDMA_LOCAL_DMA_LKEY;
	v->gsi_wq = alloc_ordered_workqueue("mrbond_gsi", WQ_MEM_RECLAIM);
	v->cb_wq = alloc_ordered_workqueue("mrbond_cb", WQ_MEM_RECLAIM);
	if (!v->gsi_wq || !v->cb_wq) {
		/* Never registered: the core frees it, .dealloc_driver runs. */
		v->bond = NULL;
		v->dead = true;
		ib_dealloc_device(&v->ibdev);
		return NULL;
	}
	INIT_WORK(&v->rescan_work, mrbond_vdev_rescan_work);

	v->ibdev.node_type = RDMA_NODE_IB_CA;
	/* Before any ib_device_set_netdev(): it sizes port_data from it. */
	v->ibdev.phys_port_cnt = nports;
	v->ibdev.num_comp_vectors = 1;
	v->ibdev.node_guid = cpu_to_be64(node_guid);
	strscpy(v->ibdev.node_desc, "mrbond", sizeof(v->ibdev.node_desc));
	ib_set_device_ops(&v->ibdev, &mrbond_rs_dev_ops);
	ib_set_device_ops(&v->ibdev, &mrbond_dev_ops);
	return v;
}

/*
 * Neither binding nor unbinding takes RTNL or sleeps on anything a netdev
 * notifier holds: both may be called from a notifier (ib_device_set_netdev()
 * and the GID-table mutex allow that) or with Rust locks held.
 */
static int mrbond_vdev_unbind(struct mrbond_vdev *v, u32 port)
{
	struct ib_device *ibdev = &v->ibdev;
	struct net_device *old = NULL;
	bool live;
	int ret;

	/* A registration reference: the GID table stays while we use it. */
	live = ib_device_try_get(ibdev);
	if (live)
		old = ib_device_get_netdev(ibdev, port);

	/* Valid in any state, even after .dealloc_driver. */
	ret = ib_device_set_netdev(ibdev, NULL, port);

	if (live) {
		/* The core drops them on NETDEV_UNREGISTER, not on unbind. */
		if (!ret && old)
			roce_del_all_netdev_gids(ibdev, port, old);
		ib_device_put(ibdev);
	}
	dev_put(old);
	return ret;
}

static int mrbond_vdev_bind(struct mrbond_vdev *v, u32 port,
			    struct net_device *ndev)
{
	struct ib_device *ibdev = &v->ibdev;
	struct net_device *old = NULL;
	bool live;
	int ret;

	/*
	 * No binding may slip in after .dealloc_driver: its netdev hold would
	 * last until our final put_device() and block the netdev's
	 * unregistration meanwhile. One made before .dealloc_driver is
	 * dropped by ib_dealloc_device(), which runs it first.
	 */
	mutex_lock(&v->lock);
	if (v->dead) {
		mutex_unlock(&v->lock);
		return -ENODEV;
	}
	/* Registered: the GIDs must follow (unregistered: registration scans). */
	live = ib_device_try_get(ibdev);
	if (live)
		old = ib_device_get_netdev(ibdev, port);
	/* It takes its own hold on ndev. */
	ret = ib_device_set_netdev(ibdev, ndev, port);
	mutex_unlock(&v->lock);

	if (live && !ret && old != ndev) {
		if (old)
			roce_del_all_netdev_gids(ibdev, port, old);
		/* The work inherits our registration reference... */
		if (queue_work(system_wq, &v->rescan_work))
			live = false;
		/* ...unless one is pending: it runs after our binding. */
	}
	if (live)
		ib_device_put(ibdev);
	dev_put(old);
	return ret;
}

int mrbond_vdev_set_port_netdev(struct mrbond_vdev *v, u32 port, int ifindex)
{
	struct net_device *ndev;
	int ret;

	if (port < 1 || port > v->nports || ifindex < 0)
		return -EINVAL;
	if (!ifindex)
		return mrbond_vdev_unbind(v, port);

	ndev = dev_get_by_index(&init_net, ifindex);
	if (!ndev)
		return -ENODEV;
	ret = mrbond_vdev_bind(v, port, ndev);
	dev_put(ndev);
	return ret;
}

int mrbond_vdev_register(struct mrbond_vdev *v, const char *name,
			 bool user_named)
{
	int ret;

	if (WARN_ON_ONCE(v->registered))
		return -EBUSY;

	if (user_named)
		ib_mark_name_assigned_by_user(&v->ibdev);

	/*
	 * Our handle's reference, taken first: with IBK_ALLOW_USER_UNREG a
	 * racing `rdma link del` may unregister and dealloc the device even
	 * before ib_register_device() returns; the memory must outlive that
	 * until mrbond_vdev_unregister().
	 */
	get_device(&v->ibdev.dev);
	ret = ib_register_device(&v->ibdev, name, NULL);
	if (ret) {
		/* The caller's mrbond_vdev_free() does the rest. */
		put_device(&v->ibdev.dev);
		return ret;
	}
	v->registered = true;
	return 0;
}

void mrbond_vdev_free(struct mrbond_vdev *v)
{
	if (WARN_ON_ONCE(v->registered)) {
		mrbond_vdev_unregister(v);
		return;
	}
	/* Runs .dealloc_driver (bond release) and drops the netdev holds. */
	ib_dealloc_device(&v->ibdev);
}

void mrbond_vdev_unregister(struct mrbond_vdev *v)
{
	if (WARN_ON_ONCE(!v->registered)) {
		mrbond_vdev_free(v);
		return;
	}
	/*
	 * A no-op if `rdma link del` got there first (refcount already 0);
	 * otherwise it ends in .dealloc_driver. Concurrent calls are fenced
	 * by the core's unregistration_lock.
	 */
	ib_unregister_device(&v->ibdev);
	put_device(&v->ibdev.dev);
}

/*
 * From our ib_client .remove of this vdev while the core unregisters it on
 * its own (`rdma link del`): it holds the unregistration lock there, so
 * mrbond_vdev_unregister() would deadlock. The core's unregistration holds
 * its own device reference and ends in .dealloc_driver (bond release); this
 * only drops the reference of the module's handle.
 */
void mrbond_vdev_put(struct mrbond_vdev *v)
{
	if (WARN_ON_ONCE(!v->registered)) {
		mrbond_vdev_free(v);
		return;
	}
	v->registered = false;
	put_device(&v->ibdev.dev);
}

void mrbond_vdev_hold(struct mrbond_vdev *v)
{
	get_device(&v->ibdev.dev);
}

void mrbond_vdev_unhold(struct mrbond_vdev *v)
{
	put_device(&v->ibdev.dev);
}

const char *mrbond_vdev_name(const struct mrbond_vdev *v)
{
	/* No name before registration: Rust gets a C string, never NULL. */
	return dev_name(&v->ibdev.dev) ?: "";
}

u32 mrbond_vdev_index(const struct mrbond_vdev *v)
{
	return v->ibdev.index;
}

bool mrbond_is_vdev(const struct ib_device *dev)
{
	/* Every vdev has it; no other device has a verb of this module. */
	return dev->ops.query_device == mrbond_rs_dev_ops.query_device;
}

struct mrbond_vdev *mrbond_vdev_from_ibdev(struct ib_device *dev)
{
	return mrbond_is_vdev(dev) ? to_mrbond_vdev(dev) : NULL;
}

void mrbond_vdev_port_event(struct mrbond_vdev *v, u32 port, bool active)
{
	struct ib_event ev = {
		.device = &v->ibdev,
		.element.port_num = port,
		.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	if (WARN_ON_ONCE(port < 1 || port > v->nports))
		return;

	/*
	 * The queued work holds no device reference: dispatch only while
	 * registered, so ib_cache_cleanup_one()'s flush of ib_wq covers it.
	 * Unregistered, there is no cache to update nor anyone to notify.
	 */
	if (!ib_device_try_get(&v->ibdev))
		return;
	ib_dispatch_event(&ev);
	ib_device_put(&v->ibdev);
}
