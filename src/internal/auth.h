/* SPDX-License-Identifier: MIT */
/*
 * auth.h - NVMe in-band authentication (DH-HMAC-CHAP, NVMe Base 2.0 §8.13)
 * and the NVMe/TCP TLS PSK derivations (NVMe/TCP 1.1 §3.6.1, TP 8011).
 *
 * Four parts, all pure (no sockets, no threads); the cryptography is
 * OpenSSL's, only the protocol is nvmfd's:
 *   - secret representations: DH-HMAC-CHAP secrets "DHHC-1:hh:<base64>:"
 *     and TLS PSKs in the interchange format "NVMeTLSkey-1:hh:<base64>:"
 *     (key bytes followed by their CRC-32, little endian);
 *   - DH-HMAC-CHAP arithmetic: key transform, responses, ephemeral DH and
 *     the augmented challenge;
 *   - the TLS PSK chain: retained PSK, PSK digest, identities, TLS PSK;
 *   - the DH-HMAC-CHAP message exchange as two state machines, one per role
 *     (struct nvmfd_auth_host, struct nvmfd_auth_ctrl), fed with the payloads
 *     of Authentication Send / Receive. doc/auth.md describes them.
 *
 * Errors are negative errno: -EINVAL (malformed input), -ENOMEM, -EIO (an
 * OpenSSL call failed), -ENOSPC (output buffer too small), -EACCES
 * (authentication failed), -EPROTO (protocol violation by the peer).
 * Secrets live in caller memory; nvmfd_auth_wipe() clears copies.
 */
#ifndef NVMFD_INTERNAL_AUTH_H
#define NVMFD_INTERNAL_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/spec.h>

#define NVMFD_AUTH_MAX_HASH_LEN 64 /* SHA-512 */
#define NVMFD_AUTH_MAX_KEY_LEN 64
#define NVMFD_AUTH_MAX_DH_LEN 1024 /* ffdhe8192 */
/* Longest secret string: "DHHC-1:03:" + base64(68) + ":" + NUL. */
#define NVMFD_AUTH_KEY_STR_MAX 112
/* Longest message either side sends: a Reply with SHA-512 and ffdhe8192. */
#define NVMFD_AUTH_MSG_MAX (16 + 2 * NVMFD_AUTH_MAX_HASH_LEN + NVMFD_AUTH_MAX_DH_LEN)

/* ---- hashes and groups ---------------------------------------------- */

/** nvmfd_auth_hash_len() - digest bytes of HashID 1..3; 0 for others. */
size_t nvmfd_auth_hash_len(uint8_t hashid);
/** nvmfd_auth_hash_name() - "sha256", "sha384", "sha512"; NULL otherwise. */
const char *nvmfd_auth_hash_name(uint8_t hashid);
/**
 * nvmfd_auth_hash_parse() - HashID from "sha256", "hmac(sha256)" (nvmet's
 * spelling), "SHA-256" or "1"..."3" (case-insensitive).
 * Return: the HashID, or -EINVAL.
 */
int nvmfd_auth_hash_parse(const char *s);
/** nvmfd_auth_dhgroup_name() - "null", "ffdhe2048" ... "ffdhe8192"; NULL otherwise. */
const char *nvmfd_auth_dhgroup_name(uint8_t dhgid);
/** nvmfd_auth_dhgroup_parse() - DHgroupID from its name or "0".."5"; -EINVAL. */
int nvmfd_auth_dhgroup_parse(const char *s);
/** nvmfd_auth_dhgroup_len() - bytes of the group's prime (DH value length), 0 for null. */
size_t nvmfd_auth_dhgroup_len(uint8_t dhgid);

/** nvmfd_auth_wipe() - clear @len bytes at @p so the compiler cannot drop it. */
void nvmfd_auth_wipe(void *p, size_t len);

/* ---- secret representations ----------------------------------------- */

/* A DH-HMAC-CHAP secret. @hash is the representation's hash indicator: the
 * HashID used to transform it (0 = used as is). */
struct nvmfd_auth_key {
	uint8_t hash;
	uint8_t len; /* 32, 48 or 64 */
	uint8_t key[NVMFD_AUTH_MAX_KEY_LEN];
};

