// SPDX-License-Identifier: MIT
/*
 * pool.c - worker pools, run queues, readiness and work-item state.
 *
 * Model (doc/execution-model.md §1-2):
 *
 * - BOUND: one pool per runtime CPU, one worker thread pinned to it, one
 *   item running at a time (concurrency level 1). The kernel's concurrency
 *   management starts another worker when the running one sleeps; our work
 *   items do not block (non-blocking sockets, io_uring), so one pinned
 *   worker per CPU is the steady state. We cannot see a worker sleep from
 *   user space, so an item that must block brackets the call with
 *   nvmfd_rt_blocking_begin/end(): meanwhile it does not count as running
 *   and an idle (or newly started, up to RT_SPARE_WORKERS) worker pinned
 *   to the same CPU takes the queue.
 * - UNBOUND: one pool per affinity-scope unit (topology.c), with
 *   workers_per_pool workers (default: CPUs of the unit). Strict: the
 *   workers' affinity is the unit, always. Not strict: the workers may run
 *   on any runtime CPU; when one starts an item while it is outside its
 *   unit it is "repatriated": its affinity is set to the unit (the kernel
 *   migrates the caller at once) and widened again, so the scheduler may
 *   move it later, like the kernel's non-strict pods.
 * - A work item maps to exactly one pool for its lifetime (the one of its
 *   io_cpu), so "runs again on the same pool" holds by construction.
 *
 * Work-item state: PENDING (on a run queue or owed a run) and RUNNING.
 * All transitions happen under the item's pool lock; the flags are atomic
 * only so that lock-free readers see whole values. Queueing a PENDING item
 * coalesces; queueing a RUNNING one sets PENDING and the worker re-queues
 * it when the current run returns, so an item never runs twice at once.
 *
 * max_active: a worker takes an item from the run queue only while fewer
 * than max_active items of its pool are in flight.
 *
 * Two run lists per pool: items marked urgent (nvmfd_rt_work_set_urgent(),
 * e.g. NVMe admin queues: Keep Alive, AERs) wait on their own FIFO, which
 * a worker takes from before the normal one. An urgent item queued while
 * the normal list holds thousands of items that each run a full pass
 * therefore waits for the run in progress only, not for a round of them.
 * Both lists are FIFO, so urgent items are served in turn among
 * themselves; an item re-queued while it runs (its own re-queue, as an
 * idle-polling queue does, or an event during its run) goes on the normal
 * list, so an urgent item can take the worker ahead of the round once per
 * wake-up, never keep it; the normal list runs whenever the urgent one is
 * empty.
 *
 * Readiness: each pool has an epoll fd holding an eventfd (cross-thread
 * kicks) and the watched fds: one-shot (EPOLLONESHOT, re-armed by one
 * EPOLL_CTL_MOD per wake-up) or, when the watcher asks for EPOLLET,
 * persistent and edge-triggered: every new edge queues the item (a run in
 * progress gets PENDING and runs again), and watching again with the same
 * events costs no system call. Idle workers block in
 * epoll_wait(); busy ones also look (without sleeping) every
 * RT_BUSY_POLL_RUNS runs, so a run queue that never empties (items that
 * re-queue themselves) cannot hide a ready fd (the kernel's sk_data_ready
 * runs in softirq, whatever the workers do; ours needs a worker to ask).
 * Watched fds are tracked per pool, in a table indexed by fd number under
 * the pool's own lock (no process-wide lock on the readiness path); epoll
 * data carries (generation << 32 | fd), and an event is only dispatched if
 * the slot still has that generation, under that lock, which also queues
 * the item. So once nvmfd_rt_unwatch_fd() returned no worker can touch the
 * item through a stale event: after nvmfd_rt_work_cancel_sync() (no run in
 * progress, none to come, so nobody re-arms) and the unwatches, the item
 * may be freed. A new registration first drops the fd from the other pools
 * (one pool lock at a time: pool locks never nest).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <json-c/json.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "internal/rt_ring.h"
#include "rt/rt_int.h"

#define WORK_PENDING 0x1u
#define WORK_RUNNING 0x2u
#define WORK_CANCELED 0x8u

#define RT_DEFAULT_MAX_ACTIVE 512
#define RT_KICK_DATA UINT64_MAX
/* Events taken per epoll_wait(): a worker queues them all, then chain-kicks
 * idle siblings, so a small batch keeps the latency of the others low. */
#define RT_MAX_EVENTS 16
/* A worker that keeps finding items on its run queue looks at readiness
 * (a non-blocking epoll_wait) at least once per this many runs: otherwise
 * items that re-queue themselves (idle polling, work left) would keep every
 * worker of the pool busy and no fd it watches would ever be reported. */
#define RT_BUSY_POLL_RUNS 8
/* Worker ring sizes (opts.uring): SQEs prepared between two enters, and
 * CQEs: each socket holds at most 2 x its receive buffers + a few. */
#define RT_RING_SQ 256u
#define RT_RING_CQ 8192u
/* Extra workers a pool may start while its workers sit in blocking
 * sections (the kernel creates them without a fixed cap; a few keep a
 * misbehaving item from exhausting threads). */
#define RT_SPARE_WORKERS 3

struct rt_pool;

struct rt_worker {
	struct rt_pool *pool;
	unsigned int idx;
	pthread_t thread;
	bool started; /* under pool lock */
	bool in_block; /* inside nvmfd_rt_blocking_begin/end; own thread only */
	/* written by the worker, read relaxed by stats */
	int tid;
	int last_cpu;
	uint64_t runs;
	uint64_t wakeups;
	uint64_t events;
	uint64_t busy_ns;
	uint64_t queue_delay_ns;
	uint64_t queue_delay_max_ns;
	uint64_t hogs;
	uint64_t repatriations;
	unsigned int runs_since_poll; /* own thread only */
	bool ring_dirty; /* own thread: ran an item since the last enter */
};

struct rt_pool {
	struct nvmfd_rt *rt;
	unsigned int idx;
	cpu_set_t cpus;
	int epfd;
	int evfd;
	struct nvmfd_rt_ring *ring; /* opts.uring: the worker ring */
	bool lock_init;
	pthread_mutex_t lock;
	pthread_cond_t done_cv;
	/* protected by lock */
	struct nvmfd_work *head, *tail; /* the normal run list */
	struct nvmfd_work *uhead, *utail; /* the urgent one, taken first */
	unsigned int qlen, qlen_max; /* both lists */
	uint64_t urgent_runs;
	unsigned int active, active_max;
	unsigned int nidle;
	unsigned int nrunning; /* running items not inside a blocking section */
	unsigned int nworkers; /* started so far */
	unsigned int cancel_waiters;
	bool kicked;
	bool stopping;
	uint64_t kicks;
	struct rt_watch *watches; /* indexed by fd */
	size_t nwatches;
	/* constant after create */
	unsigned int max_active;
	unsigned int concurrency; /* bound: 1 (concurrency managed); unbound: no cap */
	unsigned int max_workers; /* capacity of workers[] */
	struct rt_worker *workers;
};

