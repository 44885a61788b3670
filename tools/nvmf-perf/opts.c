// SPDX-License-Identifier: MIT
/* opts.c - nvmf-perf command line. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/auth.h"
#include "perf.h"

static const char usage_text[] =
"Usage:\n"
"  nvmf-perf -r TRID [-r TRID]... [-q DEPTH] [-o BYTES] [-w PATTERN] [-M READPCT] [-t SECONDS]\n"
"            [-P QUEUES] [--ns NSID] [--warmup SECONDS] [--digest hdr,data]\n"
"            [--verify] [--verify-state FILE] [--json] [--busy-poll] [--timeout MS]\n"
"            [--disable-sqflow] [--exec bound|unbound|auto] [--affinity-scope SCOPE]\n"
"            [--affinity-strict]\n"
"            [--auto-starve-ms N] [--auto-bound] [--auto-no-poll] [--auto-freeze]\n"
"            [--auto-home bound|unbound]\n"
"            [--io-cpu rr|least-loaded] [--cpus LIST] [--idle-poll-us N]\n"
"            [--rx-budget BYTES] [--tx-budget BYTES] [--rate IOPS]\n"
"            [--threads N]\n"
"            [--dhchap-secret KEY [--dhchap-ctrl-secret KEY]\n"
"             [--reauth-interval MS]]\n"
"            [--tls --psk KEY [--tls-identity 0|1|spdk]]\n"
"  nvmf-perf discover -r TRID [--digest hdr,data] [--json] [--timeout MS]\n"
"            [--dhchap-secret KEY [--dhchap-ctrl-secret KEY]]\n"
"            [--tls --psk KEY [--tls-identity 0|1|spdk]]\n"
"  nvmf-perf -h | --help\n"
"\n"
"Drive an NVMe/TCP controller with the nvmfd host library and report\n"
"throughput, latency percentiles and CPU cost, in the manner of SPDK's perf.\n"
"\n"
"Each I/O queue is its own TCP connection owned by one thread, which keeps\n"
"DEPTH commands in flight and reaps completions with nvmfd_host_qp_poll().\n"
"When a poll makes no progress the thread blocks in poll(2) on the socket\n"
"(event driven) unless --idle-poll-us, --busy-poll or auto's polling say\n"
"otherwise.\n"
"\n"
"Execution model (as the Linux nvme-tcp host): every queue gets an io_cpu,\n"
"chosen by --io-cpu and counted per CPU; its thread is pinned there (bound)\n"
"or allowed on the affinity-scope unit containing it (unbound), or placed\n"
"and polled by a per-queue controller (auto, the default).\n"
"\n"
"Options:\n"
"  -r, --trid TRID   transport ID, e.g.\n"
"                    'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420\n"
"                     subnqn:nqn.2026-11.io.nvmfd:demo [hostnqn:NQN]'\n"
"                    trsvcid defaults to 4420 (8009, the NVMe/TCP discovery\n"
"                    port, for discover; nvmfd listens on 4420 only, so pass\n"
"                    trsvcid:4420 to discover it); subnqn defaults to the\n"
"                    discovery NQN. IPv6: traddr:::1 or traddr:[::1] (adrfam\n"
"                    IPv6 is implied; the port goes in trsvcid). Required.\n"
"                    Several -r (up to 64, I/O only) drive several\n"
"                    controllers from this process, each with -P queues;\n"
"                    the report has per-controller and merged statistics\n"
"                    (percentiles from the merged histograms).\n"
"  -q, --depth N     outstanding I/Os per queue (default 32).\n"
"  -o, --size BYTES  bytes per I/O, a multiple of the LBA size and at most\n"
"                    the controller's MDTS (checked after connecting);\n"
"                    suffixes k/K and m/M (KiB, MiB) accepted (default 4096).\n"
"  -w, --pattern P   read | write | randread | randwrite | rw | randrw\n"
"                    (default randread). rw/randrw mix by -M.\n"
"  -M, --rwmixread N percentage of reads in rw/randrw (default 50); a usage\n"
"                    error with the other patterns.\n"
"  -t, --time S      measured run time in seconds (default 10).\n"
"  -P, --queues N    I/O queues = TCP connections per -r (default 1); one\n"
"                    thread each unless --threads.\n"
"      --threads N   N queue threads for the whole process instead of one\n"
"                    per queue: the queues of every -r are dealt round robin\n"
"                    (queue k of all, counted across the -r list, to thread\n"
"                    k mod N); a thread waits in epoll on its queues'\n"
"                    sockets and drives each as its own thread would (-q,\n"
"                    --rate arrivals, --verify, --reauth-interval, command\n"
"                    timeouts). For many controllers on few CPUs (tests/\n"
"                    scale/scale.sh). N above the queue count is lowered to\n"
"                    it. The per-queue CPU, context switch and run-queue\n"
"                    delay columns then read 0 (a thread serves several\n"
"                    queues; the total line has the process's CPU); a\n"
"                    --reauth-interval transaction holds up the\n"
"                    other queues of its thread while it runs. Not with\n"
"                    --exec auto (it moves one thread per queue): the\n"
"                    default mode is then bound.\n"
"                    1..4096.\n"
"      --ns NSID     namespace (default: the first active one).\n"
"      --warmup S    run S seconds before measuring (default 0).\n"
"      --digest LIST request header and/or data digests: hdr, data or\n"
"                    hdr,data (CRC32C, NVMe/TCP 1.0 section 3.6.1.5).\n"
"      --verify      every written logical block carries its LBA, a\n"
"                    generation number and a CRC32C; reads check blocks\n"
"                    written earlier in this run against the last written\n"
"                    generation. I/Os never overlap in-flight I/Os to the\n"
"                    same LBAs and queues own disjoint LBA ranges. The first\n"
"                    mismatch prints LBA, expected and actual values and\n"
"                    exits 1. Needs writes and reads in the same run (-w rw\n"
"                    or randrw with -M 1..99): with read or randread it is a\n"
"                    usage error, as nvmf-perf cannot verify data written by\n"
"                    an earlier run, and so it is with write, randwrite or\n"
"                    -M 0, which never read back. With rw/randrw,\n"
"                    reads of blocks not yet written in this run are not\n"
"                    checked; the report gives the blocks verified and the\n"
"                    reads left unchecked (JSON verified_blocks,\n"
"                    unverified_reads).\n"
"      --verify-state FILE  --verify, with the generation of every -o slot\n"
"                    kept in FILE (created when missing; one -r; locked\n"
"                    while in use). Before its I/O a run reads back every\n"
"                    slot an earlier run wrote and checks it: a write that\n"
"                    was acknowledged must read back exactly; one that was\n"
"                    in flight when the earlier run was killed (or the\n"
"                    target stopped) may read back old or new, block by\n"
"                    block. Later reads check against the file too, and\n"
"                    generations never repeat. The same namespace size and\n"
"                    -o are needed; -P may differ. The file is kept in the\n"
"                    page cache: it survives SIGKILL of nvmf-perf, not a\n"
"                    crash of the host machine. JSON: config.verify_state.\n"
"      --json        print the report as one JSON object on stdout.\n"
"      --timeout MS  bound on every wait (connect, admin command, I/O),\n"
"                    default 10000.\n"
"      --disable-sqflow  ask for SQ flow control disable (Connect CATTR\n"
"                    bit 2) on I/O queues; targets may then complete reads\n"
"                    with the C2HData SUCCESS flag instead of a CapsuleResp.\n"
"      --exec MODE   bound: the queue thread is pinned to its io_cpu (the\n"
"                    Linux host's model; the default with --threads);\n"
"                    unbound: it may run on the CPUs of the\n"
"                    --affinity-scope unit that contains its io_cpu; auto\n"
"                    (the default): starts at its home (--auto-home: every\n"
"                    --cpus CPU by default, its io_cpu with bound), and a\n"
"                    monitor thread\n"
"                    (not a queue thread, on the process's own CPUs)\n"
"                    samples every 100 ms each queue thread's schedstat\n"
"                    and progress and every CPU's load (/proc/stat;\n"
"                    /proc/schedstat's run delay when the kernel has it).\n"
"                    A queue thread that\n"
"                    had work but made no pass for --auto-starve-ms is\n"
"                    moved at once (pinned to the least contended other\n"
"                    --cpus CPU if one is idle enough, else allowed on all\n"
"                    --cpus CPUs); one whose own run delay is >= 50 % of\n"
"                    the time or >= 2 ms per timeslice for 3 ticks moves\n"
"                    after at least the hold (1 s); it returns home\n"
"                    after 6 ticks with every home CPU at most 10 % busy\n"
"                    with other work (a return followed soon by a\n"
"                    departure doubles the hold, up to 64 s). Idle polling\n"
"                    goes on for a latency-bound queue (QD <= 4,\n"
"                    completions <= 200 us apart, its CPU < 25 % busy with\n"
"                    other work; period 2 x the gap, 10..200 us), off when\n"
"                    its CPU is contended for 2 ticks (one is ridden out),\n"
"                    after 3 idle ticks when idle. A given --idle-poll-us\n"
"                    or --busy-poll is kept as given. The decisions are in\n"
"                    the report (below) and logged.\n"
"      --auto-starve-ms N  auto: the no-pass bound for an immediate move,\n"
"                    1..60000 (default 50).\n"
"      --auto-bound  auto: never move a queue thread (starvations are\n"
"                    still counted).\n"
"      --auto-no-poll  auto: never idle-poll.\n"
"      --auto-freeze auto: decide nothing (counters and time only).\n"
"      --auto-home H  auto: unbound (default): a queue thread's home is\n"
"                    every --cpus CPU (the scheduler places it; pinned only\n"
"                    when starved or contended there); bound: pinned to its\n"
"                    io_cpu (the behaviour before session 20). The\n"
"                    --auto-* options need auto (the default, but not\n"
"                    with --threads or another --exec).\n"
"      --affinity-scope S  cpu | smt | cache (default) | numa | system:\n"
"                    the unit for --exec unbound (with bound or auto it\n"
"                    and --affinity-strict are ignored, with a warning).\n"
"      --affinity-strict   unbound threads never leave their unit; without\n"
"                    it they start in the unit, may run on any --cpus CPU and\n"
"                    are moved back into the unit when they wake up outside.\n"
"      --io-cpu P    rr (default): io_cpu = CPU number (qid - 1) mod CPUs in\n"
"                    the --cpus list; least-loaded: the CPUs are split into\n"
"                    -P contiguous groups as blk-mq maps CPUs to hardware\n"
"                    queues, queue i takes group i (mod the groups) and the\n"
"                    CPU of that group with the fewest queues placed so far.\n"
"      --cpus LIST   CPUs to use, e.g. 0-3,6 (default: all this process\n"
"                    may run on).\n"
"      --idle-poll-us N  after the last progress keep polling N us before\n"
"                    blocking in poll(2); 0 (default) blocks at once.\n"
"      --busy-poll   never block (poll for ever; SPDK style).\n"
"      --rx-budget BYTES  receive at most BYTES per poll call (0 = no\n"
"                    limit, default); --tx-budget BYTES: send at most about\n"
"                    BYTES per poll call. k/K and m/M suffixes accepted.\n"
"      --dhchap-secret KEY  DH-HMAC-CHAP host secret, DHHC-1:hh:<base64>:\n"
"                    (as 'nvme gen-dhchap-key' prints it), or @FILE to read\n"
"                    it from the first line of FILE, which must not be\n"
"                    readable by group or others. Used when a Connect\n"
"                    response asks for authentication (NVMe in-band\n"
"                    authentication, every queue of every -r), offering\n"
"                    SHA-256/384/512 and the DH groups null,\n"
"                    ffdhe2048..ffdhe8192.\n"
"      --dhchap-ctrl-secret KEY  controller secret (same forms): also\n"
"                    authenticate the controller (bidirectional); a\n"
"                    controller that does not know it, or does not ask for\n"
"                    authentication, is refused. Needs --dhchap-secret.\n"
"                    Secrets are never printed; the report says what each\n"
"                    controller chose and how many queues authenticated\n"
"                    (--json: dhchap, dhchap_hash, dhchap_dhgroup,\n"
"                    dhchap_queues; per controller in \"controllers\").\n"
"      --reauth-interval MS  re-authenticate (a new DH-HMAC-CHAP transaction)\n"
"                    every MS milliseconds during the run, on every I/O\n"
"                    queue (by its own thread, while its I/O continues)\n"
"                    and on the admin queue (by the first queue's thread).\n"
"                    A refused re-authentication ends the run with exit 3\n"
"                    and the reason (e.g. the controller's AUTH_Failure1\n"
"                    after its key changed). The report counts them\n"
"                    (--json: reauth_interval_ms, reauth_admin, reauth_io).\n"
"                    Needs --dhchap-secret.\n"
"      --tls         NVMe/TCP over TLS 1.3 with a pre-shared key (TP 8011):\n"
"                    every queue makes a TLS handshake before its ICReq.\n"
"                    Needs --psk. The report's TLS: line (--json: tls,\n"
"                    tls_cipher) names the cipher suite.\n"
"      --psk KEY     the configured PSK, NVMeTLSkey-1:hh:<base64>: (as\n"
"                    'nvme gen-tls-key' prints it; hh 01 SHA-256 picks\n"
"                    TLS_AES_128_GCM_SHA256, 02 SHA-384\n"
"                    TLS_AES_256_GCM_SHA384), or @FILE (no group/other\n"
"                    permissions). Never printed. A PSK the target refuses\n"
"                    exits 3.\n"
"      --tls-identity 0|1|spdk  the PSK identity: 1 (default) \"NVMe1R0h\n"
"                    HOSTNQN SUBNQN DIGEST\", 0 \"NVMe0R0h HOSTNQN SUBNQN\"\n"
"                    with the retained PSK as TLS PSK, spdk: a version 0\n"
"                    identity keyed as SPDK keys it.\n"
"      --rate IOPS   open loop: send IOPS I/Os per second in total, spread\n"
"                    evenly over the queues, each at its intended time\n"
"                    whether or not earlier ones have completed (-q is then\n"
"                    the most in flight per queue; an arrival that finds\n"
"                    them all busy waits and counts in queued_arrivals).\n"
"                    Latency is measured from the intended send time, so\n"
"                    queueing in the target or in nvmf-perf is not hidden\n"
"                    (no coordinated omission). Between arrivals a queue\n"
"                    thread sleeps in ppoll(2) on its socket until the next\n"
"                    arrival or a completion (ns timeout, no spinning;\n"
"                    --busy-poll polls instead). 1..100000000.\n"
"  -h, --help        this text.\n"
"  -V, --version     print the version and exit.\n"
"\n"
"Output: per queue (c<N>q<M> with several -r), per controller (ctrl<N>,\n"
"with several -r) and in total: IOPS, MiB/s, latency min/avg/max,\n"
"standard deviation and p50/p90/p99/p99.9/p99.99 in microseconds\n"
"(log-linear histogram merged over the queues, <1 %\n"
"error), CPU % user/system of the queue's thread (total: the process),\n"
"voluntary/involuntary context switches and the I/Os that completed with\n"
"an error (errors; a controller's are its queues', the total's the sum;\n"
"a line names the first). Rates are over the longest queue's measured\n"
"time. Then the DH-HMAC-CHAP line of each controller that authenticated;\n"
"per queue its io_cpu, the CPUs it may run on, run-queue delay\n"
"(schedstat), polls, empty polls, blocking waits and PDUs/bytes received\n"
"and sent; with --exec auto a line per queue: mode (bound, moved,\n"
"unbound), idle-poll period, moves, poll changes, starvations, the last\n"
"reason, milliseconds in each mode and polling, the longest wait seen\n"
"(JSON: queues[].exec.auto, config.auto); and the peak RSS\n"
"(VmHWM); with --verify the blocks verified. --json has all of it. While\n"
"running, a one-line progress report is written to stderr each second if\n"
"stderr is a terminal. SIGINT or SIGTERM ends the run early: the report\n"
"covers the time measured so far, a line on stderr says it was\n"
"interrupted and --json has \"interrupted\": true.\n"
"\n"
"discover takes -r, --digest, --json, --timeout and the DH-HMAC-CHAP and\n"
"TLS options (any other is a usage error) and prints the discovery log\n"
"like 'nvme discover': the number of records, the generation counter,\n"
"then for each entry trtype, adrfam, subtype, treq, portid, trsvcid,\n"
"subnqn, traddr, eflags and sectype.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  verify mismatch or an I/O completed with an error status\n"
"  2  usage error (also: -o above the controller's MDTS, --verify without\n"
"     both writes and reads)\n"
"  3  connection or protocol error (refused, timeout, ICResp/Connect\n"
"     rejected, authentication failed, malformed PDU, C2HTermReq)\n"
"  130  interrupted by SIGINT, 143 by SIGTERM (partial report printed;\n"
"     a verify mismatch or error found before the signal keeps 1 or 3)\n"
"\n"
"Examples:\n"
"  nvmf-perf -r 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 \\\n"
"      subnqn:nqn.2026-11.io.nvmfd:demo' -q 64 -o 4096 -w randread -t 10 -P 2\n"
"  nvmf-perf -r '... subnqn:nqn.2026-11.io.nvmfd:demo' -w randrw -M 70 --verify\n"
"  nvmf-perf discover -r 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420'\n"
"      (nvmfd's default listener; without trsvcid discover uses 8009)\n"
"  nvmf-perf -r 'traddr:[::1] trsvcid:4420 subnqn:nqn.2026-11.io.nvmfd:demo'\n";

const char *perf_usage(void)
{
	return usage_text;
}

static const char *const pattern_names[] = {
	[PERF_READ] = "read",	    [PERF_WRITE] = "write", [PERF_RANDREAD] = "randread",
	[PERF_RANDWRITE] = "randwrite", [PERF_RW] = "rw",	    [PERF_RANDRW] = "randrw",
};

const char *perf_pattern_name(enum perf_pattern p)
{
	return pattern_names[p];
}

uint64_t perf_mdts_bytes(uint8_t mdts, uint64_t cap)
{
	unsigned int shift = 12u + NVMFD_CAP_MPSMIN(cap) + mdts;

	if (!mdts)
		return 0;
	if (shift >= 64)
		return UINT64_MAX;
	return 1ull << shift;
}

bool perf_pattern_writes(enum perf_pattern p, uint32_t read_pct)
{
	switch (p) {
	case PERF_WRITE:
	case PERF_RANDWRITE:
		return true;
	case PERF_RW:
	case PERF_RANDRW:
		return read_pct < 100;
	default:
		return false;
	}
}

static int seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out, bool suffix)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (suffix && (*end == 'k' || *end == 'K')) {
		v *= 1024;
		end++;
	} else if (suffix && (*end == 'm' || *end == 'M')) {
		v *= 1024 * 1024;
		end++;
	}
	if (*end || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_NS = 256,
	OPT_WARMUP,
	OPT_DIGEST,
	OPT_VERIFY,
	OPT_VERIFY_STATE,
	OPT_JSON,
	OPT_BUSY,
	OPT_TIMEOUT,
	OPT_SQFLOW,
	OPT_EXEC,
	OPT_SCOPE,
	OPT_STRICT,
	OPT_IO_CPU,
	OPT_CPUS,
	OPT_IDLE_POLL,
	OPT_RX_BUDGET,
	OPT_TX_BUDGET,
	OPT_DHCHAP,
	OPT_DHCHAP_CTRL,
	OPT_REAUTH,
	OPT_TLS,
	OPT_PSK,
	OPT_TLS_IDENTITY,
	OPT_RATE,
	OPT_THREADS,
	OPT_AUTO_STARVE,
	OPT_AUTO_BOUND,
	OPT_AUTO_NO_POLL,
	OPT_AUTO_FREEZE,
	OPT_AUTO_HOME,
};

/*
 * A secret from the command line: the representation itself or @FILE. The
 * file must be a regular file not readable by group or others (a secret in
 * a world-readable file is as good as public).
 */
