// SPDX-License-Identifier: MIT
/* test_auto.c - the --exec auto controller on synthetic traces, with an
 * injected clock: starvation reacts at once, contention converges, noise
 * does not make it oscillate, the knobs hold, polling follows the gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "internal/rt.h"

#define MS 1000000ull
#define US 1000ull
#define TICK (100 * MS) /* the target's housekeeping tick */

/* A quiet, uncontended sample at tick @i. */
static struct nvmfd_auto_sample quiet(unsigned int i)
{
	struct nvmfd_auto_sample s = { .now_ns = (uint64_t)(i + 1) * TICK };

	s.queue_delay_ns = 20 * US;
	s.alt_cpu = true;
	return s;
}

static void test_starts_bound_and_stays_when_quiet(void **state)
{
	struct nvmfd_auto a;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 100; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.moves, 0);
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_NONE);
	assert_int_equal(a.time_ns[NVMFD_AUTO_BOUND], 99 * TICK);
}

static void test_starvation_moves_at_once(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	s = quiet(0);
	nvmfd_auto_update(&a, &s);
	/* within the hold time, first sample over the bound: moved now */
	s = quiet(1);
	s.pending_ns = 50 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_MOVED);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_STARVED);
	assert_int_equal(a.moves, 1);
	assert_int_equal(a.starvations, 1);

	/* starved again on the other CPU: unbound at once */
	s = quiet(2);
	s.pending_ns = 80 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.moves, 2);

	/* just under the bound is not a starvation */
	nvmfd_auto_init(&a, NULL);
	s = quiet(0);
	s.pending_ns = 50 * MS - 1;
	assert_false(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.starvations, 0);
}

static void test_starvation_without_alt_goes_unbound(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s = quiet(0);

	(void)state;
	nvmfd_auto_init(&a, NULL);
	s.alt_cpu = false;
	s.pending_ns = 60 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_STARVED);
}

/* Sustained contention moves after the window and hold; when it ends the
 * queue goes home; the whole trace converges with few moves. */
static void test_contention_converges_and_recovers(void **state)
{
	struct nvmfd_auto a;
	unsigned int i, moved_at = 0, home_at = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 200; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		if (i >= 20 && i < 100) {
			s.pressure = 0.9;
			s.home_pressure = 0.9;
			s.queue_delay_ns = 5 * MS;
		}
		if (nvmfd_auto_update(&a, &s)) {
			if (a.place != NVMFD_AUTO_BOUND && !moved_at)
				moved_at = i;
			if (a.place == NVMFD_AUTO_BOUND && moved_at && !home_at)
				home_at = i;
		}
	}
	/* window 3: contended samples 20, 21, 22 -> moved at 22 */
	assert_int_equal(moved_at, 22);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_RECOVERED);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	/* the other CPU was contended too (the trace says pressure on the
	 * CPU the queue runs on stays high): at most bound -> moved ->
	 * unbound -> bound */
	assert_true(a.moves <= 3);
	/* home after 2 x window quiet samples, hold respected */
	assert_true(home_at >= 100 + 5 && home_at <= 100 + 15);
}

/* A signal that is contended on every other sample never fills the
 * window: no move at all. */
static void test_noise_does_not_oscillate(void **state)
{
	struct nvmfd_auto a;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	srand(7);
	for (unsigned int i = 0; i < 1000; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		if (i % 2) {
			s.pressure = 0.9;
			s.queue_delay_ns = 10 * MS;
		}
		/* and some jitter below the thresholds */
		s.queue_delay_ns += (uint64_t)(rand() % 1000) * US;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.moves, 0);
	assert_int_equal(a.poll_changes, 0);
}

/* A CPU whose contention comes and goes every ~1.5 s: the hold doubles
 * on each return-then-leave, so moves per minute fall over time. */
static void test_flapping_backs_off(void **state)
{
	struct nvmfd_auto a;
	uint64_t first_half = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		struct nvmfd_auto_sample s = quiet(i);
		bool hot = (i / 15) % 2;

		if (hot) {
			s.pressure = 0.9;
			s.home_pressure = 0.9;
		}
		nvmfd_auto_update(&a, &s);
		if (i == 2999)
			first_half = a.moves;
	}
	assert_true(first_half > 0);
	/* 400 half-periods: an undamped controller would move ~400 times */
	assert_true(a.moves < 60);
	assert_true(a.moves - first_half <= first_half);
}

static void test_knob_bound_and_freeze(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;

	(void)state;
	nvmfd_auto_knobs_init(&k);
	k.bound = true;
	nvmfd_auto_init(&a, &k);
	for (unsigned int i = 0; i < 50; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		s.pending_ns = 500 * MS;
		s.pressure = 1.0;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.moves, 0);
	assert_int_equal(a.starvations, 50); /* still visible */

	nvmfd_auto_knobs_init(&k);
	k.freeze = true;
	nvmfd_auto_init(&a, &k);
	for (unsigned int i = 0; i < 50; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		s.pending_ns = i % 2 ? 500 * MS : 0;
		s.arrival_gap_ns = 20 * US;
		s.qd = 1;
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.moves + a.poll_changes, 0);
	assert_int_equal(a.time_ns[NVMFD_AUTO_BOUND], 49 * TICK);
}

