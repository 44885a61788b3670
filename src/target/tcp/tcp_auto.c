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
 *     and our workers' time on each CPU, then every CPU's idle share, the
 *     share others run there (niced work left out) and their contention
 *     (/proc/stat, /proc/schedstat; tcp_auto_sample_cpus()), and the PSI
 *     "some" share of the tick (recorded only), before taking port->lock
 *     (no /proc read under it);
 *  2. under port->lock, takes each queue's tick figures (queue delay,
 *     completion events/s, per pool the longest waits: tcp_auto_port_tick()),
 *     then measures how long each queue's work has waited
 *     for the target (tcp_auto_stall_ns(): its io_work queued without
 *     running, or input unread while it made no pass), and feeds each
 *     queue's controller (src/rt/auto.c) with that, its mean queue delay,
 *     the pressures, the signals of its CPU and io_cpu, whether another
 *     CPU is better, its command rate, whether its passes run to their
 *     deadline and how long its worker's other queues wait, and lists the
 *     queues whose
 *     placement changed (q->rescuing keeps the release work from freeing
 *     them);
 *  3. after dropping the lock, moves each listed queue's io_work
 *     (tcp_queue_move(): cancel, reset, nvmfd_rt_work_move()) to another
 *     CPU's bound pool, to the unbound "escape" runtime, or home.
 * Polling: unless --auto-no-poll (or a fixed --idle-poll-us, which then
 * applies as in the other modes), the controller's idle-poll period is
 * published in q->auto_poll_us and io_work takes it at the start of its
 * next pass (tcp_auto_apply()); backend completion polling follows it
 * (tcp_backend_polling()). Its inputs here: the mean command gap over the
 * tick, the slots in use as queue depth, the worker's run delay and the
 * CPU's signals. Budgets: the controller's budget shift is published in
 * q->auto_budget_shift and taken the same way (byte budgets and the pass
 * deadline divided). Completion source: chosen once, when the queue is
 * created (tcp_auto_cq_source()).
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
#include <unistd.h>

#include <sys/resource.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "net/sock.h"
#include "target/tcp/tcp_int.h"

static bool tcp_auto_on(const struct tcp_port *port)
{
	return port->gcfg->exec.exec_auto;
}

static uint64_t tcp_starve_ns(const struct tcp_port *port)
{
	return (uint64_t)(port->gcfg->exec.auto_starve_ms ?: 50) * 1000000ull;
}

/* The configured completion source is kept: --auto-no-cq, or a
 * --cq-pool shared under the default auto (nvmfd_cfg_exec_resolve(): no
 * mode given), where the user chose the source and not auto. */
static bool tcp_auto_keep_cq(const struct nvmfd_cfg_exec *ex)
{
	return ex->auto_no_cq || (ex->cq_pool_shared && ex->exec_mode_default);
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
	k.no_budget = ex->auto_no_budget;
	k.no_cq = tcp_auto_keep_cq(ex);
	k.no_follow = ex->auto_no_follow;
	nvmfd_auto_init(&q->ctl, &k);
	/* the CPU the queue calls home: its io_cpu, until the packets
	 * arrive elsewhere (the controller's incoming-CPU rule moves it) */
	q->ctl.home_cpu = q->io_cpu;
	q->in_cpu = -1;
	q->auto_local_peer = ex->exec_auto && nvmfd__sock_peer_is_local(q->fd) == 1;
	q->auto_poll = ex->exec_auto && !k.no_poll && !k.freeze;
	q->auto_budget = ex->exec_auto && !k.no_budget && !k.freeze;
	q->auto_apply = q->auto_poll || q->auto_budget;
	q->run_rt = q->port->rt;
	q->run_cpu = q->io_cpu;
}

/*
 * The completion source of a queue being enabled (Connect, before its ring
 * is opened): decided once, from the load of its io_cpu now, since a live
 * queue's ring cannot be switched under its ios in flight (they complete
 * on the ring they were submitted to). The decision is published under
 * port->lock (the stats read it there). Context: the queue's io_work.
 */
enum nvmfd_cq_src tcp_auto_cq_source(struct tcp_queue *q)
{
	struct tcp_port *port = q->port;
	const struct nvmfd_cfg_exec *ex = &port->gcfg->exec;
	struct nvmfd_auto_knobs k;
	unsigned int peers = 0;
	uint64_t eps = 0;
	bool shared;

