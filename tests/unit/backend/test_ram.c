// SPDX-License-Identifier: MIT
/* test_ram.c - RAM backend: data, zeroes, errors, ring behaviour, lent
 * reads (and their digests) and single-block atomicity against concurrent
 * writes. */
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include "bk_test.h"
#include <nvmfd/pdu.h>

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

/* A READ asking to borrow gets a pointer into the namespace (no copy into
 * buf); one not asking gets the copy, as before. */
static void test_ram_lend(void **state)
{
	struct bkt_ctx *c = *state;
	struct bkt_io t;

	bkt_pattern(c->wbuf, 16384, 7);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 65536 - 8192, 16384, c->wbuf, false), 16384);
	memset(c->rbuf, 0xaa, 16384);
	bkt_init_io(&t, NVMFD_BK_READ, 65536 - 8192, 16384, c->rbuf);
	t.io.lend = true;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	bkt_wait_count(c->ring, &t.ncb, 1);
	assert_int_equal(t.res, 16384);
	assert_non_null(t.io.lent);
	nvmfd_bk_lent_lock(c->bk, t.io.lent, 16384);
	nvmfd_bk_lent_lock(c->bk, (const uint8_t *)t.io.lent + 4096, 512); /* again: allowed */
	assert_memory_equal(t.io.lent, c->wbuf, 16384);
	nvmfd_bk_lent_unlock(c->bk, (const uint8_t *)t.io.lent + 4096, 512);
	nvmfd_bk_lent_unlock(c->bk, t.io.lent, 16384);
	for (int i = 0; i < 16384; i++)
		assert_int_equal(c->rbuf[i], 0xaa); /* nothing copied */

	bkt_init_io(&t, NVMFD_BK_READ, 65536 - 8192, 16384, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	bkt_wait_count(c->ring, &t.ncb, 1);
	assert_null(t.io.lent);
	assert_memory_equal(c->rbuf, c->wbuf, 16384);
}

/* Lock @len lent bytes at @off (a READ asking to borrow), compare
 * nvmfd_bk_lent_digest() of [@off + @doff, + @dlen) with nvmfd_digest()
 * of the same bytes, unlock. */
static void ram_check_digest(struct bkt_ctx *c, uint64_t off, uint32_t len, uint32_t doff,
			     uint32_t dlen)
{
	struct bkt_io t;
	const uint8_t *p;

	bkt_init_io(&t, NVMFD_BK_READ, off, len, c->rbuf);
	t.io.lend = true;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	bkt_wait_count(c->ring, &t.ncb, 1);
	assert_non_null(t.io.lent);
	p = (const uint8_t *)t.io.lent + doff;
	nvmfd_bk_lent_lock(c->bk, t.io.lent, len);
	assert_int_equal(nvmfd_bk_lent_digest(c->bk, p, dlen), nvmfd_digest(p, dlen));
	nvmfd_bk_lent_unlock(c->bk, t.io.lent, len);
}

/* The digest of lent data is that of its bytes: first (computed and
 * remembered per 4 KiB block), again (remembered), for aligned parts and
 * unaligned ranges, across a stripe boundary, and after a 512-byte write,
 * a WRITE_ZEROES, a DISCARD and a shrink and regrow change blocks whose
 * CRC was remembered. */
static void test_ram_lent_digest(void **state)
{
	struct bkt_ctx *c = *state;
	const uint64_t off = 65536 - 16384; /* 8 blocks over a stripe boundary */
	uint64_t out = 0;
	uint32_t lbs;

	bkt_pattern(c->wbuf, 32768, 11);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, off, 32768, c->wbuf, false), 32768);
	for (int round = 0; round < 2; round++) {
		ram_check_digest(c, off, 32768, 0, 32768);
		ram_check_digest(c, off, 32768, 8192, 4096);
		ram_check_digest(c, off, 32768, 12288, 20480);
		ram_check_digest(c, off, 32768, 512, 4096); /* unaligned: computed */
		ram_check_digest(c, off, 32768, 4096, 100);
	}
	/* one logical block inside the second 4 KiB changes */
	lbs = 1u << nvmfd_bk_lba_shift(c->bk);
	bkt_pattern(c->wbuf, lbs, 12);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, off + 8192 - lbs, lbs, c->wbuf, false), (int)lbs);
	ram_check_digest(c, off, 32768, 0, 32768);
	ram_check_digest(c, off, 32768, 4096, 4096);
	/* the last block across the stripe boundary: zeroes, discard */
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE_ZEROES, off + 28672, 4096, NULL, false), 0);
	ram_check_digest(c, off, 32768, 28672, 4096);
	ram_check_digest(c, off, 32768, 16384, 16384);
	assert_int_equal(bkt_do(c, NVMFD_BK_DISCARD, off, 8192, NULL, false), 0);
	ram_check_digest(c, off, 32768, 0, 32768);

	/* a remembered tail block dropped by a shrink reads back as zeroes */
	bkt_pattern(c->wbuf, 8192, 13);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, BKT_SIZE - 8192, 8192, c->wbuf, false), 8192);
	ram_check_digest(c, BKT_SIZE - 8192, 8192, 0, 8192);
	assert_int_equal(nvmfd_bk_resize(c->bk, BKT_SIZE - 65536, &out), 0);
	assert_int_equal(nvmfd_bk_resize(c->bk, BKT_SIZE, &out), 0);
	ram_check_digest(c, BKT_SIZE - 8192, 8192, 0, 8192);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, BKT_SIZE - 8192, 8192, c->rbuf, false), 8192);
	assert_true(bkt_is_zero(c->rbuf, 8192));
}

