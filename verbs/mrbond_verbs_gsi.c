// SPDX-License-Identifier: GPL-2.0
/*
 * The vdev's QP1 (GSI), which carries the connection manager's MADs. It has
 * no wire of its own, so it is a proxy:
 *
 *  - Send: ib_mad posts a MAD on the vdev QP1; a work item sends a copy
 *    through a send-only MAD agent on a member, then completes the vdev WR
 *    with the member's status. The member is the one hosting the QP that a
 *    CM REQ or REP speaks for (its local QPN): the peer's REQ then arrives
 *    on the rail of that QP, and the passive side puts its QP there. Other
 *    MADs go out on the member Rust names for the port.
 *  - Receive: replies (REP, RTU, DREQ, ...) need nothing: ib_cm matches them
 *    by communication ID in global tables, whichever device got them. A REQ
 *    is matched by (device, service ID) on the member that got it, so every
 *    member listens on the service IDs of cm_ports with a handler that
 *    copies the REQ into the vdev QP1 of that member's port as a received
 *    MAD, and returns -ENOMEM, which makes ib_cm drop its own copy without
 *    a REJ. The vdev's ib_cm and rdma_cm then accept it on the vdev.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/ip.h>
#include <net/sch_generic.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_mad.h>
#include <rdma/ibta_vol1_c12.h>
#include <rdma/rdma_cm.h>

#include "rdma_mrbond_inject.h"
#include "rdma_mrbond_verbs_priv.h"

static ushort cm_ports[MRBOND_CM_PORTS_MAX] = { 4420 };
static int cm_ports_count = 1;
module_param_array(cm_ports, ushort, &cm_ports_count, 0444);
MODULE_PARM_DESC(cm_ports,
		 "TCP ports of rdma_cm listeners on bonds: connection requests for them are taken from the members (default: 4420, NVMe-oF)");

/* Where rdma_cm puts a listener on TCP port (rdma_get_service_id()). */
static __be64 mrbond_service_id(u16 port)
{
	return cpu_to_be64(((u64)RDMA_PS_TCP << 16) + port);
}

/* ib_cm hands its handler the private data of the REQ MAD it got. */
#define MRBOND_REQ_PDATA_OFFSET	(140 + sizeof(struct ib_mad_hdr))

struct mrbond_gsi_job {
	struct work_struct work;
	struct mrbond_vdev *v;
	u32 port;		/* the vdev port of the QP1 */
	u64 wr_id;
	struct rdma_ah_attr ah;	/* the vdev AH's, alive until completion */
	u32 remote_qpn;
	u16 pkey_index;
	u32 len;
	u8 mad[IB_MGMT_MAD_SIZE];
};

static void mrbond_gsi_send_done(struct mrbond_gsi_job *job,
				 enum ib_wc_status status)
{
	mrbond_rs_gsi_send_done(job->v->bond, job->port, job->wr_id, status);
	kfree(job);
}

/* The member agent sent it (or gave up): so has the vdev QP1. */
static void mrbond_gsi_sent(struct ib_mad_agent *agent,
			    struct ib_mad_send_wc *mwc)
{
	struct ib_mad_send_buf *msg = mwc->send_buf;
	struct mrbond_gsi_job *job = msg->context[0];

	/*
	 * A failed UD send on a member's QP1 is worth a line: rxe (6.12)
	 * then leaves that QP1 in ERR, and the port takes no MAD again until
	 * the device is re-created.
	 */
	if (mwc->status != IB_WC_SUCCESS)
		pr_warn_ratelimited("%s: member %s: QP1 send failed: %s\n",
				    dev_name(&job->v->ibdev.dev),
				    dev_name(&agent->device->dev),
				    ib_wc_status_msg(mwc->status));
	rdma_destroy_ah(msg->ah, 0);
	ib_free_send_mad(msg);
	mrbond_gsi_send_done(job, mwc->status);
}

static bool mrbond_gsi_dev_can_xmit(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev) &&
	       !qdisc_tx_is_noop(dev);
}

