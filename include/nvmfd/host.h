/* SPDX-License-Identifier: MIT */
/*
 * host.h - the nvmfd NVMe/TCP host (initiator) library.
 *
 * A controller (struct nvmfd_host_ctrl) is one admin queue plus N I/O queue
 * pairs (struct nvmfd_host_qp), each its own TCP connection. Connecting runs
 * ICReq/ICResp, Fabrics Connect, Property Get CAP, Property Set CC.EN, waits
 * for CSTS.RDY, identifies the controller and its active namespaces, sets
 * Number of Queues and connects the I/O queues (NVMe-oF 1.1, NVMe/TCP 1.0).
 *
 * Execution model (first version; no dependency on the nvmfd runtime):
 *  - Each I/O queue pair is owned by exactly one thread at a time, which
 *    submits with nvmfd_host_qp_read() & co. and reaps completions with
 *    nvmfd_host_qp_poll() (non-blocking recv/send, callbacks run inside it,
 *    SPDK process_completions style). A qp may be handed to another thread
 *    between calls, never used by two at once.
 *  - The admin queue is guarded by a mutex inside the controller; the
 *    blocking admin helpers may be called from any thread; a helper
 *    waiting for its completion does not hold that mutex while it sleeps.
 *    When KATO is non-zero a small internal thread, running from the admin
 *    Connect until disconnect, sends Keep Alive (before CSTS.RDY: a
 *    Property Get of CSTS) every KATO/2, counted from the previous one's
 *    send, without waiting for its completion (at most 4 in flight), so
 *    neither a slow round trip nor a bring-up, I/O queue connect or admin
 *    command still waiting for its answer stretches the interval the
 *    target sees.
 *  - No allocation on the data path: every qp preallocates one request slot
 *    per queue entry (the slot index is the command identifier).
 *
 * Errors: every function that acts returns 0 (or a count) or a negative
 * errno. The human-readable reason of the last failure (connection refused,
 * which ICResp field mismatched, decoded Connect status with IATTR/IPO,
 * timeout, C2HTermReq FES/FEI, wrong CID, ...) is kept in the handle:
 * nvmfd_host_ctrl_errmsg() / nvmfd_host_qp_errmsg().
 *
 * Ownership: whoever creates an object destroys it. Pointers passed into a
 * call are borrowed for the call, except I/O data buffers, which are
 * borrowed until the command's callback has run. Every wait is bounded by
 * the controller's timeout (default 10 s).
 */
#ifndef NVMFD_HOST_H
#define NVMFD_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/spec.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvmfd_host_ctrl;
struct nvmfd_host_qp;

/* ------------------------------------------------------------------ */
/* Transport identifiers                                               */
/* ------------------------------------------------------------------ */

#define NVMFD_HOST_TRADDR_MAX 256
#define NVMFD_HOST_TRSVCID_MAX 32

/**
 * struct nvmfd_host_trid - where to connect (the SPDK "-r" string decoded).
 * @trtype:  NVMFD_TRTYPE_TCP (only TCP is supported).
 * @adrfam:  NVMFD_ADRFAM_IPV4 or NVMFD_ADRFAM_IPV6.
 * @traddr:  address string, NUL-terminated.
 * @trsvcid: port string, NUL-terminated ("4420").
 * @subnqn:  subsystem NQN; empty means the discovery NQN.
 * @hostnqn: host NQN; empty means "use the controller options / default".
 */
struct nvmfd_host_trid {
	uint8_t trtype;
	uint8_t adrfam;
	char traddr[NVMFD_HOST_TRADDR_MAX];
	char trsvcid[NVMFD_HOST_TRSVCID_MAX];
	char subnqn[NVMFD_NQN_SIZE];
	char hostnqn[NVMFD_NQN_SIZE];
};

/**
 * nvmfd_host_trid_parse() - decode "trtype:TCP adrfam:IPv4 traddr:A trsvcid:P
 * subnqn:N [hostnqn:N]" (keys case-insensitive, separated by blanks; values
 * of trtype/adrfam case-insensitive).
 * An IPv6 traddr may be written bare (traddr:::1, split at the first ':')
 * or in brackets (traddr:[::1]); the brackets are removed, and an address
 * containing ':' sets adrfam IPv6 unless adrfam is given. The port always
 * goes in trsvcid ("[::1]:4420" is rejected).
 * @str:    the string, borrowed.
 * @trid:   out: zeroed, then filled. Defaults: trtype TCP, adrfam IPv4
 *          (IPv6 for an IPv6 traddr), trsvcid "4420" (the caller may prefer
 *          8009 for discovery).
 * @err:    out: message on failure (may be NULL).
 * @errlen: bytes at @err.
 * Return: 0; -EINVAL on an unknown key, bad value, missing traddr, a value
 *         longer than its field, an unbalanced or non-IPv6 bracketed traddr,
 *         or an IPv6 traddr with adrfam:IPv4.
 * Context: any thread; pure.
 */
