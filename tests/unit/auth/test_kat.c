// SPDX-License-Identifier: MIT
/*
 * test_kat.c - known-answer tests of src/auth: secret representations,
 * DH-HMAC-CHAP transforms and responses, the augmented challenge and the
 * TLS PSK chain. Where each expected value comes from is written beside it
 * (and in doc/auth.md); "openssl CLI" means the value was computed with the
 * openssl command line tool (dgst -mac HMAC, kdf HKDF) over byte strings laid
 * out by hand, independently of this code.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "internal/auth.h"

static void hex2bin(const char *hex, uint8_t *out, size_t *len)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2) {
		unsigned int v;

		assert_int_equal(sscanf(hex, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
	}
	*len = n;
}

static void assert_hex(const uint8_t *got, size_t len, const char *hex)
{
	uint8_t exp[1024];
	size_t n;

	hex2bin(hex, exp, &n);
	assert_int_equal(len, n);
	assert_memory_equal(got, exp, n);
}

static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
static const char subnqn[] = "nqn.2014-08.org.nvmexpress:uuid:36ebf5a9-1df9-47b3-a6d0-e9ba32e428a2";

/* The 32-byte PSK of the NVMe/TCP specification's interchange format example
 * (also libnvme's test vector and SPDK's tls test "SPEC_KEY"). */
static const char spec_psk_hex[] =
	"5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03";

static void test_crc_and_base64_via_key_format(void **state)
{
	struct nvmfd_auth_key k;
	char buf[NVMFD_AUTH_KEY_STR_MAX];
	size_t n;

	(void)state;
	/* nvme-cli 2.3: nvme gen-dhchap-key -s 000102..1f -m 0 -n <any>. */
	memset(&k, 0, sizeof(k));
	hex2bin("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", k.key, &n);
	k.len = (uint8_t)n;
	assert_int_equal(nvmfd_auth_key_format(&k, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:");
	/* Too small a buffer. */
	assert_int_equal(nvmfd_auth_key_format(&k, buf, 10), -ENOSPC);
}

static void test_dhhc_parse(void **state)
{
	struct nvmfd_auth_key k;
	char buf[NVMFD_AUTH_KEY_STR_MAX];
	static const char *const spec[] = {
		/* The example secret of the NVMe Base specification (TP 8006),
		 * quoted with each hash indicator in the Linux kernel's
		 * change that relaxed the indicator/length check. */
		"DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:",
		"DHHC-1:01:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:",
		"DHHC-1:02:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:",
		"DHHC-1:03:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:",
	};

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		assert_int_equal(nvmfd_auth_key_parse(spec[i], &k), 0);
		assert_int_equal(k.hash, i);
		assert_int_equal(k.len, 32);
		assert_int_equal(nvmfd_auth_key_format(&k, buf, sizeof(buf)), 0);
		assert_string_equal(buf, spec[i]);
	}
	/* nvme-cli 2.3 gen-dhchap-key -m 1: a transformed key, 32 bytes. */
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", &k),
			 0);
	assert_hex(k.key, k.len,
		   "8d688ad0d792c1e423185108f5ce1b8c757bf763711bf2901b59807c24008919");
	/* Rejected: CRC off by one bit, bad prefix, indicator, missing ':', bad
	 * base64, wrong length (31 bytes + CRC), trailing newline. */
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2m:", &k),
			 -EINVAL);
	for (unsigned int i = 0; i < sizeof(k.key); i++)
		assert_int_equal(k.key[i], 0); /* zeroed on failure */
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-2:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:", &k),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:04:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:", &k),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n", &k),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:\n", &k),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6a!2n:", &k),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse("DHHC-1:00::", &k), -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse("DHHC-1:00:AAAA:", &k), -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse(NULL, &k), -EINVAL);
	assert_int_equal(nvmfd_auth_key_parse("", &k), -EINVAL);
}

