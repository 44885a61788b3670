// SPDX-License-Identifier: MIT
/* test_place.c - rr / least-loaded / incoming-cpu placement and accounting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rt/rt_int.h"

static struct nvmfd__rt_placer *placer(const char *list)
{
	struct nvmfd__rt_placer *p = malloc(sizeof(*p));
	cpu_set_t set;

	assert_non_null(p);
	assert_true(nvmfd__rt_parse_cpulist(list, &set) > 0);
	assert_int_equal(nvmfd__rt_placer_init(p, &set), 0);
	return p;
}

static void put_placer(struct nvmfd__rt_placer *p)
{
	nvmfd__rt_placer_fini(p);
	free(p);
}

static void test_empty_set(void **state)
{
	struct nvmfd__rt_placer p;
	cpu_set_t none;

	CPU_ZERO(&none);
	assert_int_equal(nvmfd__rt_placer_init(&p, &none), -EINVAL);
}

static void test_rr(void **state)
{
	static const struct {
		unsigned int qid;
		int cpu;
	} cases[] = {
		{ 0, 1 }, { 1, 1 }, { 2, 3 }, { 3, 5 }, { 4, 1 }, { 5, 3 }, { 7, 1 },
	};
	struct nvmfd__rt_placer *p = placer("1,3,5");
	cpu_set_t only5;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int cpu = nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_RR, cases[i].qid, NULL, -1);

		if (cpu != cases[i].cpu)
			fail_msg("qid %u: got cpu %d want %d", cases[i].qid, cpu, cases[i].cpu);
	}
	assert_int_equal(nvmfd__rt_placer_count(p, 1), 4);
	assert_int_equal(nvmfd__rt_placer_count(p, 3), 2);
	assert_int_equal(nvmfd__rt_placer_count(p, 5), 1);
	/* rr is the legacy scheme: the allowed set does not change it */
	CPU_ZERO(&only5);
	CPU_SET(5, &only5);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_RR, 1, &only5, -1), 1);
	nvmfd__rt_placer_unplace(p, 1);
	nvmfd__rt_placer_unplace(p, 1);
	assert_int_equal(nvmfd__rt_placer_count(p, 1), 3);
	put_placer(p);
}

static void test_least_loaded(void **state)
{
	struct nvmfd__rt_placer *p = placer("0-3");
	int order[8];

	/* all equal -> lowest, then spread */
	for (int i = 0; i < 8; i++)
		order[i] = nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 9, NULL, -1);
	for (int i = 0; i < 8; i++)
		assert_int_equal(order[i], i % 4);
	for (int c = 0; c < 4; c++)
		assert_int_equal(nvmfd__rt_placer_count(p, c), 2);

	/* releasing one makes that CPU the least loaded */
	nvmfd__rt_placer_unplace(p, 2);
	assert_int_equal(nvmfd__rt_placer_count(p, 2), 1);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 1, NULL, -1), 2);
	/* equal again -> lowest */
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 1, NULL, -1), 0);

	/* unplace below zero and of foreign CPUs is ignored */
	for (int i = 0; i < 5; i++)
		nvmfd__rt_placer_unplace(p, 3);
	assert_int_equal(nvmfd__rt_placer_count(p, 3), 0);
	nvmfd__rt_placer_unplace(p, -1);
	nvmfd__rt_placer_unplace(p, 5000);
	put_placer(p);
}

static void test_least_loaded_allowed(void **state)
{
	struct nvmfd__rt_placer *p = placer("0-7");
	cpu_set_t allowed, foreign;

	CPU_ZERO(&allowed);
	CPU_SET(6, &allowed);
	CPU_SET(2, &allowed);
	CPU_SET(100, &allowed); /* not a runtime CPU: never chosen */
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 1, &allowed, -1), 2);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 2, &allowed, -1), 6);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 3, &allowed, -1), 2);
	/* now 0 is least loaded overall */
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 4, NULL, -1), 0);
	/* an allowed set without runtime CPUs means all of them */
	CPU_ZERO(&foreign);
	CPU_SET(200, &foreign);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 5, &foreign, -1), 1);
	put_placer(p);
}

static void test_incoming_cpu(void **state)
{
	struct nvmfd__rt_placer *p = placer("0-3");

	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_INCOMING_CPU, 1, NULL, 3), 3);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_INCOMING_CPU, 2, NULL, 3), 3);
	assert_int_equal(nvmfd__rt_placer_count(p, 3), 2);
	/* unknown or foreign incoming CPU: least-loaded */
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_INCOMING_CPU, 3, NULL, -1), 0);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_INCOMING_CPU, 4, NULL, 9), 1);
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_INCOMING_CPU, 5, NULL, 5000), 2);
	/* the counters are shared with least-loaded: 3 now has 2, others 1 */
	assert_int_equal(nvmfd__rt_placer_place(p, NVMFD_RT_PLACE_LEAST_LOADED, 6, NULL, -1), 0);
	put_placer(p);
}

/* Through the runtime API, on the real (up to 2) CPUs. */
static void test_rt_place(void **state)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt;
	cpu_set_t mine;
	int first = -1, n = 0, a, b;

	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	nvmfd_rt_opts_init(&opts);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++) {
		if (CPU_ISSET(c, &mine)) {
			CPU_SET(c, &opts.cpus);
			if (first < 0)
				first = c;
			n++;
		}
	}
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	assert_int_equal(nvmfd_rt_ncpus(rt), (unsigned int)n);
	a = nvmfd_rt_place(rt, NVMFD_RT_PLACE_LEAST_LOADED, 1, NULL, -1);
	assert_int_equal(a, first);
	b = nvmfd_rt_place(rt, NVMFD_RT_PLACE_LEAST_LOADED, 2, NULL, -1);
	assert_true(CPU_ISSET(b, &opts.cpus));
	if (n == 2)
		assert_int_not_equal(a, b);
	nvmfd_rt_unplace(rt, a);
	assert_int_equal(nvmfd_rt_place(rt, NVMFD_RT_PLACE_LEAST_LOADED, 3, NULL, -1), a);
	nvmfd_rt_destroy(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_set),
		cmocka_unit_test(test_rr),
		cmocka_unit_test(test_least_loaded),
		cmocka_unit_test(test_least_loaded_allowed),
		cmocka_unit_test(test_incoming_cpu),
		cmocka_unit_test(test_rt_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
