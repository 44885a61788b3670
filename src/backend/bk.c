// SPDX-License-Identifier: MIT
/*
 * bk.c - the backend object: open/close dispatch to the kinds (file.c,
 * bdev.c, ram.c, null.c) and the accessors. See internal/backend.h.
 *
 * Ownership: nvmfd_bk_open() creates, nvmfd_bk_close() destroys; the
 * caller must have reaped every io of the backend before closing it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

/**
 * nvmfd_bk_open() - open or create a backend.
 * @opts: borrowed for the call; lba_shift must be 0, 9 or 12.
 * @out:  receives the backend (caller owns it: nvmfd_bk_close()).
 * Return: 0; -EINVAL (NULL args, unknown type, bad lba_shift, missing
 *         path or size, size not a block multiple, wrong file type);
 *         -ENOTBLK (BDEV path is not a block device); -ENOMEM; -errno from
 *         open/fstat/ftruncate/ioctl.
 * Context: any thread; may block (open, ftruncate, ioctl).
 */
int nvmfd_bk_open(const struct nvmfd_bk_opts *opts, struct nvmfd_bk **out)
{
	struct nvmfd_bk *bk;
	int rc;

	if (!opts || !out)
		return -EINVAL;
	*out = NULL;
	if (opts->lba_shift != 0 && opts->lba_shift != 9 && opts->lba_shift != 12)
		return -EINVAL;

	bk = calloc(1, sizeof(*bk));
	if (!bk)
		return -ENOMEM;
	bk->type = opts->type;
	bk->fd = -1;
	bk->lba_shift = opts->lba_shift ? opts->lba_shift : 9;
	snprintf(bk->name, sizeof(bk->name), "%s", opts->path ? opts->path : "");

	switch (opts->type) {
	case NVMFD_BK_FILE:
		rc = nvmfd__bk_file_open(bk, opts);
		break;
	case NVMFD_BK_BDEV:
		rc = nvmfd__bk_bdev_open(bk, opts);
		break;
	case NVMFD_BK_RAM:
		rc = nvmfd__bk_ram_open(bk, opts);
		break;
	case NVMFD_BK_NULL:
		rc = nvmfd__bk_null_open(bk, opts);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc < 0)
		goto out_free_bk;
	*out = bk;
	return 0;

out_free_bk:
	free(bk);
	return rc;
}

/**
 * nvmfd_bk_close() - flush and release *@bkp, NULL it.
 * @bkp: the backend; no io may be in flight on any ring.
 * Return: 0 or the fsync error (-errno); the backend is released anyway.
 * Context: any thread; may block (fsync).
 */
int nvmfd_bk_close(struct nvmfd_bk **bkp)
{
	struct nvmfd_bk *bk;
	int rc;

	if (!bkp || !*bkp)
		return 0;
	bk = *bkp;
	*bkp = NULL;
	rc = bk->ops->close(bk);
	free(bk);
	return rc;
}

int nvmfd_bk_close_nosync(struct nvmfd_bk **bkp)
{
	if (!bkp || !*bkp)
		return 0;
	(*bkp)->close_nosync = true;
	return nvmfd_bk_close(bkp);
}

bool nvmfd_bk_dirty(const struct nvmfd_bk *bk)
{
	if (bk->type != NVMFD_BK_FILE && bk->type != NVMFD_BK_BDEV)
		return false;
	return __atomic_load_n(&bk->mod_done, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&bk->flushed_upto, __ATOMIC_ACQUIRE);
}

/**
 * nvmfd_bk_size() - namespace size in bytes (a multiple of the block size).
 * @bk: borrowed.  Return: bytes.  Context: any thread.
 */
uint64_t nvmfd_bk_size(const struct nvmfd_bk *bk)
{
	return __atomic_load_n(&bk->size, __ATOMIC_ACQUIRE);
}

/**
 * nvmfd_bk_lba_shift() - log2 of the logical block size (9 or 12).
 * @bk: borrowed.  Return: the shift.  Context: any thread.
 */
unsigned int nvmfd_bk_lba_shift(const struct nvmfd_bk *bk)
{
	return bk->lba_shift;
}

/**
 * nvmfd_bk_is_read_only() - opened read-only (writes fail with -EROFS).
 * @bk: borrowed.  Return: the flag.  Context: any thread.
 */
bool nvmfd_bk_is_read_only(const struct nvmfd_bk *bk)
{
	return bk->read_only;
}

/**
 * nvmfd_bk_get_type() - the backend kind.
 * @bk: borrowed.  Return: the type.  Context: any thread.
 */
enum nvmfd_bk_type nvmfd_bk_get_type(const struct nvmfd_bk *bk)
{
	return bk->type;
}

/**
 * nvmfd_bk_needs_aligned_buf() - true when buffers must come from
 * nvmfd_bk_buf_alloc() (O_DIRECT file, block device).
 * @bk: borrowed.  Return: the flag.  Context: any thread.
 */
bool nvmfd_bk_needs_aligned_buf(const struct nvmfd_bk *bk)
{
	return bk->direct;
}

/**
 * nvmfd_bk_buf_alloc() - a 4096-byte aligned buffer (release with free()).
 * @len: bytes, > 0.
 * Return: the buffer, NULL when @len is 0 or memory is short.
 * Context: any thread; not for the data path (preallocate).
 */
void *nvmfd_bk_buf_alloc(size_t len)
{
	void *p;

	if (!len || posix_memalign(&p, 4096, len))
		return NULL;
	return p;
}
