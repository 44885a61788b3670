// SPDX-License-Identifier: MIT
/*
 * test_auth.c - DH-HMAC-CHAP on the target core's queues: the host side
 * state machine (nvmfd_auth_host_*) runs full transactions against the
 * core through Fabrics Authentication Send / Receive on the fake transport.
 *
 * Config: tgt_test.h's, plus top-level hosts HOST_A (host key, controller
 * key, on sub1 which allows only HOST_A) and HOST_B (a key, but only on
 * sub0, which allows any host: no authentication there, as nvmet).
 */
#include "internal/auth.h"
#include "tgt_test.h"

#define AL 4096u

static struct nvmfd_auth_key g_hkey, g_ckey, g_bad;
static char g_hstr[NVMFD_AUTH_KEY_STR_MAX], g_cstr[NVMFD_AUTH_KEY_STR_MAX];

static void make_key(struct nvmfd_auth_key *k, uint8_t hash, uint8_t len, uint8_t seed)
{
	memset(k, 0, sizeof(*k));
	k->hash = hash;
	k->len = len;
	for (uint8_t i = 0; i < len; i++)
		k->key[i] = (uint8_t)(seed + 7 * i);
}

static struct tt_env *env_new(uint8_t hashes, uint8_t dhgroups, bool ctrl_key)
{
	struct tt_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	tt_cfg_build(&e->cfg);
	make_key(&g_hkey, 1, 32, 1);
	make_key(&g_ckey, 3, 64, 99);
	make_key(&g_bad, 1, 32, 2);
	assert_int_equal(nvmfd_auth_key_format(&g_hkey, g_hstr, sizeof(g_hstr)), 0);
	assert_int_equal(nvmfd_auth_key_format(&g_ckey, g_cstr, sizeof(g_cstr)), 0);
	e->cfg.nr_hosts = 2;
	strcpy(e->cfg.hosts[0], HOST_A);
	strcpy(e->cfg.host_dhchap[0].key, g_hstr);
	if (ctrl_key)
		strcpy(e->cfg.host_dhchap[0].ctrl_key, g_cstr);
	e->cfg.host_dhchap[0].hashes = hashes;
	e->cfg.host_dhchap[0].dhgroups = dhgroups;
	strcpy(e->cfg.hosts[1], HOST_B);
	strcpy(e->cfg.host_dhchap[1].key, g_hstr);
	assert_int_equal(nvmfd__tgt_core_create(&e->cfg, &e->tgt), 0);
	return e;
}

static struct nvmfd_sqe auth_sqe(uint8_t fctype, uint32_t len)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_FABRICS, fctype, len);
	struct nvmfd_auth_send_cmd c;

	memcpy(&c, &s, sizeof(c));
	c.cid = 0x300;
	c.secp = NVMFD_AUTH_SECP_NVME;
	c.spsp0 = NVMFD_AUTH_SPSP0;
	c.spsp1 = NVMFD_AUTH_SPSP1;
	c.tl = len;
	memcpy(&s, &c, sizeof(s));
	return s;
}

static nvmfd_status_t auth_send(struct tt_q *q, const void *msg, size_t len)
{
	struct nvmfd_sqe s = auth_sqe(NVMFD_FCTYPE_AUTH_SEND, (uint32_t)len);

	return tt_cmd(q, &s, msg, (uint32_t)len);
}

static nvmfd_status_t auth_recv(struct tt_q *q)
{
	struct nvmfd_sqe s = auth_sqe(NVMFD_FCTYPE_AUTH_RECV, AL);

	return tt_cmd(q, &s, NULL, 0);
}

/*
 * One host transaction on @q, as src/host/auth.c runs it.
 * Return: 0 authenticated; -EACCES the controller sent an AUTH_Failure1
 * (@res filled); 1 the host sent an AUTH_Failure2.
 */
