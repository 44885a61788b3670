// SPDX-License-Identifier: MIT
/*
 * digest.c - CRC32C (Castagnoli) for NVMe/TCP header and data digests.
 *
 * isa-l's crc32_iscsi() is the raw reflected CRC32C update: it neither
 * inverts the seed on entry nor the result on exit, so it chains directly:
 * crc32_iscsi(b, n2, crc32_iscsi(a, n1, s)) == crc32_iscsi(a||b, n1+n2, s).
 * The NVMe/TCP digest is therefore ~crc32_iscsi(buf, len, ~0).
 *
 * Two helpers for data that is copied or not in cache (doc/perf.md §13):
 *
 * nvmfd_crc32c_copy() copies and computes the CRC in one pass over the
 * source on CPUs where isa-l's CRC is its SSE one (with AVX-512 and
 * VPCLMULQDQ, memcpy() then crc32_iscsi() is faster; see crc_copy_init()):
 * three streams of SSE4.2 crc32 (one third of the region each, so the
 * instruction's 3-cycle latency is hidden), each 8-byte word stored
 * to the destination right after it was loaded. The streams are joined
 * with the identity crc(A||B) = crc(A)*x^(8|B|) xor crc0(B) (crc0: the raw
 * update started from 0), the multiplication by x^(8|B|) mod P done with
 * one carry-less multiply by a constant and one crc32 of the product:
 * for a 32-bit reflected value c and K = x^(8n-33) mod P, the 64-bit
 * carry-less product c*K read as a reflected polynomial is c*K*x, and
 * crc32 of it multiplies by x^32 and reduces: c*x^(8n) mod P. The
 * constants for every stream length (a multiple of 8 up to 4 KiB) are
 * computed once at load time. Without SSE4.2 and PCLMULQDQ (or off
 * x86-64) it is memcpy() + crc32_iscsi().
 *
 * nvmfd_digest_cold() is for data that is probably in no cache (a block
 * of a RAM namespace read at random): it first reads one byte per cache
 * line in address order, then runs the CRC over the now cached bytes.
 * On this machine's CPU that is ~20 % faster than the CRC taking the
 * misses itself (isa-l's three streams miss in three places at once,
 * which the hardware prefetcher follows worse than one sequential
 * sweep), and ~50 % slower than the plain CRC on cached data, so it is
 * only for data known to come from afar.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/crc.h>

#include <nvmfd/pdu.h>

#include "internal/digest.h"

/* crc32_iscsi() takes an int length; feed large buffers in chunks. */
#define DIGEST_CHUNK (1u << 30)

#if defined(__x86_64__)
#include <immintrin.h>

/*
 * isa-l 2.30's AVX-512 CRC (crc32_iscsi_by16_10, chosen on CPUs with
 * VPCLMULQDQ) returns with the upper halves of the vector registers dirty:
 * it ends without VZEROUPPER. Every legacy-SSE instruction executed after
 * that (this file's SSE4.2 copy-and-CRC, the compiler's SSE moves in the
 * PDU receiver, libc) then pays the SSE/AVX transition penalty, and the
 * state stays dirty until the next VZEROUPPER. Measured on this machine's
 * CPU with the codec alone (doc/perf.md §15): receiving a 4 KiB C2HData
 * and its CapsuleResp with both digests cost 2.0 us instead of 0.5 us,
 * most of it in two SSE moves of rx_step() right after the header digest
 * checks. So clear the upper state after every call, when the CPU has AVX
 * (VZEROUPPER is an AVX instruction; without AVX nothing can dirty it).
 * Set by crc_copy_init() with the other CPU checks of this file.
 */
static bool upper_clear_ok;

__attribute__((target("avx"))) static void upper_clear(void)
{
	_mm256_zeroupper();
}

/*
 * Short regions (PDU headers: 24 to 72 bytes, 128 with the largest
 * header this codec builds) through the SSE4.2 crc32 instruction, one
 * 8-byte word per instruction: isa-l's entry dispatches, sets up its
 * folding constants and (AVX-512 path) leaves the upper state to clear,
 * which for 24 bytes costs about three times the instructions' chain
 * (doc/perf.md §16). Longer regions stay with isa-l, whose folding wins
 * once the crc32 chain's 3-cycle latency per word dominates. Set by
 * crc_copy_init() (SSE4.2).
 */
#define CRC_SHORT_MAX 128u
static bool crc_short_ok;

