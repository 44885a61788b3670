/* SPDX-License-Identifier: MIT */
/*
 * backend.h - namespace storage backends and their completion rings.
 *
 * A backend (struct nvmfd_bk) is the storage behind one namespace: a file,
 * a block device, RAM or null. I/O is asynchronous and goes through a
 * completion ring (struct nvmfd_bk_ring), an io_uring instance owned by one
 * queue (--cq-pool per-queue) or shared by the queues of one CPU
 * (--cq-pool shared). Submissions are batched and flushed by the ring's
 * owner; completions are reaped by peeking the CQ, and each completion calls
 * the io's callback from inside nvmfd_bk_ring_reap() on the reaping thread.
 * RAM and null backends execute in submit and deliver their completion at
 * the next reap, so every backend completes the same way.
 *
 * Units: offsets and lengths in bytes; sizes in bytes; the logical block
 * size is 1 << lba_shift (9 or 12).
 * Errors: negative errno. A failed I/O completes with res = -errno; the
 * target maps it to an NVMe status in one place.
 * Context: a ring is used by one thread at a time (its owner); the caller
 * serializes owners when a ring is shared (see rt).
 */
#ifndef NVMFD_INTERNAL_BACKEND_H
#define NVMFD_INTERNAL_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "internal/rt_sink.h"
#include "nvmfd/spec.h"

enum nvmfd_bk_type {
	NVMFD_BK_FILE, /* regular file via io_uring; buffered unless direct */
	NVMFD_BK_BDEV, /* block device via io_uring (O_DIRECT) */
	NVMFD_BK_RAM, /* anonymous memory, lost at exit */
	NVMFD_BK_NULL, /* reads return zeroes, writes are discarded */
};

/**
 * struct nvmfd_bk_opts - how to open a backend.
 * @type:      backend kind.
 * @path:      file or block device path (FILE, BDEV); borrowed during open.
 * @size:      bytes; FILE: create/extend to this size when non-zero;
 *             RAM/NULL: required; BDEV: ignored (device size is used).
 * @direct:    FILE: open with O_DIRECT.
 * @lba_shift: 9 (512 B) or 12 (4 KiB); 0 = 9 for RAM/NULL/FILE, the
 *             device's logical block size for BDEV.
 * @read_only: FILE, BDEV: open read-only and share the path with other
 *             read-only exporters (flock LOCK_SH); writes then fail with
 *             -EROFS. Without it the path is taken exclusively: flock
 *             LOCK_EX (and O_EXCL for a block device), so a second
 *             exporter gets -EBUSY.
 */
struct nvmfd_bk_opts {
	enum nvmfd_bk_type type;
	const char *path;
	uint64_t size;
	bool direct;
	unsigned int lba_shift;
	bool read_only;
};

enum nvmfd_bk_op {
	NVMFD_BK_READ,
	NVMFD_BK_WRITE,
	NVMFD_BK_FLUSH,
	NVMFD_BK_WRITE_ZEROES,
	NVMFD_BK_DISCARD,
};

struct nvmfd_bk;
struct nvmfd_bk_ring;
struct nvmfd_bk_io;
struct nvmfd_cq;
struct io_uring_sqe;

typedef void (*nvmfd_bk_cb)(struct nvmfd_bk_io *io, int res);

/**
 * struct nvmfd_bk_io - one backend request; caller-owned (preallocated per
 * command), borrowed by the backend from submit until its callback ran.
 * @op:     operation.
 * @offset: byte offset (READ/WRITE/WRITE_ZEROES/DISCARD).
 * @len:    bytes (READ/WRITE/WRITE_ZEROES/DISCARD).
 * @buf:    data buffer of @len bytes (READ/WRITE). For direct backends it
 *          must be 4096-byte aligned (nvmfd_bk_buf_alloc()).
 * @fua:    WRITE: force unit access (data durable before completion).
 * @cb:     completion callback; res = bytes transferred or 0 on success,
 *          -errno on failure.
 * @priv:   caller's cookie.
 * @lend:   READ: the caller accepts a lent buffer instead of a copy into
 *          @buf (RAM backends lend; the others ignore it).
 * @lent:   out, READ with @lend: NULL (the data is in @buf), or where the
 *          backend's own memory holds the @len bytes read. The pointer
 *          stays valid while the backend is open (the caller keeps the
 *          namespace from being closed until it is done with it); its
 *          bytes may be read only between nvmfd_bk_lent_lock() and
 *          nvmfd_bk_lent_unlock() (a concurrent write waits for that).
 */