/**
 * nvmfd_auth_key_parse() - parse "DHHC-1:hh:<base64>:" (hh 00..03; the
 * base64 holds 32, 48 or 64 key bytes and their CRC-32).
 * Return: 0; -EINVAL on a bad prefix, hash indicator, length, base64 or
 *         CRC (@key is then zeroed).
 */
int nvmfd_auth_key_parse(const char *str, struct nvmfd_auth_key *key);
/** nvmfd_auth_key_format() - the representation of @key; -EINVAL, -ENOSPC. */
int nvmfd_auth_key_format(const struct nvmfd_auth_key *key, char *buf, size_t len);

/* A configured TLS PSK. @hash: 0 (no transform; the PSK is the retained
 * PSK), 1 SHA-256 or 2 SHA-384, the hash of the retained PSK derivation. */
struct nvmfd_auth_psk {
	uint8_t hash;
	uint8_t len; /* 32 or 48 */
	uint8_t psk[48];
};

/**
 * nvmfd_auth_psk_parse() - parse "NVMeTLSkey-1:hh:<base64>:" (hh 00, 01
 * or 02; 32 or 48 PSK bytes; 01 needs 32, 02 needs 48).
 * Return: 0 or -EINVAL (@psk zeroed).
 */
int nvmfd_auth_psk_parse(const char *str, struct nvmfd_auth_psk *psk);
/** nvmfd_auth_psk_format() - the interchange format of @psk; -EINVAL, -ENOSPC. */
int nvmfd_auth_psk_format(const struct nvmfd_auth_psk *psk, char *buf, size_t len);

/**
 * nvmfd_auth_read_secret_file() - the first non-blank line of a secret
 * file (a DHHC-1 or NVMeTLSkey-1 representation), without its line end
 * and without spaces or tabs before or after it. The file
 * must be a regular file with no group or other permissions: a secret
 * anyone may read is no secret.
 * @buf: out, NUL-terminated; wiped on failure.
 * Return: 0; -EPERM (group/other permissions or not a regular file);
 *         -ENAMETOOLONG (line longer than @len - 1); -ENODATA (empty or
 *         blank);
 *         -errno of open()/read().
 */
int nvmfd_auth_read_secret_file(const char *path, char *buf, size_t len);

/* ---- DH-HMAC-CHAP arithmetic ------------------------------------------ */

/**
 * nvmfd_auth_hmac() - HMAC-<hashid>(@key, @data) into @out (hash length bytes).
 * Return: 0, -EINVAL, -EIO.
 */
int nvmfd_auth_hmac(uint8_t hashid, const uint8_t *key, size_t klen, const uint8_t *data,
		    size_t dlen, uint8_t *out);

/**
 * nvmfd_auth_transform_key() - the key the responses are keyed with: for a
 * hash indicator 0 the secret itself, else HMAC-<indicator>(secret,
 * @nqn || "NVMe-over-Fabrics"). Host keys are transformed with the host
 * NQN, controller keys with the subsystem NQN.
 * @out: NVMFD_AUTH_MAX_KEY_LEN bytes; @outlen: bytes written.
 * Return: 0, -EINVAL, -EIO.
 */
int nvmfd_auth_transform_key(const struct nvmfd_auth_key *key, const char *nqn, uint8_t *out,
			     size_t *outlen);

/**
 * nvmfd_auth_host_response() - R1 = HMAC(Kh', C1 || S1 (le32) || T_ID (le16)
 * || SC_C || "HostHost" || NQNh || 00h || NQNc).
 * nvmfd_auth_ctrl_response() - R2 = HMAC(Kc', C2 || S2 || T_ID || SC_C ||
 * "Controller" || NQNc || 00h || NQNh).
 * @chal: hash length bytes (the augmented challenge when a DH group is used).
 * @out:  hash length bytes.
 * Return: 0, -EINVAL, -EIO.
 */
int nvmfd_auth_host_response(uint8_t hashid, const uint8_t *tkey, size_t tklen,
			     const uint8_t *chal, uint32_t seqnum, uint16_t tid, uint8_t scc,
			     const char *hostnqn, const char *subnqn, uint8_t *out);
