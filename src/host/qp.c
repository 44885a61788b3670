// SPDX-License-Identifier: MIT
/*
 * qp.c - one NVMe/TCP host queue pair: socket, ICReq/ICResp, request slots,
 * the tx queue (CapsuleCmd, H2CData) and the rx path (CapsuleResp, C2HData,
 * R2T, C2HTermReq) on top of the pure codec (nvmfd/pdu.h), the socket
 * layer (net/sock.h) and the transmit queue shared with the target
 * (net/txq.h).
 *
 * All sockets are non-blocking. Blocking behaviour (connect, ICResp, admin
 * commands) is built from poll() with a deadline, so every wait is bounded.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "host/host_int.h"
#include "internal/proc.h"
#include "net/sock.h"
#include "net/stream.h"
#define TMO_CHECK_INTERVAL_NS 50000000ull /* scan slot deadlines every 50 ms */

/**
 * nvmfd__host_now_ns() - CLOCK_MONOTONIC in nanoseconds.
 * Return: the time. Context: any thread.
 */
uint64_t nvmfd__host_now_ns(void)
{
	return nvmfd__mono_ns();
}

/**
 * nvmfd__host_qp_seterr() - record the reason of a failure in the qp.
 * @qp:  queue pair.
 * @fmt: printf format.
 * Context: qp owner.
 */
