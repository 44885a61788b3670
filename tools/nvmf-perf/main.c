// SPDX-License-Identifier: MIT
/*
 * nvmf-perf - NVMe/TCP load generator and discovery client on the nvmfd
 * host library. See perf_usage() (opts.c) for the manual.
 *
 * One thread per I/O queue pair; each keeps -q commands in flight and
 * polls its own qp (the library's ownership rule). Latencies go into a
 * per-thread log-linear histogram merged at report time. With --verify each
 * thread owns a disjoint LBA range, so generation tracking needs no locks.
 *
 * Execution model: the queue threads stay plain pthreads (one per qp, so
 * per-queue CPU time, context switches and run-queue delay are that
 * thread's own). A runtime (src/rt) built with the --exec/--affinity-scope/
 * --cpus options is used for what it knows: the CPU list, the scope units
 * (its pools) and the per-CPU placement counters (nvmfd_rt_place()). Its
 * own workers stay idle in epoll_wait(). Running the qps as runtime work
 * items would share worker threads between queues of a bound pool and
 * lose the per-queue thread statistics the report is about.
 */
#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <nvmfd/host.h>

#include "internal/proc.h"
#include "internal/auth.h"
#include "internal/hist.h"
#include "internal/log.h"
#include "perf.h"

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "unknown"
#endif

#define VERIFY_MAX_SLOTS_PER_QUEUE (4u << 20)
#define PICK_TRIES 16

struct perf_run;
struct worker;
struct qgroup;

struct io_ctx {
	struct worker *w;
	uint8_t *buf;
	uint64_t slot; /* index of the io-sized slot in the worker's region */
	uint64_t gen; /* generation written (verify) */
	uint64_t start_ns;
	bool read;
	bool busy;
};

struct worker {
	struct perf_run *run;
	struct nvmfd_host_qp *qp;
	uint32_t idx;
	pthread_t thread;
	uint64_t region_lba; /* first LBA of the region */
	uint64_t nslots; /* io-sized slots in the region */
	uint64_t seq_next;
	uint64_t rng;
	struct io_ctx *ios;
	uint8_t *bufs;
	uint32_t outstanding;
	struct nvmfd_hist *hist;
	/* Verify state, per slot. With --verify-state @gen and @pend point
	 * into the run's state file (perf_vstate_*()), else @gen is ours and
	 * @pend NULL. */
	uint64_t *gen;
	uint64_t *pend;
	uint8_t *inflight;
	uint64_t next_gen;
	uint64_t gen_end; /* --verify-state: end of the reserved chunk */
	/* Measured counters (owner writes; read after join). */
	bool measuring;
	uint64_t t0_ns;
	uint64_t t1_ns;
	uint64_t ios_done;
	uint64_t bytes_done;
	uint64_t reads;
	uint64_t writes;
	/* --verify, whole run (warmup included): blocks checked, and reads of
	 * slots not written yet in this run (nothing to check them against) */
	uint64_t verified_blocks;
	uint64_t unverified_reads;
	/* I/Os that completed with an error status or a transport error
	 * (whole run); the first one is named in errmsg */
	uint64_t errors;
	struct rusage ru0;
	struct rusage ru1;
	/* Execution (set before the thread starts, then owner only). */
	int io_cpu;
	cpu_set_t unit; /* scope unit of io_cpu (bound: io_cpu alone) */
	cpu_set_t allowed; /* affinity while running */
	bool repatriate; /* non-strict unbound: move back into @unit on wake-up */
	int tid;
	int last_cpu;
	uint64_t loops; /* submit + poll rounds */
	uint64_t waits; /* blocking nvmfd_host_qp_wait() calls */
	uint64_t repatriations;
	uint64_t empty_seen; /* qp empty_polls at the last check */
	struct nvmfd_idle_poll idle;
	/* --exec auto: published by the queue thread (relaxed atomics) for the
	 * monitor, which owns @aq and writes @auto_poll_us; @aff_lock orders
	 * the thread's first affinity against the monitor's moves (and guards
	 * @allowed while both run) */
	struct perf_auto_queue aq;
	pthread_mutex_t aff_lock;
	bool aff_started; /* under @aff_lock: the thread set its affinity */
	int waiting; /* blocked in poll(2)/ppoll(2) */
	uint64_t wait_until_ns;
	int cur_cpu; /* sched_getcpu() at the last pass */
	uint64_t qd_sum; /* sum of the I/Os in flight at each completion */
	unsigned int auto_poll_us; /* the controller's idle-poll period */
	unsigned int poll_us_now; /* the period in effect (owner only) */
	struct perf_schedstat ss0;
	struct perf_schedstat ss1;
	/* --rate (open loop; owner only) */
	uint64_t rate_ns; /* interval between this queue's arrivals */
	uint64_t next_ns; /* intended send time of the next arrival */
	bool next_waiting; /* that arrival already found every slot busy */
	uint64_t queued; /* arrivals that found every slot busy */
	uint64_t max_lag_ns; /* latest a send left after its intended time */
	/* --reauth-interval: next re-authentication, and those done (this
	 * queue's; the admin queue's by the first queue) */
	uint64_t reauth_next_ns;
	uint64_t reauths_io;
	uint64_t reauths_admin;
	bool in_reauth; /* inside nvmfd_host_qp_reauth() */
	/* Progress (relaxed atomics, read by the main thread). */
	uint64_t progress_ios;
	uint64_t progress_bytes;
	int exit_code;
	char errmsg[512];
	/* --threads: the thread that drives this queue (NULL: its own), the
	 * events registered in its epoll set, input to look at next pass */
	struct qgroup *grp;
	int grp_events;
	bool grp_ready;
	bool placed; /* io_cpu accounted in the runtime (nvmfd_rt_place()) */
};

/*
 * --threads: one queue thread driving @nw queues of any controllers, each
 * its own struct worker, waiting in epoll on their sockets.
 */
struct qgroup {
	uint32_t idx;
	pthread_t thread;
	struct worker **ws;
	uint32_t nw;
	int epfd;
	struct epoll_event *evs;
};

struct perf_run {
	struct perf_opts o;
	struct nvmfd_host_ctrl *ctrl;
	const struct nvmfd_host_ns *ns;
	uint32_t nlb;
	uint64_t start_ns;
	uint64_t warmup_end_ns;
	uint64_t end_ns;
	int stop; /* relaxed atomic: a worker hit an error, or a signal came */
	struct worker *workers;
	struct nvmfd_rt *rt; /* topology and placement counters */
	cpu_set_t rt_cpus; /* the runtime's CPUs */
	uint64_t vm_hwm_kib;
	int signo; /* SIGINT/SIGTERM that ended the run early, 0 if none */
	/* several -r: this controller's index, the index of its first queue
	 * among all controllers' queues and their total (1 controller: 0,
	 * 0, -P); @rt is then controller 0's (@rt_borrowed) */
	uint32_t ctrl_idx;
	uint32_t qbase;
	uint32_t qtotal;
	bool rt_borrowed;
	uint64_t auto_self_kicks; /* --exec auto: the monitor's (runs[0] only) */
	struct perf_vstate *vstate; /* --verify-state */
	struct perf_vstate_stats vstats; /* its check of earlier runs */
	/* --threads: every controller's view of the process's queue threads */
	struct qgroup *groups;
	uint32_t ngroups;
};

/* SIGINT/SIGTERM received during the run (set by the handler only). */
static volatile sig_atomic_t got_signal;

static void on_signal(int signo)
{
	got_signal = signo;
}

/*
 * From here on SIGINT/SIGTERM end the run early instead of the process:
 * the main thread takes them (the queue threads block them, see
 * start_workers()) and stops the run. SA_RESETHAND: a second signal while
 * draining or reporting kills the process the usual way.
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND; /* no SA_RESTART: usleep() returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a reset connection is an error to report, not a reason to die (TLS
	 * writes with write(2), which would raise it) */
	signal(SIGPIPE, SIG_IGN);
}

static const char *signal_name(int signo)
{
	return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "a signal";
}

