// SPDX-License-Identifier: MIT
/*
 * nvmfd - the NVMe-over-TCP target daemon: option parsing, configuration
 * assembly, and the control loop (signals, periodic stats, control socket).
 * All target logic lives in src/target; all config logic in src/cfg.
 *
 * Exit status: 0 clean shutdown (or --help/--version/--print-config),
 * 1 runtime failure (e.g. address in use), 2 bad flag or bad configuration
 * (exactly one message on stderr naming the flag or key; nothing listens).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cfg/cfg.h"
#include "rpc.h"
#include "internal/auth.h"
#include "internal/log.h"
#include "internal/target.h"

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "unknown"
#endif

#define EXIT_USAGE 2
#define LOG_COMP "nvmfd"

static const char *const default_args[] = {
	"--listen",    "127.0.0.1:4420", "--subsystem",	     "nqn.2026-11.io.nvmfd:demo",
	"--namespace", "ram:256M",	 "--allow-any-host",
};

static const char usage_text[] =
"Usage: nvmfd [OPTION]...\n"
"A user-space NVMe-over-TCP target. Exports RAM, null, file and block-device\n"
"namespaces to NVMe/TCP hosts (e.g. Linux 'nvme connect -t tcp').\n"
"\n"
"With no configuration options (-c, -l, -s, -n, --allow-host, --allow-any-host,\n"
"--serial, --model) nvmfd starts its embedded default:\n"
"  --listen 127.0.0.1:4420 --subsystem nqn.2026-11.io.nvmfd:demo\n"
"  --namespace ram:256M --allow-any-host\n"
"\n"
"Configuration:\n"
"  -c, --config FILE        load an nvmetcli saved config (JSON, as written by\n"
"                           'nvmetcli saveconfig' or --print-config); may be\n"
"                           repeated; applied before every other option\n"
"  -l, --listen ADDR[:PORT] listen on a numeric address: A.B.C.D:PORT or\n"
"                           [IPV6]:PORT; PORT defaults to 4420, 0 picks a free\n"
"                           port; repeatable (one port id per listener)\n"
"  -s, --subsystem NQN      add a subsystem (NQN starts with \"nqn.\", at most\n"
"                           223 bytes); the following --namespace, --allow-host,\n"
"                           --allow-any-host, --serial and --model apply to it;\n"
"                           repeatable\n"
"  -n, --namespace SPEC     add a namespace to the latest subsystem; repeatable.\n"
"                           SPEC is one of\n"
"                             ram:SIZE       anonymous memory, lost at exit\n"
"                             null:SIZE      reads return zeroes, writes dropped\n"
"                             file:PATH      regular file (must exist unless\n"
"                                            size= is given)\n"
"                             bdev:PATH      block device (O_DIRECT)\n"
"                           followed by options ',name=value':\n"
"                             size=SIZE      file: create/extend to SIZE\n"
"                             direct         file: open with O_DIRECT\n"
"                             readonly       file, bdev: export read-only;\n"
"                                            read-only exporters may share a\n"
"                                            path, otherwise a second nvmfd\n"
"                                            exporting it is refused (flock,\n"
"                                            O_EXCL for block devices)\n"
"                             bs=512|4096    logical block size (not bdev)\n"
"                             nsid=N         namespace id 1..1024 (default:\n"
"                                            next free in the subsystem)\n"
"                             uuid=UUID, nguid=UUID   identifiers\n"
"                           SIZE takes binary K, M, G, T suffixes (256M = 256 MiB)\n"
"      --allow-host NQN     allow host NQN to connect to the latest subsystem;\n"
"                           repeatable (default: no host allowed)\n"
"      --allow-any-host     allow every host to connect to the latest subsystem\n"
"      --dhchap-key HOSTNQN=KEY[,ctrl=KEY][,hash=H][,dhgroup=G]\n"
"                           allow HOSTNQN on the latest subsystem and require\n"
"                           DH-HMAC-CHAP: every queue must authenticate with the\n"
"                           host secret KEY; with ctrl=KEY the controller proves\n"
"                           itself too when the host asks (bidirectional). KEY is\n"
"                           a DHHC-1:hh:<base64>: secret or @FILE (its first line;\n"
"                           the file must have no group/other permissions).\n"
"                           Prefer @FILE: other users can read a command line\n"
"                           (nvmfd overwrites an inline KEY in its argv once\n"
"                           parsed, but not before). H: sha256, sha384 or sha512;\n"
"                           G: null, ffdhe2048 ... ffdhe8192 (default: any the\n"
"                           host offers). A subsystem with --allow-any-host does\n"
"                           not authenticate (as nvmet)\n"
"      --tls[=required|not-required]\n"
"                           NVMe/TCP over TLS 1.3 with PSKs (TP 8011) on the\n"
"                           latest --listen port: \"required\" (default) refuses\n"
"                           plain connections, \"not-required\" takes both\n"
"                           (nvmet's addr_treq; tsas tls1.3). See doc/tls.md\n"
"      --psk [HOSTNQN=]KEY[,v0=spdk]\n"
"                           TLS PSK of HOSTNQN, or without HOSTNQN of every host\n"
"                           that has none of its own. KEY: NVMeTLSkey-1:hh:<b64>:\n"
"                           or @FILE (mode 0600 or stricter; prefer it, other\n"
"                           users can read a command line). v0=spdk: identities\n"
"                           NVMe0R0h are keyed as SPDK does (doc/tls.md).\n"
"                           Repeatable; does not allow a host by itself\n"
"      --tls-handshake-timeout MS\n"
"                           close a connection whose TLS handshake has not\n"
"                           finished MS ms after accept (default 10000, 0: never)\n"
"      --serial SN          serial number of the latest subsystem (<= 20 ASCII;\n"
"                           default: 16 hex digits derived from the NQN)\n"
"      --model MODEL        model number of the latest subsystem (<= 40 ASCII;\n"
"                           default \"nvmfd\")\n"
"      --inline-data-size BYTES  in-capsule data accepted on I/O queues, every\n"
"                           port (default 16384)\n"
"      --max-queue-size N   queue entries (MQES + 1), every port, 16..1024\n"
"                           (default 128)\n"
"      --max-io-size BYTES  largest I/O (MDTS), a power of two, 4096..32M\n"
"                           (65536 blocks of 512 bytes: NLB is 16 bits)\n"
"                           (default 1M)\n"
"      --maxh2cdata BYTES   largest H2CData PDU the host may send, >= 4096\n"
"                           (default 128K)\n"
"      --print-config       print the effective configuration as nvmetcli JSON on\n"
"                           stdout and exit 0 (nothing is started). Secrets read\n"
"                           from files print as \"@FILE\"; inline secrets print as\n"
"                           \"<redacted>\" unless stdout is a regular file without\n"
"                           group/other permissions\n"
"\n"
"Execution (which thread runs a queue's I/O work, and how):\n"
"      --exec bound|unbound|auto\n"
"                           one worker pool per CPU, workers pinned (bound, as\n"
"                           the Linux drivers), one pool per affinity-scope unit\n"
"                           (unbound), or auto (default): start bound and let a\n"
"                           per-queue controller move a queue whose I/O work is\n"
"                           starved (queued, not run, for --auto-starve-ms) or\n"
"                           whose CPU is contended to another CPU or an unbound\n"
"                           pool, and back when its CPU is quiet; and idle-poll\n"
"                           a queue while its commands come in short gaps at low\n"
"                           depth on an uncontended CPU. Without --exec (and no\n"
"                           exec mode in -c) the default is auto, or bound with\n"
"                           --wq-per-ctrl or --net uring, which auto does not\n"
"                           combine with; --cq-pool shared is then kept for\n"
"                           every queue (as --auto-no-cq)\n"
"      --auto-starve-ms N   auto: rescue bound, 1..60000 (default 50)\n"
"      --auto-bound         auto: never move a queue (starvations are counted)\n"
"      --auto-no-poll       auto: never idle-poll (a given --idle-poll-us is then\n"
"                           the fixed period, as in the other modes)\n"
"      --auto-no-budget     auto: never tighten the rx/tx byte budgets of a\n"
"                           queue that makes its worker's other queues wait\n"
"      --auto-no-cq         auto: every queue's completions come from where\n"
"                           --cq-pool says (auto otherwise picks the CPU's\n"
"                           shared ring for a new queue when several queues\n"
"                           share the CPU and take many completion events)\n"
"      --auto-no-follow     auto: keep a queue's home on its io_cpu (auto\n"
"                           otherwise moves the home to the CPU the queue's\n"
"                           packets arrive on, SO_INCOMING_CPU, as Linux nvmet\n"
"                           does, when that CPU is no more contended)\n"
"      --auto-freeze        auto: decide nothing (counters only)\n"
"      --affinity-scope cpu|smt|cache|numa|system\n"
"                           unit of an unbound pool (default cache)\n"
"      --affinity-strict    unbound workers never leave their unit's CPUs\n"
"      --max-active N       in-flight work items per pool (default 512)\n"
"      --wq-per-ctrl        a dedicated pool per controller\n"
"      --idle-poll-us N     keep polling an idle queue for N us before sleeping\n"
"                           (default 0: event driven; under auto the\n"
"                           controller polls a latency-bound queue, and a\n"
"                           given N fixes the period and turns that off)\n"
"      --backend-poll       poll backend completion rings instead of waiting for\n"
"                           their eventfd\n"
"      --cq-pool per-queue|shared\n"
"                           one completion ring per queue (default) or one per\n"
"                           CPU shared by its queues (--exec auto picks per new\n"
"                           queue; under the default auto a given shared is\n"
"                           kept)\n"
"      --net epoll|uring    how queues use their sockets: epoll readiness with\n"
"                           recv/sendmsg (default), or a per-queue io_uring\n"
"                           (receive and send as SQEs; Linux >= 6.0 for\n"
"                           multishot receive, plain TCP only: refused with TLS\n"
"                           and with --exec auto; without --exec it runs bound)\n"
"      --uring-recv auto|multishot|single\n"
"                           --net uring receive: multishot into a provided\n"
"                           buffer ring where the kernel has it, else single\n"
"                           recv SQEs (auto, default); or force one of them\n"
"      --uring-ring queue|worker\n"
"                           --net uring: one io_uring per queue, its eventfd\n"
"                           watched by the worker's epoll (queue, default); or\n"
"                           one ring per bound worker for all its queues'\n"
"                           sockets and file/block backend I/O (but for\n"
"                           --cq-pool shared), the worker sleeping in\n"
"                           io_uring_enter (worker; bound pools only: refused\n"
"                           with --exec unbound and --wq-per-ctrl)\n"
"      --rx-budget BYTES    bytes received per io_work pass (default 0: no limit)\n"
"      --tx-budget BYTES    bytes sent per io_work pass (default 0: no limit)\n"
"      --rx-budget-pdus N   PDUs received per io_work pass (default 8)\n"
"      --tx-budget-pdus N   PDUs sent per io_work pass (default 8)\n"
"      --io-work-deadline-us N\n"
"                           requeue an io_work pass after N us, 0..10000000\n"
"                           (default 1000; 0 also means 1000)\n"
"      --io-cpu rr|least-loaded|incoming-cpu\n"
"                           how a queue's CPU is chosen (default rr)\n"
"      --cpus LIST          CPUs the runtime may use, e.g. 0-3,6 (default: all)\n"
"\n"
"Operation:\n"
"      --log-level err|warn|info|debug\n"
"                           messages to stderr up to this level (default info)\n"
"      --stats-interval S   print the target statistics as one JSON object on\n"
"                           stderr every S seconds (default 0: never)\n"
"      --stop-flush         at stop, fsync every file or block namespace that\n"
"                           holds writes no Flush covered, and exit only then\n"
"                           (as long as the device needs; default: leave them\n"
"                           to the kernel's writeback and exit at once); a\n"
"                           namespace removed or deleted with its subsystem\n"
"                           is fsynced too, on a thread of its own\n"
"      --control PATH       serve a UNIX stream socket at PATH (up to 16\n"
"                           clients at once): JSON-RPC 2.0, one request per\n"
"                           line, SPDK's method names (nvmf_get_subsystems,\n"
"                           nvmf_subsystem_add_ns, save_config, ...; see\n"
"                           nvmfctl(8) and doc/rpc.md). The older one-line\n"
"                           requests still work, one per connection:\n"
"                             {\"cmd\":\"stats\"}   the statistics JSON\n"
"                             {\"cmd\":\"config\"}  the effective config JSON\n"
"                           other requests get {\"error\":\"...\"}\n"
"  -V, --version            print the version and exit\n"
"  -h, --help               print this help and exit\n"
"\n"
"Signals: SIGINT or SIGTERM stop accepting, complete or fail in-flight\n"
"commands, close the backends and exit 0 (with --stop-flush after an fsync\n"
"of every namespace holding unflushed writes). SIGUSR1 writes one statistics\n"
"line (the --stats-interval JSON) to stderr. SIGHUP reloads the -c file\n"
"(when it is the only source of subsystems and listeners) and applies what\n"
"can change live: subsystems created or deleted, the subsystems each listener\n"
"exports, allowed hosts, allow_any_host, namespaces added or removed; other\n"
"differences (new or removed listeners, port or subsystem attributes, the\n"
"file's top-level nvmfd settings such as exec) are logged and need a restart.\n"
"\n"
"Exit status: 0 success, 1 runtime failure (e.g. address in use),\n"
"2 bad option or configuration (nothing is listening).\n"
"\n"
"Examples:\n"
"  nvmfd\n"
"      the embedded default (127.0.0.1:4420, one 256 MiB RAM namespace)\n"
"  nvmfd -l 0.0.0.0:4420 -s nqn.2026-11.io.example:disk1 \\\n"
"        -n file:/var/lib/nvmfd/disk1.img,size=10G --allow-host nqn.2014-08.org.nvmexpress:uuid:HOST\n"
"  nvmfd -l [::1]:4420 -s nqn.2026-11.io.example:fast -n null:1T --allow-any-host \\\n"
"        --exec unbound --affinity-scope numa --stats-interval 10\n"
"  nvmfd -c /etc/nvmet/config.json --control /run/nvmfd.sock\n"
"  nvmfd -l 127.0.0.1:4420 -s nqn.2026-11.io.example:x -n ram:1G --print-config > cfg.json\n"
"\n"
"Host side: nvme discover -t tcp -a 127.0.0.1 -s 4420\n"
"           nvme connect -t tcp -a 127.0.0.1 -s 4420 -n nqn.2026-11.io.nvmfd:demo\n";

enum {
	OPT_ALLOW_HOST = 256,
	OPT_ALLOW_ANY_HOST,
	OPT_DHCHAP_KEY,
	OPT_TLS,
	OPT_PSK,
	OPT_TLS_HS_TIMEOUT,
	OPT_PRINT_CONFIG,
	OPT_SERIAL,
	OPT_MODEL,
	OPT_INLINE_DATA_SIZE,
	OPT_MAX_QUEUE_SIZE,
	OPT_MAX_IO_SIZE,
	OPT_MAXH2CDATA,
	OPT_LOG_LEVEL,
	OPT_STATS_INTERVAL,
	OPT_STOP_FLUSH,
	OPT_CONTROL,
	OPT_EXEC,
	OPT_AUTO_STARVE_MS,
	OPT_AUTO_BOUND,
	OPT_AUTO_FREEZE,
	OPT_AUTO_NO_POLL,
	OPT_AUTO_NO_BUDGET,
	OPT_AUTO_NO_CQ,
	OPT_AUTO_NO_FOLLOW,
	OPT_AFFINITY_SCOPE,
	OPT_AFFINITY_STRICT,
	OPT_MAX_ACTIVE,
	OPT_WQ_PER_CTRL,
	OPT_IDLE_POLL_US,
	OPT_BACKEND_POLL,
	OPT_CQ_POOL,
	OPT_NET,
	OPT_URING_RECV,
	OPT_URING_RING,
	OPT_RX_BUDGET,
	OPT_TX_BUDGET,
	OPT_RX_BUDGET_PDUS,
	OPT_TX_BUDGET_PDUS,
	OPT_IO_WORK_DEADLINE_US,
	OPT_IO_CPU,
	OPT_CPUS,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "listen", required_argument, NULL, 'l' },
	{ "subsystem", required_argument, NULL, 's' },
	{ "namespace", required_argument, NULL, 'n' },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "allow-any-host", no_argument, NULL, OPT_ALLOW_ANY_HOST },
	{ "dhchap-key", required_argument, NULL, OPT_DHCHAP_KEY },
	{ "tls", optional_argument, NULL, OPT_TLS },
	{ "psk", required_argument, NULL, OPT_PSK },
	{ "tls-handshake-timeout", required_argument, NULL, OPT_TLS_HS_TIMEOUT },
	{ "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "inline-data-size", required_argument, NULL, OPT_INLINE_DATA_SIZE },
	{ "max-queue-size", required_argument, NULL, OPT_MAX_QUEUE_SIZE },
	{ "max-io-size", required_argument, NULL, OPT_MAX_IO_SIZE },
	{ "maxh2cdata", required_argument, NULL, OPT_MAXH2CDATA },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ "stop-flush", no_argument, NULL, OPT_STOP_FLUSH },
	{ "control", required_argument, NULL, OPT_CONTROL },
	{ "exec", required_argument, NULL, OPT_EXEC },
	{ "auto-starve-ms", required_argument, NULL, OPT_AUTO_STARVE_MS },
	{ "auto-bound", no_argument, NULL, OPT_AUTO_BOUND },
	{ "auto-freeze", no_argument, NULL, OPT_AUTO_FREEZE },
	{ "auto-no-poll", no_argument, NULL, OPT_AUTO_NO_POLL },
	{ "auto-no-budget", no_argument, NULL, OPT_AUTO_NO_BUDGET },
	{ "auto-no-cq", no_argument, NULL, OPT_AUTO_NO_CQ },
	{ "auto-no-follow", no_argument, NULL, OPT_AUTO_NO_FOLLOW },
	{ "affinity-scope", required_argument, NULL, OPT_AFFINITY_SCOPE },
	{ "affinity-strict", no_argument, NULL, OPT_AFFINITY_STRICT },
	{ "max-active", required_argument, NULL, OPT_MAX_ACTIVE },
	{ "wq-per-ctrl", no_argument, NULL, OPT_WQ_PER_CTRL },
	{ "idle-poll-us", required_argument, NULL, OPT_IDLE_POLL_US },
	{ "backend-poll", no_argument, NULL, OPT_BACKEND_POLL },
	{ "cq-pool", required_argument, NULL, OPT_CQ_POOL },
	{ "net", required_argument, NULL, OPT_NET },
	{ "uring-recv", required_argument, NULL, OPT_URING_RECV },
	{ "uring-ring", required_argument, NULL, OPT_URING_RING },
	{ "rx-budget", required_argument, NULL, OPT_RX_BUDGET },
	{ "tx-budget", required_argument, NULL, OPT_TX_BUDGET },
	{ "rx-budget-pdus", required_argument, NULL, OPT_RX_BUDGET_PDUS },
	{ "tx-budget-pdus", required_argument, NULL, OPT_TX_BUDGET_PDUS },
	{ "io-work-deadline-us", required_argument, NULL, OPT_IO_WORK_DEADLINE_US },
	{ "io-cpu", required_argument, NULL, OPT_IO_CPU },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char short_opts[] = ":c:l:s:n:Vh";

/* The config is large (MiBs): static, not on the stack. */
static struct nvmfd_cfg g_cfg;
static char g_config_path[4096];
static unsigned int g_nr_config_files;
static struct nvmfd_cfg g_file_cfg; /* the first -c file's own config */
/* the command line added or changed subsystems/ports beyond the -c file:
 * then the file does not describe the running config and SIGHUP cannot
 * reload it */
