// SPDX-License-Identifier: MIT
/*
 * test_tcp_pipeline.c - many commands in flight on one queue: 64 in-capsule
 * writes sent back to back, then 64 reads of 512 KiB sent before reading
 * anything, so the target's socket fills up and its sends are cut short
 * and resumed; every byte must land in the right command's buffer.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

#define NR 64
#define RLEN (512u << 10)
#define WLEN 16384u

static void fill_sqe(struct nvmfd_sqe *sqe, uint8_t opc, uint16_t cid, uint64_t slba,
		     uint32_t len)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = opc;
	sqe->cid = cid;
	sqe->nsid = htole32(1);
	sqe->cdw10 = htole32((uint32_t)slba);
	sqe->cdw11 = htole32((uint32_t)(slba >> 32));
	sqe->cdw12 = htole32(len / 512 - 1);
}

/* Collect NR completions (CapsuleResp or C2HData SUCCESS) of cids 1..NR. */
static void collect(struct tc_conn *c, bool reads, bool flags_done[NR + 1])
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	unsigned int done = 0, c2h = 0;

	memset(flags_done, 0, (NR + 1) * sizeof(bool));
	while (done < NR) {
		TF_CHECK_EQ(tc_recv_pdu(c, hdr, NULL, 0), 0);
		if (hdr[0] == NVMFD_TCP_C2H_DATA) {
			TF_CHECK(reads);
			c2h++;
			continue;
		}
		TF_CHECK_EQ(hdr[0], NVMFD_TCP_RSP);
		{
			struct nvmfd_cqe cqe;

			memcpy(&cqe, hdr + 8, sizeof(cqe));
			TF_CHECK_EQ(tc_status(&cqe), 0);
			TF_CHECK(cqe.cid >= 1 && cqe.cid <= NR);
			TF_CHECK(!flags_done[cqe.cid]);
			flags_done[cqe.cid] = true;
			done++;
		}
	}
	if (reads)
		TF_CHECK_EQ(c2h, NR * (RLEN / (128u << 10))); /* 128 KiB chunks */
}

