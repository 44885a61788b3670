/* SPDX-License-Identifier: MIT */
/*
 * cpulist.h - the item grammar of CPU lists such as "0-3,8,10-11", shared
 * by the config (--cpus, "cpus"), nvmf-perf (--cpus) and nvmf-bench (CPU
 * set specs). Each caller keeps its own separator rules, bounds and
 * messages; this only reads one "N" or "N-M" item. The config and
 * nvmf-perf also write CPU sets back in that form.
 */
#ifndef NVMFD_INTERNAL_CPULIST_H
#define NVMFD_INTERNAL_CPULIST_H

#include <sched.h>
#include <stddef.h>

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

/**
 * nvmfd__cpulist_format() - write @set as a CPU list ("0-1,3"; "" if empty).
 * @set: CPUs.
 * @buf: out, NUL-terminated; when too small, it ends in the item that did
 *       not fit, cut short.
 * @len: bytes at @buf, > 0.
 * Context: any thread.
 */
void nvmfd__cpulist_format(const cpu_set_t *set, char *buf, size_t len);

#endif /* NVMFD_INTERNAL_CPULIST_H */