static int host_auth(struct tt_q *q, const char *subnqn, const char *hostnqn,
		     const struct nvmfd_auth_key *key, const struct nvmfd_auth_key *ckey,
		     uint8_t hashes, uint8_t dhgroups, struct nvmfd_auth_result *res)
{
	struct nvmfd_auth_host_cfg cfg = { .key = key,
					   .ctrl_key = ckey,
					   .hostnqn = hostnqn,
					   .subnqn = subnqn,
					   .tid = q->qp.qid,
					   .hashes = hashes,
					   .dhgroups = dhgroups };
	static uint8_t out[NVMFD_AUTH_MSG_MAX];
	struct nvmfd_auth_host *h;
	size_t outlen;
	int next = NVMFD_AUTH_NEXT_SEND_RECV, ret;

	assert_int_equal(nvmfd_auth_host_new(&cfg, &h), 0);
	ret = nvmfd_auth_host_start(h, out, sizeof(out));
	assert_true(ret > 0);
	outlen = (size_t)ret;
	for (int round = 0; round < 4; round++) {
		if (outlen)
			assert_int_equal(auth_send(q, out, outlen), 0);
		if (next == NVMFD_AUTH_NEXT_SEND_DONE || next == NVMFD_AUTH_NEXT_DONE) {
			*res = *nvmfd_auth_host_result(h);
			nvmfd_auth_host_free(h);
			return 0;
		}
		if (next == NVMFD_AUTH_NEXT_SEND_FAIL) {
			*res = *nvmfd_auth_host_result(h);
			nvmfd_auth_host_free(h);
			return 1;
		}
		assert_int_equal(auth_recv(q), 0);
		assert_int_equal(q->out_len, AL);
		next = nvmfd_auth_host_step(h, q->out, AL, out, sizeof(out), &outlen);
		if (next < 0) {
			*res = *nvmfd_auth_host_result(h);
			nvmfd_auth_host_free(h);
			return next;
		}
	}
	fail_msg("transaction did not finish");
	return -1;
}

static nvmfd_status_t identify(struct tt_q *q)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);

	s.cdw10 = 1; /* controller */
	return tt_cmd(q, &s, NULL, 0);
}

static nvmfd_status_t read1(struct tt_q *q)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_CMD_READ, 5, 512);

	s.cid = 0x77;
	return tt_cmd(q, &s, NULL, 0);
}

/* Connect an admin queue that must authenticate; return the cntlid. */
static uint16_t connect_atr(struct tt_q *q, const char *sub, const char *host)
{
	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, sub, host, 0), 0);
	assert_true(q->last.result & NVMFD_CONNECT_AUTHREQ_ATR);
	assert_false(q->last.result & NVMFD_CONNECT_AUTHREQ_ASCR);
	return (uint16_t)q->last.result;
}

static void enable(struct tt_q *q)
{
	uint64_t v;

	assert_int_equal(tt_prop_set(q, NVMFD_REG_CC, TT_CC_ENABLE), 0);
	assert_int_equal(tt_prop_get(q, NVMFD_REG_CSTS, NVMFD_PROP_ATTRIB_SIZE_4, &v), 0);
	assert_int_equal(v & NVMFD_CSTS_RDY, NVMFD_CSTS_RDY);
}

/* Unidirectional, then bidirectional, on the admin queue and an I/O queue;
 * nothing but Authentication Send/Receive passes before. */
