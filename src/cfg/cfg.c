// SPDX-License-Identifier: MIT
/*
 * cfg.c - the target configuration: defaults, command-line value parsers,
 * nvmetcli saved-config JSON (load and save), and cross-validation.
 *
 * JSON shape: the one nvmetcli's "saveconfig" writes (doc/protocol-notes.md §3.4):
 * top-level "hosts", "ports", "subsystems". nvmetcli writes most attribute
 * values as strings ("16384", "1"); both strings and JSON numbers are
 * accepted. nvmfd-only settings live under a top-level "nvmfd" object,
 * which nvmetcli's restore ignores, and under a few extra "device" keys
 * ("size", "direct", "block_size") that are written only when they differ
 * from what the path alone implies.
 *
 * Every error message names the key path or flag and the offending value.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cfg/cfg.h"
#include "cfg/cfg_int.h"
#include "internal/auth.h"
#include "internal/cpulist.h"
#include "internal/log.h"
#include "nvmfd/spec.h"

/* NVMe Base 2.0 §4.5: an NQN is at most 223 bytes of UTF-8. */
#define CFG_NQN_MAX 223
/* nvmet: NVMET_MIN_QUEUE_SIZE / NVMET_MAX_QUEUE_SIZE. */
#define CFG_QUEUE_SIZE_MIN 16
#define CFG_QUEUE_SIZE_MAX 1024
#define CFG_NSID_MAX 1024
/* NVMe-oF: cntlid 0xfff0..0xffff are reserved (0xffff = dynamic). */
#define CFG_CNTLID_MAX 0xffef
/* nvmet caps attr_qid_max at 128 (NVMET_NR_QUEUES). */
#define CFG_QID_MAX 128
/* A saved config larger than this is certainly not a config. */
#define CFG_JSON_MAX_BYTES (16u << 20)

/* nvmfd__cfg_err() - format @fmt into @err (NVMFD_CFG_ERRLEN bytes, may be
 * NULL); Return: -EINVAL. Shared with dhchap.c through cfg_int.h. */
int nvmfd__cfg_err(char *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err, NVMFD_CFG_ERRLEN, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Copy @src into @dst (size @dsz, zero-filled tail); false if it does not fit. */
static bool cfg_strcpy(char *dst, size_t dsz, const char *src)
{
	size_t n = strlen(src);

	if (n >= dsz)
		return false;
	memset(dst, 0, dsz);
	memcpy(dst, src, n);
	return true;
}

/* ---------------------------------------------------------------------- */
/* Defaults                                                               */

static void cfg_exec_defaults(struct nvmfd_cfg_exec *ex)
{
	memset(ex, 0, sizeof(*ex));
	nvmfd_rt_opts_init(&ex->rt); /* the runtime's own defaults */
	ex->exec_auto = false;
	ex->auto_starve_ms = 50;
	ex->wq_per_ctrl = false;
	ex->idle_poll_us = 0;
	ex->backend_poll = false;
	ex->cq_pool_shared = false;
	ex->net = NVMFD_CFG_NET_EPOLL;
	ex->uring_recv = NVMFD_CFG_URING_RECV_AUTO;
	ex->uring_ring = NVMFD_CFG_URING_RING_QUEUE;
	ex->place = NVMFD_RT_PLACE_RR;
	ex->rx_budget_bytes = 0;
	ex->tx_budget_bytes = 0;
	/* nvmet-tcp NVMET_TCP_RECV_BUDGET / NVMET_TCP_SEND_BUDGET. */
	ex->rx_budget_pdus = 8;
	ex->tx_budget_pdus = 8;
	/* nvmet-tcp NVMET_TCP_IO_WORK_BUDGET period: 1 ms. */
	ex->io_work_deadline_us = 1000;
}

/**
 * nvmfd_cfg_init_defaults() - zero @cfg and set every default.
 * @cfg: config to fill (no ports, subsystems, referrals or hosts).
 *
 * Exec defaults follow the Linux drivers (bound, cache scope, max_active 512,
 * rr, event driven, per-queue rings, 8/8 PDU budgets, 1000 us deadline);
 * kato_grace_ms 1000, max_io_size 1 MiB, maxh2cdata 128 KiB, icreq_timeout_ms,
 * connect_timeout_ms and auth_timeout_ms 10000, auth_fail_burst 8 per
 * auth_fail_interval_ms 1000.
 * Context: any thread.
 */
void nvmfd_cfg_init_defaults(struct nvmfd_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg_exec_defaults(&cfg->exec);
	/*
	 * nvmet arms the keep-alive timer for kato and checks it in whole
	 * seconds; a 1 s grace keeps a host that sends exactly at kato alive.
	 */
	cfg->kato_grace_ms = NVMFD_CFG_DEF_KATO_GRACE_MS;
	cfg->max_io_size = NVMFD_CFG_DEF_MAX_IO_SIZE;
	cfg->maxh2cdata = NVMFD_CFG_DEF_MAXH2CDATA;
	cfg->icreq_timeout_ms = NVMFD_CFG_DEF_ICREQ_TIMEOUT_MS;
	cfg->connect_timeout_ms = NVMFD_CFG_DEF_CONNECT_TIMEOUT_MS;
	cfg->tls_handshake_timeout_ms = NVMFD_CFG_DEF_TLS_HANDSHAKE_TIMEOUT_MS;
	cfg->auth_timeout_ms = NVMFD_CFG_DEF_AUTH_TIMEOUT_MS;
	cfg->auth_fail_burst = NVMFD_CFG_DEF_AUTH_FAIL_BURST;
	cfg->auth_fail_interval_ms = NVMFD_CFG_DEF_AUTH_FAIL_INTERVAL_MS;
	cfg->stats_interval_s = 0;
	cfg->control_path[0] = '\0';
}

/**
 * nvmfd_cfg_port_init() - zero @port, set its defaults; see cfg.h.
 * @port:   port to fill.
 * @portid: its port id.
 * Context: any thread.
 */
void nvmfd_cfg_port_init(struct nvmfd_cfg_port *port, uint16_t portid)
{
	memset(port, 0, sizeof(*port));
	port->portid = portid;
	port->adrfam = NVMFD_ADRFAM_IPV4;
	cfg_strcpy(port->traddr, sizeof(port->traddr), "0.0.0.0");
	cfg_strcpy(port->trsvcid, sizeof(port->trsvcid), "4420");
	port->inline_data_size = NVMFD_CFG_DEF_INLINE_DATA_SIZE;
	port->max_queue_size = NVMFD_CFG_DEF_MAX_QUEUE_SIZE;
}

/**
 * nvmfd_cfg_serial_from_nqn() - default serial: FNV-1a 64 of @nqn in hex.
 * @nqn:    subsystem NQN (borrowed).
 * @serial: out: 16 hex digits and a NUL.
 * Context: any thread.
 */
void nvmfd_cfg_serial_from_nqn(const char *nqn, char serial[21])
{
	/* FNV-1a 64: stable across runs and hosts, so a host sees the same SN. */
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)nqn; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	snprintf(serial, 21, "%016" PRIx64, h);
}

/**
 * nvmfd_cfg_subsys_init() - zero @s and set its defaults for @nqn.
 * @s:   subsystem to fill.
 * @nqn: NQN (borrowed, copied).
 * @err: message on failure.
 * Return: 0, or -EINVAL if @nqn is longer than 255 bytes.
 * Context: any thread.
 */
int nvmfd_cfg_subsys_init(struct nvmfd_cfg_subsys *s, const char *nqn, char err[NVMFD_CFG_ERRLEN])
{
	memset(s, 0, sizeof(*s));
	if (strlen(nqn) > CFG_NQN_MAX || !cfg_strcpy(s->nqn, sizeof(s->nqn), nqn))
		return cfg_err(err, "subsystem NQN '%.40s...' is longer than %d bytes", nqn,
			       CFG_NQN_MAX);
	s->allow_any_host = false;
	nvmfd_cfg_serial_from_nqn(nqn, s->serial);
	cfg_strcpy(s->model, sizeof(s->model), "nvmfd");
	s->version = NVMFD_VS_1_4; /* what the I/O controller implements (TBKAS) */
	s->cntlid_min = 1;
	s->cntlid_max = CFG_CNTLID_MAX;
	s->qid_max = CFG_QID_MAX;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Value parsers                                                          */

/**
 * nvmfd_cfg_parse_u64() - decimal digits only (no sign, no suffix).
 * @s:   text.
 * @out: out: value.
 * Return: 0, or -EINVAL (empty, non-digit, overflow).
 * Context: any thread.
 */
int nvmfd_cfg_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/**
 * nvmfd_cfg_parse_size() - bytes with an optional binary K/M/G/T suffix.
 * @s:   text, e.g. "4096", "256M", "16KiB".
 * @out: out: bytes.
 * Return: 0, or -EINVAL (syntax, overflow).
 * Context: any thread.
 */
int nvmfd_cfg_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		/* accept "K", "KB", "KiB" (all binary) */
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
		if (*end)
			return -EINVAL;
		if (v > (UINT64_MAX >> shift))
			return -EINVAL;
		v <<= shift;
	}
	*out = v;
	return 0;
}

