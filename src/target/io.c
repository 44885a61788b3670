// SPDX-License-Identifier: MIT
/*
 * io.c - NVM command set I/O commands: Read, Write, Flush, Write Zeroes and
 * Dataset Management (deallocate), executed as backend ios on the queue's
 * completion context (qp->cq, internal/cqpool.h).
 *
 * Who flushes: the core, when the transport steps it. Commands only queue
 * ios with nvmfd_cq_submit(); the transport calls nvmfd__tgt_qp_poll()
 * once after each receive step of its io_work pass, which flushes, so all
 * commands of a pass go to the kernel in one io_uring_enter. A DSM range
 * chained from a completion callback is flushed by the next step of the
 * same pass. Only a full ring makes the context flush and reap at once.
 * Completions arrive from nvmfd__tgt_qp_poll() on the queue owner and
 * complete the command through nvmfd__tgt_req_complete(). The errno ->
 * status mapping is the backend layer's nvmfd__status_from_errno().
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "internal/log.h"
#include "target/core.h"

#define COMP "target"

static nvmfd_status_t dnr(uint8_t sc)
{
	return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, sc);
}

static bool lba_in_range(const struct nvmfd_tgt_ns *ns, uint64_t slba, uint64_t nlb)
{
	uint64_t nsze = __atomic_load_n(&ns->nsze, __ATOMIC_ACQUIRE); /* resize */

	return slba < nsze && nlb <= nsze - slba;
}

/**
 * nvmfd__tgt_io_init() - parse an I/O command.
 * @req: the command on an I/O queue of a ready controller.
 * Return: SUCCESS with the transfer set; INVALID_NS|DNR (no such enabled
 *         namespace), SGL_INVALID_DATA|DNR (SGL length != (NLB+1) << lba
 *         shift), INVALID_FIELD|DNR (beyond MDTS), LBA_RANGE|DNR,
 *         INVALID_OPCODE|DNR.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_io_init(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_subsys *s = req->qp->ctrl->subsys;
	const struct nvmfd_sqe *sqe = &req->sqe;
	struct nvmfd_tgt_ns *ns;
	nvmfd_status_t st;
	uint64_t len;

	switch (sqe->opc) {
	case NVMFD_CMD_FLUSH:
	case NVMFD_CMD_READ:
	case NVMFD_CMD_WRITE:
	case NVMFD_CMD_WRITE_ZEROES:
	case NVMFD_CMD_DSM:
		break;
	case NVMFD_CMD_FABRICS:
		return dnr(NVMFD_SC_INVALID_OPCODE);
	default:
		return dnr(NVMFD_SC_INVALID_OPCODE);
	}
	ns = nvmfd__tgt_ns_find(s, sqe->nsid);
	if (!ns)
		return dnr(NVMFD_SC_INVALID_NS);
	req->core = ns;
	switch (sqe->opc) {
	case NVMFD_CMD_FLUSH:
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_NONE, 0);
	case NVMFD_CMD_READ:
	case NVMFD_CMD_WRITE:
		len = (uint64_t)nvmfd_sqe_nlb(sqe) << ns->lba_shift;
		st = nvmfd__tgt_set_xfer(req,
					 sqe->opc == NVMFD_CMD_READ ? NVMFD_XFER_C2H : NVMFD_XFER_H2C,
					 len);
		if (st)
			return st;
		if (!lba_in_range(ns, nvmfd_sqe_slba(sqe), nvmfd_sqe_nlb(sqe)))
			return dnr(NVMFD_SC_LBA_RANGE);
		return NVMFD_SC_SUCCESS;
	case NVMFD_CMD_WRITE_ZEROES:
		st = nvmfd__tgt_set_xfer(req, NVMFD_XFER_NONE, 0);
		if (st)
			return st;
		if (!lba_in_range(ns, nvmfd_sqe_slba(sqe), nvmfd_sqe_nlb(sqe)))
			return dnr(NVMFD_SC_LBA_RANGE);
		return NVMFD_SC_SUCCESS;
	default: /* DSM: NR is 0's based, 16-byte ranges */
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_H2C,
					   ((uint64_t)(sqe->cdw10 & 0xff) + 1) *
						   sizeof(struct nvmfd_dsm_range));
	}
}

