// SPDX-License-Identifier: MIT
/*
 * digest.c - CRC32C (Castagnoli) for NVMe/TCP header and data digests.
 *
 * isa-l's crc32_iscsi() is the raw reflected CRC32C update: it neither
 * inverts the seed on entry nor the result on exit, so it chains directly:
 * crc32_iscsi(b, n2, crc32_iscsi(a, n1, s)) == crc32_iscsi(a||b, n1+n2, s).
 * The NVMe/TCP digest is therefore ~crc32_iscsi(buf, len, ~0).
 */
#include <limits.h>
#include <stdint.h>

#include <isa-l/crc.h>

#include <nvmfd/pdu.h>

/* crc32_iscsi() takes an int length; feed large buffers in chunks. */
#define DIGEST_CHUNK (1u << 30)

/**
 * nvmfd_crc32c() - update a running CRC32C with a buffer.
 * @crc: running value; NVMFD_CRC32C_INIT to start.
 * @buf: @len bytes, borrowed; may be NULL when @len is 0.
 * @len: bytes.
 * Return: the updated running CRC (not inverted).
 * Context: any thread; pure.
 */
uint32_t nvmfd_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len > 0) {
		size_t n = len > DIGEST_CHUNK ? DIGEST_CHUNK : len;

		/* isa-l does not write through the pointer; it is just not const. */
		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

/**
 * nvmfd_digest() - NVMe/TCP digest of a region: ~crc32c(~0, buf, len).
 * @buf: @len bytes, borrowed.
 * @len: bytes.
 * Return: the value to store little-endian after the region.
 * Context: any thread; pure.
 */
uint32_t nvmfd_digest(const void *buf, size_t len)
{
	return nvmfd_crc32c_final(nvmfd_crc32c(NVMFD_CRC32C_INIT, buf, len));
}
