// SPDX-License-Identifier: MIT
/*
 * nvmf-bench built-in scenarios: the five experiments of bench/seeds.md (A-E),
 * scaled to the machine through CPU set keywords ("target", "all") and
 * counts relative to the online CPUs ("2*ncpu"). They are generated as
 * JSON trees (so they go through the same validation as user files) and
 * `nvmf-bench --write-scenarios DIR` writes them out; bench/scenarios/
 * holds that output.
 *
 * Departures from the seeds, forced by a small shared machine: loopback
 * instead of a NIC, null/file backends instead of NVMe drives, hog
 * buffers of 128 MiB per thread instead of 800 MB, shorter runs.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define NR_BUILTIN 7

static const char *const names[NR_BUILTIN] = { "seed-a-unbound",      "seed-b-cpu-heavy", "seed-c-idle-poll",
					       "seed-d-cq-pool",      "seed-e-host-scaling", "self-check-aa",
					       "spdk-compare" };

static char texts[NR_BUILTIN][65536];

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *jint(long v)
{
	return json_object_new_int64(v);
}

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static struct json_object *columns(const char *const *cols)
{
	struct json_object *a = json_object_new_array();

	for (; *cols; cols++)
		json_object_array_add(a, jstr(*cols));
	return a;
}

static struct json_object *scenario(const char *name, const char *desc, const char *baseline, int duration,
				    int warmup, int repeat, const char *const *cols, int qdur, int qwarm, int qrep)
{
	struct json_object *o = json_object_new_object(), *q = json_object_new_object();

	add(o, "name", jstr(name));
	add(o, "description", jstr(desc));
	add(o, "baseline", jstr(baseline));
	add(o, "duration", jint(duration));
	add(o, "warmup", jint(warmup));
	add(o, "repeat", jint(repeat));
	add(o, "columns", columns(cols));
	add(q, "duration", jint(qdur));
	add(q, "warmup", jint(qwarm));
	add(q, "repeat", jint(qrep));
	add(o, "quick", q);
	return o;
}

static struct json_object *cell(const char *name, const char *group, const char *series, const char *baseline)
{
	struct json_object *c = json_object_new_object();

	add(c, "name", jstr(name));
	if (group)
		add(c, "group", jstr(group));
	if (series)
		add(c, "series", jstr(series));
	if (baseline)
		add(c, "baseline", jstr(baseline));
	return c;
}

static struct json_object *sub(struct json_object *o, const char *k)
{
	struct json_object *s;

	if (json_object_object_get_ex(o, k, &s))
		return s;
	s = json_object_new_object();
	add(o, k, s);
	return s;
}

/* Complete scenario @sc with its "defaults" @d, the "pivot" column and its @cells. */
static struct json_object *finish(struct json_object *sc, struct json_object *d, int pivot,
				  struct json_object *cells)
{
	add(sc, "defaults", d);
	add(sc, "pivot", jint(pivot));
	add(sc, "cells", cells);
	return sc;
}

/* A: bound vs unbound x 4K/1M randrw 50 % x no / medium / heavy load. */
static struct json_object *seed_a(void)
{
	static const char *const cols[] = { "iops", "lat_avg", "p50", "p99", "target_cpu_s_mio", NULL };
	static const char *const sizes[] = { "4k", "1m" };
	static const char *const loads[] = { "none", "medium", "heavy" };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();
	int e, s, l;

