// SPDX-License-Identifier: MIT
/*
 * auto.c - nvmf-perf --exec auto: the signals a queue thread's controller
 * (src/rt/auto.c) is fed with, and what its decision means for the thread
 * (perf.h, "--exec auto"; doc/execution-model.md §8.3). The /proc readers
 * are here; the monitor thread that calls them every tick is in main.c.
 * Everything but perf_read_cpu_loads() is pure (no clock, no /proc).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"

/* "cpuN a b c ..." at the start of a line: N and the numbers after it. */
static int cpu_line(const char *line, unsigned long long *v, int max, int *cpu)
{
	char *end;
	long c;
	int n = 0;

	if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
		return -1;
	c = strtol(line + 3, &end, 10);
	if (c < 0 || c >= CPU_SETSIZE)
		return -1;
	while (n < max) {
		const char *p = end;

		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v[n++] = strtoull(p, &end, 10);
	}
	*cpu = (int)c;
	return n;
}

static int for_lines(const char *text, struct perf_cpu_loads *l, uint64_t ns_per_tick, bool rd)
{
	bool any = false;

	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long long v[10];
		int cpu, n = cpu_line(line, v, 10, &cpu);

		if (rd && n >= 8) {
			l->cpu[cpu].run_delay_ns = v[7];
			any = true;
		} else if (!rd && n >= 4) {
			/* user nice system idle iowait irq softirq steal */
			uint64_t busy = v[0] + v[1] + v[2] + (n > 5 ? v[5] : 0) + (n > 6 ? v[6] : 0) +
					(n > 7 ? v[7] : 0);
			uint64_t idle = v[3] + (n > 4 ? v[4] : 0);

			l->cpu[cpu].busy_ns = busy * ns_per_tick;
			l->cpu[cpu].total_ns = (busy + idle) * ns_per_tick;
			any = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!any)
		return -ENODATA;
	if (rd)
		l->have_rd = true;
	else
		l->have_stat = true;
	return 0;
}

int perf_parse_proc_stat(const char *text, struct perf_cpu_loads *l, uint64_t ns_per_tick)
{
	return for_lines(text, l, ns_per_tick, false);
}

int perf_parse_proc_schedstat(const char *text, struct perf_cpu_loads *l)
{
	return for_lines(text, l, 0, true);
}

/* The whole of a small /proc file into a heap buffer (NUL-terminated). */
static char *slurp(const char *path)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (len < cap - 1)
			break;
		char *nb = realloc(buf, cap * 2);

		if (!nb) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

