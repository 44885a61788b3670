// SPDX-License-Identifier: MIT
/*
 * hostile_tcp.c - malformed and abusive NVMe/TCP input against a live,
 * in-process target. One case per run (argv[1]); after each case a fresh
 * connection must still write and read back data (tc_verify_io).
 *
 * Expected FES/FEI values come from the codec's own stateless check
 * (nvmfd_pdu_check_hdr) where the codec decides, and from NVMe/TCP 1.0
 * where the transport decides (R2T/H2CData rules, ICReq parameters).
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

static struct tf_target t;

static void build_cmd(uint8_t *pdu, uint16_t cid)
{
	struct nvmfd_tcp_cmd *cmd = (void *)pdu;

	memset(pdu, 0, sizeof(*cmd));
	cmd->ch.type = NVMFD_TCP_CMD;
	cmd->ch.hlen = sizeof(*cmd);
	cmd->ch.plen = htole32(sizeof(*cmd));
	cmd->sqe.opc = NVMFD_ADMIN_IDENTIFY;
	cmd->sqe.cid = cid;
	cmd->sqe.cdw10 = NVMFD_ID_CNS_CTRL;
	cmd->sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	cmd->sqe.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	cmd->sqe.dptr.length = htole32(4096);
}

/* The TermReq the codec says a receiver must send for @hdr. */
static void codec_expect(const void *hdr, size_t len, bool hdgst, bool ddgst, bool ic_done,
			 uint16_t *fes, uint32_t *fei)
{
	struct nvmfd_pdu_rx_opts o = {
		.role = NVMFD_PDU_ROLE_CTRL,
		.hdgst = hdgst,
		.ddgst = ddgst,
		.max_data = t.cfg->maxh2cdata > 16384 ? t.cfg->maxh2cdata : 16384,
	};
	struct nvmfd_pdu_error e;

	memset(&e, 0, sizeof(e));
	TF_CHECK(nvmfd_pdu_check_hdr(hdr, len, &o, ic_done, &e) != NVMFD_PDU_OK);
	*fes = e.fes;
	*fei = e.fei;
}

/* Send @len bytes on a connection (after ICReq unless !ic) and expect a
 * C2HTermReq with @fes/@fei, then EOF. */
static void expect_term_after(bool ic, bool hdgst, bool ddgst, const void *pdu, size_t len,
			      uint16_t fes, uint32_t fei)
{
	struct tc_conn c;

	if (ic)
		TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, hdgst, ddgst), 0);
	else
		TF_CHECK_EQ(tc_open(&c, TF_ADDR, t.port), 0);
	TF_CHECK_EQ(tc_send_raw(&c, pdu, len), 0);
	TF_CHECK_EQ(tc_expect_term(&c), TC_TERM);
	TF_CHECK_EQ(c.term_fes, fes);
	TF_CHECK_EQ(c.term_fei, fei);
	TF_CHECK(c.term_hdr_len >= 8 && c.term_hdr_len <= NVMFD_TCP_TERM_ERR_DATA_MAX);
	TF_CHECK(!memcmp(c.term_hdr, pdu, 8));
	TF_CHECK_EQ(tc_wait_eof(&c), 0);
	tc_close(&c);
}

