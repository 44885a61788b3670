// SPDX-License-Identifier: MIT
/*
 * test_cfg.c - unit tests of src/cfg/cfg.c: defaults, --namespace and
 * --listen parsing, nvmetcli JSON loading (fixtures written to a temporary
 * directory), validation, and write_json -> load_json round trips.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cfg/cfg.h"
#include "nvmfd/spec.h"

static char tmpdir[] = "/tmp/nvmfd-test-cfg-XXXXXX";
static char existing_file[256];

/* Both configs are large: keep them off the stack. */
static struct nvmfd_cfg cfg_a, cfg_b;

static void fixture_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_fixture(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	fixture_path(path, len, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int group_setup(void **state)
{
	FILE *f;

	if (!mkdtemp(tmpdir))
		return -1;
	fixture_path(existing_file, sizeof(existing_file), "disk.img");
	f = fopen(existing_file, "w");
	if (!f)
		return -1;
	fclose(f);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in message \"%s\"", needle, hay);
}

/* ------------------------------------------------------------------ */

static void test_defaults(void **state)
{
	struct nvmfd_cfg *c = &cfg_a;
	struct nvmfd_cfg_subsys s;
	struct nvmfd_cfg_port p;
	char err[NVMFD_CFG_ERRLEN], sn[21];

	memset(c, 0xa5, sizeof(*c));
	nvmfd_cfg_init_defaults(c);
	assert_int_equal(c->nr_ports, 0);
	assert_int_equal(c->nr_subsys, 0);
	assert_int_equal(c->nr_referrals, 0);
	assert_int_equal(c->nr_hosts, 0);
	assert_int_equal(c->exec.rt.size, sizeof(c->exec.rt));
	assert_int_equal(c->exec.rt.mode, NVMFD_RT_BOUND);
	assert_int_equal(c->exec.rt.scope, NVMFD_RT_SCOPE_CACHE);
	assert_false(c->exec.rt.strict);
	assert_int_equal(c->exec.rt.max_active, 512);
	assert_int_equal(CPU_COUNT(&c->exec.rt.cpus), 0);
	assert_int_equal(c->exec.place, NVMFD_RT_PLACE_RR);
	assert_int_equal(c->exec.idle_poll_us, 0);
	assert_false(c->exec.cq_pool_shared);
	assert_false(c->exec.wq_per_ctrl);
	assert_false(c->exec.backend_poll);
	assert_int_equal(c->exec.rx_budget_pdus, 8);
	assert_int_equal(c->exec.tx_budget_pdus, 8);
	assert_int_equal(c->exec.rx_budget_bytes, 0);
	assert_int_equal(c->exec.tx_budget_bytes, 0);
	assert_int_equal(c->exec.io_work_deadline_us, 1000);
	assert_int_equal(c->kato_grace_ms, 1000);
	assert_int_equal(c->auth_timeout_ms, 10000);
	assert_int_equal(c->max_io_size, 1u << 20);
	assert_int_equal(c->maxh2cdata, 128u << 10);
	assert_int_equal(c->stats_interval_s, 0);
	assert_string_equal(c->control_path, "");

	nvmfd_cfg_port_init(&p, 7);
	assert_int_equal(p.portid, 7);
	assert_int_equal(p.inline_data_size, 16384);
	assert_int_equal(p.max_queue_size, 128);
	assert_string_equal(p.trsvcid, "4420");
	assert_int_equal(p.nr_subsys, 0);

	assert_int_equal(nvmfd_cfg_subsys_init(&s, "nqn.2026-11.io.nvmfd:x", err), 0);
	assert_string_equal(s.nqn, "nqn.2026-11.io.nvmfd:x");
	assert_false(s.allow_any_host);
	assert_string_equal(s.model, "nvmfd");
	assert_int_equal(s.version, NVMFD_VS(1, 4, 0));
	assert_int_equal(s.cntlid_min, 1);
	assert_int_equal(s.cntlid_max, 0xffef);
	assert_int_equal(s.qid_max, 128);
	assert_int_equal(s.nr_ns, 0);
	assert_int_equal(s.nr_hosts, 0);
	/* serial: 16 hex digits, stable per NQN, different between NQNs */
	assert_int_equal(strlen(s.serial), 16);
	assert_int_equal(strspn(s.serial, "0123456789abcdef"), 16);
	nvmfd_cfg_serial_from_nqn("nqn.2026-11.io.nvmfd:x", sn);
	assert_string_equal(sn, s.serial);
	nvmfd_cfg_serial_from_nqn("nqn.2026-11.io.nvmfd:y", sn);
	assert_string_not_equal(sn, s.serial);
	/* FNV-1a 64 of the empty string is the offset basis */
	nvmfd_cfg_serial_from_nqn("", sn);
	assert_string_equal(sn, "cbf29ce484222325");
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *in;
		int ret;
		uint64_t out;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "4K", 0, 4096 },
		{ "4k", 0, 4096 },
		{ "256M", 0, 256ull << 20 },
		{ "1G", 0, 1ull << 30 },
		{ "2T", 0, 2ull << 40 },
		{ "16KiB", 0, 16384 },
		{ "16KB", 0, 16384 },
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "12X", -EINVAL, 0 },
		{ "1Mx", -EINVAL, 0 },
		{ "99999999999T", -EINVAL, 0 },
		{ "18446744073709551616", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int ret = nvmfd_cfg_parse_size(cases[i].in, &v);

		if (ret != cases[i].ret)
			fail_msg("size '%s': ret %d, want %d", cases[i].in, ret, cases[i].ret);
		if (!ret && v != cases[i].out)
			fail_msg("size '%s': %llu, want %llu", cases[i].in, (unsigned long long)v,
				 (unsigned long long)cases[i].out);
	}
}

static void test_parse_namespace_good(void **state)
{
	char spec[600], newfile[300], err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_ns ns;

	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, "ram:256M", err), 0);
	assert_int_equal(ns.bk.type, NVMFD_BK_RAM);
	assert_int_equal(ns.bk.size, 256ull << 20);
	assert_string_equal(ns.path, "ram:256M");
	assert_ptr_equal(ns.bk.path, ns.path);
	assert_true(ns.enable);
	assert_int_equal(ns.nsid, 0);
	assert_int_equal(ns.bk.lba_shift, 0);

	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, "null:1024K,bs=4096,nsid=7", err), 0);
	assert_int_equal(ns.bk.type, NVMFD_BK_NULL);
	assert_int_equal(ns.bk.size, 1ull << 20);
	assert_string_equal(ns.path, "null:1M"); /* canonical form */
	assert_int_equal(ns.bk.lba_shift, 12);
	assert_int_equal(ns.nsid, 7);

	snprintf(spec, sizeof(spec), "file:%s", existing_file);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec, err), 0);
	assert_int_equal(ns.bk.type, NVMFD_BK_FILE);
	assert_string_equal(ns.path, existing_file);
	assert_ptr_equal(ns.bk.path, ns.path);
	assert_int_equal(ns.bk.size, 0);
	assert_false(ns.bk.direct);

	fixture_path(newfile, sizeof(newfile), "new.img");
	snprintf(spec, sizeof(spec),
		 "file:%s,size=1M,direct,uuid=d592cdf3-5d1c-44e0-8412-3fcf7d99df27,"
		 "nguid=000102030405060708090a0b0c0d0e0f",
		 newfile);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec, err), 0);
	assert_int_equal(ns.bk.type, NVMFD_BK_FILE);
	assert_int_equal(ns.bk.size, 1u << 20);
	assert_true(ns.bk.direct);
	assert_true(ns.has_uuid);
	assert_int_equal(ns.uuid[0], 0xd5);
	assert_int_equal(ns.uuid[15], 0x27);
	assert_true(ns.has_nguid);
	for (int i = 0; i < 16; i++)
		assert_int_equal(ns.nguid[i], i);
	/* the parser does not create the file; the backend does */
	assert_int_equal(access(newfile, F_OK), -1);
}