int perf_read_cpu_loads(struct perf_cpu_loads *l)
{
	long hz = sysconf(_SC_CLK_TCK);
	char *t;
	int ret;

	memset(l, 0, sizeof(*l));
	t = slurp("/proc/stat");
	if (!t)
		return -errno ? -errno : -ENOMEM;
	ret = perf_parse_proc_stat(t, l, (uint64_t)(1000000000 / (hz > 0 ? hz : 100)));
	free(t);
	if (ret < 0)
		return ret;
	t = slurp("/proc/schedstat"); /* absent without CONFIG_SCHEDSTATS */
	if (t)
		perf_parse_proc_schedstat(t, l);
	free(t);
	return 0;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

void perf_cpu_contention(const struct perf_cpu_loads *a, const struct perf_cpu_loads *b,
			 const uint64_t *own_ns, double *out)
{
	for (int c = 0; c < CPU_SETSIZE; c++) {
		const struct perf_cpu_load *x = &a->cpu[c], *y = &b->cpu[c];
		double v = 0;

		out[c] = 0;
		if (y->total_ns <= x->total_ns || y->busy_ns < x->busy_ns)
			continue;
		{
			uint64_t wall = y->total_ns - x->total_ns;
			uint64_t busy = y->busy_ns - x->busy_ns;
			uint64_t own = own_ns ? own_ns[c] : 0;

			/* /proc/stat counts in ticks: own time can exceed it */
			v = busy > own ? (double)(busy - own) / (double)wall : 0;
			if (a->have_rd && b->have_rd && y->run_delay_ns >= x->run_delay_ns) {
				double rd = (double)(y->run_delay_ns - x->run_delay_ns) / (double)wall;

				if (rd > v)
					v = rd;
			}
		}
		out[c] = clamp01(v);
	}
}

void perf_auto_queue_init(struct perf_auto_queue *q, const struct nvmfd_auto_knobs *k,
			  int io_cpu, const cpu_set_t *home)
{
	memset(q, 0, sizeof(*q));
	nvmfd_auto_init(&q->ctl, k);
	q->io_cpu = io_cpu;
	q->cpu = -1;
	CPU_ZERO(&q->home);
	if (home && CPU_COUNT(home))
		q->home = *home;
	else if (io_cpu >= 0 && io_cpu < CPU_SETSIZE)
		CPU_SET(io_cpu, &q->home);
	q->home_all = CPU_COUNT(&q->home) > 1;
	q->mask = q->home;
}

int perf_auto_cpu_now(const struct perf_auto_queue *q)
{
	switch (q->ctl.place) {
	case NVMFD_AUTO_BOUND:
		return q->home_all ? -1 : q->io_cpu;
	case NVMFD_AUTO_MOVED:
		return q->cpu;
	default:
		return -1;
	}
}

/* How long the thread has had work without making a pass (see perf.h). */
static uint64_t pending(struct perf_auto_queue *q, const struct perf_auto_obs *o)
{
	const struct perf_auto_obs *p = &q->prev;
	bool work;

	if (o->loops != p->loops) {
		q->work_since_ns = 0;
		return 0;
	}
	if (!p->waiting && !o->waiting) {
		/* running at both ticks and no pass between: a pass takes
		 * microseconds, so it waited for a CPU the whole tick, unless
		 * its run delay says it did not: then it was busy outside the
		 * loop (a DH step of --reauth-interval computing, or blocked in
		 * the library waiting for the controller's answer) */
		if (o->have_ss && p->have_ss && o->now_ns > p->now_ns &&
		    2 * (o->ss.run_delay_ns >= p->ss.run_delay_ns ?
				 o->ss.run_delay_ns - p->ss.run_delay_ns :
				 0) < o->now_ns - p->now_ns) {
			q->work_since_ns = 0;
			return 0;
		}
		if (!q->work_since_ns)
			q->work_since_ns = p->now_ns;
		return o->now_ns - q->work_since_ns;
	}
	/* asleep: work is input unread or a wait that should have ended
	 * (a short slack for the timer) */
	work = o->waiting && (o->readable || o->now_ns > o->wait_until_ns + 10000000ull);
	if (!work) {
		q->work_since_ns = 0;
		return 0;
	}
	if (!q->work_since_ns) {
		q->work_since_ns = o->now_ns;
		return 0;
	}
	return o->now_ns - q->work_since_ns;
}

/* @q->kick = the @cpus less contended than @from (the CPU to leave);
 * false if there is none (pushing it onto a worse CPU helps nobody). */
static bool kick(struct perf_auto_queue *q, const cpu_set_t *cpus, int from,
		 const double *contention)
{
	if (from < 0 || from >= CPU_SETSIZE || !CPU_ISSET(from, cpus))
		return false;
	CPU_ZERO(&q->kick);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus) && c != from && contention[c] < contention[from])
			CPU_SET(c, &q->kick);
	if (!CPU_COUNT(&q->kick))
		return false;
	q->kicks++;
	return true;
}

