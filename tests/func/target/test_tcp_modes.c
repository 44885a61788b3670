// SPDX-License-Identifier: MIT
/*
 * test_tcp_modes.c - the data path under each execution setting the
 * transport honours (idle polling, tiny rx/tx budgets and pass deadline,
 * unbound pools, least-loaded and incoming-cpu placement); the per-queue
 * counters must match what the test host sent and received; the target
 * must stop cleanly with connections open and a write waiting for H2CData.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "net/sock.h"
#include "rw_common.h"

static void tweak_idle_poll(struct nvmfd_cfg *cfg)
{
	rw_tweak(cfg);
	cfg->exec.idle_poll_us = 200;
}

static void tweak_budgets(struct nvmfd_cfg *cfg)
{
	rw_tweak(cfg);
	cfg->exec.rx_budget_pdus = 1;
	cfg->exec.tx_budget_pdus = 1;
	cfg->exec.rx_budget_bytes = 4096;
	cfg->exec.tx_budget_bytes = 4096;
	cfg->exec.io_work_deadline_us = 20;
}

static void tweak_unbound(struct nvmfd_cfg *cfg)
{
	rw_tweak(cfg);
	cfg->exec.rt.mode = NVMFD_RT_UNBOUND;
	cfg->exec.rt.scope = NVMFD_RT_SCOPE_SYSTEM;
	cfg->exec.place = NVMFD_RT_PLACE_LEAST_LOADED;
}

static void tweak_incoming(struct nvmfd_cfg *cfg)
{
	rw_tweak(cfg);
	cfg->exec.place = NVMFD_RT_PLACE_INCOMING_CPU;
}

static int64_t jget(json_object *o, const char *k)
{
	json_object *v;

	TF_CHECK(json_object_object_get_ex(o, k, &v));
	return json_object_get_int64(v);
}

/* The stats object of the queue whose peer is @c's socket, or NULL. */
static json_object *find_queue(json_object *root, const struct tc_conn *c)
{
	json_object *ports, *port, *queues;
	char peer[64];

	snprintf(peer, sizeof(peer), "%s:%d", TF_ADDR, nvmfd__sock_local_port(c->fd));
	TF_CHECK(json_object_object_get_ex(root, "ports", &ports));
	TF_CHECK_EQ(json_object_array_length(ports), 1);
	port = json_object_array_get_idx(ports, 0);
	TF_CHECK(json_object_object_get_ex(port, "queues", &queues));
	for (size_t i = 0; i < json_object_array_length(queues); i++) {
		json_object *q = json_object_array_get_idx(queues, i), *p;

		TF_CHECK(json_object_object_get_ex(q, "peer", &p));
		if (!strcmp(json_object_get_string(p), peer))
			return q;
	}
	return NULL;
}

/* Counters are written by the queue owner after the bytes left: wait
 * (bounded) until they match the host's view exactly. */
