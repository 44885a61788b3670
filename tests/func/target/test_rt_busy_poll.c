// SPDX-License-Identifier: MIT
/*
 * test_rt_busy_poll.c - regression test for a readiness starvation in the
 * runtime, the cause of a keep-alive expiry seen in kernel-host interop
 * (admin queue asleep on its socket, I/O queues idle-polling): a worker
 * only asked epoll what was ready when its run queue was empty, so items
 * that keep re-queueing themselves (idle polling, work left) on every
 * worker of a pool hid every fd that pool watches, for as long as they
 * kept at it.
 *
 * Deterministic: one CPU, one worker. A "spinner" item re-queues itself
 * until a "sleeper" item has run (or SPIN_MAX runs). In its first run the
 * spinner arms the sleeper on an eventfd that is already readable, so the
 * event can only be fetched by the (busy) worker itself. The sleeper must
 * run after a bounded number of spinner runs, not after the spinner gave up.
 * Checked with bound and unbound pools.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal/rt.h"

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,     \
				__LINE__, #c);                                     \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

/* The spinner's bound: far beyond any sane readiness latency in runs. */
#define SPIN_MAX 200000u
/* The runtime looks at readiness at least every 8 runs of a busy worker;
 * allow slack for the order of the run queue. */
#define SLEEPER_RUNS_BOUND 64u

struct scenario {
	struct nvmfd_work spinner;
	struct nvmfd_work sleeper;
	int efd;
	int watch_ret;
	unsigned int spins; /* spinner runs (spinner only) */
	unsigned int sleeper_seen_at; /* atomic: spins when the sleeper ran, 0 = never */
	int done; /* atomic: spinner stopped */
};

static void sleeper_fn(struct nvmfd_work *w)
{
	struct scenario *s = (struct scenario *)((char *)w - offsetof(struct scenario, sleeper));
	unsigned int at = __atomic_load_n(&s->spins, __ATOMIC_ACQUIRE);

	__atomic_store_n(&s->sleeper_seen_at, at ? at : 1, __ATOMIC_RELEASE);
}

static void spinner_fn(struct nvmfd_work *w)
{
	struct scenario *s = (struct scenario *)((char *)w - offsetof(struct scenario, spinner));
	unsigned int n = s->spins + 1;

	__atomic_store_n(&s->spins, n, __ATOMIC_RELEASE);
	if (n == 1) /* the worker is busy from now on: only it can fetch the event */
		s->watch_ret = nvmfd_rt_watch_fd(&s->sleeper, s->efd, EPOLLIN);
	if (!__atomic_load_n(&s->sleeper_seen_at, __ATOMIC_ACQUIRE) && n < SPIN_MAX) {
		nvmfd_rt_queue_work(&s->spinner);
		return;
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

static void run(enum nvmfd_rt_mode mode, int cpu)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt;
	struct scenario s;
	uint64_t one = 1;
	unsigned int at;

	memset(&s, 0, sizeof(s));
	nvmfd_rt_opts_init(&opts);
	opts.mode = mode;
	opts.scope = NVMFD_RT_SCOPE_CPU;
	opts.workers_per_pool = 1;
	CPU_ZERO(&opts.cpus);
	CPU_SET(cpu, &opts.cpus);
	opts.name = "busypoll";
	CHECK(nvmfd_rt_create(&opts, &rt) == 0);
	CHECK(nvmfd_rt_npools(rt) == 1);

	s.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(s.efd >= 0);
	CHECK(write(s.efd, &one, sizeof(one)) == (ssize_t)sizeof(one));
	nvmfd_work_init(&s.spinner, rt, spinner_fn, cpu);
	nvmfd_work_init(&s.sleeper, rt, sleeper_fn, cpu);
	CHECK(nvmfd_rt_queue_work(&s.spinner));

	/* The spinner ends on its own (sleeper seen, or SPIN_MAX runs). */
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE))
		usleep(1000);
	nvmfd_rt_work_cancel_sync(&s.spinner);
	nvmfd_rt_work_cancel_sync(&s.sleeper);
	CHECK(nvmfd_rt_unwatch_fd(&s.sleeper, s.efd) == 0);
	close(s.efd);

	at = __atomic_load_n(&s.sleeper_seen_at, __ATOMIC_ACQUIRE);
	printf("%s: sleeper ran after %u spinner runs (spinner stopped at %u)\n",
	       mode == NVMFD_RT_BOUND ? "bound" : "unbound", at, s.spins);
	CHECK(s.watch_ret == 0);
	CHECK(at != 0); /* the sleeper ran at all */
	CHECK(at <= SLEEPER_RUNS_BOUND); /* ... while the spinner was still spinning */
	CHECK(s.spins == at || s.spins == at + 1);
	nvmfd_rt_destroy(rt);
}

int main(void)
{
	cpu_set_t set;
	int cpu = -1;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	CHECK(cpu >= 0);
	run(NVMFD_RT_BOUND, cpu);
	run(NVMFD_RT_UNBOUND, cpu);
	return 0;
}
