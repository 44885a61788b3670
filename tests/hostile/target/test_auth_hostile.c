// SPDX-License-Identifier: MIT
/*
 * test_auth_hostile.c - hostile DH-HMAC-CHAP traffic over TCP against a
 * live, in-process target. One case per run (argv[1]).
 *
 * The target (tests/lib/tgt_fixture) gets a second subsystem AUTH_SUBNQN
 * that allows only TC_HOSTNQN, which has a host and a controller key
 * (SHA-256/384/512, DH groups null and ffdhe2048). Before each case a
 * "bystander" host authenticates an admin queue on it; the case then
 * attacks its own connection. Afterwards: the attacked connection got the
 * AUTH_Failure1 (reason code explanation per NVMe Base 2.0 §8.13.5, table
 * in doc/auth.md) or NVMe status the case expects, the bystander still
 * works, a fresh connection authenticates and verifies I/O, the stats
 * count what happened, and (ASan) nothing leaked.
 */
#include <endian.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal/auth.h"
#include "tcp_client.h"
#include "tgt_fixture.h"

#define AUTH_SUBNQN "nqn.2026-11.io.nvmfd:tt-auth"
#define AL 4096u

static struct tf_target t;
static struct nvmfd_auth_key g_hkey, g_ckey, g_bad;
static uint32_t g_auth_timeout_ms = 10000;
/* the failed-attempt limit: off (the cases fail on purpose, many times,
 * from 127.0.0.1), except for the throttle case */
static uint32_t g_fail_burst;

static void make_key(struct nvmfd_auth_key *k, uint8_t hash, uint8_t len, uint8_t seed)
{
	memset(k, 0, sizeof(*k));
	k->hash = hash;
	k->len = len;
	for (uint8_t i = 0; i < len; i++)
		k->key[i] = (uint8_t)(seed + 13 * i);
}

static void tweak(struct nvmfd_cfg *cfg)
{
	struct nvmfd_cfg_subsys *s = &cfg->subsys[1];
	char err[NVMFD_CFG_ERRLEN], spec[64];

	TF_CHECK_EQ(nvmfd_cfg_subsys_init(s, AUTH_SUBNQN, err), 0);
	s->allow_any_host = false;
	s->nr_hosts = 1;
	snprintf(s->hosts[0], sizeof(s->hosts[0]), "%s", TC_HOSTNQN);
	s->nr_ns = 1;
	snprintf(spec, sizeof(spec), "ram:%u", 1u << 20);
	TF_CHECK_EQ(nvmfd_cfg_parse_namespace(&s->ns[0], spec, err), 0);
	s->ns[0].nsid = 1;
	s->ns[0].enable = true;
	cfg->nr_subsys = 2;
	cfg->ports[0].nr_subsys = 2;
	cfg->ports[0].subsys_idx[1] = 1;
	cfg->nr_hosts = 1;
	snprintf(cfg->hosts[0], sizeof(cfg->hosts[0]), "%s", TC_HOSTNQN);
	TF_CHECK_EQ(nvmfd_auth_key_format(&g_hkey, cfg->host_dhchap[0].key,
					  sizeof(cfg->host_dhchap[0].key)), 0);
	TF_CHECK_EQ(nvmfd_auth_key_format(&g_ckey, cfg->host_dhchap[0].ctrl_key,
					  sizeof(cfg->host_dhchap[0].ctrl_key)), 0);
	cfg->host_dhchap[0].dhgroups = (uint8_t)((1u << NVMFD_AUTH_DHGROUP_NULL) |
						 (1u << NVMFD_AUTH_DHGROUP_2048));
	cfg->auth_timeout_ms = g_auth_timeout_ms;
	cfg->auth_fail_burst = g_fail_burst;
	cfg->auth_fail_interval_ms = 3600000; /* no refill while the test runs */
}

/* Authentication Send (@len bytes of @msg) or Receive (AL bytes into @buf).
 * Return: 0, or as tc_step() (0x10000 | status when it failed). */
static int auth_cmd(struct tc_conn *c, uint8_t fctype, void *buf, uint32_t len, uint32_t tl,
		    unsigned int flags)
{
	struct nvmfd_auth_send_cmd a;
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	bool send = fctype == NVMFD_FCTYPE_AUTH_SEND;

	memset(&a, 0, sizeof(a));
	a.opc = NVMFD_ADMIN_FABRICS;
	a.fctype = fctype;
	a.secp = NVMFD_AUTH_SECP_NVME;
	a.spsp0 = NVMFD_AUTH_SPSP0;
	a.spsp1 = NVMFD_AUTH_SPSP1;
	a.tl = htole32(tl);
	memcpy(&sqe, &a, sizeof(sqe));
	return tc_step(tc_cmd(c, &sqe, buf, len, send, flags, &cqe), &cqe);
}

static int send_msg(struct tc_conn *c, const void *msg, size_t len)
{
	return auth_cmd(c, NVMFD_FCTYPE_AUTH_SEND, (void *)msg, (uint32_t)len, (uint32_t)len,
			TC_F_ICD);
}

