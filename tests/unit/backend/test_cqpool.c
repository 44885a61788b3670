// SPDX-License-Identifier: MIT
/*
 * test_cqpool.c - completion pools without sockets: per-queue contexts and
 * shared per-CPU rings with their completion work, MPSC routing, notify,
 * peeking (backend completion polling), in-flight accounting, reference
 * counting of shared rings and the stats JSON. RAM backends; a real
 * runtime for the shared rings' completion work. Worker contexts
 * (nvmfd_cq_open_worker()): reads of a temporary file through a runtime's
 * worker ring, submitted from another thread and from a work item on the
 * ring's own pool, and closes with reads in flight (on a busy worker, and
 * on the ring's own worker).
 *
 * Waits are bounded (10 s) only to turn a hang into a failure; no
 * assertion depends on timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal/cqpool.h"
#include "internal/rt_ring.h"

#define WAIT_LIMIT_MS 10000
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))
#define NIO 32

struct tio {
	struct nvmfd_bk_io io;
	long done;
	int res;
	struct ctx *owner;
};

struct ctx {
	struct nvmfd_cq *cq;
	long notified;
	long delivered;
	long foreign; /* a callback of another context's io ran here */
};

static struct ctx *g_running; /* context whose poll runs callbacks now */

static void tio_cb(struct nvmfd_bk_io *io, int res)
{
	struct tio *t = (struct tio *)(void *)io;

	t->res = res;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	if (g_running && g_running != t->owner)
		g_running->foreign++;
	if (g_running)
		g_running->delivered++;
}

static void ctx_notify(void *arg)
{
	struct ctx *c = arg;

	__atomic_add_fetch(&c->notified, 1, __ATOMIC_RELEASE);
}

static struct nvmfd_bk *ram(void)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_RAM, .size = 1 << 20 };
	struct nvmfd_bk *bk;

	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	return bk;
}

static struct nvmfd_rt *rt_new(void)
{
	struct nvmfd_rt_opts o;
	struct nvmfd_rt *rt;

	nvmfd_rt_opts_init(&o);
	o.mode = NVMFD_RT_UNBOUND;
	o.scope = NVMFD_RT_SCOPE_SYSTEM;
	o.workers_per_pool = 1;
	assert_int_equal(nvmfd_rt_create(&o, &rt), 0);
	return rt;
}

static void tio_read(struct tio *t, struct ctx *c, void *buf, uint64_t off)
{
	memset(t, 0, sizeof(*t));
	t->io.op = NVMFD_BK_READ;
	t->io.offset = off;
	t->io.len = 512;
	t->io.buf = buf;
	t->io.cb = tio_cb;
	t->owner = c;
}

/* Poll @c until @n of its ios were delivered to it. */
static void poll_until(struct ctx *c, long n, bool peek)
{
	for (int ms = 0; c->delivered < n; ms++) {
		g_running = c;
		nvmfd_cq_poll(c->cq, peek, UINT32_MAX);
		g_running = NULL;
		if (c->delivered >= n)
			break;
		if (ms > WAIT_LIMIT_MS)
			fail_msg("timeout: %ld of %ld delivered", c->delivered, n);
		if (nvmfd_cq_event_fd(c->cq) >= 0) {
			struct pollfd p = { .fd = nvmfd_cq_event_fd(c->cq), .events = POLLIN };

			poll(&p, 1, 1);
		} else {
			usleep(1000);
		}
	}
}

