/* SPDX-License-Identifier: MIT */
/*
 * rt.h - the execution runtime: worker pools, io_work items, placement.
 *
 * Terms follow the Linux workqueue (Documentation/core-api/workqueue.rst):
 * a work item (struct nvmfd_work) is queued to a pool chosen from an io_cpu;
 * bound pools are one per CPU with workers pinned there; unbound pools are
 * one per affinity-scope unit (cpu, smt, cache, numa, system) with workers
 * allowed on the unit's CPUs. A work item is never run by two workers at
 * once; queueing an item that is already pending coalesces (returns false),
 * and queueing it while it runs makes it run once more afterwards, on the
 * same pool (the non-reentrancy rule of queue_work_on()).
 *
 * Readiness: a pool watches file descriptors (sockets, io_uring ring fds,
 * eventfds) with one-shot interest; when one becomes ready the work item
 * attached to it is queued on its io_cpu. This is the user-space analogue
 * of sk_data_ready -> queue_work_on(io_cpu, io_work).
 *
 * Errors: negative errno. Ownership: the caller owns struct nvmfd_work
 * storage and must keep it alive until nvmfd_rt_work_cancel_sync() returned
 * and its fds were unwatched (nvmfd_rt_unwatch_fd()).
 */
#ifndef NVMFD_INTERNAL_RT_H
#define NVMFD_INTERNAL_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>
#include <sched.h>

struct nvmfd_rt;
struct nvmfd_work;

typedef void (*nvmfd_work_fn)(struct nvmfd_work *work);

enum nvmfd_rt_mode {
	NVMFD_RT_BOUND, /* one pool per online CPU, workers pinned (default) */
	NVMFD_RT_UNBOUND, /* one pool per affinity-scope unit */
};

enum nvmfd_rt_scope {
	NVMFD_RT_SCOPE_CPU,
	NVMFD_RT_SCOPE_SMT,
	NVMFD_RT_SCOPE_CACHE, /* default, as in Linux >= 6.5 */
	NVMFD_RT_SCOPE_NUMA,
	NVMFD_RT_SCOPE_SYSTEM,
};

enum nvmfd_rt_place {
	NVMFD_RT_PLACE_RR, /* (qid - 1) mod online CPUs */
	NVMFD_RT_PLACE_LEAST_LOADED, /* fewest queues among allowed CPUs */
	NVMFD_RT_PLACE_INCOMING_CPU, /* the socket's SO_INCOMING_CPU */
};

/**
 * struct nvmfd_rt_opts - runtime configuration; init with nvmfd_rt_opts_init().
 * @size:        sizeof(struct nvmfd_rt_opts), for ABI growth.
 * @mode:        bound or unbound pools.
 * @scope:       affinity scope for unbound pools.
 * @strict:      unbound workers never leave their scope's CPUs.
 * @max_active:  cap on in-flight work items per pool (default 512).
 * @workers_per_pool: worker threads per unbound pool (0 = CPUs in the unit);
 *               bound pools start one runnable worker per CPU.
 * @cpus:        CPUs the runtime may use (empty = all online).
 * @sysfs_root:  topology source, "/sys/devices/system/cpu" by default; tests
 *               point it at a synthetic tree.
 * @name:        thread name prefix (<= 8 chars), e.g. "nvmfd".
 * @uring:       bound pools only: each pool gets a worker ring
 *               (internal/rt_ring.h) and its workers sleep in
 *               io_uring_enter() on it instead of epoll_wait(); -EINVAL
 *               with unbound pools (doc/execution-model.md §9.1).
 */
struct nvmfd_rt_opts {
	size_t size;
	enum nvmfd_rt_mode mode;
	enum nvmfd_rt_scope scope;
	bool strict;
	unsigned int max_active;
	unsigned int workers_per_pool;
	cpu_set_t cpus;
	const char *sysfs_root;
	const char *name;
	bool uring;
};

/* Work item state; embed in the owner (a queue). Fields are private. */
struct nvmfd_work {
	nvmfd_work_fn fn;
	struct nvmfd_rt *rt;
	int io_cpu; /* preferred CPU (always set; a hint for unbound pools) */
	uint32_t flags; /* atomic: PENDING / RUNNING / REQUEUE / CANCELED */
	struct nvmfd_work *next; /* run-queue link, pool private */
	void *pool; /* pool it is queued on / running on */
	/* statistics, written by the running worker, read relaxed */
	uint64_t runs;
	uint64_t requeues; /* queued again while running */
	uint64_t run_ns; /* time spent in fn on the worker (wall clock), ns */
	uint64_t queue_delay_ns; /* sum of time between queueing and start, ns */
	uint64_t queued_at_ns;
	bool urgent; /* queued on the pool's urgent run list (pool lock) */
	bool on_ulist; /* on the urgent list now: a re-queue while running goes
			* on the normal one even when urgent (pool lock) */
};

/** nvmfd_rt_opts_init() - defaults: bound, scope cache, not strict,
 *  max_active 512, workers_per_pool 0, all CPUs, real sysfs, name "nvmfd". */
void nvmfd_rt_opts_init(struct nvmfd_rt_opts *opts);

/**
 * nvmfd_rt_create() - build pools from the topology and start their workers.
 * @opts: options (borrowed; opts->sysfs_root only during the call). An empty
 *        opts->cpus means the CPUs this process may run on, among the online
 *        ones. max_active 0 means the default.
 * @out:  the new runtime; destroy with nvmfd_rt_destroy().
 *
 * Implementation notes: bound pools start one worker pinned to their CPU
 * and run one item at a time (our items do not block); an item that must
 * block says so with nvmfd_rt_blocking_begin(), which lets another worker
 * pinned to the CPU run the queue meanwhile (the kernel detects sleeping
 * workers in the scheduler; user space cannot). Unbound
 * non-strict workers may run on any runtime CPU and are moved back into
 * their unit when they start an item outside it. Workers block all
 * asynchronous signals (handle them in the main thread or a signalfd).
 * Several runtimes may coexist (e.g. per-controller pools).
 *
 * Return: 0, -EINVAL (bad opts, empty CPU set, a CPU not usable by this
 *         process), -ENOMEM, -errno from pthread_create/epoll_create1/eventfd.
 * Context: any thread except a worker of another runtime being destroyed.
 */
int nvmfd_rt_create(const struct nvmfd_rt_opts *opts, struct nvmfd_rt **out);

/**
 * nvmfd_rt_unpin() - let every worker of @rt leave its pool's CPUs: each
 * one's affinity becomes every runtime CPU (so the scheduler's balancing
 * may move it off a busy CPU), and workers started later get the same.
 * For a stop on a loaded machine: a
 * worker pinned to a CPU a higher-priority hog holds may not run for tens
 * of seconds, yet the process cannot exit, nor a munmap finish, while one
 * of its threads waits there. Placement is over after this (bound pools no
 * longer run on their CPU). NULL is ignored.
 * Context: any thread, not from a worker of @rt being destroyed.
 */
