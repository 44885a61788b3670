// SPDX-License-Identifier: MIT
/*
 * test_exchange.c - the DH-HMAC-CHAP host and controller state machines run
 * against each other in memory: every hash with every DH group, uni- and
 * bidirectional, re-authentication, and the failure paths (wrong secrets,
 * truncated and garbage messages, a replayed challenge or reply, a hash or
 * DH group that was not offered, a transaction ID mismatch), each with the
 * AUTH_Failure reason code explanation the specification asks for.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "auth/auth_int.h"

static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:0c468c4d-a385-47e0-8299-6e95051277db";
static const char subnqn[] = "nqn.2026-11.io.nvmfd:auth-test";

static struct nvmfd_auth_key host_key, ctrl_key, other_key;

static int setup(void **state)
{
	(void)state;
	/* Any valid secrets; the known answers are in test_kat.c. */
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:", &host_key),
			 0);
	assert_int_equal(nvmfd_auth_key_parse(
				 "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:", &ctrl_key),
			 0);
	other_key = host_key;
	other_key.key[0] ^= 1;
	return 0;
}

struct pair {
	struct nvmfd_auth_host *h;
	struct nvmfd_auth_ctrl *c;
	uint8_t a[NVMFD_AUTH_MSG_MAX];
	uint8_t b[NVMFD_AUTH_MSG_MAX];
	size_t alen, blen;
};

static void pair_new(struct pair *p, const struct nvmfd_auth_key *hk,
		     const struct nvmfd_auth_key *hck, const struct nvmfd_auth_key *ck,
		     const struct nvmfd_auth_key *cck, uint8_t hashes, uint8_t dhgroups,
		     const uint8_t *chashes, const uint8_t *cgroups)
{
	struct nvmfd_auth_host_cfg hc = {
		.key = hk, .ctrl_key = hck, .hostnqn = hostnqn, .subnqn = subnqn,
		.tid = 0x1234, .hashes = hashes, .dhgroups = dhgroups,
	};
	struct nvmfd_auth_ctrl_cfg cc = {
		.host_key = ck, .ctrl_key = cck, .hostnqn = hostnqn, .subnqn = subnqn,
		.hashes = chashes, .dhgroups = cgroups,
	};

	memset(p, 0, sizeof(*p));
	assert_int_equal(nvmfd_auth_host_new(&hc, &p->h), 0);
	assert_int_equal(nvmfd_auth_ctrl_new(&cc, &p->c), 0);
}

static void pair_free(struct pair *p)
{
	nvmfd_auth_host_free(p->h);
	nvmfd_auth_ctrl_free(p->c);
}

/* Host sends p->a (alen) to the controller; its answer lands in p->b. */
static int to_ctrl(struct pair *p)
{
	return nvmfd_auth_ctrl_step(p->c, p->a, p->alen, p->b, sizeof(p->b), &p->blen);
}

static int to_host(struct pair *p)
{
	return nvmfd_auth_host_step(p->h, p->b, p->blen, p->a, sizeof(p->a), &p->alen);
}

static void start(struct pair *p)
{
	int n = nvmfd_auth_host_start(p->h, p->a, sizeof(p->a));

	assert_int_equal(n, 72); /* 8-byte header + one 64-byte descriptor */
	p->alen = (size_t)n;
}

/* A full exchange that must succeed. */
static void run_ok(struct pair *p, bool bidi)
{
	start(p);
	assert_int_equal(to_ctrl(p), NVMFD_AUTH_NEXT_SEND_RECV); /* Challenge */
	assert_int_equal(to_host(p), NVMFD_AUTH_NEXT_SEND_RECV); /* Reply */
	assert_int_equal(to_ctrl(p), bidi ? NVMFD_AUTH_NEXT_SEND_RECV : NVMFD_AUTH_NEXT_SEND_DONE);
	assert_false(bidi && nvmfd_auth_ctrl_authenticated(p->c));
	if (bidi) {
		assert_int_equal(to_host(p), NVMFD_AUTH_NEXT_SEND_DONE); /* Success2 */
		assert_int_equal(p->alen, 16);
		assert_int_equal(to_ctrl(p), NVMFD_AUTH_NEXT_DONE);
		assert_int_equal(p->blen, 0);
	} else {
		assert_int_equal(to_host(p), NVMFD_AUTH_NEXT_DONE);
		assert_int_equal(p->alen, 0);
	}
	assert_true(nvmfd_auth_ctrl_authenticated(p->c));
	assert_int_equal(nvmfd_auth_host_result(p->h)->bidirectional, bidi);
	assert_int_equal(nvmfd_auth_ctrl_result(p->c)->bidirectional, bidi);
	assert_int_equal(nvmfd_auth_host_result(p->h)->rescode, 0);
}

