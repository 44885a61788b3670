// SPDX-License-Identifier: MIT
/*
 * sock.c - TCP socket helpers for the transports; see sock.h.
 *
 * Socket options follow what nvmet-tcp sets (doc/protocol-notes.md §1.1): the
 * listener has SO_REUSEADDR and TCP_NODELAY and a backlog of 128; accepted
 * sockets get TCP_NODELAY. Unlike nvmet's sock_no_linger() (an abortive
 * close), SO_LINGER is explicitly off so that close() is graceful and a
 * C2HTermReq queued just before closing reaches the host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal/proc.h"
#include "net/sock.h"

static int sock_setopt_int(int fd, int level, int name, int val)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)) < 0)
		return -errno;
	return 0;
}

/* Parse a numeric address + decimal port into @ss. */
static int sock_parse_addr(const char *addr, const char *port, struct sockaddr_storage *ss,
			   socklen_t *sslen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	unsigned long p;
	char *end;

	if (!addr || !port || !*port)
		return -EINVAL;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p > 65535)
		return -EINVAL;

	memset(ss, 0, sizeof(*ss));
	if (!*addr || inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)p);
		*sslen = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)p);
		*sslen = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

int nvmfd__sock_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

int nvmfd__sock_listen(const char *addr, const char *port, int backlog, int *fd_out,
		       uint16_t *bound)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd, ret;

	ret = sock_parse_addr(addr, port, &ss, &sslen);
	if (ret)
		return ret;
	if (backlog <= 0)
		backlog = NVMFD_SOCK_BACKLOG;

	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	ret = sock_setopt_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if (ret)
		goto out_close;
	ret = sock_setopt_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	if (ret)
		goto out_close;
	if (ss.ss_family == AF_INET6) {
		/* A "::" listener serves IPv4 hosts too, as nvmet does. */
		ret = sock_setopt_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0);
		if (ret)
			goto out_close;
	}
	if (bind(fd, (struct sockaddr *)&ss, sslen) < 0) {
		ret = -errno;
		goto out_close;
	}
	if (listen(fd, backlog) < 0) {
		ret = -errno;
		goto out_close;
	}
	if (bound) {
		ret = nvmfd__sock_local_port(fd);
		if (ret < 0)
			goto out_close;
		*bound = (uint16_t)ret;
	}
	*fd_out = fd;
	return 0;

out_close:
	close(fd);
	return ret;
}

int nvmfd__sock_accept(int lfd, int *fd_out)
{
	struct linger lg = { .l_onoff = 0, .l_linger = 0 };
	int fd, ret;

	do {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;

	ret = sock_setopt_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	if (ret)
		goto out_close;
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) < 0) {
		ret = -errno;
		goto out_close;
	}
	*fd_out = fd;
	return 0;

out_close:
	close(fd);
	return ret;
}

int nvmfd__sock_connect(const char *addr, uint16_t port, int *fd_out)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	char pbuf[8];
	int fd, ret;

	snprintf(pbuf, sizeof(pbuf), "%u", port);
	ret = sock_parse_addr(addr, pbuf, &ss, &sslen);
	if (ret)
		return ret;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	ret = sock_setopt_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	if (ret)
		goto out_close;
	if (connect(fd, (struct sockaddr *)&ss, sslen) < 0) {
		ret = -errno;
		goto out_close;
	}
	*fd_out = fd;
	return 0;

out_close:
	close(fd);
	return ret;
}

static uint64_t sock_now_ms(void)
{
	return nvmfd__mono_ns() / 1000000u;
}

/* Milliseconds left until @deadline_ms (-1: no deadline), for poll(). */
static int sock_left_ms(int64_t deadline_ms)
{
	uint64_t now;

	if (deadline_ms < 0)
		return -1;
	now = sock_now_ms();
	if (now >= (uint64_t)deadline_ms)
		return 0;
	return (uint64_t)deadline_ms - now > INT_MAX ? INT_MAX : (int)((uint64_t)deadline_ms - now);
}