void nvmfd_rt_unpin(struct nvmfd_rt *rt);

/** nvmfd_rt_destroy() - stop and join all workers; pending items are dropped
 *  (cancel and unwatch your items first: they still point at the pools).
 *  NULL is ignored. Context: not from a worker. */
void nvmfd_rt_destroy(struct nvmfd_rt *rt);

/**
 * nvmfd_work_init() - prepare an embedded work item for @rt on @io_cpu.
 * @w:      caller-owned storage, must not be queued or running.
 * @rt:     runtime.
 * @fn:     the function run by a worker.
 * @io_cpu: CPU whose pool runs @w for its whole life; a CPU the runtime does
 *          not use maps to runtime CPU number (io_cpu mod ncpus) in the list
 *          (negative: the first one).
 * Context: any thread. Re-initialising a cancelled item makes it usable again.
 */
void nvmfd_work_init(struct nvmfd_work *w, struct nvmfd_rt *rt, nvmfd_work_fn fn, int io_cpu);

/**
 * nvmfd_rt_queue_work() - queue @w on the pool that serves its io_cpu.
 * Return: true if queued, false if it was already pending (coalesced).
 * Context: any thread, including @w's own fn (self re-queue).
 */
bool nvmfd_rt_queue_work(struct nvmfd_work *w);

/**
 * nvmfd_rt_work_set_urgent() - serve @w before the ordinary items of its
 * pool (@urgent true) or among them (false): each pool has an urgent run
 * list that a worker takes from first, both lists FIFO. For items with
 * little work and a deadline on the other side, such as an NVMe admin
 * queue (Keep Alive within KATO): queued behind thousands of busy I/O
 * queues, it waits for the run in progress only, not for a round of them.
 * Readiness events are still fetched in their order (a busy worker looks
 * every few runs); the item is queued on the urgent list when its event
 * is dispatched. Kept across nvmfd_rt_work_move(); a queued item changes
 * lists at once, keeping its queueing time.
 * Context: any thread, including @w's fn; @w initialised.
 */
void nvmfd_rt_work_set_urgent(struct nvmfd_work *w, bool urgent);

/**
 * nvmfd_rt_watch_fd() - arm one-shot readiness of @fd; when any of @events
 * (EPOLLIN/EPOLLOUT) fires, @w is queued. Re-arm after each wake-up (a
 * re-arm is one EPOLL_CTL_MOD). One fd has one watcher: watching it for
 * another item moves it. EPOLLERR/EPOLLHUP always fire.
 *
 * With EPOLLET in @events the registration is persistent and
 * edge-triggered instead: every new readiness edge queues @w (a run in
 * progress is run again), until the events change or the fd is unwatched.
 * Watching again with the same events is then free (no system call);
 * other events are one EPOLL_CTL_MOD. The watcher must consume readiness
 * until it would block (EAGAIN) or re-queue itself: an edge already seen
 * does not fire again.
 * Return: 0, -EBADF (@fd < 0), -ECANCELED (@w was cancelled), -ENOMEM, or
 *         -errno from epoll_ctl.
 * Context: any thread, including @w's fn.
 */
int nvmfd_rt_watch_fd(struct nvmfd_work *w, int fd, uint32_t events);

/**
 * nvmfd_rt_unwatch_fd() - forget @fd (before closing it). After it returns no
 * worker will queue @w because of @fd, even for an event already fetched.
 * Return: 0, -EBADF (@fd < 0), -ENOENT (@fd not watched by @w), -errno from
 *         epoll_ctl. Context: any thread.
 */
int nvmfd_rt_unwatch_fd(struct nvmfd_work *w, int fd);

/**
 * nvmfd_rt_work_cancel_sync() - prevent further runs of @w and wait until a
 * running instance returned. A pending run is dropped; later queue_work()
 * calls return false and nvmfd_rt_watch_fd() fails until nvmfd_work_init().
 * Teardown order for an item: this, then nvmfd_rt_unwatch_fd() on each of
 * its fds (a running fn can no longer re-arm them), then free it.
 * Context: not from @w itself (asserted); may sleep.
 */
void nvmfd_rt_work_cancel_sync(struct nvmfd_work *w);

/**
 * nvmfd_rt_work_move() - move @w to runtime @to (may be its own) on @io_cpu:
 * cancel it (waiting for a run in progress), forget the readiness of its
 * @nfds fds @fds (negative entries skipped), re-target it with the same
 * function and statistics, and queue it once: its first run on the new
 * pool must re-arm readiness. nvmfd_rt_queue_work() may be called on @w
 * from any thread meanwhile (a kick lost to the move is made up by that
 * run); no other call on @w may race with the move.
 * Return: 0, -EINVAL (@w never initialised, @to NULL).
 * Context: not from @w itself (asserted); may sleep. Queue migration
 * between per-controller runtimes (nvmfd_rt_group) is built on it.
 */
int nvmfd_rt_work_move(struct nvmfd_work *w, struct nvmfd_rt *to, int io_cpu, const int *fds,
		       unsigned int nfds);

/*
 * Runtime groups: one runtime per key (e.g. per controller, --wq-per-ctrl),
 * created on first use with the group's options, reference counted by its
 * users; when the last user goes, the runtime is destroyed from a
 * short-lived thread (never a runtime worker: nvmfd_rt_destroy() forbids
 * it), so nvmfd_rt_group_put() may be called from a work item.
 */
struct nvmfd_rt_group;

/** nvmfd_rt_group_create() - @opts copied (NULL or size 0: the defaults;
 *  opts->name ignored: @name, <= 8 chars, names the threads; a
 *  opts->sysfs_root must outlive the group). Return: 0, -ENOMEM. */
int nvmfd_rt_group_create(const struct nvmfd_rt_opts *opts, const char *name,
			  struct nvmfd_rt_group **out);

/**
 * nvmfd_rt_group_get() - the runtime of @key: a new reference, created
 * when @key has none (@label, e.g. a cntlid, is what stats show for it). Return: 0, -ENOMEM, nvmfd_rt_create()'s error,
 * -ESHUTDOWN (group being destroyed). Context: any thread but a worker of
 * a runtime being destroyed; creation may sleep.
 */
int nvmfd_rt_group_get(struct nvmfd_rt_group *g, uint64_t key, uint64_t label,
		       struct nvmfd_rt **out);

/** nvmfd_rt_group_put() - drop a reference from nvmfd_rt_group_get(); the
 *  last one destroys the runtime asynchronously. Context: any thread,
 *  including a work item of that runtime (after its last run's cleanup). */
void nvmfd_rt_group_put(struct nvmfd_rt_group *g, struct nvmfd_rt *rt);