static void test_every_hash_and_group(void **state)
{
	(void)state;
	for (uint8_t h = 1; h <= 3; h++) {
		for (uint8_t g = 0; g <= 5; g++) {
			uint8_t ch[2] = { h, 0 }, cg[2] = { g ? g : 0xff, 0 };
			struct pair p;
			bool bidi = (h + g) % 2 == 0; /* both modes over the matrix */

			pair_new(&p, &host_key, bidi ? &ctrl_key : NULL, &host_key, &ctrl_key, 0, 0,
				 ch, cg);
			run_ok(&p, bidi);
			assert_int_equal(nvmfd_auth_host_result(p.h)->hashid, h);
			assert_int_equal(nvmfd_auth_host_result(p.h)->dhgid, g);
			assert_int_equal(nvmfd_auth_ctrl_result(p.c)->dhgid, g);
			pair_free(&p);
		}
	}
}

static void test_bidirectional_default_prefs(void **state)
{
	struct pair p;

	(void)state;
	pair_new(&p, &host_key, &ctrl_key, &host_key, &ctrl_key, 0, 0, NULL, NULL);
	run_ok(&p, true);
	/* The controller's default preference: SHA-256, strongest group. */
	assert_int_equal(nvmfd_auth_ctrl_result(p.c)->hashid, NVMFD_AUTH_HASH_SHA256);
	assert_int_equal(nvmfd_auth_ctrl_result(p.c)->dhgid, NVMFD_AUTH_DHGROUP_8192);
	pair_free(&p);
	/* A host that offers only null + ffdhe2048 gets ffdhe2048. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 1u << 1,
		 (1u << 0) | (1u << NVMFD_AUTH_DHGROUP_2048), NULL, NULL);
	run_ok(&p, false);
	assert_int_equal(nvmfd_auth_ctrl_result(p.c)->dhgid, NVMFD_AUTH_DHGROUP_2048);
	pair_free(&p);
}

static void test_reauthentication(void **state)
{
	struct nvmfd_auth_host_cfg hc = {
		.key = &host_key, .hostnqn = hostnqn, .subnqn = subnqn, .tid = 7,
	};
	uint8_t g[] = { 0xff, 0 };
	struct pair p;

	(void)state;
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	run_ok(&p, false);
	/* A second transaction on the same controller object (a new host
	 * object, as a host re-authenticating does). */
	nvmfd_auth_host_free(p.h);
	assert_int_equal(nvmfd_auth_host_new(&hc, &p.h), 0);
	run_ok(&p, false);
	pair_free(&p);
}

/* nvmfd_auth_ctrl_idle() between transactions only; nvmfd_auth_ctrl_refuse()
 * answers a Negotiate with Failure1 01h/01h and its T_ID, and leaves the
 * controller ready for a new transaction (the target's re-keying and
 * failed-attempt limit rest on both). */
static void test_idle_refuse(void **state)
{
	struct nvmfd_auth_host_cfg hc = {
		.key = &host_key, .hostnqn = hostnqn, .subnqn = subnqn, .tid = 9,
	};
	uint8_t g[] = { 0xff, 0 };
	struct pair p;

	(void)state;
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	assert_true(nvmfd_auth_ctrl_idle(p.c));
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV); /* Challenge */
	assert_false(nvmfd_auth_ctrl_idle(p.c));
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_DONE);
	assert_true(nvmfd_auth_ctrl_idle(p.c));
	/* a new Negotiate, refused */
	nvmfd_auth_host_free(p.h);
	assert_int_equal(nvmfd_auth_host_new(&hc, &p.h), 0);
	start(&p);
	assert_int_equal(nvmfd_auth_ctrl_refuse(p.c, p.a, p.alen, "no key", p.b, sizeof(p.b),
						&p.blen),
			 NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.blen, 8);
	assert_int_equal(p.b[0], NVMFD_AUTH_TYPE_COMMON);
	assert_int_equal(p.b[1], NVMFD_AUTH_ID_FAILURE1);
	assert_int_equal(p.b[4] | p.b[5] << 8, 9);
	assert_int_equal(p.b[6], NVMFD_AUTH_RC_FAILED);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_FAILED);
	assert_false(nvmfd_auth_ctrl_authenticated(p.c));
	assert_string_equal(nvmfd_auth_ctrl_result(p.c)->why, "no key");
	assert_true(nvmfd_auth_ctrl_idle(p.c));
	assert_int_equal(to_host(&p), -EACCES);
	/* and the next transaction runs as usual */
	nvmfd_auth_host_free(p.h);
	assert_int_equal(nvmfd_auth_host_new(&hc, &p.h), 0);
	run_ok(&p, false);
	pair_free(&p);
}

