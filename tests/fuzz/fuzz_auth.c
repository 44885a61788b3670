// SPDX-License-Identifier: MIT
/*
 * fuzz_auth.c - libFuzzer target for the DH-HMAC-CHAP state machines and
 * message codec (src/auth).
 *
 * Input layout: byte 0 selects the set-up: bit 0 the side that receives the
 * fuzzed messages (0 controller, 1 host), bits 3:1 how many messages of a
 * valid exchange are delivered first (0..7, stopping early when the
 * exchange ends), bit 4 bidirectional, bit 5 allow ffdhe2048 (else DH null
 * only, for speed). The rest is a sequence of messages, each a 2-byte
 * little-endian length and that many bytes (a short tail is one message).
 *
 * Invariants, checked with abort() so they hold in any build type: every
 * step returns a known value; a message to send is non-empty and fits the
 * buffer; the controller never ends authenticated when the host's Reply was
 * not among the valid messages delivered (no byte string without the secret
 * may pass); the parsers never report success for a buffer shorter than the
 * message's fixed part.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:2e6d8f1a-7c3b-4d5e-9f0a-1b2c3d4e5f60";
static const char subnqn[] = "nqn.2026-11.io.nvmfd:fuzz";

#define CHECK(c)                                                       \
	do {                                                           \
		if (!(c)) {                                            \
			fprintf(stderr, "fuzz_auth: %s failed\n", #c); \
			abort();                                       \
		}                                                      \
	} while (0)

static void check_next(int r, size_t outlen)
{
	if (r == NVMFD_AUTH_NEXT_SEND_RECV || r == NVMFD_AUTH_NEXT_SEND_DONE ||
	    r == NVMFD_AUTH_NEXT_SEND_FAIL) {
		CHECK(outlen > 0 && outlen <= NVMFD_AUTH_MSG_MAX);
	} else if (r == NVMFD_AUTH_NEXT_DONE) {
		CHECK(outlen == 0);
	} else {
		CHECK(r == -EACCES || r == -EPROTO || r == -EIO || r == -ENOMEM);
	}
}

/* The codec alone: every parser on the raw bytes. */
static void parse_all(const uint8_t *m, size_t n)
{
	struct auth_negotiate_v nv;
	struct auth_challenge_v cv;
	struct auth_reply_v rv;
	struct auth_success1_v sv;
	struct auth_failure_v fv;
	uint16_t tid;

	if (nvmfd__auth_parse_negotiate(m, n, &nv) == 0)
		CHECK(n >= 72 && nv.nhash <= 30 && nv.ndh <= 30);
	if (nvmfd__auth_parse_challenge(m, n, &cv) == 0)
		CHECK(n >= 16u + cv.hl + cv.dhvlen);
	if (nvmfd__auth_parse_reply(m, n, &rv) == 0)
		CHECK(n >= 16u + 2u * rv.hl + rv.dhvlen);
	if (nvmfd__auth_parse_success1(m, n, &sv) == 0)
		CHECK(n >= 16u + (sv.rvalid ? sv.hl : 0u));
	if (nvmfd__auth_parse_success2(m, n, &tid) == 0)
		CHECK(n >= 16);
	if (nvmfd__auth_parse_failure(m, n, &fv) == 0)
		CHECK(n >= 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t a[NVMFD_AUTH_MSG_MAX], b[NVMFD_AUTH_MSG_MAX];
	static const uint8_t null_only[] = { 0xff, 0 };
	static const uint8_t with_2048[] = { NVMFD_AUTH_DHGROUP_2048, 0xff, 0 };
	struct nvmfd_auth_key key;
	struct nvmfd_auth_host *h = NULL;
	struct nvmfd_auth_ctrl *c = NULL;
	size_t alen = 0, blen = 0, pos = 1;
	bool to_host, bidi, reply_delivered = false;
	unsigned int valid;
	int r;

	if (size < 1)
		return 0;
	to_host = data[0] & 1;
	valid = (data[0] >> 1) & 7;
	bidi = data[0] & 0x10;
	memset(&key, 0, sizeof(key));
	key.len = 32;
	for (int i = 0; i < 32; i++)
		key.key[i] = (uint8_t)(i * 7 + 3);
	{
		struct nvmfd_auth_host_cfg hc = { .key = &key, .ctrl_key = bidi ? &key : NULL,
						  .hostnqn = hostnqn, .subnqn = subnqn, .tid = 5 };
		struct nvmfd_auth_ctrl_cfg cc = { .host_key = &key, .ctrl_key = &key,
						  .hostnqn = hostnqn, .subnqn = subnqn,
						  .dhgroups = (data[0] & 0x20) ? with_2048 : null_only };

		CHECK(nvmfd_auth_host_new(&hc, &h) == 0);
		CHECK(nvmfd_auth_ctrl_new(&cc, &c) == 0);
	}
	/* The valid prefix: host and controller alternate, starting with the
	 * host's Negotiate in a. */
	r = nvmfd_auth_host_start(h, a, sizeof(a));
	CHECK(r == 72);
	alen = (size_t)r;
	for (unsigned int i = 0; i < valid; i++) {
		if (i % 2 == 0) {
			if (!alen)
				break;
			if (i == 2)
				reply_delivered = true;
			r = nvmfd_auth_ctrl_step(c, a, alen, b, sizeof(b), &blen);
			check_next(r, blen);
			if (r != NVMFD_AUTH_NEXT_SEND_RECV && r != NVMFD_AUTH_NEXT_SEND_DONE)
				break;
			alen = 0;
		} else {
			if (!blen)
				break;
			r = nvmfd_auth_host_step(h, b, blen, a, sizeof(a), &alen);
			check_next(r, alen);
			if (r != NVMFD_AUTH_NEXT_SEND_RECV && r != NVMFD_AUTH_NEXT_SEND_DONE)
				break;
			blen = 0;
		}
	}
	/* The fuzzed messages. */
	while (pos < size) {
		size_t n = size - pos;
		const uint8_t *m = data + pos;
		size_t outlen = 0;

		if (n >= 2) {
			size_t l = (size_t)data[pos] | (size_t)data[pos + 1] << 8;

			m += 2;
			n -= 2;
			if (l < n)
				n = l;
		}
		pos = (size_t)(m - data) + n;
		parse_all(m, n);
		if (to_host) {
			r = nvmfd_auth_host_step(h, m, n, a, sizeof(a), &outlen);
		} else {
			r = nvmfd_auth_ctrl_step(c, m, n, b, sizeof(b), &outlen);
		}
		check_next(r, outlen);
		if (!reply_delivered)
			CHECK(!nvmfd_auth_ctrl_authenticated(c));
	}
	nvmfd_auth_host_free(h);
	nvmfd_auth_ctrl_free(c);
	return 0;
}