/*
 * Whether a MAD from source GID mgid can leave through member m. rxe (6.12)
 * moves QP1 to ERR for good when the IP stack refuses one of its packets,
 * and the port then takes no CM MAD again: a noop qdisc refuses every
 * packet, and a device has one from the moment its carrier drops until it
 * is activated again after the carrier is back. The port state and the
 * carrier bits lead or lag that by linkwatch runs (a VLAN's run follows its
 * real device's), so the qdiscs of the device the packet leaves by (the
 * GID's) and of its real device are read. ib_cm retries a MAD refused here.
 */
static bool mrbond_gsi_can_send(const struct mrbond_member_slot *m,
				const struct ib_gid_attr *mgid)
{
	enum ib_port_state pstate;
	struct net_device *ndev;
	bool up = false;

	if (ib_get_cached_port_state(m->dev, m->port, &pstate) ||
	    pstate != IB_PORT_ACTIVE)
		return false;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(mgid);
	if (!IS_ERR(ndev)) {
		up = mrbond_gsi_dev_can_xmit(ndev);
		if (up && is_vlan_dev(ndev))
			up = mrbond_gsi_dev_can_xmit(vlan_dev_real_dev(ndev));
	}
	rcu_read_unlock();
	return up;
}

static void mrbond_gsi_send_work(struct work_struct *work)
{
	struct mrbond_gsi_job *job = container_of(work, struct mrbond_gsi_job,
						  work);
	struct mrbond_vdev *v = job->v;
	const struct ib_mad_hdr *hdr = (const void *)job->mad;
	const struct ib_gid_attr *mgid;
	struct ib_mad_send_buf *msg;
	struct rdma_ah_attr mav;
	struct ib_mad_agent *agent;
	struct ib_ah *mah;
	int member, cm_member, ret;

	if (hdr->mgmt_class == IB_MGMT_CLASS_CM &&
	    hdr->attr_id == CM_REQ_ATTR_ID)
		mrbond_inject(MRBOND_INJECT_GSI_REQ_OUT);
	/* Rust's choice first: it takes Rust locks, never under objs_lock. */
	member = mrbond_rs_gsi_member(v->bond, job->port);

	mutex_lock(&v->objs_lock);
	/* A REQ or REP goes out through the member of the QP it speaks for. */
	cm_member = mrbond_rs_gsi_note_cm(v->bond, job->mad, job->len,
					  job->port, &job->ah);
	if (cm_member >= 0)
		member = cm_member;
	ret = -ENETDOWN;
	if (member < 0 || member >= MRBOND_MAX_MEMBERS)
		goto fail;
	agent = v->member[member].mad_agent;
	if (!agent || !v->member[member].dev)
		goto fail;

	mgid = mrbond_rs_member_av(v->bond, &v->ibdev, member, &job->ah, &mav);
	if (IS_ERR(mgid)) {
		ret = PTR_ERR(mgid);
		goto fail;
	}
	/* objs_lock may have been dropped: is the agent still there? */
	if (v->member[member].mad_agent != agent ||
	    !mrbond_gsi_can_send(&v->member[member], mgid)) {
		rdma_put_gid_attr(mgid);
		ret = -ENETDOWN;
		goto fail;
	}
	mah = rdma_create_ah(agent->qp->pd, &mav, RDMA_CREATE_AH_SLEEPABLE);
	rdma_put_gid_attr(mgid);
	if (IS_ERR(mah)) {
		ret = PTR_ERR(mah);
		goto fail;
	}
	msg = ib_create_send_mad(agent, job->remote_qpn, job->pkey_index, 0,
				 IB_MGMT_MAD_HDR, job->len - IB_MGMT_MAD_HDR,
				 GFP_KERNEL, hdr->base_version);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		rdma_destroy_ah(mah, RDMA_DESTROY_AH_SLEEPABLE);
		goto fail;
	}
	memcpy(msg->mad, job->mad, job->len);
	msg->ah = mah;
	msg->context[0] = job;
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		ib_free_send_mad(msg);
		rdma_destroy_ah(mah, RDMA_DESTROY_AH_SLEEPABLE);
		goto fail;
	}
	mutex_unlock(&v->objs_lock);
	return;