static void test_per_queue(void **state)
{
	struct nvmfd_cq_pool_opts po = { 0 };
	struct nvmfd_cq_pool *pool;
	struct nvmfd_bk *bk = ram();
	static struct tio t[NIO];
	static char buf[NIO][512];
	struct ctx c = { 0 };
	struct nvmfd_cq_stats st, st2;
	long in_submit;
	json_object *js;

	(void)state;
	/* a per-queue pool needs no runtime */
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);
	assert_false(nvmfd_cq_pool_shared(pool));
	assert_int_equal(nvmfd_cq_open(pool, 0, 8, ctx_notify, &c, &c.cq), 0);
	assert_true(nvmfd_cq_event_fd(c.cq) >= 0);
	assert_int_equal(nvmfd_cq_ring_id(c.cq), -1);
	/* more ios than the depth: a full ring is flushed and reaped inside
	 * the submit, so every submit succeeds */
	for (int i = 0; i < NIO; i++) {
		tio_read(&t[i], &c, buf[i], (uint64_t)i * 512);
		g_running = &c;
		assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
		g_running = NULL;
	}
	in_submit = c.delivered;
	assert_true(nvmfd_cq_flush(c.cq) >= 0);
	poll_until(&c, NIO, false);
	assert_int_equal(nvmfd_cq_inflight(c.cq), 0);
	for (int i = 0; i < NIO; i++) {
		assert_int_equal(t[i].done, 1);
		assert_true(t[i].res >= 0);
	}
	assert_int_equal(c.notified, 0); /* per-queue: the owner watches the fd */
	/* the polls count what they delivered (the submits' own reaps of a
	 * full ring are not polls), as events when not peeking */
	nvmfd_cq_get_stats(c.cq, &st);
	assert_int_equal(st.completions, NIO - in_submit);
	assert_true(st.events >= 1 && st.events <= st.completions);
	assert_int_equal(st.peeks, 0);
	/* RAM completes inline: no event a shared ring could merge */
	assert_int_equal(st.cqe_events, 0);
	/* polling: the same reaps count as peeks */
	for (int i = 0; i < 4; i++) {
		tio_read(&t[i], &c, buf[i], 0);
		assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
	}
	assert_true(nvmfd_cq_flush(c.cq) >= 0);
	poll_until(&c, NIO + 4, true);
	nvmfd_cq_get_stats(c.cq, &st2);
	assert_int_equal(st2.completions, st.completions + 4);
	assert_int_equal(st2.events, st.events);
	assert_true(st2.peeks >= 1 && st2.peeks <= 4);
	assert_int_equal(st2.cqe_events, 0);
	nvmfd_cq_clear_event(c.cq);
	js = nvmfd_cq_pool_stats_json(pool);
	assert_int_equal(json_object_array_length(js), 0);
	json_object_put(js);
	nvmfd_cq_close(&c.cq);
	assert_null(c.cq);
	nvmfd_cq_pool_destroy(&pool);
	assert_null(pool);
	nvmfd_bk_close(&bk);
}