static void test_parse_namespace_bad(void **state)
{
	char missing[300], spec_missing[320], spec_dir[320];
	static const struct {
		const char *spec;
		const char *msg; /* must appear in the error */
	} cases[] = {
		{ "ram", "expected file:PATH" },
		{ "ram:", "missing SIZE" },
		{ "ram:abc", "bad size 'abc'" },
		{ "ram:0", "bad size '0'" },
		{ "null:12Q", "bad size '12Q'" },
		{ "disk:1M", "unknown backend 'disk'" },
		{ "file:", "missing PATH" },
		{ "ram:1M,size=2M", "option 'size=2M'" },
		{ "ram:1M,direct", "option 'direct'" },
		{ "ram:1M,bs=1024", "bad bs '1024'" },
		{ "ram:1M,nsid=0", "bad nsid '0'" },
		{ "ram:1M,nsid=1025", "bad nsid '1025'" },
		{ "ram:1M,uuid=xyz", "bad uuid 'xyz'" },
		{ "ram:1M,bogus=1", "option 'bogus=1'" },
		{ "bdev:/dev/null", "not a block device" },
		{ "bdev:/dev/nvmfd-no-such-disk", "No such file" },
	};
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_ns ns;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (nvmfd_cfg_parse_namespace(&ns, cases[i].spec, err) != -EINVAL)
			fail_msg("namespace '%s' was accepted", cases[i].spec);
		assert_contains(err, cases[i].msg);
		/* every message names the spec it rejects */
		assert_contains(err, cases[i].spec);
	}
	fixture_path(missing, sizeof(missing), "missing.img");
	snprintf(spec_missing, sizeof(spec_missing), "file:%s", missing);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec_missing, err), -EINVAL);
	assert_contains(err, missing);
	assert_contains(err, "No such file or directory");
	assert_contains(err, "size");
	snprintf(spec_dir, sizeof(spec_dir), "file:%s", tmpdir);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec_dir, err), -EINVAL);
	assert_contains(err, "not a regular file");
}

static void test_parse_listen(void **state)
{
	static const struct {
		const char *spec;
		uint8_t adrfam;
		const char *addr, *port;
	} good[] = {
		{ "127.0.0.1:4420", NVMFD_ADRFAM_IPV4, "127.0.0.1", "4420" },
		{ "0.0.0.0:0", NVMFD_ADRFAM_IPV4, "0.0.0.0", "0" },
		{ "10.1.2.3", NVMFD_ADRFAM_IPV4, "10.1.2.3", "4420" },
		{ "[::1]:4421", NVMFD_ADRFAM_IPV6, "::1", "4421" },
		{ "[::]", NVMFD_ADRFAM_IPV6, "::", "4420" },
		{ "fe80::1", NVMFD_ADRFAM_IPV6, "fe80::1", "4420" },
		{ "[2001:db8::5]:65535", NVMFD_ADRFAM_IPV6, "2001:db8::5", "65535" },
	};
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "1.2.3.4:x", "bad port 'x'" },
		{ "1.2.3.4:", "bad port ''" },
		{ "1.2.3.4:65536", "bad port '65536'" },
		{ "1.2.3.4:-1", "bad port '-1'" },
		{ "1.2.3:4420", "'1.2.3' is not a numeric IPv4" },
		{ "localhost:4420", "'localhost' is not a numeric IPv4" },
		{ ":4420", "missing address" },
		{ "[::1", "missing ']'" },
		{ "[::1]4420", "expected ':PORT'" },
		{ "[1.2.3.4]:1", "not a numeric IPv6" },
		{ "::g", "not a numeric IPv6" },
	};
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_port p;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		nvmfd_cfg_port_init(&p, 1);
		if (nvmfd_cfg_parse_listen(&p, good[i].spec, err))
			fail_msg("listen '%s' rejected: %s", good[i].spec, err);
		assert_int_equal(p.adrfam, good[i].adrfam);
		assert_string_equal(p.traddr, good[i].addr);
		assert_string_equal(p.trsvcid, good[i].port);
		assert_int_equal(p.portid, 1); /* untouched */
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nvmfd_cfg_port_init(&p, 1);
		err[0] = '\0';
		if (nvmfd_cfg_parse_listen(&p, bad[i].spec, err) != -EINVAL)
			fail_msg("listen '%s' accepted", bad[i].spec);
		assert_contains(err, bad[i].msg);
		assert_contains(err, bad[i].spec);
	}
}

