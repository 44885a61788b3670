// SPDX-License-Identifier: MIT
/* test_tcp_rw.c - writes in-capsule and through R2T/H2CData, reads through
 * C2HData, 512 B to 1 MiB, several data PDUs beyond MAXH2CDATA; no digests. */
#include "rw_common.h"

int main(void)
{
	struct tf_target t;

	TF_CHECK_EQ(tf_start(&t, rw_tweak), 0);
	rw_run(&t, false, false);
	tf_stop(&t);
	return 0;
}
