// SPDX-License-Identifier: GPL-2.0
/*
 * mrbond_kperf: in-kernel RDMA traffic with payload checks, a krping-like
 * selftest tool for any kernel RoCE device (a raw rxe device, or the
 * rdma_mrbond virtual device), using only standard kernel verbs.
 *
 * Usage (debugfs):
 *
 *   echo "dev=rxe0 gid=198.18.10.1 mode=bw qps=2 iters=200" \
 *           >/sys/kernel/debug/mrbond_kperf/run
 *   cat /sys/kernel/debug/mrbond_kperf/result
 *
 * The write runs the test synchronously in the writer's context. It returns
 * the byte count if the run ended with status=ok; -EINVAL for a bad or
 * missing key (a pr_err names the key), -ENODEV for an unknown device,
 * -EBUSY while another run is in progress, -EINTR when a signal interrupted
 * the run, and -EIO for any other failed run. Every run that got as far as
 * finding the device leaves its result, as key=value lines, in "result".
 *
 * Keys (default in brackets):
 *   dev=NAME          ib device (required)
 *   port=N            port number [1]
 *   gid=A.B.C.D       IPv4 address whose RoCE v2 GID is both the source and
 *                     the destination GID (required): QPs run in loopback
 *   mode=bw|lat|stream|keycheck
 *                     bw: RDMA WRITE bandwidth, A_i writes to B_i's buffer;
 *                     lat: SEND/RECV ping-pong, A_i pings, B_i echoes;
 *                     stream: SENDs and RDMA WRITEs in both directions for
 *                     duration_ms, meant to be interrupted by faults;
 *                     keycheck: posts that use another PD's MR (below),
 *                     needs qps>=2 and pd_per_pair=1 [bw]
 *   qps=N             QP pairs, 1..16 [1, keycheck 2]
 *   size=BYTES        payload per WR [bw 65536, lat 64, stream 4096,
 *                     keycheck 4096 (at least 64)]
 *   depth=N           outstanding WRs per QP, 1..128 [16]
 *   iters=N           WRITEs (bw) or round trips (lat) per pair [1000]
 *   duration_ms=N     stream run time [5000]
 *   pace_ms=N         stream: at most one new WR per QP every N ms, so that
 *                     posts keep coming while completions stall (a race
 *                     test's window); 0 fills every QP to depth [0]
 *   shared_cq=0|1     one CQ for every QP, or one CQ per QP [1]
 *   sends_only=0|1    stream: SENDs only, no RDMA WRITE and no MR: a
 *                     QP whose keys nothing names, which a bond with
 *                     transparent failover can move to another member [0]
 *   read=0|1          bw: after the WRITEs, every A reads its peer's target
 *                     back into its emptied WRITE source with a chain of
 *                     RDMA READs (a page per SGE, only the last WR
 *                     signaled, as rdma_rw reads) and checks it
 *                     (verify_errors) [0]
 *   remap_ms=N        bw: instead of the WRITEs, B_0's FRWR target is mapped
 *                     again and again with ib_map_mr_sg() from process
 *                     context (as rpcrdma and iSER map) for N ms, 1 ms
 *                     apart, while the caller removes members; result
 *                     keys maps and map_errors [0]
 *   cb_probe_ms=N     bw: instead of the WRITEs, a probe QP on its own armed
 *                     CQ (on pair 0's PD) waits N ms, during which the
 *                     caller removes its member, then posts one SEND; the
 *                     completion callback must come, and not from inside
 *                     that post (a device that calls back into the ULP's
 *                     own post breaks ULPs that post under their locks);
 *                     result keys cb_post, cb_calls, cb_in_post [0]
 *   armed_cq_ms=N     bw: instead of the WRITEs, a CQ of its own, armed,
 *                     held N ms and destroyed, while the caller removes a
 *                     member; then 10 s for a callback after the destroy;
 *                     result keys cb_calls, cb_late [0]
 *   fatal_qp_ms=N     bw: instead of the WRITEs, an RC QP of its own, held
 *                     N ms (while the caller fails its member) and
 *                     destroyed; then 10 s for a QP event after the
 *                     destroy; result keys ev_fatal, ev_late [0]
 *   abandon=0|1       bw: first, A_0 posts depth RDMA WRITEs, left to
 *                     complete unpolled, and is destroyed without a drain
 *                     (as a ULP tearing down after an error may do); pair 0
 *                     then takes no part. Any completion of A_0 polled
 *                     later is a stale_completion and fails the run; needs
 *                     qps>=2 [0]
 *   pd_per_pair=0|1   one PD for every QP, or one PD per pair [0]
 *   global_rkey=0|1   the PDs ask for an unsafe global rkey [0]
 *   unmapped=0|1      buffers are not DMA-mapped: the SGEs and the FRWR
 *                     page list carry kernel virtual addresses, right only
 *                     for a virtual-DMA device (rxe). On one that needs
 *                     DMA mapping the run must fail with error completions
 *                     or a refused mapping, never a stray write: the test
 *                     of a DMA test double's strictness [0]
 *
 * QP creation order, with pd_per_pair=0: the PD, then all qps "A" QPs
 * (A_0..A_n-1), then all "B" QPs (B_0..B_n-1), then the buffers and MRs; A_i
 * is connected to B_i. A device that places QPs round robin over its members
 * (the bond) thus puts A_i and B_i on different members whenever qps is not a
 * multiple of the member count. With pd_per_pair=1, pair by pair: PD_i, A_i,
 * B_i, then pair i's buffers and MRs, all of PD_i (local SGEs use PD_i's
 * local_dma_lkey). A device that puts every QP of a PD on the member of its
 * first QP and binds an MR to the member of its PD's QPs (the bond, for a ULP
 * it does not know) thus keeps each pair, MRs included, on one member.
 *
 * keycheck sets the pairs up as bw does (connected QPs, B_i's FRWR target
 * registered with REG_MR), plus depth RECVs on every B_i so that a probe
 * SEND that gets through completes, then posts on A_1, of PD_1, three
 * signaled WRs that use pair 0's MR (B_0's, of PD_0):
 * a SEND of 64 bytes whose SGE is that MR's lkey and address, a REG_MR of
 * that MR with its current key and LOCAL_WRITE access, and a LOCAL_INV of
 * its rkey. Each post's return
 * value is recorded; a WR that a post accepted is reaped like any other, and
 * its completion status recorded, whatever it is. A device that binds MRs to
 * members rejects all three posts with -EINVAL when PD_0 and PD_1 live on
 * different members; another device fails them in their completions at the
 * latest. status=ok tells that the run itself worked (setup, teardown,
 * exactly-once completions): the probes' results are for the caller to
 * judge.
 *
 * Result keys: dev, mode, qps, size, depth, shared_cq, pd_per_pair, bytes,
 * elapsed_ns, mbps (payload megabit/s), lat_p50_ns and lat_p99_ns (lat),
 * posted, completed_ok, completed_flush, completed_err (other statuses),
 * rq_flushed_at_stop (RECVs flushed by the tool's own final move to the
 * error state), duplicates (a WR completed twice), lost (posted, never
 * completed 10 s after stopping), verify_errors (payload mismatches, which
 * include the seq_dups and seq_gaps of the SEND sequence), post_errors,
 * status=ok|error and error=TEXT. posted = completed_ok + completed_flush +
 * completed_err + rq_flushed_at_stop + lost when duplicates is 0.
 *
 * keycheck adds keycheck_rets=A,B,C (the return values of the SEND's, the
 * REG_MR's and the LOCAL_INV's posts), keycheck_wc=A,B,C (the enum ib_wc_status of an accepted
 * probe's completion, which the log names; "-" for a rejected probe),
 * keycheck_einval (how many of the three posts returned -EINVAL) and
 * keycheck_recv (probe SENDs that B_1 received). The probes' completions are
 * counted in posted and completed_*, but do not fail the run. It also posts
 * a chain of three WRITEs whose second has 17 SGEs: chain_ret (the post's
 * return value) and chain_bad (the index of *bad_wr in the chain, -1 for
 * none); the WRITEs posted must complete, and once.
 *
 * abandon=1 adds abandoned (A_0's WRs outstanding when it was destroyed)
 * and stale_completions (completions of A_0 polled after that); the run
 * fails if any came.
 *
 * stream is the exactly-once checker of failover tests: completion errors
 * are expected there. The first failed completion of a QP stops all posting
 * on that QP; every posted WR (SQ and RQ) must still complete exactly once,
 * and every SEND that completed successfully must have been received, in
 * order, exactly once. status=ok iff duplicates, lost and verify_errors are
 * 0. In bw and lat, any failed or flushed completion is an error.
 *
 * Mechanics: one PD (or one per pair) without an unsafe global rkey
 * (global_rkey=1 asks for one, which a bond refuses: its QPs of one PD live
 * on several HCAs),
 * IB_POLL_DIRECT CQs polled by the writer (with cond_resched(), sleeping only
 * after 20 ms without a completion; 10 s without any completion is a stall),
 * kmalloc'd DMA-mapped buffers with their PD's local_dma_lkey, an
 * FRWR-registered RDMA WRITE target (IB_WR_REG_MR at start, IB_WR_LOCAL_INV
 * at the end), RC QPs connected back to back without rdma_cm. Teardown: move
 * every QP to the error state and reap every WR, ib_drain_qp(),
 * ib_dereg_mr(), ib_destroy_qp(), ib_free_cq(), unmap, ib_dealloc_pd() of
 * every PD. If WRs were lost, ib_drain_qp() (which waits without bound) is
 * skipped and the QPs are destroyed as they are.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#define KPERF_MAX_QPS		16
#define KPERF_MAX_DEPTH		128
#define KPERF_MAX_BW_SIZE	SZ_1M
#define KPERF_MAX_MSG_SIZE	SZ_64K
#define KPERF_MAX_ITERS		10000000
#define KPERF_MAX_LAT_SAMPLES	1000000
#define KPERF_MAX_BUF_BYTES	SZ_64M
#define KPERF_STALL_MS		10000
#define KPERF_ABANDON_MS	300	/* abandon: A_0's WRITEs complete meanwhile */
#define KPERF_SPIN_MS		20
#define KPERF_POLL_BUDGET	256
#define KPERF_MAGIC		0x6b706572	/* "kper" */
#define KPERF_CMD_MAX		512
#define KPERF_RESULT_MAX	2048
#define KPERF_PROBE_LEN		64	/* keycheck: bytes of the probe SEND */
#define KPERF_ACCESS		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)

enum kperf_mode { KPERF_BW, KPERF_LAT, KPERF_STREAM, KPERF_KEYCHECK };

static const char * const kperf_mode_names[] = { "bw", "lat", "stream", "keycheck" };

/* The keycheck probes come last, in the order they are posted. */
enum kperf_op {
	KPERF_OP_SEND, KPERF_OP_WRITE, KPERF_OP_RECV, KPERF_OP_REG, KPERF_OP_INV,
	KPERF_OP_READ, KPERF_OP_PROBE_SEND, KPERF_OP_PROBE_REG, KPERF_OP_PROBE_INV
};

#define KPERF_NPROBES		3
/* keycheck's chain: WRs, and the SGEs of its bad one (the vdev takes 16). */
#define KPERF_CHAIN_LEN		3
#define KPERF_CHAIN_SGES	17
/*
 * The WRITE source is read=1's READ sink too: one direction for its map,
 * syncs and unmap (the DMA API checks they agree).
 */