static bool g_cli_objects;

struct cli {
	bool print_config;
	bool used_defaults;
	/* port-wide flags, applied to every port after parsing (0 = not given) */
	uint32_t inline_data_size;
	bool has_inline_data_size;
	uint32_t max_queue_size;
	unsigned int first_cli_port; /* ports/subsystems before these came from -c */
	unsigned int first_cli_subsys;
	bool affinity_given; /* --affinity-scope or --affinity-strict on the command line */
};

static void usage_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Exactly one line on stderr, exit 2. */
static void usage_die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "nvmfd: %s (see nvmfd --help)\n", msg);
	exit(EXIT_USAGE);
}

/* The flag as the user typed it, for messages: "--listen" or "-l". */
static const char *flag_str(int c, char *buf, size_t len)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == c) {
			snprintf(buf, len, "--%s", o->name);
			return buf;
		}
	snprintf(buf, len, "-%c", c);
	return buf;
}

static uint32_t flag_u32(int c, const char *val, uint64_t min, uint64_t max)
{
	char f[40];
	uint64_t v;

	if (nvmfd_cfg_parse_u64(val, &v))
		usage_die("%s '%s': not a number", flag_str(c, f, sizeof(f)), val);
	if (v < min || v > max)
		usage_die("%s '%s': out of range %" PRIu64 "..%" PRIu64, flag_str(c, f, sizeof(f)),
			  val, min, max);
	return (uint32_t)v;
}

