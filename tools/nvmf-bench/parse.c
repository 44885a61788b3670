// SPDX-License-Identifier: MIT
/*
 * nvmf-bench: parsers of other programs' text output - spdk_nvme_perf's
 * report (its "Total" line and -L latency summary) and the syscall count
 * of perf stat -x, / strace -c. Kept apart from run.c so that the tests
 * can feed them recorded output.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/**
 * bench_parse_spdk_perf() - metrics from spdk_nvme_perf's text report.
 * @text: its stdout (borrowed).
 * @v: out: BM_IOPS, BM_MIBS, BM_LAT_AVG/MIN/MAX from the "Total" line;
 *     p50/p90/p99/p99.9/p99.99 from the "Summary latency data" blocks
 *     (-L), IOPS-weighted over the blocks when there are several.
 * @have: out: which of @v were found.
 *
 * Return: 0, or -EINVAL if there is no "Total" line.
 * Context: any.
 */
int bench_parse_spdk_perf(const char *text, double *v, bool *have)
{
	static const struct {
		double pct;
		int m;
	} cut[] = { { 50, BM_P50 }, { 90, BM_P90 }, { 99, BM_P99 }, { 99.9, BM_P999 }, { 99.99, BM_P9999 } };
	const char *line = text;
	double dev_iops[BENCH_MAX_CTRLS * 4];
	int ndev = 0, block = -1, k;
	double wsum = 0;
	bool total = false;

	for (k = 0; k < BM_NR; k++) {
		v[k] = 0;
		have[k] = false;
	}
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *colon;
		char buf[1024];
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		double a, b, c, d, e, pct, us;

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, line, n);
		buf[n] = 0;
		line = nl ? nl + 1 : NULL;
		colon = strrchr(buf, ':');
		if (!strncmp(buf, "Total ", 6) && colon &&
		    sscanf(colon + 1, "%lf %lf %lf %lf %lf", &a, &b, &c, &d, &e) == 5) {
			v[BM_IOPS] = a;
			v[BM_MIBS] = b;
			v[BM_LAT_AVG] = c;
			v[BM_LAT_MIN] = d;
			v[BM_LAT_MAX] = e;
			have[BM_IOPS] = have[BM_MIBS] = have[BM_LAT_AVG] = have[BM_LAT_MIN] = have[BM_LAT_MAX] = true;
			total = true;
		} else if (strstr(buf, " from core ") && colon && strncmp(buf, "Summary", 7) &&
			   sscanf(colon + 1, "%lf %lf %lf %lf %lf", &a, &b, &c, &d, &e) == 5) {
			if (ndev < (int)(sizeof(dev_iops) / sizeof(dev_iops[0])))
				dev_iops[ndev++] = a; /* device line, in the order of the blocks */
		} else if (!strncmp(buf, "Summary latency data", 20)) {
			block++;
			wsum += block < ndev ? dev_iops[block] : 1;
		} else if (block >= 0 && sscanf(buf, " %lf%% : %lfus", &pct, &us) == 2) {
			double w = block < ndev ? dev_iops[block] : 1;

			for (k = 0; k < (int)(sizeof(cut) / sizeof(cut[0])); k++) {
				if (pct > cut[k].pct - 1e-6 && pct < cut[k].pct + 1e-6) {
					v[cut[k].m] += us * w;
					have[cut[k].m] = true;
				}
			}
		}
	}
	for (k = 0; k < (int)(sizeof(cut) / sizeof(cut[0])); k++)
		if (have[cut[k].m] && wsum > 0)
			v[cut[k].m] /= wsum;
	return total ? 0 : -EINVAL;
}

/**
 * bench_parse_syscall_count() - total syscalls from a counter's output.
 * @text: perf stat -x, output (the raw_syscalls:sys_enter line's first
 *        field) or strace -c's summary (the calls column of "total").
 * @count: out.
 *
 * Return: 0, or -EINVAL if no count is in @text (e.g. "<not counted>").
 * Context: any.
 */
int bench_parse_syscall_count(const char *text, double *count)
{
	const char *l = text;

	while (l && *l) {
		const char *nl = strchr(l, '\n');
		char buf[512];
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		double a, b, c, calls;
		char *end;

		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, l, n);
		buf[n] = 0;
		l = nl ? nl + 1 : NULL;
		if (strstr(buf, "raw_syscalls:sys_enter")) {
			double x = strtod(buf, &end);

			if (end != buf && *end == ',') {
				*count = x;
				return 0;
			}
		}
		/* strace -c: "100.00    0.001234           1      1234        12 total" */
		n = strlen(buf);
		if (n > 6 && !strcmp(buf + n - 6, " total") &&
		    (sscanf(buf, "%lf %lf %lf %lf", &a, &b, &c, &calls) == 4)) {
			*count = calls;
			return 0;
		}
	}
	return -EINVAL;
}