/** nvmfd_rt_group_count() - live runtimes in the group (for tests/stats). */
unsigned int nvmfd_rt_group_count(struct nvmfd_rt_group *g);

/** nvmfd_rt_group_stats_obj() - the same as a new json-c array (NULL:
 *  out of memory). Context: any thread; reads /proc under the group lock. */
json_object *nvmfd_rt_group_stats_obj(struct nvmfd_rt_group *g, const char *key_name);

/**
 * nvmfd_rt_group_stats_json() - JSON array of {<key_name>: label, users,
 * runtime} on @f.
 * @key_name: the name written for the label (e.g. "cntlid").
 * Return: 0, -EIO. Context: any thread.
 */
int nvmfd_rt_group_stats_json(struct nvmfd_rt_group *g, const char *key_name, FILE *f);

/** nvmfd_rt_group_destroy() - wait for runtimes being destroyed, destroy
 *  what is left (every user must be gone), free; NULLs *@gp.
 *  Context: not a runtime worker. */
void nvmfd_rt_group_destroy(struct nvmfd_rt_group **gp);

/** nvmfd_rt_group_unpin() - nvmfd_rt_unpin() on every runtime of @g (those
 *  created later stay pinned). NULL is ignored. Context: any thread. */
void nvmfd_rt_group_unpin(struct nvmfd_rt_group *g);

/**
 * nvmfd_rt_blocking_begin() - the calling work function is about to block
 * (poll(), a sleeping lock, a synchronous syscall that may wait).
 *
 * Bound pools are concurrency managed like the kernel's per-CPU pools: one
 * item runs at a time on a CPU. Since user space cannot see a worker going
 * to sleep, an item says so: until nvmfd_rt_blocking_end() it does not count
 * as running, so another worker pinned to the same CPU (woken, or started
 * on demand, at most 3 extra per pool) runs the next queued items. Unbound
 * pools have no concurrency cap; there it only frees a worker slot.
 * Non-reentrancy is unaffected. No-op outside a work function or when
 * nested; a function returning inside the section ends it.
 * Context: inside a work function.
 */
void nvmfd_rt_blocking_begin(void);

/** nvmfd_rt_blocking_end() - the blocking call returned; the item counts as
 *  running again (the CPU may briefly run two items, as in the kernel).
 *  Context: inside a work function, after nvmfd_rt_blocking_begin(). */
void nvmfd_rt_blocking_end(void);

/**
 * nvmfd_rt_current_work() - the item the calling thread is running, or NULL
 * (not a worker, or between items). For owner assertions:
 * assert(nvmfd_rt_current_work() == &q->io_work).
 */
struct nvmfd_work *nvmfd_rt_current_work(void);

/**
 * nvmfd_rt_place() - choose an io_cpu and account it (per-CPU counter).
 * @rt:      runtime.
 * @policy:  placement policy.
 * @qid:     queue id (rr uses (qid - 1) mod CPUs; admin qid 0 maps like qid 1).
 * @allowed: CPUs allowed for this queue, or NULL for all runtime CPUs.
 * @incoming_cpu: SO_INCOMING_CPU of the socket (or -1 if unknown).
 * Return: the CPU (>= 0); release it with nvmfd_rt_unplace() when the queue stops.
 */
int nvmfd_rt_place(struct nvmfd_rt *rt, enum nvmfd_rt_place policy, unsigned int qid,
		   const cpu_set_t *allowed, int incoming_cpu);
/** nvmfd_rt_unplace() - release a CPU from nvmfd_rt_place() (never below 0). */
void nvmfd_rt_unplace(struct nvmfd_rt *rt, int cpu);

/** nvmfd_rt_ncpus() - number of CPUs the runtime uses. */
unsigned int nvmfd_rt_ncpus(const struct nvmfd_rt *rt);

/** nvmfd_now_ns() - CLOCK_MONOTONIC in ns. */
uint64_t nvmfd_now_ns(void);

/*
 * Statistics snapshots (additive API). Counters are written by workers with
 * relaxed stores and read here with relaxed loads; a snapshot is not atomic
 * across counters. Context switches and run-queue delay come from
 * /proc/self/task/<tid>/{status,schedstat}.
 */

/**
 * struct nvmfd_rt_worker_stats - one worker thread.
 * @tid:          kernel thread id.
 * @last_cpu:     CPU it last ran an item on (-1: none yet).
 * @affinity:     its current CPU affinity.
 * @runs:         work items run.
 * @wakeups:      returns from epoll_wait() (worker ring: io_uring_enter()).
 * @epoll_events: readiness events it dispatched (eventfd kicks excluded).
 * @busy_ns:      wall time inside work functions, ns.
 * @queue_delay_ns: sum over runs of (start - enqueue), ns.
 * @queue_delay_max_ns: largest single (start - enqueue), ns.
 * @hogs:         runs longer than NVMFD_RT_HOG_NS (the kernel's
 *                cpu_intensive_thresh_us analogue: such items delay every
 *                other item of a bound pool).
 * @repatriations: non-strict unbound only: moved back into its unit.
 * @nvcsw:        voluntary context switches.
 * @nivcsw:       involuntary context switches.
 * @run_delay_ns: time spent runnable but waiting for a CPU (schedstat 2nd field).
 */
struct nvmfd_rt_worker_stats {
	int tid;
	int last_cpu;
	cpu_set_t affinity;
	uint64_t runs;
	uint64_t wakeups;
	uint64_t epoll_events;
	uint64_t busy_ns;
	uint64_t queue_delay_ns;
	uint64_t queue_delay_max_ns;
	uint64_t hogs;
	uint64_t repatriations;
	uint64_t nvcsw;
	uint64_t nivcsw;
	uint64_t run_delay_ns;
};

/* A work function running longer than this counts as a hog (10 ms, the
 * default of the kernel's workqueue.cpu_intensive_thresh_us). */
#define NVMFD_RT_HOG_NS 10000000ull

/**
 * struct nvmfd_rt_pool_stats - one pool; worker counters are summed.
 * @cpus:       the pool's CPUs (bound: one; unbound: the scope unit).
 * @nworkers:   worker threads.
 * @max_active: cap on in-flight items.
 * @kicks:      eventfd writes made to wake an idle worker.
 * @urgent_runs: runs taken from the urgent run list
 *              (nvmfd_rt_work_set_urgent()).
 * @runq_max:   longest run queue seen.
 * @active_max: most items in flight at once (<= @max_active).
 * @runq_len:   items on the run queue at the snapshot.
 * @runq_head_age_ns: how long the run queue's first item has waited at the
 *              snapshot, ns (0: empty): a pool whose worker is stuck in one
 *              item, or never gets its CPU, shows it growing.
 * other fields: sums of struct nvmfd_rt_worker_stats over the workers
 * (queue_delay_max_ns: the maximum).
 */
