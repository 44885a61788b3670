// SPDX-License-Identifier: MIT
/*
 * tcp.c - the NVMe/TCP transport of the target (one TCP connection = one
 * NVMe queue), plugged into the core through target/xprt.h.
 *
 * Accepting: a listener work item on the execution runtime watches the
 * listen socket (one-shot readiness, like any queue) and accepts up to
 * TCP_ACCEPT_BATCH connections per run, as SPDK's acceptor poller does;
 * no extra thread. Queue teardown ends on a per-port release work item,
 * because a queue's io_work cannot cancel and free itself (the nvmet
 * release_work pattern).
 *
 * Per queue, everything is allocated at accept time (STYLE §6.5): the
 * command slots (2 x max_queue_size + 1, as nvmet's nr_cmds = 2 x sqsize,
 * plus one for the Connect that arrives before the queue size is known),
 * one header buffer per slot, a receive bounce buffer, a backend completion
 * ring, and one data region of slots x slot_size bytes mapped with
 * MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE. The region is only virtual
 * address space until a command touches its slot: a 1 MiB MDTS and 257
 * slots reserve 257 MiB of addresses but no memory, and a queue that only
 * ever does 4 KiB I/O faults in 4 KiB per slot used. Nothing is allocated
 * on the data path.
 *
 * Everything a queue does runs in its io_work on its io_cpu (one owner at a
 * time, STYLE §6.5): receive and parse PDUs, run commands, reap backend
 * completions, send PDUs. Other threads only set the shutdown flag or kick
 * the work item. One pass alternates rx (cfg exec.rx_budget_*), backend
 * reaping and tx (exec.tx_budget_*) while something progresses and the
 * pass deadline (exec.io_work_deadline_us) has not passed, then re-queues
 * itself (work left, or idle polling: nvmfd_idle_poll) or re-arms
 * readiness of the socket (EPOLLIN, plus EPOLLOUT when a send would block)
 * and of the backend ring's eventfd.
 *
 * Backend completions (DESIGN "completion pools"): by default each queue
 * owns a ring and watches its eventfd. --cq-pool shared gives every queue
 * the ring of its io_cpu instead (struct tcp_cq): one eventfd per CPU,
 * watched by that ring's completion work, which routes each completion to
 * its queue's MPSC list and kicks the queue. --backend-poll: while a queue
 * keeps re-queueing itself (idle polling or work left) it does not watch
 * its ring's eventfd and peeks the CQ every pass (IOPOLL rings where the
 * device allows); counted as completion_peeks vs completion_events.
 * --wq-per-ctrl: queues move to their controller's own runtime after
 * Connect (struct tcp_crt).
 *
 * Transmit: slots with something to send form a FIFO; one sendmsg gathers
 * the current PDU of up to TCP_TX_BATCH slots (header, data and data digest
 * iovecs) with MSG_MORE while more is queued. A PDU cut short by a full
 * socket is finished alone before any other byte is sent.
 *
 * Setup deadlines: a connection must complete ICReq within icreq_timeout_ms
 * and a successful Connect within connect_timeout_ms of accept (cfg,
 * default 10 s each: the Linux host waits 10 s for ICResp; KATO only
 * starts after Connect), or it is closed: an idle socket would otherwise
 * hold its fd, ring and memory for ever. The target's housekeeping thread
 * calls nvmfd__tcp_port_check_timeouts(), which only marks an expired
 * queue (q->expired) and kicks it; the queue's own io_work confirms the
 * stage against its state, logs and tears down.
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
#include <poll.h>
#include <pthread.h>
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
#include "internal/rt.h"
#include "net/sock.h"
#include "target/core.h"
#include "target/xprt.h"

#define TCP_COMP "tcp"
#define TCP_ACCEPT_BATCH 16 /* connections per accept run (SPDK: 16) */
#define TCP_RX_BOUNCE 16384 /* receive buffer for headers and small data */
#define TCP_RX_DIRECT_MIN 1024 /* larger data goes straight into the slot */
#define TCP_FABRICS_ICD 8192 /* NVME-TCP-NOTES §1.8: Linux NVME_TCP_ADMIN_CCSZ */
#define TCP_MAX_SLOTS 0xfffe /* TTAG is a slot index; 0xffff stays unused */
#define TCP_DEF_QUEUE_SIZE 128
#define TCP_DEF_DEADLINE_US 1000
#define TCP_TX_BATCH 16 /* PDUs gathered into one sendmsg */
/* A shared completion ring holds the ios of TCP_CQ_QUEUES full queues
 * (then the core sees -EBUSY: it reaps and retries once, else fails the
 * command), at most io_uring's 32768 entries. */
#define TCP_CQ_QUEUES 16
#define TCP_CQ_DEPTH_MAX 32768u
#define TCP_CQ_REAP_MAX 1024 /* completions per completion-work run */
#define TCP_TERM_BUF (sizeof(struct nvmfd_tcp_term) + NVMFD_TCP_TERM_ERR_DATA_MAX)

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Command slot lifecycle (STYLE §6.6). */
enum tcp_req_state {
	TCP_REQ_FREE, /* on the free list */
	TCP_REQ_RX_ICD, /* capsule header seen, in-capsule data arriving */
	TCP_REQ_R2T, /* queued on tx: R2T to send */
	TCP_REQ_H2C, /* R2T sent: H2CData PDUs arriving */
	TCP_REQ_EXEC, /* owned by the core (executing, maybe on the backend) */
	TCP_REQ_TX, /* C2HData and/or CapsuleResp queued or being sent */
	TCP_REQ__MAX,
};

/* Which PDU of a slot is on the wire. */
enum tcp_tx_phase {
	TCP_TX_R2T,
	TCP_TX_C2H,
	TCP_TX_RSP,
};

struct tcp_req {
	struct nvmfd_tgt_req req;
	enum tcp_req_state state;
	enum tcp_tx_phase phase;
	struct tcp_req *tx_next;
	uint32_t next_free; /* free-list link (slot index) */
	uint32_t icd_len; /* in-capsule data bytes of the capsule */
	nvmfd_status_t pre_status; /* transport error found before data was consumed */
	uint32_t h2c_rcvd; /* bytes received through H2CData */
	uint32_t c2h_off; /* offset of the next C2HData chunk */
	bool c2h_success; /* last C2HData carries SUCCESS, no CapsuleResp */
	/* the PDU being sent */
	bool pdu_built;
	bool pdu_last; /* after this PDU the slot leaves the tx list */
	uint32_t pdu_hlen;
	uint32_t pdu_dlen;
	uint32_t pdu_total;
	uint32_t pdu_sent;
	const uint8_t *pdu_data;
	uint8_t hdr[sizeof(struct nvmfd_tcp_data) + NVMFD_TCP_DIGEST_LEN];
	uint8_t ddgst[NVMFD_TCP_DIGEST_LEN];
};

enum tcp_queue_state {
	TCP_Q_IC_WAIT, /* waiting for ICReq */
	TCP_Q_LIVE, /* ICResp sent (or queued): capsules flow */
	TCP_Q_CLOSING, /* fatal error or shutdown: tearing down */
	TCP_Q_DEAD, /* torn down, waiting for the release work */
};

/* Connection setup progress, for the ICReq/Connect deadlines. */
enum tcp_stage {
	TCP_STAGE_ACCEPTED, /* waiting for ICReq; as q->expired: no ICReq in time */
	TCP_STAGE_IC_DONE, /* ICReq handled; as q->expired: no Connect in time */
	TCP_STAGE_CONNECTED, /* Connect succeeded: no setup deadline any more */
};

/* Per-queue counters (DESIGN.md "Numbers every mode must expose"): written
 * by the owner with relaxed stores, read relaxed by the stats dumper. */
struct tcp_qstats {
	uint64_t pdus_rx;
	uint64_t bytes_rx;
	uint64_t pdus_tx;
	uint64_t bytes_tx;
	uint64_t cmds;
	uint64_t completions;
	uint64_t r2ts;
	uint64_t passes;
	uint64_t rx_budget_exhausted;
	uint64_t tx_budget_exhausted;
	uint64_t deadline_exhausted;
	uint64_t requeues;
	uint64_t idle_polls;
	uint64_t rearms;
	uint64_t eagain_sends;
	uint64_t cq_events; /* reaps that found completions, ring fd armed (or routed) */
	uint64_t cq_completions;
	uint64_t cq_peeks; /* --backend-poll: reaps that found completions while polling */
	uint64_t kicks;
	uint64_t ddgst_errors;
	uint64_t wakeups; /* passes not started by our own re-queue */
};

#define TCP_STAT_ADD(q, f, n) \
	__atomic_store_n(&(q)->st.f, (q)->st.f + (uint64_t)(n), __ATOMIC_RELAXED)
#define TCP_STAT_LOAD(q, f) __atomic_load_n(&(q)->st.f, __ATOMIC_RELAXED)

struct nvmfd_tcp_port;
struct tcp_cq;
struct tcp_crt;

