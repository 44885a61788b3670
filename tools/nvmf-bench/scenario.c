// SPDX-License-Identifier: MIT
/*
 * nvmf-bench scenario files: JSON (json-c) -> struct bench_scenario, with
 * every field validated. An error names the field by its path in the file
 * ("cells[2].perf.qd") so a user can find it without reading the code.
 * CPU sets and counts may be written relative to the machine's topology
 * ("target", "half", "first:2", "2*ncpu") so that one scenario scales
 * from this 2-core box to many cores without edits.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "internal/cpulist.h"

#define MAX_CELLS 512

static void ferr(char *err, size_t len, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void ferr(char *err, size_t len, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, len, "%s: ", path);
	if (n < 0 || (size_t)n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
}

static const char *jtype(struct json_object *o)
{
	return json_type_to_name(json_object_get_type(o));
}

/* Reject keys that are not in @known (NULL-terminated). */
static int check_keys(struct json_object *obj, const char *path, const char *const *known, char *err, size_t len)
{
	json_object_object_foreach(obj, key, val)
	{
		int i;
		bool found = false;

		(void)val;
		for (i = 0; known[i]; i++)
			if (!strcmp(known[i], key))
				found = true;
		if (!found) {
			char p[256];

			snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
			ferr(err, len, p, "unknown field");
			return -EINVAL;
		}
	}
	return 0;
}

static void subpath(char *buf, size_t len, const char *path, const char *key)
{
	if (snprintf(buf, len, "%s%s%s", path, *path ? "." : "", key) >= (int)len)
		buf[len - 1] = 0; /* a truncated path still locates the field */
}

static int get_obj(struct json_object *parent, const char *key, const char *path, struct json_object **out,
		   char *err, size_t len)
{
	struct json_object *o;
	char p[256];

	*out = NULL;
	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	if (!json_object_is_type(o, json_type_object)) {
		subpath(p, sizeof(p), path, key);
		ferr(err, len, p, "must be an object (got %s)", jtype(o));
		return -EINVAL;
	}
	*out = o;
	return 1;
}

/* Optional string; 1 if present, 0 if absent. */
static int get_str(struct json_object *parent, const char *key, const char *path, char *dst, size_t dlen,
		   const char *const *allowed, char *err, size_t len)
{
	struct json_object *o;
	const char *s;
	char p[256];
	int i;

	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	subpath(p, sizeof(p), path, key);
	if (!json_object_is_type(o, json_type_string)) {
		ferr(err, len, p, "must be a string (got %s)", jtype(o));
		return -EINVAL;
	}
	s = json_object_get_string(o);
	if (strlen(s) >= dlen) {
		ferr(err, len, p, "longer than %zu characters", dlen - 1);
		return -EINVAL;
	}
	if (allowed) {
		bool ok = false;
		char list[256] = "";

		for (i = 0; allowed[i]; i++) {
			if (!strcmp(allowed[i], s))
				ok = true;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
				 allowed[i]);
		}
		if (!ok) {
			ferr(err, len, p, "\"%s\" is not one of: %s", s, list);
			return -EINVAL;
		}
	}
	snprintf(dst, dlen, "%s", s);
	return 1;
}

static int parse_size_str(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		v *= 1024;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		v *= 1024L * 1024 * 1024;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/**
 * bench_parse_size() - a size string: integer with optional k, M or G.
 * @s: e.g. "256M" (borrowed).
 * @out: bytes.
 *
 * Return: 0, or -EINVAL if malformed or negative.
 * Context: any.
 */
int bench_parse_size(const char *s, long *out)
{
	return parse_size_str(s, out);
}

/* Optional integer in [lo, hi]; @sizes also accepts "4k"-style strings. */
static int get_long(struct json_object *parent, const char *key, const char *path, long *dst, long lo, long hi,
		    bool sizes, char *err, size_t len)
{
	struct json_object *o;
	char p[256];
	long v;

	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	subpath(p, sizeof(p), path, key);
	if (json_object_is_type(o, json_type_int)) {
		v = (long)json_object_get_int64(o);
	} else if (sizes && json_object_is_type(o, json_type_string)) {
		if (parse_size_str(json_object_get_string(o), &v)) {
			ferr(err, len, p, "\"%s\" is not a size (integer with optional k, M or G suffix)",
			     json_object_get_string(o));
			return -EINVAL;
		}
	} else {
		ferr(err, len, p, "must be an integer%s (got %s)", sizes ? " or a size string" : "", jtype(o));
		return -EINVAL;
	}
	if (v < lo || v > hi) {
		ferr(err, len, p, "%ld is out of range %ld..%ld", v, lo, hi);
		return -EINVAL;
	}
	*dst = v;
	return 1;
}

static int get_double(struct json_object *parent, const char *key, const char *path, double *dst, double lo,
		      double hi, char *err, size_t len)
{
	struct json_object *o;
	char p[256];
	double v;

	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	subpath(p, sizeof(p), path, key);
	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double)) {
		ferr(err, len, p, "must be a number (got %s)", jtype(o));
		return -EINVAL;
	}
	v = json_object_get_double(o);
	if (!(v >= lo && v <= hi)) {
		ferr(err, len, p, "%g is out of range %g..%g", v, lo, hi);
		return -EINVAL;
	}
	*dst = v;
	return 1;
}

static int get_bool(struct json_object *parent, const char *key, const char *path, int *dst, char *err,
		    size_t len)
{
	struct json_object *o;
	char p[256];

	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	subpath(p, sizeof(p), path, key);
	if (!json_object_is_type(o, json_type_boolean)) {
		ferr(err, len, p, "must be true or false (got %s)", jtype(o));
		return -EINVAL;
	}
	*dst = json_object_get_boolean(o);
	return 1;
}

