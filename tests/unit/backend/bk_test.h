/* SPDX-License-Identifier: MIT */
/*
 * bk_test.h - shared helpers and backend-independent test bodies for the
 * backend unit tests (test_file.c, test_ram.c, test_null.c, test_bdev.c).
 *
 * Each test binary opens its backend in a cmocka setup function that fills
 * a struct bkt_ctx; the bodies below then run the same checks against any
 * backend. Waiting for completions uses poll() on the ring's event fd with a
 * generous hang guard (BKT_HANG_MS); nothing asserts on timing.
 */
#ifndef NVMFD_TESTS_BK_TEST_H
#define NVMFD_TESTS_BK_TEST_H

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal/backend.h"

#define BKT_HANG_MS 20000
#define BKT_MAX_LEN (1024u * 1024u)
#define BKT_SIZE (8ull * 1024 * 1024)

struct bkt_ctx {
	struct nvmfd_bk_ring *ring;
	struct nvmfd_bk *bk;
	struct nvmfd_bk_opts opts;
	char dir[128];
	char path[192];
	bool zero_reads; /* null backend: reads always return zeroes */
	bool skip; /* setup found the variant unsupported (e.g. O_DIRECT) */
	uint8_t *wbuf;
	uint8_t *rbuf;
};

struct bkt_io {
	struct nvmfd_bk_io io;
	int ncb; /* callbacks seen */
	int res;
};

static inline void bkt_cb(struct nvmfd_bk_io *io, int res)
{
	struct bkt_io *t = (struct bkt_io *)((char *)io - offsetof(struct bkt_io, io));

	assert_int_equal(io->res, res);
	t->ncb++;
	t->res = res;
}

/* Create a ring or exit 77 when io_uring is unavailable in this kernel. */
static inline struct nvmfd_bk_ring *bkt_ring(unsigned int depth, bool iopoll)
{
	struct nvmfd_bk_ring *ring = NULL;
	int rc = nvmfd_bk_ring_create(depth, iopoll, &ring);

	if (rc == -ENOSYS || rc == -EPERM) {
		fprintf(stderr, "io_uring unavailable (%d): skip\n", rc);
		exit(77);
	}
	assert_int_equal(rc, 0);
	assert_non_null(ring);
	return ring;
}

/* Reap until *@ncb reaches @want, sleeping in poll() on the event fd. */
static inline void bkt_wait_count(struct nvmfd_bk_ring *ring, const int *ncb, int want)
{
	struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(ring), .events = POLLIN };

	while (*ncb < want) {
		if (nvmfd_bk_ring_reap(ring, UINT_MAX) > 0)
			continue;
		if (*ncb >= want)
			break;
		assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
	}
}

static inline void bkt_init_io(struct bkt_io *t, enum nvmfd_bk_op op, uint64_t off, uint32_t len,
			       void *buf)
{
	memset(t, 0, sizeof(*t));
	t->io.op = op;
	t->io.offset = off;
	t->io.len = len;
	t->io.buf = buf;
	t->io.cb = bkt_cb;
	t->res = INT_MIN;
}

/* Submit one io, flush, wait for it; Return: its result. */
static inline int bkt_do(struct bkt_ctx *c, enum nvmfd_bk_op op, uint64_t off, uint32_t len,
			 void *buf, bool fua)
{
	struct bkt_io t;

	bkt_init_io(&t, op, off, len, buf);
	t.io.fua = fua;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	assert_true(nvmfd_bk_ring_flush(c->ring) >= 0);
	bkt_wait_count(c->ring, &t.ncb, 1);
	assert_int_equal(t.ncb, 1);
	return t.res;
}

static inline void bkt_pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 9) * 13u + 1u);
}

static inline bool bkt_is_zero(const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Common part of a setup: ring (depth 64) and buffers; the caller opens. */
static inline struct bkt_ctx *bkt_ctx_new(void)
{
	struct bkt_ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->ring = bkt_ring(64, false);
	c->wbuf = nvmfd_bk_buf_alloc(BKT_MAX_LEN);
	c->rbuf = nvmfd_bk_buf_alloc(BKT_MAX_LEN);
	assert_non_null(c->wbuf);
	assert_non_null(c->rbuf);
	return c;
}

static inline int bkt_teardown(void **state)
{
	struct bkt_ctx *c = *state;

	if (!c)
		return 0;
	if (c->bk) {
		assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 0);
		assert_int_equal(nvmfd_bk_close(&c->bk), 0);
		assert_null(c->bk);
	}
	nvmfd_bk_ring_destroy(&c->ring);
	assert_null(c->ring);
	if (c->path[0])
		unlink(c->path);
	if (c->dir[0])
		rmdir(c->dir);
	free(c->wbuf);
	free(c->rbuf);
	free(c);
	*state = NULL;
	return 0;
}