static uint32_t flag_bytes(int c, const char *val, uint64_t min, uint64_t max)
{
	char f[40];
	uint64_t v;

	if (nvmfd_cfg_parse_size(val, &v))
		usage_die("%s '%s': not a size (e.g. 4096, 128K, 1M)", flag_str(c, f, sizeof(f)),
			  val);
	if (v < min || v > max)
		usage_die("%s '%s': out of range %" PRIu64 "..%" PRIu64, flag_str(c, f, sizeof(f)),
			  val, min, max);
	return (uint32_t)v;
}

static struct nvmfd_cfg_subsys *latest_subsys(struct nvmfd_cfg *cfg, int c)
{
	char f[40];

	if (!cfg->nr_subsys)
		usage_die("%s: needs a preceding --subsystem NQN", flag_str(c, f, sizeof(f)));
	g_cli_objects = true;
	return &cfg->subsys[cfg->nr_subsys - 1];
}

static uint16_t next_portid(const struct nvmfd_cfg *cfg)
{
	unsigned int max = 0;

	for (unsigned int i = 0; i < cfg->nr_ports; i++)
		if (cfg->ports[i].portid > max)
			max = cfg->ports[i].portid;
	return (uint16_t)(max + 1);
}

static void add_listen(struct nvmfd_cfg *cfg, const char *val)
{
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_port *p;

	if (cfg->nr_ports >= NVMFD_CFG_MAX_PORTS)
		usage_die("--listen '%s': more than %d listeners", val, NVMFD_CFG_MAX_PORTS);
	p = &cfg->ports[cfg->nr_ports];
	g_cli_objects = true;
	nvmfd_cfg_port_init(p, next_portid(cfg));
	if (nvmfd_cfg_parse_listen(p, val, err))
		usage_die("--listen: %s", err);
	cfg->nr_ports++;
}

