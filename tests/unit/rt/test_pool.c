// SPDX-License-Identifier: MIT
/*
 * test_pool.c - pools and work items on real threads, limited to (at most)
 * two CPUs of this machine: placement of runs on their pool's CPUs,
 * non-reentrancy under a queueing storm, coalescing, self re-queue,
 * max_active, readiness (eventfd, pipe), cancel_sync and the stats JSON.
 *
 * With RT_TEST_URING=1 (meson test rt-pool-uring) every bound runtime is
 * created with worker rings (opts.uring): the same assertions hold when
 * the workers sleep in io_uring_enter() and readiness comes through the
 * ring's epoll request; test_uring_opts checks the option itself.
 *
 * Checks inside work functions (which run on workers) are recorded in
 * atomics and asserted by the test thread, since cmocka is not thread safe.
 * Waits are bounded (10 s) only to turn a hang into a failure; no assertion
 * depends on timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal/rt.h"
#include "internal/rt_ring.h"

#define WAIT_LIMIT_US (10 * 1000 * 1000)

static cpu_set_t test_cpus; /* up to 2 CPUs we may run on */
static bool test_uring; /* RT_TEST_URING=1: bound runtimes get worker rings */
static int test_cpu[2];
static int test_ncpus;

static int setup(void **state)
{
	cpu_set_t mine;

	if (sched_getaffinity(0, sizeof(mine), &mine))
		return -1;
	CPU_ZERO(&test_cpus);
	for (int c = 0; c < CPU_SETSIZE && test_ncpus < 2; c++) {
		if (CPU_ISSET(c, &mine)) {
			CPU_SET(c, &test_cpus);
			test_cpu[test_ncpus++] = c;
		}
	}
	return test_ncpus ? 0 : -1;
}

static long ld(const long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(long *p, long v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static long inc(long *p)
{
	return __atomic_add_fetch(p, 1, __ATOMIC_ACQ_REL);
}

static long dec(long *p)
{
	return __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL);
}

/* Wait until *p >= v; fail after WAIT_LIMIT_US. */
static void wait_ge(const long *p, long v)
{
	for (long us = 0; ld(p) < v; us += 100) {
		if (us > WAIT_LIMIT_US)
			fail_msg("timeout: value %ld, waiting for %ld", ld(p), v);
		usleep(100);
	}
}

static struct nvmfd_rt *make_rt(enum nvmfd_rt_mode mode, enum nvmfd_rt_scope scope, bool strict,
				unsigned int workers, unsigned int max_active)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt = NULL;

	nvmfd_rt_opts_init(&opts);
	opts.mode = mode;
	opts.scope = scope;
	opts.strict = strict;
	opts.workers_per_pool = workers;
	opts.max_active = max_active;
	opts.cpus = test_cpus;
	opts.name = "rttest";
	opts.uring = test_uring && mode == NVMFD_RT_BOUND;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	assert_non_null(rt);
	assert_int_equal(nvmfd_rt_ncpus(rt), test_ncpus);
	return rt;
}

/* ---- runs only on its pool's CPUs ---------------------------------------- */

struct where {
	struct nvmfd_work work;
	cpu_set_t expect; /* allowed CPUs of the pool */
	bool exact_affinity; /* affinity must equal expect */
	long runs;
	long bad_cpu;
	long bad_affinity;
	long bad_current;
	long bad_sigmask;
	long target;
};

static void where_fn(struct nvmfd_work *w)
{
	struct where *x = (struct where *)w;
	cpu_set_t aff;
	sigset_t sigs;
	int cpu = sched_getcpu();

	if (cpu < 0 || !CPU_ISSET(cpu, &x->expect))
		inc(&x->bad_cpu);
	if (pthread_getaffinity_np(pthread_self(), sizeof(aff), &aff) ||
	    (x->exact_affinity && !CPU_EQUAL(&aff, &x->expect)))
		inc(&x->bad_affinity);
	if (nvmfd_rt_current_work() != w)
		inc(&x->bad_current);
	if (pthread_sigmask(SIG_BLOCK, NULL, &sigs) || !sigismember(&sigs, SIGINT) ||
	    !sigismember(&sigs, SIGTERM))
		inc(&x->bad_sigmask);
	if (inc(&x->runs) < ld(&x->target))
		nvmfd_rt_queue_work(w); /* self re-queue */
}

/* Prepare @x to run on @cpu and re-queue itself until @target runs; it may
 * run on @expect (NULL: @cpu alone), which must be its exact affinity if
 * @exact. @x must be zeroed. */
static void where_init(struct where *x, struct nvmfd_rt *rt, int cpu, const cpu_set_t *expect,
		       bool exact, long target)
{
	nvmfd_work_init(&x->work, rt, where_fn, cpu);
	if (expect)
		x->expect = *expect;
	else
		CPU_SET(cpu, &x->expect);
	x->exact_affinity = exact;
	st(&x->target, target);
}

/* Wait for @runs runs of @x, stop it, check it ran only where allowed. */
static void where_stop(struct where *x, long runs)
{
	wait_ge(&x->runs, runs);
	nvmfd_rt_work_cancel_sync(&x->work);
	assert_int_equal(ld(&x->bad_cpu), 0);
	assert_int_equal(ld(&x->bad_affinity), 0);
}

static void test_bound_runs_on_its_cpu(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct where *x = calloc((size_t)test_ncpus, sizeof(*x));

	assert_int_equal(nvmfd_rt_npools(rt), test_ncpus);
	for (int i = 0; i < test_ncpus; i++) {
		where_init(&x[i], rt, test_cpu[i], NULL, true, 200);
		assert_int_equal(nvmfd_rt_pool_of_cpu(rt, test_cpu[i]), i);
		assert_true(nvmfd_rt_queue_work(&x[i].work));
	}
	for (int i = 0; i < test_ncpus; i++) {
		where_stop(&x[i], 200);
		assert_int_equal(ld(&x[i].runs), 200);
		assert_int_equal(ld(&x[i].bad_current), 0);
		assert_int_equal(ld(&x[i].bad_sigmask), 0);
		/* 199 self re-queues happened while running */
		assert_int_equal(__atomic_load_n(&x[i].work.requeues, __ATOMIC_RELAXED), 199);
		assert_int_equal(__atomic_load_n(&x[i].work.runs, __ATOMIC_RELAXED), 200);
	}
	assert_null(nvmfd_rt_current_work());
	nvmfd_rt_destroy(rt);
	free(x);
}