#define BKT_SKIP_IF(c)                  \
	do {                            \
		if ((c)->skip)          \
			skip();         \
	} while (0)

/* Write patterns at several offsets/lengths (512 B .. 1 MiB), read back. */
static inline void bkt_test_rw(void **state)
{
	static const uint32_t lens[] = { 512, 1024, 4096, 8192, 65536, 131072, 1048576 };
	struct bkt_ctx *c = *state;
	uint64_t size, lbs;
	uint32_t seed = 1;

	BKT_SKIP_IF(c);
	size = nvmfd_bk_size(c->bk);
	lbs = 1ull << nvmfd_bk_lba_shift(c->bk);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];
		uint64_t offs[] = { 0, lbs, 4096 * 5 + lbs, size / 2 + lbs, size - len };

		if (len % lbs)
			continue;
		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			bkt_pattern(c->wbuf, len, seed++);
			memset(c->rbuf, 0xa5, len);
			assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, offs[j], len, c->wbuf, j == 1),
					 (int)len);
			assert_int_equal(bkt_do(c, NVMFD_BK_READ, offs[j], len, c->rbuf, false),
					 (int)len);
			if (c->zero_reads)
				assert_true(bkt_is_zero(c->rbuf, len));
			else
				assert_memory_equal(c->rbuf, c->wbuf, len);
		}
	}
	/* Neighbours are untouched by a small write in between. */
	if (!c->zero_reads) {
		bkt_pattern(c->wbuf, 3 * 4096, 77);
		assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 0, 3 * 4096, c->wbuf, false), 3 * 4096);
		memset(c->wbuf + 4096, 0x5a, 4096);
		assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 4096, 4096, c->wbuf + 4096, false), 4096);
		assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 3 * 4096, c->rbuf, false), 3 * 4096);
		assert_memory_equal(c->rbuf, c->wbuf, 3 * 4096);
	}
}

static inline void bkt_test_flush(void **state)
{
	struct bkt_ctx *c = *state;

	BKT_SKIP_IF(c);
	bkt_pattern(c->wbuf, 4096, 9);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 8192, 4096, c->wbuf, false), 4096);
	assert_int_equal(bkt_do(c, NVMFD_BK_FLUSH, 0, 0, NULL, false), 0);
	/* FUA write. */
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, 8192, 4096, c->wbuf, true), 4096);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 8192, 4096, c->rbuf, false), 4096);
	if (!c->zero_reads)
		assert_memory_equal(c->rbuf, c->wbuf, 4096);
}

/* Write a pattern, clear the middle with @op, check zeroes and the edges.
 * Return: the op's result (the caller decides about -EOPNOTSUPP). */
static inline int bkt_zero_check(struct bkt_ctx *c, enum nvmfd_bk_op op, uint64_t off, uint32_t len)
{
	uint64_t lbs = 1ull << nvmfd_bk_lba_shift(c->bk);
	uint32_t span = len + 2 * (uint32_t)lbs;
	int res;

	assert_true(span <= BKT_MAX_LEN);
	bkt_pattern(c->wbuf, span, 5);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, off - lbs, span, c->wbuf, false), (int)span);
	res = bkt_do(c, op, off, len, NULL, false);
	if (res < 0)
		return res;
	assert_int_equal(res, 0);
	memset(c->rbuf, 0xa5, span);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, off - lbs, span, c->rbuf, false), (int)span);
	assert_true(bkt_is_zero(c->rbuf + lbs, len));
	if (!c->zero_reads) {
		assert_memory_equal(c->rbuf, c->wbuf, lbs);
		assert_memory_equal(c->rbuf + lbs + len, c->wbuf + lbs + len, lbs);
	}
	return 0;
}

static inline void bkt_test_write_zeroes(void **state)
{
	struct bkt_ctx *c = *state;

	BKT_SKIP_IF(c);
	assert_int_equal(bkt_zero_check(c, NVMFD_BK_WRITE_ZEROES, 65536, 65536), 0);
	/* Larger than the zero-fill chunk (128 KiB) used by the fallback. */
	assert_int_equal(bkt_zero_check(c, NVMFD_BK_WRITE_ZEROES, 1 << 20, 512 * 1024), 0);
}

