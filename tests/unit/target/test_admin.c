// SPDX-License-Identifier: MIT
/* test_admin.c - admin commands of an I/O controller: Identify values,
 * Get Log Page, Set/Get Features, AER, Keep Alive, Abort. */
#include "tgt_test.h"

#include "internal/target.h"

struct actx {
	struct tt_env *e;
	struct tt_q *a;
	uint16_t cntlid;
};

static int setup(void **state)
{
	struct actx *c = calloc(1, sizeof(*c));

	c->e = tt_env_new();
	c->a = tt_q_new(c->e, 0);
	c->cntlid = tt_admin_up(c->a, SUB0, HOST_A, 5000);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct actx *c = *state;

	tt_q_free(c->a);
	tt_env_free(c->e);
	free(c);
	return 0;
}

static nvmfd_status_t identify(struct tt_q *q, uint8_t cns, uint32_t nsid, uint8_t csi)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_IDENTIFY, nsid, 4096);

	s.cid = 0x31;
	s.cdw10 = cns;
	s.cdw11 = (uint32_t)csi << 24;
	return tt_cmd(q, &s, NULL, 0);
}

static nvmfd_status_t get_log(struct tt_q *q, uint8_t lid, uint32_t nsid, uint64_t lpo,
			      uint32_t len, bool rae)
{
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_GET_LOG_PAGE, nsid, len);
	uint32_t numd = len / 4 - 1;

	s.cid = 0x32;
	s.cdw10 = lid | (rae ? 1u << 15 : 0) | ((numd & 0xffff) << 16);
	s.cdw11 = numd >> 16;
	s.cdw12 = (uint32_t)lpo;
	s.cdw13 = (uint32_t)(lpo >> 32);
	return tt_cmd(q, &s, NULL, 0);
}

static nvmfd_status_t feature(struct tt_q *q, bool set, uint32_t cdw10, uint32_t cdw11)
{
	struct nvmfd_sqe s = tt_sqe(set ? NVMFD_ADMIN_SET_FEATURES : NVMFD_ADMIN_GET_FEATURES, 0, 0);

	s.cid = 0x33;
	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	return tt_cmd(q, &s, NULL, 0);
}

static uint16_t u16at(const uint8_t *b, size_t off)
{
	uint16_t v;

	memcpy(&v, b + off, 2);
	return v;
}

static uint32_t u32at(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint64_t u64at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static void test_identify_ctrl(void **state)
{
	struct actx *c = *state;
	const uint8_t *b = c->a->out;

	assert_int_equal(identify(c->a, NVMFD_ID_CNS_CTRL, 0, 0), 0);
	assert_int_equal(c->a->out_len, 4096);
	assert_memory_equal(b + 4, "SN0123456789        ", 20);
	assert_memory_equal(b + 24, "nvmfd test model", 16);
	assert_int_equal(b[24 + 16], ' ');
	assert_int_equal(b[63], ' ');
	assert_memory_equal(b + 64, "0.1.0   ", 8);
	assert_int_equal(b[72], 6); /* RAB */
	assert_int_equal(b[76], 3); /* CMIC multi-port, multi-controller */
	assert_int_equal(b[77], 6); /* MDTS: 256 KiB = 2^6 * 4 KiB */
	assert_int_equal(u16at(b, 78), c->cntlid);
	assert_int_equal(u32at(b, 80), NVMFD_VS_1_4);
	assert_int_equal(u32at(b, 92), NVMFD_OAES_NS_ATTR);
	assert_int_equal(u32at(b, 96), NVMFD_CTRATT_TBKAS | NVMFD_CTRATT_HOST_ID_128);
	assert_int_equal(b[111], NVMFD_CNTRLTYPE_IO);
	assert_int_equal(u16at(b, 256), 0); /* OACS */
	assert_int_equal(b[258], 3); /* ACL: 4 Aborts */
	assert_int_equal(b[259], 3); /* AERL */
	assert_int_equal(b[260], 3); /* FRMW: slot 1 read-only, one slot */
	assert_int_equal(b[261], NVMFD_LPA_CMD_EFFECTS | NVMFD_LPA_EXT_DATA);
	assert_int_equal(b[262], 127); /* ELPE */
	assert_int_equal(u16at(b, 320), 10); /* KAS */
	assert_int_equal(b[512], 0x66);
	assert_int_equal(b[513], 0x44);
	assert_int_equal(u16at(b, 514), 128); /* MAXCMD = MQES + 1 */
	assert_int_equal(u32at(b, 516), 1024); /* NN */
	assert_int_equal(u16at(b, 520), NVMFD_ONCS_DSM | NVMFD_ONCS_WRITE_ZEROES);
	assert_int_equal(b[525], 1); /* VWC */
	/* SGLS: SGLs + SGL offset; no Keyed SGL Data Block (RDMA only) */
	assert_int_equal(u32at(b, 536), (1u << 0) | (1u << 20));
	assert_int_equal(u32at(b, 540), 1024); /* MNAN */
	assert_string_equal((const char *)b + 768, SUB0);
	assert_int_equal(u32at(b, 1792), (64 + 16384) / 16); /* IOCCSZ */
	assert_int_equal(u32at(b, 1796), 1); /* IORCSZ */
	assert_int_equal(u16at(b, 1800), 0); /* ICDOFF */
	assert_int_equal(b[1803], 1); /* MSDBD */
	/* SGL length must be 4096 */
	{
		struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 0, 2048);

		s.cdw10 = NVMFD_ID_CNS_CTRL;
		assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
	}
	assert_int_equal(identify(c->a, 0x1f, 0, 0), TT_G(NVMFD_SC_INVALID_FIELD));
}

