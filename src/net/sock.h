/* SPDX-License-Identifier: MIT */
/*
 * sock.h - the socket layer: TCP listen/accept, non-blocking send/recv,
 * SO_INCOMING_CPU and printable addresses, for the target and host
 * transports.
 *
 * Everything is a thin, checked wrapper over the BSD socket calls so that
 * the transports never see errno: every function returns a count >= 0 or
 * -errno. -EAGAIN means "no progress now" (flow control); callers must not
 * log it.
 *
 * Ownership: file descriptors returned here belong to the caller, who
 * close()s them. Buffers and iovecs are borrowed for the call.
 * Context: any thread; no global state.
 */
#ifndef NVMFD_NET_SOCK_H
#define NVMFD_NET_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Backlog of listening sockets, as nvmet-tcp's NVMET_TCP_BACKLOG. */
#define NVMFD_SOCK_BACKLOG 128

/* Room for "[ipv6%scope]:port" plus the terminating NUL. */
#define NVMFD_SOCK_ADDR_STRLEN 80

/**
 * nvmfd__sock_listen() - bind and listen on a numeric TCP address.
 * @addr:    numeric IPv4 or IPv6 address ("0.0.0.0", "::", "127.0.0.1"),
 *           borrowed. An empty string means the IPv4 wildcard.
 * @port:    decimal TCP port; "0" asks the kernel for an ephemeral port.
 * @backlog: listen(2) backlog; <= 0 means NVMFD_SOCK_BACKLOG.
 * @fd_out:  out: the non-blocking, close-on-exec listening socket.
 * @bound:   out (may be NULL): the TCP port actually bound, host order.
 *
 * The socket gets SO_REUSEADDR and TCP_NODELAY (inherited by accepted
 * sockets); an IPv6 wildcard also accepts IPv4-mapped connections.
 *
 * Return: 0; -EINVAL when @addr or @port is not numeric/valid;
 *         -errno from socket/setsockopt/bind/listen (e.g. -EADDRINUSE,
 *         -EACCES, -EADDRNOTAVAIL).
 * Context: any thread.
 */
int nvmfd__sock_listen(const char *addr, const char *port, int backlog, int *fd_out,
		       uint16_t *bound);

/**
 * nvmfd__sock_accept() - accept one pending connection without blocking.
 * @lfd:    listening socket from nvmfd__sock_listen().
 * @fd_out: out: the accepted socket, non-blocking and close-on-exec, with
 *          TCP_NODELAY on and SO_LINGER off (a graceful close: queued data,
 *          e.g. a C2HTermReq, is still delivered).
 * Return: 0; -EAGAIN when no connection is pending; -ECONNABORTED and other
 *         -errno from accept4 (-EMFILE, -ENFILE, -ENOBUFS, -ENOMEM);
 *         -errno from setsockopt (the socket is closed then).
 * Context: any thread.
 */
int nvmfd__sock_accept(int lfd, int *fd_out);

/**
 * nvmfd__sock_connect() - blocking TCP connect to a numeric address
 * (test clients and tools).
 * @addr:   numeric IPv4/IPv6 address, borrowed.
 * @port:   TCP port, host order.
 * @fd_out: out: connected, blocking, close-on-exec socket with TCP_NODELAY.
 * Return: 0, -EINVAL (bad address), -errno from socket/connect.
 * Context: any thread; blocks.
 */
int nvmfd__sock_connect(const char *addr, uint16_t port, int *fd_out);

