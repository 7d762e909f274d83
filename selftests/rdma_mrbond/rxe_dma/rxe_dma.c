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