/* "1 TiB", "23.4 GiB", "512 B": for messages only. */
static void cfg_format_human(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = (double)v;
	unsigned int u = 0;

	while (d >= 1024.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		d /= 1024.0;
		u++;
	}
	if (!u || d == (double)(uint64_t)d)
		snprintf(buf, len, "%" PRIu64 " %s", (uint64_t)d, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", d, unit[u]);
}

/* Largest exact binary unit: 268435456 -> "256M". */
static void cfg_format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "TGMK";
	static const unsigned int shifts[] = { 40, 30, 20, 10 };

	for (unsigned int i = 0; i < 4; i++) {
		uint64_t unit = 1ull << shifts[i];

		if (v && v % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v / unit, units[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

/* 32 hex digits with optional dashes (UUID text form). */
static int cfg_parse_id128(const char *s, uint8_t out[16])
{
	unsigned int n = 0;

	for (const char *p = s; *p; p++) {
		int v;

		if (*p == '-')
			continue;
		if (!isxdigit((unsigned char)*p) || n >= 32)
			return -EINVAL;
		v = isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);
		if (n % 2 == 0)
			out[n / 2] = (uint8_t)(v << 4);
		else
			out[n / 2] |= (uint8_t)v;
		n++;
	}
	return n == 32 ? 0 : -EINVAL;
}

static bool cfg_id128_is_zero(const uint8_t id[16])
{
	for (unsigned int i = 0; i < 16; i++)
		if (id[i])
			return false;
	return true;
}

static void cfg_format_id128(const uint8_t id[16], char buf[37])
{
	snprintf(buf, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10],
		 id[11], id[12], id[13], id[14], id[15]);
}

static int cfg_lba_shift_from_bs(uint64_t bs)
{
	if (bs == 512)
		return 9;
	if (bs == 4096)
		return 12;
	return -EINVAL;
}

/*
 * Fill the pseudo path "ram:256M" / "null:1G" (or the real path) and point
 * bk.path at it. The stored path is what write_json() emits.
 */
static void cfg_ns_set_pseudo_path(struct nvmfd_cfg_ns *ns)
{
	char sz[32];

	cfg_format_size(ns->bk.size, sz, sizeof(sz));
	snprintf(ns->path, sizeof(ns->path), "%s:%s",
		 ns->bk.type == NVMFD_BK_RAM ? "ram" : "null", sz);
	ns->bk.path = ns->path;
}

/* The path of a file backend must exist unless a size says to create it. */
static int cfg_check_file(const struct nvmfd_cfg_ns *ns, const char *what, char *err)
{
	struct stat st;

	if (ns->bk.type != NVMFD_BK_FILE && ns->bk.type != NVMFD_BK_BDEV)
		return 0;
	if (stat(ns->path, &st) == 0) {
		if (ns->bk.type == NVMFD_BK_FILE && !S_ISREG(st.st_mode))
			return cfg_err(err, "%s: '%s' is not a regular file", what, ns->path);
		if (ns->bk.type == NVMFD_BK_BDEV && !S_ISBLK(st.st_mode))
			return cfg_err(err, "%s: '%s' is not a block device", what, ns->path);
		/* the backend opens it read-write */
		if (access(ns->path, R_OK | W_OK))
			return cfg_err(err, "%s: '%s': not writable: %s", what, ns->path,
				       strerror(errno));
		return 0;
	}
	if (ns->bk.type == NVMFD_BK_FILE && ns->bk.size && (errno == ENOENT || errno == ENOTDIR)) {
		char dir[sizeof(ns->path)];
		char *slash;

		/* it will be created: its directory must exist and be writable */
		snprintf(dir, sizeof(dir), "%s", ns->path);
		slash = strrchr(dir, '/');
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st))
			return cfg_err(err, "%s: cannot create '%s': directory '%s': %s", what,
				       ns->path, dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cfg_err(err, "%s: cannot create '%s': '%s' is not a directory",
				       what, ns->path, dir);
		if (access(dir, W_OK | X_OK))
			return cfg_err(err, "%s: cannot create '%s': directory '%s': %s", what,
				       ns->path, dir, strerror(errno));
		return 0;
	}
	return cfg_err(err, "%s: '%s': %s%s", what, ns->path, strerror(errno),
		       ns->bk.type == NVMFD_BK_FILE ? " (give a size to create it)" : "");
}

static void cfg_ns_reset(struct nvmfd_cfg_ns *ns)
{
	memset(ns, 0, sizeof(*ns));
	ns->enable = true;
}

/**
 * nvmfd_cfg_parse_namespace() - parse a --namespace SPEC into @ns.
 * @ns:   out: namespace (enable = true, nsid 0 unless "nsid=" is given;
 *        bk.path points into ns->path).
 * @spec: "ram:SIZE", "null:SIZE", "file:PATH" or "bdev:PATH", then options
 *        ",size=SIZE" (file), ",direct" (file), ",readonly" (file, bdev:
 *        shared read-only export), ",bs=512|4096" (not bdev),
 *        ",nsid=N", ",uuid=UUID", ",nguid=UUID".
 * @err:  message naming @spec and the bad part.
 *
 * A file must exist unless size= is given; a bdev path must be a block
 * device. Nothing is created or opened.
 * Return: 0 or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_namespace(struct nvmfd_cfg_ns *ns, const char *spec,
			      char err[NVMFD_CFG_ERRLEN])
{
	char buf[4200];
	char *opts, *tok, *save = NULL, *path;
	const char *colon;
	size_t kind_len;
	int ret;

	cfg_ns_reset(ns);
	colon = strchr(spec, ':');
	if (!colon)
		return cfg_err(err, "namespace '%s': expected file:PATH, bdev:PATH, ram:SIZE or null:SIZE",
			       spec);
	kind_len = (size_t)(colon - spec);
	if (kind_len == 4 && !strncmp(spec, "file", 4)) {
		ns->bk.type = NVMFD_BK_FILE;
	} else if (kind_len == 4 && !strncmp(spec, "bdev", 4)) {
		ns->bk.type = NVMFD_BK_BDEV;
	} else if (kind_len == 3 && !strncmp(spec, "ram", 3)) {
		ns->bk.type = NVMFD_BK_RAM;
	} else if (kind_len == 4 && !strncmp(spec, "null", 4)) {
		ns->bk.type = NVMFD_BK_NULL;
	} else {
		return cfg_err(err, "namespace '%s': unknown backend '%.*s' (file, bdev, ram, null)",
			       spec, (int)kind_len, spec);
	}
	if (strlen(colon + 1) >= sizeof(buf))
		return cfg_err(err, "namespace '%.64s...': too long", spec);
	strcpy(buf, colon + 1);

	/* first field: PATH or SIZE; then ",key[=value]" options */
	opts = strchr(buf, ',');
	if (opts)
		*opts++ = '\0';
	path = buf;
	if (!*path)
		return cfg_err(err, "namespace '%s': missing %s", spec,
			       ns->bk.type == NVMFD_BK_RAM || ns->bk.type == NVMFD_BK_NULL ? "SIZE" :
											     "PATH");
	if (ns->bk.type == NVMFD_BK_RAM || ns->bk.type == NVMFD_BK_NULL) {
		if (nvmfd_cfg_parse_size(path, &ns->bk.size) || !ns->bk.size)
			return cfg_err(err, "namespace '%s': bad size '%s' (e.g. 256M, 1G)", spec,
				       path);
	} else {
		if (!cfg_strcpy(ns->path, sizeof(ns->path), path))
			return cfg_err(err, "namespace '%.64s...': path too long", spec);
		ns->bk.path = ns->path;
	}

	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		uint64_t v;

		if (val)
			*val++ = '\0';
		if (!strcmp(tok, "size") && val && ns->bk.type == NVMFD_BK_FILE) {
			if (nvmfd_cfg_parse_size(val, &ns->bk.size) || !ns->bk.size)
				return cfg_err(err, "namespace '%s': bad size '%s'", spec, val);
		} else if (!strcmp(tok, "direct") && !val && ns->bk.type == NVMFD_BK_FILE) {
			ns->bk.direct = true;
		} else if (!strcmp(tok, "readonly") && !val &&
			   (ns->bk.type == NVMFD_BK_FILE || ns->bk.type == NVMFD_BK_BDEV)) {
			ns->bk.read_only = true;
		} else if (!strcmp(tok, "bs") && val && ns->bk.type != NVMFD_BK_BDEV) {
			if (nvmfd_cfg_parse_size(val, &v) || cfg_lba_shift_from_bs(v) < 0)
				return cfg_err(err, "namespace '%s': bad bs '%s' (512 or 4096)", spec,
					       val);
			ns->bk.lba_shift = (unsigned int)cfg_lba_shift_from_bs(v);
		} else if (!strcmp(tok, "nsid") && val) {
			if (nvmfd_cfg_parse_u64(val, &v) || v < 1 || v > CFG_NSID_MAX)
				return cfg_err(err, "namespace '%s': bad nsid '%s' (1..%d)", spec, val,
					       CFG_NSID_MAX);
			ns->nsid = (uint32_t)v;
		} else if (!strcmp(tok, "uuid") && val) {
			if (cfg_parse_id128(val, ns->uuid))
				return cfg_err(err, "namespace '%s': bad uuid '%s'", spec, val);
			ns->has_uuid = !cfg_id128_is_zero(ns->uuid);
		} else if (!strcmp(tok, "nguid") && val) {
			if (cfg_parse_id128(val, ns->nguid))
				return cfg_err(err, "namespace '%s': bad nguid '%s'", spec, val);
			ns->has_nguid = !cfg_id128_is_zero(ns->nguid);
		} else {
			return cfg_err(err, "namespace '%s': unknown or misplaced option '%s%s%s'",
				       spec, tok, val ? "=" : "", val ? val : "");
		}
	}
	if (ns->bk.type == NVMFD_BK_RAM || ns->bk.type == NVMFD_BK_NULL) {
		cfg_ns_set_pseudo_path(ns);
		return 0;
	}
	if (ns->bk.read_only && ns->bk.size)
		return cfg_err(err, "namespace '%s': readonly cannot create or extend (no size=)",
			       spec);
	{
		char what[NVMFD_CFG_ERRLEN];

		snprintf(what, sizeof(what), "namespace '%.200s'", spec);
		ret = cfg_check_file(ns, what, err);
	}
	return ret;
}

/* Numeric address of family @adrfam (NVMFD_ADRFAM_*)? */
static bool cfg_addr_ok(int adrfam, const char *addr)
{
	unsigned char tmp[sizeof(struct in6_addr)];

	return inet_pton(adrfam == NVMFD_ADRFAM_IPV6 ? AF_INET6 : AF_INET, addr, tmp) == 1;
}

static bool cfg_port_ok(const char *s)
{
	uint64_t v;

	return !nvmfd_cfg_parse_u64(s, &v) && v <= 65535 && strlen(s) <= 5;
}

/**
 * nvmfd_cfg_parse_listen() - parse a --listen value into @port's address.
 * @port: in/out: only adrfam, traddr and trsvcid are set.
 * @spec: "A.B.C.D[:PORT]", "[V6ADDR][:PORT]" or a bare IPv6 address;
 *        numeric only; PORT 0..65535, default 4420.
 * @err:  message naming @spec and the bad part.
 * Return: 0 or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_listen(struct nvmfd_cfg_port *port, const char *spec,
			   char err[NVMFD_CFG_ERRLEN])
{
	char addr[256];
	const char *svc = "4420";
	int fam;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		size_t n;

		if (!close)
			return cfg_err(err, "listen '%s': missing ']' after IPv6 address", spec);
		n = (size_t)(close - spec - 1);
		if (n >= sizeof(addr))
			return cfg_err(err, "listen '%.64s...': address too long", spec);
		memcpy(addr, spec + 1, n);
		addr[n] = '\0';
		if (close[1] == ':')
			svc = close + 2;
		else if (close[1])
			return cfg_err(err, "listen '%s': expected ':PORT' after ']'", spec);
		fam = NVMFD_ADRFAM_IPV6;
	} else {
		const char *c = strchr(spec, ':');

		if (c && strchr(c + 1, ':')) {
			/* bare IPv6 address, no port */
			if (strlen(spec) >= sizeof(addr))
				return cfg_err(err, "listen '%.64s...': address too long", spec);
			strcpy(addr, spec);
			fam = NVMFD_ADRFAM_IPV6;
		} else {
			size_t n = c ? (size_t)(c - spec) : strlen(spec);

			if (n >= sizeof(addr))
				return cfg_err(err, "listen '%.64s...': address too long", spec);
			memcpy(addr, spec, n);
			addr[n] = '\0';
			if (c)
				svc = c + 1;
			fam = NVMFD_ADRFAM_IPV4;
		}
	}
	if (!addr[0])
		return cfg_err(err, "listen '%s': missing address (use 0.0.0.0 or [::] for any)",
			       spec);
	if (!cfg_addr_ok(fam, addr))
		return cfg_err(err, "listen '%s': '%s' is not a numeric %s address", spec, addr,
			       fam == NVMFD_ADRFAM_IPV6 ? "IPv6" : "IPv4");
	if (!cfg_port_ok(svc))
		return cfg_err(err, "listen '%s': bad port '%s' (0..65535)", spec, svc);
	port->adrfam = (uint8_t)fam;
	cfg_strcpy(port->traddr, sizeof(port->traddr), addr);
	cfg_strcpy(port->trsvcid, sizeof(port->trsvcid), svc);
	return 0;
}

/**
 * nvmfd_cfg_parse_cpus() - "0-3,8" into @set ("" = empty).
 * @set: out: CPUs.
 * @s:   list of CPU numbers and ranges.
 * @err: message naming @s.
 * Return: 0 or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_cpus(cpu_set_t *set, const char *s, char err[NVMFD_CFG_ERRLEN])
{
	const char *p = s;

	CPU_ZERO(set);
	if (!*s)
		return 0;
	for (;;) {
		unsigned long a, b;
		int ret = nvmfd__cpulist_item(&p, &a, &b);

		if (ret == -EINVAL)
			return cfg_err(err, "cpus '%s': expected a CPU number at '%s'", s, p);
		if (ret)
			return cfg_err(err, "cpus '%s': bad range end at '%s'", s, p);
		if (a > b || b >= CPU_SETSIZE)
			return cfg_err(err, "cpus '%s': bad range %lu-%lu (max %d)", s, a, b,
				       CPU_SETSIZE - 1);
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, set);
		if (!*p)
			return 0;
		if (*p != ',')
			return cfg_err(err, "cpus '%s': unexpected '%c'", s, *p);
		p++;
	}
}

static const char *const mode_names[] = {
	[NVMFD_RT_BOUND] = "bound",
	[NVMFD_RT_UNBOUND] = "unbound",
	[NVMFD_CFG_EXEC_AUTO] = "auto",
};
static const char *const scope_names[] = {
	[NVMFD_RT_SCOPE_CPU] = "cpu",	  [NVMFD_RT_SCOPE_SMT] = "smt",
	[NVMFD_RT_SCOPE_CACHE] = "cache", [NVMFD_RT_SCOPE_NUMA] = "numa",
	[NVMFD_RT_SCOPE_SYSTEM] = "system",
};
static const char *const net_names[] = {
	[NVMFD_CFG_NET_EPOLL] = "epoll",
	[NVMFD_CFG_NET_URING] = "uring",
};
static const char *const uring_recv_names[] = {
	[NVMFD_CFG_URING_RECV_AUTO] = "auto",
	[NVMFD_CFG_URING_RECV_MULTISHOT] = "multishot",
	[NVMFD_CFG_URING_RECV_SINGLE] = "single",
};
static const char *const uring_ring_names[] = {
	[NVMFD_CFG_URING_RING_QUEUE] = "queue",
	[NVMFD_CFG_URING_RING_WORKER] = "worker",
};
static const char *const place_names[] = {
	[NVMFD_RT_PLACE_RR] = "rr",
	[NVMFD_RT_PLACE_LEAST_LOADED] = "least-loaded",
	[NVMFD_RT_PLACE_INCOMING_CPU] = "incoming-cpu",
};

static int cfg_lookup(const char *const *names, unsigned int n, const char *s)
{
	for (unsigned int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return (int)i;
	return -EINVAL;
}

#define CFG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * nvmfd_cfg_parse_exec_mode() - "bound"/"unbound"/"auto".
 * @s: text.
 * Return: enum nvmfd_rt_mode value, NVMFD_CFG_EXEC_AUTO, or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_exec_mode(const char *s)
{
	return cfg_lookup(mode_names, CFG_ARRAY_SIZE(mode_names), s);
}

/**
 * nvmfd_cfg_exec_mode_name() - the name of the mode @ex runs: "auto",
 * "bound" or "unbound" (the inverse of nvmfd_cfg_parse_exec_mode()).
 * Context: any thread.
 */
const char *nvmfd_cfg_exec_mode_name(const struct nvmfd_cfg_exec *ex)
{
	return mode_names[ex->exec_auto ? NVMFD_CFG_EXEC_AUTO : (int)ex->rt.mode];
}

/**
 * nvmfd_cfg_parse_scope() - "cpu", "smt", "cache", "numa" or "system".
 * @s: text.
 * Return: enum nvmfd_rt_scope value, or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_scope(const char *s)
{
	return cfg_lookup(scope_names, CFG_ARRAY_SIZE(scope_names), s);
}

/**
 * nvmfd_cfg_parse_place() - "rr", "least-loaded" or "incoming-cpu".
 * @s: text.
 * Return: enum nvmfd_rt_place value, or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_parse_place(const char *s)
{
	return cfg_lookup(place_names, CFG_ARRAY_SIZE(place_names), s);
}

/* ---------------------------------------------------------------------- */
/* JSON load                                                              */

/* Key path of the object being parsed, e.g. "subsystems[0].attr". */
struct jpath {
	char s[192];
};

/* A truncated key path is still good enough for a message. */
static void jpath_key(struct jpath *out, const struct jpath *parent, const char *key)
{
	int n;

	if (parent->s[0])
		n = snprintf(out->s, sizeof(out->s), "%s.%s", parent->s, key);
	else
		n = snprintf(out->s, sizeof(out->s), "%s", key);
	if (n >= (int)sizeof(out->s))
		memcpy(out->s + sizeof(out->s) - 4, "...", 4);
}

static void jpath_idx(struct jpath *out, const struct jpath *parent, const char *key,
		      size_t idx)
{
	int n;

	if (parent->s[0])
		n = snprintf(out->s, sizeof(out->s), "%s.%s[%zu]", parent->s, key, idx);
	else
		n = snprintf(out->s, sizeof(out->s), "%s[%zu]", key, idx);
	if (n >= (int)sizeof(out->s))
		memcpy(out->s + sizeof(out->s) - 4, "...", 4);
}

