// SPDX-License-Identifier: GPL-2.0
/*
 * mrbond_xperf connections through rdma_cm, as nvme-rdma (active) and
 * nvmet-rdma (passive) make them.
 *
 * The CM handler runs in the CM's workqueues under the id's handler_mutex.
 * On the client it only records what happened (the run's task creates the
 * QP and connects). On the server it must build the connection and accept
 * inside the handler, since rdma_accept() needs the handler_mutex; it never
 * posts or waits, so the narrow CM workqueues (nvme's connections share
 * them) are not held up. Everything else runs in the run's task.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/ktime.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include "xperf.h"

#define XP_RESOLVE_MS	3000
/* 0.01 ms: the default 0 means 655 ms, an eternity for a SEND stream. */
#define XP_MIN_RNR_TIMER 1

enum xp_cm_state xp_cm_state(struct xp_conn *c)
{
	enum xp_cm_state st;

	spin_lock(&c->run->lock);
	st = c->cm_state;
	spin_unlock(&c->run->lock);
	return st;
}

/* When the connection was ESTABLISHED (0: never), whatever it is now. */
u64 xp_cm_established_at(struct xp_conn *c)
{
	u64 t;

	spin_lock(&c->run->lock);
	t = c->t_established;
	spin_unlock(&c->run->lock);
	return t;
}

/* A failure sticks: a later DISCONNECTED must not hide it. */
static void xp_set_cm(struct xp_conn *c, enum xp_cm_state st, int status)
{
	spin_lock(&c->run->lock);
	if (c->cm_state != XP_CM_FAILED) {
		c->cm_state = st;
		c->cm_status = status;
		if (st == XP_CM_ESTABLISHED)
			c->t_established = ktime_get_ns();
	}
	spin_unlock(&c->run->lock);
}

static void xp_qp_event(struct ib_event *ev, void *ctx)
{
	struct xp_conn *c = ctx;

	pr_info("conn %u: QP event: %s\n", c->idx, ib_event_msg(ev->event));
}

/* PD, CQ, QP (through rdma_cm, which binds it to id's port) and buffers. */
static int xp_conn_resources(struct xp_conn *c, struct rdma_cm_id *id, const char *ulp)
{
	struct xp_run *r = c->run;
	u32 wrs = r->p.depth + 8;
	struct ib_qp_init_attr init = {
		.event_handler = xp_qp_event,
		.qp_context = c,
		.cap = {
			.max_send_wr = wrs,
			.max_recv_wr = wrs,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int ret;

	c->dev = id->device;
	c->port = id->port_num;
	c->pd = __ib_alloc_pd(c->dev, 0, ulp);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	/* Both queues' slots, and ib_drain_qp()'s two WRs. */
	c->cq = ib_alloc_cq(c->dev, c, 4 * wrs + 2, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	ret = rdma_create_qp(id, c->pd, &init);
	if (ret)
		return ret;
	c->qp = id->qp;
	return xp_conn_bufs(c);
}

/* What xp_conn_resources() built, in reverse; c->id stays. */
static void xp_conn_release(struct xp_conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	if (c->cq)
		ib_free_cq(c->cq);
	c->cq = NULL;
	xp_conn_free_bufs(c);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	c->pd = NULL;
}

static bool xp_dev_expected(struct xp_conn *c)
{
	struct xp_run *r = c->run;
	const char *want;

	if (!r->p.ndev)
		return true;
	want = r->p.dev[c->idx % r->p.ndev];
	if (!strcmp(dev_name(&c->dev->dev), want))
		return true;
	xp_fail(r, "conn %u: rdma_cm chose %s, expected %s", c->idx, dev_name(&c->dev->dev),
		want);
	return false;
}

/* ---- client ---- */

/* Opens a connection: rdma_cm resolves its addresses, then its route. */
int xp_client_open(struct xp_run *r, struct xp_conn *c)
{
	u32 i = c->idx;
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = r->p.local[i % r->p.nlocal],
	};
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = r->p.peer[i % r->p.npeer],
		.sin_port = htons(r->p.cm_port),
	};
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, xp_cm_handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		xp_fail(r, "conn %u: rdma_create_id: %ld", i, PTR_ERR(id));
		return PTR_ERR(id);
	}
	c->id = id;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst,
				XP_RESOLVE_MS);
	if (ret)
		xp_fail(r, "conn %u: rdma_resolve_addr %pI4 -> %pI4: %d", i, &src.sin_addr,
			&dst.sin_addr, ret);
	return ret;
}

