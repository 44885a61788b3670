// SPDX-License-Identifier: MIT
/*
 * poll.c - the clock, the idle-poll state machine and the rx/tx budgets
 * (doc/execution-model.md §3-4). Pure functions of their
 * inputs except nvmfd_now_ns(); the caller passes the time in.
 */
#include <time.h>

#include "internal/proc.h"
#include "internal/rt.h"

uint64_t nvmfd_now_ns(void)
{
	return nvmfd__mono_ns();
}

void nvmfd_idle_poll_init(struct nvmfd_idle_poll *ip, unsigned int period_us)
{
	ip->period_ns = (uint64_t)period_us * 1000;
	ip->last_ns = 0;
	ip->have_last = false;
	ip->polls = 0;
	ip->sleeps = 0;
}

bool nvmfd_idle_poll_update(struct nvmfd_idle_poll *ip, bool progressed, uint64_t now_ns)
{
	if (progressed) {
		ip->last_ns = now_ns;
		ip->have_last = true;
		ip->polls++;
		return true;
	}
	if (!ip->period_ns)
		goto sleep;
	if (!ip->have_last) {
		/* idle since this pass: e.g. the first pass after a wake-up */
		ip->last_ns = now_ns;
		ip->have_last = true;
	}
	/* a clock that went backwards counts as no time passed */
	if (now_ns < ip->last_ns || now_ns - ip->last_ns < ip->period_ns) {
		ip->polls++;
		return true;
	}
sleep:
	ip->have_last = false;
	ip->sleeps++;
	return false;
}

void nvmfd_budget_init(struct nvmfd_budget *b, uint64_t bytes_max, uint64_t pdus_max)
{
	b->bytes_max = bytes_max;
	b->pdus_max = pdus_max;
	b->bytes = 0;
	b->pdus = 0;
	b->deadline_ns = 0;
	b->exhausted = 0;
}

void nvmfd_budget_start_pass(struct nvmfd_budget *b, uint64_t now_ns, uint64_t duration_us)
{
	b->deadline_ns = duration_us ? now_ns + duration_us * 1000 : 0;
	nvmfd_budget_start_slice(b);
}

void nvmfd_budget_start_slice(struct nvmfd_budget *b)
{
	b->bytes = 0;
	b->pdus = 0;
}

bool nvmfd_budget_left(const struct nvmfd_budget *b)
{
	if (b->bytes_max && b->bytes >= b->bytes_max)
		return false;
	if (b->pdus_max && b->pdus >= b->pdus_max)
		return false;
	return true;
}

bool nvmfd_budget_charge(struct nvmfd_budget *b, uint64_t bytes, uint64_t pdus)
{
	bool was_left = nvmfd_budget_left(b);

	b->bytes += bytes;
	b->pdus += pdus;
	if (nvmfd_budget_left(b))
		return true;
	if (was_left)
		b->exhausted++;
	return false;
}

bool nvmfd_budget_expired(const struct nvmfd_budget *b, uint64_t now_ns)
{
	return b->deadline_ns && now_ns >= b->deadline_ns;
}
