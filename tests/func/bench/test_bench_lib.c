// SPDX-License-Identifier: MIT
/*
 * nvmf-bench internals without processes: CPU set specs against the real
 * online set, count specs, defaults/overrides merging, --quick, medians,
 * standard deviations and baseline ratios (exact values).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../../tools/nvmf-bench/bench.h"

volatile sig_atomic_t bench_stop_sig;

static int parse_text(const char *text, struct bench_scenario *sc, char *err, size_t len)
{
	struct json_object *root = json_tokener_parse(text);
	int ret;

	assert_non_null(root);
	ret = bench_scenario_parse(root, "test", sc, err, len);
	json_object_put(root);
	return ret;
}

static void test_cpuset(void **state)
{
	struct bench_cpuset online, out, target;
	char buf[256];

	(void)state;
	assert_int_equal(bench_cpuset_online(&online), 0);
	assert_true(online.nr >= 1);
	assert_int_equal(bench_cpuset_resolve("all", &online, &out), 0);
	assert_int_equal(out.nr, online.nr);
	assert_int_equal(bench_cpuset_resolve("half", &online, &out), 0);
	assert_int_equal(out.nr, online.nr / 2 ? online.nr / 2 : 1);
	assert_int_equal(out.cpu[0], online.cpu[0]);
	assert_int_equal(bench_cpuset_resolve("upper-half", &online, &out), 0);
	assert_int_equal(out.cpu[out.nr - 1], online.cpu[online.nr - 1]);
	assert_int_equal(bench_cpuset_resolve("first:1", &online, &out), 0);
	assert_int_equal(out.nr, 1);
	assert_int_equal(out.cpu[0], online.cpu[0]);
	assert_int_equal(bench_cpuset_resolve("last:100000", &online, &out), 0);
	assert_int_equal(out.nr, online.nr); /* clamped */
	target.nr = 1;
	target.cpu[0] = online.cpu[online.nr - 1];
	assert_int_equal(bench_cpuset_resolve("target", &target, &out), 0);
	assert_int_equal(out.nr, 1);
	assert_int_equal(out.cpu[0], target.cpu[0]);
	snprintf(buf, sizeof(buf), "%d", online.cpu[0]);
	assert_int_equal(bench_cpuset_resolve(buf, &online, &out), 0);
	assert_int_equal(out.nr, 1);
	assert_int_equal(bench_cpuset_resolve("1023", &online, &out), online.cpu[online.nr - 1] == 1023 ? 0 : -ENODEV);
	assert_int_equal(bench_cpuset_resolve("3-1", &online, &out), -EINVAL);
	assert_int_equal(bench_cpuset_resolve("0,,", &online, &out), -EINVAL);
	assert_int_equal(bench_cpuset_resolve("first:0", &online, &out), -EINVAL);
	assert_int_equal(bench_cpuset_resolve("x", &online, &out), -EINVAL);

	out.nr = 5;
	out.cpu[0] = 0;
	out.cpu[1] = 1;
	out.cpu[2] = 2;
	out.cpu[3] = 5;
	out.cpu[4] = 7;
	bench_cpuset_format(&out, buf, sizeof(buf));
	assert_string_equal(buf, "0-2,5,7");
}