static void test_identify_ns(void **state)
{
	struct actx *c = *state;
	const uint8_t *b = c->a->out;
	uint8_t zero[4096] = { 0 };
	uint8_t uuid2[16];

	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 1, 0), 0);
	assert_int_equal(u64at(b, 0), (1u << 20) / 512); /* NSZE */
	assert_int_equal(u64at(b, 8), (1u << 20) / 512); /* NCAP */
	assert_int_equal(u64at(b, 16), (1u << 20) / 512); /* NUSE */
	assert_int_equal(b[25], 0); /* NLBAF */
	assert_int_equal(b[26], 0); /* FLBAS */
	assert_int_equal(b[30], NVMFD_NMIC_SHARED);
	assert_int_equal(b[33], NVMFD_DLFEAT_READ_ZEROES);
	assert_int_equal(b[128 + 2], 9); /* LBAF0.DS */
	assert_memory_not_equal(b + 104, zero, 16); /* generated NGUID */

	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 2, 0), 0);
	assert_int_equal(u64at(b, 0), (1u << 20) / 4096);
	assert_int_equal(b[128 + 2], 12);
	/* inactive nsid: zeroes; broadcast / 0: invalid */
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 3, 0), 0);
	assert_memory_equal(b, zero, 4096);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 0xffffffff, 0),
			 TT_G(NVMFD_SC_INVALID_NS));
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 0, 0), TT_G(NVMFD_SC_INVALID_NS));

	/* active list */
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0, 0), 0);
	assert_int_equal(u32at(b, 0), 1);
	assert_int_equal(u32at(b, 4), 2);
	assert_int_equal(u32at(b, 8), 0);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 1, 0), 0);
	assert_int_equal(u32at(b, 0), 2);
	assert_int_equal(u32at(b, 4), 0);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0xfffffffe, 0),
			 TT_G(NVMFD_SC_INVALID_NS));

	/* descriptor list of nsid 2: UUID from config, NGUID, CSI */
	for (int i = 0; i < 16; i++)
		uuid2[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_DESC_LIST, 2, 0), 0);
	assert_int_equal(b[0], NVMFD_NIDT_UUID);
	assert_int_equal(b[1], 16);
	assert_memory_equal(b + 4, uuid2, 16);
	assert_int_equal(b[20], NVMFD_NIDT_NGUID);
	assert_int_equal(b[21], 16);
	assert_int_equal(b[40], NVMFD_NIDT_CSI);
	assert_int_equal(b[41], 1);
	assert_int_equal(b[44], NVMFD_CSI_NVM);
	assert_int_equal(b[45], 0);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_DESC_LIST, 9, 0),
			 TT_G(NVMFD_SC_INVALID_NS));
	/* generated UUID of nsid 1 is stable and RFC 4122 shaped */
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_DESC_LIST, 1, 0), 0);
	assert_int_equal(b[4 + 6] >> 4, 5);
	assert_int_equal(b[4 + 8] & 0xc0, 0x80);

	/* CNS 05/06/08 */
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_CS_NS, 1, NVMFD_CSI_NVM), 0);
	assert_memory_equal(b, zero, 4096);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_CS_NS, 1, 2), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_CS_CTRL, 0, NVMFD_CSI_NVM), 0);
	assert_memory_equal(b, zero, 4096);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_CS_INDEP, 1, 0), 0);
	assert_int_equal(b[1], NVMFD_NMIC_SHARED);
	assert_int_equal(b[14], 1);
}

