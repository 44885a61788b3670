// SPDX-License-Identifier: MIT
/*
 * test_sock.c - nvmfd__sock_connect_timeout() on loopback: a connected
 * socket with the promised options (non-blocking, close-on-exec,
 * TCP_NODELAY), IPv6 when the machine has ::1, refused, unresolvable
 * service, bad arguments, and the deadline against a listener whose
 * accept queue is full (its SYNs are dropped, so the connect can only end
 * by the deadline); nvmfd__sock_peer_is_local() on loopback peers and
 * on sockets without a TCP/IP peer.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "net/sock.h"

static void check_opts(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l), 0);
	assert_true(v != 0);
}

/* Connect to a listener on @addr, move bytes both ways through net/sock. */
static void roundtrip(const char *addr, int family)
{
	char port[8], buf[8];
	struct iovec iov = { .iov_base = "ping", .iov_len = 4 };
	uint16_t bound;
	int lfd, cfd = -1, afd = -1, gai = -1, ret;

	ret = nvmfd__sock_listen(addr, "0", 0, &lfd, &bound);
	if (family == AF_INET6 && ret == -EADDRNOTAVAIL)
		skip(); /* no ::1 in this network namespace */
	assert_int_equal(ret, 0);
	snprintf(port, sizeof(port), "%u", bound);
	assert_int_equal(nvmfd__sock_connect_timeout(addr, port, family, 5000, &cfd, &gai), 0);
	assert_int_equal(gai, 0);
	check_opts(cfd);
	assert_int_equal(nvmfd__sock_local_port(lfd), bound);
	for (int i = 0; i < 500 && (ret = nvmfd__sock_accept(lfd, &afd)) == -EAGAIN; i++)
		usleep(10000);
	assert_int_equal(ret, 0);
	assert_int_equal(nvmfd__sock_sendv(cfd, &iov, 1, false), 4);
	for (int i = 0; i < 500 && (ret = (int)nvmfd__sock_recv(afd, buf, sizeof(buf))) == -EAGAIN;
	     i++)
		usleep(10000);
	assert_int_equal(ret, 4);
	assert_memory_equal(buf, "ping", 4);
	/* a loopback peer is on this machine, from both ends; a listener
	 * has no peer */
	assert_int_equal(nvmfd__sock_peer_is_local(afd), 1);
	assert_int_equal(nvmfd__sock_peer_is_local(cfd), 1);
	assert_int_equal(nvmfd__sock_peer_is_local(lfd), -ENOTCONN);
	close(afd);
	close(cfd);
	close(lfd);
}

static void test_connect_ipv4(void **state)
{
	roundtrip("127.0.0.1", AF_INET);
	roundtrip("127.0.0.1", AF_UNSPEC);
}

static void test_connect_ipv6(void **state)
{
	roundtrip("::1", AF_INET6);
}

/* nvmfd__sock_peer_is_local() on what is not a TCP/IP socket. */
static void test_peer_is_local_other_families(void **state)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(nvmfd__sock_peer_is_local(sv[0]), -EAFNOSUPPORT);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(nvmfd__sock_peer_is_local(-1), -EBADF);
}

/* A port held by a bound socket that does not listen: refused. */
static void test_connect_refused(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	char port[8];
	int hold = socket(AF_INET, SOCK_STREAM, 0), fd = -1, gai = -1;

	assert_true(hold >= 0);
	assert_int_equal(bind(hold, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(hold, (struct sockaddr *)&sin, &sl), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	assert_int_equal(nvmfd__sock_connect_timeout("127.0.0.1", port, AF_INET, 5000, &fd, &gai),
			 -ECONNREFUSED);
	assert_int_equal(gai, 0);
	assert_int_equal(fd, -1);
	close(hold);
}

static void test_connect_bad_args(void **state)
{
	int fd = -1, gai = 0;

	/* A service name is refused without a lookup (numeric ports only). */
	assert_int_equal(nvmfd__sock_connect_timeout("127.0.0.1", "nvme", AF_INET, 1000, &fd, &gai),
			 -EINVAL);
	assert_true(gai != 0);
	assert_non_null(gai_strerror(gai));
	assert_int_equal(nvmfd__sock_connect_timeout("127.0.0.1", "1", AF_UNIX, 1000, &fd, NULL),
			 -EINVAL);
	assert_int_equal(nvmfd__sock_connect_timeout(NULL, "1", AF_INET, 1000, &fd, &gai), -EINVAL);
	assert_int_equal(gai, 0);
	assert_int_equal(fd, -1);
}

/* listen(0) takes one connection into the accept queue; nobody accepts, so
 * the next SYN is dropped and only the deadline ends the connect. */
static void test_connect_deadline(void **state)
{
	char port[8];
	uint16_t bound;
	int lfd, first = -1, fd = -1, ret = 0;

	assert_int_equal(nvmfd__sock_listen("127.0.0.1", "0", 1, &lfd, &bound), 0);
	assert_int_equal(listen(lfd, 0), 0);
	snprintf(port, sizeof(port), "%u", bound);
	assert_int_equal(nvmfd__sock_connect_timeout("127.0.0.1", port, AF_INET, 5000, &first, NULL),
			 0);
	/* The accept queue may hold one more on some kernels: fill it. */
	for (int i = 0; i < 4; i++) {
		ret = nvmfd__sock_connect_timeout("127.0.0.1", port, AF_INET, 200, &fd, NULL);
		if (ret != 0)
			break;
		close(fd);
		fd = -1;
	}
	assert_int_equal(ret, -ETIMEDOUT);
	assert_int_equal(fd, -1);
	close(first);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_ipv4),
		cmocka_unit_test(test_connect_ipv6),
		cmocka_unit_test(test_peer_is_local_other_families),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_connect_bad_args),
		cmocka_unit_test(test_connect_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
