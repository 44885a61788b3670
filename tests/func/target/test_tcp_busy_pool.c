// SPDX-License-Identifier: MIT
/*
 * test_tcp_busy_pool.c - regression test for the keep-alive expiry seen in
 * kernel-host interop (--exec unbound --idle-poll-us 100 --backend-poll):
 * the runtime only fetched readiness events when a worker's run queue was
 * empty, so queues that keep re-queueing themselves (idle polling with
 * steady traffic) on every worker of a pool hid the sockets of every
 * sleeping queue (the admin queue waiting for a Keep Alive, the listener).
 *
 * Deterministic version: one CPU, one worker, an idle-poll period of 10 s,
 * so the admin queue, once it made progress, keeps its worker busy polling
 * for 10 s. Meanwhile a new connection must be accepted and answered (the
 * listener's readiness), and an I/O queue Connect must complete, while the
 * admin queue is still polling: its "rearms" counter (it went to sleep)
 * must not have moved. Bound and unbound pools.
 */
#include <string.h>

#include "exec_common.h"

static int g_cpu;
static enum nvmfd_rt_mode g_mode;

static void tweak(struct nvmfd_cfg *cfg)
{
	cfg->exec.rt.mode = g_mode;
	cfg->exec.rt.scope = NVMFD_RT_SCOPE_CPU;
	cfg->exec.rt.workers_per_pool = 1;
	CPU_ZERO(&cfg->exec.rt.cpus);
	CPU_SET(g_cpu, &cfg->exec.rt.cpus);
	cfg->exec.idle_poll_us = 10000000; /* 10 s: the admin queue keeps polling */
}

static void run(const char *name, enum nvmfd_rt_mode mode)
{
	struct tf_target t;
	struct tc_conn adm, io;
	json_object *root;
	int64_t rearms0, rearms1, polls0, polls1;
	uint16_t cntlid = 0;

	g_mode = mode;
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);

	root = ex_stats(&t);
	rearms0 = ex_int(ex_queue(root, &adm), "rearms");
	polls0 = ex_int(ex_queue(root, &adm), "idle_polls");
	json_object_put(root);

	/* Needs the listener's and the new socket's readiness while the only
	 * worker is busy with the polling admin queue. */
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false, false),
		    0);
	ex_rw(&io, 2, 7);

	root = ex_stats(&t);
	rearms1 = ex_int(ex_queue(root, &adm), "rearms");
	polls1 = ex_int(ex_queue(root, &adm), "idle_polls");
	json_object_put(root);
	printf("%s: admin queue rearms %lld -> %lld, idle polls %lld -> %lld\n", name,
	       (long long)rearms0, (long long)rearms1, (long long)polls0, (long long)polls1);
	TF_CHECK(polls1 > polls0); /* it was polling all along */
	TF_CHECK_EQ(rearms1, rearms0); /* and never slept: served beside it */

	tc_close(&io);
	tc_close(&adm);
	tf_stop(&t);
}

int main(void)
{
	g_cpu = ex_first_cpu();
	run("bound", NVMFD_RT_BOUND);
	run("unbound", NVMFD_RT_UNBOUND);
	return 0;
}