static void add_subsys(struct nvmfd_cfg *cfg, const char *val)
{
	char err[NVMFD_CFG_ERRLEN];

	if (cfg->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
		usage_die("--subsystem '%s': more than %d subsystems", val, NVMFD_CFG_MAX_SUBSYS);
	if (nvmfd_cfg_subsys_init(&cfg->subsys[cfg->nr_subsys], val, err))
		usage_die("--subsystem: %s", err);
	cfg->nr_subsys++;
}

static void add_namespace(struct nvmfd_cfg *cfg, const char *val)
{
	struct nvmfd_cfg_subsys *s = latest_subsys(cfg, 'n');
	char err[NVMFD_CFG_ERRLEN];
	struct nvmfd_cfg_ns *ns;
	uint32_t max = 0;

	if (s->nr_ns >= NVMFD_CFG_MAX_NS)
		usage_die("--namespace '%s': more than %d namespaces in '%s'", val,
			  NVMFD_CFG_MAX_NS, s->nqn);
	ns = &s->ns[s->nr_ns];
	if (nvmfd_cfg_parse_namespace(ns, val, err))
		usage_die("--namespace: %s", err);
	if (!ns->nsid) {
		for (unsigned int i = 0; i < s->nr_ns; i++)
			if (s->ns[i].nsid > max)
				max = s->ns[i].nsid;
		ns->nsid = max + 1;
	}
	s->nr_ns++;
}

static void add_allowed_host(struct nvmfd_cfg *cfg, const char *val)
{
	struct nvmfd_cfg_subsys *s = latest_subsys(cfg, OPT_ALLOW_HOST);

	if (strncmp(val, "nqn.", 4) || strlen(val) > 223)
		usage_die("--allow-host '%s': not an NQN (\"nqn.\" prefix, <= 223 bytes)", val);
	if (s->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
		usage_die("--allow-host '%s': more than %d hosts in '%s'", val,
			  NVMFD_CFG_MAX_HOSTS, s->nqn);
	snprintf(s->hosts[s->nr_hosts++], sizeof(s->hosts[0]), "%s", val);
	/* nvmetcli's allowed_hosts link to "hosts" entries: keep them known */
	for (unsigned int i = 0; i < cfg->nr_hosts; i++)
		if (!strcmp(cfg->hosts[i], val))
			return;
	if (cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
		usage_die("--allow-host '%s': more than %d hosts", val, NVMFD_CFG_MAX_HOSTS);
	snprintf(cfg->hosts[cfg->nr_hosts++], sizeof(cfg->hosts[0]), "%s", val);
}

/* --dhchap-key HOSTNQN=KEY[,...]: allow the host on the latest subsystem
 * and give it its DH-HMAC-CHAP settings. */
static void add_dhchap_key(struct nvmfd_cfg *cfg, const char *val)
{
	struct nvmfd_cfg_subsys *s = latest_subsys(cfg, OPT_DHCHAP_KEY);
	char err[NVMFD_CFG_ERRLEN], nqn[256];
	struct nvmfd_cfg_dhchap d;
	bool allowed = false;
	int h;

	if (nvmfd_cfg_parse_dhchap(val, nqn, &d, err))
		usage_die("%s", err);
	for (unsigned int i = 0; i < s->nr_hosts; i++)
		allowed |= !strcmp(s->hosts[i], nqn);
	if (!allowed)
		add_allowed_host(cfg, nqn);
	h = nvmfd_cfg_host_find(cfg, nqn);
	if (h < 0) {
		if (cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
			usage_die("--dhchap-key %s: more than %d hosts", nqn, NVMFD_CFG_MAX_HOSTS);
		h = (int)cfg->nr_hosts;
		snprintf(cfg->hosts[cfg->nr_hosts++], sizeof(cfg->hosts[0]), "%s", nqn);
	}
	if (cfg->host_dhchap[h].key[0] && memcmp(&cfg->host_dhchap[h], &d, sizeof(d)))
		usage_die("--dhchap-key %s: the host already has other DH-HMAC-CHAP settings "
			  "(keys are per host, shared by its subsystems)",
			  nqn);
	cfg->host_dhchap[h] = d;
	nvmfd_auth_wipe(&d, sizeof(d));
}

/* --tls[=required|not-required]: TLS on the latest port. */
static void set_port_tls(struct nvmfd_cfg *cfg, const char *val)
{
	struct nvmfd_cfg_port *p;
	int t = NVMFD_TREQ_SECURE_REQUIRED;

	if (!cfg->nr_ports)
		usage_die("--tls: no port yet (give --listen first)");
	if (val) {
		t = nvmfd_cfg_parse_treq(val);
		if (t != NVMFD_TREQ_SECURE_REQUIRED && t != NVMFD_TREQ_SECURE_NOT_REQUIRED)
			usage_die("--tls=%s: expected required or not-required", val);
	}
	p = &cfg->ports[cfg->nr_ports - 1];
	p->tls = true;
	p->treq = (uint8_t)t;
}

/* --psk [HOSTNQN=]KEY: a host's TLS PSK (the host is defined, not allowed)
 * or the global one. */
static void add_psk(struct nvmfd_cfg *cfg, const char *val)
{
	char err[NVMFD_CFG_ERRLEN], nqn[256];
	struct nvmfd_cfg_psk k;
	struct nvmfd_cfg_psk *dst = &cfg->psk;
	int h;

	if (nvmfd_cfg_parse_psk(val, nqn, &k, err))
		usage_die("%s", err);
	if (nqn[0]) {
		h = nvmfd_cfg_host_find(cfg, nqn);
		if (h < 0) {
			if (cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
				usage_die("--psk %s: more than %d hosts", nqn, NVMFD_CFG_MAX_HOSTS);
			h = (int)cfg->nr_hosts;
			snprintf(cfg->hosts[cfg->nr_hosts++], sizeof(cfg->hosts[0]), "%s", nqn);
		}
		dst = &cfg->host_psk[h];
	}
	*dst = k;
	nvmfd_auth_wipe(&k, sizeof(k));
}

/* Overwrite an inline --psk KEY in argv (as hide_dhchap_secrets()). */
static void hide_psk_secret(char *val)
{
	char *v = val, *end;

	if (!strncmp(val, "nqn.", 4) && strchr(val, '='))
		v = strchr(val, '=') + 1;
	if (v[0] == '@')
		return;
	end = strchr(v, ',');
	memset(v, '*', end ? (size_t)(end - v) : strlen(v));
}

/* Overwrite the inline secrets of a --dhchap-key value in place (argv), so
 * that /proc/PID/cmdline shows them only during startup; @FILE names stay.
 * The length is unchanged, so getopt's view of argv stays valid. */
static void hide_dhchap_secrets(char *val)
{
	char *p = strchr(val, '=');
	bool first = true;

	while (p) {
		char *v = p + 1, *end = strchr(v, ',');
		size_t n = end ? (size_t)(end - v) : strlen(v);

		if ((first || !strncmp(p - 4, "ctrl", 4)) && v[0] != '@')
			memset(v, '*', n);
		first = false;
		p = end ? strchr(end, '=') : NULL;
	}
}

/* --print-config: inline secrets only into a file nobody else may read. */
static int print_config(const struct nvmfd_cfg *cfg)
{
	struct stat st;
	bool secrets = fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
		       !(st.st_mode & 077);

	if (!secrets && nvmfd_cfg_has_inline_secrets(cfg))
		fprintf(stderr, "nvmfd: --print-config: secrets (DH-HMAC-CHAP, TLS PSK) are redacted: "
				"stdout is not a regular file without group/other permissions "
				"(secrets read from @FILE are printed as @FILE)\n");
	return nvmfd_cfg_write_json_ex(cfg, stdout, secrets);
}

static bool is_config_opt(int c)
{
	switch (c) {
	case 'c':
	case 'l':
	case 's':
	case 'n':
	case OPT_ALLOW_HOST:
	case OPT_ALLOW_ANY_HOST:
	case OPT_DHCHAP_KEY:
	case OPT_TLS:
	case OPT_PSK:
	case OPT_SERIAL:
	case OPT_MODEL:
		return true;
	default:
		return false;
	}
}

static void bad_getopt(int c, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

	if (c == ':') {
		if (optopt && optopt < 256 && arg[0] == '-' && arg[1] != '-')
			usage_die("option '-%c' requires an argument", optopt);
		usage_die("option '%s' requires an argument", arg);
	}
	if (optopt && optopt < 256 && !(arg[0] == '-' && arg[1] == '-'))
		usage_die("unknown option '-%c'", optopt);
	usage_die("unknown or ambiguous option '%s'", arg);
}

/*
 * Pass 1: -h, -V, --log-level, -c (configs are merged before the other
 * options so that flags override file settings). Returns whether any
 * option that defines ports/subsystems was seen.
 */
static bool parse_pass1(struct nvmfd_cfg *cfg, int argc, char **argv)
{
	char err[NVMFD_CFG_ERRLEN];
	bool config_opts = false;
	int c, lvl;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			bad_getopt(c, argc, argv);
		config_opts |= is_config_opt(c);
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			printf("nvmfd %s\n", NVMFD_VERSION);
			exit(0);
		case OPT_LOG_LEVEL:
			lvl = nvmfd_log_parse_level(optarg);
			if (lvl < 0)
				usage_die("--log-level '%s': expected err, warn, info or debug",
					  optarg);
			nvmfd_log_set_level((enum nvmfd_log_level)lvl);
			break;
		case 'c':
			if (nvmfd_cfg_load_json(cfg, optarg, err))
				usage_die("--config %s: %s", optarg, err);
			/* the first file's own config (-c comes before every other
			 * option, so @cfg is the defaults plus that file), kept as
			 * read: SIGHUP reloads compare with it (nvmfd_rpc_create()) */
			if (!g_nr_config_files)
				memcpy(&g_file_cfg, cfg, sizeof(g_file_cfg));
			/* save_config's default file: the one -c FILE */
			if (!g_nr_config_files++)
				snprintf(g_config_path, sizeof(g_config_path), "%s", optarg);
			break;
		default:
			break;
		}
	}
	if (optind < argc)
		usage_die("unexpected argument '%s'", argv[optind]);
	return config_opts;
}

static void parse_pass2(struct nvmfd_cfg *cfg, struct cli *cli, int argc, char **argv)
{
	struct nvmfd_cfg_exec *ex = &cfg->exec;
	char err[NVMFD_CFG_ERRLEN];
	int c, v;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			add_listen(cfg, optarg);
			break;
		case 's':
			add_subsys(cfg, optarg);
			break;
		case 'n':
			add_namespace(cfg, optarg);
			break;
		case OPT_ALLOW_HOST:
			add_allowed_host(cfg, optarg);
			break;
		case OPT_ALLOW_ANY_HOST:
			latest_subsys(cfg, c)->allow_any_host = true;
			break;
		case OPT_DHCHAP_KEY:
			add_dhchap_key(cfg, optarg);
			hide_dhchap_secrets(optarg);
			break;
		case OPT_TLS:
			set_port_tls(cfg, optarg);
			break;
		case OPT_PSK:
			add_psk(cfg, optarg);
			hide_psk_secret(optarg);
			break;
		case OPT_TLS_HS_TIMEOUT:
			cfg->tls_handshake_timeout_ms = flag_u32(c, optarg, 0, 3600000);
			break;
		case OPT_SERIAL:
			if (!optarg[0] || strlen(optarg) > 20)
				usage_die("--serial '%s': must be 1..20 characters", optarg);
			snprintf(latest_subsys(cfg, c)->serial, 21, "%s", optarg);
			break;
		case OPT_MODEL:
			if (!optarg[0] || strlen(optarg) > 40)
				usage_die("--model '%s': must be 1..40 characters", optarg);
			snprintf(latest_subsys(cfg, c)->model, 41, "%s", optarg);
			break;
		case OPT_PRINT_CONFIG:
			cli->print_config = true;
			break;
		case OPT_INLINE_DATA_SIZE:
			cli->inline_data_size = flag_bytes(c, optarg, 0, 1u << 30);
			cli->has_inline_data_size = true;
			break;
		case OPT_MAX_QUEUE_SIZE:
			cli->max_queue_size = flag_u32(c, optarg, 16, 1024);
			break;
		case OPT_MAX_IO_SIZE:
			cfg->max_io_size = flag_bytes(c, optarg, 4096, NVMFD_CFG_MAX_IO_SIZE_MAX);
			if (cfg->max_io_size & (cfg->max_io_size - 1))
				usage_die("--max-io-size '%s': not a power of two", optarg);
			break;
		case OPT_MAXH2CDATA:
			cfg->maxh2cdata = flag_bytes(c, optarg, 4096, 1u << 30);
			if (cfg->maxh2cdata & 3)
				usage_die("--maxh2cdata '%s': not a multiple of 4", optarg);
			break;
		case OPT_STATS_INTERVAL:
			cfg->stats_interval_s = flag_u32(c, optarg, 0, 86400);
			break;
		case OPT_STOP_FLUSH:
			cfg->stop_flush = true;
			break;
		case OPT_CONTROL:
			if (!optarg[0] || strlen(optarg) >= sizeof(cfg->control_path))
				usage_die("--control '%s': path must be 1..%zu bytes", optarg,
					  sizeof(cfg->control_path) - 1);
			snprintf(cfg->control_path, sizeof(cfg->control_path), "%s", optarg);
			break;
		case OPT_EXEC:
			v = nvmfd_cfg_parse_exec_mode(optarg);
			if (v < 0)
				usage_die("--exec '%s': expected bound, unbound or auto", optarg);
			ex->exec_auto = v == NVMFD_CFG_EXEC_AUTO;
			ex->rt.mode = ex->exec_auto ? NVMFD_RT_BOUND : (enum nvmfd_rt_mode)v;
			ex->exec_mode_set = true;
			break;
		case OPT_AUTO_STARVE_MS:
			ex->auto_starve_ms = flag_u32(c, optarg, 1, 60000);
			break;
		case OPT_AUTO_BOUND:
			ex->auto_bound = true;
			break;
		case OPT_AUTO_FREEZE:
			ex->auto_freeze = true;
			break;
		case OPT_AUTO_NO_POLL:
			ex->auto_no_poll = true;
			break;
		case OPT_AUTO_NO_BUDGET:
			ex->auto_no_budget = true;
			break;
		case OPT_AUTO_NO_CQ:
			ex->auto_no_cq = true;
			break;
		case OPT_AUTO_NO_FOLLOW:
			ex->auto_no_follow = true;
			break;
		case OPT_AFFINITY_SCOPE:
			v = nvmfd_cfg_parse_scope(optarg);
			if (v < 0)
				usage_die("--affinity-scope '%s': expected cpu, smt, cache, numa or system",
					  optarg);
			ex->rt.scope = (enum nvmfd_rt_scope)v;
			cli->affinity_given = true;
			break;
		case OPT_AFFINITY_STRICT:
			ex->rt.strict = true;
			cli->affinity_given = true;
			break;
		case OPT_MAX_ACTIVE:
			ex->rt.max_active = flag_u32(c, optarg, 1, 1u << 20);
			break;
		case OPT_WQ_PER_CTRL:
			ex->wq_per_ctrl = true;
			break;
		case OPT_IDLE_POLL_US:
			ex->idle_poll_us = flag_u32(c, optarg, 0, 10000000);
			break;
		case OPT_BACKEND_POLL:
			ex->backend_poll = true;
			break;
		case OPT_CQ_POOL:
			if (!strcmp(optarg, "shared"))
				ex->cq_pool_shared = true;
			else if (!strcmp(optarg, "per-queue"))
				ex->cq_pool_shared = false;
			else
				usage_die("--cq-pool '%s': expected per-queue or shared", optarg);
			break;
		case OPT_NET:
			if (!strcmp(optarg, "epoll"))
				ex->net = NVMFD_CFG_NET_EPOLL;
			else if (!strcmp(optarg, "uring"))
				ex->net = NVMFD_CFG_NET_URING;
			else
				usage_die("--net '%s': expected epoll or uring", optarg);
			break;
		case OPT_URING_RECV:
			if (!strcmp(optarg, "auto"))
				ex->uring_recv = NVMFD_CFG_URING_RECV_AUTO;
			else if (!strcmp(optarg, "multishot"))
				ex->uring_recv = NVMFD_CFG_URING_RECV_MULTISHOT;
			else if (!strcmp(optarg, "single"))
				ex->uring_recv = NVMFD_CFG_URING_RECV_SINGLE;
			else
				usage_die("--uring-recv '%s': expected auto, multishot or single",
					  optarg);
			break;
		case OPT_URING_RING:
			if (!strcmp(optarg, "queue"))
				ex->uring_ring = NVMFD_CFG_URING_RING_QUEUE;
			else if (!strcmp(optarg, "worker"))
				ex->uring_ring = NVMFD_CFG_URING_RING_WORKER;
			else
				usage_die("--uring-ring '%s': expected queue or worker", optarg);
			break;
		case OPT_RX_BUDGET:
			ex->rx_budget_bytes = flag_bytes(c, optarg, 0, UINT32_MAX);
			break;
		case OPT_TX_BUDGET:
			ex->tx_budget_bytes = flag_bytes(c, optarg, 0, UINT32_MAX);
			break;
		case OPT_RX_BUDGET_PDUS:
			ex->rx_budget_pdus = flag_u32(c, optarg, 1, UINT32_MAX);
			break;
		case OPT_TX_BUDGET_PDUS:
			ex->tx_budget_pdus = flag_u32(c, optarg, 1, UINT32_MAX);
			break;
		case OPT_IO_WORK_DEADLINE_US:
			ex->io_work_deadline_us = flag_u32(c, optarg, 0, 10000000);
			break;
		case OPT_IO_CPU:
			v = nvmfd_cfg_parse_place(optarg);
			if (v < 0)
				usage_die("--io-cpu '%s': expected rr, least-loaded or incoming-cpu",
					  optarg);
			ex->place = (enum nvmfd_rt_place)v;
			break;
		case OPT_CPUS:
			if (nvmfd_cfg_parse_cpus(&ex->rt.cpus, optarg, err))
				usage_die("--cpus: %s", err);
			if (!CPU_COUNT(&ex->rt.cpus))
				usage_die("--cpus '%s': empty CPU list", optarg);
			break;
		default: /* handled in pass 1 */
			break;
		}
	}
	/* port-wide flags hold for every port, wherever they appear */
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		if (cli->has_inline_data_size)
			cfg->ports[i].inline_data_size = cli->inline_data_size;
		if (cli->max_queue_size)
			cfg->ports[i].max_queue_size = cli->max_queue_size;
	}
}

