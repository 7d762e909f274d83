// SPDX-License-Identifier: GPL-2.0
/*
 * What is left in C of the proxy behind the vdev's QP1 (GSI), which carries
 * the connection manager's MADs: the members' send agents and REQ
 * listeners. QP1 and its sends are Rust's (rust/rdma/gsi.rs, gsi_send.rs),
 * which send a copy of each MAD through one of these agents.
 *
 *  - Receive: replies (REP, RTU, DREQ, ...) need nothing: ib_cm matches them
 *    by communication ID in global tables, whichever device got them. A REQ
 *    is matched by (device, service ID) on the member that got it, so every
 *    member listens on the service IDs of cm_ports with a handler that
 *    copies the REQ into the vdev QP1 of that member's port as a received
 *    MAD, and returns -ENOMEM, which makes ib_cm drop its own copy without
 *    a REJ. The vdev's ib_cm and rdma_cm then accept it on the vdev.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
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

/* Called by rust/rdma/gsi_send.rs: see rdma_mrbond_rdma_helpers.h. */
struct ib_mad_agent *mrbond_rdma_vdev_member_agent(struct ib_device *ibdev,
						   u32 slot)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibdev);

	lockdep_assert_held(&v->objs_lock);
	if (slot >= MRBOND_MAX_MEMBERS || !v->member[slot].dev)
		return NULL;
	return v->member[slot].mad_agent;
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
	/* A drop (no receive buffer) is warned about there. */
	mrbond_rs_gsi_deliver(v->bond, port, req, theirs->raw, ours->raw, vlan);
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
				      mrbond_rs_gsi_sent, NULL, m, 0);
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
