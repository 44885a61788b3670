/* SPDX-License-Identifier: MIT */
/*
 * nvmf-bench statistics: a seeded PRNG, shuffles for the run order,
 * medians, and the paired bootstrap confidence interval of a ratio.
 * Pure functions, no I/O, no global state: the unit tests drive them with
 * synthetic data (tests/func/bench/test_bench_stats.c).
 */
#ifndef NVMF_BENCH_STATS_H
#define NVMF_BENCH_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* Bootstrap resamples per interval (fixed so that a seed fixes the result). */
#define BENCH_BOOT_ITERS 10000

/**
 * struct bench_rng - splitmix64 generator state; any seed (0 too) is fine.
 * @s: state, advanced by every draw.
 */
struct bench_rng {
	uint64_t s;
};

/** bench_rng_seed() - start @r at @seed. Context: any. */
void bench_rng_seed(struct bench_rng *r, uint64_t seed);

/** bench_rng_next() - next 64 random bits. Context: owner of @r. */
uint64_t bench_rng_next(struct bench_rng *r);

/**
 * bench_rng_below() - uniform integer in 0..@n-1 (no modulo bias).
 * @r: generator.
 * @n: bound, >= 1.
 * Return: the integer (0 if @n is 0).
 */
uint32_t bench_rng_below(struct bench_rng *r, uint32_t n);

/**
 * bench_shuffle() - Fisher-Yates shuffle of @a[0..@n-1] in place.
 * @r: generator (the same seed gives the same permutation).
 * @a: array of @n ints.
 * @n: entries.
 */
void bench_shuffle(struct bench_rng *r, int *a, int n);

/**
 * bench_median() - median of @v[0..@n-1]; the middle two averaged for
 * even @n. @v is sorted in place. Return: the median, 0 if @n is 0.
 */
double bench_median(double *v, int n);

/**
 * struct bench_ci - a ratio with its confidence interval.
 * @n:     pairs used (pairs with a non-positive or non-finite value are
 *         left out: a ratio of them means nothing).
 * @est:   geometric mean of the per-pair ratios a[i] / b[i].
 * @lo:    lower bound of the interval (valid if @n >= 2).
 * @hi:    upper bound.
 * @valid: @n >= 2, so @lo/@hi are an interval.
 */
struct bench_ci {
	int n;
	double est;
	double lo;
	double hi;
	bool valid;
};

/**
 * bench_paired_ratio_ci() - 95 % bootstrap interval of the ratio a / b
 *                           over paired runs.
 * @a:    the compared series, @n values (run i of round i).
 * @b:    the baseline series, @n values, paired with @a by index.
 * @n:    pairs, 0..BENCH_MAX_PAIRS.
 * @seed: seeds the resampling (same inputs + seed = same interval).
 * @out:  result.
 *
 * Works on the log ratios d[i] = ln(a[i] / b[i]): the estimate is
 * exp(mean d). The interval resamples the pairs with replacement
 * BENCH_BOOT_ITERS times and takes percentiles of exp(mean d*). With the
 * handful of pairs a benchmark has, the plain percentile interval is too
 * narrow (it behaves like a z interval with the n-divisor variance), so
 * the percentiles are widened as in Hesterberg's "expanded percentile"
 * interval: alpha'/2 = Phi(-sqrt(n / (n - 1)) * t(n - 1, 0.975)), which
 * keeps the false-positive rate near 5 % for small n (checked by the unit
 * tests on synthetic data without an effect: about 6 % for 5..20 pairs).
 * No bootstrap interval reaches 95 % below 5 pairs: it is never wider
 * than the range of the pairs, and all n log ratios share a sign with
 * probability 2^(1-n) (25 % for 3 pairs).
 *
 * Return: 0; -EINVAL if @n is out of range or an argument is NULL;
 * -ENOMEM.
 * Context: any.
 */
int bench_paired_ratio_ci(const double *a, const double *b, int n, uint64_t seed, struct bench_ci *out);

/* Most pairs bench_paired_ratio_ci() takes (a run has at most this many rounds). */
#define BENCH_MAX_PAIRS 100

/**
 * bench_ci_differs() - whether @ci shows an effect: a valid interval
 * that excludes 1.0. An invalid one (fewer than 2 pairs) never differs.
 */
bool bench_ci_differs(const struct bench_ci *ci);

/**
 * bench_t975() - the 0.975 quantile of Student's t with @df degrees of
 * freedom (exact table for 1..30, the normal-based expansion above).
 * Return: the quantile; 0 if @df < 1.
 */
double bench_t975(int df);

#endif