	sc = scenario("seed-a-unbound",
		      "Seed A (bench/seeds.md): the target's per-queue I/O work on bound (per-CPU, pinned) vs unbound pools, "
		      "4K and 1M random 50/50 read/write, without and with competing load on the target's CPUs "
		      "(medium: stress-ng at 45 % per CPU plus a 256 MiB memory worker; heavy: the seed's hog, "
		      "one thread per CPU at nice -20 rewriting a 128 MiB buffer then sleeping 10 ms). "
		      "Then latency against load: 4K random reads sent open loop at 2k, 10k and 30k IOPS "
		      "(nvmf-perf --rate; latency from the intended send time), no contention. "
		      "Ratios: unbound against bound at the same size and load (or rate); bound against bound "
		      "without load at the same size.",
		      "bound-4k-none", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "backend", jstr("null"));
	add(sub(d, "perf"), "pattern", jstr("randrw"));
	add(sub(d, "perf"), "read_pct", jint(50));
	add(sub(d, "perf"), "qd", jint(32));
	add(sub(d, "perf"), "queues", jstr("2*ncpu"));
	for (s = 0; s < 2; s++) {
		for (l = 0; l < 3; l++) {
			for (e = 0; e < 2; e++) {
				char name[64], group[64], base[64];
				struct json_object *c, *ld;

				snprintf(name, sizeof(name), "%s-%s-%s", e ? "unbound" : "bound", sizes[s], loads[l]);
				snprintf(group, sizeof(group), "%s-%s-load", sizes[s], loads[l]);
				/* unbound vs bound at equal size and load; bound vs no load */
				snprintf(base, sizeof(base), "bound-%s-%s", sizes[s], e ? loads[l] : "none");
				c = cell(name, group, e ? "unbound" : "bound", e || s || l ? base : NULL);
				add(sub(c, "target"), "exec", jstr(e ? "unbound" : "bound"));
				add(sub(c, "perf"), "io_size", jstr(sizes[s]));
				if (s == 1)
					add(sub(c, "perf"), "qd", jint(8));
				ld = sub(c, "contention");
				if (l == 0) {
					add(ld, "kind", jstr("none"));
				} else if (l == 1) {
					add(ld, "kind", jstr("stress-ng"));
					add(ld, "cpus", jstr("target"));
					add(ld, "load_pct", jint(45));
					add(ld, "buffer_mb", jint(256));
					add(ld, "nice", jint(0));
				} else {
					add(ld, "kind", jstr("hog"));
					add(ld, "cpus", jstr("target"));
					add(ld, "load_pct", jint(100));
					add(ld, "buffer_mb", jint(128));
					add(ld, "nice", jint(-20));
				}
				json_object_array_add(cells, c);
			}
		}
	}
	/*
	 * latency vs load (what discussion A's reviewer asked for): 4K random
	 * reads at fixed open-loop rates, no contention, per mode; the report
	 * plots p50/p99 against the rate
	 */
	for (l = 0; l < 3; l++) {
		static const long rates[] = { 2000, 10000, 30000 };

		for (e = 0; e < 2; e++) {
			char name[64], group[64], base[64];
			struct json_object *c;

			snprintf(name, sizeof(name), "%s-4k-rate-%ldk", e ? "unbound" : "bound", rates[l] / 1000);
			snprintf(group, sizeof(group), "4k-rate-%ldk", rates[l] / 1000);
			snprintf(base, sizeof(base), "bound-4k-rate-%ldk", rates[l] / 1000);
			c = cell(name, group, e ? "unbound" : "bound", base);
			add(sub(c, "target"), "exec", jstr(e ? "unbound" : "bound"));
			add(sub(c, "perf"), "io_size", jstr("4k"));
			add(sub(c, "perf"), "pattern", jstr("randread"));
			add(sub(c, "perf"), "rate", jint(rates[l]));
			add(sub(c, "contention"), "kind", jstr("none"));
			json_object_array_add(cells, c);
		}
	}
	return finish(sc, d, 2, cells);
}

/* B: CPU-heavy per-request work (data digest) x 1 / several streams x bound/unbound. */
static struct json_object *seed_b(void)
{
	static const char *const cols[] = { "mib_s", "iops", "lat_avg", "target_cpu", "host_cpu", NULL };
	static const char *const streams[] = { "1", "2*ncpu" };
	static const char *const sname[] = { "1stream", "nstreams" };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();
	int e, s;

	sc = scenario("seed-b-cpu-heavy",
		      "Seed B (bench/seeds.md): CPU-bound per-request work (CRC32C data digest on every 128 KiB read) with one "
		      "stream (one queue) and several (2 per CPU), bound vs unbound. Spreading should help the "
		      "single stream most.",
		      "bound-1stream", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "backend", jstr("null"));
	add(sub(d, "perf"), "pattern", jstr("read"));
	add(sub(d, "perf"), "io_size", jstr("128k"));
	add(sub(d, "perf"), "qd", jint(8));
	add(sub(d, "perf"), "digest", jstr("data"));
	for (s = 0; s < 2; s++) {
		for (e = 0; e < 2; e++) {
			char name[64], base[64];
			struct json_object *c;

			snprintf(name, sizeof(name), "%s-%s", e ? "unbound" : "bound", sname[s]);
			snprintf(base, sizeof(base), "bound-%s", sname[s]);
			c = cell(name, sname[s], e ? "unbound" : "bound", e ? base : NULL);
			add(sub(c, "target"), "exec", jstr(e ? "unbound" : "bound"));
			add(sub(c, "perf"), "queues", jstr(streams[s]));
			json_object_array_add(cells, c);
		}
	}
	return finish(sc, d, 1, cells);
}