int nvmfd_auth_ctrl_response(uint8_t hashid, const uint8_t *tkey, size_t tklen,
			     const uint8_t *chal, uint32_t seqnum, uint16_t tid, uint8_t scc,
			     const char *subnqn, const char *hostnqn, uint8_t *out);

/**
 * nvmfd_auth_augment_challenge() - Ca = HMAC(H(g^xy mod p), C): @skey is the
 * session key (@sklen bytes), @chal and @out hash length bytes.
 * Return: 0, -EINVAL, -EIO.
 */
int nvmfd_auth_augment_challenge(uint8_t hashid, const uint8_t *skey, size_t sklen,
				 const uint8_t *chal, uint8_t *out);

/* An ephemeral finite field DH key pair of one of the RFC 7919 groups. */
struct nvmfd_auth_dh;

/** nvmfd_auth_dh_new() - generate a key pair in group @dhgid (1..5); -EINVAL, -ENOMEM, -EIO. */
int nvmfd_auth_dh_new(uint8_t dhgid, struct nvmfd_auth_dh **out);
/** nvmfd_auth_dh_public() - the public value g^x mod p, big endian, padded to
 * nvmfd_auth_dhgroup_len() bytes. Return: bytes written, -ENOSPC, -EIO. */
int nvmfd_auth_dh_public(const struct nvmfd_auth_dh *dh, uint8_t *buf, size_t len);
/**
 * nvmfd_auth_dh_derive() - session key g^xy mod p from the peer's public value
 * (@peer, exactly the group length). OpenSSL checks 1 < y < p - 1 and the
 * subgroup. @skey receives the group length bytes (zero padded).
 * Return: bytes written; -EINVAL (bad peer value), -ENOSPC, -EIO.
 */
int nvmfd_auth_dh_derive(struct nvmfd_auth_dh *dh, const uint8_t *peer, size_t plen,
			 uint8_t *skey, size_t len);
void nvmfd_auth_dh_free(struct nvmfd_auth_dh *dh);

/* ---- TLS PSK chain (NVMe/TCP 1.1 §3.6.1.3) ---------------------------- */

/* Hash of the TLS side for a PSK: 1 (SHA-256) or 2 (SHA-384). */
uint8_t nvmfd_auth_psk_tls_hash(const struct nvmfd_auth_psk *psk);

/**
 * nvmfd_auth_retained_psk() - retained PSK = HKDF-Expand-Label(
 * HKDF-Extract(0, configured PSK), "HostNQN", NQNh, L) with the PSK's hash
 * (L its length); hash indicator 0: the configured PSK itself.
 * @out: 48 bytes; Return: bytes written (32 or 48), -EINVAL, -EIO.
 */
int nvmfd_auth_retained_psk(const struct nvmfd_auth_psk *psk, const char *hostnqn,
			    uint8_t *out);
/**
 * nvmfd_auth_psk_digest() - base64(HMAC(retained PSK, NQNh || " " || NQNc ||
 * " " || "NVMe-over-Fabrics")), the PSK digest of a v1 identity.
 * @hashid: 1 or 2; Return: 0, -EINVAL, -ENOSPC, -EIO.
 */
int nvmfd_auth_psk_digest(uint8_t hashid, const uint8_t *retained, size_t rlen,
			  const char *hostnqn, const char *subnqn, char *buf, size_t len);
/**
 * nvmfd_auth_tls_identity() - the TLS PSK identity: version 0
 * "NVMe0R0h NQNh NQNc", version 1 "NVMe1R0h NQNh NQNc <digest>"
 * (h: 1 SHA-256, 2 SHA-384; R: the PSK is a retained PSK).
 * @digest: the PSK digest, version 1 only.
 * Return: 0, -EINVAL, -ENOSPC.
 */
int nvmfd_auth_tls_identity(int version, uint8_t hashid, const char *hostnqn,
			    const char *subnqn, const char *digest, char *buf, size_t len);
/**
 * nvmfd_auth_tls_psk() - the PSK handed to TLS. Version 0: the retained PSK.
 * Version 1: HKDF-Expand-Label(HKDF-Extract(0, retained PSK), "nvme-tls-psk",
 * "0h <digest>", L).
 * @out: 48 bytes; Return: bytes written, -EINVAL, -EIO.
 */