unsigned int perf_auto_step(struct perf_auto_queue *q, const struct perf_auto_obs *o,
			    const double *contention, const cpu_set_t *cpus)
{
	struct nvmfd_auto_sample s;
	enum nvmfd_auto_place before = q->ctl.place;
	unsigned int before_poll = q->ctl.poll_us, ret = 0;
	int cur, alt = -1;
	double best = 2;
	bool starved;

	if (!q->have_prev) {
		q->prev = *o;
		q->have_prev = true;
		return 0;
	}
	if (o->now_ns < q->prev.now_ns)
		return 0; /* a clock going backwards: skip the sample */
	memset(&s, 0, sizeof(s));
	s.now_ns = o->now_ns;
	s.pending_ns = pending(q, o);
	q->pending_ns = s.pending_ns;
	if (s.pending_ns > q->max_pending_ns)
		q->max_pending_ns = s.pending_ns;
	{
		uint64_t wall = o->now_ns - q->prev.now_ns;
		uint64_t rd = o->ss.run_delay_ns >= q->prev.ss.run_delay_ns ?
				      o->ss.run_delay_ns - q->prev.ss.run_delay_ns : 0;
		uint64_t slices = o->ss.timeslices >= q->prev.ss.timeslices ?
					  o->ss.timeslices - q->prev.ss.timeslices : 0;
		uint64_t done = o->completions >= q->prev.completions ?
					o->completions - q->prev.completions : 0;

		if (slices)
			s.queue_delay_ns = rd / slices;
		/* it passes, but in crumbs: waiting for a CPU 90 % of the tick
		 * or more is starvation too (a nice 0 thread behind nice -20
		 * hogs gets ~0.4 % of its CPU and still makes a pass a tick) */
		if (wall && rd >= wall - wall / 10 && rd > s.pending_ns) {
			s.pending_ns = rd;
			q->pending_ns = rd;
			if (rd > q->max_pending_ns)
				q->max_pending_ns = rd;
		}
		s.pressure = wall ? clamp01((double)rd / (double)wall) : 0;
		if (done) {
			s.arrival_gap_ns = wall / done;
			s.qd = (double)(o->qd_sum - q->prev.qd_sum) / (double)done;
			s.cpl_per_s = wall ? done * 1000000000ull / wall : 0;
		}
	}
	cur = perf_auto_cpu_now(q);
	if (cur < 0)
		cur = o->cpu;
	if (cur >= 0 && cur < CPU_SETSIZE)
		s.sys_pressure = contention[cur];
	if (q->home_all) {
		/* widen again only when no home CPU would hold it back */
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &q->home) && contention[c] > s.home_pressure)
				s.home_pressure = contention[c];
	} else if (q->io_cpu >= 0 && q->io_cpu < CPU_SETSIZE) {
		s.home_pressure = contention[q->io_cpu];
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, cpus) || c == cur || (!q->home_all && c == q->io_cpu))
			continue;
		if (contention[c] < best) {
			best = contention[c];
			alt = c;
		}
	}
	s.alt_cpu = alt >= 0 && best <= q->ctl.k.pressure_lo;
	q->prev = *o;
	nvmfd_auto_update(&q->ctl, &s);
	starved = s.pending_ns && s.pending_ns >= q->ctl.k.starve_ns && !q->ctl.k.bound &&
		  !q->ctl.k.freeze;
	if (q->ctl.poll_us != before_poll)
		ret |= PERF_AUTO_POLL;
	if (q->ctl.place != before) {
		cpu_set_t m;

		CPU_ZERO(&m);
		if (q->ctl.place == NVMFD_AUTO_BOUND) {
			q->cpu = -1;
			m = q->home;
		} else if (q->ctl.place == NVMFD_AUTO_MOVED && alt >= 0) {
			q->cpu = alt;
			CPU_SET(alt, &m);
		} else {
			q->cpu = -1;
			m = *cpus;
		}
		/* applied (and logged) even when the mask stays: at an unbound
		 * home, UNBOUND allows the same CPUs (only a kick moves it) */
		q->mask = m;
		ret |= PERF_AUTO_MOVE;
		if (q->ctl.place == NVMFD_AUTO_UNBOUND && kick(q, cpus, cur, contention))
			ret |= PERF_AUTO_MOVE | PERF_AUTO_KICK;
	} else if (q->ctl.place == NVMFD_AUTO_UNBOUND && starved &&
		   kick(q, cpus, o->cpu, contention)) {
		ret |= PERF_AUTO_MOVE | PERF_AUTO_KICK;
	}
	return ret;
}
