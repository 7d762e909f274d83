// SPDX-License-Identifier: GPL-2.0
/*
 * The data path: posts to a vdev QP go to its member QP with the keys
 * translated, and every WR is recorded in the QP's shadow ring so that it
 * completes exactly once: by the member (translated back in poll_cq) or,
 * when the member QP is gone, by a flush the vdev synthesises. The member's
 * copy of a WR is Rust's to make (rust/rdma/wr.rs): a key of another
 * member fails the post with -EINVAL and is counted; it never reaches the
 * wrong HCA. No allocation here: the member's WR lives on the stack, the
 * rings were sized at create_qp.
 */

#include <rdma/ib_verbs.h>

#include "rdma_mrbond_verbs_priv.h"

static u8 mrbond_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Completes every WR of the ring with a flush, oldest first: the WRs the
 * member QP held when it went away and the ones posted since. Under
 * qp->lock.
 */
static void mrbond_ring_flush(struct mrbond_vdev *v, struct mrbond_qp *qp,
			      struct mrbond_ring *r, struct ib_cq *cq)
{
	struct mrbond_member_slot *m = &v->member[qp->member];
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp = &qp->ibqp,
	};
	u64 n = 0, pushed = 0;

	for (; r->tail != r->head; r->tail++, n++) {
		wc.wr_id = r->slot[r->tail & r->mask].wr_id;
		wc.opcode = r->slot[r->tail & r->mask].opcode;
		if (mrbond_rs_cq_push(cq, &wc))
			pushed++;
	}
	atomic_sub(n, &m->outstanding);
	atomic64_add(pushed, &m->flushed);
}

/*
 * A post to a QP whose member QP is gone: the WR is accepted and takes its
 * place in the ring. While a detach still destroys the member QP, the
 * detach flushes it with the WRs before it; after, it is flushed now,
 * with any WR still ahead of it, so that every WR completes exactly once
 * and in order whatever the interleaving. Under qp->lock.
 */
static void mrbond_post_without_member(struct mrbond_vdev *v,
				       struct mrbond_qp *qp,
				       struct mrbond_ring *r,
				       struct ib_cq *cq, bool *kick)
{
	r->head++;
	atomic_inc(&v->member[qp->member].outstanding);
	if (qp->detaching)
		return;
	mrbond_ring_flush(v, qp, r, cq);
	*kick = true;
}

/*
 * Rust's translation refused the WR: a key of another member's MR, or of
 * an orphan, is counted and fails the post as any bad key does.
 */
static int mrbond_post_refused(struct mrbond_vdev *v, struct mrbond_qp *qp,
			       int ret)
{
	if (ret != -EXDEV)
		return ret;
	atomic64_inc(&v->member[qp->member].wrong_key);
	return -EINVAL;
}

static int mrbond_post_one_send(struct mrbond_vdev *v, struct mrbond_qp *qp,
				const struct ib_send_wr *wr, bool *kick)
{
	struct mrbond_ring *r = &qp->sq;
	const struct ib_send_wr *bad;
	struct mrbond_rdma_send m;
	struct mrbond_wr_slot *s;
	int ret;

	if (r->head - r->tail > r->mask)
		return -ENOMEM;
	if (wr->num_sge < 0 || wr->num_sge > MRBOND_MAX_SGE)
		return -EINVAL;
	s = &r->slot[r->head & r->mask];
	s->wr_id = wr->wr_id;
	s->opcode = mrbond_wc_opcode(wr->opcode);
	s->signaled = qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	if (!qp->mqp) {
		mrbond_post_without_member(v, qp, r, qp->scq, kick);
		return 0;
	}
	ret = mrbond_rs_post_send_translate(v->bond, &v->ibdev, qp->member,
					    qp->local_dma_lkey, wr, &m);
	if (ret)
		return mrbond_post_refused(v, qp, ret);
	m.wr.wr_id = mrbond_wrid(qp->id, r->head, false);
	ret = ib_post_send(qp->mqp, &m.wr, &bad);
	if (ret)
		return ret;
	r->head++;
	atomic_inc(&v->member[qp->member].outstanding);
	return 0;
}

int mrbond_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	unsigned long flags;
	bool kick = false;
	int ret = 0;

	if (qp->gsi_port) {
		for (; wr && !ret; wr = wr->next) {
			ret = mrbond_gsi_post_send(v, qp, wr);
			if (ret)
				*bad_wr = wr;
		}
		return ret;
	}
	spin_lock_irqsave(&qp->lock, flags);
	for (; wr; wr = wr->next) {
		ret = mrbond_post_one_send(v, qp, wr, &kick);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (kick)
		mrbond_rs_cq_kick_later(qp->scq);
	return ret;
}

