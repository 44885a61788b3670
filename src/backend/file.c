// SPDX-License-Identifier: MIT
/*
 * file.c - regular-file backend, and the fd-based io_uring I/O that the
 * block device backend shares.
 *
 * READ/WRITE    IORING_OP_READ/WRITE at the io's offset. FUA sets RWF_DSYNC
 *               on the write, so the data is durable when it completes.
 * FLUSH         IORING_OP_FSYNC with IORING_FSYNC_DATASYNC (fdatasync).
 * WRITE_ZEROES  IORING_OP_FALLOCATE FALLOC_FL_ZERO_RANGE | KEEP_SIZE. When
 *               the filesystem answers -EOPNOTSUPP (tmpfs, some network
 *               filesystems) the backend latches that and from then on
 *               writes zeroes from a static zero buffer, 128 KiB per SQE.
 * DISCARD       IORING_OP_FALLOCATE FALLOC_FL_PUNCH_HOLE | KEEP_SIZE; a
 *               refusal completes the io with the error (-EOPNOTSUPP), the
 *               target decides what that means for Dataset Management.
 *
 * Short transfers: a READ/WRITE (or zero-fill write) that moves fewer bytes
 * than asked is continued: the remainder is resubmitted from the reaping
 * thread, as many times as it keeps making progress. A transfer of 0 bytes
 * (end of file: the file was truncated behind our back) completes the io
 * with -EIO. For O_DIRECT a short transfer that leaves an unaligned
 * remainder gets -EINVAL from the kernel and completes with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "backend/bk_int.h"
#include "internal/backend.h"
#include "internal/log.h"

/* Zero source for the WRITE_ZEROES fallback: 128 KiB bounds the SQE count
 * of a large zeroing (32 SQEs per 4 MiB) while staying in .bss, so no
 * allocation; 4096-aligned for O_DIRECT. Only ever read. */
#define FD_ZBUF_LEN (128u * 1024u)
static uint8_t fd_zero_buf[FD_ZBUF_LEN] __attribute__((aligned(4096)));

static const struct nvmfd_bk_ops file_ops;

static bool fd_use_iopoll(const struct nvmfd_bk *bk, const struct nvmfd_bk_io *io)
{
	if (!bk->iopoll_capable || (io->flags & BK_IOF_ZFILL))
		return false;
	if (io->op != NVMFD_BK_READ && io->op != NVMFD_BK_WRITE)
		return false;
	return !__atomic_load_n(&bk->no_iopoll, __ATOMIC_RELAXED);
}

/* Prepare the SQE for the io's next step (all of it, or the remainder after
 * io->done bytes). Return: 0 or -EBUSY when no SQE is free. */
static int fd_prep(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	struct io_uring_sqe *sqe;
	uint64_t off = io->offset + io->done;
	uint32_t left = io->len - io->done;

	sqe = nvmfd__bk_ring_get_sqe(ring, io, fd_use_iopoll(bk, io));
	if (!sqe)
		return -EBUSY;

	if (io->flags & BK_IOF_ZFILL) {
		io_uring_prep_write(sqe, bk->fd, fd_zero_buf, left < FD_ZBUF_LEN ? left : FD_ZBUF_LEN,
				    off);
		return 0;
	}
	switch (io->op) {
	case NVMFD_BK_READ:
		io_uring_prep_read(sqe, bk->fd, (uint8_t *)io->buf + io->done, left, off);
		break;
	case NVMFD_BK_WRITE:
		io_uring_prep_write(sqe, bk->fd, (uint8_t *)io->buf + io->done, left, off);
		if (io->fua)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case NVMFD_BK_FLUSH:
		io_uring_prep_fsync(sqe, bk->fd, IORING_FSYNC_DATASYNC);
		break;
	case NVMFD_BK_WRITE_ZEROES:
		io_uring_prep_fallocate(sqe, bk->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					(off_t)io->offset, (off_t)io->len);
		break;
	case NVMFD_BK_DISCARD:
		io_uring_prep_fallocate(sqe, bk->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(off_t)io->offset, (off_t)io->len);
		break;
	}
	return 0;
}