static void test_poll_on_off_and_period(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	/* QD1, 30 us gaps, idle CPU: polling after the window, period 60 us */
	for (i = 0; i < 3; i++) {
		s = quiet(i);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		assert_int_equal(nvmfd_auto_update(&a, &s), i == 2);
	}
	assert_int_equal(a.poll_us, 60);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_LATENCY);
	/* small gap jitter: period unchanged */
	s = quiet(i++);
	s.arrival_gap_ns = 34 * US;
	s.qd = 1;
	assert_false(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 60);
	/* gaps grow to 80 us: re-fitted to 160 us */
	s = quiet(i++);
	s.arrival_gap_ns = 80 * US;
	s.qd = 1;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 160);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_GAPS);
	/* the CPU becomes contended: the first sample is ridden out (a
	 * burst), the second stops polling */
	s = quiet(i++);
	s.arrival_gap_ns = 80 * US;
	s.qd = 1;
	s.pressure = 0.7;
	s.home_pressure = 0.7;
	assert_false(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 160);
	s.now_ns = quiet(i++).now_ns;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_CONTENDED);
	assert_int_equal(a.poll_cause, NVMFD_AUTO_C_RUN_DELAY);
	assert_int_equal(a.poll_blips, 0);
	/* that stop came 400 ms after the start: the poll hold doubled to
	 * 2 s, so latency samples do not restart polling before 2 s have
	 * passed since the stop (sample 6), then do */
	for (unsigned int j = 0; j < 19; j++) {
		s = quiet(i++);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		assert_false(nvmfd_auto_update(&a, &s));
		assert_int_equal(a.poll_us, 0);
	}
	s = quiet(i++);
	s.arrival_gap_ns = 30 * US;
	s.qd = 1;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 60);
	assert_int_equal(a.poll_hold_ns, 2000 * MS);
	for (unsigned int j = 0; j < 3; j++) {
		s = quiet(i++);
		assert_int_equal(nvmfd_auto_update(&a, &s), j == 2);
	}
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_IDLE);
	assert_true(a.poll_time_ns > 0);
	/* deep queues are throughput bound: no polling */
	for (unsigned int j = 0; j < 20; j++) {
		s = quiet(i++);
		s.arrival_gap_ns = 5 * US;
		s.qd = 32;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_us, 0);

	nvmfd_auto_knobs_init(&k);
	k.no_poll = true;
	nvmfd_auto_init(&a, &k);
	for (unsigned int j = 0; j < 20; j++) {
		s = quiet(j);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.poll_changes, 0);
}

/* System CPU pressure (PSI) keeps polling from starting, and stops it. */
static void test_poll_psi_gates(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 10; i++) {
		s = quiet(i);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		s.sys_pressure = 0.3; /* above psi_poll_max (0.25) */
		nvmfd_auto_update(&a, &s);
		assert_int_equal(a.poll_us, 0);
	}
	for (unsigned int j = 0; j < 3; j++, i++) {
		s = quiet(i);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		s.sys_pressure = 0.1;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_us, 60);
	/* some PSI below pressure_hi keeps a running poller */
	s = quiet(i++);
	s.arrival_gap_ns = 30 * US;
	s.qd = 1;
	s.sys_pressure = 0.4;
	assert_false(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 60);
	s = quiet(i++);
	s.arrival_gap_ns = 30 * US;
	s.qd = 1;
	s.sys_pressure = 0.6;
	assert_false(nvmfd_auto_update(&a, &s)); /* one sample: ridden out */
	s.now_ns = quiet(i++).now_ns;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_CONTENDED);
	assert_int_equal(a.poll_cause, NVMFD_AUTO_C_PSI);
}

/*
 * A poller that shares its CPU with a busy host makes that CPU contended
 * itself: pressure is high exactly while it polls. The controller must not
 * flap at the window's pace: the poll hold doubles on every quick stop,
 * so the number of starts in 10 minutes stays small, and polling time is
 * a small share.
 */
static void test_poll_self_contention_backs_off(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int starts = 0, prev = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		s = quiet(i);
		s.arrival_gap_ns = 30 * US;
		s.qd = 1;
		if (a.poll_us)
			s.pressure = s.home_pressure = 0.8; /* polling hurts */
		nvmfd_auto_update(&a, &s);
		if (a.poll_us && !prev)
			starts++;
		prev = a.poll_us;
		assert_int_equal(a.place, NVMFD_AUTO_BOUND); /* never fully contended for 3 */
	}
	/* holds 1, 2, 4, ... 64 s: 8 starts to reach the cap, then one per 64 s */
	assert_true(starts <= 8 + 600 / 64 + 1);
	assert_int_equal(a.poll_hold_ns, 64000 * MS);
	assert_true(a.poll_time_ns < 600ull * 1000 * MS / 50);
}

static void test_clock_backwards_and_stats(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s = quiet(10);
	json_object *o, *v;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	nvmfd_auto_update(&a, &s);
	s.now_ns -= TICK;
	s.pending_ns = 100 * MS;
	assert_false(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	s = quiet(11);
	s.pending_ns = 100 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	o = nvmfd_auto_stats_obj(&a);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "mode", &v));
	assert_string_equal(json_object_get_string(v), "moved");
	assert_true(json_object_object_get_ex(o, "last_reason", &v));
	assert_string_equal(json_object_get_string(v), "starved");
	assert_true(json_object_object_get_ex(o, "moves", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(o, "time_ms", &v));
	assert_true(json_object_object_get_ex(v, "bound", &v));
	assert_int_equal(json_object_get_int(v), 100);
	json_object_put(o);
	assert_string_equal(nvmfd_auto_place_name((enum nvmfd_auto_place)99), "?");
	assert_string_equal(nvmfd_auto_reason_name((enum nvmfd_auto_reason)99), "?");
}

/* A quiet sample with per-CPU signals: the queue's CPU (also its io_cpu)
 * half idle, nobody else on it; the machine's PSI high (other CPUs
 * busy), which must not matter. */
static struct nvmfd_auto_sample quiet_cpu(unsigned int i)
{
	struct nvmfd_auto_sample s = quiet(i);

	s.alt_cpu = false;
	s.sys_pressure = 0.95;
	s.cpu = (struct nvmfd_auto_cpu){ .known = true, .idle = 0.5, .others = 0.05 };
	s.home = s.cpu;
	return s;
}

static void latency(struct nvmfd_auto_sample *s)
{
	s->arrival_gap_ns = 30 * US;
	s->qd = 1;
}

/* Split: the CPU has headroom, so polling starts whatever PSI says (the
 * system-wide share saw the other CPU's busy host). */
static void test_percpu_split_polls(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 3; i++) {
		s = quiet_cpu(i);
		latency(&s);
		assert_int_equal(nvmfd_auto_update(&a, &s), i == 2);
	}
	assert_int_equal(a.poll_us, 60);
	/* polling takes the idle time: idle 0, others unchanged, keeps on */
	for (unsigned int i = 3; i < 100; i++) {
		s = quiet_cpu(i);
		latency(&s);
		s.cpu.idle = s.home.idle = 0;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_us, 60);
	assert_int_equal(a.poll_changes, 1);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	/* someone else wants a quarter of the CPU: no new start either */
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 50; i++) {
		s = quiet_cpu(i);
		latency(&s);
		s.cpu.others = s.home.others = 0.3;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_changes, 0);
}

/*
 * No CPU split: a busy-polling host shares the queue's CPU. Not polling,
 * the host takes all the CPU we leave (others 0.7, no idle: contention
 * 0.7) and our worker waits 0.3 of the time; polling, CFS halves the CPU
 * (others 0.5, own run delay 0.5). The other CPU is as busy. Auto must not
 * poll, nor move anywhere.
 */
