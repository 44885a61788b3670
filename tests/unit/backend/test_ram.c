// SPDX-License-Identifier: MIT
/* test_ram.c - RAM backend: data, zeroes, errors, ring behaviour. */
#include "bk_test.h"

static int setup_ram(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();

	c->opts.type = NVMFD_BK_RAM;
	c->opts.size = BKT_SIZE;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	*state = c;
	return 0;
}

static int setup_ram_4k(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();

	c->opts.type = NVMFD_BK_RAM;
	c->opts.size = BKT_SIZE;
	c->opts.lba_shift = 12;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	*state = c;
	return 0;
}

static void test_ram_geometry(void **state)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_RAM, .size = BKT_SIZE };
	struct nvmfd_bk *bk = NULL;

	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(nvmfd_bk_size(bk), BKT_SIZE);
	assert_int_equal(nvmfd_bk_lba_shift(bk), 9);
	assert_int_equal(nvmfd_bk_get_type(bk), NVMFD_BK_RAM);
	assert_false(nvmfd_bk_needs_aligned_buf(bk));
	assert_int_equal(nvmfd_bk_close(&bk), 0);
	assert_null(bk);

	o.lba_shift = 12;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	assert_int_equal(nvmfd_bk_lba_shift(bk), 12);
	assert_int_equal(nvmfd_bk_close(&bk), 0);

	/* Size required and a multiple of the block size. */
	o.size = 0;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.size = BKT_SIZE + 512;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	o.lba_shift = 10;
	o.size = BKT_SIZE;
	assert_int_equal(nvmfd_bk_open(&o, &bk), -EINVAL);
	assert_null(bk);
	/* Closing NULL is a no-op. */
	assert_int_equal(nvmfd_bk_close(&bk), 0);
}

/* New RAM reads as zeroes; 512-byte offsets are refused at lba_shift 12. */
static void test_ram_fresh_and_4k(void **state)
{
	struct bkt_ctx *c = *state;
	struct bkt_io t;

	memset(c->rbuf, 0xff, 65536);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, BKT_SIZE - 65536, 65536, c->rbuf, false), 65536);
	assert_true(bkt_is_zero(c->rbuf, 65536));
	bkt_init_io(&t, NVMFD_BK_READ, 512, 4096, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_READ, 4096, 512, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
}

/* A RAM completion is delivered at the next reap, never inside submit,
 * and the reap budget is honoured. */
static void test_ram_deferred(void **state)
{
	struct bkt_ctx *c = *state;
	struct pollfd pfd;
	struct bkt_io t[5];

	for (int i = 0; i < 5; i++) {
		bkt_init_io(&t[i], NVMFD_BK_WRITE, (uint64_t)i * 512, 512, c->wbuf);
		assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t[i].io), 0);
		assert_int_equal(t[i].ncb, 0);
	}
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 5);
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, 2), 2);
	assert_int_equal(t[0].ncb + t[1].ncb, 2);
	assert_int_equal(t[2].ncb + t[3].ncb + t[4].ncb, 0);
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 3);
	/* Work left: the event fd stays readable. */
	pfd.fd = nvmfd_bk_ring_event_fd(c->ring);
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, 0), 0);
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, UINT_MAX), 3);
	for (int i = 0; i < 5; i++)
		assert_int_equal(t[i].res, 512);
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ram_geometry),
		BKT_GENERIC_TESTS(setup_ram),
		BKT_GENERIC_TESTS(setup_ram_4k),
		cmocka_unit_test_setup_teardown(test_ram_fresh_and_4k, setup_ram_4k, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_deferred, setup_ram, bkt_teardown),
	};

	return cmocka_run_group_tests_name("backend-ram", tests, NULL, NULL);
}