/* Short printable rendering of a JSON value for error messages. */
static const char *jval(json_object *v)
{
	static __thread char buf[64];
	const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);

	snprintf(buf, sizeof(buf), "%s", s ? s : "?");
	if (strlen(s ? s : "") >= sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);
	return buf;
}

static int j_check_obj(json_object *o, const struct jpath *p, const char *const *keys,
		       char *err)
{
	if (!json_object_is_type(o, json_type_object))
		return cfg_err(err, "%s: expected an object, got %s", p->s[0] ? p->s : "(top)",
			       jval(o));
	json_object_object_foreach(o, key, val)
	{
		bool known = false;

		(void)val;
		for (const char *const *k = keys; *k; k++)
			if (!strcmp(*k, key))
				known = true;
		if (!known) {
			if (p->s[0])
				return cfg_err(err, "%s.%s: unknown key", p->s, key);
			return cfg_err(err, "%s: unknown key", key);
		}
	}
	return 0;
}

/*
 * Value of @key, with its path in @kp: 0 and *v when present, 1 when absent
 * or null, -EINVAL (message "PATH: missing") when absent and @required.
 */
static int j_lookup(json_object *o, const char *key, const struct jpath *p, bool required,
		    struct jpath *kp, json_object **v, char *err)
{
	jpath_key(kp, p, key);
	if (json_object_object_get_ex(o, key, v) && !json_object_is_type(*v, json_type_null))
		return 0;
	if (required)
		return cfg_err(err, "%s: missing", kp->s);
	return 1;
}

static int j_array(json_object *o, const char *key, const struct jpath *p, json_object **out,
		   char *err)
{
	json_object *v;
	struct jpath kp;
	int ret;

	*out = NULL;
	ret = j_lookup(o, key, p, false, &kp, &v, err);
	if (ret)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return cfg_err(err, "%s: expected an array, got %s", kp.s, jval(v));
	*out = v;
	return 0;
}

/* Sub-object @key (absent -> *out = NULL, or an error if @required). */
static int j_obj(json_object *o, const char *key, const struct jpath *p, bool required,
		 json_object **out, char *err)
{
	json_object *v;
	struct jpath kp;
	int ret;

	*out = NULL;
	ret = j_lookup(o, key, p, required, &kp, &v, err);
	if (ret)
		return ret < 0 ? ret : 0;
	if (!json_object_is_type(v, json_type_object))
		return cfg_err(err, "%s: expected an object, got %s", kp.s, jval(v));
	*out = v;
	return 0;
}

/* Unsigned number given as a JSON integer or a decimal string. Return 1 if absent. */
static int j_u64(json_object *o, const char *key, const struct jpath *p, bool required,
		 uint64_t min, uint64_t max, uint64_t *out, char *err)
{
	json_object *v;
	struct jpath kp;
	uint64_t x;
	int ret;

	ret = j_lookup(o, key, p, required, &kp, &v, err);
	if (ret)
		return ret;
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i < 0)
			return cfg_err(err, "%s: %s is negative", kp.s, jval(v));
		x = (uint64_t)i;
		if (i == INT64_MAX)
			x = json_object_get_uint64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		if (nvmfd_cfg_parse_u64(json_object_get_string(v), &x))
			return cfg_err(err, "%s: %s is not a number", kp.s, jval(v));
	} else {
		return cfg_err(err, "%s: expected an unsigned integer, got %s", kp.s, jval(v));
	}
	if (x < min || x > max)
		return cfg_err(err, "%s: %" PRIu64 " out of range %" PRIu64 "..%" PRIu64, kp.s, x,
			       min, max);
	*out = x;
	return 0;
}

static int j_u32(json_object *o, const char *key, const struct jpath *p, bool required,
		 uint64_t min, uint64_t max, uint32_t *out, char *err)
{
	uint64_t v;
	int ret = j_u64(o, key, p, required, min, max, &v, err);

	if (ret == 0)
		*out = (uint32_t)v;
	return ret;
}

static int j_u16(json_object *o, const char *key, const struct jpath *p, uint64_t min,
		 uint64_t max, uint16_t *out, char *err)
{
	uint64_t v;
	int ret = j_u64(o, key, p, false, min, max, &v, err);

	if (ret == 0)
		*out = (uint16_t)v;
	return ret;
}

/* Size with optional binary suffix, as a number or string. Return 1 if absent. */
static int j_size(json_object *o, const char *key, const struct jpath *p, uint64_t *out, char *err)
{
	json_object *v;
	struct jpath kp;
	int ret;

	ret = j_lookup(o, key, p, false, &kp, &v, err);
	if (ret)
		return ret;
	if (json_object_is_type(v, json_type_string)) {
		if (nvmfd_cfg_parse_size(json_object_get_string(v), out))
			return cfg_err(err, "%s: bad size %s", kp.s, jval(v));
		return 0;
	}
	return j_u64(o, key, p, false, 0, UINT64_MAX, out, err);
}

/* "0"/"1", 0/1, true/false. Return 1 if absent. */
static int j_bool(json_object *o, const char *key, const struct jpath *p, bool *out, char *err)
{
	json_object *v;
	struct jpath kp;
	const char *s;
	int ret;

	ret = j_lookup(o, key, p, false, &kp, &v, err);
	if (ret)
		return ret;
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i != 0 && i != 1)
			return cfg_err(err, "%s: %s is not 0 or 1", kp.s, jval(v));
		*out = i == 1;
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		if (!strcmp(s, "0") || !strcmp(s, "false")) {
			*out = false;
			return 0;
		}
		if (!strcmp(s, "1") || !strcmp(s, "true")) {
			*out = true;
			return 0;
		}
	}
	return cfg_err(err, "%s: %s is not a boolean (\"0\" or \"1\")", kp.s, jval(v));
}

/* String into @buf of @len bytes. Return 1 if absent. */
static int j_str(json_object *o, const char *key, const struct jpath *p, bool required, char *buf,
		 size_t len, char *err)
{
	json_object *v;
	struct jpath kp;
	int ret;

	ret = j_lookup(o, key, p, required, &kp, &v, err);
	if (ret)
		return ret;
	if (!json_object_is_type(v, json_type_string))
		return cfg_err(err, "%s: expected a string, got %s", kp.s, jval(v));
	if (!cfg_strcpy(buf, len, json_object_get_string(v)))
		return cfg_err(err, "%s: %s is longer than %zu bytes", kp.s, jval(v), len - 1);
	return 0;
}

static int j_enum(json_object *o, const char *key, const struct jpath *p, const char *const *names,
		  unsigned int n, int *out, char *err)
{
	char s[32];
	struct jpath kp;
	int ret = j_str(o, key, p, false, s, sizeof(s), err);

	if (ret)
		return ret;
	ret = cfg_lookup(names, n, s);
	if (ret < 0) {
		jpath_key(&kp, p, key);
		return cfg_err(err, "%s: unknown value '%s'", kp.s, s);
	}
	*out = ret;
	return 0;
}

/*
 * @portid: a referral's addr carries the referred port's ID (nvmet's
 * addr_portid): read into it when present; NULL (a port's addr): refused.
 * @treq/@tls (a port's; NULL for a referral): treq and tsas "tls1.3".
 */