static int recv_msg(struct tc_conn *c, uint8_t buf[AL])
{
	return auth_cmd(c, NVMFD_FCTYPE_AUTH_RECV, buf, AL, AL, 0);
}

/* Receive and expect an AUTH_Failure1 with explanation @rce for @tid
 * (-1: any T_ID, for a message too short to carry one). */
static void expect_failure1(struct tc_conn *c, int tid, uint8_t rce)
{
	static uint8_t buf[AL];
	struct nvmfd_auth_failure f;

	TF_CHECK_EQ(recv_msg(c, buf), 0);
	memcpy(&f, buf, sizeof(f));
	TF_CHECK_EQ(f.auth_type, NVMFD_AUTH_TYPE_COMMON);
	TF_CHECK_EQ(f.auth_id, NVMFD_AUTH_ID_FAILURE1);
	if (tid >= 0)
		TF_CHECK_EQ(le16toh(f.t_id), tid);
	TF_CHECK_EQ(f.rescode, NVMFD_AUTH_RC_FAILED);
	TF_CHECK_EQ(f.rescode_exp, rce);
}

/* A well-formed AUTH_Negotiate offering @hashes / @groups (byte lists). */
static size_t negotiate(uint8_t *out, uint16_t tid, const uint8_t *hashes, unsigned int nh,
			const uint8_t *groups, unsigned int ng)
{
	memset(out, 0, 72);
	out[0] = NVMFD_AUTH_TYPE_COMMON;
	out[1] = NVMFD_AUTH_ID_NEGOTIATE;
	out[4] = (uint8_t)tid;
	out[5] = (uint8_t)(tid >> 8);
	out[6] = NVMFD_AUTH_SCC_NONE;
	out[7] = 1; /* NAPD */
	out[8] = NVMFD_AUTH_PROTO_DHCHAP; /* descriptor: AUTHID */
	out[10] = (uint8_t)nh; /* HALEN */
	out[11] = (uint8_t)ng; /* DHLEN */
	memcpy(out + 12, hashes, nh);
	memcpy(out + 8 + 34, groups, ng);
	return 72;
}

/*
 * A host transaction through src/auth's host state machine, with a hook
 * to tamper with the message sent in round @round (0 Negotiate, 1 Reply,
 * 2 Success2): @tamper edits it in place and may change its length.
 * Return: 0 authenticated, -EACCES the controller answered AUTH_Failure1
 * (@rce set), 1 the host sent AUTH_Failure2, 2 the tampered message was
 * sent and nothing more done.
 */
typedef void (*tamper_fn)(uint8_t *msg, size_t *len, void *arg);
struct auth_opts {
	const struct nvmfd_auth_key *key;
	const struct nvmfd_auth_key *ckey;
	uint16_t tid;
	uint8_t hashes, dhgroups;
	int round; /* -1: no tampering */
	/* the last message's command may fail: its status is returned
	 * (0x10000 | status, as tc_step()) instead of being checked */
	bool last_may_fail;
	tamper_fn tamper;
	void *arg;
	/* out: the Reply as sent, for the replay case */
	uint8_t reply[NVMFD_AUTH_MSG_MAX];
	size_t reply_len;
};

static int host_auth(struct tc_conn *c, const char *subnqn, struct auth_opts *o, uint8_t *rce)
{
	struct nvmfd_auth_host_cfg cfg = { .key = o->key ? o->key : &g_hkey,
					   .ctrl_key = o->ckey,
					   .hostnqn = TC_HOSTNQN,
					   .subnqn = subnqn,
					   .tid = o->tid,
					   .hashes = o->hashes,
					   .dhgroups = o->dhgroups };
	static uint8_t out[NVMFD_AUTH_MSG_MAX], in[AL];
	struct nvmfd_auth_host *h;
	size_t outlen;
	int next = NVMFD_AUTH_NEXT_SEND_RECV, ret;

	TF_CHECK_EQ(nvmfd_auth_host_new(&cfg, &h), 0);
	ret = nvmfd_auth_host_start(h, out, sizeof(out));
	TF_CHECK(ret > 0);
	outlen = (size_t)ret;
	for (int round = 0; round < 4; round++) {
		bool tampered = round == o->round && o->tamper;

		if (tampered)
			o->tamper(out, &outlen, o->arg);
		if (round == 1) {
			memcpy(o->reply, out, outlen);
			o->reply_len = outlen;
		}
		if (outlen) {
			int sret = send_msg(c, out, outlen);

			if (sret && o->last_may_fail &&
			    (next == NVMFD_AUTH_NEXT_SEND_DONE || next == NVMFD_AUTH_NEXT_DONE)) {
				ret = sret;
				goto out;
			}
			TF_CHECK_EQ(sret, 0);
		}
		if (tampered) {
			ret = 2;
			goto out;
		}
		if (next == NVMFD_AUTH_NEXT_SEND_DONE || next == NVMFD_AUTH_NEXT_DONE) {
			ret = 0;
			goto out;
		}
		if (next == NVMFD_AUTH_NEXT_SEND_FAIL) {
			ret = 1;
			goto out;
		}
		TF_CHECK_EQ(recv_msg(c, in), 0);
		next = nvmfd_auth_host_step(h, in, AL, out, sizeof(out), &outlen);
		if (next < 0) {
			*rce = nvmfd_auth_host_result(h)->rescode_exp;
			TF_CHECK(nvmfd_auth_host_result(h)->failure_from_peer);
			ret = next;
			goto out;
		}
	}
	TF_CHECK(!"transaction did not finish");
out:
	nvmfd_auth_host_free(h);
	return ret;
}