static void nosplit(struct nvmfd_auto_sample *s, bool polling)
{
	latency(s);
	s->cpu.idle = 0;
	s->cpu.others = polling ? 0.5 : 0.7;
	s->cpu.contention = s->cpu.others;
	s->pressure = polling ? 0.5 : 0.3;
	s->home = s->cpu;
	s->home_pressure = s->pressure;
}

static void test_percpu_nosplit_does_not_poll(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int starts = 0, prev = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		s = quiet_cpu(i);
		nosplit(&s, a.poll_us);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_changes, 0);
	assert_int_equal(a.poll_time_ns, 0);
	assert_int_equal(a.moves, 0);
	assert_true(a.stays > 0);
	assert_true(a.staying);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_NONE);

	/* polling already on when the host starts: off at the second
	 * sample, and it never starts again in 10 minutes */
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		s = quiet_cpu(i);
		if (i < 20)
			latency(&s);
		else
			nosplit(&s, a.poll_us);
		nvmfd_auto_update(&a, &s);
		if (a.poll_us && !prev)
			starts++;
		prev = a.poll_us;
		if (i == 20)
			assert_int_not_equal(a.poll_us, 0);
		if (i == 21)
			assert_int_equal(a.poll_us, 0);
	}
	assert_int_equal(starts, 1);
	assert_true(a.poll_time_ns <= 21 * TICK);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
}

/*
 * The split cell of auto-latency as a quiet machine showed it (session 20,
 * 05:06 UTC, from the live stats and the pools' schedstat of the runs):
 * event driven, the target's CPU is 0.32 idle, others 0.08, the worker's
 * own run delay 0.012 (0.37 us per wake-up at 33k wake-ups/s), commands
 * 30 us apart at QD 1; a poller there (the --idle-poll-us 100 run) has
 * idle 0, others 0.06, run delay 0.011, commands 19 us apart. Every few
 * seconds someone else's short job (a shell command, the bench starting
 * perf stat) lands on the CPU for one tick: the poller waits 0.35 of it.
 */
static void split_quiet(struct nvmfd_auto_sample *s, bool polling, bool burst)
{
	s->qd = 1;
	s->arrival_gap_ns = polling ? 19 * US : 30 * US;
	s->cpu.idle = polling ? 0 : 0.32;
	s->cpu.others = polling ? 0.06 : 0.08;
	s->cpu.contention = 0;
	s->pressure = polling ? 0.011 : 0.012;
	if (burst) {
		s->pressure = 0.35;
		s->cpu.others = 0.2; /* smoothed by half per tick */
	}
	s->home = s->cpu;
	s->home_pressure = s->pressure;
}

/* Polling starts within the window and rides out one-tick bursts: over 10
 * simulated minutes with a burst every 3 s it never stops (before session
 * 20 each burst stopped it and doubled the poll hold: polling ~half the
 * time, as the quiet run showed). A burst of 2 ticks every 20 s does stop
 * it, and it is back after the hold: still polling most of the time. */
static void test_percpu_quiet_split_rides_out_bursts(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i, bursts = 0, starts = 0, prev = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 6000; i++) {
		bool burst = i > 10 && i % 30 == 0;

		s = quiet_cpu(i);
		split_quiet(&s, a.poll_us, burst);
		bursts += burst;
		nvmfd_auto_update(&a, &s);
		if (i == 2)
			assert_int_equal(a.poll_us, 60);
		if (a.poll_us && !prev)
			starts++;
		prev = a.poll_us;
	}
	assert_int_equal(starts, 1);
	assert_true(a.poll_us > 0);
	assert_int_equal(a.poll_blips, bursts);
	assert_int_equal(a.poll_cause, NVMFD_AUTO_C_NONE);
	assert_true(a.poll_time_ns >= 5997 * TICK);
	assert_int_equal(a.moves, 0);

	/* the old rule (stop at the first contended sample) on the same
	 * trace: every burst stops the poller, the hold backs off to its
	 * cap, and polling is a small share of the time */
	nvmfd_auto_knobs_init(&k);
	k.poll_stop_window = 1;
	nvmfd_auto_init(&a, &k);
	for (i = 0; i < 6000; i++) {
		s = quiet_cpu(i);
		split_quiet(&s, a.poll_us, i > 10 && i % 30 == 0);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_hold_ns, 64000 * MS);
	assert_true(a.poll_time_ns < 6000 * TICK / 5);
	assert_int_equal(a.poll_blips, 0);

	/* two-tick bursts every 20 s: stopped by the worker's run delay at
	 * the second, back after the 1 s hold plus the window, no back-off
	 * (each stop comes long after its start) */
	nvmfd_auto_init(&a, NULL);
	starts = prev = 0;
	for (i = 0; i < 6000; i++) {
		bool burst = i > 10 && (i % 200 == 0 || i % 200 == 1);

		s = quiet_cpu(i);
		split_quiet(&s, a.poll_us, burst);
		nvmfd_auto_update(&a, &s);
		if (a.poll_us && !prev)
			starts++;
		prev = a.poll_us;
	}
	assert_int_equal(starts, 30);
	assert_int_equal(a.poll_cause, NVMFD_AUTO_C_RUN_DELAY);
	assert_int_equal(a.poll_hold_ns, 1000 * MS);
	assert_true(a.poll_time_ns >= 6000 * TICK * 9 / 10);
}

/* Between the start gate and the stop rule (hysteresis): a running poller
 * whose CPU shows others 0.18 (without schedstat, also contention 0.18:
 * the poller left no idle time) and a run delay of 0.15 keeps polling,
 * and is not called idle; event driven, the same signals do not start it.
 * (Before session 20 the start gate was applied while polling and a
 * failure counted as idle: off after 3 samples, "idle", seen in the quiet
 * nosplit run.) */
static void test_percpu_poll_hysteresis_band(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 3; i++) {
		s = quiet_cpu(i);
		split_quiet(&s, false, false);
		nvmfd_auto_update(&a, &s);
	}
	assert_true(a.poll_us > 0);
	for (; i < 103; i++) {
		s = quiet_cpu(i);
		split_quiet(&s, true, false);
		s.cpu.others = s.cpu.contention = 0.18;
		s.pressure = 0.15;
		s.home = s.cpu;
		nvmfd_auto_update(&a, &s);
		assert_true(a.poll_us > 0);
	}
	assert_int_not_equal(a.last_reason, NVMFD_AUTO_R_IDLE);
	assert_int_equal(a.poll_blips, 0);

	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 100; i++) {
		s = quiet_cpu(i);
		split_quiet(&s, false, false);
		s.cpu.others = 0.18;
		s.cpu.contention = 0.18;
		s.pressure = 0.15;
		s.home = s.cpu;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_changes, 0);
}

