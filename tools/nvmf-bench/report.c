// SPDX-License-Identifier: MIT
/*
 * nvmf-bench results: medians and standard deviations over repeats,
 * ratios to each cell's baseline, and the results folder:
 *   report.md    one table per scenario (bench/seeds.md's columns + ratio)
 *   cells.csv    one row per cell: every metric's median and stddev
 *   cells.json   every cell with every run's metrics and the commands
 *   plots/       gnuplot PNGs: grouped bars of the scenario's first
 *                column, latency percentile curves (skipped with a
 *                warning when gnuplot is missing)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

const struct bench_metric_info bench_metrics[BM_NR] = {
	[BM_IOPS] = { "iops", "IOPS (k)", "%.1f", 1000 },
	[BM_MIBS] = { "mib_s", "MiB/s", "%.1f", 1 },
	[BM_LAT_MIN] = { "lat_min", "min lat µs", "%.1f", 1 },
	[BM_LAT_AVG] = { "lat_avg", "avg lat µs", "%.1f", 1 },
	[BM_LAT_MAX] = { "lat_max", "max lat µs", "%.0f", 1 },
	[BM_P50] = { "p50", "p50 µs", "%.1f", 1 },
	[BM_P90] = { "p90", "p90 µs", "%.1f", 1 },
	[BM_P99] = { "p99", "p99 µs", "%.1f", 1 },
	[BM_P999] = { "p99.9", "p99.9 µs", "%.1f", 1 },
	[BM_P9999] = { "p99.99", "p99.99 µs", "%.1f", 1 },
	[BM_LAT_STDEV] = { "lat_stdev", "stdev µs", "%.1f", 1 },
	[BM_HOST_CPU] = { "host_cpu", "host CPU %", "%.0f", 1 },
	[BM_HOST_CTXSW] = { "host_ctxsw", "host ctx sw", "%.0f", 1 },
	[BM_TGT_CPU] = { "target_cpu", "target CPU %", "%.0f", 1 },
	[BM_TGT_CTXSW] = { "target_ctxsw", "ctx switches", "%.0f", 1 },
	[BM_TGT_CTXSW_PS] = { "target_ctxsw_s", "ctx sw/s", "%.0f", 1 },
	[BM_CQ_EVENTS_PS] = { "cq_events_s", "completion events/s (k)", "%.1f", 1000 },
	[BM_CPE] = { "compl_per_event", "completions/event", "%.2f", 1 },
	[BM_REQUEUES_PS] = { "requeues_s", "requeues/s (k)", "%.1f", 1000 },
	[BM_IDLE_POLLS_PS] = { "idle_polls_s", "idle polls/s (k)", "%.1f", 1000 },
	[BM_EAGAIN] = { "eagain_sends", "would-block sends", "%.0f", 1 },
	[BM_TGT_CPU_S_MIO] = { "target_cpu_s_mio", "target CPU-s/M I/O", "%.2f", 1 },
	[BM_HOST_CPU_S_MIO] = { "host_cpu_s_mio", "host CPU-s/M I/O", "%.2f", 1 },
	[BM_TGT_CTXSW_IO] = { "target_ctxsw_io", "target ctx sw/I/O", "%.3f", 1 },
	[BM_HOST_CTXSW_IO] = { "host_ctxsw_io", "host ctx sw/I/O", "%.3f", 1 },
	[BM_HOST_SYSCALLS_IO] = { "host_syscalls_io", "host syscalls/I/O", "%.2f", 1 },
	[BM_TGT_SYSCALLS_IO] = { "target_syscalls_io", "target syscalls/I/O", "%.2f", 1 },
	[BM_IOPS_PER_TGT_CPU_S] = { "iops_per_target_cpu_s", "IOPS/target CPU-s (k)", "%.1f", 1000 },
	[BM_FOREIGN_PRE] = { "foreign_cpus_pre", "other work before (CPUs)", "%.2f", 1 },
	[BM_FOREIGN_RUN] = { "foreign_cpus", "other work during (CPUs)", "%.2f", 1 },
	[BM_STEAL] = { "steal_cpus", "steal (CPUs)", "%.2f", 1 },
	[BM_PSI_PRE] = { "psi_cpu_pre", "CPU pressure before %", "%.1f", 1 },
	[BM_LOADAVG_PRE] = { "loadavg_pre", "loadavg before", "%.2f", 1 },
};

/**
 * bench_metric_lookup() - metric index of a column name.
 * @key: e.g. "iops", "p99.99" (borrowed).
 *
 * Return: enum bench_metric value, or -ENOENT.
 * Context: any.
 */
