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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psi_parse),
		cmocka_unit_test(test_run_delay_self),
		cmocka_unit_test(test_cgroup_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
