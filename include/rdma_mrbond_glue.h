/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI between the C glue (shim/mrbond_glue.c) and the Rust crate of
 * rdma_mrbond, with include/rdma_mrbond_knobs.h.
 * Only fixed-width integers, opaque pointers, NUL-terminated strings and
 * structs of them cross it. Rust's side is generated from these headers
 * (tools/abi-regen.sh writes rust/ffi/abi_generated.rs; CI checks it is fresh):
 * after a change here, regenerate it.
 */
#ifndef _RDMA_MRBOND_GLUE_H
#define _RDMA_MRBOND_GLUE_H

#include <linux/types.h>


struct ib_device;

#define MRBOND_NAME_MAX 64	/* IB_DEVICE_NAME_MAX */
#define MRBOND_MAX_MEMBERS 16

/* Requests of the netlink family, parsed by shim/mrbond_netlink.c. */
struct mrbond_member_spec {
	char ibdev[MRBOND_NAME_MAX];
	u32 weight;
	u32 admin;
	u8 has_weight;
	u8 has_admin;
	u32 capacity_mbps;
	u8 has_capacity;
};

struct mrbond_bond_spec {
	char name[MRBOND_NAME_MAX];
	u8 has_name;
	u8 has_mode;
	u8 has_policy;
	u32 mode;
	u32 policy;
	u32 lacp_source;	/* ifindex, 0 = none */
	u32 nmembers;
	struct mrbond_member_spec members[MRBOND_MAX_MEMBERS];
};

/* Snapshots for replies, dumps and events, filled by Rust. */
struct mrbond_member_info {
	char ibdev[MRBOND_NAME_MAX];
	u32 netdev_ifindex;
	u32 weight;
	u32 admin;
	u32 usability;
	u32 reason;
	u32 qps;
	u64 outstanding;
	u64 transitions;
	u8 lacp_slave;
	u8 link_up;
	u8 tx_enabled;
	u8 utilisation_known;
	u32 utilisation;	/* permille of capacity_seen */
	u32 capacity_mbps;	/* the operator's, 0 = link speed */
	u64 placements;
	u64 flushed_wr;
	u64 wrong_member_key;
};

struct mrbond_bond_info {
	u32 ibdev_index;
	char name[MRBOND_NAME_MAX];
	u32 mode;
	u32 policy;
	u32 lacp_source;
	u32 usable;
	u64 placements;
	u64 placement_failures;
	u32 nmembers;
	struct mrbond_member_info members[MRBOND_MAX_MEMBERS];
};

/* What the bond needs to know about a member's netdev. */
struct mrbond_netdev_state {
	u8 exists;
	u8 running;
	u8 carrier;
	u8 bond_slave;
	u8 link_up;		/* bond lower state, valid if bond_slave */
	u8 tx_enabled;		/* bond lower state, valid if bond_slave */
	u32 master_ifindex;	/* valid if bond_slave */
};

/* Rust -> C (shim/mrbond_glue.c). */

/*
 * Registers the workqueue, ib_client, netdev notifier, netlink family and
 * rdma_link_ops; ctx comes back in every C -> Rust call below.
 */
int mrbond_glue_init(void *ctx);
/* Stops new requests (link ops, netlink); bonds can then be torn down. */
void mrbond_glue_stop(void);
/* After the bonds died: notifier, ib_client, workqueue. */
void mrbond_glue_exit(void);
/* Schedules an evaluation of every member, now. */
void mrbond_glue_kick(void);
u64 mrbond_glue_now_ns(void);
void mrbond_glue_netdev_state(u32 ifindex, struct mrbond_netdev_state *st);
/* Bonding mode (BOND_MODE_*) of a bond master, or -ENODEV / -ENOTTY. */
int mrbond_glue_bond_mode(u32 ifindex);
/* Ifindexes of a bond master's slaves (takes RTNL); count or -errno. */
int mrbond_glue_bond_slaves(u32 ifindex, u32 *slaves, u32 max);
/* Link speed in Mb/s (ethtool; takes RTNL), 0 if unknown or gone. */
u32 mrbond_glue_netdev_speed_mbps(u32 ifindex);
/* A netdev's transmitted bytes (stats64); false if it is gone. */
bool mrbond_glue_netdev_tx_bytes(u32 ifindex, u64 *tx_bytes);
/* Copies the netdev's name into name (IFNAMSIZ); -ENODEV if none. */
int mrbond_glue_netdev_name(u32 ifindex, char *name);
void mrbond_glue_notify_member(const struct mrbond_bond_info *bond, u32 slot);
/* Multicasts a bond-change-ntf: @changes, enum rdma_mrbond_bond_change bits. */
void mrbond_glue_notify_bond(const char *name, u32 ibdev_index, u32 changes);

/* C internal: hands the registry to the netlink handlers. */
void mrbond_netlink_set_ctx(void *ctx);

/*
 * C -> Rust. Process context, may sleep. The ib_client and netlink callbacks
 * run without RTNL; mrbond_rs_evaluate runs on the module's ordered
 * workqueue. Rust never holds its locks while calling C that takes RTNL.
 */
int mrbond_rs_ib_device_added(void *ctx, struct ib_device *dev);
void mrbond_rs_ib_device_removed(void *ctx, struct ib_device *dev);
void mrbond_rs_ib_device_renamed(void *ctx, struct ib_device *dev);
/* .remove of one of our vdevs: the core unregisters it (`rdma link del`). */
void mrbond_rs_vdev_unregistering(void *ctx, struct ib_device *dev);
/* Returns the delay in ms until the next evaluation is due, 0 for none. */
u32 mrbond_rs_evaluate(void *ctx, u64 event_ns);
/* One utilisation sample of every member; the delay in ms to the next. */
u32 mrbond_rs_sample_utilisation(void *ctx);
int mrbond_rs_link_new(void *ctx, const char *ibdev_name, u32 ifindex);
/* NETDEV_UNREGISTER, under RTNL: drop every vdev port binding to ifindex. */
void mrbond_rs_netdev_unregister(void *ctx, u32 ifindex);
int mrbond_rs_bond_new(void *ctx, const struct mrbond_bond_spec *spec,
		       struct mrbond_bond_info *reply, const char **extack);
int mrbond_rs_bond_del(void *ctx, const struct mrbond_bond_spec *spec,
		       const char **extack);
int mrbond_rs_bond_set(void *ctx, const struct mrbond_bond_spec *spec,
		       const char **extack);
int mrbond_rs_member_add(void *ctx, const struct mrbond_bond_spec *spec,
			 const char **extack);
int mrbond_rs_member_del(void *ctx, const struct mrbond_bond_spec *spec,
			 const char **extack);
int mrbond_rs_member_set(void *ctx, const struct mrbond_bond_spec *spec,
			 const char **extack);
/* The bond named name, or the pos-th bond if name is NULL; -ENOENT past the end. */
int mrbond_rs_bond_info(void *ctx, const char *name, u32 pos,
			struct mrbond_bond_info *info);

#endif /* _RDMA_MRBOND_GLUE_H */
