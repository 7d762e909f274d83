// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/infiniband/<vdev>/mrbond/{mode,policy,...} and
 * .../mrbond/members/<member ibdev>/{netdev,state,...}: the attribute
 * tables, and the directories Rust adds and removes (rust/rdma/vdev.rs
 * keeps them). Every show and store is forwarded to Rust, which does all
 * parsing and formatting.
 *
 * Rust must not remove a directory from inside one of its own show/store
 * callbacks, nor with a lock they take: kernfs waits for running ones.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "rdma_mrbond_knobs.h"
#include "rdma_mrbond_rdma_helpers.h"
#include "rdma_mrbond_vdev.h"

/*
 * The mrbond/ directory and each members/<name>/ directory. Each kobject
 * pins its parent, up to the ib_device's.
 */
struct mrbond_sysfs_kobj {
	struct kobject kobj;
	void *bond;			/* Rust's, outlives the directory */
	u32 slot;			/* member directories only */
	struct kobject *members;	/* mrbond/ only: its members/ */
};

/* One generic show/store per level recovers the attribute id from here. */
struct mrbond_sysfs_attr {
	struct kobj_attribute kattr;
	u32 id;
};

static struct mrbond_sysfs_kobj *to_sysfs_kobj(struct kobject *kobj)
{
	return container_of(kobj, struct mrbond_sysfs_kobj, kobj);
}

void *mrbond_sysfs_kobj_bond(struct kobject *kobj)
{
	return to_sysfs_kobj(kobj)->bond;
}

u32 mrbond_sysfs_kobj_slot(struct kobject *kobj)
{
	return to_sysfs_kobj(kobj)->slot;
}

static u32 to_attr_id(const struct kobj_attribute *kattr)
{
	return container_of(kattr, struct mrbond_sysfs_attr, kattr)->id;
}

static ssize_t mrbond_bond_show(struct kobject *kobj,
				struct kobj_attribute *kattr, char *buf)
{
	return mrbond_rs_bond_attr_show(to_sysfs_kobj(kobj)->bond,
					to_attr_id(kattr), buf);
}

static ssize_t mrbond_bond_store(struct kobject *kobj,
				 struct kobj_attribute *kattr,
				 const char *buf, size_t count)
{
	int ret;

	/* The 0644 mode only stops non-root; root without the cap too. */
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;

	ret = mrbond_rs_bond_attr_store(to_sysfs_kobj(kobj)->bond,
					to_attr_id(kattr), buf, count);
	if (ret)
		return ret;
	return count;
}

static ssize_t mrbond_member_show(struct kobject *kobj,
				  struct kobj_attribute *kattr, char *buf)
{
	struct mrbond_sysfs_kobj *sk = to_sysfs_kobj(kobj);

	return mrbond_rs_member_attr_show(sk->bond, sk->slot,
					  to_attr_id(kattr), buf);
}

static ssize_t mrbond_member_store(struct kobject *kobj,
				   struct kobj_attribute *kattr,
				   const char *buf, size_t count)
{
	struct mrbond_sysfs_kobj *sk = to_sysfs_kobj(kobj);
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;

	ret = mrbond_rs_member_attr_store(sk->bond, sk->slot,
					  to_attr_id(kattr), buf, count);
	if (ret)
		return ret;
	return count;
}

/* Read-only attributes get no store, so sysfs opens them read-only. */
#define MRBOND_ATTR_RO(_name, _id, _level) {				\
	.kattr = __ATTR(_name, 0444, _level##_show, NULL),		\
	.id = (_id),							\
}

#define MRBOND_ATTR_RW(_name, _id, _level) {				\
	.kattr = __ATTR(_name, 0644, _level##_show, _level##_store),	\
	.id = (_id),							\
}

