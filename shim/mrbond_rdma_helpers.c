// SPDX-License-Identifier: GPL-2.0
/*
 * Static inlines the Rust RDMA abstractions (rust/rdma/) call, as symbols:
 * bindgen sees only their prototypes (include/rdma_mrbond_rdma_helpers.h).
 */
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_rdma_helpers.h"

void mrbond_rdma_dev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

unsigned int mrbond_rdma_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

struct ib_pd *mrbond_rdma_alloc_pd(struct ib_device *dev)
{
	return ib_alloc_pd(dev, 0);
}

void mrbond_rdma_dealloc_pd(struct ib_pd *pd)
{
	ib_dealloc_pd(pd);
}