fail:
	mutex_unlock(&v->objs_lock);
	pr_warn_ratelimited("%s: MAD class %#x attr %#x not sent: %d\n",
			    dev_name(&v->ibdev.dev), hdr->mgmt_class,
			    be16_to_cpu(hdr->attr_id), ret);
	mrbond_gsi_send_done(job, IB_WC_GENERAL_ERR);
}

/* Called by rust/rdma/gsi.rs: see rdma_mrbond_rdma_helpers.h. */
int mrbond_rdma_vdev_gsi_send(struct ib_device *ibdev, u32 port,
			      const struct ib_send_wr *wr)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibdev);
	const struct ib_ud_wr *ud = ud_wr(wr);
	struct mrbond_gsi_job *job;
	const struct ib_sge *sge;
	int i;

	if (wr->opcode != IB_WR_SEND || !ud->ah || wr->num_sge < 1 ||
	    wr->num_sge > 2)
		return -EINVAL;
	job = kzalloc(sizeof(*job), GFP_ATOMIC);
	if (!job)
		return -ENOMEM;
	for (i = 0; i < wr->num_sge; i++) {
		sge = &wr->sg_list[i];
		if (sge->length > sizeof(job->mad) - job->len) {
			kfree(job);
			return -EINVAL;
		}
		/* Virtual DMA: the address is the kernel's own. */
		memcpy(job->mad + job->len, (void *)(uintptr_t)sge->addr,
		       sge->length);
		job->len += sge->length;
	}
	if (job->len < IB_MGMT_MAD_HDR) {
		kfree(job);
		return -EINVAL;
	}
	job->v = v;
	job->port = port;
	job->wr_id = wr->wr_id;
	job->ah = *mrbond_rs_ah_attr(ud->ah);
	job->remote_qpn = ud->remote_qpn;
	job->pkey_index = ud->pkey_index;
	INIT_WORK(&job->work, mrbond_gsi_send_work);
	queue_work(v->gsi_wq, &job->work);
	return 0;
}

/*
 * A CM MAD as received on vdev port's QP1, from theirs to ours, tagged with
 * ours's VLAN (ib_cm matches a REQ's source GID by it): rust/rdma/gsi.rs.
 */
static void mrbond_gsi_deliver(struct mrbond_vdev *v, u32 port,
			       const void *mad, const union ib_gid *theirs,
			       const union ib_gid *ours, u16 vlan)
{
	if (!mrbond_rs_gsi_deliver(v->bond, port, mad, theirs->raw, ours->raw,
				   vlan))
		pr_warn_ratelimited("%s: CM MAD %#x dropped: no QP1 receive buffer on port %u\n",
				    dev_name(&v->ibdev.dev),
				    be16_to_cpu(((const struct ib_mad_hdr *)mad)->attr_id),
				    port);
}

/* A REQ a member received: a receive on its port's vdev QP1. */
static void mrbond_gsi_inject(struct mrbond_vdev *v, u32 member,
			      struct cm_req_msg *req)
{
	const union ib_gid *theirs, *ours;
	u32 port;
	u16 vlan;

	/* Rail: one port per member. Active-backup: the only port. */
	port = v->nports == 1 ? 1 : member + 1;
	theirs = IBA_GET_MEM_PTR(CM_REQ_PRIMARY_LOCAL_PORT_GID, req);
	ours = IBA_GET_MEM_PTR(CM_REQ_PRIMARY_REMOTE_PORT_GID, req);
	if (mrbond_rdma_gid_vlan(&v->ibdev, port, ours->raw, &vlan)) {
		pr_warn_ratelimited("%s: REQ for %pI6 on port %u, which does not have it\n",
				    dev_name(&v->ibdev.dev), ours->raw, port);
		return;
	}
	mrbond_gsi_deliver(v, port, req, theirs, ours, vlan);
}

/*
 * ib_cm's handler of the REQs a member received for cm_ports: hand the REQ
 * to the vdev, and -ENOMEM so that ib_cm forgets its copy without a REJ.
 */
