// SPDX-License-Identifier: MIT
/* test_subsys.c - subsystem setup, controller registry and lifetime,
 * keep-alive expiry (traffic based), namespace change bookkeeping. */
#include "tgt_test.h"

#define SEC 1000000000ull

static int setup(void **state)
{
	*state = tt_env_new();
	return 0;
}

static int teardown(void **state)
{
	tt_env_free(*state);
	return 0;
}

static void test_core_create_failures(void **state)
{
	struct nvmfd_cfg *cfg = calloc(1, sizeof(*cfg));
	struct nvmfd_tgt *tgt = (struct nvmfd_tgt *)1;

	(void)state;
	tt_cfg_build(cfg);
	/* second namespace of sub1 cannot open: everything opened is closed */
	cfg->subsys[1].nr_ns = 2;
	tt_ram_ns(&cfg->subsys[1].ns[1], 6, 0, 9);
	assert_int_equal(nvmfd__tgt_core_create(cfg, &tgt), -EINVAL);
	assert_null(tgt);
	/* duplicate nsid */
	tt_ram_ns(&cfg->subsys[1].ns[1], 5, 4096, 9);
	assert_int_equal(nvmfd__tgt_core_create(cfg, &tgt), -EINVAL);
	assert_null(tgt);
	/* nsid 0 */
	tt_ram_ns(&cfg->subsys[1].ns[1], 0, 4096, 9);
	assert_int_equal(nvmfd__tgt_core_create(cfg, &tgt), -EINVAL);
	cfg->subsys[1].nr_ns = 1;
	assert_int_equal(nvmfd__tgt_core_create(cfg, &tgt), 0);
	assert_int_equal(tgt->nr_subsys, 2);
	assert_true(tgt->disc->is_disc);
	assert_string_equal(tgt->disc->nqn, NVMFD_DISC_NQN);
	assert_int_equal(nvmfd__tgt_max_io_size(tgt), TT_MAX_IO);
	assert_ptr_equal(nvmfd__tgt_cfg(tgt), cfg);
	assert_null(nvmfd__tgt_rt(tgt));
	nvmfd__tgt_core_destroy(&tgt);
	assert_null(tgt);
	free(cfg);
}

static void test_lookup_and_acl(void **state)
{
	struct tt_env *e = *state;
	struct nvmfd_tgt_subsys *s0 = nvmfd__tgt_subsys_find_get(e->tgt, SUB0);
	struct nvmfd_tgt_subsys *s1 = nvmfd__tgt_subsys_find_get(e->tgt, SUB1);
	struct nvmfd_tgt_subsys *d = nvmfd__tgt_subsys_find_get(e->tgt, NVMFD_DISC_NQN);

	assert_non_null(s0);
	assert_non_null(s1);
	assert_int_equal(s0->refs, 1);
	nvmfd__tgt_subsys_put(s0);
	nvmfd__tgt_subsys_put(s1);
	assert_int_equal(s0->refs, 0);
	assert_ptr_equal(d, e->tgt->disc);
	nvmfd__tgt_subsys_put(d);
	assert_null(nvmfd__tgt_subsys_find_get(e->tgt, "nqn.x"));
	assert_true(nvmfd__tgt_subsys_on_port(s1, &e->cfg.ports[0]));
	assert_false(nvmfd__tgt_subsys_on_port(s1, &e->cfg.ports[1]));
	assert_true(nvmfd__tgt_subsys_on_port(e->tgt->disc, &e->cfg.ports[1]));
	assert_true(nvmfd__tgt_host_allowed(s0, HOST_B));
	assert_true(nvmfd__tgt_host_allowed(s1, HOST_A));
	assert_false(nvmfd__tgt_host_allowed(s1, HOST_B));
	assert_true(nvmfd__tgt_host_allowed(e->tgt->disc, HOST_B));
	/* namespaces sorted, geometry from the backend */
	assert_int_equal(s0->nr_ns, 2);
	assert_int_equal(s0->ns[0].nsid, 1);
	assert_int_equal(s0->ns[0].nsze, 2048);
	assert_int_equal(s0->ns[1].nsze, 256);
	assert_ptr_equal(nvmfd__tgt_ns_find(s0, 2), &s0->ns[1]);
	assert_null(nvmfd__tgt_ns_find(s0, 5));
	assert_int_equal(nvmfd__tgt_ns_set_enabled(e->tgt, 0, 2, false), 0);
	assert_null(nvmfd__tgt_ns_find(s0, 2));
	assert_int_equal(nvmfd__tgt_ns_set_enabled(e->tgt, 0, 9, false), -ENOENT);
	assert_int_equal(nvmfd__tgt_ns_set_enabled(e->tgt, 7, 1, false), -ENOENT);
}

