// SPDX-License-Identifier: MIT
/* test_perf.c - nvmf-perf's argument parsing and verify block format. */
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

#include "../../../tools/nvmf-perf/perf.h"

#define TRID "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:nqn.x:y"

static int parse(struct perf_opts *o, char *err, size_t len, int argc, const char *const *argv)
{
	return perf_parse_args(argc, (char **)(uintptr_t)argv, o, err, len);
}

static void test_args_full(void **state)
{
	const char *argv[] = { "nvmf-perf", "-r", TRID, "-q", "64", "-o", "128k", "-w", "randrw",
			       "-M", "70", "-t", "3", "-P", "2", "--ns", "2", "--warmup", "1",
			       "--digest", "hdr,data", "--verify", "--json", "--timeout", "500" };
	struct perf_opts o;
	char err[256];

	assert_int_equal(parse(&o, err, sizeof(err), sizeof(argv) / sizeof(argv[0]), argv), 0);
	assert_false(o.discover);
	assert_int_equal(o.depth, 64);
	assert_int_equal(o.io_size, 131072);
	assert_int_equal(o.pattern, PERF_RANDRW);
	assert_int_equal(o.read_pct, 70);
	assert_int_equal(o.seconds, 3);
	assert_int_equal(o.queues, 2);
	assert_int_equal(o.nsid, 2);
	assert_int_equal(o.warmup, 1);
	assert_true(o.hdgst && o.ddgst && o.verify && o.json);
	assert_int_equal(o.timeout_ms, 500);
	assert_string_equal(o.trid.subnqn, "nqn.x:y");
	assert_string_equal(o.trid.trsvcid, "4420");
}

/* several -r: every one parsed in order; --rate */
static void test_args_multi_rate(void **state)
{
	const char *argv[] = { "nvmf-perf", "-r", TRID, "-r",
			       "traddr:127.0.0.2 trsvcid:4421 subnqn:nqn.x:z", "--rate", "5000" };
	const char *bad[] = { "nvmf-perf", "-r", TRID, "-r", "traddr:127.0.0.2" };
	const char *disc[] = { "nvmf-perf", "discover", "-r", TRID, "-r", TRID };
	const char *many[PERF_MAX_CTRLS * 2 + 3];
	struct perf_opts o;
	char err[256];
	int n = 1;

	assert_int_equal(parse(&o, err, sizeof(err), 7, argv), 0);
	assert_int_equal(o.nr_trids, 2);
	assert_string_equal(o.trid.subnqn, "nqn.x:y");
	assert_string_equal(o.trids[0].subnqn, "nqn.x:y");
	assert_string_equal(o.trids[1].subnqn, "nqn.x:z");
	assert_string_equal(o.trids[1].traddr, "127.0.0.2");
	assert_string_equal(o.trids[1].trsvcid, "4421");
	assert_true(o.rate == 5000);
	assert_int_equal(parse(&o, err, sizeof(err), 5, bad), -EINVAL);
	assert_non_null(strstr(err, "-r #2: subnqn"));
	assert_int_equal(parse(&o, err, sizeof(err), 6, disc), -EINVAL);
	assert_non_null(strstr(err, "discover takes one -r"));
	many[0] = "nvmf-perf";
	for (int i = 0; i <= PERF_MAX_CTRLS; i++) {
		many[n++] = "-r";
		many[n++] = TRID;
	}
	assert_int_equal(parse(&o, err, sizeof(err), n, many), -EINVAL);
	assert_non_null(strstr(err, "at most 64 controllers"));
	assert_int_equal(parse(&o, err, sizeof(err), n - 2, many), 0);
	assert_int_equal(o.nr_trids, PERF_MAX_CTRLS);
	/* one -r: closed loop by default */
	assert_int_equal(parse(&o, err, sizeof(err), 3, argv), 0);
	assert_int_equal(o.nr_trids, 1);
	assert_true(o.rate == 0);
}

