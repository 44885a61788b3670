// SPDX-License-Identifier: MIT
/*
 * test_perf_auto.c - nvmf-perf --exec auto: the /proc parsers, per-CPU
 * contention, and each queue thread's controller driven tick by tick with
 * an injected clock and injected signals (a simulated queue thread on a
 * 2-CPU machine): it moves a starved thread off its CPU, converges, does
 * not oscillate, comes back when calm, polls only with headroom, and
 * respects the knobs; plus the command-line knobs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../../tools/nvmf-perf/perf.h"

#define MS 1000000ull
#define TICK PERF_AUTO_TICK_NS
#define TRID "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x:y"

/*
 * One simulated queue thread, io_cpu 1 of CPUs {0, 1}. Each tick says what
 * happened during it: whether the thread got the CPU (@runs; otherwise it
 * stays runnable, makes no pass and accumulates run delay), how often it
 * completed I/O, and each CPU's contention as the monitor would compute it.
 */
struct sim {
	struct perf_auto_queue q;
	struct perf_auto_obs o;
	double cont[CPU_SETSIZE];
	cpu_set_t cpus;
	unsigned int moves_applied;
	int where; /* the CPU the scheduler has an unpinned thread on */
};

static void sim_init(struct sim *s, const struct nvmfd_auto_knobs *k)
{
	memset(s, 0, sizeof(*s));
	perf_auto_queue_init(&s->q, k, 1, NULL);
	CPU_ZERO(&s->cpus);
	CPU_SET(0, &s->cpus);
	CPU_SET(1, &s->cpus);
	s->o.now_ns = 1000 * MS;
	s->o.have_ss = true;
	s->o.cpu = 1;
	/* the first observation only primes the state */
	assert_int_equal(perf_auto_step(&s->q, &s->o, s->cont, &s->cpus), 0);
}

/*
 * Advance one tick. @runs: the thread ran during it (passes made, small
 * run delay); else starved (no pass, running state, run delay = the tick).
 * @cpl: completions in the tick (QD 1 unless @qd), @hog: contention of
 * CPU 1 (where the hog is), @cpu0: contention of CPU 0.
 */
static unsigned int sim_tick(struct sim *s, bool runs, uint64_t cpl, double qd, double hog,
			     double cpu0)
{
	unsigned int r;
	/* where the thread is: its own CPU takes the hog's contention */
	int cpu = perf_auto_cpu_now(&s->q);
	bool on_hog = cpu == 1 || (cpu < 0 && runs == false);

	s->o.now_ns += TICK;
	s->cont[0] = cpu0;
	s->cont[1] = hog;
	if (runs) {
		s->o.loops += 1000;
		s->o.ss.timeslices += 100;
		s->o.ss.run_delay_ns += on_hog && hog > 0.5 ? 30 * MS : 100000; /* 1 us per slice */
		s->o.completions += cpl;
		s->o.qd_sum += (uint64_t)(qd * (double)cpl);
		s->o.waiting = false;
	} else {
		s->o.ss.run_delay_ns += TICK;
		s->o.waiting = false;
	}
	s->o.cpu = cpu >= 0 ? cpu : s->where;
	r = perf_auto_step(&s->q, &s->o, s->cont, &s->cpus);
	if (r & PERF_AUTO_MOVE)
		s->moves_applied++;
	return r;
}

