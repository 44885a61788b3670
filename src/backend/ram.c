// SPDX-License-Identifier: MIT
/*
 * ram.c - RAM backend: an anonymous private mapping of the namespace size,
 * lost at exit. Pages are allocated by the kernel on first write
 * (MAP_NORESERVE: a large, sparsely used namespace costs nothing up front)
 * and read back as zeroes until then.
 *
 * The copy happens in nvmfd_bk_submit() on the ring owner's thread; the
 * completion is delivered at the next reap, like every other backend's.
 * The mapping reserves BK_RAM_RESERVE bytes of address space (inaccessible
 * beyond the size) so that nvmfd_bk_resize() can grow it in place.
 * WRITE_ZEROES and DISCARD clear the range with memset; FLUSH and FUA have
 * nothing to make durable. The mapping asks for transparent huge pages
 * (MADV_HUGEPAGE; see nvmfd__bk_ram_open()).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "backend/bk_int.h"
#include "internal/backend.h"

static int ram_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	uint8_t *p = (uint8_t *)bk->mem + io->offset;
	int res = 0;

	switch (io->op) {
	case NVMFD_BK_READ:
		memcpy(io->buf, p, io->len);
		res = (int)io->len;
		break;
	case NVMFD_BK_WRITE:
		memcpy(p, io->buf, io->len);
		res = (int)io->len;
		break;
	case NVMFD_BK_WRITE_ZEROES:
	case NVMFD_BK_DISCARD:
		memset(p, 0, io->len);
		break;
	case NVMFD_BK_FLUSH:
		break;
	}
	nvmfd__bk_ring_complete_local(ring, io, res);
	return 0;
}

static bool ram_complete(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io,
			 int *res)
{
	/* RAM never posts a CQE. */
	return true;
}

static int ram_close(struct nvmfd_bk *bk)
{
	if (bk->mem)
		munmap(bk->mem, bk->map_len);
	bk->mem = NULL;
	return 0;
}

static const struct nvmfd_bk_ops ram_ops = {
	.submit = ram_submit,
	.complete = ram_complete,
	.close = ram_close,
};

/**
 * nvmfd__bk_ram_open() - create a RAM backend of opts->size bytes.
 * @bk:   zeroed backend to fill.
 * @opts: size required, a multiple of the block size.
 * Return: 0, -EINVAL (size 0 or not a block multiple), -ENOMEM.
 * Context: any thread.
 */
int nvmfd__bk_ram_open(struct nvmfd_bk *bk, const struct nvmfd_bk_opts *opts)
{
	void *mem;

	if (!opts->size || (opts->size & ((1ull << bk->lba_shift) - 1)))
		return -EINVAL;
	if (opts->size > SIZE_MAX)
		return -ENOMEM;
	/* address space for growing in place (nvmfd_bk_resize()): reserved
	 * inaccessible, costs no memory; only the namespace's size is usable */
	bk->map_len = opts->size > BK_RAM_RESERVE ? opts->size : BK_RAM_RESERVE;
	mem = mmap(NULL, (size_t)bk->map_len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED && bk->map_len > opts->size) {
		bk->map_len = opts->size;
		mem = mmap(NULL, (size_t)bk->map_len, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (mem == MAP_FAILED)
		return -ENOMEM;
	if (mprotect(mem, (size_t)opts->size, PROT_READ | PROT_WRITE) < 0) {
		munmap(mem, (size_t)bk->map_len);
		return -ENOMEM;
	}
	/* Transparent huge pages where the kernel allows them (THP "always"
	 * or "madvise"; best effort, ignored otherwise): freeing 256 MiB of
	 * 4 KiB pages at close costs the closing thread 25-40 ms of CPU, which
	 * a starved CPU turned into seconds of stop time (issue 14); 2 MiB
	 * pages cost about 1 ms, and first writes fault 512 times less often. */
	(void)madvise(mem, (size_t)bk->map_len, MADV_HUGEPAGE);
	bk->ops = &ram_ops;
	bk->mem = mem;
	bk->size = opts->size;
	return 0;
}