int nvmfd_auth_tls_psk(int version, uint8_t hashid, const uint8_t *retained, size_t rlen,
		       const char *digest, uint8_t *out);

/**
 * nvmfd_auth_tls_psk_spdk() - the TLS PSK SPDK (v24.01 .. v25.09) uses
 * with its "NVMe0R0h NQNh NQNc" identities: HKDF-Expand-Label(
 * HKDF-Extract(0, retained PSK), "nvme-tls-psk", <the identity string>, L)
 * instead of the retained PSK itself (doc/tls.md, "SPDK").
 * @identity: at most 255 bytes. @out: 48 bytes.
 * Return: bytes written, -EINVAL, -EIO.
 */
int nvmfd_auth_tls_psk_spdk(uint8_t hashid, const uint8_t *retained, size_t rlen,
			    const char *identity, uint8_t *out);

/* The parts of an NVMe TLS PSK identity. */
struct nvmfd_auth_tls_id {
	int version; /* 0 or 1 */
	uint8_t hashid; /* 1 SHA-256, 2 SHA-384 */
	char hostnqn[NVMFD_NQN_SIZE];
	char subnqn[NVMFD_NQN_SIZE];
	char digest[4 * ((NVMFD_AUTH_MAX_HASH_LEN + 2) / 3) + 1]; /* version 1 */
};

/**
 * nvmfd_auth_tls_identity_parse() - split "NVMe0R0h NQNh NQNc" or
 * "NVMe1R0h NQNh NQNc <digest>" (h 1 or 2; only retained PSKs, "R").
 * Return: 0; -EINVAL (another form, an empty or too long field; @id zeroed).
 */
int nvmfd_auth_tls_identity_parse(const char *s, struct nvmfd_auth_tls_id *id);

/**
 * nvmfd_auth_hkdf_expand_label() - RFC 8446 §7.1 HKDF-Expand-Label over
 * HKDF-Extract(0, @ikm): info = L (be16) || len || "tls13 " label ||
 * len || context. Exposed for the known-answer tests.
 * Return: 0, -EINVAL, -EIO.
 */
int nvmfd_auth_hkdf_expand_label(uint8_t hashid, const uint8_t *ikm, size_t ikmlen,
				 const char *label, const uint8_t *ctx, size_t ctxlen,
				 uint8_t *out, size_t outlen);

/* ---- the DH-HMAC-CHAP exchange ---------------------------------------- */

/*
 * What the caller does after a step of either state machine.
 */
enum nvmfd_auth_next {
	NVMFD_AUTH_NEXT_SEND_RECV = 1, /* send the output message, then receive */
	NVMFD_AUTH_NEXT_SEND_DONE, /* send the output; the exchange succeeds */
	NVMFD_AUTH_NEXT_DONE, /* nothing to send; the exchange succeeded */
	NVMFD_AUTH_NEXT_SEND_FAIL, /* send the output (an AUTH_Failure); failed */
};

/* Bit masks of acceptable HashIDs / DHgroupIDs: bit n = identifier n. */
#define NVMFD_AUTH_HASHES_ALL 0x0eu
#define NVMFD_AUTH_DHGROUPS_ALL 0x3fu

struct nvmfd_auth_host_cfg {
	const struct nvmfd_auth_key *key; /* required */
	const struct nvmfd_auth_key *ctrl_key; /* NULL: no controller authentication */
	const char *hostnqn;
	const char *subnqn;
	uint16_t tid; /* transaction identifier */
	uint8_t hashes; /* offered, NVMFD_AUTH_HASHES_ALL when 0 */
	uint8_t dhgroups; /* offered, NVMFD_AUTH_DHGROUPS_ALL when 0 */
};

struct nvmfd_auth_ctrl_cfg {
	const struct nvmfd_auth_key *host_key; /* required */
	const struct nvmfd_auth_key *ctrl_key; /* NULL: cannot authenticate itself */
	const char *hostnqn;
	const char *subnqn;
	/* Preference order, most preferred first, 0-terminated; NULL: all of
	 * SHA-256..SHA-512 / ffdhe2048..8192 then null. */
	const uint8_t *hashes;
	const uint8_t *dhgroups;
};

struct nvmfd_auth_host;
struct nvmfd_auth_ctrl;