static uint64_t now_ns(void)
{
	return nvmfd__mono_ns();
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void worker_fail(struct worker *w, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Messages name queues as the report does: q1 is the first (w->idx 0). */
static void worker_fail(struct worker *w, int code, const char *fmt, ...)
{
	va_list ap;

	if (w->exit_code)
		return;
	w->exit_code = code;
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	__atomic_store_n(&w->run->stop, 1, __ATOMIC_RELAXED);
}

static int submit_one(struct worker *w, struct io_ctx *io, uint64_t intended_ns);

static void io_done(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct io_ctx *io = arg;
	struct worker *w = io->w;
	struct perf_run *run = w->run;
	uint32_t lba_size = run->ns->lba_size;
	uint64_t lba = w->region_lba + io->slot * run->nlb;
	uint64_t end = now_ns();

	io->busy = false;
	if (run->o.exec == PERF_EXEC_AUTO)
		__atomic_store_n(&w->qd_sum, w->qd_sum + w->outstanding, __ATOMIC_RELAXED);
	w->outstanding--;
	if (w->inflight)
		w->inflight[io->slot] = 0;
	if (cpl->err || cpl->status)
		w->errors++;
	if (cpl->err) {
		worker_fail(w, PERF_EXIT_CONN, "queue %u: %s I/O at LBA %" PRIu64 " failed: %s (%s)",
			    w->idx + 1, io->read ? "read" : "write", lba, strerror(-cpl->err),
			    nvmfd_host_qp_errmsg(w->qp));
		return;
	}
	if (cpl->status) {
		char sb[32];

		/* refused while this queue re-authenticates: the transaction
		 * failed at the controller; worker_reauth() reports why */
		if (w->in_reauth && (cpl->status & 0x7ff) == (NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC,
								      NVMFD_SC_AUTH_REQUIRED) & 0x7ff))
			return;
		worker_fail(w, PERF_EXIT_IO,
			    "queue %u: %s at LBA %" PRIu64 " completed with status %s (0x%x)", w->idx + 1,
			    io->read ? "read" : "write", lba,
			    nvmfd_host_status_str(cpl->status, false, sb, sizeof(sb)), cpl->status);
		return;
	}
	if (w->gen) {
		if (!io->read) {
			w->gen[io->slot] = io->gen;
			if (w->pend) /* after the acknowledged generation */
				__atomic_store_n(&w->pend[io->slot], 0, __ATOMIC_RELEASE);
		} else if (w->gen[io->slot]) {
			char msg[256];

			for (uint32_t b = 0; b < run->nlb; b++) {
				if (perf_verify_check(io->buf + (size_t)b * lba_size, lba_size, lba + b,
						      w->gen[io->slot], msg, sizeof(msg))) {
					worker_fail(w, PERF_EXIT_IO, "verify failed: %s", msg);
					return;
				}
				w->verified_blocks++;
			}
		} else {
			w->unverified_reads++;
		}
	}
	__atomic_store_n(&w->progress_ios, w->progress_ios + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->progress_bytes, w->progress_bytes + (uint64_t)run->nlb * lba_size,
			 __ATOMIC_RELAXED);
	if (w->measuring && io->start_ns >= w->t0_ns) {
		nvmfd__hist_record(w->hist, end - io->start_ns);
		w->ios_done++;
		w->bytes_done += (uint64_t)run->nlb * lba_size;
		if (io->read)
			w->reads++;
		else
			w->writes++;
	}
	/* Resubmit from the callback (SPDK perf style): the library batches
	 * these into one send at the end of the poll. */
	if (!run->o.rate && end < run->end_ns && !__atomic_load_n(&run->stop, __ATOMIC_RELAXED))
		submit_one(w, io, 0);
}

static bool pattern_is_random(enum perf_pattern p)
{
	return p == PERF_RANDREAD || p == PERF_RANDWRITE || p == PERF_RANDRW;
}

static bool pick_read(struct worker *w)
{
	switch (w->run->o.pattern) {
	case PERF_READ:
	case PERF_RANDREAD:
		return true;
	case PERF_WRITE:
	case PERF_RANDWRITE:
		return false;
	default:
		return rng_next(&w->rng) % 100 < w->run->o.read_pct;
	}
}

/*
 * Submit one I/O; 1 if submitted, 0 if nothing could be, <0 on error.
 * Its latency counts from @intended_ns (open loop), or from now if 0.
 */
static int submit_one(struct worker *w, struct io_ctx *io, uint64_t intended_ns)
{
	struct perf_run *run = w->run;
	uint32_t lba_size = run->ns->lba_size;
	uint64_t slot = 0, lba;
	bool found = false;
	int ret;

	for (int t = 0; t < PICK_TRIES; t++) {
		if (pattern_is_random(run->o.pattern))
			slot = rng_next(&w->rng) % w->nslots;
		else
			slot = w->seq_next++ % w->nslots;
		if (!w->inflight || !w->inflight[slot]) {
			found = true;
			break;
		}
	}
	if (!found)
		return 0;
	io->slot = slot;
	io->read = pick_read(w);
	io->busy = true;
	lba = w->region_lba + slot * run->nlb;
	if (w->gen && !io->read) {
		perf_vstate_next_gen(run->vstate, &w->next_gen, &w->gen_end, &io->gen);
		if (w->pend) /* before the write can reach the target */
			__atomic_store_n(&w->pend[slot], io->gen, __ATOMIC_RELEASE);
		for (uint32_t b = 0; b < run->nlb; b++)
			perf_verify_fill(io->buf + (size_t)b * lba_size, lba_size, lba + b, io->gen);
	}
	io->start_ns = now_ns();
	if (intended_ns && intended_ns < io->start_ns) {
		if (io->start_ns - intended_ns > w->max_lag_ns)
			w->max_lag_ns = io->start_ns - intended_ns;
		io->start_ns = intended_ns;
	}
	if (io->read)
		ret = nvmfd_host_qp_read(w->qp, run->ns->nsid, lba, run->nlb, io->buf, io_done, io);
	else
		ret = nvmfd_host_qp_write(w->qp, run->ns->nsid, lba, run->nlb, io->buf, io_done,
					  io);
	if (ret < 0) {
		io->busy = false;
		if (ret == -EAGAIN)
			return 0;
		worker_fail(w, PERF_EXIT_CONN, "queue %u: submit failed: %s (%s)", w->idx + 1,
			    strerror(-ret), nvmfd_host_qp_errmsg(w->qp));
		return ret;
	}
	if (w->inflight)
		w->inflight[slot] = 1;
	w->outstanding++;
	return 1;
}

/* Affinity: start inside the unit, then widen to what the mode allows. */
static int worker_set_affinity_locked(struct worker *w)
{
	int ret = pthread_setaffinity_np(pthread_self(), sizeof(w->unit), &w->unit);

	if (ret)
		return -ret;
	if (!CPU_EQUAL(&w->unit, &w->allowed)) {
		ret = pthread_setaffinity_np(pthread_self(), sizeof(w->allowed), &w->allowed);
		if (ret)
			return -ret;
	}
	return 0;
}

/* Non-strict unbound: a thread that woke up outside its unit is moved back
 * (the runtime does the same when a worker starts an item outside it). */
static int worker_set_affinity(struct worker *w)
{
	int ret;

	if (w->run->o.exec != PERF_EXEC_AUTO)
		return worker_set_affinity_locked(w);
	/* the monitor may have moved it already: then its mask stands */
	pthread_mutex_lock(&w->aff_lock);
	ret = w->aff_started ? 0 : worker_set_affinity_locked(w);
	w->aff_started = true;
	pthread_mutex_unlock(&w->aff_lock);
	return ret;
}

/* --exec auto decides the idle-poll period unless one was given. */
static bool auto_polls(const struct perf_run *run)
{
	return !run->o.busy_poll && !run->o.idle_poll_us;
}

/* --exec auto: the monitor sees a blocking wait (and when it times out). */
static void wait_begin(struct worker *w, uint64_t until_ns)
{
	if (w->run->o.exec != PERF_EXEC_AUTO)
		return;
	__atomic_store_n(&w->wait_until_ns, until_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&w->waiting, 1, __ATOMIC_RELEASE);
}

static void wait_end(struct worker *w)
{
	if (w->run->o.exec == PERF_EXEC_AUTO)
		__atomic_store_n(&w->waiting, 0, __ATOMIC_RELEASE);
}

/* --exec auto: a pass starts (the monitor sees it); take the
 * controller's polling period when it decides polling (@polls). */
static void auto_pass(struct worker *w, bool polls)
{
	unsigned int us;

	__atomic_store_n(&w->cur_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	if (!polls)
		return;
	us = __atomic_load_n(&w->auto_poll_us, __ATOMIC_RELAXED);
	if (us != w->poll_us_now) {
		w->poll_us_now = us;
		nvmfd_idle_poll_init(&w->idle, us);
	}
}

static void worker_repatriate(struct worker *w)
{
	int cpu = sched_getcpu();

	if (cpu < 0 || CPU_ISSET(cpu, &w->unit))
		return;
	if (worker_set_affinity(w) == 0)
		w->repatriations++;
}

/*
 * --rate: send every arrival whose intended time has come, while a slot
 * is free. Return: <0 on a submit error.
 */
static int rate_submit(struct worker *w, uint64_t now)
{
	struct perf_run *run = w->run;

	while (w->next_ns <= now && w->next_ns < run->end_ns) {
		struct io_ctx *io = NULL;
		int ret;

		for (uint32_t i = 0; i < run->o.depth; i++) {
			if (!w->ios[i].busy) {
				io = &w->ios[i];
				break;
			}
		}
		if (!io) {
			if (!w->next_waiting)
				w->queued++;
			w->next_waiting = true;
			return 0;
		}
		ret = submit_one(w, io, w->next_ns);
		if (ret <= 0)
			return ret;
		w->next_waiting = false;
		w->next_ns += w->rate_ns;
	}
	return 0;
}

static int wait_ms(const struct perf_run *run, uint64_t now);

/*
 * --reauth-interval: a new DH-HMAC-CHAP transaction on this queue (its
 * I/O completes meanwhile) and, from the first queue, on the admin queue.
 * Return: 0; <0 after worker_fail().
 */
static int worker_reauth(struct worker *w, uint64_t now)
{
	struct perf_run *run = w->run;
	int ret;

	w->reauth_next_ns = now + (uint64_t)run->o.reauth_ms * 1000000ull;
	if (w->idx == 0) {
		ret = nvmfd_host_ctrl_reauth(run->ctrl);
		if (ret < 0) {
			worker_fail(w, PERF_EXIT_CONN, "%s", nvmfd_host_ctrl_errmsg(run->ctrl));
			return ret;
		}
		w->reauths_admin++;
	}
	w->in_reauth = true;
	ret = nvmfd_host_qp_reauth(w->qp);
	w->in_reauth = false;
	if (ret < 0) {
		worker_fail(w, PERF_EXIT_CONN, "queue %u: %s", w->idx + 1,
			    nvmfd_host_qp_errmsg(w->qp));
		return ret;
	}
	w->reauths_io++;
	return 0;
}

/*
 * --rate: wait for the next arrival or a completion, whichever comes
 * first: poll(2) on the queue's socket with a nanosecond timeout (ppoll),
 * so neither an arrival nor a completion waits for a millisecond tick and
 * no thread spins (queue threads sharing a CPU would starve each other).
 * The caller's loop then sends and reaps. Return: 0; -errno of ppoll().
 */
static int rate_wait(struct worker *w)
{
	struct perf_run *run = w->run;
	uint64_t now = now_ns(), until = w->next_ns;
	struct pollfd pfd = { .fd = nvmfd_host_qp_fd(w->qp), .events = POLLIN };
	struct timespec ts;

	/* every slot busy: only a completion can make progress */
	if (w->outstanding >= run->o.depth || until > run->end_ns)
		until = now + (uint64_t)wait_ms(run, now) * 1000000ull;
	if (until <= now)
		return 0;
	ts.tv_sec = (time_t)((until - now) / 1000000000ull);
	ts.tv_nsec = (long)((until - now) % 1000000000ull);
	w->waits++;
	wait_begin(w, until);
	if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR) {
		wait_end(w);
		return -errno;
	}
	wait_end(w);
	return 0;
}

/* Milliseconds to block at most: until the end of the run, <= 50 ms. */
static int wait_ms(const struct perf_run *run, uint64_t now)
{
	uint64_t left = now < run->end_ns ? (run->end_ns - now) / 1000000ull + 1 : 1;

	return left > 50 ? 50 : (int)left;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct perf_run *run = w->run;
	uint64_t drain_deadline;
	int ret;

	__atomic_store_n(&w->tid, (int)gettid(), __ATOMIC_RELEASE);
	ret = worker_set_affinity(w);
	if (ret < 0) {
		worker_fail(w, PERF_EXIT_USAGE, "queue %u: cannot set the CPU affinity: %s", w->idx + 1,
			    strerror(-ret));
		return NULL;
	}
	nvmfd_idle_poll_init(&w->idle, run->o.idle_poll_us);
	if (run->o.rate) {
		/* each queue takes its share; queues start staggered */
		w->rate_ns = (uint64_t)(1e9 * run->qtotal / (double)run->o.rate);
		if (!w->rate_ns)
			w->rate_ns = 1;
		w->next_ns = run->start_ns + w->rate_ns * (run->qbase + w->idx) / run->qtotal;
	}
	if (run->o.reauth_ms)
		w->reauth_next_ns = run->start_ns + (uint64_t)run->o.reauth_ms * 1000000ull;
	for (;;) {
		uint64_t now = now_ns();
		bool progressed;
		int n;

		if (__atomic_load_n(&run->stop, __ATOMIC_RELAXED) || now >= run->end_ns)
			break;
		if (!w->measuring && now >= run->warmup_end_ns) {
			w->measuring = true;
			w->t0_ns = now;
			getrusage(RUSAGE_THREAD, &w->ru0);
			perf_read_schedstat(&w->ss0);
		}
		/* atomic: the --exec auto monitor reads it */
		__atomic_store_n(&w->loops, w->loops + 1, __ATOMIC_RELAXED);
		if (run->o.exec == PERF_EXEC_AUTO)
			auto_pass(w, auto_polls(run));
		if (run->o.reauth_ms && now >= w->reauth_next_ns && worker_reauth(w, now) < 0)
			break;
		if (run->o.rate) {
			if (rate_submit(w, now) < 0)
				break;
		} else {
			for (uint32_t i = 0; i < run->o.depth && w->outstanding < run->o.depth; i++) {
				if (w->ios[i].busy)
					continue;
				if (submit_one(w, &w->ios[i], 0) <= 0)
					break;
			}
		}
		n = nvmfd_host_qp_poll(w->qp, 0);
		if (n < 0) {
			worker_fail(w, PERF_EXIT_CONN, "queue %u: %s", w->idx + 1,
				    nvmfd_host_qp_errmsg(w->qp));
			break;
		}
		if (run->o.busy_poll)
			continue;
		if (run->o.rate) {
			if (rate_wait(w) < 0) {
				worker_fail(w, PERF_EXIT_CONN, "queue %u: %s", w->idx + 1,
					    nvmfd_host_qp_errmsg(w->qp));
				break;
			}
			continue;
		}
		progressed = n > 0;
		if (!progressed) {
			/* bytes moved without a completion (part of a large read,
			 * a budget cut) are progress too: the poll was not empty */
			struct nvmfd_host_qp_stats hs;

			nvmfd_host_qp_get_stats(w->qp, &hs);
			progressed = hs.empty_polls == w->empty_seen;
			w->empty_seen = hs.empty_polls;
		}
		if (nvmfd_idle_poll_update(&w->idle, progressed, now_ns()))
			continue;
		w->waits++;
		{
			int ms = wait_ms(run, now_ns());

			wait_begin(w, now_ns() + (uint64_t)ms * 1000000ull);
			n = nvmfd_host_qp_wait(w->qp, ms);
			wait_end(w);
		}
		if (n < 0) {
			worker_fail(w, PERF_EXIT_CONN, "queue %u: %s", w->idx + 1,
				    nvmfd_host_qp_errmsg(w->qp));
			break;
		}
		if (w->repatriate)
			worker_repatriate(w);
		{
			struct nvmfd_host_qp_stats hs;

			nvmfd_host_qp_get_stats(w->qp, &hs);
			w->empty_seen = hs.empty_polls;
		}
	}
	w->t1_ns = now_ns();
	getrusage(RUSAGE_THREAD, &w->ru1);
	perf_read_schedstat(&w->ss1);
	w->last_cpu = sched_getcpu();
	/* Drain in-flight I/O, bounded by the I/O timeout. */
	drain_deadline = now_ns() + (uint64_t)run->o.timeout_ms * 1000000ull;
	while (w->outstanding && now_ns() < drain_deadline) {
		if (nvmfd_host_qp_wait(w->qp, 10) < 0)
			break;
	}
	return NULL;
}

/* --threads: the slot deadlines of every queue are looked at (a poll of
 * each, nvmfd_host_qp_poll() checks them) at least this often, as a queue
 * thread's bounded wait (wait_ms()) does for its own. */
#define GROUP_SWEEP_NS 50000000ull

/* The per-queue start of worker_main(): --rate and --reauth-interval times. */
static void worker_start_times(struct worker *w)
{
	struct perf_run *run = w->run;

	if (run->o.rate) {
		w->rate_ns = (uint64_t)(1e9 * run->qtotal / (double)run->o.rate);
		if (!w->rate_ns)
			w->rate_ns = 1;
		w->next_ns = run->start_ns + w->rate_ns * (run->qbase + w->idx) / run->qtotal;
	}
	if (run->o.reauth_ms)
		w->reauth_next_ns = run->start_ns + (uint64_t)run->o.reauth_ms * 1000000ull;
}

/*
 * --threads: one pass of one queue, as one round of worker_main():
 * re-authenticate if due, send (closed loop: fill -q; --rate: the arrivals
 * due), send and receive.
 * Return: 1 progress (completions, or bytes moved), 0 none; <0 the queue
 * failed (worker_fail() done).
 */
static int worker_pass(struct worker *w, uint64_t now)
{
	struct perf_run *run = w->run;
	struct nvmfd_host_qp_stats hs;
	int n;

	if (run->o.reauth_ms && now >= w->reauth_next_ns && worker_reauth(w, now) < 0)
		return -EIO;
	if (run->o.rate) {
		if (rate_submit(w, now) < 0)
			return -EIO;
	} else {
		for (uint32_t i = 0; i < run->o.depth && w->outstanding < run->o.depth; i++) {
			if (w->ios[i].busy)
				continue;
			if (submit_one(w, &w->ios[i], 0) <= 0)
				break;
		}
	}
	n = nvmfd_host_qp_poll(w->qp, 0);
	if (n < 0) {
		worker_fail(w, PERF_EXIT_CONN, "queue %u: %s", w->idx + 1,
			    nvmfd_host_qp_errmsg(w->qp));
		return n;
	}
	if (n > 0)
		return 1;
	nvmfd_host_qp_get_stats(w->qp, &hs);
	n = hs.empty_polls == w->empty_seen;
	w->empty_seen = hs.empty_polls;
	return n;
}

/* --threads: register what the queue waits for (EPOLLOUT only while its
 * sends wait for socket space); a queue with input buffered is polled
 * again without a wait. Return: true if it is. */
static bool group_rearm(struct qgroup *gr, struct worker *w, uint32_t i)
{
	int want = nvmfd_host_qp_want_events(w->qp);
	struct epoll_event ev = { .data.u32 = i };

	if (!want) {
		w->grp_ready = true;
		return true;
	}
	if (want != w->grp_events) {
		ev.events = EPOLLIN | (want & POLLOUT ? EPOLLOUT : 0);
		if (epoll_ctl(gr->epfd, EPOLL_CTL_MOD, nvmfd_host_qp_fd(w->qp), &ev) == 0)
			w->grp_events = want;
	}
	return false;
}

static bool group_stopped(const struct qgroup *gr, uint64_t now)
{
	if (now >= gr->ws[0]->run->end_ns)
		return true;
	for (uint32_t i = 0; i < gr->nw; i++)
		if (__atomic_load_n(&gr->ws[i]->run->stop, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* --threads: how long to block at most (ns): wait_ms()'s bound, the next
 * sweep, and with --rate the next arrival a queue has a free slot for. */
static uint64_t group_wait_ns(const struct qgroup *gr, uint64_t now, uint64_t sweep_ns)
{
	const struct perf_run *run = gr->ws[0]->run;
	uint64_t until = now + (uint64_t)wait_ms(run, now) * 1000000ull;

	if (sweep_ns < until)
		until = sweep_ns;
	for (uint32_t i = 0; run->o.rate && i < gr->nw; i++) {
		const struct worker *w = gr->ws[i];

		if (w->outstanding < run->o.depth && w->next_ns < w->run->end_ns &&
		    w->next_ns < until)
			until = w->next_ns;
	}
	return until > now ? until - now : 0;
}

static int group_epoll_wait(struct qgroup *gr, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	int n = epoll_pwait2(gr->epfd, gr->evs, (int)gr->nw, &ts, NULL);

	if (n < 0 && errno == ENOSYS) /* kernel before 5.11: ms, rounded up */
		n = epoll_wait(gr->epfd, gr->evs, (int)gr->nw, (int)((ns + 999999) / 1000000));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++)
		gr->ws[gr->evs[i].data.u32]->grp_ready = true;
	return n;
}

/*
 * --threads: the queue thread of a group. Each pass polls the queues
 * whose sockets were ready (and those with input buffered), and every
 * queue when a sweep is due (GROUP_SWEEP_NS: command timeouts), a
 * re-authentication may be due (--reauth-interval) or with --rate (the
 * arrivals); then it waits in epoll as long as the earliest of those and
 * the end of the run allow (not at all with --busy-poll, or while
 * --idle-poll-us says to keep polling).
 */
static void *group_main(void *arg)
{
	struct qgroup *gr = arg;
	struct worker *w0 = gr->ws[0];
	struct perf_run *run = w0->run;
	struct nvmfd_idle_poll idle;
	uint64_t sweep_ns = 0, loops = 0, waits = 0, drain_deadline;
	bool measuring = false;
	int tid = (int)gettid(), ret;

	for (uint32_t i = 0; i < gr->nw; i++)
		__atomic_store_n(&gr->ws[i]->tid, tid, __ATOMIC_RELEASE);
	ret = worker_set_affinity(w0);
	if (ret < 0) {
		worker_fail(w0, PERF_EXIT_USAGE, "queue %u: cannot set the CPU affinity: %s",
			    w0->idx + 1, strerror(-ret));
		return NULL;
	}
	nvmfd_idle_poll_init(&idle, run->o.idle_poll_us);
	for (uint32_t i = 0; i < gr->nw; i++) {
		struct worker *w = gr->ws[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		worker_start_times(w);
		if (epoll_ctl(gr->epfd, EPOLL_CTL_ADD, nvmfd_host_qp_fd(w->qp), &ev) < 0) {
			worker_fail(w, PERF_EXIT_CONN, "queue %u: epoll_ctl: %s", w->idx + 1,
				    strerror(errno));
			return NULL;
		}
		w->grp_events = POLLIN;
		w->grp_ready = true;
	}
	for (;;) {
		uint64_t now = now_ns();
		bool progressed = false, again = false, full;

		if (group_stopped(gr, now))
			break;
		if (!measuring && now >= run->warmup_end_ns) {
			measuring = true;
			for (uint32_t i = 0; i < gr->nw; i++) {
				gr->ws[i]->measuring = true;
				gr->ws[i]->t0_ns = now;
			}
		}
		loops++;
		full = run->o.rate || run->o.reauth_ms || now >= sweep_ns;
		if (now >= sweep_ns)
			sweep_ns = now + GROUP_SWEEP_NS;
		for (uint32_t i = 0; i < gr->nw; i++) {
			struct worker *w = gr->ws[i];
			int n;

			if (w->exit_code || (!full && !w->grp_ready))
				continue;
			w->grp_ready = false;
			n = worker_pass(w, now);
			if (n < 0)
				continue; /* the run stops */
			progressed |= n > 0;
			again |= group_rearm(gr, w, i);
		}
		if (run->o.busy_poll || again || nvmfd_idle_poll_update(&idle, progressed, now_ns())) {
			ret = group_epoll_wait(gr, 0);
		} else {
			waits++;
			ret = group_epoll_wait(gr, group_wait_ns(gr, now_ns(), sweep_ns));
			if (w0->repatriate)
				worker_repatriate(w0);
		}
		if (ret < 0) {
			worker_fail(w0, PERF_EXIT_CONN, "epoll_wait: %s", strerror(-ret));
			break;
		}
	}
	for (uint32_t i = 0; i < gr->nw; i++) {
		struct worker *w = gr->ws[i];

		w->t1_ns = now_ns();
		w->last_cpu = sched_getcpu();
		w->loops = loops;
		w->waits = waits;
	}
	/* Drain in-flight I/O of every queue, bounded by the I/O timeout. */
	drain_deadline = now_ns() + (uint64_t)run->o.timeout_ms * 1000000ull;
	for (;;) {
		bool left = false;

		for (uint32_t i = 0; i < gr->nw; i++) {
			struct worker *w = gr->ws[i];

			if (!w->outstanding)
				continue;
			if (nvmfd_host_qp_poll(w->qp, 0) < 0)
				continue; /* failed: its commands completed */
			left |= w->outstanding != 0;
		}
		if (!left || now_ns() >= drain_deadline || group_epoll_wait(gr, 10000000ull) < 0)
			break;
	}
	return NULL;
}

static int worker_init(struct perf_run *run, struct worker *w, uint32_t idx)
{
	uint64_t nslots_total = run->ns->nsze / run->nlb;
	uint64_t per = nslots_total / run->o.queues;
	size_t io = run->o.io_size;

	w->run = run;
	w->idx = idx;
	w->qp = nvmfd_host_ctrl_qp(run->ctrl, idx);
	w->rng = 0x9e3779b97f4a7c15ull * (idx + 1) ^ (uint64_t)now_ns();
	if (!w->rng)
		w->rng = 1;
	if (per == 0)
		return -ENOSPC;
	if (run->o.verify && per > VERIFY_MAX_SLOTS_PER_QUEUE)
		per = VERIFY_MAX_SLOTS_PER_QUEUE;
	w->nslots = per;
	w->region_lba = (uint64_t)idx * (nslots_total / run->o.queues) * run->nlb;
	w->hist = nvmfd__hist_create();
	w->ios = calloc(run->o.depth, sizeof(*w->ios));
	if (posix_memalign((void **)&w->bufs, 4096, io * run->o.depth))
		w->bufs = NULL;
	if (!w->hist || !w->ios || !w->bufs)
		return -ENOMEM;
	for (size_t i = 0; i < io * run->o.depth; i++)
		w->bufs[i] = (uint8_t)(i * 7 + idx);
	for (uint32_t i = 0; i < run->o.depth; i++) {
		w->ios[i].w = w;
		w->ios[i].buf = w->bufs + i * io;
	}
	if (run->vstate) {
		uint64_t first = w->region_lba / run->nlb;

		w->gen = perf_vstate_acked(run->vstate, first);
		w->pend = perf_vstate_pending(run->vstate, first);
	}
	if (run->o.verify) {
		if (!w->gen)
			w->gen = calloc(per, sizeof(*w->gen));
		w->inflight = calloc(per, 1);
		if (!w->gen || !w->inflight)
			return -ENOMEM;
	}
	return 0;
}

static void worker_fini(struct worker *w)
{
	nvmfd__hist_destroy(w->hist);
	free(w->ios);
	free(w->bufs);
	if (!w->pend) /* else it is the state file's */
		free(w->gen);
	free(w->inflight);
}

static double tv_sec(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

struct stats {
	double secs; /* measured window of the rates */
	double cpu_secs; /* window of @usr/@sys (0: @secs) */
	uint64_t ios;
	uint64_t bytes;
	uint64_t reads;
	uint64_t writes;
	double usr;
	double sys;
	long nvcsw;
	long nivcsw;
	uint64_t verified_blocks;
	uint64_t unverified_reads;
	uint64_t errors;
	const char *error; /* the first error, NULL if none */
	uint64_t queued; /* --rate */
	uint64_t max_lag_ns;
	const struct nvmfd_hist *hist;
};

static double cpu_pct(const struct stats *s, double t)
{
	double w = s->cpu_secs > 0 ? s->cpu_secs : s->secs;

	return w > 0 ? 100.0 * t / w : 0;
}

/*
 * Add the counters of @s to @dst (CPU time and switches too; errors, the
 * first error message; worst lag). The queues run side by side: @dst's
 * rate window is the longest of theirs, so a run that one error stopped
 * early gives the same IOPS in a queue and in the total (not over the main
 * thread's wake-up, up to a second later).
 */
static void stats_add(struct stats *dst, const struct stats *s)
{
	if (s->secs > dst->secs)
		dst->secs = s->secs;
	dst->ios += s->ios;
	dst->bytes += s->bytes;
	dst->reads += s->reads;
	dst->writes += s->writes;
	dst->usr += s->usr;
	dst->sys += s->sys;
	dst->nvcsw += s->nvcsw;
	dst->nivcsw += s->nivcsw;
	dst->verified_blocks += s->verified_blocks;
	dst->unverified_reads += s->unverified_reads;
	dst->errors += s->errors;
	if (s->error && !dst->error)
		dst->error = s->error;
	dst->queued += s->queued;
	if (s->max_lag_ns > dst->max_lag_ns)
		dst->max_lag_ns = s->max_lag_ns;
}

static const double pcts[] = { 50, 90, 99, 99.9, 99.99 };
static const char *const pct_names[] = { "p50", "p90", "p99", "p99.9", "p99.99" };

static void print_stats(const char *name, const struct stats *s)
{
	double iops = s->secs > 0 ? (double)s->ios / s->secs : 0;
	double mib = s->secs > 0 ? (double)s->bytes / s->secs / 1048576.0 : 0;

	printf("%-8s %12.1f %10.2f %9.1f %9.1f %9.1f %9.1f", name, iops, mib,
	       (double)nvmfd__hist_min(s->hist) / 1e3, nvmfd__hist_mean(s->hist) / 1e3,
	       (double)nvmfd__hist_max(s->hist) / 1e3, nvmfd__hist_stddev(s->hist) / 1e3);
	for (size_t i = 0; i < 5; i++)
		printf(" %9.1f", (double)nvmfd__hist_percentile(s->hist, pcts[i]) / 1e3);
	printf(" %6.1f %6.1f %8ld %8ld %8" PRIu64 "\n", cpu_pct(s, s->usr), cpu_pct(s, s->sys),
	       s->nvcsw, s->nivcsw, s->errors);
}

static struct json_object *json_stats(const struct stats *s)
{
	struct json_object *o = json_object_new_object(), *lat = json_object_new_object();

	json_object_object_add(o, "seconds", json_object_new_double(s->secs));
	json_object_object_add(o, "ios", json_object_new_int64((int64_t)s->ios));
	json_object_object_add(o, "reads", json_object_new_int64((int64_t)s->reads));
	json_object_object_add(o, "writes", json_object_new_int64((int64_t)s->writes));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)s->bytes));
	json_object_object_add(o, "iops",
			       json_object_new_double(s->secs > 0 ? (double)s->ios / s->secs : 0));
	json_object_object_add(o, "mib_per_s",
			       json_object_new_double(s->secs > 0 ? (double)s->bytes / s->secs /
									    1048576.0 :
								    0));
	json_object_object_add(lat, "min", json_object_new_double((double)nvmfd__hist_min(s->hist) / 1e3));
	json_object_object_add(lat, "avg", json_object_new_double(nvmfd__hist_mean(s->hist) / 1e3));
	json_object_object_add(lat, "max", json_object_new_double((double)nvmfd__hist_max(s->hist) / 1e3));
	json_object_object_add(lat, "stdev", json_object_new_double(nvmfd__hist_stddev(s->hist) / 1e3));
	for (size_t i = 0; i < 5; i++)
		json_object_object_add(lat, pct_names[i],
				       json_object_new_double(
					       (double)nvmfd__hist_percentile(s->hist, pcts[i]) / 1e3));
	json_object_object_add(o, "latency_us", lat);
	json_object_object_add(o, "cpu_user_pct", json_object_new_double(cpu_pct(s, s->usr)));
	json_object_object_add(o, "cpu_sys_pct", json_object_new_double(cpu_pct(s, s->sys)));
	/* I/Os completed with an error (whole run) and the first one */
	json_object_object_add(o, "errors", json_object_new_int64((int64_t)s->errors));
	json_object_object_add(o, "error", s->error ? json_object_new_string(s->error) : NULL);
	json_object_object_add(o, "voluntary_ctxsw", json_object_new_int64(s->nvcsw));
	json_object_object_add(o, "involuntary_ctxsw", json_object_new_int64(s->nivcsw));
	/* --verify: blocks checked and reads that found nothing to check
	 * against (whole run, warmup included); 0 without --verify */
	json_object_object_add(o, "verified_blocks",
			       json_object_new_int64((int64_t)s->verified_blocks));
	json_object_object_add(o, "unverified_reads",
			       json_object_new_int64((int64_t)s->unverified_reads));
	/* --rate: arrivals that found all -q slots busy, the worst send lag */
	json_object_object_add(o, "queued_arrivals", json_object_new_int64((int64_t)s->queued));
	json_object_object_add(o, "max_send_lag_us", json_object_new_double((double)s->max_lag_ns / 1e3));
	return o;
}

/* Whole-run transport counters of a queue (warmup included). */
static struct json_object *json_transport(const struct worker *w)
{
	struct json_object *h = json_object_new_object();
	struct nvmfd_host_qp_stats hs;

	/* Whole-run transport counters (warmup included). */
	nvmfd_host_qp_get_stats(w->qp, &hs);
	json_object_object_add(h, "submitted", json_object_new_int64((int64_t)hs.submitted));
	json_object_object_add(h, "tx_pdus", json_object_new_int64((int64_t)hs.tx_pdus));
	json_object_object_add(h, "rx_pdus", json_object_new_int64((int64_t)hs.rx_pdus));
	json_object_object_add(h, "h2c_pdus", json_object_new_int64((int64_t)hs.h2c_pdus));
	json_object_object_add(h, "c2h_pdus", json_object_new_int64((int64_t)hs.c2h_pdus));
	json_object_object_add(h, "r2ts", json_object_new_int64((int64_t)hs.r2ts));
	json_object_object_add(h, "sendmsgs", json_object_new_int64((int64_t)hs.sendmsgs));
	json_object_object_add(h, "send_eagain",
			       json_object_new_int64((int64_t)hs.send_eagain));
	json_object_object_add(h, "recvs", json_object_new_int64((int64_t)hs.recvs));
	json_object_object_add(h, "polls", json_object_new_int64((int64_t)hs.polls));
	json_object_object_add(h, "empty_polls",
			       json_object_new_int64((int64_t)hs.empty_polls));
	json_object_object_add(h, "completed", json_object_new_int64((int64_t)hs.completed));
	json_object_object_add(h, "tx_bytes", json_object_new_int64((int64_t)hs.tx_bytes));
	json_object_object_add(h, "rx_bytes", json_object_new_int64((int64_t)hs.rx_bytes));
	json_object_object_add(h, "rx_budget_stops",
			       json_object_new_int64((int64_t)hs.rx_budget_stops));
	json_object_object_add(h, "tx_budget_stops",
			       json_object_new_int64((int64_t)hs.tx_budget_stops));
	return h;
}

/* Execution counters of one queue thread (measured window for schedstat). */
static struct json_object *json_exec(const struct worker *w)
{
	struct json_object *e = json_object_new_object();
	char cpus[256];

	json_object_object_add(e, "io_cpu", json_object_new_int(w->io_cpu));
	nvmfd__cpulist_format(&w->unit, cpus, sizeof(cpus));
	json_object_object_add(e, "unit_cpus", json_object_new_string(cpus));
	nvmfd__cpulist_format(&w->allowed, cpus, sizeof(cpus));
	json_object_object_add(e, "allowed_cpus", json_object_new_string(cpus));
	json_object_object_add(e, "last_cpu", json_object_new_int(w->last_cpu));
	json_object_object_add(e, "tid", json_object_new_int(w->tid));
	json_object_object_add(e, "cpu_time_ns",
			       json_object_new_int64((int64_t)(w->ss1.cpu_ns - w->ss0.cpu_ns)));
	json_object_object_add(e, "run_delay_ns",
			       json_object_new_int64((int64_t)(w->ss1.run_delay_ns -
							       w->ss0.run_delay_ns)));
	json_object_object_add(e, "timeslices",
			       json_object_new_int64((int64_t)(w->ss1.timeslices -
							       w->ss0.timeslices)));
	json_object_object_add(e, "voluntary_ctxsw",
			       json_object_new_int64(w->ru1.ru_nvcsw - w->ru0.ru_nvcsw));
	json_object_object_add(e, "involuntary_ctxsw",
			       json_object_new_int64(w->ru1.ru_nivcsw - w->ru0.ru_nivcsw));
	json_object_object_add(e, "loops", json_object_new_int64((int64_t)w->loops));
	json_object_object_add(e, "blocking_waits", json_object_new_int64((int64_t)w->waits));
	/* passes after which the idle-poll rule chose to poll again */
	json_object_object_add(e, "repolls", json_object_new_int64((int64_t)w->idle.polls));
	json_object_object_add(e, "repatriations",
			       json_object_new_int64((int64_t)w->repatriations));
	if (w->run->o.exec == PERF_EXEC_AUTO) {
		/* the controller's counters (as nvmfd's stats), and the host's */
		struct json_object *a = nvmfd_auto_stats_obj(&w->aq.ctl);

		if (a) {
			char home[256];

			nvmfd__cpulist_format(&w->aq.home, home, sizeof(home));
			json_object_object_add(a, "cpu", json_object_new_int(perf_auto_cpu_now(&w->aq)));
			json_object_object_add(a, "home_cpus", json_object_new_string(home));
			json_object_object_add(a, "max_wait_ms",
					       json_object_new_uint64(w->aq.max_pending_ns / 1000000));
			json_object_object_add(a, "move_errors",
					       json_object_new_uint64(w->aq.move_errors));
			json_object_object_add(a, "kicks", json_object_new_uint64(w->aq.kicks));
			json_object_object_add(e, "auto", a);
		}
	}
	return e;
}

/* --reauth-interval: transactions done on the admin and the I/O queues. */
static void reauth_counts(const struct perf_run *run, uint64_t *adm, uint64_t *io)
{
	for (uint32_t i = 0; i < run->o.queues; i++) {
		*adm += run->workers[i].reauths_admin;
		*io += run->workers[i].reauths_io;
	}
}

/*
 * The DH-HMAC-CHAP line of one controller, if its queues authenticated
 * (what the controller chose); @ctrl (1-based) names it if not 0.
 */
static void print_dhchap(const struct perf_run *run, uint32_t ctrl)
{
	const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(run->ctrl);
	char name[32] = "";

	if (!ci->dhchap_queues)
		return;
	if (ctrl)
		snprintf(name, sizeof(name), "ctrl%u ", ctrl);
	printf("DH-HMAC-CHAP: %s%s, %s, %s, %u queues authenticated\n", name,
	       ci->dhchap_bidirectional ? "bidirectional" : "unidirectional",
	       nvmfd_auth_hash_name(ci->dhchap_hash), nvmfd_auth_dhgroup_name(ci->dhchap_dhgroup),
	       ci->dhchap_queues);
	if (run->o.reauth_ms) {
		uint64_t adm = 0, io = 0;

		reauth_counts(run, &adm, &io);
		printf("DH-HMAC-CHAP: %sre-authenticated every %u ms: admin queue %" PRIu64
		       " times, I/O queues %" PRIu64 " times\n", name, run->o.reauth_ms, adm, io);
	}
}

/* The TLS line of one controller (--tls): cipher suite and record layer. */
static void print_tls(const struct perf_run *run, uint32_t ctrl)
{
	const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(run->ctrl);
	char name[32] = "";

	if (!run->o.tls)
		return;
	if (ctrl)
		snprintf(name, sizeof(name), "ctrl%u ", ctrl);
	printf("TLS: %sTLS 1.3 %s, identity v%s, records %s\n", name, ci->tls_cipher,
	       run->o.tls_identity == NVMFD_HOST_TLS_ID_V1 ? "1" :
	       run->o.tls_identity == NVMFD_HOST_TLS_ID_V0 ? "0" : "0 (SPDK keying)",
	       ci->tls_ktls ? "in the kernel (kTLS)" : "in user space (OpenSSL)");
}

/* What one controller chose for DH-HMAC-CHAP, into the JSON object @o. */
static void json_dhchap(struct json_object *o, const struct perf_run *run)
{
	const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(run->ctrl);

	/* the kernel target asks per host */
	json_object_object_add(o, "dhchap_queues", json_object_new_int64(ci->dhchap_queues));
	if (ci->dhchap_queues) {
		json_object_object_add(o, "dhchap_hash",
				       json_object_new_string(nvmfd_auth_hash_name(ci->dhchap_hash)));
		json_object_object_add(o, "dhchap_dhgroup",
				       json_object_new_string(
					       nvmfd_auth_dhgroup_name(ci->dhchap_dhgroup)));
	}
}

/* Per-queue execution lines; @ctrl (1-based) prefixes the names if not 0. */
static void print_exec(const struct perf_run *run, uint32_t ctrl)
{
	if (ctrl <= 1)
		printf("%-8s %6s %-10s %-10s %8s %10s %12s %12s %10s %10s %10s %10s %10s\n", "queue",
	       "io_cpu", "unit", "allowed", "last_cpu", "rq_delay_ms", "polls", "empty_polls",
	       "waits", "rx_pdus", "rx_MiB", "tx_pdus", "tx_MiB");
	for (uint32_t i = 0; i < run->o.queues; i++) {
		const struct worker *w = &run->workers[i];
		struct nvmfd_host_qp_stats hs;
		char unit[64], allowed[64], name[32];

		nvmfd_host_qp_get_stats(w->qp, &hs);
		nvmfd__cpulist_format(&w->unit, unit, sizeof(unit));
		nvmfd__cpulist_format(&w->allowed, allowed, sizeof(allowed));
		if (ctrl)
			snprintf(name, sizeof(name), "c%uq%u", ctrl, i + 1);
		else
			snprintf(name, sizeof(name), "q%u", i + 1);
		printf("%-8s %6d %-10s %-10s %8d %10.2f %12" PRIu64 " %12" PRIu64 " %10" PRIu64
		       " %10" PRIu64 " %10.1f %10" PRIu64 " %10.1f\n",
		       name, w->io_cpu, unit, allowed, w->last_cpu,
		       (double)(w->ss1.run_delay_ns - w->ss0.run_delay_ns) / 1e6, hs.polls,
		       hs.empty_polls, w->waits, hs.rx_pdus, (double)hs.rx_bytes / 1048576.0,
		       hs.tx_pdus, (double)hs.tx_bytes / 1048576.0);
	}
	if (run->o.exec != PERF_EXEC_AUTO)
		return;
	for (uint32_t i = 0; i < run->o.queues; i++) {
		const struct perf_auto_queue *q = &run->workers[i].aq;
		char name[32];

		if (ctrl)
			snprintf(name, sizeof(name), "c%uq%u", ctrl, i + 1);
		else
			snprintf(name, sizeof(name), "q%u", i + 1);
		printf("%-8s auto: mode %s, poll %u us, moves %" PRIu64 ", poll changes %" PRIu64
		       ", starvations %" PRIu64 ", last reason %s; ms bound %" PRIu64 " moved %" PRIu64
		       " unbound %" PRIu64 " polling %" PRIu64 "; longest wait %" PRIu64 " ms%s\n",
		       name, nvmfd_auto_place_name(q->ctl.place), q->ctl.poll_us, q->ctl.moves,
		       q->ctl.poll_changes, q->ctl.starvations,
		       nvmfd_auto_reason_name(q->ctl.last_reason),
		       q->ctl.time_ns[NVMFD_AUTO_BOUND] / 1000000,
		       q->ctl.time_ns[NVMFD_AUTO_MOVED] / 1000000,
		       q->ctl.time_ns[NVMFD_AUTO_UNBOUND] / 1000000, q->ctl.poll_time_ns / 1000000,
		       q->max_pending_ns / 1000000, q->move_errors ? ", affinity errors" : "");
	}
}

/*
 * The report of @n controllers (one perf_run each): per queue, per
 * controller when there are several (its queues' histograms merged, CPU
 * time of its queue threads) and in total (every queue's histogram
 * merged: percentiles of all I/Os, not averages of percentiles).
 */
static void report(struct perf_run *runs, uint32_t n, const struct rusage *ru0,
		   const struct rusage *ru1, double total_secs)
{
	struct nvmfd_hist *all = nvmfd__hist_create(), *call = nvmfd__hist_create();
	struct json_object *root = NULL, *qarr = NULL, *carr = NULL;
	struct perf_run *run = &runs[0];
	struct stats tot;
	char cpus[256];

	if (!all || !call) {
		nvmfd__hist_destroy(all);
		nvmfd__hist_destroy(call);
		return;
	}
	memset(&tot, 0, sizeof(tot));
	if (run->o.json) {
		const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(run->ctrl);
		struct json_object *cfg = json_object_new_object();

		root = json_object_new_object();
		json_object_object_add(cfg, "traddr", json_object_new_string(run->o.trid.traddr));
		json_object_object_add(cfg, "trsvcid", json_object_new_string(run->o.trid.trsvcid));
		json_object_object_add(cfg, "subnqn", json_object_new_string(run->o.trid.subnqn));
		json_object_object_add(cfg, "nsid", json_object_new_int64(run->ns->nsid));
		json_object_object_add(cfg, "lba_size", json_object_new_int64(run->ns->lba_size));
		json_object_object_add(cfg, "pattern",
				       json_object_new_string(perf_pattern_name(run->o.pattern)));
		json_object_object_add(cfg, "read_pct", json_object_new_int64(run->o.read_pct));
		json_object_object_add(cfg, "io_size", json_object_new_int64(run->o.io_size));
		json_object_object_add(cfg, "depth", json_object_new_int64(run->o.depth));
		json_object_object_add(cfg, "queues", json_object_new_int64(run->o.queues));
		json_object_object_add(cfg, "seconds", json_object_new_int64(run->o.seconds));
		json_object_object_add(cfg, "warmup", json_object_new_int64(run->o.warmup));
		json_object_object_add(cfg, "hdgst", json_object_new_boolean(run->o.hdgst));
		json_object_object_add(cfg, "ddgst", json_object_new_boolean(run->o.ddgst));
		json_object_object_add(cfg, "verify", json_object_new_boolean(run->o.verify));
		if (run->vstate) {
			struct json_object *v = json_object_new_object();
			const struct perf_vstate_stats *vs = &run->vstats;

			json_object_object_add(v, "file", json_object_new_string(run->o.verify_state));
			json_object_object_add(v, "run", json_object_new_int64(
							 (int64_t)perf_vstate_runs(run->vstate)));
			json_object_object_add(v, "earlier_slots", json_object_new_int64((int64_t)vs->slots));
			json_object_object_add(v, "earlier_blocks",
					       json_object_new_int64((int64_t)vs->blocks));
			json_object_object_add(v, "inflight_landed",
					       json_object_new_int64((int64_t)vs->inflight_new));
			json_object_object_add(v, "inflight_not",
					       json_object_new_int64((int64_t)vs->inflight_old));
			json_object_object_add(v, "inflight_part",
					       json_object_new_int64((int64_t)vs->inflight_torn));
			json_object_object_add(cfg, "verify_state", v);
		}
		json_object_object_add(cfg, "dhchap",
				       json_object_new_string(run->o.dhchap_ctrl_secret[0] ?
								      "bidirectional" :
							      run->o.dhchap_secret[0] ?
								      "unidirectional" :
								      "none"));
		/* what the (first, with several -r) controller chose; each
		 * controller's in "controllers" */
		json_dhchap(cfg, run);
		if (run->o.reauth_ms) {
			uint64_t adm = 0, io = 0;

			for (uint32_t c = 0; c < n; c++)
				reauth_counts(&runs[c], &adm, &io);
			json_object_object_add(cfg, "reauth_interval_ms",
					       json_object_new_int64(run->o.reauth_ms));
			json_object_object_add(cfg, "reauth_admin", json_object_new_int64((int64_t)adm));
			json_object_object_add(cfg, "reauth_io", json_object_new_int64((int64_t)io));
		}
		json_object_object_add(cfg, "tls", json_object_new_boolean(run->o.tls));
		if (run->o.tls)
			json_object_object_add(cfg, "tls_cipher", json_object_new_string(
						 nvmfd_host_ctrl_get_info(run->ctrl)->tls_cipher));
		json_object_object_add(cfg, "disable_sqflow",
				       json_object_new_boolean(run->o.disable_sqflow));
		json_object_object_add(cfg, "maxh2cdata", json_object_new_int64(ci->maxh2cdata));
		json_object_object_add(cfg, "in_capsule_max",
				       json_object_new_int64(ci->in_capsule_max));
		json_object_object_add(cfg, "exec", json_object_new_string(perf_exec_name(run->o.exec)));
		if (run->o.exec == PERF_EXEC_AUTO) {
			struct json_object *ak = json_object_new_object();
			const struct nvmfd_auto_knobs *k = &run->o.auto_knobs;

			json_object_object_add(ak, "starve_ms",
					       json_object_new_uint64(k->starve_ns / 1000000));
			json_object_object_add(ak, "bound", json_object_new_boolean(k->bound));
			json_object_object_add(ak, "no_poll", json_object_new_boolean(k->no_poll));
			json_object_object_add(ak, "freeze", json_object_new_boolean(k->freeze));
			json_object_object_add(ak, "home", json_object_new_string(
								   run->o.auto_home_bound ? "bound" :
											    "unbound"));
			json_object_object_add(ak, "tick_ms",
					       json_object_new_uint64(PERF_AUTO_TICK_NS / 1000000));
			json_object_object_add(cfg, "auto", ak);
		}
		json_object_object_add(cfg, "affinity_scope",
				       json_object_new_string(perf_scope_name(run->o.scope)));
		json_object_object_add(cfg, "affinity_strict", json_object_new_boolean(run->o.strict));
		json_object_object_add(cfg, "io_cpu",
				       json_object_new_string(perf_io_cpu_name(run->o.io_cpu)));
		nvmfd__cpulist_format(&run->rt_cpus, cpus, sizeof(cpus));
		json_object_object_add(cfg, "cpus", json_object_new_string(cpus));
		json_object_object_add(cfg, "idle_poll_us", json_object_new_int64(run->o.idle_poll_us));
		json_object_object_add(cfg, "busy_poll", json_object_new_boolean(run->o.busy_poll));
		/* --threads: the queue threads (0: one per queue) */
		json_object_object_add(cfg, "threads", json_object_new_int64(run->ngroups));
		json_object_object_add(cfg, "rate_iops", json_object_new_int64((int64_t)run->o.rate));
		json_object_object_add(cfg, "rx_budget", json_object_new_int64(run->o.rx_budget));
		json_object_object_add(cfg, "tx_budget", json_object_new_int64(run->o.tx_budget));
		json_object_object_add(cfg, "controllers", json_object_new_int64(n));
		json_object_object_add(root, "config", cfg);
		qarr = json_object_new_array();
		carr = json_object_new_array();
	} else {
		printf("%-8s %12s %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %6s %6s %8s %8s %8s\n",
		       "queue", "IOPS", "MiB/s", "min_us", "avg_us", "max_us", "stdev_us", "p50", "p90",
		       "p99", "p99.9", "p99.99", "usr%", "sys%", "vcsw", "ivcsw", "errors");
	}
	for (uint32_t c = 0; c < n; c++) {
		struct stats ctot;

		run = &runs[c];
		memset(&ctot, 0, sizeof(ctot));
		nvmfd__hist_init(call);
		for (uint32_t i = 0; i < run->o.queues; i++) {
			struct worker *w = &run->workers[i];
			struct stats s;
			char name[32];

			memset(&s, 0, sizeof(s));
			s.secs = w->measuring ? (double)(w->t1_ns - w->t0_ns) / 1e9 : 0;
			s.ios = w->ios_done;
			s.bytes = w->bytes_done;
			s.reads = w->reads;
			s.writes = w->writes;
			s.usr = w->measuring ? tv_sec(w->ru1.ru_utime) - tv_sec(w->ru0.ru_utime) : 0;
			s.sys = w->measuring ? tv_sec(w->ru1.ru_stime) - tv_sec(w->ru0.ru_stime) : 0;
			s.nvcsw = w->ru1.ru_nvcsw - w->ru0.ru_nvcsw;
			s.nivcsw = w->ru1.ru_nivcsw - w->ru0.ru_nivcsw;
			s.verified_blocks = w->verified_blocks;
			s.unverified_reads = w->unverified_reads;
			s.errors = w->errors;
			s.error = w->exit_code ? w->errmsg : NULL;
			s.queued = w->queued;
			s.max_lag_ns = w->max_lag_ns;
			s.hist = w->hist;
			nvmfd__hist_merge(all, w->hist);
			nvmfd__hist_merge(call, w->hist);
			stats_add(&ctot, &s);
			stats_add(&tot, &s); /* CPU and switches: replaced by the process's */
			if (n > 1)
				snprintf(name, sizeof(name), "c%uq%u", c + 1, i + 1);
			else
				snprintf(name, sizeof(name), "q%u", i + 1);
			if (root) {
				struct json_object *q = json_stats(&s);

				json_object_object_add(q, "qid", json_object_new_int64(i + 1));
				json_object_object_add(q, "ctrl", json_object_new_int64(c + 1));
				json_object_object_add(q, "transport", json_transport(w));
				json_object_object_add(q, "exec", json_exec(w));
				json_object_array_add(qarr, q);
			} else {
				print_stats(name, &s);
			}
		}
		/* the controller: its queues together (CPU: its queue threads) */
		if (ctot.secs <= 0)
			ctot.secs = total_secs;
		ctot.cpu_secs = total_secs;
		ctot.hist = call;
		if (root) {
			struct json_object *co = json_object_new_object();

			json_object_object_add(co, "ctrl", json_object_new_int64(c + 1));
			json_object_object_add(co, "traddr", json_object_new_string(run->o.trid.traddr));
			json_object_object_add(co, "trsvcid", json_object_new_string(run->o.trid.trsvcid));
			json_object_object_add(co, "subnqn", json_object_new_string(run->o.trid.subnqn));
			json_object_object_add(co, "queues", json_object_new_int64(run->o.queues));
			json_dhchap(co, run);
			json_object_object_add(co, "total", json_stats(&ctot));
			json_object_array_add(carr, co);
		} else if (n > 1) {
			char name[32];

			snprintf(name, sizeof(name), "ctrl%u", c + 1);
			print_stats(name, &ctot);
		}
	}
	run = &runs[0];
	if (tot.secs <= 0)
		tot.secs = total_secs;
	tot.cpu_secs = total_secs;
	tot.usr = tv_sec(ru1->ru_utime) - tv_sec(ru0->ru_utime);
	tot.sys = tv_sec(ru1->ru_stime) - tv_sec(ru0->ru_stime);
	tot.nvcsw = ru1->ru_nvcsw - ru0->ru_nvcsw;
	tot.nivcsw = ru1->ru_nivcsw - ru0->ru_nivcsw;
	tot.hist = all;
	if (root) {
		json_object_object_add(root, "queues", qarr);
		json_object_object_add(root, "controllers", carr);
		json_object_object_add(root, "total", json_stats(&tot));
		json_object_object_add(root, "vm_hwm_kib",
				       json_object_new_int64((int64_t)run->vm_hwm_kib));
		json_object_object_add(root, "interrupted", json_object_new_boolean(run->signo != 0));
		if (run->o.exec == PERF_EXEC_AUTO)
			/* late ticks after which the monitor left its CPU */
			json_object_object_add(root, "auto_monitor_self_kicks",
					       json_object_new_uint64(run->auto_self_kicks));
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	} else {
		print_stats("total", &tot);
		printf("latencies in microseconds; CPU %% of one core: per queue its thread, total "
		       "the whole process\n");
		if (tot.errors)
			printf("errors: %" PRIu64 " I/Os failed; first: %s\n", tot.errors,
			       tot.error ? tot.error : "?");
		nvmfd__cpulist_format(&run->rt_cpus, cpus, sizeof(cpus));
		printf("exec %s, io-cpu %s, cpus %s", perf_exec_name(run->o.exec),
		       perf_io_cpu_name(run->o.io_cpu), cpus);
		if (run->o.exec == PERF_EXEC_UNBOUND)
			printf(", scope %s%s", perf_scope_name(run->o.scope),
			       run->o.strict ? " strict" : "");
		printf(", %s", run->o.busy_poll ? "busy poll" : "");
		if (!run->o.busy_poll)
			printf("idle poll %u us", run->o.idle_poll_us);
		if (run->ngroups)
			printf("; %u queue threads (--threads)", run->ngroups);
		printf("; peak RSS (VmHWM) %" PRIu64 " KiB\n", run->vm_hwm_kib);
		if (run->o.rate)
			printf("open loop at %" PRIu64 " IOPS: %" PRIu64 " arrivals found all -q slots "
			       "busy, worst send lag %.1f us (latency counts from the intended time)\n",
			       run->o.rate, tot.queued, (double)tot.max_lag_ns / 1e3);
		if (run->o.verify)
			printf("verify: %" PRIu64 " blocks verified; %" PRIu64 " reads of blocks not "
			       "written in this run were not checked\n", tot.verified_blocks,
			       tot.unverified_reads);
		for (uint32_t c = 0; c < n; c++)
			print_dhchap(&runs[c], n > 1 ? c + 1 : 0);
		for (uint32_t c = 0; c < n; c++)
			print_tls(&runs[c], n > 1 ? c + 1 : 0);
		for (uint32_t c = 0; c < n; c++)
			print_exec(&runs[c], n > 1 ? c + 1 : 0);
	}
	nvmfd__hist_destroy(all);
	nvmfd__hist_destroy(call);
}

static const char *trtype_str(uint8_t t)
{
	switch (t) {
	case NVMFD_TRTYPE_RDMA:
		return "rdma";
	case NVMFD_TRTYPE_FC:
		return "fc";
	case NVMFD_TRTYPE_TCP:
		return "tcp";
	case NVMFD_TRTYPE_LOOP:
		return "loop";
	default:
		return "unrecognized";
	}
}

static const char *adrfam_str(uint8_t a)
{
	switch (a) {
	case NVMFD_ADRFAM_IPV4:
		return "ipv4";
	case NVMFD_ADRFAM_IPV6:
		return "ipv6";
	default:
		return "unrecognized";
	}
}

static const char *subtype_str(uint8_t s)
{
	switch (s) {
	case NVMFD_SUBTYPE_REFERRAL:
		return "discovery subsystem referral";
	case NVMFD_SUBTYPE_NVME:
		return "nvme subsystem";
	case NVMFD_SUBTYPE_CUR_DISCOVERY:
		return "current discovery subsystem";
	default:
		return "unrecognized";
	}
}

static void treq_str(uint8_t t, char *buf, size_t len)
{
	static const char *const sec[] = { "not specified", "required", "not required",
					   "reserved" };

	snprintf(buf, len, "%s%s", sec[t & 3],
		 (t & NVMFD_TREQ_DISABLE_SQFLOW) ? ", sq flow control disable supported" : "");
}

static void eflags_str(uint16_t e, char *buf, size_t len)
{
	/* TP 8013/8014 bits: 0 duplicate returned info, 1 explicit persistent
	 * connection support, 2 no CDC connectivity. */
	static const char *const names[] = { "duplicate discovery information",
					     "explicit discovery connections",
					     "no cdc connectivity" };
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < 3; i++) {
		if (e & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", names[i]);
		if (n >= len)
			return;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

static void fixed_str(char *dst, size_t dlen, const char *src, size_t slen)
{
	size_t n = strnlen(src, slen);

	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n > 0 && dst[n - 1] == ' ')
		dst[--n] = '\0';
}

static int run_discover(const struct perf_opts *o)
{
	struct nvmfd_host_ctrl_opts copts;
	struct nvmfd_host_ctrl *ctrl = NULL;
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_disc_log_entry *e = NULL;
	struct json_object *root = NULL, *arr = NULL;
	int ret, code = PERF_EXIT_OK;

	nvmfd_host_ctrl_opts_init(&copts, sizeof(copts));
	copts.hdgst = o->hdgst;
	copts.ddgst = o->ddgst;
	copts.kato_ms = 0;
	copts.nr_io_queues = 0;
	copts.timeout_ms = o->timeout_ms;
	memcpy(copts.dhchap_secret, o->dhchap_secret, sizeof(copts.dhchap_secret));
	memcpy(copts.dhchap_ctrl_secret, o->dhchap_ctrl_secret, sizeof(copts.dhchap_ctrl_secret));
	copts.tls = o->tls;
	copts.tls_identity = o->tls_identity;
	memcpy(copts.tls_psk, o->tls_psk, sizeof(copts.tls_psk));
	ret = nvmfd_host_ctrl_create(&copts, &ctrl);
	nvmfd_auth_wipe(&copts, sizeof(copts));
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: %s\n", strerror(-ret));
		return PERF_EXIT_CONN;
	}
	ret = nvmfd_host_ctrl_connect(ctrl, &o->trid);
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: connect to %s:%s failed: %s\n", o->trid.traddr,
			o->trid.trsvcid, nvmfd_host_ctrl_errmsg(ctrl));
		/* 8009 is the default here (the well-known discovery port) but
		 * nvmfd serves discovery on its I/O listeners, 4420 by default */
		if (ret == -ECONNREFUSED)
			fprintf(stderr, "nvmf-perf: no discovery controller on %s (nvmfd listens on "
				"%u by default; pass trsvcid:PORT)\n", o->trid.trsvcid,
				NVMFD_TCP_DEFAULT_PORT);
		code = PERF_EXIT_CONN;
		goto out_destroy;
	}
	ret = nvmfd_host_discover(ctrl, &hdr, &e);
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: discovery log: %s\n", nvmfd_host_ctrl_errmsg(ctrl));
		code = PERF_EXIT_CONN;
		goto out_destroy;
	}
	if (o->json) {
		root = json_object_new_object();
		json_object_object_add(root, "genctr", json_object_new_int64((int64_t)hdr.genctr));
		json_object_object_add(root, "numrec", json_object_new_int64((int64_t)hdr.numrec));
		arr = json_object_new_array();
	} else {
		printf("\nDiscovery Log Number of Records %" PRIu64 ", Generation counter %" PRIu64
		       "\n", hdr.numrec, hdr.genctr);
	}
	for (uint64_t i = 0; i < hdr.numrec; i++) {
		char treq[96], ef[128], svc[33], nqn[257], addr[257];

		treq_str(e[i].treq, treq, sizeof(treq));
		eflags_str(e[i].eflags, ef, sizeof(ef));
		fixed_str(svc, sizeof(svc), e[i].trsvcid, sizeof(e[i].trsvcid));
		fixed_str(nqn, sizeof(nqn), e[i].subnqn, sizeof(e[i].subnqn));
		fixed_str(addr, sizeof(addr), e[i].traddr, sizeof(e[i].traddr));
		if (arr) {
			struct json_object *j = json_object_new_object();

			json_object_object_add(j, "trtype", json_object_new_string(trtype_str(e[i].trtype)));
			json_object_object_add(j, "adrfam", json_object_new_string(adrfam_str(e[i].adrfam)));
			json_object_object_add(j, "subtype", json_object_new_string(subtype_str(e[i].subtype)));
			json_object_object_add(j, "treq", json_object_new_string(treq));
			json_object_object_add(j, "portid", json_object_new_int(e[i].portid));
			json_object_object_add(j, "trsvcid", json_object_new_string(svc));
			json_object_object_add(j, "subnqn", json_object_new_string(nqn));
			json_object_object_add(j, "traddr", json_object_new_string(addr));
			json_object_object_add(j, "eflags", json_object_new_string(ef));
			json_object_object_add(j, "sectype",
					       json_object_new_string(e[i].tsas[0] == 0 ? "none" :
								      e[i].tsas[0] == 1 ? "tls1.2" :
								      e[i].tsas[0] == 2 ? "tls1.3" :
								      "unrecognized"));
			json_object_array_add(arr, j);
			continue;
		}
		printf("=====Discovery Log Entry %" PRIu64 "======\n", i);
		printf("trtype:  %s\n", trtype_str(e[i].trtype));
		printf("adrfam:  %s\n", adrfam_str(e[i].adrfam));
		printf("subtype: %s\n", subtype_str(e[i].subtype));
		printf("treq:    %s\n", treq);
		printf("portid:  %u\n", e[i].portid);
		printf("trsvcid: %s\n", svc);
		printf("subnqn:  %s\n", nqn);
		printf("traddr:  %s\n", addr);
		printf("eflags:  %s\n", ef);
		printf("sectype: %s\n", e[i].tsas[0] == 0 ? "none" :
					e[i].tsas[0] == 1 ? "tls1.2" :
					e[i].tsas[0] == 2 ? "tls1.3" : "unrecognized");
	}
	if (root) {
		json_object_object_add(root, "records", arr);
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	}
	free(e);
