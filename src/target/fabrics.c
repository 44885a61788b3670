// SPDX-License-Identifier: MIT
/*
 * fabrics.c - the queue/request entry points of the core (xprt.h) and the
 * Fabrics command set: Connect, Property Get/Set, Disconnect
 * (NVMe-oF 1.1 §3; behaviour of Linux nvmet, doc/protocol-notes.md §2.1-2.3).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "internal/log.h"
#include "target/core.h"

#define COMP "target"

/* Connect response DW0 for CONNECT_INVALID_PARAM / _INVALID_HOST: IATTR in
 * bits 23:16 (bit 16 = the parameter is in the Connect data), IPO (byte
 * offset of the parameter) in bits 15:0, as Linux nvmet and host use it. */
#define IPO_DATA(field) ((NVMFD_CONNECT_RSP_IATTR_DATA << 16) | \
			 (uint32_t)offsetof(struct nvmfd_connect_data, field))
#define IPO_SQE(field) ((uint32_t)offsetof(struct nvmfd_connect_cmd, field))

/**
 * nvmfd__tgt_qp_init() - prepare the core part of a new queue.
 * @qp:   zeroed storage inside the transport queue.
 * @tgt:  target.
 * @port: listener config the connection came in on (borrowed).
 * @ops:  transport callbacks (borrowed, must outlive the queue).
 * Context: any thread, before the queue's io_work first runs.
 */
void nvmfd__tgt_qp_init(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt *tgt,
			const struct nvmfd_cfg_port *port, const struct nvmfd_tgt_xprt_ops *ops)
{
	qp->ops = ops;
	qp->tgt = tgt;
	qp->port = port;
	qp->ctrl = NULL;
	qp->qid = 0;
	qp->sqsize = 0;
	qp->sqhd = 0;
	qp->connected = false;
	qp->sqflow_disabled = false;
	qp->tls_hostnqn = NULL;
	qp->tls_subnqn = NULL;
	qp->posted = NULL;
	qp->auth = NULL;
	qp->auth_deadline_ns = 0;
	qp->admin_rx_ns = 0;
	qp->admin_cpl_ns = 0;
	qp->admin_opc = 0;
	{
		const struct nvmfd_tgt_xprt_type *x = nvmfd__tgt_xprt_find(NULL);

		qp->xprt_trtype = x ? x->trtype : 0;
	}
	__atomic_store_n(&qp->last_cmd_ns, nvmfd__tgt_now_ns(), __ATOMIC_RELAXED);
}

/**
 * nvmfd__tgt_qp_destroy() - the connection is gone: detach from the
 * controller. For the admin queue the controller leaves the registry, its
 * other queues are shut down through ops->shutdown_queue and its held AERs
 * are forgotten (their slots belong to this queue, which is going away).
 * @qp: queue.
 * Context: queue owner, after all its reqs have completed or been dropped.
 */
void nvmfd__tgt_qp_destroy(struct nvmfd_tgt_qp *qp)
{
	struct nvmfd_tgt_ctrl *ctrl = qp->ctrl;
	struct nvmfd_tgt *tgt = qp->tgt;

	nvmfd__tgt_auth_free(qp->auth);
	qp->auth = NULL;
	if (!ctrl) {
		__atomic_store_n(&qp->posted, NULL, __ATOMIC_RELAXED);
		qp->connected = false;
		return;
	}
	pthread_mutex_lock(&tgt->lock);
	__atomic_store_n(&qp->posted, NULL, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < ctrl->nr_aer;) {
		if (ctrl->aer[i]->qp == qp) {
			memmove(&ctrl->aer[i], &ctrl->aer[i + 1],
				(ctrl->nr_aer - i - 1) * sizeof(ctrl->aer[0]));
			ctrl->aer[--ctrl->nr_aer] = NULL;
		} else {
			i++;
		}
	}
	if (qp->qid <= ctrl->qid_max && ctrl->sqs[qp->qid] == qp)
		ctrl->sqs[qp->qid] = NULL;
	if (qp->qid == 0 && ctrl->registered) {
		struct nvmfd_tgt_ctrl **pp = &ctrl->subsys->ctrls;

		while (*pp && *pp != ctrl)
			pp = &(*pp)->next;
		if (*pp)
			*pp = ctrl->next;
		ctrl->next = NULL;
		ctrl->registered = false;
		nvmfd__tgt_ctrl_shutdown_locked(ctrl);
	}
	pthread_mutex_unlock(&tgt->lock);
	if (qp->qid == 0)
		NVMFD_INFO(COMP, "ctrl %u: admin queue of %s gone, controller deleted", ctrl->cntlid,
			   ctrl->subsys->nqn);
	qp->ctrl = NULL;
	qp->connected = false;
	nvmfd__tgt_ctrl_put(ctrl);
}

