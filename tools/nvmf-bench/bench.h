/* SPDX-License-Identifier: MIT */
/*
 * nvmf-bench - internal interfaces shared by the bench's source files.
 *
 * Ownership: a struct bench_scenario owns its cells (array) and every
 * string in them; bench_scenario_free() releases all of it. Results
 * (struct bench_result) live inside their cell. Child processes are owned
 * by the process-group registry in proc.c: whoever spawns registers the
 * group, bench_proc_reap_group() or bench_proc_kill_all() ends it.
 *
 * Context: the bench is single-threaded except for the builtin "hog"
 * contention, which runs in a forked child process of its own.
 */
#ifndef NVMF_BENCH_H
#define NVMF_BENCH_H

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stats.h"

#define BENCH_MAX_CPUS 1024
#define BENCH_MAX_ARGS 200 /* 64 controllers x (-r TRID) fit */
#define BENCH_MAX_REPEAT 100
#define BENCH_MAX_CTRLS 64
#define BENCH_NAME_MAX 64

/* Exit statuses of nvmf-bench. */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_CELL_FAILED 1
#define BENCH_EXIT_USAGE 2

/* Set by the SIGINT/SIGTERM/SIGHUP handler: the signal number. */
extern volatile sig_atomic_t bench_stop_sig;

/* Metrics recorded for every cell run; see report.c for headings. */
enum bench_metric {
	BM_IOPS,
	BM_MIBS,
	BM_LAT_MIN,
	BM_LAT_AVG,
	BM_LAT_MAX,
	BM_P50,
	BM_P90,
	BM_P99,
	BM_P999,
	BM_P9999,
	BM_LAT_STDEV,
	BM_HOST_CPU,
	BM_HOST_CTXSW,
	BM_TGT_CPU,
	BM_TGT_CTXSW,
	BM_TGT_CTXSW_PS,
	BM_CQ_EVENTS_PS,
	BM_CPE,
	BM_REQUEUES_PS,
	BM_IDLE_POLLS_PS,
	BM_EAGAIN,
	/* cost per I/O: CPU-seconds per million I/Os, context switches and
	 * syscalls per I/O */
	BM_TGT_CPU_S_MIO,
	BM_HOST_CPU_S_MIO,
	BM_TGT_CTXSW_IO,
	BM_HOST_CTXSW_IO,
	BM_HOST_SYSCALLS_IO,
	/* target syscalls per I/O (perf stat or strace -c over the window,
	 * --syscalls) and I/Os per target CPU-second (1e6 / target_cpu_s_mio,
	 * as its own metric so that its paired ratio gets an interval) */
	BM_TGT_SYSCALLS_IO,
	BM_IOPS_PER_TGT_CPU_S,
	/* noise guard: CPUs used by other work before / during the run, CPU
	 * steal during it (a VM's host busy), CPU pressure and load average
	 * just before it */
	BM_FOREIGN_PRE,
	BM_FOREIGN_RUN,
	BM_STEAL,
	BM_PSI_PRE,
	BM_LOADAVG_PRE,
	BM_NR
};

struct bench_metric_info {
	const char *key; /* CSV/JSON/scenario "columns" name */
	const char *heading; /* report.md column heading */
	const char *fmt; /* printf format of one value */
	double scale; /* value shown = value / scale */
};

extern const struct bench_metric_info bench_metrics[BM_NR];

enum bench_load_kind { BENCH_LOAD_NONE, BENCH_LOAD_STRESS, BENCH_LOAD_HOG };

struct bench_cpuset {
	int nr;
	int cpu[BENCH_MAX_CPUS];
};

/* Which program serves a cell / drives it. */
enum bench_target_kind { BENCH_TARGET_NVMFD, BENCH_TARGET_SPDK };
enum bench_perf_tool { BENCH_PERF_NVMF, BENCH_PERF_SPDK };

/* Target settings of a cell (nvmfd, or SPDK's nvmf_tgt with kind "spdk").
 * Unset numbers are -1, strings "". */
