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
 *
 * A cell's target.cpu_quota limits the target's processes with CFS
 * bandwidth control, quota x BENCH_CPU_PERIOD_US per period of
 * BENCH_CPU_PERIOD_US (bench_cg_setup_cpu() finds the controller once,
 * bench_cg_prepare_quota() sets it per run). With v2 cpuset groups it is
 * cpu.max of <root>/nvmf-bench.<pid>/target, the cpu controller being
 * enabled in nvmf-bench.<pid> for the runs with a quota only. Otherwise it
 * is the v1 cpu hierarchy: <cpu mount>/nvmf-bench.<pid>/target with
 * cpu.cfs_period_us and cpu.cfs_quota_us, which a target with a quota
 * joins besides its cpuset group (a target without one stays where it is);
 * it is removed with the cpuset groups, and by bench_cg_clean_stale()
 * after a killed run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
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
 * with the controller @ctrl ("cpuset", "cpu"), from /proc/self/mountinfo.
 */
static int find_mount(bool v2, const char *ctrl, char *out, size_t len)
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
		if (v2 ? strcmp(fstype, "cgroup2") : (strcmp(fstype, "cgroup") || !has_word(opts, ctrl)))
			continue;
		snprintf(out, len, "%s", mnt);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Append to @buf of @size bytes (truncation acceptable). */