static int mrbond_gsi_member_req(struct ib_cm_id *cm_id,
				 const struct ib_cm_event *event)
{
	struct mrbond_member_slot *m = cm_id->context;

	if (event->event != IB_CM_REQ_RECEIVED || !event->private_data)
		return 0;
	/* Test builds: hold the REQ, so that the peer waits for a REP. */
	mrbond_inject(MRBOND_INJECT_CM_REQ_IN);
	/* ib_cm's own receive buffer, read only. */
	mrbond_gsi_inject(m->v, m->index,
			  (void *)event->private_data - MRBOND_REQ_PDATA_OFFSET);
	return -ENOMEM;
}

/* The member joined: its send agent and its REQ listeners. Under objs_lock. */
void mrbond_gsi_member_attach(struct mrbond_vdev *v, u32 slot)
{
	struct mrbond_member_slot *m = &v->member[slot];
	struct ib_mad_agent *agent;
	struct ib_cm_id *id;
	int i, ret;

	lockdep_assert_held(&v->objs_lock);
	agent = ib_register_mad_agent(m->dev, m->port, IB_QPT_GSI, NULL, 0,
				      mrbond_gsi_sent, NULL, m, 0);
	if (IS_ERR(agent)) {
		pr_warn("%s: no MAD agent on %s (%ld): connections cannot use it\n",
			dev_name(&v->ibdev.dev), dev_name(&m->dev->dev),
			PTR_ERR(agent));
		agent = NULL;
	}
	m->mad_agent = agent;
	for (i = 0; i < cm_ports_count && i < MRBOND_CM_PORTS_MAX; i++) {
		/*
		 * The context is set before the listen: a REQ may arrive the
		 * moment it is live (peers reconnect as members rejoin). A
		 * listener of our own: ib_cm_insert_listen() would share one
		 * between bonds and overwrite its context.
		 */
		id = ib_create_cm_id(m->dev, mrbond_gsi_member_req, m);
		if (IS_ERR(id)) {
			ret = PTR_ERR(id);
		} else {
			ret = ib_cm_listen(id, mrbond_service_id(cm_ports[i]));
			if (ret)
				ib_destroy_cm_id(id);
		}
		if (ret) {
			pr_warn("%s: cannot take REQs for port %u from %s (%d): a wildcard rdma_cm listener there?\n",
				dev_name(&v->ibdev.dev), cm_ports[i],
				dev_name(&m->dev->dev), ret);
			continue;
		}
		mrbond_inject(MRBOND_INJECT_CM_LISTEN);
		m->listen[i] = id;
	}
}

/* The member leaves, step one, under objs_lock. */
void mrbond_rdma_vdev_gsi_take(struct ib_device *ibdev, u32 slot,
			       struct mrbond_rdma_gsi_member *res)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibdev);
	struct mrbond_member_slot *m;
	int i;

	lockdep_assert_held(&v->objs_lock);
	memset(res, 0, sizeof(*res));
	if (slot >= MRBOND_MAX_MEMBERS)
		return;
	m = &v->member[slot];
	for (i = 0; i < MRBOND_CM_PORTS_MAX; i++) {
		res->listen[i] = m->listen[i];
		m->listen[i] = NULL;
	}
	res->mad_agent = m->mad_agent;
	m->mad_agent = NULL;
}

/*
 * Step two, without objs_lock: unregistering the agent flushes its port's
 * MAD workqueue, whose timeout work runs rdma_cm handlers that create CQs
 * and QPs on the vdev (objs_lock).
 */
void mrbond_rdma_gsi_release(struct mrbond_rdma_gsi_member *res)
{
	int i;

	for (i = 0; i < MRBOND_CM_PORTS_MAX; i++) {
		if (res->listen[i])
			ib_destroy_cm_id(res->listen[i]);
		res->listen[i] = NULL;
	}
	if (res->mad_agent)
		ib_unregister_mad_agent(res->mad_agent);
	res->mad_agent = NULL;
}
