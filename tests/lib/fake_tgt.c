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

int ft_read_pdu(int fd, struct ft_pdu *p)
{
	int r = ft_read_full(fd, p->buf, 8);

	if (r)
		return r;
	memcpy(&p->ch, p->buf, 8);
	if (p->ch.plen < 8 || p->ch.plen > sizeof(p->buf))
		return -EPROTO;
	r = ft_read_full(fd, p->buf + 8, p->ch.plen - 8);
	if (r)
		return r;
	if (p->ch.type == NVMFD_TCP_CMD)
		memcpy(&p->sqe, p->buf + 8, sizeof(p->sqe));
	p->data = NULL;
	p->dlen = 0;
	p->bad_ddgst = false;
	if (p->ch.pdo) {
		p->data = p->buf + p->ch.pdo;
		p->dlen = p->ch.plen - p->ch.pdo - ((p->ch.flags & NVMFD_TCP_F_DDGST) ? 4 : 0);
		if ((p->ch.flags & NVMFD_TCP_F_DDGST)) {
			uint32_t d;

			memcpy(&d, p->data + p->dlen, 4);
			p->bad_ddgst = d != nvmfd_digest(p->data, p->dlen);
		}
	}
	return 0;
}

void ft_send_rsp(int fd, uint16_t cid, uint16_t sqid, uint32_t result, uint32_t dw1,
		 nvmfd_status_t st)
{
	struct nvmfd_cqe cqe;
	uint8_t b[64];
	size_t n;

	memset(&cqe, 0, sizeof(cqe));
	cqe.cid = cid;
	cqe.sqid = sqid;
	cqe.result = result;
	cqe.dw1 = dw1;
	cqe.status = (uint16_t)(st << 1);
	n = nvmfd_pdu_build_rsp(b, &cqe, false);
	ft_write_full(fd, b, n);
}

void ft_send_c2h(int fd, uint16_t cid, uint32_t datao, const void *data, uint32_t len,
		 uint8_t flags, bool ddgst, bool corrupt)
{
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN];
	size_t n = nvmfd_pdu_build_data(b, NVMFD_TCP_C2H_DATA, flags, cid, 0, datao, len, false,
					ddgst);
	uint32_t d = nvmfd_digest(data, len) ^ (corrupt ? 1u : 0u);

	ft_write_full(fd, b, n);
	ft_write_full(fd, data, len);
	if (ddgst)
		ft_write_full(fd, &d, 4);
}

int ft_icreq(int fd, uint32_t maxh2cdata)
{
	struct nvmfd_tcp_icreq ic;
	uint8_t b[128];
	size_t n;

	if (ft_read_full(fd, &ic, sizeof(ic)) || ic.ch.type != NVMFD_TCP_ICREQ)
		return -EPROTO;
	n = nvmfd_pdu_build_icresp(b, 0, ic.dgst, maxh2cdata);
	ft_write_full(fd, b, n);
	return 0;
}