/* Connect a new non-blocking socket to @ai, waiting until @deadline_ms. */
static int sock_connect_one(const struct addrinfo *ai, int64_t deadline_ms, int *fd_out)
{
	int fd, ret, soerr = 0;
	socklen_t sl = sizeof(soerr);
	struct pollfd pfd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	ret = sock_setopt_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	if (ret)
		goto out_close;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto out_connected;
	if (errno != EINPROGRESS) {
		ret = -errno;
		goto out_close;
	}
	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		ret = poll(&pfd, 1, sock_left_ms(deadline_ms));
		if (ret > 0)
			break;
		if (ret == 0) {
			ret = -ETIMEDOUT;
			goto out_close;
		}
		if (errno != EINTR) {
			ret = -errno;
			goto out_close;
		}
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		soerr = errno;
	if (soerr) {
		ret = -soerr;
		goto out_close;
	}
out_connected:
	*fd_out = fd;
	return 0;

out_close:
	close(fd);
	return ret;
}

int nvmfd__sock_connect_timeout(const char *host, const char *port, int family, int timeout_ms,
				int *fd_out, int *gai_err)
{
	int64_t deadline_ms = timeout_ms < 0 ? -1 : (int64_t)(sock_now_ms() + (uint64_t)timeout_ms);
	struct addrinfo hints, *res = NULL, *ai;
	int ret, err = -EHOSTUNREACH;

	if (gai_err)
		*gai_err = 0;
	if (!host || !port || (family != AF_INET && family != AF_INET6 && family != AF_UNSPEC))
		return -EINVAL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = AI_NUMERICSERV;
	ret = getaddrinfo(host, port, &hints, &res);
	if (ret) {
		if (gai_err)
			*gai_err = ret;
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		err = sock_connect_one(ai, deadline_ms, fd_out);
		if (err == 0 || err == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	return err;
}

int nvmfd__sock_incoming_cpu(int fd)
{
	int cpu = -1;
	socklen_t len = sizeof(cpu);

	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &len) < 0)
		return -errno;
	return cpu < 0 ? -ENOENT : cpu;
}

/* @ss is a loopback address (127/8, ::1, ::ffff:127/8). */
static bool sock_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

int nvmfd__sock_peer_is_local(int fd)
{
	struct sockaddr_storage l, p;
	socklen_t ll = sizeof(l), pl = sizeof(p);

	if (getsockname(fd, (struct sockaddr *)&l, &ll) < 0 ||
	    getpeername(fd, (struct sockaddr *)&p, &pl) < 0)
		return -errno;
	if (l.ss_family != p.ss_family ||
	    (p.ss_family != AF_INET && p.ss_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (sock_is_loopback(&p))
		return 1;
	if (p.ss_family == AF_INET)
		return ((struct sockaddr_in *)&l)->sin_addr.s_addr ==
		       ((struct sockaddr_in *)&p)->sin_addr.s_addr;
	return !memcmp(&((struct sockaddr_in6 *)&l)->sin6_addr,
		       &((struct sockaddr_in6 *)&p)->sin6_addr, sizeof(struct in6_addr));
}

/* Format @sa as a numeric address, optionally with ":port". */
static int sock_format(const struct sockaddr_storage *ss, bool with_port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	uint16_t port;
	int n;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		if (!inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a)))
			return -errno;
		port = ntohs(sin->sin_port);
		n = with_port ? snprintf(buf, len, "%s:%u", a, port) : snprintf(buf, len, "%s", a);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		if (!inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a)))
			return -errno;
		port = ntohs(sin6->sin6_port);
		n = with_port ? snprintf(buf, len, "[%s]:%u", a, port) : snprintf(buf, len, "%s", a);
	} else {
		return -EAFNOSUPPORT;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

int nvmfd__sock_local_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	return sock_format(&ss, false, buf, len);
}

int nvmfd__sock_peer_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	return sock_format(&ss, true, buf, len);
}

ssize_t nvmfd__sock_recv(int fd, void *buf, size_t len)
{
	ssize_t n;

	do {
		n = recv(fd, buf, len, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

ssize_t nvmfd__sock_sendv(int fd, const struct iovec *iov, int iovcnt, bool more)
{
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = (size_t)iovcnt,
	};
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0);
	ssize_t n;

	do {
		n = sendmsg(fd, &msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}
