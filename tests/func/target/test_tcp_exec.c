// SPDX-License-Identifier: MIT
/*
 * test_tcp_exec.c - the execution features of the transport, seen through
 * the target's statistics:
 *  - --cq-pool shared: queues with the same io_cpu share one backend ring
 *    (same ring id, one shared ring with every queue as user, its completion
 *    counters cover every command) and I/O verifies; per-queue: no shared
 *    ring, each queue counts its own completions.
 *  - --backend-poll with idle polling: completions are found by peeking the
 *    CQ while polling (completion_peeks > 0); without it never.
 *  - --wq-per-ctrl: each controller's queues run on that controller's own
 *    pools (different worker threads from the global runtime and from each
 *    other); they go away with the controller; nothing leaks (fd count).
 */
#include <endian.h>

#include "exec_common.h"

static int g_cpu;

static void pin_one_cpu(struct nvmfd_cfg *cfg)
{
	CPU_ZERO(&cfg->exec.rt.cpus);
	CPU_SET(g_cpu, &cfg->exec.rt.cpus);
}

static void tweak_perq(struct nvmfd_cfg *cfg)
{
	pin_one_cpu(cfg);
	cfg->exec.cq_pool_shared = false;
}

static void tweak_shared(struct nvmfd_cfg *cfg)
{
	pin_one_cpu(cfg);
	cfg->exec.cq_pool_shared = true;
}

static void tweak_shared_poll(struct nvmfd_cfg *cfg)
{
	tweak_shared(cfg);
	cfg->exec.idle_poll_us = 100;
	cfg->exec.backend_poll = true;
}

static void run_cq_pool(const char *name, tf_tweak_fn tweak, bool shared)
{
	struct tc_conn adm, io1, io2;
	struct tf_target t;
	json_object *root, *port, *rings, *q0, *q1, *q2;
	uint16_t cntlid = 0;
	int64_t n1, n2;

	fprintf(stderr, "cq pool: %s\n", name);
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io1, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 63, 0, false,
				  false), 0);
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 63, 0, false,
				  false), 0);
	n1 = ex_rw(&io1, 40, 1);
	n2 = ex_rw(&io2, 25, 2);
	ex_wait_completions(&t, &io1, n1);
	ex_wait_completions(&t, &io2, n2);

	/* the ring's counters are added after its reap routed the ios */
	for (int i = 0; shared; i++) {
		json_object *r;

		root = ex_stats(&t);
		rings = ex_get(ex_port(root), "shared_rings");
		TF_CHECK_EQ(json_object_array_length(rings), 1);
		r = json_object_array_get_idx(rings, 0);
		if (ex_int(r, "completions") + ex_int(r, "peek_completions") == n1 + n2) {
			json_object_put(root);
			break;
		}
		json_object_put(root);
		TF_CHECK(i < 1000);
		usleep(10000);
	}
	root = ex_stats(&t);
	port = ex_port(root);
	rings = ex_get(port, "shared_rings");
	q0 = ex_queue(root, &adm);
	q1 = ex_queue(root, &io1);
	q2 = ex_queue(root, &io2);
	TF_CHECK_EQ(ex_int(q1, "io_cpu"), g_cpu);
	TF_CHECK_EQ(ex_int(q2, "io_cpu"), g_cpu);
	if (shared) {
		json_object *r;

		/* one ring for the CPU, the same for all three queues */
		TF_CHECK_EQ(json_object_array_length(rings), 1);
		r = json_object_array_get_idx(rings, 0);
		TF_CHECK_EQ(ex_int(r, "cpu"), g_cpu);
		TF_CHECK_EQ(ex_int(r, "users"), 3);
		TF_CHECK(!strcmp(json_object_get_string(ex_get(q1, "cq_pool")), "shared"));
		TF_CHECK_EQ(ex_int(q1, "ring"), ex_int(r, "id"));
		TF_CHECK_EQ(ex_int(q2, "ring"), ex_int(r, "id"));
		TF_CHECK_EQ(ex_int(q0, "ring"), ex_int(r, "id"));
		/* every completion went through the ring's one event source
		 * (or, polling, was peeked by a queue) */
		TF_CHECK_EQ(ex_int(r, "completions") + ex_int(r, "peek_completions"), n1 + n2);
		TF_CHECK(ex_int(r, "completion_events") >= 1 || ex_int(r, "peek_completions") > 0);
		if (ex_int(r, "completions") > 0)
			TF_CHECK(ex_int(r, "completion_events") >= 1);
		TF_CHECK(ex_int(r, "completion_events") <= ex_int(r, "completions") +
								   ex_int(r, "empty_events"));
	} else {
		TF_CHECK_EQ(json_object_array_length(rings), 0);
		TF_CHECK(!strcmp(json_object_get_string(ex_get(q1, "cq_pool")), "per-queue"));
		TF_CHECK_EQ(ex_int(q1, "ring"), -1);
		TF_CHECK_EQ(ex_int(q2, "ring"), -1);
	}
	TF_CHECK_EQ(ex_int(q1, "backend_completions"), n1);
	TF_CHECK_EQ(ex_int(q2, "backend_completions"), n2);
	json_object_put(root);

	/* A queue leaving keeps the ring for the others. */
	tc_close(&io2);
	TF_CHECK_EQ(ex_rw(&io1, 5, 3), 10);
	ex_wait_completions(&t, &io1, n1 + 10);
	if (shared) {
		for (int i = 0; i < 1000; i++) {
			root = ex_stats(&t);
			rings = ex_get(ex_port(root), "shared_rings");
			if (ex_int(json_object_array_get_idx(rings, 0), "users") == 2) {
				json_object_put(root);
				break;
			}
			json_object_put(root);
			TF_CHECK(i < 999);
			usleep(10000);
		}
	}
	tf_stop(&t);
	TF_CHECK_EQ(tc_wait_eof(&io1), 0);
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	tc_close(&io1);
	tc_close(&adm);
}

