// SPDX-License-Identifier: MIT
/*
 * tls.c - the NVMe/TCP TLS PSK chain (NVMe/TCP 1.1 §3.6.1.3 and .4):
 *
 *   configured PSK --HKDF-Expand-Label("HostNQN", NQNh)--> retained PSK
 *   retained PSK --HMAC(NQNh " " NQNc " NVMe-over-Fabrics"), base64--> digest
 *   identity v0 "NVMe0R0h NQNh NQNc", v1 "NVMe1R0h NQNh NQNc digest"
 *   v1: retained PSK --HKDF-Expand-Label("nvme-tls-psk", "0h digest")--> TLS PSK
 *
 * HKDF-Expand-Label is RFC 8446's (the label gets the "tls13 " prefix), on
 * top of RFC 5869 HKDF with a zero salt; HKDF is OpenSSL's EVP_KDF.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "internal/auth.h"

static const char *md_name(uint8_t hashid)
{
	switch (hashid) {
	case NVMFD_AUTH_HASH_SHA256:
		return "SHA256";
	case NVMFD_AUTH_HASH_SHA384:
		return "SHA384";
	case NVMFD_AUTH_HASH_SHA512:
		return "SHA512";
	default:
		return NULL;
	}
}

int nvmfd_auth_hkdf_expand_label(uint8_t hashid, const uint8_t *ikm, size_t ikmlen,
				 const char *label, const uint8_t *ctx, size_t ctxlen,
				 uint8_t *out, size_t outlen)
{
	static const char prefix[] = "tls13 ";
	uint8_t info[2 + 1 + 255 + 1 + 255];
	const char *md = md_name(hashid);
	size_t ll, n = 0;
	OSSL_PARAM params[5], *p = params;
	int mode = EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND;
	EVP_KDF_CTX *kctx;
	EVP_KDF *kdf;
	int ret = -EIO;

	if (!md || !ikm || !ikmlen || !label || (ctxlen && !ctx) || !out || !outlen ||
	    outlen > 0xffff)
		return -EINVAL;
	ll = sizeof(prefix) - 1 + strlen(label);
	if (ll > 255 || ctxlen > 255)
		return -EINVAL;
	info[n++] = (uint8_t)(outlen >> 8);
	info[n++] = (uint8_t)outlen;
	info[n++] = (uint8_t)ll;
	memcpy(info + n, prefix, sizeof(prefix) - 1);
	n += sizeof(prefix) - 1;
	memcpy(info + n, label, ll - (sizeof(prefix) - 1));
	n += ll - (sizeof(prefix) - 1);
	info[n++] = (uint8_t)ctxlen;
	if (ctxlen)
		memcpy(info + n, ctx, ctxlen);
	n += ctxlen;

	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (!kdf)
		return -EIO;
	kctx = EVP_KDF_CTX_new(kdf);
	EVP_KDF_free(kdf);
	if (!kctx)
		return -EIO;
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikmlen);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n);
	*p = OSSL_PARAM_construct_end();
	if (EVP_KDF_derive(kctx, out, outlen, params) > 0)
		ret = 0;
	EVP_KDF_CTX_free(kctx);
	return ret;
}

uint8_t nvmfd_auth_psk_tls_hash(const struct nvmfd_auth_psk *psk)
{
	if (psk->hash)
		return psk->hash;
	return psk->len == 48 ? NVMFD_AUTH_HASH_SHA384 : NVMFD_AUTH_HASH_SHA256;
}

int nvmfd_auth_retained_psk(const struct nvmfd_auth_psk *psk, const char *hostnqn,
			    uint8_t *out)
{
	size_t nl;
	int ret;

	if (!psk || !hostnqn || !out || (psk->len != 32 && psk->len != 48))
		return -EINVAL;
	if (psk->hash == 0) {
		memcpy(out, psk->psk, psk->len);
		return psk->len;
	}
	nl = strlen(hostnqn);
	if (nl == 0 || nl >= NVMFD_NQN_SIZE || nvmfd_auth_hash_len(psk->hash) != psk->len)
		return -EINVAL;
	ret = nvmfd_auth_hkdf_expand_label(psk->hash, psk->psk, psk->len, "HostNQN",
					   (const uint8_t *)hostnqn, nl, out, psk->len);
	return ret < 0 ? ret : psk->len;
}

int nvmfd_auth_psk_digest(uint8_t hashid, const uint8_t *retained, size_t rlen,
			  const char *hostnqn, const char *subnqn, char *buf, size_t len)
{
	static const char tail[] = " NVMe-over-Fabrics";
	uint8_t msg[2 * NVMFD_NQN_SIZE + sizeof(tail)];
	uint8_t mac[NVMFD_AUTH_MAX_HASH_LEN];
	size_t hl = nvmfd_auth_hash_len(hashid), a, b, n = 0;
	int ret;

	if ((hashid != NVMFD_AUTH_HASH_SHA256 && hashid != NVMFD_AUTH_HASH_SHA384) ||
	    !retained || !hostnqn || !subnqn || !buf)
		return -EINVAL;
	a = strlen(hostnqn);
	b = strlen(subnqn);
	if (a >= NVMFD_NQN_SIZE || b >= NVMFD_NQN_SIZE)
		return -EINVAL;
	if (len < 4 * ((hl + 2) / 3) + 1)
		return -ENOSPC;
	memcpy(msg + n, hostnqn, a);
	n += a;
	msg[n++] = ' ';
	memcpy(msg + n, subnqn, b);
	n += b;
	memcpy(msg + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	ret = nvmfd_auth_hmac(hashid, retained, rlen, msg, n, mac);
	if (ret < 0)
		return ret;
	EVP_EncodeBlock((unsigned char *)buf, mac, (int)hl);
	return 0;
}

int nvmfd_auth_tls_identity(int version, uint8_t hashid, const char *hostnqn,
			    const char *subnqn, const char *digest, char *buf, size_t len)
{
	int n;

	if ((hashid != NVMFD_AUTH_HASH_SHA256 && hashid != NVMFD_AUTH_HASH_SHA384) || !hostnqn ||
	    !subnqn || !buf || !hostnqn[0] || !subnqn[0])
		return -EINVAL;
	if (version == 0)
		n = snprintf(buf, len, "NVMe0R%02u %s %s", hashid, hostnqn, subnqn);
	else if (version == 1 && digest && digest[0])
		n = snprintf(buf, len, "NVMe1R%02u %s %s %s", hashid, hostnqn, subnqn, digest);
	else
		return -EINVAL;
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

int nvmfd_auth_tls_psk(int version, uint8_t hashid, const uint8_t *retained, size_t rlen,
		       const char *digest, uint8_t *out)
{
	char ctx[4 + 2 * NVMFD_AUTH_MAX_HASH_LEN];
	size_t hl = nvmfd_auth_hash_len(hashid);
	int n, ret;

	if ((hashid != NVMFD_AUTH_HASH_SHA256 && hashid != NVMFD_AUTH_HASH_SHA384) ||
	    !retained || !out || rlen != hl)
		return -EINVAL;
	if (version == 0) {
		memcpy(out, retained, rlen);
		return (int)rlen;
	}
	if (version != 1 || !digest)
		return -EINVAL;
	n = snprintf(ctx, sizeof(ctx), "%02u %s", hashid, digest);
	if (n < 0 || (size_t)n >= sizeof(ctx))
		return -EINVAL;
	ret = nvmfd_auth_hkdf_expand_label(hashid, retained, rlen, "nvme-tls-psk",
					   (const uint8_t *)ctx, (size_t)n, out, hl);
	return ret < 0 ? ret : (int)hl;
}

int nvmfd_auth_tls_psk_spdk(uint8_t hashid, const uint8_t *retained, size_t rlen,
			    const char *identity, uint8_t *out)
{
	size_t hl = nvmfd_auth_hash_len(hashid), il;
	int ret;

	if ((hashid != NVMFD_AUTH_HASH_SHA256 && hashid != NVMFD_AUTH_HASH_SHA384) ||
	    !retained || !identity || !out || rlen != hl)
		return -EINVAL;
	il = strlen(identity);
	if (il == 0 || il > 255)
		return -EINVAL;
	ret = nvmfd_auth_hkdf_expand_label(hashid, retained, rlen, "nvme-tls-psk",
					   (const uint8_t *)identity, il, out, hl);
	return ret < 0 ? ret : (int)hl;
}

/* Copy the space-delimited field at *@s into @out (@len bytes); advance. */
static int tls_id_field(const char **s, char *out, size_t len, bool last)
{
	const char *e = strchr(*s, ' ');
	size_t n = e ? (size_t)(e - *s) : strlen(*s);

	if (n == 0 || n >= len || (last && e) || (!last && !e))
		return -EINVAL;
	memcpy(out, *s, n);
	out[n] = '\0';
	*s += n + (e ? 1 : 0);
	return 0;
}

int nvmfd_auth_tls_identity_parse(const char *s, struct nvmfd_auth_tls_id *id)
{
	memset(id, 0, sizeof(*id));
	if (!s || strncmp(s, "NVMe", 4) || (s[4] != '0' && s[4] != '1') || s[5] != 'R' ||
	    s[6] != '0' || (s[7] != '1' && s[7] != '2') || s[8] != ' ')
		goto bad;
	id->version = s[4] - '0';
	id->hashid = (uint8_t)(s[7] - '0');
	s += 9;
	if (tls_id_field(&s, id->hostnqn, sizeof(id->hostnqn), false) ||
	    tls_id_field(&s, id->subnqn, sizeof(id->subnqn), id->version == 0))
		goto bad;
	if (id->version == 1 && tls_id_field(&s, id->digest, sizeof(id->digest), true))
		goto bad;
	return 0;
bad:
	memset(id, 0, sizeof(*id));
	return -EINVAL;
}
