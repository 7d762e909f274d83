/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/rdma_mrbond.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_RDMA_MRBOND_GEN_H
#define _LINUX_RDMA_MRBOND_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/rdma_mrbond.h>

/* Common nested types */
extern const struct nla_policy rdma_mrbond_counters_nl_policy[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO7 + 1];
extern const struct nla_policy rdma_mrbond_ecn_nl_policy[RDMA_MRBOND_A_ECN_ENABLE + 1];
extern const struct nla_policy rdma_mrbond_knob_status_nl_policy[RDMA_MRBOND_A_KNOB_STATUS_ERRNO + 1];
extern const struct nla_policy rdma_mrbond_member_nl_policy[RDMA_MRBOND_A_MEMBER_WRONG_MEMBER_KEY + 1];
extern const struct nla_policy rdma_mrbond_pfc_nl_policy[RDMA_MRBOND_A_PFC_ENABLE_BITMAP + 1];

int rdma_mrbond_nl_bond_get_dump_start(struct netlink_callback *cb);

int rdma_mrbond_nl_bond_get_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_bond_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb);
int rdma_mrbond_nl_bond_new_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_bond_del_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_bond_set_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_member_add_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_member_del_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_member_set_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_ecn_set_doit(struct sk_buff *skb, struct genl_info *info);
int rdma_mrbond_nl_pfc_set_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	RDMA_MRBOND_NLGRP_EVENTS,
};

extern struct genl_family rdma_mrbond_nl_family;

#endif /* _LINUX_RDMA_MRBOND_GEN_H */
