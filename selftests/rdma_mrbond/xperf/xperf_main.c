// SPDX-License-Identifier: GPL-2.0
/*
 * mrbond_xperf: RDMA traffic between two hosts through rdma_cm, with every
 * payload checked, for the benchmark suite (tools/bench/). Where
 * mrbond_kperf runs QP pairs in loopback on one device, xperf connects
 * through rdma_cm as a ULP does, so rdma_cm picks the device from the
 * addresses: the bond (the service address) or a raw member (its rail's
 * address).
 *
 * Usage (debugfs), server first:
 *
 *   hostb# echo "role=server local=198.18.30.2 conns=4" \
 *                 >/sys/kernel/debug/mrbond_xperf/run &
 *   hostb# cat /sys/kernel/debug/mrbond_xperf/state       # "listening"
 *   hosta# echo "role=client local=198.18.30.1 peer=198.18.30.2 conns=4 \
 *                 mode=write size=65536 duration_ms=5000" \
 *                 >/sys/kernel/debug/mrbond_xperf/run
 *   hosta# cat /sys/kernel/debug/mrbond_xperf/result
 *
 * The write runs synchronously and returns the byte count when the run ended
 * with status=ok, -EINVAL for a bad key (a pr_err names it), -EBUSY while
 * another run is in progress, -EINTR when the writer is killed, -EIO for a
 * failed run. Other signals do not stop a run: a shell that writes the run
 * itself gets SIGCHLD from its background jobs.
 *
 * Keys (default in brackets):
 *   role=client|server   (required)
 *   local=IP[,IP..]      source (client) or listen (server) addresses, up
 *                        to 4; connection i uses the (i mod n)th (required)
 *   peer=IP[,IP..]       the server's addresses, as local (client, required)
 *   dev=NAME[,NAME..]    the device rdma_cm must pick for connection i, the
 *                        (i mod n)th; the run fails if it picks another [any]
 *   cm_port=N            rdma_cm port [18600]
 *   conns=N              connections, 1..512 [1]
 *   mode=write|send|lat|wlat|connect (client; the server takes the
 *                        client's)
 *                        write: RDMA WRITEs into the server's FRWR target;
 *                        send: SENDs, each checked by the server in order;
 *                        lat: SEND ping-pong, the server echoes;
 *                        wlat: RDMA WRITE ping-pong, each end writing
 *                        with immediate into the other's FRWR target;
 *                        connect: connect and close, timing the handshake
 *                        [write]
 *   size=BYTES           payload per WR, send/lat/wlat 64..65536 and a
 *                        multiple of 8 [write 65536, send 4096, lat 64]
 *   depth=N              outstanding data WRs per connection, 1..128 [16]
 *   duration_ms=N        write/send run time [3000]
 *   iters=N              lat/wlat round trips per connection [1000]
 *   connect_ms=N         client: time to connect every connection [30000]
 *   open_gap_ms=N        client, write/send: open connection i at i * N ms;
 *                        each carries data from its READY on, and the run
 *                        lasts duration_ms after the last is READY (how a
 *                        bond places connections under load) [0]
 *   timeout_ms=N         server: time for the whole run [120000]
 *   reconnect=0|1        client: a connection that fails while data flows
 *                        is torn down and opened again (at most 3 times),
 *                        as a ULP reconnects on a flush; the server must
 *                        be told too (implies keep_going) [0]
 *   corrupt=0|1          client: flip one byte of connection 0's third
 *                        SEND or final WRITE, so that the run must fail:
 *                        the check of the checks [0]
 *   late_poll_ms=N       client, connect: sleep N ms after each connection's
 *                        rdma_connect(), so the server has closed it before
 *                        the client looks (a connection that closed after
 *                        ESTABLISHED still counts as connected) [0]
 *   keep_going=0|1       a connection that fails (its rail died) stops and
 *                        the others go on; it is left out of the final
 *                        checks, but every WR it posted must still complete
 *                        exactly once (conns_broken counts them) [0]
 *
 * Each connection has its own PD (the bond places an unknown ULP's QPs by
 * PD, so the connections spread over members), its own IB_POLL_DIRECT CQ,
 * and a QP made by rdma_create_qp(). The server's PDs are named
 * "mrbond_xperf_srv", a passive ULP to the bond, which puts their QPs on the
 * rail the request came in on.
 *
 * Protocol per connection: the client's request carries mode, size, depth
 * and a run id (wlat: and the rkey and address of its WRITE target); the
 * server's reply the rkey and address of its WRITE target (write, wlat).
 * The server posts its RECVs (and REG_MR of the target) and SENDs READY;
 * the client (wlat: once its own target's REG_MR completed) starts only
 * when every connection is READY. At the end
 * the client waits for its data WRs, writes a final pattern (write), and
 * SENDs DONE with its count; the server invalidates and checks the target
 * (write), and answers RESULT with what it received and found. RC delivers
 * in order, so DONE arrives after the last data.
 *
 * Result keys (client): role, mode, conns, size, depth, bytes and elapsed_ns
 * (every data WR completed, from the start to the last completion),
 * window_bytes, window_ns and mbps (what completed while posting, from the
 * start to the end of duration_ms), paced_kbps (the rate: per connection,
 * the data completed after its first completion while posting, over the
 * time from that to its last one, summed; a window's start and end would
 * weigh up to a whole WR each, 0.4 s at 1 MiB on a 20 Mbit/s rail),
 * lat_p50_ns, lat_p99_ns (lat, wlat),
 * connect_p50_ns, connect_p99_ns, connect_max_ns (from creating the
 * connection's PD, CQ and QP to ESTABLISHED, when the QP is ready to send),
 * posted, completed_ok, completed_flush, completed_err, rq_flushed_at_stop,
 * duplicates, lost, verify_errors (local payload checks),
 * remote_verify_errors, remote_recv, remote_missing (data the client saw
 * complete but the server did not receive, or received more than once),
 * seq_gaps, seq_dups, post_errors, conns_broken, steady_bytes, steady_ns and
 * steady_mbps (from the moment every connection was READY to the end of
 * posting: with open_gap_ms, the window where all carry data), a
 * conn<i>=dev,bytes,steady_bytes,port,index line per connection (the
 * server's port of a bond is the rail the request came in on; a server's
 * index is the client's connection), status=ok|error,
 * error=TEXT. The server reports the same keys for its side. Exactly once:
 * posted = completed_ok + completed_flush + completed_err +
 * rq_flushed_at_stop + lost, with duplicates and lost 0.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "xperf.h"

#define XP_CMD_MAX	512
#define XP_FINISH_MS	10000

static const char * const xp_mode_names[] = { "write", "send", "lat", "connect", "wlat" };
static_assert(ARRAY_SIZE(xp_mode_names) == XP_NR_MODES);

static struct dentry *xp_dir;
static DEFINE_MUTEX(xp_run_lock);	/* one run at a time */
static DEFINE_MUTEX(xp_result_lock);	/* xp_result and its length */
static char *xp_result;
static size_t xp_result_len;
static const char *xp_state = "idle";	/* for the scripts' barriers */

