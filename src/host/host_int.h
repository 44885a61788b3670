/* SPDX-License-Identifier: MIT */
/*
 * host_int.h - private structures of the host library (src/host only).
 *
 * A qp is a TCP connection plus depth request slots. The slot index is the
 * command identifier (cid). Each slot owns the buffer for the one PDU it may
 * have queued for transmission at a time (CapsuleCmd or one H2CData chunk;
 * MAXR2T is 0, so a command has at most one R2T outstanding); the PDU waits
 * on the qp's transmit queue (src/net/txq.h) through the slot's element.
 */
#ifndef NVMFD_HOST_INT_H
#define NVMFD_HOST_INT_H

#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvmfd/host.h>
#include <nvmfd/pdu.h>

#include "net/txq.h"

#define HOST_ERRMSG_LEN 512
/* Fabrics commands (Connect carries 1024 bytes) always go in-capsule; the
 * target must accept that much on every queue (doc/protocol-notes.md §1.8). */
#define HOST_FABRICS_ICD_MAX 8192
#define HOST_RXBUF_LEN (64 * 1024)
#define HOST_CTL_TX_LEN 256
/* PDUs gathered into one sendmsg: a burst of up to 64 resubmitted capsules
 * (one iovec each) leaves in one call. */
#define HOST_TX_BATCH NVMFD_TXQ_BATCH_MAX

enum host_tx_kind {
	HOST_TX_CMD, /* CapsuleCmd, with in-capsule data if any */
	HOST_TX_H2C, /* one H2CData chunk of the current R2T window */
};

/* Request slot. Only the qp owner thread touches it. */
struct host_slot {
	bool busy; /* submitted, callback not yet run */
	bool write; /* data flows host to controller */
	bool rsp_pending; /* completion received while a PDU was still queued */
	bool r2t_active; /* an R2T window is being served */
	uint16_t ttag;
	uint8_t *buf;
	uint32_t len;
	uint32_t c2h_off; /* bytes received by C2HData so far */
	uint32_t h2c_off; /* next byte to send in the R2T window */
	uint32_t h2c_end; /* end of the R2T window */
	uint32_t h2c_chunk; /* data bytes in the queued H2CData */
	nvmfd_status_t status_override; /* e.g. DATA_XFER_ERROR after a digest error */
	struct nvmfd_host_cpl cpl; /* saved completion while rsp_pending */
	uint64_t deadline_ns;
	nvmfd_host_cb cb;
	void *arg;
	/* Queued PDU: tx.queued while it sits on qp->txq (or is being sent). */
	enum host_tx_kind tx_kind;
	struct nvmfd_tx_pdu tx;
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	uint8_t ddgst[NVMFD_TCP_DIGEST_LEN];
};

enum host_qp_state {
	HOST_QP_NEW, /* allocated, no socket */
	HOST_QP_IC_WAIT, /* ICReq sent, waiting for ICResp */
	HOST_QP_LIVE, /* ICResp accepted: capsules may flow */
	HOST_QP_FAILED, /* fatal error; every slot has been completed */
};

struct nvmfd_host_qp {
	struct nvmfd_host_ctrl *ctrl;
	uint16_t qid;
	int fd;
	enum host_qp_state state;
	int fail_err;
	uint32_t depth;
	struct host_slot *slots;
	uint16_t *free_stack;
	uint32_t nr_free;
	struct nvmfd_txq txq; /* slots' PDUs and the control PDU, FIFO */
	bool in_flush;
	bool in_poll; /* callbacks are running: submissions wait for the poll's flush */
	bool plugged; /* nvmfd_host_qp_plug(): submissions wait for unplug or a poll */
	bool in_poll_call; /* inside qp_poll(): the tx budget applies */
	uint8_t ctl_tx[HOST_CTL_TX_LEN]; /* ICReq / H2CTermReq */
	struct nvmfd_tx_pdu ctl; /* ctl_tx's element on txq */
	struct nvmfd_pdu_rx rx;
	struct nvmfd_pdu_rx_opts rx_opts;
	uint8_t *rxbuf;
	uint32_t rx_pos;
	uint32_t rx_end;
	int cur_c2h; /* slot receiving the current C2HData, -1 if none */
	uint8_t term_data[NVMFD_TCP_TERM_ERR_DATA_MAX];
	bool hdgst;
	bool ddgst;
	uint32_t maxh2cdata;
	uint32_t icd_max; /* in-capsule limit for non-fabrics writes */
	uint32_t max_io;
	uint64_t timeout_ns;
	uint64_t next_tmo_check_ns;
	uint32_t completed_in_poll;
	uint32_t rx_budget; /* bytes per poll call, 0 = unlimited */
	uint32_t tx_budget;
	uint64_t tx_in_poll; /* bytes sent since the current poll started */
	struct nvmfd_host_qp_stats stats; /* owner thread only */
	/* TLS (tls.c): the connection or NULL; the transmit callbacks (plain,
	 * or sending through it) */
	struct nvmfd_tls *tls;
	const struct nvmfd_txq_ops *txops;
	/* DH-HMAC-CHAP (auth.c): the queue authenticated at connect; the
	 * transactions run so far (the next T_ID is qid + auth_tid); slots
	 * that submissions must leave free (a re-authentication's command) */
	bool dhchap;
	uint16_t auth_tid;
	uint32_t reserve;
	char errmsg[HOST_ERRMSG_LEN];
};