static void test_generated_ids_stable(void **state)
{
	struct tt_env *e = *state, *e2 = tt_env_new();
	struct nvmfd_tgt_subsys *a = e->tgt->subsys[0], *b = e2->tgt->subsys[0];

	assert_memory_equal(a->ns[0].uuid, b->ns[0].uuid, 16);
	assert_memory_equal(a->ns[0].nguid, b->ns[0].nguid, 16);
	assert_memory_not_equal(a->ns[0].nguid, e->tgt->subsys[1]->ns[0].nguid, 16);
	assert_memory_not_equal(a->ns[0].uuid, a->ns[0].nguid, 16);
	tt_env_free(e2);
}

static void test_window(void **state)
{
	uint8_t page[64], out[16];
	struct nvmfd_tgt_win w = { .buf = out, .off = 10, .len = sizeof(out) };

	(void)state;
	for (int i = 0; i < 64; i++)
		page[i] = (uint8_t)i;
	memset(out, 0xff, sizeof(out));
	nvmfd__tgt_win_put(&w, page, 8); /* before the window */
	nvmfd__tgt_win_put(&w, page + 8, 4); /* straddles the start */
	nvmfd__tgt_win_put(&w, NULL, 4); /* zeroes */
	nvmfd__tgt_win_put(&w, page + 16, 48); /* runs past the end */
	assert_int_equal(w.pos, 64);
	assert_int_equal(out[0], 10);
	assert_int_equal(out[1], 11);
	assert_int_equal(out[2], 0);
	assert_int_equal(out[5], 0);
	assert_int_equal(out[6], 16);
	assert_int_equal(out[15], 25);
}

static void test_kato_expiry(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *io = tt_q_new(e, 0);
	uint16_t cntlid = tt_admin_up(a, SUB0, HOST_A, 5000);
	struct tt_q *late = tt_q_new(e, 0);
	uint64_t v, t0;

	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB0, HOST_A), 0);
	t0 = nvmfd__tgt_now_ns();
	/* kato 5 s + grace 1 s */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 5 * SEC + SEC / 2), 0);
	assert_int_equal(a->nr_shutdown, 0);
	/* traffic on the I/O queue alone keeps the controller alive (TBKAS) */
	__atomic_store_n(&a->qp.last_cmd_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	__atomic_store_n(&a->qp.admin_cpl_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 5 * SEC + SEC / 2), 0);
	__atomic_store_n(&io->qp.last_cmd_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + SEC), 1);
	assert_int_equal(a->nr_shutdown, 1);
	assert_int_equal(io->nr_shutdown, 1);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_true(v & NVMFD_CSTS_CFS);
	/* expired once only */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 100 * SEC), 0);
	assert_int_equal(a->nr_shutdown, 1);
	/* an expired controller takes no new I/O queues */
	assert_int_equal(tt_io_connect(late, 2, cntlid, SUB0, HOST_A),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	tt_q_free(late);
	/* the I/O queue may outlive the admin queue: the controller stays
	 * allocated until its last queue is gone */
	tt_q_free(a);
	assert_null(e->tgt->subsys[0]->ctrls);
	assert_non_null(io->qp.ctrl);
	assert_int_equal(io->qp.ctrl->refs, 1);
	tt_q_free(io);
}

/*
 * A keep-alive timer that passes while a queue of the controller is
 * stalled on the target (ops->stall_ns: its input waits for us) is a
 * target-side stall: deferred (counted once per episode), for at most one
 * more KATO + grace; a stall that ended lets the normal expiry happen; a
 * short stall (under the 50 ms bound) does not count.
 */
/* An admin queue with KATO 5 s whose last command was at *@t0 (now). */
static struct tt_q *kato_admin(struct tt_env *e, uint16_t *cntlid, uint64_t *t0)
{
	struct tt_q *a = tt_q_new(e, 0);