/*
 * Opens the connections whose time has come: all at once, or with
 * open_gap_ms connection i at i * open_gap_ms (placement over time).
 */
int xp_client_open_due(struct xp_run *r)
{
	u64 now = ktime_get_ns();
	int ret;

	if (!r->opened)
		r->t_open0 = now;
	while (r->opened < r->p.conns &&
	       now - r->t_open0 >= (u64)r->opened * r->p.open_gap_ms * NSEC_PER_MSEC) {
		ret = xp_client_open(r, &r->conns[r->opened++]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The route is resolved: build the connection on the device rdma_cm chose. */
int xp_client_setup(struct xp_conn *c)
{
	struct xp_run *r = c->run;
	struct xp_req req = {
		.magic = cpu_to_le32(XP_MAGIC),
		.version = XP_VERSION,
		.mode = r->p.mode,
		.conn = cpu_to_le16(c->idx),
		.conns = cpu_to_le16(r->p.conns),
		.depth = cpu_to_le16(r->p.depth),
		.size = cpu_to_le32(r->p.size),
		.run_id = cpu_to_le32(r->p.run_id),
		.gen = c->gen,
	};
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.retry_count = 7,
		.rnr_retry_count = 7,
		.flow_control = 1,
	};
	u32 i;
	int ret;

	c->t_connect = ktime_get_ns();
	ret = xp_conn_resources(c, c->id, KBUILD_MODNAME);
	c->set_up = !ret;
	if (ret) {
		xp_fail(r, "conn %u: resources on %s: %d", c->idx, dev_name(&c->id->device->dev),
			ret);
		return ret;
	}
	if (!xp_dev_expected(c))
		return -EINVAL;
	/* wlat: the target's rkey goes with the request, its REG_MR later. */
	if (c->mr) {
		ret = xp_prepare_target(c);
		if (ret) {
			xp_fail(r, "conn %u: mapping the WRITE target: %d", c->idx, ret);
			return ret;
		}
		req.rkey = cpu_to_le32(c->mr->rkey);
		req.addr = cpu_to_le64(c->mr->iova);
	}
	for (i = 0; i < r->p.depth + 4; i++) {
		ret = xp_post_recv(c);
		if (ret)
			return ret;
	}
	rdma_set_min_rnr_timer(c->id, XP_MIN_RNR_TIMER);
	ret = rdma_connect(c->id, &param);
	if (ret)
		xp_fail(r, "conn %u: rdma_connect: %d", c->idx, ret);
	return ret;
}

static void xp_client_established(struct xp_conn *c, const struct rdma_cm_event *ev)
{
	const struct xp_rep *rep = ev->param.conn.private_data;

	if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
	    le32_to_cpu(rep->magic) != XP_MAGIC ||
	    le32_to_cpu(rep->run_id) != c->run->p.run_id) {
		pr_err("conn %u: a reply that is not this run's\n", c->idx);
		xp_set_cm(c, XP_CM_FAILED, -EPROTO);
		return;
	}
	c->rkey = le32_to_cpu(rep->rkey);
	c->raddr = le64_to_cpu(rep->addr);
	xp_set_cm(c, XP_CM_ESTABLISHED, 0);
}

/* ---- server ---- */

int xp_server_listen(struct xp_run *r)
{
	u32 i;
	int ret;

	for (i = 0; i < r->p.nlocal; i++) {
		struct xp_listener *l = &r->listeners[i];
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_addr.s_addr = r->p.local[i],
			.sin_port = htons(r->p.cm_port),
		};
		struct rdma_cm_id *id;

		l->listener = true;
		l->run = r;
		id = rdma_create_id(&init_net, xp_cm_handler, l, RDMA_PS_TCP, IB_QPT_RC);
		if (IS_ERR(id)) {
			xp_fail(r, "listener %pI4: rdma_create_id: %ld", &sin.sin_addr, PTR_ERR(id));
			return PTR_ERR(id);
		}
		l->id = id;
		r->nlisteners++;
		/* Bound to an address, not the wildcard: no listen on every device. */
		ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
		if (!ret)
			ret = rdma_listen(id, 128);
		if (ret) {
			xp_fail(r, "listen on %pI4:%u: %d", &sin.sin_addr, r->p.cm_port, ret);
			return ret;
		}
		pr_info("listening on %pI4:%u (%s)\n", &sin.sin_addr, r->p.cm_port,
			id->device ? dev_name(&id->device->dev) : "any device");
	}
	return 0;
}