void xp_fail(struct xp_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->error[0])
		return;
	va_start(ap, fmt);
	vscnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	pr_err("%s\n", r->error);
}

/* ---- what completions mean ---- */

/* What this connection's server side found, for the client to judge. */
static void xp_send_result(struct xp_conn *c)
{
	struct xp_msg body = {
		.recv = cpu_to_le64(c->recv_data),
		.verify_errors = cpu_to_le64(c->verify_errors),
		.seq_gaps = cpu_to_le64(c->seq_gaps),
		.seq_dups = cpu_to_le64(c->seq_dups),
	};

	if (!xp_post_msg(c, XP_MSG_RESULT, 0, &body))
		c->result_sent = true;
}

/*
 * The peer's message seq of @len bytes: its size, and every word of the
 * pattern from @skip bytes on. False if it is no message of the run's size.
 */
static bool xp_check_payload(struct xp_conn *c, const void *buf, u32 len, u32 skip, u64 seq)
{
	struct xp_run *r = c->run;
	u32 bad;

	if (len != r->p.size) {
		r->verify_errors++;
		c->verify_errors++;
		pr_err_ratelimited("conn %u: DATA of %u bytes, not %u\n", c->idx, len, r->p.size);
		return false;
	}
	bad = xp_check_words(buf + skip, len - skip,
			     xp_seed(r->p.run_id, c->idx, !r->p.role, seq));
	if (bad) {
		r->verify_errors++;
		c->verify_errors++;
		pr_err_ratelimited("conn %u: DATA seq %llu: %u bad words\n", c->idx, seq, bad);
	}
	return true;
}

/* The peer's messages come in order, each once. */
static void xp_check_seq(struct xp_conn *c, u64 seq)
{
	struct xp_run *r = c->run;

	if (seq < c->recv_seq) {
		r->seq_dups++;
		c->seq_dups++;
		pr_err_ratelimited("conn %u: DATA seq %llu again (expected %llu)\n", c->idx, seq,
				   c->recv_seq);
		return;
	}
	if (seq > c->recv_seq) {
		r->seq_gaps++;
		c->seq_gaps++;
		pr_err_ratelimited("conn %u: DATA seq %llu, expected %llu: gap\n", c->idx, seq,
				   c->recv_seq);
	}
	c->recv_seq = seq + 1;
	c->recv_data++;
}

static void xp_ping(struct xp_conn *c)
{
	c->ping_t0 = ktime_get_ns();
	if (!(c->run->p.mode == XP_WLAT ? xp_post_write_imm(c, c->send_seq) :
	      xp_post_msg(c, XP_MSG_DATA, c->send_seq, NULL)))
		c->send_seq++;
}

/* A ping-pong message arrived: the server echoes it, the client times it. */
static void xp_pong(struct xp_conn *c, u64 seq)
{
	struct xp_run *r = c->run;

	if (r->p.role == XP_SERVER) {
		if (r->p.mode == XP_WLAT)
			xp_post_write_imm(c, seq);
		else if (r->p.mode == XP_LAT)
			xp_post_msg(c, XP_MSG_DATA, seq, NULL);
		return;
	}
	if (r->nlat < r->lat_max)
		r->lat[r->nlat++] = ktime_get_ns() - c->ping_t0;
	if (++c->rtts < r->p.iters && !r->stopping)
		xp_ping(c);
}