struct bench_target {
	enum bench_target_kind kind;
	char exec[16];
	char affinity_scope[16];
	int affinity_strict; /* -1 unset, 0/1 */
	long max_active;
	int wq_per_ctrl;
	long idle_poll_us;
	int backend_poll;
	char cq_pool[16];
	long rx_budget;
	long tx_budget;
	long rx_budget_pdus;
	long tx_budget_pdus;
	long io_work_deadline_us;
	char io_cpu[16];
	char cpus[128]; /* CPU set spec, resolved when the cell runs */
	/* CFS bandwidth limit of the target's processes, CPUs worth of time
	 * per BENCH_CPU_PERIOD_US (0.5 = half of one CPU); 0 = no limit */
	double cpu_quota;
	char backend[8]; /* null | ram | file */
	char backend_size[16]; /* e.g. "1G" */
	int nr_extra;
	char *extra[16]; /* owned */
};

/* Initiator settings of a cell (nvmf-perf, or spdk_nvme_perf with tool
 * "spdk_nvme_perf"). */
struct bench_perf {
	enum bench_perf_tool tool;
	char pattern[16];
	long io_size; /* bytes */
	long qd;
	char queues[32]; /* "N" or "K*ncpu" */
	long read_pct;
	char digest[16]; /* "", hdr, data, hdr,data */
	int busy_poll;
	int latency; /* spdk_nvme_perf's -L (default 1); 0 only with spdk_nvme_perf */
	char controllers[32]; /* "N" or "K*ncpu": nvmf-perf processes */
	char cpus[128]; /* CPU set spec for the perf processes, "" = any */
	long timeout_ms;
	long rate; /* --rate IOPS per nvmf-perf process, 0 = closed loop */
	int one_process; /* all controllers in one nvmf-perf (several -r) */
	int nr_extra;
	char *extra[16]; /* owned; appended to nvmf-perf's arguments */
};

struct bench_load {
	enum bench_load_kind kind;
	char cpus[128]; /* CPU set spec */
	long nice; /* -20..19 */
	long load_pct; /* 1..100 */
	long buffer_mb; /* hog: per thread; stress-ng: --vm bytes total */
	long workers; /* stress-ng: --cpu workers; 0: one per CPU of the set */
	bool own_session; /* "session": "own": the load runs in a session of its own */
};

struct bench_result {
	int nr; /* runs done */
	int nr_ok;
	double v[BENCH_MAX_REPEAT][BM_NR];
	bool have[BENCH_MAX_REPEAT][BM_NR];
	bool ok[BENCH_MAX_REPEAT];
	char err[BENCH_MAX_REPEAT][160];
	double median[BM_NR];
	double stddev[BM_NR];
	bool have_median[BM_NR];
	double ratio; /* primary metric / baseline's, 0 if unknown */
	/* paired ratio to the baseline (runs of the same round), per metric */
	struct bench_ci ci[BM_NR];
	bool have_ci[BM_NR];
	/* noise guard: run r was made while the machine was busy with other
	 * work (foreign CPU over the threshold); tries[r] runs were made */
	bool busy[BENCH_MAX_REPEAT];
	int tries[BENCH_MAX_REPEAT];
	int nr_busy;
	/* order: position of run r in its round (1 = first) */
	int pos[BENCH_MAX_REPEAT];
	/* What ran, for the record. */
	char target_cmd[1024];
	char perf_cmd[8192];
	char load_desc[256];
	/* CPU sets as resolved on this machine */
	char target_cpus[128];
	char perf_cpus[128];
	char load_cpus[128];
	/* the cell's target.cpu_quota (CPUs), 0 = no limit */
	double target_cpu_quota;
	/* isolation actually used for the run: "cpuset cgroups (v2)",
	 * "affinity only (...)" */
	char isolation[160];
};

struct bench_cell {
	char name[BENCH_NAME_MAX];
	char group[BENCH_NAME_MAX];
	char series[BENCH_NAME_MAX];
	char baseline[BENCH_NAME_MAX]; /* "" = the scenario's */
	bool quick; /* part of the --quick matrix */
	/* not run, and why (e.g. SPDK not available); "" = runs */
	char skip[160];
	/* twin of cells[twin_of] made by the scenario's "spdk" option, -1 if none */
	int twin_of;
	double duration; /* seconds measured */
	double warmup;
	int repeat;
	struct bench_target target;
	struct bench_perf perf;
	struct bench_load load;
	struct bench_result res;
};

