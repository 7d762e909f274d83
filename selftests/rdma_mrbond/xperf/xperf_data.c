// SPDX-License-Identifier: GPL-2.0
/*
 * mrbond_xperf data plane: a connection's buffers, WR slots, posts and
 * completions, and the payload patterns. Completions are reaped only by the
 * run's task (IB_POLL_DIRECT), so nothing here takes a lock.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "xperf.h"

#define XP_POLL_BUDGET	256
#define XP_SPIN_MS	20
#define XP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

/*
 * A pattern of 64-bit words, cheap enough to check every byte of every
 * message under TCG: word i of seed s is (s + i) * golden ratio.
 */
u64 xp_seed(u32 run_id, u32 conn, u32 side, u64 seq)
{
	return ((u64)run_id << 32 | (u64)conn << 1 | side) ^ (seq * 0xff51afd7ed558ccdull);
}

void xp_fill_words(void *buf, u32 len, u64 seed)
{
	u64 *w = buf;
	u32 i;

	for (i = 0; i < len / 8; i++)
		w[i] = (seed + i) * 0x9e3779b97f4a7c15ull;
}

/* How many words differ from the pattern. */
u32 xp_check_words(const void *buf, u32 len, u64 seed)
{
	const u64 *w = buf;
	u32 i, bad = 0;

	for (i = 0; i < len / 8; i++)
		bad += w[i] != (seed + i) * 0x9e3779b97f4a7c15ull;
	return bad;
}

static void xp_done(struct ib_cq *cq, struct ib_wc *wc);

