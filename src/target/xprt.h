/* SPDX-License-Identifier: MIT */
/*
 * xprt.h - the seam between the transport-independent target core
 * (the .c files of src/target) and a transport (src/target/tcp/tcp.c).
 *
 * A transport queue (one TCP connection) embeds a struct nvmfd_tgt_qp and a
 * preallocated array of struct nvmfd_tgt_req (one per command slot). Flow of
 * one command, all on the queue owner's thread (its io_work):
 *
 *   transport: CapsuleCmd received -> take a free req, copy the SQE
 *   core:      nvmfd__tgt_req_init(req) decides direction and length
 *              (req->xfer, req->data_len) or returns an error status
 *   transport: error -> nvmfd__tgt_req_complete(req, status)
 *              H2C -> take in-capsule data or run R2T/H2CData into req->data
 *              then nvmfd__tgt_req_execute(req)
 *   core:      executes (maybe asynchronously on qp->ring: the core only
 *              queues backend ios, the transport calls nvmfd_bk_ring_flush()
 *              after each receive step and reaps the ring), then calls
 *              nvmfd__tgt_req_complete(req, status), which fills req->cqe
 *              and calls qp->ops->queue_response(req)
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

#include <nvmfd/spec.h>

#include "cfg/cfg.h"
#include "internal/backend.h"

struct nvmfd_tgt;
struct nvmfd_tgt_ctrl;
struct nvmfd_tgt_qp;
struct nvmfd_tgt_req;

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
	struct nvmfd_bk_ring *ring; /* backend completions reaped by the transport */
	/* Completions posted from other threads (AER), drained by the owner
	 * through nvmfd__tgt_qp_drain_posted(). Private to the core. */
	void *posted;
	uint64_t last_cmd_ns; /* for traffic-based keep-alive */
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
};

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

/*
 * Transport entry points the core calls (implemented in tcp/tcp.c).
 * nvmfd__tcp_port_create() binds and listens (nothing is accepted until
 * nvmfd__tcp_port_start()); destroy stops accepting, shuts every queue of
 * the port down and waits for them to finish.
 */
struct nvmfd_tcp_port;
int nvmfd__tcp_port_create(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *cfg,
			   struct nvmfd_tcp_port **out);
int nvmfd__tcp_port_start(struct nvmfd_tcp_port *port);
uint16_t nvmfd__tcp_port_bound_port(const struct nvmfd_tcp_port *port);
void nvmfd__tcp_port_destroy(struct nvmfd_tcp_port **port);
int nvmfd__tcp_port_stats_json(struct nvmfd_tcp_port *port, FILE *out);
/* Setup deadlines (cfg icreq_timeout_ms / connect_timeout_ms); called by
 * the housekeeping thread; see tcp.c. */
unsigned int nvmfd__tcp_port_check_timeouts(struct nvmfd_tcp_port *port, uint64_t now_ns);

#endif /* NVMFD_TARGET_XPRT_H */
