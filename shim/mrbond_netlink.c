// SPDX-License-Identifier: GPL-2.0
/*
 * Handlers of the rdma_mrbond generic netlink family. The family, its
 * policies and ops table are generated from
 * Documentation/netlink/specs/rdma_mrbond.yaml (shim/mrbond_nl_gen.c); here
 * requests are unpacked into plain structs for Rust and Rust's snapshots are
 * packed into replies. Rust decides; it also supplies the extack text.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <net/netlink.h>

#include "rdma_mrbond_glue.h"
#include "rdma_mrbond_knobs.h"
#include "mrbond_nl_gen.h"

/* The registry, as handed to mrbond_glue_init(). */
static void *mrbond_nl_ctx;

void mrbond_netlink_set_ctx(void *ctx)
{
	mrbond_nl_ctx = ctx;
}

void *mrbond_netlink_ctx(void)
{
	return mrbond_nl_ctx;
}

static void mrbond_fill_member(struct nlattr **tb, u32 i, void *dst)
{
	struct mrbond_member_spec *m = &((struct mrbond_bond_spec *)dst)->members[i];

	nla_strscpy(m->ibdev, tb[RDMA_MRBOND_A_MEMBER_IBDEV], sizeof(m->ibdev));
	if (tb[RDMA_MRBOND_A_MEMBER_WEIGHT]) {
		m->weight = nla_get_u32(tb[RDMA_MRBOND_A_MEMBER_WEIGHT]);
		m->has_weight = 1;
	}
	if (tb[RDMA_MRBOND_A_MEMBER_ADMIN]) {
		m->admin = nla_get_u32(tb[RDMA_MRBOND_A_MEMBER_ADMIN]);
		m->has_admin = 1;
	}
	if (tb[RDMA_MRBOND_A_MEMBER_CAPACITY_MBPS]) {
		m->capacity_mbps = nla_get_u32(tb[RDMA_MRBOND_A_MEMBER_CAPACITY_MBPS]);
		m->has_capacity = 1;
	}
}

int mrbond_nl_parse_members(struct genl_info *info, void *dst, u32 *nmembers,
			    mrbond_nl_member_fill fill)
{
	struct nlattr *tb[RDMA_MRBOND_A_MEMBER_MAX + 1];
	struct nlattr *a;
	int rem, err;

	nlmsg_for_each_attr_type(a, RDMA_MRBOND_A_BOND_MEMBER, info->nlhdr,
				 GENL_HDRLEN, rem) {
		if (*nmembers >= MRBOND_MAX_MEMBERS) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "a bond has at most 16 members");
			return -E2BIG;
		}
		err = nla_parse_nested(tb, RDMA_MRBOND_A_MEMBER_MAX, a,
				       rdma_mrbond_member_nl_policy,
				       info->extack);
		if (err)
			return err;
		if (!tb[RDMA_MRBOND_A_MEMBER_IBDEV]) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "member needs an ibdev name");
			return -EINVAL;
		}
		fill(tb, *nmembers, dst);
		(*nmembers)++;
	}
	return 0;
}

/*
 * Unpacks a request; the generated policy has already checked types/ranges.
 * info->attrs has maxattr + 1 entries for the op at hand: read no further.
 */
static struct mrbond_bond_spec *mrbond_parse_spec(struct genl_info *info,
						  u32 maxattr, bool name_required)
{
	struct nlattr **attrs = info->attrs;
	struct mrbond_bond_spec *spec;
	int err;

	if (name_required && GENL_REQ_ATTR_CHECK(info, RDMA_MRBOND_A_BOND_NAME))
		return ERR_PTR(-EINVAL);
	spec = kzalloc(sizeof(*spec), GFP_KERNEL);
	if (!spec)
		return ERR_PTR(-ENOMEM);
#define MRBOND_ATTR(a) ((a) <= maxattr ? attrs[a] : NULL)
	if (MRBOND_ATTR(RDMA_MRBOND_A_BOND_NAME)) {
		nla_strscpy(spec->name, attrs[RDMA_MRBOND_A_BOND_NAME],
			    sizeof(spec->name));
		spec->has_name = 1;
	}
	if (MRBOND_ATTR(RDMA_MRBOND_A_BOND_MODE)) {
		spec->mode = nla_get_u32(attrs[RDMA_MRBOND_A_BOND_MODE]);
		spec->has_mode = 1;
	}
	if (MRBOND_ATTR(RDMA_MRBOND_A_BOND_POLICY)) {
		spec->policy = nla_get_u32(attrs[RDMA_MRBOND_A_BOND_POLICY]);
		spec->has_policy = 1;
	}
	if (MRBOND_ATTR(RDMA_MRBOND_A_BOND_LACP_SOURCE))
		spec->lacp_source = nla_get_u32(attrs[RDMA_MRBOND_A_BOND_LACP_SOURCE]);
#undef MRBOND_ATTR

	err = mrbond_nl_parse_members(info, spec, &spec->nmembers,
				      mrbond_fill_member);
	if (err) {
		kfree(spec);
		return ERR_PTR(err);
	}
	return spec;
}