out_destroy:
	nvmfd_host_ctrl_destroy(&ctrl);
	return code;
}

/* One progress line a second for all controllers' queues together. */
static void progress(struct perf_run *runs, uint32_t n, uint64_t *last_ios, uint64_t *last_bytes)
{
	static uint64_t last_ns;
	uint64_t ios = 0, bytes = 0, now = now_ns();
	double secs;

	if (!last_ns)
		last_ns = runs[0].start_ns;
	if (now - last_ns < 900000000ull)
		return;
	secs = (double)(now - last_ns) / 1e9;
	for (uint32_t c = 0; c < n; c++) {
		for (uint32_t i = 0; i < runs[c].o.queues; i++) {
			ios += __atomic_load_n(&runs[c].workers[i].progress_ios, __ATOMIC_RELAXED);
			bytes += __atomic_load_n(&runs[c].workers[i].progress_bytes, __ATOMIC_RELAXED);
		}
	}
	fprintf(stderr, "\r[%5.0fs%s] %12.0f IOPS %10.2f MiB/s   ",
		(double)(now - runs[0].start_ns) / 1e9,
		/* the second just reported started before the warmup ended */
		now < runs[0].warmup_end_ns + 500000000ull ? " warmup" : "",
		(double)(ios - *last_ios) / secs, (double)(bytes - *last_bytes) / 1048576.0 / secs);
	*last_ios = ios;
	*last_bytes = bytes;
	last_ns = now;
}