/**
 * nvmfd__tgt_qp_drain_posted() - deliver completions posted by other threads.
 * @qp: queue.
 * Return: number of completions handed to ops->queue_response.
 * Context: queue owner (io_work).
 */
int nvmfd__tgt_qp_drain_posted(struct nvmfd_tgt_qp *qp)
{
	struct nvmfd_tgt_req *req, *rev = NULL, *next;
	int n = 0;

	if (!__atomic_load_n(&qp->posted, __ATOMIC_RELAXED))
		return 0;
	req = __atomic_exchange_n(&qp->posted, NULL, __ATOMIC_ACQUIRE);
	for (; req; req = next) {
		next = req->core;
		req->core = rev;
		rev = req;
	}
	for (req = rev; req; req = next) {
		next = req->core;
		req->core = NULL;
		nvmfd__tgt_req_complete(req, req->sub_status);
		n++;
	}
	return n;
}

/* Base 2.0 §5.16.1.2: one Error Information entry per failed command of a
 * controller (failed Connects have no controller yet). */
static void record_error(struct nvmfd_tgt_req *req, nvmfd_status_t status)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_ctrl *ctrl = qp->ctrl;
	struct nvmfd_error_log_entry *e;

	pthread_mutex_lock(&ctrl->err_lock);
	e = &ctrl->err_log[ctrl->err_count % NVMFD_TGT_ERR_LOG_MAX];
	memset(e, 0, sizeof(*e));
	e->error_count = ++ctrl->err_count;
	e->sqid = qp->qid;
	e->cmdid = req->sqe.cid;
	e->status_field = (uint16_t)(status << 1);
	e->parm_error_location = 0xffff;
	e->nsid = req->sqe.nsid;
	if (qp->qid && (req->sqe.opc == NVMFD_CMD_READ || req->sqe.opc == NVMFD_CMD_WRITE ||
			req->sqe.opc == NVMFD_CMD_WRITE_ZEROES))
		e->lba = nvmfd_sqe_slba(&req->sqe);
	e->trtype = qp->xprt_trtype;
	pthread_mutex_unlock(&ctrl->err_lock);
}

/**
 * nvmfd__tgt_req_complete() - fill the CQE and hand it to the transport.
 * @req:    the command.
 * @status: NVMe status (without phase); result fields were set by the command.
 *          A failed command of a controller is added to its Error Information log.
 * Context: queue owner; not under tgt->lock.
 */
/* Does a command with this status count as traffic for the keep-alive?
 * Not when refused as INVALID_OPCODE or AUTH_REQUIRED: a peer that sends
 * only those does not keep its controller alive. */
static bool ka_traffic(nvmfd_status_t st)
{
	nvmfd_status_t s = (nvmfd_status_t)(st & ~NVMFD_STATUS_DNR);

	return s != NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE) &&
	       s != NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED);
}

