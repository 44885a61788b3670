// SPDX-License-Identifier: MIT
/*
 * test_proc.c - the /proc readers of src/util/proc.c that --exec auto's
 * watchdog uses every tick: the schedstat-only run delay, the PSI "some"
 * total (parsed from files written here, so any kernel runs it), and the
 * cgroup file lookup.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal/proc.h"

static char g_path[64];

static void write_file(const char *text)
{
	FILE *f;

	snprintf(g_path, sizeof(g_path), "/tmp/nvmfd-psi-%d", (int)getpid());
	f = fopen(g_path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_psi_parse(void **state)
{
	uint64_t t = 1;

	(void)state;
	write_file("some avg10=86.94 avg60=35.37 avg300=19.40 total=5833135017\n"
		   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), 0);
	assert_true(t == 5833135017ull);
	/* "some" only (older kernels have no "full" line for cpu) */
	write_file("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), 0);
	assert_true(t == 42);
	/* the total of "full" must not be taken for "some" */
	write_file("some avg10=0.00 avg60=0.00 avg300=0.00\nfull total=7\n");
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), -ENODATA);
	assert_true(t == 0);
	write_file("garbage\n");
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), -ENODATA);
	write_file("");
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), -ENODATA);
	unlink(g_path);
	assert_int_equal(nvmfd__proc_psi_some_us(g_path, &t), -ENOENT);
}

static void test_run_delay_self(void **state)
{
	uint64_t d = 1;
	int ret;

	(void)state;
	ret = nvmfd__proc_task_run_delay(0, (int)gettid(), &d);
	if (ret == -ENOENT) { /* kernel without schedstat */
		assert_true(d == 0);
		return;
	}
	assert_int_equal(ret, 0);
	/* a dead thread id: an error, 0 */
	assert_true(nvmfd__proc_task_run_delay(0, 0x7ffffff0, &d) < 0);
	assert_true(d == 0);
}

static void test_cgroup_file(void **state)
{
	char buf[512];
	int ret;

	(void)state;
	ret = nvmfd__proc_cgroup_file("cgroup.procs", buf, sizeof(buf));
	if (ret) { /* no cgroup v2 here */
		assert_int_equal(ret, -ENOENT);
		return;
	}
	assert_int_equal(access(buf, R_OK), 0);
	assert_non_null(strstr(buf, "/cgroup.procs"));
	assert_null(strstr(buf, "//"));
	assert_int_equal(nvmfd__proc_cgroup_file("no-such-file", buf, sizeof(buf)), -ENOENT);
	/* too small a buffer is not a path */
	assert_int_equal(nvmfd__proc_cgroup_file("cgroup.procs", buf, 4), -ENOENT);
}

/* /proc/stat and /proc/schedstat per CPU, from files written here (an
 * offline CPU 1, a CPU beyond the table, schedstat version 15 lines). */
static void test_cpus_parse(void **state)
{
	char stat_path[80], sched_path[80];
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t tick = 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
	struct nvmfd_proc_cpu c[3];
	bool has_delay = true;
	FILE *f;

	(void)state;
	snprintf(stat_path, sizeof(stat_path), "/tmp/nvmfd-stat-%d", (int)getpid());
	snprintf(sched_path, sizeof(sched_path), "/tmp/nvmfd-schedstat-%d", (int)getpid());
	f = fopen(stat_path, "w");
	assert_non_null(f);
	fputs("cpu  300 0 100 1000 10 0 5 0 0 0\n"
	      "cpu0 100 0 50 400 5 0 2 0 0 0\n"
	      "cpu2 200 1 50 600 5 0 3 1 7 0\n"
	      "cpu9 1 1 1 1 1 1 1 1 0 0\n"
	      "intr 12345 0 0 0\n"
	      "cpu3 1 1 1 1 1 1 1 1 0 0\n",
	      f);
	fclose(f);
	unlink(sched_path);
	assert_int_equal(nvmfd__proc_cpus(stat_path, sched_path, c, 3, &has_delay), 3);
	assert_false(has_delay); /* no schedstat file */
	assert_true(c[0].online && !c[1].online && c[2].online);
	assert_true(c[0].idle_ns == 405 * tick);
	assert_true(c[0].total_ns == 557 * tick);
	assert_true(c[0].nice_ns == 0 && c[2].nice_ns == 1 * tick);
	/* steal counts, guest (already in user) does not */
	assert_true(c[2].total_ns == 860 * tick);
	assert_true(c[1].total_ns == 0);

	f = fopen(sched_path, "w");
	assert_non_null(f);
	fputs("version 15\ntimestamp 4295\n"
	      "cpu0 0 0 10 5 7 3 15180305155 1160289512 2010766\n"
	      "domain0 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	      "cpu2 0 0 10 5 7 3 99 4242 1\n"
	      "cpu1 short\n",
	      f);
	fclose(f);
	assert_int_equal(nvmfd__proc_cpus(stat_path, sched_path, c, 3, &has_delay), 3);
	assert_true(has_delay);
	assert_true(c[0].run_delay_ns == 1160289512ull);
	assert_true(c[2].run_delay_ns == 4242);
	assert_true(c[1].run_delay_ns == 0);
	unlink(sched_path);
	unlink(stat_path);
	assert_true(nvmfd__proc_cpus(stat_path, NULL, c, 3, &has_delay) == -ENOENT);
	/* the real files: at least CPU 0 or another online one */
	assert_true(nvmfd__proc_cpus(NULL, NULL, c, 3, &has_delay) > 0);
}

static void test_task_sched_self(void **state)
{
	uint64_t exec = 0, delay = 0;
	volatile unsigned long spin = 0;

	(void)state;
	for (unsigned long i = 0; i < 20000000ul; i++)
		spin += i;
	if (nvmfd__proc_task_sched(0, 0, &exec, &delay) == -ENOENT)
		skip(); /* no CONFIG_SCHED_INFO */
	assert_true(exec > 0);
	assert_int_equal(nvmfd__proc_task_sched(0, 0x7ffffff0, &exec, &delay), -ENOENT);
	assert_true(exec == 0 && delay == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psi_parse),
		cmocka_unit_test(test_run_delay_self),
		cmocka_unit_test(test_cgroup_file),
		cmocka_unit_test(test_cpus_parse),
		cmocka_unit_test(test_task_sched_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