static void test_unbound_strict_affinity(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_CPU, true, 2, 0);
	struct where *x = calloc((size_t)test_ncpus, sizeof(*x));

	/* scope cpu: one pool per CPU, two workers each, confined to it */
	assert_int_equal(nvmfd_rt_npools(rt), test_ncpus);
	for (int i = 0; i < test_ncpus; i++) {
		where_init(&x[i], rt, test_cpu[i], NULL, true, 100);
		assert_true(nvmfd_rt_queue_work(&x[i].work));
	}
	for (int i = 0; i < test_ncpus; i++) {
		where_stop(&x[i], 100);
	}
	nvmfd_rt_destroy(rt);
	free(x);
}

/* Non-strict: one pool per CPU (scope cpu), but the workers may run on any
 * runtime CPU; they are only moved back into their unit at item start. */
static void test_unbound_nonstrict_affinity(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_CPU, false, 0, 0);
	struct nvmfd_rt_worker_stats ws;
	struct where x;

	memset(&x, 0, sizeof(x));
	assert_int_equal(nvmfd_rt_npools(rt), test_ncpus);
	where_init(&x, rt, test_cpu[test_ncpus - 1], &test_cpus, true, 20);
	assert_true(nvmfd_rt_queue_work(&x.work));
	where_stop(&x, 20);
	assert_int_equal(nvmfd_rt_worker_stats(rt, (unsigned int)test_ncpus - 1, 0, &ws), 0);
	assert_int_equal(ws.runs, 20);
	assert_true(CPU_EQUAL(&ws.affinity, &test_cpus));
	nvmfd_rt_destroy(rt);
}

static void test_unbound_system_runs_on_runtime_cpus(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 0, 0);
	struct nvmfd_rt_pool_stats ps;
	struct where x;

	memset(&x, 0, sizeof(x));
	assert_int_equal(nvmfd_rt_npools(rt), 1);
	where_init(&x, rt, test_cpu[0], &test_cpus, false, 100);
	assert_true(nvmfd_rt_queue_work(&x.work));
	where_stop(&x, 100);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.nworkers, test_ncpus);
	assert_int_equal(ps.runs, 100);
	assert_true(CPU_EQUAL(&ps.cpus, &test_cpus));
	assert_int_equal(nvmfd_rt_pool_stats(rt, 1, &ps), -EINVAL);
	nvmfd_rt_destroy(rt);
}

/* ---- never runs twice at once ---------------------------------------------- */

struct storm {
	struct nvmfd_work work;
	long inflight;
	long max_inflight;
	long runs;
	long queued_true;
	long stop;
};

static void storm_fn(struct nvmfd_work *w)
{
	struct storm *s = (struct storm *)w;
	long n = inc(&s->inflight), m;

	while ((m = ld(&s->max_inflight)) < n &&
	       !__atomic_compare_exchange_n(&s->max_inflight, &m, n, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
	for (volatile int i = 0; i < 2000; i++)
		;
	dec(&s->inflight);
	inc(&s->runs);
}

static void *storm_thread(void *arg)
{
	struct storm *s = arg;

	for (int i = 0; i < 20000 && !ld(&s->stop); i++) {
		if (nvmfd_rt_queue_work(&s->work))
			inc(&s->queued_true);
		if (!(i % 64))
			sched_yield();
	}
	return NULL;
}

static void run_storm(struct nvmfd_rt *rt)
{
	struct storm s;
	pthread_t th[4];

	memset(&s, 0, sizeof(s));
	nvmfd_work_init(&s.work, rt, storm_fn, test_cpu[0]);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, storm_thread, &s), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* every successful queue becomes exactly one run */
	wait_ge(&s.runs, ld(&s.queued_true));
	nvmfd_rt_work_cancel_sync(&s.work);
	assert_int_equal(ld(&s.runs), ld(&s.queued_true));
	assert_int_equal(ld(&s.max_inflight), 1);
	assert_true(ld(&s.runs) >= 1);
	assert_int_equal(__atomic_load_n(&s.work.runs, __ATOMIC_RELAXED), ld(&s.runs));
}

static void test_nonreentrant_bound(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);

	run_storm(rt);
	nvmfd_rt_destroy(rt);
}

static void test_nonreentrant_unbound_many_workers(void **state)
{
	/* 4 workers in one pool: any of them could pick the item up */
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 4, 0);

	run_storm(rt);
	nvmfd_rt_destroy(rt);
}

/* ---- coalescing, requeue while running, cancel ----------------------------- */

struct gated {
	struct nvmfd_work work;
	long gate; /* fn spins until this is 1 */
	long started;
	long finished;
	long runs;
};

static void gated_fn(struct nvmfd_work *w)
{
	struct gated *g = (struct gated *)w;

	inc(&g->started);
	while (!ld(&g->gate))
		usleep(50);
	inc(&g->runs);
	inc(&g->finished);
}

static void counted_fn(struct nvmfd_work *w)
{
	struct gated *g = (struct gated *)w;

	inc(&g->runs);
}

