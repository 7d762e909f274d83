/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI between the C glue (rust/mrbond_glue.c) and the Rust crate of
 * rdma_mrbond. Only fixed-width integers, opaque pointers and NUL-terminated
 * strings cross it; the C side decides nothing and the Rust side never sees a
 * C structure layout.
 */
#ifndef _RDMA_MRBOND_GLUE_H
#define _RDMA_MRBOND_GLUE_H

#include <linux/types.h>

struct ib_device;

/* Rust -> C: registration of the ib_client that watches every RDMA device. */
int mrbond_glue_client_register(void);
void mrbond_glue_client_unregister(void);

/* Rust -> C: read-only accessors for an ib_device the client was handed. */
const char *mrbond_glue_ib_device_name(const struct ib_device *dev);
u32 mrbond_glue_ib_device_port_count(const struct ib_device *dev);
u32 mrbond_glue_ib_device_driver_id(const struct ib_device *dev);

/*
 * C -> Rust: ib_client callbacks. Called in process context with the RDMA
 * core's client lock held; they may sleep but must not call back into
 * ib_register_client()/ib_unregister_client().
 */
int mrbond_rs_ib_device_added(struct ib_device *dev);
void mrbond_rs_ib_device_removed(struct ib_device *dev);

#endif /* _RDMA_MRBOND_GLUE_H */