	*cntlid = tt_admin_up(a, SUB0, HOST_A, 5000);
	*t0 = nvmfd__tgt_now_ns();
	__atomic_store_n(&a->qp.last_cmd_ns, *t0, __ATOMIC_RELAXED);
	return a;
}

static void test_kato_stall_defers(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a, *io = tt_q_new(e, 0);
	struct nvmfd_tgt_ctrl *c;
	uint16_t cntlid;
	uint64_t t0;

	a = kato_admin(e, &cntlid, &t0);
	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB0, HOST_A), 0);
	c = a->qp.ctrl;
	__atomic_store_n(&io->qp.last_cmd_ns, t0, __ATOMIC_RELAXED);
	/* the I/O queue has waited 2 s for the target: deferred, not expired */
	io->stall_ns = 2 * SEC;
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 6 * SEC + SEC / 2), 0);
	assert_int_equal(a->nr_shutdown, 0);
	assert_int_equal(c->kato_stalls, 1);
	/* still stalled: still deferred, counted once */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 9 * SEC), 0);
	assert_int_equal(c->kato_stalls, 1);
	/* past one more KATO + grace (12 s): the stall outlasted the deferral */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 12 * SEC + 1), 1);
	assert_int_equal(a->nr_shutdown, 1);
	assert_int_equal(io->nr_shutdown, 1);
	tt_q_free(io);
	tt_q_free(a);

	/* the stall ends and the host really is silent: normal expiry */
	a = kato_admin(e, &cntlid, &t0);
	c = a->qp.ctrl;
	a->stall_ns = 10 * 1000000ull; /* short: not a stall */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 6 * SEC + 1), 1);
	assert_int_equal(c->kato_stalls, 0);
	tt_q_free(a);

	/* a stall episode ends when traffic resumes; a new one counts again */
	a = kato_admin(e, &cntlid, &t0);
	c = a->qp.ctrl;
	a->stall_ns = SEC;
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 7 * SEC), 0);
	assert_int_equal(c->kato_stalls, 1);
	__atomic_store_n(&a->qp.last_cmd_ns, t0 + 8 * SEC, __ATOMIC_RELAXED); /* rescued */
	a->stall_ns = 0;
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 9 * SEC), 0);
	a->stall_ns = SEC;
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 15 * SEC), 0);
	assert_int_equal(c->kato_stalls, 2);
	assert_int_equal(a->nr_shutdown, 0);
	tt_q_free(a);
}

/*
 * The admin queue's answers (issue 14: controllers still in their admin
 * bring-up, whose host waits for each answer before its next command,
 * expired while the target was slow to answer): an answer counts as
 * traffic; a command received and not answered yet is a target-side
 * stall (deferred, for at most one more KATO + grace); an AER's answer
 * (sent whenever an event happens, host alive or not) does not count, and
 * an AER held by the target is not an unanswered command.
 */
static void test_kato_admin_answers(void **state)
{
	struct tt_env *e = *state;
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	struct tt_q *a;
	uint16_t cntlid;
	uint64_t t0;

	/* received 5.5 s ago, answered now: alive until the answer is 6 s old */
	a = kato_admin(e, &cntlid, &t0);
	__atomic_store_n(&a->qp.last_cmd_ns, t0 - 5 * SEC - SEC / 2, __ATOMIC_RELAXED);
	__atomic_store_n(&a->qp.admin_rx_ns, t0 - 5 * SEC - SEC / 2, __ATOMIC_RELAXED);
	__atomic_store_n(&a->qp.admin_cpl_ns, t0, __ATOMIC_RELAXED);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 5 * SEC + SEC / 2), 0);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 6 * SEC + 1), 1);
	assert_int_equal(a->nr_shutdown, 1);
	tt_q_free(a);

	/* received at t0, not answered: the target's delay, deferred once */
	a = kato_admin(e, &cntlid, &t0);
	__atomic_store_n(&a->qp.admin_rx_ns, t0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->qp.admin_cpl_ns, t0 - 1, __ATOMIC_RELAXED);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 7 * SEC), 0);
	assert_int_equal(a->qp.ctrl->kato_stalls, 1);
	assert_int_equal(a->nr_shutdown, 0);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 12 * SEC + 1), 1);
	assert_int_equal(a->nr_shutdown, 1);
	tt_q_free(a);

	/* an AER neither counts when answered nor is an unanswered command */
	a = kato_admin(e, &cntlid, &t0);
	s.cdw10 = NVMFD_FEAT_ASYNC_EVENT;
	s.opc = NVMFD_ADMIN_SET_FEATURES;
	s.cdw11 = NVMFD_AEN_CFG_NS_ATTR;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	s.cid = 0x500;
	assert_int_equal(tt_submit(a, &s, NULL, 0), 0); /* held */
	t0 = nvmfd__tgt_now_ns();
	__atomic_store_n(&a->qp.last_cmd_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	__atomic_store_n(&a->qp.admin_cpl_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	/* the last admin command on record is the Set Features, not the AER */
	assert_int_equal(a->qp.admin_opc, NVMFD_ADMIN_SET_FEATURES);
	__atomic_store_n(&a->qp.admin_rx_ns, t0 - 100 * SEC, __ATOMIC_RELAXED);
	assert_int_equal(nvmfd__tgt_ns_set_enabled(e->tgt, 0, 2, false), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&a->qp), 1);
	assert_int_equal(a->last.cid, 0x500);
	assert_int_equal(a->qp.admin_cpl_ns, t0 - 100 * SEC);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0), 1);
	assert_int_equal(a->qp.ctrl->kato_stalls, 0);
	tt_q_free(a);
}

