// SPDX-License-Identifier: MIT
/* hist.c - log-linear latency histogram; see internal/hist.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/hist.h"

void nvmfd__hist_init(struct nvmfd_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

struct nvmfd_hist *nvmfd__hist_create(void)
{
	struct nvmfd_hist *h = malloc(sizeof(*h));

	if (h)
		nvmfd__hist_init(h);
	return h;
}

void nvmfd__hist_destroy(struct nvmfd_hist *h)
{
	free(h);
}

uint32_t nvmfd__hist_bucket_of(uint64_t v)
{
	unsigned int msb, shift;

	if (v < NVMFD_HIST_SUB)
		return (uint32_t)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	shift = msb - NVMFD_HIST_SUB_BITS;
	/* Group shift + 1 holds [2^msb, 2^(msb+1)) in 128 steps of 2^shift. */
	return (shift + 1) * NVMFD_HIST_SUB + (uint32_t)((v >> shift) - NVMFD_HIST_SUB);
}

uint64_t nvmfd__hist_bucket_low(uint32_t b)
{
	uint32_t group = b / NVMFD_HIST_SUB, sub = b % NVMFD_HIST_SUB;

	if (group == 0)
		return b;
	return (uint64_t)(NVMFD_HIST_SUB + sub) << (group - 1);
}

static uint64_t bucket_width(uint32_t b)
{
	uint32_t group = b / NVMFD_HIST_SUB;

	return group == 0 ? 1 : 1ull << (group - 1);
}

void nvmfd__hist_record(struct nvmfd_hist *h, uint64_t v)
{
	h->buckets[nvmfd__hist_bucket_of(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void nvmfd__hist_merge(struct nvmfd_hist *dst, const struct nvmfd_hist *src)
{
	if (!src->count)
		return;
	for (uint32_t i = 0; i < NVMFD_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t nvmfd__hist_percentile(const struct nvmfd_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (p < 0.0)
		p = 0.0;
	if (p > 100.0)
		p = 100.0;
	/* The rank-th smallest value, rank = ceil(p/100 * count), at least 1. */
	rank = (uint64_t)(p / 100.0 * (double)h->count);
	if ((double)rank < p / 100.0 * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	for (uint32_t i = 0; i < NVMFD_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t w = bucket_width(i);
			uint64_t v = nvmfd__hist_bucket_low(i) + (w - 1) / 2;

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

uint64_t nvmfd__hist_min(const struct nvmfd_hist *h)
{
	return h->count ? h->min : 0;
}

uint64_t nvmfd__hist_max(const struct nvmfd_hist *h)
{
	return h->max;
}

double nvmfd__hist_mean(const struct nvmfd_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

double nvmfd__hist_stddev(const struct nvmfd_hist *h)
{
	double mean, acc = 0;

	if (h->count < 2)
		return 0.0;
	mean = nvmfd__hist_mean(h);
	for (uint32_t i = 0; i < NVMFD_HIST_BUCKETS; i++) {
		double v, d;

		if (!h->buckets[i])
			continue;
		v = (double)nvmfd__hist_bucket_low(i) + (double)(bucket_width(i) - 1) / 2;
		if (v < (double)h->min)
			v = (double)h->min;
		if (v > (double)h->max)
			v = (double)h->max;
		d = v - mean;
		acc += d * d * (double)h->buckets[i];
	}
	return sqrt(acc / (double)h->count);
}