/**
 * nvmfd__bk_fd_submit() - start an fd-based io (see the file comment).
 * @ring: borrowed.  @bk: FILE or BDEV backend.  @io: validated io.
 * Return: 0 or -EBUSY (no SQE free).
 * Context: ring owner.
 */
int nvmfd__bk_fd_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	if (bk->read_only && io->op != NVMFD_BK_READ && io->op != NVMFD_BK_FLUSH) {
		nvmfd__bk_ring_complete_local(ring, io, -EROFS);
		return 0;
	}
	if (io->op == NVMFD_BK_WRITE_ZEROES &&
	    __atomic_load_n(&bk->no_zero_range, __ATOMIC_RELAXED))
		io->flags |= BK_IOF_ZFILL;
	return fd_prep(ring, bk, io);
}

/* Queue the next step from the reaping thread. Return: true if it could not
 * be queued (the io is then finished with *res = -EBUSY). */
static bool fd_continue(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			int *res)
{
	if (fd_prep(ring, bk, io) == 0)
		return false;
	*res = -EBUSY;
	return true;
}

/**
 * nvmfd__bk_fd_complete() - a CQE arrived for an fd-based io.
 * @ring: borrowed.  @bk: the io's backend.  @io: the io.
 * @res:  in: the CQE result; out: the io's final result when finished.
 * Return: true when the io is finished, false when a continuation was
 *         queued.
 * Context: ring owner (reap).
 */
bool nvmfd__bk_fd_complete(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			   int *res)
{
	int r = *res;

	if ((io->flags & BK_IOF_IOPOLL) && r == -EOPNOTSUPP) {
		/* The device has no polled I/O path: use the main ring. */
		__atomic_store_n(&bk->no_iopoll, 1, __ATOMIC_RELAXED);
		return fd_continue(ring, bk, io, res);
	}

	if ((io->flags & BK_IOF_ZFILL) || io->op == NVMFD_BK_READ || io->op == NVMFD_BK_WRITE) {
		if (r < 0) {
			/* the host only sees a status (CAP_EXCEEDED for ENOSPC):
			 * say what failed where (at most 10 lines a second) */
			NVMFD_WARN_RATELIMIT("bk", "%s: %s of %u bytes at offset %llu failed: %s",
					     bk->name[0] ? bk->name : "backend",
					     io->op == NVMFD_BK_READ ? "read" : "write",
					     io->len - io->done,
					     (unsigned long long)(io->offset + io->done),
					     strerror(-r));
			return true;
		}
		if (r == 0) {
			*res = -EIO;
			return true;
		}
		io->done += (uint32_t)r;
		if (io->done < io->len)
			return fd_continue(ring, bk, io, res);
		*res = (io->flags & BK_IOF_ZFILL) ? 0 : (int)io->len;
		return true;
	}

	if (io->op == NVMFD_BK_WRITE_ZEROES && r == -EOPNOTSUPP) {
		if (!__atomic_exchange_n(&bk->no_zero_range, 1, __ATOMIC_RELAXED))
			NVMFD_WARN("bk", "%s: FALLOC_FL_ZERO_RANGE unsupported, writing zeroes",
				   bk->name[0] ? bk->name : "backend");
		io->flags |= BK_IOF_ZFILL;
		io->done = 0;
		return fd_continue(ring, bk, io, res);
	}
	return true;
}

/**
 * nvmfd__bk_fd_close() - fsync and close bk->fd. The fsync is skipped when
 * nothing was written since the last successful FLUSH (nvmfd_bk_dirty()):
 * that FLUSH made it durable already, and a stop with a clean page cache
 * then costs no device round trip; and after nvmfd_bk_close_nosync().
 * @bk: FILE or BDEV backend (fd may be -1).
 * Return: 0 or the fsync/close error as -errno; the fd is closed anyway.
 * Context: no io of @bk in flight.
 */