static void test_coalesce(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct gated a, b, c;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	nvmfd_work_init(&a.work, rt, gated_fn, test_cpu[0]);
	nvmfd_work_init(&b.work, rt, counted_fn, test_cpu[0]);
	nvmfd_work_init(&c.work, rt, counted_fn, test_cpu[0]);

	assert_true(nvmfd_rt_queue_work(&a.work));
	wait_ge(&a.started, 1);
	/* a is running: queueing it again marks it pending once */
	assert_true(nvmfd_rt_queue_work(&a.work));
	assert_false(nvmfd_rt_queue_work(&a.work));
	assert_false(nvmfd_rt_queue_work(&a.work));
	/* b waits behind a on the same (single-worker) pool: pending coalesces */
	assert_true(nvmfd_rt_queue_work(&b.work));
	assert_false(nvmfd_rt_queue_work(&b.work));
	/* c is cancelled while pending: it never runs */
	assert_true(nvmfd_rt_queue_work(&c.work));
	nvmfd_rt_work_cancel_sync(&c.work);
	assert_false(nvmfd_rt_queue_work(&c.work));

	st(&a.gate, 1);
	wait_ge(&a.runs, 2); /* the requeue ran after the first run */
	wait_ge(&b.runs, 1);
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_rt_work_cancel_sync(&b.work);
	assert_int_equal(ld(&a.runs), 2);
	assert_int_equal(ld(&a.started), 2);
	assert_int_equal(ld(&b.runs), 1);
	assert_int_equal(ld(&c.runs), 0);
	assert_int_equal(__atomic_load_n(&a.work.requeues, __ATOMIC_RELAXED), 1);

	/* re-initialised, a cancelled item is usable again */
	nvmfd_work_init(&c.work, rt, counted_fn, test_cpu[0]);
	assert_true(nvmfd_rt_queue_work(&c.work));
	wait_ge(&c.runs, 1);
	nvmfd_rt_work_cancel_sync(&c.work);
	nvmfd_rt_destroy(rt);
}

/* ---- the urgent run list ------------------------------------------------ */

/* An item with its place in the order the worker ran the items. */
struct ordered {
	struct nvmfd_work work;
	long *seq; /* shared run counter */
	long order[2]; /* value of *seq at its first and second run, from 1 */
	long runs;
	long again; /* re-queue itself once from its first run */
};

static void ordered_fn(struct nvmfd_work *w)
{
	struct ordered *o = (struct ordered *)w;
	long n = inc(&o->runs);

	if (n <= 2)
		st(&o->order[n - 1], inc(o->seq));
	if (n == 1 && ld(&o->again))
		nvmfd_rt_queue_work(&o->work);
}

/* An admin queue behind a round of busy I/O queues: with the (single)
 * worker held by a gated item, BUSY ordinary items are queued (each
 * re-queues itself once, as a busy queue whose pass ran to its budget),
 * then u (urgent before it was queued) and v (made urgent while it waits:
 * it changes lists). Once the gate opens, u and v run before any of the
 * BUSY items, in their queueing order; u's own re-queue (made while it
 * runs) goes on the normal list behind the round's first runs, so an
 * urgent item that keeps re-queueing itself (an idle-polling admin queue)
 * cannot starve the others; the BUSY items run in FIFO order, their second
 * runs after all their first ones and after u's. Order only, no timing. */
#define BUSY 256
static void test_urgent_before_round(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt_pool_stats ps;
	static struct ordered busy[BUSY];
	struct ordered u, v;
	struct gated a;
	long seq = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(busy, 0, sizeof(busy));
	memset(&u, 0, sizeof(u));
	memset(&v, 0, sizeof(v));
	nvmfd_work_init(&a.work, rt, gated_fn, test_cpu[0]);
	assert_true(nvmfd_rt_queue_work(&a.work));
	wait_ge(&a.started, 1);
	for (int i = 0; i < BUSY; i++) {
		busy[i].seq = &seq;
		busy[i].again = 1;
		nvmfd_work_init(&busy[i].work, rt, ordered_fn, test_cpu[0]);
		assert_true(nvmfd_rt_queue_work(&busy[i].work));
	}
	u.seq = v.seq = &seq;
	u.again = 1;
	nvmfd_work_init(&u.work, rt, ordered_fn, test_cpu[0]);
	nvmfd_work_init(&v.work, rt, ordered_fn, test_cpu[0]);
	nvmfd_rt_work_set_urgent(&u.work, true);
	assert_true(nvmfd_rt_queue_work(&u.work));
	assert_true(nvmfd_rt_queue_work(&v.work));
	nvmfd_rt_work_set_urgent(&v.work, true); /* queued: moves lists */
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.runq_len, BUSY + 2);

	st(&a.gate, 1);
	for (int i = 0; i < BUSY; i++)
		wait_ge(&busy[i].runs, 2);
	wait_ge(&u.runs, 2);
	wait_ge(&v.runs, 1);
	assert_int_equal(ld(&u.order[0]), 1);
	assert_int_equal(ld(&v.order[0]), 2);
	assert_int_equal(ld(&u.order[1]), 3 + BUSY);
	for (int i = 0; i < BUSY; i++) {
		assert_int_equal(ld(&busy[i].order[0]), 3 + i);
		assert_int_equal(ld(&busy[i].order[1]), 4 + BUSY + i);
	}
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.urgent_runs, 2);
	/* back among the others: queued behind them again */
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_work_init(&a.work, rt, gated_fn, test_cpu[0]);
	st(&a.gate, 0);
	st(&a.started, 0);
	assert_true(nvmfd_rt_queue_work(&a.work));
	wait_ge(&a.started, 1);
	st(&busy[0].runs, 1); /* its next run records order[1] */
	busy[0].again = 0;
	assert_true(nvmfd_rt_queue_work(&busy[0].work));
	nvmfd_rt_work_set_urgent(&u.work, false);
	st(&u.runs, 1);
	u.again = 0;
	assert_true(nvmfd_rt_queue_work(&u.work));
	st(&a.gate, 1);
	wait_ge(&busy[0].runs, 2);
	wait_ge(&u.runs, 2);
	assert_true(ld(&busy[0].order[1]) < ld(&u.order[1]));
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_rt_work_cancel_sync(&u.work);
	nvmfd_rt_work_cancel_sync(&v.work);
	for (int i = 0; i < BUSY; i++)
		nvmfd_rt_work_cancel_sync(&busy[i].work);
	nvmfd_rt_destroy(rt);
}

/* Regression: cancel_sync of an urgent item that re-queued itself while it
 * ran. The re-queue puts it on the normal list (see above); cancel_sync
 * looked for it on the urgent list only, missed it, cleared PENDING and
 * left it linked, so it ran after the cancel (and a target queue freed
 * after cancel_sync was read by the worker: a use-after-free seen under
 * ASan at stop with --uring-ring worker). u (urgent) re-queues itself from
 * its first run, behind b, which holds the worker; cancelling u then must
 * unlink it: the run queue is empty and u never runs again, while c,
 * queued after, does. Order only, no timing. */
