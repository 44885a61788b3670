// SPDX-License-Identifier: MIT
/*
 * crypto.c - DH-HMAC-CHAP arithmetic (NVMe Base 2.0 §8.13.5): hash and group
 * tables, HMAC, the secret transform, the host and controller responses, the
 * augmented challenge and ephemeral FFDHE (RFC 7919) key pairs. Every
 * primitive is OpenSSL's; this file only lays out the bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>

#include "internal/auth.h"

static const struct {
	const char *name;
	const char *alt; /* the spelling nvmet's configfs uses */
	const char *alt2;
	size_t len;
} hashes[] = {
	[NVMFD_AUTH_HASH_SHA256] = { "sha256", "hmac(sha256)", "sha-256", 32 },
	[NVMFD_AUTH_HASH_SHA384] = { "sha384", "hmac(sha384)", "sha-384", 48 },
	[NVMFD_AUTH_HASH_SHA512] = { "sha512", "hmac(sha512)", "sha-512", 64 },
};

static const struct {
	const char *name;
	size_t len;
} groups[] = {
	[NVMFD_AUTH_DHGROUP_NULL] = { "null", 0 },
	[NVMFD_AUTH_DHGROUP_2048] = { "ffdhe2048", 256 },
	[NVMFD_AUTH_DHGROUP_3072] = { "ffdhe3072", 384 },
	[NVMFD_AUTH_DHGROUP_4096] = { "ffdhe4096", 512 },
	[NVMFD_AUTH_DHGROUP_6144] = { "ffdhe6144", 768 },
	[NVMFD_AUTH_DHGROUP_8192] = { "ffdhe8192", 1024 },
};

#define NR_HASHES (sizeof(hashes) / sizeof(hashes[0]))
#define NR_GROUPS (sizeof(groups) / sizeof(groups[0]))

size_t nvmfd_auth_hash_len(uint8_t hashid)
{
	return hashid < NR_HASHES ? hashes[hashid].len : 0;
}

const char *nvmfd_auth_hash_name(uint8_t hashid)
{
	return hashid < NR_HASHES ? hashes[hashid].name : NULL;
}

int nvmfd_auth_hash_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	for (uint8_t i = 1; i < NR_HASHES; i++) {
		if (!strcasecmp(s, hashes[i].name) || !strcasecmp(s, hashes[i].alt) ||
		    !strcasecmp(s, hashes[i].alt2) || (s[0] == '0' + i && !s[1]))
			return i;
	}
	return -EINVAL;
}

const char *nvmfd_auth_dhgroup_name(uint8_t dhgid)
{
	return dhgid < NR_GROUPS ? groups[dhgid].name : NULL;
}

int nvmfd_auth_dhgroup_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	for (uint8_t i = 0; i < NR_GROUPS; i++)
		if (!strcasecmp(s, groups[i].name) || (s[0] == '0' + i && !s[1]))
			return i;
	return -EINVAL;
}

size_t nvmfd_auth_dhgroup_len(uint8_t dhgid)
{
	return dhgid < NR_GROUPS ? groups[dhgid].len : 0;
}

void nvmfd_auth_wipe(void *p, size_t len)
{
	if (p && len)
		OPENSSL_cleanse(p, len);
}

static const EVP_MD *hash_md(uint8_t hashid)
{
	switch (hashid) {
	case NVMFD_AUTH_HASH_SHA256:
		return EVP_sha256();
	case NVMFD_AUTH_HASH_SHA384:
		return EVP_sha384();
	case NVMFD_AUTH_HASH_SHA512:
		return EVP_sha512();
	default:
		return NULL;
	}
}

int nvmfd_auth_hmac(uint8_t hashid, const uint8_t *key, size_t klen, const uint8_t *data,
		    size_t dlen, uint8_t *out)
{
	const EVP_MD *md = hash_md(hashid);
	unsigned int olen = 0;

	if (!md || !key || !out || (dlen && !data) || klen > INT32_MAX)
		return -EINVAL;
	if (!HMAC(md, key, (int)klen, data, dlen, out, &olen))
		return -EIO;
	return olen == nvmfd_auth_hash_len(hashid) ? 0 : -EIO;
}

static const char fabrics_str[] = "NVMe-over-Fabrics";

int nvmfd_auth_transform_key(const struct nvmfd_auth_key *key, const char *nqn, uint8_t *out,
			     size_t *outlen)
{
	uint8_t buf[NVMFD_NQN_SIZE + sizeof(fabrics_str)];
	size_t n;
	int ret;

	if (!key || !nqn || !out || !outlen || key->len == 0 ||
	    key->len > NVMFD_AUTH_MAX_KEY_LEN)
		return -EINVAL;
	if (key->hash == 0) {
		memcpy(out, key->key, key->len);
		*outlen = key->len;
		return 0;
	}
	n = strlen(nqn);
	if (n >= NVMFD_NQN_SIZE || !nvmfd_auth_hash_len(key->hash))
		return -EINVAL;
	memcpy(buf, nqn, n);
	memcpy(buf + n, fabrics_str, sizeof(fabrics_str) - 1);
	ret = nvmfd_auth_hmac(key->hash, key->key, key->len, buf, n + sizeof(fabrics_str) - 1,
			      out);
	if (ret == 0)
		*outlen = nvmfd_auth_hash_len(key->hash);
	nvmfd_auth_wipe(buf, sizeof(buf));
	return ret;
}

