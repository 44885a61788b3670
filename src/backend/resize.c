// SPDX-License-Identifier: MIT
/*
 * resize.c - changing a backend's size while it serves I/O
 * (nvmfd_bk_resize(), internal/backend.h).
 *
 * The size is the only thing that changes; it is read with an atomic load
 * by the range check of nvmfd_bk_submit() on the rings' threads, so an io
 * checked against the old size of a shrunk backend is either refused or
 * runs against storage that still exists:
 *  - FILE: grow with ftruncate (never shrink: that would discard data the
 *    host wrote); size 0 re-reads the file's size (it may have been grown,
 *    or shrunk, by someone else), rounded down to the block size.
 *  - BDEV: size 0 re-reads the device size (BLKGETSIZE64); a given size is
 *    refused (the device decides).
 *  - RAM: grow in place (within the address space reserved at open, else
 *    mremap without moving: an io copying into the mapping must never see
 *    it move), shrink by lowering the size and
 *    dropping the tail's pages (MADV_DONTNEED: they read back as zeroes if
 *    it grows again); the mapping is unmapped whole at close.
 *  - NULL: any size.
 */
#include <errno.h>
#include <linux/fs.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

static uint64_t bk_size_get(const struct nvmfd_bk *bk)
{
	return __atomic_load_n(&bk->size, __ATOMIC_ACQUIRE);
}

/* @size: in, the wanted size (0: re-read); out, the file's size now. */
static int file_resize(struct nvmfd_bk *bk, uint64_t *size, uint64_t lbs)
{
	struct stat st;

	if (*size && bk->read_only)
		return -EROFS;
	if (*size && *size < bk_size_get(bk))
		return -EINVAL;
	if (fstat(bk->fd, &st) < 0)
		return -errno;
	if (*size) {
		if ((uint64_t)st.st_size < *size && ftruncate(bk->fd, (off_t)*size) < 0)
			return -errno;
		/* the new size is metadata a FLUSH (or the close) must sync */
		__atomic_add_fetch(&bk->mod_done, 1, __ATOMIC_RELEASE);
		return 0;
	}
	*size = (uint64_t)st.st_size & ~(lbs - 1);
	return *size ? 0 : -EINVAL;
}

static int ram_resize(struct nvmfd_bk *bk, uint64_t size)
{
	uint64_t cur = bk_size_get(bk);

	if (size > bk->map_len) {
		void *p;

		if (size > SIZE_MAX)
			return -ENOMEM;
		p = mremap(bk->mem, (size_t)bk->map_len, (size_t)size, 0);
		if (p == MAP_FAILED)
			return -ENOMEM; /* no room to grow in place */
		bk->map_len = size;
	}
	if (size > cur) {
		/* the reserved address space after it becomes usable */
		if (mprotect(bk->mem, (size_t)size, PROT_READ | PROT_WRITE) < 0)
			return -ENOMEM;
	} else if (size < cur) {
		/* lower the size first: new ios see it before the pages go */
		__atomic_store_n(&bk->size, size, __ATOMIC_RELEASE);
		madvise((uint8_t *)bk->mem + size, (size_t)(cur - size), MADV_DONTNEED);
		/* the tail reads back as zeroes if it grows again */
		nvmfd__bk_ram_forget(bk, size, cur - size);
	}
	return 0;
}

/**
 * nvmfd_bk_resize() - see internal/backend.h.
 */
int nvmfd_bk_resize(struct nvmfd_bk *bk, uint64_t size, uint64_t *out)
{
	uint64_t lbs = 1ull << bk->lba_shift, bytes = 0;
	int ret = 0;

	if (size & (lbs - 1))
		return -EINVAL;
	switch (bk->type) {
	case NVMFD_BK_FILE:
		ret = file_resize(bk, &size, lbs);
		break;
	case NVMFD_BK_BDEV:
		if (size)
			return -EINVAL;
		if (ioctl(bk->fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
		size = bytes & ~(lbs - 1);
		if (!size)
			return -EINVAL;
		break;
	case NVMFD_BK_RAM:
		if (!size)
			return -EINVAL;
		ret = ram_resize(bk, size);
		break;
	case NVMFD_BK_NULL:
		if (!size)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	__atomic_store_n(&bk->size, size, __ATOMIC_RELEASE);
	if (out)
		*out = size;
	return 0;
}