/* Outcome of a finished or failed exchange, for logs and the caller. */
struct nvmfd_auth_result {
	uint8_t hashid; /* negotiated, 0 before the Challenge */
	uint8_t dhgid;
	bool bidirectional; /* the controller was authenticated too */
	uint8_t rescode; /* AUTH_Failure sent or received, 0 if none */
	uint8_t rescode_exp;
	bool failure_from_peer; /* the AUTH_Failure came from the peer */
	char why[128]; /* reason of a failure, empty otherwise */
};

/**
 * nvmfd_auth_host_new() - host side of one transaction on one queue.
 * Copies what it needs of @cfg. Return: 0, -EINVAL, -ENOMEM.
 */
int nvmfd_auth_host_new(const struct nvmfd_auth_host_cfg *cfg, struct nvmfd_auth_host **out);
/**
 * nvmfd_auth_host_start() - the AUTH_Negotiate to send first.
 * Return: its length in @out, -ENOSPC.
 */
int nvmfd_auth_host_start(struct nvmfd_auth_host *h, uint8_t *out, size_t cap);
/**
 * nvmfd_auth_host_step() - consume the controller's message (the data of an
 * Authentication Receive) and produce the next one to send.
 * @outlen: bytes of @out to send (0 if none).
 * Return: enum nvmfd_auth_next; -EACCES when the controller sent an
 *         AUTH_Failure1 (result says why); -ENOSPC; -EIO; -EPROTO once failed.
 */
int nvmfd_auth_host_step(struct nvmfd_auth_host *h, const uint8_t *in, size_t inlen,
			 uint8_t *out, size_t cap, size_t *outlen);
const struct nvmfd_auth_result *nvmfd_auth_host_result(const struct nvmfd_auth_host *h);
void nvmfd_auth_host_free(struct nvmfd_auth_host *h);

/**
 * nvmfd_auth_ctrl_new() - controller side of transactions on one queue.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int nvmfd_auth_ctrl_new(const struct nvmfd_auth_ctrl_cfg *cfg, struct nvmfd_auth_ctrl **out);
/**
 * nvmfd_auth_ctrl_step() - consume the host's message (the data of an
 * Authentication Send) and produce what the next Authentication Receive
 * returns (nothing after a Success2 or Failure2).
 * Return: enum nvmfd_auth_next (SEND_FAIL: an AUTH_Failure1 in @out);
 *         -EACCES when the host sent an AUTH_Failure2; -ENOSPC; -EIO.
 */
int nvmfd_auth_ctrl_step(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			 uint8_t *out, size_t cap, size_t *outlen);
/** nvmfd_auth_ctrl_authenticated() - the host has been authenticated. */
bool nvmfd_auth_ctrl_authenticated(const struct nvmfd_auth_ctrl *c);
/**
 * nvmfd_auth_ctrl_idle() - no transaction is in progress: the next
 * AUTH_Negotiate starts a new one (fresh, finished or failed). The caller
 * may then replace @c by one built with other keys (re-authentication
 * after a key change).
 */
bool nvmfd_auth_ctrl_idle(const struct nvmfd_auth_ctrl *c);
/**
 * nvmfd_auth_ctrl_refuse() - fail the transaction the host message @in
 * (an AUTH_Negotiate) would start: @out gets an AUTH_Failure1 with reason
 * 01h/01h (authentication failed) and @in's T_ID; @c is left failed and
 * unauthenticated, with @why (no secret in it) as the result's reason.
 * For a host whose key was removed since the queue authenticated.
 * Return: NVMFD_AUTH_NEXT_SEND_FAIL; -EINVAL; -ENOSPC.
 */
int nvmfd_auth_ctrl_refuse(struct nvmfd_auth_ctrl *c, const uint8_t *in, size_t inlen,
			   const char *why, uint8_t *out, size_t cap, size_t *outlen);
const struct nvmfd_auth_result *nvmfd_auth_ctrl_result(const struct nvmfd_auth_ctrl *c);
void nvmfd_auth_ctrl_free(struct nvmfd_auth_ctrl *c);

/** nvmfd_auth_rce_str() - text of a reason code explanation. */
const char *nvmfd_auth_rce_str(uint8_t rce);

#endif /* NVMFD_INTERNAL_AUTH_H */