static void test_parse_proc(void **state)
{
	static struct perf_cpu_loads l;
	const char *stat = "cpu  10 0 10 100 0 0 0 0 0 0\n"
			   "cpu0 5 1 4 50 2 1 1 1 0 0\n"
			   "cpu1 7 0 3 60 0 0 0 0 0 0\n"
			   "intr 12345\nctxt 99\n";
	const char *sched = "version 15\ntimestamp 4294\n"
			    "cpu0 0 0 100 20 30 10 5000 7000 90\n"
			    "domain0 00000003 1 2 3\n"
			    "cpu1 0 0 100 20 30 10 5000 123456789 90\n";

	(void)state;
	memset(&l, 0, sizeof(l));
	assert_int_equal(perf_parse_proc_stat(stat, &l, 10 * MS), 0);
	assert_true(l.have_stat);
	/* busy = user + nice + system + irq + softirq + steal */
	assert_int_equal(l.cpu[0].busy_ns, (5 + 1 + 4 + 1 + 1 + 1) * 10 * MS);
	assert_int_equal(l.cpu[0].total_ns, (13 + 50 + 2) * 10 * MS);
	assert_int_equal(l.cpu[1].busy_ns, 10 * 10 * MS);
	assert_int_equal(perf_parse_proc_schedstat(sched, &l), 0);
	assert_true(l.have_rd);
	assert_int_equal(l.cpu[0].run_delay_ns, 7000);
	assert_int_equal(l.cpu[1].run_delay_ns, 123456789);
	memset(&l, 0, sizeof(l));
	assert_int_equal(perf_parse_proc_stat("intr 1\n", &l, 1), -ENODATA);
	assert_int_equal(perf_parse_proc_schedstat("version 15\n", &l), -ENODATA);
	assert_int_equal(perf_parse_proc_stat("", &l, 1), -ENODATA);
	assert_false(l.have_stat || l.have_rd);
	/* the real files: /proc/stat is always there */
	assert_int_equal(perf_read_cpu_loads(&l), 0);
	assert_true(l.have_stat);
}

static void test_contention(void **state)
{
	static struct perf_cpu_loads a, b;
	static double out[CPU_SETSIZE];
	static uint64_t own[CPU_SETSIZE];

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.have_stat = b.have_stat = true;
	b.cpu[0].total_ns = b.cpu[1].total_ns = b.cpu[2].total_ns = 100 * MS;
	b.cpu[0].busy_ns = 80 * MS; /* 60 of it ours */
	b.cpu[1].busy_ns = 100 * MS; /* a hog */
	b.cpu[2].busy_ns = 10 * MS;
	own[0] = 60 * MS;
	own[2] = 30 * MS; /* more than /proc/stat's ticks counted: 0, not negative */
	perf_cpu_contention(&a, &b, own, out);
	assert_true(out[0] > 0.19 && out[0] < 0.21);
	assert_true(out[1] > 0.99);
	assert_true(out[2] == 0);
	assert_true(out[3] == 0); /* no data */
	/* with per-CPU run delay: three hogs waiting for each other read 1 */
	a.have_rd = b.have_rd = true;
	b.cpu[2].run_delay_ns = 250 * MS;
	perf_cpu_contention(&a, &b, own, out);
	assert_true(out[2] > 0.99);
	/* counters going backwards (CPU hot-unplugged) read 0 */
	perf_cpu_contention(&b, &a, NULL, out);
	assert_true(out[0] == 0 && out[1] == 0);
}

