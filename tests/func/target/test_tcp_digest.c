// SPDX-License-Identifier: MIT
/* test_tcp_digest.c - the data-path scenario with header and data digests
 * negotiated (and each digest alone). */
#include "rw_common.h"

int main(void)
{
	struct tf_target t;

	TF_CHECK_EQ(tf_start(&t, rw_tweak), 0);
	rw_run(&t, true, true);
	rw_run(&t, true, false);
	rw_run(&t, false, true);
	tf_stop(&t);
	return 0;
}
