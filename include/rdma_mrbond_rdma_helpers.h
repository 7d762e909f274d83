/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Rust RDMA abstractions (rust/rdma/) call that has no symbol of
 * its own: static inlines, wrapped as the kernel crate's rust/helpers/ do,
 * and the one accessor of the vdev container while it is still C.
 */
#ifndef _RDMA_MRBOND_RDMA_HELPERS_H
#define _RDMA_MRBOND_RDMA_HELPERS_H

struct ib_device;
struct net_device;

/* dev_put(): drops the reference ib_device_get_netdev() took. */
void mrbond_rdma_dev_put(struct net_device *ndev);
/* READ_ONCE(ndev->mtu): net_device is opaque to the kernel crate. */
unsigned int mrbond_rdma_netdev_mtu(const struct net_device *ndev);

/*
 * The driver data of a vdev (its bond), from mrbond_vdev_alloc() until its
 * .dealloc_driver; NULL after.
 */
void *mrbond_rdma_driver_data(struct ib_device *ibdev);

#endif /* _RDMA_MRBOND_RDMA_HELPERS_H */
