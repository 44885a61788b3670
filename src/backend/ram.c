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
 * nothing to make durable.
 *
 * Lending (io->lend, internal/backend.h): a READ may answer with a pointer
 * into the mapping (io->lent) instead of copying; the transport sends from
 * there. Single-block atomicity (NVMe: a write of one logical block is
 * atomic with respect to other commands; doc/perf.md §7) is kept with
 * stripe locks: the mapping is cut into BK_RAM_STRIPE-byte stripes, each
 * hashed onto one of BK_RAM_STRIPE_LOCKS reader/writer spin locks. Writes
 * (and WRITE_ZEROES/DISCARD) take one stripe's lock exclusively at a time
 * while they copy into it; copying reads and the holders of a lent range
 * (nvmfd_bk_lent_lock()) take it shared. A writer never holds two locks,
 * so readers holding several (and taking one again) cannot deadlock; a
 * stripe is a multiple of every block size, so no block spans two locks.
 *
 * Digests of lent data (nvmfd_bk_lent_digest()): the NVMe/TCP data digest
 * of a lent range whose ends are BK_RAM_CRC_BLOCK-aligned is made of one
 * CRC32C per block (started from 0, nvmfd_crc32c_combine()), and each
 * block's CRC is remembered in a table (allocated at the first such
 * digest: a namespace read without digests pays nothing) until a write,
 * WRITE_ZEROES or DISCARD touching the block forgets it. A randomly read
 * block is in no cache, so computing its CRC again costs a pass over
 * memory (doc/perf.md §13, §14). The entries are read and written with
 * the block's stripe lock held (shared by the digest, exclusive by the
 * forgetting write), so a remembered CRC is always that of the block's
 * bytes as the lock holder sees them.
 *
 * The mapping asks for transparent huge pages (MADV_HUGEPAGE; see
 * nvmfd__bk_ram_open()).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "backend/bk_int.h"
#include "internal/backend.h"
#include <nvmfd/pdu.h>

#define BK_RAM_STRIPE_SHIFT 16 /* 64 KiB stripes */
#define BK_RAM_STRIPE (1ull << BK_RAM_STRIPE_SHIFT)
#define BK_RAM_STRIPE_LOCKS 512u /* a power of two; 32 KiB of locks */
#define BK_STRIPE_W 0x80000000u /* writer holds it; low bits: readers */
#define BK_RAM_CRC_SHIFT 12 /* CRCs remembered per 4 KiB block */
#define BK_RAM_CRC_BLOCK (1u << BK_RAM_CRC_SHIFT)
#define BK_RAM_CRC_VALID (1ull << 32) /* table entry: valid bit | CRC */

/* One lock per cache line: locks of nearby stripes do not share lines. */
struct bk_stripe_lock {
	uint32_t v;
	uint8_t pad[60];
};

/* Waiting: spin a little, then sleep 20 us at a time, so that the holder
 * runs even if it shares our CPU at a lower priority (a lent range is held
 * across a non-blocking send: microseconds, unless the holder is preempted). */
static void stripe_wait(unsigned int *spins)
{
	struct timespec ts = { .tv_nsec = 20000 };

	if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	nanosleep(&ts, NULL);
}

static struct bk_stripe_lock *stripe_of(struct nvmfd_bk *bk, uint64_t off)
{
	return &bk->stripes[(off >> BK_RAM_STRIPE_SHIFT) & (BK_RAM_STRIPE_LOCKS - 1)];
}

