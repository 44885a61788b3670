// SPDX-License-Identifier: MIT
/*
 * ring.c - the backend completion ring: one io_uring (plus an optional
 * IOPOLL io_uring for O_DIRECT block devices), an eventfd, the local
 * completion list of RAM/NULL/synchronous ops, submit batching and reaping.
 *
 * Accounting: @inflight counts ios from nvmfd_bk_submit() until their
 * callback has started, whatever io_uring they are on. It never exceeds
 * @depth, and an io holds at most one SQE at a time (continuations are
 * queued only after the previous CQE was consumed), so neither SQ (depth
 * entries) can run out and the CQ (2 * depth) cannot overflow.
 *
 * Event fd: registered on the main io_uring, so the kernel makes it readable
 * whenever it posts a CQE. Local completions and IOPOLL submissions write it
 * from user space at flush time. Reap clears it first and then peeks, so a
 * CQE posted after the clear signals again and no wake-up is lost; if reap
 * stops at @max with work left, or IOPOLL ios are still in flight (their
 * completions are only found by polling), it re-arms the event fd so an
 * event-driven owner comes back.
 *
 * Ext rings (nvmfd_bk_ring_create_ext(): the backend's SQEs on a worker
 * ring, cqpool.c): no io_uring and no eventfd of our own. SQEs are
 * prepared into @stage (the owner's, no lock), flushed by ext.push onto
 * the real io_uring; its reaper posts each CQE (nvmfd_bk_ring_post(): a
 * lock-free LIFO, @posted) and the owner's reap takes the whole list, puts
 * it in order on @ext_head and finishes the ios there as ring_reap_uring()
 * does: continuations are staged again, callbacks run on the owner. The
 * accounting is the same: @uring_inflight counts SQEs staged, pushed or
 * posted and not yet taken by a reap. Signals (more left, a flush that
 * failed) become ext.kick.
 */
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

/* io_uring accepts at most 32768 SQ entries (IORING_MAX_ENTRIES). */
#define RING_MAX_DEPTH 32768u
/* Ext rings: SQEs staged between two pushes at most (a full stage pushes). */
#define RING_STAGE_MAX 64u

struct nvmfd_bk_ring {
	struct io_uring uring; /* main ring, eventfd registered */
	struct io_uring poll; /* IORING_SETUP_IOPOLL ring, if @has_poll */
	bool has_uring;
	bool has_poll;
	bool edge; /* nvmfd_bk_ring_set_edge() */
	int efd;
	unsigned int depth;
	unsigned int inflight; /* submitted, callback not yet started */
	unsigned int uring_inflight; /* SQEs on @uring without a reaped CQE */
	unsigned int poll_inflight; /* SQEs on @poll without a reaped CQE */
	unsigned int queued; /* SQEs prepared on @uring since the last flush */
	unsigned int poll_queued; /* same for @poll */
	unsigned int local_new; /* local completions since the last flush */
	unsigned int last_reap_events; /* last reap: ios not completed inline */
	struct nvmfd_bk_io *done_head; /* local completions, FIFO via ->next */
	struct nvmfd_bk_io *done_tail;
	struct nvmfd_bk_ring_stats st;
	nvmfd_bk_route_fn route; /* shared ring: completions go here, not io->cb */
	void *route_arg;
	/* ext rings (file comment); @queued counts the staged SQEs */
	bool has_ext;
	struct nvmfd_bk_ring_ext ext;
	struct io_uring_sqe *stage;
	unsigned int stage_cap;
	struct nvmfd_bk_io *posted; /* atomic: CQEs posted, LIFO via ->next */
	struct nvmfd_bk_io *ext_head; /* owner: posted ios taken, FIFO */
	struct nvmfd_bk_io *ext_tail;
};