static void test_shared(void **state)
{
	struct nvmfd_cq_pool_opts po = { .shared = true };
	struct nvmfd_cq_pool *pool;
	struct nvmfd_rt *rt = rt_new();
	struct nvmfd_bk *bk = ram();
	static struct tio ta[NIO], tb[NIO];
	static char buf[2][NIO][512];
	struct ctx a = { 0 }, b = { 0 }, c = { 0 };
	json_object *js, *r, *v;

	(void)state;
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), -EINVAL);
	assert_int_equal(nvmfd_cq_pool_create(rt, &po, &pool), 0);
	assert_true(nvmfd_cq_pool_shared(pool));
	assert_int_equal(nvmfd_cq_open(pool, 0, 8, ctx_notify, &a, &a.cq), 0);
	assert_int_equal(nvmfd_cq_open(pool, 0, 8, ctx_notify, &b, &b.cq), 0);
	/* one ring per io_cpu, one event source: the owners watch nothing */
	assert_int_equal(nvmfd_cq_ring_id(a.cq), nvmfd_cq_ring_id(b.cq));
	assert_int_equal(nvmfd_cq_event_fd(a.cq), -1);
	assert_int_equal(nvmfd_cq_open(pool, 5, 8, ctx_notify, &c, &c.cq), 0);
	assert_int_not_equal(nvmfd_cq_ring_id(c.cq), nvmfd_cq_ring_id(a.cq));

	for (int i = 0; i < NIO; i++) {
		tio_read(&ta[i], &a, buf[0][i], (uint64_t)i * 512);
		tio_read(&tb[i], &b, buf[1][i], (uint64_t)i * 512);
		assert_int_equal(nvmfd_cq_submit(a.cq, bk, &ta[i].io), 0);
		assert_int_equal(nvmfd_cq_submit(b.cq, bk, &tb[i].io), 0);
	}
	assert_int_equal(nvmfd_cq_inflight(a.cq), NIO);
	assert_int_equal(nvmfd_cq_inflight(b.cq), NIO);
	assert_true(nvmfd_cq_flush(a.cq) >= 0);
	/* the ring's completion work reaps and routes; each owner is told and
	 * runs only its own callbacks */
	poll_until(&a, NIO, false);
	poll_until(&b, NIO, false);
	assert_true(__atomic_load_n(&a.notified, __ATOMIC_ACQUIRE) >= 1);
	assert_true(__atomic_load_n(&b.notified, __ATOMIC_ACQUIRE) >= 1);
	assert_int_equal(a.foreign, 0);
	assert_int_equal(b.foreign, 0);
	assert_int_equal(nvmfd_cq_inflight(a.cq), 0);
	assert_int_equal(nvmfd_cq_inflight(b.cq), 0);

	/* peeking: a polling owner reaps the shared ring itself */
	a.delivered = b.delivered = 0;
	for (int i = 0; i < 4; i++) {
		tio_read(&ta[i], &a, buf[0][i], 0);
		assert_int_equal(nvmfd_cq_submit(a.cq, bk, &ta[i].io), 0);
	}
	assert_true(nvmfd_cq_flush(a.cq) >= 0);
	poll_until(&a, 4, true);
	assert_int_equal(a.foreign, 0);

	js = nvmfd_cq_pool_stats_json(pool);
	assert_int_equal(json_object_array_length(js), 2);
	for (size_t i = 0; i < 2; i++) {
		r = json_object_array_get_idx(js, i);
		assert_true(json_object_object_get_ex(r, "id", &v));
		if (json_object_get_int(v) != nvmfd_cq_ring_id(a.cq))
			continue;
		assert_true(json_object_object_get_ex(r, "users", &v));
		assert_int_equal(json_object_get_int(v), 2);
		assert_true(json_object_object_get_ex(r, "completions", &v));
		{
			long work = json_object_get_int64(v);

			assert_true(json_object_object_get_ex(r, "peek_completions", &v));
			assert_int_equal(work + json_object_get_int64(v), 2 * NIO + 4);
		}
	}
	json_object_put(js);

	/* closing one context keeps the ring for the other */
	nvmfd_cq_close(&b.cq);
	js = nvmfd_cq_pool_stats_json(pool);
	assert_int_equal(json_object_array_length(js), 2);
	json_object_put(js);
	nvmfd_cq_close(&c.cq);
	js = nvmfd_cq_pool_stats_json(pool);
	assert_int_equal(json_object_array_length(js), 1);
	json_object_put(js);
	nvmfd_cq_close(&a.cq);
	js = nvmfd_cq_pool_stats_json(pool);
	assert_int_equal(json_object_array_length(js), 0);
	json_object_put(js);
	nvmfd_cq_pool_destroy(&pool);
	nvmfd_rt_destroy(rt);
	nvmfd_bk_close(&bk);
}

/* --exec auto's pool: per-queue by default, a shared ring on request
 * (nvmfd_cq_open_src()); both kinds deliver in one pool. */
static void test_mixed(void **state)
{
	struct nvmfd_cq_pool_opts po = { .shared = false };
	struct nvmfd_cq_pool *pool;
	struct nvmfd_rt *rt = rt_new();
	struct nvmfd_bk *bk = ram();
	static struct tio ta[NIO], tb[NIO];
	static char buf[2][NIO][512];
	struct ctx a = { 0 }, b = { 0 };

	(void)state;
	/* without a runtime: no shared ring to give */
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);
	assert_false(nvmfd_cq_pool_can_share(pool));
	assert_int_equal(nvmfd_cq_open_src(pool, 0, 8, NVMFD_CQ_SRC_SHARED, ctx_notify, &a, &a.cq),
			 -EINVAL);
	nvmfd_cq_pool_destroy(&pool);

	assert_int_equal(nvmfd_cq_pool_create(rt, &po, &pool), 0);
	assert_false(nvmfd_cq_pool_shared(pool));
	assert_true(nvmfd_cq_pool_can_share(pool));
	assert_int_equal(nvmfd_cq_open_src(pool, 0, NIO, NVMFD_CQ_SRC_QUEUE, ctx_notify, &a, &a.cq),
			 0);
	assert_int_equal(nvmfd_cq_open_src(pool, 0, 8, NVMFD_CQ_SRC_SHARED, ctx_notify, &b, &b.cq),
			 0);
	assert_int_equal(nvmfd_cq_ring_id(a.cq), -1);
	assert_true(nvmfd_cq_event_fd(a.cq) >= 0);
	assert_true(nvmfd_cq_ring_id(b.cq) >= 0);
	assert_int_equal(nvmfd_cq_event_fd(b.cq), -1);
	for (int i = 0; i < NIO; i++) {
		tio_read(&ta[i], &a, buf[0][i], (uint64_t)i * 512);
		tio_read(&tb[i], &b, buf[1][i], (uint64_t)i * 512);
		assert_int_equal(nvmfd_cq_submit(a.cq, bk, &ta[i].io), 0);
		assert_int_equal(nvmfd_cq_submit(b.cq, bk, &tb[i].io), 0);
	}
	assert_true(nvmfd_cq_flush(a.cq) >= 0);
	assert_true(nvmfd_cq_flush(b.cq) >= 0);
	poll_until(&a, NIO, false);
	poll_until(&b, NIO, false);
	assert_int_equal(a.foreign + b.foreign, 0);
	nvmfd_cq_close(&a.cq);
	nvmfd_cq_close(&b.cq);
	nvmfd_cq_pool_destroy(&pool);
	nvmfd_rt_destroy(rt);
	nvmfd_bk_close(&bk);
}

