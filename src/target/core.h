/* SPDX-License-Identifier: MIT */
/*
 * core.h - private to the src/target .c files (and their unit tests): the target
 * object, subsystems, namespaces and controllers of the transport-
 * independent NVMe-oF core.
 *
 * Locking: tgt->lock (a mutex) protects the control path only: the
 * controller registry, cntlid allocation, each controller's queue table,
 * held AERs, pending events and changed-namespace list. The data path (I/O
 * commands) never takes it: it reads immutable configuration, the
 * namespace's atomic enable flag and the controller's atomic CC/CSTS; a
 * failed command records its Error Information entry under the
 * controller's own err_lock (a leaf).
 *
 * Ownership: nvmfd__tgt_core_create() allocates the target core and opens
 * backends, nvmfd__tgt_core_destroy() closes and frees them. A controller
 * is reference counted: the registry does not hold a reference, each
 * connected queue holds one; the admin queue's teardown removes it from the
 * registry, and the last nvmfd__tgt_ctrl_put() frees it.
 */
#ifndef NVMFD_TARGET_CORE_H
#define NVMFD_TARGET_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "target/xprt.h"

#define NVMFD_TGT_AER_MAX 4 /* AERL 3 (0's based), as nvmet's NVMET_ASYNC_EVENTS */
#define NVMFD_TGT_EVT_MAX 8 /* events kept while no AER is outstanding */
#define NVMFD_TGT_DISC_KATO_MS 120000 /* discovery controller default (nvmet) */
#define NVMFD_TGT_CAP_TO 15 /* CAP.TO, 500 ms units (7.5 s, as nvmet) */
#define NVMFD_TGT_NN 1024 /* Identify NN/MNAN floor (nvmet's NVMET_MAX_NAMESPACES) */
#define NVMFD_TGT_HK_TICK_MS 100 /* housekeeping tick */
#define NVMFD_TGT_ERR_LOG_MAX 128 /* Error Information log entries (ELPE 127, as nvmet) */

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "0.0.0"
#endif

/* A namespace slot's life (tgt->lock): FREE -> LIVE (added) -> DRAINING
 * (removed: no new command reaches the backend, ios already submitted
 * finish) -> CLOSING (backend being closed off the lock) -> FREE. */
enum nvmfd_tgt_ns_state {
	NVMFD_TGT_NS_FREE,
	NVMFD_TGT_NS_LIVE,
	NVMFD_TGT_NS_DRAINING,
	NVMFD_TGT_NS_CLOSING,
};

/* One namespace slot of a subsystem. */
struct nvmfd_tgt_ns {
	/* atomic, stored last (release) when the slot is filled: a reader
	 * that sees its NSID (acquire) sees every field below; 0 = none */
	uint32_t nsid;
	uint8_t state; /* enum nvmfd_tgt_ns_state, tgt->lock */
	struct nvmfd_bk *bk;
	enum nvmfd_bk_type bk_type; /* of bk, for Identify (bk may be closing) */
	bool read_only;
	uint64_t size; /* bytes, atomic (resize) */
	uint64_t nsze; /* logical blocks, atomic (resize) */
	unsigned int lba_shift;
	uint8_t uuid[16];
	uint8_t nguid[16];
	bool enabled; /* atomic: read on the data path, written by the control path */
	/* backend ios of this namespace submitted and not yet completed
	 * (atomic, seq_cst: see nvmfd__tgt_ns_get()) */
	int inflight;
	char path[64]; /* for logs, maybe cut */
};