static int identify(struct tc_conn *c)
{
	static uint8_t buf[4096];
	struct nvmfd_cqe cqe;

	return tc_step(tc_identify(c, NVMFD_ID_CNS_CTRL, 0, buf, &cqe), &cqe);
}

/* A Property Get of CAP: AUTH_REQUIRED until the queue authenticated (it
 * needs no enabled controller, unlike Identify). */
static int probe(struct tc_conn *c)
{
	struct nvmfd_cqe cqe;
	uint64_t v;

	return tc_step(tc_prop_get(c, NVMFD_REG_CAP, true, &v, &cqe), &cqe);
}

static void enable(struct tc_conn *c)
{
	struct nvmfd_cqe cqe;
	uint64_t csts = 0;

	TF_CHECK_EQ(tc_step(tc_prop_set(c, NVMFD_REG_CC, false, 1u | (6u << 16) | (4u << 20),
					&cqe), &cqe), 0);
	for (int i = 0; i < 500 && !(csts & NVMFD_CSTS_RDY); i++) {
		TF_CHECK_EQ(tc_step(tc_prop_get(c, NVMFD_REG_CSTS, false, &csts, &cqe), &cqe), 0);
		if (!(csts & NVMFD_CSTS_RDY))
			usleep(10000);
	}
	TF_CHECK(csts & NVMFD_CSTS_RDY);
}

/* ICReq + admin Connect to AUTH_SUBNQN; ATR must be set. Return: cntlid. */
static uint16_t open_admin(struct tc_conn *c)
{
	struct nvmfd_cqe cqe;

	TF_CHECK_EQ(tc_open_ic(c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_step(tc_connect(c, 0, 31, 0, AUTH_SUBNQN, TC_HOSTNQN, 0xffff, &cqe), &cqe),
		    0);
	TF_CHECK(le32toh(cqe.result) & NVMFD_CONNECT_AUTHREQ_ATR);
	return (uint16_t)(le32toh(cqe.result) & 0xffff);
}

static const uint8_t g_sha256[] = { NVMFD_AUTH_HASH_SHA256 };
static const uint8_t g_null[] = { NVMFD_AUTH_DHGROUP_NULL };

/* A full, bidirectional, verified session on fresh connections: admin and
 * I/O queue authenticate, write a pattern, read it back. */
static void verify_auth_io(uint32_t seed)
{
	static uint8_t wbuf[8192], rbuf[8192];
	struct auth_opts o = { .ckey = &g_ckey, .round = -1 };
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	uint8_t rce = 0;
	uint16_t cntlid;

	cntlid = open_admin(&adm);
	o.tid = 1;
	TF_CHECK_EQ(host_auth(&adm, AUTH_SUBNQN, &o, &rce), 0);
	enable(&adm);
	{
		struct nvmfd_sqe sqe;

		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_ADMIN_SET_FEATURES;
		sqe.cdw10 = htole32(NVMFD_FEAT_NUM_QUEUES);
		sqe.cdw11 = htole32(0);
		TF_CHECK_EQ(tc_step(tc_cmd(&adm, &sqe, NULL, 0, false, 0, &cqe), &cqe), 0);
	}
	TF_CHECK_EQ(tc_open_ic(&io, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_step(tc_connect(&io, 1, 31, 0, AUTH_SUBNQN, TC_HOSTNQN, cntlid, &cqe),
			    &cqe), 0);
	TF_CHECK(le32toh(cqe.result) & NVMFD_CONNECT_AUTHREQ_ATR);
	TF_CHECK_EQ(tc_step(tc_rw(&io, false, 1, 0, 1, rbuf, 512, 0, &cqe), &cqe),
		    0x10000 | NVMFD_STATUS_DNR |
			    NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED));
	o.tid = 2;
	TF_CHECK_EQ(host_auth(&io, AUTH_SUBNQN, &o, &rce), 0);
	tc_pattern(wbuf, sizeof(wbuf), seed);
	TF_CHECK_EQ(tc_step(tc_rw(&io, true, 1, 16, 16, wbuf, sizeof(wbuf), 0, &cqe), &cqe), 0);
	memset(rbuf, 0, sizeof(rbuf));
	TF_CHECK_EQ(tc_step(tc_rw(&io, false, 1, 16, 16, rbuf, sizeof(rbuf), 0, &cqe), &cqe), 0);
	TF_CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)));
	tc_close(&io);
	tc_close(&adm);
}

/* The target's stats JSON (free() it). */
static char *stats_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	TF_CHECK(f != NULL);
	TF_CHECK_EQ(nvmfd_tgt_stats_json(t.tgt, f), 0);
	fclose(f);
	return buf;
}

