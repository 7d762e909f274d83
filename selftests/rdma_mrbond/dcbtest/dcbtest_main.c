// SPDX-License-Identifier: GPL-2.0
/*
 * mrbond_dcbtest: a DCB test double for the rdma_mrbond knob selftests.
 *
 * `ip link add dcbt0 type mrbond_dcbt` makes an Ethernet netdev like dummy
 * (random MAC, carrier while up, transmitted skbs freed) with dcbnl
 * ieee_getpfc/ieee_setpfc/getdcbx and ethtool pause statistics, so that
 * rdma_rxe members on it get PFC through dcbnl. Every dcbnl call is recorded
 * in /sys/kernel/debug/mrbond_dcbt/log, one line each:
 *
 *	<seq> <netdev> <op> pfc_en=0x<hex> rc=<ret> rtnl=<0|1>
 *
 * (writing to the file clears it). /sys/kernel/debug/mrbond_dcbt/inject
 * takes one fault at a time, for the Nth ieee_setpfc of a netdev counted
 * from the write:
 *
 *	<netdev> fail <N> [errno]  the call fails with -errno (default EIO)
 *	<netdev> mismatch <N>      the call succeeds but keeps pfc_en ^ 0x01
 *	<netdev> hold <N>          the call logs "setpfc-hold", then waits (up
 *				   to 30 s) for a write to .../release
 *	none                       no fault
 *
 * Each netdev reports 3 transmitted and 4 received IEEE 802.3x pause
 * frames (ethtool), and for PFC priority i, i + 1 frames sent (ieee_pfc
 * requests) and 10 * (i + 1) received (indications); as a real driver's,
 * those counters are not written by ieee_setpfc.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/dcbnl.h>
#include <net/rtnetlink.h>

#define DCBT_KIND "mrbond_dcbt"
#define DCBT_LINE 96
#define DCBT_HOLD_MS 30000

struct dcbt_priv {
	struct ieee_pfc pfc;	/* under RTNL, as dcbnl calls us */
};

struct dcbt_entry {
	struct list_head node;
	char line[DCBT_LINE];
};

enum dcbt_fault { DCBT_NONE, DCBT_FAIL, DCBT_MISMATCH, DCBT_HOLD };

/*
 * The log and the armed fault. A spinlock: dcbnl calls getdcbx under its
 * dcb_lock spinlock (dcbnl_ieee_fill), so recording must not sleep.
 */
static DEFINE_SPINLOCK(dcbt_lock);
static LIST_HEAD(dcbt_log);
static u64 dcbt_seq;
static u64 dcbt_dropped;	/* entries lost to a failed atomic allocation */
static struct {
	char dev[IFNAMSIZ];
	enum dcbt_fault fault;
	u32 nth;
	u32 seen;
	int err;
} dcbt_inject;
static DECLARE_COMPLETION(dcbt_release);
static struct dentry *dcbt_dir;

static void dcbt_record(struct net_device *dev, const char *op, u8 pfc_en,
			int rc)
{
	struct dcbt_entry *e = kzalloc(sizeof(*e), GFP_ATOMIC);

	spin_lock(&dcbt_lock);
	if (!e) {
		dcbt_dropped++;
		spin_unlock(&dcbt_lock);
		return;
	}
	snprintf(e->line, sizeof(e->line), "%llu %s %s pfc_en=0x%02x rc=%d rtnl=%d",
		 ++dcbt_seq, dev->name, op, pfc_en, rc, rtnl_is_locked());
	list_add_tail(&e->node, &dcbt_log);
	spin_unlock(&dcbt_lock);
}

/* The fault for this ieee_setpfc call of dev, if it is the Nth. */
static enum dcbt_fault dcbt_take_fault(struct net_device *dev, int *err)
{
	enum dcbt_fault f = DCBT_NONE;

