// SPDX-License-Identifier: MIT
/*
 * nvmf-bench child processes: every child (nvmfd, nvmf-perf, stress-ng,
 * the hog) is the leader of its own process group, asks the kernel to
 * kill it when the bench dies (PR_SET_PDEATHSIG), and is recorded in a
 * registry of live groups so that any exit path - normal, error, Ctrl-C,
 * SIGTERM - can kill whole groups and reap them. The bench is also a
 * child subreaper, so grandchildren (stress-ng's workers) that outlive
 * their parent are reparented to us and reaped here rather than leaking.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal/proc.h"
#include "bench.h"

#define MAX_GROUPS 128

/* Live process groups (leader pid == pgid); 0 = free slot. */
static pid_t groups[MAX_GROUPS];

/*
 * Leaders reaped by reap_any() (which must collect reparented
 * grandchildren with waitpid(-1)) before their owner asked: their status
 * is kept here for bench_proc_poll_exit().
 */
static struct {
	pid_t pid;
	int status;
} early[MAX_GROUPS];

/**
 * bench_now() - monotonic time in seconds.
 *
 * Return: seconds since an arbitrary start.
 * Context: any.
 */
double bench_now(void)
{
	return (double)nvmfd__mono_ns() / 1e9;
}

/**
 * bench_fmt() - snprintf() for messages where truncation is acceptable.
 * @buf: output, always NUL-terminated.
 * @len: size of @buf (> 0).
 * @fmt: printf format.
 *
 * Context: any.
 */
void bench_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/**
 * bench_sleep() - sleep @s seconds, returning early on a stop signal.
 * @s: seconds.
 *
 * Context: main thread.
 */
