// SPDX-License-Identifier: MIT
/*
 * target.c - the target as the daemon sees it (internal/target.h): backends,
 * the execution runtime, the completion pool, the listeners (ports of the
 * registered transports, xprt.h) and the housekeeping thread that expires
 * keep-alive timers and the transports' connection-setup deadlines.
 *
 * Order: create = backends -> runtime -> completion pool -> listeners
 * (bound, not accepting);
 * start = accepting + housekeeping; stop = housekeeping off, every queue
 * shut down, listeners destroyed (which waits for their queues), backends
 * flushed and closed, so no acknowledged write is lost.
 *
 * Stop never waits for a starved CPU: a bound worker whose CPU a hog holds
 * may run a few milliseconds a second, and every queue on it needs several
 * passes to drain and close. So stop first creates an unbound runtime
 * (system scope, not strict: the scheduler runs its workers wherever there
 * is room) and moves the shared rings' completion work there; each port's
 * ->remove_port then moves its queues and its release work there too
 * (nvmfd__tgt_rt_stop()). What stop still waits for on the old pools is a
 * pass already running, which is bounded by the pass deadline. Commands a
 * closing queue had not answered are never acknowledged (their responses
 * are dropped); acknowledged writes are flushed with the backends.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "internal/target.h"
#include "target/core.h"

#define COMP "target"

static void port_log_err(const struct nvmfd_cfg_port *p, const char *what, int err)
{
	NVMFD_ERR(COMP, strchr(p->traddr, ':') ? "port %u [%s]:%s: %s%s" : "port %u %s:%s: %s%s",
		  p->portid, p->traddr, p->trsvcid, what, strerror(-err));
}

/* Bind @p into a new slot (not in the table). Return: 0 or -errno, logged. */
static int port_open(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *p,
		     struct nvmfd_tgt_port_slot **out)
{
	struct nvmfd_tgt_port_slot *sl = calloc(1, sizeof(*sl));
	int ret;

	if (!sl)
		return -ENOMEM;
	sl->cfg = *p;
	sl->xprt = nvmfd__tgt_xprt_find(NULL);
	if (!sl->xprt) {
		port_log_err(p, "no transport available: ", -EPROTONOSUPPORT);
		free(sl);
		return -EPROTONOSUPPORT;
	}
	ret = sl->xprt->add_port(tgt, &sl->cfg, &sl->port);
	if (ret < 0) { /* the transport logged "port N ADDR:PORT: reason" */
		free(sl);
		return ret;
	}
	sl->bound = sl->xprt->bound_trsvcid(sl->port);
	*out = sl;
	return 0;
}

/* Stop and free a slot that is out of the table. */
static void port_close(struct nvmfd_tgt_port_slot *sl)
{
	if (sl->port)
		sl->xprt->remove_port(sl->port);
	free(sl);
}

static void destroy_ports(struct nvmfd_tgt *tgt)
{
	struct nvmfd_tgt_port_slot *sl[NVMFD_CFG_MAX_PORTS];
	unsigned int n;

	pthread_mutex_lock(&tgt->port_lock);
	pthread_mutex_lock(&tgt->lock);
	n = tgt->nr_ports;
	memcpy(sl, tgt->ports, sizeof(sl));
	memset(tgt->ports, 0, sizeof(tgt->ports));
	tgt->nr_ports = 0;
	pthread_mutex_unlock(&tgt->lock);
	pthread_mutex_unlock(&tgt->port_lock);
	for (unsigned int i = 0; i < n; i++)
		if (sl[i])
			port_close(sl[i]);
}

/**
 * nvmfd_tgt_port_add() - see internal/target.h.
 * Context: control thread.
 */
int nvmfd_tgt_port_add(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *p, uint16_t *bound)
{
	struct nvmfd_tgt_port_slot *sl;
	int ret;

	if (tgt->stopped)
		return -ESHUTDOWN;
	if (tgt->nr_ports >= NVMFD_CFG_MAX_PORTS)
		return -ENOSPC;
	for (unsigned int i = 0; i < tgt->nr_ports; i++)
		if (tgt->ports[i]->cfg.portid == p->portid)
			return -EEXIST;
	ret = port_open(tgt, p, &sl);
	if (ret < 0)
		return ret;
	if (tgt->started) {
		ret = sl->xprt->start_port(sl->port);
		if (ret < 0) {
			port_log_err(p, "start: ", ret);
			port_close(sl);
			return ret;
		}
	}
	pthread_mutex_lock(&tgt->port_lock);
	pthread_mutex_lock(&tgt->lock);
	tgt->ports[tgt->nr_ports++] = sl;
	pthread_mutex_unlock(&tgt->lock);
	pthread_mutex_unlock(&tgt->port_lock);
	if (bound)
		*bound = sl->bound;
	return 0;
}

