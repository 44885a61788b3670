/* SPDX-License-Identifier: MIT */
/*
 * rt_int.h - private to src/rt (and its unit tests): the topology builder
 * and the placement counters, split out so they can be tested on synthetic
 * inputs without starting threads.
 *
 * Ownership: nvmfd__rt_topo_load() allocates, nvmfd__rt_topo_free() frees;
 * struct nvmfd__rt_placer is embedded storage (init/fini).
 */
#ifndef NVMFD_RT_RT_INT_H
#define NVMFD_RT_RT_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "internal/rt.h"

#define NVMFD__RT_NSCOPES 5

/**
 * struct nvmfd__rt_topo - runtime CPUs grouped into units per scope.
 * @cpus:     the runtime CPUs (requested set intersected with online CPUs).
 * @ncpus:    CPU_COUNT(&cpus).
 * @nunits:   number of units per scope (index: enum nvmfd_rt_scope).
 * @units:    per scope, @nunits[scope] CPU sets; units hold runtime CPUs
 *            only and are ordered by their lowest CPU.
 * @unit_of:  per scope, unit index of each CPU (-1: not a runtime CPU).
 */
struct nvmfd__rt_topo {
	cpu_set_t cpus;
	unsigned int ncpus;
	unsigned int nunits[NVMFD__RT_NSCOPES];
	cpu_set_t *units[NVMFD__RT_NSCOPES];
	short unit_of[NVMFD__RT_NSCOPES][CPU_SETSIZE];
};

/**
 * nvmfd__rt_topo_load() - read the CPU topology from a sysfs tree.
 * @sysfs_root: the ".../devices/system/cpu" directory (borrowed); NUMA nodes
 *              are read from its cpuN/nodeM entries, else from
 *              @sysfs_root/../node/nodeM/cpulist.
 * @want:       CPUs to use (borrowed), or NULL/empty for all online CPUs.
 * @out:        the new topology; free with nvmfd__rt_topo_free().
 *
 * Missing files are tolerated: no "online" file means the CPUs of @want (or
 * the cpuN directories); no thread siblings means one CPU per core; no cache
 * information means the cache unit is the NUMA node; no NUMA information
 * means one node.
 *
 * Return: 0, -EINVAL (no usable CPU), -ENOMEM.
 * Context: any thread; reads files.
 */
int nvmfd__rt_topo_load(const char *sysfs_root, const cpu_set_t *want,
			struct nvmfd__rt_topo **out);

/** nvmfd__rt_topo_free() - free a topology from nvmfd__rt_topo_load() (NULL ok). */
void nvmfd__rt_topo_free(struct nvmfd__rt_topo *topo);

/**
 * nvmfd__rt_parse_cpulist() - parse a sysfs CPU list ("0-3,8-11\n").
 * @s:   NUL-terminated text (borrowed).
 * @set: result (cleared first).
 * Return: number of CPUs, or -EINVAL on malformed text or CPUs >= CPU_SETSIZE.
 */
int nvmfd__rt_parse_cpulist(const char *s, cpu_set_t *set);

/**
 * nvmfd__rt_format_cpulist() - format @set as a CPU list ("0-3,8").
 * @set: CPUs (borrowed).  @buf/@len: output, always NUL-terminated.
 * Return: @buf.
 */
char *nvmfd__rt_format_cpulist(const cpu_set_t *set, char *buf, size_t len);

/**
 * struct nvmfd__rt_placer - per-CPU counters of placed queues.
 * @lock:   protects @count.
 * @cpus:   runtime CPUs.
 * @list:   runtime CPUs in ascending order, @ncpus entries.
 * @count:  queues placed per CPU (indexed by CPU number).
 */
struct nvmfd__rt_placer {
	pthread_mutex_t lock;
	cpu_set_t cpus;
	unsigned int ncpus;
	int list[CPU_SETSIZE];
	unsigned int count[CPU_SETSIZE];
};

/** nvmfd__rt_placer_init() - counters at zero for the CPUs in @cpus (borrowed).
 *  Return: 0, -EINVAL if @cpus is empty. */
int nvmfd__rt_placer_init(struct nvmfd__rt_placer *p, const cpu_set_t *cpus);
/** nvmfd__rt_placer_fini() - release @p's lock; counters are forgotten. */
void nvmfd__rt_placer_fini(struct nvmfd__rt_placer *p);

/**
 * nvmfd__rt_placer_place() - nvmfd_rt_place() on bare counters.
 * Return: the chosen CPU (always a runtime CPU).
 * Context: any thread (takes @p->lock).
 */
int nvmfd__rt_placer_place(struct nvmfd__rt_placer *p, enum nvmfd_rt_place policy,
			   unsigned int qid, const cpu_set_t *allowed, int incoming_cpu);

/** nvmfd__rt_placer_unplace() - drop one placement from @cpu (ignored if 0). */
void nvmfd__rt_placer_unplace(struct nvmfd__rt_placer *p, int cpu);

/** nvmfd__rt_placer_count() - queues placed on @cpu now. */
unsigned int nvmfd__rt_placer_count(struct nvmfd__rt_placer *p, int cpu);


/*
 * The worker ring of a bound pool (ring.c, internal/rt_ring.h): what
 * pool.c calls. Context: the pool's workers, except create/destroy.
 */
struct nvmfd_rt_ring;

/** nvmfd__rt_ring_create() - a ring for pool @pool_idx whose epoll fd is
 *  @epfd (borrowed). Return: 0, -ENOMEM, -errno from io_uring setup. */
int nvmfd__rt_ring_create(int epfd, unsigned int pool_idx, unsigned int sq_entries,
			  unsigned int cq_entries, struct nvmfd_rt_ring **out);
/** nvmfd__rt_ring_destroy() - free (NULL ok); after the workers joined. */
void nvmfd__rt_ring_destroy(struct nvmfd_rt_ring *r);
/** nvmfd__rt_ring_enter() - submit what is prepared; with @wait also arm
 *  the epoll request and sleep until a CQE is there. Return: 0, -errno. */
int nvmfd__rt_ring_enter(struct nvmfd_rt_ring *r, bool wait);
/** nvmfd__rt_ring_worker_reap() - reap (sinks called); *@epoll: the
 *  epoll set has something (an epoll CQE came since the last call). */
unsigned int nvmfd__rt_ring_worker_reap(struct nvmfd_rt_ring *r, bool *epoll);
/** nvmfd__rt_self_ring() - the ring of the pool the calling thread is a
 *  worker of (NULL: not a worker, or a pool without ring). */
struct nvmfd_rt_ring *nvmfd__rt_self_ring(void);

#endif /* NVMFD_RT_RT_INT_H */