static int parse_secret(const char *opt, const char *arg, char *dst, size_t dlen, char *err,
			size_t len)
{
	struct nvmfd_auth_key k;
	char line[NVMFD_HOST_SECRET_MAX + 2];
	const char *val = arg;
	int ret;

	if (arg[0] == '@') {
		ret = nvmfd_auth_read_secret_file(arg + 1, line, sizeof(line));
		if (ret == -EPERM)
			return seterr(err, len,
				      "%s: '%s' must be a regular file with no group/other "
				      "permissions (chmod 600)", opt, arg + 1);
		if (ret == -ELOOP)
			return seterr(err, len,
				      "%s: '%s' is a symbolic link (secret files are opened "
				      "without following links: name the file itself)", opt, arg + 1);
		if (ret < 0 && ret != -ENAMETOOLONG && ret != -ENODATA)
			return seterr(err, len, "%s: cannot read '%s': %s", opt, arg + 1,
				      strerror(-ret));
		val = line;
	}
	if (!strcmp(opt, "--psk")) {
		struct nvmfd_auth_psk p;

		ret = nvmfd_auth_psk_parse(val, &p);
		nvmfd_auth_wipe(&p, sizeof(p));
		if (ret < 0 || strlen(val) >= dlen) {
			nvmfd_auth_wipe(line, sizeof(line));
			return seterr(err, len,
				      "%s: not a TLS PSK (NVMeTLSkey-1:hh:<base64>: with hh 00..02, "
				      "32/48 key bytes and a matching CRC-32)", opt);
		}
		snprintf(dst, dlen, "%s", val);
		nvmfd_auth_wipe(line, sizeof(line));
		return 0;
	}
	ret = nvmfd_auth_key_parse(val, &k);
	nvmfd_auth_wipe(&k, sizeof(k));
	if (ret < 0 || strlen(val) >= dlen) {
		nvmfd_auth_wipe(line, sizeof(line));
		return seterr(err, len,
			      "%s: not a DH-HMAC-CHAP secret (DHHC-1:hh:<base64>: with hh 00..03, "
			      "32/48/64 key bytes and a matching CRC-32)", opt);
	}
	snprintf(dst, dlen, "%s", val);
	nvmfd_auth_wipe(line, sizeof(line));
	return 0;
}