/*
 * --exec auto: the monitor thread. Every PERF_AUTO_TICK_NS it reads the
 * CPUs' load (/proc/stat, /proc/schedstat if present) and each queue
 * thread's schedstat and published state, feeds every queue's controller
 * (perf_auto_step()) and applies the decisions: the affinity with
 * pthread_setaffinity_np() on the queue thread (this thread is not a queue
 * thread and keeps the process's own affinity, so a queue thread starved
 * on its CPU is moved by a thread that runs), the polling period through
 * @auto_poll_us (the queue thread takes it at its next pass).
 */
static bool any_stop(struct perf_run *runs, uint32_t n);

struct auto_mon {
	struct perf_run *runs;
	uint32_t n;
	pthread_t thread;
	bool started;
	struct perf_cpu_loads *la, *lb;
	double *cont;
	uint64_t *own;
	cpu_set_t own_cpus; /* the monitor's own affinity (the process's) */
	uint64_t self_kicks; /* late ticks after which it left its CPU */
};

static void auto_queue_name(const struct perf_run *run, uint32_t n, uint32_t i, char *buf,
			    size_t len)
{
	if (n > 1)
		snprintf(buf, len, "c%uq%u", run->ctrl_idx + 1, i + 1);
	else
		snprintf(buf, len, "q%u", i + 1);
}