static void test_cancel_urgent_requeued(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt_pool_stats ps;
	struct gated a, b, c;
	struct ordered u;
	unsigned int before, after;
	int ret1, ret2;
	long seq = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	memset(&u, 0, sizeof(u));
	nvmfd_work_init(&a.work, rt, gated_fn, test_cpu[0]);
	nvmfd_work_init(&b.work, rt, gated_fn, test_cpu[0]);
	nvmfd_work_init(&c.work, rt, counted_fn, test_cpu[0]);
	u.seq = &seq;
	u.again = 1;
	nvmfd_work_init(&u.work, rt, ordered_fn, test_cpu[0]);
	nvmfd_rt_work_set_urgent(&u.work, true);
	assert_true(nvmfd_rt_queue_work(&a.work));
	wait_ge(&a.started, 1);
	assert_true(nvmfd_rt_queue_work(&u.work));
	assert_true(nvmfd_rt_queue_work(&b.work));
	st(&a.gate, 1);
	wait_ge(&b.started, 1); /* u ran once and waits behind b */
	ret1 = nvmfd_rt_pool_stats(rt, 0, &ps);
	before = ps.runq_len;
	nvmfd_rt_work_cancel_sync(&u.work);
	ret2 = nvmfd_rt_pool_stats(rt, 0, &ps);
	after = ps.runq_len;
	assert_true(nvmfd_rt_queue_work(&c.work));
	st(&b.gate, 1); /* before any assert: a failure must not leave it spinning */
	wait_ge(&c.runs, 1);
	assert_int_equal(ret1, 0);
	assert_int_equal(ret2, 0);
	assert_int_equal(before, 1);
	assert_int_equal(after, 0);
	assert_int_equal(ld(&u.runs), 1);
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_rt_work_cancel_sync(&b.work);
	nvmfd_rt_work_cancel_sync(&c.work);
	nvmfd_rt_destroy(rt);
}

/* ---- starvation: pending time and the rescue move ---------------------- */

/* A worker held by a gated item (the deterministic stand-in for a hog on
 * the CPU): the item queued behind it reports a growing pending time, a
 * running item reports none, and moving the starved item to another
 * runtime gets it run while the gate is still closed. */
static void test_pending_ns_and_rescue(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt *esc = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 1, 0);
	struct gated a, b;
	uint64_t t0, p1, p2;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	nvmfd_work_init(&a.work, rt, gated_fn, test_cpu[0]);
	nvmfd_work_init(&b.work, rt, counted_fn, test_cpu[0]);
	assert_int_equal(nvmfd_rt_work_pending_ns(&b.work, nvmfd_now_ns()), 0);
	assert_true(nvmfd_rt_queue_work(&a.work));
	wait_ge(&a.started, 1);
	t0 = nvmfd_now_ns();
	assert_true(nvmfd_rt_queue_work(&b.work));
	/* running: not a stall of the queue */
	assert_int_equal(nvmfd_rt_work_pending_ns(&a.work, nvmfd_now_ns()), 0);
	p1 = nvmfd_rt_work_pending_ns(&b.work, t0 + 1000000000ull);
	p2 = nvmfd_rt_work_pending_ns(&b.work, t0 + 2000000000ull);
	assert_true(p1 > 0);
	assert_true(p2 > p1);
	assert_int_equal(ld(&b.runs), 0);
	assert_int_equal(nvmfd_rt_work_move(&b.work, esc, test_cpu[0], NULL, 0), 0);
	wait_ge(&b.runs, 1);
	assert_int_equal(ld(&a.finished), 0); /* still held */
	assert_int_equal(nvmfd_rt_work_pending_ns(&b.work, nvmfd_now_ns()), 0);
	st(&a.gate, 1);
	wait_ge(&a.finished, 1);
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_rt_work_cancel_sync(&b.work);
	assert_int_equal(nvmfd_rt_work_pending_ns(&b.work, nvmfd_now_ns()), 0);
	nvmfd_rt_destroy(esc);
	nvmfd_rt_destroy(rt);
}

struct canceller {
	struct gated *g;
	long done;
	long finished_at_return;
};

static void *cancel_thread(void *arg)
{
	struct canceller *c = arg;

	nvmfd_rt_work_cancel_sync(&c->g->work);
	st(&c->finished_at_return, ld(&c->g->finished));
	st(&c->done, 1);
	return NULL;
}

static void test_cancel_sync_waits(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 2, 0);
	struct canceller c;
	struct gated g;
	pthread_t th;

	memset(&g, 0, sizeof(g));
	memset(&c, 0, sizeof(c));
	c.g = &g;
	nvmfd_work_init(&g.work, rt, gated_fn, test_cpu[0]);
	assert_true(nvmfd_rt_queue_work(&g.work));
	wait_ge(&g.started, 1);
	assert_true(nvmfd_rt_queue_work(&g.work)); /* pending behind the run */
	assert_int_equal(pthread_create(&th, NULL, cancel_thread, &c), 0);
	usleep(20000); /* give cancel a chance to (wrongly) return early */
	st(&g.gate, 1);
	pthread_join(th, NULL);
	assert_int_equal(ld(&c.done), 1);
	/* cancel returned only after the running instance finished ... */
	assert_true(ld(&c.finished_at_return) >= 1);
	/* ... and nothing ran after it returned: the pending re-run was
	 * dropped, or (a loaded machine: the cancel thread started after the
	 * gate opened and the re-run had begun) waited for as well */
	assert_int_equal(ld(&g.runs), ld(&c.finished_at_return));
	assert_false(nvmfd_rt_queue_work(&g.work));
	nvmfd_rt_destroy(rt);
}

/* ---- max_active -------------------------------------------------------------- */

struct limited {
	struct nvmfd_work work;
	long *conc;
	long *max_conc;
	long *gate;
	long *done;
};