struct nvmfd_bk_io {
	enum nvmfd_bk_op op;
	uint64_t offset;
	uint32_t len;
	void *buf;
	bool fua;
	bool lend;
	nvmfd_bk_cb cb;
	void *priv;
	const void *lent;
	/* private */
	struct nvmfd_bk_io *next;
	int res;
	/* private (backend layer): set by nvmfd_bk_submit(), valid until the
	 * callback runs. */
	struct nvmfd_bk *bk;   /* backend the io was submitted to */
	uint32_t done;         /* bytes finished so far (short I/O, zero fill) */
	uint32_t flags;        /* BK_IOF_* in src/backend/bk_int.h */
	struct nvmfd_cq *cq;   /* completion context of a shared ring (cqpool.c) */
	uint64_t seq;          /* FLUSH: the backend's finished-write count at submit */
	struct nvmfd_rt_sink sink; /* its SQE's CQE on a worker ring (cqpool.c) */
};

/** nvmfd_bk_open() - open/create a backend. Return: 0, -EINVAL (bad opts,
 *  size not a multiple of the block size), -ENOMEM, -errno from open/ioctl. */
int nvmfd_bk_open(const struct nvmfd_bk_opts *opts, struct nvmfd_bk **out);

/** nvmfd_bk_close() - flush (fsync for file/bdev, skipped when
 *  nvmfd_bk_dirty() is false) and release; NULLs *bk.
 *  Return: 0 or the fsync error as -errno (the backend is released anyway). */
int nvmfd_bk_close(struct nvmfd_bk **bk);

/** nvmfd_bk_close_nosync() - release without the fsync, dirty or not: what
 *  the page cache holds is written back by the kernel as usual (the target
 *  stop without stop_flush); NULLs *bk. Return: 0 or the close error. */
int nvmfd_bk_close_nosync(struct nvmfd_bk **bk);

/**
 * nvmfd_bk_dirty() - a write may sit in a volatile cache: a WRITE (without
 * FUA), WRITE_ZEROES, DISCARD or resize finished after the last FLUSH that
 * completed successfully was submitted (or, with none, since the open).
 * FILE and BDEV only (RAM and NULL: false, nothing to make durable).
 * @bk: borrowed; meaningful when no io is in flight (at close).
 * Return: the flag. Context: any thread.
 */
bool nvmfd_bk_dirty(const struct nvmfd_bk *bk);

uint64_t nvmfd_bk_size(const struct nvmfd_bk *bk); /* bytes */

/**
 * nvmfd_bk_lent_lock() - start reading @len bytes at @p, memory a READ
 * lent (io->lent, or a part of it), e.g. to compute a digest and send it.
 * @bk:  the backend that lent @p.
 * @p:   inside a lent range; @len bytes from @p stay inside it.
 * Every logical block read between this call and nvmfd_bk_lent_unlock()
 * is either all old or all new data with respect to any write of the
 * backend (writes of the covered range wait; NVMe's single-block write
 * atomicity, doc/perf.md). Hold it briefly: no blocking call (a
 * non-blocking send is fine); taking it again (overlapping or not) before
 * unlocking is allowed.
 * Context: any thread.
 */
void nvmfd_bk_lent_lock(struct nvmfd_bk *bk, const void *p, uint32_t len);

/** nvmfd_bk_lent_unlock() - end what nvmfd_bk_lent_lock() of the same
 *  @p and @len started. Context: the thread that locked. */