void nvmfd__host_qp_seterr(struct nvmfd_host_qp *qp, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(qp->errmsg, sizeof(qp->errmsg), "qid %u: ", qp->qid);
	if (n < 0 || (size_t)n >= sizeof(qp->errmsg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(qp->errmsg + n, sizeof(qp->errmsg) - (size_t)n, fmt, ap);
	va_end(ap);
}

static void slot_complete(struct nvmfd_host_qp *qp, uint16_t cid, const struct nvmfd_host_cpl *cpl)
{
	struct host_slot *s = &qp->slots[cid];
	nvmfd_host_cb cb = s->cb;
	void *arg = s->arg;
	struct nvmfd_host_cpl c = *cpl;

	if (c.err == 0 && s->status_override)
		c.status = s->status_override;
	qp->stats.completed++;
	if (c.err || c.status)
		qp->stats.failed++;
	s->busy = false;
	s->rsp_pending = false;
	s->r2t_active = false;
	s->cb = NULL;
	qp->free_stack[qp->nr_free++] = cid;
	qp->completed_in_poll++;
	if (cb)
		cb(arg, &c);
}

/*
 * Fail the queue: remember the first error, close the connection for good
 * and complete every outstanding command with @err. Callbacks that submit
 * again get -ENOTCONN because the state is set first.
 */
static int qp_fail(struct nvmfd_host_qp *qp, int err)
{
	struct nvmfd_host_cpl cpl;

	if (qp->state == HOST_QP_FAILED)
		return qp->fail_err;
	qp->state = HOST_QP_FAILED;
	qp->fail_err = err;
	nvmfd_txq_reset(&qp->txq);
	if (qp->fd >= 0)
		shutdown(qp->fd, SHUT_RDWR);
	memset(&cpl, 0, sizeof(cpl));
	cpl.err = err;
	for (uint32_t i = 0; i < qp->depth; i++) {
		if (!qp->slots[i].busy)
			continue;
		cpl.cqe.cid = (uint16_t)i;
		slot_complete(qp, (uint16_t)i, &cpl);
	}
	return err;
}

/**
 * nvmfd__host_qp_alloc() - allocate a qp with @depth request slots.
 * @ctrl:  owning controller (borrowed for the qp's lifetime).
 * @qid:   queue id (0 = admin).
 * @depth: slots, 1..65535.
 * @out:   out: the qp.
 * Return: 0; -ENOMEM; -EINVAL for a bad depth.
 * Context: any thread.
 */
int nvmfd__host_qp_alloc(struct nvmfd_host_ctrl *ctrl, uint16_t qid, uint32_t depth,
			 struct nvmfd_host_qp **out)
{
	struct nvmfd_host_qp *qp;

	if (depth == 0 || depth > 65535)
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->ctrl = ctrl;
	qp->qid = qid;
	qp->fd = -1;
	qp->depth = depth;
	qp->cur_c2h = -1;
	qp->slots = calloc(depth, sizeof(*qp->slots));
	if (!qp->slots)
		goto out_free_qp;
	qp->free_stack = calloc(depth, sizeof(*qp->free_stack));
	if (!qp->free_stack)
		goto out_free_slots;
	qp->rxbuf = malloc(HOST_RXBUF_LEN);
	if (!qp->rxbuf)
		goto out_free_stack;
	nvmfd_txq_init(&qp->txq);
	/* Pop order 0, 1, 2...: push in reverse. */
	for (uint32_t i = 0; i < depth; i++)
		qp->free_stack[i] = (uint16_t)(depth - 1 - i);
	qp->nr_free = depth;
	qp->max_io = ctrl->opts.max_io_size;
	/* Identify pages must always fit on the admin queue. */
	if (qid == 0 && qp->max_io < NVMFD_IDENTIFY_DATA_SIZE)
		qp->max_io = NVMFD_IDENTIFY_DATA_SIZE;
	qp->timeout_ns = (uint64_t)ctrl->opts.timeout_ms * 1000000ull;
	*out = qp;
	return 0;

out_free_stack:
	free(qp->free_stack);
out_free_slots:
	free(qp->slots);
out_free_qp:
	free(qp);
	return -ENOMEM;
}

/**
 * nvmfd__host_qp_free() - close the socket (outstanding commands complete
 * with -ECANCELED) and free the qp. Safe on NULL.
 * @qp: queue pair.
 * Context: qp owner.
 */
void nvmfd__host_qp_free(struct nvmfd_host_qp *qp)
{
	if (!qp)
		return;
	if (qp->state != HOST_QP_FAILED && qp->state != HOST_QP_NEW)
		qp_fail(qp, -ECANCELED);
	nvmfd_tls_free(qp->tls);
	if (qp->fd >= 0)
		close(qp->fd);
	free(qp->rxbuf);
	free(qp->free_stack);
	free(qp->slots);
	free(qp);
}

/* ------------------------------------------------------------------ */
/* Transmit                                                            */
/* ------------------------------------------------------------------ */

/* Put the slot's PDU (built in s->hdr, @data, s->ddgst) on the tx queue. */
static void slot_tx_push(struct nvmfd_host_qp *qp, struct host_slot *s, const void *data,
			 uint32_t dlen, uint32_t hlen)
{
	uint32_t dglen = 0;

	if (dlen && qp->ddgst) {
		uint32_t d = nvmfd_digest(data, dlen);

		memcpy(s->ddgst, &d, sizeof(d));
		dglen = NVMFD_TCP_DIGEST_LEN;
	}
	nvmfd_tx_pdu_set(&s->tx, s->hdr, hlen, dlen ? data : NULL, dlen, s->ddgst, dglen);
	nvmfd_txq_push(&qp->txq, &s->tx);
}

/* Queue the next H2CData chunk of the slot's R2T window (NVMe/TCP §3.6.2.7:
 * each PDU carries at most MAXH2CDATA bytes; LAST_PDU on the window's end). */
static void slot_queue_h2c(struct nvmfd_host_qp *qp, uint16_t cid)
{
	struct host_slot *s = &qp->slots[cid];
	uint32_t chunk = s->h2c_end - s->h2c_off;
	uint8_t flags = 0;
	size_t hlen;

	if (chunk > qp->maxh2cdata)
		chunk = qp->maxh2cdata;
	if (s->h2c_off + chunk == s->h2c_end)
		flags |= NVMFD_TCP_F_DATA_LAST;
	s->tx_kind = HOST_TX_H2C;
	s->h2c_chunk = chunk;
	hlen = nvmfd_pdu_build_data(s->hdr, NVMFD_TCP_H2C_DATA, flags, cid, s->ttag, s->h2c_off,
				    chunk, qp->hdgst, qp->ddgst);
	qp->stats.h2c_pdus++;
	slot_tx_push(qp, s, s->buf + s->h2c_off, chunk, (uint32_t)hlen);
}

static void slot_tx_done(struct nvmfd_host_qp *qp, uint16_t cid)
{
	struct host_slot *s = &qp->slots[cid];

	if (s->tx_kind == HOST_TX_H2C) {
		s->h2c_off += s->h2c_chunk;
		if (s->h2c_off < s->h2c_end && !s->rsp_pending) {
			/* The next chunk goes to the tail, behind queued capsules. */
			slot_queue_h2c(qp, cid);
			return;
		}
		s->r2t_active = false;
	}
	if (s->rsp_pending)
		slot_complete(qp, cid, &s->cpl);
}

/* txq done(): a PDU is on the wire. The element is off the queue already,
 * so completing the slot (whose callback may resubmit on the same cid) or
 * queueing its next H2CData chunk may push it again. */
static enum nvmfd_tx_next qp_tx_done(void *owner, struct nvmfd_tx_pdu *p)
{
	struct nvmfd_host_qp *qp = owner;

	qp->stats.tx_pdus++;
	if (p != &qp->ctl) {
		struct host_slot *s = (struct host_slot *)(void *)((char *)p -
								   offsetof(struct host_slot, tx));

		slot_tx_done(qp, (uint16_t)(s - qp->slots));
	}
	return NVMFD_TX_LEAVE;
}

static const struct nvmfd_txq_ops qp_tx_ops = {
	.done = qp_tx_done,
};

/* A TLS qp sends through its TLS connection (net/stream.h). */
static ssize_t qp_tls_sendv(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more)
{
	struct nvmfd_host_qp *qp = owner;

	return nvmfd_stream_sendv(fd, qp->tls, iov, iovcnt, more);
}

static const struct nvmfd_txq_ops qp_tx_ops_tls = {
	.done = qp_tx_done,
	.sendv = qp_tls_sendv,
};

/* Queue the control PDU of @len bytes built in qp->ctl_tx. */
static void qp_ctl_push(struct nvmfd_host_qp *qp, size_t len)
{
	nvmfd_tx_pdu_set(&qp->ctl, qp->ctl_tx, (uint32_t)len, NULL, 0, NULL, 0);
	nvmfd_txq_push(&qp->txq, &qp->ctl);
}

/* Send as much as the socket takes. Return 0 or a negative errno (qp failed). */
static int qp_flush(struct nvmfd_host_qp *qp)
{
	ssize_t n;

	if (qp->in_flush || qp->state == HOST_QP_FAILED || qp->fd < 0)
		return qp->state == HOST_QP_FAILED ? qp->fail_err : 0;
	qp->in_flush = true;
	while (!nvmfd_txq_empty(&qp->txq)) {
		n = nvmfd_txq_xmit(&qp->txq, qp->fd, HOST_TX_BATCH, qp->txops, qp, NULL);
		qp->stats.sendmsgs++;
		if (n == -EAGAIN) {
			qp->stats.send_eagain++;
			break;
		}
		if (n < 0) {
			nvmfd__host_qp_seterr(qp, "send failed: %s", strerror((int)-n));
			qp->in_flush = false;
			return qp_fail(qp, n == -EPIPE ? -ECONNRESET : (int)n);
		}
		qp->stats.tx_bytes += (uint64_t)n;
		if (qp->state == HOST_QP_FAILED)
			break;
		if (qp->in_poll_call && qp->tx_budget) {
			qp->tx_in_poll += (uint64_t)n;
			if (qp->tx_in_poll >= qp->tx_budget && !nvmfd_txq_empty(&qp->txq)) {
				qp->stats.tx_budget_stops++;
				break;
			}
		}
	}
	if (qp->tls && qp->state != HOST_QP_FAILED) {
		/* TLS took bytes the socket could not take yet */
		n = nvmfd_stream_flush(qp->tls);
		if (n < 0 && n != -EAGAIN) {
			nvmfd__host_qp_seterr(qp, "send failed: %s", nvmfd_tls_errstr(qp->tls));
			qp->in_flush = false;
			return qp_fail(qp, n == -EPIPE ? -ECONNRESET : (int)n);
		}
	}
	qp->in_flush = false;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Submit                                                              */
/* ------------------------------------------------------------------ */

/*
 * Common submit path. Fabrics commands and writes up to the in-capsule limit
 * carry their data in the capsule (SGL Data Block / Offset, NVMe/TCP §3.3.5);
 * other transfers use a Transport SGL Data Block and move by C2HData or
 * R2T + H2CData.
 */
static int qp_submit(struct nvmfd_host_qp *qp, const struct nvmfd_sqe *sqe, void *buf,
		     uint32_t len, bool write, nvmfd_host_cb cb, void *arg)
{
	struct host_slot *s;
	struct nvmfd_sqe cmd;
	uint32_t icd = 0;
	uint16_t cid;

	if (qp->state != HOST_QP_LIVE)
		return -ENOTCONN;
	if (len > 0 && !buf)
		return -EINVAL;
	if (len > qp->max_io && sqe->opc != NVMFD_CMD_FABRICS)
		return -EINVAL;
	if (qp->nr_free <= qp->reserve)
		return -EAGAIN;
	cid = qp->free_stack[--qp->nr_free];
	s = &qp->slots[cid];
	memset(s, 0, offsetof(struct host_slot, hdr));
	s->busy = true;
	s->write = write && len > 0;
	s->buf = buf;
	s->len = len;
	s->cb = cb;
	s->arg = arg;
	s->deadline_ns = nvmfd__host_now_ns() + qp->timeout_ns;

	cmd = *sqe;
	cmd.cid = cid;
	cmd.flags = (uint8_t)((cmd.flags & ~NVMFD_SQE_FLAGS_PSDT_MASK) |
			      NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG);
	memset(&cmd.dptr, 0, sizeof(cmd.dptr));
	cmd.dptr.length = len;
	if (s->write && (len <= qp->icd_max ||
			 (sqe->opc == NVMFD_CMD_FABRICS && len <= HOST_FABRICS_ICD_MAX))) {
		icd = len;
		cmd.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	} else {
		cmd.dptr.type = NVMFD_SGL_ID_TRANSPORT;
	}
	s->tx_kind = HOST_TX_CMD;
	if (icd)
		s->h2c_off = s->h2c_end = len; /* nothing left for an R2T */
	slot_tx_push(qp, s, buf, icd,
		     (uint32_t)nvmfd_pdu_build_cmd(s->hdr, &cmd, icd, qp->hdgst, qp->ddgst));
	qp->stats.submitted++;
	/*
	 * Inside nvmfd_host_qp_poll() (a callback resubmitting) the PDU waits
	 * for the flush at the end of the poll, so a burst of completions
	 * turns into one sendmsg(); a plugged qp waits for the unplug or the
	 * next poll. Otherwise send now. A send failure fails
	 * the qp, which has then run @cb: still "submitted".
	 */
	if (!qp->in_poll && !qp->plugged)
		qp_flush(qp);
	return 0;
}

void nvmfd_host_qp_plug(struct nvmfd_host_qp *qp)
{
	qp->plugged = true;
}

int nvmfd_host_qp_unplug(struct nvmfd_host_qp *qp)
{
	int ret;

	if (!qp->plugged)
		return 0;
	qp->plugged = false;
	ret = qp_flush(qp); /* the failed qp's error, or 0 */
	return ret < 0 ? ret : 0;
}

int nvmfd_host_qp_submit_raw(struct nvmfd_host_qp *qp, const struct nvmfd_sqe *sqe, void *buf,
			     uint32_t len, bool write, nvmfd_host_cb cb, void *arg)
{
	if (!qp || !sqe)
		return -EINVAL;
	if (qp->state == HOST_QP_FAILED)
		return -ENOTCONN;
	return qp_submit(qp, sqe, buf, len, write, cb, arg);
}

static const struct nvmfd_host_ns *qp_ns(struct nvmfd_host_qp *qp, uint32_t nsid)
{
	return nvmfd_host_ctrl_find_ns(qp->ctrl, nsid);
}

static int qp_rw(struct nvmfd_host_qp *qp, uint8_t opc, uint32_t nsid, uint64_t slba,
		 uint32_t nlb, void *buf, nvmfd_host_cb cb, void *arg)
{
	const struct nvmfd_host_ns *ns;
	struct nvmfd_sqe sqe;
	uint64_t len = 0;

	if (!qp)
		return -EINVAL;
	if (qp->state == HOST_QP_FAILED)
		return -ENOTCONN;
	ns = qp_ns(qp, nsid);
	if (!ns || nlb == 0 || nlb > 65536)
		return -EINVAL;
	if (opc != NVMFD_CMD_WRITE_ZEROES) {
		len = (uint64_t)nlb * ns->lba_size;
		if (len > qp->max_io)
			return -EINVAL;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = opc;
	sqe.nsid = nsid;
	sqe.cdw10 = (uint32_t)slba;
	sqe.cdw11 = (uint32_t)(slba >> 32);
	sqe.cdw12 = nlb - 1;
	return qp_submit(qp, &sqe, buf, (uint32_t)len, opc == NVMFD_CMD_WRITE, cb, arg);
}

int nvmfd_host_qp_read(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba, uint32_t nlb,
		       void *buf, nvmfd_host_cb cb, void *arg)
{
	return qp_rw(qp, NVMFD_CMD_READ, nsid, slba, nlb, buf, cb, arg);
}

int nvmfd_host_qp_write(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba, uint32_t nlb,
			const void *buf, nvmfd_host_cb cb, void *arg)
{
	/* The buffer is only read (sent); the slot keeps one pointer type. */
	return qp_rw(qp, NVMFD_CMD_WRITE, nsid, slba, nlb, (void *)(uintptr_t)buf, cb, arg);
}

int nvmfd_host_qp_write_zeroes(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba,
			       uint32_t nlb, nvmfd_host_cb cb, void *arg)
{
	return qp_rw(qp, NVMFD_CMD_WRITE_ZEROES, nsid, slba, nlb, NULL, cb, arg);
}

int nvmfd_host_qp_flush(struct nvmfd_host_qp *qp, uint32_t nsid, nvmfd_host_cb cb, void *arg)
{
	struct nvmfd_sqe sqe;

	if (!qp)
		return -EINVAL;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_FLUSH;
	sqe.nsid = nsid;
	return nvmfd_host_qp_submit_raw(qp, &sqe, NULL, 0, false, cb, arg);
}

int nvmfd_host_qp_dsm(struct nvmfd_host_qp *qp, uint32_t nsid,
		      const struct nvmfd_dsm_range *ranges, uint32_t nr, uint32_t attr,
		      nvmfd_host_cb cb, void *arg)
{
	struct nvmfd_sqe sqe;

	if (!qp || !ranges || nr == 0 || nr > 256)
		return -EINVAL;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_DSM;
	sqe.nsid = nsid;
	sqe.cdw10 = nr - 1; /* NR is 0's based */
	sqe.cdw11 = attr;
	return nvmfd_host_qp_submit_raw(qp, &sqe, (void *)(uintptr_t)ranges,
					nr * (uint32_t)sizeof(*ranges), true, cb, arg);
}

/* ------------------------------------------------------------------ */
/* Receive                                                             */
/* ------------------------------------------------------------------ */

static const char *icresp_field(uint32_t off)
{
	switch (off) {
	case 0:
		return "pdu-type";
	case 1:
		return "flags";
	case 2:
		return "hlen";
	case 3:
		return "pdo";
	case 4:
		return "plen";
	case 8:
		return "pfv";
	case 10:
		return "cpda";
	case 11:
		return "dgst";
	case 12:
		return "maxh2cdata";
	default:
		return "reserved";
	}
}

/* NVMe/TCP §3.6.2.3 and the Linux host's checks (doc/protocol-notes.md §1.4). */
static int qp_handle_icresp(struct nvmfd_host_qp *qp, const struct nvmfd_tcp_icresp *ic)
{
	uint8_t want = (uint8_t)((qp->ctrl->opts.hdgst ? NVMFD_TCP_DGST_HDR : 0) |
				 (qp->ctrl->opts.ddgst ? NVMFD_TCP_DGST_DATA : 0));

	if (qp->state != HOST_QP_IC_WAIT) {
		nvmfd__host_qp_seterr(qp, "unexpected ICResp after connection setup");
		return qp_fail(qp, -EPROTO);
	}
	if (ic->ch.type != NVMFD_TCP_ICRESP || ic->ch.hlen != 128 || ic->ch.plen != 128) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: type %u hlen %u plen %u (want 1/128/128)",
				      ic->ch.type, ic->ch.hlen, ic->ch.plen);
		return qp_fail(qp, -EPROTO);
	}
	if (ic->pfv != NVMFD_TCP_PFV_1_0) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: pfv %u (want 0)", ic->pfv);
		return qp_fail(qp, -EPROTO);
	}
	if (ic->cpda != 0) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: cpda %u unsupported (want 0)", ic->cpda);
		return qp_fail(qp, -EPROTO);
	}
	if (ic->dgst != want) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: dgst 0x%x, requested 0x%x", ic->dgst,
				      want);
		return qp_fail(qp, -EPROTO);
	}
	if (ic->maxh2cdata < NVMFD_TCP_MIN_MAXH2CDATA || ic->maxh2cdata % 4) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: maxh2cdata %u (need >= 4096, %% 4)",
				      ic->maxh2cdata);
		return qp_fail(qp, -EPROTO);
	}
	qp->hdgst = qp->ctrl->opts.hdgst;
	qp->ddgst = qp->ctrl->opts.ddgst;
	qp->maxh2cdata = ic->maxh2cdata;
	nvmfd_pdu_rx_ic_done(&qp->rx, qp->hdgst, qp->ddgst, 0);
	qp->state = HOST_QP_LIVE;
	return 0;
}

