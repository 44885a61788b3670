// SPDX-License-Identifier: MIT
/*
 * key.c - the textual representations of secrets:
 *   DH-HMAC-CHAP secret  "DHHC-1:hh:<base64(key || CRC-32(key))>:"
 *   TLS PSK (interchange) "NVMeTLSkey-1:hh:<base64(psk || CRC-32(psk))>:"
 * hh is two hex digits (the hash indicator), the CRC-32 is the IEEE one
 * (as zlib's) appended little endian. Base64 is OpenSSL's; CRC-32 isa-l's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <openssl/evp.h>

#include "internal/auth.h"

#define B64_MAX 96 /* base64 of 68 bytes is 92 characters */

static uint32_t repr_crc32(const uint8_t *buf, size_t len)
{
	return crc32_gzip_refl(0, buf, len);
}

/*
 * Parse "<prefix>hh:<base64>:" into at most @max bytes of key; check the
 * CRC-32 trailer. Return: key length, or -EINVAL.
 */
static int parse_repr(const char *str, const char *prefix, uint8_t *hash, uint8_t *key,
		      size_t max)
{
	uint8_t raw[B64_MAX];
	size_t pl = strlen(prefix), bl;
	const char *b64, *end;
	int n, pad = 0;
	uint32_t crc;

	if (!str || strncmp(str, prefix, pl))
		return -EINVAL;
	str += pl;
	if (str[0] < '0' || str[0] > '9' || str[1] < '0' || str[1] > '9' || str[2] != ':')
		return -EINVAL;
	*hash = (uint8_t)((str[0] - '0') * 10 + (str[1] - '0'));
	b64 = str + 3;
	end = strchr(b64, ':');
	/* Exactly one trailing ':'; a final newline (from a key file) is not ours to strip. */
	if (!end || end[1] != '\0')
		return -EINVAL;
	bl = (size_t)(end - b64);
	if (bl == 0 || bl % 4 || bl > B64_MAX)
		return -EINVAL;
	for (size_t i = 0; i < bl; i++) {
		char c = b64[i];

		if (c == '=') {
			if (i < bl - 2)
				return -EINVAL;
			pad++;
		} else if (pad || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				    (c >= '0' && c <= '9') || c == '+' || c == '/')) {
			return -EINVAL;
		}
	}
	n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)bl);
	if (n < 0)
		return -EINVAL;
	n -= pad;
	if (n < 4 || (size_t)(n - 4) > max) {
		nvmfd_auth_wipe(raw, sizeof(raw));
		return -EINVAL;
	}
	n -= 4;
	crc = repr_crc32(raw, (size_t)n);
	if (raw[n] != (uint8_t)crc || raw[n + 1] != (uint8_t)(crc >> 8) ||
	    raw[n + 2] != (uint8_t)(crc >> 16) || raw[n + 3] != (uint8_t)(crc >> 24)) {
		nvmfd_auth_wipe(raw, sizeof(raw));
		return -EINVAL;
	}
	memcpy(key, raw, (size_t)n);
	nvmfd_auth_wipe(raw, sizeof(raw));
	return n;
}

static int format_repr(const char *prefix, uint8_t hash, const uint8_t *key, size_t klen,
		       char *buf, size_t len)
{
	uint8_t raw[NVMFD_AUTH_MAX_KEY_LEN + 4];
	char b64[B64_MAX + 4];
	uint32_t crc = repr_crc32(key, klen);
	int n;

	memcpy(raw, key, klen);
	raw[klen] = (uint8_t)crc;
	raw[klen + 1] = (uint8_t)(crc >> 8);
	raw[klen + 2] = (uint8_t)(crc >> 16);
	raw[klen + 3] = (uint8_t)(crc >> 24);
	EVP_EncodeBlock((unsigned char *)b64, raw, (int)klen + 4);
	nvmfd_auth_wipe(raw, sizeof(raw));
	n = snprintf(buf, len, "%s%02u:%s:", prefix, hash, b64);
	nvmfd_auth_wipe(b64, sizeof(b64));
	if (n < 0 || (size_t)n >= len) {
		nvmfd_auth_wipe(buf, len);
		return -ENOSPC;
	}
	return 0;
}