void nvmfd_bk_lent_unlock(struct nvmfd_bk *bk, const void *p, uint32_t len);

/**
 * nvmfd_bk_lent_digest() - the NVMe/TCP data digest (nvmfd_digest()) of
 * @len lent bytes at @p, between nvmfd_bk_lent_lock() and
 * nvmfd_bk_lent_unlock() of a range covering them.
 * @bk:  the backend that lent @p.
 * @p:   inside a locked lent range; @len bytes, > 0.
 * Return: nvmfd_digest(@p, @len). A RAM backend remembers the CRC of each
 * 4 KiB block until a write touches it, so a range aligned to 4 KiB at
 * both ends that was digested before costs no pass over its bytes; other
 * ranges are read with nvmfd_digest_cold().
 * Context: any thread.
 */
uint32_t nvmfd_bk_lent_digest(struct nvmfd_bk *bk, const void *p, uint32_t len);

/**
 * nvmfd_bk_resize() - change the size of a backend that may be serving I/O.
 * @bk:   borrowed.
 * @size: new size in bytes, a multiple of the block size; 0 = re-read the
 *        size of the file or device (FILE, BDEV).
 * @out:  the size now exposed (NULL: not wanted).
 * FILE grows (ftruncate) but never shrinks; BDEV only re-reads; RAM grows
 * in place or shrinks (the tail reads zeroes if it grows again); NULL takes
 * any size. An io already range-checked against the old size of a shrunk
 * backend completes against storage that still exists (RAM: a tail that
 * reads zeroes).
 * Return: 0; -EINVAL (size not a block multiple, shrinking a file, a size
 *         for a block device, size 0 for RAM/NULL, a file now smaller than
 *         one block); -EROFS (read-only file); -ENOMEM (RAM cannot grow in
 *         place); -errno from fstat/ftruncate/ioctl.
 * Context: control thread (one resize at a time per backend); may block.
 */
int nvmfd_bk_resize(struct nvmfd_bk *bk, uint64_t size, uint64_t *out);
unsigned int nvmfd_bk_lba_shift(const struct nvmfd_bk *bk);
enum nvmfd_bk_type nvmfd_bk_get_type(const struct nvmfd_bk *bk);
bool nvmfd_bk_is_read_only(const struct nvmfd_bk *bk); /* writes fail with -EROFS */
bool nvmfd_bk_needs_aligned_buf(const struct nvmfd_bk *bk);

/** nvmfd_bk_buf_alloc() - 4096-aligned buffer of @len bytes (free()). */
void *nvmfd_bk_buf_alloc(size_t len);

/**
 * nvmfd_bk_ring_create() - an io_uring-backed completion ring.
 * @depth: maximum in-flight ios (rounded up to a power of two).
 * @iopoll: try IORING_SETUP_IOPOLL-capable operation where the device
 *         supports it (O_DIRECT block devices); files and RAM peek instead.
 * Return: 0, -ENOMEM, -errno from io_uring_queue_init / eventfd.
 */
int nvmfd_bk_ring_create(unsigned int depth, bool iopoll, struct nvmfd_bk_ring **out);
void nvmfd_bk_ring_destroy(struct nvmfd_bk_ring **ring);

/** nvmfd_bk_ring_event_fd() - an eventfd that becomes readable when
 *  completions are available (for nvmfd_rt_watch_fd). */
int nvmfd_bk_ring_event_fd(const struct nvmfd_bk_ring *ring);

/**
 * nvmfd_bk_ring_set_edge() - the owner watches the eventfd edge-triggered
 * (EPOLLET) and reaps after every flush of its own: then local completions
 * (RAM, null, synchronous ops) need no signal, as the reap that follows
 * the flush delivers them, and reaps need not read the eventfd, as a count
 * left behind wakes nobody. Saves an eventfd write and a read per reap.
 * Kernel completions still signal the eventfd (a new edge each). Off by
 * default. Context: ring owner, while no reap runs.
 */