static void test_args_defaults_discover(void **state)
{
	const char *a1[] = { "nvmf-perf", "-r", TRID };
	const char *a2[] = { "nvmf-perf", "discover", "-r", "trtype:TCP traddr:10.0.0.1" };
	struct perf_opts o;
	char err[256];

	assert_int_equal(parse(&o, err, sizeof(err), 3, a1), 0);
	assert_int_equal(o.depth, 32);
	assert_int_equal(o.io_size, 4096);
	assert_int_equal(o.pattern, PERF_RANDREAD);
	assert_int_equal(o.queues, 1);
	assert_int_equal(o.seconds, 10);
	assert_int_equal(parse(&o, err, sizeof(err), 4, a2), 0);
	assert_true(o.discover);
	assert_string_equal(o.trid.trsvcid, "8009");
	assert_string_equal(o.trid.subnqn, NVMFD_DISC_NQN);
}

/* discover uses -r, --digest, --json, --timeout and the security options;
 * an I/O option with it is a usage error naming it, not silently ignored */
static void test_discover_io_options(void **state)
{
	static const char *const io[][2] = {
		{ "-w", "read" },	   { "-q", "8" },	    { "-t", "1" },
		{ "-P", "2" },		   { "-o", "8k" },	    { "--ns", "1" },
		{ "--exec", "auto" },	   { "--cpus", "0" },	    { "--rate", "10" },
		{ "--verify-state", "f" }, { "--idle-poll-us", "5" }, { "--warmup", "1" },
	};
	static const char *const flags[] = { "--verify", "--busy-poll", "--disable-sqflow",
					     "--affinity-strict", "--auto-bound" };
	const char *ok[] = { "nvmf-perf", "discover", "-r", TRID, "--digest", "hdr",
			     "--json", "--timeout", "500" };
	struct perf_opts o;
	char err[256], want[64];

	assert_int_equal(parse(&o, err, sizeof(err), 9, ok), 0);
	assert_true(o.discover && o.hdgst && o.json);
	assert_int_equal(o.timeout_ms, 500);
	for (size_t i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		const char *a[] = { "nvmf-perf", "discover", "-r", TRID, io[i][0], io[i][1] };

		err[0] = '\0';
		assert_int_equal(parse(&o, err, sizeof(err), 6, a), -EINVAL);
		snprintf(want, sizeof(want), "%s is for I/O runs, not discover", io[i][0]);
		if (!strstr(err, want))
			fail_msg("%s %s: '%s'", io[i][0], io[i][1], err);
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		const char *a[] = { "nvmf-perf", "discover", "-r", TRID, flags[i] };

		err[0] = '\0';
		assert_int_equal(parse(&o, err, sizeof(err), 5, a), -EINVAL);
		snprintf(want, sizeof(want), "%s is for I/O runs, not discover", flags[i]);
		if (!strstr(err, want))
			fail_msg("%s: '%s'", flags[i], err);
	}
	/* the same options without discover are fine */
	{
		const char *a[] = { "nvmf-perf", "-r", TRID, "-w", "read", "-q", "8" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, a), 0);
	}
}

