// SPDX-License-Identifier: MIT
/*
 * test_topology.c - scope units from synthetic sysfs trees (2 sockets x
 * 4 cores x 2 threads, Intel-style numbering: cpu n and n + 8 are SMT
 * siblings, socket 0 = 0-3,8-11), fallbacks for missing files, and this
 * machine's real topology.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "rt/rt_int.h"

struct tree {
	char base[PATH_MAX]; /* <tmp>/system */
	char cpu[PATH_MAX + 8]; /* <tmp>/system/cpu = sysfs_root */
};

static void put(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX * 2], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (!text) {
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		return;
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

enum {
	T_ONLINE = 1,
	T_SMT = 2,
	T_CACHE = 4,
	T_NODE_LINK = 8,
	T_NODE_DIR = 16,
	T_ALL = 31,
};

static void make_tree(struct tree *t, int what)
{
	char tmpl[] = "/tmp/nvmfd-topo-XXXXXX", rel[128], txt[64];

	assert_non_null(mkdtemp(tmpl));
	snprintf(t->base, sizeof(t->base), "%s/system", tmpl);
	snprintf(t->cpu, sizeof(t->cpu), "%s/cpu", t->base);
	put(t->cpu, "cpufreq/x", "");
	if (what & T_ONLINE)
		put(t->cpu, "online", "0-15\n");
	for (int n = 0; n < 16; n++) {
		int core = n % 8, socket = core / 4;

		snprintf(rel, sizeof(rel), "cpu%d/uevent", n);
		put(t->cpu, rel, "");
		if (what & T_SMT) {
			snprintf(rel, sizeof(rel), "cpu%d/topology/thread_siblings_list", n);
			snprintf(txt, sizeof(txt), "%d,%d\n", core, core + 8);
			put(t->cpu, rel, txt);
		}
		if (what & T_CACHE) {
			static const char *const lv[] = { "1\n", "1\n", "2\n", "3\n" };

			/* index order deliberately not level order for index 3 vs 2 */
			for (int i = 0; i < 4; i++) {
				snprintf(rel, sizeof(rel), "cpu%d/cache/index%d/level", n, i);
				put(t->cpu, rel, lv[i]);
				snprintf(rel, sizeof(rel), "cpu%d/cache/index%d/shared_cpu_list",
					 n, i);
				if (i < 3)
					snprintf(txt, sizeof(txt), "%d,%d\n", core, core + 8);
				else
					snprintf(txt, sizeof(txt), "%s\n",
						 socket ? "4-7,12-15" : "0-3,8-11");
				put(t->cpu, rel, txt);
			}
		}
		if (what & T_NODE_LINK) {
			snprintf(rel, sizeof(rel), "cpu%d/node%d", n, socket);
			put(t->cpu, rel, NULL);
		}
	}
	if (what & T_NODE_DIR) {
		put(t->base, "node/node0/cpulist", "0-3,8-11\n");
		put(t->base, "node/node1/cpulist", "4-7,12-15\n");
		put(t->base, "node/online", "0-1\n");
	}
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void drop_tree(struct tree *t)
{
	char top[PATH_MAX];

	snprintf(top, sizeof(top), "%s", t->base);
	*strrchr(top, '/') = '\0';
	nftw(top, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void set_of(cpu_set_t *set, const char *list)
{
	assert_true(nvmfd__rt_parse_cpulist(list, set) >= 0);
}

static void assert_unit(const struct nvmfd__rt_topo *t, int scope, unsigned int unit,
			const char *list)
{
	char got[256];
	cpu_set_t want;

	set_of(&want, list);
	assert_true(unit < t->nunits[scope]);
	nvmfd__rt_format_cpulist(&t->units[scope][unit], got, sizeof(got));
	if (!CPU_EQUAL(&want, &t->units[scope][unit]))
		fail_msg("scope %d unit %u: got %s want %s", scope, unit, got, list);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &want))
			assert_int_equal(t->unit_of[scope][c], unit);
}

static void test_full_tree(void **state)
{
	struct nvmfd__rt_topo *t;
	struct tree tr;

	make_tree(&tr, T_ALL);
	assert_int_equal(nvmfd__rt_topo_load(tr.cpu, NULL, &t), 0);
	assert_int_equal(t->ncpus, 16);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CPU], 16);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SMT], 8);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CACHE], 2);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_NUMA], 2);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SYSTEM], 1);
	for (int c = 0; c < 16; c++) {
		char l[32];

		snprintf(l, sizeof(l), "%d", c);
		assert_unit(t, NVMFD_RT_SCOPE_CPU, (unsigned int)c, l);
	}
	for (int c = 0; c < 8; c++) {
		char l[32];

		snprintf(l, sizeof(l), "%d,%d", c, c + 8);
		assert_unit(t, NVMFD_RT_SCOPE_SMT, (unsigned int)c, l);
	}
	assert_unit(t, NVMFD_RT_SCOPE_CACHE, 0, "0-3,8-11");
	assert_unit(t, NVMFD_RT_SCOPE_CACHE, 1, "4-7,12-15");
	assert_unit(t, NVMFD_RT_SCOPE_NUMA, 0, "0-3,8-11");
	assert_unit(t, NVMFD_RT_SCOPE_NUMA, 1, "4-7,12-15");
	assert_unit(t, NVMFD_RT_SCOPE_SYSTEM, 0, "0-15");
	assert_int_equal(t->unit_of[NVMFD_RT_SCOPE_SYSTEM][16], -1);
	nvmfd__rt_topo_free(t);
	drop_tree(&tr);
}