/* A watched fd of a pool (pool->watches[fd], pool->lock). */
struct rt_watch {
	struct nvmfd_work *w;
	uint32_t gen;
	uint32_t events; /* as registered (EPOLLET: persistent) */
};

struct nvmfd_rt {
	struct nvmfd_rt_opts opts;
	char name[9];
	struct nvmfd__rt_topo *topo;
	bool placer_init;
	struct nvmfd__rt_placer placer;
	unsigned int ncpus;
	unsigned int npools;
	struct rt_pool *pools;
	short pool_of[CPU_SETSIZE];
	int cpu_list[CPU_SETSIZE];
	bool unpinned; /* nvmfd_rt_unpin(): atomic, set once */
};

/* The item the current thread is running, to catch cancel_sync from itself. */
static __thread struct nvmfd_work *rt_current;
/* The worker the current thread is, NULL outside the runtime. */
static __thread struct rt_worker *rt_self;
/* The worker is reaping its pool's ring (worker_ring_reap()). */
static __thread bool rt_reaping;

static void *worker_main(void *arg);
static int worker_spawn(struct rt_pool *pool);

static inline uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void add(uint64_t *p, uint64_t v)
{
	/* single writer: a relaxed load + store is enough and cheaper than an RMW */
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline uint32_t flags_get(const struct nvmfd_work *w)
{
	return __atomic_load_n(&w->flags, __ATOMIC_RELAXED);
}

static inline void flags_set(struct nvmfd_work *w, uint32_t f)
{
	__atomic_store_n(&w->flags, f, __ATOMIC_RELAXED);
}

void nvmfd_rt_opts_init(struct nvmfd_rt_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->mode = NVMFD_RT_BOUND;
	opts->scope = NVMFD_RT_SCOPE_CACHE;
	opts->strict = false;
	opts->max_active = RT_DEFAULT_MAX_ACTIVE;
	opts->workers_per_pool = 0;
	CPU_ZERO(&opts->cpus);
	opts->sysfs_root = NULL;
	opts->name = "nvmfd";
}

static unsigned int pool_index(const struct nvmfd_rt *rt, int cpu)
{
	if (cpu >= 0 && cpu < CPU_SETSIZE && rt->pool_of[cpu] >= 0)
		return (unsigned int)rt->pool_of[cpu];
	/* not a runtime CPU: spread deterministically over the runtime CPUs */
	if (cpu < 0)
		cpu = 0;
	return (unsigned int)rt->pool_of[rt->cpu_list[(unsigned int)cpu % rt->ncpus]];
}

/*
 * Queued items and room to run one: wake an idle worker if one may be
 * sleeping; if none is idle but some worker sits in a blocking section,
 * start another one (the kernel's need_more_worker() + manager). Pool
 * lock held.
 */
static void pool_kick(struct rt_pool *pool)
{
	uint64_t one = 1;
	int ret;

	if ((!pool->head && !pool->uhead) || pool->active >= pool->max_active ||
	    pool->nrunning >= pool->concurrency)
		return;
	if (!pool->nidle) {
		if (pool->active <= pool->nrunning)
			return; /* everyone is running: they come back for it */
		ret = worker_spawn(pool);
		if (ret && ret != -EAGAIN && ret != -ESHUTDOWN)
			NVMFD_WARN_RATELIMIT("rt", "pool %u: cannot start a worker: %s",
					     pool->idx, strerror(-ret));
		return;
	}
	if (pool->kicked)
		return;
	pool->kicked = true;
	pool->kicks++;
	if (write(pool->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		NVMFD_ERR_RATELIMIT("rt", "pool %u: eventfd write: %s", pool->idx,
				    strerror(errno));
}

/* Append @w to the run queue. Pool lock held, @w PENDING and not RUNNING.
 * @kick: wake or start a worker for it (not needed when the caller is a
 * worker that goes back to the queue right away). */
static void pool_enqueue_list(struct rt_pool *pool, struct nvmfd_work *w, bool kick, bool urgent)
{
	struct nvmfd_work **head = urgent ? &pool->uhead : &pool->head;
	struct nvmfd_work **tail = urgent ? &pool->utail : &pool->tail;

	w->next = NULL;
	w->on_ulist = urgent;
	w->queued_at_ns = nvmfd_now_ns();
	if (*tail)
		(*tail)->next = w;
	else
		*head = w;
	*tail = w;
	if (++pool->qlen > pool->qlen_max)
		pool->qlen_max = pool->qlen;
	if (kick)
		pool_kick(pool);
}

static void pool_enqueue(struct rt_pool *pool, struct nvmfd_work *w, bool kick)
{
	pool_enqueue_list(pool, w, kick, w->urgent);
}

/* The next item to run: the urgent list's head, else the normal one's.
 * Pool lock held, an item queued. */
static struct nvmfd_work *pool_dequeue(struct rt_pool *pool)
{
	bool urgent = pool->uhead != NULL;
	struct nvmfd_work **head = urgent ? &pool->uhead : &pool->head;
	struct nvmfd_work *w = *head;

	*head = w->next;
	if (!*head)
		*(urgent ? &pool->utail : &pool->tail) = NULL;
	w->next = NULL;
	pool->qlen--;
	if (urgent)
		pool->urgent_runs++;
	return w;
}

/* The run queue's oldest item (either list), NULL if empty. Pool lock held. */
static const struct nvmfd_work *pool_oldest(const struct rt_pool *pool)
{
	if (!pool->head || (pool->uhead && pool->uhead->queued_at_ns < pool->head->queued_at_ns))
		return pool->uhead;
	return pool->head;
}

/* How long the run queue's oldest item has waited, in ns (0: empty).
 * Pool lock held. */
static uint64_t pool_head_age_ns(const struct rt_pool *pool)
{
	const struct nvmfd_work *w = pool_oldest(pool);
	uint64_t now;

	if (!w)
		return 0;
	now = nvmfd_now_ns();
	return now > w->queued_at_ns ? now - w->queued_at_ns : 0;
}

/* Remove @w from the run list it is on (w->on_ulist says which: not
 * w->urgent, since an urgent item re-queued while it ran waits on the
 * normal list), if it is there. Pool lock held. */
static bool pool_unlink(struct rt_pool *pool, struct nvmfd_work *w)
{
	struct nvmfd_work **pp = w->on_ulist ? &pool->uhead : &pool->head, *prev = NULL;
	struct nvmfd_work **tail = w->on_ulist ? &pool->utail : &pool->tail;

	while (*pp && *pp != w) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return false;
	*pp = w->next;
	if (*tail == w)
		*tail = prev;
	w->next = NULL;
	pool->qlen--;
	return true;
}

void nvmfd_work_init(struct nvmfd_work *w, struct nvmfd_rt *rt, nvmfd_work_fn fn, int io_cpu)
{
	memset(w, 0, sizeof(*w));
	w->fn = fn;
	w->rt = rt;
	w->io_cpu = io_cpu;
	w->pool = &rt->pools[pool_index(rt, io_cpu)];
}

/* Lock the pool @w is on now: nvmfd_rt_work_move() changes w->pool under
 * the old pool's lock, so re-check after locking. */
static struct rt_pool *work_lock_pool(struct nvmfd_work *w)
{
	struct rt_pool *pool;

	for (;;) {
		pool = __atomic_load_n(&w->pool, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&pool->lock);
		if (__atomic_load_n(&w->pool, __ATOMIC_RELAXED) == pool)
			return pool;
		pthread_mutex_unlock(&pool->lock);
	}
}

/* Queue @w on @pool, whose lock is held and which is @w's pool. */
/* @kick: wake an idle worker for it; false when the caller is a worker of
 * @pool that goes to the run queue next itself (readiness dispatch). */
static bool queue_locked_kick(struct rt_pool *pool, struct nvmfd_work *w, bool kick)
{
	uint32_t f = flags_get(w);

	if (f & (WORK_PENDING | WORK_CANCELED))
		return false;
	flags_set(w, f | WORK_PENDING);
	if (f & WORK_RUNNING)
		add(&w->requeues, 1); /* the running worker re-queues it */
	else
		pool_enqueue(pool, w, kick);
	return true;
}

void nvmfd_rt_work_set_urgent(struct nvmfd_work *w, bool urgent)
{
	struct rt_pool *pool;
	uint32_t f;

	if (!__atomic_load_n(&w->pool, __ATOMIC_ACQUIRE))
		return;
	pool = work_lock_pool(w);
	f = flags_get(w);
	/* an urgent item re-queued while it ran waits on the normal list:
	 * made ordinary there, it keeps its place */
	if (w->urgent != urgent && w->on_ulist != urgent && (f & WORK_PENDING) &&
	    !(f & WORK_RUNNING) && pool_unlink(pool, w)) {
		/* queued: to the other list, keeping its queueing time */
		uint64_t at = w->queued_at_ns;

		w->urgent = urgent;
		pool_enqueue(pool, w, false);
		w->queued_at_ns = at;
	} else {
		w->urgent = urgent;
	}
	pthread_mutex_unlock(&pool->lock);
}

bool nvmfd_rt_queue_work(struct nvmfd_work *w)
{
	struct rt_pool *pool = work_lock_pool(w);
	/* a worker reaping its own pool's ring goes to the run queue next:
	 * no kick for a sibling (as for readiness, rt_dispatch()) */
	bool ret = queue_locked_kick(pool, w, !(rt_reaping && rt_self && rt_self->pool == pool));

	pthread_mutex_unlock(&pool->lock);
	return ret;
}

void nvmfd_rt_work_cancel_sync(struct nvmfd_work *w)
{
	struct rt_pool *pool;
	uint32_t f;

	if (!__atomic_load_n(&w->pool, __ATOMIC_ACQUIRE))
		return;
	assert(rt_current != w);
	pool = work_lock_pool(w);
	f = flags_get(w) | WORK_CANCELED;
	if ((f & WORK_PENDING) && !(f & WORK_RUNNING)) {
		/* PENDING and not RUNNING: on a run list, the one on_ulist
		 * names (a miss would leave it linked after the cancel) */
		if (!pool_unlink(pool, w))
			assert(!"cancel_sync: a pending item on no run list");
		f &= ~WORK_PENDING;
	}
	flags_set(w, f);
	pool->cancel_waiters++;
	while (flags_get(w) & WORK_RUNNING)
		pthread_cond_wait(&pool->done_cv, &pool->lock);
	pool->cancel_waiters--;
	pthread_mutex_unlock(&pool->lock);
}

/**
 * nvmfd_rt_work_move() - see rt.h.
 */
int nvmfd_rt_work_move(struct nvmfd_work *w, struct nvmfd_rt *to, int io_cpu, const int *fds,
		       unsigned int nfds)
{
	struct rt_pool *old = w->pool, *pool;

	if (!old || !to)
		return -EINVAL;
	assert(rt_current != w);
	nvmfd_rt_work_cancel_sync(w);
	for (unsigned int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			nvmfd_rt_unwatch_fd(w, fds[i]);
	pool = &to->pools[pool_index(to, io_cpu)];
	/* A queue_work() that raced with the move saw CANCELED on the old
	 * pool and gave up; its caller's state is visible to the run below
	 * (it unlocked the old pool before we lock it here). Later ones find
	 * the new pool. */
	pthread_mutex_lock(&old->lock);
	w->rt = to;
	w->io_cpu = io_cpu;
	w->next = NULL;
	flags_set(w, 0);
	__atomic_store_n(&w->pool, pool, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&old->lock);
	nvmfd_rt_queue_work(w);
	return 0;
}

uint64_t nvmfd_rt_work_pending_ns(struct nvmfd_work *w, uint64_t now_ns)
{
	struct rt_pool *pool;
	uint64_t ret = 0;
	uint32_t f;

	if (!__atomic_load_n(&w->pool, __ATOMIC_ACQUIRE))
		return 0;
	pool = work_lock_pool(w);
	f = flags_get(w);
	/* queued_at_ns is set by pool_enqueue() under this lock */
	if ((f & WORK_PENDING) && !(f & (WORK_RUNNING | WORK_CANCELED)) &&
	    now_ns > w->queued_at_ns)
		ret = now_ns - w->queued_at_ns;
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

struct nvmfd_work *nvmfd_rt_current_work(void)
{
	return rt_current;
}

static void worker_repatriate(struct rt_worker *wk)
{
	struct rt_pool *pool = wk->pool;
	struct nvmfd_rt *rt = pool->rt;
	int cpu = sched_getcpu();

	if (cpu < 0 || CPU_ISSET(cpu, &pool->cpus) ||
	    __atomic_load_n(&rt->unpinned, __ATOMIC_RELAXED))
		return;
	/* moving into the unit migrates us now; widening again lets the
	 * scheduler balance later (non-strict scope semantics) */
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), &pool->cpus))
		return;
	pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), &rt->topo->cpus);
	add(&wk->repatriations, 1);
}

