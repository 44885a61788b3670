// SPDX-License-Identifier: MIT
/*
 * test_ic_timeout.c - connections that never finish setting up are closed
 * by the target: no ICReq, or no successful Connect, within the configured
 * deadline of accept (cfg icreq_timeout_ms / connect_timeout_ms, set to
 * TIMEOUT_MS here). A connected host that keeps a queue longer than the
 * deadline is not affected, and every fd the idle connections cost is
 * given back.
 *
 * Only bounded waits: the target must close within the client's 10 s
 * receive timeout (TC_TIMEOUT_MS); it can never close before the deadline,
 * which starts at accept, after the client's connect() returned.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

#define TIMEOUT_MS 300u
/* A host that is to be served must set up within TIMEOUT_MS too; on a
 * loaded machine this test process may miss that (closed, rightly), so
 * such a setup is tried again for up to RETRY_S. */
#define RETRY_S 60u

static struct tf_target t;

static void tweak(struct nvmfd_cfg *cfg)
{
	cfg->icreq_timeout_ms = TIMEOUT_MS;
	cfg->connect_timeout_ms = TIMEOUT_MS;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* tc_verify_io() on the target, tried again while the setup misses the
 * deadline (see RETRY_S). Return: its last result. */
static int verify_io_retry(uint32_t seed)
{
	uint64_t t0 = now_ms();
	int ret;

	while ((ret = tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, seed)) != 0 &&
	       now_ms() - t0 < RETRY_S * 1000u)
		fprintf(stderr, "  verify host missed the %u ms setup deadline? (%d) again\n",
			TIMEOUT_MS, ret);
	return ret;
}

/* The target closes @c (EOF or reset) no earlier than the deadline. */
static void expect_closed(struct tc_conn *c, uint64_t t0)
{
	TF_CHECK_EQ(tc_wait_eof(c), 0);
	TF_CHECK(now_ms() - t0 >= TIMEOUT_MS);
	TF_CHECK(!c->got_term);
	tc_close(c);
}

/* (a) connect and say nothing */
static void case_silent(void)
{
	struct tc_conn c;
	uint64_t t0 = now_ms();

	TF_CHECK_EQ(tc_open(&c, TF_ADDR, t.port), 0);
	expect_closed(&c, t0);
}

/* (b) the first 8 bytes (common header) of an ICReq, then nothing */
static void case_partial_icreq(void)
{
	static const uint8_t ch[8] = { NVMFD_TCP_ICREQ, 0, 128, 0, 128, 0, 0, 0 };
	struct tc_conn c;
	uint64_t t0 = now_ms();

	TF_CHECK_EQ(tc_open(&c, TF_ADDR, t.port), 0);
	TF_CHECK_EQ(tc_send_raw(&c, ch, sizeof(ch)), 0);
	expect_closed(&c, t0);
}

/* (c) a complete ICReq (ICResp received), then no Connect */
static void case_no_connect(void)
{
	struct tc_conn c;
	uint64_t t0 = now_ms();

	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK(c.maxh2cdata >= NVMFD_TCP_MIN_MAXH2CDATA);
	expect_closed(&c, t0);
}

/* (d) a connected admin + I/O queue pair outlives the deadline many times
 * over, doing I/O on the I/O queue and nothing on the admin queue. */
static void case_connected(void)
{
	static uint8_t wbuf[4096], rbuf[4096];
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;
	uint64_t val = 0, t0;
	unsigned int n = 0;

	/* the setup itself must beat the deadline: tried again (RETRY_S) */
	for (t0 = now_ms();;) {
		int r = tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid);

		if (r == 0) {
			r = tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false,
					  false);
			if (r == 0)
				break;
			tc_close(&io);
		}
		tc_close(&adm);
		TF_CHECK(now_ms() - t0 < RETRY_S * 1000u);
		fprintf(stderr, "  host missed the %u ms setup deadline? (%d) again\n", TIMEOUT_MS,
			r);
	}
	t0 = now_ms();
	while (now_ms() - t0 < 4 * TIMEOUT_MS) {
		tc_pattern(wbuf, sizeof(wbuf), 100 + n);
		TF_CHECK_EQ(tc_step(tc_rw(&io, true, 1, (n % 64) * 8, 8, wbuf, 4096, 0, &cqe), &cqe), 0);
		memset(rbuf, 0, sizeof(rbuf));
		TF_CHECK_EQ(tc_step(tc_rw(&io, false, 1, (n % 64) * 8, 8, rbuf, 4096, 0, &cqe), &cqe), 0);
		TF_CHECK(!memcmp(wbuf, rbuf, sizeof(rbuf)));
		n++;
		usleep(20000);
	}
	TF_CHECK(n > 0);
	/* the idle admin queue is still there and answers */
	TF_CHECK_EQ(tc_step(tc_prop_get(&adm, NVMFD_REG_CSTS, false, &val, &cqe), &cqe), 0);
	TF_CHECK(val & NVMFD_CSTS_RDY);
	tc_close(&io);
	tc_close(&adm);
}

/* (e) many idle connections of each kind at once: all closed, fds back */
static void case_many(void)
{
	static const uint8_t ch[8] = { NVMFD_TCP_ICREQ, 0, 128, 0, 128, 0, 0, 0 };
	struct tc_conn c[48];
	int base, now = -1;
	uint64_t t0;

	/* warm up so lazily created runtime state is in the baseline; the
	 * baseline is taken once the target freed the warm-up's queues (its
	 * stats say none is left), not after a guessed delay */
	TF_CHECK_EQ(verify_io_retry(7), 0);
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	base = tc_count_fds();
	TF_CHECK(base > 0);
	t0 = now_ms();
	for (unsigned int i = 0; i < 48; i++) {
		if (i % 3 == 0) {
			TF_CHECK_EQ(tc_open(&c[i], TF_ADDR, t.port), 0);
		} else if (i % 3 == 1) {
			TF_CHECK_EQ(tc_open(&c[i], TF_ADDR, t.port), 0);
			TF_CHECK_EQ(tc_send_raw(&c[i], ch, sizeof(ch)), 0);
		} else {
			TF_CHECK_EQ(tc_open_ic(&c[i], TF_ADDR, t.port, false, false), 0);
		}
	}
	/* each one costs the target fds while it is open */
	TF_CHECK(tc_count_fds() > base + 48);
	for (unsigned int i = 0; i < 48; i++)
		expect_closed(&c[i], t0);
	/* Teardown ends asynchronously: once the target counts no queue
	 * (each is counted until every fd of it is closed), exactly the
	 * baseline's fds are open */
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	now = tc_count_fds();
	TF_CHECK_EQ(now, base);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "silent", case_silent },	     { "partial_icreq", case_partial_icreq },
	{ "no_connect", case_no_connect }, { "connected", case_connected },
	{ "many", case_many },
};

int main(int argc, char **argv)
{
	int ran = 0;

	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(t.cfg->icreq_timeout_ms, TIMEOUT_MS);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		fprintf(stderr, "case %s\n", cases[i].name);
		cases[i].fn();
		/* The target still serves a fresh host. The host itself is held
		 * to the same 0.3 s setup deadlines: on a loaded machine (seen at
		 * load 14 on 2 CPUs) it can miss them and be closed, rightly;
		 * tries for up to RETRY_S (was 5 tries, a count of its own that
		 * a load can exhaust) keep the check about the target. */
		TF_CHECK_EQ(verify_io_retry(i + 1), 0);
		ran++;
	}
	TF_CHECK(ran > 0);
	tf_stop(&t);
	return 0;
}