#define KPERF_WSRC_DIR		DMA_BIDIRECTIONAL
/* read=1: the READ chain's WRs, and the SGEs of each (a page each). */
#define KPERF_READ_WRS		8
#define KPERF_READ_SGES		2

static const char * const kperf_op_names[] = {
	"SEND", "RDMA_WRITE", "RECV", "REG_MR", "LOCAL_INV", "RDMA_READ", "probe SEND",
	"probe REG_MR", "probe LOCAL_INV"
};

struct kperf_params {
	char dev[IB_DEVICE_NAME_MAX];
	u32 port;
	__be32 addr;
	enum kperf_mode mode;
	u32 qps;
	u32 size;
	u32 depth;
	u32 iters;
	u32 duration_ms;
	u32 pace_ms;
	u32 shared_cq;
	u32 pd_per_pair;
	u32 abandon;
	u32 remap_ms;
	u32 cb_probe_ms;
	u32 armed_cq_ms;
	u32 fatal_qp_ms;
	u32 global_rkey;
	u32 unmapped;
	u32 read;
	u32 sends_only;
};

/* Head of every SEND payload; the rest is a pattern seeded by it. */
struct kperf_hdr {
	__le32 magic;
	__le16 pair;
	__le16 side;
	__le64 seq;
};

struct kperf_queue;

/* One WR context: its ib_cqe is the wr_cqe of every WR posted from it. */
struct kperf_slot {
	struct ib_cqe cqe;
	struct kperf_queue *q;
	void *buf;		/* SEND or RECV payload, if any */
	u64 dma;
	enum kperf_op op;
	bool busy;		/* posted, not completed yet */
};

/*
 * The slots of one work queue. There are twice as many slots as WRs can be
 * outstanding, taken round robin, so that a slot is idle for a while after
 * its completion: a late second completion of a WR then finds it idle and
 * counts as a duplicate.
 */
struct kperf_queue {
	struct kperf_ep *ep;
	struct kperf_slot *slots;
	u32 nslots;
	u32 next;
	u32 inflight;
	enum dma_data_direction dir;
};

/* One QP: side 0 is A_pair, side 1 is B_pair. */
struct kperf_ep {
	struct kperf_run *run;
	struct kperf_ep *peer;
	u32 pair;
	u32 side;
	struct ib_pd *pd;	/* the run's PD, or the pair's */
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool qp_init;		/* left RESET: must be drained */
	struct kperf_queue sq;
	struct kperf_queue rq;
	/* RDMA WRITE source */
	void *wsrc;
	u64 wsrc_dma;
	/* FRWR-registered RDMA WRITE target */
	void *tgt;
	u64 tgt_dma;
	struct scatterlist tgt_sg;
	struct ib_mr *mr;
	bool mr_valid;
	bool stopped;		/* a WR failed: post nothing more */
	bool abandoned;		/* destroyed undrained (abandon=1) */
	bool next_write;	/* stream: alternate SEND and RDMA WRITE */
	u64 send_seq;		/* sequence of the next SEND */
	u64 recv_seq;		/* sequence expected in the next RECV */
	u64 sends_ok;
	u64 writes_posted;
	u64 writes_ok;
	u64 rtts;
	u64 ping_t0;
};

struct kperf_run {
	struct kperf_params p;
	struct ib_device *dev;
	u32 npd;
	struct ib_pd **pds;	/* one, or one per pair */
	const struct ib_gid_attr *sgid_attr;
	union ib_gid gid;
	u8 dmac[ETH_ALEN];
	enum ib_mtu mtu;
	u32 ncq;
	struct ib_cq **cqs;
	struct kperf_ep *eps;	/* A_0..A_n-1, then B_0..B_n-1 */
	u64 *lat;
	u64 nlat;
	u64 lat_max;
	u64 t_start;
	u64 t_end;
	u64 t_deadline;		/* stream: stop posting at this time */
	u64 t_next_post;	/* stream with pace_ms: the next post's time */
	bool stopping;		/* post no more data WRs */
	bool at_stop;		/* our own final move to the error state */
	bool skip_drain;
	u64 posted;
	u64 ok;
	u64 flush;
	u64 err;
	u64 stop_flush;
	u64 dups;
	u64 lost;
	u64 verify_errors;
	u64 seq_dups;
	u64 seq_gaps;
	u64 post_errors;
	int cb_post;		/* cb_probe_ms: the probe post's return */
	atomic_t cb_calls;	/* completion callbacks of the probe CQ */
	atomic_t cb_in_post;	/* ... made from inside the probe post */
	struct task_struct *cb_poster;	/* set around the probe post */
	bool cq_destroyed;	/* armed_cq_ms: ib_destroy_cq() returned */
	atomic_t cb_late;	/* ... and a callback of the CQ came after */
	bool qp_destroyed;	/* fatal_qp_ms: ib_destroy_qp() returned */
	atomic_t ev_fatal;	/* IB_EVENT_QP_FATAL of its QP */
	atomic_t ev_late;	/* events of the QP after its destroy */
	u64 maps;		/* remap_ms: ib_map_mr_sg() calls */
	u64 map_errors;		/* remap_ms: calls that did not map 1 entry */
	u64 abandoned;		/* WRs of A_0 outstanding when destroyed */
	u64 stale;		/* completions of A_0 after that */
	/* keycheck */
	int kc_ret[KPERF_NPROBES];
	bool kc_done[KPERF_NPROBES];
	enum ib_wc_status kc_wc[KPERF_NPROBES];
	u64 kc_failed;		/* probe completions counted in flush or err */
	u64 kc_recv;
	int chain_ret;		/* keycheck: the post of the WRITE chain */
	int chain_bad;		/* index of *bad_wr in it, -1 if none */
	int rc;
	char error[160];
};

/* DMA calls, skipped for an unmapped=1 run. */
static void kperf_unmap(struct kperf_run *r, u64 dma, u32 len, enum dma_data_direction dir)
{
	if (!r->p.unmapped)
		ib_dma_unmap_single(r->dev, dma, len, dir);
}

static void kperf_sync_for_device(struct kperf_run *r, u64 dma, u32 len,
				  enum dma_data_direction dir)
{
	if (!r->p.unmapped)
		ib_dma_sync_single_for_device(r->dev, dma, len, dir);
}

static void kperf_sync_for_cpu(struct kperf_run *r, u64 dma, u32 len,
			       enum dma_data_direction dir)
{
	if (!r->p.unmapped)
		ib_dma_sync_single_for_cpu(r->dev, dma, len, dir);
}

static struct dentry *kperf_dir;
static DEFINE_MUTEX(kperf_run_lock);
static DEFINE_MUTEX(kperf_result_lock);
static char kperf_result[KPERF_RESULT_MAX];
static size_t kperf_result_len;

static char kperf_side(const struct kperf_ep *ep)
{
	return ep->side ? 'B' : 'A';
}

static __printf(2, 3) void kperf_fail(struct kperf_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->error[0])
		return;
	va_start(ap, fmt);
	vscnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	pr_err("%s: %s\n", r->p.dev, r->error);
}

/* ---- payload patterns ---- */

static u32 kperf_seed(u32 pair, u32 side, u64 n)
{
	u64 x = (n + 1) * 0x9e3779b97f4a7c15ull;

	return (u32)(x >> 32) ^ (u32)x ^ (pair << 20) ^ (side << 28);
}

static u8 kperf_pat(u32 seed, u32 i)
{
	u32 x = seed ^ (i * 0x85ebca77u);

	x ^= x >> 15;
	x *= 0xc2b2ae3du;
	x ^= x >> 13;
	return x >> 24;
}

static void kperf_fill(u8 *buf, u32 from, u32 len, u32 seed)
{
	u32 i;

	for (i = from; i < len; i++)
		buf[i] = kperf_pat(seed, i);
}

/* Returns the number of bytes that differ from the pattern. */
static u32 kperf_check(const u8 *buf, u32 from, u32 len, u32 seed, u32 *first)
{
	u32 i, bad = 0;

	for (i = from; i < len; i++) {
		if (buf[i] == kperf_pat(seed, i))
			continue;
		if (!bad++)
			*first = i;
	}
	return bad;
}

/*
 * Syncs @len bytes of @buf (mapped at @dma in @dir) for the CPU and checks
 * that they hold the pattern @seed; a mismatch counts in verify_errors and
 * is logged as @what of @ep. How many bytes were bad.
 */
static u32 kperf_verify(struct kperf_ep *ep, const char *what, const u8 *buf, u64 dma,
			u32 len, enum dma_data_direction dir, u32 seed)
{
	struct kperf_run *r = ep->run;
	u32 bad, first = 0;

	kperf_sync_for_cpu(r, dma, len, dir);
	bad = kperf_check(buf, 0, len, seed, &first);
	if (bad) {
		r->verify_errors++;
		pr_err("%s: pair %u%c: %s: %u of %u bytes bad, first at %u\n", r->p.dev,
		       ep->pair, kperf_side(ep), what, bad, len, first);
	}
	return bad;
}

static void kperf_fill_msg(struct kperf_ep *ep, void *buf, u64 seq)
{
	struct kperf_hdr *h = buf;
	u32 size = ep->run->p.size;

	h->magic = cpu_to_le32(KPERF_MAGIC);
	h->pair = cpu_to_le16(ep->pair);
	h->side = cpu_to_le16(ep->side);
	h->seq = cpu_to_le64(seq);
	kperf_fill(buf, sizeof(*h), size, kperf_seed(ep->pair, ep->side, seq));
}

/* A RECV of @ep holds a SEND of its peer: check it and its sequence. */
static void kperf_check_msg(struct kperf_ep *ep, const void *buf, u32 len)
{
	struct kperf_run *r = ep->run;
	const struct kperf_hdr *h = buf;
	u32 size = r->p.size, bad, first = 0;
	u64 seq;

	if (len != size || le32_to_cpu(h->magic) != KPERF_MAGIC ||
	    le16_to_cpu(h->pair) != ep->pair || le16_to_cpu(h->side) != ep->peer->side) {
		r->verify_errors++;
		pr_err_ratelimited("pair %u%c: bad RECV header: len %u magic %#x pair %u side %u\n",
				   ep->pair, kperf_side(ep), len, le32_to_cpu(h->magic),
				   le16_to_cpu(h->pair), le16_to_cpu(h->side));
		ep->recv_seq++;
		return;
	}
	seq = le64_to_cpu(h->seq);
	bad = kperf_check(buf, sizeof(*h), size, kperf_seed(ep->pair, ep->peer->side, seq),
			  &first);
	if (bad) {
		r->verify_errors++;
		pr_err_ratelimited("pair %u%c: RECV seq %llu: %u bad bytes from offset %u\n",
				   ep->pair, kperf_side(ep), seq, bad, first);
	}
	if (seq < ep->recv_seq) {
		r->seq_dups++;
		r->verify_errors++;
		pr_err_ratelimited("pair %u%c: RECV seq %llu again (expected %llu)\n",
				   ep->pair, kperf_side(ep), seq, ep->recv_seq);
		return;
	}
	if (seq > ep->recv_seq) {
		r->seq_gaps++;
		r->verify_errors++;
		pr_err_ratelimited("pair %u%c: RECV seq %llu, expected %llu: gap\n",
				   ep->pair, kperf_side(ep), seq, ep->recv_seq);
	}
	ep->recv_seq = seq + 1;
}

/* ---- posting ---- */