static int qp_bad_cid(struct nvmfd_host_qp *qp, const char *what, uint16_t cid)
{
	nvmfd__host_qp_seterr(qp, "%s with wrong CID %u (no such outstanding command)", what, cid);
	return qp_fail(qp, -EPROTO);
}

static void term_decode(struct nvmfd_host_qp *qp, const uint8_t *hdr, size_t len)
{
	struct nvmfd_tcp_term t;

	memset(&t, 0, sizeof(t));
	memcpy(&t, hdr, len < sizeof(t) ? len : sizeof(t));
	nvmfd__host_qp_seterr(qp, "C2HTermReq received: FES 0x%x (%s), FEI 0x%x", t.fes,
			      nvmfd_pdu_fes_str(t.fes), t.fei);
}

/* NVMFD_PDU_EV_HDR: a PDU with data has a validated header. */
static int qp_handle_hdr(struct nvmfd_host_qp *qp)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&qp->rx);
	struct nvmfd_tcp_data d;
	struct host_slot *s;
	uint32_t dlen = nvmfd_pdu_rx_data_len(&qp->rx);

	if (ch->type != NVMFD_TCP_C2H_DATA) {
		/* C2HTermReq error data: keep it only for the message. */
		if (dlen <= sizeof(qp->term_data))
			nvmfd_pdu_rx_set_data(&qp->rx, qp->term_data);
		return 0;
	}
	memcpy(&d, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(d));
	if (d.cccid >= qp->depth || !qp->slots[d.cccid].busy)
		return qp_bad_cid(qp, "C2HData", d.cccid);
	s = &qp->slots[d.cccid];
	if (s->write || !s->buf) {
		nvmfd__host_qp_seterr(qp, "C2HData for cid %u which expects no data", d.cccid);
		return qp_fail(qp, -EPROTO);
	}
	/* NVMe/TCP §3.6.2.8: data arrives in order and within the command's length. */
	if (d.datao != s->c2h_off || d.datal != dlen || d.datal == 0 ||
	    (uint64_t)d.datao + d.datal > s->len) {
		nvmfd__host_qp_seterr(qp,
				      "C2HData cid %u: invalid datao %u datal %u (received %u of %u)",
				      d.cccid, d.datao, d.datal, s->c2h_off, s->len);
		return qp_fail(qp, -EPROTO);
	}
	nvmfd_pdu_rx_set_data(&qp->rx, s->buf + d.datao);
	qp->cur_c2h = d.cccid;
	return 0;
}

