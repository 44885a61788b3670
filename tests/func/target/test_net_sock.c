// SPDX-License-Identifier: MIT
/* test_net_sock.c - the socket layer (src/net/sock.c) on 127.0.0.1. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/sock.h"
#include "tgt_fixture.h"

static int getopt_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	TF_CHECK_EQ(getsockopt(fd, level, name, &v, &len), 0);
	return v;
}

int main(void)
{
	char buf[256], addr[NVMFD_SOCK_ADDR_STRLEN], peer[NVMFD_SOCK_ADDR_STRLEN];
	struct linger lg;
	socklen_t lglen = sizeof(lg);
	struct iovec iov[3];
	uint16_t port = 0, port2 = 0;
	int lfd, lfd2, cfd, sfd = -1, cpu;

	TF_CHECK_EQ(nvmfd__sock_listen("127.0.0.1", "0", 0, &lfd, &port), 0);
	TF_CHECK(port > 0);
	TF_CHECK_EQ(nvmfd__sock_local_port(lfd), port);
	TF_CHECK_EQ(getopt_int(lfd, SOL_SOCKET, SO_REUSEADDR), 1);
	TF_CHECK_EQ(getopt_int(lfd, IPPROTO_TCP, TCP_NODELAY), 1);
	/* same port again: in use (no SO_REUSEPORT) */
	snprintf(buf, sizeof(buf), "%u", port);
	TF_CHECK_EQ(nvmfd__sock_listen("127.0.0.1", buf, 0, &lfd2, &port2), -EADDRINUSE);
	TF_CHECK_EQ(nvmfd__sock_listen("localhost", "0", 0, &lfd2, NULL), -EINVAL);
	TF_CHECK_EQ(nvmfd__sock_listen("127.0.0.1", "70000", 0, &lfd2, NULL), -EINVAL);
	TF_CHECK_EQ(nvmfd__sock_listen("127.0.0.1", "12x", 0, &lfd2, NULL), -EINVAL);

	/* nothing pending */
	TF_CHECK_EQ(nvmfd__sock_accept(lfd, &sfd), -EAGAIN);

	TF_CHECK_EQ(nvmfd__sock_connect("127.0.0.1", port, &cfd), 0);
	for (int i = 0; i < 1000; i++) {
		int ret = nvmfd__sock_accept(lfd, &sfd);

		if (ret != -EAGAIN) {
			TF_CHECK_EQ(ret, 0);
			break;
		}
		usleep(1000);
	}
	TF_CHECK(sfd >= 0);
	TF_CHECK_EQ(getopt_int(sfd, IPPROTO_TCP, TCP_NODELAY), 1);
	TF_CHECK_EQ(getsockopt(sfd, SOL_SOCKET, SO_LINGER, &lg, &lglen), 0);
	TF_CHECK_EQ(lg.l_onoff, 0);

	TF_CHECK_EQ(nvmfd__sock_local_addr(sfd, addr, sizeof(addr)), 0);
	TF_CHECK(!strcmp(addr, "127.0.0.1"));
	TF_CHECK_EQ(nvmfd__sock_peer_addr(sfd, peer, sizeof(peer)), 0);
	snprintf(buf, sizeof(buf), "127.0.0.1:%d", nvmfd__sock_local_port(cfd));
	TF_CHECK(!strcmp(peer, buf));
	TF_CHECK_EQ(nvmfd__sock_peer_addr(sfd, peer, 8), -ENOSPC);

	/* receive: nothing yet, then a gathered send arrives whole */
	TF_CHECK_EQ(nvmfd__sock_recv(sfd, buf, sizeof(buf)), -EAGAIN);
	iov[0] = (struct iovec){ .iov_base = "abc", .iov_len = 3 };
	iov[1] = (struct iovec){ .iov_base = "", .iov_len = 0 };
	iov[2] = (struct iovec){ .iov_base = "defgh", .iov_len = 5 };
	TF_CHECK_EQ(nvmfd__sock_sendv(cfd, iov, 3, false), 8);
	{
		ssize_t got = 0;

		for (int i = 0; i < 1000 && got < 8; i++) {
			ssize_t n = nvmfd__sock_recv(sfd, buf + got, sizeof(buf) - (size_t)got);

			if (n == -EAGAIN) {
				usleep(1000);
				continue;
			}
			TF_CHECK(n > 0);
			got += n;
		}
		TF_CHECK_EQ(got, 8);
		TF_CHECK(!memcmp(buf, "abcdefgh", 8));
	}
	cpu = nvmfd__sock_incoming_cpu(sfd);
	TF_CHECK(cpu >= 0 || cpu == -ENOENT || cpu == -ENOPROTOOPT);

	/* EOF is 0; sending to a closed peer is -EPIPE/-ECONNRESET, no SIGPIPE */
	close(cfd);
	for (int i = 0; i < 1000; i++) {
		ssize_t n = nvmfd__sock_recv(sfd, buf, sizeof(buf));

		if (n == -EAGAIN) {
			usleep(1000);
			continue;
		}
		TF_CHECK_EQ(n, 0);
		break;
	}
	{
		ssize_t n = 0;

		for (int i = 0; i < 100 && n >= 0; i++)
			n = nvmfd__sock_sendv(sfd, iov, 3, false);
		TF_CHECK(n == -EPIPE || n == -ECONNRESET);
	}
	close(sfd);
	close(lfd);
	return 0;
}