void nvmfd__tgt_req_complete(struct nvmfd_tgt_req *req, nvmfd_status_t status)
{
	struct nvmfd_tgt_qp *qp = req->qp;

	if (status && qp->ctrl && req->sqe.opc != NVMFD_ADMIN_FABRICS)
		record_error(req, status);
	if (qp->qid == 0 && req->sqe.opc != NVMFD_ADMIN_ASYNC_EVENT && ka_traffic(status))
		__atomic_store_n(&qp->admin_cpl_ns, nvmfd__tgt_now_ns(), __ATOMIC_RELAXED);

	req->cqe.cid = req->sqe.cid;
	req->cqe.sqid = qp->qid;
	req->cqe.status = (uint16_t)(status << 1);
	if (qp->sqflow_disabled) {
		/* NVMe-oF 1.1 §2.4.1 (TP 8005): SQ flow control disabled */
		req->cqe.sqhd = 0xffff;
	} else {
		if (qp->sqsize)
			qp->sqhd = (uint16_t)((qp->sqhd + 1u) % ((uint32_t)qp->sqsize + 1u));
		req->cqe.sqhd = qp->sqhd;
	}
	qp->ops->queue_response(req);
}

/**
 * nvmfd__tgt_sgl_check() - the data descriptor rule of a capsule (one
 * place for both the core and the transport): an in-capsule Data Block
 * descriptor (Offset subtype, 01h) with offset 0, or a Transport Data
 * Block (5Ah) for data moved by the transport (NVMe-oF 1.1 §2.3; the
 * in-capsule data offset the transports use is 0: doc/protocol-notes.md
 * §1.9).
 * @sqe: the command.
 * Return: 0, SGL_INVALID_OFFSET|DNR (in-capsule offset not 0),
 *         SGL_INVALID_TYPE|DNR (any other descriptor type).
 * Context: any thread (pure).
 */
nvmfd_status_t nvmfd__tgt_sgl_check(const struct nvmfd_sqe *sqe)
{
	const struct nvmfd_sgl_desc *sgl = &sqe->dptr;

	if (sgl->type == NVMFD_SGL_ID_INCAPSULE)
		return sgl->addr ? nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_OFFSET)
				 : 0;
	if (sgl->type != NVMFD_SGL_ID_TRANSPORT)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_TYPE);
	return 0;
}

static nvmfd_status_t req_parse(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	const struct nvmfd_sgl_desc *sgl = &req->sqe.dptr;

	/* nvmet_req_init: fused commands are not supported and the data
	 * pointer must be an SGL (PSDT 01b) on fabrics. */
	if ((req->sqe.flags & NVMFD_SQE_FLAGS_FUSE_MASK) ||
	    (req->sqe.flags & NVMFD_SQE_FLAGS_PSDT_MASK) != NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	if (sgl->length) {
		nvmfd_status_t st = nvmfd__tgt_sgl_check(&req->sqe);

		if (st)
			return st;
	}
	if (req->sqe.opc == NVMFD_ADMIN_FABRICS)
		return nvmfd__tgt_fabrics_init(req);
	/* nvmet_parse_connect_cmd: nothing but Connect before Connect */
	if (!qp->connected || !qp->ctrl)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE);
	/* nothing but Authentication Send/Receive before authentication */
	if (nvmfd__tgt_auth_required(qp))
		return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED);
	if (!nvmfd__tgt_ctrl_is_ready(qp->ctrl))
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
	if (qp->qid == 0)
		return nvmfd__tgt_admin_init(req);
	return nvmfd__tgt_io_init(req);
}