static int load_addr(json_object *o, const struct jpath *p, uint8_t *adrfam, char *traddr,
		     size_t traddr_len, char *trsvcid, size_t trsvcid_len, uint16_t *portid,
		     uint8_t *treq, bool *tls, char *err)
{
	static const char *const keys[] = { "trtype", "adrfam", "traddr", "trsvcid",
					    "treq",	"tsas",	  "portid", NULL };
	struct jpath kp;
	char s[64];
	int ret;

	ret = j_check_obj(o, p, portid ? keys : (const char *const[]){ "trtype", "adrfam",
								  "traddr", "trsvcid",
								  "treq", "tsas", NULL },
			  err);
	if (ret)
		return ret;
	if (portid) {
		uint64_t v;

		ret = j_u64(o, "portid", p, false, 0, 65535, &v, err);
		if (ret < 0)
			return ret;
		if (ret == 0)
			*portid = (uint16_t)v;
	}
	ret = j_str(o, "trtype", p, true, s, sizeof(s), err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	if (strcmp(s, "tcp")) {
		jpath_key(&kp, p, "trtype");
		return cfg_err(err, "%s: '%s' is not supported (only \"tcp\")", kp.s, s);
	}
	ret = j_str(o, "adrfam", p, true, s, sizeof(s), err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	if (!strcmp(s, "ipv4")) {
		*adrfam = NVMFD_ADRFAM_IPV4;
	} else if (!strcmp(s, "ipv6")) {
		*adrfam = NVMFD_ADRFAM_IPV6;
	} else {
		jpath_key(&kp, p, "adrfam");
		return cfg_err(err, "%s: '%s' is not supported (ipv4 or ipv6)", kp.s, s);
	}
	ret = j_str(o, "traddr", p, true, traddr, traddr_len, err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	if (!cfg_addr_ok(*adrfam, traddr)) {
		jpath_key(&kp, p, "traddr");
		return cfg_err(err, "%s: '%s' is not a numeric %s address", kp.s, traddr,
			       *adrfam == NVMFD_ADRFAM_IPV6 ? "IPv6" : "IPv4");
	}
	/* nvmetcli writes the port as a string; accept a number too */
	{
		uint64_t v;

		ret = j_u64(o, "trsvcid", p, false, 0, 65535, &v, err);
		if (ret < 0)
			return ret;
		if (ret == 0)
			snprintf(trsvcid, trsvcid_len, "%" PRIu64, v);
	}
	ret = j_str(o, "treq", p, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		int t = nvmfd_cfg_parse_treq(s);

		if (t < 0) {
			jpath_key(&kp, p, "treq");
			return cfg_err(err, "%s: unknown value '%s' (not specified, required, "
					    "not required)",
				       kp.s, s);
		}
		if (treq)
			*treq = (uint8_t)t;
	}
	ret = j_str(o, "tsas", p, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0 && s[0] && strcmp(s, "none") && strcmp(s, "tls1.3")) {
		jpath_key(&kp, p, "tsas");
		return cfg_err(err, "%s: '%s' is not supported (none or tls1.3)", kp.s, s);
	}
	if (tls)
		*tls = ret == 0 && !strcmp(s, "tls1.3");
	/* nvmet: a TLS port whose treq is not specified requires TLS */
	if (tls && *tls && treq && *treq == NVMFD_TREQ_SECURE_NOT_SPECIFIED)
		*treq = NVMFD_TREQ_SECURE_REQUIRED;
	return 0;
}

static int load_ns(struct nvmfd_cfg_ns *ns, json_object *o, const struct jpath *p, char *err)
{
	static const char *const keys[] = { "nsid", "enable", "device", "ana_grpid", "ana", NULL };
	static const char *const dkeys[] = { "path",   "uuid",	     "nguid",    "size",
					     "direct", "block_size", "readonly", NULL };
	json_object *dev;
	struct jpath dp, kp;
	char s[64];
	uint64_t v;
	int ret;

	cfg_ns_reset(ns);
	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	ret = j_u32(o, "nsid", p, true, 1, CFG_NSID_MAX, &ns->nsid, err);
	if (ret)
		return ret;
	ret = j_bool(o, "enable", p, &ns->enable, err);
	if (ret < 0)
		return ret;
	/* ANA is not implemented: every namespace is in one optimized group */
	ret = j_u64(o, "ana_grpid", p, false, 0, UINT32_MAX, &v, err);
	if (ret < 0)
		return ret;
	if (ret == 0 && v != 1) {
		jpath_key(&kp, p, "ana_grpid");
		NVMFD_WARN("cfg", "%s: ANA is not supported: group %" PRIu64 " is not applied (the "
			   "namespace is reported optimized on every port)", kp.s, v);
	}

	ret = j_obj(o, "device", p, true, &dev, err);
	if (ret)
		return ret;
	jpath_key(&dp, p, "device");
	ret = j_check_obj(dev, &dp, dkeys, err);
	if (ret)
		return ret;
	ret = j_str(dev, "path", &dp, true, ns->path, sizeof(ns->path), err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	jpath_key(&kp, &dp, "path");
	if (!ns->path[0])
		return cfg_err(err, "%s: empty", kp.s);
	if (!strncmp(ns->path, "ram:", 4) || !strncmp(ns->path, "null:", 5)) {
		const char *sz = strchr(ns->path, ':') + 1;

		ns->bk.type = ns->path[0] == 'r' ? NVMFD_BK_RAM : NVMFD_BK_NULL;
		if (nvmfd_cfg_parse_size(sz, &ns->bk.size) || !ns->bk.size)
			return cfg_err(err, "%s: bad size in '%s' (e.g. ram:256M)", kp.s, ns->path);
	} else if (!strncmp(ns->path, "/dev/", 5)) {
		ns->bk.type = NVMFD_BK_BDEV;
	} else {
		ns->bk.type = NVMFD_BK_FILE;
	}
	ns->bk.path = ns->path;

	ret = j_str(dev, "uuid", &dp, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (cfg_parse_id128(s, ns->uuid)) {
			jpath_key(&kp, &dp, "uuid");
			return cfg_err(err, "%s: bad UUID '%s'", kp.s, s);
		}
		ns->has_uuid = !cfg_id128_is_zero(ns->uuid);
	}
	ret = j_str(dev, "nguid", &dp, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (cfg_parse_id128(s, ns->nguid)) {
			jpath_key(&kp, &dp, "nguid");
			return cfg_err(err, "%s: bad NGUID '%s'", kp.s, s);
		}
		ns->has_nguid = !cfg_id128_is_zero(ns->nguid);
	}
	ret = j_size(dev, "size", &dp, &v, err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		jpath_key(&kp, &dp, "size");
		if (ns->bk.type != NVMFD_BK_FILE)
			return cfg_err(err, "%s: only for file paths", kp.s);
		if (!v)
			return cfg_err(err, "%s: must be > 0", kp.s);
		ns->bk.size = v;
	}
	ret = j_bool(dev, "direct", &dp, &ns->bk.direct, err);
	if (ret < 0)
		return ret;
	ret = j_bool(dev, "readonly", &dp, &ns->bk.read_only, err);
	if (ret < 0)
		return ret;
	if (ret == 0 && ns->bk.read_only && ns->bk.type != NVMFD_BK_FILE &&
	    ns->bk.type != NVMFD_BK_BDEV) {
		jpath_key(&kp, &dp, "readonly");
		return cfg_err(err, "%s: only for file and block device paths", kp.s);
	}
	if (ret == 0 && ns->bk.direct && ns->bk.type != NVMFD_BK_FILE) {
		jpath_key(&kp, &dp, "direct");
		return cfg_err(err, "%s: only for file paths", kp.s);
	}
	ret = j_u64(dev, "block_size", &dp, false, 0, 4096, &v, err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		jpath_key(&kp, &dp, "block_size");
		if (cfg_lba_shift_from_bs(v) < 0 || ns->bk.type == NVMFD_BK_BDEV)
			return cfg_err(err, "%s: %" PRIu64 " is not supported (512 or 4096; not for /dev/)",
				       kp.s, v);
		ns->bk.lba_shift = (unsigned int)cfg_lba_shift_from_bs(v);
	}
	if (ns->bk.type == NVMFD_BK_RAM || ns->bk.type == NVMFD_BK_NULL) {
		cfg_ns_set_pseudo_path(ns);
		return 0;
	}
	jpath_key(&kp, &dp, "path");
	return cfg_check_file(ns, kp.s, err);
}

static int load_version(json_object *o, const struct jpath *p, uint32_t *out, char *err)
{
	unsigned int mjr, mnr, ter = 0;
	struct jpath kp;
	char s[32];
	char tail;
	int ret, n;

	ret = j_str(o, "version", p, false, s, sizeof(s), err);
	if (ret)
		return ret < 0 ? ret : 0;
	jpath_key(&kp, p, "version");
	n = sscanf(s, "%u.%u%c", &mjr, &mnr, &tail);
	if (n == 3 && tail == '.')
		n = sscanf(s, "%u.%u.%u%c", &mjr, &mnr, &ter, &tail) == 3 ? 2 : 3;
	if (n != 2 || mjr < 1 || mjr > 2 || mnr > 255 || ter > 255)
		return cfg_err(err, "%s: '%s' is not a version like \"1.3\"", kp.s, s);
	*out = NVMFD_VS(mjr, mnr, ter);
	return 0;
}

/* "pi_enable" (subsystem attr, port param): absent or false, since
 * protection information is not supported. Return: 0 or -EINVAL. */
static int j_no_pi(json_object *o, const struct jpath *p, char *err)
{
	struct jpath kp;
	bool b;
	int ret;

	ret = j_bool(o, "pi_enable", p, &b, err);
	if (ret < 0)
		return ret;
	if (ret == 0 && b) {
		jpath_key(&kp, p, "pi_enable");
		return cfg_err(err, "%s: protection information is not supported", kp.s);
	}
	return 0;
}

/* "ieee_oui": a hex string ("0x001b21", "001b21") or a number, 24 bits. */
static int load_ieee_oui(json_object *o, const struct jpath *p, uint32_t *out, char *err)
{
	struct jpath kp;
	json_object *v;
	char *end;
	const char *str;
	unsigned long long n;

	if (!json_object_object_get_ex(o, "ieee_oui", &v))
		return 0;
	jpath_key(&kp, p, "ieee_oui");
	if (json_object_is_type(v, json_type_int)) {
		n = (unsigned long long)json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		str = json_object_get_string(v);
		errno = 0;
		n = strtoull(str, &end, 16);
		if (!*str || *end || errno)
			return cfg_err(err, "%s: '%s' is not a hex OUI like \"0x001b21\"", kp.s, str);
	} else {
		return cfg_err(err, "%s: expected a hex string, got %s", kp.s, jval(v));
	}
	if (n > 0xffffff)
		return cfg_err(err, "%s: 0x%llx is more than 24 bits", kp.s, n);
	*out = (uint32_t)n;
	return 0;
}

static int load_subsys(struct nvmfd_cfg_subsys *s, json_object *o, const struct jpath *p,
		       char *err)
{
	static const char *const keys[] = { "nqn", "attr", "allowed_hosts", "namespaces", NULL };
	static const char *const akeys[] = { "allow_any_host", "serial",     "model",
					     "version",	       "cntlid_min", "cntlid_max",
					     "qid_max",	       "pi_enable",  "firmware",
					     "ieee_oui",       NULL };
	json_object *attr, *arr;
	char nqn[256];
	struct jpath ap, kp;
	int ret;

	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	ret = j_str(o, "nqn", p, true, nqn, sizeof(nqn), err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	ret = nvmfd_cfg_subsys_init(s, nqn, err);
	if (ret)
		return ret;

	ret = j_obj(o, "attr", p, false, &attr, err);
	if (ret)
		return ret;
	if (attr) {
		jpath_key(&ap, p, "attr");
		ret = j_check_obj(attr, &ap, akeys, err);
		if (ret)
			return ret;
		if (j_bool(attr, "allow_any_host", &ap, &s->allow_any_host, err) < 0)
			return -EINVAL;
		if (j_str(attr, "serial", &ap, false, s->serial, sizeof(s->serial), err) < 0)
			return -EINVAL;
		if (j_str(attr, "model", &ap, false, s->model, sizeof(s->model), err) < 0)
			return -EINVAL;
		/* nvmet's attr_firmware / attr_ieee_oui ("0x%06x" in configfs) */
		if (j_str(attr, "firmware", &ap, false, s->firmware, sizeof(s->firmware), err) < 0)
			return -EINVAL;
		ret = load_ieee_oui(attr, &ap, &s->ieee_oui, err);
		if (ret)
			return ret;
		if (load_version(attr, &ap, &s->version, err) < 0)
			return -EINVAL;
		if (j_u16(attr, "cntlid_min", &ap, 1, CFG_CNTLID_MAX, &s->cntlid_min, err) < 0 ||
		    j_u16(attr, "cntlid_max", &ap, 1, CFG_CNTLID_MAX, &s->cntlid_max, err) < 0 ||
		    j_u16(attr, "qid_max", &ap, 1, CFG_QID_MAX, &s->qid_max, err) < 0)
			return -EINVAL;
		ret = j_no_pi(attr, &ap, err);
		if (ret)
			return ret;
	}

	ret = j_array(o, "allowed_hosts", p, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *h = json_object_array_get_idx(arr, i);

		jpath_idx(&kp, p, "allowed_hosts", i);
		if (!json_object_is_type(h, json_type_string))
			return cfg_err(err, "%s: expected a host NQN string, got %s", kp.s, jval(h));
		if (s->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
			return cfg_err(err, "%s: more than %d allowed hosts", kp.s,
				       NVMFD_CFG_MAX_HOSTS);
		if (!cfg_strcpy(s->hosts[s->nr_hosts], sizeof(s->hosts[0]),
				json_object_get_string(h)))
			return cfg_err(err, "%s: NQN too long", kp.s);
		s->nr_hosts++;
	}

	ret = j_array(o, "namespaces", p, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		jpath_idx(&kp, p, "namespaces", i);
		if (s->nr_ns >= NVMFD_CFG_MAX_NS)
			return cfg_err(err, "%s: more than %d namespaces", kp.s, NVMFD_CFG_MAX_NS);
		ret = load_ns(&s->ns[s->nr_ns], json_object_array_get_idx(arr, i), &kp, err);
		if (ret)
			return ret;
		s->nr_ns++;
	}
	return 0;
}

static int load_referral(struct nvmfd_cfg *cfg, uint16_t portid, json_object *o,
			 const struct jpath *p, char *err)
{
	static const char *const keys[] = { "addr", "portid", "name", "enable", NULL };
	struct nvmfd_cfg_referral *r;
	json_object *addr;
	struct jpath ap;
	char name[64];
	uint64_t v;
	bool en;
	int ret;

	if (cfg->nr_referrals >= NVMFD_CFG_MAX_REFERRALS)
		return cfg_err(err, "%s: more than %d referrals", p->s, NVMFD_CFG_MAX_REFERRALS);
	r = &cfg->referrals[cfg->nr_referrals];
	memset(r, 0, sizeof(*r));
	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	if (j_str(o, "name", p, false, name, sizeof(name), err) < 0)
		return -EINVAL;
	/* the referred port's own ID: the discovery log entry carries it */
	v = 0;
	if (j_u64(o, "portid", p, false, 0, 65535, &v, err) < 0)
		return -EINVAL;
	r->ref_portid = (uint16_t)v;
	ret = j_bool(o, "enable", p, &en, err);
	if (ret < 0)
		return ret;
	if (ret == 0 && !en)
		return 0; /* disabled referral: not advertised */
	ret = j_obj(o, "addr", p, true, &addr, err);
	if (ret)
		return ret;
	jpath_key(&ap, p, "addr");
	cfg_strcpy(r->trsvcid, sizeof(r->trsvcid), "4420");
	ret = load_addr(addr, &ap, &r->adrfam, r->traddr, sizeof(r->traddr), r->trsvcid,
			sizeof(r->trsvcid), &r->ref_portid, NULL, NULL, err);
	if (ret)
		return ret;
	r->portid = portid;
	cfg->nr_referrals++;
	return 0;
}

/* One WARN line for an ANA group other than nvmet's default (group 1,
 * optimized): its state is not applied. */
static void warn_ana_group(json_object *g, const struct jpath *p, size_t i)
{
	json_object *v, *ana, *st;
	const char *state = "optimized";
	int64_t grpid = 1;
	struct jpath kp;

	if (!json_object_is_type(g, json_type_object))
		return;
	if (json_object_object_get_ex(g, "grpid", &v))
		grpid = json_object_get_int64(v);
	if (json_object_object_get_ex(g, "ana", &ana) && json_object_is_type(ana, json_type_object) &&
	    json_object_object_get_ex(ana, "state", &st))
		state = json_object_get_string(st);
	if (grpid == 1 && state && !strcmp(state, "optimized"))
		return;
	jpath_idx(&kp, p, "ana_groups", i);
	NVMFD_WARN("cfg", "%s: ANA is not supported: group %" PRId64 " state '%s' is not applied "
		   "(every namespace is reported optimized on every port)", kp.s, grpid,
		   state ? state : "?");
}

static int load_port(struct nvmfd_cfg *cfg, json_object *o, const struct jpath *p, char *err)
{
	static const char *const keys[] = { "portid",	 "addr",      "param",
					    "subsystems", "referrals", "ana_groups", NULL };
	static const char *const pkeys[] = { "inline_data_size", "max_queue_size", "pi_enable",
					     NULL };
	struct nvmfd_cfg_port *port;
	json_object *addr, *param, *arr;
	struct jpath sp, kp;
	uint64_t v;
	int ret;

	if (cfg->nr_ports >= NVMFD_CFG_MAX_PORTS)
		return cfg_err(err, "%s: more than %d ports", p->s, NVMFD_CFG_MAX_PORTS);
	port = &cfg->ports[cfg->nr_ports];
	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	ret = j_u64(o, "portid", p, true, 1, 65535, &v, err);
	if (ret)
		return ret;
	nvmfd_cfg_port_init(port, (uint16_t)v);

	ret = j_obj(o, "addr", p, true, &addr, err);
	if (ret)
		return ret;
	jpath_key(&sp, p, "addr");
	ret = load_addr(addr, &sp, &port->adrfam, port->traddr, sizeof(port->traddr),
			port->trsvcid, sizeof(port->trsvcid), NULL, &port->treq, &port->tls, err);
	if (ret)
		return ret;

	ret = j_obj(o, "param", p, false, &param, err);
	if (ret)
		return ret;
	if (param) {
		jpath_key(&sp, p, "param");
		ret = j_check_obj(param, &sp, pkeys, err);
		if (ret)
			return ret;
		if (j_u32(param, "inline_data_size", &sp, false, 0, UINT32_MAX,
			  &port->inline_data_size, err) < 0)
			return -EINVAL;
		if (j_u32(param, "max_queue_size", &sp, false, 0, UINT32_MAX,
			  &port->max_queue_size, err) < 0)
			return -EINVAL;
		ret = j_no_pi(param, &sp, err);
		if (ret)
			return ret;
	}

	/* subsystem links are resolved by NQN after all subsystems are loaded */
	ret = j_array(o, "subsystems", p, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *n = json_object_array_get_idx(arr, i);
		unsigned int j;

		jpath_idx(&kp, p, "subsystems", i);
		if (!json_object_is_type(n, json_type_string))
			return cfg_err(err, "%s: expected a subsystem NQN string, got %s", kp.s,
				       jval(n));
		for (j = 0; j < cfg->nr_subsys; j++)
			if (!strcmp(cfg->subsys[j].nqn, json_object_get_string(n)))
				break;
		if (j == cfg->nr_subsys)
			return cfg_err(err, "%s: unknown subsystem '%s'", kp.s,
				       json_object_get_string(n));
		if (port->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
			return cfg_err(err, "%s: too many subsystems", kp.s);
		port->subsys_idx[port->nr_subsys++] = j;
	}

	ret = j_array(o, "referrals", p, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		jpath_idx(&kp, p, "referrals", i);
		ret = load_referral(cfg, port->portid, json_object_array_get_idx(arr, i), &kp, err);
		if (ret)
			return ret;
	}
	/* "ana_groups": ANA is not implemented; the groups are accepted as
	 * saved, and one that would change what hosts see is reported */
	ret = j_array(o, "ana_groups", p, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
		warn_ana_group(json_object_array_get_idx(arr, i), p, i);
	cfg->nr_ports++;
	return 0;
}

/*
 * hosts[].dhchap: nvmet's dhchap_key, dhchap_ctrl_key, dhchap_hash and
 * dhchap_dhgroup. nvmetcli saves empty keys when authentication is off.
 * A key is a representation or "@FILE" (relative to the config file's
 * directory). Messages name the key, never quote a secret.
 */
static int load_host_dhchap(struct nvmfd_cfg_dhchap *d, json_object *dh, const struct jpath *dp,
			    const char *base_dir, char *err)
{
	static const char *const keys[] = { "key", "ctrl_key", "hash", "dhgroup", NULL };
	static const char *const secrets[] = { "key", "ctrl_key" };
	json_object *v;
	struct jpath kp;
	char name[32];
	int ret;

	ret = j_check_obj(dh, dp, keys, err);
	if (ret)
		return ret;
	for (int i = 0; i < 2; i++) {
		char *key = i ? d->ctrl_key : d->key;
		char *file = i ? d->ctrl_key_file : d->key_file;

		if (j_lookup(dh, secrets[i], dp, false, &kp, &v, err))
			continue;
		if (!json_object_is_type(v, json_type_string))
			return cfg_err(err, "%s: expected a string", kp.s);
		if (!json_object_get_string(v)[0])
			continue;
		ret = nvmfd_cfg_dhchap_secret(json_object_get_string(v), base_dir, kp.s, key, file,
					      err);
		if (ret)
			return ret;
	}
	if (d->ctrl_key[0] && !d->key[0])
		return cfg_err(err, "%s.ctrl_key: set without a host key (key)", dp->s);
	ret = j_str(dh, "hash", dp, false, name, sizeof(name), err);
	if (ret < 0)
		return ret;
	if (ret == 0 && name[0] && nvmfd_cfg_dhchap_hash(name, &d->hashes) < 0)
		return cfg_err(err, "%s.hash: unknown value '%s' (hmac(sha256), hmac(sha384), "
				    "hmac(sha512))",
			       dp->s, name);
	ret = j_str(dh, "dhgroup", dp, false, name, sizeof(name), err);
	if (ret < 0)
		return ret;
	if (ret == 0 && name[0] && nvmfd_cfg_dhchap_dhgroup(name, &d->dhgroups) < 0)
		return cfg_err(err, "%s.dhgroup: unknown value '%s' (null, ffdhe2048, ffdhe3072, "
				    "ffdhe4096, ffdhe6144, ffdhe8192)",
			       dp->s, name);
	return 0;
}

static int load_host(struct nvmfd_cfg *cfg, json_object *o, const struct jpath *p,
		     const char *base_dir, char *err)
{
	static const char *const keys[] = { "nqn", "dhchap", "tls", NULL };
	struct nvmfd_cfg_dhchap *d = &cfg->host_dhchap[cfg->nr_hosts];
	json_object *dh, *tls;
	struct jpath dp;
	int ret;

	if (cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
		return cfg_err(err, "%s: more than %d hosts", p->s, NVMFD_CFG_MAX_HOSTS);
	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	ret = j_str(o, "nqn", p, true, cfg->hosts[cfg->nr_hosts], sizeof(cfg->hosts[0]), err);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	ret = j_obj(o, "dhchap", p, false, &dh, err);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	if (dh) {
		jpath_key(&dp, p, "dhchap");
		ret = load_host_dhchap(d, dh, &dp, base_dir, err);
		if (ret) {
			nvmfd_auth_wipe(d, sizeof(*d));
			return ret;
		}
	}
	memset(&cfg->host_psk[cfg->nr_hosts], 0, sizeof(cfg->host_psk[0]));
	if (json_object_object_get_ex(o, "tls", &tls)) {
		jpath_key(&dp, p, "tls");
		ret = nvmfd__cfg_load_tls(tls, dp.s, base_dir, &cfg->host_psk[cfg->nr_hosts], NULL,
					  err);
		if (ret) {
			nvmfd_auth_wipe(d, sizeof(*d));
			return ret;
		}
	}
	cfg->nr_hosts++;
	return 0;
}

static int load_nvmfd(struct nvmfd_cfg *cfg, json_object *o, const struct jpath *p,
		      const char *base_dir, char *err)
{
	static const char *const keys[] = { "max_io_size",    "maxh2cdata", "kato_grace_ms",
					    "stats_interval", "control",    "exec",
					    "icreq_timeout_ms", "connect_timeout_ms", "tls",
					    "auth_timeout_ms", "auth_fail_burst",
					    "auth_fail_interval_ms", "stop_flush", NULL };
	static const char *const ekeys[] = {
		"mode",		  "scope",	     "strict",		"max_active",
		"workers_per_pool", "cpus",	     "wq_per_ctrl",	"idle_poll_us",
		"backend_poll",	  "cq_pool",	     "io_cpu",		"rx_budget_bytes",
		"tx_budget_bytes", "rx_budget_pdus", "tx_budget_pdus", "io_work_deadline_us",
		"auto_freeze",	  "auto_bound",	     "auto_starve_ms", "auto_no_poll",
		"auto_no_budget", "auto_no_cq",	     "net",		"uring_recv",
		"uring_ring",	  "auto_no_follow", NULL
	};
	struct nvmfd_cfg_exec *ex = &cfg->exec;
	json_object *exo;
	struct jpath ep, kp;
	uint64_t v;
	char s[512];
	int ret, e;

	ret = j_check_obj(o, p, keys, err);
	if (ret)
		return ret;
	ret = j_size(o, "max_io_size", p, &v, err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (v > UINT32_MAX) {
			jpath_key(&kp, p, "max_io_size");
			return cfg_err(err, "%s: %" PRIu64 " too large", kp.s, v);
		}
		cfg->max_io_size = (uint32_t)v;
	}
	ret = j_size(o, "maxh2cdata", p, &v, err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (v > UINT32_MAX) {
			jpath_key(&kp, p, "maxh2cdata");
			return cfg_err(err, "%s: %" PRIu64 " too large", kp.s, v);
		}
		cfg->maxh2cdata = (uint32_t)v;
	}
	if (j_u32(o, "kato_grace_ms", p, false, 0, 3600000, &cfg->kato_grace_ms, err) < 0)
		return -EINVAL;
	if (j_u32(o, "icreq_timeout_ms", p, false, 0, 3600000, &cfg->icreq_timeout_ms, err) < 0)
		return -EINVAL;
	if (j_u32(o, "connect_timeout_ms", p, false, 0, 3600000, &cfg->connect_timeout_ms,
		  err) < 0)
		return -EINVAL;
	if (j_u32(o, "auth_timeout_ms", p, false, 0, 3600000, &cfg->auth_timeout_ms, err) < 0)
		return -EINVAL;
	if (j_u32(o, "auth_fail_burst", p, false, 0, 1000000, &cfg->auth_fail_burst, err) < 0)
		return -EINVAL;
	if (j_u32(o, "auth_fail_interval_ms", p, false, 1, 3600000, &cfg->auth_fail_interval_ms,
		  err) < 0)
		return -EINVAL;
	if (j_u32(o, "stats_interval", p, false, 0, 86400, &cfg->stats_interval_s, err) < 0)
		return -EINVAL;
	if (j_bool(o, "stop_flush", p, &cfg->stop_flush, err) < 0)
		return -EINVAL;
	if (j_str(o, "control", p, false, cfg->control_path, sizeof(cfg->control_path), err) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(o, "tls", &exo)) {
		jpath_key(&kp, p, "tls");
		ret = nvmfd__cfg_load_tls(exo, kp.s, base_dir, &cfg->psk,
					  &cfg->tls_handshake_timeout_ms, err);
		if (ret)
			return ret;
	}

	ret = j_obj(o, "exec", p, false, &exo, err);
	if (ret || !exo)
		return ret;
	jpath_key(&ep, p, "exec");
	ret = j_check_obj(exo, &ep, ekeys, err);
	if (ret)
		return ret;
	e = ex->exec_auto ? NVMFD_CFG_EXEC_AUTO : (int)ex->rt.mode;
	if (j_enum(exo, "mode", &ep, mode_names, CFG_ARRAY_SIZE(mode_names), &e, err) < 0)
		return -EINVAL;
	ex->exec_auto = e == NVMFD_CFG_EXEC_AUTO;
	ex->rt.mode = ex->exec_auto ? NVMFD_RT_BOUND : (enum nvmfd_rt_mode)e;
	if (json_object_object_get_ex(exo, "mode", NULL))
		ex->exec_mode_set = true;
	e = (int)ex->net;
	if (j_enum(exo, "net", &ep, net_names, CFG_ARRAY_SIZE(net_names), &e, err) < 0)
		return -EINVAL;
	ex->net = (enum nvmfd_cfg_net)e;
	e = (int)ex->uring_recv;
	if (j_enum(exo, "uring_recv", &ep, uring_recv_names, CFG_ARRAY_SIZE(uring_recv_names), &e,
		   err) < 0)
		return -EINVAL;
	ex->uring_recv = (enum nvmfd_cfg_uring_recv)e;
	e = (int)ex->uring_ring;
	if (j_enum(exo, "uring_ring", &ep, uring_ring_names, CFG_ARRAY_SIZE(uring_ring_names), &e,
		   err) < 0)
		return -EINVAL;
	ex->uring_ring = (enum nvmfd_cfg_uring_ring)e;
	e = (int)ex->rt.scope;
	if (j_enum(exo, "scope", &ep, scope_names, CFG_ARRAY_SIZE(scope_names), &e, err) < 0)
		return -EINVAL;
	ex->rt.scope = (enum nvmfd_rt_scope)e;
	e = (int)ex->place;
	if (j_enum(exo, "io_cpu", &ep, place_names, CFG_ARRAY_SIZE(place_names), &e, err) < 0)
		return -EINVAL;
	ex->place = (enum nvmfd_rt_place)e;
	if (j_bool(exo, "strict", &ep, &ex->rt.strict, err) < 0 ||
	    j_bool(exo, "wq_per_ctrl", &ep, &ex->wq_per_ctrl, err) < 0 ||
	    j_bool(exo, "backend_poll", &ep, &ex->backend_poll, err) < 0 ||
	    j_bool(exo, "auto_freeze", &ep, &ex->auto_freeze, err) < 0 ||
	    j_bool(exo, "auto_bound", &ep, &ex->auto_bound, err) < 0 ||
	    j_bool(exo, "auto_no_poll", &ep, &ex->auto_no_poll, err) < 0 ||
	    j_bool(exo, "auto_no_budget", &ep, &ex->auto_no_budget, err) < 0 ||
	    j_bool(exo, "auto_no_cq", &ep, &ex->auto_no_cq, err) < 0 ||
	    j_bool(exo, "auto_no_follow", &ep, &ex->auto_no_follow, err) < 0)
		return -EINVAL;
	if (j_u32(exo, "max_active", &ep, false, 1, 1u << 20, &ex->rt.max_active, err) < 0 ||
	    j_u32(exo, "workers_per_pool", &ep, false, 0, 4096, &ex->rt.workers_per_pool, err) < 0 ||
	    j_u32(exo, "idle_poll_us", &ep, false, 0, 10000000, &ex->idle_poll_us, err) < 0 ||
	    j_u32(exo, "rx_budget_bytes", &ep, false, 0, UINT32_MAX, &ex->rx_budget_bytes, err) < 0 ||
	    j_u32(exo, "tx_budget_bytes", &ep, false, 0, UINT32_MAX, &ex->tx_budget_bytes, err) < 0 ||
	    j_u32(exo, "rx_budget_pdus", &ep, false, 1, UINT32_MAX, &ex->rx_budget_pdus, err) < 0 ||
	    j_u32(exo, "tx_budget_pdus", &ep, false, 1, UINT32_MAX, &ex->tx_budget_pdus, err) < 0 ||
	    j_u32(exo, "io_work_deadline_us", &ep, false, 0, 10000000, &ex->io_work_deadline_us,
		  err) < 0 ||
	    j_u32(exo, "auto_starve_ms", &ep, false, 1, 60000, &ex->auto_starve_ms, err) < 0)
		return -EINVAL;
	ret = j_str(exo, "cq_pool", &ep, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (!strcmp(s, "shared")) {
			ex->cq_pool_shared = true;
		} else if (!strcmp(s, "per-queue")) {
			ex->cq_pool_shared = false;
		} else {
			jpath_key(&kp, &ep, "cq_pool");
			return cfg_err(err, "%s: unknown value '%s' (per-queue or shared)", kp.s, s);
		}
	}
	ret = j_str(exo, "cpus", &ep, false, s, sizeof(s), err);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		char e2[NVMFD_CFG_ERRLEN];

		if (nvmfd_cfg_parse_cpus(&ex->rt.cpus, s, e2)) {
			jpath_key(&kp, &ep, "cpus");
			return cfg_err(err, "%s: %s", kp.s, e2);
		}
	}
	return 0;
}

static int cfg_load_tree(struct nvmfd_cfg *cfg, json_object *root, const char *base_dir,
			 char *err)
{
	static const char *const keys[] = { "hosts", "ports", "subsystems", "nvmfd", NULL };
	struct jpath top = { .s = "" }, kp;
	json_object *arr, *ext;
	int ret;

	ret = j_check_obj(root, &top, keys, err);
	if (ret)
		return ret;
	ret = j_array(root, "hosts", &top, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		jpath_idx(&kp, &top, "hosts", i);
		ret = load_host(cfg, json_object_array_get_idx(arr, i), &kp, base_dir, err);
		if (ret)
			return ret;
	}
	/* subsystems before ports: ports name them */
	ret = j_array(root, "subsystems", &top, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		jpath_idx(&kp, &top, "subsystems", i);
		if (cfg->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
			return cfg_err(err, "%s: more than %d subsystems", kp.s,
				       NVMFD_CFG_MAX_SUBSYS);
		ret = load_subsys(&cfg->subsys[cfg->nr_subsys], json_object_array_get_idx(arr, i),
				  &kp, err);
		if (ret)
			return ret;
		cfg->nr_subsys++;
	}
	ret = j_array(root, "ports", &top, &arr, err);
	if (ret)
		return ret;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		jpath_idx(&kp, &top, "ports", i);
		ret = load_port(cfg, json_object_array_get_idx(arr, i), &kp, err);
		if (ret)
			return ret;
	}
	ret = j_obj(root, "nvmfd", &top, false, &ext, err);
	if (ret || !ext)
		return ret;
	jpath_key(&kp, &top, "nvmfd");
	return load_nvmfd(cfg, ext, &kp, base_dir, err);
}

static int cfg_read_file(const char *path, char **out, size_t *len, char *err)
{
	size_t cap = 0, n = 0;
	char *buf = NULL, *nb;
	FILE *f;
	int ret;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		cfg_err(err, "%s", strerror(-ret));
		return ret;
	}
	{
		struct stat st;

		if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
			fclose(f);
			return cfg_err(err, "is a directory");
		}
	}
	for (;;) {
		size_t r;

		if (cap - n < 4096) {
			if (cap >= CFG_JSON_MAX_BYTES) {
				ret = cfg_err(err, "larger than %u bytes",
					      CFG_JSON_MAX_BYTES);
				goto out_free;
			}
			cap = cap ? cap * 2 : 16384;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				ret = -ENOMEM;
				cfg_err(err, "out of memory");
				goto out_free;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		ret = -EIO;
		cfg_err(err, "read error");
		goto out_free;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;

out_free:
	free(buf);
	fclose(f);
	return ret;
}

/**
 * nvmfd_cfg_load_json() - merge an nvmetcli saved config into @cfg.
 * @cfg:  in/out: ports, subsystems, hosts and referrals are appended; the
 *        "nvmfd" extension object overrides global settings.
 * @path: JSON file (borrowed).
 * @err:  message: the OS error for file problems, "invalid JSON at line N"
 *        for syntax, or the key path and value for content errors.
 *
 * On error @cfg may hold part of the file; callers discard it.
 * Return: 0, -ENOENT/-EACCES/... (open), -ENOMEM, -EIO (read), -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_load_json(struct nvmfd_cfg *cfg, const char *path, char err[NVMFD_CFG_ERRLEN])
{
	struct json_tokener *tok;
	json_object *root = NULL;
	enum json_tokener_error jerr;
	size_t len = 0;
	char *buf = NULL;
	int ret;

	ret = cfg_read_file(path, &buf, &len, err);
	if (ret)
		return ret;
	tok = json_tokener_new();
	if (!tok) {
		ret = -ENOMEM;
		cfg_err(err, "out of memory");
		goto out_free_buf;
	}
	root = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		size_t off = json_tokener_get_parse_end(tok);
		unsigned int line = 1;

		for (size_t i = 0; i < off && i < len; i++)
			line += buf[i] == '\n';
		if (jerr == json_tokener_success) {
			/* trailing garbage after a complete value, unless whitespace */
			while (off < len && isspace((unsigned char)buf[off]))
				off++;
			/* a complete JSON null parses to no object */
			if (off == len && !root) {
				ret = cfg_err(err, "(top): expected an object, got null");
				goto out_put;
			}
			if (off == len)
				goto parsed;
		}
		ret = cfg_err(err, "invalid JSON at line %u: %s", line,
			      jerr == json_tokener_continue ? "unexpected end of file" :
			      jerr == json_tokener_success ? "trailing data" :
							      json_tokener_error_desc(jerr));
		goto out_put;
	}
parsed: {
	/* "@FILE" secrets are relative to the config file's directory */
	char base_dir[NVMFD_CFG_SECRET_PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(base_dir, sizeof(base_dir), ".");
	else
		snprintf(base_dir, sizeof(base_dir), "%.*s", (int)(slash - path), path);
	if (slash == path)
		snprintf(base_dir, sizeof(base_dir), "/");
	ret = cfg_load_tree(cfg, root, base_dir, err);
	}
out_put:
	json_object_put(root);
	json_tokener_free(tok);
out_free_buf:
	free(buf);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Validation                                                             */

static int cfg_check_nqn(const char *what, const char *nqn, char *err)
{
	size_t n = strlen(nqn);

	if (strncmp(nqn, "nqn.", 4))
		return cfg_err(err, "%s '%s': an NQN must start with \"nqn.\"", what, nqn);
	if (n > CFG_NQN_MAX)
		return cfg_err(err, "%s '%.40s...': longer than %d bytes", what, nqn, CFG_NQN_MAX);
	return 0;
}

static bool cfg_printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

int nvmfd_cfg_check_ns_size(const struct nvmfd_cfg_ns *ns, uint64_t size,
			    char err[NVMFD_CFG_ERRLEN])
{
	unsigned int shift = ns->bk.lba_shift ? ns->bk.lba_shift : 9;

	if (size & ((1ull << shift) - 1))
		return cfg_err(err, "size %" PRIu64 " is not a multiple of the %u-byte block size",
			       size, 1u << shift);
	if (size > NVMFD_CFG_NS_SIZE_MAX)
		return cfg_err(err, "size %" PRIu64 " is larger than %" PRIu64 " bytes (8 EiB, the "
				    "largest file offset)",
			       size, (uint64_t)NVMFD_CFG_NS_SIZE_MAX);
	return 0;
}

static int cfg_validate_ns(const struct nvmfd_cfg_subsys *s, unsigned int i, char *err)
{
	const struct nvmfd_cfg_ns *ns = &s->ns[i];
	char msg[NVMFD_CFG_ERRLEN];

	if (ns->nsid < 1 || ns->nsid > CFG_NSID_MAX)
		return cfg_err(err, "subsystem '%s' namespace %u: nsid %u out of range 1..%d",
			       s->nqn, i, ns->nsid, CFG_NSID_MAX);
	for (unsigned int j = 0; j < i; j++)
		if (s->ns[j].nsid == ns->nsid)
			return cfg_err(err, "subsystem '%s': duplicate nsid %u", s->nqn, ns->nsid);
	if (ns->bk.lba_shift && ns->bk.lba_shift != 9 && ns->bk.lba_shift != 12)
		return cfg_err(err, "subsystem '%s' nsid %u: block size 2^%u not supported",
			       s->nqn, ns->nsid, ns->bk.lba_shift);
	switch (ns->bk.type) {
	case NVMFD_BK_RAM:
	case NVMFD_BK_NULL:
		if (!ns->bk.size)
			return cfg_err(err, "subsystem '%s' nsid %u: size must be > 0", s->nqn,
				       ns->nsid);
		break;
	case NVMFD_BK_FILE:
	case NVMFD_BK_BDEV:
		if (!ns->path[0])
			return cfg_err(err, "subsystem '%s' nsid %u: empty path", s->nqn, ns->nsid);
		break;
	default:
		return cfg_err(err, "subsystem '%s' nsid %u: bad backend type %d", s->nqn,
			       ns->nsid, (int)ns->bk.type);
	}
	if (nvmfd_cfg_check_ns_size(ns, ns->bk.size, msg))
		return cfg_err(err, "subsystem '%s' nsid %u: %s", s->nqn, ns->nsid, msg);
	return 0;
}

static int cfg_validate_subsys(const struct nvmfd_cfg *cfg, unsigned int i, char *err)
{
	const struct nvmfd_cfg_subsys *s = &cfg->subsys[i];
	int ret;

	ret = cfg_check_nqn("subsystem", s->nqn, err);
	if (ret)
		return ret;
	if (!strcmp(s->nqn, NVMFD_DISC_NQN))
		return cfg_err(err, "subsystem '%s': the discovery NQN cannot be a subsystem",
			       s->nqn);
	for (unsigned int j = 0; j < i; j++)
		if (!strcmp(cfg->subsys[j].nqn, s->nqn))
			return cfg_err(err, "subsystem '%s': duplicate NQN", s->nqn);
	if (s->cntlid_min < 1 || s->cntlid_max > CFG_CNTLID_MAX || s->cntlid_min > s->cntlid_max)
		return cfg_err(err, "subsystem '%s': cntlid range %u..%u invalid (1 <= min <= max <= %u)",
			       s->nqn, s->cntlid_min, s->cntlid_max, CFG_CNTLID_MAX);
	if (s->qid_max < 1 || s->qid_max > CFG_QID_MAX)
		return cfg_err(err, "subsystem '%s': qid_max %u out of range 1..%d", s->nqn,
			       s->qid_max, CFG_QID_MAX);
	if (!s->serial[0] || !cfg_printable(s->serial))
		return cfg_err(err, "subsystem '%s': serial '%s' must be 1..20 printable ASCII",
			       s->nqn, s->serial);
	if (!cfg_printable(s->firmware))
		return cfg_err(err, "subsystem '%s': firmware '%s' must be 1..8 printable ASCII",
			       s->nqn, s->firmware);
	if (!s->model[0] || !cfg_printable(s->model))
		return cfg_err(err, "subsystem '%s': model '%s' must be 1..40 printable ASCII",
			       s->nqn, s->model);
	if ((s->version >> 16) < 1 || (s->version >> 16) > 2)
		return cfg_err(err, "subsystem '%s': version 0x%x not supported", s->nqn,
			       s->version);
	if (s->nr_ns > NVMFD_CFG_MAX_NS || s->nr_hosts > NVMFD_CFG_MAX_HOSTS)
		return cfg_err(err, "subsystem '%s': too many namespaces or hosts", s->nqn);
	for (unsigned int h = 0; h < s->nr_hosts; h++) {
		ret = cfg_check_nqn("allowed host", s->hosts[h], err);
		if (ret)
			return ret;
		for (unsigned int j = 0; j < h; j++)
			if (!strcmp(s->hosts[j], s->hosts[h]))
				return cfg_err(err, "subsystem '%s': allowed host '%s' listed twice",
					       s->nqn, s->hosts[h]);
	}
	for (unsigned int n = 0; n < s->nr_ns; n++) {
		ret = cfg_validate_ns(s, n, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int cfg_validate_port(const struct nvmfd_cfg *cfg, unsigned int i, char *err)
{
	const struct nvmfd_cfg_port *p = &cfg->ports[i];

	if (p->portid == 0)
		return cfg_err(err, "port %u: portid 0 is reserved", i);
	for (unsigned int j = 0; j < i; j++) {
		const struct nvmfd_cfg_port *q = &cfg->ports[j];

		if (q->portid == p->portid)
			return cfg_err(err, "port %u: duplicate portid", p->portid);
		if (!strcmp(q->traddr, p->traddr) && !strcmp(q->trsvcid, p->trsvcid) &&
		    strcmp(p->trsvcid, "0"))
			return cfg_err(err, "port %u: address %s port %s already used by port %u",
				       p->portid, p->traddr, p->trsvcid, q->portid);
	}
	if (p->adrfam != NVMFD_ADRFAM_IPV4 && p->adrfam != NVMFD_ADRFAM_IPV6)
		return cfg_err(err, "port %u: bad address family %u", p->portid, p->adrfam);
	if (!cfg_addr_ok(p->adrfam, p->traddr))
		return cfg_err(err, "port %u: traddr '%s' is not a numeric %s address", p->portid,
			       p->traddr, p->adrfam == NVMFD_ADRFAM_IPV6 ? "IPv6" : "IPv4");
	if (p->treq == NVMFD_TREQ_SECURE_REQUIRED && !p->tls)
		return cfg_err(err, "port %u: treq \"required\" needs tsas \"tls1.3\"", p->portid);
	if (!cfg_port_ok(p->trsvcid))
		return cfg_err(err, "port %u: trsvcid '%s' is not 0..65535", p->portid,
			       p->trsvcid);
	if (p->max_queue_size < CFG_QUEUE_SIZE_MIN || p->max_queue_size > CFG_QUEUE_SIZE_MAX)
		return cfg_err(err, "port %u: max_queue_size %u out of range %d..%d", p->portid,
			       p->max_queue_size, CFG_QUEUE_SIZE_MIN, CFG_QUEUE_SIZE_MAX);
	/* in-capsule data beyond MDTS could never be used */
	if (p->inline_data_size > cfg->max_io_size)
		return cfg_err(err, "port %u: inline_data_size %u larger than max_io_size %u",
			       p->portid, p->inline_data_size, cfg->max_io_size);
	if (p->nr_subsys > NVMFD_CFG_MAX_SUBSYS)
		return cfg_err(err, "port %u: too many subsystems", p->portid);
	for (unsigned int k = 0; k < p->nr_subsys; k++) {
		if (p->subsys_idx[k] >= cfg->nr_subsys)
			return cfg_err(err, "port %u: subsystem index %u does not exist", p->portid,
				       p->subsys_idx[k]);
		for (unsigned int j = 0; j < k; j++)
			if (p->subsys_idx[j] == p->subsys_idx[k])
				return cfg_err(err, "port %u: subsystem '%s' linked twice",
					       p->portid, cfg->subsys[p->subsys_idx[k]].nqn);
	}
	return 0;
}

/**
 * nvmfd_cfg_exec_resolve() - nvmfd's default execution mode, applied once
 * every source (config files, then flags) has been read and before
 * nvmfd_cfg_validate().
 * @cfg: config to complete.
 *
 * When exec.mode was not given (exec_mode_set false), nvmfd runs auto
 * (doc/execution-model.md §8; bench/RESULTS.md has the measurements that
 * made it the default), except where auto does not combine with what the
 * config asks for: wq_per_ctrl or net uring keep the library's bound
 * mode. Either way exec_mode_default is set: a printed config then does
 * not name the mode, so it resolves the same way when loaded again, and
 * under the default auto a cq_pool "shared" is kept for every queue
 * (tcp_auto_cq_source(), as auto_no_cq; a fixed idle_poll_us already
 * keeps its period). An explicit mode, "bound" included, is left as given.
 * Context: any thread.
 */
void nvmfd_cfg_exec_resolve(struct nvmfd_cfg *cfg)
{
	struct nvmfd_cfg_exec *ex = &cfg->exec;

	if (ex->exec_mode_set)
		return;
	ex->exec_mode_default = true;
	ex->exec_auto = !ex->wq_per_ctrl && ex->net != NVMFD_CFG_NET_URING;
	ex->rt.mode = NVMFD_RT_BOUND;
}

/**
 * nvmfd_cfg_validate() - cross-check a complete config.
 * @cfg: config (borrowed).
 * @err: message naming the object and value.
 * Return: 0 or -EINVAL.
 * Context: any thread.
 */
int nvmfd_cfg_validate(const struct nvmfd_cfg *cfg, char err[NVMFD_CFG_ERRLEN])
{
	const struct nvmfd_cfg_exec *ex = &cfg->exec;
	int ret;

	if (cfg->nr_ports > NVMFD_CFG_MAX_PORTS || cfg->nr_subsys > NVMFD_CFG_MAX_SUBSYS ||
	    cfg->nr_referrals > NVMFD_CFG_MAX_REFERRALS || cfg->nr_hosts > NVMFD_CFG_MAX_HOSTS)
		return cfg_err(err, "too many ports, subsystems, referrals or hosts");
	if (!cfg->nr_ports)
		return cfg_err(err, "no listener: give --listen ADDR:PORT or a port in the config");
	/* auto moves a queue between the port's pools and one unbound escape
	 * pool; per-controller runtimes isolate controllers by giving each its
	 * own pools, which such a move would undo, and their migration after
	 * Connect would race the watchdog's moves (doc/execution-model.md
	 * §8.2) */
	if (ex->exec_auto && ex->wq_per_ctrl)
		return cfg_err(err, "exec mode auto does not work with wq_per_ctrl (per-controller "
				    "pools and auto's moves between shared pools exclude each other)");
	if (!ex->exec_auto && (ex->auto_freeze || ex->auto_bound || ex->auto_no_poll ||
			       ex->auto_no_budget || ex->auto_no_cq || ex->auto_no_follow))
		return cfg_err(err, "exec auto_freeze/auto_bound/auto_no_poll/auto_no_budget/"
				    "auto_no_cq/auto_no_follow need exec mode auto%s",
			       ex->exec_mode_default ? " (with wq_per_ctrl or net uring the "
						       "default mode is bound: auto combines with "
						       "neither)" :
						       "");
	/* doc/execution-model.md §9: the io_uring socket path is plain TCP
	 * only, and not under auto (whose stall measure looks for input
	 * unread in the socket, which a multishot receive never leaves) */
	if (ex->net == NVMFD_CFG_NET_URING && ex->exec_auto)
		return cfg_err(err, "exec net uring does not work with exec mode auto (use bound or "
				    "unbound)");
	if (ex->net != NVMFD_CFG_NET_URING && ex->uring_recv != NVMFD_CFG_URING_RECV_AUTO)
		return cfg_err(err, "exec uring_recv needs exec net uring");
	/* §9.1: a worker ring belongs to one bound pool; a queue that may
	 * change pool (unbound pools, per-controller pools) keeps its own */
	if (ex->uring_ring == NVMFD_CFG_URING_RING_WORKER) {
		if (ex->net != NVMFD_CFG_NET_URING)
			return cfg_err(err, "exec uring_ring worker needs exec net uring");
		if (ex->rt.mode != NVMFD_RT_BOUND)
			return cfg_err(err, "exec uring_ring worker needs exec mode bound (an "
					    "unbound pool's queues run on several workers: use "
					    "uring_ring queue)");
		if (ex->wq_per_ctrl)
			return cfg_err(err, "exec uring_ring worker does not work with wq_per_ctrl "
					    "(queues move to their controller's pools: use "
					    "uring_ring queue)");
	}
	for (unsigned int i = 0; ex->net == NVMFD_CFG_NET_URING && i < cfg->nr_ports; i++)
		if (cfg->ports[i].tls)
			return cfg_err(err, "exec net uring does not support TLS (port %s:%s has "
					    "tls): use net epoll for TLS ports",
				       cfg->ports[i].traddr, cfg->ports[i].trsvcid);
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		ret = cfg_validate_port(cfg, i, err);
		if (ret)
			return ret;
	}
	for (unsigned int i = 0; i < cfg->nr_subsys; i++) {
		ret = cfg_validate_subsys(cfg, i, err);
		if (ret)
			return ret;
	}
	for (unsigned int i = 0; i < cfg->nr_hosts; i++) {
		ret = cfg_check_nqn("host", cfg->hosts[i], err);
		if (ret)
			return ret;
		/* the target uses a host's first entry: a second one with other
		 * DH-HMAC-CHAP settings would be silently ignored */
		for (unsigned int j = 0; j < i; j++)
			if (!strcmp(cfg->hosts[j], cfg->hosts[i]) &&
			    memcmp(&cfg->host_dhchap[j], &cfg->host_dhchap[i],
				   sizeof(cfg->host_dhchap[0])))
				return cfg_err(err, "hosts[%u]: host '%s' is defined twice with "
						    "different DH-HMAC-CHAP settings",
					       i, cfg->hosts[i]);
		for (unsigned int j = 0; j < i; j++)
			if (!strcmp(cfg->hosts[j], cfg->hosts[i]) &&
			    memcmp(&cfg->host_psk[j], &cfg->host_psk[i], sizeof(cfg->host_psk[0])))
				return cfg_err(err, "hosts[%u]: host '%s' is defined twice with "
						    "different TLS PSKs",
					       i, cfg->hosts[i]);
	}
	for (unsigned int i = 0; i < cfg->nr_referrals; i++) {
		const struct nvmfd_cfg_referral *r = &cfg->referrals[i];
		bool found = false;

		for (unsigned int j = 0; j < cfg->nr_ports; j++)
			found |= cfg->ports[j].portid == r->portid;
		if (!found)
			return cfg_err(err, "referral %u: port %u does not exist", i, r->portid);
		if (!cfg_addr_ok(r->adrfam, r->traddr) || !cfg_port_ok(r->trsvcid))
			return cfg_err(err, "referral %u: bad address '%s' port '%s'", i, r->traddr,
				       r->trsvcid);
	}
	/* MDTS is a power of two in units of the 4 KiB minimum page size */
	if (cfg->max_io_size < 4096 || (cfg->max_io_size & (cfg->max_io_size - 1)))
		return cfg_err(err, "max_io_size %u: must be a power of two >= 4096",
			       cfg->max_io_size);
	if (cfg->max_io_size > NVMFD_CFG_MAX_IO_SIZE_MAX)
		return cfg_err(err, "max_io_size %u: at most %u (32M: 65536 blocks of 512 bytes, "
			       "the most one command can move)", cfg->max_io_size,
			       NVMFD_CFG_MAX_IO_SIZE_MAX);
	/* NVMe/TCP 1.0 §3.6.2.3: MAXH2CDATA is at least 4096 and a multiple of 4 */
	if (cfg->maxh2cdata < 4096 || (cfg->maxh2cdata & 3))
		return cfg_err(err, "maxh2cdata %u: must be >= 4096 and a multiple of 4",
			       cfg->maxh2cdata);
	if (ex->rt.mode != NVMFD_RT_BOUND && ex->rt.mode != NVMFD_RT_UNBOUND)
		return cfg_err(err, "exec mode %d invalid", (int)ex->rt.mode);
	if ((unsigned int)ex->rt.scope > NVMFD_RT_SCOPE_SYSTEM)
		return cfg_err(err, "affinity scope %d invalid", (int)ex->rt.scope);
	if ((unsigned int)ex->place > NVMFD_RT_PLACE_INCOMING_CPU)
		return cfg_err(err, "io-cpu policy %d invalid", (int)ex->place);
	if (!ex->rt.max_active)
		return cfg_err(err, "max-active 0: must be >= 1");
	if (!ex->rx_budget_pdus || !ex->tx_budget_pdus)
		return cfg_err(err, "rx/tx budget in PDUs must be >= 1 (got %u/%u)",
			       ex->rx_budget_pdus, ex->tx_budget_pdus);
	return 0;
}

/* nvmfd_cfg_ram_bytes() (cfg.h): the RAM namespaces' bytes together. */
uint64_t nvmfd_cfg_ram_bytes(const struct nvmfd_cfg *cfg)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < cfg->nr_subsys; i++)
		for (unsigned int j = 0; j < cfg->subsys[i].nr_ns; j++) {
			const struct nvmfd_cfg_ns *ns = &cfg->subsys[i].ns[j];

			if (ns->bk.type == NVMFD_BK_RAM)
				sum = ns->bk.size > UINT64_MAX - sum ? UINT64_MAX : sum + ns->bk.size;
		}
	return sum;
}

/**
 * nvmfd_cfg_check_ram() - RAM namespaces against the machine's memory.
 * @cfg:       validated configuration.
 * @total_ram: physical memory in bytes (sysinfo() totalram * mem_unit).
 * @avail_ram: memory available now in bytes (/proc/meminfo MemAvailable);
 *             0 = unknown (no warning).
 * @err:       the refusal or the warning, naming the largest RAM namespace.
 * @warn:      out: true when the total fits in @total_ram but exceeds
 *             @avail_ram (@err then holds the warning).
 * Return: 0 (maybe with *@warn), or -ENOMEM when the RAM namespaces together
 *         need more than @total_ram.
 * Context: any thread.
 */
int nvmfd_cfg_check_ram(const struct nvmfd_cfg *cfg, uint64_t total_ram, uint64_t avail_ram,
			char err[NVMFD_CFG_ERRLEN], bool *warn)
{
	const struct nvmfd_cfg_subsys *bs = NULL;
	const struct nvmfd_cfg_ns *big = NULL;
	uint64_t sum = nvmfd_cfg_ram_bytes(cfg);
	char need[32], have[32];

	*warn = false;
	for (unsigned int i = 0; i < cfg->nr_subsys; i++) {
		const struct nvmfd_cfg_subsys *s = &cfg->subsys[i];

		for (unsigned int j = 0; j < s->nr_ns; j++) {
			const struct nvmfd_cfg_ns *ns = &s->ns[j];

			if (ns->bk.type != NVMFD_BK_RAM)
				continue;
			if (!big || ns->bk.size > big->bk.size) {
				big = ns;
				bs = s;
			}
		}
	}
	if (!big)
		return 0;
	cfg_format_human(sum, need, sizeof(need));
	if (sum > total_ram) {
		cfg_format_human(total_ram, have, sizeof(have));
		cfg_err(err,
			"namespace '%s' (subsystem '%.64s' nsid %u): ram namespaces need %s but the machine has %s",
			big->path, bs->nqn, big->nsid, need, have);
		return -ENOMEM;
	}
	if (avail_ram && sum > avail_ram) {
		cfg_format_human(avail_ram, have, sizeof(have));
		cfg_err(err,
			"namespace '%s' (subsystem '%.64s' nsid %u): ram namespaces need %s but only %s is available",
			big->path, bs->nqn, big->nsid, need, have);
		*warn = true;
	}
	return 0;
}

/**
 * nvmfd_cfg_check_cpus() - the --cpus set against the CPUs usable here.
 * @cfg:    configuration (exec.rt.cpus; empty = all, always fine).
 * @usable: CPUs the process may run on (online and in its affinity mask).
 * @err:    message naming --cpus, its value and the usable CPUs.
 * Return: 0, or -EINVAL when a requested CPU is not in @usable.
 * Context: any thread.
 */
int nvmfd_cfg_check_cpus(const struct nvmfd_cfg *cfg, const cpu_set_t *usable,
			 char err[NVMFD_CFG_ERRLEN])
{
	char want[96], bad[96], have[96];
	cpu_set_t missing;

	if (!CPU_COUNT(&cfg->exec.rt.cpus))
		return 0;
	CPU_ZERO(&missing);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cfg->exec.rt.cpus) && !CPU_ISSET(c, usable))
			CPU_SET(c, &missing);
	if (!CPU_COUNT(&missing))
		return 0;
	nvmfd__cpulist_format(&cfg->exec.rt.cpus, want, sizeof(want));
	nvmfd__cpulist_format(&missing, bad, sizeof(bad));
	nvmfd__cpulist_format(usable, have, sizeof(have));
	return cfg_err(err, "--cpus '%s': CPU %s not online or not allowed (usable: %s)", want,
		       bad, have);
}

/* ---------------------------------------------------------------------- */
/* JSON write                                                             */

/*
 * Keys are added in sorted order within each object (as nvmetcli's
 * json.dumps(sort_keys=True)), so the output is stable and diffable.
 */
static int jadd(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static json_object *jstrf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_object *jstrf(const char *fmt, ...)
{
	char buf[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return json_object_new_string(buf);
}

static int jarr_add(json_object *a, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* @portid: a referral's referred port ID (nvmetcli keeps it in addr), or -1 */
static json_object *write_addr(uint8_t adrfam, const char *traddr, const char *trsvcid,
			       uint8_t treq, bool tls, int portid)
{
	static const char *const treq_names[] = { "not specified", "required", "not required" };
	json_object *a = json_object_new_object();
	int ret = 0;

	if (!a)
		return NULL;
	ret |= jadd(a, "adrfam", json_object_new_string(adrfam == NVMFD_ADRFAM_IPV6 ? "ipv6" :
										     "ipv4"));
	if (portid >= 0)
		ret |= jadd(a, "portid", json_object_new_int(portid));
	ret |= jadd(a, "traddr", json_object_new_string(traddr));
	ret |= jadd(a, "treq", json_object_new_string(treq_names[treq < 3 ? treq : 0]));
	ret |= jadd(a, "trsvcid", json_object_new_string(trsvcid));
	ret |= jadd(a, "trtype", json_object_new_string("tcp"));
	if (tls)
		ret |= jadd(a, "tsas", json_object_new_string("tls1.3"));
	if (ret) {
		json_object_put(a);
		return NULL;
	}
	return a;
}

static json_object *write_port(const struct nvmfd_cfg *cfg, const struct nvmfd_cfg_port *p)
{
	json_object *o = json_object_new_object();
	json_object *param, *subs, *refs;
	int ret = 0;

	if (!o)
		return NULL;
	ret |= jadd(o, "addr", write_addr(p->adrfam, p->traddr, p->trsvcid, p->treq, p->tls, -1));
	param = json_object_new_object();
	ret |= jadd(o, "param", param);
	if (param) {
		ret |= jadd(param, "inline_data_size", jstrf("%u", p->inline_data_size));
		ret |= jadd(param, "max_queue_size", jstrf("%u", p->max_queue_size));
	}
	ret |= jadd(o, "portid", json_object_new_int(p->portid));
	refs = json_object_new_array();
	ret |= jadd(o, "referrals", refs);
	for (unsigned int i = 0; refs && i < cfg->nr_referrals; i++) {
		const struct nvmfd_cfg_referral *r = &cfg->referrals[i];
		json_object *ro;

		if (r->portid != p->portid)
			continue;
		ro = json_object_new_object();
		ret |= jarr_add(refs, ro);
		if (ro) {
			ret |= jadd(ro, "addr", write_addr(r->adrfam, r->traddr, r->trsvcid,
							   NVMFD_TREQ_SECURE_NOT_SPECIFIED, false,
							   r->ref_portid));
			ret |= jadd(ro, "name", jstrf("referral%u", i));
		}
	}
	subs = json_object_new_array();
	ret |= jadd(o, "subsystems", subs);
	for (unsigned int i = 0; subs && i < p->nr_subsys; i++)
		if (p->subsys_idx[i] < cfg->nr_subsys)
			ret |= jarr_add(subs,
					json_object_new_string(cfg->subsys[p->subsys_idx[i]].nqn));
	if (ret) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *write_ns(const struct nvmfd_cfg_ns *ns)
{
	json_object *o = json_object_new_object(), *dev;
	char id[37], sz[32];
	int ret = 0;

	if (!o)
		return NULL;
	dev = json_object_new_object();
	ret |= jadd(o, "device", dev);
	if (dev) {
		if (ns->bk.lba_shift && ns->bk.type != NVMFD_BK_BDEV)
			ret |= jadd(dev, "block_size", json_object_new_int(1 << ns->bk.lba_shift));
		if (ns->bk.direct)
			ret |= jadd(dev, "direct", json_object_new_string("1"));
		if (ns->bk.read_only)
			ret |= jadd(dev, "readonly", json_object_new_string("1"));
		cfg_format_id128(ns->nguid, id);
		ret |= jadd(dev, "nguid", json_object_new_string(id));
		if (ns->bk.type == NVMFD_BK_RAM || ns->bk.type == NVMFD_BK_NULL) {
			cfg_format_size(ns->bk.size, sz, sizeof(sz));
			ret |= jadd(dev, "path", jstrf("%s:%s",
						       ns->bk.type == NVMFD_BK_RAM ? "ram" : "null",
						       sz));
		} else {
			ret |= jadd(dev, "path", json_object_new_string(ns->path));
			if (ns->bk.type == NVMFD_BK_FILE && ns->bk.size) {
				cfg_format_size(ns->bk.size, sz, sizeof(sz));
				ret |= jadd(dev, "size", json_object_new_string(sz));
			}
		}
		cfg_format_id128(ns->uuid, id);
		ret |= jadd(dev, "uuid", json_object_new_string(id));
	}
	ret |= jadd(o, "enable", json_object_new_int(ns->enable));
	ret |= jadd(o, "nsid", json_object_new_int64(ns->nsid));
	if (ret) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *write_subsys(const struct nvmfd_cfg_subsys *s)
{
	json_object *o = json_object_new_object(), *attr, *hosts, *nss;
	unsigned int ter = s->version & 0xff;
	int ret = 0;

	if (!o)
		return NULL;
	hosts = json_object_new_array();
	ret |= jadd(o, "allowed_hosts", hosts);
	for (unsigned int i = 0; hosts && i < s->nr_hosts; i++)
		ret |= jarr_add(hosts, json_object_new_string(s->hosts[i]));
	attr = json_object_new_object();
	ret |= jadd(o, "attr", attr);
	if (attr) {
		ret |= jadd(attr, "allow_any_host", jstrf("%d", s->allow_any_host));
		ret |= jadd(attr, "cntlid_max", jstrf("%u", s->cntlid_max));
		ret |= jadd(attr, "cntlid_min", jstrf("%u", s->cntlid_min));
		if (s->firmware[0])
			ret |= jadd(attr, "firmware", json_object_new_string(s->firmware));
		ret |= jadd(attr, "ieee_oui", jstrf("0x%06x", s->ieee_oui));
		ret |= jadd(attr, "model", json_object_new_string(s->model));
		ret |= jadd(attr, "qid_max", jstrf("%u", s->qid_max));
		ret |= jadd(attr, "serial", json_object_new_string(s->serial));
		if (ter)
			ret |= jadd(attr, "version", jstrf("%u.%u.%u", s->version >> 16,
							   (s->version >> 8) & 0xff, ter));
		else
			ret |= jadd(attr, "version",
				    jstrf("%u.%u", s->version >> 16, (s->version >> 8) & 0xff));
	}
	nss = json_object_new_array();
	ret |= jadd(o, "namespaces", nss);
	for (unsigned int i = 0; nss && i < s->nr_ns; i++)
		ret |= jarr_add(nss, write_ns(&s->ns[i]));
	ret |= jadd(o, "nqn", json_object_new_string(s->nqn));
	if (ret) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *write_nvmfd(const struct nvmfd_cfg *cfg)
{
	const struct nvmfd_cfg_exec *ex = &cfg->exec;
	json_object *o = json_object_new_object(), *e;
	char cpus[1024];
	int ret = 0;

	if (!o)
		return NULL;
	ret |= jadd(o, "auth_fail_burst", json_object_new_int64(cfg->auth_fail_burst));
	ret |= jadd(o, "auth_fail_interval_ms", json_object_new_int64(cfg->auth_fail_interval_ms));
	ret |= jadd(o, "auth_timeout_ms", json_object_new_int64(cfg->auth_timeout_ms));
	if (cfg->control_path[0])
		ret |= jadd(o, "control", json_object_new_string(cfg->control_path));
	e = json_object_new_object();
	ret |= jadd(o, "exec", e);
	if (e) {
		if (ex->exec_auto) {
			ret |= jadd(e, "auto_bound", json_object_new_boolean(ex->auto_bound));
			ret |= jadd(e, "auto_freeze", json_object_new_boolean(ex->auto_freeze));
			ret |= jadd(e, "auto_no_budget", json_object_new_boolean(ex->auto_no_budget));
			ret |= jadd(e, "auto_no_cq", json_object_new_boolean(ex->auto_no_cq));
			ret |= jadd(e, "auto_no_follow", json_object_new_boolean(ex->auto_no_follow));
			ret |= jadd(e, "auto_no_poll", json_object_new_boolean(ex->auto_no_poll));
			ret |= jadd(e, "auto_starve_ms", json_object_new_int64(ex->auto_starve_ms));
		}
		ret |= jadd(e, "backend_poll", json_object_new_boolean(ex->backend_poll));
		nvmfd__cpulist_format(&ex->rt.cpus, cpus, sizeof(cpus));
		ret |= jadd(e, "cpus", json_object_new_string(cpus));
		ret |= jadd(e, "cq_pool",
			    json_object_new_string(ex->cq_pool_shared ? "shared" : "per-queue"));
		ret |= jadd(e, "idle_poll_us", json_object_new_int64(ex->idle_poll_us));
		ret |= jadd(e, "io_cpu", json_object_new_string(place_names[ex->place]));
		ret |= jadd(e, "io_work_deadline_us",
			    json_object_new_int64(ex->io_work_deadline_us));
		ret |= jadd(e, "max_active", json_object_new_int64(ex->rt.max_active));
		/* a defaulted mode is left to the next load's default */
		if (!ex->exec_mode_default)
			ret |= jadd(e, "mode",
				    json_object_new_string(nvmfd_cfg_exec_mode_name(ex)));
		ret |= jadd(e, "net", json_object_new_string(net_names[ex->net]));
		ret |= jadd(e, "rx_budget_bytes", json_object_new_int64(ex->rx_budget_bytes));
		ret |= jadd(e, "rx_budget_pdus", json_object_new_int64(ex->rx_budget_pdus));
		ret |= jadd(e, "scope", json_object_new_string(scope_names[ex->rt.scope]));
		ret |= jadd(e, "strict", json_object_new_boolean(ex->rt.strict));
		ret |= jadd(e, "tx_budget_bytes", json_object_new_int64(ex->tx_budget_bytes));
		ret |= jadd(e, "tx_budget_pdus", json_object_new_int64(ex->tx_budget_pdus));
		ret |= jadd(e, "uring_recv",
			    json_object_new_string(uring_recv_names[ex->uring_recv]));
		ret |= jadd(e, "uring_ring",
			    json_object_new_string(uring_ring_names[ex->uring_ring]));
		ret |= jadd(e, "workers_per_pool", json_object_new_int64(ex->rt.workers_per_pool));
		ret |= jadd(e, "wq_per_ctrl", json_object_new_boolean(ex->wq_per_ctrl));
	}
	ret |= jadd(o, "kato_grace_ms", json_object_new_int64(cfg->kato_grace_ms));
	ret |= jadd(o, "max_io_size", json_object_new_int64(cfg->max_io_size));
	ret |= jadd(o, "maxh2cdata", json_object_new_int64(cfg->maxh2cdata));
	ret |= jadd(o, "stats_interval", json_object_new_int64(cfg->stats_interval_s));
	ret |= jadd(o, "stop_flush", json_object_new_boolean(cfg->stop_flush));
	if (ret) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/**
 * nvmfd_cfg_write_json() - @cfg as pretty nvmetcli JSON with sorted keys,
 * plus the "nvmfd" extension object; nvmfd_cfg_load_json() reads it back
 * to an equal config.
 * @cfg: config (borrowed).
 * @out: stream (borrowed); flushed.
 * Return: 0, -EINVAL (enum out of range), -ENOMEM, -EIO (write).
 * Context: any thread.
 */
int nvmfd_cfg_write_json(const struct nvmfd_cfg *cfg, FILE *out)
{
	return nvmfd_cfg_write_json_ex(cfg, out, false);
}

/* One secret: "@FILE" when read from a file, else itself or "<redacted>". */
static json_object *write_secret(const char *key, const char *file, bool secrets)
{
	char buf[NVMFD_CFG_SECRET_PATH_MAX + 1];

	if (file[0]) {
		snprintf(buf, sizeof(buf), "@%s", file);
		return json_object_new_string(buf);
	}
	return json_object_new_string(!key[0] ? "" : secrets ? key : NVMFD_CFG_REDACTED);
}

static json_object *write_dhchap(const struct nvmfd_cfg_dhchap *d, bool secrets)
{
	json_object *o = json_object_new_object();
	int ret = 0;

	if (!o)
		return NULL;
	ret |= jadd(o, "key", write_secret(d->key, d->key_file, secrets));
	ret |= jadd(o, "ctrl_key", write_secret(d->ctrl_key, d->ctrl_key_file, secrets));
	/* one allowed hash / group is nvmet's form (hmac(shaN)); masks with
	 * more than one bit cannot be configured, so they are not written */
	for (uint8_t i = 1; i <= 3; i++)
		if (d->hashes == (1u << i)) {
			char h[32];

			snprintf(h, sizeof(h), "hmac(%s)", nvmfd_auth_hash_name(i));
			ret |= jadd(o, "hash", json_object_new_string(h));
		}
	for (uint8_t i = 0; i <= 5; i++)
		if (d->dhgroups == (1u << i))
			ret |= jadd(o, "dhgroup", json_object_new_string(nvmfd_auth_dhgroup_name(i)));
	if (ret) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/**
 * nvmfd_cfg_write_json_ex() - nvmfd_cfg_write_json() choosing whether inline
 * DH-HMAC-CHAP secrets are written (@secrets) or redacted; see cfg.h.
 * Context: any thread.
 */
int nvmfd_cfg_write_json_ex(const struct nvmfd_cfg *cfg, FILE *out, bool secrets)
{
	json_object *root, *hosts, *ports, *subs;
	const char *text;
	int ret = 0;

	if (cfg->exec.rt.mode > NVMFD_RT_UNBOUND || cfg->exec.rt.scope > NVMFD_RT_SCOPE_SYSTEM ||
	    cfg->exec.place > NVMFD_RT_PLACE_INCOMING_CPU)
		return -EINVAL;
	root = json_object_new_object();
	if (!root)
		return -ENOMEM;
	hosts = json_object_new_array();
	ret |= jadd(root, "hosts", hosts);
	for (unsigned int i = 0; hosts && i < cfg->nr_hosts; i++) {
		json_object *h = json_object_new_object();

		ret |= jarr_add(hosts, h);
		if (h)
			ret |= jadd(h, "nqn", json_object_new_string(cfg->hosts[i]));
		if (h && (cfg->host_dhchap[i].key[0] || cfg->host_dhchap[i].hashes ||
			  cfg->host_dhchap[i].dhgroups))
			ret |= jadd(h, "dhchap", write_dhchap(&cfg->host_dhchap[i], secrets));
		if (h && cfg->host_psk[i].psk[0])
			ret |= jadd(h, "tls", nvmfd__cfg_write_tls(&cfg->host_psk[i], -1, secrets));
	}
	{
		json_object *n = write_nvmfd(cfg);

		if (n && (cfg->psk.psk[0] ||
			  cfg->tls_handshake_timeout_ms != NVMFD_CFG_DEF_TLS_HANDSHAKE_TIMEOUT_MS))
			ret |= jadd(n, "tls", nvmfd__cfg_write_tls(&cfg->psk,
								  cfg->tls_handshake_timeout_ms,
								  secrets));
		ret |= jadd(root, "nvmfd", n);
	}
	ports = json_object_new_array();
	ret |= jadd(root, "ports", ports);
	for (unsigned int i = 0; ports && i < cfg->nr_ports; i++)
		ret |= jarr_add(ports, write_port(cfg, &cfg->ports[i]));
	subs = json_object_new_array();
	ret |= jadd(root, "subsystems", subs);
	for (unsigned int i = 0; subs && i < cfg->nr_subsys; i++)
		ret |= jarr_add(subs, write_subsys(&cfg->subsys[i]));
	if (ret) {
		ret = -ENOMEM;
		goto out_put;
	}
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_SPACED |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		ret = -ENOMEM;
		goto out_put;
	}
	if (fprintf(out, "%s\n", text) < 0 || fflush(out))
		ret = -EIO;
out_put:
	json_object_put(root);
	return ret;
}