static unsigned int ring_roundup_pow2(unsigned int v)
{
	unsigned int p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* A zeroed ring of @depth (rounded up) with no eventfd yet; NULL on ENOMEM. */
static struct nvmfd_bk_ring *ring_alloc(unsigned int depth)
{
	struct nvmfd_bk_ring *ring = calloc(1, sizeof(*ring));

	if (!ring)
		return NULL;
	ring->efd = -1;
	ring->depth = ring_roundup_pow2(depth);
	return ring;
}

/**
 * nvmfd_bk_ring_create() - see backend.h.
 * @depth:  maximum in-flight ios, 1..32768, rounded up to a power of two.
 * @iopoll: also set up an IOPOLL io_uring for O_DIRECT block devices; when
 *          the kernel refuses it the ring silently works without.
 * @out:    receives the ring (caller owns it, nvmfd_bk_ring_destroy()).
 * Return: 0, -EINVAL (depth 0 or too large, NULL @out), -ENOMEM, -ENOSYS or
 *         -EPERM when io_uring is unavailable, other -errno from
 *         io_uring_queue_init()/eventfd()/io_uring_register_eventfd().
 * Context: any thread; the ring is then used by one owner at a time.
 */
int nvmfd_bk_ring_create(unsigned int depth, bool iopoll, struct nvmfd_bk_ring **out)
{
	struct nvmfd_bk_ring *ring;
	int rc;

	if (!out || depth == 0 || depth > RING_MAX_DEPTH)
		return -EINVAL;
	*out = NULL;
	ring = ring_alloc(depth);
	if (!ring)
		return -ENOMEM;

	rc = io_uring_queue_init(ring->depth, &ring->uring, 0);
	if (rc < 0)
		goto out_free_ring;
	ring->has_uring = true;

	ring->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ring->efd < 0) {
		rc = -errno;
		goto out_exit_uring;
	}
	rc = io_uring_register_eventfd(&ring->uring, ring->efd);
	if (rc < 0)
		goto out_close_efd;

	/*
	 * IOPOLL only works for O_DIRECT reads/writes on devices with poll
	 * queues; setup itself may be refused (old kernel, policy). Either way
	 * the main ring carries everything, so a failure here is not an error.
	 */
	if (iopoll && io_uring_queue_init(ring->depth, &ring->poll, IORING_SETUP_IOPOLL) == 0)
		ring->has_poll = true;

	*out = ring;
	return 0;

out_close_efd:
	close(ring->efd);
out_exit_uring:
	io_uring_queue_exit(&ring->uring);
out_free_ring:
	free(ring);
	return rc;
}

/**
 * nvmfd_bk_ring_create_ext() - see backend.h.
 * @depth: maximum in-flight ios, 1..32768, rounded up to a power of two.
 * @ext:   the io_uring's callbacks (copied).
 * @out:   receives the ring (caller owns it, nvmfd_bk_ring_destroy()).
 * Return: 0, -EINVAL, -ENOMEM. Context: any thread.
 */
int nvmfd_bk_ring_create_ext(unsigned int depth, const struct nvmfd_bk_ring_ext *ext,
			     struct nvmfd_bk_ring **out)
{
	struct nvmfd_bk_ring *ring;

	if (!out || !ext || !ext->push || !ext->wait || depth == 0 || depth > RING_MAX_DEPTH)
		return -EINVAL;
	*out = NULL;
	ring = ring_alloc(depth);
	if (!ring)
		return -ENOMEM;
	ring->has_ext = true;
	ring->ext = *ext;
	ring->edge = true; /* the owner reaps after its flushes (file comment) */
	ring->stage_cap = ring->depth < RING_STAGE_MAX ? ring->depth : RING_STAGE_MAX;
	ring->stage = calloc(ring->stage_cap, sizeof(*ring->stage));
	if (!ring->stage) {
		free(ring);
		return -ENOMEM;
	}
	*out = ring;
	return 0;
}

/* Ext: the posted list in posting order, appended to @ext_head. */
static void ring_ext_take(struct nvmfd_bk_ring *ring)
{
	struct nvmfd_bk_io *l = __atomic_exchange_n(&ring->posted, NULL, __ATOMIC_ACQUIRE);
	struct nvmfd_bk_io *fifo = NULL, *tail = l, *io;

	while (l) {
		io = l;
		l = io->next;
		io->next = fifo;
		fifo = io;
	}
	if (!fifo)
		return;
	if (ring->ext_tail)
		ring->ext_tail->next = fifo;
	else
		ring->ext_head = fifo;
	ring->ext_tail = tail;
}