static void test_log_pages(void **state)
{
	struct actx *c = *state;
	const uint8_t *b = c->a->out;
	uint8_t zero[4096] = { 0 };

	assert_int_equal(get_log(c->a, NVMFD_LOG_SUPPORTED, 0, 0, 1024, false), 0);
	for (int lid = 0; lid < 256; lid++)
		assert_int_equal(u32at(b, (size_t)lid * 4), lid <= 5 ? 1 : 0);
	assert_int_equal(get_log(c->a, NVMFD_LOG_ERROR, 0, 0, 64, false), 0);
	assert_memory_equal(b, zero, 64);
	assert_int_equal(get_log(c->a, NVMFD_LOG_FW_SLOT, 0, 0, 512, false), 0);
	assert_int_equal(b[0], 1); /* AFI: slot 1 active */
	assert_memory_equal(b + 8, "0.1.0   ", 8); /* FRS1 = Identify FR */
	assert_memory_equal(b + 16, zero, 512 - 16);
	assert_int_equal(get_log(c->a, NVMFD_LOG_CMD_EFFECTS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(b, NVMFD_ADMIN_IDENTIFY * 4), 1);
	assert_int_equal(u32at(b, 0x80 * 4), 0);
	assert_int_equal(u32at(b, 1024 + NVMFD_CMD_READ * 4), 1);
	assert_int_equal(u32at(b, 1024 + NVMFD_CMD_WRITE * 4), 3);
	/* partial read with an offset: effects of I/O opcode 1 at 1028 */
	assert_int_equal(get_log(c->a, NVMFD_LOG_CMD_EFFECTS, 0, 1028, 8, false), 0);
	assert_int_equal(c->a->out_len, 8);
	assert_int_equal(u32at(b, 0), 3); /* write */
	assert_int_equal(u32at(b, 4), 1); /* read */
	/* errors */
	assert_int_equal(get_log(c->a, 0x42, 0, 0, 512, false), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0, 2, 8, false),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0, 512, 8, false),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* bigger than MDTS */
	assert_int_equal(get_log(c->a, NVMFD_LOG_ERROR, 0, 0, TT_MAX_IO + 4, false),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* SMART: zero traffic so far */
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	assert_int_equal(u64at(b, 32), 0);
	assert_int_equal(u64at(b, 64), 0);
	assert_int_equal(b[3], 100); /* available spare */
}

static void test_smart_counts(void **state)
{
	struct actx *c = *state;
	struct tt_q *io = tt_q_new(c->e, 0);
	const uint8_t *b = c->a->out;
	static uint8_t data[8192];
	struct nvmfd_sqe s;

	assert_int_equal(tt_io_connect(io, 1, c->cntlid, SUB0, HOST_A), 0);
	/* 3 writes of 8 KiB, 2 reads of 4 KiB on nsid 1 (512-byte blocks) */
	for (int i = 0; i < 3; i++) {
		s = tt_sqe(NVMFD_CMD_WRITE, 1, 8192);
		s.cdw10 = (uint32_t)i * 16;
		s.cdw12 = 15;
		assert_int_equal(tt_cmd(io, &s, data, sizeof(data)), 0);
	}
	for (int i = 0; i < 2; i++) {
		s = tt_sqe(NVMFD_CMD_READ, 1, 4096);
		s.cdw12 = 7;
		assert_int_equal(tt_cmd(io, &s, NULL, 0), 0);
	}
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	/* data units: thousands of 512-byte units, rounded up */
	assert_int_equal(u64at(b, 32), 1); /* 16 units read */
	assert_int_equal(u64at(b, 48), 1); /* 48 units written */
	assert_int_equal(u64at(b, 64), 2); /* host reads */
	assert_int_equal(u64at(b, 80), 3); /* host writes */
	tt_q_free(io);
}

static void test_error_log(void **state)
{
	struct actx *c = *state;
	struct tt_q *io = tt_q_new(c->e, 0);
	const uint8_t *b = c->a->out;
	struct nvmfd_error_log_entry en;
	struct nvmfd_sqe s;

	assert_int_equal(tt_io_connect(io, 1, c->cntlid, SUB0, HOST_A), 0);
	/* an admin failure, then an I/O failure */
	s = tt_sqe(0xc5, 0, 0);
	s.cid = 0x51;
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	s = tt_sqe(NVMFD_CMD_READ, 1, 1024);
	s.cid = 0x52;
	s.cdw10 = 2047;
	s.cdw12 = 1;
	assert_int_equal(tt_cmd(io, &s, NULL, 0), TT_G(NVMFD_SC_LBA_RANGE));
	assert_int_equal(get_log(c->a, NVMFD_LOG_ERROR, 0, 0, 192, false), 0);
	memcpy(&en, b, sizeof(en)); /* newest first */
	assert_int_equal(en.error_count, 2);
	assert_int_equal(en.sqid, 1);
	assert_int_equal(en.cmdid, 0x52);
	assert_int_equal(en.status_field >> 1, TT_G(NVMFD_SC_LBA_RANGE));
	assert_int_equal(en.lba, 2047);
	assert_int_equal(en.nsid, 1);
	assert_int_equal(en.trtype, NVMFD_TRTYPE_TCP);
	memcpy(&en, b + 64, sizeof(en));
	assert_int_equal(en.error_count, 1);
	assert_int_equal(en.sqid, 0);
	assert_int_equal(en.cmdid, 0x51);
	assert_int_equal(en.status_field >> 1, TT_G(NVMFD_SC_INVALID_OPCODE));
	memcpy(&en, b + 128, sizeof(en));
	assert_int_equal(en.error_count, 0);
	/* SMART counts the entries (the failed Get Log above is not one) */
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	assert_int_equal(u64at(b, 176), 2); /* Number of Error Information Log Entries */
	/* wraps after 128 entries, newest first */
	for (int i = 0; i < 130; i++) {
		s = tt_sqe(0xc5, 0, 0);
		s.cid = (uint16_t)(0x1000 + i);
		assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	}
	assert_int_equal(get_log(c->a, NVMFD_LOG_ERROR, 0, 0, 8192, false), 0);
	memcpy(&en, b, sizeof(en));
	assert_int_equal(en.error_count, 132);
	assert_int_equal(en.cmdid, 0x1000 + 129);
	memcpy(&en, b + 127 * 64, sizeof(en));
	assert_int_equal(en.error_count, 5);
	tt_q_free(io);
}

static void test_features(void **state)
{
	struct actx *c = *state;

	/* Number of Queues: min(requested, qid_max = 4) both ways */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_NUM_QUEUES, 0), 0);
	assert_int_equal(c->a->last.result, 3 | (3u << 16));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 63 | (63u << 16)), 0);
	assert_int_equal(c->a->last.result, 3 | (3u << 16));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 1 | (7u << 16)), 0);
	assert_int_equal(c->a->last.result, 1 | (1u << 16));
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_NUM_QUEUES, 0), 0);
	assert_int_equal(c->a->last.result, 1 | (1u << 16));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 0xffff),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 0xffffu << 16),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* KATO */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_KATO, 0), 0);
	assert_int_equal(c->a->last.result, 5000);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_KATO, 15000), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_KATO, 0), 0);
	assert_int_equal(c->a->last.result, 15000);
	/* AEC: only the NS attribute bit sticks */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ASYNC_EVENT, 0xffffffff), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_ASYNC_EVENT, 0), 0);
	assert_int_equal(c->a->last.result, NVMFD_AEN_CFG_NS_ATTR);
	/* VWC: Get 1, Set refused */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_VOLATILE_WC, 0), 0);
	assert_int_equal(c->a->last.result, 1);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_VOLATILE_WC, 0),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* unknown FID, save bit */
	assert_int_equal(feature(c->a, false, 0x7d, 0), TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_KATO | (1u << 31), 1000),
			 TT_C(NVMFD_SC_FEATURE_NOT_SAVEABLE));
}