static void tweak_poll_only(struct nvmfd_cfg *cfg)
{
	/* a long idle period: the commands of the burst below arrive while
	 * the queue still polls */
	cfg->exec.idle_poll_us = 200000;
}

static void tweak_backend_poll(struct nvmfd_cfg *cfg)
{
	tweak_poll_only(cfg);
	cfg->exec.backend_poll = true;
}

static void run_backend_poll(const char *name, tf_tweak_fn tweak, bool bpoll)
{
	struct tc_conn adm, io;
	struct tf_target t;
	json_object *root, *q;
	uint16_t cntlid = 0;
	int64_t n, peeks0, events0, peeks, events;

	fprintf(stderr, "backend poll: %s\n", name);
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 63, 0, false,
				  false), 0);
	/* Let the queue poll out its period and sleep once: the ring's
	 * eventfd is watched from the first sleep on. */
	n = ex_rw(&io, 1, 6);
	ex_wait_completions(&t, &io, n);
	/* wait (bounded, 10 s) for the first sleep, i.e. a re-arm: a fixed
	 * 0.5 s was not always enough on a loaded machine */
	for (int i = 0;; i++) {
		root = ex_stats(&t);
		q = ex_queue(root, &io);
		if (ex_int(q, "rearms") > 0)
			break;
		json_object_put(root);
		TF_CHECK(i < 1000);
		usleep(10000);
	}
	peeks0 = ex_int(q, "completion_peeks");
	events0 = ex_int(q, "completion_events");
	json_object_put(root);

	n += ex_rw(&io, 50, 7);
	ex_wait_completions(&t, &io, n);
	root = ex_stats(&t);
	q = ex_queue(root, &io);
	peeks = ex_int(q, "completion_peeks") - peeks0;
	events = ex_int(q, "completion_events") - events0;
	if (bpoll)
		TF_CHECK(peeks > 0); /* found by peeking while the ring fd was unwatched */
	else
		TF_CHECK_EQ(peeks, 0); /* the ring fd stays watched */
	TF_CHECK(peeks + events >= 1);
	TF_CHECK(peeks + events <= 100);
	TF_CHECK(ex_int(q, "idle_polls") > 0);
	json_object_put(root);
	tf_stop(&t);
	TF_CHECK_EQ(tc_wait_eof(&io), 0);
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	tc_close(&io);
	tc_close(&adm);
}

static void tweak_per_ctrl(struct nvmfd_cfg *cfg)
{
	cfg->exec.wq_per_ctrl = true;
}

static void tweak_per_ctrl_shared(struct nvmfd_cfg *cfg)
{
	cfg->exec.wq_per_ctrl = true;
	cfg->exec.cq_pool_shared = true;
}

/* Add every worker tid of runtime JSON @rt to @tids (at most 64). */
static void collect_tids(json_object *rt, int *tids, int *n)
{
	json_object *pools = ex_get(rt, "pools");

	for (size_t i = 0; i < json_object_array_length(pools); i++) {
		json_object *w = ex_get(json_object_array_get_idx(pools, i), "workers");

		for (size_t j = 0; j < json_object_array_length(w) && *n < 64; j++)
			tids[(*n)++] = (int)ex_int(json_object_array_get_idx(w, j), "tid");
	}
}

