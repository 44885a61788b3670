/* SPDX-License-Identifier: MIT */
/*
 * xprt.h - the seam between the transport-independent target core
 * (the .c files of src/target) and a transport (a folder below it, e.g.
 * src/target/tcp/). doc/design.md walks through it.
 *
 * A transport registers a struct nvmfd_tgt_xprt_type at program start
 * (NVMFD_TGT_XPRT_REGISTER); the core creates, starts, checks and removes
 * its ports through those ops only, and takes trtype from it. The core
 * knows no transport by name.
 *
 * A transport queue (e.g. one TCP connection) embeds a struct nvmfd_tgt_qp
 * and a preallocated array of struct nvmfd_tgt_req (one per command slot).
 * Flow of one command, all on the queue owner's thread (its io_work):
 *
 *   transport: CapsuleCmd received -> take a free req, copy the SQE
 *   core:      nvmfd__tgt_req_init(req) decides direction and length
 *              (req->xfer, req->data_len) or returns an error status
 *   transport: error -> nvmfd__tgt_req_complete(req, status)
 *              H2C -> take in-capsule data or run R2T/H2CData into req->data
 *              then nvmfd__tgt_req_execute(req)
 *   core:      executes (maybe asynchronously on the queue's completion
 *              context: the core only queues backend ios; the transport
 *              calls nvmfd__tgt_qp_poll() after each receive step, which
 *              flushes them, reaps completions and delivers posted ones),
 *              then calls nvmfd__tgt_req_complete(req, status), which fills
 *              req->cqe and calls qp->ops->queue_response(req)
 *   transport: sends C2HData (req->data, req->data_len bytes, if C2H and
 *              success) and/or the CapsuleResp; then frees the req slot.
 *
 * Errors: core functions return nvmfd_status_t for command outcomes and
 * negative errno for resource failures.
 */
#ifndef NVMFD_TARGET_XPRT_H
#define NVMFD_TARGET_XPRT_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <nvmfd/spec.h>

#include "cfg/cfg.h"
#include "internal/backend.h"
#include "internal/cqpool.h"

struct nvmfd_tgt;
struct nvmfd_tgt_ctrl;
struct nvmfd_tgt_qp;
struct nvmfd_tgt_req;
struct nvmfd_tgt_auth;

enum nvmfd_tgt_xfer {
	NVMFD_XFER_NONE,
	NVMFD_XFER_H2C, /* host to controller: write-like, data before execute */
	NVMFD_XFER_C2H, /* controller to host: read-like, data with the response */
};

struct nvmfd_tgt_xprt_ops {
	/* Send req's data (C2H) and/or response. Context: queue owner. */
	void (*queue_response)(struct nvmfd_tgt_req *req);
	/* Close the connection asynchronously (KATO expiry, controller
	 * teardown). Context: any thread. */
	void (*shutdown_queue)(struct nvmfd_tgt_qp *qp);
	/* Make the queue's io_work run soon (an AER was completed from
	 * another thread via nvmfd__tgt_qp_post()). Context: any thread. */
	void (*kick)(struct nvmfd_tgt_qp *qp);
	/* How long this queue's input or work has been waiting for the
	 * target itself, ns (0: not stalled): e.g. its io_work queued but not
	 * run, or bytes the host sent left unread while the queue made no
	 * progress. The keep-alive check defers an expiry while a queue of
	 * the controller is stalled (a target-side stall, not a silent host).
	 * May be NULL. Context: any thread, tgt->lock held: must not block. */
	uint64_t (*stall_ns)(struct nvmfd_tgt_qp *qp);
	/* The parts of stall_ns, ns, for the log: *@unread_ns how long input
	 * the host sent has sat unread while the queue made no pass (its
	 * readiness not dispatched, or its worker off the CPU), *@queued_ns
	 * how long its work has been queued on its worker without running.
	 * May be NULL. Context: as stall_ns. */
	void (*stall_parts)(struct nvmfd_tgt_qp *qp, uint64_t *unread_ns, uint64_t *queued_ns);
	/* The queue is to be used at its depth: a Connect for @sqsize (0's
	 * based) entries is about to succeed (no DH-HMAC-CHAP), or its first
	 * DH-HMAC-CHAP transaction is about to (qp->sqsize). Until then a
	 * transport may hold only what the setup needs (the Connect capsule,
	 * the authentication exchange, one command at a time); now it sizes
	 * the queue (command slots, the backend completion context via
	 * nvmfd__tgt_qp_open_backend_src()). Called before the response that
	 * lets the host use the queue, maybe again (a later Connect or
	 * re-authentication: keep what is there, grow if @sqsize asks more).
	 * Return: 0, or -errno: the command fails with Internal Error and the
	 * core closes the queue after its response (ops->shutdown_queue).
	 * May be NULL (everything allocated at creation). Context: owner. */
	int (*enable_queue)(struct nvmfd_tgt_qp *qp, uint16_t sqsize);
};

