// SPDX-License-Identifier: MIT
/* test_tcp_io_connect.c - I/O queue Connect after the admin bring-up; a
 * second I/O queue; a command on each. */
#include <endian.h>
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

int main(void)
{
	uint8_t buf[4096];
	struct tf_target t;
	struct tc_conn adm, io1, io2;
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tf_start(&t, NULL), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);

	TF_CHECK_EQ(tc_open_ic(&io1, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_connect(&io1, 1, 31, 0, TF_SUBNQN, TC_HOSTNQN, cntlid, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(cqe.sqid, 1);
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 15, 0, false, false),
		    0);

	/* Flush (no data) and a 4 KiB write/read on each queue. */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_FLUSH;
	sqe.nsid = htole32(1);
	TF_CHECK_EQ(tc_cmd(&io1, &sqe, NULL, 0, false, 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(cqe.sqid, 1);

	tc_pattern(buf, sizeof(buf), 7);
	TF_CHECK_EQ(tc_rw(&io2, true, 1, 100, 8, buf, sizeof(buf), TC_F_R2T, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(cqe.sqid, 2);
	memset(buf, 0, sizeof(buf));
	TF_CHECK_EQ(tc_rw(&io1, false, 1, 100, 8, buf, sizeof(buf), 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	{
		uint8_t exp[4096];

		tc_pattern(exp, sizeof(exp), 7);
		TF_CHECK(!memcmp(exp, buf, sizeof(buf)));
	}

	tc_close(&io2);
	tc_close(&io1);
	tc_close(&adm);
	tf_stop(&t);
	return 0;
}
