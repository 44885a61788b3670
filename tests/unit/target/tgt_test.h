/* SPDX-License-Identifier: MIT */
/*
 * tgt_test.h - a fake transport for driving the target core through the
 * xprt.h seam in unit tests: queues whose ops record every response, RAM
 * backends, and a hand-built config (no parser involved).
 *
 * Config: port 0 (portid 1, 127.0.0.1:4420) exports sub0 and sub1; port 1
 * (portid 2, 0.0.0.0:4421) exports sub0. sub0 allows any host and has
 * nsid 1 (RAM, 1 MiB, 512 B blocks) and nsid 2 (RAM, 1 MiB, 4 KiB blocks);
 * sub1 allows only HOST_A and has nsid 5 (RAM, 64 KiB). One referral on
 * portid 1.
 *
 * Ownership: tt_env_new() allocates everything, tt_env_free() frees it.
 */
#ifndef NVMFD_TESTS_TGT_TEST_H
#define NVMFD_TESTS_TGT_TEST_H

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "target/core.h"

#define SUB0 "nqn.2026-01.io.nvmfd:sub0"
#define SUB1 "nqn.2026-01.io.nvmfd:sub1"
#define HOST_A "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-0000-0000-000000000001"
#define HOST_B "nqn.2014-08.org.nvmexpress:uuid:bbbbbbbb-0000-0000-0000-000000000002"
#define TT_SLOTS 16
#define TT_BUF (512u * 1024u)
#define TT_MAX_IO (256u * 1024u)

struct tt_q {
	struct nvmfd_tgt_qp qp;
	struct nvmfd_tgt_req reqs[TT_SLOTS];
	uint8_t *bufs[TT_SLOTS];
	unsigned int next_slot;
	/* recorded by the fake ops */
	unsigned int nr_resp;
	struct nvmfd_cqe cqes[64];
	struct nvmfd_cqe last;
	uint8_t *out; /* C2H data of the last successful response */
	uint32_t out_len;
	unsigned int nr_shutdown;
	unsigned int nr_kick;
	uint64_t stall_ns; /* what ops->stall_ns reports */
};

struct tt_env {
	struct nvmfd_cfg cfg;
	struct nvmfd_tgt *tgt;
};

static void tt_queue_response(struct nvmfd_tgt_req *req)
{
	struct tt_q *q = (struct tt_q *)req->qp;

	q->last = req->cqe;
	if (q->nr_resp < 64)
		q->cqes[q->nr_resp] = req->cqe;
	q->nr_resp++;
	q->out_len = 0;
	if (req->xfer == NVMFD_XFER_C2H && nvmfd_cqe_status(&req->cqe) == 0) {
		memcpy(q->out, req->data, req->data_len);
		q->out_len = req->data_len;
	}
}

static void tt_shutdown_queue(struct nvmfd_tgt_qp *qp)
{
	((struct tt_q *)qp)->nr_shutdown++;
}

static void tt_kick(struct nvmfd_tgt_qp *qp)
{
	((struct tt_q *)qp)->nr_kick++;
}

static uint64_t tt_stall_ns(struct nvmfd_tgt_qp *qp)
{
	return ((struct tt_q *)qp)->stall_ns;
}

static const struct nvmfd_tgt_xprt_ops tt_ops = {
	.queue_response = tt_queue_response,
	.shutdown_queue = tt_shutdown_queue,
	.kick = tt_kick,
	.stall_ns = tt_stall_ns,
};

static inline void tt_ram_ns(struct nvmfd_cfg_ns *ns, uint32_t nsid, uint64_t size,
			     unsigned int shift)
{
	ns->nsid = nsid;
	ns->enable = true;
	ns->bk.type = NVMFD_BK_RAM;
	ns->bk.size = size;
	ns->bk.lba_shift = shift;
}