struct nvmfd_rt_pool_stats {
	cpu_set_t cpus;
	unsigned int nworkers;
	unsigned int max_active;
	unsigned int runq_max;
	unsigned int active_max;
	unsigned int runq_len;
	uint64_t runq_head_age_ns;
	uint64_t runs;
	uint64_t wakeups;
	uint64_t epoll_events;
	uint64_t kicks;
	uint64_t urgent_runs;
	uint64_t busy_ns;
	uint64_t queue_delay_ns;
	uint64_t queue_delay_max_ns;
	uint64_t hogs;
	uint64_t repatriations;
	uint64_t nvcsw;
	uint64_t nivcsw;
	uint64_t run_delay_ns;
};

/** nvmfd_rt_npools() - number of pools (bound: CPUs; unbound: scope units). */
unsigned int nvmfd_rt_npools(const struct nvmfd_rt *rt);

/** nvmfd_rt_pool_of_cpu() - index of the pool serving io_cpu @cpu.
 *  Return: pool index; a non-runtime CPU maps like nvmfd_work_init() does. */
unsigned int nvmfd_rt_pool_of_cpu(const struct nvmfd_rt *rt, int cpu);

/**
 * nvmfd_rt_pool_stats() - snapshot pool @pool.
 * Return: 0, -EINVAL (no such pool). Context: any thread; reads /proc.
 */
int nvmfd_rt_pool_stats(struct nvmfd_rt *rt, unsigned int pool, struct nvmfd_rt_pool_stats *out);

/* Workers per pool nvmfd_rt_pool_sched() reports (the others are left out). */
#define NVMFD_RT_SCHED_WORKERS 16

/**
 * struct nvmfd_rt_pool_sched - the scheduler's view of one pool, cheap
 * enough to take every housekeeping tick (schedstat only, no status file,
 * no counters).
 * @nworkers:     workers reported (at most NVMFD_RT_SCHED_WORKERS).
 * @run_delay_ns: per worker, its run delay so far (schedstat field 2), ns;
 *                0 where the thread has no tid yet or schedstat is missing.
 * @exec_ns:      per worker, its time on a CPU so far (schedstat field 1).
 * @last_cpu:     per worker, the CPU its last run ended on (-1: none yet);
 *                where an unbound pool's worker's time is counted.
 * @runq_len, @runq_head_age_ns: as in struct nvmfd_rt_pool_stats.
 */
struct nvmfd_rt_pool_sched {
	unsigned int nworkers;
	uint64_t run_delay_ns[NVMFD_RT_SCHED_WORKERS];
	uint64_t exec_ns[NVMFD_RT_SCHED_WORKERS];
	int last_cpu[NVMFD_RT_SCHED_WORKERS];
	unsigned int runq_len;
	uint64_t runq_head_age_ns;
};

/**
 * nvmfd_rt_pool_sched() - snapshot pool @pool's workers' run delay and its
 * run queue. Return: 0, -EINVAL (no such pool). Context: any thread; reads
 * one schedstat file per worker.
 */
int nvmfd_rt_pool_sched(struct nvmfd_rt *rt, unsigned int pool, struct nvmfd_rt_pool_sched *out);

/**
 * nvmfd_rt_worker_stats() - snapshot worker @worker of pool @pool.
 * Return: 0, -EINVAL (no such pool/worker). Context: any thread; reads /proc.
 */
int nvmfd_rt_worker_stats(struct nvmfd_rt *rt, unsigned int pool, unsigned int worker,
			  struct nvmfd_rt_worker_stats *out);

/**
 * nvmfd_rt_stats_json() - write one JSON object describing @rt, its pools,
 * workers and placement counters to @f (no trailing newline).
 * Return: 0, -EIO if writing failed. Context: any thread.
 */
int nvmfd_rt_stats_json(struct nvmfd_rt *rt, FILE *f);
/** nvmfd_rt_stats_obj() - the same object as a new json-c reference
 *  (NULL: out of memory). Context: any thread; reads /proc. */
json_object *nvmfd_rt_stats_obj(struct nvmfd_rt *rt);

/*
 * Idle polling (doc/execution-model.md §4): after each io_work pass the item
 * reports whether it made progress; while it did, or while less than the
 * period has passed since the last progress, it re-queues itself; after a
 * full period without progress it re-arms readiness and sleeps. The clock is
 * passed in so the state machine is deterministic under test.
 */

/**
 * struct nvmfd_idle_poll - idle-poll state; embedded, no teardown.
 * @period_ns: idle period (0 = purely event driven).
 * @last_ns:   time of the last progress (or of the first idle pass).
 * @have_last: @last_ns is valid.
 * @polls:     passes that chose to keep polling.
 * @sleeps:    passes that chose to sleep.
 */
struct nvmfd_idle_poll {
	uint64_t period_ns;
	uint64_t last_ns;
	bool have_last;
	uint64_t polls;
	uint64_t sleeps;
};

/** nvmfd_idle_poll_init() - set the period, in microseconds (0 = never poll). */
void nvmfd_idle_poll_init(struct nvmfd_idle_poll *ip, unsigned int period_us);

/**
 * nvmfd_idle_poll_update() - account one pass.
 * @ip:         state.
 * @progressed: the pass consumed PDUs or completions.
 * @now_ns:     current time (nvmfd_now_ns() in production), ns.
 * Return: true to keep polling (re-queue), false to sleep (re-arm readiness).
 *         Progress always returns true (the item has more to do, as nvmet's
 *         io_work re-queues itself when it made progress); without progress,
 *         false when the period is 0 or when @now_ns - (last progress, or the
 *         first idle pass) >= period. Sleeping resets the timer.
 * Context: the item's owner only.
 */
bool nvmfd_idle_poll_update(struct nvmfd_idle_poll *ip, bool progressed, uint64_t now_ns);

/*
 * Budgets for rx/tx alternation inside one io_work pass (doc/execution-model.md
 * §3): a pass has a deadline; inside it, rx and tx each get slices of
 * a byte and PDU budget, alternated until both are idle or the deadline
 * passes. Use one struct per direction.
 */

/**
 * struct nvmfd_budget - one direction's budget.
 * @bytes_max:   bytes per slice (0 = unlimited).
 * @pdus_max:    PDUs per slice (0 = unlimited).
 * @bytes:       bytes charged in the current slice.
 * @pdus:        PDUs charged in the current slice.
 * @deadline_ns: end of the pass (0 = none), absolute ns.
 * @exhausted:   slices that ran out of budget (stat).
 */
struct nvmfd_budget {
	uint64_t bytes_max;
	uint64_t pdus_max;
	uint64_t bytes;
	uint64_t pdus;
	uint64_t deadline_ns;
	uint64_t exhausted;
};

