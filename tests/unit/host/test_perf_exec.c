// SPDX-License-Identifier: MIT
/*
 * test_perf_exec.c - nvmf-perf's execution options: CPU lists, the blk-mq
 * style queue groups, io_cpu choice on the runtime's placement counters.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../../tools/nvmf-perf/perf.h"
#include "rt/rt_int.h"

#define TRID "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x:y"

static int parse(struct perf_opts *o, char *err, size_t len, int argc, const char *const *argv)
{
	return perf_parse_args(argc, (char **)(uintptr_t)argv, o, err, len);
}

static void test_cpulist(void **state)
{
	cpu_set_t s;
	char buf[64];

	(void)state;
	assert_int_equal(perf_parse_cpulist("0-3,6,8-9", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 7);
	assert_true(CPU_ISSET(0, &s) && CPU_ISSET(3, &s) && CPU_ISSET(6, &s) && CPU_ISSET(9, &s));
	assert_false(CPU_ISSET(4, &s) || CPU_ISSET(7, &s));
	nvmfd__cpulist_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,6,8-9");
	assert_int_equal(perf_parse_cpulist("5", &s), 0);
	nvmfd__cpulist_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "5");
	assert_int_equal(perf_parse_cpulist("", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("3-1", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("1,", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("a", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("1-", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("-1", &s), -EINVAL);
	assert_int_equal(perf_parse_cpulist("1024", &s), -EINVAL);
	CPU_ZERO(&s);
	nvmfd__cpulist_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* truncation keeps a terminated prefix */
	assert_int_equal(perf_parse_cpulist("0,2,4,6,8,10", &s), 0);
	nvmfd__cpulist_format(&s, buf, 6);
	assert_string_equal(buf, "0,2,4");
}

static void test_exec_args(void **state)
{
	const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "unbound", "--affinity-scope",
			       "numa", "--affinity-strict", "--io-cpu", "least-loaded", "--cpus",
			       "0-1", "--idle-poll-us", "50", "--rx-budget", "64k", "--tx-budget",
			       "4096" };
	const char *defaults[] = { "nvmf-perf", "-r", TRID };
	struct perf_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err, sizeof(err), sizeof(argv) / sizeof(argv[0]), argv), 0);
	assert_int_equal(o.exec, PERF_EXEC_UNBOUND);
	assert_int_equal(o.scope, NVMFD_RT_SCOPE_NUMA);
	assert_true(o.strict);
	assert_int_equal(o.io_cpu, PERF_IO_CPU_LEAST_LOADED);
	assert_true(o.have_cpus);
	assert_int_equal(CPU_COUNT(&o.cpus), 2);
	assert_int_equal(o.idle_poll_us, 50);
	assert_int_equal(o.rx_budget, 65536);
	assert_int_equal(o.tx_budget, 4096);

	assert_int_equal(parse(&o, err, sizeof(err), 3, defaults), 0);
	assert_int_equal(o.exec, PERF_EXEC_AUTO); /* the default since session 30 */
	assert_true(o.exec_default);
	assert_int_equal(o.scope, NVMFD_RT_SCOPE_CACHE);
	assert_false(o.strict);
	assert_int_equal(o.io_cpu, PERF_IO_CPU_RR);
	assert_false(o.have_cpus);
	assert_int_equal(o.idle_poll_us, 0);
	assert_int_equal(o.rx_budget, 0);
	assert_int_equal(o.tx_budget, 0);
	assert_false(o.busy_poll);
}

static void test_exec_args_bad(void **state)
{
	static const char *const bad[][2] = {
		{ "--exec", "pinned" },	       { "--affinity-scope", "llc" },
		{ "--io-cpu", "incoming-cpu" }, { "--cpus", "1-0" },
		{ "--idle-poll-us", "-1" },     { "--rx-budget", "2g" },
		{ "--tx-budget", "x" },
	};
	struct perf_opts o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = { "nvmf-perf", "-r", TRID, bad[i][0], bad[i][1] };

		err[0] = '\0';
		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), -EINVAL);
		assert_non_null(strstr(err, bad[i][0]));
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(perf_exec_name(PERF_EXEC_BOUND), "bound");
	assert_string_equal(perf_exec_name(PERF_EXEC_UNBOUND), "unbound");
	assert_string_equal(perf_scope_name(NVMFD_RT_SCOPE_CPU), "cpu");
	assert_string_equal(perf_scope_name(NVMFD_RT_SCOPE_SMT), "smt");
	assert_string_equal(perf_scope_name(NVMFD_RT_SCOPE_CACHE), "cache");
	assert_string_equal(perf_scope_name(NVMFD_RT_SCOPE_NUMA), "numa");
	assert_string_equal(perf_scope_name(NVMFD_RT_SCOPE_SYSTEM), "system");
	assert_string_equal(perf_io_cpu_name(PERF_IO_CPU_RR), "rr");
	assert_string_equal(perf_io_cpu_name(PERF_IO_CPU_LEAST_LOADED), "least-loaded");
}