static inline void tt_cfg_build(struct nvmfd_cfg *cfg)
{
	struct nvmfd_cfg_subsys *s;

	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_ports = 2;
	cfg->ports[0].portid = 1;
	cfg->ports[0].adrfam = NVMFD_ADRFAM_IPV4;
	strcpy(cfg->ports[0].traddr, "127.0.0.1");
	strcpy(cfg->ports[0].trsvcid, "4420");
	cfg->ports[0].inline_data_size = 16384;
	cfg->ports[0].max_queue_size = 128;
	cfg->ports[0].nr_subsys = 2;
	cfg->ports[0].subsys_idx[0] = 0;
	cfg->ports[0].subsys_idx[1] = 1;
	cfg->ports[1].portid = 2;
	cfg->ports[1].adrfam = NVMFD_ADRFAM_IPV4;
	strcpy(cfg->ports[1].traddr, "0.0.0.0");
	strcpy(cfg->ports[1].trsvcid, "4421");
	cfg->ports[1].inline_data_size = 8192;
	cfg->ports[1].max_queue_size = 64;
	cfg->ports[1].nr_subsys = 1;
	cfg->ports[1].subsys_idx[0] = 0;

	cfg->nr_subsys = 2;
	s = &cfg->subsys[0];
	strcpy(s->nqn, SUB0);
	s->allow_any_host = true;
	strcpy(s->serial, "SN0123456789");
	strcpy(s->model, "nvmfd test model");
	s->version = NVMFD_VS_1_4;
	s->cntlid_min = 1;
	s->cntlid_max = 0xffef;
	s->qid_max = 4;
	s->nr_ns = 2;
	tt_ram_ns(&s->ns[0], 1, 1 << 20, 9);
	tt_ram_ns(&s->ns[1], 2, 1 << 20, 12);
	s->ns[1].has_uuid = true;
	for (int i = 0; i < 16; i++)
		s->ns[1].uuid[i] = (uint8_t)(0xa0 + i);
	s = &cfg->subsys[1];
	strcpy(s->nqn, SUB1);
	s->allow_any_host = false;
	s->nr_hosts = 1;
	strcpy(s->hosts[0], HOST_A);
	s->version = NVMFD_VS_1_3;
	s->cntlid_min = 10;
	s->cntlid_max = 11;
	s->qid_max = 2;
	s->nr_ns = 1;
	tt_ram_ns(&s->ns[0], 5, 64 << 10, 9);

	cfg->nr_referrals = 1;
	cfg->referrals[0].portid = 1;
	cfg->referrals[0].ref_portid = 7; /* the referred port's own ID */
	cfg->referrals[0].adrfam = NVMFD_ADRFAM_IPV4;
	strcpy(cfg->referrals[0].traddr, "10.0.0.9");
	strcpy(cfg->referrals[0].trsvcid, "8009");

	cfg->kato_grace_ms = 1000;
	cfg->max_io_size = TT_MAX_IO;
	cfg->maxh2cdata = 128 << 10;
}

static inline struct tt_env *tt_env_new(void)
{
	struct tt_env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	tt_cfg_build(&e->cfg);
	assert_int_equal(nvmfd__tgt_core_create(&e->cfg, &e->tgt), 0);
	return e;
}

static inline void tt_env_free(struct tt_env *e)
{
	nvmfd__tgt_core_destroy(&e->tgt);
	assert_null(e->tgt);
	free(e);
}

static inline struct tt_q *tt_q_new(struct tt_env *e, unsigned int port_idx)
{
	struct tt_q *q = calloc(1, sizeof(*q));

	assert_non_null(q);
	nvmfd__tgt_qp_init(&q->qp, e->tgt, &e->cfg.ports[port_idx], &tt_ops);
	strcpy(q->qp.local_addr, "192.168.7.7");
	strcpy(q->qp.peer_addr, "192.168.7.8:50000");
	assert_int_equal(nvmfd__tgt_qp_open_backend(&q->qp, 0, 64), 0);
	for (int i = 0; i < TT_SLOTS; i++) {
		q->bufs[i] = calloc(1, TT_BUF);
		assert_non_null(q->bufs[i]);
		q->reqs[i].qp = &q->qp;
		q->reqs[i].data = q->bufs[i];
		q->reqs[i].data_cap = TT_BUF;
		q->reqs[i].slot = (uint16_t)i;
	}
	q->out = calloc(1, TT_BUF);
	assert_non_null(q->out);
	return q;
}