/* Someone's nice-0 job joins the poller's CPU for 5 s (it takes half:
 * others 0.5, the poller waits 0.5): polling stops at the job's second
 * tick, stays off while it runs (event driven, the job leaves no idle
 * time: contention), and comes back after it ends. */
static void test_percpu_poller_yields_to_a_job(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 200; i++) {
		bool job = i >= 50 && i < 100;

		s = quiet_cpu(i);
		split_quiet(&s, a.poll_us, false);
		if (job) {
			s.cpu.idle = 0;
			s.cpu.others = a.poll_us ? 0.5 : 0.7;
			s.cpu.contention = s.cpu.others;
			s.pressure = a.poll_us ? 0.5 : 0.05;
			s.home = s.cpu;
			s.home_pressure = s.pressure;
		}
		nvmfd_auto_update(&a, &s);
		if (i == 50)
			assert_true(a.poll_us > 0);
		if (i >= 51 && i < 100)
			assert_int_equal(a.poll_us, 0);
	}
	assert_int_equal(a.poll_cause, NVMFD_AUTO_C_RUN_DELAY);
	assert_true(a.poll_us > 0);
	assert_int_equal(a.moves, 0);
}

/* Foreign load on every CPU: the worker waits, but nowhere is better, so
 * the queue stays (the session-18 churn); once another CPU is better it
 * leaves after the window and hold; home again once its CPU is calm. */
static void test_percpu_moves_only_for_a_better_cpu(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 100; i++) {
		s = quiet_cpu(i);
		s.pressure = s.home_pressure = 0.6;
		s.cpu.idle = 0;
		s.cpu.others = s.cpu.contention = 0.8;
		s.home = s.cpu;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.moves, 0);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.stays, 100 - 10); /* after the first hold (1 s) */
	/* the other CPU frees up */
	for (unsigned int j = 0; j < 3; j++, i++) {
		s = quiet_cpu(i);
		s.pressure = s.home_pressure = 0.6;
		s.cpu.idle = 0;
		s.cpu.others = s.cpu.contention = 0.8;
		s.home = s.cpu;
		s.better_cpu = true;
		assert_int_equal(nvmfd_auto_update(&a, &s), j == 0);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_PRESSURE);
	assert_int_equal(a.moves, 1);
	/* away: the io_cpu still contended, the current CPU calm: stays */
	for (unsigned int j = 0; j < 50; j++, i++) {
		s = quiet_cpu(i);
		s.home.idle = 0;
		s.home.others = s.home.contention = 0.8;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	/* the old pool-pressure signal alone says calm: not enough */
	assert_int_equal(a.moves, 1);
	for (unsigned int j = 0; j < 6; j++, i++) {
		s = quiet_cpu(i);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_RECOVERED);
	/* a starvation moves at once even where nothing is better */
	s = quiet_cpu(i++);
	s.pending_ns = 60 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_STARVED);
}

/* Feed ticks 0..12 (past the first hold, 1 s) of a CPU hogged 80 % by
 * others (also the io_cpu), with @better/@alt/@quiet for better_cpu,
 * alt_cpu and alt_quiet and a latency-bound queue if @lat; return the
 * next tick. */
static unsigned int feed_hogged(struct nvmfd_auto *a, bool better, bool alt, bool quiet,
				bool lat)
{
	unsigned int i;

	for (i = 0; i < 13; i++) {
		struct nvmfd_auto_sample s = quiet_cpu(i);

		if (lat)
			latency(&s);
		s.cpu.idle = 0;
		s.cpu.others = s.cpu.contention = 0.8;
		s.home = s.cpu;
		s.better_cpu = better;
		s.alt_cpu = alt;
		s.alt_quiet = quiet;
		nvmfd_auto_update(a, &s);
	}
	return i;
}

/*
 * A hog alone on the io_cpu (session 29's starvation runs): once the
 * queue has left, nobody waits there (contention 0) but the hog runs 90 %
 * of the time. The queue must stay away; before home_others_max it came
 * back after 6 ticks and left again, every few seconds.
 */
static void test_percpu_hog_alone_keeps_queue_away(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	i = feed_hogged(&a, true, false, false, false);
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_PRESSURE);
	for (unsigned int j = 0; j < 200; j++, i++) {
		s = quiet_cpu(i);
		s.home.idle = 0.1;
		s.home.others = 0.9;
		s.home.contention = 0;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.moves, 1);
	/* the hog ends: home within 2 x window */
	for (unsigned int j = 0; j < 6; j++, i++) {
		s = quiet_cpu(i);
		s.home.others = 0.3;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_RECOVERED);
	/* the knob at 0 turns the check off: back with the hog still there */
	nvmfd_auto_init(&a, NULL);
	a.k.home_others_max = 0;
	i = feed_hogged(&a, true, false, false, false);
	for (unsigned int j = 0; j < 20; j++, i++) {
		s = quiet_cpu(i);
		s.home.others = 0.9;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
}

/* A contended queue whose other CPU has headroom (alt_cpu) goes unbound,
 * not pinned there (session 29's starvation runs: a QD 32 queue pinned
 * beside its sibling and the host did 10-19 % fewer IOPS); a latency-bound
 * one is pinned there when that CPU is quiet (alt_quiet: it may poll
 * there); a starved one takes alt_cpu at once either way. */
static void test_percpu_contention_pins_only_to_a_quiet_cpu(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	for (unsigned int v = 0; v < 4; v++) {
		bool quiet_alt = v & 1, lat = v & 2;

		nvmfd_auto_init(&a, NULL);
		feed_hogged(&a, false, true, quiet_alt, lat);
		assert_int_equal(a.place,
				 quiet_alt && lat ? NVMFD_AUTO_MOVED : NVMFD_AUTO_UNBOUND);
		assert_int_equal(a.last_reason, NVMFD_AUTO_R_PRESSURE);
		assert_int_equal(a.moves, 1);
	}
	nvmfd_auto_init(&a, NULL);
	s = quiet_cpu(0);
	s.alt_cpu = true;
	s.pending_ns = 60 * MS;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_MOVED);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_STARVED);
}