	spin_lock(&dcbt_lock);
	if (dcbt_inject.fault != DCBT_NONE &&
	    !strcmp(dcbt_inject.dev, dev->name) &&
	    ++dcbt_inject.seen == dcbt_inject.nth) {
		f = dcbt_inject.fault;
		*err = dcbt_inject.err;
		dcbt_inject.fault = DCBT_NONE;
	}
	spin_unlock(&dcbt_lock);
	return f;
}

static int dcbt_ieee_getpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbt_priv *p = netdev_priv(dev);

	*pfc = p->pfc;
	dcbt_record(dev, "getpfc", pfc->pfc_en, 0);
	return 0;
}

static int dcbt_ieee_setpfc(struct net_device *dev, struct ieee_pfc *pfc)
{
	struct dcbt_priv *p = netdev_priv(dev);
	enum dcbt_fault f;
	int err = 0;

	f = dcbt_take_fault(dev, &err);
	if (f == DCBT_HOLD) {
		dcbt_record(dev, "setpfc-hold", pfc->pfc_en, 0);
		if (!wait_for_completion_timeout(&dcbt_release,
						 msecs_to_jiffies(DCBT_HOLD_MS)))
			pr_warn("%s: hold timed out\n", dev->name);
	}
	if (f == DCBT_FAIL) {
		dcbt_record(dev, "setpfc", pfc->pfc_en, -err);
		return -err;
	}
	/* The configuration; the frame counters are the device's own. */
	p->pfc.pfc_cap = pfc->pfc_cap;
	p->pfc.pfc_en = pfc->pfc_en;
	p->pfc.mbc = pfc->mbc;
	p->pfc.delay = pfc->delay;
	if (f == DCBT_MISMATCH)
		p->pfc.pfc_en ^= 0x01;
	dcbt_record(dev, "setpfc", pfc->pfc_en, 0);
	return 0;
}

static u8 dcbt_getdcbx(struct net_device *dev)
{
	dcbt_record(dev, "getdcbx", 0, 0);
	return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;
}

static const struct dcbnl_rtnl_ops dcbt_dcbnl_ops = {
	.ieee_getpfc = dcbt_ieee_getpfc,
	.ieee_setpfc = dcbt_ieee_setpfc,
	.getdcbx = dcbt_getdcbx,
};

static void dcbt_get_pause_stats(struct net_device *dev,
				 struct ethtool_pause_stats *st)
{
	st->tx_pause_frames = 3;
	st->rx_pause_frames = 4;
}

static const struct ethtool_ops dcbt_ethtool_ops = {
	.get_pause_stats = dcbt_get_pause_stats,
};

static int dcbt_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	return 0;
}

static int dcbt_stop(struct net_device *dev)
{
	netif_carrier_off(dev);
	return 0;
}

static netdev_tx_t dcbt_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += skb->len;
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops dcbt_netdev_ops = {
	.ndo_open = dcbt_open,
	.ndo_stop = dcbt_stop,
	.ndo_start_xmit = dcbt_xmit,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static void dcbt_setup(struct net_device *dev)
{
	struct dcbt_priv *p = netdev_priv(dev);
	int i;

	ether_setup(dev);
	dev->netdev_ops = &dcbt_netdev_ops;
	dev->ethtool_ops = &dcbt_ethtool_ops;
	dev->dcbnl_ops = &dcbt_dcbnl_ops;
	dev->needs_free_netdev = true;
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE | IFF_NO_QUEUE;
	eth_hw_addr_random(dev);
	netif_carrier_off(dev);
	p->pfc.pfc_cap = IEEE_8021QAZ_MAX_TCS;
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		p->pfc.requests[i] = i + 1;
		p->pfc.indications[i] = 10 * (i + 1);
	}
}

static struct rtnl_link_ops dcbt_link_ops = {
	.kind = DCBT_KIND,
	.priv_size = sizeof(struct dcbt_priv),
	.setup = dcbt_setup,
};

/* ---- debugfs ---- */