bool nvmfd_bk_ring_post(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res)
{
	struct nvmfd_bk_io *head = __atomic_load_n(&ring->posted, __ATOMIC_RELAXED);

	io->res = res;
	do {
		io->next = head;
	} while (!__atomic_compare_exchange_n(&ring->posted, &head, io, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	/* nothing of @ring or @io is touched after the exchange */
	return !head;
}

/* Ext destroy: staged SQEs never reached the kernel; wait until every
 * pushed one was posted (their buffers are not touched after that). */
static void ring_ext_drain(struct nvmfd_bk_ring *ring)
{
	ring->uring_inflight -= ring->queued;
	ring->queued = 0;
	for (;;) {
		ring_ext_take(ring);
		while (ring->ext_head) {
			ring->ext_head = ring->ext_head->next;
			ring->uring_inflight--;
		}
		ring->ext_tail = NULL;
		if (!ring->uring_inflight)
			break;
		ring->ext.wait(ring->ext.arg);
	}
}

/* Wait for the CQEs of every SQE still owned by the kernel on @u, so no
 * buffer is touched after destroy returns. Callbacks are not run. */
static void ring_drain(struct io_uring *u, unsigned int *count)
{
	struct io_uring_cqe *cqe;
	unsigned int unsent;

	if (!*count)
		return;
	/* SQEs the kernel would not take never complete: don't wait for them. */
	io_uring_submit(u);
	unsent = io_uring_sq_ready(u);
	*count -= unsent < *count ? unsent : *count;
	while (*count) {
		if (io_uring_wait_cqe(u, &cqe) < 0)
			return;
		io_uring_cqe_seen(u, cqe);
		(*count)--;
	}
}

/**
 * nvmfd_bk_ring_destroy() - release @ring and NULL *@ringp.
 * @ringp: the ring. The owner should reap everything first; ios still in
 *         flight are waited for (their buffers are no longer touched when
 *         this returns) but their callbacks are NOT run.
 * Context: ring owner; may block while the kernel finishes in-flight ios.
 */
void nvmfd_bk_ring_destroy(struct nvmfd_bk_ring **ringp)
{
	struct nvmfd_bk_ring *ring;

	if (!ringp || !*ringp)
		return;
	ring = *ringp;
	/* ext: the reapers that post our CQEs find us through *@ringp (a
	 * context's field) until every CQE is back */
	if (ring->has_ext)
		ring_ext_drain(ring);
	*ringp = NULL;
	if (ring->has_ext)
		free(ring->stage);
	if (ring->has_poll) {
		ring_drain(&ring->poll, &ring->poll_inflight);
		io_uring_queue_exit(&ring->poll);
	}
	if (ring->has_uring) {
		ring_drain(&ring->uring, &ring->uring_inflight);
		io_uring_unregister_eventfd(&ring->uring);
		io_uring_queue_exit(&ring->uring);
	}
	if (ring->efd >= 0)
		close(ring->efd);
	free(ring);
}

/**
 * nvmfd_bk_ring_event_fd() - the ring's eventfd (owned by the ring).
 * @ring: borrowed.
 * Return: the fd (>= 0).
 * Context: any thread.
 */
int nvmfd_bk_ring_event_fd(const struct nvmfd_bk_ring *ring)
{
	return ring->efd;
}

/**
 * nvmfd_bk_ring_inflight() - ios submitted whose callback has not run.
 * @ring: borrowed.
 * Return: the count.
 * Context: ring owner.
 */
unsigned int nvmfd_bk_ring_last_reap_events(const struct nvmfd_bk_ring *ring)
{
	return ring->last_reap_events;
}

unsigned int nvmfd_bk_ring_inflight(const struct nvmfd_bk_ring *ring)
{
	return ring->inflight;
}

/**
 * nvmfd_bk_ring_get_stats() - copy the counters.
 * @ring: borrowed.  @st: filled.
 * Context: ring owner (or any thread accepting torn values).
 */
void nvmfd_bk_ring_get_stats(const struct nvmfd_bk_ring *ring, struct nvmfd_bk_ring_stats *st)
{
	*st = ring->st;
}

struct io_uring_sqe *nvmfd__bk_ring_get_sqe(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io,
					    bool iopoll)
{
	struct io_uring_sqe *sqe;

	if (ring->has_ext) {
		if (ring->queued == ring->stage_cap && nvmfd_bk_ring_flush(ring) < 0)
			return NULL;
		if (ring->queued == ring->stage_cap)
			return NULL;
		sqe = &ring->stage[ring->queued];
		memset(sqe, 0, sizeof(*sqe));
		io->flags &= ~BK_IOF_IOPOLL;
		ring->queued++;
		ring->uring_inflight++;
	} else if (iopoll && ring->has_poll) {
		sqe = io_uring_get_sqe(&ring->poll);
		if (!sqe)
			return NULL;
		io->flags |= BK_IOF_IOPOLL;
		ring->poll_queued++;
		ring->poll_inflight++;
	} else {
		sqe = io_uring_get_sqe(&ring->uring);
		if (!sqe)
			return NULL;
		io->flags &= ~BK_IOF_IOPOLL;
		ring->queued++;
		ring->uring_inflight++;
	}
	io_uring_sqe_set_data(sqe, io);
	return sqe;
}

void nvmfd__bk_ring_complete_local(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res)
{
	io->res = res;
	io->next = NULL;
	if (ring->done_tail)
		ring->done_tail->next = io;
	else
		ring->done_head = io;
	ring->done_tail = io;
	ring->local_new++;
}

static bool ring_op_valid(enum nvmfd_bk_op op)
{
	switch (op) {
	case NVMFD_BK_READ:
	case NVMFD_BK_WRITE:
	case NVMFD_BK_FLUSH:
	case NVMFD_BK_WRITE_ZEROES:
	case NVMFD_BK_DISCARD:
		return true;
	}
	return false;
}

/**
 * nvmfd_bk_submit() - see backend.h.
 * @ring: borrowed.  @bk: borrowed; must outlive the io.
 * @io:   borrowed until its callback has run.
 * Return: 0; -EBUSY when @depth ios are in flight (or, defensively, no SQE
 *         is free); -EINVAL for an unknown op or a malformed io.
 * Context: ring owner. Synchronous ops (RAM/NULL copies, block device
 *          discard/zero-out ioctls) run here, on the caller's thread.
 */
int nvmfd_bk_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	uint64_t lba_mask;
	int rc;

	if (!ring || !bk || !io || !io->cb || !ring_op_valid(io->op))
		return -EINVAL;
	if (ring->inflight >= ring->depth)
		return -EBUSY;

	io->next = NULL;
	io->res = 0;
	io->lent = NULL;
	io->bk = bk;
	io->done = 0;
	io->flags = 0;

	if (io->op != NVMFD_BK_FLUSH) {
		lba_mask = (1ull << bk->lba_shift) - 1;
		if ((io->offset & lba_mask) || (io->len & lba_mask))
			return -EINVAL;
		/* READ/WRITE complete with the byte count in an int. */
		if ((io->op == NVMFD_BK_READ || io->op == NVMFD_BK_WRITE) &&
		    ((io->len && !io->buf) || io->len > INT_MAX))
			return -EINVAL;
	}

	ring->inflight++;
	ring->st.submitted++;

	if (io->op != NVMFD_BK_FLUSH) {
		uint64_t size = __atomic_load_n(&bk->size, __ATOMIC_ACQUIRE);

		if (io->offset > size || io->len > size - io->offset) {
			nvmfd__bk_ring_complete_local(ring, io, -ERANGE);
			return 0;
		}
		if (io->len == 0) {
			nvmfd__bk_ring_complete_local(ring, io, 0);
			return 0;
		}
	}

	if (io->op == NVMFD_BK_FLUSH)
		io->seq = __atomic_load_n(&bk->mod_done, __ATOMIC_ACQUIRE);
	rc = bk->ops->submit(ring, bk, io);
	if (rc < 0) {
		ring->inflight--;
		ring->st.submitted--;
		return rc;
	}
	return 0;
}

static void ring_signal(struct nvmfd_bk_ring *ring)
{
	uint64_t one = 1;

	if (ring->has_ext) {
		if (ring->ext.kick)
			ring->ext.kick(ring->ext.arg);
		return;
	}
	/* Only fails with EAGAIN when the counter is saturated: then it is
	 * readable anyway. */
	if (write(ring->efd, &one, sizeof(one)) < 0)
		return;
}

static void ring_clear_event(struct nvmfd_bk_ring *ring)
{
	uint64_t v;

	if (ring->efd < 0)
		return; /* ext: no eventfd */
	/* EAGAIN = already clear. */
	if (read(ring->efd, &v, sizeof(v)) < 0)
		return;
}

void nvmfd_bk_ring_set_edge(struct nvmfd_bk_ring *ring, bool on)
{
	ring->edge = on || ring->has_ext; /* ext: always */
}

void nvmfd_bk_ring_clear_event(struct nvmfd_bk_ring *ring)
{
	ring_clear_event(ring);
}

/**
 * nvmfd_bk_ring_flush() - send the queued SQEs to the kernel.
 * @ring: borrowed.
 * Return: SQEs consumed by the kernel plus local completions queued since
 *         the last flush (>= 0), or -errno from io_uring_submit() (the SQEs
 *         stay queued and the next flush retries them).
 * Context: ring owner.
 */
int nvmfd_bk_ring_flush(struct nvmfd_bk_ring *ring)
{
	int total = 0;
	int rc;

	if (ring->has_ext && ring->queued) {
		rc = ring->ext.push(ring->ext.arg, ring->stage, ring->queued);
		if (rc < 0)
			return rc;
		if ((unsigned int)rc < ring->queued)
			memmove(ring->stage, ring->stage + rc,
				(size_t)(ring->queued - (unsigned int)rc) * sizeof(*ring->stage));
		ring->queued -= (unsigned int)rc;
		total += rc;
		if (!rc) /* the io_uring took none: come back (ring_signal) */
			ring_signal(ring);
	} else if (ring->queued) {
		rc = io_uring_submit(&ring->uring);
		if (rc < 0)
			return rc;
		/* Without IORING_SETUP_SUBMIT_ALL the kernel stops at an SQE
		 * it cannot start; what it left stays queued for next time. */
		ring->queued = io_uring_sq_ready(&ring->uring);
		total += rc;
	}
	if (ring->poll_queued) {
		rc = io_uring_submit(&ring->poll);
		if (rc < 0)
			return rc;
		ring->poll_queued = io_uring_sq_ready(&ring->poll);
		total += rc;
		/* Polled completions raise no event: wake the owner to poll. */
		ring_signal(ring);
	}
	if (ring->local_new) {
		total += (int)ring->local_new;
		ring->local_new = 0;
		if (!ring->edge) /* edge: the owner's reap follows */
			ring_signal(ring);
	}
	return total;
}

/*
 * Durability bookkeeping for nvmfd_bk_dirty(): count the ios that may leave
 * data in a volatile cache (a FUA write that succeeded is durable already:
 * RWF_DSYNC); a successful FLUSH covers every one that had finished when it
 * was submitted. A failed io counts too (part of it may have been written).
 */
static void ring_account(struct nvmfd_bk_io *io, int res)
{
	struct nvmfd_bk *bk = io->bk;
	uint64_t cur;

	switch (io->op) {
	case NVMFD_BK_WRITE:
		if (io->fua && res >= 0)
			break;
		/* fall through */
	case NVMFD_BK_WRITE_ZEROES:
	case NVMFD_BK_DISCARD:
		__atomic_add_fetch(&bk->mod_done, 1, __ATOMIC_RELEASE);
		break;
	case NVMFD_BK_FLUSH:
		if (res < 0)
			break;
		cur = __atomic_load_n(&bk->flushed_upto, __ATOMIC_RELAXED);
		while (cur < io->seq &&
		       !__atomic_compare_exchange_n(&bk->flushed_upto, &cur, io->seq, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		break;
	default:
		break;
	}
}

static void ring_deliver(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res)
{
	ring_account(io, res);
	io->res = res;
	io->next = NULL;
	ring->inflight--;
	ring->st.completions++;
	/* Last touch of @io: the callback may reuse or free it. */
	if (ring->route)
		ring->route(ring->route_arg, io, res);
	else
		io->cb(io, res);
}

/* One reaped io: the backend's complete hook (false: it was resubmitted,
 * e.g. a short read continued), then delivery. Return: delivered. */
static bool ring_finish(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res)
{
	if (!io->bk->ops->complete(ring, io->bk, io, &res))
		return false;
	ring_deliver(ring, io, res);
	return true;
}

/**
 * nvmfd_bk_ring_set_route() - see backend.h.
 * @ring: borrowed.  @fn: router, or NULL for direct callbacks.  @arg: its cookie.
 * Context: ring owner, while no reap runs.
 */
void nvmfd_bk_ring_set_route(struct nvmfd_bk_ring *ring, nvmfd_bk_route_fn fn, void *arg)
{
	ring->route = fn;
	ring->route_arg = arg;
}

/* Drain CQEs of @u; Return: callbacks run. */
static unsigned int ring_reap_uring(struct nvmfd_bk_ring *ring, struct io_uring *u, bool is_poll,
				    unsigned int max)
{
	struct io_uring_cqe *cqe;
	struct nvmfd_bk_io *io;
	unsigned int n = 0;
	int res;

	while (n < max && io_uring_peek_cqe(u, &cqe) == 0) {
		io = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(u, cqe);
		if (is_poll)
			ring->poll_inflight--;
		else
			ring->uring_inflight--;
		if (ring_finish(ring, io, res))
			n++;
	}
	return n;
}

/* Ext: finish up to @max posted ios, in order. Return: callbacks run. */
static unsigned int ring_reap_ext(struct nvmfd_bk_ring *ring, unsigned int max)
{
	struct nvmfd_bk_io *io;
	unsigned int n = 0;
	int res;

	ring_ext_take(ring);
	while (n < max && ring->ext_head) {
		io = ring->ext_head;
		ring->ext_head = io->next;
		if (!ring->ext_head)
			ring->ext_tail = NULL;
		res = io->res;
		ring->uring_inflight--;
		if (ring_finish(ring, io, res))
			n++;
	}
	return n;
}

/**
 * nvmfd_bk_ring_reap() - see backend.h: clear the event fd, then run up to
 * @max callbacks: kernel completions first, then local completions that
 * were queued before this call (ones queued by the callbacks wait for the
 * next reap). Continuations queued while reaping (short transfers,
 * fallbacks) are submitted before returning.
 * @ring: borrowed.  @max: callback budget (0 = only clear/poll).
 * Return: callbacks run (>= 0).
 * Context: ring owner; callbacks run on this thread and may submit.
 */
int nvmfd_bk_ring_reap(struct nvmfd_bk_ring *ring, unsigned int max)
{
	struct nvmfd_bk_io *local, *local_tail, *io;
	unsigned int n = 0;
	bool more;

	ring->st.reap_calls++;
	if (!ring->edge) /* edge: a count left behind wakes nobody */
		ring_clear_event(ring);

	/* Local completions present now; later ones go to a fresh list. */
	local = ring->done_head;
	local_tail = ring->done_tail;
	ring->done_head = NULL;
	ring->done_tail = NULL;

	if (ring->has_ext)
		n += ring_reap_ext(ring, max);
	else
		n += ring_reap_uring(ring, &ring->uring, false, max);
	if (ring->has_poll && ring->poll_inflight && n < max)
		n += ring_reap_uring(ring, &ring->poll, true, max - n);
	ring->last_reap_events = n;
	while (local && n < max) {
		io = local;
		local = io->next;
		ring_deliver(ring, io, io->res);
		n++;
	}
	if (local) {
		/* Budget exhausted: put the rest back in front, in order. */
		local_tail->next = ring->done_head;
		if (!ring->done_head)
			ring->done_tail = local_tail;
		ring->done_head = local;
	}

	if ((ring->queued || ring->poll_queued) && nvmfd_bk_ring_flush(ring) < 0) {
		/* The SQEs stay queued; the owner's next flush retries. */
		ring_signal(ring);
	}

	if (ring->has_ext)
		more = ring->done_head || ring->ext_head;
	else
		more = ring->done_head || io_uring_cq_ready(&ring->uring) ||
		       (ring->has_poll && ring->poll_inflight);
	if (more)
		ring_signal(ring);

	if (n)
		ring->st.reap_events++;
	return (int)n;
}
