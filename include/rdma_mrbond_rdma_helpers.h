/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Rust RDMA abstractions (rust/rdma/) call that has no symbol of
 * its own: static inlines and macros, wrapped as the kernel crate's
 * rust/helpers/ do.
 */
#ifndef _RDMA_MRBOND_RDMA_HELPERS_H
#define _RDMA_MRBOND_RDMA_HELPERS_H

#include <linux/spinlock_types.h>
#include <linux/types.h>
#include <linux/workqueue_types.h>
#include <rdma/ib_verbs.h>


/*
 * The vdev's reserved local DMA lkey (IBK_LOCAL_DMA_LKEY): index 0, never
 * an MR's (rust/rdma/mr.rs).
 */
#define MRBOND_RDMA_LOCAL_DMA_LKEY	0U

/* The SGEs of a WR the vdev takes: the room of its member copy. */
#define MRBOND_RDMA_MAX_SGE	16

struct net_device;
struct scatterlist;
struct xarray;

/* A vdev's most ports: in rail mode member slot i is port i + 1. */
#define MRBOND_RDMA_MAX_PORTS	16

/* The most TCP ports of the cm_ports module parameter. */
#define MRBOND_RDMA_CM_PORTS_MAX	8

/* The cm_ports module parameter (shim/mrbond_cm_ports.c): *ports, count. */
u32 mrbond_rdma_cm_ports(const u16 **ports);

/*
 * A send WR in the container its opcode implies: a copy of the consumer's
 * as a QP's shadow ring keeps it (its keys the bond's, its SGEs apart) to
 * post it again on another member, and the member's copy made from it.
 */
union mrbond_rdma_send_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
	struct ib_reg_wr reg;
};

/*
 * What a post hands a member (rust/rdma/wr.rs fills it): the WR and its
 * SGEs with the member's keys. On the post path's stack.
 */
struct mrbond_rdma_send {
	union mrbond_rdma_send_wr u;
	struct ib_sge sge[MRBOND_RDMA_MAX_SGE];
};

/* The same for a receive WR. */
struct mrbond_rdma_recv {
	struct ib_recv_wr wr;
	struct ib_sge sge[MRBOND_RDMA_MAX_SGE];
};

/* dev_put(): drops the reference ib_device_get_netdev() took. */
void mrbond_rdma_dev_put(struct net_device *ndev);
/* READ_ONCE(ndev->mtu): net_device is opaque to the kernel crate. */
int mrbond_rdma_netdev_ifindex(const struct net_device *ndev);
unsigned int mrbond_rdma_netdev_mtu(const struct net_device *ndev);
/* ether_addr_copy(mac, ndev->dev_addr), for the same reason. */
void mrbond_rdma_netdev_mac(const struct net_device *ndev, u8 *mac);
/*
 * The VLAN of RoCEv2 GID gid on port of dev in *vlan (0xffff: none), or
 * -errno if the port does not have it.
 */
int mrbond_rdma_gid_vlan(struct ib_device *dev, u32 port, const u8 *gid,
			 u16 *vlan);
/*
 * Whether the netdev of GID entry attr, and its real device under a VLAN,
 * can transmit: running, carrier on, and a qdisc other than the noop one
 * (inlines, read under RCU).
 */
bool mrbond_rdma_gid_can_xmit(const struct ib_gid_attr *attr);
/* ib_device_try_get() (an inline): a registration reference, if any. */
bool mrbond_rdma_device_try_get(struct ib_device *dev);
/*
 * The MAC of dgid as seen from sgid's netdev: rdma_resolve_ip() waited
 * for (the core's own lookup for kernel callers,
 * rdma_addr_find_l2_eth_by_grh(), is not exported). Sleeps up to a second.
 */
int mrbond_rdma_resolve_dmac(const struct ib_gid_attr *sgid,
			     const union ib_gid *dgid, u8 *dmac);

/* ib_alloc_pd(dev, 0) (a macro) and ib_dealloc_pd() (an inline). */
struct ib_pd *mrbond_rdma_alloc_pd(struct ib_device *dev);
void mrbond_rdma_dealloc_pd(struct ib_pd *pd);
/* ib_dereg_mr() (an inline). */
int mrbond_rdma_dereg_mr(struct ib_mr *mr);

/* ib_create_cq() (a macro), ib_poll_cq() and ib_req_notify_cq() (inlines). */
struct ib_cq *mrbond_rdma_create_cq(struct ib_device *dev,
				    ib_comp_handler comp,
				    void (*event)(struct ib_event *, void *),
				    void *ctx, int cqe, int comp_vector);
int mrbond_rdma_poll_cq(struct ib_cq *cq, int num_entries, struct ib_wc *wc);
int mrbond_rdma_req_notify_cq(struct ib_cq *cq,
			      enum ib_cq_notify_flags flags);

/* ib_create_qp() (an inline, naming this module as the caller). */
struct ib_qp *mrbond_rdma_create_qp(struct ib_pd *pd,
				    struct ib_qp_init_attr *attr);

