// SPDX-License-Identifier: MIT
/* test_hist.c - log-linear histogram: bucket math, percentiles of known
 * distributions within 1 %, merge, min/avg/max. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "internal/hist.h"

static void assert_within_1pct(uint64_t got, double want, const char *what)
{
	double err = fabs((double)got - want) / want;

	if (err > 0.01)
		fail_msg("%s: got %llu want %.1f (rel err %.4f)", what, (unsigned long long)got,
			 want, err);
}

static void test_bucket_math(void **state)
{
	/* Exact region. */
	for (uint64_t v = 0; v < 128; v++) {
		assert_int_equal(nvmfd__hist_bucket_of(v), v);
		assert_int_equal(nvmfd__hist_bucket_low((uint32_t)v), v);
	}
	assert_int_equal(nvmfd__hist_bucket_of(128), 128);
	assert_int_equal(nvmfd__hist_bucket_of(255), 255);
	assert_int_equal(nvmfd__hist_bucket_of(256), 256);
	assert_int_equal(nvmfd__hist_bucket_of(257), 256);
	assert_int_equal(nvmfd__hist_bucket_of(UINT64_MAX), NVMFD_HIST_BUCKETS - 1);
	/* Every value lies in its bucket, and bucket width / low <= 1/128. */
	for (uint64_t v = 1; v < (1ull << 62); v = v * 3 + 7) {
		uint32_t b = nvmfd__hist_bucket_of(v);
		uint64_t lo = nvmfd__hist_bucket_low(b);
		uint64_t next = b + 1 < NVMFD_HIST_BUCKETS ? nvmfd__hist_bucket_low(b + 1) : 0;

		assert_true(lo <= v);
		if (next)
			assert_true(v < next);
		if (v >= 128)
			assert_true((double)(next - lo) / (double)lo <= 1.0 / 128.0 + 1e-12);
	}
}

static void test_empty(void **state)
{
	struct nvmfd_hist *h = nvmfd__hist_create();

	assert_non_null(h);
	assert_int_equal(nvmfd__hist_percentile(h, 50), 0);
	assert_int_equal(nvmfd__hist_min(h), 0);
	assert_int_equal(nvmfd__hist_max(h), 0);
	assert_true(nvmfd__hist_mean(h) == 0.0);
	assert_true(nvmfd__hist_stddev(h) == 0.0);
	nvmfd__hist_destroy(h);
}

/* Uniform integers 1000..1000999 ns: pX = 1000 + X% * 1e6. */
static void test_uniform(void **state)
{
	struct nvmfd_hist *h = nvmfd__hist_create();
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9, 99.99 };

	assert_non_null(h);
	for (uint64_t v = 1000; v < 1001000; v++)
		nvmfd__hist_record(h, v);
	assert_int_equal(h->count, 1000000);
	assert_int_equal(nvmfd__hist_min(h), 1000);
	assert_int_equal(nvmfd__hist_max(h), 1000999);
	assert_true(fabs(nvmfd__hist_mean(h) - 500999.5) < 0.01);
	/* uniform over 1e6 integers: sd = sqrt((n^2 - 1) / 12) */
	assert_within_1pct(nvmfd__hist_stddev(h), sqrt((1e12 - 1) / 12), "uniform stddev");
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double want = 1000.0 + ps[i] / 100.0 * 1e6 - 1;

		assert_within_1pct(nvmfd__hist_percentile(h, ps[i]), want, "uniform");
	}
	assert_int_equal(nvmfd__hist_percentile(h, 100), 1000999);
	assert_within_1pct(nvmfd__hist_percentile(h, 0), 1000, "uniform p0");
	nvmfd__hist_destroy(h);
}

/* Exponential with mean 50 us, deterministic quantile sampling: value i is
 * the (i + 0.5)/N quantile, so the X-th percentile is -mean * ln(1 - X%). */
static void test_exponential(void **state)
{
	struct nvmfd_hist *h = nvmfd__hist_create();
	const uint32_t n = 200000;
	const double mean = 50000.0;
	static const double ps[] = { 50, 90, 99, 99.9 };

	assert_non_null(h);
	for (uint32_t i = 0; i < n; i++)
		nvmfd__hist_record(h, (uint64_t)llround(-mean * log(1.0 - (i + 0.5) / n)));
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		assert_within_1pct(nvmfd__hist_percentile(h, ps[i]), -mean * log(1.0 - ps[i] / 100),
				   "exponential");
	assert_true(fabs(nvmfd__hist_mean(h) - mean) / mean < 0.01);
	/* exponential: sd = mean */
	assert_within_1pct(nvmfd__hist_stddev(h), mean, "exponential stddev");
	nvmfd__hist_destroy(h);
}

/* Two point masses and merge: 90 % at 10 us (thread A), 10 % at 5 ms (B). */
static void test_merge_bimodal(void **state)
{
	struct nvmfd_hist *a = nvmfd__hist_create(), *b = nvmfd__hist_create();

	assert_non_null(a);
	assert_non_null(b);
	for (int i = 0; i < 9000; i++)
		nvmfd__hist_record(a, 10000);
	for (int i = 0; i < 1000; i++)
		nvmfd__hist_record(b, 5000000);
	nvmfd__hist_merge(a, b);
	assert_int_equal(a->count, 10000);
	assert_int_equal(nvmfd__hist_min(a), 10000);
	assert_int_equal(nvmfd__hist_max(a), 5000000);
	assert_within_1pct(nvmfd__hist_percentile(a, 50), 10000, "bimodal p50");
	assert_within_1pct(nvmfd__hist_percentile(a, 90), 10000, "bimodal p90");
	assert_within_1pct(nvmfd__hist_percentile(a, 90.01), 5000000, "bimodal p90.01");
	assert_within_1pct(nvmfd__hist_percentile(a, 99.99), 5000000, "bimodal p99.99");
	assert_true(fabs(nvmfd__hist_mean(a) - (9000.0 * 10000 + 1000.0 * 5000000) / 10000) < 1);
	/* merged: the deviation of all values (two point masses: sqrt(p(1-p)) * gap) */
	assert_within_1pct(nvmfd__hist_stddev(a), sqrt(0.9 * 0.1) * (5000000 - 10000), "bimodal stddev");
	assert_true(nvmfd__hist_stddev(b) == 0); /* b: 1000 equal values */
	/* Merging an empty histogram changes nothing. */
	nvmfd__hist_init(b);
	nvmfd__hist_merge(a, b);
	assert_int_equal(a->count, 10000);
	assert_int_equal(nvmfd__hist_min(a), 10000);
	nvmfd__hist_destroy(a);
	nvmfd__hist_destroy(b);
}

/* Log-uniform over 100 ns .. 10 s exercises many power-of-two groups. */
static void test_log_uniform(void **state)
{
	struct nvmfd_hist *h = nvmfd__hist_create();
	const uint32_t n = 100000;
	const double lo = log(100.0), hi = log(1e10);

	assert_non_null(h);
	for (uint32_t i = 0; i < n; i++)
		nvmfd__hist_record(h, (uint64_t)llround(exp(lo + (hi - lo) * (i + 0.5) / n)));
	for (int p = 5; p <= 95; p += 5)
		assert_within_1pct(nvmfd__hist_percentile(h, p), exp(lo + (hi - lo) * p / 100.0),
				   "log-uniform");
	nvmfd__hist_destroy(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_math), cmocka_unit_test(test_empty),
		cmocka_unit_test(test_uniform),	    cmocka_unit_test(test_exponential),
		cmocka_unit_test(test_merge_bimodal), cmocka_unit_test(test_log_uniform),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