static struct kperf_slot *kperf_slot_get(struct kperf_queue *q)
{
	u32 i;

	for (i = 0; i < q->nslots; i++) {
		struct kperf_slot *s = &q->slots[(q->next + i) % q->nslots];

		if (s->busy)
			continue;
		q->next = (q->next + i + 1) % q->nslots;
		return s;
	}
	return NULL;
}

/*
 * Completions are reaped only by this task (IB_POLL_DIRECT), so a slot is
 * marked busy before its WR is posted and unmarked if the post fails.
 */
static void kperf_slot_mark(struct kperf_slot *s, enum kperf_op op, bool busy)
{
	struct kperf_run *r = s->q->ep->run;

	s->op = op;
	s->busy = busy;
	if (busy) {
		s->q->inflight++;
		r->posted++;
	} else {
		s->q->inflight--;
		r->posted--;
	}
}

static void kperf_post_failed(struct kperf_ep *ep, enum kperf_op op, int ret)
{
	struct kperf_run *r = ep->run;

	r->post_errors++;
	ep->stopped = true;
	if (r->p.mode == KPERF_STREAM && !r->at_stop) {
		pr_info("%s: pair %u%c: posting %s failed: %d; QP stopped\n",
			r->p.dev, ep->pair, kperf_side(ep), kperf_op_names[op], ret);
		return;
	}
	kperf_fail(r, "pair %u%c: posting %s failed: %d", ep->pair, kperf_side(ep),
		   kperf_op_names[op], ret);
	r->stopping = true;
}

static int kperf_post_data(struct kperf_ep *ep, enum kperf_op op)
{
	struct kperf_run *r = ep->run;
	struct kperf_slot *s = kperf_slot_get(&ep->sq);
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (!s) {
		kperf_post_failed(ep, op, -ENOSPC);
		return -ENOSPC;
	}
	sge.lkey = ep->pd->local_dma_lkey;
	sge.length = r->p.size;
	wr.wr.wr_cqe = &s->cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	if (op == KPERF_OP_SEND) {
		kperf_fill_msg(ep, s->buf, ep->send_seq);
		kperf_sync_for_device(r, s->dma, r->p.size, DMA_TO_DEVICE);
		sge.addr = s->dma;
		wr.wr.opcode = IB_WR_SEND;
	} else {
		sge.addr = ep->wsrc_dma;
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.remote_addr = ep->peer->mr->iova;
		wr.rkey = ep->peer->mr->rkey;
	}
	kperf_slot_mark(s, op, true);
	ret = ib_post_send(ep->qp, &wr.wr, NULL);
	if (ret) {
		kperf_slot_mark(s, op, false);
		kperf_post_failed(ep, op, ret);
		return ret;
	}
	if (op == KPERF_OP_SEND)
		ep->send_seq++;
	else
		ep->writes_posted++;
	return 0;
}

/*
 * read=1: the peer's target read into the WRITE source as rdma_rw reads a
 * Read chunk (nfsd, nvmet): a page per SGE, KPERF_READ_SGES SGEs per WR,
 * the WRs chained and only the last one signaled.
 */
static int kperf_post_read(struct kperf_ep *ep)
{
	struct kperf_run *r = ep->run;
	struct kperf_slot *s = kperf_slot_get(&ep->sq);
	struct ib_sge sge[KPERF_READ_WRS * KPERF_READ_SGES];
	struct ib_rdma_wr wr[KPERF_READ_WRS] = {};
	const struct ib_send_wr *bad;
	u32 off = 0, i, n = 0, nwr = 0;
	int ret;

	if (!s) {
		kperf_post_failed(ep, KPERF_OP_READ, -ENOSPC);
		return -ENOSPC;
	}
	while (off < r->p.size && nwr < KPERF_READ_WRS) {
		struct ib_rdma_wr *w = &wr[nwr];

		w->wr.sg_list = &sge[n];
		w->remote_addr = ep->peer->mr->iova + off;
		w->rkey = ep->peer->mr->rkey;
		w->wr.opcode = IB_WR_RDMA_READ;
		/* Unsignaled but the last; a flush completes them all here. */
		w->wr.wr_cqe = &s->cqe;
		for (i = 0; i < KPERF_READ_SGES && off < r->p.size; i++, n++) {
			sge[n].addr = ep->wsrc_dma + off;
			/* The last SGE takes whatever is left. */
			sge[n].length = n == ARRAY_SIZE(sge) - 1 ? r->p.size - off :
					min_t(u32, PAGE_SIZE, r->p.size - off);
			sge[n].lkey = ep->pd->local_dma_lkey;
			off += sge[n].length;
		}
		w->wr.num_sge = i;
		if (nwr)
			wr[nwr - 1].wr.next = &w->wr;
		nwr++;
	}
	wr[nwr - 1].wr.send_flags = IB_SEND_SIGNALED;
	kperf_slot_mark(s, KPERF_OP_READ, true);
	ret = ib_post_send(ep->qp, &wr[0].wr, &bad);
	if (ret) {
		kperf_slot_mark(s, KPERF_OP_READ, false);
		kperf_post_failed(ep, KPERF_OP_READ, ret);
	}
	return ret;
}

static int kperf_post_recv(struct kperf_ep *ep)
{
	struct kperf_run *r = ep->run;
	struct kperf_slot *s = kperf_slot_get(&ep->rq);
	struct ib_recv_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (!s) {
		kperf_post_failed(ep, KPERF_OP_RECV, -ENOSPC);
		return -ENOSPC;
	}
	sge.addr = s->dma;
	sge.length = r->p.size;
	sge.lkey = ep->pd->local_dma_lkey;
	wr.wr_cqe = &s->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	kperf_sync_for_device(r, s->dma, r->p.size, DMA_FROM_DEVICE);
	kperf_slot_mark(s, KPERF_OP_RECV, true);
	ret = ib_post_recv(ep->qp, &wr, NULL);
	if (ret) {
		kperf_slot_mark(s, KPERF_OP_RECV, false);
		kperf_post_failed(ep, KPERF_OP_RECV, ret);
	}
	return ret;
}

