// SPDX-License-Identifier: MIT
/*
 * tcp_auto.c - --exec auto for the NVMe/TCP transport, and the stall check
 * of the connection-setup deadlines (doc/execution-model.md §8).
 *
 * The watchdog is the target's housekeeping thread (->check_timeouts,
 * every NVMFD_TGT_HK_TICK_MS): it is not a runtime worker, so a starved
 * pool cannot starve it. Each tick it
 *  1. samples the CPU pressure of every pool the port's queues may run on
 *     (per worker, how much its schedstat run delay grew per wall ns: the
 *     share of the tick it waited for its CPU; the pool's pressure is its
 *     worst worker's; 1.0 when the pool's run-queue head has waited for
 *     the starvation bound; one schedstat read per worker, nothing else)
 *     and the PSI "some" share of the tick (the cgroup's cpu.pressure when
 *     there is one, else /proc/pressure/cpu), before taking port->lock (no
 *     /proc read under it);
 *  2. under port->lock, measures how long each queue's work has waited
 *     for the target (tcp_auto_stall_ns(): its io_work queued without
 *     running, or input unread while it made no pass), and feeds each
 *     queue's controller (src/rt/auto.c) with that, its mean queue delay,
 *     the pressures and its command rate, and lists the queues whose
 *     placement changed (q->rescuing keeps the release work from freeing
 *     them);
 *  3. after dropping the lock, moves each listed queue's io_work
 *     (tcp_queue_move(): cancel, reset, nvmfd_rt_work_move()) to another
 *     CPU's bound pool, to the unbound "escape" runtime, or home.
 * Polling: unless --auto-no-poll (or a fixed --idle-poll-us, which then
 * applies as in the other modes), the controller's idle-poll period is
 * published in q->auto_poll_us and io_work takes it at the start of its
 * next pass (tcp_auto_apply_poll()); backend completion polling follows
 * it (tcp_backend_polling()). Its inputs here: the mean command gap over
 * the tick, the slots in use as queue depth, the pool pressure and PSI.
 *
 * Stalls, in every exec mode (step 2 runs for all): the setup deadlines
 * (ICReq, Connect) and the keep-alive check (ops->stall_ns) ask first
 * whether the queue's work was waiting for us: a deadline that passes
 * while it has waited for at least auto_starve_ms is the target's fault,
 * not the peer's; it is logged as a target-side stall and deferred (a
 * setup deadline until the work ran and still found nothing; a keep-alive
 * for at most one more KATO + grace, subsys.c); in auto mode the
 * controller also rescues the queue.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "target/tcp/tcp_int.h"

static bool tcp_auto_on(const struct tcp_port *port)
{
	return port->gcfg->exec.exec_auto;
}

static uint64_t tcp_starve_ns(const struct tcp_port *port)
{
	return (uint64_t)(port->gcfg->exec.auto_starve_ms ?: 50) * 1000000ull;
}

/* A new queue starts bound on its io_cpu. Context: the accept work. */
void tcp_auto_queue_init(struct tcp_queue *q)
{
	const struct nvmfd_cfg_exec *ex = &q->port->gcfg->exec;
	struct nvmfd_auto_knobs k;

	nvmfd_auto_knobs_init(&k);
	k.starve_ns = tcp_starve_ns(q->port);
	k.freeze = ex->auto_freeze;
	k.bound = ex->auto_bound;
	/* a fixed --idle-poll-us keeps its meaning: the controller leaves
	 * polling alone */
	k.no_poll = ex->auto_no_poll || ex->idle_poll_us;
	nvmfd_auto_init(&q->ctl, &k);
	q->auto_poll = ex->exec_auto && !k.no_poll && !k.freeze;
	q->run_rt = q->port->rt;
	q->run_cpu = q->io_cpu;
}

/* Return: 0, -ENOMEM. Context: ->add_port (before the housekeeping
 * thread starts: it reads port->apools without a lock). */
int tcp_auto_port_init(struct tcp_port *port)
{
	struct nvmfd_rt *esc = nvmfd__tgt_rt_escape(port->tgt);

	if (!tcp_auto_on(port) || !esc || !nvmfd__tgt_rt(port->tgt))
		return 0;
	port->nbound = nvmfd_rt_npools(nvmfd__tgt_rt(port->tgt));
	port->napools = port->nbound + nvmfd_rt_npools(esc);
	port->apools = calloc(port->napools, sizeof(*port->apools));
	return port->apools ? 0 : -ENOMEM;
}

void tcp_auto_port_fini(struct tcp_port *port)
{
	free(port->apools);
	port->apools = NULL;
	port->napools = 0;
}

static struct nvmfd_rt *apool_rt(struct tcp_port *port, unsigned int i, unsigned int *idx)
{
	if (i < port->nbound) {
		*idx = i;
		return nvmfd__tgt_rt(port->tgt); /* port->rt is set by ->start_port */
	}
	*idx = i - port->nbound;
	return nvmfd__tgt_rt_escape(port->tgt);
}