static void auto_apply(struct auto_mon *m, struct perf_run *run, struct worker *w,
		       unsigned int what, enum nvmfd_auto_place before, unsigned int poll_before)
{
	static unsigned long rl_move[2], rl_poll[2]; /* nvmfd_log_ratelimit() state */
	struct perf_auto_queue *q = &w->aq;
	char name[32], cpus[256];

	auto_queue_name(run, m->n, w->idx, name, sizeof(name));
	if (what & PERF_AUTO_MOVE) {
		int ret;

		pthread_mutex_lock(&w->aff_lock);
		/* off the CPU it is stuck on first: widening alone leaves it there */
		ret = what & PERF_AUTO_KICK ?
			      pthread_setaffinity_np(w->thread, sizeof(q->kick), &q->kick) : 0;
		if (!ret)
			ret = pthread_setaffinity_np(w->thread, sizeof(q->mask), &q->mask);
		if (ret)
			q->move_errors++;
		else
			w->allowed = q->mask;
		w->aff_started = true;
		pthread_mutex_unlock(&w->aff_lock);
		nvmfd__cpulist_format(&q->mask, cpus, sizeof(cpus));
		if (nvmfd_log_ratelimit(rl_move))
			nvmfd_log(ret ? NVMFD_LOG_WARN : NVMFD_LOG_INFO, "auto",
				  "%s: %s -> %s (%s), cpus %s%s%s", name,
				  nvmfd_auto_place_name(before), nvmfd_auto_place_name(q->ctl.place),
				  nvmfd_auto_reason_name(q->ctl.last_reason), cpus,
				  ret ? ": cannot set the affinity: " : "", ret ? strerror(ret) : "");
	}
	if (what & PERF_AUTO_POLL) {
		__atomic_store_n(&w->auto_poll_us, q->ctl.poll_us, __ATOMIC_RELAXED);
		if (nvmfd_log_ratelimit(rl_poll))
			nvmfd_log(NVMFD_LOG_INFO, "auto", "%s: idle poll %u -> %u us (%s)", name,
				  poll_before, q->ctl.poll_us,
				  nvmfd_auto_reason_name(q->ctl.last_reason));
	}
}