void nvmfd_bk_ring_set_edge(struct nvmfd_bk_ring *ring, bool on);

/** nvmfd_bk_ring_clear_event() - empty the eventfd (also in edge mode),
 *  e.g. before registering it afresh. Context: ring owner. */
void nvmfd_bk_ring_clear_event(struct nvmfd_bk_ring *ring);

/** nvmfd_bk_submit() - queue @io on @ring for @bk (not yet sent to the
 *  kernel: call nvmfd_bk_ring_flush()). Return: 0, -EBUSY when the ring is
 *  full (reap first), -EINVAL for an op the backend cannot do.
 *  Also -EINVAL for a malformed io (NULL cb, NULL buf for READ/WRITE with
 *  len > 0, READ/WRITE len > INT_MAX, offset or len not a multiple of the
 *  logical block size).
 *  A range beyond the backend size is accepted and completes with
 *  res = -ERANGE (so every I/O error arrives the same way). */
int nvmfd_bk_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io);

/** nvmfd_bk_ring_flush() - submit queued ios. Return: number submitted or -errno. */
int nvmfd_bk_ring_flush(struct nvmfd_bk_ring *ring);

/**
 * nvmfd_bk_ring_reap() - peek the CQ (no blocking), run up to @max callbacks.
 * Also clears the event fd. Return: completions delivered (>= 0).
 * Call it whenever the event fd is readable, even when
 * nvmfd_bk_ring_inflight() is 0: the kernel may signal the fd just after
 * the CQE it belongs to was reaped, and only a reap clears it. While ios
 * are on an IOPOLL ring (block devices, iopoll=true) their completions are
 * found only by polling, so reap keeps the event fd readable until they are
 * all delivered (an event-driven owner then effectively polls).
 */
int nvmfd_bk_ring_reap(struct nvmfd_bk_ring *ring, unsigned int max);

/**
 * typedef nvmfd_bk_route_fn - completion router of a shared ring.
 * @arg: the cookie given to nvmfd_bk_ring_set_route().
 * @io:  the completed io; io->res holds @res. From this call on the ring no
 *       longer touches @io (io->next is free for the router's own list).
 * @res: the io's result, as for nvmfd_bk_cb.
 */
typedef void (*nvmfd_bk_route_fn)(void *arg, struct nvmfd_bk_io *io, int res);

/**
 * nvmfd_bk_ring_set_route() - deliver every completion of @ring through
 * @fn instead of io->cb (additive, for --cq-pool shared): the reaper of a
 * ring shared by several queues hands each io to its queue's owner, which
 * later calls io->cb itself. NULL @fn restores direct callbacks.
 * Context: ring owner, while no reap runs.
 */
void nvmfd_bk_ring_set_route(struct nvmfd_bk_ring *ring, nvmfd_bk_route_fn fn, void *arg);

/**
 * struct nvmfd_bk_ring_ext - an io_uring run by someone else (the worker
 * ring of a runtime pool, internal/rt_ring.h; cqpool.c), for
 * nvmfd_bk_ring_create_ext(). The ring then owns no io_uring and no
 * eventfd: the backends' SQEs are prepared into the ring's own staging
 * array (so no lock is held while a backend prepares, or runs a
 * synchronous op), @push moves them to the real io_uring at flush time,
 * and whoever reaps that io_uring hands each CQE back with
 * nvmfd_bk_ring_post(); nvmfd_bk_ring_reap() finishes the posted ios on
 * the owner's thread (continuations, callbacks). Edge semantics as with
 * nvmfd_bk_ring_set_edge(): the owner reaps after each flush of its own.
 * @push: take @n staged SQEs (user_data: the io) onto the io_uring and
 *        see that they reach the kernel. Return: how many were taken (the
 *        rest stay staged for the next flush) or -errno.
 * @kick: the owner should reap and flush again soon (completions left
 *        over a reap's budget, a push that took nothing). May be NULL.
 * @wait: nvmfd_bk_ring_destroy() still waits for CQEs: make SQEs already
 *        pushed reach the kernel, reap, and sleep briefly if nothing came.
 * @arg:  their cookie.
 */
