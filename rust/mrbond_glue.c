// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C glue for rdma_mrbond: the parts of the RDMA core that the 6.12 kernel
 * crate has no abstraction for. Every function here only forwards to the RDMA
 * core or to Rust; no policy is decided in C.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "rdma_mrbond_glue.h"

static int mrbond_client_add(struct ib_device *dev)
{
	return mrbond_rs_ib_device_added(dev);
}

static void mrbond_client_remove(struct ib_device *dev, void *client_data)
{
	mrbond_rs_ib_device_removed(dev);
}

static struct ib_client mrbond_client = {
	.name = "rdma_mrbond",
	.add = mrbond_client_add,
	.remove = mrbond_client_remove,
};

int mrbond_glue_client_register(void)
{
	return ib_register_client(&mrbond_client);
}

void mrbond_glue_client_unregister(void)
{
	ib_unregister_client(&mrbond_client);
}

const char *mrbond_glue_ib_device_name(const struct ib_device *dev)
{
	return dev_name(&dev->dev);
}

u32 mrbond_glue_ib_device_port_count(const struct ib_device *dev)
{
	return rdma_end_port(dev) - rdma_start_port(dev) + 1;
}

u32 mrbond_glue_ib_device_driver_id(const struct ib_device *dev)
{
	return dev->ops.driver_id;
}