void xp_recv_msg(struct xp_conn *c, const struct xp_msg *m, u32 len)
{
	struct xp_run *r = c->run;
	u16 type = le16_to_cpu(m->type);

	if (len < sizeof(*m) || le32_to_cpu(m->magic) != XP_MAGIC ||
	    le16_to_cpu(m->conn) != c->idx) {
		r->verify_errors++;
		pr_err_ratelimited("conn %u: a RECV of %u bytes that is no message of it\n",
				   c->idx, len);
		type = 0;
	}
	if (!r->at_stop && !c->stopped && xp_post_recv(c))
		return;
	switch (type) {
	case XP_MSG_READY:
		c->ready = true;
		if (c->gen)
			pr_info("conn %u: reconnected (generation %u)\n", c->idx, c->gen);
		break;
	case XP_MSG_RESULT:
		c->result = *m;
		c->got_result = true;
		break;
	case XP_MSG_DONE:
		/*
		 * send/lat: every DATA the client saw complete must have come,
		 * once (the client judges the same from RESULT).
		 */
		if (r->p.mode != XP_WRITE && le64_to_cpu(m->count) != c->recv_data)
			xp_fail(r, "conn %u: the client completed %llu DATA, %llu came", c->idx,
				le64_to_cpu(m->count), c->recv_data);
		if (r->p.mode != XP_WRITE)
			xp_send_result(c);
		else
			xp_post_inv(c);
		break;
	case XP_MSG_DATA:
		if (xp_check_payload(c, m, len, sizeof(*m), le64_to_cpu(m->seq)))
			xp_check_seq(c, le64_to_cpu(m->seq));
		if (xp_pingpong(r->p.mode))
			xp_pong(c, le64_to_cpu(m->seq));
		break;
	}
}

/*
 * wlat: the peer's WRITE_WITH_IMM landed in the target; its immediate is
 * the message's sequence (low 32 bits: a run has fewer round trips).
 */
void xp_recv_write(struct xp_conn *c, u32 imm, u32 len)
{
	struct xp_run *r = c->run;
	u64 seq = imm;

	if (!r->at_stop && !c->stopped && xp_post_recv(c))
		return;
	if (r->p.mode != XP_WLAT || !c->wbuf) {
		r->verify_errors++;
		pr_err_ratelimited("conn %u: a WRITE_WITH_IMM outside wlat\n", c->idx);
		return;
	}
	ib_dma_sync_single_for_cpu(c->dev, c->wdma, r->p.size, c->wdir);
	if (xp_check_payload(c, c->wbuf, len, 0, seq))
		xp_check_seq(c, seq);
	/* The peer writes the next message only after this one's echo. */
	ib_dma_sync_single_for_device(c->dev, c->wdma, r->p.size, c->wdir);
	xp_pong(c, seq);
}

void xp_ctrl_sent(struct xp_conn *c)
{
	if (c->result_sent)
		c->finished = true;
}

/* The server is READY once its target is; the client (wlat) may ping. */
void xp_target_registered(struct xp_conn *c)
{
	if (c->run->p.role == XP_SERVER)
		xp_post_msg(c, XP_MSG_READY, 0, NULL);
	else
		c->target_ready = true;
}

/* The client's last WRITE (seq 1's pattern) is what the target must hold. */
void xp_target_invalidated(struct xp_conn *c)
{
	struct xp_run *r = c->run;
	u32 bad;

	ib_dma_sync_single_for_cpu(c->dev, c->wdma, r->p.size, c->wdir);
	bad = xp_check_words(c->wbuf, r->p.size, xp_seed(r->p.run_id, c->idx, 0, 1));
	if (bad) {
		r->verify_errors++;
		c->verify_errors++;
		pr_err("conn %u: WRITE target: %u of %u words bad\n", c->idx, bad, r->p.size / 8);
	}
	xp_send_result(c);
}

/* ---- the run's loops ---- */

static bool xp_data_idle(struct xp_run *r)
{
	u32 i;

	for (i = 0; i < r->p.conns; i++)
		if (r->conns[i].sq.inflight)
			return false;
	return true;
}

/*
 * Polls, calling @step (which returns 1 when done, <0 on failure) until it
 * is done; fails after @stall_ms without a completion (0: never) or past
 * @deadline, and on a signal.
 */
static int xp_loop(struct xp_run *r, int (*step)(struct xp_run *r), u32 stall_ms,
		   unsigned long deadline, const char *what)
{
	unsigned long last = jiffies;
	int ret;

	for (;;) {
		ret = step(r);
		if (ret)
			return ret < 0 ? ret : 0;
		if (r->error[0])
			return -EIO;
		if (xp_poll(r) > 0) {
			last = jiffies;
			cond_resched();
			continue;
		}
		if (stall_ms && time_after(jiffies, last + msecs_to_jiffies(stall_ms))) {
			xp_fail(r, "stalled: no completion for %u ms during %s", stall_ms, what);
			return -ETIMEDOUT;
		}
		if (time_after(jiffies, deadline)) {
			xp_fail(r, "timed out during %s", what);
			return -ETIMEDOUT;
		}
		if (fatal_signal_pending(current)) {
			xp_fail(r, "interrupted during %s", what);
			return -EINTR;
		}
		xp_idle(last);
	}
}