	if (!tcp_auto_on(port) || !nvmfd__tgt_cq_can_share(port->tgt))
		return NVMFD_CQ_SRC_POOL;
	nvmfd_auto_knobs_init(&k);
	k.freeze = ex->auto_freeze;
	k.no_cq = tcp_auto_keep_cq(ex);
	pthread_mutex_lock(&port->lock);
	/* the I/O queues live on its io_cpu now, not the last tick's: a
	 * host that reconnects must not find its old queues there */
	for (const struct tcp_queue *p = port->queues; p && q->io_cpu >= 0; p = p->next) {
		if (p == q || p->io_cpu != q->io_cpu ||
		    !__atomic_load_n(&p->qp.qid, __ATOMIC_RELAXED) ||
		    !__atomic_load_n(&p->qp.cq, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&p->closing, __ATOMIC_RELAXED))
			continue;
		peers++;
		eps += p->cpl_eps;
	}
	shared = nvmfd_auto_cq_shared(&k, ex->cq_pool_shared, peers, eps);
	q->cq_auto = !k.freeze && !k.no_cq;
	q->cq_shared = shared;
	q->cq_peers = peers;
	q->cq_peer_eps = eps;
	pthread_mutex_unlock(&port->lock);
	if (q->cq_auto && shared != ex->cq_pool_shared)
		NVMFD_INFO_RATELIMIT(TCP_COMP,
				     "new queue on cpu %d: completions from %s (%u queues there, "
				     "%" PRIu64 " completion events/s)",
				     q->io_cpu, shared ? "the CPU's shared ring" : "its own ring",
				     peers, eps);
	return shared ? NVMFD_CQ_SRC_SHARED : NVMFD_CQ_SRC_QUEUE;
}

/* Return: 0, -ENOMEM. Context: ->add_port (before the housekeeping
 * thread starts: it reads port->apools without a lock). */
int tcp_auto_port_init(struct tcp_port *port)
{
	struct nvmfd_rt *esc = nvmfd__tgt_rt_escape(port->tgt);

	if (!tcp_auto_on(port) || !esc || !nvmfd__tgt_rt(port->tgt))
		return 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	port->nbound = nvmfd_rt_npools(nvmfd__tgt_rt(port->tgt));
	port->napools = port->nbound + nvmfd_rt_npools(esc);
	port->ncpus = ncpu > 0 && ncpu < CPU_SETSIZE ? (unsigned int)ncpu : CPU_SETSIZE;
	port->apools = calloc(port->napools, sizeof(*port->apools));
	port->acpus = calloc(port->ncpus, sizeof(*port->acpus));
	port->cpu_read = calloc(port->ncpus, sizeof(*port->cpu_read));
	if (!port->apools || !port->acpus || !port->cpu_read) {
		tcp_auto_port_fini(port);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < port->napools; i++)
		port->apools[i].cpu = -1;
	errno = 0;
	port->niced = getpriority(PRIO_PROCESS, 0) > 0 && !errno;
	return 0;
}

void tcp_auto_port_fini(struct tcp_port *port)
{
	free(port->apools);
	free(port->acpus);
	free(port->cpu_read);
	port->apools = NULL;
	port->acpus = NULL;
	port->cpu_read = NULL;
	port->napools = 0;
	port->ncpus = 0;
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

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1.0 ? 1.0 : v;
}

/* A pool whose workers ran at least this share of the tick is active:
 * their run delay describes its CPU (tcp_auto_level()). */
#define TCP_AUTO_ACTIVE 0.02

/* The per-CPU reading's period while no queue needs a decision. */
#define TCP_AUTO_CPUS_IDLE_NS 1000000000ull

/* A CPU with no room left for a nice-0 task (at most this share idle or
 * niced): without schedstat, whatever others run there is taken as their
 * contention. */
#define TCP_AUTO_IDLE_LO 0.1

/*
 * Step 1b: every CPU's idle share, the share run by others (busy minus
 * our bound workers there, minus niced background work: tasks at nice > 0
 * yield to a nice-0 poller, so their time is headroom) and the waits of
 * others on its run queue
 * (/proc/schedstat minus our workers' run delay; without schedstat: the
 * others' share when no idle time was left), smoothed 1/2 per tick (the
 * /proc/stat resolution is a clock tick, 10 % of a 100 ms tick at 100 Hz).
 * Our workers' figures were summed per CPU by the pool sampling just
 * before. Context: housekeeping thread, no lock.
 */