static void test_args_errors(void **state)
{
	static const struct {
		const char *argv[6];
		int argc;
		const char *msg;
	} cases[] = {
		{ { "p", "-q", "0", "-r", TRID }, 5, "depth" },
		{ { "p", "-w", "sideways", "-r", TRID }, 5, "unknown pattern" },
		{ { "p", "-M", "101", "-r", TRID }, 5, "read percentage" },
		{ { "p", "-o", "100", "-r", TRID }, 5, "size" },
		{ { "p", "--digest", "crc", "-r", TRID }, 5, "--digest" },
		{ { "p", "-q", "4" }, 3, "-r TRID is required" },
		{ { "p", "-r", "traddr:1.1.1.1" }, 3, "subnqn" },
		{ { "p", "-r", TRID, "--bogus" }, 4, "unknown option" },
		{ { "p", "-r", TRID, "extra" }, 4, "unexpected argument" },
		{ { "p", "-r" }, 2, "needs an argument" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_opts o;
		char err[256] = "";

		if (parse(&o, err, sizeof(err), cases[i].argc, cases[i].argv) != -EINVAL)
			fail_msg("case %zu accepted", i);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
	}
}

static void test_help(void **state)
{
	const char *argv[] = { "nvmf-perf", "--help" };
	struct perf_opts o;
	char err[64];

	assert_int_equal(parse(&o, err, sizeof(err), 2, argv), 0);
	assert_true(o.help);
	assert_non_null(strstr(perf_usage(), "Exit status"));
	assert_string_equal(perf_pattern_name(PERF_RANDWRITE), "randwrite");
}

/* --verify needs writes and reads in the same run: without writes there is
 * nothing to check against, without reads nothing is checked (the
 * "0 blocks verified, exit 0" of -w write --verify). */
static void test_verify_needs_writes(void **state)
{
	static const char *const need_w = "--verify needs writes in the same run";
	static const char *const need_r = "--verify checks blocks by reading them back";
	static const struct {
		const char *pattern;
		const char *mix; /* NULL: no -M */
		int want; /* 'w' refused for want of writes, 'r' of reads, 0 accepted */
	} cases[] = {
		{ "read", NULL, 'w' },	   { "randread", NULL, 'w' }, { "rw", "100", 'w' },
		{ "randrw", "100", 'w' },  { "write", NULL, 'r' },    { "randwrite", NULL, 'r' },
		{ "randrw", "0", 'r' },	   { "rw", "0", 'r' },	      { "rw", "99", 0 },
		{ "randrw", "1", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { "p", "-r", TRID, "-w", cases[i].pattern, "--verify", "-M",
				       cases[i].mix };
		struct perf_opts o;
		char err[256] = "";
		int ret = parse(&o, err, sizeof(err), cases[i].mix ? 8 : 6, argv);

		if (!cases[i].want) {
			if (ret)
				fail_msg("-w %s -M %s --verify rejected: %s", cases[i].pattern,
					 cases[i].mix, err);
			continue;
		}
		if (ret != -EINVAL)
			fail_msg("-w %s -M %s --verify accepted", cases[i].pattern,
				 cases[i].mix ? cases[i].mix : "-");
		if (cases[i].want == 'w' && (!strstr(err, need_w) ||
				       !strstr(err, "cannot verify data written by an earlier run")))
			fail_msg("-w %s: message '%s'", cases[i].pattern, err);
		if (cases[i].want == 'r' && (!strstr(err, need_r) || !strstr(err, "never reads")))
			fail_msg("-w %s: message '%s'", cases[i].pattern, err);
	}
	/* without --verify a read workload is fine */
	{
		const char *argv[] = { "p", "-r", TRID, "-w", "read" };
		struct perf_opts o;
		char err[256];

		assert_int_equal(parse(&o, err, sizeof(err), 5, argv), 0);
	}
	assert_true(perf_pattern_writes(PERF_RANDWRITE, 100));
	assert_false(perf_pattern_writes(PERF_READ, 0));
}

/* -M only means something for rw/randrw; elsewhere it was silently ignored. */
static void test_mix_only_for_rw(void **state)
{
	static const char *const pats[] = { "read", "randread", "write", "randwrite" };
	struct perf_opts o;
	char err[256];

	for (size_t i = 0; i < 4; i++) {
		const char *argv[] = { "p", "-r", TRID, "-w", pats[i], "-M", "30" };

		err[0] = 0;
		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), -EINVAL);
		if (!strstr(err, "-M applies to -w rw and randrw only"))
			fail_msg("-w %s -M 30: '%s'", pats[i], err);
	}
	{
		const char *argv[] = { "p", "-r", TRID, "-w", "rw", "-M", "30" };

		assert_int_equal(parse(&o, err, sizeof(err), 7, argv), 0);
		assert_int_equal(o.read_pct, 30);
	}
}

static void test_version(void **state)
{
	const char *a1[] = { "nvmf-perf", "-V" };
	const char *a2[] = { "nvmf-perf", "--version" };
	struct perf_opts o;
	char err[64];

	assert_int_equal(parse(&o, err, sizeof(err), 2, a1), 0);
	assert_true(o.version);
	assert_int_equal(parse(&o, err, sizeof(err), 2, a2), 0);
	assert_true(o.version);
	assert_non_null(strstr(perf_usage(), "--version"));
}