static void stripe_read_lock(struct bk_stripe_lock *l)
{
	unsigned int spins = 0;
	uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);

	for (;;) {
		if (!(v & BK_STRIPE_W) &&
		    __atomic_compare_exchange_n(&l->v, &v, v + 1, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		if (v & BK_STRIPE_W) {
			stripe_wait(&spins);
			v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		}
	}
}

static void stripe_read_unlock(struct bk_stripe_lock *l)
{
	__atomic_sub_fetch(&l->v, 1, __ATOMIC_RELEASE);
}

static void stripe_write_lock(struct bk_stripe_lock *l)
{
	unsigned int spins = 0;
	uint32_t v = 0;

	while (!__atomic_compare_exchange_n(&l->v, &v, BK_STRIPE_W, true, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (v)
			stripe_wait(&spins);
		v = 0;
	}
}

static void stripe_write_unlock(struct bk_stripe_lock *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* Bytes from @off to the end of its stripe, at most @len. */
static uint64_t stripe_chunk(uint64_t off, uint64_t len)
{
	uint64_t room = BK_RAM_STRIPE - (off & (BK_RAM_STRIPE - 1));

	return len < room ? len : room;
}

/* Forget the remembered CRCs of the blocks that [@off, @off + @len)
 * touches. Context: the stripe's lock held exclusively. */
static void ram_crc_forget(struct nvmfd_bk *bk, uint64_t off, uint64_t len)
{
	uint64_t *t = __atomic_load_n(&bk->crcs, __ATOMIC_ACQUIRE);
	uint64_t b, end;

	if (!t || !len)
		return;
	end = (off + len - 1) >> BK_RAM_CRC_SHIFT;
	for (b = off >> BK_RAM_CRC_SHIFT; b <= end && b < bk->crc_blocks; b++)
		__atomic_store_n(&t[b], 0, __ATOMIC_RELAXED);
}

/* Copy @len bytes at @off in or out of the mapping (or clear them: @src
 * and @dst NULL), one stripe at a time under its lock. */
static void ram_copy(struct nvmfd_bk *bk, uint64_t off, void *dst, const void *src, uint64_t len)
{
	uint8_t *mem = bk->mem;

	while (len) {
		uint64_t n = stripe_chunk(off, len);
		struct bk_stripe_lock *l = stripe_of(bk, off);

		if (dst) { /* read */
			stripe_read_lock(l);
			memcpy(dst, mem + off, n);
			stripe_read_unlock(l);
			dst = (uint8_t *)dst + n;
		} else {
			stripe_write_lock(l);
			ram_crc_forget(bk, off, n);
			if (src)
				memcpy(mem + off, src, n);
			else
				memset(mem + off, 0, n);
			stripe_write_unlock(l);
			if (src)
				src = (const uint8_t *)src + n;
		}
		off += n;
		len -= n;
	}
}

/**
 * nvmfd_bk_lent_lock() - see internal/backend.h.
 */
void nvmfd_bk_lent_lock(struct nvmfd_bk *bk, const void *p, uint32_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - (const uint8_t *)bk->mem);

	if (!bk->stripes)
		return; /* only RAM lends */
	while (len) {
		uint64_t n = stripe_chunk(off, len);

		stripe_read_lock(stripe_of(bk, off));
		off += n;
		len -= (uint32_t)n;
	}
}

/**
 * nvmfd_bk_lent_unlock() - see internal/backend.h.
 */
void nvmfd_bk_lent_unlock(struct nvmfd_bk *bk, const void *p, uint32_t len)
{
	uint64_t off = (uint64_t)((const uint8_t *)p - (const uint8_t *)bk->mem);

	if (!bk->stripes)
		return;
	while (len) {
		uint64_t n = stripe_chunk(off, len);

		stripe_read_unlock(stripe_of(bk, off));
		off += n;
		len -= (uint32_t)n;
	}
}

/* The CRC table, allocated at the first call (NULL without memory). */
static uint64_t *ram_crc_table(struct nvmfd_bk *bk)
{
	uint64_t *t = __atomic_load_n(&bk->crcs, __ATOMIC_ACQUIRE), *n;

	if (t || !bk->crc_blocks)
		return t;
	n = calloc(bk->crc_blocks, sizeof(*n));
	if (!n)
		return NULL;
	if (!__atomic_compare_exchange_n(&bk->crcs, &t, n, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(n); /* another thread's table won */
		return t;
	}
	return n;
}

/**
 * nvmfd_bk_lent_digest() - see internal/backend.h.
 */
uint32_t nvmfd_bk_lent_digest(struct nvmfd_bk *bk, const void *p, uint32_t len)
{
	const uint8_t *mem = bk->mem;
	uint64_t off = (uint64_t)((const uint8_t *)p - mem), b, end;
	uint32_t crc = NVMFD_CRC32C_INIT, shift0;
	uint64_t *t;

	if (!bk->stripes || !len || ((off | len) & (BK_RAM_CRC_BLOCK - 1)) ||
	    (off + len) >> BK_RAM_CRC_SHIFT > bk->crc_blocks || !(t = ram_crc_table(bk)))
		return nvmfd_digest_cold(p, len);
	/* a block's CRC from 0 out of its digest: ~digest ^ (~0 shifted over it) */
	shift0 = nvmfd_crc32c_combine(NVMFD_CRC32C_INIT, 0, BK_RAM_CRC_BLOCK);
	end = (off + len) >> BK_RAM_CRC_SHIFT;
	for (b = off >> BK_RAM_CRC_SHIFT; b < end; b++) {
		uint64_t e = __atomic_load_n(&t[b], __ATOMIC_RELAXED);
		uint32_t c0;

		if (e & BK_RAM_CRC_VALID) {
			c0 = (uint32_t)e;
		} else {
			c0 = ~nvmfd_digest_cold(mem + (b << BK_RAM_CRC_SHIFT), BK_RAM_CRC_BLOCK) ^
			     shift0;
			__atomic_store_n(&t[b], BK_RAM_CRC_VALID | c0, __ATOMIC_RELAXED);
		}
		crc = nvmfd_crc32c_combine(crc, c0, BK_RAM_CRC_BLOCK);
	}
	return nvmfd_crc32c_final(crc);
}

/**
 * nvmfd__bk_ram_forget() - see backend/bk_int.h.
 */
void nvmfd__bk_ram_forget(struct nvmfd_bk *bk, uint64_t off, uint64_t len)
{
	while (len) {
		uint64_t n = stripe_chunk(off, len);
		struct bk_stripe_lock *l = stripe_of(bk, off);

		stripe_write_lock(l);
		ram_crc_forget(bk, off, n);
		stripe_write_unlock(l);
		off += n;
		len -= n;
	}
}

/*
 * A lent READ is sent later (its completion is delivered at the next reap
 * and the transport sends after the commands of its pass): start loading
 * the cache lines the send touches first that are not the data itself,
 * so that their misses overlap the parsing of the other commands. Those
 * are the block's stripe lock (taken for the send) and, once a data
 * digest made the CRC table, the block's remembered CRC: 8 B per 4 KiB
 * block read at random (512 KiB for 256 MiB), evicted by the data that
 * streams through the caches; its load was nearly all of
 * nvmfd_bk_lent_digest()'s time, 6 % of the target's with digests
 * (doc/perf.md §16). At most RAM_PREFETCH_LINES lines of the table.
 */
#define RAM_PREFETCH_LINES 4u

static void ram_lend_prefetch(struct nvmfd_bk *bk, uint64_t off, uint64_t len)
{
	const uint64_t *t = __atomic_load_n(&bk->crcs, __ATOMIC_RELAXED);
	uint64_t b, end;
	unsigned int lines = 0;

	if (!len)
		return;
	if (bk->stripes)
		__builtin_prefetch(stripe_of(bk, off), 1, 3);
	if (!t)
		return;
	b = off >> BK_RAM_CRC_SHIFT;
	end = (off + len - 1) >> BK_RAM_CRC_SHIFT;
	if (end >= bk->crc_blocks)
		end = bk->crc_blocks - 1; /* grown since the table was made */
	/* one line holds 8 entries: one prefetch per line the range spans */
	for (; b <= end && lines < RAM_PREFETCH_LINES; b = (b | 7u) + 1, lines++)
		__builtin_prefetch(&t[b], 0, 3);
}

static int ram_submit(struct nvmfd_bk_ring *ring, struct nvmfd_bk *bk, struct nvmfd_bk_io *io)
{
	int res = 0;

	switch (io->op) {
	case NVMFD_BK_READ:
		if (io->lend) {
			io->lent = (const uint8_t *)bk->mem + io->offset;
			ram_lend_prefetch(bk, io->offset, io->len);
		} else
			ram_copy(bk, io->offset, io->buf, NULL, io->len);
		res = (int)io->len;
		break;
	case NVMFD_BK_WRITE:
		ram_copy(bk, io->offset, NULL, io->buf, io->len);
		res = (int)io->len;
		break;
	case NVMFD_BK_WRITE_ZEROES:
	case NVMFD_BK_DISCARD:
		ram_copy(bk, io->offset, NULL, NULL, io->len);
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
	free(bk->stripes);
	bk->stripes = NULL;
	free(bk->crcs);
	bk->crcs = NULL;
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
	bk->stripes = calloc(BK_RAM_STRIPE_LOCKS, sizeof(*bk->stripes));
	if (!bk->stripes) {
		munmap(mem, (size_t)bk->map_len);
		return -ENOMEM;
	}
	bk->crc_blocks = opts->size >> BK_RAM_CRC_SHIFT; /* growth beyond: not remembered */
	bk->ops = &ram_ops;
	bk->mem = mem;
	bk->size = opts->size;
	return 0;
}
