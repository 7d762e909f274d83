/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ECN/DCQCN/PFC knobs of rdma_mrbond: the C <-> Rust ABI of the knob
 * code, as include/rdma_mrbond_glue.h is for the rest.
 *
 * - shim/mrbond_dcb.c wraps dcbnl (PFC), ethtool pause statistics and
 *   member RDMA hw counters for Rust; it decides nothing.
 * - shim/mrbond_nl_knobs.c forwards the ECN_SET/PFC_SET netlink requests
 *   to Rust, and packs Rust's snapshot into BOND_GET replies (the sysfs
 *   files are Rust's: rust/ctl/sysfs.rs, rust/knobs/sysfs.rs).
 */
#ifndef _RDMA_MRBOND_KNOBS_H
#define _RDMA_MRBOND_KNOBS_H

#include <linux/types.h>

#include "rdma_mrbond_glue.h"

struct ib_device;
struct kobject;
struct sk_buff;
struct genl_info;
struct net;
struct netlink_ext_ack;
struct nlattr;
struct attribute_group;

/* ---- numbers shared with Rust (rust/policy/knobs.rs, congestion.rs) ---- */

/* Knob ids 0..17 are the DCQCN parameters, 18 tclass, 19 ecn_enable. */
#define MRBOND_KNOB_ECN_COUNT 20
#define MRBOND_KNOB_PFC_ENABLE 20
/* np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, rp_cnp_ignored,
 * tx_pause_frames, rx_pause_frames (IEEE 802.3x), tx_pfc_prio0..7,
 * rx_pfc_prio0..7 (dcbnl ieee_pfc requests and indications).
 */
#define MRBOND_COUNTER_MAX 22
#define MRBOND_HW_COUNTER_MAX 4
/* Distinct knob statuses one member can show. */
#define MRBOND_KNOB_GROUPS 4

/* struct ieee_pfc, field by field. */
struct mrbond_pfc {
	u64 requests[8];
	u64 indications[8];
	u16 delay;
	u8 pfc_cap;
	u8 pfc_en;
	u8 mbc;
};

/* ECN_SET: bit i of mask says values[i] was given for knob id i. */
struct mrbond_ecn_spec {
	char name[MRBOND_NAME_MAX];
	u32 mask;
	u64 values[MRBOND_KNOB_ECN_COUNT];
};

struct mrbond_pfc_member_spec {
	char ibdev[MRBOND_NAME_MAX];
	u64 pfc_override;
	u8 has_override;
	u8 clear;
};

/* PFC_SET. */
struct mrbond_pfc_spec {
	char name[MRBOND_NAME_MAX];
	u64 bitmap;
	u8 has_bitmap;
	u32 nmembers;
	struct mrbond_pfc_member_spec members[MRBOND_MAX_MEMBERS];
};

/* Knobs (bit = knob id) that share one status on a member. */
struct mrbond_knob_group {
	u32 knobs;
	u32 state;	/* enum rdma_mrbond_knob_state */
	u32 reason;	/* enum rdma_mrbond_unsupported_reason, if unsupported */
	u32 err;	/* positive errno, if failed */
};

struct mrbond_knobs_member {
	char ibdev[MRBOND_NAME_MAX];
	u64 counters[MRBOND_COUNTER_MAX];
	u32 counters_mask;	/* bit i: counters[i] is available */
	u32 ngroups;
	struct mrbond_knob_group groups[MRBOND_KNOB_GROUPS];
	u8 has_override;
	u8 pfc_override;
};

/* A snapshot of a bond's knobs for BOND_GET, filled by Rust. */
struct mrbond_knobs_info {
	u32 ecn[MRBOND_KNOB_ECN_COUNT];
	u64 counters[MRBOND_COUNTER_MAX];
	u32 counters_mask;
	u8 pfc_set;
	u8 pfc_bitmap;
	u32 nmembers;
	struct mrbond_knobs_member members[MRBOND_MAX_MEMBERS];
};

/* ---- Rust -> C (shim/mrbond_dcb.c) ---- */

void mrbond_dcb_rtnl_lock(void);
void mrbond_dcb_rtnl_unlock(void);
/*
 * Under RTNL. -ENODEV without such a netdev, -EOPNOTSUPP when it lacks
 * dcbnl ieee_getpfc or ieee_setpfc, else what the driver returns.
 */
int mrbond_dcb_getpfc(u32 ifindex, struct mrbond_pfc *pfc);
int mrbond_dcb_setpfc(u32 ifindex, const struct mrbond_pfc *pfc);
/* Under RTNL: RTM_SETDCB IEEE notification, as dcbnl's own set sends. */
void mrbond_dcb_notify(u32 ifindex);
/* Takes RTNL: IEEE 802.3x pause frames; -EOPNOTSUPP if not reported. */
int mrbond_dcb_pause_stats(u32 ifindex, u64 *tx, u64 *rx);
/*
 * Port 1 hw counters of a member named names[0..n): values[i] and bit i
 * of the return for each one the device has. May sleep; no RTNL.
 */
u32 mrbond_glue_ibdev_hw_counters(struct ib_device *dev,
				  const char *const *names, u32 n, u64 *values);

/* ---- C internal ---- */

/*
 * Room for one BOND_GET message: a bond with 16 members, each with its knob
 * status, override and counters (about 300 bytes a member, plus 16 PFC
 * counters of 16 bytes where the member has dcbnl).
 */
#define MRBOND_NL_BOND_SIZE (6 * NLMSG_DEFAULT_SIZE)

/* shim/mrbond_netlink.c: the registry handed to the netlink glue. */
void *mrbond_netlink_ctx(void);
/*
 * shim/mrbond_netlink.c, for every handler: Rust's extack text (static, not
 * a literal) attached to a failed request.
 */
int mrbond_nl_finish(struct genl_info *info, int err, const char *extack);
/*
 * Bonds, members and their netdevs are init_net objects: a request from
 * another network namespace is refused (-EOPNOTSUPP with a message), not
 * resolved against the wrong namespace's ifindexes.
 */
int mrbond_nl_check_net(struct net *net, struct netlink_ext_ack *extack);
/*
 * Fills member @i of the request struct @dst from its parsed nest @tb,
 * whose ibdev name is present.
 */
typedef void (*mrbond_nl_member_fill)(struct nlattr **tb, u32 i, void *dst);
/*
 * Unpacks every BOND_MEMBER nest of a request into @dst through @fill,
 * counting in *@nmembers; refuses (with extack) more than 16 members and a
 * member without an ibdev name.
 */
int mrbond_nl_parse_members(struct genl_info *info, void *dst, u32 *nmembers,
			    mrbond_nl_member_fill fill);
/* shim/mrbond_nl_knobs.c: knob attributes of BOND_GET replies. */
struct mrbond_knobs_info *mrbond_nl_knobs_info(const char *bond_name);
int mrbond_nl_put_bond_knobs(struct sk_buff *skb,
			     const struct mrbond_knobs_info *ki);
int mrbond_nl_put_member_knobs(struct sk_buff *skb,
			       const struct mrbond_knobs_info *ki,
			       const char *ibdev);

/* ---- C -> Rust (process context, no RTNL held) ---- */

int mrbond_rs_ecn_set(void *ctx, const struct mrbond_ecn_spec *spec,
		      const char **extack);
/* Applies PFC member by member; the first member's failure is returned. */
int mrbond_rs_pfc_set(void *ctx, const struct mrbond_pfc_spec *spec,
		      const char **extack);
int mrbond_rs_knobs_info(void *ctx, const char *name,
			 struct mrbond_knobs_info *info);

#endif /* _RDMA_MRBOND_KNOBS_H */