static int kperf_post_reg(struct kperf_ep *ep)
{
	struct kperf_slot *s = kperf_slot_get(&ep->sq);
	struct ib_reg_wr wr = {};
	int n, ret;

	if (!s) {
		kperf_post_failed(ep, KPERF_OP_REG, -ENOSPC);
		return -ENOSPC;
	}
	n = ib_map_mr_sg(ep->mr, &ep->tgt_sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		kperf_fail(ep->run, "pair %u%c: ib_map_mr_sg: %d", ep->pair, kperf_side(ep), n);
		return n < 0 ? n : -EINVAL;
	}
	ib_update_fast_reg_key(ep->mr, ib_inc_rkey(ep->mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_cqe = &s->cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = ep->mr;
	wr.key = ep->mr->rkey;
	wr.access = KPERF_ACCESS;
	kperf_slot_mark(s, KPERF_OP_REG, true);
	ret = ib_post_send(ep->qp, &wr.wr, NULL);
	if (ret) {
		kperf_slot_mark(s, KPERF_OP_REG, false);
		kperf_post_failed(ep, KPERF_OP_REG, ret);
	}
	return ret;
}

static int kperf_post_inv(struct kperf_ep *ep)
{
	struct kperf_slot *s = kperf_slot_get(&ep->sq);
	struct ib_send_wr wr = {};
	int ret;

	if (!s) {
		kperf_post_failed(ep, KPERF_OP_INV, -ENOSPC);
		return -ENOSPC;
	}
	wr.opcode = IB_WR_LOCAL_INV;
	wr.wr_cqe = &s->cqe;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = ep->mr->rkey;
	kperf_slot_mark(s, KPERF_OP_INV, true);
	ret = ib_post_send(ep->qp, &wr, NULL);
	if (ret) {
		kperf_slot_mark(s, KPERF_OP_INV, false);
		kperf_post_failed(ep, KPERF_OP_INV, ret);
	}
	return ret;
}

/*
 * keycheck: a signaled SEND or REG_MR on @ep that uses @mr, an MR of another
 * PD. Returns the post's return value, which is the result, not a failure
 * of the run: an accepted WR is reaped like any other.
 */
static int kperf_post_probe(struct kperf_ep *ep, enum kperf_op op, struct ib_mr *mr)
{
	struct kperf_slot *s = kperf_slot_get(&ep->sq);
	struct ib_send_wr send = {};
	struct ib_reg_wr reg = {};
	struct ib_send_wr *wr;
	struct ib_sge sge;
	int ret;

	if (!s) {
		kperf_fail(ep->run, "pair %u%c: no free slot for a %s", ep->pair,
			   kperf_side(ep), kperf_op_names[op]);
		return -ENOSPC;
	}
	if (op == KPERF_OP_PROBE_SEND) {
		sge.addr = mr->iova;
		sge.length = KPERF_PROBE_LEN;
		sge.lkey = mr->lkey;
		send.opcode = IB_WR_SEND;
		send.sg_list = &sge;
		send.num_sge = 1;
		wr = &send;
	} else if (op == KPERF_OP_PROBE_REG) {
		reg.wr.opcode = IB_WR_REG_MR;
		reg.mr = mr;
		reg.key = mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE;
		wr = &reg.wr;
	} else {
		send.opcode = IB_WR_LOCAL_INV;
		send.ex.invalidate_rkey = mr->rkey;
		wr = &send;
	}
	wr->wr_cqe = &s->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	kperf_slot_mark(s, op, true);
	ret = ib_post_send(ep->qp, wr, NULL);
	if (ret)
		kperf_slot_mark(s, op, false);
	pr_info("%s: pair %u%c: posting %s with pair 0's MR (lkey %#x rkey %#x): %d\n",
		ep->run->p.dev, ep->pair, kperf_side(ep), kperf_op_names[op], mr->lkey,
		mr->rkey, ret);
	return ret;
}

/*
 * keycheck: a WRITE, a WRITE with more SGEs than the device takes, and a
 * WRITE, posted as one chain. The post must stop at the second: -EINVAL,
 * *bad_wr the second, the first posted (it completes), the third not (a
 * completion of it would count as a duplicate: its slot is freed here).
 */
static void kperf_post_chain(struct kperf_ep *ep)
{
	struct kperf_run *r = ep->run;
	const struct ib_send_wr *bad = NULL;
	struct ib_sge sge[KPERF_CHAIN_SGES];
	struct kperf_slot *s[KPERF_CHAIN_LEN];
	struct ib_rdma_wr wr[KPERF_CHAIN_LEN] = {};
	u32 i, posted;

	for (i = 0; i < KPERF_CHAIN_SGES; i++) {
		sge[i].addr = ep->wsrc_dma;
		sge[i].length = 8;
		sge[i].lkey = ep->pd->local_dma_lkey;
	}
	for (i = 0; i < KPERF_CHAIN_LEN; i++) {
		s[i] = kperf_slot_get(&ep->sq);
		if (!s[i]) {
			kperf_fail(r, "pair %u%c: no free slot for the chain", ep->pair,
				   kperf_side(ep));
			while (i--)
				kperf_slot_mark(s[i], KPERF_OP_WRITE, false);
			return;
		}
		kperf_slot_mark(s[i], KPERF_OP_WRITE, true);
		wr[i].wr.wr_cqe = &s[i]->cqe;
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = sge;
		wr[i].wr.num_sge = i == 1 ? KPERF_CHAIN_SGES : 1;
		wr[i].remote_addr = ep->peer->mr->iova;
		wr[i].rkey = ep->peer->mr->rkey;
		if (i)
			wr[i - 1].wr.next = &wr[i].wr;
	}
	r->chain_ret = ib_post_send(ep->qp, &wr[0].wr, &bad);
	r->chain_bad = -1;
	posted = KPERF_CHAIN_LEN;
	for (i = 0; i < KPERF_CHAIN_LEN; i++) {
		if (bad == &wr[i].wr) {
			r->chain_bad = i;
			posted = r->chain_ret ? i : KPERF_CHAIN_LEN;
		}
	}
	for (i = posted; i < KPERF_CHAIN_LEN; i++)
		kperf_slot_mark(s[i], KPERF_OP_WRITE, false);
	pr_info("%s: pair %u%c: chain of %u WRITEs, the second with %u SGEs: %d, bad_wr #%d\n",
		r->p.dev, ep->pair, kperf_side(ep), KPERF_CHAIN_LEN, KPERF_CHAIN_SGES,
		r->chain_ret, r->chain_bad);
}

static void kperf_post_ping(struct kperf_ep *ep)
{
	ep->ping_t0 = ktime_get_ns();
	kperf_post_data(ep, KPERF_OP_SEND);
}

/* ---- completions ---- */

static void kperf_recv_done(struct kperf_ep *ep, struct kperf_slot *s, struct ib_wc *wc)
{
	struct kperf_run *r = ep->run;

	kperf_sync_for_cpu(r, s->dma, r->p.size, DMA_FROM_DEVICE);
	if (r->p.mode == KPERF_KEYCHECK) {
		/* A probe SEND got through: pair 0's bytes, not a message. */
		r->kc_recv++;
		pr_info("%s: pair %u%c: received a probe SEND of %u bytes\n", r->p.dev,
			ep->pair, kperf_side(ep), wc->byte_len);
		return;
	}
	kperf_check_msg(ep, s->buf, wc->byte_len);
	if (ep->stopped || r->at_stop)
		return;
	/* Keep the RQ full even while stopping: the peer's SENDs need it. */
	if (kperf_post_recv(ep))
		return;
	if (r->p.mode != KPERF_LAT)
		return;
	if (ep->side) {
		kperf_post_data(ep, KPERF_OP_SEND);	/* echo */
		return;
	}
	/* A device that delivers an echo twice must not overrun r->lat. */
	if (r->nlat < r->lat_max)
		r->lat[r->nlat++] = ktime_get_ns() - ep->ping_t0;
	if (++ep->rtts < r->p.iters && !r->stopping)
		kperf_post_ping(ep);
}

static void kperf_wc_failed(struct kperf_ep *ep, struct kperf_slot *s, struct ib_wc *wc)
{
	struct kperf_run *r = ep->run;

	if (r->at_stop && s->op == KPERF_OP_RECV && wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	if (!ep->stopped)
		pr_info("%s: pair %u%c: first failed completion: %s %s (vendor_err %#x)\n",
			r->p.dev, ep->pair, kperf_side(ep), kperf_op_names[s->op],
			ib_wc_status_msg(wc->status), wc->vendor_err);
	ep->stopped = true;
	if (r->p.mode == KPERF_STREAM && s->op != KPERF_OP_REG)
		return;
	kperf_fail(r, "pair %u%c: %s completed with %s", ep->pair, kperf_side(ep),
		   kperf_op_names[s->op], ib_wc_status_msg(wc->status));
	r->stopping = true;
}

static void kperf_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kperf_slot *s = container_of(wc->wr_cqe, struct kperf_slot, cqe);
	struct kperf_queue *q = s->q;
	struct kperf_ep *ep = q->ep;
	struct kperf_run *r = ep->run;

	if (ep->abandoned) {
		r->stale++;
		pr_err_ratelimited("%s: pair %u%c: a completion of the destroyed QP (%s)\n",
				   r->p.dev, ep->pair, kperf_side(ep),
				   ib_wc_status_msg(wc->status));
		return;
	}
	if (!s->busy) {
		r->dups++;
		pr_err_ratelimited("%s: pair %u%c: %s slot %td completed twice (%s)\n",
				   r->p.dev, ep->pair, kperf_side(ep), kperf_op_names[s->op],
				   s - q->slots, ib_wc_status_msg(wc->status));
		return;
	}
	s->busy = false;
	q->inflight--;
	if (wc->status == IB_WC_SUCCESS)
		r->ok++;
	else if (wc->status != IB_WC_WR_FLUSH_ERR)
		r->err++;
	else if (r->at_stop && s->op == KPERF_OP_RECV)
		r->stop_flush++;
	else
		r->flush++;
	if (s->op >= KPERF_OP_PROBE_SEND) {
		/* keycheck: whatever the status, a result, not a failure. */
		r->kc_done[s->op - KPERF_OP_PROBE_SEND] = true;
		r->kc_wc[s->op - KPERF_OP_PROBE_SEND] = wc->status;
		if (wc->status != IB_WC_SUCCESS)
			r->kc_failed++;
		pr_info("%s: pair %u%c: %s completed with %s (vendor_err %#x)\n", r->p.dev,
			ep->pair, kperf_side(ep), kperf_op_names[s->op],
			ib_wc_status_msg(wc->status), wc->vendor_err);
		return;
	}
	if (wc->status != IB_WC_SUCCESS) {
		kperf_wc_failed(ep, s, wc);
		return;
	}
	switch (s->op) {
	case KPERF_OP_RECV:
		kperf_recv_done(ep, s, wc);
		break;
	case KPERF_OP_SEND:
		ep->sends_ok++;
		break;
	case KPERF_OP_WRITE:
		ep->writes_ok++;
		break;
	case KPERF_OP_REG:
		ep->mr_valid = true;
		break;
	case KPERF_OP_INV:
		ep->mr_valid = false;
		break;
	default:
		break;
	}
}

static int kperf_poll(struct kperf_run *r)
{
	int n = 0;
	u32 i;

	for (i = 0; i < r->ncq; i++)
		n += ib_process_cq_direct(r->cqs[i], KPERF_POLL_BUDGET);
	return n;
}

/*
 * Called when a pass reaped nothing. rxe does its protocol work in a
 * workqueue, and the guests have one vCPU and no high-resolution timers: a
 * sleep lasts a whole tick (4 ms at HZ=250). So keep polling and offer the
 * CPU with cond_resched() (the woken kworker preempts us at once or at the
 * next tick), and sleep only once nothing completed for KPERF_SPIN_MS.
 */
static void kperf_idle(unsigned long idle_since)
{
	if (time_before(jiffies, idle_since + msecs_to_jiffies(KPERF_SPIN_MS))) {
		cond_resched();
		cpu_relax();
		return;
	}
	usleep_range(500, 1000);
}

/*
 * Polls until @done holds, calling @pump to post more work. Returns
 * -ETIMEDOUT after KPERF_STALL_MS without a completion, and -EINTR on a
 * signal if @interruptible.
 */
static int kperf_wait(struct kperf_run *r, bool (*done)(struct kperf_run *r),
		      void (*pump)(struct kperf_run *r), bool interruptible)
{
	unsigned long last = jiffies;

	for (;;) {
		if (pump)
			pump(r);
		if (done(r))
			return 0;
		if (kperf_poll(r) > 0) {
			last = jiffies;
			cond_resched();
			continue;
		}
		if (time_after(jiffies, last + msecs_to_jiffies(KPERF_STALL_MS)))
			return -ETIMEDOUT;
		if (interruptible && signal_pending(current))
			return -EINTR;
		kperf_idle(last);
	}
}

static bool kperf_sq_idle(struct kperf_run *r)
{
	u32 i;

	for (i = 0; i < 2 * r->p.qps; i++)
		if (r->eps[i].sq.inflight)
			return false;
	return true;
}

static bool kperf_all_idle(struct kperf_run *r)
{
	u32 i;

	for (i = 0; i < 2 * r->p.qps; i++)
		if (r->eps[i].sq.inflight || r->eps[i].rq.inflight)
			return false;
	return true;
}

static int kperf_wait_fail(struct kperf_run *r, int ret, const char *what)
{
	if (ret == -EINTR) {
		kperf_fail(r, "interrupted during %s", what);
		r->rc = -EINTR;
	} else if (ret) {
		kperf_fail(r, "stalled: no completion for %u ms during %s", KPERF_STALL_MS, what);
	}
	return ret;
}

/* ---- setup ---- */

static int kperf_map(struct kperf_run *r, void *buf, u32 len, enum dma_data_direction dir,
		     u64 *dma)
{
	if (r->p.unmapped) {
		*dma = (uintptr_t)buf;
		return 0;
	}
	*dma = ib_dma_map_single(r->dev, buf, len, dir);
	if (ib_dma_mapping_error(r->dev, *dma)) {
		*dma = 0;
		kperf_fail(r, "DMA mapping of %u bytes failed", len);
		return -ENOMEM;
	}
	return 0;
}

static int kperf_queue_init(struct kperf_run *r, struct kperf_ep *ep, struct kperf_queue *q,
			    bool bufs, enum dma_data_direction dir)
{
	u32 i;
	int ret;

	q->ep = ep;
	q->dir = dir;
	q->nslots = 2 * (r->p.depth + 4);
	q->slots = kcalloc(q->nslots, sizeof(*q->slots), GFP_KERNEL);
	if (!q->slots)
		return -ENOMEM;
	for (i = 0; i < q->nslots; i++) {
		struct kperf_slot *s = &q->slots[i];

		s->q = q;
		s->cqe.done = kperf_done;
		if (!bufs)
			continue;
		s->buf = kzalloc(r->p.size, GFP_KERNEL);
		if (!s->buf)
			return -ENOMEM;
		ret = kperf_map(r, s->buf, r->p.size, dir, &s->dma);
		if (ret)
			return ret;
	}
	return 0;
}

static void kperf_queue_free(struct kperf_run *r, struct kperf_queue *q)
{
	u32 i;

	if (!q->slots)
		return;
	for (i = 0; i < q->nslots; i++) {
		struct kperf_slot *s = &q->slots[i];

		if (s->dma)
			kperf_unmap(r, s->dma, r->p.size, q->dir);
		kfree(s->buf);
	}
	kfree(q->slots);
	q->slots = NULL;
}

static void kperf_qp_event(struct ib_event *ev, void *ctx)
{
	struct kperf_ep *ep = ctx;

	pr_info("%s: pair %u%c: QP event: %s\n", ep->run->p.dev, ep->pair, kperf_side(ep),
		ib_event_msg(ev->event));
}

static int kperf_create_qp(struct kperf_run *r, struct kperf_ep *ep)
{
	struct ib_qp_init_attr init = {
		.event_handler = kperf_qp_event,
		.qp_context = ep,
		.send_cq = ep->cq,
		.recv_cq = ep->cq,
		.cap = {
			.max_send_wr = r->p.depth + 4 + (r->p.read ? KPERF_READ_WRS : 0),
			.max_recv_wr = r->p.depth + 4,
			.max_send_sge = r->p.read ? KPERF_READ_SGES : 1,
			.max_recv_sge = 1,
		},
		/* Every WR asks for its completion, but read=1's chain. */
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = r->p.port,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(ep->pd, &init);
	if (IS_ERR(qp)) {
		kperf_fail(r, "pair %u%c: ib_create_qp: %ld", ep->pair, kperf_side(ep),
			   PTR_ERR(qp));
		return PTR_ERR(qp);
	}
	ep->qp = qp;
	return 0;
}

/* Buffers, WR slots and the FRWR target of one QP, as its mode needs. */
static int kperf_ep_bufs(struct kperf_run *r, struct kperf_ep *ep)
{
	enum kperf_mode mode = r->p.mode;
	bool bw = mode == KPERF_BW || mode == KPERF_KEYCHECK;
	bool msgs = !bw;
	/* keycheck: B_i receives a probe SEND that gets through. */
	bool rbufs = msgs || (mode == KPERF_KEYCHECK && ep->side);
	bool writes = mode == KPERF_STREAM && !r->p.sends_only;
	bool wsrc = writes || (bw && !ep->side);
	/* The WRITE targets: lat only sends, and needs no MR. */
	bool tgt = writes || (bw && ep->side);
	u32 size = r->p.size, npages;
	int ret;

	ret = kperf_queue_init(r, ep, &ep->sq, msgs, DMA_TO_DEVICE);
	if (!ret)
		ret = kperf_queue_init(r, ep, &ep->rq, rbufs, DMA_FROM_DEVICE);
	if (ret)
		goto nomem;
	if (wsrc) {
		ep->wsrc = kmalloc(size, GFP_KERNEL | __GFP_NOWARN);
		if (!ep->wsrc)
			goto nomem;
		kperf_fill(ep->wsrc, 0, size, kperf_seed(ep->pair, ep->side, 0));
		ret = kperf_map(r, ep->wsrc, size, KPERF_WSRC_DIR, &ep->wsrc_dma);
		if (ret)
			return ret;
	}
	if (!tgt)
		return 0;
	ep->tgt = kzalloc(size, GFP_KERNEL | __GFP_NOWARN);
	if (!ep->tgt)
		goto nomem;
	ret = kperf_map(r, ep->tgt, size, DMA_BIDIRECTIONAL, &ep->tgt_dma);
	if (ret)
		return ret;
	sg_init_one(&ep->tgt_sg, ep->tgt, size);
	sg_dma_address(&ep->tgt_sg) = ep->tgt_dma;
	sg_dma_len(&ep->tgt_sg) = size;
	npages = DIV_ROUND_UP(offset_in_page(ep->tgt) + size, PAGE_SIZE);
	ep->mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(ep->mr)) {
		ret = PTR_ERR(ep->mr);
		ep->mr = NULL;
		kperf_fail(r, "pair %u%c: ib_alloc_mr(%u pages): %d", ep->pair, kperf_side(ep),
			   npages, ret);
		return ret;
	}
	return 0;
nomem:
	kperf_fail(r, "out of memory for the buffers of pair %u%c", ep->pair, kperf_side(ep));
	return -ENOMEM;
}

static u32 kperf_psn(const struct kperf_ep *ep)
{
	return (0x10000 + ep->qp->qp_num * 0x101) & 0xffffff;
}

static int kperf_connect(struct kperf_run *r, struct kperf_ep *ep)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = r->p.port;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(ep->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (ret)
		goto fail;
	ep->qp_init = true;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = r->mtu;
	attr.dest_qp_num = ep->peer->qp->qp_num;
	attr.rq_psn = kperf_psn(ep->peer);
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, r->p.port);
	rdma_ah_set_sl(&attr.ah_attr, 0);
	rdma_ah_set_grh(&attr.ah_attr, &r->gid, 0, r->sgid_attr->index, 64, 0);
	/* Loopback: the destination MAC is our own port's. */
	memcpy(attr.ah_attr.roce.dmac, r->dmac, ETH_ALEN);
	ret = ib_modify_qp(ep->qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			   IB_QP_MIN_RNR_TIMER);
	if (ret)
		goto fail;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = kperf_psn(ep);
	attr.max_rd_atomic = 1;
	ret = ib_modify_qp(ep->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			   IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		goto fail;
	return 0;
fail:
	kperf_fail(r, "pair %u%c: ib_modify_qp to %s: %d", ep->pair, kperf_side(ep),
		   attr.qp_state == IB_QPS_INIT ? "INIT" :
		   attr.qp_state == IB_QPS_RTR ? "RTR" : "RTS", ret);
	return ret;
}

static int kperf_find_gid(struct kperf_run *r)
{
	struct ib_port_attr pattr;
	int ret;

	if (!rdma_is_port_valid(r->dev, r->p.port) || !rdma_protocol_roce(r->dev, r->p.port)) {
		kperf_fail(r, "port: %u is not a RoCE port", r->p.port);
		r->rc = -EINVAL;
		return -EINVAL;
	}
	ret = ib_query_port(r->dev, r->p.port, &pattr);
	if (ret) {
		kperf_fail(r, "ib_query_port: %d", ret);
		return ret;
	}
	if (pattr.state != IB_PORT_ACTIVE) {
		kperf_fail(r, "port %u is not ACTIVE (state %d)", r->p.port, pattr.state);
		r->rc = -ENETDOWN;
		return -ENETDOWN;
	}
	r->mtu = min(pattr.active_mtu, IB_MTU_1024);

	ipv6_addr_set_v4mapped(r->p.addr, (struct in6_addr *)r->gid.raw);
	r->sgid_attr = rdma_find_gid_by_port(r->dev, &r->gid, IB_GID_TYPE_ROCE_UDP_ENCAP,
					     r->p.port, NULL);
	if (IS_ERR(r->sgid_attr)) {
		ret = PTR_ERR(r->sgid_attr);
		r->sgid_attr = NULL;
		kperf_fail(r, "gid: no RoCE v2 GID for %pI4 on port %u", &r->p.addr, r->p.port);
		r->rc = -EINVAL;
		return ret;
	}
	ret = rdma_read_gid_l2_fields(r->sgid_attr, NULL, r->dmac);
	if (ret) {
		kperf_fail(r, "gid %pI4: no netdev: %d", &r->p.addr, ret);
		return ret;
	}
	return 0;
}

static struct ib_pd *kperf_alloc_pd(struct kperf_run *r)
{
	struct ib_pd *pd = ib_alloc_pd(r->dev, r->p.global_rkey ?
				       IB_PD_UNSAFE_GLOBAL_RKEY : 0);

	if (IS_ERR(pd)) {
		kperf_fail(r, "ib_alloc_pd: %ld", PTR_ERR(pd));
		return pd;
	}
	r->pds[r->npd++] = pd;
	return pd;
}

/*
 * pd_per_pair: pair by pair, the PD, A_i, B_i, then their buffers and MRs,
 * so that a device that binds an MR to the member of its PD's QPs sees the
 * QPs first.
 */
static int kperf_setup_pairs(struct kperf_run *r)
{
	struct ib_pd *pd;
	u32 i, k;
	int ret;

	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *ab[2] = { &r->eps[i], &r->eps[r->p.qps + i] };

		pd = kperf_alloc_pd(r);
		if (IS_ERR(pd))
			return PTR_ERR(pd);
		for (k = 0; k < 2; k++) {
			ab[k]->pd = pd;
			ret = kperf_create_qp(r, ab[k]);
			if (ret)
				return ret;
		}
		for (k = 0; k < 2; k++) {
			ret = kperf_ep_bufs(r, ab[k]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* One PD: every A QP first, then every B QP, then buffers and MRs. */
static int kperf_setup_shared_pd(struct kperf_run *r)
{
	u32 n = 2 * r->p.qps, i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = kperf_create_qp(r, &r->eps[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		ret = kperf_ep_bufs(r, &r->eps[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int kperf_setup(struct kperf_run *r)
{
	u32 n = 2 * r->p.qps, per_ep = 2 * (r->p.depth + 4) + 2;
	struct ib_pd *pd = NULL;
	u32 i, ncq;
	int ret;

	ret = kperf_find_gid(r);
	if (ret)
		return ret;
	if (r->p.depth + 4 > r->dev->attrs.max_qp_wr ||
	    (r->p.shared_cq ? n : 1) * per_ep > r->dev->attrs.max_cqe) {
		kperf_fail(r, "depth: %u is too deep for the device", r->p.depth);
		r->rc = -EINVAL;
		return -EINVAL;
	}
	if (DIV_ROUND_UP(r->p.size, PAGE_SIZE) + 1 > r->dev->attrs.max_fast_reg_page_list_len) {
		kperf_fail(r, "size: %u is too large for an FRWR of the device", r->p.size);
		r->rc = -EINVAL;
		return -EINVAL;
	}

	r->pds = kcalloc(r->p.pd_per_pair ? r->p.qps : 1, sizeof(*r->pds), GFP_KERNEL);
	if (!r->pds) {
		kperf_fail(r, "out of memory");
		return -ENOMEM;
	}
	/* The shared PD comes first, as it always did. */
	if (!r->p.pd_per_pair) {
		pd = kperf_alloc_pd(r);
		if (IS_ERR(pd))
			return PTR_ERR(pd);
	}
	ncq = r->p.shared_cq ? 1 : n;
	r->cqs = kcalloc(ncq, sizeof(*r->cqs), GFP_KERNEL);
	r->eps = kcalloc(n, sizeof(*r->eps), GFP_KERNEL);
	if (r->p.mode == KPERF_LAT) {
		r->lat_max = (u64)r->p.qps * r->p.iters;
		r->lat = kvmalloc_array(r->lat_max, sizeof(*r->lat), GFP_KERNEL);
	}
	if (!r->cqs || !r->eps || (r->p.mode == KPERF_LAT && !r->lat)) {
		kperf_fail(r, "out of memory");
		return -ENOMEM;
	}
	while (r->ncq < ncq) {
		struct ib_cq *cq = ib_alloc_cq(r->dev, NULL, r->p.shared_cq ? n * per_ep : per_ep,
					       0, IB_POLL_DIRECT);

		if (IS_ERR(cq)) {
			kperf_fail(r, "ib_alloc_cq: %ld", PTR_ERR(cq));
			return PTR_ERR(cq);
		}
		r->cqs[r->ncq++] = cq;
	}
	for (i = 0; i < n; i++) {
		struct kperf_ep *ep = &r->eps[i];

		ep->run = r;
		ep->side = i >= r->p.qps;
		ep->pair = i % r->p.qps;
		ep->peer = &r->eps[ep->side ? ep->pair : r->p.qps + ep->pair];
		ep->cq = r->cqs[r->p.shared_cq ? 0 : i];
		ep->pd = r->p.pd_per_pair ? NULL : pd;
	}
	/* The order matters: see the top comment. */
	ret = r->p.pd_per_pair ? kperf_setup_pairs(r) : kperf_setup_shared_pd(r);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		ret = kperf_connect(r, &r->eps[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		if (!r->eps[i].mr)
			continue;
		ret = kperf_post_reg(&r->eps[i]);
		if (ret)
			return ret;
	}
	ret = kperf_wait_fail(r, kperf_wait(r, kperf_sq_idle, NULL, true), "REG_MR");
	if (ret || r->error[0])
		return ret ?: -EIO;
	if (r->p.mode == KPERF_BW)
		return 0;
	for (i = 0; i < n; i++) {
		u32 k;

		if (r->p.mode == KPERF_KEYCHECK && !r->eps[i].side)
			continue;
		for (k = 0; k < r->p.depth; k++) {
			ret = kperf_post_recv(&r->eps[i]);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- the modes ---- */

static void kperf_bw_pump(struct kperf_run *r)
{
	u32 i;

	for (i = 0; i < r->p.qps && !r->stopping; i++) {
		struct kperf_ep *a = &r->eps[i];

		while (!a->stopped && a->sq.inflight < r->p.depth &&
		       a->writes_posted + 1 < r->p.iters)
			if (kperf_post_data(a, KPERF_OP_WRITE))
				break;
	}
}

static bool kperf_bw_done(struct kperf_run *r)
{
	u32 i;

	if (!kperf_sq_idle(r))
		return false;
	if (r->stopping)
		return true;
	for (i = 0; i < r->p.qps; i++)
		if (r->eps[i].writes_posted + 1 < r->p.iters)
			return false;
	return true;
}

/*
 * read=1: each B's target, holding the last WRITE's pattern, is registered
 * again and A reads it back into its emptied WRITE source. The device
 * writes a READ's sink: a bond over members that need DMA mapping must
 * have copied it back from the member's bounce buffer when the READ
 * completes (the consumer reads it then, as nfsd does its Read chunks).
 */
static int kperf_read_back(struct kperf_run *r)
{
	u32 size = r->p.size, i, bad;
	int ret;

	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *a = &r->eps[i];

		if (a->abandoned)
			continue;
		if (kperf_post_reg(&r->eps[r->p.qps + i]))
			return -EIO;
		memset(a->wsrc, 0, size);
		kperf_sync_for_device(r, a->wsrc_dma, size, KPERF_WSRC_DIR);
	}
	ret = kperf_wait(r, kperf_sq_idle, NULL, true);
	if (ret || r->stopping)
		return kperf_wait_fail(r, ret, "REG_MR of the READ sources");
	for (i = 0; i < r->p.qps; i++)
		if (!r->eps[i].abandoned && kperf_post_read(&r->eps[i]))
			return -EIO;
	ret = kperf_wait(r, kperf_sq_idle, NULL, true);
	if (ret || r->stopping)
		return kperf_wait_fail(r, ret, "the RDMA READs");
	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *a = &r->eps[i];

		if (a->abandoned)
			continue;
		bad = kperf_verify(a, "READ sink", a->wsrc, a->wsrc_dma, size, KPERF_WSRC_DIR,
				   kperf_seed(i, 0, r->p.iters - 1));
		pr_info("%s: pair %u: READ sink of %u bytes read back, %u bad\n", r->p.dev, i,
			size, bad);
	}
	return 0;
}

static int kperf_bw(struct kperf_run *r)
{
	u32 size = r->p.size, i;
	u32 last = r->p.iters - 1;
	int ret;

	ret = kperf_wait(r, kperf_bw_done, kperf_bw_pump, true);
	if (ret || r->stopping)
		return kperf_wait_fail(r, ret, "RDMA WRITEs");
	/* The last WRITE of every pair carries a pattern of its own. */
	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *a = &r->eps[i];

		if (a->abandoned)
			continue;
		kperf_fill(a->wsrc, 0, size, kperf_seed(a->pair, a->side, last));
		kperf_sync_for_device(r, a->wsrc_dma, size, KPERF_WSRC_DIR);
		if (kperf_post_data(a, KPERF_OP_WRITE))
			return -EIO;
	}
	ret = kperf_wait(r, kperf_sq_idle, NULL, true);
	r->t_end = ktime_get_ns();
	if (ret || r->stopping)
		return kperf_wait_fail(r, ret, "the last RDMA WRITEs");
	/*
	 * A ULP reads a buffer the peer wrote once its MR is invalidated: a
	 * device that maps the MR's pages on its own behalf (a bond over
	 * members that need DMA mapping) unmaps them then, and cannot see a
	 * sync_for_cpu on its virtual DMA addresses.
	 */
	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *b = &r->eps[r->p.qps + i];

		if (b->mr_valid && kperf_post_inv(b))
			return -EIO;
	}
	ret = kperf_wait(r, kperf_sq_idle, NULL, true);
	if (ret || r->stopping)
		return kperf_wait_fail(r, ret, "LOCAL_INV of the WRITE targets");
	for (i = 0; i < r->p.qps; i++) {
		struct kperf_ep *b = &r->eps[r->p.qps + i];

		if (r->eps[i].abandoned)
			continue;
		kperf_verify(b, "WRITE target", b->tgt, b->tgt_dma, size, DMA_BIDIRECTIONAL,
			     kperf_seed(i, 0, last));
	}
	return r->p.read ? kperf_read_back(r) : 0;
}

/*
 * abandon=1: A_0's WRITEs complete into the CQ unseen, then A_0 is
 * destroyed as it is. The device must not hand out those completions
 * afterwards: they name a QP that no longer exists.
 */
static int kperf_abandon(struct kperf_run *r)
{
	struct kperf_ep *a0 = &r->eps[0];
	u32 i;

	for (i = 0; i < r->p.depth; i++)
		if (kperf_post_data(a0, KPERF_OP_WRITE))
			return -EIO;
	msleep(KPERF_ABANDON_MS);
	r->abandoned = a0->sq.inflight;
	ib_destroy_qp(a0->qp);
	a0->qp = NULL;
	a0->qp_init = false;
	a0->stopped = true;
	a0->abandoned = true;
	a0->sq.inflight = 0;
	/* Pair 0 is done as far as bw is concerned. */
	a0->writes_posted = r->p.iters;
	pr_info("%s: A_0 destroyed with %llu WRs outstanding\n", r->p.dev, r->abandoned);
	return 0;
}

/*
 * remap_ms: the map of an FRWR ULP that maps in process context, racing
 * with a member's removal. The MR is mapped, never registered again: what
 * counts is that the device survives the maps (KASAN watches).
 */
static int kperf_remap(struct kperf_run *r)
{
	struct kperf_ep *b0 = &r->eps[r->p.qps];
	u64 end = ktime_get_ns() + (u64)r->p.remap_ms * NSEC_PER_MSEC;

	while (ktime_get_ns() < end) {
		r->maps++;
		if (ib_map_mr_sg(b0->mr, &b0->tgt_sg, 1, NULL, PAGE_SIZE) != 1)
			r->map_errors++;
		usleep_range(1000, 2000);
		if (signal_pending(current))
			return -EINTR;
	}
	r->t_end = ktime_get_ns();
	return 0;
}

static void kperf_probe_comp(struct ib_cq *cq, void *ctx)
{
	struct kperf_run *r = ctx;

	atomic_inc(&r->cb_calls);
	if (READ_ONCE(r->cb_poster) == current)
		atomic_inc(&r->cb_in_post);
	if (READ_ONCE(r->cq_destroyed))
		atomic_inc(&r->cb_late);
}

/*
 * The probe modes' own CQ (in *cq) and RC QP on PD 0, with room for four
 * WRs of one SGE each.
 */
static struct ib_qp *kperf_probe_qp(struct kperf_run *r, ib_comp_handler comp,
				    void (*event)(struct ib_event *, void *),
				    struct ib_cq **cq)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_init_attr qa = {
		.event_handler = event,
		.qp_context = r,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp;

	*cq = ib_create_cq(r->dev, comp, NULL, r, &ca);
	if (IS_ERR(*cq))
		return ERR_CAST(*cq);
	qa.send_cq = *cq;
	qa.recv_cq = *cq;
	qp = ib_create_qp(r->pds[0], &qa);
	if (IS_ERR(qp))
		ib_destroy_cq(*cq);
	return qp;
}

/*
 * cb_probe_ms: where a completion callback comes from when a post to a QP
 * whose member is gone completes at once. The probe QP never leaves RESET:
 * with its member gone, the device completes the post itself.
 */
static int kperf_cb_probe(struct kperf_run *r)
{
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	struct ib_qp *qp;
	struct ib_cq *cq;

	qp = kperf_probe_qp(r, kperf_probe_comp, NULL, &cq);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	msleep(r->p.cb_probe_ms);
	/* Armed now: the member's removal may have taken an earlier arm. */
	while (ib_poll_cq(cq, 1, &wc) > 0)
		;
	atomic_set(&r->cb_calls, 0);
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	WRITE_ONCE(r->cb_poster, current);
	r->cb_post = ib_post_send(qp, &wr, NULL);
	WRITE_ONCE(r->cb_poster, NULL);
	/* A deferred callback has a second to come. */
	msleep(1000);
	while (ib_poll_cq(cq, 1, &wc) > 0)
		;
	ib_destroy_qp(qp);
	ib_destroy_cq(cq);
	r->t_end = ktime_get_ns();
	return 0;
}

/* How long a destroyed CQ is watched for a callback that comes too late. */
#define KPERF_LATE_WATCH_MS	10000

/*
 * armed_cq_ms: a CQ of its own, armed, held N ms and destroyed: a CQ that a
 * member's detach kicks while it goes (the vdev queues the callback of an
 * armed CQ; its destroy must not leave it queued). A callback after
 * ib_destroy_cq() returned is counted (cb_late): it ran on freed memory.
 */
static int kperf_armed_cq(struct kperf_run *r)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_cq *cq;

	cq = ib_create_cq(r->dev, kperf_probe_comp, NULL, r, &ca);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	msleep(r->p.armed_cq_ms);
	ib_destroy_cq(cq);
	WRITE_ONCE(r->cq_destroyed, true);
	msleep(KPERF_LATE_WATCH_MS);
	r->t_end = ktime_get_ns();
	return 0;
}

static void kperf_fatal_event(struct ib_event *ev, void *ctx)
{
	struct kperf_run *r = ctx;

	if (ev->event == IB_EVENT_QP_FATAL)
		atomic_inc(&r->ev_fatal);
	if (READ_ONCE(r->qp_destroyed))
		atomic_inc(&r->ev_late);
}

/*
 * fatal_qp_ms: an RC QP of its own, held N ms and destroyed, while the
 * caller fails its member: the vdev reports QP_FATAL from its callback
 * workqueue, and its destroy must not leave that work to run on the freed
 * QP. An event after ib_destroy_qp() returned is counted (ev_late).
 */
static int kperf_fatal_qp(struct kperf_run *r)
{
	struct ib_qp *qp;
	struct ib_cq *cq;

	qp = kperf_probe_qp(r, NULL, kperf_fatal_event, &cq);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	msleep(r->p.fatal_qp_ms);
	ib_destroy_qp(qp);
	WRITE_ONCE(r->qp_destroyed, true);
	msleep(KPERF_LATE_WATCH_MS);
	ib_destroy_cq(cq);
	r->t_end = ktime_get_ns();
	return 0;
}

static bool kperf_lat_done(struct kperf_run *r)
{
	u32 i;

	if (!kperf_sq_idle(r))
		return false;
	if (r->stopping)
		return true;
	for (i = 0; i < r->p.qps; i++)
		if (r->eps[i].rtts < r->p.iters)
			return false;
	return true;
}

static int kperf_lat(struct kperf_run *r)
{
	u32 i;
	int ret;

	for (i = 0; i < r->p.qps && !r->stopping; i++)
		kperf_post_ping(&r->eps[i]);
	ret = kperf_wait(r, kperf_lat_done, NULL, true);
	r->t_end = ktime_get_ns();
	return kperf_wait_fail(r, ret, "ping-pong");
}

static void kperf_stream_pump(struct kperf_run *r)
{
	bool any = false, paced;
	u64 now;
	u32 i;

	if (r->stopping)
		return;
	now = ktime_get_ns();
	if (now >= r->t_deadline) {
		r->stopping = true;
		return;
	}
	paced = r->p.pace_ms != 0;
	if (paced && now < r->t_next_post)
		return;
	r->t_next_post = now + (u64)r->p.pace_ms * NSEC_PER_MSEC;
	for (i = 0; i < 2 * r->p.qps; i++) {
		struct kperf_ep *ep = &r->eps[i];

		while (!ep->stopped && ep->sq.inflight < r->p.depth) {
			ep->next_write = !ep->next_write && !r->p.sends_only;
			if (kperf_post_data(ep, ep->next_write ? KPERF_OP_WRITE : KPERF_OP_SEND))
				break;
			if (paced)
				break;
		}
		any |= !ep->stopped;
	}
	if (!any) {
		pr_info("%s: every QP stopped after a failure\n", r->p.dev);
		r->stopping = true;
	}
}

static bool kperf_stopping(struct kperf_run *r)
{
	return r->stopping;
}

static int kperf_stream(struct kperf_run *r)
{
	int ret;

	r->t_deadline = r->t_start + (u64)r->p.duration_ms * NSEC_PER_MSEC;
	ret = kperf_wait(r, kperf_stopping, kperf_stream_pump, true);
	r->stopping = true;
	return kperf_wait_fail(r, ret, "the stream");
}

/*
 * keycheck: A_1 (PD_1) posts a SEND, a REG_MR and a LOCAL_INV that use pair 0's MR
 * (B_0's, PD_0). The return values are the result; whatever was accepted
 * is waited for here, its completion status recorded by kperf_done().
 */
static int kperf_keycheck(struct kperf_run *r)
{
	struct kperf_ep *a1 = &r->eps[1];
	struct ib_mr *mr = r->eps[r->p.qps].mr;
	u32 i;
	int ret;

	for (i = 0; i < KPERF_NPROBES; i++)
		r->kc_ret[i] = kperf_post_probe(a1, KPERF_OP_PROBE_SEND + i, mr);
	kperf_post_chain(a1);
	ret = kperf_wait(r, kperf_sq_idle, NULL, true);
	r->t_end = ktime_get_ns();
	return kperf_wait_fail(r, ret, "the keycheck probes");
}

/*
 * Every SEND that completed successfully was received (SEND completions come
 * in order, so they are the first sends_ok of the sequence), and the RDMA
 * WRITE targets hold the writers' pattern once a WRITE completed.
 */
static void kperf_stream_verify(struct kperf_run *r)
{
	u32 i, size = r->p.size;

	for (i = 0; i < 2 * r->p.qps; i++) {
		struct kperf_ep *ep = &r->eps[i];
		struct kperf_ep *peer = ep->peer;

		if (peer->sends_ok > ep->recv_seq) {
			r->verify_errors++;
			pr_err("%s: pair %u%c: peer's SENDs 0..%llu completed, received only up to %llu\n",
			       r->p.dev, ep->pair, kperf_side(ep), peer->sends_ok - 1,
			       ep->recv_seq);
		}
		if (!peer->writes_ok)
			continue;
		kperf_verify(ep, "WRITE target", ep->tgt, ep->tgt_dma, size, DMA_BIDIRECTIONAL,
			     kperf_seed(peer->pair, peer->side, 0));
	}
}

/* ---- stop and teardown ---- */

static void kperf_stop(struct kperf_run *r)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	u32 n = 2 * r->p.qps, i;
	int ret, inv;

	r->stopping = true;
	if (!r->eps)
		return;
	ret = kperf_wait(r, kperf_sq_idle, NULL, false);
	kperf_wait_fail(r, ret, "the stop");
	if (!r->t_end)
		r->t_end = ktime_get_ns();
	/* The targets are read after their MRs are invalidated (kperf_bw). */
	for (i = 0; i < n; i++)
		if (r->eps[i].mr_valid)
			kperf_post_inv(&r->eps[i]);
	inv = kperf_wait(r, kperf_sq_idle, NULL, false);
	kperf_wait_fail(r, inv, "LOCAL_INV");
	if (!ret && !inv && r->p.mode == KPERF_STREAM)
		kperf_stream_verify(r);

	r->at_stop = true;
	for (i = 0; i < n; i++) {
		if (!r->eps[i].qp_init)
			continue;
		ret = ib_modify_qp(r->eps[i].qp, &attr, IB_QP_STATE);
		if (ret)
			kperf_fail(r, "pair %u%c: ib_modify_qp to ERR: %d", r->eps[i].pair,
				   kperf_side(&r->eps[i]), ret);
	}
	ret = kperf_wait(r, kperf_all_idle, NULL, false);
	kperf_wait_fail(r, ret, "the final flush");
	for (i = 0; i < n; i++)
		r->lost += r->eps[i].sq.inflight + r->eps[i].rq.inflight;
	if (r->lost) {
		kperf_fail(r, "%llu WRs never completed", r->lost);
		r->skip_drain = true;
	}
}

static void kperf_teardown(struct kperf_run *r)
{
	u32 n = r->eps ? 2 * r->p.qps : 0, i;

	for (i = 0; i < n; i++) {
		if (!r->eps[i].qp_init)
			continue;
		if (r->skip_drain) {
			pr_warn("%s: pair %u%c: not drained: WRs are missing\n", r->p.dev,
				r->eps[i].pair, kperf_side(&r->eps[i]));
			continue;
		}
		ib_drain_qp(r->eps[i].qp);
	}
	for (i = 0; i < n; i++) {
		struct kperf_ep *ep = &r->eps[i];

		if (ep->mr)
			ib_dereg_mr(ep->mr);
		if (ep->qp)
			ib_destroy_qp(ep->qp);
	}
	for (i = 0; r->cqs && i < r->ncq; i++)
		if (r->cqs[i])
			ib_free_cq(r->cqs[i]);
	/* Contexts outlive the CQs: nothing can complete into them any more. */
	for (i = 0; i < n; i++) {
		struct kperf_ep *ep = &r->eps[i];

		kperf_queue_free(r, &ep->sq);
		kperf_queue_free(r, &ep->rq);
		if (ep->wsrc_dma)
			kperf_unmap(r, ep->wsrc_dma, r->p.size, KPERF_WSRC_DIR);
		if (ep->tgt_dma)
			kperf_unmap(r, ep->tgt_dma, r->p.size, DMA_BIDIRECTIONAL);
		kfree(ep->wsrc);
		kfree(ep->tgt);
	}
	for (i = 0; i < r->npd; i++)
		ib_dealloc_pd(r->pds[i]);
	if (r->sgid_attr)
		rdma_put_gid_attr(r->sgid_attr);
}

/* ---- results ---- */

static int kperf_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static bool kperf_ok(struct kperf_run *r)
{
	if (r->error[0] || r->dups || r->lost || r->verify_errors || r->stale)
		return false;
	if (r->p.mode == KPERF_STREAM)
		return true;
	/* The keycheck probes may fail in their completions: a result. */
	return r->flush + r->err == r->kc_failed && !r->post_errors;
}

static void kperf_report(struct kperf_run *r)
{
	u64 bytes = 0, elapsed = 0, mbps = 0;
	size_t len = 0, max = sizeof(kperf_result);
	char *buf;
	u32 i;

	buf = kmalloc(max, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; r->eps && i < 2 * r->p.qps; i++) {
		struct kperf_ep *ep = &r->eps[i];

		if (r->p.mode == KPERF_LAT)
			bytes += ep->side ? 0 : ep->rtts * 2 * r->p.size;
		else
			bytes += (ep->sends_ok + ep->writes_ok) * r->p.size;
	}
	if (r->t_start && r->t_end > r->t_start)
		elapsed = r->t_end - r->t_start;
	if (elapsed)
		mbps = div64_u64(bytes * 8 * 1000, elapsed);

	len += scnprintf(buf + len, max - len,
			 "dev=%s\nmode=%s\nqps=%u\nsize=%u\ndepth=%u\nshared_cq=%u\npd_per_pair=%u\n",
			 r->p.dev, kperf_mode_names[r->p.mode], r->p.qps, r->p.size,
			 r->p.depth, r->p.shared_cq, r->p.pd_per_pair);
	if (r->p.mode == KPERF_STREAM)
		len += scnprintf(buf + len, max - len, "duration_ms=%u\n", r->p.duration_ms);
	else
		len += scnprintf(buf + len, max - len, "iters=%u\n", r->p.iters);
	len += scnprintf(buf + len, max - len, "bytes=%llu\nelapsed_ns=%llu\nmbps=%llu\n",
			 bytes, elapsed, mbps);
	if (r->p.mode == KPERF_LAT) {
		u64 p50 = 0, p99 = 0;

		if (r->nlat) {
			sort(r->lat, r->nlat, sizeof(*r->lat), kperf_cmp_u64, NULL);
			p50 = r->lat[(r->nlat - 1) * 50 / 100];
			p99 = r->lat[(r->nlat - 1) * 99 / 100];
		}
		len += scnprintf(buf + len, max - len,
				 "lat_samples=%llu\nlat_p50_ns=%llu\nlat_p99_ns=%llu\n",
				 r->nlat, p50, p99);
	}
	len += scnprintf(buf + len, max - len,
			 "posted=%llu\ncompleted_ok=%llu\ncompleted_flush=%llu\ncompleted_err=%llu\n"
			 "rq_flushed_at_stop=%llu\nduplicates=%llu\nlost=%llu\n"
			 "verify_errors=%llu\nseq_dups=%llu\nseq_gaps=%llu\npost_errors=%llu\n",
			 r->posted, r->ok, r->flush, r->err, r->stop_flush, r->dups, r->lost,
			 r->verify_errors, r->seq_dups, r->seq_gaps, r->post_errors);
	if (r->p.cb_probe_ms)
		len += scnprintf(buf + len, max - len, "cb_post=%d\ncb_calls=%d\ncb_in_post=%d\n",
				 r->cb_post, atomic_read(&r->cb_calls),
				 atomic_read(&r->cb_in_post));
	if (r->p.armed_cq_ms)
		len += scnprintf(buf + len, max - len, "cb_calls=%d\ncb_late=%d\n",
				 atomic_read(&r->cb_calls), atomic_read(&r->cb_late));
	if (r->p.fatal_qp_ms)
		len += scnprintf(buf + len, max - len, "ev_fatal=%d\nev_late=%d\n",
				 atomic_read(&r->ev_fatal), atomic_read(&r->ev_late));
	if (r->p.remap_ms)
		len += scnprintf(buf + len, max - len, "maps=%llu\nmap_errors=%llu\n",
				 r->maps, r->map_errors);
	if (r->p.abandon)
		len += scnprintf(buf + len, max - len, "abandoned=%llu\nstale_completions=%llu\n",
				 r->abandoned, r->stale);
	if (r->p.mode == KPERF_KEYCHECK) {
		u32 einval = 0;

		len += scnprintf(buf + len, max - len, "keycheck_rets=%d,%d,%d\nkeycheck_wc=",
				 r->kc_ret[0], r->kc_ret[1], r->kc_ret[2]);
		for (i = 0; i < KPERF_NPROBES; i++) {
			einval += r->kc_ret[i] == -EINVAL;
			if (r->kc_done[i])
				len += scnprintf(buf + len, max - len, "%s%d", i ? "," : "",
						 r->kc_wc[i]);
			else
				len += scnprintf(buf + len, max - len, "%s-", i ? "," : "");
		}
		len += scnprintf(buf + len, max - len, "\nkeycheck_einval=%u\nkeycheck_recv=%llu\n",
				 einval, r->kc_recv);
		len += scnprintf(buf + len, max - len, "chain_ret=%d\nchain_bad=%d\n",
				 r->chain_ret, r->chain_bad);
	}
	if (kperf_ok(r))
		len += scnprintf(buf + len, max - len, "status=ok\n");
	else
		len += scnprintf(buf + len, max - len, "status=error\nerror=%s\n",
				 r->error[0] ? r->error : "checks failed");

	mutex_lock(&kperf_result_lock);
	memcpy(kperf_result, buf, len);
	kperf_result_len = len;
	mutex_unlock(&kperf_result_lock);
	kfree(buf);
	pr_info("%s: %s qps=%u: %s, %llu Mbit/s, posted %llu ok %llu flush %llu err %llu dup %llu lost %llu verify %llu\n",
		r->p.dev, kperf_mode_names[r->p.mode], r->p.qps,
		kperf_ok(r) ? "ok" : "error", mbps, r->posted, r->ok, r->flush, r->err,
		r->dups, r->lost, r->verify_errors);
}

static int kperf_run(const struct kperf_params *p)
{
	struct kperf_run *r;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->p = *p;
	r->dev = ib_device_get_by_name(p->dev, RDMA_DRIVER_UNKNOWN);
	if (!r->dev) {
		pr_err("dev: no RDMA device %s\n", p->dev);
		kfree(r);
		return -ENODEV;
	}
	ret = kperf_setup(r);
	if (!ret) {
		r->t_start = ktime_get_ns();
		if (p->mode == KPERF_BW && p->remap_ms)
			ret = kperf_remap(r);
		else if (p->mode == KPERF_BW && p->cb_probe_ms)
			ret = kperf_cb_probe(r);
		else if (p->mode == KPERF_BW && p->armed_cq_ms)
			ret = kperf_armed_cq(r);
		else if (p->mode == KPERF_BW && p->fatal_qp_ms)
			ret = kperf_fatal_qp(r);
		else if (p->mode == KPERF_BW && p->abandon)
			ret = kperf_abandon(r) ?: kperf_bw(r);
		else if (p->mode == KPERF_BW)
			ret = kperf_bw(r);
		else if (p->mode == KPERF_LAT)
			ret = kperf_lat(r);
		else if (p->mode == KPERF_STREAM)
			ret = kperf_stream(r);
		else
			ret = kperf_keycheck(r);
	}
	kperf_stop(r);
	kperf_teardown(r);
	kperf_report(r);
	ret = r->rc ?: (kperf_ok(r) ? 0 : -EIO);
	ib_device_put(r->dev);
	kfree(r->eps);
	kfree(r->cqs);
	kfree(r->pds);
	kvfree(r->lat);
	kfree(r);
	return ret;
}

/* ---- command line ---- */

struct kperf_key {
	const char *name;
	size_t off;
	u32 min;
	u32 max;
};

static const struct kperf_key kperf_keys[] = {
	{ "port", offsetof(struct kperf_params, port), 1, 255 },
	{ "qps", offsetof(struct kperf_params, qps), 1, KPERF_MAX_QPS },
	{ "size", offsetof(struct kperf_params, size), 1, KPERF_MAX_BW_SIZE },
	{ "depth", offsetof(struct kperf_params, depth), 1, KPERF_MAX_DEPTH },
	{ "iters", offsetof(struct kperf_params, iters), 1, KPERF_MAX_ITERS },
	{ "duration_ms", offsetof(struct kperf_params, duration_ms), 1, 3600000 },
	{ "pace_ms", offsetof(struct kperf_params, pace_ms), 0, 10000 },
	{ "shared_cq", offsetof(struct kperf_params, shared_cq), 0, 1 },
	{ "pd_per_pair", offsetof(struct kperf_params, pd_per_pair), 0, 1 },
	{ "abandon", offsetof(struct kperf_params, abandon), 0, 1 },
	{ "remap_ms", offsetof(struct kperf_params, remap_ms), 0, 60000 },
	{ "cb_probe_ms", offsetof(struct kperf_params, cb_probe_ms), 0, 60000 },
	{ "armed_cq_ms", offsetof(struct kperf_params, armed_cq_ms), 0, 60000 },
	{ "fatal_qp_ms", offsetof(struct kperf_params, fatal_qp_ms), 0, 60000 },
	{ "global_rkey", offsetof(struct kperf_params, global_rkey), 0, 1 },
	{ "unmapped", offsetof(struct kperf_params, unmapped), 0, 1 },
	{ "read", offsetof(struct kperf_params, read), 0, 1 },
	{ "sends_only", offsetof(struct kperf_params, sends_only), 0, 1 },
};

static int kperf_parse_kv(struct kperf_params *p, const char *key, const char *val,
			  bool *have_dev, bool *have_gid)
{
	u32 i, v;
	int m;

	if (!strcmp(key, "dev")) {
		if (!*val || strscpy(p->dev, val, sizeof(p->dev)) < 0)
			return -EINVAL;
		*have_dev = true;
		return 0;
	}
	if (!strcmp(key, "gid")) {
		if (!in4_pton(val, -1, (u8 *)&p->addr, -1, NULL))
			return -EINVAL;
		*have_gid = true;
		return 0;
	}
	if (!strcmp(key, "mode")) {
		m = match_string(kperf_mode_names, ARRAY_SIZE(kperf_mode_names), val);
		if (m < 0)
			return -EINVAL;
		p->mode = m;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(kperf_keys); i++) {
		const struct kperf_key *k = &kperf_keys[i];

		if (strcmp(key, k->name))
			continue;
		if (kstrtou32(val, 0, &v) || v < k->min || v > k->max)
			return -EINVAL;
		*(u32 *)((char *)p + k->off) = v;
		return 0;
	}
	pr_err("unknown key '%s'\n", key);
	return -ENOENT;
}

static int kperf_parse(char *cmd, struct kperf_params *p)
{
	bool have_dev = false, have_gid = false;
	u64 bytes;
	char *tok, *val;
	int ret;

	memset(p, 0, sizeof(*p));
	p->port = 1;
	p->depth = 16;
	p->iters = 1000;
	p->duration_ms = 5000;
	p->shared_cq = 1;
	while ((tok = strsep(&cmd, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val) {
			pr_err("bad argument '%s': not key=value\n", tok);
			return -EINVAL;
		}
		*val++ = '\0';
		ret = kperf_parse_kv(p, tok, val, &have_dev, &have_gid);
		if (ret == -EINVAL)
			pr_err("bad value for key %s: '%s'\n", tok, val);
		if (ret)
			return -EINVAL;
	}
	if (!have_dev || !have_gid) {
		pr_err("missing key %s\n", have_dev ? "gid" : "dev");
		return -EINVAL;
	}
	if (!p->qps)
		p->qps = p->mode == KPERF_KEYCHECK ? 2 : 1;
	if (p->mode == KPERF_KEYCHECK && (p->qps < 2 || !p->pd_per_pair)) {
		pr_err("mode: keycheck needs qps>=2 and pd_per_pair=1 (qps=%u pd_per_pair=%u)\n",
		       p->qps, p->pd_per_pair);
		return -EINVAL;
	}
	if ((p->remap_ms || p->cb_probe_ms || p->armed_cq_ms || p->fatal_qp_ms) &&
	    (p->mode != KPERF_BW || p->abandon ||
	     !!p->remap_ms + !!p->cb_probe_ms + !!p->armed_cq_ms +
	     !!p->fatal_qp_ms > 1)) {
		pr_err("remap_ms, cb_probe_ms, armed_cq_ms, fatal_qp_ms: one of them, with mode=bw and without abandon\n");
		return -EINVAL;
	}
	if (p->abandon && (p->mode != KPERF_BW || p->qps < 2)) {
		pr_err("abandon: needs mode=bw and qps>=2\n");
		return -EINVAL;
	}
	if (!p->size)
		p->size = p->mode == KPERF_BW ? 65536 : p->mode == KPERF_LAT ? 64 : 4096;
	if (p->mode == KPERF_KEYCHECK && p->size < KPERF_PROBE_LEN) {
		pr_err("size: %u is below the %u bytes of the keycheck probe SEND\n", p->size,
		       KPERF_PROBE_LEN);
		return -EINVAL;
	}
	if (p->mode != KPERF_BW && p->mode != KPERF_KEYCHECK &&
	    (p->size < sizeof(struct kperf_hdr) || p->size > KPERF_MAX_MSG_SIZE)) {
		pr_err("size: %u is out of range %zu..%u for SEND/RECV\n", p->size,
		       sizeof(struct kperf_hdr), KPERF_MAX_MSG_SIZE);
		return -EINVAL;
	}
	if (p->mode == KPERF_LAT && (u64)p->qps * p->iters > KPERF_MAX_LAT_SAMPLES) {
		pr_err("iters: qps * iters must not exceed %u latency samples\n",
		       KPERF_MAX_LAT_SAMPLES);
		return -EINVAL;
	}
	/*
	 * Per QP: two queues of 2 * (depth + 4) slots, a source and a target;
	 * keycheck has B's RECV slots only.
	 */
	if (p->mode == KPERF_BW)
		bytes = (u64)2 * p->qps * p->size * 2;
	else if (p->mode == KPERF_KEYCHECK)
		bytes = (u64)p->qps * p->size * (2 * (p->depth + 4) + 2);
	else
		bytes = (u64)2 * p->qps * p->size * (4 * (p->depth + 4) + 2);
	if (bytes > KPERF_MAX_BUF_BYTES) {
		pr_err("size: %llu bytes of buffers for qps=%u depth=%u size=%u, over %u\n",
		       bytes, p->qps, p->depth, p->size, KPERF_MAX_BUF_BYTES);
		return -EINVAL;
	}
	return 0;
}

/* ---- debugfs ---- */

static ssize_t kperf_run_write(struct file *file, const char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	struct kperf_params p;
	char *cmd;
	int ret;

	if (!len || len >= KPERF_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	ret = kperf_parse(cmd, &p);
	kfree(cmd);
	if (ret)
		return ret;
	if (!mutex_trylock(&kperf_run_lock))
		return -EBUSY;
	ret = kperf_run(&p);
	mutex_unlock(&kperf_run_lock);
	return ret ?: len;
}

static ssize_t kperf_result_read(struct file *file, char __user *ubuf, size_t len,
				 loff_t *ppos)
{
	ssize_t ret;
	size_t n;
	char *buf;

	buf = kmalloc(KPERF_RESULT_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&kperf_result_lock);
	n = kperf_result_len;
	memcpy(buf, kperf_result, n);
	mutex_unlock(&kperf_result_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, n);
	kfree(buf);
	return ret;
}

static const struct file_operations kperf_run_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kperf_run_write,
	.llseek = noop_llseek,
};

static const struct file_operations kperf_result_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = kperf_result_read,
	.llseek = default_llseek,
};

static int __init kperf_init(void)
{
	kperf_dir = debugfs_create_dir("mrbond_kperf", NULL);
	debugfs_create_file("run", 0200, kperf_dir, NULL, &kperf_run_fops);
	debugfs_create_file("result", 0400, kperf_dir, NULL, &kperf_result_fops);
	return 0;
}

static void __exit kperf_exit(void)
{
	debugfs_remove_recursive(kperf_dir);
}

module_init(kperf_init);
module_exit(kperf_exit);

MODULE_DESCRIPTION("rdma_mrbond selftest: in-kernel RDMA traffic with payload checks");
MODULE_LICENSE("GPL");