/*
 * Export the subsystems given on the command line on the listeners given on
 * the command line. With only one side on the command line, it is linked
 * with every port / subsystem of the config file.
 */
static void link_cli_objects(struct nvmfd_cfg *cfg, const struct cli *cli)
{
	unsigned int p0 = cli->first_cli_port, s0 = cli->first_cli_subsys;

	if (p0 == cfg->nr_ports && s0 == cfg->nr_subsys)
		return;
	if (p0 == cfg->nr_ports)
		p0 = 0;
	if (s0 == cfg->nr_subsys)
		s0 = 0;
	for (unsigned int p = p0; p < cfg->nr_ports; p++) {
		struct nvmfd_cfg_port *port = &cfg->ports[p];

		for (unsigned int s = s0; s < cfg->nr_subsys; s++) {
			bool linked = false;

			for (unsigned int k = 0; k < port->nr_subsys; k++)
				linked |= port->subsys_idx[k] == s;
			if (!linked && port->nr_subsys < NVMFD_CFG_MAX_SUBSYS)
				port->subsys_idx[port->nr_subsys++] = s;
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Control socket                                                         */

static int ctl_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, ret;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* a stale socket from a previous run is replaced; a live one is not */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		ret = -EEXIST;
		goto out_close;
	}
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (probe >= 0) {
			if (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
				close(probe);
				ret = -EADDRINUSE;
				goto out_close;
			}
			close(probe);
		}
		unlink(path);
	}
	/* a burst of clients waits in the backlog for a slot (nvmfd serves 16
	 * at once); a short backlog made non-blocking connects fail EAGAIN */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0) {
		ret = -errno;
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Run                                                                    */

static void log_listeners(const struct nvmfd_cfg *cfg, struct nvmfd_tgt *tgt)
{
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		const struct nvmfd_cfg_port *p = &cfg->ports[i];
		char subs[512] = "";
		size_t off = 0;

		for (unsigned int k = 0; k < p->nr_subsys && off < sizeof(subs); k++)
			off += (size_t)snprintf(subs + off, sizeof(subs) - off, "%s%s",
						k ? " " : "", cfg->subsys[p->subsys_idx[k]].nqn);
		NVMFD_INFO(LOG_COMP, p->adrfam == NVMFD_ADRFAM_IPV6 ?
					     "listening on [%s]:%u (port %u; subsystems: %s)" :
					     "listening on %s:%u (port %u; subsystems: %s)",
			   p->traddr, nvmfd_tgt_listen_port(tgt, i), p->portid,
			   subs[0] ? subs : "none, discovery only");
	}
}

