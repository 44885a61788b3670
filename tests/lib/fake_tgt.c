// SPDX-License-Identifier: MIT
/*
 * fake_tgt.c - socket plumbing for the fake targets of the host tests
 * (see fake_tgt.h).
 */
#include "fake_tgt.h"
#include "host_check.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ft_listen(uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd, ret;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

int ft_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, FT_TIMEOUT_MS) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, (uint8_t *)buf + got, len - got, 0);
		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		got += (size_t)n;
	}
	return 0;
}

int ft_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, (const uint8_t *)buf + done, len - done, MSG_NOSIGNAL);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		done += (size_t)n;
	}
	return 0;
}

void ft_trid(struct nvmfd_host_trid *t, uint16_t port, const char *subnqn)
{
	char svc[8];

	snprintf(svc, sizeof(svc), "%u", port);
	hc_loop_trid(t, svc, subnqn);
}