static void test_wrong_host_secret(void **state)
{
	uint8_t g[] = { NVMFD_AUTH_DHGROUP_2048, 0 };
	struct pair p;

	(void)state;
	pair_new(&p, &other_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_false(nvmfd_auth_ctrl_authenticated(p.c));
	assert_int_equal(p.blen, 8);
	assert_int_equal(p.b[0], NVMFD_AUTH_TYPE_COMMON);
	assert_int_equal(p.b[1], NVMFD_AUTH_ID_FAILURE1);
	assert_int_equal(p.b[6], NVMFD_AUTH_RC_FAILED);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_FAILED);
	/* The host reads the Failure1 and fails with -EACCES. */
	assert_int_equal(to_host(&p), -EACCES);
	assert_true(nvmfd_auth_host_result(p.h)->failure_from_peer);
	assert_int_equal(nvmfd_auth_host_result(p.h)->rescode_exp, NVMFD_AUTH_RCE_FAILED);
	assert_non_null(strstr(nvmfd_auth_host_result(p.h)->why, "authentication failed"));
	/* A failed host refuses further input. */
	assert_int_equal(to_host(&p), -EPROTO);
	pair_free(&p);
}

static void test_wrong_ctrl_secret(void **state)
{
	struct nvmfd_auth_key bad = ctrl_key;
	struct pair p;

	(void)state;
	bad.key[31] ^= 0x80;
	/* The host expects the controller to know ctrl_key; it knows bad. */
	pair_new(&p, &host_key, &ctrl_key, &host_key, &bad, 0, 0, NULL, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV); /* Success1 + R2 */
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.alen, 8);
	assert_int_equal(p.a[1], NVMFD_AUTH_ID_FAILURE2);
	assert_int_equal(p.a[7], NVMFD_AUTH_RCE_FAILED);
	/* The controller takes the Failure2: not authenticated. */
	assert_int_equal(to_ctrl(&p), -EACCES);
	assert_false(nvmfd_auth_ctrl_authenticated(p.c));
	assert_true(nvmfd_auth_ctrl_result(p.c)->failure_from_peer);
	pair_free(&p);
}

static void test_bidi_without_ctrl_key(void **state)
{
	struct pair p;

	(void)state;
	pair_new(&p, &host_key, &ctrl_key, &host_key, NULL, 0, 0, NULL, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_FAILED);
	assert_int_equal(to_host(&p), -EACCES);
	pair_free(&p);
}

static void test_unusable_hash_and_group(void **state)
{
	uint8_t only384[] = { NVMFD_AUTH_HASH_SHA384, 0 };
	uint8_t only8192[] = { NVMFD_AUTH_DHGROUP_8192, 0 };
	struct pair p;

	(void)state;
	/* Host offers SHA-256 only, controller allows SHA-384 only. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 1u << 1, 0, only384, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_HASH_UNUSABLE);
	assert_int_equal(to_host(&p), -EACCES);
	assert_int_equal(nvmfd_auth_host_result(p.h)->rescode_exp, NVMFD_AUTH_RCE_HASH_UNUSABLE);
	pair_free(&p);
	/* Host offers null only, controller insists on ffdhe8192. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 1u << 0, NULL, only8192);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	pair_free(&p);
}

/* The controller answers with a hash / group the host never offered. */
static void test_challenge_with_wrong_ids(void **state)
{
	struct pair p;

	(void)state;
	pair_new(&p, &host_key, NULL, &host_key, NULL, 1u << 1, 1u << 0, NULL, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	p.b[8] = NVMFD_AUTH_HASH_SHA512; /* HashID */
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.a[1], NVMFD_AUTH_ID_FAILURE2);
	assert_int_equal(p.a[7], NVMFD_AUTH_RCE_HASH_UNUSABLE);
	pair_free(&p);

	pair_new(&p, &host_key, NULL, &host_key, NULL, 1u << 1, 1u << 0, NULL, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	p.b[9] = NVMFD_AUTH_DHGROUP_4096; /* DHgroupID */
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.a[7], NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	pair_free(&p);

	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, NULL);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	p.b[8] = 9; /* no such hash */
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.a[7], NVMFD_AUTH_RCE_HASH_UNUSABLE);
	pair_free(&p);
}