/* MDTS: 2^MDTS pages of 2^(12 + CAP.MPSMIN) bytes; 0 = no limit. */
static void test_mdts_bytes(void **state)
{
	assert_int_equal(perf_mdts_bytes(0, 0), 0);
	assert_int_equal(perf_mdts_bytes(8, 0), 1048576); /* nvmfd's default */
	assert_int_equal(perf_mdts_bytes(5, 0), 131072);
	assert_int_equal(perf_mdts_bytes(5, 1ull << 48), 262144); /* MPSMIN 1: 8 KiB pages */
	assert_int_equal(perf_mdts_bytes(1, 0xfull << 48), 1ull << 28);
	assert_true(perf_mdts_bytes(60, 0) == UINT64_MAX);
	assert_true(perf_mdts_bytes(255, 0xfull << 48) == UINT64_MAX);
}

/* The help is printed with fputs: no printf escapes may be left in it;
 * the discover example names trsvcid; the exit codes list the signals. */
#define KEY_A "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:"
#define KEY_B "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:"

static void test_dhchap_args(void **state)
{
	char err[256] = "", path[] = "/tmp/nvmf-perf-test-key.XXXXXX";
	struct perf_opts o;
	int fd;

	(void)state;
	{
		const char *a[] = { "p", "-w", "randrw", "-r", TRID, "--dhchap-secret", KEY_A,
				    "--dhchap-ctrl-secret", KEY_B };

		assert_int_equal(parse(&o, err, sizeof(err), 9, a), 0);
		assert_string_equal(o.dhchap_secret, KEY_A);
		assert_string_equal(o.dhchap_ctrl_secret, KEY_B);
	}
	{
		/* several -r: the secrets are the options of every controller */
		const char *a[] = { "p", "-r", TRID, "--dhchap-secret", KEY_A, "-r", TRID "2",
				    "--rate", "1000" };

		assert_int_equal(parse(&o, err, sizeof(err), 9, a), 0);
		assert_int_equal(o.nr_trids, 2);
		assert_string_equal(o.trids[1].subnqn, "nqn.x:y2");
		assert_string_equal(o.dhchap_secret, KEY_A);
		assert_true(o.rate == 1000);
	}
	{
		/* Bad CRC (last base64 character changed). */
		const char *a[] = { "p", "-r", TRID, "--dhchap-secret",
				    "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2m:" };

		assert_int_equal(parse(&o, err, sizeof(err), 5, a), -EINVAL);
		assert_non_null(strstr(err, "--dhchap-secret: not a DH-HMAC-CHAP secret"));
		assert_null(strstr(err, "ia6z")); /* the value is not echoed */
	}
	{
		const char *a[] = { "p", "-r", TRID, "--dhchap-ctrl-secret", KEY_B };

		assert_int_equal(parse(&o, err, sizeof(err), 5, a), -EINVAL);
		assert_non_null(strstr(err, "needs --dhchap-secret"));
	}
	/* @FILE: the first line; group/other permissions are refused. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, KEY_B "\n", sizeof(KEY_B)), (ssize_t)sizeof(KEY_B));
	close(fd);
	{
		char arg[64];
		const char *a[] = { "p", "-r", TRID, "--dhchap-secret", arg };

		snprintf(arg, sizeof(arg), "@%s", path);
		assert_int_equal(chmod(path, 0600), 0);
		assert_int_equal(parse(&o, err, sizeof(err), 5, a), 0);
		assert_string_equal(o.dhchap_secret, KEY_B);
		assert_int_equal(chmod(path, 0644), 0);
		assert_int_equal(parse(&o, err, sizeof(err), 5, a), -EINVAL);
		assert_non_null(strstr(err, "no group/other permissions"));
		unlink(path);
		assert_int_equal(parse(&o, err, sizeof(err), 5, a), -EINVAL);
		assert_non_null(strstr(err, "cannot read"));
	}
}

static void test_help_text(void **state)
{
	const char *u = perf_usage();

	assert_null(strstr(u, "%%"));
	assert_non_null(strstr(u, "CPU % user/system"));
	assert_non_null(strstr(u, "nvmf-perf discover -r 'trtype:TCP adrfam:IPv4 "
				  "traddr:127.0.0.1 trsvcid:4420'"));
	assert_non_null(strstr(u, "traddr:[::1]"));
	assert_non_null(strstr(u, "130"));
	assert_non_null(strstr(u, "143"));
	assert_non_null(strstr(u, "MDTS"));
	assert_non_null(strstr(u, "--dhchap-secret KEY"));
	assert_non_null(strstr(u, "--dhchap-ctrl-secret KEY"));
	/* both branches' options: several -r, --rate, -V, the stdev column */
	assert_non_null(strstr(u, "-r TRID [-r TRID]..."));
	assert_non_null(strstr(u, "[--rate IOPS]"));
	assert_non_null(strstr(u, "--rate IOPS   open loop"));
	assert_non_null(strstr(u, "-V, --version"));
	assert_non_null(strstr(u, "standard deviation"));
	assert_non_null(strstr(u, "errors"));
}