/* Both CPUs contended alike (no better CPU, no headroom), the other CPU
 * still idle a fifth of the time: a latency-bound queue goes unbound
 * (each wake-up may take that idle time; session 29's QD 1 phases stayed
 * bound at 121k IOPS against unbound's 204k); a deep queue stays. */
static void test_percpu_contended_everywhere_latency_goes_unbound(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	for (unsigned int lat = 0; lat < 2; lat++) {
		nvmfd_auto_init(&a, NULL);
		for (unsigned int i = 0; i < 20; i++) {
			s = quiet_cpu(i);
			if (lat)
				latency(&s);
			else
				s.qd = 32;
			s.cpu.idle = 0.25;
			s.cpu.others = 0.6;
			s.cpu.contention = 0.55;
			s.home = s.cpu;
			s.spare_cpu = true;
			nvmfd_auto_update(&a, &s);
		}
		if (lat) {
			assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
			assert_int_equal(a.last_reason, NVMFD_AUTO_R_SHARED_CPU);
			assert_int_equal(a.moves, 1);
		} else {
			assert_int_equal(a.place, NVMFD_AUTO_BOUND);
			assert_true(a.stays > 0);
		}
	}
}

/* A contention of this CPU that comes and goes with a better CPU around:
 * the placement back-off still damps it (per-CPU rules keep hysteresis). */
static void test_percpu_flapping_backs_off(void **state)
{
	struct nvmfd_auto a;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		struct nvmfd_auto_sample s = quiet_cpu(i);

		if ((i / 15) % 2) {
			s.cpu.idle = s.home.idle = 0;
			s.cpu.contention = s.home.contention = 0.9;
			s.cpu.others = s.home.others = 0.9;
			s.better_cpu = true;
		}
		nvmfd_auto_update(&a, &s);
	}
	assert_true(a.moves > 0 && a.moves < 60);
}

/*
 * The shared-CPU rule (phase run of session 26: QD 1, host threads on
 * both CPUs, no split): a latency-bound queue whose CPU runs a host
 * thread a third of the time (others 0.35, no room to poll) while the
 * other CPU is 0.3 idle goes unbound within the window (a new queue: no
 * hold), stays while that lasts, comes home once its queue deepens, and
 * moves to the other CPU instead when that one leaves a poller room.
 */
static void shared(struct nvmfd_auto_sample *s)
{
	latency(s);
	s->cpu.idle = 0.3;
	s->cpu.others = 0.35;
	s->home = s->cpu;
	s->spare_cpu = true;
	s->alt_cpu = true; /* headroom, but a host thread there too */
	s->alt_quiet = false;
}

/* Feed shared-CPU samples for ticks [@from, @to); return @to. */
static unsigned int feed_shared(struct nvmfd_auto *a, unsigned int from, unsigned int to)
{
	for (unsigned int i = from; i < to; i++) {
		struct nvmfd_auto_sample s = quiet_cpu(i);

		shared(&s);
		nvmfd_auto_update(a, &s);
	}
	return to;
}

/*
 * The incoming-CPU rule: a queue at home whose packets arrive on another,
 * no more contended runtime CPU moves its home there after @window
 * samples on the same CPU (a new queue: no hold), bound; a later move
 * waits the hold; a CPU that changes every sample, a busy one, or the
 * knobs (no_follow, bound, freeze) keep it; at its incoming home the
 * shared-CPU rule leaves it alone.
 */
static struct nvmfd_auto_sample arriving(unsigned int i, enum nvmfd_auto_incoming in, int cpu)
{
	struct nvmfd_auto_sample s = quiet_cpu(i);

	s.incoming = in;
	s.incoming_cpu = in == NVMFD_AUTO_IN_OTHER ? cpu : -1;
	return s;
}

