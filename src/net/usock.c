// SPDX-License-Identifier: MIT
/*
 * usock.c - a stream socket driven through its own io_uring (usock.h).
 *
 * Bookkeeping. @ops counts the SQEs whose last CQE has not been taken:
 * the receive (a multishot one until a CQE without IORING_CQE_F_MORE), a
 * send, and each cancel. Received chunks wait in @chunks (a FIFO of at
 * most @nbufs entries: each holds one buffer, and the kernel only fills
 * buffers it was given), oldest first; a chunk used up returns its buffer
 * to the provided ring in FIFO order, which is also the order the kernel
 * took them in. The CQ is sized for every chunk plus the send and cancels,
 * so it cannot overflow (an overflow would end the multishot request,
 * which is handled like -ENOBUFS anyway).
 *
 * Shared ring (opts.ring): the same SQEs, with user_data naming our sink,
 * prepared under the ring lock; the reaper copies our CQEs into @mbox, a
 * single-producer (the reaper, under the ring lock) single-consumer (the
 * owner) FIFO sized like the CQ above, and queues the owner when it finds
 * the mailbox empty. The owner takes the whole mailbox at once and stores
 * its head before it looks at the tail again (unmute), and the reaper
 * stores the tail before it looks at the head (both sequentially
 * consistent), so either the reaper sees the mailbox empty and queues the
 * owner, or the owner sees the new entry: no wake-up is lost. Idle and
 * destroy take the ring lock, so once @ops is 0 no reaper is inside our
 * sink any more and none will be.
 */
#include <assert.h>
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal/rt_ring.h"
#include "net/usock.h"

#define USOCK_TAG_RECV 1u
#define USOCK_TAG_SEND 2u
#define USOCK_TAG_CANCEL 3u
#define USOCK_SQ_ENTRIES 8u /* receive + send + 2 cancels at most */
#define USOCK_BGID 0
/* counters: owner writes, any thread reads (relaxed, doc/conventions.md §8) */
#define USOCK_ST_ADD(u, f, n) \
	__atomic_store_n(&(u)->st.f, (u)->st.f + (uint64_t)(n), __ATOMIC_RELAXED)

/* One CQE copied into the mailbox (shared ring). */
struct usock_cqe {
	int32_t res;
	uint32_t flags;
	uint32_t tag;
};

struct usock_chunk {
	uint8_t *ptr;
	uint32_t len;
	uint32_t off;
	int bid; /* provided-ring buffer id, -1: the single-mode buffer */
};

struct nvmfd_usock {
	struct io_uring ring;
	bool has_ring;
	int fd;
	int efd;
	enum nvmfd_usock_recv mode;
	bool multishot; /* receiving through the provided ring */
	bool got_data; /* a receive returned bytes: the mode works */
	unsigned int nbufs;
	unsigned int buf_size;
	uint8_t *bufs; /* nbufs x buf_size (single mode uses the first) */
	size_t bufs_len;
	struct io_uring_buf_ring *br; /* the provided ring, or NULL */
	size_t br_len;
	struct usock_chunk *chunks; /* FIFO, nbufs entries */
	unsigned int c_head, c_count;
	unsigned int ops; /* SQEs whose last CQE is owed */
	bool recv_armed;
	bool send_busy; /* in flight */
	bool send_done; /* completed, result not taken */
	ssize_t send_res;
	size_t send_len; /* bytes the send in flight asked for */
	bool eof;
	int err; /* receive error, reported after the data */
	bool cancelled;
	bool muted;
	struct msghdr msg;
	struct nvmfd_usock_stats st;
	/* shared ring (opts.ring) */
	struct nvmfd_rt_ring *rr;
	struct nvmfd_work *owner;
	struct nvmfd_rt_sink sink;
	int bgid; /* our buffer group on @rr (-1: none) */
	struct usock_cqe *mbox;
	unsigned int mbox_cap;
	unsigned int mbox_head; /* atomic: owner stores, reaper loads */
	unsigned int mbox_tail; /* atomic: reaper stores, owner loads */
};

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static void usock_sink(struct nvmfd_rt_sink *s, unsigned int tag, int res, uint32_t flags);