static void run_full(bool bidi, uint8_t hashes, uint8_t dhgroups, uint8_t want_hash,
		     uint8_t want_dh)
{
	struct tt_env *e = env_new(hashes, dhgroups, true);
	struct tt_q *a = tt_q_new(e, 0), *io = tt_q_new(e, 0);
	struct nvmfd_auth_result r;
	uint64_t v;
	uint16_t cntlid;

	cntlid = connect_atr(a, SUB1, HOST_A);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CAP, NVMFD_PROP_ATTRIB_SIZE_8, &v),
			 TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(identify(a), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, bidi ? &g_ckey : NULL, 0, 0, &r), 0);
	assert_int_equal(r.bidirectional, bidi);
	assert_int_equal(r.hashid, want_hash);
	assert_int_equal(r.dhgid, want_dh);
	enable(a);
	assert_int_equal(identify(a), 0);

	/* the I/O queue authenticates on its own */
	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB1, HOST_A), 0);
	assert_true(io->last.result & NVMFD_CONNECT_AUTHREQ_ATR);
	assert_int_equal(read1(io), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(host_auth(io, SUB1, HOST_A, &g_hkey, bidi ? &g_ckey : NULL, 0, 0, &r),
			 0);
	assert_int_equal(read1(io), 0);
	assert_int_equal(io->out_len, 512);

	/* re-authentication on a used queue; the queue stays usable */
	assert_int_equal(host_auth(io, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	assert_int_equal(read1(io), 0);
	tt_q_free(io);
	tt_q_free(a);
	tt_env_free(e);
}

static void test_unidirectional(void **state)
{
	(void)state;
	/* default preferences: SHA-256, ffdhe8192 first */
	run_full(false, 0, 0, NVMFD_AUTH_HASH_SHA256, NVMFD_AUTH_DHGROUP_8192);
}

static void test_bidirectional(void **state)
{
	(void)state;
	/* configured hash and group (nvmet's dhchap_hash / dhchap_dhgroup) */
	run_full(true, 1u << NVMFD_AUTH_HASH_SHA384, 1u << NVMFD_AUTH_DHGROUP_2048,
		 NVMFD_AUTH_HASH_SHA384, NVMFD_AUTH_DHGROUP_2048);
	run_full(true, 1u << NVMFD_AUTH_HASH_SHA512, 1u << NVMFD_AUTH_DHGROUP_NULL,
		 NVMFD_AUTH_HASH_SHA512, NVMFD_AUTH_DHGROUP_NULL);
}

/* A wrong host secret: AUTH_Failure1 (failed); the queue stays closed to
 * everything but a new Negotiate, which then succeeds. */
static void test_wrong_secret(void **state)
{
	struct tt_env *e = env_new(0, 1u << NVMFD_AUTH_DHGROUP_NULL, true);
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_auth_result r;

	(void)state;
	connect_atr(a, SUB1, HOST_A);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_bad, NULL, 0, 0, &r), -EACCES);
	assert_true(r.failure_from_peer);
	assert_int_equal(r.rescode, NVMFD_AUTH_RC_FAILED);
	assert_int_equal(r.rescode_exp, NVMFD_AUTH_RCE_FAILED);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), TT_C(NVMFD_SC_AUTH_REQUIRED));
	/* a Receive with nothing pending */
	assert_int_equal(auth_recv(a), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	enable(a);
	tt_q_free(a);
	tt_env_free(e);
}

/* A wrong controller secret on the host: it sends AUTH_Failure2; the queue
 * is not authenticated. Also: a controller without a controller key
 * refuses a bidirectional request. */
static void test_wrong_ctrl_secret(void **state)
{
	struct tt_env *e = env_new(0, 1u << NVMFD_AUTH_DHGROUP_NULL, true);
	struct tt_env *e2;
	struct tt_q *a = tt_q_new(e, 0), *b;
	struct nvmfd_auth_result r;

	(void)state;
	connect_atr(a, SUB1, HOST_A);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, &g_bad, 0, 0, &r), 1);
	assert_int_equal(r.rescode_exp, NVMFD_AUTH_RCE_FAILED);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), TT_C(NVMFD_SC_AUTH_REQUIRED));
	tt_q_free(a);
	tt_env_free(e);

	e2 = env_new(0, 1u << NVMFD_AUTH_DHGROUP_NULL, false);
	b = tt_q_new(e2, 0);
	connect_atr(b, SUB1, HOST_A);
	assert_int_equal(host_auth(b, SUB1, HOST_A, &g_hkey, &g_ckey, 0, 0, &r), -EACCES);
	assert_int_equal(r.rescode_exp, NVMFD_AUTH_RCE_FAILED);
	assert_int_equal(host_auth(b, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	tt_q_free(b);
	tt_env_free(e2);
}

/* A host offering none of the configured hash / group: Failure1 04h / 05h. */
static void test_unusable(void **state)
{
	struct tt_env *e = env_new(1u << NVMFD_AUTH_HASH_SHA512, 1u << NVMFD_AUTH_DHGROUP_4096,
				   false);
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_auth_result r;

	(void)state;
	connect_atr(a, SUB1, HOST_A);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 1u << NVMFD_AUTH_HASH_SHA256,
				   0, &r),
			 -EACCES);
	assert_int_equal(r.rescode_exp, NVMFD_AUTH_RCE_HASH_UNUSABLE);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 0,
				   1u << NVMFD_AUTH_DHGROUP_2048, &r),
			 -EACCES);
	assert_int_equal(r.rescode_exp, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	assert_int_equal(r.hashid, NVMFD_AUTH_HASH_SHA512);
	assert_int_equal(r.dhgid, NVMFD_AUTH_DHGROUP_4096);
	tt_q_free(a);
	tt_env_free(e);
}

