// SPDX-License-Identifier: MIT
/* test_io.c - Read/Write/Flush/Write Zeroes/DSM on RAM namespaces through
 * the seam, with data verification and every error status. */
#include <fcntl.h>
#include <unistd.h>

#include "tgt_test.h"

struct ictx {
	struct tt_env *e;
	struct tt_q *a;
	struct tt_q *io;
	uint16_t cntlid;
};

static uint8_t wbuf[TT_MAX_IO + 4096];

static int setup(void **state)
{
	struct ictx *c = calloc(1, sizeof(*c));

	c->e = tt_env_new();
	c->a = tt_q_new(c->e, 0);
	c->io = tt_q_new(c->e, 0);
	c->cntlid = tt_admin_up(c->a, SUB0, HOST_A, 0);
	assert_int_equal(tt_io_connect(c->io, 1, c->cntlid, SUB0, HOST_A), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ictx *c = *state;

	tt_q_free(c->io);
	tt_q_free(c->a);
	tt_env_free(c->e);
	free(c);
	return 0;
}

static void pattern(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i * 31 + seed * 7 + (i >> 9)) & 0xff);
}

static struct nvmfd_sqe rw(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb,
			   unsigned int shift)
{
	struct nvmfd_sqe s = tt_sqe(opc, nsid, nlb << shift);

	s.cid = 0x77;
	s.cdw10 = (uint32_t)slba;
	s.cdw11 = (uint32_t)(slba >> 32);
	s.cdw12 = nlb - 1;
	return s;
}

static nvmfd_status_t do_write(struct tt_q *q, uint32_t nsid, uint64_t slba, uint32_t nlb,
			       unsigned int shift, const uint8_t *data)
{
	struct nvmfd_sqe s = rw(NVMFD_CMD_WRITE, nsid, slba, nlb, shift);

	return tt_cmd(q, &s, data, nlb << shift);
}

static nvmfd_status_t do_read(struct tt_q *q, uint32_t nsid, uint64_t slba, uint32_t nlb,
			      unsigned int shift)
{
	struct nvmfd_sqe s = rw(NVMFD_CMD_READ, nsid, slba, nlb, shift);

	return tt_cmd(q, &s, NULL, 0);
}

static void test_rw_roundtrip(void **state)
{
	struct ictx *c = *state;

	pattern(wbuf, 8192, 1);
	assert_int_equal(do_write(c->io, 1, 8, 16, 9, wbuf), 0);
	assert_int_equal(c->io->last.sqid, 1);
	assert_int_equal(do_read(c->io, 1, 8, 16, 9), 0);
	assert_int_equal(c->io->out_len, 8192);
	assert_memory_equal(c->io->out, wbuf, 8192);
	/* unaligned sub-range */
	assert_int_equal(do_read(c->io, 1, 9, 3, 9), 0);
	assert_memory_equal(c->io->out, wbuf + 512, 1536);
	/* 4 KiB namespace */
	pattern(wbuf, 3 * 4096, 2);
	assert_int_equal(do_write(c->io, 2, 255 - 2, 3, 12, wbuf), 0); /* last blocks */
	assert_int_equal(do_read(c->io, 2, 253, 3, 12), 0);
	assert_memory_equal(c->io->out, wbuf, 3 * 4096);
	/* largest transfer = MDTS */
	pattern(wbuf, TT_MAX_IO, 3);
	assert_int_equal(do_write(c->io, 1, 0, TT_MAX_IO / 512, 9, wbuf), 0);
	assert_int_equal(do_read(c->io, 1, 0, TT_MAX_IO / 512, 9), 0);
	assert_memory_equal(c->io->out, wbuf, TT_MAX_IO);
}

static void test_fua_and_flush(void **state)
{
	struct ictx *c = *state;
	struct nvmfd_sqe s = rw(NVMFD_CMD_WRITE, 1, 0, 1, 9);
	struct nvmfd_tgt_req *req = &c->io->reqs[c->io->next_slot];

	pattern(wbuf, 512, 4);
	s.cdw12 |= NVMFD_RW_FUA;
	assert_int_equal(tt_cmd(c->io, &s, wbuf, 512), 0);
	assert_true(req->bk_io.fua);
	assert_int_equal(req->bk_io.op, NVMFD_BK_WRITE);
	req = &c->io->reqs[c->io->next_slot];
	s = rw(NVMFD_CMD_WRITE, 1, 0, 1, 9);
	assert_int_equal(tt_cmd(c->io, &s, wbuf, 512), 0);
	assert_false(req->bk_io.fua);
	req = &c->io->reqs[c->io->next_slot];
	s = tt_sqe(NVMFD_CMD_FLUSH, 1, 0);
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), 0);
	assert_int_equal(req->bk_io.op, NVMFD_BK_FLUSH);
	s = tt_sqe(NVMFD_CMD_FLUSH, 7, 0);
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_NS));
}

