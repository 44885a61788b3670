// SPDX-License-Identifier: MIT
/*
 * test_tls.c - unit tests of src/cfg/tls.c and the TLS parts of the JSON
 * loader/writer: ports' treq/tsas, hosts[].tls and nvmfd.tls (PSK inline
 * and as @FILE with the permission rule, v0 keying, handshake timeout),
 * --psk values, treq names, the PSK lookup, redaction and read-back,
 * errors that name the key and never quote a PSK.
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
#define SUB "nqn.2026-11.io.nvmfd:t"
#define PSK1 "NVMeTLSkey-1:01:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwNf9LrZ:"
#define PSK2                                                           \
	"NVMeTLSkey-1:02:VRLbtnN9AQb2WXW3c9+wEf/DRLz0QuLdbYvEhwtdWwP/" \
	"w0S89ELi3W2LxIcLXVsDn8kXZQ==:"

static char tmpdir[] = "/tmp/nvmfd-test-cfgtls-XXXXXX";
static struct nvmfd_cfg cfg, cfg2;

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
		fail_msg("expected \"%s\" in \"%s\"", needle, hay);
}

/* A config with one port (@addr_extra inside "addr"), one subsystem, the
 * host with @host_tls (or none) and nvmfd.tls @glob_tls (or none). */
static int load(const char *addr_extra, const char *host_tls, const char *glob_tls, char *err)
{
	char text[4096], path[300], h[1024] = "", g[1024] = "";

	if (host_tls)
		snprintf(h, sizeof(h), ", \"tls\": %s", host_tls);
	if (glob_tls)
		snprintf(g, sizeof(g), "\"nvmfd\": { \"tls\": %s },", glob_tls);
	snprintf(text, sizeof(text),
		 "{ \"hosts\": [ { \"nqn\": \"%s\"%s } ], %s"
		 "  \"subsystems\": [ { \"nqn\": \"%s\", \"attr\": { \"allow_any_host\": \"1\" },"
		 "    \"namespaces\": [ { \"nsid\": 1, \"device\": { \"path\": \"ram:1M\" } } ] } ],"
		 "  \"ports\": [ { \"portid\": 1, \"addr\": { \"trtype\": \"tcp\", \"adrfam\": "
		 "\"ipv4\", \"traddr\": \"127.0.0.1\", \"trsvcid\": \"0\"%s }, \"subsystems\": "
		 "[ \"%s\" ] } ] }\n",
		 HOST, h, g, SUB, addr_extra, SUB);
	put_file("c.json", text, 0644, path, sizeof(path));
	nvmfd_cfg_init_defaults(&cfg);
	err[0] = '\0';
	return nvmfd_cfg_load_json(&cfg, path, err);
}

static void test_ports(void **state)
{
	char err[NVMFD_CFG_ERRLEN];

	(void)state;
	assert_int_equal(load(", \"treq\": \"not specified\", \"tsas\": \"none\"", NULL, NULL, err), 0);
	assert_false(cfg.ports[0].tls);
	assert_int_equal(cfg.ports[0].treq, NVMFD_TREQ_SECURE_NOT_SPECIFIED);
	/* nvmet: tls1.3 with treq not specified requires TLS */
	assert_int_equal(load(", \"treq\": \"not specified\", \"tsas\": \"tls1.3\"", NULL, NULL,
			      err),
			 0);
	assert_true(cfg.ports[0].tls);
	assert_int_equal(cfg.ports[0].treq, NVMFD_TREQ_SECURE_REQUIRED);
	assert_int_equal(load(", \"treq\": \"not required\", \"tsas\": \"tls1.3\"", NULL, NULL,
			      err),
			 0);
	assert_int_equal(cfg.ports[0].treq, NVMFD_TREQ_SECURE_NOT_REQUIRED);
	assert_int_equal(nvmfd_cfg_validate(&cfg, err), 0);
	assert_int_equal(load(", \"tsas\": \"tls1.2\"", NULL, NULL, err), -EINVAL);
	assert_contains(err, "ports[0].addr.tsas");
	assert_int_equal(load(", \"treq\": \"maybe\"", NULL, NULL, err), -EINVAL);
	assert_contains(err, "ports[0].addr.treq");
	/* required without TLS: a validation error */
	assert_int_equal(load(", \"treq\": \"required\"", NULL, NULL, err), 0);
	assert_int_equal(nvmfd_cfg_validate(&cfg, err), -EINVAL);
	assert_contains(err, "tls1.3");
	assert_int_equal(nvmfd_cfg_parse_treq("not-required"), NVMFD_TREQ_SECURE_NOT_REQUIRED);
	assert_int_equal(nvmfd_cfg_parse_treq("required"), NVMFD_TREQ_SECURE_REQUIRED);
	assert_int_equal(nvmfd_cfg_parse_treq("yes"), -EINVAL);
}

