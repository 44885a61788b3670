/* SPDX-License-Identifier: MIT */
/*
 * tcp_int.h - private to the NVMe/TCP transport (src/target/tcp/): the
 * queue (one TCP connection = one NVMe queue) and the port, shared by
 * tcp.c (queue, rx, tx, io_work) and port.c (listen/accept, setup
 * deadlines, release and migration, stats, the transport ops).
 *
 * Ownership: a port owns its queues (port->queues, port->lock); a queue's
 * state is touched only by its io_work (one owner at a time,
 * doc/conventions.md §5.2); other threads set q->shutdown / q->expired
 * and kick the work. Memory is freed by the port's release work, after
 * the queue's io_work was cancelled.
 *
 * Lock order (doc/design.md "Locks"): port->lock, then a runtime pool's
 * lock (nvmfd_rt_queue_work() under port->lock for kicks); the completion
 * pool's and the runtime group's locks are leaves taken with nothing else.
 */
#ifndef NVMFD_TARGET_TCP_INT_H
#define NVMFD_TARGET_TCP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <nvmfd/pdu.h>

#include "internal/proc.h"
#include "internal/rt.h"
#include "net/txq.h"
#include "target/core.h"
#include "target/xprt.h"

#define TCP_COMP "tcp"
#define TCP_ACCEPT_BATCH 16 /* connections per accept run (SPDK: 16) */
#define TCP_RX_BOUNCE 16384 /* receive buffer for headers and small data */
#define TCP_RX_DIRECT_MIN 1024 /* larger data goes straight into the slot */
#define TCP_FABRICS_ICD 8192 /* doc/protocol-notes.md §1.8: Linux NVME_TCP_ADMIN_CCSZ */
#define TCP_MAX_SLOTS 0xfffe /* TTAG is a slot index; 0xffff stays unused */
/* command slots of a queue until it is enabled (xprt.h enable_queue):
 * its Connect and the DH-HMAC-CHAP exchange, one command at a time, with
 * room for a host that sends the next one before a slot's response left */
#define TCP_SETUP_SLOTS 4
#define TCP_DEF_QUEUE_SIZE 128
#define TCP_DEF_DEADLINE_US 1000
#define TCP_TX_BATCH 16 /* PDUs gathered into one sendmsg */
#define TCP_TERM_BUF (sizeof(struct nvmfd_tcp_term) + NVMFD_TCP_TERM_ERR_DATA_MAX)

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Command slot lifecycle (doc/conventions.md §6); legal moves in tcp.c's
 * tcp_req_next[] table. */
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
	struct nvmfd_tx_pdu tx; /* the PDU being sent, on q->txq */
	uint32_t next_free; /* free-list link (slot index) */
	uint32_t icd_len; /* in-capsule data bytes of the capsule */
	nvmfd_status_t pre_status; /* transport error found before data was consumed */
	uint32_t h2c_rcvd; /* bytes received through H2CData */
	uint32_t c2h_off; /* offset of the next C2HData chunk */
	bool c2h_success; /* last C2HData carries SUCCESS, no CapsuleResp */
	uint32_t pdu_dlen; /* data bytes of the C2HData being sent */
	/* the C2HData being sent comes from lent backend memory, locked
	 * (req.lent, bytes [held_off, +held_len)) until tcp_lent_settle() */
	bool lend_held;
	uint32_t held_off, held_len;
	uint8_t hdr[sizeof(struct nvmfd_tcp_data) + NVMFD_TCP_DIGEST_LEN];
	uint8_t ddgst[NVMFD_TCP_DIGEST_LEN];
	/* the CapsuleResp sent behind the last C2HData (the txq trailer) */
	uint8_t rsp[sizeof(struct nvmfd_tcp_rsp) + NVMFD_TCP_DIGEST_LEN];
};

enum tcp_queue_state {
	TCP_Q_TLS, /* TLS port: first byte, then the TLS handshake (tcp_tls.c) */
	TCP_Q_IC_WAIT, /* waiting for ICReq */
	TCP_Q_LIVE, /* ICResp sent (or queued): capsules flow */
	TCP_Q_CLOSING, /* fatal error or shutdown: stop receiving and sending */
	TCP_Q_DRAINING, /* closing, waiting (by event) for backend ios to end */
	TCP_Q_DEAD, /* torn down, waiting for the release work */
};