/* Options nvmf-perf discover uses (run_discover()); every other one is for
 * I/O runs and refused with discover rather than silently ignored. */
static bool discover_option(int c)
{
	switch (c) {
	case 'r':
	case OPT_DIGEST:
	case OPT_JSON:
	case OPT_TIMEOUT:
	case OPT_DHCHAP:
	case OPT_DHCHAP_CTRL:
	case OPT_REAUTH: /* refused with its own message below */
	case OPT_TLS:
	case OPT_PSK:
	case OPT_TLS_IDENTITY:
	case 'h':
	case 'V':
	case ':':
	case '?':
		return true;
	default:
		return false;
	}
}

int perf_parse_args(int argc, char **argv, struct perf_opts *o, char *err, size_t len)
{
	static const struct option lopts[] = {
		{ "trid", required_argument, NULL, 'r' },
		{ "depth", required_argument, NULL, 'q' },
		{ "size", required_argument, NULL, 'o' },
		{ "pattern", required_argument, NULL, 'w' },
		{ "rwmixread", required_argument, NULL, 'M' },
		{ "time", required_argument, NULL, 't' },
		{ "queues", required_argument, NULL, 'P' },
		{ "ns", required_argument, NULL, OPT_NS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "digest", required_argument, NULL, OPT_DIGEST },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "verify-state", required_argument, NULL, OPT_VERIFY_STATE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "busy-poll", no_argument, NULL, OPT_BUSY },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "disable-sqflow", no_argument, NULL, OPT_SQFLOW },
		{ "exec", required_argument, NULL, OPT_EXEC },
		{ "affinity-scope", required_argument, NULL, OPT_SCOPE },
		{ "affinity-strict", no_argument, NULL, OPT_STRICT },
		{ "io-cpu", required_argument, NULL, OPT_IO_CPU },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "idle-poll-us", required_argument, NULL, OPT_IDLE_POLL },
		{ "rx-budget", required_argument, NULL, OPT_RX_BUDGET },
		{ "tx-budget", required_argument, NULL, OPT_TX_BUDGET },
		{ "dhchap-secret", required_argument, NULL, OPT_DHCHAP },
		{ "dhchap-ctrl-secret", required_argument, NULL, OPT_DHCHAP_CTRL },
		{ "reauth-interval", required_argument, NULL, OPT_REAUTH },
		{ "tls", no_argument, NULL, OPT_TLS },
		{ "psk", required_argument, NULL, OPT_PSK },
		{ "tls-identity", required_argument, NULL, OPT_TLS_IDENTITY },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "auto-starve-ms", required_argument, NULL, OPT_AUTO_STARVE },
		{ "auto-bound", no_argument, NULL, OPT_AUTO_BOUND },
		{ "auto-no-poll", no_argument, NULL, OPT_AUTO_NO_POLL },
		{ "auto-freeze", no_argument, NULL, OPT_AUTO_FREEZE },
		{ "auto-home", required_argument, NULL, OPT_AUTO_HOME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool port_given = false, mix_given = false, auto_knob = false, affinity_given = false;
	const char *trid_strs[PERF_MAX_CTRLS];
	char io_only[32] = ""; /* the first option discover has no use for */
	const char *trid_str = NULL;
	uint32_t nr_trid = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->depth = 32;
	o->io_size = 4096;
	o->pattern = PERF_RANDREAD;
	o->read_pct = 50;
	o->seconds = 10;
	o->queues = 1;
	o->timeout_ms = 10000;
	o->tls_identity = NVMFD_HOST_TLS_ID_V1;
	o->exec = PERF_EXEC_AUTO; /* resolved after the options (--threads) */
	o->exec_default = true;
	nvmfd_auto_knobs_init(&o->auto_knobs);
	o->scope = NVMFD_RT_SCOPE_CACHE;
	o->io_cpu = PERF_IO_CPU_RR;
	if (argc > 1 && !strcmp(argv[1], "discover")) {
		o->discover = true;
		argv++;
		argc--;
	}
	optind = 1;
	opterr = 0;
	for (;;) {
		int li = -1;

		c = getopt_long(argc, argv, ":r:q:o:w:M:t:P:hV", lopts, &li);
		if (c == -1)
			break;
		if (!io_only[0] && !discover_option(c)) {
			if (li >= 0)
				snprintf(io_only, sizeof(io_only), "--%s", lopts[li].name);
			else
				snprintf(io_only, sizeof(io_only), "-%c", c);
		}
		switch (c) {
		case 'r':
			if (nr_trid == PERF_MAX_CTRLS)
				return seterr(err, len, "-r: at most %d controllers", PERF_MAX_CTRLS);
			trid_strs[nr_trid++] = optarg;
			trid_str = trid_strs[0];
			break;
		case 'q':
			if (parse_u32(optarg, 1, 65535, &o->depth, false))
				return seterr(err, len, "-q: depth must be 1..65535");
			break;
		case 'o':
			if (parse_u32(optarg, 512, 64u << 20, &o->io_size, true))
				return seterr(err, len, "-o: size must be 512 B .. 64 MiB");
			break;
		case 'w': {
			bool found = false;

			for (size_t i = 0; i < sizeof(pattern_names) / sizeof(pattern_names[0]); i++) {
				if (!strcmp(optarg, pattern_names[i])) {
					o->pattern = (enum perf_pattern)i;
					found = true;
				}
			}
			if (!found)
				return seterr(err, len, "-w: unknown pattern '%s'", optarg);
			break;
		}
		case 'M':
			if (parse_u32(optarg, 0, 100, &o->read_pct, false))
				return seterr(err, len, "-M: read percentage must be 0..100");
			mix_given = true;
			break;
		case 't':
			if (parse_u32(optarg, 1, 86400 * 7, &o->seconds, false))
				return seterr(err, len, "-t: time must be 1 .. 604800 seconds");
			break;
		case 'P':
			if (parse_u32(optarg, 1, 1024, &o->queues, false))
				return seterr(err, len, "-P: queues must be 1..1024");
			break;
		case OPT_NS:
			if (parse_u32(optarg, 1, 0xfffffffe, &o->nsid, false))
				return seterr(err, len, "--ns: invalid NSID '%s'", optarg);
			break;
		case OPT_WARMUP:
			if (parse_u32(optarg, 0, 3600, &o->warmup, false))
				return seterr(err, len, "--warmup: 0..3600 seconds");
			break;
		case OPT_DIGEST: {
			char buf[64], *save = NULL, *tok;

			snprintf(buf, sizeof(buf), "%s", optarg);
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (!strcmp(tok, "hdr") || !strcmp(tok, "header"))
					o->hdgst = true;
				else if (!strcmp(tok, "data"))
					o->ddgst = true;
				else
					return seterr(err, len, "--digest: unknown '%s' (hdr, data)",
						      tok);
			}
			break;
		}
		case OPT_VERIFY:
			o->verify = true;
			break;
		case OPT_VERIFY_STATE:
			if (!optarg[0])
				return seterr(err, len, "--verify-state needs a file name");
			o->verify_state = optarg;
			o->verify = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_BUSY:
			o->busy_poll = true;
			break;
		case OPT_SQFLOW:
			o->disable_sqflow = true;
			break;
		case OPT_TIMEOUT:
			if (parse_u32(optarg, 1, 3600000, &o->timeout_ms, false))
				return seterr(err, len, "--timeout: 1 .. 3600000 ms");
			break;
		case OPT_EXEC:
			o->exec_default = false;
			if (!strcmp(optarg, "bound"))
				o->exec = PERF_EXEC_BOUND;
			else if (!strcmp(optarg, "unbound"))
				o->exec = PERF_EXEC_UNBOUND;
			else if (!strcmp(optarg, "auto"))
				o->exec = PERF_EXEC_AUTO;
			else
				return seterr(err, len, "--exec: bound, unbound or auto, not '%s'",
					      optarg);
			break;
		case OPT_AUTO_STARVE: {
			uint32_t ms;

			if (parse_u32(optarg, 1, 60000, &ms, false))
				return seterr(err, len, "--auto-starve-ms: 1 .. 60000");
			o->auto_knobs.starve_ns = (uint64_t)ms * 1000000ull;
			auto_knob = true;
			break;
		}
		case OPT_AUTO_BOUND:
			o->auto_knobs.bound = true;
			auto_knob = true;
			break;
		case OPT_AUTO_NO_POLL:
			o->auto_knobs.no_poll = true;
			auto_knob = true;
			break;
		case OPT_AUTO_FREEZE:
			o->auto_knobs.freeze = true;
			auto_knob = true;
			break;
		case OPT_AUTO_HOME:
			if (!strcmp(optarg, "bound"))
				o->auto_home_bound = true;
			else if (!strcmp(optarg, "unbound"))
				o->auto_home_bound = false;
			else
				return seterr(err, len, "--auto-home: bound or unbound, not '%s'",
					      optarg);
			auto_knob = true;
			break;
		case OPT_SCOPE: {
			bool found = false;

			for (int sc = NVMFD_RT_SCOPE_CPU; sc <= NVMFD_RT_SCOPE_SYSTEM; sc++) {
				if (!strcmp(optarg, perf_scope_name((enum nvmfd_rt_scope)sc))) {
					o->scope = (enum nvmfd_rt_scope)sc;
					found = true;
				}
			}
			if (!found)
				return seterr(err, len,
					      "--affinity-scope: cpu, smt, cache, numa or system, not '%s'",
					      optarg);
			affinity_given = true;
			break;
		}
		case OPT_STRICT:
			o->strict = true;
			affinity_given = true;
			break;
		case OPT_IO_CPU:
			if (!strcmp(optarg, "rr"))
				o->io_cpu = PERF_IO_CPU_RR;
			else if (!strcmp(optarg, "least-loaded"))
				o->io_cpu = PERF_IO_CPU_LEAST_LOADED;
			else
				return seterr(err, len, "--io-cpu: rr or least-loaded, not '%s'",
					      optarg);
			break;
		case OPT_CPUS:
			if (perf_parse_cpulist(optarg, &o->cpus))
				return seterr(err, len, "--cpus: invalid CPU list '%s'", optarg);
			o->have_cpus = true;
			break;
		case OPT_IDLE_POLL:
			if (parse_u32(optarg, 0, 10000000, &o->idle_poll_us, false))
				return seterr(err, len, "--idle-poll-us: 0 .. 10000000");
			break;
		case OPT_RX_BUDGET:
			if (parse_u32(optarg, 0, 1u << 30, &o->rx_budget, true))
				return seterr(err, len, "--rx-budget: 0 .. 1 GiB");
			break;
		case OPT_RATE: {
			uint32_t r;

			if (parse_u32(optarg, 1, 100000000, &r, false))
				return seterr(err, len, "--rate: 1 .. 100000000 I/Os per second");
			o->rate = r;
			break;
		}
		case OPT_THREADS:
			if (parse_u32(optarg, 1, 4096, &o->threads, false))
				return seterr(err, len, "--threads: 1 .. 4096");
			break;
		case OPT_TX_BUDGET:
			if (parse_u32(optarg, 0, 1u << 30, &o->tx_budget, true))
				return seterr(err, len, "--tx-budget: 0 .. 1 GiB");
			break;
		case OPT_DHCHAP:
			if (parse_secret("--dhchap-secret", optarg, o->dhchap_secret,
					 sizeof(o->dhchap_secret), err, len))
				return -EINVAL;
			break;
		case OPT_DHCHAP_CTRL:
			if (parse_secret("--dhchap-ctrl-secret", optarg, o->dhchap_ctrl_secret,
					 sizeof(o->dhchap_ctrl_secret), err, len))
				return -EINVAL;
			break;
		case OPT_REAUTH:
			if (parse_u32(optarg, 1, 3600000, &o->reauth_ms, false))
				return seterr(err, len, "--reauth-interval: 1 .. 3600000 ms");
			break;
		case OPT_TLS:
			o->tls = true;
			break;
		case OPT_PSK:
			if (parse_secret("--psk", optarg, o->tls_psk, sizeof(o->tls_psk), err, len))
				return -EINVAL;
			break;
		case OPT_TLS_IDENTITY:
			if (!strcmp(optarg, "0"))
				o->tls_identity = NVMFD_HOST_TLS_ID_V0;
			else if (!strcmp(optarg, "1"))
				o->tls_identity = NVMFD_HOST_TLS_ID_V1;
			else if (!strcmp(optarg, "spdk"))
				o->tls_identity = NVMFD_HOST_TLS_ID_SPDK;
			else
				return seterr(err, len, "--tls-identity '%s': expected 0, 1 or spdk",
					      optarg);
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'V':
			o->version = true;
			return 0;
		case ':':
			return seterr(err, len, "option %s needs an argument", argv[optind - 1]);
		default:
			return seterr(err, len, "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return seterr(err, len, "unexpected argument '%s'", argv[optind]);
	if (!trid_str)
		return seterr(err, len, "-r TRID is required");
	if (o->discover && io_only[0])
		return seterr(err, len, "%s is for I/O runs, not discover (discover takes -r, "
					"--digest, --json, --timeout and the DH-HMAC-CHAP and TLS "
					"options)", io_only);
	/* the default: auto, or bound with --threads (auto moves and tunes
	 * one thread per queue) */
	if (o->exec_default && o->threads)
		o->exec = PERF_EXEC_BOUND;
	if (auto_knob && o->exec != PERF_EXEC_AUTO)
		return seterr(err, len, "--auto-starve-ms, --auto-bound, --auto-no-poll, "
					"--auto-freeze and --auto-home need --exec auto%s",
			      o->exec_default ? " (the default is bound with --threads)" : "");
	if (o->threads && o->exec == PERF_EXEC_AUTO)
		return seterr(err, len, "--threads does not combine with --exec auto (its monitor "
					"moves and tunes one thread per queue); use --exec bound or "
					"unbound");
	if (o->tls != (o->tls_psk[0] != '\0'))
		return seterr(err, len, o->tls ? "--tls needs --psk" : "--psk needs --tls");
	if (o->dhchap_ctrl_secret[0] && !o->dhchap_secret[0])
		return seterr(err, len, "--dhchap-ctrl-secret needs --dhchap-secret "
					"(bidirectional authentication includes the host's)");
	if (o->reauth_ms && !o->dhchap_secret[0])
		return seterr(err, len, "--reauth-interval needs --dhchap-secret");
	if (o->reauth_ms && o->discover)
		return seterr(err, len, "--reauth-interval is for I/O runs, not discover");
	if (o->discover && nr_trid > 1)
		return seterr(err, len, "discover takes one -r");
	port_given = strstr(trid_str, "trsvcid") != NULL;
	if (nvmfd_host_trid_parse(trid_str, &o->trid, err, len))
		return -EINVAL;
	o->trids[0] = o->trid;
	o->nr_trids = nr_trid;
	for (uint32_t i = 1; i < nr_trid; i++) {
		char e[256];

		if (nvmfd_host_trid_parse(trid_strs[i], &o->trids[i], e, sizeof(e)))
			return seterr(err, len, "-r #%u: %s", i + 1, e);
		if (!o->trids[i].subnqn[0] || !strcmp(o->trids[i].subnqn, NVMFD_DISC_NQN))
			return seterr(err, len, "-r #%u: subnqn of an NVM subsystem is required for I/O",
				      i + 1);
	}
	if (o->discover && !port_given)
		snprintf(o->trid.trsvcid, sizeof(o->trid.trsvcid), "%u", NVMFD_TCP_DISC_PORT);
	if (o->discover && !o->trid.subnqn[0])
		snprintf(o->trid.subnqn, sizeof(o->trid.subnqn), "%s", NVMFD_DISC_NQN);
	if (!o->discover && (!o->trid.subnqn[0] || !strcmp(o->trid.subnqn, NVMFD_DISC_NQN)))
		return seterr(err, len, "-r: subnqn of an NVM subsystem is required for I/O");
	if (o->verify_state && (o->discover || nr_trid > 1))
		return seterr(err, len, "--verify-state takes one -r (one controller's namespace "
					"per state file)");
	if (!o->discover && o->verify && !perf_pattern_writes(o->pattern, o->read_pct))
		return seterr(err, len,
			      "--verify needs writes in the same run (-w rw|randrw%s); "
			      "nvmf-perf cannot verify data written by an earlier run",
			      o->pattern == PERF_RW || o->pattern == PERF_RANDRW ?
				      " with -M below 100" : "");
	if (!o->discover && mix_given && o->pattern != PERF_RW && o->pattern != PERF_RANDRW)
		return seterr(err, len, "-M applies to -w rw and randrw only, not -w %s",
			      perf_pattern_name(o->pattern));
	/* write/randwrite (and -M 0) never read, so nothing would be checked */
	if (!o->discover && o->verify &&
	    (o->pattern == PERF_WRITE || o->pattern == PERF_RANDWRITE ||
	     ((o->pattern == PERF_RW || o->pattern == PERF_RANDRW) && o->read_pct == 0)))
		return seterr(err, len,
			      "--verify checks blocks by reading them back in the same run: use -w "
			      "rw or randrw with -M 1..99 (-w %s%s never reads)",
			      perf_pattern_name(o->pattern),
			      o->pattern == PERF_RW || o->pattern == PERF_RANDRW ? " -M 0" : "");
	/* they shape unbound placement only (exec_setup()): say so rather
	 * than run as if they applied, as nvmfd does for its own */
	if (affinity_given && o->exec != PERF_EXEC_UNBOUND)
		fprintf(stderr, "nvmf-perf: warning: --affinity-scope/--affinity-strict apply to "
				"--exec unbound only; ignored with --exec %s\n",
			o->exec == PERF_EXEC_AUTO ? "auto" : "bound");
	o->have_trid = true;
	return 0;
}