static void tcp_auto_sample_cpus(struct tcp_port *port, uint64_t now_ns)
{
	uint64_t wall = port->cpus_at_ns && now_ns > port->cpus_at_ns ? now_ns - port->cpus_at_ns : 0;
	bool has_delay;
	int n;

	/* nothing to decide (no command, no poller, every queue home): once
	 * a second is enough, and keeps an idle target cheap */
	if (!__atomic_load_n(&port->cpus_wanted, __ATOMIC_RELAXED) && wall &&
	    wall < TCP_AUTO_CPUS_IDLE_NS)
		return;
	n = nvmfd__proc_cpus(NULL, NULL, port->cpu_read, port->ncpus, &has_delay);
	if (n < 0)
		return; /* no /proc/stat: the per-CPU rules stay off */
	/* the stats and the accept work read the results under the lock */
	pthread_mutex_lock(&port->lock);
	port->has_delay = has_delay;
	for (unsigned int c = 0; c < port->ncpus; c++) {
		struct tcp_auto_cpu *ac = &port->acpus[c];
		const struct nvmfd_proc_cpu *r = &port->cpu_read[c];

		if (wall && r->online && ac->prev.online && r->total_ns > ac->prev.total_ns) {
			double dt = (double)(r->total_ns - ac->prev.total_ns);
			double idle = r->idle_ns >= ac->prev.idle_ns ?
					      clamp01((double)(r->idle_ns - ac->prev.idle_ns) / dt) :
					      ac->now.idle; /* iowait may run backwards */
			double ours = clamp01((double)ac->ours_exec_ns / (double)wall);
			double bg = r->nice_ns >= ac->prev.nice_ns ?
					    (double)(r->nice_ns - ac->prev.nice_ns) / dt :
					    0;
			double others, head, delay = 0;

			/* niced tasks (nice > 0) yield to a nice-0 poller: their
			 * time is headroom, not others' (unless it is ours: a
			 * target run under nice counts there itself) */
			if (port->niced)
				bg = bg > ours ? bg - ours : 0;
			others = clamp01(1.0 - idle - ours - bg);
			head = clamp01(idle + bg);

			if (has_delay && r->run_delay_ns >= ac->prev.run_delay_ns)
				delay = clamp01(((double)(r->run_delay_ns - ac->prev.run_delay_ns) -
						 (double)ac->ours_delay_ns) /
						(double)wall);
			if (ac->now.known) {
				idle = (ac->now.idle + idle) / 2;
				head = (ac->head + head) / 2;
				others = (ac->now.others + others) / 2;
				delay = (ac->delay + delay) / 2;
			}
			ac->now.idle = idle;
			ac->now.others = others;
			ac->delay = delay;
			ac->head = head;
			/* without schedstat: others wait when the CPU had no
			 * room left for a nice-0 task (idle or niced time) */
			ac->now.contention = has_delay ? delay : head <= TCP_AUTO_IDLE_LO ? others : 0;
			ac->now.known = true;
		} else if (!r->online) {
			ac->now.known = false;
		}
		ac->prev = *r;
		ac->ours_exec_ns = ac->ours_delay_ns = 0;
	}
	pthread_mutex_unlock(&port->lock);
	port->cpus_at_ns = now_ns;
}

/* Step 1: pool pressures, our workers' time per CPU, the CPUs (and PSI,
 * recorded). Context: housekeeping thread, no lock held. */
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
		double worst = 0, ran = 0;

		if (nvmfd_rt_pool_sched(rt, idx, &ps))
			continue;
		if (ap->cpu < 0 && i < port->nbound)
			ap->cpu = tcp_pool_cpu(rt, idx);
		/* the worker that waited most for its CPU: a bound pool's spare
		 * workers sleep, and must not dilute the one that runs */
		for (unsigned int w = 0; ap->at_ns && now_ns > ap->at_ns && w < ps.nworkers; w++) {
			double p;
			int cpu;

			if (w >= ap->nworkers || ps.run_delay_ns[w] < ap->run_delay_ns[w])
				continue; /* new worker: no previous reading */
			p = (double)(ps.run_delay_ns[w] - ap->run_delay_ns[w]) /
			    (double)(now_ns - ap->at_ns);
			if (p > worst)
				worst = p;
			if (ps.exec_ns[w] >= ap->exec_ns[w])
				ran += (double)(ps.exec_ns[w] - ap->exec_ns[w]) /
				       (double)(now_ns - ap->at_ns);
			/* a bound pool's workers run on its CPU only; an
			 * unbound (escape) worker's time goes to the CPU its
			 * last run ended on (it may have run elsewhere in the
			 * tick too): else a queue moved there would count as
			 * "others" on its own io_cpu and keep itself away */
			cpu = ap->cpu >= 0 ? ap->cpu : i >= port->nbound ? ps.last_cpu[w] : -1;
			if (cpu >= 0 && (unsigned int)cpu < port->ncpus &&
			    ps.exec_ns[w] >= ap->exec_ns[w]) {
				port->acpus[cpu].ours_exec_ns += ps.exec_ns[w] - ap->exec_ns[w];
				port->acpus[cpu].ours_delay_ns +=
					ps.run_delay_ns[w] - ap->run_delay_ns[w];
			}
		}
		if (ap->at_ns && now_ns > ap->at_ns) {
			ap->pressure = worst > 1.0 ? 1.0 : worst;
			ap->busy = ran;
		}
		/* a pool whose run queue does not move is fully contended,
		 * whatever its workers' run delay says (a worker stuck in one
		 * item is not waiting for the CPU) */
		if (ps.runq_head_age_ns >= tcp_starve_ns(port))
			ap->pressure = 1.0;
		memcpy(ap->run_delay_ns, ps.run_delay_ns, sizeof(ap->run_delay_ns));
		memcpy(ap->exec_ns, ps.exec_ns, sizeof(ap->exec_ns));
		ap->nworkers = ps.nworkers;
		ap->at_ns = now_ns;
	}
	tcp_auto_sample_cpus(port, now_ns);
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
	__atomic_store_n(&q->stall_queued_ns, pending_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&q->stall_unread_ns, q->in_since_ns ? now_ns - q->in_since_ns : 0,
			 __ATOMIC_RELAXED);
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

