// SPDX-License-Identifier: MIT
/*
 * nvmf-bench statistics on synthetic data: the generator and shuffle are
 * deterministic per seed, the paired bootstrap interval finds a known
 * effect, does not invent one (false-positive rate over many synthetic
 * A/A series without an effect), handles degenerate input, and gives the
 * same interval for the same seed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../../tools/nvmf-bench/stats.h"

/* Normal deviate (Box-Muller) from the bench generator. */
static double gauss(struct bench_rng *r)
{
	double u1 = ((double)(bench_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(bench_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/*
 * @n paired runs: a shared per-round level (machine state drifting
 * between rounds, up to 2x), times lognormal run noise of @sd, times
 * @effect for the compared series.
 */
static void synth(struct bench_rng *r, double *a, double *b, int n, double effect, double sd)
{
	for (int i = 0; i < n; i++) {
		double level = 100000.0 * (1 + (double)bench_rng_below(r, 1000) / 1000.0);

		b[i] = level * exp(sd * gauss(r));
		a[i] = level * effect * exp(sd * gauss(r));
	}
}

static void test_rng_determinism(void **state)
{
	struct bench_rng r1, r2, r3;
	int i, same = 0;

	(void)state;
	bench_rng_seed(&r1, 42);
	bench_rng_seed(&r2, 42);
	bench_rng_seed(&r3, 43);
	for (i = 0; i < 1000; i++) {
		uint64_t x = bench_rng_next(&r1);

		assert_true(x == bench_rng_next(&r2));
		same += x == bench_rng_next(&r3);
	}
	assert_int_equal(same, 0);
	/* bench_rng_below stays in range and hits every value */
	{
		int seen[7] = { 0 };

		for (i = 0; i < 7000; i++) {
			uint32_t v = bench_rng_below(&r1, 7);

			assert_true(v < 7);
			seen[v]++;
		}
		for (i = 0; i < 7; i++)
			assert_true(seen[i] > 800 && seen[i] < 1200);
		assert_int_equal(bench_rng_below(&r1, 1), 0);
		assert_int_equal(bench_rng_below(&r1, 0), 0);
	}
}

static void test_shuffle(void **state)
{
	struct bench_rng r1, r2;
	int a[10], b[10], i, moved = 0, sum = 0;

	(void)state;
	for (i = 0; i < 10; i++)
		a[i] = b[i] = i;
	bench_rng_seed(&r1, 7);
	bench_rng_seed(&r2, 7);
	bench_shuffle(&r1, a, 10);
	bench_shuffle(&r2, b, 10);
	assert_memory_equal(a, b, sizeof(a));
	for (i = 0; i < 10; i++) {
		moved += a[i] != i;
		sum += a[i];
	}
	assert_int_equal(sum, 45); /* a permutation ... */
	assert_true(moved > 0); /* ... that moved something */
	{
		int seen[10] = { 0 };

		for (i = 0; i < 10; i++)
			seen[a[i]]++;
		for (i = 0; i < 10; i++)
			assert_int_equal(seen[i], 1);
	}
	/* every position gets every value over many rounds (order randomised) */
	{
		int first[3] = { 0 };

		for (i = 0; i < 3000; i++) {
			int c[3] = { 0, 1, 2 };

			bench_shuffle(&r1, c, 3);
			first[c[0]]++;
		}
		for (i = 0; i < 3; i++)
			assert_true(first[i] > 850 && first[i] < 1150);
	}
	bench_shuffle(&r1, a, 0);
	bench_shuffle(&r1, a, 1);
}

static void test_median(void **state)
{
	double v1[] = { 5, 1, 3 }, v2[] = { 4, 1, 3, 2 };

	(void)state;
	assert_true(bench_median(v1, 3) == 3);
	assert_true(bench_median(v2, 4) == 2.5);
	assert_true(bench_median(v1, 0) == 0);
}

static void test_known_effect(void **state)
{
	struct bench_rng r;
	double a[8], b[8];
	struct bench_ci ci;
	int t;

	(void)state;
	bench_rng_seed(&r, 1);
	/* +20 % with 3 % run noise and a 2x drifting machine: found every time */
	for (t = 0; t < 50; t++) {
		synth(&r, a, b, 8, 1.20, 0.03);
		assert_int_equal(bench_paired_ratio_ci(a, b, 8, 99, &ci), 0);
		assert_true(ci.valid);
		assert_int_equal(ci.n, 8);
		assert_true(ci.lo > 1.0);
		assert_true(ci.lo <= ci.est && ci.est <= ci.hi);
		assert_true(ci.est > 1.1 && ci.est < 1.3);
		assert_true(bench_ci_differs(&ci));
	}
	/* -30 % with 5 pairs */
	for (t = 0; t < 50; t++) {
		synth(&r, a, b, 5, 0.70, 0.03);
		assert_int_equal(bench_paired_ratio_ci(a, b, 5, 99, &ci), 0);
		assert_true(ci.hi < 1.0);
		assert_true(bench_ci_differs(&ci));
	}
}

static void test_no_effect(void **state)
{
	struct bench_rng r;
	double a[BENCH_MAX_PAIRS], b[BENCH_MAX_PAIRS];
	struct bench_ci ci;
	static const int ns[] = { 5, 6, 8, 20 };
	int t, k, fp;

	(void)state;
	bench_rng_seed(&r, 2);
	/*
	 * A/A: same distribution; the nominal rate is 5 %, allow up to 9 %.
	 * (Below 5 pairs no bootstrap interval can reach 95 %: it never gets
	 * wider than the range of the pairs, and all n log ratios share a
	 * sign with probability 2^(1-n). The bench defaults to 5 rounds.)
	 */
	for (k = 0; k < 4; k++) {
		fp = 0;
		for (t = 0; t < 400; t++) {
			synth(&r, a, b, ns[k], 1.0, 0.10);
			assert_int_equal(bench_paired_ratio_ci(a, b, ns[k], (uint64_t)t, &ci), 0);
			assert_true(ci.lo <= ci.est && ci.est <= ci.hi);
			fp += bench_ci_differs(&ci);
		}
		print_message("n=%d: %d/400 false positives\n", ns[k], fp);
		assert_true(fp <= 36);
	}
}

static void test_seed_determinism(void **state)
{
	struct bench_rng r;
	double a[6], b[6];
	struct bench_ci c1, c2, c3;

	(void)state;
	bench_rng_seed(&r, 3);
	synth(&r, a, b, 6, 1.05, 0.10);
	assert_int_equal(bench_paired_ratio_ci(a, b, 6, 1234, &c1), 0);
	assert_int_equal(bench_paired_ratio_ci(a, b, 6, 1234, &c2), 0);
	assert_int_equal(bench_paired_ratio_ci(a, b, 6, 4321, &c3), 0);
	assert_true(c1.n == c2.n && c1.est == c2.est && c1.lo == c2.lo && c1.hi == c2.hi);
	assert_true(c1.est == c3.est); /* the estimate does not resample */
	assert_true(c1.lo != c3.lo || c1.hi != c3.hi); /* the interval does */
}

static void test_degenerate(void **state)
{
	double a[4] = { 2, 4, 6, 8 }, b[4] = { 1, 2, 3, 4 };
	double z[4] = { 0, 1, -1, NAN };
	struct bench_ci ci;

	(void)state;
	/* identical ratios: a zero-width interval at the ratio */
	assert_int_equal(bench_paired_ratio_ci(a, b, 4, 5, &ci), 0);
	assert_true(ci.valid);
	assert_true(fabs(ci.est - 2) < 1e-12 && fabs(ci.lo - 2) < 1e-12 && fabs(ci.hi - 2) < 1e-12);
	assert_true(bench_ci_differs(&ci));
	/* one pair: an estimate, no interval, never "differs" */
	assert_int_equal(bench_paired_ratio_ci(a, b, 1, 5, &ci), 0);
	assert_false(ci.valid);
	assert_true(fabs(ci.est - 2) < 1e-12);
	assert_false(bench_ci_differs(&ci));
	/* non-positive and NaN values are left out */
	assert_int_equal(bench_paired_ratio_ci(z, b, 4, 5, &ci), 0);
	assert_int_equal(ci.n, 1);
	assert_int_equal(bench_paired_ratio_ci(a, b, 0, 5, &ci), 0);
	assert_int_equal(ci.n, 0);
	assert_false(ci.valid);
	assert_int_equal(bench_paired_ratio_ci(a, b, -1, 5, &ci), -EINVAL);
	assert_int_equal(bench_paired_ratio_ci(a, b, BENCH_MAX_PAIRS + 1, 5, &ci), -EINVAL);
	assert_int_equal(bench_paired_ratio_ci(NULL, b, 2, 5, &ci), -EINVAL);
}

static void test_t975(void **state)
{
	(void)state;
	assert_true(fabs(bench_t975(4) - 2.776) < 1e-9);
	assert_true(fabs(bench_t975(30) - 2.042) < 1e-9);
	assert_true(fabs(bench_t975(40) - 2.021) < 0.002);
	assert_true(fabs(bench_t975(120) - 1.980) < 0.002);
	assert_true(bench_t975(0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng_determinism), cmocka_unit_test(test_shuffle),
		cmocka_unit_test(test_median),		cmocka_unit_test(test_known_effect),
		cmocka_unit_test(test_no_effect),	cmocka_unit_test(test_seed_determinism),
		cmocka_unit_test(test_degenerate),	cmocka_unit_test(test_t975),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