static void test_parse_cpus_and_enums(void **state)
{
	char err[NVMFD_CFG_ERRLEN];
	cpu_set_t set;

	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "0-3,8,10-11", err), 0);
	assert_int_equal(CPU_COUNT(&set), 7);
	assert_true(CPU_ISSET(0, &set) && CPU_ISSET(3, &set) && CPU_ISSET(8, &set));
	assert_true(CPU_ISSET(11, &set));
	assert_false(CPU_ISSET(4, &set) || CPU_ISSET(9, &set));
	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "", err), 0);
	assert_int_equal(CPU_COUNT(&set), 0);
	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "3-1", err), -EINVAL);
	assert_contains(err, "3-1");
	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "1,,2", err), -EINVAL);
	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "a", err), -EINVAL);
	assert_int_equal(nvmfd_cfg_parse_cpus(&set, "99999", err), -EINVAL);

	assert_int_equal(nvmfd_cfg_parse_exec_mode("bound"), NVMFD_RT_BOUND);
	assert_int_equal(nvmfd_cfg_parse_exec_mode("unbound"), NVMFD_RT_UNBOUND);
	assert_int_equal(nvmfd_cfg_parse_exec_mode("Bound"), -EINVAL);
	assert_int_equal(nvmfd_cfg_parse_scope("smt"), NVMFD_RT_SCOPE_SMT);
	assert_int_equal(nvmfd_cfg_parse_scope("system"), NVMFD_RT_SCOPE_SYSTEM);
	assert_int_equal(nvmfd_cfg_parse_scope("socket"), -EINVAL);
	assert_int_equal(nvmfd_cfg_parse_place("least-loaded"), NVMFD_RT_PLACE_LEAST_LOADED);
	assert_int_equal(nvmfd_cfg_parse_place("incoming-cpu"), NVMFD_RT_PLACE_INCOMING_CPU);
	assert_int_equal(nvmfd_cfg_parse_place("random"), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* JSON load                                                          */

/* The nvmetcli example (doc/protocol-notes.md §3.4) with a RAM namespace. */
static const char nvmetcli_json[] =
	"{\n"
	"  \"hosts\": [ { \"nqn\": \"nqn.2014-08.org.nvmexpress:uuid:host1\",\n"
	"               \"dhchap\": { \"key\": \"\", \"ctrl_key\": \"\", \"hash\": \"hmac(sha256)\" } } ],\n"
	"  \"ports\": [ {\n"
	"      \"addr\": { \"adrfam\": \"ipv4\", \"traddr\": \"127.0.0.1\", \"treq\": \"not specified\",\n"
	"                \"trsvcid\": \"4420\", \"trtype\": \"tcp\" },\n"
	"      \"ana_groups\": [ { \"ana\": { \"state\": \"optimized\" }, \"grpid\": 1 } ],\n"
	"      \"param\": { \"inline_data_size\": \"8192\", \"pi_enable\": \"0\",\n"
	"                 \"max_queue_size\": \"64\" },\n"
	"      \"portid\": 1,\n"
	"      \"referrals\": [ { \"addr\": { \"adrfam\": \"ipv6\", \"traddr\": \"::1\",\n"
	"                       \"treq\": \"not specified\", \"trsvcid\": \"4421\", \"trtype\": \"tcp\" },\n"
	"                       \"name\": \"r1\", \"portid\": 9 } ],\n"
	"      \"subsystems\": [ \"nqn.2026-11.io.nvmfd:always\" ] } ],\n"
	"  \"subsystems\": [ {\n"
	"      \"allowed_hosts\": [ \"nqn.2014-08.org.nvmexpress:uuid:host1\" ],\n"
	"      \"attr\": { \"allow_any_host\": \"0\", \"cntlid_max\": \"100\", \"cntlid_min\": \"10\",\n"
	"                \"model\": \"Linux\", \"pi_enable\": \"0\", \"serial\": \"123456789abcdef\",\n"
	"                \"version\": \"1.4\", \"qid_max\": \"16\", \"firmware\": \"6.1.0-1\",\n"
	"                \"ieee_oui\": \"0x001b21\" },\n"
	"      \"namespaces\": [ {\n"
	"          \"ana_grpid\": 1,\n"
	"          \"device\": { \"nguid\": \"00000000-0000-0000-0000-000000000000\",\n"
	"                      \"path\": \"ram:64M\",\n"
	"                      \"uuid\": \"d592cdf3-5d1c-44e0-8412-3fcf7d99df27\" },\n"
	"          \"enable\": 1, \"nsid\": 1 } ],\n"
	"      \"nqn\": \"nqn.2026-11.io.nvmfd:always\" } ]\n"
	"}\n";

static void test_load_nvmetcli(void **state)
{
	struct nvmfd_cfg *c = &cfg_a;
	char path[300], err[NVMFD_CFG_ERRLEN] = "";
	const struct nvmfd_cfg_subsys *s;

	write_fixture("nvmetcli.json", nvmetcli_json, path, sizeof(path));
	nvmfd_cfg_init_defaults(c);
	if (nvmfd_cfg_load_json(c, path, err))
		fail_msg("load failed: %s", err);
	assert_int_equal(nvmfd_cfg_validate(c, err), 0);

	assert_int_equal(c->nr_hosts, 1);
	assert_string_equal(c->hosts[0], "nqn.2014-08.org.nvmexpress:uuid:host1");
	assert_int_equal(c->nr_ports, 1);
	assert_int_equal(c->ports[0].portid, 1);
	assert_int_equal(c->ports[0].adrfam, NVMFD_ADRFAM_IPV4);
	assert_string_equal(c->ports[0].traddr, "127.0.0.1");
	assert_string_equal(c->ports[0].trsvcid, "4420");
	assert_int_equal(c->ports[0].inline_data_size, 8192);
	assert_int_equal(c->ports[0].max_queue_size, 64);
	assert_int_equal(c->ports[0].nr_subsys, 1);
	assert_int_equal(c->ports[0].subsys_idx[0], 0);
	assert_int_equal(c->nr_referrals, 1);
	assert_int_equal(c->referrals[0].portid, 1);
	assert_int_equal(c->referrals[0].adrfam, NVMFD_ADRFAM_IPV6);
	assert_string_equal(c->referrals[0].traddr, "::1");
	assert_string_equal(c->referrals[0].trsvcid, "4421");

	assert_int_equal(c->nr_subsys, 1);
	s = &c->subsys[0];
	assert_string_equal(s->nqn, "nqn.2026-11.io.nvmfd:always");
	assert_false(s->allow_any_host);
	assert_string_equal(s->serial, "123456789abcdef");
	assert_string_equal(s->model, "Linux");
	assert_int_equal(s->version, NVMFD_VS(1, 4, 0));
	assert_int_equal(s->cntlid_min, 10);
	assert_int_equal(s->cntlid_max, 100);
	assert_int_equal(s->qid_max, 16);
	assert_string_equal(s->firmware, "6.1.0-1"); /* nvmet's attr_firmware */
	assert_int_equal(s->ieee_oui, 0x001b21);
	assert_int_equal(s->nr_hosts, 1);
	assert_string_equal(s->hosts[0], "nqn.2014-08.org.nvmexpress:uuid:host1");
	assert_int_equal(s->nr_ns, 1);
	assert_int_equal(s->ns[0].nsid, 1);
	assert_true(s->ns[0].enable);
	assert_int_equal(s->ns[0].bk.type, NVMFD_BK_RAM);
	assert_int_equal(s->ns[0].bk.size, 64ull << 20);
	assert_true(s->ns[0].has_uuid);
	assert_int_equal(s->ns[0].uuid[0], 0xd5);
	assert_false(s->ns[0].has_nguid); /* all-zero NGUID means "none" */
	/* defaults not in the file are untouched */
	assert_int_equal(c->max_io_size, 1u << 20);
	assert_int_equal(c->exec.rx_budget_pdus, 8);
}

/* The same values as JSON numbers and booleans instead of strings. */
static void test_load_numbers_as_ints(void **state)
{
	static const char text[] =
		"{ \"ports\": [ { \"portid\": \"3\", \"addr\": { \"trtype\": \"tcp\", \"adrfam\": \"ipv6\",\n"
		"     \"traddr\": \"::1\", \"trsvcid\": 0 },\n"
		"     \"param\": { \"inline_data_size\": 4096, \"max_queue_size\": 32 },\n"
		"     \"subsystems\": [ \"nqn.2026-11.io.nvmfd:n\" ] } ],\n"
		"  \"subsystems\": [ { \"nqn\": \"nqn.2026-11.io.nvmfd:n\",\n"
		"     \"attr\": { \"allow_any_host\": true, \"cntlid_min\": 5, \"cntlid_max\": 6,\n"
		"               \"qid_max\": 2 },\n"
		"     \"namespaces\": [ { \"nsid\": \"4\", \"enable\": \"0\",\n"
		"        \"device\": { \"path\": \"null:1G\", \"block_size\": \"4096\" } } ] } ],\n"
		"  \"nvmfd\": { \"max_io_size\": \"256K\", \"maxh2cdata\": 65536,\n"
		"     \"exec\": { \"mode\": \"unbound\", \"scope\": \"numa\", \"strict\": \"1\",\n"
		"                \"cpus\": \"0-1\", \"rx_budget_pdus\": \"16\", \"cq_pool\": \"shared\",\n"
		"                \"io_cpu\": \"incoming-cpu\" } } }\n";
	struct nvmfd_cfg *c = &cfg_a;
	char path[300], err[NVMFD_CFG_ERRLEN] = "";

	write_fixture("ints.json", text, path, sizeof(path));
	nvmfd_cfg_init_defaults(c);
	if (nvmfd_cfg_load_json(c, path, err))
		fail_msg("load failed: %s", err);
	if (nvmfd_cfg_validate(c, err))
		fail_msg("validate failed: %s", err);
	assert_int_equal(c->ports[0].portid, 3);
	assert_int_equal(c->ports[0].adrfam, NVMFD_ADRFAM_IPV6);
	assert_string_equal(c->ports[0].trsvcid, "0");
	assert_int_equal(c->ports[0].inline_data_size, 4096);
	assert_int_equal(c->ports[0].max_queue_size, 32);
	assert_true(c->subsys[0].allow_any_host);
	assert_int_equal(c->subsys[0].cntlid_min, 5);
	assert_int_equal(c->subsys[0].cntlid_max, 6);
	assert_int_equal(c->subsys[0].qid_max, 2);
	assert_int_equal(c->subsys[0].ns[0].nsid, 4);
	assert_false(c->subsys[0].ns[0].enable);
	assert_int_equal(c->subsys[0].ns[0].bk.type, NVMFD_BK_NULL);
	assert_int_equal(c->subsys[0].ns[0].bk.size, 1ull << 30);
	assert_int_equal(c->subsys[0].ns[0].bk.lba_shift, 12);
	assert_int_equal(c->max_io_size, 256u << 10);
	assert_int_equal(c->maxh2cdata, 65536);
	assert_int_equal(c->exec.rt.mode, NVMFD_RT_UNBOUND);
	assert_int_equal(c->exec.rt.scope, NVMFD_RT_SCOPE_NUMA);
	assert_true(c->exec.rt.strict);
	assert_int_equal(CPU_COUNT(&c->exec.rt.cpus), 2);
	assert_int_equal(c->exec.rx_budget_pdus, 16);
	assert_true(c->exec.cq_pool_shared);
	assert_int_equal(c->exec.place, NVMFD_RT_PLACE_INCOMING_CPU);
	/* serial defaults to the NQN-derived one */
	{
		char sn[21];

		nvmfd_cfg_serial_from_nqn("nqn.2026-11.io.nvmfd:n", sn);
		assert_string_equal(c->subsys[0].serial, sn);
	}
}

/* Replace the first occurrence of @from in nvmetcli_json by @to. */
static void mutate(char *out, size_t len, const char *from, const char *to)
{
	const char *at = strstr(nvmetcli_json, from);

	assert_non_null(at);
	snprintf(out, len, "%.*s%s%s", (int)(at - nvmetcli_json), nvmetcli_json, to,
		 at + strlen(from));
}

static void test_load_errors(void **state)
{
	static const struct {
		const char *from, *to, *msg;
	} cases[] = {
		/* unknown keys, by key path */
		{ "\"model\": \"Linux\"", "\"model\": \"Linux\", \"bogus\": 1",
		  "subsystems[0].attr.bogus: unknown key" },
		{ "\"hosts\": [", "\"extra\": 1, \"hosts\": [", "extra: unknown key" },
		{ "\"enable\": 1,", "\"enable\": 1, \"size\": 1,",
		  "subsystems[0].namespaces[0].size: unknown key" },
		{ "\"treq\": \"not specified\",\n                \"trsvcid\"",
		  "\"treq\": \"not specified\", \"foo\": \"x\", \"trsvcid\"",
		  "ports[0].addr.foo: unknown key" },
		/* missing fields */
		{ "\"path\": \"ram:64M\",", "", "subsystems[0].namespaces[0].device.path: missing" },
		{ "\"portid\": 1,", "", "ports[0].portid: missing" },
		{ "\"nsid\": 1 }", "\"x\": 0 }", "unknown key" },
		{ "\"enable\": 1, \"nsid\": 1", "\"enable\": 1", "subsystems[0].namespaces[0].nsid: missing" },
		/* ill-typed / bad values */
		{ "\"cntlid_max\": \"100\"", "\"cntlid_max\": \"abc\"",
		  "subsystems[0].attr.cntlid_max: \"abc\" is not a number" },
		{ "\"cntlid_max\": \"100\"", "\"cntlid_max\": \"70000\"",
		  "subsystems[0].attr.cntlid_max: 70000 out of range" },
		{ "\"max_queue_size\": \"64\"", "\"max_queue_size\": -1",
		  "ports[0].param.max_queue_size: -1 is negative" },
		{ "\"trtype\": \"tcp\" },\n      \"ana", "\"trtype\": \"rdma\" },\n      \"ana",
		  "ports[0].addr.trtype: 'rdma' is not supported" },
		{ "\"adrfam\": \"ipv4\"", "\"adrfam\": \"fc\"", "ports[0].addr.adrfam: 'fc'" },
		{ "\"traddr\": \"127.0.0.1\"", "\"traddr\": \"host.example\"",
		  "ports[0].addr.traddr: 'host.example' is not a numeric IPv4" },
		{ "\"allow_any_host\": \"0\"", "\"allow_any_host\": \"yes\"",
		  "subsystems[0].attr.allow_any_host: \"yes\" is not a boolean" },
		{ "\"version\": \"1.4\"", "\"version\": \"one\"", "subsystems[0].attr.version: 'one'" },
		{ "\"pi_enable\": \"0\", \"serial\"", "\"pi_enable\": \"1\", \"serial\"",
		  "subsystems[0].attr.pi_enable: protection information is not supported" },
		{ "\"path\": \"ram:64M\"", "\"path\": \"ram:lots\"",
		  "subsystems[0].namespaces[0].device.path: bad size in 'ram:lots'" },
		{ "\"path\": \"ram:64M\"", "\"path\": \"/nonexistent/nvmfd.img\"",
		  "subsystems[0].namespaces[0].device.path: '/nonexistent/nvmfd.img': No such file" },
		{ "\"uuid\": \"d592", "\"uuid\": \"zz92", "subsystems[0].namespaces[0].device.uuid: bad UUID" },
		{ "\"subsystems\": [ \"nqn.2026-11.io.nvmfd:always\" ]",
		  "\"subsystems\": [ \"nqn.2026-11.io.nvmfd:other\" ]",
		  "ports[0].subsystems[0]: unknown subsystem 'nqn.2026-11.io.nvmfd:other'" },
		{ "\"allowed_hosts\": [ \"nqn", "\"allowed_hosts\": [ 5, \"nqn",
		  "subsystems[0].allowed_hosts[0]: expected a host NQN string, got 5" },
		{ "\"key\": \"\"", "\"key\": \"DHHC-1:00:abc\"",
		  "hosts[0].dhchap.key: not a valid DH-HMAC-CHAP secret" },
		{ "\"namespaces\": [ {", "\"namespaces\": {", "invalid JSON" },
		{ "\"ports\": [ {", "\"ports\": { \"a\": [ {", "invalid JSON" },
	};
	char text[sizeof(nvmetcli_json) + 512], path[300], err[NVMFD_CFG_ERRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mutate(text, sizeof(text), cases[i].from, cases[i].to);
		write_fixture("bad.json", text, path, sizeof(path));
		nvmfd_cfg_init_defaults(&cfg_a);
		err[0] = '\0';
		if (nvmfd_cfg_load_json(&cfg_a, path, err) != -EINVAL)
			fail_msg("case %zu (%s) was accepted", i, cases[i].msg);
		assert_contains(err, cases[i].msg);
	}

	/* file-level errors */
	fixture_path(path, sizeof(path), "does-not-exist.json");
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, path, err), -ENOENT);
	assert_contains(err, "No such file");
	write_fixture("trunc.json", "{ \"ports\": [", path, sizeof(path));
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, path, err), -EINVAL);
	assert_contains(err, "invalid JSON at line 1");
	write_fixture("array.json", "[ 1, 2 ]\n", path, sizeof(path));
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, path, err), -EINVAL);
	assert_contains(err, "expected an object");
	write_fixture("trailing.json", "{ } x", path, sizeof(path));
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, path, err), -EINVAL);
	assert_contains(err, "invalid JSON");
	write_fixture("empty.json", "{}\n\n", path, sizeof(path));
	nvmfd_cfg_init_defaults(&cfg_a);
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, path, err), 0);
	assert_int_equal(cfg_a.nr_ports, 0);
}

