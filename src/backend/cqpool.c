// SPDX-License-Identifier: MIT
/*
 * cqpool.c - completion pools (internal/cqpool.h): per-queue rings, or one
 * ring per io_cpu shared by the contexts placed there, with its own
 * completion work on that CPU and MPSC routing to each context's owner,
 * or (nvmfd_cq_open_worker()) the worker ring of a runtime pool.
 *
 * Worker contexts: the context's backend ring is an ext ring
 * (nvmfd_bk_ring_create_ext()): its SQEs are staged without a lock and
 * pushed onto the worker ring under the ring lock at flush, each with
 * user_data naming the io's own sink (io->sink); the worker ring's reaper
 * (the pool's worker, or anyone calling nvmfd_rt_ring_reap()) calls
 * cq_worker_cqe(), which posts the io back to our ring and, for the first
 * post of a batch, calls notify (the queue's kick). The owner finishes
 * the ios in nvmfd_cq_poll(). Submission is nvmfd_rt_ring_commit(): on the
 * pool's own worker the io_uring_enter() it makes next carries the
 * backend's SQEs with the socket's, and waits for all their CQEs.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "internal/cqpool.h"
#include "internal/log.h"
#include "internal/rt_ring.h"

#define COMP "cqpool"
#define CQ_SHARED_QUEUES 16
#define CQ_SHARED_DEPTH_MAX 32768u
#define CQ_REAP_MAX 1024u

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* One shared ring: reference counted by the contexts on its CPU. */
struct cq_ring {
	struct nvmfd_cq_pool *pool;
	struct cq_ring *next; /* pool->rings, pool->lock */
	unsigned int id;
	int cpu;
	unsigned int users; /* pool->lock */
	struct nvmfd_bk_ring *ring;
	int efd;
	pthread_mutex_t lock; /* every use of @ring */
	struct nvmfd_work work; /* completion work on @cpu */
	uint64_t events; /* atomic: completion-work runs */
	uint64_t empty_events; /* atomic: runs that found nothing */
	uint64_t completions; /* atomic: reaped by the work */
	uint64_t peek_completions; /* atomic: reaped by polling owners */
};

struct nvmfd_cq_pool {
	struct nvmfd_rt *rt;
	struct nvmfd_cq_pool_opts opts;
	pthread_mutex_t lock; /* rings, next_id; a leaf */
	struct cq_ring *rings;
	unsigned int next_id;
	unsigned int nr_open; /* pool->lock */
};

struct nvmfd_cq {
	struct nvmfd_cq_pool *pool;
	struct nvmfd_bk_ring *ring; /* own, or shared->ring */
	struct cq_ring *shared; /* NULL: per-queue or worker */
	struct nvmfd_rt_ring *rr; /* worker: the worker ring (borrowed) */
	nvmfd_cq_notify_fn notify;
	void *arg;
	unsigned int depth;
	struct nvmfd_bk_io *done; /* atomic: ios routed to us (LIFO) */
	uint32_t inflight; /* shared: our ios not yet delivered (owner) */
	struct nvmfd_cq_stats st; /* owner writes relaxed */
};

static inline void st_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, *p + v, __ATOMIC_RELAXED);
}

int nvmfd_cq_pool_create(struct nvmfd_rt *rt, const struct nvmfd_cq_pool_opts *opts,
			 struct nvmfd_cq_pool **out)
{
	struct nvmfd_cq_pool *pool;
	int ret;

	if (opts->shared && !rt)
		return -EINVAL;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	ret = -pthread_mutex_init(&pool->lock, NULL);
	if (ret) {
		free(pool);
		return ret;
	}
	pool->rt = rt;
	pool->opts = *opts;
	if (!pool->opts.shared_queues)
		pool->opts.shared_queues = CQ_SHARED_QUEUES;
	if (!pool->opts.shared_depth_max || pool->opts.shared_depth_max > CQ_SHARED_DEPTH_MAX)
		pool->opts.shared_depth_max = CQ_SHARED_DEPTH_MAX;
	if (!pool->opts.reap_max)
		pool->opts.reap_max = CQ_REAP_MAX;
	*out = pool;
	return 0;
}