/* A CPU's signals, or unknown ones for a CPU outside the table. */
static struct nvmfd_auto_cpu tcp_auto_cpu_of(const struct tcp_port *port, int cpu)
{
	struct nvmfd_auto_cpu none = { .known = false };

	if (cpu < 0 || (unsigned int)cpu >= port->ncpus)
		return none;
	return port->acpus[cpu].now;
}

/* The signals of an unbound pool: the scheduler picks among the
 * runtime's CPUs, so the mean of the bound pools' CPUs. */
static struct nvmfd_auto_cpu tcp_auto_cpu_unbound(const struct tcp_port *port)
{
	struct nvmfd_auto_cpu m = { .known = false };
	unsigned int n = 0;

	for (unsigned int i = 0; i < port->nbound; i++) {
		struct nvmfd_auto_cpu c = tcp_auto_cpu_of(port, port->apools[i].cpu);

		if (!c.known)
			continue;
		m.idle += c.idle;
		m.others += c.others;
		m.contention += c.contention;
		n++;
	}
	if (n) {
		m.idle /= n;
		m.others /= n;
		m.contention /= n;
		m.known = true;
	}
	return m;
}

/* The bound pool (index < nbound) other than @skip1/@skip2 with the most
 * headroom, if it has some: pool pressure (and, with per-CPU signals,
 * its CPU's contention) <= @lo, and others running at most half of its
 * CPU. Return: its index or -1. */
static int tcp_auto_alt_pool(struct tcp_port *port, unsigned int skip1, unsigned int skip2,
			     double lo)
{
	double best_load = 0;
	int best = -1;

	for (unsigned int i = 0; i < port->nbound; i++) {
		struct nvmfd_auto_cpu c = tcp_auto_cpu_of(port, port->apools[i].cpu);
		double load = port->apools[i].pressure;

		if (i == skip1 || i == skip2 || !port->apools[i].at_ns)
			continue;
		if (c.known) {
			if (c.contention > lo || c.others > 0.5)
				continue;
			load += c.contention + c.others;
		}
		if (port->apools[i].pressure > lo)
			continue;
		if (best < 0 || load < best_load) {
			best = (int)i;
			best_load = load;
		}
	}
	return best;
}

/* Another bound pool's CPU than pool @cur's was idle for at least @min
 * of the last tick (the shared-CPU rule, struct nvmfd_auto_knobs). */
static bool tcp_auto_spare_cpu(const struct tcp_port *port, unsigned int cur, double min)
{
	for (unsigned int i = 0; i < port->nbound; i++) {
		struct nvmfd_auto_cpu c;

		if (i == cur)
			continue;
		c = tcp_auto_cpu_of(port, port->apools[i].cpu);
		if (c.known && c.idle >= min)
			return true;
	}
	return false;
}

/* How contended pool @i's CPU is for a queue of ours: where our workers
 * ran in the last tick, their own run delay (what a queue there waits,
 * whatever the priorities of the others); else the CPU's contention. The
 * same measure for every pool, the current one included, so that two
 * CPUs cannot each look better than the other. */
static double tcp_auto_level(struct tcp_port *port, unsigned int i)
{
	const struct tcp_auto_pool *ap = &port->apools[i];
	struct nvmfd_auto_cpu c;

	if (ap->busy >= TCP_AUTO_ACTIVE || i >= port->nbound)
		return ap->pressure;
	c = tcp_auto_cpu_of(port, ap->cpu);
	return c.known ? c.contention : ap->pressure;
}

/* Another bound pool's CPU is less contended than pool @cur's by @margin. */
static bool tcp_auto_better_cpu(struct tcp_port *port, unsigned int cur, double margin)
{
	double level = tcp_auto_level(port, cur);

	for (unsigned int i = 0; i < port->nbound; i++)
		if (i != cur && port->apools[i].cpu >= 0 &&
		    tcp_auto_level(port, i) + margin <= level)
			return true;
	return false;
}