static void test_psk_interchange(void **state)
{
	struct nvmfd_auth_psk p;
	char buf[NVMFD_AUTH_KEY_STR_MAX];

	(void)state;
	/* libnvme test/psk.c vectors (the first is the NVMe/TCP spec example). */
	assert_int_equal(nvmfd_auth_psk_parse(
				 "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", &p),
			 0);
	assert_int_equal(p.hash, 1);
	assert_hex(p.psk, p.len, spec_psk_hex);
	assert_int_equal(nvmfd_auth_psk_format(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:");
	assert_int_equal(nvmfd_auth_psk_parse(
				 "NVMeTLSkey-1:00:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", &p),
			 0);
	assert_int_equal(p.hash, 0);
	assert_int_equal(nvmfd_auth_psk_parse("NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYv"
					      "EhwtdWwP/w0S89ELi3W2LxIcLXVsDn8kXZQ==:",
					      &p),
			 0);
	assert_int_equal(p.hash, 2);
	assert_hex(p.psk, p.len,
		   "5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03"
		   "ffc344bcf442e2dd6d8bc4870b5d5b03");
	assert_int_equal(nvmfd_auth_psk_format(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/"
				 "w0S89ELi3W2LxIcLXVsDn8kXZQ==:");
	/* 32 bytes with indicator 02 (SHA-384 needs 48), 03, bad CRC. */
	assert_int_equal(nvmfd_auth_psk_parse(
				 "NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", &p),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_psk_parse(
				 "NVMeTLSkey-1:03:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", &p),
			 -EINVAL);
	assert_int_equal(nvmfd_auth_psk_parse(
				 "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9Lra:", &p),
			 -EINVAL);
	/* A DH-HMAC-CHAP secret is not a PSK and vice versa. */
	assert_int_equal(nvmfd_auth_psk_parse(
				 "DHHC-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:", &p),
			 -EINVAL);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(nvmfd_auth_hash_parse("hmac(sha256)"), 1);
	assert_int_equal(nvmfd_auth_hash_parse("SHA384"), 2);
	assert_int_equal(nvmfd_auth_hash_parse("sha-512"), 3);
	assert_int_equal(nvmfd_auth_hash_parse("md5"), -EINVAL);
	assert_int_equal(nvmfd_auth_dhgroup_parse("null"), 0);
	assert_int_equal(nvmfd_auth_dhgroup_parse("ffdhe8192"), 5);
	assert_int_equal(nvmfd_auth_dhgroup_parse("ffdhe1024"), -EINVAL);
	assert_int_equal(nvmfd_auth_dhgroup_len(NVMFD_AUTH_DHGROUP_3072), 384);
	assert_int_equal(nvmfd_auth_hash_len(NVMFD_AUTH_HASH_SHA384), 48);
	assert_int_equal(nvmfd_auth_hash_len(0), 0);
	assert_int_equal(nvmfd_auth_hash_len(4), 0);
}

static void test_transform_key(void **state)
{
	static const char *const exp[] = {
		NULL,
		/* also nvme-cli 2.3 gen-dhchap-key -m 1 (see test_dhhc_parse) */
		"8d688ad0d792c1e423185108f5ce1b8c757bf763711bf2901b59807c24008919",
		"b76133e09186ed86cd2c8756e30d05e21023f996b3a3b81524920de1fa9ec04d"
		"2ec49d823ea2e9f81d8a65636a79ab71",
		"8ab681a449b63684aded203cf3191d9dce224b83fed58055f249e3f681e3e53b"
		"e1c6822b6e808a0e8471a6ff97f5a952efee1f6b2daee1f4a67c7c703bf3aedc",
	};
	struct nvmfd_auth_key k;
	uint8_t out[NVMFD_AUTH_MAX_KEY_LEN];
	size_t n, outlen;

	(void)state;
	memset(&k, 0, sizeof(k));
	hex2bin("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", k.key, &n);
	k.len = (uint8_t)n;
	/* Indicator 0: the secret is used as is. */
	assert_int_equal(nvmfd_auth_transform_key(&k, hostnqn, out, &outlen), 0);
	assert_memory_equal(out, k.key, 32);
	assert_int_equal(outlen, 32);
	/* openssl CLI: HMAC-SHAx(secret, hostnqn || "NVMe-over-Fabrics"). */
	for (uint8_t h = 1; h <= 3; h++) {
		k.hash = h;
		assert_int_equal(nvmfd_auth_transform_key(&k, hostnqn, out, &outlen), 0);
		assert_hex(out, outlen, exp[h]);
	}
}

static void test_responses(void **state)
{
	uint8_t tkey[64], chal[64], out[64], skey[256];
	size_t tklen;

	(void)state;
	/* openssl CLI: HMAC-SHA256(T, C1 || 04030201 || 0605 || 00 || "HostHost"
	 * || hostnqn || 00 || subnqn), T the SHA-256 transform above, C1 32 x 11h,
	 * S1 0x01020304, T_ID 0x0506. */
	hex2bin("8d688ad0d792c1e423185108f5ce1b8c757bf763711bf2901b59807c24008919", tkey, &tklen);
	memset(chal, 0x11, 32);
	assert_int_equal(nvmfd_auth_host_response(NVMFD_AUTH_HASH_SHA256, tkey, tklen, chal,
						  0x01020304, 0x0506, 0, hostnqn, subnqn, out),
			 0);
	assert_hex(out, 32, "63e0c3b3f6dd65fed14e6f07f75a452f93061266900ab0589237a2091ed6c51e");
	/* openssl CLI: HMAC-SHA384(K, C2 || efbeadde || 0605 || 00 || "Controller"
	 * || subnqn || 00 || hostnqn), K = 20h..4fh (an untransformed 48-byte
	 * key), C2 48 x 22h, S2 0xdeadbeef. */
	for (int i = 0; i < 48; i++)
		tkey[i] = (uint8_t)(0x20 + i);
	memset(chal, 0x22, 48);
	assert_int_equal(nvmfd_auth_ctrl_response(NVMFD_AUTH_HASH_SHA384, tkey, 48, chal,
						  0xdeadbeef, 0x0506, 0, subnqn, hostnqn, out),
			 0);
	assert_hex(out, 48,
		   "e5a532eb20b5ee3419a84d7abc988f6c3ca21101e12b31c05cfd2d2aff51c1eb"
		   "32b1c7e4d19fd9cdc33b28d58b7f0274");
	/* openssl CLI: HMAC-SHA512(SHA512(skey), 64 x 33h), skey = 00h..ffh. */
	for (int i = 0; i < 256; i++)
		skey[i] = (uint8_t)i;
	memset(chal, 0x33, 64);
	assert_int_equal(nvmfd_auth_augment_challenge(NVMFD_AUTH_HASH_SHA512, skey, 256, chal, out),
			 0);
	assert_hex(out, 64,
		   "61aea2279da2d4ece77a3a1a38d8d1250cd87e6995dfad9b0385e0b60113331d"
		   "8832013a232d39deff9ad40461cd5763d3793197764955c64de92b4a46c1a660");
	/* Bad arguments. */
	assert_int_equal(nvmfd_auth_host_response(4, tkey, 32, chal, 1, 1, 0, hostnqn, subnqn, out),
			 -EINVAL);
}

/* The prime p of RFC 7919 group @g (1..5), big endian in @out (@len bytes). */
static void group_prime(uint8_t g, uint8_t *out, size_t len)
{
	static const char *const names[] = { "", "ffdhe2048", "ffdhe3072", "ffdhe4096",
					      "ffdhe6144", "ffdhe8192" };
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	EVP_PKEY *k = NULL;
	BIGNUM *p = NULL;

	assert_non_null(c);
	assert_true(EVP_PKEY_keygen_init(c) > 0);
	assert_true(EVP_PKEY_CTX_set_group_name(c, names[g]) > 0);
	assert_true(EVP_PKEY_generate(c, &k) > 0);
	assert_true(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_FFC_P, &p) > 0);
	assert_int_equal(BN_bn2binpad(p, out, (int)len), (int)len);
	BN_free(p);
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(c);
}

static void test_dh_groups(void **state)
{
	static uint8_t pa[1024], pb[1024], ka[1024], kb[1024];

	(void)state;
	for (uint8_t g = 1; g <= 5; g++) {
		struct nvmfd_auth_dh *a = NULL, *b = NULL;
		size_t gl = nvmfd_auth_dhgroup_len(g);
		int la, lb;

		assert_int_equal(nvmfd_auth_dh_new(g, &a), 0);
		assert_int_equal(nvmfd_auth_dh_new(g, &b), 0);
		la = nvmfd_auth_dh_public(a, pa, sizeof(pa));
		lb = nvmfd_auth_dh_public(b, pb, sizeof(pb));
		assert_int_equal(la, gl);
		assert_int_equal(lb, gl);
		assert_int_equal(nvmfd_auth_dh_public(a, pa, gl - 1), -ENOSPC);
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), gl);
		assert_int_equal(nvmfd_auth_dh_derive(b, pa, gl, kb, sizeof(kb)), gl);
		assert_memory_equal(ka, kb, gl);
		/* Peer values outside 1 < y < p - 1 are refused (0, 1, and an
		 * all-ones value, which is above p), and so is a short one. */
		memset(pb, 0, gl);
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), -EINVAL);
		pb[gl - 1] = 1;
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), -EINVAL);
		memset(pb, 0xff, gl);
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), -EINVAL);
		assert_int_equal(nvmfd_auth_dh_derive(a, pa, gl - 1, ka, sizeof(ka)), -EINVAL);
		/* p and p - 1 (the element of order 2: the range check, without
		 * the costly subgroup check, still refuses it); 2 (the generator) is
		 * fine. The
		 * primes end in 64 one bits. */
		group_prime(g, pb, gl);
		assert_int_equal(pb[gl - 1], 0xff);
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), -EINVAL);
		pb[gl - 1] = 0xfe;
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), -EINVAL);
		memset(pb, 0, gl);
		pb[gl - 1] = 2;
		assert_int_equal(nvmfd_auth_dh_derive(a, pb, gl, ka, sizeof(ka)), gl);
		nvmfd_auth_dh_free(a);
		nvmfd_auth_dh_free(b);
	}
	{
		struct nvmfd_auth_dh *x = NULL;

		assert_int_equal(nvmfd_auth_dh_new(0, &x), -EINVAL);
		assert_int_equal(nvmfd_auth_dh_new(6, &x), -EINVAL);
	}
}

