// SPDX-License-Identifier: GPL-2.0
/*
 * Address vectors of the vdev's RC QPs (the QPs are Rust's: rust/rdma/qp.rs)
 * and of the GSI proxy's sends, translated onto a member: by GID value onto
 * the member's own GID table, with the destination MAC resolved again on
 * another rail than the vdev port's.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_knobs.h"
#include "rdma_mrbond_verbs_priv.h"

/*
 * The member's view of an address vector: the same source GID value on the
 * member's port (a rail member has the service address on its own rail);
 * on another rail than the vdev port's, the destination MAC resolved again
 * on the member's rail. Returns the member GID entry, held, for the caller
 * to put after use. Under objs_lock, which the neighbour resolution drops
 * for its up to one second (holding the member device): the caller checks
 * again whatever it read under the lock before.
 */
struct mrbond_resolve {
	struct completion done;
	int status;
};

static void mrbond_resolve_done(int status, struct sockaddr *src,
				struct rdma_dev_addr *addr, void *ctx)
{
	struct mrbond_resolve *r = ctx;

	r->status = status;
	complete(&r->done);
}

/*
 * The peer's MAC on the rail of mgid (the core's own lookup for kernel
 * callers, rdma_addr_find_l2_eth_by_grh(), is not exported). Sleeps up to
 * a second.
 */
static int mrbond_rail_dmac(const struct ib_gid_attr *mgid,
			    const union ib_gid *dgid, u8 *dmac)
{
	struct rdma_dev_addr dev_addr = {
		.net = &init_net,
		.sgid_attr = mgid,
	};
	union {
		struct sockaddr_in sin;
		struct sockaddr_in6 sin6;
	} src, dst;
	struct mrbond_resolve r;
	int ret;

	rdma_gid2ip((struct sockaddr *)&src, &mgid->gid);
	rdma_gid2ip((struct sockaddr *)&dst, dgid);
	init_completion(&r.done);
	ret = rdma_resolve_ip((struct sockaddr *)&src, (struct sockaddr *)&dst,
			      &dev_addr, 1000, mrbond_resolve_done, true, &r);
	if (ret)
		return ret;
	wait_for_completion(&r.done);
	if (r.status)
		return r.status;
	memcpy(dmac, dev_addr.dst_dev_addr, ETH_ALEN);
	return 0;
}

const struct ib_gid_attr *mrbond_member_av(struct mrbond_vdev *v, int member,
					    const struct rdma_ah_attr *vav,
					    struct rdma_ah_attr *mav)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(vav);
	struct mrbond_member_slot *m = &v->member[member];
	const struct ib_gid_attr *vgid = grh->sgid_attr;
	const struct ib_gid_attr *mgid;
	struct net_device *vndev, *mndev;
	bool other_rail;
	int ret;

	if (!(rdma_ah_get_ah_flags(vav) & IB_AH_GRH) || !vgid)
		return ERR_PTR(-EINVAL);
	mgid = rdma_find_gid_by_port(m->dev, &vgid->gid, vgid->gid_type,
				     m->port, NULL);
	if (IS_ERR(mgid)) {
		pr_warn_ratelimited("%s: source %pI6 is not an address of member %s: give every rail the service address\n",
				    dev_name(&v->ibdev.dev), vgid->gid.raw,
				    dev_name(&m->dev->dev));
		return ERR_PTR(-ENETUNREACH);
	}

	*mav = *vav;
	rdma_ah_set_port_num(mav, m->port);
	/* The bond's ECN marking and default DSCP (rust/knobs). */
	mav->grh.traffic_class = mrbond_rs_qp_traffic_class(v->bond,
							    grh->traffic_class);
	mav->grh.sgid_index = mgid->index;
	mav->grh.sgid_attr = mgid;

	rcu_read_lock();
	vndev = rdma_read_gid_attr_ndev_rcu(vgid);
	mndev = rdma_read_gid_attr_ndev_rcu(mgid);
	other_rail = IS_ERR(vndev) || IS_ERR(mndev) || vndev != mndev;
	/*
	 * A QP talking to its own address: the core would answer with the
	 * MAC of the first netdev holding it, but the member (rxe) knows
	 * loopback by its own rail's MAC.
	 */
	if (other_rail && !IS_ERR(mndev) &&
	    !memcmp(grh->dgid.raw, mgid->gid.raw, sizeof(grh->dgid.raw))) {
		ether_addr_copy(mav->roce.dmac, mndev->dev_addr);
		other_rail = false;
	}
	rcu_read_unlock();
	if (other_rail) {
		struct ib_device *dev = m->dev;

		lockdep_assert_held(&v->objs_lock);
		if (!ib_device_try_get(dev)) {
			rdma_put_gid_attr(mgid);
			return ERR_PTR(-ENETDOWN);
		}
		mutex_unlock(&v->objs_lock);
		ret = mrbond_rail_dmac(mgid, &grh->dgid, mav->roce.dmac);
		if (ret)
			pr_warn_ratelimited("%s: no neighbour for %pI6 on the rail of member %s: %d\n",
					    dev_name(&v->ibdev.dev), grh->dgid.raw,
					    dev_name(&dev->dev), ret);
		mutex_lock(&v->objs_lock);
		ib_device_put(dev);
		if (!ret && m->dev != dev)
			ret = -ENETDOWN;	/* detached meanwhile */
		if (ret) {
			rdma_put_gid_attr(mgid);
			return ERR_PTR(ret);
		}
	}
	return mgid;
}

/* Called by rust/rdma/qp.rs: see rdma_mrbond_rdma_helpers.h. */
const struct ib_gid_attr *
mrbond_rdma_vdev_member_av(struct ib_device *ibdev, u32 slot,
			   const struct rdma_ah_attr *vav,
			   struct rdma_ah_attr *mav)
{
	if (slot >= MRBOND_MAX_MEMBERS)
		return ERR_PTR(-EINVAL);
	return mrbond_member_av(mrbond_vdev_of(ibdev), slot, vav, mav);
}