/* The apools index @q runs on now, and its home CPU's (*@home). */
static unsigned int tcp_auto_cur_pool(struct tcp_queue *q, unsigned int *home)
{
	struct tcp_port *port = q->port;
	struct nvmfd_rt *esc = nvmfd__tgt_rt_escape(port->tgt);

	*home = nvmfd_rt_pool_of_cpu(port->rt, q->ctl.home_cpu);
	if (q->run_rt == esc)
		return port->nbound + nvmfd_rt_pool_of_cpu(esc, q->run_cpu);
	return nvmfd_rt_pool_of_cpu(port->rt, q->run_cpu);
}

/*
 * Step 2a, before the queues' samples: each queue's mean queue delay over
 * the tick and its completion events per second; per pool the two
 * longest queue delays (so that each queue learns how long the others on
 * its worker waited); per CPU the queues whose io_cpu it is and their
 * completion events per second (tcp_auto_cq_source()). Context:
 * housekeeping thread, port->lock.
 */
void tcp_auto_port_tick(struct tcp_port *port, uint64_t now_ns)
{
	struct nvmfd_auto_knobs k;
	struct tcp_queue *q;
	bool wanted;

	if (!tcp_auto_on(port) || !port->apools || !nvmfd__tgt_rt_escape(port->tgt))
		return;
	for (unsigned int i = 0; i < port->napools; i++) {
		port->apools[i].qd1 = port->apools[i].qd2 = 0;
		port->apools[i].qd1_q = NULL;
	}
	wanted = false;
	for (q = port->queues; q; q = q->next) {
		uint64_t runs = __atomic_load_n(&q->io_work.runs, __ATOMIC_RELAXED);
		uint64_t qdelay = __atomic_load_n(&q->io_work.queue_delay_ns, __ATOMIC_RELAXED);
		struct nvmfd_cq_stats cs = { 0 };
		struct tcp_auto_pool *ap;
		unsigned int home;

		q->t_qdelay = q->ctl_ns && runs > q->ctl_runs ?
				      (qdelay - q->ctl_qdelay) / (runs - q->ctl_runs) :
				      0;
		{
			/* opened by the owner when the queue is enabled */
			struct nvmfd_cq *cq = __atomic_load_n(&q->qp.cq, __ATOMIC_ACQUIRE);

			if (cq)
				nvmfd_cq_get_stats(cq, &cs);
		}
		/* events a shared ring could merge: not the inline completions
		 * of a RAM or null namespace (cqe_events, internal/cqpool.h) */
		q->cpl_eps = q->ctl_ns && now_ns > q->ctl_ns && cs.cqe_events >= q->ctl_cpl_ev ?
				     (cs.cqe_events - q->ctl_cpl_ev) * 1000000000ull /
					     (now_ns - q->ctl_ns) :
				     0;
		q->ctl_cpl_ev = cs.cqe_events;
		q->t_pool = tcp_auto_cur_pool(q, &home);
		if (q->t_pool < port->napools) {
			ap = &port->apools[q->t_pool];
			if (q->t_qdelay > ap->qd1) {
				ap->qd2 = ap->qd1;
				ap->qd1 = q->t_qdelay;
				ap->qd1_q = q;
			} else if (q->t_qdelay > ap->qd2) {
				ap->qd2 = q->t_qdelay;
			}
		}
		/* the next tick's controllers need fresh per-CPU signals */
		wanted = wanted || TCP_STAT_LOAD(q, cmds) != q->ctl_cmds || q->ctl.poll_us ||
			 q->ctl.place != NVMFD_AUTO_BOUND;
	}
	__atomic_store_n(&port->cpus_wanted, wanted, __ATOMIC_RELAXED);
	/* per pool, not per queue: thousands of queues share a few pools */
	nvmfd_auto_knobs_init(&k);
	for (unsigned int i = 0; i < port->napools; i++) {
		port->apools[i].better = tcp_auto_better_cpu(port, i, k.better_margin);
		port->apools[i].spare = k.spare_idle_min > 0 &&
					tcp_auto_spare_cpu(port, i, k.spare_idle_min);
	}
}

/*
 * The owner, after a recv() that returned bytes while the watchdog asked
 * (q->in_want): the socket's SO_INCOMING_CPU now names the CPU that
 * delivered a data segment. Read at an arbitrary time it may name the
 * one that delivered a pure ACK (on loopback: the CPU of our own send,
 * whose ACK the peer's receive path sends back at once), so it is read
 * here, once per tick at most. Context: the queue's io_work.
 */
void tcp_auto_note_incoming(struct tcp_queue *q)
{
	int cpu = nvmfd__sock_incoming_cpu(q->fd);

	__atomic_store_n(&q->in_cpu, cpu < 0 ? -1 : cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&q->in_want, false, __ATOMIC_RELAXED);
}

