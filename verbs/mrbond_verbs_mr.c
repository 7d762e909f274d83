// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions of the vdev (its PDs are Rust's: rust/vdev_pd.rs).
 *
 * An MR is bound to one member at allocation (the rule is Rust's:
 * mrbond_rs_pd_mr_member()), because every FRWR ULP but RDS advertises
 * mr->rkey before it posts REG_MR and an rkey is only valid on the HCA that
 * issued it. The vdev hands out its own lkeys (index << 8 | key byte),
 * unique over all members, so that a post can tell which member an SGE's
 * key belongs to; rkeys are the member's own.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_inject.h"
#include "rdma_mrbond_verbs_priv.h"

static int mrbond_mr_insert(struct mrbond_vdev *v, struct mrbond_mr *mr)
{
	u32 index;
	int ret;

	/* Index 0 is the reserved local DMA lkey; 24 bits of index. */
	ret = xa_alloc(&v->mr_index, &index, mr, XA_LIMIT(1, (1U << 24) - 1),
		       GFP_KERNEL);
	if (ret)
		return ret;
	mr->index = index;
	return 0;
}

static void mrbond_mr_free(struct mrbond_vdev *v, struct mrbond_mr *mr)
{
	if (mr->index)
		xa_erase(&v->mr_index, mr->index);
	/* A racing post may still look at it under RCU. */
	kfree_rcu(mr, rcu);
}

/*
 * The local DMA MR (ib_alloc_pd without IBK_LOCAL_DMA_LKEY, or a ULP's own
 * get_dma_mr): valid on whichever member the QP lives on, as the lkey is
 * translated to that member PD's local_dma_lkey at post time. Remote access
 * would need one rkey on every member: refused.
 */
struct ib_mr *mrbond_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibpd->device);
	struct mrbond_mr *mr;
	int ret;

	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->member = -1;
	ret = mrbond_mr_insert(v, mr);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	mr->ibmr.lkey = mr->index << 8;
	mr->ibmr.rkey = 0;
	mutex_lock(&v->objs_lock);
	list_add_tail(&mr->node, &v->mrs);
	mutex_unlock(&v->objs_lock);
	return &mr->ibmr;
}

/* No ucontext exists until userspace verbs do. */
struct ib_mr *mrbond_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				 u64 virt_addr, int access,
				 struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

struct ib_mr *mrbond_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			      u32 max_num_sg)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibpd->device);
	struct ib_pd *mpd;
	struct ib_mr *mmr;
	struct mrbond_mr *mr;
	void *old;
	int member, ret;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mutex_lock(&v->objs_lock);
	member = mrbond_rs_pd_mr_member(ibpd);
	if (member < 0 || member >= MRBOND_MAX_MEMBERS) {
		/*
		 * No QP yet: the PD's home is where its first QP will go,
		 * but that is not decided. ULPs allocate MRs after their QP.
		 */
		ret = -EAGAIN;
		goto err_unlock;
	}
	ret = mrbond_rs_pd_member(ibpd, member, v->member[member].dev, &mpd);
	if (ret)
		goto err_unlock;
	mmr = ib_alloc_mr(mpd, type, max_num_sg);
	if (IS_ERR(mmr)) {
		ret = PTR_ERR(mmr);
		goto err_unlock;
	}
	mr->member = member;
	mr->mmr = mmr;
	/*
	 * A member's rkey indexes are its own: unique on that device, and
	 * erased before the member can hand one out again.
	 */
	old = xa_store(&v->member[member].rkeys, mmr->rkey >> 8, mr,
		       GFP_KERNEL);
	if (xa_is_err(old)) {
		ret = xa_err(old);
		ib_dereg_mr(mmr);
		goto err_unlock;
	}
	WARN_ON_ONCE(old);
	ret = mrbond_mr_insert(v, mr);
	if (ret) {
		xa_erase(&v->member[member].rkeys, mmr->rkey >> 8);
		ib_dereg_mr(mmr);
		goto err_unlock;
	}
	list_add_tail(&mr->node, &v->mrs);
	mutex_unlock(&v->objs_lock);

	mr->ibmr.lkey = mr->index << 8 | (mmr->lkey & 0xff);
	mr->ibmr.rkey = mmr->rkey;
	return &mr->ibmr;

err_unlock:
	mutex_unlock(&v->objs_lock);
	kfree(mr);
	return ERR_PTR(ret);
}

int mrbond_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mrbond_vdev *v = mrbond_vdev_of(ibmr->device);
	struct mrbond_mr *mr = to_mrbond_mr(ibmr);
	struct ib_mr *mmr;
	u32 rkey_index;
	int ret = 0;

	mutex_lock(&v->objs_lock);
	mmr = mr->mmr;
	if (mmr) {
		/* Read before the member frees it. */
		rkey_index = mmr->rkey >> 8;
		ret = ib_dereg_mr(mmr);
		if (ret) {
			mutex_unlock(&v->objs_lock);
			return ret;
		}
		/* Lookups under RCU see it until mrbond_mr_free()'s grace. */
		xa_erase(&v->member[mr->member].rkeys, rkey_index);
	}
	list_del(&mr->node);
	mutex_unlock(&v->objs_lock);
	mrbond_mr_free(v, mr);
	return 0;
}