struct nvmfd_tgt_subsys {
	struct nvmfd_tgt *tgt;
	/* the subsystem's attributes as created (the core's own copy: serial,
	 * model, firmware, version, cntlid range, qid_max); NULL for discovery.
	 * Its hosts and allow_any_host are NOT used: the ACL is the daemon's
	 * live config, read under tgt->lock (nvmfd__tgt_live_subsys_locked()) */
	const struct nvmfd_cfg_subsys *cfg;
	int idx; /* unique number (creation order), -1 for discovery */
	bool is_disc;
	bool deleted; /* tgt->lock: out of the table, freed by housekeeping */
	int refs; /* atomic: controllers (and lookups) holding it */
	char nqn[NVMFD_NQN_SIZE];
	unsigned int nr_ns; /* slots used (atomic, acquire): FREE ones are reused */
	struct nvmfd_tgt_ns ns[NVMFD_CFG_MAX_NS];
	uint16_t next_cntlid; /* tgt->lock */
	struct nvmfd_tgt_ctrl *ctrls; /* registry list, tgt->lock */
	struct nvmfd_tgt_subsys *zombie_next; /* tgt->zombies link */
};

/* One listener of the target (transport port plus what the core keeps of
 * it). Slots are in cfg->ports[] order; edited under port_lock and
 * tgt->lock, read under either. */
struct nvmfd_tgt_port_slot {
	/* copy of the port's config at creation: the transport and its queues
	 * borrow it (qp->port) until remove_port returned. Its subsys_idx
	 * links are NOT used: links are the daemon's live config */
	struct nvmfd_cfg_port cfg;
	struct nvmfd_tgt_port *port;
	const struct nvmfd_tgt_xprt_type *xprt;
	uint16_t bound; /* service id actually bound (trsvcid "0") */
};

/* Per-queue I/O counters, written by the queue owner with relaxed atomics,
 * summed for the SMART log. Indexed by qid. */
struct nvmfd_tgt_qstats {
	uint64_t reads;
	uint64_t writes;
	uint64_t bytes_read;
	uint64_t bytes_written;
};

/* Arbitration Burst "no limit" (Base 2.0 §5.27.1.1) */
#define NVMFD_TGT_ARB_DEFAULT 0x7u
/* Over Temperature Threshold of the composite sensor, kelvin (70 C) */
#define NVMFD_TGT_TMPTH_OVER_DEFAULT 343u

/* The current values of the Set Features features an I/O controller
 * stores but does not act on (Arbitration, Power Management, Temperature
 * Threshold, Error Recovery). tgt->lock. */
struct nvmfd_tgt_ctrl_feat {
	uint32_t arbitration; /* cdw11 of Arbitration (01h), reserved bits clear */
	uint32_t power_mgmt; /* PS (always 0) and WH of Power Management (02h) */
	uint16_t tmpth_over; /* composite sensor thresholds (04h), kelvin */
	uint16_t tmpth_under;
	uint32_t err_recovery; /* TLER of Error Recovery (05h); DULBE never set */
};

