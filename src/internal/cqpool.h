/* SPDX-License-Identifier: MIT */
/*
 * cqpool.h - completion pools: where a queue's backend completions come
 * from, and who waits for them (doc/design.md "Completion pools").
 *
 * A queue opens one completion context (struct nvmfd_cq) from the pool of
 * its port. In per-queue mode the context owns a backend ring whose eventfd
 * the queue watches itself. In shared mode every context placed on one
 * io_cpu shares that CPU's ring (the nvmet-rdma CQ pool idea in user
 * space): ONE completion event source per CPU, the ring's eventfd, watched
 * by the ring's own completion work on that CPU. That work reaps; each
 * completion is routed onto its context's MPSC list and the context's
 * notify callback is called (the queue kicks its io_work), and the owner
 * runs the io callbacks in nvmfd_cq_poll(): a queue's state is only ever
 * touched by its own io_work.
 *
 * Worker mode (nvmfd_cq_open_worker(), --uring-ring worker): the
 * context's backend SQEs go on the worker ring of the runtime pool that
 * runs its owner (internal/rt_ring.h, doc/execution-model.md §9.1), so the
 * io_uring_enter() that worker sleeps in submits them with the sockets'
 * SQEs and wakes for all their CQEs; the ring's reaper posts each CQE to
 * the context and calls notify, and the owner finishes the ios (short
 * transfers, fallbacks, callbacks) in nvmfd_cq_poll(). No eventfd.
 *
 * Locking: a shared ring is used by several owners; its lock is taken
 * inside nvmfd_cq_submit(), nvmfd_cq_flush() and the reaps, never while an
 * io callback runs (callbacks may submit again). Per-queue contexts take
 * no lock. The pool's own lock (ring list, reference counts) is a leaf.
 *
 * Errors: negative errno. Units: depths in ios.
 * Context: every function but create/destroy/open/close is for the
 * context's owner (one thread at a time, e.g. a queue's io_work).
 */
#ifndef NVMFD_INTERNAL_CQPOOL_H
#define NVMFD_INTERNAL_CQPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "internal/backend.h"
#include "internal/rt.h"

struct nvmfd_cq_pool;
struct nvmfd_cq;
struct nvmfd_rt_ring;

/**
 * struct nvmfd_cq_pool_opts - how contexts get their completions.
 * @shared:        one ring per io_cpu shared by its contexts (else per queue).
 * @iopoll:        rings try IORING_SETUP_IOPOLL (see nvmfd_bk_ring_create()).
 * @shared_queues: a shared ring is sized for this many contexts of the
 *                 depth passed to nvmfd_cq_open() (0: 16).
 * @shared_depth_max: cap on a shared ring's depth in ios (0: 32768, the
 *                 io_uring limit).
 * @reap_max:      completions one completion-work run reaps (0: 1024).
 */
struct nvmfd_cq_pool_opts {
	bool shared;
	bool iopoll;
	unsigned int shared_queues;
	unsigned int shared_depth_max;
	unsigned int reap_max;
};

/**
 * nvmfd_cq_pool_create() - a pool whose shared rings' completion work runs
 * on @rt (borrowed; must outlive the pool).
 * Return: 0, -ENOMEM, -EINVAL (@rt NULL in shared mode).
 */
int nvmfd_cq_pool_create(struct nvmfd_rt *rt, const struct nvmfd_cq_pool_opts *opts,
			 struct nvmfd_cq_pool **out);

/** nvmfd_cq_pool_destroy() - free the pool; every context must be closed
 *  (asserted). NULL or *NULL is ignored; NULLs *@pp. Context: any thread. */
void nvmfd_cq_pool_destroy(struct nvmfd_cq_pool **pp);

/**
 * nvmfd_cq_pool_move() - run the completion work of every shared ring, and
 * of rings created from now on, on @rt (borrowed; must outlive the pool).
 * Used at target stop so that draining queues do not wait for a starved
 * CPU. A no-op for per-queue pools.
 * Return: 0, -EINVAL (@rt NULL). Context: not a completion work; may sleep
 * (waits for a run in progress).
 */
int nvmfd_cq_pool_move(struct nvmfd_cq_pool *pool, struct nvmfd_rt *rt);

/** nvmfd_cq_pool_shared() - true in shared mode. */
bool nvmfd_cq_pool_shared(const struct nvmfd_cq_pool *pool);

