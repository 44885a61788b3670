// SPDX-License-Identifier: MIT
/*
 * auto.c - the per-queue controller of --exec auto (rt.h, "Adaptive
 * execution"; doc/execution-model.md §8). Pure: state in, sample in,
 * decision out; no clock, no /proc, no locks.
 *
 * Hysteresis comes from three things: a change needs @window consecutive
 * samples that agree (except a starvation, which acts at once), a
 * placement is kept at least the current hold, and a return home that is
 * quickly followed by a departure doubles the hold (exponential back-off,
 * capped), so a noisy signal cannot make the queue flap faster than once
 * per hold.
 */
#include <string.h>

#include <json-c/json.h>

#include "internal/rt.h"

#define MS 1000000ull
#define AUTO_HOLD_MAX_FACTOR 64u

void nvmfd_auto_knobs_init(struct nvmfd_auto_knobs *k)
{
	memset(k, 0, sizeof(*k));
	k->starve_ns = 50 * MS;
	k->delay_hi_ns = 2 * MS;
	k->pressure_hi = 0.5;
	k->pressure_lo = 0.1;
	k->window = 3;
	k->hold_ns = 1000 * MS;
	k->poll_gap_ns = 200000;
	k->poll_qd_max = 4;
	k->poll_min_us = 10;
	k->poll_max_us = 200;
	k->psi_poll_max = 0.25;
	k->poll_others_max = 0.25;
	k->poll_delay_max = 0.2;
	k->poll_stop_window = 2;
	k->better_margin = 0.25;
	k->budget_delay_ns = 500000;
	k->budget_shift_max = 3;
	k->cq_share_queues = 2;
	k->cq_share_eps = 20000;
	k->spare_idle_min = 0.2;
	k->home_others_max = 0.5;
}

void nvmfd_auto_init(struct nvmfd_auto *a, const struct nvmfd_auto_knobs *k)
{
	memset(a, 0, sizeof(*a));
	if (k)
		a->k = *k;
	else
		nvmfd_auto_knobs_init(&a->k);
	if (!a->k.window)
		a->k.window = 1;
	if (!a->k.poll_stop_window)
		a->k.poll_stop_window = 1;
	a->place = NVMFD_AUTO_BOUND;
	a->home_cpu = -1;
	a->follow_cpu = -1;
	a->hold_ns = a->k.hold_ns;
	a->poll_hold_ns = a->k.hold_ns;
	a->rehome_hold_ns = a->k.hold_ns;
}

static void set_place(struct nvmfd_auto *a, enum nvmfd_auto_place p, enum nvmfd_auto_reason r,
		      uint64_t now)
{
	a->place = p;
	a->last_reason = r;
	a->moves++;
	a->since_ns = now;
	a->hot = a->cool = a->share = a->follow = 0;
	a->shared_away = r == NVMFD_AUTO_R_SHARED_CPU;
}

/* The queue's work is latency bound: low QD, short gaps. */
static bool latency_bound(const struct nvmfd_auto_knobs *k, const struct nvmfd_auto_sample *s)
{
	return s->arrival_gap_ns && s->arrival_gap_ns <= k->poll_gap_ns && s->qd <= k->poll_qd_max;
}

/* A departure from home soon after a return means the signal flaps, so
 * hold longer next time. */
static void depart_backoff(struct nvmfd_auto *a, uint64_t now)
{
	if (a->home_ns && now - a->home_ns < 4 * a->hold_ns &&
	    a->hold_ns < a->k.hold_ns * AUTO_HOLD_MAX_FACTOR)
		a->hold_ns *= 2;
}

/*
 * Leaving io_cpu (or an alternative that is no better). A starved queue
 * takes the CPU with headroom at once. A contended one, where per-CPU
 * signals say more, is pinned there only when it is latency bound (it
 * may poll there) and that CPU is quiet (alt_quiet); else it goes
 * unbound, so that the scheduler may give it the other CPU's idle time
 * and what the contended io_cpu still leaves (session 29, the starvation
 * scenario: pinned to the other CPU beside its sibling queue and the
 * host, a QD 32 queue did 10-19 % fewer IOPS than unbound).
 */