static void test_quiet_stays_bound(void **state)
{
	static struct sim s;

	(void)state;
	sim_init(&s, NULL);
	for (int i = 0; i < 600; i++)
		assert_int_equal(sim_tick(&s, true, 100, 32, 0, 0) & PERF_AUTO_MOVE, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_int_equal(s.q.ctl.moves, 0);
	assert_int_equal(s.q.pending_ns, 0);
	/* QD 32 and long gaps: never latency bound */
	assert_int_equal(s.q.ctl.poll_us, 0);
}

static void test_starved_moves_and_converges(void **state)
{
	static struct sim s;
	unsigned int r;
	int i;

	(void)state;
	sim_init(&s, NULL);
	sim_tick(&s, true, 100, 32, 0, 0);
	/* a nice -20 hog takes CPU 1: the thread makes no pass. First tick
	 * seen running with no pass: pending = 1 tick >= 50 ms: moved at once
	 * to CPU 0 (idle) */
	r = sim_tick(&s, false, 0, 0, 1.0, 0);
	assert_true(r & PERF_AUTO_MOVE);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_STARVED);
	assert_int_equal(s.q.cpu, 0);
	assert_int_equal(CPU_COUNT(&s.q.mask), 1);
	assert_true(CPU_ISSET(0, &s.q.mask));
	assert_true(s.q.pending_ns >= 50 * MS);
	assert_int_equal(s.q.ctl.starvations, 1);
	/* converged: the hog stays for a minute, the thread runs on CPU 0 */
	for (i = 0; i < 600; i++)
		assert_int_equal(sim_tick(&s, true, 100, 32, 1.0, 0) & PERF_AUTO_MOVE, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	assert_int_equal(s.q.ctl.moves, 1);
	assert_int_equal(s.moves_applied, 1);
	/* the hog goes: home after 6 calm ticks and the 1 s hold */
	for (i = 0; i < 30 && s.q.ctl.place != NVMFD_AUTO_BOUND; i++)
		sim_tick(&s, true, 100, 32, 0, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_true(i >= 6 && i <= 12);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_RECOVERED);
	assert_true(CPU_ISSET(1, &s.q.mask) && CPU_COUNT(&s.q.mask) == 1);
	assert_int_equal(s.moves_applied, 2);
	assert_true(s.q.ctl.time_ns[NVMFD_AUTO_MOVED] >= 600 * TICK);
}

static void test_no_alt_cpu_widens(void **state)
{
	static struct sim s;
	unsigned int r;

	(void)state;
	sim_init(&s, NULL);
	/* both CPUs contended: starved on CPU 1, nowhere better: unbound,
	 * kicked off CPU 1 first (widening alone would leave it there) */
	r = sim_tick(&s, false, 0, 0, 1.0, 0.9);
	assert_int_equal(r & (PERF_AUTO_MOVE | PERF_AUTO_KICK), PERF_AUTO_MOVE | PERF_AUTO_KICK);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_UNBOUND);
	assert_true(CPU_EQUAL(&s.q.mask, &s.cpus));
	assert_int_equal(CPU_COUNT(&s.q.kick), 1);
	assert_true(CPU_ISSET(0, &s.q.kick));
	assert_int_equal(perf_auto_cpu_now(&s.q), -1);
	/* still stuck on CPU 1 at the next tick (waiting for it: its run
	 * delay grows by the tick): kicked again, mode unchanged */
	s.o.cpu = 1;
	s.o.now_ns += TICK;
	s.o.ss.run_delay_ns += TICK;
	r = perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(r & PERF_AUTO_KICK, PERF_AUTO_KICK);
	assert_int_equal(s.q.kicks, 2);
	assert_int_equal(s.q.ctl.moves, 1);
	/* running again: no more kicks */
	r = sim_tick(&s, true, 100, 32, 1.0, 0.9);
	assert_int_equal(r & PERF_AUTO_KICK, 0);
	/* starved on CPU 0 while CPU 1 is worse: not pushed onto it */
	s.o.cpu = 0;
	s.o.now_ns += TICK;
	s.o.ss.run_delay_ns += TICK;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	s.o.now_ns += TICK;
	s.o.ss.run_delay_ns += TICK;
	r = perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_true(s.q.pending_ns >= TICK);
	assert_int_equal(r & PERF_AUTO_KICK, 0);
	assert_int_equal(s.q.kicks, 2);
	/* moved to CPU 0, then starved there too: unbound */
	sim_init(&s, NULL);
	sim_tick(&s, false, 0, 0, 1.0, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	s.cont[0] = 1.0;
	sim_tick(&s, false, 0, 0, 1.0, 1.0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_UNBOUND);
	assert_true(CPU_EQUAL(&s.q.mask, &s.cpus));
}

static void test_crumbs_are_starvation(void **state)
{
	static struct sim s;

	(void)state;
	sim_init(&s, NULL);
	sim_tick(&s, true, 100, 32, 0, 0);
	/* behind nice -20 hogs: a pass per tick, but 97 ms of run delay */
	s.o.now_ns += TICK;
	s.o.loops++;
	s.o.ss.timeslices++;
	s.o.ss.run_delay_ns += 97 * MS;
	s.cont[1] = 1.0;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, 97 * MS);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_STARVED);
	/* 80 % of the tick is contention (the hold applies), not starvation */
	sim_init(&s, NULL);
	sim_tick(&s, true, 100, 32, 0, 0);
	s.o.now_ns += TICK;
	s.o.loops++;
	s.o.ss.timeslices++;
	s.o.ss.run_delay_ns += 80 * MS;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
}

