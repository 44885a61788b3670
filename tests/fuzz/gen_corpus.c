// SPDX-License-Identifier: MIT
/*
 * gen_corpus.c - write the seed corpus for fuzz_pdu: valid PDU streams of
 * every type, for both roles, with and without digests, plus CPDA padding.
 *
 * Usage: codec_gen_corpus <outdir>   (tests/fuzz/corpus in the source tree)
 * File format: see fuzz_pdu.c (option byte, split seed byte, stream).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nvmfd/pdu.h>

#define GEN_MAX 65536

struct gen {
	uint8_t b[GEN_MAX];
	size_t len;
};

static struct gen g;

static void gen_start(uint8_t opt, uint8_t seed)
{
	g.len = 0;
	g.b[g.len++] = opt;
	g.b[g.len++] = seed;
}

static void gen_put(const void *p, size_t n)
{
	if (g.len + n > sizeof(g.b))
		return;
	memcpy(g.b + g.len, p, n);
	g.len += n;
}

/* Header already in @h (@n bytes); append @pad zero bytes, @dl data bytes
 * and their digest when the header says so. */
static void gen_pdu(const uint8_t *h, size_t n, uint32_t pad, uint32_t dl)
{
	static uint8_t data[8192];
	static const uint8_t zero[128];
	uint8_t d[4];
	uint32_t v;

	gen_put(h, n);
	gen_put(zero, pad);
	for (uint32_t i = 0; i < dl && i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	gen_put(data, dl);
	if (dl && (h[1] & NVMFD_TCP_F_DDGST)) {
		v = nvmfd_digest(data, dl);
		memcpy(d, &v, 4);
		gen_put(d, 4);
	}
}

static int gen_write(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "gen_corpus: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (fwrite(g.b, 1, g.len, f) != g.len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

static void put_term(uint8_t type)
{
	uint8_t h[200], err[32];
	size_t n;

	for (size_t i = 0; i < sizeof(err); i++)
		err[i] = (uint8_t)i;
	n = nvmfd_pdu_build_term(h, sizeof(h), type, NVMFD_TCP_FES_INVALID_HEADER, 2, err,
				 sizeof(err));
	gen_put(h, n);
}

/* Controller-side stream: what a host sends. @only: 0 all, else one type. */
static void ctrl_stream(bool hd, bool dd, uint8_t only)
{
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_sqe sqe;
	size_t n;

	memset(&sqe, 0, sizeof(sqe));
	n = nvmfd_pdu_build_icreq(h, 0, (uint8_t)((hd ? 1 : 0) | (dd ? 2 : 0)), 0);
	gen_pdu(h, n, 0, 0);
	if (!only || only == NVMFD_TCP_CMD) {
		sqe.opc = NVMFD_ADMIN_FABRICS;
		sqe.cid = 1;
		n = nvmfd_pdu_build_cmd(h, &sqe, 0, hd, dd);
		gen_pdu(h, n, 0, 0);
		sqe.opc = NVMFD_CMD_WRITE;
		sqe.cid = 2;
		n = nvmfd_pdu_build_cmd(h, &sqe, 1024, hd, dd);
		gen_pdu(h, n, 0, 1024);
	}
	if (!only || only == NVMFD_TCP_H2C_DATA) {
		n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 3, 0, 0, 512, hd, dd);
		gen_pdu(h, n, 0, 512);
		n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 3, 0, 512,
					 512, hd, dd);
		gen_pdu(h, n, 0, 512);
	}
	if (!only || only == NVMFD_TCP_H2C_TERM)
		put_term(NVMFD_TCP_H2C_TERM);
}

/* Host-side stream: what a controller sends. */
static void host_stream(bool hd, bool dd, uint8_t only)
{
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_cqe cqe;
	size_t n;

	memset(&cqe, 0, sizeof(cqe));
	n = nvmfd_pdu_build_icresp(h, 0, (uint8_t)((hd ? 1 : 0) | (dd ? 2 : 0)), 131072);
	gen_pdu(h, n, 0, 0);
	if (!only || only == NVMFD_TCP_RSP) {
		cqe.cid = 1;
		n = nvmfd_pdu_build_rsp(h, &cqe, hd);
		gen_pdu(h, n, 0, 0);
	}
	if (!only || only == NVMFD_TCP_C2H_DATA) {
		n = nvmfd_pdu_build_data(h, NVMFD_TCP_C2H_DATA,
					 NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS, 2, 0, 0,
					 700, hd, dd);
		gen_pdu(h, n, 0, 700);
	}
	if (!only || only == NVMFD_TCP_R2T) {
		n = nvmfd_pdu_build_r2t(h, 3, 1, 0, 8192, hd);
		gen_pdu(h, n, 0, 0);
	}
	if (!only || only == NVMFD_TCP_C2H_TERM)
		put_term(NVMFD_TCP_C2H_TERM);
}

int main(int argc, char **argv)
{
	static const uint8_t ctrl_types[] = { 0, NVMFD_TCP_CMD, NVMFD_TCP_H2C_DATA,
					      NVMFD_TCP_H2C_TERM };
	static const uint8_t host_types[] = { 0, NVMFD_TCP_RSP, NVMFD_TCP_C2H_DATA, NVMFD_TCP_R2T,
					      NVMFD_TCP_C2H_TERM };
	char name[128];
	int files = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <outdir>\n", argv[0]);
		return 2;
	}
	for (int dg = 0; dg < 4; dg++) {
		bool hd = dg & 1, dd = dg & 2;

		for (size_t i = 0; i < sizeof(ctrl_types); i++) {
			gen_start((uint8_t)dg, (uint8_t)(7 * i + dg));
			ctrl_stream(hd, dd, ctrl_types[i]);
			snprintf(name, sizeof(name), "ctrl-%s-dg%d",
				 ctrl_types[i] ? nvmfd_pdu_type_str(ctrl_types[i]) : "session", dg);
			if (gen_write(argv[1], name))
				return 1;
			files++;
		}
		for (size_t i = 0; i < sizeof(host_types); i++) {
			gen_start((uint8_t)dg, (uint8_t)(11 * i + dg));
			host_stream(hd, dd, host_types[i]);
			snprintf(name, sizeof(name), "host-%s-dg%d",
				 host_types[i] ? nvmfd_pdu_type_str(host_types[i]) : "session", dg);
			if (gen_write(argv[1], name))
				return 1;
			files++;
		}
	}

	/* CPDA 3 (16-byte alignment): a CapsuleCmd whose data starts at pdo 80. */
	{
		uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
		struct nvmfd_sqe sqe = { .opc = NVMFD_CMD_WRITE, .cid = 5 };
		size_t n;
		uint32_t v;

		gen_start(0x0c | 0x3, 1);
		n = nvmfd_pdu_build_icreq(h, 0, 3, 0);
		gen_pdu(h, n, 0, 0);
		n = nvmfd_pdu_build_cmd(h, &sqe, 256, true, true);
		h[3] = 80;
		v = 80 + 256 + 4;
		memcpy(h + 4, &v, 4);
		v = nvmfd_digest(h, 72);
		memcpy(h + 72, &v, 4);
		gen_pdu(h, n, 80 - 76, 256);
		if (gen_write(argv[1], "ctrl-cpda3-padded"))
			return 1;
		files++;
	}
	printf("wrote %d corpus files to %s\n", files, argv[1]);
	return 0;
}
