/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the verbs proxy (verbs/mrbond_verbs_*.c): the vdev objects and
 * the member objects behind them.
 *
 * A vdev QP lives on one member, chosen by Rust (mrbond_rs_place_qp()); PDs
 * (Rust's: rust/vdev_pd.rs) and CQs (Rust's: rust/rdma/cq.rs) span members
 * and get a member object per member lazily; an MR (Rust's:
 * rust/rdma/mr.rs) is bound to one member when it is allocated, from the
 * inputs the PD's QPs left. A post's member WR is made by Rust
 * (mrbond_rs_post_send_translate(), keys through the MR table, lock-free);
 * completions are translated back here. A CM MAD goes out through the
 * member of the QP it speaks for, other MADs through the member Rust names
 * (mrbond_rs_gsi_member()).
 *
 * Locks, outermost first:
 *  - mrbond_vdev.objs_lock (mutex "mrbond:vdev-objects"): member objects
 *    are created and destroyed under it, and the object lists walked. Never
 *    held while calling a Rust function that takes a Rust lock, but for
 *    the MR table's ("mrbond:mrs"), the PDs' ("mrbond:pds", "mrbond:pd")
 *    and the CQs' ("mrbond:cqs"), which nest inside it and take nothing of
 *    ours.
 *  - a vdev CQ's "mrbond:cq-poll" (Rust, spinlock, IRQs off): polling its
 *    member CQs, and replacing them. A poll translates a completion under
 *    it, taking mrbond_qp.lock.
 *  - mrbond_qp.lock (spinlock): the QP's member QP pointer, state and
 *    shadow rings; held across the member post, so that a post never races
 *    with the member QP's destruction.
 *  - a vdev CQ's "mrbond:cq-swq" (Rust, spinlock, IRQs off): its software
 *    queue (synthesised flushes), pushed to under mrbond_qp.lock.
 *    Innermost.
 */
#ifndef _RDMA_MRBOND_VERBS_PRIV_H
#define _RDMA_MRBOND_VERBS_PRIV_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev_priv.h"

/*
 * Member WR ids: bit 63 set for receives, the vdev QP's id (in the vdev's
 * qp_ids) above the low bits of its shadow ring sequence. A completion is
 * traced back by id, never through wc->qp: members may return CQEs of a
 * QP already destroyed (rxe does not purge them).
 */
#define MRBOND_WRID_RECV	BIT_ULL(63)
#define MRBOND_WRID_SEQ_BITS	40
#define MRBOND_WRID_SEQ_MASK	(BIT_ULL(MRBOND_WRID_SEQ_BITS) - 1)
#define MRBOND_WRID_ID_BITS	23
#define MRBOND_QP_ID_MAX	((u32)BIT(MRBOND_WRID_ID_BITS) - 1)

static inline u64 mrbond_wrid(u32 qp_id, u64 seq, bool recv)
{
	return (recv ? MRBOND_WRID_RECV : 0) |
	       ((u64)qp_id << MRBOND_WRID_SEQ_BITS) |
	       (seq & MRBOND_WRID_SEQ_MASK);
}

/* One entry of a shadow ring: what the member WR stands for. */
struct mrbond_wr_slot {
	u64 wr_id;
	u8 opcode;		/* enum ib_wc_opcode of the flush completion */
	bool signaled;
};

struct mrbond_ring {
	struct mrbond_wr_slot *slot;
	u32 mask;		/* size - 1, size a power of two */
	u64 head;		/* next sequence to post */
	u64 tail;		/* oldest sequence not completed */
};

/* A receive buffer ib_mad posted on a vdev QP1. */
struct mrbond_gsi_rbuf {
	u64 wr_id;
	u64 addr;		/* virtual DMA: a kernel address */
	u32 length;
};

/*
 * The connection exchange that speaks for a QP, as the GSI proxy sent it:
 * what a REJ needs to end it on the vdev (mrbond_gsi_abort_cm()).
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
	spinlock_t lock;
	int member;		/* slot, fixed at creation */
	u32 vport;		/* vdev port of the last INIT/RTR, 0 before */
	u32 id;			/* in the vdev's qp_ids; 0 for QP1 */
	struct ib_qp *mqp;	/* NULL once the member is detached */
	/*
	 * A detach took mqp and is destroying it: posts only queue in the
	 * rings until the detach flushes them (mrbond_qp_flush_all()).
	 */
	bool detaching;
	struct ib_cq *scq, *rcq;	/* Rust's vdev CQs (rust/rdma/cq.rs) */
	u32 local_dma_lkey;	/* of the member PD */
	bool sig_all;
	bool failed;		/* QP_FATAL sent */
	struct work_struct fatal_work;	/* QP_FATAL to the ULP, on cb_wq */
	enum ib_qp_state state;
	struct mrbond_ring sq, rq;
	struct list_head node;	/* vdev qps, under objs_lock */
	/*
	 * Under objs_lock. A member that dies while the QP is not yet ready
	 * to send (INIT: our REQ is out; RTR: our REP is) ends the exchange
	 * at once instead of leaving ib_cm to retry it through a member that
	 * is gone until it times out (15 retries of ~4.6 s under rdma_cm).
	 */
	struct mrbond_cm_exchange cm;
	bool cm_aborted;	/* under objs_lock: a REJ ended its exchange */

	/* QP1 only (verbs/mrbond_verbs_gsi.c); member is -1, mqp NULL. */
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
void mrbond_qp_fatal(struct mrbond_qp *qp);
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
void mrbond_gsi_abort_cm(struct mrbond_vdev *v, struct mrbond_qp *qp,
			 enum ib_qp_state was);

/* verbs/mrbond_verbs_post.c */
int mrbond_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int mrbond_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
void mrbond_qp_flush_all(struct mrbond_qp *qp);

#endif /* _RDMA_MRBOND_VERBS_PRIV_H */