/*
 * The open-file limit: each connection holds about NOFILE_PER_CONN fds
 * (its socket, and with per-queue completion rings an io_uring fd and its
 * eventfd; measured with nvmf-perf -P 8: 27 fds for 9 queues), and the
 * default soft limit (1024 on Debian) runs out at ~330 connections, after
 * which accept fails with EMFILE. Raise the soft limit to the hard one and
 * say what it allows; warn when that is short of the scale nvmfd is tested
 * at (NOFILE_SCALE_CONNS: 1024 controllers x (admin + 4 I/O queues)).
 */
#define NOFILE_PER_CONN 3u
#define NOFILE_RESERVE 32u
#define NOFILE_SCALE_CONNS 5120u

static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t was, conns;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		NVMFD_WARN(LOG_COMP, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return;
	}
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			NVMFD_WARN(LOG_COMP, "cannot raise the open-file limit from %llu to %llu: %s",
				   (unsigned long long)was, (unsigned long long)rl.rlim_max,
				   strerror(errno));
			rl.rlim_cur = was;
		}
	}
	conns = rl.rlim_cur > NOFILE_RESERVE ? (rl.rlim_cur - NOFILE_RESERVE) / NOFILE_PER_CONN : 0;
	if (rl.rlim_cur == RLIM_INFINITY)
		NVMFD_INFO(LOG_COMP, "open-file limit: unlimited");
	else if (rl.rlim_cur != was)
		NVMFD_INFO(LOG_COMP, "open-file limit raised from %llu to the hard limit %llu: "
				     "about %llu connections",
			   (unsigned long long)was, (unsigned long long)rl.rlim_cur,
			   (unsigned long long)conns);
	else
		NVMFD_INFO(LOG_COMP, "open-file limit %llu (the hard limit): about %llu connections",
			   (unsigned long long)rl.rlim_cur, (unsigned long long)conns);
	if (rl.rlim_cur != RLIM_INFINITY && conns < NOFILE_SCALE_CONNS)
		NVMFD_WARN(LOG_COMP, "the open-file limit %llu allows about %llu connections (%u fds "
				     "each); accept fails beyond that; 1024 controllers with 4 I/O "
				     "queues need %u fds: raise the hard limit (ulimit -Hn, systemd "
				     "LimitNOFILE=)",
			   (unsigned long long)rl.rlim_cur, (unsigned long long)conns,
			   NOFILE_PER_CONN, NOFILE_SCALE_CONNS * NOFILE_PER_CONN + NOFILE_RESERVE);
}