/** nvmfd_budget_init() - per-slice limits (0 = unlimited); clears the counters. */
void nvmfd_budget_init(struct nvmfd_budget *b, uint64_t bytes_max, uint64_t pdus_max);

/** nvmfd_budget_start_pass() - the pass ends @duration_us after @now_ns (0 = no
 *  deadline); also starts a slice. */
void nvmfd_budget_start_pass(struct nvmfd_budget *b, uint64_t now_ns, uint64_t duration_us);

/** nvmfd_budget_start_slice() - forget what the previous slice consumed. */
void nvmfd_budget_start_slice(struct nvmfd_budget *b);

/**
 * nvmfd_budget_charge() - account @bytes and @pdus to the current slice.
 * Return: true while the slice has budget left, false once it is used up
 *         (counted once per slice in @exhausted).
 */
bool nvmfd_budget_charge(struct nvmfd_budget *b, uint64_t bytes, uint64_t pdus);

/** nvmfd_budget_left() - the current slice still has budget. */
bool nvmfd_budget_left(const struct nvmfd_budget *b);

/** nvmfd_budget_expired() - the pass deadline has passed at @now_ns. */
bool nvmfd_budget_expired(const struct nvmfd_budget *b, uint64_t now_ns);

/*
 * Adaptive execution (--exec auto, doc/execution-model.md §8): a pure
 * per-queue controller. The owner feeds it one sample per tick (the
 * target's housekeeping tick, 100 ms) with an injected clock; it answers
 * where the queue's io_work should run and whether it should idle-poll.
 * It reads no clock and no /proc itself, so it is deterministic under test.
 *
 * Placement: BOUND (on the queue's io_cpu) -> MOVED (bound pool of another
 * CPU, when the caller says one has headroom) or UNBOUND (an unbound pool:
 * the scheduler picks a CPU). Reaction time, with a tick of T:
 * - starvation (io_work queued but not run for >= starve_ns): at the first
 *   sample that sees it, i.e. within starve_ns + T (150 ms by default in
 *   the target); no hysteresis, never suppressed by the hold time;
 * - contention (mean queue delay >= delay_hi_ns or CPU pressure >=
 *   pressure_hi on the CPU the queue runs on): after @window consecutive
 *   contended samples and at least hold_ns in the current placement
 *   (default 3 samples and 1 s);
 * - return to io_cpu: after 2 x @window consecutive samples in which the
 *   io_cpu's pressure is <= pressure_lo and the queue is not contended,
 *   and at least the current hold in the mode. A return that is followed
 *   by a new departure within 4 x hold doubles the hold (up to 64 x
 *   hold_ns): a placement that flaps backs off exponentially; each 4 x
 *   hold spent calm at home halves it again.
 * Polling: on after @window consecutive samples with short arrival gaps
 * (<= poll_gap_ns), low queue depth (<= poll_qd_max) and an uncontended
 * CPU (pressure <= pressure_lo); period 2 x the mean gap clamped to
 * [poll_min_us, poll_max_us], changed only when it moves by > 25 %; off
 * when the CPU is contended (a poller must not fight the host for its
 * CPU) in poll_stop_window consecutive samples (default 2: a tick-long
 * burst of someone else's work, a shell command or a tool starting up,
 * is ridden out and counted in poll_blips; a busy thread that shares the
 * CPU stops the poller within 2 ticks) and after @window idle samples
 * (no arrivals, or long gaps). What stopped it is kept (poll_cause).
 * System CPU pressure (PSI) above psi_poll_max keeps polling from
 * starting; at pressure_hi it stops it. Polling that is stopped by
 * contention may start again only after the poll hold (starts at hold_ns);
 * a stop within 4 x the poll hold of the start doubles it (up to 64 x
 * hold_ns): a poller that makes its own CPU contended backs off
 * exponentially instead of flapping; 4 x the poll hold spent polling
 * calmly halves it again.
 *
 * Per-CPU signals (sample.cpu.known, what the target feeds): the CPU the
 * queue runs on and its io_cpu are described by struct nvmfd_auto_cpu
 * (idle share, share run by others, contention by others), and then
 * - polling starts only where the CPU has headroom for it (others <=
 *   poll_others_max) and is not contended (contention <= pressure_lo, the
 *   worker's own run delay <= pressure_lo); it stops (poll_stop_window
 *   samples in a row) when the worker's own run delay reaches
 *   poll_delay_max, the CPU's contention pressure_hi, or others 2 x
 *   poll_others_max (a poller that shares its CPU with a busy thread: the
 *   "no CPU split" case); system PSI is not used (it says someone
 *   waited, not where); a running poller is not held to the start gate;
 * - a contention departure (not a starvation) needs somewhere better: a
 *   CPU with headroom (alt_cpu) or a less contended one (better_cpu);
 *   when every CPU is as loaded, the queue stays (but a latency-bound
 *   queue that the shared-CPU rule below would move goes unbound); it is
 *   pinned to the CPU with headroom only when it is latency bound and
 *   that CPU is quiet (alt_quiet), else it goes unbound (a starved queue
 *   takes alt_cpu at once either way);
 * - contention counts for placement only on the queue's own CPU (its
 *   contention >= pressure_hi, or its worker's run delay, or the queue
 *   delay), and the way home needs the io_cpu's contention <= pressure_lo
 *   and others there at most @home_others_max: a thread that holds the
 *   io_cpu alone (a hog our queue left to it) waits for nobody, so the
 *   CPU shows no contention, yet a queue coming back would share it
 *   (session 29: with the hog of the starvation scenario such queues
 *   left and came back every few seconds).
 * Incoming CPU (unless no_follow, bound or freeze): a queue at home whose
 * packets arrive on another runtime CPU that is no more contended for us
 * (sample.incoming NVMFD_AUTO_IN_OTHER) on the same CPU for @window
 * samples in a row gets that CPU as its new home and moves there, bound,
 * and stops polling (the new CPU decides afresh). A new queue's first
 * such move needs no hold; later ones wait the rehome hold since the
 * last: hold_ns at first, doubled by a move within 4 rehome holds of the
 * previous one, up to 64 x hold_ns, halved by a move after a longer calm.
 * Linux nvmet queues io_work on the socket's incoming CPU for the same
 * reason: the wake-up comes from that CPU, so the work runs where the
 * data is and no wake-up crosses CPUs (measured in session 30: 4K reads
 * at QD 1, host thread and target queue on one CPU 2.5x the IOPS of
 * crossed CPUs, at QD 32 1.6x; doc/execution-model.md §8).
 * A queue whose packets arrive at home from a peer on this machine
 * (sample.local_peer) is moved neither by the shared-CPU rule nor by the
 * contention rule: the thread it shares its CPU with is, typically, the
 * peer's, which waits on the same CPU, so leaving would only add a
 * wake-up across CPUs per command and leave the contention to a peer as
 * starved as before (session 30: co-located queues that left a CPU a
 * nice -20 load took made the other CPU's pair 10-20 % slower). A
 * starvation still moves it at once. For a NIC's flow the incoming CPU
 * is where its interrupt is steered, and whoever runs there is not the
 * peer: the rules apply as everywhere.
 * Without per-CPU signals (cpu.known false) the pool/PSI rules above apply.
 *
 * Byte budgets (decide_budget, unless no_budget): a queue whose passes
 * run to their deadline ("heavy": sample.heavy) while another queue on
 * the same worker waits long for it (sample.peer_delay_ns >=
 * budget_delay_ns) for @window samples gets its rx/tx byte budgets and
 * pass deadline halved (budget_shift + 1, at most budget_shift_max, not
 * within the hold of the previous change); after 2 x @window samples with
 * the peers' wait under a quarter of that bound, one step back.
 *
 * Completion source (nvmfd_auto_cq_shared(), decided once, when a queue is
 * created: a live queue's ring is not switched, since its ios in flight
 * complete on the ring they were submitted to): the CPU's shared ring
 * when at least cq_share_queues queues (this one included) would share
 * the CPU and the ones already there take >= cq_share_eps completion
 * events per second; a per-queue ring otherwise.
 */