static void check_stats(struct tf_target *t, const struct tc_conn *io, uint64_t cmds,
			uint64_t r2ts)
{
	char *buf = NULL;
	size_t len = 0;
	int i;

	for (i = 0; i < 500; i++) {
		FILE *f = open_memstream(&buf, &len);
		json_object *root, *q;
		bool match;

		TF_CHECK(f);
		TF_CHECK_EQ(nvmfd_tgt_stats_json(t->tgt, f), 0);
		fclose(f);
		root = json_tokener_parse(buf);
		TF_CHECK(root);
		q = find_queue(root, io);
		TF_CHECK(q);
		TF_CHECK_EQ(jget(q, "qid"), 1);
		match = jget(q, "pdus_rx") == (int64_t)io->pdus_sent &&
			jget(q, "bytes_rx") == (int64_t)io->bytes_sent &&
			jget(q, "pdus_tx") == (int64_t)io->pdus_rcvd &&
			jget(q, "bytes_tx") == (int64_t)io->bytes_rcvd &&
			jget(q, "commands") == (int64_t)cmds &&
			jget(q, "completions") == (int64_t)cmds && jget(q, "r2ts") == (int64_t)r2ts;
		{
			json_object *ss;

			/* every slot is back on the free list */
			TF_CHECK(json_object_object_get_ex(q, "slot_states", &ss));
			TF_CHECK_EQ(jget(q, "slots"), 2 * t->cfg->ports[0].max_queue_size + 1);
			match = match && jget(ss, "free") == jget(q, "slots");
		}
		if (getenv("TT_PRINT_STATS") && (match || i == 499))
			fprintf(stderr, "%s\n", json_object_to_json_string(q));
		if (match || i == 499) {
			if (!match)
				fprintf(stderr, "host: sent %llu PDUs %llu B, rcvd %llu PDUs %llu B; "
					"target: %s\n", (unsigned long long)io->pdus_sent,
					(unsigned long long)io->bytes_sent,
					(unsigned long long)io->pdus_rcvd,
					(unsigned long long)io->bytes_rcvd,
					json_object_to_json_string(q));
			TF_CHECK(match);
			TF_CHECK(jget(q, "passes") > 0);
			json_object_put(root);
			break;
		}
		json_object_put(root);
		free(buf);
		buf = NULL;
		usleep(10000);
	}
	free(buf);
}

static void run_mode(const char *name, tf_tweak_fn tweak)
{
	static uint8_t wbuf[1u << 20], rbuf[1u << 20];
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct tc_conn adm, io, io2;
	struct tf_target t;
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t cntlid = 0;
	uint64_t cmds = 1, r2ts = 0;
	size_t hlen;

	fprintf(stderr, "mode %s\n", name);
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	rw_run(&t, false, false);
	rw_run(&t, true, true);

	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 127, 0, false, true),
		    0);
	io.icd_max = 8192;
	for (uint32_t i = 0; i < 8; i++) {
		uint32_t len = 4096u << i; /* 4 KiB .. 512 KiB */

		tc_pattern(wbuf, len, i);
		TF_CHECK_EQ(tc_rw(&io, true, 1, 2048, len / 512, wbuf, len, 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		r2ts += io.r2ts;
		TF_CHECK_EQ(tc_rw(&io, false, 1, 2048, len / 512, rbuf, len, 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(rbuf, wbuf, len));
		cmds += 2;
	}
	TF_CHECK_EQ(r2ts, 6); /* all but the 4 and 8 KiB writes (in-capsule) */
	check_stats(&t, &io, cmds, r2ts);

	/* Stop with an admin queue, an idle I/O queue and a write that waits
	 * for its H2CData: every queue must be torn down and freed. */
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 31, 0, false, false),
		    0);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 5;
	sqe.nsid = htole32(1);
	sqe.cdw12 = htole32(127);
	sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	sqe.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	sqe.dptr.length = htole32(65536);
	hlen = nvmfd_pdu_build_cmd(hdr, &sqe, 0, false, false);
	TF_CHECK_EQ(tc_send_raw(&io2, hdr, hlen), 0);
	TF_CHECK_EQ(tc_recv_pdu(&io2, hdr, NULL, 0), 0);
	TF_CHECK_EQ(hdr[0], NVMFD_TCP_R2T);
	tf_stop(&t);
	TF_CHECK_EQ(tc_wait_eof(&io2), 0);
	TF_CHECK_EQ(tc_wait_eof(&io), 0);
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	tc_close(&io2);
	tc_close(&io);
	tc_close(&adm);
}

int main(void)
{
	int base = tc_count_fds();

	run_mode("idle-poll", tweak_idle_poll);
	run_mode("budgets", tweak_budgets);
	run_mode("unbound", tweak_unbound);
	run_mode("incoming-cpu", tweak_incoming);
	TF_CHECK_EQ(tc_count_fds(), base);
	return 0;
}