static void io_done(struct nvmfd_bk_io *io, int res);

static void account(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_qstats *q = &qp->ctrl->qstats[qp->qid];

	/* queue owner is the only writer of its qid's counters */
	if (req->bk_io.op == NVMFD_BK_READ) {
		__atomic_store_n(&q->reads, q->reads + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&q->bytes_read, q->bytes_read + req->bk_io.len, __ATOMIC_RELAXED);
	} else if (req->bk_io.op == NVMFD_BK_WRITE) {
		__atomic_store_n(&q->writes, q->writes + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&q->bytes_written, q->bytes_written + req->bk_io.len,
				 __ATOMIC_RELAXED);
	}
}

/* Queue req->bk_io on the queue's completion context (flushed by the next
 * nvmfd__tgt_qp_poll()). On a full ring the context flushes and reaps
 * (which may complete other commands of this queue) and tries once more. */
static void submit(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_ns *ns = req->core;
	int ret;

	if (!qp->cq) {
		nvmfd__tgt_req_complete(req, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL));
		return;
	}
	/* the namespace may have been removed since the command found it
	 * (H2C data in between): its backend is used only while counted */
	if (!nvmfd__tgt_ns_get(ns, req->sqe.nsid)) {
		nvmfd__tgt_req_complete(req, dnr(NVMFD_SC_INVALID_NS));
		return;
	}
	/* a full ring is flushed and reaped once inside (internal/cqpool.h) */
	ret = nvmfd_cq_submit(qp->cq, ns->bk, &req->bk_io);
	if (ret < 0) {
		nvmfd__tgt_ns_put(ns);
		NVMFD_ERR_RATELIMIT(COMP, "ctrl %u qid %u cid %u: submit: %s", qp->ctrl->cntlid,
				    qp->qid, req->sqe.cid, strerror(-ret));
		nvmfd__tgt_req_complete(req, nvmfd__status_from_errno(ret, req->bk_io.op));
	}
}

/* Next DSM range with blocks to deallocate, from index req->nr_sub. */
static bool dsm_next(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_ns *ns = req->core;
	uint32_t nr = (req->sqe.cdw10 & 0xff) + 1;

	while (req->nr_sub < nr) {
		struct nvmfd_dsm_range r;

		memcpy(&r, (uint8_t *)req->data + (size_t)req->nr_sub * sizeof(r), sizeof(r));
		req->nr_sub++;
		if (!r.nlb)
			continue;
		memset(&req->bk_io, 0, sizeof(req->bk_io));
		req->bk_io.op = NVMFD_BK_DISCARD;
		req->bk_io.offset = r.slba << ns->lba_shift;
		req->bk_io.len = r.nlb << ns->lba_shift;
		req->bk_io.cb = io_done;
		req->bk_io.priv = req;
		return true;
	}
	return false;
}

static void io_done(struct nvmfd_bk_io *io, int res)
{
	struct nvmfd_tgt_req *req = io->priv;

	if (io->lent && res >= 0) {
		/* the namespace stays counted until the transport has sent
		 * the data (nvmfd__tgt_req_release()) */
		req->lent = io->lent;
		account(req);
		nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
		return;
	}
	nvmfd__tgt_ns_put(req->core);
	if (res < 0) {
		nvmfd__tgt_req_complete(req, nvmfd__status_from_errno(res, io->op));
		return;
	}
	if (req->sqe.opc == NVMFD_CMD_DSM && dsm_next(req)) {
		submit(req);
		return;
	}
	account(req);
	nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
}