/* Get/Set of the mandatory features 01h, 02h, 04h and 05h. */
static void test_mandatory_features(void **state)
{
	struct actx *c = *state;
	const uint8_t *b = c->a->out;

	/* Arbitration: default burst "no limit", kept as set */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_ARBITRATION, 0), 0);
	assert_int_equal(c->a->last.result, 7);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ARBITRATION, 0x040302f3u), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_ARBITRATION, 0), 0);
	assert_int_equal(c->a->last.result, 0x04030203u); /* reserved bits 7:3 dropped */
	/* Power Management: PS 0 only (NPSS 0), workload hint kept */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_POWER_MGMT, 0), 0);
	assert_int_equal(c->a->last.result, 0);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_POWER_MGMT, 1),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_POWER_MGMT, 2u << 5), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_POWER_MGMT, 0), 0);
	assert_int_equal(c->a->last.result, 2u << 5);
	/* Temperature Threshold: composite over 343 K, under 0 by default */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 0), 0);
	assert_int_equal(c->a->last.result, 343);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 1u << 20), 0);
	assert_int_equal(c->a->last.result, 0);
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	assert_int_equal(b[0], 0); /* no critical warning */
	/* over threshold below the reported 293 K: warning bit 1 */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_TEMP_THRESH, 280), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 0), 0);
	assert_int_equal(c->a->last.result, 280);
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	assert_int_equal(b[0], 1u << 1);
	/* TMPSEL Fh (all sensors) sets the composite one; sensor 3 reads 0 */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_TEMP_THRESH, 350 | (0xfu << 16)), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 0), 0);
	assert_int_equal(c->a->last.result, 350);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 3u << 16), 0);
	assert_int_equal(c->a->last.result, 0);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_TEMP_THRESH, 300 | (1u << 20)), 0);
	assert_int_equal(get_log(c->a, NVMFD_LOG_SMART, 0xffffffff, 0, 512, false), 0);
	assert_int_equal(b[0], 1u << 1); /* under threshold above 293 K */
	/* reserved TMPSEL 9 / THSEL 2, Get of TMPSEL Fh */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_TEMP_THRESH, 9u << 16),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_TEMP_THRESH, 2u << 20),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_TEMP_THRESH, 0xfu << 16),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* Error Recovery: TLER kept, DULBE refused (NSFEAT bit 2 clear) */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_ERR_RECOVERY, 0), 0);
	assert_int_equal(c->a->last.result, 0);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ERR_RECOVERY, 1u << 16),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ERR_RECOVERY, 25), 0);
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_ERR_RECOVERY, 0), 0);
	assert_int_equal(c->a->last.result, 25);
	/* per controller: a second controller sees the defaults */
	{
		struct tt_q *a2 = tt_q_new(c->e, 0);

		tt_admin_up(a2, SUB0, HOST_B, 5000);
		assert_int_equal(feature(a2, false, NVMFD_FEAT_ERR_RECOVERY, 0), 0);
		assert_int_equal(a2->last.result, 0);
		assert_int_equal(feature(a2, false, NVMFD_FEAT_ARBITRATION, 0), 0);
		assert_int_equal(a2->last.result, 7);
		tt_q_free(a2);
	}
}