/* Connection setup progress, for the ICReq/Connect deadlines. */
enum tcp_stage {
	TCP_STAGE_ACCEPTED, /* waiting for ICReq; as q->expired: no ICReq in time */
	TCP_STAGE_IC_DONE, /* ICReq handled; as q->expired: no Connect in time */
	TCP_STAGE_CONNECTED, /* Connect succeeded: no setup deadline any more */
	TCP_STAGE_TLS, /* TLS handshake; as q->expired: not finished in time */
};

/* Per-queue counters (doc/execution-model.md §7, the numbers every mode must
 * expose): written by the owner with relaxed stores, read relaxed by the
 * stats dumper. Backend completion counters live in the core's completion
 * context (nvmfd_cq_get_stats()). */
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
	uint64_t kicks;
	uint64_t ddgst_errors;
	uint64_t wakeups; /* passes not started by our own re-queue */
	uint64_t work_passes; /* passes that progressed (rx, a completion, tx) */
};

#define TCP_STAT_ADD(q, f, n) \
	__atomic_store_n(&(q)->st.f, (q)->st.f + (uint64_t)(n), __ATOMIC_RELAXED)
#define TCP_STAT_LOAD(q, f) __atomic_load_n(&(q)->st.f, __ATOMIC_RELAXED)

struct tcp_port;
struct tcp_uring;