void nvmfd_cq_pool_destroy(struct nvmfd_cq_pool **pp)
{
	struct nvmfd_cq_pool *pool = pp ? *pp : NULL;

	if (!pool)
		return;
	*pp = NULL;
	assert(!pool->rings && !pool->nr_open);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

/*
 * Target stop: the completion work of every shared ring moves to @rt (a
 * ring's CPU may be starved, and the queues draining their ios there
 * would wait for it); rings created later start there too. Each move waits
 * for a run in progress; the first run on @rt re-arms the eventfd.
 */
int nvmfd_cq_pool_move(struct nvmfd_cq_pool *pool, struct nvmfd_rt *rt)
{
	int ret = 0;

	if (!rt)
		return -EINVAL;
	pthread_mutex_lock(&pool->lock);
	pool->rt = rt;
	for (struct cq_ring *r = pool->rings; r && !ret; r = r->next)
		ret = nvmfd_rt_work_move(&r->work, rt, r->cpu, &r->efd, 1);
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

bool nvmfd_cq_pool_shared(const struct nvmfd_cq_pool *pool)
{
	return pool->opts.shared;
}

/*
 * The router of a shared ring, run by whoever reaps, under the ring lock:
 * push the io on its context's MPSC list; the push that finds the list
 * empty notifies the owner (later pushers rely on that notification: the
 * owner takes the whole list at once).
 */
static void cq_route(void *arg, struct nvmfd_bk_io *io, int res)
{
	struct nvmfd_cq *cq = io->cq;
	struct nvmfd_bk_io *head = __atomic_load_n(&cq->done, __ATOMIC_RELAXED);

	(void)arg;
	io->res = res;
	do {
		io->next = head;
	} while (!__atomic_compare_exchange_n(&cq->done, &head, io, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	if (!head && cq->notify)
		cq->notify(cq->arg);
}

/* The completion work of a shared ring: reap on its CPU, re-arm. */
static void cq_ring_work(struct nvmfd_work *w)
{
	struct cq_ring *r = container_of(w, struct cq_ring, work);
	int n, ret;

	pthread_mutex_lock(&r->lock);
	n = nvmfd_bk_ring_reap(r->ring, r->pool->opts.reap_max);
	pthread_mutex_unlock(&r->lock);
	__atomic_add_fetch(&r->events, 1, __ATOMIC_RELAXED);
	if (n > 0)
		__atomic_add_fetch(&r->completions, (uint64_t)n, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&r->empty_events, 1, __ATOMIC_RELAXED);
	ret = nvmfd_rt_watch_fd(&r->work, r->efd, EPOLLIN);
	if (ret && ret != -ECANCELED)
		NVMFD_ERR_RATELIMIT(COMP, "shared ring %u cpu %d: cannot watch: %s", r->id, r->cpu,
				    strerror(-ret));
}

/* Take a reference on the shared ring of @cpu, or create it. pool->lock held. */
static int cq_ring_get_locked(struct nvmfd_cq_pool *pool, int cpu, unsigned int depth,
			      struct cq_ring **out)
{
	unsigned long want = (unsigned long)pool->opts.shared_queues * depth;
	struct cq_ring *r;
	int ret;

	for (r = pool->rings; r; r = r->next) {
		if (r->cpu == cpu) {
			r->users++;
			*out = r;
			return 0;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = -pthread_mutex_init(&r->lock, NULL);
	if (ret)
		goto out_free;
	if (want > pool->opts.shared_depth_max)
		want = pool->opts.shared_depth_max;
	ret = nvmfd_bk_ring_create((unsigned int)want, pool->opts.iopoll, &r->ring);
	if (ret)
		goto out_destroy_lock;
	r->pool = pool;
	r->cpu = cpu;
	r->users = 1;
	r->efd = nvmfd_bk_ring_event_fd(r->ring);
	nvmfd_bk_ring_set_route(r->ring, cq_route, r);
	nvmfd_work_init(&r->work, pool->rt, cq_ring_work, cpu);
	ret = nvmfd_rt_watch_fd(&r->work, r->efd, EPOLLIN);
	if (ret)
		goto out_destroy_ring;
	r->id = pool->next_id++;
	r->next = pool->rings;
	pool->rings = r;
	NVMFD_DBG(COMP, "shared ring %u for cpu %d, depth %lu", r->id, cpu, want);
	*out = r;
	return 0;

out_destroy_ring:
	nvmfd_rt_work_cancel_sync(&r->work);
	nvmfd_rt_unwatch_fd(&r->work, r->efd);
	nvmfd_bk_ring_destroy(&r->ring);
out_destroy_lock:
	pthread_mutex_destroy(&r->lock);
out_free:
	free(r);
	return ret;
}

/* Drop a reference; the last one stops the completion work and frees. */
static void cq_ring_put(struct nvmfd_cq_pool *pool, struct cq_ring *r)
{
	struct cq_ring **pp;
	bool last;

	pthread_mutex_lock(&pool->lock);
	last = --r->users == 0;
	if (last) {
		for (pp = &pool->rings; *pp != r; pp = &(*pp)->next)
			;
		*pp = r->next;
	}
	pthread_mutex_unlock(&pool->lock);
	if (!last)
		return;
	nvmfd_rt_work_cancel_sync(&r->work);
	nvmfd_rt_unwatch_fd(&r->work, r->efd);
	nvmfd_bk_ring_destroy(&r->ring);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

bool nvmfd_cq_pool_can_share(const struct nvmfd_cq_pool *pool)
{
	return pool->opts.shared || pool->rt;
}

/* Worker: the reaper of the worker ring hands back our io's CQE (any
 * thread, ring lock held). Nothing of @io is touched after the post; @cq
 * lives until nvmfd_cq_close()'s pass through the ring lock. */
static void cq_worker_cqe(struct nvmfd_rt_sink *s, unsigned int tag, int res, uint32_t flags)
{
	struct nvmfd_bk_io *io = container_of(s, struct nvmfd_bk_io, sink);
	struct nvmfd_cq *cq = io->cq;

	(void)tag;
	(void)flags;
	if (nvmfd_bk_ring_post(cq->ring, io, res) && cq->notify)
		cq->notify(cq->arg);
}

/* Worker: the staged SQEs onto the worker ring (ext.push). */
static int cq_worker_push(void *arg, const struct io_uring_sqe *sqes, unsigned int n)
{
	struct nvmfd_cq *cq = arg;
	unsigned int i;
	int ret;

	nvmfd_rt_ring_lock(cq->rr);
	for (i = 0; i < n; i++) {
		struct nvmfd_bk_io *io = (struct nvmfd_bk_io *)(uintptr_t)sqes[i].user_data;
		struct io_uring_sqe *sqe = nvmfd_rt_ring_sqe(cq->rr);

		if (!sqe)
			break; /* the kernel takes none now: the rest stay staged */
		memcpy(sqe, &sqes[i], sizeof(*sqe));
		io->cq = cq;
		io->sink.cqe = cq_worker_cqe;
		io_uring_sqe_set_data64(sqe, nvmfd_rt_ring_data(&io->sink, 0));
	}
	nvmfd_rt_ring_unlock(cq->rr);
	if (i) {
		/* lazy on the ring's own worker; on a failure here the SQEs
		 * are on the ring's SQ all the same, and its worker's next
		 * io_uring_enter() takes them */
		ret = nvmfd_rt_ring_commit(cq->rr);
		if (ret < 0)
			NVMFD_ERR_RATELIMIT(COMP, "worker ring: io_uring_enter: %s", strerror(-ret));
	}
	return (int)i;
}

/* Worker: the owner should come back (ext.kick). */
static void cq_worker_kick(void *arg)
{
	struct nvmfd_cq *cq = arg;

	if (cq->notify)
		cq->notify(cq->arg);
}

/* Worker: a close waits for CQEs (ext.wait): what we pushed goes to the
 * kernel now (also on the ring's own worker, which makes no enter while
 * it waits here), and the ring is reaped here (its worker may be busy). */
static void cq_worker_wait(void *arg)
{
	struct nvmfd_cq *cq = arg;
	struct timespec ts = { 0, 100000 }; /* 100 us */

	nvmfd_rt_ring_submit(cq->rr);
	if (!nvmfd_rt_ring_reap(cq->rr))
		nanosleep(&ts, NULL);
}

int nvmfd_cq_open_worker(struct nvmfd_cq_pool *pool, struct nvmfd_rt_ring *rr,
			 unsigned int depth, nvmfd_cq_notify_fn notify, void *arg,
			 struct nvmfd_cq **out)
{
	struct nvmfd_bk_ring_ext ext = {
		.push = cq_worker_push,
		.kick = cq_worker_kick,
		.wait = cq_worker_wait,
	};
	struct nvmfd_cq *cq;
	int ret;

	if (!rr)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->pool = pool;
	cq->rr = rr;
	cq->depth = depth;
	cq->notify = notify;
	cq->arg = arg;
	ext.arg = cq;
	ret = nvmfd_bk_ring_create_ext(depth, &ext, &cq->ring);
	if (ret) {
		free(cq);
		return ret;
	}
	pthread_mutex_lock(&pool->lock);
	pool->nr_open++;
	pthread_mutex_unlock(&pool->lock);
	*out = cq;
	return 0;
}

int nvmfd_cq_open(struct nvmfd_cq_pool *pool, int io_cpu, unsigned int depth,
		  nvmfd_cq_notify_fn notify, void *arg, struct nvmfd_cq **out)
{
	return nvmfd_cq_open_src(pool, io_cpu, depth, NVMFD_CQ_SRC_POOL, notify, arg, out);
}

int nvmfd_cq_open_src(struct nvmfd_cq_pool *pool, int io_cpu, unsigned int depth,
		      enum nvmfd_cq_src src, nvmfd_cq_notify_fn notify, void *arg,
		      struct nvmfd_cq **out)
{
	bool shared = src == NVMFD_CQ_SRC_POOL ? pool->opts.shared : src == NVMFD_CQ_SRC_SHARED;
	struct nvmfd_cq *cq;
	int ret;

	if ((shared && !pool->rt) || src == NVMFD_CQ_SRC_WORKER)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->pool = pool;
	cq->depth = depth;
	cq->notify = notify;
	cq->arg = arg;
	pthread_mutex_lock(&pool->lock);
	if (shared) {
		ret = cq_ring_get_locked(pool, io_cpu, depth, &cq->shared);
		if (!ret)
			cq->ring = cq->shared->ring;
	} else {
		ret = nvmfd_bk_ring_create(depth, pool->opts.iopoll, &cq->ring);
		if (!ret) /* the owner watches it edge-triggered (cqpool.h) */
			nvmfd_bk_ring_set_edge(cq->ring, true);
	}
	if (!ret)
		pool->nr_open++;
	pthread_mutex_unlock(&pool->lock);
	if (ret) {
		free(cq);
		return ret;
	}
	*out = cq;
	return 0;
}

void nvmfd_cq_close(struct nvmfd_cq **cqp)
{
	struct nvmfd_cq *cq = cqp ? *cqp : NULL;
	struct nvmfd_cq_pool *pool;

	if (!cq)
		return;
	*cqp = NULL;
	pool = cq->pool;
	/* a worker context may close with ios in flight (cqpool.h) */
	assert(cq->rr || nvmfd_cq_inflight(cq) == 0);
	if (cq->rr) {
		nvmfd_bk_ring_destroy(&cq->ring); /* waits for the CQEs owed */
		/* a reaper that posted our last CQE may still be in its
		 * notify call: it holds the ring lock until it returned */
		nvmfd_rt_ring_lock(cq->rr);
		nvmfd_rt_ring_unlock(cq->rr);
	} else if (cq->shared) {
		/* A router that pushed our last io may still be in its notify
		 * call: it holds the ring lock until it returned. */
		pthread_mutex_lock(&cq->shared->lock);
		pthread_mutex_unlock(&cq->shared->lock);
		cq_ring_put(pool, cq->shared);
	} else {
		nvmfd_bk_ring_destroy(&cq->ring);
	}
	pthread_mutex_lock(&pool->lock);
	pool->nr_open--;
	pthread_mutex_unlock(&pool->lock);
	free(cq);
}

static int cq_submit_once(struct nvmfd_cq *cq, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	int ret = nvmfd_bk_submit(cq->ring, bk, io);

	if (ret == -EBUSY) {
		nvmfd_bk_ring_flush(cq->ring);
		nvmfd_bk_ring_reap(cq->ring, UINT_MAX);
		ret = nvmfd_bk_submit(cq->ring, bk, io);
	}
	return ret;
}

int nvmfd_cq_submit(struct nvmfd_cq *cq, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	int ret;

	if (!cq->shared)
		return cq_submit_once(cq, bk, io);
	io->cq = cq;
	pthread_mutex_lock(&cq->shared->lock);
	ret = cq_submit_once(cq, bk, io);
	pthread_mutex_unlock(&cq->shared->lock);
	if (!ret)
		cq->inflight++;
	return ret;
}

int nvmfd_cq_flush(struct nvmfd_cq *cq)
{
	int ret;

	if (!cq->shared)
		return nvmfd_bk_ring_flush(cq->ring);
	pthread_mutex_lock(&cq->shared->lock);
	ret = nvmfd_bk_ring_flush(cq->ring);
	pthread_mutex_unlock(&cq->shared->lock);
	return ret;
}

/* Shared: run the callbacks of every io routed to us, oldest first (the
 * list is LIFO), without the ring lock (a callback may submit again). */
static unsigned int cq_drain(struct nvmfd_cq *cq)
{
	struct nvmfd_bk_io *l = __atomic_exchange_n(&cq->done, NULL, __ATOMIC_ACQUIRE);
	struct nvmfd_bk_io *fifo = NULL, *io;
	unsigned int n = 0;

	while (l) {
		io = l;
		l = io->next;
		io->next = fifo;
		fifo = io;
	}
	while (fifo) {
		io = fifo;
		fifo = io->next;
		io->next = NULL;
		cq->inflight--;
		n++;
		io->cb(io, io->res);
	}
	return n;
}

/* A poll that delivered @n completions: the callbacks, and one event (an
 * eventfd wake-up, or routed ios) or one peek (found by polling); also one
 * cqe_event when @cqes of them came from the kernel or another thread. */
static void cq_count(struct nvmfd_cq *cq, bool peeked, int n, unsigned int cqes)
{
	if (n <= 0)
		return;
	st_add(&cq->st.completions, (uint64_t)n);
	st_add(peeked ? &cq->st.peeks : &cq->st.events, 1);
	if (cqes)
		st_add(&cq->st.cqe_events, 1);
}

unsigned int nvmfd_cq_poll(struct nvmfd_cq *cq, bool peek, unsigned int max)
{
	int n;

	if (!cq->shared) {
		if (!nvmfd_bk_ring_inflight(cq->ring))
			return 0;
		/* worker, polling: reap the worker ring ourselves (its sinks
		 * post our CQEs, and queue the ring's other users) */
		if (cq->rr && peek)
			nvmfd_rt_ring_reap(cq->rr);
		n = nvmfd_bk_ring_reap(cq->ring, max);
		cq_count(cq, peek, n, nvmfd_bk_ring_last_reap_events(cq->ring));
		return n > 0 ? (unsigned int)n : 0;
	}
	if (peek && cq->inflight) {
		pthread_mutex_lock(&cq->shared->lock);
		n = nvmfd_bk_ring_reap(cq->ring, cq->pool->opts.reap_max);
		pthread_mutex_unlock(&cq->shared->lock);
		if (n > 0)
			__atomic_add_fetch(&cq->shared->peek_completions, (uint64_t)n,
					   __ATOMIC_RELAXED);
	}
	n = (int)cq_drain(cq);
	/* routed deliveries are events of the ring's completion work (a
	 * hop from another thread, even for an io completed inline) */
	cq_count(cq, false, n, (unsigned int)n);
	return (unsigned int)n;
}

unsigned int nvmfd_cq_inflight(const struct nvmfd_cq *cq)
{
	return cq->shared ? cq->inflight : nvmfd_bk_ring_inflight(cq->ring);
}

int nvmfd_cq_event_fd(const struct nvmfd_cq *cq)
{
	return cq->shared ? -1 : nvmfd_bk_ring_event_fd(cq->ring);
}

void nvmfd_cq_clear_event(struct nvmfd_cq *cq)
{
	if (!cq->shared && !cq->rr && !nvmfd_bk_ring_inflight(cq->ring)) {
		nvmfd_bk_ring_clear_event(cq->ring);
		nvmfd_bk_ring_reap(cq->ring, cq->depth);
	}
}

enum nvmfd_cq_src nvmfd_cq_source(const struct nvmfd_cq *cq)
{
	return cq->rr ? NVMFD_CQ_SRC_WORKER : cq->shared ? NVMFD_CQ_SRC_SHARED : NVMFD_CQ_SRC_QUEUE;
}

int nvmfd_cq_ring_id(const struct nvmfd_cq *cq)
{
	return cq->shared ? (int)cq->shared->id : -1;
}

void nvmfd_cq_get_stats(const struct nvmfd_cq *cq, struct nvmfd_cq_stats *st)
{
	st->events = __atomic_load_n(&cq->st.events, __ATOMIC_RELAXED);
	st->peeks = __atomic_load_n(&cq->st.peeks, __ATOMIC_RELAXED);
	st->cqe_events = __atomic_load_n(&cq->st.cqe_events, __ATOMIC_RELAXED);
	st->completions = __atomic_load_n(&cq->st.completions, __ATOMIC_RELAXED);
}

json_object *nvmfd_cq_pool_stats_json(struct nvmfd_cq_pool *pool)
{
	json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	pthread_mutex_lock(&pool->lock);
	for (struct cq_ring *r = pool->rings; r; r = r->next) {
		uint64_t ev = __atomic_load_n(&r->events, __ATOMIC_RELAXED);
		uint64_t cm = __atomic_load_n(&r->completions, __ATOMIC_RELAXED);
		json_object *o = json_object_new_object();

		if (!o)
			break;
		json_object_object_add(o, "id", json_object_new_int((int)r->id));
		json_object_object_add(o, "cpu", json_object_new_int(r->cpu));
		json_object_object_add(o, "users", json_object_new_int((int)r->users));
		json_object_object_add(o, "completion_events", json_object_new_uint64(ev));
		json_object_object_add(
			o, "empty_events",
			json_object_new_uint64(__atomic_load_n(&r->empty_events, __ATOMIC_RELAXED)));
		json_object_object_add(o, "completions", json_object_new_uint64(cm));
		json_object_object_add(o, "completions_per_event",
				       json_object_new_double(ev ? (double)cm / (double)ev : 0.0));
		json_object_object_add(o, "peek_completions",
				       json_object_new_uint64(__atomic_load_n(
					       &r->peek_completions, __ATOMIC_RELAXED)));
		json_object_array_add(arr, o);
	}
	pthread_mutex_unlock(&pool->lock);
	return arr;
}