/**
 * typedef nvmfd_cq_notify_fn - shared mode: completions were routed to the
 * context and the owner should call nvmfd_cq_poll() soon (kick its work).
 * Called from the completion work or another owner's reap, any thread,
 * with the ring lock held: it must not call back into the pool.
 */
typedef void (*nvmfd_cq_notify_fn)(void *arg);

/** nvmfd_cq_pool_can_share() - shared rings may exist: shared mode, or a
 *  per-queue pool created with a runtime (nvmfd_cq_open_src()). */
bool nvmfd_cq_pool_can_share(const struct nvmfd_cq_pool *pool);

/* Where one context's completions come from (nvmfd_cq_open_src()). */
enum nvmfd_cq_src {
	NVMFD_CQ_SRC_POOL, /* the pool's mode */
	NVMFD_CQ_SRC_QUEUE, /* a ring of its own */
	NVMFD_CQ_SRC_SHARED, /* the shared ring of its io_cpu */
	NVMFD_CQ_SRC_WORKER, /* a worker ring: nvmfd_cq_open_worker() only */
};

/**
 * nvmfd_cq_open_src() - nvmfd_cq_open() with the source chosen for this
 * context: a pool of either mode serves both kinds when it has a runtime
 * (the shared rings' completion work runs there). Fixed for the
 * context's life: its ios complete on the ring they were submitted to.
 * Return: as nvmfd_cq_open(); -EINVAL for NVMFD_CQ_SRC_SHARED without a
 * runtime, and for NVMFD_CQ_SRC_WORKER (it needs a ring:
 * nvmfd_cq_open_worker()).
 */
int nvmfd_cq_open_src(struct nvmfd_cq_pool *pool, int io_cpu, unsigned int depth,
		      enum nvmfd_cq_src src, nvmfd_cq_notify_fn notify, void *arg,
		      struct nvmfd_cq **out);

/**
 * nvmfd_cq_open() - a completion context for a queue on @io_cpu.
 * @depth:  most ios the queue has in flight (its command slots).
 * @notify: shared mode: see nvmfd_cq_notify_fn (may be NULL for a context
 *          that only polls); ignored in per-queue mode.
 * Return: 0, -ENOMEM, -errno from ring creation or nvmfd_rt_watch_fd().
 * Context: any thread (takes the pool lock).
 */
int nvmfd_cq_open(struct nvmfd_cq_pool *pool, int io_cpu, unsigned int depth,
		  nvmfd_cq_notify_fn notify, void *arg, struct nvmfd_cq **out);

/**
 * nvmfd_cq_open_worker() - a completion context whose backend SQEs go on
 * the worker ring @rr (struct nvmfd_rt_ring of the pool that runs the
 * owner: nvmfd_rt_ring_of() of its io_cpu; borrowed, must outlive the
 * context). See "Worker mode" above.
 * @depth:  most ios the queue has in flight.
 * @notify: completions were posted (see nvmfd_cq_notify_fn; called by the
 *          ring's reaper, any thread, ring lock held); NULL for an owner
 *          that only polls (with @peek, which reaps @rr).
 * Return: 0, -EINVAL (@rr NULL, bad @depth), -ENOMEM. Context: any thread.
 */
int nvmfd_cq_open_worker(struct nvmfd_cq_pool *pool, struct nvmfd_rt_ring *rr,
			 unsigned int depth, nvmfd_cq_notify_fn notify, void *arg,
			 struct nvmfd_cq **out);

/**
 * nvmfd_cq_close() - release a context with nothing in flight
 * (nvmfd_cq_inflight() == 0, asserted); the last context of a shared ring
 * stops its completion work and destroys the ring. NULLs *@cqp.
 * A worker context may still have ios in flight: the close waits until
 * the kernel returned their CQEs (no buffer is touched, no sink called,
 * after it returns; it submits and reaps the worker ring itself, so it
 * may run on that ring's worker), but their callbacks are not run.
 * Context: not the completion work of the ring (e.g. a release work).
 */
void nvmfd_cq_close(struct nvmfd_cq **cqp);

/**
 * nvmfd_cq_submit() - queue @io for @bk (sent to the kernel by the next
 * nvmfd_cq_flush()). A full ring is flushed and reaped once and the submit
 * retried (completions of this context run their callbacks from inside
 * this call in per-queue mode; in shared mode they are routed).
 * Return: 0, -EBUSY (still full), -EINVAL (see nvmfd_bk_submit()).
 */
