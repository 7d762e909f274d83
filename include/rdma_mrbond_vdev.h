/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sysfs tree of a bond's virtual ib_device (shim/mrbond_sysfs.c, whose
 * directories rust/rdma/vdev.rs adds): its attribute ids and the C -> Rust
 * show/store they forward to.
 */
#ifndef _RDMA_MRBOND_VDEV_H
#define _RDMA_MRBOND_VDEV_H

#include <linux/types.h>

/* MRBOND_MAX_MEMBERS: in rail mode member slot i is port i + 1. */
#include "rdma_mrbond_glue.h"

#define MRBOND_MAX_PORTS 16

/* Bond-wide sysfs attributes under /sys/class/infiniband/<vdev>/mrbond/. */
enum mrbond_bond_attr {
	MRBOND_BOND_ATTR_MODE,		/* ro: rail | active-backup */
	MRBOND_BOND_ATTR_POLICY,	/* rw: wrr | lqf | hash | rr | pinned */
	MRBOND_BOND_ATTR_MEMBERS,	/* ro: member_list, one ib device per line */
	MRBOND_BOND_ATTR_USABLE,	/* ro: number of usable members */
	MRBOND_BOND_ATTR_LACP_SOURCE,	/* ro: LACP source netdev or empty */
	MRBOND_BOND_ATTR_SPEED,		/* ro: Mb/s summed over usable members */
	MRBOND_BOND_ATTR_MAX
};

/* Per-member attributes under .../mrbond/members/<member ibdev>/. */
enum mrbond_member_attr {
	MRBOND_MEMBER_ATTR_NETDEV,	/* ro */
	MRBOND_MEMBER_ATTR_STATE,	/* ro: usable | draining | unusable */
	MRBOND_MEMBER_ATTR_REASON,	/* ro */
	MRBOND_MEMBER_ATTR_WEIGHT,	/* rw: 1..1000 */
	MRBOND_MEMBER_ATTR_ADMIN,	/* rw: up | drain | down */
	MRBOND_MEMBER_ATTR_QPS,		/* ro */
	MRBOND_MEMBER_ATTR_OUTSTANDING,	/* ro */
	MRBOND_MEMBER_ATTR_TRANSITIONS,	/* ro */
	MRBOND_MEMBER_ATTR_LACP,	/* ro: "none" or "link_up=X tx_enabled=Y" */
	MRBOND_MEMBER_ATTR_UTILISATION,	/* ro: permille of capacity, or "unknown" */
	MRBOND_MEMBER_ATTR_CAPACITY,	/* rw: Mb/s, 0 = link speed */
	MRBOND_MEMBER_ATTR_MAX
};

/* SGEs per WR the vdev accepts: the translated copy lives on the stack. */
#define MRBOND_MAX_SGE		16

/*
 * C -> Rust (shim/mrbond_sysfs.c): bond is the data the directories were
 * made with (rust/rdma/vdev.rs), which outlives them.
 */
/* sysfs: format into buf (PAGE_SIZE) and return the length, or -errno. */
ssize_t mrbond_rs_bond_attr_show(void *bond, u32 attr, char *buf);
/* sysfs: parse and apply; 0 or -errno (-EINVAL: bad value, nothing changed). */
int mrbond_rs_bond_attr_store(void *bond, u32 attr, const char *buf,
			      size_t len);
ssize_t mrbond_rs_member_attr_show(void *bond, u32 slot, u32 attr, char *buf);
int mrbond_rs_member_attr_store(void *bond, u32 slot, u32 attr,
				const char *buf, size_t len);

#endif /* _RDMA_MRBOND_VDEV_H */