static int qp_handle_c2h_done(struct nvmfd_host_qp *qp)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&qp->rx);
	struct nvmfd_tcp_data d;
	struct host_slot *s;
	struct nvmfd_host_cpl cpl;

	memcpy(&d, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(d));
	qp->cur_c2h = -1;
	if (d.cccid >= qp->depth || !qp->slots[d.cccid].busy)
		return qp_bad_cid(qp, "C2HData", d.cccid);
	s = &qp->slots[d.cccid];
	s->c2h_off += d.datal;
	if (!(ch->flags & NVMFD_TCP_F_DATA_SUCCESS))
		return 0;
	/* NVMe/TCP §3.6.2.8: SUCCESS is only valid together with LAST_PDU. */
	if (!(ch->flags & NVMFD_TCP_F_DATA_LAST)) {
		nvmfd__host_qp_seterr(qp, "C2HData cid %u: SUCCESS without LAST_PDU", d.cccid);
		return qp_fail(qp, -EPROTO);
	}
	memset(&cpl, 0, sizeof(cpl));
	cpl.cqe.cid = d.cccid;
	cpl.cqe.sqid = qp->qid;
	cpl.cqe.sqhd = 0xffff;
	slot_complete(qp, d.cccid, &cpl);
	return 0;
}

static int qp_handle_rsp(struct nvmfd_host_qp *qp)
{
	struct nvmfd_tcp_rsp r;
	struct host_slot *s;

	memcpy(&r, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(r));
	if (r.cqe.cid >= qp->depth || !qp->slots[r.cqe.cid].busy)
		return qp_bad_cid(qp, "CapsuleResp", r.cqe.cid);
	s = &qp->slots[r.cqe.cid];
	memset(&s->cpl, 0, sizeof(s->cpl));
	s->cpl.cqe = r.cqe;
	s->cpl.status = nvmfd_cqe_status(&r.cqe);
	if (s->tx.queued) {
		/* Finish the PDU on the wire first: the slot's buffer is in use. */
		s->rsp_pending = true;
		return 0;
	}
	slot_complete(qp, r.cqe.cid, &s->cpl);
	return 0;
}

/* NVMe/TCP §3.6.2.10 and the Linux host's R2T checks (doc/protocol-notes.md §1.7). */
static int qp_handle_r2t(struct nvmfd_host_qp *qp)
{
	struct nvmfd_tcp_r2t r;
	struct host_slot *s;

	memcpy(&r, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(r));
	if (r.cccid >= qp->depth || !qp->slots[r.cccid].busy)
		return qp_bad_cid(qp, "R2T", r.cccid);
	s = &qp->slots[r.cccid];
	if (!s->write || s->r2t_active || s->tx.queued || r.r2tl == 0 || r.r2to != s->h2c_off ||
	    (uint64_t)r.r2to + r.r2tl > s->len) {
		nvmfd__host_qp_seterr(qp, "invalid R2T for cid %u: r2to %u r2tl %u (sent %u of %u)",
				      r.cccid, r.r2to, r.r2tl, s->h2c_off, s->len);
		return qp_fail(qp, -EPROTO);
	}
	s->r2t_active = true;
	s->ttag = r.ttag;
	s->h2c_end = r.r2to + r.r2tl;
	slot_queue_h2c(qp, r.cccid);
	return 0;
}