static void limited_fn(struct nvmfd_work *w)
{
	struct limited *l = (struct limited *)w;
	long n = inc(l->conc), m;

	while ((m = ld(l->max_conc)) < n &&
	       !__atomic_compare_exchange_n(l->max_conc, &m, n, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
	while (!ld(l->gate))
		usleep(50);
	dec(l->conc);
	inc(l->done);
}

static void test_max_active(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 4, 2);
	long conc = 0, max_conc = 0, gate = 0, done = 0;
	struct nvmfd_rt_pool_stats ps;
	struct limited l[8];

	for (int i = 0; i < 8; i++) {
		nvmfd_work_init(&l[i].work, rt, limited_fn, test_cpu[i % test_ncpus]);
		l[i].conc = &conc;
		l[i].max_conc = &max_conc;
		l[i].gate = &gate;
		l[i].done = &done;
		assert_true(nvmfd_rt_queue_work(&l[i].work));
	}
	/* two idle workers take two items; the other two workers must wait */
	wait_ge(&conc, 2);
	usleep(20000);
	assert_int_equal(ld(&conc), 2);
	st(&gate, 1);
	wait_ge(&done, 8);
	for (int i = 0; i < 8; i++)
		nvmfd_rt_work_cancel_sync(&l[i].work);
	assert_int_equal(ld(&max_conc), 2);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.max_active, 2);
	assert_int_equal(ps.active_max, 2);
	assert_int_equal(ps.nworkers, 4);
	assert_int_equal(ps.runs, 8);
	assert_true(ps.runq_max >= 6 && ps.runq_max <= 8);
	nvmfd_rt_destroy(rt);
}

/* ---- readiness ------------------------------------------------------------- */

struct reader {
	struct nvmfd_work work;
	int fd;
	bool is_pipe;
	bool rearm;
	long runs;
	long got; /* sum of eventfd values / bytes */
	long bad_cpu;
	int expect_cpu;
};

static void reader_fn(struct nvmfd_work *w)
{
	struct reader *r = (struct reader *)w;
	ssize_t n;

	if (r->expect_cpu >= 0 && sched_getcpu() != r->expect_cpu)
		inc(&r->bad_cpu);
	if (r->is_pipe) {
		char buf[64];

		n = read(r->fd, buf, sizeof(buf));
		if (n > 0)
			__atomic_add_fetch(&r->got, n, __ATOMIC_ACQ_REL);
	} else {
		uint64_t v;

		n = read(r->fd, &v, sizeof(v));
		if (n == (ssize_t)sizeof(v))
			__atomic_add_fetch(&r->got, (long)v, __ATOMIC_ACQ_REL);
	}
	if (r->rearm)
		nvmfd_rt_watch_fd(w, r->fd, EPOLLIN);
	inc(&r->runs);
}

static void test_watch_eventfd(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	int cpu = test_cpu[test_ncpus - 1];
	struct nvmfd_rt_pool_stats ps;
	struct reader r;
	uint64_t one = 1;

	memset(&r, 0, sizeof(r));
	r.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(r.fd >= 0);
	r.rearm = true;
	r.expect_cpu = cpu;
	nvmfd_work_init(&r.work, rt, reader_fn, cpu);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, r.fd, EPOLLIN), 0);
	/* re-arming an armed fd is a MOD, not an error */
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, r.fd, EPOLLIN), 0);
	for (long i = 1; i <= 3; i++) {
		assert_int_equal(write(r.fd, &one, sizeof(one)), sizeof(one));
		wait_ge(&r.got, i);
	}
	assert_int_equal(ld(&r.got), 3);
	assert_int_equal(ld(&r.bad_cpu), 0);
	/* teardown order: cancel (no more runs, nobody re-arms), then unwatch */
	nvmfd_rt_work_cancel_sync(&r.work);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, r.fd, EPOLLIN), -ECANCELED);
	assert_int_equal(nvmfd_rt_unwatch_fd(&r.work, r.fd), 0);
	assert_int_equal(nvmfd_rt_unwatch_fd(&r.work, r.fd), -ENOENT);
	assert_int_equal(nvmfd_rt_pool_stats(rt, nvmfd_rt_pool_of_cpu(rt, cpu), &ps), 0);
	assert_true(ps.epoll_events >= 3);
	assert_true(ps.runs >= 3);
	close(r.fd);
	nvmfd_rt_destroy(rt);
}

/* @r reads the read end of a new non-blocking pipe @p with @fn on test_cpu[0]. */
static void pipe_reader_init(struct reader *r, int p[2], struct nvmfd_rt *rt, nvmfd_work_fn fn)
{
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	memset(r, 0, sizeof(*r));
	r->fd = p[0];
	r->is_pipe = true;
	r->expect_cpu = -1;
	nvmfd_work_init(&r->work, rt, fn, test_cpu[0]);
}

static void test_watch_pipe_oneshot(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, false, 0, 0);
	struct reader r;
	int p[2];

	pipe_reader_init(&r, p, rt, reader_fn);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, p[0], EPOLLIN), 0);
	assert_int_equal(write(p[1], "abc", 3), 3);
	wait_ge(&r.got, 3);
	wait_ge(&r.runs, 1); /* fn counts the run after the read */
	assert_int_equal(ld(&r.runs), 1);
	/* one-shot and not re-armed: the fd is not watched until re-armed */
	assert_int_equal(write(p[1], "de", 2), 2);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, p[0], EPOLLIN), 0);
	wait_ge(&r.got, 5);
	nvmfd_rt_work_cancel_sync(&r.work); /* the run that read it has returned */
	assert_int_equal(ld(&r.runs), 2);
	assert_int_equal(nvmfd_rt_unwatch_fd(&r.work, p[0]), 0);
	/* a closed fd number can be watched again after unwatch */
	close(p[0]);
	close(p[1]);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, -1, EPOLLIN), -EBADF);
	nvmfd_rt_destroy(rt);
}

/* A reader of one byte per run that never re-arms (edge-triggered tests). */
static void byte_reader_fn(struct nvmfd_work *w)
{
	struct reader *r = (struct reader *)w;
	char c;

	if (read(r->fd, &c, 1) == 1)
		__atomic_add_fetch(&r->got, 1, __ATOMIC_ACQ_REL);
	inc(&r->runs);
}

/*
 * EPOLLET watches persist: every new edge queues the item without a
 * re-arm, watching again with the same events is accepted (free), and
 * readiness left unconsumed does not fire again (edge, not level).
 */