/* The PSI file to read: the cgroup's cpu.pressure when there is one (a
 * target in its own cgroup sees its own waiting), else the system's. */
static void tcp_auto_psi_init(struct tcp_auto_psi *psi)
{
	uint64_t t;

	memset(psi, 0, sizeof(*psi));
	if (nvmfd__proc_cgroup_file("cpu.pressure", psi->path, sizeof(psi->path)) == 0 &&
	    nvmfd__proc_psi_some_us(psi->path, &t) == 0)
		return;
	snprintf(psi->path, sizeof(psi->path), "/proc/pressure/cpu");
	if (nvmfd__proc_psi_some_us(psi->path, &t))
		psi->path[0] = 0; /* no PSI in this kernel: the signal stays 0 */
}

static void tcp_auto_psi_sample(struct tcp_auto_psi *psi, uint64_t now_ns)
{
	uint64_t t;

	if (!psi->path[0] || nvmfd__proc_psi_some_us(psi->path, &t))
		return;
	if (psi->at_ns && now_ns > psi->at_ns && t >= psi->total_us) {
		double p = (double)(t - psi->total_us) * 1000.0 / (double)(now_ns - psi->at_ns);

		psi->some = p > 1.0 ? 1.0 : p;
	}
	psi->total_us = t;
	psi->at_ns = now_ns;
}

/* Step 1: pool pressures (and PSI). Context: housekeeping thread, no lock
 * held. */
void tcp_auto_sample_pools(struct tcp_port *port, uint64_t now_ns)
{
	if (!port->psi.path[0] && !port->psi.at_ns) {
		tcp_auto_psi_init(&port->psi);
		port->psi.at_ns = port->psi.path[0] ? 0 : 1; /* 1: looked, none */
	}
	tcp_auto_psi_sample(&port->psi, now_ns);
	for (unsigned int i = 0; i < port->napools; i++) {
		struct tcp_auto_pool *ap = &port->apools[i];
		struct nvmfd_rt_pool_sched ps;
		unsigned int idx;
		struct nvmfd_rt *rt = apool_rt(port, i, &idx);
		double worst = 0;

		if (nvmfd_rt_pool_sched(rt, idx, &ps))
			continue;
		/* the worker that waited most for its CPU: a bound pool's spare
		 * workers sleep, and must not dilute the one that runs */
		for (unsigned int w = 0; ap->at_ns && now_ns > ap->at_ns && w < ps.nworkers; w++) {
			double p;

			if (w >= ap->nworkers || ps.run_delay_ns[w] < ap->run_delay_ns[w])
				continue; /* new worker: no previous reading */
			p = (double)(ps.run_delay_ns[w] - ap->run_delay_ns[w]) /
			    (double)(now_ns - ap->at_ns);
			if (p > worst)
				worst = p;
		}
		if (ap->at_ns && now_ns > ap->at_ns)
			ap->pressure = worst > 1.0 ? 1.0 : worst;
		/* a pool whose run queue does not move is fully contended,
		 * whatever its workers' run delay says (a worker stuck in one
		 * item is not waiting for the CPU) */
		if (ps.runq_head_age_ns >= tcp_starve_ns(port))
			ap->pressure = 1.0;
		memcpy(ap->run_delay_ns, ps.run_delay_ns, sizeof(ap->run_delay_ns));
		ap->nworkers = ps.nworkers;
		ap->at_ns = now_ns;
	}
}

/*
 * How long @q's work has waited for the target, at @now_ns: the longer of
 * (a) its io_work queued without starting (@pending_ns), and (b) input the
 * host sent sitting unread in the socket while the queue made no pass
 * since this checker first saw it: the readiness was not dispatched (the
 * pool's worker does not get its CPU, so nobody called epoll_wait) or a
 * pass is running on a preempted worker; neither shows in (a). (b) has the
 * checker's tick as its resolution. A queue being closed (it stops
 * reading) is not stalled. Published in q->stall_ns for the keep-alive
 * check (tcp_queue_stall_ns()). Context: housekeeping thread, port->lock
 * (q->fd is closed under it).
 */
