// SPDX-License-Identifier: MIT
/*
 * test_host_nvmfd.c - the host library against the real nvmfd target,
 * started in-process on 127.0.0.1 (ephemeral port) with two RAM namespaces
 * of 32 MiB (512 B and 4 KiB logical blocks).
 *
 * For each digest setting (none, header, data, both): connect with two I/O
 * queues, check Identify results, write/read-compare 512 B .. 1 MiB (in
 * capsule, single R2T, several H2CData chunks, several C2HData), Write
 * Zeroes, Dataset Management, Flush, an out-of-range read (error status),
 * a short verify workload over both queues, per-poll rx/tx budgets and the
 * empty-poll counter, then an orderly disconnect.
 * Discovery is checked once. Last, a namespace added to and removed from
 * the running target is announced to a connected host by an AEN.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvmfd/host.h>

#include "cfg/cfg.h"
#include "internal/target.h"
#include "../../../tools/nvmf-perf/perf.h"
#include "../../lib/host_check.h"

#define NQN "nqn.2026-11.io.nvmfd:host-func"
/* Poll @qp until @s completes; the library bounds it with its timeout. */
static void wait_io(struct nvmfd_host_qp *qp, struct hc_cpl *s)
{
	while (!s->done) {
		int r = nvmfd_host_qp_wait(qp, 100);

		CHECK(r >= 0 || s->done, "qp failed: %s", nvmfd_host_qp_errmsg(qp));
	}
}

enum op { OP_READ, OP_WRITE, OP_WZ, OP_FLUSH };

static struct nvmfd_host_cpl do_io(struct nvmfd_host_qp *qp, enum op op, uint32_t nsid,
				   uint64_t slba, uint32_t nlb, void *buf)
{
	struct hc_cpl s = { 0 };
	int r = -EINVAL;

	switch (op) {
	case OP_READ:
		r = nvmfd_host_qp_read(qp, nsid, slba, nlb, buf, hc_cpl_cb, &s);
		break;
	case OP_WRITE:
		r = nvmfd_host_qp_write(qp, nsid, slba, nlb, buf, hc_cpl_cb, &s);
		break;
	case OP_WZ:
		r = nvmfd_host_qp_write_zeroes(qp, nsid, slba, nlb, hc_cpl_cb, &s);
		break;
	case OP_FLUSH:
		r = nvmfd_host_qp_flush(qp, nsid, hc_cpl_cb, &s);
		break;
	}
	CHECK(r == 0, "submit op %d: %d", op, r);
	wait_io(qp, &s);
	CHECK(s.cpl.err == 0, "op %d transport error %d: %s", op, s.cpl.err,
	      nvmfd_host_qp_errmsg(qp));
	return s.cpl;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i * 31 + seed * 7 + (i >> 9)) ^ seed);
}

static void test_rw_sizes(struct nvmfd_host_ctrl *ctrl, uint32_t seed)
{
	static const uint32_t sizes[] = { 512,	     4096,	8192,	   16384, 16384 + 512,
					  65536,     131072,	131072 + 4096, 262144, 524288,
					  1048576 };
	uint8_t *wb = malloc(1 << 20), *rb = malloc(1 << 20);

	CHECK(wb && rb, "oom");
	for (uint32_t q = 0; q < nvmfd_host_ctrl_qp_count(ctrl); q++) {
		struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(ctrl, q);

		for (uint32_t n = 0; n < nvmfd_host_ctrl_ns_count(ctrl); n++) {
			const struct nvmfd_host_ns *ns = nvmfd_host_ctrl_ns(ctrl, n);

			for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
				uint32_t nlb = sizes[i] / ns->lba_size;
				uint64_t slba = (uint64_t)(i * 2 + q) * ((1u << 20) / ns->lba_size);
				struct nvmfd_host_cpl c;

				if (sizes[i] % ns->lba_size)
					continue;
				fill(wb, sizes[i], seed + (uint32_t)i + q * 100 + n * 1000);
				memset(rb, 0xee, sizes[i]);
				c = do_io(qp, OP_WRITE, ns->nsid, slba, nlb, wb);
				CHECK(c.status == 0, "write %u B ns %u: status 0x%x", sizes[i],
				      ns->nsid, c.status);
				c = do_io(qp, OP_READ, ns->nsid, slba, nlb, rb);
				CHECK(c.status == 0, "read %u B: status 0x%x", sizes[i], c.status);
				CHECK(!memcmp(wb, rb, sizes[i]), "data mismatch %u B ns %u qid %u",
				      sizes[i], ns->nsid, q + 1);
			}
		}
	}
	free(wb);
	free(rb);
}