static int qp_handle_pdu(struct nvmfd_host_qp *qp)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&qp->rx);

	qp->stats.rx_pdus++;
	if (ch->type == NVMFD_TCP_C2H_DATA)
		qp->stats.c2h_pdus++;
	else if (ch->type == NVMFD_TCP_R2T)
		qp->stats.r2ts++;
	if (qp->state == HOST_QP_IC_WAIT && ch->type != NVMFD_TCP_ICRESP &&
	    ch->type != NVMFD_TCP_C2H_TERM) {
		nvmfd__host_qp_seterr(qp, "ICResp mismatch: got %s (type %u) instead",
				      nvmfd_pdu_type_str(ch->type), ch->type);
		return qp_fail(qp, -EPROTO);
	}
	switch (ch->type) {
	case NVMFD_TCP_ICRESP: {
		struct nvmfd_tcp_icresp ic;

		memcpy(&ic, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(ic));
		return qp_handle_icresp(qp, &ic);
	}
	case NVMFD_TCP_RSP:
		return qp_handle_rsp(qp);
	case NVMFD_TCP_C2H_DATA:
		return qp_handle_c2h_done(qp);
	case NVMFD_TCP_R2T:
		return qp_handle_r2t(qp);
	case NVMFD_TCP_C2H_TERM:
		term_decode(qp, nvmfd_pdu_rx_hdr(&qp->rx), sizeof(struct nvmfd_tcp_term));
		return qp_fail(qp, -ECONNRESET);
	default:
		nvmfd__host_qp_seterr(qp, "unexpected %s PDU (type %u)",
				      nvmfd_pdu_type_str(ch->type), ch->type);
		return qp_fail(qp, -EPROTO);
	}
}

/*
 * Best effort H2CTermReq: queued PDUs nothing of which is sent are dropped,
 * a partly sent one is finished first (a TermReq inside a PDU would be
 * garbage to the target), then the TermReq, and nothing after it (a PDU
 * queued by a completion meanwhile stays unsent); no waiting for the socket.
 */
static void qp_send_term(struct nvmfd_host_qp *qp, const struct nvmfd_pdu_error *e)
{
	ssize_t n;
	size_t tl;

	if (qp->in_flush)
		return;
	nvmfd_txq_drop_unsent(&qp->txq);
	if (qp->ctl.queued)
		return; /* a half-sent ICReq still owns ctl_tx */
	tl = nvmfd_pdu_build_term(qp->ctl_tx, sizeof(qp->ctl_tx), NVMFD_TCP_H2C_TERM, e->fes,
				  e->fei, e->hdr, e->hdr_len);
	if (tl == 0 || tl > sizeof(qp->ctl_tx))
		return;
	qp_ctl_push(qp, tl);
	qp->in_flush = true;
	while (qp->ctl.queued) {
		n = nvmfd_txq_xmit(&qp->txq, qp->fd, 1, qp->txops, qp, NULL);
		qp->stats.sendmsgs++;
		if (n <= 0)
			break;
		qp->stats.tx_bytes += (uint64_t)n;
	}
	qp->in_flush = false;
}

static int qp_handle_rx_error(struct nvmfd_host_qp *qp)
{
	const struct nvmfd_pdu_error *e = nvmfd_pdu_rx_error(&qp->rx);

	if (e->err == NVMFD_PDU_ERR_DDGST && qp->cur_c2h >= 0) {
		/*
		 * NVMe/TCP §3.6.1.5 leaves the choice to the receiver; like the
		 * Linux host we fail only the command (DATA_XFER_ERROR) and keep
		 * the stream: the codec keeps framing after a digest mismatch.
		 */
		uint16_t cid = (uint16_t)qp->cur_c2h;
		struct host_slot *s = &qp->slots[cid];
		struct nvmfd_tcp_data d;
		uint8_t flags = 0;

		memset(&d, 0, sizeof(d));
		memcpy(&d, e->hdr, e->hdr_len < sizeof(d) ? e->hdr_len : sizeof(d));
		flags = d.ch.flags;
		qp->cur_c2h = -1;
		s->status_override = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_DATA_XFER_ERROR);
		if (s->busy) {
			s->c2h_off += d.datal;
			if ((flags & NVMFD_TCP_F_DATA_SUCCESS) && (flags & NVMFD_TCP_F_DATA_LAST)) {
				struct nvmfd_host_cpl cpl;

				memset(&cpl, 0, sizeof(cpl));
				cpl.cqe.cid = cid;
				cpl.cqe.sqid = qp->qid;
				slot_complete(qp, cid, &cpl);
			}
		}
		return 0;
	}
	if (e->err == NVMFD_PDU_ERR_TERM) {
		/* The codec puts the peer's FES/FEI in the error record. */
		nvmfd__host_qp_seterr(qp, "C2HTermReq received: FES 0x%x (%s), FEI 0x%x%s", e->fes,
				      nvmfd_pdu_fes_str(e->fes), e->fei,
				      qp->state == HOST_QP_IC_WAIT ? " (ICReq rejected)" : "");
		return qp_fail(qp, -ECONNRESET);
	}
	if (qp->state == HOST_QP_IC_WAIT && e->stream_off == 0 && e->hdr_len >= 2 &&
	    e->hdr[0] >= 0x14 && e->hdr[0] <= 0x17 && e->hdr[1] == 0x03)
		/* a TLS record header (content type 20..23, version 3.x) */
		nvmfd__host_qp_seterr(qp, "the target answered the ICReq with TLS records "
					  "(first bytes 0x%02x 0x%02x): the port requires TLS",
				      e->hdr[0], e->hdr[1]);
	else if (qp->state == HOST_QP_IC_WAIT && e->stream_off == 0 && e->hdr_len >= 1 &&
		 e->hdr[0] != NVMFD_TCP_ICRESP && e->hdr[0] != NVMFD_TCP_C2H_TERM) {
		/* not even the PDU type: the peer speaks another protocol */
		char ch[8] = "";

		if (isprint(e->hdr[0]))
			snprintf(ch, sizeof(ch), " '%c'", e->hdr[0]);
		nvmfd__host_qp_seterr(qp, "the peer did not answer with an ICResp (first byte "
					  "0x%02x%s): not an NVMe/TCP target?",
				      e->hdr[0], ch);
	} else if (qp->state == HOST_QP_IC_WAIT)
		nvmfd__host_qp_seterr(qp,
				      "ICResp mismatch: %s in field %s (offset %u, FES 0x%x %s)",
				      nvmfd_pdu_err_str(e->err), icresp_field(e->fei), e->fei,
				      e->fes, nvmfd_pdu_fes_str(e->fes));
	else
		nvmfd__host_qp_seterr(qp,
				      "malformed PDU from target at stream offset %llu: %s "
				      "(FES 0x%x %s, FEI 0x%x)",
				      (unsigned long long)e->stream_off, nvmfd_pdu_err_str(e->err),
				      e->fes, nvmfd_pdu_fes_str(e->fes), e->fei);
	/* Tell the target why before closing (NVMe/TCP §3.6.2.4), best effort. */
	if (e->fes && qp->fd >= 0)
		qp_send_term(qp, e);
	return qp_fail(qp, -EPROTO);
}