static void worker_run(struct rt_worker *wk, struct nvmfd_work *w, uint64_t queued_at)
{
	struct nvmfd_rt *rt = wk->pool->rt;
	uint64_t t0, t1, delay;

	if (rt->opts.mode == NVMFD_RT_UNBOUND && !rt->opts.strict)
		worker_repatriate(wk);
	t0 = nvmfd_now_ns();
	rt_current = w;
	w->fn(w);
	rt_current = NULL;
	t1 = nvmfd_now_ns();
	delay = t0 > queued_at ? t0 - queued_at : 0;
	add(&w->runs, 1);
	add(&w->run_ns, t1 - t0);
	add(&w->queue_delay_ns, delay);
	add(&wk->runs, 1);
	add(&wk->busy_ns, t1 - t0);
	add(&wk->queue_delay_ns, delay);
	if (delay > ld(&wk->queue_delay_max_ns))
		__atomic_store_n(&wk->queue_delay_max_ns, delay, __ATOMIC_RELAXED);
	if (t1 - t0 > NVMFD_RT_HOG_NS)
		add(&wk->hogs, 1);
	__atomic_store_n(&wk->last_cpu, sched_getcpu(), __ATOMIC_RELAXED);
}

/* Queue the item behind a readiness event of @pool's epoll if its watch
 * is still current (same generation). One lock: the pool's own. Called by
 * a worker of @pool only, which then goes to the run queue itself: no kick
 * (an idle sibling woken for the item the caller runs next would only read
 * the kick eventfd and sleep again - a write, a read and two context
 * switches per event once a pool has a spare worker). Taking the item
 * chain-kicks a sibling if more are queued (worker_main()). */