static int check_name(const char *s, const char *path, char *err, size_t len)
{
	const char *c;

	if (!*s) {
		ferr(err, len, path, "must not be empty");
		return -EINVAL;
	}
	for (c = s; *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.' && *c != '+') {
			ferr(err, len, path, "\"%s\": only letters, digits and - _ . + are allowed", s);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * bench_cpuset_online() - the online CPUs of this machine.
 * @set: filled (borrowed).
 *
 * Return: 0, or -EIO if /sys/devices/system/cpu/online is unreadable.
 * Context: any.
 */
int bench_cpuset_online(struct bench_cpuset *set)
{
	char buf[4096];
	FILE *f;
	struct bench_cpuset all;
	int i, ret;

	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	/* resolve a plain list against "every CPU" */
	all.nr = BENCH_MAX_CPUS;
	for (i = 0; i < BENCH_MAX_CPUS; i++)
		all.cpu[i] = i;
	ret = bench_cpuset_resolve(buf, &all, set);
	return ret ? -EIO : 0;
}

static int parse_list(const char *spec, const struct bench_cpuset *online, struct bench_cpuset *out)
{
	const char *p = spec;
	bool mark[BENCH_MAX_CPUS] = { false };
	int i;

	while (*p) {
		unsigned long a, b;

		if (nvmfd__cpulist_item(&p, &a, &b))
			return -EINVAL;
		if (a > b || b >= BENCH_MAX_CPUS)
			return -EINVAL;
		for (; a <= b; a++) {
			bool on = false;

			for (i = 0; i < online->nr; i++)
				if (online->cpu[i] >= 0 && (unsigned long)online->cpu[i] == a)
					on = true;
			if (!on)
				return -ENODEV;
			mark[a] = true;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	out->nr = 0;
	for (i = 0; i < BENCH_MAX_CPUS; i++)
		if (mark[i])
			out->cpu[out->nr++] = i;
	return out->nr ? 0 : -EINVAL;
}

/**
 * bench_cpuset_resolve() - turn a CPU set spec into CPUs.
 * @spec: "all", "target", "half" (lower half of the online CPUs, at least
 *        one), "upper-half", "first:N", "last:N" (clamped to the online
 *        count) or a list like "0-3,6"; borrowed.
 * @target: the target's CPUs, used for "target"; borrowed.
 * @out: result (borrowed).
 *
 * Return: 0; -EINVAL on a malformed spec; -ENODEV if a listed CPU is not
 * online.
 * Context: any.
 */
int bench_cpuset_resolve(const char *spec, const struct bench_cpuset *target, struct bench_cpuset *out)
{
	struct bench_cpuset online;
	int i, n, start;
	char *end;

	if (target->nr == BENCH_MAX_CPUS) {
		online = *target; /* called from bench_cpuset_online() itself */
	} else if (bench_cpuset_online(&online)) {
		return -EINVAL;
	}
	if (!strcmp(spec, "all") || !*spec) {
		*out = online;
		return 0;
	}
	if (!strcmp(spec, "target")) {
		*out = *target;
		return 0;
	}
	if (!strcmp(spec, "half") || !strcmp(spec, "upper-half")) {
		n = online.nr / 2;
		if (n < 1)
			n = 1;
		start = !strcmp(spec, "half") ? 0 : online.nr - n;
		out->nr = n;
		for (i = 0; i < n; i++)
			out->cpu[i] = online.cpu[start + i];
		return 0;
	}
	if (!strncmp(spec, "first:", 6) || !strncmp(spec, "last:", 5)) {
		bool first = spec[0] == 'f';
		const char *num = spec + (first ? 6 : 5);

		errno = 0;
		n = (int)strtol(num, &end, 10);
		if (errno || end == num || *end || n < 1)
			return -EINVAL;
		if (n > online.nr)
			n = online.nr;
		start = first ? 0 : online.nr - n;
		out->nr = n;
		for (i = 0; i < n; i++)
			out->cpu[i] = online.cpu[start + i];
		return 0;
	}
	return parse_list(spec, &online, out);
}

/**
 * bench_cpuset_format() - print @set as a CPU list ("0-3,6").
 * @set: borrowed.
 * @buf: output, always NUL-terminated.
 * @len: size of @buf in bytes.
 *
 * Context: any.
 */
void bench_cpuset_format(const struct bench_cpuset *set, char *buf, size_t len)
{
	size_t off = 0;
	int i = 0;

	buf[0] = 0;
	while (i < set->nr && off < len) {
		int a = set->cpu[i], b = a;

		while (i + 1 < set->nr && set->cpu[i + 1] == b + 1)
			b = set->cpu[++i];
		i++;
		if (a == b)
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", a);
		else
			off += snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", a, b);
	}
}

/**
 * bench_count_resolve() - resolve a count spec: "N" or "K*ncpu".
 * @spec: borrowed.
 * @out: the count.
 *
 * Return: 0, or -EINVAL when malformed or not positive.
 * Context: any.
 */
int bench_count_resolve(const char *spec, long *out)
{
	struct bench_cpuset online;
	char *end;
	long k;

	errno = 0;
	k = strtol(spec, &end, 10);
	if (errno || end == spec || k < 1)
		return -EINVAL;
	if (!*end) {
		*out = k;
		return 0;
	}
	if (strcmp(end, "*ncpu"))
		return -EINVAL;
	if (bench_cpuset_online(&online))
		return -EINVAL;
	*out = k * online.nr;
	return 0;
}

static int get_cpus(struct json_object *parent, const char *key, const char *path, char *dst, size_t dlen,
		    char *err, size_t len)
{
	struct bench_cpuset online, out;
	char p[256];
	int ret;

	ret = get_str(parent, key, path, dst, dlen, NULL, err, len);
	if (ret <= 0)
		return ret;
	subpath(p, sizeof(p), path, key);
	if (bench_cpuset_online(&online)) {
		ferr(err, len, p, "cannot read the online CPUs");
		return -EIO;
	}
	ret = bench_cpuset_resolve(dst, &online, &out);
	if (ret == -ENODEV) {
		ferr(err, len, p, "\"%s\" names a CPU that is not online", dst);
		return -EINVAL;
	}
	if (ret) {
		ferr(err, len, p,
		     "\"%s\" is not a CPU set (all, target, half, upper-half, first:N, last:N or a list like 0-3,6)",
		     dst);
		return -EINVAL;
	}
	return 1;
}

static int get_count(struct json_object *parent, const char *key, const char *path, char *dst, size_t dlen,
		     long hi, char *err, size_t len)
{
	struct json_object *o;
	char p[256];
	long v;

	if (!json_object_object_get_ex(parent, key, &o))
		return 0;
	subpath(p, sizeof(p), path, key);
	if (json_object_is_type(o, json_type_int)) {
		snprintf(dst, dlen, "%lld", (long long)json_object_get_int64(o));
	} else if (json_object_is_type(o, json_type_string)) {
		if (strlen(json_object_get_string(o)) >= dlen) {
			ferr(err, len, p, "too long");
			return -EINVAL;
		}
		snprintf(dst, dlen, "%s", json_object_get_string(o));
	} else {
		ferr(err, len, p, "must be an integer or \"K*ncpu\" (got %s)", jtype(o));
		return -EINVAL;
	}
	if (bench_count_resolve(dst, &v)) {
		ferr(err, len, p, "\"%s\" is not a positive integer or \"K*ncpu\"", dst);
		return -EINVAL;
	}
	if (v > hi) {
		ferr(err, len, p, "\"%s\" = %ld on this machine, more than %ld", dst, v, hi);
		return -EINVAL;
	}
	return 1;
}

/*
 * Optional CPU quota (CPUs worth of time): 0 = no limit, else at least
 * BENCH_CPU_QUOTA_MIN and at most the online CPUs.
 */
static int get_cpu_quota(struct json_object *parent, const char *key, const char *path, double *dst, char *err,
			 size_t len)
{
	struct bench_cpuset online;
	char p[256];
	double v;
	int ret;

	ret = get_double(parent, key, path, &v, -HUGE_VAL, HUGE_VAL, err, len);
	if (ret <= 0)
		return ret;
	subpath(p, sizeof(p), path, key);
	if (v < 0) {
		ferr(err, len, p, "%g is negative (CPUs worth of time; 0 = no limit)", v);
		return -EINVAL;
	}
	if (bench_cpuset_online(&online)) {
		ferr(err, len, p, "cannot read the online CPUs");
		return -EIO;
	}
	if (v > online.nr) {
		ferr(err, len, p, "%g is more than the %d online CPUs", v, online.nr);
		return -EINVAL;
	}
	if (v > 0 && v < BENCH_CPU_QUOTA_MIN) {
		ferr(err, len, p, "%g is below %g, the kernel's smallest quota (1 ms per %d ms period); 0 = no limit",
		     v, BENCH_CPU_QUOTA_MIN, BENCH_CPU_PERIOD_US / 1000);
		return -EINVAL;
	}
	*dst = v;
	return 1;
}

static const char *const exec_modes[] = { "bound", "unbound", "auto", NULL };
static const char *const scopes[] = { "cpu", "smt", "cache", "numa", "system", NULL };
static const char *const cq_pools[] = { "per-queue", "shared", NULL };
static const char *const io_cpus[] = { "rr", "least-loaded", "incoming-cpu", NULL };
static const char *const backends[] = { "null", "ram", "file", NULL };
static const char *const patterns[] = { "read", "write", "randread", "randwrite", "rw", "randrw", NULL };
static const char *const digests[] = { "none", "hdr", "data", "hdr,data", NULL };
static const char *const load_kinds[] = { "none", "stress-ng", "hog", NULL };
static const char *const target_kinds[] = { "nvmfd", "spdk", NULL };
static const char *const perf_tools[] = { "nvmf-perf", "spdk_nvme_perf", NULL };
static const char *const twin_kinds[] = { "none", "target", "perf", "both", NULL };

#define TRY(x)                      \
	do {                        \
		if ((x) < 0)        \
			return -EINVAL; \
	} while (0)

/* "extra_args": array of strings, replaces what defaults gave. */
static int parse_extra(struct json_object *o, const char *path, char **extra, int *nr_extra, char *err,
		       size_t len)
{
	struct json_object *a;
	char p[256];
	size_t i, n;

	if (!json_object_object_get_ex(o, "extra_args", &a))
		return 0;
	subpath(p, sizeof(p), path, "extra_args");
	if (!json_object_is_type(a, json_type_array)) {
		ferr(err, len, p, "must be an array of strings (got %s)", jtype(a));
		return -EINVAL;
	}
	n = json_object_array_length(a);
	if (n > 16) {
		ferr(err, len, p, "at most 16 arguments");
		return -EINVAL;
	}
	for (i = 0; i < (size_t)*nr_extra; i++)
		free(extra[i]);
	*nr_extra = 0;
	for (i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(a, i);

		if (!json_object_is_type(s, json_type_string)) {
			char q[300];

			snprintf(q, sizeof(q), "%s[%zu]", p, i);
			ferr(err, len, q, "must be a string (got %s)", jtype(s));
			return -EINVAL;
		}
		extra[*nr_extra] = strdup(json_object_get_string(s));
		if (!extra[*nr_extra])
			return -ENOMEM;
		(*nr_extra)++;
	}
	return 0;
}

static int parse_target(struct json_object *o, const char *path, struct bench_target *t, char *err, size_t len)
{
	static const char *const keys[] = { "kind", "exec", "affinity_scope", "affinity_strict", "max_active",
					    "wq_per_ctrl", "idle_poll_us", "backend_poll", "cq_pool",
					    "rx_budget", "tx_budget", "rx_budget_pdus", "tx_budget_pdus",
					    "io_work_deadline_us", "io_cpu", "cpus", "cpu_quota", "backend",
					    "backend_size", "extra_args", NULL };
	char kind[16] = "";
	long size;
	int ret;

	TRY(check_keys(o, path, keys, err, len));
	ret = get_str(o, "kind", path, kind, sizeof(kind), target_kinds, err, len);
	TRY(ret);
	if (ret > 0)
		t->kind = !strcmp(kind, "spdk") ? BENCH_TARGET_SPDK : BENCH_TARGET_NVMFD;
	TRY(get_str(o, "exec", path, t->exec, sizeof(t->exec), exec_modes, err, len));
	TRY(get_str(o, "affinity_scope", path, t->affinity_scope, sizeof(t->affinity_scope), scopes, err, len));
	TRY(get_bool(o, "affinity_strict", path, &t->affinity_strict, err, len));
	TRY(get_long(o, "max_active", path, &t->max_active, 1, 65536, false, err, len));
	TRY(get_bool(o, "wq_per_ctrl", path, &t->wq_per_ctrl, err, len));
	TRY(get_long(o, "idle_poll_us", path, &t->idle_poll_us, 0, 10000000, false, err, len));
	TRY(get_bool(o, "backend_poll", path, &t->backend_poll, err, len));
	TRY(get_str(o, "cq_pool", path, t->cq_pool, sizeof(t->cq_pool), cq_pools, err, len));
	TRY(get_long(o, "rx_budget", path, &t->rx_budget, 0, 1L << 30, true, err, len));
	TRY(get_long(o, "tx_budget", path, &t->tx_budget, 0, 1L << 30, true, err, len));
	TRY(get_long(o, "rx_budget_pdus", path, &t->rx_budget_pdus, 1, 65536, false, err, len));
	TRY(get_long(o, "tx_budget_pdus", path, &t->tx_budget_pdus, 1, 65536, false, err, len));
	TRY(get_long(o, "io_work_deadline_us", path, &t->io_work_deadline_us, 0, 10000000, false, err, len));
	TRY(get_str(o, "io_cpu", path, t->io_cpu, sizeof(t->io_cpu), io_cpus, err, len));
	TRY(get_cpus(o, "cpus", path, t->cpus, sizeof(t->cpus), err, len));
	TRY(get_cpu_quota(o, "cpu_quota", path, &t->cpu_quota, err, len));
	TRY(get_str(o, "backend", path, t->backend, sizeof(t->backend), backends, err, len));
	if (get_str(o, "backend_size", path, t->backend_size, sizeof(t->backend_size), NULL, err, len) < 0)
		return -EINVAL;
	if (*t->backend_size && (parse_size_str(t->backend_size, &size) || size < 1024 * 1024)) {
		char p[256];

		subpath(p, sizeof(p), path, "backend_size");
		ferr(err, len, p, "\"%s\" is not a size of at least 1M (e.g. 256M, 1G)", t->backend_size);
		return -EINVAL;
	}
	if (parse_extra(o, path, t->extra, &t->nr_extra, err, len))
		return -EINVAL;
	return 0;
}

static int parse_perf(struct json_object *o, const char *path, struct bench_perf *pf, char *err, size_t len)
{
	static const char *const keys[] = { "tool", "pattern", "io_size", "qd", "queues", "read_pct", "digest",
					    "busy_poll", "controllers", "cpus", "timeout_ms", "rate", "one_process",
					    "latency", "extra_args", NULL };
	char p[256], tool[16] = "";
	int ret;

	TRY(check_keys(o, path, keys, err, len));
	ret = get_str(o, "tool", path, tool, sizeof(tool), perf_tools, err, len);
	TRY(ret);
	if (ret > 0)
		pf->tool = !strcmp(tool, "spdk_nvme_perf") ? BENCH_PERF_SPDK : BENCH_PERF_NVMF;
	TRY(get_str(o, "pattern", path, pf->pattern, sizeof(pf->pattern), patterns, err, len));
	TRY(get_long(o, "io_size", path, &pf->io_size, 512, 1L << 24, true, err, len));
	if (pf->io_size % 512) {
		subpath(p, sizeof(p), path, "io_size");
		ferr(err, len, p, "%ld is not a multiple of 512", pf->io_size);
		return -EINVAL;
	}
	TRY(get_long(o, "qd", path, &pf->qd, 1, 1024, false, err, len));
	TRY(get_count(o, "queues", path, pf->queues, sizeof(pf->queues), 256, err, len));
	TRY(get_long(o, "read_pct", path, &pf->read_pct, 0, 100, false, err, len));
	TRY(get_str(o, "digest", path, pf->digest, sizeof(pf->digest), digests, err, len));
	TRY(get_bool(o, "busy_poll", path, &pf->busy_poll, err, len));
	TRY(get_bool(o, "latency", path, &pf->latency, err, len));
	TRY(get_count(o, "controllers", path, pf->controllers, sizeof(pf->controllers), BENCH_MAX_CTRLS, err,
		      len));
	TRY(get_cpus(o, "cpus", path, pf->cpus, sizeof(pf->cpus), err, len));
	TRY(get_long(o, "timeout_ms", path, &pf->timeout_ms, 100, 600000, false, err, len));
	/* open-loop arrivals (nvmf-perf --rate), IOPS per nvmf-perf process */
	TRY(get_long(o, "rate", path, &pf->rate, 0, 100000000, false, err, len));
	/* several controllers as several -r of one nvmf-perf (exact merged percentiles) */
	TRY(get_bool(o, "one_process", path, &pf->one_process, err, len));
	if (parse_extra(o, path, pf->extra, &pf->nr_extra, err, len))
		return -EINVAL;
	return 0;
}

static int parse_load(struct json_object *o, const char *path, struct bench_load *ld, char *err, size_t len)
{
	static const char *const keys[] = { "kind", "cpus", "nice", "load_pct", "buffer_mb", "workers",
					    "session", NULL };
	static const char *const sessions[] = { "bench", "own", NULL };
	char kind[16] = "", session[8] = "";
	int ret;

	TRY(check_keys(o, path, keys, err, len));
	ret = get_str(o, "kind", path, kind, sizeof(kind), load_kinds, err, len);
	TRY(ret);
	if (ret > 0)
		ld->kind = !strcmp(kind, "none") ? BENCH_LOAD_NONE :
			   !strcmp(kind, "hog")	 ? BENCH_LOAD_HOG :
						   BENCH_LOAD_STRESS;
	TRY(get_cpus(o, "cpus", path, ld->cpus, sizeof(ld->cpus), err, len));
	TRY(get_long(o, "nice", path, &ld->nice, -20, 19, false, err, len));
	TRY(get_long(o, "load_pct", path, &ld->load_pct, 1, 100, false, err, len));
	TRY(get_long(o, "buffer_mb", path, &ld->buffer_mb, 0, 65536, false, err, len));
	TRY(get_long(o, "workers", path, &ld->workers, 0, 1024, false, err, len));
	ret = get_str(o, "session", path, session, sizeof(session), sessions, err, len);
	TRY(ret);
	if (ret > 0)
		ld->own_session = !strcmp(session, "own");
	return 0;
}

static void cell_defaults(struct bench_cell *c)
{
	memset(c, 0, sizeof(*c));
	c->quick = true;
	c->duration = 10;
	c->warmup = 1;
	c->repeat = 5;
	c->target.affinity_strict = -1;
	c->target.max_active = -1;
	c->target.wq_per_ctrl = -1;
	c->target.idle_poll_us = -1;
	c->target.backend_poll = -1;
	c->target.rx_budget = -1;
	c->target.tx_budget = -1;
	c->target.rx_budget_pdus = -1;
	c->target.tx_budget_pdus = -1;
	c->target.io_work_deadline_us = -1;
	snprintf(c->target.backend, sizeof(c->target.backend), "null");
	snprintf(c->target.backend_size, sizeof(c->target.backend_size), "1G");
	/*
	 * isolation by default: target on the lower half of the CPUs, the
	 * initiator on the upper half, contention on the target's (2 CPUs:
	 * target 0, initiator 1, load 0)
	 */
	snprintf(c->target.cpus, sizeof(c->target.cpus), "half");
	snprintf(c->perf.cpus, sizeof(c->perf.cpus), "upper-half");
	snprintf(c->perf.pattern, sizeof(c->perf.pattern), "randread");
	c->perf.io_size = 4096;
	c->perf.qd = 32;
	snprintf(c->perf.queues, sizeof(c->perf.queues), "1");
	c->perf.read_pct = 50;
	c->perf.busy_poll = 0;
	c->perf.latency = 1;
	snprintf(c->perf.controllers, sizeof(c->perf.controllers), "1");
	c->perf.timeout_ms = 10000;
	c->load.kind = BENCH_LOAD_NONE;
	snprintf(c->load.cpus, sizeof(c->load.cpus), "target");
	c->load.nice = 0;
	c->load.load_pct = 100;
	c->load.buffer_mb = 64;
	c->load.workers = 0;
}

static int copy_cell(struct bench_cell *dst, const struct bench_cell *src)
{
	int i;

	*dst = *src;
	dst->perf.nr_extra = 0;
	for (i = 0; i < src->target.nr_extra; i++) {
		dst->target.extra[i] = strdup(src->target.extra[i]);
		if (!dst->target.extra[i]) {
			dst->target.nr_extra = i;
			return -ENOMEM;
		}
	}
	for (i = 0; i < src->perf.nr_extra; i++) {
		dst->perf.extra[i] = strdup(src->perf.extra[i]);
		if (!dst->perf.extra[i])
			return -ENOMEM;
		dst->perf.nr_extra = i + 1;
	}
	return 0;
}

static void free_cell(struct bench_cell *c)
{
	int i;

	for (i = 0; i < c->target.nr_extra; i++)
		free(c->target.extra[i]);
	c->target.nr_extra = 0;
	for (i = 0; i < c->perf.nr_extra; i++)
		free(c->perf.extra[i]);
	c->perf.nr_extra = 0;
}

/* The parts a cell and "defaults" share: run lengths and the 3 sections. */
static int parse_cell_common(struct json_object *o, const char *path, struct bench_cell *c, char *err,
			     size_t len)
{
	struct json_object *sub;
	char p[256];
	long rep;
	int ret;

	TRY(get_double(o, "duration", path, &c->duration, 1, 86400, err, len));
	TRY(get_double(o, "warmup", path, &c->warmup, 0, 3600, err, len));
	rep = c->repeat;
	TRY(get_long(o, "repeat", path, &rep, 1, BENCH_MAX_REPEAT, false, err, len));
	c->repeat = (int)rep;
	ret = get_obj(o, "target", path, &sub, err, len);
	TRY(ret);
	subpath(p, sizeof(p), path, "target");
	if (ret > 0)
		TRY(parse_target(sub, p, &c->target, err, len));
	ret = get_obj(o, "perf", path, &sub, err, len);
	TRY(ret);
	subpath(p, sizeof(p), path, "perf");
	if (ret > 0)
		TRY(parse_perf(sub, p, &c->perf, err, len));
	ret = get_obj(o, "contention", path, &sub, err, len);
	TRY(ret);
	subpath(p, sizeof(p), path, "contention");
	if (ret > 0)
		TRY(parse_load(sub, p, &c->load, err, len));
	return 0;
}

/*
 * The nvmfd options of struct bench_target that SPDK's nvmf_tgt does not
 * have: the first one set in @t, or NULL.
 */
static const char *nvmfd_only_target(const struct bench_target *t)
{
	if (*t->exec)
		return "exec";
	if (*t->affinity_scope)
		return "affinity_scope";
	if (t->affinity_strict >= 0)
		return "affinity_strict";
	if (t->max_active >= 0)
		return "max_active";
	if (t->wq_per_ctrl >= 0)
		return "wq_per_ctrl";
	if (t->idle_poll_us >= 0)
		return "idle_poll_us";
	if (t->backend_poll >= 0)
		return "backend_poll";
	if (*t->cq_pool)
		return "cq_pool";
	if (t->rx_budget >= 0)
		return "rx_budget";
	if (t->tx_budget >= 0)
		return "tx_budget";
	if (t->rx_budget_pdus >= 0)
		return "rx_budget_pdus";
	if (t->tx_budget_pdus >= 0)
		return "tx_budget_pdus";
	if (t->io_work_deadline_us >= 0)
		return "io_work_deadline_us";
	if (*t->io_cpu)
		return "io_cpu";
	return NULL;
}

/* The nvmf-perf options spdk_nvme_perf does not have: the first set, or NULL. */
static const char *nvmf_only_perf(const struct bench_perf *p)
{
	if (p->rate > 0)
		return "rate";
	if (p->busy_poll > 0)
		return "busy_poll";
	return NULL;
}

/*
 * A cell served by SPDK or driven by spdk_nvme_perf may use only what
 * those programs have (their namespaces: a malloc or null bdev).
 * Return: 0, or -EINVAL with the field named in @err.
 */
static int check_spdk_cell(const struct bench_cell *c, const char *path, char *err, size_t len)
{
	const char *f;
	char p[256];

	if (c->target.kind == BENCH_TARGET_SPDK) {
		f = nvmfd_only_target(&c->target);
		if (f) {
			snprintf(p, sizeof(p), "%s.target.%s", path, f);
			ferr(err, len, p, "an nvmfd option; SPDK's nvmf_tgt (target.kind \"spdk\") has no such setting");
			return -EINVAL;
		}
		if (!strcmp(c->target.backend, "file")) {
			snprintf(p, sizeof(p), "%s.target.backend", path);
			ferr(err, len, p, "\"file\" is not available with target.kind \"spdk\" (null or ram)");
			return -EINVAL;
		}
	}
	if (c->perf.tool == BENCH_PERF_SPDK) {
		f = nvmf_only_perf(&c->perf);
		if (f) {
			snprintf(p, sizeof(p), "%s.perf.%s", path, f);
			ferr(err, len, p, "an nvmf-perf option; spdk_nvme_perf (perf.tool \"spdk_nvme_perf\") has none");
			return -EINVAL;
		}
		for (int i = 0; !c->perf.latency && i < c->perf.nr_extra; i++) {
			if (!strcmp(c->perf.extra[i], "-L") || !strcmp(c->perf.extra[i], "-LL")) {
				snprintf(p, sizeof(p), "%s.perf.extra_args[%d]", path, i);
				ferr(err, len, p,
				     "\"%s\" with perf.latency false (in the cell or its defaults): "
				     "leave one of them out",
				     c->perf.extra[i]);
				return -EINVAL;
			}
		}
	} else if (!c->perf.latency) {
		snprintf(p, sizeof(p), "%s.perf.latency", path);
		ferr(err, len, p,
		     "false (in the cell or its defaults) only with perf.tool \"spdk_nvme_perf\" "
		     "(nvmf-perf always measures latency)");
		return -EINVAL;
	}
	return 0;
}

/* Forget the nvmfd-only settings of @t (a twin served by SPDK). */
static void clear_nvmfd_target(struct bench_target *t)
{
	t->exec[0] = t->affinity_scope[0] = t->cq_pool[0] = t->io_cpu[0] = 0;
	t->affinity_strict = t->wq_per_ctrl = t->backend_poll = -1;
	t->max_active = t->idle_poll_us = t->rx_budget = t->tx_budget = -1;
	t->rx_budget_pdus = t->tx_budget_pdus = t->io_work_deadline_us = -1;
}

/*
 * The scenario's "spdk": {"twins": ...} option: after every cell of the
 * file, a twin with the same perf and contention settings served by SPDK's
 * nvmf_tgt ("<cell>.spdk"; nvmfd's own settings dropped) and/or driven by
 * spdk_nvme_perf ("<cell>.spdk-perf"). Its baseline is the cell it copies,
 * so its ratio is SPDK / nvmfd (or spdk_nvme_perf / nvmf-perf) in the same
 * rounds. A cell whose settings SPDK cannot run (file namespace, open
 * loop, busy poll, extra nvmf-perf arguments) gets its twin marked skipped
 * with the reason. @cap: room in sc->cells.
 */
static int make_twins(struct bench_scenario *sc, size_t cap, char *err, size_t len)
{
	int n = sc->nr_cells, i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			const struct bench_cell *o = &sc->cells[i];
			const char *suffix = k ? ".spdk-perf" : ".spdk";
			struct bench_cell *t;
			int j;

			if ((k == 0 && !sc->spdk_twin_target) || (k == 1 && !sc->spdk_twin_perf))
				continue;
			if (o->target.kind == BENCH_TARGET_SPDK || o->perf.tool == BENCH_PERF_SPDK)
				continue; /* written for SPDK already */
			if ((size_t)sc->nr_cells >= cap) {
				snprintf(err, len, "spdk.twins: too many cells");
				return -EINVAL;
			}
			if (strlen(o->name) + strlen(suffix) >= BENCH_NAME_MAX) {
				ferr(err, len, "spdk.twins", "cell name \"%s\" is too long for a twin (\"%s%s\")",
				     o->name, o->name, suffix);
				return -EINVAL;
			}
			t = &sc->cells[sc->nr_cells];
			if (copy_cell(t, o))
				return -ENOMEM;
			sc->nr_cells++;
			snprintf(t->name, sizeof(t->name), "%s%s", o->name, suffix);
			for (j = 0; j < sc->nr_cells - 1; j++) {
				if (!strcmp(sc->cells[j].name, t->name)) {
					ferr(err, len, "spdk.twins", "twin \"%s\" has the name of cells[%d]", t->name, j);
					return -EINVAL;
				}
			}
			snprintf(t->series, sizeof(t->series), "%.*s%s", (int)(BENCH_NAME_MAX - 1 - strlen(suffix)),
				 *o->series ? o->series : o->name, k ? "-spdk-perf" : "-spdk");
			snprintf(t->baseline, sizeof(t->baseline), "%s", o->name);
			t->twin_of = i;
			if (k == 0) {
				t->target.kind = BENCH_TARGET_SPDK;
				clear_nvmfd_target(&t->target);
				for (j = 0; j < t->target.nr_extra; j++)
					free(t->target.extra[j]);
				t->target.nr_extra = 0;
				if (!strcmp(t->target.backend, "file"))
					snprintf(t->skip, sizeof(t->skip), "no SPDK twin of a file namespace");
			} else {
				t->perf.tool = BENCH_PERF_SPDK;
				if (nvmf_only_perf(&t->perf))
					snprintf(t->skip, sizeof(t->skip), "no spdk_nvme_perf twin: perf.%s",
						 nvmf_only_perf(&t->perf));
				else if (t->perf.nr_extra)
					snprintf(t->skip, sizeof(t->skip),
						 "no spdk_nvme_perf twin: perf.extra_args are nvmf-perf's");
			}
		}
	}
	return 0;
}

/**
 * bench_cell_needs_spdk() - does @c run one of SPDK's programs?
 * @c: borrowed.
 *
 * Return: true for target.kind "spdk" or perf.tool "spdk_nvme_perf".
 * Context: any.
 */
bool bench_cell_needs_spdk(const struct bench_cell *c)
{
	return c->target.kind == BENCH_TARGET_SPDK || c->perf.tool == BENCH_PERF_SPDK;
}

/**
 * bench_scenario_parse() - validate a scenario JSON tree into @sc.
 * @root: the parsed file (borrowed).
 * @source: where it came from, for messages (borrowed).
 * @sc: output; on success owns allocations (bench_scenario_free()).
 * @err: message naming the field path on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -EINVAL on an invalid field (message in @err); -ENOMEM.
 * Context: any.
 */
int bench_scenario_parse(struct json_object *root, const char *source, struct bench_scenario *sc, char *err,
			 size_t errlen)
{
	static const char *const top_keys[] = { "name",	 "description", "baseline", "duration",
						"warmup", "repeat",	 "columns",  "pivot",
						"quick", "defaults", "cells",	 "spdk",
						NULL };
	static const char *const spdk_keys[] = { "twins", NULL };
	static const char *const cell_keys[] = { "name", "group", "series", "baseline", "quick", "duration",
						 "warmup", "repeat", "target", "perf", "contention", NULL };
	static const char *const quick_keys[] = { "duration", "warmup", "repeat", NULL };
	static const char *const def_keys[] = { "target", "perf", "contention", NULL };
	struct json_object *cells, *cols, *q, *defs, *spdk;
	char twins[16] = "none";
	struct bench_cell def;
	char desc[2048] = "";
	size_t i, j, n;
	long rep;
	int ret;

	memset(sc, 0, sizeof(*sc));
	sc->quick_warmup = -1;
	snprintf(sc->source, sizeof(sc->source), "%s", source);
	cell_defaults(&def);
	if (!json_object_is_type(root, json_type_object)) {
		ferr(err, errlen, "(top level)", "must be an object (got %s)", jtype(root));
		return -EINVAL;
	}
	if (check_keys(root, "", top_keys, err, errlen))
		goto err_def;
	ret = get_str(root, "name", "", sc->name, sizeof(sc->name), NULL, err, errlen);
	if (ret < 0)
		goto err_def;
	if (ret == 0) {
		ferr(err, errlen, "name", "missing (a scenario needs a name)");
		goto err_def;
	}
	if (check_name(sc->name, "name", err, errlen))
		goto err_def;
	if (get_str(root, "description", "", desc, sizeof(desc), NULL, err, errlen) < 0)
		goto err_def;
	sc->description = strdup(desc);
	if (!sc->description)
		goto err_nomem;
	if (get_str(root, "baseline", "", sc->baseline, sizeof(sc->baseline), NULL, err, errlen) < 0)
		goto err_def;
	/* run lengths at the top level are defaults for every cell */
	if (get_double(root, "duration", "", &def.duration, 1, 86400, err, errlen) < 0 ||
	    get_double(root, "warmup", "", &def.warmup, 0, 3600, err, errlen) < 0)
		goto err_def;
	rep = def.repeat;
	if (get_long(root, "repeat", "", &rep, 1, BENCH_MAX_REPEAT, false, err, errlen) < 0)
		goto err_def;
	def.repeat = (int)rep;
	rep = 1;
	if (get_long(root, "pivot", "", &rep, 0, BM_NR, false, err, errlen) < 0)
		goto err_def;
	sc->pivot = (int)rep;
	ret = get_obj(root, "quick", "", &q, err, errlen);
	if (ret < 0)
		goto err_def;
	if (ret > 0) {
		rep = 0;
		if (check_keys(q, "quick", quick_keys, err, errlen) ||
		    get_double(q, "duration", "quick", &sc->quick_duration, 1, 86400, err, errlen) < 0 ||
		    get_double(q, "warmup", "quick", &sc->quick_warmup, 0, 3600, err, errlen) < 0 ||
		    get_long(q, "repeat", "quick", &rep, 1, BENCH_MAX_REPEAT, false, err, errlen) < 0)
			goto err_def;
		sc->quick_repeat = (int)rep;
	}
	ret = get_obj(root, "spdk", "", &spdk, err, errlen);
	if (ret < 0)
		goto err_def;
	if (ret > 0 && (check_keys(spdk, "spdk", spdk_keys, err, errlen) ||
			get_str(spdk, "twins", "spdk", twins, sizeof(twins), twin_kinds, err, errlen) < 0))
		goto err_def;
	sc->spdk_twin_target = !strcmp(twins, "target") || !strcmp(twins, "both");
	sc->spdk_twin_perf = !strcmp(twins, "perf") || !strcmp(twins, "both");
	ret = get_obj(root, "defaults", "", &defs, err, errlen);
	if (ret < 0)
		goto err_def;
	if (ret > 0 && (check_keys(defs, "defaults", def_keys, err, errlen) ||
			parse_cell_common(defs, "defaults", &def, err, errlen)))
		goto err_def;
	if (json_object_object_get_ex(root, "columns", &cols)) {
		if (!json_object_is_type(cols, json_type_array) || json_object_array_length(cols) == 0) {
			ferr(err, errlen, "columns", "must be a non-empty array of metric names");
			goto err_def;
		}
		n = json_object_array_length(cols);
		if (n > BM_NR) {
			ferr(err, errlen, "columns", "at most %d columns", BM_NR);
			goto err_def;
		}
		for (i = 0; i < n; i++) {
			struct json_object *s = json_object_array_get_idx(cols, i);
			char p[64];
			int m;

			snprintf(p, sizeof(p), "columns[%zu]", i);
			if (!json_object_is_type(s, json_type_string)) {
				ferr(err, errlen, p, "must be a string (got %s)", jtype(s));
				goto err_def;
			}
			m = bench_metric_lookup(json_object_get_string(s));
			if (m < 0) {
				char list[512] = "";
				int k;

				for (k = 0; k < BM_NR; k++)
					snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
						 k ? ", " : "", bench_metrics[k].key);
				ferr(err, errlen, p, "unknown metric \"%s\" (known: %s)", json_object_get_string(s),
				     list);
				goto err_def;
			}
			sc->columns[sc->nr_columns++] = m;
		}
	} else {
		sc->columns[sc->nr_columns++] = BM_IOPS;
		sc->columns[sc->nr_columns++] = BM_MIBS;
		sc->columns[sc->nr_columns++] = BM_LAT_AVG;
		sc->columns[sc->nr_columns++] = BM_P99;
		sc->columns[sc->nr_columns++] = BM_TGT_CPU;
	}
	if (sc->pivot > sc->nr_columns) {
		ferr(err, errlen, "pivot", "%d is more than the %d columns", sc->pivot, sc->nr_columns);
		goto err_def;
	}
	if (!json_object_object_get_ex(root, "cells", &cells)) {
		ferr(err, errlen, "cells", "missing (a scenario needs at least one cell)");
		goto err_def;
	}
	if (!json_object_is_type(cells, json_type_array) || json_object_array_length(cells) == 0) {
		ferr(err, errlen, "cells", "must be a non-empty array of objects");
		goto err_def;
	}
	n = json_object_array_length(cells);
	if (n > MAX_CELLS) {
		ferr(err, errlen, "cells", "at most %d cells", MAX_CELLS);
		goto err_def;
	}
	/* room for the SPDK twins of every cell */
	sc->cells = calloc(3 * n, sizeof(*sc->cells));
	if (!sc->cells)
		goto err_nomem;
	for (i = 0; i < n; i++) {
		struct json_object *co = json_object_array_get_idx(cells, i);
		struct bench_cell *c = &sc->cells[i];
		char path[64], p[96];
		int quick = 1;

		snprintf(path, sizeof(path), "cells[%zu]", i);
		if (!json_object_is_type(co, json_type_object)) {
			ferr(err, errlen, path, "must be an object (got %s)", jtype(co));
			goto err_cells;
		}
		if (copy_cell(c, &def))
			goto err_nomem_cells;
		sc->nr_cells++;
		if (check_keys(co, path, cell_keys, err, errlen))
			goto err_cells;
		ret = get_str(co, "name", path, c->name, sizeof(c->name), NULL, err, errlen);
		if (ret < 0)
			goto err_cells;
		snprintf(p, sizeof(p), "%s.name", path);
		if (ret == 0) {
			ferr(err, errlen, p, "missing (every cell needs a name)");
			goto err_cells;
		}
		if (check_name(c->name, p, err, errlen))
			goto err_cells;
		for (j = 0; j < i; j++) {
			if (!strcmp(sc->cells[j].name, c->name)) {
				ferr(err, errlen, p, "\"%s\" is already the name of cells[%zu]", c->name, j);
				goto err_cells;
			}
		}
		if (get_str(co, "group", path, c->group, sizeof(c->group), NULL, err, errlen) < 0 ||
		    get_str(co, "series", path, c->series, sizeof(c->series), NULL, err, errlen) < 0 ||
		    get_str(co, "baseline", path, c->baseline, sizeof(c->baseline), NULL, err, errlen) < 0 ||
		    get_bool(co, "quick", path, &quick, err, errlen) < 0)
			goto err_cells;
		c->quick = quick;
		c->twin_of = -1;
		if (parse_cell_common(co, path, c, err, errlen) || check_spdk_cell(c, path, err, errlen))
			goto err_cells;
	}
	if (make_twins(sc, 3 * n, err, errlen))
		goto err_cells;
	n = sc->nr_cells;
	/* baselines must name cells */
	if (!*sc->baseline)
		snprintf(sc->baseline, sizeof(sc->baseline), "%s", sc->cells[0].name);
	for (i = 0; i <= n; i++) {
		const char *b = i < n ? sc->cells[i].baseline : sc->baseline;
		char p[64];
		bool found = false;

		if (!*b)
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(sc->cells[j].name, b))
				found = true;
		if (!found) {
			if (i < n)
				snprintf(p, sizeof(p), "cells[%zu].baseline", i);
			else
				snprintf(p, sizeof(p), "baseline");
			ferr(err, errlen, p, "\"%s\" is not the name of a cell", b);
			goto err_cells;
		}
	}
	free_cell(&def);
	return 0;

err_nomem_cells:
	snprintf(err, errlen, "out of memory");
err_cells:
	free_cell(&def);
	bench_scenario_free(sc);
	return -EINVAL;
err_nomem:
	snprintf(err, errlen, "out of memory");
err_def:
	free_cell(&def);
	bench_scenario_free(sc);
	return -EINVAL;
}