struct tcp_queue {
	struct nvmfd_tgt_qp qp;
	struct nvmfd_tcp_port *port;
	struct tcp_queue *prev, *next; /* port->queues, port->lock */
	struct tcp_queue *dead_next; /* port->dead, port->lock */
	unsigned int id; /* per-port sequence number, for logs and stats */
	int fd;
	int io_cpu;
	bool placed;
	struct nvmfd_work io_work;
	int shutdown; /* atomic: any thread sets it, then queues io_work */
	uint64_t accept_ns; /* nvmfd_now_ns() at accept; set before listing */
	int stage; /* atomic: TCP_STAGE_*, owner writes, timeout checker reads */
	int expired; /* atomic: the TCP_STAGE_* deadline missed, checker sets, owner takes */
	enum tcp_queue_state state;
	bool hdgst;
	bool ddgst;
	uint32_t maxr2t;
	uint32_t maxh2cdata; /* what ICResp advertised */
	uint32_t c2h_chunk; /* largest C2HData we send */
	struct nvmfd_pdu_rx rx;
	struct tcp_req *rx_req; /* slot the current PDU's data belongs to */
	bool rx_hdr_seen; /* NVMFD_PDU_EV_HDR was handled for the current PDU */
	uint8_t *bounce;
	uint32_t bounce_off;
	uint32_t bounce_len;
	struct tcp_req *reqs;
	uint32_t nr_reqs;
	uint32_t free_head; /* UINT32_MAX: empty */
	uint32_t nr_free;
	uint32_t nr_state[TCP_REQ__MAX]; /* owner writes, relaxed; stats read */
	uint8_t *data;
	size_t data_size;
	uint32_t slot_size;
	struct nvmfd_bk_ring *ring; /* own ring, or cq->ring when shared */
	int ring_fd; /* own ring's eventfd; -1 when shared (the cq watches it) */
	bool ring_watched; /* ring_fd armed since the last re-arm (not polling) */
	struct tcp_cq *cq; /* --cq-pool shared: the ring of our io_cpu, or NULL */
	struct nvmfd_bk_io *cq_done; /* atomic: ios the cq routed to us (LIFO) */
	uint32_t bk_inflight; /* shared: our ios on cq->ring not yet delivered */
	struct tcp_crt *crt; /* --wq-per-ctrl: the controller's runtime, or NULL */
	bool migrated; /* --wq-per-ctrl: migration requested (once) */
	struct tcp_queue *mig_next; /* port->migrate, port->lock */
	/* Serializes kicks from other threads with re-initialising io_work on
	 * another runtime (migration); a leaf lock. */
	pthread_mutex_t wlock;
	struct tcp_req *tx_head, *tx_tail;
	struct tcp_req *tx_partial; /* slot whose PDU is partly on the wire */
	uint8_t ctrl_pdu[TCP_TERM_BUF]; /* ICResp or C2HTermReq */
	uint32_t ctrl_len;
	uint32_t ctrl_sent;
	bool term_pending; /* ctrl_pdu holds a C2HTermReq */
	bool tx_blocked; /* last send returned -EAGAIN */
	bool requeued; /* the next pass comes from our own re-queue */
	struct nvmfd_idle_poll idle;
	struct nvmfd_budget rx_budget;
	struct nvmfd_budget tx_budget;
	struct tcp_qstats st;
};

struct nvmfd_tcp_port {
	struct nvmfd_tgt *tgt;
	const struct nvmfd_cfg_port *cfg;
	const struct nvmfd_cfg *gcfg;
	struct nvmfd_rt *rt;
	int lfd;
	uint16_t bound;
	bool started;
	int stopping; /* atomic */
	unsigned int rr; /* atomic: placement counter (qid unknown at accept) */
	struct nvmfd_work accept_work;
	struct nvmfd_work release_work;
	pthread_mutex_t lock; /* protects queues, nr_queues, dead, next_id */
	pthread_cond_t cond; /* nr_queues dropped */
	struct tcp_queue *queues;
	unsigned int nr_queues;
	struct tcp_queue *dead;
	unsigned int next_id;
	uint64_t accepted; /* atomic */
	uint64_t accept_errors; /* atomic */
	struct tcp_cq *cqs; /* shared completion rings, port->lock */
	unsigned int next_cq_id; /* port->lock */
	struct tcp_crt *crts; /* per-controller runtimes, port->lock */
	struct tcp_queue *migrate; /* queues to move to their controller's runtime */
	unsigned int nr_rt_dying; /* controller runtimes being destroyed, port->lock */
	struct tcp_crt *rt_grave; /* runtimes to destroy at port destroy, port->lock */
};

/*
 * --cq-pool shared (the nvmet-rdma CQ pool with IB_POLL_WORKQUEUE, in user
 * space): one backend ring per io_cpu, handed out by the queue's io_cpu and
 * shared by every queue of the port placed there, with ONE completion event
 * source: the ring's eventfd, watched by the ring's own completion work on
 * that CPU. The work reaps; the ring routes each completion (instead of
 * calling io->cb) onto its queue's MPSC list and kicks the queue's io_work,
 * which runs the callbacks: a queue's state is only ever touched by its own
 * io_work. Every use of the ring (submit by the core, flush, reap, routed
 * callbacks that may submit again) holds @lock: several queues submit to one
 * ring. In bound mode the queues and the completion work of one CPU run on
 * the same single-item pool, so the lock is uncontended; unbound pools may
 * contend on it. Reference counted by the queues; the last one destroys it.
 */
struct tcp_cq {
	struct nvmfd_tcp_port *port;
	struct tcp_cq *next; /* port->cqs, port->lock */
	unsigned int id;
	int cpu;
	unsigned int users; /* port->lock */
	struct nvmfd_bk_ring *ring;
	int efd;
	pthread_mutex_t lock; /* every use of @ring */
	struct nvmfd_work work; /* completion work on @cpu */
	uint64_t events; /* atomic: completion-work runs (eventfd wake-ups) */
	uint64_t empty_events; /* atomic: runs that found nothing */
	uint64_t completions; /* atomic: completions reaped by the work */
	uint64_t peek_completions; /* atomic: reaped by polling queues (--backend-poll) */
};

/*
 * --wq-per-ctrl: the pool set of one controller, created with the global
 * exec options on its first queue's migration and reference counted by the
 * queues running on it. Queues are accepted on the global runtime (the
 * controller is unknown before Connect); after a successful Connect a pass
 * ends without re-arming and hands the queue to the port's release work,
 * which cancels the old item, re-inits it on the controller's runtime with
 * the same io_cpu and queues it (its first pass re-arms readiness). The
 * runtime is destroyed by a short-lived thread (never one of its own
 * workers, nor any runtime worker: nvmfd_rt_destroy() forbids it).
 */
struct tcp_crt {
	struct tcp_crt *next; /* port->crts or port->rt_grave, port->lock */
	const struct nvmfd_tgt_ctrl *ctrl; /* identity only */
	uint16_t cntlid;
	unsigned int users; /* port->lock */
	struct nvmfd_rt *rt;
};

static void tcp_queue_response(struct nvmfd_tgt_req *req);
static void tcp_shutdown_queue(struct nvmfd_tgt_qp *qp);
static void tcp_kick(struct nvmfd_tgt_qp *qp);

