// SPDX-License-Identifier: MIT
/*
 * tcp_tls.c - NVMe/TCP over TLS 1.3 with PSKs on a port (NVMe/TCP 1.1
 * §3.6, TP 8011; doc/tls.md): the port's server context, the identity ->
 * TLS PSK lookup, and each connection's first step.
 *
 * A connection on a TLS port starts in TCP_Q_TLS. Its first byte decides:
 * 16h (a TLS handshake record) starts the TLS handshake; anything else is
 * plain NVMe/TCP (an ICReq starts with 00h), which a "not required" port
 * takes as it is and a "required" port refuses: the connection is closed
 * (no C2HTermReq: the host speaks a protocol we do not accept here) and
 * logged once. The handshake runs non-blocking in the queue's io_work and
 * must finish within cfg tls_handshake_timeout_ms of accept (port.c marks
 * the queue, tcp.c closes it). Then the queue waits for the ICReq as any,
 * with every byte going through the TLS connection (net/stream.h).
 *
 * The identity the host offers names the host and the subsystem (NVMe0R0h
 * / NVMe1R0h NQNh NQNc [digest]); the PSK is the host's (hosts[].tls) or
 * the global one (nvmfd.tls); the TLS PSK is derived from it as the
 * identity's version says (src/auth). The NQNs are kept: Connect must name
 * the same host and subsystem (fabrics.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/crypto.h>

#include "internal/auth.h"
#include "internal/log.h"
#include "internal/target.h"
#include "net/stream.h"
#include "target/tcp/tcp_int.h"

#define TLS_RECORD_HANDSHAKE 0x16

/*
 * The TLS PSK of @identity (nvmfd_tls_psk_find_fn). Why a lookup failed is
 * kept in the queue for the handshake's failure message.
 * Context: the queue's io_work (inside nvmfd_tls_handshake()).
 */
static int tcp_tls_find(void *ctx_arg, void *conn_arg, const char *identity, uint8_t *key,
			uint8_t *hash)
{
	struct tcp_port *port = ctx_arg;
	struct tcp_queue *q = conn_arg;
	const struct nvmfd_cfg_psk *found;
	struct nvmfd_cfg_psk cp;
	struct nvmfd_auth_tls_id id;
	struct nvmfd_auth_psk psk;
	uint8_t retained[48];
	char digest[sizeof(id.digest)];
	int rlen, n = -1;

	if (nvmfd_auth_tls_identity_parse(identity, &id)) {
		q->tls_why = "the PSK identity is not an NVMe one (NVMe0R0h/NVMe1R0h NQNh NQNc)";
		return -1;
	}
	nvmfd_tgt_cfg_lock(port->tgt);
	found = nvmfd_cfg_psk_find(port->gcfg, id.hostnqn);
	if (found)
		cp = *found;
	nvmfd_tgt_cfg_unlock(port->tgt);
	if (!found) {
		q->tls_why = "no TLS PSK configured for the identity's host";
		return -1;
	}
	if (nvmfd_auth_psk_parse(cp.psk, &psk) < 0) {
		q->tls_why = "the configured PSK does not parse";
		goto out;
	}
	if (nvmfd_auth_psk_tls_hash(&psk) != id.hashid) {
		q->tls_why = "the identity's hash differs from the configured PSK's";
		goto out;
	}
	rlen = nvmfd_auth_retained_psk(&psk, id.hostnqn, retained);
	if (rlen < 0)
		goto out_fail;
	if (id.version == 1) {
		if (nvmfd_auth_psk_digest(id.hashid, retained, (size_t)rlen, id.hostnqn, id.subnqn,
					  digest, sizeof(digest)) < 0)
			goto out_fail;
		if (strlen(digest) != strlen(id.digest) ||
		    CRYPTO_memcmp(digest, id.digest, strlen(digest))) {
			q->tls_why = "the identity's PSK digest does not match the configured PSK";
			goto out;
		}
		n = nvmfd_auth_tls_psk(1, id.hashid, retained, (size_t)rlen, id.digest, key);
	} else if (cp.v0_spdk) {
		n = nvmfd_auth_tls_psk_spdk(id.hashid, retained, (size_t)rlen, identity, key);
	} else {
		n = nvmfd_auth_tls_psk(0, id.hashid, retained, (size_t)rlen, NULL, key);
	}
	if (n < 0)
		goto out_fail;
	*hash = id.hashid;
	snprintf(q->tls_hostnqn, sizeof(q->tls_hostnqn), "%s", id.hostnqn);
	snprintf(q->tls_subnqn, sizeof(q->tls_subnqn), "%s", id.subnqn);
	q->tls_idver = id.version;
	goto out;
out_fail:
	q->tls_why = "PSK derivation failed";
	n = -1;
out:
	nvmfd_auth_wipe(&cp, sizeof(cp));
	nvmfd_auth_wipe(&psk, sizeof(psk));
	nvmfd_auth_wipe(retained, sizeof(retained));
	return n;
}