static void test_verify_roundtrip(void **state)
{
	static uint8_t blk[4096];
	static const uint32_t sizes[] = { 512, 4096 };
	char msg[256];

	for (size_t s = 0; s < 2; s++) {
		uint32_t n = sizes[s];

		perf_verify_fill(blk, n, 12345, 7);
		assert_int_equal(perf_verify_check(blk, n, 12345, 7, msg, sizeof(msg)), 0);
		/* Wrong expectations. */
		assert_int_equal(perf_verify_check(blk, n, 12346, 7, msg, sizeof(msg)), -EILSEQ);
		assert_non_null(strstr(msg, "carries LBA 12345"));
		assert_int_equal(perf_verify_check(blk, n, 12345, 8, msg, sizeof(msg)), -EILSEQ);
		assert_non_null(strstr(msg, "expected 8, actual 7"));
		assert_non_null(strstr(msg, "lost write"));
		/* One flipped bit anywhere in the payload is caught by the CRC. */
		blk[n - 1] ^= 0x10;
		assert_int_equal(perf_verify_check(blk, n, 12345, 7, msg, sizeof(msg)), -EILSEQ);
		assert_non_null(strstr(msg, "checksum"));
		/* Never written. */
		memset(blk, 0, n);
		assert_int_equal(perf_verify_check(blk, n, 12345, 7, msg, sizeof(msg)), -EILSEQ);
		assert_non_null(strstr(msg, "bad magic"));
	}
	/* Different (lba, gen) give different payloads. */
	{
		static uint8_t a[512], b[512];

		perf_verify_fill(a, 512, 1, 1);
		perf_verify_fill(b, 512, 1, 2);
		assert_memory_not_equal(a + PERF_VERIFY_HDR, b + PERF_VERIFY_HDR,
					512 - PERF_VERIFY_HDR);
	}
}

/* perf_vstate_resolve(): the rules for a slot of 2 blocks read back. */
static void vs_slot(uint8_t *buf, uint64_t lba, uint64_t g0, uint64_t g1)
{
	perf_verify_fill(buf, 512, lba, g0);
	perf_verify_fill(buf + 512, 512, lba + 1, g1);
}