/* ---- worker contexts ---- */

#define WBLK 4096u
#define WNIO 64 /* a full staging array of the ext ring at depth 64 */
#define WFILE_BLOCKS 256u

static uint8_t wpat(unsigned int blk, unsigned int i)
{
	return (uint8_t)(blk * 7u + i / 512u + 1u);
}

/* A file of WFILE_BLOCKS patterned blocks, opened as a FILE backend. */
static struct nvmfd_bk *wfile(char *path, size_t cap)
{
	struct nvmfd_bk_opts o = { .type = NVMFD_BK_FILE, .lba_shift = 12 };
	static uint8_t blk[WBLK];
	struct nvmfd_bk *bk;
	int fd;

	snprintf(path, cap, "/tmp/nvmfd-cqworker-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	for (unsigned int b = 0; b < WFILE_BLOCKS; b++) {
		for (unsigned int i = 0; i < WBLK; i++)
			blk[i] = wpat(b, i);
		assert_int_equal(pwrite(fd, blk, WBLK, (off_t)b * WBLK), (ssize_t)WBLK);
	}
	close(fd);
	o.path = path;
	assert_int_equal(nvmfd_bk_open(&o, &bk), 0);
	return bk;
}

static void wread(struct tio *t, struct ctx *c, void *buf, unsigned int blk)
{
	memset(t, 0, sizeof(*t));
	t->io.op = NVMFD_BK_READ;
	t->io.offset = (uint64_t)blk * WBLK;
	t->io.len = WBLK;
	t->io.buf = buf;
	t->io.cb = tio_cb;
	t->owner = c;
}

static void wcheck(const uint8_t *buf, unsigned int blk)
{
	for (unsigned int i = 0; i < WBLK; i++)
		if (buf[i] != wpat(blk, i))
			fail_msg("block %u byte %u: %u, want %u", blk, i, buf[i], wpat(blk, i));
}

/*
 * A per-queue context on a file namespace: its reads complete as io_uring
 * CQEs, so the polls that deliver them are cqe_events as well as events
 * (the per-queue test shows a RAM namespace's are not). --exec auto's
 * completion-source choice counts only these (regression: counting RAM's
 * inline completions gave RAM queues shared rings, session 26).
 */
static void test_per_queue_cqe_events(void **state)
{
	struct nvmfd_cq_pool_opts po = { 0 };
	struct nvmfd_cq_pool *pool;
	static uint8_t buf[8][WBLK];
	static struct tio t[8];
	struct nvmfd_cq_stats st;
	struct ctx c = { 0 };
	struct nvmfd_bk *bk;
	char path[64];

	(void)state;
	bk = wfile(path, sizeof(path));
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);
	assert_int_equal(nvmfd_cq_open(pool, 0, 8, ctx_notify, &c, &c.cq), 0);
	for (unsigned int i = 0; i < 8; i++) {
		wread(&t[i], &c, buf[i], i * 3);
		assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
	}
	assert_true(nvmfd_cq_flush(c.cq) >= 0);
	poll_until(&c, 8, false);
	for (unsigned int i = 0; i < 8; i++) {
		assert_int_equal(t[i].res, (int)WBLK);
		wcheck(buf[i], i * 3);
	}
	nvmfd_cq_get_stats(c.cq, &st);
	assert_int_equal(st.completions, 8);
	assert_true(st.events >= 1);
	assert_true(st.cqe_events >= 1 && st.cqe_events <= st.events + st.peeks);
	nvmfd_cq_close(&c.cq);
	nvmfd_cq_pool_destroy(&pool);
	nvmfd_bk_close(&bk);
	unlink(path);
}

