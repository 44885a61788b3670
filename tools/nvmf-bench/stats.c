// SPDX-License-Identifier: MIT
/*
 * nvmf-bench statistics; see stats.h for the method. The run order of the
 * cells and the bootstrap resampling both draw from the splitmix64
 * generator below, so a printed seed reproduces both.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "stats.h"

void bench_rng_seed(struct bench_rng *r, uint64_t seed)
{
	r->s = seed;
}

/* splitmix64 (Steele, Lea, Flood 2014): full period, passes BigCrush */
uint64_t bench_rng_next(struct bench_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t bench_rng_below(struct bench_rng *r, uint32_t n)
{
	uint64_t lim, x;

	if (n <= 1)
		return 0;
	/* reject the top partial block of the 64-bit range */
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = bench_rng_next(r);
	while (x >= lim);
	return (uint32_t)(x % n);
}

void bench_shuffle(struct bench_rng *r, int *a, int n)
{
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = (int)bench_rng_below(r, (uint32_t)i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double bench_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_t975(int df)
{
	static const double t[31] = { 0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				      2.306,  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				      2.120,  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				      2.064,  2.060,  2.056, 2.052, 2.048, 2.045, 2.042 };
	const double z = 1.959964;
	double v;

	if (df < 1)
		return 0;
	if (df <= 30)
		return t[df];
	/* Cornish-Fisher expansion of t around the normal quantile */
	v = df;
	return z + (z * z * z + z) / (4 * v) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

static double norm_cdf(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

int bench_paired_ratio_ci(const double *a, const double *b, int n, uint64_t seed, struct bench_ci *out)
{
	double *boot, d[BENCH_MAX_PAIRS], sum = 0, half_alpha, ql, qh;
	struct bench_rng r;
	int m = 0, i, k, il, ih;

	if (!a || !b || !out || n < 0 || n > BENCH_MAX_PAIRS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!(a[i] > 0) || !(b[i] > 0) || !isfinite(a[i]) || !isfinite(b[i]))
			continue;
		d[m++] = log(a[i] / b[i]);
	}
	out->n = m;
	out->valid = m >= 2;
	out->est = out->lo = out->hi = 0;
	if (!m)
		return 0;
	for (i = 0; i < m; i++)
		sum += d[i];
	out->est = exp(sum / m);
	out->lo = out->hi = out->est;
	if (m < 2)
		return 0;
	boot = malloc(BENCH_BOOT_ITERS * sizeof(*boot));
	if (!boot)
		return -ENOMEM;
	bench_rng_seed(&r, seed);
	for (k = 0; k < BENCH_BOOT_ITERS; k++) {
		double s = 0;

		for (i = 0; i < m; i++)
			s += d[bench_rng_below(&r, (uint32_t)m)];
		boot[k] = s / m;
	}
	qsort(boot, BENCH_BOOT_ITERS, sizeof(boot[0]), cmp_double);
	half_alpha = norm_cdf(-sqrt((double)m / (m - 1)) * bench_t975(m - 1));
	ql = half_alpha * (BENCH_BOOT_ITERS - 1);
	qh = (1 - half_alpha) * (BENCH_BOOT_ITERS - 1);
	il = (int)floor(ql);
	ih = (int)ceil(qh);
	if (il < 0)
		il = 0;
	if (ih > BENCH_BOOT_ITERS - 1)
		ih = BENCH_BOOT_ITERS - 1;
	out->lo = exp(boot[il]);
	out->hi = exp(boot[ih]);
	free(boot);
	return 0;
}

bool bench_ci_differs(const struct bench_ci *ci)
{
	return ci->valid && (ci->lo > 1.0 || ci->hi < 1.0);
}