/**
 * nvmfd_tgt_port_remove() - see internal/target.h.
 * Context: control thread (waits for the port's queues to be released).
 */
int nvmfd_tgt_port_remove(struct nvmfd_tgt *tgt, unsigned int idx)
{
	struct nvmfd_tgt_port_slot *sl;

	pthread_mutex_lock(&tgt->port_lock);
	pthread_mutex_lock(&tgt->lock);
	if (idx >= tgt->nr_ports) {
		pthread_mutex_unlock(&tgt->lock);
		pthread_mutex_unlock(&tgt->port_lock);
		return -ENOENT;
	}
	sl = tgt->ports[idx];
	memmove(&tgt->ports[idx], &tgt->ports[idx + 1],
		(tgt->nr_ports - idx - 1) * sizeof(tgt->ports[0]));
	tgt->ports[--tgt->nr_ports] = NULL;
	pthread_mutex_unlock(&tgt->lock);
	pthread_mutex_unlock(&tgt->port_lock);
	NVMFD_INFO(COMP, strchr(sl->cfg.traddr, ':') ? "port %u [%s]:%u: removed" :
						       "port %u %s:%u: removed",
		   sl->cfg.portid, sl->cfg.traddr, sl->bound);
	port_close(sl);
	nvmfd__tgt_disc_changed(tgt);
	return 0;
}

/* The completion pool the configuration asks for, now that the runtime
 * exists (shared rings need it for their completion work). With --exec
 * auto the rings' completion work runs on the unbound escape runtime: a
 * starved CPU must not hold the completions of the queues moved away from
 * it (the price: the completion hand-off may cross CPUs). */
static int create_cqpool(struct nvmfd_tgt *tgt)
{
	const struct nvmfd_cfg_exec *ex = &tgt->cfg->exec;
	struct nvmfd_cq_pool_opts po = { .shared = ex->cq_pool_shared, .iopoll = ex->backend_poll };

	/* --exec auto chooses the source per queue (tcp_auto.c): a per-queue
	 * pool that can also give out shared rings */
	if (!po.shared && !ex->exec_auto)
		return 0; /* the core's per-queue pool is the one */
	nvmfd_cq_pool_destroy(&tgt->cqpool);
	return nvmfd_cq_pool_create(tgt->rt_escape ?: tgt->rt, &po, &tgt->cqpool);
}

/**
 * nvmfd_tgt_create() - open every namespace backend, create the runtime and
 * bind every listener of @cfg; nothing listens if any step fails.
 * @cfg: configuration, borrowed for the target's lifetime.
 * @out: the new target.
 * Return: 0, -EINVAL (bad config), -ENOMEM, the backend open error, the
 *         runtime error, or the listener error (e.g. -EADDRINUSE), each
 *         logged with the object it concerns.
 * Context: control thread.
 */
int nvmfd_tgt_create(const struct nvmfd_cfg *cfg, struct nvmfd_tgt **out)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_tgt *tgt;
	int ret;

	*out = NULL;
	ret = nvmfd__tgt_core_create(cfg, &tgt);
	if (ret < 0)
		return ret;
	pthread_mutex_init(&tgt->hk_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&tgt->hk_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	opts = cfg->exec.rt;
	if (opts.size == 0)
		nvmfd_rt_opts_init(&opts);
	/* --uring-ring worker: this runtime's bound pools get worker rings
	 * (the others - auto's escape, stop - do not: their queues keep
	 * using the ring they were created on) */
	opts.uring = cfg->exec.net == NVMFD_CFG_NET_URING &&
		     cfg->exec.uring_ring == NVMFD_CFG_URING_RING_WORKER;
	ret = nvmfd_rt_create(&opts, &tgt->rt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "execution runtime: %s", strerror(-ret));
		goto out_destroy_core;
	}
	if (cfg->exec.exec_auto) {
		struct nvmfd_rt_opts eo = opts;

		eo.uring = false;
		eo.mode = NVMFD_RT_UNBOUND;
		eo.scope = NVMFD_RT_SCOPE_SYSTEM;
		eo.strict = false;
		eo.name = "nvmfa";
		ret = nvmfd_rt_create(&eo, &tgt->rt_escape);
		if (ret < 0) {
			NVMFD_ERR(COMP, "execution runtime (auto, unbound): %s", strerror(-ret));
			goto out_destroy_rt;
		}
	}
	ret = create_cqpool(tgt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "completion pool: %s", strerror(-ret));
		goto out_destroy_rt;
	}
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		ret = port_open(tgt, &cfg->ports[i], &tgt->ports[i]);
		if (ret < 0)
			goto out_destroy_ports;
		tgt->nr_ports = i + 1;
	}
	*out = tgt;
	return 0;