/**
 * nvmfd__sock_connect_timeout() - non-blocking TCP connect with a deadline
 * (the host library).
 * @host:       numeric IPv4/IPv6 address or host name, borrowed.
 * @port:       decimal TCP port (a service number, never a name), borrowed.
 * @family:     AF_INET, AF_INET6, or AF_UNSPEC for either.
 * @timeout_ms: time for all addresses @host resolves to, tried in order,
 *              in milliseconds; < 0 waits without limit.
 * @fd_out:     out: connected, non-blocking, close-on-exec socket with
 *              TCP_NODELAY.
 * @gai_err:    out (may be NULL): getaddrinfo()'s code when @host/@port
 *              do not resolve (for gai_strerror()), else 0.
 *
 * Return: 0; -EINVAL when @host/@port do not resolve (*@gai_err says why);
 *         -ETIMEDOUT when the deadline passed first; else the last
 *         address's -errno (-ECONNREFUSED, -ENETUNREACH, -EHOSTUNREACH...).
 * Context: any thread; blocks in poll() up to @timeout_ms (resolving a
 * host name may take longer: getaddrinfo() has no deadline).
 */
int nvmfd__sock_connect_timeout(const char *host, const char *port, int family, int timeout_ms,
				int *fd_out, int *gai_err);

/**
 * nvmfd__sock_incoming_cpu() - the CPU that processed the socket's last
 * received packet (SO_INCOMING_CPU).
 * Return: CPU number >= 0; -ENOENT when the kernel does not know yet
 *         (it reports -1); -errno from getsockopt (-ENOPROTOOPT on kernels
 *         without the option).
 */
int nvmfd__sock_incoming_cpu(int fd);

/**
 * nvmfd__sock_peer_is_local() - is the peer of the connected TCP socket @fd
 * on this machine: a loopback address (127.0.0.0/8, ::1, or 127/8 mapped
 * into IPv6), or the same address as the local end (a connection to one
 * of the machine's own addresses goes through the loopback device)?
 * Then the kernel processes the peer's segments on the CPU its sending
 * thread runs on, so SO_INCOMING_CPU names that thread's CPU.
 * Return: 1 local, 0 not (or another address of this machine), -errno
 *         from getsockname/getpeername, -EAFNOSUPPORT.
 */
int nvmfd__sock_peer_is_local(int fd);

/**
 * nvmfd__sock_local_addr() - numeric local address (no port) of @fd.
 * @buf: out: NUL-terminated string, @len bytes (>= INET6_ADDRSTRLEN advised).
 * Return: 0, -ENOSPC (@buf too small), -EAFNOSUPPORT, -errno from getsockname.
 */
int nvmfd__sock_local_addr(int fd, char *buf, size_t len);

/**
 * nvmfd__sock_peer_addr() - "addr:port" ("[addr]:port" for IPv6) of the peer.
 * @buf: out: NUL-terminated string, @len bytes (NVMFD_SOCK_ADDR_STRLEN fits).
 * Return: 0, -ENOSPC, -EAFNOSUPPORT, -errno from getpeername (-ENOTCONN).
 */
int nvmfd__sock_peer_addr(int fd, char *buf, size_t len);

/**
 * nvmfd__sock_local_port() - local TCP port of @fd, host order.
 * Return: port (> 0) or -errno from getsockname.
 */
int nvmfd__sock_local_port(int fd);

/**
 * nvmfd__sock_recv() - non-blocking receive.
 * @fd:  connected socket.
 * @buf: destination of @len bytes.
 * @len: bytes wanted (> 0).
 * Return: bytes received (> 0); 0 at end of stream (peer closed);
 *         -EAGAIN when nothing is available; -errno (-ECONNRESET, ...).
 *         EINTR is retried internally.
 */
ssize_t nvmfd__sock_recv(int fd, void *buf, size_t len);

/**
 * nvmfd__sock_sendv() - non-blocking gather send.
 * @fd:    connected socket.
 * @iov:   @iovcnt entries, borrowed.
 * @more:  more data follows soon: pass MSG_MORE so the kernel may coalesce.
 * Return: bytes sent (> 0, possibly short); -EAGAIN when the send buffer is
 *         full; -errno (-EPIPE, -ECONNRESET, ...). Never raises SIGPIPE.
 *         EINTR is retried internally.
 */
ssize_t nvmfd__sock_sendv(int fd, const struct iovec *iov, int iovcnt, bool more);

#endif /* NVMFD_NET_SOCK_H */