static const struct nvmfd_tgt_xprt_ops tcp_xprt_ops = {
	.queue_response = tcp_queue_response,
	.shutdown_queue = tcp_shutdown_queue,
	.kick = tcp_kick,
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

/* Make @q's io_work run soon, from any thread (see tcp_queue.wlock). */
static void tcp_queue_kick(struct tcp_queue *q)
{
	pthread_mutex_lock(&q->wlock);
	nvmfd_rt_queue_work(&q->io_work);
	pthread_mutex_unlock(&q->wlock);
}

/* ------------------------------------------------------------------ */
/* Shared completion rings (--cq-pool shared)                          */
/* ------------------------------------------------------------------ */

static uint64_t tcp_cq_submitted(struct tcp_cq *cq)
{
	struct nvmfd_bk_ring_stats st;

	nvmfd_bk_ring_get_stats(cq->ring, &st);
	return st.submitted;
}

/* Take the ring lock before anything that may submit to it on @q's
 * behalf. Return: the ring's submit count, for tcp_cq_unlock(). */
static uint64_t tcp_cq_lock(struct tcp_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	return tcp_cq_submitted(cq);
}

/* Only @q submitted while the lock was held: what the count grew by are
 * @q's ios (teardown waits for them). */
static void tcp_cq_unlock(struct tcp_queue *q, uint64_t before)
{
	q->bk_inflight += (uint32_t)(tcp_cq_submitted(q->cq) - before);
	pthread_mutex_unlock(&q->cq->lock);
}

/*
 * The ring's router (nvmfd_bk_ring_set_route), run by whoever reaps, under
 * cq->lock: push the io on its queue's MPSC list; the push that finds the
 * list empty kicks the queue (later pushers rely on that kick: the owner
 * takes the whole list at once).
 */
static void tcp_cq_route(void *arg, struct nvmfd_bk_io *io, int res)
{
	struct nvmfd_tgt_req *req = container_of(io, struct nvmfd_tgt_req, bk_io);
	struct tcp_queue *q = tcp_q(req->qp);
	struct nvmfd_bk_io *head = __atomic_load_n(&q->cq_done, __ATOMIC_RELAXED);

	(void)arg;
	io->res = res;
	do {
		io->next = head;
	} while (!__atomic_compare_exchange_n(&q->cq_done, &head, io, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	if (!head)
		tcp_queue_kick(q);
}

/* The completion work of a shared ring: reap on its CPU, re-arm. */
static void tcp_cq_work(struct nvmfd_work *w)
{
	struct tcp_cq *cq = container_of(w, struct tcp_cq, work);
	int n, ret;

	pthread_mutex_lock(&cq->lock);
	n = nvmfd_bk_ring_reap(cq->ring, TCP_CQ_REAP_MAX);
	pthread_mutex_unlock(&cq->lock);
	__atomic_add_fetch(&cq->events, 1, __ATOMIC_RELAXED);
	if (n > 0)
		__atomic_add_fetch(&cq->completions, (uint64_t)n, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&cq->empty_events, 1, __ATOMIC_RELAXED);
	ret = nvmfd_rt_watch_fd(&cq->work, cq->efd, EPOLLIN);
	if (ret && ret != -ECANCELED)
		NVMFD_ERR_RATELIMIT(TCP_COMP, "shared ring %u cpu %d: cannot watch: %s", cq->id,
				    cq->cpu, strerror(-ret));
}

static void tcp_cq_free(struct tcp_cq *cq)
{
	nvmfd_bk_ring_destroy(&cq->ring);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
}

/*
 * The shared ring of @cpu: take a reference on it, or create it (with its
 * completion work on the port's runtime, io_cpu @cpu) deep enough for
 * TCP_CQ_QUEUES queues of @nr_reqs slots.
 * Return: 0, -ENOMEM, -errno from ring creation or nvmfd_rt_watch_fd().
 * Context: any thread (accept work); takes port->lock.
 */
static int tcp_cq_get(struct nvmfd_tcp_port *port, int cpu, uint32_t nr_reqs,
		      struct tcp_cq **out)
{
	const struct nvmfd_cfg_exec *ex = &port->gcfg->exec;
	struct tcp_cq *cq;
	int ret;

	pthread_mutex_lock(&port->lock);
	for (cq = port->cqs; cq; cq = cq->next) {
		if (cq->cpu == cpu) {
			cq->users++;
			pthread_mutex_unlock(&port->lock);
			*out = cq;
			return 0;
		}
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	ret = -pthread_mutex_init(&cq->lock, NULL);
	if (ret)
		goto out_free;
	ret = nvmfd_bk_ring_create(tcp_min_u32(TCP_CQ_QUEUES * nr_reqs, TCP_CQ_DEPTH_MAX),
				   ex->backend_poll, &cq->ring);
	if (ret)
		goto out_destroy_lock;
	cq->port = port;
	cq->cpu = cpu;
	cq->users = 1;
	cq->efd = nvmfd_bk_ring_event_fd(cq->ring);
	nvmfd_bk_ring_set_route(cq->ring, tcp_cq_route, cq);
	nvmfd_work_init(&cq->work, port->rt, tcp_cq_work, cpu);
	ret = nvmfd_rt_watch_fd(&cq->work, cq->efd, EPOLLIN);
	if (ret)
		goto out_destroy_ring;
	cq->id = port->next_cq_id++;
	cq->next = port->cqs;
	port->cqs = cq;
	pthread_mutex_unlock(&port->lock);
	NVMFD_DBG(TCP_COMP, "port %u: shared ring %u for cpu %d", port->cfg->portid, cq->id, cpu);
	*out = cq;
	return 0;

out_destroy_ring:
	nvmfd_rt_work_cancel_sync(&cq->work);
	nvmfd_rt_unwatch_fd(&cq->work, cq->efd);
	nvmfd_bk_ring_destroy(&cq->ring);
out_destroy_lock:
	pthread_mutex_destroy(&cq->lock);
out_free:
	free(cq);
out_unlock:
	pthread_mutex_unlock(&port->lock);
	return ret;
}

/* Drop a reference; the last one stops the completion work and destroys
 * the ring. Context: not cq->work itself (release or accept work). */
static void tcp_cq_put(struct nvmfd_tcp_port *port, struct tcp_cq *cq)
{
	struct tcp_cq **pp;
	bool last;

	pthread_mutex_lock(&port->lock);
	last = --cq->users == 0;
	if (last) {
		for (pp = &port->cqs; *pp != cq; pp = &(*pp)->next)
			;
		*pp = cq->next;
	}
	pthread_mutex_unlock(&port->lock);
	if (!last)
		return;
	nvmfd_rt_work_cancel_sync(&cq->work);
	nvmfd_rt_unwatch_fd(&cq->work, cq->efd);
	tcp_cq_free(cq);
}

/*
 * Run the callbacks of the ios the ring routed to @q, oldest first (the
 * list is LIFO), under the ring lock (a callback may submit again).
 * Return: completions delivered.
 */
static unsigned int tcp_cq_drain(struct tcp_queue *q)
{
	struct nvmfd_bk_io *l = __atomic_exchange_n(&q->cq_done, NULL, __ATOMIC_ACQUIRE);
	struct nvmfd_bk_io *fifo = NULL, *io;
	unsigned int n = 0;
	uint64_t before;

	if (!l)
		return 0;
	while (l) {
		io = l;
		l = io->next;
		io->next = fifo;
		fifo = io;
	}
	before = tcp_cq_lock(q->cq);
	while (fifo) {
		io = fifo;
		fifo = io->next;
		io->next = NULL;
		q->bk_inflight--;
		n++;
		io->cb(io, io->res);
	}
	tcp_cq_unlock(q, before);
	return n;
}

/* Submit what the core queued on the ring this step. */
static void tcp_ring_flush(struct tcp_queue *q)
{
	if (!q->cq) {
		nvmfd_bk_ring_flush(q->ring);
		return;
	}
	pthread_mutex_lock(&q->cq->lock);
	nvmfd_bk_ring_flush(q->ring);
	pthread_mutex_unlock(&q->cq->lock);
}

/* ------------------------------------------------------------------ */
/* Command slots                                                       */
/* ------------------------------------------------------------------ */

static const char *const tcp_req_state_names[TCP_REQ__MAX] = {
	[TCP_REQ_FREE] = "free",   [TCP_REQ_RX_ICD] = "rx_icd", [TCP_REQ_R2T] = "r2t",
	[TCP_REQ_H2C] = "h2c",     [TCP_REQ_EXEC] = "exec",     [TCP_REQ_TX] = "tx",
};

/* The one place a slot changes state (STYLE §6.6): per-state counts, read
 * relaxed by the stats dumper, show where a queue's slots are. */
static void tcp_req_set_state(struct tcp_queue *q, struct tcp_req *r, enum tcp_req_state st)
{
	assert(st < TCP_REQ__MAX && r->state < TCP_REQ__MAX);
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
	q->free_head = r->next_free;
	q->nr_free--;
	r->tx_next = NULL;
	r->icd_len = 0;
	r->pre_status = 0;
	r->h2c_rcvd = 0;
	r->c2h_off = 0;
	r->c2h_success = false;
	r->pdu_built = false;
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
	tcp_req_set_state(q, r, TCP_REQ_FREE);
	r->next_free = q->free_head;
	q->free_head = r->req.slot;
	q->nr_free++;
}

static void tcp_tx_push(struct tcp_queue *q, struct tcp_req *r)
{
	r->tx_next = NULL;
	r->pdu_built = false;
	if (q->tx_tail)
		q->tx_tail->tx_next = r;
	else
		q->tx_head = r;
	q->tx_tail = r;
}

/* Unlink @r (whose predecessor on the tx list is @prev, NULL at the head). */
static void tcp_tx_unlink(struct tcp_queue *q, struct tcp_req *prev, struct tcp_req *r)
{
	if (prev)
		prev->tx_next = r->tx_next;
	else
		q->tx_head = r->tx_next;
	if (q->tx_tail == r)
		q->tx_tail = prev;
	r->tx_next = NULL;
}

/* ------------------------------------------------------------------ */
/* Fatal errors                                                        */
/* ------------------------------------------------------------------ */

static int tcp_tx_ctrl(struct tcp_queue *q, bool *progress);

/*
 * Prepare a C2HTermReq (NVMe/TCP 1.0 §3.6.2.9) echoing the offending header
 * and mark the queue for teardown. Logged once per connection, at WARN.
 * Return: -EPROTO, for the caller to propagate.
 */
static int tcp_fatal(struct tcp_queue *q, uint16_t fes, uint32_t fei, const void *hdr,
		     size_t hdr_len, const char *rule)
{
	if (q->state == TCP_Q_CLOSING)
		return -EPROTO;
	NVMFD_WARN(TCP_COMP, "queue %u qid %u peer %s: %s (FES 0x%02x FEI %u), closing", q->id,
		   q->qp.qid, q->qp.peer_addr, rule, fes, fei);
	q->state = TCP_Q_CLOSING;
	if (!fes)
		return -EPROTO;
	if (q->ctrl_len) {
		bool progress;

		/* An ICResp still queued goes first; if it cannot, no TermReq
		 * (it must not overwrite a half-sent PDU). */
		if (tcp_tx_ctrl(q, &progress))
			return -EPROTO;
	}
	if (hdr_len > NVMFD_TCP_TERM_ERR_DATA_MAX)
		hdr_len = NVMFD_TCP_TERM_ERR_DATA_MAX;
	q->ctrl_len = (uint32_t)nvmfd_pdu_build_term(q->ctrl_pdu, sizeof(q->ctrl_pdu),
						     NVMFD_TCP_C2H_TERM, fes, fei, hdr, hdr_len);
	q->ctrl_sent = 0;
	q->term_pending = q->ctrl_len > 0;
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
	return tcp_fatal(q, e->fes, e->fei, e->hdr, e->hdr_len, nvmfd_pdu_err_str(e->err));
}

/* ------------------------------------------------------------------ */
/* Receive path                                                        */
/* ------------------------------------------------------------------ */

/* In-capsule data limit for @sqe on this queue (NVME-TCP-NOTES §1.8). */
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
	struct tcp_queue *q = tcp_q(r->req.qp);
	uint64_t before;

	tcp_req_set_state(q, r, TCP_REQ_EXEC);
	if (!q->cq) {
		nvmfd__tgt_req_execute(&r->req);
		return;
	}
	/* The core submits to (and, on a full ring, reaps) the shared ring. */
	before = tcp_cq_lock(q->cq);
	nvmfd__tgt_req_execute(&r->req);
	tcp_cq_unlock(q, before);
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
	/* NVMe/TCP 1.0 §3.3.5 / NOTES §1.9: in-capsule data is described by
	 * a Data Block descriptor, Offset subtype, offset 0 (ICDOFF 0). */
	if (sgl->type != NVMFD_SGL_ID_INCAPSULE)
		r->pre_status = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_TYPE) |
				NVMFD_STATUS_DNR;
	else if (le64toh(sgl->addr) != 0 || dlen > tcp_icd_limit(q, &r->req.sqe) ||
		 dlen > r->req.data_cap)
		r->pre_status = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_OFFSET) |
				NVMFD_STATUS_DNR;
	else if (le32toh(sgl->length) != dlen)
		r->pre_status = NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SGL_INVALID_DATA) |
				NVMFD_STATUS_DNR;
	if (!r->pre_status)
		nvmfd_pdu_rx_set_data(&q->rx, r->req.data);
	/* else: the receiver discards the data; the command fails at the end */
	q->rx_req = r;
	return 0;
}