__attribute__((target("sse4.2"))) static uint32_t crc_short_x86(uint32_t crc,
								  const unsigned char *p,
								  size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
	}
	crc = (uint32_t)c;
	for (; len > 0; len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

#endif

/**
 * nvmfd_crc32c() - update a running CRC32C with a buffer.
 * @crc: running value; NVMFD_CRC32C_INIT to start.
 * @buf: @len bytes, borrowed; may be NULL when @len is 0.
 * @len: bytes.
 * Return: the updated running CRC (not inverted).
 * Context: any thread; pure.
 */
uint32_t nvmfd_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

#if defined(__x86_64__)
	if (len <= CRC_SHORT_MAX && crc_short_ok)
		return crc_short_x86(crc, p, len);
#endif
	while (len > 0) {
		size_t n = len > DIGEST_CHUNK ? DIGEST_CHUNK : len;

		/* isa-l does not write through the pointer; it is just not const. */
		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, crc);
		p += n;
		len -= n;
	}
#if defined(__x86_64__)
	if (upper_clear_ok)
		upper_clear();
#endif
	return crc;
}

/**
 * nvmfd_digest() - NVMe/TCP digest of a region: ~crc32c(~0, buf, len).
 * @buf: @len bytes, borrowed.
 * @len: bytes.
 * Return: the value to store little-endian after the region.
 * Context: any thread; pure.
 */
uint32_t nvmfd_digest(const void *buf, size_t len)
{
	return nvmfd_crc32c_final(nvmfd_crc32c(NVMFD_CRC32C_INIT, buf, len));
}

/* ------------------------------------------------------------------ */
/* Copy and CRC in one pass                                            */
/* ------------------------------------------------------------------ */

#define CRC32C_POLY_REFL 0x82f63b78u /* P without x^32, bit-reflected */
#define COPY_BLK_MAX 4096u /* bytes of one stream in one round */
#define COPY_3WAY_MIN 192u /* shorter: one stream */

#if defined(__x86_64__)
#include <immintrin.h>

#define CRC_COPY_X86 1

/* crc_copy_k[j] = x^(64j - 33) mod P (reflected): shifts a CRC over 8j
 * zero bytes (see the top of the file); j = 1 .. COPY_BLK_MAX / 8. */
static uint32_t crc_copy_k[COPY_BLK_MAX / 8 + 1];
static bool crc_copy_x86_can; /* SSE4.2 and PCLMULQDQ: crc_copy_x86() runs */
static bool crc_copy_x86_ok; /* ... and nvmfd_crc32c_copy() uses it */

__attribute__((constructor)) static void crc_copy_init(void)
{
	uint32_t r = 1; /* x^31: bit 0 of the reflected form */

	__builtin_cpu_init();
	for (uint32_t j = 1; j <= COPY_BLK_MAX / 8; j++) {
		crc_copy_k[j] = r;
		for (int b = 0; b < 64; b++) /* times x^64 */
			r = (r >> 1) ^ ((r & 1) ? CRC32C_POLY_REFL : 0);
	}
	/*
	 * With AVX-512 and VPCLMULQDQ, isa-l folds 256 bytes per step and a
	 * plain memcpy() followed by crc32_iscsi() over the (now cached)
	 * destination is faster than the three crc32 streams below: on this
	 * machine's CPU a 4 KiB C2HData with both digests cost the codec
	 * about 0.55 us that way against 0.85 us fused (doc/perf.md §15).
	 * The fused copy stays for CPUs whose isa-l path is the SSE one.
	 */
	crc_copy_x86_can = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
	crc_copy_x86_ok = crc_copy_x86_can && !(__builtin_cpu_supports("avx512f") &&
						__builtin_cpu_supports("vpclmulqdq"));
	upper_clear_ok = __builtin_cpu_supports("avx");
	crc_short_ok = __builtin_cpu_supports("sse4.2");
}

/* @c * x^(8n) mod P for the constant @k of n bytes. */
__attribute__((target("sse4.2,pclmul"))) static inline uint32_t crc_shift(uint32_t c, uint32_t k)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)c), _mm_cvtsi32_si128((int)k), 0);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(p));
}

__attribute__((target("sse4.2,pclmul"))) static uint32_t
crc_copy_x86(uint32_t crc, uint8_t *d, const uint8_t *s, size_t len)
{
	while (len >= COPY_3WAY_MIN) {
		size_t blk = len / 24 * 8; /* 3 x blk <= len, a multiple of 8 */
		uint64_t c0 = crc, c1 = 0, c2 = 0;
		uint32_t k;

		if (blk > COPY_BLK_MAX)
			blk = COPY_BLK_MAX;
#pragma GCC unroll 4
		for (size_t i = 0; i < blk; i += 8) {
			uint64_t v0, v1, v2;

			memcpy(&v0, s + i, 8);
			memcpy(&v1, s + blk + i, 8);
			memcpy(&v2, s + 2 * blk + i, 8);
			c0 = _mm_crc32_u64(c0, v0);
			c1 = _mm_crc32_u64(c1, v1);
			c2 = _mm_crc32_u64(c2, v2);
			memcpy(d + i, &v0, 8);
			memcpy(d + blk + i, &v1, 8);
			memcpy(d + 2 * blk + i, &v2, 8);
		}
		k = crc_copy_k[blk / 8];
		crc = crc_shift(crc_shift((uint32_t)c0, k) ^ (uint32_t)c1, k) ^ (uint32_t)c2;
		s += 3 * blk;
		d += 3 * blk;
		len -= 3 * blk;
	}
	for (; len >= 8; len -= 8, s += 8, d += 8) {
		uint64_t v;

		memcpy(&v, s, 8);
		crc = (uint32_t)_mm_crc32_u64(crc, v);
		memcpy(d, &v, 8);
	}
	for (; len > 0; len--)
		crc = _mm_crc32_u8(crc, *d++ = *s++);
	return crc;
}
#endif

