/* SPDX-License-Identifier: MIT */
/*
 * cpulist.h - the item grammar of CPU lists such as "0-3,8,10-11", shared
 * by the config (--cpus, "cpus"), nvmf-perf (--cpus) and nvmf-bench (CPU
 * set specs). Each caller keeps its own separator rules, bounds and
 * messages; this only reads one "N" or "N-M" item.
 */
#ifndef NVMFD_INTERNAL_CPULIST_H
#define NVMFD_INTERNAL_CPULIST_H

/**
 * nvmfd__cpulist_item() - read one "N" or "N-M" item of a CPU list.
 * @p:     in: where the item starts; out: the first character after it, or
 *         on error the character that is wrong.
 * @first: out: N (decimal; ULONG_MAX when it overflows).
 * @last:  out: M, or N for a single CPU (ULONG_MAX when it overflows).
 *
 * No bound or order is checked: the caller compares @first, @last with its
 * own limits.
 * Return: 0; -EINVAL when *@p is not a decimal digit; -EDOM when a '-' is
 *         not followed by a digit (*@p is then the character after '-').
 * Context: any thread.
 */
int nvmfd__cpulist_item(const char **p, unsigned long *first, unsigned long *last);

#endif /* NVMFD_INTERNAL_CPULIST_H */