static void test_other_cmds(struct nvmfd_host_ctrl *ctrl)
{
	struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(ctrl, 0);
	const struct nvmfd_host_ns *ns = nvmfd_host_ctrl_ns(ctrl, 0);
	uint8_t *b = malloc(65536), *z = calloc(1, 65536);
	struct nvmfd_dsm_range r[2];
	struct hc_cpl s = { 0 };
	struct nvmfd_host_cpl c;
	uint32_t nlb = 65536 / ns->lba_size;

	CHECK(b && z, "oom");
	fill(b, 65536, 99);
	c = do_io(qp, OP_WRITE, ns->nsid, 5000, nlb, b);
	CHECK(c.status == 0, "write");
	c = do_io(qp, OP_WZ, ns->nsid, 5000, nlb, NULL);
	CHECK(c.status == 0, "write zeroes status 0x%x", c.status);
	c = do_io(qp, OP_READ, ns->nsid, 5000, nlb, b);
	CHECK(c.status == 0 && !memcmp(b, z, 65536), "write zeroes did not zero");
	c = do_io(qp, OP_FLUSH, ns->nsid, 0, 0, NULL);
	CHECK(c.status == 0, "flush status 0x%x", c.status);
	memset(r, 0, sizeof(r));
	r[0].slba = 100;
	r[0].nlb = 8;
	r[1].slba = 4000;
	r[1].nlb = 16;
	CHECK(nvmfd_host_qp_dsm(qp, ns->nsid, r, 2, NVMFD_DSM_AD, hc_cpl_cb, &s) == 0, "dsm");
	wait_io(qp, &s);
	CHECK(s.cpl.err == 0 && s.cpl.status == 0, "dsm status 0x%x", s.cpl.status);
	/* Past the end: the target must answer with an error status. */
	c = do_io(qp, OP_READ, ns->nsid, ns->nsze - 1, 2, b);
	CHECK(c.status != 0, "out-of-range read succeeded");
	CHECK(nvmfd_host_qp_read(qp, 77, 0, 1, b, hc_cpl_cb, &s) == -EINVAL, "unknown nsid");
	free(b);
	free(z);
}

struct vctx {
	struct nvmfd_host_qp *qp;
	const struct nvmfd_host_ns *ns;
	uint64_t base;
	uint64_t gen[64];
	uint8_t busy[64];
	uint8_t *buf[8];
	uint32_t slot[8];
	bool read[8];
	bool inflight[8];
	uint64_t wgen[8];
	uint32_t done;
	uint32_t checked;
	uint64_t rng;
};

static void vcb(void *arg, const struct nvmfd_host_cpl *cpl)
{
	uint8_t **pp = arg;
	struct vctx *v = (struct vctx *)((uintptr_t)pp[0]);
	uint32_t i = (uint32_t)(uintptr_t)pp[1];
	uint32_t lbs = v->ns->lba_size, nlb = 4096 / lbs, s = v->slot[i];
	char msg[256];

	CHECK(cpl->err == 0 && cpl->status == 0, "verify I/O failed: %d 0x%x", cpl->err,
	      cpl->status);
	v->inflight[i] = false;
	v->busy[s] = 0;
	v->done++;
	if (!v->read[i]) {
		v->gen[s] = v->wgen[i];
		return;
	}
	if (!v->gen[s])
		return;
	for (uint32_t b = 0; b < nlb; b++)
		CHECK(perf_verify_check(v->buf[i] + b * lbs, lbs, v->base + s * nlb + b, v->gen[s],
					msg, sizeof(msg)) == 0,
		      "%s", msg);
	v->checked++;
}