static void test_vstate_resolve(void **state)
{
	static uint8_t buf[1024];
	struct perf_vstate_stats st;
	uint64_t a, p;
	char msg[256];

	memset(&st, 0, sizeof(st));
	/* acknowledged, nothing in flight: exactly that generation */
	vs_slot(buf, 10, 5, 5);
	a = 5, p = 0;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)), 0);
	assert_int_equal(st.slots, 1);
	assert_int_equal(st.blocks, 2);
	vs_slot(buf, 10, 5, 4); /* the second block lost its write */
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)),
			 -EILSEQ);
	assert_non_null(strstr(msg, "LBA 11"));
	assert_non_null(strstr(msg, "lost write"));
	/* in flight at the kill: new ... */
	vs_slot(buf, 10, 9, 9);
	a = 5, p = 9;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)), 0);
	assert_int_equal(a, 9);
	assert_int_equal(p, 0);
	assert_int_equal(st.inflight_new, 1);
	/* ... old ... */
	vs_slot(buf, 10, 5, 5);
	a = 5, p = 9;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)), 0);
	assert_int_equal(a, 5);
	assert_int_equal(p, 0);
	assert_int_equal(st.inflight_old, 1);
	/* ... or torn: then nothing is known any more */
	vs_slot(buf, 10, 9, 5);
	a = 5, p = 9;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)), 0);
	assert_int_equal(a, 0);
	assert_int_equal(st.inflight_torn, 1);
	/* neither generation: a mismatch naming both */
	vs_slot(buf, 10, 7, 7);
	a = 5, p = 9;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)),
			 -EILSEQ);
	assert_non_null(strstr(msg, "nor the generation 9 in flight"));
	/* killed between acked = G and pending = 0: only G */
	vs_slot(buf, 10, 5, 5);
	a = 9, p = 9;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)),
			 -EILSEQ);
	/* first write in flight, nothing acknowledged: anything goes */
	memset(buf, 0, sizeof(buf));
	a = 0, p = 3;
	assert_int_equal(perf_vstate_resolve(&a, &p, buf, 512, 2, 10, &st, msg, sizeof(msg)), 0);
	assert_int_equal(a, 0);
	assert_int_equal(p, 0);
}

/* The state file: created, reopened with its counter, refused for another
 * geometry or while locked; generations never repeat across opens. */
static void test_vstate_file(void **state)
{
	char path[] = "/tmp/nvmf-perf-vs-XXXXXX";
	struct perf_vstate *vs = NULL, *vs2 = NULL;
	uint64_t next = 0, end = 0, g1, g2;
	char err[512];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(perf_vstate_open(path, 512, 8, 100, &vs, err, sizeof(err)), 0);
	assert_int_equal(perf_vstate_runs(vs), 1);
	perf_vstate_next_gen(vs, &next, &end, &g1);
	assert_true(g1 > 0);
	perf_vstate_acked(vs, 0)[99] = g1;
	/* a second user is refused while the first holds it */
	assert_int_equal(perf_vstate_open(path, 512, 8, 100, &vs2, err, sizeof(err)), -EWOULDBLOCK);
	assert_non_null(strstr(err, "in use"));
	perf_vstate_close(&vs);
	assert_null(vs);
	/* another geometry */
	assert_int_equal(perf_vstate_open(path, 512, 16, 50, &vs, err, sizeof(err)), -EINVAL);
	assert_int_equal(perf_vstate_open(path, 4096, 8, 100, &vs, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "same namespace size and -o"));
	/* reopened: the map and the counter carried over */
	assert_int_equal(perf_vstate_open(path, 512, 8, 100, &vs, err, sizeof(err)), 0);
	assert_int_equal(perf_vstate_runs(vs), 2);
	assert_int_equal(perf_vstate_acked(vs, 90)[9], g1);
	next = end = 0;
	perf_vstate_next_gen(vs, &next, &end, &g2);
	assert_true(g2 > g1);
	perf_vstate_close(&vs);
	/* without a state: a plain counter */
	next = 41;
	perf_vstate_next_gen(NULL, &next, &end, &g2);
	assert_int_equal(g2, 42);
	unlink(path);
	/* not a regular file: named as such, not "Invalid argument" */
	assert_int_equal(perf_vstate_open("/dev/null", 512, 8, 100, &vs, err, sizeof(err)),
			 -EINVAL);
	assert_null(vs);
	assert_non_null(strstr(err, "/dev/null: not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_full),   cmocka_unit_test(test_args_defaults_discover),
		cmocka_unit_test(test_args_multi_rate),	   cmocka_unit_test(test_discover_io_options),
		cmocka_unit_test(test_args_errors), cmocka_unit_test(test_help),
		cmocka_unit_test(test_verify_roundtrip), cmocka_unit_test(test_verify_needs_writes),
		cmocka_unit_test(test_mdts_bytes),	   cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_mix_only_for_rw),	   cmocka_unit_test(test_version),
		cmocka_unit_test(test_dhchap_args),
		cmocka_unit_test(test_vstate_resolve),	   cmocka_unit_test(test_vstate_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