struct bench_scenario {
	char name[BENCH_NAME_MAX];
	char *description; /* owned */
	char source[256]; /* "builtin" or file path */
	char baseline[BENCH_NAME_MAX];
	int nr_columns;
	enum bench_metric columns[BM_NR];
	double quick_duration; /* "quick" section; <= 0: not given */
	double quick_warmup; /* < 0: not given */
	int quick_repeat; /* 0: not given */
	int pivot; /* leading columns shown per series in the pivot table */
	/* "spdk" section: twins of every cell against SPDK (target, perf) */
	bool spdk_twin_target;
	bool spdk_twin_perf;
	int nr_cells;
	struct bench_cell *cells; /* owned */
};

/* Overrides from the command line, applied after parsing. */
struct bench_overrides {
	bool quick;
	double duration; /* < 0: keep */
	double warmup;
	int repeat; /* 0: keep */
	const char *cell_filter; /* fnmatch pattern or NULL */
};

/* How target syscalls are counted (--syscalls). */
enum bench_syscalls { BENCH_SYSCALLS_OFF, BENCH_SYSCALLS_PERF, BENCH_SYSCALLS_STRACE };

/* How a run goes: order, noise guard. */
struct bench_run_opts {
	enum bench_syscalls syscalls;
	uint64_t seed; /* run order and bootstrap */
	bool strict; /* re-run runs flagged busy */
	int strict_tries; /* at most this many runs per flagged run */
	double busy_cpus; /* foreign CPUs above which a run is flagged */
};

/* scenario.c */
int bench_scenario_parse(struct json_object *root, const char *source, struct bench_scenario *sc,
			 char *err, size_t errlen);
int bench_scenario_load(const char *path, struct bench_scenario *sc, char *err, size_t errlen);
void bench_scenario_apply(struct bench_scenario *sc, const struct bench_overrides *ov);
void bench_scenario_free(struct bench_scenario *sc);
int bench_cpuset_online(struct bench_cpuset *set);
int bench_cpuset_resolve(const char *spec, const struct bench_cpuset *target, struct bench_cpuset *out);
void bench_cpuset_format(const struct bench_cpuset *set, char *buf, size_t len);
int bench_count_resolve(const char *spec, long *out);
bool bench_cell_needs_spdk(const struct bench_cell *c);
int bench_parse_size(const char *s, long *out);

/* parse.c */
int bench_parse_spdk_perf(const char *text, double *v, bool *have);
int bench_parse_syscall_count(const char *text, double *count);

/* builtin.c */
int bench_builtin_count(void);
const char *bench_builtin_name(int i);
const char *bench_builtin_text(const char *name);

/* proc.c; @cg_procs: cgroup.procs files the child joins before exec, one per line; NULL or "" = none */
pid_t bench_proc_spawn(char *const argv[], const char *out_path, const char *err_path,
		       const struct bench_cpuset *cpus, int nice_level, const char *cg_procs);
/**
 * bench_proc_own_session() - whether the children of the next
 * bench_proc_spawn*() calls start a session of their own (setsid(2)) instead
 * of only a process group; reset it with false after the spawn. With the
 * scheduler's autogroup (CONFIG_SCHED_AUTOGROUP, on in most distribution
 * kernels) a session is a task group: a nice -20 load in the bench's own
 * session takes the group's CPU weight from the target and the initiator on
 * every CPU, not only on the load's CPUs.
 */
void bench_proc_own_session(bool on);

pid_t bench_proc_spawn_hog(const struct bench_cpuset *cpus, int nice_level, long load_pct, long buffer_mb,
			   const char *log_path, const char *cg_procs);
int bench_proc_reap_group(pid_t pgid, int *status, double grace_s);
int bench_proc_wait(pid_t pid, int *status, double timeout_s);
void bench_proc_kill_all(void);
int bench_proc_alive(void);
int bench_proc_poll_exit(pid_t pid, int *status);
int bench_proc_sample(pid_t pid, uint64_t *cpu_ticks, uint64_t *vctx, uint64_t *ictx);
int bench_proc_cpu_ns(pid_t pid, uint64_t *ns);
int bench_read_file(const char *path, char *buf, size_t len);

