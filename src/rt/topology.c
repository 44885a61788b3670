// SPDX-License-Identifier: MIT
/*
 * topology.c - group the runtime CPUs into affinity-scope units (cpu, smt,
 * cache, numa, system) from a sysfs tree, as the kernel's workqueue "pods"
 * do (Documentation/core-api/workqueue.rst, "Affinity Scopes").
 *
 * The source is a directory laid out like /sys/devices/system/cpu, so tests
 * can point the builder at a synthetic tree. Every file is optional: when
 * one is missing the grouping falls back to the next coarser thing we know
 * (see nvmfd__rt_topo_load()).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/rt_int.h"

/* Enough for any cpulist of CPU_SETSIZE CPUs ("0,2,4,..." worst case). */
#define TOPO_TEXT_MAX 8192

/* The cache/indexK directories we probe; x86 and arm64 have at most 4-5. */
#define TOPO_MAX_CACHE_INDEX 32

static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

static int read_cpulist(const char *path, cpu_set_t *set)
{
	char *buf;
	int ret;

	buf = malloc(TOPO_TEXT_MAX);
	if (!buf)
		return -ENOMEM;
	ret = read_text(path, buf, TOPO_TEXT_MAX);
	if (!ret)
		ret = nvmfd__rt_parse_cpulist(buf, set);
	free(buf);
	return ret;
}

static int read_int(const char *path, long *val)
{
	char buf[64], *end;
	int ret;

	ret = read_text(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return s;
}

static int parse_cpu_num(const char *s, const char **end, long *val)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtol(s, &e, 10);
	if (errno || *val < 0 || *val >= CPU_SETSIZE)
		return -EINVAL;
	*end = e;
	return 0;
}

int nvmfd__rt_parse_cpulist(const char *s, cpu_set_t *set)
{
	long lo, hi;
	int ret;

	CPU_ZERO(set);
	s = skip_space(s);
	while (*s) {
		ret = parse_cpu_num(s, &s, &lo);
		if (ret)
			return ret;
		hi = lo;
		if (*s == '-') {
			ret = parse_cpu_num(s + 1, &s, &hi);
			if (ret)
				return ret;
			if (hi < lo)
				return -EINVAL;
		}
		for (long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*s == ',')
			s++;
		else if (*skip_space(s))
			return -EINVAL;
		else
			break;
	}
	return CPU_COUNT(set);
}

char *nvmfd__rt_format_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < CPU_SETSIZE) {
		int lo, hi, n;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		lo = c;
		while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, set))
			c++;
		hi = c++;
		if (lo == hi)
			n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", lo);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", lo, hi);
		if (n < 0 || (size_t)n >= len - off)
			break; /* truncated: keep what fits */
		off += (size_t)n;
	}
	return buf;
}

/* CPUs present as cpuN directories: the fallback when "online" is missing. */
static void scan_cpu_dirs(const char *root, cpu_set_t *set)
{
	struct dirent *de;
	DIR *d;

	CPU_ZERO(set);
	d = opendir(root);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "cpu", 3) || !isdigit((unsigned char)de->d_name[3]))
			continue;
		n = strtol(de->d_name + 3, &end, 10);
		if (*end || n < 0 || n >= CPU_SETSIZE)
			continue;
		CPU_SET(n, set);
	}
	closedir(d);
}

/* The node number from a "nodeM" entry in @dir, or -1. */
static long find_node_entry(const char *dir)
{
	struct dirent *de;
	long node = -1;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (*end || n < 0 || n > INT_MAX)
			continue;
		node = n;
		break;
	}
	closedir(d);
	return node;
}

/*
 * Node of every runtime CPU: cpuN/nodeM links first (what the kernel
 * creates), then ../node/nodeM/cpulist; CPUs still unknown go to node 0.
 */
static int load_nodes(const char *root, const cpu_set_t *cpus, long *node_of)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool missing = false;
	DIR *d;

	for (int c = 0; c < CPU_SETSIZE; c++) {
		node_of[c] = -1;
		if (!CPU_ISSET(c, cpus))
			continue;
		snprintf(path, sizeof(path), "%s/cpu%d", root, c);
		node_of[c] = find_node_entry(path);
		if (node_of[c] < 0)
			missing = true;
	}
	if (missing) {
		snprintf(path, sizeof(path), "%s/../node", root);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			char file[PATH_MAX + 512];
			cpu_set_t set;
			char *end;
			long n;

			if (strncmp(de->d_name, "node", 4) ||
			    !isdigit((unsigned char)de->d_name[4]))
				continue;
			n = strtol(de->d_name + 4, &end, 10);
			if (*end || n < 0 || n > INT_MAX)
				continue;
			snprintf(file, sizeof(file), "%s/%s/cpulist", path, de->d_name);
			if (read_cpulist(file, &set) < 0)
				continue;
			for (int c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set) && CPU_ISSET(c, cpus) && node_of[c] < 0)
					node_of[c] = n;
		}
		if (d)
			closedir(d);
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus) && node_of[c] < 0)
			node_of[c] = 0;
	return 0;
}

