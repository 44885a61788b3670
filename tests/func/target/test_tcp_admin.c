// SPDX-License-Identifier: MIT
/*
 * test_tcp_admin.c - ICReq/ICResp, admin Connect, Property Get/Set and
 * Identify over the NVMe/TCP transport of an in-process target.
 */
#include <endian.h>
#include <string.h>

#include "tcp_client.h"
#include "tgt_fixture.h"

int main(void)
{
	static uint8_t id[NVMFD_IDENTIFY_DATA_SIZE];
	const struct nvmfd_id_ctrl *ic = (const void *)id;
	const struct nvmfd_id_ns *ns = (const void *)id;
	struct tf_target t;
	struct tc_conn c;
	struct nvmfd_cqe cqe;
	uint64_t v;
	uint16_t cntlid;

	TF_CHECK_EQ(tf_start(&t, NULL), 0);

	TF_CHECK_EQ(tc_open_ic(&c, TF_ADDR, t.port, false, false), 0);
	TF_CHECK_EQ(c.maxh2cdata, t.cfg->maxh2cdata);

	TF_CHECK_EQ(tc_connect(&c, 0, 31, 0, TF_SUBNQN, TC_HOSTNQN, 0xffff, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	cntlid = (uint16_t)le32toh(cqe.result);
	TF_CHECK(cntlid != 0 && cntlid != 0xffff);
	TF_CHECK_EQ(cqe.sqid, 0);

	TF_CHECK_EQ(tc_prop_get(&c, NVMFD_REG_CAP, true, &v, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(NVMFD_CAP_MQES(v), t.cfg->ports[0].max_queue_size - 1);
	TF_CHECK(v & NVMFD_CAP_CSS_NVM);

	TF_CHECK_EQ(tc_prop_get(&c, NVMFD_REG_VS, false, &v, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(v, t.cfg->subsys[0].version);

	TF_CHECK_EQ(tc_prop_set(&c, NVMFD_REG_CC, false, 1u | (6u << 16) | (4u << 20), &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	v = 0;
	for (int i = 0; i < 500 && !(v & NVMFD_CSTS_RDY); i++)
		TF_CHECK_EQ(tc_prop_get(&c, NVMFD_REG_CSTS, false, &v, &cqe), 0);
	TF_CHECK(v & NVMFD_CSTS_RDY);
	TF_CHECK_EQ(tc_prop_get(&c, NVMFD_REG_CC, false, &v, &cqe), 0);
	TF_CHECK_EQ(v & 1, 1);

	memset(id, 0xa5, sizeof(id));
	TF_CHECK_EQ(tc_identify(&c, NVMFD_ID_CNS_CTRL, 0, id, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(c.c2h_pdus, 1);
	TF_CHECK_EQ(le16toh(ic->cntlid), cntlid);
	TF_CHECK(!strncmp(ic->subnqn, TF_SUBNQN, sizeof(ic->subnqn)));
	/* IOCCSZ = (64 + in-capsule data) / 16 (doc/protocol-notes.md §1.8) */
	TF_CHECK_EQ(le32toh(ic->ioccsz), (64 + t.cfg->ports[0].inline_data_size) / 16);
	TF_CHECK(le32toh(ic->sgls) & NVMFD_SGLS_SUPPORTED);
	/* regression: Keyed SGL Data Block (RDMA only) was advertised */
	TF_CHECK(!(le32toh(ic->sgls) & NVMFD_SGLS_KSDBDS));

	memset(id, 0xa5, sizeof(id));
	TF_CHECK_EQ(tc_identify(&c, NVMFD_ID_CNS_NS, 1, id, &cqe), 0);
	TF_CHECK_EQ(tc_status(&cqe), 0);
	TF_CHECK_EQ(le64toh(ns->nsze), TF_NS_SIZE / 512);

	tc_close(&c);
	tf_stop(&t);
	return 0;
}