/* A snapshot of the whole machine for the noise guard (proc.c). */
struct bench_sys_sample {
	double t; /* bench_now() */
	uint64_t busy_ticks; /* /proc/stat user+nice+system+irq+softirq */
	uint64_t steal_ticks;
	double own_cpu_s; /* this process + its reaped children, CPU-seconds */
	double psi_some_avg10; /* /proc/pressure/cpu, %; -1 if unavailable */
	uint64_t psi_some_total_us;
	double loadavg1;
};
int bench_sys_sample(struct bench_sys_sample *s);
double bench_sys_foreign_cpus(const struct bench_sys_sample *a, const struct bench_sys_sample *b);
double bench_sys_steal_cpus(const struct bench_sys_sample *a, const struct bench_sys_sample *b);
int bench_control_query(const char *sock_path, const char *cmd, char *buf, size_t len);
int bench_unix_connect(const char *sock_path, int timeout_s);
/* Control sockets live in <base>/nvmf-bench.<pid>/ (base: /tmp). */
#define BENCH_SOCKDIR_PREFIX "nvmf-bench."
int bench_sockdir_clean_stale(const char *base);
int bench_sockdir_create(const char *base, char *out, size_t len);
int bench_sockdir_destroy(const char *dir);
double bench_now(void);
void bench_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void bench_sleep(double s);

/* cgroup.c: cpuset cgroups per role, a cpu group for the target's CPU
 * quota (see cgroup.c for the layout) */
enum bench_cg_role { BENCH_CG_TARGET, BENCH_CG_INITIATOR, BENCH_CG_LOAD, BENCH_CG_NR };

/* CFS period of target.cpu_quota, µs: short, so that throttling is fine-grained */
#define BENCH_CPU_PERIOD_US 10000
/* the kernel's smallest quota is 1 ms: the smallest target.cpu_quota */
#define BENCH_CPU_QUOTA_MIN 0.1

struct bench_cgroup {
	int version; /* 2 or 1 when this run's groups exist, 0 = affinity only */
	char base[512]; /* <mount>/nvmf-bench.<pid> */
	char mems[64]; /* v1: cpuset.mems copied from the root */
	char why[640]; /* what is used, or why not (for the report) */
	/* the target's CPU quota (bench_cg_setup_cpu()): 2 = cpu.max of the
	 * v2 target group, 1 = cpu.cfs_* of a v1 group, 0 = none */
	int cpu_version;
	char cpu_base[512]; /* v1: <cpu mount>/nvmf-bench.<pid>; "" = base (cpu and cpuset share a hierarchy) */
	char cpu_why[640]; /* what is used, or why not; "" = not asked for */
};
int bench_cg_setup(struct bench_cgroup *cg, const char *mode);
int bench_cg_setup_cpu(struct bench_cgroup *cg, const char *mode);
int bench_cg_prepare(const struct bench_cgroup *cg, enum bench_cg_role role, const struct bench_cpuset *cpus,
		     char *procs, size_t len);
int bench_cg_prepare_quota(const struct bench_cgroup *cg, double quota, char *procs, size_t len);
int bench_cg_destroy(struct bench_cgroup *cg);
int bench_cg_clean_stale(const char *root);
int bench_cg_clean_all_stale(void);

/* run.c */
struct bench_paths {
	const char *nvmfd;
	const char *perf;
	const char *stress_ng;
	const char *gnuplot;
	const char *sock_dir; /* private directory for the control sockets */
	/* SPDK tree with build/bin/{nvmf_tgt,spdk_nvme_perf} and build/lib,
	 * NULL = SPDK cells are skipped */
	const char *spdk_dir;
	const char *env; /* env(1): SPDK's binaries get LD_LIBRARY_PATH through it */
	const char *perf_tool; /* perf(1), for --syscalls perf */
	const char *strace; /* strace(1), for --syscalls strace */
	const struct bench_cgroup *cg; /* cpuset cgroups, or NULL */
};

int bench_cell_run_once(const struct bench_scenario *sc, struct bench_cell *cell, int rep, const char *out_dir,
			const struct bench_paths *paths, const struct bench_run_opts *ro, void (*tick)(void *arg),
			void *tick_arg);

/* report.c */
void bench_result_aggregate(struct bench_scenario *sc, uint64_t seed);
int bench_report_write(struct bench_scenario *scs, int nr, const char *out_dir, const struct bench_paths *paths,
		       const struct bench_run_opts *ro, const char *cmdline, double elapsed_s, bool interrupted);
int bench_metric_lookup(const char *key);

#endif
