/* SPDX-License-Identifier: MIT */
/*
 * perf.h - nvmf-perf internals shared by main.c, opts.c and verify.c (and
 * their unit tests in tests/unit/host/).
 */
#ifndef NVMF_PERF_H
#define NVMF_PERF_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/host.h>

#include "internal/cpulist.h" /* nvmfd__cpulist_format() for the reports */
#include "internal/rt.h"

/* Most -r options of one run (controllers driven by one process). */
#define PERF_MAX_CTRLS 64

/* Exit codes (documented in --help). */
#define PERF_EXIT_OK 0
#define PERF_EXIT_IO 1 /* verify mismatch or I/O error status */
#define PERF_EXIT_USAGE 2
#define PERF_EXIT_CONN 3 /* connection or protocol error */
#define PERF_EXIT_SIGNAL 128 /* + the signal number: 130 SIGINT, 143 SIGTERM */

enum perf_exec {
	PERF_EXEC_BOUND, /* each queue's thread pinned to its io_cpu */
	PERF_EXEC_UNBOUND, /* allowed on the affinity-scope unit of its io_cpu */
	PERF_EXEC_AUTO, /* starts at home (--auto-home); the monitor moves it, sets polling */
};

enum perf_io_cpu {
	PERF_IO_CPU_RR, /* (qid - 1) mod CPUs */
	PERF_IO_CPU_LEAST_LOADED, /* least loaded CPU of the queue's blk-mq group */
};

enum perf_pattern {
	PERF_READ,
	PERF_WRITE,
	PERF_RANDREAD,
	PERF_RANDWRITE,
	PERF_RW,
	PERF_RANDRW,
};

/**
 * struct perf_opts - parsed command line.
 * @discover: "discover" sub-command.
 * @help:     -h/--help was given (usage printed by the caller).
 * @version:  -V/--version was given (printed by the caller).
 * @trid:     -r transport ID (the first -r).
 * @trids:    every -r, in order (@nr_trids of them; @trids[0] == @trid).
 * @nr_trids: 1..PERF_MAX_CTRLS; I/O only: each -r is one controller with
 *            -P queues, all driven by this process.
 * @depth:    -q outstanding I/Os per queue.
 * @io_size:  -o bytes per I/O.
 * @pattern:  -w workload.
 * @read_pct: -M percentage of reads for rw/randrw (0..100).
 * @seconds:  -t run time.
 * @queues:   -P I/O queues (connections, one thread each).
 * @nsid:     --ns, 0 = first active namespace.
 * @warmup:   --warmup seconds excluded from the statistics.
 * @hdgst, @ddgst: --digest hdr,data.
 * @verify:   --verify.
 * @verify_state: --verify-state FILE (sets @verify), or NULL.
 * @json:     --json.
 * @busy_poll: --busy-poll: never sleep in poll() (SPDK style).
 * @timeout_ms: --timeout for every wait.
 * @disable_sqflow: --disable-sqflow: Connect CATTR bit 2 on I/O queues.
 * @exec:     --exec bound|unbound|auto; without --exec auto, or bound with
 *            --threads (which auto does not combine with).
 * @exec_default: no --exec was given (@exec is the default).
 * @auto_knobs: --auto-starve-ms, --auto-bound, --auto-no-poll,
 *            --auto-freeze (--exec auto only; the controller's defaults
 *            otherwise).
 * @auto_home_bound: --auto-home bound: a queue thread's home is its
 *            io_cpu (pinned); default (unbound): every --cpus CPU.
 * @scope:    --affinity-scope (unbound only).
 * @strict:   --affinity-strict (unbound only).
 * @io_cpu:   --io-cpu rr|least-loaded.
 * @cpus:     --cpus LIST (valid if @have_cpus).
 * @have_cpus: --cpus was given.
 * @idle_poll_us: --idle-poll-us: keep polling this long after the last
 *            progress before blocking in poll(2) (0 = block at once).
 * @rx_budget, @tx_budget: --rx-budget/--tx-budget bytes per poll call
 *            (0 = unlimited), nvmfd_host_qp_set_budget().
 * @rate:     --rate: I/Os per second over all queues, sent open loop at
 *            evenly spaced intended times (0 = closed loop, the default).
 * @threads:  --threads: queue threads of the process, each driving the
 *            queues k with k mod @threads == its index (0 = one per queue).
 */
