// SPDX-License-Identifier: MIT
/*
 * exchange.c - the DH-HMAC-CHAP transaction (NVMe Base 2.0 §8.13.5) as two
 * state machines, one per role, fed with message payloads:
 *
 *   host                                   controller
 *   AUTH_Negotiate        --Auth Send-->   (pick hash, DH group)
 *                         <--Auth Recv--   DH-HMAC-CHAP_Challenge (C1, S1, g^y)
 *   _Reply (R1, C2, S2, g^x) --Auth Send-->  check R1
 *                         <--Auth Recv--   _Success1 (R2 if C2 was valid) | AUTH_Failure1
 *   check R2, _Success2 | AUTH_Failure2 --Auth Send-->   (bidirectional only)
 *
 * With a DH group, both challenges are augmented with the session key
 * g^xy mod p before the responses are computed. Secure channel
 * concatenation (SC_C != 0) is not supported: a Negotiate asking for it
 * gets AUTH_Failure1 "concatenation mismatch".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "auth/auth_int.h"

static const uint8_t default_hashes[] = { NVMFD_AUTH_HASH_SHA256, NVMFD_AUTH_HASH_SHA384,
					  NVMFD_AUTH_HASH_SHA512, 0 };
/* Strongest group first; null last (it adds no forward secrecy). */
static const uint8_t default_dhgroups[] = {
	NVMFD_AUTH_DHGROUP_8192, NVMFD_AUTH_DHGROUP_6144, NVMFD_AUTH_DHGROUP_4096,
	NVMFD_AUTH_DHGROUP_3072, NVMFD_AUTH_DHGROUP_2048, 0xff /* null, see pref_list() */
};