static int xp_client_step_connect(struct xp_run *r)
{
	bool all = true;
	u32 i;

	if (xp_client_open_due(r))
		return -EIO;
	for (i = 0; i < r->p.conns; i++) {
		struct xp_conn *c = &r->conns[i];
		enum xp_cm_state st = xp_cm_state(c);

		/* keep_going: broken for good (reconnect gave up, or is off). */
		if (c->stopped && r->p.keep_going)
			continue;
		/*
		 * connect: the server closes a connection once it is
		 * ESTABLISHED, so this poll may see it DISCONNECTED already;
		 * it connected all the same.
		 */
		if (r->p.mode == XP_CONNECT && !r->connect_ns[i]) {
			u64 t = xp_cm_established_at(c);

			if (t)
				r->connect_ns[i] = max_t(u64, t - c->t_connect, 1);
		}
		if (r->p.mode == XP_CONNECT && r->connect_ns[i])
			continue;
		if (st == XP_CM_FAILED || st == XP_CM_DISCONNECTED) {
			/* Broke after connecting, or while connecting again. */
			if ((c->ready || c->gen) && xp_conn_broken(c, "the connection broke"))
				continue;
			xp_fail(r, "conn %u: connecting failed: %d", i, c->cm_status);
			return -ECONNREFUSED;
		}
		if (st == XP_CM_ROUTED && !c->set_up) {
			if (xp_client_setup(c))
				return -EIO;
			/* late_poll_ms: let the server's close land first. */
			if (r->p.late_poll_ms)
				msleep(r->p.late_poll_ms);
		}
		/* wlat: the QP sends from ESTABLISHED on; register the target. */
		if (st == XP_CM_ESTABLISHED && c->mr && !c->target_posted) {
			if (xp_post_reg(c))
				return -EIO;
			c->target_posted = true;
		}
		if (!c->ready || (c->mr && !c->target_ready))
			all = false;
	}
	return all;
}

/*
 * reconnect: a connection that broke while data flowed is torn down (its
 * WRs reaped, each counted once) and opened again as its next generation;
 * rdma_cm and the bond place it on a usable member. After XP_MAX_GENS it
 * stays broken.
 */
static int xp_client_reconnect(struct xp_run *r)
{
	u32 i;

	for (i = 0; i < r->p.conns && r->p.reconnect && !r->stopping; i++) {
		struct xp_conn *c = &r->conns[i];
		u32 gen = c->gen + 1;

		if (!c->stopped || !c->id || gen >= XP_MAX_GENS)
			continue;
		xp_conn_teardown(c);
		if (r->error[0])
			return -EIO;
		spin_lock(&r->lock);
		c->cm_state = XP_CM_IDLE;
		c->cm_status = 0;
		c->t_established = 0;
		spin_unlock(&r->lock);
		c->gen = gen;
		c->set_up = false;
		c->ready = false;
		c->target_posted = false;
		c->target_ready = false;
		c->stopped = false;
		c->got_result = false;
		c->send_seq = 0;
		c->recv_seq = 0;
		c->data_ok_gen = 0;
		memset(&c->sq, 0, sizeof(c->sq));
		memset(&c->rq, 0, sizeof(c->rq));
		r->reconnects++;
		pr_info("conn %u: reconnecting (generation %u)\n", i, gen);
		if (xp_client_open(r, c))
			return -EIO;
	}
	return 0;
}

/* Keeps depth data WRs outstanding on every READY connection. */
static int xp_client_pump(struct xp_run *r)
{
	u32 i;

	for (i = 0; i < r->p.conns && !xp_pingpong(r->p.mode); i++) {
		struct xp_conn *c = &r->conns[i];

		while (c->ready && !c->stopped && !r->stopping && c->sq.inflight < r->p.depth) {
			int ret = r->p.mode == XP_WRITE ? xp_post_write(c) :
				  xp_post_msg(c, XP_MSG_DATA, c->send_seq, NULL);

			if (ret && !r->error[0])
				break;	/* keep_going: c broke */
			if (ret)
				return ret;
			c->send_seq++;
		}
	}
	return 0;
}

static bool xp_elapsed(u64 since, u32 ms)
{
	return ktime_get_ns() - since >= (u64)ms * NSEC_PER_MSEC;
}

static int xp_client_step_data(struct xp_run *r)
{
	u32 i;

	if (xp_pingpong(r->p.mode)) {
		for (i = 0; i < r->p.conns; i++)
			if (r->conns[i].rtts < r->p.iters)
				return 0;
		return 1;
	}
	if (r->p.reconnect) {
		int ret = xp_client_reconnect(r) ?: xp_client_step_connect(r);

		if (ret < 0)
			return ret;
	}
	return xp_client_pump(r) ?: xp_elapsed(r->t_start, r->p.duration_ms);
}

/*
 * open_gap_ms: each connection carries data from its READY on, while the
 * later ones are still being opened (and placed by a bond that sees the
 * load); the run lasts duration_ms after the last one is READY.
 */
static int xp_client_step_staggered(struct xp_run *r)
{
	int all = xp_client_reconnect(r) ?: xp_client_step_connect(r), ret;
	u32 i;

	if (all < 0)
		return all;
	for (i = 0; i < r->p.conns && !r->t_start; i++)
		if (r->conns[i].ready)
			r->t_start = ktime_get_ns();
	if (all && !r->t_all_ready) {
		r->t_all_ready = ktime_get_ns();
		for (i = 0; i < r->p.conns; i++)
			r->conns[i].data_ok_steady = r->conns[i].data_ok;
		xp_state = "running";
	}
	ret = xp_client_pump(r);
	if (ret)
		return ret;
	return r->t_all_ready && xp_elapsed(r->t_all_ready, r->p.duration_ms);
}

static int xp_step_sq_idle(struct xp_run *r)
{
	return xp_data_idle(r);
}

static int xp_client_step_results(struct xp_run *r)
{
	u32 i;

	for (i = 0; i < r->p.conns; i++)
		if (!r->conns[i].got_result && !r->conns[i].stopped)
			return 0;
	return 1;
}