static void case_bad_type(void)
{
	uint8_t pdu[24] = { 0x08, 0, 24, 0, 24, 0, 0, 0 };
	uint16_t fes;
	uint32_t fei;

	codec_expect(pdu, sizeof(pdu), false, false, true, &fes, &fei);
	TF_CHECK_EQ(fes, NVMFD_TCP_FES_INVALID_HEADER);
	TF_CHECK_EQ(fei, 0);
	expect_term_after(true, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_bad_hlen(void)
{
	uint8_t pdu[72];

	build_cmd(pdu, 1);
	pdu[2] = 70;
	expect_term_after(true, false, false, pdu, sizeof(pdu), NVMFD_TCP_FES_INVALID_HEADER, 2);
}

static void case_bad_pdo(void)
{
	uint8_t pdu[72 + 512];
	struct nvmfd_tcp_cmd *cmd = (void *)pdu;
	uint16_t fes;
	uint32_t fei;

	build_cmd(pdu, 1);
	memset(pdu + 72, 0, 512);
	cmd->ch.pdo = 16; /* inside the header */
	cmd->ch.plen = htole32(sizeof(pdu));
	codec_expect(pdu, 72, false, false, true, &fes, &fei);
	TF_CHECK_EQ(fes, NVMFD_TCP_FES_INVALID_HEADER);
	TF_CHECK_EQ(fei, 3);
	expect_term_after(true, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_plen_lt_hlen(void)
{
	uint8_t pdu[72];
	uint16_t fes;
	uint32_t fei;

	build_cmd(pdu, 1);
	((struct nvmfd_tcp_cmd *)(void *)pdu)->ch.plen = htole32(16);
	codec_expect(pdu, sizeof(pdu), false, false, true, &fes, &fei);
	TF_CHECK_EQ(fes, NVMFD_TCP_FES_INVALID_HEADER);
	TF_CHECK_EQ(fei, 4);
	expect_term_after(true, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_data_over_max(void)
{
	uint8_t pdu[72];
	struct nvmfd_tcp_cmd *cmd = (void *)pdu;
	uint32_t dlen = 4u << 20;
	uint16_t fes;
	uint32_t fei;

	build_cmd(pdu, 1);
	cmd->ch.pdo = 72;
	cmd->ch.plen = htole32(72 + dlen);
	cmd->sqe.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	cmd->sqe.dptr.length = htole32(dlen);
	codec_expect(pdu, sizeof(pdu), false, false, true, &fes, &fei);
	TF_CHECK(fes != 0);
	/* only the header is sent: the target must not wait for 4 MiB */
	expect_term_after(true, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_dgst_flag_unnegotiated(void)
{
	uint8_t pdu[76];
	uint16_t fes;
	uint32_t fei;

	build_cmd(pdu, 1);
	pdu[1] = NVMFD_TCP_F_HDGST;
	((struct nvmfd_tcp_cmd *)(void *)pdu)->ch.plen = htole32(76);
	memset(pdu + 72, 0, 4);
	codec_expect(pdu, sizeof(pdu), false, false, true, &fes, &fei);
	TF_CHECK(fes != 0);
	expect_term_after(true, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_hdgst_mismatch(void)
{
	uint8_t pdu[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_sqe sqe;
	size_t len;
	uint16_t fes;
	uint32_t fei;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_KEEP_ALIVE;
	sqe.cid = 3;
	sqe.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	len = nvmfd_pdu_build_cmd(pdu, &sqe, 0, true, false);
	TF_CHECK_EQ(len, 76);
	pdu[73] ^= 0x55;
	codec_expect(pdu, len, true, false, true, &fes, &fei);
	TF_CHECK_EQ(fes, NVMFD_TCP_FES_HDR_DIGEST);
	expect_term_after(true, true, false, pdu, len, fes, fei);
}

/* Data digest error: the command fails with Transient Transport Error and
 * the connection stays usable (NVMe/TCP 1.0 §7.4.6.2). */
static void case_ddgst_mismatch(void)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN], data[4096], rbuf[4096];
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;
	uint32_t dg;
	size_t hlen;

	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false, true),
		    0);
	tc_pattern(data, sizeof(data), 99);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 77;
	sqe.nsid = htole32(1);
	sqe.cdw10 = htole32(1000);
	sqe.cdw12 = htole32(7);
	sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	sqe.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	sqe.dptr.length = htole32(sizeof(data));
	hlen = nvmfd_pdu_build_cmd(hdr, &sqe, sizeof(data), false, true);
	dg = htole32(nvmfd_digest(data, sizeof(data)) ^ 1);
	TF_CHECK_EQ(tc_send_raw(&io, hdr, hlen), 0);
	TF_CHECK_EQ(tc_send_raw(&io, data, sizeof(data)), 0);
	TF_CHECK_EQ(tc_send_raw(&io, &dg, sizeof(dg)), 0);
	TF_CHECK_EQ(tc_recv_pdu(&io, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_RSP);
	memcpy(&cqe, hdr + 8, sizeof(cqe));
	TF_CHECK_EQ(cqe.cid, 77);
	TF_CHECK_EQ(tc_status(&cqe), NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_TRANSIENT_TR_ERROR));
	/* the data was not written; the queue still works */
	memset(rbuf, 0xee, sizeof(rbuf));
	TF_CHECK_EQ(tc_rw(&io, false, 1, 1000, 8, rbuf, sizeof(rbuf), 0, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK(memcmp(rbuf, data, sizeof(data)) != 0);
	tc_close(&io);
	tc_close(&adm);
}

static void case_pdu_before_icreq(void)
{
	uint8_t pdu[72];
	uint16_t fes;
	uint32_t fei;

	build_cmd(pdu, 1);
	codec_expect(pdu, sizeof(pdu), false, false, false, &fes, &fei);
	TF_CHECK_EQ(fes, NVMFD_TCP_FES_PDU_SEQUENCE);
	expect_term_after(false, false, false, pdu, sizeof(pdu), fes, fei);
}

static void case_second_icreq(void)
{
	uint8_t pdu[128];
	size_t len = nvmfd_pdu_build_icreq(pdu, 0, 0, 0);

	expect_term_after(true, false, false, pdu, len, NVMFD_TCP_FES_PDU_SEQUENCE, 0);
}

static void case_icreq_hpda(void)
{
	uint8_t pdu[128];
	size_t len = nvmfd_pdu_build_icreq(pdu, 3, 0, 0);

	expect_term_after(false, false, false, pdu, len, NVMFD_TCP_FES_UNSUPPORTED_PARAM, 10);
}

static void case_cmd_before_connect(void)
{
	uint8_t id[4096];
	struct tc_conn c;
	struct nvmfd_cqe cqe;

	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_identify(&c, NVMFD_ID_CNS_CTRL, 0, id, &cqe), 0);
	TF_CHECK(tc_status(&cqe) != 0);
	TF_CHECK(tc_status(&cqe) & NVMFD_STATUS_DNR);
	tc_close(&c);
}

static void case_connect_unknown_nqn(void)
{
	struct tc_conn c;
	struct nvmfd_cqe cqe;

	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_connect(&c, 0, 31, 0, "nqn.2026-11.io.nvmfd:nope", TC_HOSTNQN, 0xffff, &cqe),
		    0);
	TF_CHECK_EQ(tc_status(&cqe) & 0x7ff,
		    NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_CONNECT_INVALID_PARAM));
	tc_close(&c);
}

static void case_io_unconnected_qid(void)
{
	uint8_t buf[4096];
	struct tc_conn adm, c;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;

	/* I/O Connect naming a controller that does not exist */
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_connect(&c, 1, 31, 0, TF_SUBNQN, TC_HOSTNQN, (uint16_t)(cntlid + 100), &cqe),
		    0);
	TF_CHECK(tc_status(&cqe) != 0);
	/* and an NVM Read on that still unconnected queue */
	TF_CHECK_EQ(tc_rw(&c, false, 1, 0, 8, buf, sizeof(buf), 0, &cqe), 0);
	TF_CHECK(tc_status(&cqe) != 0);
	tc_close(&c);
	tc_close(&adm);
}

/* An I/O queue with a write waiting for H2CData; returns the R2T. */
static void r2t_setup(struct tc_conn *adm, struct tc_conn *io, struct nvmfd_tcp_r2t *r2t,
		      uint32_t len)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;
	size_t hlen;

	TF_CHECK_EQ(tc_admin_enable(adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false, false),
		    0);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 9;
	sqe.nsid = htole32(1);
	sqe.cdw12 = htole32(len / 512 - 1);
	sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	sqe.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	sqe.dptr.length = htole32(len);
	hlen = nvmfd_pdu_build_cmd(hdr, &sqe, 0, false, false);
	TF_CHECK_EQ(tc_send_raw(io, hdr, hlen), 0);
	TF_CHECK_EQ(tc_recv_pdu(io, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_R2T);
	memcpy(r2t, hdr, sizeof(*r2t));
	TF_CHECK_EQ(le16toh(r2t->cccid), 9);
	TF_CHECK_EQ(le32toh(r2t->r2to), 0);
	TF_CHECK_EQ(le32toh(r2t->r2tl), len);
}

static void h2c_expect_term_fl(uint16_t ttag, uint32_t datao, uint32_t datal, uint8_t flags,
			       uint16_t fes, uint32_t fei)
{
	static uint8_t data[65536];
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_tcp_r2t r2t;
	struct tc_conn adm, io;
	size_t hlen;

	r2t_setup(&adm, &io, &r2t, 8192);
	if (ttag == 0xffff)
		ttag = (uint16_t)(le16toh(r2t.ttag) + 1);
	else
		ttag = le16toh(r2t.ttag);
	hlen = nvmfd_pdu_build_data(hdr, NVMFD_TCP_H2C_DATA, flags, 9, ttag, datao, datal, false,
				    false);
	TF_CHECK_EQ(tc_send_raw(&io, hdr, hlen), 0);
	TF_CHECK_EQ(tc_send_raw(&io, data, datal), 0);
	TF_CHECK_EQ(tc_expect_term(&io), TC_TERM);
	TF_CHECK_EQ(io.term_fes, fes);
	TF_CHECK_EQ(io.term_fei, fei);
	TF_CHECK_EQ(io.term_hdr[0], NVMFD_TCP_H2C_DATA);
	tc_close(&io);
	tc_close(&adm);
}

static void h2c_expect_term(uint16_t ttag, uint32_t datao, uint32_t datal, uint16_t fes,
			    uint32_t fei)
{
	h2c_expect_term_fl(ttag, datao, datal, NVMFD_TCP_F_DATA_LAST, fes, fei);
}

/* The last H2CData of the R2T without LAST_PDU, and LAST_PDU too early. */
static void case_h2c_last_flag(void)
{
	h2c_expect_term_fl(0, 0, 8192, 0, NVMFD_TCP_FES_INVALID_HEADER, 1);
	h2c_expect_term_fl(0, 0, 4096, NVMFD_TCP_F_DATA_LAST, NVMFD_TCP_FES_INVALID_HEADER, 1);
}

static void case_h2c_unknown_ttag(void)
{
	h2c_expect_term(0xffff, 0, 8192, NVMFD_TCP_FES_INVALID_HEADER, 10);
}

static void case_h2c_beyond_r2t(void)
{
	/* 8 KiB R2T window; 4 KiB at offset 4096 skips the first half */
	h2c_expect_term(0, 4096, 4096, NVMFD_TCP_FES_DATA_OUT_OF_RANGE, 12);
	/* 16 KiB from offset 0 overruns the window */
	h2c_expect_term(0, 0, 16384, NVMFD_TCP_FES_DATA_OUT_OF_RANGE, 12);
}

static void case_drop_mid_pdu(void)
{
	uint8_t pdu[72];
	struct tc_conn c;

	build_cmd(pdu, 1);
	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(tc_send_raw(&c, pdu, 30), 0);
	tc_close(&c);
}

static void case_drop_mid_r2t(void)
{
	static uint8_t data[65536];
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_tcp_r2t r2t;
	struct tc_conn adm, io;
	size_t hlen;

	r2t_setup(&adm, &io, &r2t, 65536);
	hlen = nvmfd_pdu_build_data(hdr, NVMFD_TCP_H2C_DATA, 0, 9, le16toh(r2t.ttag), 0, 32768,
				    false, false);
	TF_CHECK_EQ(tc_send_raw(&io, hdr, hlen), 0);
	TF_CHECK_EQ(tc_send_raw(&io, data, 20000), 0);
	tc_close(&io);
	tc_close(&adm);
}

/*
 * Reads the host never takes: the target's sends wait on a full socket
 * (with --net uring: a sendmsg SQE in flight in the kernel). One
 * connection closes abruptly with them pending; another stays open until
 * the target stops, so that tf_stop() tears it down with the send still
 * in flight (ASan: nothing freed that the kernel may still read).
 */
static struct tc_conn unread_adm, unread_io;
static bool unread_open;

/* The largest value of "@key" in the target's stats JSON. */
static unsigned long long stats_max(const char *key)
{
	unsigned long long best = 0;
	char *buf = NULL, pat[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	TF_CHECK(f != NULL);
	TF_CHECK_EQ(nvmfd_tgt_stats_json(t.tgt, f), 0);
	fclose(f);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (char *p = strstr(buf, pat); p; p = strstr(p + 1, pat)) {
		unsigned long long v = strtoull(p + strlen(pat), NULL, 10);

		if (v > best)
			best = v;
	}
	free(buf);
	return best;
}

/* Wait (up to 30 s: sanitizers and load slow the target) until the
 * largest "@key" is non-zero (@nonzero) or zero; return it. */
static unsigned long long stats_wait(const char *key, bool nonzero)
{
	unsigned long long v = 0;

	for (int i = 0; i < 3000; i++) {
		v = stats_max(key);
		if ((v > 0) == nonzero)
			break;
		usleep(10000);
	}
	return v;
}

static void unread_fill(struct tc_conn *adm, struct tc_conn *io)
{
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tc_admin_enable(adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 63, 0, false, false),
		    0);
	for (uint32_t i = 0; i < 48; i++) {
		/* 512 KiB each, 24 MiB in all: more than the sockets buffer */
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_CMD_READ;
		sqe.cid = (uint16_t)(100 + i);
		sqe.nsid = htole32(1);
		sqe.cdw10 = htole32(i * 1024);
		sqe.cdw12 = htole32(1024 - 1);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, NULL, 0, 512u << 10), 0);
	}
	/* the target fills the socket and a send waits (with uring: in
	 * flight in the kernel) */
	TF_CHECK(stats_wait("eagain_sends", true) > 0);
}

static void case_unread_reads(void)
{
	struct tc_conn adm, io;
	const char *net = getenv("TF_NET");

	unread_fill(&adm, &io);
	if (net && !strncmp(net, "uring", 5))
		TF_CHECK(stats_max("sends") > 0);
	tc_close(&io);
	tc_close(&adm);
	/* its queues gone, so that the next wait sees the new connection's */
	TF_CHECK_EQ(stats_wait("eagain_sends", false), 0);
	unread_fill(&unread_adm, &unread_io);
	unread_open = true; /* closed after tf_stop() */
}

static void case_cycles(void)
{
	int base, now = -1;

	/* warm up once so lazily created runtime state is in the baseline */
	TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, 1), 0);
	/* the baseline once the warm-up's queues are freed (not a guessed delay) */
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	base = tc_count_fds();
	TF_CHECK(base > 0);
	for (int i = 0; i < 1000; i++) {
		struct tc_conn c;

		if (i % 50 == 0) {
			uint16_t cntlid;

			TF_CHECK_EQ(tc_admin_enable(&c, TF_ADDR, t.port, TF_SUBNQN, false, false,
						    &cntlid), 0);
		} else if (i % 2) {
			TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
		} else {
			TF_CHECK_EQ(tc_open(&c, TF_ADDR, t.port), 0);
		}
		tc_close(&c);
	}
	/* Teardown is asynchronous. The last connection got its ICResp, so
	 * every one before it was accepted (one accept work, FIFO backlog)
	 * and counted as a queue: once no queue is left, every fd is closed */
	TF_CHECK_EQ(tf_wait_idle(&t, 60), 0);
	now = tc_count_fds();
	TF_CHECK_EQ(now, base);
}

/* Garbage after a valid ICReq: pure noise, and noise behind a plausible
 * common header of every type. The target must close (with or without a
 * TermReq) and never crash or hang. Deterministic seeds. */
static void case_random(void)
{
	uint8_t pdu[600];

	for (uint32_t i = 0; i < 200; i++) {
		struct tc_conn c;
		size_t len = 8 + (i * 37) % (sizeof(pdu) - 8);
		int ret;

		tc_pattern(pdu, sizeof(pdu), 7000 + i);
		if (i % 2) {
			static const uint8_t hl[] = { 128, 128, 24, 24, 72, 24, 24, 24, 24, 24 };
			uint8_t type = (uint8_t)(i / 2 % 10);

			pdu[0] = type;
			pdu[1] &= 0x0f;
			pdu[2] = hl[type];
			pdu[3] = (i % 3) ? 0 : pdu[2];
			{
				uint32_t plen = htole32((uint32_t)len);

				memcpy(pdu + 4, &plen, 4);
			}
		}
		TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, i % 4 == 1, i % 4 == 3), 0);
		ret = tc_send_raw(&c, pdu, len);
		TF_CHECK(ret == 0 || ret == -ECONNRESET || ret == -EPIPE);
		/* a plausible PDU may still be waiting for more bytes: stop
		 * sending; the target must close once we do */
		shutdown(c.fd, SHUT_WR);
		ret = tc_expect_term(&c);
		TF_CHECK(ret == TC_TERM || ret == 0);
		if (ret == TC_TERM)
			TF_CHECK(c.term_fes >= 1 && c.term_fes <= 6);
		tc_close(&c);
	}
}