/*
 * The response of either role: HMAC(key, C || le32 seq || le16 tid || scc ||
 * role || nqn_a || 00h || nqn_b). Both responses have this layout; only the
 * role string and the NQN order differ (Base 2.0 §8.13.5.3 / .4).
 */
static int response(uint8_t hashid, const uint8_t *tkey, size_t tklen, const uint8_t *chal,
		    uint32_t seqnum, uint16_t tid, uint8_t scc, const char *role,
		    const char *nqn_a, const char *nqn_b, uint8_t *out)
{
	uint8_t buf[NVMFD_AUTH_MAX_HASH_LEN + 4 + 2 + 1 + 10 + 2 * NVMFD_NQN_SIZE + 1];
	size_t hl = nvmfd_auth_hash_len(hashid), rl, la, lb, n = 0;

	if (!hl || !tkey || !chal || !nqn_a || !nqn_b || !out)
		return -EINVAL;
	rl = strlen(role);
	la = strlen(nqn_a);
	lb = strlen(nqn_b);
	if (la >= NVMFD_NQN_SIZE || lb >= NVMFD_NQN_SIZE)
		return -EINVAL;
	memcpy(buf + n, chal, hl);
	n += hl;
	buf[n++] = (uint8_t)seqnum;
	buf[n++] = (uint8_t)(seqnum >> 8);
	buf[n++] = (uint8_t)(seqnum >> 16);
	buf[n++] = (uint8_t)(seqnum >> 24);
	buf[n++] = (uint8_t)tid;
	buf[n++] = (uint8_t)(tid >> 8);
	buf[n++] = scc;
	memcpy(buf + n, role, rl);
	n += rl;
	memcpy(buf + n, nqn_a, la);
	n += la;
	buf[n++] = 0;
	memcpy(buf + n, nqn_b, lb);
	n += lb;
	return nvmfd_auth_hmac(hashid, tkey, tklen, buf, n, out);
}

int nvmfd_auth_host_response(uint8_t hashid, const uint8_t *tkey, size_t tklen,
			     const uint8_t *chal, uint32_t seqnum, uint16_t tid, uint8_t scc,
			     const char *hostnqn, const char *subnqn, uint8_t *out)
{
	return response(hashid, tkey, tklen, chal, seqnum, tid, scc, "HostHost", hostnqn, subnqn,
			out);
}

int nvmfd_auth_ctrl_response(uint8_t hashid, const uint8_t *tkey, size_t tklen,
			     const uint8_t *chal, uint32_t seqnum, uint16_t tid, uint8_t scc,
			     const char *subnqn, const char *hostnqn, uint8_t *out)
{
	return response(hashid, tkey, tklen, chal, seqnum, tid, scc, "Controller", subnqn,
			hostnqn, out);
}

int nvmfd_auth_augment_challenge(uint8_t hashid, const uint8_t *skey, size_t sklen,
				 const uint8_t *chal, uint8_t *out)
{
	const EVP_MD *md = hash_md(hashid);
	uint8_t hkey[NVMFD_AUTH_MAX_HASH_LEN];
	unsigned int hlen = 0;
	int ret;

	if (!md || !skey || !sklen || !chal || !out)
		return -EINVAL;
	if (!EVP_Digest(skey, sklen, hkey, &hlen, md, NULL))
		return -EIO;
	ret = nvmfd_auth_hmac(hashid, hkey, hlen, chal, nvmfd_auth_hash_len(hashid), out);
	nvmfd_auth_wipe(hkey, sizeof(hkey));
	return ret;
}

/* ---- FFDHE ------------------------------------------------------------ */

struct nvmfd_auth_dh {
	uint8_t dhgid;
	EVP_PKEY *pkey;
};

int nvmfd_auth_dh_new(uint8_t dhgid, struct nvmfd_auth_dh **out)
{
	struct nvmfd_auth_dh *dh;
	EVP_PKEY_CTX *ctx;
	int ret = -EIO;

	if (!out || dhgid == NVMFD_AUTH_DHGROUP_NULL || dhgid >= NR_GROUPS)
		return -EINVAL;
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return -ENOMEM;
	dh->dhgid = dhgid;
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!ctx)
		goto err_free;
	if (EVP_PKEY_keygen_init(ctx) <= 0 ||
	    EVP_PKEY_CTX_set_group_name(ctx, groups[dhgid].name) <= 0 ||
	    EVP_PKEY_generate(ctx, &dh->pkey) <= 0)
		goto err_ctx;
	EVP_PKEY_CTX_free(ctx);
	*out = dh;
	return 0;