/* C: idle polling and backend completion polling. */
static struct json_object *seed_c(void)
{
	static const char *const cols[] = { "iops",	 "lat_avg",   "p99.99",	      "p99.9",	    "p99",
					    "lat_stdev", "target_ctxsw", "target_cpu", "target_ctxsw_s", NULL };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object(), *c;

	sc = scenario("seed-c-idle-poll",
		      "Seed C (bench/seeds.md): 4K random reads, QD 32, 4 connections per CPU on a file backend (io_uring): "
		      "event driven vs idle polling (750 ms, as in the seed) vs idle polling plus backend "
		      "completion polling. Context switches are nvmfd's, counted over the measured window.",
		      "baseline", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "exec", jstr("bound")); /* the seed's static mode, not the default */
	add(sub(d, "target"), "backend", jstr("file"));
	add(sub(d, "target"), "backend_size", jstr("256M"));
	add(sub(d, "perf"), "pattern", jstr("randread"));
	add(sub(d, "perf"), "qd", jint(32));
	add(sub(d, "perf"), "queues", jstr("4*ncpu"));
	c = cell("baseline", "4k-randread", "baseline", NULL);
	json_object_array_add(cells, c);
	c = cell("idle-poll", "4k-randread", "idle-poll", NULL);
	add(sub(c, "target"), "idle_poll_us", jint(750000));
	json_object_array_add(cells, c);
	c = cell("idle-poll-backend-poll", "4k-randread", "idle-poll+backend-poll", NULL);
	add(sub(c, "target"), "idle_poll_us", jint(750000));
	add(sub(c, "target"), "backend_poll", json_object_new_boolean(1));
	json_object_array_add(cells, c);
	return finish(sc, d, 0, cells);
}

/* D: per-queue vs shared completion rings x 1, 2, 4, 8 controllers per CPU. */
static struct json_object *seed_d(void)
{
	static const char *const cols[] = { "cq_events_s", "compl_per_event", "iops", "lat_avg", "p99.99", NULL };
	static const int per_cpu[] = { 1, 2, 4, 8 };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();
	int p, k;

	sc = scenario("seed-d-cq-pool",
		      "Seed D (bench/seeds.md): one backend completion ring per queue vs one shared per CPU, with 1, 2, 4 and 8 "
		      "controllers per CPU (each controller = one nvmf-perf process with one queue, QD 32, 4K "
		      "random reads, file backend). Completion events/s and completions per event come from "
		      "nvmfd's per-queue stats. Ratio: shared against per-queue at the same density.",
		      "per-queue-1", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "exec", jstr("bound")); /* the seed's static mode, not the default */
	add(sub(d, "target"), "backend", jstr("file"));
	add(sub(d, "target"), "backend_size", jstr("256M"));
	add(sub(d, "perf"), "pattern", jstr("randread"));
	add(sub(d, "perf"), "qd", jint(32));
	add(sub(d, "perf"), "queues", jint(1));
	for (k = 0; k < 4; k++) {
		for (p = 0; p < 2; p++) {
			char name[64], group[64], base[64], ctrls[32];
			struct json_object *c;

			snprintf(name, sizeof(name), "%s-%d", p ? "shared" : "per-queue", per_cpu[k]);
			snprintf(group, sizeof(group), "%d-ctrl-per-cpu", per_cpu[k]);
			snprintf(base, sizeof(base), "per-queue-%d", per_cpu[k]);
			snprintf(ctrls, sizeof(ctrls), "%d*ncpu", per_cpu[k]);
			c = cell(name, group, p ? "shared" : "per-queue", p ? base : NULL);
			add(sub(c, "target"), "cq_pool", jstr(p ? "shared" : "per-queue"));
			add(sub(c, "perf"), "controllers", jstr(ctrls));
			if (per_cpu[k] == 2 || per_cpu[k] == 8)
				add(c, "quick", json_object_new_boolean(0));
			json_object_array_add(cells, c);
		}
	}
	return finish(sc, d, 5, cells);
}

/* E: 4K seq/rand read/write x cumulative host-scaling steps x null/file, 2 controllers. */
static struct json_object *seed_e(void)
{
	static const char *const cols[] = { "mib_s", "iops", "lat_avg", "p99", "target_cpu", NULL };
	static const char *const wls[] = { "write", "randwrite", "read", "randread" };
	static const char *const steps[] = { "baseline", "budgets", "least-loaded", "per-ctrl-pools" };
	static const char *const bks[] = { "null", "file" };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();
	int b, w, s;

