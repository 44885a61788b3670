// SPDX-License-Identifier: MIT
/*
 * tcp_uring.c - the NVMe/TCP queue's io_uring socket path (--net uring,
 * cfg exec.net "uring"; doc/execution-model.md §9), on net/usock.h.
 *
 * The queue keeps everything else of tcp.c: the codec, the command slots,
 * the txq and its callbacks, the io_work pass and its budgets. What
 * changes is where bytes come from and go to:
 *
 *   - receive: the socket's multishot receive (or single recv SQEs) fills
 *     the usock's buffers; tcp_uring_rx() feeds them to the codec within
 *     the rx budget, as tcp_rx() feeds its bounce buffer. No recv() system
 *     call: the kernel receives as bytes arrive.
 *   - transmit: tcp_uring_tx() gathers a txq batch (the same batch rules:
 *     at most TCP_TX_BATCH PDUs, a cut PDU finished alone) into one
 *     sendmsg SQE and submits it, with any receive re-arm, in one
 *     io_uring_enter. A send completes inline unless the socket is full;
 *     then it waits in the kernel (no EPOLLOUT) and its CQE wakes the queue.
 *     The batch stays in struct tcp_uring until the CQE is taken.
 *   - readiness: the queue watches the usock's eventfd (edge-triggered,
 *     never read) instead of the socket; while a pass runs the eventfd is
 *     muted (the pass sees CQEs itself), and tcp_uring_rearm() unmutes it
 *     and looks once more before the queue sleeps.
 *   - teardown: tcp_uring_close() cancels the receive and a send in
 *     flight and keeps the queue DRAINING until the kernel has returned
 *     every CQE: slots, the batch and the buffers are freed only after
 *     that. A C2HTermReq is sent (synchronously, as on the epoll path)
 *     only when no send is in flight, so it never lands inside a PDU.
 *
 * --uring-ring worker (doc/execution-model.md §9.1): the socket's SQEs go
 * on the worker ring of the queue's bound pool instead of a ring of its
 * own; CQEs queue the io_work through the usock's sink, so there is no
 * eventfd to watch, and a pass's send and receive re-arm go to the kernel
 * with the io_uring_enter() the worker sleeps in. A send is then still in
 * flight when the pass ends (its CQE runs the queue again).
 *
 * Not supported, refused by the config: TLS ports, --exec auto (whose
 * stall measure looks for input unread in the socket, which a multishot
 * receive never leaves there).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "internal/log.h"
#include "internal/rt_ring.h"
#include "net/usock.h"
#include "target/tcp/tcp_int.h"

/* Receive buffers per queue (multishot): 16 x 16 KiB, as many bytes as
 * eight bounce buffers of the epoll path; address space until used. */
#define TCP_URING_NBUFS 16
#define TCP_URING_BUF TCP_RX_BOUNCE

struct tcp_uring {
	struct nvmfd_usock *sock;
	struct nvmfd_txq_batch batch; /* the send in flight (the kernel reads its iovecs) */
	bool cancelled;
	bool watched; /* the eventfd is watched by io_work */
};

int tcp_uring_port_init(struct tcp_port *port)
{
	int ret;

	if (port->gcfg->exec.net != NVMFD_CFG_NET_URING)
		return 0;
	ret = nvmfd_usock_probe();
	if (ret) {
		NVMFD_ERR(TCP_COMP,
			  "port %u: --net uring: this kernel's io_uring cannot drive sockets (%s); "
			  "use --net epoll",
			  port->cfg->portid, strerror(-ret));
		return ret;
	}
	return 0;
}