void bench_sleep(double s)
{
	struct timespec ts;

	if (s <= 0 || bench_stop_sig)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void group_add(pid_t pg)
{
	int i;

	for (i = 0; i < MAX_GROUPS; i++) {
		if (!groups[i]) {
			groups[i] = pg;
			return;
		}
	}
}

static void group_del(pid_t pg)
{
	int i;

	for (i = 0; i < MAX_GROUPS; i++)
		if (groups[i] == pg)
			groups[i] = 0;
}

/* bench_proc_own_session(): the next spawn's child calls setsid() */
static bool next_setsid;

void bench_proc_own_session(bool on)
{
	next_setsid = on;
}

/* In the child right after fork: own group (or own session, which is a
 * group of its own too), die with the parent. */
static void child_setup(pid_t parent)
{
	sigset_t none;

	if (!next_setsid || setsid() < 0)
		setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the bench died between fork and prctl */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* fork() after flushing stdio; the child is set up by child_setup().
 * Return: as fork(), but -errno on failure. */
static pid_t fork_child(void)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_setup(parent);
	return pid;
}

static int redirect(const char *path, int fd, int flags)
{
	int f;

	f = open(path ? path : "/dev/null", flags, 0644);
	if (f < 0)
		return -errno;
	if (f != fd) {
		dup2(f, fd);
		close(f);
	}
	return 0;
}

/*
 * In the child: join the cgroups whose cgroup.procs files are listed in
 * @procs, one per line (the role's cpuset group, and the v1 cpu group of
 * a target with a CPU quota). On failure *@bad is the file that refused.
 */
static int join_cgroup(const char *procs, const char **bad)
{
	static char one[4096];
	const char *p = procs;
	int fd, ret = 0;

	while (p && *p && !ret) {
		size_t n = strcspn(p, "\n");

		snprintf(one, sizeof(one), "%.*s", (int)n, p);
		p += n + (p[n] == '\n');
		if (!*one)
			continue;
		*bad = one;
		fd = open(one, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (write(fd, "0\n", 2) != 2)
			ret = -errno;
		close(fd);
	}
	return ret;
}

static void set_affinity(const struct bench_cpuset *cpus)
{
	cpu_set_t set;
	int i;

	if (!cpus || !cpus->nr)
		return;
	CPU_ZERO(&set);
	for (i = 0; i < cpus->nr; i++)
		CPU_SET(cpus->cpu[i], &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/**
 * bench_proc_spawn() - fork/exec @argv as the leader of a new process group.
 * @argv: NULL-terminated, argv[0] is the path (borrowed).
 * @out_path: file for stdout (truncated), NULL = /dev/null.
 * @err_path: file for stderr (truncated), NULL = /dev/null.
 * @cpus: CPU affinity of the child, NULL or empty = inherit.
 * @nice_level: nice value for the child (0 = inherit).
 * @cg_procs: cgroup.procs files of the cgroups the child joins before it
 *            executes @argv, one per line (its role's cpuset group; a
 *            target with a CPU quota also its v1 cpu group); NULL or "" =
 *            stay in ours. Failing to join is an exec failure (status 127,
 *            message in @err_path).
 *
 * The child gets PR_SET_PDEATHSIG(SIGKILL) and default signal handling;
 * its group is registered for bench_proc_kill_all().
 *
 * Return: the child's pid (== its pgid), or -errno if fork failed. An
 * exec failure shows up as exit status 127 with a message in @err_path.
 * Context: main thread.
 */
pid_t bench_proc_spawn(char *const argv[], const char *out_path, const char *err_path,
		       const struct bench_cpuset *cpus, int nice_level, const char *cg_procs)
{
	pid_t pid = fork_child();
	const char *bad = "";
	int e;

	if (pid < 0)
		return pid;
	if (pid == 0) {
		if (redirect(NULL, 0, O_RDONLY) || redirect(out_path, 1, O_WRONLY | O_CREAT | O_TRUNC) ||
		    redirect(err_path, 2, O_WRONLY | O_CREAT | O_TRUNC))
			_exit(127);
		e = join_cgroup(cg_procs, &bad);
		if (e) {
			fprintf(stderr, "nvmf-bench: cannot join the cgroup %s: %s\n", bad, strerror(-e));
			_exit(127);
		}
		set_affinity(cpus);
		if (nice_level)
			setpriority(PRIO_PROCESS, 0, nice_level);
		execv(argv[0], argv);
		fprintf(stderr, "nvmf-bench: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	/* also in the parent: no window without a group (not for a child
	 * making its own session: a group leader could not) */
	if (!next_setsid)
		setpgid(pid, pid);
	group_add(pid);
	return pid;
}

struct hog_arg {
	int cpu;
	int nice_level;
	long load_pct;
	size_t bytes;
};


/*
 * The competing load of bench/seeds.md §A: pinned to one CPU at high priority, rewrite a
 * large buffer, sleep 10 ms, repeat. Below 100 % load the rewrite stops
 * after the share of a period that gives load_pct of one CPU.
 */
static void *hog_thread(void *p)
{
	struct hog_arg *a = p;
	const struct timespec pause = { 0, 10 * 1000 * 1000 };
	cpu_set_t set;
	unsigned char *buf;
	size_t off = 0;
	unsigned char v = 1;
	double work_s;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	/* nice is per thread on Linux */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), a->nice_level))
		fprintf(stderr, "hog cpu %d: nice %d not permitted: %s\n", a->cpu, a->nice_level, strerror(errno));
	buf = malloc(a->bytes);
	if (!buf) {
		fprintf(stderr, "hog cpu %d: cannot allocate %zu bytes\n", a->cpu, a->bytes);
		return NULL;
	}
	work_s = a->load_pct >= 100 ? -1 : 0.010 * a->load_pct / (100 - a->load_pct);
	for (;;) {
		double t0 = bench_now();

		for (;;) {
			size_t n = a->bytes - off < 65536 ? a->bytes - off : 65536;

			memset(buf + off, v, n);
			off += n;
			if (off >= a->bytes) {
				off = 0;
				v++;
				if (work_s < 0)
					break; /* full rewrite, then the pause */
			}
			if (work_s >= 0 && bench_now() - t0 >= work_s)
				break;
		}
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/**
 * bench_proc_spawn_hog() - start the builtin competing load (bench/seeds.md §A).
 * @cpus: one thread pinned to each of these CPUs (borrowed).
 * @nice_level: nice of each thread (-20 needs CAP_SYS_NICE; a failure is
 *              logged to @log_path and the thread runs at its default).
 * @load_pct: share of each CPU the thread keeps busy, 1..100.
 * @buffer_mb: buffer each thread rewrites, MiB (0 -> 1 MiB).
 * @log_path: stderr of the hog process.
 * @cg_procs: cpuset cgroup to join first, as for bench_proc_spawn().
 *
 * The hog is a forked child process (its own process group) whose
 * threads run until it is killed.
 *
 * Return: its pid, or -errno if fork failed.
 * Context: main thread.
 */
pid_t bench_proc_spawn_hog(const struct bench_cpuset *cpus, int nice_level, long load_pct, long buffer_mb,
			   const char *log_path, const char *cg_procs)
{
	pid_t pid = fork_child();

	if (pid < 0)
		return pid;
	if (pid == 0) {
		struct hog_arg *args;
		const char *bad = "";
		pthread_t th;
		int i, e;

		redirect(NULL, 0, O_RDONLY);
		redirect(NULL, 1, O_WRONLY);
		redirect(log_path, 2, O_WRONLY | O_CREAT | O_TRUNC);
		e = join_cgroup(cg_procs, &bad);
		if (e) {
			fprintf(stderr, "hog: cannot join the cgroup %s: %s\n", bad, strerror(-e));
			_exit(1);
		}
		prctl(PR_SET_NAME, "nvmf-bench-hog");
		args = calloc(cpus->nr, sizeof(*args));
		if (!args)
			_exit(1);
		for (i = 0; i < cpus->nr; i++) {
			args[i].cpu = cpus->cpu[i];
			args[i].nice_level = nice_level;
			args[i].load_pct = load_pct;
			args[i].bytes = (size_t)(buffer_mb ? buffer_mb : 1) << 20;
			if (pthread_create(&th, NULL, hog_thread, &args[i])) {
				fprintf(stderr, "hog: pthread_create failed\n");
				_exit(1);
			}
		}
		fprintf(stderr, "hog: %d threads, nice %d, load %ld%%, %ld MiB each\n", cpus->nr, nice_level,
			load_pct, buffer_mb);
		for (;;)
			pause();
	}
	if (!next_setsid)
		setpgid(pid, pid);
	group_add(pid);
	return pid;
}

static bool is_leader(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_GROUPS; i++)
		if (groups[i] == pid)
			return true;
	return false;
}

/* Reap any exited child (ours or reparented grandchildren), no blocking. */
static void reap_any(void)
{
	pid_t pid;
	int st, i;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (!is_leader(pid))
			continue;
		for (i = 0; i < MAX_GROUPS; i++) {
			if (!early[i].pid) {
				early[i].pid = pid;
				early[i].status = st;
				break;
			}
		}
	}
}

/* Status of @pid if reap_any() got it first (and forget it). */
static bool take_early(pid_t pid, int *status)
{
	int i;

	for (i = 0; i < MAX_GROUPS; i++) {
		if (early[i].pid == pid) {
			if (status)
				*status = early[i].status;
			early[i].pid = 0;
			return true;
		}
	}
	return false;
}

/**
 * bench_proc_poll_exit() - has child @pid exited?
 * @pid: a child spawned by this file.
 * @status: its wait status when it has.
 *
 * Return: 1 if it exited (reaped now), 0 if still running, -ECHILD if it
 * is not (or no longer) our child.
 * Context: main thread.
 */
int bench_proc_poll_exit(pid_t pid, int *status)
{
	pid_t r;

	if (take_early(pid, status))
		return 1;
	r = waitpid(pid, status, WNOHANG);
	if (r == pid)
		return 1;
	if (r == 0)
		return 0;
	return take_early(pid, status) ? 1 : -ECHILD;
}

/**
 * bench_proc_reap_group() - end process group @pgid and reap its leader.
 * @pgid: a group from bench_proc_spawn*().
 * @status: the leader's wait status if it was reaped here (may be NULL).
 * @grace_s: seconds to wait after SIGTERM before SIGKILL.
 *
 * Sends SIGTERM to the group, waits up to @grace_s for the whole group to
 * be gone, then SIGKILLs what remains and waits until kill(-pgid, 0)
 * reports no member left.
 *
 * Return: 0 when the group is empty; -ETIMEDOUT if members survived
 * SIGKILL for 5 s (should not happen).
 * Context: main thread.
 */
int bench_proc_reap_group(pid_t pgid, int *status, double grace_s)
{
	double t0;
	int st;
	bool killed = false;

	if (pgid <= 0)
		return 0;
	kill(-pgid, SIGTERM);
	t0 = bench_now();
	for (;;) {
		pid_t r = waitpid(pgid, &st, WNOHANG);

		if (r == pgid && status)
			*status = st;
		if (r != pgid && take_early(pgid, &st) && status)
			*status = st;
		reap_any();
		if (kill(-pgid, 0) && errno == ESRCH)
			break;
		if (!killed && bench_now() - t0 > grace_s) {
			kill(-pgid, SIGKILL);
			killed = true;
		}
		if (bench_now() - t0 > grace_s + 5) {
			group_del(pgid);
			return -ETIMEDOUT;
		}
		{
			const struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	group_del(pgid);
	take_early(pgid, NULL);
	return 0;
}

/**
 * bench_proc_wait() - wait for child @pid to exit on its own, then end
 *                     its group.
 * @pid: a group leader from bench_proc_spawn*().
 * @status: its wait status (set when it exited within @timeout_s).
 * @timeout_s: seconds to wait before the group is killed.
 *
 * Return: 0 if it exited by itself; -ETIMEDOUT if it had to be killed;
 * -EINTR if a stop signal arrived first (the group is killed too).
 * Context: main thread.
 */
int bench_proc_wait(pid_t pid, int *status, double timeout_s)
{
	double t0 = bench_now();
	int ret = -ETIMEDOUT;

	while (bench_now() - t0 < timeout_s) {
		if (bench_proc_poll_exit(pid, status) == 1) {
			ret = 0;
			break;
		}
		if (bench_stop_sig) {
			ret = -EINTR;
			break;
		}
		{
			const struct timespec ts = { 0, 10 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	bench_proc_reap_group(pid, NULL, 0);
	return ret;
}

/**
 * bench_proc_kill_all() - SIGKILL every registered group and reap it.
 *
 * Used on interruption and fatal errors; safe to call more than once.
 * Context: main thread.
 */
void bench_proc_kill_all(void)
{
	int i;

	for (i = 0; i < MAX_GROUPS; i++)
		if (groups[i])
			kill(-groups[i], SIGKILL);
	for (i = 0; i < MAX_GROUPS; i++)
		if (groups[i])
			bench_proc_reap_group(groups[i], NULL, 0);
	reap_any();
}

/**
 * bench_proc_alive() - number of registered groups still alive.
 *
 * Return: count of groups with at least one member.
 * Context: main thread.
 */
int bench_proc_alive(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_GROUPS; i++)
		if (groups[i] && !(kill(-groups[i], 0) && errno == ESRCH))
			n++;
	return n;
}

/**
 * bench_bench_read_file() - read up to @len - 1 bytes of a (small) file.
 * @path: e.g. a /proc or /sys file (borrowed).
 * @buf: out, NUL-terminated.
 * @len: size of @buf (> 0).
 *
 * Return: 0; -errno of open(); -EIO if read() failed.
 * Context: any.
 */
int bench_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/*
 * Call @fn(text, @arg) with /proc/@pid/task/<tid>/@name of every thread.
 * Return: files read (threads may exit meanwhile); -ESRCH if the process
 * is gone.
 */
static int task_files(pid_t pid, const char *name, void (*fn)(const char *text, void *arg), void *arg)
{
	char path[64], buf[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d))) {
		char tpath[300];

		if (de->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/%s", pid, de->d_name, name);
		if (bench_read_file(tpath, buf, sizeof(buf)))
			continue;
		fn(buf, arg);
		n++;
	}
	closedir(d);
	return n;
}

/* task_files() callback: a schedstat file's first field (arg: one counter) */
static void add_first(const char *text, void *arg)
{
	*(uint64_t *)arg += strtoull(text, NULL, 10);
}

/**
 * bench_proc_sample() - CPU time and context switches of process @pid.
 * @pid: any process.
 * @cpu_ticks: utime + stime of the whole process (clock ticks, includes
 *             exited threads).
 * @vctx: voluntary context switches summed over /proc/@pid/task/ *.
 * @ictx: involuntary context switches, same.
 *
 * Return: 0, or -ESRCH if the process is gone.
 * Context: any.
 */
int bench_proc_sample(pid_t pid, uint64_t *cpu_ticks, uint64_t *vctx, uint64_t *ictx)
{
	uint64_t ut, st;

	/* the readers of src/util (internal/proc.h) */
	if (nvmfd__proc_cpu_ticks(pid, &ut, &st))
		return -ESRCH;
	*cpu_ticks = ut + st;
	return nvmfd__proc_threads_ctxsw(pid, vctx, ictx) ? -ESRCH : 0;
}

/**
 * bench_proc_cpu_ns() - CPU time of process @pid from per-thread schedstat.
 * @pid: any process.
 * @ns:  out: the first field of /proc/@pid/task/ * /schedstat (time on a
 *       CPU, ns) summed over the threads alive now; threads that have
 *       exited are not counted, so take deltas over a window in which
 *       the process keeps its threads.
 *
 * Return: 0; -ESRCH if the process is gone; -ENOENT if the kernel has no
 * schedstat files.
 * Context: any.
 */
int bench_proc_cpu_ns(pid_t pid, uint64_t *ns)
{
	int n;

	*ns = 0;
	n = task_files(pid, "schedstat", add_first, ns);
	if (n < 0)
		return n;
	return n ? 0 : -ENOENT;
}

/**
 * bench_sys_sample() - snapshot the machine for the noise guard.
 * @s: out. Fields that cannot be read are 0 (psi_some_avg10: -1).
 *
 * busy_ticks counts what /proc/stat charges to tasks and interrupts
 * (user, nice, system, irq, softirq); own_cpu_s is this process plus its
 * reaped children (RUSAGE_SELF + RUSAGE_CHILDREN), so the difference of
 * two snapshots taken while every child of the interval has been reaped
 * is the CPU time of everything else on the machine.
 *
 * Return: 0; -EIO if /proc/stat is unreadable.
 * Context: main thread.
 */
int bench_sys_sample(struct bench_sys_sample *s)
{
	unsigned long long v[8] = { 0 };
	struct rusage self, kids;
	char buf[1024];
	char *p;

	memset(s, 0, sizeof(*s));
	s->psi_some_avg10 = -1;
	s->t = bench_now();
	if (bench_read_file("/proc/stat", buf, sizeof(buf)) ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]) < 8)
		return -EIO;
	/* user nice system idle iowait irq softirq steal */
	s->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6];
	s->steal_ticks = v[7];
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	s->own_cpu_s = self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6 + self.ru_stime.tv_sec +
		       self.ru_stime.tv_usec / 1e6 + kids.ru_utime.tv_sec + kids.ru_utime.tv_usec / 1e6 +
		       kids.ru_stime.tv_sec + kids.ru_stime.tv_usec / 1e6;
	if (!bench_read_file("/proc/pressure/cpu", buf, sizeof(buf)) && !strncmp(buf, "some ", 5)) {
		p = strstr(buf, "avg10=");
		if (p)
			s->psi_some_avg10 = strtod(p + 6, NULL);
		p = strstr(buf, "total=");
		if (p)
			s->psi_some_total_us = strtoull(p + 6, NULL, 10);
	}
	if (!bench_read_file("/proc/loadavg", buf, sizeof(buf)))
		s->loadavg1 = strtod(buf, NULL);
	return 0;
}

/**
 * bench_sys_foreign_cpus() - CPUs used by other work between @a and @b.
 * @a: earlier snapshot.
 * @b: later snapshot.
 *
 * Return: (machine busy time - own time) / wall time, in CPUs (0.5 =
 * half of one CPU), never negative; 0 if the interval is empty.
 * Context: any.
 */
double bench_sys_foreign_cpus(const struct bench_sys_sample *a, const struct bench_sys_sample *b)
{
	double wall = b->t - a->t, tck = (double)sysconf(_SC_CLK_TCK), f;

	if (wall <= 0 || tck <= 0)
		return 0;
	f = ((double)(b->busy_ticks - a->busy_ticks) / tck - (b->own_cpu_s - a->own_cpu_s)) / wall;
	return f > 0 ? f : 0;
}

/** bench_sys_steal_cpus() - CPUs stolen by the hypervisor between @a and @b. */
double bench_sys_steal_cpus(const struct bench_sys_sample *a, const struct bench_sys_sample *b)
{
	double wall = b->t - a->t, tck = (double)sysconf(_SC_CLK_TCK);

	if (wall <= 0 || tck <= 0)
		return 0;
	return (double)(b->steal_ticks - a->steal_ticks) / tck / wall;
}

/**
 * bench_unix_connect() - connect to the UNIX stream socket @sock_path.
 * @sock_path: borrowed.
 * @timeout_s: send and receive timeout of the socket, seconds.
 *
 * Return: the connected socket (close it), -ENAMETOOLONG, or -errno of
 * socket()/connect().
 * Context: any.
 */
int bench_unix_connect(const char *sock_path, int timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_s, 0 };
	int fd, ret;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/**
 * bench_control_query() - one request on nvmfd's --control socket.
 * @sock_path: UNIX socket path (borrowed).
 * @cmd: command name, e.g. "stats" (sent as {"cmd":"..."} plus newline).
 * @buf: the one-line reply, NUL-terminated, newline stripped.
 * @len: size of @buf.
 *
 * Return: 0; -errno if connect/send/receive failed; -EMSGSIZE if the reply
 * did not fit; -ETIMEDOUT after 2 s without a full reply.
 * Context: main thread.
 */
int bench_control_query(const char *sock_path, const char *cmd, char *buf, size_t len)
{
	char req[128];
	size_t off = 0;
	int fd, ret;

	fd = bench_unix_connect(sock_path, 2);
	if (fd < 0)
		return fd;
	snprintf(req, sizeof(req), "{\"cmd\":\"%s\"}\n", cmd);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		ret = -EIO;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (off + 1 >= len) {
			ret = -EMSGSIZE;
			goto out_close;
		}
		n = recv(fd, buf + off, len - 1 - off, 0);
		if (n < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out_close;
		}
		if (n == 0)
			break;
		off += n;
		if (memchr(buf + off - n, '\n', n))
			break;
	}
	buf[off] = 0;
	buf[strcspn(buf, "\n")] = 0;
	ret = off ? 0 : -EIO;
out_close:
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Per-run directory for the nvmfd control sockets                        */

/* "nvmf-bench.<pid>" or "nvmf-bench.<pid>.<...>.sock": the pid, else 0. */
static pid_t sock_owner(const char *name)
{
	const char *p = name + strlen(BENCH_SOCKDIR_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, BENCH_SOCKDIR_PREFIX, strlen(BENCH_SOCKDIR_PREFIX)))
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno || end == p || pid <= 0 || pid > (long)INT32_MAX)
		return 0;
	if (*end == '\0')
		return (pid_t)pid;
	if (*end == '.' && strlen(end) > 5 && !strcmp(end + strlen(end) - 5, ".sock"))
		return (pid_t)pid;
	return 0;
}