static inline void tt_q_free(struct tt_q *q)
{
	nvmfd__tgt_qp_destroy(&q->qp);
	while (nvmfd__tgt_qp_inflight(&q->qp))
		nvmfd__tgt_qp_poll(&q->qp, false);
	nvmfd__tgt_qp_close_backend(&q->qp);
	for (int i = 0; i < TT_SLOTS; i++)
		free(q->bufs[i]);
	free(q->out);
	free(q);
}

/* A fresh SQE with the TCP defaults: SGL PSDT, transport data block of @len. */
static inline struct nvmfd_sqe tt_sqe(uint8_t opc, uint32_t nsid, uint32_t len)
{
	struct nvmfd_sqe s;

	memset(&s, 0, sizeof(s));
	s.opc = opc;
	s.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	s.nsid = nsid;
	s.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	s.dptr.length = len;
	return s;
}

/* Run one command as a transport would: init, take H2C data, execute,
 * reap until the response arrives (or, for a held command, until nothing
 * is in flight). Return: number of responses it produced (0 = held). */
static inline unsigned int tt_submit(struct tt_q *q, const struct nvmfd_sqe *sqe, const void *h2c,
				     uint32_t h2c_len)
{
	struct nvmfd_tgt_req *req = &q->reqs[q->next_slot];
	unsigned int before = q->nr_resp;
	nvmfd_status_t st;

	q->next_slot = (q->next_slot + 1) % TT_SLOTS;
	req->sqe = *sqe;
	req->in_capsule = false;
	req->data_len = 0;
	req->xfer = NVMFD_XFER_NONE;
	st = nvmfd__tgt_req_init(req);
	if (st) {
		nvmfd__tgt_req_complete(req, st);
		return q->nr_resp - before;
	}
	if (req->xfer == NVMFD_XFER_H2C) {
		const void *src = h2c;

		assert_non_null(src);
		assert_true(h2c_len >= req->data_len);
		if (src)
			memcpy(req->data, src, req->data_len);
	}
	nvmfd__tgt_req_execute(req);
	/* as the transport's io_work: the core's backend step after the
	 * receive step (flush, reap) */
	for (int i = 0; i < 1000 && q->nr_resp == before && nvmfd__tgt_qp_inflight(&q->qp);
	     i++) {
		struct pollfd pfd = { .fd = nvmfd__tgt_qp_event_fd(&q->qp), .events = POLLIN };
		uint64_t v;

		/* The per-queue eventfd is meant for an edge-triggered watch
		 * (cqpool.h: polls do not read it); this level-triggered
		 * poll() empties it before each look, then waits. */
		if (pfd.fd >= 0 && read(pfd.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			fail_msg("eventfd read: %s", strerror(errno));
		if (nvmfd__tgt_qp_poll(&q->qp, false) == 0)
			poll(&pfd, 1, 10); /* kernel I/O in progress */
	}
	return q->nr_resp - before;
}

/* Submit and return the status of the one response it must produce. */
static inline nvmfd_status_t tt_cmd(struct tt_q *q, const struct nvmfd_sqe *sqe, const void *h2c,
				    uint32_t h2c_len)
{
	assert_int_equal(tt_submit(q, sqe, h2c, h2c_len), 1);
	assert_int_equal(q->last.cid, sqe->cid);
	return nvmfd_cqe_status(&q->last);
}

static inline nvmfd_status_t tt_connect_ex(struct tt_q *q, uint16_t qid, uint16_t sqsize,
					   uint8_t cattr, uint32_t kato, uint16_t cntlid,
					   const char *subnqn, const char *hostnqn, uint16_t recfmt)
{
	struct nvmfd_sqe sqe = tt_sqe(NVMFD_ADMIN_FABRICS, 0, sizeof(struct nvmfd_connect_data));
	struct nvmfd_connect_cmd c;
	struct nvmfd_connect_data d;

	memcpy(&c, &sqe, sizeof(c));
	c.fctype = NVMFD_FCTYPE_CONNECT;
	c.cid = (uint16_t)(0x100 + qid);
	c.recfmt = recfmt;
	c.qid = qid;
	c.sqsize = sqsize;
	c.cattr = cattr;
	c.kato = kato;
	memcpy(&sqe, &c, sizeof(sqe));
	memset(&d, 0, sizeof(d));
	for (int i = 0; i < 16; i++)
		d.hostid[i] = (uint8_t)(i + 1);
	d.cntlid = cntlid;
	snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqn);
	snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqn);
	return tt_cmd(q, &sqe, &d, sizeof(d));
}