/* A short verify workload: 8 in flight, 64 slots of 4 KiB, random r/w. */
static void test_verify(struct nvmfd_host_ctrl *ctrl, uint32_t q)
{
	struct vctx v;
	void *args[8][2];
	uint64_t next_gen = 0;
	uint32_t submitted = 0;

	memset(&v, 0, sizeof(v));
	v.qp = nvmfd_host_ctrl_qp(ctrl, q);
	v.ns = nvmfd_host_ctrl_ns(ctrl, 0);
	v.base = 40000 + q * 1000;
	v.rng = 12345 + q;
	for (int i = 0; i < 8; i++) {
		v.buf[i] = malloc(4096);
		CHECK(v.buf[i], "oom");
		args[i][0] = &v;
		args[i][1] = (void *)(uintptr_t)i;
	}
	while (v.done < 2000) {
		for (uint32_t i = 0; i < 8 && submitted < 2000; i++) {
			uint32_t s, nlb = 4096 / v.ns->lba_size;
			int r;

			if (v.inflight[i])
				continue;
			v.rng = v.rng * 6364136223846793005ull + 1442695040888963407ull;
			s = (uint32_t)(v.rng >> 33) % 64;
			if (v.busy[s])
				continue;
			v.slot[i] = s;
			v.read[i] = (v.rng >> 20) & 1;
			if (!v.read[i]) {
				v.wgen[i] = ++next_gen;
				for (uint32_t b = 0; b < nlb; b++)
					perf_verify_fill(v.buf[i] + b * v.ns->lba_size, v.ns->lba_size,
							 v.base + s * nlb + b, v.wgen[i]);
				r = nvmfd_host_qp_write(v.qp, v.ns->nsid, v.base + s * nlb, nlb,
							v.buf[i], vcb, args[i]);
			} else {
				r = nvmfd_host_qp_read(v.qp, v.ns->nsid, v.base + s * nlb, nlb,
						       v.buf[i], vcb, args[i]);
			}
			CHECK(r == 0, "verify submit %d", r);
			v.busy[s] = 1;
			v.inflight[i] = true;
			submitted++;
		}
		CHECK(nvmfd_host_qp_wait(v.qp, 100) >= 0, "qp: %s", nvmfd_host_qp_errmsg(v.qp));
	}
	CHECK(v.checked > 100, "only %u reads were checked", v.checked);
	for (int i = 0; i < 8; i++)
		free(v.buf[i]);
}

/* nvmfd_host_qp_plug(): commands submitted while plugged are held (no
 * sendmsg) and leave together at the unplug; they all complete. */
static void test_plug(struct nvmfd_host_ctrl *ctrl)
{
	struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(ctrl, 0);
	struct nvmfd_host_qp_stats st0, st1, st2;
	struct hc_cpl s[8];
	static uint8_t buf[8][512];

	memset(s, 0, sizeof(s));
	nvmfd_host_qp_plug(qp);
	nvmfd_host_qp_plug(qp); /* twice is once */
	nvmfd_host_qp_get_stats(qp, &st0);
	for (int i = 0; i < 8; i++)
		CHECK(nvmfd_host_qp_read(qp, 1, (uint64_t)i, 1, buf[i], hc_cpl_cb, &s[i]) == 0,
		      "plugged read %d", i);
	nvmfd_host_qp_get_stats(qp, &st1);
	CHECK(st1.sendmsgs == st0.sendmsgs, "plugged: %llu sendmsg() before the unplug",
	      (unsigned long long)(st1.sendmsgs - st0.sendmsgs));
	CHECK(st1.submitted == st0.submitted + 8, "plugged: 8 submitted");
	CHECK(nvmfd_host_qp_unplug(qp) == 0, "unplug: %s", nvmfd_host_qp_errmsg(qp));
	nvmfd_host_qp_get_stats(qp, &st2);
	/* 8 capsules in one batch: one sendmsg (two if the socket took only
	 * part of it) */
	CHECK(st2.sendmsgs > st1.sendmsgs && st2.sendmsgs <= st1.sendmsgs + 2,
	      "unplug: %llu sendmsg() for 8 capsules",
	      (unsigned long long)(st2.sendmsgs - st1.sendmsgs));
	for (int i = 0; i < 8; i++) {
		wait_io(qp, &s[i]);
		CHECK(s[i].cpl.err == 0 && s[i].cpl.status == 0, "plugged read %d failed", i);
	}
	CHECK(nvmfd_host_qp_unplug(qp) == 0, "unplug of an unplugged qp");
}

