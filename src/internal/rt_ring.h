/* SPDX-License-Identifier: MIT */
/*
 * rt_ring.h - the worker ring: one io_uring per bound pool, owned by the
 * runtime (nvmfd_rt_opts.uring; doc/execution-model.md §9.1).
 *
 * The pool's workers sleep in io_uring_enter() on this ring instead of
 * epoll_wait(): the pool's epoll fd (watched fds and the cross-thread kick
 * eventfd) is one multishot poll request on the ring, so readiness, kicks
 * and every CQE of the ring wake the same wait. Users (a queue's socket,
 * net/usock.c) put their SQEs on it and get their CQEs back through a sink:
 * the user_data of an SQE is nvmfd_rt_ring_data(sink, tag); whoever reaps
 * the ring calls sink->cqe(sink, tag, res, flags) for each CQE, under the
 * ring lock. A sink hands the CQE to its owner (a work item) and queues it;
 * it must not call back into the ring.
 *
 * Submission is lazy on the ring's own workers: SQEs prepared while a
 * work item runs on the pool go to the kernel with the io_uring_enter()
 * the worker makes next: the one it sleeps in when the run queue is empty
 * (so one system call submits the socket's send and receive re-arm and
 * waits for the next CQE), or a non-waiting one before it runs the next
 * item. Any other thread's nvmfd_rt_ring_commit() submits at once.
 *
 * Locking: the ring lock protects the SQ (preparing SQEs: between
 * nvmfd_rt_ring_lock() and _unlock()) and the CQ (reaps); it is a leaf
 * except that sinks may queue work items (pool locks are taken inside it,
 * never the other way round). Waiting in the kernel holds no lock.
 *
 * Only bound pools have rings (a work item on them never changes pool
 * while it lives, except for the target's stop runtime, which still
 * submits correctly: its workers are "other threads" above).
 *
 * Errors: negative errno.
 */
#ifndef NVMFD_INTERNAL_RT_RING_H
#define NVMFD_INTERNAL_RT_RING_H

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#include "internal/rt.h"
#include "internal/rt_sink.h"

struct nvmfd_rt_ring;

/* struct nvmfd_rt_sink, nvmfd_rt_ring_data(): internal/rt_sink.h */

/**
 * nvmfd_rt_ring_of() - the ring of the pool that runs work items of
 * @io_cpu (mapped as nvmfd_work_init() maps it).
 * Return: the ring, or NULL when @rt was created without rings.
 * Context: any thread; the ring lives as long as @rt.
 */
struct nvmfd_rt_ring *nvmfd_rt_ring_of(struct nvmfd_rt *rt, int io_cpu);

/** nvmfd_rt_ring_uring() - the io_uring itself: for SQE preparation under
 *  the lock and for io_uring_register_*() calls (any thread). */
struct io_uring *nvmfd_rt_ring_uring(struct nvmfd_rt_ring *r);

/** nvmfd_rt_ring_lock(), nvmfd_rt_ring_unlock() - the ring lock (above). */
void nvmfd_rt_ring_lock(struct nvmfd_rt_ring *r);
void nvmfd_rt_ring_unlock(struct nvmfd_rt_ring *r);

/**
 * nvmfd_rt_ring_sqe() - a free SQE (ring lock held); when the SQ is full,
 * what is in it is submitted first.
 * Return: the SQE, or NULL when the kernel takes none (-EBUSY: retry later).
 */
struct io_uring_sqe *nvmfd_rt_ring_sqe(struct nvmfd_rt_ring *r);

/**
 * nvmfd_rt_ring_commit() - the SQEs prepared so far should go to the
 * kernel: on a worker of @r's pool nothing happens now (its next
 * io_uring_enter() carries them); on any other thread they are submitted.
 * Return: 0, -errno from io_uring_enter(). Context: ring lock NOT held.
 */
int nvmfd_rt_ring_commit(struct nvmfd_rt_ring *r);

/**
 * nvmfd_rt_ring_submit() - submit the SQEs prepared so far now, on any
 * thread, the ring's own workers included: for a teardown that waits for
 * the CQEs of its SQEs (a worker waiting there makes no io_uring_enter()
 * of its own meanwhile). Not for the data path (nvmfd_rt_ring_commit()).
 * Return: 0, -errno from io_uring_enter(). Context: ring lock NOT held.
 */
int nvmfd_rt_ring_submit(struct nvmfd_rt_ring *r);

/**
 * nvmfd_rt_ring_reap() - take every CQE the ring holds and call its sink
 * (the pool's own epoll request is handled too: a reap on a thread that is
 * not the pool's worker makes the pool look at its epoll set).
 * Return: CQEs taken. Context: ring lock NOT held; any thread.
 */
unsigned int nvmfd_rt_ring_reap(struct nvmfd_rt_ring *r);

/**
 * nvmfd_rt_ring_bgid_get() - a buffer group id unique on @r, for a
 * provided buffer ring of one user. Return: 0..65535, or -ENOSPC.
 * nvmfd_rt_ring_bgid_put() gives it back (after unregistering).
 */
int nvmfd_rt_ring_bgid_get(struct nvmfd_rt_ring *r);
void nvmfd_rt_ring_bgid_put(struct nvmfd_rt_ring *r, int bgid);

/**
 * struct nvmfd_rt_ring_stats - counters of one ring (relaxed reads).
 * @waits:     io_uring_enter() calls that slept (or would have) for a CQE.
 * @submits:   io_uring_enter() calls that only submitted.
 * @sqes:      SQEs given to the kernel.
 * @cqes:      CQEs reaped (the epoll request's included).
 * @epoll_cqes: CQEs of the pool's epoll request (readiness or kicks).
 */
struct nvmfd_rt_ring_stats {
	uint64_t waits;
	uint64_t submits;
	uint64_t sqes;
	uint64_t cqes;
	uint64_t epoll_cqes;
};

/** nvmfd_rt_ring_get_stats() - copy @r's counters. Context: any thread. */
void nvmfd_rt_ring_get_stats(struct nvmfd_rt_ring *r, struct nvmfd_rt_ring_stats *st);

#endif /* NVMFD_INTERNAL_RT_RING_H */
