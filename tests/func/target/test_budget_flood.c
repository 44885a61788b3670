// SPDX-License-Identifier: MIT
/*
 * test_budget_flood.c - the io_work pass budgets under floods, with
 * --rx-budget-pdus 2 and --tx-budget-pdus 2.
 *
 * rx flood: 255 in-capsule 4 KiB writes go out in one burst plus the
 * first 4 bytes of a 256th capsule, without reading anything. The target
 * must answer the 255 while that last capsule is still incomplete in its
 * socket (tx makes progress under the rx flood), and its counters must show
 * that receive loops were cut by the rx budget (rx_budget_exhausted > 0;
 * 127 of them for 255 capsules in practice) and io_work passes ran. Then
 * the last capsule is finished and answered, and every 17th block is read
 * back and compared.
 *
 * tx flood: 128 reads of 256 KiB (32 MiB, far more than the host's fixed
 * 256 KiB receive buffer plus the target's send buffer hold) are sent and
 * nothing is read, so the target's sends block.
 * Then 32 more in-capsule writes are sent: the target must still receive
 * and execute all of them (its "commands" counter reaches 160 while the host
 * has read no byte), i.e. rx makes progress under a tx backlog. Then all
 * reads are collected and checked, the 32 writes read back.
 *
 * tx flood over written data, then overwritten (a second I/O queue, header
 * and data digests): 128 reads of 256 KiB of a written pattern are sent and
 * nothing is read; then an in-capsule 4 KiB write into the range of every
 * read. The reads' data is sent from the RAM namespace itself (lent, not
 * copied; doc/perf.md §7), and reads and writes are concurrent commands,
 * so NVMe lets each logical block be old or new data: every 512-byte
 * block of every read must be one or the other (and every data digest
 * right: the digest is computed under the same lock as the kernel's copy,
 * and a PDU the socket did not take is built again later). Some reads
 * must show new data, which a target copying at read time would never
 * send: the reads still waiting when the writes ran went out after them.
 * The written blocks read back new.
 *
 * Waits are bounded (TC_TIMEOUT_MS per receive, 10 s for counters); no
 * assertion depends on timing.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

#define QSIZE 512
#define NW 256 /* rx flood: writes */
#define WLEN 4096u
#define NR 128 /* tx flood: reads */
#define RLEN (256u << 10)
#define NX 32 /* writes sent behind the reads */

static void tweak(struct nvmfd_cfg *cfg)
{
	cfg->exec.rx_budget_pdus = 2;
	cfg->exec.tx_budget_pdus = 2;
	cfg->ports[0].max_queue_size = QSIZE;
}

static void fill_sqe(struct nvmfd_sqe *sqe, uint8_t opc, uint16_t cid, uint64_t slba,
		     uint32_t len)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opc = opc;
	sqe->cid = cid;
	sqe->nsid = htole32(1);
	sqe->cdw10 = htole32((uint32_t)slba);
	sqe->cdw11 = htole32((uint32_t)(slba >> 32));
	sqe->cdw12 = htole32(len / 512 - 1);
}

static int64_t jget(json_object *o, const char *k)
{
	json_object *v;

	TF_CHECK(json_object_object_get_ex(o, k, &v));
	return json_object_get_int64(v);
}

/* One snapshot of the counters of the queue whose peer is @c's socket. */
struct qstats {
	int64_t commands, completions, pdus_rx, pdus_tx, bytes_tx, passes, rx_exh, tx_exh, eagain;
};