static void depart(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s,
		   enum nvmfd_auto_reason r)
{
	enum nvmfd_auto_place to;
	bool pin = s->alt_cpu && (r == NVMFD_AUTO_R_STARVED || !s->cpu.known ||
				  (s->alt_quiet && latency_bound(&a->k, s)));

	if (a->place == NVMFD_AUTO_BOUND) {
		to = pin ? NVMFD_AUTO_MOVED : NVMFD_AUTO_UNBOUND;
		depart_backoff(a, s->now_ns);
	} else {
		to = NVMFD_AUTO_UNBOUND; /* the other CPU is no better either */
	}
	if (to != a->place)
		set_place(a, to, r, s->now_ns);
	else
		a->shared_away = false; /* away for contention now */
}

/* Packets arrive at home from a peer on this machine: the thread the
 * queue shares its CPU with is, typically, that peer's (rt.h, incoming
 * CPU). */
static bool beside_local_peer(const struct nvmfd_auto_sample *s)
{
	return s->local_peer && s->incoming == NVMFD_AUTO_IN_HOME;
}

/* The shared-CPU rule (knobs.spare_idle_min): latency bound, not polling,
 * others run on this CPU more than a poller may share it with, another
 * CPU idle. Per-CPU signals only. */
static bool shared_cpu(const struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	const struct nvmfd_auto_knobs *k = &a->k;

	return k->spare_idle_min > 0 && s->cpu.known && !a->poll_us && s->spare_cpu &&
	       !beside_local_peer(s) &&
	       s->cpu.others > k->poll_others_max && latency_bound(k, s);
}

/*
 * The incoming-CPU rule (rt.h): at home, packets on another CPU that is
 * no more contended, the same one @window samples in a row. Return: true
 * when the home moves there (a->home_cpu, a->rehomes).
 */
static bool follow_packets(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	const struct nvmfd_auto_knobs *k = &a->k;

	if (k->no_follow || s->incoming != NVMFD_AUTO_IN_OTHER || s->incoming_cpu < 0 ||
	    a->home_cpu < 0 || s->incoming_cpu == a->home_cpu) {
		a->follow = 0;
		return false;
	}
	a->follow = s->incoming_cpu == a->follow_cpu ? a->follow + 1 : 1;
	a->follow_cpu = s->incoming_cpu;
	if (a->follow < k->window)
		return false;
	if (a->rehome_ns && s->now_ns - a->rehome_ns < a->rehome_hold_ns)
		return false;
	/* a home that moves again soon (a peer thread the scheduler
	 * migrates, or one that follows us) holds twice as long next time;
	 * 4 calm holds halve it */
	if (a->rehome_ns && s->now_ns - a->rehome_ns < 4 * a->rehome_hold_ns) {
		if (a->rehome_hold_ns < k->hold_ns * AUTO_HOLD_MAX_FACTOR)
			a->rehome_hold_ns *= 2;
	} else if (a->rehome_ns && a->rehome_hold_ns > k->hold_ns) {
		a->rehome_hold_ns /= 2;
	}
	a->home_cpu = s->incoming_cpu;
	a->rehomes++;
	a->rehome_ns = s->now_ns;
	a->follow = a->share = a->hot = 0;
	a->moves++;
	a->last_reason = NVMFD_AUTO_R_INCOMING;
	/* polling was judged on the old CPU; the new one decides afresh
	 * (beside the peer it would take the peer's CPU) */
	if (a->poll_us) {
		a->poll_us = 0;
		a->poll_changes++;
	}
	return true;
}