/* ib_post_send() and ib_post_recv() (inlines), with no bad WR reported. */
int mrbond_rdma_post_send(struct ib_qp *qp, const struct ib_send_wr *wr);
int mrbond_rdma_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr);

/*
 * ib_dma_map_single() of kernel virtual address @kva on member @dev, for a
 * member that needs DMA mapping (rust/rdma/dma.rs): -EFAULT for an address
 * outside the linear map, -ENOMEM if the mapping failed; the DMA address
 * in @dma.
 */
int mrbond_rdma_dma_map(struct ib_device *dev, u64 kva, u32 len, bool to_device,
			u64 *dma);
/* ib_dma_unmap_single() of what mrbond_rdma_dma_map() mapped. */
void mrbond_rdma_dma_unmap(struct ib_device *dev, u64 dma, u32 len, bool to_device);

/*
 * An FRWR MR's pages on a member that needs DMA mapping
 * (rust/rdma/mr_pages.rs): a list of @nents entries (process context), the
 * pages of the consumer's list copied into it (-EINVAL if it has more
 * entries than @max), mapped and unmapped bidirectionally on the member.
 */
struct scatterlist *mrbond_rdma_sg_alloc(u32 nents);
void mrbond_rdma_sg_free(struct scatterlist *sgl);
int mrbond_rdma_sg_copy(struct scatterlist *to, u32 max,
			struct scatterlist *from, int nents);
int mrbond_rdma_dma_map_sg(struct ib_device *dev, struct scatterlist *sgl, int nents);
void mrbond_rdma_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sgl, int nents);

/* spin_lock_irqsave() and spin_unlock_irqrestore() (macros). */
unsigned long mrbond_rdma_spin_lock_irqsave(spinlock_t *lock);
void mrbond_rdma_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags);

/* INIT_WORK() (a macro): one lock class for the works of this module. */
void mrbond_rdma_init_work(struct work_struct *work, work_func_t func);

/*
 * INIT_WORK() for a device's move work, which takes the objects lock: a
 * lock class of its own, apart from the works that the objects lock's
 * holders cancel (a QP's fatal work).
 */
void mrbond_rdma_init_moves_work(struct work_struct *work, work_func_t func);

/* INIT_DELAYED_WORK() (a macro), and queue_delayed_work() in ms (inline). */
void mrbond_rdma_init_delayed_work(struct delayed_work *dwork, work_func_t func);
bool mrbond_rdma_queue_delayed_work(struct workqueue_struct *wq,
				    struct delayed_work *dwork, unsigned int ms);

/* rcu_read_lock() and rcu_read_unlock() (inlines). */
void mrbond_rdma_rcu_read_lock(void);
void mrbond_rdma_rcu_read_unlock(void);

/*
 * xa_init_flags() with XA_FLAGS_ALLOC or none, xa_alloc() and xa_insert()
 * with GFP_KERNEL, and xa_for_each()'s steps (inlines and macros;
 * xa_load(), xa_erase() and xa_destroy() are symbols).
 */
void mrbond_rdma_xa_init(struct xarray *xa, bool alloc);
int mrbond_rdma_xa_alloc(struct xarray *xa, u32 *id, void *entry, u32 min,
			 u32 max);
int mrbond_rdma_xa_insert(struct xarray *xa, unsigned long index, void *entry);
/* xa_alloc_cyclic() with GFP_KERNEL: 0 also when the ids wrapped. */
int mrbond_rdma_xa_alloc_cyclic(struct xarray *xa, u32 *id, u32 min, u32 max,
				u32 *next);
/* xa_store() with GFP_KERNEL, to an index xa_alloc_cyclic() reserved. */
void mrbond_rdma_xa_store(struct xarray *xa, u32 index, void *entry);
/* The first entry at *index or (after) above it; *index is moved to it. */
void *mrbond_rdma_xa_find(struct xarray *xa, unsigned long *index, bool after);

/* The device container (rust/rdma/container.rs). */

/* alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM): NULL on -ENOMEM. */
struct workqueue_struct *mrbond_rdma_alloc_ordered_wq(const char *name);
/* dev_get_by_index() in init_net: held, or NULL. */
struct net_device *mrbond_rdma_dev_get_by_index(int ifindex);
void mrbond_rdma_mark_name_assigned_by_user(struct ib_device *ibdev);

/*
 * The RDMA_NLDEV_ATTR_DRIVER nest of a resource dump, which the rdma tool
 * reads driver attributes from (nla_nest_start()/_end()/_cancel() inlines):
 * start returns NULL when the message is full.
 */
struct nlattr *mrbond_rdma_nl_driver_nest_start(struct sk_buff *msg);
void mrbond_rdma_nl_nest_end(struct sk_buff *msg, struct nlattr *nest);
void mrbond_rdma_nl_nest_cancel(struct sk_buff *msg, struct nlattr *nest);

/* Waits ms: sleeps where the context may (preemptible()), spins where not. */
void mrbond_rdma_wait_ms(unsigned int ms);

#endif /* _RDMA_MRBOND_RDMA_HELPERS_H */
