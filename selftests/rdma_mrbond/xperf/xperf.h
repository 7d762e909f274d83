/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mrbond_xperf: RDMA traffic between two hosts through rdma_cm. Shared by
 * the tool's files: the run, its connections, the wire formats.
 */
#ifndef MRBOND_XPERF_H
#define MRBOND_XPERF_H

#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define XP_MAX_CONNS		512
#define XP_MAX_ADDRS		4
#define XP_MAX_GENS		4	/* reconnect: connections per index */
#define XP_MAX_DEPTH		128
#define XP_MAX_SIZE		SZ_1M
#define XP_MAX_MSG		SZ_64K
#define XP_CTRL_SIZE		64
#define XP_STALL_MS		10000
#define XP_RESULT_MAX		(64 * 1024)
#define XP_MAGIC		0x78706572	/* "xper" */
#define XP_VERSION		2
/* The passive side's PDs: the bond pins their QPs to the REQ's rail. */
#define XP_SERVER_ULP		"mrbond_xperf_srv"

enum xp_role { XP_CLIENT, XP_SERVER };
enum xp_mode { XP_WRITE, XP_SEND, XP_LAT, XP_CONNECT, XP_WLAT, XP_NR_MODES };

/* lat and wlat: one message each way at a time, timed by the client. */
static inline bool xp_pingpong(enum xp_mode mode)
{
	return mode == XP_LAT || mode == XP_WLAT;
}

/* The modes whose data WRs carry whole messages of the run's size. */
static inline bool xp_msg_sized(enum xp_mode mode)
{
	return mode == XP_SEND || xp_pingpong(mode);
}

/* Where a connection is in rdma_cm, as its event handler saw it. */
enum xp_cm_state {
	XP_CM_IDLE, XP_CM_ROUTED, XP_CM_ESTABLISHED, XP_CM_DISCONNECTED,
	XP_CM_FAILED
};

enum xp_op { XP_OP_DATA, XP_OP_CTRL, XP_OP_WRITE, XP_OP_RECV, XP_OP_REG, XP_OP_INV };

enum xp_msg_type { XP_MSG_DATA = 1, XP_MSG_READY, XP_MSG_DONE, XP_MSG_RESULT };

struct xp_params {
	enum xp_role role;
	enum xp_mode mode;
	__be32 local[XP_MAX_ADDRS];
	u32 nlocal;
	__be32 peer[XP_MAX_ADDRS];
	u32 npeer;
	char dev[XP_MAX_ADDRS][IB_DEVICE_NAME_MAX];
	u32 ndev;
	u32 cm_port;
	u32 conns;
	u32 size;
	u32 depth;
	u32 duration_ms;
	u32 iters;
	u32 connect_ms;
	u32 timeout_ms;
	u32 open_gap_ms;
	u32 keep_going;
	u32 reconnect;
	u32 corrupt;
	u32 late_poll_ms;
	u32 run_id;
};

/* The connection request's private data (at most 56 bytes on RoCE). */
struct xp_req {
	__le32 magic;
	u8 version;
	u8 mode;
	__le16 conn;
	__le16 conns;
	__le16 depth;
	__le32 size;
	__le32 run_id;
	u8 gen;			/* reconnect: the how-manieth of conn */
	/* wlat: where the client's WRITE target is. */
	__le32 rkey;
	__le64 addr;
} __packed;

/* The reply's: where the server's WRITE target is. */
struct xp_rep {
	__le32 magic;
	__le32 rkey;
	__le64 addr;
	__le32 run_id;
} __packed;

/* Head of every SEND; DATA's payload after it is a pattern of seq. */
struct xp_msg {
	__le32 magic;
	__le16 type;
	__le16 conn;
	__le64 seq;
	/* DONE: count of DATA sent; RESULT: what the server saw. */
	__le64 count;
	__le64 recv;
	__le64 verify_errors;
	__le64 seq_gaps;
	__le64 seq_dups;
} __packed;

struct xp_conn;

/* One WR context; its ib_cqe is the wr_cqe of the WR posted from it. */
struct xp_slot {
	struct ib_cqe cqe;
	struct xp_conn *conn;
	void *buf;
	u64 dma;
	enum xp_op op;
	bool busy;
	bool rq;
};

struct xp_queue {
	struct xp_slot *slots;
	u32 nslots;
	u32 next;
	u32 inflight;
};

struct xp_run;

