/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to rust/mrbond_vdev.c and rust/mrbond_sysfs.c: the layout of a
 * vdev. Rust never sees it (it only holds struct mrbond_vdev pointers).
 */
#ifndef _RDMA_MRBOND_VDEV_PRIV_H
#define _RDMA_MRBOND_VDEV_PRIV_H

#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_vdev.h"

struct mrbond_sysfs_kobj;

struct mrbond_vdev {
	struct ib_device ibdev;		/* offset 0: ib_alloc_device() */
	void *bond;			/* opaque Rust bond, one reference */
	u32 nports;
	/* What query_device reports; written before registration only. */
	struct ib_device_attr attrs;
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
};

#endif /* _RDMA_MRBOND_VDEV_PRIV_H */
