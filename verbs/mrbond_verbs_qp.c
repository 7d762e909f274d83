// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs of the vdev. Each vdev QP is backed by one member QP on the
 * member Rust places it on (mrbond_rs_place_qp()). Its QPN is the member
 * QPN, since that is what the peer addresses; QPNs stay unique over the
 * vdev (members hand out the same sequences) and a destroyed one is kept
 * in quarantine (rust/vdev_qpns.rs, the periods in rust/policy/qpn.rs), or
 * ib_cm's stale-connection check would break unrelated connections. Address vectors are translated by GID value onto the
 * member's own GID table.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_knobs.h"
#include "rdma_mrbond_verbs_priv.h"

static void mrbond_member_qp_event(struct ib_event *mev, void *ctx)
{
	struct mrbond_qp *qp = ctx;
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = mev->event,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * A member QP whose QPN is free on the vdev. Members hand out the same
 * QPN sequence, so after any imbalance a member's next QPNs may all be
 * taken: colliding QPs are kept until a free QPN comes, so that the member
 * does not hand the same QPN back. A member can collide at most once per
 * QPN the vdev holds, which bounds the tries: creation never fails for
 * want of a QPN while the member can still create QPs.
 */
static struct ib_qp *mrbond_member_qp_create(struct mrbond_vdev *v,
					     struct mrbond_qp *qp,
					     struct ib_pd *mpd,
					     struct ib_qp_init_attr *minit)
{
	unsigned long tries = mrbond_rs_qpns_prune(v->bond) + 1, n = 0;
	struct ib_qp_init_attr attr;
	struct ib_qp *mqp = ERR_PTR(-EBUSY);
	struct ib_qp **taken;

	taken = kvmalloc_array(tries, sizeof(*taken), GFP_KERNEL);
	if (!taken)
		return ERR_PTR(-ENOMEM);
	while (n < tries) {
		attr = *minit;
		mqp = ib_create_qp(mpd, &attr);
		if (IS_ERR(mqp))
			break;
		if (!mrbond_rs_qpn_claim(v->bond, mqp->qp_num, qp)) {
			*minit = attr;
			break;
		}
		taken[n++] = mqp;
		mqp = ERR_PTR(-EBUSY);
	}
	while (n--)
		ib_destroy_qp(taken[n]);
	kvfree(taken);
	return mqp;
}

/* ib_mad's QP1 of a port: the GSI proxy, on no member. */
static int mrbond_create_gsi_qp(struct mrbond_vdev *v, struct mrbond_qp *qp,
				struct ib_qp_init_attr *init)
{
	spin_lock_init(&qp->lock);
	qp->member = -1;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->state = IB_QPS_RESET;
	qp->gsi_sq_size = init->cap.max_send_wr;
	return mrbond_gsi_create(v, qp, init);
}

int mrbond_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	struct ib_qp_init_attr minit;
	struct ib_device *dev;
	struct ib_pd *mpd;
	struct ib_cq *mscq, *mrcq;
	struct ib_qp *mqp;
	void *path;
	int member, ret;

	if (udata)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_GSI)
		return mrbond_create_gsi_qp(v, qp, init);
	/* UD waits for a use; SRQs are not offered (max_srq 0). */
	if (init->qp_type != IB_QPT_RC || init->srq || init->create_flags)
		return -EOPNOTSUPP;
	if (init->cap.max_send_sge > MRBOND_MAX_SGE ||
	    init->cap.max_recv_sge > MRBOND_MAX_SGE)
		return -EINVAL;

	/* rdma_create_qp() passes the port of the connection. */
	member = mrbond_rs_place_qp(v->bond, ibqp->pd,
				    init->port_num <= v->nports ? init->port_num : 0);
	if (member < 0)
		return member;
	if (member >= MRBOND_MAX_MEMBERS)
		return -EINVAL;

	qp->member = member;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;

	mutex_lock(&v->objs_lock);
	dev = v->member[member].dev;
	if (!dev) {
		ret = -ENETDOWN;
		goto err_unlock;
	}
	ret = mrbond_rs_pd_member(ibqp->pd, member, dev, &mpd);
	if (ret)
		goto err_unlock;
	mscq = mrbond_rs_cq_member(qp->scq, member, dev);
	mrcq = IS_ERR(mscq) ? mscq : mrbond_rs_cq_member(qp->rcq, member, dev);
	if (IS_ERR(mrcq)) {
		ret = PTR_ERR(mrcq);
		goto err_unlock;
	}

	minit = *init;
	/* init->port_num is the vdev's port; the member has its own. */
	minit.port_num = v->member[member].port;
	minit.send_cq = mscq;
	minit.recv_cq = mrcq;
	minit.qp_context = qp;
	minit.event_handler = mrbond_member_qp_event;
	/* rdma_rw contexts belong to the vdev QP, whose MRs are ours. */
	minit.cap.max_rdma_ctxs = 0;
	mqp = mrbond_member_qp_create(v, qp, mpd, &minit);
	if (IS_ERR(mqp)) {
		ret = PTR_ERR(mqp);
		goto err_unlock;
	}
	path = mrbond_rs_qp_path_new(v->bond, ibqp, qp->scq, qp->rcq, member,
				     mqp, mpd->local_dma_lkey,
				     minit.cap.max_send_wr,
				     minit.cap.max_recv_wr);
	if (IS_ERR(path)) {
		ret = PTR_ERR(path);
		goto err_qp;
	}

	init->cap = minit.cap;
	init->cap.max_rdma_ctxs = 0;
	qp->path = path;
	ibqp->qp_num = mqp->qp_num;
	mrbond_rs_pd_note_qp(ibqp->pd, member);
	mrbond_rs_member_qps_add(v->bond, member, 1);
	mutex_unlock(&v->objs_lock);
	return 0;

