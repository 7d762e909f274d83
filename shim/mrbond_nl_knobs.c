// SPDX-License-Identifier: GPL-2.0
/*
 * The knob part of the rdma_mrbond netlink family: ECN_SET and PFC_SET are
 * unpacked into plain structs for Rust, and Rust's knob snapshot is packed
 * into BOND_GET replies (bond-level settings and counter sums, and each
 * member's knob status, counters and PFC override). Rust validates,
 * applies and supplies the extack text; nothing is decided here.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "rdma_mrbond_knobs.h"
#include "mrbond_nl_gen.h"

static_assert(RDMA_MRBOND_A_ECN_MAX == MRBOND_KNOB_ECN_COUNT);
static_assert(RDMA_MRBOND_A_COUNTERS_MAX == MRBOND_COUNTER_MAX);

int rdma_mrbond_nl_ecn_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[RDMA_MRBOND_A_ECN_MAX + 1];
	struct mrbond_ecn_spec *spec;
	const char *extack = NULL;
	int err, i;

	err = mrbond_nl_check_net(genl_info_net(info), info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, RDMA_MRBOND_A_BOND_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, RDMA_MRBOND_A_BOND_ECN))
		return -EINVAL;
	err = nla_parse_nested(tb, RDMA_MRBOND_A_ECN_MAX,
			       info->attrs[RDMA_MRBOND_A_BOND_ECN],
			       rdma_mrbond_ecn_nl_policy, info->extack);
	if (err)
		return err;
	spec = kzalloc(sizeof(*spec), GFP_KERNEL);
	if (!spec)
		return -ENOMEM;
	nla_strscpy(spec->name, info->attrs[RDMA_MRBOND_A_BOND_NAME],
		    sizeof(spec->name));
	/* Attribute i + 1 carries knob id i. */
	for (i = 0; i < MRBOND_KNOB_ECN_COUNT; i++) {
		if (!tb[i + 1])
			continue;
		spec->values[i] = nla_get_u32(tb[i + 1]);
		spec->mask |= BIT(i);
	}
	err = mrbond_rs_ecn_set(mrbond_netlink_ctx(), spec, &extack);
	kfree(spec);
	return mrbond_nl_finish(info, err, extack);
}

static void mrbond_nl_fill_pfc_member(struct nlattr **tb, u32 i, void *dst)
{
	struct mrbond_pfc_member_spec *m = &((struct mrbond_pfc_spec *)dst)->members[i];

	nla_strscpy(m->ibdev, tb[RDMA_MRBOND_A_MEMBER_IBDEV], sizeof(m->ibdev));
	if (tb[RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE]) {
		m->pfc_override = nla_get_u32(tb[RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE]);
		m->has_override = 1;
	}
	m->clear = nla_get_flag(tb[RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE_CLEAR]);
}

int rdma_mrbond_nl_pfc_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[RDMA_MRBOND_A_PFC_MAX + 1];
	struct mrbond_pfc_spec *spec;
	const char *extack = NULL;
	int err;

	err = mrbond_nl_check_net(genl_info_net(info), info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, RDMA_MRBOND_A_BOND_NAME))
		return -EINVAL;
	spec = kzalloc(sizeof(*spec), GFP_KERNEL);
	if (!spec)
		return -ENOMEM;
	nla_strscpy(spec->name, info->attrs[RDMA_MRBOND_A_BOND_NAME],
		    sizeof(spec->name));
	if (info->attrs[RDMA_MRBOND_A_BOND_PFC]) {
		err = nla_parse_nested(tb, RDMA_MRBOND_A_PFC_MAX,
				       info->attrs[RDMA_MRBOND_A_BOND_PFC],
				       rdma_mrbond_pfc_nl_policy, info->extack);
		if (err)
			goto out;
		if (tb[RDMA_MRBOND_A_PFC_ENABLE_BITMAP]) {
			spec->bitmap = nla_get_u32(tb[RDMA_MRBOND_A_PFC_ENABLE_BITMAP]);
			spec->has_bitmap = 1;
		}
	}
	err = mrbond_nl_parse_members(info, spec, &spec->nmembers,
				      mrbond_nl_fill_pfc_member);
	if (err)
		goto out;
	err = mrbond_rs_pfc_set(mrbond_netlink_ctx(), spec, &extack);
	err = mrbond_nl_finish(info, err, extack);