static void rt_dispatch(struct rt_pool *pool, uint64_t data)
{
	uint32_t fd = (uint32_t)data, gen = (uint32_t)(data >> 32);
	struct nvmfd_work *w = NULL;

	pthread_mutex_lock(&pool->lock);
	if (fd < pool->nwatches && pool->watches[fd].gen == gen)
		w = pool->watches[fd].w;
	if (w && __atomic_load_n(&w->pool, __ATOMIC_RELAXED) == pool) {
		queue_locked_kick(pool, w, false);
		w = NULL;
	}
	pthread_mutex_unlock(&pool->lock);
	if (w) /* not reached: a moved item's watches were dropped first */
		nvmfd_rt_queue_work(w);
}

/*
 * A busy worker's look at readiness: fetch what is ready without sleeping
 * and queue the items behind it (behind the items already queued). Kick
 * events are left alone: they are level-triggered and meant for an idle
 * sibling, which will still see them. Pool lock NOT held.
 */
static void worker_busy_poll(struct rt_worker *wk)
{
	struct rt_pool *pool = wk->pool;
	struct epoll_event evs[RT_MAX_EVENTS];
	int n;

	wk->runs_since_poll = 0;
	n = epoll_wait(pool->epfd, evs, RT_MAX_EVENTS, 0);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 == RT_KICK_DATA)
			continue;
		add(&wk->events, 1);
		rt_dispatch(pool, evs[i].data.u64);
	}
}

/*
 * Worker ring: the epoll set has something (its request on the ring
 * posted). Drain it without sleeping: kicks are read (unless stopping,
 * when the eventfd stays readable so that every worker wakes), readiness
 * queues the watchers. A full batch may leave more: look again. Pool lock
 * NOT held.
 */