/*
 * Robustness: deterministic mutations of a valid config (byte flips,
 * truncations, inserted structural characters). Every load must return 0 or
 * -EINVAL with a message, and a successful load must survive validate and
 * write_json (ASan/UBSan builds check the memory side).
 */
static void test_load_mutations(void **state)
{
	static const char structural[] = "{}[]\",:0-9a ";
	char text[sizeof(nvmetcli_json) + 16], path[300], err[NVMFD_CFG_ERRLEN];
	size_t len = sizeof(nvmetcli_json) - 1;
	uint32_t seed = 12345;
	unsigned int loaded = 0;
	FILE *null_out = fopen("/dev/null", "w");

	assert_non_null(null_out);
	fixture_path(path, sizeof(path), "mut.json");
	for (int i = 0; i < 1500; i++) {
		size_t n = len, at;
		FILE *f;
		int ret;

		memcpy(text, nvmetcli_json, len);
		for (int k = 0; k < 1 + i % 3; k++) {
			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % n;
			switch ((seed >> 4) % 3) {
			case 0:
				text[at] = structural[(seed >> 16) % (sizeof(structural) - 1)];
				break;
			case 1:
				text[at] ^= (char)(1u << ((seed >> 20) % 7));
				break;
			default:
				n = at + 1;
				break;
			}
		}
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(text, 1, n, f), n);
		assert_int_equal(fclose(f), 0);
		nvmfd_cfg_init_defaults(&cfg_a);
		err[0] = '\0';
		ret = nvmfd_cfg_load_json(&cfg_a, path, err);
		if (ret == 0) {
			loaded++;
			(void)nvmfd_cfg_validate(&cfg_a, err);
			assert_int_equal(nvmfd_cfg_write_json(&cfg_a, null_out), 0);
		} else {
			assert_int_equal(ret, -EINVAL);
			assert_true(err[0] != '\0');
		}
	}
	fclose(null_out);
	/* some mutations (e.g. inside strings) still load; most do not */
	assert_true(loaded > 0 && loaded < 1500);
}

