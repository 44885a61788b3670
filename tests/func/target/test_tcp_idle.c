// SPDX-License-Identifier: MIT
/*
 * test_tcp_idle.c - regression test for "tcp: clear a stale ring eventfd
 * before sleeping": once I/O has completed and the host goes quiet (the
 * connection stays open), an I/O queue must stop running: its passes and
 * wakeups counters stay put over 300 ms (at most a couple of passes of
 * slack for work already queued). Checked event driven, with idle polling
 * (which must end), with --backend-poll, with a shared completion ring and
 * on per-controller pools (after the queue moved there),
 * on a RAM namespace and on a file namespace (io_uring: the kernel signals
 * the ring's eventfd when it posts a CQE, possibly after the CQE was
 * already reaped by a peek; that stale signal used to wake the queue for
 * ever).
 */
#include <endian.h>
#include <errno.h>

#include "exec_common.h"

static char g_file[64];
static bool g_use_file;

/* Applied after each scenario's tweak: swap the RAM namespace for a file. */
static void use_file_ns(struct nvmfd_cfg *cfg)
{
	char err[NVMFD_CFG_ERRLEN] = "";
	char spec[128];

	if (!g_use_file)
		return;
	snprintf(spec, sizeof(spec), "file:%s,size=%u", g_file, TF_NS_SIZE);
	memset(&cfg->subsys[0].ns[0], 0, sizeof(cfg->subsys[0].ns[0]));
	if (nvmfd_cfg_parse_namespace(&cfg->subsys[0].ns[0], spec, err)) {
		fprintf(stderr, "namespace %s: %s\n", spec, err);
		exit(1);
	}
	cfg->subsys[0].ns[0].nsid = 1;
	cfg->subsys[0].ns[0].enable = true;
}

static void tweak_default(struct nvmfd_cfg *cfg)
{
	use_file_ns(cfg);
}

static void tweak_idle_poll(struct nvmfd_cfg *cfg)
{
	use_file_ns(cfg);
	cfg->exec.idle_poll_us = 100;
}

static void tweak_backend_poll(struct nvmfd_cfg *cfg)
{
	use_file_ns(cfg);
	cfg->exec.idle_poll_us = 100;
	cfg->exec.backend_poll = true;
}

static void tweak_shared(struct nvmfd_cfg *cfg)
{
	use_file_ns(cfg);
	cfg->exec.cq_pool_shared = true;
}

/* @n 4 KiB reads (or flushes: io_uring runs fsync on its io-wq threads,
 * which post the CQE and signal the eventfd from another thread) in flight
 * at once, then every response. Return: backend commands issued. */
static int64_t pipelined_cmds(struct tc_conn *io, unsigned int n, uint8_t opc)
{
	static uint8_t buf[4096];
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	unsigned int rsps = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct nvmfd_sqe sqe;

		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = opc;
		sqe.cid = (uint16_t)(100 + i);
		sqe.nsid = htole32(1);
		sqe.cdw10 = htole32(i * 8);
		sqe.cdw12 = htole32(7);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, NULL, 0,
					opc == NVMFD_CMD_READ ? sizeof(buf) : 0), 0);
	}
	while (rsps < n) {
		TF_CHECK_EQ(tc_recv_pdu(io, hdr, buf, sizeof(buf)), 0);
		if (hdr[0] == NVMFD_TCP_RSP)
			rsps++;
		else
			TF_CHECK_EQ(hdr[0], NVMFD_TCP_C2H_DATA);
	}
	return n;
}

static void tweak_per_ctrl(struct nvmfd_cfg *cfg)
{
	use_file_ns(cfg);
	cfg->exec.wq_per_ctrl = true;
}

static void read_counters(struct tf_target *t, const struct tc_conn *io, int64_t *passes,
			  int64_t *wakeups)
{
	json_object *root = ex_stats(t), *q = ex_queue(root, io);

	*passes = ex_int(q, "passes");
	*wakeups = ex_int(q, "wakeups");
	json_object_put(root);
}

static void run_idle(const char *name, tf_tweak_fn tweak)
{
	struct tc_conn adm, io;
	struct tf_target t;
	uint16_t cntlid = 0;
	int64_t n, p0, w0, p1, w1;

	fprintf(stderr, "idle: %s, %s namespace\n", name, g_use_file ? "file" : "ram");
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 63, 0, false,
				  false), 0);
	n = ex_rw(&io, 32, 5);
	for (int i = 0; i < 40; i++) {
		n += pipelined_cmds(&io, 32, NVMFD_CMD_READ);
		n += pipelined_cmds(&io, 32, NVMFD_CMD_FLUSH);
	}
	ex_wait_completions(&t, &io, n);
	/* let an idle-poll period run out */
	usleep(50000);
	read_counters(&t, &io, &p0, &w0);
	usleep(300000);
	read_counters(&t, &io, &p1, &w1);
	if (p1 - p0 > 2 || w1 - w0 > 2)
		fprintf(stderr, "idle queue kept running: passes %lld -> %lld, wakeups %lld -> %lld\n",
			(long long)p0, (long long)p1, (long long)w0, (long long)w1);
	TF_CHECK(p1 - p0 <= 2);
	TF_CHECK(w1 - w0 <= 2);
	TF_CHECK(p0 > 0);
	/* and it still answers */
	TF_CHECK_EQ(ex_rw(&io, 1, 77), 2);
	tf_stop(&t);
	TF_CHECK_EQ(tc_wait_eof(&io), 0);
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	tc_close(&io);
	tc_close(&adm);
}

int main(void)
{
	int base = tc_count_fds(), fd;

	snprintf(g_file, sizeof(g_file), "/tmp/nvmfd-idle-XXXXXX");
	fd = mkstemp(g_file);
	TF_CHECK(fd >= 0);
	close(fd);
	/* The stale signal needs an io-wq thread to post a CQE just before
	 * its eventfd write while the queue peeks: a race, so the file rounds
	 * run three times (each round caught the old bug about half the time). */
	for (int f = 0; f < 4; f++) {
		g_use_file = f > 0;
		run_idle("event driven", tweak_default);
		run_idle("idle poll 100 us", tweak_idle_poll);
		run_idle("idle poll + backend poll", tweak_backend_poll);
		run_idle("shared completion ring", tweak_shared);
		run_idle("per-controller pools", tweak_per_ctrl);
	}
	unlink(g_file);
	TF_CHECK_EQ(tc_count_fds(), base);
	return 0;
}