static void test_tls_chain(void **state)
{
	struct nvmfd_auth_psk p;
	uint8_t ret[48], tls[48];
	char dig[128], id[512];
	size_t n;
	int rl;

	(void)state;
	/* SHA-256: retained PSK by openssl CLI (kdf HKDF, info 0020 0d "tls13
	 * HostNQN" 11 "nqn.psk-test-host"); the identity is libnvme's
	 * test/psk.c vector, which checks retained PSK + digest together; the
	 * TLS PSK by openssl CLI (label "tls13 nvme-tls-psk", context
	 * "01 <digest>"). */
	memset(&p, 0, sizeof(p));
	hex2bin(spec_psk_hex, p.psk, &n);
	p.len = (uint8_t)n;
	p.hash = NVMFD_AUTH_HASH_SHA256;
	rl = nvmfd_auth_retained_psk(&p, "nqn.psk-test-host", ret);
	assert_int_equal(rl, 32);
	assert_hex(ret, 32, "073311dec37e219ff3acd43f130130c5bdd443c066e1cc3424e49030234ff7d5");
	assert_int_equal(nvmfd_auth_psk_digest(1, ret, 32, "nqn.psk-test-host",
					       "nqn.psk-test-subsys", dig, sizeof(dig)),
			 0);
	assert_int_equal(nvmfd_auth_tls_identity(1, 1, "nqn.psk-test-host", "nqn.psk-test-subsys",
						 dig, id, sizeof(id)),
			 0);
	assert_string_equal(id, "NVMe1R01 nqn.psk-test-host nqn.psk-test-subsys "
				"iSbjiStwJ/1TrTvDlt2fjFmzvsytOJelidNnA+X5lEU=");
	assert_int_equal(nvmfd_auth_tls_psk(1, 1, ret, 32, dig, tls), 32);
	assert_hex(tls, 32, "8fc3c0badfd4c0c66fa3ca33aadd0314f85536cc9bc47338b60f3e6e563786ca");
	/* Version 0: identity without digest; the TLS PSK is the retained PSK. */
	assert_int_equal(nvmfd_auth_tls_identity(0, 1, "nqn.psk-test-host", "nqn.psk-test-subsys",
						 NULL, id, sizeof(id)),
			 0);
	assert_string_equal(id, "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys");
	assert_int_equal(nvmfd_auth_tls_psk(0, 1, ret, 32, NULL, tls), 32);
	assert_memory_equal(tls, ret, 32);
	assert_int_equal(nvmfd_auth_tls_identity(1, 1, "h", "s", NULL, id, sizeof(id)), -EINVAL);
	assert_int_equal(nvmfd_auth_tls_identity(0, 3, "h", "s", NULL, id, sizeof(id)), -EINVAL);
	assert_int_equal(nvmfd_auth_tls_identity(0, 1, "h", "s", NULL, id, 8), -ENOSPC);

	/* SHA-384, the 48-byte libnvme vector: same sources. */
	hex2bin("5512dbb6737d0106f65975b773dfb011ffc344bcf442e2dd6d8bc4870b5d5b03"
		"ffc344bcf442e2dd6d8bc4870b5d5b03",
		p.psk, &n);
	p.len = (uint8_t)n;
	p.hash = NVMFD_AUTH_HASH_SHA384;
	rl = nvmfd_auth_retained_psk(&p, "nqn.psk-test-host", ret);
	assert_int_equal(rl, 48);
	assert_hex(ret, 48,
		   "73973a1b51a9acdde29a0610ac6a3ef852cf45936cca6830a661d18f68502f1a"
		   "4c7a8ecb37524e0b1f7087cb4d680ad9");
	assert_int_equal(nvmfd_auth_psk_digest(2, ret, 48, "nqn.psk-test-host",
					       "nqn.psk-test-subsys", dig, sizeof(dig)),
			 0);
	assert_int_equal(nvmfd_auth_tls_identity(1, 2, "nqn.psk-test-host", "nqn.psk-test-subsys",
						 dig, id, sizeof(id)),
			 0);
	assert_string_equal(id, "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys "
				"QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a");
	assert_int_equal(nvmfd_auth_tls_psk(1, 2, ret, 48, dig, tls), 48);
	assert_hex(tls, 48,
		   "a2b2f943f479fc682555cec89857c80ed004ce92f32a973d5764155bb7e36b17"
		   "a85368a0666d250afac9282dda2e62ca");
	/* Indicator 00: the configured PSK is the retained PSK, SHA-256 by length. */
	p.hash = 0;
	p.len = 32;
	assert_int_equal(nvmfd_auth_retained_psk(&p, "nqn.psk-test-host", ret), 32);
	assert_memory_equal(ret, p.psk, 32);
	assert_int_equal(nvmfd_auth_psk_tls_hash(&p), NVMFD_AUTH_HASH_SHA256);
}