int tcp_tls_port_init(struct tcp_port *port)
{
	int ret;

	if (!port->cfg->tls)
		return 0;
	ret = nvmfd_tls_ctx_server(tcp_tls_find, port, &port->tls_ctx);
	if (ret)
		NVMFD_ERR(TCP_COMP, "port %u: cannot set up TLS: %s", port->cfg->portid,
			  strerror(-ret));
	return ret;
}

void tcp_tls_port_fini(struct tcp_port *port)
{
	nvmfd_tls_ctx_free(port->tls_ctx);
	port->tls_ctx = NULL;
}

/* The handshake finished: log, record the NQNs for Connect, wait for ICReq. */
static void tcp_tls_done(struct tcp_queue *q)
{
	struct nvmfd_tls_info info;

	nvmfd_tls_get_info(q->tls, &info);
	q->qp.tls_hostnqn = q->tls_hostnqn;
	q->qp.tls_subnqn = q->tls_subnqn;
	__atomic_store_n(&q->tls_cipher, info.cipher, __ATOMIC_RELEASE);
	q->tls_ktls = info.ktls_tx || info.ktls_rx;
	/* the record layer is the same for every connection: say it once
	 * per port at INFO, then at DEBUG */
	if (!__atomic_exchange_n(&q->port->tls_logged, true, __ATOMIC_RELAXED))
		NVMFD_INFO(TCP_COMP, "port %u: TLS 1.3 %s, records %s%s%s", q->port->cfg->portid,
			   info.cipher,
			   info.ktls_tx && info.ktls_rx ? "in the kernel (kTLS)" :
			   info.ktls_tx		       ? "sent by the kernel (kTLS), received by OpenSSL" :
			   info.ktls_rx		       ? "received by the kernel (kTLS), sent by OpenSSL" :
							 "in user space (OpenSSL)",
			   info.ktls_why ? ": kTLS not used: " : "", info.ktls_why ? info.ktls_why : "");
	NVMFD_DBG(TCP_COMP, "queue %u peer %s: TLS 1.3 %s, identity v%d host %s subsystem %s%s",
		  q->id, q->qp.peer_addr, info.cipher, q->tls_idver, q->tls_hostnqn, q->tls_subnqn,
		  q->tls_ktls ? ", kTLS" : "");
	q->state = TCP_Q_IC_WAIT;
	__atomic_store_n(&q->stage, TCP_STAGE_ACCEPTED, __ATOMIC_RELEASE);
}

int tcp_tls_step(struct tcp_queue *q, bool *progress)
{
	const struct nvmfd_cfg_port *pc = q->port->cfg;
	uint8_t b;
	ssize_t n;
	int ret;

	if (!q->tls) {
		do {
			n = recv(q->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET;
		*progress = true;
		if (b != TLS_RECORD_HANDSHAKE) {
			if (pc->treq == NVMFD_TREQ_SECURE_REQUIRED) {
				NVMFD_WARN_RATELIMIT(TCP_COMP,
						     "queue %u peer %s: port %u requires TLS, the host "
						     "sent plain NVMe/TCP (first byte 0x%02x), closing",
						     q->id, q->qp.peer_addr, pc->portid, b);
				q->state = TCP_Q_CLOSING;
				return -EPROTO;
			}
			/* "not required": plain NVMe/TCP from the ICReq on */
			q->state = TCP_Q_IC_WAIT;
			__atomic_store_n(&q->stage, TCP_STAGE_ACCEPTED, __ATOMIC_RELEASE);
			return 0;
		}
		ret = nvmfd_tls_new(q->port->tls_ctx, q->fd, true, q, &q->tls);
		if (ret)
			return ret;
		q->txops = &tcp_txq_ops_tls;
	}
	ret = nvmfd_tls_handshake(q->tls);
	if (ret == -EAGAIN)
		return 0;
	*progress = true;
	if (ret) {
		NVMFD_WARN_RATELIMIT(TCP_COMP, "queue %u peer %s: TLS handshake failed: %s%s%s, closing",
				     q->id, q->qp.peer_addr, nvmfd_tls_errstr(q->tls),
				     q->tls_why ? ": " : "", q->tls_why ? q->tls_why : "");
		q->state = TCP_Q_CLOSING;
		return -EPROTO;
	}
	tcp_tls_done(q);
	return 0;
}

ssize_t tcp_tls_sendv(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more)
{
	struct tcp_queue *q = owner;

	return nvmfd_stream_sendv(fd, q->tls, iov, iovcnt, more);
}
