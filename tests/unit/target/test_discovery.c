// SPDX-License-Identifier: MIT
/* test_discovery.c - the discovery controller: Identify, log page 70h with
 * ACL filtering and partial reads, features, AER, Keep Alive. */
#include <arpa/inet.h>

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

static uint16_t disc_up(struct tt_q *q, const char *host)
{
	uint64_t v;
	uint16_t cntlid;

	assert_int_equal(tt_connect_ex(q, 0, 31, 0, 0, 0xffff, NVMFD_DISC_NQN, host, 0), 0);
	cntlid = (uint16_t)q->last.result;
	/* discovery controllers do not check IOSQES/IOCQES */
	assert_int_equal(tt_prop_set(q, NVMFD_REG_CC, NVMFD_CC_EN), 0);
	assert_int_equal(tt_prop_get(q, NVMFD_REG_CSTS, 0, &v), 0);
	assert_int_equal(v, NVMFD_CSTS_RDY);
	return cntlid;
}

static nvmfd_status_t disc_log(struct tt_q *q, uint64_t lpo, uint32_t len, uint8_t lid)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_GET_LOG_PAGE, 0, len);
	uint32_t numd = len / 4 - 1;

	s.cid = 0x70;
	s.cdw10 = lid | ((numd & 0xffff) << 16);
	s.cdw11 = numd >> 16;
	s.cdw12 = (uint32_t)lpo;
	s.cdw13 = (uint32_t)(lpo >> 32);
	return tt_cmd(q, &s, NULL, 0);
}

static void check_entry(const struct nvmfd_disc_log_entry *en, uint8_t subtype, uint16_t portid,
			const char *traddr, const char *trsvcid, const char *nqn)
{
	assert_int_equal(en->trtype, NVMFD_TRTYPE_TCP);
	assert_int_equal(en->adrfam, NVMFD_ADRFAM_IPV4);
	assert_int_equal(en->subtype, subtype);
	assert_int_equal(en->treq, NVMFD_TREQ_DISABLE_SQFLOW);
	assert_int_equal(en->portid, portid);
	assert_int_equal(en->cntlid, 0xffff);
	assert_int_equal(en->asqsz, 32);
	assert_string_equal(en->traddr, traddr);
	assert_string_equal(en->trsvcid, trsvcid);
	assert_string_equal(en->subnqn, nqn);
	assert_int_equal(en->tsas[0], NVMFD_TCP_SECTYPE_NONE);
}

static void test_disc_identify_and_kato(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	const uint8_t *b = q->out;
	uint32_t v32;

	disc_up(q, HOST_B);
	/* KATO 0 in Connect -> 120 s */
	assert_int_equal(q->qp.ctrl->kato_ms, 120000);
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 4096);
	s.cdw10 = NVMFD_ID_CNS_CTRL;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), 0);
	assert_int_equal(b[111], NVMFD_CNTRLTYPE_DISC);
	memcpy(&v32, b + 92, 4);
	assert_int_equal(v32, NVMFD_OAES_DISC_CHANGE);
	assert_int_equal(b[261], NVMFD_LPA_EXT_DATA);
	assert_int_equal(b[77], 0); /* MDTS */
	assert_int_equal(b[76], 0); /* CMIC */
	assert_int_equal(b[258], 0); /* ACL: least possible, Abort is refused */
	memcpy(&v32, b + 80, 4);
	assert_int_equal(v32, NVMFD_VS_1_3); /* as the VS property */
	memcpy(&v32, b + 96, 4);
	assert_int_equal(v32, NVMFD_CTRATT_HOST_ID_128); /* no TBKAS below 1.4 */
	memcpy(&v32, b + 516, 4);
	assert_int_equal(v32, 0); /* NN */
	memcpy(&v32, b + 536, 4);
	assert_int_equal(v32, (1u << 0) | (1u << 20)); /* no Keyed SGLs (RDMA only) */
	assert_string_equal((const char *)b + 768, NVMFD_DISC_NQN);
	s.cdw10 = NVMFD_ID_CNS_NS;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));

	/* features: KATO and AEC only */
	s = tt_sqe(NVMFD_ADMIN_GET_FEATURES, 0, 0);
	s.cdw10 = NVMFD_FEAT_KATO;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), 0);
	assert_int_equal(q->last.result, 120000);
	s = tt_sqe(NVMFD_ADMIN_SET_FEATURES, 0, 0);
	s.cdw10 = NVMFD_FEAT_ASYNC_EVENT;
	s.cdw11 = 0xffffffff;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), 0);
	assert_int_equal(q->last.result, NVMFD_AEN_CFG_DISC_CHANGE);
	s.cdw10 = NVMFD_FEAT_NUM_QUEUES;
	s.cdw11 = 0;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	/* the I/O controller's mandatory features are not discovery's */
	s.cdw10 = NVMFD_FEAT_ARBITRATION;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	/* Keep Alive, AER held, everything else INVALID_OPCODE */
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(q, &s, NULL, 0), 0);
	s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	assert_int_equal(tt_submit(q, &s, NULL, 0), 0);
	s = tt_sqe(NVMFD_ADMIN_ABORT, 0, 0);
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	s = tt_sqe(0x80, 0, 0);
	assert_int_equal(tt_cmd(q, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	tt_q_free(q);
}

static void test_disc_no_io_queues(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 0), *io = tt_q_new(e, 0);
	uint16_t cntlid = disc_up(q, HOST_A);

	assert_int_equal(tt_io_connect(io, 1, cntlid, NVMFD_DISC_NQN, HOST_A),
			 TT_C(NVMFD_SC_CONNECT_INVALID_PARAM));
	assert_int_equal(io->last.result, 42);
	tt_q_free(io);
	tt_q_free(q);
}

