// SPDX-License-Identifier: MIT
/*
 * tcp.c - the NVMe/TCP transport's queues (one TCP connection = one NVMe
 * queue): receive, transmit and the io_work pass, plugged into the core
 * through target/xprt.h. Ports, accept, setup deadlines, release and
 * migration are in port.c; the types in tcp_int.h.
 *
 * Per queue, memory is set up in two steps (doc/conventions.md §5.1,
 * doc/design.md "Queue resources after Connect"), so that a connection
 * that has not earned a queue costs little. At accept: the queue, a
 * receive bounce buffer, the address space of the command slots (a
 * mapping for 2 x max_queue_size + 1 slots, as nvmet's nr_cmds = 2 x
 * sqsize plus one for the Connect) and of their data (one region of slots
 * x slot_size bytes), both MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
 * and TCP_SETUP_SLOTS slots in use: enough for the Connect and the
 * DH-HMAC-CHAP exchange. When the queue is enabled (a Connect succeeds,
 * or its first authentication: tcp_enable_queue()), the slots grow in
 * place to 2 x the Connect's entries + 1 (no slot moves, indices and
 * pointers stay valid) and the core's backend completion context is
 * opened (its own ring, or its CPU's shared one); a failure there fails
 * that command with Internal Error and closes the queue. The data region
 * is only virtual address space until a command touches its slot: a
 * 1 MiB MDTS and 257 slots reserve 257 MiB of addresses but no memory,
 * and a queue that only ever does 4 KiB I/O faults in 4 KiB per slot
 * used. Nothing is allocated on the data path.
 *
 * Everything a queue does runs in its io_work on its io_cpu (one owner at a
 * time, doc/conventions.md §5.2): receive and parse PDUs, run commands,
 * step the core's backend (nvmfd__tgt_qp_poll(): flush submissions, reap
 * completions), send PDUs. Other threads only set the shutdown flag or kick
 * the work item. One pass alternates rx (cfg exec.rx_budget_*), the backend
 * step and tx (exec.tx_budget_*) while something progresses and the pass
 * deadline (exec.io_work_deadline_us) has not passed, then re-queues itself
 * (work left, or idle polling: nvmfd_idle_poll) or re-arms readiness of the
 * socket (EPOLLIN, plus EPOLLOUT when a send would block) and of the
 * backend completion eventfd.
 *
 * Backend completions come from the core's completion context (shared or
 * per-queue rings, internal/cqpool.h): with a per-queue ring we watch its
 * eventfd; with a shared ring its completion work routes our completions
 * and kicks us (ops->kick). --backend-poll: while a queue keeps re-queueing
 * itself (idle polling or work left) it does not watch the eventfd and the
 * backend step peeks the CQ every pass; counted as peeks vs events.
 *
 * Transmit: slots with something to send form a FIFO; one sendmsg gathers
 * the current PDU of up to TCP_TX_BATCH slots (header, data and data digest
 * iovecs) with MSG_MORE while more is queued. The last C2HData of a read
 * carries its CapsuleResp as a trailer (net/txq.h), so a read's data and
 * response leave in one sendmsg (unless the C2HData SUCCESS flag replaces
 * the response). A PDU cut short by a full socket is finished alone before
 * any other byte is sent.
 *
 * Teardown never blocks the worker: a closing queue stops its socket and
 * then waits for its backend ios by event (the completion eventfd, or the
 * shared ring's kicks) in the DRAINING state; the last completion lets the
 * next pass finish the teardown and hand the queue to the release work.
 *
 * Wire errors: a codec or transport rule violation gets a C2HTermReq with
 * its FES/FEI and the offending header (an H2CTermReq is never answered),
 * sent best effort; then that connection only is closed, logged once at
 * WARN with the peer and the rule. A data digest error is the exception
 * (NVMe/TCP 1.0 §7.4.6.2): the codec consumed the PDU whole, so the command
 * fails with Transient Transport Error and the connection goes on.
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nvmfd/pdu.h>

#include "internal/log.h"
#include "net/sock.h"
#include "net/stream.h"
#include "net/txq.h"
#include "target/tcp/tcp_int.h"

static void tcp_queue_response(struct nvmfd_tgt_req *req);
static void tcp_shutdown_queue(struct nvmfd_tgt_qp *qp);
static void tcp_kick(struct nvmfd_tgt_qp *qp);
static int tcp_enable_queue(struct nvmfd_tgt_qp *qp, uint16_t sqsize);

static const struct nvmfd_tgt_xprt_ops tcp_xprt_ops = {
	.queue_response = tcp_queue_response,
	.shutdown_queue = tcp_shutdown_queue,
	.kick = tcp_kick,
	.stall_ns = tcp_queue_stall_ns,
	.stall_parts = tcp_queue_stall_parts,
	.enable_queue = tcp_enable_queue,
};

static inline struct tcp_queue *tcp_q(struct nvmfd_tgt_qp *qp)
{
	return container_of(qp, struct tcp_queue, qp);
}

static inline struct tcp_req *tcp_r(struct nvmfd_tgt_req *req)
{
	return container_of(req, struct tcp_req, req);
}

static inline uint32_t tcp_max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static inline uint32_t tcp_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static const struct nvmfd_cfg_exec *tcp_exec(const struct tcp_queue *q)
{
	return &q->port->gcfg->exec;
}

/* Make @q's io_work run soon, from any thread (also during a migration:
 * nvmfd_rt_work_move() tolerates it). */
void tcp_queue_kick(struct tcp_queue *q)
{
	nvmfd_rt_queue_work(&q->io_work);
}
/* ------------------------------------------------------------------ */
/* Command slots                                                       */
/* ------------------------------------------------------------------ */


/* Legal slot moves (doc/conventions.md §6), as bit masks of the next
 * state. EXEC -> FREE is a response dropped by a closing queue; a closing
 * queue also takes its abandoned RX_ICD/R2T/H2C/TX slots back (teardown). */
#define TCP_BIT(s) (1u << (s))
static const uint32_t tcp_req_next[TCP_REQ__MAX] = {
	[TCP_REQ_FREE] = TCP_BIT(TCP_REQ_RX_ICD),
	[TCP_REQ_RX_ICD] = TCP_BIT(TCP_REQ_EXEC) | TCP_BIT(TCP_REQ_R2T) | TCP_BIT(TCP_REQ_FREE),
	[TCP_REQ_R2T] = TCP_BIT(TCP_REQ_H2C) | TCP_BIT(TCP_REQ_FREE),
	[TCP_REQ_H2C] = TCP_BIT(TCP_REQ_EXEC) | TCP_BIT(TCP_REQ_FREE),
	[TCP_REQ_EXEC] = TCP_BIT(TCP_REQ_TX) | TCP_BIT(TCP_REQ_FREE),
	[TCP_REQ_TX] = TCP_BIT(TCP_REQ_FREE),
};

/* Only the queue's io_work touches its slots once the queue is running. */
#define TCP_ASSERT_OWNER(q) \
	assert(!(q)->running || nvmfd_rt_current_work() == &(q)->io_work)

/* The one place a slot changes state: the move must be legal, and the
 * per-state counts (read relaxed by the stats dumper) always add up to
 * the number of slots. */
static void tcp_req_set_state(struct tcp_queue *q, struct tcp_req *r, enum tcp_req_state st)
{
	assert(st < TCP_REQ__MAX && r->state < TCP_REQ__MAX);
	assert(tcp_req_next[r->state] & TCP_BIT(st));
	assert(q->nr_state[r->state] > 0);
	TCP_ASSERT_OWNER(q);
	__atomic_store_n(&q->nr_state[r->state], q->nr_state[r->state] - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&q->nr_state[st], q->nr_state[st] + 1, __ATOMIC_RELAXED);
	r->state = st;
}

static struct tcp_req *tcp_req_get(struct tcp_queue *q)
{
	struct tcp_req *r;

	if (q->free_head == UINT32_MAX)
		return NULL;
	r = &q->reqs[q->free_head];
	assert(r->state == TCP_REQ_FREE);
	q->free_head = r->next_free;
	q->nr_free--;
	r->icd_len = 0;
	r->pre_status = 0;
	r->h2c_rcvd = 0;
	r->c2h_off = 0;
	r->c2h_success = false;
	r->lend_held = false;
	r->req.lent = NULL;
	r->req.xfer = NVMFD_XFER_NONE;
	r->req.data_len = 0;
	r->req.in_capsule = false;
	r->req.core = NULL;
	r->req.nr_sub = 0;
	r->req.sub_status = 0;
	memset(&r->req.cqe, 0, sizeof(r->req.cqe));
	return r;
}

static void tcp_req_put(struct tcp_queue *q, struct tcp_req *r)
{
	/* lent data still locked: tcp_lent_settle() returns it after unlocking */
	if (!r->lend_held)
		nvmfd__tgt_req_release(&r->req);
	tcp_req_set_state(q, r, TCP_REQ_FREE);
	assert(q->nr_free < q->nr_reqs);
	r->next_free = q->free_head;
	q->free_head = r->req.slot;
	q->nr_free++;
}

/* Queue @r's next PDU (built lazily by tcp_tx_prepare() when gathered). */
static void tcp_tx_push(struct tcp_queue *q, struct tcp_req *r)
{
	nvmfd_tx_pdu_clear(&r->tx);
	nvmfd_txq_push(&q->txq, &r->tx);
}