static int run(struct nvmfd_cfg *cfg)
{
	struct nvmfd_tgt *tgt = NULL;
	struct nvmfd_rpc *rpc = NULL;
	int sfd = -1, tfd = -1, cfd = -1, nfds;
	struct pollfd pfd[2 + NVMFD_RPC_POLLFDS];
	sigset_t mask;
	int ret, status = 1;

	/* block before any thread exists so that only signalfd sees them */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	ret = pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (ret) {
		NVMFD_ERR(LOG_COMP, "pthread_sigmask: %s", strerror(ret));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		NVMFD_ERR(LOG_COMP, "signalfd: %s", strerror(errno));
		return 1;
	}
	if (cfg->control_path[0]) {
		cfd = ctl_listen(cfg->control_path);
		if (cfd < 0) {
			/* a bad --control is a usage error: nothing listens yet */
			if (cfd == -EEXIST)
				fprintf(stderr, "nvmfd: --control %s: %s exists and is not a socket\n",
					cfg->control_path, cfg->control_path);
			else
				fprintf(stderr, "nvmfd: --control %s: %s\n", cfg->control_path,
					strerror(-cfd));
			status = EXIT_USAGE;
			goto out_close_sfd;
		}
	}
	if (cfg->stats_interval_s) {
		struct itimerspec its = {
			.it_interval.tv_sec = cfg->stats_interval_s,
			.it_value.tv_sec = cfg->stats_interval_s,
		};

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0) {
			NVMFD_ERR(LOG_COMP, "timerfd: %s", strerror(errno));
			goto out_close_ctl;
		}
	}

	raise_nofile(); /* after the usage errors: those print one line */
	ret = nvmfd_tgt_create(cfg, &tgt);
	if (ret) {
		NVMFD_ERR(LOG_COMP, "cannot create the target: %s", strerror(-ret));
		goto out_close_timer;
	}
	ret = nvmfd_tgt_start(tgt);
	if (ret) {
		NVMFD_ERR(LOG_COMP, "cannot start the target: %s", strerror(-ret));
		goto out_destroy;
	}
	log_listeners(cfg, tgt);
	/* once it runs (a start that fails says only why) */
	NVMFD_INFO(LOG_COMP, "exec mode %s%s", nvmfd_cfg_exec_mode_name(&cfg->exec),
		   !cfg->exec.exec_mode_default ? "" :
		   cfg->exec.exec_auto ? " (the default; --exec bound for the Linux drivers' model)" :
					 " (the default with --wq-per-ctrl or --net uring)");
	/* also without --control: SIGHUP reloads through it */
	ret = nvmfd_rpc_create(cfd, tgt, cfg, g_nr_config_files == 1 ? g_config_path : NULL,
			       g_nr_config_files == 1 ? &g_file_cfg : NULL, &rpc);
	nvmfd_auth_wipe(&g_file_cfg, sizeof(g_file_cfg)); /* copied or not needed */
	if (ret) {
		NVMFD_ERR(LOG_COMP, "control: %s", strerror(-ret));
		goto out_stop;
	}
	if (cfd >= 0)
		NVMFD_INFO(LOG_COMP, "control socket at %s", cfg->control_path);

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		nfds = 2 + (cfd >= 0 ? nvmfd_rpc_pollfds(rpc, &pfd[2]) : 0);
		if (poll(pfd, (nfds_t)nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			NVMFD_ERR(LOG_COMP, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si)) {
				/* nothing read: poll again */
			} else if (si.ssi_signo == SIGUSR1) {
				/* one stats line on stderr, as --stats-interval */
				NVMFD_INFO(LOG_COMP, "SIGUSR1 received: statistics follow");
				if (nvmfd_tgt_stats_json(tgt, stderr) == 0)
					fputc('\n', stderr);
				fflush(stderr);
			} else if (si.ssi_signo == SIGHUP) {
				if (g_nr_config_files == 1 && !g_cli_objects) {
					NVMFD_INFO(LOG_COMP, "SIGHUP received: reloading %s",
						   g_config_path);
					nvmfd_rpc_reload(rpc, g_config_path);
				} else {
					NVMFD_WARN(LOG_COMP, "SIGHUP received: not reloading: nvmfd "
						   "was not started from exactly one -c FILE without "
						   "-l/-s/-n/host flags; configuration unchanged");
				}
			} else {
				NVMFD_INFO(LOG_COMP, "%s received, stopping",
					   si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
				status = 0;
				break;
			}
		}
		if (pfd[1].revents) {
			uint64_t ticks;

			if (read(tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks)) {
				if (nvmfd_tgt_stats_json(tgt, stderr) == 0)
					fputc('\n', stderr);
				fflush(stderr);
			}
		}
		if (cfd >= 0)
			nvmfd_rpc_handle(rpc, &pfd[2], nfds - 2);
	}
