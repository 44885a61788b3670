// SPDX-License-Identifier: MIT
/*
 * test_dhchap.c - unit tests of src/cfg/dhchap.c and the hosts[].dhchap
 * part of the JSON loader/writer: secrets inline and as @FILE (relative to
 * the config file, permission rule), hash / DH group names, --dhchap-key
 * values, errors that name the key and never quote a secret, redaction.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg/cfg.h"

#define HOST "nqn.2014-08.org.nvmexpress:uuid:host1"
/* nvme-cli gen-dhchap-key outputs (any valid representation will do) */
#define KEY1 "DHHC-1:01:2Og2dLuwcPJAJOiwDwc6LlKQ3uyig1W3J1wNCT2lrPRBMAPp:"
#define KEY2 "DHHC-1:02:8w2zKXwgR4/6X/dg+QEDlYYsRniPDUamGm7Z4xlkP7TX/SukLds+YI5pkv4iVk+hcjKc8w==:"

static char tmpdir[] = "/tmp/nvmfd-test-dhchap-XXXXXX";
static struct nvmfd_cfg cfg;

static void put_file(const char *name, const char *text, mode_t mode, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static int group_setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in message \"%s\"", needle, hay);
}

/* Load a config whose only host has the dhchap object @dh. */
static int load_dh(const char *dh, char *err)
{
	char text[2048], path[300];

	snprintf(text, sizeof(text), "{ \"hosts\": [ { \"nqn\": \"%s\", \"dhchap\": %s } ] }\n",
		 HOST, dh);
	put_file("c.json", text, 0644, path, sizeof(path));
	nvmfd_cfg_init_defaults(&cfg);
	err[0] = '\0';
	return nvmfd_cfg_load_json(&cfg, path, err);
}

static void test_load_inline(void **state)
{
	char err[NVMFD_CFG_ERRLEN];
	const struct nvmfd_cfg_dhchap *d = &cfg.host_dhchap[0];

	(void)state;
	if (load_dh("{ \"key\": \"" KEY1 "\", \"ctrl_key\": \"" KEY2 "\", "
		    "\"hash\": \"hmac(sha384)\", \"dhgroup\": \"ffdhe3072\" }",
		    err))
		fail_msg("%s", err);
	assert_int_equal(cfg.nr_hosts, 1);
	assert_string_equal(d->key, KEY1);
	assert_string_equal(d->ctrl_key, KEY2);
	assert_string_equal(d->key_file, "");
	assert_int_equal(d->hashes, 1u << 2);
	assert_int_equal(d->dhgroups, 1u << 2);
	assert_true(nvmfd_cfg_has_inline_secrets(&cfg));
	assert_int_equal(nvmfd_cfg_host_find(&cfg, HOST), 0);
	assert_int_equal(nvmfd_cfg_host_find(&cfg, "nqn.x"), -1);
	/* nvmetcli's form with authentication off: empty keys */
	if (load_dh("{ \"key\": \"\", \"ctrl_key\": \"\", \"hash\": \"hmac(sha256)\", "
		    "\"dhgroup\": \"null\" }",
		    err))
		fail_msg("%s", err);
	assert_string_equal(d->key, "");
	assert_int_equal(d->dhgroups, 1u << 0);
	assert_false(nvmfd_cfg_has_inline_secrets(&cfg));
}

static void test_load_file(void **state)
{
	char err[NVMFD_CFG_ERRLEN], path[300], want[NVMFD_CFG_SECRET_PATH_MAX];
	const struct nvmfd_cfg_dhchap *d = &cfg.host_dhchap[0];

	(void)state;
	put_file("host.key", KEY1 "\n", 0600, path, sizeof(path));
	put_file("ro.key", KEY2 "\n", 0400, path, sizeof(path));
	/* relative to the config file's directory, kept absolute */
	if (load_dh("{ \"key\": \"@host.key\", \"ctrl_key\": \"@ro.key\" }", err))
		fail_msg("%s", err);
	assert_string_equal(d->key, KEY1);
	assert_string_equal(d->ctrl_key, KEY2);
	snprintf(want, sizeof(want), "%s/host.key", tmpdir);
	assert_string_equal(d->key_file, want);
	assert_false(nvmfd_cfg_has_inline_secrets(&cfg));
	/* a file others may read is refused, naming the key and the file */
	put_file("open.key", KEY1 "\n", 0640, path, sizeof(path));
	assert_int_equal(load_dh("{ \"key\": \"@open.key\" }", err), -EINVAL);
	assert_contains(err, "hosts[0].dhchap.key: ");
	assert_contains(err, "open.key: not a regular file, or group/other may access it");
	assert_int_equal(load_dh("{ \"key\": \"@missing.key\" }", err), -EINVAL);
	assert_contains(err, "missing.key: No such file");
	put_file("empty.key", "", 0600, path, sizeof(path));
	assert_int_equal(load_dh("{ \"key\": \"@empty.key\" }", err), -EINVAL);
	assert_contains(err, "empty");
	put_file("junk.key", "DHHC-1:01:TOPSECRETJUNK:\n", 0600, path, sizeof(path));
	assert_int_equal(load_dh("{ \"key\": \"@junk.key\" }", err), -EINVAL);
	assert_contains(err, "junk.key: not a valid DH-HMAC-CHAP secret");
	assert_null(strstr(err, "TOPSECRET"));
}