void xp_server_unlisten(struct xp_run *r)
{
	while (r->nlisteners)
		rdma_destroy_id(r->listeners[--r->nlisteners].id);
}

/*
 * The first request sets the run's mode, size and depth; the others must
 * agree. Returns the connection to build, or NULL with a reason.
 */
static struct xp_conn *xp_claim(struct xp_run *r, const struct rdma_cm_event *ev,
				struct rdma_cm_id *id, const char **why)
{
	const struct xp_req *req = ev->param.conn.private_data;
	struct xp_conn *c = NULL;
	u32 idx, size, depth, slot;

	*why = "bad private data";
	if (!req || ev->param.conn.private_data_len < sizeof(*req) ||
	    le32_to_cpu(req->magic) != XP_MAGIC || req->version != XP_VERSION)
		return NULL;
	idx = le16_to_cpu(req->conn);
	size = le32_to_cpu(req->size);
	depth = le16_to_cpu(req->depth);
	*why = "parameters out of range";
	if (idx >= r->p.conns || le16_to_cpu(req->conns) != r->p.conns ||
	    req->gen >= (r->p.reconnect ? XP_MAX_GENS : 1) ||
	    req->mode >= XP_NR_MODES || !size || size > XP_MAX_SIZE || !depth ||
	    depth > XP_MAX_DEPTH || (xp_msg_sized(req->mode) &&
	    (size > XP_MAX_MSG || size < XP_CTRL_SIZE || size % 8)))
		return NULL;
	/* One slot per connection and generation. */
	slot = idx * (r->p.reconnect ? XP_MAX_GENS : 1) + req->gen;
	spin_lock(&r->lock);
	if (!r->accepted) {
		r->p.mode = req->mode;
		r->p.size = size;
		r->p.depth = depth;
		r->p.run_id = le32_to_cpu(req->run_id);
	}
	*why = "another run's or a taken connection";
	if (r->p.mode == req->mode && r->p.size == size && r->p.depth == depth &&
	    r->p.run_id == le32_to_cpu(req->run_id) && !r->conns[slot].id) {
		c = &r->conns[slot];
		c->id = id;
		c->idx = idx;
		c->gen = req->gen;
		c->rkey = le32_to_cpu(req->rkey);
		c->raddr = le64_to_cpu(req->addr);
		r->accepted++;
	}
	spin_unlock(&r->lock);
	return c;
}

/* A request that failed: the core destroys the id when the handler returns. */
static void xp_conn_drop(struct xp_conn *c, int ret)
{
	xp_conn_release(c);
	spin_lock(&c->run->lock);
	c->id = NULL;
	c->cm_state = XP_CM_FAILED;
	c->cm_status = ret;
	spin_unlock(&c->run->lock);
}