static bool key_len_ok(size_t n)
{
	return n == 32 || n == 48 || n == 64;
}

int nvmfd_auth_key_parse(const char *str, struct nvmfd_auth_key *key)
{
	uint8_t hash = 0;
	int n;

	if (!key)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	n = parse_repr(str, "DHHC-1:", &hash, key->key, sizeof(key->key));
	/*
	 * Any of the three lengths with any indicator: the Linux host and
	 * target accept that too (nvme-cli generates matching ones).
	 */
	if (n < 0 || !key_len_ok((size_t)n) || hash > NVMFD_AUTH_HASH_SHA512) {
		nvmfd_auth_wipe(key, sizeof(*key));
		return -EINVAL;
	}
	key->hash = hash;
	key->len = (uint8_t)n;
	return 0;
}

int nvmfd_auth_key_format(const struct nvmfd_auth_key *key, char *buf, size_t len)
{
	if (!key || !buf || !key_len_ok(key->len) || key->hash > NVMFD_AUTH_HASH_SHA512)
		return -EINVAL;
	return format_repr("DHHC-1:", key->hash, key->key, key->len, buf, len);
}

static bool psk_ok(uint8_t hash, size_t n)
{
	switch (hash) {
	case 0:
		return n == 32 || n == 48;
	case NVMFD_AUTH_HASH_SHA256:
		return n == 32;
	case NVMFD_AUTH_HASH_SHA384:
		return n == 48;
	default:
		return false;
	}
}

int nvmfd_auth_psk_parse(const char *str, struct nvmfd_auth_psk *psk)
{
	uint8_t hash = 0;
	int n;

	if (!psk)
		return -EINVAL;
	memset(psk, 0, sizeof(*psk));
	n = parse_repr(str, "NVMeTLSkey-1:", &hash, psk->psk, sizeof(psk->psk));
	if (n < 0 || !psk_ok(hash, (size_t)n)) {
		nvmfd_auth_wipe(psk, sizeof(*psk));
		return -EINVAL;
	}
	psk->hash = hash;
	psk->len = (uint8_t)n;
	return 0;
}

int nvmfd_auth_psk_format(const struct nvmfd_auth_psk *psk, char *buf, size_t len)
{
	if (!psk || !buf || !psk_ok(psk->hash, psk->len))
		return -EINVAL;
	return format_repr("NVMeTLSkey-1:", psk->hash, psk->psk, psk->len, buf, len);
}

int nvmfd_auth_read_secret_file(const char *path, char *buf, size_t len)
{
	struct stat st;
	ssize_t n;
	size_t l, s;
	int fd, ret = 0;

	if (!path || !buf || len < 2)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IRWXG | S_IRWXO))) {
		ret = -EPERM;
		goto out_close;
	}
	/* One read of at most len - 1 bytes: secrets are short. */
	n = read(fd, buf, len - 1);
	if (n < 0) {
		ret = -errno;
		goto out_wipe;
	}
	buf[n] = '\0';
	/* the first line that is not blank, without the blanks around it
	 * (an editor's trailing space or a leading empty line is not part of
	 * a representation, and neither holds a space) */
	s = strspn(buf, " \t\r\n");
	l = strcspn(buf + s, "\r\n");
	if (s + l == (size_t)n && (size_t)n == len - 1) {
		ret = -ENAMETOOLONG; /* no line end within the buffer */
		goto out_wipe;
	}
	while (l && (buf[s + l - 1] == ' ' || buf[s + l - 1] == '\t'))
		l--;
	memmove(buf, buf + s, l);
	nvmfd_auth_wipe(buf + l, len - l);
	if (l == 0)
		ret = -ENODATA;
	goto out_close;

out_wipe:
	nvmfd_auth_wipe(buf, len);
out_close:
	close(fd);
	return ret;
}