out_destroy_ports:
	destroy_ports(tgt);
out_destroy_rt:
	/* the pool's shared rings run on the runtime: back to per-queue */
	nvmfd_cq_pool_destroy(&tgt->cqpool);
	nvmfd_rt_destroy(tgt->rt_escape);
	tgt->rt_escape = NULL;
	nvmfd_rt_destroy(tgt->rt);
	tgt->rt = NULL;
out_destroy_core:
	pthread_cond_destroy(&tgt->hk_cond);
	pthread_mutex_destroy(&tgt->hk_lock);
	nvmfd__tgt_core_destroy(&tgt);
	return ret;
}

/*
 * Give memory the allocator keeps back to the kernel after many queues
 * went away: glibc keeps freed chunks in its arenas (one per worker thread
 * that allocated; the dynamic mmap threshold also moves large queue
 * buffers into them), so without this the RSS stayed ~160 MiB above the
 * baseline after 1024 controllers disconnected although every fd came
 * back (issue 14). Checked every HK_TRIM_EVERY_NS: trimmed when the free
 * bytes in the arenas grew by HK_TRIM_MIN_FREE since the last trim (what a
 * trim released stays counted as free, so a fixed threshold would trim
 * again every time), or by HK_TRIM_SETTLED_FREE once they stopped changing
 * (within HK_TRIM_SETTLED_DELTA since the previous check: connections came
 * and went, nothing allocates now): 500 admin queues that came and went
 * leave less than HK_TRIM_MIN_FREE free, which then stayed resident until
 * a later large release (3-10 MiB above the baseline in some rounds of
 * three; with the settled rule most rounds end 0.2-0.5 MiB above it,
 * though some still keep 4-9 MiB). Under churn only the larger threshold
 * trims, as before. mallinfo2() walks the arenas under their locks, which
 * the data path (no malloc) does not take.
 */
#define HK_TRIM_EVERY_NS (2ull * 1000000000ull)
#define HK_TRIM_MIN_FREE (16u << 20)
#define HK_TRIM_SETTLED_FREE (1u << 20)
#define HK_TRIM_SETTLED_DELTA (64u << 10)

struct hk_trim_state {
	uint64_t last_ns;
	size_t free_after; /* arenas' free bytes after the last trim */
	size_t free_prev; /* at the previous check */
};

static void hk_trim(uint64_t now, struct hk_trim_state *t)
{
	struct mallinfo2 mi;
	size_t prev;
	bool settled;

	if (now - t->last_ns < HK_TRIM_EVERY_NS)
		return;
	t->last_ns = now;
	mi = mallinfo2();
	prev = t->free_prev;
	t->free_prev = mi.fordblks;
	if (mi.fordblks < t->free_after) {
		t->free_after = mi.fordblks; /* reused since */
		return;
	}
	settled = (mi.fordblks > prev ? mi.fordblks - prev : prev - mi.fordblks) <=
		  HK_TRIM_SETTLED_DELTA;
	if (mi.fordblks - t->free_after < (settled ? HK_TRIM_SETTLED_FREE : HK_TRIM_MIN_FREE))
		return;
	malloc_trim(0);
	t->free_after = t->free_prev = mallinfo2().fordblks;
}