static void test_replays(void **state)
{
	uint8_t saved[NVMFD_AUTH_MSG_MAX];
	uint8_t g[] = { 0xff, 0 };
	size_t savedlen;
	struct pair p;

	(void)state;
	/* The host gets the same Challenge twice. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	memcpy(saved, p.b, p.blen);
	savedlen = p.blen;
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	memcpy(p.b, saved, savedlen);
	p.blen = savedlen;
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.a[7], NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	pair_free(&p);

	/* The controller gets the same Reply twice (after its Success1). */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	memcpy(saved, p.a, p.alen);
	savedlen = p.alen;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_DONE);
	memcpy(p.a, saved, savedlen);
	p.alen = savedlen;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	assert_false(nvmfd_auth_ctrl_authenticated(p.c));
	pair_free(&p);

	/* An old Reply (from an earlier transaction, other C1) is refused. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	memcpy(saved, p.a, p.alen); /* the Negotiate */
	savedlen = p.alen;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	{
		uint8_t reply[NVMFD_AUTH_MSG_MAX];
		size_t rlen = p.alen;

		memcpy(reply, p.a, rlen);
		memcpy(p.a, saved, savedlen); /* Negotiate again: new challenge */
		p.alen = savedlen;
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL); /* mid-transaction */
		assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV); /* fresh start */
		memcpy(p.a, reply, rlen);
		p.alen = rlen;
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
		assert_int_equal(p.b[7], NVMFD_AUTH_RCE_FAILED);
	}
	pair_free(&p);
}

