/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the regression tests of races (test builds only:
 * `make MRBOND_FAULT_INJECT=1`). A point widens one race window on demand:
 * /sys/kernel/debug/rdma_mrbond/inject/<point> takes a delay in ms, which
 * the next pass through the point waits once (sleeping, or busy-waiting
 * where it may not sleep), or a failure point fails once;
 * reading the file gives
 * "armed_ms=<delay> hits=<passes while armed>". Without the build flag the
 * points compile to nothing.
 */
#ifndef _RDMA_MRBOND_INJECT_H
#define _RDMA_MRBOND_INJECT_H

enum mrbond_inject_point {
	/* Member detach: a member QP taken away, not yet destroyed/flushed. */
	MRBOND_INJECT_DETACH_QP,
	/* map_mr_sg: the member MR read, not yet mapped. */
	MRBOND_INJECT_MAP_MR_SG,
	/* GSI member attach: a REQ listener live, its context not yet set. */
	MRBOND_INJECT_CM_LISTEN,
	/* Member attach fails (-EIO): a usable member the proxy lacks. */
	MRBOND_INJECT_ATTACH_FAIL,
	/* A member got a REQ, not yet handed to the vdev: the peer waits. */
	MRBOND_INJECT_CM_REQ_IN,
	/* The vdev sent a CM REQ, not yet on a member: the link may go. */
	MRBOND_INJECT_GSI_REQ_OUT,
	/* A member turned unusable, its QPs not yet moved to ERR. */
	MRBOND_INJECT_MEMBER_FAIL,
	/* alloc_mr: the member chosen, its MR not yet allocated. */
	MRBOND_INJECT_ALLOC_MR,
	/* destroy_cq: called, the CQ still where a detach kicks it. */
	MRBOND_INJECT_CQ_DESTROY,
	/* A CQ's callback work: running, its CQ not yet read. */
	MRBOND_INJECT_CQ_KICK_WORK,
	/* A QP's QP_FATAL work: running, its QP not yet read. */
	MRBOND_INJECT_QP_FATAL_WORK,
	MRBOND_INJECT_NR,
};

#ifdef MRBOND_FAULT_INJECT
/* Sleeps: process context, no spinlock or RCU read side held. */
void mrbond_inject(enum mrbond_inject_point point);
/*
 * For points that may be in atomic context: sleeps where the kernel can
 * tell that sleeping is allowed (preemptible(), on kernels that count
 * preemption, as the debug kernel), busy-waits elsewhere.
 */
void mrbond_inject_any(enum mrbond_inject_point point);
/* True once per arming (any nonzero value): the point fails. */
bool mrbond_inject_fail(enum mrbond_inject_point point);
void mrbond_inject_init(void);
void mrbond_inject_exit(void);
#else
static inline void mrbond_inject(enum mrbond_inject_point point) {}
static inline void mrbond_inject_any(enum mrbond_inject_point point) {}
static inline bool mrbond_inject_fail(enum mrbond_inject_point point)
{
	return false;
}
static inline void mrbond_inject_init(void) {}
static inline void mrbond_inject_exit(void) {}
#endif

#endif /* _RDMA_MRBOND_INJECT_H */