static int dcbt_log_show(struct seq_file *m, void *v)
{
	struct dcbt_entry *e;

	spin_lock(&dcbt_lock);
	list_for_each_entry(e, &dcbt_log, node)
		seq_printf(m, "%s\n", e->line);
	/* A log with holes must not pass for a complete one. */
	if (dcbt_dropped)
		seq_printf(m, "dropped %llu entries\n", dcbt_dropped);
	spin_unlock(&dcbt_lock);
	return 0;
}

static int dcbt_log_open(struct inode *inode, struct file *file)
{
	return single_open(file, dcbt_log_show, NULL);
}

static void dcbt_log_clear(void)
{
	struct dcbt_entry *e, *tmp;

	spin_lock(&dcbt_lock);
	list_for_each_entry_safe(e, tmp, &dcbt_log, node) {
		list_del(&e->node);
		kfree(e);
	}
	dcbt_seq = 0;
	dcbt_dropped = 0;
	spin_unlock(&dcbt_lock);
}

static ssize_t dcbt_log_write(struct file *file, const char __user *buf,
			      size_t count, loff_t *ppos)
{
	dcbt_log_clear();
	return count;
}

static const struct file_operations dcbt_log_fops = {
	.owner = THIS_MODULE,
	.open = dcbt_log_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = dcbt_log_write,
};

static ssize_t dcbt_inject_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char buf[64], dev[IFNAMSIZ], kind[16];
	int n, err = EIO;
	u32 nth;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	spin_lock(&dcbt_lock);
	dcbt_inject.fault = DCBT_NONE;
	spin_unlock(&dcbt_lock);
	if (sysfs_streq(buf, "none"))
		return count;
	n = sscanf(buf, "%15s %15s %u %d", dev, kind, &nth, &err);
	if (n < 3 || !nth || err <= 0 || err >= MAX_ERRNO)
		return -EINVAL;
	spin_lock(&dcbt_lock);
	strscpy(dcbt_inject.dev, dev, sizeof(dcbt_inject.dev));
	dcbt_inject.nth = nth;
	dcbt_inject.seen = 0;
	dcbt_inject.err = err;
	if (!strcmp(kind, "fail"))
		dcbt_inject.fault = DCBT_FAIL;
	else if (!strcmp(kind, "mismatch"))
		dcbt_inject.fault = DCBT_MISMATCH;
	else if (!strcmp(kind, "hold"))
		dcbt_inject.fault = DCBT_HOLD;
	if (dcbt_inject.fault == DCBT_HOLD)
		reinit_completion(&dcbt_release);
	n = dcbt_inject.fault == DCBT_NONE ? -EINVAL : count;
	spin_unlock(&dcbt_lock);
	return n;
}

static const struct file_operations dcbt_inject_fops = {
	.owner = THIS_MODULE,
	.write = dcbt_inject_write,
};

static ssize_t dcbt_release_write(struct file *file, const char __user *buf,
				  size_t count, loff_t *ppos)
{
	complete(&dcbt_release);
	return count;
}

static const struct file_operations dcbt_release_fops = {
	.owner = THIS_MODULE,
	.write = dcbt_release_write,
};

static int __init dcbt_init(void)
{
	int err;

	dcbt_dir = debugfs_create_dir("mrbond_dcbt", NULL);
	debugfs_create_file("log", 0600, dcbt_dir, NULL, &dcbt_log_fops);
	debugfs_create_file("inject", 0200, dcbt_dir, NULL, &dcbt_inject_fops);
	debugfs_create_file("release", 0200, dcbt_dir, NULL, &dcbt_release_fops);
	err = rtnl_link_register(&dcbt_link_ops);
	if (err)
		debugfs_remove_recursive(dcbt_dir);
	return err;
}

static void __exit dcbt_exit(void)
{
	rtnl_link_unregister(&dcbt_link_ops);
	/* A held call may still wait: let it go before the files vanish. */
	complete_all(&dcbt_release);
	debugfs_remove_recursive(dcbt_dir);
	dcbt_log_clear();
}

module_init(dcbt_init);
module_exit(dcbt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DCB test double (dcbnl PFC ops that record every call) for rdma_mrbond");
MODULE_ALIAS_RTNL_LINK(DCBT_KIND);
