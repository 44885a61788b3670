// SPDX-License-Identifier: MIT
/*
 * test_tcp_kato.c - keep-alive expiry: a controller whose host stays silent
 * past KATO is torn down by the target, which closes the admin and I/O
 * connections from its housekeeping thread (ops->shutdown_queue, any
 * thread); the target keeps serving others.
 */
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

static void tweak(struct nvmfd_cfg *cfg)
{
	cfg->kato_grace_ms = 0;
}

int main(void)
{
	struct tf_target t;
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_open_ic(&adm, TF_ADDR, t.port, false, false), 0);
	adm.kato_ms = 1000;
	TF_CHECK_EQ(tc_connect(&adm, 0, 31, 0, TF_SUBNQN, TC_HOSTNQN, 0xffff, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	cntlid = (uint16_t)cqe.result;
	TF_CHECK_EQ(tc_prop_set(&adm, NVMFD_REG_CC, false, 1u | (6u << 16) | (4u << 20), &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	{
		uint64_t csts = 0;

		for (int i = 0; i < 500 && !(csts & NVMFD_CSTS_RDY); i++)
			TF_CHECK_EQ(tc_prop_get(&adm, NVMFD_REG_CSTS, false, &csts, &cqe), 0);
		TF_CHECK(csts & NVMFD_CSTS_RDY);
	}
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false, false),
		    0);
	/* Say nothing: both connections must be closed by the target (the
	 * client's receive timeout, 10 s, bounds the wait). */
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	TF_CHECK_EQ(tc_wait_eof(&io), 0);
	tc_close(&io);
	tc_close(&adm);
	TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, 3), 0);
	tf_stop(&t);
	return 0;
}