/* The stats' "auth" object counters. */
static void auth_stats(uint64_t *ok, uint64_t *failed, uint64_t *timeouts)
{
	char *buf = stats_text(), *p;

	p = strstr(buf, "\"auth\":{");
	TF_CHECK(p != NULL);
	TF_CHECK_EQ(sscanf(p, "\"auth\":{\"ok\":%lu,\"failed\":%lu,\"timeouts\":%lu", ok, failed,
			   timeouts), 3);
	free(buf);
}

static const uint8_t ATTACK_TID = 7;

/* The attacked connection: admin queue connected, not authenticated. */
static struct tc_conn g_att;

static void cut_to(uint8_t *msg, size_t *len, void *arg)
{
	(void)msg;
	*len = *(size_t *)arg;
}

static void set_byte(uint8_t *msg, size_t *len, void *arg)
{
	const unsigned int *v = arg; /* { offset, value } */

	TF_CHECK(v[0] < *len);
	msg[v[0]] = (uint8_t)v[1];
}

static void garbage(uint8_t *msg, size_t *len, void *arg)
{
	uint32_t x = 0x9e3779b9u * (uint32_t)(uintptr_t)arg;

	for (size_t i = 2; i < *len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		msg[i] = (uint8_t)x;
	}
	msg[4] = ATTACK_TID; /* keep the transaction, garble the rest */
	msg[5] = 0;
}

static void case_truncated_negotiate(void)
{
	static const size_t cuts[] = { 1, 4, 7, 8, 12, 40, 71 };
	uint8_t msg[80];
	size_t n;

	/* whole, but its one descriptor is not DH-HMAC-CHAP: 02h */
	n = negotiate(msg, ATTACK_TID, g_sha256, 1, g_null, 1);
	msg[8] = 0x02;
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_PROTO_UNUSABLE);

	for (unsigned int i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct auth_opts o = { .tid = ATTACK_TID, .round = 0, .tamper = cut_to,
				       .arg = (void *)&cuts[i] };
		uint8_t rce;

		TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
		/* shorter than the Negotiate header: no T_ID to echo */
		expect_failure1(&g_att, cuts[i] < 8 ? -1 : ATTACK_TID,
				NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
		TF_CHECK_EQ(probe(&g_att), 0x10000 | NVMFD_STATUS_DNR |
						     NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC,
								  NVMFD_SC_AUTH_REQUIRED));
	}
}

