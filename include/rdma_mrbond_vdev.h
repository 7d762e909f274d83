/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtual ib_device of a bond (verbs/mrbond_vdev.c) and its sysfs tree
 * (shim/mrbond_sysfs.c): the C side of the Rust <-> C ABI for them.
 *
 * A vdev carries an opaque pointer to its Rust bond ("bond" below), passed
 * back in every C -> Rust callback. The vdev owns one reference on the bond
 * from mrbond_vdev_alloc() until it calls mrbond_rs_vdev_release() (from
 * .dealloc_driver, or from mrbond_vdev_free() when never registered).
 */
#ifndef _RDMA_MRBOND_VDEV_H
#define _RDMA_MRBOND_VDEV_H

#include <linux/types.h>

/* MRBOND_MAX_MEMBERS: in rail mode member slot i is port i + 1. */
#include "rdma_mrbond_glue.h"

struct ib_device;
struct mrbond_vdev;

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

/* Rust -> C (verbs/mrbond_vdev.c). Process context; never under RTNL. */

/* Allocates an unregistered vdev with nports RoCE v2 ports; NULL on -ENOMEM. */
struct mrbond_vdev *mrbond_vdev_alloc(void *bond, u32 nports, u64 node_guid);
/* Binds 1-based port to the netdev with ifindex in init_net (0 unbinds). */
int mrbond_vdev_set_port_netdev(struct mrbond_vdev *v, u32 port, int ifindex);
/* SGEs per WR the vdev accepts: the translated copy lives on the stack. */
#define MRBOND_MAX_SGE		16
/* Registers as name ("mrbond%d" picks a free index). Not from an ib_client
 * callback. On failure the vdev is still allocated: call mrbond_vdev_free().
 */
int mrbond_vdev_register(struct mrbond_vdev *v, const char *name,
			 bool user_named);
/* Frees a vdev that was never registered (releases the bond reference). */
void mrbond_vdev_free(struct mrbond_vdev *v);
/* Unregisters, unless `rdma link del` already did; the vdev is gone after. */
void mrbond_vdev_unregister(struct mrbond_vdev *v);
/*
 * Drops the module's handle of a vdev the RDMA core is unregistering on its
 * own (called from our ib_client .remove, where unregistering would deadlock).
 */
void mrbond_vdev_put(struct mrbond_vdev *v);
/*
 * A reference to the vdev's memory only (get_device()): what the Rust
 * VdevRef holds to remove sysfs files and dispatch port events without the
 * bond's vdev lock, both safe on a vdev unregistered meanwhile.
 */
void mrbond_vdev_hold(struct mrbond_vdev *v);
void mrbond_vdev_unhold(struct mrbond_vdev *v);
const char *mrbond_vdev_name(const struct mrbond_vdev *v);
u32 mrbond_vdev_index(const struct mrbond_vdev *v);
/* True for ib_devices that are mrbond vdevs (so they are never members). */
bool mrbond_is_vdev(const struct ib_device *dev);
struct mrbond_vdev *mrbond_vdev_from_ibdev(struct ib_device *dev);
/* Dispatches IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR for port. */
void mrbond_vdev_port_event(struct mrbond_vdev *v, u32 port, bool active);

/* Rust -> C (shim/mrbond_sysfs.c): the mrbond/ directory of a registered vdev. */
int mrbond_sysfs_add(struct mrbond_vdev *v);
void mrbond_sysfs_del(struct mrbond_vdev *v);
int mrbond_sysfs_member_add(struct mrbond_vdev *v, u32 slot, const char *name);
void mrbond_sysfs_member_del(struct mrbond_vdev *v, u32 slot);

/* C -> Rust. bond is the pointer given to mrbond_vdev_alloc(). */

/*
 * The vdev's objects are Rust's (rust/rdma/): PDs (rust/vdev_pd.rs), MRs,
 * CQs, AHs and QPs, and so are members coming and going under them
 * (rust/rdma/member.rs). The GSI proxy reaches them through these.
 */
/* The vdev is being freed: its members' MAD agents and REQ listeners go. */
void mrbond_rs_gsi_release(void *bond);
/* The vdev is being freed: drop its reference on bond. */
void mrbond_rs_vdev_release(void *bond);
/* sysfs: format into buf (PAGE_SIZE) and return the length, or -errno. */
ssize_t mrbond_rs_bond_attr_show(void *bond, u32 attr, char *buf);
/* sysfs: parse and apply; 0 or -errno (-EINVAL: bad value, nothing changed). */
int mrbond_rs_bond_attr_store(void *bond, u32 attr, const char *buf,
			      size_t len);
ssize_t mrbond_rs_member_attr_show(void *bond, u32 slot, u32 attr, char *buf);
int mrbond_rs_member_attr_store(void *bond, u32 slot, u32 attr,
				const char *buf, size_t len);

#endif /* _RDMA_MRBOND_VDEV_H */