static void worker_epoll_drain(struct rt_worker *wk)
{
	struct rt_pool *pool = wk->pool;
	struct epoll_event evs[RT_MAX_EVENTS];
	bool kick = false;
	int n;

	do {
		n = epoll_wait(pool->epfd, evs, RT_MAX_EVENTS, 0);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == RT_KICK_DATA) {
				kick = true;
				continue;
			}
			add(&wk->events, 1);
			rt_dispatch(pool, evs[i].data.u64);
		}
	} while (n == RT_MAX_EVENTS);
	if (!kick)
		return;
	pthread_mutex_lock(&pool->lock);
	if (!pool->stopping) {
		uint64_t v;

		if (read(pool->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			NVMFD_ERR_RATELIMIT("rt", "pool %u: eventfd read: %s", pool->idx,
					    strerror(errno));
		pool->kicked = false;
	}
	pthread_mutex_unlock(&pool->lock);
}

/* Worker ring: take its CQEs (their sinks queue their owners) and what
 * the epoll set holds. Pool lock NOT held. */
static void worker_ring_reap(struct rt_worker *wk)
{
	bool epoll = false;

	rt_reaping = true;
	nvmfd__rt_ring_worker_reap(wk->pool->ring, &epoll);
	rt_reaping = false;
	if (epoll)
		worker_epoll_drain(wk);
}

struct nvmfd_rt_ring *nvmfd__rt_self_ring(void)
{
	return rt_self ? rt_self->pool->ring : NULL;
}

struct nvmfd_rt_ring *nvmfd_rt_ring_of(struct nvmfd_rt *rt, int io_cpu)
{
	return rt->pools[pool_index(rt, io_cpu)].ring;
}

static void *worker_main(void *arg)
{
	struct rt_worker *wk = arg;
	struct rt_pool *pool = wk->pool;
	struct epoll_event evs[RT_MAX_EVENTS];

	__atomic_store_n(&wk->tid, (int)gettid(), __ATOMIC_RELAXED);
	rt_self = wk;
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		struct nvmfd_work *w;
		uint64_t queued_at;
		bool kick = false;
		uint32_t f;
		int n;

		if (pool->stopping)
			break;
		if ((pool->head || pool->uhead) && pool->active < pool->max_active &&
		    pool->nrunning < pool->concurrency) {
			if (pool->ring && wk->ring_dirty) {
				/* SQEs of the last run go out before the next
				 * item runs (not behind it) */
				wk->ring_dirty = false;
				pthread_mutex_unlock(&pool->lock);
				n = nvmfd__rt_ring_enter(pool->ring, false);
				if (n < 0 && n != -EINTR)
					NVMFD_ERR_RATELIMIT("rt", "pool %u: io_uring_enter: %s",
							    pool->idx, strerror(-n));
				/* sends complete inline: their owners run next */
				worker_ring_reap(wk);
				pthread_mutex_lock(&pool->lock);
				continue;
			}
			if (wk->runs_since_poll >= RT_BUSY_POLL_RUNS) {
				pthread_mutex_unlock(&pool->lock);
				if (pool->ring) {
					wk->runs_since_poll = 0;
					worker_ring_reap(wk);
				} else {
					worker_busy_poll(wk);
				}
				pthread_mutex_lock(&pool->lock);
				continue; /* the queue may have changed meanwhile */
			}
			wk->runs_since_poll++;
			w = pool_dequeue(pool);
			queued_at = w->queued_at_ns;
			flags_set(w, (flags_get(w) & ~WORK_PENDING) | WORK_RUNNING);
			if (++pool->active > pool->active_max)
				pool->active_max = pool->active;
			pool->nrunning++;
			pool_kick(pool); /* more queued: let an idle sibling help */
			pthread_mutex_unlock(&pool->lock);

			worker_run(wk, w, queued_at);
			if (pool->ring)
				wk->ring_dirty = true;

			pthread_mutex_lock(&pool->lock);
			pool->active--;
			if (wk->in_block) /* fn returned inside a blocking section */
				wk->in_block = false;
			else
				pool->nrunning--;
			f = flags_get(w) & ~WORK_RUNNING;
			if ((f & WORK_PENDING) && (f & WORK_CANCELED))
				f &= ~WORK_PENDING;
			flags_set(w, f);
			/* re-queued while running: we loop to it, on the normal
			 * list even when it is urgent, so that an urgent item
			 * that keeps re-queueing itself (an idle-polling admin
			 * queue) cannot starve the normal one */
			if (f & WORK_PENDING)
				pool_enqueue_list(pool, w, false, false);
			if (pool->cancel_waiters)
				pthread_cond_broadcast(&pool->done_cv);
			continue;
		}

		pool->nidle++;
		pthread_mutex_unlock(&pool->lock);
		wk->runs_since_poll = 0;
		if (pool->ring) {
			/* one system call: what the runs prepared goes out,
			 * then sleep until a CQE (a socket's, the epoll
			 * set's, a wake NOP) */
			wk->ring_dirty = false;
			n = nvmfd__rt_ring_enter(pool->ring, true);
			if (n < 0 && n != -EINTR)
				NVMFD_ERR_RATELIMIT("rt", "pool %u: io_uring_enter: %s", pool->idx,
						    strerror(-n));
			add(&wk->wakeups, 1);
			pthread_mutex_lock(&pool->lock);
			pool->nidle--;
			pthread_mutex_unlock(&pool->lock);
			worker_ring_reap(wk);
			pthread_mutex_lock(&pool->lock);
			continue;
		}
		n = epoll_wait(pool->epfd, evs, RT_MAX_EVENTS, -1);
		if (n < 0 && errno != EINTR)
			NVMFD_ERR_RATELIMIT("rt", "pool %u: epoll_wait: %s", pool->idx,
					    strerror(errno));
		add(&wk->wakeups, 1);
		for (int i = 0; i < n; i++)
			if (evs[i].data.u64 == RT_KICK_DATA)
				kick = true;

		pthread_mutex_lock(&pool->lock);
		pool->nidle--;
		/* while stopping the eventfd stays readable so every worker wakes */
		if (kick && !pool->stopping) {
			uint64_t v;

			if (read(pool->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				NVMFD_ERR_RATELIMIT("rt", "pool %u: eventfd read: %s", pool->idx,
						    strerror(errno));
			pool->kicked = false;
		}
		if (n > 0 && (unsigned int)n > (unsigned int)kick) {
			pthread_mutex_unlock(&pool->lock);
			for (int i = 0; i < n; i++) {
				if (evs[i].data.u64 == RT_KICK_DATA)
					continue;
				add(&wk->events, 1);
				rt_dispatch(pool, evs[i].data.u64);
			}
			pthread_mutex_lock(&pool->lock);
		}
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

static int pool_init(struct nvmfd_rt *rt, struct rt_pool *pool, unsigned int idx,
		     const cpu_set_t *cpus)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = RT_KICK_DATA };
	unsigned int nw;
	int ret;

	pool->rt = rt;
	pool->idx = idx;
	pool->cpus = *cpus;
	pool->epfd = -1;
	pool->evfd = -1;
	pool->max_active = rt->opts.max_active;
	if (rt->opts.mode == NVMFD_RT_BOUND)
		nw = 1;
	else if (rt->opts.workers_per_pool)
		nw = rt->opts.workers_per_pool;
	else
		nw = (unsigned int)CPU_COUNT(cpus);

	ret = pthread_mutex_init(&pool->lock, NULL);
	if (ret)
		return -ret;
	ret = pthread_cond_init(&pool->done_cv, NULL);
	if (ret) {
		pthread_mutex_destroy(&pool->lock);
		return -ret;
	}
	pool->lock_init = true;

	pool->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (pool->epfd < 0)
		return -errno;
	pool->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pool->evfd < 0)
		return -errno;
	if (epoll_ctl(pool->epfd, EPOLL_CTL_ADD, pool->evfd, &ev))
		return -errno;
	if (rt->opts.uring) {
		ret = nvmfd__rt_ring_create(pool->epfd, idx, RT_RING_SQ, RT_RING_CQ, &pool->ring);
		if (ret)
			return ret;
	}
	pool->concurrency = rt->opts.mode == NVMFD_RT_BOUND ? 1 : UINT_MAX;
	pool->max_workers = nw + RT_SPARE_WORKERS;
	pool->workers = calloc(pool->max_workers, sizeof(*pool->workers));
	if (!pool->workers)
		return -ENOMEM;
	for (unsigned int i = 0; i < pool->max_workers; i++) {
		pool->workers[i].pool = pool;
		pool->workers[i].idx = i;
		pool->workers[i].last_cpu = -1;
	}
	return 0;
}

/*
 * Start worker number pool->nworkers. Pool lock held, or create time.
 * Bound and strict workers get the pool's CPUs, non-strict ones all runtime
 * CPUs. Workers are born with every asynchronous signal blocked, so SIGINT,
 * SIGTERM, SIGHUP... reach the daemon's main thread (or its signalfd) and
 * never interrupt an io_work; fault signals are unaffected.
 */
static int worker_spawn(struct rt_pool *pool)
{
	struct nvmfd_rt *rt = pool->rt;
	struct rt_worker *wk;
	const cpu_set_t *aff;
	pthread_attr_t attr;
	sigset_t all, old;
	char name[48];
	int ret;

	if (pool->nworkers >= pool->max_workers)
		return -EAGAIN;
	if (pool->stopping)
		return -ESHUTDOWN;
	wk = &pool->workers[pool->nworkers];
	if (__atomic_load_n(&rt->unpinned, __ATOMIC_RELAXED) ||
	    (rt->opts.mode == NVMFD_RT_UNBOUND && !rt->opts.strict))
		aff = &rt->topo->cpus;
	else
		aff = &pool->cpus;
	ret = pthread_attr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t), aff);
	if (ret)
		goto out_attr;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&wk->thread, &attr, worker_main, wk);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto out_attr;
	wk->started = true;
	pool->nworkers++;
	if (rt->opts.mode == NVMFD_RT_BOUND)
		snprintf(name, sizeof(name), "%s/b%d:%u", rt->name, rt->cpu_list[pool->idx],
			 wk->idx);
	else
		snprintf(name, sizeof(name), "%s/u%u:%u", rt->name, pool->idx, wk->idx);
	name[15] = '\0'; /* the kernel's TASK_COMM_LEN */
	pthread_setname_np(wk->thread, name);
out_attr:
	pthread_attr_destroy(&attr);
	return -ret;
}

