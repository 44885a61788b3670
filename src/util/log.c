// SPDX-License-Identifier: MIT
/* log.c - leveled logging to stderr; see internal/log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal/log.h"
#include "internal/proc.h"

static enum nvmfd_log_level log_level = NVMFD_LOG_INFO;
static const char *log_ident = "nvmfd";

static const char *const level_names[] = {
	[NVMFD_LOG_ERR] = "ERR",
	[NVMFD_LOG_WARN] = "WARN",
	[NVMFD_LOG_INFO] = "INFO",
	[NVMFD_LOG_DEBUG] = "DEBUG",
};

void nvmfd_log_set_level(enum nvmfd_log_level level)
{
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

enum nvmfd_log_level nvmfd_log_get_level(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

void nvmfd_log_set_ident(const char *ident)
{
	log_ident = ident;
}

int nvmfd_log_parse_level(const char *s)
{
	for (unsigned int i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcasecmp(s, level_names[i]))
			return (int)i;
	if (!strcasecmp(s, "error"))
		return NVMFD_LOG_ERR;
	if (!strcasecmp(s, "warning"))
		return NVMFD_LOG_WARN;
	return -EINVAL;
}

void nvmfd_log(enum nvmfd_log_level level, const char *comp, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (level > nvmfd_log_get_level())
		return;
	n = snprintf(line, sizeof(line), "%s: [%s] %s: ", log_ident, comp, level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One fputs per line so concurrent threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}

/*
 * state[0]: start of the current 1 s window (ns, truncated to unsigned long),
 * state[1]: messages printed in it. Races between threads may let a few extra
 * lines through; that is acceptable for a rate limit.
 */
bool nvmfd_log_ratelimit(unsigned long *state)
{
	unsigned long now = (unsigned long)nvmfd__mono_ns(), start;

	start = __atomic_load_n(&state[0], __ATOMIC_RELAXED);
	if (now - start > 1000000000ul) {
		__atomic_store_n(&state[0], now, __ATOMIC_RELAXED);
		__atomic_store_n(&state[1], 1, __ATOMIC_RELAXED);
		return true;
	}
	return __atomic_add_fetch(&state[1], 1, __ATOMIC_RELAXED) <= 10;
}
