/* SPDX-License-Identifier: MIT */
/*
 * cfg.h - the target's effective configuration.
 *
 * Filled from command-line flags (--listen, --subsystem, --namespace,
 * --allow-host, ...) or from an nvmetcli saved-config JSON file (-c FILE),
 * validated, then handed to the target, which borrows it for its lifetime.
 * nvmfd_cfg_write_json() writes it back in the nvmetcli format
 * (--print-config).
 *
 * Errors: negative errno; parse/validation errors also fill a message that
 * names the key or flag and the offending value.
 */
#ifndef NVMFD_CFG_H
#define NVMFD_CFG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "internal/backend.h"
#include "internal/rt.h"

#define NVMFD_CFG_MAX_PORTS 16
#define NVMFD_CFG_MAX_SUBSYS 16
#define NVMFD_CFG_MAX_NS 32 /* per subsystem */
#define NVMFD_CFG_MAX_HOSTS 64 /* allowed hosts per subsystem */
#define NVMFD_CFG_MAX_REFERRALS 8
/* an error names a flag or key path, a host NQN (up to 223 bytes) and a file:
 * 256 bytes cut "--dhchap-key NQN=@FILE: not a valid ... secret" short */
#define NVMFD_CFG_ERRLEN 512

/* Defaults (nvmfd_cfg_init_defaults(), nvmfd_cfg_port_init()). */
#define NVMFD_CFG_DEF_KATO_GRACE_MS 1000u
/* A connection must complete ICReq, then Connect, within these of accept
 * (the Linux host waits 10 s for ICResp); 0 disables the check. */
#define NVMFD_CFG_DEF_ICREQ_TIMEOUT_MS 10000u
#define NVMFD_CFG_DEF_CONNECT_TIMEOUT_MS 10000u
#define NVMFD_CFG_DEF_AUTH_TIMEOUT_MS 10000u
#define NVMFD_CFG_DEF_AUTH_FAIL_BURST 8u
#define NVMFD_CFG_DEF_AUTH_FAIL_INTERVAL_MS 1000u
#define NVMFD_CFG_DEF_MAX_IO_SIZE (1u << 20)
/* the most one command moves on a 512-byte-block namespace: NLB is 16 bits
 * (65536 blocks), so a larger MDTS could never be used by every namespace */
#define NVMFD_CFG_MAX_IO_SIZE_MAX (32u << 20)
#define NVMFD_CFG_DEF_MAXH2CDATA (128u << 10)
#define NVMFD_CFG_DEF_INLINE_DATA_SIZE 16384u
#define NVMFD_CFG_DEF_MAX_QUEUE_SIZE 128u
#define NVMFD_CFG_DEF_PORT "4420"

struct nvmfd_cfg_port {
	uint16_t portid;
	uint8_t adrfam; /* NVMFD_ADRFAM_IPV4 / _IPV6 */
	char traddr[256]; /* numeric address; "0.0.0.0" / "::" = any */
	char trsvcid[32]; /* TCP port, decimal */
	uint32_t inline_data_size; /* bytes of in-capsule data on I/O queues (default 16384) */
	uint32_t max_queue_size; /* MQES + 1 (default 128) */
	/* TLS (addr.treq / addr.tsas, as nvmet's addr_treq / addr_tsas):
	 * treq NVMFD_TREQ_SECURE_NOT_SPECIFIED / _REQUIRED / _NOT_REQUIRED;
	 * tls: tsas "tls1.3", connections may (not required) or must
	 * (required) start with a TLS 1.3 handshake (doc/tls.md) */
	uint8_t treq;
	bool tls;
	/* indices into nvmfd_cfg.subsys[] exported on this port */
	unsigned int nr_subsys;
	unsigned int subsys_idx[NVMFD_CFG_MAX_SUBSYS];
};

struct nvmfd_cfg_ns {
	uint32_t nsid;
	bool enable;
	struct nvmfd_bk_opts bk; /* bk.path points into path[] */
	char path[4096];
	uint8_t uuid[16];
	uint8_t nguid[16];
	bool has_uuid;
	bool has_nguid;
};