/* Where the queue's packets arrive (sample.incoming): the CPU the
 * network stack delivered the last ones on (SO_INCOMING_CPU), as the
 * owner classified it over the last tick. */
enum nvmfd_auto_incoming {
	NVMFD_AUTO_IN_UNKNOWN, /* not measured, no arrivals in the tick, or
				* not one of the runtime's CPUs */
	NVMFD_AUTO_IN_HOME, /* the queue's home CPU (io_cpu, or where the rule
			     * below moved it) */
	NVMFD_AUTO_IN_OTHER, /* another runtime CPU, no more contended for us
			      * than home (sample.incoming_cpu names it) */
	NVMFD_AUTO_IN_BUSY, /* another runtime CPU, more contended */
};

enum nvmfd_auto_place {
	NVMFD_AUTO_BOUND, /* on the home CPU's bound pool (io_cpu until the
			   * incoming-CPU rule moves the home) */
	NVMFD_AUTO_MOVED, /* on another CPU's bound pool */
	NVMFD_AUTO_UNBOUND, /* on an unbound pool */
	NVMFD_AUTO__NPLACE,
};

enum nvmfd_auto_reason {
	NVMFD_AUTO_R_NONE, /* no decision yet */
	NVMFD_AUTO_R_STARVED, /* queued but not run for >= starve_ns */
	NVMFD_AUTO_R_QUEUE_DELAY, /* mean queue delay >= delay_hi_ns */
	NVMFD_AUTO_R_PRESSURE, /* CPU pressure >= pressure_hi */
	NVMFD_AUTO_R_RECOVERED, /* io_cpu uncontended again: back home */
	NVMFD_AUTO_R_LATENCY, /* polling on: short gaps, low QD, headroom */
	NVMFD_AUTO_R_IDLE, /* polling off: no arrivals or long gaps */
	NVMFD_AUTO_R_CONTENDED, /* polling off: CPU contended */
	NVMFD_AUTO_R_GAPS, /* polling period re-fitted to the gaps */
	NVMFD_AUTO_R_STARVING_PEER, /* budgets tightened: a peer waits for us */
	NVMFD_AUTO_R_PEER_CALM, /* budgets eased: the peers' wait is short */
	NVMFD_AUTO_R_SHARED_CPU, /* unbound: latency bound on a CPU others run
				  * on (no room to poll), another CPU idle */
	NVMFD_AUTO_R_INCOMING, /* new home: the CPU its packets arrive on */
	NVMFD_AUTO__NREASON,
};

/* Which signal made polling count as contended (poll_contended() in
 * auto.c; stats "poll_cause", and the log line's detail). */
enum nvmfd_auto_cause {
	NVMFD_AUTO_C_NONE,
	NVMFD_AUTO_C_QUEUE_DELAY, /* mean queue delay >= delay_hi_ns */
	NVMFD_AUTO_C_RUN_DELAY, /* the worker's own run delay (sample.pressure) */
	NVMFD_AUTO_C_CONTENTION, /* others wait on the CPU (cpu.contention) */
	NVMFD_AUTO_C_OTHERS, /* others run much of the CPU (cpu.others) */
	NVMFD_AUTO_C_PSI, /* sample.sys_pressure: PSI (the target without per-CPU
			   * signals), its CPU's contention (nvmf-perf) */
	NVMFD_AUTO__NCAUSE,
};

/**
 * struct nvmfd_auto_knobs - limits on the controller (init with
 * nvmfd_auto_knobs_init()); they let auto be studied, not only trusted.
 * @freeze:      decide nothing: placement and polling stay as they are
 *               (counters and time per mode still advance).
 * @bound:       never leave io_cpu (a starvation is still counted).
 * @no_poll:     never idle-poll.
 * @starve_ns:   queued-not-run bound for an immediate move (default 50 ms).
 * @delay_hi_ns: mean queue delay that counts as contended (default 2 ms).
 * @pressure_hi: CPU pressure (0..1, fraction of time runnable work of the
 *               CPU waited) that counts as contended (default 0.5).
 * @pressure_lo: pressure that counts as headroom (default 0.1).
 * @window:      consecutive samples before a non-urgent change (default 3).
 * @hold_ns:     least time in a placement before a non-urgent change
 *               (default 1 s).
 * @poll_gap_ns: arrival gap below which polling pays (default 200 us).
 * @poll_qd_max: queue depth up to which a queue is latency bound (default 4).
 * @poll_min_us, @poll_max_us: polling period bounds (default 10, 200).
 * @psi_poll_max: system (or cgroup) CPU pressure, the "some" share of
 *               PSI, up to which polling may start (default 0.25); at
 *               @pressure_hi or more polling stops as for a contended CPU.
 *               Only without per-CPU signals.
 * @poll_others_max: per-CPU signals: share of the CPU other tasks may run
 *               for polling to start (default 0.25); twice that stops it.
 * @poll_delay_max: per-CPU signals: the polling worker's own run delay
 *               (share of the tick) that stops polling (default 0.2).
 * @poll_stop_window: consecutive contended samples that stop polling
 *               (default 2; 0 means 1, the old "at once").
 * @better_margin: per-CPU signals: how much less contended another CPU
 *               must be to count as better (default 0.25).
 * @no_budget:   never change the byte budgets (they stay as configured).
 * @budget_delay_ns: a peer's mean queue delay that counts as starved by a
 *               heavy queue (default 500 us).
 * @budget_shift_max: most halvings of the budgets (default 3: 1/8).
 * @no_cq:       nvmfd_auto_cq_shared() keeps the configured source.
 * @cq_share_queues: queues on one CPU (the new one included) from which a
 *               shared ring may be chosen (default 2).
 * @cq_share_eps: completion events per second of the queues already on
 *               that CPU from which it is chosen (default 20000).
 * @spare_idle_min: per-CPU signals: the shared-CPU rule. A latency-bound
 *               queue (@poll_gap_ns, @poll_qd_max) that does not poll,
 *               on a CPU where others run more than @poll_others_max of
 *               the time, goes unbound for @window samples in a row when
 *               another CPU of the runtime was idle at least this share of
 *               the tick (default 0.2; 0: never): each wake-up may then
 *               take an idle CPU instead of waiting behind whoever runs
 *               on the io_cpu (a host thread of the same request-response
 *               exchange, say). When the alternative CPU leaves a poller
 *               room (sample alt_quiet) it moves there instead, where
 *               polling may start. It comes back, as any queue away from
 *               home does, once the queue is no longer latency bound or
 *               the io_cpu's others are down to half @poll_others_max.
 * @home_others_max: per-CPU signals: the share of the io_cpu others may
 *               run for a queue away from it to come home (default 0.5,
 *               the headroom a move destination needs; 0: not checked).
 * @no_follow:   never move the home to where the packets arrive (the
 *               incoming-CPU rule above).
 */