static void test_write_zeroes(void **state)
{
	struct ictx *c = *state;
	struct nvmfd_sqe s;
	uint8_t zero[2048] = { 0 };

	pattern(wbuf, 16 * 512, 5);
	assert_int_equal(do_write(c->io, 1, 100, 16, 9, wbuf), 0);
	s = tt_sqe(NVMFD_CMD_WRITE_ZEROES, 1, 0);
	s.cdw10 = 104;
	s.cdw12 = 3; /* 4 blocks: 104..107 */
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), 0);
	assert_int_equal(do_read(c->io, 1, 100, 16, 9), 0);
	assert_memory_equal(c->io->out, wbuf, 4 * 512);
	assert_memory_equal(c->io->out + 4 * 512, zero, 4 * 512);
	assert_memory_equal(c->io->out + 8 * 512, wbuf + 8 * 512, 8 * 512);
	/* out of range */
	s.cdw10 = 2047;
	s.cdw12 = 1;
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_LBA_RANGE));
	/* no data allowed */
	s = tt_sqe(NVMFD_CMD_WRITE_ZEROES, 1, 512);
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
}

static void test_dsm(void **state)
{
	struct ictx *c = *state;
	struct nvmfd_dsm_range r[3];
	struct nvmfd_sqe s;
	uint8_t zero[4096] = { 0 };

	pattern(wbuf, 32 * 512, 6);
	assert_int_equal(do_write(c->io, 1, 0, 32, 9, wbuf), 0);
	memset(r, 0, sizeof(r));
	r[0].slba = 2;
	r[0].nlb = 2;
	r[1].slba = 10; /* zero-length range: ignored */
	r[1].nlb = 0;
	r[2].slba = 20;
	r[2].nlb = 4;
	/* without AD: hint only, data stays */
	s = tt_sqe(NVMFD_CMD_DSM, 1, sizeof(r));
	s.cdw10 = 2;
	s.cdw11 = NVMFD_DSM_IDR;
	assert_int_equal(tt_cmd(c->io, &s, r, sizeof(r)), 0);
	assert_int_equal(do_read(c->io, 1, 0, 32, 9), 0);
	assert_memory_equal(c->io->out, wbuf, 32 * 512);
	/* deallocate: RAM reads zeroes afterwards (DLFEAT) */
	s.cdw11 = NVMFD_DSM_AD;
	assert_int_equal(tt_cmd(c->io, &s, r, sizeof(r)), 0);
	assert_int_equal(do_read(c->io, 1, 0, 32, 9), 0);
	assert_memory_equal(c->io->out, wbuf, 2 * 512);
	assert_memory_equal(c->io->out + 2 * 512, zero, 2 * 512);
	assert_memory_equal(c->io->out + 4 * 512, wbuf + 4 * 512, 16 * 512);
	assert_memory_equal(c->io->out + 20 * 512, zero, 4 * 512);
	assert_memory_equal(c->io->out + 24 * 512, wbuf + 24 * 512, 8 * 512);
	/* a range beyond the namespace fails the command before any discard */
	r[0].slba = 0;
	r[0].nlb = 1;
	r[2].slba = 2047;
	r[2].nlb = 2;
	assert_int_equal(do_write(c->io, 1, 0, 1, 9, wbuf), 0);
	assert_int_equal(tt_cmd(c->io, &s, r, sizeof(r)), TT_G(NVMFD_SC_LBA_RANGE));
	assert_int_equal(do_read(c->io, 1, 0, 1, 9), 0);
	assert_memory_equal(c->io->out, wbuf, 512);
	/* SGL must carry (NR + 1) * 16 bytes */
	s = tt_sqe(NVMFD_CMD_DSM, 1, 16);
	s.cdw10 = 2;
	s.cdw11 = NVMFD_DSM_AD;
	assert_int_equal(tt_cmd(c->io, &s, r, sizeof(r)), TT_G(NVMFD_SC_SGL_INVALID_DATA));
}