struct nvmfd_cfg_subsys {
	char nqn[256];
	bool allow_any_host;
	char serial[21];
	char model[41];
	char firmware[9]; /* attr.firmware: Identify FR (<= 8 ASCII); "" = nvmfd's version */
	uint32_t ieee_oui; /* attr.ieee_oui: Identify IEEE OUI (24 bits, default 0) */
	uint32_t version; /* NVMFD_VS() encoding; default 1.3 */
	uint16_t cntlid_min; /* default 1 */
	uint16_t cntlid_max; /* default 0xffef */
	uint16_t qid_max; /* I/O queues per controller (default 128) */
	unsigned int nr_hosts;
	char hosts[NVMFD_CFG_MAX_HOSTS][256];
	unsigned int nr_ns;
	struct nvmfd_cfg_ns ns[NVMFD_CFG_MAX_NS];
};

/* Longest DH-HMAC-CHAP secret representation with its NUL (auth.h's
 * NVMFD_AUTH_KEY_STR_MAX) and longest secret file path. */
#define NVMFD_CFG_SECRET_MAX 112
#define NVMFD_CFG_SECRET_PATH_MAX 1024
/* What nvmfd_cfg_write_json() writes for an inline secret. */
#define NVMFD_CFG_REDACTED "<redacted>"

/*
 * DH-HMAC-CHAP settings of one host: nvmetcli's hosts[].dhchap object
 * (nvmet's host attributes dhchap_key, dhchap_ctrl_key, dhchap_hash,
 * dhchap_dhgroup). A host with a key must authenticate on every queue of
 * every subsystem that lists it in allowed_hosts (not on subsystems that
 * allow any host, nor on discovery: as nvmet). doc/auth.md.
 */
struct nvmfd_cfg_dhchap {
	char key[NVMFD_CFG_SECRET_MAX]; /* host secret "DHHC-1:..."; "" = none */
	char ctrl_key[NVMFD_CFG_SECRET_MAX]; /* controller secret; "" = none */
	/* the file a secret was read from ("@FILE"), "" when given inline */
	char key_file[NVMFD_CFG_SECRET_PATH_MAX];
	char ctrl_key_file[NVMFD_CFG_SECRET_PATH_MAX];
	uint8_t hashes; /* allowed HashIDs, bit n = id n; 0 = all */
	uint8_t dhgroups; /* allowed DHgroupIDs, bit n = id n (bit 0 null); 0 = all */
};

/*
 * A TLS PSK (doc/tls.md): one host's (hosts[].tls) or the global one
 * (nvmfd.tls), in the interchange format "NVMeTLSkey-1:hh:<base64>:",
 * inline or from a file without group/other permissions.
 */
struct nvmfd_cfg_psk {
	char psk[NVMFD_CFG_SECRET_MAX]; /* "" = none */
	char file[NVMFD_CFG_SECRET_PATH_MAX]; /* "@FILE" it came from, "" inline */
	/* identities "NVMe0R0h ...": the TLS PSK is SPDK's derivation
	 * (nvmfd_auth_tls_psk_spdk()) instead of the retained PSK */
	bool v0_spdk;
};

#define NVMFD_CFG_DEF_TLS_HANDSHAKE_TIMEOUT_MS 10000u

struct nvmfd_cfg_referral {
	uint16_t portid; /* port the referral is advertised on (its parent) */
	uint16_t ref_portid; /* the referred port's own ID (nvmetcli "portid"), in the entry */
	uint8_t adrfam;
	char traddr[256];
	char trsvcid[32];
};

/* Execution settings (runtime issue); defaults are the Linux drivers'. */
/* How queues move bytes on their sockets (exec.net, --net). */
enum nvmfd_cfg_net {
	NVMFD_CFG_NET_EPOLL, /* readiness (epoll) + recv/sendmsg: the default */
	NVMFD_CFG_NET_URING, /* a per-queue io_uring: recv and send as SQEs */
};

/* exec.uring_recv (--uring-recv): how the io_uring path receives. */
enum nvmfd_cfg_uring_recv {
	NVMFD_CFG_URING_RECV_AUTO, /* multishot + provided buffers where the kernel has them */
	NVMFD_CFG_URING_RECV_MULTISHOT, /* only that; refuse the queue otherwise */
	NVMFD_CFG_URING_RECV_SINGLE, /* one recv SQE at a time into the queue's buffer */
};