	sc = scenario("seed-e-host-scaling",
		      "Seed E (bench/seeds.md): 4K sequential/random read/write, 2 controllers x 1 queue per CPU, QD 32, on null "
		      "and file backends, with the steps applied cumulatively on target and host (nvmf-perf): "
		      "baseline; + rx/tx budgets in bytes (64 KiB each; target also a 100 us io_work "
		      "deadline); + least-loaded io_cpu placement; + per-controller worker pools (target). "
		      "Ratio: against the baseline of the same workload and backend.",
		      "null-write-baseline", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "exec", jstr("bound")); /* the seed's static mode, not the default */
	add(sub(d, "target"), "backend_size", jstr("1G"));
	add(sub(d, "perf"), "qd", jint(32));
	add(sub(d, "perf"), "io_size", jstr("4k"));
	add(sub(d, "perf"), "queues", jstr("1*ncpu"));
	add(sub(d, "perf"), "controllers", jint(2));
	for (b = 0; b < 2; b++) {
		for (w = 0; w < 4; w++) {
			for (s = 0; s < 4; s++) {
				char name[64], group[64], base[64];
				struct json_object *c, *t;

				snprintf(name, sizeof(name), "%s-%s-%s", bks[b], wls[w], steps[s]);
				snprintf(group, sizeof(group), "%s-%s", bks[b], wls[w]);
				snprintf(base, sizeof(base), "%s-%s-baseline", bks[b], wls[w]);
				c = cell(name, group, steps[s], s ? base : (b || w) ? base : NULL);
				t = sub(c, "target");
				add(t, "backend", jstr(bks[b]));
				if (b == 1)
					add(t, "backend_size", jstr("256M"));
				if (s >= 1) {
					add(t, "rx_budget", jint(65536));
					add(t, "tx_budget", jint(65536));
					add(t, "io_work_deadline_us", jint(100));
				}
				if (s >= 2)
					add(t, "io_cpu", jstr("least-loaded"));
				if (s >= 3)
					add(t, "wq_per_ctrl", json_object_new_boolean(1));
				add(sub(c, "perf"), "pattern", jstr(wls[w]));
				if (s >= 1) {
					/* the host side takes the same steps (nvmf-perf flags) */
					struct json_object *x = json_object_new_array();

					json_object_array_add(x, jstr("--rx-budget"));
					json_object_array_add(x, jstr("65536"));
					json_object_array_add(x, jstr("--tx-budget"));
					json_object_array_add(x, jstr("65536"));
					if (s >= 2) {
						json_object_array_add(x, jstr("--io-cpu"));
						json_object_array_add(x, jstr("least-loaded"));
					}
					add(sub(c, "perf"), "extra_args", x);
				}
				/* --quick: null backend, write and randread only */
				if (b == 1 || w == 1 || w == 2)
					add(c, "quick", json_object_new_boolean(0));
				json_object_array_add(cells, c);
			}
		}
	}
	return finish(sc, d, 1, cells);
}

/*
 * The A/A self-check: the same configuration as both series. Its report
 * must say "no difference" for every metric; a difference here means the
 * method invents effects (or the machine changed under a series, which
 * the interleaving should have spread over both).
 */
static struct json_object *self_check(void)
{
	static const char *const cols[] = { "iops", "lat_avg", "p99", "target_cpu_s_mio", "host_cpu_s_mio", NULL };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();

	sc = scenario("self-check-aa",
		      "A/A self-check: two cells with the same configuration (bound target, 4K random reads, QD "
		      "16, one queue, RAM namespace). Every ratio must come out as \"no difference\"; with a 95 % "
		      "interval about one metric in twenty may differ by chance.",
		      "a", 10, 2, 5, cols, 2, 1, 5);
	add(sub(d, "target"), "backend", jstr("ram"));
	add(sub(d, "target"), "backend_size", jstr("256M"));
	add(sub(d, "target"), "exec", jstr("bound"));
	add(sub(d, "perf"), "pattern", jstr("randread"));
	add(sub(d, "perf"), "qd", jint(16));
	add(sub(d, "perf"), "queues", jint(1));
	json_object_array_add(cells, cell("a", "4k-randread", "a", NULL));
	json_object_array_add(cells, cell("a-again", "4k-randread", "a-again", NULL));
	return finish(sc, d, 1, cells);
}

/*
 * nvmfd against SPDK's nvmf_tgt on SPDK's own benchmark: both targets on
 * the target's CPUs with a 256 MiB RAM (malloc) namespace, both driven by
 * spdk_nvme_perf on the initiator's CPUs, the same rounds; per workload
 * the nvmfd cell's baseline is the SPDK cell, so its ratios read
 * nvmfd / SPDK. bench/compare-spdk.sh prints its table.
 */