static void test_discovery(const char *port)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_disc_log_entry *e = NULL;
	bool found = false;
	int r;

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.kato_ms = 0;
	o.timeout_ms = 5000;
	o.max_io_size = 1024; /* forces the log to be read in LPO steps */
	c = hc_loop_connect(&o, port, "");
	CHECK(nvmfd_host_ctrl_get_info(c)->cntrltype == NVMFD_CNTRLTYPE_DISC ||
		      nvmfd_host_ctrl_get_info(c)->cntrltype == 0,
	      "cntrltype %u", nvmfd_host_ctrl_get_info(c)->cntrltype);
	r = nvmfd_host_discover(c, &hdr, &e);
	CHECK(r == 0, "discover %d: %s", r, nvmfd_host_ctrl_errmsg(c));
	CHECK(hdr.numrec >= 1, "numrec %llu", (unsigned long long)hdr.numrec);
	for (uint64_t i = 0; i < hdr.numrec; i++) {
		printf("disc entry %llu: trtype %u subtype %u trsvcid %.32s subnqn %.256s\n",
		       (unsigned long long)i, e[i].trtype, e[i].subtype, e[i].trsvcid, e[i].subnqn);
		if (!strncmp(e[i].subnqn, NQN, sizeof(e[i].subnqn)) &&
		    e[i].trtype == NVMFD_TRTYPE_TCP && e[i].subtype == NVMFD_SUBTYPE_NVME) {
			found = true;
			/* With a "0" listener the entry must carry the bound port. */
			CHECK(!strncmp(e[i].trsvcid, port, sizeof(e[i].trsvcid)),
			      "entry trsvcid '%.32s', bound port %s", e[i].trsvcid, port);
		}
	}
	CHECK(found, "subsystem %s not in the discovery log", NQN);
	free(e);
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disc disconnect: %s", nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
}

/*
 * Per-poll budgets and the empty-poll counter: a poll with nothing to do is
 * counted empty; with an rx budget of 512 B no poll call receives more than
 * that while a 256 KiB read streams in (so at least 512 recv() calls), and
 * the data is intact; a write under a 1 KiB tx budget completes and reads
 * back.
 */
static void test_budgets(struct nvmfd_host_ctrl *ctrl)
{
	struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(ctrl, 1);
	const size_t len = 256 * 1024;
	uint8_t *wbuf = malloc(len), *rbuf = malloc(len);
	struct nvmfd_host_qp_stats a, b;
	struct hc_cpl s = { 0 };
	struct nvmfd_host_cpl cpl;

	CHECK(wbuf && rbuf, "oom");
	nvmfd_host_qp_get_stats(qp, &a);
	CHECK(nvmfd_host_qp_poll(qp, 0) == 0, "idle poll");
	nvmfd_host_qp_get_stats(qp, &b);
	CHECK(b.polls == a.polls + 1 && b.empty_polls == a.empty_polls + 1,
	      "empty poll counted: polls %lu->%lu empty %lu->%lu", (unsigned long)a.polls,
	      (unsigned long)b.polls, (unsigned long)a.empty_polls, (unsigned long)b.empty_polls);
	CHECK(nvmfd_host_qp_set_budget(NULL, 1, 1) == -EINVAL, "NULL qp");

	fill(wbuf, len, 99);
	CHECK(nvmfd_host_qp_set_budget(qp, 0, 1024) == 0, "tx budget");
	cpl = do_io(qp, OP_WRITE, 2, 100, (uint32_t)(len / 4096), wbuf);
	CHECK(cpl.status == 0, "write under tx budget: status 0x%x", cpl.status);

	CHECK(nvmfd_host_qp_set_budget(qp, 512, 0) == 0, "rx budget");
	memset(rbuf, 0, len);
	nvmfd_host_qp_get_stats(qp, &a);
	CHECK(nvmfd_host_qp_read(qp, 2, 100, (uint32_t)(len / 4096), rbuf, hc_cpl_cb, &s) == 0,
	      "submit read");
	while (!s.done) {
		struct nvmfd_host_qp_stats p0, p1;
		int r;

		nvmfd_host_qp_get_stats(qp, &p0);
		r = nvmfd_host_qp_wait(qp, 100);
		CHECK(r >= 0 || s.done, "qp failed: %s", nvmfd_host_qp_errmsg(qp));
		nvmfd_host_qp_get_stats(qp, &p1);
		CHECK(p1.rx_bytes - p0.rx_bytes <= 512, "one poll received %lu bytes",
		      (unsigned long)(p1.rx_bytes - p0.rx_bytes));
	}
	CHECK(s.cpl.err == 0 && s.cpl.status == 0, "read under rx budget: err %d status 0x%x",
	      s.cpl.err, s.cpl.status);
	nvmfd_host_qp_get_stats(qp, &b);
	CHECK(b.rx_bytes - a.rx_bytes >= len, "rx bytes %lu", (unsigned long)(b.rx_bytes - a.rx_bytes));
	CHECK(b.recvs - a.recvs >= len / 512, "%lu recv calls for %zu bytes",
	      (unsigned long)(b.recvs - a.recvs), len);
	CHECK(!memcmp(wbuf, rbuf, len), "data read under the rx budget differs");
	CHECK(nvmfd_host_qp_set_budget(qp, 0, 0) == 0, "budget off");
	free(wbuf);
	free(rbuf);
}