/* The final WRITE of every connection, then DONE with its count. */
static int xp_client_finish(struct xp_run *r)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(XP_FINISH_MS);
	u32 i;
	int ret;

	if (r->p.mode == XP_WRITE) {
		for (i = 0; i < r->p.conns; i++) {
			struct xp_conn *c = &r->conns[i];

			if (c->stopped)
				continue;
			xp_fill_words(c->wbuf, r->p.size, xp_seed(r->p.run_id, i, 0, 1));
			/* corrupt=1: one byte of connection 0's final WRITE. */
			if (r->p.corrupt && !i)
				((u8 *)c->wbuf)[r->p.size - 1] ^= 0x40;
			ib_dma_sync_single_for_device(c->dev, c->wdma, r->p.size, c->wdir);
			ret = xp_post_write(c);
			if (ret)
				return ret;
		}
		ret = xp_loop(r, xp_step_sq_idle, XP_STALL_MS, deadline, "the final WRITEs");
		if (ret)
			return ret;
	}
	for (i = 0; i < r->p.conns; i++) {
		struct xp_conn *c = &r->conns[i];
		struct xp_msg body = { .count = cpu_to_le64(c->data_ok_gen) };

		if (c->stopped)
			continue;
		ret = xp_post_msg(c, XP_MSG_DONE, 0, &body);
		if (ret)
			return ret;
	}
	return xp_loop(r, xp_client_step_results, 0, deadline, "the server's results");
}

/* What the server found, against what completed here. */
static void xp_client_judge(struct xp_run *r)
{
	u32 i;

	for (i = 0; i < r->p.conns; i++) {
		struct xp_conn *c = &r->conns[i];
		u64 recv = le64_to_cpu(c->result.recv);

		if (c->stopped)
			continue;
		r->remote_verify_errors += le64_to_cpu(c->result.verify_errors);
		r->remote_seq_errors += le64_to_cpu(c->result.seq_gaps) +
					le64_to_cpu(c->result.seq_dups);
		r->remote_recv += recv;
		/* A successful SEND completion means the server received it. */
		/* reconnect: the server counts this generation's only. */
		if (r->p.mode != XP_WRITE && recv != c->data_ok_gen) {
			r->remote_missing += recv > c->data_ok_gen ? recv - c->data_ok_gen :
					     c->data_ok_gen - recv;
			xp_fail(r, "conn %u: %llu DATA completed here, %llu received there", i,
				c->data_ok_gen, recv);
		}
	}
	for (i = 0; i < r->p.conns && r->conns[i].stopped; i++)
		;
	if (i == r->p.conns)
		xp_fail(r, "every connection broke");
	if (r->remote_verify_errors || r->remote_seq_errors)
		xp_fail(r, "the server found %llu bad payloads and %llu sequence errors",
			r->remote_verify_errors, r->remote_seq_errors);
}

static int xp_client_run(struct xp_run *r)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(r->p.connect_ms +
							   r->p.conns * r->p.open_gap_ms);
	u32 i;
	int ret;

	xp_state = "connecting";
	if (r->p.open_gap_ms && r->p.mode != XP_CONNECT && !xp_pingpong(r->p.mode)) {
		ret = xp_loop(r, xp_client_step_staggered, XP_STALL_MS,
			      deadline + msecs_to_jiffies(r->p.duration_ms), "staggered data");
	} else {
		ret = xp_loop(r, xp_client_step_connect, 0, deadline, "connect");
		if (ret || r->p.mode == XP_CONNECT)
			return ret;
		xp_state = "running";
		r->t_start = ktime_get_ns();
		r->t_all_ready = r->t_start;
		if (xp_pingpong(r->p.mode))
			for (i = 0; i < r->p.conns; i++)
				xp_ping(&r->conns[i]);
		ret = xp_loop(r, xp_client_step_data, XP_STALL_MS, MAX_JIFFY_OFFSET + jiffies,
			      "data");
	}
	/*
	 * The window a rate is measured over ends here: what completes later
	 * was in flight, and a slow rail's queue would stretch the window
	 * while the others idle.
	 */
	r->stopping = true;
	r->t_stop = ktime_get_ns();
	xp_state = "draining";
	for (i = 0; i < r->p.conns; i++)
		r->conns[i].data_ok_stop = r->conns[i].data_ok;
	if (ret)
		return ret;
	ret = xp_loop(r, xp_step_sq_idle, XP_STALL_MS, MAX_JIFFY_OFFSET + jiffies, "the last data");
	r->t_end = ktime_get_ns();
	if (ret)
		return ret;
	ret = xp_client_finish(r);
	if (!ret)
		xp_client_judge(r);
	return ret;
}

