/* SPDX-License-Identifier: MIT */
/*
 * rt_sink.h - where the CQEs of one user of a worker ring go
 * (internal/rt_ring.h), in a header of its own so that structs which
 * embed a sink (struct nvmfd_bk_io, internal/backend.h) need not pull in
 * liburing.
 */
#ifndef NVMFD_INTERNAL_RT_SINK_H
#define NVMFD_INTERNAL_RT_SINK_H

#include <stdint.h>

/* Tags are 0..7 (the low bits of the user_data; sinks are 8-aligned). */
#define NVMFD_RT_RING_TAG_MASK 7u

/**
 * struct nvmfd_rt_sink - where the CQEs of one user go. Embed it (8-byte
 * aligned, as any struct holding a pointer is).
 * @cqe: called by the reaper, ring lock held, for every CQE whose
 *       user_data is nvmfd_rt_ring_data(this sink, @tag). Any thread.
 */
struct nvmfd_rt_sink {
	void (*cqe)(struct nvmfd_rt_sink *s, unsigned int tag, int res, uint32_t flags);
};

/** nvmfd_rt_ring_data() - the user_data for an SQE of @s with @tag (0..7). */
static inline uint64_t nvmfd_rt_ring_data(struct nvmfd_rt_sink *s, unsigned int tag)
{
	return (uint64_t)(uintptr_t)s | (tag & NVMFD_RT_RING_TAG_MASK);
}

#endif /* NVMFD_INTERNAL_RT_SINK_H */