static void *hk_main(void *arg)
{
	struct nvmfd_tgt *tgt = arg;
	struct timespec ts;
	struct hk_trim_state trim = { .last_ns = nvmfd__tgt_now_ns() };
	uint64_t now;

	pthread_mutex_lock(&tgt->hk_lock);
	while (!tgt->hk_stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += NVMFD_TGT_HK_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&tgt->hk_cond, &tgt->hk_lock, &ts);
		if (tgt->hk_stop)
			break;
		pthread_mutex_unlock(&tgt->hk_lock);
		now = nvmfd__tgt_now_ns();
		nvmfd__tgt_check_kato(tgt, now);
		nvmfd__tgt_check_auth(tgt, now);
		pthread_mutex_lock(&tgt->port_lock);
		for (unsigned int i = 0; i < tgt->nr_ports; i++)
			tgt->ports[i]->xprt->check_timeouts(tgt->ports[i]->port, now);
		pthread_mutex_unlock(&tgt->port_lock);
		/* removed namespaces whose ios drained, deleted subsystems */
		nvmfd__tgt_reap(tgt);
		hk_trim(now, &trim);
		pthread_mutex_lock(&tgt->hk_lock);
	}
	pthread_mutex_unlock(&tgt->hk_lock);
	return NULL;
}

/**
 * nvmfd_tgt_start() - start accepting on every listener and start the
 * housekeeping thread.
 * @tgt: target from nvmfd_tgt_create().
 * Return: 0, -EINVAL (already started or stopped), the listener's error, or
 *         -errno from pthread_create; on failure nothing accepts.
 * Context: control thread.
 */
int nvmfd_tgt_start(struct nvmfd_tgt *tgt)
{
	int ret;

	if (tgt->started || tgt->stopped)
		return -EINVAL;
	tgt->hk_stop = false;
	ret = -pthread_create(&tgt->hk_thread, NULL, hk_main, tgt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "housekeeping thread: %s", strerror(-ret));
		return ret;
	}
	tgt->hk_running = true;
	for (unsigned int i = 0; i < tgt->nr_ports; i++) {
		struct nvmfd_tgt_port_slot *sl = tgt->ports[i];

		ret = sl->xprt->start_port(sl->port);
		if (ret < 0) {
			port_log_err(&sl->cfg, "start: ", ret);
			nvmfd_tgt_stop(tgt);
			return ret;
		}
	}
	tgt->started = true;
	return 0;
}

/*
 * The stop runtime (see the file comment), on the CPUs the target runs on;
 * the shared rings' completion work moves there at once. A failure is
 * logged and the stop goes on where the queues are (slower if a CPU is
 * starved, never wrong).
 */
static void create_stop_rt(struct nvmfd_tgt *tgt)
{
	struct nvmfd_rt_opts o = tgt->cfg->exec.rt;
	int ret;

	if (o.size == 0)
		nvmfd_rt_opts_init(&o);
	o.mode = NVMFD_RT_UNBOUND;
	o.scope = NVMFD_RT_SCOPE_SYSTEM;
	o.strict = false;
	o.workers_per_pool = 0;
	o.uring = false;
	o.name = "nvmfs";
	ret = nvmfd_rt_create(&o, &tgt->rt_stop);
	if (ret < 0) {
		NVMFD_WARN(COMP, "stop: no runtime to drain queues on (%s): they stop where they run",
			   strerror(-ret));
		tgt->rt_stop = NULL;
		return;
	}
	if (tgt->cqpool && nvmfd_cq_pool_can_share(tgt->cqpool)) {
		ret = nvmfd_cq_pool_move(tgt->cqpool, tgt->rt_stop);
		if (ret < 0)
			NVMFD_WARN(COMP, "stop: shared rings stay where they run: %s",
				   strerror(-ret));
	}
}

/**
 * nvmfd_tgt_stop() - stop accepting, shut every queue down (waiting for
 * them), then close the backends: those holding writes no Flush covered
 * are fsynced first with cfg stop_flush, else left to the kernel's
 * writeback (doc/nvmfd.md SIGNALS).
 * @tgt: target.
 * Context: control thread; idempotent.
 */