static struct mrbond_sysfs_attr mrbond_bond_attr[] = {
	[MRBOND_BOND_ATTR_MODE] =
		MRBOND_ATTR_RO(mode, MRBOND_BOND_ATTR_MODE, mrbond_bond),
	[MRBOND_BOND_ATTR_POLICY] =
		MRBOND_ATTR_RW(policy, MRBOND_BOND_ATTR_POLICY, mrbond_bond),
	[MRBOND_BOND_ATTR_MEMBERS] =
		MRBOND_ATTR_RO(member_list, MRBOND_BOND_ATTR_MEMBERS, mrbond_bond),
	[MRBOND_BOND_ATTR_USABLE] =
		MRBOND_ATTR_RO(usable, MRBOND_BOND_ATTR_USABLE, mrbond_bond),
	[MRBOND_BOND_ATTR_LACP_SOURCE] =
		MRBOND_ATTR_RO(lacp_source, MRBOND_BOND_ATTR_LACP_SOURCE,
			       mrbond_bond),
	[MRBOND_BOND_ATTR_SPEED] =
		MRBOND_ATTR_RO(speed, MRBOND_BOND_ATTR_SPEED, mrbond_bond),
};
static_assert(ARRAY_SIZE(mrbond_bond_attr) == MRBOND_BOND_ATTR_MAX);

static struct attribute *mrbond_bond_attrs[] = {
	&mrbond_bond_attr[MRBOND_BOND_ATTR_MODE].kattr.attr,
	&mrbond_bond_attr[MRBOND_BOND_ATTR_POLICY].kattr.attr,
	&mrbond_bond_attr[MRBOND_BOND_ATTR_MEMBERS].kattr.attr,
	&mrbond_bond_attr[MRBOND_BOND_ATTR_USABLE].kattr.attr,
	&mrbond_bond_attr[MRBOND_BOND_ATTR_LACP_SOURCE].kattr.attr,
	&mrbond_bond_attr[MRBOND_BOND_ATTR_SPEED].kattr.attr,
	NULL,
};
static_assert(ARRAY_SIZE(mrbond_bond_attrs) == MRBOND_BOND_ATTR_MAX + 1);
static const struct attribute_group mrbond_bond_group = {
	.attrs = mrbond_bond_attrs,
};

/* mrbond/ecn/ and mrbond/pfc/ (shim/mrbond_sysfs_knobs.c) */
static const struct attribute_group *mrbond_bond_groups[] = {
	&mrbond_bond_group,
	&mrbond_ecn_group,
	&mrbond_pfc_group,
	NULL,
};

static struct mrbond_sysfs_attr mrbond_member_attr[] = {
	[MRBOND_MEMBER_ATTR_NETDEV] =
		MRBOND_ATTR_RO(netdev, MRBOND_MEMBER_ATTR_NETDEV,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_STATE] =
		MRBOND_ATTR_RO(state, MRBOND_MEMBER_ATTR_STATE, mrbond_member),
	[MRBOND_MEMBER_ATTR_REASON] =
		MRBOND_ATTR_RO(reason, MRBOND_MEMBER_ATTR_REASON,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_WEIGHT] =
		MRBOND_ATTR_RW(weight, MRBOND_MEMBER_ATTR_WEIGHT,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_ADMIN] =
		MRBOND_ATTR_RW(admin, MRBOND_MEMBER_ATTR_ADMIN, mrbond_member),
	[MRBOND_MEMBER_ATTR_QPS] =
		MRBOND_ATTR_RO(qps, MRBOND_MEMBER_ATTR_QPS, mrbond_member),
	[MRBOND_MEMBER_ATTR_OUTSTANDING] =
		MRBOND_ATTR_RO(outstanding, MRBOND_MEMBER_ATTR_OUTSTANDING,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_TRANSITIONS] =
		MRBOND_ATTR_RO(transitions, MRBOND_MEMBER_ATTR_TRANSITIONS,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_LACP] =
		MRBOND_ATTR_RO(lacp, MRBOND_MEMBER_ATTR_LACP, mrbond_member),
	[MRBOND_MEMBER_ATTR_UTILISATION] =
		MRBOND_ATTR_RO(utilisation, MRBOND_MEMBER_ATTR_UTILISATION,
			       mrbond_member),
	[MRBOND_MEMBER_ATTR_CAPACITY] =
		MRBOND_ATTR_RW(capacity_mbps, MRBOND_MEMBER_ATTR_CAPACITY,
			       mrbond_member),
};
static_assert(ARRAY_SIZE(mrbond_member_attr) == MRBOND_MEMBER_ATTR_MAX);

