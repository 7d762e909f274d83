// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues of the vdev. ULPs share one CQ between QPs that live on
 * different members (ib_cq_pool_get), and create it before any QP, so a
 * vdev CQ is backed lazily by one member CQ per member, plus a software
 * queue of completions the vdev synthesises (flushes of WRs whose member
 * QP is gone). Polling drains the software queue first, then the member
 * CQs round robin; every member completion is translated back to the vdev
 * QP and the ULP's wr_id. Ordering within a QP holds, since a QP's WRs all
 * complete on one member CQ or, once it is gone, all in the software queue.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_verbs_priv.h"

/*
 * Synthesised completions a CQ can hold: 2^20 (72 MiB of struct ib_wc).
 * Enough for every WR of a ULP's QPs on any CQ a ULP sizes to its WRs
 * short of that; past it an overflow is reported as IB_EVENT_CQ_ERR.
 */
#define MRBOND_SWQ_MAX	(1U << 20)

static void mrbond_cq_kick_work(struct work_struct *work)
{
	mrbond_cq_kick(container_of(work, struct mrbond_cq, kick_work));
}

/* The software queue overflowed: completions were lost, as on a CQ overrun. */
static void mrbond_cq_err_work(struct work_struct *work)
{
	struct mrbond_cq *cq = container_of(work, struct mrbond_cq, err_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

int mrbond_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct uverbs_attr_bundle *attrs)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibcq->device);
	struct mrbond_cq *cq = to_mrbond_cq(ibcq);
	u32 size;

	if (attrs || attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > v->ibdev.attrs.max_cqe)
		return -EINVAL;
	/*
	 * Every WR of the CQ's QPs may come back as a synthesised flush, and
	 * the ULP sized the CQ for those WRs: twice is a margin for drain
	 * markers and WRs the member had already retired unsignaled.
	 */
	size = min(roundup_pow_of_two(2 * attr->cqe + 16), MRBOND_SWQ_MAX);
	cq->swq = kvcalloc(size, sizeof(*cq->swq), GFP_KERNEL);
	if (!cq->swq)
		return -ENOMEM;
	cq->swq_mask = size - 1;
	cq->cqe = attr->cqe;
	cq->comp_vector = attr->comp_vector;
	ibcq->cqe = attr->cqe;
	spin_lock_init(&cq->poll_lock);
	spin_lock_init(&cq->swq_lock);
	INIT_WORK(&cq->kick_work, mrbond_cq_kick_work);
	INIT_WORK(&cq->err_work, mrbond_cq_err_work);

	mutex_lock(&v->objs_lock);
	list_add_tail(&cq->node, &v->cqs);
	mutex_unlock(&v->objs_lock);
	return 0;
}

int mrbond_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibcq->device);
	struct mrbond_cq *cq = to_mrbond_cq(ibcq);
	int m;

	/* The core only gets here once no QP uses the CQ. */
	cancel_work_sync(&cq->kick_work);
	cancel_work_sync(&cq->err_work);
	mutex_lock(&v->objs_lock);
	list_del(&cq->node);
	for (m = 0; m < MRBOND_MAX_MEMBERS; m++) {
		if (cq->member[m])
			ib_destroy_cq(cq->member[m]);
		cq->member[m] = NULL;
	}
	mutex_unlock(&v->objs_lock);
	kvfree(cq->swq);
	return 0;
}

/* A member CQ has completions: so has the vdev CQ. Any context. */
static void mrbond_member_cq_comp(struct ib_cq *mcq, void *ctx)
{
	mrbond_cq_kick(ctx);
}

static void mrbond_member_cq_event(struct ib_event *mev, void *ctx)
{
	struct mrbond_cq *cq = ctx;
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = mev->event,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/* The CQ's member CQ on member, created on first use. Under objs_lock. */
struct ib_cq *mrbond_member_cq(struct mrbond_cq *cq, int member,
			       struct ib_device *dev)
{
	struct mrbond_vdev *v = mrbond_vdev_of(cq->ibcq.device);
	struct ib_cq_init_attr attr = {
		.cqe = cq->cqe,
		.comp_vector = cq->comp_vector % max(dev->num_comp_vectors, 1),
	};
	struct ib_cq *mcq;
	unsigned long flags;

	lockdep_assert_held(&v->objs_lock);
	if (cq->member[member])
		return cq->member[member];
	mcq = ib_create_cq(dev, mrbond_member_cq_comp, mrbond_member_cq_event,
			   cq, &attr);
	if (IS_ERR(mcq))
		return mcq;
	/* The vdev CQ may be armed already: so must its new member CQ be. */
	ib_req_notify_cq(mcq, IB_CQ_NEXT_COMP);
	spin_lock_irqsave(&cq->poll_lock, flags);
	cq->member[member] = mcq;
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return mcq;
}

static int mrbond_swq_pop(struct mrbond_cq *cq, struct ib_wc *wc, int n)
{
	int got = 0;

	spin_lock(&cq->swq_lock);
	while (got < n && cq->swq_tail != cq->swq_head) {
		wc[got++] = cq->swq[cq->swq_tail & cq->swq_mask];
		cq->swq_tail++;
	}
	spin_unlock(&cq->swq_lock);
	return got;
}

int mrbond_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibcq->device);
	struct mrbond_cq *cq = to_mrbond_cq(ibcq);
	unsigned long flags;
	int got, i, j, n, kept;
	u32 m;

	spin_lock_irqsave(&cq->poll_lock, flags);
	got = mrbond_swq_pop(cq, wc, num_entries);
	for (i = 0; i < MRBOND_MAX_MEMBERS && got < num_entries; i++) {
		m = (cq->next + i) % MRBOND_MAX_MEMBERS;
		if (!cq->member[m])
			continue;
		n = ib_poll_cq(cq->member[m], num_entries - got, wc + got);
		for (j = 0, kept = 0; j < n; j++) {
			/* Completions of WRs already flushed are dropped. */
			if (!mrbond_wc_translate(v, &wc[got + j]))
				continue;
			if (kept != j)
				wc[got + kept] = wc[got + j];
			kept++;
		}
		got += kept;
	}
	cq->next = (cq->next + 1) % MRBOND_MAX_MEMBERS;
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return got;
}