static bool decide_place(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	enum nvmfd_auto_place before = a->place;
	const struct nvmfd_auto_knobs *k = &a->k;
	bool starved = k->starve_ns && s->pending_ns >= k->starve_ns;
	bool qdelay = k->delay_hi_ns && s->queue_delay_ns >= k->delay_hi_ns;
	bool pressed = s->pressure >= k->pressure_hi;
	bool in_hold = s->now_ns - a->since_ns < a->hold_ns;
	bool percpu = s->cpu.known;
	bool home_calm = s->home_pressure <= k->pressure_lo;
	bool shared;

	if (starved)
		a->starvations++;
	if (k->bound || k->freeze)
		return false;
	if (starved) {
		depart(a, s, NVMFD_AUTO_R_STARVED);
		return a->place != before;
	}
	/* before the contention rules: the CPU the packets arrive on is no
	 * more contended than home (else the owner says IN_BUSY), and a
	 * contended home judges the queue at its new home from then on */
	if (a->place == NVMFD_AUTO_BOUND && follow_packets(a, s))
		return true;
	if (percpu) {
		/* the CPU the queue runs on: its worker waits, or others wait
		 * there (the contention of this CPU, not the machine's) */
		pressed = pressed || s->cpu.contention >= k->pressure_hi;
		home_calm = home_calm && s->home.known && s->home.contention <= k->pressure_lo;
	}
	/* beside its peer (the incoming-CPU rule, rt.h): contention is the
	 * peer's too, so none counts for leaving */
	if (a->place == NVMFD_AUTO_BOUND && beside_local_peer(s))
		qdelay = pressed = false;
	a->hot = qdelay || pressed ? a->hot + 1 : 0;
	if (!a->hot)
		a->staying = false;
	/* counted on every sample at home, before the contention rule may
	 * return; a contended CPU is that rule's to judge */
	shared = a->place == NVMFD_AUTO_BOUND && a->hot < k->window && shared_cpu(a, s);
	a->share = shared ? a->share + 1 : 0;
	if (a->hot >= k->window && !in_hold) {
		if (percpu && !s->alt_cpu && !s->better_cpu && a->place == NVMFD_AUTO_BOUND &&
		    shared_cpu(a, s)) {
			/* as loaded everywhere, but another CPU has idle time
			 * and the queue is latency bound: unbound, each
			 * wake-up may take that idle time (session 29's phase
			 * run: QD 1 phases at CPU contention ~0.5 stayed bound,
			 * 121k IOPS against unbound's 204k) */
			depart_backoff(a, s->now_ns);
			set_place(a, NVMFD_AUTO_UNBOUND, NVMFD_AUTO_R_SHARED_CPU, s->now_ns);
			return true;
		}
		if (percpu && !s->alt_cpu && !s->better_cpu) {
			/* every CPU is as loaded: a move would gain nothing */
			a->stays++;
			if (!a->staying) {
				a->staying = true; /* a new episode: worth a log line */
				return true;
			}
			return false;
		}
		depart(a, s, qdelay ? NVMFD_AUTO_R_QUEUE_DELAY : NVMFD_AUTO_R_PRESSURE);
		return a->place != before;
	}
	if (a->place == NVMFD_AUTO_BOUND) {
		/* the first decision of a new queue needs no hold: its
		 * placement was the default, not a choice */
		if (a->share >= k->window && (!in_hold || !a->moves)) {
			depart_backoff(a, s->now_ns);
			set_place(a, s->alt_cpu && s->alt_quiet ? NVMFD_AUTO_MOVED : NVMFD_AUTO_UNBOUND,
				  NVMFD_AUTO_R_SHARED_CPU, s->now_ns);
			return true;
		}
		/* home and calm for 4 holds: forget half of the back-off */
		if (a->home_ns && s->now_ns - a->home_ns >= 4 * a->hold_ns &&
		    a->hold_ns > k->hold_ns) {
			a->hold_ns /= 2;
			a->home_ns = s->now_ns;
		}
		return false;
	}
	/* away from home: come back once the io_cpu is quiet for a while
	 * (and, away by the shared-CPU rule, once the queue is no longer
	 * latency bound or the io_cpu's others are down to half of what
	 * made it leave: the band between is the hysteresis) */
	if (a->shared_away && latency_bound(k, s) && s->home.known &&
	    s->home.others > k->poll_others_max / 2)
		home_calm = false;
	/* nobody waits on an io_cpu a hog has to itself: its others say
	 * whether there is room to come back to */
	if (percpu && s->home.known && k->home_others_max > 0 &&
	    s->home.others > k->home_others_max)
		home_calm = false;
	a->cool = home_calm && !qdelay && !pressed ? a->cool + 1 : 0;
	if (a->cool >= 2 * k->window && !in_hold) {
		set_place(a, NVMFD_AUTO_BOUND, NVMFD_AUTO_R_RECOVERED, s->now_ns);
		a->home_ns = s->now_ns;
		return true;
	}
	return false;
}