static nvmfd_status_t dsm_check(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_ns *ns = req->core;
	uint32_t nr = (req->sqe.cdw10 & 0xff) + 1;

	for (uint32_t i = 0; i < nr; i++) {
		struct nvmfd_dsm_range r;

		memcpy(&r, (uint8_t *)req->data + (size_t)i * sizeof(r), sizeof(r));
		if (!lba_in_range(ns, r.slba, r.nlb) ||
		    ((uint64_t)r.nlb << ns->lba_shift) > UINT32_MAX)
			return dnr(NVMFD_SC_LBA_RANGE);
	}
	return NVMFD_SC_SUCCESS;
}

/**
 * nvmfd__tgt_req_lent_lock() - see target/xprt.h.
 */
void nvmfd__tgt_req_lent_lock(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len)
{
	struct nvmfd_tgt_ns *ns = req->core;

	nvmfd_bk_lent_lock(ns->bk, (const uint8_t *)req->lent + off, len);
}

/**
 * nvmfd__tgt_req_lent_unlock() - see target/xprt.h.
 */
void nvmfd__tgt_req_lent_unlock(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len)
{
	struct nvmfd_tgt_ns *ns = req->core;

	nvmfd_bk_lent_unlock(ns->bk, (const uint8_t *)req->lent + off, len);
}

/**
 * nvmfd__tgt_req_lent_digest() - see target/xprt.h.
 */
uint32_t nvmfd__tgt_req_lent_digest(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len)
{
	struct nvmfd_tgt_ns *ns = req->core;

	return nvmfd_bk_lent_digest(ns->bk, (const uint8_t *)req->lent + off, len);
}

/**
 * nvmfd__tgt_req_release() - see target/xprt.h.
 */
void nvmfd__tgt_req_release(struct nvmfd_tgt_req *req)
{
	if (!req->lent)
		return;
	req->lent = NULL;
	nvmfd__tgt_ns_put(req->core);
}

/**
 * nvmfd__tgt_io_execute() - start an I/O command on the backend.
 * @req: the command, accepted by nvmfd__tgt_io_init(); H2C data in req->data.
 * Context: queue owner; completes from the ring's reap (or at once on error).
 */
void nvmfd__tgt_io_execute(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_ns *ns = req->core;
	struct nvmfd_bk_io *io = &req->bk_io;
	const struct nvmfd_sqe *sqe = &req->sqe;
	nvmfd_status_t st;

	memset(io, 0, sizeof(*io));
	io->cb = io_done;
	io->priv = req;
	switch (sqe->opc) {
	case NVMFD_CMD_READ:
	case NVMFD_CMD_WRITE:
		io->op = sqe->opc == NVMFD_CMD_READ ? NVMFD_BK_READ : NVMFD_BK_WRITE;
		io->offset = nvmfd_sqe_slba(sqe) << ns->lba_shift;
		io->len = req->data_len;
		io->buf = req->data;
		io->fua = sqe->opc == NVMFD_CMD_WRITE && (sqe->cdw12 & NVMFD_RW_FUA);
		io->lend = io->op == NVMFD_BK_READ && req->qp->lend_ok;
		break;
	case NVMFD_CMD_FLUSH:
		io->op = NVMFD_BK_FLUSH;
		break;
	case NVMFD_CMD_WRITE_ZEROES:
		io->op = NVMFD_BK_WRITE_ZEROES;
		io->offset = nvmfd_sqe_slba(sqe) << ns->lba_shift;
		io->len = nvmfd_sqe_nlb(sqe) << ns->lba_shift;
		break;
	case NVMFD_CMD_DSM:
		/* only Attribute Deallocate acts; IDR/IDW are hints */
		if (!(sqe->cdw11 & NVMFD_DSM_AD)) {
			nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
			return;
		}
		st = dsm_check(req);
		if (st) {
			nvmfd__tgt_req_complete(req, st);
			return;
		}
		req->nr_sub = 0;
		if (!dsm_next(req)) {
			nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
			return;
		}
		break;
	default:
		nvmfd__tgt_req_complete(req, dnr(NVMFD_SC_INVALID_OPCODE));
		return;
	}
	submit(req);
}