static int pool_start(struct rt_pool *pool)
{
	unsigned int n = pool->max_workers - RT_SPARE_WORKERS;
	int ret = 0;

	pthread_mutex_lock(&pool->lock);
	while (!ret && pool->nworkers < n)
		ret = worker_spawn(pool);
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

void nvmfd_rt_blocking_begin(void)
{
	struct rt_worker *wk = rt_self;
	struct rt_pool *pool;

	if (!wk || !rt_current || wk->in_block)
		return;
	pool = wk->pool;
	pthread_mutex_lock(&pool->lock);
	wk->in_block = true;
	pool->nrunning--;
	/* the kernel's wq_worker_sleeping(): keep the pool's CPU busy */
	pool_kick(pool);
	pthread_mutex_unlock(&pool->lock);
}

void nvmfd_rt_blocking_end(void)
{
	struct rt_worker *wk = rt_self;
	struct rt_pool *pool;

	if (!wk || !wk->in_block)
		return;
	pool = wk->pool;
	pthread_mutex_lock(&pool->lock);
	wk->in_block = false;
	pool->nrunning++;
	pthread_mutex_unlock(&pool->lock);
}

/**
 * nvmfd_rt_unpin() - see internal/rt.h.
 */
void nvmfd_rt_unpin(struct nvmfd_rt *rt)
{
	if (!rt)
		return;
	__atomic_store_n(&rt->unpinned, true, __ATOMIC_RELAXED);
	for (unsigned int i = 0; rt->pools && i < rt->npools; i++) {
		struct rt_pool *pool = &rt->pools[i];

		if (!pool->lock_init)
			continue;
		pthread_mutex_lock(&pool->lock);
		for (unsigned int j = 0; j < pool->nworkers; j++)
			if (pool->workers[j].started) /* an exited worker: ESRCH, fine */
				pthread_setaffinity_np(pool->workers[j].thread,
						       sizeof(cpu_set_t), &rt->topo->cpus);
		pthread_mutex_unlock(&pool->lock);
	}
}

static void pool_stop(struct rt_pool *pool)
{
	uint64_t one = 1;

	if (!pool->lock_init)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stopping = true;
	if (pool->evfd >= 0 && write(pool->evfd, &one, sizeof(one)) < 0)
		NVMFD_ERR("rt", "pool %u: eventfd write: %s", pool->idx, strerror(errno));
	pthread_mutex_unlock(&pool->lock);
}

static void pool_fini(struct rt_pool *pool)
{
	for (unsigned int i = 0; pool->workers && i < pool->max_workers; i++)
		if (pool->workers[i].started)
			pthread_join(pool->workers[i].thread, NULL);
	free(pool->workers);
	free(pool->watches);
	nvmfd__rt_ring_destroy(pool->ring);
	pool->ring = NULL;
	if (pool->evfd >= 0)
		close(pool->evfd);
	if (pool->epfd >= 0)
		close(pool->epfd);
	if (pool->lock_init) {
		pthread_cond_destroy(&pool->done_cv);
		pthread_mutex_destroy(&pool->lock);
	}
}

int nvmfd_rt_create(const struct nvmfd_rt_opts *opts, struct nvmfd_rt **out)
{
	const struct nvmfd__rt_topo *t;
	struct nvmfd_rt *rt;
	cpu_set_t want;
	int ret;

	if (!opts || !out || !opts->size)
		return -EINVAL;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	nvmfd_rt_opts_init(&rt->opts);
	memcpy(&rt->opts, opts, opts->size < sizeof(*opts) ? opts->size : sizeof(*opts));
	rt->opts.size = sizeof(rt->opts);
	if (rt->opts.mode > NVMFD_RT_UNBOUND || rt->opts.scope > NVMFD_RT_SCOPE_SYSTEM ||
	    (rt->opts.uring && rt->opts.mode != NVMFD_RT_BOUND)) {
		ret = -EINVAL;
		goto out_free;
	}
	if (!rt->opts.max_active)
		rt->opts.max_active = RT_DEFAULT_MAX_ACTIVE;
	snprintf(rt->name, sizeof(rt->name), "%s", rt->opts.name ? rt->opts.name : "nvmfd");
	rt->opts.name = NULL;
	rt->opts.sysfs_root = NULL; /* borrowed only for the topology load */

	want = opts->cpus;
	if (!CPU_COUNT(&want) && sched_getaffinity(0, sizeof(want), &want)) {
		ret = -errno;
		goto out_free;
	}
	ret = nvmfd__rt_topo_load(opts->sysfs_root, &want, &rt->topo);
	if (ret)
		goto out_free;
	t = rt->topo;
	ret = nvmfd__rt_placer_init(&rt->placer, &t->cpus);
	if (ret)
		goto out_free;
	rt->placer_init = true;

	for (int c = 0; c < CPU_SETSIZE; c++) {
		rt->pool_of[c] = -1;
		if (CPU_ISSET(c, &t->cpus))
			rt->cpu_list[rt->ncpus++] = c;
	}
	if (rt->opts.mode == NVMFD_RT_BOUND) {
		rt->npools = rt->ncpus;
		for (unsigned int i = 0; i < rt->ncpus; i++)
			rt->pool_of[rt->cpu_list[i]] = (short)i;
	} else {
		rt->npools = t->nunits[rt->opts.scope];
		for (unsigned int i = 0; i < rt->ncpus; i++)
			rt->pool_of[rt->cpu_list[i]] = t->unit_of[rt->opts.scope][rt->cpu_list[i]];
	}
	rt->pools = calloc(rt->npools, sizeof(*rt->pools));
	if (!rt->pools) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (unsigned int i = 0; i < rt->npools; i++)
		rt->pools[i].epfd = rt->pools[i].evfd = -1; /* for partial teardown */
	for (unsigned int i = 0; i < rt->npools; i++) {
		cpu_set_t one;

		if (rt->opts.mode == NVMFD_RT_BOUND) {
			CPU_ZERO(&one);
			CPU_SET(rt->cpu_list[i], &one);
		} else {
			one = t->units[rt->opts.scope][i];
		}
		ret = pool_init(rt, &rt->pools[i], i, &one);
		if (ret)
			goto out_free;
	}
	for (unsigned int i = 0; i < rt->npools; i++) {
		ret = pool_start(&rt->pools[i]);
		if (ret)
			goto out_free;
	}
	*out = rt;
	return 0;

out_free:
	nvmfd_rt_destroy(rt);
	return ret;
}

void nvmfd_rt_destroy(struct nvmfd_rt *rt)
{
	if (!rt)
		return;
	assert(!rt_current);
	for (unsigned int i = 0; rt->pools && i < rt->npools; i++)
		pool_stop(&rt->pools[i]);
	for (unsigned int i = 0; rt->pools && i < rt->npools; i++)
		pool_fini(&rt->pools[i]);
	free(rt->pools);
	if (rt->placer_init)
		nvmfd__rt_placer_fini(&rt->placer);
	nvmfd__rt_topo_free(rt->topo);
	free(rt);
}

/* What epoll is given for a watch of @events: edge-triggered ones persist,
 * the others fire once per arm. */
static uint32_t watch_events(uint32_t events)
{
	return events & EPOLLET ? events : events | EPOLLONESHOT;
}

static int watch_ctl(struct rt_pool *pool, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = watch_events(events), .data.u64 = data };

	if (!epoll_ctl(pool->epfd, EPOLL_CTL_MOD, fd, &ev))
		return 0;
	if (errno != ENOENT)
		return -errno;
	if (!epoll_ctl(pool->epfd, EPOLL_CTL_ADD, fd, &ev))
		return 0;
	return -errno;
}

/* Drop @fd from every pool of @rt but @keep (a watch moving to another
 * item's pool, or an fd number reused after a missing unwatch). Takes one
 * pool lock at a time. */
static void watch_forget_elsewhere(struct nvmfd_rt *rt, struct rt_pool *keep, int fd)
{
	for (unsigned int i = 0; i < rt->npools; i++) {
		struct rt_pool *p = &rt->pools[i];

		if (p == keep)
			continue;
		pthread_mutex_lock(&p->lock);
		if ((size_t)fd < p->nwatches && p->watches[fd].w) {
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
			p->watches[fd].w = NULL;
			p->watches[fd].gen++;
		}
		pthread_mutex_unlock(&p->lock);
	}
}

