/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the verbs proxy (verbs/mrbond_verbs_*.c): the vdev objects and
 * the member objects behind them.
 *
 * The vdev's objects are Rust's (rust/rdma/): PDs, MRs, CQs, AHs and QPs. An
 * RC QP lives on the member Rust places it on, with its data path
 * (rust/rdma/qp_path.rs); QP1 is the GSI proxy here, whose CM MADs go out
 * through the member of the QP they speak for, other MADs through the
 * member Rust names (mrbond_rs_gsi_member()), with their AVs made the
 * member's by Rust (mrbond_rs_member_av()). What stays here: the GSI proxy
 * and the member slots it uses; members are attached, failed and detached
 * by Rust (rust/rdma/member.rs) under objs_lock.
 *
 * Locks, outermost first:
 *  - mrbond_vdev.objs_lock (mutex "mrbond:vdev-objects"): member objects
 *    are created and destroyed under it, and members attached and
 *    detached. Rust's QP verbs take it (mrbond_rdma_vdev_objs_lock()),
 *    after their placement. Inside it: the MR table's lock ("mrbond:mrs"),
 *    the PDs' ("mrbond:pds", "mrbond:pd"), the CQs' ("mrbond:cqs"), the
 *    QPNs' ("mrbond:qpns"), the QP set's ("mrbond:qps", whose walks end
 *    connection exchanges through the GSI proxy) and the QP data paths'
 *    (below); never the bond's own locks.
 *  - a vdev CQ's "mrbond:cq-poll" (Rust, spinlock, IRQs off): polling its
 *    member CQs, and replacing them. A poll translates a completion under
 *    it, taking the QP's "mrbond:qp".
 *  - a QP's "mrbond:qp" (Rust, spinlock, IRQs off): its member QP and
 *    shadow rings; held across the member post, so that a post never
 *    races with the member QP's destruction.
 *  - a vdev CQ's "mrbond:cq-swq" (Rust, spinlock, IRQs off): its software
 *    queue (synthesised flushes), pushed to under "mrbond:qp". Innermost.
 *  - QP1's "mrbond:gsi" (Rust, spinlock, IRQs off: rust/rdma/gsi.rs): the
 *    QP1 of each port, completed to under it; inside it its receive
 *    buffers' "mrbond:gsi-rq", and "mrbond:cq-swq".
 */
#ifndef _RDMA_MRBOND_VERBS_PRIV_H
#define _RDMA_MRBOND_VERBS_PRIV_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev_priv.h"

/*
 * The connection exchange that speaks for a QP, as the GSI proxy sent it:
 * what a REJ needs to end it on the vdev (mrbond_rdma_vdev_qp_abort_cm()).
 */
struct mrbond_cm_exchange {
	u32 local_id;		/* our communication ID; 0: none in flight */
	u32 remote_id;		/* the peer's; 0 while our REQ is unanswered */
	u8 sent;		/* MRBOND_CM_SENT_REQ or MRBOND_CM_SENT_REP */
	u32 port;		/* the vdev port whose QP1 sent it */
	union ib_gid ours, theirs;
};

#define MRBOND_CM_SENT_REQ	0	/* as REJ's MessageRejected (IBTA) */
#define MRBOND_CM_SENT_REP	1

/*
 * What the GSI proxy records of an RC QP (the QP is Rust's: rust/rdma/qp.rs,
 * which allocates this with it): its member, and the connection exchange
 * that speaks for it. Under objs_lock. A member that dies while the QP is
 * not yet ready to send (INIT: our REQ is out; RTR: our REP is) ends the
 * exchange at once instead of leaving ib_cm to retry it through a member
 * that is gone until it times out (15 retries of ~4.6 s under rdma_cm).
 */
struct mrbond_qp_cm {
	struct ib_qp *ibqp;
	u32 member;		/* slot, fixed at creation */
	struct mrbond_cm_exchange x;
	bool aborted;		/* a REJ ended its exchange */
};

static inline struct mrbond_vdev *mrbond_vdev_of(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mrbond_vdev, ibdev);
}

/* verbs/mrbond_verbs_gsi.c */
void mrbond_gsi_member_attach(struct mrbond_vdev *v, u32 slot);

#endif /* _RDMA_MRBOND_VERBS_PRIV_H */