out:
	kfree(spec);
	return err;
}

/* BOND_GET dumps: every message has room for one whole bond. */
int rdma_mrbond_nl_bond_get_dump_start(struct netlink_callback *cb)
{
	cb->min_dump_alloc = MRBOND_NL_BOND_SIZE;
	return 0;
}

struct mrbond_knobs_info *mrbond_nl_knobs_info(const char *bond_name)
{
	struct mrbond_knobs_info *ki = kzalloc(sizeof(*ki), GFP_KERNEL);

	if (ki && mrbond_rs_knobs_info(mrbond_netlink_ctx(), bond_name, ki)) {
		kfree(ki);
		ki = NULL;
	}
	return ki;
}

/* The available ones of counters[] (bit i of mask) as a "counters" nest. */
static int mrbond_nl_put_counters(struct sk_buff *skb, int type,
				  const u64 *counters, u32 mask)
{
	struct nlattr *nest;
	int i;

	if (!mask)
		return 0;
	nest = nla_nest_start(skb, type);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < MRBOND_COUNTER_MAX; i++)
		if ((mask & BIT(i)) &&
		    nla_put_u64_64bit(skb, i + 1, counters[i], 0))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

int mrbond_nl_put_bond_knobs(struct sk_buff *skb,
			     const struct mrbond_knobs_info *ki)
{
	struct nlattr *nest;
	int i;

	if (!ki)
		return 0;
	nest = nla_nest_start(skb, RDMA_MRBOND_A_BOND_ECN);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < MRBOND_KNOB_ECN_COUNT; i++)
		if (nla_put_u32(skb, i + 1, ki->ecn[i]))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	nest = nla_nest_start(skb, RDMA_MRBOND_A_BOND_PFC);
	if (!nest ||
	    (ki->pfc_set &&
	     nla_put_u32(skb, RDMA_MRBOND_A_PFC_ENABLE_BITMAP, ki->pfc_bitmap)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return mrbond_nl_put_counters(skb, RDMA_MRBOND_A_BOND_COUNTERS,
				      ki->counters, ki->counters_mask);
}

static int mrbond_nl_put_group(struct sk_buff *skb,
			       const struct mrbond_knob_group *g)
{
	struct nlattr *nest = nla_nest_start(skb, RDMA_MRBOND_A_MEMBER_KNOB_STATUS);

	if (!nest ||
	    nla_put_u32(skb, RDMA_MRBOND_A_KNOB_STATUS_KNOBS, g->knobs) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_KNOB_STATUS_STATE, g->state))
		return -EMSGSIZE;
	if (g->state == RDMA_MRBOND_KNOB_STATE_UNSUPPORTED &&
	    nla_put_u32(skb, RDMA_MRBOND_A_KNOB_STATUS_REASON, g->reason))
		return -EMSGSIZE;
	if (g->state == RDMA_MRBOND_KNOB_STATE_FAILED &&
	    nla_put_u32(skb, RDMA_MRBOND_A_KNOB_STATUS_ERRNO, g->err))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

int mrbond_nl_put_member_knobs(struct sk_buff *skb,
			       const struct mrbond_knobs_info *ki,
			       const char *ibdev)
{
	const struct mrbond_knobs_member *m = NULL;
	u32 i;

	if (!ki)
		return 0;
	for (i = 0; i < ki->nmembers && i < MRBOND_MAX_MEMBERS; i++)
		if (!strcmp(ki->members[i].ibdev, ibdev))
			m = &ki->members[i];
	if (!m)
		return 0;
	for (i = 0; i < m->ngroups && i < MRBOND_KNOB_GROUPS; i++)
		if (mrbond_nl_put_group(skb, &m->groups[i]))
			return -EMSGSIZE;
	if (m->has_override &&
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_PFC_OVERRIDE, m->pfc_override))
		return -EMSGSIZE;
	return mrbond_nl_put_counters(skb, RDMA_MRBOND_A_MEMBER_COUNTERS,
				      m->counters, m->counters_mask);
}