/* ------------------------------------------------------------------ */
/* Fatal errors                                                        */
/* ------------------------------------------------------------------ */

/*
 * Prepare a C2HTermReq (NVMe/TCP 1.0 §3.6.2.9) echoing the offending header
 * and mark the queue for teardown. Logged once per connection, at WARN.
 * Return: -EPROTO, for the caller to propagate.
 */
static int tcp_fatal(struct tcp_queue *q, uint16_t fes, uint32_t fei, const void *hdr,
		     size_t hdr_len, const char *rule)
{
	if (q->state >= TCP_Q_CLOSING)
		return -EPROTO;
	NVMFD_WARN(TCP_COMP, "queue %u qid %u peer %s: %s (FES 0x%02x FEI %u), closing", q->id,
		   q->qp.qid, q->qp.peer_addr, rule, fes, fei);
	q->state = TCP_Q_CLOSING;
	if (!fes)
		return -EPROTO;
	if (hdr_len > NVMFD_TCP_TERM_ERR_DATA_MAX)
		hdr_len = NVMFD_TCP_TERM_ERR_DATA_MAX;
	/* sent by the teardown (tcp_send_term()), after whole PDUs only */
	q->term_len = (uint32_t)nvmfd_pdu_build_term(q->term_pdu, sizeof(q->term_pdu),
						     NVMFD_TCP_C2H_TERM, fes, fei, hdr, hdr_len);
	q->term_pending = q->term_len > 0;
	return -EPROTO;
}

/* Fatal error about the PDU currently in the receiver. */
static int tcp_fatal_cur(struct tcp_queue *q, uint16_t fes, uint32_t fei, const char *rule)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&q->rx);

	return tcp_fatal(q, fes, fei, ch, ch->hlen ? ch->hlen : sizeof(*ch), rule);
}

static int tcp_rx_cmd(struct tcp_queue *q);
static int tcp_rx_h2c(struct tcp_queue *q);

static int tcp_fatal_codec(struct tcp_queue *q)
{
	const struct nvmfd_pdu_error *e = nvmfd_pdu_rx_error(&q->rx);
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&q->rx);
	int ret;

	if (e->err == NVMFD_PDU_ERR_DDGST && q->rx_hdr_seen && q->rx_req &&
	    (ch->type == NVMFD_TCP_CMD || ch->type == NVMFD_TCP_H2C_DATA)) {
		/*
		 * NVMe/TCP 1.0 §7.4.6.2: a data digest error fails the command
		 * with Transient Transport Error; the stream stays in sync (the
		 * codec consumed the whole PDU), so the connection goes on.
		 */
		NVMFD_WARN_RATELIMIT(TCP_COMP, "queue %u qid %u peer %s: data digest error, cid %u",
				     q->id, q->qp.qid, q->qp.peer_addr, q->rx_req->req.sqe.cid);
		if (!q->rx_req->pre_status)
			q->rx_req->pre_status = NVMFD_STATUS(NVMFD_SCT_GENERIC,
							     NVMFD_SC_TRANSIENT_TR_ERROR);
		TCP_STAT_ADD(q, pdus_rx, 1);
		TCP_STAT_ADD(q, ddgst_errors, 1);
		ret = ch->type == NVMFD_TCP_CMD ? tcp_rx_cmd(q) : tcp_rx_h2c(q);
		q->rx_hdr_seen = false;
		q->rx_req = NULL;
		return ret;
	}

	if (e->err == NVMFD_PDU_ERR_TERM) {
		/* Never answer a TermReq (NVMe/TCP 1.0 §3.6.2.4). */
		NVMFD_INFO(TCP_COMP, "queue %u qid %u peer %s: H2CTermReq received, closing",
			   q->id, q->qp.qid, q->qp.peer_addr);
		q->state = TCP_Q_CLOSING;
		return -ECONNRESET;
	}
	/* a TLS ClientHello (record type 0x16) as the first bytes of a plain
	 * port: name it, the host asked for TLS this port does not offer */
	if (e->err == NVMFD_PDU_ERR_TYPE && q->state == TCP_Q_IC_WAIT && !e->stream_off &&
	    e->hdr_len && e->hdr[0] == 0x16)
		return tcp_fatal(q, e->fes, e->fei, e->hdr, e->hdr_len,
				 "the host started a TLS handshake (first byte 0x16) on a port "
				 "without TLS");
	return tcp_fatal(q, e->fes, e->fei, e->hdr, e->hdr_len, nvmfd_pdu_err_str(e->err));
}

/* ------------------------------------------------------------------ */
/* Receive path                                                        */
/* ------------------------------------------------------------------ */

/* In-capsule data limit for @sqe on this queue (doc/protocol-notes.md §1.8). */
static uint32_t tcp_icd_limit(const struct tcp_queue *q, const struct nvmfd_sqe *sqe)
{
	if (!q->qp.connected || q->qp.qid == 0 || sqe->opc == NVMFD_ADMIN_FABRICS)
		return tcp_max_u32(TCP_FABRICS_ICD, q->qp.qid ? q->port->cfg->inline_data_size : 0);
	return q->port->cfg->inline_data_size;
}

static void tcp_req_fail(struct tcp_req *r, nvmfd_status_t status)
{
	tcp_req_set_state(tcp_q(r->req.qp), r, TCP_REQ_EXEC);
	nvmfd__tgt_req_complete(&r->req, status);
}

static void tcp_req_execute(struct tcp_req *r)
{
	tcp_req_set_state(tcp_q(r->req.qp), r, TCP_REQ_EXEC);
	nvmfd__tgt_req_execute(&r->req);
}

static int tcp_capsule_take(struct tcp_queue *q, struct tcp_req **out)
{
	const struct nvmfd_tcp_cmd *cmd = nvmfd_pdu_rx_hdr(&q->rx);
	struct tcp_req *r;

	r = tcp_req_get(q);
	if (!r)
		/* The host exceeded the queue depth it negotiated. */
		return tcp_fatal_cur(q, NVMFD_TCP_FES_PDU_SEQUENCE, 0, "no free command slot");
	memcpy(&r->req.sqe, &cmd->sqe, sizeof(r->req.sqe));
	tcp_req_set_state(q, r, TCP_REQ_RX_ICD);
	TCP_STAT_ADD(q, cmds, 1);
	*out = r;
	return 0;
}

/* CapsuleCmd header with in-capsule data: decide where the data goes. */
static int tcp_rx_cmd_hdr(struct tcp_queue *q, uint32_t dlen)
{
	const struct nvmfd_sgl_desc *sgl;
	struct tcp_req *r;
	int ret;

	ret = tcp_capsule_take(q, &r);
	if (ret)
		return ret;
	r->icd_len = dlen;
	sgl = &r->req.sqe.dptr;
	/* NVMe/TCP 1.0 §3.3.5 / doc/protocol-notes.md §1.9: in-capsule data
	 * is described by a Data Block descriptor, Offset subtype, offset 0
	 * (the core's one descriptor rule), of exactly the data's length,
	 * within the queue's in-capsule limit and the slot. */
	if (sgl->type != NVMFD_SGL_ID_INCAPSULE)
		r->pre_status = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_TYPE);
	else if ((r->pre_status = nvmfd__tgt_sgl_check(&r->req.sqe)) != 0)
		;
	else if (dlen > tcp_icd_limit(q, &r->req.sqe) || dlen > r->req.data_cap)
		r->pre_status = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_OFFSET);
	else if (le32toh(sgl->length) != dlen)
		r->pre_status = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_DATA);
	if (!r->pre_status)
		nvmfd_pdu_rx_set_data(&q->rx, r->req.data);
	/* else: the receiver discards the data; the command fails at the end */
	q->rx_req = r;
	return 0;
}

/* H2CData header: NVMe/TCP 1.0 §3.6.2.7 and the nvmet checks (doc/protocol-notes.md §1.7). */
static int tcp_rx_h2c_hdr(struct tcp_queue *q, uint32_t dlen)
{
	const struct nvmfd_tcp_data *d = nvmfd_pdu_rx_hdr(&q->rx);
	uint16_t ttag = le16toh(d->ttag);
	uint32_t datao = le32toh(d->datao), datal = le32toh(d->datal);
	struct tcp_req *r;

	if (ttag >= q->nr_reqs || q->reqs[ttag].state != TCP_REQ_H2C)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				     offsetof(struct nvmfd_tcp_data, ttag), "H2CData with unknown TTAG");
	r = &q->reqs[ttag];
	if (le16toh(d->cccid) != r->req.sqe.cid)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				     offsetof(struct nvmfd_tcp_data, cccid), "H2CData CCCID mismatch");
	if (datal != dlen)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				     offsetof(struct nvmfd_tcp_data, datal),
				     "H2CData DATAL differs from PDU data length");
	if (datal > q->maxh2cdata)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_DATA_LIMIT_EXCEEDED,
				     offsetof(struct nvmfd_tcp_data, datal), "H2CData over MAXH2CDATA");
	if (datao != r->h2c_rcvd || (uint64_t)datao + datal > r->req.data_len)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_DATA_OUT_OF_RANGE,
				     offsetof(struct nvmfd_tcp_data, datao),
				     "H2CData outside the R2T window");
	nvmfd_pdu_rx_set_data(&q->rx, (uint8_t *)r->req.data + datao);
	q->rx_req = r;
	return 0;
}