/**
 * nvmfd__tgt_req_init() - parse and validate a newly received command.
 * @req: sqe filled, qp set; in_capsule/data_len of in-capsule data set by
 *       the transport when the capsule carried data.
 * Return: NVMFD_SC_SUCCESS with req->xfer and req->data_len set, or the
 *         status to complete the command with.
 * Every command counts as traffic for the traffic-based keep-alive except
 * the ones refused as INVALID_OPCODE or AUTH_REQUIRED: a peer that sends
 * only those (a Keep Alive on a queue that never authenticated, say) does
 * not keep its controller alive. On the admin queue its answer counts
 * too (nvmfd__tgt_req_complete()), except an AER's.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_req_init(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	nvmfd_status_t st;

	memset(&req->cqe, 0, sizeof(req->cqe));
	req->core = NULL;
	req->nr_sub = 0;
	req->sub_status = NVMFD_SC_SUCCESS;
	st = req_parse(req);
	if (ka_traffic(st)) {
		uint64_t now = nvmfd__tgt_now_ns();

		__atomic_store_n(&qp->last_cmd_ns, now, __ATOMIC_RELAXED);
		if (qp->qid == 0 && req->sqe.opc != NVMFD_ADMIN_ASYNC_EVENT) {
			__atomic_store_n(&qp->admin_opc, req->sqe.opc, __ATOMIC_RELAXED);
			__atomic_store_n(&qp->admin_rx_ns, now, __ATOMIC_RELAXED);
		}
	}
	return st;
}

/**
 * nvmfd__tgt_req_execute() - run a command accepted by nvmfd__tgt_req_init().
 * @req: the command; H2C data is in req->data.
 * Context: queue owner. Completes through nvmfd__tgt_req_complete(), maybe
 * later (backend I/O, AER).
 */
void nvmfd__tgt_req_execute(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;

	if (req->sqe.opc == NVMFD_ADMIN_FABRICS)
		nvmfd__tgt_fabrics_execute(req);
	else if (qp->qid == 0 && qp->ctrl->subsys->is_disc)
		nvmfd__tgt_disc_execute(req);
	else if (qp->qid == 0)
		nvmfd__tgt_admin_execute(req);
	else
		nvmfd__tgt_io_execute(req);
}

/**
 * nvmfd__tgt_set_xfer() - check the SGL length against what the command
 * moves and set the transfer.
 * @req:  the command.
 * @xfer: direction when @len > 0.
 * @len:  bytes the command transfers.
 * Return: SUCCESS; SGL_INVALID_DATA|DNR when the SGL length differs (nvmet
 *         nvmet_check_transfer_len); INVALID_FIELD|DNR for in-capsule data
 *         on a non-write or a length beyond the buffer / MDTS.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_set_xfer(struct nvmfd_tgt_req *req, enum nvmfd_tgt_xfer xfer,
				   uint64_t len)
{
	if (req->sqe.dptr.length != len)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_DATA);
	if (req->in_capsule && (xfer != NVMFD_XFER_H2C || req->data_len != len))
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	if ((req->data_cap && len > req->data_cap) || len > nvmfd__tgt_max_io_size(req->qp->tgt))
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	req->xfer = len ? xfer : NVMFD_XFER_NONE;
	req->data_len = (uint32_t)len;
	return NVMFD_SC_SUCCESS;
}

/**
 * nvmfd__tgt_fabrics_init() - parse a Fabrics command (opcode 7Fh).
 * @req: the command.
 * Return: SUCCESS with the transfer set, or the completion status.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_fabrics_init(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	uint8_t fctype = (uint8_t)(req->sqe.nsid & 0xff); /* byte 4 */

	if (!qp->connected) {
		if (fctype != NVMFD_FCTYPE_CONNECT)
			return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE);
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_H2C, sizeof(struct nvmfd_connect_data));
	}
	if (fctype == NVMFD_FCTYPE_AUTH_SEND || fctype == NVMFD_FCTYPE_AUTH_RECV)
		return nvmfd__tgt_auth_init(req);
	/* an unauthenticated queue takes nothing else (not even Connect:
	 * AUTH_REQUIRED as nvmet; it was connected already) */
	if (nvmfd__tgt_auth_required(qp))
		return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED);
	switch (fctype) {
	case NVMFD_FCTYPE_CONNECT:
		/* a queue is connected once */
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
	case NVMFD_FCTYPE_PROP_GET:
	case NVMFD_FCTYPE_PROP_SET:
		/* nvmet_parse_fabrics_io_cmd: properties on the admin queue only */
		if (qp->qid != 0)
			return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE);
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_NONE, 0);
	case NVMFD_FCTYPE_DISCONNECT:
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_NONE, 0);
	default:
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE);
	}
}