/* Expect group @q of (@ncpus from @list, @nq queues) to be exactly @want. */
static void check_group(const int *list, unsigned int ncpus, unsigned int nq, unsigned int q,
			const char *want)
{
	cpu_set_t g, w;

	assert_int_equal(perf_parse_cpulist(want, &w), 0);
	assert_int_equal(perf_hwq_group(list, ncpus, nq, q, &g), CPU_COUNT(&w));
	assert_true(CPU_EQUAL(&g, &w));
}

static void test_hwq_group(void **state)
{
	static const int eight[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const int odd[] = { 2, 3, 5, 8, 9 };
	cpu_set_t g;

	(void)state;
	/* 8 CPUs, 2 queues: halves */
	check_group(eight, 8, 2, 0, "0-3");
	check_group(eight, 8, 2, 1, "4-7");
	/* 8 CPUs, 3 queues: 3 + 3 + 2 (first groups get the extra CPU) */
	check_group(eight, 8, 3, 0, "0-2");
	check_group(eight, 8, 3, 1, "3-5");
	check_group(eight, 8, 3, 2, "6-7");
	/* one queue: every CPU */
	check_group(eight, 8, 1, 0, "0-7");
	/* as many queues as CPUs: one each */
	for (unsigned int q = 0; q < 8; q++) {
		assert_int_equal(perf_hwq_group(eight, 8, 8, q, &g), 1);
		assert_true(CPU_ISSET((int)q, &g));
	}
	/* more queues than CPUs: queue i gets group i mod CPUs */
	check_group(eight, 2, 5, 0, "0");
	check_group(eight, 2, 5, 1, "1");
	check_group(eight, 2, 5, 4, "0");
	/* non-contiguous CPU list: groups follow list order */
	check_group(odd, 5, 2, 0, "2-3,5");
	check_group(odd, 5, 2, 1, "8-9");
	/* the groups of all queues partition the list */
	for (unsigned int nq = 1; nq <= 8; nq++) {
		cpu_set_t all;
		int total = 0;

		CPU_ZERO(&all);
		for (unsigned int q = 0; q < (nq < 8 ? nq : 8); q++) {
			total += perf_hwq_group(eight, 8, nq, q, &g);
			CPU_OR(&all, &all, &g);
		}
		assert_int_equal(total, 8);
		assert_int_equal(CPU_COUNT(&all), 8);
	}
	assert_int_equal(perf_hwq_group(eight, 0, 2, 0, &g), -EINVAL);
	assert_int_equal(perf_hwq_group(eight, 8, 0, 0, &g), -EINVAL);
	assert_int_equal(perf_hwq_group(NULL, 8, 2, 0, &g), -EINVAL);
}

struct placer_ctx {
	struct nvmfd__rt_placer p;
	unsigned int calls;
	enum nvmfd_rt_place last_policy;
	unsigned int last_qid;
	cpu_set_t last_allowed;
	bool last_had_allowed;
};

static int placer_cb(void *ctx, enum nvmfd_rt_place policy, unsigned int qid,
		     const cpu_set_t *allowed)
{
	struct placer_ctx *c = ctx;

	c->calls++;
	c->last_policy = policy;
	c->last_qid = qid;
	c->last_had_allowed = allowed != NULL;
	if (allowed)
		c->last_allowed = *allowed;
	return nvmfd__rt_placer_place(&c->p, policy, qid, allowed, -1);
}

static void placer_setup(struct placer_ctx *c, const char *cpus, int *list, unsigned int *n)
{
	cpu_set_t s;

	memset(c, 0, sizeof(*c));
	assert_int_equal(perf_parse_cpulist(cpus, &s), 0);
	assert_int_equal(nvmfd__rt_placer_init(&c->p, &s), 0);
	*n = 0;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (CPU_ISSET(i, &s))
			list[(*n)++] = i;
	}
}