struct perf_opts {
	bool discover;
	bool help;
	bool version;
	struct nvmfd_host_trid trid;
	struct nvmfd_host_trid trids[PERF_MAX_CTRLS];
	uint32_t nr_trids;
	bool have_trid;
	uint32_t depth;
	uint32_t io_size;
	enum perf_pattern pattern;
	uint32_t read_pct;
	uint32_t seconds;
	uint32_t queues;
	uint32_t nsid;
	uint32_t warmup;
	bool hdgst;
	bool ddgst;
	bool verify;
	const char *verify_state; /* --verify-state FILE (implies verify) */
	bool json;
	bool busy_poll;
	uint32_t timeout_ms;
	bool disable_sqflow;
	enum perf_exec exec;
	bool exec_default;
	struct nvmfd_auto_knobs auto_knobs;
	bool auto_home_bound;
	enum nvmfd_rt_scope scope;
	bool strict;
	enum perf_io_cpu io_cpu;
	cpu_set_t cpus;
	bool have_cpus;
	uint32_t idle_poll_us;
	uint32_t rx_budget;
	uint32_t tx_budget;
	/* --dhchap-secret / --dhchap-ctrl-secret: validated DHHC-1 strings. */
	char dhchap_secret[NVMFD_HOST_SECRET_MAX];
	char dhchap_ctrl_secret[NVMFD_HOST_SECRET_MAX];
	/* --reauth-interval MS: re-authenticate every queue that often; 0 never */
	uint32_t reauth_ms;
	/* --tls, --psk (a validated NVMeTLSkey-1 string), --tls-identity */
	bool tls;
	char tls_psk[NVMFD_HOST_SECRET_MAX];
	uint8_t tls_identity;
	uint64_t rate;
	uint32_t threads;
};

/**
 * perf_parse_args() - parse argv (getopt_long; resets optind).
 * @argc, @argv: as main() got them.
 * @o:   out.
 * @err: out: message on failure.
 * @len: bytes at @err.
 * Return: 0; -EINVAL on a usage error.
 */
int perf_parse_args(int argc, char **argv, struct perf_opts *o, char *err, size_t len);

/** perf_pattern_name() - "randread" etc. */
const char *perf_pattern_name(enum perf_pattern p);

/**
 * perf_pattern_writes() - whether a workload writes at all.
 * @p:        the pattern.
 * @read_pct: -M (rw/randrw only).
 * Return: true for write/randwrite, and for rw/randrw with @read_pct < 100.
 */
bool perf_pattern_writes(enum perf_pattern p, uint32_t read_pct);

/**
 * perf_mdts_bytes() - the controller's maximum data transfer size.
 * @mdts: Identify Controller MDTS (a power of two in units of the minimum
 *        memory page size; 0 = no limit).
 * @cap:  the CAP property (CAP.MPSMIN: the page is 2^(12 + MPSMIN) bytes).
 * Return: the limit in bytes; 0 if there is none (@mdts 0); UINT64_MAX if
 *         it does not fit in 64 bits.
 */
uint64_t perf_mdts_bytes(uint8_t mdts, uint64_t cap);

/** perf_usage() - the --help text. */
const char *perf_usage(void);

/* Verify block format: a 32-byte header, then a pattern derived from
 * (lba, gen); the CRC32C covers the whole block with the crc field zero. */
#define PERF_VERIFY_MAGIC 0x4656504eu /* "NPVF" */
#define PERF_VERIFY_HDR 32

/**
 * perf_verify_fill() - write the verify image of one logical block.
 * @blk:      @lba_size bytes.
 * @lba_size: bytes, >= 64.
 * @lba:      the block's LBA.
 * @gen:      generation (> 0).
 */
void perf_verify_fill(void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen);

/**
 * perf_verify_check() - check one block read back.
 * @blk:        @lba_size bytes.
 * @lba_size:   bytes.
 * @lba:        expected LBA.
 * @gen:        expected generation.
 * @msg:        out: what is wrong.
 * @len:        bytes at @msg.
 * Return: 0 if the block is exactly what perf_verify_fill(lba, gen) wrote;
 *         -EILSEQ otherwise.
 */
