// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/rdma_mrbond.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "mrbond_nl_gen.h"

#include <uapi/rdma_mrbond.h>

/* Integer value ranges */
static const struct netlink_range_validation rdma_mrbond_a_member_capacity_mbps_range = {
	.max	= 3200000ULL,
};

/* Common nested types */
const struct nla_policy rdma_mrbond_counters_nl_policy[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO7 + 1] = {
	[RDMA_MRBOND_A_COUNTERS_NP_ECN_MARKED_ROCE_PACKETS] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_NP_CNP_SENT] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RP_CNP_HANDLED] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RP_CNP_IGNORED] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PAUSE_FRAMES] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PAUSE_FRAMES] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO0] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO1] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO2] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO3] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO4] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO5] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO6] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_TX_PFC_PRIO7] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO0] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO1] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO2] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO3] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO4] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO5] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO6] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_COUNTERS_RX_PFC_PRIO7] = { .type = NLA_U64, },
};

const struct nla_policy rdma_mrbond_ecn_nl_policy[RDMA_MRBOND_A_ECN_ENABLE + 1] = {
	[RDMA_MRBOND_A_ECN_NP_ENABLE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_NP_MIN_TIME_BETWEEN_CNPS] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_NP_CNP_DSCP] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_NP_CNP_802P_PRIO] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_ENABLE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_CLAMP_TGT_RATE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_TIME_RESET] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_BYTE_RESET] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_THRESHOLD] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_AI_RATE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_HAI_RATE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_GD] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_MIN_DEC_FAC] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RPG_MIN_RATE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_DCE_TCP_G] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_DCE_TCP_RTT] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_INITIAL_ALPHA_VALUE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_RP_RATE_REDUCE_MONITOR_PERIOD] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_TCLASS] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_ECN_ENABLE] = { .type = NLA_U32, },
};

const struct nla_policy rdma_mrbond_knob_status_nl_policy[RDMA_MRBOND_A_KNOB_STATUS_ERRNO + 1] = {
	[RDMA_MRBOND_A_KNOB_STATUS_KNOBS] = NLA_POLICY_MASK(NLA_U32, 0x1fffff),
	[RDMA_MRBOND_A_KNOB_STATUS_STATE] = NLA_POLICY_MAX(NLA_U32, 4),
	[RDMA_MRBOND_A_KNOB_STATUS_REASON] = NLA_POLICY_MAX(NLA_U32, 1),
	[RDMA_MRBOND_A_KNOB_STATUS_ERRNO] = { .type = NLA_U32, },
};

const struct nla_policy rdma_mrbond_member_nl_policy[RDMA_MRBOND_A_MEMBER_WRONG_MEMBER_KEY + 1] = {
	[RDMA_MRBOND_A_MEMBER_IBDEV] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_MEMBER_NETDEV_IFINDEX] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_MEMBER_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, 1000),
	[RDMA_MRBOND_A_MEMBER_ADMIN] = NLA_POLICY_MAX(NLA_U32, 2),
	[RDMA_MRBOND_A_MEMBER_USABILITY] = NLA_POLICY_MAX(NLA_U32, 2),
	[RDMA_MRBOND_A_MEMBER_REASON] = NLA_POLICY_MAX(NLA_U32, 10),
	[RDMA_MRBOND_A_MEMBER_QPS] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_MEMBER_OUTSTANDING] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_MEMBER_TRANSITIONS] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_MEMBER_LACP_SLAVE] = { .type = NLA_FLAG, },
	[RDMA_MRBOND_A_MEMBER_LINK_UP] = { .type = NLA_U8, },
	[RDMA_MRBOND_A_MEMBER_TX_ENABLED] = { .type = NLA_U8, },
	[RDMA_MRBOND_A_MEMBER_KNOB_STATUS] = NLA_POLICY_NESTED(rdma_mrbond_knob_status_nl_policy),
	[RDMA_MRBOND_A_MEMBER_COUNTERS] = NLA_POLICY_NESTED(rdma_mrbond_counters_nl_policy),
	[RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE_CLEAR] = { .type = NLA_FLAG, },
	[RDMA_MRBOND_A_MEMBER_UTILISATION] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_MEMBER_CAPACITY_MBPS] = NLA_POLICY_FULL_RANGE(NLA_U32, &rdma_mrbond_a_member_capacity_mbps_range),
	[RDMA_MRBOND_A_MEMBER_PLACEMENTS] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_MEMBER_FLUSHED_WR] = { .type = NLA_U64, },
	[RDMA_MRBOND_A_MEMBER_WRONG_MEMBER_KEY] = { .type = NLA_U64, },
};

const struct nla_policy rdma_mrbond_pfc_nl_policy[RDMA_MRBOND_A_PFC_ENABLE_BITMAP + 1] = {
	[RDMA_MRBOND_A_PFC_ENABLE_BITMAP] = { .type = NLA_U32, },
};

/* RDMA_MRBOND_CMD_BOND_GET - do */
static const struct nla_policy rdma_mrbond_bond_get_nl_policy[RDMA_MRBOND_A_BOND_NAME + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
};