/* The core's part of a queue; embedded in the transport queue. */
struct nvmfd_tgt_qp {
	const struct nvmfd_tgt_xprt_ops *ops;
	struct nvmfd_tgt *tgt;
	const struct nvmfd_cfg_port *port; /* listener this queue came in on */
	char local_addr[64]; /* numeric address the host connected to */
	char peer_addr[80]; /* "addr:port", for logs */
	struct nvmfd_tgt_ctrl *ctrl; /* set by a successful Connect */
	uint16_t qid;
	uint16_t sqsize; /* 0's based, from Connect */
	uint16_t sqhd;
	bool connected;
	bool sqflow_disabled; /* Connect CATTR bit 2: no SQHD, C2H SUCCESS allowed */
	/* the transport sends READ data from lent backend memory (req->lent,
	 * nvmfd__tgt_req_lent_lock()) and returns it (nvmfd__tgt_req_release()) */
	bool lend_ok;
	/* TLS: the NQNs of the PSK identity the queue's TLS session was
	 * keyed with (Connect must name them), NULL on a plain queue;
	 * transport memory */
	const char *tls_hostnqn;
	const char *tls_subnqn;
	/* backend completions (core-owned: nvmfd__tgt_qp_open_backend()),
	 * NULL until opened (a transport may open it at Connect: other
	 * threads load it with acquire) */
	struct nvmfd_cq *cq;
	/* Completions posted from other threads (AER), drained by the owner
	 * through nvmfd__tgt_qp_drain_posted(). Private to the core. */
	void *posted;
	uint64_t last_cmd_ns; /* for traffic-based keep-alive */
	/* The admin queue (keep-alive, nvmfd__tgt_check_kato()): the last
	 * command other than an Asynchronous Event Request received (its
	 * opcode, its arrival) and answered, CLOCK_MONOTONIC ns, atomic. An
	 * answer counts as traffic too (a host waits for it before its next
	 * bring-up command), and a command not answered yet is the target's
	 * delay, not a silent host. */
	uint64_t admin_rx_ns;
	uint64_t admin_cpl_ns;
	uint8_t admin_opc;
	uint8_t xprt_trtype; /* the queue's transport's TRTYPE (error log) */
	/* DH-HMAC-CHAP state when the queue must authenticate, else NULL.
	 * Private to the core (target/auth.c). */
	struct nvmfd_tgt_auth *auth;
	/* CLOCK_MONOTONIC ns by which the queue must have authenticated, 0:
	 * none (atomic: armed by the owner, checked by housekeeping) */
	uint64_t auth_deadline_ns;
};

/* One command slot; the transport preallocates them per queue. */
struct nvmfd_tgt_req {
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	struct nvmfd_tgt_qp *qp;
	enum nvmfd_tgt_xfer xfer;
	uint32_t data_len; /* bytes transferred by the command */
	void *data; /* transport-owned buffer of >= data_len bytes */
	uint32_t data_cap; /* capacity of data */
	bool in_capsule; /* H2C data arrived in the capsule */
	struct nvmfd_bk_io bk_io; /* core-owned while executing */
	uint16_t slot; /* index in the transport's array (TTAG) */
	void *xprt; /* transport private */
	void *core; /* core private (e.g. ns pointer) */
	uint32_t nr_sub; /* core: outstanding sub-ios (DSM ranges) */
	nvmfd_status_t sub_status;
	/* READ on a qp with lend_ok: NULL (the data is in data), or the
	 * backend memory holding data_len bytes, valid until
	 * nvmfd__tgt_req_release(); the transport must set it NULL for a new
	 * command */
	const void *lent;
};