int perf_verify_check(const void *blk, uint32_t lba_size, uint64_t lba, uint64_t gen, char *msg,
		      size_t len);

/*
 * --verify-state FILE (verify.c): the per-slot generation map of --verify
 * in a shared file mapping, so that a later run checks the blocks an
 * earlier one had acknowledged before it was SIGKILLed or the target
 * restarted. See verify.c for the layout and the rules.
 */
struct perf_vstate;

/* Outcome of the check of earlier runs' slots (perf_vstate_check()). */
struct perf_vstate_stats {
	uint64_t slots; /* slots read back and checked */
	uint64_t blocks; /* their blocks */
	uint64_t inflight_new; /* a write in flight at the last stop had landed */
	uint64_t inflight_old; /* ... had not */
	uint64_t inflight_torn; /* ... had landed in part (several blocks) */
};

/**
 * perf_vstate_open() - open or create the state file for a namespace of
 * @nslots slots of @nlb blocks of @lba_size bytes; locked (flock) for this
 * process.
 * Return: 0; -errno with @err set (in use, not a state file, written for
 * another geometry, I/O errors).
 */
int perf_vstate_open(const char *path, uint32_t lba_size, uint32_t nlb, uint64_t nslots,
		     struct perf_vstate **out, char *err, size_t len);
/** perf_vstate_close() - unmap and unlock; NULLs *@vs. */
void perf_vstate_close(struct perf_vstate **vs);
/** perf_vstate_acked(), perf_vstate_pending() - the maps from slot @first
 *  (namespace-wide slot numbers). */
uint64_t *perf_vstate_acked(struct perf_vstate *vs, uint64_t first);
uint64_t *perf_vstate_pending(struct perf_vstate *vs, uint64_t first);
/** perf_vstate_runs() - runs that opened the file, this one included. */
uint64_t perf_vstate_runs(const struct perf_vstate *vs);
/**
 * perf_vstate_next_gen() - the generation of the next write of a queue:
 * ++*@next without a state (@vs NULL); with one, from chunks reserved in
 * the file's counter (*@next == *@end: reserve). Context: the queue's thread.
 */
void perf_vstate_next_gen(struct perf_vstate *vs, uint64_t *next, uint64_t *end, uint64_t *gen);
/**
 * perf_vstate_resolve() - check one slot read back against its state and
 * settle a write that was in flight at the last stop (see verify.c).
 * Return: 0 (stats updated); -EILSEQ with @msg on a block that carries
 * neither an allowed generation.
 */
int perf_vstate_resolve(uint64_t *acked, uint64_t *pending, const uint8_t *buf,
			uint32_t lba_size, uint32_t nlb, uint64_t lba,
			struct perf_vstate_stats *st, char *msg, size_t len);
/**
 * perf_vstate_check() - read back and check every slot of [@first, @first
 * + @n) that the state knows (acknowledged or in flight), @depth reads at a
 * time on @qp into @bufs (@depth * @nlb * @lba_size bytes).
 * Return: 0; -EILSEQ (mismatch) or -EIO/-errno (read failed) with @msg.
 * Context: @qp's owner; before the run's I/O starts.
 */
int perf_vstate_check(struct perf_vstate *vs, struct nvmfd_host_qp *qp, uint32_t nsid,
		      uint64_t first, uint64_t n, uint32_t nlb, uint32_t lba_size, uint32_t depth,
		      uint8_t *bufs, struct perf_vstate_stats *st, char *msg, size_t len);

/**
 * perf_parse_cpulist() - parse a CPU list such as "0-3,6,8-9".
 * @s:   the list (decimal CPU numbers < CPU_SETSIZE, ranges with '-').
 * @set: out: the CPUs.
 * Return: 0; -EINVAL if @s is empty, malformed, has a reversed range or a
 *         CPU >= CPU_SETSIZE.
 */
int perf_parse_cpulist(const char *s, cpu_set_t *set);

/** perf_exec_name(), perf_scope_name(), perf_io_cpu_name() - flag spellings. */
const char *perf_exec_name(enum perf_exec e);
const char *perf_scope_name(enum nvmfd_rt_scope s);
const char *perf_io_cpu_name(enum perf_io_cpu p);

