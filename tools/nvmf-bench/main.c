// SPDX-License-Identifier: MIT
/*
 * nvmf-bench - run nvmfd + nvmf-perf experiment matrices end to end and
 * write a results folder (report.md, cells.csv, cells.json, plots/).
 * See usage() for the manual, bench/README.md for the scenario format.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

volatile sig_atomic_t bench_stop_sig;

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "unknown"
#endif
#define MAX_SCENARIOS 64
/* per-run overhead beyond warmup + duration: nvmfd start/stop, connects */
#define RUN_OVERHEAD_S 1.5

static void usage(FILE *f)
{
	fputs("Usage: nvmf-bench [OPTION]... [SCENARIO]...\n"
	      "\n"
	      "Run nvmfd/nvmf-perf experiment matrices end to end and report medians.\n"
	      "\n"
	      "Each SCENARIO is the name of a built-in scenario or a path to a scenario\n"
	      "file (JSON; anything containing '/' or ending in .json is a path). With no\n"
	      "SCENARIO every built-in runs. A scenario is a list of cells; for each run of\n"
	      "a cell nvmf-bench\n"
	      "  1. starts nvmfd in its own process group on 127.0.0.1 (port 0: the port\n"
	      "     the kernel picked is read back from the stats of its --control socket),\n"
	      "     with the cell's execution flags and a null, ram or file namespace;\n"
	      "  2. starts the cell's contention, if any: stress-ng on chosen CPUs, or the\n"
	      "     builtin hog (one thread pinned per CPU, nice -20 if permitted, rewriting\n"
	      "     a large buffer then sleeping 10 ms, as in seed A of bench/seeds.md);\n"
	      "  3. runs one nvmf-perf --json per controller against it (or one for all,\n"
	      "     with several -r: perf.one_process), pinned to the initiator's CPUs,\n"
	      "     polling nvmfd's stats and /proc/<nvmfd> meanwhile;\n"
	      "  4. stops everything (SIGTERM to each process group, SIGKILL after a grace\n"
	      "     period, every process reaped) and records the metrics.\n"
	      "\n"
	      "Runs are paired and interleaved: a scenario runs in --repeat rounds (5 by\n"
	      "default), each round runs every cell once, in an order shuffled per round\n"
	      "by a seeded generator (the seed is printed; --seed repeats it). Run i of a\n"
	      "cell and run i of its baseline are a pair. The report shows medians and,\n"
	      "for every ratio to the baseline, the geometric mean of the per-pair ratios\n"
	      "with a 95 % bootstrap confidence interval over the pairs (expanded\n"
	      "percentile, see bench/README.md); an interval containing 1.0 is printed\n"
	      "as \"no difference\".\n"
	      "\n"
	      "Isolation: every cell has CPU sets for the target, the initiator and the\n"
	      "contention (default: target on the lower half of the online CPUs,\n"
	      "nvmf-perf on the upper half, contention on the target's; on 2 CPUs: 0, 1\n"
	      "and 0). nvmfd and nvmf-perf are pinned to them with sched_setaffinity\n"
	      "and get them as --cpus; the report prints the sets. Where a cpuset cgroup\n"
	      "hierarchy is writable (cgroup v2 with the cpuset controller, else the v1\n"
	      "cpuset hierarchy; --cgroup), each role also runs in a cpuset cgroup of its\n"
	      "own, <mount>/nvmf-bench.<pid>/{target,initiator,load}, created at the start\n"
	      "and removed at the end (also on SIGINT/SIGTERM; the groups of a killed run\n"
	      "are removed by the next one). The report says which isolation was used.\n"
	      "A cell's target.cpu_quota (CPUs worth of time, e.g. 0.5) limits the\n"
	      "target's processes with CFS bandwidth control, a 10 ms period: cpu.max of\n"
	      "the v2 target group, or a v1 cpu group <cpu mount>/nvmf-bench.<pid>/target\n"
	      "(cpu.cfs_quota_us) the target joins too. A cell that asks for a quota\n"
	      "fails when no cpu controller is usable.\n"
	      "\n"
	      "SPDK: a cell with target.kind \"spdk\" is served by SPDK's nvmf_tgt (--no-huge,\n"
	      "posix sockets, its reactor on the target's CPUs, a malloc or null bdev, the\n"
	      "JSON configuration written to the run's folder), one with perf.tool\n"
	      "\"spdk_nvme_perf\" is driven by spdk_nvme_perf (-L for percentiles unless\n"
	      "perf.latency is false; its cores the initiator's CPUs). A scenario's\n"
	      "\"spdk\": {\"twins\": \"target\" | \"perf\" | \"both\"} adds, after every cell, a\n"
	      "twin run against nvmf_tgt (<cell>.spdk) and/or with spdk_nvme_perf\n"
	      "(<cell>.spdk-perf) in the same rounds, paired with the cell it copies.\n"
	      "SPDK's programs come from --spdk DIR (or $NVMF_BENCH_SPDK): a tree with\n"
	      "build/bin/{nvmf_tgt,spdk_nvme_perf} and build/lib; without it those cells\n"
	      "are skipped and the report says why.\n"
	      "\n"
	      "Target syscalls: with --syscalls perf (the default when perf(1) can count\n"
	      "raw_syscalls:sys_enter) perf stat -p <target> -- sleep <window> counts the\n"
	      "target over the measured window (target_syscalls_io); --syscalls strace uses\n"
	      "strace -c -f instead (a per-syscall table in the raw folder, but it slows\n"
	      "the target: its IOPS are not comparable); --syscalls off counts nothing.\n"
	      "\n"
	      "Noise guard: before each run nothing of the bench runs for 0.25 s and the\n"
	      "CPU the machine uses meanwhile is other work; during the run, other work\n"
	      "is the machine's busy time (/proc/stat) minus the CPU time of the bench\n"
	      "and its children. A run where either exceeds --busy-cpus is flagged\n"
	      "\"busy\" in the report; with --strict it is re-run (up to --strict-tries\n"
	      "runs). CPU pressure (/proc/pressure/cpu) and the load average before each\n"
	      "run are recorded too.\n"
	      "\n"
	      "Built-in scenarios (bench/seeds.md A-E, scaled to the online CPUs):\n"
	      "  seed-a-unbound       bound vs unbound x 4K/1M randrw 50 % x no, medium,\n"
	      "                       heavy load on the target's CPUs; 4K open loop at\n"
	      "                       2k/10k/30k IOPS (latency vs load)\n"
	      "  seed-b-cpu-heavy     data digest on, 1 vs several streams, bound vs unbound\n"
	      "  seed-c-idle-poll     event driven vs --idle-poll-us vs + --backend-poll\n"
	      "  seed-d-cq-pool       --cq-pool per-queue vs shared x 1,2,4,8 controllers/CPU\n"
	      "  seed-e-host-scaling  4K seq/rand read/write x baseline, +budgets,\n"
	      "                       +least-loaded, +per-controller pools; null and file\n"
	      "  self-check-aa        A/A: the same configuration twice; must show\n"
	      "                       \"no difference\"\n"
	      "  spdk-compare         nvmfd vs SPDK's nvmf_tgt, both driven by\n"
	      "                       spdk_nvme_perf: 4K randread QD32 and QD1, 128K read\n"
	      "                       QD16, 4K randwrite QD32 (skipped without SPDK;\n"
	      "                       bench/compare-spdk.sh prints its table)\n"
	      "\n"
	      "Options:\n"
	      "  -o, --out DIR          results folder (default results/<UTC timestamp>);\n"
	      "                         created if missing\n"
	      "  -r, --repeat N         rounds (runs per cell), 1..100 (default: the\n"
	      "                         scenario's, 5)\n"
	      "  -S, --seed N           seed of the run order and the bootstrap (default:\n"
	      "                         from the clock; printed at the start and in the\n"
	      "                         report)\n"
	      "      --full             the recipe for a quiet many-core machine: 10 rounds\n"
	      "                         of 30 s + 5 s warmup, --strict, --busy-cpus 0.1\n"
	      "                         (-r, -d, -w, --busy-cpus still override)\n"
	      "      --strict           re-run runs flagged busy (other work on the machine)\n"
	      "      --strict-tries N   runs at most per flagged run, 2..10 (default 3)\n"
	      "      --busy-cpus X      flag a run when other work used more than X CPUs\n"
	      "                         before or during it (default 0.25)\n"
	      "  -d, --duration S       measured seconds per run (default: the scenario's)\n"
	      "  -w, --warmup S         warmup seconds per run (default: the scenario's)\n"
	      "  -q, --quick            the reduced matrix: each scenario's \"quick\" run\n"
	      "                         lengths and repeat count (built-ins: 5 rounds of\n"
	      "                         2 s + 1 s warmup), cells marked quick:false\n"
	      "                         dropped; all built-ins take about 15 min on 2 CPUs\n"
	      "  -c, --cells GLOB       run only cells whose name matches GLOB (fnmatch)\n"
	      "  -l, --list             list the built-in scenarios and their cells, exit\n"
	      "  -n, --dry-run          validate the scenarios and print the plan (cells,\n"
	      "                         runs, estimated time); start nothing\n"
	      "      --ratio-ci A B     print the paired ratio of series A over series B\n"
	      "                         (comma-separated values of the same rounds, in\n"
	      "                         order) with its 95 % interval, as above, as one\n"
	      "                         JSON line {pairs, ratio, lo, hi, valid, differs},\n"
	      "                         and exit (-S seeds the bootstrap; default 1)\n"
	      "      --write-scenarios DIR\n"
	      "                         write the built-ins as DIR/<name>.json and exit\n"
	      "      --spdk DIR         SPDK tree for the SPDK cells (default:\n"
	      "                         $NVMF_BENCH_SPDK; none: those cells are skipped)\n"
	      "      --cgroup MODE      cpuset cgroups: auto (v2, else v1, else affinity\n"
	      "                         only; the default), v2, v1 (fail if unavailable),\n"
	      "                         off\n"
	      "      --syscalls MODE    target syscall counts: auto (perf if it works; the\n"
	      "                         default), perf, strace (slows the target), off\n"
	      "      --nvmfd PATH       target binary (default: nvmfd next to nvmf-bench)\n"
	      "      --perf PATH        initiator binary (default: nvmf-perf next to it)\n"
	      "      --stress-ng PATH   default: stress-ng from PATH\n"
	      "      --gnuplot PATH     default: gnuplot from PATH; missing = no plots\n"
	      "      --no-plots         do not run gnuplot\n"
	      "      --no-progress      no progress bar even on a terminal\n"
	      "  -h, --help             this text\n"
	      "  -V, --version          print the version and exit\n"
	      "\n"
	      "Results folder:\n"
	      "  report.md   one table per scenario (bench/seeds.md's columns + ratio), the\n"
	      "              exact commands of every cell, links to the plots\n"
	      "  cells.csv   one row per cell: median and stddev of every metric\n"
	      "  cells.json  every cell with every run's metrics and errors\n"
	      "  plots/      <scenario>-bars.png (first column, grouped by cell group and\n"
	      "              series), <scenario>-latency.png (p50..p99.99 curves)\n"
	      "  raw/<scenario>/<cell>/rep<N>/  perf-K.json, nvmfd.log, stats.json (end),\n"
	      "              stats-live.json (last snapshot with queues), nvmfd-config.json\n"
	      "\n"
	      "Metrics: iops, mib_s, lat_min/avg/max, p50..p99.99, lat_stdev (nvmf-perf,\n"
	      "summed over controllers; latencies IOPS-weighted), host_cpu, host_ctxsw\n"
	      "(nvmf-perf), target_cpu (CPU time of nvmfd's threads from their schedstat\n"
	      "over the measured window, % of one CPU),\n"
	      "target_ctxsw and target_ctxsw_s (voluntary + involuntary, summed over\n"
	      "/proc/<pid>/task/*), cq_events_s, compl_per_event, requeues_s, idle_polls_s,\n"
	      "eagain_sends (deltas of nvmfd's per-queue stats over the window);\n"
	      "cost: target_cpu_s_mio, host_cpu_s_mio (CPU-seconds per million I/Os),\n"
	      "target_ctxsw_io, host_ctxsw_io (context switches per I/O),\n"
	      "host_syscalls_io (sendmsg + recv + blocking waits of nvmf-perf's queues\n"
	      "per completion), target_syscalls_io (see --syscalls), iops_per_target_cpu_s\n"
	      "(I/Os per CPU-second of the target); noise: foreign_cpus_pre, foreign_cpus, steal_cpus,\n"
	      "psi_cpu_pre, loadavg_pre.\n"
	      "\n"
	      "Signals: SIGINT, SIGTERM and SIGHUP stop the run: every child process group\n"
	      "is killed and reaped, the report is written for the runs done so far.\n"
	      "Children also die with the bench (PR_SET_PDEATHSIG).\n"
	      "\n"
	      "Exit status: 0 every run succeeded; 1 some run failed (see report.md);\n"
	      "2 usage error or invalid scenario (the message names the field, e.g.\n"
	      "'cells[2].perf.qd'); 128+N interrupted by signal N.\n"
	      "\n"
	      "Examples:\n"
	      "  nvmf-bench --quick\n"
	      "  nvmf-bench --seed 42 self-check-aa\n"
	      "  nvmf-bench --spdk /opt/spdk -r 5 -d 5 spdk-compare\n"
	      "  nvmf-bench -r 5 -d 60 seed-e-host-scaling -o results/e-60s\n"
	      "  nvmf-bench --cells 'bound-4k-*' seed-a-unbound\n"
	      "  nvmf-bench --write-scenarios bench/scenarios && nvmf-bench bench/scenarios/seed-c-idle-poll.json\n",
	      f);
}