static int tcp_rx_hdr(struct tcp_queue *q)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&q->rx);
	uint32_t dlen = nvmfd_pdu_rx_data_len(&q->rx);

	q->rx_hdr_seen = true;
	if (q->state == TCP_Q_IC_WAIT && ch->type != NVMFD_TCP_ICREQ)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_PDU_SEQUENCE, 0, "PDU before ICReq");
	switch (ch->type) {
	case NVMFD_TCP_CMD:
		return tcp_rx_cmd_hdr(q, dlen);
	case NVMFD_TCP_H2C_DATA:
		return tcp_rx_h2c_hdr(q, dlen);
	default:
		return 0; /* H2CTermReq error data: discarded */
	}
}

/* ICReq: NVMe/TCP 1.0 §3.6.2.2 and doc/protocol-notes.md §1.4. */
static int tcp_rx_icreq(struct tcp_queue *q)
{
	const struct nvmfd_tcp_icreq *ic = nvmfd_pdu_rx_hdr(&q->rx);
	const struct nvmfd_cfg_port *pc = q->port->cfg;
	uint32_t max_data;
	uint8_t dgst;

	if (q->state != TCP_Q_IC_WAIT)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_PDU_SEQUENCE, 0, "second ICReq");
	if (le16toh(ic->pfv) != NVMFD_TCP_PFV_1_0)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_UNSUPPORTED_PARAM,
				     offsetof(struct nvmfd_tcp_icreq, pfv), "ICReq PFV not 0");
	/* We never pad C2H data (like nvmet, unlike SPDK): HPDA must be 0. */
	if (ic->hpda != 0)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_UNSUPPORTED_PARAM,
				     offsetof(struct nvmfd_tcp_icreq, hpda), "ICReq HPDA not 0");
	dgst = ic->dgst & (NVMFD_TCP_DGST_HDR | NVMFD_TCP_DGST_DATA);
	q->maxr2t = le32toh(ic->maxr2t);
	q->hdgst = dgst & NVMFD_TCP_DGST_HDR;
	q->ddgst = dgst & NVMFD_TCP_DGST_DATA;
	/* READ data straight from RAM namespaces (doc/perf.md §7): not under
	 * TLS (SSL_write() may want the same bytes again after a short
	 * write), and only when a logical block never spans two C2HData
	 * (each PDU is one snapshot of its blocks) */
	q->qp.lend_ok = !q->tls && !(q->c2h_chunk & 4095u);
	/* Echo the digests the host asked for, CPDA 0 (Linux hosts reject others). */
	nvmfd_tx_pdu_set(&q->ic_tx, q->ic_pdu,
			 (uint32_t)nvmfd_pdu_build_icresp(q->ic_pdu, 0, dgst, q->maxh2cdata), NULL,
			 0, NULL, 0);
	nvmfd_txq_push(&q->txq, &q->ic_tx); /* the first PDU of the queue */
	max_data = tcp_max_u32(q->maxh2cdata, tcp_max_u32(pc->inline_data_size, TCP_FABRICS_ICD));
	nvmfd_pdu_rx_ic_done(&q->rx, q->hdgst, q->ddgst, max_data);
	q->state = TCP_Q_LIVE;
	__atomic_store_n(&q->stage, TCP_STAGE_IC_DONE, __ATOMIC_RELEASE);
	return 0;
}

static int tcp_rx_cmd(struct tcp_queue *q)
{
	struct tcp_req *r = q->rx_hdr_seen ? q->rx_req : NULL;
	const struct nvmfd_sgl_desc *sgl;
	nvmfd_status_t st;
	int ret;

	if (!r) {
		ret = tcp_capsule_take(q, &r);
		if (ret)
			return ret;
	}
	if (r->pre_status) {
		tcp_req_fail(r, r->pre_status);
		return 0;
	}
	sgl = &r->req.sqe.dptr;
	r->req.in_capsule = r->icd_len > 0;
	r->req.data_len = r->icd_len;
	st = nvmfd__tgt_req_init(&r->req);
	if (st) {
		tcp_req_fail(r, st);
		return 0;
	}
	if (r->req.xfer == NVMFD_XFER_NONE)
		r->req.data_len = 0;
	if (r->req.data_len > r->req.data_cap) {
		tcp_req_fail(r, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD) |
					NVMFD_STATUS_DNR);
		return 0;
	}
	if (r->icd_len) {
		/* doc/protocol-notes.md §1.8: in-capsule data on a non-write is INVALID_FIELD. */
		if (r->req.xfer != NVMFD_XFER_H2C)
			tcp_req_fail(r, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD) |
						NVMFD_STATUS_DNR);
		else if (r->req.data_len != r->icd_len)
			tcp_req_fail(r, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_DATA) |
						NVMFD_STATUS_DNR);
		else
			tcp_req_execute(r);
		return 0;
	}
	if (r->req.data_len && sgl->type != NVMFD_SGL_ID_TRANSPORT) {
		/* Data that is not in the capsule moves by C2HData / R2T and
		 * needs a Transport Data Block descriptor (doc/protocol-notes.md §1.9). */
		tcp_req_fail(r, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_TYPE) |
					NVMFD_STATUS_DNR);
		return 0;
	}
	if (r->req.xfer == NVMFD_XFER_H2C && r->req.data_len) {
		/* One R2T for the whole length, TTAG = slot (as nvmet). */
		tcp_req_set_state(q, r, TCP_REQ_R2T);
		r->phase = TCP_TX_R2T;
		tcp_tx_push(q, r);
		return 0;
	}
	tcp_req_execute(r);
	return 0;
}

static int tcp_rx_h2c(struct tcp_queue *q)
{
	const struct nvmfd_tcp_data *d = nvmfd_pdu_rx_hdr(&q->rx);
	struct tcp_req *r = q->rx_req;
	bool last = d->ch.flags & NVMFD_TCP_F_DATA_LAST;

	if (!q->rx_hdr_seen || !r)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				     offsetof(struct nvmfd_tcp_data, datal), "H2CData without data");
	r->h2c_rcvd += le32toh(d->datal);
	if (r->h2c_rcvd == r->req.data_len) {
		if (!last)
			return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
					     offsetof(struct nvmfd_tcp_ch, flags),
					     "final H2CData without LAST_PDU");
		if (r->pre_status)
			tcp_req_fail(r, r->pre_status);
		else
			tcp_req_execute(r);
	} else if (last) {
		return tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				     offsetof(struct nvmfd_tcp_ch, flags),
				     "LAST_PDU before the end of the R2T");
	}
	return 0;
}

static int tcp_rx_pdu(struct tcp_queue *q)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&q->rx);
	int ret;

	TCP_STAT_ADD(q, pdus_rx, 1);
	if (q->state == TCP_Q_IC_WAIT && ch->type != NVMFD_TCP_ICREQ)
		return tcp_fatal_cur(q, NVMFD_TCP_FES_PDU_SEQUENCE, 0, "PDU before ICReq");
	switch (ch->type) {
	case NVMFD_TCP_ICREQ:
		ret = tcp_rx_icreq(q);
		break;
	case NVMFD_TCP_CMD:
		ret = tcp_rx_cmd(q);
		break;
	case NVMFD_TCP_H2C_DATA:
		ret = tcp_rx_h2c(q);
		break;
	case NVMFD_TCP_H2C_TERM:
		NVMFD_INFO(TCP_COMP, "queue %u qid %u peer %s: H2CTermReq received, closing",
			   q->id, q->qp.qid, q->qp.peer_addr);
		q->state = TCP_Q_CLOSING;
		ret = -ECONNRESET;
		break;
	default:
		ret = tcp_fatal_cur(q, NVMFD_TCP_FES_INVALID_HEADER,
				    offsetof(struct nvmfd_tcp_ch, type), "unexpected PDU type");
		break;
	}
	q->rx_hdr_seen = false;
	q->rx_req = NULL;
	return ret;
}

/* Handle one codec event (also for tcp_uring.c). */
int tcp_rx_event(struct tcp_queue *q, enum nvmfd_pdu_ev ev, bool *pdu_done)
{
	switch (ev) {
	case NVMFD_PDU_EV_NEED_MORE:
		return 0;
	case NVMFD_PDU_EV_HDR:
		return tcp_rx_hdr(q);
	case NVMFD_PDU_EV_PDU:
		*pdu_done = true;
		return tcp_rx_pdu(q);
	case NVMFD_PDU_EV_ERROR:
	default:
		return tcp_fatal_codec(q);
	}
}

/*
 * Receive and process PDUs until the socket is drained or the rx budget is
 * spent. Bytes go to the bounce buffer and are fed to the codec; once a
 * PDU's data has a destination and enough of it is outstanding, they are
 * received straight into the command slot (no copy).
 * Return: 0, or -errno / -EPROTO when the connection must close.
 */