static int xp_server_step(struct xp_run *r)
{
	bool removed;
	u32 i, finished = 0;

	spin_lock(&r->lock);
	removed = r->removed;
	spin_unlock(&r->lock);
	if (removed) {
		xp_fail(r, "the listening device was removed");
		return -ENODEV;
	}
	for (i = 0; i < r->nconns; i++) {
		struct xp_conn *c = &r->conns[i];
		enum xp_cm_state st = xp_cm_state(c);
		u32 k;

		if (st == XP_CM_ESTABLISHED && !c->set_up) {
			c->set_up = true;
			if (r->p.mode == XP_CONNECT) {
				c->finished = true;
				continue;
			}
			for (k = 0; k < r->p.depth + 4; k++)
				if (xp_post_recv(c))
					return -EIO;
			/* write, wlat: READY once the target is registered. */
			if (c->mr ? xp_post_reg(c) :
			    xp_post_msg(c, XP_MSG_READY, 0, NULL))
				return -EIO;
		}
		/* keep_going: its QP failed (flushed by the bond, say). */
		if (c->stopped && r->p.keep_going)
			c->finished = true;
		if (c->finished) {
			finished++;
			continue;
		}
		/*
		 * The client disconnects once it has the RESULT, maybe before
		 * its completion is reaped here: that one comes all the same.
		 */
		if (st == XP_CM_FAILED || (st == XP_CM_DISCONNECTED && !c->result_sent)) {
			if (c->set_up && xp_conn_broken(c, "the connection broke")) {
				c->finished = true;
				continue;
			}
			xp_fail(r, "conn %u: %s before its result (%d)", i,
				st == XP_CM_FAILED ? "failed" : "disconnected", c->cm_status);
			return -ECONNRESET;
		}
	}
	if (!r->p.reconnect)
		return finished == r->p.conns;
	/*
	 * reconnect: done when every connection has a generation that sent
	 * its RESULT; an older one whose rail died may never notice (its
	 * teardown reaps it).
	 */
	for (i = 0; i < r->p.conns; i++) {
		u32 g;

		for (g = 0; g < XP_MAX_GENS; g++)
			if (r->conns[i * XP_MAX_GENS + g].result_sent &&
			    r->conns[i * XP_MAX_GENS + g].finished)
				break;
		if (g == XP_MAX_GENS)
			return 0;
	}
	return 1;
}

static int xp_server_run(struct xp_run *r)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(r->p.timeout_ms);
	int ret;

	ret = xp_server_listen(r);
	if (ret)
		return ret;
	xp_state = "listening";
	ret = xp_loop(r, xp_server_step, 0, deadline, "the client's run");
	/* The client disconnects after RESULT: leave it time to read it. */
	return ret;
}

/* ---- results ---- */

static int xp_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 xp_pct(u64 *v, u64 n, u32 pct)
{
	return n ? v[min_t(u64, n - 1, n * pct / 100)] : 0;
}

/* Exactly once, every payload as sent, and the run itself worked. */
static bool xp_ok(const struct xp_run *r)
{
	return !r->error[0] && !r->dups && !r->lost && !r->verify_errors && !r->seq_gaps &&
	       !r->seq_dups;
}

/* paced_kbps (see the result keys); 0 when no connection completed twice. */
static u64 xp_paced_kbps(struct xp_run *r)
{
	u64 kbps = 0;
	u32 i;

	for (i = 0; i < r->p.conns; i++) {
		struct xp_conn *c = &r->conns[i];
		u64 ns = c->t_last_ok - c->t_first_ok;

		if (c->data_ok_last >= 2 && ns)
			kbps += div64_u64((c->data_ok_last - 1) * r->p.size * 8 * USEC_PER_SEC, ns);
	}
	return kbps;
}

static size_t xp_report(struct xp_run *r, char *buf, size_t size)
{
	u64 ns = r->t_end > r->t_start ? r->t_end - r->t_start : 0, bytes = 0, nconn = 0;
	u64 win_ns = r->t_stop > r->t_start ? r->t_stop - r->t_start : 0, win = 0;
	u64 steady_ns = r->t_stop > r->t_all_ready && r->t_all_ready ?
			r->t_stop - r->t_all_ready : 0;
	u64 steady = 0;
	bool ok = xp_ok(r);
	size_t n = 0;
	u32 i;

	for (i = 0; i < r->p.conns; i++) {
		bytes += r->conns[i].data_ok * r->p.size;
		win += r->conns[i].data_ok_stop * r->p.size;
		steady += (r->conns[i].data_ok_stop - r->conns[i].data_ok_steady) * r->p.size;
		if (r->connect_ns[i])
			r->connect_ns[nconn++] = r->connect_ns[i];
	}
	sort(r->connect_ns, nconn, sizeof(u64), xp_cmp_u64, NULL);
	sort(r->lat, r->nlat, sizeof(u64), xp_cmp_u64, NULL);
	n += scnprintf(buf + n, size - n,
		       "role=%s\nmode=%s\nconns=%u\nsize=%u\ndepth=%u\nrun_id=%u\nbytes=%llu\n"
		       "elapsed_ns=%llu\nwindow_bytes=%llu\nwindow_ns=%llu\nmbps=%llu\n",
		       r->p.role == XP_SERVER ? "server" : "client", xp_mode_names[r->p.mode],
		       r->p.conns, r->p.size, r->p.depth, r->p.run_id, bytes, ns, win, win_ns,
		       win_ns ? div64_u64(win * 8 * 1000, win_ns) : 0);
	n += scnprintf(buf + n, size - n, "steady_bytes=%llu\nsteady_ns=%llu\nsteady_mbps=%llu\n",
		       steady, steady_ns, steady_ns ? div64_u64(steady * 8 * 1000, steady_ns) : 0);
	n += scnprintf(buf + n, size - n, "paced_kbps=%llu\n", xp_paced_kbps(r));
	if (xp_pingpong(r->p.mode))
		n += scnprintf(buf + n, size - n, "rtts=%llu\nlat_p50_ns=%llu\nlat_p99_ns=%llu\n",
			       r->nlat, xp_pct(r->lat, r->nlat, 50), xp_pct(r->lat, r->nlat, 99));
	if (r->p.role == XP_CLIENT)
		n += scnprintf(buf + n, size - n,
			       "connect_p50_ns=%llu\nconnect_p99_ns=%llu\nconnect_max_ns=%llu\n"
			       "remote_recv=%llu\nremote_verify_errors=%llu\nremote_missing=%llu\n",
			       xp_pct(r->connect_ns, nconn, 50), xp_pct(r->connect_ns, nconn, 99),
			       nconn ? r->connect_ns[nconn - 1] : 0, r->remote_recv,
			       r->remote_verify_errors, r->remote_missing);
	n += scnprintf(buf + n, size - n,
		       "posted=%llu\ncompleted_ok=%llu\ncompleted_flush=%llu\ncompleted_err=%llu\n"
		       "rq_flushed_at_stop=%llu\nduplicates=%llu\nlost=%llu\nverify_errors=%llu\n"
		       "seq_gaps=%llu\nseq_dups=%llu\npost_errors=%llu\nconns_broken=%u\n"
		       "reconnects=%u\n",
		       r->posted, r->ok, r->flush, r->err, r->stop_flush, r->dups, r->lost,
		       r->verify_errors, r->seq_gaps, r->seq_dups, r->post_errors, r->conns_broken,
		       r->reconnects);
	for (i = 0; i < r->nconns; i++) {
		struct xp_conn *c = &r->conns[i];

		/* A server's slots of generations that never came stay out. */
		if (r->p.role == XP_SERVER && !c->dev)
			continue;
		n += scnprintf(buf + n, size - n, "conn%u=%s,%llu,%llu,%u,%u\n", i,
			       c->dev ? dev_name(&c->dev->dev) : "-", c->data_ok * r->p.size,
			       (c->data_ok_stop - c->data_ok_steady) * r->p.size, c->port, c->idx);
	}
	n += scnprintf(buf + n, size - n, "status=%s\n", ok ? "ok" : "error");
	if (!ok)
		n += scnprintf(buf + n, size - n, "error=%s\n",
			       r->error[0] ? r->error :
			       "duplicate or lost completions, or bad payloads");
	return n;
}