static struct attribute *mrbond_member_attrs[] = {
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_NETDEV].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_STATE].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_REASON].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_WEIGHT].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_ADMIN].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_QPS].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_OUTSTANDING].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_TRANSITIONS].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_LACP].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_UTILISATION].kattr.attr,
	&mrbond_member_attr[MRBOND_MEMBER_ATTR_CAPACITY].kattr.attr,
	NULL,
};
static_assert(ARRAY_SIZE(mrbond_member_attrs) == MRBOND_MEMBER_ATTR_MAX + 1);
static const struct attribute_group mrbond_member_group = {
	.attrs = mrbond_member_attrs,
};

static const struct attribute_group *mrbond_member_groups[] = {
	&mrbond_member_group,
	&mrbond_member_knobs_group,
	NULL,
};

static void mrbond_sysfs_kobj_release(struct kobject *kobj)
{
	kfree(to_sysfs_kobj(kobj));
}

/* default_groups: the files exist as soon as the directory does. */
static const struct kobj_type mrbond_bond_ktype = {
	.release = mrbond_sysfs_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = mrbond_bond_groups,
};

static const struct kobj_type mrbond_member_ktype = {
	.release = mrbond_sysfs_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = mrbond_member_groups,
};

static struct mrbond_sysfs_kobj *
mrbond_sysfs_kobj_add(const struct kobj_type *ktype, struct kobject *parent,
		      const char *name, void *bond, u32 slot)
{
	struct mrbond_sysfs_kobj *sk;
	int ret;

	sk = kzalloc(sizeof(*sk), GFP_KERNEL);
	if (!sk)
		return ERR_PTR(-ENOMEM);
	sk->bond = bond;
	sk->slot = slot;

	ret = kobject_init_and_add(&sk->kobj, ktype, parent, "%s", name);
	if (ret) {
		/* Initialised: only the release function may free it. */
		kobject_put(&sk->kobj);
		return ERR_PTR(ret);
	}
	return sk;
}

void mrbond_rdma_sysfs_del(struct kobject *dir)
{
	struct mrbond_sysfs_kobj *sk = to_sysfs_kobj(dir);

	/* Dynamic kobject: its last put removes and frees it. */
	kobject_put(sk->members);
	kobject_del(&sk->kobj);
	kobject_put(&sk->kobj);
}

struct kobject *mrbond_rdma_sysfs_device_add(struct kobject *dev_kobj,
					     void *data)
{
	struct mrbond_sysfs_kobj *sk;

	sk = mrbond_sysfs_kobj_add(&mrbond_bond_ktype, dev_kobj, "mrbond",
				   data, 0);
	if (IS_ERR(sk))
		return ERR_CAST(sk);
	sk->members = kobject_create_and_add("members", &sk->kobj);
	if (!sk->members) {
		mrbond_rdma_sysfs_del(&sk->kobj);
		return ERR_PTR(-ENOMEM);
	}
	return &sk->kobj;
}

struct kobject *mrbond_rdma_sysfs_member_add(struct kobject *device_dir,
					     u32 slot, const char *name)
{
	struct mrbond_sysfs_kobj *parent = to_sysfs_kobj(device_dir);
	struct mrbond_sysfs_kobj *sk;

	if (!name || !*name)
		return ERR_PTR(-EINVAL);
	sk = mrbond_sysfs_kobj_add(&mrbond_member_ktype, parent->members, name,
				   parent->bond, slot);
	return IS_ERR(sk) ? ERR_CAST(sk) : &sk->kobj;
}