static void test_count(void **state)
{
	struct bench_cpuset online;
	long v;

	(void)state;
	assert_int_equal(bench_cpuset_online(&online), 0);
	assert_int_equal(bench_count_resolve("3", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(bench_count_resolve("2*ncpu", &v), 0);
	assert_int_equal(v, 2 * online.nr);
	assert_int_equal(bench_count_resolve("0", &v), -EINVAL);
	assert_int_equal(bench_count_resolve("2*cpu", &v), -EINVAL);
	assert_int_equal(bench_count_resolve("", &v), -EINVAL);
}

static void test_defaults_and_quick(void **state)
{
	static const char text[] =
		"{\"name\": \"t\", \"duration\": 20, \"repeat\": 5,"
		" \"quick\": {\"duration\": 2, \"warmup\": 0, \"repeat\": 2},"
		" \"defaults\": {\"perf\": {\"qd\": 7, \"io_size\": \"8k\"},"
		"   \"target\": {\"exec\": \"unbound\", \"extra_args\": [\"--x\"]}},"
		" \"cells\": [{\"name\": \"a\"},"
		"   {\"name\": \"b\", \"quick\": false, \"perf\": {\"qd\": 9},"
		"    \"target\": {\"extra_args\": [\"--y\", \"--z\"]}, \"repeat\": 4}]}";
	struct bench_overrides ov = { .duration = -1, .warmup = -1 };
	struct bench_scenario sc;
	char err[256];

	(void)state;
	assert_int_equal(parse_text(text, &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.nr_cells, 2);
	assert_string_equal(sc.baseline, "a"); /* first cell by default */
	assert_int_equal(sc.cells[0].perf.qd, 7);
	assert_int_equal(sc.cells[0].perf.io_size, 8192);
	assert_int_equal(sc.cells[1].perf.qd, 9);
	assert_int_equal(sc.cells[1].perf.io_size, 8192);
	assert_string_equal(sc.cells[1].target.exec, "unbound");
	assert_int_equal(sc.cells[0].target.nr_extra, 1);
	assert_string_equal(sc.cells[0].target.extra[0], "--x");
	assert_int_equal(sc.cells[1].target.nr_extra, 2);
	assert_string_equal(sc.cells[1].target.extra[1], "--z");
	assert_int_equal(sc.cells[0].repeat, 5);
	assert_int_equal(sc.cells[1].repeat, 4);
	/* isolation by default: target lower half, initiator upper half */
	assert_string_equal(sc.cells[0].target.cpus, "half");
	assert_string_equal(sc.cells[0].perf.cpus, "upper-half");
	assert_string_equal(sc.cells[0].load.cpus, "target");
	assert_int_equal(sc.cells[0].perf.rate, 0);
	assert_true(sc.cells[0].duration == 20);

	ov.quick = true;
	bench_scenario_apply(&sc, &ov);
	assert_true(sc.cells[0].duration == 2);
	assert_true(sc.cells[0].warmup == 0);
	assert_int_equal(sc.cells[0].repeat, 2);
	assert_int_equal(sc.cells[1].repeat, 0); /* not in --quick */
	bench_scenario_free(&sc);

	assert_int_equal(parse_text(text, &sc, err, sizeof(err)), 0);
	ov.quick = false;
	ov.repeat = 3;
	ov.cell_filter = "b*";
	bench_scenario_apply(&sc, &ov);
	assert_int_equal(sc.cells[0].repeat, 0);
	assert_int_equal(sc.cells[1].repeat, 3);
	bench_scenario_free(&sc);
}

static void test_aggregate(void **state)
{
	static const char text[] = "{\"name\": \"t\", \"baseline\": \"a\", \"columns\": [\"iops\", \"p99\"],"
				   " \"cells\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\", "
				   "\"baseline\": \"c\"}]}";
	struct bench_scenario sc;
	struct bench_result *a, *b, *c;
	char err[256];

	(void)state;
	assert_int_equal(parse_text(text, &sc, err, sizeof(err)), 0);
	a = &sc.cells[0].res;
	b = &sc.cells[1].res;
	c = &sc.cells[2].res;
	/* a: 100, 300, 200 (one failed run with 999 is ignored) */
	a->nr = 4;
	a->ok[0] = a->ok[1] = a->ok[2] = true;
	a->v[0][BM_IOPS] = 100;
	a->v[1][BM_IOPS] = 300;
	a->v[2][BM_IOPS] = 200;
	a->v[3][BM_IOPS] = 999;
	a->have[0][BM_IOPS] = a->have[1][BM_IOPS] = a->have[2][BM_IOPS] = a->have[3][BM_IOPS] = true;
	/* b: 50, 70 -> median 60 */
	b->nr = 2;
	b->ok[0] = b->ok[1] = true;
	b->v[0][BM_IOPS] = 50;
	b->v[1][BM_IOPS] = 70;
	b->have[0][BM_IOPS] = b->have[1][BM_IOPS] = true;
	/* c: no successful run */
	c->nr = 1;
	bench_result_aggregate(&sc, 1);
	assert_int_equal(a->nr_ok, 3);
	assert_true(a->have_median[BM_IOPS]);
	assert_true(fabs(a->median[BM_IOPS] - 200) < 1e-9);
	assert_true(fabs(a->stddev[BM_IOPS] - 100) < 1e-9); /* sample stddev */
	assert_false(a->have_median[BM_P99]);
	assert_true(fabs(b->median[BM_IOPS] - 60) < 1e-9);
	assert_true(fabs(b->stddev[BM_IOPS] - sqrt(200)) < 1e-9);
	assert_true(fabs(a->ratio - 1) < 1e-9);
	assert_true(fabs(b->ratio - 0.3) < 1e-9);
	assert_int_equal(c->nr_ok, 0);
	assert_true(c->ratio == 0);
	/* paired: rounds 1 and 2 of b against a (50/100, 70/300) */
	assert_false(a->have_ci[BM_IOPS]); /* the baseline itself */
	assert_true(b->have_ci[BM_IOPS]);
	assert_int_equal(b->ci[BM_IOPS].n, 2);
	assert_true(fabs(b->ci[BM_IOPS].est - sqrt(0.5 * 70.0 / 300.0)) < 1e-9);
	assert_true(b->ci[BM_IOPS].lo >= 70.0 / 300.0 - 1e-9 && b->ci[BM_IOPS].hi <= 0.5 + 1e-9);
	assert_false(b->have_ci[BM_P99]);
	assert_false(c->have_ci[BM_IOPS]);
	bench_scenario_free(&sc);
}

static void test_builtins(void **state)
{
	int i, total = 0;

	(void)state;
	assert_int_equal(bench_builtin_count(), 7);
	for (i = 0; i < bench_builtin_count(); i++) {
		struct bench_scenario sc;
		char err[256];

		assert_int_equal(parse_text(bench_builtin_text(bench_builtin_name(i)), &sc, err, sizeof(err)), 0);
		assert_string_equal(sc.name, bench_builtin_name(i));
		assert_true(sc.nr_cells >= 2);
		total += sc.nr_cells;
		bench_scenario_free(&sc);
	}
	assert_int_equal(total, 12 + 6 + 4 + 3 + 8 + 32 + 2 + 8); /* ... + spdk-compare */
	assert_null(bench_builtin_text("nope"));
	assert_int_equal(bench_metric_lookup("p99.99"), BM_P9999);
	assert_int_equal(bench_metric_lookup("nope"), -ENOENT);
	assert_int_equal(bench_metric_lookup("target_syscalls_io"), BM_TGT_SYSCALLS_IO);
	assert_int_equal(bench_metric_lookup("iops_per_target_cpu_s"), BM_IOPS_PER_TGT_CPU_S);
}

/* The noise guard's arithmetic on synthetic snapshots, and a real one. */
static void test_noise_guard(void **state)
{
	struct bench_sys_sample a = { 0 }, b = { 0 };
	double tck = (double)sysconf(_SC_CLK_TCK);

	(void)state;
	a.t = 100;
	b.t = 101; /* 1 s */
	a.busy_ticks = 1000;
	b.busy_ticks = 1000 + (uint64_t)(2 * tck); /* the machine: 2 CPU-s */
	a.own_cpu_s = 3;
	b.own_cpu_s = 3.5; /* the bench and its children: 0.5 CPU-s */
	assert_true(fabs(bench_sys_foreign_cpus(&a, &b) - 1.5) < 1e-9);
	b.own_cpu_s = 6; /* more than the machine (tick rounding): never negative */
	assert_true(bench_sys_foreign_cpus(&a, &b) == 0);
	b.t = a.t; /* empty interval */
	assert_true(bench_sys_foreign_cpus(&a, &b) == 0);
	b.t = 102;
	a.steal_ticks = 0;
	b.steal_ticks = (uint64_t)tck; /* 1 CPU-s stolen over 2 s */
	assert_true(fabs(bench_sys_steal_cpus(&a, &b) - 0.5) < 1e-9);
	/* this machine: readable, sane */
	assert_int_equal(bench_sys_sample(&a), 0);
	bench_sleep(0.05);
	assert_int_equal(bench_sys_sample(&b), 0);
	assert_true(b.t > a.t && b.busy_ticks >= a.busy_ticks && b.own_cpu_s >= a.own_cpu_s);
	assert_true(a.loadavg1 >= 0);
	assert_true(a.psi_some_avg10 == -1 || (a.psi_some_avg10 >= 0 && a.psi_some_avg10 <= 100));
	assert_true(bench_sys_foreign_cpus(&a, &b) >= 0);
}

/* bench_proc_cpu_ns() and bench_proc_sample() on this process. */
static void test_proc_cpu(void **state)
{
	uint64_t ns0, ns1, ticks, v, i;
	volatile double x = 0;

	(void)state;
	assert_int_equal(bench_proc_cpu_ns(getpid(), &ns0), 0);
	for (long k = 0; k < 20000000; k++)
		x += (double)k;
	assert_int_equal(bench_proc_cpu_ns(getpid(), &ns1), 0);
	assert_true(ns1 > ns0);
	assert_int_equal(bench_proc_sample(getpid(), &ticks, &v, &i), 0);
	assert_true(v + i > 0 || ticks > 0);
	assert_int_equal(bench_proc_cpu_ns(0x7ffffff0, &ns0), -ESRCH);
}

/* A listening UNIX socket at @path (left bound: the file stays). */
static void make_sock(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

static void test_sockdir(void **state)
{
	char base[] = "/tmp/nvmf-bench-test-XXXXXX";
	char p[600], dir[512];
	struct stat st;
	pid_t dead;
	int wst;

	(void)state;
	assert_non_null(mkdtemp(base));
	/* a pid that no longer exists: a child that has exited and been reaped */
	dead = fork();
	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, &wst, 0), dead);
	/* what a SIGKILLed run leaves: its directory with a socket in it ... */
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d", base, (int)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d/bound.sock", base, (int)dead);
	make_sock(p);
	/* ... an old-style socket of a dead run ... */
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.bound.sock", base, (int)dead);
	make_sock(p);
	/* ... and what must stay: a live run's socket, unrelated names */
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.cell.sock", base, (int)getpid());
	make_sock(p);
	snprintf(p, sizeof(p), "%s/nvmf-bench.notes", base);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.txt", base, (int)dead);
	fclose(fopen(p, "w"));

	assert_int_equal(bench_sockdir_clean_stale(base), 2);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d", base, (int)dead);
	assert_int_equal(lstat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.bound.sock", base, (int)dead);
	assert_int_equal(lstat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.cell.sock", base, (int)getpid());
	assert_int_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/nvmf-bench.notes", base);
	assert_int_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.txt", base, (int)dead);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(bench_sockdir_clean_stale(base), 0);

	/* this run's private directory: 0700, named by our pid, removed with its sockets */
	assert_int_equal(bench_sockdir_create(base, dir, sizeof(dir)), 0);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d", base, (int)getpid());
	assert_string_equal(dir, p);
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s/cell.sock", dir);
	make_sock(p);
	/* a live owner: never stale */
	assert_int_equal(bench_sockdir_clean_stale(base), 0);
	assert_int_equal(bench_sockdir_destroy(dir), 0);
	assert_int_equal(lstat(dir, &st), -1);

	/* clean up the fixture */
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.cell.sock", base, (int)getpid());
	unlink(p);
	snprintf(p, sizeof(p), "%s/nvmf-bench.notes", base);
	unlink(p);
	snprintf(p, sizeof(p), "%s/nvmf-bench.%d.txt", base, (int)dead);
	unlink(p);
	assert_int_equal(rmdir(base), 0);
}

/* spdk_nvme_perf's report as v25.09 prints it (-L: latency summary) */
static void test_spdk_perf_parse(void **state)
{
	static const char one[] =
		"Initializing NVMe Controllers\n"
		"Attached to NVMeoF Controller at TCP (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmfd:bench)\n"
		"Initialization complete. Launching workers.\n"
		"========================================================\n"
		"                                                  Latency(us)\n"
		"Device Information                                                        :       IOPS      MiB/s    "
		"Average        min        max\n"
		"TCP (addr:127.0.0.1 subnqn:nqn.2026-11.io.nvmfd:bench) NSID 1 from core  1:    2229.82       8.71   "
		"14607.24     175.14   72386.74\n"
		"========================================================\n"
		"Total                                                                     :    2229.82       8.71   "
		"14607.24     175.14   72386.74\n"
		"\n"
		"Summary latency data for TCP (addr:127.0.0.1 subnqn:nqn.2026-11.io.n from core 1:\n"
		"=================================================================================\n"
		"  1.00000% :   185.574us\n"
		" 10.00000% :   297.587us\n"
		" 50.00000% :   645.329us\n"
		" 90.00000% : 36165.172us\n"
		" 99.00000% : 58206.668us\n"
		" 99.90000% : 72758.335us\n"
		" 99.99000% : 72758.335us\n"
		" 99.99900% : 72758.335us\n";
	/* two controllers: percentiles are IOPS-weighted over the blocks */
	static const char two[] =
		"Device Information   :       IOPS      MiB/s    Average        min        max\n"
		"TCP (a) NSID 1 from core  1:    300.00       1.17      10.00       5.00      20.00\n"
		"TCP (b) NSID 1 from core  1:    100.00       0.39      30.00       6.00      40.00\n"
		"Total                :    400.00       1.56      15.00       5.00      40.00\n"
		"Summary latency data for TCP (a) from core 1:\n"
		" 50.00000% :    10.000us\n"
		" 99.00000% :    20.000us\n"
		"Summary latency data for TCP (b) from core 1:\n"
		" 50.00000% :    30.000us\n"
		" 99.00000% :    40.000us\n";
	double v[BM_NR];
	bool have[BM_NR];

	(void)state;
	assert_int_equal(bench_parse_spdk_perf(one, v, have), 0);
	assert_true(have[BM_IOPS] && fabs(v[BM_IOPS] - 2229.82) < 1e-6);
	assert_true(have[BM_MIBS] && fabs(v[BM_MIBS] - 8.71) < 1e-6);
	assert_true(fabs(v[BM_LAT_AVG] - 14607.24) < 1e-6);
	assert_true(fabs(v[BM_LAT_MIN] - 175.14) < 1e-6 && fabs(v[BM_LAT_MAX] - 72386.74) < 1e-6);
	assert_true(have[BM_P50] && fabs(v[BM_P50] - 645.329) < 1e-6);
	assert_true(have[BM_P90] && fabs(v[BM_P90] - 36165.172) < 1e-6);
	assert_true(have[BM_P99] && fabs(v[BM_P99] - 58206.668) < 1e-6);
	assert_true(have[BM_P999] && have[BM_P9999] && fabs(v[BM_P9999] - 72758.335) < 1e-6);
	assert_false(have[BM_LAT_STDEV]); /* spdk_nvme_perf does not print it */
	assert_int_equal(bench_parse_spdk_perf(two, v, have), 0);
	assert_true(fabs(v[BM_IOPS] - 400) < 1e-9);
	assert_true(fabs(v[BM_P50] - 15.0) < 1e-9); /* (300*10 + 100*30) / 400 */
	assert_true(fabs(v[BM_P99] - 25.0) < 1e-9);
	assert_false(have[BM_P90]);
	assert_int_equal(bench_parse_spdk_perf("Initializing NVMe Controllers\nspdk_nvme_perf: errors\n", v, have),
			 -EINVAL);
	assert_int_equal(bench_parse_spdk_perf("", v, have), -EINVAL);
}

static void test_syscall_count(void **state)
{
	double n = 0;

	(void)state;
	/* perf stat -x, */
	assert_int_equal(bench_parse_syscall_count("# started on Tue Dec  1 22:50:49 2026\n\n"
						   "270585,,raw_syscalls:sys_enter,241217275,100.00,,\n",
						   &n),
			 0);
	assert_true(n == 270585);
	assert_int_equal(bench_parse_syscall_count("<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n", &n), -EINVAL);
	/* strace -c -f */
	assert_int_equal(bench_parse_syscall_count("% time     seconds  usecs/call     calls    errors syscall\n"
						   "------ ----------- ----------- --------- --------- ----------\n"
						   " 60.00    0.000212           2       100           sendmsg\n"
						   " 40.00    0.000142           1        45        19 recvfrom\n"
						   "------ ----------- ----------- --------- --------- ----------\n"
						   "100.00    0.000354           2       145        19 total\n",
						   &n),
			 0);
	assert_true(n == 145);
	assert_int_equal(bench_parse_syscall_count("", &n), -EINVAL);
}

/* target.kind / perf.tool and the scenario's spdk.twins */
static void test_spdk_twins(void **state)
{
	static const char text[] =
		"{\"name\": \"t\", \"spdk\": {\"twins\": \"both\"},"
		" \"cells\": [{\"name\": \"a\", \"series\": \"bound\", \"target\": {\"exec\": \"bound\","
		"   \"idle_poll_us\": 50, \"extra_args\": [\"--x\"]}, \"perf\": {\"qd\": 4}},"
		"  {\"name\": \"f\", \"target\": {\"backend\": \"file\"}, \"perf\": {\"rate\": 100}},"
		"  {\"name\": \"s\", \"target\": {\"kind\": \"spdk\"}, \"perf\": {\"tool\": \"spdk_nvme_perf\"}}]}";
	struct bench_overrides ov = { .duration = -1, .warmup = -1 };
	struct bench_scenario sc;
	char err[256];
	int i;

	(void)state;
	assert_int_equal(parse_text(text, &sc, err, sizeof(err)), 0);
	/* a, f, s + a.spdk, a.spdk-perf, f.spdk, f.spdk-perf (no twins of s) */
	assert_int_equal(sc.nr_cells, 7);
	assert_string_equal(sc.cells[3].name, "a.spdk");
	assert_string_equal(sc.cells[3].baseline, "a");
	assert_string_equal(sc.cells[3].series, "bound-spdk");
	assert_int_equal(sc.cells[3].twin_of, 0);
	assert_int_equal(sc.cells[3].target.kind, BENCH_TARGET_SPDK);
	assert_int_equal(sc.cells[3].perf.tool, BENCH_PERF_NVMF);
	assert_string_equal(sc.cells[3].target.exec, ""); /* nvmfd's settings dropped */
	assert_int_equal(sc.cells[3].target.idle_poll_us, -1);
	assert_int_equal(sc.cells[3].target.nr_extra, 0);
	assert_int_equal(sc.cells[3].perf.qd, 4); /* the same load */
	assert_string_equal(sc.cells[3].skip, "");
	assert_string_equal(sc.cells[4].name, "a.spdk-perf");
	assert_int_equal(sc.cells[4].target.kind, BENCH_TARGET_NVMFD);
	assert_string_equal(sc.cells[4].target.exec, "bound"); /* same nvmfd */
	assert_int_equal(sc.cells[4].perf.tool, BENCH_PERF_SPDK);
	assert_string_equal(sc.cells[5].name, "f.spdk");
	assert_string_equal(sc.cells[5].skip, "no SPDK twin of a file namespace");
	assert_string_equal(sc.cells[6].skip, "no spdk_nvme_perf twin: perf.rate");
	assert_int_equal(sc.cells[0].twin_of, -1);
	assert_false(bench_cell_needs_spdk(&sc.cells[0]));
	for (i = 2; i < 7; i++)
		assert_true(bench_cell_needs_spdk(&sc.cells[i]));
	bench_scenario_apply(&sc, &ov);
	assert_int_equal(sc.cells[5].repeat, 0); /* skipped cells do not run */
	assert_int_equal(sc.cells[3].repeat, 5);
	bench_scenario_free(&sc);
}


/*
 * Wait (bounded, 1 s) until child @pid is in a group of this run whose
 * path ends in /@leaf, on a line of /proc/<pid>/cgroup containing @hier
 * (":cpu:" for the v1 cpu hierarchy, "0::" for v2; NULL: any line).
 */
static bool child_in_group(pid_t pid, const char *hier, const char *leaf)
{
	char path[64], line[1024], tail[32];
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(tail, sizeof(tail), "/%s\n", leaf);
	for (int i = 0; i < 100 && !in; i++) {
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			in |= (!hier || strstr(line, hier)) && strstr(line, "nvmf-bench.") && strstr(line, tail);
		if (f)
			fclose(f);
		if (!in)
			usleep(10000);
	}
	return in;
}
/* cpuset cgroups: "off" is affinity only; where writable, a child joins its role's group */
static void test_cgroup(void **state)
{
	struct bench_cgroup cg;
	struct bench_cpuset online, first;
	char procs[1024], path[1200], line[1024], *argv[] = { (char *)"/bin/sleep", (char *)"5", NULL };
	pid_t pid;
	FILE *f;

	(void)state;
	assert_int_equal(bench_cg_setup(&cg, "off"), 0);
	assert_int_equal(cg.version, 0);
	assert_string_equal(cg.why, "affinity only (--cgroup off)");
	assert_int_equal(bench_cg_prepare(&cg, BENCH_CG_TARGET, &online, procs, sizeof(procs)), 0);
	assert_string_equal(procs, "");
	assert_int_equal(bench_cg_setup(&cg, "auto"), 0);
	if (!cg.version) {
		assert_true(strncmp(cg.why, "affinity only (", 15) == 0);
		return; /* nothing writable here: affinity only, as the report says */
	}
	assert_int_equal(bench_cpuset_online(&online), 0);
	first.nr = 1;
	first.cpu[0] = online.cpu[0];
	assert_int_equal(bench_cg_prepare(&cg, BENCH_CG_LOAD, &first, procs, sizeof(procs)), 0);
	pid = bench_proc_spawn(argv, NULL, NULL, NULL, 0, procs);
	assert_true(pid > 0);
	assert_true(child_in_group(pid, NULL, "load"));
	snprintf(path, sizeof(path), "%s/load/cpuset.cpus", cg.base);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(atoi(line), first.cpu[0]);
	/* busy while the child lives; removed once it is reaped */
	assert_int_equal(bench_proc_reap_group(pid, NULL, 1), 0);
	snprintf(path, sizeof(path), "%s", cg.base);
	assert_int_equal(bench_cg_destroy(&cg), 0);
	assert_int_equal(access(path, F_OK), -1);
}

/* A one-line file into @buf without its newline (bench_read_file()). */
static int read_line(const char *path, char *buf, size_t len)
{
	int ret = bench_read_file(path, buf, len);

	if (!ret)
		buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/*
 * target.cpu_quota: without a cpu controller a quota is refused and no
 * quota is fine; where one is writable, a child started with the target's
 * procs joins the group whose CFS bandwidth is quota x 10 ms per 10 ms.
 */
static void test_cpu_quota(void **state)
{
	struct bench_cgroup cg;
	struct bench_cpuset online;
	char procs[4300], path[1300], line[1024], want[64], dir[1100] = "";
	char *argv[] = { (char *)"/bin/sleep", (char *)"5", NULL };
	pid_t pid;

	(void)state;
	assert_int_equal(bench_cg_setup(&cg, "off"), 0);
	assert_int_equal(bench_cg_setup_cpu(&cg, "off"), -ENODEV);
	assert_string_equal(cg.cpu_why, "none (--cgroup off)");
	procs[0] = 0;
	assert_int_equal(bench_cg_prepare_quota(&cg, 0.5, procs, sizeof(procs)), -ENODEV);
	assert_int_equal(bench_cg_prepare_quota(&cg, 0, procs, sizeof(procs)), 0);
	assert_int_equal(bench_cg_prepare_quota(NULL, 0.5, procs, sizeof(procs)), -ENODEV);
	assert_string_equal(procs, "");

	assert_int_equal(bench_cg_setup(&cg, "auto"), 0);
	if (bench_cg_setup_cpu(&cg, "auto")) {
		assert_true(strncmp(cg.cpu_why, "none (", 6) == 0);
		assert_int_equal(cg.cpu_version, 0);
		assert_int_equal(bench_cg_destroy(&cg), 0);
		return; /* no writable cpu controller here: quota cells fail, as the run says */
	}
	assert_true(cg.cpu_version == 1 || cg.cpu_version == 2);
	assert_int_equal(bench_cpuset_online(&online), 0);
	assert_int_equal(bench_cg_prepare(&cg, BENCH_CG_TARGET, &online, procs, sizeof(procs)), 0);
	assert_int_equal(bench_cg_prepare_quota(&cg, 0.5, procs, sizeof(procs)), 0);
	pid = bench_proc_spawn(argv, NULL, NULL, NULL, 0, procs);
	assert_true(pid > 0);
	/* the group the child is in: the cpu line (v1) or the unified one (v2) */
	assert_true(child_in_group(pid, cg.cpu_version == 2 ? "0::" : ":cpu:", "target"));
	if (cg.cpu_version == 2) {
		snprintf(path, sizeof(path), "%s/target/cpu.max", cg.base);
		assert_int_equal(read_line(path, line, sizeof(line)), 0);
		assert_string_equal(line, "5000 10000");
	} else {
		snprintf(dir, sizeof(dir), "%s", *cg.cpu_base ? cg.cpu_base : cg.base);
		snprintf(path, sizeof(path), "%s/target/cpu.cfs_period_us", dir);
		assert_int_equal(read_line(path, line, sizeof(line)), 0);
		assert_string_equal(line, "10000");
		snprintf(path, sizeof(path), "%s/target/cpu.cfs_quota_us", dir);
		assert_int_equal(read_line(path, line, sizeof(line)), 0);
		assert_string_equal(line, "5000");
		/* a v1 cpu group of its own is joined besides the cpuset group */
		snprintf(want, sizeof(want), "nvmf-bench.%d/target/cgroup.procs", (int)getpid());
		if (*cg.cpu_base)
			assert_non_null(strstr(procs, want));
	}
	assert_int_equal(bench_proc_reap_group(pid, NULL, 1), 0);
	/* a run without a quota: no limit, and no extra group to join */
	assert_int_equal(bench_cg_prepare(&cg, BENCH_CG_TARGET, &online, procs, sizeof(procs)), 0);
	assert_int_equal(bench_cg_prepare_quota(&cg, 0, procs, sizeof(procs)), 0);
	assert_null(strchr(procs, '\n'));
	if (cg.cpu_version == 2) {
		snprintf(path, sizeof(path), "%s/target/cpu.max", cg.base);
		assert_int_equal(access(path, F_OK), -1); /* the controller is off for it */
	} else {
		snprintf(path, sizeof(path), "%s/target/cpu.cfs_quota_us", dir);
		assert_int_equal(read_line(path, line, sizeof(line)), 0);
		assert_string_equal(line, "-1");
	}
	assert_int_equal(bench_cg_destroy(&cg), 0);
	if (*dir)
		assert_int_equal(access(dir, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpuset),	   cmocka_unit_test(test_count), cmocka_unit_test(test_defaults_and_quick),
		cmocka_unit_test(test_aggregate), cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_sockdir),	   cmocka_unit_test(test_noise_guard),
		cmocka_unit_test(test_proc_cpu),   cmocka_unit_test(test_spdk_perf_parse),
		cmocka_unit_test(test_syscall_count), cmocka_unit_test(test_spdk_twins),
		cmocka_unit_test(test_cgroup),	   cmocka_unit_test(test_cpu_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
