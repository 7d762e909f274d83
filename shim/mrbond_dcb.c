// SPDX-License-Identifier: GPL-2.0
/*
 * What the knob code of rdma_mrbond reads and writes on member devices:
 * dcbnl PFC (ieee_getpfc/ieee_setpfc under RTNL), ethtool pause statistics
 * and member RDMA hw counters. Rust sequences the calls and judges their
 * results; every function here only forwards.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/dcbnl.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/dcbnl.h>

#include "rdma_mrbond_knobs.h"

static_assert(ARRAY_SIZE(((struct ieee_pfc *)0)->requests) ==
	      ARRAY_SIZE(((struct mrbond_pfc *)0)->requests));
static_assert(ARRAY_SIZE(((struct ieee_pfc *)0)->indications) ==
	      ARRAY_SIZE(((struct mrbond_pfc *)0)->indications));

void mrbond_dcb_rtnl_lock(void)
{
	rtnl_lock();
}

void mrbond_dcb_rtnl_unlock(void)
{
	rtnl_unlock();
}

/* The netdev with both PFC ops, or an ERR_PTR; RTNL held. */
static struct net_device *mrbond_dcb_dev(u32 ifindex)
{
	struct net_device *ndev;

	ASSERT_RTNL();
	ndev = __dev_get_by_index(&init_net, ifindex);
	if (!ndev)
		return ERR_PTR(-ENODEV);
	if (!ndev->dcbnl_ops || !ndev->dcbnl_ops->ieee_getpfc ||
	    !ndev->dcbnl_ops->ieee_setpfc)
		return ERR_PTR(-EOPNOTSUPP);
	return ndev;
}

int mrbond_dcb_getpfc(u32 ifindex, struct mrbond_pfc *pfc)
{
	struct net_device *ndev = mrbond_dcb_dev(ifindex);
	struct ieee_pfc p = {};
	int err;

	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	err = ndev->dcbnl_ops->ieee_getpfc(ndev, &p);
	if (err)
		return err;
	pfc->pfc_cap = p.pfc_cap;
	pfc->pfc_en = p.pfc_en;
	pfc->mbc = p.mbc;
	pfc->delay = p.delay;
	memcpy(pfc->requests, p.requests, sizeof(pfc->requests));
	memcpy(pfc->indications, p.indications, sizeof(pfc->indications));
	return 0;
}

int mrbond_dcb_setpfc(u32 ifindex, const struct mrbond_pfc *pfc)
{
	struct net_device *ndev = mrbond_dcb_dev(ifindex);
	struct ieee_pfc p = {
		.pfc_cap = pfc->pfc_cap,
		.pfc_en = pfc->pfc_en,
		.mbc = pfc->mbc,
		.delay = pfc->delay,
	};

	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	memcpy(p.requests, pfc->requests, sizeof(p.requests));
	memcpy(p.indications, pfc->indications, sizeof(p.indications));
	return ndev->dcbnl_ops->ieee_setpfc(ndev, &p);
}

void mrbond_dcb_notify(u32 ifindex)
{
	struct net_device *ndev = mrbond_dcb_dev(ifindex);

	if (!IS_ERR(ndev))
		dcbnl_ieee_notify(ndev, RTM_SETDCB, DCB_CMD_IEEE_SET, 0, 0);
}

int mrbond_dcb_pause_stats(u32 ifindex, u64 *tx, u64 *rx)
{
	struct ethtool_pause_stats st;
	struct net_device *ndev;
	int err = -EOPNOTSUPP;

	rtnl_lock();
	ndev = __dev_get_by_index(&init_net, ifindex);
	if (!ndev) {
		err = -ENODEV;
	} else if (ndev->ethtool_ops && ndev->ethtool_ops->get_pause_stats) {
		/* Drivers leave what they do not count at NOT_SET. */
		ethtool_stats_init((u64 *)&st.stats,
				   sizeof(st.stats) / sizeof(u64));
		st.src = ETHTOOL_MAC_STATS_SRC_AGGREGATE;
		ndev->ethtool_ops->get_pause_stats(ndev, &st);
		if (st.tx_pause_frames != ETHTOOL_STAT_NOT_SET &&
		    st.rx_pause_frames != ETHTOOL_STAT_NOT_SET) {
			*tx = st.tx_pause_frames;
			*rx = st.rx_pause_frames;
			err = 0;
		}
	}
	rtnl_unlock();
	return err;
}

u32 mrbond_glue_ibdev_hw_counters(struct ib_device *dev,
				  const char *const *names, u32 n, u64 *values)
{
	struct rdma_hw_stats *stats;
	u32 found = 0, i;
	int c;

	if (!dev->ops.alloc_hw_port_stats || !dev->ops.get_hw_stats)
		return 0;
	stats = dev->ops.alloc_hw_port_stats(dev, rdma_start_port(dev));
	if (!stats)
		return 0;
	if (dev->ops.get_hw_stats(dev, stats, rdma_start_port(dev), 0) < 0)
		goto out;
	for (c = 0; c < stats->num_counters; c++) {
		if (test_bit(c, stats->is_disabled))
			continue;
		for (i = 0; i < n && i < 32; i++) {
			if (!strcmp(stats->descs[c].name, names[i])) {
				values[i] = stats->value[c];
				found |= BIT(i);
			}
		}
	}
out:
	rdma_free_hw_stats_struct(stats);
	return found;
}