/**
 * nvmfd__tgt_req_lent_lock() - start reading @len bytes at @off of
 * req->lent (digest, send): each logical block read until the matching
 * nvmfd__tgt_req_lent_unlock() is all old or all new with respect to
 * concurrent writes, which wait. Hold it briefly (no blocking call; a
 * non-blocking send is fine); it may be taken again before unlocking.
 * Context: queue owner.
 */
void nvmfd__tgt_req_lent_lock(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len);
void nvmfd__tgt_req_lent_unlock(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len);
/* nvmfd__tgt_req_lent_digest() - the data digest of @len lent bytes at @off
 * of @req's data, inside a range locked with nvmfd__tgt_req_lent_lock():
 * nvmfd_bk_lent_digest() (a RAM namespace remembers its blocks' CRCs). */
uint32_t nvmfd__tgt_req_lent_digest(struct nvmfd_tgt_req *req, uint32_t off, uint32_t len);

/**
 * nvmfd__tgt_req_release() - the transport is done with req->lent (sent,
 * or the command dropped): the backend memory may go away (namespace
 * removal waits for this). No-op when nothing is lent. Context: queue owner.
 */
void nvmfd__tgt_req_release(struct nvmfd_tgt_req *req);

/**
 * nvmfd__tgt_qp_init() - prepare the core part of a new queue.
 * @qp: zeroed storage inside the transport queue.
 * Context: any thread, before the queue's io_work first runs.
 */
void nvmfd__tgt_qp_init(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt *tgt,
			const struct nvmfd_cfg_port *port,
			const struct nvmfd_tgt_xprt_ops *ops);

/**
 * nvmfd__tgt_qp_destroy() - the connection is gone: detach from the
 * controller (admin queue: tear the controller down, fail held AERs,
 * shut its other queues down through ops->shutdown_queue).
 * Context: queue owner, after all its reqs have completed or been dropped.
 */
void nvmfd__tgt_qp_destroy(struct nvmfd_tgt_qp *qp);

/**
 * nvmfd__tgt_req_init() - parse and validate a newly received command.
 * @req: sqe filled, qp set; in_capsule/data_len of in-capsule data set by
 *       the transport when the capsule carried data (data points at it).
 * Return: NVMFD_SC_SUCCESS with req->xfer and req->data_len set, or the
 *         status to complete the command with (the transport must still
 *         consume any in-capsule data).
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_req_init(struct nvmfd_tgt_req *req);

/** nvmfd__tgt_sgl_check() - the capsule's data descriptor rule (the one
 *  check, shared with the core's own validation; see fabrics.c).
 *  Return: 0 or the status (with DNR) to fail the command with. */
nvmfd_status_t nvmfd__tgt_sgl_check(const struct nvmfd_sqe *sqe);

/** nvmfd__tgt_req_execute() - run the command; its data is in req->data for
 *  H2C. Completes through nvmfd__tgt_req_complete(). Context: queue owner. */
void nvmfd__tgt_req_execute(struct nvmfd_tgt_req *req);

/** nvmfd__tgt_req_complete() - fill the CQE (cid, sqid, sqhd, status) and
 *  hand it to the transport. Context: queue owner. */
void nvmfd__tgt_req_complete(struct nvmfd_tgt_req *req, nvmfd_status_t status);

/** nvmfd__tgt_qp_drain_posted() - deliver completions posted by other
 *  threads (AERs). Call from io_work. Return: number delivered. */
int nvmfd__tgt_qp_drain_posted(struct nvmfd_tgt_qp *qp);

/** nvmfd__tgt_max_io_size() - MDTS in bytes (buffers must hold this much). */
uint32_t nvmfd__tgt_max_io_size(const struct nvmfd_tgt *tgt);

/** nvmfd__tgt_cfg() - the borrowed config. */
const struct nvmfd_cfg *nvmfd__tgt_cfg(const struct nvmfd_tgt *tgt);

