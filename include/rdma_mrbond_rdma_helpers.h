/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Rust RDMA abstractions (rust/rdma/) call that has no symbol of
 * its own: static inlines, wrapped as the kernel crate's rust/helpers/ do,
 * and the one accessor of the vdev container while it is still C.
 */
#ifndef _RDMA_MRBOND_RDMA_HELPERS_H
#define _RDMA_MRBOND_RDMA_HELPERS_H

struct ib_device;
struct ib_pd;
struct net_device;

/* dev_put(): drops the reference ib_device_get_netdev() took. */
void mrbond_rdma_dev_put(struct net_device *ndev);
/* READ_ONCE(ndev->mtu): net_device is opaque to the kernel crate. */
unsigned int mrbond_rdma_netdev_mtu(const struct net_device *ndev);

/* ib_alloc_pd(dev, 0) (a macro) and ib_dealloc_pd() (an inline). */
struct ib_pd *mrbond_rdma_alloc_pd(struct ib_device *dev);
void mrbond_rdma_dealloc_pd(struct ib_pd *pd);

/*
 * The driver data of a vdev (its bond), from mrbond_vdev_alloc() until its
 * .dealloc_driver; NULL after.
 */
void *mrbond_rdma_driver_data(struct ib_device *ibdev);

#endif /* _RDMA_MRBOND_RDMA_HELPERS_H */