int nvmfd__bk_fd_close(struct nvmfd_bk *bk)
{
	int rc = 0;

	if (bk->fd < 0)
		return 0;
	if (!bk->read_only && !bk->close_nosync && nvmfd_bk_dirty(bk) && fsync(bk->fd) < 0)
		rc = -errno;
	if (close(bk->fd) < 0 && !rc)
		rc = -errno;
	bk->fd = -1;
	return rc;
}

/**
 * nvmfd__bk_fd_lock() - take @bk->fd's flock: shared when read-only, else
 * exclusive; never waits.
 * Return: 0; -EBUSY when another process (another nvmfd) holds a
 *         conflicting lock; -errno from flock otherwise.
 */
int nvmfd__bk_fd_lock(struct nvmfd_bk *bk)
{
	if (flock(bk->fd, (bk->read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK ? -EBUSY : -errno;
}

/* A namespace file with holes that the filesystem could not fill: writes
 * there fail with ENOSPC (CAP_EXCEEDED on the wire). Warn once at open. */
static void file_warn_sparse(const struct nvmfd_bk *bk, const struct stat *st, uint64_t size)
{
	uint64_t allocated = (uint64_t)st->st_blocks * 512u, missing, avail;
	struct statvfs vfs;

	if (allocated >= size || fstatvfs(bk->fd, &vfs) < 0)
		return;
	missing = size - allocated;
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (missing <= avail)
		return;
	NVMFD_WARN("bk", "%s: namespace of %llu bytes is sparse (%llu allocated) and its "
		   "filesystem has %llu bytes free: writes to the other %llu bytes fail with "
		   "ENOSPC (Capacity Exceeded)",
		   bk->name, (unsigned long long)size, (unsigned long long)allocated,
		   (unsigned long long)avail, (unsigned long long)(missing - avail));
}

/**
 * nvmfd__bk_file_open() - open a regular file backend.
 * @bk:   zeroed backend to fill.
 * @opts: path required; size, when non-zero, creates the file and extends
 *        it (never shrinks) to that many bytes; when zero the file's size
 *        rounded down to the block size is used.
 * Return: 0; -EINVAL (no path, size not a block multiple, not a regular
 *         file, empty file without size, size= with read_only); -EBUSY (the
 *         file is locked by another exporter, see nvmfd__bk_fd_lock());
 *         -errno from open/fstat/ftruncate (-EINVAL from open when the
 *         filesystem refuses O_DIRECT).
 * Logs a warning when the file is sparse beyond the free space.
 * Context: any thread.
 */
int nvmfd__bk_file_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts)
{
	uint64_t lbs = 1ull << bk->lba_shift;
	int flags = (opts->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	uint64_t size;
	int fd, rc;

	if (!opts->path || !opts->path[0] || (opts->size & (lbs - 1)) ||
	    (opts->read_only && opts->size))
		return -EINVAL;
	if (opts->size)
		flags |= O_CREAT;
	if (opts->direct)
		flags |= O_DIRECT;

	fd = open(opts->path, flags, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_close_fd;
	}
	bk->fd = fd;
	bk->read_only = opts->read_only;
	/* before ftruncate: never extend a file another nvmfd exports */
	rc = nvmfd__bk_fd_lock(bk);
	if (rc < 0)
		goto out_close_fd;
	if (opts->size) {
		size = opts->size;
		if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size) < 0) {
			rc = -errno;
			goto out_close_fd;
		}
	} else {
		size = (uint64_t)st.st_size & ~(lbs - 1);
		if (!size) {
			rc = -EINVAL;
			goto out_close_fd;
		}
	}

	bk->ops = &file_ops;
	bk->size = size;
	bk->direct = opts->direct;
	if (!bk->read_only && fstat(fd, &st) == 0)
		file_warn_sparse(bk, &st, size);
	return 0;

out_close_fd:
	close(fd);
	bk->fd = -1;
	return rc;
}

static const struct nvmfd_bk_ops file_ops = {
	.submit = nvmfd__bk_fd_submit,
	.complete = nvmfd__bk_fd_complete,
	.close = nvmfd__bk_fd_close,
};