/**
 * perf_hwq_group() - the CPUs that map to I/O queue @qidx, blk-mq style.
 * @list:    the usable CPUs, ascending.
 * @ncpus:   entries in @list (> 0).
 * @nqueues: I/O queues (> 0).
 * @qidx:    0-based queue index (qid - 1).
 * @out:     out: the group.
 *
 * The CPUs are split in order into G = min(@nqueues, @ncpus) contiguous
 * groups whose sizes differ by at most one (the first ncpus % G groups get
 * the extra CPU); queue i gets group i mod G, so with more queues than CPUs
 * every queue still has CPUs (blk-mq would leave the extra queues unmapped).
 * Return: CPUs in the group (>= 1); -EINVAL on bad arguments.
 */
int perf_hwq_group(const int *list, unsigned int ncpus, unsigned int nqueues, unsigned int qidx,
		   cpu_set_t *out);

/**
 * typedef perf_place_fn - the placement backend: nvmfd_rt_place() in
 * nvmf-perf, bare per-CPU counters in the unit tests.
 */
typedef int (*perf_place_fn)(void *ctx, enum nvmfd_rt_place policy, unsigned int qid,
			     const cpu_set_t *allowed);

/**
 * perf_choose_io_cpu() - choose (and account, through @place) a queue's io_cpu.
 * @policy:  rr: @place(RR, qid, NULL) = (qid - 1) mod CPUs; least-loaded:
 *           @place(LEAST_LOADED, qid, group) with the group of
 *           perf_hwq_group().
 * @list, @ncpus, @nqueues: as perf_hwq_group().
 * @qidx:    0-based queue index.
 * @place, @ctx: placement backend.
 * Return: the CPU (>= 0); -EINVAL on bad arguments; a negative errno from
 *         @place.
 * Context: any thread; @place serialises the counters.
 */
int perf_choose_io_cpu(enum perf_io_cpu policy, const int *list, unsigned int ncpus,
		       unsigned int nqueues, unsigned int qidx, perf_place_fn place, void *ctx);

/**
 * struct perf_schedstat - /proc/self/task/<tid>/schedstat.
 * @cpu_ns:       time spent on a CPU, ns.
 * @run_delay_ns: time spent runnable waiting for a CPU, ns.
 * @timeslices:   times run on a CPU.
 */
struct perf_schedstat {
	uint64_t cpu_ns;
	uint64_t run_delay_ns;
	uint64_t timeslices;
};

/**
 * perf_read_schedstat() - read the calling thread's schedstat.
 * @out: out (zeroed on failure).
 * Return: 0; -ENOENT/-EACCES etc. if the file cannot be read (kernel
 *         without CONFIG_SCHEDSTATS), -EINVAL if it cannot be parsed.
 * Context: the thread to measure.
 */
int perf_read_schedstat(struct perf_schedstat *out);

/**
 * perf_vm_hwm_kib() - peak resident set size of this process.
 * Return: VmHWM from /proc/self/status in KiB; 0 if unavailable.
 */
uint64_t perf_vm_hwm_kib(void);

/**
 * perf_read_task_schedstat() - read thread @tid's schedstat
 * (/proc/self/task/<tid>/schedstat; @tid 0: the calling thread).
 * @out: out (zeroed on failure).
 * Return: as perf_read_schedstat().
 * Context: any thread of this process.
 */
int perf_read_task_schedstat(int tid, struct perf_schedstat *out);

/*
 * --exec auto (auto.c; doc/execution-model.md §8.3): every queue thread
 * has a controller of src/rt/auto.c (struct nvmfd_auto), fed every
 * PERF_AUTO_TICK_NS by one monitor thread that is not a queue thread (so a
 * starved queue thread is moved by a thread that runs): placement BOUND
 * (the controller's home: by default allowed on every --cpus CPU, the
 * scheduler placing it next to the target's worker or away from it as
 * they fit; with --auto-home bound pinned to io_cpu) / MOVED (pinned to
 * the least contended other CPU of --cpus) / UNBOUND (allowed on every
 * --cpus CPU, pushed off the CPU it is stuck on), and the idle-poll
 * period the queue thread takes at its next pass. The pure parts below are
 * what the unit test drives with an injected clock and injected signals.
 */
#define PERF_AUTO_TICK_NS 100000000ull