/* A host that has no key (or does not authenticate) gets nothing done:
 * every command, admin or I/O connect included, is refused. */
static void test_no_key_refused(void **state)
{
	struct tt_env *e = env_new(0, 0, false);
	struct tt_q *a = tt_q_new(e, 0), *io = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	uint16_t cntlid;

	(void)state;
	cntlid = connect_atr(a, SUB1, HOST_A);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(identify(a), TT_C(NVMFD_SC_AUTH_REQUIRED));
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_C(NVMFD_SC_AUTH_REQUIRED));
	/* the controller never became ready: no I/O queue either */
	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB1, HOST_A), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	/* malformed Authentication commands */
	s = auth_sqe(NVMFD_FCTYPE_AUTH_RECV, AL);
	s.cdw10 = 0; /* SPSP/SECP cleared */
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	s = auth_sqe(NVMFD_FCTYPE_AUTH_SEND, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	s = auth_sqe(NVMFD_FCTYPE_AUTH_SEND, 64);
	s.dptr.length = 32; /* SGL shorter than TL */
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
	/* garbage message: Failure1 incorrect payload comes back */
	{
		uint8_t junk[3] = { 9, 9, 9 };
		struct nvmfd_auth_failure f;

		assert_int_equal(auth_send(a, junk, sizeof(junk)), 0);
		assert_int_equal(auth_recv(a), 0);
		memcpy(&f, a->out, sizeof(f));
		assert_int_equal(f.auth_id, NVMFD_AUTH_ID_FAILURE1);
		assert_int_equal(f.rescode_exp, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	}
	assert_int_equal(identify(a), TT_C(NVMFD_SC_AUTH_REQUIRED));
	tt_q_free(io);
	tt_q_free(a);
	tt_env_free(e);
}

/* No authentication where none is configured: a keyed host on a subsystem
 * that allows any host (as nvmet), an unkeyed host, discovery. */
static void test_not_required(void **state)
{
	struct tt_env *e = env_new(0, 0, false);
	struct tt_q *a = tt_q_new(e, 0), *d = tt_q_new(e, 0);
	struct nvmfd_sqe s;

	(void)state;
	tt_admin_up(a, SUB0, HOST_B, 0);
	assert_false(a->last.result & NVMFD_CONNECT_AUTHREQ_ATR);
	assert_int_equal(tt_connect_ex(d, 0, 31, 0, 0, 0xffff, NVMFD_DISC_NQN, HOST_A, 0), 0);
	assert_false(d->last.result & NVMFD_CONNECT_AUTHREQ_ATR);
	/* Authentication Send on a queue without authentication */
	s = auth_sqe(NVMFD_FCTYPE_AUTH_SEND, 8);
	assert_int_equal(tt_cmd(a, &s, "\0\0\0\0\0\0\0", 8), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	assert_int_equal(identify(a), 0);
	tt_q_free(d);
	tt_q_free(a);
	tt_env_free(e);
}

/*
 * The authentication deadline: a queue that must authenticate and does not
 * is closed once auth_timeout_ms (or the controller's KATO, if shorter) has
 * passed since its Connect; once and counted. An authenticated queue has
 * none; a failed re-authentication starts a new one.
 */
static void test_deadline(void **state)
{
	struct tt_env *e = env_new(0, 1u << NVMFD_AUTH_DHGROUP_NULL, false);
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0), *k;
	struct nvmfd_auth_result r;
	uint64_t dl;

	(void)state;
	e->cfg.auth_timeout_ms = 1000;
	connect_atr(a, SUB1, HOST_A);
	dl = a->qp.auth_deadline_ns;
	assert_int_equal(dl - a->qp.last_cmd_ns, 1000ull * 1000000ull);
	assert_int_equal(nvmfd__tgt_check_auth(e->tgt, dl - 1), 0);
	assert_int_equal(a->nr_shutdown, 0);
	assert_int_equal(nvmfd__tgt_check_auth(e->tgt, dl), 1);
	assert_int_equal(a->nr_shutdown, 1);
	assert_int_equal(e->tgt->auth_timeouts, 1);
	/* once */
	assert_int_equal(nvmfd__tgt_check_auth(e->tgt, dl + 1000000000ull), 0);
	assert_int_equal(a->nr_shutdown, 1);
	assert_int_equal(e->tgt->auth_timeouts, 1);

	/* authenticated in time: no deadline left, not closed */
	assert_int_equal(tt_connect_ex(b, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	assert_true(b->qp.auth_deadline_ns != 0);
	assert_int_equal(host_auth(b, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	assert_int_equal(b->qp.auth_deadline_ns, 0);
	assert_int_equal(nvmfd__tgt_check_auth(e->tgt, UINT64_MAX / 2), 0);
	assert_int_equal(b->nr_shutdown, 0);
	/* a failed re-authentication re-arms it */
	assert_int_equal(host_auth(b, SUB1, HOST_A, &g_bad, NULL, 0, 0, &r), -EACCES);
	assert_int_equal(identify(b), TT_C(NVMFD_SC_AUTH_REQUIRED));
	dl = b->qp.auth_deadline_ns;
	assert_true(dl != 0);
	assert_int_equal(nvmfd__tgt_check_auth(e->tgt, dl), 1);
	assert_int_equal(b->nr_shutdown, 1);
	assert_int_equal(e->tgt->auth_timeouts, 2);
	assert_int_equal(e->tgt->auth_ok, 1);
	assert_int_equal(e->tgt->auth_failed, 1);

	tt_q_free(b);
	tt_q_free(a);
	/* a KATO shorter than auth_timeout_ms bounds it */
	k = tt_q_new(e, 0);
	assert_int_equal(tt_connect_ex(k, 0, 31, 0, 300, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(k->qp.auth_deadline_ns - k->qp.last_cmd_ns, 300ull * 1000000ull);
	tt_q_free(k);

	/* neither set: no deadline */
	e->cfg.auth_timeout_ms = 0;
	a = tt_q_new(e, 0);
	connect_atr(a, SUB1, HOST_A);
	assert_int_equal(a->qp.auth_deadline_ns, 0);
	tt_q_free(a);
	/* a queue that needs no authentication has none either */
	e->cfg.auth_timeout_ms = 1000;
	a = tt_q_new(e, 0);
	tt_admin_up(a, SUB0, HOST_B, 0);
	assert_int_equal(a->qp.auth_deadline_ns, 0);
	tt_q_free(a);
	tt_env_free(e);
}

/*
 * Traffic-based keep-alive: commands refused with AUTH_REQUIRED or as an
 * invalid opcode are no traffic (a Keep Alive on a queue that never
 * authenticated does not keep the controller alive); accepted commands are.
 */
static void test_refused_not_traffic(void **state)
{
	struct tt_env *e = env_new(0, 1u << NVMFD_AUTH_DHGROUP_NULL, false);
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_auth_result r;
	struct nvmfd_sqe s;
	uint64_t now;

	(void)state;
	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 1000, 0xffff, SUB1, HOST_A, 0), 0);
	a->qp.last_cmd_ns = 1;
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(identify(a), TT_C(NVMFD_SC_AUTH_REQUIRED));
	assert_int_equal(a->qp.last_cmd_ns, 1);
	/* the authentication itself is traffic */
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	assert_true(a->qp.last_cmd_ns > 1);
	enable(a);
	/* an unknown admin opcode on an authenticated queue: no traffic, and
	 * its answer none either */
	a->qp.last_cmd_ns = 1;
	a->qp.admin_cpl_ns = 1;
	s = tt_sqe(0xc3, 0, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	assert_int_equal(a->qp.last_cmd_ns, 1);
	assert_int_equal(a->qp.admin_cpl_ns, 1);
	now = nvmfd__tgt_now_ns();
	/* the keep-alive check sees the old time and expires the controller */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, now), 1);
	assert_int_equal(a->nr_shutdown, 1);
	tt_q_free(a);

	/* the same host, a Keep Alive that is accepted counts */
	a = tt_q_new(e, 0);
	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 1000, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(host_auth(a, SUB1, HOST_A, &g_hkey, NULL, 0, 0, &r), 0);
	enable(a);
	a->qp.last_cmd_ns = 1;
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	assert_true(a->qp.last_cmd_ns > 1);
	tt_q_free(a);
	tt_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unidirectional),	 cmocka_unit_test(test_bidirectional),
		cmocka_unit_test(test_wrong_secret),	 cmocka_unit_test(test_wrong_ctrl_secret),
		cmocka_unit_test(test_unusable),	 cmocka_unit_test(test_no_key_refused),
		cmocka_unit_test(test_not_required),	 cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_refused_not_traffic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
