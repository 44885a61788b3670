/* SPDX-License-Identifier: MIT */
/*
 * bk_int.h - backend layer internals: the backend object, its ops table and
 * the ring services the backends use.
 *
 * Ownership: nvmfd_bk_open() creates a struct nvmfd_bk and nvmfd_bk_close()
 * destroys it; the ops table is static. An io is borrowed by the ring from
 * nvmfd_bk_submit() until its callback has run.
 * Context: ops->submit and ops->complete run on the ring owner's thread;
 * a backend may be used by several rings (threads) at once, so the only
 * mutable backend fields (the "unsupported" latches) are atomics.
 */
#ifndef NVMFD_BACKEND_BK_INT_H
#define NVMFD_BACKEND_BK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "internal/backend.h"

struct io_uring_sqe;

/* Address space a RAM backend reserves to grow in place (64 GiB). */
#define BK_RAM_RESERVE (64ull << 30)

/* io->flags (private to the backend layer). */
#define BK_IOF_IOPOLL 0x1u /* SQE is on the ring's IOPOLL io_uring */
#define BK_IOF_ZFILL 0x2u /* WRITE_ZEROES emulated by writing zeroes */

/**
 * struct nvmfd_bk_ops - what a backend kind implements.
 * @submit:   start @io (already validated: op known, range inside the
 *            backend, aligned); either prepare SQEs with
 *            nvmfd__bk_ring_get_sqe() or finish at once with
 *            nvmfd__bk_ring_complete_local(). Return: 0 or -EBUSY (no SQE).
 * @complete: a CQE for @io arrived with @res. Return true when the io is
 *            finished (*@res holds its final result), false when it was
 *            resubmitted (short transfer, fallback).
 * @close:    release the kind's resources. Return: 0 or the fsync error.
 */
struct nvmfd_bk_ops {
	int (*submit)(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io);
	bool (*complete)(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			 int *res);
	int (*close)(struct nvmfd_bk *bk);
};

/**
 * struct nvmfd_bk - one namespace backend.
 * @type:          kind.
 * @ops:           the kind's ops (static table).
 * @size:          bytes exposed, a multiple of 1 << @lba_shift.
 * @lba_shift:     log2 of the logical block size (9 or 12).
 * @direct:        fd opened O_DIRECT: buffers must be aligned.
 * @fd:            FILE/BDEV descriptor, -1 otherwise.
 * @mem:           RAM: the mapping of @map_len bytes.
 * @size:          read atomically: nvmfd_bk_resize() changes it live.
 * @iopoll_capable: BDEV opened O_DIRECT: READ/WRITE may use an IOPOLL ring.
 * @no_iopoll:     latched (atomic) after the device refused polled I/O.
 * @no_zero_range: latched (atomic) after FALLOC_FL_ZERO_RANGE was refused;
 *                 WRITE_ZEROES then writes zeroes.
 * @mod_done, @flushed_upto: see nvmfd_bk_dirty().
 */
struct nvmfd_bk {
	enum nvmfd_bk_type type;
	const struct nvmfd_bk_ops *ops;
	uint64_t size;
	unsigned int lba_shift;
	bool direct;
	bool read_only; /* FILE/BDEV opened O_RDONLY: writes fail with -EROFS */
	char name[128]; /* the path (FILE/BDEV) for log messages, maybe cut */
	int fd;
	void *mem;
	uint64_t map_len; /* RAM: bytes mapped at mem (>= size after a shrink) */
	struct bk_stripe_lock *stripes; /* RAM: BK_RAM_STRIPE_LOCKS locks (ram.c) */
	uint64_t *crcs; /* RAM: remembered block CRCs (atomic pointer; ram.c), or NULL */
	uint64_t crc_blocks; /* RAM: entries of @crcs (blocks of the size at open) */
	bool iopoll_capable;
	int no_iopoll;
	int no_zero_range;
	bool close_nosync; /* nvmfd_bk_close_nosync(): the close skips the fsync */
	/* durability bookkeeping (atomics; ring.c ring_account()): modifying
	 * ios finished, and the most of those a successful FLUSH covered (the
	 * count when it was submitted: fdatasync writes back what was in the
	 * page cache when it ran) */
	uint64_t mod_done;
	uint64_t flushed_upto;
};

/**
 * nvmfd__bk_ring_get_sqe() - an SQE for @io on @ring, user data set to @io.
 * @ring:   borrowed.
 * @io:     borrowed; BK_IOF_IOPOLL in io->flags is set or cleared to say
 *          which io_uring the SQE went to.
 * @iopoll: use the IOPOLL io_uring when the ring has one.
 * Return: the SQE (to be filled by the caller), NULL when the SQ is full.
 * Context: ring owner.
 */
struct io_uring_sqe *nvmfd__bk_ring_get_sqe(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io,
					    bool iopoll);

/**
 * nvmfd__bk_ring_complete_local() - finish @io without the kernel: its
 * callback runs, with @res, at the next nvmfd_bk_ring_reap().
 * @ring: borrowed.  @io: borrowed.  @res: final result.
 * Context: ring owner.
 */
void nvmfd__bk_ring_complete_local(struct nvmfd_bk_ring *ring, struct nvmfd_bk_io *io, int res);

/* Per-kind open functions: fill @bk (already zeroed, fd = -1) from @opts,
 * whose type and lba_shift were validated. Return: 0 or -errno; on failure
 * nothing is left acquired. */
int nvmfd__bk_file_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts);
int nvmfd__bk_fd_lock(struct nvmfd_bk *bk);
int nvmfd__bk_bdev_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts);
int nvmfd__bk_ram_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts);

/**
 * nvmfd__bk_ram_forget() - forget the remembered CRCs (nvmfd_bk_lent_digest())
 * of the RAM blocks that [@off, @off + @len) touches, e.g. after the
 * range's pages were dropped; each stripe's lock taken exclusively.
 * Context: any thread.
 */
void nvmfd__bk_ram_forget(struct nvmfd_bk *bk, uint64_t off, uint64_t len);
int nvmfd__bk_null_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts);

/* fd-based I/O shared by FILE and BDEV (file.c): READ/WRITE/FLUSH/
 * WRITE_ZEROES/DISCARD through io_uring, with short-transfer continuation
 * and the zero-fill fallback. See file.c. */
int nvmfd__bk_fd_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io);
bool nvmfd__bk_fd_complete(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			   int *res);
/* fsync (when nvmfd_bk_dirty()) + close of bk->fd; Return: 0 or the
 * first error as -errno. */
int nvmfd__bk_fd_close(struct nvmfd_bk *bk);

#endif /* NVMFD_BACKEND_BK_INT_H */
