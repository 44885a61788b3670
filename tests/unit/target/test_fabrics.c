// SPDX-License-Identifier: MIT
/* test_fabrics.c - Connect, Property Get/Set, Disconnect and command
 * sequencing through the xprt.h seam. */
#include "tgt_test.h"

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

static void test_before_connect(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 0);
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	uint64_t v;

	s.cid = 7;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	assert_int_equal(q->last.sqid, 0);
	/* Property Get is a fabrics command but not Connect */
	assert_int_equal(tt_prop_get(q, NVMFD_REG_CAP, NVMFD_PROP_ATTRIB_SIZE_8, &v),
			 TT_G(NVMFD_SC_INVALID_OPCODE));
	s = tt_sqe(NVMFD_CMD_READ, 1, 512);
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	tt_q_free(q);
}

static void test_connect_admin_ok(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0), *c = tt_q_new(e, 0);

	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 5000, 0xffff, SUB0, HOST_A, 0), 0);
	assert_int_equal(a->last.result, 1);
	assert_int_equal(a->last.cid, 0x100);
	assert_int_equal(a->last.sqhd, 1);
	assert_true(a->qp.connected);
	assert_int_equal(a->qp.sqsize, 31);
	assert_int_equal(a->qp.ctrl->kato_ms, 5000);
	assert_int_equal(tt_connect_ex(b, 0, 31, 0, 0, 0xffff, SUB0, HOST_B, 0), 0);
	assert_int_equal(b->last.result, 2);
	/* sub1 allocates in [10, 11] */
	assert_int_equal(tt_connect_ex(c, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(c->last.result, 10);
	/* a connected queue cannot connect again */
	assert_int_equal(tt_connect_ex(c, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0),
			 TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	tt_q_free(a);
	tt_q_free(b);
	tt_q_free(c);
}

static void test_connect_admin_errors(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 0), *q1 = tt_q_new(e, 1);

	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, SUB0, HOST_A, 1),
			 TT_C(NVMFD_SC_CONNECT_FORMAT));
	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 3, SUB0, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(q->last.result, (1u << 16) | 16);
	assert_int_equal(tt_connect_ex(q, 0, 0, 0, 0, 0xffff, SUB0, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(q->last.result, 44);
	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, "nqn.2026-01.io.nvmfd:nope", HOST_A,
				       0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(q->last.result, (1u << 16) | 256);
	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, SUB1, HOST_B, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_HOST));
	assert_int_equal(q->last.result, (1u << 16) | 512);
	/* sub1 is not exported on port 1 */
	assert_int_equal(tt_connect_ex(q1, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(q1->last.result, (1u << 16) | 256);
	assert_false(q->qp.connected);
	/* the data must be exactly 1024 bytes */
	{
		struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_FABRICS, NVMFD_FCTYPE_CONNECT, 512);

		assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
	}
	/* still connectable after all that */
	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	tt_q_free(q);
	tt_q_free(q1);
}

