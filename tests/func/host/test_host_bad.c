// SPDX-License-Identifier: MIT
/*
 * test_host_bad.c - the host library against a hostile fake target.
 *
 * A thread in this process listens on 127.0.0.1 (ephemeral port), accepts
 * the host's admin connection and misbehaves in one way per scenario. The
 * host must fail with the right negative errno and a precise message, and
 * return within a bounded time (short timeouts are configured).
 *
 * Usage: test_host_bad <scenario>; exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nvmfd/host.h>
#include <nvmfd/pdu.h>

#include "../../lib/fake_tgt.h"

struct fake {
	int lfd;
	uint16_t port;
	const char *scenario;
	pthread_t thread;
	int result; /* 0 ok, else the fake saw something unexpected */
};

/* Wait until the host closes (or 5 s). */
static void wait_close(int fd)
{
	uint8_t b[256];

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, FT_TIMEOUT_MS) <= 0)
			return;
		if (recv(fd, b, sizeof(b), 0) <= 0)
			return;
	}
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct nvmfd_tcp_icreq icreq;
	uint8_t buf[2048];
	size_t n;
	int fd;

	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0) {
		f->result = -errno;
		return NULL;
	}
	if (ft_read_full(fd, &icreq, sizeof(icreq)) || icreq.ch.type != NVMFD_TCP_ICREQ ||
	    icreq.ch.plen != 128) {
		f->result = -EPROTO;
		goto out_close;
	}
	if (!strcmp(f->scenario, "garbage")) {
		memset(buf, 0xa5, 128);
		ft_write_full(fd, buf, 128);
	} else if (!strcmp(f->scenario, "http")) {
		static const char http[] = "HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
					   "padding the reply past one common header..........";

		ft_write_full(fd, http, sizeof(http) - 1);
	} else if (!strcmp(f->scenario, "tls-alert")) {
		/* TLS 1.2 records: two fatal alerts (one would be shorter than a
		 * common header), as a TLS server answers what is not a ClientHello */
		static const uint8_t alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46,
						 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46 };

		ft_write_full(fd, alert, sizeof(alert));
	} else if (!strcmp(f->scenario, "close-at-once")) {
		goto out_close;
	} else if (!strcmp(f->scenario, "close-mid-pdu")) {
		n = nvmfd_pdu_build_icresp(buf, 0, 0, 65536);
		ft_write_full(fd, buf, n / 2);
		goto out_close;
	} else if (!strcmp(f->scenario, "no-icresp")) {
		/* Say nothing. */
	} else if (!strcmp(f->scenario, "term")) {
		uint8_t hdr[128];

		memcpy(hdr, &icreq, sizeof(hdr));
		n = nvmfd_pdu_build_term(buf, sizeof(buf), NVMFD_TCP_C2H_TERM,
					 NVMFD_TCP_FES_UNSUPPORTED_PARAM, 10, hdr, sizeof(hdr));
		ft_write_full(fd, buf, n);
	} else if (!strcmp(f->scenario, "bad-maxh2cdata")) {
		n = nvmfd_pdu_build_icresp(buf, 0, 0, 1000);
		ft_write_full(fd, buf, n);
	} else if (!strcmp(f->scenario, "bad-dgst")) {
		n = nvmfd_pdu_build_icresp(buf, 0, NVMFD_TCP_DGST_HDR, 65536);
		ft_write_full(fd, buf, n);
	} else {
		/* Scenarios that get past ICResp: answer the Connect capsule. */
		struct nvmfd_tcp_cmd cmd;
		struct nvmfd_cqe cqe;

		n = nvmfd_pdu_build_icresp(buf, 0, 0, 65536);
		ft_write_full(fd, buf, n);
		if (ft_read_full(fd, &cmd, sizeof(cmd)) || cmd.ch.type != NVMFD_TCP_CMD ||
		    cmd.ch.plen != sizeof(cmd) + sizeof(struct nvmfd_connect_data) ||
		    cmd.sqe.opc != NVMFD_ADMIN_FABRICS ||
		    ft_read_full(fd, buf, sizeof(struct nvmfd_connect_data))) {
			f->result = -EPROTO;
			goto out_close;
		}
		memset(&cqe, 0, sizeof(cqe));
		cqe.cid = cmd.sqe.cid;
		if (!strcmp(f->scenario, "wrong-cid")) {
			cqe.cid = (uint16_t)(cmd.sqe.cid + 5);
		} else if (!strcmp(f->scenario, "connect-reject")) {
			cqe.status = (uint16_t)(NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC,
							     NVMFD_SC_CONNECT_INVALID_PARAM) << 1);
			cqe.result = (1u << 16) | 256; /* IATTR data, IPO subnqn */
		} else if (!strcmp(f->scenario, "garbage-after-connect")) {
			memset(buf, 0x5a, 64);
			buf[0] = NVMFD_TCP_RSP;
			ft_write_full(fd, buf, 64);
			goto out_wait;
		}
		n = nvmfd_pdu_build_rsp(buf, &cqe, false);
		ft_write_full(fd, buf, n);
	}