struct nvmfd_tgt_ctrl {
	struct nvmfd_tgt *tgt;
	struct nvmfd_tgt_subsys *subsys;
	struct nvmfd_tgt_ctrl *next; /* registry link, tgt->lock */
	int refs; /* atomic */
	uint16_t cntlid;
	bool registered; /* in subsys->ctrls, tgt->lock */
	bool kato_expired; /* tgt->lock */
	bool kato_deferred; /* expiry deferred for a target-side stall, tgt->lock */
	uint64_t kato_stalls; /* atomic: such deferrals (stats) */
	const struct nvmfd_cfg_port *port;
	char hostnqn[NVMFD_NQN_SIZE];
	uint8_t hostid[16];
	uint16_t mqes; /* CAP.MQES, 0's based */
	uint16_t qid_max; /* subsystem limit of I/O queues */
	uint16_t nr_io_queues; /* negotiated (Number of Queues), atomic */
	uint32_t cc; /* atomic; written by the admin queue owner */
	uint32_t csts; /* atomic; admin owner and housekeeping */
	uint32_t kato_ms; /* atomic; 0 = no keep-alive */
	uint32_t aen_cfg; /* Async Event Configuration, tgt->lock */
	struct nvmfd_tgt_ctrl_feat feat; /* stored features, tgt->lock */
	uint32_t aen_masked; /* AEN bits sent and not yet cleared by a log read */
	/* queue table, tgt->lock; sqs[0] is the admin queue */
	struct nvmfd_tgt_qp **sqs;
	struct nvmfd_tgt_qstats *qstats; /* qid_max + 1 entries */
	/* held AERs and pending events, tgt->lock */
	struct nvmfd_tgt_req *aer[NVMFD_TGT_AER_MAX];
	unsigned int nr_aer;
	uint32_t evt[NVMFD_TGT_EVT_MAX];
	unsigned int nr_evt;
	/* Error Information log: newest at err_log[(err_count - 1) % MAX],
	 * err_lock (a leaf: a failed command takes it on its queue's thread,
	 * so the data path never takes the target-wide tgt->lock) */
	pthread_mutex_t err_lock;
	uint64_t err_count;
	struct nvmfd_error_log_entry err_log[NVMFD_TGT_ERR_LOG_MAX];
	/* changed namespace list, tgt->lock; overflow = 0xffffffff entry */
	unsigned int nr_changed;
	uint32_t changed[NVMFD_CHANGED_NS_LIST_MAX];
};

/* (host NQN, peer address) pairs whose failed DH-HMAC-CHAP attempts are
 * counted; the least recently used one is reused. */
#define NVMFD_TGT_AUTH_BUCKETS 128

struct nvmfd_tgt {
	const struct nvmfd_cfg *cfg;
	pthread_mutex_t lock; /* control path: see the file comment */
	unsigned int nr_subsys;
	/* the table, in cfg->subsys[] order (tgt->lock; the daemon keeps the
	 * two in step): pointers stay valid while a reference is held */
	struct nvmfd_tgt_subsys *subsys[NVMFD_CFG_MAX_SUBSYS];
	struct nvmfd_tgt_subsys *disc;
	struct nvmfd_tgt_subsys *zombies; /* deleted, waiting for refs/ns to drain */
	int next_subsys_idx;
	uint64_t genctr; /* discovery log generation, tgt->lock */
	/* filled by target.c; NULL/0 in core-only (unit test) targets */
	struct nvmfd_rt *rt;
	/* --exec auto: an unbound runtime (system scope, not strict) where
	 * starved queues and the ports' accept/release work run; NULL otherwise */
	struct nvmfd_rt *rt_escape;
	/* target stop: an unbound runtime (system scope, not strict) that
	 * every queue, the ports' release work and the shared rings'
	 * completion work move to, so a starved CPU does not hold the stop
	 * up; NULL before nvmfd_tgt_stop() */
	struct nvmfd_rt *rt_stop;
	/* completion pool of every queue's backend ios; subsys.c creates a
	 * per-queue one, target.c the configured one once the runtime exists */
	struct nvmfd_cq_pool *cqpool;
	pthread_mutex_t port_lock; /* the port table vs housekeeping and stats */
	struct nvmfd_tgt_port_slot *ports[NVMFD_CFG_MAX_PORTS];
	unsigned int nr_ports;
	pthread_t hk_thread; /* housekeeping: keep-alive expiry */
	pthread_mutex_t hk_lock; /* protects hk_stop */
	pthread_cond_t hk_cond;
	bool hk_running;
	bool hk_stop;
	bool started;
	bool stopped;
	bool bk_closed;
	/* removed namespaces being fsynced on threads of their own
	 * (stop_flush; subsys.c ns_close_drained()); tgt->lock */
	unsigned int bk_closers;
	pthread_cond_t bk_closers_cond;
	/* DH-HMAC-CHAP queue transactions (atomics, auth.c): succeeded,
	 * failed, and queues closed for not authenticating in time */
	uint64_t auth_ok;
	uint64_t auth_failed;
	uint64_t auth_timeouts;
	/* failed transactions per (host NQN, peer address): token buckets
	 * (auth.c, under auth_fail_lock), and AUTH_Negotiates they refused */
	pthread_mutex_t auth_fail_lock;
	struct nvmfd_tgt_auth_bucket {
		char hostnqn[NVMFD_NQN_SIZE];
		char addr[64];
		uint64_t tokens_ns; /* tokens, in units of interval: ns "earned" */
		uint64_t last_ns; /* last update; 0: free entry */
	} auth_fail[NVMFD_TGT_AUTH_BUCKETS];
	uint64_t auth_throttled;
};

