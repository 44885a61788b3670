// SPDX-License-Identifier: MIT
/*
 * nvmf-bench cpuset cgroups: the target, the initiator and the contention
 * each get a cpuset cgroup of their own, <root>/nvmf-bench.<pid>/{target,
 * initiator,load}, whose cpuset.cpus is the role's CPU set of the cell
 * being run. A child joins its role's group between fork and exec (it
 * writes 0 to cgroup.procs), so everything it starts stays inside the
 * set: sched_setaffinity() cannot widen it, unlike plain affinity.
 *
 * The unified hierarchy (cgroup v2) is used when it has the cpuset
 * controller and its root is writable; otherwise the legacy cpuset
 * hierarchy (v1) when it is mounted and writable; otherwise nothing
 * (affinity only) and bench_cgroup.why says why. The groups are removed
 * at the end of the run, also after SIGINT/SIGTERM (main() removes them
 * after every child is reaped); groups of runs that were killed are
 * removed by the next run (bench_cg_clean_stale()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const char *const role_names[BENCH_CG_NR] = { "target", "initiator", "load" };

static int write_str(const char *path, const char *s)
{
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(s))
		ret = -EIO;
	close(fd);
	return ret;
}

/* A one-line file without its newline. */
static int read_str(const char *path, char *buf, size_t len)
{
	int ret = bench_read_file(path, buf, len);

	if (!ret)
		buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* Has the space-separated list @list the word @w? */
static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p = list;

	while ((p = strstr(p, w))) {
		if ((p == list || p[-1] == ' ' || p[-1] == ',') && (p[n] == 0 || p[n] == ' ' || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

/*
 * Mount point of the cgroup2 file system (@v2) or of the v1 hierarchy
 * with the cpuset controller, from /proc/self/mountinfo.
 */
static int find_mount(bool v2, char *out, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep, fstype[64], src[256], opts[1024];

		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) != 3)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") : (strcmp(fstype, "cgroup") || !has_word(opts, "cpuset")))
			continue;
		snprintf(out, len, "%s", mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Append to cg->why (truncation acceptable). */
static void why_add(struct bench_cgroup *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why_add(struct bench_cgroup *cg, const char *fmt, ...)
{
	size_t n = strlen(cg->why);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cg->why + n, sizeof(cg->why) - n, fmt, ap);
	va_end(ap);
}

static void cg_path(const struct bench_cgroup *cg, const char *sub, const char *file, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s/%s", cg->base, *sub ? "/" : "", sub, file);
}

/* Make the base group and the role groups under @root, version @v. */
static int make_groups(struct bench_cgroup *cg, const char *root, int v)
{
	char p[1024], buf[256];
	int r, ret;

	if (snprintf(cg->base, sizeof(cg->base), "%s/%s%d", root, BENCH_SOCKDIR_PREFIX, (int)getpid()) >=
	    (int)sizeof(cg->base))
		return -ENAMETOOLONG;
	if (mkdir(cg->base, 0755) && errno != EEXIST)
		return -errno;
	cg->version = v;
	if (v == 2) {
		cg_path(cg, "", "cgroup.subtree_control", p, sizeof(p));
		ret = write_str(p, "+cpuset");
		if (ret)
			return ret;
	} else {
		/* a v1 cpuset takes tasks only once cpus and mems are set */
		snprintf(p, sizeof(p), "%s/cpuset.mems", root);
		if ((ret = read_str(p, cg->mems, sizeof(cg->mems))))
			return ret;
		snprintf(p, sizeof(p), "%s/cpuset.cpus", root);
		if ((ret = read_str(p, buf, sizeof(buf))))
			return ret;
		cg_path(cg, "", "cpuset.cpus", p, sizeof(p));
		if ((ret = write_str(p, buf)))
			return ret;
		cg_path(cg, "", "cpuset.mems", p, sizeof(p));
		if ((ret = write_str(p, cg->mems)))
			return ret;
	}
	for (r = 0; r < BENCH_CG_NR; r++) {
		snprintf(p, sizeof(p), "%s/%s", cg->base, role_names[r]);
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		if (v == 1) {
			cg_path(cg, role_names[r], "cpuset.mems", p, sizeof(p));
			if ((ret = write_str(p, cg->mems)))
				return ret;
		}
	}
	return 0;
}

/* rmdir with a few retries: a group stays busy until its tasks are reaped. */
static int rmdir_retry(const char *p)
{
	const struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < 50; i++) {
		if (!rmdir(p) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

static int remove_tree(const char *base)
{
	char p[1024];
	int r, ret = 0, e;

	for (r = 0; r < BENCH_CG_NR; r++) {
		snprintf(p, sizeof(p), "%s/%s", base, role_names[r]);
		e = rmdir_retry(p);
		if (e && !ret)
			ret = e;
	}
	e = rmdir_retry(base);
	return ret ? ret : e;
}

/**
 * bench_cg_clean_stale() - remove nvmf-bench.<pid> groups of dead runs.
 * @root: a cgroup mount point (borrowed).
 *
 * Only groups whose pid no longer exists are touched; a group that still
 * has tasks cannot be removed and is left.
 * Return: groups removed (>= 0), or -errno if @root cannot be read.
 * Context: main thread.
 */
int bench_cg_clean_stale(const char *root)
{
	size_t pl = strlen(BENCH_SOCKDIR_PREFIX);
	struct dirent *de;
	DIR *d = opendir(root);
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char p[PATH_MAX], *end;
		long pid;

		if (strncmp(de->d_name, BENCH_SOCKDIR_PREFIX, pl))
			continue;
		errno = 0;
		pid = strtol(de->d_name + pl, &end, 10);
		if (errno || *end || pid <= 0 || !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		snprintf(p, sizeof(p), "%s/%s", root, de->d_name);
		if (!remove_tree(p))
			n++;
	}
	closedir(d);
	return n;
}

/**
 * bench_cg_clean_all_stale() - bench_cg_clean_stale() on the cgroup2 mount
 * and the v1 cpuset mount, where there are such.
 *
 * Return: groups removed.
 * Context: main thread.
 */
int bench_cg_clean_all_stale(void)
{
	char root[PATH_MAX];
	int n = 0, r;

	if (!find_mount(true, root, sizeof(root)) && (r = bench_cg_clean_stale(root)) > 0)
		n += r;
	if (!find_mount(false, root, sizeof(root)) && (r = bench_cg_clean_stale(root)) > 0)
		n += r;
	return n;
}

/**
 * bench_cg_setup() - decide on cpuset cgroups and create this run's groups.
 * @cg: out; cg->version is 2 or 1 when groups were made, 0 for affinity
 *      only, with the reason in cg->why either way.
 * @mode: "auto" (v2, else v1, else none), "v2", "v1" or "off".
 *
 * Return: 0 (also when falling back to affinity in "auto" and "off");
 * -errno when "v2" or "v1" was asked for and cannot be had (cg->why says
 * why).
 * Context: main thread, before any child is started.
 */
int bench_cg_setup(struct bench_cgroup *cg, const char *mode)
{
	char root[PATH_MAX], p[PATH_MAX + 64], buf[512];
	bool want2 = !strcmp(mode, "auto") || !strcmp(mode, "v2");
	bool want1 = !strcmp(mode, "auto") || !strcmp(mode, "v1");
	int ret = -ENOENT;

	memset(cg, 0, sizeof(*cg));
	if (!want1 && !want2) {
		snprintf(cg->why, sizeof(cg->why), "affinity only (--cgroup off)");
		return 0;
	}
	snprintf(cg->why, sizeof(cg->why), "affinity only (no writable cpuset cgroup: ");
	if (want2) {
		if (find_mount(true, root, sizeof(root))) {
			why_add(cg, "no cgroup2 mount");
		} else {
			snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
			if (read_str(p, buf, sizeof(buf)) || !has_word(buf, "cpuset")) {
				why_add(cg, "cgroup v2 at %s has no cpuset controller", root);
			} else {
				snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root);
				bench_cg_clean_stale(root);
				ret = read_str(p, buf, sizeof(buf));
				if (!ret && !has_word(buf, "cpuset"))
					ret = write_str(p, "+cpuset");
				if (!ret)
					ret = make_groups(cg, root, 2);
				if (!ret) {
					cg->why[0] = 0;
					why_add(cg, "cpuset cgroups (v2) under %s", cg->base);
					return 0;
				}
				if (*cg->base)
					remove_tree(cg->base);
				cg->version = 0;
				why_add(cg, "cgroup v2 at %s: %s", root, strerror(-ret));
			}
		}
	}
	if (want1) {
		if (find_mount(false, root, sizeof(root))) {
			why_add(cg, "%sno v1 cpuset mount",
				 want2 ? "; " : "");
		} else {
			bench_cg_clean_stale(root);
			ret = make_groups(cg, root, 1);
			if (!ret) {
				cg->why[0] = 0;
				why_add(cg, "cpuset cgroups (v1) under %s", cg->base);
				return 0;
			}
			if (*cg->base)
				remove_tree(cg->base);
			cg->version = 0;
			why_add(cg, "%sv1 cpuset at %s: %s",
				 want2 ? "; " : "", root, strerror(-ret));
		}
	}
	why_add(cg, ")");
	cg->base[0] = 0;
	return strcmp(mode, "auto") ? (ret ? ret : -ENOENT) : 0;
}

/**
 * bench_cg_prepare() - set a role's CPUs before one of its processes starts.
 * @cg: from bench_cg_setup() (borrowed); version 0 does nothing.
 * @role: BENCH_CG_TARGET, BENCH_CG_INITIATOR or BENCH_CG_LOAD.
 * @cpus: the role's CPU set for this run (borrowed).
 * @procs: out: the group's cgroup.procs, for bench_proc_spawn(); "" when
 *         cgroups are not used.
 * @len: size of @procs.
 *
 * Return: 0, or -errno of the cpuset.cpus write (the group is then not
 * used for this process: @procs is "").
 * Context: main thread, between runs (the role's group is empty).
 */
int bench_cg_prepare(const struct bench_cgroup *cg, enum bench_cg_role role, const struct bench_cpuset *cpus,
		     char *procs, size_t len)
{
	char p[1024], list[512];
	int ret;

	procs[0] = 0;
	if (!cg || !cg->version)
		return 0;
	bench_cpuset_format(cpus, list, sizeof(list));
	cg_path(cg, role_names[role], "cpuset.cpus", p, sizeof(p));
	ret = write_str(p, list);
	if (ret)
		return ret;
	cg_path(cg, role_names[role], "cgroup.procs", procs, len);
	return 0;
}

/**
 * bench_cg_destroy() - remove this run's groups (their tasks must be gone).
 * @cg: borrowed; safe to call twice and with version 0.
 *
 * Return: 0, or -errno of the first rmdir that failed.
 * Context: main thread, after bench_proc_kill_all().
 */
int bench_cg_destroy(struct bench_cgroup *cg)
{
	int ret;

	if (!cg->version || !*cg->base)
		return 0;
	ret = remove_tree(cg->base);
	if (!ret)
		cg->base[0] = 0;
	return ret;
}