void nvmfd_tgt_stop(struct nvmfd_tgt *tgt)
{
	uint64_t t0 = nvmfd__tgt_now_ns(), t1;
	bool sync_dirty = tgt->cfg->stop_flush;
	unsigned int nr_dirty = 0;
	int ret;

	if (tgt->stopped)
		return;
	tgt->stopped = true;
	if (tgt->hk_running) {
		pthread_mutex_lock(&tgt->hk_lock);
		tgt->hk_stop = true;
		pthread_cond_signal(&tgt->hk_cond);
		pthread_mutex_unlock(&tgt->hk_lock);
		pthread_join(tgt->hk_thread, NULL);
		tgt->hk_running = false;
	}
	if (tgt->started) {
		/* no worker may wait on a starved CPU: to drain, exit, or
		 * hold a lock the stop needs (a page fault, a munmap) */
		nvmfd_rt_unpin(tgt->rt);
		nvmfd_rt_unpin(tgt->rt_escape);
		create_stop_rt(tgt);
	}
	nvmfd__tgt_shutdown_all(tgt);
	destroy_ports(tgt);
	t1 = nvmfd__tgt_now_ns();
	ret = nvmfd__tgt_core_close_backends(tgt, sync_dirty, &nr_dirty);
	if (ret < 0)
		NVMFD_ERR(COMP, "closing backends: %s", strerror(-ret));
	if (tgt->started)
		NVMFD_INFO(COMP, "stopped in %" PRIu64 " ms (queues %" PRIu64
				 " ms, flushing and closing backends %" PRIu64 " ms; %u "
				 "namespaces held writes no Flush covered: %s)",
			   (nvmfd__tgt_now_ns() - t0) / 1000000, (t1 - t0) / 1000000,
			   (nvmfd__tgt_now_ns() - t1) / 1000000, nr_dirty,
			   !nr_dirty ? "nothing to fsync" :
			   sync_dirty ? "fsynced" : "left to the kernel's writeback");
}

/**
 * nvmfd_tgt_destroy() - stop if needed and free everything; NULLs *tgt.
 * @tgtp: target (NULL is fine).
 * Context: control thread.
 */
void nvmfd_tgt_destroy(struct nvmfd_tgt **tgtp)
{
	struct nvmfd_tgt *tgt = *tgtp;

	if (!tgt)
		return;
	nvmfd_tgt_stop(tgt);
	/* shared rings' completion work runs on the runtime: pool first */
	nvmfd_cq_pool_destroy(&tgt->cqpool);
	nvmfd_rt_destroy(tgt->rt_stop);
	tgt->rt_stop = NULL;
	nvmfd_rt_destroy(tgt->rt_escape);
	tgt->rt_escape = NULL;
	if (tgt->rt)
		nvmfd_rt_destroy(tgt->rt);
	tgt->rt = NULL;
	pthread_cond_destroy(&tgt->hk_cond);
	pthread_mutex_destroy(&tgt->hk_lock);
	nvmfd__tgt_core_destroy(tgtp);
}

/**
 * nvmfd_tgt_listen_port() - service id (port number) bound by listener @idx.
 * @tgt: target.
 * @idx: index in cfg->ports[] (the target's port table is kept in step).
 * Return: the port, 0 if @idx is out of range.
 * Context: any thread.
 */
uint16_t nvmfd_tgt_listen_port(const struct nvmfd_tgt *tgt, unsigned int idx)
{
	uint16_t bound = 0;

	pthread_mutex_lock((pthread_mutex_t *)&tgt->port_lock);
	if (idx < tgt->nr_ports)
		bound = tgt->ports[idx]->bound;
	pthread_mutex_unlock((pthread_mutex_t *)&tgt->port_lock);
	return bound;
}

/* Process-wide context switches (live threads) and CPU time, from /proc. */
static json_object *process_json(void)
{
	uint64_t vol = 0, invol = 0, ut = 0, st = 0;
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	nvmfd__proc_threads_ctxsw(0, &vol, &invol);
	nvmfd__proc_cpu_ticks(0, &ut, &st);
	json_object_object_add(o, "voluntary_ctxt_switches", json_object_new_uint64(vol));
	json_object_object_add(o, "nonvoluntary_ctxt_switches", json_object_new_uint64(invol));
	json_object_object_add(o, "utime_ticks", json_object_new_uint64(ut));
	json_object_object_add(o, "stime_ticks", json_object_new_uint64(st));
	return o;
}

static json_object *ctrl_json(const struct nvmfd_tgt_ctrl *c)
{
	uint64_t r = 0, w = 0, br = 0, bw = 0;
	json_object *o = json_object_new_object();
	unsigned int nq = 0;

	if (!o)
		return NULL;
	for (unsigned int q = 0; q <= c->qid_max; q++) {
		nq += c->sqs[q] != NULL;
		r += __atomic_load_n(&c->qstats[q].reads, __ATOMIC_RELAXED);
		w += __atomic_load_n(&c->qstats[q].writes, __ATOMIC_RELAXED);
		br += __atomic_load_n(&c->qstats[q].bytes_read, __ATOMIC_RELAXED);
		bw += __atomic_load_n(&c->qstats[q].bytes_written, __ATOMIC_RELAXED);
	}
	json_object_object_add(o, "cntlid", json_object_new_int(c->cntlid));
	json_object_object_add(o, "subnqn", json_object_new_string(c->subsys->nqn));
	json_object_object_add(o, "hostnqn", json_object_new_string(c->hostnqn));
	json_object_object_add(o, "kato_ms",
			       json_object_new_uint64(__atomic_load_n(&c->kato_ms, __ATOMIC_RELAXED)));
	json_object_object_add(o, "kato_stalls", json_object_new_uint64(__atomic_load_n(
							  &c->kato_stalls, __ATOMIC_RELAXED)));
	json_object_object_add(o, "queues", json_object_new_int((int)nq));
	json_object_object_add(o, "reads", json_object_new_uint64(r));
	json_object_object_add(o, "writes", json_object_new_uint64(w));
	json_object_object_add(o, "bytes_read", json_object_new_uint64(br));
	json_object_object_add(o, "bytes_written", json_object_new_uint64(bw));
	return o;
}