static void test_sleeping_is_not_starved(void **state)
{
	static struct sim s;

	(void)state;
	sim_init(&s, NULL);
	/* blocked in poll(2), nothing to read, wait not over: not starved,
	 * however long */
	for (int i = 0; i < 50; i++) {
		s.o.now_ns += TICK;
		s.o.waiting = true;
		s.o.wait_until_ns = s.o.now_ns + 40 * MS;
		s.o.readable = false;
		perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
		assert_int_equal(s.q.pending_ns, 0);
	}
	/* input arrived just before the tick: first sight is not starvation */
	s.o.now_ns += TICK;
	s.o.readable = true;
	s.o.wait_until_ns = s.o.now_ns + 40 * MS;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, 0);
	/* the thread woke and made passes: fine */
	s.o.now_ns += TICK;
	s.o.loops++;
	s.o.readable = false;
	s.o.waiting = false;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	/* input unread for a whole tick while asleep: starved (its CPU never
	 * ran it to wake up) and moved */
	s.o.waiting = true;
	s.o.readable = true;
	s.o.now_ns += TICK;
	s.o.wait_until_ns = s.o.now_ns + 40 * MS;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, 0);
	s.o.now_ns += TICK;
	s.cont[1] = 1.0;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, TICK);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	/* an overdue wait (timer long past) counts as work too */
	sim_init(&s, NULL);
	s.o.waiting = true;
	s.o.now_ns += TICK;
	s.o.wait_until_ns = s.o.now_ns - 20 * MS;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	s.o.now_ns += TICK;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_int_equal(s.q.pending_ns, TICK);
	assert_int_equal(s.q.max_pending_ns, TICK);
}

static void test_flapping_hog_backs_off(void **state)
{
	static struct sim s;
	double hog;

	(void)state;
	sim_init(&s, NULL);
	/* a hog on CPU 1 comes and goes every 2 s for 10 minutes: moves are
	 * bounded by the hold's exponential back-off, not by the hog */
	for (int i = 0; i < 6000; i++) {
		hog = (i / 20) % 2 ? 1.0 : 0;
		sim_tick(&s, hog == 0 || perf_auto_cpu_now(&s.q) != 1, 100, 32, hog, 0);
	}
	/* 150 hog periods; a stay at home would be followed by a starvation
	 * every time without the back-off */
	assert_true(s.q.ctl.moves < 40);
	assert_true(s.q.ctl.time_ns[NVMFD_AUTO_MOVED] > s.q.ctl.time_ns[NVMFD_AUTO_BOUND]);
	assert_int_equal(s.moves_applied, s.q.ctl.moves);
}

static void test_poll_on_off(void **state)
{
	static struct sim s;
	unsigned int r = 0;
	int i;

	(void)state;
	sim_init(&s, NULL);
	/* QD 1, a completion every 40 us (2500 per tick), CPUs idle */
	for (i = 0; i < 10 && !(r & PERF_AUTO_POLL); i++)
		r = sim_tick(&s, true, 2500, 1, 0, 0);
	assert_true(r & PERF_AUTO_POLL);
	assert_int_equal(i, 3);
	assert_int_equal(s.q.ctl.poll_us, 80); /* 2 x the gap */
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_LATENCY);
	for (i = 0; i < 100; i++)
		assert_int_equal(sim_tick(&s, true, 2500, 1, 0, 0), 0);
	/* the CPU becomes shared (another process busy on it): one tick is
	 * ridden out (a burst), off at the second */
	assert_int_equal(sim_tick(&s, true, 2500, 1, 0.7, 0), 0);
	assert_true(s.q.ctl.poll_us > 0);
	r = sim_tick(&s, true, 2500, 1, 0.7, 0);
	assert_true(r & PERF_AUTO_POLL);
	assert_int_equal(s.q.ctl.poll_us, 0);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_CONTENDED);
	/* calm again: on after 3 ticks (the first stop came long after the
	 * start: no back-off) */
	for (i = 0; i < 30 && !s.q.ctl.poll_us; i++)
		sim_tick(&s, true, 2500, 1, 0, 0);
	assert_true(s.q.ctl.poll_us > 0);
	/* the host goes idle: off after 3 ticks */
	for (i = 0; i < 10 && s.q.ctl.poll_us; i++)
		sim_tick(&s, true, 0, 0, 0, 0);
	assert_int_equal(s.q.ctl.poll_us, 0);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_IDLE);
	/* QD 32: never */
	for (i = 0; i < 50; i++)
		sim_tick(&s, true, 2500, 32, 0, 0);
	assert_int_equal(s.q.ctl.poll_us, 0);
	/* the CPU busy with someone else (25 % or more): never starts */
	for (i = 0; i < 50; i++)
		sim_tick(&s, true, 2500, 1, 0.3, 0);
	assert_int_equal(s.q.ctl.poll_us, 0);
}

