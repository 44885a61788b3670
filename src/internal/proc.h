/* SPDX-License-Identifier: MIT */
/*
 * proc.h - the monotonic clock and the /proc readings the runtime, the
 * target's stats and the tools share (one parser each).
 */
#ifndef NVMFD_INTERNAL_PROC_H
#define NVMFD_INTERNAL_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** nvmfd__mono_ns() - CLOCK_MONOTONIC in nanoseconds. Context: any thread. */
uint64_t nvmfd__mono_ns(void);

/**
 * struct nvmfd_task_stat - per-thread (or per-process) scheduler figures.
 * @nvcsw:        voluntary context switches.
 * @nivcsw:       involuntary context switches.
 * @run_delay_ns: time runnable but waiting for a CPU (schedstat field 2), ns.
 */
struct nvmfd_task_stat {
	uint64_t nvcsw;
	uint64_t nivcsw;
	uint64_t run_delay_ns;
};

/**
 * nvmfd__proc_task_stat() - read /proc/<pid>/task/<tid>/{status,schedstat}
 * (@pid 0: "self"; @tid 0: the process's own status, summed over nothing).
 * Fields /proc does not offer stay 0.
 * Return: 0, or -errno when the status file cannot be read (thread gone).
 */
int nvmfd__proc_task_stat(int pid, int tid, struct nvmfd_task_stat *st);

/**
 * nvmfd__proc_task_run_delay() - the run delay (time runnable but waiting
 * for a CPU, schedstat field 2) of thread @tid of process @pid (0: self;
 * @tid 0: the process), ns: one small read of schedstat only (no status
 * file), for samplers that run every tick.
 * Return: 0, -errno (thread gone, schedstat not available), -ENODATA.
 */
int nvmfd__proc_task_run_delay(int pid, int tid, uint64_t *run_delay_ns);

/**
 * nvmfd__proc_task_sched() - time on a CPU (schedstat field 1) and run
 * delay (field 2) of thread @tid of process @pid (as
 * nvmfd__proc_task_run_delay()), ns; one small read.
 * Return: 0, -errno, -ENODATA.
 */
int nvmfd__proc_task_sched(int pid, int tid, uint64_t *exec_ns, uint64_t *run_delay_ns);

/**
 * struct nvmfd_proc_cpu - one CPU's counters since boot.
 * @online:       the CPU has a line in /proc/stat.
 * @idle_ns:      idle + iowait time (/proc/stat, clock ticks: the
 *                resolution is 1 / sysconf(_SC_CLK_TCK), 10 ms at 100 Hz).
 * @nice_ns:      user time of niced tasks (nice > 0), ns.
 * @total_ns:     user + nice + system + idle + iowait + irq + softirq +
 *                steal, ns.
 * @run_delay_ns: time tasks spent runnable and waiting on this CPU's run
 *                queue (/proc/schedstat, "cpuN" field 8), ns; 0 when the
 *                kernel has no CONFIG_SCHEDSTATS.
 */
struct nvmfd_proc_cpu {
	bool online;
	uint64_t idle_ns;
	uint64_t nice_ns;
	uint64_t total_ns;
	uint64_t run_delay_ns;
};

/**
 * nvmfd__proc_cpus() - per-CPU counters into @cpus[0..@max), indexed by
 * CPU number (CPUs >= @max are left out; offline ones stay zero).
 * @stat_path, @schedstat_path: NULL for /proc/stat and /proc/schedstat
 * (other paths for tests). *@has_delay: run_delay_ns was read (the
 * schedstat file exists and parsed).
 * Return: 1 + the highest CPU number seen (<= @max), -errno (no
 * /proc/stat), -ENODATA (no cpu line).
 */
int nvmfd__proc_cpus(const char *stat_path, const char *schedstat_path, struct nvmfd_proc_cpu *cpus,
		     unsigned int max, bool *has_delay);

/**
 * nvmfd__proc_psi_some_us() - the "some" total of a pressure-stall file
 * (/proc/pressure/cpu, a cgroup's cpu.pressure): microseconds in which at
 * least one task was runnable and waiting for a CPU, since boot (or since
 * the cgroup was created).
 * Return: 0, -errno (no PSI: kernel without CONFIG_PSI, or psi=0), -ENODATA
 *         (unexpected format).
 */
int nvmfd__proc_psi_some_us(const char *path, uint64_t *total_us);

/**
 * nvmfd__proc_cgroup_file() - the path of file @name (e.g. "cpu.pressure")
 * in this process's cgroup v2 directory, into @buf of @len bytes, if it
 * exists and is readable.
 * Return: 0, -ENOENT (no cgroup v2 mount, no "0::" line, no such file),
 *         -errno.
 */
int nvmfd__proc_cgroup_file(const char *name, char *buf, size_t len);

/**
 * nvmfd__proc_threads_ctxsw() - context switches summed over every live
 * thread of process @pid (0: self); the process's own status counts its
 * main thread only. Return: 0 or -errno (no such process).
 */
int nvmfd__proc_threads_ctxsw(int pid, uint64_t *nvcsw, uint64_t *nivcsw);

/**
 * nvmfd__proc_cpu_ticks() - utime and stime of process @pid (0: self) in
 * clock ticks (sysconf(_SC_CLK_TCK)), from /proc/<pid>/stat fields 14, 15.
 * Return: 0 or -errno.
 */
int nvmfd__proc_cpu_ticks(int pid, uint64_t *utime, uint64_t *stime);

#endif /* NVMFD_INTERNAL_PROC_H */