static void test_load_errors(void **state)
{
	static const struct {
		const char *dh, *msg;
	} cases[] = {
		{ "{ \"key\": \"DHHC-1:01:TOPSECRET:\" }",
		  "hosts[0].dhchap.key: not a valid DH-HMAC-CHAP secret" },
		{ "{ \"key\": \"" KEY1 "\", \"ctrl_key\": \"DHHC-1:09:TOPSECRET:\" }",
		  "hosts[0].dhchap.ctrl_key: not a valid" },
		{ "{ \"ctrl_key\": \"" KEY2 "\" }",
		  "hosts[0].dhchap.ctrl_key: set without a host key" },
		{ "{ \"key\": \"" KEY1 "\", \"hash\": \"md5\" }",
		  "hosts[0].dhchap.hash: unknown value 'md5'" },
		{ "{ \"key\": \"" KEY1 "\", \"dhgroup\": \"ffdhe1024\" }",
		  "hosts[0].dhchap.dhgroup: unknown value 'ffdhe1024'" },
		{ "{ \"key\": \"" KEY1 "\", \"salt\": \"x\" }", "hosts[0].dhchap.salt: unknown key" },
		{ "{ \"key\": 5 }", "hosts[0].dhchap.key: expected a string" },
		{ "{ \"key\": \"@\" }", "hosts[0].dhchap.key: '@' without a file name" },
		{ "{ \"key\": \"<redacted>\" }", "hosts[0].dhchap.key: the secret was redacted" },
	};
	char err[NVMFD_CFG_ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (load_dh(cases[i].dh, err) != -EINVAL)
			fail_msg("case %zu (%s) was accepted", i, cases[i].msg);
		assert_contains(err, cases[i].msg);
		assert_null(strstr(err, "TOPSECRET"));
		assert_null(strstr(err, "2Og2dLuw"));
	}
}

/* write_json redacts inline secrets; write_json_ex(secrets) writes them;
 * a file secret is written as @FILE; every form reads back (except the
 * redacted one, which is refused with a hint). */
static void test_write(void **state)
{
	char err[NVMFD_CFG_ERRLEN], path[300], out[300], *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	put_file("ctrl.key", KEY2 "\n", 0600, path, sizeof(path));
	if (load_dh("{ \"key\": \"" KEY1 "\", \"ctrl_key\": \"@ctrl.key\", "
		    "\"hash\": \"sha512\", \"dhgroup\": \"ffdhe8192\" }",
		    err))
		fail_msg("%s", err);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json(&cfg, f), 0);
	fclose(f);
	assert_contains(text, "\"key\": \"<redacted>\"");
	assert_null(strstr(text, "2Og2dLuw"));
	snprintf(path, sizeof(path), "\"ctrl_key\": \"@%s/ctrl.key\"", tmpdir);
	assert_contains(text, path);
	assert_contains(text, "\"hash\": \"hmac(sha512)\"");
	assert_contains(text, "\"dhgroup\": \"ffdhe8192\"");
	free(text);

	snprintf(out, sizeof(out), "%s/written.json", tmpdir);
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json_ex(&cfg, f, true), 0);
	fclose(f);
	nvmfd_cfg_init_defaults(&cfg);
	if (nvmfd_cfg_load_json(&cfg, out, err))
		fail_msg("%s", err);
	assert_string_equal(cfg.host_dhchap[0].key, KEY1);
	assert_string_equal(cfg.host_dhchap[0].ctrl_key, KEY2);
	assert_int_equal(cfg.host_dhchap[0].hashes, 1u << 3);
	assert_int_equal(cfg.host_dhchap[0].dhgroups, 1u << 5);
}