static void auto_tick(struct auto_mon *m)
{
	struct perf_cpu_loads *t;

	if (perf_read_cpu_loads(m->lb) < 0)
		memset(m->lb, 0, sizeof(*m->lb)); /* contention reads 0 */
	memset(m->own, 0, CPU_SETSIZE * sizeof(*m->own));
	/* this process's queue threads' CPU time per CPU: not contention */
	for (uint32_t c = 0; c < m->n; c++) {
		for (uint32_t i = 0; i < m->runs[c].o.queues; i++) {
			struct worker *w = &m->runs[c].workers[i];
			int tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);
			struct perf_schedstat ss;
			int cpu;

			if (!tid || perf_read_task_schedstat(tid, &ss) < 0 || !w->aq.have_prev)
				continue;
			cpu = perf_auto_cpu_now(&w->aq);
			if (cpu < 0)
				cpu = __atomic_load_n(&w->cur_cpu, __ATOMIC_RELAXED);
			if (cpu >= 0 && cpu < CPU_SETSIZE && ss.cpu_ns >= w->aq.prev.ss.cpu_ns)
				m->own[cpu] += ss.cpu_ns - w->aq.prev.ss.cpu_ns;
		}
	}
	perf_cpu_contention(m->la, m->lb, m->own, m->cont);
	for (uint32_t c = 0; c < m->n; c++) {
		struct perf_run *run = &m->runs[c];

		for (uint32_t i = 0; i < run->o.queues; i++) {
			struct worker *w = &run->workers[i];
			int tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);
			struct pollfd pfd = { .fd = nvmfd_host_qp_fd(w->qp), .events = POLLIN };
			struct perf_auto_obs o;
			enum nvmfd_auto_place before = w->aq.ctl.place;
			unsigned int poll_before = w->aq.ctl.poll_us, what;

			if (!tid)
				continue; /* not started: it has the process's affinity */
			memset(&o, 0, sizeof(o));
			o.now_ns = now_ns();
			o.loops = __atomic_load_n(&w->loops, __ATOMIC_RELAXED);
			o.waiting = __atomic_load_n(&w->waiting, __ATOMIC_ACQUIRE);
			o.wait_until_ns = __atomic_load_n(&w->wait_until_ns, __ATOMIC_RELAXED);
			o.readable = o.waiting && poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
			o.have_ss = perf_read_task_schedstat(tid, &o.ss) == 0;
			if (!o.have_ss)
				o.ss = w->aq.prev.ss; /* no schedstat: no run-delay signal */
			o.cpu = __atomic_load_n(&w->cur_cpu, __ATOMIC_RELAXED);
			o.completions = __atomic_load_n(&w->progress_ios, __ATOMIC_RELAXED);
			o.qd_sum = __atomic_load_n(&w->qd_sum, __ATOMIC_RELAXED);
			what = perf_auto_step(&w->aq, &o, m->cont, &run->rt_cpus);
			if (!auto_polls(run))
				what &= ~PERF_AUTO_POLL;
			if (what)
				auto_apply(m, run, w, what, before, poll_before);
		}
	}
	t = m->la;
	m->la = m->lb;
	m->lb = t;
}

/*
 * The monitor woke @late_ns after its tick: it waited for its CPU too.
 * Leave that CPU the same way a queue thread is kicked (pinned to the
 * process's other CPUs, then widened again), so that the next ticks are
 * on time. Rate: once per late tick.
 */
static void auto_self_kick(struct auto_mon *m, uint64_t late_ns)
{
	int cpu = sched_getcpu();
	cpu_set_t other = m->own_cpus;

	if (cpu < 0 || cpu >= CPU_SETSIZE || late_ns < m->runs[0].o.auto_knobs.starve_ns)
		return;
	CPU_CLR(cpu, &other);
	if (!CPU_COUNT(&other))
		return;
	if (pthread_setaffinity_np(pthread_self(), sizeof(other), &other) == 0) {
		m->self_kicks++;
		pthread_setaffinity_np(pthread_self(), sizeof(m->own_cpus), &m->own_cpus);
	}
}

