/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's RDMA core (and the few debugfs calls of the test builds'
 * injection points) as the Rust side sees it: Kbuild runs bindgen over
 * this header for every kernel build (struct layouts follow its config)
 * into rust/rdma/bindings_generated.rs; see rust/rdma/bindings.rs.
 */
#include <linux/debugfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "rdma_mrbond_rdma_helpers.h"