/* Two entries of one host with different settings: the second would be
 * ignored by the target, so validation refuses it. */
static void test_validate_duplicate(void **state)
{
	char err[NVMFD_CFG_ERRLEN] = "", text[2048], path[300];

	(void)state;
	snprintf(text, sizeof(text),
		 "{ \"hosts\": [ { \"nqn\": \"%s\" }, { \"nqn\": \"%s\", \"dhchap\": "
		 "{ \"key\": \"%s\" } } ],\n"
		 "  \"subsystems\": [ { \"nqn\": \"nqn.2026-11.io.nvmfd:s\", \"allowed_hosts\": "
		 "[ \"%s\" ], \"namespaces\": [ { \"nsid\": 1, \"enable\": 1, "
		 "\"device\": { \"path\": \"ram:1M\" } } ] } ],\n"
		 "  \"ports\": [ { \"portid\": 1, \"addr\": { \"trtype\": \"tcp\", "
		 "\"adrfam\": \"ipv4\", \"traddr\": \"127.0.0.1\", \"trsvcid\": \"4420\" }, "
		 "\"subsystems\": [ \"nqn.2026-11.io.nvmfd:s\" ] } ] }\n",
		 HOST, HOST, KEY1, HOST);
	put_file("dup.json", text, 0644, path, sizeof(path));
	nvmfd_cfg_init_defaults(&cfg);
	assert_int_equal(nvmfd_cfg_load_json(&cfg, path, err), 0);
	assert_int_equal(nvmfd_cfg_validate(&cfg, err), -EINVAL);
	assert_contains(err, "hosts[1]: host '" HOST "' is defined twice with different "
			     "DH-HMAC-CHAP settings");
	assert_null(strstr(err, "2Og2dLuw"));
	/* the same settings twice are harmless */
	cfg.host_dhchap[0] = cfg.host_dhchap[1];
	assert_int_equal(nvmfd_cfg_validate(&cfg, err), 0);
}

static void test_parse_flag(void **state)
{
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "nqn.x", "expected HOSTNQN=KEY" },
		{ "=" KEY1, "expected HOSTNQN=KEY" },
		{ "host=" KEY1, "'host' is not a host NQN" },
		{ HOST "=", "no host key" },
		{ HOST "=DHHC-1:01:TOPSECRET:", "host key: not a valid DH-HMAC-CHAP secret" },
		{ HOST "=" KEY1 ",ctrl=DHHC-1:01:TOPSECRET:", "ctrl key: not a valid" },
		{ HOST "=" KEY1 ",hash=md5", "hash 'md5'" },
		{ HOST "=" KEY1 ",dhgroup=x", "dhgroup 'x'" },
		{ HOST "=" KEY1 ",secret=TOPSECRET", "unknown option 'secret'" },
	};
	char err[NVMFD_CFG_ERRLEN], nqn[256], path[300], spec[600];
	struct nvmfd_cfg_dhchap d;

	(void)state;
	assert_int_equal(nvmfd_cfg_parse_dhchap(HOST "=" KEY1, nqn, &d, err), 0);
	assert_string_equal(nqn, HOST);
	assert_string_equal(d.key, KEY1);
	assert_string_equal(d.ctrl_key, "");
	assert_int_equal(d.hashes, 0);
	assert_int_equal(d.dhgroups, 0);
	put_file("flag.key", KEY2 "\n", 0600, path, sizeof(path));
	snprintf(spec, sizeof(spec), "%s=%s,ctrl=@%s,hash=hmac(sha256),dhgroup=null", HOST, KEY1,
		 path);
	assert_int_equal(nvmfd_cfg_parse_dhchap(spec, nqn, &d, err), 0);
	assert_string_equal(d.ctrl_key, KEY2);
	assert_string_equal(d.ctrl_key_file, path);
	assert_int_equal(d.hashes, 1u << 1);
	assert_int_equal(d.dhgroups, 1u << 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (nvmfd_cfg_parse_dhchap(bad[i].spec, nqn, &d, err) != -EINVAL)
			fail_msg("case %zu (%s) was accepted", i, bad[i].msg);
		assert_contains(err, bad[i].msg);
		assert_null(strstr(err, "TOPSECRET"));
		assert_null(strstr(err, "2Og2dLuw"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_inline), cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_errors), cmocka_unit_test(test_write),
		cmocka_unit_test(test_validate_duplicate), cmocka_unit_test(test_parse_flag),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
