// SPDX-License-Identifier: MIT
/* test_null.c - null backend: reads zero-fill, writes are discarded. */
#include "bk_test.h"

static int setup_null(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();

	c->opts.type = NVMFD_BK_NULL;
	c->opts.size = BKT_SIZE;
	c->zero_reads = true;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	*state = c;
	return 0;
}

static void test_null_geometry(void **state)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_NULL, .size = 1ull << 40, .lba_shift = 12 };
	struct nvmfd_bk *bk = NULL;

	/* No memory behind it: a 1 TiB null namespace is fine. */
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(nvmfd_bk_size(bk), 1ull << 40);
	assert_int_equal(nvmfd_bk_lba_shift(bk), 12);
	assert_int_equal(nvmfd_bk_get_type(bk), NVMFD_BK_NULL);
	assert_false(nvmfd_bk_needs_aligned_buf(bk));
	assert_int_equal(nvmfd_bk_close(&bk), 0);
	o.size = 0;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.size = 4096 + 512;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	assert_null(bk);
}

/* The read buffer is overwritten with zeroes, whatever it held. */
static void test_null_read_zero_fills(void **state)
{
	struct bkt_ctx *c = *state;

	memset(c->rbuf, 0xee, BKT_MAX_LEN);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, BKT_MAX_LEN, c->rbuf, false), (int)BKT_MAX_LEN);
	assert_true(bkt_is_zero(c->rbuf, BKT_MAX_LEN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_geometry),
		BKT_GENERIC_TESTS(setup_null),
		cmocka_unit_test_setup_teardown(test_null_read_zero_fills, setup_null, bkt_teardown),
	};

	return cmocka_run_group_tests_name("backend-null", tests, NULL, NULL);
}
