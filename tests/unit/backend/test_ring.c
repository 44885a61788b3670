// SPDX-License-Identifier: MIT
/* test_ring.c - completion ring life cycle, arguments, IOPOLL fallback,
 * shared ring across backends, aligned buffers. */
#include "bk_test.h"

static void test_ring_create_args(void **state)
{
	struct nvmfd_bk_ring *ring = (struct nvmfd_bk_ring *)1;
	struct nvmfd_bk_ring *r2 = NULL;
	struct nvmfd_bk_ring_stats st;

	assert_int_equal(nvmfd_bk_ring_create(0, false, &ring), -EINVAL);
	assert_int_equal(nvmfd_bk_ring_create(65536, false, &ring), -EINVAL);
	assert_int_equal(nvmfd_bk_ring_create(8, false, NULL), -EINVAL);

	ring = bkt_ring(1, false);
	r2 = bkt_ring(128, true); /* IOPOLL is optional: creation must work */
	assert_true(nvmfd_bk_ring_event_fd(ring) >= 0);
	assert_true(nvmfd_bk_ring_event_fd(r2) >= 0);
	assert_int_not_equal(nvmfd_bk_ring_event_fd(ring), nvmfd_bk_ring_event_fd(r2));
	assert_int_equal(nvmfd_bk_ring_inflight(ring), 0);
	nvmfd_bk_ring_get_stats(ring, &st);
	assert_int_equal(st.submitted, 0);
	assert_int_equal(st.completions, 0);
	assert_int_equal(st.reap_calls, 0);
	assert_int_equal(st.reap_events, 0);
	/* Nothing queued: flush and reap are no-ops. */
	assert_int_equal(nvmfd_bk_ring_flush(ring), 0);
	assert_int_equal(nvmfd_bk_ring_reap(ring, 16), 0);
	assert_int_equal(nvmfd_bk_ring_reap(r2, 16), 0);
	nvmfd_bk_ring_destroy(&ring);
	assert_null(ring);
	nvmfd_bk_ring_destroy(&ring); /* NULL: no-op */
	nvmfd_bk_ring_destroy(NULL);
	nvmfd_bk_ring_destroy(&r2);
	assert_null(r2);
}

static void test_ring_depth_one(void **state)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_RAM, .size = 1 << 20 };
	struct nvmfd_bk_ring *ring = bkt_ring(1, false);
	struct nvmfd_bk *bk = NULL;
	uint8_t buf[512];
	struct bkt_io a, b;

	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	bkt_init_io(&a, NVMFD_BK_READ, 0, 512, buf);
	bkt_init_io(&b, NVMFD_BK_READ, 512, 512, buf);
	assert_int_equal(nvmfd_bk_submit(ring, bk, &a.io), 0);
	assert_int_equal(nvmfd_bk_submit(ring, bk, &b.io), -EBUSY);
	assert_int_equal(nvmfd_bk_submit(NULL, bk, &b.io), -EINVAL);
	assert_int_equal(nvmfd_bk_submit(ring, NULL, &b.io), -EINVAL);
	assert_int_equal(nvmfd_bk_submit(ring, bk, NULL), -EINVAL);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 1);
	bkt_wait_count(ring, &a.ncb, 1);
	assert_int_equal(a.res, 512);
	assert_int_equal(nvmfd_bk_submit(ring, bk, &b.io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 1);
	bkt_wait_count(ring, &b.ncb, 1);
	assert_int_equal(b.res, 512);
	assert_int_equal(nvmfd_bk_close(&bk), 0);
	nvmfd_bk_ring_destroy(&ring);
}

/* A 1 MiB file backend @name in a new temporary directory of @c (c->bk)
 * and a 1 MiB RAM backend (*@ram). */