static inline void bkt_test_discard(void **state)
{
	struct bkt_ctx *c = *state;
	int res;

	BKT_SKIP_IF(c);
	res = bkt_zero_check(c, NVMFD_BK_DISCARD, 2 << 20, 256 * 1024);
	if (res == -EOPNOTSUPP)
		skip();
	assert_int_equal(res, 0);
}

/* Out of range ios complete with -ERANGE; malformed ones are refused. */
static inline void bkt_test_errors(void **state)
{
	struct bkt_ctx *c = *state;
	uint64_t size, lbs;
	struct bkt_io t;

	BKT_SKIP_IF(c);
	size = nvmfd_bk_size(c->bk);
	lbs = 1ull << nvmfd_bk_lba_shift(c->bk);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, size, (uint32_t)lbs, c->rbuf, false), -ERANGE);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE, size - lbs, 2 * (uint32_t)lbs, c->wbuf, false),
			 -ERANGE);
	assert_int_equal(bkt_do(c, NVMFD_BK_WRITE_ZEROES, size - lbs, 2 * (uint32_t)lbs, NULL, false),
			 -ERANGE);
	assert_int_equal(bkt_do(c, NVMFD_BK_DISCARD, UINT64_MAX - lbs + 1, (uint32_t)lbs, NULL, false),
			 -ERANGE);
	/* The last block is fine. */
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, size - lbs, (uint32_t)lbs, c->rbuf, false),
			 (int)lbs);

	bkt_init_io(&t, (enum nvmfd_bk_op)42, 0, (uint32_t)lbs, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_READ, lbs / 2, (uint32_t)lbs, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_READ, 0, (uint32_t)lbs + 1, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_READ, 0, 0x80000000u, c->rbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_WRITE, 0, (uint32_t)lbs, NULL);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	bkt_init_io(&t, NVMFD_BK_READ, 0, (uint32_t)lbs, c->rbuf);
	t.io.cb = NULL;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), -EINVAL);
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 0);
	assert_int_equal(t.ncb, 0);
}

/* depth ios fit, one more is -EBUSY until something is reaped. */
static inline void bkt_test_ring_full(void **state)
{
	struct bkt_ctx *c = *state;
	struct nvmfd_bk_ring *ring;
	struct bkt_io t[9];
	int ncb = 0;

	BKT_SKIP_IF(c);
	ring = bkt_ring(7, false); /* rounded up to 8 */
	for (int i = 0; i < 9; i++) {
		bkt_init_io(&t[i], NVMFD_BK_READ, (uint64_t)i * 4096, 4096, c->rbuf + i * 4096);
		if (i < 8)
			assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[i].io), 0);
	}
	assert_int_equal(nvmfd_bk_ring_inflight(ring), 8);
	assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[8].io), -EBUSY);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 8);
	assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[8].io), -EBUSY);
	while (ncb < 8) {
		struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(ring), .events = POLLIN };

		if (nvmfd_bk_ring_reap(ring, 3) == 0)
			assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
		ncb = 0;
		for (int i = 0; i < 8; i++)
			ncb += t[i].ncb;
		assert_int_equal(nvmfd_bk_ring_inflight(ring), 8 - ncb);
	}
	for (int i = 0; i < 8; i++) {
		assert_int_equal(t[i].ncb, 1);
		assert_int_equal(t[i].res, 4096);
	}
	assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[8].io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 1);
	bkt_wait_count(ring, &t[8].ncb, 1);
	assert_int_equal(t[8].res, 4096);
	assert_int_equal(nvmfd_bk_ring_inflight(ring), 0);
	nvmfd_bk_ring_destroy(&ring);
}

/* The event fd is quiet when idle, readable after a completion, and
 * cleared by the reap that delivers it. */
static inline void bkt_test_eventfd(void **state)
{
	struct bkt_ctx *c = *state;
	struct pollfd pfd;
	struct bkt_io t;

	BKT_SKIP_IF(c);
	pfd.fd = nvmfd_bk_ring_event_fd(c->ring);
	pfd.events = POLLIN;
	assert_true(pfd.fd >= 0);
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, UINT_MAX), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);

	bkt_pattern(c->wbuf, 4096, 3);
	bkt_init_io(&t, NVMFD_BK_WRITE, 4096, 4096, c->wbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t.io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(c->ring), 1);
	pfd.revents = 0;
	assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
	assert_true(pfd.revents & POLLIN);
	assert_int_equal(t.ncb, 0); /* callbacks run only from reap */
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, UINT_MAX), 1);
	assert_int_equal(t.ncb, 1);
	assert_int_equal(t.res, 4096);
	assert_int_equal(poll(&pfd, 1, 0), 0);
}

