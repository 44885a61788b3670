// SPDX-License-Identifier: MIT
/*
 * proc.c - the monotonic clock and /proc readings (internal/proc.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal/proc.h"

uint64_t nvmfd__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void proc_dir(char *buf, size_t len, int pid)
{
	if (pid > 0)
		snprintf(buf, len, "/proc/%d", pid);
	else
		snprintf(buf, len, "/proc/self");
}

/* voluntary/nonvoluntary_ctxt_switches of one status file */
static int read_ctxsw(const char *path, uint64_t *vol, uint64_t *invol)
{
	char line[256];
	uint64_t v;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %" SCNu64, &v) == 1)
			*vol = v;
		else if (sscanf(line, "nonvoluntary_ctxt_switches: %" SCNu64, &v) == 1)
			*invol = v;
	}
	fclose(f);
	return 0;
}

int nvmfd__proc_task_stat(int pid, int tid, struct nvmfd_task_stat *st)
{
	char dir[32], path[96];
	uint64_t a, b;
	FILE *f;
	int ret;

	memset(st, 0, sizeof(*st));
	proc_dir(dir, sizeof(dir), pid);
	if (tid > 0)
		snprintf(path, sizeof(path), "%s/task/%d/status", dir, tid);
	else
		snprintf(path, sizeof(path), "%s/status", dir);
	ret = read_ctxsw(path, &st->nvcsw, &st->nivcsw);
	if (ret)
		return ret;
	if (tid > 0)
		snprintf(path, sizeof(path), "%s/task/%d/schedstat", dir, tid);
	else
		snprintf(path, sizeof(path), "%s/schedstat", dir);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%" SCNu64 " %" SCNu64, &a, &b) == 2)
			st->run_delay_ns = b;
		fclose(f);
	}
	return 0;
}

/* One read(2) of a small /proc file into @buf (NUL-terminated).
 * Return: 0, -errno, -ENODATA (empty). */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -ENODATA;
	buf[n] = 0;
	return 0;
}

int nvmfd__proc_task_sched(int pid, int tid, uint64_t *exec_ns, uint64_t *run_delay_ns)
{
	char dir[32], path[96], buf[128];
	unsigned long long a, b;
	int ret;

	*exec_ns = *run_delay_ns = 0;
	proc_dir(dir, sizeof(dir), pid);
	if (tid > 0)
		snprintf(path, sizeof(path), "%s/task/%d/schedstat", dir, tid);
	else
		snprintf(path, sizeof(path), "%s/schedstat", dir);
	ret = read_small(path, buf, sizeof(buf));
	if (ret)
		return ret;
	if (sscanf(buf, "%llu %llu", &a, &b) != 2)
		return -ENODATA;
	*exec_ns = a;
	*run_delay_ns = b;
	return 0;
}

int nvmfd__proc_task_run_delay(int pid, int tid, uint64_t *run_delay_ns)
{
	uint64_t exec_ns;

	return nvmfd__proc_task_sched(pid, tid, &exec_ns, run_delay_ns);
}

/* "cpuN" at the start of @line: N, else -1 ("cpu " is the sum line). */
static int cpu_line(const char *line, const char **rest)
{
	char *end;
	long n;

	if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
		return -1;
	n = strtol(line + 3, &end, 10);
	if (n < 0 || n > 65535 || (*end != ' ' && *end != '\t'))
		return -1;
	*rest = end;
	return (int)n;
}