static void test_watch_pipe_edge(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct reader r;
	int p[2];

	pipe_reader_init(&r, p, rt, byte_reader_fn);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, p[0], EPOLLIN | EPOLLET), 0);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, p[0], EPOLLIN | EPOLLET), 0);
	for (long i = 1; i <= 3; i++) {
		/* two bytes per edge, one read per run: one byte stays behind */
		assert_int_equal(write(p[1], "xy", 2), 2);
		wait_ge(&r.runs, i);
		usleep(20000); /* a level-triggered watch would run again now */
		assert_int_equal(ld(&r.runs), i);
		assert_int_equal(ld(&r.got), i);
	}
	/* back to one-shot (a MOD): fires on the bytes left, once */
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, p[0], EPOLLIN), 0);
	wait_ge(&r.runs, 4);
	assert_int_equal(write(p[1], "z", 1), 1);
	usleep(20000);
	assert_int_equal(ld(&r.runs), 4);
	nvmfd_rt_work_cancel_sync(&r.work);
	assert_int_equal(nvmfd_rt_unwatch_fd(&r.work, p[0]), 0);
	close(p[0]);
	close(p[1]);
	nvmfd_rt_destroy(rt);
}

/* Watching an fd for another item moves it there (and to that item's pool). */
static void test_watch_moves_fd(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct reader a, b;
	uint64_t one = 1;
	int fd;

	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.fd = b.fd = fd;
	a.expect_cpu = test_cpu[0];
	b.expect_cpu = test_cpu[test_ncpus - 1];
	nvmfd_work_init(&a.work, rt, reader_fn, a.expect_cpu);
	nvmfd_work_init(&b.work, rt, reader_fn, b.expect_cpu);
	assert_int_equal(nvmfd_rt_watch_fd(&a.work, fd, EPOLLIN), 0);
	assert_int_equal(nvmfd_rt_watch_fd(&b.work, fd, EPOLLIN), 0);
	assert_int_equal(nvmfd_rt_unwatch_fd(&a.work, fd), -ENOENT); /* not a's now */
	assert_int_equal(write(fd, &one, sizeof(one)), sizeof(one));
	wait_ge(&b.got, 1);
	nvmfd_rt_work_cancel_sync(&a.work);
	nvmfd_rt_work_cancel_sync(&b.work);
	assert_int_equal(nvmfd_rt_unwatch_fd(&b.work, fd), 0);
	assert_int_equal(ld(&a.runs), 0);
	assert_int_equal(ld(&b.runs), 1);
	assert_int_equal(ld(&b.bad_cpu), 0);
	close(fd);
	nvmfd_rt_destroy(rt);
}

/* ---- stats JSON ------------------------------------------------------------ */

static void test_stats_json(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct json_object *root, *pools, *pool, *workers, *v;
	struct nvmfd_rt_worker_stats ws;
	struct where x;
	size_t len = 0;
	char *buf = NULL;
	FILE *f;

	memset(&x, 0, sizeof(x));
	where_init(&x, rt, test_cpu[0], NULL, false, 10);
	assert_true(nvmfd_rt_queue_work(&x.work));
	wait_ge(&x.runs, 10);
	nvmfd_rt_work_cancel_sync(&x.work);
	assert_int_equal(nvmfd_rt_place(rt, NVMFD_RT_PLACE_RR, 1, NULL, -1), test_cpu[0]);

	assert_int_equal(nvmfd_rt_worker_stats(rt, 0, 0, &ws), 0);
	assert_true(ws.tid > 0);
	assert_int_equal(ws.runs, 10);
	assert_int_equal(ws.last_cpu, test_cpu[0]);
	/* once idle it sleeps in epoll_wait(): a voluntary switch shows up */
	for (long us = 0; ws.nvcsw < 1; us += 1000) {
		if (us > WAIT_LIMIT_US)
			fail_msg("worker %d never blocked (nvcsw 0)", ws.tid);
		usleep(1000);
		assert_int_equal(nvmfd_rt_worker_stats(rt, 0, 0, &ws), 0);
	}
	assert_int_equal(nvmfd_rt_worker_stats(rt, 0, 1, &ws), -EINVAL);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(nvmfd_rt_stats_json(rt, f), 0);
	fclose(f);
	root = json_tokener_parse(buf);
	if (!root)
		fail_msg("not JSON: %s", buf);
	assert_true(json_object_object_get_ex(root, "mode", &v));
	assert_string_equal(json_object_get_string(v), "bound");
	assert_true(json_object_object_get_ex(root, "pools", &pools));
	assert_int_equal(json_object_array_length(pools), test_ncpus);
	pool = json_object_array_get_idx(pools, 0);
	assert_true(json_object_object_get_ex(pool, "runs", &v));
	assert_int_equal(json_object_get_int64(v), 10);
	assert_true(json_object_object_get_ex(pool, "workers", &workers));
	assert_int_equal(json_object_array_length(workers), 1);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(workers, 0),
					      "run_delay_ns", &v));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(workers, 0), "runs",
					      &v));
	assert_int_equal(json_object_get_int64(v), 10);
	/* bound pool, one worker: never more than one item in flight */
	assert_true(json_object_object_get_ex(pool, "active_max", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(pool, "hogs", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_true(json_object_object_get_ex(root, "placed", &v));
	{
		char key[16];
		struct json_object *n;

		snprintf(key, sizeof(key), "%d", test_cpu[0]);
		assert_true(json_object_object_get_ex(v, key, &n));
		assert_int_equal(json_object_get_int(n), 1);
	}
	json_object_put(root);
	free(buf);
	nvmfd_rt_destroy(rt);
}

static void hog_fn(struct nvmfd_work *w)
{
	struct gated *g = (struct gated *)w;

	inc(&g->started);
	while (!ld(&g->gate))
		usleep(50);
	usleep(11000); /* longer than NVMFD_RT_HOG_NS */
	inc(&g->runs);
}

static void test_hog_counted(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt_pool_stats ps;
	struct gated g, q;

	memset(&g, 0, sizeof(g));
	memset(&q, 0, sizeof(q));
	nvmfd_work_init(&g.work, rt, hog_fn, test_cpu[0]);
	nvmfd_work_init(&q.work, rt, counted_fn, test_cpu[0]);
	assert_true(nvmfd_rt_queue_work(&g.work));
	wait_ge(&g.started, 1);
	assert_true(nvmfd_rt_queue_work(&q.work)); /* queued before the 11 ms */
	st(&g.gate, 1);
	wait_ge(&q.runs, 1);
	nvmfd_rt_work_cancel_sync(&g.work);
	nvmfd_rt_work_cancel_sync(&q.work);
	assert_int_equal(ld(&g.runs), 1);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.runs, 2);
	assert_int_equal(ps.hogs, 1);
	assert_true(ps.busy_ns >= NVMFD_RT_HOG_NS);
	/* q waited behind the hog on the single worker */
	assert_true(ps.queue_delay_max_ns >= NVMFD_RT_HOG_NS);
	nvmfd_rt_destroy(rt);
}

/* An item in a blocking section lets the bound pool run other items. */
struct blocker {
	struct nvmfd_work work;
	long gate;
	long in_block;
	long after;
};

static void blocker_fn(struct nvmfd_work *w)
{
	struct blocker *b = (struct blocker *)w;

	nvmfd_rt_blocking_begin();
	nvmfd_rt_blocking_begin(); /* nested: no-op */
	inc(&b->in_block);
	while (!ld(&b->gate))
		usleep(50);
	nvmfd_rt_blocking_end();
	nvmfd_rt_blocking_end();
	inc(&b->after);
}

static void test_blocking_section(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt_worker_stats ws;
	struct nvmfd_rt_pool_stats ps;
	struct where x;
	struct blocker b;

	memset(&b, 0, sizeof(b));
	memset(&x, 0, sizeof(x));
	nvmfd_work_init(&b.work, rt, blocker_fn, test_cpu[0]);
	where_init(&x, rt, test_cpu[0], NULL, true, 50);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.nworkers, 1);

	assert_true(nvmfd_rt_queue_work(&b.work));
	wait_ge(&b.in_block, 1);
	/* b is blocked on its worker: x must still run, on the same CPU */
	assert_true(nvmfd_rt_queue_work(&x.work));
	wait_ge(&x.runs, 50);
	assert_int_equal(ld(&b.after), 0);
	/* b cannot run twice even though a second worker exists */
	assert_true(nvmfd_rt_queue_work(&b.work));
	st(&b.gate, 1);
	wait_ge(&b.after, 2);
	nvmfd_rt_work_cancel_sync(&b.work);
	nvmfd_rt_work_cancel_sync(&x.work);
	assert_int_equal(ld(&x.bad_cpu), 0);
	assert_int_equal(ld(&x.bad_affinity), 0);
	assert_int_equal(ld(&b.in_block), 2);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps), 0);
	assert_int_equal(ps.nworkers, 2);
	assert_int_equal(ps.active_max, 2);
	assert_int_equal(ps.runs, 52);
	assert_int_equal(nvmfd_rt_worker_stats(rt, 0, 1, &ws), 0);
	assert_true(CPU_EQUAL(&ws.affinity, &x.expect));
	/* outside a work function: no-ops */
	nvmfd_rt_blocking_begin();
	nvmfd_rt_blocking_end();
	nvmfd_rt_destroy(rt);
}