/**
 * nvmfd__tgt_qp_enable() - the transport sizes @qp for use at @sqsize
 * (0's based) entries (ops->enable_queue, xprt.h): called by a Connect
 * that is about to succeed, or by the DH-HMAC-CHAP transaction that makes
 * the queue usable. On failure the queue is shut down (the command's
 * response still goes out first: the transport closes on its next pass,
 * as after a Disconnect); the caller fails the command with Internal
 * Error (doc/design.md "Queue resources after Connect").
 * Return: 0, or the transport's -errno (logged).
 * Context: queue owner.
 */
int nvmfd__tgt_qp_enable(struct nvmfd_tgt_qp *qp, uint16_t sqsize)
{
	int ret;

	if (!qp->ops->enable_queue)
		return 0;
	ret = qp->ops->enable_queue(qp, sqsize);
	if (!ret)
		return 0;
	NVMFD_WARN_RATELIMIT(COMP, "%s: cannot allocate a queue of %u entries: %s; closing",
			     qp->peer_addr, (unsigned int)sqsize + 1u, strerror(-ret));
	if (qp->ops->shutdown_queue)
		qp->ops->shutdown_queue(qp);
	return ret;
}

static nvmfd_status_t connect_err(struct nvmfd_tgt_req *req, uint8_t sc, uint32_t ipo)
{
	req->cqe.result = ipo;
	return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, sc);
}

/* Connect checks shared by admin and I/O queues: subsystem and host. */
static nvmfd_status_t connect_find_subsys(struct nvmfd_tgt_req *req,
					  const struct nvmfd_connect_data *d,
					  struct nvmfd_tgt_subsys **out)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_subsys *s;

	if (strnlen(d->subnqn, sizeof(d->subnqn)) == sizeof(d->subnqn))
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(subnqn));
	if (strnlen(d->hostnqn, sizeof(d->hostnqn)) == sizeof(d->hostnqn))
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(hostnqn));
	/* TLS: the queue's PSK belongs to one host and subsystem (its
	 * identity's NQNs); a Connect for others would borrow it */
	if (qp->tls_hostnqn && strcmp(qp->tls_hostnqn, d->hostnqn)) {
		NVMFD_WARN(COMP, "%s: Connect as host %s over TLS keyed for host %s", qp->peer_addr,
			   d->hostnqn, qp->tls_hostnqn);
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_HOST, IPO_DATA(hostnqn));
	}
	if (qp->tls_subnqn && strcmp(qp->tls_subnqn, d->subnqn)) {
		NVMFD_WARN(COMP, "%s: Connect to %s over TLS keyed for subsystem %s", qp->peer_addr,
			   d->subnqn, qp->tls_subnqn);
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(subnqn));
	}
	s = nvmfd__tgt_subsys_find_get(qp->tgt, d->subnqn);
	if (!s || !nvmfd__tgt_subsys_on_port(s, qp->port)) {
		NVMFD_WARN(COMP, "%s: connect to unknown subsystem %s", qp->peer_addr, d->subnqn);
		if (s)
			nvmfd__tgt_subsys_put(s);
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(subnqn));
	}
	if (!nvmfd__tgt_host_allowed(s, d->hostnqn)) {
		NVMFD_WARN(COMP, "%s: host %s not allowed on %s", qp->peer_addr, d->hostnqn,
			   s->nqn);
		nvmfd__tgt_subsys_put(s);
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_HOST, IPO_DATA(hostnqn));
	}
	*out = s; /* with a reference: the caller puts it */
	return NVMFD_SC_SUCCESS;
}

static void qp_attach(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt_ctrl *ctrl,
		      const struct nvmfd_connect_cmd *c, struct nvmfd_tgt_auth *auth)
{
	qp->auth = auth;
	qp->ctrl = ctrl;
	qp->qid = c->qid;
	qp->sqsize = c->sqsize;
	qp->sqhd = 0;
	qp->sqflow_disabled = !!(c->cattr & NVMFD_CONNECT_CATTR_DISABLE_SQFLOW);
	qp->connected = true;
	__atomic_store_n(&qp->last_cmd_ns, nvmfd__tgt_now_ns(), __ATOMIC_RELAXED);
	nvmfd__tgt_auth_arm(qp, qp->last_cmd_ns);
}

