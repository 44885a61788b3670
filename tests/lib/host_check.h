/* SPDX-License-Identifier: MIT */
/*
 * host_check.h - what the host library's functional tests share: CHECK(),
 * a completion record that a host callback fills in, and the transport ID
 * of a loopback target.
 */
#ifndef NVMFD_TESTS_HOST_CHECK_H
#define NVMFD_TESTS_HOST_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* TCP/IPv4 transport ID of a target on 127.0.0.1:@port; @subnqn "" leaves
 * the subsystem to the host's default (the discovery NQN). */
static inline void hc_loop_trid(struct nvmfd_host_trid *t, const char *port, const char *subnqn)
{
	memset(t, 0, sizeof(*t));
	t->trtype = NVMFD_TRTYPE_TCP;
	t->adrfam = NVMFD_ADRFAM_IPV4;
	snprintf(t->traddr, sizeof(t->traddr), "127.0.0.1");
	snprintf(t->trsvcid, sizeof(t->trsvcid), "%s", port);
	snprintf(t->subnqn, sizeof(t->subnqn), "%s", subnqn);
}

/* A controller created with @o and connected to 127.0.0.1:@port, @subnqn
 * ("" = discovery), or exit 1 naming the library's reason. */
static inline struct nvmfd_host_ctrl *hc_loop_connect(const struct nvmfd_host_ctrl_opts *o,
						      const char *port, const char *subnqn)
{
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_trid t;
	int r;

	CHECK(nvmfd_host_ctrl_create(o, &c) == 0, "create");
	hc_loop_trid(&t, port, subnqn);
	r = nvmfd_host_ctrl_connect(c, &t);
	CHECK(r == 0, "connect to %s on %s: %d %s", subnqn[0] ? subnqn : "discovery", port, r,
	      nvmfd_host_ctrl_errmsg(c));
	return c;
}

/* An Asynchronous Event Request through the library's blocking admin path,
 * on its own thread (it waits until the target has an event or the
 * library's timeout). Start it with pthread_create(..., hc_aer_thread, a). */
struct hc_aer {
	struct nvmfd_host_ctrl *ctrl;
	struct nvmfd_host_cpl cpl;
	int ret;
};

static inline void *hc_aer_thread(void *p)
{
	struct hc_aer *a = p;
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_ASYNC_EVENT;
	a->ret = nvmfd_host_admin_cmd(a->ctrl, &sqe, NULL, 0, false, &a->cpl);
	return NULL;
}

#endif /* NVMFD_TESTS_HOST_CHECK_H */
