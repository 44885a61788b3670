// SPDX-License-Identifier: MIT
/* test_status.c - the errno -> NVMe status mapping. */
#include "bk_test.h"

#include "nvmfd/spec.h"

static void expect(int err, enum nvmfd_bk_op op, unsigned int sct, unsigned int sc, bool dnr)
{
	nvmfd_status_t s = nvmfd__status_from_errno(err, op);

	assert_int_equal(NVMFD_STATUS_SCT(s), sct);
	assert_int_equal(NVMFD_STATUS_SC(s), sc);
	assert_int_equal(!!(s & NVMFD_STATUS_DNR), dnr);
	assert_int_equal(s & NVMFD_STATUS_MORE, 0);
	assert_int_equal(NVMFD_STATUS_CRD(s), 0);
}

static void test_status_success(void **state)
{
	assert_int_equal(nvmfd__status_from_errno(0, NVMFD_BK_READ), 0);
	assert_int_equal(nvmfd__status_from_errno(4096, NVMFD_BK_WRITE), 0);
	assert_int_equal(nvmfd__status_from_errno(0, NVMFD_BK_FLUSH), 0);
}

static void test_status_generic(void **state)
{
	expect(-ENOSPC, NVMFD_BK_WRITE, NVMFD_SCT_GENERIC, NVMFD_SC_CAP_EXCEEDED, true);
	expect(-EREMOTEIO, NVMFD_BK_READ, NVMFD_SCT_GENERIC, NVMFD_SC_LBA_RANGE, true);
	expect(-ERANGE, NVMFD_BK_WRITE_ZEROES, NVMFD_SCT_GENERIC, NVMFD_SC_LBA_RANGE, true);
	expect(-EOPNOTSUPP, NVMFD_BK_DISCARD, NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE, true);
	expect(-EINVAL, NVMFD_BK_READ, NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD, true);
	expect(-ECANCELED, NVMFD_BK_READ, NVMFD_SCT_GENERIC, NVMFD_SC_ABORT_REQ, false);
	expect(-ENOMEM, NVMFD_BK_READ, NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL, false);
	expect(-EBUSY, NVMFD_BK_WRITE, NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL, false);
	expect(-EBADF, NVMFD_BK_FLUSH, NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL, false);
	/* The raw encoding: SCT in bits 10:8, SC in 7:0, DNR bit 14. */
	assert_int_equal(nvmfd__status_from_errno(-ERANGE, NVMFD_BK_READ), 0x4080);
	assert_int_equal(nvmfd__status_from_errno(-ENOMEM, NVMFD_BK_READ), 0x0006);
}

static void test_status_media(void **state)
{
	expect(-EIO, NVMFD_BK_READ, NVMFD_SCT_MEDIA, NVMFD_SC_READ_ERROR, false);
	expect(-EIO, NVMFD_BK_WRITE, NVMFD_SCT_MEDIA, NVMFD_SC_WRITE_FAULT, false);
	expect(-EIO, NVMFD_BK_FLUSH, NVMFD_SCT_MEDIA, NVMFD_SC_WRITE_FAULT, false);
	expect(-EIO, NVMFD_BK_WRITE_ZEROES, NVMFD_SCT_MEDIA, NVMFD_SC_WRITE_FAULT, false);
	expect(-EIO, NVMFD_BK_DISCARD, NVMFD_SCT_MEDIA, NVMFD_SC_WRITE_FAULT, false);
	expect(-ENODATA, NVMFD_BK_READ, NVMFD_SCT_MEDIA, NVMFD_SC_READ_ERROR, false);
	expect(-EROFS, NVMFD_BK_WRITE, NVMFD_SCT_MEDIA, NVMFD_SC_ACCESS_DENIED, true);
	expect(-EACCES, NVMFD_BK_WRITE, NVMFD_SCT_MEDIA, NVMFD_SC_ACCESS_DENIED, true);
	expect(-EPERM, NVMFD_BK_READ, NVMFD_SCT_MEDIA, NVMFD_SC_ACCESS_DENIED, true);
	assert_int_equal(nvmfd__status_from_errno(-EIO, NVMFD_BK_WRITE), 0x0280);
	assert_int_equal(nvmfd__status_from_errno(-EIO, NVMFD_BK_READ), 0x0281);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_success),
		cmocka_unit_test(test_status_generic),
		cmocka_unit_test(test_status_media),
	};

	return cmocka_run_group_tests_name("backend-status", tests, NULL, NULL);
}