/*
 * SPDK's TLS PSK for a version 0 identity: HKDF-Expand-Label over the
 * retained PSK of test_tls_chain with the identity itself as the context,
 * computed with the openssl CLI (kdf HKDF, digest SHA256, info 0020 12
 * "tls13 nvme-tls-psk" 2e "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys").
 * Identity parsing: both versions, and what is refused.
 */
static void test_tls_spdk_and_parse(void **state)
{
	static const char *const bad[] = {
		"", "NVMe0R01", "NVMe0R01 h", "NVMe0R01 h s extra", "NVMe1R01 h s",
		"NVMe2R01 h s", "NVMe0G01 h s", "NVMe0R03 h s", "NVMe0R01  h s",
		"NVMe0R01 h s ", "nvme0R01 h s", "NVMe0R1 h s",
	};
	struct nvmfd_auth_tls_id id;
	uint8_t ret[32], tls[48];
	size_t n;

	(void)state;
	hex2bin("073311dec37e219ff3acd43f130130c5bdd443c066e1cc3424e49030234ff7d5", ret, &n);
	assert_int_equal(nvmfd_auth_tls_psk_spdk(1, ret, 32,
						 "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys",
						 tls),
			 32);
	assert_hex(tls, 32, "05c6503551ad136e6ee32e6eeb3f6d500b69701d84ec71e328f65c7f51566f68");
	assert_int_equal(nvmfd_auth_tls_psk_spdk(3, ret, 32, "x", tls), -EINVAL);
	assert_int_equal(nvmfd_auth_tls_psk_spdk(1, ret, 31, "x", tls), -EINVAL);

	assert_int_equal(nvmfd_auth_tls_identity_parse(
				 "NVMe0R01 nqn.psk-test-host nqn.psk-test-subsys", &id),
			 0);
	assert_int_equal(id.version, 0);
	assert_int_equal(id.hashid, 1);
	assert_string_equal(id.hostnqn, "nqn.psk-test-host");
	assert_string_equal(id.subnqn, "nqn.psk-test-subsys");
	assert_string_equal(id.digest, "");
	assert_int_equal(nvmfd_auth_tls_identity_parse(
				 "NVMe1R02 nqn.psk-test-host nqn.psk-test-subsys "
				 "QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a",
				 &id),
			 0);
	assert_int_equal(id.version, 1);
	assert_int_equal(id.hashid, 2);
	assert_string_equal(id.digest,
			    "QhW2+Rp6RzHlNtCslyRxMnwJ11tKKhz8JCAQpQ+XUD8f9td1VeH5h53yz2wKJG1a");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(nvmfd_auth_tls_identity_parse(bad[i], &id), -EINVAL);
		assert_string_equal(id.hostnqn, "");
	}
	assert_int_equal(nvmfd_auth_tls_identity_parse(NULL, &id), -EINVAL);
}