struct tcp_queue {
	struct nvmfd_tgt_qp qp;
	struct tcp_port *port;
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
	bool rx_drained; /* this pass's last recv() was short: no more until the next pass */
	uint8_t *bounce;
	uint32_t bounce_off;
	uint32_t bounce_len;
	/* slots [0, nr_reqs) in use, in a mapping reserved for max_reqs
	 * (reqs_size bytes, touched only as slots are added): TCP_SETUP_SLOTS
	 * until enabled, then 2 x entries + 1 (tcp_enable_queue()). nr_reqs
	 * only grows; owner writes (relaxed), stats read it relaxed */
	struct tcp_req *reqs;
	uint32_t nr_reqs;
	uint32_t max_reqs;
	size_t reqs_size;
	unsigned int cq_depth; /* depth the completion context was opened with, 0: none yet */
	uint32_t free_head; /* UINT32_MAX: empty */
	uint32_t nr_free;
	uint32_t nr_state[TCP_REQ__MAX]; /* owner writes, relaxed; stats read */
	uint8_t *data;
	size_t data_size;
	uint32_t slot_size;
	int ring_fd; /* the core's completion eventfd, -1: completions kick us */
	bool ring_watched; /* ring_fd armed since the last re-arm (not polling) */
	struct nvmfd_rt *ctrl_rt; /* --wq-per-ctrl: the controller's runtime, or NULL */
	uint16_t ctrl_cntlid; /* its controller, for stats */
	bool migrated; /* --wq-per-ctrl: migration requested (once) */
	struct tcp_queue *mig_next; /* port->migrate, port->lock */
	struct nvmfd_txq txq; /* PDUs to send: slots' and control PDUs */
	struct nvmfd_tx_pdu ic_tx; /* the ICResp */
	uint8_t ic_pdu[sizeof(struct nvmfd_tcp_icresp)];
	struct nvmfd_tx_pdu term_tx; /* the C2HTermReq */
	uint8_t term_pdu[TCP_TERM_BUF];
	uint32_t term_len;
	bool term_pending; /* term_pdu holds a C2HTermReq to send */
	bool tx_blocked; /* last send returned -EAGAIN */
	/* tcp_tx()'s send window: C2HData prepared meanwhile go out from lent
	 * backend memory (held[]) instead of a copy in the slot */
	bool lend_window;
	uint32_t nr_held;
	struct tcp_req *held[TCP_TX_BATCH];
	bool requeued; /* the next pass comes from our own re-queue */
	bool running; /* listed and queued: only io_work touches the slots now */
	/* --exec auto and the setup-deadline stall check (tcp_auto.c);
	 * port->lock unless said otherwise */
	struct nvmfd_auto ctl;
	unsigned int rescuing; /* the checker is moving io_work: do not free */
	struct tcp_queue *rescue_next; /* the checker's list of queues to move */
	struct nvmfd_rt *mv_rt; /* the decided destination of that move */
	int mv_cpu;
	struct nvmfd_rt *run_rt; /* where io_work runs now (port->rt or the escape) */
	int run_cpu; /* atomic: its io_cpu there */
	uint64_t stalls; /* atomic: setup deadlines met while io_work was starved */
	bool closing; /* atomic: teardown started (owner sets): not stalled */
	uint64_t in_passes; /* passes when the checker last looked */
	uint64_t in_since_ns; /* input unread and no pass since (0: no) */
	uint64_t stall_ns; /* atomic: the checker's last tcp_auto_stall_ns() */
	uint64_t stall_unread_ns, stall_queued_ns; /* atomic: its two parts */
	uint64_t ctl_runs, ctl_qdelay, ctl_cmds; /* the previous sample */
	uint64_t ctl_ns;
	bool auto_poll; /* the controller sets this queue's idle-poll period */
	unsigned int auto_poll_us; /* atomic: that period, checker writes */
	unsigned int poll_applied; /* owner: the period q->idle runs with */
	bool auto_budget; /* the controller sets this queue's byte budgets */
	bool auto_apply; /* auto_poll || auto_budget: io_work calls tcp_auto_apply() */
	unsigned int auto_budget_shift; /* atomic: budgets / 2^this, checker writes */
	unsigned int budget_applied; /* owner: the shift q->rx/tx_budget run with */
	uint64_t t_qdelay; /* this tick's mean queue delay (tcp_auto_port_tick()) */
	unsigned int t_pool; /* the apools index it runs on now */
	bool auto_local_peer; /* auto: the host is on this machine (set at accept) */
	bool in_want; /* atomic: the watchdog asks where the next data comes from */
	int in_cpu; /* atomic: the owner's answer (-1: none since the last tick) */
	uint64_t ctl_passes, ctl_work, ctl_dl, ctl_cpl_ev; /* the previous sample */
	uint64_t cpl_eps; /* cqe_events per second, last tick (port->lock) */
	bool cq_auto; /* auto chose the completion source at creation */
	bool cq_shared; /* ... and it is the CPU's shared ring */
	unsigned int cq_peers; /* the decision's inputs: queues on io_cpu then */
	uint64_t cq_peer_eps; /* ... and their completion events per second */
	struct nvmfd_idle_poll idle;
	struct nvmfd_budget rx_budget;
	struct nvmfd_budget tx_budget;
	struct tcp_qstats st;
	/* TLS (tcp_tls.c): the connection, or NULL (plain); the transmit
	 * callbacks (tcp_txq_ops, or tcp_txq_ops_tls sending through it) */
	struct nvmfd_tls *tls;
	const struct nvmfd_txq_ops *txops;
	const char *tls_why; /* why the PSK lookup failed, for the log */
	/* --net uring (tcp_uring.c): the socket's io_uring, or NULL (epoll) */
	struct tcp_uring *uring;
	const char *tls_cipher; /* after the handshake */
	bool tls_ktls;
	int tls_idver;
	char tls_hostnqn[NVMFD_NQN_SIZE]; /* from the PSK identity */
	char tls_subnqn[NVMFD_NQN_SIZE];
};

/* --exec auto (tcp_auto.c): one pool's CPU pressure. */
struct tcp_auto_pool {
	uint64_t run_delay_ns[NVMFD_RT_SCHED_WORKERS]; /* per worker, at at_ns */
	uint64_t exec_ns[NVMFD_RT_SCHED_WORKERS];
	uint64_t at_ns;
	unsigned int nworkers;
	int cpu; /* a bound pool's CPU (-1: unbound, or not known yet) */
	double pressure; /* the most any worker's run delay grew per wall ns */
	double busy; /* its workers' time on a CPU per wall ns, last tick */
	/* the tick's two longest mean queue delays of queues running here
	 * (tcp_auto_port_tick()), for each queue's peer_delay_ns */
	uint64_t qd1, qd2;
	const struct tcp_queue *qd1_q;
	/* the tick's per-CPU answers for queues running here (the same for
	 * each of them): another CPU is better (knobs.better_margin), another
	 * CPU was idle (knobs.spare_idle_min) */
	bool better, spare;
};

