// SPDX-License-Identifier: MIT
/*
 * exec.c - nvmf-perf's execution model helpers: CPU lists, the blk-mq style
 * queue-to-CPU groups, io_cpu choice, and per-thread /proc readers.
 *
 * The queue threads are plain pthreads (one per qp, see main.c); the
 * runtime (src/rt) only supplies the topology (its pools are the affinity
 * scope units) and the per-CPU placement counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"

int perf_parse_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	if (!s || !*s || !set)
		return -EINVAL;
	CPU_ZERO(set);
	for (;;) {
		unsigned long a, b;

		/* an overflowing number reads as ULONG_MAX: out of range */
		if (nvmfd__cpulist_item(&p, &a, &b) || a >= CPU_SETSIZE || b >= CPU_SETSIZE || b < a)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
		if (!*p)
			return 0;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
}

const char *perf_exec_name(enum perf_exec e)
{
	return e == PERF_EXEC_UNBOUND ? "unbound" : e == PERF_EXEC_AUTO ? "auto" : "bound";
}

const char *perf_scope_name(enum nvmfd_rt_scope s)
{
	switch (s) {
	case NVMFD_RT_SCOPE_CPU:
		return "cpu";
	case NVMFD_RT_SCOPE_SMT:
		return "smt";
	case NVMFD_RT_SCOPE_CACHE:
		return "cache";
	case NVMFD_RT_SCOPE_NUMA:
		return "numa";
	case NVMFD_RT_SCOPE_SYSTEM:
		return "system";
	}
	return "?";
}

const char *perf_io_cpu_name(enum perf_io_cpu p)
{
	return p == PERF_IO_CPU_LEAST_LOADED ? "least-loaded" : "rr";
}

int perf_hwq_group(const int *list, unsigned int ncpus, unsigned int nqueues, unsigned int qidx,
		   cpu_set_t *out)
{
	unsigned int groups, g, base, extra, first, size;

	if (!list || !ncpus || !nqueues || !out)
		return -EINVAL;
	groups = nqueues < ncpus ? nqueues : ncpus;
	g = qidx % groups;
	base = ncpus / groups;
	extra = ncpus % groups;
	first = g * base + (g < extra ? g : extra);
	size = base + (g < extra ? 1 : 0);
	CPU_ZERO(out);
	for (unsigned int i = first; i < first + size; i++) {
		if (list[i] < 0 || list[i] >= CPU_SETSIZE)
			return -EINVAL;
		CPU_SET(list[i], out);
	}
	return (int)size;
}

int perf_choose_io_cpu(enum perf_io_cpu policy, const int *list, unsigned int ncpus,
		       unsigned int nqueues, unsigned int qidx, perf_place_fn place, void *ctx)
{
	cpu_set_t group;
	int ret;

	if (!place)
		return -EINVAL;
	if (policy == PERF_IO_CPU_RR)
		return place(ctx, NVMFD_RT_PLACE_RR, qidx + 1, NULL);
	ret = perf_hwq_group(list, ncpus, nqueues, qidx, &group);
	if (ret < 0)
		return ret;
	return place(ctx, NVMFD_RT_PLACE_LEAST_LOADED, qidx + 1, &group);
}

int perf_read_schedstat(struct perf_schedstat *out)
{
	return perf_read_task_schedstat(0, out);
}

int perf_read_task_schedstat(int tid, struct perf_schedstat *out)
{
	char path[64];
	unsigned long long a, b, c;
	FILE *f;
	int n;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid ? tid : (int)gettid());
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu %llu", &a, &b, &c);
	fclose(f);
	if (n != 3)
		return -EINVAL;
	out->cpu_ns = a;
	out->run_delay_ns = b;
	out->timeslices = c;
	return 0;
}

uint64_t perf_vm_hwm_kib(void)
{
	char line[256];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "VmHWM: %llu kB", &v) == 1) {
			kib = v;
			break;
		}
	}
	fclose(f);
	return kib;
}