static void test_cntlid_exhaustion(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0), *c = tt_q_new(e, 0);

	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(a->last.result, 10);
	assert_int_equal(tt_connect_ex(b, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(b->last.result, 11);
	assert_int_equal(tt_connect_ex(c, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_CTRL_BUSY));
	tt_q_free(a);
	/* 10 is free again */
	assert_int_equal(tt_connect_ex(c, 0, 31, 0, 0, 0xffff, SUB1, HOST_A, 0), 0);
	assert_int_equal(c->last.result, 10);
	tt_q_free(b);
	tt_q_free(c);
}

static void test_connect_io(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *i1 = tt_q_new(e, 0), *i2 = tt_q_new(e, 0);
	struct tt_q *i3 = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	uint16_t cntlid;

	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 0, 0xffff, SUB0, HOST_A, 0), 0);
	cntlid = (uint16_t)a->last.result;
	/* I/O queue before the controller is enabled */
	assert_int_equal(tt_io_connect(i1, 1, cntlid, SUB0, HOST_A),
			 TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), 0);
	/* unknown controller */
	assert_int_equal(tt_io_connect(i1, 1, 77, SUB0, HOST_A),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(i1->last.result, (1u << 16) | 16);
	/* another host's controller */
	assert_int_equal(tt_io_connect(i1, 1, cntlid, SUB0, HOST_B),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(i1->last.result, (1u << 16) | 512);
	/* sqsize above MQES (port 0: 128 entries -> MQES 127) */
	assert_int_equal(tt_connect_ex(i1, 1, 128, 0, 0, cntlid, SUB0, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(i1->last.result, 44);
	assert_int_equal(tt_connect_ex(i1, 1, 0, 0, 0, cntlid, SUB0, HOST_A, 0),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	/* negotiate 2 I/O queues (request 3 + 3, 0's based) */
	s = tt_sqe(NVMFD_ADMIN_SET_FEATURES, 0, 0);
	s.cdw10 = NVMFD_FEAT_NUM_QUEUES;
	s.cdw11 = 1 | (1u << 16);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	assert_int_equal(a->last.result, 1 | (1u << 16));
	assert_int_equal(tt_io_connect(i1, 3, cntlid, SUB0, HOST_A),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(i1->last.result, 42);
	/* good ones */
	assert_int_equal(tt_connect_ex(i1, 1, 127, 0, 0, cntlid, SUB0, HOST_A, 0), 0);
	assert_int_equal(i1->last.result, cntlid);
	assert_int_equal(i1->last.sqid, 1);
	assert_int_equal(i1->qp.qid, 1);
	assert_int_equal(tt_io_connect(i2, 2, cntlid, SUB0, HOST_A), 0);
	/* duplicate qid */
	assert_int_equal(tt_io_connect(i3, 2, cntlid, SUB0, HOST_A),
			 TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	/* Property Get is admin-queue only */
	{
		uint64_t v;

		assert_int_equal(tt_prop_get(i1, NVMFD_REG_CSTS, 0, &v),
				 TT_G(NVMFD_SC_INVALID_OPCODE));
	}
	/* admin queue teardown deletes the controller and shuts the I/O
	 * queues down */
	nvmfd__tgt_qp_destroy(&a->qp);
	assert_int_equal(i1->nr_shutdown, 1);
	assert_int_equal(i2->nr_shutdown, 1);
	assert_int_equal(tt_io_connect(i3, 1, cntlid, SUB0, HOST_A),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	tt_q_free(i1);
	tt_q_free(i2);
	tt_q_free(i3);
	tt_q_free(a);
}

static void test_sq_flow_control(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0);
	uint64_t v;

	/* sqsize 3 -> 4 entries: sqhd 1 (connect), 2, 3, 0, 1 */
	assert_int_equal(tt_connect_ex(a, 0, 3, 0, 0, 0xffff, SUB0, HOST_A, 0), 0);
	assert_int_equal(a->last.sqhd, 1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(tt_prop_get(a, NVMFD_REG_VS, 0, &v), 0);
		assert_int_equal(a->last.sqhd, (2 + i) % 4);
	}
	/* CATTR bit 2: SQ flow control disabled, sqhd 0xffff */
	assert_int_equal(tt_connect_ex(b, 0, 31, NVMFD_CONNECT_CATTR_DISABLE_SQFLOW, 0, 0xffff,
				       SUB0, HOST_A, 0),
			 0);
	assert_int_equal(b->last.sqhd, 0xffff);
	assert_true(b->qp.sqflow_disabled);
	assert_int_equal(tt_prop_get(b, NVMFD_REG_VS, 0, &v), 0);
	assert_int_equal(b->last.sqhd, 0xffff);
	tt_q_free(a);
	tt_q_free(b);
}

static void test_properties(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	uint64_t v;

	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 0, 0xffff, SUB0, HOST_A, 0), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CAP, NVMFD_PROP_ATTRIB_SIZE_8, &v), 0);
	assert_int_equal(NVMFD_CAP_MQES(v), 127);
	assert_int_equal(NVMFD_CAP_TO(v), 15);
	assert_true(v & NVMFD_CAP_CSS_NVM);
	assert_int_equal(NVMFD_CAP_MPSMIN(v), 0);
	assert_int_equal(NVMFD_CAP_MPSMAX(v), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_VS, 0, &v), 0);
	assert_int_equal(v, NVMFD_VS_1_4);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v, 0);
	/* wrong sizes / offsets */
	assert_int_equal(tt_prop_get(a, NVMFD_REG_VS, NVMFD_PROP_ATTRIB_SIZE_8, &v),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CAP, 0, &v), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(tt_prop_get(a, 0x40, 0, &v), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CSTS, 1), TT_G(NVMFD_SC_INVALID_FIELD));
	/* admin commands need CC.EN and CSTS.RDY */
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	s.cdw10 = NVMFD_ID_CNS_CTRL;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	/* enable */
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CC, 0, &v), 0);
	assert_int_equal(v, TT_CC_ENABLE);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v, NVMFD_CSTS_RDY);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	/* normal shutdown: SHST complete, RDY off */
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE | (NVMFD_CC_SHN_NORMAL << 14)),
			 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v & NVMFD_CSTS_SHST_MASK, NVMFD_CSTS_SHST_CMPLT);
	assert_int_equal(v & NVMFD_CSTS_RDY, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	/* clear SHN, then disable and re-enable with a bad IOSQES: CFS */
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, 0), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, NVMFD_CC_EN | (5u << 16) | (4u << 20)), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v, NVMFD_CSTS_CFS);
	/* EN 1 -> 0 */
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, 0), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CC, 0, &v), 0);
	assert_int_equal(v, 0);
	tt_q_free(a);
}