/* Feed buffered bytes to the codec until they run out or @max completions. */
static int qp_process_rx(struct nvmfd_host_qp *qp, uint32_t max)
{
	while (qp->rx_pos < qp->rx_end) {
		size_t used = 0;
		enum nvmfd_pdu_ev ev;
		int ret = 0;

		ev = nvmfd_pdu_rx_feed(&qp->rx, qp->rxbuf + qp->rx_pos, qp->rx_end - qp->rx_pos,
				       &used);
		qp->rx_pos += (uint32_t)used;
		switch (ev) {
		case NVMFD_PDU_EV_NEED_MORE:
			break;
		case NVMFD_PDU_EV_HDR:
			ret = qp_handle_hdr(qp);
			break;
		case NVMFD_PDU_EV_PDU:
			ret = qp_handle_pdu(qp);
			break;
		case NVMFD_PDU_EV_ERROR:
			ret = qp_handle_rx_error(qp);
			break;
		}
		if (ret < 0)
			return ret;
		if (max && qp->completed_in_poll >= max)
			break;
		if (ev == NVMFD_PDU_EV_NEED_MORE && used == 0)
			break;
	}
	return 0;
}

static void qp_check_timeouts(struct nvmfd_host_qp *qp)
{
	uint64_t now = nvmfd__host_now_ns();

	if (now < qp->next_tmo_check_ns)
		return;
	qp->next_tmo_check_ns = now + TMO_CHECK_INTERVAL_NS;
	for (uint32_t i = 0; i < qp->depth; i++) {
		struct host_slot *s = &qp->slots[i];

		if (s->busy && now > s->deadline_ns) {
			nvmfd__host_qp_seterr(qp, "command cid %u timed out after %llu ms", i,
					      (unsigned long long)(qp->timeout_ns / 1000000ull));
			qp_fail(qp, -ETIMEDOUT);
			return;
		}
	}
}

static int qp_poll_rx(struct nvmfd_host_qp *qp, uint32_t max);

static int qp_poll(struct nvmfd_host_qp *qp, uint32_t max)
{
	uint64_t rx0 = qp->stats.rx_bytes, tx0 = qp->stats.tx_bytes;
	int ret;

	qp->completed_in_poll = 0;
	qp->stats.polls++;
	if (qp->state == HOST_QP_FAILED)
		return qp->fail_err;
	qp->in_poll_call = true;
	qp->tx_in_poll = 0;
	ret = qp_flush(qp);
	if (ret < 0)
		goto out;
	qp->in_poll = true;
	ret = qp_poll_rx(qp, max);
	qp->in_poll = false;
	if (ret < 0)
		goto out;
	ret = qp_flush(qp);
	if (ret < 0)
		goto out;
	qp_check_timeouts(qp);
	if (qp->state == HOST_QP_FAILED) {
		ret = qp->fail_err;
		goto out;
	}
	ret = (int)qp->completed_in_poll;
out:
	qp->in_poll_call = false;
	if (ret == 0 && qp->stats.rx_bytes == rx0 && qp->stats.tx_bytes == tx0)
		qp->stats.empty_polls++;
	return ret;
}

/* Receive and process until the socket is drained or @max completions. */
static int qp_poll_rx(struct nvmfd_host_qp *qp, uint32_t max)
{
	uint64_t got = 0;
	int ret;

	for (;;) {
		size_t want = HOST_RXBUF_LEN;
		ssize_t n;

		ret = qp_process_rx(qp, max);
		if (ret < 0)
			return ret;
		if (max && qp->completed_in_poll >= max)
			break;
		if (qp->rx_pos < qp->rx_end)
			continue;
		if (qp->rx_budget) {
			if (got >= qp->rx_budget) {
				qp->stats.rx_budget_stops++;
				break;
			}
			if (qp->rx_budget - got < want)
				want = (size_t)(qp->rx_budget - got);
		}
		n = nvmfd_stream_recv(qp->fd, qp->tls, qp->rxbuf, want);
		if (n == 0) {
			nvmfd__host_qp_seterr(qp, "connection closed by the target%s%s",
					      qp->state == HOST_QP_IC_WAIT ? " before ICResp" :
				(qp->rx.state != NVMFD_PDU_RX_CH ? " in the middle of a PDU" : ""),
					      qp->state == HOST_QP_IC_WAIT && !qp->tls &&
							      qp->rx.state == NVMFD_PDU_RX_CH ?
						      " (does the port require TLS?)" : "");
			return qp_fail(qp, -ECONNRESET);
		}
		if (n == -EAGAIN)
			break;
		if (n < 0) {
			if (qp->tls)
				nvmfd__host_qp_seterr(qp, "recv failed: %s", nvmfd_tls_errstr(qp->tls));
			else
				nvmfd__host_qp_seterr(qp, "recv failed: %s", strerror((int)-n));
			return qp_fail(qp, (int)n);
		}
		qp->rx_pos = 0;
		qp->rx_end = (uint32_t)n;
		got += (uint64_t)n;
		qp->stats.recvs++;
		qp->stats.rx_bytes += (uint64_t)n;
	}
	return 0;
}

int nvmfd_host_qp_poll(struct nvmfd_host_qp *qp, uint32_t max)
{
	if (!qp)
		return -EINVAL;
	return qp_poll(qp, max);
}

/**
 * nvmfd__host_qp_pollfd() - what to wait for before the next poll of @qp.
 * @qp:  the qp.
 * @pfd: out: its socket, POLLIN, and POLLOUT while transmit data waits.
 * Return: true when input is already buffered (poll with timeout 0).
 * Context: qp owner.
 */
bool nvmfd__host_qp_pollfd(const struct nvmfd_host_qp *qp, struct pollfd *pfd)
{
	pfd->fd = qp->fd;
	pfd->events = POLLIN;
	if (!nvmfd_txq_empty(&qp->txq) || nvmfd_stream_want_out(qp->tls))
		pfd->events |= POLLOUT;
	pfd->revents = 0;
	return qp->rx_pos < qp->rx_end || nvmfd_stream_rx_pending(qp->tls);
}

