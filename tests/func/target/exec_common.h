/* SPDX-License-Identifier: MIT */
/*
 * exec_common.h - helpers of the execution-model scenarios (included by one
 * test file each; everything is static): stats snapshots as json-c objects
 * and lookups of a test connection's queue in them.
 */
#ifndef NVMFD_TESTS_EXEC_COMMON_H
#define NVMFD_TESTS_EXEC_COMMON_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "net/sock.h"
#include "tcp_client.h"
#include "target/xprt.h"
#include "tgt_fixture.h"

/* A parsed nvmfd_tgt_stats_json() snapshot; json_object_put() it. */
static inline json_object *ex_stats(struct tf_target *t)
{
	char *buf = NULL;
	size_t len = 0;
	json_object *root;
	FILE *f = open_memstream(&buf, &len);

	TF_CHECK(f);
	TF_CHECK_EQ(nvmfd_tgt_stats_json(t->tgt, f), 0);
	fclose(f);
	root = json_tokener_parse(buf);
	if (!root)
		fprintf(stderr, "unparsable stats: %s\n", buf);
	TF_CHECK(root);
	free(buf);
	return root;
}

static inline json_object *ex_get(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v)) {
		fprintf(stderr, "no key '%s' in %s\n", k, json_object_to_json_string(o));
		exit(1);
	}
	return v;
}

static inline int64_t ex_int(json_object *o, const char *k)
{
	return json_object_get_int64(ex_get(o, k));
}

static inline json_object *ex_port(json_object *root)
{
	json_object *ports = ex_get(root, "ports");

	TF_CHECK_EQ(json_object_array_length(ports), 1);
	return json_object_array_get_idx(ports, 0);
}

/* The stats object of the queue whose peer is @c's socket, or NULL (not
 * accepted yet, or gone). */
static inline json_object *ex_find_queue(json_object *root, const struct tc_conn *c)
{
	json_object *queues = ex_get(ex_port(root), "queues");
	char peer[64];

	snprintf(peer, sizeof(peer), "%s:%d", TF_ADDR, nvmfd__sock_local_port(c->fd));
	for (size_t i = 0; i < json_object_array_length(queues); i++) {
		json_object *q = json_object_array_get_idx(queues, i);

		if (!strcmp(json_object_get_string(ex_get(q, "peer")), peer))
			return q;
	}
	return NULL;
}

/* The stats object of the queue whose peer is @c's socket (must exist). */
static inline json_object *ex_queue(json_object *root, const struct tc_conn *c)
{
	json_object *q = ex_find_queue(root, c);

	if (!q) {
		fprintf(stderr, "queue of local port %d not in the stats\n",
			nvmfd__sock_local_port(c->fd));
		exit(1);
	}
	return q;
}

/*
 * Counters are written by the queue owner after the response left: wait
 * (bounded, 10 s) until queue @c has counted @n backend completions.
 */
static inline void ex_wait_completions(struct tf_target *t, const struct tc_conn *c, int64_t n)
{
	for (int i = 0; i < 1000; i++) {
		json_object *root = ex_stats(t);
		int64_t v = ex_int(ex_queue(root, c), "backend_completions");

		json_object_put(root);
		if (v == n)
			return;
		TF_CHECK(v < n);
		usleep(10000);
	}
	fprintf(stderr, "queue never counted %lld backend completions\n", (long long)n);
	exit(1);
}

/* Write then read back @n 4 KiB blocks on @c (an I/O queue). Return: the
 * number of backend commands issued (2 * @n). */
static inline int64_t ex_rw(struct tc_conn *c, unsigned int n, uint32_t seed)
{
	static uint8_t wbuf[4096], rbuf[4096];
	struct nvmfd_cqe cqe;

	for (unsigned int i = 0; i < n; i++) {
		tc_pattern(wbuf, sizeof(wbuf), seed + i);
		TF_CHECK_EQ(tc_rw(c, true, 1, (uint64_t)(seed % 64) * 1024 + i * 8, 8, wbuf,
				  sizeof(wbuf), 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		memset(rbuf, 0, sizeof(rbuf));
		TF_CHECK_EQ(tc_rw(c, false, 1, (uint64_t)(seed % 64) * 1024 + i * 8, 8, rbuf,
				  sizeof(rbuf), 0, &cqe), 0);
		TF_CHECK_EQ(tc_status(&cqe), 0);
		TF_CHECK(!memcmp(rbuf, wbuf, sizeof(wbuf)));
	}
	return 2 * (int64_t)n;
}

/* The first CPU this process may run on. */
static inline int ex_first_cpu(void)
{
	cpu_set_t set;

	TF_CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return 0;
}

/* The first two CPUs this process may run on, into @cpus. Return: how
 * many there are (0..2). */
static inline int ex_two_cpus(int cpus[2])
{
	cpu_set_t set;
	int n = 0;

	TF_CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/* Stop the target: each of the @n connections sees a clean EOF. */
static inline void ex_stop_and_close(struct tf_target *t, struct tc_conn **c, int n)
{
	tf_stop(t);
	for (int i = 0; i < n; i++) {
		TF_CHECK_EQ(tc_wait_eof(c[i]), 0);
		tc_close(c[i]);
	}
}

/*
 * A CPU the queue's worker never gets, made deterministic: a work item that
 * holds a bound pool's only concurrency slot (it does not return until
 * gate_open(), and declares no blocking section), so nothing else placed
 * on that CPU runs meanwhile.
 */
struct gate {
	struct nvmfd_work work;
	long open;
	long started;
};

static inline void gate_fn(struct nvmfd_work *w)
{
	struct gate *g = (struct gate *)w;

	__atomic_store_n(&g->started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE))
		usleep(1000);
}

/* Hold the bound pool of @cpu until gate_open(). */
static inline void gate_hold(struct gate *g, struct tf_target *t, int cpu)
{
	memset(g, 0, sizeof(*g));
	nvmfd_work_init(&g->work, nvmfd__tgt_rt(t->tgt), gate_fn, cpu);
	TF_CHECK(nvmfd_rt_queue_work(&g->work));
	for (int i = 0; !__atomic_load_n(&g->started, __ATOMIC_ACQUIRE); i++) {
		TF_CHECK(i < 10000);
		usleep(1000);
	}
}

static inline void gate_open(struct gate *g)
{
	__atomic_store_n(&g->open, 1, __ATOMIC_RELEASE);
	nvmfd_rt_work_cancel_sync(&g->work);
}

#endif /* NVMFD_TESTS_EXEC_COMMON_H */