static int mrbond_post_one_recv(struct mrbond_vdev *v, struct mrbond_qp *qp,
				const struct ib_recv_wr *wr, bool *kick)
{
	struct mrbond_ring *r = &qp->rq;
	const struct ib_recv_wr *bad;
	struct mrbond_rdma_recv m;
	struct mrbond_wr_slot *s;
	int ret;

	if (r->head - r->tail > r->mask)
		return -ENOMEM;
	if (wr->num_sge < 0 || wr->num_sge > MRBOND_MAX_SGE)
		return -EINVAL;
	s = &r->slot[r->head & r->mask];
	s->wr_id = wr->wr_id;
	s->opcode = IB_WC_RECV;
	s->signaled = true;
	if (!qp->mqp) {
		mrbond_post_without_member(v, qp, r, qp->rcq, kick);
		return 0;
	}
	ret = mrbond_rs_post_recv_translate(v->bond, &v->ibdev, qp->member,
					    qp->local_dma_lkey, wr, &m);
	if (ret)
		return mrbond_post_refused(v, qp, ret);
	m.wr.wr_id = mrbond_wrid(qp->id, r->head, true);
	ret = ib_post_recv(qp->mqp, &m.wr, &bad);
	if (ret)
		return ret;
	r->head++;
	atomic_inc(&v->member[qp->member].outstanding);
	return 0;
}

int mrbond_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibqp->device);
	struct mrbond_qp *qp = to_mrbond_qp(ibqp);
	unsigned long flags;
	bool kick = false;
	int ret = 0;

	spin_lock_irqsave(&qp->lock, flags);
	for (; wr; wr = wr->next) {
		if (qp->gsi_port)
			ret = mrbond_gsi_post_recv(qp, wr);
		else
			ret = mrbond_post_one_recv(v, qp, wr, &kick);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (kick)
		mrbond_rs_cq_kick_later(qp->rcq);
	return ret;
}

/*
 * A member completion, made the vdev's: the vdev QP, the ULP's wr_id. A
 * send completion also retires the unsignaled WRs before it (a send queue
 * completes in order). False for a completion of a QP destroyed meanwhile
 * or of a WR already flushed by the vdev, which must not complete twice.
 * Under the CQ's poll lock ("mrbond:cq-poll", rust/rdma/cq.rs), which
 * destroy_qp passes after erasing the id.
 */
bool mrbond_rdma_vdev_wc_translate(struct ib_device *ibdev, struct ib_wc *wc)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibdev);
	bool recv = wc->wr_id & MRBOND_WRID_RECV;
	u32 id = (wc->wr_id & ~MRBOND_WRID_RECV) >> MRBOND_WRID_SEQ_BITS;
	struct mrbond_qp *qp = xa_load(&v->qp_ids, id);
	struct mrbond_ring *r;
	u64 seq, retired;

	if (!qp)
		return false;
	r = recv ? &qp->rq : &qp->sq;
	spin_lock(&qp->lock);
	/* At most 2^40 WRs outstanding: the sequence, at or past the tail. */
	seq = r->tail + ((wc->wr_id - r->tail) & MRBOND_WRID_SEQ_MASK);
	if (seq >= r->head) {
		spin_unlock(&qp->lock);
		return false;
	}
	retired = seq - r->tail + 1;
	wc->wr_id = r->slot[seq & r->mask].wr_id;
	r->tail = seq + 1;
	spin_unlock(&qp->lock);

	atomic_sub(retired, &v->member[qp->member].outstanding);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic64_inc(&v->member[qp->member].flushed);
	wc->qp = &qp->ibqp;
	return true;
}

/*
 * The member QP is destroyed: every WR still in the rings, including those
 * posted while it was being destroyed, completes now with a flush, in ring
 * order, through the QP's CQs. Under objs_lock; the caller kicks the CQs.
 */
void mrbond_qp_flush_all(struct mrbond_qp *qp)
{
	struct mrbond_vdev *v = mrbond_vdev_of(qp->ibqp.device);
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	mrbond_ring_flush(v, qp, &qp->sq, qp->scq);
	mrbond_ring_flush(v, qp, &qp->rq, qp->rcq);
	qp->detaching = false;
	spin_unlock_irqrestore(&qp->lock, flags);
}