static void test_psks(void **state)
{
	char err[NVMFD_CFG_ERRLEN], path[300], tls[512];
	const struct nvmfd_cfg_psk *p;

	(void)state;
	/* inline host PSK, global PSK from a file relative to the config */
	put_file("g.key", PSK2 "\n", 0600, path, sizeof(path));
	assert_int_equal(load(", \"tsas\": \"tls1.3\"", "{ \"psk\": \"" PSK1 "\" }",
			      "{ \"psk\": \"@g.key\", \"v0\": \"spdk\", "
			      "\"handshake_timeout_ms\": 2500 }",
			      err),
			 0);
	assert_string_equal(cfg.host_psk[0].psk, PSK1);
	assert_string_equal(cfg.host_psk[0].file, "");
	assert_false(cfg.host_psk[0].v0_spdk);
	assert_string_equal(cfg.psk.psk, PSK2);
	assert_string_equal(cfg.psk.file, path);
	assert_true(cfg.psk.v0_spdk);
	assert_int_equal(cfg.tls_handshake_timeout_ms, 2500);
	p = nvmfd_cfg_psk_find(&cfg, HOST);
	assert_ptr_equal(p, &cfg.host_psk[0]);
	p = nvmfd_cfg_psk_find(&cfg, "nqn.2014-08.org.nvmexpress:uuid:other");
	assert_ptr_equal(p, &cfg.psk);
	assert_true(nvmfd_cfg_has_inline_secrets(&cfg));

	/* a PSK file others may read is refused, naming the key */
	put_file("w.key", PSK1, 0644, path, sizeof(path));
	assert_int_equal(load("", "{ \"psk\": \"@w.key\" }", NULL, err), -EINVAL);
	assert_contains(err, "hosts[0].tls.psk");
	assert_contains(err, "group/other");
	/* a bad PSK: named, never quoted */
	assert_int_equal(load("", "{ \"psk\": \"NVMeTLSkey-1:01:c2VjcmV0c2VjcmV0:\" }", NULL, err),
			 -EINVAL);
	assert_contains(err, "hosts[0].tls.psk");
	assert_contains(err, "not a valid TLS PSK");
	assert_null(strstr(err, "c2VjcmV0"));
	/* unknown keys and values */
	assert_int_equal(load("", "{ \"key\": \"x\" }", NULL, err), -EINVAL);
	assert_contains(err, "hosts[0].tls.key");
	assert_int_equal(load("", NULL, "{ \"v0\": \"linux\" }", err), -EINVAL);
	assert_contains(err, "nvmfd.tls.v0");
	assert_int_equal(load("", NULL, "{ \"handshake_timeout_ms\": -1 }", err), -EINVAL);
	/* the redacted form is refused with a hint */
	snprintf(tls, sizeof(tls), "{ \"psk\": \"%s\" }", NVMFD_CFG_REDACTED);
	assert_int_equal(load("", tls, NULL, err), -EINVAL);
	assert_contains(err, "redacted by --print-config");
}

static void test_write_read_back(void **state)
{
	char err[NVMFD_CFG_ERRLEN], path[300], buf[16384];
	FILE *f;
	size_t n;

	(void)state;
	put_file("g.key", PSK2, 0600, path, sizeof(path));
	assert_int_equal(load(", \"treq\": \"not required\", \"tsas\": \"tls1.3\"",
			      "{ \"psk\": \"" PSK1 "\", \"v0\": \"spdk\" }", "{ \"psk\": \"@g.key\" }",
			      err),
			 0);
	/* redacted: the inline PSK never appears, the file does */
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json(&cfg, f), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_null(strstr(buf, "VRLbtnN9"));
	assert_contains(buf, "\"psk\": \"<redacted>\"");
	assert_contains(buf, path);
	assert_contains(buf, "\"tsas\": \"tls1.3\"");
	assert_contains(buf, "\"treq\": \"not required\"");
	/* with secrets: reads back to the same TLS settings */
	snprintf(path, sizeof(path), "%s/w.json", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json_ex(&cfg, f, true), 0);
	fclose(f);
	nvmfd_cfg_init_defaults(&cfg2);
	assert_int_equal(nvmfd_cfg_load_json(&cfg2, path, err), 0);
	assert_true(cfg2.ports[0].tls);
	assert_int_equal(cfg2.ports[0].treq, NVMFD_TREQ_SECURE_NOT_REQUIRED);
	assert_memory_equal(&cfg2.host_psk[0], &cfg.host_psk[0], sizeof(cfg.host_psk[0]));
	assert_memory_equal(&cfg2.psk, &cfg.psk, sizeof(cfg.psk));
	assert_int_equal(cfg2.tls_handshake_timeout_ms, cfg.tls_handshake_timeout_ms);
}

static void test_flag(void **state)
{
	char err[NVMFD_CFG_ERRLEN], nqn[256], path[300], spec[400];
	struct nvmfd_cfg_psk p;

	(void)state;
	assert_int_equal(nvmfd_cfg_parse_psk(PSK1, nqn, &p, err), 0);
	assert_string_equal(nqn, "");
	assert_string_equal(p.psk, PSK1);
	assert_false(p.v0_spdk);
	assert_int_equal(nvmfd_cfg_parse_psk(HOST "=" PSK2 ",v0=spdk", nqn, &p, err), 0);
	assert_string_equal(nqn, HOST);
	assert_string_equal(p.psk, PSK2);
	assert_true(p.v0_spdk);
	put_file("f.key", PSK1 "\n", 0600, path, sizeof(path));
	snprintf(spec, sizeof(spec), "%s=@%s,v0=retained", HOST, path);
	assert_int_equal(nvmfd_cfg_parse_psk(spec, nqn, &p, err), 0);
	assert_string_equal(p.psk, PSK1);
	assert_string_equal(p.file, path);
	assert_int_equal(nvmfd_cfg_parse_psk(PSK1 ",v1=x", nqn, &p, err), -EINVAL);
	assert_contains(err, "unknown option");
	assert_int_equal(nvmfd_cfg_parse_psk(HOST "=", nqn, &p, err), -EINVAL);
	assert_int_equal(nvmfd_cfg_parse_psk("NVMeTLSkey-1:01:c2VjcmV0c2VjcmV0:", nqn, &p, err),
			 -EINVAL);
	assert_null(strstr(err, "c2VjcmV0"));
	assert_string_equal(p.psk, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_psks),
		cmocka_unit_test(test_write_read_back),
		cmocka_unit_test(test_flag),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