struct nvmfd_host_ctrl {
	struct nvmfd_host_ctrl_opts opts;
	struct nvmfd_host_trid trid;
	bool connected;
	bool enabled; /* CC.EN written */
	struct nvmfd_host_qp *admin;
	/* admin_lock guards the admin qp (user commands, bring-up and
	 * keep-alive); a synchronous admin command releases it while it
	 * waits (nvmfd__host_admin_wait_locked()): one thread at a time polls
	 * the admin socket (admin_polling), woken early through admin_efd
	 * (an eventfd: a command submitted meanwhile, keep-alive stop), and
	 * the others sleep on admin_cond until it has reaped. */
	pthread_mutex_t admin_lock;
	pthread_cond_t admin_cond; /* CLOCK_MONOTONIC */
	bool admin_polling;
	int admin_efd;
	bool ready; /* CSTS.RDY seen (Keep Alive allowed); admin_lock */
	bool reauth_running; /* nvmfd_host_ctrl_reauth() in progress; admin_lock */
	struct nvmfd_host_qp **qps;
	uint32_t nr_qps;
	struct nvmfd_host_ctrl_info info;
	/* info's DH-HMAC-CHAP fields: I/O queues connect in parallel */
	pthread_mutex_t info_lock;
	struct nvmfd_id_ctrl *id;
	struct nvmfd_host_ns *ns;
	uint32_t nr_ns;
	/* Keep-alive thread (ctrl.c ka_main), from the admin Connect on: one
	 * Keep Alive (before CSTS.RDY a Property Get) every KATO/2 counted
	 * from the previous one's send, up to KA_MAX_INFLIGHT outstanding;
	 * stopped by ka_stop (admin_lock) with admin_cond and admin_efd. */
	pthread_t ka_thread;
	bool ka_running;
	bool ka_stop;
	uint32_t ka_inflight; /* Keep Alives submitted, not completed; admin_lock */
	uint64_t ka_sent; /* Keep Alives submitted (statistics); admin_lock */
	struct nvmfd_tls_ctx *tls_ctx; /* opts.tls: the client context */
	char errmsg[HOST_ERRMSG_LEN];
};

/* qp.c */
uint64_t nvmfd__host_now_ns(void);
int nvmfd__host_qp_alloc(struct nvmfd_host_ctrl *ctrl, uint16_t qid, uint32_t depth,
			 struct nvmfd_host_qp **out);
void nvmfd__host_qp_free(struct nvmfd_host_qp *qp);
int nvmfd__host_qp_connect(struct nvmfd_host_qp *qp, const struct nvmfd_host_trid *trid,
			   uint16_t cntlid, uint16_t sqsize, uint8_t cattr, uint32_t kato,
			   struct nvmfd_host_cpl *cpl);
int nvmfd__host_qp_exec(struct nvmfd_host_qp *qp, const struct nvmfd_sqe *sqe, void *buf,
			uint32_t len, bool write, struct nvmfd_host_cpl *cpl);
int nvmfd__host_qp_reserve_slot(struct nvmfd_host_qp *qp);
bool nvmfd__host_qp_pollfd(const struct nvmfd_host_qp *qp, struct pollfd *pfd);
void nvmfd__host_qp_seterr(struct nvmfd_host_qp *qp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ctrl.c */
/**
 * nvmfd__host_admin_wait_locked() - wait until *@done (set by a completion
 * callback) on the admin queue, with admin_lock held on entry and return
 * and released while asleep, so that the keep-alive thread and other
 * callers may submit meanwhile.
 * @ctrl:     the controller.
 * @done:     the flag to wait for.
 * @deadline: CLOCK_MONOTONIC ns.
 * Return: 0 once *@done; -ETIMEDOUT at @deadline (the qp is not failed);
 *         the admin qp's error when it failed first.
 * Context: admin_lock held.
 */
int nvmfd__host_admin_wait_locked(struct nvmfd_host_ctrl *ctrl, const bool *done,
				  uint64_t deadline);

/**
 * nvmfd__host_admin_reserve_slot_locked() - nvmfd__host_qp_reserve_slot()
 * for the admin queue: keep one slot for a re-authentication's commands,
 * first waiting until one is free as a command waits for its completion
 * (admin_lock released while asleep, one thread polls), so keep-alive and
 * the other callers go on; they wait for a slot while the kept one is the
 * last (admin_slot_wait_locked()). Undo with
 * nvmfd__host_admin_unreserve_locked().
 * Return: 0; -ETIMEDOUT when none became free within the qp timeout (the
 *         qp stays live); the admin qp's error. Nothing kept on failure.
 * Context: admin_lock held.
 */
int nvmfd__host_admin_reserve_slot_locked(struct nvmfd_host_ctrl *ctrl);

/* Give the kept slot back and wake the commands waiting for it.
 * Context: admin_lock held. */
void nvmfd__host_admin_unreserve_locked(struct nvmfd_host_ctrl *ctrl);

/* tls.c */
/**
 * nvmfd__host_qp_tls() - the TLS handshake on a connected qp (opts.tls):
 * the identity and TLS PSK from opts.tls_psk, the host NQN and @subnqn.
 * Return: 0; -EACCES (the PSK was refused: message says so); -ETIMEDOUT
 * (not done by @deadline, ns); -ECONNRESET, -EPROTO, -EIO, -ENOMEM.
 * Context: qp owner; blocks in poll() until @deadline at most.
 */
int nvmfd__host_qp_tls(struct nvmfd_host_qp *qp, const char *subnqn, uint64_t deadline);

#endif /* NVMFD_HOST_INT_H */