static int xp_run(struct xp_params *p)
{
	struct xp_run *r;
	u32 i;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->p = *p;
	spin_lock_init(&r->lock);
	r->nconns = p->conns * (p->role == XP_SERVER && p->reconnect ? XP_MAX_GENS : 1);
	r->conns = vzalloc(array_size(r->nconns, sizeof(*r->conns)));
	r->connect_ns = vzalloc(array_size(p->conns, sizeof(u64)));
	if (xp_pingpong(p->mode) && p->role == XP_CLIENT) {
		r->lat_max = (u64)p->conns * p->iters;
		r->lat = vmalloc(array_size(r->lat_max, sizeof(u64)));
	}
	if (!r->conns || !r->connect_ns || (r->lat_max && !r->lat)) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->nconns; i++) {
		r->conns[i].run = r;
		r->conns[i].idx = i;
	}
	ret = p->role == XP_SERVER ? xp_server_run(r) : xp_client_run(r);
	xp_state = "stopping";
	xp_server_unlisten(r);
	r->stopping = true;
	r->at_stop = true;
	for (i = 0; i < r->nconns; i++)
		xp_conn_teardown(&r->conns[i]);
	mutex_lock(&xp_result_lock);
	xp_result_len = xp_report(r, xp_result, XP_RESULT_MAX);
	mutex_unlock(&xp_result_lock);
	if (!ret && !xp_ok(r))
		ret = -EIO;
	if (ret && ret != -EINTR)
		ret = -EIO;
out:
	vfree(r->lat);
	vfree(r->connect_ns);
	vfree(r->conns);
	kfree(r);
	xp_state = "idle";
	return ret;
}

/* ---- parsing ---- */

static int xp_parse_addrs(const char *val, __be32 *out, u32 *n)
{
	char buf[16];
	const char *p = val;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (*n == XP_MAX_ADDRS || !len || len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (!in4_pton(buf, -1, (u8 *)&out[*n], -1, NULL))
			return -EINVAL;
		(*n)++;
		p += len;
		if (*p == ',')
			p++;
	}
	return *n ? 0 : -EINVAL;
}

static int xp_parse_devs(const char *val, struct xp_params *p)
{
	const char *s = val;

	p->ndev = 0;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (p->ndev == XP_MAX_ADDRS || !len || len >= IB_DEVICE_NAME_MAX)
			return -EINVAL;
		memcpy(p->dev[p->ndev], s, len);
		p->dev[p->ndev++][len] = 0;
		s += len;
		if (*s == ',')
			s++;
	}
	return p->ndev ? 0 : -EINVAL;
}

static const struct {
	const char *key;
	size_t off;
	u32 min, max;
} xp_u32_keys[] = {
	{ "cm_port", offsetof(struct xp_params, cm_port), 1, 65535 },
	{ "conns", offsetof(struct xp_params, conns), 1, XP_MAX_CONNS },
	{ "size", offsetof(struct xp_params, size), 8, XP_MAX_SIZE },
	{ "depth", offsetof(struct xp_params, depth), 1, XP_MAX_DEPTH },
	{ "duration_ms", offsetof(struct xp_params, duration_ms), 1, 3600000 },
	{ "iters", offsetof(struct xp_params, iters), 1, 10000000 },
	{ "connect_ms", offsetof(struct xp_params, connect_ms), 100, 600000 },
	{ "timeout_ms", offsetof(struct xp_params, timeout_ms), 100, 3600000 },
	{ "open_gap_ms", offsetof(struct xp_params, open_gap_ms), 0, 60000 },
	{ "keep_going", offsetof(struct xp_params, keep_going), 0, 1 },
	{ "reconnect", offsetof(struct xp_params, reconnect), 0, 1 },
	{ "corrupt", offsetof(struct xp_params, corrupt), 0, 1 },
	{ "late_poll_ms", offsetof(struct xp_params, late_poll_ms), 0, 10000 },
};