static struct io_uring *usock_uring(struct nvmfd_usock *u)
{
	return u->rr ? nvmfd_rt_ring_uring(u->rr) : &u->ring;
}

static uint64_t usock_data(struct nvmfd_usock *u, unsigned int tag)
{
	return u->rr ? nvmfd_rt_ring_data(&u->sink, tag) : tag;
}

/* SQE preparation: under the ring lock on a shared ring. */
static void usock_sq_lock(struct nvmfd_usock *u)
{
	if (u->rr)
		nvmfd_rt_ring_lock(u->rr);
}

static void usock_sq_unlock(struct nvmfd_usock *u)
{
	if (u->rr)
		nvmfd_rt_ring_unlock(u->rr);
}

int nvmfd_usock_probe(void)
{
	static const int need[] = { IORING_OP_RECV, IORING_OP_SENDMSG, IORING_OP_ASYNC_CANCEL };
	struct io_uring_probe *p;
	struct io_uring r;
	int ret;

	ret = io_uring_queue_init(2, &r, 0);
	if (ret < 0)
		return ret;
	p = io_uring_get_probe_ring(&r);
	if (!p) {
		io_uring_queue_exit(&r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!io_uring_opcode_supported(p, need[i]))
			ret = -EOPNOTSUPP;
	io_uring_free_probe(p);
	io_uring_queue_exit(&r);
	return ret;
}

static uint8_t *usock_buf(const struct nvmfd_usock *u, unsigned int bid)
{
	return u->bufs + (size_t)bid * u->buf_size;
}

static int usock_setup_bufring(struct nvmfd_usock *u)
{
	struct io_uring_buf_reg reg;
	long page = sysconf(_SC_PAGESIZE);
	int ret, mask = io_uring_buf_ring_mask(u->nbufs);

	u->br_len = (u->nbufs * sizeof(struct io_uring_buf) + (size_t)page - 1) &
		    ~((size_t)page - 1);
	u->br = mmap(NULL, u->br_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->br == MAP_FAILED) {
		u->br = NULL;
		return -ENOMEM;
	}
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (uint64_t)(uintptr_t)u->br;
	reg.ring_entries = u->nbufs;
	reg.bgid = (uint16_t)u->bgid;
	ret = io_uring_register_buf_ring(usock_uring(u), &reg, 0);
	if (ret < 0) {
		munmap(u->br, u->br_len);
		u->br = NULL;
		return ret;
	}
	io_uring_buf_ring_init(u->br);
	for (unsigned int i = 0; i < u->nbufs; i++)
		io_uring_buf_ring_add(u->br, usock_buf(u, i), u->buf_size, (unsigned short)i, mask,
				      (int)i);
	io_uring_buf_ring_advance(u->br, (int)u->nbufs);
	return 0;
}

int nvmfd_usock_create(int fd, const struct nvmfd_usock_opts *opts, struct nvmfd_usock **out)
{
	struct io_uring_params p;
	struct nvmfd_usock *u;
	int ret;

	if (!out || fd < 0 || !opts)
		return -EINVAL;
	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->fd = fd;
	u->efd = -1;
	u->bgid = USOCK_BGID;
	u->mode = opts->recv;
	u->nbufs = opts->nbufs ? opts->nbufs : 16;
	u->buf_size = opts->buf_size ? opts->buf_size : 16384;
	ret = -EINVAL;
	if (u->nbufs < 2 || u->nbufs > 4096 || (u->nbufs & (u->nbufs - 1)) ||
	    u->buf_size < 512 || u->buf_size > (1u << 20) || u->mode > NVMFD_USOCK_RECV_SINGLE)
		goto out_free;

	if (opts->ring) {
		ret = -EINVAL;
		if (!opts->owner)
			goto out_free;
		u->rr = opts->ring;
		u->owner = opts->owner;
		u->sink.cqe = usock_sink;
		u->bgid = -1;
		u->mbox_cap = 2 * u->nbufs + 2 * USOCK_SQ_ENTRIES;
		u->mbox = calloc(u->mbox_cap, sizeof(*u->mbox));
		ret = -ENOMEM;
		if (!u->mbox)
			goto out_free;
		if (u->mode != NVMFD_USOCK_RECV_SINGLE) {
			u->bgid = nvmfd_rt_ring_bgid_get(u->rr);
			if (u->bgid < 0) {
				ret = u->bgid;
				goto out_free;
			}
		}
	} else {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = 2 * u->nbufs + 2 * USOCK_SQ_ENTRIES;
		ret = io_uring_queue_init_params(USOCK_SQ_ENTRIES, &u->ring, &p);
		if (ret < 0)
			goto out_free;
		u->has_ring = true;
		u->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (u->efd < 0) {
			ret = -errno;
			goto out_free;
		}
		ret = io_uring_register_eventfd(&u->ring, u->efd);
		if (ret < 0)
			goto out_free;
	}

	u->chunks = calloc(u->nbufs, sizeof(*u->chunks));
	u->bufs_len = (size_t)u->nbufs * u->buf_size;
	/* only address space until the kernel fills a buffer */
	u->bufs = mmap(NULL, u->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (u->bufs == MAP_FAILED)
		u->bufs = NULL;
	ret = -ENOMEM;
	if (!u->chunks || !u->bufs)
		goto out_free;
	if (u->mode != NVMFD_USOCK_RECV_SINGLE) {
		ret = usock_setup_bufring(u);
		if (ret == 0)
			u->multishot = true;
		else if (ret == -ENOMEM)
			goto out_free;
		else if (u->mode == NVMFD_USOCK_RECV_MULTISHOT) {
			ret = -EOPNOTSUPP; /* the kernel refused the buffer ring */
			goto out_free;
		}
	}
	*out = u;
	return 0;

out_free:
	nvmfd_usock_destroy(&u);
	return ret;
}

/* Prepare an SQE, submitting what waits when the SQ is full (it holds
 * more entries than can ever be outstanding, so that does not happen). */
static struct io_uring_sqe *usock_sqe(struct nvmfd_usock *u)
{
	struct io_uring_sqe *sqe;

	if (u->rr)
		return nvmfd_rt_ring_sqe(u->rr); /* ring lock held */
	sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		nvmfd_usock_submit(u);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static void usock_push(struct nvmfd_usock *u, uint8_t *ptr, uint32_t len, int bid)
{
	struct usock_chunk *c;

	assert(u->c_count < u->nbufs);
	c = &u->chunks[(u->c_head + u->c_count) % u->nbufs];
	c->ptr = ptr;
	c->len = len;
	c->off = 0;
	c->bid = bid;
	u->c_count++;
}

/* Buffer @bid back into the provided ring, for the kernel to fill again. */
static void usock_give_back(struct nvmfd_usock *u, unsigned int bid)
{
	io_uring_buf_ring_add(u->br, usock_buf(u, bid), u->buf_size, (unsigned short)bid,
			      io_uring_buf_ring_mask(u->nbufs), 0);
	io_uring_buf_ring_advance(u->br, 1);
}

/* Drop the oldest chunk, giving its buffer back (multishot). */
static void usock_pop(struct nvmfd_usock *u)
{
	struct usock_chunk *c = &u->chunks[u->c_head];

	if (c->bid >= 0 && u->br)
		usock_give_back(u, (unsigned int)c->bid);
	u->c_head = (u->c_head + 1) % u->nbufs;
	u->c_count--;
}

static void usock_recv_cqe(struct nvmfd_usock *u, int res, unsigned int flags)
{
	if (!(flags & IORING_CQE_F_MORE)) {
		u->recv_armed = false;
		u->ops--;
	}
	if (res > 0) {
		u->got_data = true;
		USOCK_ST_ADD(u, recv_cqes, 1);
		USOCK_ST_ADD(u, recv_bytes, res);
		if (u->cancelled) {
			/* dropped: hand the buffer straight back */
			if (u->multishot && (flags & IORING_CQE_F_BUFFER))
				usock_give_back(u, flags >> IORING_CQE_BUFFER_SHIFT);
			return;
		}
		if (u->multishot) {
			unsigned int bid = flags >> IORING_CQE_BUFFER_SHIFT;

			assert(flags & IORING_CQE_F_BUFFER);
			assert(bid < u->nbufs);
			usock_push(u, usock_buf(u, bid), (uint32_t)res, (int)bid);
		} else {
			usock_push(u, u->bufs, (uint32_t)res, -1);
		}
		return;
	}
	if (u->cancelled)
		return;
	if (res == 0) {
		u->eof = true;
	} else if (res == -ENOBUFS) {
		USOCK_ST_ADD(u, enobufs, 1); /* re-armed once a buffer is back */
	} else if (res == -ECANCELED) {
		/* not ours: the submitting thread exited; arm again */
	} else if (res == -EINVAL && u->multishot && u->mode == NVMFD_USOCK_RECV_AUTO &&
		   !u->got_data) {
		/* buffer rings but no multishot receive (Linux 5.19): single */
		__atomic_store_n(&u->multishot, false, __ATOMIC_RELAXED);
	} else {
		u->err = res;
	}
}

static void usock_cqe(struct nvmfd_usock *u, unsigned int tag, int res, unsigned int flags)
{
	switch (tag) {
	case USOCK_TAG_RECV:
		usock_recv_cqe(u, res, flags);
		break;
	case USOCK_TAG_SEND:
		u->send_busy = false;
		u->send_done = true;
		u->send_res = res;
		u->ops--;
		break;
	case USOCK_TAG_CANCEL:
	default:
		u->ops--;
		break;
	}
}

/* Shared ring: the reaper's side of the mailbox (ring lock held). */
static void usock_sink(struct nvmfd_rt_sink *s, unsigned int tag, int res, uint32_t flags)
{
	struct nvmfd_usock *u = container_of(s, struct nvmfd_usock, sink);
	unsigned int tail = __atomic_load_n(&u->mbox_tail, __ATOMIC_RELAXED);
	struct usock_cqe *e;

	/* cannot fill: every CQE we can owe has a place (file comment) */
	assert(tail - __atomic_load_n(&u->mbox_head, __ATOMIC_ACQUIRE) < u->mbox_cap);
	e = &u->mbox[tail % u->mbox_cap];
	e->res = res;
	e->flags = flags;
	e->tag = tag;
	__atomic_store_n(&u->mbox_tail, tail + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&u->mbox_head, __ATOMIC_SEQ_CST) == tail)
		nvmfd_rt_queue_work(u->owner);
}

static void usock_reap(struct nvmfd_usock *u)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	if (u->rr) {
		unsigned int tail = __atomic_load_n(&u->mbox_tail, __ATOMIC_ACQUIRE);

		for (head = u->mbox_head; head != tail; head++) {
			const struct usock_cqe *e = &u->mbox[head % u->mbox_cap];

			usock_cqe(u, e->tag, e->res, e->flags);
		}
		__atomic_store_n(&u->mbox_head, head, __ATOMIC_SEQ_CST);
		return;
	}
	io_uring_for_each_cqe(&u->ring, head, cqe) {
		usock_cqe(u, (unsigned int)cqe->user_data, cqe->res, cqe->flags);
		n++;
	}
	if (n)
		io_uring_cq_advance(&u->ring, n);
}

/* Arm the receive when it is not armed and may be: multishot needs a free
 * buffer, single mode an empty FIFO (its one buffer is free). */
static void usock_arm_recv(struct nvmfd_usock *u)
{
	struct io_uring_sqe *sqe;

	if (u->recv_armed || u->cancelled || u->eof || u->err)
		return;
	if (u->multishot ? u->c_count >= u->nbufs : u->c_count > 0)
		return;
	usock_sq_lock(u);
	sqe = usock_sqe(u);
	if (!sqe) {
		usock_sq_unlock(u);
		return; /* cannot happen (see usock_sqe()); the next peek retries */
	}
	if (u->multishot) {
		io_uring_prep_recv_multishot(sqe, u->fd, NULL, 0, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = (uint16_t)u->bgid;
	} else {
		io_uring_prep_recv(sqe, u->fd, u->bufs, u->buf_size, 0);
	}
	io_uring_sqe_set_data64(sqe, usock_data(u, USOCK_TAG_RECV));
	usock_sq_unlock(u);
	u->recv_armed = true;
	u->ops++;
	USOCK_ST_ADD(u, recv_arms, 1);
}

ssize_t nvmfd_usock_peek(struct nvmfd_usock *u, const uint8_t **p)
{
	const struct usock_chunk *c;

	usock_reap(u);
	if (u->c_count && !u->cancelled) {
		c = &u->chunks[u->c_head];
		*p = c->ptr + c->off;
		return (ssize_t)(c->len - c->off);
	}
	usock_arm_recv(u);
	if (u->err)
		return u->err;
	if (u->eof)
		return -ECONNRESET;
	return 0;
}

void nvmfd_usock_consume(struct nvmfd_usock *u, size_t n)
{
	struct usock_chunk *c;

	if (!u->c_count || !n)
		return;
	c = &u->chunks[u->c_head];
	assert(n <= c->len - c->off);
	c->off += (uint32_t)n;
	if (c->off < c->len)
		return;
	usock_pop(u);
	usock_arm_recv(u);
}

int nvmfd_usock_submit(struct nvmfd_usock *u)
{
	int ret;

	if (u->rr)
		return nvmfd_rt_ring_commit(u->rr); /* the worker's next enter */
	if (!io_uring_sq_ready(&u->ring))
		return 0;
	USOCK_ST_ADD(u, submits, 1);
	do
		ret = io_uring_submit(&u->ring);
	while (ret == -EINTR);
	return ret < 0 ? ret : 0;
}

int nvmfd_usock_send(struct nvmfd_usock *u, const struct iovec *iov, int iovcnt, bool more)
{
	struct io_uring_sqe *sqe;

	if (u->send_busy || u->send_done)
		return -EBUSY;
	if (u->cancelled)
		return -ECANCELED;
	usock_sq_lock(u);
	sqe = usock_sqe(u);
	if (!sqe) {
		usock_sq_unlock(u);
		return -EBUSY;
	}
	u->send_len = 0;
	for (int i = 0; i < iovcnt; i++)
		u->send_len += iov[i].iov_len;
	memset(&u->msg, 0, sizeof(u->msg));
	u->msg.msg_iov = (struct iovec *)(uintptr_t)iov;
	u->msg.msg_iovlen = (size_t)iovcnt;
	io_uring_prep_sendmsg(sqe, u->fd, &u->msg, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
	io_uring_sqe_set_data64(sqe, usock_data(u, USOCK_TAG_SEND));
	usock_sq_unlock(u);
	u->send_busy = true;
	u->ops++;
	USOCK_ST_ADD(u, sends, 1);
	return nvmfd_usock_submit(u);
}

bool nvmfd_usock_send_result(struct nvmfd_usock *u, ssize_t *res)
{
	usock_reap(u);
	if (!u->send_done)
		return false;
	u->send_done = false;
	*res = u->send_res;
	if (*res >= 0 && (size_t)*res < u->send_len)
		USOCK_ST_ADD(u, short_sends, 1);
	return true;
}

bool nvmfd_usock_send_busy(const struct nvmfd_usock *u)
{
	return u->send_busy || u->send_done;
}

void nvmfd_usock_mute(struct nvmfd_usock *u)
{
	if (!u->rr && !u->muted && u->ring.cq.kflags) {
		__atomic_fetch_or(u->ring.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_RELAXED);
		u->muted = true;
	}
}

bool nvmfd_usock_unmute(struct nvmfd_usock *u)
{
	nvmfd_usock_submit(u);
	if (u->muted) {
		/* a sequentially consistent read-modify-write: the flag is
		 * cleared before the CQ tail is loaded below, so a CQE the
		 * kernel posts after that load sees signals on (the kernel
		 * checks the flag after writing the tail) */
		__atomic_fetch_and(u->ring.cq.kflags, ~(unsigned int)IORING_CQ_EVENTFD_DISABLED,
				   __ATOMIC_SEQ_CST);
		u->muted = false;
	}
	if (u->rr) /* after our head store (usock_reap()): file comment */
		return __atomic_load_n(&u->mbox_tail, __ATOMIC_SEQ_CST) != u->mbox_head;
	return io_uring_cq_ready(&u->ring) > 0;
}

static void usock_cancel_one(struct nvmfd_usock *u, unsigned int tag)
{
	struct io_uring_sqe *sqe;

	usock_sq_lock(u);
	sqe = usock_sqe(u);
	if (sqe) {
		io_uring_prep_cancel64(sqe, usock_data(u, tag), 0);
		io_uring_sqe_set_data64(sqe, usock_data(u, USOCK_TAG_CANCEL));
		u->ops++;
	}
	usock_sq_unlock(u);
}

int nvmfd_usock_cancel(struct nvmfd_usock *u)
{
	if (u->cancelled)
		return 0;
	/* SQEs still prepared (a re-arm) go first, so the cancels find them */
	nvmfd_usock_submit(u);
	usock_reap(u);
	u->cancelled = true;
	while (u->c_count)
		usock_pop(u);
	if (u->recv_armed)
		usock_cancel_one(u, USOCK_TAG_RECV);
	if (u->send_busy)
		usock_cancel_one(u, USOCK_TAG_SEND);
	return nvmfd_usock_submit(u);
}

bool nvmfd_usock_idle(struct nvmfd_usock *u)
{
	bool idle;

	if (!u->rr) {
		usock_reap(u);
		return u->ops == 0;
	}
	/* whoever reaps the ring queues us; reaping here too lets a queue
	 * that runs elsewhere (the stop runtime) finish without waiting for
	 * the ring's workers */
	nvmfd_rt_ring_reap(u->rr);
	nvmfd_rt_ring_lock(u->rr); /* no sink call in progress after this */
	usock_reap(u);
	idle = u->ops == 0;
	nvmfd_rt_ring_unlock(u->rr);
	return idle;
}

void nvmfd_usock_destroy(struct nvmfd_usock **up)
{
	struct nvmfd_usock *u;
	struct io_uring_cqe *cqe;

	if (!up || !*up)
		return;
	u = *up;
	*up = NULL;
	if (u->rr) {
		if (u->ops) {
			/* the owner should have waited (nvmfd_usock_idle()) */
			nvmfd_usock_cancel(u);
			while (!nvmfd_usock_idle(u)) {
				struct timespec ts = { 0, 200000 };

				nvmfd_rt_ring_commit(u->rr);
				nanosleep(&ts, NULL);
			}
		}
		if (u->br)
			io_uring_unregister_buf_ring(nvmfd_rt_ring_uring(u->rr), u->bgid);
		nvmfd_rt_ring_bgid_put(u->rr, u->bgid);
	}
	if (u->has_ring) {
		if (u->ops) {
			/* the owner should have waited (nvmfd_usock_idle());
			 * never free what the kernel may still touch */
			nvmfd_usock_cancel(u);
			while (!nvmfd_usock_idle(u))
				if (io_uring_wait_cqe(&u->ring, &cqe) < 0 && !nvmfd_usock_idle(u))
					break;
		}
		if (u->br)
			io_uring_unregister_buf_ring(&u->ring, USOCK_BGID);
		if (u->efd >= 0)
			io_uring_unregister_eventfd(&u->ring);
		io_uring_queue_exit(&u->ring);
	}
	if (u->br)
		munmap(u->br, u->br_len);
	if (u->bufs)
		munmap(u->bufs, u->bufs_len);
	if (u->efd >= 0)
		close(u->efd);
	free(u->chunks);
	free(u->mbox);
	free(u);
}

int nvmfd_usock_event_fd(const struct nvmfd_usock *u)
{
	return u->efd;
}

bool nvmfd_usock_shared(const struct nvmfd_usock *u)
{
	return u->rr != NULL;
}

bool nvmfd_usock_multishot(const struct nvmfd_usock *u)
{
	return __atomic_load_n(&u->multishot, __ATOMIC_RELAXED);
}

void nvmfd_usock_get_stats(const struct nvmfd_usock *u, struct nvmfd_usock_stats *st)
{
	st->recv_cqes = __atomic_load_n(&u->st.recv_cqes, __ATOMIC_RELAXED);
	st->recv_bytes = __atomic_load_n(&u->st.recv_bytes, __ATOMIC_RELAXED);
	st->recv_arms = __atomic_load_n(&u->st.recv_arms, __ATOMIC_RELAXED);
	st->enobufs = __atomic_load_n(&u->st.enobufs, __ATOMIC_RELAXED);
	st->sends = __atomic_load_n(&u->st.sends, __ATOMIC_RELAXED);
	st->short_sends = __atomic_load_n(&u->st.short_sends, __ATOMIC_RELAXED);
	st->submits = __atomic_load_n(&u->st.submits, __ATOMIC_RELAXED);
}