static void test_subset(void **state)
{
	struct nvmfd__rt_topo *t;
	struct tree tr;
	cpu_set_t want;

	make_tree(&tr, T_ALL);
	set_of(&want, "1,4,8,9,20");
	assert_int_equal(nvmfd__rt_topo_load(tr.cpu, &want, &t), 0);
	assert_int_equal(t->ncpus, 4); /* 20 is not online */
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CPU], 4);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SMT], 3);
	assert_unit(t, NVMFD_RT_SCOPE_SMT, 0, "1,9");
	assert_unit(t, NVMFD_RT_SCOPE_SMT, 1, "4");
	assert_unit(t, NVMFD_RT_SCOPE_SMT, 2, "8");
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CACHE], 2);
	assert_unit(t, NVMFD_RT_SCOPE_CACHE, 0, "1,8,9");
	assert_unit(t, NVMFD_RT_SCOPE_CACHE, 1, "4");
	assert_unit(t, NVMFD_RT_SCOPE_NUMA, 1, "4");
	assert_unit(t, NVMFD_RT_SCOPE_SYSTEM, 0, "1,4,8,9");
	nvmfd__rt_topo_free(t);

	set_of(&want, "20-30");
	assert_int_equal(nvmfd__rt_topo_load(tr.cpu, &want, &t), -EINVAL);
	drop_tree(&tr);
}

/* No cache info, no cpuN/nodeM links: cache falls back to the NUMA node,
 * nodes come from ../node/nodeM/cpulist. */
static void test_fallback_node_dir(void **state)
{
	struct nvmfd__rt_topo *t;
	struct tree tr;

	make_tree(&tr, T_ONLINE | T_SMT | T_NODE_DIR);
	assert_int_equal(nvmfd__rt_topo_load(tr.cpu, NULL, &t), 0);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SMT], 8);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CACHE], 2);
	assert_unit(t, NVMFD_RT_SCOPE_CACHE, 0, "0-3,8-11");
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_NUMA], 2);
	assert_unit(t, NVMFD_RT_SCOPE_NUMA, 1, "4-7,12-15");
	nvmfd__rt_topo_free(t);
	drop_tree(&tr);
}

/* Only cpuN directories: no online file, no siblings, no caches, no nodes. */
static void test_fallback_bare(void **state)
{
	struct nvmfd__rt_topo *t;
	struct tree tr;

	make_tree(&tr, 0);
	assert_int_equal(nvmfd__rt_topo_load(tr.cpu, NULL, &t), 0);
	assert_int_equal(t->ncpus, 16);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CPU], 16);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SMT], 16);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CACHE], 1);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_NUMA], 1);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SYSTEM], 1);
	nvmfd__rt_topo_free(t);
	drop_tree(&tr);
}