/* ------------------------------------------------------------------ */
/* Validation                                                         */

/* A valid base config: one port exporting one subsystem with two RAM namespaces. */
static void base_cfg(struct nvmfd_cfg *c)
{
	char err[NVMFD_CFG_ERRLEN];

	nvmfd_cfg_init_defaults(c);
	nvmfd_cfg_port_init(&c->ports[0], 1);
	assert_int_equal(nvmfd_cfg_parse_listen(&c->ports[0], "127.0.0.1:4420", err), 0);
	c->ports[0].nr_subsys = 1;
	c->ports[0].subsys_idx[0] = 0;
	c->nr_ports = 1;
	assert_int_equal(nvmfd_cfg_subsys_init(&c->subsys[0], "nqn.2026-11.io.nvmfd:v", err), 0);
	assert_int_equal(nvmfd_cfg_parse_namespace(&c->subsys[0].ns[0], "ram:1M", err), 0);
	c->subsys[0].ns[0].nsid = 1;
	assert_int_equal(nvmfd_cfg_parse_namespace(&c->subsys[0].ns[1], "null:1M", err), 0);
	c->subsys[0].ns[1].nsid = 2;
	c->subsys[0].nr_ns = 2;
	c->nr_subsys = 1;
	if (nvmfd_cfg_validate(c, err))
		fail_msg("base config invalid: %s", err);
}

enum vcase {
	V_NO_PORT,
	V_DUP_PORTID,
	V_DUP_ADDR,
	V_DUP_NQN,
	V_DUP_NSID,
	V_NSID_0,
	V_NSID_1025,
	V_CNTLID,
	V_SIZE_ALIGN,
	V_SIZE_ALIGN_4K,
	V_NQN_PREFIX,
	V_NQN_LONG,
	V_DISC_NQN,
	V_QUEUE_SIZE,
	V_MAX_IO,
	V_H2C,
	V_HOST_NQN,
	V_QID_MAX,
	V_REFERRAL_PORT,
	V_BUDGET,
};

static void apply_vcase(struct nvmfd_cfg *c, enum vcase v)
{
	char err[NVMFD_CFG_ERRLEN];

	switch (v) {
	case V_NO_PORT:
		c->nr_ports = 0;
		break;
	case V_DUP_PORTID:
		c->ports[1] = c->ports[0];
		strcpy(c->ports[1].trsvcid, "4421");
		c->nr_ports = 2;
		break;
	case V_DUP_ADDR:
		c->ports[1] = c->ports[0];
		c->ports[1].portid = 2;
		c->nr_ports = 2;
		break;
	case V_DUP_NQN:
		assert_int_equal(nvmfd_cfg_subsys_init(&c->subsys[1], c->subsys[0].nqn, err), 0);
		c->nr_subsys = 2;
		break;
	case V_DUP_NSID:
		c->subsys[0].ns[1].nsid = 1;
		break;
	case V_NSID_0:
		c->subsys[0].ns[1].nsid = 0;
		break;
	case V_NSID_1025:
		c->subsys[0].ns[1].nsid = 1025;
		break;
	case V_CNTLID:
		c->subsys[0].cntlid_min = 10;
		c->subsys[0].cntlid_max = 9;
		break;
	case V_SIZE_ALIGN:
		c->subsys[0].ns[0].bk.size = 1000;
		break;
	case V_SIZE_ALIGN_4K:
		c->subsys[0].ns[0].bk.size = 512 * 3;
		c->subsys[0].ns[0].bk.lba_shift = 12;
		break;
	case V_NQN_PREFIX:
		strcpy(c->subsys[0].nqn, "iqn.2026-11.io.nvmfd:v");
		break;
	case V_NQN_LONG:
		memset(c->subsys[0].nqn, 'a', 224);
		memcpy(c->subsys[0].nqn, "nqn.", 4);
		c->subsys[0].nqn[224] = '\0';
		break;
	case V_DISC_NQN:
		strcpy(c->subsys[0].nqn, NVMFD_DISC_NQN);
		break;
	case V_QUEUE_SIZE:
		c->ports[0].max_queue_size = 8;
		break;
	case V_MAX_IO:
		c->max_io_size = 3 << 20;
		break;
	case V_H2C:
		c->maxh2cdata = 1024;
		break;
	case V_HOST_NQN:
		strcpy(c->subsys[0].hosts[0], "hostname");
		c->subsys[0].nr_hosts = 1;
		break;
	case V_QID_MAX:
		c->subsys[0].qid_max = 0;
		break;
	case V_REFERRAL_PORT:
		c->referrals[0].portid = 9;
		c->referrals[0].adrfam = NVMFD_ADRFAM_IPV4;
		strcpy(c->referrals[0].traddr, "10.0.0.1");
		strcpy(c->referrals[0].trsvcid, "4420");
		c->nr_referrals = 1;
		break;
	case V_BUDGET:
		c->exec.rx_budget_pdus = 0;
		break;
	}
}

static void test_validate(void **state)
{
	static const struct {
		enum vcase v;
		const char *msg;
	} cases[] = {
		{ V_NO_PORT, "no listener" },
		{ V_DUP_PORTID, "port 1: duplicate portid" },
		{ V_DUP_ADDR, "port 2: address 127.0.0.1 port 4420 already used by port 1" },
		{ V_DUP_NQN, "subsystem 'nqn.2026-11.io.nvmfd:v': duplicate NQN" },
		{ V_DUP_NSID, "duplicate nsid 1" },
		{ V_NSID_0, "nsid 0 out of range 1..1024" },
		{ V_NSID_1025, "nsid 1025 out of range" },
		{ V_CNTLID, "cntlid range 10..9 invalid" },
		{ V_SIZE_ALIGN, "size 1000 is not a multiple of the 512-byte block size" },
		{ V_SIZE_ALIGN_4K, "size 1536 is not a multiple of the 4096-byte block size" },
		{ V_NQN_PREFIX, "'iqn.2026-11.io.nvmfd:v': an NQN must start with \"nqn.\"" },
		{ V_NQN_LONG, "longer than 223 bytes" },
		{ V_DISC_NQN, "the discovery NQN cannot be a subsystem" },
		{ V_QUEUE_SIZE, "max_queue_size 8 out of range 16..1024" },
		{ V_MAX_IO, "max_io_size 3145728: must be a power of two" },
		{ V_H2C, "maxh2cdata 1024" },
		{ V_HOST_NQN, "allowed host 'hostname'" },
		{ V_QID_MAX, "qid_max 0 out of range" },
		{ V_REFERRAL_PORT, "referral 0: port 9 does not exist" },
		{ V_BUDGET, "budget in PDUs must be >= 1" },
	};
	char err[NVMFD_CFG_ERRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		base_cfg(&cfg_a);
		apply_vcase(&cfg_a, cases[i].v);
		err[0] = '\0';
		if (nvmfd_cfg_validate(&cfg_a, err) != -EINVAL)
			fail_msg("validation case %zu (%s) passed", i, cases[i].msg);
		assert_contains(err, cases[i].msg);
	}
	/* boundary values that are valid */
	base_cfg(&cfg_a);
	cfg_a.subsys[0].ns[1].nsid = 1024;
	cfg_a.subsys[0].cntlid_min = 0xffef;
	cfg_a.subsys[0].cntlid_max = 0xffef;
	cfg_a.ports[0].max_queue_size = 1024;
	strcpy(cfg_a.ports[0].trsvcid, "0");
	cfg_a.ports[1] = cfg_a.ports[0]; /* two ephemeral ports on one address are fine */
	cfg_a.ports[1].portid = 2;
	cfg_a.nr_ports = 2;
	memset(cfg_a.subsys[0].nqn, 'a', 223);
	memcpy(cfg_a.subsys[0].nqn, "nqn.", 4);
	cfg_a.subsys[0].nqn[223] = '\0';
	if (nvmfd_cfg_validate(&cfg_a, err))
		fail_msg("boundary config rejected: %s", err);
}