uint64_t tcp_auto_stall_ns(struct tcp_queue *q, uint64_t pending_ns, uint64_t now_ns)
{
	uint64_t passes = TCP_STAT_LOAD(q, passes), stall = pending_ns;
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN | POLLOUT };
	bool unread = false;

	/* input waiting, and the socket writable (a full send buffer means
	 * the host does not read our PDUs: the queue waits for it, not for
	 * us) */
	if (!__atomic_load_n(&q->closing, __ATOMIC_RELAXED) && q->fd >= 0 &&
	    poll(&pfd, 1, 0) == 1)
		unread = (pfd.revents & (POLLIN | POLLOUT)) == (POLLIN | POLLOUT) &&
			 !(pfd.revents & (POLLERR | POLLHUP));
	if (!unread || passes != q->in_passes) {
		q->in_since_ns = unread ? now_ns : 0;
		q->in_passes = passes;
	} else if (!q->in_since_ns) {
		q->in_since_ns = now_ns;
	}
	if (q->in_since_ns && now_ns - q->in_since_ns > stall)
		stall = now_ns - q->in_since_ns;
	__atomic_store_n(&q->stall_ns, stall, __ATOMIC_RELAXED);
	return stall;
}

/*
 * A setup deadline (@missed: TCP_STAGE_*) passed at a check: was it our
 * stall? @pending_ns: tcp_auto_stall_ns(). Return: true (logged, counted;
 * do not expire the queue now) when the queue's work has waited for the
 * target for the starvation bound.
 * Context: housekeeping thread, port->lock.
 */
bool tcp_auto_stalled(struct tcp_queue *q, uint64_t pending_ns, int missed)
{
	if (pending_ns < tcp_starve_ns(q->port))
		return false;
	__atomic_add_fetch(&q->stalls, 1, __ATOMIC_RELAXED);
	NVMFD_WARN_RATELIMIT(TCP_COMP,
			     "queue %u peer %s: %s deadline passed while its work waited %" PRIu64
			     " ms for the target (queued but not run, or input unread; cpu %d): "
			     "a target-side stall, not the peer; deadline deferred%s",
			     q->id, q->qp.peer_addr, missed == TCP_STAGE_ACCEPTED ? "ICReq" : "Connect",
			     pending_ns / 1000000u, __atomic_load_n(&q->run_cpu, __ATOMIC_RELAXED),
			     tcp_auto_on(q->port) ? ", rescuing the queue" : "");
	return true;
}

/* The bound pool (index < nbound) with the least pressure other than
 * @skip1/@skip2, if it has headroom. Return: its index or -1. */
static int tcp_auto_alt_pool(struct tcp_port *port, unsigned int skip1, unsigned int skip2,
			     double lo)
{
	int best = -1;

	for (unsigned int i = 0; i < port->nbound; i++) {
		if (i == skip1 || i == skip2 || !port->apools[i].at_ns)
			continue;
		if (best < 0 || port->apools[i].pressure < port->apools[best].pressure)
			best = (int)i;
	}
	if (best >= 0 && port->apools[best].pressure > lo)
		best = -1;
	return best;
}

/* The first CPU of bound pool @idx of @rt. */
static int tcp_pool_cpu(struct nvmfd_rt *rt, unsigned int idx)
{
	struct nvmfd_rt_pool_stats ps;

	if (nvmfd_rt_pool_stats(rt, idx, &ps))
		return 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &ps.cpus))
			return c;
	return 0;
}

/*
 * Step 2: one controller sample for @q; a queue whose placement changed
 * is pushed on *@rescue with its destination. Context: housekeeping
 * thread, port->lock.
 */
void tcp_auto_queue_tick(struct tcp_queue *q, uint64_t pending_ns, uint64_t now_ns,
			 struct tcp_queue **rescue)
{
	struct tcp_port *port = q->port;
	struct nvmfd_rt *esc = nvmfd__tgt_rt_escape(port->tgt);
	struct nvmfd_auto_sample s = { .now_ns = now_ns, .pending_ns = pending_ns };
	enum nvmfd_auto_place before = q->ctl.place;
	uint64_t runs = __atomic_load_n(&q->io_work.runs, __ATOMIC_RELAXED);
	uint64_t qdelay = __atomic_load_n(&q->io_work.queue_delay_ns, __ATOMIC_RELAXED);
	uint64_t cmds = TCP_STAT_LOAD(q, cmds);
	unsigned int home, cur;
	int alt;

	if (!tcp_auto_on(port) || !esc || !port->apools || q->rescuing)
		return;
	home = nvmfd_rt_pool_of_cpu(port->rt, q->io_cpu);
	if (q->run_rt == esc)
		cur = port->nbound + nvmfd_rt_pool_of_cpu(esc, q->run_cpu);
	else
		cur = nvmfd_rt_pool_of_cpu(port->rt, q->run_cpu);
	if (q->ctl_ns && runs > q->ctl_runs)
		s.queue_delay_ns = (qdelay - q->ctl_qdelay) / (runs - q->ctl_runs);
	if (q->ctl_ns && cmds > q->ctl_cmds && now_ns > q->ctl_ns)
		s.arrival_gap_ns = (now_ns - q->ctl_ns) / (cmds - q->ctl_cmds);
	s.qd = (double)(q->nr_reqs -
			__atomic_load_n(&q->nr_state[TCP_REQ_FREE], __ATOMIC_RELAXED));
	s.pressure = port->apools[cur].pressure;
	s.sys_pressure = port->psi.some;
	s.home_pressure = port->apools[home].pressure;
	alt = tcp_auto_alt_pool(port, home, cur, q->ctl.k.pressure_lo);
	s.alt_cpu = alt >= 0;
	q->ctl_runs = runs;
	q->ctl_qdelay = qdelay;
	q->ctl_cmds = cmds;
	q->ctl_ns = now_ns;

