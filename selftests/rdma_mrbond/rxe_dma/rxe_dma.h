/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_rxe_dma: rdma_rxe made a DMA-mapping device, the rdma_mrbond test
 * double of a PCI HCA (selftests/rdma_mrbond/rxe_dma/).
 */
#ifndef RXE_DMA_H
#define RXE_DMA_H

#include <linux/platform_device.h>
#include <linux/types.h>
#include <rdma/ib_user_ioctl_verbs.h>

struct ib_device;
struct ib_grh;
struct ib_mad;
struct ib_wc;
struct page;
struct rxe_dev;

/*
 * A driver id of its own: RDMA_DRIVER_UNKNOWN matches every device in
 * ib_device_get_by_netdev(), and RDMA_DRIVER_RXE would let rdma_rxe's
 * netdev lookups and exit container_of() our devices. NES has had no
 * driver since 5.3.
 */
#define RXE_DMA_DRIVER_ID RDMA_DRIVER_NES

/* The RoCEv2 UDP port the double sends to and listens on. */
extern unsigned short rxe_dma_udp_port;

int rxe_dma_device_add(struct rxe_dev *rxe);
void rxe_dma_device_del(struct rxe_dev *rxe);
struct page *rxe_dma_to_page(struct rxe_dev *rxe, u64 dma, unsigned int len);
void rxe_dma_count(struct rxe_dev *rxe, u32 bytes, bool sent);
int rxe_dma_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
			const struct ib_wc *in_wc, const struct ib_grh *in_grh,
			const struct ib_mad *in, struct ib_mad *out,
			size_t *out_mad_size, u16 *out_mad_pkey_index);

#endif /* RXE_DMA_H */