int tcp_uring_queue_init(struct tcp_queue *q)
{
	const struct nvmfd_cfg_exec *ex = &q->port->gcfg->exec;
	struct nvmfd_usock_opts o = { .nbufs = TCP_URING_NBUFS, .buf_size = TCP_URING_BUF };
	struct tcp_uring *u;
	int ret;

	if (ex->net != NVMFD_CFG_NET_URING)
		return 0;
	switch (ex->uring_recv) {
	case NVMFD_CFG_URING_RECV_MULTISHOT:
		o.recv = NVMFD_USOCK_RECV_MULTISHOT;
		break;
	case NVMFD_CFG_URING_RECV_SINGLE:
		o.recv = NVMFD_USOCK_RECV_SINGLE;
		break;
	case NVMFD_CFG_URING_RECV_AUTO:
	default:
		o.recv = NVMFD_USOCK_RECV_AUTO;
		break;
	}
	if (ex->uring_ring == NVMFD_CFG_URING_RING_WORKER) {
		/* the io_work is initialised later on the same io_cpu: its
		 * storage is what the CQEs queue */
		o.ring = nvmfd_rt_ring_of(q->port->rt, q->io_cpu);
		o.owner = &q->io_work;
		if (!o.ring) {
			NVMFD_ERR_RATELIMIT(TCP_COMP, "queue: --uring-ring worker but the "
						      "runtime has no worker rings");
			return -EINVAL;
		}
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	ret = nvmfd_usock_create(q->fd, &o, &u->sock);
	if (ret) {
		NVMFD_ERR_RATELIMIT(TCP_COMP, "queue: cannot set up its io_uring socket: %s",
				    strerror(-ret));
		free(u);
		return ret;
	}
	q->uring = u;
	return 0;
}

void tcp_uring_queue_free(struct tcp_queue *q)
{
	if (!q->uring)
		return;
	nvmfd_usock_destroy(&q->uring->sock); /* waits for CQEs still owed */
	free(q->uring);
	q->uring = NULL;
}

int tcp_uring_watch_fd(const struct tcp_queue *q)
{
	return nvmfd_usock_event_fd(q->uring->sock);
}

/*
 * Take the result of the send in flight, if it has completed: the PDUs it
 * carried are done (an R2T among them now waits for its H2CData).
 * Return: 1 taken, 0 still in flight (or none), -errno of the send.
 */
static int tcp_uring_sent(struct tcp_queue *q, bool *progress)
{
	struct tcp_uring *u = q->uring;
	unsigned int npdu;
	ssize_t res;

	if (!nvmfd_usock_send_result(u->sock, &res))
		return 0;
	if (res < 0)
		return (int)res;
	npdu = nvmfd_txq_complete(&q->txq, &u->batch, (size_t)res, q->txops, q);
	*progress = true;
	TCP_STAT_ADD(q, bytes_tx, res);
	TCP_STAT_ADD(q, pdus_tx, npdu);
	nvmfd_budget_charge(&q->tx_budget, (uint64_t)res, npdu);
	return 1;
}

int tcp_uring_rx(struct tcp_queue *q, bool *progress)
{
	struct nvmfd_usock *s = q->uring->sock;
	int sent;

	/* a send may complete after the pass that made it (always on the
	 * worker ring; on a queue ring when it waited for a full socket),
	 * and its CQE may come with the host's answer to it (H2CData after
	 * an R2T): account the send first, as the epoll path does */
	if (nvmfd_usock_send_busy(s)) {
		sent = tcp_uring_sent(q, progress);
		if (sent < 0)
			return sent;
	}

	nvmfd_usock_mute(s); /* we look ourselves until tcp_uring_rearm() */
	while (q->state == TCP_Q_IC_WAIT || q->state == TCP_Q_LIVE) {
		enum nvmfd_pdu_ev ev;
		bool pdu_done = false;
		const uint8_t *p;
		size_t used;
		ssize_t n;
		int ret;

		if (!nvmfd_budget_left(&q->rx_budget)) {
			TCP_STAT_ADD(q, rx_budget_exhausted, 1);
			*progress = true; /* more may be waiting: come back */
			return 0;
		}
		n = nvmfd_usock_peek(s, &p);
		if (n == 0)
			return 0; /* nothing yet: a CQE will wake us */
		if (n < 0)
			return (int)n; /* -ECONNRESET: orderly EOF after the data */
		ev = nvmfd_pdu_rx_feed(&q->rx, p, (size_t)n, &used);
		nvmfd_usock_consume(s, used);
		if (used) {
			*progress = true;
			TCP_STAT_ADD(q, bytes_rx, used);
			nvmfd_budget_charge(&q->rx_budget, (uint64_t)used, 0);
		}
		ret = tcp_rx_event(q, ev, &pdu_done);
		if (ret)
			return ret;
		if (pdu_done)
			nvmfd_budget_charge(&q->rx_budget, 0, 1);
	}
	return 0;
}

int tcp_uring_tx(struct tcp_queue *q, bool *progress)
{
	struct tcp_uring *u = q->uring;
	bool sent_now = false;
	int ret;

	q->tx_blocked = false;
	nvmfd_budget_start_slice(&q->tx_budget);
	for (;;) {
		unsigned int max_pdus = TCP_TX_BATCH;

		if (nvmfd_usock_send_busy(u->sock)) {
			ret = tcp_uring_sent(q, progress);
			if (ret < 0)
				return ret;
			if (!ret) {
				/* the socket is full: the send waits in the
				 * kernel and its CQE wakes us (worker ring: a
				 * send of this pass goes to the kernel with the
				 * worker's next enter: that is no wait) */
				if (!sent_now || !nvmfd_usock_shared(u->sock)) {
					TCP_STAT_ADD(q, eagain_sends, 1);
					q->tx_blocked = true;
				}
				break;
			}
			continue;
		}
		if (nvmfd_txq_empty(&q->txq))
			break;
		if (!nvmfd_budget_left(&q->tx_budget)) {
			TCP_STAT_ADD(q, tx_budget_exhausted, 1);
			*progress = true;
			break;
		}
		if (q->tx_budget.pdus_max && q->tx_budget.pdus_max - q->tx_budget.pdus < max_pdus)
			max_pdus = (unsigned int)(q->tx_budget.pdus_max - q->tx_budget.pdus) ?: 1;
		if (!nvmfd_txq_gather(&q->txq, max_pdus, q->txops, q, &u->batch))
			break;
		/* with a receive re-arm prepared before, one io_uring_enter */
		ret = nvmfd_usock_send(u->sock, u->batch.iov, u->batch.iovcnt, u->batch.more);
		if (ret)
			return ret;
		sent_now = true;
	}
	return nvmfd_usock_submit(u->sock); /* a receive re-arm without a send */
}

/* Watch the eventfd (a persistent edge-triggered registration: no system
 * call after the first), then unmute; a CQE that came in while muted
 * runs the item again instead of waiting for a signal that never comes. */
static int tcp_uring_sleep(struct tcp_queue *q)
{
	struct tcp_uring *u = q->uring;
	int ret;

	if (!nvmfd_usock_shared(u->sock)) { /* worker ring: the sink queues us */
		ret = nvmfd_rt_watch_fd(&q->io_work, nvmfd_usock_event_fd(u->sock),
					EPOLLIN | EPOLLET);
		if (ret)
			return ret;
		u->watched = true;
	}
	if (nvmfd_usock_unmute(u->sock)) {
		TCP_STAT_ADD(q, requeues, 1);
		q->requeued = true;
		nvmfd_rt_queue_work(&q->io_work);
	}
	return 0;
}

int tcp_uring_rearm(struct tcp_queue *q)
{
	return tcp_uring_sleep(q);
}

bool tcp_uring_send_busy(const struct tcp_queue *q)
{
	return nvmfd_usock_send_busy(q->uring->sock);
}

bool tcp_uring_close(struct tcp_queue *q)
{
	struct tcp_uring *u = q->uring;
	int ret;

	if (!u->cancelled) {
		u->cancelled = true;
		ret = nvmfd_usock_cancel(u->sock);
		if (ret)
			NVMFD_WARN_RATELIMIT(TCP_COMP, "queue %u: cannot cancel socket I/O: %s", q->id,
					     strerror(-ret));
	}
	if (nvmfd_usock_idle(u->sock))
		return false;
	ret = tcp_uring_sleep(q); /* the cancels' CQEs wake us */
	if (ret && ret != -ECANCELED)
		NVMFD_ERR_RATELIMIT(TCP_COMP, "queue %u: cannot watch socket completions: %s", q->id,
				    strerror(-ret));
	return true;
}

void tcp_uring_unwatch(struct tcp_queue *q)
{
	if (q->uring->watched)
		nvmfd_rt_unwatch_fd(&q->io_work, nvmfd_usock_event_fd(q->uring->sock));
	q->uring->watched = false;
}

/*
 * The backend on the worker ring too (doc/execution-model.md §9.1): the
 * queue's file and block device reads and writes are SQEs of the same
 * io_uring as its socket's, so the worker's one io_uring_enter() submits
 * both and waits for all their CQEs. --cq-pool shared keeps the per-CPU
 * completion ring it names.
 */
struct nvmfd_rt_ring *tcp_uring_backend_ring(struct tcp_queue *q)
{
	const struct nvmfd_cfg_exec *ex = &q->port->gcfg->exec;
	struct nvmfd_rt_ring *rr;

	if (ex->net != NVMFD_CFG_NET_URING || ex->uring_ring != NVMFD_CFG_URING_RING_WORKER ||
	    ex->cq_pool_shared)
		return NULL;
	rr = nvmfd_rt_ring_of(q->port->rt, q->io_cpu);
	if (!rr)
		NVMFD_WARN_RATELIMIT(TCP_COMP,
				     "queue %u: --uring-ring worker but no worker ring for cpu %d: "
				     "backend completions on a ring of its own",
				     q->id, q->io_cpu);
	return rr;
}

void tcp_uring_json(struct tcp_queue *q, json_object *o)
{
	struct nvmfd_usock_stats st;
	json_object *u;

	json_object_object_add(o, "net", json_object_new_string(q->uring ? "uring" : "epoll"));
	if (!q->uring)
		return;
	u = json_object_new_object();
	if (!u)
		return;
	nvmfd_usock_get_stats(q->uring->sock, &st);
	json_object_object_add(u, "ring", json_object_new_string(
						  nvmfd_usock_shared(q->uring->sock) ? "worker" : "queue"));
	json_object_object_add(u, "recv", json_object_new_string(
						  nvmfd_usock_multishot(q->uring->sock) ? "multishot"
											: "single"));
	json_object_object_add(u, "recv_cqes", json_object_new_uint64(st.recv_cqes));
	json_object_object_add(u, "recv_bytes", json_object_new_uint64(st.recv_bytes));
	json_object_object_add(u, "recv_arms", json_object_new_uint64(st.recv_arms));
	json_object_object_add(u, "enobufs", json_object_new_uint64(st.enobufs));
	json_object_object_add(u, "sends", json_object_new_uint64(st.sends));
	json_object_object_add(u, "short_sends", json_object_new_uint64(st.short_sends));
	json_object_object_add(u, "submits", json_object_new_uint64(st.submits));
	json_object_object_add(o, "uring", u);
}
