// SPDX-License-Identifier: MIT
/*
 * msg.c - codec of the authentication messages (NVMe Base 2.0 §5.21.2:
 * AUTH_Negotiate, DH-HMAC-CHAP_Challenge, _Reply, _Success1, _Success2,
 * AUTH_Failure1/2). Pure: bytes in, views out; no allocation.
 */
#include <errno.h>
#include <string.h>

#include "auth/auth_int.h"

int nvmfd__auth_msg_kind(const uint8_t *buf, size_t len, uint16_t *tid)
{
	struct nvmfd_auth_hdr h;

	if (!buf || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (tid)
		*tid = h.t_id;
	return AUTH_KIND(h.auth_type, h.auth_id);
}

int nvmfd__auth_build_negotiate(uint8_t *buf, size_t cap, const struct auth_negotiate_v *v)
{
	struct nvmfd_auth_negotiate n;
	struct nvmfd_auth_dhchap_desc d;
	size_t len = sizeof(n) + sizeof(d);

	if (cap < len)
		return -ENOSPC;
	if (v->nhash > NVMFD_AUTH_IDLIST_MAX || v->ndh > NVMFD_AUTH_IDLIST_MAX)
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	n.auth_type = NVMFD_AUTH_TYPE_COMMON;
	n.auth_id = NVMFD_AUTH_ID_NEGOTIATE;
	n.t_id = v->tid;
	n.sc_c = v->scc;
	n.napd = 1;
	memset(&d, 0, sizeof(d));
	d.authid = NVMFD_AUTH_PROTO_DHCHAP;
	d.halen = v->nhash;
	d.dhlen = v->ndh;
	memcpy(d.idlist, v->hashes, v->nhash);
	memcpy(d.idlist + NVMFD_AUTH_IDLIST_DH, v->dhgroups, v->ndh);
	memcpy(buf, &n, sizeof(n));
	memcpy(buf + sizeof(n), &d, sizeof(d));
	return (int)len;
}

int nvmfd__auth_parse_negotiate(const uint8_t *buf, size_t len, struct auth_negotiate_v *v)
{
	struct nvmfd_auth_negotiate n;
	bool found = false;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(n))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&n, buf, sizeof(n));
	v->tid = n.t_id;
	v->scc = n.sc_c;
	if (n.napd == 0 || len < sizeof(n) + (size_t)n.napd * sizeof(struct nvmfd_auth_dhchap_desc))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	for (unsigned int i = 0; i < n.napd; i++) {
		struct nvmfd_auth_dhchap_desc d;

		memcpy(&d, buf + sizeof(n) + i * sizeof(d), sizeof(d));
		if (d.authid != NVMFD_AUTH_PROTO_DHCHAP)
			continue;
		if (found)
			return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD; /* two DH-HMAC-CHAP descriptors */
		if (d.halen > NVMFD_AUTH_IDLIST_MAX || d.dhlen > NVMFD_AUTH_IDLIST_MAX)
			return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
		v->nhash = d.halen;
		v->ndh = d.dhlen;
		memcpy(v->hashes, d.idlist, d.halen);
		memcpy(v->dhgroups, d.idlist + NVMFD_AUTH_IDLIST_DH, d.dhlen);
		found = true;
	}
	return found ? 0 : NVMFD_AUTH_RCE_PROTO_UNUSABLE;
}

int nvmfd__auth_build_challenge(uint8_t *buf, size_t cap, const struct auth_challenge_v *v)
{
	struct nvmfd_auth_challenge c;
	size_t len = sizeof(c) + v->hl + v->dhvlen;

	if (cap < len)
		return -ENOSPC;
	memset(&c, 0, sizeof(c));
	c.auth_type = NVMFD_AUTH_TYPE_DHCHAP;
	c.auth_id = NVMFD_AUTH_ID_CHALLENGE;
	c.t_id = v->tid;
	c.hl = v->hl;
	c.hashid = v->hashid;
	c.dhgid = v->dhgid;
	c.dhvlen = v->dhvlen;
	c.seqnum = v->seqnum;
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), v->cval, v->hl);
	if (v->dhvlen)
		memcpy(buf + sizeof(c) + v->hl, v->dhv, v->dhvlen);
	return (int)len;
}

int nvmfd__auth_parse_challenge(const uint8_t *buf, size_t len, struct auth_challenge_v *v)
{
	struct nvmfd_auth_challenge c;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(c))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&c, buf, sizeof(c));
	v->tid = c.t_id;
	v->hashid = c.hashid;
	v->dhgid = c.dhgid;
	v->hl = c.hl;
	v->dhvlen = c.dhvlen;
	v->seqnum = c.seqnum;
	if (c.hl == 0 || len < sizeof(c) + c.hl + (size_t)c.dhvlen)
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	v->cval = buf + sizeof(c);
	v->dhv = c.dhvlen ? buf + sizeof(c) + c.hl : NULL;
	return 0;
}