/**
 * bench_scenario_load() - read and validate a scenario file.
 * @path: JSON file (borrowed).
 * @sc: output, see bench_scenario_parse().
 * @err: message ("FILE: field.path: what is wrong") on failure.
 * @errlen: size of @err.
 *
 * Return: 0; -ENOENT/-EACCES/... if unreadable; -EINVAL if malformed
 * JSON or an invalid field.
 * Context: any.
 */
int bench_scenario_load(const char *path, struct bench_scenario *sc, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *root;
	struct stat st;
	char msg[512];
	char *text;
	long sz;
	FILE *f;
	int ret;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* fopen() opens a directory; its "size" is not a scenario's */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, errlen, "%s: %s (a scenario is a JSON file)", path, strerror(EISDIR));
		return -EISDIR;
	}
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, errlen, "%s: cannot read", path);
		return -EIO;
	}
	if (sz > (16 << 20)) {
		fclose(f);
		snprintf(err, errlen, "%s: larger than 16 MiB", path);
		return -EINVAL;
	}
	text = malloc(sz + 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(text, 1, sz, f) != (size_t)sz) {
		free(text);
		fclose(f);
		snprintf(err, errlen, "%s: short read", path);
		return -EIO;
	}
	fclose(f);
	text[sz] = 0;
	tok = json_tokener_new();
	if (!tok) {
		free(text);
		return -ENOMEM;
	}
	root = json_tokener_parse_ex(tok, text, (int)sz + 1);
	if (!root) {
		snprintf(err, errlen, "%s: not valid JSON near byte %zu: %s", path, json_tokener_get_parse_end(tok),
			 json_tokener_error_desc(json_tokener_get_error(tok)));
		json_tokener_free(tok);
		free(text);
		return -EINVAL;
	}
	json_tokener_free(tok);
	free(text);
	ret = bench_scenario_parse(root, path, sc, msg, sizeof(msg));
	json_object_put(root);
	if (ret)
		snprintf(err, errlen, "%s: %s", path, msg);
	return ret;
}