static struct nvmfd_rt *rt_ring_new(struct nvmfd_rt_ring **ring)
{
	struct nvmfd_rt_opts o;
	struct nvmfd_rt *rt;

	nvmfd_rt_opts_init(&o);
	o.uring = true;
	o.workers_per_pool = 1;
	o.name = "cqwt";
	assert_int_equal(nvmfd_rt_create(&o, &rt), 0);
	*ring = nvmfd_rt_ring_of(rt, -1);
	assert_non_null(*ring);
	return rt;
}

/* Submitted from this thread (an "other thread" of the ring: flush
 * submits at once); the pool's worker reaps and notifies. */
static void test_worker_other_thread(void **state)
{
	struct nvmfd_cq_pool_opts po = { 0 };
	struct nvmfd_rt_ring_stats r0, r1;
	struct nvmfd_cq_stats cs;
	struct nvmfd_cq_pool *pool;
	struct nvmfd_rt_ring *ring;
	struct nvmfd_rt *rt = rt_ring_new(&ring);
	static struct tio t[WNIO];
	static uint8_t buf[WNIO][WBLK];
	struct ctx c = { 0 };
	char path[64];
	struct nvmfd_bk *bk = wfile(path, sizeof(path));

	(void)state;
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);
	assert_int_equal(nvmfd_cq_open_worker(pool, NULL, WNIO, ctx_notify, &c, &c.cq), -EINVAL);
	assert_int_equal(nvmfd_cq_open_src(pool, 0, WNIO, NVMFD_CQ_SRC_WORKER, ctx_notify, &c,
					   &c.cq),
			 -EINVAL);
	assert_int_equal(nvmfd_cq_open_worker(pool, ring, WNIO, ctx_notify, &c, &c.cq), 0);
	assert_int_equal(nvmfd_cq_source(c.cq), NVMFD_CQ_SRC_WORKER);
	assert_int_equal(nvmfd_cq_event_fd(c.cq), -1);
	assert_int_equal(nvmfd_cq_ring_id(c.cq), -1);
	nvmfd_rt_ring_get_stats(ring, &r0);
	for (int round = 0; round < 4; round++) {
		c.delivered = 0;
		for (unsigned int i = 0; i < WNIO; i++) {
			memset(buf[i], 0, WBLK);
			wread(&t[i], &c, buf[i], (i * 5u + (unsigned int)round) % WFILE_BLOCKS);
			assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
		}
		assert_int_equal(nvmfd_cq_inflight(c.cq), WNIO);
		assert_true(nvmfd_cq_flush(c.cq) >= 0);
		poll_until(&c, WNIO, false);
		assert_int_equal(nvmfd_cq_inflight(c.cq), 0);
		for (unsigned int i = 0; i < WNIO; i++) {
			assert_int_equal(t[i].res, (int)WBLK);
			wcheck(buf[i], (i * 5u + (unsigned int)round) % WFILE_BLOCKS);
		}
	}
	assert_true(__atomic_load_n(&c.notified, __ATOMIC_ACQUIRE) >= 1);
	nvmfd_cq_get_stats(c.cq, &cs);
	assert_int_equal(cs.completions, 4 * WNIO);
	/* the reads were SQEs of the worker ring, and their CQEs its CQEs */
	nvmfd_rt_ring_get_stats(ring, &r1);
	assert_true(r1.sqes - r0.sqes >= 4 * WNIO);
	assert_true(r1.cqes - r0.cqes >= 4 * WNIO);

	/* a range beyond the file completes locally, the same way */
	c.delivered = 0;
	wread(&t[0], &c, buf[0], WFILE_BLOCKS);
	assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[0].io), 0);
	assert_true(nvmfd_cq_flush(c.cq) >= 0);
	poll_until(&c, 1, false);
	assert_int_equal(t[0].res, -ERANGE);

	/* polling (peek) reaps the worker ring itself */
	c.delivered = 0;
	wread(&t[0], &c, buf[0], 3);
	assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[0].io), 0);
	assert_true(nvmfd_cq_flush(c.cq) >= 0);
	poll_until(&c, 1, true);
	assert_int_equal(t[0].res, (int)WBLK);
	wcheck(buf[0], 3);

	nvmfd_cq_close(&c.cq);
	assert_null(c.cq);
	nvmfd_cq_pool_destroy(&pool);
	nvmfd_rt_destroy(rt);
	nvmfd_bk_close(&bk);
	unlink(path);
}

