// SPDX-License-Identifier: MIT
/* test_tcp_sqflow.c - with SQ flow control disabled (Connect CATTR bit 2) a
 * successful read ends with a C2HData carrying SUCCESS and no CapsuleResp
 * (doc/protocol-notes.md §1.6); with it enabled, a CapsuleResp follows. */
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

int main(void)
{
	static uint8_t wbuf[200000], rbuf[200000];
	struct tf_target t;
	struct tc_conn adm, io, io2;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tf_start(&t, NULL), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31,
				  NVMFD_CONNECT_CATTR_DISABLE_SQFLOW, false, false), 0);
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 31, 0, false, false),
		    0);

	tc_pattern(wbuf, 196608, 3);
	TF_CHECK_EQ(tc_rw(&io, true, 1, 0, 384, wbuf, 196608, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(io.success_flag, false); /* writes always get a CapsuleResp */

	memset(rbuf, 0, sizeof(rbuf));
	TF_CHECK_EQ(tc_rw(&io, false, 1, 0, 384, rbuf, 196608, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(io.success_flag, true);
	TF_CHECK_EQ(io.c2h_pdus, 2); /* 192 KiB in 128 KiB chunks */
	TF_CHECK(!memcmp(rbuf, wbuf, 196608));

	/* The next command on the same queue must still line up. */
	TF_CHECK_EQ(tc_rw(&io, false, 1, 0, 8, rbuf, 4096, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(io.success_flag, true);
	TF_CHECK(!memcmp(rbuf, wbuf, 4096));

	/* A failing read (beyond the namespace) gets a CapsuleResp. */
	TF_CHECK_EQ(tc_rw(&io, false, 1, TF_NS_SIZE / 512, 8, rbuf, 4096, 0, &cqe), 0);
	TF_CHECK(tc_status(&cqe) != 0);
	TF_CHECK_EQ(io.success_flag, false);

	/* Flow control on: no SUCCESS flag. */
	TF_CHECK_EQ(tc_rw(&io2, false, 1, 0, 8, rbuf, 4096, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(io2.success_flag, false);

	tc_close(&io2);
	tc_close(&io);
	tc_close(&adm);
	tf_stop(&t);
	return 0;
}
