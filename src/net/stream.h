/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the byte-stream seam of a connection: plain TCP or TLS.
 *
 * A transport keeps its socket (@fd) and, when the connection runs TLS, a
 * struct nvmfd_tls (@tls, else NULL). Receiving goes through
 * nvmfd_stream_recv(); sending goes through the transmit queue, whose
 * ops->sendv is NULL on a plain connection (net/txq.h then calls
 * nvmfd__sock_sendv() directly) and a function calling
 * nvmfd_stream_sendv() on a TLS one. The plain path stays one predictable
 * branch and the direct socket call: no copy, no indirect call.
 *
 * Readiness after -EAGAIN: plain sockets wait for what they asked for; a
 * TLS connection may need the socket writable to receive (and readable to
 * send) - nvmfd_stream_want_out() says whether to add EPOLLOUT / POLLOUT.
 * Decrypted bytes may wait inside TLS with no readiness event to come:
 * nvmfd_stream_rx_pending().
 */
#ifndef NVMFD_NET_STREAM_H
#define NVMFD_NET_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "net/sock.h"
#include "net/tls.h"

/** nvmfd_stream_recv() - as nvmfd__sock_recv(), through TLS when @tls. */
static inline ssize_t nvmfd_stream_recv(int fd, struct nvmfd_tls *tls, void *buf, size_t len)
{
	if (__builtin_expect(tls == NULL, 1))
		return nvmfd__sock_recv(fd, buf, len);
	return nvmfd_tls_recv(tls, buf, len);
}

/** nvmfd_stream_sendv() - as nvmfd__sock_sendv(), through TLS when @tls
 *  (which takes what it accepts into its own buffer, tls.h). */
static inline ssize_t nvmfd_stream_sendv(int fd, struct nvmfd_tls *tls, const struct iovec *iov,
					 int iovcnt, bool more)
{
	if (__builtin_expect(tls == NULL, 1))
		return nvmfd__sock_sendv(fd, iov, iovcnt, more);
	return nvmfd_tls_sendv(tls, iov, iovcnt);
}

/**
 * nvmfd_stream_flush() - TLS: push bytes accepted earlier out.
 * Return: 0 nothing waits (always for plain); -EAGAIN; -errno.
 */
static inline int nvmfd_stream_flush(struct nvmfd_tls *tls)
{
	if (__builtin_expect(tls == NULL, 1))
		return 0;
	return nvmfd_tls_flush(tls);
}

/** nvmfd_stream_want_out() - TLS: wait for the socket to be writable
 *  (bytes wait to be sent, or the last -EAGAIN was a write). */
static inline bool nvmfd_stream_want_out(const struct nvmfd_tls *tls)
{
	return tls && (nvmfd_tls_wpending(tls) || nvmfd_tls_want_write(tls));
}

/** nvmfd_stream_rx_pending() - TLS: decrypted bytes are waiting inside. */
static inline bool nvmfd_stream_rx_pending(const struct nvmfd_tls *tls)
{
	return tls && nvmfd_tls_rx_pending(tls);
}

#endif /* NVMFD_NET_STREAM_H */
