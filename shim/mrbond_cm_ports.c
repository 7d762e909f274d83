// SPDX-License-Identifier: GPL-2.0
/*
 * The cm_ports module parameter, an array, which 6.12's Rust module! macro
 * cannot declare: the TCP ports whose connection requests the members hand
 * to the vdev's QP1 (rust/rdma/gsi_member.rs).
 */
#include <linux/moduleparam.h>

#include "rdma_mrbond_rdma_helpers.h"

static ushort cm_ports[MRBOND_RDMA_CM_PORTS_MAX] = { 4420 };
static int cm_ports_count = 1;
module_param_array(cm_ports, ushort, &cm_ports_count, 0444);
MODULE_PARM_DESC(cm_ports,
		 "TCP ports of rdma_cm listeners on bonds: connection requests for them are taken from the members (default: 4420, NVMe-oF)");

u32 mrbond_rdma_cm_ports(const u16 **ports)
{
	*ports = cm_ports;
	return clamp(cm_ports_count, 0, MRBOND_RDMA_CM_PORTS_MAX);
}