static void get_stats(struct tf_target *t, const struct tc_conn *c, struct qstats *s)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	json_object *root, *ports, *queues, *found = NULL;
	char *buf = NULL, peer[64];
	size_t len = 0;
	FILE *f;

	TF_CHECK_EQ(getsockname(c->fd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(peer, sizeof(peer), "%s:%u", TF_ADDR, ntohs(sin.sin_port));
	f = open_memstream(&buf, &len);
	TF_CHECK(f);
	TF_CHECK_EQ(nvmfd_tgt_stats_json(t->tgt, f), 0);
	fclose(f);
	root = json_tokener_parse(buf);
	TF_CHECK(root);
	TF_CHECK(json_object_object_get_ex(root, "ports", &ports));
	TF_CHECK_EQ(json_object_array_length(ports), 1);
	TF_CHECK(json_object_object_get_ex(json_object_array_get_idx(ports, 0), "queues",
					   &queues));
	for (size_t i = 0; i < json_object_array_length(queues); i++) {
		json_object *q = json_object_array_get_idx(queues, i), *p;

		TF_CHECK(json_object_object_get_ex(q, "peer", &p));
		if (!strcmp(json_object_get_string(p), peer))
			found = q;
	}
	TF_CHECK(found);
	TF_CHECK(jget(found, "qid") >= 1);
	s->commands = jget(found, "commands");
	s->completions = jget(found, "completions");
	s->pdus_rx = jget(found, "pdus_rx");
	s->pdus_tx = jget(found, "pdus_tx");
	s->bytes_tx = jget(found, "bytes_tx");
	s->passes = jget(found, "passes");
	s->rx_exh = jget(found, "rx_budget_exhausted");
	s->tx_exh = jget(found, "tx_budget_exhausted");
	s->eagain = jget(found, "eagain_sends");
	json_object_put(root);
	free(buf);
}

/* A snapshot once every command received so far has been counted as
 * completed (the owner counts a completion after its bytes left). */
static void settled_stats(struct tf_target *t, const struct tc_conn *c, struct qstats *s)
{
	for (int i = 0; i < 1000; i++) {
		get_stats(t, c, s);
		if (s->commands > 0 && s->completions == s->commands)
			return;
		usleep(10000);
	}
	TF_CHECK_EQ(s->completions, s->commands);
}

/* Receive one CapsuleResp (C2HData before it go to c->cid_data); return its
 * cid after checking a success status. */
static uint16_t recv_rsp(struct tc_conn *c, unsigned int *c2h)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_cqe cqe;

	for (;;) {
		TF_CHECK_EQ(tc_recv_pdu(c, hdr, NULL, 0), 0);
		if (hdr[0] == NVMFD_TCP_C2H_DATA) {
			TF_CHECK(c2h);
			(*c2h)++;
			continue;
		}
		TF_CHECK_EQ(hdr[0], NVMFD_TCP_RSP);
		memcpy(&cqe, hdr + 8, sizeof(cqe));
		TF_CHECK_EQ(tc_status(&cqe), 0);
		return cqe.cid;
	}
}

/* The bytes of one in-capsule write as tc_send_cmd() would send them, built
 * by sending them through a socketpair (keeps the framing in one place). */
static size_t capture_cmd(struct tc_conn *c, struct nvmfd_sqe *sqe, const void *data,
			  uint8_t *out, size_t cap)
{
	int sv[2], fd = c->fd;
	ssize_t n;
	size_t got = 0;

	TF_CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c->fd = sv[0];
	TF_CHECK_EQ(tc_send_cmd(c, sqe, data, WLEN, WLEN), 0);
	c->fd = fd;
	close(sv[0]);
	while ((n = read(sv[1], out + got, cap - got)) > 0)
		got += (size_t)n;
	TF_CHECK_EQ(n, 0);
	close(sv[1]);
	return got;
}