static void on_signal(int sig)
{
	bench_stop_sig = sig;
}

static int find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL, *dir;

	if (!path)
		path = "/usr/bin:/bin";
	snprintf(buf, sizeof(buf), "%s", path);
	for (dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", dir, name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	out[0] = 0;
	return -ENOENT;
}

static int load_one(const char *arg, struct bench_scenario *sc, char *err, size_t len)
{
	const char *text;
	struct json_object *root;
	char msg[512];
	int ret;

	if (strchr(arg, '/') || (strlen(arg) > 5 && !strcmp(arg + strlen(arg) - 5, ".json")))
		return bench_scenario_load(arg, sc, err, len);
	text = bench_builtin_text(arg);
	if (!text) {
		snprintf(err, len, "%s: no such built-in scenario (see --list)", arg);
		return -ENOENT;
	}
	root = json_tokener_parse(text);
	if (!root) {
		snprintf(err, len, "%s: built-in is not valid JSON", arg);
		return -EINVAL;
	}
	ret = bench_scenario_parse(root, "builtin", sc, msg, sizeof(msg));
	json_object_put(root);
	if (ret)
		snprintf(err, len, "builtin %s: %s", arg, msg);
	return ret;
}

struct progress {
	bool tty;
	int total_runs;
	int done_runs;
	double est_total; /* estimated seconds for all runs */
	double est_done; /* estimate of the runs completed */
	double t_start;
	double last_draw;
	double run_start; /* start of the current run */
	double run_est; /* its estimated length */
	const char *scenario;
	const char *cell;
	int rep, reps;
};

