/* SPDX-License-Identifier: MIT */
/*
 * tls.h - TLS 1.3 with external pre-shared keys over a non-blocking TCP
 * socket (NVMe/TCP 1.1 §3.6, TP 8011), on OpenSSL's libssl.
 *
 * Only TLS 1.3, only PSK (no certificates, no session tickets, no early
 * data), key exchange psk_dhe_ke, cipher suites TLS_AES_128_GCM_SHA256
 * (PSK hash SHA-256) and TLS_AES_256_GCM_SHA384 (SHA-384). What the PSK
 * identity means and which key belongs to it is the caller's business
 * (src/auth derives NVMe's identities and keys); this layer moves bytes.
 *
 * Readiness. Everything is non-blocking and fits the callers' existing
 * model (one-shot epoll or poll(2) on the fd): a call that cannot progress
 * returns -EAGAIN, and nvmfd_tls_want_write() then says whether the socket
 * must become writable (EPOLLOUT) rather than readable.
 *
 * Record layer. After the handshake the connection asks for kernel TLS
 * (OpenSSL's SSL_OP_ENABLE_KTLS: TCP_ULP "tls" + SOL_TLS keys). When the
 * kernel has no TLS ULP, OpenSSL keeps the records in user space; both go
 * through the same calls, and nvmfd_tls_info() says which one is used.
 *
 * Sending. nvmfd_tls_sendv() copies what it accepts into the connection's
 * own buffer (up to NVMFD_TLS_STAGE bytes) and returns that count: those
 * bytes are the connection's from then on, exactly like bytes a socket
 * accepted, so a (net/txq.h) sender accounts them as sent. They leave as
 * records at once or, when the socket is full, at the next sendv or
 * nvmfd_tls_flush(); nvmfd_tls_wpending() says some are still waiting.
 *
 * Errors: negative errno. -EAGAIN no progress now (never logged);
 * -ECONNRESET the peer closed (close_notify, EOF, reset); -EACCES the
 * handshake failed (unknown identity, wrong key, no common cipher: the
 * PSK was refused); -EPROTO a TLS protocol error (garbage, bad record);
 * -ENOMEM; -EIO another OpenSSL failure. nvmfd_tls_errstr() has a text.
 * Context: a connection belongs to one thread at a time; a context may be
 * shared by any number of connections and threads.
 */
#ifndef NVMFD_NET_TLS_H
#define NVMFD_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Bytes one connection buffers for sending (one sendv takes at most this). */
#define NVMFD_TLS_STAGE (64 * 1024)
/* Longest PSK identity (NVMe's are "NVMe1R0h " + 2 NQNs + a digest). */
#define NVMFD_TLS_IDENTITY_MAX 640
#define NVMFD_TLS_KEY_MAX 48

struct nvmfd_tls_ctx;
struct nvmfd_tls;

/**
 * nvmfd_tls_psk_find_fn - server side: the key of a PSK identity.
 * @ctx_arg:  the pointer given to nvmfd_tls_ctx_server().
 * @conn_arg: the pointer given to nvmfd_tls_new() for this connection.
 * @identity: the identity the client offered, NUL-terminated (an identity
 *            with a NUL byte inside, or longer than NVMFD_TLS_IDENTITY_MAX,
 *            is refused before the call).
 * @key:      out: the TLS PSK, NVMFD_TLS_KEY_MAX bytes of room.
 * @hash:     out: 1 (SHA-256, TLS_AES_128_GCM_SHA256) or 2 (SHA-384,
 *            TLS_AES_256_GCM_SHA384).
 * Return: key length (32 or 48), or < 0: unknown identity (the handshake
 *         then fails with an alert). Context: inside nvmfd_tls_handshake().
 */
typedef int (*nvmfd_tls_psk_find_fn)(void *ctx_arg, void *conn_arg, const char *identity,
				     uint8_t *key, uint8_t *hash);

/**
 * nvmfd_tls_ctx_server() - a context for accepting connections.
 * @find: identity -> key, borrowed for the context's lifetime.
 * Return: 0, -ENOMEM, -EIO (OpenSSL could not set TLS 1.3 up).
 */
int nvmfd_tls_ctx_server(nvmfd_tls_psk_find_fn find, void *ctx_arg, struct nvmfd_tls_ctx **out);

/** nvmfd_tls_ctx_client() - a context for connecting. Return: 0, -ENOMEM, -EIO. */
int nvmfd_tls_ctx_client(struct nvmfd_tls_ctx **out);