int nvmfd_host_qp_wait(struct nvmfd_host_qp *qp, int timeout_ms)
{
	struct pollfd pfd;

	if (!qp)
		return -EINVAL;
	if (qp->state == HOST_QP_FAILED)
		return qp->fail_err;
	if (!nvmfd__host_qp_pollfd(qp, &pfd)) {
		if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR) {
			int err = -errno;

			nvmfd__host_qp_seterr(qp, "poll failed: %s", strerror(-err));
			return qp_fail(qp, err);
		}
	}
	return qp_poll(qp, 0);
}

int nvmfd_host_qp_want_events(const struct nvmfd_host_qp *qp)
{
	struct pollfd pfd;

	if (nvmfd__host_qp_pollfd(qp, &pfd))
		return 0;
	return pfd.events;
}

uint32_t nvmfd_host_qp_outstanding(const struct nvmfd_host_qp *qp)
{
	return qp->depth - qp->nr_free;
}

uint32_t nvmfd_host_qp_depth(const struct nvmfd_host_qp *qp)
{
	return qp->depth;
}

uint16_t nvmfd_host_qp_qid(const struct nvmfd_host_qp *qp)
{
	return qp->qid;
}

int nvmfd_host_qp_fd(const struct nvmfd_host_qp *qp)
{
	return qp->fd;
}

int nvmfd_host_qp_set_budget(struct nvmfd_host_qp *qp, uint32_t rx_bytes, uint32_t tx_bytes)
{
	if (!qp)
		return -EINVAL;
	qp->rx_budget = rx_bytes;
	qp->tx_budget = tx_bytes;
	return 0;
}

void nvmfd_host_qp_get_stats(const struct nvmfd_host_qp *qp, struct nvmfd_host_qp_stats *out)
{
	*out = qp->stats;
}

const char *nvmfd_host_qp_errmsg(const struct nvmfd_host_qp *qp)
{
	return qp->errmsg;
}

/* ------------------------------------------------------------------ */
/* Blocking helpers                                                    */
/* ------------------------------------------------------------------ */

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = nvmfd__host_now_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999ull) / 1000000ull);
}

static int qp_tcp_connect(struct nvmfd_host_qp *qp, const struct nvmfd_host_trid *trid,
			  uint64_t deadline)
{
	int family = trid->adrfam == NVMFD_ADRFAM_IPV6 ? AF_INET6 : AF_INET;
	int fd = -1, gai = 0, err;

	err = nvmfd__sock_connect_timeout(trid->traddr, trid->trsvcid, family,
					  remaining_ms(deadline), &fd, &gai);
	if (err == 0) {
		qp->fd = fd;
		qp->txops = &qp_tx_ops;
		return 0;
	}
	if (gai) {
		nvmfd__host_qp_seterr(qp, "cannot resolve %s port %s: %s", trid->traddr,
				      trid->trsvcid, gai_strerror(gai));
		return -EINVAL;
	}
	if (err == -ECONNREFUSED)
		nvmfd__host_qp_seterr(qp, "connection refused by %s:%s", trid->traddr,
				      trid->trsvcid);
	else if (err == -ETIMEDOUT)
		nvmfd__host_qp_seterr(qp, "timed out connecting to %s:%s", trid->traddr,
				      trid->trsvcid);
	else
		nvmfd__host_qp_seterr(qp, "cannot connect to %s:%s: %s", trid->traddr,
				      trid->trsvcid, strerror(-err));
	return err;
}

/* Poll until @done is true, the qp fails or the deadline passes. */
static int qp_wait_until(struct nvmfd_host_qp *qp, const bool *done, uint64_t deadline,
			 const char *what)
{
	for (;;) {
		int ret = nvmfd_host_qp_wait(qp, remaining_ms(deadline) > 100 ? 100 :
						 remaining_ms(deadline));

		if (*done)
			return 0;
		if (ret < 0)
			return ret;
		if (nvmfd__host_now_ns() >= deadline) {
			nvmfd__host_qp_seterr(qp, "timed out waiting for %s", what);
			return qp_fail(qp, -ETIMEDOUT);
		}
	}
}

struct sync_ctx {
	bool done;
	struct nvmfd_host_cpl cpl;
};

static void sync_cb(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct sync_ctx *ctx = arg;

	ctx->cpl = *cpl;
	ctx->done = true;
}

/**
 * nvmfd__host_qp_exec() - submit one command and wait for its completion.
 * @qp:    live qp.
 * @sqe:   command, borrowed.
 * @buf:   data or NULL, borrowed.
 * @len:   bytes.
 * @write: direction.
 * @cpl:   out (may be NULL).
 * Return: 0 on success status; -EREMOTEIO on an error status; -ETIMEDOUT;
 *         -EAGAIN if no slot is free; transport errors.
 * Context: qp owner; for the admin queue (qid 0) with admin_lock held (the
 * wait releases it while asleep: nvmfd__host_admin_wait_locked()).
 */
int nvmfd__host_qp_exec(struct nvmfd_host_qp *qp, const struct nvmfd_sqe *sqe, void *buf,
			uint32_t len, bool write, struct nvmfd_host_cpl *cpl)
{
	struct sync_ctx ctx;
	uint64_t deadline = nvmfd__host_now_ns() + qp->timeout_ns;
	int ret;

	uint32_t reserve = qp->reserve;

	memset(&ctx, 0, sizeof(ctx));
	qp->reserve = 0; /* what was kept free is for this command */
	ret = qp_submit(qp, sqe, buf, len, write, sync_cb, &ctx);
	qp->reserve = reserve;
	if (ret < 0)
		return ret;
	if (qp->qid == 0 && qp->ctrl) {
		/* the admin queue: admin_lock is held, and released while
		 * asleep so that keep-alive goes on (ctrl.c) */
		ret = nvmfd__host_admin_wait_locked(qp->ctrl, &ctx.done, deadline);
		if (ret == -ETIMEDOUT && !ctx.done) {
			nvmfd__host_qp_seterr(qp, "timed out waiting for a command completion");
			ret = qp_fail(qp, -ETIMEDOUT);
		}
	} else {
		ret = qp_wait_until(qp, &ctx.done, deadline, "a command completion");
	}
	if (cpl)
		*cpl = ctx.cpl;
	if (!ctx.done)
		return ret;
	if (ctx.cpl.err)
		return ctx.cpl.err;
	return ctx.cpl.status ? -EREMOTEIO : 0;
}

/**
 * nvmfd__host_qp_reserve_slot() - keep one request slot free for the
 * owner's own commands (nvmfd__host_qp_exec()) from now on: new submissions
 * get -EAGAIN while only one is free. Waits, completing commands (their
 * callbacks run), until one is. Undo with qp->reserve = 0.
 * Return: 0; -ETIMEDOUT when no slot became free within the qp timeout
 *         (qp->reserve is then 0 again and the qp still live); the qp's
 *         error if it failed.
 * Context: qp owner, outside a callback.
 */