/*
 * Where @q's packets arrive (the incoming-CPU rule, rt.h): the CPU the
 * owner saw its data come from since the last tick
 * (tcp_auto_note_incoming()), if the queue received commands this tick
 * (@arrivals) and it is a CPU of the port's runtime; "other" when that
 * CPU is no more contended for a queue of ours than the home one
 * (tcp_auto_level(), the better_cpu measure, with @margin of slack).
 * Asks the owner for the next tick's. A queue with a shared completion
 * ring stays where it is: the ring, and its completion work, belong to
 * the io_cpu, so a move would add the cross-CPU hop the rule removes.
 * Context: housekeeping thread, port->lock.
 */
static enum nvmfd_auto_incoming tcp_auto_incoming(struct tcp_queue *q, bool arrivals,
						  unsigned int home, double margin, int *cpu)
{
	struct tcp_port *port = q->port;
	unsigned int pool;
	int in = __atomic_exchange_n(&q->in_cpu, -1, __ATOMIC_RELAXED);

	*cpu = -1;
	/* no question the answer of which is thrown away below (a getsockopt
	 * in io_work per tick) */
	__atomic_store_n(&q->in_want,
			 !(q->ctl.k.no_follow || q->ctl.k.freeze || q->ctl.k.bound || q->cq_shared),
			 __ATOMIC_RELAXED);
	if (!arrivals || in < 0 || q->cq_shared || __atomic_load_n(&q->closing, __ATOMIC_RELAXED))
		return NVMFD_AUTO_IN_UNKNOWN;
	/* a CPU the runtime does not use maps to one it does: not ours */
	pool = nvmfd_rt_pool_of_cpu(port->rt, in);
	if (pool >= port->nbound || port->apools[pool].cpu != in)
		return NVMFD_AUTO_IN_UNKNOWN;
	if (pool == home)
		return NVMFD_AUTO_IN_HOME;
	if (tcp_auto_level(port, pool) > tcp_auto_level(port, home) + margin)
		return NVMFD_AUTO_IN_BUSY;
	*cpu = in;
	return NVMFD_AUTO_IN_OTHER;
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
	uint64_t rehomes = q->ctl.rehomes;
	bool staying = q->ctl.staying;
	unsigned int shift = q->ctl.budget_shift;
	uint64_t runs = __atomic_load_n(&q->io_work.runs, __ATOMIC_RELAXED);
	uint64_t qdelay = __atomic_load_n(&q->io_work.queue_delay_ns, __ATOMIC_RELAXED);
	uint64_t cmds = TCP_STAT_LOAD(q, cmds), passes = TCP_STAT_LOAD(q, passes);
	uint64_t work = TCP_STAT_LOAD(q, work_passes);
	uint32_t nr = __atomic_load_n(&q->nr_reqs, __ATOMIC_RELAXED);
	uint32_t nr_free = __atomic_load_n(&q->nr_state[TCP_REQ_FREE], __ATOMIC_RELAXED);
	uint64_t dl = TCP_STAT_LOAD(q, deadline_exhausted);
	const struct tcp_auto_pool *ap;
	unsigned int home, cur;
	int alt;

	if (!tcp_auto_on(port) || !esc || !port->apools || q->rescuing)
		return;
	cur = tcp_auto_cur_pool(q, &home);
	if (cur >= port->napools || home >= port->nbound)
		return;
	ap = &port->apools[cur];
	s.queue_delay_ns = q->t_qdelay;
	if (q->ctl_ns && cmds > q->ctl_cmds && now_ns > q->ctl_ns)
		s.arrival_gap_ns = (now_ns - q->ctl_ns) / (cmds - q->ctl_cmds);
	/* slots in use, or commands per pass that found work when a RAM
	 * namespace's inline completions keep the slots free */
	s.qd = nvmfd_auto_qd(nr > nr_free ? (double)(nr - nr_free) : 0, /* racy reads */
			     q->ctl_ns && cmds > q->ctl_cmds ? cmds - q->ctl_cmds : 0,
			     q->ctl_ns && work > q->ctl_work ? work - q->ctl_work : 0);
	s.pressure = ap->pressure;
	s.sys_pressure = port->psi.some;
	s.home_pressure = port->apools[home].pressure;
	s.cpl_per_s = q->cpl_eps;
	s.cpu = cur < port->nbound ? tcp_auto_cpu_of(port, ap->cpu) : tcp_auto_cpu_unbound(port);
	s.home = tcp_auto_cpu_of(port, port->apools[home].cpu);
	if (!s.home.known)
		s.cpu.known = false; /* all per-CPU or none */
	alt = tcp_auto_alt_pool(port, home, cur, q->ctl.k.pressure_lo);
	s.alt_cpu = alt >= 0;
	/* computed per pool with the default margins (tcp_auto_port_tick();
	 * no knob changes them) */
	s.better_cpu = s.cpu.known && ap->better;
	s.spare_cpu = s.cpu.known && ap->spare;
	if (alt >= 0) {
		struct nvmfd_auto_cpu c = tcp_auto_cpu_of(port, port->apools[alt].cpu);

		s.alt_quiet = c.known && c.others <= q->ctl.k.poll_others_max &&
			      c.idle >= q->ctl.k.spare_idle_min;
	}
	/* heavy: a quarter of its passes, and at least two, ran to the
	 * deadline with work left */
	s.heavy = q->ctl_ns && passes > q->ctl_passes && dl >= q->ctl_dl + 2 &&
		  4 * (dl - q->ctl_dl) >= passes - q->ctl_passes;
	s.peer_delay_ns = ap->qd1_q == q ? ap->qd2 : ap->qd1;
	s.incoming = tcp_auto_incoming(q, q->ctl_ns && cmds > q->ctl_cmds, home,
				       q->ctl.k.better_margin, &s.incoming_cpu);
	s.local_peer = q->auto_local_peer;
	q->ctl_runs = runs;
	q->ctl_qdelay = qdelay;
	q->ctl_cmds = cmds;
	q->ctl_passes = passes;
	q->ctl_work = work;
	q->ctl_dl = dl;
	q->ctl_ns = now_ns;

	if (s.arrival_gap_ns || q->ctl.poll_us)
		NVMFD_DBG(TCP_COMP,
			  "queue %u auto sample: gap %" PRIu64 " ns, qd %.1f, run delay %.3f, "
			  "queue delay %" PRIu64 " us, cpu %d idle %.2f others %.2f contention "
			  "%.2f, psi %.2f, poll %u us",
			  q->id, s.arrival_gap_ns, s.qd, s.pressure, s.queue_delay_ns / 1000u,
			  q->run_cpu, s.cpu.idle, s.cpu.others, s.cpu.contention, s.sys_pressure,
			  q->ctl.poll_us);
	if (!nvmfd_auto_update(&q->ctl, &s))
		return;
	if (q->ctl.budget_shift != shift) {
		__atomic_store_n(&q->auto_budget_shift, q->ctl.budget_shift, __ATOMIC_RELAXED);
		NVMFD_INFO_RATELIMIT(TCP_COMP,
				     "queue %u peer %s: byte budgets and pass deadline / %u: %s "
				     "(a queue on its worker waited %" PRIu64 " us)",
				     q->id, q->qp.peer_addr, 1u << q->ctl.budget_shift,
				     nvmfd_auto_reason_name(q->ctl.budget_reason),
				     s.peer_delay_ns / 1000u);
	}
	if (q->ctl.staying && !staying)
		NVMFD_INFO_RATELIMIT(TCP_COMP,
				     "queue %u peer %s: cpu %d contended (run delay %.2f, others "
				     "wait %.2f) but no CPU is better: stays",
				     q->id, q->qp.peer_addr, q->run_cpu, s.pressure,
				     s.cpu.contention);
	if (q->auto_poll &&
	    __atomic_load_n(&q->auto_poll_us, __ATOMIC_RELAXED) != q->ctl.poll_us) {
		__atomic_store_n(&q->auto_poll_us, q->ctl.poll_us, __ATOMIC_RELAXED);
		if (!q->ctl.poll_us && q->ctl.last_reason == NVMFD_AUTO_R_CONTENDED)
			NVMFD_INFO_RATELIMIT(TCP_COMP,
					     "queue %u peer %s: idle polling off: contended (%s; "
					     "cpu %d: run delay %.2f, others %.2f, contention %.2f, "
					     "queue delay %" PRIu64 " us)",
					     q->id, q->qp.peer_addr,
					     nvmfd_auto_cause_name(q->ctl.poll_cause), q->run_cpu,
					     s.pressure, s.cpu.others, s.cpu.contention,
					     s.queue_delay_ns / 1000u);
		else
			NVMFD_INFO_RATELIMIT(TCP_COMP, "queue %u peer %s: idle polling %s (%u us): %s",
					     q->id, q->qp.peer_addr, q->ctl.poll_us ? "on" : "off",
					     q->ctl.poll_us,
					     nvmfd_auto_reason_name(q->ctl.last_reason));
		tcp_queue_kick(q); /* a sleeping queue starts polling now */
	}
	if (q->ctl.rehomes != rehomes) {
		q->mv_rt = port->rt;
		q->mv_cpu = q->ctl.home_cpu;
		NVMFD_INFO_RATELIMIT(TCP_COMP,
				     "queue %u peer %s: home cpu %d -> %d: its packets arrive there "
				     "(%s)",
				     q->id, q->qp.peer_addr, q->run_cpu, q->mv_cpu,
				     nvmfd_auto_reason_name(q->ctl.last_reason));
		goto move;
	}
	if (q->ctl.place == before)
		return;
	switch (q->ctl.place) {
	case NVMFD_AUTO_BOUND:
		q->mv_rt = port->rt;
		q->mv_cpu = q->ctl.home_cpu;
		break;
	case NVMFD_AUTO_MOVED:
		q->mv_rt = port->rt;
		q->mv_cpu = port->apools[alt].cpu; /* no /proc read under the lock */
		break;
	default:
		q->mv_rt = esc;
		q->mv_cpu = q->ctl.home_cpu; /* a hint only: the scheduler picks */
		break;
	}
	NVMFD_INFO_RATELIMIT(TCP_COMP, "queue %u peer %s: exec %s -> %s (cpu %d -> %d%s): %s",
			     q->id, q->qp.peer_addr, nvmfd_auto_place_name(before),
			     nvmfd_auto_place_name(q->ctl.place), q->run_cpu, q->mv_cpu,
			     q->mv_rt == esc ? ", unbound" : "",
			     nvmfd_auto_reason_name(q->ctl.last_reason));
move:
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

/* ops->stall_parts: the two parts of that measure. Context: as above. */
void tcp_queue_stall_parts(struct nvmfd_tgt_qp *qp, uint64_t *unread_ns, uint64_t *queued_ns)
{
	struct tcp_queue *q = container_of(qp, struct tcp_queue, qp);

	*unread_ns = __atomic_load_n(&q->stall_unread_ns, __ATOMIC_RELAXED);
	*queued_ns = __atomic_load_n(&q->stall_queued_ns, __ATOMIC_RELAXED);
}

/* Byte budgets start here when configured unlimited (0) and tightened. */
#define TCP_AUTO_BUDGET_BASE (512u * 1024u)
#define TCP_AUTO_BUDGET_MIN (16u * 1024u)

static uint64_t tcp_auto_bytes(uint32_t configured, unsigned int shift)
{
	uint64_t b = configured ? configured : TCP_AUTO_BUDGET_BASE;

	if (!shift)
		return configured;
	b >>= shift;
	return b < TCP_AUTO_BUDGET_MIN ? TCP_AUTO_BUDGET_MIN : b;
}

/* Take the controller's idle-poll period and budgets. Context: queue
 * owner, at the start of a pass (q->auto_apply set). */
void tcp_auto_apply(struct tcp_queue *q)
{
	const struct nvmfd_cfg_exec *ex = &q->port->gcfg->exec;
	unsigned int us = __atomic_load_n(&q->auto_poll_us, __ATOMIC_RELAXED);
	unsigned int sh = __atomic_load_n(&q->auto_budget_shift, __ATOMIC_RELAXED);

	if (q->auto_poll && us != q->poll_applied) {
		nvmfd_idle_poll_init(&q->idle, us);
		q->poll_applied = us;
	}
	if (q->auto_budget && sh != q->budget_applied) {
		nvmfd_budget_init(&q->rx_budget, tcp_auto_bytes(ex->rx_budget_bytes, sh),
				  ex->rx_budget_pdus);
		nvmfd_budget_init(&q->tx_budget, tcp_auto_bytes(ex->tx_budget_bytes, sh),
				  ex->tx_budget_pdus);
		q->budget_applied = sh;
	}
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
	json_object_object_add(e, "home_cpu", json_object_new_int(q->ctl.home_cpu));
	json_object_object_add(e, "local_peer", json_object_new_boolean(q->auto_local_peer));
	json_object_object_add(e, "cpl_events_s", json_object_new_uint64(q->cpl_eps));
	/* the completion source, chosen at creation (or as configured) */
	json_object_object_add(e, "cq", json_object_new_string(q->cq_shared ? "shared" : "per-queue"));
	json_object_object_add(e, "cq_decided", json_object_new_boolean(q->cq_auto));
	json_object_object_add(e, "cq_peers", json_object_new_int((int)q->cq_peers));
	json_object_object_add(e, "cq_peer_events_s", json_object_new_uint64(q->cq_peer_eps));
	if (q->run_rt != nvmfd__tgt_rt_escape(q->port->tgt)) {
		struct nvmfd_auto_cpu c = tcp_auto_cpu_of(q->port, q->run_cpu);

		if (c.known) {
			json_object *p = json_object_new_object();

			json_object_object_add(p, "idle", json_object_new_double(c.idle));
			json_object_object_add(p, "others", json_object_new_double(c.others));
			json_object_object_add(p, "contention",
					       json_object_new_double(c.contention));
			json_object_object_add(p, "schedstat",
					       json_object_new_boolean(q->port->has_delay));
			json_object_object_add(e, "cpu_load", p);
		}
	}
	json_object_object_add(o, "exec", e);
}