static void fmt_dur(double s, char *buf, size_t len)
{
	long t = lround(s < 0 ? 0 : s);

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
}

static void progress_draw(void *arg)
{
	struct progress *p = arg;
	double el = bench_now() - p->t_start, rate, eta, frac, cur;
	char ebuf[32], tbuf[32];
	int w = 30, fill, i;

	if (!p->tty || bench_now() - p->last_draw < 0.25)
		return;
	p->last_draw = bench_now();
	/* the current run counts with its elapsed share of its estimate */
	cur = bench_now() - p->run_start;
	if (cur > p->run_est)
		cur = p->run_est;
	frac = p->est_total > 0 ? (p->est_done + cur) / p->est_total : 0;
	/* scale the rest of the estimate by how fast finished runs went */
	rate = p->est_done > 0 ? (p->run_start - p->t_start) / p->est_done : 1;
	if (rate < 0.5)
		rate = 0.5;
	eta = (p->est_total - p->est_done - cur) * rate;
	fill = (int)(frac * w);
	fmt_dur(eta, ebuf, sizeof(ebuf));
	fmt_dur(el, tbuf, sizeof(tbuf));
	fprintf(stderr, "\r\033[K[");
	for (i = 0; i < w; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %d/%d %s/%s %d/%d  elapsed %s ETA %s", p->done_runs, p->total_runs, p->scenario, p->cell,
		p->rep, p->reps, tbuf, ebuf);
	fflush(stderr);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* One series of --ratio-ci: comma-separated numbers. Return: count, or -1. */
static int parse_series(const char *arg, double *v, int max)
{
	const char *p = arg;
	char *end;
	int n = 0;

	while (*p) {
		if (n == max)
			return -1;
		errno = 0;
		v[n++] = strtod(p, &end);
		if (errno || end == p || (*end && *end != ','))
			return -1;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return -1; /* a trailing comma */
	}
	return n;
}

/*
 * --ratio-ci A B: the paired ratio of series A over series B (values of
 * the same rounds, in order) with the interval every report of this tool
 * uses (bench_paired_ratio_ci(): geometric mean, 95 % expanded-percentile
 * bootstrap), as one JSON line on stdout, for drivers of scenarios this
 * tool cannot run (bench/auto-phases.py). Exit 0, or 2 on bad input.
 */
static int ratio_ci_main(int argc, char **argv, uint64_t seed)
{
	static double a[BENCH_MAX_PAIRS], b[BENCH_MAX_PAIRS];
	struct bench_ci ci;
	int na, nb;

	if (argc != 2) {
		fprintf(stderr, "nvmf-bench: --ratio-ci takes two series: A1,A2,... B1,B2,...\n");
		return BENCH_EXIT_USAGE;
	}
	na = parse_series(argv[0], a, BENCH_MAX_PAIRS);
	nb = parse_series(argv[1], b, BENCH_MAX_PAIRS);
	if (na < 0 || nb < 0 || na != nb) {
		fprintf(stderr, "nvmf-bench: --ratio-ci: two comma-separated lists of numbers of the "
				"same length, at most %d each\n", BENCH_MAX_PAIRS);
		return BENCH_EXIT_USAGE;
	}
	if (bench_paired_ratio_ci(a, b, na, seed, &ci)) {
		fprintf(stderr, "nvmf-bench: --ratio-ci: out of memory\n");
		return BENCH_EXIT_USAGE;
	}
	printf("{\"pairs\": %d, \"ratio\": %.6g, \"lo\": %.6g, \"hi\": %.6g, \"valid\": %s, "
	       "\"differs\": %s}\n",
	       ci.n, ci.est, ci.lo, ci.hi, ci.valid ? "true" : "false",
	       bench_ci_differs(&ci) ? "true" : "false");
	return 0;
}

static int write_scenarios(const char *dir)
{
	int i;

	if (mkdir_p(dir)) {
		fprintf(stderr, "nvmf-bench: cannot create %s: %s\n", dir, strerror(errno));
		return BENCH_EXIT_USAGE;
	}
	for (i = 0; i < bench_builtin_count(); i++) {
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.json", dir, bench_builtin_name(i));
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "nvmf-bench: %s: %s\n", path, strerror(errno));
			return 1;
		}
		fputs(bench_builtin_text(bench_builtin_name(i)), f);
		fclose(f);
		printf("%s\n", path);
	}
	return 0;
}