static int xp_queue_init(struct xp_conn *c, struct xp_queue *q, u32 nslots, bool rq)
{
	enum dma_data_direction dir = rq ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	u32 i;

	q->nslots = nslots;
	q->slots = kcalloc(nslots, sizeof(*q->slots), GFP_KERNEL);
	if (!q->slots)
		return -ENOMEM;
	for (i = 0; i < nslots; i++) {
		struct xp_slot *s = &q->slots[i];

		s->conn = c;
		s->rq = rq;
		s->cqe.done = xp_done;
		s->buf = kzalloc(c->msg_size, GFP_KERNEL);
		if (!s->buf)
			return -ENOMEM;
		s->dma = ib_dma_map_single(c->dev, s->buf, c->msg_size, dir);
		if (ib_dma_mapping_error(c->dev, s->dma)) {
			s->dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

static void xp_queue_free(struct xp_conn *c, struct xp_queue *q)
{
	u32 i;

	if (!q->slots)
		return;
	for (i = 0; i < q->nslots; i++) {
		struct xp_slot *s = &q->slots[i];

		if (s->dma)
			ib_dma_unmap_single(c->dev, s->dma, c->msg_size,
					    s->rq ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
		kfree(s->buf);
	}
	kfree(q->slots);
	q->slots = NULL;
}

/*
 * The WR slots (twice as many as can be outstanding, so that a second
 * completion of a WR finds its slot idle and counts as a duplicate) and the
 * WRITE source or target of a connection on c->dev: write's client has a
 * source, its server a target; in wlat both ends have a target, and a
 * WRITE's source is its SQ slot, free again only once the WRITE completed
 * (a retransmission reads the source until then).
 */
int xp_conn_bufs(struct xp_conn *c)
{
	struct xp_run *r = c->run;
	u32 n = 2 * (r->p.depth + 8), npages;
	bool target = r->p.mode == XP_WLAT || r->p.role == XP_SERVER;
	int ret;

	c->msg_size = xp_msg_sized(r->p.mode) ? max_t(u32, r->p.size, XP_CTRL_SIZE) :
		      XP_CTRL_SIZE;
	ret = xp_queue_init(c, &c->sq, n, false);
	if (!ret)
		ret = xp_queue_init(c, &c->rq, n, true);
	if (ret || (r->p.mode != XP_WRITE && r->p.mode != XP_WLAT))
		return ret;
	c->wbuf = kzalloc(r->p.size, GFP_KERNEL | __GFP_NOWARN);
	if (!c->wbuf)
		return -ENOMEM;
	c->wdir = target ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	if (!target)
		xp_fill_words(c->wbuf, r->p.size, xp_seed(r->p.run_id, c->idx, 0, 0));
	c->wdma = ib_dma_map_single(c->dev, c->wbuf, r->p.size, c->wdir);
	if (ib_dma_mapping_error(c->dev, c->wdma)) {
		c->wdma = 0;
		return -ENOMEM;
	}
	if (!target)
		return 0;
	sg_init_one(&c->sg, c->wbuf, r->p.size);
	sg_dma_address(&c->sg) = c->wdma;
	sg_dma_len(&c->sg) = r->p.size;
	npages = DIV_ROUND_UP(offset_in_page(c->wbuf) + r->p.size, PAGE_SIZE);
	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		return ret;
	}
	return 0;
}

void xp_conn_free_bufs(struct xp_conn *c)
{
	if (c->mr)
		ib_dereg_mr(c->mr);
	c->mr = NULL;
	if (c->wdma)
		ib_dma_unmap_single(c->dev, c->wdma, c->run->p.size, c->wdir);
	c->wdma = 0;
	kfree(c->wbuf);
	c->wbuf = NULL;
	xp_queue_free(c, &c->sq);
	xp_queue_free(c, &c->rq);
}

/* The target's FRWR mapping and fresh rkey, before the reply carries it. */
int xp_prepare_target(struct xp_conn *c)
{
	int n = ib_map_mr_sg(c->mr, &c->sg, 1, NULL, PAGE_SIZE);

	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(c->mr, ib_inc_rkey(c->mr->rkey));
	return 0;
}

static struct xp_slot *xp_slot_get(struct xp_queue *q)
{
	u32 i;

	for (i = 0; i < q->nslots; i++) {
		struct xp_slot *s = &q->slots[(q->next + i) % q->nslots];

		if (s->busy)
			continue;
		q->next = (q->next + i + 1) % q->nslots;
		return s;
	}
	return NULL;
}

static void xp_slot_mark(struct xp_slot *s, enum xp_op op, bool busy)
{
	struct xp_queue *q = s->rq ? &s->conn->rq : &s->conn->sq;
	struct xp_run *r = s->conn->run;

	s->op = op;
	s->busy = busy;
	if (busy) {
		q->inflight++;
		r->posted++;
	} else {
		q->inflight--;
		r->posted--;
	}
}

/*
 * keep_going: a connection that fails (its rail died) stops, and the run
 * goes on over the others; every WR it posted must still complete once.
 * Whether the failure was taken so.
 */
bool xp_conn_broken(struct xp_conn *c, const char *why)
{
	struct xp_run *r = c->run;

	if (!r->p.keep_going || r->at_stop)
		return false;
	if (!c->stopped) {
		c->stopped = true;
		r->conns_broken++;
		pr_info("conn %u on %s: %s; %s\n", c->idx,
			c->dev ? dev_name(&c->dev->dev) : "-", why,
			r->p.reconnect && r->p.role == XP_CLIENT ? "reconnecting" :
			"the others go on");
	}
	return true;
}

static int xp_post_failed(struct xp_conn *c, struct xp_slot *s, enum xp_op op, int ret)
{
	if (s)
		xp_slot_mark(s, op, false);
	c->run->post_errors++;
	if (!xp_conn_broken(c, "a post failed"))
		xp_fail(c->run, "conn %u: posting op %d failed: %d", c->idx, op, ret);
	c->stopped = true;
	return ret;
}

static int xp_post_send_wr(struct xp_conn *c, struct xp_slot *s, enum xp_op op,
			   struct ib_send_wr *wr)
{
	int ret;

	wr->wr_cqe = &s->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	xp_slot_mark(s, op, true);
	ret = ib_post_send(c->qp, wr, NULL);
	return ret ? xp_post_failed(c, s, op, ret) : 0;
}

int xp_post_recv(struct xp_conn *c)
{
	struct xp_slot *s = xp_slot_get(&c->rq);
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (!s)
		return xp_post_failed(c, NULL, XP_OP_RECV, -ENOSPC);
	sge.addr = s->dma;
	sge.length = c->msg_size;
	sge.lkey = c->pd->local_dma_lkey;
	wr.wr_cqe = &s->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ib_dma_sync_single_for_device(c->dev, s->dma, c->msg_size, DMA_FROM_DEVICE);
	xp_slot_mark(s, XP_OP_RECV, true);
	ret = ib_post_recv(c->qp, &wr, NULL);
	return ret ? xp_post_failed(c, s, XP_OP_RECV, ret) : 0;
}

/*
 * A SEND: DATA of the run's size with a pattern after its head, or a
 * control message of XP_CTRL_SIZE carrying @body's counters.
 */
int xp_post_msg(struct xp_conn *c, enum xp_msg_type type, u64 seq, const struct xp_msg *body)
{
	struct xp_run *r = c->run;
	struct xp_slot *s = xp_slot_get(&c->sq);
	enum xp_op op = type == XP_MSG_DATA ? XP_OP_DATA : XP_OP_CTRL;
	u32 len = type == XP_MSG_DATA ? r->p.size : XP_CTRL_SIZE;
	struct ib_send_wr wr = {};
	struct xp_msg *m;
	struct ib_sge sge;

	if (!s)
		return xp_post_failed(c, NULL, op, -ENOSPC);
	m = s->buf;
	if (body)
		*m = *body;
	else
		memset(m, 0, sizeof(*m));
	m->magic = cpu_to_le32(XP_MAGIC);
	m->type = cpu_to_le16(type);
	m->conn = cpu_to_le16(c->idx);
	m->seq = cpu_to_le64(seq);
	if (type == XP_MSG_DATA) {
		xp_fill_words(s->buf + sizeof(*m), len - sizeof(*m),
			      xp_seed(r->p.run_id, c->idx, r->p.role, seq));
		/* corrupt=1: one byte of the client's third message, on purpose. */
		if (r->p.corrupt && r->p.role == XP_CLIENT && !c->idx && seq == 2)
			((u8 *)s->buf)[len - 1] ^= 0x40;
	}
	ib_dma_sync_single_for_device(c->dev, s->dma, len, DMA_TO_DEVICE);
	sge.addr = s->dma;
	sge.length = len;
	sge.lkey = c->pd->local_dma_lkey;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return xp_post_send_wr(c, s, op, &wr);
}

int xp_post_write(struct xp_conn *c)
{
	struct xp_slot *s = xp_slot_get(&c->sq);
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;

	if (!s)
		return xp_post_failed(c, NULL, XP_OP_WRITE, -ENOSPC);
	sge.addr = c->wdma;
	sge.length = c->run->p.size;
	sge.lkey = c->pd->local_dma_lkey;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = c->raddr;
	wr.rkey = c->rkey;
	return xp_post_send_wr(c, s, XP_OP_WRITE, &wr.wr);
}

/*
 * wlat: message seq of the run's size into the peer's target, from an SQ
 * slot; its immediate (seq's low 32 bits) consumes a RECV there, which is
 * how the peer learns it arrived.
 */
int xp_post_write_imm(struct xp_conn *c, u64 seq)
{
	struct xp_run *r = c->run;
	struct xp_slot *s = xp_slot_get(&c->sq);
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;

	if (!s)
		return xp_post_failed(c, NULL, XP_OP_WRITE, -ENOSPC);
	xp_fill_words(s->buf, r->p.size, xp_seed(r->p.run_id, c->idx, r->p.role, seq));
	/* corrupt=1: one byte of the client's third message, on purpose. */
	if (r->p.corrupt && r->p.role == XP_CLIENT && !c->idx && seq == 2)
		((u8 *)s->buf)[r->p.size - 1] ^= 0x40;
	ib_dma_sync_single_for_device(c->dev, s->dma, r->p.size, DMA_TO_DEVICE);
	sge.addr = s->dma;
	sge.length = r->p.size;
	sge.lkey = c->pd->local_dma_lkey;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(lower_32_bits(seq));
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = c->raddr;
	wr.rkey = c->rkey;
	return xp_post_send_wr(c, s, XP_OP_WRITE, &wr.wr);
}

int xp_post_reg(struct xp_conn *c)
{
	struct xp_slot *s = xp_slot_get(&c->sq);
	struct ib_reg_wr wr = {};

	if (!s)
		return xp_post_failed(c, NULL, XP_OP_REG, -ENOSPC);
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = c->mr;
	wr.key = c->mr->rkey;
	wr.access = XP_ACCESS;
	return xp_post_send_wr(c, s, XP_OP_REG, &wr.wr);
}

int xp_post_inv(struct xp_conn *c)
{
	struct xp_slot *s = xp_slot_get(&c->sq);
	struct ib_send_wr wr = {};

	if (!s)
		return xp_post_failed(c, NULL, XP_OP_INV, -ENOSPC);
	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = c->mr->rkey;
	return xp_post_send_wr(c, s, XP_OP_INV, &wr);
}

static void xp_wc_failed(struct xp_conn *c, struct xp_slot *s, struct ib_wc *wc)
{
	struct xp_run *r = c->run;

	if (r->at_stop && wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	if (xp_conn_broken(c, ib_wc_status_msg(wc->status)))
		return;
	if (!c->stopped)
		pr_info("conn %u: first failed completion: op %d %s (vendor_err %#x)\n",
			c->idx, s->op, ib_wc_status_msg(wc->status), wc->vendor_err);
	c->stopped = true;
	xp_fail(r, "conn %u: op %d completed with %s", c->idx, s->op,
		ib_wc_status_msg(wc->status));
	r->stopping = true;
}

static void xp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xp_slot *s = container_of(wc->wr_cqe, struct xp_slot, cqe);
	struct xp_conn *c = s->conn;
	struct xp_queue *q = s->rq ? &c->rq : &c->sq;
	struct xp_run *r = c->run;

	if (!s->busy) {
		r->dups++;
		pr_err_ratelimited("conn %u: slot %td completed twice (%s)\n", c->idx,
				   s - q->slots, ib_wc_status_msg(wc->status));
		return;
	}
	s->busy = false;
	q->inflight--;
	if (wc->status == IB_WC_SUCCESS)
		r->ok++;
	else if (wc->status != IB_WC_WR_FLUSH_ERR)
		r->err++;
	else if (r->at_stop)
		r->stop_flush++;
	else
		r->flush++;
	if (wc->status != IB_WC_SUCCESS) {
		xp_wc_failed(c, s, wc);
		return;
	}
	switch (s->op) {
	case XP_OP_RECV:
		if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
			xp_recv_write(c, be32_to_cpu(wc->ex.imm_data), wc->byte_len);
			break;
		}
		ib_dma_sync_single_for_cpu(c->dev, s->dma, c->msg_size, DMA_FROM_DEVICE);
		xp_recv_msg(c, s->buf, wc->byte_len);
		break;
	case XP_OP_DATA:
	case XP_OP_WRITE:
		c->data_ok++;
		c->data_ok_gen++;
		if (!r->stopping) {
			c->t_last_ok = ktime_get_ns();
			c->t_first_ok = c->t_first_ok ?: c->t_last_ok;
			c->data_ok_last = c->data_ok;
		}
		break;
	case XP_OP_CTRL:
		xp_ctrl_sent(c);
		break;
	case XP_OP_REG:
		xp_target_registered(c);
		break;
	case XP_OP_INV:
		xp_target_invalidated(c);
		break;
	}
}

bool xp_queues_idle(struct xp_conn *c)
{
	return !c->sq.inflight && !c->rq.inflight;
}

/* Reaps every connection's CQ; returns how many completions it saw. */
int xp_poll(struct xp_run *r)
{
	int n = 0;
	u32 i;

	for (i = 0; i < r->nconns; i++) {
		struct xp_conn *c = &r->conns[i];

		if (c->set_up)
			n += ib_process_cq_direct(c->cq, XP_POLL_BUDGET);
	}
	return n;
}

/*
 * Nothing completed: rxe does its protocol work in kworkers, on a guest with
 * few vCPUs and a 4 ms tick. Offer the CPU with cond_resched() and keep
 * polling; sleep only after XP_SPIN_MS without a completion. (yield() was
 * tried: the 44 ms round trip of the testbed's rails is rxe's, as
 * ibv_rc_pingpong shows, not this loop's.)
 */
void xp_idle(unsigned long idle_since)
{
	if (time_before(jiffies, idle_since + msecs_to_jiffies(XP_SPIN_MS))) {
		cond_resched();
		cpu_relax();
		return;
	}
	usleep_range(500, 1000);
}