static nvmfd_status_t connect_admin(struct nvmfd_tgt_req *req, const struct nvmfd_connect_cmd *c,
				    const struct nvmfd_connect_data *d, struct nvmfd_tgt_subsys *s)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_auth *auth = NULL;
	struct nvmfd_tgt_ctrl *ctrl;
	uint32_t kato;
	int ret;

	/* NVMe-oF 1.1 §3.3: dynamic controller model only */
	if (d->cntlid != NVMFD_CNTLID_DYNAMIC)
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(cntlid));
	if (nvmfd__tgt_auth_setup(qp, s, d->hostnqn, &auth) < 0)
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	/* the queue's resources before the controller's (nothing to undo);
	 * a queue that must authenticate gets them when it has */
	if (!auth && nvmfd__tgt_qp_enable(qp, c->sqsize))
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	ret = nvmfd__tgt_ctrl_alloc(s, qp->port, d->hostnqn, d->hostid, &ctrl);
	if (ret == -EBUSY) {
		NVMFD_WARN(COMP, "%s: subsystem %s: no free controller ID", qp->peer_addr, s->nqn);
		nvmfd__tgt_auth_free(auth);
		return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_CONNECT_CTRL_BUSY);
	}
	if (ret < 0) {
		nvmfd__tgt_auth_free(auth);
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	}
	kato = c->kato;
	if (s->is_disc && kato == 0)
		kato = NVMFD_TGT_DISC_KATO_MS;
	__atomic_store_n(&ctrl->kato_ms, kato, __ATOMIC_RELAXED);
	pthread_mutex_lock(&qp->tgt->lock);
	ctrl->sqs[0] = qp;
	qp_attach(qp, ctrl, c, auth);
	pthread_mutex_unlock(&qp->tgt->lock);
	req->cqe.result = ctrl->cntlid | (auth ? NVMFD_CONNECT_AUTHREQ_ATR : 0);
	NVMFD_INFO(COMP, "ctrl %u: %s controller for %s on %s, host %s, kato %u ms%s",
		   ctrl->cntlid, s->is_disc ? "discovery" : "I/O", s->nqn, qp->peer_addr,
		   d->hostnqn, kato, auth ? ", DH-HMAC-CHAP required" : "");
	return NVMFD_SC_SUCCESS;
}

static nvmfd_status_t connect_io(struct nvmfd_tgt_req *req, const struct nvmfd_connect_cmd *c,
				 const struct nvmfd_connect_data *d, struct nvmfd_tgt_subsys *s)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_auth *auth = NULL;
	struct nvmfd_tgt_ctrl *ctrl;
	nvmfd_status_t st;

	ctrl = nvmfd__tgt_ctrl_find_get(s, d->cntlid);
	if (!ctrl) {
		NVMFD_WARN(COMP, "%s: I/O connect to unknown ctrl %u", qp->peer_addr, d->cntlid);
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(cntlid));
	}
	if (strcmp(ctrl->hostnqn, d->hostnqn)) {
		st = connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_DATA(hostnqn));
		goto out_put;
	}
	if (!nvmfd__tgt_ctrl_is_ready(ctrl)) {
		st = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
		goto out_put;
	}
	if (c->qid > __atomic_load_n(&ctrl->nr_io_queues, __ATOMIC_RELAXED)) {
		st = connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_SQE(qid));
		goto out_put;
	}
	/* nvmet_install_queue: for fabrics MQES applies to I/O queues only */
	if (c->sqsize > ctrl->mqes) {
		st = connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_SQE(sqsize));
		goto out_put;
	}
	/* every I/O queue authenticates too (as the admin queue did) */
	if (nvmfd__tgt_auth_setup(qp, s, d->hostnqn, &auth) < 0) {
		st = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
		goto out_put;
	}
	if (!auth && nvmfd__tgt_qp_enable(qp, c->sqsize)) {
		st = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
		goto out_put;
	}
	pthread_mutex_lock(&qp->tgt->lock);
	if (ctrl->sqs[c->qid] || !ctrl->registered) {
		pthread_mutex_unlock(&qp->tgt->lock);
		st = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
		goto out_put;
	}
	ctrl->sqs[c->qid] = qp;
	qp_attach(qp, ctrl, c, auth);
	pthread_mutex_unlock(&qp->tgt->lock);
	req->cqe.result = ctrl->cntlid | (auth ? NVMFD_CONNECT_AUTHREQ_ATR : 0);
	return NVMFD_SC_SUCCESS;