/* Number of Queues is refused once an I/O queue exists (and not before). */
static void test_num_queues_after_io_queue(void **state)
{
	struct actx *c = *state;
	struct tt_q *io = tt_q_new(c->e, 0);

	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 2 | (2u << 16)), 0);
	assert_int_equal(tt_io_connect(io, 1, c->cntlid, SUB0, HOST_A), 0);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_NUM_QUEUES, 0),
			 TT_G(NVMFD_SC_CMD_SEQ_ERROR));
	/* the count negotiated first still holds: qid 3 connects */
	assert_int_equal(feature(c->a, false, NVMFD_FEAT_NUM_QUEUES, 0), 0);
	assert_int_equal(c->a->last.result, 2 | (2u << 16));
	{
		struct tt_q *io3 = tt_q_new(c->e, 0);

		assert_int_equal(tt_io_connect(io3, 3, c->cntlid, SUB0, HOST_A), 0);
		tt_q_free(io3);
	}
	tt_q_free(io);
}

/* Version 1.3 subsystems do not advertise the 1.4 TBKAS attribute. */
static void test_version_tbkas(void **state)
{
	struct actx *c = *state;
	struct tt_q *a1 = tt_q_new(c->e, 0);
	const uint8_t *b = a1->out;

	/* and nvmetcli's attr.firmware / attr.ieee_oui are what FR, the
	 * Firmware Slot log and IEEE report */
	/* the core reads its own copy of the attributes (taken at create) */
	struct nvmfd_cfg_subsys *cs = (struct nvmfd_cfg_subsys *)c->e->tgt->subsys[1]->cfg;

	strcpy(cs->firmware, "6.1.0-1");
	cs->ieee_oui = 0x001b21;
	tt_admin_up(a1, SUB1, HOST_A, 5000); /* sub1: version 1.3 */
	assert_int_equal(identify(a1, NVMFD_ID_CNS_CTRL, 0, 0), 0);
	assert_int_equal(u32at(b, 80), NVMFD_VS_1_3);
	assert_int_equal(u32at(b, 96), NVMFD_CTRATT_HOST_ID_128);
	assert_memory_equal(b + 64, "6.1.0-1 ", 8);
	assert_int_equal(b[73], 0x21);
	assert_int_equal(b[74], 0x1b);
	assert_int_equal(b[75], 0x00);
	assert_int_equal(get_log(a1, NVMFD_LOG_FW_SLOT, 0, 0, 512, false), 0);
	assert_memory_equal(b + 8, "6.1.0-1 ", 8);
	tt_q_free(a1);
}