static void test_disc_log_acl(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *qa = tt_q_new(e, 0), *qb = tt_q_new(e, 0);
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_disc_log_entry en;

	disc_up(qa, HOST_A);
	disc_up(qb, HOST_B);

	/* header only */
	assert_int_equal(disc_log(qb, 0, 1024, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, qb->out, sizeof(hdr));
	assert_int_equal(hdr.genctr, 1);
	assert_int_equal(hdr.numrec, 4); /* self, sub0@1, sub0@2, referral */
	assert_int_equal(hdr.recfmt, 0);
	assert_int_equal(disc_log(qa, 0, 1024, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, qa->out, sizeof(hdr));
	assert_int_equal(hdr.numrec, 5); /* HOST_A also sees sub1@1 */

	/* full log for HOST_B */
	assert_int_equal(disc_log(qb, 0, 5 * 1024, NVMFD_LOG_DISC), 0);
	memcpy(&en, qb->out + 1024, sizeof(en));
	check_entry(&en, NVMFD_SUBTYPE_CUR_DISCOVERY, 1, "127.0.0.1", "4420", NVMFD_DISC_NQN);
	memcpy(&en, qb->out + 2048, sizeof(en));
	check_entry(&en, NVMFD_SUBTYPE_NVME, 1, "127.0.0.1", "4420", SUB0);
	memcpy(&en, qb->out + 3072, sizeof(en));
	/* wildcard listener: the address the host connected to */
	check_entry(&en, NVMFD_SUBTYPE_NVME, 2, "192.168.7.7", "4421", SUB0);
	memcpy(&en, qb->out + 4096, sizeof(en));
	/* the referral's entry carries the referred port's ID, not ours */
	check_entry(&en, NVMFD_SUBTYPE_REFERRAL, 7, "10.0.0.9", "8009", NVMFD_DISC_NQN);

	/* HOST_A: sub1 after sub0 on port 1 */
	assert_int_equal(disc_log(qa, 0, 6 * 1024, NVMFD_LOG_DISC), 0);
	memcpy(&en, qa->out + 3072, sizeof(en));
	check_entry(&en, NVMFD_SUBTYPE_NVME, 1, "127.0.0.1", "4420", SUB1);

	/* partial read: entry 1's SUBNQN through LPO */
	assert_int_equal(disc_log(qb, 2048 + 256, 256, NVMFD_LOG_DISC), 0);
	assert_int_equal(qb->out_len, 256);
	assert_string_equal((const char *)qb->out, SUB0);
	/* a listener bound to an ephemeral port reports the bound port */
	{
		struct nvmfd_tgt_port_slot sl = { .cfg = e->cfg.ports[0], .bound = 4444 };

		e->tgt->ports[0] = &sl;
		e->tgt->nr_ports = 1;
		assert_int_equal(disc_log(qb, 2048, 1024, NVMFD_LOG_DISC), 0);
		memcpy(&en, qb->out, sizeof(en));
		check_entry(&en, NVMFD_SUBTYPE_NVME, 1, "127.0.0.1", "4444", SUB0);
		e->tgt->nr_ports = 0;
		e->tgt->ports[0] = NULL;
	}
	/* a read past the last entry is zero filled */
	assert_int_equal(disc_log(qb, 4096 + 512, 2048, NVMFD_LOG_DISC), 0);
	assert_string_equal((const char *)qb->out, "10.0.0.9");
	for (int i = 512; i < 2048; i++)
		assert_int_equal(qb->out[i], 0);
	/* header shorter than 1024 bytes */
	assert_int_equal(disc_log(qb, 0, 16, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, qb->out, 16);
	assert_int_equal(hdr.numrec, 4);

	/* errors */
	assert_int_equal(disc_log(qb, 2, 16, NVMFD_LOG_DISC), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(disc_log(qb, 5 * 1024, 16, NVMFD_LOG_DISC),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(disc_log(qb, 0, 512, NVMFD_LOG_SMART), TT_G(NVMFD_SC_INVALID_FIELD));
	tt_q_free(qa);
	tt_q_free(qb);
}

static void test_disc_wildcard_self(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 1);
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_disc_log_entry en;

	disc_up(q, HOST_B);
	assert_int_equal(disc_log(q, 0, 4 * 1024, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, q->out, sizeof(hdr));
	assert_int_equal(hdr.numrec, 3); /* no referral on portid 2 */
	memcpy(&en, q->out + 1024, sizeof(en));
	check_entry(&en, NVMFD_SUBTYPE_CUR_DISCOVERY, 2, "192.168.7.7", "4421", NVMFD_DISC_NQN);
	tt_q_free(q);
}

/* Wildcard listeners of both families (-l [::]:4447 -l 0.0.0.0:4448): each
 * record carries its own port's family and an address of that family, for
 * hosts that came in over either family (issue: the IPv4 port's record said
 * "::1", the IPv6 one "adrfam ipv6, traddr 127.0.0.1"). */
static void test_disc_wildcard_families(void **state)
{
	static const struct {
		const char *local; /* the address the host reached */
		const char *v6; /* expected traddr of the [::] port */
		const char *v4; /* expected traddr of the 0.0.0.0 port */
	} cases[] = {
		{ "::1", "::1", "127.0.0.1" },
		{ "127.0.0.1", "::1", "127.0.0.1" },
		{ "::ffff:127.0.0.1", "::ffff:127.0.0.1", "127.0.0.1" },
		{ "fd00::7", "fd00::7", NULL }, /* v4: an address of this machine */
		{ "10.9.8.7", NULL, "10.9.8.7" }, /* v6: this machine's or mapped */
	};
	struct tt_env *e = *state;

	/* port 0 becomes [::]:4447, port 1 stays 0.0.0.0 (port 4421) */
	e->cfg.ports[0].adrfam = NVMFD_ADRFAM_IPV6;
	strcpy(e->cfg.ports[0].traddr, "::");
	strcpy(e->cfg.ports[0].trsvcid, "4447");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tt_q *q = tt_q_new(e, 0);
		struct nvmfd_disc_log_entry en6, en4;
		struct in6_addr a6;
		struct in_addr a4;

		strcpy(q->qp.local_addr, cases[i].local);
		disc_up(q, HOST_B);
		assert_int_equal(disc_log(q, 0, 4 * 1024, NVMFD_LOG_DISC), 0);
		memcpy(&en6, q->out + 2048, sizeof(en6)); /* sub0 on [::] */
		memcpy(&en4, q->out + 3072, sizeof(en4)); /* sub0 on 0.0.0.0 */
		assert_int_equal(en6.adrfam, NVMFD_ADRFAM_IPV6);
		assert_string_equal(en6.trsvcid, "4447");
		assert_int_equal(en4.adrfam, NVMFD_ADRFAM_IPV4);
		assert_string_equal(en4.trsvcid, "4421");
		/* always an address of the record's family */
		if (inet_pton(AF_INET6, en6.traddr, &a6) != 1)
			fail_msg("local %s: IPv6 record traddr '%s'", cases[i].local, en6.traddr);
		if (en4.traddr[0] && inet_pton(AF_INET, en4.traddr, &a4) != 1)
			fail_msg("local %s: IPv4 record traddr '%s'", cases[i].local, en4.traddr);
		if (cases[i].v6)
			assert_string_equal(en6.traddr, cases[i].v6);
		if (cases[i].v4)
			assert_string_equal(en4.traddr, cases[i].v4);
		tt_q_free(q);
	}
}

static void test_disc_change_aen(void **state)
{
	struct tt_env *e = *state;
	struct tt_q *q = tt_q_new(e, 0);
	struct nvmfd_sqe s;
	struct nvmfd_disc_log_hdr hdr;

	disc_up(q, HOST_B);
	/* not enabled: GENCTR moves, no event */
	nvmfd__tgt_disc_changed(e->tgt);
	assert_int_equal(disc_log(q, 0, 1024, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, q->out, sizeof(hdr));
	assert_int_equal(hdr.genctr, 2);
	s = tt_sqe(NVMFD_ADMIN_SET_FEATURES, 0, 0);
	s.cdw10 = NVMFD_FEAT_ASYNC_EVENT;
	s.cdw11 = NVMFD_AEN_CFG_DISC_CHANGE;
	assert_int_equal(tt_cmd(q, &s, NULL, 0), 0);
	s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	s.cid = 0x7a;
	assert_int_equal(tt_submit(q, &s, NULL, 0), 0);
	nvmfd__tgt_disc_changed(e->tgt);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&q->qp), 1);
	assert_int_equal(q->last.cid, 0x7a);
	assert_int_equal(q->last.result, 0x0070f002);
	/* masked until the log is read */
	s.cid = 0x7b;
	assert_int_equal(tt_submit(q, &s, NULL, 0), 0);
	nvmfd__tgt_disc_changed(e->tgt);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&q->qp), 0);
	assert_int_equal(disc_log(q, 0, 1024, NVMFD_LOG_DISC), 0);
	memcpy(&hdr, q->out, sizeof(hdr));
	assert_int_equal(hdr.genctr, 4);
	nvmfd__tgt_disc_changed(e->tgt);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&q->qp), 1);
	assert_int_equal(q->last.cid, 0x7b);
	tt_q_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_disc_identify_and_kato, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disc_no_io_queues, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disc_log_acl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disc_wildcard_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disc_change_aen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disc_wildcard_families, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
