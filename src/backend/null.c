// SPDX-License-Identifier: MIT
/*
 * null.c - null backend: reads return zeroes, writes and everything else
 * succeed and are discarded. For measuring the target without storage.
 * The zero fill happens in nvmfd_bk_submit(); the completion is delivered
 * at the next reap.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

static int null_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	int res = 0;

	if (io->op == NVMFD_BK_READ) {
		memset(io->buf, 0, io->len);
		res = (int)io->len;
	} else if (io->op == NVMFD_BK_WRITE) {
		res = (int)io->len;
	}
	nvmfd__bk_ring_complete_local(ring, io, res);
	return 0;
}

static bool null_complete(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			  int *res)
{
	/* The null backend never posts a CQE. */
	return true;
}

static int null_close(struct nvmfd_bk *bk)
{
	return 0;
}

static const struct nvmfd_bk_ops null_ops = {
	.submit = null_submit,
	.complete = null_complete,
	.close = null_close,
};

/**
 * nvmfd__bk_null_open() - create a null backend that reports opts->size.
 * @bk:   zeroed backend to fill.
 * @opts: size required, a multiple of the block size.
 * Return: 0, -EINVAL (size 0 or not a block multiple).
 * Context: any thread.
 */
int nvmfd__bk_null_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts)
{
	if (!opts->size || (opts->size & ((1ull << bk->lba_shift) - 1)))
		return -EINVAL;
	bk->ops = &null_ops;
	bk->size = opts->size;
	return 0;
}
