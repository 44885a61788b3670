/* SPDX-License-Identifier: MIT */
/*
 * tgt_fixture.h - an in-process nvmfd target for functional and hostile
 * tests: 127.0.0.1, port 0 (ephemeral), one subsystem TF_SUBNQN that allows
 * any host, with one RAM namespace (nsid 1, TF_NS_SIZE bytes, 512 B blocks).
 * Environment TF_NET=uring (or uring-single) runs it with --net uring
 * (single recv SQEs); the tweak may still override.
 */
#ifndef NVMFD_TESTS_TGT_FIXTURE_H
#define NVMFD_TESTS_TGT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cfg/cfg.h"
#include "internal/target.h"

#define TF_SUBNQN "nqn.2026-11.io.nvmfd:tt-test"
#define TF_NS_SIZE (64u << 20)
#define TF_ADDR "127.0.0.1"

struct tf_target {
	struct nvmfd_cfg *cfg;
	struct nvmfd_tgt *tgt;
	uint16_t port;
};

/** tf_tweak_fn - adjust the config before the target is created. */
typedef void (*tf_tweak_fn)(struct nvmfd_cfg *cfg);

/** tf_start() - build the config, create and start the target.
 *  Return: 0 or -errno (a message is printed). */
int tf_start(struct tf_target *t, tf_tweak_fn tweak);
/** tf_stop() - stop and destroy (idempotent). */
void tf_stop(struct tf_target *t);
/**
 * tf_wait_idle() - wait until the target has no controller and no queue
 * left (stats: "controllers" empty, every port's "nr_queues" 0). A port
 * counts a queue from accept until tcp_queue_free() closed every fd of it,
 * so once this returns the fds of all closed connections are gone.
 * @limit_s: bound of the wait (a hang, not a timing), seconds.
 * Return: 0, or -ETIMEDOUT (the last counts are printed).
 */
int tf_wait_idle(struct tf_target *t, unsigned int limit_s);

/* Test assertions: print the location and the values, exit 1. */
#define TF_CHECK(cond)                                                              \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                             \
			exit(1);                                                    \
		}                                                                   \
	} while (0)
#define TF_CHECK_EQ(a, b)                                                           \
	do {                                                                        \
		long long a__ = (long long)(a), b__ = (long long)(b);               \
		if (a__ != b__) {                                                   \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld (0x%llx) != %lld (0x%llx)\n", \
				__FILE__, __LINE__, #a, #b, a__, a__, b__, b__);   \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#endif /* NVMFD_TESTS_TGT_FIXTURE_H */
