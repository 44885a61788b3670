// SPDX-License-Identifier: MIT
/* verify.c - nvmf-perf --verify block images: LBA, generation, checksum. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