static void test_percpu_follows_incoming_cpu(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	/* no home set by the owner: the rule never fires */
	for (i = 0; i < 10; i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.rehomes, 0);

	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	for (i = 0; i < 3; i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		assert_int_equal(nvmfd_auto_update(&a, &s), i == 2);
	}
	assert_int_equal(a.rehomes, 1);
	assert_int_equal(a.home_cpu, 1);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_INCOMING);
	assert_int_equal(a.moves, 1);
	assert_string_equal(nvmfd_auto_reason_name(a.last_reason), "incoming_cpu");
	/* at its new home: nothing more */
	for (; i < 20; i++) {
		s = arriving(i, NVMFD_AUTO_IN_HOME, -1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	/* the packets move to CPU 2: not within the hold (1 s = 10 ticks
	 * since the last move, at tick 2 -> from tick 12 on), then after a
	 * window; i is 20 here, well past it */
	for (unsigned int n = 0; n < 3; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 2);
		assert_int_equal(nvmfd_auto_update(&a, &s), n == 2);
	}
	assert_int_equal(a.home_cpu, 2);
	assert_int_equal(a.rehomes, 2);
	/* that move came within 4 rehome holds of the first: the rehome
	 * hold doubled to 2 s, so back to CPU 1 at once waits 20 ticks */
	assert_int_equal(a.rehome_hold_ns, 2000 * MS);
	for (unsigned int n = 0; n < 19; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	s = arriving(i++, NVMFD_AUTO_IN_OTHER, 1);
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.home_cpu, 1);
	assert_int_equal(a.rehome_hold_ns, 4000 * MS);
	/* a peer that keeps moving is followed less and less often (64 s
	 * at most) */
	for (unsigned int n = 0; n < 6000; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, a.home_cpu == 1 ? 2 : 1);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.rehome_hold_ns, 64000 * MS);
	assert_true(a.rehomes < 20);
	/* calm, then a move: the hold halves */
	for (unsigned int n = 0; n < 3000; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_HOME, -1);
		nvmfd_auto_update(&a, &s);
	}
	for (unsigned int n = 0; n < 3; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, a.home_cpu == 1 ? 2 : 1);
		assert_int_equal(nvmfd_auto_update(&a, &s), n == 2);
	}
	assert_int_equal(a.rehome_hold_ns, 32000 * MS);

	/* a CPU that changes every sample never reaches the window */
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	for (i = 0; i < 30; i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1 + (int)(i % 2));
		assert_false(nvmfd_auto_update(&a, &s));
	}
	/* a busy incoming CPU, or an unknown one in between, resets it */
	for (i = 30; i < 60; i++) {
		s = arriving(i, i % 3 == 2 ? NVMFD_AUTO_IN_BUSY : NVMFD_AUTO_IN_OTHER, 1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	for (i = 60; i < 90; i++) {
		s = arriving(i, i % 3 == 2 ? NVMFD_AUTO_IN_UNKNOWN : NVMFD_AUTO_IN_OTHER, 1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.rehomes, 0);
	assert_int_equal(a.home_cpu, 0);

	/* the knobs: no_follow, bound and freeze keep the home */
	for (unsigned int knob = 0; knob < 3; knob++) {
		nvmfd_auto_knobs_init(&k);
		k.no_follow = knob == 0;
		k.bound = knob == 1;
		k.freeze = knob == 2;
		nvmfd_auto_init(&a, &k);
		a.home_cpu = 0;
		for (i = 0; i < 30; i++) {
			s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
			nvmfd_auto_update(&a, &s);
		}
		assert_int_equal(a.rehomes, 0);
		assert_int_equal(a.home_cpu, 0);
		assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	}

	/* away from home (a starvation moved it): no rehome while away */
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	s = arriving(0, NVMFD_AUTO_IN_UNKNOWN, -1);
	s.pending_ns = 60 * MS;
	s.alt_cpu = true;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.place, NVMFD_AUTO_MOVED);
	for (i = 1; i < 6; i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		s.home.contention = 0.9; /* the io_cpu stays bad */
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.rehomes, 0);
}

/* The shared-CPU rule leaves a queue whose packets arrive at home from a
 * local peer where it is (the others on its CPU are, typically, that
 * peer's thread); the same samples with the packets from elsewhere, or
 * from a remote peer, move it. */
static void test_percpu_incoming_home_is_not_shared(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	for (unsigned int i = 0; i < 50; i++) {
		s = arriving(i, NVMFD_AUTO_IN_HOME, -1);
		s.local_peer = true;
		shared(&s);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.moves, 0);
	for (unsigned int c = 0; c < 2; c++) {
		nvmfd_auto_init(&a, NULL);
		a.home_cpu = 0;
		for (unsigned int i = 0; i < 3; i++) {
			s = arriving(i, c ? NVMFD_AUTO_IN_HOME : NVMFD_AUTO_IN_UNKNOWN, -1);
			s.local_peer = !c; /* c 1: a NIC's flow, steered to home */
			shared(&s);
			assert_int_equal(nvmfd_auto_update(&a, &s), i == 2);
		}
		assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
		assert_int_equal(a.last_reason, NVMFD_AUTO_R_SHARED_CPU);
	}
}

/* Samples counted towards a move of the home before a departure do not
 * count after the way back (3 new ones are needed), and a move of the
 * home stops polling. */
static void test_percpu_follow_restarts_after_a_move(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	for (i = 0; i < 2; i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	s = arriving(i++, NVMFD_AUTO_IN_UNKNOWN, -1);
	s.pending_ns = 60 * MS; /* starved: away at once */
	s.alt_cpu = true;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_not_equal(a.place, NVMFD_AUTO_BOUND);
	/* calm at home: back after 6 samples and the hold */
	while (a.place != NVMFD_AUTO_BOUND && i < 200) {
		s = arriving(i++, NVMFD_AUTO_IN_UNKNOWN, -1);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	for (unsigned int n = 0; n < 3; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		assert_int_equal(nvmfd_auto_update(&a, &s), n == 2);
	}
	assert_int_equal(a.home_cpu, 1);

	/* polling where it was, none after the move */
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	for (i = 0; i < 5; i++) {
		s = arriving(i, NVMFD_AUTO_IN_UNKNOWN, -1);
		latency(&s);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_not_equal(a.poll_us, 0);
	for (unsigned int n = 0; n < 3; n++, i++) {
		s = arriving(i, NVMFD_AUTO_IN_OTHER, 1);
		latency(&s);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.home_cpu, 1);
	assert_int_equal(a.poll_us, 0);
}

/* Beside a local peer (packets at home, the host on this machine) the
 * contention rule leaves the queue where it is; a starvation still moves
 * it; a remote peer (a NIC's interrupt CPU) or packets from elsewhere do
 * not hold it. */
static void test_percpu_local_peer_keeps_queue(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	for (unsigned int c = 0; c < 3; c++) {
		nvmfd_auto_init(&a, NULL);
		a.home_cpu = 0;
		for (i = 0; i < 40; i++) {
			s = arriving(i, c == 2 ? NVMFD_AUTO_IN_UNKNOWN : NVMFD_AUTO_IN_HOME, -1);
			s.local_peer = c != 1;
			s.pressure = 0.6; /* the worker waits more than half */
			s.cpu.contention = 0.6;
			s.alt_cpu = true;
			s.better_cpu = true;
			nvmfd_auto_update(&a, &s);
		}
		if (c == 0) {
			assert_int_equal(a.place, NVMFD_AUTO_BOUND);
			assert_int_equal(a.moves, 0);
		} else {
			assert_int_not_equal(a.place, NVMFD_AUTO_BOUND);
			assert_int_equal(a.last_reason, NVMFD_AUTO_R_PRESSURE);
		}
	}
	/* a starvation beside the peer still moves it at once */
	nvmfd_auto_init(&a, NULL);
	a.home_cpu = 0;
	s = arriving(0, NVMFD_AUTO_IN_HOME, -1);
	s.local_peer = true;
	s.pending_ns = 60 * MS;
	s.alt_cpu = true;
	assert_true(nvmfd_auto_update(&a, &s));
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_STARVED);
}

static void test_percpu_shared_cpu_goes_unbound(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 3; i++) {
		s = quiet_cpu(i);
		shared(&s);
		assert_int_equal(nvmfd_auto_update(&a, &s), i == 2);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_SHARED_CPU);
	assert_int_equal(a.poll_us, 0);
	/* unbound, the mean of both CPUs is what it sees: no poll, stays */
	for (; i < 600; i++) {
		s = quiet_cpu(i);
		shared(&s);
		s.cpu.idle = 0.3;
		s.cpu.others = 0.3;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.moves, 1);
	assert_int_equal(a.poll_changes, 0);
	/* QD 32 now: not latency bound, home after 2 windows */
	for (unsigned int n = 0; n < 6; n++, i++) {
		s = quiet_cpu(i);
		shared(&s);
		s.qd = 32;
		assert_int_equal(nvmfd_auto_update(&a, &s), n == 5);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_RECOVERED);
	assert_int_equal(a.moves, 2);

	/* the other CPU leaves a poller room: moved there, and it polls */
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 3; i++) {
		s = quiet_cpu(i);
		shared(&s);
		s.alt_quiet = true;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_MOVED);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_SHARED_CPU);
	for (; i < 10; i++) {
		s = quiet_cpu(i);
		latency(&s); /* the new CPU: others 0.05 */
		s.home.others = 0.35;
		s.spare_cpu = true;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_MOVED);
	assert_int_not_equal(a.poll_us, 0);

	/* no other CPU idle, the rule off, or --auto-bound: stays home */
	for (unsigned int c = 0; c < 3; c++) {
		nvmfd_auto_knobs_init(&k);
		if (c == 1)
			k.spare_idle_min = 0;
		if (c == 2)
			k.bound = true;
		nvmfd_auto_init(&a, &k);
		for (i = 0; i < 100; i++) {
			s = quiet_cpu(i);
			shared(&s);
			if (c == 0)
				s.spare_cpu = false;
			nvmfd_auto_update(&a, &s);
		}
		assert_int_equal(a.place, NVMFD_AUTO_BOUND);
		assert_int_equal(a.moves, 0);
	}
}