static struct json_object *spdk_compare(void)
{
	static const char *const cols[] = { "iops",	  "iops_per_target_cpu_s", "lat_avg", "p50", "p99",
					    "target_cpu", "target_syscalls_io",	   NULL };
	static const struct {
		const char *group, *pattern, *size;
		int qd;
	} wl[] = { { "4k-randread-qd32", "randread", "4k", 32 },
		   { "128k-read-qd16", "read", "128k", 16 },
		   { "4k-randread-qd1", "randread", "4k", 1 },
		   { "4k-randwrite-qd32", "randwrite", "4k", 32 } };
	struct json_object *sc, *cells = json_object_new_array(), *d = json_object_new_object();
	size_t i;

	sc = scenario("spdk-compare",
		      "nvmfd vs SPDK's nvmf_tgt (v25.09 or whatever --spdk names; --no-huge, posix sockets, one "
		      "reactor on the target's CPUs, malloc bdev) with the same 256 MiB RAM namespace, both "
		      "driven by spdk_nvme_perf on the initiator's CPUs, paired in the same rounds. Ratios are "
		      "nvmfd / SPDK; nvmfd runs --exec bound. Skipped without SPDK (--spdk DIR).",
		      "4k-randread-qd32.spdk", 8, 2, 5, cols, 5, 1, 3);
	add(sub(d, "target"), "backend", jstr("ram"));
	add(sub(d, "target"), "backend_size", jstr("256M"));
	add(sub(d, "perf"), "tool", jstr("spdk_nvme_perf"));
	add(sub(d, "perf"), "queues", jint(1));
	for (i = 0; i < sizeof(wl) / sizeof(wl[0]); i++) {
		char spdk[BENCH_NAME_MAX], nvmfd[BENCH_NAME_MAX];
		struct json_object *c;

		snprintf(spdk, sizeof(spdk), "%s.spdk", wl[i].group);
		snprintf(nvmfd, sizeof(nvmfd), "%s.nvmfd", wl[i].group);
		/* its own baseline: an SPDK cell is compared with nothing */
		c = cell(spdk, wl[i].group, "spdk", spdk);
		add(sub(c, "target"), "kind", jstr("spdk"));
		add(sub(c, "perf"), "pattern", jstr(wl[i].pattern));
		add(sub(c, "perf"), "io_size", jstr(wl[i].size));
		add(sub(c, "perf"), "qd", jint(wl[i].qd));
		json_object_array_add(cells, c);
		c = cell(nvmfd, wl[i].group, "nvmfd", spdk);
		/* the mode of the figures measured since session 21 */
		add(sub(c, "target"), "exec", jstr("bound"));
		add(sub(c, "perf"), "pattern", jstr(wl[i].pattern));
		add(sub(c, "perf"), "io_size", jstr(wl[i].size));
		add(sub(c, "perf"), "qd", jint(wl[i].qd));
		json_object_array_add(cells, c);
	}
	return finish(sc, d, 2, cells);
}

/**
 * bench_builtin_count() - number of built-in scenarios.
 *
 * Return: the count.
 * Context: any.
 */
int bench_builtin_count(void)
{
	return NR_BUILTIN;
}

/**
 * bench_builtin_name() - name of built-in scenario @i.
 * @i: 0..bench_builtin_count()-1.
 *
 * Return: static string, or NULL if @i is out of range.
 * Context: any.
 */
const char *bench_builtin_name(int i)
{
	return i >= 0 && i < NR_BUILTIN ? names[i] : NULL;
}

/**
 * bench_builtin_text() - JSON text of the built-in scenario @name.
 * @name: scenario name (borrowed).
 *
 * Return: pretty-printed JSON in static storage (valid until exit), or
 * NULL if there is no such built-in.
 * Context: main thread (fills a static cache on first use).
 */
const char *bench_builtin_text(const char *name)
{
	struct json_object *(*const gen[NR_BUILTIN])(void) = { seed_a, seed_b,	   seed_c,	 seed_d,
							       seed_e, self_check, spdk_compare };
	int i;

	for (i = 0; i < NR_BUILTIN; i++) {
		struct json_object *o;

		if (strcmp(names[i], name))
			continue;
		if (!texts[i][0]) {
			o = gen[i]();
			snprintf(texts[i], sizeof(texts[i]), "%s\n",
				 json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
									   JSON_C_TO_STRING_SPACED |
									   JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		}
		return texts[i];
	}
	return NULL;
}