static void *auto_main(void *arg)
{
	struct auto_mon *m = arg;
	struct timespec next;

	perf_read_cpu_loads(m->la);
	if (sched_getaffinity(0, sizeof(m->own_cpus), &m->own_cpus))
		CPU_ZERO(&m->own_cpus);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!any_stop(m->runs, m->n) && now_ns() < m->runs[0].end_ns) {
		next.tv_nsec += (long)PERF_AUTO_TICK_NS;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (any_stop(m->runs, m->n))
			break;
		{
			uint64_t due = (uint64_t)next.tv_sec * 1000000000ull + (uint64_t)next.tv_nsec;
			uint64_t now = now_ns();

			if (now > due)
				auto_self_kick(m, now - due);
			/* ticks missed while late are not made up in a burst */
			if (now > due + PERF_AUTO_TICK_NS) {
				next.tv_sec = (time_t)(now / 1000000000ull);
				next.tv_nsec = (long)(now % 1000000000ull);
			}
		}
		auto_tick(m);
	}
	return NULL;
}

/* Start the monitor if --exec auto. Return 0 or a negative errno. */
static int auto_start(struct auto_mon *m, struct perf_run *runs, uint32_t n)
{
	int ret;

	memset(m, 0, sizeof(*m));
	if (runs[0].o.exec != PERF_EXEC_AUTO)
		return 0;
	m->runs = runs;
	m->n = n;
	m->la = calloc(1, sizeof(*m->la));
	m->lb = calloc(1, sizeof(*m->lb));
	m->cont = calloc(CPU_SETSIZE, sizeof(*m->cont));
	m->own = calloc(CPU_SETSIZE, sizeof(*m->own));
	if (!m->la || !m->lb || !m->cont || !m->own) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = -pthread_create(&m->thread, NULL, auto_main, m);
	if (ret)
		goto out_free;
	m->started = true;
	return 0;
out_free:
	free(m->la);
	free(m->lb);
	free(m->cont);
	free(m->own);
	return ret;
}

static void auto_stop(struct auto_mon *m)
{
	if (!m->started)
		return;
	pthread_join(m->thread, NULL);
	m->runs[0].auto_self_kicks = m->self_kicks;
	free(m->la);
	free(m->lb);
	free(m->cont);
	free(m->own);
	m->started = false;
}

static int rt_place_cb(void *ctx, enum nvmfd_rt_place policy, unsigned int qid,
		       const cpu_set_t *allowed)
{
	return nvmfd_rt_place(ctx, policy, qid, allowed, -1);
}

/*
 * Build the runtime that describes the CPUs (--exec, --affinity-scope,
 * --affinity-strict, --cpus), then give every queue an io_cpu and its
 * affinity. Return 0 or a negative errno (message printed).
 */
static int exec_setup(struct perf_run *run)
{
	struct perf_opts *o = &run->o;
	struct nvmfd_rt_opts ro;
	int list[CPU_SETSIZE];
	unsigned int ncpus = 0;
	int ret;

	nvmfd_rt_opts_init(&ro);
	/* auto starts bound: per-CPU pools, per-CPU placement counters */
	ro.mode = o->exec == PERF_EXEC_UNBOUND ? NVMFD_RT_UNBOUND : NVMFD_RT_BOUND;
	ro.scope = o->scope;
	ro.strict = o->strict;
	ro.workers_per_pool = 1;
	ro.name = "perf";
	if (o->have_cpus)
		ro.cpus = o->cpus;
	ret = run->rt_borrowed ? 0 : nvmfd_rt_create(&ro, &run->rt);
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: execution runtime: %s%s\n", strerror(-ret),
			ret == -EINVAL ? " (--cpus not usable by this process?)" : "");
		return ret;
	}
	CPU_ZERO(&run->rt_cpus);
	for (unsigned int p = 0; p < nvmfd_rt_npools(run->rt); p++) {
		struct nvmfd_rt_pool_stats ps;

		if (nvmfd_rt_pool_stats(run->rt, p, &ps) == 0)
			CPU_OR(&run->rt_cpus, &run->rt_cpus, &ps.cpus);
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &run->rt_cpus))
			list[ncpus++] = c;
	}
	for (uint32_t i = 0; i < o->queues; i++)
		run->workers[i].io_cpu = -1;
	if (!ncpus) {
		fprintf(stderr, "nvmf-perf: the runtime reports no CPU\n");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < o->queues; i++) {
		struct worker *w = &run->workers[i];
		struct nvmfd_rt_pool_stats ps;
		uint32_t nplace = run->qtotal, qidx = run->qbase + i;

		if (run->groups) {
			/* --threads: queue k to thread k mod N; a thread is
			 * placed as a queue would be, its queues share it */
			struct qgroup *gr = &run->groups[qidx % run->ngroups];

			w->grp = gr;
			gr->ws[gr->nw++] = w;
			if (gr->nw > 1) {
				const struct worker *f = gr->ws[0];

				w->io_cpu = f->io_cpu;
				w->unit = f->unit;
				w->allowed = f->allowed;
				w->repatriate = f->repatriate;
				w->last_cpu = -1;
				w->cur_cpu = -1;
				nvmfd_host_qp_set_budget(w->qp, o->rx_budget, o->tx_budget);
				continue;
			}
			nplace = run->ngroups;
			qidx = gr->idx;
		}
		/* all controllers' queues are placed as one list */
		w->io_cpu = perf_choose_io_cpu(o->io_cpu, list, ncpus, nplace, qidx, rt_place_cb,
					       run->rt);
		if (w->io_cpu < 0) {
			fprintf(stderr, "nvmf-perf: queue %u: no io_cpu: %s\n", i + 1,
				strerror(-w->io_cpu));
			return w->io_cpu;
		}
		w->placed = true;
		CPU_ZERO(&w->unit);
		CPU_SET(w->io_cpu, &w->unit);
		w->allowed = w->unit;
		if (o->exec == PERF_EXEC_UNBOUND) {
			if (nvmfd_rt_pool_stats(run->rt, nvmfd_rt_pool_of_cpu(run->rt, w->io_cpu),
						&ps) == 0 && CPU_COUNT(&ps.cpus))
				w->unit = ps.cpus;
			w->allowed = o->strict ? w->unit : run->rt_cpus;
			w->repatriate = !o->strict && !CPU_EQUAL(&w->unit, &w->allowed);
		}
		w->last_cpu = -1;
		w->cur_cpu = -1;
		if (o->exec == PERF_EXEC_AUTO) {
			struct nvmfd_auto_knobs k = o->auto_knobs;

			/* a given --idle-poll-us or --busy-poll stays as given */
			if (!auto_polls(run))
				k.no_poll = true;
			/* home: every --cpus CPU (it starts on its io_cpu and
			 * widens), or pinned to io_cpu with --auto-home bound */
			if (!o->auto_home_bound)
				w->allowed = run->rt_cpus;
			perf_auto_queue_init(&w->aq, &k, w->io_cpu, &w->allowed);
			pthread_mutex_init(&w->aff_lock, NULL);
		}
		nvmfd_host_qp_set_budget(w->qp, o->rx_budget, o->tx_budget);
	}
	return 0;
}

static void exec_teardown(struct perf_run *run)
{
	if (!run->rt)
		return;
	for (uint32_t i = 0; run->workers && i < run->o.queues; i++) {
		if (run->workers[i].placed) {
			nvmfd_rt_unplace(run->rt, run->workers[i].io_cpu);
			if (run->o.exec == PERF_EXEC_AUTO)
				pthread_mutex_destroy(&run->workers[i].aff_lock);
		}
	}
	if (!run->rt_borrowed)
		nvmfd_rt_destroy(run->rt);
	run->rt = NULL;
}

/*
 * Connect one controller (@run->o.trid) and prepare its queues' workers.
 * Return: PERF_EXIT_OK, or the exit code (message printed); what was set
 * up is released by ctrl_teardown() either way.
 */
static int ctrl_setup(struct perf_run *run)
{
	struct perf_opts *o = &run->o;
	struct nvmfd_host_ctrl_opts copts;
	int ret;

	nvmfd_host_ctrl_opts_init(&copts, sizeof(copts));
	copts.hdgst = o->hdgst;
	copts.ddgst = o->ddgst;
	copts.nr_io_queues = o->queues;
	copts.disable_sqflow = o->disable_sqflow;
	copts.io_queue_size = o->depth + 1;
	copts.timeout_ms = o->timeout_ms;
	copts.max_io_size = o->io_size > (1u << 20) ? o->io_size : (1u << 20);
	if (o->trid.hostnqn[0])
		snprintf(copts.hostnqn, sizeof(copts.hostnqn), "%s", o->trid.hostnqn);
	memcpy(copts.dhchap_secret, o->dhchap_secret, sizeof(copts.dhchap_secret));
	memcpy(copts.dhchap_ctrl_secret, o->dhchap_ctrl_secret, sizeof(copts.dhchap_ctrl_secret));
	copts.tls = o->tls;
	copts.tls_identity = o->tls_identity;
	memcpy(copts.tls_psk, o->tls_psk, sizeof(copts.tls_psk));
	ret = nvmfd_host_ctrl_create(&copts, &run->ctrl);
	nvmfd_auth_wipe(&copts, sizeof(copts));
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: %s\n", strerror(-ret));
		return PERF_EXIT_USAGE;
	}
	ret = nvmfd_host_ctrl_connect(run->ctrl, &o->trid);
	if (ret < 0) {
		fprintf(stderr, "nvmf-perf: connect to %s:%s %s failed: %s\n", o->trid.traddr,
			o->trid.trsvcid, o->trid.subnqn, nvmfd_host_ctrl_errmsg(run->ctrl));
		return PERF_EXIT_CONN;
	}
	{
		const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(run->ctrl);
		uint64_t max = perf_mdts_bytes(ci->mdts, ci->cap);

		/* the target would fail every I/O with INVALID_FIELD */
		if (max && o->io_size > max) {
			fprintf(stderr, "nvmf-perf: I/O size %u exceeds the controller's maximum "
				"transfer size %" PRIu64 " (MDTS); use -o %" PRIu64 " or less\n",
				o->io_size, max, max);
			return PERF_EXIT_USAGE;
		}
	}
	if (nvmfd_host_ctrl_qp_count(run->ctrl) < o->queues) {
		fprintf(stderr, "nvmf-perf: controller granted %u I/O queues, %u requested\n",
			nvmfd_host_ctrl_qp_count(run->ctrl), o->queues);
		o->queues = nvmfd_host_ctrl_qp_count(run->ctrl);
		if (!o->queues)
			return PERF_EXIT_CONN;
	}
	if (nvmfd_host_qp_depth(nvmfd_host_ctrl_qp(run->ctrl, 0)) < o->depth) {
		fprintf(stderr, "nvmf-perf: controller queues hold %u commands; -q %u lowered\n",
			nvmfd_host_qp_depth(nvmfd_host_ctrl_qp(run->ctrl, 0)), o->depth);
		o->depth = nvmfd_host_qp_depth(nvmfd_host_ctrl_qp(run->ctrl, 0));
	}
	run->ns = o->nsid ? nvmfd_host_ctrl_find_ns(run->ctrl, o->nsid) :
			    nvmfd_host_ctrl_ns(run->ctrl, 0);
	if (!run->ns) {
		fprintf(stderr, "nvmf-perf: namespace %u not found (%u active)\n", o->nsid,
			nvmfd_host_ctrl_ns_count(run->ctrl));
		return PERF_EXIT_USAGE;
	}
	if (o->io_size % run->ns->lba_size) {
		fprintf(stderr, "nvmf-perf: -o %u is not a multiple of the LBA size %u\n",
			o->io_size, run->ns->lba_size);
		return PERF_EXIT_USAGE;
	}
	if (o->io_size / run->ns->lba_size > 65536) {
		fprintf(stderr, "nvmf-perf: -o %u is more than 65536 blocks of %u bytes, the most one "
			"NVMe command can move (NLB is 16 bits); use -o %u or less\n",
			o->io_size, run->ns->lba_size, 65536u * run->ns->lba_size);
		return PERF_EXIT_USAGE;
	}
	if (o->verify && run->ns->lba_size < 64)
		return PERF_EXIT_USAGE;
	run->nlb = o->io_size / run->ns->lba_size;
	if (o->verify_state) {
		char err[512];

		if (perf_vstate_open(o->verify_state, run->ns->lba_size, run->nlb,
				     run->ns->nsze / run->nlb, &run->vstate, err, sizeof(err)) < 0) {
			fprintf(stderr, "nvmf-perf: %s\n", err);
			return PERF_EXIT_USAGE;
		}
	}
	run->workers = calloc(o->queues, sizeof(*run->workers));
	if (!run->workers)
		return PERF_EXIT_CONN;
	for (uint32_t i = 0; i < o->queues; i++) {
		ret = worker_init(run, &run->workers[i], i);
		if (ret < 0) {
			fprintf(stderr, "nvmf-perf: queue %u: %s\n", i + 1,
				ret == -ENOSPC ? "namespace too small for -o and -P" : strerror(-ret));
			return PERF_EXIT_USAGE;
		}
	}
	return PERF_EXIT_OK;
}

/*
 * --verify-state: before the run's I/O, read back every slot an earlier
 * run wrote and check it (verify.c), every queue its own region on a
 * thread of its own.
 * Return: PERF_EXIT_OK, or PERF_EXIT_IO (mismatch) / PERF_EXIT_CONN (a
 * read failed), message printed.
 */
