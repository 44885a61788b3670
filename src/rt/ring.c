// SPDX-License-Identifier: MIT
/*
 * ring.c - the worker ring of a bound pool (internal/rt_ring.h).
 *
 * The pool's epoll fd is one multishot IORING_OP_POLL_ADD on the ring
 * (user_data RING_DATA_EPOLL): when it posts, the worker drains the epoll
 * set without sleeping (pool.c). It stays armed across CQEs; a CQE without
 * IORING_CQE_F_MORE ends it and the next wait arms it again.
 *
 * Submission: SQEs become visible to the kernel by our own SQ flush (the
 * store of the SQ tail, under the ring lock), and io_uring_enter() is
 * called without the lock with the count of SQEs not yet consumed: the
 * kernel takes at most what is there, so two threads entering at once
 * submit each SQE once, and a worker sleeping in the kernel holds no lock
 * that a submitter needs. The SQ index array is set up as the identity
 * once (it is with every liburing that maps it; doing it again is free).
 *
 * A reap on a thread that is not one of the pool's workers may take the
 * epoll request's CQE (or end it): it then submits a NOP (user_data
 * RING_DATA_WAKE), whose CQE is posted at once, so that a worker asleep
 * in the ring wakes, sees the flag and looks at the epoll set (and arms
 * the request again). A NOP needs no task work of any thread, unlike a
 * poll request, which is why the wake is not re-armed from there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>

#include "internal/log.h"
#include "internal/rt_ring.h"
#include "rt/rt_int.h"

#define RING_DATA_EPOLL 1ull /* a NULL sink, tag 1 */
#define RING_DATA_WAKE 2ull /* a NULL sink, tag 2 */
#define RING_NBGID 65536u

struct nvmfd_rt_ring {
	struct io_uring ring;
	bool has_ring;
	bool lock_init;
	pthread_mutex_t lock;
	int epfd; /* the pool's, borrowed */
	unsigned int pool_idx;
	/* ring lock */
	bool epoll_armed;
	bool epoll_seen; /* an epoll CQE was reaped and not yet taken */
	uint64_t bgid_map[RING_NBGID / 64];
	struct nvmfd_rt_ring_stats st; /* written under the ring lock, or by the worker */
};

static inline void st_add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

int nvmfd__rt_ring_create(int epfd, unsigned int pool_idx, unsigned int sq_entries,
			  unsigned int cq_entries, struct nvmfd_rt_ring **out)
{
	struct io_uring_params p;
	struct nvmfd_rt_ring *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->epfd = epfd;
	r->pool_idx = pool_idx;
	ret = -pthread_mutex_init(&r->lock, NULL);
	if (ret)
		goto out_free;
	r->lock_init = true;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = cq_entries;
	ret = io_uring_queue_init_params(sq_entries, &r->ring, &p);
	if (ret < 0)
		goto out_free;
	r->has_ring = true;
	for (unsigned int i = 0; i < r->ring.sq.ring_entries; i++)
		r->ring.sq.array[i] = i;
	*out = r;
	return 0;

out_free:
	nvmfd__rt_ring_destroy(r);
	return ret;
}

void nvmfd__rt_ring_destroy(struct nvmfd_rt_ring *r)
{
	if (!r)
		return;
	if (r->has_ring)
		io_uring_queue_exit(&r->ring); /* cancels the epoll request */
	if (r->lock_init)
		pthread_mutex_destroy(&r->lock);
	free(r);
}

struct io_uring *nvmfd_rt_ring_uring(struct nvmfd_rt_ring *r)
{
	return &r->ring;
}

void nvmfd_rt_ring_lock(struct nvmfd_rt_ring *r)
{
	pthread_mutex_lock(&r->lock);
}

void nvmfd_rt_ring_unlock(struct nvmfd_rt_ring *r)
{
	pthread_mutex_unlock(&r->lock);
}

/* Make the prepared SQEs visible to the kernel. Ring lock held.
 * Return: SQEs the kernel has not consumed yet. */
static unsigned int ring_flush(struct nvmfd_rt_ring *r)
{
	struct io_uring_sq *sq = &r->ring.sq;

	if (sq->sqe_head != sq->sqe_tail) {
		sq->sqe_head = sq->sqe_tail;
		__atomic_store_n(sq->ktail, sq->sqe_tail, __ATOMIC_RELEASE);
	}
	return sq->sqe_tail - __atomic_load_n(sq->khead, __ATOMIC_ACQUIRE);
}

/* io_uring_enter() for @n SQEs, waiting for a CQE when @wait. */
static int ring_enter(struct nvmfd_rt_ring *r, unsigned int n, bool wait)
{
	int ret;

	if (!n && !wait)
		return 0;
	ret = io_uring_enter((unsigned int)r->ring.ring_fd, n, wait ? 1 : 0,
			     wait ? IORING_ENTER_GETEVENTS : 0, NULL);
	if (wait)
		st_add(&r->st.waits, 1);
	else
		st_add(&r->st.submits, 1);
	if (ret > 0)
		st_add(&r->st.sqes, (uint64_t)ret);
	return ret < 0 ? ret : 0;
}

struct io_uring_sqe *nvmfd_rt_ring_sqe(struct nvmfd_rt_ring *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);

	if (!sqe) {
		/* full: the kernel takes what waits (under the lock: rare) */
		ring_enter(r, ring_flush(r), false);
		sqe = io_uring_get_sqe(&r->ring);
	}
	return sqe;
}