static unsigned int fit_period(const struct nvmfd_auto_knobs *k, uint64_t gap_ns)
{
	uint64_t us = 2 * gap_ns / 1000;

	if (us < k->poll_min_us)
		us = k->poll_min_us;
	if (us > k->poll_max_us)
		us = k->poll_max_us;
	return (unsigned int)us;
}

static bool set_poll(struct nvmfd_auto *a, unsigned int us, enum nvmfd_auto_reason r)
{
	if (us == a->poll_us)
		return false;
	a->poll_us = us;
	a->poll_changes++;
	a->last_reason = r;
	return true;
}

/* Polling stopped because the CPU became contended: if that came soon
 * after it was turned on, the poller probably caused it (it shares its CPU
 * with someone busy), so wait twice as long before polling again. */
static void poll_backoff(struct nvmfd_auto *a, uint64_t now)
{
	if (a->poll_on_ns && now - a->poll_on_ns < 4 * a->poll_hold_ns &&
	    a->poll_hold_ns < a->k.hold_ns * AUTO_HOLD_MAX_FACTOR)
		a->poll_hold_ns *= 2;
	a->poll_off_ns = now;
}

/* Polling would take a CPU someone else needs, or already does. Per CPU:
 * the worker's own run delay, the CPU's contention and the share others
 * run there; else the pool pressure and PSI. Return: the first signal
 * over its bound, or NONE. */
enum nvmfd_auto_cause nvmfd_auto_poll_cause(const struct nvmfd_auto_knobs *k,
					    const struct nvmfd_auto_sample *s)
{
	if (k->delay_hi_ns && s->queue_delay_ns >= k->delay_hi_ns)
		return NVMFD_AUTO_C_QUEUE_DELAY;
	if (s->cpu.known) {
		if (s->pressure >= k->poll_delay_max)
			return NVMFD_AUTO_C_RUN_DELAY;
		if (s->cpu.contention >= k->pressure_hi)
			return NVMFD_AUTO_C_CONTENTION;
		if (s->cpu.others >= 2 * k->poll_others_max)
			return NVMFD_AUTO_C_OTHERS;
		return NVMFD_AUTO_C_NONE;
	}
	if (s->pressure >= k->pressure_hi)
		return NVMFD_AUTO_C_RUN_DELAY;
	if (s->sys_pressure >= k->pressure_hi)
		return NVMFD_AUTO_C_PSI;
	return NVMFD_AUTO_C_NONE;
}

/* The CPU has headroom for a poller to start: the start gate, stricter
 * than the stop rule (nvmfd_auto_poll_cause()); the band between them is
 * the hysteresis, so a running poller is not judged by it (without schedstat
 * the CPU's contention is estimated from "no idle time left", which
 * a poller makes true itself). */
static bool poll_room(const struct nvmfd_auto_knobs *k, const struct nvmfd_auto_sample *s)
{
	if (s->pressure > k->pressure_lo)
		return false;
	if (s->cpu.known)
		return s->cpu.contention <= k->pressure_lo && s->cpu.others <= k->poll_others_max;
	return s->sys_pressure <= k->psi_poll_max;
}

static bool decide_poll(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	const struct nvmfd_auto_knobs *k = &a->k;
	enum nvmfd_auto_cause cause = nvmfd_auto_poll_cause(k, s);
	bool latency = latency_bound(k, s);
	unsigned int want;

	if (k->freeze)
		return false;
	if (k->no_poll)
		return set_poll(a, 0, NVMFD_AUTO_R_CONTENDED);
	if (cause != NVMFD_AUTO_C_NONE) {
		a->lat = 0;
		if (!a->poll_us)
			return false;
		/* a poller is stopped by contention that lasts: a tick-long
		 * burst of someone else's work would cost the whole poll hold
		 * and gain that someone almost nothing (it is over by then) */
		if (++a->poll_hot < k->poll_stop_window)
			return false;
		a->poll_hot = a->idle = 0;
		a->poll_cause = cause;
		poll_backoff(a, s->now_ns);
		return set_poll(a, 0, NVMFD_AUTO_R_CONTENDED);
	}
	if (a->poll_hot) {
		a->poll_blips++; /* ridden out */
		a->poll_hot = 0;
	}
	a->lat = latency && poll_room(k, s) ? a->lat + 1 : 0;
	/* while polling, only the work decides "idle" (no arrivals, long
	 * gaps or a deep queue), not the start gate */
	a->idle = latency ? 0 : a->idle + 1;
	if (!a->poll_us) {
		if (a->lat < k->window)
			return false;
		if (a->poll_off_ns && s->now_ns - a->poll_off_ns < a->poll_hold_ns)
			return false; /* backing off after a self-inflicted contention */
		a->poll_on_ns = s->now_ns;
		return set_poll(a, fit_period(k, s->arrival_gap_ns), NVMFD_AUTO_R_LATENCY);
	}
	/* polling and calm for 4 holds: forget half of the back-off */
	if (s->now_ns - a->poll_on_ns >= 4 * a->poll_hold_ns && a->poll_hold_ns > k->hold_ns) {
		a->poll_hold_ns /= 2;
		a->poll_on_ns = s->now_ns;
	}
	if (a->idle >= k->window)
		return set_poll(a, 0, NVMFD_AUTO_R_IDLE);
	if (!latency)
		return false;
	want = fit_period(k, s->arrival_gap_ns);
	/* re-fit only on a real change: 25 % either way */
	if (4 * (uint64_t)want > 5 * (uint64_t)a->poll_us ||
	    5 * (uint64_t)want < 3 * (uint64_t)a->poll_us)
		return set_poll(a, want, NVMFD_AUTO_R_GAPS);
	return false;
}

