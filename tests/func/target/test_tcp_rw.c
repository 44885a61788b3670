// SPDX-License-Identifier: MIT
/* test_tcp_rw.c - writes in-capsule and through R2T/H2CData, reads through
 * C2HData, 512 B to 1 MiB, several data PDUs beyond MAXH2CDATA; no digests. */
#include "rw_common.h"

/* In-capsule data off on I/O queues: every write goes through R2T, the
 * Connect (a Fabrics command, 1 KiB in the capsule) still works. */
static void tweak_no_icd(struct nvmfd_cfg *cfg)
{
	rw_tweak(cfg);
	cfg->ports[0].inline_data_size = 0;
}

int main(void)
{
	struct tf_target t;

	TF_CHECK_EQ(tf_start(&t, rw_tweak), 0);
	rw_run(&t, false, false);
	tf_stop(&t);

	TF_CHECK_EQ(tf_start(&t, tweak_no_icd), 0);
	rw_run(&t, false, false);
	tf_stop(&t);
	return 0;
}