int bench_metric_lookup(const char *key)
{
	int i;

	for (i = 0; i < BM_NR; i++)
		if (!strcmp(bench_metrics[i].key, key))
			return i;
	return -ENOENT;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static const struct bench_cell *find_cell(const struct bench_scenario *sc, const char *name)
{
	int i;

	for (i = 0; i < sc->nr_cells; i++)
		if (!strcmp(sc->cells[i].name, name))
			return &sc->cells[i];
	return NULL;
}

/*
 * Paired ratios of @c to its baseline @b for every metric: pair i is run
 * i of both (the same round), used when both runs succeeded.
 */
static void paired_ci(struct bench_cell *c, const struct bench_cell *b, uint64_t seed)
{
	int k, r, n;

	for (k = 0; k < BM_NR; k++) {
		double x[BENCH_MAX_REPEAT], y[BENCH_MAX_REPEAT];

		c->res.have_ci[k] = false;
		n = 0;
		for (r = 0; r < c->res.nr && r < b->res.nr; r++) {
			if (!c->res.ok[r] || !b->res.ok[r] || !c->res.have[r][k] || !b->res.have[r][k])
				continue;
			x[n] = c->res.v[r][k];
			y[n] = b->res.v[r][k];
			n++;
		}
		if (!n || bench_paired_ratio_ci(x, y, n, seed + (uint64_t)k, &c->res.ci[k]) || !c->res.ci[k].n)
			continue;
		c->res.have_ci[k] = true;
	}
}

/**
 * bench_result_aggregate() - medians, sample stddevs and baseline ratios.
 * @sc: scenario whose cells have run (borrowed, results updated).
 * @seed: seeds the bootstrap (the run's --seed).
 *
 * The ratio is the median of the scenario's first column over the
 * baseline cell's median of the same metric; the paired ratio with its
 * confidence interval (res.ci) is computed for every metric.
 * Context: main thread.
 */
void bench_result_aggregate(struct bench_scenario *sc, uint64_t seed)
{
	enum bench_metric prim = sc->columns[0];
	int i, k, r;

	for (i = 0; i < sc->nr_cells; i++) {
		struct bench_result *res = &sc->cells[i].res;

		res->nr_ok = res->nr_busy = 0;
		for (r = 0; r < res->nr; r++) {
			res->nr_ok += res->ok[r];
			res->nr_busy += res->ok[r] && res->busy[r];
		}
		for (k = 0; k < BM_NR; k++) {
			double vals[BENCH_MAX_REPEAT], sum = 0, sq = 0;
			int n = 0;

			for (r = 0; r < res->nr; r++)
				if (res->ok[r] && res->have[r][k])
					vals[n++] = res->v[r][k];
			res->have_median[k] = n > 0;
			res->median[k] = res->stddev[k] = 0;
			if (!n)
				continue;
			qsort(vals, n, sizeof(vals[0]), cmp_double);
			res->median[k] = n % 2 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
			for (r = 0; r < n; r++)
				sum += vals[r];
			for (r = 0; r < n; r++)
				sq += (vals[r] - sum / n) * (vals[r] - sum / n);
			res->stddev[k] = n > 1 ? sqrt(sq / (n - 1)) : 0;
		}
	}
	for (i = 0; i < sc->nr_cells; i++) {
		struct bench_cell *c = &sc->cells[i];
		const struct bench_cell *b = find_cell(sc, *c->baseline ? c->baseline : sc->baseline);

		c->res.ratio = 0;
		if (b && b->res.have_median[prim] && c->res.have_median[prim] && b->res.median[prim] != 0)
			c->res.ratio = c->res.median[prim] / b->res.median[prim];
		for (k = 0; k < BM_NR; k++)
			c->res.have_ci[k] = false;
		if (b && b != c)
			paired_ci(c, b, seed + 1000003ull * (uint64_t)i);
	}
}

static bool cell_ran(const struct bench_cell *c)
{
	return c->res.nr > 0;
}

/* The metric's format: "%.<d>f" with d from the table. */
static void fmt_value(char *buf, size_t len, int m, double v)
{
	const char *p = strchr(bench_metrics[m].fmt, '.');
	int digits = p ? atoi(p + 1) : 0;

	snprintf(buf, len, "%.*f", digits, v / bench_metrics[m].scale);
}

static void fmt_metric(char *buf, size_t len, const struct bench_result *res, int m)
{
	if (!res->have_median[m]) {
		snprintf(buf, len, "n/a");
		return;
	}
	fmt_value(buf, len, m, res->median[m]);
}

static void md_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s, f);
	}
}