/* --exec auto: one CPU (tcp_auto.c), housekeeping thread. */
struct tcp_auto_cpu {
	struct nvmfd_proc_cpu prev; /* the last reading */
	uint64_t ours_exec_ns, ours_delay_ns; /* our bound workers there, this tick */
	struct nvmfd_auto_cpu now; /* smoothed over ticks (EWMA 1/2) */
	double delay; /* smoothed run-queue delay of others (schedstat) */
	double head; /* smoothed idle + niced share: room for a nice-0 task */
};

/* CPU pressure stall information (cgroup cpu.pressure, else
 * /proc/pressure/cpu): the "some" share of the last tick. */
struct tcp_auto_psi {
	char path[256]; /* "" when the kernel has none */
	uint64_t total_us;
	uint64_t at_ns;
	double some; /* 0..1 */
};

/* A listener: the transport's struct nvmfd_tgt_port. */
struct tcp_port {
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
	pthread_mutex_t lock; /* protects queues, nr_queues, dead, migrate, next_id */
	pthread_cond_t cond; /* nr_queues dropped */
	struct tcp_queue *queues;
	unsigned int nr_queues;
	struct tcp_queue *dead;
	struct tcp_queue *migrate; /* queues to move to their controller's runtime */
	unsigned int next_id;
	uint64_t accepted; /* atomic */
	uint64_t accept_errors; /* atomic */
	uint64_t accept_shed; /* atomic: closed at once, no fd left (EMFILE) */
	int spare_fd; /* /dev/null, given up to accept-and-close on EMFILE */
	struct nvmfd_rt_group *ctrl_rts; /* --wq-per-ctrl: one runtime per controller */
	/* --exec auto: per-pool CPU pressure of port->rt, then of the escape
	 * runtime's pools; housekeeping thread only (tcp_auto.c) */
	struct tcp_auto_pool *apools;
	unsigned int napools, nbound;
	struct nvmfd_tls_ctx *tls_ctx; /* cfg->tls: the server context */
	bool tls_logged; /* atomic: the record layer was logged at INFO */
	struct tcp_auto_psi psi;
	struct tcp_auto_cpu *acpus; /* --exec auto: per CPU, [ncpus] */
	struct nvmfd_proc_cpu *cpu_read; /* scratch for nvmfd__proc_cpus() */
	unsigned int ncpus;
	bool has_delay; /* /proc/schedstat read */
	bool niced; /* this process runs at nice > 0 (its time is "nice") */
	bool cpus_wanted; /* atomic: a queue had commands, polls or is away */
	uint64_t cpus_at_ns;
};

/* Backend completion polling is on for @q: --backend-poll, or --exec auto
 * while the controller has the queue idle-polling (the backend follows
 * it, and winds down with it). Context: queue owner. */
static inline bool tcp_backend_polling(const struct tcp_queue *q)
{
	return q->port->gcfg->exec.backend_poll || (q->auto_poll && q->poll_applied);
}

/* The io_work pass deadline, us: @us (configured), divided as the
 * controller's budgets are (--exec auto, tcp_auto_apply()), at least
 * 50 us. Context: queue owner. */
static inline uint32_t tcp_auto_pass_us(const struct tcp_queue *q, uint32_t us)
{
	uint32_t v = q->budget_applied ? us >> q->budget_applied : us;

	return v < 50 && us >= 50 ? 50 : v;
}

/* tcp.c */
int tcp_queue_create(struct tcp_port *port, int fd);
void tcp_queue_free(struct tcp_queue *q);
void tcp_queue_kick(struct tcp_queue *q);
void tcp_queue_shutdown(struct tcp_queue *q);
void tcp_io_work(struct nvmfd_work *w);
json_object *tcp_queue_json(struct tcp_queue *q);

int tcp_rx_event(struct tcp_queue *q, enum nvmfd_pdu_ev ev, bool *pdu_done);

