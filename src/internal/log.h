/* SPDX-License-Identifier: MIT */
/*
 * log.h - leveled, per-component logging to stderr.
 *
 * Lines look like "nvmfd: [tcp] ERR: ctrl 1 qid 2 cid 7: message". Anything
 * reachable per PDU or per I/O uses the _RATELIMIT variants. -EAGAIN is flow
 * control and is never logged.
 */
#ifndef NVMFD_INTERNAL_LOG_H
#define NVMFD_INTERNAL_LOG_H

#include <stdbool.h>

enum nvmfd_log_level {
	NVMFD_LOG_ERR = 0,
	NVMFD_LOG_WARN = 1,
	NVMFD_LOG_INFO = 2,
	NVMFD_LOG_DEBUG = 3,
};

/** nvmfd_log_set_level() - messages above @level are dropped (default INFO). */
void nvmfd_log_set_level(enum nvmfd_log_level level);
enum nvmfd_log_level nvmfd_log_get_level(void);
/** nvmfd_log_set_ident() - program name printed first ("nvmfd", "nvmf-perf"). */
void nvmfd_log_set_ident(const char *ident);
/** nvmfd_log_parse_level() - "err|warn|info|debug" -> level; -EINVAL if unknown. */
int nvmfd_log_parse_level(const char *s);

void nvmfd_log(enum nvmfd_log_level level, const char *comp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Returns true when a message from this call site may be printed now: at most
 * 10 per second per site. @state_ns_and_count: an array of TWO unsigned
 * longs (window start, count), zero-initialised, one per call site. */
bool nvmfd_log_ratelimit(unsigned long *state_ns_and_count);

#define NVMFD_ERR(comp, ...) nvmfd_log(NVMFD_LOG_ERR, comp, __VA_ARGS__)
#define NVMFD_WARN(comp, ...) nvmfd_log(NVMFD_LOG_WARN, comp, __VA_ARGS__)
#define NVMFD_INFO(comp, ...) nvmfd_log(NVMFD_LOG_INFO, comp, __VA_ARGS__)
#define NVMFD_DBG(comp, ...)                                                \
	do {                                                                \
		if (nvmfd_log_get_level() >= NVMFD_LOG_DEBUG)               \
			nvmfd_log(NVMFD_LOG_DEBUG, comp, __VA_ARGS__);      \
	} while (0)
#define NVMFD_ERR_RATELIMIT(comp, ...)                                      \
	do {                                                                \
		static unsigned long rl__[2];                               \
		if (nvmfd_log_ratelimit(rl__))                              \
			nvmfd_log(NVMFD_LOG_ERR, comp, __VA_ARGS__);        \
	} while (0)
#define NVMFD_WARN_RATELIMIT(comp, ...)                                     \
	do {                                                                \
		static unsigned long rl__[2];                               \
		if (nvmfd_log_ratelimit(rl__))                              \
			nvmfd_log(NVMFD_LOG_WARN, comp, __VA_ARGS__);       \
	} while (0)
#define NVMFD_INFO_RATELIMIT(comp, ...)                                     \
	do {                                                                \
		static unsigned long rl__[2];                               \
		if (nvmfd_log_ratelimit(rl__))                              \
			nvmfd_log(NVMFD_LOG_INFO, comp, __VA_ARGS__);       \
	} while (0)

#endif /* NVMFD_INTERNAL_LOG_H */
