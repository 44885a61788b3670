// SPDX-License-Identifier: MIT
/* verify.c - nvmf-perf --verify block images (LBA, generation, checksum)
 * and the --verify-state file (the generation map across runs). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvmfd/pdu.h>

#include "perf.h"

struct vhdr {
	uint32_t magic;
	uint32_t crc;
	uint64_t lba;
	uint64_t gen;
	uint32_t lba_size;
	uint32_t rsvd;
};
_Static_assert(sizeof(struct vhdr) == PERF_VERIFY_HDR, "verify header is 32 bytes");

static uint64_t mix(uint64_t x)
{
	/* splitmix64 finalizer: a cheap, well-spread pattern source. */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint32_t block_crc(const uint8_t *blk, uint32_t lba_size)
{
	static const uint32_t zero;
	uint32_t c = NVMFD_CRC32C_INIT;

	c = nvmfd_crc32c(c, blk, 4);
	c = nvmfd_crc32c(c, &zero, 4);
	c = nvmfd_crc32c(c, blk + 8, lba_size - 8);
	return nvmfd_crc32c_final(c);
}

void perf_verify_fill(void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen)
{
	uint8_t *b = blk;
	struct vhdr h = { .magic = PERF_VERIFY_MAGIC, .lba = lba, .gen = gen, .lba_size = lba_size };
	uint64_t seed = mix(lba ^ (gen << 40) ^ gen);

	for (uint32_t off = PERF_VERIFY_HDR; off + 8 <= lba_size; off += 8) {
		uint64_t v = mix(seed + off);

		memcpy(b + off, &v, 8);
	}
	memcpy(b, &h, sizeof(h));
	h.crc = block_crc(b, lba_size);
	memcpy(b + 4, &h.crc, 4);
}