/* The shared_cpu_list of the highest cache level of @cpu (its LLC). */
static int load_llc(const char *root, int cpu, cpu_set_t *set)
{
	char path[PATH_MAX];
	long best = -1, level;
	int best_idx = -1;

	for (int i = 0; i < TOPO_MAX_CACHE_INDEX; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/level", root, cpu, i);
		if (read_int(path, &level))
			continue;
		if (level > best) {
			best = level;
			best_idx = i;
		}
	}
	if (best_idx < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/shared_cpu_list", root, cpu,
		 best_idx);
	return read_cpulist(path, set) < 0 ? -ENOENT : 0;
}

/* The CPUs sharing @cpu's unit in @scope, as sysfs says (may be empty). */
static void scope_group(const char *root, enum nvmfd_rt_scope scope, int cpu,
			const cpu_set_t *cpus, const long *node_of, cpu_set_t *group)
{
	char path[PATH_MAX];

	CPU_ZERO(group);
	switch (scope) {
	case NVMFD_RT_SCOPE_CPU:
		break;
	case NVMFD_RT_SCOPE_SMT:
		snprintf(path, sizeof(path), "%s/cpu%d/topology/thread_siblings_list", root,
			 cpu);
		if (read_cpulist(path, group) < 0)
			CPU_ZERO(group);
		break;
	case NVMFD_RT_SCOPE_CACHE:
		if (!load_llc(root, cpu, group))
			break;
		/* no cache information: the NUMA node is the next coarser unit */
		scope_group(root, NVMFD_RT_SCOPE_NUMA, cpu, cpus, node_of, group);
		break;
	case NVMFD_RT_SCOPE_NUMA:
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, cpus) && node_of[c] == node_of[cpu])
				CPU_SET(c, group);
		break;
	case NVMFD_RT_SCOPE_SYSTEM:
		CPU_OR(group, group, cpus);
		break;
	}
}

/*
 * Units of one scope: walk the CPUs in ascending order; an unassigned CPU
 * opens a unit made of its group's unassigned runtime CPUs. Inconsistent
 * sysfs (A says {A,B}, B says {B,C}) still yields a partition.
 */
static int build_scope(struct nvmfd__rt_topo *t, const char *root, enum nvmfd_rt_scope scope,
		       const long *node_of)
{
	cpu_set_t assigned, group;
	unsigned int n = 0;

	t->units[scope] = calloc(t->ncpus, sizeof(cpu_set_t));
	if (!t->units[scope])
		return -ENOMEM;
	CPU_ZERO(&assigned);
	for (int c = 0; c < CPU_SETSIZE; c++)
		t->unit_of[scope][c] = -1;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		cpu_set_t *unit = &t->units[scope][n];

		if (!CPU_ISSET(c, &t->cpus) || CPU_ISSET(c, &assigned))
			continue;
		scope_group(root, scope, c, &t->cpus, node_of, &group);
		CPU_SET(c, &group);
		CPU_AND(&group, &group, &t->cpus);
		CPU_ZERO(unit);
		for (int d = c; d < CPU_SETSIZE; d++) {
			if (!CPU_ISSET(d, &group) || CPU_ISSET(d, &assigned))
				continue;
			CPU_SET(d, unit);
			CPU_SET(d, &assigned);
			t->unit_of[scope][d] = (short)n;
		}
		n++;
	}
	t->nunits[scope] = n;
	return 0;
}

int nvmfd__rt_topo_load(const char *sysfs_root, const cpu_set_t *want,
			struct nvmfd__rt_topo **out)
{
	struct nvmfd__rt_topo *t;
	char path[PATH_MAX];
	cpu_set_t online;
	long *node_of;
	int ret;

	if (!sysfs_root)
		sysfs_root = "/sys/devices/system/cpu";
	t = calloc(1, sizeof(*t));
	node_of = calloc(CPU_SETSIZE, sizeof(*node_of));
	if (!t || !node_of) {
		ret = -ENOMEM;
		goto out_free;
	}

	snprintf(path, sizeof(path), "%s/online", sysfs_root);
	if (read_cpulist(path, &online) <= 0)
		scan_cpu_dirs(sysfs_root, &online);
	if (!CPU_COUNT(&online) && want)
		online = *want; /* no sysfs at all: trust the caller */
	if (want && CPU_COUNT(want))
		CPU_AND(&t->cpus, &online, want);
	else
		t->cpus = online;
	t->ncpus = (unsigned int)CPU_COUNT(&t->cpus);
	if (!t->ncpus) {
		ret = -EINVAL;
		goto out_free;
	}

	ret = load_nodes(sysfs_root, &t->cpus, node_of);
	if (ret)
		goto out_free;
	for (int s = 0; s < NVMFD__RT_NSCOPES; s++) {
		ret = build_scope(t, sysfs_root, (enum nvmfd_rt_scope)s, node_of);
		if (ret)
			goto out_free;
	}
	free(node_of);
	*out = t;
	return 0;

out_free:
	free(node_of);
	nvmfd__rt_topo_free(t);
	return ret;
}

void nvmfd__rt_topo_free(struct nvmfd__rt_topo *topo)
{
	if (!topo)
		return;
	for (int s = 0; s < NVMFD__RT_NSCOPES; s++)
		free(topo->units[s]);
	free(topo);
}