int nvmfd_cq_submit(struct nvmfd_cq *cq, struct nvmfd_bk *bk, struct nvmfd_bk_io *io);

/** nvmfd_cq_flush() - submit what was queued. Return: ios submitted or -errno. */
int nvmfd_cq_flush(struct nvmfd_cq *cq);

/**
 * nvmfd_cq_poll() - deliver completions: run the callbacks of up to @max
 * of this context's completed ios, oldest first.
 * Per-queue: peek the ring's CQ (also clears its eventfd); @peek only says
 * how the poll is counted (struct nvmfd_cq_stats). Shared: run everything
 * that was routed here (@max does not apply); with @peek also reap the
 * shared ring first (backend completion polling: routes other contexts'
 * completions and notifies them).
 * Return: callbacks run. Context: owner, not under the ring lock.
 */
unsigned int nvmfd_cq_poll(struct nvmfd_cq *cq, bool peek, unsigned int max);

/** nvmfd_cq_inflight() - ios submitted and not yet delivered to this context. */
unsigned int nvmfd_cq_inflight(const struct nvmfd_cq *cq);

/**
 * nvmfd_cq_event_fd() - the eventfd to watch for this context's
 * completions: per-queue, the ring's; shared, -1 (the ring's completion
 * work watches it and nvmfd_cq_notify_fn reports); worker, -1 (notify).
 * Per-queue, watch it edge-triggered (EPOLLET) and poll after every
 * nvmfd_cq_flush(): the ring runs in edge mode (nvmfd_bk_ring_set_edge()),
 * so local completions (RAM, null) raise no signal and polls do not read
 * the eventfd; a level-triggered watcher would see a stale count for ever.
 */
int nvmfd_cq_event_fd(const struct nvmfd_cq *cq);

/**
 * nvmfd_cq_clear_event() - per-queue: with nothing in flight, empty the
 * eventfd and reap once, so that a signal raised after its completion was
 * already reaped does not wake the owner when it registers the eventfd
 * afresh. No-op in shared mode. Context: owner, before sleeping.
 */
void nvmfd_cq_clear_event(struct nvmfd_cq *cq);

/** nvmfd_cq_source() - where the context's completions come from:
 *  NVMFD_CQ_SRC_QUEUE, _SHARED or _WORKER (never _POOL). */
enum nvmfd_cq_src nvmfd_cq_source(const struct nvmfd_cq *cq);

/** nvmfd_cq_ring_id() - shared ring number (stats), -1 in per-queue and
 *  worker mode. */
int nvmfd_cq_ring_id(const struct nvmfd_cq *cq);

/**
 * struct nvmfd_cq_stats - counters of one context.
 * @events:      polls that delivered >= 1 completion without @peek (or,
 *               shared, deliveries of routed ios).
 * @peeks:       per-queue polls with @peek that delivered >= 1 completion.
 * @completions: callbacks run.
 * @cqe_events:  polls (with or without @peek) that delivered >= 1
 *               completion the backend did not finish inline at submit:
 *               a CQE of the kernel, an io posted from another thread, or
 *               (shared) a routed delivery. A RAM or null namespace's
 *               inline completions count in @events (their eventfd
 *               wake-up) but not here: a shared ring would only add a
 *               hop to them (--exec auto's completion-source signal).
 */
struct nvmfd_cq_stats {
	uint64_t events;
	uint64_t peeks;
	uint64_t completions;
	uint64_t cqe_events;
};

/** nvmfd_cq_get_stats() - the counters nvmfd_cq_poll() keeps (relaxed
 *  reads; any thread while the context is open). */
void nvmfd_cq_get_stats(const struct nvmfd_cq *cq, struct nvmfd_cq_stats *st);

/**
 * nvmfd_cq_pool_stats_json() - the pool's shared rings as a JSON array of
 * {id, cpu, users, completion_events, empty_events, completions,
 * completions_per_event, peek_completions} (empty in per-queue mode).
 * Return: a new reference, or NULL on allocation failure. Context: any thread.
 */
json_object *nvmfd_cq_pool_stats_json(struct nvmfd_cq_pool *pool);

#endif /* NVMFD_INTERNAL_CQPOOL_H */