/* exec.uring_ring (--uring-ring): which io_uring a --net uring socket uses. */
enum nvmfd_cfg_uring_ring {
	NVMFD_CFG_URING_RING_QUEUE, /* one ring per queue, watched through epoll (default) */
	NVMFD_CFG_URING_RING_WORKER, /* the worker ring of its bound pool (§9.1) */
};

struct nvmfd_cfg_exec {
	struct nvmfd_rt_opts rt; /* mode, scope, strict, max_active, cpus */
	enum nvmfd_cfg_net net; /* doc/execution-model.md §9 */
	enum nvmfd_cfg_uring_recv uring_recv;
	enum nvmfd_cfg_uring_ring uring_ring;
	/* exec.mode "auto" (rt.mode is then bound): a per-queue controller
	 * moves queues off starved or contended CPUs (doc/execution-model.md §8) */
	bool exec_auto;
	/* exec.mode was given (a config file's "mode", nvmfd --exec): else
	 * nvmfd_cfg_exec_resolve() picks nvmfd's default and sets
	 * exec_mode_default (the mode is then not written out: a printed
	 * config resolves the same way again) */
	bool exec_mode_set;
	bool exec_mode_default;
	bool auto_freeze; /* auto decides nothing (counters only) */
	bool auto_bound; /* auto never leaves a queue's io_cpu (reports only) */
	bool auto_no_poll; /* auto never idle-polls (also when idle_poll_us > 0:
			    * that fixed period applies instead) */
	bool auto_no_budget; /* auto never changes the rx/tx byte budgets */
	bool auto_no_cq; /* auto keeps cq_pool's completion source per queue */
	bool auto_no_follow; /* auto never re-homes a queue where its packets arrive */
	uint32_t auto_starve_ms; /* queued-not-run bound for a rescue (default 50) */
	bool wq_per_ctrl;
	uint32_t idle_poll_us; /* 0 = event driven */
	bool backend_poll;
	bool cq_pool_shared;
	enum nvmfd_rt_place place;
	uint32_t rx_budget_bytes; /* 0 = unlimited */
	uint32_t tx_budget_bytes;
	uint32_t rx_budget_pdus; /* default 8, as nvmet */
	uint32_t tx_budget_pdus; /* default 8 */
	uint32_t io_work_deadline_us; /* default 1000 */
};

struct nvmfd_cfg {
	unsigned int nr_ports;
	struct nvmfd_cfg_port ports[NVMFD_CFG_MAX_PORTS];
	unsigned int nr_subsys;
	struct nvmfd_cfg_subsys subsys[NVMFD_CFG_MAX_SUBSYS];
	unsigned int nr_referrals;
	struct nvmfd_cfg_referral referrals[NVMFD_CFG_MAX_REFERRALS];
	/* hosts known to the config (nvmetcli "hosts"), by NQN */
	unsigned int nr_hosts;
	char hosts[NVMFD_CFG_MAX_HOSTS][256];
	struct nvmfd_cfg_dhchap host_dhchap[NVMFD_CFG_MAX_HOSTS]; /* same index as hosts[] */
	struct nvmfd_cfg_psk host_psk[NVMFD_CFG_MAX_HOSTS]; /* same index as hosts[] */
	struct nvmfd_cfg_psk psk; /* nvmfd.tls.psk: for hosts without their own */
	uint32_t tls_handshake_timeout_ms; /* accept to finished TLS handshake; 0: none */
	struct nvmfd_cfg_exec exec;
	uint32_t kato_grace_ms; /* extra time before a keep-alive expiry (default 1000 as nvmet's kato rounding) */
	/* fsync the namespaces holding writes no Flush covered at stop and
	 * when one is removed (then on a thread of its own; default false:
	 * the page cache keeps them and the kernel writes them back;
	 * doc/nvmfd.md SIGNALS) */
	bool stop_flush;
	uint32_t max_io_size; /* MDTS in bytes (default 1 MiB) */
	uint32_t maxh2cdata; /* bytes (default 128 KiB) */
	uint32_t icreq_timeout_ms; /* accept to ICReq; 0: none (default 10000) */
	uint32_t connect_timeout_ms; /* accept to a successful Connect; 0: none (default 10000) */
	/* Connect to a successful DH-HMAC-CHAP transaction on a queue that must
	 * authenticate, capped by the controller's KATO when that is shorter;
	 * 0: only the KATO bounds it (default 10000, doc/auth.md) */
	uint32_t auth_timeout_ms;
	/* Failed DH-HMAC-CHAP transactions allowed per (host NQN, peer
	 * address) before its AUTH_Negotiates are refused without any DH
	 * work, one more allowed per auth_fail_interval_ms (a token bucket;
	 * doc/auth.md "Failed attempts"); burst 0: no limit (defaults 8, 1000) */
	uint32_t auth_fail_burst;
	uint32_t auth_fail_interval_ms;
	unsigned int stats_interval_s;
	char control_path[108];
};