static void set_why(struct nvmfd_auth_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_why(struct nvmfd_auth_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static int random_bytes(uint8_t *buf, size_t len)
{
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

static int random_seqnum(uint32_t *s)
{
	do {
		if (random_bytes((uint8_t *)s, sizeof(*s)) < 0)
			return -EIO;
	} while (*s == 0);
	return 0;
}

static bool copy_nqn(char *dst, const char *src)
{
	size_t n;

	if (!src)
		return false;
	n = strlen(src);
	if (n == 0 || n >= NVMFD_NQN_SIZE)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

static bool key_ok(const struct nvmfd_auth_key *k)
{
	return k && (k->len == 32 || k->len == 48 || k->len == 64) &&
	       k->hash <= NVMFD_AUTH_HASH_SHA512;
}

/*
 * The session key and the challenge the responses are computed over: the
 * challenge itself for DH null, else HMAC(H(g^xy mod p), C).
 */
static int effective_challenge(uint8_t hashid, const uint8_t *skey, size_t sklen,
			       const uint8_t *chal, uint8_t *out)
{
	if (!sklen) {
		memcpy(out, chal, nvmfd_auth_hash_len(hashid));
		return 0;
	}
	return nvmfd_auth_augment_challenge(hashid, skey, sklen, chal, out);
}

/*
 * Record a local failure in @r and build the AUTH_Failure (@id: Failure1 from
 * the controller, Failure2 from the host) that tells the peer.
 */
static int build_fail(struct nvmfd_auth_result *r, uint8_t id, uint16_t tid, uint8_t rce,
		      uint8_t *out, size_t cap, size_t *outlen)
{
	int n;

	r->rescode = NVMFD_AUTH_RC_FAILED;
	r->rescode_exp = rce;
	r->failure_from_peer = false;
	if (!r->why[0])
		set_why(r, "%s", nvmfd_auth_rce_str(rce));
	n = nvmfd__auth_build_failure(out, cap, id, tid, rce);
	if (n < 0)
		return n;
	*outlen = (size_t)n;
	return NVMFD_AUTH_NEXT_SEND_FAIL;
}

/* ===================================================================== */
/* Host                                                                   */
/* ===================================================================== */

enum host_state {
	HOST_INIT, /* nothing sent */
	HOST_NEGOTIATE_SENT, /* waiting for the Challenge */
	HOST_REPLY_SENT, /* waiting for Success1 */
	HOST_DONE, /* authenticated (and the controller, if asked) */
	HOST_FAILED,
};

struct nvmfd_auth_host {
	enum host_state state;
	struct nvmfd_auth_key key;
	struct nvmfd_auth_key ctrl_key;
	bool bidi;
	char hostnqn[NVMFD_NQN_SIZE];
	char subnqn[NVMFD_NQN_SIZE];
	uint16_t tid;
	uint8_t hashes;
	uint8_t dhgroups;
	/* Negotiated / exchanged. */
	uint8_t hashid;
	uint8_t dhgid;
	uint32_t s2;
	uint8_t c2[NVMFD_AUTH_MAX_HASH_LEN];
	uint8_t skey[NVMFD_AUTH_MAX_DH_LEN];
	size_t sklen;
	struct nvmfd_auth_result res;
};

int nvmfd_auth_host_new(const struct nvmfd_auth_host_cfg *cfg, struct nvmfd_auth_host **out)
{
	struct nvmfd_auth_host *h;

	if (!cfg || !out || !key_ok(cfg->key) || (cfg->ctrl_key && !key_ok(cfg->ctrl_key)))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (!copy_nqn(h->hostnqn, cfg->hostnqn) || !copy_nqn(h->subnqn, cfg->subnqn)) {
		free(h);
		return -EINVAL;
	}
	h->key = *cfg->key;
	if (cfg->ctrl_key) {
		h->ctrl_key = *cfg->ctrl_key;
		h->bidi = true;
	}
	h->tid = cfg->tid;
	h->hashes = cfg->hashes ? cfg->hashes & NVMFD_AUTH_HASHES_ALL : NVMFD_AUTH_HASHES_ALL;
	h->dhgroups = cfg->dhgroups ? cfg->dhgroups & NVMFD_AUTH_DHGROUPS_ALL :
				      NVMFD_AUTH_DHGROUPS_ALL;
	if (!h->hashes || !h->dhgroups) {
		free(h);
		return -EINVAL;
	}
	*out = h;
	return 0;
}

void nvmfd_auth_host_free(struct nvmfd_auth_host *h)
{
	if (!h)
		return;
	nvmfd_auth_wipe(h, sizeof(*h));
	free(h);
}

const struct nvmfd_auth_result *nvmfd_auth_host_result(const struct nvmfd_auth_host *h)
{
	return &h->res;
}

int nvmfd_auth_host_start(struct nvmfd_auth_host *h, uint8_t *out, size_t cap)
{
	struct auth_negotiate_v v;
	int n;

	if (!h || !out || h->state != HOST_INIT)
		return -EINVAL;
	memset(&v, 0, sizeof(v));
	v.tid = h->tid;
	v.scc = NVMFD_AUTH_SCC_NONE;
	for (uint8_t i = 1; i <= NVMFD_AUTH_HASH_SHA512; i++)
		if (h->hashes & (1u << i))
			v.hashes[v.nhash++] = i;
	for (uint8_t i = 0; i <= NVMFD_AUTH_DHGROUP_8192; i++)
		if (h->dhgroups & (1u << i))
			v.dhgroups[v.ndh++] = i;
	n = nvmfd__auth_build_negotiate(out, cap, &v);
	if (n > 0)
		h->state = HOST_NEGOTIATE_SENT;
	return n;
}

/* Fail with an AUTH_Failure2 in @out. */
static int host_fail(struct nvmfd_auth_host *h, uint8_t rce, uint8_t *out, size_t cap,
		     size_t *outlen)
{
	h->state = HOST_FAILED;
	return build_fail(&h->res, NVMFD_AUTH_ID_FAILURE2, h->tid, rce, out, cap, outlen);
}

static int host_on_challenge(struct nvmfd_auth_host *h, const uint8_t *in, size_t inlen,
			     uint8_t *out, size_t cap, size_t *outlen)
{
	uint8_t tkey[NVMFD_AUTH_MAX_KEY_LEN], c1[NVMFD_AUTH_MAX_HASH_LEN];
	uint8_t r1[NVMFD_AUTH_MAX_HASH_LEN], pub[NVMFD_AUTH_MAX_DH_LEN];
	struct nvmfd_auth_dh *dh = NULL;
	struct auth_challenge_v c;
	struct auth_reply_v r;
	size_t hl, tklen = 0;
	int ret, rce, plen = 0;

	rce = nvmfd__auth_parse_challenge(in, inlen, &c);
	if (rce)
		return host_fail(h, (uint8_t)rce, out, cap, outlen);
	hl = nvmfd_auth_hash_len(c.hashid);
	if (!hl || !(h->hashes & (1u << c.hashid))) {
		set_why(&h->res, "controller picked hash 0x%02x, which was not offered", c.hashid);
		return host_fail(h, NVMFD_AUTH_RCE_HASH_UNUSABLE, out, cap, outlen);
	}
	if (c.dhgid > NVMFD_AUTH_DHGROUP_8192 || !(h->dhgroups & (1u << c.dhgid))) {
		set_why(&h->res, "controller picked DH group 0x%02x, which was not offered",
			c.dhgid);
		return host_fail(h, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE, out, cap, outlen);
	}
	if (c.hl != hl || c.dhvlen != nvmfd_auth_dhgroup_len(c.dhgid)) {
		set_why(&h->res, "challenge lengths HL %u DHVLEN %u do not fit %s/%s", c.hl,
			c.dhvlen, nvmfd_auth_hash_name(c.hashid), nvmfd_auth_dhgroup_name(c.dhgid));
		return host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	h->hashid = c.hashid;
	h->dhgid = c.dhgid;
	h->res.hashid = c.hashid;
	h->res.dhgid = c.dhgid;
	if (c.dhgid != NVMFD_AUTH_DHGROUP_NULL) {
		ret = nvmfd_auth_dh_new(c.dhgid, &dh);
		if (ret < 0)
			return ret;
		plen = nvmfd_auth_dh_public(dh, pub, sizeof(pub));
		ret = plen < 0 ? plen : nvmfd_auth_dh_derive(dh, c.dhv, c.dhvlen, h->skey,
							     sizeof(h->skey));
		nvmfd_auth_dh_free(dh);
		if (ret == -EINVAL) {
			set_why(&h->res, "controller's DH value is not valid in %s",
				nvmfd_auth_dhgroup_name(c.dhgid));
			return host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
		}
		if (ret < 0)
			return ret;
		h->sklen = (size_t)ret;
	}
	ret = effective_challenge(h->hashid, h->skey, h->sklen, c.cval, c1);
	if (ret == 0)
		ret = nvmfd_auth_transform_key(&h->key, h->hostnqn, tkey, &tklen);
	if (ret == 0)
		ret = nvmfd_auth_host_response(h->hashid, tkey, tklen, c1, c.seqnum, h->tid,
					       NVMFD_AUTH_SCC_NONE, h->hostnqn, h->subnqn, r1);
	nvmfd_auth_wipe(tkey, sizeof(tkey));
	if (ret < 0)
		return ret;
	memset(&r, 0, sizeof(r));
	r.tid = h->tid;
	r.hl = (uint8_t)hl;
	r.rval = r1;
	r.dhvlen = (uint16_t)(plen > 0 ? plen : 0);
	r.dhv = pub;
	if (h->bidi) {
		ret = random_bytes(h->c2, hl);
		if (ret == 0)
			ret = random_seqnum(&h->s2);
		if (ret < 0)
			return ret;
		r.cvalid = true;
		r.c2 = h->c2;
		r.seqnum = h->s2;
	}
	ret = nvmfd__auth_build_reply(out, cap, &r);
	if (ret < 0)
		return ret;
	*outlen = (size_t)ret;
	h->state = HOST_REPLY_SENT;
	return NVMFD_AUTH_NEXT_SEND_RECV;
}

static int host_on_success1(struct nvmfd_auth_host *h, const uint8_t *in, size_t inlen,
			    uint8_t *out, size_t cap, size_t *outlen)
{
	uint8_t tkey[NVMFD_AUTH_MAX_KEY_LEN], c2[NVMFD_AUTH_MAX_HASH_LEN];
	uint8_t r2[NVMFD_AUTH_MAX_HASH_LEN];
	size_t hl = nvmfd_auth_hash_len(h->hashid), tklen = 0;
	struct auth_success1_v s;
	int ret, rce;

	rce = nvmfd__auth_parse_success1(in, inlen, &s);
	if (rce)
		return host_fail(h, (uint8_t)rce, out, cap, outlen);
	if (s.hl != hl) {
		set_why(&h->res, "Success1 HL %u, expected %zu", s.hl, hl);
		return host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (!h->bidi) {
		h->state = HOST_DONE;
		*outlen = 0;
		return NVMFD_AUTH_NEXT_DONE;
	}
	if (!s.rvalid) {
		set_why(&h->res, "controller did not answer the controller challenge");
		return host_fail(h, NVMFD_AUTH_RCE_FAILED, out, cap, outlen);
	}
	ret = effective_challenge(h->hashid, h->skey, h->sklen, h->c2, c2);
	if (ret == 0)
		ret = nvmfd_auth_transform_key(&h->ctrl_key, h->subnqn, tkey, &tklen);
	if (ret == 0)
		ret = nvmfd_auth_ctrl_response(h->hashid, tkey, tklen, c2, h->s2, h->tid,
					       NVMFD_AUTH_SCC_NONE, h->subnqn, h->hostnqn, r2);
	nvmfd_auth_wipe(tkey, sizeof(tkey));
	if (ret < 0)
		return ret;
	if (CRYPTO_memcmp(r2, s.rval, hl)) {
		set_why(&h->res, "controller response does not match the controller key");
		return host_fail(h, NVMFD_AUTH_RCE_FAILED, out, cap, outlen);
	}
	ret = nvmfd__auth_build_success2(out, cap, h->tid);
	if (ret < 0)
		return ret;
	*outlen = (size_t)ret;
	h->state = HOST_DONE;
	h->res.bidirectional = true;
	return NVMFD_AUTH_NEXT_SEND_DONE;
}

int nvmfd_auth_host_step(struct nvmfd_auth_host *h, const uint8_t *in, size_t inlen,
			 uint8_t *out, size_t cap, size_t *outlen)
{
	uint16_t tid = 0;
	int kind, ret;

	if (!h || (!in && inlen) || !out || !outlen)
		return -EINVAL;
	*outlen = 0;
	if (h->state == HOST_FAILED || h->state == HOST_DONE || h->state == HOST_INIT)
		return -EPROTO;
	kind = nvmfd__auth_msg_kind(in, inlen, &tid);
	if (kind < 0) {
		set_why(&h->res, "%zu-byte message is shorter than a header", inlen);
		return host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (kind == AUTH_KIND_FAILURE1) {
		struct auth_failure_v f;

		h->state = HOST_FAILED;
		if (nvmfd__auth_parse_failure(in, inlen, &f)) {
			set_why(&h->res, "truncated AUTH_Failure1");
			return -EACCES;
		}
		h->res.rescode = f.rescode;
		h->res.rescode_exp = f.rce;
		h->res.failure_from_peer = true;
		set_why(&h->res, "controller sent AUTH_Failure1: %s (reason 0x%02x/0x%02x)",
			nvmfd_auth_rce_str(f.rce), f.rescode, f.rce);
		return -EACCES;
	}
	if (tid != h->tid) {
		set_why(&h->res, "message for transaction %u, ours is %u", tid, h->tid);
		return host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (h->state == HOST_NEGOTIATE_SENT && kind == AUTH_KIND_CHALLENGE)
		ret = host_on_challenge(h, in, inlen, out, cap, outlen);
	else if (h->state == HOST_REPLY_SENT && kind == AUTH_KIND_SUCCESS1)
		ret = host_on_success1(h, in, inlen, out, cap, outlen);
	else {
		set_why(&h->res, "unexpected message type 0x%02x id 0x%02x", kind >> 8,
			kind & 0xff);
		ret = host_fail(h, NVMFD_AUTH_RCE_INCORRECT_PROTOCOL, out, cap, outlen);
	}
	if (ret < 0 && h->state != HOST_FAILED) {
		h->state = HOST_FAILED;
		if (!h->res.why[0])
			set_why(&h->res, "local error: %s", strerror(-ret));
	}
	return ret;
}

/* ===================================================================== */
/* Controller                                                             */
/* ===================================================================== */

enum ctrl_state {
	CTRL_WAIT_NEGOTIATE, /* fresh, or ready for a new transaction */
	CTRL_CHALLENGE_SENT, /* waiting for the Reply */
	CTRL_SUCCESS1_SENT, /* bidirectional: waiting for Success2 */
	CTRL_DONE, /* host authenticated; a Negotiate starts re-authentication */
	CTRL_FAILED, /* a Negotiate starts over */
};

struct nvmfd_auth_ctrl {
	enum ctrl_state state;
	bool authenticated;
	struct nvmfd_auth_key host_key;
	struct nvmfd_auth_key ctrl_key;
	bool have_ctrl_key;
	char hostnqn[NVMFD_NQN_SIZE];
	char subnqn[NVMFD_NQN_SIZE];
	uint8_t hashes[NVMFD_AUTH_IDLIST_MAX + 1]; /* preference, 0-terminated */
	uint8_t dhgroups[NVMFD_AUTH_IDLIST_MAX + 1]; /* 0xff-free, see pref_list() */
	uint8_t ndh;
	/* Transaction. */
	uint16_t tid;
	uint8_t hashid;
	uint8_t dhgid;
	uint32_t s1;
	uint8_t c1[NVMFD_AUTH_MAX_HASH_LEN];
	struct nvmfd_auth_dh *dh;
	struct nvmfd_auth_result res;
};

int nvmfd_auth_ctrl_new(const struct nvmfd_auth_ctrl_cfg *cfg, struct nvmfd_auth_ctrl **out)
{
	struct nvmfd_auth_ctrl *c;
	size_t n = 0;

	if (!cfg || !out || !key_ok(cfg->host_key) || (cfg->ctrl_key && !key_ok(cfg->ctrl_key)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (!copy_nqn(c->hostnqn, cfg->hostnqn) || !copy_nqn(c->subnqn, cfg->subnqn))
		goto err_inval;
	c->host_key = *cfg->host_key;
	if (cfg->ctrl_key) {
		c->ctrl_key = *cfg->ctrl_key;
		c->have_ctrl_key = true;
	}
	for (const uint8_t *p = cfg->hashes ? cfg->hashes : default_hashes; *p; p++) {
		if (n == NVMFD_AUTH_IDLIST_MAX || !nvmfd_auth_hash_len(*p))
			goto err_inval;
		c->hashes[n++] = *p;
	}
	if (n == 0)
		goto err_inval;
	/* The group list is 0-terminated too, but 0 is DH null: a caller's
	 * list uses 0xff for null; ours is stored with null as itself and an
	 * explicit count. */
	if (cfg->dhgroups) {
		for (const uint8_t *p = cfg->dhgroups; *p; p++) {
			uint8_t g = *p == 0xff ? NVMFD_AUTH_DHGROUP_NULL : *p;

			if (c->ndh == NVMFD_AUTH_IDLIST_MAX || g > NVMFD_AUTH_DHGROUP_8192)
				goto err_inval;
			c->dhgroups[c->ndh++] = g;
		}
	} else {
		for (size_t i = 0; i < sizeof(default_dhgroups); i++)
			c->dhgroups[c->ndh++] = default_dhgroups[i] == 0xff ?
							NVMFD_AUTH_DHGROUP_NULL :
							default_dhgroups[i];
	}
	if (c->ndh == 0)
		goto err_inval;
	*out = c;
	return 0;

err_inval:
	free(c);
	return -EINVAL;
}

void nvmfd_auth_ctrl_free(struct nvmfd_auth_ctrl *c)
{
	if (!c)
		return;
	nvmfd_auth_dh_free(c->dh);
	nvmfd_auth_wipe(c, sizeof(*c));
	free(c);
}

bool nvmfd_auth_ctrl_authenticated(const struct nvmfd_auth_ctrl *c)
{
	return c && c->authenticated;
}

const struct nvmfd_auth_result *nvmfd_auth_ctrl_result(const struct nvmfd_auth_ctrl *c)
{
	return &c->res;
}

/* Fail with an AUTH_Failure1 in @out (what the next Auth Receive returns). */
static int ctrl_fail(struct nvmfd_auth_ctrl *c, uint8_t rce, uint8_t *out, size_t cap,
		     size_t *outlen)
{
	c->state = CTRL_FAILED;
	c->authenticated = false;
	nvmfd_auth_dh_free(c->dh);
	c->dh = NULL;
	return build_fail(&c->res, NVMFD_AUTH_ID_FAILURE1, c->tid, rce, out, cap, outlen);
}

static bool in_list(const uint8_t *l, size_t n, uint8_t id)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == id)
			return true;
	return false;
}

static int ctrl_on_negotiate(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			     uint8_t *out, size_t cap, size_t *outlen)
{
	uint8_t pub[NVMFD_AUTH_MAX_DH_LEN];
	struct auth_negotiate_v n;
	struct auth_challenge_v ch;
	size_t hl;
	int rce, ret, plen = 0;

	rce = nvmfd__auth_parse_negotiate(in, inlen, &n);
	c->tid = n.tid;
	if (rce)
		return ctrl_fail(c, (uint8_t)rce, out, cap, outlen);
	if (n.scc != NVMFD_AUTH_SCC_NONE) {
		set_why(&c->res, "secure channel concatenation (SC_C %u) is not supported", n.scc);
		return ctrl_fail(c, NVMFD_AUTH_RCE_CONCAT_MISMATCH, out, cap, outlen);
	}
	c->hashid = 0;
	for (const uint8_t *p = c->hashes; *p; p++)
		if (in_list(n.hashes, n.nhash, *p)) {
			c->hashid = *p;
			break;
		}
	if (!c->hashid) {
		set_why(&c->res, "none of the host's %u hash functions is allowed", n.nhash);
		return ctrl_fail(c, NVMFD_AUTH_RCE_HASH_UNUSABLE, out, cap, outlen);
	}
	c->dhgid = 0xff;
	for (size_t i = 0; i < c->ndh; i++)
		if (in_list(n.dhgroups, n.ndh, c->dhgroups[i])) {
			c->dhgid = c->dhgroups[i];
			break;
		}
	if (c->dhgid == 0xff) {
		set_why(&c->res, "none of the host's %u DH groups is allowed", n.ndh);
		return ctrl_fail(c, NVMFD_AUTH_RCE_DHGROUP_UNUSABLE, out, cap, outlen);
	}
	c->res.hashid = c->hashid;
	c->res.dhgid = c->dhgid;
	hl = nvmfd_auth_hash_len(c->hashid);
	ret = random_bytes(c->c1, hl);
	if (ret == 0)
		ret = random_seqnum(&c->s1);
	if (ret < 0)
		return ret;
	nvmfd_auth_dh_free(c->dh);
	c->dh = NULL;
	if (c->dhgid != NVMFD_AUTH_DHGROUP_NULL) {
		ret = nvmfd_auth_dh_new(c->dhgid, &c->dh);
		if (ret < 0)
			return ret;
		plen = nvmfd_auth_dh_public(c->dh, pub, sizeof(pub));
		if (plen < 0)
			return plen;
	}
	memset(&ch, 0, sizeof(ch));
	ch.tid = c->tid;
	ch.hashid = c->hashid;
	ch.dhgid = c->dhgid;
	ch.hl = (uint8_t)hl;
	ch.seqnum = c->s1;
	ch.cval = c->c1;
	ch.dhvlen = (uint16_t)plen;
	ch.dhv = pub;
	ret = nvmfd__auth_build_challenge(out, cap, &ch);
	if (ret < 0)
		return ret;
	*outlen = (size_t)ret;
	c->state = CTRL_CHALLENGE_SENT;
	return NVMFD_AUTH_NEXT_SEND_RECV;
}

static int ctrl_on_reply(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			 uint8_t *out, size_t cap, size_t *outlen)
{
	uint8_t skey[NVMFD_AUTH_MAX_DH_LEN], tkey[NVMFD_AUTH_MAX_KEY_LEN];
	uint8_t ch[NVMFD_AUTH_MAX_HASH_LEN], r[NVMFD_AUTH_MAX_HASH_LEN];
	size_t hl = nvmfd_auth_hash_len(c->hashid), tklen = 0, sklen = 0;
	struct auth_success1_v s;
	struct auth_reply_v rp;
	int ret, rce;

	rce = nvmfd__auth_parse_reply(in, inlen, &rp);
	if (rce)
		return ctrl_fail(c, (uint8_t)rce, out, cap, outlen);
	if (rp.hl != hl || rp.dhvlen != nvmfd_auth_dhgroup_len(c->dhgid)) {
		set_why(&c->res, "reply lengths HL %u DHVLEN %u do not fit %s/%s", rp.hl,
			rp.dhvlen, nvmfd_auth_hash_name(c->hashid), nvmfd_auth_dhgroup_name(c->dhgid));
		return ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (rp.cvalid && rp.seqnum == 0) {
		set_why(&c->res, "controller challenge with sequence number 0");
		return ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (c->dh) {
		ret = nvmfd_auth_dh_derive(c->dh, rp.dhv, rp.dhvlen, skey, sizeof(skey));
		if (ret == -EINVAL) {
			set_why(&c->res, "host's DH value is not valid in %s",
				nvmfd_auth_dhgroup_name(c->dhgid));
			return ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
		}
		if (ret < 0)
			goto out_wipe;
		sklen = (size_t)ret;
	}
	ret = effective_challenge(c->hashid, skey, sklen, c->c1, ch);
	if (ret == 0)
		ret = nvmfd_auth_transform_key(&c->host_key, c->hostnqn, tkey, &tklen);
	if (ret == 0)
		ret = nvmfd_auth_host_response(c->hashid, tkey, tklen, ch, c->s1, c->tid,
					       NVMFD_AUTH_SCC_NONE, c->hostnqn, c->subnqn, r);
	if (ret < 0)
		goto out_wipe;
	if (CRYPTO_memcmp(r, rp.rval, hl)) {
		set_why(&c->res, "host response does not match the host key");
		ret = ctrl_fail(c, NVMFD_AUTH_RCE_FAILED, out, cap, outlen);
		goto out_wipe;
	}
	memset(&s, 0, sizeof(s));
	s.tid = c->tid;
	s.hl = (uint8_t)hl;
	if (rp.cvalid) {
		if (!c->have_ctrl_key) {
			set_why(&c->res, "host asks for controller authentication, no controller key");
			ret = ctrl_fail(c, NVMFD_AUTH_RCE_FAILED, out, cap, outlen);
			goto out_wipe;
		}
		ret = effective_challenge(c->hashid, skey, sklen, rp.c2, ch);
		if (ret == 0)
			ret = nvmfd_auth_transform_key(&c->ctrl_key, c->subnqn, tkey, &tklen);
		if (ret == 0)
			ret = nvmfd_auth_ctrl_response(c->hashid, tkey, tklen, ch, rp.seqnum,
						       c->tid, NVMFD_AUTH_SCC_NONE, c->subnqn,
						       c->hostnqn, r);
		if (ret < 0)
			goto out_wipe;
		s.rvalid = true;
		s.rval = r;
	}
	ret = nvmfd__auth_build_success1(out, cap, &s);
	if (ret < 0)
		goto out_wipe;
	*outlen = (size_t)ret;
	nvmfd_auth_dh_free(c->dh);
	c->dh = NULL;
	if (rp.cvalid) {
		c->state = CTRL_SUCCESS1_SENT;
		c->res.bidirectional = true;
		ret = NVMFD_AUTH_NEXT_SEND_RECV;
	} else {
		c->state = CTRL_DONE;
		c->authenticated = true;
		ret = NVMFD_AUTH_NEXT_SEND_DONE;
	}
out_wipe:
	nvmfd_auth_wipe(skey, sizeof(skey));
	nvmfd_auth_wipe(tkey, sizeof(tkey));
	return ret;
}

bool nvmfd_auth_ctrl_idle(const struct nvmfd_auth_ctrl *c)
{
	return c->state == CTRL_WAIT_NEGOTIATE || c->state == CTRL_DONE || c->state == CTRL_FAILED;
}

int nvmfd_auth_ctrl_refuse(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			   const char *why, uint8_t *out, size_t cap, size_t *outlen)
{
	uint16_t tid = 0;

	if (!c || (!in && inlen) || !out || !outlen || !why)
		return -EINVAL;
	*outlen = 0;
	(void)nvmfd__auth_msg_kind(in, inlen, &tid);
	memset(&c->res, 0, sizeof(c->res));
	c->tid = tid;
	set_why(&c->res, "%s", why);
	return ctrl_fail(c, NVMFD_AUTH_RCE_FAILED, out, cap, outlen);
}

int nvmfd_auth_ctrl_step(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			 uint8_t *out, size_t cap, size_t *outlen)
{
	uint16_t tid = 0;
	int kind, ret;

	if (!c || (!in && inlen) || !out || !outlen)
		return -EINVAL;
	*outlen = 0;
	kind = nvmfd__auth_msg_kind(in, inlen, &tid);
	if (kind < 0) {
		set_why(&c->res, "%zu-byte message is shorter than a header", inlen);
		return ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
	}
	if (kind == AUTH_KIND_FAILURE2) {
		struct auth_failure_v f;

		c->state = CTRL_FAILED;
		c->authenticated = false;
		nvmfd_auth_dh_free(c->dh);
		c->dh = NULL;
		if (nvmfd__auth_parse_failure(in, inlen, &f) == 0) {
			c->res.rescode = f.rescode;
			c->res.rescode_exp = f.rce;
		}
		c->res.failure_from_peer = true;
		set_why(&c->res, "host sent AUTH_Failure2: %s", nvmfd_auth_rce_str(f.rce));
		return -EACCES;
	}
	if (kind == AUTH_KIND_NEGOTIATE &&
	    (c->state == CTRL_WAIT_NEGOTIATE || c->state == CTRL_DONE ||
	     c->state == CTRL_FAILED)) {
		/* A new transaction (or re-authentication): forget the last one. */
		memset(&c->res, 0, sizeof(c->res));
		c->authenticated = false;
		ret = ctrl_on_negotiate(c, in, inlen, out, cap, outlen);
		goto out;
	}
	if (tid != c->tid && c->state != CTRL_WAIT_NEGOTIATE) {
		set_why(&c->res, "message for transaction %u, ours is %u", tid, c->tid);
		ret = ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PAYLOAD, out, cap, outlen);
		goto out;
	}
	if (c->state == CTRL_CHALLENGE_SENT && kind == AUTH_KIND_REPLY) {
		ret = ctrl_on_reply(c, in, inlen, out, cap, outlen);
	} else if (c->state == CTRL_SUCCESS1_SENT && kind == AUTH_KIND_SUCCESS2) {
		ret = nvmfd__auth_parse_success2(in, inlen, &tid);
		if (ret) {
			ret = ctrl_fail(c, (uint8_t)ret, out, cap, outlen);
		} else {
			c->state = CTRL_DONE;
			c->authenticated = true;
			ret = NVMFD_AUTH_NEXT_DONE;
		}
	} else {
		set_why(&c->res, "unexpected message type 0x%02x id 0x%02x", kind >> 8,
			kind & 0xff);
		ret = ctrl_fail(c, NVMFD_AUTH_RCE_INCORRECT_PROTOCOL, out, cap, outlen);
	}
out:
	if (ret < 0 && c->state != CTRL_FAILED) {
		c->state = CTRL_FAILED;
		c->authenticated = false;
		if (!c->res.why[0])
			set_why(&c->res, "local error: %s", strerror(-ret));
	}
	return ret;
}
