/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the verbs proxy (verbs/mrbond_verbs_*.c): the vdev objects and
 * the member objects behind them.
 *
 * A vdev QP lives on one member, chosen by Rust (mrbond_rs_place_qp()); PDs
 * (Rust's: rust/vdev_pd.rs) and CQs (Rust's: rust/rdma/cq.rs) span members
 * and get a member object per member lazily; an MR (Rust's:
 * rust/rdma/mr.rs) is bound to one member when it is allocated, from the
 * inputs the PD's QPs left. An RC QP's data path is Rust's
 * (rust/rdma/qp_path.rs): its member QP, shadow rings, posts and the
 * translation of its completions; the QP verbs here create, modify and
 * destroy it. A CM MAD goes out through the member of the QP it speaks
 * for, other MADs through the member Rust names (mrbond_rs_gsi_member()).
 *
 * Locks, outermost first:
 *  - mrbond_vdev.objs_lock (mutex "mrbond:vdev-objects"): member objects
 *    are created and destroyed under it, and the object lists walked. Never
 *    held while calling a Rust function that takes a Rust lock, but for
 *    the MR table's ("mrbond:mrs"), the PDs' ("mrbond:pds", "mrbond:pd"),
 *    the CQs' ("mrbond:cqs"), the QP set's ("mrbond:qps", whose walks
 *    end connection exchanges through the GSI proxy) and the QP data
 *    paths' (below), which nest inside it.
 *  - a vdev CQ's "mrbond:cq-poll" (Rust, spinlock, IRQs off): polling its
 *    member CQs, and replacing them. A poll translates a completion under
 *    it, taking the QP's "mrbond:qp".
 *  - a QP's "mrbond:qp" (Rust, spinlock, IRQs off): its member QP and
 *    shadow rings; held across the member post, so that a post never
 *    races with the member QP's destruction.
 *  - a vdev CQ's "mrbond:cq-swq" (Rust, spinlock, IRQs off): its software
 *    queue (synthesised flushes), pushed to under "mrbond:qp". Innermost.
 *  - mrbond_qp.lock (spinlock): QP1's receive buffers;
 *    nothing nests inside it but "mrbond:cq-swq".
 */
#ifndef _RDMA_MRBOND_VERBS_PRIV_H
#define _RDMA_MRBOND_VERBS_PRIV_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev_priv.h"

/* A receive buffer ib_mad posted on a vdev QP1. */
struct mrbond_gsi_rbuf {
	u64 wr_id;
	u64 addr;		/* virtual DMA: a kernel address */
	u32 length;
};

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

struct mrbond_qp {
	struct ib_qp ibqp;
	spinlock_t lock;	/* QP1's receive buffers */
	int member;		/* slot, fixed at creation */
	u32 vport;		/* vdev port of the last INIT/RTR, 0 before */
	/*
	 * The data path (rust/rdma/qp_path.rs): the member QP, the shadow rings,
	 * the posts. NULL for QP1.
	 */
	void *path;
	struct ib_cq *scq, *rcq;	/* Rust's vdev CQs (rust/rdma/cq.rs) */
	/*
	 * Under objs_lock. A member that dies while the QP is not yet ready
	 * to send (INIT: our REQ is out; RTR: our REP is) ends the exchange
	 * at once instead of leaving ib_cm to retry it through a member that
	 * is gone until it times out (15 retries of ~4.6 s under rdma_cm).
	 */
	struct mrbond_cm_exchange cm;
	bool cm_aborted;	/* under objs_lock: a REJ ended its exchange */

	/*
	 * QP1 only (verbs/mrbond_verbs_gsi.c); member is -1, path NULL. An
	 * RC QP's state is its path's.
	 */
	enum ib_qp_state state;	/* under objs_lock */
	u32 gsi_port;
	struct mrbond_gsi_rbuf *grq;	/* under lock */
	u32 grq_mask;
	u64 grq_head, grq_tail;
	atomic_t gsi_sends;	/* being sent by a member */
	u32 gsi_sq_size;
};

static inline struct mrbond_vdev *mrbond_vdev_of(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mrbond_vdev, ibdev);
}

static inline struct mrbond_qp *to_mrbond_qp(struct ib_qp *qp)
{
	return container_of(qp, struct mrbond_qp, ibqp);
}

/* verbs/mrbond_verbs_qp.c */
int mrbond_create_qp(struct ib_qp *qp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata);
int mrbond_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
		     int attr_mask, struct ib_udata *udata);
int mrbond_query_qp(struct ib_qp *qp, struct ib_qp_attr *attr, int attr_mask,
		    struct ib_qp_init_attr *init);
int mrbond_destroy_qp(struct ib_qp *qp, struct ib_udata *udata);
int mrbond_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int mrbond_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
const struct ib_gid_attr *mrbond_member_av(struct mrbond_vdev *v, int member,
					    const struct rdma_ah_attr *vav,
					    struct rdma_ah_attr *mav);

/* verbs/mrbond_verbs_gsi.c */
int mrbond_gsi_create(struct mrbond_vdev *v, struct mrbond_qp *qp,
		      struct ib_qp_init_attr *init);
void mrbond_gsi_destroy(struct mrbond_vdev *v, struct mrbond_qp *qp);
int mrbond_gsi_post_send(struct mrbond_vdev *v, struct mrbond_qp *qp,
			 const struct ib_send_wr *wr);
int mrbond_gsi_post_recv(struct mrbond_qp *qp, const struct ib_recv_wr *wr);
void mrbond_gsi_member_attach(struct mrbond_vdev *v, u32 slot);
void mrbond_gsi_member_take(struct mrbond_vdev *v, u32 slot,
			    struct mrbond_gsi_member_res *res);
void mrbond_gsi_member_release(struct mrbond_gsi_member_res *res);


#endif /* _RDMA_MRBOND_VERBS_PRIV_H */