static bool set_budget(struct nvmfd_auto *a, unsigned int shift, enum nvmfd_auto_reason r,
		       uint64_t now)
{
	a->budget_shift = shift;
	a->budget_changes++;
	a->budget_ns = now;
	a->budget_reason = r;
	a->starving = a->calm = 0;
	return true;
}

/* A heavy queue that makes its worker's other queues wait gets smaller
 * slices and passes; calm peers give them back, one step at a time. */
static bool decide_budget(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	const struct nvmfd_auto_knobs *k = &a->k;
	bool in_hold = a->budget_ns && s->now_ns - a->budget_ns < k->hold_ns;

	if (k->freeze || k->no_budget || !k->budget_delay_ns)
		return false;
	a->starving = s->heavy && s->peer_delay_ns >= k->budget_delay_ns ? a->starving + 1 : 0;
	a->calm = s->peer_delay_ns < k->budget_delay_ns / 4 ? a->calm + 1 : 0;
	if (a->starving >= k->window && a->budget_shift < k->budget_shift_max && !in_hold)
		return set_budget(a, a->budget_shift + 1, NVMFD_AUTO_R_STARVING_PEER, s->now_ns);
	if (a->calm >= 2 * k->window && a->budget_shift && !in_hold)
		return set_budget(a, a->budget_shift - 1, NVMFD_AUTO_R_PEER_CALM, s->now_ns);
	return false;
}

bool nvmfd_auto_cq_shared(const struct nvmfd_auto_knobs *k, bool configured, unsigned int queues,
			  uint64_t events_per_s)
{
	if (k->freeze || k->no_cq)
		return configured;
	return queues + 1 >= k->cq_share_queues && queues && events_per_s >= k->cq_share_eps;
}

double nvmfd_auto_qd(double in_flight, uint64_t cmds, uint64_t passes)
{
	double per_pass = passes ? (double)cmds / (double)passes : 0;

	return in_flight > per_pass ? in_flight : per_pass;
}

bool nvmfd_auto_update(struct nvmfd_auto *a, const struct nvmfd_auto_sample *s)
{
	bool changed;

	if (!a->started) {
		a->started = true;
		a->last_ns = a->since_ns = s->now_ns;
	}
	if (s->now_ns < a->last_ns)
		return false; /* a clock going backwards: ignore the sample */
	a->time_ns[a->place] += s->now_ns - a->last_ns;
	if (a->poll_us)
		a->poll_time_ns += s->now_ns - a->last_ns;
	a->last_ns = s->now_ns;
	changed = decide_place(a, s);
	/* a queue that just left a starved CPU re-evaluates polling from
	 * scratch on its new CPU */
	if (changed)
		a->lat = 0;
	changed |= decide_poll(a, s);
	changed |= decide_budget(a, s);
	return changed;
}