int nvmfd_host_trid_parse(const char *str, struct nvmfd_host_trid *trid, char *err,
			  size_t errlen);

/**
 * nvmfd_host_default_hostnqn() - the host NQN used when none is given: the
 * first line of /etc/nvme/hostnqn if readable, else
 * "nqn.2014-08.org.nvmexpress:uuid:<uuid>" with a random version-4 UUID.
 * @buf: out, NUL-terminated.
 * @len: bytes at @buf (at least NVMFD_NQN_SIZE recommended).
 * Return: 0; -ENOSPC if @len is too small.
 * Context: any thread.
 */
int nvmfd_host_default_hostnqn(char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Controller                                                          */
/* ------------------------------------------------------------------ */

/* Room for a secret representation ("DHHC-1:03:" + 92 base64 + ":" + NUL). */
#define NVMFD_HOST_SECRET_MAX 128

/**
 * struct nvmfd_host_ctrl_opts - connection parameters; nvmfd_host_ctrl_opts_init().
 * @size:           sizeof(struct nvmfd_host_ctrl_opts), for ABI growth.
 * @hostnqn:        host NQN; empty: trid->hostnqn, else nvmfd_host_default_hostnqn().
 * @hostid:         128-bit host identifier; all-zero: the UUID in /etc/nvme/hostid
 *                  if readable, else random per controller.
 * @hdgst:          request header digests in ICReq.
 * @ddgst:          request data digests in ICReq.
 * @nr_io_queues:   I/O queue pairs to connect (clamped by Set Features
 *                  Number of Queues); default 1. Ignored for discovery.
 * @io_queue_size:  I/O queue entries (sqsize + 1), default 128; a qp keeps
 *                  at most io_queue_size - 1 commands outstanding; clamped to
 *                  CAP.MQES + 1 and MAXCMD.
 * @admin_queue_size: admin queue entries, default 32.
 * @kato_ms:        Keep Alive Timeout sent in the admin Connect; 0 disables
 *                  keep-alive. Default 5000 (discovery: 0 is typical).
 * @timeout_ms:     bound of every wait (connect, ICResp, each admin command,
 *                  each I/O), default 10000.
 * @disable_sqflow: set CATTR "disable SQ flow control" in I/O queue Connects.
 * @max_io_size:    largest transfer of one command in bytes, default 1 MiB;
 *                  larger submissions get -EINVAL.
 * @dhchap_secret:  DH-HMAC-CHAP host secret, "DHHC-1:hh:<base64>:" (NVMe
 *                  Base 2.0 §8.13.5.8); empty: none. When a Connect response
 *                  asks for authentication (AUTHREQ ATR), the queue runs a
 *                  DH-HMAC-CHAP transaction with Authentication Send/Receive
 *                  before it is used, offering SHA-256/384/512 and the DH
 *                  groups null and ffdhe2048..8192.
 * @dhchap_ctrl_secret: controller secret for bidirectional authentication
 *                  (the controller must prove it knows it); empty: the host
 *                  does not authenticate the controller. Needs
 *                  @dhchap_secret; a controller that does not ask for
 *                  authentication is then refused (-EACCES).
 *                  Both secrets are wiped from the handle when it is
 *                  destroyed; they are never logged.
 * @tls:            run NVMe/TCP over TLS 1.3 with a PSK (NVMe/TCP 1.1 §3.6,
 *                  TP 8011) on every queue: the TLS handshake follows the
 *                  TCP connect, before ICReq. Needs @tls_psk.
 * @tls_psk:        the configured PSK, "NVMeTLSkey-1:hh:<base64>:" (hh 00,
 *                  01 SHA-256, 02 SHA-384); its hash picks the cipher suite
 *                  (TLS_AES_128_GCM_SHA256 / TLS_AES_256_GCM_SHA384). The
 *                  retained PSK is derived with the host NQN. Wiped with the
 *                  handle, never logged.
 * @tls_identity:   NVMFD_HOST_TLS_ID_V0 ("NVMe0R0h NQNh NQNc", the TLS PSK
 *                  is the retained PSK), _V1 ("NVMe1R0h NQNh NQNc <digest>",
 *                  the TLS PSK derived from it; the default) or _SPDK (a v0
 *                  identity keyed as SPDK does, doc/tls.md).
 *                  A refused PSK fails the connect with -EACCES.
 */
struct nvmfd_host_ctrl_opts {
	size_t size;
	char hostnqn[NVMFD_NQN_SIZE];
	uint8_t hostid[16];
	bool hdgst;
	bool ddgst;
	uint32_t nr_io_queues;
	uint32_t io_queue_size;
	uint32_t admin_queue_size;
	uint32_t kato_ms;
	uint32_t timeout_ms;
	bool disable_sqflow;
	uint32_t max_io_size;
	char dhchap_secret[NVMFD_HOST_SECRET_MAX];
	char dhchap_ctrl_secret[NVMFD_HOST_SECRET_MAX];
	bool tls;
	char tls_psk[NVMFD_HOST_SECRET_MAX];
	uint8_t tls_identity;
};

#define NVMFD_HOST_TLS_ID_V0 0
#define NVMFD_HOST_TLS_ID_V1 1
#define NVMFD_HOST_TLS_ID_SPDK 2

/**
 * nvmfd_host_ctrl_opts_init() - fill @opts with the defaults listed above.
 * @opts: out.
 * @size: sizeof(*opts) as the caller knows it.
 * Context: any thread.
 */
void nvmfd_host_ctrl_opts_init(struct nvmfd_host_ctrl_opts *opts, size_t size);

/**
 * nvmfd_host_ctrl_create() - allocate an unconnected controller handle.
 * @opts: copied; NULL means defaults.
 * @out:  out: the handle; destroy with nvmfd_host_ctrl_destroy().
 * Return: 0; -ENOMEM; -EINVAL for nonsensical options (queue size < 2 or
 *         > 65536, timeout 0).
 * Context: any thread.
 */
int nvmfd_host_ctrl_create(const struct nvmfd_host_ctrl_opts *opts,
			   struct nvmfd_host_ctrl **out);

/**
 * nvmfd_host_ctrl_connect() - connect the admin queue, enable the
 * controller, identify it and (I/O controllers) its namespaces, and connect
 * the I/O queue pairs. Keep-alive (opts kato_ms) runs from the admin
 * queue's Connect (and authentication) on. The I/O queues connect in parallel, up to 16 at
 * once (one short-lived thread each); when one fails no new connect starts,
 * every queue is closed, and the message names the lowest-numbered queue
 * that failed, the reason and how many others failed, e.g. "I/O queue 3
 * (and 1 more): qid 3: connection closed by the target".
 * @ctrl: created, not yet connected.
 * @trid: borrowed.
 * Return: 0; -ECONNREFUSED, -EHOSTUNREACH, ... (socket errors);
 *         -ETIMEDOUT (no answer within the timeout); -EPROTO (ICResp
 *         mismatch, malformed PDU, wrong CID); -ECONNRESET (peer closed or
 *         sent a C2HTermReq); -EREMOTEIO (a command, e.g. Connect, completed
 *         with an error status); -EIO (CSTS.CFS set after CC.EN);
 *         -EINVAL (bad trid); -ENOMEM; -EALREADY (already connected);
 *         -EACCES (DH-HMAC-CHAP failed: wrong secret, an AUTH_Failure1 from
 *         the controller, a controller that failed bidirectional
 *         authentication, or authentication required but no secret set);
 *         -EOPNOTSUPP (the controller requires secure channel concatenation).
 *         The message is in nvmfd_host_ctrl_errmsg(). On failure the handle
 *         must still be destroyed.
 * Context: any thread; blocks for at most a few timeouts.
 */
int nvmfd_host_ctrl_connect(struct nvmfd_host_ctrl *ctrl, const struct nvmfd_host_trid *trid);

/**
 * nvmfd_host_ctrl_disconnect() - orderly shutdown: close the I/O queues,
 * set CC.SHN to normal, wait for CSTS.SHST complete (bounded), close the
 * admin queue. Outstanding I/O on the qps must have completed.
 * @ctrl: connected controller.
 * Return: 0; -ETIMEDOUT if SHST never reported complete (the connection is
 *         closed anyway); -ENOTCONN if not connected; other admin errors.
 * Context: any thread that does not own an I/O qp being polled.
 */
int nvmfd_host_ctrl_disconnect(struct nvmfd_host_ctrl *ctrl);

/**
 * nvmfd_host_ctrl_destroy() - disconnect if connected and free everything;
 * NULLs *@ctrlp. Safe on NULL and on a half-connected controller.
 * @ctrlp: handle pointer.
 * Context: any thread; no qp of the controller may be in use.
 */
void nvmfd_host_ctrl_destroy(struct nvmfd_host_ctrl **ctrlp);

/**
 * nvmfd_host_ctrl_errmsg() - reason of the last failure on the controller
 * (or of a failure inside one of its qps during connect), "" if none.
 * Return: a string owned by the controller, valid until the next call on it.
 * Context: the thread that saw the failure.
 */
const char *nvmfd_host_ctrl_errmsg(const struct nvmfd_host_ctrl *ctrl);

/**
 * struct nvmfd_host_ctrl_info - what Connect and Identify told us.
 * @cntlid:     controller ID from the admin Connect.
 * @cap:        CAP property.
 * @vs:         VS property (0 if not read).
 * @cntrltype:  Identify CNTRLTYPE (1 I/O, 2 discovery; 0 if not reported).
 * @mdts:       Identify MDTS.
 * @ioccsz:     Identify IOCCSZ (16-byte units).
 * @maxcmd:     Identify MAXCMD.
 * @nn:         Identify NN.
 * @oncs:       Identify ONCS.
 * @maxh2cdata: MAXH2CDATA from the admin queue's ICResp.
 * @nr_io_queues: I/O qps actually connected.
 * @io_queue_size: entries per I/O qp (sqsize + 1); nvmfd_host_qp_depth()
 *               is one less.
 * @in_capsule_max: largest write sent in-capsule on I/O queues (bytes).
 * @sn, @mn, @fr, @subnqn: NUL-terminated, trailing blanks removed.
 * @dhchap_queues: queues (admin and I/O) that completed DH-HMAC-CHAP in the
 *               last connect; 0 when the controller asked for none.
 * @dhchap_hash, @dhchap_dhgroup: HashID (1 SHA-256, 2 SHA-384, 3 SHA-512)
 *               and DH group ID (0 null, 1..5 ffdhe2048..8192) the
 *               controller chose, of the last queue authenticated.
 * @dhchap_bidirectional: the controller proved the controller secret too.
 */
struct nvmfd_host_ctrl_info {
	uint16_t cntlid;
	uint64_t cap;
	uint32_t vs;
	uint8_t cntrltype;
	uint8_t mdts;
	uint32_t ioccsz;
	uint16_t maxcmd;
	uint32_t nn;
	uint16_t oncs;
	uint32_t maxh2cdata;
	uint32_t nr_io_queues;
	uint32_t io_queue_size;
	uint32_t in_capsule_max;
	char sn[21];
	char mn[41];
	char fr[9];
	char subnqn[NVMFD_NQN_SIZE];
	uint32_t dhchap_queues;
	uint8_t dhchap_hash;
	uint8_t dhchap_dhgroup;
	bool dhchap_bidirectional;
	/* TLS: the cipher suite of the admin queue's session ("" plain), and
	 * whether the kernel carries the records (kTLS) */
	char tls_cipher[32];
	bool tls_ktls;
};

/**
 * nvmfd_host_ctrl_get_info() - controller facts gathered at connect.
 * Return: pointer owned by @ctrl, valid until destroy.
 * Context: any thread.
 */
const struct nvmfd_host_ctrl_info *nvmfd_host_ctrl_get_info(const struct nvmfd_host_ctrl *ctrl);

/**
 * nvmfd_host_ctrl_identify_data() - the raw Identify Controller page.
 * Return: pointer owned by @ctrl (4096 bytes), valid until destroy.
 */
const struct nvmfd_id_ctrl *nvmfd_host_ctrl_identify_data(const struct nvmfd_host_ctrl *ctrl);

/**
 * struct nvmfd_host_ns - one active namespace.
 * @nsid:      namespace ID.
 * @nsze:      size in logical blocks.
 * @lba_size:  bytes per logical block.
 * @id:        the raw Identify Namespace page.
 */
struct nvmfd_host_ns {
	uint32_t nsid;
	uint64_t nsze;
	uint32_t lba_size;
	struct nvmfd_id_ns id;
};

/** nvmfd_host_ctrl_ns_count() - active namespaces found at connect. */
uint32_t nvmfd_host_ctrl_ns_count(const struct nvmfd_host_ctrl *ctrl);

/**
 * nvmfd_host_ctrl_ns() - namespace by index (0..count-1).
 * Return: pointer owned by @ctrl, or NULL if @idx is out of range.
 */
const struct nvmfd_host_ns *nvmfd_host_ctrl_ns(const struct nvmfd_host_ctrl *ctrl, uint32_t idx);

/**
 * nvmfd_host_ctrl_find_ns() - namespace by NSID.
 * Return: pointer owned by @ctrl, or NULL if @nsid is not active.
 */
const struct nvmfd_host_ns *nvmfd_host_ctrl_find_ns(const struct nvmfd_host_ctrl *ctrl,
						    uint32_t nsid);

/** nvmfd_host_ctrl_qp_count() - I/O qps connected. */
uint32_t nvmfd_host_ctrl_qp_count(const struct nvmfd_host_ctrl *ctrl);

/**
 * nvmfd_host_ctrl_qp() - I/O qp by index (0..count-1); qid is index + 1.
 * Return: pointer owned by @ctrl, or NULL.
 */
struct nvmfd_host_qp *nvmfd_host_ctrl_qp(struct nvmfd_host_ctrl *ctrl, uint32_t idx);

/**
 * nvmfd_host_ctrl_reauth() - re-authenticate the admin queue: run a new
 * DH-HMAC-CHAP transaction (AUTH_Negotiate .. Success1/Success2, NVMe Base
 * 2.0 §8.13.5) on it with the controller's secrets, while it stays in use.
 * Each queue holds its own authentication, so this covers the admin queue
 * only; re-authenticate each I/O queue with nvmfd_host_qp_reauth() on its
 * owner thread (the Linux host re-authenticates every queue). The
 * controller takes its keys as configured at that moment, so a secret
 * changed on the controller's side since the connect fails here.
 * On failure the controller treats the queue as unauthenticated: it
 * completes every later command but Authentication Send/Receive with
 * AUTHENTICATION REQUIRED (SCT 1h, SC 91h) and closes the queue within its
 * authentication deadline; the library leaves the queue connected, so the
 * caller may finish what it has outstanding and disconnect (or try again).
 * @ctrl: connected controller whose admin queue authenticated at connect.
 * Return: 0; -EACCES (authentication failed: the controller sent an
 *         AUTH_Failure1, e.g. reason 01h "authentication failed" after a
 *         key change, or did not prove the controller secret; the message
 *         in nvmfd_host_ctrl_errmsg() names the reason code);
 *         -EOPNOTSUPP (the admin queue did not authenticate at connect);
 *         -ENOTCONN; -EBUSY (another thread's re-authentication of the
 *         admin queue is running); -EREMOTEIO (Authentication
 *         Send/Receive completed with an error status, which the message
 *         decodes); -ETIMEDOUT and transport errors (the connection then
 *         failed).
 * Context: any thread; blocks for the transaction (tens of ms of DH
 *          arithmetic with ffdhe8192), at most a few timeouts. It holds
 *          the admin mutex neither while it waits (for a free slot when
 *          every one is busy, for each completion) nor during the DH
 *          arithmetic, so keep-alive goes on and the admin helpers of
 *          other threads run meanwhile; while only the slot it keeps is
 *          free they wait for a slot.
 */
int nvmfd_host_ctrl_reauth(struct nvmfd_host_ctrl *ctrl);

/**
 * nvmfd_host_qp_reauth() - re-authenticate one I/O queue, as
 * nvmfd_host_ctrl_reauth() does the admin queue. Commands outstanding on
 * @qp keep completing while the transaction runs: their callbacks run
 * inside this call (and may submit more, which go out as usual), so I/O
 * keeps flowing. One request slot is kept for the transaction's commands:
 * meanwhile submissions that would take the last free slot get -EAGAIN;
 * if every slot is busy the call first waits for one to complete.
 * On failure the queue stays connected but the controller refuses its
 * commands (AUTHENTICATION REQUIRED) and closes it within its
 * authentication deadline; nvmfd_host_qp_errmsg() then holds the reason
 * although the qp has not failed (it is cleared by the next call).
 * @qp: live I/O qp that authenticated at connect.
 * Return: as nvmfd_host_ctrl_reauth(); -EINVAL (NULL or the admin
 *         queue); -EBUSY (called from a completion callback).
 * Context: the qp owner thread, outside callbacks; blocks as
 *          nvmfd_host_ctrl_reauth().
 */
int nvmfd_host_qp_reauth(struct nvmfd_host_qp *qp);

/* ------------------------------------------------------------------ */
/* Blocking admin helpers                                              */
/* ------------------------------------------------------------------ */

/**
 * struct nvmfd_host_cpl - completion of one command.
 * @err:    0, or a negative errno when the command did not complete on the
 *          wire (-ETIMEDOUT, -ECONNRESET, -EPROTO, -ECANCELED).
 * @status: NVMe status (SCT/SC/DNR) when @err is 0; 0 is success. A data
 *          digest mismatch gives NVMFD_SC_DATA_XFER_ERROR.
 * @cqe:    the completion queue entry (synthesized for C2HData SUCCESS).
 */
struct nvmfd_host_cpl {
	int err;
	nvmfd_status_t status;
	struct nvmfd_cqe cqe;
};

/**
 * nvmfd_host_admin_cmd() - run one admin command and wait for it.
 * @ctrl:  connected controller.
 * @sqe:   the command; cid and dptr are filled in by the library. Borrowed.
 * @buf:   data buffer or NULL; borrowed for the call.
 * @len:   bytes at @buf.
 * @write: true if @buf goes host to controller.
 * @cpl:   out: completion (may be NULL).
 * Return: 0 if the command completed with success status; -EREMOTEIO if it
 *         completed with an error status (see @cpl); -ETIMEDOUT; -ENOTCONN;
 *         transport errors as nvmfd_host_ctrl_connect().
 * Context: any thread; serialized with the keep-alive thread, which goes on
 *          sending while this call waits. When every admin request slot is
 *          busy (Keep Alives, other threads' commands, the slot a
 *          re-authentication keeps), it first waits for one, at most the
 *          timeout.
 */
int nvmfd_host_admin_cmd(struct nvmfd_host_ctrl *ctrl, const struct nvmfd_sqe *sqe, void *buf,
			 uint32_t len, bool write, struct nvmfd_host_cpl *cpl);

/**
 * nvmfd_host_get_log_page() - Get Log Page with NUMD/LPO filled in.
 * @ctrl: connected controller.
 * @lid:  log identifier.
 * @nsid: namespace (0xffffffff for controller-wide).
 * @lpo:  byte offset, dword aligned.
 * @buf:  out, @len bytes.
 * @len:  bytes, multiple of 4, > 0.
 * Return: as nvmfd_host_admin_cmd(); -EINVAL for bad @len/@lpo.
 * Context: any thread.
 */
int nvmfd_host_get_log_page(struct nvmfd_host_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			    uint64_t lpo, void *buf, uint32_t len);

/**
 * nvmfd_host_discover() - read the whole discovery log: header first, then
 * header + all entries, retried (up to 3 times) if GENCTR changed between.
 * @ctrl:    controller connected to a discovery subsystem.
 * @hdr:     out: the log header.
 * @entries: out: calloc'd array of hdr->numrec entries (NULL if none);
 *           the caller frees it with free().
 * Return: 0; -EIO if NUMREC is absurd (> 4096) or GENCTR kept changing;
 *         -ENOMEM; admin errors.
 * Context: any thread.
 */
int nvmfd_host_discover(struct nvmfd_host_ctrl *ctrl, struct nvmfd_disc_log_hdr *hdr,
			struct nvmfd_disc_log_entry **entries);

/* ------------------------------------------------------------------ */
/* I/O queue pairs                                                     */
/* ------------------------------------------------------------------ */

/**
 * typedef nvmfd_host_cb - command completion callback.
 * @arg: the submitter's argument.
 * @cpl: completion, valid during the call only.
 * Context: runs inside nvmfd_host_qp_poll() (or a submit/destroy call
 * that fails the queue) on the qp's owner thread. It may submit new
 * commands on the same qp (they are sent when the poll returns); it must
 * not poll, wait on or destroy the qp.
 */
typedef void (*nvmfd_host_cb)(void *arg, const struct nvmfd_host_cpl *cpl);

/**
 * nvmfd_host_qp_read() - submit a Read.
 * @qp:   I/O qp, owner thread only.
 * @nsid: namespace.
 * @slba: first logical block.
 * @nlb:  logical blocks (1..65536), not 0's based.
 * @buf:  nlb * lba_size bytes, borrowed until @cb runs.
 * @cb:   completion callback.
 * @arg:  passed to @cb.
 * Return: 0 (submitted; @cb will run exactly once); -EAGAIN (all slots in
 *         use: poll and retry); -EINVAL (bad nsid, nlb or size over
 *         max_io_size); -ENOTCONN (qp failed, see nvmfd_host_qp_errmsg()).
 * Context: qp owner thread.
 */
int nvmfd_host_qp_read(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba, uint32_t nlb,
		       void *buf, nvmfd_host_cb cb, void *arg);

/** nvmfd_host_qp_write() - submit a Write; as nvmfd_host_qp_read(). @buf is read only. */
int nvmfd_host_qp_write(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba, uint32_t nlb,
			const void *buf, nvmfd_host_cb cb, void *arg);

/** nvmfd_host_qp_flush() - submit a Flush; returns as nvmfd_host_qp_read(). */
int nvmfd_host_qp_flush(struct nvmfd_host_qp *qp, uint32_t nsid, nvmfd_host_cb cb, void *arg);

/** nvmfd_host_qp_write_zeroes() - submit Write Zeroes; as nvmfd_host_qp_read(). */
int nvmfd_host_qp_write_zeroes(struct nvmfd_host_qp *qp, uint32_t nsid, uint64_t slba,
			       uint32_t nlb, nvmfd_host_cb cb, void *arg);

/**
 * nvmfd_host_qp_dsm() - submit Dataset Management.
 * @ranges: @nr (1..256) ranges, borrowed until @cb runs.
 * @attr:   cdw11 attributes (NVMFD_DSM_AD to deallocate).
 * Return: as nvmfd_host_qp_read().
 */
int nvmfd_host_qp_dsm(struct nvmfd_host_qp *qp, uint32_t nsid,
		      const struct nvmfd_dsm_range *ranges, uint32_t nr, uint32_t attr,
		      nvmfd_host_cb cb, void *arg);

/**
 * nvmfd_host_qp_submit_raw() - submit any I/O command.
 * @sqe:   the command; cid, flags and dptr are overwritten. Borrowed.
 * @buf:   data or NULL, borrowed until @cb runs.
 * @len:   bytes.
 * @write: data direction host to controller.
 * Return: as nvmfd_host_qp_read().
 */
int nvmfd_host_qp_submit_raw(struct nvmfd_host_qp *qp, const struct nvmfd_sqe *sqe, void *buf,
			     uint32_t len, bool write, nvmfd_host_cb cb, void *arg);

/**
 * nvmfd_host_qp_plug() - hold commands submitted from now on in the qp's
 * transmit queue instead of writing each to the socket when it is
 * submitted (the block layer's plug): nvmfd_host_qp_unplug(), or the next
 * nvmfd_host_qp_poll()/nvmfd_host_qp_wait(), sends what was held together,
 * in one sendmsg() per batch of up to 64 PDUs. For callers that submit
 * several commands outside a poll (an fio commit): one write instead of
 * one per command. Plugging a plugged qp changes nothing; commands held
 * keep their timeout running.
 * Context: qp owner thread.
 */
void nvmfd_host_qp_plug(struct nvmfd_host_qp *qp);

/**
 * nvmfd_host_qp_unplug() - stop holding and send what was held.
 * Return: 0, or the negative errno of a failed send (the qp has then
 *         failed and completed its commands with cpl->err set, as for
 *         nvmfd_host_qp_poll()).
 * Context: qp owner thread.
 */
int nvmfd_host_qp_unplug(struct nvmfd_host_qp *qp);

/**
 * nvmfd_host_qp_poll() - send what is queued, receive and process PDUs,
 * run completion callbacks; never blocks.
 * @qp:  I/O qp.
 * @max: stop after this many completions (0 = no limit).
 * Return: completions processed (>= 0); a negative errno once the qp has
 *         failed (every outstanding command has then been completed with
 *         cpl->err set): -ECONNRESET (peer closed, C2HTermReq), -EPROTO
 *         (malformed PDU, wrong CID), -ETIMEDOUT (a command exceeded the
 *         timeout).
 * Context: qp owner thread.
 */
int nvmfd_host_qp_poll(struct nvmfd_host_qp *qp, uint32_t max);

/**
 * nvmfd_host_qp_wait() - block until the socket is readable (or writable
 * while sends are pending) or @timeout_ms passes; then poll as
 * nvmfd_host_qp_poll(qp, 0).
 * Return: as nvmfd_host_qp_poll().
 * Context: qp owner thread.
 */
int nvmfd_host_qp_wait(struct nvmfd_host_qp *qp, int timeout_ms);

/** nvmfd_host_qp_outstanding() - commands submitted and not yet completed. */
uint32_t nvmfd_host_qp_outstanding(const struct nvmfd_host_qp *qp);

/** nvmfd_host_qp_depth() - request slots (queue entries) of @qp. */
uint32_t nvmfd_host_qp_depth(const struct nvmfd_host_qp *qp);

/** nvmfd_host_qp_qid() - queue identifier (1..). */
uint16_t nvmfd_host_qp_qid(const struct nvmfd_host_qp *qp);

/**
 * nvmfd_host_qp_fd() - the socket, for the caller's own poll()/epoll.
 * With TLS (opts.tls), bytes already received may wait decrypted inside
 * the library, with no readiness event to come: poll the qp with max 0
 * (which drains them) before sleeping on the fd, or use
 * nvmfd_host_qp_wait(), which knows.
 */
int nvmfd_host_qp_fd(const struct nvmfd_host_qp *qp);

/**
 * nvmfd_host_qp_want_events() - what to wait for on nvmfd_host_qp_fd()
 * before the next nvmfd_host_qp_poll(), for a caller that waits on many
 * qps at once (poll(2)/epoll): POLLIN, plus POLLOUT while sends wait for
 * socket space (a full socket buffer, a tx budget cut).
 * Return: those poll(2) event bits; 0 when input is already buffered in
 *         the library (TLS): poll the qp again without waiting.
 * Context: qp owner thread.
 */
int nvmfd_host_qp_want_events(const struct nvmfd_host_qp *qp);

/**
 * struct nvmfd_host_qp_stats - counters of one qp (since connect).
 * @submitted:   commands submitted.
 * @completed:   callbacks run (any outcome).
 * @failed:      completions with cpl->err or a non-zero status.
 * @tx_pdus:     PDUs sent (ICReq, CapsuleCmd, H2CData, TermReq).
 * @tx_bytes:    bytes sent.
 * @rx_pdus:     PDUs received.
 * @rx_bytes:    bytes received.
 * @h2c_pdus:    H2CData PDUs sent.
 * @c2h_pdus:    C2HData PDUs received.
 * @r2ts:        R2T PDUs received.
 * @sendmsgs:    sendmsg() calls.
 * @send_eagain: sendmsg() calls that returned EAGAIN (socket buffer full).
 * @recvs:       recv() calls that returned data.
 * @polls:       nvmfd_host_qp_poll()/_wait() calls.
 * @empty_polls: of @polls, those that received no byte, sent no byte and
 *               completed nothing.
 * @rx_budget_stops: polls that stopped receiving because the rx budget
 *               (nvmfd_host_qp_set_budget()) was used up.
 * @tx_budget_stops: flushes inside a poll that stopped sending because the
 *               tx budget was used up.
 */
struct nvmfd_host_qp_stats {
	uint64_t submitted;
	uint64_t completed;
	uint64_t failed;
	uint64_t tx_pdus;
	uint64_t tx_bytes;
	uint64_t rx_pdus;
	uint64_t rx_bytes;
	uint64_t h2c_pdus;
	uint64_t c2h_pdus;
	uint64_t r2ts;
	uint64_t sendmsgs;
	uint64_t send_eagain;
	uint64_t recvs;
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t rx_budget_stops;
	uint64_t tx_budget_stops;
};

/**
 * nvmfd_host_qp_set_budget() - bound the work of one poll call.
 * @qp:       I/O qp.
 * @rx_bytes: at most this many bytes are received from the socket in one
 *            nvmfd_host_qp_poll()/_wait() call (0 = unlimited); at least one
 *            recv() is always made. What is left stays in the socket and
 *            makes the next wait return at once.
 * @tx_bytes: about this many bytes are sent by the flushes of one poll
 *            call (0 = unlimited): a flush stops after the sendmsg() that
 *            reached it, and each of the poll's two flushes (before and
 *            after receiving) makes at least one sendmsg(), so a poll may
 *            exceed it by up to two sendmsg() calls; submissions made outside
 *            a poll are sent without limit.
 * Return: 0, -EINVAL (@qp is NULL).
 * Context: qp owner thread.
 */
int nvmfd_host_qp_set_budget(struct nvmfd_host_qp *qp, uint32_t rx_bytes, uint32_t tx_bytes);

/**
 * nvmfd_host_qp_get_stats() - copy the qp's counters.
 * @qp:  queue pair.
 * @out: out.
 * Context: the qp owner, or any thread after the owner stopped using it.
 */
void nvmfd_host_qp_get_stats(const struct nvmfd_host_qp *qp, struct nvmfd_host_qp_stats *out);

/**
 * nvmfd_host_qp_errmsg() - why the qp failed, "" if it has not.
 * Return: string owned by the qp.
 * Context: qp owner thread.
 */
const char *nvmfd_host_qp_errmsg(const struct nvmfd_host_qp *qp);

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * nvmfd_host_status_str() - static name of an NVMe status ("SUCCESS",
 * "INVALID_FIELD", "CONNECT_INVALID_HOST", ... or "SCT x SC y").
 * @status: SCT/SC (DNR/MORE/CRD ignored).
 * @fabrics: decode command-specific codes 0x80.. as Fabrics Connect codes.
 * @buf:    scratch for unknown codes, at least 32 bytes.
 * @len:    bytes at @buf.
 * Return: a static string or @buf.
 * Context: any thread.
 */
const char *nvmfd_host_status_str(nvmfd_status_t status, bool fabrics, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NVMFD_HOST_H */