int nvmfd_rt_ring_commit(struct nvmfd_rt_ring *r)
{
	if (nvmfd__rt_self_ring() == r)
		return 0; /* our next io_uring_enter() carries them */
	return nvmfd_rt_ring_submit(r);
}

int nvmfd_rt_ring_submit(struct nvmfd_rt_ring *r)
{
	unsigned int n;
	int ret;

	pthread_mutex_lock(&r->lock);
	n = ring_flush(r);
	pthread_mutex_unlock(&r->lock);
	do
		ret = ring_enter(r, n, false);
	while (ret == -EINTR);
	return ret;
}

/* Arm the epoll request if it is not. Ring lock held. */
static void ring_arm_epoll(struct nvmfd_rt_ring *r)
{
	struct io_uring_sqe *sqe;

	if (r->epoll_armed)
		return;
	sqe = nvmfd_rt_ring_sqe(r);
	if (!sqe)
		return; /* the next wait retries */
	io_uring_prep_poll_multishot(sqe, r->epfd, POLLIN);
	io_uring_sqe_set_data64(sqe, RING_DATA_EPOLL);
	r->epoll_armed = true;
}

/* Take the CQEs. Ring lock held. Return: CQEs taken. */
static unsigned int ring_reap_locked(struct nvmfd_rt_ring *r)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&r->ring, head, cqe) {
		uint64_t data = cqe->user_data;
		struct nvmfd_rt_sink *s =
			(struct nvmfd_rt_sink *)(uintptr_t)(data & ~(uint64_t)NVMFD_RT_RING_TAG_MASK);

		n++;
		if (s) {
			s->cqe(s, (unsigned int)(data & NVMFD_RT_RING_TAG_MASK), cqe->res,
			       cqe->flags);
			continue;
		}
		if (data == RING_DATA_EPOLL) {
			st_add(&r->st.epoll_cqes, 1);
			r->epoll_seen = true;
			if (!(cqe->flags & IORING_CQE_F_MORE))
				r->epoll_armed = false;
		}
		/* RING_DATA_WAKE: nothing to do but to have woken us */
	}
	if (n) {
		io_uring_cq_advance(&r->ring, n);
		st_add(&r->st.cqes, n);
	}
	return n;
}

unsigned int nvmfd_rt_ring_reap(struct nvmfd_rt_ring *r)
{
	bool wake = false;
	unsigned int n;

	pthread_mutex_lock(&r->lock);
	n = ring_reap_locked(r);
	if (r->epoll_seen && nvmfd__rt_self_ring() != r) {
		struct io_uring_sqe *sqe = nvmfd_rt_ring_sqe(r);

		if (sqe) {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, RING_DATA_WAKE);
			wake = true;
		}
	}
	if (wake) {
		unsigned int m = ring_flush(r);

		pthread_mutex_unlock(&r->lock);
		ring_enter(r, m, false);
	} else {
		pthread_mutex_unlock(&r->lock);
	}
	return n;
}

unsigned int nvmfd__rt_ring_worker_reap(struct nvmfd_rt_ring *r, bool *epoll)
{
	unsigned int n = 0;

	pthread_mutex_lock(&r->lock);
	n = ring_reap_locked(r);
	*epoll = r->epoll_seen;
	r->epoll_seen = false;
	pthread_mutex_unlock(&r->lock);
	return n;
}

int nvmfd__rt_ring_enter(struct nvmfd_rt_ring *r, bool wait)
{
	unsigned int n;

	pthread_mutex_lock(&r->lock);
	/* a reap inside a work item may have taken CQEs we must act on */
	if (wait && (r->epoll_seen || io_uring_cq_ready(&r->ring)))
		wait = false;
	if (wait)
		ring_arm_epoll(r);
	n = ring_flush(r);
	pthread_mutex_unlock(&r->lock);
	return ring_enter(r, n, wait);
}

int nvmfd_rt_ring_bgid_get(struct nvmfd_rt_ring *r)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&r->lock);
	for (unsigned int i = 0; i < RING_NBGID / 64; i++) {
		if (r->bgid_map[i] == UINT64_MAX)
			continue;
		for (unsigned int b = 0; b < 64; b++) {
			if (!(r->bgid_map[i] & (1ull << b))) {
				r->bgid_map[i] |= 1ull << b;
				ret = (int)(i * 64 + b);
				goto out;
			}
		}
	}
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void nvmfd_rt_ring_bgid_put(struct nvmfd_rt_ring *r, int bgid)
{
	if (bgid < 0 || (unsigned int)bgid >= RING_NBGID)
		return;
	pthread_mutex_lock(&r->lock);
	r->bgid_map[bgid / 64] &= ~(1ull << (bgid % 64));
	pthread_mutex_unlock(&r->lock);
}

void nvmfd_rt_ring_get_stats(struct nvmfd_rt_ring *r, struct nvmfd_rt_ring_stats *st)
{
	st->waits = __atomic_load_n(&r->st.waits, __ATOMIC_RELAXED);
	st->submits = __atomic_load_n(&r->st.submits, __ATOMIC_RELAXED);
	st->sqes = __atomic_load_n(&r->st.sqes, __ATOMIC_RELAXED);
	st->cqes = __atomic_load_n(&r->st.cqes, __ATOMIC_RELAXED);
	st->epoll_cqes = __atomic_load_n(&r->st.epoll_cqes, __ATOMIC_RELAXED);
}