static void test_io_cpu_rr(void **state)
{
	struct placer_ctx c;
	int list[CPU_SETSIZE];
	unsigned int n;

	(void)state;
	placer_setup(&c, "0-3", list, &n);
	/* rr: (qid - 1) mod CPUs, whatever the load */
	for (unsigned int q = 0; q < 6; q++) {
		int cpu = perf_choose_io_cpu(PERF_IO_CPU_RR, list, n, 6, q, placer_cb, &c);

		assert_int_equal(cpu, (int)(q % 4));
		assert_int_equal(c.last_policy, NVMFD_RT_PLACE_RR);
		assert_int_equal(c.last_qid, q + 1);
		assert_false(c.last_had_allowed);
	}
	/* accounted: CPUs 0 and 1 hold two queues, 2 and 3 one */
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 0), 2);
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 1), 2);
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 2), 1);
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 3), 1);
	nvmfd__rt_placer_fini(&c.p);

	/* rr over a CPU list that does not start at 0 */
	placer_setup(&c, "4,6", list, &n);
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_RR, list, n, 3, 0, placer_cb, &c), 4);
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_RR, list, n, 3, 1, placer_cb, &c), 6);
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_RR, list, n, 3, 2, placer_cb, &c), 4);
	nvmfd__rt_placer_fini(&c.p);
}

static void test_io_cpu_least_loaded(void **state)
{
	struct placer_ctx c;
	int list[CPU_SETSIZE];
	unsigned int n;
	cpu_set_t want;

	(void)state;
	placer_setup(&c, "0-7", list, &n);
	/* 2 queues on 8 CPUs: queue 1 in 0-3, queue 2 in 4-7; the group is
	 * what is passed to the placer */
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 0, placer_cb,
					    &c), 0);
	assert_int_equal(c.last_policy, NVMFD_RT_PLACE_LEAST_LOADED);
	assert_true(c.last_had_allowed);
	assert_int_equal(perf_parse_cpulist("0-3", &want), 0);
	assert_true(CPU_EQUAL(&c.last_allowed, &want));
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 1, placer_cb,
					    &c), 4);
	assert_int_equal(perf_parse_cpulist("4-7", &want), 0);
	assert_true(CPU_EQUAL(&c.last_allowed, &want));
	/* a second controller's queue 1 (same group) avoids the loaded CPU 0 */
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 0, placer_cb,
					    &c), 1);
	/* load placed by someone else (e.g. another rr user) is seen too */
	assert_int_equal(nvmfd__rt_placer_place(&c.p, NVMFD_RT_PLACE_RR, 3, NULL, -1), 2);
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 0, placer_cb,
					    &c), 3);
	/* the group is full at one queue each: the lowest CPU again */
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 0, placer_cb,
					    &c), 0);
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 0), 2);
	/* unplace frees the CPU for the next queue */
	nvmfd__rt_placer_unplace(&c.p, 4);
	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 1, placer_cb,
					    &c), 4);
	nvmfd__rt_placer_fini(&c.p);

	/* more queues than CPUs: 4 queues on 2 CPUs spread 2 + 2 */
	placer_setup(&c, "0-1", list, &n);
	for (unsigned int q = 0; q < 4; q++)
		assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 4, q,
						    placer_cb, &c), (int)(q % 2));
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 0), 2);
	assert_int_equal(nvmfd__rt_placer_count(&c.p, 1), 2);
	assert_int_equal(c.calls, 4);
	nvmfd__rt_placer_fini(&c.p);

	assert_int_equal(perf_choose_io_cpu(PERF_IO_CPU_LEAST_LOADED, list, n, 2, 0, NULL, NULL),
			 -EINVAL);
}

static void test_proc_readers(void **state)
{
	struct perf_schedstat a, b;
	volatile uint64_t x = 0;
	int ret;

	(void)state;
	assert_true(perf_vm_hwm_kib() > 0);
	ret = perf_read_schedstat(&a);
	if (ret == -ENOENT) {
		skip();
		return;
	}
	assert_int_equal(ret, 0);
	for (uint64_t i = 0; i < 20000000; i++)
		x += i;
	assert_int_equal(perf_read_schedstat(&b), 0);
	assert_true(b.cpu_ns > a.cpu_ns);
	assert_true(b.timeslices >= a.timeslices);
	assert_true(b.run_delay_ns >= a.run_delay_ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_exec_args),
		cmocka_unit_test(test_exec_args_bad),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_hwq_group),
		cmocka_unit_test(test_io_cpu_rr),
		cmocka_unit_test(test_io_cpu_least_loaded),
		cmocka_unit_test(test_proc_readers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
