// SPDX-License-Identifier: GPL-2.0
/*
 * Static inlines the Rust RDMA abstractions (rust/rdma/) call, as symbols:
 * bindgen sees only their prototypes (include/rdma_mrbond_rdma_helpers.h).
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sch_generic.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "rdma_mrbond_rdma_helpers.h"

void mrbond_rdma_dev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

int mrbond_rdma_netdev_ifindex(const struct net_device *ndev)
{
	return ndev->ifindex;
}

unsigned int mrbond_rdma_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

void mrbond_rdma_netdev_mac(const struct net_device *ndev, u8 *mac)
{
	ether_addr_copy(mac, ndev->dev_addr);
}

int mrbond_rdma_gid_vlan(struct ib_device *dev, u32 port, const u8 *gid,
			 u16 *vlan)
{
	const struct ib_gid_attr *attr;

	*vlan = 0xffff;
	attr = rdma_find_gid_by_port(dev, (const union ib_gid *)gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, port, NULL);
	if (IS_ERR(attr))
		return PTR_ERR(attr);
	rdma_read_gid_l2_fields(attr, vlan, NULL);
	rdma_put_gid_attr(attr);
	return 0;
}

static bool mrbond_rdma_dev_can_xmit(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev) &&
	       !qdisc_tx_is_noop(dev);
}

bool mrbond_rdma_gid_can_xmit(const struct ib_gid_attr *attr)
{
	struct net_device *ndev;
	bool up = false;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev)) {
		up = mrbond_rdma_dev_can_xmit(ndev);
		if (up && is_vlan_dev(ndev))
			up = mrbond_rdma_dev_can_xmit(vlan_dev_real_dev(ndev));
	}
	rcu_read_unlock();
	return up;
}

bool mrbond_rdma_device_try_get(struct ib_device *dev)
{
	return ib_device_try_get(dev);
}

struct mrbond_rdma_resolve {
	struct completion done;
	int status;
};

static void mrbond_rdma_resolve_done(int status, struct sockaddr *src,
				     struct rdma_dev_addr *addr, void *ctx)
{
	struct mrbond_rdma_resolve *r = ctx;

	r->status = status;
	complete(&r->done);
}

int mrbond_rdma_resolve_dmac(const struct ib_gid_attr *sgid,
			     const union ib_gid *dgid, u8 *dmac)
{
	struct rdma_dev_addr dev_addr = {
		.net = &init_net,
		.sgid_attr = sgid,
	};
	union {
		struct sockaddr_in sin;
		struct sockaddr_in6 sin6;
	} src, dst;
	struct mrbond_rdma_resolve r;
	int ret;

	rdma_gid2ip((struct sockaddr *)&src, &sgid->gid);
	rdma_gid2ip((struct sockaddr *)&dst, dgid);
	init_completion(&r.done);
	ret = rdma_resolve_ip((struct sockaddr *)&src, (struct sockaddr *)&dst,
			      &dev_addr, 1000, mrbond_rdma_resolve_done, true,
			      &r);
	if (ret)
		return ret;
	wait_for_completion(&r.done);
	if (r.status)
		return r.status;
	memcpy(dmac, dev_addr.dst_dev_addr, ETH_ALEN);
	return 0;
}

struct ib_pd *mrbond_rdma_alloc_pd(struct ib_device *dev)
{
	return ib_alloc_pd(dev, 0);
}

struct ib_cq *mrbond_rdma_create_cq(struct ib_device *dev,
				    ib_comp_handler comp,
				    void (*event)(struct ib_event *, void *),
				    void *ctx, int cqe, int comp_vector)
{
	struct ib_cq_init_attr attr = {
		.cqe = cqe,
		.comp_vector = comp_vector,
	};

	return ib_create_cq(dev, comp, event, ctx, &attr);
}

int mrbond_rdma_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc)
{
	return ib_poll_cq(cq, num_entries, wc);
}

int mrbond_rdma_req_notify_cq(struct ib_cq *cq,
			      enum ib_cq_notify_flags flags)
{
	return ib_req_notify_cq(cq, flags);
}

struct ib_qp *mrbond_rdma_create_qp(struct ib_pd *pd,
				    struct ib_qp_init_attr *attr)
{
	return ib_create_qp(pd, attr);
}

int mrbond_rdma_post_send(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

int mrbond_rdma_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr)
{
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, wr, &bad);
}

int mrbond_rdma_dma_map(struct ib_device *dev, u64 kva, u32 len, bool to_device,
			u64 *dma)
{
	void *buf = (void *)(uintptr_t)kva;
	u64 addr;

	/* Only the linear map is DMA-mappable by address. */
	if (!len || !virt_addr_valid(buf) || !virt_addr_valid(buf + len - 1))
		return -EFAULT;
	addr = ib_dma_map_single(dev, buf, len,
				 to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, addr))
		return -ENOMEM;
	*dma = addr;
	return 0;
}