static void test_misc_admin(void **state)
{
	struct actx *c = *state;
	struct nvmfd_sqe s;

	s = tt_sqe(NVMFD_ADMIN_ABORT, 0, 0);
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), 0);
	assert_int_equal(c->a->last.result & 1, 1);
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE, 0, 0);
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), 0);
	/* KATO 0: Keep Alive is invalid */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_KATO, 0), 0);
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0),
			 NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_KA_TIMEOUT_INVALID));
	/* PCIe-only and unknown opcodes */
	s = tt_sqe(0x01, 0, 0); /* Create I/O SQ */
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	s = tt_sqe(0xc5, 0, 0);
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	/* I/O opcodes are not admin commands */
	s = tt_sqe(NVMFD_CMD_READ, 1, 512);
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
}

static void test_aer_limit_and_ns_change(void **state)
{
	struct actx *c = *state;
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	const uint8_t *b = c->a->out;

	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ASYNC_EVENT, NVMFD_AEN_CFG_NS_ATTR), 0);
	for (int i = 0; i < 4; i++) {
		s.cid = (uint16_t)(0x400 + i);
		assert_int_equal(tt_submit(c->a, &s, NULL, 0), 0); /* held */
	}
	s.cid = 0x404;
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), TT_C(NVMFD_SC_ASYNC_LIMIT));
	/* a namespace goes away: the oldest AER completes via the posted list */
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 2, false), 0);
	assert_int_equal(c->a->nr_kick, 1);
	unsigned int before = c->a->nr_resp;

	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 1);
	assert_int_equal(c->a->nr_resp, before + 1);
	assert_int_equal(c->a->last.cid, 0x400);
	assert_int_equal(nvmfd_cqe_status(&c->a->last), 0);
	assert_int_equal(c->a->last.result, 0x00040002);
	/* masked until the log is read: a second change posts nothing */
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 1, false), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 0);
	/* nsid 2 is gone for I/O and Identify */
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0, 0), 0);
	assert_int_equal(u32at(b, 0), 0);
	/* changed list with RAE: kept */
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, true), 0);
	assert_int_equal(u32at(b, 0), 2);
	assert_int_equal(u32at(b, 4), 1);
	assert_int_equal(u32at(b, 8), 0);
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(b, 0), 2);
	/* cleared by that read, AEN re-armed */
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(b, 0), 0);
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 2, true), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 1);
	assert_int_equal(c->a->last.cid, 0x401);
	assert_int_equal(c->a->last.result, 0x00040002);
	/* the remaining two AERs are failed when the controller is torn down
	 * by keep-alive expiry */
	assert_int_equal(nvmfd__tgt_check_kato(c->e->tgt, nvmfd__tgt_now_ns() + 60ull * 1000000000),
			 1);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 2);
	assert_int_equal(c->a->cqes[c->a->nr_resp - 2].cid, 0x402);
	assert_int_equal(nvmfd_cqe_status(&c->a->cqes[c->a->nr_resp - 2]),
			 TT_G(NVMFD_SC_INTERNAL));
	assert_int_equal(c->a->last.cid, 0x403);
	assert_int_equal(c->a->nr_shutdown, 1);
}