/* Every subsystem of @tgt and then the discovery one, under tgt->lock. */
#define nvmfd__tgt_for_each_subsys(tgt, i, s)                                             \
	for ((i) = 0; (i) <= (tgt)->nr_subsys &&                                           \
		      (((s) = (i) < (tgt)->nr_subsys ? (tgt)->subsys[i] : (tgt)->disc), 1); \
	     (i)++)

/* subsys.c */
int nvmfd__tgt_core_create(const struct nvmfd_cfg *cfg, struct nvmfd_tgt **out);
int nvmfd__tgt_core_close_backends(struct nvmfd_tgt *tgt, bool sync_dirty, unsigned int *nr_dirty);
void nvmfd__tgt_core_destroy(struct nvmfd_tgt **tgt);
struct nvmfd_tgt_subsys *nvmfd__tgt_subsys_find_get(struct nvmfd_tgt *tgt, const char *nqn);
void nvmfd__tgt_subsys_put(struct nvmfd_tgt_subsys *s);
const struct nvmfd_cfg_subsys *nvmfd__tgt_live_subsys_locked(const struct nvmfd_tgt_subsys *s);
bool nvmfd__tgt_ns_get(struct nvmfd_tgt_ns *ns, uint32_t nsid);
void nvmfd__tgt_ns_put(struct nvmfd_tgt_ns *ns);
unsigned int nvmfd__tgt_reap(struct nvmfd_tgt *tgt);
uint16_t nvmfd__tgt_bound_locked(const struct nvmfd_tgt *tgt, uint16_t portid);
bool nvmfd__tgt_subsys_on_port(const struct nvmfd_tgt_subsys *s,
			       const struct nvmfd_cfg_port *port);
bool nvmfd__tgt_host_allowed(const struct nvmfd_tgt_subsys *s, const char *hostnqn);
bool nvmfd__tgt_host_allowed_locked(const struct nvmfd_tgt_subsys *s, const char *hostnqn);
struct nvmfd_tgt_ns *nvmfd__tgt_ns_find(struct nvmfd_tgt_subsys *s, uint32_t nsid);
int nvmfd__tgt_ctrl_alloc(struct nvmfd_tgt_subsys *s, const struct nvmfd_cfg_port *port,
			  const char *hostnqn, const uint8_t hostid[16],
			  struct nvmfd_tgt_ctrl **out);
struct nvmfd_tgt_ctrl *nvmfd__tgt_ctrl_find_get(struct nvmfd_tgt_subsys *s, uint16_t cntlid);
void nvmfd__tgt_ctrl_get(struct nvmfd_tgt_ctrl *ctrl);
void nvmfd__tgt_ctrl_put(struct nvmfd_tgt_ctrl *ctrl);
void nvmfd__tgt_ctrl_fail_aers_locked(struct nvmfd_tgt_ctrl *ctrl, nvmfd_status_t status);
void nvmfd__tgt_ctrl_add_event_locked(struct nvmfd_tgt_ctrl *ctrl, uint32_t evt);
void nvmfd__tgt_ctrl_shutdown_locked(struct nvmfd_tgt_ctrl *ctrl);
void nvmfd__tgt_qp_post(struct nvmfd_tgt_req *req, nvmfd_status_t status);
unsigned int nvmfd__tgt_check_kato(struct nvmfd_tgt *tgt, uint64_t now_ns);
void nvmfd__tgt_shutdown_all(struct nvmfd_tgt *tgt);
int nvmfd__tgt_ns_set_enabled(struct nvmfd_tgt *tgt, unsigned int subsys_idx, uint32_t nsid,
			      bool enable);