/* H2CData header: NVMe/TCP 1.0 §3.6.2.7 and the nvmet checks (NOTES §1.7). */
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

/* ICReq: NVMe/TCP 1.0 §3.6.2.2 and NOTES §1.4. */
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
	/* Echo the digests the host asked for, CPDA 0 (Linux hosts reject others). */
	q->ctrl_len = (uint32_t)nvmfd_pdu_build_icresp(q->ctrl_pdu, 0, dgst, q->maxh2cdata);
	q->ctrl_sent = 0;
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
		/* NOTES §1.8: in-capsule data on a non-write is INVALID_FIELD. */
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
		 * needs a Transport Data Block descriptor (NOTES §1.9). */
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

static int tcp_rx_event(struct tcp_queue *q, enum nvmfd_pdu_ev ev, bool *pdu_done)
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
	while (q->state == TCP_Q_IC_WAIT || q->state == TCP_Q_LIVE) {
		enum nvmfd_pdu_ev ev;
		bool pdu_done = false;
		uint8_t *ptr;
		size_t want, used;
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
		if (ptr && want >= TCP_RX_DIRECT_MIN) {
			n = nvmfd__sock_recv(q->fd, ptr, want);
		} else {
			n = nvmfd__sock_recv(q->fd, q->bounce, TCP_RX_BOUNCE);
		}
		if (n == -EAGAIN)
			return 0;
		if (n == 0)
			return -ECONNRESET; /* orderly EOF from the host */
		if (n < 0)
			return (int)n;
		*progress = true;
		TCP_STAT_ADD(q, bytes_rx, n);
		nvmfd_budget_charge(&q->rx_budget, (uint64_t)n, 0);
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

static void tcp_build_pdu(struct tcp_queue *q, struct tcp_req *r)
{
	const struct nvmfd_tgt_req *req = &r->req;
	uint32_t len;
	uint8_t flags;

	r->pdu_dlen = 0;
	r->pdu_data = NULL;
	r->pdu_last = false;
	switch (r->phase) {
	case TCP_TX_R2T:
		r->pdu_hlen = (uint32_t)nvmfd_pdu_build_r2t(r->hdr, req->sqe.cid, req->slot, 0,
							    req->data_len, q->hdgst);
		r->pdu_last = true;
		break;
	case TCP_TX_C2H:
		len = tcp_min_u32(req->data_len - r->c2h_off, q->c2h_chunk);
		flags = 0;
		if (r->c2h_off + len == req->data_len) {
			flags |= NVMFD_TCP_F_DATA_LAST;
			if (r->c2h_success) {
				flags |= NVMFD_TCP_F_DATA_SUCCESS;
				r->pdu_last = true;
			}
		}
		r->pdu_hlen = (uint32_t)nvmfd_pdu_build_data(r->hdr, NVMFD_TCP_C2H_DATA, flags,
							     req->sqe.cid, 0, r->c2h_off, len,
							     q->hdgst, q->ddgst);
		r->pdu_data = (const uint8_t *)req->data + r->c2h_off;
		r->pdu_dlen = len;
		if (q->ddgst) {
			uint32_t dg = htole32(nvmfd_digest(r->pdu_data, len));

			memcpy(r->ddgst, &dg, sizeof(dg));
		}
		break;
	case TCP_TX_RSP:
	default:
		r->pdu_hlen = (uint32_t)nvmfd_pdu_build_rsp(r->hdr, &req->cqe, q->hdgst);
		r->pdu_last = true;
		break;
	}
	r->pdu_total = r->pdu_hlen + r->pdu_dlen + (q->ddgst && r->pdu_dlen ? NVMFD_TCP_DIGEST_LEN : 0);
	r->pdu_sent = 0;
	r->pdu_built = true;
}

/* The iovecs of the unsent rest of @r's PDU. */
static int tcp_pdu_iov(const struct tcp_req *r, struct iovec iov[3])
{
	const struct {
		const uint8_t *p;
		uint32_t len;
	} seg[3] = {
		{ r->hdr, r->pdu_hlen },
		{ r->pdu_data, r->pdu_dlen },
		{ r->ddgst, r->pdu_total - r->pdu_hlen - r->pdu_dlen },
	};
	uint32_t skip = r->pdu_sent;
	int n = 0;

	for (int i = 0; i < 3; i++) {
		if (skip >= seg[i].len) {
			skip -= seg[i].len;
			continue;
		}
		iov[n].iov_base = (void *)(seg[i].p + skip);
		iov[n].iov_len = seg[i].len - skip;
		skip = 0;
		n++;
	}
	return n;
}

/* One PDU of @r is on the wire: move the slot on.
 * Return: true when @r left the tx list. */
static bool tcp_pdu_done(struct tcp_queue *q, struct tcp_req *prev, struct tcp_req *r)
{
	r->pdu_built = false;
	switch (r->phase) {
	case TCP_TX_R2T:
		tcp_tx_unlink(q, prev, r);
		r->h2c_rcvd = 0;
		tcp_req_set_state(q, r, TCP_REQ_H2C);
		TCP_STAT_ADD(q, r2ts, 1);
		return true;
	case TCP_TX_C2H:
		r->c2h_off += r->pdu_dlen;
		if (r->c2h_off < r->req.data_len)
			return false;
		if (!r->c2h_success) {
			r->phase = TCP_TX_RSP;
			return false;
		}
		break;
	case TCP_TX_RSP:
	default:
		break;
	}
	tcp_tx_unlink(q, prev, r);
	TCP_STAT_ADD(q, completions, 1);
	tcp_req_put(q, r);
	return true;
}

static int tcp_tx_ctrl(struct tcp_queue *q, bool *progress)
{
	while (q->ctrl_sent < q->ctrl_len) {
		struct iovec iov = {
			.iov_base = q->ctrl_pdu + q->ctrl_sent,
			.iov_len = q->ctrl_len - q->ctrl_sent,
		};
		ssize_t n = nvmfd__sock_sendv(q->fd, &iov, 1, q->tx_head != NULL);

		if (n == -EAGAIN) {
			TCP_STAT_ADD(q, eagain_sends, 1);
			q->tx_blocked = true;
			return -EAGAIN;
		}
		if (n < 0)
			return (int)n;
		q->ctrl_sent += (uint32_t)n;
		TCP_STAT_ADD(q, bytes_tx, n);
		*progress = true;
	}
	if (q->ctrl_len) {
		TCP_STAT_ADD(q, pdus_tx, 1);
		q->ctrl_len = 0;
		q->ctrl_sent = 0;
	}
	return 0;
}

/*
 * Send queued PDUs until the queue is empty, the socket is full or the tx
 * budget is spent; MSG_MORE while more PDUs are queued behind this one.
 * Return: 0, or -errno when the connection must close.
 */
static int tcp_tx(struct tcp_queue *q, bool *progress)
{
	int ret;

	q->tx_blocked = false;
	if (q->ctrl_len) {
		ret = tcp_tx_ctrl(q, progress);
		if (ret == -EAGAIN)
			return 0;
		if (ret)
			return ret;
	}
	nvmfd_budget_start_slice(&q->tx_budget);
	while (q->tx_head) {
		struct iovec iov[3 * TCP_TX_BATCH];
		struct tcp_req *r, *prev, *last = NULL;
		unsigned int npdu = 0;
		uint64_t left;
		ssize_t n;
		int cnt = 0;

		if (!nvmfd_budget_left(&q->tx_budget)) {
			TCP_STAT_ADD(q, tx_budget_exhausted, 1);
			*progress = true;
			return 0;
		}
		/* Gather the current PDU of up to TCP_TX_BATCH slots (within the
		 * PDU budget) into one sendmsg: fewer syscalls per command. A PDU
		 * cut short by the last send must be finished first, alone: no
		 * byte of another PDU may land inside it. */
		if (q->tx_partial) {
			r = q->tx_partial;
			cnt = tcp_pdu_iov(r, iov);
			last = r;
			npdu = 1;
			r = NULL;
		}
		for (r = q->tx_partial ? NULL : q->tx_head; r && npdu < TCP_TX_BATCH;
		     r = r->tx_next) {
			if (q->tx_budget.pdus_max &&
			    q->tx_budget.pdus + npdu >= q->tx_budget.pdus_max && npdu)
				break;
			if (!r->pdu_built)
				tcp_build_pdu(q, r);
			cnt += tcp_pdu_iov(r, iov + cnt);
			last = r;
			npdu++;
		}
		n = nvmfd__sock_sendv(q->fd, iov, cnt,
				      r != NULL || !last->pdu_last || last->tx_next != NULL);
		if (n == -EAGAIN) {
			TCP_STAT_ADD(q, eagain_sends, 1);
			q->tx_blocked = true;
			return 0;
		}
		if (n < 0)
			return (int)n;
		*progress = true;
		TCP_STAT_ADD(q, bytes_tx, n);
		nvmfd_budget_charge(&q->tx_budget, (uint64_t)n, 0);
		/* Account the bytes to the gathered PDUs, in order. */
		left = (uint64_t)n;
		prev = NULL;
		r = q->tx_head;
		if (q->tx_partial) {
			while (r != q->tx_partial) {
				prev = r;
				r = r->tx_next;
			}
			q->tx_partial = NULL;
		}
		while (left && r) {
			struct tcp_req *next = r->tx_next;
			uint32_t rem = r->pdu_total - r->pdu_sent;

			if (left < rem) {
				r->pdu_sent += (uint32_t)left;
				q->tx_partial = r;
				break;
			}
			left -= rem;
			r->pdu_sent = r->pdu_total;
			TCP_STAT_ADD(q, pdus_tx, 1);
			nvmfd_budget_charge(&q->tx_budget, 0, 1);
			if (!tcp_pdu_done(q, prev, r))
				prev = r;
			if (r == last)
				break;
			r = next;
		}
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

	if (q->state == TCP_Q_CLOSING || q->state == TCP_Q_DEAD) {
		/* Nobody to answer: drop the response, recycle the slot. */
		tcp_req_put(q, r);
		return;
	}
	tcp_req_set_state(q, r, TCP_REQ_TX);
	if (req->xfer == NVMFD_XFER_C2H && req->data_len && !nvmfd_cqe_status(&req->cqe)) {
		r->phase = TCP_TX_C2H;
		r->c2h_off = 0;
		/* NOTES §1.6: SUCCESS only with SQ flow control disabled (the CQE
		 * would carry SQHD otherwise) and a CQE that says nothing more. */
		r->c2h_success = q->qp.sqflow_disabled && !req->cqe.result && !req->cqe.dw1;
	} else {
		r->phase = TCP_TX_RSP;
	}
	tcp_tx_push(q, r);
}

static void tcp_shutdown_queue(struct nvmfd_tgt_qp *qp)
{
	struct tcp_queue *q = tcp_q(qp);

	__atomic_store_n(&q->shutdown, 1, __ATOMIC_RELEASE);
	tcp_queue_kick(q);
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

/*
 * Backend completions. Own ring: peek its CQ when ios are in flight (the
 * eventfd, when armed, brought us here; with --backend-poll the fd is not
 * watched while we poll and this peek is the only way completions arrive).
 * Shared ring: run what the completion work routed to us; with
 * --backend-poll also reap the shared ring ourselves each pass.
 */
static void tcp_reap(struct tcp_queue *q, bool *progress)
{
	unsigned int m;
	int n;

	if (q->cq) {
		if (tcp_exec(q)->backend_poll && q->bk_inflight) {
			pthread_mutex_lock(&q->cq->lock);
			n = nvmfd_bk_ring_reap(q->ring, TCP_CQ_REAP_MAX);
			pthread_mutex_unlock(&q->cq->lock);
			if (n > 0)
				__atomic_add_fetch(&q->cq->peek_completions, (uint64_t)n,
						   __ATOMIC_RELAXED);
		}
		m = tcp_cq_drain(q);
		if (m) {
			TCP_STAT_ADD(q, cq_events, 1);
			TCP_STAT_ADD(q, cq_completions, m);
			*progress = true;
		}
		return;
	}
	if (!nvmfd_bk_ring_inflight(q->ring))
		return;
	n = nvmfd_bk_ring_reap(q->ring, q->nr_reqs);
	if (n > 0) {
		if (q->ring_watched)
			TCP_STAT_ADD(q, cq_events, 1);
		else
			TCP_STAT_ADD(q, cq_peeks, 1);
		TCP_STAT_ADD(q, cq_completions, n);
		*progress = true;
	}
}

static void tcp_port_release(struct nvmfd_tcp_port *port, struct tcp_queue *q);

/* Best effort: finish a half-sent PDU, then the C2HTermReq, once each. */
static void tcp_send_term(struct tcp_queue *q)
{
	struct tcp_req *r = q->tx_partial;
	bool progress = false;

	if (r) {
		struct iovec iov[3];
		int cnt = tcp_pdu_iov(r, iov);
		ssize_t n = nvmfd__sock_sendv(q->fd, iov, cnt, true);

		if (n < 0 || r->pdu_sent + (uint32_t)n < r->pdu_total)
			return; /* a TermReq now would land inside a PDU */
	}
	tcp_tx_ctrl(q, &progress);
}

/*
 * Tear the connection down (queue owner): stop readiness, let the backend
 * finish what it holds, detach from the core, close the socket. Memory is
 * freed later by the port's release work.
 */
static void tcp_queue_teardown(struct tcp_queue *q)
{
	struct nvmfd_rt *rt = q->port->rt;
	char drain[512];

	q->state = TCP_Q_CLOSING;
	if (q->term_pending) {
		tcp_send_term(q);
		q->term_pending = false;
	}
	nvmfd_rt_unwatch_fd(&q->io_work, q->fd);
	if (q->ring_fd >= 0)
		nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
	q->ring_watched = false;
	/* Backend ios hold slot buffers: wait for all of them (bounded by
	 * the backend's own completion time). */
	while (!q->cq && nvmfd_bk_ring_inflight(q->ring)) {
		nvmfd_bk_ring_flush(q->ring);
		if (nvmfd_bk_ring_reap(q->ring, q->nr_reqs) == 0) {
			struct pollfd pfd = { .fd = q->ring_fd, .events = POLLIN };

			poll(&pfd, 1, 10);
		}
	}
	if (q->cq) {
		/* Shared ring: reap it ourselves (completions of other queues
		 * are routed to them) until ours have all been delivered. */
		tcp_cq_drain(q);
		while (q->bk_inflight) {
			pthread_mutex_lock(&q->cq->lock);
			nvmfd_bk_ring_flush(q->ring);
			nvmfd_bk_ring_reap(q->ring, TCP_CQ_REAP_MAX);
			pthread_mutex_unlock(&q->cq->lock);
			if (tcp_cq_drain(q) == 0 && q->bk_inflight) {
				struct pollfd pfd = { .fd = q->cq->efd, .events = POLLIN };

				poll(&pfd, 1, 1);
			}
		}
		/* A router that pushed our last io may still be kicking us:
		 * it holds the ring lock until done. */
		pthread_mutex_lock(&q->cq->lock);
		pthread_mutex_unlock(&q->cq->lock);
	}
	nvmfd__tgt_qp_drain_posted(&q->qp);
	nvmfd__tgt_qp_destroy(&q->qp);
	if (q->placed) {
		nvmfd_rt_unplace(rt, q->io_cpu);
		q->placed = false;
	}
	/* A graceful close: stop sending, read what the host already sent so
	 * close() does not turn into a reset that could discard the TermReq. */
	shutdown(q->fd, SHUT_WR);
	for (int i = 0; i < 64 && nvmfd__sock_recv(q->fd, drain, sizeof(drain)) > 0; i++)
		;
	close(q->fd);
	q->fd = -1;
	q->state = TCP_Q_DEAD;
	tcp_port_release(q->port, q);
}

static int tcp_rearm(struct tcp_queue *q)
{
	uint32_t ev = EPOLLIN;
	int ret;

	if (q->tx_blocked)
		ev |= EPOLLOUT;
	ret = nvmfd_rt_watch_fd(&q->io_work, q->fd, ev);
	if (ret)
		return ret;
	TCP_STAT_ADD(q, rearms, 1);
	if (q->ring_fd < 0)
		return 0; /* shared ring: its completion work watches it */
	ret = nvmfd_rt_watch_fd(&q->io_work, q->ring_fd, EPOLLIN);
	if (!ret)
		q->ring_watched = true;
	return ret;
}

/* --backend-poll: while we keep polling, completions are found by peeking
 * the CQ each pass, not through the ring's eventfd: stop watching it. */
static void tcp_poll_backend(struct tcp_queue *q)
{
	if (!tcp_exec(q)->backend_poll || q->ring_fd < 0 || !q->ring_watched)
		return;
	nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
	q->ring_watched = false;
}

static void tcp_port_migrate(struct nvmfd_tcp_port *port, struct tcp_queue *q);

/* Publish a successful Connect to the timeout checker (owner). */
static void tcp_note_connected(struct tcp_queue *q)
{
	if (q->qp.connected &&
	    __atomic_load_n(&q->stage, __ATOMIC_RELAXED) != TCP_STAGE_CONNECTED)
		__atomic_store_n(&q->stage, TCP_STAGE_CONNECTED, __ATOMIC_RELEASE);
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
 * One bounded io_work pass (NOTES §3.1, DESIGN "Execution model"): rx up to
 * its budget, reap completions, tx up to its budget, repeated while
 * something progressed and the pass deadline has not passed; then either
 * re-queue (work left, or idle polling) or re-arm readiness and return.
 */
static void tcp_io_work(struct nvmfd_work *w)
{
	struct tcp_queue *q = container_of(w, struct tcp_queue, io_work);
	bool progress, any = false;
	int ret = 0;

	if (q->state == TCP_Q_DEAD)
		return;
	TCP_STAT_ADD(q, passes, 1);
	if (!q->requeued)
		TCP_STAT_ADD(q, wakeups, 1);
	q->requeued = false;
	nvmfd_budget_start_pass(&q->rx_budget, nvmfd_now_ns(),
				tcp_exec(q)->io_work_deadline_us ?: TCP_DEF_DEADLINE_US);
	do {
		if (__atomic_load_n(&q->shutdown, __ATOMIC_ACQUIRE))
			goto teardown;
		if (__atomic_load_n(&q->expired, __ATOMIC_ACQUIRE) && tcp_setup_expired(q))
			goto teardown;
		progress = false;
		ret = tcp_rx(q, &progress);
		if (ret)
			goto teardown;
		tcp_ring_flush(q);
		tcp_reap(q, &progress);
		if (nvmfd__tgt_qp_drain_posted(&q->qp) > 0)
			progress = true;
		ret = tcp_tx(q, &progress);
		if (ret)
			goto teardown;
		any |= progress;
	} while (progress && !nvmfd_budget_expired(&q->rx_budget, nvmfd_now_ns()));
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
	if (nvmfd_idle_poll_update(&q->idle, any, nvmfd_now_ns())) {
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
	 * reaped in the loop above (inflight 0 skips the reap there); only a
	 * reap clears it, and a stale signal would wake this idle queue for
	 * ever. Clear it before sleeping. */
	if (!q->cq && !nvmfd_bk_ring_inflight(q->ring))
		nvmfd_bk_ring_reap(q->ring, q->nr_reqs);
	ret = tcp_rearm(q);
	if (!ret)
		return;
	NVMFD_ERR_RATELIMIT(TCP_COMP, "queue %u qid %u peer %s: cannot watch socket: %s", q->id,
			    q->qp.qid, q->qp.peer_addr, strerror(-ret));

teardown:
	if (ret && ret != -EPROTO && ret != -ECONNRESET && ret != -EPIPE)
		NVMFD_INFO(TCP_COMP, "queue %u qid %u peer %s: connection error: %s", q->id,
			   q->qp.qid, q->qp.peer_addr, strerror(-ret));
	tcp_queue_teardown(q);
}

/* ------------------------------------------------------------------ */
/* Queue creation and release                                          */
/* ------------------------------------------------------------------ */

static void tcp_crt_put(struct nvmfd_tcp_port *port, struct tcp_crt *crt);

/* Free a queue whose io_work is cancelled (or never ran). */
static void tcp_queue_free(struct tcp_queue *q)
{
	if (q->placed)
		nvmfd_rt_unplace(q->port->rt, q->io_cpu);
	if (q->cq)
		tcp_cq_put(q->port, q->cq);
	else if (q->ring)
		nvmfd_bk_ring_destroy(&q->ring);
	if (q->crt)
		tcp_crt_put(q->port, q->crt);
	pthread_mutex_destroy(&q->wlock);
	if (q->data)
		munmap(q->data, q->data_size);
	if (q->fd >= 0)
		close(q->fd);
	free(q->bounce);
	free(q->reqs);
	free(q);
}

/* ------------------------------------------------------------------ */
/* Per-controller runtimes (--wq-per-ctrl)                             */
/* ------------------------------------------------------------------ */

struct tcp_rt_reaper {
	struct nvmfd_tcp_port *port;
	struct nvmfd_rt *rt;
};

static void *tcp_rt_reaper_main(void *arg)
{
	struct tcp_rt_reaper *rp = arg;
	struct nvmfd_tcp_port *port = rp->port;

	nvmfd_rt_destroy(rp->rt);
	free(rp);
	pthread_mutex_lock(&port->lock);
	port->nr_rt_dying--;
	pthread_cond_broadcast(&port->cond);
	pthread_mutex_unlock(&port->lock);
	return NULL;
}

/*
 * The runtime of @ctrl on this port: take a reference, or create it with
 * the global exec options (its pools are named "nvmfc").
 * Return: 0, -ENOMEM, or the error of nvmfd_rt_create().
 * Context: the port's release work (the only caller: no race on creation).
 */
static int tcp_crt_get(struct nvmfd_tcp_port *port, const struct nvmfd_tgt_ctrl *ctrl,
		       struct tcp_crt **out)
{
	struct nvmfd_rt_opts opts = port->gcfg->exec.rt;
	struct tcp_crt *crt;
	int ret;

	pthread_mutex_lock(&port->lock);
	for (crt = port->crts; crt; crt = crt->next) {
		if (crt->ctrl == ctrl && crt->cntlid == ctrl->cntlid) {
			crt->users++;
			pthread_mutex_unlock(&port->lock);
			*out = crt;
			return 0;
		}
	}
	pthread_mutex_unlock(&port->lock);
	crt = calloc(1, sizeof(*crt));
	if (!crt)
		return -ENOMEM;
	if (opts.size == 0)
		nvmfd_rt_opts_init(&opts);
	opts.name = "nvmfc";
	ret = nvmfd_rt_create(&opts, &crt->rt);
	if (ret) {
		free(crt);
		return ret;
	}
	crt->ctrl = ctrl;
	crt->cntlid = ctrl->cntlid;
	crt->users = 1;
	pthread_mutex_lock(&port->lock);
	crt->next = port->crts;
	port->crts = crt;
	pthread_mutex_unlock(&port->lock);
	NVMFD_DBG(TCP_COMP, "port %u: pools for controller %u", port->cfg->portid, crt->cntlid);
	*out = crt;
	return 0;
}

/* Drop a reference; the last queue's goes destroys the runtime from a
 * fresh thread (this runs on a runtime worker, where destroy is illegal);
 * without a thread it waits for nvmfd__tcp_port_destroy(). */
static void tcp_crt_put(struct nvmfd_tcp_port *port, struct tcp_crt *crt)
{
	struct tcp_rt_reaper *rp;
	struct tcp_crt **pp;
	pthread_attr_t attr;
	pthread_t th;
	bool ok = false;

	pthread_mutex_lock(&port->lock);
	if (--crt->users) {
		pthread_mutex_unlock(&port->lock);
		return;
	}
	for (pp = &port->crts; *pp != crt; pp = &(*pp)->next)
		;
	*pp = crt->next;
	port->nr_rt_dying++;
	pthread_mutex_unlock(&port->lock);

	rp = malloc(sizeof(*rp));
	if (rp && !pthread_attr_init(&attr)) {
		rp->port = port;
		rp->rt = crt->rt;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = !pthread_create(&th, &attr, tcp_rt_reaper_main, rp);
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_lock(&port->lock);
	if (ok) {
		free(crt);
	} else {
		free(rp);
		port->nr_rt_dying--;
		crt->next = port->rt_grave;
		port->rt_grave = crt;
		pthread_cond_broadcast(&port->cond);
	}
	pthread_mutex_unlock(&port->lock);
}

/*
 * Move @q (whose last pass ended without re-arming) to its controller's
 * runtime: the old item is cancelled here, outside itself.
 * Context: the port's release work.
 */
static void tcp_queue_migrate(struct nvmfd_tcp_port *port, struct tcp_queue *q)
{
	struct tcp_crt *crt = NULL;
	int ret;

	nvmfd_rt_work_cancel_sync(&q->io_work);
	nvmfd_rt_unwatch_fd(&q->io_work, q->fd);
	if (q->ring_fd >= 0)
		nvmfd_rt_unwatch_fd(&q->io_work, q->ring_fd);
	q->ring_watched = false;
	ret = tcp_crt_get(port, q->qp.ctrl, &crt);
	if (ret)
		NVMFD_WARN_RATELIMIT(TCP_COMP,
				     "queue %u qid %u: no pools for its controller (%s), staying",
				     q->id, q->qp.qid, strerror(-ret));
	pthread_mutex_lock(&q->wlock);
	__atomic_store_n(&q->crt, crt, __ATOMIC_RELEASE);
	nvmfd_work_init(&q->io_work, crt ? crt->rt : port->rt, tcp_io_work, q->io_cpu);
	pthread_mutex_unlock(&q->wlock);
	q->requeued = false;
	/* The first pass on the new pools re-arms readiness; a kick or a
	 * shutdown that hit the cancelled item is seen by that pass. */
	nvmfd_rt_queue_work(&q->io_work);
}

static void tcp_port_migrate(struct nvmfd_tcp_port *port, struct tcp_queue *q)
{
	pthread_mutex_lock(&port->lock);
	q->mig_next = port->migrate;
	port->migrate = q;
	pthread_mutex_unlock(&port->lock);
	nvmfd_rt_queue_work(&port->release_work);
}

static void tcp_release_work(struct nvmfd_work *w)
{
	struct nvmfd_tcp_port *port = container_of(w, struct nvmfd_tcp_port, release_work);

	for (;;) {
		struct tcp_queue *q;

		pthread_mutex_lock(&port->lock);
		q = port->migrate;
		if (q)
			port->migrate = q->mig_next;
		pthread_mutex_unlock(&port->lock);
		if (!q)
			break;
		tcp_queue_migrate(port, q);
	}
	for (;;) {
		struct tcp_queue *q;

		pthread_mutex_lock(&port->lock);
		q = port->dead;
		if (!q) {
			pthread_mutex_unlock(&port->lock);
			return;
		}
		port->dead = q->dead_next;
		if (q->prev)
			q->prev->next = q->next;
		else
			port->queues = q->next;
		if (q->next)
			q->next->prev = q->prev;
		pthread_mutex_unlock(&port->lock);

		nvmfd_rt_work_cancel_sync(&q->io_work);
		tcp_queue_free(q);

		pthread_mutex_lock(&port->lock);
		port->nr_queues--;
		pthread_cond_broadcast(&port->cond);
		pthread_mutex_unlock(&port->lock);
	}
}

static void tcp_port_release(struct nvmfd_tcp_port *port, struct tcp_queue *q)
{
	pthread_mutex_lock(&port->lock);
	q->dead_next = port->dead;
	port->dead = q;
	pthread_mutex_unlock(&port->lock);
	nvmfd_rt_queue_work(&port->release_work);
}

static int tcp_queue_create(struct nvmfd_tcp_port *port, int fd)
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
	ret = -pthread_mutex_init(&q->wlock, NULL);
	if (ret) {
		free(q);
		return ret;
	}
	q->fd = fd;
	q->port = port;
	q->ring_fd = -1;
	q->nr_reqs = tcp_min_u32(2 * qsize + 1, TCP_MAX_SLOTS);
	q->reqs = calloc(q->nr_reqs, sizeof(*q->reqs));
	q->bounce = malloc(TCP_RX_BOUNCE);
	if (!q->reqs || !q->bounce) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* A slot holds the largest transfer: MDTS, or in-capsule data. */
	slot = tcp_max_u32(nvmfd__tgt_max_io_size(port->tgt),
			   tcp_max_u32(pc->inline_data_size, TCP_FABRICS_ICD));
	slot = (slot + 4095u) & ~4095u;
	q->slot_size = slot;
	q->data_size = (size_t)slot * q->nr_reqs;
	q->data = mmap(NULL, q->data_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (q->data == MAP_FAILED) {
		q->data = NULL;
		ret = -ENOMEM;
		goto out_free;
	}
	/* Placement: the qid is not known before Connect, so rr uses a
	 * per-port counter in its place (NOTES §3.1: nvmet's old last_cpu). */
	incoming = nvmfd__sock_incoming_cpu(fd);
	q->io_cpu = nvmfd_rt_place(port->rt, gcfg->exec.place,
				   __atomic_add_fetch(&port->rr, 1, __ATOMIC_RELAXED),
				   NULL, incoming < 0 ? -1 : incoming);
	q->placed = true;
	if (gcfg->exec.cq_pool_shared) {
		/* the ring of our io_cpu, with its one event source */
		ret = tcp_cq_get(port, q->io_cpu, q->nr_reqs, &q->cq);
		if (ret)
			goto out_free;
		q->ring = q->cq->ring;
	} else {
		ret = nvmfd_bk_ring_create(q->nr_reqs, gcfg->exec.backend_poll, &q->ring);
		if (ret)
			goto out_free;
		q->ring_fd = nvmfd_bk_ring_event_fd(q->ring);
	}

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
	q->qp.ring = q->ring;
	if (nvmfd__sock_local_addr(fd, q->qp.local_addr, sizeof(q->qp.local_addr)))
		snprintf(q->qp.local_addr, sizeof(q->qp.local_addr), "%.63s", pc->traddr);
	if (nvmfd__sock_peer_addr(fd, q->qp.peer_addr, sizeof(q->qp.peer_addr)))
		snprintf(q->qp.peer_addr, sizeof(q->qp.peer_addr), "?");

	q->free_head = UINT32_MAX;
	q->nr_state[TCP_REQ_FREE] = q->nr_reqs; /* each tcp_req_put() below nets 0 */
	for (uint32_t i = q->nr_reqs; i-- > 0;) {
		struct tcp_req *r = &q->reqs[i];

		r->req.qp = &q->qp;
		r->req.slot = (uint16_t)i;
		r->req.data = q->data + (size_t)i * slot;
		r->req.data_cap = slot;
		r->req.xprt = q;
		tcp_req_put(q, r);
	}

	nvmfd_work_init(&q->io_work, port->rt, tcp_io_work, q->io_cpu);
	q->state = TCP_Q_IC_WAIT;
	q->stage = TCP_STAGE_ACCEPTED;
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

/**
 * nvmfd__tcp_port_check_timeouts() - close the port's connections that
 * missed a setup deadline: no ICReq within cfg icreq_timeout_ms, or no
 * successful Connect within cfg connect_timeout_ms, of accept (0: no such
 * deadline). Expired queues are only marked and kicked; each one's io_work
 * confirms, logs and tears itself down.
 * @port: a port from nvmfd__tcp_port_create() (not yet destroyed).
 * @now_ns: CLOCK_MONOTONIC now (nvmfd__tgt_now_ns()), ns.
 * Return: number of queues newly marked as expired.
 * Context: the target's housekeeping thread (any thread); takes port->lock.
 */
unsigned int nvmfd__tcp_port_check_timeouts(struct nvmfd_tcp_port *port, uint64_t now_ns)
{
	uint64_t ic_ns = (uint64_t)port->gcfg->icreq_timeout_ms * 1000000ull;
	uint64_t conn_ns = (uint64_t)port->gcfg->connect_timeout_ms * 1000000ull;
	unsigned int n = 0;
	struct tcp_queue *q;

	if (!ic_ns && !conn_ns)
		return 0;
	pthread_mutex_lock(&port->lock);
	for (q = port->queues; q; q = q->next) {
		int st = __atomic_load_n(&q->stage, __ATOMIC_ACQUIRE);
		uint64_t age = now_ns > q->accept_ns ? now_ns - q->accept_ns : 0;
		int missed = -1, zero = 0;

		if (st == TCP_STAGE_ACCEPTED && ic_ns && age >= ic_ns)
			missed = TCP_STAGE_ACCEPTED;
		else if (st != TCP_STAGE_CONNECTED && conn_ns && age >= conn_ns)
			missed = TCP_STAGE_IC_DONE;
		if (missed < 0)
			continue;
		/* once per mark: the owner clears it when it looked */
		if (__atomic_compare_exchange_n(&q->expired, &zero, missed + 1, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			tcp_queue_kick(q);
			n++;
		}
	}
	pthread_mutex_unlock(&port->lock);
	return n;
}

static void tcp_accept_work(struct nvmfd_work *w)
{
	struct nvmfd_tcp_port *port = container_of(w, struct nvmfd_tcp_port, accept_work);
	int i, fd, ret;

	for (i = 0; i < TCP_ACCEPT_BATCH; i++) {
		if (__atomic_load_n(&port->stopping, __ATOMIC_ACQUIRE))
			return;
		ret = nvmfd__sock_accept(port->lfd, &fd);
		if (ret == -EAGAIN)
			break;
		if (ret) {
			__atomic_add_fetch(&port->accept_errors, 1, __ATOMIC_RELAXED);
			if (ret != -ECONNABORTED)
				NVMFD_WARN_RATELIMIT(TCP_COMP, "port %u: accept: %s",
						     port->cfg->portid, strerror(-ret));
			break;
		}
		__atomic_add_fetch(&port->accepted, 1, __ATOMIC_RELAXED);
		ret = tcp_queue_create(port, fd);
		if (ret) {
			if (ret != -ESHUTDOWN)
				NVMFD_WARN_RATELIMIT(TCP_COMP, "port %u: cannot set up a queue: %s",
						     port->cfg->portid, strerror(-ret));
			close(fd);
		}
	}
	if (i == TCP_ACCEPT_BATCH) {
		nvmfd_rt_queue_work(&port->accept_work);
		return;
	}
	ret = nvmfd_rt_watch_fd(&port->accept_work, port->lfd, EPOLLIN);
	if (ret)
		NVMFD_ERR(TCP_COMP, "port %u: cannot watch the listener: %s", port->cfg->portid,
			  strerror(-ret));
}

/* ------------------------------------------------------------------ */
/* Port API (xprt.h)                                                   */
/* ------------------------------------------------------------------ */

/**
 * nvmfd__tcp_port_create() - bind and listen for one configured port.
 * @tgt:  the target (borrowed for the port's lifetime).
 * @cfg:  port configuration (borrowed for the port's lifetime); trsvcid
 *        "0" binds an ephemeral port, see nvmfd__tcp_port_bound_port().
 * @out:  out: the port.
 * Return: 0, -ENOMEM, -EINVAL (traddr/trsvcid not numeric), -errno from
 *         socket/bind/listen (e.g. -EADDRINUSE). A message naming the port
 *         is logged on failure.
 * Context: control thread.
 */
int nvmfd__tcp_port_create(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *cfg,
			   struct nvmfd_tcp_port **out)
{
	struct nvmfd_tcp_port *port;
	int ret;

	port = calloc(1, sizeof(*port));
	if (!port)
		return -ENOMEM;
	port->tgt = tgt;
	port->cfg = cfg;
	port->gcfg = nvmfd__tgt_cfg(tgt);
	port->lfd = -1;
	ret = nvmfd__sock_listen(cfg->traddr, cfg->trsvcid, NVMFD_SOCK_BACKLOG, &port->lfd,
				 &port->bound);
	if (ret) {
		NVMFD_ERR(TCP_COMP, "port %u %s:%s: %s", cfg->portid, cfg->traddr, cfg->trsvcid,
			  strerror(-ret));
		goto out_free;
	}
	ret = -pthread_mutex_init(&port->lock, NULL);
	if (ret)
		goto out_close;
	ret = -pthread_cond_init(&port->cond, NULL);
	if (ret)
		goto out_destroy_lock;
	NVMFD_INFO(TCP_COMP, "port %u listening on %s:%u", cfg->portid, cfg->traddr, port->bound);
	*out = port;
	return 0;

out_destroy_lock:
	pthread_mutex_destroy(&port->lock);
out_close:
	close(port->lfd);
out_free:
	free(port);
	return ret;
}

/**
 * nvmfd__tcp_port_start() - start accepting on the target's runtime.
 * @port: a port from nvmfd__tcp_port_create().
 * Return: 0, -EALREADY if started, -EINVAL if the target has no runtime yet,
 *         -errno from nvmfd_rt_watch_fd().
 * Context: control thread, after the runtime was created.
 */
int nvmfd__tcp_port_start(struct nvmfd_tcp_port *port)
{
	int ret;

	if (port->started)
		return -EALREADY;
	port->rt = nvmfd__tgt_rt(port->tgt);
	if (!port->rt)
		return -EINVAL;
	nvmfd_work_init(&port->accept_work, port->rt, tcp_accept_work, 0);
	nvmfd_work_init(&port->release_work, port->rt, tcp_release_work, 0);
	ret = nvmfd_rt_watch_fd(&port->accept_work, port->lfd, EPOLLIN);
	if (ret) {
		NVMFD_ERR(TCP_COMP, "port %u: cannot watch the listener: %s", port->cfg->portid,
			  strerror(-ret));
		return ret;
	}
	port->started = true;
	return 0;
}

/**
 * nvmfd__tcp_port_bound_port() - the TCP port actually bound (host order).
 * Context: any thread.
 */
uint16_t nvmfd__tcp_port_bound_port(const struct nvmfd_tcp_port *port)
{
	return port ? port->bound : 0;
}

/**
 * nvmfd__tcp_port_destroy() - stop accepting, shut every queue of the port
 * down, wait until they are released, close the listener; NULLs *@pp.
 * @pp: the port (NULL or *NULL: nothing to do).
 * Context: control thread, never a runtime worker; the runtime must still
 * be running when the port was started.
 */
void nvmfd__tcp_port_destroy(struct nvmfd_tcp_port **pp)
{
	struct nvmfd_tcp_port *port = pp ? *pp : NULL;
	struct tcp_queue *q;

	if (!port)
		return;
	*pp = NULL;
	__atomic_store_n(&port->stopping, 1, __ATOMIC_RELEASE);
	if (port->started) {
		nvmfd_rt_unwatch_fd(&port->accept_work, port->lfd);
		nvmfd_rt_work_cancel_sync(&port->accept_work);
		nvmfd_rt_unwatch_fd(&port->accept_work, port->lfd);
		pthread_mutex_lock(&port->lock);
		for (q = port->queues; q; q = q->next)
			tcp_shutdown_queue(&q->qp);
		while (port->nr_queues || port->nr_rt_dying)
			pthread_cond_wait(&port->cond, &port->lock);
		pthread_mutex_unlock(&port->lock);
		nvmfd_rt_work_cancel_sync(&port->release_work);
	}
	while (port->rt_grave) {
		struct tcp_crt *crt = port->rt_grave;

		port->rt_grave = crt->next;
		nvmfd_rt_destroy(crt->rt);
		free(crt);
	}
	close(port->lfd);
	pthread_cond_destroy(&port->cond);
	pthread_mutex_destroy(&port->lock);
	free(port);
}

static void tcp_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void tcp_queue_json(struct tcp_queue *q, FILE *out)
{
	uint64_t ev = TCP_STAT_LOAD(q, cq_events), cmpl = TCP_STAT_LOAD(q, cq_completions);

	fprintf(out, "{\"id\":%u,\"qid\":%u,\"io_cpu\":%d,\"peer\":", q->id,
		__atomic_load_n(&q->qp.qid, __ATOMIC_RELAXED), q->io_cpu);
	tcp_json_str(out, q->qp.peer_addr);
	fprintf(out,
		",\"pdus_rx\":%" PRIu64 ",\"bytes_rx\":%" PRIu64 ",\"pdus_tx\":%" PRIu64
		",\"bytes_tx\":%" PRIu64 ",\"commands\":%" PRIu64 ",\"completions\":%" PRIu64
		",\"r2ts\":%" PRIu64 ",\"passes\":%" PRIu64 ",\"rx_budget_exhausted\":%" PRIu64
		",\"tx_budget_exhausted\":%" PRIu64 ",\"deadline_exhausted\":%" PRIu64
		",\"requeues\":%" PRIu64 ",\"idle_polls\":%" PRIu64 ",\"rearms\":%" PRIu64
		",\"eagain_sends\":%" PRIu64 ",\"completion_events\":%" PRIu64
		",\"backend_completions\":%" PRIu64 ",\"completions_per_event\":%.2f"
		",\"kicks\":%" PRIu64 ",\"ddgst_errors\":%" PRIu64 ",\"wakeups\":%" PRIu64,
		TCP_STAT_LOAD(q, pdus_rx), TCP_STAT_LOAD(q, bytes_rx), TCP_STAT_LOAD(q, pdus_tx),
		TCP_STAT_LOAD(q, bytes_tx), TCP_STAT_LOAD(q, cmds), TCP_STAT_LOAD(q, completions),
		TCP_STAT_LOAD(q, r2ts), TCP_STAT_LOAD(q, passes),
		TCP_STAT_LOAD(q, rx_budget_exhausted), TCP_STAT_LOAD(q, tx_budget_exhausted),
		TCP_STAT_LOAD(q, deadline_exhausted), TCP_STAT_LOAD(q, requeues),
		TCP_STAT_LOAD(q, idle_polls), TCP_STAT_LOAD(q, rearms),
		TCP_STAT_LOAD(q, eagain_sends), ev, cmpl, ev ? (double)cmpl / (double)ev : 0.0,
		TCP_STAT_LOAD(q, kicks), TCP_STAT_LOAD(q, ddgst_errors), TCP_STAT_LOAD(q, wakeups));
	/* q->cq and q->crt are set before the queue is listed / by the
	 * release work while the queue runs nothing; read them relaxed. */
	{
		struct tcp_cq *cq = q->cq;
		struct tcp_crt *crt = __atomic_load_n(&q->crt, __ATOMIC_ACQUIRE);

		fprintf(out, ",\"completion_peeks\":%" PRIu64 ",\"cq_pool\":\"%s\",\"ring\":%d",
			TCP_STAT_LOAD(q, cq_peeks), cq ? "shared" : "per-queue",
			cq ? (int)cq->id : -1);
		if (crt)
			fprintf(out, ",\"pool\":\"ctrl\",\"pool_cntlid\":%u", crt->cntlid);
		else
			fputs(",\"pool\":\"global\"", out);
	}
	fprintf(out, ",\"slots\":%u,\"slot_states\":{", q->nr_reqs);
	for (int i = 0; i < TCP_REQ__MAX; i++)
		fprintf(out, "%s\"%s\":%u", i ? "," : "", tcp_req_state_names[i],
			__atomic_load_n(&q->nr_state[i], __ATOMIC_RELAXED));
	fputs("}}", out);
}

/**
 * nvmfd__tcp_port_stats_json() - write the port's counters and one object
 * per live queue as a JSON object (no trailing newline) on @out.
 * Return: 0, -EIO when writing failed.
 * Context: any thread; takes the port lock (control path only).
 */
int nvmfd__tcp_port_stats_json(struct nvmfd_tcp_port *port, FILE *out)
{
	struct tcp_queue *q;
	bool first = true;

	fprintf(out, "{\"portid\":%u,\"traddr\":", port->cfg->portid);
	tcp_json_str(out, port->cfg->traddr);
	fprintf(out, ",\"trsvcid\":%u,\"accepted\":%" PRIu64 ",\"accept_errors\":%" PRIu64,
		port->bound, __atomic_load_n(&port->accepted, __ATOMIC_RELAXED),
		__atomic_load_n(&port->accept_errors, __ATOMIC_RELAXED));
	pthread_mutex_lock(&port->lock);
	fprintf(out, ",\"nr_queues\":%u,\"queues\":[", port->nr_queues);
	for (q = port->queues; q; q = q->next) {
		if (!first)
			fputc(',', out);
		first = false;
		tcp_queue_json(q, out);
	}
	fputs("],\"shared_rings\":[", out);
	first = true;
	for (struct tcp_cq *cq = port->cqs; cq; cq = cq->next) {
		uint64_t ev = __atomic_load_n(&cq->events, __ATOMIC_RELAXED);
		uint64_t cm = __atomic_load_n(&cq->completions, __ATOMIC_RELAXED);

		fprintf(out,
			"%s{\"id\":%u,\"cpu\":%d,\"users\":%u,\"completion_events\":%" PRIu64
			",\"empty_events\":%" PRIu64 ",\"completions\":%" PRIu64
			",\"completions_per_event\":%.2f,\"peek_completions\":%" PRIu64 "}",
			first ? "" : ",", cq->id, cq->cpu, cq->users, ev,
			__atomic_load_n(&cq->empty_events, __ATOMIC_RELAXED), cm,
			ev ? (double)cm / (double)ev : 0.0,
			__atomic_load_n(&cq->peek_completions, __ATOMIC_RELAXED));
		first = false;
	}
	fputs("],\"ctrl_pools\":[", out);
	first = true;
	for (struct tcp_crt *crt = port->crts; crt; crt = crt->next) {
		fprintf(out, "%s{\"cntlid\":%u,\"users\":%u,\"runtime\":", first ? "" : ",",
			crt->cntlid, crt->users);
		nvmfd_rt_stats_json(crt->rt, out);
		fputc('}', out);
		first = false;
	}
	pthread_mutex_unlock(&port->lock);
	fputs("]}", out);
	return ferror(out) ? -EIO : 0;
}