/* ------------------------------------------------------------------ */
/* Round trip                                                         */

static void assert_cfg_equal(const struct nvmfd_cfg *a, const struct nvmfd_cfg *b)
{
	assert_int_equal(a->nr_ports, b->nr_ports);
	for (unsigned int i = 0; i < a->nr_ports; i++) {
		const struct nvmfd_cfg_port *p = &a->ports[i], *q = &b->ports[i];

		assert_int_equal(p->portid, q->portid);
		assert_int_equal(p->adrfam, q->adrfam);
		assert_string_equal(p->traddr, q->traddr);
		assert_string_equal(p->trsvcid, q->trsvcid);
		assert_int_equal(p->inline_data_size, q->inline_data_size);
		assert_int_equal(p->max_queue_size, q->max_queue_size);
		assert_int_equal(p->nr_subsys, q->nr_subsys);
		for (unsigned int k = 0; k < p->nr_subsys; k++)
			assert_int_equal(p->subsys_idx[k], q->subsys_idx[k]);
	}
	assert_int_equal(a->nr_subsys, b->nr_subsys);
	for (unsigned int i = 0; i < a->nr_subsys; i++) {
		const struct nvmfd_cfg_subsys *s = &a->subsys[i], *t = &b->subsys[i];

		assert_string_equal(s->nqn, t->nqn);
		assert_int_equal(s->allow_any_host, t->allow_any_host);
		assert_string_equal(s->serial, t->serial);
		assert_string_equal(s->model, t->model);
		assert_int_equal(s->version, t->version);
		assert_int_equal(s->cntlid_min, t->cntlid_min);
		assert_int_equal(s->cntlid_max, t->cntlid_max);
		assert_int_equal(s->qid_max, t->qid_max);
		assert_int_equal(s->nr_hosts, t->nr_hosts);
		for (unsigned int h = 0; h < s->nr_hosts; h++)
			assert_string_equal(s->hosts[h], t->hosts[h]);
		assert_int_equal(s->nr_ns, t->nr_ns);
		for (unsigned int n = 0; n < s->nr_ns; n++) {
			const struct nvmfd_cfg_ns *x = &s->ns[n], *y = &t->ns[n];

			assert_int_equal(x->nsid, y->nsid);
			assert_int_equal(x->enable, y->enable);
			assert_int_equal(x->bk.type, y->bk.type);
			assert_int_equal(x->bk.size, y->bk.size);
			assert_int_equal(x->bk.direct, y->bk.direct);
			assert_int_equal(x->bk.lba_shift, y->bk.lba_shift);
			assert_string_equal(x->path, y->path);
			assert_ptr_equal(y->bk.path, y->path);
			assert_int_equal(x->has_uuid, y->has_uuid);
			assert_int_equal(x->has_nguid, y->has_nguid);
			assert_memory_equal(x->uuid, y->uuid, 16);
			assert_memory_equal(x->nguid, y->nguid, 16);
		}
	}
	assert_int_equal(a->nr_referrals, b->nr_referrals);
	for (unsigned int i = 0; i < a->nr_referrals; i++) {
		assert_int_equal(a->referrals[i].portid, b->referrals[i].portid);
		assert_int_equal(a->referrals[i].adrfam, b->referrals[i].adrfam);
		assert_string_equal(a->referrals[i].traddr, b->referrals[i].traddr);
		assert_string_equal(a->referrals[i].trsvcid, b->referrals[i].trsvcid);
	}
	assert_int_equal(a->nr_hosts, b->nr_hosts);
	for (unsigned int i = 0; i < a->nr_hosts; i++)
		assert_string_equal(a->hosts[i], b->hosts[i]);
	assert_int_equal(a->exec.rt.mode, b->exec.rt.mode);
	assert_int_equal(a->exec.rt.scope, b->exec.rt.scope);
	assert_int_equal(a->exec.rt.strict, b->exec.rt.strict);
	assert_int_equal(a->exec.rt.max_active, b->exec.rt.max_active);
	assert_int_equal(a->exec.rt.workers_per_pool, b->exec.rt.workers_per_pool);
	assert_true(CPU_EQUAL(&a->exec.rt.cpus, &b->exec.rt.cpus));
	assert_int_equal(a->exec.wq_per_ctrl, b->exec.wq_per_ctrl);
	assert_int_equal(a->exec.idle_poll_us, b->exec.idle_poll_us);
	assert_int_equal(a->exec.backend_poll, b->exec.backend_poll);
	assert_int_equal(a->exec.cq_pool_shared, b->exec.cq_pool_shared);
	assert_int_equal(a->exec.place, b->exec.place);
	assert_int_equal(a->exec.rx_budget_bytes, b->exec.rx_budget_bytes);
	assert_int_equal(a->exec.tx_budget_bytes, b->exec.tx_budget_bytes);
	assert_int_equal(a->exec.rx_budget_pdus, b->exec.rx_budget_pdus);
	assert_int_equal(a->exec.tx_budget_pdus, b->exec.tx_budget_pdus);
	assert_int_equal(a->exec.io_work_deadline_us, b->exec.io_work_deadline_us);
	assert_int_equal(a->kato_grace_ms, b->kato_grace_ms);
	assert_int_equal(a->auth_timeout_ms, b->auth_timeout_ms);
	assert_int_equal(a->max_io_size, b->max_io_size);
	assert_int_equal(a->maxh2cdata, b->maxh2cdata);
	assert_int_equal(a->stats_interval_s, b->stats_interval_s);
	assert_string_equal(a->control_path, b->control_path);
}

static void round_trip(const struct nvmfd_cfg *a, struct nvmfd_cfg *b, const char *name)
{
	char path[300], err[NVMFD_CFG_ERRLEN] = "";
	FILE *f;

	fixture_path(path, sizeof(path), name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json(a, f), 0);
	assert_int_equal(fclose(f), 0);
	nvmfd_cfg_init_defaults(b);
	if (nvmfd_cfg_load_json(b, path, err))
		fail_msg("reload of %s failed: %s", name, err);
	if (nvmfd_cfg_validate(b, err))
		fail_msg("reloaded %s invalid: %s", name, err);
	assert_cfg_equal(a, b);
}

/*
 * Every object's keys appear in strictly ascending byte order (what
 * nvmfd_cfg_write_json() promises, as nvmetcli's sort_keys output).
 * Regression: "firmware"/"ieee_oui" were written after "model".
 */
static void assert_keys_sorted(json_object *o, const char *where)
{
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(o); i++)
			assert_keys_sorted(json_object_array_get_idx(o, i), where);
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	const char *prev = NULL;
	json_object_object_foreach(o, key, val) {
		if (prev && strcmp(prev, key) >= 0)
			fail_msg("%s: key \"%s\" written after \"%s\"", where, key, prev);
		prev = key;
		assert_keys_sorted(val, key);
	}
}