void nvmfd__tgt_disc_changed(struct nvmfd_tgt *tgt);
uint64_t nvmfd__tgt_now_ns(void);
bool nvmfd__tgt_ctrl_is_ready(const struct nvmfd_tgt_ctrl *ctrl);
uint64_t nvmfd__tgt_cap(const struct nvmfd_tgt_ctrl *ctrl);

/* fabrics.c */
nvmfd_status_t nvmfd__tgt_set_xfer(struct nvmfd_tgt_req *req, enum nvmfd_tgt_xfer xfer,
				   uint64_t len);
nvmfd_status_t nvmfd__tgt_fabrics_init(struct nvmfd_tgt_req *req);
void nvmfd__tgt_fabrics_execute(struct nvmfd_tgt_req *req);
int nvmfd__tgt_qp_enable(struct nvmfd_tgt_qp *qp, uint16_t sqsize);

/* auth.c */
int nvmfd__tgt_auth_setup(struct nvmfd_tgt_qp *qp, const struct nvmfd_tgt_subsys *s,
			  const char *hostnqn, struct nvmfd_tgt_auth **out);
void nvmfd__tgt_auth_free(struct nvmfd_tgt_auth *a);
bool nvmfd__tgt_auth_required(const struct nvmfd_tgt_qp *qp);
bool nvmfd__tgt_auth_authenticated(const struct nvmfd_tgt_qp *qp);
nvmfd_status_t nvmfd__tgt_auth_init(struct nvmfd_tgt_req *req);
nvmfd_status_t nvmfd__tgt_auth_execute(struct nvmfd_tgt_req *req);
void nvmfd__tgt_auth_arm(struct nvmfd_tgt_qp *qp, uint64_t now_ns);
unsigned int nvmfd__tgt_check_auth(struct nvmfd_tgt *tgt, uint64_t now_ns);

/* admin.c */
nvmfd_status_t nvmfd__tgt_admin_init(struct nvmfd_tgt_req *req);
void nvmfd__tgt_admin_execute(struct nvmfd_tgt_req *req);
nvmfd_status_t nvmfd__tgt_features_common(struct nvmfd_tgt_req *req, bool set);
void nvmfd__tgt_aer_execute(struct nvmfd_tgt_req *req);
void nvmfd__tgt_identify_ctrl_fill(struct nvmfd_tgt_req *req, struct nvmfd_id_ctrl *id);

/* discovery.c */
void nvmfd__tgt_disc_execute(struct nvmfd_tgt_req *req);

/* io.c */
nvmfd_status_t nvmfd__tgt_io_init(struct nvmfd_tgt_req *req);
void nvmfd__tgt_io_execute(struct nvmfd_tgt_req *req);

/* Helpers for windowed copies into a C2H buffer (Get Log Page LPO/NUMD). */
struct nvmfd_tgt_win {
	uint8_t *buf;
	uint64_t off; /* window start in the page */
	uint32_t len; /* window length (bytes) */
	uint64_t pos; /* current position in the page */
};
void nvmfd__tgt_win_put(struct nvmfd_tgt_win *w, const void *src, uint64_t len);

static inline nvmfd_status_t nvmfd__tgt_dnr(uint8_t sct, uint8_t sc)
{
	return (nvmfd_status_t)(NVMFD_STATUS(sct, sc) | NVMFD_STATUS_DNR);
}

/* Copy @s into a fixed-width, space-padded, not NUL-terminated field. */
void nvmfd__tgt_strpad(char *dst, size_t width, const char *s);

#endif /* NVMFD_TARGET_CORE_H */
