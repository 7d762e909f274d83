/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to the verbs proxy (verbs/mrbond_verbs_*.c): the vdev objects and
 * the member objects behind them.
 *
 * The vdev's objects are Rust's (rust/rdma/): PDs, MRs, CQs, AHs and QPs,
 * QP1 and its sends (gsi.rs, gsi_send.rs) included; so are members
 * attaching, failing and leaving (member.rs), under objs_lock. What stays
 * here: the member slots and the members' MAD agents and REQ listeners,
 * which Rust's QP1 sends through and takes requests from.
 *
 * Locks, outermost first:
 *  - mrbond_vdev.objs_lock (mutex "mrbond:vdev-objects"): member objects
 *    are created and destroyed under it, and members attached and
 *    detached. Rust's QP verbs take it (mrbond_rdma_vdev_objs_lock()),
 *    after their placement. Inside it: the MR table's lock ("mrbond:mrs"),
 *    the PDs' ("mrbond:pds", "mrbond:pd"), the CQs' ("mrbond:cqs"), the
 *    QPNs' ("mrbond:qpns"), the QP set's ("mrbond:qps", whose walks end
 *    connection exchanges: a QP's "mrbond:qp-cm", then QP1's
 *    "mrbond:gsi"), the exchange records' ("mrbond:qp-cm", also taken
 *    alone as the proxy notes a REQ or REP) and the QP data paths'
 *    (below); never the bond's own locks.
 *  - a vdev CQ's "mrbond:cq-poll" (Rust, spinlock, IRQs off): polling its
 *    member CQs, and replacing them. A poll translates a completion under
 *    it, taking the QP's "mrbond:qp".
 *  - a QP's "mrbond:qp" (Rust, spinlock, IRQs off): its member QP and
 *    shadow rings; held across the member post, so that a post never
 *    races with the member QP's destruction.
 *  - a vdev CQ's "mrbond:cq-swq" (Rust, spinlock, IRQs off): its software
 *    queue (synthesised flushes), pushed to under "mrbond:qp". Innermost.
 *  - QP1's "mrbond:gsi" (Rust, spinlock, IRQs off: rust/rdma/gsi.rs): the
 *    QP1 of each port, completed to under it; inside it its receive
 *    buffers' "mrbond:gsi-rq", and "mrbond:cq-swq".
 */
#ifndef _RDMA_MRBOND_VERBS_PRIV_H
#define _RDMA_MRBOND_VERBS_PRIV_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev_priv.h"

static inline struct mrbond_vdev *mrbond_vdev_of(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mrbond_vdev, ibdev);
}

/* verbs/mrbond_verbs_gsi.c */
void mrbond_gsi_member_attach(struct mrbond_vdev *v, u32 slot);

#endif /* _RDMA_MRBOND_VERBS_PRIV_H */