out_wait:
	wait_close(fd);
out_close:
	close(fd);
	return NULL;
}

static int fake_start(struct fake *f, const char *scenario)
{
	memset(f, 0, sizeof(*f));
	f->scenario = scenario;
	f->lfd = ft_listen(&f->port);
	if (f->lfd < 0)
		return f->lfd;
	if (!strcmp(scenario, "refused")) {
		/* Nobody listens any more: the port refuses. */
		close(f->lfd);
		f->lfd = -1;
		return 0;
	}
	return -pthread_create(&f->thread, NULL, fake_main, f);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct expect {
	const char *scenario;
	int err;
	const char *msg; /* substring of the error message */
};

static const struct expect expects[] = {
	{ "garbage", -EPROTO, "the peer did not answer with an ICResp (first byte 0xa5): "
			      "not an NVMe/TCP target?" },
	{ "http", -EPROTO, "the peer did not answer with an ICResp (first byte 0x48 'H'): "
			   "not an NVMe/TCP target?" },
	{ "tls-alert", -EPROTO, "the target answered the ICReq with TLS records (first bytes "
				"0x15 0x03): the port requires TLS" },
	{ "close-at-once", -ECONNRESET, "connection closed by the target before ICResp (does "
					"the port require TLS?)" },
	{ "close-mid-pdu", -ECONNRESET, "closed by the target before ICResp" },
	{ "no-icresp", -ETIMEDOUT, "timed out waiting for ICResp" },
	{ "term", -ECONNRESET, "C2HTermReq received: FES 0x6" },
	{ "bad-maxh2cdata", -EPROTO, "maxh2cdata" },
	{ "bad-dgst", -EPROTO, "ICResp mismatch: dgst" },
	{ "wrong-cid", -EPROTO, "wrong CID" },
	{ "connect-reject", -EREMOTEIO, "CONNECT_INVALID_PARAM" },
	{ "garbage-after-connect", -EPROTO, "malformed PDU" },
	{ "refused", -ECONNREFUSED, "connection refused" },
};

int main(int argc, char **argv)
{
	const struct expect *e = NULL;
	struct nvmfd_host_ctrl_opts opts;
	struct nvmfd_host_ctrl *ctrl = NULL;
	struct nvmfd_host_trid trid;
	struct fake f;
	char msg[512];
	uint64_t t0, dt;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <scenario>\n", argv[0]);
		return 1;
	}
	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		if (!strcmp(expects[i].scenario, argv[1]))
			e = &expects[i];
	if (!e) {
		fprintf(stderr, "unknown scenario %s\n", argv[1]);
		return 1;
	}
	ret = fake_start(&f, e->scenario);
	if (ret) {
		fprintf(stderr, "fake target: %s\n", strerror(-ret));
		return 1;
	}
	nvmfd_host_ctrl_opts_init(&opts, sizeof(opts));
	opts.timeout_ms = 500;
	opts.kato_ms = 0;
	snprintf(opts.hostnqn, sizeof(opts.hostnqn), "nqn.2026-11.io.nvmfd:test-host");
	ft_trid(&trid, f.port, "nqn.2026-11.io.nvmfd:fake");
	if (nvmfd_host_ctrl_create(&opts, &ctrl)) {
		fprintf(stderr, "ctrl_create failed\n");
		return 1;
	}
	t0 = now_ms();
	ret = nvmfd_host_ctrl_connect(ctrl, &trid);
	dt = now_ms() - t0;
	snprintf(msg, sizeof(msg), "%s", nvmfd_host_ctrl_errmsg(ctrl));
	printf("%s: ret %d (%s) after %llu ms: %s\n", e->scenario, ret, strerror(-ret),
	       (unsigned long long)dt, msg);
	nvmfd_host_ctrl_destroy(&ctrl);
	if (f.lfd >= 0) {
		pthread_join(f.thread, NULL);
		close(f.lfd);
	}
	if (ret != e->err) {
		fprintf(stderr, "FAIL: expected %d (%s)\n", e->err, strerror(-e->err));
		return 1;
	}
	if (!strstr(msg, e->msg)) {
		fprintf(stderr, "FAIL: message lacks \"%s\"\n", e->msg);
		return 1;
	}
	if (f.result) {
		fprintf(stderr, "FAIL: the fake target saw %s\n", strerror(-f.result));
		return 1;
	}
	/* Every wait is bounded: a few 500 ms timeouts at most. */
	if (dt > 5000) {
		fprintf(stderr, "FAIL: took %llu ms\n", (unsigned long long)dt);
		return 1;
	}
	return 0;
}
