// SPDX-License-Identifier: GPL-2.0
/*
 * Fault-injection points of test builds (include/rdma_mrbond_inject.h):
 * each sleeps once for the delay armed through debugfs, so that a race
 * test opens its window deterministically instead of gambling on timing.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>

#include "rdma_mrbond_inject.h"

/* Longest sleep a point accepts: a window, not a hang. */
#define MRBOND_INJECT_MAX_MS	30000

static const char * const mrbond_inject_names[MRBOND_INJECT_NR] = {
	[MRBOND_INJECT_DETACH_QP] = "detach_qp",
	[MRBOND_INJECT_MAP_MR_SG] = "map_mr_sg",
	[MRBOND_INJECT_CM_LISTEN] = "cm_listen",
	[MRBOND_INJECT_ATTACH_FAIL] = "attach_fail",
	[MRBOND_INJECT_CM_REQ_IN] = "cm_req_in",
	[MRBOND_INJECT_GSI_REQ_OUT] = "gsi_req_out",
	[MRBOND_INJECT_MEMBER_FAIL] = "member_fail",
	[MRBOND_INJECT_ALLOC_MR] = "alloc_mr",
	[MRBOND_INJECT_CQ_DESTROY] = "cq_destroy",
	[MRBOND_INJECT_CQ_KICK_WORK] = "cq_kick_work",
	[MRBOND_INJECT_QP_FATAL_WORK] = "qp_fatal_work",
};

struct mrbond_inject_state {
	atomic_t armed_ms;	/* taken (xchg to 0) by the next pass */
	atomic_t hits;		/* passes that waited */
};

static struct mrbond_inject_state mrbond_inject_state[MRBOND_INJECT_NR];
static struct dentry *mrbond_inject_dir;

/* The delay armed at point, taken: 0 if none. */
static int mrbond_inject_take(enum mrbond_inject_point point)
{
	struct mrbond_inject_state *s;
	int ms;

	if (point >= MRBOND_INJECT_NR)
		return 0;
	s = &mrbond_inject_state[point];
	ms = atomic_xchg(&s->armed_ms, 0);
	if (ms) {
		atomic_inc(&s->hits);
		pr_info("inject: %s: taken (%d)\n",
			mrbond_inject_names[point], ms);
	}
	return ms;
}

void mrbond_inject(enum mrbond_inject_point point)
{
	int ms = mrbond_inject_take(point);

	if (!ms)
		return;
	msleep(ms);
	pr_info("inject: %s: resumed\n", mrbond_inject_names[point]);
}

void mrbond_inject_any(enum mrbond_inject_point point)
{
	int ms = mrbond_inject_take(point);

	if (!ms)
		return;
	if (preemptible())
		msleep(ms);
	else
		mdelay(ms);
	pr_info("inject: %s: resumed\n", mrbond_inject_names[point]);
}

bool mrbond_inject_fail(enum mrbond_inject_point point)
{
	return mrbond_inject_take(point) != 0;
}

static ssize_t mrbond_inject_read(struct file *f, char __user *buf,
				  size_t len, loff_t *pos)
{
	struct mrbond_inject_state *s = file_inode(f)->i_private;
	char tmp[48];
	int n;

	n = scnprintf(tmp, sizeof(tmp), "armed_ms=%d hits=%d\n",
		      atomic_read(&s->armed_ms), atomic_read(&s->hits));
	return simple_read_from_buffer(buf, len, pos, tmp, n);
}

static ssize_t mrbond_inject_write(struct file *f, const char __user *buf,
				   size_t len, loff_t *pos)
{
	struct mrbond_inject_state *s = file_inode(f)->i_private;
	unsigned int ms;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	if (ms > MRBOND_INJECT_MAX_MS)
		return -ERANGE;
	atomic_set(&s->armed_ms, ms);
	return len;
}

static const struct file_operations mrbond_inject_fops = {
	.owner = THIS_MODULE,
	.read = mrbond_inject_read,
	.write = mrbond_inject_write,
	.llseek = default_llseek,
};

void mrbond_inject_init(void)
{
	struct dentry *top = debugfs_create_dir("rdma_mrbond", NULL);
	int i;

	mrbond_inject_dir = top;
	top = debugfs_create_dir("inject", top);
	for (i = 0; i < MRBOND_INJECT_NR; i++)
		debugfs_create_file(mrbond_inject_names[i], 0600, top,
				    &mrbond_inject_state[i],
				    &mrbond_inject_fops);
	pr_info("fault injection build: %s/inject\n", "rdma_mrbond");
}

void mrbond_inject_exit(void)
{
	debugfs_remove(mrbond_inject_dir);
	mrbond_inject_dir = NULL;
}
