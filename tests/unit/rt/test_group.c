// SPDX-License-Identifier: MIT
/*
 * test_group.c - runtime groups (one runtime per key, destroyed off the
 * workers) and nvmfd_rt_work_move() (queue migration between runtimes),
 * with real threads and no sockets.
 *
 * Where an item ran is told by the name of the worker thread (each runtime
 * names its threads). Checks inside work functions are recorded in atomics
 * and asserted by the test thread. Waits are bounded (10 s) only to turn a
 * hang into a failure; no assertion depends on timing.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
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

#define WAIT_LIMIT_US (10 * 1000 * 1000)

static long ld(const long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void wait_ge(const long *p, long v)
{
	for (long us = 0; ld(p) < v; us += 100) {
		if (us > WAIT_LIMIT_US)
			fail_msg("timeout: value %ld, waiting for %ld", ld(p), v);
		usleep(100);
	}
}

static void opts_for(struct nvmfd_rt_opts *o, const char *name)
{
	nvmfd_rt_opts_init(o);
	o->name = name;
	o->mode = NVMFD_RT_UNBOUND;
	o->scope = NVMFD_RT_SCOPE_SYSTEM;
	o->workers_per_pool = 2;
}

/* ---------------------------------------------------------------- */

static void test_group_refs(void **state)
{
	struct nvmfd_rt_opts o;
	struct nvmfd_rt_group *g;
	struct nvmfd_rt *a, *a2, *b;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	opts_for(&o, "ignored");
	assert_int_equal(nvmfd_rt_group_create(&o, "grp", &g), 0);
	assert_int_equal(nvmfd_rt_group_get(g, 7, 70, &a), 0);
	assert_int_equal(nvmfd_rt_group_get(g, 7, 70, &a2), 0);
	assert_ptr_equal(a, a2);
	assert_int_equal(nvmfd_rt_group_count(g), 1);
	assert_int_equal(nvmfd_rt_group_get(g, 8, 80, &b), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(nvmfd_rt_group_count(g), 2);

	f = open_memstream(&buf, &len);
	assert_int_equal(nvmfd_rt_group_stats_json(g, "cntlid", f), 0);
	fclose(f);
	{
		json_object *arr = json_tokener_parse(buf);
		int seen = 0;

		assert_non_null(arr);
		assert_int_equal(json_object_array_length(arr), 2);
		for (size_t i = 0; i < 2; i++) {
			json_object *e = json_object_array_get_idx(arr, i), *v;

			assert_true(json_object_object_get_ex(e, "cntlid", &v));
			if (json_object_get_int(v) == 70) {
				assert_true(json_object_object_get_ex(e, "users", &v));
				assert_int_equal(json_object_get_int(v), 2);
				seen |= 1;
			} else if (json_object_get_int(v) == 80) {
				seen |= 2;
			}
			assert_true(json_object_object_get_ex(e, "runtime", &v));
		}
		assert_int_equal(seen, 3);
		json_object_put(arr);
	}
	free(buf);

	nvmfd_rt_group_put(g, a);
	assert_int_equal(nvmfd_rt_group_count(g), 2); /* a2 still holds it */
	nvmfd_rt_group_put(g, a2);
	assert_int_equal(nvmfd_rt_group_count(g), 1);
	nvmfd_rt_group_put(g, b);
	assert_int_equal(nvmfd_rt_group_count(g), 0);
	/* destroy waits for the reapers of both runtimes */
	nvmfd_rt_group_destroy(&g);
	assert_null(g);
}

/* The last reference dropped from a work item of that very runtime: the
 * runtime must be destroyed elsewhere (a worker cannot join itself). */
struct self_put {
	struct nvmfd_work w;
	struct nvmfd_rt_group *g;
	struct nvmfd_rt *rt;
	long done;
};

static void self_put_fn(struct nvmfd_work *w)
{
	struct self_put *sp = (struct self_put *)(void *)w;

	nvmfd_rt_group_put(sp->g, sp->rt);
	__atomic_store_n(&sp->done, 1, __ATOMIC_RELEASE);
}

static void test_group_put_from_worker(void **state)
{
	struct nvmfd_rt_opts o;
	struct self_put sp = { 0 };

	(void)state;
	opts_for(&o, "x");
	assert_int_equal(nvmfd_rt_group_create(&o, "self", &sp.g), 0);
	assert_int_equal(nvmfd_rt_group_get(sp.g, 1, 1, &sp.rt), 0);
	nvmfd_work_init(&sp.w, sp.rt, self_put_fn, 0);
	assert_true(nvmfd_rt_queue_work(&sp.w));
	wait_ge(&sp.done, 1);
	/* the item is done with its runtime; destroy joins the reaper */
	nvmfd_rt_group_destroy(&sp.g);
	assert_null(sp.g);
}

/* ---------------------------------------------------------------- */
/* nvmfd_rt_work_move()                                              */
/* ---------------------------------------------------------------- */

struct mover {
	struct nvmfd_work w;
	int efd; /* watched eventfd, -1: none */
	long runs;
	long runs_a; /* on a thread of runtime "rta" */
	long runs_b; /* on a thread of runtime "rtb" */
	long wrong; /* a run found the item not current */
	long rearm_err;
};

static void mover_fn(struct nvmfd_work *w)
{
	struct mover *m = (struct mover *)(void *)w;
	char name[32] = "";
	uint64_t v;
	int ret;

	if (nvmfd_rt_current_work() != w)
		__atomic_add_fetch(&m->wrong, 1, __ATOMIC_RELAXED);
	pthread_getname_np(pthread_self(), name, sizeof(name));
	if (!strncmp(name, "rta", 3))
		__atomic_add_fetch(&m->runs_a, 1, __ATOMIC_RELAXED);
	else if (!strncmp(name, "rtb", 3))
		__atomic_add_fetch(&m->runs_b, 1, __ATOMIC_RELAXED);
	if (m->efd >= 0) {
		if (read(m->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			__atomic_add_fetch(&m->rearm_err, 1, __ATOMIC_RELAXED);
		ret = nvmfd_rt_watch_fd(w, m->efd, EPOLLIN);
		/* -ECANCELED: a run that a kick started on the old pool while
		 * the move cancels the item; the move's own run re-arms */
		if (ret && ret != -ECANCELED)
			__atomic_add_fetch(&m->rearm_err, 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&m->runs, 1, __ATOMIC_RELEASE);
}

struct kicker {
	struct nvmfd_work *w;
	long stop;
	long kicks;
};

static void *kicker_main(void *arg)
{
	struct kicker *k = arg;

	while (!ld(&k->stop)) {
		nvmfd_rt_queue_work(k->w);
		__atomic_add_fetch(&k->kicks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_move_between_runtimes(void **state)
{
	struct nvmfd_rt_opts oa, ob;
	struct nvmfd_rt *a, *b;
	struct mover m = { .efd = -1 };
	struct kicker k[2] = { { .w = &m.w }, { .w = &m.w } };
	pthread_t th[2];
	long before, a_after;
	uint64_t one = 1;

	(void)state;
	opts_for(&oa, "rta");
	opts_for(&ob, "rtb");
	assert_int_equal(nvmfd_rt_create(&oa, &a), 0);
	assert_int_equal(nvmfd_rt_create(&ob, &b), 0);
	m.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(m.efd >= 0);
	nvmfd_work_init(&m.w, a, mover_fn, 0);
	assert_int_equal(nvmfd_rt_watch_fd(&m.w, m.efd, EPOLLIN), 0);
	assert_int_equal(write(m.efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	wait_ge(&m.runs, 1);
	assert_true(ld(&m.runs_a) >= 1);
	assert_int_equal(ld(&m.runs_b), 0);

	/* kicks from two threads race with the move: none may be lost in a
	 * way that crashes, and afterwards the item runs on b only */
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, kicker_main, &k[i]), 0);
	wait_ge(&k[0].kicks, 100);
	before = ld(&m.runs);
	assert_int_equal(nvmfd_rt_work_move(&m.w, b, 0, &m.efd, 1), 0);
	a_after = ld(&m.runs_a);
	wait_ge(&m.runs, before + 2);
	for (int i = 0; i < 2; i++) {
		__atomic_store_n(&k[i].stop, 1, __ATOMIC_RELEASE);
		pthread_join(th[i], NULL);
	}
	wait_ge(&m.runs_b, 1);
	/* no run on a after the move returned */
	assert_int_equal(ld(&m.runs_a), a_after);

	/* readiness follows: the first run on b re-armed the eventfd there */
	before = ld(&m.runs_b);
	assert_int_equal(write(m.efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	wait_ge(&m.runs_b, before + 1);
	assert_int_equal(ld(&m.runs_a), a_after);
	assert_int_equal(ld(&m.wrong), 0);
	assert_int_equal(ld(&m.rearm_err), 0);

	/* bad arguments */
	assert_int_equal(nvmfd_rt_work_move(&m.w, NULL, 0, NULL, 0), -EINVAL);

	nvmfd_rt_work_cancel_sync(&m.w);
	nvmfd_rt_unwatch_fd(&m.w, m.efd);
	close(m.efd);
	nvmfd_rt_destroy(a);
	nvmfd_rt_destroy(b);
}

/* A move onto the same runtime, another io_cpu: still one run after. */
static void test_move_same_runtime(void **state)
{
	struct nvmfd_rt_opts o;
	struct nvmfd_rt *a;
	struct mover m = { .efd = -1 };

	(void)state;
	opts_for(&o, "rta");
	assert_int_equal(nvmfd_rt_create(&o, &a), 0);
	nvmfd_work_init(&m.w, a, mover_fn, 0);
	assert_int_equal(nvmfd_rt_work_move(&m.w, a, 1, NULL, 0), 0);
	wait_ge(&m.runs, 1);
	nvmfd_rt_work_cancel_sync(&m.w);
	assert_int_equal(ld(&m.wrong), 0);
	nvmfd_rt_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_refs),
		cmocka_unit_test(test_group_put_from_worker),
		cmocka_unit_test(test_move_between_runtimes),
		cmocka_unit_test(test_move_same_runtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
