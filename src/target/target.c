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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "internal/target.h"
#include "target/core.h"

#define COMP "target"

static void destroy_ports(struct nvmfd_tgt *tgt)
{
	for (unsigned int i = 0; i < tgt->nr_ports; i++) {
		if (tgt->ports[i])
			tgt->port_xprt[i]->remove_port(tgt->ports[i]);
		tgt->ports[i] = NULL;
	}
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

	if (!po.shared)
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
	ret = nvmfd_rt_create(&opts, &tgt->rt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "execution runtime: %s", strerror(-ret));
		goto out_destroy_core;
	}
	if (cfg->exec.exec_auto) {
		struct nvmfd_rt_opts eo = opts;

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
		const struct nvmfd_cfg_port *p = &cfg->ports[i];
		const struct nvmfd_tgt_xprt_type *x = nvmfd__tgt_xprt_find(NULL);

		tgt->nr_ports = i + 1;
		if (!x) {
			NVMFD_ERR(COMP, strchr(p->traddr, ':') ? "port %u [%s]:%s: no transport available"
							       : "port %u %s:%s: no transport available",
				  p->portid,
				  p->traddr, p->trsvcid);
			ret = -EPROTONOSUPPORT;
			goto out_destroy_ports;
		}
		tgt->port_xprt[i] = x;
		ret = x->add_port(tgt, p, &tgt->ports[i]);
		if (ret < 0) { /* the transport logged "port N ADDR:PORT: reason" */
			tgt->ports[i] = NULL;
			goto out_destroy_ports;
		}
		tgt->bound_port[i] = x->bound_trsvcid(tgt->ports[i]);
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

static void *hk_main(void *arg)
{
	struct nvmfd_tgt *tgt = arg;
	struct timespec ts;
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
		for (unsigned int i = 0; i < tgt->nr_ports; i++)
			if (tgt->ports[i])
				tgt->port_xprt[i]->check_timeouts(tgt->ports[i], now);
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
		const struct nvmfd_cfg_port *p = &tgt->cfg->ports[i];

		ret = tgt->port_xprt[i]->start_port(tgt->ports[i]);
		if (ret < 0) {
			NVMFD_ERR(COMP, strchr(p->traddr, ':') ? "port %u [%s]:%s: start: %s"
							       : "port %u %s:%s: start: %s",
				  p->portid, p->traddr,
				  p->trsvcid, strerror(-ret));
			nvmfd_tgt_stop(tgt);
			return ret;
		}
	}
	tgt->started = true;
	return 0;
}

/**
 * nvmfd_tgt_stop() - stop accepting, shut every queue down (waiting for
 * them), then flush and close the backends.
 * @tgt: target.
 * Context: control thread; idempotent.
 */
void nvmfd_tgt_stop(struct nvmfd_tgt *tgt)
{
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
	nvmfd__tgt_shutdown_all(tgt);
	destroy_ports(tgt);
	ret = nvmfd__tgt_core_close_backends(tgt);
	if (ret < 0)
		NVMFD_ERR(COMP, "closing backends: %s", strerror(-ret));
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
 * @idx: index in cfg->ports[].
 * Return: the port, 0 if @idx is out of range or the listener is gone.
 * Context: any thread.
 */
uint16_t nvmfd_tgt_listen_port(const struct nvmfd_tgt *tgt, unsigned int idx)
{
	if (idx >= tgt->nr_ports || !tgt->ports[idx])
		return 0;
	return tgt->port_xprt[idx]->bound_trsvcid(tgt->ports[idx]);
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

/**
 * nvmfd_tgt_stats_json() - write counters as one JSON object on @out:
 * {"controllers":[{cntlid, subnqn, hostnqn, kato_ms, queues, reads, writes,
 * bytes_read, bytes_written}...], "ports":[<transport port objects: queues,
 * shared rings, per-controller pools>], "runtime":<the global runtime's pools (nvmfd_rt_stats_json)>,
 * "process":{context switches, CPU ticks}}, no trailing newline.
 * @tgt: target.
 * @out: stream (borrowed).
 * Return: 0, -ENOMEM, -EIO when writing failed.
 * Context: any thread; takes tgt->lock briefly.
 */
int nvmfd_tgt_stats_json(struct nvmfd_tgt *tgt, FILE *out)
{
	json_object *root = json_object_new_object(), *ctrls, *ports;
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
	for (unsigned int i = 0; i <= tgt->nr_subsys; i++)
		for (struct nvmfd_tgt_ctrl *c = tgt->subsys[i].ctrls; c; c = c->next)
			json_object_array_add(ctrls, ctrl_json(c));
	pthread_mutex_unlock(&tgt->lock);
	for (unsigned int i = 0; i < tgt->nr_ports; i++)
		if (tgt->ports[i])
			json_object_array_add(ports, tgt->port_xprt[i]->port_stats(tgt->ports[i]));
	json_object_object_add(root, "runtime",
			       tgt->rt ? nvmfd_rt_stats_obj(tgt->rt) : NULL);
	if (tgt->rt_escape)
		json_object_object_add(root, "runtime_auto", nvmfd_rt_stats_obj(tgt->rt_escape));
	json_object_object_add(root, "process", process_json());
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