struct nvmfd_auto_knobs {
	bool freeze;
	bool bound;
	bool no_poll;
	uint64_t starve_ns;
	uint64_t delay_hi_ns;
	double pressure_hi;
	double pressure_lo;
	unsigned int window;
	uint64_t hold_ns;
	uint64_t poll_gap_ns;
	double poll_qd_max;
	unsigned int poll_min_us;
	unsigned int poll_max_us;
	double psi_poll_max;
	double poll_others_max;
	double poll_delay_max;
	unsigned int poll_stop_window;
	double better_margin;
	bool no_budget;
	uint64_t budget_delay_ns;
	unsigned int budget_shift_max;
	bool no_cq;
	unsigned int cq_share_queues;
	uint64_t cq_share_eps;
	double spare_idle_min;
	double home_others_max;
	bool no_follow;
};

/**
 * struct nvmfd_auto_cpu - one CPU over the last tick, as the owner
 * measured it (the target: /proc/stat, /proc/schedstat, its workers'
 * schedstat).
 * @known:      the fields are measured (else the per-CPU rules are off).
 * @idle:       share (0..1) of the tick the CPU was idle.
 * @others:     share (0..1) it ran tasks other than this process's
 *              workers there, niced ones (nice > 0) left out: 1 - @others
 *              is the headroom a poller of ours could take without taking
 *              it from anyone who would not yield it anyway.
 * @contention: how much tasks other than ours waited to run on it, per
 *              wall ns (0..1): the CPU's run-queue delay (schedstat)
 *              minus our workers'; without schedstat, @others when the
 *              CPU had no room left for a nice-0 task (idle plus niced
 *              time <= 0.1), else 0.
 */
struct nvmfd_auto_cpu {
	bool known;
	double idle;
	double others;
	double contention;
};

/**
 * struct nvmfd_auto_sample - what the owner observed since the last sample.
 * @now_ns:         the injected clock (monotonic), ns.
 * @pending_ns:     how long the io_work has been queued without running
 *                  (0: not queued, or running).
 * @queue_delay_ns: mean queue delay (enqueue to start) of the runs since
 *                  the last sample, ns (0: none).
 * @pressure:       CPU pressure (0..1) of the CPU the queue runs on now.
 * @home_pressure:  CPU pressure (0..1) of the io_cpu.
 * @alt_cpu:        another CPU with headroom exists (else a move goes to
 *                  an unbound pool).
 * @spare_cpu:      per-CPU signals: another CPU of the runtime (not the
 *                  one the queue runs on) was idle at least
 *                  knobs.spare_idle_min of the tick.
 * @alt_quiet:      per-CPU signals: the CPU @alt_cpu names leaves a poller
 *                  room (others there at most knobs.poll_others_max) and
 *                  was idle at least knobs.spare_idle_min.
 * @arrival_gap_ns: mean gap between command arrivals (0: no arrival).
 * @qd:             queue depth (commands in flight, nvmfd_auto_qd()).
 * @sys_pressure:   CPU pressure stall information of the system or of
 *                  the process's cgroup: the share (0..1) of the last tick
 *                  in which some task waited for a CPU. Not per CPU, so it
 *                  gates polling only (it cannot say which CPU to leave).
 * @cpl_per_s:      completion events per second (recorded; the completion
 *                  source is decided at queue creation, not per sample).
 * @cpu, @home:     per-CPU signals of the CPU the queue runs on and of its
 *                  io_cpu (struct nvmfd_auto_cpu; @cpu.known turns the
 *                  per-CPU rules on).
 * @better_cpu:     another CPU is less contended than the current one by
 *                  better_margin (where an unbound pool may run it).
 * @heavy:          the queue's passes run to their deadline or budget
 *                  (it has more work than one pass takes).
 * @peer_delay_ns:  the longest mean queue delay over the tick of the other
 *                  queues on the same worker pool (0: none).
 * @incoming:       where the queue's packets arrived during the tick
 *                  (enum nvmfd_auto_incoming; 0: unknown).
 * @incoming_cpu:   with NVMFD_AUTO_IN_OTHER, that CPU's number.
 * @local_peer:     the peer runs on this machine (loopback, or one of its
 *                  own addresses): the CPU its packets arrive on is the one
 *                  its sending thread ran on.
 */
struct nvmfd_auto_sample {
	uint64_t now_ns;
	uint64_t pending_ns;
	uint64_t queue_delay_ns;
	double pressure;
	double home_pressure;
	bool alt_cpu;
	uint64_t arrival_gap_ns;
	double qd;
	double sys_pressure;
	uint64_t cpl_per_s;
	struct nvmfd_auto_cpu cpu;
	struct nvmfd_auto_cpu home;
	bool better_cpu;
	bool heavy;
	uint64_t peer_delay_ns;
	bool spare_cpu;
	bool alt_quiet;
	enum nvmfd_auto_incoming incoming;
	int incoming_cpu;
	bool local_peer;
};