static void test_truncated_and_garbage(void **state)
{
	uint8_t g[] = { NVMFD_AUTH_DHGROUP_2048, 0 };
	struct pair p;

	(void)state;
	/* Every truncation of a valid Negotiate is refused as a bad payload. */
	for (size_t cut = 0; cut < 72; cut++) {
		pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
		start(&p);
		p.alen = cut;
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
		assert_int_equal(p.b[1], NVMFD_AUTH_ID_FAILURE1);
		if (cut >= 6)
			assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
		pair_free(&p);
	}
	/* Every truncation of a Challenge and of a Reply. */
	for (size_t cut = 0; cut < 16 + 32 + 256; cut += 7) {
		pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
		start(&p);
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
		assert_int_equal(p.blen, 16 + 32 + 256);
		p.blen = cut;
		assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
		assert_int_equal(p.a[1], NVMFD_AUTH_ID_FAILURE2);
		if (cut >= 6)
			assert_int_equal(p.a[7], NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
		pair_free(&p);
	}
	for (size_t cut = 0; cut < 16 + 64 + 256; cut += 11) {
		pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
		start(&p);
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
		assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
		assert_int_equal(p.alen, 16 + 64 + 256);
		p.alen = cut;
		assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
		if (cut >= 6)
			assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
		pair_free(&p);
	}
	/* Garbage: a pseudo-random byte soup of every length up to 300 never
	 * authenticates and always yields an AUTH_Failure1. */
	{
		uint32_t x = 0x9e3779b9;

		for (size_t len = 0; len < 300; len++) {
			pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
			for (size_t i = 0; i < len; i++) {
				x = x * 1664525u + 1013904223u;
				p.a[i] = (uint8_t)(x >> 24);
			}
			p.alen = len;
			assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
			assert_false(nvmfd_auth_ctrl_authenticated(p.c));
			pair_free(&p);
		}
	}
	/* A Reply whose DH value is 0 (not in the group). */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	memset(p.a + 16 + 64, 0, 256);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	pair_free(&p);
}

static void test_tid_and_concat(void **state)
{
	struct pair p;
	uint8_t g[] = { 0xff, 0 };

	(void)state;
	/* Reply with another T_ID. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	assert_int_equal(to_host(&p), NVMFD_AUTH_NEXT_SEND_RECV);
	p.a[4] ^= 1;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	pair_free(&p);
	/* Negotiate asking for secure channel concatenation. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	p.a[6] = NVMFD_AUTH_SCC_NEWTLSPSK;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_CONCAT_MISMATCH);
	pair_free(&p);
	/* Negotiate with a descriptor for another protocol only. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	start(&p);
	p.a[8] = 0x02;
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_PROTO_UNUSABLE);
	pair_free(&p);
	/* The controller receives a Success2 before anything else. */
	pair_new(&p, &host_key, NULL, &host_key, NULL, 0, 0, NULL, g);
	p.alen = (size_t)nvmfd__auth_build_success2(p.a, sizeof(p.a), 0x1234);
	assert_int_equal(to_ctrl(&p), NVMFD_AUTH_NEXT_SEND_FAIL);
	assert_int_equal(p.b[7], NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	pair_free(&p);
}

static void test_codec_roundtrip(void **state)
{
	uint8_t buf[NVMFD_AUTH_MSG_MAX], c[64], d[1024];
	struct auth_challenge_v cv = { 0 }, cp;
	struct auth_failure_v f;
	int n;

	(void)state;
	memset(c, 0xa5, sizeof(c));
	memset(d, 0x5a, sizeof(d));
	cv.tid = 0xbeef;
	cv.hashid = 3;
	cv.dhgid = 5;
	cv.hl = 64;
	cv.dhvlen = 1024;
	cv.seqnum = 0x01020304;
	cv.cval = c;
	cv.dhv = d;
	n = nvmfd__auth_build_challenge(buf, sizeof(buf), &cv);
	assert_int_equal(n, 16 + 64 + 1024);
	assert_int_equal(nvmfd__auth_build_challenge(buf, 100, &cv), -ENOSPC);
	assert_int_equal(nvmfd__auth_parse_challenge(buf, (size_t)n, &cp), 0);
	assert_int_equal(cp.tid, 0xbeef);
	assert_int_equal(cp.seqnum, 0x01020304);
	assert_int_equal(cp.dhvlen, 1024);
	assert_memory_equal(cp.cval, c, 64);
	assert_memory_equal(cp.dhv, d, 1024);
	/* Wire bytes at the specified offsets. */
	assert_int_equal(buf[0], 1);
	assert_int_equal(buf[1], 1);
	assert_int_equal(buf[4], 0xef);
	assert_int_equal(buf[6], 64);
	assert_int_equal(buf[8], 3);
	assert_int_equal(buf[9], 5);
	assert_int_equal(buf[10] | buf[11] << 8, 1024);
	assert_int_equal(buf[12], 4);
	n = nvmfd__auth_build_failure(buf, sizeof(buf), NVMFD_AUTH_ID_FAILURE1, 9,
				      NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	assert_int_equal(n, 8);
	assert_int_equal(nvmfd__auth_parse_failure(buf, 8, &f), 0);
	assert_int_equal(f.rce, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	assert_int_equal(nvmfd__auth_parse_failure(buf, 7, &f), NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
}

static void test_bad_configs(void **state)
{
	struct nvmfd_auth_host *h = NULL;
	struct nvmfd_auth_ctrl *c = NULL;
	struct nvmfd_auth_host_cfg hc = { .key = &host_key, .hostnqn = hostnqn, .subnqn = "" };
	struct nvmfd_auth_ctrl_cfg cc = { .host_key = &host_key, .hostnqn = hostnqn,
					  .subnqn = subnqn };
	uint8_t badh[] = { 7, 0 };

	(void)state;
	assert_int_equal(nvmfd_auth_host_new(&hc, &h), -EINVAL);
	hc.subnqn = subnqn;
	hc.key = NULL;
	assert_int_equal(nvmfd_auth_host_new(&hc, &h), -EINVAL);
	cc.hashes = badh;
	assert_int_equal(nvmfd_auth_ctrl_new(&cc, &c), -EINVAL);
	assert_null(c);
	assert_null(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_hash_and_group),
		cmocka_unit_test(test_bidirectional_default_prefs),
		cmocka_unit_test(test_reauthentication),
		cmocka_unit_test(test_idle_refuse),
		cmocka_unit_test(test_wrong_host_secret),
		cmocka_unit_test(test_wrong_ctrl_secret),
		cmocka_unit_test(test_bidi_without_ctrl_key),
		cmocka_unit_test(test_unusable_hash_and_group),
		cmocka_unit_test(test_challenge_with_wrong_ids),
		cmocka_unit_test(test_replays),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_tid_and_concat),
		cmocka_unit_test(test_codec_roundtrip),
		cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