static void rx_flood(struct tf_target *t, struct tc_conn *io)
{
	static uint8_t wbuf[NW][WLEN];
	static uint8_t burst[NW * (WLEN + 256)];
	uint8_t rbuf[WLEN];
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	struct qstats s0, s1, s2;
	bool seen[NW + 1] = { false };
	size_t len = 0, last_len, half;
	int i;

	settled_stats(t, io, &s0);
	for (i = 1; i <= NW; i++) {
		tc_pattern(wbuf[i - 1], WLEN, 7000u + (uint32_t)i);
		fill_sqe(&sqe, NVMFD_CMD_WRITE, (uint16_t)i, (uint64_t)i * (WLEN / 512), WLEN);
		last_len = capture_cmd(io, &sqe, wbuf[i - 1], burst + len, sizeof(burst) - len);
		TF_CHECK(last_len > WLEN);
		len += last_len;
	}
	/* everything but the last capsule's bytes after its first 4 (not even
	 * its common header is complete), in one write */
	half = last_len - 4;
	TF_CHECK_EQ(tc_send_raw(io, burst, len - half), 0);
	for (i = 1; i < NW; i++) {
		uint16_t cid = recv_rsp(io, NULL);

		TF_CHECK(cid >= 1 && cid < NW);
		TF_CHECK(!seen[cid]);
		seen[cid] = true;
	}
	/* 255 answered while capsule 256 is still incomplete on the wire;
	 * the owner updates its counters after the bytes left (bounded wait) */
	for (i = 0; i < 1000; i++) {
		get_stats(t, io, &s1);
		if (s1.completions - s0.completions == NW - 1)
			break;
		usleep(10000);
	}
	TF_CHECK_EQ(s1.commands - s0.commands, NW - 1);
	TF_CHECK_EQ(s1.completions - s0.completions, NW - 1);
	fprintf(stderr, "rx flood: passes %lld, rx_budget_exhausted %lld, "
		"tx_budget_exhausted %lld\n", (long long)(s1.passes - s0.passes),
		(long long)(s1.rx_exh - s0.rx_exh), (long long)(s1.tx_exh - s0.tx_exh));
	TF_CHECK(s1.rx_exh - s0.rx_exh > 0);
	TF_CHECK(s1.passes - s0.passes > 0);

	TF_CHECK_EQ(tc_send_raw(io, burst + len - half, half), 0);
	TF_CHECK_EQ(recv_rsp(io, NULL), NW);
	for (i = 0; i < 1000; i++) {
		get_stats(t, io, &s2);
		if (s2.completions - s0.completions == NW)
			break;
		usleep(10000);
	}
	TF_CHECK_EQ(s2.completions - s0.completions, NW);
	TF_CHECK_EQ(s2.commands - s0.commands, NW);
	/* the data of the flood landed where it was addressed */
	for (i = 1; i <= NW; i += 17) {
		TF_CHECK_EQ(tc_rw(io, false, 1, (uint64_t)i * (WLEN / 512), WLEN / 512, rbuf, WLEN,
				  0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(rbuf, wbuf[i - 1], WLEN));
	}
}

static void tx_flood(struct tf_target *t, struct tc_conn *io)
{
	static uint8_t xbuf[NX][WLEN];
	uint8_t **rbuf = calloc(NR + NX + 1, sizeof(*rbuf));
	uint8_t chk[WLEN];
	bool seen[NR + NX + 1] = { false };
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	struct qstats s0, s1, s2;
	uint64_t base = 4096; /* LBAs past the rx flood's */
	unsigned int c2h = 0;
	int i, tries;

	TF_CHECK(rbuf);
	/* A fixed receive buffer (no autotuning, whatever tcp_rmem allows):
	 * with the target's send buffer (tcp_wmem max, 4 MiB by default) far
	 * less than the 32 MiB of read data can be in flight, so the target's
	 * sends must block while the host reads nothing. */
	{
		int rcvbuf = 256 << 10;

		TF_CHECK_EQ(setsockopt(io->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	}
	settled_stats(t, io, &s0);
	for (i = 1; i <= NR; i++) {
		rbuf[i] = malloc(RLEN);
		TF_CHECK(rbuf[i]);
		memset(rbuf[i], 0xee, RLEN);
		fill_sqe(&sqe, NVMFD_CMD_READ, (uint16_t)i, base + (uint64_t)i * (RLEN / 512), RLEN);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, NULL, 0, RLEN), 0);
	}
	/* nothing read yet: 32 writes behind 32 MiB of pending read data */
	for (i = 0; i < NX; i++) {
		uint16_t cid = (uint16_t)(NR + 1 + i);

		tc_pattern(xbuf[i], WLEN, 9000u + (uint32_t)i);
		fill_sqe(&sqe, NVMFD_CMD_WRITE, cid, (uint64_t)i * (WLEN / 512), WLEN);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, xbuf[i], WLEN, WLEN), 0);
	}
	/* The target must take in every capsule although its sends are
	 * stuck (bounded wait for its counters, 10 s). */
	for (tries = 0; tries < 1000; tries++) {
		get_stats(t, io, &s1);
		if (s1.commands - s0.commands == NR + NX)
			break;
		usleep(10000);
	}
	fprintf(stderr, "tx flood: commands %lld/%d with nothing read; pdus_tx %lld, "
		"eagain_sends %lld, tx_budget_exhausted %lld, rx_budget_exhausted %lld\n",
		(long long)(s1.commands - s0.commands), NR + NX,
		(long long)(s1.pdus_tx - s0.pdus_tx), (long long)(s1.eagain - s0.eagain),
		(long long)(s1.tx_exh - s0.tx_exh), (long long)(s1.rx_exh - s0.rx_exh));
	TF_CHECK_EQ(s1.commands - s0.commands, NR + NX);
	/* the sends really were blocked (the host read nothing): not all of
	 * the read data could have left yet */
	TF_CHECK(s1.eagain - s0.eagain > 0);
	TF_CHECK(s1.bytes_tx - s0.bytes_tx < (int64_t)NR * RLEN);

	io->cid_data = rbuf;
	io->cid_data_n = NR + 1;
	io->cid_data_cap = RLEN;
	for (i = 0; i < NR + NX; i++) {
		uint16_t cid = recv_rsp(io, &c2h);

		TF_CHECK(cid >= 1 && cid <= NR + NX);
		TF_CHECK(!seen[cid]);
		seen[cid] = true;
	}
	io->cid_data = NULL;
	io->cid_data_n = 0;
	TF_CHECK(c2h >= NR);
	for (tries = 0; tries < 1000; tries++) {
		get_stats(t, io, &s2);
		if (s2.completions - s0.completions == NR + NX)
			break;
		usleep(10000);
	}
	TF_CHECK_EQ(s2.completions - s0.completions, NR + NX);
	for (i = 1; i <= NR; i++) {
		static const uint8_t zero[4096];

		/* never written: RAM reads zeroes, the 0xee fill is gone */
		for (uint32_t off = 0; off < RLEN; off += sizeof(zero))
			TF_CHECK(!memcmp(rbuf[i] + off, zero, sizeof(zero)));
		free(rbuf[i]);
	}
	free(rbuf);
	for (i = 0; i < NX; i++) {
		TF_CHECK_EQ(tc_rw(io, false, 1, (uint64_t)i * (WLEN / 512), WLEN / 512, chk, WLEN,
				  0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(chk, xbuf[i], WLEN));
	}
}