int nvmfd_rt_watch_fd(struct nvmfd_work *w, int fd, uint32_t events)
{
	struct nvmfd_rt *rt = w->rt;
	struct rt_pool *pool = w->pool;
	struct rt_watch *s;
	int ret;

	if (fd < 0)
		return -EBADF;
	if (flags_get(w) & WORK_CANCELED)
		return -ECANCELED;

	/* re-arm: the slot is ours already, only the interest changes */
	pthread_mutex_lock(&pool->lock);
	if ((size_t)fd < pool->nwatches && pool->watches[fd].w == w) {
		struct epoll_event ev = {
			.events = watch_events(events),
			.data.u64 = (uint64_t)pool->watches[fd].gen << 32 | (uint32_t)fd,
		};

		if ((events & EPOLLET) && pool->watches[fd].events == events) {
			/* persistent and unchanged: nothing to re-arm */
			pthread_mutex_unlock(&pool->lock);
			return 0;
		}
		ret = epoll_ctl(pool->epfd, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
		if (!ret)
			pool->watches[fd].events = events;
		pthread_mutex_unlock(&pool->lock);
		if (ret != -ENOENT)
			return ret;
		/* the fd number was closed and reused: register afresh */
	} else {
		pthread_mutex_unlock(&pool->lock);
	}

	/* a new registration: no other pool may keep the fd */
	watch_forget_elsewhere(rt, pool, fd);
	pthread_mutex_lock(&pool->lock);
	if ((size_t)fd >= pool->nwatches) {
		size_t n = pool->nwatches ? pool->nwatches : 64;
		struct rt_watch *tab;

		while (n <= (size_t)fd)
			n *= 2;
		tab = realloc(pool->watches, n * sizeof(*tab));
		if (!tab) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		memset(tab + pool->nwatches, 0, (n - pool->nwatches) * sizeof(*tab));
		pool->watches = tab;
		pool->nwatches = n;
	}
	s = &pool->watches[fd];
	/* a new generation: events fetched for the old owner are dropped */
	s->gen++;
	s->w = w;
	s->events = events;
	ret = watch_ctl(pool, fd, events, (uint64_t)s->gen << 32 | (uint32_t)fd);
	if (ret)
		s->w = NULL;
out_unlock:
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

int nvmfd_rt_unwatch_fd(struct nvmfd_work *w, int fd)
{
	struct rt_pool *pool = w->pool;
	struct rt_watch *s;
	int ret = 0;

	if (fd < 0)
		return -EBADF;
	if (!pool)
		return -ENOENT;
	pthread_mutex_lock(&pool->lock);
	if ((size_t)fd >= pool->nwatches || pool->watches[fd].w != w) {
		ret = -ENOENT;
		goto out_unlock;
	}
	s = &pool->watches[fd];
	/* EBADF/ENOENT: closed already, epoll forgot it by itself */
	if (epoll_ctl(pool->epfd, EPOLL_CTL_DEL, fd, NULL) && errno != EBADF && errno != ENOENT)
		ret = -errno;
	s->w = NULL;
	s->gen++;
out_unlock:
	pthread_mutex_unlock(&pool->lock);
	return ret;
}

int nvmfd_rt_place(struct nvmfd_rt *rt, enum nvmfd_rt_place policy, unsigned int qid,
		   const cpu_set_t *allowed, int incoming_cpu)
{
	return nvmfd__rt_placer_place(&rt->placer, policy, qid, allowed, incoming_cpu);
}

void nvmfd_rt_unplace(struct nvmfd_rt *rt, int cpu)
{
	nvmfd__rt_placer_unplace(&rt->placer, cpu);
}

unsigned int nvmfd_rt_ncpus(const struct nvmfd_rt *rt)
{
	return rt->ncpus;
}

unsigned int nvmfd_rt_npools(const struct nvmfd_rt *rt)
{
	return rt->npools;
}

unsigned int nvmfd_rt_pool_of_cpu(const struct nvmfd_rt *rt, int cpu)
{
	return pool_index(rt, cpu);
}

/* Context switches and run delay of thread @tid; zeros where /proc lacks them. */
static void read_task_stats(int tid, struct nvmfd_rt_worker_stats *ws)
{
	struct nvmfd_task_stat ts;

	if (tid <= 0 || nvmfd__proc_task_stat(0, tid, &ts))
		return;
	ws->nvcsw = ts.nvcsw;
	ws->nivcsw = ts.nivcsw;
	ws->run_delay_ns = ts.run_delay_ns;
}

int nvmfd_rt_worker_stats(struct nvmfd_rt *rt, unsigned int pool, unsigned int worker,
			  struct nvmfd_rt_worker_stats *out)
{
	struct rt_worker *wk;

	struct rt_pool *p;
	bool started;

	if (pool >= rt->npools)
		return -EINVAL;
	p = &rt->pools[pool];
	pthread_mutex_lock(&p->lock);
	started = worker < p->nworkers;
	pthread_mutex_unlock(&p->lock);
	if (!started)
		return -EINVAL;
	wk = &p->workers[worker];
	memset(out, 0, sizeof(*out));
	out->tid = __atomic_load_n(&wk->tid, __ATOMIC_RELAXED);
	out->last_cpu = __atomic_load_n(&wk->last_cpu, __ATOMIC_RELAXED);
	pthread_getaffinity_np(wk->thread, sizeof(out->affinity), &out->affinity);
	out->runs = ld(&wk->runs);
	out->wakeups = ld(&wk->wakeups);
	out->epoll_events = ld(&wk->events);
	out->busy_ns = ld(&wk->busy_ns);
	out->queue_delay_ns = ld(&wk->queue_delay_ns);
	out->queue_delay_max_ns = ld(&wk->queue_delay_max_ns);
	out->hogs = ld(&wk->hogs);
	out->repatriations = ld(&wk->repatriations);
	read_task_stats(out->tid, out);
	return 0;
}

int nvmfd_rt_pool_stats(struct nvmfd_rt *rt, unsigned int pool, struct nvmfd_rt_pool_stats *out)
{
	struct rt_pool *p;

	if (pool >= rt->npools)
		return -EINVAL;
	p = &rt->pools[pool];
	memset(out, 0, sizeof(*out));
	out->cpus = p->cpus;
	out->max_active = p->max_active;
	pthread_mutex_lock(&p->lock);
	out->nworkers = p->nworkers;
	out->runq_max = p->qlen_max;
	out->active_max = p->active_max;
	out->kicks = p->kicks;
	out->urgent_runs = p->urgent_runs;
	out->runq_len = p->qlen;
	out->runq_head_age_ns = pool_head_age_ns(p);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < out->nworkers; i++) {
		struct nvmfd_rt_worker_stats ws;

		nvmfd_rt_worker_stats(rt, pool, i, &ws);
		out->runs += ws.runs;
		out->wakeups += ws.wakeups;
		out->epoll_events += ws.epoll_events;
		out->busy_ns += ws.busy_ns;
		out->queue_delay_ns += ws.queue_delay_ns;
		if (ws.queue_delay_max_ns > out->queue_delay_max_ns)
			out->queue_delay_max_ns = ws.queue_delay_max_ns;
		out->hogs += ws.hogs;
		out->repatriations += ws.repatriations;
		out->nvcsw += ws.nvcsw;
		out->nivcsw += ws.nivcsw;
		out->run_delay_ns += ws.run_delay_ns;
	}
	return 0;
}

int nvmfd_rt_pool_sched(struct nvmfd_rt *rt, unsigned int pool, struct nvmfd_rt_pool_sched *out)
{
	struct rt_pool *p;
	unsigned int n;

	if (pool >= rt->npools)
		return -EINVAL;
	p = &rt->pools[pool];
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&p->lock);
	n = p->nworkers;
	out->runq_len = p->qlen;
	out->runq_head_age_ns = pool_head_age_ns(p);
	pthread_mutex_unlock(&p->lock);
	if (n > NVMFD_RT_SCHED_WORKERS)
		n = NVMFD_RT_SCHED_WORKERS;
	out->nworkers = n;
	/* workers[0..nworkers) are started and never move (stop joins them) */
	for (unsigned int i = 0; i < n; i++) {
		int tid = __atomic_load_n(&p->workers[i].tid, __ATOMIC_RELAXED);

		out->last_cpu[i] = __atomic_load_n(&p->workers[i].last_cpu, __ATOMIC_RELAXED);
		if (tid > 0)
			nvmfd__proc_task_sched(0, tid, &out->exec_ns[i], &out->run_delay_ns[i]);
	}
	return 0;
}