static void test_bad_mps_css(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0), *b = tt_q_new(e, 0);
	uint64_t v;

	assert_int_equal(tt_connect_ex(a, 0, 31, 0, 0, 0xffff, SUB0, HOST_A, 0), 0);
	assert_int_equal(tt_prop_set(a, NVMFD_REG_CC, TT_CC_ENABLE | (1u << 7)), 0);
	assert_int_equal(tt_prop_get(a, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v & (NVMFD_CSTS_CFS | NVMFD_CSTS_RDY), NVMFD_CSTS_CFS);
	assert_int_equal(tt_connect_ex(b, 0, 31, 0, 0, 0xffff, SUB0, HOST_A, 0), 0);
	assert_int_equal(tt_prop_set(b, NVMFD_REG_CC, TT_CC_ENABLE | (1u << 4)), 0);
	assert_int_equal(tt_prop_get(b, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v & (NVMFD_CSTS_CFS | NVMFD_CSTS_RDY), NVMFD_CSTS_CFS);
	tt_q_free(a);
	tt_q_free(b);
}

static void test_sqe_validation(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_sqe s;

	tt_admin_up(a, SUB0, HOST_A, 0);
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	s.flags |= 1; /* fused */
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	s.flags = 0; /* PRP */
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	s.dptr.type = 0x20;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_TYPE));
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	s.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	s.dptr.addr = 64;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_OFFSET));
	/* unknown fabrics type */
	s = tt_sqe(NVMFD_ADMIN_FABRICS, 0x7e, 0);
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	tt_q_free(a);
}

static void test_disconnect(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *a = tt_q_new(e, 0);
	struct nvmfd_sqe s;

	tt_admin_up(a, SUB0, HOST_A, 0);
	s = tt_sqe(NVMFD_ADMIN_FABRICS, NVMFD_FCTYPE_DISCONNECT, 0);
	s.cdw10 = 1; /* recfmt 1 */
	assert_int_equal(tt_cmd(a, &s, NULL, 0), TT_C(NVMFD_SC_CONNECT_FORMAT));
	assert_int_equal(a->nr_shutdown, 0);
	s.cdw10 = 0;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	assert_int_equal(a->nr_shutdown, 1);
	tt_q_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_before_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_admin_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_admin_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cntlid_exhaustion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sq_flow_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_mps_css, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sqe_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