static bool in_list(char list[][BENCH_NAME_MAX], int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/*
 * bench/seeds.md (§F) lays its tables out as one row per case and one column per
 * variant (bound | unbound, before -> after): rows = cell groups, columns =
 * the first sc->pivot metrics for each series.
 */
static void write_pivot(FILE *f, const struct bench_scenario *sc)
{
	static char groups[512][BENCH_NAME_MAX], series[16][BENCH_NAME_MAX];
	int ng = 0, ns = 0, i, g, s, k;

	for (i = 0; i < sc->nr_cells; i++) {
		const struct bench_cell *c = &sc->cells[i];

		if (!cell_ran(c) || !*c->group || !*c->series)
			continue;
		if (!in_list(groups, ng, c->group) && ng < 512)
			snprintf(groups[ng++], BENCH_NAME_MAX, "%s", c->group);
		if (!in_list(series, ns, c->series) && ns < 16)
			snprintf(series[ns++], BENCH_NAME_MAX, "%s", c->series);
	}
	if (sc->pivot < 1 || ns < 2 || ng < 1)
		return;
	fprintf(f, "\n| case |");
	for (k = 0; k < sc->pivot; k++)
		for (s = 0; s < ns; s++)
			fprintf(f, " %s %s |", series[s], bench_metrics[sc->columns[k]].heading);
	fprintf(f, "\n|---|");
	for (k = 0; k < sc->pivot * ns; k++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (g = 0; g < ng; g++) {
		fprintf(f, "| %s |", groups[g]);
		for (k = 0; k < sc->pivot; k++) {
			for (s = 0; s < ns; s++) {
				const struct bench_cell *hit = NULL;
				char v[64] = "–";

				for (i = 0; i < sc->nr_cells; i++) {
					const struct bench_cell *c = &sc->cells[i];

					if (cell_ran(c) && !strcmp(c->group, groups[g]) && !strcmp(c->series, series[s]))
						hit = c;
				}
				if (hit)
					fmt_metric(v, sizeof(v), &hit->res, sc->columns[k]);
				fprintf(f, " %s |", v);
			}
		}
		fprintf(f, "\n");
	}
}

/*
 * A paired ratio: "1.12 [1.05, 1.19]" when its interval excludes 1.0,
 * "no difference (0.98 [0.91, 1.05])" when it does not, "0.98 (1 pair,
 * no interval)" with a single pair.
 */
static void fmt_ci(char *buf, size_t len, const struct bench_ci *ci)
{
	if (!ci->valid)
		snprintf(buf, len, "%.2f (%d pair, no interval)", ci->est, ci->n);
	else if (bench_ci_differs(ci))
		snprintf(buf, len, "%.2f [%.2f, %.2f]", ci->est, ci->lo, ci->hi);
	else
		snprintf(buf, len, "no difference (%.2f [%.2f, %.2f])", ci->est, ci->lo, ci->hi);
}

static const struct bench_cell *cell_baseline(const struct bench_scenario *sc, const struct bench_cell *c)
{
	return find_cell(sc, *c->baseline ? c->baseline : sc->baseline);
}

/* One row per compared cell, one column per scenario column: the ratios. */
static void write_effects(FILE *f, const struct bench_scenario *sc)
{
	int i, k;
	bool any = false;

	for (i = 0; i < sc->nr_cells; i++)
		any |= cell_ran(&sc->cells[i]) && sc->cells[i].res.have_ci[sc->columns[0]];
	if (!any)
		return;
	fprintf(f, "\nPaired ratios to the baseline (geometric mean of the per-round ratios, 95 %% bootstrap "
		   "interval over the rounds):\n\n| cell | vs | pairs |");
	for (k = 0; k < sc->nr_columns; k++)
		fprintf(f, " %s |", bench_metrics[sc->columns[k]].heading);
	fprintf(f, "\n|---|---|---|");
	for (k = 0; k < sc->nr_columns; k++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (i = 0; i < sc->nr_cells; i++) {
		const struct bench_cell *c = &sc->cells[i], *b = cell_baseline(sc, c);
		char v[96];

		if (!cell_ran(c) || !b || b == c || !c->res.have_ci[sc->columns[0]])
			continue;
		fprintf(f, "| %s | %s | %d |", c->name, b->name, c->res.ci[sc->columns[0]].n);
		for (k = 0; k < sc->nr_columns; k++) {
			if (c->res.have_ci[sc->columns[k]])
				fmt_ci(v, sizeof(v), &c->res.ci[sc->columns[k]]);
			else
				snprintf(v, sizeof(v), "n/a");
			fprintf(f, " %s |", v);
		}
		fprintf(f, "\n");
	}
}

/* Cost and noise of every cell (medians). */
static void write_cost(FILE *f, const struct bench_scenario *sc)
{
	static const enum bench_metric cols[] = { BM_IOPS,		  BM_LAT_AVG,	       BM_LAT_STDEV,
						  BM_TGT_CPU_S_MIO,	  BM_IOPS_PER_TGT_CPU_S, BM_HOST_CPU_S_MIO,
						  BM_TGT_CTXSW_IO,	  BM_HOST_CTXSW_IO,     BM_TGT_SYSCALLS_IO,
						  BM_HOST_SYSCALLS_IO, BM_FOREIGN_PRE,	       BM_FOREIGN_RUN,
						  BM_STEAL,		  BM_PSI_PRE,	       BM_LOADAVG_PRE };
	size_t k;
	int i;

	fprintf(f, "\nCost per I/O and noise (medians; the CPU sets each cell ran on):\n\n| cell | CPUs target / "
		   "initiator / load |");
	for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
		fprintf(f, " %s |", bench_metrics[cols[k]].heading);
	fprintf(f, "\n|---|---|");
	for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
		fprintf(f, "---|");
	fprintf(f, "\n");
	for (i = 0; i < sc->nr_cells; i++) {
		const struct bench_cell *c = &sc->cells[i];
		char v[64];

		if (!cell_ran(c))
			continue;
		fprintf(f, "| %s | %s", c->name, c->res.target_cpus);
		if (c->res.target_cpu_quota > 0)
			fprintf(f, " (quota %g)", c->res.target_cpu_quota);
		fprintf(f, " / %s / %s |", c->res.perf_cpus, c->res.load_cpus);
		for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
			fmt_metric(v, sizeof(v), &c->res, cols[k]);
			fprintf(f, " %s |", v);
		}
		fprintf(f, "\n");
	}
}

static int write_md(struct bench_scenario *scs, int nr, const char *out_dir, const struct bench_paths *paths,
		    const struct bench_run_opts *ro, const char *cmdline, double elapsed_s, bool interrupted,
		    bool plots)
{
	struct bench_cpuset online;
	struct utsname u;
	char path[1100], host[256] = "?";
	time_t now = time(NULL);
	char ts[64];
	FILE *f;
	int s, i, k;

	snprintf(path, sizeof(path), "%s/report.md", out_dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	uname(&u);
	gethostname(host, sizeof(host) - 1);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
	online.nr = 0;
	bench_cpuset_online(&online);
	fprintf(f, "# nvmf-bench report\n\n");
	fprintf(f, "- date: %s; run time %.0f s%s\n", ts, elapsed_s, interrupted ? " — **interrupted**" : "");
	fprintf(f, "- machine: %s, %s %s, %d online CPUs\n", host, u.sysname, u.release, online.nr);
	fprintf(f, "- command: `%s`\n", cmdline);
	{
		char la[128] = "";
		FILE *lf = fopen("/proc/loadavg", "r");

		if (lf) {
			if (fgets(la, sizeof(la), lf))
				la[strcspn(la, "\n")] = 0;
			fclose(lf);
		}
		/* other work on the machine skews everything: say how busy it was */
		fprintf(f, "- /proc/loadavg at the end: %s\n", la);
	}
	fprintf(f, "- seed: %llu (`--seed %llu` repeats the run order and the intervals); runs are paired and "
		   "interleaved: each round runs every cell once in a shuffled order\n",
		(unsigned long long)ro->seed, (unsigned long long)ro->seed);
	fprintf(f, "- values are medians over the rounds; `±` is the sample standard deviation of the first "
		   "column; ratio = paired ratio of the first column to the baseline cell's with its 95 %% "
		   "bootstrap interval; \"no difference\" when the interval contains 1.0\n");
	fprintf(f, "- noise guard: a run is **busy** when other work used more than %.2f CPUs in the 0.25 s "
		   "before it or during it%s\n",
		ro->busy_cpus, ro->strict ? " (--strict: busy runs were re-run)" : "");
	fprintf(f, "- target CPU %% and context switches: /proc deltas of the target (nvmfd, or SPDK's nvmf_tgt) "
		   "over the measured window; completion events from nvmfd's per-queue stats; spdk_nvme_perf's "
		   "CPU from /proc of it over the same window.\n");
	fprintf(f, "- isolation: %s\n", paths->cg ? paths->cg->why : "affinity only");
	if (paths->cg && *paths->cg->cpu_why)
		fprintf(f, "- target CPU quota (target.cpu_quota, CPUs worth of time per %d µs): %s\n",
			BENCH_CPU_PERIOD_US, paths->cg->cpu_why);
	if (ro->syscalls == BENCH_SYSCALLS_PERF)
		fprintf(f, "- target syscalls per I/O: `perf stat -e raw_syscalls:sys_enter -p <target> -- sleep "
			   "<window>` started at the measured window (count / (IOPS x window))\n");
	else if (ro->syscalls == BENCH_SYSCALLS_STRACE)
		fprintf(f, "- target syscalls per I/O: `strace -c -f -p <target>` over the measured window "
			   "(**strace slows the target: IOPS, latency and CPU of this run are not comparable with "
			   "runs without it**; the per-syscall table is in raw/.../target-strace.txt)\n");
	else
		fprintf(f, "- target syscalls per I/O: not counted (`--syscalls off`, or perf cannot count "
			   "raw_syscalls:sys_enter here)\n");
	fprintf(f, "- SPDK: %s\n\n", paths->spdk_dir ? paths->spdk_dir : "not available (cells that need it are "
									"skipped, see each scenario)");
	for (s = 0; s < nr; s++) {
		struct bench_scenario *sc = &scs[s];
		enum bench_metric prim = sc->columns[0];
		bool any = false;

		for (i = 0; i < sc->nr_cells; i++)
			any |= cell_ran(&sc->cells[i]) || *sc->cells[i].skip;
		if (!any)
			continue;
		fprintf(f, "## %s\n\n", sc->name);
		if (sc->description && *sc->description)
			fprintf(f, "%s\n\n", sc->description);
		for (i = 0, k = 0; i < sc->nr_cells; i++) {
			if (!*sc->cells[i].skip)
				continue;
			fprintf(f, "%s`%s`: %s", k++ ? "; " : "**Skipped:** ", sc->cells[i].name, sc->cells[i].skip);
		}
		if (k)
			fprintf(f, ".\n\n");
		fprintf(f, "Baseline: `%s`. Source: %s.\n\n", sc->baseline, sc->source);
		fprintf(f, "| cell | runs |");
		for (k = 0; k < sc->nr_columns; k++)
			fprintf(f, " %s |", bench_metrics[sc->columns[k]].heading);
		fprintf(f, " ratio [95 %% CI] | busy runs |\n|---|---|");
		for (k = 0; k <= sc->nr_columns + 1; k++)
			fprintf(f, "---|");
		fprintf(f, "\n");
		for (i = 0; i < sc->nr_cells; i++) {
			struct bench_cell *c = &sc->cells[i];
			char v[64];

			if (!cell_ran(c))
				continue;
			fprintf(f, "| %s | %d/%d |", c->name, c->res.nr_ok, c->res.nr);
			for (k = 0; k < sc->nr_columns; k++) {
				fmt_metric(v, sizeof(v), &c->res, sc->columns[k]);
				fprintf(f, " %s", v);
				if (k == 0 && c->res.nr_ok > 1 && c->res.have_median[prim]) {
					fprintf(f, " ± ");
					fmt_value(v, sizeof(v), prim, c->res.stddev[prim]);
					fputs(v, f);
				}
				fprintf(f, " |");
			}
			if (cell_baseline(sc, c) == c) {
				fprintf(f, " baseline |");
			} else if (c->res.have_ci[prim]) {
				fmt_ci(v, sizeof(v), &c->res.ci[prim]);
				fprintf(f, " %s |", v);
			} else {
				fprintf(f, " – |");
			}
			fprintf(f, " %d |\n", c->res.nr_busy);
		}
		write_pivot(f, sc);
		write_effects(f, sc);
		write_cost(f, sc);
		fprintf(f, "\n<details><summary>cells: commands and contention</summary>\n\n");
		for (i = 0; i < sc->nr_cells; i++) {
			struct bench_cell *c = &sc->cells[i];
			int r;

			if (!cell_ran(c))
				continue;
			fprintf(f, "- **%s** (%.0f s + %.0f s warmup, baseline `%s`)\n", c->name, c->duration, c->warmup,
				*c->baseline ? c->baseline : sc->baseline);
			fprintf(f, "  - CPUs: target %s, initiator %s, contention %s (%s)\n", c->res.target_cpus,
				c->res.perf_cpus, c->res.load_cpus, *c->res.isolation ? c->res.isolation : "affinity only");
			if (c->res.target_cpu_quota > 0)
				fprintf(f, "  - target CPU quota: %g CPUs (%.0f µs per %d µs period)\n",
					c->res.target_cpu_quota, c->res.target_cpu_quota * BENCH_CPU_PERIOD_US,
					BENCH_CPU_PERIOD_US);
			fprintf(f, "  - run order (position in its round): ");
			for (r = 0; r < c->res.nr; r++)
				fprintf(f, "%s%d%s", r ? ", " : "", c->res.pos[r],
					c->res.busy[r] ? " busy" : "");
			fprintf(f, "\n");
			fprintf(f, "  - target: `");
			md_escape(f, c->res.target_cmd);
			fprintf(f, "`\n  - perf: `");
			md_escape(f, c->res.perf_cmd);
			fprintf(f, "`\n  - contention: %s\n", c->res.load_desc);
			for (r = 0; r < c->res.nr; r++)
				if (c->res.err[r][0])
					fprintf(f, "  - run %d: %s\n", r + 1, c->res.err[r]);
		}
		fprintf(f, "\n</details>\n\n");
		if (plots) {
			fprintf(f, "![%s](plots/%s-bars.png)\n![%s latency](plots/%s-latency.png)\n", sc->name, sc->name,
				sc->name, sc->name);
			for (i = 0; i < sc->nr_cells; i++) {
				if (cell_ran(&sc->cells[i]) && sc->cells[i].perf.rate > 0) {
					fprintf(f, "![%s latency vs load](plots/%s-latency-load.png)\n", sc->name,
						sc->name);
					break;
				}
			}
			fprintf(f, "\n");
		}
	}
	fclose(f);
	return 0;
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A text field as RFC 4180 has it: quoted (inner quotes doubled) only
 * when it holds a comma, a quote or a line break, so that a series such
 * as "hdr,data" stays one field and plain names stay bare. */
static void csv_field(FILE *f, const char *s)
{
	if (s[strcspn(s, ",\"\r\n")])
		csv_str(f, s);
	else
		fputs(s, f);
}

/* @n text fields (csv_field()), comma-separated; with @lead a comma
 * before the first too. */
static void csv_fields(FILE *f, bool lead, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (lead || i)
			fputc(',', f);
		csv_field(f, v[i]);
	}
}

static int write_csv(struct bench_scenario *scs, int nr, const char *out_dir)
{
	char path[1100];
	FILE *f;
	int s, i, k;

	snprintf(path, sizeof(path), "%s/cells.csv", out_dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "scenario,cell,group,series,baseline,runs,runs_ok,duration_s,warmup_s");
	for (k = 0; k < BM_NR; k++)
		fprintf(f, ",%s,%s_stddev", bench_metrics[k].key, bench_metrics[k].key);
	fprintf(f, ",ratio,pairs,ratio_paired,ci_lo,ci_hi,effect,busy_runs,target_cpus,perf_cpus,load_cpus,"
		   "target_cpu_quota,target_cmd,perf_cmd,contention,isolation\n");
	for (s = 0; s < nr; s++) {
		for (i = 0; i < scs[s].nr_cells; i++) {
			struct bench_cell *c = &scs[s].cells[i];
			const char *text[] = { scs[s].name, c->name, c->group, c->series,
					       *c->baseline ? c->baseline : scs[s].baseline };
			const char *cpus[] = { c->res.target_cpus, c->res.perf_cpus, /* "0,2" */
					       c->res.load_cpus };

			if (!cell_ran(c))
				continue;
			csv_fields(f, false, text, sizeof(text) / sizeof(text[0]));
			fprintf(f, ",%d,%d,%g,%g", c->res.nr, c->res.nr_ok, c->duration, c->warmup);
			for (k = 0; k < BM_NR; k++) {
				if (c->res.have_median[k])
					fprintf(f, ",%.6g,%.6g", c->res.median[k], c->res.stddev[k]);
				else
					fprintf(f, ",,");
			}
			if (c->res.ratio > 0)
				fprintf(f, ",%.4f", c->res.ratio);
			else
				fprintf(f, ",");
			{
				const struct bench_ci *ci = &c->res.ci[scs[s].columns[0]];

				if (c->res.have_ci[scs[s].columns[0]] && ci->valid)
					fprintf(f, ",%d,%.4f,%.4f,%.4f,%s", ci->n, ci->est, ci->lo, ci->hi,
						bench_ci_differs(ci) ? "yes" : "no difference");
				else if (c->res.have_ci[scs[s].columns[0]])
					fprintf(f, ",%d,%.4f,,,", ci->n, ci->est);
				else
					fprintf(f, ",,,,,");
			}
			fprintf(f, ",%d", c->res.nr_busy);
			csv_fields(f, true, cpus, sizeof(cpus) / sizeof(cpus[0]));
			fprintf(f, ",%g,", c->res.target_cpu_quota);
			csv_str(f, c->res.target_cmd);
			fputc(',', f);
			csv_str(f, c->res.perf_cmd);
			fputc(',', f);
			csv_str(f, c->res.load_desc);
			fputc(',', f);
			csv_str(f, c->res.isolation);
			fputc('\n', f);
		}
	}
	fclose(f);
	return 0;
}

static struct json_object *metrics_obj(const double *v, const bool *have)
{
	struct json_object *o = json_object_new_object();
	int k;

	for (k = 0; k < BM_NR; k++)
		if (have[k])
			json_object_object_add(o, bench_metrics[k].key, json_object_new_double(v[k]));
	return o;
}

static int write_json(struct bench_scenario *scs, int nr, const char *out_dir, const char *cmdline,
		      bool interrupted, uint64_t seed)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	char path[1100];
	int s, i, r, k, ret;

	json_object_object_add(root, "command", json_object_new_string(cmdline));
	json_object_object_add(root, "interrupted", json_object_new_boolean(interrupted));
	json_object_object_add(root, "seed", json_object_new_int64((int64_t)seed));
	for (s = 0; s < nr; s++) {
		for (i = 0; i < scs[s].nr_cells; i++) {
			struct bench_cell *c = &scs[s].cells[i];
			struct json_object *o, *runs, *sd;

			if (!cell_ran(c))
				continue;
			o = json_object_new_object();
			json_object_object_add(o, "scenario", json_object_new_string(scs[s].name));
			json_object_object_add(o, "cell", json_object_new_string(c->name));
			json_object_object_add(o, "group", json_object_new_string(c->group));
			json_object_object_add(o, "series", json_object_new_string(c->series));
			json_object_object_add(o, "baseline",
					       json_object_new_string(*c->baseline ? c->baseline : scs[s].baseline));
			json_object_object_add(o, "duration_s", json_object_new_double(c->duration));
			json_object_object_add(o, "warmup_s", json_object_new_double(c->warmup));
			json_object_object_add(o, "target_cmd", json_object_new_string(c->res.target_cmd));
			json_object_object_add(o, "perf_cmd", json_object_new_string(c->res.perf_cmd));
			json_object_object_add(o, "contention", json_object_new_string(c->res.load_desc));
			json_object_object_add(o, "runs_ok", json_object_new_int(c->res.nr_ok));
			json_object_object_add(o, "median", metrics_obj(c->res.median, c->res.have_median));
			sd = json_object_new_object();
			for (k = 0; k < BM_NR; k++)
				if (c->res.have_median[k])
					json_object_object_add(sd, bench_metrics[k].key,
							       json_object_new_double(c->res.stddev[k]));
			json_object_object_add(o, "stddev", sd);
			if (c->res.ratio > 0)
				json_object_object_add(o, "ratio", json_object_new_double(c->res.ratio));
			json_object_object_add(o, "target_cpus", json_object_new_string(c->res.target_cpus));
			json_object_object_add(o, "perf_cpus", json_object_new_string(c->res.perf_cpus));
			json_object_object_add(o, "load_cpus", json_object_new_string(c->res.load_cpus));
			json_object_object_add(o, "target_cpu_quota", json_object_new_double(c->res.target_cpu_quota));
			json_object_object_add(o, "busy_runs", json_object_new_int(c->res.nr_busy));
			json_object_object_add(o, "isolation", json_object_new_string(c->res.isolation));
			{
				struct json_object *pr = json_object_new_object();

				for (k = 0; k < BM_NR; k++) {
					const struct bench_ci *ci = &c->res.ci[k];
					struct json_object *co;

					if (!c->res.have_ci[k])
						continue;
					co = json_object_new_object();
					json_object_object_add(co, "pairs", json_object_new_int(ci->n));
					json_object_object_add(co, "ratio", json_object_new_double(ci->est));
					if (ci->valid) {
						json_object_object_add(co, "ci_lo", json_object_new_double(ci->lo));
						json_object_object_add(co, "ci_hi", json_object_new_double(ci->hi));
					}
					json_object_object_add(co, "differs",
							       json_object_new_boolean(bench_ci_differs(ci)));
					json_object_object_add(pr, bench_metrics[k].key, co);
				}
				json_object_object_add(o, "paired_ratio", pr);
			}
			runs = json_object_new_array();
			for (r = 0; r < c->res.nr; r++) {
				struct json_object *ro = json_object_new_object();

				json_object_object_add(ro, "ok", json_object_new_boolean(c->res.ok[r]));
				json_object_object_add(ro, "round", json_object_new_int(r + 1));
				json_object_object_add(ro, "position", json_object_new_int(c->res.pos[r]));
				json_object_object_add(ro, "busy", json_object_new_boolean(c->res.busy[r]));
				json_object_object_add(ro, "tries", json_object_new_int(c->res.tries[r]));
				if (c->res.err[r][0])
					json_object_object_add(ro, "error", json_object_new_string(c->res.err[r]));
				json_object_object_add(ro, "metrics", metrics_obj(c->res.v[r], c->res.have[r]));
				json_object_array_add(runs, ro);
			}
			json_object_object_add(o, "runs", runs);
			json_object_array_add(arr, o);
		}
	}
	json_object_object_add(root, "cells", arr);
	snprintf(path, sizeof(path), "%s/cells.json", out_dir);
	ret = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(root);
	return ret ? -EIO : 0;
}

/* Grouped bars (rows = groups, columns = series) and percentile curves. */
static int write_plot(const struct bench_scenario *sc, const char *pdir)
{
	static char groups[512][BENCH_NAME_MAX], series[64][BENCH_NAME_MAX];
	static const int pct[] = { BM_P50, BM_P90, BM_P99, BM_P999, BM_P9999 };
	enum bench_metric prim = sc->columns[0];
	int ng = 0, ns = 0, i, g, s;
	char path[1200];
	FILE *f;

	for (i = 0; i < sc->nr_cells; i++) {
		const struct bench_cell *c = &sc->cells[i];
		const char *gn = *c->group ? c->group : c->name;
		const char *sn = *c->series ? c->series : bench_metrics[prim].key;

		if (!cell_ran(c))
			continue;
		if (!in_list(groups, ng, gn) && ng < 512)
			snprintf(groups[ng++], BENCH_NAME_MAX, "%s", gn);
		if (!in_list(series, ns, sn) && ns < 64)
			snprintf(series[ns++], BENCH_NAME_MAX, "%s", sn);
	}
	if (!ng)
		return 0;
	snprintf(path, sizeof(path), "%s/%s-bars.dat", pdir, sc->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "group");
	for (s = 0; s < ns; s++)
		fprintf(f, " \"%s\"", series[s]);
	fprintf(f, "\n");
	for (g = 0; g < ng; g++) {
		fprintf(f, "\"%s\"", groups[g]);
		for (s = 0; s < ns; s++) {
			const struct bench_cell *hit = NULL;

			for (i = 0; i < sc->nr_cells; i++) {
				const struct bench_cell *c = &sc->cells[i];
				const char *gn = *c->group ? c->group : c->name;
				const char *sn = *c->series ? c->series : bench_metrics[prim].key;

				if (cell_ran(c) && !strcmp(gn, groups[g]) && !strcmp(sn, series[s]))
					hit = c;
			}
			if (hit && hit->res.have_median[prim])
				fprintf(f, " %g", hit->res.median[prim] / bench_metrics[prim].scale);
			else
				fprintf(f, " -");
		}
		fprintf(f, "\n");
	}
	fclose(f);

	snprintf(path, sizeof(path), "%s/%s-latency.dat", pdir, sc->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "pct");
	for (i = 0; i < sc->nr_cells; i++)
		if (cell_ran(&sc->cells[i]))
			fprintf(f, " \"%s\"", sc->cells[i].name);
	fprintf(f, "\n");
	for (g = 0; g < 5; g++) {
		fprintf(f, "\"%s\"", bench_metrics[pct[g]].key);
		for (i = 0; i < sc->nr_cells; i++) {
			const struct bench_cell *c = &sc->cells[i];

			if (!cell_ran(c))
				continue;
			if (c->res.have_median[pct[g]] && c->res.median[pct[g]] > 0)
				fprintf(f, " %g", c->res.median[pct[g]]);
			else
				fprintf(f, " -");
		}
		fprintf(f, "\n");
	}
	fclose(f);

	snprintf(path, sizeof(path), "%s/%s.gp", pdir, sc->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "set terminal pngcairo size 1200,600 noenhanced font ',10'\n");
	fprintf(f, "set datafile missing '-'\nset key outside right top\nset grid ytics\n");
	fprintf(f, "set output '%s/%s-bars.png'\n", pdir, sc->name);
	fprintf(f, "set title '%s: %s (median)'\n", sc->name, bench_metrics[prim].heading);
	fprintf(f, "set style data histograms\nset style histogram clustered gap 1\n");
	fprintf(f, "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset yrange [0:*]\n");
	fprintf(f, "set xtics rotate by -30\nset ylabel '%s'\n", bench_metrics[prim].heading);
	fprintf(f, "plot for [i=2:%d] '%s/%s-bars.dat' using i:xtic(1) title columnheader(i)\n", ns + 1, pdir,
		sc->name);
	fprintf(f, "reset\nset terminal pngcairo size 1200,600 noenhanced font ',10'\n");
	fprintf(f, "set datafile missing '-'\nset key outside right top\nset grid\nset logscale y\n");
	fprintf(f, "set output '%s/%s-latency.png'\n", pdir, sc->name);
	fprintf(f, "set title '%s: latency percentiles (median over runs)'\n", sc->name);
	fprintf(f, "set ylabel 'latency (us)'\nset xlabel 'percentile'\n");
	fprintf(f, "plot for [i=2:%d] '%s/%s-latency.dat' using 0:i:xtic(1) with linespoints title columnheader(i)\n",
		sc->nr_cells + 1, pdir, sc->name);
	fclose(f);
	return 0;
}

/*
 * Latency against offered load: for the cells with a fixed rate
 * (perf.rate), p50 and p99 per series against the rate. Writes
 * <scenario>-latency-load.{dat,gp}; 1 if there was something to plot.
 */
static int write_load_plot(const struct bench_scenario *sc, const char *pdir)
{
	static char series[64][BENCH_NAME_MAX];
	long rates[64];
	int nr = 0, ns = 0, i, r, s, k;
	char path[1200];
	FILE *f;

	for (i = 0; i < sc->nr_cells; i++) {
		const struct bench_cell *c = &sc->cells[i];
		const char *sn = *c->series ? c->series : c->name;
		bool seen = false;

		if (!cell_ran(c) || c->perf.rate <= 0)
			continue;
		if (!in_list(series, ns, sn) && ns < 64)
			snprintf(series[ns++], BENCH_NAME_MAX, "%s", sn);
		for (r = 0; r < nr; r++)
			seen |= rates[r] == c->perf.rate;
		if (!seen && nr < 64)
			rates[nr++] = c->perf.rate;
	}
	if (!nr)
		return 0;
	for (r = 1; r < nr; r++) /* ascending */
		for (k = r; k > 0 && rates[k - 1] > rates[k]; k--) {
			long t = rates[k];

			rates[k] = rates[k - 1];
			rates[k - 1] = t;
		}
	snprintf(path, sizeof(path), "%s/%s-latency-load.dat", pdir, sc->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "rate");
	for (s = 0; s < ns; s++)
		fprintf(f, " \"%s p50\" \"%s p99\"", series[s], series[s]);
	fprintf(f, "\n");
	for (r = 0; r < nr; r++) {
		fprintf(f, "%ld", rates[r]);
		for (s = 0; s < ns; s++) {
			const struct bench_cell *hit = NULL;

			for (i = 0; i < sc->nr_cells; i++) {
				const struct bench_cell *c = &sc->cells[i];
				const char *sn = *c->series ? c->series : c->name;

				if (cell_ran(c) && c->perf.rate == rates[r] && !strcmp(sn, series[s]))
					hit = c;
			}
			for (k = 0; k < 2; k++) {
				int m = k ? BM_P99 : BM_P50;

				if (hit && hit->res.have_median[m] && hit->res.median[m] > 0)
					fprintf(f, " %g", hit->res.median[m]);
				else
					fprintf(f, " -");
			}
		}
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s-latency-load.gp", pdir, sc->name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "set terminal pngcairo size 1000,600 noenhanced font ',10'\n");
	fprintf(f, "set datafile missing '-'\nset key outside right top\nset grid\nset logscale y\n");
	fprintf(f, "set output '%s/%s-latency-load.png'\n", pdir, sc->name);
	fprintf(f, "set title '%s: latency vs offered load (open loop, median over rounds)'\n", sc->name);
	fprintf(f, "set xlabel 'offered load (IOPS, nvmf-perf --rate)'\nset ylabel 'latency (us)'\n");
	fprintf(f, "plot for [i=2:%d] '%s/%s-latency-load.dat' using 1:i with linespoints title columnheader(i)\n",
		2 * ns + 1, pdir, sc->name);
	fclose(f);
	return 1;
}

static int cells_ran(const struct bench_scenario *sc)
{
	int i, n = 0;

	for (i = 0; i < sc->nr_cells; i++)
		n += cell_ran(&sc->cells[i]);
	return n;
}

/**
 * bench_report_write() - aggregate and write report.md, cells.csv,
 *                        cells.json and plots/ into @out_dir.
 * @scs: scenarios (borrowed; results aggregated in place).
 * @nr: number of scenarios.
 * @out_dir: existing results folder.
 * @paths: executables (gnuplot; NULL path or missing file = no plots).
 * @ro: seed and noise-guard settings, for the record and the bootstrap.
 * @cmdline: the bench's command line, for the record.
 * @elapsed_s: wall time of the whole run.
 * @interrupted: the run was cut short by a signal.
 *
 * Return: 0; -errno of the first file that could not be written.
 * Context: main thread.
 */
int bench_report_write(struct bench_scenario *scs, int nr, const char *out_dir, const struct bench_paths *paths,
		       const struct bench_run_opts *ro, const char *cmdline, double elapsed_s, bool interrupted)
{
	bool plots = paths->gnuplot && access(paths->gnuplot, X_OK) == 0;
	char pdir[1100];
	int s, ret = 0;

	for (s = 0; s < nr; s++)
		bench_result_aggregate(&scs[s], ro->seed);
	if (plots) {
		snprintf(pdir, sizeof(pdir), "%s/plots", out_dir);
		mkdir(pdir, 0755);
		for (s = 0; s < nr; s++) {
			char *argv[3];
			char gp[1200];
			int st;
			pid_t pid;

			if (!cells_ran(&scs[s]))
				continue;
			if (write_plot(&scs[s], pdir))
				continue;
			snprintf(gp, sizeof(gp), "%s/%s.gp", pdir, scs[s].name);
			argv[0] = (char *)paths->gnuplot;
			argv[1] = gp;
			argv[2] = NULL;
			pid = bench_proc_spawn(argv, NULL, NULL, NULL, 0, NULL);
			if (pid > 0 && bench_proc_wait(pid, &st, 60) == 0 && WIFEXITED(st) && WEXITSTATUS(st))
				fprintf(stderr, "nvmf-bench: warning: gnuplot failed on %s\n", gp);
			if (write_load_plot(&scs[s], pdir) <= 0)
				continue;
			snprintf(gp, sizeof(gp), "%s/%s-latency-load.gp", pdir, scs[s].name);
			pid = bench_proc_spawn(argv, NULL, NULL, NULL, 0, NULL);
			if (pid > 0 && bench_proc_wait(pid, &st, 60) == 0 && WIFEXITED(st) && WEXITSTATUS(st))
				fprintf(stderr, "nvmf-bench: warning: gnuplot failed on %s\n", gp);
		}
	} else if (paths->gnuplot) {
		/* NULL: --no-plots, or not found (the caller said so already) */
		fprintf(stderr, "nvmf-bench: warning: gnuplot %s is not executable, no plots\n",
			paths->gnuplot);
	}
	ret = write_md(scs, nr, out_dir, paths, ro, cmdline, elapsed_s, interrupted, plots);
	if (!ret)
		ret = write_csv(scs, nr, out_dir);
	if (!ret)
		ret = write_json(scs, nr, out_dir, cmdline, interrupted, ro->seed);
	return ret;
}