/* A queue-like work item on the ring's own pool: it submits and flushes
 * (lazily: the worker's next io_uring_enter() carries the SQEs), its
 * notify queues it, it polls; with close_inline it closes its context
 * with the reads still in flight, from the worker (which then makes no
 * enter of its own: the close must submit and reap itself). */
struct wq {
	struct nvmfd_work work;
	struct ctx c;
	struct nvmfd_bk *bk;
	struct tio t[WNIO];
	uint8_t buf[WNIO][WBLK];
	bool close_inline;
	int submitted;
	int done; /* atomic */
	long runs;
};

static void wq_notify(void *arg)
{
	struct wq *w = arg;

	__atomic_add_fetch(&w->c.notified, 1, __ATOMIC_RELEASE);
	nvmfd_rt_queue_work(&w->work);
}

static void wq_fn(struct nvmfd_work *work)
{
	struct wq *w = container_of(work, struct wq, work);

	w->runs++;
	if (!w->submitted) {
		for (unsigned int i = 0; i < WNIO; i++) {
			wread(&w->t[i], &w->c, w->buf[i], (i * 3u + 1u) % WFILE_BLOCKS);
			assert_int_equal(nvmfd_cq_submit(w->c.cq, w->bk, &w->t[i].io), 0);
		}
		w->submitted = 1;
		assert_true(nvmfd_cq_flush(w->c.cq) >= 0);
		if (w->close_inline) {
			nvmfd_cq_close(&w->c.cq);
			__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
		}
		return;
	}
	if (!w->c.cq)
		return;
	g_running = &w->c;
	nvmfd_cq_poll(w->c.cq, false, UINT32_MAX);
	g_running = NULL;
	if (w->c.delivered == WNIO)
		__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void wq_wait(struct wq *w)
{
	for (int ms = 0; !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE); ms++) {
		if (ms > WAIT_LIMIT_MS)
			fail_msg("timeout: %ld of %d delivered", w->c.delivered, WNIO);
		usleep(1000);
	}
}

static void test_worker_own_pool(void **state)
{
	struct nvmfd_cq_pool_opts po = { 0 };
	struct nvmfd_cq_pool *pool;
	struct nvmfd_rt_ring *ring;
	struct nvmfd_rt *rt = rt_ring_new(&ring);
	struct wq *w = calloc(1, sizeof(*w));
	char path[64];

	(void)state;
	assert_non_null(w);
	w->bk = wfile(path, sizeof(path));
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);

	/* all delivered to the work item, data intact */
	assert_int_equal(nvmfd_cq_open_worker(pool, ring, WNIO, wq_notify, w, &w->c.cq), 0);
	nvmfd_work_init(&w->work, rt, wq_fn, -1);
	assert_true(nvmfd_rt_queue_work(&w->work));
	wq_wait(w);
	nvmfd_rt_work_cancel_sync(&w->work);
	assert_int_equal(w->c.foreign, 0);
	for (unsigned int i = 0; i < WNIO; i++) {
		assert_int_equal(w->t[i].res, (int)WBLK);
		wcheck(w->buf[i], (i * 3u + 1u) % WFILE_BLOCKS);
	}
	assert_true(__atomic_load_n(&w->c.notified, __ATOMIC_ACQUIRE) >= 1);
	nvmfd_cq_close(&w->c.cq);

	/* closed on the ring's own worker right after the lazy flush: the
	 * SQEs were not even submitted; no callback runs, nothing after */
	memset(&w->c, 0, sizeof(w->c));
	w->submitted = 0;
	w->done = 0;
	w->close_inline = true;
	assert_int_equal(nvmfd_cq_open_worker(pool, ring, WNIO, wq_notify, w, &w->c.cq), 0);
	nvmfd_work_init(&w->work, rt, wq_fn, -1);
	assert_true(nvmfd_rt_queue_work(&w->work));
	wq_wait(w);
	nvmfd_rt_work_cancel_sync(&w->work);
	assert_null(w->c.cq);
	assert_int_equal(w->c.delivered, 0);
	for (unsigned int i = 0; i < WNIO; i++)
		assert_int_equal(__atomic_load_n(&w->t[i].done, __ATOMIC_ACQUIRE), 0);

	nvmfd_cq_pool_destroy(&pool);
	nvmfd_rt_destroy(rt);
	nvmfd_bk_close(&w->bk);
	unlink(path);
	free(w);
}