static void open_file_and_ram(struct bkt_ctx *c, const char *name, struct nvmfd_bk **ram)
{
	struct nvmfd_bk_opts ro = { .type = NVMFD_BK_RAM, .size = 1 << 20 };

	snprintf(c->dir, sizeof(c->dir), "/tmp/nvmfd-bk-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->path, sizeof(c->path), "%s/%s", c->dir, name);
	c->opts.type = NVMFD_BK_FILE;
	c->opts.path = c->path;
	c->opts.size = 1 << 20;
	assert_int_equal(nvmfd_bk_open(&c->opts, &c->bk), 0);
	assert_int_equal(nvmfd_bk_open(&ro, ram), 0);
}

/* One ring serving a file and a RAM backend at once (--cq-pool shared),
 * on a ring created with iopoll: files never use the IOPOLL ring. */
static void test_ring_shared(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct nvmfd_bk_ring *ring = bkt_ring(16, true);
	struct nvmfd_bk *ram = NULL;
	struct bkt_io t[4];
	int ncb = 0;

	open_file_and_ram(c, "shared.img", &ram);

	bkt_pattern(c->wbuf, 8192, 4);
	bkt_init_io(&t[0], NVMFD_BK_WRITE, 0, 4096, c->wbuf);
	bkt_init_io(&t[1], NVMFD_BK_WRITE, 0, 4096, c->wbuf + 4096);
	assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[0].io), 0);
	assert_int_equal(nvmfd_bk_submit(ring, ram, &t[1].io), 0);
	assert_int_equal(nvmfd_bk_ring_inflight(ring), 2);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 2);
	while (ncb < 2) {
		struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(ring), .events = POLLIN };

		if (nvmfd_bk_ring_reap(ring, UINT_MAX) == 0)
			assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
		ncb = t[0].ncb + t[1].ncb;
	}
	bkt_init_io(&t[2], NVMFD_BK_READ, 0, 4096, c->rbuf);
	bkt_init_io(&t[3], NVMFD_BK_READ, 0, 4096, c->rbuf + 4096);
	assert_int_equal(nvmfd_bk_submit(ring, c->bk, &t[2].io), 0);
	assert_int_equal(nvmfd_bk_submit(ring, ram, &t[3].io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 2);
	while (ncb < 4) {
		struct pollfd pfd = { .fd = nvmfd_bk_ring_event_fd(ring), .events = POLLIN };

		if (nvmfd_bk_ring_reap(ring, UINT_MAX) == 0)
			assert_int_equal(poll(&pfd, 1, BKT_HANG_MS), 1);
		ncb = t[0].ncb + t[1].ncb + t[2].ncb + t[3].ncb;
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(t[i].res, 4096);
	assert_memory_equal(c->rbuf, c->wbuf, 8192);
	assert_int_equal(nvmfd_bk_close(&ram), 0);
	nvmfd_bk_ring_destroy(&ring);
	*state = c;
	bkt_teardown(state);
}

/* Destroying a ring with ios in flight (queued, submitted, and local) waits
 * for the kernel and runs no callback. */
static void test_ring_destroy_inflight(void **state)
{
	struct bkt_ctx *c = bkt_ctx_new();
	struct nvmfd_bk *ram = NULL;
	struct bkt_io t[3];

	*state = c;
	open_file_and_ram(c, "d.img", &ram);
	bkt_pattern(c->wbuf, 65536, 8);
	bkt_init_io(&t[0], NVMFD_BK_WRITE, 0, 65536, c->wbuf);
	bkt_init_io(&t[1], NVMFD_BK_WRITE, 65536, 65536, c->wbuf);
	bkt_init_io(&t[2], NVMFD_BK_WRITE, 0, 4096, c->wbuf);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t[0].io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(c->ring), 1);
	assert_int_equal(nvmfd_bk_submit(c->ring, c->bk, &t[1].io), 0);
	assert_int_equal(nvmfd_bk_submit(c->ring, ram, &t[2].io), 0);
	assert_int_equal(nvmfd_bk_ring_inflight(c->ring), 3);
	nvmfd_bk_ring_destroy(&c->ring);
	assert_null(c->ring);
	for (int i = 0; i < 3; i++)
		assert_int_equal(t[i].ncb, 0);
	/* Both file writes reached the file. */
	c->ring = bkt_ring(8, false);
	assert_int_equal(bkt_do(c, NVMFD_BK_READ, 0, 131072, c->rbuf, false), 131072);
	assert_memory_equal(c->rbuf, c->wbuf, 65536);
	assert_memory_equal(c->rbuf + 65536, c->wbuf, 65536);
	assert_int_equal(nvmfd_bk_close(&ram), 0);
	bkt_teardown(state);
}