out_put:
	nvmfd__tgt_auth_free(auth);
	nvmfd__tgt_ctrl_put(ctrl);
	return st;
}

static nvmfd_status_t exec_connect(struct nvmfd_tgt_req *req)
{
	struct nvmfd_connect_cmd c;
	struct nvmfd_connect_data d;
	struct nvmfd_tgt_subsys *s;
	nvmfd_status_t st;

	memcpy(&c, &req->sqe, sizeof(c));
	if (!req->data || req->data_len < sizeof(d))
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_DATA);
	memcpy(&d, req->data, sizeof(d));
	/* NVMe-oF 1.1 §3.3: record format 0 is the only one defined */
	if (c.recfmt != 0)
		return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_CONNECT_FORMAT);
	if (c.sqsize == 0)
		return connect_err(req, NVMFD_SC_CONNECT_INVALID_PARAM, IPO_SQE(sqsize));
	st = connect_find_subsys(req, &d, &s);
	if (st)
		return st;
	st = c.qid == 0 ? connect_admin(req, &c, &d, s) : connect_io(req, &c, &d, s);
	nvmfd__tgt_subsys_put(s); /* a controller holds its own reference */
	return st;
}

/* CC write, after nvmet_update_cc(): EN 0->1 validates and sets RDY (or
 * CFS), EN 1->0 clears RDY and CC, SHN set -> shutdown complete, SHN
 * cleared -> SHST cleared. */
static void update_cc(struct nvmfd_tgt_ctrl *ctrl, uint32_t new)
{
	uint32_t old = __atomic_load_n(&ctrl->cc, __ATOMIC_RELAXED);
	uint32_t csts = __atomic_load_n(&ctrl->csts, __ATOMIC_RELAXED);

	__atomic_store_n(&ctrl->cc, new, __ATOMIC_RELEASE);
	if ((new & NVMFD_CC_EN) && !(old & NVMFD_CC_EN)) {
		bool ok = NVMFD_CC_MPS(new) == 0 && NVMFD_CC_AMS(new) == 0 &&
			  NVMFD_CC_CSS(new) == NVMFD_CC_CSS_NVM;

		if (!ctrl->subsys->is_disc &&
		    (NVMFD_CC_IOSQES(new) != 6 || NVMFD_CC_IOCQES(new) != 4))
			ok = false;
		if (ok) {
			csts |= NVMFD_CSTS_RDY;
		} else {
			NVMFD_WARN(COMP, "ctrl %u: invalid CC 0x%x, controller fatal", ctrl->cntlid,
				   new);
			csts |= NVMFD_CSTS_CFS;
		}
	}
	if (!(new & NVMFD_CC_EN) && (old & NVMFD_CC_EN)) {
		csts &= ~NVMFD_CSTS_RDY;
		__atomic_store_n(&ctrl->cc, 0, __ATOMIC_RELEASE);
	}
	if (NVMFD_CC_SHN(new) && !NVMFD_CC_SHN(old)) {
		/* shutdown completes at once; unlike nvmet, CC keeps SHN (with
		 * EN off) so that clearing SHN later clears SHST */
		csts &= ~NVMFD_CSTS_RDY;
		__atomic_store_n(&ctrl->cc, new & ~NVMFD_CC_EN, __ATOMIC_RELEASE);
		csts |= NVMFD_CSTS_SHST_CMPLT;
	}
	if (!NVMFD_CC_SHN(new) && NVMFD_CC_SHN(old))
		csts &= ~NVMFD_CSTS_SHST_CMPLT;
	__atomic_store_n(&ctrl->csts, csts, __ATOMIC_RELEASE);
}