static void test_io_errors(void **state)
{
	struct ictx *c = *state;
	struct nvmfd_sqe s;

	/* namespaces */
	assert_int_equal(do_read(c->io, 3, 0, 1, 9), TT_G(NVMFD_SC_INVALID_NS));
	assert_int_equal(do_read(c->io, 0, 0, 1, 9), TT_G(NVMFD_SC_INVALID_NS));
	assert_int_equal(do_read(c->io, 0xffffffff, 0, 1, 9), TT_G(NVMFD_SC_INVALID_NS));
	assert_int_equal(do_read(c->io, 5, 0, 1, 9), TT_G(NVMFD_SC_INVALID_NS)); /* sub1's */
	/* LBA range: last block ok, one past fails, slba overflow fails */
	assert_int_equal(do_read(c->io, 1, 2047, 1, 9), 0);
	assert_int_equal(do_read(c->io, 1, 2047, 2, 9), TT_G(NVMFD_SC_LBA_RANGE));
	assert_int_equal(do_read(c->io, 1, 2048, 1, 9), TT_G(NVMFD_SC_LBA_RANGE));
	assert_int_equal(do_read(c->io, 1, 0xffffffffffffffffull, 2, 9),
			 TT_G(NVMFD_SC_LBA_RANGE));
	pattern(wbuf, 1024, 7);
	assert_int_equal(do_write(c->io, 2, 256, 1, 12, wbuf), TT_G(NVMFD_SC_LBA_RANGE));
	/* SGL length != (NLB + 1) << shift */
	s = rw(NVMFD_CMD_READ, 1, 0, 2, 9);
	s.dptr.length = 512;
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_SGL_INVALID_DATA));
	s = rw(NVMFD_CMD_WRITE, 2, 0, 1, 12);
	s.dptr.length = 512; /* 512-byte thinking on a 4K namespace */
	assert_int_equal(tt_cmd(c->io, &s, wbuf, 512), TT_G(NVMFD_SC_SGL_INVALID_DATA));
	/* beyond MDTS (256 KiB) */
	assert_int_equal(do_read(c->io, 1, 0, TT_MAX_IO / 512 + 1, 9),
			 TT_G(NVMFD_SC_INVALID_FIELD));
	/* opcodes: Compare and admin opcodes are not I/O commands */
	s = rw(0x05, 1, 0, 1, 9);
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	s = tt_sqe(NVMFD_ADMIN_KEEP_ALIVE + 0x60, 1, 0);
	assert_int_equal(tt_cmd(c->io, &s, NULL, 0), TT_G(NVMFD_SC_INVALID_OPCODE));
	/* a disabled namespace */
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 1, false), 0);
	assert_int_equal(do_read(c->io, 1, 0, 1, 9), TT_G(NVMFD_SC_INVALID_NS));
	assert_int_equal(nvmfd__tgt_ns_set_enabled(c->e->tgt, 0, 1, true), 0);
	assert_int_equal(do_read(c->io, 1, 0, 1, 9), 0);
	/* controller disabled: I/O is a sequence error */
	assert_int_equal(tt_prop_set(c->a, NVMFD_REG_CC, 0), 0);
	assert_int_equal(do_read(c->io, 1, 0, 1, 9), TT_G(NVMFD_SC_CMD_SEQ_ERROR));
}