static void test_round_trip(void **state)
{
	struct nvmfd_cfg *a = &cfg_a;
	char err[NVMFD_CFG_ERRLEN], spec[600];
	struct nvmfd_cfg_subsys *s;

	/* defaults-only subsystem and port */
	base_cfg(a);
	round_trip(a, &cfg_b, "rt1.json");

	/* everything non-default */
	nvmfd_cfg_port_init(&a->ports[1], 17);
	assert_int_equal(nvmfd_cfg_parse_listen(&a->ports[1], "[::1]:0", err), 0);
	a->ports[1].inline_data_size = 0;
	a->ports[1].max_queue_size = 1024;
	a->ports[1].nr_subsys = 2;
	a->ports[1].subsys_idx[0] = 1;
	a->ports[1].subsys_idx[1] = 0;
	a->nr_ports = 2;
	s = &a->subsys[1];
	assert_int_equal(nvmfd_cfg_subsys_init(s, "nqn.2026-11.io.nvmfd:second", err), 0);
	s->allow_any_host = true;
	strcpy(s->serial, "SN-01234567890123456");
	strcpy(s->model, "A model with spaces & \"quotes\"");
	strcpy(s->firmware, "fw-1.2");
	s->ieee_oui = 0x001b21;
	s->version = NVMFD_VS(1, 4, 1);
	s->cntlid_min = 100;
	s->cntlid_max = 200;
	s->qid_max = 4;
	strcpy(s->hosts[0], "nqn.2014-08.org.nvmexpress:uuid:a");
	strcpy(s->hosts[1], "nqn.2014-08.org.nvmexpress:uuid:b");
	s->nr_hosts = 2;
	snprintf(spec, sizeof(spec), "file:%s,nsid=9,uuid=00112233-4455-6677-8899-aabbccddeeff",
		 existing_file);
	assert_int_equal(nvmfd_cfg_parse_namespace(&s->ns[0], spec, err), 0);
	snprintf(spec, sizeof(spec), "file:%s/rt-new.img,size=3G,direct,bs=4096,nsid=10,"
		 "nguid=ffeeddccbbaa99887766554433221100", tmpdir);
	assert_int_equal(nvmfd_cfg_parse_namespace(&s->ns[1], spec, err), 0);
	assert_int_equal(nvmfd_cfg_parse_namespace(&s->ns[2], "ram:12345K,nsid=1024", err), 0);
	s->ns[2].enable = false;
	assert_int_equal(nvmfd_cfg_parse_namespace(&s->ns[3], "null:1T,nsid=3,bs=512", err), 0);
	s->nr_ns = 4;
	a->nr_subsys = 2;
	/* referrals are saved under their port, so keep them in port order here */
	a->referrals[0] = (struct nvmfd_cfg_referral){ .portid = 1, .adrfam = NVMFD_ADRFAM_IPV4 };
	strcpy(a->referrals[0].traddr, "192.168.0.9");
	strcpy(a->referrals[0].trsvcid, "4420");
	a->referrals[1] = (struct nvmfd_cfg_referral){ .portid = 17, .adrfam = NVMFD_ADRFAM_IPV6 };
	strcpy(a->referrals[1].traddr, "fd00::2");
	strcpy(a->referrals[1].trsvcid, "8009");
	a->nr_referrals = 2;
	strcpy(a->hosts[0], "nqn.2014-08.org.nvmexpress:uuid:a");
	a->nr_hosts = 1;
	a->exec.rt.mode = NVMFD_RT_UNBOUND;
	a->exec.rt.scope = NVMFD_RT_SCOPE_SMT;
	a->exec.rt.strict = true;
	a->exec.rt.max_active = 7;
	a->exec.rt.workers_per_pool = 3;
	assert_int_equal(nvmfd_cfg_parse_cpus(&a->exec.rt.cpus, "0,2-5,63", err), 0);
	a->exec.wq_per_ctrl = true;
	a->exec.idle_poll_us = 50;
	a->exec.backend_poll = true;
	a->exec.cq_pool_shared = true;
	a->exec.place = NVMFD_RT_PLACE_LEAST_LOADED;
	a->exec.rx_budget_bytes = 65536;
	a->exec.tx_budget_bytes = 131072;
	a->exec.rx_budget_pdus = 3;
	a->exec.tx_budget_pdus = 5;
	a->exec.io_work_deadline_us = 250;
	a->kato_grace_ms = 2500;
	a->auth_timeout_ms = 750;
	a->max_io_size = 128 << 10;
	a->maxh2cdata = 32 << 10;
	a->stats_interval_s = 5;
	strcpy(a->control_path, "/run/nvmfd test.sock");
	if (nvmfd_cfg_validate(a, err))
		fail_msg("full config invalid: %s", err);
	round_trip(a, &cfg_b, "rt2.json");
	assert_string_equal(cfg_b.subsys[1].ns[2].path, "ram:12345K");

	/* and writing the reloaded config again gives the same bytes */
	{
		char p1[300], p2[300], b1[65536], b2[65536];
		size_t n1, n2;
		FILE *f;

		fixture_path(p1, sizeof(p1), "rt2.json");
		fixture_path(p2, sizeof(p2), "rt3.json");
		f = fopen(p2, "w");
		assert_non_null(f);
		assert_int_equal(nvmfd_cfg_write_json(&cfg_b, f), 0);
		fclose(f);
		f = fopen(p1, "r");
		n1 = fread(b1, 1, sizeof(b1), f);
		fclose(f);
		f = fopen(p2, "r");
		n2 = fread(b2, 1, sizeof(b2), f);
		fclose(f);
		assert_true(n1 > 100 && n1 < sizeof(b1));
		assert_int_equal(n1, n2);
		assert_memory_equal(b1, b2, n1);
		b1[n1] = '\0';
		/* nvmetcli conventions: attributes as strings, ids as numbers */
		assert_non_null(strstr(b1, "\"inline_data_size\": \"16384\""));
		assert_non_null(strstr(b1, "\"portid\": 17"));
		assert_non_null(strstr(b1, "\"version\": \"1.4.1\""));
		assert_non_null(strstr(b1, "\"path\": \"null:1T\""));
		assert_non_null(strstr(b1, "\"trtype\": \"tcp\""));
		assert_non_null(strstr(b1, "\"firmware\": \"fw-1.2\""));
		{
			json_object *root = json_tokener_parse(b1);

			assert_non_null(root);
			assert_keys_sorted(root, "rt2.json");
			json_object_put(root);
		}
	}

	/* the auto mode's keys are sorted too */
	a->exec.exec_auto = true;
	a->exec.wq_per_ctrl = false; /* auto refuses per-controller pools */
	a->exec.cq_pool_shared = false;
	a->exec.rt.mode = NVMFD_RT_BOUND; /* what auto loads as */
	a->exec.auto_starve_ms = 80;
	a->exec.auto_no_budget = true;
	a->exec.auto_no_cq = true;
	a->exec.auto_no_follow = true;
	if (nvmfd_cfg_validate(a, err))
		fail_msg("auto config invalid: %s", err);
	round_trip(a, &cfg_b, "rt4.json");
	assert_true(cfg_b.exec.auto_no_budget && cfg_b.exec.auto_no_cq);
	assert_true(cfg_b.exec.auto_no_follow);
	assert_false(cfg_b.exec.auto_no_poll);
	{
		char p4[300];
		json_object *root;

		fixture_path(p4, sizeof(p4), "rt4.json");
		root = json_object_from_file(p4);
		assert_non_null(root);
		assert_keys_sorted(root, "rt4.json");
		json_object_put(root);
	}
}

/* Adds a subsystem with the given namespace specs to a default config. */
static void machine_cfg(struct nvmfd_cfg *c, const char *const *specs, unsigned int n)
{
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_subsys *s;

	nvmfd_cfg_init_defaults(c);
	c->nr_subsys = 1;
	s = &c->subsys[0];
	assert_int_equal(nvmfd_cfg_subsys_init(s, "nqn.2026-11.io.nvmfd:m", err), 0);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(nvmfd_cfg_parse_namespace(&s->ns[i], specs[i], err), 0);
		s->ns[i].nsid = i + 1;
	}
	s->nr_ns = n;
}