/* The pool's worker is busy (a blocking item), so nobody reaps the ring:
 * a close with reads submitted (their CQEs in the ring, unreaped) and
 * with reads only staged must wait for the first, drop the second, run
 * no callback; then freeing the buffers and the context is safe (ASan
 * would see a late sink), and the worker, released, finds nothing. */
struct blocker {
	struct nvmfd_work work;
	int entered; /* atomic */
	int release; /* atomic */
};

static void blocker_fn(struct nvmfd_work *work)
{
	struct blocker *b = container_of(work, struct blocker, work);

	__atomic_store_n(&b->entered, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b->release, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void test_worker_close_inflight(void **state)
{
	struct nvmfd_cq_pool_opts po = { 0 };
	struct nvmfd_cq_pool *pool;
	struct nvmfd_rt_ring *ring;
	struct nvmfd_rt *rt = rt_ring_new(&ring);
	struct blocker b = { 0 };
	struct tio *t = calloc(2 * WNIO, sizeof(*t));
	uint8_t *buf = malloc((size_t)2 * WNIO * WBLK);
	struct ctx c = { 0 };
	char path[64];
	struct nvmfd_bk *bk = wfile(path, sizeof(path));

	(void)state;
	assert_non_null(t);
	assert_non_null(buf);
	assert_int_equal(nvmfd_cq_pool_create(NULL, &po, &pool), 0);
	nvmfd_work_init(&b.work, rt, blocker_fn, -1);
	assert_true(nvmfd_rt_queue_work(&b.work));
	for (int ms = 0; !__atomic_load_n(&b.entered, __ATOMIC_ACQUIRE); ms++) {
		assert_true(ms < WAIT_LIMIT_MS);
		usleep(1000);
	}
	assert_int_equal(nvmfd_cq_open_worker(pool, ring, 2 * WNIO, ctx_notify, &c, &c.cq), 0);
	for (unsigned int i = 0; i < WNIO; i++) {
		wread(&t[i], &c, buf + (size_t)i * WBLK, i);
		assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
	}
	assert_true(nvmfd_cq_flush(c.cq) >= 0); /* submitted: not our worker */
	for (unsigned int i = WNIO; i < 2 * WNIO; i++) {
		wread(&t[i], &c, buf + (size_t)i * WBLK, i);
		assert_int_equal(nvmfd_cq_submit(c.cq, bk, &t[i].io), 0);
	}
	assert_int_equal(nvmfd_cq_inflight(c.cq), 2 * WNIO);
	nvmfd_cq_close(&c.cq); /* waits for the first WNIO, drops the rest */
	assert_null(c.cq);
	for (unsigned int i = 0; i < 2 * WNIO; i++)
		assert_int_equal(__atomic_load_n(&t[i].done, __ATOMIC_ACQUIRE), 0);
	/* the kernel is done with the buffers it was given */
	for (unsigned int i = 0; i < WNIO; i++)
		wcheck(buf + (size_t)i * WBLK, i);
	free(t);
	free(buf);
	__atomic_store_n(&b.release, 1, __ATOMIC_RELEASE);
	nvmfd_rt_work_cancel_sync(&b.work);
	nvmfd_cq_pool_destroy(&pool);
	nvmfd_rt_destroy(rt);
	nvmfd_bk_close(&bk);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_queue),
		cmocka_unit_test(test_per_queue_cqe_events),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_worker_other_thread),
		cmocka_unit_test(test_worker_own_pool),
		cmocka_unit_test(test_worker_close_inflight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
