// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/infiniband/<vdev>/mrbond/ecn/, .../mrbond/pfc/ and
 * .../mrbond/members/<dev>/pfc_override: groups of the kobjects that
 * shim/mrbond_sysfs.c creates. Every show and store is forwarded to Rust,
 * which parses, validates, applies and formats.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "rdma_mrbond_knobs.h"

struct mrbond_knob_kattr {
	struct kobj_attribute kattr;
	u32 id;
};

static u32 to_knob_id(const struct kobj_attribute *kattr)
{
	return container_of(kattr, struct mrbond_knob_kattr, kattr)->id;
}

static ssize_t mrbond_knob_show(struct kobject *kobj,
				struct kobj_attribute *kattr, char *buf)
{
	return mrbond_rs_knob_attr_show(mrbond_sysfs_kobj_bond(kobj),
					to_knob_id(kattr), buf);
}

static ssize_t mrbond_knob_store(struct kobject *kobj,
				 struct kobj_attribute *kattr,
				 const char *buf, size_t count)
{
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	ret = mrbond_rs_knob_attr_store(mrbond_sysfs_kobj_bond(kobj),
					to_knob_id(kattr), buf, count);
	return ret ? ret : count;
}

static ssize_t mrbond_member_knob_show(struct kobject *kobj,
				       struct kobj_attribute *kattr, char *buf)
{
	return mrbond_rs_member_knob_attr_show(mrbond_sysfs_kobj_bond(kobj),
					       mrbond_sysfs_kobj_slot(kobj),
					       to_knob_id(kattr), buf);
}

static ssize_t mrbond_member_knob_store(struct kobject *kobj,
					struct kobj_attribute *kattr,
					const char *buf, size_t count)
{
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	ret = mrbond_rs_member_knob_attr_store(mrbond_sysfs_kobj_bond(kobj),
					       mrbond_sysfs_kobj_slot(kobj),
					       to_knob_id(kattr), buf, count);
	return ret ? ret : count;
}

/* File _name of a group, served by mrbond_knob_show/store as id _id. */
#define MRBOND_KNOB(_var, _name, _mode, _store, _id)				\
	static struct mrbond_knob_kattr mrbond_knob_##_var = {		\
		.kattr = __ATTR(_name, _mode, mrbond_knob_show, _store),	\
		.id = (_id),							\
	}
#define MRBOND_KNOB_RW(_name, _id) \
	MRBOND_KNOB(_name, _name, 0644, mrbond_knob_store, _id)
#define MRBOND_KNOB_RO(_var, _name, _id) \
	MRBOND_KNOB(_var, _name, 0444, NULL, _id)

/* Knob ids of rust/policy/knobs.rs. */
MRBOND_KNOB_RW(np_enable, 0);
MRBOND_KNOB_RW(np_min_time_between_cnps, 1);
MRBOND_KNOB_RW(np_cnp_dscp, 2);
MRBOND_KNOB_RW(np_cnp_802p_prio, 3);
MRBOND_KNOB_RW(rp_enable, 4);
MRBOND_KNOB_RW(rp_clamp_tgt_rate, 5);
MRBOND_KNOB_RW(rp_rpg_time_reset, 6);
MRBOND_KNOB_RW(rp_rpg_byte_reset, 7);
MRBOND_KNOB_RW(rp_rpg_threshold, 8);
MRBOND_KNOB_RW(rp_rpg_ai_rate, 9);
MRBOND_KNOB_RW(rp_rpg_hai_rate, 10);
MRBOND_KNOB_RW(rp_rpg_gd, 11);
MRBOND_KNOB_RW(rp_rpg_min_dec_fac, 12);
MRBOND_KNOB_RW(rp_rpg_min_rate, 13);
MRBOND_KNOB_RW(rp_dce_tcp_g, 14);
MRBOND_KNOB_RW(rp_dce_tcp_rtt, 15);
MRBOND_KNOB_RW(rp_initial_alpha_value, 16);
MRBOND_KNOB_RW(rp_rate_reduce_monitor_period, 17);
MRBOND_KNOB_RW(tclass, 18);
MRBOND_KNOB_RW(enable, 19);
MRBOND_KNOB_RO(ecn_status, status, MRBOND_KNOB_ATTR_ECN_STATUS);
MRBOND_KNOB_RO(ecn_counters, counters, MRBOND_KNOB_ATTR_ECN_COUNTERS);
MRBOND_KNOB_RW(enable_bitmap, MRBOND_KNOB_ATTR_PFC_ENABLE);
MRBOND_KNOB_RO(pfc_status, status, MRBOND_KNOB_ATTR_PFC_STATUS);
MRBOND_KNOB_RO(pfc_counters, counters, MRBOND_KNOB_ATTR_PFC_COUNTERS);

static struct attribute *mrbond_ecn_attrs[] = {
	&mrbond_knob_enable.kattr.attr,
	&mrbond_knob_tclass.kattr.attr,
	&mrbond_knob_np_enable.kattr.attr,
	&mrbond_knob_np_min_time_between_cnps.kattr.attr,
	&mrbond_knob_np_cnp_dscp.kattr.attr,
	&mrbond_knob_np_cnp_802p_prio.kattr.attr,
	&mrbond_knob_rp_enable.kattr.attr,
	&mrbond_knob_rp_clamp_tgt_rate.kattr.attr,
	&mrbond_knob_rp_rpg_time_reset.kattr.attr,
	&mrbond_knob_rp_rpg_byte_reset.kattr.attr,
	&mrbond_knob_rp_rpg_threshold.kattr.attr,
	&mrbond_knob_rp_rpg_ai_rate.kattr.attr,
	&mrbond_knob_rp_rpg_hai_rate.kattr.attr,
	&mrbond_knob_rp_rpg_gd.kattr.attr,
	&mrbond_knob_rp_rpg_min_dec_fac.kattr.attr,
	&mrbond_knob_rp_rpg_min_rate.kattr.attr,
	&mrbond_knob_rp_dce_tcp_g.kattr.attr,
	&mrbond_knob_rp_dce_tcp_rtt.kattr.attr,
	&mrbond_knob_rp_initial_alpha_value.kattr.attr,
	&mrbond_knob_rp_rate_reduce_monitor_period.kattr.attr,
	&mrbond_knob_ecn_status.kattr.attr,
	&mrbond_knob_ecn_counters.kattr.attr,
	NULL,
};
static_assert(ARRAY_SIZE(mrbond_ecn_attrs) == MRBOND_KNOB_ECN_COUNT + 3);

const struct attribute_group mrbond_ecn_group = {
	.name = "ecn",
	.attrs = mrbond_ecn_attrs,
};

static struct attribute *mrbond_pfc_attrs[] = {
	&mrbond_knob_enable_bitmap.kattr.attr,
	&mrbond_knob_pfc_status.kattr.attr,
	&mrbond_knob_pfc_counters.kattr.attr,
	NULL,
};

const struct attribute_group mrbond_pfc_group = {
	.name = "pfc",
	.attrs = mrbond_pfc_attrs,
};

static struct mrbond_knob_kattr mrbond_knob_pfc_override = {
	.kattr = __ATTR(pfc_override, 0644, mrbond_member_knob_show,
			mrbond_member_knob_store),
	.id = MRBOND_KNOB_ATTR_PFC_OVERRIDE,
};

static struct attribute *mrbond_member_knobs_attrs[] = {
	&mrbond_knob_pfc_override.kattr.attr,
	NULL,
};

const struct attribute_group mrbond_member_knobs_group = {
	.attrs = mrbond_member_knobs_attrs,
};