/** nvmfd__tgt_rt() - the execution runtime queues run on. */
struct nvmfd_rt *nvmfd__tgt_rt(const struct nvmfd_tgt *tgt);

/** nvmfd__tgt_rt_escape() - --exec auto: the unbound runtime a starved or
 *  contended queue is moved to, where the ports' own work items (accept,
 *  release) also run; NULL in the other modes. */
struct nvmfd_rt *nvmfd__tgt_rt_escape(const struct nvmfd_tgt *tgt);

/** nvmfd__tgt_rt_stop() - during nvmfd_tgt_stop(): the unbound runtime a
 *  port's ->remove_port moves its queues and its release work to (no CPU
 *  the stop would wait for is starved); NULL otherwise or if it could not
 *  be created (queues then stop where they are). */
struct nvmfd_rt *nvmfd__tgt_rt_stop(const struct nvmfd_tgt *tgt);

/*
 * Backend stepping (the core owns the queue's backend; the transport only
 * calls these from its io_work). The completion context comes from the
 * target's completion pool (per-queue ring, or the shared ring of @io_cpu).
 */

/**
 * nvmfd__tgt_qp_open_backend() - open the queue's completion context.
 * @io_cpu: the queue's CPU (selects the shared ring in shared mode).
 * @depth:  most backend ios in flight (the queue's command slots).
 * Return: 0, -ENOMEM, -errno from ring creation.
 * Context: any thread, before the queue's io_work first runs.
 */
int nvmfd__tgt_qp_open_backend(struct nvmfd_tgt_qp *qp, int io_cpu, unsigned int depth);

/**
 * nvmfd__tgt_qp_open_backend_src() - the same with the completion source
 * chosen for this queue (--exec auto: nvmfd_cq_open_src()).
 * Return: as above; -EINVAL for a shared ring the pool cannot give.
 */
int nvmfd__tgt_qp_open_backend_src(struct nvmfd_tgt_qp *qp, int io_cpu, unsigned int depth,
				   enum nvmfd_cq_src src);

/**
 * nvmfd__tgt_qp_open_backend_worker() - the same on the worker ring @rr of
 * the pool that runs the queue's io_work (--uring-ring worker:
 * nvmfd_cq_open_worker(); completions are announced through ops->kick).
 * Return: as above; -EINVAL for a NULL @rr.
 */
int nvmfd__tgt_qp_open_backend_worker(struct nvmfd_tgt_qp *qp, struct nvmfd_rt_ring *rr,
				      unsigned int depth);

/** nvmfd__tgt_cq_can_share() - the target's completion pool can give out
 *  shared rings (nvmfd_cq_pool_can_share()). */
bool nvmfd__tgt_cq_can_share(const struct nvmfd_tgt *tgt);

/** nvmfd__tgt_qp_close_backend() - close it (NULL context: no-op); nothing
 *  may be in flight (nvmfd__tgt_qp_inflight() == 0, asserted).
 *  Context: the transport's release path (any thread but a completion work). */
void nvmfd__tgt_qp_close_backend(struct nvmfd_tgt_qp *qp);

/**
 * nvmfd__tgt_qp_poll() - one backend step: submit what commands queued,
 * deliver backend completions (callbacks complete commands through
 * ops->queue_response) and completions posted by other threads (AERs).
 * @polling: the owner polls the backend (backend completion polling is
 *           on and it keeps re-queueing itself instead of watching the
 *           completion eventfd; the transport decides, from --backend-poll
 *           or --exec auto's polling): also reap a shared ring here, and
 *           count what was found as peeks rather than events.
 * Return: completions delivered. Context: queue owner.
 */
unsigned int nvmfd__tgt_qp_poll(struct nvmfd_tgt_qp *qp, bool polling);

/** nvmfd__tgt_qp_flush() - submit queued backend ios only. Return: number
 *  submitted or -errno. Context: queue owner. */
int nvmfd__tgt_qp_flush(struct nvmfd_tgt_qp *qp);

/** nvmfd__tgt_qp_inflight() - backend ios of this queue not yet delivered. */
unsigned int nvmfd__tgt_qp_inflight(const struct nvmfd_tgt_qp *qp);