/* Give pool 0 of @rt its spare worker (a blocking section starts it; it
 * stays, idle) and snapshot the pool's stats after that into @ps. */
static void spare_worker_start(struct nvmfd_rt *rt, struct nvmfd_rt_pool_stats *ps)
{
	struct where x;
	struct blocker b;

	memset(&b, 0, sizeof(b));
	memset(&x, 0, sizeof(x));
	nvmfd_work_init(&b.work, rt, blocker_fn, test_cpu[0]);
	where_init(&x, rt, test_cpu[0], NULL, true, 5);
	assert_true(nvmfd_rt_queue_work(&b.work));
	wait_ge(&b.in_block, 1);
	assert_true(nvmfd_rt_queue_work(&x.work)); /* starts the spare worker */
	wait_ge(&x.runs, 5);
	st(&b.gate, 1);
	wait_ge(&b.after, 1);
	nvmfd_rt_work_cancel_sync(&b.work);
	nvmfd_rt_work_cancel_sync(&x.work);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, ps), 0);
	assert_int_equal(ps->nworkers, 2);
}

/*
 * Regression: a worker that takes a readiness event queues the item and
 * runs it itself; it must not also kick an idle sibling for it. A bound
 * pool keeps the spare worker a blocking section started, and before the
 * fix every event cost a kick (eventfd write), the sibling's wake-up and
 * its eventfd read.
 */
static void test_dispatch_no_kick(void **state)
{
	struct nvmfd_rt *rt = make_rt(NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, false, 0, 0);
	struct nvmfd_rt_pool_stats ps0, ps1;
	struct reader r;
	uint64_t one = 1;

	memset(&r, 0, sizeof(r));
	spare_worker_start(rt, &ps0);

	r.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(r.fd >= 0);
	r.rearm = true;
	r.expect_cpu = test_cpu[0];
	nvmfd_work_init(&r.work, rt, reader_fn, test_cpu[0]);
	assert_int_equal(nvmfd_rt_watch_fd(&r.work, r.fd, EPOLLIN), 0);
	for (long i = 1; i <= 20; i++) {
		assert_int_equal(write(r.fd, &one, sizeof(one)), sizeof(one));
		wait_ge(&r.got, i);
	}
	nvmfd_rt_work_cancel_sync(&r.work);
	assert_int_equal(nvmfd_rt_unwatch_fd(&r.work, r.fd), 0);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps1), 0);
	assert_true(ps1.epoll_events - ps0.epoll_events >= 20);
	/* kicks come only from queueing by non-workers; allow a stray one */
	assert_true(ps1.kicks - ps0.kicks <= 2);
	assert_int_equal(ld(&r.bad_cpu), 0);
	close(r.fd);
	nvmfd_rt_destroy(rt);
}