/**
 * struct nvmfd_auto - one queue's controller; fields are read-only for the
 * owner (stats), written by nvmfd_auto_update() only.
 * @place:        current placement.
 * @poll_us:      idle-poll period now (0: event driven).
 * @moves:        placement changes.
 * @poll_changes: polling on/off/period changes.
 * @starvations:  samples that saw a starvation (also when @bound kept it).
 * @last_reason:  reason of the last change.
 * @time_ns:      time spent in each placement, ns.
 * @poll_time_ns: time spent polling, ns.
 * @budget_shift: byte budgets and pass deadline are divided by 2^this.
 * @budget_changes: changes of @budget_shift.
 * @budget_reason: reason of the last budget change (placement and polling
 *                share @last_reason).
 * @stays:        samples in which the queue was contended but stayed
 *                because no CPU was better.
 * @poll_blips:   contended episodes shorter than poll_stop_window that
 *                polling rode out.
 * @poll_cause:   the signal of the last contention that stopped polling
 *                (NONE: never).
 * @rehomes:      moves of the home to the CPU the packets arrive on.
 * @home_cpu:     the queue's home CPU: the owner sets it to the io_cpu
 *                after nvmfd_auto_init() (-1: not set; the rule then
 *                never fires); after an update that returned true with
 *                @rehomes grown it is the CPU the packets arrive on, and
 *                the owner moves the queue there, bound.
 * @staying:      such an episode is going on (its first sample returns
 *                true from nvmfd_auto_update(), for a log line).
 * private: the rest (the stats show hold_ns and poll_hold_ns, the
 * current back-offs).
 */
struct nvmfd_auto {
	struct nvmfd_auto_knobs k;
	enum nvmfd_auto_place place;
	unsigned int poll_us;
	uint64_t moves;
	uint64_t poll_changes;
	uint64_t starvations;
	enum nvmfd_auto_reason last_reason;
	uint64_t time_ns[NVMFD_AUTO__NPLACE];
	uint64_t poll_time_ns;
	unsigned int budget_shift;
	uint64_t budget_changes;
	enum nvmfd_auto_reason budget_reason;
	uint64_t stays;
	bool staying;
	uint64_t poll_blips;
	enum nvmfd_auto_cause poll_cause;
	uint64_t rehomes;
	int home_cpu;
	/* private */
	uint64_t last_ns;
	uint64_t since_ns; /* placement entered */
	uint64_t home_ns; /* last return home (0: never) */
	uint64_t hold_ns; /* current hold (backs off) */
	uint64_t poll_on_ns; /* polling last turned on (0: never) */
	uint64_t poll_off_ns; /* polling last stopped by contention (0: never) */
	uint64_t poll_hold_ns; /* least time after that before polling again */
	uint64_t budget_ns; /* last budget change (0: never) */
	unsigned int hot, cool, lat, idle; /* consecutive-sample counters */
	unsigned int poll_hot; /* consecutive contended samples while polling */
	unsigned int starving, calm; /* budget: consecutive-sample counters */
	unsigned int share; /* consecutive samples of the shared-CPU rule */
	unsigned int follow; /* consecutive samples with packets on follow_cpu */
	int follow_cpu;
	uint64_t rehome_ns; /* last move of the home (0: never) */
	uint64_t rehome_hold_ns; /* least time between two (backs off) */
	bool shared_away; /* away from home by the shared-CPU rule */
	bool started;
};

/** nvmfd_auto_knobs_init() - the defaults documented above. */
void nvmfd_auto_knobs_init(struct nvmfd_auto_knobs *k);

/** nvmfd_auto_init() - start BOUND, event driven; @k copied (NULL: defaults;
 *  window 0 means 1). */
void nvmfd_auto_init(struct nvmfd_auto *a, const struct nvmfd_auto_knobs *k);

/**
 * nvmfd_auto_update() - account one sample and decide.
 * Return: true when placement, polling or the budgets changed (read
 *         a->place, a->poll_us, a->last_reason, a->budget_shift), or a
 *         "contended, nowhere better" episode began (a->staying). A sample whose clock goes backwards
 *         accounts no time. Context: the queue's controller owner only.
 */
bool nvmfd_auto_update(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s);

/**
 * nvmfd_auto_cq_shared() - the completion source of a queue about to be
 * created on a CPU where @queues other queues run, whose completion events
 * add up to @events_per_s: true for the CPU's shared ring, false for a
 * ring of its own (rules above). @configured: what the configuration
 * says (kept with @k->no_cq or @k->freeze). Pure.
 */
bool nvmfd_auto_cq_shared(const struct nvmfd_auto_knobs *k, bool configured, unsigned int queues,
			  uint64_t events_per_s);

/**
 * nvmfd_auto_qd() - the queue depth a controller sample carries
 * (sample.qd) from what a transport sees over one tick.
 * @in_flight: commands holding a slot at the tick (submitted to the
 *             backend, or data in transfer): the depth of a backend that
 *             completes asynchronously.
 * @cmds:      commands received during the tick.
 * @passes:    io_work passes during the tick that found work (received,
 *             reaped or sent something; an idle poll or a spurious wake-up
 *             is not one).
 * A backend that completes inline (RAM, null) frees every slot within the
 * pass that took the command, so @in_flight reads ~0 whatever the host's
 * depth; the commands one pass finds waiting are then the measure: a
 * host at QD 1 sends one per pass, one at QD 32 a batch. Either figure is
 * a lower bound of the host's depth, so the larger is taken.
 * Return: max(@in_flight, @cmds / @passes), 0 without passes. Pure.
 */
double nvmfd_auto_qd(double in_flight, uint64_t cmds, uint64_t passes);

/** nvmfd_auto_place_name(), nvmfd_auto_reason_name(),
 *  nvmfd_auto_cause_name() - stats/log names. */
const char *nvmfd_auto_place_name(enum nvmfd_auto_place p);
const char *nvmfd_auto_reason_name(enum nvmfd_auto_reason r);
const char *nvmfd_auto_cause_name(enum nvmfd_auto_cause c);

/**
 * nvmfd_auto_poll_cause() - which signal of @s counts as contended for a
 * poller under @k (NVMFD_AUTO_C_NONE: none), the rule nvmfd_auto_update()
 * applies. Pure; for log lines and tests.
 */
enum nvmfd_auto_cause nvmfd_auto_poll_cause(const struct nvmfd_auto_knobs *k,
					    const struct nvmfd_auto_sample *s);

/** nvmfd_auto_stats_obj() - {"mode", "poll_us", "moves", "poll_changes",
 *  "starvations", "last_reason", "time_ms": {bound, moved, unbound},
 *  "poll_time_ms", "hold_ms", "poll_hold_ms", "budget_shift",
 *  "budget_changes", "budget_reason", "stays", "poll_blips",
 *  "poll_cause"} as a new json-c object
 *  (NULL: out of memory). */
json_object *nvmfd_auto_stats_obj(const struct nvmfd_auto *a);

/**
 * nvmfd_rt_work_pending_ns() - how long @w has been queued without
 * starting to run, at @now_ns (0: not queued, or running: a run in
 * progress is not a stall of the queue but of its function). Reads under
 * @w's pool lock. Context: any thread (the starvation watchdog).
 */
uint64_t nvmfd_rt_work_pending_ns(struct nvmfd_work *w, uint64_t now_ns);

#endif /* NVMFD_INTERNAL_RT_H */