/* nvmfd_bk_ring_set_route(): a shared ring's reaper hands completions to a
 * router (which links them on io->next) instead of running io->cb. */
struct route_log {
	int calls;
	struct nvmfd_bk_io *list; /* routed ios, newest first */
};

static void route_fn(void *arg, struct nvmfd_bk_io *io, int res)
{
	struct route_log *log = arg;

	assert_int_equal(io->res, res);
	log->calls++;
	io->next = log->list;
	log->list = io;
}

static void test_ring_route(void **state)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_RAM, .size = 1 << 20 };
	struct nvmfd_bk_ring *ring = bkt_ring(8, false);
	struct route_log log = { 0, NULL };
	struct nvmfd_bk *bk = NULL;
	struct nvmfd_bk_ring_stats st;
	static uint8_t buf[3][512];
	struct bkt_io t[3];
	int n = 0;

	(void)state;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	nvmfd_bk_ring_set_route(ring, route_fn, &log);
	for (int i = 0; i < 3; i++) {
		bkt_init_io(&t[i], NVMFD_BK_READ, (uint64_t)i * 512, 512, buf[i]);
		assert_int_equal(nvmfd_bk_submit(ring, bk, &t[i].io), 0);
	}
	assert_int_equal(nvmfd_bk_ring_flush(ring), 3);
	for (int i = 0; i < 100 && n < 3; i++)
		n += nvmfd_bk_ring_reap(ring, 16);
	assert_int_equal(n, 3);
	assert_int_equal(log.calls, 3);
	assert_int_equal(nvmfd_bk_ring_inflight(ring), 0);
	nvmfd_bk_ring_get_stats(ring, &st);
	assert_int_equal(st.completions, 3);
	/* routed in completion order, callbacks not run; the router calls them */
	for (int i = 2; i >= 0; i--) {
		struct nvmfd_bk_io *io = log.list;

		assert_ptr_equal(io, &t[i].io);
		assert_int_equal(t[i].ncb, 0);
		log.list = io->next;
		io->cb(io, io->res);
		assert_int_equal(t[i].ncb, 1);
		assert_int_equal(t[i].res, 512);
	}
	/* NULL restores direct callbacks */
	nvmfd_bk_ring_set_route(ring, NULL, NULL);
	bkt_init_io(&t[0], NVMFD_BK_READ, 0, 512, buf[0]);
	assert_int_equal(nvmfd_bk_submit(ring, bk, &t[0].io), 0);
	assert_int_equal(nvmfd_bk_ring_flush(ring), 1);
	bkt_wait_count(ring, &t[0].ncb, 1);
	assert_int_equal(log.calls, 3);
	nvmfd_bk_ring_destroy(&ring);
	assert_int_equal(nvmfd_bk_close(&bk), 0);
}

static void test_buf_alloc(void **state)
{
	void *p = nvmfd_bk_buf_alloc(512);

	assert_non_null(p);
	assert_int_equal((uintptr_t)p & 4095, 0);
	memset(p, 1, 512);
	free(p);
	p = nvmfd_bk_buf_alloc(3 << 20);
	assert_non_null(p);
	assert_int_equal((uintptr_t)p & 4095, 0);
	free(p);
	assert_null(nvmfd_bk_buf_alloc(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_create_args),
		cmocka_unit_test(test_ring_depth_one),
		cmocka_unit_test(test_ring_shared),
		cmocka_unit_test(test_ring_destroy_inflight),
		cmocka_unit_test(test_ring_route),
		cmocka_unit_test(test_buf_alloc),
	};

	return cmocka_run_group_tests_name("backend-ring", tests, NULL, NULL);
}