static void case_garbage(void)
{
	for (uintptr_t seed = 1; seed <= 16; seed++) {
		struct auth_opts o = { .tid = ATTACK_TID,
				       .round = (int)(seed % 2),
				       .tamper = garbage,
				       .arg = (void *)seed };
		static uint8_t buf[AL];
		uint8_t rce;

		TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
		/* whatever the garbage, the answer is an AUTH_Failure1 */
		TF_CHECK_EQ(recv_msg(&g_att, buf), 0);
		TF_CHECK_EQ(buf[0], NVMFD_AUTH_TYPE_COMMON);
		TF_CHECK_EQ(buf[1], NVMFD_AUTH_ID_FAILURE1);
		TF_CHECK_EQ(buf[6], NVMFD_AUTH_RC_FAILED);
		TF_CHECK(buf[7] >= NVMFD_AUTH_RCE_PROTO_UNUSABLE &&
			 buf[7] <= NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
		TF_CHECK(probe(&g_att) != 0);
	}
}

static void case_truncated_reply(void)
{
	/* header only; R1 cut; C2 missing; one byte short (ffdhe2048 value) */
	static const size_t cuts[] = { 4, 16, 30, 48, 16 + 64 + 255 };

	for (unsigned int i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct auth_opts o = { .tid = ATTACK_TID, .hashes = 1u << NVMFD_AUTH_HASH_SHA256,
				       .dhgroups = i == 4 ? 1u << NVMFD_AUTH_DHGROUP_2048 :
							    1u << NVMFD_AUTH_DHGROUP_NULL,
				       .round = 1, .tamper = cut_to, .arg = (void *)&cuts[i] };
		uint8_t rce;

		TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
		expect_failure1(&g_att, cuts[i] < 6 ? -1 : ATTACK_TID,
				NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
		TF_CHECK(probe(&g_att) != 0);
	}
}

static void case_bad_success2(void)
{
	static const size_t cut = 9;
	static const unsigned int wrong_tid[2] = { 4, ATTACK_TID + 1 };
	static const unsigned int wrong_id[2] = { 1, NVMFD_AUTH_ID_REPLY };
	struct auth_opts o = { .ckey = &g_ckey, .tid = ATTACK_TID, .round = 2, .tamper = cut_to,
			       .arg = (void *)&cut };
	uint8_t rce;

	/* truncated */
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	TF_CHECK(probe(&g_att) != 0);
	/* another transaction's */
	o.tamper = set_byte;
	o.arg = (void *)wrong_tid;
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	TF_CHECK(probe(&g_att) != 0);
	/* a second Reply where the Success2 belongs */
	o.arg = (void *)wrong_id;
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	TF_CHECK(probe(&g_att) != 0);
}

/* A Reply replayed into a later transaction: with its own (stale) T_ID it
 * is incorrect payload; with the T_ID patched it answers an old challenge
 * (failed). Also a replayed Reply after Success1 (out of order). */
static void case_replay(void)
{
	struct auth_opts o = { .tid = ATTACK_TID, .dhgroups = 1u << NVMFD_AUTH_DHGROUP_NULL,
			       .round = -1 };
	uint8_t msg[80], old[NVMFD_AUTH_MSG_MAX], in[AL];
	size_t oldlen, n;
	uint8_t rce;

	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 0);
	memcpy(old, o.reply, o.reply_len);
	oldlen = o.reply_len;
	TF_CHECK_EQ(probe(&g_att), 0);
	/* the old Reply once more, outside any transaction */
	TF_CHECK_EQ(send_msg(&g_att, old, oldlen), 0);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	TF_CHECK(probe(&g_att) != 0);
	/* transaction 8: a fresh challenge, answered with the stale Reply */
	n = negotiate(msg, ATTACK_TID + 1, g_sha256, 1, g_null, 1);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	TF_CHECK_EQ(recv_msg(&g_att, in), 0);
	TF_CHECK_EQ(in[1], NVMFD_AUTH_ID_CHALLENGE);
	TF_CHECK_EQ(send_msg(&g_att, old, oldlen), 0);
	expect_failure1(&g_att, ATTACK_TID + 1, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	/* transaction 9: the stale Reply with the T_ID patched */
	n = negotiate(msg, ATTACK_TID + 2, g_sha256, 1, g_null, 1);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	TF_CHECK_EQ(recv_msg(&g_att, in), 0);
	TF_CHECK_EQ(in[1], NVMFD_AUTH_ID_CHALLENGE);
	old[4] = ATTACK_TID + 2;
	TF_CHECK_EQ(send_msg(&g_att, old, oldlen), 0);
	expect_failure1(&g_att, ATTACK_TID + 2, NVMFD_AUTH_RCE_FAILED);
	TF_CHECK(probe(&g_att) != 0);
}

/* Hash identifiers: none known offered (04h); a Reply whose HL does not
 * fit the negotiated hash (06h). */
static void case_wrong_hashid(void)
{
	static const uint8_t unknown[] = { 0x00, 0x04, 0x7f };
	static const unsigned int hl[2] = { 6, 48 };
	struct auth_opts o = { .tid = ATTACK_TID, .hashes = 1u << NVMFD_AUTH_HASH_SHA256,
			       .dhgroups = 1u << NVMFD_AUTH_DHGROUP_NULL, .round = 1,
			       .tamper = set_byte, .arg = (void *)hl };
	uint8_t msg[80], rce;
	size_t n;

	n = negotiate(msg, ATTACK_TID, unknown, sizeof(unknown), g_null, 1);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_HASH_UNUSABLE);
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	TF_CHECK(probe(&g_att) != 0);
}

/* DH groups: unknown ids, and a known one the host's entry does not allow
 * (05h); a Reply carrying a DH value of the wrong length (06h). */
static void case_bad_dhgroup(void)
{
	static const uint8_t unknown[] = { 0x06, 0x09, 0xfe };
	static const uint8_t g8192[] = { NVMFD_AUTH_DHGROUP_8192 };
	static const unsigned int dhvlen[2] = { 10, 0x55 };
	struct auth_opts o = { .tid = ATTACK_TID, .dhgroups = 1u << NVMFD_AUTH_DHGROUP_2048,
			       .round = 1, .tamper = set_byte, .arg = (void *)dhvlen };
	uint8_t msg[80], rce;
	size_t n;

	n = negotiate(msg, ATTACK_TID, g_sha256, 1, unknown, sizeof(unknown));
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	n = negotiate(msg, ATTACK_TID, g_sha256, 1, g8192, 1);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE);
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 2);
	expect_failure1(&g_att, ATTACK_TID, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD);
	TF_CHECK(probe(&g_att) != 0);
}

/* AUTH_Negotiate on an authenticated queue is a re-authentication (the
 * queue stays usable during it); a second Negotiate in the middle of it is
 * a protocol error (07h), which leaves the queue unauthenticated. */
static void case_negotiate_authenticated(void)
{
	struct auth_opts o = { .tid = ATTACK_TID, .dhgroups = 1u << NVMFD_AUTH_DHGROUP_NULL,
			       .round = -1 };
	uint8_t msg[80], in[AL], rce;
	size_t n;

	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 0);
	TF_CHECK_EQ(probe(&g_att), 0);
	n = negotiate(msg, ATTACK_TID + 1, g_sha256, 1, g_null, 1);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	TF_CHECK_EQ(recv_msg(&g_att, in), 0);
	TF_CHECK_EQ(in[1], NVMFD_AUTH_ID_CHALLENGE);
	TF_CHECK_EQ(probe(&g_att), 0);
	TF_CHECK_EQ(send_msg(&g_att, msg, n), 0);
	expect_failure1(&g_att, ATTACK_TID + 1, NVMFD_AUTH_RCE_INCORRECT_PROTOCOL);
	TF_CHECK_EQ(probe(&g_att), 0x10000 | NVMFD_STATUS_DNR |
					     NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC,
							  NVMFD_SC_AUTH_REQUIRED));
	/* and a proper re-authentication brings it back */
	o.tid = ATTACK_TID + 2;
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 0);
	TF_CHECK_EQ(probe(&g_att), 0);
}