/* Counters follow the ios. */
static inline void bkt_test_stats(void **state)
{
	struct bkt_ctx *c = *state;
	struct nvmfd_bk_ring_stats s0, s1;
	struct bkt_io t[4];
	int ncb = 0;

	BKT_SKIP_IF(c);
	nvmfd_bk_ring_get_stats(c->ring, &s0);
	assert_int_equal(nvmfd_bk_ring_reap(c->ring, UINT_MAX), 0);
	nvmfd_bk_ring_get_stats(c->ring, &s1);
	assert_int_equal(s1.reap_calls, s0.reap_calls + 1);
	assert_int_equal(s1.reap_events, s0.reap_events);
	assert_int_equal(s1.completions, s0.completions);

	for (int i = 0; i < 4; i++) {
		bkt_init_io(&t[i], NVMFD_BK_READ, (uint64_t)i * 4096, 4096, c->rbuf + i * 4096);
		assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t[i].io), 0);
	}
	assert_int_equal(nvmfd_bk_ring_flush(c->ring), 4);
	while (ncb < 4) {
		struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(c->ring), .events = POLLIN };

		if (nvmfd_bk_ring_reap(c->ring, UINT_MAX) == 0)
			assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
		ncb = t[0].ncb + t[1].ncb + t[2].ncb + t[3].ncb;
	}
	nvmfd_bk_ring_get_stats(c->ring, &s0);
	assert_int_equal(s0.submitted, s1.submitted + 4);
	assert_int_equal(s0.completions, s1.completions + 4);
	assert_true(s0.reap_events >= s1.reap_events + 1);
	assert_true(s0.reap_events <= s1.reap_events + 4);
	assert_true(s0.reap_calls >= s1.reap_calls + 1);
	assert_true(s0.reap_events <= s0.reap_calls);
}

/* A callback may resubmit its own io (the target reuses command ios). */
struct bkt_chain {
	struct bkt_io t;
	struct bkt_ctx *c;
	int left;
};

static inline void bkt_chain_cb(struct nvmfd_bk_io *io, int res)
{
	struct bkt_chain *ch = (struct bkt_chain *)((char *)io - offsetof(struct bkt_chain, t.io));

	ch->t.ncb++;
	ch->t.res = res;
	if (res < 0 || --ch->left == 0)
		return;
	io->offset += 4096;
	assert_int_equal(nvmfd_bk_submit(ch->c->ring, ch->c->bk, io), 0);
	assert_true(nvmfd_bk_ring_flush(ch->c->ring) >= 0);
}

static inline void bkt_test_chain(void **state)
{
	struct bkt_ctx *c = *state;
	struct bkt_chain ch;

	BKT_SKIP_IF(c);
	bkt_init_io(&ch.t, NVMFD_BK_READ, 0, 4096, c->rbuf);
	ch.t.io.cb = bkt_chain_cb;
	ch.c = c;
	ch.left = 5;
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &ch.t.io), 0);
	assert_true(nvmfd_bk_ring_flush(c->ring) >= 0);
	bkt_wait_count(c->ring, &ch.t.ncb, 5);
	assert_int_equal(ch.t.ncb, 5);
	assert_int_equal(ch.t.res, 4096);
	assert_int_equal(ch.left, 0);
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 0);
}

/* The generic test list for one setup/teardown pair. */
#define BKT_GENERIC_TESTS(setup)                                                  \
	cmocka_unit_test_setup_teardown(bkt_test_rw, setup, bkt_teardown),        \
	cmocka_unit_test_setup_teardown(bkt_test_flush, setup, bkt_teardown),     \
	cmocka_unit_test_setup_teardown(bkt_test_write_zeroes, setup, bkt_teardown), \
	cmocka_unit_test_setup_teardown(bkt_test_discard, setup, bkt_teardown),   \
	cmocka_unit_test_setup_teardown(bkt_test_errors, setup, bkt_teardown),    \
	cmocka_unit_test_setup_teardown(bkt_test_ring_full, setup, bkt_teardown), \
	cmocka_unit_test_setup_teardown(bkt_test_eventfd, setup, bkt_teardown),   \
	cmocka_unit_test_setup_teardown(bkt_test_stats, setup, bkt_teardown),     \
	cmocka_unit_test_setup_teardown(bkt_test_chain, setup, bkt_teardown)

#endif /* NVMFD_TESTS_BK_TEST_H */