static void test_pipelined(void **state)
{
	struct ictx *c = *state;
	unsigned int before = c->io->nr_resp;

	/* eight writes in flight before any reap, like a transport pass */
	for (int i = 0; i < 8; i++) {
		struct nvmfd_tgt_req *req = &c->io->reqs[i];

		req->sqe = rw(NVMFD_CMD_WRITE, 1, (uint64_t)i * 8, 8, 9);
		req->sqe.cid = (uint16_t)(0x900 + i);
		req->in_capsule = false;
		assert_int_equal(nvmfd__tgt_req_init(req), 0);
		assert_int_equal(req->xfer, NVMFD_XFER_H2C);
		assert_int_equal(req->data_len, 4096);
		memset(req->data, 0x10 + i, 4096);
		nvmfd__tgt_req_execute(req);
	}
	assert_int_equal(c->io->nr_resp, before);
	assert_int_equal(nvmfd__tgt_qp_inflight(&c->io->qp), 8);
	assert_int_equal(nvmfd__tgt_qp_flush(&c->io->qp), 8); /* one batch */
	for (int i = 0; i < 100 && c->io->nr_resp < before + 8; i++)
		nvmfd__tgt_qp_poll(&c->io->qp, false);
	assert_int_equal(c->io->nr_resp, before + 8);
	assert_int_equal(do_read(c->io, 1, 0, 64, 9), 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(c->io->out[i * 4096 + 100], 0x10 + i);
	/* SQ head advanced once per command, modulo 128 */
	assert_int_equal(c->io->last.sqhd, (1 + 8 + 1) % 128);
}

/* A file namespace: real io_uring I/O, Flush, and data on disk after the
 * backends are closed (as nvmfd_tgt_stop() does). */
static void test_file_backend(void **state)
{
	struct tt_env *e = calloc(1, sizeof(*e));
	char path[] = "/tmp/nvmfd-tgt-io-XXXXXX";
	struct tt_q *a, *io;
	struct nvmfd_cfg_ns *ns;
	struct nvmfd_sqe s;
	uint16_t cntlid;
	uint8_t *disk;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	tt_cfg_build(&e->cfg);
	ns = &e->cfg.subsys[0].ns[0];
	ns->bk.type = NVMFD_BK_FILE;
	ns->bk.size = 1 << 20;
	ns->bk.lba_shift = 9;
	snprintf(ns->path, sizeof(ns->path), "%s", path);
	ns->bk.path = ns->path;
	assert_int_equal(nvmfd__tgt_core_create(&e->cfg, &e->tgt), 0);
	a = tt_q_new(e, 0);
	io = tt_q_new(e, 0);
	cntlid = tt_admin_up(a, SUB0, HOST_A, 0);
	assert_int_equal(tt_io_connect(io, 1, cntlid, SUB0, HOST_A), 0);
	/* Identify NS reports the file geometry and read-zeroes */
	s = tt_sqe(NVMFD_ADMIN_IDENTIFY, 1, 4096);
	s.cdw10 = NVMFD_ID_CNS_NS;
	assert_int_equal(tt_cmd(a, &s, NULL, 0), 0);
	assert_int_equal(a->out[33], NVMFD_DLFEAT_READ_ZEROES);
	pattern(wbuf, 64 * 1024, 9);
	assert_int_equal(do_write(io, 1, 256, 128, 9, wbuf), 0);
	s = tt_sqe(NVMFD_CMD_FLUSH, 1, 0);
	assert_int_equal(tt_cmd(io, &s, NULL, 0), 0);
	assert_int_equal(do_read(io, 1, 256, 128, 9), 0);
	assert_memory_equal(io->out, wbuf, 64 * 1024);
	/* Write Zeroes and a two-range deallocate read back as zeroes */
	{
		static const uint8_t zero[4096];
		struct nvmfd_dsm_range r[2];

		s = tt_sqe(NVMFD_CMD_WRITE_ZEROES, 1, 0);
		s.cdw10 = 300;
		s.cdw12 = 7;
		assert_int_equal(tt_cmd(io, &s, NULL, 0), 0);
		memset(r, 0, sizeof(r));
		r[0].slba = 256;
		r[0].nlb = 8;
		r[1].slba = 376;
		r[1].nlb = 8;
		s = tt_sqe(NVMFD_CMD_DSM, 1, sizeof(r));
		s.cdw10 = 1;
		s.cdw11 = NVMFD_DSM_AD;
		assert_int_equal(tt_cmd(io, &s, r, sizeof(r)), 0);
		assert_int_equal(do_read(io, 1, 256, 128, 9), 0);
		assert_memory_equal(io->out, zero, 4096);
		assert_memory_equal(io->out + 4096, wbuf + 4096, (300 - 264) * 512);
		assert_memory_equal(io->out + (300 - 256) * 512, zero, 4096);
		assert_memory_equal(io->out + (308 - 256) * 512, wbuf + (308 - 256) * 512,
				    (376 - 308) * 512);
		assert_memory_equal(io->out + (376 - 256) * 512, zero, 4096);
		/* restore the pattern for the on-disk check */
		assert_int_equal(do_write(io, 1, 256, 128, 9, wbuf), 0);
	}
	tt_q_free(io);
	tt_q_free(a);
	assert_int_equal(nvmfd__tgt_core_close_backends(e->tgt, true, NULL), 0);
	disk = malloc(64 * 1024);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, disk, 64 * 1024, 256 * 512), 64 * 1024);
	assert_memory_equal(disk, wbuf, 64 * 1024);
	close(fd);
	free(disk);
	unlink(path);
	tt_env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rw_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fua_and_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dsm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined, setup, teardown),
		cmocka_unit_test(test_file_backend),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