static void run_one(const char *port, bool hdgst, bool ddgst, bool sqflow_off)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_trid t;
	const struct nvmfd_host_ctrl_info *ci;
	char err[256];
	int r;

	printf("digests: hdr %d data %d, disable-sqflow %d\n", hdgst, ddgst, sqflow_off);
	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.hdgst = hdgst;
	o.ddgst = ddgst;
	o.disable_sqflow = sqflow_off; /* lets the target use C2HData SUCCESS */
	o.nr_io_queues = 2;
	o.io_queue_size = 16;
	o.timeout_ms = 10000;
	CHECK(nvmfd_host_ctrl_create(&o, &c) == 0, "create");
	snprintf(err, sizeof(err), "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%s subnqn:%s",
		 port, NQN);
	CHECK(nvmfd_host_trid_parse(err, &t, err, sizeof(err)) == 0, "trid: %s", err);
	r = nvmfd_host_ctrl_connect(c, &t);
	CHECK(r == 0, "connect %d: %s", r, nvmfd_host_ctrl_errmsg(c));
	ci = nvmfd_host_ctrl_get_info(c);
	CHECK(ci->cntlid != 0xffff, "cntlid");
	CHECK(ci->cntrltype == NVMFD_CNTRLTYPE_IO, "cntrltype %u", ci->cntrltype);
	CHECK(!strcmp(ci->subnqn, NQN), "identify subnqn '%s'", ci->subnqn);
	CHECK(ci->nr_io_queues == 2, "io queues %u", ci->nr_io_queues);
	CHECK(ci->maxh2cdata >= 4096, "maxh2cdata %u", ci->maxh2cdata);
	CHECK(nvmfd_host_ctrl_ns_count(c) == 2, "ns count %u", nvmfd_host_ctrl_ns_count(c));
	CHECK(nvmfd_host_ctrl_find_ns(c, 1)->lba_size == 512 &&
		      nvmfd_host_ctrl_find_ns(c, 1)->nsze == (32u << 20) / 512,
	      "ns1 geometry");
	CHECK(nvmfd_host_ctrl_find_ns(c, 2)->lba_size == 4096 &&
		      nvmfd_host_ctrl_find_ns(c, 2)->nsze == (32u << 20) / 4096,
	      "ns2 geometry");
	test_rw_sizes(c, hdgst * 2 + ddgst);
	test_other_cmds(c);
	test_plug(c);
	test_verify(c, 0);
	test_verify(c, 1);
	test_budgets(c);
	r = nvmfd_host_ctrl_disconnect(c);
	CHECK(r == 0, "disconnect %d: %s", r, nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
}

/* Idle for three KATO/2 periods past KATO + the target's 1 s grace: only
 * the library's keep-alive thread keeps the controller alive. */
