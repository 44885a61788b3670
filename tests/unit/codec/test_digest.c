// SPDX-License-Identifier: MIT
/* test_digest.c - CRC32C known answers and chaining for nvmfd_crc32c(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <nvmfd/pdu.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_chaining),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