/* A tree that does not exist at all: the caller's CPUs, one unit each above cpu. */
static void test_fallback_missing_root(void **state)
{
	struct nvmfd__rt_topo *t;
	cpu_set_t want;

	set_of(&want, "0-1");
	assert_int_equal(nvmfd__rt_topo_load("/nonexistent/nvmfd", &want, &t), 0);
	assert_int_equal(t->ncpus, 2);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CPU], 2);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SMT], 2);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CACHE], 1);
	nvmfd__rt_topo_free(t);
	assert_int_equal(nvmfd__rt_topo_load("/nonexistent/nvmfd", NULL, &t), -EINVAL);
}

static void test_real_machine(void **state)
{
	struct nvmfd__rt_topo *t;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	assert_int_equal(nvmfd__rt_topo_load(NULL, NULL, &t), 0);
	assert_int_equal(t->ncpus, online);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_CPU], online);
	assert_int_equal(t->nunits[NVMFD_RT_SCOPE_SYSTEM], 1);
	for (int s = 0; s < NVMFD__RT_NSCOPES; s++) {
		unsigned int sum = 0;

		assert_true(t->nunits[s] >= 1 && t->nunits[s] <= t->ncpus);
		for (unsigned int u = 0; u < t->nunits[s]; u++)
			sum += (unsigned int)CPU_COUNT(&t->units[s][u]);
		assert_int_equal(sum, t->ncpus); /* a partition */
		if (s > 0) /* each scope is at least as coarse as the previous */
			assert_true(t->nunits[s] <= t->nunits[s - 1]);
	}
	nvmfd__rt_topo_free(t);
}

static void test_parse_cpulist(void **state)
{
	static const struct {
		const char *in;
		int ret;
		const char *fmt;
	} cases[] = {
		{ "0-3,8-11\n", 8, "0-3,8-11" },
		{ "5", 1, "5" },
		{ "", 0, "" },
		{ "\n", 0, "" },
		{ "0,2,4-5", 4, "0,2,4-5" },
		{ "1023", 1, "1023" },
		{ "3-1", -EINVAL, NULL },
		{ "a", -EINVAL, NULL },
		{ "1,,2", -EINVAL, NULL },
		{ "1024", -EINVAL, NULL },
		{ "-1", -EINVAL, NULL },
		{ "1-", -EINVAL, NULL },
		{ "1 2", -EINVAL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		cpu_set_t set;
		int ret = nvmfd__rt_parse_cpulist(cases[i].in, &set);

		if (ret != cases[i].ret)
			fail_msg("case \"%s\": got %d want %d", cases[i].in, ret, cases[i].ret);
		if (cases[i].fmt)
			assert_string_equal(nvmfd__rt_format_cpulist(&set, out, sizeof(out)),
					    cases[i].fmt);
	}
}

static void test_rt_uses_sysfs_root(void **state)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_rt *rt;
	struct tree tr;
	cpu_set_t mine;
	int ncpu = 0;

	/* threads need real CPUs: take the first two we may run on */
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	make_tree(&tr, T_ALL);
	nvmfd_rt_opts_init(&opts);
	opts.mode = NVMFD_RT_UNBOUND;
	opts.sysfs_root = tr.cpu;
	for (int c = 0; c < 16 && ncpu < 2; c++) {
		if (CPU_ISSET(c, &mine)) {
			CPU_SET(c, &opts.cpus);
			ncpu++;
		}
	}
	if (ncpu < 2 || !CPU_ISSET(0, &opts.cpus) || !CPU_ISSET(1, &opts.cpus)) {
		drop_tree(&tr);
		skip();
	}
	/* in the synthetic tree CPUs 0 and 1 are two cores of socket 0 */
	opts.scope = NVMFD_RT_SCOPE_SMT;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	assert_int_equal(nvmfd_rt_npools(rt), 2);
	nvmfd_rt_destroy(rt);
	opts.scope = NVMFD_RT_SCOPE_CACHE;
	assert_int_equal(nvmfd_rt_create(&opts, &rt), 0);
	assert_int_equal(nvmfd_rt_npools(rt), 1);
	assert_int_equal(nvmfd_rt_ncpus(rt), 2);
	nvmfd_rt_destroy(rt);
	drop_tree(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_cpulist),
		cmocka_unit_test(test_full_tree),
		cmocka_unit_test(test_subset),
		cmocka_unit_test(test_fallback_node_dir),
		cmocka_unit_test(test_fallback_bare),
		cmocka_unit_test(test_fallback_missing_root),
		cmocka_unit_test(test_real_machine),
		cmocka_unit_test(test_rt_uses_sysfs_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