struct vstate_job {
	struct perf_run *run;
	struct worker *w;
	struct perf_vstate_stats st;
	int ret;
	bool threaded;
	char msg[512];
};

static void *vstate_job_main(void *arg)
{
	struct vstate_job *j = arg;
	struct perf_run *run = j->run;

	j->ret = perf_vstate_check(run->vstate, j->w->qp, run->ns->nsid,
				   j->w->region_lba / run->nlb, j->w->nslots, run->nlb,
				   run->ns->lba_size, run->o.depth, j->w->bufs, &j->st, j->msg,
				   sizeof(j->msg));
	return NULL;
}

static int vstate_check_run(struct perf_run *run)
{
	struct perf_vstate_stats *st = &run->vstats;
	struct vstate_job *jobs;
	pthread_t *tids;
	int code = PERF_EXIT_OK;

	if (!run->vstate)
		return PERF_EXIT_OK;
	jobs = calloc(run->o.queues, sizeof(*jobs));
	tids = calloc(run->o.queues, sizeof(*tids));
	if (!jobs || !tids) {
		free(jobs);
		free(tids);
		fprintf(stderr, "nvmf-perf: out of memory\n");
		return PERF_EXIT_CONN;
	}
	for (uint32_t i = 0; i < run->o.queues; i++) {
		jobs[i].run = run;
		jobs[i].w = &run->workers[i];
		jobs[i].threaded = !pthread_create(&tids[i], NULL, vstate_job_main, &jobs[i]);
		if (!jobs[i].threaded)
			vstate_job_main(&jobs[i]); /* no thread: here */
	}
	for (uint32_t i = 0; i < run->o.queues; i++) {
		struct vstate_job *j = &jobs[i];

		if (j->threaded)
			pthread_join(tids[i], NULL);
		st->slots += j->st.slots;
		st->blocks += j->st.blocks;
		st->inflight_new += j->st.inflight_new;
		st->inflight_old += j->st.inflight_old;
		st->inflight_torn += j->st.inflight_torn;
		if (j->ret && (!code || j->ret == -EILSEQ)) {
			fprintf(stderr, "nvmf-perf: --verify-state %s: queue %u: %s%s\n",
				run->o.verify_state, i + 1, j->ret == -EILSEQ ? "verify failed: " : "",
				j->msg);
			code = j->ret == -EILSEQ ? PERF_EXIT_IO : PERF_EXIT_CONN;
		}
	}
	free(jobs);
	free(tids);
	if (code)
		return code;
	fprintf(stderr, "nvmf-perf: --verify-state %s (run %" PRIu64 "): %" PRIu64 " slots (%"
		PRIu64 " blocks) of earlier runs read back intact; writes in flight at the last "
		"stop: %" PRIu64 " landed, %" PRIu64 " not, %" PRIu64 " in part\n",
		run->o.verify_state, perf_vstate_runs(run->vstate), st->slots, st->blocks,
		st->inflight_new, st->inflight_old, st->inflight_torn);
	return PERF_EXIT_OK;
}

static void ctrl_teardown(struct perf_run *run)
{
	for (uint32_t i = 0; i < run->o.queues && run->workers; i++)
		worker_fini(&run->workers[i]);
	free(run->workers);
	run->workers = NULL;
	perf_vstate_close(&run->vstate);
	nvmfd_host_ctrl_destroy(&run->ctrl);
}

static void group_free(struct qgroup *g, uint32_t n)
{
	for (uint32_t i = 0; g && i < n; i++) {
		free(g[i].ws);
		free(g[i].evs);
		if (g[i].epfd >= 0)
			close(g[i].epfd);
	}
	free(g);
}

static bool any_stop(struct perf_run *runs, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++)
		if (__atomic_load_n(&runs[c].stop, __ATOMIC_RELAXED))
			return true;
	return false;
}

static void stop_all(struct perf_run *runs, uint32_t n)
{
	for (uint32_t c = 0; c < n; c++)
		__atomic_store_n(&runs[c].stop, 1, __ATOMIC_RELAXED);
}

/*
 * --threads: min(@threads, @qtotal) groups, each with room for every queue
 * it gets (exec_setup() deals them) and an epoll set.
 * Return: 0; -ENOMEM / -errno of epoll_create1() (what was made is freed).
 */
static int group_alloc(struct qgroup **out, uint32_t *nout, uint32_t threads, uint32_t qtotal)
{
	uint32_t n = threads < qtotal ? threads : qtotal, per = (qtotal + n - 1) / n;
	struct qgroup *g = calloc(n, sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		g[i].epfd = -1;
	for (uint32_t i = 0; i < n; i++) {
		g[i].idx = i;
		g[i].ws = calloc(per, sizeof(*g[i].ws));
		g[i].evs = calloc(per, sizeof(*g[i].evs));
		g[i].epfd = epoll_create1(EPOLL_CLOEXEC);
		if (!g[i].ws || !g[i].evs || g[i].epfd < 0) {
			group_free(g, n);
			return -ENOMEM;
		}
	}
	*out = g;
	*nout = n;
	return 0;
}

/*
 * Run @n controllers (one perf_run each, all from this process): connect
 * all, share one runtime for CPU placement (the queues of all are placed
 * as one list), start every queue thread, stop together.
 */
static int run_perf(struct perf_run *runs, uint32_t n)
{
	struct rusage ru0, ru1;
	struct auto_mon mon;
	sigset_t sigs, oldsigs;
	uint64_t t0 = 0, t1, last_ios = 0, last_bytes = 0, start;
	bool tty = isatty(STDERR_FILENO), snap = false;
	int code = PERF_EXIT_OK, signo = 0;
	uint32_t started[PERF_MAX_CTRLS] = { 0 }, qtotal = 0, c, setup = 0, placed = 0;
	struct qgroup *groups = NULL;
	uint32_t ngroups = 0, gstarted = 0;

	for (c = 0; c < n; c++, setup++) {
		code = ctrl_setup(&runs[c]);
		if (!code)
			code = vstate_check_run(&runs[c]);
		if (code)
			goto out_ctrls;
	}
	for (c = 0; c < n; c++)
		qtotal += runs[c].o.queues;
	if (runs[0].o.threads && group_alloc(&groups, &ngroups, runs[0].o.threads, qtotal) < 0) {
		fprintf(stderr, "nvmf-perf: --threads: %s\n", strerror(ENOMEM));
		code = PERF_EXIT_CONN;
		goto out_ctrls;
	}
	for (c = 0; c < n; c++) {
		runs[c].groups = groups;
		runs[c].ngroups = ngroups;
	}
	for (c = 0; c < n; c++, placed++) {
		runs[c].qbase = c ? runs[c - 1].qbase + runs[c - 1].o.queues : 0;
		runs[c].qtotal = qtotal;
		if (c) {
			runs[c].rt = runs[0].rt; /* borrowed */
			runs[c].rt_borrowed = true;
		}
		if (exec_setup(&runs[c]) < 0) {
			code = PERF_EXIT_USAGE;
			placed++;
			goto out_exec;
		}
	}
	start = now_ns();
	for (c = 0; c < n; c++) {
		runs[c].start_ns = start;
		runs[c].warmup_end_ns = start + (uint64_t)runs[c].o.warmup * 1000000000ull;
		runs[c].end_ns = runs[c].warmup_end_ns + (uint64_t)runs[c].o.seconds * 1000000000ull;
	}
	getrusage(RUSAGE_SELF, &ru0);
	catch_signals();
	/* the queue threads inherit a mask without SIGINT/SIGTERM, so the
	 * main thread's sleep is what a signal interrupts */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &oldsigs);
	for (; gstarted < ngroups && !code; gstarted++) {
		if (pthread_create(&groups[gstarted].thread, NULL, group_main, &groups[gstarted])) {
			stop_all(runs, n);
			code = PERF_EXIT_CONN;
			break;
		}
	}
	for (c = 0; c < n && !code && !groups; c++) {
		for (; started[c] < runs[c].o.queues; started[c]++) {
			if (pthread_create(&runs[c].workers[started[c]].thread, NULL, worker_main,
					   &runs[c].workers[started[c]])) {
				stop_all(runs, n);
				code = PERF_EXIT_CONN;
				break;
			}
		}
	}
	if (!code && auto_start(&mon, runs, n) < 0) {
		fprintf(stderr, "nvmf-perf: cannot start the --exec auto monitor thread\n");
		stop_all(runs, n);
		code = PERF_EXIT_CONN;
	}
	pthread_sigmask(SIG_SETMASK, &oldsigs, NULL);
	for (;;) {
		uint64_t now = now_ns(), step;

		if (got_signal) {
			signo = got_signal;
			stop_all(runs, n);
			break;
		}

		if (!snap && now >= runs[0].warmup_end_ns) {
			getrusage(RUSAGE_SELF, &ru0);
			t0 = now;
			snap = true;
		}
		if (now >= runs[0].end_ns || any_stop(runs, n)) {
			/* an error in one controller's queue ends them all */
			stop_all(runs, n);
			break;
		}
		/* several controllers: look at their stop flags more often */
		step = n > 1 ? 100000000ull : 1000000000ull;
		usleep(now + step < runs[0].end_ns ? (useconds_t)(step / 1000) :
						     (useconds_t)((runs[0].end_ns - now) / 1000 + 1));
		if (tty && !got_signal)
			progress(runs, n, &last_ios, &last_bytes);
	}
	auto_stop(&mon);
	for (c = 0; c < n; c++)
		for (uint32_t i = 0; i < started[c]; i++)
			pthread_join(runs[c].workers[i].thread, NULL);
	for (uint32_t g = 0; g < gstarted; g++)
		pthread_join(groups[g].thread, NULL);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	if (tty)
		fprintf(stderr, "\n");
	if (!snap)
		t0 = t1;
	if (!signo)
		signo = got_signal; /* came while the queues drained */
	for (c = 0; c < n; c++)
		runs[c].signo = signo;
	if (signo)
		fprintf(stderr, "nvmf-perf: interrupted by %s: the report covers the %.3f s "
			"measured so far\n", signal_name(signo), (double)(t1 - t0) / 1e9);
	for (c = 0; c < n; c++) {
		for (uint32_t i = 0; i < runs[c].o.queues; i++) {
			struct worker *w = &runs[c].workers[i];

			if (w->exit_code) {
				if (n > 1)
					fprintf(stderr, "nvmf-perf: controller %u: %s\n", c + 1, w->errmsg);
				else
					fprintf(stderr, "nvmf-perf: %s\n", w->errmsg);
				if (!code || w->exit_code == PERF_EXIT_IO)
					code = w->exit_code;
			}
		}
	}
	/*
	 * A queue that finished its whole window without one completion is
	 * not a fast run with 0 IOPS: its queue (or the target's worker for
	 * it) got no CPU or the target stopped answering. Say so; the figures
	 * are still reported and the exit status is unchanged.
	 */
	for (c = 0; c < n && !code && !signo; c++)
		for (uint32_t i = 0; i < runs[c].o.queues; i++) {
			const struct worker *w = &runs[c].workers[i];
			/* open loop: only when an arrival was due in the window */
			bool due = !w->rate_ns ||
				   (w->t1_ns > w->t0_ns && w->t1_ns - w->t0_ns >= w->rate_ns);

			if (!w->ios_done && due) {
				if (n > 1)
					fprintf(stderr, "nvmf-perf: warning: controller %u queue %u "
						"completed no I/O in the run (host or target "
						"starved of CPU?)\n", c + 1, i + 1);
				else
					fprintf(stderr, "nvmf-perf: warning: queue %u completed no I/O "
						"in the run (host or target starved of CPU?)\n",
						i + 1);
			}
		}
	runs[0].vm_hwm_kib = perf_vm_hwm_kib();
	report(runs, n, &ru0, &ru1, (double)(t1 - t0) / 1e9);
	if (runs[0].o.verify) {
		uint64_t verified = 0;

		for (c = 0; c < n; c++)
			for (uint32_t i = 0; i < runs[c].o.queues; i++)
				verified += runs[c].workers[i].verified_blocks;
		if (!verified && !code)
			fprintf(stderr, "nvmf-perf: --verify checked no block: no read found a block "
				"written earlier in this run\n");
	}
	/* an error found before the signal keeps its own status */
	if (signo && !code)
		code = PERF_EXIT_SIGNAL + signo;
out_exec:
	/* the borrowed runtimes first: runs[0] owns it */
	while (placed--)
		exec_teardown(&runs[placed]);
out_ctrls:
	for (c = 0; c < n && c <= setup; c++)
		ctrl_teardown(&runs[c]);
	group_free(groups, ngroups);
	return code;
}

int main(int argc, char **argv)
{
	static struct perf_run runs[PERF_MAX_CTRLS];
	char err[512];

	nvmfd_log_set_ident("nvmf-perf");
	if (perf_parse_args(argc, argv, &runs[0].o, err, sizeof(err))) {
		fprintf(stderr, "nvmf-perf: %s\nTry 'nvmf-perf --help'.\n", err);
		return PERF_EXIT_USAGE;
	}
	if (runs[0].o.help) {
		fputs(perf_usage(), stdout);
		return PERF_EXIT_OK;
	}
	if (runs[0].o.version) {
		printf("nvmf-perf %s\n", NVMFD_VERSION);
		return PERF_EXIT_OK;
	}
	if (runs[0].o.discover)
		return run_discover(&runs[0].o);
	/* one perf_run per -r: the same options, its own transport ID */
	for (uint32_t c = 1; c < runs[0].o.nr_trids; c++) {
		runs[c].o = runs[0].o;
		runs[c].o.trid = runs[0].o.trids[c];
		runs[c].ctrl_idx = c;
	}
	return run_perf(runs, runs[0].o.nr_trids ? runs[0].o.nr_trids : 1);
}