/**
 * struct perf_cpu_load - one CPU's cumulative counters.
 * @busy_ns:      /proc/stat user+nice+system+irq+softirq+steal, ns.
 * @total_ns:     @busy_ns + idle + iowait, ns.
 * @run_delay_ns: /proc/schedstat: time the CPU's runnable tasks waited
 *                (0 when the kernel has no CONFIG_SCHEDSTATS).
 */
struct perf_cpu_load {
	uint64_t busy_ns;
	uint64_t total_ns;
	uint64_t run_delay_ns;
};

/**
 * struct perf_cpu_loads - every CPU's counters at one instant.
 * @have_stat: /proc/stat was parsed.
 * @have_rd:   /proc/schedstat was parsed (per-CPU run delay known).
 * @cpu:       indexed by CPU number (CPUs absent from the files stay 0).
 */
struct perf_cpu_loads {
	bool have_stat;
	bool have_rd;
	struct perf_cpu_load cpu[CPU_SETSIZE];
};

/**
 * perf_parse_proc_stat() - the "cpuN" lines of /proc/stat into @l.
 * @text:        the file's contents (NUL-terminated).
 * @l:           out: busy_ns, total_ns (other fields untouched).
 * @ns_per_tick: 1e9 / sysconf(_SC_CLK_TCK).
 * Return: 0 (sets @l->have_stat); -ENODATA if no cpuN line parses.
 */
int perf_parse_proc_stat(const char *text, struct perf_cpu_loads *l, uint64_t ns_per_tick);

/**
 * perf_parse_proc_schedstat() - the "cpuN" lines of /proc/schedstat
 * (version 15 and later: the 8th number is the run queue's run delay, ns).
 * Return: 0 (sets @l->have_rd); -ENODATA if no cpuN line parses.
 */
int perf_parse_proc_schedstat(const char *text, struct perf_cpu_loads *l);

/**
 * perf_read_cpu_loads() - read /proc/stat and, if present, /proc/schedstat.
 * Return: 0; -errno or -ENODATA if /proc/stat cannot be read or parsed.
 */
int perf_read_cpu_loads(struct perf_cpu_loads *l);

/**
 * perf_cpu_contention() - per CPU, how much other work kept it between @a
 * and @b (0..1): the larger of (a) the busy share of the interval that is
 * not this process's queue threads' (@own_ns[cpu], their CPU time there)
 * and (b) with /proc/schedstat, the growth of its run queue's run delay
 * per wall ns (runnable work waiting; three hogs on one CPU read 1).
 * @a, @b:   counters at the start and end of the interval.
 * @own_ns:  CPU_SETSIZE entries (NULL: none).
 * @out:     CPU_SETSIZE entries; CPUs without data read 0.
 */
void perf_cpu_contention(const struct perf_cpu_loads *a, const struct perf_cpu_loads *b,
			 const uint64_t *own_ns, double *out);

/**
 * struct perf_auto_obs - what the monitor sees of one queue thread at a tick.
 * @now_ns:        the (injected) monotonic clock, ns.
 * @loops:         passes of the queue loop so far.
 * @waiting:       the thread is blocked in poll(2)/ppoll(2).
 * @wait_until_ns: when that wait times out.
 * @readable:      its socket has input now.
 * @ss:            the thread's schedstat.
 * @have_ss:       @ss was read (else the previous one is repeated).
 * @cpu:           the CPU it last ran on (-1: unknown).
 * @completions:   I/Os completed so far.
 * @qd_sum:        sum over those completions of the I/Os in flight at each.
 */
struct perf_auto_obs {
	uint64_t now_ns;
	uint64_t loops;
	bool waiting;
	uint64_t wait_until_ns;
	bool readable;
	struct perf_schedstat ss;
	bool have_ss;
	int cpu;
	uint64_t completions;
	uint64_t qd_sum;
};