/* Wait (bounded) until the queue has received @n commands since @s0. */
static void wait_commands(struct tf_target *t, struct tc_conn *io, const struct qstats *s0,
			  int64_t n)
{
	struct qstats s;

	for (int tries = 0; tries < 1000; tries++) {
		get_stats(t, io, &s);
		if (s.commands - s0->commands == n)
			return;
		usleep(10000);
	}
	TF_CHECK_EQ(s.commands - s0->commands, n);
}

#define OVW_OFF (64u << 10) /* where each read's range is overwritten */

static void tx_flood_overwrite(struct tf_target *t, struct tc_conn *io)
{
	uint8_t **rbuf = calloc(2 * NR + 1, sizeof(*rbuf));
	uint8_t *old = malloc(RLEN), (*neu)[WLEN] = malloc((size_t)NR * WLEN);
	uint64_t base = 0; /* rewritten first: what earlier phases left does not matter */
	uint32_t nlb = RLEN / 512;
	unsigned int c2h = 0, reads_new = 0;
	bool seen[2 * NR + 1] = { false };
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	struct qstats s0;
	int i, rcvbuf = 256 << 10;

	TF_CHECK(rbuf && old && neu);
	for (i = 1; i <= NR; i++) {
		tc_pattern(old, RLEN, 5000u + (uint32_t)i);
		TF_CHECK_EQ(tc_rw(io, true, 1, base + (uint64_t)i * nlb, nlb, old, RLEN, 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		tc_pattern(neu[i - 1], WLEN, 6000u + (uint32_t)i);
	}
	TF_CHECK_EQ(setsockopt(io->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	settled_stats(t, io, &s0);
	for (i = 1; i <= NR; i++) {
		rbuf[i] = malloc(RLEN);
		TF_CHECK(rbuf[i]);
		fill_sqe(&sqe, NVMFD_CMD_READ, (uint16_t)i, base + (uint64_t)i * nlb, RLEN);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, NULL, 0, RLEN), 0);
	}
	wait_commands(t, io, &s0, NR); /* every read has run (and lent its data) */
	for (i = 1; i <= NR; i++) {
		fill_sqe(&sqe, NVMFD_CMD_WRITE, (uint16_t)(NR + i),
			 base + (uint64_t)i * nlb + OVW_OFF / 512, WLEN);
		TF_CHECK_EQ(tc_send_cmd(io, &sqe, neu[i - 1], WLEN, WLEN), 0);
	}
	wait_commands(t, io, &s0, 2 * NR); /* the writes ran, the reads still wait */

	io->cid_data = rbuf;
	io->cid_data_n = NR + 1;
	io->cid_data_cap = RLEN;
	for (i = 0; i < 2 * NR; i++) {
		uint16_t cid = recv_rsp(io, &c2h); /* a digest error fails here */

		TF_CHECK(cid >= 1 && cid <= 2 * NR);
		TF_CHECK(!seen[cid]);
		seen[cid] = true;
	}
	io->cid_data = NULL;
	io->cid_data_n = 0;
	for (i = 1; i <= NR; i++) {
		bool any_new = false;

		tc_pattern(old, RLEN, 5000u + (uint32_t)i);
		for (uint32_t off = 0; off < RLEN; off += 512) {
			const uint8_t *b = rbuf[i] + off;
			bool in_ovw = off >= OVW_OFF && off < OVW_OFF + WLEN;

			if (!memcmp(b, old + off, 512))
				continue;
			if (in_ovw && !memcmp(b, neu[i - 1] + (off - OVW_OFF), 512)) {
				any_new = true;
				continue;
			}
			fprintf(stderr, "read %d: block +%u is neither old nor new data\n", i, off);
			TF_CHECK(false);
		}
		reads_new += any_new;
		free(rbuf[i]);
	}
	fprintf(stderr, "tx flood over written data: %u of %d reads sent the new data of the "
		"concurrent write\n", reads_new, NR);
	TF_CHECK(reads_new > 0);
	for (i = 1; i <= NR; i += 9) {
		uint8_t chk[WLEN];

		TF_CHECK_EQ(tc_rw(io, false, 1, base + (uint64_t)i * nlb + OVW_OFF / 512, WLEN / 512,
				  chk, WLEN, 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(chk, neu[i - 1], WLEN));
	}
	free(rbuf);
	free(old);
	free(neu);
}

int main(void)
{
	struct tf_target t;
	struct tc_conn adm, io;
	uint16_t cntlid = 0;

	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, QSIZE - 1, 0, false,
				  false), 0);
	io.icd_max = WLEN;
	rx_flood(&t, &io);
	tx_flood(&t, &io);
	tc_close(&io);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, QSIZE - 1, 0, true,
				  true), 0);
	io.icd_max = WLEN;
	tx_flood_overwrite(&t, &io);
	tc_close(&io);
	tc_close(&adm);
	tf_stop(&t);
	return 0;
}