/* Authentication Receive before any Send: Command Sequence Error; wrong
 * SECP / zero or oversized lengths: Invalid Field; the queue can then still
 * authenticate. */
static void case_recv_before_send(void)
{
	struct auth_opts o = { .tid = ATTACK_TID, .dhgroups = 1u << NVMFD_AUTH_DHGROUP_NULL,
			       .round = -1 };
	static uint8_t in[AL], big[8192];
	struct nvmfd_auth_send_cmd a;
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	uint8_t rce;

	TF_CHECK_EQ(recv_msg(&g_att, in), 0x10000 | NVMFD_STATUS_DNR |
						   NVMFD_STATUS(NVMFD_SCT_GENERIC,
								NVMFD_SC_CMD_SEQ_ERROR));
	/* through R2T: the command is refused before any data moves */
	TF_CHECK_EQ(auth_cmd(&g_att, NVMFD_FCTYPE_AUTH_SEND, big, sizeof(big), sizeof(big), 0),
		    0x10000 | NVMFD_STATUS_DNR |
			    NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD));
	memset(&a, 0, sizeof(a));
	a.opc = NVMFD_ADMIN_FABRICS;
	a.fctype = NVMFD_FCTYPE_AUTH_RECV;
	a.secp = 0xea;
	a.spsp0 = NVMFD_AUTH_SPSP0;
	a.spsp1 = NVMFD_AUTH_SPSP1;
	a.tl = htole32(AL);
	memcpy(&sqe, &a, sizeof(sqe));
	TF_CHECK_EQ(tc_step(tc_cmd(&g_att, &sqe, in, AL, false, 0, &cqe), &cqe),
		    0x10000 | NVMFD_STATUS_DNR |
			    NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD));
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 0);
	/* and once more after a finished transaction: nothing pending */
	TF_CHECK_EQ(recv_msg(&g_att, in), 0x10000 | NVMFD_STATUS_DNR |
						   NVMFD_STATUS(NVMFD_SCT_GENERIC,
								NVMFD_SC_CMD_SEQ_ERROR));
	TF_CHECK_EQ(probe(&g_att), 0);
}

/* A queue that connects and never authenticates is closed by the target
 * (auth_timeout_ms, set short for this case); Keep Alives refused with
 * AUTH_REQUIRED do not help it. An I/O queue too. */
static void case_deadline(void)
{
	struct tc_conn io;
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	uint64_t ok, failed, to;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_KEEP_ALIVE;
	TF_CHECK_EQ(tc_step(tc_cmd(&g_att, &sqe, NULL, 0, false, 0, &cqe), &cqe),
		    0x10000 | NVMFD_STATUS_DNR |
			    NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED));
	TF_CHECK_EQ(tc_wait_eof(&g_att), 0);
	auth_stats(&ok, &failed, &to);
	TF_CHECK_EQ(to, 1);
	/* an I/O queue of an authenticated controller that does not
	 * authenticate itself */
	{
		struct auth_opts o = { .tid = 1, .dhgroups = 1u << NVMFD_AUTH_DHGROUP_NULL,
				       .round = -1 };
		struct tc_conn adm;
		uint8_t rce;
		uint16_t cntlid = open_admin(&adm);

		TF_CHECK_EQ(host_auth(&adm, AUTH_SUBNQN, &o, &rce), 0);
		enable(&adm);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_ADMIN_SET_FEATURES;
		sqe.cdw10 = htole32(NVMFD_FEAT_NUM_QUEUES);
		TF_CHECK_EQ(tc_step(tc_cmd(&adm, &sqe, NULL, 0, false, 0, &cqe), &cqe), 0);
		TF_CHECK_EQ(tc_open_ic(&io, TF_ADDR, t.port, false, false), 0);
		TF_CHECK_EQ(tc_step(tc_connect(&io, 1, 31, 0, AUTH_SUBNQN, TC_HOSTNQN, cntlid,
					       &cqe), &cqe), 0);
		TF_CHECK_EQ(tc_wait_eof(&io), 0);
		tc_close(&io);
		/* the admin queue, authenticated, is untouched */
		TF_CHECK_EQ(identify(&adm), 0);
		tc_close(&adm);
	}
	auth_stats(&ok, &failed, &to);
	TF_CHECK_EQ(to, 2);
}

/* The stats of the target's queue whose peer is @c: its "slots" and
 * whether a completion context is open ("cq_pool" not "none"). */