/*
 * Rust's messages are static NUL-terminated strings, as NL_SET_ERR_MSG()
 * requires, but not literals, so they are stored the way that macro does.
 */
int mrbond_nl_finish(struct genl_info *info, int err, const char *extack)
{
	if (err && extack && info->extack)
		info->extack->_msg = extack;
	return err;
}

int mrbond_nl_check_net(struct net *net, struct netlink_ext_ack *extack)
{
	if (net_eq(net, &init_net))
		return 0;
	NL_SET_ERR_MSG(extack,
		       "rdma_mrbond bonds live in the initial network namespace");
	return -EOPNOTSUPP;
}

typedef int (*mrbond_rs_request)(void *ctx, const struct mrbond_bond_spec *spec,
				 const char **extack);

static int mrbond_simple_request(struct genl_info *info, u32 maxattr,
				 mrbond_rs_request fn)
{
	struct mrbond_bond_spec *spec;
	const char *extack = NULL;
	int err;

	err = mrbond_nl_check_net(genl_info_net(info), info->extack);
	if (err)
		return err;
	spec = mrbond_parse_spec(info, maxattr, true);
	if (IS_ERR(spec))
		return PTR_ERR(spec);
	err = fn(mrbond_nl_ctx, spec, &extack);
	kfree(spec);
	return mrbond_nl_finish(info, err, extack);
}

/* ki: the bond's knob snapshot (shim/mrbond_nl_knobs.c), NULL in events. */
static int mrbond_put_member(struct sk_buff *skb,
			     const struct mrbond_member_info *m,
			     const struct mrbond_knobs_info *ki)
{
	struct nlattr *nest = nla_nest_start(skb, RDMA_MRBOND_A_BOND_MEMBER);

	if (!nest ||
	    nla_put_string(skb, RDMA_MRBOND_A_MEMBER_IBDEV, m->ibdev) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_NETDEV_IFINDEX, m->netdev_ifindex) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_WEIGHT, m->weight) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_ADMIN, m->admin) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_USABILITY, m->usability) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_REASON, m->reason) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_QPS, m->qps) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_MEMBER_OUTSTANDING, m->outstanding, 0) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_MEMBER_TRANSITIONS, m->transitions, 0) ||
	    (m->lacp_slave && nla_put_flag(skb, RDMA_MRBOND_A_MEMBER_LACP_SLAVE)) ||
	    nla_put_u8(skb, RDMA_MRBOND_A_MEMBER_LINK_UP, m->link_up) ||
	    nla_put_u8(skb, RDMA_MRBOND_A_MEMBER_TX_ENABLED, m->tx_enabled) ||
	    (m->utilisation_known &&
	     nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_UTILISATION, m->utilisation)) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_MEMBER_CAPACITY_MBPS, m->capacity_mbps) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_MEMBER_PLACEMENTS, m->placements, 0) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_MEMBER_FLUSHED_WR, m->flushed_wr, 0) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_MEMBER_WRONG_MEMBER_KEY,
			      m->wrong_member_key, 0) ||
	    mrbond_nl_put_member_knobs(skb, ki, m->ibdev))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int mrbond_put_bond(struct sk_buff *skb, const struct mrbond_bond_info *b)
{
	struct mrbond_knobs_info *ki;
	int err = -EMSGSIZE;
	u32 i;

	if (nla_put_u32(skb, RDMA_MRBOND_A_BOND_IBDEV_INDEX, b->ibdev_index) ||
	    nla_put_string(skb, RDMA_MRBOND_A_BOND_NAME, b->name) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_BOND_MODE, b->mode) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_BOND_POLICY, b->policy) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_BOND_LACP_SOURCE, b->lacp_source) ||
	    nla_put_u32(skb, RDMA_MRBOND_A_BOND_USABLE_MEMBERS, b->usable) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_BOND_PLACEMENTS, b->placements, 0) ||
	    nla_put_u64_64bit(skb, RDMA_MRBOND_A_BOND_PLACEMENT_FAILURES,
			      b->placement_failures, 0))
		return -EMSGSIZE;
	/* Without a knob snapshot (bond just deleted, no memory): no knobs. */
	ki = mrbond_nl_knobs_info(b->name);
	for (i = 0; i < b->nmembers && i < MRBOND_MAX_MEMBERS; i++)
		if (mrbond_put_member(skb, &b->members[i], ki))
			goto out;
	err = mrbond_nl_put_bond_knobs(skb, ki);
out:
	kfree(ki);
	return err;
}

int rdma_mrbond_nl_bond_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrbond_bond_info *b;
	struct sk_buff *msg;
	char name[MRBOND_NAME_MAX];
	void *hdr;
	int err;

	err = mrbond_nl_check_net(genl_info_net(info), info->extack);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, RDMA_MRBOND_A_BOND_NAME))
		return -EINVAL;
	nla_strscpy(name, info->attrs[RDMA_MRBOND_A_BOND_NAME], sizeof(name));
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	err = mrbond_rs_bond_info(mrbond_nl_ctx, name, 0, b);
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[RDMA_MRBOND_A_BOND_NAME],
				    "no such bond");
		goto out;
	}
	err = -ENOMEM;
	msg = genlmsg_new(MRBOND_NL_BOND_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || mrbond_put_bond(msg, b)) {
		nlmsg_free(msg);
		err = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kfree(b);
	return err;
}