/* Replace @path's contents with @pre @key @post (its mode stays). */
static void put(const char *path, const char *pre, const char *key, const char *post)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "%s%s%s", pre, key, post);
	fclose(f);
}

static void test_secret_file(void **state)
{
	char dir[] = "/tmp/nvmfd-auth-kat.XXXXXX", path[64], link[64], buf[128];
	static const char key[] = "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:";
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\r\nsecond line\n", key);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, key);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, 20), -ENAMETOOLONG);
	/* blanks around the key and blank lines before it are not the key */
	put(path, "\n \r\n\t", key, " \t\nsecond line\n");
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, key);
	put(path, "", key, "  ");
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, key);
	put(path, " \n\t\n", "", "");
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), -ENODATA);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), -EPERM);
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), -EPERM);
	assert_int_equal(nvmfd_auth_read_secret_file(dir, buf, sizeof(buf)), -EPERM);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(nvmfd_auth_read_secret_file(link, buf, sizeof(buf)), -ELOOP);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), -ENODATA);
	unlink(link);
	unlink(path);
	assert_int_equal(nvmfd_auth_read_secret_file(path, buf, sizeof(buf)), -ENOENT);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_and_base64_via_key_format),
		cmocka_unit_test(test_dhhc_parse),
		cmocka_unit_test(test_psk_interchange),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_transform_key),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_dh_groups),
		cmocka_unit_test(test_tls_chain),
		cmocka_unit_test(test_tls_spdk_and_parse),
		cmocka_unit_test(test_secret_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