int nvmfd__host_qp_reserve_slot(struct nvmfd_host_qp *qp)
{
	uint64_t deadline = nvmfd__host_now_ns() + qp->timeout_ns;

	qp->reserve = 1;
	while (qp->nr_free == 0) {
		int ret, ms = remaining_ms(deadline);

		if (ms == 0) {
			qp->reserve = 0;
			nvmfd__host_qp_seterr(qp, "no request slot became free within the timeout");
			return -ETIMEDOUT;
		}
		ret = nvmfd_host_qp_wait(qp, ms > 100 ? 100 : ms);
		if (ret < 0) {
			qp->reserve = 0;
			return ret;
		}
	}
	return 0;
}

static const char *connect_field(bool data, uint16_t ipo)
{
	if (data) {
		if (ipo < 16)
			return "hostid";
		if (ipo >= 16 && ipo < 18)
			return "cntlid";
		if (ipo >= 256 && ipo < 512)
			return "subnqn";
		if (ipo >= 512 && ipo < 768)
			return "hostnqn";
		return "reserved";
	}
	switch (ipo) {
	case 40:
		return "recfmt";
	case 42:
		return "qid";
	case 44:
		return "sqsize";
	case 46:
		return "cattr";
	case 48:
		return "kato";
	default:
		return "sqe";
	}
}

/**
 * nvmfd__host_qp_connect() - TCP connect, ICReq/ICResp, Fabrics Connect.
 * @qp:     new qp.
 * @trid:   where, borrowed.
 * @cntlid: 0xffff for the admin queue, the admin's cntlid for I/O queues.
 * @sqsize: 0's based queue size.
 * @cattr:  Connect attributes.
 * @kato:   keep-alive timeout in ms (admin queue only).
 * @cpl:    out: Connect completion.
 * Return: 0; -ECONNREFUSED & co; -ETIMEDOUT; -EPROTO; -ECONNRESET;
 *         -EREMOTEIO when Connect is rejected (message names the status,
 *         IATTR and IPO).
 * Context: any thread owning @qp.
 */
int nvmfd__host_qp_connect(struct nvmfd_host_qp *qp, const struct nvmfd_host_trid *trid,
			   uint16_t cntlid, uint16_t sqsize, uint8_t cattr, uint32_t kato,
			   struct nvmfd_host_cpl *cpl)
{
	struct nvmfd_host_ctrl *ctrl = qp->ctrl;
	uint64_t deadline = nvmfd__host_now_ns() + qp->timeout_ns;
	struct nvmfd_connect_data data;
	struct nvmfd_connect_cmd cmd;
	struct nvmfd_sqe sqe;
	bool live = false;
	uint8_t dgst;
	int ret;

	ret = qp_tcp_connect(qp, trid, deadline);
	if (ret < 0)
		return ret;
	if (ctrl->opts.tls) {
		ret = nvmfd__host_qp_tls(qp, trid->subnqn, deadline);
		if (ret < 0)
			return ret;
		qp->txops = &qp_tx_ops_tls;
	}

	memset(&qp->rx_opts, 0, sizeof(qp->rx_opts));
	qp->rx_opts.role = NVMFD_PDU_ROLE_HOST;
	qp->rx_opts.hdgst = ctrl->opts.hdgst;
	qp->rx_opts.ddgst = ctrl->opts.ddgst;
	qp->rx_opts.cpda = 0;
	qp->rx_opts.max_data = qp->max_io > HOST_FABRICS_ICD_MAX ? qp->max_io : HOST_FABRICS_ICD_MAX;
	nvmfd_pdu_rx_init(&qp->rx, &qp->rx_opts);

	/* NVMe/TCP §3.6.2.2: HPDA 0, MAXR2T 0 (one R2T in flight per command). */
	dgst = (uint8_t)((ctrl->opts.hdgst ? NVMFD_TCP_DGST_HDR : 0) |
			 (ctrl->opts.ddgst ? NVMFD_TCP_DGST_DATA : 0));
	qp_ctl_push(qp, nvmfd_pdu_build_icreq(qp->ctl_tx, 0, dgst, 0));
	qp->state = HOST_QP_IC_WAIT;
	for (;;) {
		ret = nvmfd_host_qp_wait(qp, remaining_ms(deadline) > 100 ? 100 :
					     remaining_ms(deadline));
		if (qp->state == HOST_QP_LIVE) {
			live = true;
			break;
		}
		if (ret < 0)
			return ret;
		if (nvmfd__host_now_ns() >= deadline) {
			nvmfd__host_qp_seterr(qp, "timed out waiting for ICResp");
			return qp_fail(qp, -ETIMEDOUT);
		}
	}
	(void)live;

	/* NVMe-oF 1.1 §3.3: Connect, data in-capsule. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVMFD_ADMIN_FABRICS;
	cmd.fctype = NVMFD_FCTYPE_CONNECT;
	cmd.recfmt = 0;
	cmd.qid = qp->qid;
	cmd.sqsize = sqsize;
	cmd.cattr = cattr;
	cmd.kato = kato;
	memset(&data, 0, sizeof(data));
	memcpy(data.hostid, ctrl->opts.hostid, sizeof(data.hostid));
	data.cntlid = cntlid;
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", trid->subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", ctrl->opts.hostnqn);
	memcpy(&sqe, &cmd, sizeof(sqe));
	ret = nvmfd__host_qp_exec(qp, &sqe, &data, sizeof(data), true, cpl);
	if (ret == -EREMOTEIO) {
		char sbuf[32];
		nvmfd_status_t st = cpl->status;
		uint32_t res = cpl->cqe.result;

		if (NVMFD_STATUS_SCT(st) == NVMFD_SCT_CMD_SPECIFIC &&
		    NVMFD_STATUS_SC(st) == NVMFD_SC_CONNECT_INVALID_PARAM) {
			bool in_data = (res >> 16) & NVMFD_CONNECT_RSP_IATTR_DATA;
			uint16_t ipo = (uint16_t)(res & 0xffff);

			nvmfd__host_qp_seterr(qp,
					      "Connect rejected: %s (status 0x%x), IATTR %u IPO %u (%s %s)",
					      nvmfd_host_status_str(st, true, sbuf, sizeof(sbuf)), st,
					      (res >> 16) & 0xff, ipo, in_data ? "data" : "command",
					      connect_field(in_data, ipo));
		} else {
			nvmfd__host_qp_seterr(qp, "Connect rejected: %s (status 0x%x)",
					      nvmfd_host_status_str(st, true, sbuf, sizeof(sbuf)), st);
		}
	} else if (ret == -EAGAIN) {
		nvmfd__host_qp_seterr(qp, "no free slot for Connect");
	}
	return ret;
}
