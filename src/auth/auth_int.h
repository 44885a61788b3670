/* SPDX-License-Identifier: MIT */
/*
 * auth_int.h - the pure codec of the authentication messages (msg.c), used
 * by the state machines (exchange.c) and the unit tests.
 *
 * Parsers take the payload of an Authentication Send / Receive, check every
 * length against the buffer and return 0 or the AUTH_Failure reason code
 * explanation (NVMFD_AUTH_RCE_*) that a receiver answers with. Pointers in
 * the parsed views point into the caller's buffer. Builders return the
 * message length or -ENOSPC.
 */
#ifndef NVMFD_AUTH_INT_H
#define NVMFD_AUTH_INT_H

#include "internal/auth.h"

/* (auth_type << 8) | auth_id of a message, -EINVAL when shorter than a header. */
#define AUTH_KIND(type, id) (((type) << 8) | (id))
#define AUTH_KIND_NEGOTIATE AUTH_KIND(NVMFD_AUTH_TYPE_COMMON, NVMFD_AUTH_ID_NEGOTIATE)
#define AUTH_KIND_FAILURE1 AUTH_KIND(NVMFD_AUTH_TYPE_COMMON, NVMFD_AUTH_ID_FAILURE1)
#define AUTH_KIND_FAILURE2 AUTH_KIND(NVMFD_AUTH_TYPE_COMMON, NVMFD_AUTH_ID_FAILURE2)
#define AUTH_KIND_CHALLENGE AUTH_KIND(NVMFD_AUTH_TYPE_DHCHAP, NVMFD_AUTH_ID_CHALLENGE)
#define AUTH_KIND_REPLY AUTH_KIND(NVMFD_AUTH_TYPE_DHCHAP, NVMFD_AUTH_ID_REPLY)
#define AUTH_KIND_SUCCESS1 AUTH_KIND(NVMFD_AUTH_TYPE_DHCHAP, NVMFD_AUTH_ID_SUCCESS1)
#define AUTH_KIND_SUCCESS2 AUTH_KIND(NVMFD_AUTH_TYPE_DHCHAP, NVMFD_AUTH_ID_SUCCESS2)

int nvmfd__auth_msg_kind(const uint8_t *buf, size_t len, uint16_t *tid);

/* AUTH_Negotiate, reduced to its DH-HMAC-CHAP descriptor. */
struct auth_negotiate_v {
	uint16_t tid;
	uint8_t scc;
	uint8_t nhash;
	uint8_t hashes[NVMFD_AUTH_IDLIST_MAX];
	uint8_t ndh;
	uint8_t dhgroups[NVMFD_AUTH_IDLIST_MAX];
};

struct auth_challenge_v {
	uint16_t tid;
	uint8_t hashid;
	uint8_t dhgid;
	uint8_t hl;
	uint16_t dhvlen;
	uint32_t seqnum;
	const uint8_t *cval; /* hl bytes */
	const uint8_t *dhv; /* dhvlen bytes */
};

struct auth_reply_v {
	uint16_t tid;
	uint8_t hl;
	bool cvalid;
	uint16_t dhvlen;
	uint32_t seqnum;
	const uint8_t *rval; /* hl bytes R1 */
	const uint8_t *c2; /* hl bytes */
	const uint8_t *dhv;
};

struct auth_success1_v {
	uint16_t tid;
	uint8_t hl;
	bool rvalid;
	const uint8_t *rval; /* hl bytes when rvalid */
};

struct auth_failure_v {
	uint16_t tid;
	uint8_t rescode;
	uint8_t rce;
};

int nvmfd__auth_build_negotiate(uint8_t *buf, size_t cap, const struct auth_negotiate_v *v);
int nvmfd__auth_parse_negotiate(const uint8_t *buf, size_t len, struct auth_negotiate_v *v);
int nvmfd__auth_build_challenge(uint8_t *buf, size_t cap, const struct auth_challenge_v *v);
int nvmfd__auth_parse_challenge(const uint8_t *buf, size_t len, struct auth_challenge_v *v);
int nvmfd__auth_build_reply(uint8_t *buf, size_t cap, const struct auth_reply_v *v);
int nvmfd__auth_parse_reply(const uint8_t *buf, size_t len, struct auth_reply_v *v);
int nvmfd__auth_build_success1(uint8_t *buf, size_t cap, const struct auth_success1_v *v);
int nvmfd__auth_parse_success1(const uint8_t *buf, size_t len, struct auth_success1_v *v);
int nvmfd__auth_build_success2(uint8_t *buf, size_t cap, uint16_t tid);
int nvmfd__auth_parse_success2(const uint8_t *buf, size_t len, uint16_t *tid);
/* @id: NVMFD_AUTH_ID_FAILURE1 or _FAILURE2. */
int nvmfd__auth_build_failure(uint8_t *buf, size_t cap, uint8_t id, uint16_t tid, uint8_t rce);
int nvmfd__auth_parse_failure(const uint8_t *buf, size_t len, struct auth_failure_v *v);

#endif /* NVMFD_AUTH_INT_H */