static void queue_slots(struct tc_conn *c, int *slots, bool *cq)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	char peer[64], *buf = stats_text(), *p, *q;

	TF_CHECK_EQ(getsockname(c->fd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(peer, sizeof(peer), "\"peer\":\"127.0.0.1:%u\"", ntohs(sa.sin_port));
	p = strstr(buf, peer);
	TF_CHECK(p != NULL);
	q = strstr(p, "\"slots\":");
	TF_CHECK(q != NULL);
	*slots = atoi(q + strlen("\"slots\":"));
	q = strstr(p, "\"cq_pool\":\"");
	TF_CHECK(q != NULL);
	*cq = strncmp(q + strlen("\"cq_pool\":\""), "none", 4) != 0;
	free(buf);
}

/* A queue that must authenticate gets its slots and completion context
 * only when it has: its Connect leaves it with the setup's 4 slots. */
static void case_slots_until_authenticated(void)
{
	struct auth_opts o = { .ckey = &g_ckey, .tid = ATTACK_TID, .round = -1 };
	uint8_t rce;
	int slots;
	bool cq;

	queue_slots(&g_att, &slots, &cq);
	TF_CHECK_EQ(slots, 4);
	TF_CHECK(!cq);
	TF_CHECK_EQ(host_auth(&g_att, AUTH_SUBNQN, &o, &rce), 0);
	queue_slots(&g_att, &slots, &cq);
	TF_CHECK_EQ(slots, 2 * 32 + 1); /* SQSIZE 31: 32 entries */
	TF_CHECK(cq);
	TF_CHECK_EQ(probe(&g_att), 0);
}

/* Lower RLIMIT_NOFILE to the lowest free fd (restored by the case): the
 * target's next ring cannot be created (tamper hook, message unchanged). */
static struct rlimit g_nofile;

static void no_fds(uint8_t *msg, size_t *len, void *arg)
{
	struct rlimit low;
	int fd = dup(0);

	(void)msg, (void)len, (void)arg;
	TF_CHECK(fd >= 0);
	close(fd);
	TF_CHECK_EQ(getrlimit(RLIMIT_NOFILE, &g_nofile), 0);
	low = g_nofile;
	low.rlim_cur = (rlim_t)fd;
	TF_CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
}

/* The transaction succeeds but the queue's resources cannot be had (no
 * fd for its completion ring): the Success2's command fails with Internal
 * Error, the queue stays unauthenticated and is closed. */
static void case_no_resources(void)
{
	struct auth_opts o = { .ckey = &g_ckey, .tid = ATTACK_TID, .round = 2,
			       .tamper = no_fds, .last_may_fail = true };
	uint8_t rce;
	int ret;

	ret = host_auth(&g_att, AUTH_SUBNQN, &o, &rce);
	TF_CHECK_EQ(setrlimit(RLIMIT_NOFILE, &g_nofile), 0);
	TF_CHECK_EQ(ret, 0x10000 | NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL));
	TF_CHECK_EQ(tc_wait_eof(&g_att), 0);
}

/* ICReq + admin Connect to AUTH_SUBNQN from source address @src (another
 * loopback address: another peer for the failed-attempt limit). */
static uint16_t open_admin_from(struct tc_conn *c, const char *src)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct nvmfd_cqe cqe;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	TF_CHECK(fd >= 0);
	TF_CHECK_EQ(inet_pton(AF_INET, src, &sa.sin_addr), 1);
	TF_CHECK_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	sa.sin_port = htons(t.port);
	TF_CHECK_EQ(inet_pton(AF_INET, TF_ADDR, &sa.sin_addr), 1);
	TF_CHECK_EQ(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	memset(c, 0, sizeof(*c));
	TF_CHECK_EQ(tc_attach(c, fd), 0);
	TF_CHECK_EQ(tc_ic(c, false, false), 0);
	TF_CHECK_EQ(tc_step(tc_connect(c, 0, 31, 0, AUTH_SUBNQN, TC_HOSTNQN, 0xffff, &cqe), &cqe),
		    0);
	TF_CHECK(le32toh(cqe.result) & NVMFD_CONNECT_AUTHREQ_ATR);
	return (uint16_t)(le32toh(cqe.result) & 0xffff);
}

/* The stats' auth.throttled counter. */
static uint64_t auth_throttled(void)
{
	char *buf = stats_text(), *p;
	uint64_t n = 0;

	p = strstr(buf, "\"throttled\":");
	TF_CHECK(p != NULL);
	TF_CHECK_EQ(sscanf(p, "\"throttled\":%lu", &n), 1);
	free(buf);
	return n;
}

/*
 * Failed-attempt limit (auth_fail_burst 3, no refill during the test):
 * from 127.0.0.2, three transactions with a wrong key get the usual
 * AUTH_Failure1 01h; the fourth AUTH_Negotiate is refused at once with
 * AUTH_Failure1 01h (no Challenge: no DH work), counted in auth.throttled
 * and not as one more failure; even the right key is refused from there,
 * on a new connection too. The same host NQN from 127.0.0.1 (the fresh
 * session after every case) is not limited.
 */
