// SPDX-License-Identifier: MIT
/*
 * bdev.c - block device backend.
 *
 * The device is opened O_RDWR | O_DIRECT: data goes straight to the device
 * and buffers must be aligned (nvmfd_bk_needs_aligned_buf()). Size comes
 * from BLKGETSIZE64 and the logical block size from BLKSSZGET.
 *
 * READ/WRITE/FLUSH go through io_uring like a file (file.c); READ/WRITE use
 * the ring's IOPOLL io_uring when it has one and the device reports polled
 * completion support (sysfs queue/io_poll); should the kernel still refuse
 * polled I/O (-EOPNOTSUPP) the backend latches that and uses the main ring.
 *
 * DISCARD (BLKDISCARD) and WRITE_ZEROES (BLKZEROOUT) are ioctls, and those
 * are SYNCHRONOUS: they run inside nvmfd_bk_submit() on the ring owner's
 * thread and block it for as long as the device takes (BLKZEROOUT may write
 * the zeroes itself when the device has no Write Zeroes command). Their
 * result is delivered through the ring at the next reap like any other
 * completion. io_uring in liburing 2.3 has no opcode for either.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

static int bdev_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	uint64_t range[2] = { io->offset, io->len };
	unsigned long req;

	switch (io->op) {
	case NVMFD_BK_WRITE_ZEROES:
		req = BLKZEROOUT;
		break;
	case NVMFD_BK_DISCARD:
		req = BLKDISCARD;
		break;
	default:
		return nvmfd__bk_fd_submit(ring, bk, io);
	}
	nvmfd__bk_ring_complete_local(ring, io, ioctl(bk->fd, req, range) < 0 ? -errno : 0);
	return 0;
}

static const struct nvmfd_bk_ops bdev_ops = {
	.submit = bdev_submit,
	.complete = nvmfd__bk_fd_complete,
	.close = nvmfd__bk_fd_close,
};

/* Does the device complete polled I/O (queue/io_poll = 1, e.g. NVMe with
 * poll queues)? Partitions keep their queue attributes in the parent's
 * directory. Unknown means no: IOPOLL on a device without poll queues only
 * turns interrupts into busy-waiting. */
static bool bdev_can_poll(dev_t rdev)
{
	char path[96];
	char v = '0';
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/io_poll", major(rdev),
		 minor(rdev));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/io_poll", major(rdev),
			 minor(rdev));
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return false;
	if (read(fd, &v, 1) != 1)
		v = '0';
	close(fd);
	return v == '1';
}

static unsigned int bdev_log2(unsigned int v)
{
	unsigned int s = 0;

	while ((1u << s) < v)
		s++;
	return s;
}

/**
 * nvmfd__bk_bdev_open() - open a block device backend.
 * @bk:   zeroed backend to fill; bk->lba_shift is 0 or the requested shift.
 * @opts: path required; size and direct are ignored (always O_DIRECT).
 * Return: 0; -EINVAL (no path, requested block size smaller than the
 *         device's, device block size not 512 or 4096, device smaller than
 *         one block); -ENOTBLK (path is not a block device); -EBUSY (mounted,
 *         or exported by another process); -errno from open/fstat/ioctl.
 * Context: any thread.
 */
int nvmfd__bk_bdev_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts)
{
	unsigned int dev_shift;
	uint64_t bytes;
	struct stat st;
	int lbs = 0;
	int fd, rc;

	if (!opts->path || !opts->path[0])
		return -EINVAL;
	/* O_EXCL on a block device: fails with EBUSY while it is mounted or
	 * another exclusive opener holds it (and holds it from them) */
	fd = open(opts->path,
		  (opts->read_only ? O_RDONLY : O_RDWR | O_EXCL) | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	bk->fd = fd;
	bk->read_only = opts->read_only;
	rc = nvmfd__bk_fd_lock(bk);
	if (rc < 0)
		goto out_close_fd;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close_fd;
	}
	if (!S_ISBLK(st.st_mode)) {
		rc = -ENOTBLK;
		goto out_close_fd;
	}
	if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0) {
		rc = -errno;
		goto out_close_fd;
	}
	if (lbs != 512 && lbs != 4096) {
		rc = -EINVAL;
		goto out_close_fd;
	}
	dev_shift = bdev_log2((unsigned int)lbs);
	if (!opts->lba_shift)
		bk->lba_shift = dev_shift;
	else if (bk->lba_shift < dev_shift) {
		rc = -EINVAL;
		goto out_close_fd;
	}
	bytes &= ~((1ull << bk->lba_shift) - 1);
	if (!bytes) {
		rc = -EINVAL;
		goto out_close_fd;
	}

	bk->ops = &bdev_ops;
	bk->size = bytes;
	bk->direct = true;
	bk->iopoll_capable = bdev_can_poll(st.st_rdev);
	return 0;

out_close_fd:
	close(fd);
	bk->fd = -1;
	return rc;
}