/* The shared-CPU rule's edges: the way home while still latency bound
 * needs the io_cpu's others at half the leaving level (0.2 is inside the
 * band: stays away; 0.1: home); a queue that has moved before waits out
 * the hold; a polling queue is not moved by it (it has room to poll);
 * freeze decides nothing; a contended CPU is the contention rule's. */
static void test_percpu_shared_cpu_edges(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i, n;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	i = feed_shared(&a, 0, 3);
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	for (n = 0; n < 100; n++, i++) {
		s = quiet_cpu(i);
		shared(&s);
		s.home.others = 0.2;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	for (n = 0; n < 6; n++, i++) {
		s = quiet_cpu(i);
		shared(&s);
		s.home.others = 0.1;
		assert_int_equal(nvmfd_auto_update(&a, &s), n == 5);
	}
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_RECOVERED);
	/* home again, now with a hold: the rule waits for it (1 s = 10
	 * ticks from the return), then leaves */
	for (n = 0; n < 10; n++, i++) {
		s = quiet_cpu(i);
		shared(&s);
		nvmfd_auto_update(&a, &s);
		if (n < 9)
			assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	}
	assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
	assert_int_equal(a.moves, 3);

	/* polling at home (others 0.05), then a host thread takes 0.35:
	 * under the poller's stop level (0.5), so it keeps polling there and
	 * the rule leaves it alone */
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 3; i++) {
		s = quiet_cpu(i);
		latency(&s);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_not_equal(a.poll_us, 0);
	feed_shared(&a, i, 100);
	assert_int_not_equal(a.poll_us, 0);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.moves, 0);

	/* freeze */
	nvmfd_auto_knobs_init(&k);
	k.freeze = true;
	nvmfd_auto_init(&a, &k);
	feed_shared(&a, 0, 100);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	assert_int_equal(a.moves, 0);

	/* contended as well (contention 0.6, no better CPU), the other CPU
	 * idle 0.3 (spare_cpu): since session 29 the shared-CPU move, not
	 * the contention rule's "stays" (which kept session 29's QD 1 phases
	 * at 121k IOPS against unbound's 204k); without an idle CPU: stays */
	for (unsigned int spare = 0; spare < 2; spare++) {
		nvmfd_auto_init(&a, NULL);
		for (i = 0; i < 100; i++) {
			s = quiet_cpu(i);
			shared(&s);
			s.cpu.contention = s.home.contention = 0.6;
			s.alt_cpu = false;
			s.spare_cpu = spare;
			nvmfd_auto_update(&a, &s);
		}
		if (spare) {
			assert_int_equal(a.place, NVMFD_AUTO_UNBOUND);
			assert_int_equal(a.last_reason, NVMFD_AUTO_R_SHARED_CPU);
			assert_int_equal(a.moves, 1);
		} else {
			assert_int_equal(a.place, NVMFD_AUTO_BOUND);
			assert_int_equal(a.moves, 0);
			assert_true(a.stays > 0);
		}
	}
}

/* The shared-CPU rule's condition comes and goes every 2 s for 10 minutes
 * (the queue's depth switches between 1 and 32): each quick departure
 * after a return doubles the hold, so the queue moves a few dozen times
 * at most, not twice per period (300). */
static void test_percpu_shared_cpu_flapping_backs_off(void **state)
{
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (unsigned int i = 0; i < 6000; i++) {
		s = quiet_cpu(i);
		shared(&s);
		if ((i / 20) % 2)
			s.qd = 32; /* deep for 2 s: not latency bound */
		nvmfd_auto_update(&a, &s);
	}
	assert_true(a.moves >= 2);
	assert_true(a.moves <= 40);
	assert_true(a.hold_ns > a.k.hold_ns);
}

/* Budgets: tightened step by step while a heavy queue makes a peer wait,
 * at most budget_shift_max, one step per hold; eased when the peers are
 * calm; alternating signals change nothing; the knobs hold. */
static void test_budget_tighten_and_ease(void **state)
{
	struct nvmfd_auto_knobs k;
	struct nvmfd_auto a;
	struct nvmfd_auto_sample s;
	unsigned int i, first = 0;

	(void)state;
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 100; i++) {
		s = quiet(i);
		s.heavy = true;
		s.peer_delay_ns = 1 * MS;
		if (nvmfd_auto_update(&a, &s) && !first)
			first = i;
	}
	assert_int_equal(first, 2); /* the window */
	assert_int_equal(a.budget_shift, 3);
	assert_int_equal(a.budget_changes, 3);
	assert_int_equal(a.budget_reason, NVMFD_AUTO_R_STARVING_PEER);
	assert_int_equal(a.last_reason, NVMFD_AUTO_R_NONE);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	/* a heavy queue whose peers do not wait keeps what it has; calm
	 * peers ease it one step per hold */
	for (unsigned int j = 0; j < 15; j++, i++) {
		s = quiet(i);
		s.heavy = true;
		s.peer_delay_ns = 50 * US;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.budget_shift, 2);
	assert_int_equal(a.budget_reason, NVMFD_AUTO_R_PEER_CALM);
	for (unsigned int j = 0; j < 100; j++, i++) {
		s = quiet(i);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.budget_shift, 0);
	assert_int_equal(a.budget_changes, 6);

	/* not heavy: a waiting peer is not its doing */
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 50; i++) {
		s = quiet(i);
		s.peer_delay_ns = 5 * MS;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.budget_changes, 0);
	/* every other sample: never a full window */
	for (; i < 1000; i++) {
		s = quiet(i);
		s.heavy = true;
		s.peer_delay_ns = i % 2 ? 1 * MS : 300 * US;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.budget_changes, 0);

	nvmfd_auto_knobs_init(&k);
	k.no_budget = true;
	nvmfd_auto_init(&a, &k);
	for (i = 0; i < 50; i++) {
		s = quiet(i);
		s.heavy = true;
		s.peer_delay_ns = 1 * MS;
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.budget_shift, 0);
	nvmfd_auto_knobs_init(&k);
	k.freeze = true;
	nvmfd_auto_init(&a, &k);
	for (i = 0; i < 50; i++) {
		s = quiet(i);
		s.heavy = true;
		s.peer_delay_ns = 1 * MS;
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.budget_changes, 0);
}