/* An orphan's pages go nowhere: only iova and length are computed. */
static int mrbond_orphan_set_page(struct ib_mr *ibmr, u64 addr)
{
	return 0;
}

/*
 * With virtual DMA on both sides (the vdev has no dma_device; members are
 * software RoCE) the SG list's DMA addresses are kernel virtual addresses,
 * valid for the member as they are. The member computes iova and length;
 * the ULP reads them from the vdev MR. An orphan (its member is gone) maps
 * as a CPU-side operation still succeeds on a failed HCA; its REG_MR then
 * flushes on the dead QP, which sends the ULP to its error recovery, where
 * a failed map would fail the I/O instead.
 */
int mrbond_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		     unsigned int *sg_offset)
{
	struct mrbond_mr *mr = to_mrbond_mr(ibmr);
	struct ib_mr *mmr;
	int n = 0;

	/*
	 * A detach deregisters the member MR after synchronize_rcu(): hold
	 * the read side from reading mmr until the member is done with it.
	 * Mapping does not sleep (ULPs map from blk-mq's queue_rq).
	 */
	rcu_read_lock();
	mmr = READ_ONCE(mr->mmr);
	if (mmr) {
		mrbond_inject_any(MRBOND_INJECT_MAP_MR_SG);
		n = ib_map_mr_sg(mmr, sg, sg_nents, sg_offset, ibmr->page_size);
		ibmr->iova = mmr->iova;
		ibmr->length = mmr->length;
	}
	rcu_read_unlock();
	if (!mmr)
		return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
				      mrbond_orphan_set_page);
	return n;
}

/*
 * The member lkey of an SGE's vdev lkey on qp's member, or -EINVAL for a
 * key of another member (counted) or no key at all. Any context, under the
 * QP's lock.
 */
int mrbond_translate_lkey(struct mrbond_vdev *v, struct mrbond_qp *qp,
			  u32 lkey, u32 *out)
{
	struct mrbond_mr *mr;
	struct ib_mr *mmr;
	int ret = 0;

	if (lkey == MRBOND_LOCAL_DMA_LKEY) {
		*out = qp->local_dma_lkey;
		return 0;
	}
	rcu_read_lock();
	mr = xa_load(&v->mr_index, lkey >> 8);
	mmr = mr ? READ_ONCE(mr->mmr) : NULL;
	if (!mr) {
		ret = -EINVAL;
	} else if (mr->member < 0) {
		*out = qp->local_dma_lkey;
	} else if (mr->member != qp->member || !mmr) {
		atomic64_inc(&v->member[qp->member].wrong_key);
		ret = -EINVAL;
	} else {
		*out = (mmr->lkey & ~0xffU) | (lkey & 0xff);
	}
	rcu_read_unlock();
	return ret;
}

/*
 * The MR of a REG_MR WR, if it is bound to qp's member; else NULL, a
 * wrong-member post (counted). Under the QP's lock.
 */
struct mrbond_mr *mrbond_mr_on_member(struct mrbond_vdev *v,
				      struct mrbond_qp *qp, struct ib_mr *ibmr)
{
	struct mrbond_mr *mr;

	if (!ibmr || ibmr->device != &v->ibdev)
		return NULL;
	mr = to_mrbond_mr(ibmr);
	if (mr->member != qp->member || !READ_ONCE(mr->mmr)) {
		atomic64_inc(&v->member[qp->member].wrong_key);
		return NULL;
	}
	return mr;
}

/*
 * LOCAL_INV of rkey on qp: 0 if rkey is one of qp's member's MRs or unknown
 * to the vdev (the member then judges it), -EINVAL if it belongs to an MR
 * of another member (counted). Under the QP's lock, IRQs off: one index
 * lookup per member.
 */
int mrbond_check_local_rkey(struct mrbond_vdev *v, struct mrbond_qp *qp,
			    u32 rkey)
{
	int m, ret = 0;

	rcu_read_lock();
	if (!xa_load(&v->member[qp->member].rkeys, rkey >> 8)) {
		for (m = 0; m < MRBOND_MAX_MEMBERS; m++) {
			if (m != qp->member &&
			    xa_load(&v->member[m].rkeys, rkey >> 8)) {
				ret = -EINVAL;
				break;
			}
		}
	}
	rcu_read_unlock();
	if (ret)
		atomic64_inc(&v->member[qp->member].wrong_key);
	return ret;
}

/*
 * The member is going away: its MRs become orphans (posts with them fail,
 * mapping them fails), the member MRs are freed. Under objs_lock, after the
 * member's QPs are destroyed.
 */
void mrbond_mrs_detach(struct mrbond_vdev *v, int member)
{
	struct mrbond_mr *mr;

	lockdep_assert_held(&v->objs_lock);
	list_for_each_entry(mr, &v->mrs, node) {
		if (mr->member != member || !mr->mmr)
			continue;
		xa_erase(&v->member[member].rkeys, mr->mmr->rkey >> 8);
		mr->orphan = mr->mmr;
		WRITE_ONCE(mr->mmr, NULL);
	}
	/* Key lookups read mmr under RCU: let them finish first. */
	synchronize_rcu();
	list_for_each_entry(mr, &v->mrs, node) {
		if (!mr->orphan)
			continue;
		ib_dereg_mr(mr->orphan);
		mr->orphan = NULL;
	}
}