static inline nvmfd_status_t tt_prop_set(struct tt_q *q, uint32_t ofst, uint64_t v)
{
	struct nvmfd_sqe sqe = tt_sqe(NVMFD_ADMIN_FABRICS, 0, 0);
	struct nvmfd_prop_cmd p;

	memcpy(&p, &sqe, sizeof(p));
	p.fctype = NVMFD_FCTYPE_PROP_SET;
	p.cid = 0x200;
	p.attrib = NVMFD_PROP_ATTRIB_SIZE_4;
	p.ofst = ofst;
	p.value = v;
	memcpy(&sqe, &p, sizeof(sqe));
	return tt_cmd(q, &sqe, NULL, 0);
}

static inline nvmfd_status_t tt_prop_get(struct tt_q *q, uint32_t ofst, uint8_t attrib,
					 uint64_t *v)
{
	struct nvmfd_sqe sqe = tt_sqe(NVMFD_ADMIN_FABRICS, 0, 0);
	struct nvmfd_prop_cmd p;
	nvmfd_status_t st;

	memcpy(&p, &sqe, sizeof(p));
	p.fctype = NVMFD_FCTYPE_PROP_GET;
	p.cid = 0x201;
	p.attrib = attrib;
	p.ofst = ofst;
	memcpy(&sqe, &p, sizeof(sqe));
	st = tt_cmd(q, &sqe, NULL, 0);
	*v = q->last.result | ((uint64_t)q->last.dw1 << 32);
	return st;
}

#define TT_CC_ENABLE (NVMFD_CC_EN | (6u << 16) | (4u << 20))

/* Connect an admin queue and enable the controller. Return: cntlid. */
static inline uint16_t tt_admin_up(struct tt_q *q, const char *subnqn, const char *hostnqn,
				   uint32_t kato)
{
	uint64_t v;

	assert_int_equal(tt_connect_ex(q, 0, 31, 0, kato, 0xffff, subnqn, hostnqn, 0), 0);
	uint16_t cntlid = (uint16_t)q->last.result;

	assert_int_equal(tt_prop_set(q, NVMFD_REG_CC, TT_CC_ENABLE), 0);
	assert_int_equal(tt_prop_get(q, NVMFD_REG_CSTS, NVMFD_PROP_ATTRIB_SIZE_4, &v), 0);
	assert_int_equal(v & NVMFD_CSTS_RDY, NVMFD_CSTS_RDY);
	return cntlid;
}

static inline nvmfd_status_t tt_io_connect(struct tt_q *q, uint16_t qid, uint16_t cntlid,
					   const char *subnqn, const char *hostnqn)
{
	return tt_connect_ex(q, qid, 127, 0, 0, cntlid, subnqn, hostnqn, 0);
}

#define TT_DNR(sct, sc) ((nvmfd_status_t)(NVMFD_STATUS(sct, sc) | NVMFD_STATUS_DNR))
#define TT_G(sc) TT_DNR(NVMFD_SCT_GENERIC, sc)
#define TT_C(sc) TT_DNR(NVMFD_SCT_CMD_SPECIFIC, sc)

#endif /* NVMFD_TESTS_TGT_TEST_H */