/* One RC connection: its cm_id and everything on id->device. */
struct xp_conn {
	bool listener;		/* false: tells a conn from a listener ctx */
	struct xp_run *run;
	u32 idx;		/* the client's connection index */
	u32 gen;		/* reconnect: its generation */
	struct rdma_cm_id *id;
	struct ib_device *dev;
	u32 port;		/* id->port_num: on a bond's passive side, the rail */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	/* Set by the CM handler under run->lock, read by the run's task. */
	enum xp_cm_state cm_state;
	int cm_status;
	u64 t_connect;		/* client: rdma_connect() called */
	u64 t_established;
	u32 msg_size;
	struct xp_queue sq;
	struct xp_queue rq;
	/*
	 * write: the client's WRITE source, the server's FRWR-registered
	 * target; wlat: both ends' target (the sources are SQ slots).
	 */
	void *wbuf;
	u64 wdma;
	enum dma_data_direction wdir;
	struct scatterlist sg;
	struct ib_mr *mr;
	u32 rkey;		/* the peer's target */
	u64 raddr;
	/* The run's task only. */
	bool set_up;
	bool ready;		/* client: READY received; server: sent */
	bool target_posted;	/* client, wlat: REG_MR of its target posted */
	bool target_ready;	/* client, wlat: ... and completed */
	bool stopped;		/* a WR failed: post no more */
	bool result_sent;
	bool finished;		/* server: RESULT completed */
	bool got_result;
	u64 send_seq;
	u64 recv_seq;
	u64 data_ok;		/* DATA SENDs or WRITEs completed */
	u64 data_ok_steady;	/* ... when the last connection was READY */
	u64 data_ok_stop;	/* ... when posting stopped */
	u64 data_ok_gen;	/* ... in this generation */
	/* The first and the last data completion while posting (paced rate). */
	u64 t_first_ok;
	u64 t_last_ok;
	u64 data_ok_last;	/* data_ok at t_last_ok */
	u64 recv_data;
	u64 verify_errors;	/* server: bad DATA or target, for RESULT */
	u64 seq_gaps;
	u64 seq_dups;
	u64 rtts;
	u64 ping_t0;
	struct xp_msg result;	/* client: the server's RESULT */
};

struct xp_listener {
	bool listener;		/* true */
	struct xp_run *run;
	struct rdma_cm_id *id;
};

struct xp_run {
	struct xp_params p;
	spinlock_t lock;	/* conns' cm_state/cm_status, run->removed */
	bool removed;		/* DEVICE_REMOVAL on a listener */
	struct xp_listener listeners[XP_MAX_ADDRS];
	u32 nlisteners;
	struct xp_conn *conns;
	u32 nconns;		/* client: conns; server: conns * generations */
	u32 reconnects;		/* client: connections opened again */
	u32 accepted;		/* server: REQs accepted (under lock) */
	u32 opened;		/* client: connections opened so far */
	u64 t_open0;
	u64 t_all_ready;	/* open_gap_ms: the last connection READY */
	u64 t_start;
	u64 t_stop;		/* posting stopped: the measured window's end */
	u64 t_end;
	bool stopping;
	bool at_stop;
	u64 *lat;
	u64 nlat;
	u64 lat_max;
	u64 *connect_ns;
	u64 posted, ok, flush, err, stop_flush, dups, lost;
	u64 verify_errors, seq_gaps, seq_dups, post_errors;
	u32 conns_broken;	/* keep_going: connections that failed */
	/* client: what the server's RESULTs said */
	u64 remote_recv, remote_verify_errors, remote_seq_errors, remote_missing;
	char error[160];
};

__printf(2, 3) void xp_fail(struct xp_run *r, const char *fmt, ...);

/* xperf_cm.c: connections through rdma_cm. */
int xp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
int xp_client_open_due(struct xp_run *r);
int xp_client_open(struct xp_run *r, struct xp_conn *c);
int xp_server_listen(struct xp_run *r);
int xp_client_setup(struct xp_conn *c);
void xp_server_unlisten(struct xp_run *r);
void xp_conn_teardown(struct xp_conn *c);
enum xp_cm_state xp_cm_state(struct xp_conn *c);
u64 xp_cm_established_at(struct xp_conn *c);

/* xperf_main.c: what a completion means to the run. */
void xp_recv_msg(struct xp_conn *c, const struct xp_msg *m, u32 len);
void xp_recv_write(struct xp_conn *c, u32 imm, u32 len);
void xp_ctrl_sent(struct xp_conn *c);
void xp_target_registered(struct xp_conn *c);
void xp_target_invalidated(struct xp_conn *c);

/* xperf_data.c: buffers, posting, completions, patterns. */
int xp_conn_bufs(struct xp_conn *c);
void xp_conn_free_bufs(struct xp_conn *c);
int xp_post_recv(struct xp_conn *c);
int xp_post_msg(struct xp_conn *c, enum xp_msg_type type, u64 seq, const struct xp_msg *body);
int xp_post_write(struct xp_conn *c);
int xp_post_write_imm(struct xp_conn *c, u64 seq);
int xp_post_reg(struct xp_conn *c);
int xp_post_inv(struct xp_conn *c);
int xp_prepare_target(struct xp_conn *c);
void xp_fill_words(void *buf, u32 len, u64 seed);
u32 xp_check_words(const void *buf, u32 len, u64 seed);
u64 xp_seed(u32 run_id, u32 conn, u32 side, u64 seq);
int xp_poll(struct xp_run *r);
bool xp_conn_broken(struct xp_conn *c, const char *why);
bool xp_queues_idle(struct xp_conn *c);
void xp_idle(unsigned long idle_since);

#endif