static void run_per_ctrl(const char *name, tf_tweak_fn tweak)
{
	struct tc_conn adm[2], io[2];
	struct tf_target t;
	json_object *root, *pools;
	uint16_t cntlid[2] = { 0, 0 };
	int64_t n[2];
	int tids[3][64], ntids[3] = { 0, 0, 0 };

	fprintf(stderr, "per-controller pools: %s\n", name);
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	for (int c = 0; c < 2; c++) {
		TF_CHECK_EQ(tc_admin_enable(&adm[c], TF_ADDR, t.port, TF_SUBNQN, false, false,
					    &cntlid[c]), 0);
		TF_CHECK_EQ(tc_io_connect(&io[c], TF_ADDR, t.port, TF_SUBNQN, cntlid[c], 1, 63, 0,
					  false, false), 0);
	}
	TF_CHECK(cntlid[0] != cntlid[1]);
	for (int c = 0; c < 2; c++)
		n[c] = ex_rw(&io[c], 20, 11 + (uint32_t)c);
	for (int c = 0; c < 2; c++)
		ex_wait_completions(&t, &io[c], n[c]);

	root = ex_stats(&t);
	pools = ex_get(ex_port(root), "ctrl_pools");
	TF_CHECK_EQ(json_object_array_length(pools), 2);
	for (int c = 0; c < 2; c++) {
		json_object *qa = ex_queue(root, &adm[c]), *qi = ex_queue(root, &io[c]);
		json_object *p = NULL;

		TF_CHECK(!strcmp(json_object_get_string(ex_get(qa, "pool")), "ctrl"));
		TF_CHECK(!strcmp(json_object_get_string(ex_get(qi, "pool")), "ctrl"));
		TF_CHECK_EQ(ex_int(qa, "pool_cntlid"), cntlid[c]);
		TF_CHECK_EQ(ex_int(qi, "pool_cntlid"), cntlid[c]);
		for (size_t i = 0; i < 2; i++) {
			json_object *e = json_object_array_get_idx(pools, i);

			if (ex_int(e, "cntlid") == cntlid[c])
				p = e;
		}
		TF_CHECK(p);
		TF_CHECK_EQ(ex_int(p, "users"), 2);
		collect_tids(ex_get(p, "runtime"), tids[c], &ntids[c]);
		TF_CHECK(ntids[c] > 0);
	}
	collect_tids(ex_get(root, "runtime"), tids[2], &ntids[2]);
	TF_CHECK(ntids[2] > 0);
	/* three disjoint sets of worker threads */
	for (int a = 0; a < 3; a++)
		for (int b = a + 1; b < 3; b++)
			for (int i = 0; i < ntids[a]; i++)
				for (int j = 0; j < ntids[b]; j++)
					TF_CHECK(tids[a][i] != tids[b][j]);
	json_object_put(root);

	/* The first controller goes: its pools go with it, the other's stay
	 * and keep working. */
	tc_close(&io[0]);
	tc_close(&adm[0]);
	for (int i = 0;; i++) {
		root = ex_stats(&t);
		pools = ex_get(ex_port(root), "ctrl_pools");
		if (json_object_array_length(pools) == 1) {
			TF_CHECK_EQ(ex_int(json_object_array_get_idx(pools, 0), "cntlid"),
				    cntlid[1]);
			json_object_put(root);
			break;
		}
		json_object_put(root);
		TF_CHECK(i < 1000);
		usleep(10000);
	}
	TF_CHECK_EQ(ex_rw(&io[1], 5, 99), 10);
	tf_stop(&t);
	TF_CHECK_EQ(tc_wait_eof(&io[1]), 0);
	TF_CHECK_EQ(tc_wait_eof(&adm[1]), 0);
	tc_close(&io[1]);
	tc_close(&adm[1]);
}

int main(void)
{
	int base = tc_count_fds();

	g_cpu = ex_first_cpu();
	run_cq_pool("per-queue", tweak_perq, false);
	run_cq_pool("shared", tweak_shared, true);
	run_cq_pool("shared + backend poll", tweak_shared_poll, true);
	run_backend_poll("idle poll only", tweak_poll_only, false);
	run_backend_poll("idle poll + backend poll", tweak_backend_poll, true);
	run_per_ctrl("wq-per-ctrl", tweak_per_ctrl);
	run_per_ctrl("wq-per-ctrl + shared rings", tweak_per_ctrl_shared);
	TF_CHECK_EQ(tc_count_fds(), base);
	return 0;
}