/* Append @data and its data digest to the @n header bytes in @all, send
 * that PDU one byte per send on @c and expect a successful CapsuleResp. */
static void send_bytewise_ok(struct tc_conn *c, uint8_t *all, size_t n, const uint8_t *data,
			     size_t dlen)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	uint32_t dg = htole32(nvmfd_digest(data, dlen));

	memcpy(all + n, data, dlen);
	n += dlen;
	memcpy(all + n, &dg, 4);
	n += 4;
	for (size_t i = 0; i < n; i++)
		TF_CHECK_EQ(tc_send_raw(c, all + i, 1), 0);
	TF_CHECK_EQ(tc_recv_pdu(c, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_RSP);
	TF_CHECK_EQ(tc_status((const struct nvmfd_cqe *)(const void *)(hdr + 8)), 0);
}

/* Every byte of an in-capsule write, an R2T write (H2CData) and the
 * ICReq in its own send: the receiver must reassemble any fragmentation. */
static void case_byte_by_byte(void)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN], data[4096], rbuf[4096], all[200 + 4096];
	struct nvmfd_tcp_r2t r2t;
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;
	size_t hlen, n;

	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_open(&io, TF_ADDR, t.port), 0);
	hlen = nvmfd_pdu_build_icreq(hdr, 0, NVMFD_TCP_DGST_HDR | NVMFD_TCP_DGST_DATA, 0);
	for (size_t i = 0; i < hlen; i++)
		TF_CHECK_EQ(tc_send_raw(&io, hdr + i, 1), 0);
	TF_CHECK_EQ(tc_recv_pdu(&io, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_ICRESP);
	io.hdgst = io.ddgst = true;
	nvmfd_pdu_rx_ic_done(&io.rx, true, true, 0);
	io.maxh2cdata = le32toh(((struct nvmfd_tcp_icresp *)(void *)hdr)->maxh2cdata);
	TF_CHECK_EQ(tc_connect(&io, 1, 31, 0, TF_SUBNQN, TC_HOSTNQN, cntlid, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);

	/* in-capsule write, 1 byte per send */
	tc_pattern(data, sizeof(data), 31);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 21;
	sqe.nsid = htole32(1);
	sqe.cdw10 = htole32(3000);
	sqe.cdw12 = htole32(7);
	sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	sqe.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	sqe.dptr.length = htole32(sizeof(data));
	n = nvmfd_pdu_build_cmd(all, &sqe, sizeof(data), true, true);
	send_bytewise_ok(&io, all, n, data, sizeof(data));

	/* R2T write of the same data at another LBA, H2CData 1 byte per send */
	sqe.cid = 22;
	sqe.cdw10 = htole32(3100);
	sqe.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	hlen = nvmfd_pdu_build_cmd(hdr, &sqe, 0, true, true);
	TF_CHECK_EQ(tc_send_raw(&io, hdr, hlen), 0);
	TF_CHECK_EQ(tc_recv_pdu(&io, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_R2T);
	memcpy(&r2t, hdr, sizeof(r2t));
	n = nvmfd_pdu_build_data(all, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 22,
				 le16toh(r2t.ttag), 0, sizeof(data), true, true);
	send_bytewise_ok(&io, all, n, data, sizeof(data));

	for (uint64_t lba = 3000; lba <= 3100; lba += 100) {
		memset(rbuf, 0, sizeof(rbuf));
		TF_CHECK_EQ(tc_rw(&io, false, 1, lba, 8, rbuf, sizeof(rbuf), 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(rbuf, data, sizeof(data)));
	}
	tc_close(&io);
	tc_close(&adm);
}

/*
 * A malformed PDU on one queue must not disturb another queue of the same
 * worker (with TF_NET=uring-worker: of the same worker ring). The target
 * runs on one CPU for this case (ring_neighbour_tweak()), so every queue
 * is on one pool. Queue B has 16 reads in flight when queue A sends a PDU
 * of an unknown type: A gets its C2HTermReq and is closed, B receives
 * every completion with its data and goes on with verified I/O.
 */
static bool one_cpu; /* ring_neighbour_tweak() ran */

static void ring_neighbour_tweak(struct nvmfd_cfg *cfg)
{
	cpu_set_t aff;

	one_cpu = true;
	TF_CHECK_EQ(sched_getaffinity(0, sizeof(aff), &aff), 0);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &aff)) {
			CPU_ZERO(&cfg->exec.rt.cpus);
			CPU_SET(c, &cfg->exec.rt.cpus);
			return;
		}
	}
}