/** nvmfd__tgt_qp_event_fd() - fd that becomes readable when this queue's
 *  completions can be reaped (watch it while event driven), or -1 when its
 *  completions are announced through ops->kick (shared rings). */
int nvmfd__tgt_qp_event_fd(const struct nvmfd_tgt_qp *qp);

/** nvmfd__tgt_qp_idle() - the owner is about to sleep: clear a stale
 *  completion signal (see nvmfd_cq_clear_event()). Context: queue owner. */
void nvmfd__tgt_qp_idle(struct nvmfd_tgt_qp *qp);

/** nvmfd__tgt_shared_rings_json() - the target's shared completion rings
 *  (one per io_cpu, used by the queues of every port) as a new JSON array
 *  (empty in per-queue mode), for a port's stats. NULL: out of memory. */
json_object *nvmfd__tgt_shared_rings_json(struct nvmfd_tgt *tgt);

/*
 * Transports. A port is transport-owned and opaque to the core.
 * Every op runs on the control thread unless said otherwise.
 */
struct nvmfd_tgt_port;

/**
 * struct nvmfd_tgt_xprt_type - one transport (nvmet's struct
 * nvmet_fabrics_ops in user space).
 * @name:   configuration name ("trtype" of a port); the first registered
 *          transport also serves ports that name none.
 * @trtype: the NVMe-oF transport type (discovery and error log entries).
 * @add_port:    bind/listen for @cfg (nothing accepted before start_port).
 *               Return: 0 or -errno (message logged, naming the port).
 * @start_port:  start accepting on the target's runtime (nvmfd__tgt_rt()).
 * @remove_port: stop accepting, shut every queue of the port down, wait
 *               until they are released, free the port.
 * @bound_trsvcid: the service id actually bound (e.g. the TCP port chosen
 *               for trsvcid "0"), 0 if none. Any thread.
 * @check_timeouts: connection-setup deadlines at @now_ns (CLOCK_MONOTONIC,
 *               ns); Return: queues newly marked expired. Housekeeping thread.
 * @port_stats:  the port's counters and queues as a new JSON object, or
 *               NULL on allocation failure. Any thread.
 * @disc_entry:  fill the transport-specific fields (trtype, adrfam, treq,
 *               tsas) of a discovery log entry for a port of this type.
 */
struct nvmfd_tgt_xprt_type {
	const char *name;
	uint8_t trtype;
	int (*add_port)(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *cfg,
			struct nvmfd_tgt_port **out);
	int (*start_port)(struct nvmfd_tgt_port *port);
	void (*remove_port)(struct nvmfd_tgt_port *port);
	uint16_t (*bound_trsvcid)(const struct nvmfd_tgt_port *port);
	unsigned int (*check_timeouts)(struct nvmfd_tgt_port *port, uint64_t now_ns);
	json_object *(*port_stats)(struct nvmfd_tgt_port *port);
	void (*disc_entry)(const struct nvmfd_cfg_port *cfg, struct nvmfd_disc_log_entry *e);
};

/**
 * nvmfd__tgt_xprt_register() - make a transport available; called by
 * NVMFD_TGT_XPRT_REGISTER before main(). At most NVMFD_TGT_MAX_XPRTS.
 * Return: 0, -EEXIST (same name), -ENOSPC.
 */
#define NVMFD_TGT_MAX_XPRTS 8
int nvmfd__tgt_xprt_register(const struct nvmfd_tgt_xprt_type *type);

/** nvmfd__tgt_xprt_find() - the transport called @name ("" or NULL: the
 *  first registered), or NULL. */
const struct nvmfd_tgt_xprt_type *nvmfd__tgt_xprt_find(const char *name);

/* Register @type at program start (the transport's library is linked
 * whole, so its constructor runs even though nothing refers to it). */
#define NVMFD_TGT_XPRT_REGISTER(type)                                       \
	__attribute__((constructor)) static void nvmfd__xprt_register_##type(void) \
	{                                                                   \
		(void)nvmfd__tgt_xprt_register(&(type));                    \
	}

#endif /* NVMFD_TARGET_XPRT_H */