int nvmfd__proc_cpus(const char *stat_path, const char *schedstat_path, struct nvmfd_proc_cpu *cpus,
		     unsigned int max, bool *has_delay)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t tick_ns = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
	unsigned int n = 0;
	char line[512];
	const char *rest;
	FILE *f;

	memset(cpus, 0, sizeof(*cpus) * max);
	*has_delay = false;
	f = fopen(stat_path ? stat_path : "/proc/stat", "re");
	if (!f)
		return -errno;
	/* the cpu lines come first; stop at the first other line (the
	 * long "intr" line is never read) */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[10] = { 0 };
		uint64_t total = 0;
		int c, k;

		if (!strncmp(line, "cpu ", 4))
			continue;
		c = cpu_line(line, &rest);
		if (c < 0)
			break;
		k = sscanf(rest, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
		if (k < 4 || (unsigned int)c >= max)
			continue;
		/* user nice system idle iowait irq softirq steal; guest and
		 * guest_nice are already in user and nice */
		for (int i = 0; i < k && i < 8; i++)
			total += v[i];
		cpus[c].online = true;
		cpus[c].nice_ns = v[1] * tick_ns;
		cpus[c].idle_ns = (v[3] + v[4]) * tick_ns;
		cpus[c].total_ns = total * tick_ns;
		if ((unsigned int)c + 1 > n)
			n = (unsigned int)c + 1;
	}
	fclose(f);
	if (!n)
		return -ENODATA;
	/* run queue waits: "cpuN yld 0 sched goidle ttwu ttwu_local
	 * rq_cpu_time run_delay pcount" (schedstat versions 15 to 17) */
	f = fopen(schedstat_path ? schedstat_path : "/proc/schedstat", "re");
	if (!f)
		return (int)n; /* no CONFIG_SCHEDSTATS: idle times only */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[9];
		int c = cpu_line(line, &rest);

		if (c < 0 || (unsigned int)c >= max)
			continue;
		if (sscanf(rest, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
			continue;
		cpus[c].run_delay_ns = v[7];
		*has_delay = true;
	}
	fclose(f);
	return (int)n;
}

int nvmfd__proc_psi_some_us(const char *path, uint64_t *total_us)
{
	char buf[256];
	unsigned long long t;
	const char *p;
	int ret;

	*total_us = 0;
	ret = read_small(path, buf, sizeof(buf));
	if (ret)
		return ret;
	/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=N\nfull ..." */
	if (strncmp(buf, "some ", 5))
		return -ENODATA;
	p = strstr(buf, "total=");
	if (!p || (strchr(buf, '\n') && p > strchr(buf, '\n')) ||
	    sscanf(p + 6, "%llu", &t) != 1)
		return -ENODATA;
	*total_us = t;
	return 0;
}

/* The cgroup v2 mount point, from /proc/self/mountinfo (field 5 of the
 * line whose filesystem type after " - " is cgroup2). */
static int cgroup2_mount(char *buf, size_t len)
{
	char line[1024], mnt[512];
	int ret = -ENOENT;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1)
			continue;
		if ((size_t)snprintf(buf, len, "%s", mnt) < len)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int nvmfd__proc_cgroup_file(const char *name, char *buf, size_t len)
{
	char line[1024], mnt[512];
	int ret = cgroup2_mount(mnt, sizeof(mnt));
	FILE *f;

	if (ret)
		return ret;
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line);

		if (strncmp(line, "0::", 3))
			continue;
		if (l && line[l - 1] == '\n')
			line[l - 1] = 0;
		/* "/" is the root: no separator doubling */
		if ((size_t)snprintf(buf, len, "%s%s/%s", mnt, strcmp(line + 3, "/") ? line + 3 : "",
				     name) < len && access(buf, R_OK) == 0)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int nvmfd__proc_threads_ctxsw(int pid, uint64_t *nvcsw, uint64_t *nivcsw)
{
	char dir[32], path[96];
	struct dirent *de;
	DIR *d;

	*nvcsw = *nivcsw = 0;
	proc_dir(dir, sizeof(dir), pid);
	snprintf(path, sizeof(path), "%s/task", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t v = 0, iv = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/task/%.20s/status", dir, de->d_name);
		if (read_ctxsw(path, &v, &iv))
			continue; /* the thread just exited */
		*nvcsw += v;
		*nivcsw += iv;
	}
	closedir(d);
	return 0;
}

int nvmfd__proc_cpu_ticks(int pid, uint64_t *utime, uint64_t *stime)
{
	char dir[32], path[64], buf[1024];
	unsigned long long ut, stt;
	size_t n;
	char *p;
	FILE *f;

	*utime = *stime = 0;
	proc_dir(dir, sizeof(dir), pid);
	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* fields after the ")" of comm: state is field 3, utime 14, stime 15 */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &stt) != 2)
		return -EINVAL;
	*utime = ut;
	*stime = stt;
	return 0;
}
