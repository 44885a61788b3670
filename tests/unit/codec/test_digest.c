// SPDX-License-Identifier: MIT
/* test_digest.c - CRC32C known answers and chaining for nvmfd_crc32c(),
 * and the fused copy (nvmfd_crc32c_copy()) and cold-data digest
 * (nvmfd_digest_cold()) and the combine (nvmfd_crc32c_combine()) against
 * it. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <nvmfd/pdu.h>

#include "internal/digest.h"

struct kat {
	const char *name;
	uint8_t buf[32];
	size_t len;
	uint32_t digest;
};

static void fill_kats(struct kat *k)
{
	/* RFC 3720 Appendix B.4 */
	k[0].name = "32 x 0x00";
	memset(k[0].buf, 0x00, 32);
	k[0].len = 32;
	k[0].digest = 0x8A9136AA;
	k[1].name = "32 x 0xff";
	memset(k[1].buf, 0xff, 32);
	k[1].len = 32;
	k[1].digest = 0x62A8AB43;
	k[2].name = "0..31";
	for (int i = 0; i < 32; i++)
		k[2].buf[i] = (uint8_t)i;
	k[2].len = 32;
	k[2].digest = 0x46DD794E;
	k[3].name = "31..0";
	for (int i = 0; i < 32; i++)
		k[3].buf[i] = (uint8_t)(31 - i);
	k[3].len = 32;
	k[3].digest = 0x113FDB5C;
	/* The usual CRC catalogue check value for CRC-32C. */
	k[4].name = "\"123456789\"";
	memcpy(k[4].buf, "123456789", 9);
	k[4].len = 9;
	k[4].digest = 0xE3069283;
	/* Empty input: ~(~0) = 0. */
	k[5].name = "empty";
	k[5].len = 0;
	k[5].digest = 0;
}

#define NKATS 6

static void test_known_answers(void **state)
{
	struct kat k[NKATS];

	(void)state;
	memset(k, 0, sizeof(k));
	fill_kats(k);
	for (int i = 0; i < NKATS; i++) {
		uint32_t d = nvmfd_digest(k[i].buf, k[i].len);

		if (d != k[i].digest)
			fail_msg("%s: got 0x%08x want 0x%08x", k[i].name, d, k[i].digest);
		assert_int_equal(nvmfd_crc32c_final(nvmfd_crc32c(NVMFD_CRC32C_INIT, k[i].buf,
								 k[i].len)),
				 k[i].digest);
	}
}

/* Any split of the input gives the same running CRC. */
static void test_chaining(void **state)
{
	uint8_t buf[1000];
	uint32_t whole;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	whole = nvmfd_digest(buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut += 37) {
		uint32_t c = nvmfd_crc32c(NVMFD_CRC32C_INIT, buf, cut);

		c = nvmfd_crc32c(c, buf + cut, sizeof(buf) - cut);
		assert_int_equal(nvmfd_crc32c_final(c), whole);
	}
	/* byte at a time */
	{
		uint32_t c = NVMFD_CRC32C_INIT;

		for (size_t i = 0; i < sizeof(buf); i++)
			c = nvmfd_crc32c(c, buf + i, 1);
		assert_int_equal(nvmfd_crc32c_final(c), whole);
	}
	/* unaligned start */
	assert_int_equal(nvmfd_digest(buf + 1, 32), nvmfd_digest(memcpy((uint8_t[32]){ 0 },
									buf + 1, 32), 32));
	/* a single changed bit changes the digest */
	buf[500] ^= 0x10;
	assert_int_not_equal(nvmfd_digest(buf, sizeof(buf)), whole);
}

/* Fill @p with a reproducible byte sequence (xorshift). */
static void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed | 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

/* Bit at a time, reflected polynomial 0x82F63B78: the definition, shared
 * with neither isa-l nor the crc32 instruction. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
	}
	return crc;
}

/*
 * Every length from 0 to 300 bytes, at four alignments and from two
 * seeds, against the bitwise definition: the short regions (PDU headers)
 * take another path than the long ones (src/codec/digest.c: the crc32
 * instruction up to 128 bytes where the CPU has it, isa-l above), so both
 * sides of the switch and every tail length of the word loop are covered.
 */
static void test_every_short_length(void **state)
{
	static uint8_t buf[300 + 8];
	static const uint32_t seeds[] = { NVMFD_CRC32C_INIT, 0x12345678u };

	(void)state;
	fill_random(buf, sizeof(buf), 77);
	for (size_t a = 0; a < 4; a++)
		for (size_t len = 0; len <= 300; len++)
			for (size_t s = 0; s < 2; s++) {
				uint32_t want = crc32c_bitwise(seeds[s], buf + a, len);
				uint32_t got = nvmfd_crc32c(seeds[s], buf + a, len);

				if (got != want)
					fail_msg("len %zu align %zu seed 0x%08x: got 0x%08x want 0x%08x",
						 len, a, seeds[s], got, want);
			}
}