enum {
	OPT_WRITE = 256,
	OPT_NVMFD,
	OPT_PERF,
	OPT_STRESS,
	OPT_GNUPLOT,
	OPT_NO_PLOTS,
	OPT_NO_PROGRESS,
	OPT_STRICT,
	OPT_STRICT_TRIES,
	OPT_BUSY_CPUS,
	OPT_FULL,
	OPT_SPDK,
	OPT_CGROUP,
	OPT_SYSCALLS,
	OPT_RATIO_CI,
};

#define MAX_ORDER 512

/*
 * One scenario in paired, interleaved rounds: round r runs every cell
 * that has a run r, in an order shuffled per round. Return: runs that
 * failed; *interrupted set on a signal.
 */
static int run_scenario(struct bench_scenario *sc, int si, const char *out_dir, const struct bench_paths *paths,
			const struct bench_run_opts *ro, struct progress *pg, bool *interrupted)
{
	int order[MAX_ORDER], rounds = 0, n, c, r, k, t, ret, failed = 0;
	struct bench_rng rng;

	for (c = 0; c < sc->nr_cells; c++)
		if (sc->cells[c].repeat > rounds)
			rounds = sc->cells[c].repeat;
	/* one stream per scenario, from the seed and the scenario's position */
	bench_rng_seed(&rng, ro->seed + 0x9e3779b97f4a7c15ull * (uint64_t)(si + 1));
	for (r = 0; r < rounds; r++) {
		n = 0;
		for (c = 0; c < sc->nr_cells && n < MAX_ORDER; c++)
			if (sc->cells[c].repeat > r)
				order[n++] = c;
		bench_shuffle(&rng, order, n);
		for (k = 0; k < n; k++) {
			struct bench_cell *cl = &sc->cells[order[k]];

			if (bench_stop_sig) {
				*interrupted = true;
				return failed;
			}
			cl->res.pos[r] = k + 1;
			for (t = 0;; t++) {
				pg->scenario = sc->name;
				pg->cell = cl->name;
				pg->rep = r + 1;
				pg->reps = cl->repeat;
				pg->last_draw = 0;
				pg->run_start = bench_now();
				pg->run_est = cl->duration + cl->warmup + RUN_OVERHEAD_S;
				progress_draw(pg);
				ret = bench_cell_run_once(sc, cl, r, out_dir, paths, ro, progress_draw, pg);
				if (ret == -EINTR) {
					*interrupted = true;
					return failed;
				}
				if (!ro->strict || ret || !cl->res.busy[r] || t + 1 >= ro->strict_tries)
					break;
				if (pg->tty)
					fprintf(stderr, "\r\033[K");
				fprintf(stderr, "nvmf-bench: %s/%s run %d: machine busy (%.2f CPUs of other work), "
						"re-running\n", sc->name, cl->name, r + 1,
					cl->res.v[r][BM_FOREIGN_RUN] > cl->res.v[r][BM_FOREIGN_PRE] ?
						cl->res.v[r][BM_FOREIGN_RUN] :
						cl->res.v[r][BM_FOREIGN_PRE]);
			}
			cl->res.tries[r] = t + 1;
			cl->res.nr = r + 1;
			pg->done_runs++;
			pg->est_done += cl->duration + cl->warmup + RUN_OVERHEAD_S;
			if (ret) {
				failed++;
				if (pg->tty)
					fprintf(stderr, "\r\033[K");
				fprintf(stderr, "nvmf-bench: %s/%s run %d: %s\n", sc->name, cl->name, r + 1,
					cl->res.err[r]);
			} else if (!pg->tty) {
				fprintf(stderr, "[%d/%d] %s/%s run %d/%d: %.0f IOPS, %.1f MiB/s, avg %.1f us%s\n",
					pg->done_runs, pg->total_runs, sc->name, cl->name, r + 1, cl->repeat,
					cl->res.v[r][BM_IOPS], cl->res.v[r][BM_MIBS], cl->res.v[r][BM_LAT_AVG],
					cl->res.busy[r] ? " (busy)" : "");
			}
		}
	}
	return failed;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "quick", no_argument, NULL, 'q' },
		{ "cells", required_argument, NULL, 'c' },
		{ "list", no_argument, NULL, 'l' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "write-scenarios", required_argument, NULL, OPT_WRITE },
		{ "nvmfd", required_argument, NULL, OPT_NVMFD },
		{ "perf", required_argument, NULL, OPT_PERF },
		{ "stress-ng", required_argument, NULL, OPT_STRESS },
		{ "gnuplot", required_argument, NULL, OPT_GNUPLOT },
		{ "no-plots", no_argument, NULL, OPT_NO_PLOTS },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "seed", required_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "strict-tries", required_argument, NULL, OPT_STRICT_TRIES },
		{ "busy-cpus", required_argument, NULL, OPT_BUSY_CPUS },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "spdk", required_argument, NULL, OPT_SPDK },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "syscalls", required_argument, NULL, OPT_SYSCALLS },
		{ "ratio-ci", no_argument, NULL, OPT_RATIO_CI },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bench_scenario scs[MAX_SCENARIOS];
	struct bench_overrides ov = { .duration = -1, .warmup = -1 };
	static char sock_dir[PATH_MAX];
	static char exe_dir[PATH_MAX], nvmfd[PATH_MAX], perf[PATH_MAX], stress[PATH_MAX], gnuplot[PATH_MAX];
	static char out_dir[PATH_MAX], cmdline[4096];
	static char spdk_dir[PATH_MAX], env_exe[PATH_MAX], perf_exe[PATH_MAX], strace_exe[PATH_MAX];
	static struct bench_cgroup cg;
	const char *cg_mode = "auto", *sys_mode = "auto", *spdk_arg = getenv("NVMF_BENCH_SPDK");
	char spdk_why[PATH_MAX + 128] = "";
	struct bench_paths paths = { 0 };
	struct bench_run_opts ro = { .strict_tries = 3, .busy_cpus = 0.25 };
	bool have_seed = false, interrupted = false, full = false, have_busy = false, want_quota = false;
	struct progress pg = { 0 };
	bool list = false, dry = false, no_plots = false, no_progress = false, ratio_ci = false;
	const char *out = NULL;
	struct sigaction sa;
	int nr = 0, opt, i, s, c, failed = 0, ret, nr_skipped = 0;
	double t_start;
	ssize_t n;
	char *end;

	for (i = 0; i < argc; i++)
		snprintf(cmdline + strlen(cmdline), sizeof(cmdline) - strlen(cmdline), "%s%s", i ? " " : "", argv[i]);
	n = readlink("/proc/self/exe", exe_dir, sizeof(exe_dir) - 1);
	if (n > 0) {
		char *d;

		exe_dir[n] = 0;
		d = dirname(exe_dir); /* may point into exe_dir */
		memmove(exe_dir, d, strlen(d) + 1);
	} else {
		snprintf(exe_dir, sizeof(exe_dir), ".");
	}
	if (snprintf(nvmfd, sizeof(nvmfd), "%s/nvmfd", exe_dir) >= (int)sizeof(nvmfd) ||
	    snprintf(perf, sizeof(perf), "%s/nvmf-perf", exe_dir) >= (int)sizeof(perf)) {
		fprintf(stderr, "nvmf-bench: path of the executable too long\n");
		return BENCH_EXIT_USAGE;
	}
	find_in_path("stress-ng", stress, sizeof(stress));
	find_in_path("gnuplot", gnuplot, sizeof(gnuplot));

	while ((opt = getopt_long(argc, argv, "o:r:d:w:qc:lnS:hV", lopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'r':
			ov.repeat = (int)strtol(optarg, &end, 10);
			if (*end || ov.repeat < 1 || ov.repeat > BENCH_MAX_REPEAT) {
				fprintf(stderr, "nvmf-bench: --repeat: 1..%d\n", BENCH_MAX_REPEAT);
				return BENCH_EXIT_USAGE;
			}
			break;
		case 'd':
			ov.duration = strtod(optarg, &end);
			if (*end || ov.duration < 1 || ov.duration > 86400 || ov.duration != floor(ov.duration)) {
				fprintf(stderr, "nvmf-bench: --duration: whole seconds, 1..86400\n");
				return BENCH_EXIT_USAGE;
			}
			break;
		case 'w':
			ov.warmup = strtod(optarg, &end);
			if (*end || ov.warmup < 0 || ov.warmup > 3600 || ov.warmup != floor(ov.warmup)) {
				fprintf(stderr, "nvmf-bench: --warmup: whole seconds, 0..3600\n");
				return BENCH_EXIT_USAGE;
			}
			break;
		case 'q':
			ov.quick = true;
			break;
		case 'S':
			errno = 0;
			ro.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-') {
				fprintf(stderr, "nvmf-bench: --seed: an unsigned 64-bit integer\n");
				return BENCH_EXIT_USAGE;
			}
			have_seed = true;
			break;
		case OPT_STRICT:
			ro.strict = true;
			break;
		case OPT_STRICT_TRIES:
			ro.strict_tries = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || ro.strict_tries < 2 || ro.strict_tries > 10) {
				fprintf(stderr, "nvmf-bench: --strict-tries: 2..10\n");
				return BENCH_EXIT_USAGE;
			}
			break;
		case OPT_FULL:
			full = true;
			break;
		case OPT_SPDK:
			spdk_arg = optarg;
			break;
		case OPT_CGROUP:
			if (strcmp(optarg, "auto") && strcmp(optarg, "v2") && strcmp(optarg, "v1") &&
			    strcmp(optarg, "off")) {
				fprintf(stderr, "nvmf-bench: --cgroup: auto, v2, v1 or off\n");
				return BENCH_EXIT_USAGE;
			}
			cg_mode = optarg;
			break;
		case OPT_RATIO_CI:
			ratio_ci = true;
			break;
		case OPT_SYSCALLS:
			if (strcmp(optarg, "auto") && strcmp(optarg, "perf") && strcmp(optarg, "strace") &&
			    strcmp(optarg, "off")) {
				fprintf(stderr, "nvmf-bench: --syscalls: auto, perf, strace or off\n");
				return BENCH_EXIT_USAGE;
			}
			sys_mode = optarg;
			break;
		case OPT_BUSY_CPUS:
			have_busy = true;
			ro.busy_cpus = strtod(optarg, &end);
			if (*end || end == optarg || !(ro.busy_cpus >= 0 && ro.busy_cpus <= BENCH_MAX_CPUS)) {
				fprintf(stderr, "nvmf-bench: --busy-cpus: a number of CPUs, 0..%d\n",
					BENCH_MAX_CPUS);
				return BENCH_EXIT_USAGE;
			}
			break;
		case 'c':
			ov.cell_filter = optarg;
			break;
		case 'l':
			list = true;
			break;
		case 'n':
			dry = true;
			break;
		case OPT_WRITE:
			return write_scenarios(optarg);
		case OPT_NVMFD:
			snprintf(nvmfd, sizeof(nvmfd), "%s", optarg);
			break;
		case OPT_PERF:
			snprintf(perf, sizeof(perf), "%s", optarg);
			break;
		case OPT_STRESS:
			snprintf(stress, sizeof(stress), "%s", optarg);
			break;
		case OPT_GNUPLOT:
			snprintf(gnuplot, sizeof(gnuplot), "%s", optarg);
			break;
		case OPT_NO_PLOTS:
			no_plots = true;
			break;
		case OPT_NO_PROGRESS:
			no_progress = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("nvmf-bench %s\n", NVMFD_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'nvmf-bench --help'.\n");
			return BENCH_EXIT_USAGE;
		}
	}

	if (ratio_ci)
		return ratio_ci_main(argc - optind, argv + optind, have_seed ? ro.seed : 1);
	/* --full: the recipe for a quiet machine; explicit options win */
	if (full) {
		if (ov.quick) {
			fprintf(stderr, "nvmf-bench: --full and --quick exclude each other\n");
			return BENCH_EXIT_USAGE;
		}
		if (!ov.repeat)
			ov.repeat = 10;
		if (ov.duration < 0)
			ov.duration = 30;
		if (ov.warmup < 0)
			ov.warmup = 5;
		if (!have_busy)
			ro.busy_cpus = 0.1;
		ro.strict = true;
	}
	/* load and validate everything before starting anything */
	if (optind == argc) {
		for (i = 0; i < bench_builtin_count(); i++) {
			char err[1024];

			if (load_one(bench_builtin_name(i), &scs[nr], err, sizeof(err))) {
				fprintf(stderr, "nvmf-bench: %s\n", err);
				return BENCH_EXIT_USAGE;
			}
			nr++;
		}
	}
	for (i = optind; i < argc; i++) {
		char err[1024];

		if (nr == MAX_SCENARIOS) {
			fprintf(stderr, "nvmf-bench: at most %d scenarios\n", MAX_SCENARIOS);
			return BENCH_EXIT_USAGE;
		}
		if (load_one(argv[i], &scs[nr], err, sizeof(err))) {
			fprintf(stderr, "nvmf-bench: %s\n", err);
			return BENCH_EXIT_USAGE;
		}
		nr++;
	}
	/* SPDK: a tree with build/bin/{nvmf_tgt,spdk_nvme_perf}; cells that need it are skipped without */
	find_in_path("env", env_exe, sizeof(env_exe));
	if (spdk_arg && *spdk_arg) {
		char b1[PATH_MAX + 32], b2[PATH_MAX + 32];

		snprintf(b1, sizeof(b1), "%s/build/bin/nvmf_tgt", spdk_arg);
		snprintf(b2, sizeof(b2), "%s/build/bin/spdk_nvme_perf", spdk_arg);
		if (access(b1, X_OK) || access(b2, X_OK))
			snprintf(spdk_why, sizeof(spdk_why), "SPDK not built in %s (no build/bin/nvmf_tgt or spdk_nvme_perf)",
				 spdk_arg);
		else if (!*env_exe)
			snprintf(spdk_why, sizeof(spdk_why), "env(1) not found in PATH");
		else if (!realpath(spdk_arg, spdk_dir))
			snprintf(spdk_why, sizeof(spdk_why), "%s: %s", spdk_arg, strerror(errno));
	} else {
		snprintf(spdk_why, sizeof(spdk_why), "SPDK not given (--spdk DIR or NVMF_BENCH_SPDK)");
	}
	if (*spdk_why)
		spdk_dir[0] = 0;
	for (s = 0; s < nr; s++)
		for (c = 0; c < scs[s].nr_cells; c++)
			if (!*spdk_dir && bench_cell_needs_spdk(&scs[s].cells[c]) && !*scs[s].cells[c].skip)
				snprintf(scs[s].cells[c].skip, sizeof(scs[s].cells[c].skip), "%s", spdk_why);
	for (s = 0; s < nr; s++)
		bench_scenario_apply(&scs[s], &ov);

	for (s = 0; s < nr; s++) {
		for (c = 0; c < scs[s].nr_cells; c++) {
			struct bench_cell *cl = &scs[s].cells[c];

			pg.total_runs += cl->repeat;
			nr_skipped += *cl->skip != 0 && (!ov.cell_filter || !fnmatch(ov.cell_filter, cl->name, 0));
			pg.est_total += cl->repeat * (cl->duration + cl->warmup + RUN_OVERHEAD_S);
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ro.seed = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
	}
	/* control sockets of killed runs (sockets whose owner pid is gone) */
	bench_sockdir_clean_stale("/tmp");
	/* and their cpuset cgroups */
	bench_cg_clean_all_stale();
	if (list || dry) {
		char e[32];

		for (s = 0; s < nr; s++) {
			printf("%s (%s, baseline %s)\n", scs[s].name, scs[s].source, scs[s].baseline);
			for (c = 0; c < scs[s].nr_cells; c++) {
				struct bench_cell *cl = &scs[s].cells[c];

				if (dry && *cl->skip) {
					printf("  %-32s skipped: %s\n", cl->name, cl->skip);
					continue;
				}
				if (dry && !cl->repeat)
					continue;
				printf("  %-32s %2d x (%.0f s + %.0f s warmup)%s", cl->name, cl->repeat, cl->duration,
				       cl->warmup, cl->quick ? "" : "  [not in --quick]");
				if (cl->target.cpu_quota > 0)
					printf("  [target cpu_quota %g]", cl->target.cpu_quota);
				printf("\n");
			}
		}
		fmt_dur(pg.est_total, e, sizeof(e));
		printf("%d runs, about %s; interleaved rounds, order seed %llu\n", pg.total_runs, e,
		       (unsigned long long)ro.seed);
		/* a dry run fails where the real run would (exit 2) */
		if (dry && !pg.total_runs && !nr_skipped) {
			fprintf(stderr, "nvmf-bench: no cell to run (check --cells)\n");
			return BENCH_EXIT_USAGE;
		}
		return 0;
	}
	/* every cell skipped (SPDK missing): the report says so, no error */
	if (!pg.total_runs && !nr_skipped) {
		fprintf(stderr, "nvmf-bench: no cell to run (check --cells)\n");
		return BENCH_EXIT_USAGE;
	}
	if (access(nvmfd, X_OK) || access(perf, X_OK)) {
		fprintf(stderr, "nvmf-bench: %s or %s is not executable (use --nvmfd/--perf)\n", nvmfd, perf);
		return BENCH_EXIT_USAGE;
	}
	if (realpath(nvmfd, exe_dir))
		snprintf(nvmfd, sizeof(nvmfd), "%s", exe_dir);
	if (realpath(perf, exe_dir))
		snprintf(perf, sizeof(perf), "%s", exe_dir);
	paths.nvmfd = nvmfd;
	paths.perf = perf;
	paths.spdk_dir = *spdk_dir ? spdk_dir : NULL;
	paths.env = *env_exe ? env_exe : NULL;
	/* target syscalls: perf stat where it can count the tracepoint, strace -c on request */
	ro.syscalls = BENCH_SYSCALLS_OFF;
	/* orphaned grandchildren (stress-ng workers, perf's) come back to us */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (strcmp(sys_mode, "off") && strcmp(sys_mode, "strace") && !find_in_path("perf", perf_exe, sizeof(perf_exe))) {
		char *pargv[] = { perf_exe, (char *)"stat", (char *)"-e", (char *)"raw_syscalls:sys_enter", (char *)"-x",
				  (char *)",", (char *)"-o", (char *)"/dev/null", (char *)"--", (char *)"true", NULL };
		pid_t pid = bench_proc_spawn(pargv, NULL, NULL, NULL, 0, NULL);
		int st;

		if (pid > 0 && bench_proc_wait(pid, &st, 10) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			ro.syscalls = BENCH_SYSCALLS_PERF;
			paths.perf_tool = perf_exe;
		}
	}
	if (!strcmp(sys_mode, "strace") && !find_in_path("strace", strace_exe, sizeof(strace_exe))) {
		ro.syscalls = BENCH_SYSCALLS_STRACE;
		paths.strace = strace_exe;
	}
	if (ro.syscalls == BENCH_SYSCALLS_OFF && (!strcmp(sys_mode, "perf") || !strcmp(sys_mode, "strace"))) {
		fprintf(stderr, "nvmf-bench: --syscalls %s: %s cannot count syscalls here\n", sys_mode, sys_mode);
		return BENCH_EXIT_USAGE;
	}
	paths.stress_ng = *stress ? stress : "stress-ng";
	paths.gnuplot = no_plots || !*gnuplot ? NULL : gnuplot;
	if (!no_plots && !*gnuplot)
		fprintf(stderr, "nvmf-bench: warning: gnuplot not found, plots will be skipped\n");

	if (!out) {
		time_t now = time(NULL);
		char ts[32];

		strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", gmtime(&now));
		snprintf(out_dir, sizeof(out_dir), "results/%s", ts);
	} else {
		snprintf(out_dir, sizeof(out_dir), "%s", out);
	}
	if (mkdir_p(out_dir)) {
		fprintf(stderr, "nvmf-bench: cannot create %s: %s\n", out_dir, strerror(errno));
		return BENCH_EXIT_USAGE;
	}

	ret = bench_sockdir_create("/tmp", sock_dir, sizeof(sock_dir));
	if (ret) {
		fprintf(stderr, "nvmf-bench: cannot create the socket directory %s: %s\n", sock_dir,
			strerror(-ret));
		return BENCH_EXIT_USAGE;
	}
	paths.sock_dir = sock_dir;
	/* cpuset cgroups per role where writable; affinity only otherwise */
	ret = bench_cg_setup(&cg, cg_mode);
	if (ret) {
		fprintf(stderr, "nvmf-bench: --cgroup %s: %s\n", cg_mode, cg.why);
		bench_sockdir_destroy(sock_dir);
		return BENCH_EXIT_USAGE;
	}
	paths.cg = &cg;
	fprintf(stderr, "nvmf-bench: isolation: %s\n", cg.why);
	/* a cpu controller only when a cell to run has a target CPU quota */
	for (s = 0; s < nr && !want_quota; s++)
		for (c = 0; c < scs[s].nr_cells && !want_quota; c++)
			want_quota = scs[s].cells[c].repeat > 0 && scs[s].cells[c].target.cpu_quota > 0;
	if (want_quota) {
		bench_cg_setup_cpu(&cg, cg_mode);
		fprintf(stderr, "nvmf-bench: target CPU quota: %s%s\n", cg.cpu_why,
			cg.cpu_version ? "" : "; cells with target.cpu_quota fail");
	}
	if (!paths.spdk_dir)
		fprintf(stderr, "nvmf-bench: %s: cells with target.kind \"spdk\" or perf.tool \"spdk_nvme_perf\" "
				"are skipped\n", spdk_why);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	pg.tty = isatty(2) && !no_progress;
	fprintf(stderr, "nvmf-bench: seed %llu (--seed %llu repeats the run order and the intervals)\n",
		(unsigned long long)ro.seed, (unsigned long long)ro.seed);
	pg.t_start = t_start = bench_now();
	for (s = 0; s < nr && !interrupted; s++)
		failed += run_scenario(&scs[s], s, out_dir, &paths, &ro, &pg, &interrupted);
	bench_proc_kill_all();
	if (pg.tty)
		fprintf(stderr, "\r\033[K");
	ret = bench_report_write(scs, nr, out_dir, &paths, &ro, cmdline, bench_now() - t_start, bench_stop_sig != 0);
	bench_proc_kill_all();
	bench_sockdir_destroy(sock_dir);
	if (bench_cg_destroy(&cg))
		fprintf(stderr, "nvmf-bench: warning: cannot remove the cgroups under %s\n", cg.base);
	if (ret)
		fprintf(stderr, "nvmf-bench: writing the report in %s failed: %s\n", out_dir, strerror(-ret));
	else
		fprintf(stderr, "nvmf-bench: %d runs in %.0f s, %d failed; report: %s/report.md\n", pg.done_runs,
			bench_now() - t_start, failed, out_dir);
	for (s = 0; s < nr; s++)
		bench_scenario_free(&scs[s]);
	if (bench_stop_sig)
		return 128 + bench_stop_sig;
	return failed || ret ? BENCH_EXIT_CELL_FAILED : BENCH_EXIT_OK;
}