static nvmfd_status_t exec_prop_set(struct nvmfd_tgt_req *req)
{
	struct nvmfd_prop_cmd p;

	memcpy(&p, &req->sqe, sizeof(p));
	/* nvmet: only CC, 4 bytes */
	if ((p.attrib & 0x7) != NVMFD_PROP_ATTRIB_SIZE_4 || p.ofst != NVMFD_REG_CC)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	/* under the control lock: housekeeping may set CSTS.CFS meanwhile */
	pthread_mutex_lock(&req->qp->tgt->lock);
	update_cc(req->qp->ctrl, (uint32_t)p.value);
	pthread_mutex_unlock(&req->qp->tgt->lock);
	return NVMFD_SC_SUCCESS;
}

static nvmfd_status_t exec_prop_get(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_prop_cmd p;
	uint64_t v;

	memcpy(&p, &req->sqe, sizeof(p));
	if ((p.attrib & 0x7) == NVMFD_PROP_ATTRIB_SIZE_8) {
		if (p.ofst != NVMFD_REG_CAP)
			return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
		v = nvmfd__tgt_cap(ctrl);
	} else if ((p.attrib & 0x7) == NVMFD_PROP_ATTRIB_SIZE_4) {
		switch (p.ofst) {
		case NVMFD_REG_VS:
			v = ctrl->subsys->cfg && ctrl->subsys->cfg->version ?
				    ctrl->subsys->cfg->version :
				    NVMFD_VS_1_3;
			break;
		case NVMFD_REG_CC:
			v = __atomic_load_n(&ctrl->cc, __ATOMIC_ACQUIRE);
			break;
		case NVMFD_REG_CSTS:
			v = __atomic_load_n(&ctrl->csts, __ATOMIC_ACQUIRE);
			break;
		case NVMFD_REG_CRTO:
			/* CRWMT and CRIMT (500 ms units) = CAP.TO */
			v = ((uint32_t)NVMFD_TGT_CAP_TO << 16) | NVMFD_TGT_CAP_TO;
			break;
		default:
			return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
		}
	} else {
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	}
	req->cqe.result = (uint32_t)v;
	req->cqe.dw1 = (uint32_t)(v >> 32);
	return NVMFD_SC_SUCCESS;
}

/**
 * nvmfd__tgt_fabrics_execute() - run a Fabrics command.
 * @req: the command, accepted by nvmfd__tgt_fabrics_init().
 * Context: queue owner. Disconnect completes, then asks the transport to
 * close the queue (an admin queue's teardown deletes the controller).
 */
void nvmfd__tgt_fabrics_execute(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	uint8_t fctype = (uint8_t)(req->sqe.nsid & 0xff);
	nvmfd_status_t st;

	switch (fctype) {
	case NVMFD_FCTYPE_CONNECT:
		st = exec_connect(req);
		break;
	case NVMFD_FCTYPE_PROP_SET:
		st = exec_prop_set(req);
		break;
	case NVMFD_FCTYPE_PROP_GET:
		st = exec_prop_get(req);
		break;
	case NVMFD_FCTYPE_AUTH_SEND:
	case NVMFD_FCTYPE_AUTH_RECV:
		st = nvmfd__tgt_auth_execute(req);
		break;
	case NVMFD_FCTYPE_DISCONNECT: {
		struct nvmfd_disconnect_cmd dc;

		memcpy(&dc, &req->sqe, sizeof(dc));
		if (dc.recfmt != 0) {
			st = nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_CONNECT_FORMAT);
			break;
		}
		nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
		if (qp->ops->shutdown_queue)
			qp->ops->shutdown_queue(qp);
		return;
	}
	default:
		st = nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE);
		break;
	}
	nvmfd__tgt_req_complete(req, st);
}
