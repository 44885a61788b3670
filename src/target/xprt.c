// SPDX-License-Identifier: MIT
/*
 * xprt.c - the core's side of the transport seam (xprt.h): the transport
 * registry and the queue's backend stepping (the core owns each queue's
 * completion context; the transport only calls nvmfd__tgt_qp_poll() from
 * its io_work).
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "target/core.h"

static const struct nvmfd_tgt_xprt_type *xprts[NVMFD_TGT_MAX_XPRTS];
static unsigned int nr_xprts;

/**
 * nvmfd__tgt_xprt_register() - see xprt.h.
 * Context: program start (constructors), single threaded.
 */
int nvmfd__tgt_xprt_register(const struct nvmfd_tgt_xprt_type *type)
{
	for (unsigned int i = 0; i < nr_xprts; i++)
		if (!strcmp(xprts[i]->name, type->name))
			return -EEXIST;
	if (nr_xprts == NVMFD_TGT_MAX_XPRTS)
		return -ENOSPC;
	xprts[nr_xprts++] = type;
	return 0;
}

/**
 * nvmfd__tgt_xprt_find() - see xprt.h.
 * Context: any thread (the registry is only written before main()).
 */
const struct nvmfd_tgt_xprt_type *nvmfd__tgt_xprt_find(const char *name)
{
	if (!name || !name[0])
		return nr_xprts ? xprts[0] : NULL;
	for (unsigned int i = 0; i < nr_xprts; i++)
		if (!strcmp(xprts[i]->name, name))
			return xprts[i];
	return NULL;
}

/* Shared rings announce routed completions: make the owner run. */
static void qp_cq_notify(void *arg)
{
	struct nvmfd_tgt_qp *qp = arg;

	qp->ops->kick(qp);
}

int nvmfd__tgt_qp_open_backend(struct nvmfd_tgt_qp *qp, int io_cpu, unsigned int depth)
{
	return nvmfd__tgt_qp_open_backend_src(qp, io_cpu, depth, NVMFD_CQ_SRC_POOL);
}

int nvmfd__tgt_qp_open_backend_src(struct nvmfd_tgt_qp *qp, int io_cpu, unsigned int depth,
				   enum nvmfd_cq_src src)
{
	struct nvmfd_cq *cq;
	int ret;

	if (!qp->tgt->cqpool)
		return -EINVAL;
	ret = nvmfd_cq_open_src(qp->tgt->cqpool, io_cpu, depth, src, qp_cq_notify, qp, &cq);
	if (ret)
		return ret;
	/* published: a transport may open it on a listed queue (at Connect)
	 * whose stats other threads read (acquire) */
	__atomic_store_n(&qp->cq, cq, __ATOMIC_RELEASE);
	return 0;
}

int nvmfd__tgt_qp_open_backend_worker(struct nvmfd_tgt_qp *qp, struct nvmfd_rt_ring *rr,
				      unsigned int depth)
{
	struct nvmfd_cq *cq;
	int ret;

	if (!qp->tgt->cqpool)
		return -EINVAL;
	ret = nvmfd_cq_open_worker(qp->tgt->cqpool, rr, depth, qp_cq_notify, qp, &cq);
	if (ret)
		return ret;
	__atomic_store_n(&qp->cq, cq, __ATOMIC_RELEASE); /* as above */
	return 0;
}

bool nvmfd__tgt_cq_can_share(const struct nvmfd_tgt *tgt)
{
	return tgt->cqpool && nvmfd_cq_pool_can_share(tgt->cqpool);
}

void nvmfd__tgt_qp_close_backend(struct nvmfd_tgt_qp *qp)
{
	nvmfd_cq_close(&qp->cq);
}

int nvmfd__tgt_qp_flush(struct nvmfd_tgt_qp *qp)
{
	return qp->cq ? nvmfd_cq_flush(qp->cq) : 0;
}

unsigned int nvmfd__tgt_qp_poll(struct nvmfd_tgt_qp *qp, bool polling)
{
	unsigned int n = 0;

	if (qp->cq) {
		nvmfd_cq_flush(qp->cq);
		n = nvmfd_cq_poll(qp->cq, polling, UINT32_MAX);
	}
	return n + (unsigned int)nvmfd__tgt_qp_drain_posted(qp);
}

unsigned int nvmfd__tgt_qp_inflight(const struct nvmfd_tgt_qp *qp)
{
	return qp->cq ? nvmfd_cq_inflight(qp->cq) : 0;
}

int nvmfd__tgt_qp_event_fd(const struct nvmfd_tgt_qp *qp)
{
	return qp->cq ? nvmfd_cq_event_fd(qp->cq) : -1;
}

void nvmfd__tgt_qp_idle(struct nvmfd_tgt_qp *qp)
{
	if (qp->cq)
		nvmfd_cq_clear_event(qp->cq);
}
