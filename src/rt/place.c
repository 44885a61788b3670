// SPDX-License-Identifier: MIT
/*
 * place.c - io_cpu placement policies (doc/execution-model.md §2.2):
 * rr is the legacy nvme-tcp/nvmet-tcp scheme ((qid - 1) mod CPUs), the
 * least-loaded counter follows the upstream discussion about spreading
 * queues of many controllers, incoming-cpu uses SO_INCOMING_CPU.
 * Every placement is counted per CPU so least-loaded and the stats see all
 * of them, whatever policy made them.
 */
#include <errno.h>
#include <string.h>

#include "rt/rt_int.h"

int nvmfd__rt_placer_init(struct nvmfd__rt_placer *p, const cpu_set_t *cpus)
{
	int ret;

	memset(p, 0, sizeof(*p));
	if (!CPU_COUNT(cpus))
		return -EINVAL;
	ret = pthread_mutex_init(&p->lock, NULL);
	if (ret)
		return -ret;
	p->cpus = *cpus;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus))
			p->list[p->ncpus++] = c;
	return 0;
}

void nvmfd__rt_placer_fini(struct nvmfd__rt_placer *p)
{
	pthread_mutex_destroy(&p->lock);
}

/* Fewest placed queues among @allowed, ties to the lowest CPU. Lock held. */
static int least_loaded(struct nvmfd__rt_placer *p, const cpu_set_t *allowed)
{
	int best = -1;

	for (unsigned int i = 0; i < p->ncpus; i++) {
		int c = p->list[i];

		if (allowed && !CPU_ISSET(c, allowed))
			continue;
		if (best < 0 || p->count[c] < p->count[best])
			best = c;
	}
	return best;
}

int nvmfd__rt_placer_place(struct nvmfd__rt_placer *p, enum nvmfd_rt_place policy,
			   unsigned int qid, const cpu_set_t *allowed, int incoming_cpu)
{
	cpu_set_t mask;
	int cpu = -1;

	/* CPUs outside the runtime are never chosen; an allowed set with no
	 * runtime CPU in it means "anywhere" rather than failing the queue. */
	if (allowed) {
		CPU_AND(&mask, allowed, &p->cpus);
		allowed = CPU_COUNT(&mask) ? &mask : NULL;
	}

	pthread_mutex_lock(&p->lock);
	switch (policy) {
	case NVMFD_RT_PLACE_RR:
		/* legacy: (qid - 1) mod CPUs over the runtime list; the admin
		 * queue (qid 0) lands where I/O queue 1 does. */
		cpu = p->list[(qid ? qid - 1 : 0) % p->ncpus];
		break;
	case NVMFD_RT_PLACE_INCOMING_CPU:
		if (incoming_cpu >= 0 && incoming_cpu < CPU_SETSIZE &&
		    CPU_ISSET(incoming_cpu, &p->cpus)) {
			cpu = incoming_cpu;
			break;
		}
		cpu = least_loaded(p, allowed);
		break;
	case NVMFD_RT_PLACE_LEAST_LOADED:
	default:
		cpu = least_loaded(p, allowed);
		break;
	}
	p->count[cpu]++;
	pthread_mutex_unlock(&p->lock);
	return cpu;
}

void nvmfd__rt_placer_unplace(struct nvmfd__rt_placer *p, int cpu)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->count[cpu])
		p->count[cpu]--;
	pthread_mutex_unlock(&p->lock);
}

unsigned int nvmfd__rt_placer_count(struct nvmfd__rt_placer *p, int cpu)
{
	unsigned int n;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->count[cpu];
	pthread_mutex_unlock(&p->lock);
	return n;
}
