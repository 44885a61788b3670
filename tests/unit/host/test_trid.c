// SPDX-License-Identifier: MIT
/* test_trid.c - transport ID parsing, default host NQN, status names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <nvmfd/host.h>

static void test_full(void **state)
{
	struct nvmfd_host_trid t;
	char err[128];

	assert_int_equal(nvmfd_host_trid_parse("trtype:TCP adrfam:IPv4 traddr:127.0.0.1 "
					       "trsvcid:4421 subnqn:nqn.2026-11.io.nvmfd:demo "
					       "hostnqn:nqn.2014-08.org.nvmexpress:uuid:1",
					       &t, err, sizeof(err)),
			 0);
	assert_int_equal(t.trtype, NVMFD_TRTYPE_TCP);
	assert_int_equal(t.adrfam, NVMFD_ADRFAM_IPV4);
	assert_string_equal(t.traddr, "127.0.0.1");
	assert_string_equal(t.trsvcid, "4421");
	assert_string_equal(t.subnqn, "nqn.2026-11.io.nvmfd:demo");
	assert_string_equal(t.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:1");
}

static void test_defaults_and_case(void **state)
{
	struct nvmfd_host_trid t;

	assert_int_equal(nvmfd_host_trid_parse("  TRADDR=::1\tadrfam:ipv6 trtype:tcp ", &t, NULL, 0),
			 0);
	assert_int_equal(t.adrfam, NVMFD_ADRFAM_IPV6);
	assert_string_equal(t.traddr, "::1");
	assert_string_equal(t.trsvcid, "4420");
	assert_string_equal(t.subnqn, "");
	assert_string_equal(t.hostnqn, "");
}

/* IPv6: "traddr:[::1]" (brackets removed) and "traddr:::1" both give "::1";
 * without adrfam an IPv6 address sets IPv6 (getaddrinfo with AF_INET cannot
 * resolve it). */
static void test_ipv6_forms(void **state)
{
	static const char *const ok[] = {
		"traddr:[::1] trsvcid:4421",
		"traddr:::1 trsvcid:4421",
		"adrfam:IPv6 traddr:[::1] trsvcid:4421",
		"traddr=[::1] adrfam:ipv6 trsvcid:4421",
	};
	struct nvmfd_host_trid t;
	char err[128];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		err[0] = '\0';
		if (nvmfd_host_trid_parse(ok[i], &t, err, sizeof(err)))
			fail_msg("'%s' rejected: %s", ok[i], err);
		assert_string_equal(t.traddr, "::1");
		assert_int_equal(t.adrfam, NVMFD_ADRFAM_IPV6);
		assert_string_equal(t.trsvcid, "4421");
	}
	assert_int_equal(nvmfd_host_trid_parse("traddr:[fe80::1%eth0]", &t, err, sizeof(err)), 0);
	assert_string_equal(t.traddr, "fe80::1%eth0");
	assert_int_equal(t.adrfam, NVMFD_ADRFAM_IPV6);
	/* IPv4 and host names keep the IPv4 default. */
	assert_int_equal(nvmfd_host_trid_parse("traddr:10.1.2.3", &t, err, sizeof(err)), 0);
	assert_int_equal(t.adrfam, NVMFD_ADRFAM_IPV4);
	assert_string_equal(t.traddr, "10.1.2.3");
}

static void test_errors(void **state)
{
	static const struct {
		const char *in;
		const char *msg;
	} cases[] = {
		{ "trtype:RDMA traddr:1.2.3.4", "unsupported trtype" },
		{ "traddr:1.2.3.4 adrfam:IPX", "unsupported adrfam" },
		{ "traddr:1.2.3.4 trsvcid:44a0", "not a port number" },
		{ "traddr:1.2.3.4 trsvcid:70000", "out of range" },
		{ "traddr:1.2.3.4 foo:bar", "unknown key 'foo'" },
		{ "traddr:1.2.3.4 subnqn:", "empty or too long" },
		{ "traddr", "malformed token" },
		{ "trtype:TCP subnqn:x", "missing traddr" },
		{ "", "missing traddr" },
		{ "traddr:[::1", "missing ']'" },
		{ "traddr:[::1]:4420", "trsvcid:PORT" },
		{ "traddr:[]", "brackets must hold an IPv6 address" },
		{ "traddr:[10.0.0.1]", "brackets must hold an IPv6 address" },
		{ "traddr:::1]", "']' without '['" },
		{ "adrfam:IPv4 traddr:[::1]", "IPv6 address but adrfam is IPv4" },
		{ "traddr:::1 adrfam:ipv4", "IPv6 address but adrfam is IPv4" },
	};
	char err[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nvmfd_host_trid t;

		err[0] = '\0';
		if (nvmfd_host_trid_parse(cases[i].in, &t, err, sizeof(err)) != -EINVAL)
			fail_msg("case '%s' accepted", cases[i].in);
		if (!strstr(err, cases[i].msg))
			fail_msg("case '%s': message '%s' lacks '%s'", cases[i].in, err,
				 cases[i].msg);
	}
}

static void test_too_long(void **state)
{
	char in[700], err[128];
	struct nvmfd_host_trid t;

	strcpy(in, "traddr:1.1.1.1 subnqn:");
	memset(in + strlen(in), 'a', 300);
	in[22 + 300] = '\0';
	assert_int_equal(nvmfd_host_trid_parse(in, &t, err, sizeof(err)), -EINVAL);
}

static void test_hostnqn(void **state)
{
	char a[NVMFD_NQN_SIZE], small[8];

	assert_int_equal(nvmfd_host_default_hostnqn(a, sizeof(a)), 0);
	assert_true(!strncmp(a, "nqn.", 4));
	assert_true(strlen(a) < NVMFD_NQN_SIZE);
	if (!strncmp(a, "nqn.2014-08.org.nvmexpress:uuid:", 32)) {
		/* Generated: 8-4-4-4-12 hex with the version nibble 4. */
		assert_int_equal(strlen(a), 32 + 36);
		assert_int_equal(a[32 + 8], '-');
		assert_int_equal(a[32 + 14], '4');
	}
	assert_int_equal(nvmfd_host_default_hostnqn(small, sizeof(small)), -ENOSPC);
}

static void test_status_names(void **state)
{
	char b[32];

	assert_string_equal(nvmfd_host_status_str(0, false, b, sizeof(b)), "SUCCESS");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(1, 0x91) | NVMFD_STATUS_DNR, false, b,
						  sizeof(b)),
			    "AUTH_REQUIRED");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(1, 0x82) | NVMFD_STATUS_DNR, true,
						  b, sizeof(b)),
			    "CONNECT_INVALID_PARAM");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(1, 0x02), false, b, sizeof(b)),
			    "INVALID_QSIZE");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(0, 0x04), false, b, sizeof(b)),
			    "DATA_XFER_ERROR");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(2, 0x81), false, b, sizeof(b)),
			    "READ_ERROR");
	assert_string_equal(nvmfd_host_status_str(NVMFD_STATUS(7, 0xee), false, b, sizeof(b)),
			    "SCT 0x7 SC 0xee");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),	 cmocka_unit_test(test_defaults_and_case),
		cmocka_unit_test(test_errors),	 cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_hostnqn),	 cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_ipv6_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