/** nvmfd_cfg_init_defaults() - zero @cfg and set every default above. */
void nvmfd_cfg_init_defaults(struct nvmfd_cfg *cfg);

/**
 * nvmfd_cfg_load_json() - merge an nvmetcli saved config (file at @path).
 * Return: 0, -ENOENT/-EACCES (file), -EINVAL (bad JSON, unknown/ill-typed
 *         key or value: @err names it, e.g. "subsystems[0].namespaces[1].device.path:
 *         missing").
 */
int nvmfd_cfg_load_json(struct nvmfd_cfg *cfg, const char *path, char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_parse_namespace() - parse a --namespace value
 * ("file:PATH[,size=SIZE][,direct]", "bdev:PATH", "ram:SIZE", "null:SIZE";
 * SIZE with optional K/M/G/T suffix, binary units).
 * Return: 0 or -EINVAL with @err set.
 */
int nvmfd_cfg_parse_namespace(struct nvmfd_cfg_ns *ns, const char *spec,
			      char err[NVMFD_CFG_ERRLEN]);

/** nvmfd_cfg_parse_listen() - "ADDR:PORT" or "[V6ADDR]:PORT" into @port. */
int nvmfd_cfg_parse_listen(struct nvmfd_cfg_port *port, const char *spec,
			   char err[NVMFD_CFG_ERRLEN]);

/** nvmfd_cfg_exec_resolve() - when no exec.mode was given, nvmfd's default:
 *  auto, or bound where the config asks for wq_per_ctrl or net uring
 *  (auto combines with neither); call after every source, before
 *  nvmfd_cfg_validate(). The library's own default stays bound. */
void nvmfd_cfg_exec_resolve(struct nvmfd_cfg *cfg);

/** nvmfd_cfg_validate() - cross-checks (unique NQNs/NSIDs/ports, sizes,
 *  cntlid range, ...). Return: 0 or -EINVAL with @err set. */
int nvmfd_cfg_validate(const struct nvmfd_cfg *cfg, char err[NVMFD_CFG_ERRLEN]);

/** nvmfd_cfg_write_json() - the effective config in nvmetcli format, with
 *  inline DH-HMAC-CHAP secrets redacted ("<redacted>"; secrets read from a
 *  file are written as "@FILE"). */
int nvmfd_cfg_write_json(const struct nvmfd_cfg *cfg, FILE *out);

/**
 * nvmfd_cfg_write_json_ex() - nvmfd_cfg_write_json() that writes inline
 * DH-HMAC-CHAP secrets in the clear when @secrets is true (the caller has
 * checked that nobody else can read @out).
 */
int nvmfd_cfg_write_json_ex(const struct nvmfd_cfg *cfg, FILE *out, bool secrets);

/** nvmfd_cfg_has_inline_secrets() - some host has a secret not read from a file. */
bool nvmfd_cfg_has_inline_secrets(const struct nvmfd_cfg *cfg);

/** nvmfd_cfg_host_find() - index of @nqn in cfg->hosts[], or -1. */
int nvmfd_cfg_host_find(const struct nvmfd_cfg *cfg, const char *nqn);

/**
 * nvmfd_cfg_dhchap_secret() - set one DH-HMAC-CHAP secret from @val: a
 * representation "DHHC-1:hh:<base64>:" or "@FILE" (the file's first line;
 * the file must be a regular file without group/other permissions, see
 * nvmfd_auth_read_secret_file()). A relative FILE is taken relative to
 * @base_dir when not NULL.
 * @what: the key's name for messages (e.g. "hosts[0].dhchap.key"); the
 *        secret itself never appears in a message.
 * @key:  out, NVMFD_CFG_SECRET_MAX bytes; @file: out, the resolved FILE or "".
 * Return: 0 or -EINVAL (@err set; @key wiped).
 */
int nvmfd_cfg_dhchap_secret(const char *val, const char *base_dir, const char *what,
			    char key[NVMFD_CFG_SECRET_MAX], char file[NVMFD_CFG_SECRET_PATH_MAX],
			    char err[NVMFD_CFG_ERRLEN]);

/** nvmfd_cfg_dhchap_hash() / _dhgroup() - one hash ("sha256", nvmet's
 *  "hmac(sha256)", ...) or DH group ("null", "ffdhe2048", ...) name as a
 *  one-bit mask of struct nvmfd_cfg_dhchap. Return: 0 or -EINVAL. */
int nvmfd_cfg_dhchap_hash(const char *s, uint8_t *mask);
int nvmfd_cfg_dhchap_dhgroup(const char *s, uint8_t *mask);

/**
 * nvmfd_cfg_parse_dhchap() - parse a --dhchap-key value
 * "HOSTNQN=KEY[,ctrl=KEY][,hash=H][,dhgroup=G]" (KEY a representation or
 * @FILE; H sha256|sha384|sha512 or nvmet's hmac(shaN); G null|ffdhe2048..8192).
 * @nqn: out, the host NQN (256 bytes). @d: out.
 * Return: 0 or -EINVAL with @err set (never quoting a secret).
 */
int nvmfd_cfg_parse_dhchap(const char *spec, char nqn[256], struct nvmfd_cfg_dhchap *d,
			   char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_tls_psk() - set a TLS PSK from @val: "NVMeTLSkey-1:hh:<base64>:"
 * or "@FILE" (as nvmfd_cfg_dhchap_secret(); the PSK must parse, see
 * nvmfd_auth_psk_parse()). Return: 0 or -EINVAL (@err set, never quoting
 * the PSK; @psk wiped).
 */
int nvmfd_cfg_tls_psk(const char *val, const char *base_dir, const char *what,
		      struct nvmfd_cfg_psk *psk, char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_parse_psk() - parse a --psk value "[HOSTNQN=]KEY[,v0=spdk]"
 * (KEY a PSK or @FILE). @nqn: out, the host NQN or "" for the global PSK.
 * Return: 0 or -EINVAL with @err set.
 */
int nvmfd_cfg_parse_psk(const char *spec, char nqn[256], struct nvmfd_cfg_psk *psk,
			char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_parse_treq() - "required", "not required" / "not-required",
 * "not specified" into NVMFD_TREQ_SECURE_*. Return: the value or -EINVAL.
 */
int nvmfd_cfg_parse_treq(const char *s);

/** nvmfd_cfg_psk_find() - the PSK for @hostnqn: its own, else the global
 *  one, else NULL. */
const struct nvmfd_cfg_psk *nvmfd_cfg_psk_find(const struct nvmfd_cfg *cfg, const char *hostnqn);

/*
 * Additive helpers (used by the daemon's option parser and by load_json).
 * Context for all: any thread; no global state.
 */

/**
 * nvmfd_cfg_port_init() - zero @port and set its defaults (0.0.0.0:4420,
 * inline_data_size 16384, max_queue_size 128, no subsystems).
 * @port:   port to fill.
 * @portid: its port id (1..65535).
 */
void nvmfd_cfg_port_init(struct nvmfd_cfg_port *port, uint16_t portid);

/**
 * nvmfd_cfg_subsys_init() - zero @s and set its defaults for @nqn: version
 * 1.3, cntlid 1..0xffef, qid_max 128, model "nvmfd", serial from
 * nvmfd_cfg_serial_from_nqn(), no hosts, no namespaces.
 * @s:   subsystem to fill.
 * @nqn: subsystem NQN (borrowed; copied). Syntax is checked by validate.
 * @err: message on failure.
 * Return: 0, or -EINVAL if @nqn does not fit in s->nqn.
 */
int nvmfd_cfg_subsys_init(struct nvmfd_cfg_subsys *s, const char *nqn,
			  char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_serial_from_nqn() - default serial number: 16 lowercase hex
 * digits of a 64-bit FNV-1a hash of @nqn (stable across runs and hosts).
 */
void nvmfd_cfg_serial_from_nqn(const char *nqn, char serial[21]);

/**
 * nvmfd_cfg_parse_size() - "4096", "256M", "1G", "16KiB" (binary units,
 * K/M/G/T, optional "B"/"iB") into bytes.
 * Return: 0, or -EINVAL (syntax, overflow).
 */
int nvmfd_cfg_parse_size(const char *s, uint64_t *out);

/** nvmfd_cfg_parse_u64() - plain decimal number. Return: 0 or -EINVAL. */
int nvmfd_cfg_parse_u64(const char *s, uint64_t *out);

/**
 * nvmfd_cfg_parse_cpus() - CPU list "0-3,8,10-11" into @set ("" = empty set,
 * meaning all online CPUs). Return: 0, or -EINVAL with @err set.
 */
int nvmfd_cfg_parse_cpus(cpu_set_t *set, const char *s, char err[NVMFD_CFG_ERRLEN]);

/* nvmfd_cfg_parse_exec_mode() for "auto" (not an enum nvmfd_rt_mode value). */
#define NVMFD_CFG_EXEC_AUTO 2
/** nvmfd_cfg_parse_exec_mode() - "bound"/"unbound" -> enum nvmfd_rt_mode,
 *  "auto" -> NVMFD_CFG_EXEC_AUTO, or -EINVAL. */
int nvmfd_cfg_parse_exec_mode(const char *s);
/** nvmfd_cfg_exec_mode_name() - "auto", "bound" or "unbound": what @ex runs. */
const char *nvmfd_cfg_exec_mode_name(const struct nvmfd_cfg_exec *ex);
/** nvmfd_cfg_parse_scope() - "cpu|smt|cache|numa|system" -> enum nvmfd_rt_scope, or -EINVAL. */
int nvmfd_cfg_parse_scope(const char *s);
/** nvmfd_cfg_parse_place() - "rr|least-loaded|incoming-cpu" -> enum nvmfd_rt_place, or -EINVAL. */
int nvmfd_cfg_parse_place(const char *s);

/* Largest namespace in bytes: a file offset (off_t) must hold every byte. */
#define NVMFD_CFG_NS_SIZE_MAX ((uint64_t)INT64_MAX)

/**
 * nvmfd_cfg_check_ns_size() - @size as the size of namespace @ns: a
 * multiple of its block size and at most NVMFD_CFG_NS_SIZE_MAX.
 * Return: 0, or -EINVAL with @err saying which (without naming the
 * namespace: the caller prefixes that).
 */
int nvmfd_cfg_check_ns_size(const struct nvmfd_cfg_ns *ns, uint64_t size,
			    char err[NVMFD_CFG_ERRLEN]);

/**
 * nvmfd_cfg_ram_bytes() - bytes of all RAM namespaces of @cfg together
 * (saturating at UINT64_MAX).
 */
uint64_t nvmfd_cfg_ram_bytes(const struct nvmfd_cfg *cfg);

/**
 * nvmfd_cfg_check_ram() - refuse RAM namespaces that together exceed
 * @total_ram bytes (-ENOMEM, @err names the largest one and both sizes);
 * set *@warn and fill @err when they exceed @avail_ram (0 = unknown).
 * Return: 0 or -ENOMEM.
 */
int nvmfd_cfg_check_ram(const struct nvmfd_cfg *cfg, uint64_t total_ram, uint64_t avail_ram,
			char err[NVMFD_CFG_ERRLEN], bool *warn);

/**
 * nvmfd_cfg_check_cpus() - every CPU of exec.rt.cpus must be in @usable.
 * Return: 0 or -EINVAL with @err naming --cpus and the missing CPUs.
 */
int nvmfd_cfg_check_cpus(const struct nvmfd_cfg *cfg, const cpu_set_t *usable,
			 char err[NVMFD_CFG_ERRLEN]);

#endif /* NVMFD_CFG_H */