extern const struct nvmfd_txq_ops tcp_txq_ops_tls;

/* tcp_uring.c (--net uring, doc/execution-model.md §9). Context: the
 * queue's io_work unless said otherwise. */
/* Port setup: with net uring, check the kernel. Return: 0, -errno (logged). */
int tcp_uring_port_init(struct tcp_port *port);
/* With net uring, give @q (socket set) its io_uring. Return: 0, -errno. Context: accept. */
int tcp_uring_queue_init(struct tcp_queue *q);
/* Free it (waits for CQEs still owed). Context: release/accept work. */
void tcp_uring_queue_free(struct tcp_queue *q);
/* The fd io_work watches instead of the socket (for moves). */
int tcp_uring_watch_fd(const struct tcp_queue *q);
/* tcp_rx()/tcp_tx() of a uring queue. Return: 0, -errno/-EPROTO to close. */
int tcp_uring_rx(struct tcp_queue *q, bool *progress);
int tcp_uring_tx(struct tcp_queue *q, bool *progress);
/* Before sleeping: watch and unmute (re-queues when CQEs slipped in). */
int tcp_uring_rearm(struct tcp_queue *q);
/* A sendmsg SQE is in flight: no synchronous send may start. */
bool tcp_uring_send_busy(const struct tcp_queue *q);
/* Teardown: cancel (once); true while CQEs are owed (a CQE wakes us). */
bool tcp_uring_close(struct tcp_queue *q);
/* Teardown, once idle: stop watching the eventfd. */
void tcp_uring_unwatch(struct tcp_queue *q);
/* --uring-ring worker: the worker ring @q's backend completion context
 * goes on (its socket's), or NULL (other modes, --cq-pool shared, no
 * ring: logged). Context: queue owner (enable). */
struct nvmfd_rt_ring *tcp_uring_backend_ring(struct tcp_queue *q);
/* Stats: "net", and the "uring" counters. Context: under port->lock. */
void tcp_uring_json(struct tcp_queue *q, json_object *o);

/* tcp_tls.c */
int tcp_tls_port_init(struct tcp_port *port);
void tcp_tls_port_fini(struct tcp_port *port);
/* TCP_Q_TLS: peek the first byte, run the handshake. Return: 0 (the state
 * says where it stands), -errno / -EPROTO to close. Context: io_work. */
int tcp_tls_step(struct tcp_queue *q, bool *progress);
ssize_t tcp_tls_sendv(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more);

/* port.c */
void tcp_port_release(struct tcp_port *port, struct tcp_queue *q);
void tcp_port_migrate(struct tcp_port *port, struct tcp_queue *q);
void tcp_queue_move(struct tcp_queue *q, struct nvmfd_rt *rt, int io_cpu);

/* tcp_auto.c */
void tcp_auto_queue_init(struct tcp_queue *q);
int tcp_auto_port_init(struct tcp_port *port);
void tcp_auto_port_fini(struct tcp_port *port);
void tcp_auto_sample_pools(struct tcp_port *port, uint64_t now_ns);
uint64_t tcp_auto_stall_ns(struct tcp_queue *q, uint64_t pending_ns, uint64_t now_ns);
bool tcp_auto_stalled(struct tcp_queue *q, uint64_t pending_ns, int missed);
void tcp_auto_queue_tick(struct tcp_queue *q, uint64_t pending_ns, uint64_t now_ns,
			 struct tcp_queue **rescue);
void tcp_auto_rescue(struct tcp_port *port, struct tcp_queue *list);
void tcp_auto_queue_json(struct tcp_queue *q, json_object *o);
void tcp_auto_apply(struct tcp_queue *q);
void tcp_auto_note_incoming(struct tcp_queue *q);
void tcp_auto_port_tick(struct tcp_port *port, uint64_t now_ns);
enum nvmfd_cq_src tcp_auto_cq_source(struct tcp_queue *q);
uint64_t tcp_queue_stall_ns(struct nvmfd_tgt_qp *qp);
void tcp_queue_stall_parts(struct nvmfd_tgt_qp *qp, uint64_t *unread_ns, uint64_t *queued_ns);

#endif /* NVMFD_TARGET_TCP_INT_H */