	if (!nvmfd_auto_update(&q->ctl, &s))
		return;
	if (q->auto_poll &&
	    __atomic_load_n(&q->auto_poll_us, __ATOMIC_RELAXED) != q->ctl.poll_us) {
		__atomic_store_n(&q->auto_poll_us, q->ctl.poll_us, __ATOMIC_RELAXED);
		NVMFD_INFO_RATELIMIT(TCP_COMP, "queue %u peer %s: idle polling %s (%u us): %s",
				     q->id, q->qp.peer_addr, q->ctl.poll_us ? "on" : "off",
				     q->ctl.poll_us, nvmfd_auto_reason_name(q->ctl.last_reason));
		tcp_queue_kick(q); /* a sleeping queue starts polling now */
	}
	if (q->ctl.place == before)
		return;
	switch (q->ctl.place) {
	case NVMFD_AUTO_BOUND:
		q->mv_rt = port->rt;
		q->mv_cpu = q->io_cpu;
		break;
	case NVMFD_AUTO_MOVED:
		q->mv_rt = port->rt;
		q->mv_cpu = tcp_pool_cpu(port->rt, (unsigned int)alt);
		break;
	default:
		q->mv_rt = esc;
		q->mv_cpu = q->io_cpu; /* a hint only: the scheduler picks */
		break;
	}
	NVMFD_INFO_RATELIMIT(TCP_COMP, "queue %u peer %s: exec %s -> %s (cpu %d -> %d%s): %s",
			     q->id, q->qp.peer_addr, nvmfd_auto_place_name(before),
			     nvmfd_auto_place_name(q->ctl.place), q->run_cpu, q->mv_cpu,
			     q->mv_rt == esc ? ", unbound" : "",
			     nvmfd_auto_reason_name(q->ctl.last_reason));
	q->rescuing++;
	q->rescue_next = *rescue;
	*rescue = q;
}

/* Step 3: move the listed queues, then let the release work free them
 * again. Context: housekeeping thread, port->lock NOT held. */
void tcp_auto_rescue(struct tcp_port *port, struct tcp_queue *list)
{
	while (list) {
		struct tcp_queue *q = list, *next;

		tcp_queue_move(q, q->mv_rt, q->mv_cpu);
		pthread_mutex_lock(&port->lock);
		next = q->rescue_next;
		q->run_rt = q->mv_rt;
		__atomic_store_n(&q->run_cpu, q->mv_cpu, __ATOMIC_RELAXED);
		q->rescuing--;
		pthread_cond_broadcast(&port->cond);
		pthread_mutex_unlock(&port->lock);
		list = next;
	}
}

/* ops->stall_ns: what the checker measured at its last tick (its
 * resolution). Context: any thread (tgt->lock). */
uint64_t tcp_queue_stall_ns(struct nvmfd_tgt_qp *qp)
{
	struct tcp_queue *q = container_of(qp, struct tcp_queue, qp);

	return __atomic_load_n(&q->stall_ns, __ATOMIC_RELAXED);
}

/* Take the controller's idle-poll period. Context: queue owner, at the
 * start of a pass (q->auto_poll set). */
void tcp_auto_apply_poll(struct tcp_queue *q)
{
	unsigned int us = __atomic_load_n(&q->auto_poll_us, __ATOMIC_RELAXED);

	if (us == q->poll_applied)
		return;
	nvmfd_idle_poll_init(&q->idle, us);
	q->poll_applied = us;
}

/* Stats: the queue's execution state. Context: port->lock. */
void tcp_auto_queue_json(struct tcp_queue *q, json_object *o)
{
	json_object *e;

	json_object_object_add(o, "setup_stalls", json_object_new_uint64(__atomic_load_n(
							  &q->stalls, __ATOMIC_RELAXED)));
	json_object_object_add(o, "stall_ms", json_object_new_uint64(__atomic_load_n(
						      &q->stall_ns, __ATOMIC_RELAXED) /
									  1000000u));
	if (!tcp_auto_on(q->port))
		return;
	e = nvmfd_auto_stats_obj(&q->ctl);
	if (!e)
		return;
	json_object_object_add(e, "cpu", json_object_new_int(
						 __atomic_load_n(&q->run_cpu, __ATOMIC_RELAXED)));
	json_object_object_add(o, "exec", e);
}
