// SPDX-License-Identifier: GPL-2.0
/*
 * The module's registrations that 6.12's kernel crate has no Rust API for:
 * the RDMA core's ib_client and event handlers, the netdev notifier chain,
 * rdma_link_ops and the workqueue that runs Rust's evaluation and
 * utilisation sampling; plus readers of kernel state behind static inlines
 * (netdev, bonding, port state). Every event is handed to Rust, which
 * decides; nothing here chooses a member or a state.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/workqueue.h>
#include <net/bonding.h>
#include <net/genetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "rdma_mrbond_glue.h"
#include "mrbond_nl_gen.h"

/* The Rust registry; set once by mrbond_glue_init() before any callback. */
static void *mrbond_ctx;

/*
 * One ordered workqueue applies every state change, so that evaluations never
 * race; notifiers and event handlers only stamp the time and kick it.
 */
static struct workqueue_struct *mrbond_wq;
static struct delayed_work mrbond_eval_work;
static atomic64_t mrbond_event_ns;

static void mrbond_eval_fn(struct work_struct *work)
{
	u32 next_ms = mrbond_rs_evaluate(mrbond_ctx,
					 atomic64_xchg(&mrbond_event_ns, 0));

	if (next_ms)
		mod_delayed_work(mrbond_wq, &mrbond_eval_work,
				 msecs_to_jiffies(next_ms));
}

/* Members' transmit rates for WRR, sampled at the period Rust returns. */
static struct delayed_work mrbond_util_work;

static void mrbond_util_fn(struct work_struct *work)
{
	u32 next_ms = mrbond_rs_sample_utilisation(mrbond_ctx);

	queue_delayed_work(mrbond_wq, &mrbond_util_work,
			   msecs_to_jiffies(max(next_ms, 1U)));
}

static void mrbond_event(void)
{
	atomic64_cmpxchg(&mrbond_event_ns, 0, ktime_get_ns());
	mod_delayed_work(mrbond_wq, &mrbond_eval_work, 0);
}

void mrbond_glue_kick(void)
{
	mod_delayed_work(mrbond_wq, &mrbond_eval_work, 0);
}

u64 mrbond_glue_now_ns(void)
{
	return ktime_get_ns();
}

/* ---- ib_client: member devices appear and disappear ---- */

static struct ib_client mrbond_client;

/* A member's port events: its port state is read again by the evaluation. */
struct mrbond_member_events {
	struct ib_event_handler handler;
};

static void mrbond_member_event(struct ib_event_handler *handler,
				struct ib_event *event)
{
	switch (event->event) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_DEVICE_FATAL:
		/* GID_CHANGE comes with the GID table mutex held: only kick. */
		mrbond_event();
		break;
	default:
		break;
	}
}

/* The vdevs' ops table (rust/ffi/entry.rs). */
extern const struct ib_device_ops mrbond_rs_dev_ops;

/* True for ib_devices that are our vdevs (so they are never members). */
static bool mrbond_is_vdev(const struct ib_device *dev)
{
	return dev->ops.dealloc_driver == mrbond_rs_dev_ops.dealloc_driver;
}

static int mrbond_client_add(struct ib_device *dev)
{
	struct mrbond_member_events *ev;
	int err;

	/* Our own vdevs attach too: their .remove tears down sysfs in time. */
	if (mrbond_is_vdev(dev))
		return 0;
	err = mrbond_rs_ib_device_added(mrbond_ctx, dev);
	if (err)
		return err;
	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev) {
		mrbond_rs_ib_device_removed(mrbond_ctx, dev);
		return -ENOMEM;
	}
	INIT_IB_EVENT_HANDLER(&ev->handler, dev, mrbond_member_event);
	ib_register_event_handler(&ev->handler);
	ib_set_client_data(dev, &mrbond_client, ev);
	return 0;
}

static void mrbond_client_remove(struct ib_device *dev, void *client_data)
{
	struct mrbond_member_events *ev = client_data;

	if (mrbond_is_vdev(dev)) {
		mrbond_rs_vdev_unregistering(mrbond_ctx, dev);
		return;
	}
	if (ev) {
		/* Waits for a running handler. */
		ib_unregister_event_handler(&ev->handler);
		kfree(ev);
	}
	mrbond_rs_ib_device_removed(mrbond_ctx, dev);
	mrbond_event();
}

/*
 * Called with the core's device list locked: the Rust side only marks the
 * rename and kicks the ordered work, which follows it.
 */
static void mrbond_client_rename(struct ib_device *dev, void *client_data)
{
	if (!mrbond_is_vdev(dev))
		mrbond_rs_ib_device_renamed(mrbond_ctx, dev);
}

static struct ib_client mrbond_client = {
	.name = "rdma_mrbond",
	.add = mrbond_client_add,
	.remove = mrbond_client_remove,
	.rename = mrbond_client_rename,
};

/* ---- member ports' events: re-evaluate ---- */

static int mrbond_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UNREGISTER:
		mrbond_rs_netdev_unregister(mrbond_ctx, ndev->ifindex);
		fallthrough;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEUPPER:
	case NETDEV_CHANGELOWERSTATE:
	case NETDEV_BONDING_FAILOVER:
		mrbond_event();
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block mrbond_netdev_nb = {
	.notifier_call = mrbond_netdev_event,
};