int perf_verify_check(const void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen, char *msg,
		      size_t len)
{
	const uint8_t *b = blk;
	struct vhdr h;
	uint32_t crc;

	memcpy(&h, b, sizeof(h));
	if (h.magic != PERF_VERIFY_MAGIC) {
		snprintf(msg, len, "LBA %llu: bad magic 0x%08x (expected 0x%08x): block never "
			 "written by nvmf-perf or overwritten", (unsigned long long)lba, h.magic,
			 PERF_VERIFY_MAGIC);
		return -EILSEQ;
	}
	if (h.lba != lba) {
		snprintf(msg, len, "LBA %llu: block carries LBA %llu (misplaced write/read)",
			 (unsigned long long)lba, (unsigned long long)h.lba);
		return -EILSEQ;
	}
	if (h.gen != gen) {
		snprintf(msg, len, "LBA %llu: generation expected %llu, actual %llu (%s)",
			 (unsigned long long)lba, (unsigned long long)gen,
			 (unsigned long long)h.gen, h.gen < gen ? "lost write" : "phantom write");
		return -EILSEQ;
	}
	crc = block_crc(b, lba_size);
	if (h.crc != crc || h.lba_size != lba_size) {
		snprintf(msg, len, "LBA %llu gen %llu: checksum expected 0x%08x, actual 0x%08x "
			 "(corrupted data)", (unsigned long long)lba, (unsigned long long)gen, crc,
			 h.crc);
		return -EILSEQ;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* --verify-state FILE: the generation map kept in a file              */
/* ------------------------------------------------------------------ */

/*
 * File layout (host byte order; the file is this machine's scratch state,
 * not an exchange format):
 *   struct vs_hdr, padded to 4096 bytes;
 *   uint64_t acked[nslots]   generation last acknowledged per slot (0: none)
 *   uint64_t pending[nslots] generation of a write sent and not yet
 *                            acknowledged (0: none)
 * A slot is the -o sized unit at LBA slot * nlb, numbered over the whole
 * namespace (independent of -P). The file is mapped MAP_SHARED: its pages
 * are the kernel's page cache, so what this process stored survives its
 * SIGKILL (not a crash of the machine).
 *
 * Order of the stores, so that a kill between any two leaves a state the
 * next run checks correctly:
 *   before a write is sent:   pending = G           (release)
 *   when it is acknowledged:  acked = G, then pending = 0 (release)
 * At load, a slot whose pending is set held a write in flight: each of its
 * blocks may carry the acknowledged generation or the pending one (a write
 * of several blocks may be torn), and either is accepted; an acknowledged
 * slot without pending must read back exactly its generation.
 * Generations come from the header's counter (atomic, reserved in chunks
 * of VS_GEN_CHUNK per queue), so they never repeat across runs, and a
 * lost write cannot hide behind an old block that carries the same one.
 */
#define VS_MAGIC 0x5356504eu /* "NPVS" */
#define VS_VERSION 1u
#define VS_HDR_LEN 4096u
#define VS_GEN_CHUNK 4096u

struct vs_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t lba_size;
	uint32_t nlb;
	uint64_t nslots;
	uint64_t next_gen; /* atomic: the next generation to hand out */
	uint64_t runs; /* runs that opened the file */
};

struct perf_vstate {
	int fd;
	void *map;
	size_t map_len;
	struct vs_hdr *hdr;
	uint64_t *acked;
	uint64_t *pending;
	uint64_t nslots;
	char path[256];
};

int perf_vstate_open(const char *path, uint32_t lba_size, uint32_t nlb, uint64_t nslots,
		     struct perf_vstate **out, char *err, size_t len)
{
	struct perf_vstate *vs;
	struct stat st;
	size_t need;
	bool fresh;
	int ret;

	if (nslots > (SIZE_MAX - VS_HDR_LEN) / 16)
		return snprintf(err, len, "--verify-state %s: namespace too large", path), -EFBIG;
	need = VS_HDR_LEN + (size_t)nslots * 16;
	vs = calloc(1, sizeof(*vs));
	if (!vs)
		return snprintf(err, len, "--verify-state: out of memory"), -ENOMEM;
	snprintf(vs->path, sizeof(vs->path), "%s", path);
	vs->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (vs->fd < 0) {
		ret = -errno;
		snprintf(err, len, "--verify-state %s: %s", path, strerror(errno));
		goto out_free;
	}
	if (flock(vs->fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		snprintf(err, len, "--verify-state %s: %s", path,
			 errno == EWOULDBLOCK ? "in use by another nvmf-perf" : strerror(errno));
		goto out_close;
	}
	if (fstat(vs->fd, &st) < 0) {
		ret = -errno;
		snprintf(err, len, "--verify-state %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a device or FIFO cannot hold the map (ftruncate: EINVAL) */
		ret = -EINVAL;
		snprintf(err, len, "--verify-state %s: not a regular file (the state is "
			 "kept in a file of its own, created when missing)", path);
		goto out_close;
	}
	fresh = st.st_size == 0;
	if (!fresh && (uint64_t)st.st_size != need) {
		ret = -EINVAL;
		snprintf(err, len, "--verify-state %s: %lld bytes, not a state file for this "
			 "namespace and -o (%zu bytes expected); use a new file",
			 path, (long long)st.st_size, need);
		goto out_close;
	}
	if (fresh && ftruncate(vs->fd, (off_t)need) < 0) {
		ret = -errno;
		snprintf(err, len, "--verify-state %s: %s", path, strerror(errno));
		goto out_close;
	}
	vs->map = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, vs->fd, 0);
	if (vs->map == MAP_FAILED) {
		ret = -errno;
		snprintf(err, len, "--verify-state %s: mmap: %s", path, strerror(errno));
		goto out_close;
	}
	vs->map_len = need;
	vs->hdr = vs->map;
	vs->acked = (uint64_t *)((uint8_t *)vs->map + VS_HDR_LEN);
	vs->pending = vs->acked + nslots;
	vs->nslots = nslots;
	if (fresh) {
		vs->hdr->version = VS_VERSION;
		vs->hdr->lba_size = lba_size;
		vs->hdr->nlb = nlb;
		vs->hdr->nslots = nslots;
		vs->hdr->next_gen = 1;
		__atomic_store_n(&vs->hdr->magic, VS_MAGIC, __ATOMIC_RELEASE);
	} else if (vs->hdr->magic != VS_MAGIC || vs->hdr->version != VS_VERSION) {
		ret = -EINVAL;
		snprintf(err, len, "--verify-state %s: not an nvmf-perf state file (magic 0x%08x "
			 "version %u)", path, vs->hdr->magic, vs->hdr->version);
		goto out_unmap;
	} else if (vs->hdr->lba_size != lba_size || vs->hdr->nlb != nlb ||
		   vs->hdr->nslots != nslots) {
		ret = -EINVAL;
		snprintf(err, len, "--verify-state %s: written for %llu slots of %u blocks of %u "
			 "bytes, this run has %llu of %u of %u (same namespace size and -o "
			 "needed)", path, (unsigned long long)vs->hdr->nslots, vs->hdr->nlb,
			 vs->hdr->lba_size, (unsigned long long)nslots, nlb, lba_size);
		goto out_unmap;
	}
	vs->hdr->runs++;
	*out = vs;
	return 0;

out_unmap:
	munmap(vs->map, vs->map_len);
out_close:
	close(vs->fd);
out_free:
	free(vs);
	return ret;
}

void perf_vstate_close(struct perf_vstate **vsp)
{
	struct perf_vstate *vs = *vsp;

	if (!vs)
		return;
	munmap(vs->map, vs->map_len);
	close(vs->fd); /* drops the lock */
	free(vs);
	*vsp = NULL;
}

uint64_t *perf_vstate_acked(struct perf_vstate *vs, uint64_t first)
{
	return vs->acked + first;
}

uint64_t *perf_vstate_pending(struct perf_vstate *vs, uint64_t first)
{
	return vs->pending + first;
}

uint64_t perf_vstate_runs(const struct perf_vstate *vs)
{
	return vs->hdr->runs;
}

void perf_vstate_next_gen(struct perf_vstate *vs, uint64_t *next, uint64_t *end, uint64_t *gen)
{
	if (!vs) {
		*gen = ++*next;
		return;
	}
	if (*next == *end) {
		*next = __atomic_fetch_add(&vs->hdr->next_gen, VS_GEN_CHUNK, __ATOMIC_RELAXED);
		*end = *next + VS_GEN_CHUNK;
	}
	*gen = (*next)++;
}

int perf_vstate_resolve(uint64_t *acked, uint64_t *pending, const uint8_t *buf,
			uint32_t lba_size, uint32_t nlb, uint64_t lba,
			struct perf_vstate_stats *st, char *msg, size_t len)
{
	uint64_t a = *acked, p = __atomic_load_n(pending, __ATOMIC_ACQUIRE);
	uint32_t n_a = 0, n_p = 0, n_other = 0;
	char m[256];

	if (p == a)
		p = 0; /* killed between the two stores of an acknowledgement */
	for (uint32_t b = 0; b < nlb; b++) {
		const uint8_t *blk = buf + (size_t)b * lba_size;

		if (a && !perf_verify_check(blk, lba_size, lba + b, a, m, sizeof(m)))
			n_a++;
		else if (p && !perf_verify_check(blk, lba_size, lba + b, p, msg, len))
			n_p++;
		else if (!a)
			n_other++; /* nothing acknowledged: any content is allowed */
		else {
			if (p)
				snprintf(msg, len, "%s (nor the generation %llu in flight at the "
					 "last stop)", m, (unsigned long long)p);
			else
				snprintf(msg, len, "%s", m);
			return -EILSEQ;
		}
	}
	st->blocks += nlb;
	st->slots++;
	if (p) {
		if (n_p == nlb) {
			st->inflight_new++;
			*acked = p;
		} else if (n_a == nlb) {
			st->inflight_old++;
		} else {
			st->inflight_torn++;
			*acked = 0; /* mixed: nothing acknowledged to check any more */
		}
		__atomic_store_n(pending, 0, __ATOMIC_RELEASE);
	} else if (!a) {
		st->blocks -= nlb; /* nothing was checked */
		st->slots--;
	}
	(void)n_other;
	return 0;
}

struct vs_read {
	bool busy;
	bool done;
	int err;
	uint16_t status;
	uint64_t slot;
	uint8_t *buf;
};

static void vs_read_done(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct vs_read *r = arg;

	r->done = true;
	r->err = cpl->err;
	r->status = cpl->status;
}

int perf_vstate_check(struct perf_vstate *vs, struct nvmfd_host_qp *qp, uint32_t nsid,
		      uint64_t first, uint64_t n, uint32_t nlb, uint32_t lba_size, uint32_t depth,
		      uint8_t *bufs, struct perf_vstate_stats *st, char *msg, size_t len)
{
	size_t io = (size_t)nlb * lba_size;
	struct vs_read *r;
	uint64_t next = 0, open = 0;
	int ret = 0;

	if (!depth)
		return -EINVAL;
	r = calloc(depth, sizeof(*r));
	if (!r)
		return snprintf(msg, len, "out of memory"), -ENOMEM;
	for (uint32_t i = 0; i < depth; i++)
		r[i].buf = bufs + i * io;
	while (!ret && (next < n || open)) {
		for (uint32_t i = 0; i < depth && !ret; i++) {
			struct vs_read *x = &r[i];

			if (x->busy && x->done) {
				uint64_t g = first + x->slot;

				x->busy = false;
				open--;
				if (x->err || x->status) {
					snprintf(msg, len, "read at LBA %llu failed: %s",
						 (unsigned long long)(g * nlb),
						 x->err ? strerror(-x->err) : "error status");
					ret = -EIO;
					break;
				}
				ret = perf_vstate_resolve(&vs->acked[g], &vs->pending[g], x->buf,
							  lba_size, nlb, g * nlb, st, msg, len);
				if (ret)
					break;
			}
			while (!x->busy && next < n) {
				uint64_t g = first + next++;

				if (!vs->acked[g] && !__atomic_load_n(&vs->pending[g], __ATOMIC_ACQUIRE))
					continue;
				x->busy = true;
				x->done = false;
				x->slot = g - first;
				ret = nvmfd_host_qp_read(qp, nsid, g * nlb, nlb, x->buf, vs_read_done, x);
				if (ret < 0) {
					snprintf(msg, len, "read at LBA %llu: %s (%s)",
						 (unsigned long long)(g * nlb), strerror(-ret),
						 nvmfd_host_qp_errmsg(qp));
					x->busy = false;
					break;
				}
				open++;
			}
		}
		if (!ret && open) {
			ret = nvmfd_host_qp_wait(qp, 100);
			if (ret > 0)
				ret = 0;
			if (ret < 0)
				snprintf(msg, len, "%s", nvmfd_host_qp_errmsg(qp));
		}
	}
	/* After a mismatch or a failed submit, reads may still be in flight:
	 * reap them before @r goes (their callbacks write into it). A failed
	 * qp has completed (cancelled) every one of them already. */
	while (open) {
		int w = nvmfd_host_qp_wait(qp, 100);

		for (uint32_t i = 0; i < depth; i++) {
			if (r[i].busy && r[i].done) {
				r[i].busy = false;
				open--;
			}
		}
		if (w < 0)
			break;
	}
	if (!open)
		free(r); /* else (cannot happen) leave it to the callbacks */
	return ret;
}