static void test_kato_zero_and_set_features(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	uint64_t t0;

	tt_admin_up(a, SUB0, HOST_A, 0);
	t0 = nvmfd__tgt_now_ns();
	/* I/O controller with KATO 0: no keep-alive */
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 3600 * SEC), 0);
	/* Set Features KATO arms it */
	s = tt_sqe(NVMFD_ADMIN_SET_FEATURES, 0, 0);
	s.cdw10 = NVMFD_FEAT_KATO;
	s.cdw11 = 1000;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	t0 = nvmfd__tgt_now_ns();
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + SEC + SEC / 2), 0);
	/* a Keep Alive resets the timer */
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	assert_true(a->qp.last_cmd_ns >= t0);
	/* its answer too, right after it arrived */
	assert_true(a->qp.admin_cpl_ns >= a->qp.last_cmd_ns);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, a->qp.admin_cpl_ns + 2 * SEC), 0);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, a->qp.admin_cpl_ns + 2 * SEC + 1), 1);
	assert_int_equal(a->nr_shutdown, 1);
	tt_q_free(a);
}

static void test_discovery_kato_default(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *d = tt_q_new(e, 0);
	uint64_t t0;

	assert_int_equal(tt_connect_ex(d, 0, 31, 0, 0, 0xffff, NVMFD_DISC_NQN, HOST_B, 0), 0);
	t0 = nvmfd__tgt_now_ns();
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 120 * SEC), 0);
	assert_int_equal(nvmfd__tgt_check_kato(e->tgt, t0 + 122 * SEC), 1);
	assert_int_equal(d->nr_shutdown, 1);
	tt_q_free(d);
}

static void test_shutdown_all(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0), *io = tt_q_new(e, 0);
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	uint16_t cntlid = tt_admin_up(a, SUB0, HOST_A, 0);

	tt_admin_up(b, SUB1, HOST_A, 0);
	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB0, HOST_A), 0);
	s.cid = 0x600;
	assert_int_equal(tt_submit(a, &s, NULL, 0), 0);
	nvmfd__tgt_shutdown_all(e->tgt);
	assert_int_equal(a->nr_shutdown, 1);
	assert_int_equal(b->nr_shutdown, 1);
	assert_int_equal(io->nr_shutdown, 1);
	/* the held AER is failed towards its queue */
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&a->qp), 1);
	assert_int_equal(a->last.cid, 0x600);
	assert_int_equal(nvmfd_cqe_status(&a->last), TT_G(NVMFD_SC_INTERNAL));
	tt_q_free(io);
	tt_q_free(a);
	tt_q_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_create_failures),
		cmocka_unit_test_setup_teardown(test_lookup_and_acl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generated_ids_stable, setup, teardown),
		cmocka_unit_test(test_window),
		cmocka_unit_test_setup_teardown(test_kato_stall_defers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kato_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kato_admin_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kato_zero_and_set_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery_kato_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_all, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