int main(void)
{
	static uint8_t wbuf[NR][WLEN];
	uint8_t **rbuf = calloc(NR + 1, sizeof(*rbuf));
	bool done[NR + 1];
	struct tf_target t;
	struct tc_conn adm, io;
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;

	TF_CHECK(rbuf);
	TF_CHECK_EQ(tf_start(&t, NULL), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 127, 0, false, true),
		    0);

	/* 64 in-capsule writes of 16 KiB, each at the start of its 512 KiB
	 * read window, all in flight at once. */
	for (uint16_t i = 1; i <= NR; i++) {
		tc_pattern(wbuf[i - 1], WLEN, 1000u + i);
		fill_sqe(&sqe, NVMFD_CMD_WRITE, i, (uint64_t)i * (RLEN / 512), WLEN);
		TF_CHECK_EQ(tc_send_cmd(&io, &sqe, wbuf[i - 1], WLEN, WLEN), 0);
	}
	collect(&io, false, done);

	/* 64 reads of 512 KiB (32 MiB) before reading a single byte back. */
	for (uint16_t i = 1; i <= NR; i++) {
		rbuf[i] = malloc(RLEN);
		TF_CHECK(rbuf[i]);
		memset(rbuf[i], 0xee, RLEN);
		fill_sqe(&sqe, NVMFD_CMD_READ, i, (uint64_t)i * (RLEN / 512), RLEN);
		TF_CHECK_EQ(tc_send_cmd(&io, &sqe, NULL, 0, RLEN), 0);
	}
	io.cid_data = rbuf;
	io.cid_data_n = NR + 1;
	io.cid_data_cap = RLEN;
	collect(&io, true, done);
	for (uint16_t i = 1; i <= NR; i++) {
		static const uint8_t zero[4096];

		TF_CHECK(!memcmp(rbuf[i], wbuf[i - 1], WLEN));
		/* the rest of the window was never written: RAM reads zeroes */
		for (uint32_t off = WLEN; off < RLEN; off += sizeof(zero))
			TF_CHECK(!memcmp(rbuf[i] + off, zero, sizeof(zero)));
		free(rbuf[i]);
	}

	/* 32 writes of 256 KiB through R2T, all submitted first; the R2Ts are
	 * answered as they arrive (H2CData in MAXH2CDATA pieces), then all are
	 * read back at once. */
	{
		enum { NW = 32 };
		const uint32_t wl = 256u << 10;
		uint8_t **wb = calloc(NW + 1, sizeof(*wb));
		unsigned int r2ts = 0, rsps = 0;

		TF_CHECK(wb);
		for (uint16_t i = 1; i <= NW; i++) {
			wb[i] = malloc(wl);
			TF_CHECK(wb[i]);
			tc_pattern(wb[i], wl, 5000u + i);
			fill_sqe(&sqe, NVMFD_CMD_WRITE, i, 65536 + (uint64_t)i * (wl / 512), wl);
			TF_CHECK_EQ(tc_send_cmd(&io, &sqe, NULL, 0, wl), 0);
		}
		while (rsps < NW) {
			uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];

			TF_CHECK_EQ(tc_recv_pdu(&io, hdr, NULL, 0), 0);
			if (hdr[0] == NVMFD_TCP_R2T) {
				const struct nvmfd_tcp_r2t *r2t = (const void *)hdr;
				uint16_t cid = le16toh(r2t->cccid);
				uint8_t dh[NVMFD_TCP_MAX_HDR_DGST_LEN];

				TF_CHECK(cid >= 1 && cid <= NW);
				TF_CHECK_EQ(le32toh(r2t->r2to), 0);
				TF_CHECK_EQ(le32toh(r2t->r2tl), wl);
				for (uint32_t off = 0; off < wl; off += io.maxh2cdata) {
					uint32_t n = wl - off < io.maxh2cdata ? wl - off : io.maxh2cdata;
					size_t hl = nvmfd_pdu_build_data(
						dh, NVMFD_TCP_H2C_DATA,
						off + n == wl ? NVMFD_TCP_F_DATA_LAST : 0, cid,
						le16toh(r2t->ttag), off, n, false, true);
					uint32_t dg = htole32(nvmfd_digest(wb[cid] + off, n));

					TF_CHECK_EQ(tc_send_raw(&io, dh, hl), 0);
					TF_CHECK_EQ(tc_send_raw(&io, wb[cid] + off, n), 0);
					TF_CHECK_EQ(tc_send_raw(&io, &dg, sizeof(dg)), 0);
				}
				r2ts++;
				continue;
			}
			TF_CHECK_EQ(hdr[0], NVMFD_TCP_RSP);
			TF_CHECK_EQ(tc_status((const struct nvmfd_cqe *)(const void *)(hdr + 8)), 0);
			rsps++;
		}
		TF_CHECK_EQ(r2ts, NW);
		for (uint16_t i = 1; i <= NW; i++) {
			rbuf[i] = malloc(wl);
			TF_CHECK(rbuf[i]);
			fill_sqe(&sqe, NVMFD_CMD_READ, i, 65536 + (uint64_t)i * (wl / 512), wl);
			TF_CHECK_EQ(tc_send_cmd(&io, &sqe, NULL, 0, wl), 0);
		}
		io.cid_data_n = NW + 1;
		io.cid_data_cap = wl;
		for (unsigned int got = 0; got < NW;) {
			uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];

			TF_CHECK_EQ(tc_recv_pdu(&io, hdr, NULL, 0), 0);
			if (hdr[0] == NVMFD_TCP_RSP) {
				TF_CHECK_EQ(tc_status((const struct nvmfd_cqe *)(const void *)(hdr + 8)),
					    0);
				got++;
			}
		}
		for (uint16_t i = 1; i <= NW; i++) {
			TF_CHECK(!memcmp(rbuf[i], wb[i], wl));
			free(rbuf[i]);
			free(wb[i]);
		}
		free(wb);
	}
	free(rbuf);
	tc_close(&io);
	tc_close(&adm);
	tf_stop(&t);
	return 0;
}