static int tcp_rx(struct tcp_queue *q, bool *progress)
{
	nvmfd_budget_start_slice(&q->rx_budget);
	if (q->state == TCP_Q_TLS) {
		int ret = tcp_tls_step(q, progress);

		if (ret || q->state == TCP_Q_TLS)
			return ret;
	}
	if (q->uring)
		return tcp_uring_rx(q, progress);
	while (q->state == TCP_Q_IC_WAIT || q->state == TCP_Q_LIVE) {
		enum nvmfd_pdu_ev ev;
		bool pdu_done = false;
		uint8_t *ptr;
		size_t want, used, len;
		ssize_t n;
		int ret;

		if (!nvmfd_budget_left(&q->rx_budget)) {
			TCP_STAT_ADD(q, rx_budget_exhausted, 1);
			*progress = true; /* more may be waiting: come back */
			return 0;
		}
		if (q->bounce_off < q->bounce_len) {
			ev = nvmfd_pdu_rx_feed(&q->rx, q->bounce + q->bounce_off,
					       q->bounce_len - q->bounce_off, &used);
			q->bounce_off += (uint32_t)used;
			ret = tcp_rx_event(q, ev, &pdu_done);
			if (ret)
				return ret;
			if (pdu_done)
				nvmfd_budget_charge(&q->rx_budget, 0, 1);
			continue;
		}
		want = nvmfd_pdu_rx_want(&q->rx, &ptr);
		if (!want)
			return tcp_fatal_codec(q);
		if (q->rx_drained)
			return 0; /* as EAGAIN: see below */
		len = ptr && want >= TCP_RX_DIRECT_MIN ? want : TCP_RX_BOUNCE;
		n = nvmfd_stream_recv(q->fd, q->tls, ptr && want >= TCP_RX_DIRECT_MIN ? ptr : q->bounce,
				      len);
		if (n == -EAGAIN)
			return 0;
		/* A short read emptied the receive queue: whatever arrives
		 * later is a new edge of the socket's (edge-triggered) watch
		 * and runs this item again, so this pass need not ask again
		 * and learn EAGAIN (a system call per pass saved). Not under
		 * TLS: SSL_read() returns one record at most and may keep
		 * decrypted bytes that no socket edge will announce. */
		q->rx_drained = !q->tls && n >= 0 && (size_t)n < len;
		if (n == 0)
			return -ECONNRESET; /* orderly EOF from the host */
		if (n < 0)
			return (int)n;
		*progress = true;
		TCP_STAT_ADD(q, bytes_rx, n);
		nvmfd_budget_charge(&q->rx_budget, (uint64_t)n, 0);
		/* --exec auto asked where the host's data comes from */
		if (__atomic_load_n(&q->in_want, __ATOMIC_RELAXED))
			tcp_auto_note_incoming(q);
		if (ptr && want >= TCP_RX_DIRECT_MIN) {
			ev = nvmfd_pdu_rx_advance(&q->rx, (size_t)n);
			ret = tcp_rx_event(q, ev, &pdu_done);
			if (ret)
				return ret;
			if (pdu_done)
				nvmfd_budget_charge(&q->rx_budget, 0, 1);
		} else {
			q->bounce_off = 0;
			q->bounce_len = (uint32_t)n;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Transmit path                                                       */
/* ------------------------------------------------------------------ */

/*
 * The @len bytes of @r's next C2HData when the READ's data is lent by the
 * backend (doc/perf.md §7): inside tcp_tx()'s send window they are sent
 * from the backend's memory, locked (its digest computed and the kernel's
 * copy made under the lock) until tcp_lent_settle(); outside it (the
 * C2HTermReq's best-effort sends, other send paths) they are copied into
 * the slot under the lock and sent from there.
 */
static const uint8_t *tcp_lent_data(struct tcp_queue *q, struct tcp_req *r, uint32_t len)
{
	const uint8_t *lent = (const uint8_t *)r->req.lent + r->c2h_off;
	uint8_t *slot = (uint8_t *)r->req.data + r->c2h_off;

	assert(!r->lend_held);
	nvmfd__tgt_req_lent_lock(&r->req, r->c2h_off, len);
	if (q->lend_window && q->nr_held < TCP_TX_BATCH) {
		r->lend_held = true;
		r->held_off = r->c2h_off;
		r->held_len = len;
		q->held[q->nr_held++] = r;
		return lent;
	}
	memcpy(slot, lent, len);
	nvmfd__tgt_req_lent_unlock(&r->req, r->c2h_off, len);
	return slot;
}

/*
 * End of a send window: unlock the lent data of the C2HData PDUs prepared
 * in it. A PDU the socket did not take at all is unbuilt (built again,
 * digest included, in a later window); one cut short is copied into its
 * slot first and finished from there, so its bytes stay one snapshot. A
 * slot freed meanwhile returns its lent buffer now.
 */
static void tcp_lent_settle(struct tcp_queue *q)
{
	for (uint32_t i = 0; i < q->nr_held; i++) {
		struct tcp_req *r = q->held[i];
		struct nvmfd_tx_pdu *p = &r->tx;

		if (p->queued && p->built && p->sent < p->total) {
			if (p->sent == 0) {
				nvmfd_tx_pdu_clear(p);
			} else {
				uint8_t *slot = (uint8_t *)r->req.data + r->held_off;

				memcpy(slot, (const uint8_t *)r->req.lent + r->held_off, r->held_len);
				p->seg[1].iov_base = slot;
			}
		}
		nvmfd__tgt_req_lent_unlock(&r->req, r->held_off, r->held_len);
		r->lend_held = false;
		if (r->state == TCP_REQ_FREE)
			nvmfd__tgt_req_release(&r->req);
	}
	q->nr_held = 0;
}

/* txq prepare: build the current PDU of slot @p (lazily: the C2HData
 * header and data digest only when the gather reaches it). */
static void tcp_tx_prepare(void *owner, struct nvmfd_tx_pdu *p)
{
	struct tcp_queue *q = owner;
	struct tcp_req *r = container_of(p, struct tcp_req, tx);
	const struct nvmfd_tgt_req *req = &r->req;
	const uint8_t *src;
	uint32_t len, hlen;
	uint8_t flags;
	bool last;

	r->pdu_dlen = 0;
	p->more = true; /* the slot sends another PDU after this one */
	switch (r->phase) {
	case TCP_TX_R2T:
		hlen = (uint32_t)nvmfd_pdu_build_r2t(r->hdr, req->sqe.cid, req->slot, 0,
						     req->data_len, q->hdgst);
		p->more = false;
		nvmfd_tx_pdu_set(p, r->hdr, hlen, NULL, 0, NULL, 0);
		return;
	case TCP_TX_C2H:
		len = tcp_min_u32(req->data_len - r->c2h_off, q->c2h_chunk);
		last = r->c2h_off + len == req->data_len;
		flags = 0;
		if (last) {
			flags |= NVMFD_TCP_F_DATA_LAST;
			if (r->c2h_success)
				flags |= NVMFD_TCP_F_DATA_SUCCESS;
			p->more = false; /* the slot's last PDU (with its response) */
		}
		hlen = (uint32_t)nvmfd_pdu_build_data(r->hdr, NVMFD_TCP_C2H_DATA, flags, req->sqe.cid,
						      0, r->c2h_off, len, q->hdgst, q->ddgst);
		r->pdu_dlen = len;
		src = req->lent ? tcp_lent_data(q, r, len) : (const uint8_t *)req->data + r->c2h_off;
		if (q->ddgst) {
			/* Lent data is the namespace's own memory, read at
			 * random: most likely in no cache; the backend may
			 * remember its CRC (doc/perf.md §13, §14). */
			uint32_t dg = htole32(r->lend_held ?
						      nvmfd__tgt_req_lent_digest(&r->req, r->c2h_off, len) :
						      nvmfd_digest(src, len));

			memcpy(r->ddgst, &dg, sizeof(dg));
		}
		nvmfd_tx_pdu_set(p, r->hdr, hlen, src, len, r->ddgst,
				 q->ddgst ? NVMFD_TCP_DIGEST_LEN : 0);
		if (last && !r->c2h_success) {
			/* The CQE is final since tcp_queue_response(): the
			 * CapsuleResp goes right behind the last C2HData, in
			 * the same sendmsg (one wake-up of the host, not two). */
			hlen = (uint32_t)nvmfd_pdu_build_rsp(r->rsp, &req->cqe, q->hdgst);
			nvmfd_tx_pdu_set_trailer(p, r->rsp, hlen);
		}
		return;
	case TCP_TX_RSP:
	default:
		hlen = (uint32_t)nvmfd_pdu_build_rsp(r->hdr, &req->cqe, q->hdgst);
		p->more = false;
		nvmfd_tx_pdu_set(p, r->hdr, hlen, NULL, 0, NULL, 0);
		return;
	}
}

/* txq done: one PDU of a slot (or a control PDU) is on the wire; move
 * the slot on: its next PDU keeps its place in the FIFO (STAY), or it
 * leaves (LEAVE). A closing queue sends nothing more for a slot. */
static enum nvmfd_tx_next tcp_tx_done(void *owner, struct nvmfd_tx_pdu *p)
{
	struct tcp_queue *q = owner;
	struct tcp_req *r;

	if (p == &q->ic_tx || p == &q->term_tx)
		return NVMFD_TX_LEAVE;
	r = container_of(p, struct tcp_req, tx);
	switch (r->phase) {
	case TCP_TX_R2T:
		r->h2c_rcvd = 0;
		tcp_req_set_state(q, r, TCP_REQ_H2C);
		TCP_STAT_ADD(q, r2ts, 1);
		return NVMFD_TX_LEAVE;
	case TCP_TX_C2H:
		r->c2h_off += r->pdu_dlen;
		if (r->c2h_off < r->req.data_len) {
			if (q->state >= TCP_Q_CLOSING)
				return NVMFD_TX_LEAVE; /* reclaimed at teardown */
			nvmfd_tx_pdu_clear(p);
			return NVMFD_TX_STAY;
		}
		if (!r->c2h_success)
			TCP_STAT_ADD(q, pdus_tx, 1); /* the CapsuleResp trailer */
		break;
	case TCP_TX_RSP:
	default:
		break;
	}
	TCP_STAT_ADD(q, completions, 1);
	tcp_req_put(q, r);
	return NVMFD_TX_LEAVE;
}

static const struct nvmfd_txq_ops tcp_txq_ops = {
	.prepare = tcp_tx_prepare,
	.done = tcp_tx_done,
};

/* A TLS queue sends through its TLS connection (net/stream.h). */
const struct nvmfd_txq_ops tcp_txq_ops_tls = {
	.prepare = tcp_tx_prepare,
	.done = tcp_tx_done,
	.sendv = tcp_tls_sendv,
};

/*
 * Send queued PDUs until the queue is empty, the socket is full or the tx
 * budget is spent: each round gathers the current PDU of up to
 * TCP_TX_BATCH slots (within the PDU budget) into one sendmsg (net/txq.h:
 * a PDU cut short is finished alone, MSG_MORE while more is queued).
 * Return: 0, or -errno when the connection must close.
 */
static int tcp_tx(struct tcp_queue *q, bool *progress)
{
	if (q->uring)
		return tcp_uring_tx(q, progress);
	q->tx_blocked = false;
	nvmfd_budget_start_slice(&q->tx_budget);
	while (!nvmfd_txq_empty(&q->txq)) {
		unsigned int max_pdus = TCP_TX_BATCH, npdu = 0;
		ssize_t n;

		if (!nvmfd_budget_left(&q->tx_budget)) {
			TCP_STAT_ADD(q, tx_budget_exhausted, 1);
			*progress = true;
			return 0;
		}
		if (q->tx_budget.pdus_max && q->tx_budget.pdus_max - q->tx_budget.pdus < max_pdus)
			max_pdus = tcp_max_u32(1, (uint32_t)(q->tx_budget.pdus_max -
							     q->tx_budget.pdus));
		/* lent READ data is sent from the backend within this window */
		q->lend_window = true;
		n = nvmfd_txq_xmit(&q->txq, q->fd, max_pdus, q->txops, q, &npdu);
		q->lend_window = false;
		tcp_lent_settle(q);
		if (n == -EAGAIN) {
			TCP_STAT_ADD(q, eagain_sends, 1);
			q->tx_blocked = true;
			return 0;
		}
		if (n < 0)
			return (int)n;
		*progress = true;
		TCP_STAT_ADD(q, bytes_tx, n);
		TCP_STAT_ADD(q, pdus_tx, npdu);
		nvmfd_budget_charge(&q->tx_budget, (uint64_t)n, npdu);
	}
	if (q->tls) {
		/* TLS took bytes the socket could not take yet */
		int ret = nvmfd_stream_flush(q->tls);

		if (ret == -EAGAIN)
			q->tx_blocked = true;
		else if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Core callbacks                                                      */
/* ------------------------------------------------------------------ */

static void tcp_queue_response(struct nvmfd_tgt_req *req)
{
	struct tcp_req *r = tcp_r(req);
	struct tcp_queue *q = tcp_q(req->qp);

	if (q->state >= TCP_Q_CLOSING) {
		/* Nobody to answer: drop the response, recycle the slot. */
		tcp_req_put(q, r);
		return;
	}
	tcp_req_set_state(q, r, TCP_REQ_TX);
	if (req->xfer == NVMFD_XFER_C2H && req->data_len && !nvmfd_cqe_status(&req->cqe)) {
		r->phase = TCP_TX_C2H;
		r->c2h_off = 0;
		/* doc/protocol-notes.md §1.6: SUCCESS only with SQ flow control disabled (the CQE
		 * would carry SQHD otherwise) and a CQE that says nothing more. */
		r->c2h_success = q->qp.sqflow_disabled && !req->cqe.result && !req->cqe.dw1;
	} else {
		r->phase = TCP_TX_RSP;
	}
	tcp_tx_push(q, r);
}

/* Ask @q to close (any thread): its next pass tears it down. */
void tcp_queue_shutdown(struct tcp_queue *q)
{
	__atomic_store_n(&q->shutdown, 1, __ATOMIC_RELEASE);
	tcp_queue_kick(q);
}

static void tcp_shutdown_queue(struct nvmfd_tgt_qp *qp)
{
	tcp_queue_shutdown(tcp_q(qp));
}

static void tcp_kick(struct nvmfd_tgt_qp *qp)
{
	struct tcp_queue *q = tcp_q(qp);

	__atomic_add_fetch(&q->st.kicks, 1, __ATOMIC_RELAXED); /* any thread */
	tcp_queue_kick(q);
}

/* ------------------------------------------------------------------ */
/* io_work                                                             */
/* ------------------------------------------------------------------ */
/* Best effort, once: an ICResp still waiting goes first; then a PDU that
 * is partly on the wire is finished; then the C2HTermReq follows whole
 * PDUs (never inside one). Anything else queued is dropped. */
static void tcp_send_term(struct tcp_queue *q)
{
	unsigned int npdu;

	if (q->ic_tx.queued && nvmfd_txq_head(&q->txq) == &q->ic_tx) {
		nvmfd_txq_xmit(&q->txq, q->fd, 1, q->txops, q, &npdu);
		if (q->ic_tx.queued)
			return; /* no room even for the ICResp */
	}
	nvmfd_txq_drop_unsent(&q->txq);
	if (nvmfd_txq_partial(&q->txq)) {
		nvmfd_txq_xmit(&q->txq, q->fd, 1, q->txops, q, &npdu);
		if (nvmfd_txq_partial(&q->txq))
			return; /* a TermReq now would land inside a PDU */
	}
	nvmfd_txq_drop_unsent(&q->txq);
	nvmfd_tx_pdu_set(&q->term_tx, q->term_pdu, q->term_len, NULL, 0, NULL, 0);
	nvmfd_txq_push(&q->txq, &q->term_tx);
	if (nvmfd_txq_xmit(&q->txq, q->fd, 1, q->txops, q, &npdu) > 0)
		TCP_STAT_ADD(q, pdus_tx, npdu);
}

/* Take back the slots a closing queue abandoned in transport states, and
 * the commands the core held without backend I/O (Asynchronous Event
 * Requests, which nvmfd__tgt_qp_destroy() forgot), and check that none is
 * lost: every slot FREE again (doc/conventions.md §6). Context: owner,
 * after nvmfd__tgt_qp_destroy() and with no backend io in flight. */
static void tcp_reclaim_slots(struct tcp_queue *q)
{
	nvmfd_txq_reset(&q->txq);
	assert(nvmfd__tgt_qp_inflight(&q->qp) == 0);
	for (uint32_t i = 0; i < q->nr_reqs; i++) {
		struct tcp_req *r = &q->reqs[i];

		if (r->state != TCP_REQ_FREE)
			tcp_req_put(q, r);
	}
	assert(q->nr_free == q->nr_reqs);
	assert(q->nr_state[TCP_REQ_FREE] == q->nr_reqs);
}

/*
 * Tear the connection down (queue owner), without blocking the worker:
 * stop the socket's readiness, then let the backend finish what it holds
 * (DRAINING: each completion runs this again, by event: the completion
 * eventfd or the shared ring's kick), then detach from the core, close
 * the socket and hand the queue to the port's release work, which frees
 * it.
 */
static void tcp_queue_teardown(struct tcp_queue *q)
{
	char drain[512];
	int ret;

	if (q->state != TCP_Q_DRAINING) {
		__atomic_store_n(&q->closing, true, __ATOMIC_RELAXED); /* no stall checks */
		q->state = TCP_Q_CLOSING;
		/* --net uring: not behind a send in flight (inside a PDU) */
		if (q->term_pending && !(q->uring && tcp_uring_send_busy(q)))
			tcp_send_term(q);
		q->term_pending = false;
		if (!q->uring)
			nvmfd_rt_unwatch_fd(&q->io_work, q->fd);
		q->state = TCP_Q_DRAINING;
	}
	/* completions of a closing queue drop their responses */
	nvmfd__tgt_qp_poll(&q->qp, false);
	/* --net uring: the kernel returns every socket CQE first */
	if ((q->uring && tcp_uring_close(q)) || nvmfd__tgt_qp_inflight(&q->qp)) {
		/* Backend ios hold slot buffers: come back when one ends. */
		if (q->ring_fd >= 0) {
			/* edge-triggered like a live queue's (cqpool.h) */
			ret = nvmfd_rt_watch_fd(&q->io_work, q->ring_fd, EPOLLIN | EPOLLET);
			if (ret && ret != -ECANCELED)
				NVMFD_ERR_RATELIMIT(TCP_COMP,
						    "queue %u: cannot watch backend completions: %s",
						    q->id, strerror(-ret));
		}
		return;
	}
	if (q->ring_fd >= 0)
		nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
	q->ring_watched = false;
	if (q->uring)
		tcp_uring_unwatch(q);
	nvmfd__tgt_qp_drain_posted(&q->qp);
	nvmfd__tgt_qp_destroy(&q->qp); /* forgets held AERs */
	tcp_reclaim_slots(q);
	if (q->placed) {
		nvmfd_rt_unplace(q->port->rt, q->io_cpu);
		q->placed = false;
	}
	/* A graceful close: stop sending, read what the host already sent so
	 * close() does not turn into a reset that could discard the TermReq. */
	nvmfd_tls_free(q->tls); /* close_notify, best effort */
	q->tls = NULL;
	shutdown(q->fd, SHUT_WR);
	for (int i = 0; i < 64 && nvmfd__sock_recv(q->fd, drain, sizeof(drain)) > 0; i++)
		;
	q->state = TCP_Q_DEAD;
	tcp_port_release(q->port, q); /* closes q->fd under port->lock */
}

/*
 * Before sleeping: make sure readiness will queue us. The socket and the
 * completion eventfd are persistent edge-triggered registrations
 * (internal/rt.h): a pass only ends without re-queueing once recv() said
 * EAGAIN and the last reap found nothing, so every later byte or
 * completion is a new edge. Watching again with the same events costs no
 * system call; only a change (EPOLLOUT while a send would block, or the
 * eventfd after --backend-poll dropped it) is one epoll_ctl.
 */
static int tcp_rearm(struct tcp_queue *q)
{
	uint32_t ev = EPOLLIN | EPOLLET;
	int ret;

	if (q->tx_blocked || nvmfd_stream_want_out(q->tls))
		ev |= EPOLLOUT;
	if (q->uring)
		ret = tcp_uring_rearm(q); /* its eventfd, not the socket */
	else
		ret = nvmfd_rt_watch_fd(&q->io_work, q->fd, ev);
	if (ret)
		return ret;
	TCP_STAT_ADD(q, rearms, 1);
	if (q->ring_fd < 0)
		return 0; /* shared ring: its completion work watches it */
	ret = nvmfd_rt_watch_fd(&q->io_work, q->ring_fd, EPOLLIN | EPOLLET);
	if (!ret)
		q->ring_watched = true;
	return ret;
}

/* --backend-poll (or --exec auto while it idle-polls): while we keep
 * polling, completions are found by peeking the CQ each pass, not through
 * the ring's eventfd: stop watching it. */
static void tcp_poll_backend(struct tcp_queue *q)
{
	if (!tcp_backend_polling(q) || q->ring_fd < 0 || !q->ring_watched)
		return;
	nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
	q->ring_watched = false;
}

/* Publish a successful Connect to the timeout checker (owner). An admin
 * queue's io_work becomes urgent on its pool (nvmfd_rt_work_set_urgent()):
 * its Keep Alive must be answered within KATO however many busy I/O
 * queues share the worker, and it carries little work. */
static void tcp_note_connected(struct tcp_queue *q)
{
	if (q->qp.connected &&
	    __atomic_load_n(&q->stage, __ATOMIC_RELAXED) != TCP_STAGE_CONNECTED) {
		if (q->qp.qid == 0)
			nvmfd_rt_work_set_urgent(&q->io_work, true);
		__atomic_store_n(&q->stage, TCP_STAGE_CONNECTED, __ATOMIC_RELEASE);
	}
}

/*
 * The timeout checker marked a setup deadline as missed: confirm it against
 * the queue's own state (the stage may have been reached meanwhile) and
 * log once. Return: true to tear the queue down. Context: queue owner.
 */
static bool tcp_setup_expired(struct tcp_queue *q)
{
	const struct nvmfd_cfg *gcfg = q->port->gcfg;
	int st = __atomic_exchange_n(&q->expired, 0, __ATOMIC_ACQ_REL);
	uint32_t ms;

	if (!st)
		return false;
	st--; /* q->expired holds the stage + 1 */
	tcp_note_connected(q);
	if (st == TCP_STAGE_TLS && q->state == TCP_Q_TLS) {
		ms = gcfg->tls_handshake_timeout_ms;
		NVMFD_WARN_RATELIMIT(TCP_COMP,
				     "queue %u peer %s: TLS handshake not finished within %u.%03u s, "
				     "closing",
				     q->id, q->qp.peer_addr, ms / 1000, ms % 1000);
		return true;
	}
	if (st == TCP_STAGE_ACCEPTED && q->state == TCP_Q_IC_WAIT) {
		ms = gcfg->icreq_timeout_ms;
		NVMFD_WARN_RATELIMIT(TCP_COMP, "queue %u peer %s: no ICReq within %u.%03u s, closing",
				     q->id, q->qp.peer_addr, ms / 1000, ms % 1000);
		return true;
	}
	if (st == TCP_STAGE_IC_DONE && !q->qp.connected) {
		ms = gcfg->connect_timeout_ms;
		NVMFD_WARN_RATELIMIT(TCP_COMP, "queue %u peer %s: no Connect within %u.%03u s, closing",
				     q->id, q->qp.peer_addr, ms / 1000, ms % 1000);
		return true;
	}
	return false; /* reached meanwhile; the checker looks again */
}

/*
 * One bounded io_work pass (doc/protocol-notes.md §3.1, doc/execution-model.md §3): rx up to
 * its budget, reap completions, tx up to its budget, repeated while
 * something progressed and the pass deadline has not passed; then either
 * re-queue (work left, or idle polling) or re-arm readiness and return.
 */
void tcp_io_work(struct nvmfd_work *w)
{
	struct tcp_queue *q = container_of(w, struct tcp_queue, io_work);
	bool progress, any = false;
	int ret = 0;

	if (q->state == TCP_Q_DEAD)
		return;
	if (q->state == TCP_Q_DRAINING) {
		tcp_queue_teardown(q);
		return;
	}
	TCP_STAT_ADD(q, passes, 1);
	if (!q->requeued)
		TCP_STAT_ADD(q, wakeups, 1);
	q->requeued = false;
	q->rx_drained = false; /* each pass asks the socket at least once */
	if (q->auto_apply) /* --exec auto: the controller's poll period, budgets */
		tcp_auto_apply(q);
	nvmfd_budget_start_pass(&q->rx_budget, nvmfd_now_ns(),
				tcp_auto_pass_us(q, tcp_exec(q)->io_work_deadline_us ?:
							    TCP_DEF_DEADLINE_US));
	do {
		if (__atomic_load_n(&q->shutdown, __ATOMIC_ACQUIRE))
			goto teardown;
		if (__atomic_load_n(&q->expired, __ATOMIC_ACQUIRE) && tcp_setup_expired(q))
			goto teardown;
		progress = false;
		ret = tcp_rx(q, &progress);
		if (ret)
			goto teardown;
		/* the core's backend step: flush, reap, posted completions */
		if (nvmfd__tgt_qp_poll(&q->qp, tcp_backend_polling(q) &&
						       (q->ring_fd < 0 || !q->ring_watched)) > 0)
			progress = true;
		ret = tcp_tx(q, &progress);
		if (ret)
			goto teardown;
		any |= progress;
	} while (progress && !nvmfd_budget_expired(&q->rx_budget, nvmfd_now_ns()));
	if (any)
		TCP_STAT_ADD(q, work_passes, 1);
	tcp_note_connected(q);

	if (tcp_exec(q)->wq_per_ctrl && !q->migrated && q->qp.connected && q->qp.ctrl &&
	    q->state == TCP_Q_LIVE) {
		/* Connected: move to the controller's pools. End this pass
		 * without re-arming; the port's release work moves us. */
		q->migrated = true;
		tcp_port_migrate(q->port, q);
		return;
	}
	if (progress) {
		/* Deadline spent with work left: yield the worker, come back. */
		TCP_STAT_ADD(q, deadline_exhausted, 1);
		TCP_STAT_ADD(q, requeues, 1);
		nvmfd_idle_poll_update(&q->idle, true, nvmfd_now_ns());
		tcp_poll_backend(q);
		q->requeued = true;
		nvmfd_rt_queue_work(&q->io_work);
		return;
	}
	/* Purely event driven (no idle-poll period): the loop above ended on a
	 * step that found nothing (recv() said EAGAIN or a short read drained
	 * the socket, the reap was empty), so sleep now. nvmet's one more pass
	 * after progress would only learn EAGAIN again (a recv() and a pass
	 * per wake-up); with the edge-triggered watches every later byte or
	 * completion is a new edge that runs us again. With a period the extra
	 * pass stays: it starts the idle-poll timer. */
	if (nvmfd_idle_poll_update(&q->idle, any && q->idle.period_ns, nvmfd_now_ns())) {
		/* progress: one more pass (nvmet requeues while ops > 0);
		 * no progress: idle polling within its period */
		if (!any)
			TCP_STAT_ADD(q, idle_polls, 1);
		TCP_STAT_ADD(q, requeues, 1);
		tcp_poll_backend(q);
		q->requeued = true;
		nvmfd_rt_queue_work(&q->io_work);
		return;
	}
	/* The ring's eventfd can be signalled after its completion was already
	 * reaped in the loop above. Watched edge-triggered, a stale count does
	 * not wake us again; but a fresh registration (after --backend-poll
	 * dropped it) would fire at once on it: clear it first. */
	if (!q->ring_watched)
		nvmfd__tgt_qp_idle(&q->qp);
	ret = tcp_rearm(q);
	if (!ret)
		return;
	if (ret == -ECANCELED)
		/* a migration is moving this item (a kick ran it on the old
		 * pool meanwhile): the move queues the next pass on the new
		 * pool, which re-arms there */
		return;
	NVMFD_ERR_RATELIMIT(TCP_COMP, "queue %u qid %u peer %s: cannot watch socket: %s", q->id,
			    q->qp.qid, q->qp.peer_addr, strerror(-ret));

teardown:
	if (ret && ret != -EPROTO && ret != -ECONNRESET && ret != -EPIPE)
		NVMFD_INFO(TCP_COMP, "queue %u qid %u peer %s: connection error: %s", q->id,
			   q->qp.qid, q->qp.peer_addr, strerror(-ret));
	tcp_queue_teardown(q);
}

/* Free a queue whose io_work is cancelled (or never ran). Context: the
 * port's release work, or the accept work on a failed create. */
void tcp_queue_free(struct tcp_queue *q)
{
	if (q->placed)
		nvmfd_rt_unplace(q->port->rt, q->io_cpu);
	nvmfd__tgt_qp_close_backend(&q->qp);
	if (q->ctrl_rt)
		nvmfd_rt_group_put(q->port->ctrl_rts, q->ctrl_rt);
	if (q->data)
		munmap(q->data, q->data_size);
	nvmfd_tls_free(q->tls);
	tcp_uring_queue_free(q);
	if (q->fd >= 0)
		close(q->fd);
	free(q->bounce);
	if (q->reqs)
		munmap(q->reqs, q->reqs_size);
	free(q);
}

/* @len bytes of address space, backed by memory only where touched
 * (MAP_NORESERVE: no commit charge), or NULL. */
static void *tcp_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * Put slots [q->nr_reqs, @n) to use: back their part of the reserved
 * mapping with memory (MADV_POPULATE_WRITE, so that no memory shows as
 * -ENOMEM now rather than as a fault later; kernels before 5.14 fault the
 * pages in as the slots are written), initialise them and put them on the
 * free list, lowest index first. Slots already in use are not touched.
 * Return: 0, -ENOMEM. Context: queue owner (or creation, before the
 * queue is listed).
 */
static int tcp_slots_add(struct tcp_queue *q, uint32_t n)
{
	uint32_t old = q->nr_reqs;
	uintptr_t lo, hi;

	assert(n <= q->max_reqs);
	if (n <= old)
		return 0;
	lo = (uintptr_t)&q->reqs[old] & ~(uintptr_t)4095u;
	hi = ((uintptr_t)&q->reqs[n] + 4095u) & ~(uintptr_t)4095u;
	while (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE)) {
		if (errno == EINVAL)
			break; /* not known to this kernel: faulted in below */
		if (errno != EINTR)
			return -ENOMEM; /* ENOMEM, or EFAULT: no page to be had */
	}
	for (uint32_t i = n; i-- > old;) {
		struct tcp_req *r = &q->reqs[i];

		memset(r, 0, sizeof(*r));
		r->state = TCP_REQ_FREE;
		r->req.qp = &q->qp;
		r->req.slot = (uint16_t)i;
		r->req.data = q->data + (size_t)i * q->slot_size;
		r->req.data_cap = q->slot_size;
		r->req.xprt = q;
		r->next_free = q->free_head;
		q->free_head = i;
	}
	q->nr_free += n - old;
	__atomic_store_n(&q->nr_state[TCP_REQ_FREE], q->nr_state[TCP_REQ_FREE] + (n - old),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&q->nr_reqs, n, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The backend completion context for @depth ios: opened once, the source
 * chosen now (--exec auto decides from its CPU's load at Connect); a
 * per-queue ring opened smaller than a later enable asks is opened again
 * (only before the queue was connected: nothing is in flight then). A
 * shared ring is sized from the port's largest queue, as every queue on
 * its CPU shares it. Return: 0, -errno. Context: queue owner.
 */
static int tcp_open_backend(struct tcp_queue *q, unsigned int depth)
{
	struct nvmfd_rt_ring *rr;
	enum nvmfd_cq_src src;
	int ret;

	if (q->qp.cq) {
		if (q->ring_fd < 0 || depth <= q->cq_depth || nvmfd__tgt_qp_inflight(&q->qp))
			return 0; /* shared, or big enough, or busy: keep it */
		nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
		q->ring_watched = false;
		q->ring_fd = -1;
		/* the stats read the context under port->lock */
		pthread_mutex_lock(&q->port->lock);
		nvmfd__tgt_qp_close_backend(&q->qp);
		pthread_mutex_unlock(&q->port->lock);
		q->cq_depth = 0;
	}
	src = tcp_auto_cq_source(q);
	/* --uring-ring worker: on its socket's ring, sized once (as a
	 * shared ring is: it is never opened again) */
	rr = src == NVMFD_CQ_SRC_POOL ? tcp_uring_backend_ring(q) : NULL;
	if (rr) {
		ret = nvmfd__tgt_qp_open_backend_worker(&q->qp, rr, q->max_reqs);
		if (ret)
			return ret;
		q->cq_depth = q->max_reqs;
		q->ring_fd = -1; /* its CQEs kick us (ops->kick) */
		return 0;
	}
	if (src == NVMFD_CQ_SRC_SHARED ||
	    (src == NVMFD_CQ_SRC_POOL && q->port->gcfg->exec.cq_pool_shared))
		depth = q->max_reqs;
	ret = nvmfd__tgt_qp_open_backend_src(&q->qp, q->io_cpu, depth, src);
	if (ret)
		return ret;
	q->cq_depth = depth;
	q->ring_fd = nvmfd__tgt_qp_event_fd(&q->qp);
	return 0;
}

/*
 * xprt.h enable_queue: a Connect for @sqsize (0's based) entries, or the
 * first authentication, makes @qp usable. Give it 2 x entries + 1 command
 * slots (at most what the port reserved: an admin queue's SQSIZE is not
 * bounded by MQES) and its backend completion context. Slots only grow;
 * a later call that asks for no more changes nothing.
 * Return: 0, -ENOMEM, -errno from the completion context (e.g. -EMFILE
 * for a ring of its own). Context: queue owner.
 */
static int tcp_enable_queue(struct nvmfd_tgt_qp *qp, uint16_t sqsize)
{
	struct tcp_queue *q = tcp_q(qp);
	uint32_t want = tcp_min_u32(2u * ((uint32_t)sqsize + 1u) + 1u, q->max_reqs);
	int ret;

	TCP_ASSERT_OWNER(q);
	want = tcp_max_u32(want, q->nr_reqs);
	ret = tcp_open_backend(q, want);
	if (ret)
		return ret;
	ret = tcp_slots_add(q, want);
	if (ret)
		return ret;
	NVMFD_DBG(TCP_COMP, "queue %u: %u command slots, completions from %s", q->id, q->nr_reqs,
		  q->ring_fd >= 0 ? "its own ring"
		  : nvmfd_cq_source(q->qp.cq) == NVMFD_CQ_SRC_WORKER ? "the worker ring"
								      : "a shared ring");
	return 0;
}

/*
 * tcp_queue_create() - set up the queue of an accepted connection and
 * queue its first pass. Return: 0, -ENOMEM, -ESHUTDOWN (port stopping),
 * -errno from the completion context; on failure the caller closes @fd.
 * Context: the port's accept work.
 */
int tcp_queue_create(struct tcp_port *port, int fd)
{
	const struct nvmfd_cfg *gcfg = port->gcfg;
	const struct nvmfd_cfg_port *pc = port->cfg;
	uint32_t qsize = pc->max_queue_size ? pc->max_queue_size : TCP_DEF_QUEUE_SIZE;
	struct nvmfd_pdu_rx_opts opts = { .role = NVMFD_PDU_ROLE_CTRL };
	struct tcp_queue *q;
	uint32_t slot;
	int incoming, ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fd = fd;
	q->port = port;
	q->ring_fd = -1;
	q->txops = &tcp_txq_ops;
	nvmfd_txq_init(&q->txq);
	q->free_head = UINT32_MAX;
	q->max_reqs = tcp_min_u32(2 * qsize + 1, TCP_MAX_SLOTS);
	q->reqs_size = ((size_t)q->max_reqs * sizeof(*q->reqs) + 4095u) & ~(size_t)4095u;
	q->reqs = tcp_reserve(q->reqs_size);
	if (!q->reqs) {
		ret = -ENOMEM;
		goto out_free;
	}
	q->bounce = malloc(TCP_RX_BOUNCE);
	if (!q->bounce) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* A slot holds the largest transfer: MDTS, or in-capsule data. */
	slot = tcp_max_u32(nvmfd__tgt_max_io_size(port->tgt),
			   tcp_max_u32(pc->inline_data_size, TCP_FABRICS_ICD));
	slot = (slot + 4095u) & ~4095u;
	q->slot_size = slot;
	q->data_size = (size_t)slot * q->max_reqs;
	q->data = tcp_reserve(q->data_size);
	if (!q->data) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* Placement: the qid is not known before Connect, so rr uses a
	 * per-port counter in its place (doc/protocol-notes.md §3.1: nvmet's
	 * old last_cpu). */
	incoming = nvmfd__sock_incoming_cpu(fd);
	q->io_cpu = nvmfd_rt_place(port->rt, gcfg->exec.place,
				   __atomic_add_fetch(&port->rr, 1, __ATOMIC_RELAXED),
				   NULL, incoming < 0 ? -1 : incoming);
	q->placed = true;

	q->maxh2cdata = gcfg->maxh2cdata;
	if (q->maxh2cdata < NVMFD_TCP_MIN_MAXH2CDATA)
		q->maxh2cdata = NVMFD_TCP_MIN_MAXH2CDATA;
	q->maxh2cdata &= ~3u; /* NVMe/TCP 1.0 §3.6.2.3: a multiple of dwords */
	q->c2h_chunk = q->maxh2cdata;
	opts.max_data = tcp_max_u32(q->maxh2cdata, tcp_max_u32(pc->inline_data_size,
								TCP_FABRICS_ICD));
	nvmfd_pdu_rx_init(&q->rx, &opts);
	nvmfd_idle_poll_init(&q->idle, gcfg->exec.idle_poll_us);
	nvmfd_budget_init(&q->rx_budget, gcfg->exec.rx_budget_bytes, gcfg->exec.rx_budget_pdus);
	nvmfd_budget_init(&q->tx_budget, gcfg->exec.tx_budget_bytes, gcfg->exec.tx_budget_pdus);

	nvmfd__tgt_qp_init(&q->qp, port->tgt, pc, &tcp_xprt_ops);
	/* the setup's slots; the rest and the core's backend completion
	 * context come with tcp_enable_queue() */
	ret = tcp_slots_add(q, tcp_min_u32(TCP_SETUP_SLOTS, q->max_reqs));
	if (ret)
		goto out_free;
	if (nvmfd__sock_local_addr(fd, q->qp.local_addr, sizeof(q->qp.local_addr)))
		snprintf(q->qp.local_addr, sizeof(q->qp.local_addr), "%.63s", pc->traddr);
	if (nvmfd__sock_peer_addr(fd, q->qp.peer_addr, sizeof(q->qp.peer_addr)))
		snprintf(q->qp.peer_addr, sizeof(q->qp.peer_addr), "?");
	ret = tcp_uring_queue_init(q); /* --net uring */
	if (ret)
		goto out_destroy_qp;

	nvmfd_work_init(&q->io_work, port->rt, tcp_io_work, q->io_cpu);
	tcp_auto_queue_init(q);
	/* a TLS port: first the TLS handshake (or a plain first byte) */
	q->state = port->tls_ctx ? TCP_Q_TLS : TCP_Q_IC_WAIT;
	q->stage = port->tls_ctx ? TCP_STAGE_TLS : TCP_STAGE_ACCEPTED;
	q->accept_ns = nvmfd_now_ns();

	pthread_mutex_lock(&port->lock);
	if (__atomic_load_n(&port->stopping, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&port->lock);
		ret = -ESHUTDOWN;
		goto out_destroy_qp;
	}
	q->id = port->next_id++;
	q->next = port->queues;
	if (port->queues)
		port->queues->prev = q;
	port->queues = q;
	port->nr_queues++;
	/* from here on only our io_work touches the slots */
	q->running = true;
	pthread_mutex_unlock(&port->lock);

	NVMFD_DBG(TCP_COMP, "queue %u: connection from %s on cpu %d", q->id, q->qp.peer_addr,
		  q->io_cpu);
	/* The first pass finds nothing (or the ICReq) and arms readiness. */
	nvmfd_rt_queue_work(&q->io_work);
	return 0;

out_destroy_qp:
	nvmfd__tgt_qp_destroy(&q->qp);
out_free:
	q->fd = -1; /* the caller closes it */
	tcp_queue_free(q);
	return ret;
}

static const char *const tcp_req_state_names[TCP_REQ__MAX] = {
	[TCP_REQ_FREE] = "free",   [TCP_REQ_RX_ICD] = "rx_icd", [TCP_REQ_R2T] = "r2t",
	[TCP_REQ_H2C] = "h2c",     [TCP_REQ_EXEC] = "exec",     [TCP_REQ_TX] = "tx",
};

static void jadd_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/*
 * tcp_queue_json() - one queue's counters as a new JSON object (NULL on
 * allocation failure). Context: any thread, under port->lock (the queue
 * stays listed); counters are read relaxed.
 */
json_object *tcp_queue_json(struct tcp_queue *q)
{
	json_object *o = json_object_new_object(), *ss;
	struct nvmfd_cq_stats cs = { 0 };
	struct nvmfd_rt *crt = __atomic_load_n(&q->ctrl_rt, __ATOMIC_ACQUIRE);
	struct nvmfd_cq *cq;
	uint64_t ev;
	int ring;

	if (!o)
		return NULL;
	/* the completion context (opened when the queue is enabled) lives
	 * until the release work frees us */
	cq = __atomic_load_n(&q->qp.cq, __ATOMIC_ACQUIRE);
	if (cq)
		nvmfd_cq_get_stats(cq, &cs);
	ring = cq ? nvmfd_cq_ring_id(cq) : -1;
	ev = cs.events;
	json_object_object_add(o, "id", json_object_new_int((int)q->id));
	json_object_object_add(o, "qid", json_object_new_int(
						 __atomic_load_n(&q->qp.qid, __ATOMIC_RELAXED)));
	json_object_object_add(o, "io_cpu", json_object_new_int(q->io_cpu));
	json_object_object_add(o, "peer", json_object_new_string(q->qp.peer_addr));
	/* "none", or the cipher suite once the TLS handshake finished */
	json_object_object_add(o, "tls", json_object_new_string(
						 __atomic_load_n(&q->tls_cipher, __ATOMIC_ACQUIRE) ?: "none"));
	jadd_u64(o, "pdus_rx", TCP_STAT_LOAD(q, pdus_rx));
	jadd_u64(o, "bytes_rx", TCP_STAT_LOAD(q, bytes_rx));
	jadd_u64(o, "pdus_tx", TCP_STAT_LOAD(q, pdus_tx));
	jadd_u64(o, "bytes_tx", TCP_STAT_LOAD(q, bytes_tx));
	jadd_u64(o, "commands", TCP_STAT_LOAD(q, cmds));
	jadd_u64(o, "completions", TCP_STAT_LOAD(q, completions));
	jadd_u64(o, "r2ts", TCP_STAT_LOAD(q, r2ts));
	jadd_u64(o, "passes", TCP_STAT_LOAD(q, passes));
	jadd_u64(o, "work_passes", TCP_STAT_LOAD(q, work_passes));
	jadd_u64(o, "rx_budget_exhausted", TCP_STAT_LOAD(q, rx_budget_exhausted));
	jadd_u64(o, "tx_budget_exhausted", TCP_STAT_LOAD(q, tx_budget_exhausted));
	jadd_u64(o, "deadline_exhausted", TCP_STAT_LOAD(q, deadline_exhausted));
	jadd_u64(o, "requeues", TCP_STAT_LOAD(q, requeues));
	jadd_u64(o, "idle_polls", TCP_STAT_LOAD(q, idle_polls));
	jadd_u64(o, "rearms", TCP_STAT_LOAD(q, rearms));
	jadd_u64(o, "eagain_sends", TCP_STAT_LOAD(q, eagain_sends));
	jadd_u64(o, "completion_events", ev);
	jadd_u64(o, "backend_completions", cs.completions);
	json_object_object_add(o, "completions_per_event",
			       json_object_new_double(ev ? (double)cs.completions / (double)ev : 0.0));
	jadd_u64(o, "kicks", TCP_STAT_LOAD(q, kicks));
	jadd_u64(o, "ddgst_errors", TCP_STAT_LOAD(q, ddgst_errors));
	jadd_u64(o, "wakeups", TCP_STAT_LOAD(q, wakeups));
	jadd_u64(o, "completion_peeks", cs.peeks);
	/* of the events and peeks, those not only of inline completions */
	jadd_u64(o, "completion_cqe_events", cs.cqe_events);
	/* "none" until the queue is enabled (Connect, or authentication) */
	json_object_object_add(
		o, "cq_pool",
		json_object_new_string(!cq ? "none"
				       : ring >= 0 ? "shared"
				       : nvmfd_cq_source(cq) == NVMFD_CQ_SRC_WORKER ? "worker"
										    : "per-queue"));
	json_object_object_add(o, "ring", json_object_new_int(ring));
	if (crt) {
		json_object_object_add(o, "pool", json_object_new_string("ctrl"));
		json_object_object_add(o, "pool_cntlid", json_object_new_int(q->ctrl_cntlid));
	} else {
		json_object_object_add(o, "pool", json_object_new_string("global"));
	}
	json_object_object_add(o, "slots", json_object_new_int((int)__atomic_load_n(
						   &q->nr_reqs, __ATOMIC_RELAXED)));
	ss = json_object_new_object();
	for (int i = 0; ss && i < TCP_REQ__MAX; i++)
		json_object_object_add(ss, tcp_req_state_names[i],
				       json_object_new_int((int)__atomic_load_n(
					       &q->nr_state[i], __ATOMIC_RELAXED)));
	json_object_object_add(o, "slot_states", ss);
	tcp_auto_queue_json(q, o);
	tcp_uring_json(q, o);
	return o;
}