bool nvmfd__crc32c_copy_fused(uint32_t crc, void *dst, const void *src, size_t len,
			      uint32_t *out)
{
#ifdef CRC_COPY_X86
	if (crc_copy_x86_can) {
		*out = crc_copy_x86(crc, dst, src, len);
		return true;
	}
#else
	(void)crc, (void)dst, (void)src, (void)len, (void)out;
#endif
	return false;
}

/**
 * nvmfd_crc32c_copy() - copy a buffer and update a running CRC32C with it.
 * @crc: running value; NVMFD_CRC32C_INIT to start.
 * @dst: @len bytes of room; must not overlap @src.
 * @src: @len bytes, borrowed; any alignment.
 * @len: bytes.
 * Return: as nvmfd_crc32c(@crc, @src, @len); @dst holds a copy of @src.
 * Context: any thread; pure (besides writing @dst).
 */
uint32_t nvmfd_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
#ifdef CRC_COPY_X86
	if (crc_copy_x86_ok)
		return crc_copy_x86(crc, dst, src, len);
#endif
	if (len)
		memcpy(dst, src, len);
	return nvmfd_crc32c(crc, dst, len);
}

#ifdef CRC_COPY_X86
__attribute__((target("sse4.2,pclmul"))) static uint32_t crc_combine_x86(uint32_t crc_a,
									  size_t len_b)
{
	return crc_shift(crc_a, crc_copy_k[len_b / 8]);
}
#endif

/**
 * nvmfd_crc32c_combine() - the running CRC32C of A||B from those of A and B.
 * @crc_a:  running CRC after A (from any seed).
 * @crc0_b: nvmfd_crc32c(0, B, @len_b): B's CRC started from 0.
 * @len_b:  bytes of B.
 * Return: nvmfd_crc32c(@crc_a, B, @len_b), without reading B: @crc_a
 * shifted over @len_b zero bytes (one carry-less multiply when @len_b is a
 * multiple of 8 up to 4 KiB on x86-64 with SSE4.2 and PCLMULQDQ, else a
 * CRC of zeroes), xor @crc0_b (the raw update is linear).
 * Context: any thread; pure.
 */
uint32_t nvmfd_crc32c_combine(uint32_t crc_a, uint32_t crc0_b, size_t len_b)
{
	static const unsigned char zero[512];

#ifdef CRC_COPY_X86
	if (crc_copy_x86_can && len_b && len_b % 8 == 0 && len_b <= COPY_BLK_MAX)
		return crc_combine_x86(crc_a, len_b) ^ crc0_b;
#endif
	while (len_b) {
		size_t n = len_b > sizeof(zero) ? sizeof(zero) : len_b;

		crc_a = nvmfd_crc32c(crc_a, zero, n);
		len_b -= n;
	}
	return crc_a ^ crc0_b;
}

/* Pieces small enough that the first bytes are still cached when the CRC
 * reaches them (well inside a 512 KiB L2). */
#define COLD_PIECE (16u * 1024)

/**
 * nvmfd_digest_cold() - nvmfd_digest() of a region that is probably in no
 * cache (e.g. a block of a RAM namespace read at random).
 * @buf: @len bytes, borrowed.
 * @len: bytes.
 * Return: the same value as nvmfd_digest(@buf, @len).
 * Context: any thread; pure (reads @buf twice).
 */
uint32_t nvmfd_digest_cold(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t crc = NVMFD_CRC32C_INIT;

	while (len > 0) {
		size_t n = len > COLD_PIECE ? COLD_PIECE : len;
		unsigned char sink = 0;

		/* One load per cache line, in order: the misses overlap. */
		for (size_t i = 0; i < n; i += 64)
			sink ^= *(const volatile unsigned char *)(p + i);
		__asm__ volatile("" : : "r"(sink));
		crc = nvmfd_crc32c(crc, p, n);
		p += n;
		len -= n;
	}
	return nvmfd_crc32c_final(crc);
}