#define COPY_MAX (40 * 1024)
#define GUARD 16

/* nvmfd_crc32c_copy(): the CRC of nvmfd_crc32c() and an exact copy, for
 * every length up to past the three-stream threshold, odd lengths up to
 * several rounds of 3 x 4 KiB, unaligned source and destination, any
 * seed; nothing written outside the destination. */
static void copy_matches(bool fused)
{
	static uint8_t src[COPY_MAX + 8], dst[COPY_MAX + 8 + 2 * GUARD];
	uint32_t probe;

	if (fused && !nvmfd__crc32c_copy_fused(0, dst, src, 0, &probe))
		skip(); /* no SSE4.2 + PCLMULQDQ here */
	fill_random(src, sizeof(src), 7);
	for (size_t len = 0; len <= COPY_MAX; len += len < 1100 ? 1 : (len < 13000 ? 61 : 977)) {
		for (size_t so = 0; so < 8; so += 3) {
			for (size_t dof = 0; dof < 8; dof += 5) {
				uint32_t seed = (uint32_t)(len * 2654435761u);
				uint8_t *d = dst + GUARD + dof;
				uint32_t got, want;

				memset(dst, 0xa5, sizeof(dst));
				if (!fused)
					got = nvmfd_crc32c_copy(seed, d, src + so, len);
				else
					(void)nvmfd__crc32c_copy_fused(seed, d, src + so, len, &got);
				want = nvmfd_crc32c(seed, src + so, len);
				if (got != want)
					fail_msg("len %zu src+%zu dst+%zu: crc 0x%08x want 0x%08x",
						 len, so, dof, got, want);
				assert_memory_equal(d, src + so, len);
				for (size_t i = 0; i < GUARD + dof; i++)
					assert_int_equal(dst[i], 0xa5);
				for (size_t i = GUARD + dof + len; i < sizeof(dst); i++)
					assert_int_equal(dst[i], 0xa5);
			}
		}
	}
}

static void test_copy_matches(void **state)
{
	(void)state;
	copy_matches(false);
}

/* The same for the one-pass SSE4.2 path, which nvmfd_crc32c_copy() leaves
 * out on CPUs with AVX-512 and VPCLMULQDQ (src/codec/digest.c). */
static void test_copy_fused_matches(void **state)
{
	(void)state;
	copy_matches(true);
}

/* Known answers through the copy, and chaining of copies cut anywhere
 * (as the receiver does for a PDU split across recv() calls). */
static void test_copy_known_and_chained(void **state)
{
	static uint8_t src[9000], dst[9000];
	struct kat k[NKATS];
	uint32_t whole;

	(void)state;
	memset(k, 0, sizeof(k));
	fill_kats(k);
	for (int i = 0; i < NKATS; i++) {
		uint8_t out[32];

		assert_int_equal(nvmfd_crc32c_final(nvmfd_crc32c_copy(NVMFD_CRC32C_INIT, out,
								      k[i].buf, k[i].len)),
				 k[i].digest);
		assert_memory_equal(out, k[i].buf, k[i].len);
	}
	fill_random(src, sizeof(src), 99);
	whole = nvmfd_digest(src, sizeof(src));
	for (size_t cut1 = 0; cut1 <= sizeof(src); cut1 += 193) {
		for (size_t cut2 = cut1; cut2 <= sizeof(src); cut2 += 1531) {
			uint32_t c = NVMFD_CRC32C_INIT;

			memset(dst, 0, sizeof(dst));
			c = nvmfd_crc32c_copy(c, dst, src, cut1);
			c = nvmfd_crc32c_copy(c, dst + cut1, src + cut1, cut2 - cut1);
			c = nvmfd_crc32c_copy(c, dst + cut2, src + cut2, sizeof(src) - cut2);
			assert_int_equal(nvmfd_crc32c_final(c), whole);
			assert_memory_equal(dst, src, sizeof(src));
		}
	}
	/* one flipped bit anywhere is seen */
	for (size_t i = 0; i < sizeof(src); i += 499) {
		src[i] ^= 0x04;
		assert_int_not_equal(nvmfd_crc32c_final(nvmfd_crc32c_copy(NVMFD_CRC32C_INIT, dst,
									  src, sizeof(src))),
				     whole);
		src[i] ^= 0x04;
	}
}

/* nvmfd_digest_cold() is nvmfd_digest(): lengths around its 16 KiB
 * pieces and cache lines, unaligned starts. */