static const char *const mode_names[] = { "bound", "unbound" };
static const char *const scope_names[] = { "cpu", "smt", "cache", "numa", "system" };

static void jset(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* The counters pools and workers share. */
static void json_counters(json_object *o, uint64_t runs, uint64_t wakeups, uint64_t events,
			  uint64_t busy, uint64_t qd, uint64_t qd_max, uint64_t hogs,
			  uint64_t repat, uint64_t nvcsw, uint64_t nivcsw, uint64_t run_delay)
{
	jset(o, "runs", json_object_new_uint64(runs));
	jset(o, "wakeups", json_object_new_uint64(wakeups));
	jset(o, "epoll_events", json_object_new_uint64(events));
	jset(o, "busy_ns", json_object_new_uint64(busy));
	jset(o, "queue_delay_ns", json_object_new_uint64(qd));
	jset(o, "queue_delay_max_ns", json_object_new_uint64(qd_max));
	jset(o, "hogs", json_object_new_uint64(hogs));
	jset(o, "repatriations", json_object_new_uint64(repat));
	jset(o, "nvcsw", json_object_new_uint64(nvcsw));
	jset(o, "nivcsw", json_object_new_uint64(nivcsw));
	jset(o, "run_delay_ns", json_object_new_uint64(run_delay));
}

json_object *nvmfd_rt_stats_obj(struct nvmfd_rt *rt)
{
	json_object *o = json_object_new_object(), *pools, *placed;
	char buf[256];

	if (!o)
		return NULL;
	jset(o, "mode", json_object_new_string(mode_names[rt->opts.mode]));
	jset(o, "uring", json_object_new_boolean(rt->opts.uring));
	jset(o, "scope", json_object_new_string(scope_names[rt->opts.scope]));
	jset(o, "strict", json_object_new_boolean(rt->opts.strict));
	jset(o, "max_active", json_object_new_int((int)rt->opts.max_active));
	jset(o, "ncpus", json_object_new_int((int)rt->ncpus));
	jset(o, "cpus", json_object_new_string(
				nvmfd__rt_format_cpulist(&rt->topo->cpus, buf, sizeof(buf))));
	pools = json_object_new_array();
	jset(o, "pools", pools);
	for (unsigned int i = 0; pools && i < rt->npools; i++) {
		struct nvmfd_rt_pool_stats ps;
		json_object *p = json_object_new_object(), *ws_arr;

		if (!p)
			break;
		nvmfd_rt_pool_stats(rt, i, &ps);
		jset(p, "id", json_object_new_int((int)i));
		jset(p, "cpus", json_object_new_string(
					nvmfd__rt_format_cpulist(&ps.cpus, buf, sizeof(buf))));
		jset(p, "nworkers", json_object_new_int((int)ps.nworkers));
		jset(p, "max_active", json_object_new_int((int)ps.max_active));
		jset(p, "runq_max", json_object_new_int((int)ps.runq_max));
		jset(p, "active_max", json_object_new_int((int)ps.active_max));
		jset(p, "kicks", json_object_new_uint64(ps.kicks));
		jset(p, "urgent_runs", json_object_new_uint64(ps.urgent_runs));
		jset(p, "runq_len", json_object_new_int((int)ps.runq_len));
		jset(p, "runq_head_age_ns", json_object_new_uint64(ps.runq_head_age_ns));
		if (rt->pools[i].ring) {
			struct nvmfd_rt_ring_stats rs;
			json_object *ro = json_object_new_object();

			nvmfd_rt_ring_get_stats(rt->pools[i].ring, &rs);
			if (ro) {
				jset(ro, "waits", json_object_new_uint64(rs.waits));
				jset(ro, "submits", json_object_new_uint64(rs.submits));
				jset(ro, "sqes", json_object_new_uint64(rs.sqes));
				jset(ro, "cqes", json_object_new_uint64(rs.cqes));
				jset(ro, "epoll_cqes", json_object_new_uint64(rs.epoll_cqes));
				jset(p, "ring", ro);
			}
		}
		json_counters(p, ps.runs, ps.wakeups, ps.epoll_events, ps.busy_ns, ps.queue_delay_ns,
			      ps.queue_delay_max_ns, ps.hogs, ps.repatriations, ps.nvcsw, ps.nivcsw,
			      ps.run_delay_ns);
		ws_arr = json_object_new_array();
		jset(p, "workers", ws_arr);
		for (unsigned int j = 0; ws_arr && j < ps.nworkers; j++) {
			struct nvmfd_rt_worker_stats ws;
			json_object *w = json_object_new_object();

			if (!w)
				break;
			nvmfd_rt_worker_stats(rt, i, j, &ws);
			jset(w, "tid", json_object_new_int(ws.tid));
			jset(w, "last_cpu", json_object_new_int(ws.last_cpu));
			jset(w, "affinity", json_object_new_string(nvmfd__rt_format_cpulist(
						    &ws.affinity, buf, sizeof(buf))));
			json_counters(w, ws.runs, ws.wakeups, ws.epoll_events, ws.busy_ns,
				      ws.queue_delay_ns, ws.queue_delay_max_ns, ws.hogs,
				      ws.repatriations, ws.nvcsw, ws.nivcsw, ws.run_delay_ns);
			json_object_array_add(ws_arr, w);
		}
		json_object_array_add(pools, p);
	}
	placed = json_object_new_object();
	jset(o, "placed", placed);
	for (unsigned int i = 0; placed && i < rt->ncpus; i++) {
		snprintf(buf, sizeof(buf), "%d", rt->cpu_list[i]);
		jset(placed, buf, json_object_new_int((int)nvmfd__rt_placer_count(
					  &rt->placer, rt->cpu_list[i])));
	}
	return o;
}

int nvmfd_rt_stats_json(struct nvmfd_rt *rt, FILE *f)
{
	json_object *o = nvmfd_rt_stats_obj(rt);
	int ret = 0;

	if (!o)
		return -ENOMEM;
	if (fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f) < 0 || ferror(f))
		ret = -EIO;
	json_object_put(o);
	return ret;
}