static void case_throttle(void)
{
	struct auth_opts o = { .key = &g_bad, .ckey = &g_ckey, .round = -1 };
	uint64_t ok0, failed0, to0, ok, failed, to;
	struct tc_conn c, c2;
	uint8_t buf[80], rce;

	auth_stats(&ok0, &failed0, &to0);
	TF_CHECK_EQ(auth_throttled(), 0);
	open_admin_from(&c, "127.0.0.2");
	for (int i = 0; i < 3; i++) {
		rce = 0;
		o.tid = (uint16_t)(10 + i);
		TF_CHECK_EQ(host_auth(&c, AUTH_SUBNQN, &o, &rce), -EACCES);
		TF_CHECK_EQ(rce, NVMFD_AUTH_RCE_FAILED);
	}
	auth_stats(&ok, &failed, &to);
	TF_CHECK_EQ(failed, failed0 + 3);
	TF_CHECK_EQ(auth_throttled(), 0);
	/* the fourth: refused before a Challenge */
	TF_CHECK_EQ(send_msg(&c, buf, negotiate(buf, 20, g_sha256, 1, g_null, 1)), 0);
	expect_failure1(&c, 20, NVMFD_AUTH_RCE_FAILED);
	TF_CHECK_EQ(auth_throttled(), 1);
	/* the right key, from the same address: refused too */
	o.key = NULL;
	o.tid = 21;
	rce = 0;
	TF_CHECK_EQ(host_auth(&c, AUTH_SUBNQN, &o, &rce), -EACCES);
	TF_CHECK_EQ(rce, NVMFD_AUTH_RCE_FAILED);
	TF_CHECK_EQ(auth_throttled(), 2);
	TF_CHECK(probe(&c) != 0); /* still not authenticated */
	open_admin_from(&c2, "127.0.0.2");
	o.tid = 22;
	TF_CHECK_EQ(host_auth(&c2, AUTH_SUBNQN, &o, &rce), -EACCES);
	TF_CHECK_EQ(auth_throttled(), 3);
	auth_stats(&ok, &failed, &to);
	TF_CHECK_EQ(failed, failed0 + 3);
	TF_CHECK_EQ(ok, ok0);
	tc_close(&c2);
	tc_close(&c);
}

struct hcase {
	const char *name;
	void (*fn)(void);
	uint32_t auth_timeout_ms;
	bool no_failure; /* refused by NVMe status only: no failed transaction */
};

static const struct hcase cases[] = {
	{ "truncated_negotiate", case_truncated_negotiate, 0, false },
	{ "garbage", case_garbage, 0, false },
	{ "truncated_reply", case_truncated_reply, 0, false },
	{ "bad_success2", case_bad_success2, 0, false },
	{ "replay", case_replay, 0, false },
	{ "wrong_hashid", case_wrong_hashid, 0, false },
	{ "bad_dhgroup", case_bad_dhgroup, 0, false },
	{ "negotiate_authenticated", case_negotiate_authenticated, 0, false },
	{ "recv_before_send", case_recv_before_send, 0, true },
	{ "deadline", case_deadline, 1000, true },
	{ "throttle", case_throttle, 0, false },
	{ "slots_until_authenticated", case_slots_until_authenticated, 0, true },
	{ "no_resources", case_no_resources, 0, true },
};

int main(int argc, char **argv)
{
	const struct hcase *hc = NULL;
	struct auth_opts bo = { .ckey = &g_ckey, .tid = 3, .round = -1 };
	struct tc_conn bystander;
	uint64_t ok0, failed0, to0, ok, failed, to;
	uint8_t rce;
	int fds;

	for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name))
			hc = &cases[i];
	if (!hc) {
		fprintf(stderr, "usage: %s CASE\ncases:", argv[0]);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			fprintf(stderr, " %s", cases[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	make_key(&g_hkey, 1, 32, 1);
	make_key(&g_ckey, 2, 48, 77);
	make_key(&g_bad, 1, 32, 2);
	if (hc->auth_timeout_ms)
		g_auth_timeout_ms = hc->auth_timeout_ms;
	if (!strcmp(hc->name, "throttle"))
		g_fail_burst = 3;
	if (tf_start(&t, tweak))
		return 1;
	/* warm up once so lazily created runtime state is in the baseline;
	 * its teardown is asynchronous: its sockets must not be counted (a
	 * loaded machine once left them open past a fixed 100 ms) */
	TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, 1), 0);
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	fds = tc_count_fds();
	open_admin(&bystander);
	TF_CHECK_EQ(host_auth(&bystander, AUTH_SUBNQN, &bo, &rce), 0);
	enable(&bystander);
	auth_stats(&ok0, &failed0, &to0);
	TF_CHECK_EQ(ok0, 1);

	open_admin(&g_att);
	hc->fn();
	tc_close(&g_att);

	/* only the attacked connection was affected */
	TF_CHECK_EQ(identify(&bystander), 0);
	verify_auth_io(0xa5a5u);
	TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, 0x5a5au), 0);
	auth_stats(&ok, &failed, &to);
	TF_CHECK(ok >= ok0 + 2);
	TF_CHECK(hc->no_failure ? failed == failed0 : failed > failed0);
	TF_CHECK_EQ(to, strcmp(hc->name, "deadline") ? 0 : 2);
	tc_close(&bystander);
	/* teardown is asynchronous: once the target counts no controller and
	 * no queue (a queue is counted until every fd of it is closed), the
	 * fds are exactly the baseline's */
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	TF_CHECK_EQ(tc_count_fds(), fds);
	tf_stop(&t);
	printf("auth-hostile %s: ok (auth ok %lu, failed %lu, timeouts %lu)\n", hc->name, ok, failed,
	       to);
	return 0;
}