static void test_self_contending_poller_backs_off(void **state)
{
	static struct sim s;
	unsigned int starts = 0;

	(void)state;
	sim_init(&s, NULL);
	/* whenever the thread polls, its CPU's contention rises to 0.6 (it
	 * shares the CPU with a busy process that now waits); 10 minutes */
	for (int i = 0; i < 6000; i++) {
		unsigned int before = s.q.ctl.poll_us;

		sim_tick(&s, true, 2500, 1, s.q.ctl.poll_us ? 0.6 : 0, 0);
		if (!before && s.q.ctl.poll_us)
			starts++;
	}
	assert_true(starts > 1 && starts <= 20);
	assert_true(s.q.ctl.poll_time_ns < 6000 * TICK / 50);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
}

static void test_knobs(void **state)
{
	static struct sim s;
	struct nvmfd_auto_knobs k;

	(void)state;
	/* bound: never moves; starvations still counted */
	nvmfd_auto_knobs_init(&k);
	k.bound = true;
	sim_init(&s, &k);
	for (int i = 0; i < 100; i++)
		assert_int_equal(sim_tick(&s, false, 0, 0, 1.0, 0) & PERF_AUTO_MOVE, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_int_equal(s.q.ctl.starvations, 100);
	assert_int_equal(s.moves_applied, 0);
	/* no_poll: latency bound, never polls; placement still adapts */
	nvmfd_auto_knobs_init(&k);
	k.no_poll = true;
	sim_init(&s, &k);
	for (int i = 0; i < 100; i++)
		sim_tick(&s, true, 2500, 1, 0, 0);
	assert_int_equal(s.q.ctl.poll_us, 0);
	assert_int_equal(s.q.ctl.poll_changes, 0);
	sim_tick(&s, false, 0, 0, 1.0, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	/* freeze: nothing changes, time still counted */
	nvmfd_auto_knobs_init(&k);
	k.freeze = true;
	sim_init(&s, &k);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(sim_tick(&s, i % 2, 2500, 1, 1.0, 0), 0);
	}
	assert_int_equal(s.q.ctl.moves + s.q.ctl.poll_changes, 0);
	assert_int_equal(s.q.ctl.time_ns[NVMFD_AUTO_BOUND], 99 * TICK); /* from the first update */
	/* starve bound: 250 ms means a one-tick starvation is not enough */
	nvmfd_auto_knobs_init(&k);
	k.starve_ns = 250 * MS;
	sim_init(&s, &k);
	sim_tick(&s, false, 0, 0, 1.0, 0);
	sim_tick(&s, false, 0, 0, 1.0, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	sim_tick(&s, false, 0, 0, 1.0, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	assert_true(s.q.pending_ns >= 250 * MS);
}

static void test_clock_backwards(void **state)
{
	static struct sim s;
	struct perf_auto_queue before;

	(void)state;
	sim_init(&s, NULL);
	sim_tick(&s, true, 100, 32, 0, 0);
	before = s.q;
	s.o.now_ns -= 5 * TICK;
	assert_int_equal(perf_auto_step(&s.q, &s.o, s.cont, &s.cpus), 0);
	assert_memory_equal(&before, &s.q, sizeof(before));
}

static int parse(struct perf_opts *o, char *err, size_t len, int argc, const char *const *argv)
{
	return perf_parse_args(argc, (char **)(uintptr_t)argv, o, err, len);
}

/*
 * The default home (session 20): every --cpus CPU. One tick of a thread
 * that the scheduler has on CPU @where (it got the CPU: @runs), CPU 0 and
 * 1 contended by other work @c0 and @c1.
 */
static unsigned int home_tick(struct sim *s, bool runs, int where, double c0, double c1,
			      uint64_t cpl, double qd)
{
	s->where = where;
	return sim_tick(s, runs, cpl, qd, c1, c0);
}

static void test_unbound_home(void **state)
{
	static struct sim s;
	unsigned int r;
	int i;

	(void)state;
	memset(&s, 0, sizeof(s));
	CPU_ZERO(&s.cpus);
	CPU_SET(0, &s.cpus);
	CPU_SET(1, &s.cpus);
	perf_auto_queue_init(&s.q, NULL, 1, &s.cpus);
	assert_true(s.q.home_all);
	assert_true(CPU_EQUAL(&s.q.mask, &s.cpus));
	assert_int_equal(perf_auto_cpu_now(&s.q), -1);
	s.o.now_ns = 1000 * MS;
	s.o.have_ss = true;
	s.o.cpu = 1;
	assert_int_equal(perf_auto_step(&s.q, &s.o, s.cont, &s.cpus), 0);
	/* quiet, and the target's worker busy on CPU 1 while the scheduler
	 * keeps us on CPU 0: nothing to do, at home on both CPUs */
	for (i = 0; i < 600; i++)
		assert_int_equal(home_tick(&s, true, 0, 0, i < 300 ? 0 : 0.6, 100, 32), 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_int_equal(s.q.ctl.moves, 0);
	/* a hog takes CPU 1 with us on it (no pass): pinned to CPU 0 at once */
	r = home_tick(&s, false, 1, 0, 1.0, 0, 0);
	assert_true(r & PERF_AUTO_MOVE);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	assert_int_equal(s.q.ctl.last_reason, NVMFD_AUTO_R_STARVED);
	assert_int_equal(s.q.cpu, 0);
	assert_int_equal(CPU_COUNT(&s.q.mask), 1);
	assert_true(CPU_ISSET(0, &s.q.mask));
	for (i = 0; i < 600; i++)
		assert_int_equal(home_tick(&s, true, 0, 0, 1.0, 100, 32) & PERF_AUTO_MOVE, 0);
	/* the hog goes: widened again once no CPU of the home holds it back */
	for (i = 0; i < 30 && s.q.ctl.place != NVMFD_AUTO_BOUND; i++)
		home_tick(&s, true, 0, 0, 0, 100, 32);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_true(i >= 6 && i <= 12);
	assert_true(CPU_EQUAL(&s.q.mask, &s.cpus));
	assert_int_equal(perf_auto_cpu_now(&s.q), -1);
	/* QD 1 at home on a quiet CPU 0: polling after 3 ticks, kept while
	 * the target's worker keeps CPU 1 busy */
	for (i = 0; i < 3; i++)
		home_tick(&s, true, 0, 0, 0.6, 2500, 1);
	assert_int_equal(s.q.ctl.poll_us, 80);
	for (i = 0; i < 100; i++)
		home_tick(&s, true, 0, 0, 0.6, 2500, 1);
	assert_int_equal(s.q.ctl.poll_us, 80);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	/* the scheduler puts it next to the busy worker on CPU 1: polling
	 * stops at the second tick there */
	home_tick(&s, true, 1, 0, 0.6, 2500, 1);
	assert_int_equal(s.q.ctl.poll_us, 80);
	home_tick(&s, true, 1, 0, 0.6, 2500, 1);
	assert_int_equal(s.q.ctl.poll_us, 0);
	assert_int_equal(s.q.ctl.poll_cause, NVMFD_AUTO_C_PSI);
}

/*
 * --reauth-interval: the queue thread sits in nvmfd_host_qp_reauth() (or
 * the admin queue's) for ticks: no pass, not in the loop's poll(), its
 * socket unread. Computing the DH step (CPU time grows, run delay does
 * not) or blocked in the library for the controller's answer (neither
 * grows), it is not starved and stays where it is; the same frozen loop
 * while waiting for its CPU (run delay grows by the tick) is starved.
 */
static void test_reauth_is_not_starvation(void **state)
{
	static struct sim s;
	int i;

	(void)state;
	sim_init(&s, NULL);
	sim_tick(&s, true, 100, 4, 0, 0);
	for (i = 0; i < 20; i++) {
		s.o.now_ns += TICK;
		s.o.waiting = false;
		if (i % 2)
			s.o.ss.cpu_ns += 90 * MS; /* the DH computation */
		s.o.ss.run_delay_ns += 2 * MS;
		perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
		assert_int_equal(s.q.pending_ns, 0);
	}
	assert_int_equal(s.q.ctl.starvations, 0);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_BOUND);
	assert_int_equal(s.q.ctl.moves, 0);
	/* the same frozen loop behind a hog: starved, moved */
	s.o.now_ns += TICK;
	s.o.ss.run_delay_ns += TICK;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_true(s.q.pending_ns >= TICK);
	assert_int_equal(s.q.ctl.starvations, 1);
	assert_int_equal(s.q.ctl.place, NVMFD_AUTO_MOVED);
	/* without schedstat the old rule stands: a frozen loop is starved */
	sim_init(&s, NULL);
	s.o.have_ss = false;
	s.o.now_ns += TICK;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	s.o.now_ns += TICK;
	perf_auto_step(&s.q, &s.o, s.cont, &s.cpus);
	assert_true(s.q.pending_ns >= TICK);
}

static void test_cli(void **state)
{
	struct perf_opts o;
	char err[256];

	(void)state;
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto" };

		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), 0);
		assert_int_equal(o.exec, PERF_EXEC_AUTO);
		assert_string_equal(perf_exec_name(o.exec), "auto");
		assert_int_equal(o.auto_knobs.starve_ns, 50 * MS);
		assert_false(o.auto_knobs.bound || o.auto_knobs.freeze || o.auto_knobs.no_poll);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto", "--auto-starve-ms",
				       "200", "--auto-bound", "--auto-no-poll", "--auto-freeze" };

		assert_int_equal(parse(&o, err, sizeof(err), 10, argv), 0);
		assert_int_equal(o.auto_knobs.starve_ns, 200 * MS);
		assert_true(o.auto_knobs.bound && o.auto_knobs.freeze && o.auto_knobs.no_poll);
	}
	{
		/* auto is the default: its knobs need no --exec */
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--auto-bound" };

		assert_int_equal(parse(&o, err, sizeof(err), 4, argv), 0);
		assert_int_equal(o.exec, PERF_EXEC_AUTO);
		assert_true(o.exec_default && o.auto_knobs.bound);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "bound", "--auto-bound" };

		assert_int_equal(parse(&o, err, sizeof(err), 6, argv), -EINVAL);
		assert_non_null(strstr(err, "need --exec auto"));
		assert_null(strstr(err, "the default is bound"));
	}
	{
		/* with --threads the default is bound, and the knobs are refused */
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--threads", "2", "--auto-bound" };

		assert_int_equal(parse(&o, err, sizeof(err), 6, argv), -EINVAL);
		assert_non_null(strstr(err, "the default is bound with --threads"));
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--threads", "2" };

		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), 0);
		assert_int_equal(o.exec, PERF_EXEC_BOUND);
		assert_true(o.exec_default);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto", "--auto-starve-ms",
				       "0" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), -EINVAL);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "adaptive" };

		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), -EINVAL);
		assert_non_null(strstr(err, "bound, unbound or auto"));
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto" };

		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), 0);
		assert_false(o.auto_home_bound);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto", "--auto-home",
				       "bound" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), 0);
		assert_true(o.auto_home_bound);
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "auto", "--auto-home",
				       "io_cpu" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), -EINVAL);
		assert_non_null(strstr(err, "--auto-home: bound or unbound"));
	}
	{
		const char *argv[] = { "nvmf-perf", "-r", TRID, "--exec", "unbound", "--auto-home",
				       "unbound" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), -EINVAL);
		assert_non_null(strstr(err, "need --exec auto"));
	}
	assert_non_null(strstr(perf_usage(), "--auto-freeze"));
	assert_non_null(strstr(perf_usage(), "--auto-home"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_proc),
		cmocka_unit_test(test_contention),
		cmocka_unit_test(test_quiet_stays_bound),
		cmocka_unit_test(test_starved_moves_and_converges),
		cmocka_unit_test(test_no_alt_cpu_widens),
		cmocka_unit_test(test_crumbs_are_starvation),
		cmocka_unit_test(test_sleeping_is_not_starved),
		cmocka_unit_test(test_flapping_hog_backs_off),
		cmocka_unit_test(test_poll_on_off),
		cmocka_unit_test(test_self_contending_poller_backs_off),
		cmocka_unit_test(test_knobs),
		cmocka_unit_test(test_clock_backwards),
		cmocka_unit_test(test_unbound_home),
		cmocka_unit_test(test_reauth_is_not_starvation),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
