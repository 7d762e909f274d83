// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_rxe_dma: what turns rdma_rxe into a device that needs DMA mapping.
 *
 * Each device registers with a platform device as its dma_device (64-bit
 * mask, dma_parms, the default swiotlb), so ib_uses_virt_dma() is false
 * and the RDMA core hands its users real DMA addresses, as an mlx5 port's
 * would. Where rxe turns an address of a posted SGE, an FRWR page or a
 * DMA MR's atomic target into a page, rxe_dma_to_page() takes it through
 * dma_to_phys() and refuses any address that is no mapping of this device:
 * not RAM (a kernel virtual address, as a virtual-DMA device expects), or,
 * with swiotlb=force, outside the bounce pool. A refusal is counted in the
 * read-only parameter "refused" and becomes an error completion, never a
 * write to the wrong memory.
 *
 * Like an mlx5 port, and unlike rdma_rxe, it has a PMA (process_mad), so
 * that /sys/class/infiniband/<dev>/ports/1/counters/ exists and a bond
 * over it can report its members' port counters.
 */
#include <linux/atomic.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/platform_device.h>
#include <linux/sizes.h>
#include <linux/swiotlb.h>
#include <linux/limits.h>
#include <linux/sysfs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>

#include "src/rxe.h"

/*
 * Not rdma_rxe's 4791, so that both can be loaded: a bond may mix them,
 * and every double on a rail must use the same port.
 */
unsigned short rxe_dma_udp_port = 4792;
module_param_named(udp_port, rxe_dma_udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "RoCEv2 UDP port (default 4792)");

static atomic64_t rxe_dma_refused = ATOMIC64_INIT(0);

static int rxe_dma_refused_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&rxe_dma_refused));
}

static const struct kernel_param_ops rxe_dma_refused_ops = {
	.get = rxe_dma_refused_get,
};
module_param_cb(refused, &rxe_dma_refused_ops, NULL, 0444);
MODULE_PARM_DESC(refused, "addresses refused as no DMA mapping of the device");

int rxe_dma_device_add(struct rxe_dev *rxe)
{
	struct platform_device *pdev;
	int err;

	pdev = platform_device_register_simple("rdma_rxe_dma",
					       PLATFORM_DEVID_AUTO, NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);

	/*
	 * As mlx5: 64-bit addresses (DMA_BIT_MASK(64), which clang flags as
	 * a shift overflow under -Werror), segments up to 2 GiB.
	 */
	err = dma_coerce_mask_and_coherent(&pdev->dev, U64_MAX);
	if (err) {
		platform_device_unregister(pdev);
		return err;
	}
	dma_set_max_seg_size(&pdev->dev, SZ_2G);
	rxe->dma_pdev = pdev;
	return 0;
}

void rxe_dma_device_del(struct rxe_dev *rxe)
{
	if (rxe->dma_pdev)
		platform_device_unregister(rxe->dma_pdev);
	rxe->dma_pdev = NULL;
}

/*
 * The page of DMA address @dma, whose @len bytes from there the caller
 * touches within that page; NULL if they are no mapping of @rxe's device.
 */
struct page *rxe_dma_to_page(struct rxe_dev *rxe, u64 dma, unsigned int len)
{
	struct device *dev = &rxe->dma_pdev->dev;
	phys_addr_t phys = dma_to_phys(dev, dma);
	bool mapped = pfn_valid(PHYS_PFN(phys));

	if (mapped && is_swiotlb_force_bounce(dev))
		mapped = swiotlb_find_pool(dev, phys) &&
			 swiotlb_find_pool(dev, phys + max(len, 1U) - 1);
	if (!mapped) {
		atomic64_inc(&rxe_dma_refused);
		pr_warn_ratelimited("%s: refused address %#llx: no DMA mapping of the device\n",
				    dev_name(&rxe->ib_dev.dev), dma);
		return NULL;
	}
	return pfn_to_page(PHYS_PFN(phys));
}

/* A RoCE packet sent or received: its octets from BTH to ICRC. */
void rxe_dma_count(struct rxe_dev *rxe, u32 bytes, bool sent)
{
	atomic64_add(bytes, sent ? &rxe->dma_tx_bytes : &rxe->dma_rx_bytes);
}

/*
 * The double's PMA: ClassPortInfo with 64-bit counters; PortCountersExt
 * and PortCounters (saturated to 32 bits) with rdma_rxe's own packet
 * counts and the double's RoCE octets (rxe_dma_count(), also of loopback
 * packets, which never reach a netdev) in the 4-octet words PMA counts; no
 * errors. Any other MAD is passed on.
 */
int rxe_dma_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
			const struct ib_wc *in_wc, const struct ib_grh *in_grh,
			const struct ib_mad *in, struct ib_mad *out,
			size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct rxe_dev *rxe = container_of(ibdev, struct rxe_dev, ib_dev);
	struct ib_pma_portcounters_ext *ext = (void *)(out->data + 40);
	struct ib_pma_portcounters *basic = (void *)(out->data + 40);
	struct ib_class_port_info *cpi = (void *)(out->data + 40);
	u64 tx, rx, tx_words, rx_words;

	if (in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;
	*out = *in;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = 0;
	memset(out->data, 0, sizeof(out->data));
	tx_words = atomic64_read(&rxe->dma_tx_bytes) >> 2;
	rx_words = atomic64_read(&rxe->dma_rx_bytes) >> 2;
	tx = atomic64_read(&rxe->stats_counters[RXE_CNT_SENT_PKTS]);
	rx = atomic64_read(&rxe->stats_counters[RXE_CNT_RCVD_PKTS]);

	switch (in->mad_hdr.attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		cpi->base_version = 1;
		cpi->class_version = 1;
		cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
		break;
	case IB_PMA_PORT_COUNTERS_EXT:
		ext->port_select = in->data[41];
		ext->port_xmit_data = cpu_to_be64(tx_words);
		ext->port_rcv_data = cpu_to_be64(rx_words);
		ext->port_xmit_packets = cpu_to_be64(tx);
		ext->port_rcv_packets = cpu_to_be64(rx);
		ext->port_unicast_xmit_packets = cpu_to_be64(tx);
		ext->port_unicast_rcv_packets = cpu_to_be64(rx);
		break;
	case IB_PMA_PORT_COUNTERS:
		basic->port_select = in->data[41];
		basic->port_xmit_data = cpu_to_be32(min_t(u64, tx_words, U32_MAX));
		basic->port_rcv_data = cpu_to_be32(min_t(u64, rx_words, U32_MAX));
		basic->port_xmit_packets = cpu_to_be32(min_t(u64, tx, U32_MAX));
		basic->port_rcv_packets = cpu_to_be32(min_t(u64, rx, U32_MAX));
		break;
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