int nvmfd__auth_build_reply(uint8_t *buf, size_t cap, const struct auth_reply_v *v)
{
	struct nvmfd_auth_reply r;
	size_t len = sizeof(r) + 2 * (size_t)v->hl + v->dhvlen;

	if (cap < len)
		return -ENOSPC;
	memset(&r, 0, sizeof(r));
	r.auth_type = NVMFD_AUTH_TYPE_DHCHAP;
	r.auth_id = NVMFD_AUTH_ID_REPLY;
	r.t_id = v->tid;
	r.hl = v->hl;
	r.cvalid = v->cvalid ? NVMFD_AUTH_REPLY_CVALID : 0;
	r.dhvlen = v->dhvlen;
	r.seqnum = v->cvalid ? v->seqnum : 0;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), v->rval, v->hl);
	/* The C2 field is there even when not valid (then zero). */
	if (v->cvalid)
		memcpy(buf + sizeof(r) + v->hl, v->c2, v->hl);
	else
		memset(buf + sizeof(r) + v->hl, 0, v->hl);
	if (v->dhvlen)
		memcpy(buf + sizeof(r) + 2 * (size_t)v->hl, v->dhv, v->dhvlen);
	return (int)len;
}

int nvmfd__auth_parse_reply(const uint8_t *buf, size_t len, struct auth_reply_v *v)
{
	struct nvmfd_auth_reply r;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(r))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&r, buf, sizeof(r));
	v->tid = r.t_id;
	v->hl = r.hl;
	v->cvalid = r.cvalid & NVMFD_AUTH_REPLY_CVALID;
	v->dhvlen = r.dhvlen;
	v->seqnum = r.seqnum;
	if (r.hl == 0 || len < sizeof(r) + 2 * (size_t)r.hl + r.dhvlen)
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	v->rval = buf + sizeof(r);
	v->c2 = buf + sizeof(r) + r.hl;
	v->dhv = r.dhvlen ? buf + sizeof(r) + 2 * (size_t)r.hl : NULL;
	return 0;
}

int nvmfd__auth_build_success1(uint8_t *buf, size_t cap, const struct auth_success1_v *v)
{
	struct nvmfd_auth_success1 s;
	size_t len = sizeof(s) + (v->rvalid ? v->hl : 0);

	if (cap < len)
		return -ENOSPC;
	memset(&s, 0, sizeof(s));
	s.auth_type = NVMFD_AUTH_TYPE_DHCHAP;
	s.auth_id = NVMFD_AUTH_ID_SUCCESS1;
	s.t_id = v->tid;
	s.hl = v->hl;
	s.rvalid = v->rvalid ? NVMFD_AUTH_SUCCESS1_RVALID : 0;
	memcpy(buf, &s, sizeof(s));
	if (v->rvalid)
		memcpy(buf + sizeof(s), v->rval, v->hl);
	return (int)len;
}

int nvmfd__auth_parse_success1(const uint8_t *buf, size_t len, struct auth_success1_v *v)
{
	struct nvmfd_auth_success1 s;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(s))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&s, buf, sizeof(s));
	v->tid = s.t_id;
	v->hl = s.hl;
	v->rvalid = s.rvalid & NVMFD_AUTH_SUCCESS1_RVALID;
	if (v->rvalid) {
		if (s.hl == 0 || len < sizeof(s) + s.hl)
			return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
		v->rval = buf + sizeof(s);
	}
	return 0;
}

int nvmfd__auth_build_success2(uint8_t *buf, size_t cap, uint16_t tid)
{
	struct nvmfd_auth_success2 s;

	if (cap < sizeof(s))
		return -ENOSPC;
	memset(&s, 0, sizeof(s));
	s.auth_type = NVMFD_AUTH_TYPE_DHCHAP;
	s.auth_id = NVMFD_AUTH_ID_SUCCESS2;
	s.t_id = tid;
	memcpy(buf, &s, sizeof(s));
	return (int)sizeof(s);
}

int nvmfd__auth_parse_success2(const uint8_t *buf, size_t len, uint16_t *tid)
{
	struct nvmfd_auth_success2 s;

	if (len < sizeof(s))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&s, buf, sizeof(s));
	*tid = s.t_id;
	return 0;
}

int nvmfd__auth_build_failure(uint8_t *buf, size_t cap, uint8_t id, uint16_t tid, uint8_t rce)
{
	struct nvmfd_auth_failure f;

	if (cap < sizeof(f))
		return -ENOSPC;
	memset(&f, 0, sizeof(f));
	f.auth_type = NVMFD_AUTH_TYPE_COMMON;
	f.auth_id = id;
	f.t_id = tid;
	f.rescode = NVMFD_AUTH_RC_FAILED;
	f.rescode_exp = rce;
	memcpy(buf, &f, sizeof(f));
	return (int)sizeof(f);
}

int nvmfd__auth_parse_failure(const uint8_t *buf, size_t len, struct auth_failure_v *v)
{
	struct nvmfd_auth_failure f;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(f))
		return NVMFD_AUTH_RCE_INCORRECT_PAYLOAD;
	memcpy(&f, buf, sizeof(f));
	v->tid = f.t_id;
	v->rescode = f.rescode;
	v->rce = f.rescode_exp;
	return 0;
}