static void test_create_errors(void **state)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt = NULL;

	nvmfd_rt_opts_init(&opts);
	assert_int_equal(opts.mode, NVMFD_RT_BOUND);
	assert_int_equal(opts.scope, NVMFD_RT_SCOPE_CACHE);
	assert_int_equal(opts.max_active, 512);
	opts.mode = (enum nvmfd_rt_mode)7;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), -EINVAL);
	nvmfd_rt_opts_init(&opts);
	opts.size = 0;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), -EINVAL);
	nvmfd_rt_opts_init(&opts);
	CPU_SET(CPU_SETSIZE - 1, &opts.cpus); /* not online */
	assert_int_equal(nvmfd_rt_create(&opts, &rt), -EINVAL);
	assert_null(rt);
}

/* opts.uring: refused for unbound pools; a bound runtime reports it and
 * sleeps in its ring (the waits count), and a queue from outside wakes it. */
static void test_uring_opts(void **state)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt = NULL;
	json_object *o, *pools, *ring, *v;
	struct where x;

	nvmfd_rt_opts_init(&opts);
	assert_false(opts.uring);
	opts.uring = true;
	opts.mode = NVMFD_RT_UNBOUND;
	opts.cpus = test_cpus;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), -EINVAL);
	assert_null(rt);
	opts.mode = NVMFD_RT_BOUND;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	memset(&x, 0, sizeof(x));
	where_init(&x, rt, test_cpu[0], NULL, true, 1);
	for (long i = 1; i <= 5; i++) {
		usleep(1000); /* let the worker go to sleep in its ring */
		assert_true(nvmfd_rt_queue_work(&x.work));
		wait_ge(&x.runs, i);
	}
	nvmfd_rt_work_cancel_sync(&x.work);
	o = nvmfd_rt_stats_obj(rt);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "uring", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "pools", &pools));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(pools, 0), "ring", &ring));
	assert_true(json_object_object_get_ex(ring, "waits", &v));
	assert_true(json_object_get_uint64(v) >= 1);
	assert_true(json_object_object_get_ex(ring, "epoll_cqes", &v));
	assert_true(json_object_get_uint64(v) >= 1); /* the kicks came that way */
	json_object_put(o);
	nvmfd_rt_destroy(rt);
}

/* A work item that puts one NOP on its pool's worker ring per run; the
 * NOP's CQE (its sink) queues it again, @target times. */
struct nopper {
	struct nvmfd_work work;
	struct nvmfd_rt_sink sink;
	struct nvmfd_rt_ring *ring;
	long runs, cqes, target, bad;
};

static void nopper_cqe(struct nvmfd_rt_sink *s, unsigned int tag, int res, uint32_t flags)
{
	struct nopper *n = (struct nopper *)((char *)s - offsetof(struct nopper, sink));

	if (tag != 5 || res != 0)
		inc(&n->bad);
	inc(&n->cqes);
	nvmfd_rt_queue_work(&n->work);
}

static void nopper_fn(struct nvmfd_work *w)
{
	struct nopper *n = (struct nopper *)w;
	struct io_uring_sqe *sqe;

	if (inc(&n->runs) > ld(&n->target))
		return;
	nvmfd_rt_ring_lock(n->ring);
	sqe = nvmfd_rt_ring_sqe(n->ring);
	if (sqe) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, nvmfd_rt_ring_data(&n->sink, 5));
	} else {
		inc(&n->bad);
	}
	nvmfd_rt_ring_unlock(n->ring);
	if (nvmfd_rt_ring_commit(n->ring)) /* on our worker: its next enter */
		inc(&n->bad);
}

/*
 * Regression: the worker that reaps its pool's ring runs the items the
 * CQEs queue itself; it must not kick an idle sibling for them (a bound
 * pool keeps the spare worker a blocking section started). Before the
 * fix every socket CQE cost an eventfd write, a read and two wake-ups.
 */
static void test_ring_sink_no_kick(void **state)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt_pool_stats ps0, ps1;
	struct nvmfd_rt *rt = NULL;
	struct nopper n;

	nvmfd_rt_opts_init(&opts);
	opts.cpus = test_cpus;
	opts.uring = true;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	memset(&n, 0, sizeof(n));
	spare_worker_start(rt, &ps0);

	n.ring = nvmfd_rt_ring_of(rt, test_cpu[0]);
	assert_non_null(n.ring);
	n.sink.cqe = nopper_cqe;
	st(&n.target, 50);
	nvmfd_work_init(&n.work, rt, nopper_fn, test_cpu[0]);
	assert_true(nvmfd_rt_queue_work(&n.work));
	wait_ge(&n.cqes, 50);
	wait_ge(&n.runs, 51);
	nvmfd_rt_work_cancel_sync(&n.work);
	assert_int_equal(ld(&n.bad), 0);
	assert_int_equal(nvmfd_rt_pool_stats(rt, 0, &ps1), 0);
	/* the first queue came from this thread: allow a stray kick or two */
	assert_true(ps1.kicks - ps0.kicks <= 2);
	nvmfd_rt_destroy(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_bound_runs_on_its_cpu),
		cmocka_unit_test(test_unbound_strict_affinity),
		cmocka_unit_test(test_unbound_nonstrict_affinity),
		cmocka_unit_test(test_unbound_system_runs_on_runtime_cpus),
		cmocka_unit_test(test_nonreentrant_bound),
		cmocka_unit_test(test_nonreentrant_unbound_many_workers),
		cmocka_unit_test(test_coalesce),
		cmocka_unit_test(test_urgent_before_round),
		cmocka_unit_test(test_cancel_urgent_requeued),
		cmocka_unit_test(test_cancel_sync_waits),
		cmocka_unit_test(test_pending_ns_and_rescue),
		cmocka_unit_test(test_max_active),
		cmocka_unit_test(test_watch_eventfd),
		cmocka_unit_test(test_watch_pipe_oneshot),
		cmocka_unit_test(test_watch_pipe_edge),
		cmocka_unit_test(test_watch_moves_fd),
		cmocka_unit_test(test_stats_json),
		cmocka_unit_test(test_hog_counted),
		cmocka_unit_test(test_blocking_section),
		cmocka_unit_test(test_dispatch_no_kick),
		cmocka_unit_test(test_uring_opts),
		cmocka_unit_test(test_ring_sink_no_kick),
	};
	const char *u = getenv("RT_TEST_URING");

	test_uring = u && !strcmp(u, "1");

	return cmocka_run_group_tests(tests, setup, NULL);
}