static void test_keepalive(const char *port)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_cpl cpl;
	uint8_t buf[512];

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.kato_ms = 1000;
	o.nr_io_queues = 1;
	o.io_queue_size = 4;
	c = hc_loop_connect(&o, port, NQN);
	sleep(3);
	cpl = do_io(nvmfd_host_ctrl_qp(c, 0), OP_READ, 1, 0, 1, buf);
	CHECK(cpl.status == 0, "read after idle: status 0x%x", cpl.status);
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect after idle: %s",
	      nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
}

/* The smallest admin queue (2 entries: one command at a time) with
 * Keep Alives going out every 500 ms without waiting for each other: the
 * user's admin commands, one every 20 ms for 3 s, must each wait for the
 * slot a Keep Alive holds, never fail with -EAGAIN, and the controller
 * must stay alive. */
static void test_keepalive_small_admin(const char *port)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;
	int r;

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.kato_ms = 1000;
	o.admin_queue_size = 2;
	o.nr_io_queues = 1;
	o.io_queue_size = 4;
	c = hc_loop_connect(&o, port, NQN);
	for (int i = 0; i < 150; i++) {
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_ADMIN_GET_FEATURES;
		sqe.cdw10 = NVMFD_FEAT_KATO;
		r = nvmfd_host_admin_cmd(c, &sqe, NULL, 0, false, &cpl);
		CHECK(r == 0, "Get Features KATO #%d: %d %s", i, r, nvmfd_host_ctrl_errmsg(c));
		CHECK(cpl.cqe.result == 1000, "KATO %u", cpl.cqe.result);
		usleep(20000);
	}
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect: %s", nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
}

/* Read block 0 of @nsid with a raw SQE (the library only knows the
 * namespaces it saw at connect). Return: the completion. */
static struct nvmfd_host_cpl raw_read(struct nvmfd_host_qp *qp, uint32_t nsid, void *buf)
{
	struct hc_cpl st = { 0 };
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_READ;
	sqe.nsid = nsid;
	CHECK(nvmfd_host_qp_submit_raw(qp, &sqe, buf, 512, false, hc_cpl_cb, &st) == 0,
	      "submit raw read");
	wait_io(qp, &st);
	CHECK(st.cpl.err == 0, "raw read transport error %d", st.cpl.err);
	return st.cpl;
}

/* One namespace change seen by the host: the AER completes with Notice /
 * Namespace Attribute Changed / log 04h, and the Changed Namespace List
 * names @nsid. */
static void expect_ns_aen(struct nvmfd_host_ctrl *c, pthread_t th, struct hc_aer *a,
			  uint32_t nsid)
{
	uint32_t list[1024];

	pthread_join(th, NULL);
	CHECK(a->ret == 0, "AER: %d %s", a->ret, nvmfd_host_ctrl_errmsg(c));
	CHECK(a->cpl.cqe.result == 0x00040002, "AER result 0x%08x", a->cpl.cqe.result);
	CHECK(nvmfd_host_get_log_page(c, NVMFD_LOG_CHANGED_NS, 0xffffffff, 0, list,
				      sizeof(list)) == 0,
	      "changed ns log: %s", nvmfd_host_ctrl_errmsg(c));
	CHECK(list[0] == nsid && list[1] == 0, "changed ns list %u %u", list[0], list[1]);
}

/* A namespace added to and removed from the running target (the live
 * reconfiguration API) is announced to a connected host by AEN. */