/** nvmfd_tls_ctx_free() - free @ctx (after its connections); NULL is fine. */
void nvmfd_tls_ctx_free(struct nvmfd_tls_ctx *ctx);

/**
 * nvmfd_tls_new() - a TLS connection on the connected, non-blocking @fd
 * (borrowed: the caller closes it after nvmfd_tls_free()).
 * @server:   accept (true) or connect (false).
 * @conn_arg: handed to the context's find callback.
 * Return: 0, -ENOMEM, -EIO.
 */
int nvmfd_tls_new(struct nvmfd_tls_ctx *ctx, int fd, bool server, void *conn_arg,
		  struct nvmfd_tls **out);

/**
 * nvmfd_tls_set_psk() - client: the one identity and key to offer.
 * @hash: 1 (SHA-256) or 2 (SHA-384); it picks the only cipher suite
 *        offered. @key is copied (and wiped with the connection).
 * Return: 0, -EINVAL (lengths, hash), -ENOMEM.
 */
int nvmfd_tls_set_psk(struct nvmfd_tls *t, const char *identity, const uint8_t *key,
		      size_t keylen, uint8_t hash);

/**
 * nvmfd_tls_handshake() - advance the handshake.
 * Return: 0 done (call again: 0); -EAGAIN (see nvmfd_tls_want_write());
 *         -EACCES, -EPROTO, -ECONNRESET, -EIO (the connection is unusable).
 */
int nvmfd_tls_handshake(struct nvmfd_tls *t);

/** nvmfd_tls_want_write() - the last -EAGAIN waits for the socket to be writable. */
bool nvmfd_tls_want_write(const struct nvmfd_tls *t);

/**
 * nvmfd_tls_recv() - decrypted bytes, like nvmfd__sock_recv().
 * Return: > 0 bytes; 0 the peer closed (close_notify or EOF); -EAGAIN;
 *         -ECONNRESET, -EPROTO, -EIO.
 */
ssize_t nvmfd_tls_recv(struct nvmfd_tls *t, void *buf, size_t len);

/** nvmfd_tls_rx_pending() - decrypted bytes wait inside (no readiness event will come). */
bool nvmfd_tls_rx_pending(const struct nvmfd_tls *t);

/**
 * nvmfd_tls_sendv() - take up to NVMFD_TLS_STAGE bytes of @iov (see the
 * file comment). Return: bytes taken (> 0); -EAGAIN (earlier bytes still
 * wait for the socket: nothing taken); -EPIPE/-ECONNRESET, -EIO.
 */
ssize_t nvmfd_tls_sendv(struct nvmfd_tls *t, const struct iovec *iov, int iovcnt);

/**
 * nvmfd_tls_flush() - push buffered bytes out.
 * Return: 0 nothing left; -EAGAIN some left (wait for EPOLLOUT); -errno.
 */
int nvmfd_tls_flush(struct nvmfd_tls *t);

/** nvmfd_tls_wpending() - accepted bytes are not all on the socket yet. */
bool nvmfd_tls_wpending(const struct nvmfd_tls *t);

/**
 * struct nvmfd_tls_info - what a finished handshake agreed.
 * @cipher:   "TLS_AES_128_GCM_SHA256" or "TLS_AES_256_GCM_SHA384".
 * @ktls_tx:  records sent by the kernel (kTLS); false: by OpenSSL.
 * @ktls_rx:  records received by the kernel.
 * @ktls_why: when neither: why ("kernel has no TLS ULP", "OpenSSL built
 *            without kTLS", "not offered by OpenSSL for this cipher").
 */
struct nvmfd_tls_info {
	const char *cipher;
	bool ktls_tx;
	bool ktls_rx;
	const char *ktls_why;
};

/** nvmfd_tls_get_info() - valid after nvmfd_tls_handshake() returned 0. */
void nvmfd_tls_get_info(const struct nvmfd_tls *t, struct nvmfd_tls_info *info);

/** nvmfd_tls_errstr() - text of the last failure ("" if none); never a key. */
const char *nvmfd_tls_errstr(const struct nvmfd_tls *t);

/**
 * nvmfd_tls_free() - send close_notify (best effort, only after a finished
 * handshake, never blocking), wipe the keys, free. NULL is fine. The fd
 * stays open.
 */
void nvmfd_tls_free(struct nvmfd_tls *t);

#endif /* NVMFD_NET_TLS_H */