static int xp_parse_kv(struct xp_params *p, const char *key, const char *val)
{
	u32 i, v;

	if (!strcmp(key, "role")) {
		if (!strcmp(val, "client"))
			p->role = XP_CLIENT;
		else if (!strcmp(val, "server"))
			p->role = XP_SERVER;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "mode")) {
		i = match_string(xp_mode_names, ARRAY_SIZE(xp_mode_names), val);
		if ((int)i < 0)
			return -EINVAL;
		p->mode = i;
		return 0;
	}
	if (!strcmp(key, "local"))
		return xp_parse_addrs(val, p->local, &p->nlocal);
	if (!strcmp(key, "peer"))
		return xp_parse_addrs(val, p->peer, &p->npeer);
	if (!strcmp(key, "dev"))
		return xp_parse_devs(val, p);
	for (i = 0; i < ARRAY_SIZE(xp_u32_keys); i++) {
		if (strcmp(key, xp_u32_keys[i].key))
			continue;
		if (kstrtou32(val, 0, &v) || v < xp_u32_keys[i].min || v > xp_u32_keys[i].max)
			return -EINVAL;
		*(u32 *)((char *)p + xp_u32_keys[i].off) = v;
		return 0;
	}
	return -ENOENT;
}

static int xp_parse(char *cmd, struct xp_params *p)
{
	bool have_role = false, have_size = false;
	char *tok;
	int ret;

	*p = (struct xp_params){
		.cm_port = 18600, .conns = 1, .depth = 16, .duration_ms = 3000,
		.iters = 1000, .connect_ms = 30000, .timeout_ms = 120000,
	};
	while ((tok = strsep(&cmd, " \t\n"))) {
		char *val;

		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val) {
			pr_err("'%s': expected key=value\n", tok);
			return -EINVAL;
		}
		*val++ = 0;
		ret = xp_parse_kv(p, tok, val);
		if (ret) {
			pr_err("%s: %s\n", tok, ret == -ENOENT ? "unknown key" : "bad value");
			return -EINVAL;
		}
		have_role |= !strcmp(tok, "role");
		have_size |= !strcmp(tok, "size");
	}
	if (!have_role || !p->nlocal || (p->role == XP_CLIENT && !p->npeer)) {
		pr_err("role, local and (client) peer are required\n");
		return -EINVAL;
	}
	if (!have_size)
		p->size = p->mode == XP_WRITE ? SZ_64K : p->mode == XP_SEND ? SZ_4K : 64;
	if (xp_msg_sized(p->mode) &&
	    (p->size < XP_CTRL_SIZE || p->size > XP_MAX_MSG || p->size % 8)) {
		pr_err("size: send, lat and wlat take 64..65536, a multiple of 8\n");
		return -EINVAL;
	}
	if (p->mode == XP_WRITE && p->size % 8) {
		pr_err("size: a multiple of 8\n");
		return -EINVAL;
	}
	/* A connection that reconnects has broken first: the run goes on. */
	if (p->reconnect)
		p->keep_going = 1;
	p->run_id = get_random_u32();
	return 0;
}

/* ---- debugfs ---- */

static ssize_t xp_run_write(struct file *file, const char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	struct xp_params p;
	char *cmd;
	int ret;

	if (len >= XP_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	ret = xp_parse(cmd, &p);
	kfree(cmd);
	if (ret)
		return ret;
	if (!mutex_trylock(&xp_run_lock))
		return -EBUSY;
	ret = xp_run(&p);
	mutex_unlock(&xp_run_lock);
	return ret ?: len;
}

static ssize_t xp_result_read(struct file *file, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&xp_result_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, xp_result, xp_result_len);
	mutex_unlock(&xp_result_lock);
	return ret;
}

static ssize_t xp_state_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[16];
	int n = scnprintf(buf, sizeof(buf), "%s\n", READ_ONCE(xp_state));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations xp_run_fops = {
	.owner = THIS_MODULE,
	.write = xp_run_write,
};

static const struct file_operations xp_result_fops = {
	.owner = THIS_MODULE,
	.read = xp_result_read,
};

static const struct file_operations xp_state_fops = {
	.owner = THIS_MODULE,
	.read = xp_state_read,
};

static int __init xp_init(void)
{
	xp_result = vzalloc(XP_RESULT_MAX);
	if (!xp_result)
		return -ENOMEM;
	xp_dir = debugfs_create_dir("mrbond_xperf", NULL);
	debugfs_create_file("run", 0200, xp_dir, NULL, &xp_run_fops);
	debugfs_create_file("result", 0400, xp_dir, NULL, &xp_result_fops);
	debugfs_create_file("state", 0400, xp_dir, NULL, &xp_state_fops);
	return 0;
}

static void __exit xp_exit(void)
{
	debugfs_remove_recursive(xp_dir);
	vfree(xp_result);
}

module_init(xp_init);
module_exit(xp_exit);
MODULE_DESCRIPTION("RDMA traffic between hosts through rdma_cm, with payload checks");
MODULE_LICENSE("GPL");
