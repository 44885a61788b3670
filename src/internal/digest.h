/* SPDX-License-Identifier: MIT */
/*
 * internal/digest.h - the codec's digest paths that the public API picks
 * between at load time, reachable one by one for tests.
 */
#ifndef NVMFD_INTERNAL_DIGEST_H
#define NVMFD_INTERNAL_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * nvmfd__crc32c_copy_fused() - the one-pass SSE4.2 copy and CRC32C that
 * nvmfd_crc32c_copy() uses on CPUs without AVX-512 and VPCLMULQDQ
 * (src/codec/digest.c says why).
 * @crc: running value; @dst: @len bytes, not overlapping @src; @len: bytes.
 * Return: true and *@out = the running CRC after @src (dst holds a copy);
 *         false, touching nothing, when the CPU lacks SSE4.2 or PCLMULQDQ
 *         or the build is not x86-64.
 */
bool nvmfd__crc32c_copy_fused(uint32_t crc, void *dst, const void *src, size_t len,
			      uint32_t *out);

#endif
