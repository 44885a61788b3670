/* SPDX-License-Identifier: MIT */
/*
 * host_check.h - what the host library's functional tests share: CHECK()
 * and a completion record that a host callback fills in.
 */
#ifndef NVMFD_TESTS_HOST_CHECK_H
#define NVMFD_TESTS_HOST_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvmfd/host.h>

/* Unless @cond holds: print where, the condition and the printf-style
 * message, and exit 1. */
#define CHECK(cond, ...)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fprintf(stderr, "\n");                                          \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

/* One command's completion, filled in by hc_cpl_cb(). */
struct hc_cpl {
	bool done;
	struct nvmfd_host_cpl cpl;
};

/* Host completion callback; @arg is a struct hc_cpl. */
static inline void hc_cpl_cb(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct hc_cpl *r = arg;

	r->cpl = *cpl;
	r->done = true;
}

#endif /* NVMFD_TESTS_HOST_CHECK_H */