/* Live namespace add/remove (nvmfd_tgt_ns_add/remove): AEN, Changed
 * Namespace List, sorted active list, I/O refused once removed, a failed
 * add changes nothing. */
static void test_ns_add_remove_live(void **state)
{
	struct actx *c = *state;
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);
	const uint8_t *b = c->a->out;
	struct nvmfd_cfg_ns cn;
	struct tt_q *io = tt_q_new(c->e, 0);

	assert_int_equal(tt_io_connect(io, 1, c->cntlid, SUB0, HOST_A), 0);
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ASYNC_EVENT, NVMFD_AEN_CFG_NS_ATTR), 0);
	s.cid = 0x500;
	assert_int_equal(tt_submit(c->a, &s, NULL, 0), 0); /* held */
	memset(&cn, 0, sizeof(cn));
	tt_ram_ns(&cn, 7, 1 << 20, 9);
	strcpy(cn.path, "ram:1M");
	/* NSID in use, bad NSID, no such subsystem: nothing changes, no AEN */
	cn.nsid = 2;
	assert_int_equal(nvmfd_tgt_ns_add(c->e->tgt, 0, &cn), -EEXIST);
	cn.nsid = 0;
	assert_int_equal(nvmfd_tgt_ns_add(c->e->tgt, 0, &cn), -EINVAL);
	cn.nsid = 7;
	assert_int_equal(nvmfd_tgt_ns_add(c->e->tgt, 9, &cn), -ENOENT);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 0);
	/* add nsid 7: the AER completes, Notice / NS attribute changed / log 04h */
	assert_int_equal(nvmfd_tgt_ns_add(c->e->tgt, 0, &cn), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 1);
	assert_int_equal(c->a->last.cid, 0x500);
	assert_int_equal(c->a->last.result, 0x00040002);
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(b, 0), 7);
	assert_int_equal(u32at(b, 4), 0);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0, 0), 0);
	assert_int_equal(u32at(b, 0), 1);
	assert_int_equal(u32at(b, 4), 2);
	assert_int_equal(u32at(b, 8), 7);
	assert_int_equal(u32at(b, 12), 0);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS, 7, 0), 0);
	assert_int_equal(u64at(b, 0), (1 << 20) / 512); /* NSZE */
	{
		struct nvmfd_sqe r = tt_sqe(NVMFD_CMD_READ, 7, 512);

		r.cid = 0x510;
		assert_int_equal(tt_cmd(io, &r, NULL, 0), 0);
	}
	/* remove nsid 1 (a slot before the added one): AEN again */
	s.cid = 0x501;
	assert_int_equal(tt_submit(c->a, &s, NULL, 0), 0);
	assert_int_equal(nvmfd_tgt_ns_remove(c->e->tgt, 0, 1), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 1);
	assert_int_equal(c->a->last.cid, 0x501);
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(b, 0), 1);
	assert_int_equal(identify(c->a, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0, 0), 0);
	assert_int_equal(u32at(b, 0), 2);
	assert_int_equal(u32at(b, 4), 7);
	assert_int_equal(u32at(b, 8), 0);
	{
		struct nvmfd_sqe r = tt_sqe(NVMFD_CMD_READ, 1, 512);

		r.cid = 0x511;
		assert_int_equal(tt_cmd(io, &r, NULL, 0), TT_G(NVMFD_SC_INVALID_NS));
	}
	assert_int_equal(nvmfd_tgt_ns_remove(c->e->tgt, 0, 1), -ENOENT);
	assert_int_equal(nvmfd_tgt_ns_remove(c->e->tgt, 0, 99), -ENOENT);
	tt_q_free(io);
}