void mrbond_glue_netdev_state(u32 ifindex, struct mrbond_netdev_state *st)
{
	struct net_device *ndev, *master;
	struct slave *slave;

	memset(st, 0, sizeof(*st));
	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	if (ndev) {
		st->exists = 1;
		st->running = netif_running(ndev);
		st->carrier = netif_carrier_ok(ndev);
		master = netdev_master_upper_dev_get_rcu(ndev);
		/* rx_handler_data is a struct slave only for bond slaves. */
		if (master && netif_is_bond_master(master) &&
		    netif_is_bond_slave(ndev)) {
			slave = bond_slave_get_rcu(ndev);
			if (slave) {
				st->bond_slave = 1;
				st->master_ifindex = master->ifindex;
				st->link_up = slave->link == BOND_LINK_UP ||
					      slave->link == BOND_LINK_FAIL;
				st->tx_enabled = !slave->backup;
			}
		}
	}
	rcu_read_unlock();
}

int mrbond_glue_bond_mode(u32 ifindex)
{
	struct net_device *ndev;
	int mode = -ENODEV;

	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	if (ndev) {
		mode = -ENOTTY;
		if (netif_is_bond_master(ndev))
			mode = READ_ONCE(((struct bonding *)netdev_priv(ndev))->params.mode);
	}
	rcu_read_unlock();
	return mode;
}

int mrbond_glue_bond_slaves(u32 ifindex, u32 *slaves, u32 max)
{
	struct net_device *ndev, *lower;
	struct list_head *iter;
	int count = 0;

	rtnl_lock();
	ndev = __dev_get_by_index(&init_net, ifindex);
	if (!ndev) {
		count = -ENODEV;
	} else if (!netif_is_bond_master(ndev)) {
		count = -ENOTTY;
	} else {
		netdev_for_each_lower_dev(ndev, lower, iter) {
			if (count >= max) {
				count = -E2BIG;
				break;
			}
			slaves[count++] = lower->ifindex;
		}
	}
	rtnl_unlock();
	return count;
}

bool mrbond_glue_netdev_tx_bytes(u32 ifindex, u64 *tx_bytes)
{
	struct rtnl_link_stats64 stats;
	struct net_device *ndev;

	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	if (ndev)
		dev_get_stats(ndev, &stats);
	rcu_read_unlock();
	if (!ndev)
		return false;
	*tx_bytes = stats.tx_bytes;
	return true;
}

u32 mrbond_glue_netdev_speed_mbps(u32 ifindex)
{
	struct ethtool_link_ksettings ks;
	struct net_device *ndev;
	u32 speed = 0;

	rtnl_lock();
	ndev = __dev_get_by_index(&init_net, ifindex);
	if (ndev && !__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN)
		speed = ks.base.speed;
	rtnl_unlock();
	return speed;
}

int mrbond_glue_netdev_name(u32 ifindex, char *name)
{
	struct net_device *ndev;
	int ret = -ENODEV;

	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	if (ndev) {
		strscpy(name, ndev->name, IFNAMSIZ);
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

/* ---- `rdma link add NAME type mrbond netdev NETDEV` ---- */

static int mrbond_newlink(const char *ibdev_name, struct net_device *ndev)
{
	/*
	 * The core found ndev in the caller's namespace; bonds and their
	 * members are init_net objects, resolved there by ifindex.
	 */
	if (!net_eq(dev_net(ndev), &init_net)) {
		pr_warn("rdma link add %s: %s is not in the initial network namespace, where rdma_mrbond bonds live\n",
			ibdev_name, ndev->name);
		return -EOPNOTSUPP;
	}
	return mrbond_rs_link_new(mrbond_ctx, ibdev_name, ndev->ifindex);
}

static struct rdma_link_ops mrbond_link_ops = {
	.type = "mrbond",
	.newlink = mrbond_newlink,
};

/* ---- module wiring ---- */

int mrbond_glue_init(void *ctx)
{
	int err;

	mrbond_ctx = ctx;
	mrbond_netlink_set_ctx(ctx);
	mrbond_wq = alloc_ordered_workqueue("rdma_mrbond", 0);
	if (!mrbond_wq)
		return -ENOMEM;
	INIT_DELAYED_WORK(&mrbond_eval_work, mrbond_eval_fn);
	INIT_DELAYED_WORK(&mrbond_util_work, mrbond_util_fn);

	err = ib_register_client(&mrbond_client);
	if (err)
		goto err_wq;
	err = register_netdevice_notifier(&mrbond_netdev_nb);
	if (err)
		goto err_client;
	err = genl_register_family(&rdma_mrbond_nl_family);
	if (err)
		goto err_notifier;
	rdma_link_register(&mrbond_link_ops);
	queue_delayed_work(mrbond_wq, &mrbond_util_work, 0);
	return 0;

err_notifier:
	unregister_netdevice_notifier(&mrbond_netdev_nb);
err_client:
	ib_unregister_client(&mrbond_client);
err_wq:
	cancel_delayed_work_sync(&mrbond_eval_work);
	destroy_workqueue(mrbond_wq);
	return err;
}

void mrbond_glue_stop(void)
{
	rdma_link_unregister(&mrbond_link_ops);
	genl_unregister_family(&rdma_mrbond_nl_family);
}

void mrbond_glue_exit(void)
{
	/*
	 * After the bonds are gone: unregistering replays NETDEV_UNREGISTER
	 * for every netdev, which would otherwise unbind live vdev ports.
	 */
	unregister_netdevice_notifier(&mrbond_netdev_nb);
	ib_unregister_client(&mrbond_client);
	/* Both may have kicked the work once more. */
	cancel_delayed_work_sync(&mrbond_eval_work);
	cancel_delayed_work_sync(&mrbond_util_work);
	destroy_workqueue(mrbond_wq);
}

MODULE_ALIAS_RDMA_LINK("mrbond");
MODULE_VERSION(MRBOND_VERSION);