err_ctx:
	EVP_PKEY_CTX_free(ctx);
err_free:
	free(dh);
	return ret;
}

int nvmfd_auth_dh_public(const struct nvmfd_auth_dh *dh, uint8_t *buf, size_t len)
{
	size_t plen;
	BIGNUM *pub = NULL;
	int ret = -EIO;

	if (!dh || !buf)
		return -EINVAL;
	plen = groups[dh->dhgid].len;
	if (len < plen)
		return -ENOSPC;
	if (!EVP_PKEY_get_bn_param(dh->pkey, OSSL_PKEY_PARAM_PUB_KEY, &pub))
		return -EIO;
	if (BN_bn2binpad(pub, buf, (int)plen) == (int)plen)
		ret = (int)plen;
	BN_free(pub);
	return ret;
}

/* An EVP_PKEY holding only the peer's public value in our group. */
static int peer_key(uint8_t dhgid, const uint8_t *peer, size_t plen, EVP_PKEY **out)
{
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	BIGNUM *pub = NULL;
	int ret = -EIO;

	pub = BN_bin2bn(peer, (int)plen, NULL);
	bld = OSSL_PARAM_BLD_new();
	if (!pub || !bld)
		goto out;
	if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					     groups[dhgid].name, 0) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, pub))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "DH", NULL);
	if (!params || !ctx)
		goto out;
	if (EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, out, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		ret = -EINVAL;
		goto out;
	}
	ret = 0;
out:
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(pub);
	return ret;
}

int nvmfd_auth_dh_derive(struct nvmfd_auth_dh *dh, const uint8_t *peer, size_t plen,
			 uint8_t *skey, size_t len)
{
	size_t glen, olen;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pk = NULL;
	int ret;

	if (!dh || !peer || !skey)
		return -EINVAL;
	glen = groups[dh->dhgid].len;
	if (plen != glen)
		return -EINVAL;
	if (len < glen)
		return -ENOSPC;
	ret = peer_key(dh->dhgid, peer, plen, &pk);
	if (ret < 0)
		return ret;
	/*
	 * The peer value must be in 1 < y < p - 1 (RFC 7919 §5.1): for the
	 * safe primes of the RFC 7919 groups the only small subgroups are
	 * {1} and {1, p - 1}, so the range check is enough and the subgroup
	 * check (y^q mod p == 1, a full-length exponentiation: about 1 s of
	 * CPU per message with ffdhe8192 on our machines, against some 50 ms
	 * for the whole derivation) is skipped. OpenSSL's quick check is that
	 * range check.
	 */
	ret = -EIO;
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
	if (!ctx)
		goto out;
	if (EVP_PKEY_public_check_quick(ctx) <= 0) {
		ret = -EINVAL;
		goto out;
	}
	EVP_PKEY_CTX_free(ctx);
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, dh->pkey, NULL);
	if (!ctx || EVP_PKEY_derive_init(ctx) <= 0 || EVP_PKEY_CTX_set_dh_pad(ctx, 1) <= 0)
		goto out;
	if (EVP_PKEY_derive_set_peer_ex(ctx, pk, 0) <= 0) {
		ret = -EINVAL;
		goto out;
	}
	olen = len;
	if (EVP_PKEY_derive(ctx, skey, &olen) <= 0 || olen != glen)
		goto out;
	ret = (int)olen;
out:
	EVP_PKEY_CTX_free(ctx);
	EVP_PKEY_free(pk);
	return ret;
}

void nvmfd_auth_dh_free(struct nvmfd_auth_dh *dh)
{
	if (!dh)
		return;
	EVP_PKEY_free(dh->pkey);
	free(dh);
}

const char *nvmfd_auth_rce_str(uint8_t rce)
{
	switch (rce) {
	case NVMFD_AUTH_RCE_FAILED:
		return "authentication failed";
	case NVMFD_AUTH_RCE_PROTO_UNUSABLE:
		return "authentication protocol not usable";
	case NVMFD_AUTH_RCE_CONCAT_MISMATCH:
		return "secure channel concatenation mismatch";
	case NVMFD_AUTH_RCE_HASH_UNUSABLE:
		return "hash function not usable";
	case NVMFD_AUTH_RCE_DHGROUP_UNUSABLE:
		return "DH group not usable";
	case NVMFD_AUTH_RCE_INCORRECT_PAYLOAD:
		return "incorrect payload";
	case NVMFD_AUTH_RCE_INCORRECT_PROTOCOL:
		return "incorrect protocol message";
	default:
		return "unknown reason";
	}
}