static void test_digest_cold(void **state)
{
	static uint8_t buf[70000];
	const size_t lens[] = { 0, 1, 63, 64, 65, 4095, 4096, 4097, 16383, 16384, 16385,
				32768, 49153, 69990 };

	(void)state;
	fill_random(buf, sizeof(buf), 3);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t off = 0; off < 8 && lens[i] + off <= sizeof(buf); off += 7)
			assert_int_equal(nvmfd_digest_cold(buf + off, lens[i]),
					 nvmfd_digest(buf + off, lens[i]));
	assert_int_equal(nvmfd_digest_cold("123456789", 9), 0xE3069283);
}

/* nvmfd_crc32c_combine() is the CRC of the concatenation: B's length
 * 0, short, odd, every multiple of 8 up to 4 KiB (the carry-less
 * multiply) and beyond it (the zero-byte path), seeds INIT and others;
 * a wrong crc0_b bit shows. */
static void test_combine(void **state)
{
	static uint8_t buf[10000];
	const size_t odd[] = { 0, 1, 3, 7, 9, 100, 511, 512, 513, 4095, 4097, 4104, 8192, 9000 };
	const uint32_t seeds[] = { NVMFD_CRC32C_INIT, 0, 0x12345678u };

	(void)state;
	fill_random(buf, sizeof(buf), 5);
	for (size_t s = 0; s < 3; s++) {
		for (size_t a = 0; a < 200; a += 67) {
			uint32_t ca = nvmfd_crc32c(seeds[s], buf, a);

			for (size_t lb = 8; lb <= 4096; lb += 8)
				assert_int_equal(nvmfd_crc32c_combine(ca, nvmfd_crc32c(0, buf + a, lb), lb),
						 nvmfd_crc32c(seeds[s], buf, a + lb));
			for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
				size_t lb = odd[i];

				assert_int_equal(nvmfd_crc32c_combine(ca, nvmfd_crc32c(0, buf + a, lb), lb),
						 nvmfd_crc32c(seeds[s], buf, a + lb));
			}
		}
	}
	/* a known answer: "123456789" as "1234" + "56789" */
	assert_int_equal(nvmfd_crc32c_final(nvmfd_crc32c_combine(
				 nvmfd_crc32c(NVMFD_CRC32C_INIT, "1234", 4), nvmfd_crc32c(0, "56789", 5), 5)),
			 0xE3069283);
	assert_int_not_equal(nvmfd_crc32c_combine(1, nvmfd_crc32c(0, buf, 4096) ^ 4, 4096),
			     nvmfd_crc32c(1, buf, 4096));
}

#if defined(__x86_64__)
#include <cpuid.h>

/* XINUSE (XGETBV with ECX = 1), or 0 when the CPU cannot report it. */
static uint64_t xinuse(void)
{
	uint32_t a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
		return 0;
	if (!__get_cpuid_count(0xd, 1, &a, &b, &c, &d) || !(a & (1u << 2)))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
	return (uint64_t)hi << 32 | lo;
}

#define XINUSE_YMM_HI128 (1u << 2) /* upper halves of ymm0-15 */

/* Leave ymm15's upper half non-zero (the compiler adds no VZEROUPPER
 * after an asm statement). */
static void dirty_upper(void)
{
	__asm__ volatile("vpcmpeqd %%ymm15, %%ymm15, %%ymm15" ::: "xmm15");
}

static void clear_upper(void)
{
	__asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
			 "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
			 "xmm14", "xmm15");
}
#endif

/*
 * nvmfd_crc32c() (and so nvmfd_digest()) started with a clean upper
 * vector state returns with it clean: isa-l's AVX-512 CRC leaves it dirty,
 * and every legacy-SSE instruction after it then paid the SSE/AVX
 * transition penalty (a 4 KiB C2HData with both digests cost the codec
 * 2.0 us instead of ~0.5 us).
 * Checked through XINUSE where the CPU reports it and clears its bit on
 * VZEROUPPER; skipped elsewhere.
 */
static void test_upper_state_clean(void **state)
{
	(void)state;
#if defined(__x86_64__)
	static uint8_t buf[4096];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31);
	dirty_upper();
	if (!(xinuse() & XINUSE_YMM_HI128))
		skip(); /* no XINUSE, or it does not show a dirty upper half */
	clear_upper();
	if (xinuse() & XINUSE_YMM_HI128)
		skip(); /* the CPU does not clear the bit on VZEROUPPER */
	for (size_t len = 0; len <= sizeof(buf); len = len ? len * 2 : 24) {
		clear_upper();
		(void)nvmfd_digest(buf, len);
		if (xinuse() & XINUSE_YMM_HI128)
			fail_msg("nvmfd_digest() of %zu bytes left the upper state dirty", len);
	}
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_chaining),
		cmocka_unit_test(test_every_short_length),
		cmocka_unit_test(test_copy_matches),
		cmocka_unit_test(test_copy_fused_matches),
		cmocka_unit_test(test_copy_known_and_chained),
		cmocka_unit_test(test_digest_cold),
		cmocka_unit_test(test_combine),
		cmocka_unit_test(test_upper_state_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