struct nvmfd_bk_ring_ext {
	int (*push)(void *arg, const struct io_uring_sqe *sqes, unsigned int n);
	void (*kick)(void *arg);
	void (*wait)(void *arg);
	void *arg;
};

/**
 * nvmfd_bk_ring_create_ext() - a completion ring on an io_uring that
 * @ext runs (see struct nvmfd_bk_ring_ext); @ext is copied.
 * @depth: maximum in-flight ios, 1..32768 (rounded up to a power of two).
 * Return: 0, -EINVAL (bad depth, NULL @ext or its @push or @wait), -ENOMEM.
 * Context: any thread; then one owner at a time, as any ring.
 */
int nvmfd_bk_ring_create_ext(unsigned int depth, const struct nvmfd_bk_ring_ext *ext,
			     struct nvmfd_bk_ring **out);

/**
 * nvmfd_bk_ring_post() - the CQE of @io's SQE on an ext ring arrived with
 * @res: queue it for the owner's next nvmfd_bk_ring_reap() (MPSC,
 * lock-free). After it returns the caller may no longer touch @io nor
 * @ring (the owner may already have reaped and destroyed it).
 * Return: true when nothing was posted before it (the owner takes the
 * whole list at once: only this post needs to make it reap).
 * Context: any thread.
 */
bool nvmfd_bk_ring_post(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res);

/**
 * nvmfd_bk_ring_last_reap_events() - of the completions the last
 * nvmfd_bk_ring_reap() delivered, those that came as events: CQEs of the
 * io_uring(s), or ios posted from another thread (ext rings). Not counted:
 * ios the backend completed inline at submit (RAM, null, range errors),
 * which wake nobody. Context: owner.
 */
unsigned int nvmfd_bk_ring_last_reap_events(const struct nvmfd_bk_ring *ring);

/** nvmfd_bk_ring_inflight() - ios submitted and not yet reaped. */
unsigned int nvmfd_bk_ring_inflight(const struct nvmfd_bk_ring *ring);

/* Counters for stats: completion events seen (eventfd wake-ups or reaps that
 * found work) and completions delivered. */
struct nvmfd_bk_ring_stats {
	uint64_t submitted;
	uint64_t completions;
	uint64_t reap_calls;
	uint64_t reap_events; /* reaps that found >= 1 completion */
};
void nvmfd_bk_ring_get_stats(const struct nvmfd_bk_ring *ring, struct nvmfd_bk_ring_stats *st);

/**
 * nvmfd__status_from_errno() - the one errno -> NVMe status mapping, used at
 * the backend boundary (nvmet's errno_to_nvme_status).
 * @err: 0 or a negative errno (an io's res; positive byte counts are success).
 * @op:  the operation that failed (-EIO is a read error for READ, a write
 *       fault for everything else).
 *
 * 0 and positive -> success; -ENOSPC -> CAP_EXCEEDED; -EREMOTEIO/-ERANGE ->
 * LBA_RANGE; -EOPNOTSUPP -> INVALID_OPCODE; -EINVAL -> INVALID_FIELD;
 * -ENODATA -> (media) READ_ERROR; -EIO -> (media) READ_ERROR or WRITE_FAULT;
 * -EROFS/-EACCES/-EPERM -> (media) ACCESS_DENIED; -ECANCELED -> ABORT_REQ;
 * anything else -> INTERNAL. Deterministic errors (range, opcode, field,
 * capacity, access) carry DNR; media and internal errors may be retried.
 * Return: the status (without phase tag).
 * Context: any thread.
 */
nvmfd_status_t nvmfd__status_from_errno(int err, enum nvmfd_bk_op op);

#endif /* NVMFD_INTERNAL_BACKEND_H */
