/* SPDX-License-Identifier: MIT */
/*
 * hist.h - log-linear latency histogram (values in nanoseconds).
 *
 * Values below 128 get one bucket each; every power of two above is split
 * into 128 equal sub-buckets, so a reported percentile lies within 1/256
 * (0.4 %) of a recorded value. 7424 uint64_t buckets cover the full 64-bit
 * range (about 58 KiB per histogram). Recording is O(1) and allocation free;
 * merging adds bucket arrays (per-thread histograms merged at report time).
 *
 * Ownership: caller-owned storage (embed it, or nvmfd__hist_create()).
 * Context: a histogram is written by one thread; merge/report after that
 * thread has stopped writing (or under the caller's synchronization).
 */
#ifndef NVMFD_INTERNAL_HIST_H
#define NVMFD_INTERNAL_HIST_H

#include <stdint.h>

#define NVMFD_HIST_SUB_BITS 7
#define NVMFD_HIST_SUB (1u << NVMFD_HIST_SUB_BITS)
/* Exact buckets 0..127, then (64 - 7) power-of-two groups of 128. */
#define NVMFD_HIST_BUCKETS ((64 - NVMFD_HIST_SUB_BITS + 1) * NVMFD_HIST_SUB)

/**
 * struct nvmfd_hist - histogram; treat fields as read-only outside hist.c.
 * @count:   values recorded.
 * @sum:     sum of values (wraps after 2^64 ns in total).
 * @min:     smallest value (UINT64_MAX when empty).
 * @max:     largest value.
 * @buckets: counts per bucket.
 */
struct nvmfd_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t buckets[NVMFD_HIST_BUCKETS];
};

/** nvmfd__hist_init() - empty @h. Context: owner. */
void nvmfd__hist_init(struct nvmfd_hist *h);

/**
 * nvmfd__hist_create() - allocate an empty histogram.
 * Return: the histogram, or NULL (-ENOMEM). Free with nvmfd__hist_destroy().
 */
struct nvmfd_hist *nvmfd__hist_create(void);

/** nvmfd__hist_destroy() - free a histogram from nvmfd__hist_create(); NULL ok. */
void nvmfd__hist_destroy(struct nvmfd_hist *h);

/**
 * nvmfd__hist_record() - add one value.
 * @h: histogram.
 * @v: value in ns.
 * Context: owner thread; O(1), no allocation.
 */
void nvmfd__hist_record(struct nvmfd_hist *h, uint64_t v);

/**
 * nvmfd__hist_merge() - add every value of @src to @dst.
 * @dst: destination.
 * @src: source, borrowed, unchanged.
 */
void nvmfd__hist_merge(struct nvmfd_hist *dst, const struct nvmfd_hist *src);

/**
 * nvmfd__hist_percentile() - value at percentile @p.
 * @h: histogram.
 * @p: 0.0 .. 100.0 (clamped); p50 is the median.
 * Return: the value (midpoint of the bucket holding the ceil(p% * count)-th
 *         smallest value, clamped to [min, max]); 0 when empty.
 */
uint64_t nvmfd__hist_percentile(const struct nvmfd_hist *h, double p);

/** nvmfd__hist_min() - smallest value, 0 when empty. */
uint64_t nvmfd__hist_min(const struct nvmfd_hist *h);

/** nvmfd__hist_max() - largest value, 0 when empty. */
uint64_t nvmfd__hist_max(const struct nvmfd_hist *h);

/** nvmfd__hist_mean() - arithmetic mean, 0 when empty. */
double nvmfd__hist_mean(const struct nvmfd_hist *h);

/**
 * nvmfd__hist_stddev() - population standard deviation, 0 with fewer
 * than 2 values. Computed from the buckets around the exact mean: every
 * value counts as its bucket's midpoint (clamped to min..max), so the
 * result is within the bucket resolution (0.4 %) of the values' own.
 * Histograms merged with nvmfd__hist_merge() give the deviation of all
 * their values together (not an average of deviations).
 */
double nvmfd__hist_stddev(const struct nvmfd_hist *h);

/** nvmfd__hist_bucket_of() - bucket index of a value (exposed for tests). */
uint32_t nvmfd__hist_bucket_of(uint64_t v);

/** nvmfd__hist_bucket_low() - smallest value of bucket @b (for tests). */
uint64_t nvmfd__hist_bucket_low(uint32_t b);

#endif /* NVMFD_INTERNAL_HIST_H */