/* DH-HMAC-CHAP queue transactions: {"ok", "failed", "timeouts"} */
static json_object *auth_json(struct nvmfd_tgt *tgt)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "ok", json_object_new_uint64(__atomic_load_n(
						 &tgt->auth_ok, __ATOMIC_RELAXED)));
	json_object_object_add(o, "failed", json_object_new_uint64(__atomic_load_n(
						     &tgt->auth_failed, __ATOMIC_RELAXED)));
	json_object_object_add(o, "timeouts", json_object_new_uint64(__atomic_load_n(
						       &tgt->auth_timeouts, __ATOMIC_RELAXED)));
	json_object_object_add(o, "throttled", json_object_new_uint64(__atomic_load_n(
							&tgt->auth_throttled, __ATOMIC_RELAXED)));
	return o;
}

/**
 * nvmfd_tgt_stats_json() - write counters as one JSON object on @out:
 * {"controllers":[{cntlid, subnqn, hostnqn, kato_ms, queues, reads, writes,
 * bytes_read, bytes_written}...], "ports":[<transport port objects: queues,
 * shared rings, per-controller pools>], "runtime":<the global runtime's pools (nvmfd_rt_stats_json)>,
 * "process":{context switches, CPU ticks}, "auth":{DH-HMAC-CHAP queue
 * transactions ok, failed, and queues closed for not authenticating in
 * time: timeouts}}, no trailing newline.
 * @tgt: target.
 * @out: stream (borrowed).
 * Return: 0, -ENOMEM, -EIO when writing failed.
 * Context: any thread; takes tgt->lock briefly.
 */
int nvmfd_tgt_stats_json(struct nvmfd_tgt *tgt, FILE *out)
{
	json_object *root = json_object_new_object(), *ctrls, *ports;
	struct nvmfd_tgt_subsys *s;
	unsigned int i;
	int ret = 0;

	if (!root)
		return -ENOMEM;
	ctrls = json_object_new_array();
	ports = json_object_new_array();
	json_object_object_add(root, "controllers", ctrls);
	json_object_object_add(root, "ports", ports);
	if (!ctrls || !ports) {
		ret = -ENOMEM;
		goto out_put;
	}
	pthread_mutex_lock(&tgt->lock);
	nvmfd__tgt_for_each_subsys(tgt, i, s)
		for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next)
			json_object_array_add(ctrls, ctrl_json(c));
	pthread_mutex_unlock(&tgt->lock);
	pthread_mutex_lock(&tgt->port_lock);
	for (i = 0; i < tgt->nr_ports; i++)
		json_object_array_add(ports, tgt->ports[i]->xprt->port_stats(tgt->ports[i]->port));
	pthread_mutex_unlock(&tgt->port_lock);
	json_object_object_add(root, "runtime",
			       tgt->rt ? nvmfd_rt_stats_obj(tgt->rt) : NULL);
	if (tgt->rt_escape)
		json_object_object_add(root, "runtime_auto", nvmfd_rt_stats_obj(tgt->rt_escape));
	json_object_object_add(root, "process", process_json());
	json_object_object_add(root, "auth", auth_json(tgt));
	if (fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN), out) < 0 ||
	    ferror(out))
		ret = -EIO;
out_put:
	json_object_put(root);
	return ret;
}

/**
 * nvmfd__tgt_shared_rings_json() - see xprt.h.
 */
json_object *nvmfd__tgt_shared_rings_json(struct nvmfd_tgt *tgt)
{
	return tgt->cqpool ? nvmfd_cq_pool_stats_json(tgt->cqpool) : json_object_new_array();
}