static const char *const place_names[NVMFD_AUTO__NPLACE] = { "bound", "moved", "unbound" };
static const char *const reason_names[NVMFD_AUTO__NREASON] = {
	[NVMFD_AUTO_R_NONE] = "none",		  [NVMFD_AUTO_R_STARVED] = "starved",
	[NVMFD_AUTO_R_QUEUE_DELAY] = "queue_delay", [NVMFD_AUTO_R_PRESSURE] = "pressure",
	[NVMFD_AUTO_R_RECOVERED] = "recovered",	  [NVMFD_AUTO_R_LATENCY] = "latency",
	[NVMFD_AUTO_R_IDLE] = "idle",		  [NVMFD_AUTO_R_CONTENDED] = "contended",
	[NVMFD_AUTO_R_GAPS] = "gaps",
	[NVMFD_AUTO_R_STARVING_PEER] = "starving_peer", [NVMFD_AUTO_R_PEER_CALM] = "peer_calm",
	[NVMFD_AUTO_R_SHARED_CPU] = "shared_cpu", [NVMFD_AUTO_R_INCOMING] = "incoming_cpu",
};

static const char *const cause_names[NVMFD_AUTO__NCAUSE] = {
	[NVMFD_AUTO_C_NONE] = "none",		  [NVMFD_AUTO_C_QUEUE_DELAY] = "queue_delay",
	[NVMFD_AUTO_C_RUN_DELAY] = "run_delay",	  [NVMFD_AUTO_C_CONTENTION] = "cpu_contention",
	[NVMFD_AUTO_C_OTHERS] = "cpu_others",	  [NVMFD_AUTO_C_PSI] = "sys_pressure",
};

const char *nvmfd_auto_cause_name(enum nvmfd_auto_cause c)
{
	return (unsigned int)c < NVMFD_AUTO__NCAUSE ? cause_names[c] : "?";
}

const char *nvmfd_auto_place_name(enum nvmfd_auto_place p)
{
	return (unsigned int)p < NVMFD_AUTO__NPLACE ? place_names[p] : "?";
}

const char *nvmfd_auto_reason_name(enum nvmfd_auto_reason r)
{
	return (unsigned int)r < NVMFD_AUTO__NREASON ? reason_names[r] : "?";
}

json_object *nvmfd_auto_stats_obj(const struct nvmfd_auto *a)
{
	json_object *o = json_object_new_object(), *t;

	if (!o)
		return NULL;
	json_object_object_add(o, "mode", json_object_new_string(nvmfd_auto_place_name(a->place)));
	json_object_object_add(o, "poll_us", json_object_new_int((int)a->poll_us));
	json_object_object_add(o, "moves", json_object_new_uint64(a->moves));
	json_object_object_add(o, "poll_changes", json_object_new_uint64(a->poll_changes));
	json_object_object_add(o, "starvations", json_object_new_uint64(a->starvations));
	json_object_object_add(o, "last_reason",
			       json_object_new_string(nvmfd_auto_reason_name(a->last_reason)));
	t = json_object_new_object();
	for (unsigned int i = 0; t && i < NVMFD_AUTO__NPLACE; i++)
		json_object_object_add(t, place_names[i],
				       json_object_new_uint64(a->time_ns[i] / MS));
	json_object_object_add(o, "time_ms", t);
	json_object_object_add(o, "poll_time_ms", json_object_new_uint64(a->poll_time_ns / MS));
	json_object_object_add(o, "hold_ms", json_object_new_uint64(a->hold_ns / MS));
	json_object_object_add(o, "poll_hold_ms", json_object_new_uint64(a->poll_hold_ns / MS));
	json_object_object_add(o, "budget_shift", json_object_new_int((int)a->budget_shift));
	json_object_object_add(o, "budget_changes", json_object_new_uint64(a->budget_changes));
	json_object_object_add(o, "budget_reason",
			       json_object_new_string(nvmfd_auto_reason_name(a->budget_reason)));
	json_object_object_add(o, "stays", json_object_new_uint64(a->stays));
	json_object_object_add(o, "rehomes", json_object_new_uint64(a->rehomes));
	json_object_object_add(o, "rehome_hold_ms", json_object_new_uint64(a->rehome_hold_ns / MS));
	json_object_object_add(o, "poll_blips", json_object_new_uint64(a->poll_blips));
	json_object_object_add(o, "poll_cause",
			       json_object_new_string(nvmfd_auto_cause_name(a->poll_cause)));
	return o;
}