/* A removed namespace with a backend io in flight keeps its backend open
 * (DRAINING) until the io completes; the next reap then closes it and the
 * slot is reused by the next add. An io that looked the namespace up
 * before the removal but reaches the backend after it is refused. */
static void test_ns_remove_drains(void **state)
{
	struct actx *c = *state;
	struct nvmfd_tgt_subsys *s = c->e->tgt->subsys[0];
	struct nvmfd_tgt_ns *ns = nvmfd__tgt_ns_find(s, 2);
	struct nvmfd_cfg_ns cn;
	unsigned int slots = s->nr_ns;

	assert_non_null(ns);
	assert_true(nvmfd__tgt_ns_get(ns, 2)); /* an io in flight */
	assert_int_equal(nvmfd_tgt_ns_remove(c->e->tgt, 0, 2), 0);
	assert_null(nvmfd__tgt_ns_find(s, 2));
	assert_false(nvmfd__tgt_ns_get(ns, 2)); /* found before, submitted after */
	assert_int_equal(nvmfd__tgt_reap(c->e->tgt), 0);
	assert_int_equal(ns->state, NVMFD_TGT_NS_DRAINING);
	assert_non_null(ns->bk);
	nvmfd__tgt_ns_put(ns); /* it completes */
	assert_int_equal(nvmfd__tgt_reap(c->e->tgt), 1);
	assert_int_equal(ns->state, NVMFD_TGT_NS_FREE);
	assert_null(ns->bk);
	/* the freed slot is taken by the next add (no new slot) */
	memset(&cn, 0, sizeof(cn));
	tt_ram_ns(&cn, 9, 1 << 20, 9);
	strcpy(cn.path, "ram:1M");
	assert_int_equal(nvmfd_tgt_ns_add(c->e->tgt, 0, &cn), 0);
	assert_int_equal(s->nr_ns, slots);
	assert_ptr_equal(nvmfd__tgt_ns_find(s, 9), ns);
	assert_int_equal(ns->inflight, 0);
}

static void test_event_before_aer(void **state)
{
	struct actx *c = *state;
	struct nvmfd_sqe s = tt_sqe(NVMFD_ADMIN_ASYNC_EVENT, 0, 0);

	/* AEN disabled: the change is logged but not reported */
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 2, false), 0);
	s.cid = 0x500;
	assert_int_equal(tt_submit(c->a, &s, NULL, 0), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 0);
	/* teardown of the admin queue forgets the held AER without touching it */
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(u32at(c->a->out, 0), 2);
	/* enabled: an event with no AER outstanding waits for the next AER */
	assert_int_equal(feature(c->a, true, NVMFD_FEAT_ASYNC_EVENT, NVMFD_AEN_CFG_NS_ATTR), 0);
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 2, true), 0);
	assert_int_equal(nvmfd__tgt_qp_drain_posted(&c->a->qp), 1); /* the held one */
	assert_int_equal(c->a->last.cid, 0x500);
	assert_int_equal(get_log(c->a, NVMFD_LOG_CHANGED_NS, 0, 0, 4096, false), 0);
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 2, false), 0);
	s.cid = 0x501;
	assert_int_equal(tt_cmd(c->a, &s, NULL, 0), 0); /* completes at once */
	assert_int_equal(c->a->last.result, 0x00040002);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_identify_ctrl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identify_ns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smart_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mandatory_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_num_queues_after_io_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_tbkas, setup, teardown),
		cmocka_unit_test_setup_teardown(test_misc_admin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aer_limit_and_ns_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_before_aer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_add_remove_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_remove_drains, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