static void vappend(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

static void vappend(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t n = strlen(buf);

	vsnprintf(buf + n, size - n, fmt, ap);
}

/* Append to cg->why. */
static void why_add(struct bench_cgroup *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why_add(struct bench_cgroup *cg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(cg->why, sizeof(cg->why), fmt, ap);
	va_end(ap);
}

/* Append to cg->cpu_why. */
static void cpu_why_add(struct bench_cgroup *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cpu_why_add(struct bench_cgroup *cg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(cg->cpu_why, sizeof(cg->cpu_why), fmt, ap);
	va_end(ap);
}

static void cg_path(const struct bench_cgroup *cg, const char *sub, const char *file, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s/%s", cg->base, *sub ? "/" : "", sub, file);
}

/* A file of the target's v1 cpu group (cpu_version 1). */
static void cpu_path(const struct bench_cgroup *cg, const char *file, char *out, size_t len)
{
	snprintf(out, len, "%s/%s/%s", *cg->cpu_base ? cg->cpu_base : cg->base, role_names[BENCH_CG_TARGET], file);
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
 * bench_cg_clean_all_stale() - bench_cg_clean_stale() on the cgroup2 mount,
 * the v1 cpuset mount and the v1 cpu mount, where there are such.
 *
 * Return: groups removed.
 * Context: main thread.
 */
int bench_cg_clean_all_stale(void)
{
	char root[PATH_MAX], cpu_root[PATH_MAX];
	int n = 0, r;

	if (!find_mount(true, "", root, sizeof(root)) && (r = bench_cg_clean_stale(root)) > 0)
		n += r;
	if (find_mount(false, "cpuset", root, sizeof(root)))
		root[0] = 0;
	else if ((r = bench_cg_clean_stale(root)) > 0)
		n += r;
	if (!find_mount(false, "cpu", cpu_root, sizeof(cpu_root)) && strcmp(cpu_root, root) &&
	    (r = bench_cg_clean_stale(cpu_root)) > 0)
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
		if (find_mount(true, "", root, sizeof(root))) {
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
		if (find_mount(false, "cpuset", root, sizeof(root))) {
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

/*
 * cgroup v2: the cpu controller for the target group, enabled in the
 * root's and tried in the base group's subtree_control (then disabled
 * again there: bench_cg_prepare_quota() enables it for the runs with a
 * quota only). Return: 0, or -errno with the reason added to cg->cpu_why.
 */
static int setup_cpu_v2(struct bench_cgroup *cg)
{
	char root[PATH_MAX], p[PATH_MAX + 64], buf[512], *slash;
	int ret, e;

	snprintf(root, sizeof(root), "%s", cg->base);
	slash = strrchr(root, '/');
	if (!slash) {
		cpu_why_add(cg, "cgroup v2: no base group");
		return -ENOENT;
	}
	*slash = 0;
	snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
	if (read_str(p, buf, sizeof(buf)) || !has_word(buf, "cpu")) {
		cpu_why_add(cg, "cgroup v2 at %s has no cpu controller", root);
		return -ENODEV;
	}
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", root);
	ret = read_str(p, buf, sizeof(buf));
	if (!ret && !has_word(buf, "cpu"))
		ret = write_str(p, "+cpu");
	if (!ret) {
		cg_path(cg, "", "cgroup.subtree_control", p, sizeof(p));
		ret = write_str(p, "+cpu");
	}
	if (!ret) {
		cg_path(cg, role_names[BENCH_CG_TARGET], "cpu.max", p, sizeof(p));
		snprintf(buf, sizeof(buf), "max %d", BENCH_CPU_PERIOD_US);
		ret = write_str(p, buf);
		cg_path(cg, "", "cgroup.subtree_control", p, sizeof(p));
		e = write_str(p, "-cpu");
		if (!ret)
			ret = e;
	}
	if (ret)
		cpu_why_add(cg, "cgroup v2 cpu controller at %s: %s", root, strerror(-ret));
	return ret;
}

/*
 * cgroup v1: the group <cpu mount>/nvmf-bench.<pid>/target, or the
 * cpuset group itself where cpu and cpuset share a hierarchy, with the
 * period set and no quota yet. Return: 0, or -errno with the reason added
 * to cg->cpu_why.
 */
static int setup_cpu_v1(struct bench_cgroup *cg)
{
	char root[PATH_MAX], cs[PATH_MAX], p[PATH_MAX + 64], v[32];
	int ret;

	if (find_mount(false, "cpu", root, sizeof(root))) {
		cpu_why_add(cg, "no v1 cpu mount");
		return -ENOENT;
	}
	if (!find_mount(false, "cpuset", cs, sizeof(cs)) && !strcmp(cs, root)) {
		if (cg->version != 1) {
			cpu_why_add(cg, "v1 cpu at %s shares its hierarchy with cpuset, whose groups are not used",
				    root);
			return -ENODEV;
		}
		cg->cpu_base[0] = 0;
	} else {
		bench_cg_clean_stale(root);
		if (snprintf(cg->cpu_base, sizeof(cg->cpu_base), "%s/%s%d", root, BENCH_SOCKDIR_PREFIX,
			     (int)getpid()) >= (int)sizeof(cg->cpu_base)) {
			cg->cpu_base[0] = 0;
			ret = -ENAMETOOLONG;
			goto err;
		}
		snprintf(p, sizeof(p), "%s/%s", cg->cpu_base, role_names[BENCH_CG_TARGET]);
		if ((mkdir(cg->cpu_base, 0755) && errno != EEXIST) || (mkdir(p, 0755) && errno != EEXIST)) {
			ret = -errno;
			goto err_remove;
		}
	}
	cpu_path(cg, "cpu.cfs_period_us", p, sizeof(p));
	snprintf(v, sizeof(v), "%d", BENCH_CPU_PERIOD_US);
	ret = write_str(p, v);
	if (!ret) {
		cpu_path(cg, "cpu.cfs_quota_us", p, sizeof(p));
		ret = write_str(p, "-1");
	}
	if (!ret)
		return 0;
err_remove:
	if (*cg->cpu_base)
		remove_tree(cg->cpu_base);
	cg->cpu_base[0] = 0;
err:
	cpu_why_add(cg, "v1 cpu at %s: %s", root, strerror(-ret));
	return ret;
}

/**
 * bench_cg_setup_cpu() - find a cpu controller for target.cpu_quota.
 * @cg: from bench_cg_setup() (borrowed); sets cpu_version, cpu_base and
 *      cpu_why (what is used, or why none).
 * @mode: the --cgroup mode bench_cg_setup() was given: "auto" (v2 where the
 *        cpuset groups are v2, else v1), "v2", "v1"; "off" uses none.
 *
 * Called only when a cell to be run has a quota: the cpu controller is
 * not touched otherwise.
 * Return: 0 when the quota can be set; -errno otherwise (cg->cpu_why
 * says why). Not fatal for the run: only cells with a quota then fail.
 * Context: main thread, after bench_cg_setup(), before any child starts.
 */
int bench_cg_setup_cpu(struct bench_cgroup *cg, const char *mode)
{
	bool want2 = !strcmp(mode, "auto") || !strcmp(mode, "v2");
	bool want1 = !strcmp(mode, "auto") || !strcmp(mode, "v1");
	int ret = -ENODEV;

	cg->cpu_version = 0;
	cg->cpu_base[0] = 0;
	cg->cpu_why[0] = 0;
	if (!want1 && !want2) {
		cpu_why_add(cg, "none (--cgroup off)");
		return -ENODEV;
	}
	cpu_why_add(cg, "none (");
	if (want2) {
		if (cg->version != 2) {
			cpu_why_add(cg, "no cpuset groups in cgroup v2");
		} else if (!(ret = setup_cpu_v2(cg))) {
			cg->cpu_version = 2;
			cg->cpu_why[0] = 0;
			cpu_why_add(cg, "cpu cgroup (v2) %s/%s, period %d us", cg->base, role_names[BENCH_CG_TARGET],
				    BENCH_CPU_PERIOD_US);
			return 0;
		}
	}
	if (want1) {
		cpu_why_add(cg, "%s", want2 ? "; " : "");
		ret = setup_cpu_v1(cg);
		if (!ret) {
			cg->cpu_version = 1;
			cg->cpu_why[0] = 0;
			cpu_why_add(cg, "cpu cgroup (v1) %s/%s, period %d us", *cg->cpu_base ? cg->cpu_base : cg->base,
				    role_names[BENCH_CG_TARGET], BENCH_CPU_PERIOD_US);
			return 0;
		}
	}
	cpu_why_add(cg, ")");
	return ret ? ret : -ENODEV;
}

/**
 * bench_cg_prepare_quota() - set the target's CPU quota before it starts.
 * @cg: from bench_cg_setup() and bench_cg_setup_cpu() (borrowed), or NULL.
 * @quota: CPUs worth of time per BENCH_CPU_PERIOD_US (at least
 *         BENCH_CPU_QUOTA_MIN); 0 = no limit.
 * @procs: the target's cgroup.procs list from bench_cg_prepare(); with a
 *         quota in a v1 cpu group of its own, that group's cgroup.procs is
 *         appended on a line of its own (the target joins both).
 * @len: size of @procs.
 *
 * v2: the cpu controller is enabled in the base group with cpu.max
 * "<quota_us> <period_us>" in the target group, and disabled for a run
 * without a quota. v1: cpu.cfs_quota_us is the quota, -1 without one.
 * Return: 0; -ENODEV when @quota > 0 and no cpu controller is usable
 * (cg->cpu_why says why); -ENAMETOOLONG when @procs is too short;
 * -errno of a write.
 * Context: main thread, between runs (the target group is empty).
 */
int bench_cg_prepare_quota(const struct bench_cgroup *cg, double quota, char *procs, size_t len)
{
	long long us = llround(quota * BENCH_CPU_PERIOD_US);
	char p[1100], v[64];
	size_t n;
	int ret;

	if (!cg || !cg->cpu_version)
		return quota > 0 ? -ENODEV : 0;
	if (cg->cpu_version == 2) {
		cg_path(cg, "", "cgroup.subtree_control", p, sizeof(p));
		ret = write_str(p, quota > 0 ? "+cpu" : "-cpu");
		if (ret || quota <= 0)
			return ret;
		cg_path(cg, role_names[BENCH_CG_TARGET], "cpu.max", p, sizeof(p));
		snprintf(v, sizeof(v), "%lld %d", us, BENCH_CPU_PERIOD_US);
		return write_str(p, v);
	}
	/* the period was set by setup_cpu_v1() */
	cpu_path(cg, "cpu.cfs_quota_us", p, sizeof(p));
	snprintf(v, sizeof(v), "%lld", quota > 0 ? us : -1LL);
	ret = write_str(p, v);
	if (ret || quota <= 0 || !*cg->cpu_base)
		return ret;
	n = strlen(procs);
	if (snprintf(procs + n, len - n, "%s%s/%s/cgroup.procs", n ? "\n" : "", cg->cpu_base,
		     role_names[BENCH_CG_TARGET]) >= (int)(len - n)) {
		procs[n] = 0;
		return -ENAMETOOLONG;
	}
	return 0;
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
 * Removes the v1 cpu group of bench_cg_setup_cpu() too.
 * Return: 0, or -errno of the first rmdir that failed.
 * Context: main thread, after bench_proc_kill_all().
 */
int bench_cg_destroy(struct bench_cgroup *cg)
{
	int ret = 0, e;

	if (cg->cpu_version == 1 && *cg->cpu_base) {
		ret = remove_tree(cg->cpu_base);
		if (!ret) {
			cg->cpu_base[0] = 0;
			cg->cpu_version = 0;
		}
	}
	if (!cg->version || !*cg->base)
		return ret;
	e = remove_tree(cg->base);
	if (!e)
		cg->base[0] = 0;
	return ret ? ret : e;
}
