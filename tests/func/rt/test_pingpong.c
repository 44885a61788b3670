// SPDX-License-Identifier: MIT
/*
 * test_pingpong.c - two work items on (up to) two CPUs hand a token back
 * and forth, first by nvmfd_rt_queue_work() (cross-thread kick), then by an
 * eventfd each watches (readiness path), in each runtime mode. A third
 * item re-queues itself (coalescing fast path). Prints per-round-trip
 * latency and the runtime stats JSON; asserts only that every hand-off
 * happened exactly once. Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal/rt.h"

#define ROUNDS 20000

struct player {
	struct nvmfd_work work;
	struct player *peer;
	int efd; /* readiness mode: my eventfd */
	bool by_fd;
	long hits;
	long *done;
};

static long ld(const long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void player_fn(struct nvmfd_work *w)
{
	struct player *p = (struct player *)w;
	uint64_t v = 1;

	if (p->by_fd) {
		if (read(p->efd, &v, sizeof(v)) != sizeof(v))
			goto rearm; /* spurious: nothing to do */
	}
	__atomic_add_fetch(&p->hits, 1, __ATOMIC_ACQ_REL);
	if (ld(&p->hits) + ld(&p->peer->hits) >= 2 * ROUNDS) {
		__atomic_store_n(p->done, 1, __ATOMIC_RELEASE);
		goto rearm;
	}
	if (p->by_fd) {
		v = 1;
		if (write(p->peer->efd, &v, sizeof(v)) != sizeof(v))
			abort();
	} else {
		nvmfd_rt_queue_work(&p->peer->work);
	}
rearm:
	if (p->by_fd)
		nvmfd_rt_watch_fd(w, p->efd, EPOLLIN);
}

static long self_runs;

static void self_fn(struct nvmfd_work *w)
{
	if (__atomic_add_fetch(&self_runs, 1, __ATOMIC_ACQ_REL) < ROUNDS * 5)
		nvmfd_rt_queue_work(w);
}

static int wait_done(const long *flag)
{
	for (int i = 0; i < 600000 && !ld(flag); i++)
		usleep(100);
	return ld(flag) ? 0 : -ETIMEDOUT;
}

static int run_mode(const char *label, enum nvmfd_rt_mode mode, enum nvmfd_rt_scope scope,
		    const cpu_set_t *cpus, int cpu_a, int cpu_b)
{
	struct nvmfd_rt_opts opts;
	struct player a, b;
	struct nvmfd_work self;
	struct nvmfd_rt *rt;
	long done = 0;
	uint64_t t0, t1, t2;
	int ret;

	nvmfd_rt_opts_init(&opts);
	opts.mode = mode;
	opts.scope = scope;
	opts.cpus = *cpus;
	ret = nvmfd_rt_create(&opts, &rt);
	if (ret) {
		fprintf(stderr, "%s: create: %s\n", label, strerror(-ret));
		return ret;
	}
	for (int by_fd = 0; by_fd < 2; by_fd++) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		done = 0;
		nvmfd_work_init(&a.work, rt, player_fn, cpu_a);
		nvmfd_work_init(&b.work, rt, player_fn, cpu_b);
		a.peer = &b;
		b.peer = &a;
		a.done = b.done = &done;
		a.by_fd = b.by_fd = by_fd;
		a.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		b.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (a.efd < 0 || b.efd < 0)
			return -errno;
		if (by_fd) {
			uint64_t one = 1;

			if (nvmfd_rt_watch_fd(&a.work, a.efd, EPOLLIN) ||
			    nvmfd_rt_watch_fd(&b.work, b.efd, EPOLLIN))
				return -EIO;
			t0 = nvmfd_now_ns();
			if (write(a.efd, &one, sizeof(one)) != sizeof(one))
				return -EIO;
		} else {
			t0 = nvmfd_now_ns();
			nvmfd_rt_queue_work(&a.work);
		}
		ret = wait_done(&done);
		t1 = nvmfd_now_ns();
		nvmfd_rt_work_cancel_sync(&a.work);
		nvmfd_rt_work_cancel_sync(&b.work);
		if (by_fd) {
			nvmfd_rt_unwatch_fd(&a.work, a.efd);
			nvmfd_rt_unwatch_fd(&b.work, b.efd);
		}
		close(a.efd);
		close(b.efd);
		if (ret || ld(&a.hits) != ROUNDS || ld(&b.hits) != ROUNDS) {
			fprintf(stderr, "%s %s: hits %ld/%ld, want %d each\n", label,
				by_fd ? "eventfd" : "queue_work", ld(&a.hits), ld(&b.hits), ROUNDS);
			nvmfd_rt_destroy(rt);
			return -EIO;
		}
		printf("%-22s %-10s cpus %d->%d: %7.2f us per hand-off\n", label,
		       by_fd ? "eventfd" : "queue_work", cpu_a, cpu_b,
		       (double)(t1 - t0) / 1000.0 / (2.0 * ROUNDS));
	}

	self_runs = 0;
	nvmfd_work_init(&self, rt, self_fn, cpu_a);
	t0 = nvmfd_now_ns();
	nvmfd_rt_queue_work(&self);
	while (ld(&self_runs) < ROUNDS * 5)
		usleep(100);
	t2 = nvmfd_now_ns();
	nvmfd_rt_work_cancel_sync(&self);
	printf("%-22s %-10s cpu %d:     %7.3f us per run\n", label, "self-queue", cpu_a,
	       (double)(t2 - t0) / 1000.0 / (ROUNDS * 5.0));
	nvmfd_rt_stats_json(rt, stdout);
	printf("\n");
	nvmfd_rt_destroy(rt);
	return 0;
}

int main(void)
{
	cpu_set_t mine, cpus;
	int cpu[2], n = 0;

	if (sched_getaffinity(0, sizeof(mine), &mine))
		return 1;
	CPU_ZERO(&cpus);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++) {
		if (CPU_ISSET(c, &mine)) {
			CPU_SET(c, &cpus);
			cpu[n++] = c;
		}
	}
	if (n < 2)
		cpu[1] = cpu[0];
	if (run_mode("bound", NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, &cpus, cpu[0], cpu[1]) ||
	    run_mode("bound same-cpu", NVMFD_RT_BOUND, NVMFD_RT_SCOPE_CACHE, &cpus, cpu[0],
		     cpu[0]) ||
	    run_mode("unbound cpu", NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_CPU, &cpus, cpu[0], cpu[1]) ||
	    run_mode("unbound system", NVMFD_RT_UNBOUND, NVMFD_RT_SCOPE_SYSTEM, &cpus, cpu[0],
		     cpu[1]))
		return 1;
	return 0;
}