out_stop:
	nvmfd_rpc_destroy(&rpc);
	nvmfd_tgt_stop(tgt);
out_destroy:
	nvmfd_tgt_destroy(&tgt);
out_close_timer:
	if (tfd >= 0)
		close(tfd);
out_close_ctl:
	if (cfd >= 0) {
		close(cfd);
		unlink(cfg->control_path);
	}
out_close_sfd:
	close(sfd);
	if (!status)
		NVMFD_INFO(LOG_COMP, "stopped");
	return status;
}

/* MemAvailable from /proc/meminfo in bytes; 0 if unknown. */
static uint64_t mem_available(void)
{
	unsigned long long kib = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib << 10;
}

/* What the config asks of this machine: RAM for ram namespaces, CPUs. */
static void check_machine(const struct nvmfd_cfg *cfg)
{
	char err[NVMFD_CFG_ERRLEN];
	struct sysinfo si;
	cpu_set_t usable;
	bool warn;

	if (sysinfo(&si) == 0) {
		uint64_t total = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);

		if (nvmfd_cfg_check_ram(cfg, total, mem_available(), err, &warn))
			usage_die("invalid configuration: %s", err);
		if (warn)
			NVMFD_WARN(LOG_COMP, "%s", err);
	}
	if (sched_getaffinity(0, sizeof(usable), &usable) == 0 &&
	    nvmfd_cfg_check_cpus(cfg, &usable, err))
		usage_die("invalid configuration: %s", err);
}

/*
 * A subsystem that allows any host does not authenticate (as nvmet), so a
 * DH-HMAC-CHAP key of a host it lists is never asked for there: say so
 * once per such host and subsystem rather than leave the key silently
 * unused.
 */
static void warn_unused_dhchap(const struct nvmfd_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->nr_subsys; i++) {
		const struct nvmfd_cfg_subsys *s = &cfg->subsys[i];

		if (!s->allow_any_host)
			continue;
		for (unsigned int j = 0; j < s->nr_hosts; j++) {
			int h = nvmfd_cfg_host_find(cfg, s->hosts[j]);

			if (h >= 0 && cfg->host_dhchap[h].key[0])
				NVMFD_WARN(LOG_COMP, "subsystem %s allows any host, so it does not "
						     "authenticate: host %s's DH-HMAC-CHAP key is not "
						     "used there (drop allow_any_host to require it)",
					   s->nqn, s->hosts[j]);
		}
	}
}

/*
 * --affinity-scope and --affinity-strict shape unbound pools only: a bound
 * pool runs on its io_cpu and auto's escape pool always spans every CPU
 * (src/target/target.c). Given with another mode they would do nothing, so
 * say so rather than start as if they applied.
 */
static void warn_unused_affinity(const struct nvmfd_cfg *cfg, const struct cli *cli)
{
	const struct nvmfd_cfg_exec *ex = &cfg->exec;

	if (cli->affinity_given && (ex->exec_auto || ex->rt.mode != NVMFD_RT_UNBOUND))
		NVMFD_WARN(LOG_COMP, "--affinity-scope/--affinity-strict apply to --exec unbound "
				     "only; ignored with exec mode %s%s",
			   nvmfd_cfg_exec_mode_name(ex),
			   ex->exec_mode_default ? " (the default; give --exec unbound)" : "");
}

int main(int argc, char **argv)
{
	struct nvmfd_cfg *cfg = &g_cfg;
	char err[NVMFD_CFG_ERRLEN];
	struct cli cli = { 0 };
	char **dargv = NULL;
	int dargc = 0;
	int status;

	nvmfd_log_set_ident("nvmfd");
	nvmfd_cfg_init_defaults(cfg);

	if (!parse_pass1(cfg, argc, argv)) {
		/* no ports/subsystems given: the embedded default, then the flags */
		dargv = calloc((size_t)argc + 1 + sizeof(default_args) / sizeof(default_args[0]),
			       sizeof(*dargv));
		if (!dargv) {
			fprintf(stderr, "nvmfd: out of memory\n");
			return 1;
		}
		dargv[dargc++] = argv[0];
		for (size_t i = 0; i < sizeof(default_args) / sizeof(default_args[0]); i++)
			dargv[dargc++] = (char *)default_args[i];
		for (int i = 1; i < argc; i++)
			dargv[dargc++] = argv[i];
		dargv[dargc] = NULL;
		argc = dargc;
		argv = dargv;
		cli.used_defaults = true;
	}
	cli.first_cli_port = cfg->nr_ports;
	cli.first_cli_subsys = cfg->nr_subsys;
	parse_pass2(cfg, &cli, argc, argv);
	link_cli_objects(cfg, &cli);

	nvmfd_cfg_exec_resolve(cfg); /* no --exec, no exec.mode: auto */
	if (nvmfd_cfg_validate(cfg, err))
		usage_die("invalid configuration: %s", err);
	if (cli.print_config) {
		int ret = print_config(cfg);

		free(dargv);
		if (ret) {
			fprintf(stderr, "nvmfd: --print-config: %s\n", strerror(-ret));
			return 1;
		}
		return 0;
	}
	/* what this machine can give (not for --print-config: nothing runs) */
	check_machine(cfg);
	warn_unused_dhchap(cfg);
	warn_unused_affinity(cfg, &cli);
	if (cli.used_defaults)
		NVMFD_INFO(LOG_COMP, "no configuration given: starting the embedded default "
				     "--listen 127.0.0.1:4420 --subsystem nqn.2026-11.io.nvmfd:demo "
				     "--namespace ram:256M --allow-any-host");
	status = run(cfg);
	free(dargv);
	return status;
}