/**
 * struct perf_auto_queue - the monitor's state of one queue thread.
 * @ctl:         the controller (mode, moves, times, last reason: stats).
 * @io_cpu:      the queue's io_cpu.
 * @home:        the CPUs of the BOUND placement (io_cpu, or every --cpus
 *               CPU: @home_all).
 * @home_all:    @home has more than one CPU (an unbound home).
 * @cpu:         the CPU of a MOVED placement (-1 otherwise).
 * @mask:        the affinity the placement asks for.
 * @pending_ns:  the last measure of how long the thread had work but made
 *               no pass (fed as the controller's starvation input).
 * @max_pending_ns: the largest @pending_ns seen.
 * @move_errors: affinity changes that failed (set by the monitor).
 * @kick:        with PERF_AUTO_KICK: the --cpus CPUs less contended than
 *               the one the thread is stuck on, applied before @mask (no
 *               kick when there is none). Widening
 *               the affinity does not move a runnable thread off a CPU
 *               that is still allowed (it would wait there for the load
 *               balancer, seen here for 800 ms behind a SCHED_FIFO hog),
 *               so an UNBOUND move off a CPU first pins the thread to the
 *               other CPUs, then widens.
 * @kicks:       kicks asked for.
 * private: the rest.
 */
struct perf_auto_queue {
	struct nvmfd_auto ctl;
	int io_cpu;
	cpu_set_t home;
	bool home_all;
	int cpu;
	cpu_set_t mask;
	uint64_t pending_ns;
	uint64_t max_pending_ns;
	uint64_t move_errors;
	cpu_set_t kick;
	uint64_t kicks;
	/* private */
	struct perf_auto_obs prev;
	bool have_prev;
	uint64_t work_since_ns; /* first tick that saw work and no pass (0: none) */
};

/* perf_auto_step() result bits */
#define PERF_AUTO_MOVE 1u /* the placement changed: apply @mask (it may be the same) */
#define PERF_AUTO_POLL 2u /* ctl.poll_us changed: publish it */
#define PERF_AUTO_KICK 4u /* apply @kick, then @mask (with PERF_AUTO_MOVE) */

/**
 * perf_auto_queue_init() - BOUND (at home), event driven; @k NULL: defaults.
 * @home: the home CPUs (NULL or empty: {@io_cpu}); the initial @mask.
 */
void perf_auto_queue_init(struct perf_auto_queue *q, const struct nvmfd_auto_knobs *k,
			  int io_cpu, const cpu_set_t *home);

/**
 * perf_auto_step() - one tick of one queue: build the controller's sample
 * from @o (and the previous observation) and @contention, update, and
 * derive the affinity.
 * @q:          the queue's state.
 * @o:          this tick's observation (@o->now_ns non-decreasing).
 * @contention: perf_cpu_contention() of the last interval (CPU_SETSIZE).
 * @cpus:       the --cpus set (where MOVED may go, what UNBOUND allows).
 *
 * Sample: pending = how long the thread has had work (running, input
 * unread, or its wait overdue) without making a pass: a thread seen
 * running at two ticks without a pass in between has waited at least the
 * tick if its run delay grew by half the tick or more (with schedstat;
 * else always): a thread busy outside its loop, computing or blocked in
 * the library (the DH step of --reauth-interval), is not starved; a
 * sleeping thread with input unread or an overdue wait counts from
 * the first tick that saw it (so input that arrived just before the tick
 * is not taken for starvation); a thread that makes passes but whose run
 * delay grew by 90 % of the tick or more counts that run delay. queue delay = its run delay per timeslice;
 * pressure = its run delay per wall ns; home pressure = contention of
 * io_cpu (an unbound home: the most contended home CPU, so that it widens
 * again only when none would hold it back); sys_pressure (gates polling)
 * = contention of the CPU it runs on; alt_cpu = a --cpus CPU other than
 * the current one (and, for a pinned home, io_cpu) with contention <=
 * the knobs' pressure_lo; arrival gap = wall time per completion; qd =
 * mean in flight at completion.
 * A thread starved while UNBOUND is kicked again (each tick it stays so).
 * Return: PERF_AUTO_MOVE | PERF_AUTO_POLL | PERF_AUTO_KICK bits.
 */
unsigned int perf_auto_step(struct perf_auto_queue *q, const struct perf_auto_obs *o,
			    const double *contention, const cpu_set_t *cpus);

/** perf_auto_cpu_now() - the CPU the placement pins to (-1: UNBOUND, or at
 *  an unbound home). */
int perf_auto_cpu_now(const struct perf_auto_queue *q);

#endif /* NVMF_PERF_H */
