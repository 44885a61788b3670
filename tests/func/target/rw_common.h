/* SPDX-License-Identifier: MIT */
/*
 * rw_common.h - the write/read-back body shared by the data-path scenarios
 * (included by one test file each; everything is static).
 */
#ifndef NVMFD_TESTS_RW_COMMON_H
#define NVMFD_TESTS_RW_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

#define RW_MAXH2CDATA (32u << 10) /* small, so big I/Os need many data PDUs */

static void rw_tweak(struct nvmfd_cfg *cfg)
{
	cfg->maxh2cdata = RW_MAXH2CDATA;
}

static uint32_t rw_div_up(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

/*
 * For each size: write in-capsule (when it fits the port's limit) and via
 * R2T at different LBAs, read both back, compare, and check how many data
 * PDUs travelled.
 */
static void rw_run(const struct tf_target *t, bool hdgst, bool ddgst)
{
	static const uint32_t sizes[] = { 512, 4096, 8192, 16384, 65536, 131072, 262144, 1u << 20 };
	uint32_t icd = t->cfg->ports[0].inline_data_size;
	uint8_t *wbuf = malloc(1u << 20), *rbuf = malloc(1u << 20);
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;
	uint64_t lba = 0;

	TF_CHECK(wbuf && rbuf);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t->port, TF_SUBNQN, hdgst, ddgst, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t->port, TF_SUBNQN, cntlid, 1, 63, 0, hdgst,
				  ddgst), 0);
	TF_CHECK_EQ(io.maxh2cdata, RW_MAXH2CDATA);
	io.icd_max = icd;
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i], nlb = len / 512;

		for (int via_r2t = 0; via_r2t < 2; via_r2t++) {
			if (!via_r2t && len > icd)
				continue;
			tc_pattern(wbuf, len, len * 2 + (uint32_t)via_r2t);
			TF_CHECK_EQ(tc_rw(&io, true, 1, lba, nlb, wbuf, len,
					  via_r2t ? TC_F_R2T : 0, &cqe), 0);
			TF_CHECK_EQ(tc_status(&cqe), 0);
			TF_CHECK_EQ(io.r2ts, via_r2t ? 1 : 0);
			TF_CHECK_EQ(io.h2c_pdus, via_r2t ? rw_div_up(len, RW_MAXH2CDATA) : 0);

			memset(rbuf, 0, len);
			TF_CHECK_EQ(tc_rw(&io, false, 1, lba, nlb, rbuf, len, 0, &cqe), 0);
			TF_CHECK_EQ(tc_status(&cqe), 0);
			TF_CHECK_EQ(io.c2h_pdus, rw_div_up(len, RW_MAXH2CDATA));
			TF_CHECK_EQ(io.success_flag, false);
			if (memcmp(rbuf, wbuf, len)) {
				fprintf(stderr, "data mismatch: len %u via_r2t %d\n", len, via_r2t);
				exit(1);
			}
			lba += nlb;
		}
	}
	/* A write over the port's in-capsule limit is refused (doc/protocol-notes.md §1.8). */
	TF_CHECK_EQ(tc_rw(&io, true, 1, 0, (icd + 4096) / 512, wbuf, icd + 4096, TC_F_ICD, &cqe),
		    0);
	TF_CHECK_EQ(tc_status(&cqe), NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_OFFSET) |
					     NVMFD_STATUS_DNR);
	/* ... and the queue still works afterwards. */
	TF_CHECK_EQ(tc_rw(&io, false, 1, 0, 1, rbuf, 512, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	tc_close(&io);
	tc_close(&adm);
	free(wbuf);
	free(rbuf);
}

#endif /* NVMFD_TESTS_RW_COMMON_H */
