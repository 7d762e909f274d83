/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to verbs/mrbond_vdev.c and shim/mrbond_sysfs.c: the layout of a
 * vdev. Rust never sees it (it only holds struct mrbond_vdev pointers).
 */
#ifndef _RDMA_MRBOND_VDEV_PRIV_H
#define _RDMA_MRBOND_VDEV_PRIV_H

#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev.h"

struct mrbond_sysfs_kobj;

/*
 * A member as the verbs proxy sees it. dev is set and cleared by Rust
 * (rust/rdma/member.rs, through mrbond_rdma_vdev_set_member()) under
 * objs_lock. Its data-path counters are Rust's (rust/rdma/qp_path.rs).
 */
struct mrbond_member_slot {
	struct ib_device *dev;
	u32 port;
};

/*
 * The vdev's verbs that Rust implements (rust/ports.rs; the table is built
 * by rust/rdma/device.rs), set before mrbond_vdev.c's own table.
 */
extern const struct ib_device_ops mrbond_rs_dev_ops;

struct mrbond_vdev {
	struct ib_device ibdev;		/* offset 0: ib_alloc_device() */
	void *bond;			/* opaque Rust bond, one reference */
	u32 nports;
	/* mrbond_vdev_register() succeeded; only the Rust caller's thread. */
	bool registered;
	/* GID rescan after a port binding changed while registered. */
	struct work_struct rescan_work;

	/*
	 * Serialises the sysfs pointers below and the "dead" flag against
	 * .dealloc_driver, which may run from `rdma link del` in any thread.
	 * Never held while removing a kobject: removal waits for running
	 * show/store, which call into Rust, which may call back into us.
	 */
	struct mutex lock;
	/* .dealloc_driver ran: the bond reference is gone, add nothing. */
	bool dead;
	struct mrbond_sysfs_kobj *sysfs_bond;		/* mrbond/ */
	struct kobject *sysfs_members;			/* mrbond/members/ */
	struct mrbond_sysfs_kobj *sysfs_member[MRBOND_MAX_PORTS];

	/*
	 * The objects lock ("mrbond:vdev-objects"; rust/rdma/device.rs's
	 * ObjectsGuard): member objects are created and destroyed under it,
	 * and members attached and detached. Rust's QP verbs take it after
	 * their placement. Inside it: the MR table's lock ("mrbond:mrs"), the
	 * PDs' ("mrbond:pds", "mrbond:pd"), the CQs' ("mrbond:cqs"), the
	 * QPNs' ("mrbond:qpns"), the members' MAD agents and listeners'
	 * ("mrbond:gsi-members"), the QP set's ("mrbond:qps", whose walks end
	 * connection exchanges: a QP's "mrbond:qp-cm", then QP1's
	 * "mrbond:gsi") and the QP data paths' ("mrbond:qp"); never the
	 * bond's own locks. The data path's locks, all IRQ-safe spinlocks:
	 * a CQ's "mrbond:cq-poll" -> a QP's "mrbond:qp" -> a CQ's
	 * "mrbond:cq-swq"; "mrbond:gsi" -> "mrbond:gsi-rq" and
	 * "mrbond:cq-swq". See Documentation/dev-tools/notes/data-path-plan.md.
	 */
	struct mutex objs_lock;
	struct mrbond_member_slot member[MRBOND_MAX_MEMBERS];

	/* Sends MADs through members from process context; ordered. */
	struct workqueue_struct *gsi_wq;
	/*
	 * Runs the ULP callbacks the vdev raises itself (completion events of
	 * synthesised completions, QP_FATAL), so that none is called with a
	 * bond lock held or from inside the ULP's own post; ordered, so that
	 * a QP's flushes are announced before its death.
	 */
	struct workqueue_struct *cb_wq;
};

#endif /* _RDMA_MRBOND_VDEV_PRIV_H */
