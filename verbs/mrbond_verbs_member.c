// SPDX-License-Identifier: GPL-2.0
/*
 * Members coming and going under the verbs proxy, as Rust tells it: a
 * member that turns unusable has its QPs moved to ERR (the member flushes
 * them) and reported fatal; a member that goes away loses its objects, and
 * the vdev completes every WR still outstanding on them with a flush from
 * the shadow rings (the QP walks are rust/rdma/qp_set.rs). The vdev itself stays: nvme-rdma deletes, rather than
 * reconnects, the controllers of a device that disappears.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_inject.h"
#include "rdma_mrbond_verbs_priv.h"

int mrbond_vdev_member_attach(struct mrbond_vdev *v, u32 slot,
			      struct ib_device *dev)
{
	int ret = 0;

	if (slot >= MRBOND_MAX_MEMBERS)
		return -EINVAL;
	if (mrbond_inject_fail(MRBOND_INJECT_ATTACH_FAIL))
		return -EIO;
	/*
	 * ULPs map their buffers with the vdev, which has no DMA device: the
	 * addresses are kernel virtual ones, right only for software members.
	 * A PCI HCA would need them mapped for it at every post.
	 */
	if (!ib_uses_virt_dma(dev)) {
		pr_warn("%s: %s needs DMA mapping, which the vdev does not do yet: it hosts no objects\n",
			dev_name(&v->ibdev.dev), dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	mutex_lock(&v->objs_lock);
	if (v->member[slot].dev == dev)
		goto out_unlock;
	if (v->member[slot].dev) {
		ret = -EBUSY;	/* the old one was never detached */
		goto out_unlock;
	}
	ret = mrbond_rs_mrs_attach(v->bond, slot, dev);
	if (ret)
		goto out_unlock;
	v->member[slot].dev = dev;
	/* Members are single-port RoCE devices (one ib_device per port). */
	v->member[slot].port = 1;
	mrbond_gsi_member_attach(v, slot);
out_unlock:
	mutex_unlock(&v->objs_lock);
	return ret;
}

void mrbond_vdev_member_fail(struct mrbond_vdev *v, u32 slot)
{
	ktime_t start = ktime_get();
	u32 n;

	if (slot >= MRBOND_MAX_MEMBERS)
		return;
	mrbond_inject(MRBOND_INJECT_MEMBER_FAIL);
	mutex_lock(&v->objs_lock);
	/* The member flushes every outstanding WR as its QPs enter ERR. */
	n = mrbond_rs_qps_fail(v->bond, slot);
	mutex_unlock(&v->objs_lock);
	if (n)
		pr_info("%s: member %s unusable: %u QPs moved to error in %lld us\n",
			dev_name(&v->ibdev.dev), dev_name(&v->member[slot].dev->dev),
			n, ktime_us_delta(ktime_get(), start));
}

void mrbond_vdev_member_detach(struct mrbond_vdev *v, u32 slot)
{
	struct mrbond_gsi_member_res gsi = {};
	ktime_t start = ktime_get();
	u64 flushed;
	u32 n;

	if (slot >= MRBOND_MAX_MEMBERS)
		return;
	mutex_lock(&v->objs_lock);
	if (!v->member[slot].dev)
		goto out_unlock;
	flushed = mrbond_rs_member_flushed(v->bond, slot);
	mrbond_gsi_member_take(v, slot, &gsi);
	/* No poll may read a completion of a member QP destroyed below. */
	mrbond_rs_cqs_unhook(v->bond, slot);
	n = mrbond_rs_qps_detach(v->bond, slot);
	mrbond_rs_cqs_free_unhooked(v->bond);
	mrbond_rs_mrs_detach(v->bond, slot);
	mrbond_rs_pds_detach(v->bond, slot);
	pr_info("%s: member %s detached: %u QPs, %llu WRs flushed in %lld us\n",
		dev_name(&v->ibdev.dev), dev_name(&v->member[slot].dev->dev), n,
		mrbond_rs_member_flushed(v->bond, slot) - flushed,
		ktime_us_delta(ktime_get(), start));
	v->member[slot].dev = NULL;

	/* Consumers learn of the flushes, then that the QPs are dead. */
	mrbond_rs_cqs_kick_later(v->bond);
	mrbond_rs_qps_fatal(v->bond, slot);
out_unlock:
	mutex_unlock(&v->objs_lock);
	mrbond_gsi_member_release(&gsi);
}