struct mrbond_dump_ctx {
	u32 pos;
};

int rdma_mrbond_nl_bond_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct mrbond_dump_ctx *ctx = (void *)cb->ctx;
	struct mrbond_bond_info *b;
	void *hdr;
	int err = 0;

	NL_ASSERT_DUMP_CTX_FITS(struct mrbond_dump_ctx);
	err = mrbond_nl_check_net(sock_net(cb->skb->sk), cb->extack);
	if (err)
		return err;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	for (;; ctx->pos++) {
		memset(b, 0, sizeof(*b));
		if (mrbond_rs_bond_info(mrbond_nl_ctx, NULL, ctx->pos, b))
			break;
		hdr = genlmsg_iput(skb, genl_info_dump(cb));
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		if (mrbond_put_bond(skb, b)) {
			genlmsg_cancel(skb, hdr);
			err = -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
	}
	kfree(b);
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

int rdma_mrbond_nl_bond_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrbond_bond_spec *spec;
	struct mrbond_bond_info *b;
	const char *extack = NULL;
	struct sk_buff *msg;
	void *hdr;
	int err;

	err = mrbond_nl_check_net(genl_info_net(info), info->extack);
	if (err)
		return err;
	spec = mrbond_parse_spec(info, RDMA_MRBOND_A_BOND_MEMBER, false);
	if (IS_ERR(spec))
		return PTR_ERR(spec);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		kfree(spec);
		return -ENOMEM;
	}
	err = mrbond_rs_bond_new(mrbond_nl_ctx, spec, b, &extack);
	kfree(spec);
	if (err)
		goto out;
	/* The bond exists now; a lost reply does not undo it. */
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_iput(msg, info);
	if (!hdr ||
	    nla_put_u32(msg, RDMA_MRBOND_A_BOND_IBDEV_INDEX, b->ibdev_index) ||
	    nla_put_string(msg, RDMA_MRBOND_A_BOND_NAME, b->name)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out:
	kfree(b);
	return mrbond_nl_finish(info, err, extack);
}

int rdma_mrbond_nl_bond_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mrbond_simple_request(info, RDMA_MRBOND_A_BOND_NAME,
				     mrbond_rs_bond_del);
}

int rdma_mrbond_nl_bond_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mrbond_simple_request(info, RDMA_MRBOND_A_BOND_POLICY,
				     mrbond_rs_bond_set);
}

int rdma_mrbond_nl_member_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mrbond_simple_request(info, RDMA_MRBOND_A_BOND_MEMBER,
				     mrbond_rs_member_add);
}

int rdma_mrbond_nl_member_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mrbond_simple_request(info, RDMA_MRBOND_A_BOND_MEMBER,
				     mrbond_rs_member_del);
}

int rdma_mrbond_nl_member_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	return mrbond_simple_request(info, RDMA_MRBOND_A_BOND_MEMBER,
				     mrbond_rs_member_set);
}

/* A message of the events group, or NULL when nobody listens. */
static struct sk_buff *mrbond_ntf_new(u8 cmd, void **hdr)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&rdma_mrbond_nl_family, &init_net,
				RDMA_MRBOND_NLGRP_EVENTS))
		return NULL;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &rdma_mrbond_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void mrbond_ntf_send(struct sk_buff *msg, void *hdr)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&rdma_mrbond_nl_family, msg, 0,
			  RDMA_MRBOND_NLGRP_EVENTS, GFP_KERNEL);
}

void mrbond_glue_notify_member(const struct mrbond_bond_info *b, u32 slot)
{
	struct sk_buff *msg;
	void *hdr;

	if (slot >= b->nmembers)
		return;
	msg = mrbond_ntf_new(RDMA_MRBOND_CMD_MEMBER_CHANGE_NTF, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, RDMA_MRBOND_A_BOND_IBDEV_INDEX, b->ibdev_index) ||
	    nla_put_string(msg, RDMA_MRBOND_A_BOND_NAME, b->name) ||
	    mrbond_put_member(msg, &b->members[slot], NULL)) {
		nlmsg_free(msg);
		return;
	}
	mrbond_ntf_send(msg, hdr);
}

void mrbond_glue_notify_bond(const char *name, u32 ibdev_index, u32 changes)
{
	struct sk_buff *msg;
	void *hdr;

	msg = mrbond_ntf_new(RDMA_MRBOND_CMD_BOND_CHANGE_NTF, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, RDMA_MRBOND_A_BOND_IBDEV_INDEX, ibdev_index) ||
	    nla_put_string(msg, RDMA_MRBOND_A_BOND_NAME, name) ||
	    nla_put_u32(msg, RDMA_MRBOND_A_BOND_CHANGES, changes)) {
		nlmsg_free(msg);
		return;
	}
	mrbond_ntf_send(msg, hdr);
}
