// SPDX-License-Identifier: MIT
/* test_tcp_term.c - one malformed PDU gets a C2HTermReq and closes that
 * connection only; another connection keeps working. */
#include <endian.h>
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

int main(void)
{
	uint8_t buf[4096], pdu[72];
	struct nvmfd_tcp_cmd *cmd = (void *)pdu;
	struct tf_target t;
	struct tc_conn adm, io, bad;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tf_start(&t, NULL), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false, false),
		    0);

	TF_CHECK_EQ(tc_open_ic(&bad, TF_ADDR, t.port, false, false), 0);
	memset(pdu, 0, sizeof(pdu));
	cmd->ch.type = NVMFD_TCP_CMD;
	cmd->ch.hlen = 70; /* CapsuleCmd HLEN must be 72 */
	cmd->ch.plen = htole32(72);
	TF_CHECK_EQ(tc_send_raw(&bad, pdu, sizeof(pdu)), 0);
	TF_CHECK_EQ(tc_expect_term(&bad), TC_TERM);
	TF_CHECK_EQ(bad.term_fes, NVMFD_TCP_FES_INVALID_HEADER);
	TF_CHECK_EQ(bad.term_fei, 2); /* offset of HLEN */
	TF_CHECK(bad.term_hdr_len >= 8);
	TF_CHECK_EQ(bad.term_hdr[0], NVMFD_TCP_CMD);
	TF_CHECK_EQ(bad.term_hdr[2], 70);
	TF_CHECK_EQ(tc_wait_eof(&bad), 0);
	tc_close(&bad);

	tc_pattern(buf, sizeof(buf), 11);
	TF_CHECK_EQ(tc_rw(&io, true, 1, 0, 8, buf, sizeof(buf), TC_F_R2T, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	memset(buf, 0, sizeof(buf));
	TF_CHECK_EQ(tc_rw(&io, false, 1, 0, 8, buf, sizeof(buf), 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	{
		uint8_t exp[4096];

		tc_pattern(exp, sizeof(exp), 11);
		TF_CHECK(!memcmp(exp, buf, sizeof(buf)));
	}
	TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, 5), 0);

	tc_close(&io);
	tc_close(&adm);
	tf_stop(&t);
	return 0;
}