err_qp:
	mrbond_rs_qpn_release(v->bond, mqp->qp_num);
	ib_destroy_qp(mqp);
err_unlock:
	mutex_unlock(&v->objs_lock);
	return ret;
}

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

int mrbond_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_udata *udata)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	const struct ib_gid_attr *mgid = NULL;
	struct ib_qp_attr *mattr;
	struct ib_qp *mqp;
	int ret;

	if (udata)
		return -EOPNOTSUPP;
	if (attr_mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;

	mutex_lock(&v->objs_lock);
	if (qp->gsi_port) {
		/* QP1 has no wire state: it follows ib_mad's transitions. */
		if (attr_mask & IB_QP_STATE)
			qp->state = attr->qp_state;
		ret = 0;
		goto out_unlock;
	}
	mqp = mrbond_rs_qp_member_qp(qp->path);
	if (!mqp) {
		/* The member is gone; only the way out is open. */
		ret = -ENETDOWN;
		if ((attr_mask & IB_QP_STATE) &&
		    (attr->qp_state == IB_QPS_ERR ||
		     attr->qp_state == IB_QPS_RESET)) {
			mrbond_rs_qp_set_state(qp->path, attr->qp_state);
			ret = 0;
		}
		goto out_unlock;
	}

	mattr = kmemdup(attr, sizeof(*attr), GFP_KERNEL);
	if (!mattr) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (attr_mask & IB_QP_PORT) {
		if (attr->port_num < 1 || attr->port_num > v->nports) {
			ret = -EINVAL;
			goto out_free;
		}
		qp->vport = attr->port_num;
		mattr->port_num = v->member[qp->member].port;
	}
	if (attr_mask & IB_QP_AV) {
		mgid = mrbond_member_av(v, qp->member, &attr->ah_attr,
					&mattr->ah_attr);
		if (IS_ERR(mgid)) {
			ret = PTR_ERR(mgid);
			mgid = NULL;
			goto out_free;
		}
		qp->vport = rdma_ah_get_port_num(&attr->ah_attr);
		/* objs_lock may have been dropped: is the member QP still there? */
		if (mrbond_rs_qp_member_qp(qp->path) != mqp) {
			ret = -ENETDOWN;
			goto out_free;
		}
	}
	ret = ib_modify_qp(mqp, mattr, attr_mask);
	if (!ret && (attr_mask & IB_QP_STATE))
		mrbond_rs_qp_set_state(qp->path, attr->qp_state);
out_free:
	if (mgid)
		rdma_put_gid_attr(mgid);
	kfree(mattr);
out_unlock:
	mutex_unlock(&v->objs_lock);
	return ret;
}

int mrbond_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		    struct ib_qp_init_attr *init)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	struct ib_qp *mqp;
	int ret = 0;

	mutex_lock(&v->objs_lock);
	mqp = qp->path ? mrbond_rs_qp_member_qp(qp->path) : NULL;
	if (mqp) {
		ret = ib_query_qp(mqp, attr, attr_mask, init);
	} else {
		memset(attr, 0, sizeof(*attr));
		memset(init, 0, sizeof(*init));
		attr->qp_state = qp->path ? mrbond_rs_qp_state(qp->path) :
			qp->state;
		attr->cur_qp_state = attr->qp_state;
	}
	mutex_unlock(&v->objs_lock);
	if (ret)
		return ret;
	/* The vdev's view: its port, its CQs, the ULP's context. */
	attr->port_num = qp->vport;
	rdma_ah_set_port_num(&attr->ah_attr, qp->vport);
	attr->ah_attr.grh.sgid_attr = NULL;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->qp_context = ibqp->qp_context;
	init->event_handler = NULL;
	init->qp_type = ibqp->qp_type;
	init->cap.max_rdma_ctxs = 0;
	return 0;
}

int mrbond_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	struct ib_qp *mqp;

	mutex_lock(&v->objs_lock);
	if (qp->gsi_port) {
		mrbond_gsi_destroy(v, qp);
		mutex_unlock(&v->objs_lock);
		return 0;
	}
	/*
	 * No poll translates a completion of the QP after this, nor returns
	 * one the vdev synthesised for it: members may still hold CQEs of a
	 * destroyed QP (rxe does not purge them).
	 */
	mqp = mrbond_rs_qp_path_free(v->bond, qp->path);
	qp->path = NULL;
	if (mqp) {
		ib_destroy_qp(mqp);
		mrbond_rs_member_qps_add(v->bond, qp->member, -1);
	}
	mrbond_rs_qpn_quarantine(v->bond, ibqp->qp_num, qp->cm_aborted);
	mutex_unlock(&v->objs_lock);
	return 0;
}

/*
 * Posts: QP1's MADs go to the GSI proxy, an RC QP's WRs to its data path
 * (Rust's).
 */
int mrbond_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	int ret = 0;

	if (!qp->gsi_port)
		return mrbond_rs_qp_post_send(v->bond, qp->path, wr, bad_wr);
	for (; wr && !ret; wr = wr->next) {
		ret = mrbond_gsi_post_send(v, qp, wr);
		if (ret)
			*bad_wr = wr;
	}
	return ret;
}

int mrbond_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	unsigned long flags;
	int ret = 0;

	if (!qp->gsi_port)
		return mrbond_rs_qp_post_recv(v->bond, qp->path, wr, bad_wr);
	spin_lock_irqsave(&qp->lock, flags);
	for (; wr && !ret; wr = wr->next) {
		ret = mrbond_gsi_post_recv(qp, wr);
		if (ret)
			*bad_wr = wr;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}