struct ram_writer {
	struct nvmfd_bk *bk;
	uint64_t off;
	uint32_t len;
	uint32_t rounds; /* writes of generation 1, 2, ... (byte value) */
	uint8_t *buf;
	int done; /* atomic: the last write returned */
};

/* Write @rounds generations over the range, each filling every byte with
 * its number; on its own ring (a ring has one owner thread). */
static void *ram_writer_main(void *arg)
{
	struct ram_writer *w = arg;
	struct nvmfd_bk_ring *ring = bkt_ring(4, false);

	for (uint32_t g = 1; g <= w->rounds; g++) {
		struct bkt_io t;

		memset(w->buf, (int)(g & 0xff), w->len);
		bkt_init_io(&t, NVMFD_BK_WRITE, w->off, w->len, w->buf);
		assert_int_equal(nvmfd_bk_submit(ring, w->bk, &t.io), 0);
		bkt_wait_count(ring, &t.ncb, 1);
		assert_int_equal(t.res, (int)w->len);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	nvmfd_bk_ring_destroy(&ring);
	return NULL;
}

/* While a lent range is locked, a write into it waits (the range keeps
 * its bytes); a write elsewhere (another stripe lock) does not. */
static void test_ram_lent_lock_holds_writes(void **state)
{
	struct bkt_ctx *c = *state;
	struct ram_writer w = { .bk = c->bk, .off = 4096, .len = 4096, .rounds = 1 };
	struct ram_writer far = { .bk = c->bk, .off = 65536 + 4096, .len = 4096, .rounds = 1 };
	struct timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
	struct bkt_io t;
	pthread_t th;

	w.buf = malloc(w.len);
	far.buf = malloc(far.len);
	assert_non_null(w.buf);
	assert_non_null(far.buf);
	bkt_init_io(&t, NVMFD_BK_READ, 0, 16384, c->rbuf);
	t.io.lend = true;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	bkt_wait_count(c->ring, &t.ncb, 1);
	assert_non_null(t.io.lent);
	nvmfd_bk_lent_lock(c->bk, t.io.lent, 16384);

	/* another stripe: completes while we hold ours */
	assert_int_equal(pthread_create(&th, NULL, ram_writer_main, &far), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(far.done, 1);

	assert_int_equal(pthread_create(&th, NULL, ram_writer_main, &w), 0);
	nanosleep(&ts, NULL); /* give it every chance to (wrongly) go through */
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_true(bkt_is_zero((const uint8_t *)t.io.lent + 4096, 4096));
	nvmfd_bk_lent_unlock(c->bk, t.io.lent, 16384);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.done, 1);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(((const uint8_t *)t.io.lent)[4096 + i], 1);
	free(w.buf);
	free(far.buf);
}

/* Each logical block of a read is all old or all new while a writer
 * rewrites the range over and over (NVMe: a one-block write is atomic
 * with respect to other commands): copied reads, and lent reads looked at
 * under their lock. The range spans a stripe boundary. Before the stripe
 * locks, concurrent memcpy()s could mix generations inside a block. */
static void test_ram_block_atomic(void **state)
{
	struct bkt_ctx *c = *state;
	struct ram_writer w = { .bk = c->bk, .off = 65536 - 32768, .len = 65536, .rounds = 3000 };
	uint32_t lbs = 1u << nvmfd_bk_lba_shift(c->bk);
	uint64_t reads = 0;
	pthread_t th;

	w.buf = malloc(w.len);
	assert_non_null(w.buf);
	assert_int_equal(pthread_create(&th, NULL, ram_writer_main, &w), 0);
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) || reads < 2) {
		struct bkt_io t;
		const uint8_t *d;
		bool lend = reads & 1;

		bkt_init_io(&t, NVMFD_BK_READ, w.off, w.len, c->rbuf);
		t.io.lend = lend;
		assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
		bkt_wait_count(c->ring, &t.ncb, 1);
		assert_int_equal(t.res, (int)w.len);
		d = lend ? t.io.lent : c->rbuf;
		assert_non_null(d);
		if (lend)
			nvmfd_bk_lent_lock(c->bk, d, w.len);
		for (uint32_t b = 0; b < w.len; b += lbs)
			for (uint32_t i = 1; i < lbs; i++)
				if (d[b + i] != d[b]) {
					fail_msg("read %" PRIu64 ": block at +%u mixes generations %u and %u",
						 reads, b, d[b], d[b + i]);
				}
		if (lend)
			nvmfd_bk_lent_unlock(c->bk, d, w.len);
		reads++;
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	free(w.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ram_geometry),
		BKT_GENERIC_TESTS(setup_ram),
		BKT_GENERIC_TESTS(setup_ram_4k),
		cmocka_unit_test_setup_teardown(test_ram_fresh_and_4k, setup_ram_4k, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_deferred, setup_ram, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_lend, setup_ram, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_lent_digest, setup_ram, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_lent_digest, setup_ram_4k, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_lent_lock_holds_writes, setup_ram, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_block_atomic, setup_ram, bkt_teardown),
		cmocka_unit_test_setup_teardown(test_ram_block_atomic, setup_ram_4k, bkt_teardown),
	};

	return cmocka_run_group_tests_name("backend-ram", tests, NULL, NULL);
}