static void test_ns_aen(struct nvmfd_tgt *tgt, const char *port)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_cpl cpl;
	struct nvmfd_cfg_ns cn;
	struct hc_aer a = { 0 };
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_sqe sqe;
	uint32_t ids[1024];
	uint8_t buf[512];
	pthread_t th;

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.nr_io_queues = 1;
	c = hc_loop_connect(&o, port, NQN);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_SET_FEATURES;
	sqe.cdw10 = NVMFD_FEAT_ASYNC_EVENT;
	sqe.cdw11 = NVMFD_AEN_CFG_NS_ATTR;
	CHECK(nvmfd_host_admin_cmd(c, &sqe, NULL, 0, false, &cpl) == 0, "AEC: %s",
	      nvmfd_host_ctrl_errmsg(c));

	a.ctrl = c;
	CHECK(pthread_create(&th, NULL, hc_aer_thread, &a) == 0, "thread");
	usleep(200 * 1000); /* the AER is held by then; if not, the event waits for it */
	memset(&cn, 0, sizeof(cn));
	CHECK(nvmfd_cfg_parse_namespace(&cn, "ram:1M", err) == 0, "%s", err);
	cn.nsid = 3;
	CHECK(nvmfd_tgt_ns_add(tgt, 0, &cn) == 0, "ns_add");
	expect_ns_aen(c, th, &a, 3);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_IDENTIFY;
	sqe.cdw10 = NVMFD_ID_CNS_NS_ACTIVE_LIST;
	CHECK(nvmfd_host_admin_cmd(c, &sqe, ids, 4096, false, &cpl) == 0, "identify: %s",
	      nvmfd_host_ctrl_errmsg(c));
	CHECK(ids[0] == 1 && ids[1] == 2 && ids[2] == 3 && ids[3] == 0, "active %u %u %u %u",
	      ids[0], ids[1], ids[2], ids[3]);
	cpl = raw_read(nvmfd_host_ctrl_qp(c, 0), 3, buf);
	CHECK(cpl.status == 0, "read of the added namespace: status 0x%x", cpl.status);

	memset(&a, 0, sizeof(a));
	a.ctrl = c;
	CHECK(pthread_create(&th, NULL, hc_aer_thread, &a) == 0, "thread");
	usleep(200 * 1000);
	CHECK(nvmfd_tgt_ns_remove(tgt, 0, 3) == 0, "ns_remove");
	expect_ns_aen(c, th, &a, 3);
	cpl = raw_read(nvmfd_host_ctrl_qp(c, 0), 3, buf);
	CHECK(cpl.status == (NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_NS) |
			     NVMFD_STATUS_DNR),
	      "read of the removed namespace: status 0x%x", cpl.status);
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect: %s", nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
}

int main(void)
{
	struct nvmfd_cfg *cfg = calloc(1, sizeof(*cfg));
	struct nvmfd_tgt *tgt = NULL;
	char err[NVMFD_CFG_ERRLEN], port[16];
	struct nvmfd_cfg_subsys *s;
	int r;

	CHECK(cfg, "oom");
	nvmfd_cfg_init_defaults(cfg);
	nvmfd_cfg_port_init(&cfg->ports[0], 1);
	CHECK(nvmfd_cfg_parse_listen(&cfg->ports[0], "127.0.0.1:0", err) == 0, "%s", err);
	cfg->ports[0].nr_subsys = 1;
	cfg->ports[0].subsys_idx[0] = 0;
	cfg->nr_ports = 1;
	s = &cfg->subsys[0];
	CHECK(nvmfd_cfg_subsys_init(s, NQN, err) == 0, "%s", err);
	s->allow_any_host = true;
	CHECK(nvmfd_cfg_parse_namespace(&s->ns[0], "ram:32M", err) == 0, "%s", err);
	s->ns[0].nsid = 1;
	CHECK(nvmfd_cfg_parse_namespace(&s->ns[1], "ram:32M,bs=4096", err) == 0, "%s", err);
	s->ns[1].nsid = 2;
	s->nr_ns = 2;
	cfg->nr_subsys = 1;
	CHECK(nvmfd_cfg_validate(cfg, err) == 0, "%s", err);
	r = nvmfd_tgt_create(cfg, &tgt);
	CHECK(r == 0, "tgt_create %d", r);
	r = nvmfd_tgt_start(tgt);
	CHECK(r == 0, "tgt_start %d", r);
	snprintf(port, sizeof(port), "%u", nvmfd_tgt_listen_port(tgt, 0));

	test_discovery(port);
	run_one(port, false, false, false);
	run_one(port, true, false, false);
	run_one(port, false, true, false);
	run_one(port, true, true, false);
	run_one(port, false, false, true);
	run_one(port, true, true, true);
	test_keepalive(port);
	test_keepalive_small_admin(port);
	test_ns_aen(tgt, port);

	nvmfd_tgt_stop(tgt);
	nvmfd_tgt_destroy(&tgt);
	free(cfg);
	printf("ok\n");
	return 0;
}