static void case_ring_neighbour(void)
{
	static uint8_t wbuf[4096], rbuf[4096];
	uint8_t bad[24] = { 0x08, 0, 24, 0, 24, 0, 0, 0 };
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct tc_conn adm_a, io_a, adm_b, io_b;
	const char *net = getenv("TF_NET");
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t cntlid_a = 0, cntlid_b = 0;
	unsigned int done = 0;

	TF_CHECK_EQ(tc_admin_enable(&adm_b, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid_b), 0);
	TF_CHECK_EQ(tc_io_connect(&io_b, TF_ADDR, t.port, TF_SUBNQN, cntlid_b, 1, 63, 0, false,
				  false), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm_a, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid_a), 0);
	TF_CHECK_EQ(tc_io_connect(&io_a, TF_ADDR, t.port, TF_SUBNQN, cntlid_a, 1, 63, 0, false,
				  false), 0);
	if (one_cpu)
		TF_CHECK_EQ(stats_max("ncpus"), 1); /* one pool: one worker (ring) */
	if (net && !strcmp(net, "uring-worker"))
		TF_CHECK(stats_max("waits") > 0); /* its workers sleep in the ring */
	tc_pattern(wbuf, sizeof(wbuf), 77);
	TF_CHECK_EQ(tc_step(tc_rw(&io_b, true, 1, 6000, 8, wbuf, sizeof(wbuf), 0, &cqe), &cqe), 0);
	for (uint16_t i = 0; i < 16; i++) {
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_CMD_READ;
		sqe.cid = (uint16_t)(300 + i);
		sqe.nsid = htole32(1);
		sqe.cdw10 = htole32(6000);
		sqe.cdw12 = htole32(8 - 1);
		TF_CHECK_EQ(tc_send_cmd(&io_b, &sqe, NULL, 0, sizeof(rbuf)), 0);
	}
	TF_CHECK_EQ(tc_send_raw(&io_a, bad, sizeof(bad)), 0);
	TF_CHECK_EQ(tc_expect_term(&io_a), TC_TERM);
	TF_CHECK_EQ(io_a.term_fes, NVMFD_TCP_FES_INVALID_HEADER);
	TF_CHECK_EQ(tc_wait_eof(&io_a), 0);
	tc_close(&io_a);
	tc_close(&adm_a);
	/* all 16 reads of B complete, every one with the data written */
	while (done < 16) {
		const struct nvmfd_tcp_ch *ch = (const void *)hdr;

		memset(rbuf, 0, sizeof(rbuf));
		TF_CHECK_EQ(tc_recv_pdu(&io_b, hdr, rbuf, sizeof(rbuf)), 0);
		if (ch->type == NVMFD_TCP_C2H_DATA) {
			const struct nvmfd_tcp_data *d = (const void *)hdr;

			TF_CHECK_EQ(le32toh(d->datao), 0);
			TF_CHECK_EQ(le32toh(d->datal), sizeof(rbuf));
			TF_CHECK(!memcmp(rbuf, wbuf, sizeof(rbuf)));
			if (ch->flags & NVMFD_TCP_F_DATA_SUCCESS)
				done++;
		} else {
			TF_CHECK_EQ(ch->type, NVMFD_TCP_RSP);
			TF_CHECK_EQ(nvmfd_cqe_status(
					    &((const struct nvmfd_tcp_rsp *)(const void *)hdr)->cqe), 0);
			done++;
		}
	}
	memset(rbuf, 0, sizeof(rbuf));
	TF_CHECK_EQ(tc_step(tc_rw(&io_b, false, 1, 6000, 8, rbuf, sizeof(rbuf), 0, &cqe), &cqe), 0);
	TF_CHECK(!memcmp(rbuf, wbuf, sizeof(rbuf)));
	tc_close(&io_b);
	tc_close(&adm_b);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "bad_type", case_bad_type },
	{ "bad_hlen", case_bad_hlen },
	{ "bad_pdo", case_bad_pdo },
	{ "plen_lt_hlen", case_plen_lt_hlen },
	{ "data_over_max", case_data_over_max },
	{ "dgst_flag_unnegotiated", case_dgst_flag_unnegotiated },
	{ "hdgst_mismatch", case_hdgst_mismatch },
	{ "ddgst_mismatch", case_ddgst_mismatch },
	{ "pdu_before_icreq", case_pdu_before_icreq },
	{ "second_icreq", case_second_icreq },
	{ "icreq_hpda", case_icreq_hpda },
	{ "cmd_before_connect", case_cmd_before_connect },
	{ "connect_unknown_nqn", case_connect_unknown_nqn },
	{ "io_unconnected_qid", case_io_unconnected_qid },
	{ "h2c_unknown_ttag", case_h2c_unknown_ttag },
	{ "h2c_beyond_r2t", case_h2c_beyond_r2t },
	{ "h2c_last_flag", case_h2c_last_flag },
	{ "drop_mid_pdu", case_drop_mid_pdu },
	{ "drop_mid_r2t", case_drop_mid_r2t },
	{ "random", case_random },
	{ "byte_by_byte", case_byte_by_byte },
	{ "cycles", case_cycles },
	{ "unread_reads", case_unread_reads },
	{ "ring_neighbour", case_ring_neighbour },
};

int main(int argc, char **argv)
{
	int ran = 0;

	/* ring_neighbour alone: every queue on one pool */
	TF_CHECK_EQ(tf_start(&t, argc > 1 && !strcmp(argv[1], "ring_neighbour") ?
					 ring_neighbour_tweak :
					 NULL),
		    0);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		fprintf(stderr, "case %s\n", cases[i].name);
		cases[i].fn();
		TF_CHECK_EQ(tc_verify_io(TF_ADDR, t.port, TF_SUBNQN, i + 1), 0);
		ran++;
	}
	TF_CHECK(ran > 0);
	tf_stop(&t);
	if (unread_open) {
		tc_close(&unread_io);
		tc_close(&unread_adm);
	}
	return 0;
}