static int xp_on_request(struct xp_run *r, struct rdma_cm_id *id, const struct rdma_cm_event *ev)
{
	struct xp_rep rep = { .magic = cpu_to_le32(XP_MAGIC) };
	struct rdma_conn_param param = {
		.private_data = &rep,
		.private_data_len = sizeof(rep),
		.rnr_retry_count = 7,
		.flow_control = 1,
	};
	const char *why;
	struct xp_conn *c = xp_claim(r, ev, id, &why);
	int ret;

	if (!c) {
		pr_err("rejecting a connection request: %s\n", why);
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		return -EINVAL;	/* the core destroys the id */
	}
	ret = xp_conn_resources(c, id, XP_SERVER_ULP);
	if (!ret && c->mr)
		ret = xp_prepare_target(c);
	if (ret) {
		pr_err("conn %u: resources on %s: %d\n", c->idx, dev_name(&id->device->dev), ret);
		goto reject;
	}
	if (c->mr) {
		rep.rkey = cpu_to_le32(c->mr->rkey);
		rep.addr = cpu_to_le64(c->mr->iova);
	}
	rep.run_id = cpu_to_le32(r->p.run_id);
	rdma_set_min_rnr_timer(id, XP_MIN_RNR_TIMER);
	id->context = c;
	ret = rdma_accept(id, &param);
	if (!ret)
		return 0;
	/* rdma_accept() has rejected the request itself. */
	pr_err("conn %u: rdma_accept: %d\n", c->idx, ret);
	xp_conn_drop(c, ret);
	return ret;
reject:
	xp_conn_drop(c, ret);
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return ret;
}

/* ---- both ---- */

int xp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct xp_conn *c = id->context;
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct xp_listener *l = id->context;

		return xp_on_request(l->run, id, ev);
	}
	if (c->listener) {
		struct xp_listener *l = id->context;

		/* The writer destroys the listener when it sees this. */
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			spin_lock(&l->run->lock);
			l->run->removed = true;
			spin_unlock(&l->run->lock);
		}
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, XP_RESOLVE_MS);
		if (ret)
			xp_set_cm(c, XP_CM_FAILED, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		xp_set_cm(c, XP_CM_ROUTED, 0);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->run->p.role == XP_CLIENT)
			xp_client_established(c, ev);
		else
			xp_set_cm(c, XP_CM_ESTABLISHED, 0);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		xp_set_cm(c, XP_CM_DISCONNECTED, 0);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default:
		/* Errors, rejects, DEVICE_REMOVAL: the run's task tears down. */
		pr_info("conn %u: %s (status %d)\n", c->idx, rdma_event_msg(ev->event),
			ev->status);
		xp_set_cm(c, XP_CM_FAILED, ev->status ?: -ECONNABORTED);
		break;
	}
	return 0;
}

/*
 * Disconnects, reaps every WR the connection posted (counting those that
 * never complete as lost), drains and frees. In the run's task only.
 */
void xp_conn_teardown(struct xp_conn *c)
{
	struct xp_run *r = c->run;
	unsigned long last = jiffies;

	if (!c->id)
		return;
	if (c->qp) {
		rdma_disconnect(c->id);
		while (!xp_queues_idle(c) &&
		       time_before(jiffies, last + msecs_to_jiffies(XP_STALL_MS))) {
			if (ib_process_cq_direct(c->cq, -1) > 0)
				last = jiffies;
			else
				xp_idle(last);
		}
		if (xp_queues_idle(c)) {
			ib_drain_qp(c->qp);
		} else {
			r->lost += c->sq.inflight + c->rq.inflight;
			xp_fail(r, "conn %u: %u WRs never completed", c->idx,
				c->sq.inflight + c->rq.inflight);
		}
	}
	c->set_up = false;
	xp_conn_release(c);
	rdma_destroy_id(c->id);
	c->id = NULL;
}