/**
 * bench_scenario_apply() - apply command-line overrides and --quick.
 * @sc: scenario (borrowed); cells dropped by --quick or the filter get
 *      repeat 0 and are skipped by the runner.
 * @ov: overrides (borrowed).
 *
 * Context: any.
 */
void bench_scenario_apply(struct bench_scenario *sc, const struct bench_overrides *ov)
{
	int i;

	for (i = 0; i < sc->nr_cells; i++) {
		struct bench_cell *c = &sc->cells[i];

		if (*c->skip) {
			c->repeat = 0;
			continue;
		}
		if (ov->quick) {
			if (!c->quick) {
				c->repeat = 0;
				continue;
			}
			c->duration = sc->quick_duration > 0 ? sc->quick_duration :
				      c->duration < 3	     ? c->duration :
							       3;
			c->warmup = sc->quick_warmup >= 0 ? sc->quick_warmup : c->warmup < 1 ? c->warmup : 1;
			c->repeat = sc->quick_repeat > 0 ? sc->quick_repeat : 5;
		}
		if (ov->duration > 0)
			c->duration = ov->duration;
		if (ov->warmup >= 0)
			c->warmup = ov->warmup;
		if (ov->repeat > 0)
			c->repeat = ov->repeat;
		if (ov->cell_filter && fnmatch(ov->cell_filter, c->name, 0))
			c->repeat = 0;
	}
}

/**
 * bench_scenario_free() - release what @sc owns; @sc may then be reused.
 * @sc: borrowed; safe on a zeroed struct.
 *
 * Context: any.
 */
void bench_scenario_free(struct bench_scenario *sc)
{
	int i;

	for (i = 0; i < sc->nr_cells; i++)
		free_cell(&sc->cells[i]);
	free(sc->cells);
	free(sc->description);
	sc->cells = NULL;
	sc->description = NULL;
	sc->nr_cells = 0;
}