void mrbond_rdma_dma_unmap(struct ib_device *dev, u64 dma, u32 len, bool to_device)
{
	ib_dma_unmap_single(dev, dma, len,
			    to_device ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
}

struct scatterlist *mrbond_rdma_sg_alloc(u32 nents)
{
	struct scatterlist *sgl = kvcalloc(nents, sizeof(*sgl), GFP_KERNEL);

	if (sgl)
		sg_init_table(sgl, nents);
	return sgl;
}

void mrbond_rdma_sg_free(struct scatterlist *sgl)
{
	kvfree(sgl);
}

int mrbond_rdma_sg_copy(struct scatterlist *to, u32 max,
			struct scatterlist *from, int nents)
{
	struct scatterlist *s;
	int i;

	if (nents <= 0 || nents > max)
		return -EINVAL;
	sg_init_table(to, nents);
	for_each_sg(from, s, nents, i)
		sg_set_page(&to[i], sg_page(s), s->length, s->offset);
	return nents;
}

int mrbond_rdma_dma_map_sg(struct ib_device *dev, struct scatterlist *sgl, int nents)
{
	return ib_dma_map_sg(dev, sgl, nents, DMA_BIDIRECTIONAL);
}

void mrbond_rdma_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sgl, int nents)
{
	ib_dma_unmap_sg(dev, sgl, nents, DMA_BIDIRECTIONAL);
}

unsigned long mrbond_rdma_spin_lock_irqsave(spinlock_t *lock)
{
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	return flags;
}

void mrbond_rdma_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	spin_unlock_irqrestore(lock, flags);
}

void mrbond_rdma_init_work(struct work_struct *work, work_func_t func)
{
	INIT_WORK(work, func);
}

void mrbond_rdma_init_moves_work(struct work_struct *work, work_func_t func)
{
	INIT_WORK(work, func);
}

void mrbond_rdma_init_delayed_work(struct delayed_work *dwork, work_func_t func)
{
	INIT_DELAYED_WORK(dwork, func);
}

bool mrbond_rdma_queue_delayed_work(struct workqueue_struct *wq,
				    struct delayed_work *dwork, unsigned int ms)
{
	return queue_delayed_work(wq, dwork, msecs_to_jiffies(ms));
}

void mrbond_rdma_dealloc_pd(struct ib_pd *pd)
{
	ib_dealloc_pd(pd);
}

int mrbond_rdma_dereg_mr(struct ib_mr *mr)
{
	return ib_dereg_mr(mr);
}

void mrbond_rdma_rcu_read_lock(void)
{
	rcu_read_lock();
}

void mrbond_rdma_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void mrbond_rdma_xa_init(struct xarray *xa, bool alloc)
{
	xa_init_flags(xa, alloc ? XA_FLAGS_ALLOC : 0);
}

int mrbond_rdma_xa_alloc(struct xarray *xa, u32 *id, void *entry, u32 min,
			 u32 max)
{
	return xa_alloc(xa, id, entry, XA_LIMIT(min, max), GFP_KERNEL);
}

int mrbond_rdma_xa_insert(struct xarray *xa, unsigned long index, void *entry)
{
	return xa_insert(xa, index, entry, GFP_KERNEL);
}

int mrbond_rdma_xa_alloc_cyclic(struct xarray *xa, u32 *id, u32 min, u32 max,
				u32 *next)
{
	int ret = xa_alloc_cyclic(xa, id, NULL, XA_LIMIT(min, max), next,
				  GFP_KERNEL);

	return ret < 0 ? ret : 0;
}

void mrbond_rdma_xa_store(struct xarray *xa, u32 index, void *entry)
{
	xa_store(xa, index, entry, GFP_KERNEL);
}

void *mrbond_rdma_xa_find(struct xarray *xa, unsigned long *index, bool after)
{
	if (after)
		return xa_find_after(xa, index, ULONG_MAX, XA_PRESENT);
	return xa_find(xa, index, ULONG_MAX, XA_PRESENT);
}

struct workqueue_struct *mrbond_rdma_alloc_ordered_wq(const char *name)
{
	return alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM, name);
}

struct net_device *mrbond_rdma_dev_get_by_index(int ifindex)
{
	return dev_get_by_index(&init_net, ifindex);
}

void mrbond_rdma_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

struct nlattr *mrbond_rdma_nl_driver_nest_start(struct sk_buff *msg)
{
	return nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
}

void mrbond_rdma_nl_nest_end(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_end(msg, nest);
}

void mrbond_rdma_nl_nest_cancel(struct sk_buff *msg, struct nlattr *nest)
{
	nla_nest_cancel(msg, nest);
}

void mrbond_rdma_wait_ms(unsigned int ms)
{
	if (preemptible())
		msleep(ms);
	else
		mdelay(ms);
}
