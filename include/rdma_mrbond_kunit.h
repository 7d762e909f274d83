/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI between the KUnit suite (shim/policy_kunit_glue.c) and the
 * Rust crate root of rdma_mrbond_kunit.ko (rust/kunit/policy_kunit.rs).
 * Names and messages are not NUL-terminated: they come with their length.
 */
#ifndef _RDMA_MRBOND_KUNIT_H
#define _RDMA_MRBOND_KUNIT_H

#include <linux/types.h>

size_t mrbond_kunit_case_count(void);
int mrbond_kunit_case_name(size_t index, const u8 **name, size_t *len);
int mrbond_kunit_case_run(size_t index, const u8 **msg, size_t *len);

#endif /* _RDMA_MRBOND_KUNIT_H */