/* RDMA_MRBOND_CMD_BOND_NEW - do */
static const struct nla_policy rdma_mrbond_bond_new_nl_policy[RDMA_MRBOND_A_BOND_MEMBER + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_MODE] = NLA_POLICY_MAX(NLA_U32, 1),
	[RDMA_MRBOND_A_BOND_POLICY] = NLA_POLICY_MAX(NLA_U32, 4),
	[RDMA_MRBOND_A_BOND_LACP_SOURCE] = { .type = NLA_U32, },
	[RDMA_MRBOND_A_BOND_MEMBER] = NLA_POLICY_NESTED(rdma_mrbond_member_nl_policy),
};

/* RDMA_MRBOND_CMD_BOND_DEL - do */
static const struct nla_policy rdma_mrbond_bond_del_nl_policy[RDMA_MRBOND_A_BOND_NAME + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
};

/* RDMA_MRBOND_CMD_BOND_SET - do */
static const struct nla_policy rdma_mrbond_bond_set_nl_policy[RDMA_MRBOND_A_BOND_POLICY + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_POLICY] = NLA_POLICY_MAX(NLA_U32, 4),
};

/* RDMA_MRBOND_CMD_MEMBER_ADD - do */
static const struct nla_policy rdma_mrbond_member_add_nl_policy[RDMA_MRBOND_A_BOND_MEMBER + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_MEMBER] = NLA_POLICY_NESTED(rdma_mrbond_member_nl_policy),
};

/* RDMA_MRBOND_CMD_MEMBER_DEL - do */
static const struct nla_policy rdma_mrbond_member_del_nl_policy[RDMA_MRBOND_A_BOND_MEMBER + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_MEMBER] = NLA_POLICY_NESTED(rdma_mrbond_member_nl_policy),
};

/* RDMA_MRBOND_CMD_MEMBER_SET - do */
static const struct nla_policy rdma_mrbond_member_set_nl_policy[RDMA_MRBOND_A_BOND_MEMBER + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_MEMBER] = NLA_POLICY_NESTED(rdma_mrbond_member_nl_policy),
};

/* RDMA_MRBOND_CMD_ECN_SET - do */
static const struct nla_policy rdma_mrbond_ecn_set_nl_policy[RDMA_MRBOND_A_BOND_ECN + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_ECN] = NLA_POLICY_NESTED(rdma_mrbond_ecn_nl_policy),
};

/* RDMA_MRBOND_CMD_PFC_SET - do */
static const struct nla_policy rdma_mrbond_pfc_set_nl_policy[RDMA_MRBOND_A_BOND_PFC + 1] = {
	[RDMA_MRBOND_A_BOND_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[RDMA_MRBOND_A_BOND_PFC] = NLA_POLICY_NESTED(rdma_mrbond_pfc_nl_policy),
	[RDMA_MRBOND_A_BOND_MEMBER] = NLA_POLICY_NESTED(rdma_mrbond_member_nl_policy),
};

/* Ops table for rdma_mrbond */
static const struct genl_split_ops rdma_mrbond_nl_ops[] = {
	{
		.cmd		= RDMA_MRBOND_CMD_BOND_GET,
		.doit		= rdma_mrbond_nl_bond_get_doit,
		.policy		= rdma_mrbond_bond_get_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_NAME,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= RDMA_MRBOND_CMD_BOND_GET,
		.start	= rdma_mrbond_nl_bond_get_dump_start,
		.dumpit	= rdma_mrbond_nl_bond_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_BOND_NEW,
		.doit		= rdma_mrbond_nl_bond_new_doit,
		.policy		= rdma_mrbond_bond_new_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_MEMBER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_BOND_DEL,
		.doit		= rdma_mrbond_nl_bond_del_doit,
		.policy		= rdma_mrbond_bond_del_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_NAME,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_BOND_SET,
		.doit		= rdma_mrbond_nl_bond_set_doit,
		.policy		= rdma_mrbond_bond_set_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_POLICY,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_MEMBER_ADD,
		.doit		= rdma_mrbond_nl_member_add_doit,
		.policy		= rdma_mrbond_member_add_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_MEMBER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_MEMBER_DEL,
		.doit		= rdma_mrbond_nl_member_del_doit,
		.policy		= rdma_mrbond_member_del_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_MEMBER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_MEMBER_SET,
		.doit		= rdma_mrbond_nl_member_set_doit,
		.policy		= rdma_mrbond_member_set_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_MEMBER,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_ECN_SET,
		.doit		= rdma_mrbond_nl_ecn_set_doit,
		.policy		= rdma_mrbond_ecn_set_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_ECN,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= RDMA_MRBOND_CMD_PFC_SET,
		.doit		= rdma_mrbond_nl_pfc_set_doit,
		.policy		= rdma_mrbond_pfc_set_nl_policy,
		.maxattr	= RDMA_MRBOND_A_BOND_PFC,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group rdma_mrbond_nl_mcgrps[] = {
	[RDMA_MRBOND_NLGRP_EVENTS] = { "events", },
};

struct genl_family rdma_mrbond_nl_family __ro_after_init = {
	.name		= RDMA_MRBOND_FAMILY_NAME,
	.version	= RDMA_MRBOND_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= rdma_mrbond_nl_ops,
	.n_split_ops	= ARRAY_SIZE(rdma_mrbond_nl_ops),
	.mcgrps		= rdma_mrbond_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(rdma_mrbond_nl_mcgrps),
};