int mrbond_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mrbond_cq *cq = to_mrbond_cq(ibcq);
	unsigned long irqflags;
	int m, ret = 0;

	WRITE_ONCE(cq->armed, true);
	spin_lock_irqsave(&cq->poll_lock, irqflags);
	for (m = 0; m < MRBOND_MAX_MEMBERS; m++) {
		if (cq->member[m] && ib_req_notify_cq(cq->member[m], flags) > 0)
			ret = 1;
	}
	spin_lock(&cq->swq_lock);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->swq_head != cq->swq_tail)
		ret = 1;
	spin_unlock(&cq->swq_lock);
	spin_unlock_irqrestore(&cq->poll_lock, irqflags);
	return ret;
}

/*
 * Queues a completion the vdev makes (a flush, a GSI completion); false if
 * the software queue is full: the CQ is then in error, as on a hardware CQ
 * overrun, and its consumer gets IB_EVENT_CQ_ERR (once). Any context.
 */
bool mrbond_cq_push(struct mrbond_cq *cq, const struct ib_wc *wc)
{
	struct mrbond_vdev *v = mrbond_vdev_of(cq->ibcq.device);
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&cq->swq_lock, flags);
	if (cq->swq_head - cq->swq_tail <= cq->swq_mask) {
		cq->swq[cq->swq_head & cq->swq_mask] = *wc;
		cq->swq_head++;
		ok = true;
	} else if (!cq->swq_overflow) {
		cq->swq_overflow = true;
		pr_err("%s: CQ overrun by completions of the vdev\n",
		       dev_name(&cq->ibcq.device->dev));
		queue_work(v->cb_wq, &cq->err_work);
	}
	spin_unlock_irqrestore(&cq->swq_lock, flags);
	return ok;
}

bool mrbond_cq_push_flush(struct mrbond_cq *cq, struct mrbond_qp *qp,
			  const struct mrbond_wr_slot *s)
{
	struct ib_wc wc = {
		.wr_id = s->wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = s->opcode,
		.qp = &qp->ibqp,
	};

	return mrbond_cq_push(cq, &wc);
}

/*
 * Tells the CQ's consumer there is something to poll, if it armed the CQ:
 * an arm is good for one callback, and a consumer that never arms (an
 * IB_POLL_DIRECT CQ) must get none. From a member's completion callback,
 * as a hardware CQ would, or from cb_wq; never with a bond lock held.
 */
void mrbond_cq_kick(struct mrbond_cq *cq)
{
	if (xchg(&cq->armed, false) && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * qp is being destroyed (its id already erased): once this returns, no
 * poll of cq still translates a completion of it, and the synthesised ones
 * queued for it are gone, so that no ULP sees a completion of a QP it
 * destroyed. The ULP destroys only after its QP's WRs are done with
 * (drained or abandoned), so nothing it waits for is dropped.
 */
void mrbond_cq_forget_qp(struct mrbond_cq *cq, struct mrbond_qp *qp)
{
	unsigned long flags;
	u32 i, kept;

	spin_lock_irqsave(&cq->poll_lock, flags);
	spin_lock(&cq->swq_lock);
	for (i = cq->swq_tail, kept = cq->swq_tail; i != cq->swq_head; i++) {
		struct ib_wc *wc = &cq->swq[i & cq->swq_mask];

		if (wc->qp == &qp->ibqp)
			continue;
		if (kept != i)
			cq->swq[kept & cq->swq_mask] = *wc;
		kept++;
	}
	cq->swq_head = kept;
	spin_unlock(&cq->swq_lock);
	spin_unlock_irqrestore(&cq->poll_lock, flags);
}

/*
 * The same for completions the vdev queued itself, from wherever it did
 * (a post of the ULP's, a detach under objs_lock, the GSI proxy under a
 * spinlock): the callback runs from cb_wq, never re-entering the ULP from
 * its own post nor under a bond lock. Any context.
 */
void mrbond_cq_kick_later(struct mrbond_cq *cq)
{
	struct mrbond_vdev *v = mrbond_vdev_of(cq->ibcq.device);

	if (READ_ONCE(cq->armed))
		queue_work(v->cb_wq, &cq->kick_work);
}

/*
 * The member is going away, step 1: no poll may touch its CQs any more, so
 * that none reads a completion of a member QP about to be destroyed.
 * Under objs_lock.
 */
void mrbond_cqs_unhook(struct mrbond_vdev *v, int member)
{
	struct mrbond_cq *cq;
	unsigned long flags;

	lockdep_assert_held(&v->objs_lock);
	list_for_each_entry(cq, &v->cqs, node) {
		spin_lock_irqsave(&cq->poll_lock, flags);
		cq->unhooked = cq->member[member];
		cq->member[member] = NULL;
		spin_unlock_irqrestore(&cq->poll_lock, flags);
	}
}

/* Step 2, after the member's QPs are destroyed: free its CQs. */
void mrbond_cqs_free_unhooked(struct mrbond_vdev *v)
{
	struct mrbond_cq *cq;

	lockdep_assert_held(&v->objs_lock);
	list_for_each_entry(cq, &v->cqs, node) {
		if (cq->unhooked)
			ib_destroy_cq(cq->unhooked);
		cq->unhooked = NULL;
	}
}