static void test_cq_source(void **state)
{
	struct nvmfd_auto_knobs k;

	(void)state;
	nvmfd_auto_knobs_init(&k);
	/* alone on its CPU: its own ring, whatever is configured */
	assert_false(nvmfd_auto_cq_shared(&k, true, 0, 1000000));
	/* a peer there, few events: own ring */
	assert_false(nvmfd_auto_cq_shared(&k, false, 1, 19999));
	/* several queues and many events: the shared ring */
	assert_true(nvmfd_auto_cq_shared(&k, false, 1, 20000));
	assert_true(nvmfd_auto_cq_shared(&k, false, 7, 500000));
	k.cq_share_queues = 4;
	assert_false(nvmfd_auto_cq_shared(&k, false, 2, 500000));
	assert_true(nvmfd_auto_cq_shared(&k, false, 3, 500000));
	/* the knobs keep the configuration */
	nvmfd_auto_knobs_init(&k);
	k.no_cq = true;
	assert_false(nvmfd_auto_cq_shared(&k, false, 7, 500000));
	assert_true(nvmfd_auto_cq_shared(&k, true, 0, 0));
	nvmfd_auto_knobs_init(&k);
	k.freeze = true;
	assert_true(nvmfd_auto_cq_shared(&k, true, 0, 0));
}

/* The sample's queue depth: slots in use, or commands per pass that found
 * work. A RAM namespace completes inline, so a host at QD 32 leaves no
 * slot in use at the tick; with the slots alone (the old measure) its
 * queue looked latency bound and polled. */
static void test_qd_measure(void **state)
{
	struct nvmfd_auto a;
	unsigned int i;

	(void)state;
	assert_true(nvmfd_auto_qd(0, 0, 0) == 0);
	assert_true(nvmfd_auto_qd(3, 0, 0) == 3);
	/* QD 1 on RAM: one command per pass */
	assert_true(nvmfd_auto_qd(0, 10000, 10000) == 1);
	/* QD 32 on RAM: batches of 22 */
	assert_true(nvmfd_auto_qd(0, 220000, 10000) == 22);
	/* QD 32 on an asynchronous backend: completion-only passes make the
	 * per-pass figure small; the slots say 31 */
	assert_true(nvmfd_auto_qd(31, 3000, 6000) == 31);

	/* 5 us gaps (200k commands/s) at QD 32 on RAM, idle CPU: no polling */
	nvmfd_auto_init(&a, NULL);
	for (i = 0; i < 20; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		s.arrival_gap_ns = 5 * US;
		s.qd = nvmfd_auto_qd(0, 20000, 20000 / 22);
		assert_false(nvmfd_auto_update(&a, &s));
	}
	assert_int_equal(a.poll_us, 0);
	assert_int_equal(a.place, NVMFD_AUTO_BOUND);
	/* the same gaps at QD 1: polls after the window */
	for (; i < 23; i++) {
		struct nvmfd_auto_sample s = quiet(i);

		s.arrival_gap_ns = 5 * US;
		s.qd = nvmfd_auto_qd(0, 20000, 20000);
		nvmfd_auto_update(&a, &s);
	}
	assert_int_equal(a.poll_us, a.k.poll_min_us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_bound_and_stays_when_quiet),
		cmocka_unit_test(test_starvation_moves_at_once),
		cmocka_unit_test(test_starvation_without_alt_goes_unbound),
		cmocka_unit_test(test_contention_converges_and_recovers),
		cmocka_unit_test(test_noise_does_not_oscillate),
		cmocka_unit_test(test_flapping_backs_off),
		cmocka_unit_test(test_knob_bound_and_freeze),
		cmocka_unit_test(test_poll_on_off_and_period),
		cmocka_unit_test(test_poll_psi_gates),
		cmocka_unit_test(test_poll_self_contention_backs_off),
		cmocka_unit_test(test_clock_backwards_and_stats),
		cmocka_unit_test(test_percpu_split_polls),
		cmocka_unit_test(test_percpu_nosplit_does_not_poll),
		cmocka_unit_test(test_percpu_quiet_split_rides_out_bursts),
		cmocka_unit_test(test_percpu_poller_yields_to_a_job),
		cmocka_unit_test(test_percpu_poll_hysteresis_band),
		cmocka_unit_test(test_percpu_moves_only_for_a_better_cpu),
		cmocka_unit_test(test_percpu_flapping_backs_off),
		cmocka_unit_test(test_percpu_hog_alone_keeps_queue_away),
		cmocka_unit_test(test_percpu_contention_pins_only_to_a_quiet_cpu),
		cmocka_unit_test(test_percpu_contended_everywhere_latency_goes_unbound),
		cmocka_unit_test(test_percpu_shared_cpu_goes_unbound),
		cmocka_unit_test(test_percpu_shared_cpu_edges),
		cmocka_unit_test(test_percpu_shared_cpu_flapping_backs_off),
		cmocka_unit_test(test_budget_tighten_and_ease),
		cmocka_unit_test(test_cq_source),
		cmocka_unit_test(test_qd_measure),
		cmocka_unit_test(test_percpu_follows_incoming_cpu),
		cmocka_unit_test(test_percpu_incoming_home_is_not_shared),
		cmocka_unit_test(test_percpu_local_peer_keeps_queue),
		cmocka_unit_test(test_percpu_follow_restarts_after_a_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
