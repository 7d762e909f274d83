// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "rdma_mrbond_policy": one parameterised case that runs every
 * self-check scenario of the shared policy core (rust/policy/selfcheck.rs).
 * 6.12's Rust has no #[kunit_tests], so the suite is declared here.
 */

#include <kunit/test.h>
#include <linux/module.h>

#include "rdma_mrbond_kunit.h"

/* Parameters are scenario index + 1, so that no parameter is NULL. */
static const void *policy_case_next(const void *prev, char *desc)
{
	size_t next = (size_t)prev;
	const u8 *name;
	size_t len;

	if (next >= mrbond_kunit_case_count() ||
	    mrbond_kunit_case_name(next, &name, &len))
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%.*s", (int)len, name);
	return (const void *)(next + 1);
}

static void policy_selfcheck(struct kunit *test)
{
	size_t index = (size_t)test->param_value - 1;
	const u8 *msg = NULL;
	size_t len = 0;
	int ret = mrbond_kunit_case_run(index, &msg, &len);

	if (ret == 1)
		KUNIT_FAIL(test, "%.*s", (int)len, msg);
	else
		KUNIT_EXPECT_EQ(test, ret, 0);
}

static void policy_has_cases(struct kunit *test)
{
	KUNIT_EXPECT_GT(test, mrbond_kunit_case_count(), 0);
}

static struct kunit_case policy_cases[] = {
	KUNIT_CASE(policy_has_cases),
	KUNIT_CASE_PARAM(policy_selfcheck, policy_case_next),
	{}
};

static struct kunit_suite policy_suite = {
	.name = "rdma_mrbond_policy",
	.test_cases = policy_cases,
};
kunit_test_suite(policy_suite);

MODULE_DESCRIPTION("KUnit tests of the rdma_mrbond policy core");
MODULE_LICENSE("GPL");