static bool pid_gone(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* Remove the sockets in @dir, then @dir; only sockets, nothing else. */
static int sockdir_remove(const char *dir)
{
	struct dirent *de;
	char p[PATH_MAX];
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(p);
	}
	closedir(d);
	return rmdir(dir) ? -errno : 0;
}

/**
 * bench_sockdir_clean_stale() - remove what dead nvmf-bench runs left in
 * @base: "nvmf-bench.<pid>/" socket directories and old-style
 * "nvmf-bench.<pid>.<cell>.sock" sockets whose pid no longer exists.
 * @base: directory to scan (normally /tmp).
 * Return: the number of entries removed (>= 0), or -errno if @base cannot
 *         be read.
 * Context: main thread.
 */
int bench_sockdir_clean_stale(const char *base)
{
	struct dirent *de;
	char p[PATH_MAX];
	struct stat st;
	int n = 0;
	DIR *d = opendir(base);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid = sock_owner(de->d_name);

		if (!pid || !pid_gone(pid))
			continue;
		snprintf(p, sizeof(p), "%s/%s", base, de->d_name);
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode) && st.st_uid == geteuid()) {
			if (!sockdir_remove(p))
				n++;
		} else if (S_ISSOCK(st.st_mode)) {
			if (!unlink(p))
				n++;
		}
	}
	closedir(d);
	return n;
}

/**
 * bench_sockdir_create() - make this run's private socket directory
 * @base/nvmf-bench.<pid> (mode 0700), after removing stale ones.
 * @base: parent directory (normally /tmp).
 * @out:  out: the directory's path.
 * @len:  size of @out.
 * Return: 0, -ENAMETOOLONG, or -errno of mkdir().
 * Context: main thread.
 */
int bench_sockdir_create(const char *base, char *out, size_t len)
{
	struct stat st;

	bench_sockdir_clean_stale(base);
	if ((size_t)snprintf(out, len, "%s/%s%d", base, BENCH_SOCKDIR_PREFIX, (int)getpid()) >= len)
		return -ENAMETOOLONG;
	/* left by an earlier process that had our pid: not ours to trust */
	if (lstat(out, &st) == 0)
		sockdir_remove(out);
	if (mkdir(out, 0700))
		return -errno;
	return 0;
}

/**
 * bench_sockdir_destroy() - remove @dir and the sockets in it.
 * Return: 0 or -errno of rmdir().
 * Context: main thread.
 */
int bench_sockdir_destroy(const char *dir)
{
	return sockdir_remove(dir);
}