static void test_check_ram(void **state)
{
	static const char *const big[] = { "null:4T", "ram:1T" };
	static const char *const two[] = { "ram:8G", "ram:8G", "null:64G" };
	static const char *const none[] = { "null:1T" };
	const uint64_t gib = 1ull << 30;
	const uint64_t total = (uint64_t)(23.4 * (double)gib);
	char err[NVMFD_CFG_ERRLEN];
	bool warn;

	(void)state;
	/* 1 TiB of RAM namespaces on a 23.4 GiB machine: refused, named */
	machine_cfg(&cfg_a, big, 2);
	err[0] = '\0';
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, total, 20 * gib, err, &warn), -ENOMEM);
	assert_false(warn);
	assert_string_equal(err, "namespace 'ram:1T' (subsystem 'nqn.2026-11.io.nvmfd:m' nsid 2): "
				 "ram namespaces need 1 TiB but the machine has 23.4 GiB");
	/* the sum counts, null namespaces do not: 16 GiB */
	machine_cfg(&cfg_a, two, 3);
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, 15 * gib, 0, err, &warn), -ENOMEM);
	assert_non_null(strstr(err, "need 16 GiB but the machine has 15 GiB"));
	/* fits physical memory but not what is available now: warning only */
	err[0] = '\0';
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, 32 * gib, 10 * gib, err, &warn), 0);
	assert_true(warn);
	assert_non_null(strstr(err, "need 16 GiB but only 10 GiB is available"));
	assert_non_null(strstr(err, "namespace 'ram:8G'"));
	/* fits both; and available unknown (0) never warns */
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, 32 * gib, 16 * gib, err, &warn), 0);
	assert_false(warn);
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, 16 * gib, 0, err, &warn), 0);
	assert_false(warn);
	/* no RAM namespace: nothing to check */
	machine_cfg(&cfg_a, none, 1);
	assert_int_equal(nvmfd_cfg_check_ram(&cfg_a, gib, gib, err, &warn), 0);
	assert_false(warn);
}

static void test_check_cpus(void **state)
{
	char err[NVMFD_CFG_ERRLEN];
	cpu_set_t usable;

	(void)state;
	CPU_ZERO(&usable);
	CPU_SET(0, &usable);
	CPU_SET(1, &usable);
	nvmfd_cfg_init_defaults(&cfg_a);
	/* empty = all usable CPUs */
	assert_int_equal(nvmfd_cfg_check_cpus(&cfg_a, &usable, err), 0);
	assert_int_equal(nvmfd_cfg_parse_cpus(&cfg_a.exec.rt.cpus, "1", err), 0);
	assert_int_equal(nvmfd_cfg_check_cpus(&cfg_a, &usable, err), 0);
	assert_int_equal(nvmfd_cfg_parse_cpus(&cfg_a.exec.rt.cpus, "5-9", err), 0);
	assert_int_equal(nvmfd_cfg_check_cpus(&cfg_a, &usable, err), -EINVAL);
	assert_string_equal(err, "--cpus '5-9': CPU 5-9 not online or not allowed (usable: 0-1)");
	assert_int_equal(nvmfd_cfg_parse_cpus(&cfg_a.exec.rt.cpus, "0-2", err), 0);
	assert_int_equal(nvmfd_cfg_check_cpus(&cfg_a, &usable, err), -EINVAL);
	assert_string_equal(err, "--cpus '0-2': CPU 2 not online or not allowed (usable: 0-1)");
}

/* nvmfd's default exec mode (nvmfd_cfg_exec_resolve()): auto when no mode
 * was given, bound where auto does not combine; a given mode stays; the
 * library default stays bound; a defaulted mode is not written out. */
static bool printed_mode(const struct nvmfd_cfg *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool has;

	assert_non_null(f);
	assert_int_equal(nvmfd_cfg_write_json(c, f), 0);
	assert_int_equal(fclose(f), 0);
	has = strstr(buf, "\"mode\"") != NULL;
	free(buf);
	return has;
}

static void test_exec_resolve(void **state)
{
	struct nvmfd_cfg *c = &cfg_a;

	(void)state;
	nvmfd_cfg_init_defaults(c);
	assert_false(c->exec.exec_auto); /* the library's default */
	assert_true(printed_mode(c));
	nvmfd_cfg_exec_resolve(c);
	assert_true(c->exec.exec_auto && c->exec.exec_mode_default);
	assert_int_equal(c->exec.rt.mode, NVMFD_RT_BOUND);
	assert_false(printed_mode(c));
	assert_false(c->exec.auto_no_cq); /* cq_pool shared is kept elsewhere */

	nvmfd_cfg_init_defaults(c);
	c->exec.wq_per_ctrl = true;
	nvmfd_cfg_exec_resolve(c);
	assert_false(c->exec.exec_auto);
	assert_true(c->exec.exec_mode_default);
	assert_false(printed_mode(c));

	nvmfd_cfg_init_defaults(c);
	c->exec.net = NVMFD_CFG_NET_URING;
	nvmfd_cfg_exec_resolve(c);
	assert_false(c->exec.exec_auto);

	/* a given mode, bound or unbound, stays and is printed */
	nvmfd_cfg_init_defaults(c);
	c->exec.exec_mode_set = true;
	c->exec.rt.mode = NVMFD_RT_UNBOUND;
	nvmfd_cfg_exec_resolve(c);
	assert_false(c->exec.exec_auto || c->exec.exec_mode_default);
	assert_int_equal(c->exec.rt.mode, NVMFD_RT_UNBOUND);
	assert_true(printed_mode(c));
	nvmfd_cfg_init_defaults(c);
	c->exec.exec_mode_set = true;
	nvmfd_cfg_exec_resolve(c);
	assert_false(c->exec.exec_auto);
}

static void test_user_errors(void **state)
{
	char err[NVMFD_CFG_ERRLEN], spec[512], nqn[400];
	struct nvmfd_cfg_ns ns;

	(void)state;
	/* an NQN of 240 or 301 bytes: both messages give the NVMe limit, 223 */
	for (size_t len = 240; len <= 301; len += 61) {
		memset(nqn, 'a', len);
		memcpy(nqn, "nqn.", 4);
		nqn[len] = '\0';
		err[0] = '\0';
		assert_int_equal(nvmfd_cfg_subsys_init(&cfg_a.subsys[0], nqn, err), -EINVAL);
		assert_non_null(strstr(err, "longer than 223 bytes"));
	}
	/* a file to create in a directory that does not exist */
	snprintf(spec, sizeof(spec), "file:%s/nonexistent/dir/x.img,size=1M", tmpdir);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec, err), -EINVAL);
	assert_non_null(strstr(err, spec));
	assert_non_null(strstr(err, "cannot create"));
	assert_non_null(strstr(err, "No such file or directory"));
	/* ... or under a regular file */
	snprintf(spec, sizeof(spec), "file:%s/x.img,size=1M", existing_file);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec, err), -EINVAL);
	assert_non_null(strstr(err, "is not a directory"));
	/* in an existing directory: fine */
	snprintf(spec, sizeof(spec), "file:%s/new.img,size=1M", tmpdir);
	assert_int_equal(nvmfd_cfg_parse_namespace(&ns, spec, err), 0);
	/* -c DIR */
	nvmfd_cfg_init_defaults(&cfg_a);
	assert_int_equal(nvmfd_cfg_load_json(&cfg_a, tmpdir, err), -EINVAL);
	assert_string_equal(err, "is a directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_namespace_good),
		cmocka_unit_test(test_parse_namespace_bad),
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_parse_cpus_and_enums),
		cmocka_unit_test(test_load_nvmetcli),
		cmocka_unit_test(test_load_numbers_as_ints),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_mutations),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_check_ram),
		cmocka_unit_test(test_check_cpus),
		cmocka_unit_test(test_user_errors),
		cmocka_unit_test(test_exec_resolve),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
