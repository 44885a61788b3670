// SPDX-License-Identifier: MIT
/*
 * test_host_fake_io.c - host I/O paths against a scripted fake controller.
 *
 * The fake answers the admin bring-up (Connect, CAP/CSTS/CC, Identify,
 * Number of Queues, shutdown) generically and then plays one I/O-queue
 * script per scenario, to reach paths a well-behaved target rarely takes:
 *
 *   ddgst        C2HData with a wrong data digest: the read completes with
 *                DATA_XFER_ERROR, the stream stays usable (next read ok).
 *   r2t-chunks   8 KiB write, no in-capsule data, MAXH2CDATA 4096: one R2T
 *                must be answered by two H2CData PDUs (LAST on the second)
 *                carrying exactly the written bytes at the right offsets.
 *   c2h-success  C2HData with SUCCESS|LAST and no CapsuleResp: completes
 *                with status 0 and the data in place.
 *   bad-datao    C2HData whose DATAO skips ahead: the qp fails with -EPROTO
 *                and the outstanding read completes with an error.
 *   io-wrong-cid CapsuleResp for a CID that is not outstanding: -EPROTO.
 *   io-timeout   the fake never answers a read: it completes with
 *                -ETIMEDOUT within the configured timeout.
 *   success-not-last, r2t-for-read, r2t-bad-offset, c2h-overflow: other
 *                wire rule violations, each a -EPROTO qp failure.
 *   random-garbage  header-shaped noise: the qp fails, nothing crashes.
 *   term-after-partial  a malformed PDU arrives while an H2CData PDU is
 *                half sent (a sendmsg() shaper in this file cuts the
 *                host's sends): the H2CTermReq must follow the rest of
 *                that PDU, never land inside it.
 *
 * Usage: test_host_fake_io <scenario>; exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvmfd/host.h>
#include <nvmfd/pdu.h>

#include "../../lib/fake_tgt.h"
#include "../../lib/host_check.h"

#define NSZE 1024

/*
 * Socket shaper for term-after-partial. The host library reaches the
 * kernel through sendmsg() and recv() (src/net/sock.c); these definitions
 * in the test binary take their place. On shaper_fd, sendmsg() lets
 * SHAPER_LIMIT bytes through (cutting the call that crosses the limit)
 * and then says EAGAIN until recv() has handed the host more than the R2T
 * (i.e. the malformed PDU): the host then meets the malformed PDU with its
 * H2CData PDU half sent, and the socket open again. Every other socket
 * goes straight to the kernel.
 */
#define SHAPER_LIMIT (72 + 24 + 100) /* Write capsule, H2CData header, 100 data bytes */
static int shaper_fd = -1; /* atomic: set by main, read by both threads */
static size_t shaper_sent, shaper_rcvd;
static unsigned int shaper_eagains;

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct msghdr m;
	struct iovec iov[64];
	size_t left;
	ssize_t n;

	if (fd != __atomic_load_n(&shaper_fd, __ATOMIC_ACQUIRE) ||
	    shaper_rcvd > sizeof(struct nvmfd_tcp_r2t))
		return syscall(SYS_sendmsg, fd, msg, flags);
	if (shaper_sent >= SHAPER_LIMIT) {
		shaper_eagains++;
		errno = EAGAIN;
		return -1;
	}
	m = *msg;
	m.msg_iov = iov;
	m.msg_iovlen = 0;
	left = SHAPER_LIMIT - shaper_sent;
	for (size_t i = 0; i < msg->msg_iovlen && i < 64 && left; i++) {
		iov[i] = msg->msg_iov[i];
		if (iov[i].iov_len > left)
			iov[i].iov_len = left;
		left -= iov[i].iov_len;
		m.msg_iovlen++;
	}
	n = syscall(SYS_sendmsg, fd, &m, flags);
	if (n > 0)
		shaper_sent += (size_t)n;
	return n;
}

ssize_t recv(int fd, void *buf, size_t len, int flags);
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	ssize_t n = syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);

	if (n > 0 && fd == __atomic_load_n(&shaper_fd, __ATOMIC_ACQUIRE))
		shaper_rcvd += (size_t)n;
	return n;
}

struct fake {
	int lfd;
	uint16_t port;
	const char *scenario;
	bool ddgst;
	pthread_t thread;
	char fail[256]; /* what the fake found wrong in the host's PDUs */
};

/* Read one PDU; a bad data digest from the host is recorded as a failure. */
static int read_pdu(struct fake *f, int fd, struct ft_pdu *p)
{
	int r = ft_read_pdu(fd, p);

	if (r == 0 && p->bad_ddgst)
		snprintf(f->fail, sizeof(f->fail), "host sent a bad data digest");
	return r;
}

static void send_c2h(struct fake *f, int fd, uint16_t cid, uint32_t datao, const void *data,
		     uint32_t len, uint8_t flags, bool corrupt)
{
	ft_send_c2h(fd, cid, datao, data, len, flags, f->ddgst, corrupt);
}

/* Answer one admin command; returns 1 after Set Features (I/O queues next). */
static int admin_one(struct fake *f, int fd, struct ft_pdu *p)
{
	static uint8_t id[4096];
	struct nvmfd_sqe *s = &p->sqe;

	memset(id, 0, sizeof(id));
	if (s->opc == NVMFD_ADMIN_FABRICS) {
		struct nvmfd_prop_cmd pc;

		memcpy(&pc, s, sizeof(pc));
		if (pc.fctype == NVMFD_FCTYPE_CONNECT) {
			ft_send_rsp(fd, s->cid, 0, 1, 0, 0);
		} else if (pc.fctype == NVMFD_FCTYPE_PROP_GET && pc.ofst == NVMFD_REG_CAP) {
			uint64_t cap = NVMFD_CAP_BUILD(63, 2);

			ft_send_rsp(fd, s->cid, 0, (uint32_t)cap, (uint32_t)(cap >> 32), 0);
		} else if (pc.fctype == NVMFD_FCTYPE_PROP_GET && pc.ofst == NVMFD_REG_CSTS) {
			ft_send_rsp(fd, s->cid, 0, NVMFD_CSTS_RDY | NVMFD_CSTS_SHST_CMPLT, 0, 0);
		} else if (pc.fctype == NVMFD_FCTYPE_PROP_GET) {
			ft_send_rsp(fd, s->cid, 0, NVMFD_VS_1_3, 0, 0);
		} else {
			ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
		}
		return 0;
	}
	if (s->opc == NVMFD_ADMIN_IDENTIFY) {
		uint8_t cns = (uint8_t)s->cdw10;

		if (cns == NVMFD_ID_CNS_CTRL) {
			struct nvmfd_id_ctrl *c = (struct nvmfd_id_ctrl *)(void *)id;

			c->cntrltype = NVMFD_CNTRLTYPE_IO;
			c->ioccsz = 4; /* no in-capsule data: every write uses R2T */
			c->iorcsz = 1;
			c->maxcmd = 64;
			c->nn = 1;
			c->sgls = NVMFD_SGLS_SUPPORTED;
			memcpy(c->subnqn, "nqn.fake", 8);
		} else if (cns == NVMFD_ID_CNS_NS_ACTIVE_LIST) {
			uint32_t one = 1;

			memcpy(id, &one, 4);
		} else if (cns == NVMFD_ID_CNS_NS) {
			struct nvmfd_id_ns *ns = (struct nvmfd_id_ns *)(void *)id;

			ns->nsze = ns->ncap = ns->nuse = NSZE;
			ns->lbaf[0].ds = 9;
		}
		send_c2h(f, fd, s->cid, 0, id, sizeof(id), NVMFD_TCP_F_DATA_LAST, false);
		ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
		return 0;
	}
	ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
	return s->opc == NVMFD_ADMIN_SET_FEATURES;
}

static void io_script(struct fake *f, int fd)
{
	static uint8_t data[8192], got[8192];
	struct ft_pdu *p = calloc(1, sizeof(*p));

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	if (!p || ft_icreq(fd, 4096) || read_pdu(f, fd, p))
		goto out;
	ft_send_rsp(fd, p->sqe.cid, 1, 1, 0, 0); /* I/O Connect */
	if (read_pdu(f, fd, p) || p->ch.type != NVMFD_TCP_CMD) /* first I/O command */
		goto out;
	if (!strcmp(f->scenario, "ddgst")) {
		send_c2h(f, fd, p->sqe.cid, 0, data, 512, NVMFD_TCP_F_DATA_LAST, true);
		ft_send_rsp(fd, p->sqe.cid, 1, 0, 0, 0);
		if (read_pdu(f, fd, p))
			goto out;
		send_c2h(f, fd, p->sqe.cid, 0, data, 512, NVMFD_TCP_F_DATA_LAST, false);
		ft_send_rsp(fd, p->sqe.cid, 1, 0, 0, 0);
	} else if (!strcmp(f->scenario, "r2t-chunks")) {
		uint16_t cid = p->sqe.cid;
		uint8_t b[64];
		size_t n;

		if (p->sqe.opc != NVMFD_CMD_WRITE || p->dlen != 0 ||
		    p->sqe.dptr.type != NVMFD_SGL_ID_TRANSPORT || p->sqe.dptr.length != 8192) {
			snprintf(f->fail, sizeof(f->fail), "write capsule: opc %u icd %u sgl 0x%x len %u",
				 p->sqe.opc, p->dlen, p->sqe.dptr.type, p->sqe.dptr.length);
			goto out;
		}
		n = nvmfd_pdu_build_r2t(b, cid, 0x1234, 0, 8192, false);
		ft_write_full(fd, b, n);
		for (uint32_t k = 0; k < 2; k++) {
			struct nvmfd_tcp_data d;

			if (read_pdu(f, fd, p))
				goto out;
			memcpy(&d, p->buf, sizeof(d));
			if (d.ch.type != NVMFD_TCP_H2C_DATA || d.cccid != cid || d.ttag != 0x1234 ||
			    d.datao != k * 4096 || d.datal != 4096 || p->dlen != 4096 ||
			    !!(d.ch.flags & NVMFD_TCP_F_DATA_LAST) != (k == 1)) {
				snprintf(f->fail, sizeof(f->fail),
					 "H2CData %u: type %u cccid %u ttag 0x%x datao %u datal %u flags 0x%x",
					 k, d.ch.type, d.cccid, d.ttag, d.datao, d.datal, d.ch.flags);
				goto out;
			}
			memcpy(got + d.datao, p->data, 4096);
		}
		for (size_t i = 0; i < sizeof(got); i++)
			if (got[i] != (uint8_t)(i * 5 + 3)) {
				snprintf(f->fail, sizeof(f->fail), "H2CData byte %zu wrong", i);
				goto out;
			}
		ft_send_rsp(fd, cid, 1, 0, 0, 0);
	} else if (!strcmp(f->scenario, "c2h-success")) {
		send_c2h(f, fd, p->sqe.cid, 0, data, 512, 0, false);
		send_c2h(f, fd, p->sqe.cid, 512, data + 512, 512,
			 NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS, false);
	} else if (!strcmp(f->scenario, "bad-datao")) {
		send_c2h(f, fd, p->sqe.cid, 512, data, 512, NVMFD_TCP_F_DATA_LAST, false);
	} else if (!strcmp(f->scenario, "io-wrong-cid")) {
		ft_send_rsp(fd, (uint16_t)(p->sqe.cid + 3), 1, 0, 0, 0);
	} else if (!strcmp(f->scenario, "success-not-last")) {
		send_c2h(f, fd, p->sqe.cid, 0, data, 512, NVMFD_TCP_F_DATA_SUCCESS, false);
	} else if (!strcmp(f->scenario, "r2t-for-read")) {
		uint8_t b[64];
		size_t n = nvmfd_pdu_build_r2t(b, p->sqe.cid, 1, 0, 512, false);

		ft_write_full(fd, b, n);
	} else if (!strcmp(f->scenario, "r2t-bad-offset")) {
		uint8_t b[64];
		size_t n = nvmfd_pdu_build_r2t(b, p->sqe.cid, 1, 4096, 4096, false);

		ft_write_full(fd, b, n);
	} else if (!strcmp(f->scenario, "c2h-overflow")) {
		send_c2h(f, fd, p->sqe.cid, 0, data, 1024, NVMFD_TCP_F_DATA_LAST, false);
	} else if (!strcmp(f->scenario, "term-after-partial")) {
		static uint8_t rest[8192];
		struct nvmfd_tcp_data d;
		uint8_t b[64];
		size_t n, nrx = 0;
		ssize_t k;

		n = nvmfd_pdu_build_r2t(b, p->sqe.cid, 0x77, 0, 8192, false);
		ft_write_full(fd, b, n);
		if (ft_read_full(fd, &d, sizeof(d)) || d.ch.type != NVMFD_TCP_H2C_DATA ||
		    d.datao != 0 || d.datal != 4096 || d.ch.plen != sizeof(d) + 4096) {
			snprintf(f->fail, sizeof(f->fail), "first H2CData header wrong");
			goto out;
		}
		/* A CapsuleResp header full of nonsense (bad HLEN): the host
		 * must answer with an H2CTermReq. */
		memset(b, 0x5a, sizeof(b));
		b[0] = NVMFD_TCP_RSP;
		ft_write_full(fd, b, sizeof(b));
		/* Everything up to the host's close: the rest of the H2CData
		 * data (intact), then at most one H2CTermReq, nothing else. */
		while (nrx < sizeof(rest) &&
		       (k = recv(fd, rest + nrx, sizeof(rest) - nrx, 0)) > 0)
			nrx += (size_t)k;
		for (size_t i = 0; i < nrx && i < 4096; i++) {
			if (rest[i] != (uint8_t)(i * 5 + 3)) {
				snprintf(f->fail, sizeof(f->fail),
					 "H2CData byte %zu is 0x%02x: something landed inside the PDU",
					 i, rest[i]);
				goto out;
			}
		}
		if (nrx > 4096) {
			struct nvmfd_tcp_ch ch;

			memcpy(&ch, rest + 4096, nrx - 4096 < sizeof(ch) ? nrx - 4096 : sizeof(ch));
			if (nrx - 4096 < sizeof(ch) || ch.type != NVMFD_TCP_H2C_TERM ||
			    ch.plen != nrx - 4096) {
				snprintf(f->fail, sizeof(f->fail),
					 "%zu bytes after the H2CData PDU are not one H2CTermReq",
					 nrx - 4096);
				goto out;
			}
		}
		goto out;
	} else if (!strcmp(f->scenario, "random-garbage")) {
		/* Deterministic noise shaped like PDU headers: must fail cleanly. */
		uint64_t x = 0x243f6a8885a308d3ull;

		for (int k = 0; k < 64; k++) {
			uint8_t b[64];

			for (size_t i = 0; i < sizeof(b); i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				b[i] = (uint8_t)x;
			}
			b[0] = (uint8_t)(k % 10);
			b[2] = 24;
			ft_write_full(fd, b, sizeof(b));
		}
	}
	/* io-timeout: say nothing. Then wait for the host to close. */
	while (read_pdu(f, fd, p) == 0)
		;
out:
	free(p);
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct ft_pdu *p = calloc(1, sizeof(*p));
	int afd, ifd;

	afd = accept(f->lfd, NULL, NULL);
	if (afd < 0 || !p || ft_icreq(afd, 4096))
		goto out;
	for (;;) {
		int r;

		if (read_pdu(f, afd, p) || p->ch.type != NVMFD_TCP_CMD)
			goto out_close;
		r = admin_one(f, afd, p);
		if (r == 1)
			break;
	}
	ifd = accept(f->lfd, NULL, NULL);
	if (ifd >= 0) {
		io_script(f, ifd);
		close(ifd);
	}
	/* Shutdown on the admin queue, until the host closes it. */
	while (read_pdu(f, afd, p) == 0 && p->ch.type == NVMFD_TCP_CMD)
		admin_one(f, afd, p);
out_close:
	close(afd);
out:
	free(p);
	return NULL;
}

static int wait_done(struct nvmfd_host_qp *qp, struct hc_cpl *r)
{
	int ret = 0;

	while (!r->done) {
		ret = nvmfd_host_qp_wait(qp, 100);
		if (ret < 0)
			break;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_trid t;
	struct nvmfd_host_qp *qp;
	static uint8_t buf[8192];
	struct hc_cpl r1 = { 0 }, r2 = { 0 };
	struct fake f;
	const char *sc;
	int ret;

	CHECK(argc == 2, "usage: %s <scenario>", argv[0]);
	sc = argv[1];
	memset(&f, 0, sizeof(f));
	f.scenario = sc;
	f.ddgst = !strcmp(sc, "ddgst");
	f.lfd = ft_listen(&f.port);
	CHECK(f.lfd >= 0, "listen: %s", strerror(-f.lfd));
	CHECK(pthread_create(&f.thread, NULL, fake_main, &f) == 0, "thread");

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.kato_ms = 0;
	o.timeout_ms = 1000;
	o.ddgst = f.ddgst;
	o.io_queue_size = 8;
	ft_trid(&t, f.port, "nqn.fake");
	CHECK(nvmfd_host_ctrl_create(&o, &c) == 0, "create");
	ret = nvmfd_host_ctrl_connect(c, &t);
	CHECK(ret == 0, "connect %d: %s", ret, nvmfd_host_ctrl_errmsg(c));
	CHECK(nvmfd_host_ctrl_get_info(c)->in_capsule_max == 0, "in-capsule %u",
	      nvmfd_host_ctrl_get_info(c)->in_capsule_max);
	CHECK(nvmfd_host_ctrl_find_ns(c, 1) && nvmfd_host_ctrl_find_ns(c, 1)->nsze == NSZE,
	      "namespace");
	qp = nvmfd_host_ctrl_qp(c, 0);
	CHECK(qp, "no I/O qp");

	if (!strcmp(sc, "ddgst")) {
		CHECK(nvmfd_host_qp_read(qp, 1, 0, 1, buf, hc_cpl_cb, &r1) == 0, "submit");
		CHECK(wait_done(qp, &r1) >= 0, "qp: %s", nvmfd_host_qp_errmsg(qp));
		CHECK(r1.cpl.err == 0 && r1.cpl.status == NVMFD_STATUS(0, NVMFD_SC_DATA_XFER_ERROR),
		      "err %d status 0x%x", r1.cpl.err, r1.cpl.status);
		CHECK(nvmfd_host_qp_read(qp, 1, 0, 1, buf, hc_cpl_cb, &r2) == 0, "submit 2");
		CHECK(wait_done(qp, &r2) >= 0, "qp: %s", nvmfd_host_qp_errmsg(qp));
		CHECK(r2.cpl.err == 0 && r2.cpl.status == 0, "second read 0x%x", r2.cpl.status);
		CHECK(buf[511] == (uint8_t)(511 * 13 + 1), "data");
	} else if (!strcmp(sc, "r2t-chunks")) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)(i * 5 + 3);
		CHECK(nvmfd_host_qp_write(qp, 1, 8, 16, buf, hc_cpl_cb, &r1) == 0, "submit");
		CHECK(wait_done(qp, &r1) >= 0, "qp: %s", nvmfd_host_qp_errmsg(qp));
		CHECK(r1.cpl.err == 0 && r1.cpl.status == 0, "write %d 0x%x", r1.cpl.err,
		      r1.cpl.status);
		{
			struct nvmfd_host_qp_stats st;

			nvmfd_host_qp_get_stats(qp, &st);
			CHECK(st.r2ts == 1 && st.h2c_pdus == 2 && st.submitted == 2 &&
				      st.completed == 2 && st.failed == 0,
			      "stats r2ts %llu h2c %llu submitted %llu completed %llu",
			      (unsigned long long)st.r2ts, (unsigned long long)st.h2c_pdus,
			      (unsigned long long)st.submitted, (unsigned long long)st.completed);
		}
	} else if (!strcmp(sc, "c2h-success")) {
		memset(buf, 0, sizeof(buf));
		CHECK(nvmfd_host_qp_read(qp, 1, 0, 2, buf, hc_cpl_cb, &r1) == 0, "submit");
		CHECK(wait_done(qp, &r1) >= 0, "qp: %s", nvmfd_host_qp_errmsg(qp));
		CHECK(r1.cpl.err == 0 && r1.cpl.status == 0, "status");
		CHECK(buf[1023] == (uint8_t)(1023 * 13 + 1) && buf[0] == 1, "data");
		CHECK(nvmfd_host_qp_outstanding(qp) == 0, "slot not freed");
	} else {
		static const struct {
			const char *sc;
			int err;
			const char *msg;
		} ex[] = {
			{ "io-timeout", -ETIMEDOUT, "timed out" },
			{ "bad-datao", -EPROTO, "invalid datao" },
			{ "io-wrong-cid", -EPROTO, "wrong CID" },
			{ "success-not-last", -EPROTO, "invalid flags" }, /* the codec catches it */
			{ "r2t-for-read", -EPROTO, "invalid R2T" },
			{ "r2t-bad-offset", -EPROTO, "invalid R2T" },
			{ "c2h-overflow", -EPROTO, "invalid datao" },
			{ "random-garbage", -EPROTO, "" },
			{ "term-after-partial", -EPROTO, "malformed PDU" },
		};
		int want = -EPROTO;
		const char *msg = "?";
		bool write = !strcmp(sc, "r2t-bad-offset") || !strcmp(sc, "term-after-partial");

		for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
			if (!strcmp(ex[i].sc, sc)) {
				want = ex[i].err;
				msg = ex[i].msg;
			}
		}
		CHECK(strcmp(msg, "?"), "unknown scenario %s", sc);
		if (!strcmp(sc, "random-garbage")) {
			/* Noise may also read as a closed/reset stream. */
			CHECK(nvmfd_host_qp_read(qp, 1, 0, 1, buf, hc_cpl_cb, &r1) == 0, "submit");
			wait_done(qp, &r1);
			CHECK(r1.done && r1.cpl.err < 0, "garbage accepted: err %d", r1.cpl.err);
			printf("%s: %s\n", sc, nvmfd_host_qp_errmsg(qp));
			goto out_disconnect;
		}
		if (!strcmp(sc, "term-after-partial")) {
			for (size_t i = 0; i < sizeof(buf); i++)
				buf[i] = (uint8_t)(i * 5 + 3);
			__atomic_store_n(&shaper_fd, nvmfd_host_qp_fd(qp), __ATOMIC_RELEASE);
		}
		if (write)
			CHECK(nvmfd_host_qp_write(qp, 1, 0, 16, buf, hc_cpl_cb, &r1) == 0, "submit");
		else
			CHECK(nvmfd_host_qp_read(qp, 1, 0, 1, buf, hc_cpl_cb, &r1) == 0, "submit");
		ret = wait_done(qp, &r1);
		CHECK(r1.done && r1.cpl.err == want, "completion err %d, want %d", r1.cpl.err, want);
		CHECK(nvmfd_host_qp_poll(qp, 0) == want, "poll after failure");
		CHECK(strstr(nvmfd_host_qp_errmsg(qp), msg), "message '%s' lacks '%s'",
		      nvmfd_host_qp_errmsg(qp), msg);
		CHECK(nvmfd_host_qp_read(qp, 1, 0, 1, buf, hc_cpl_cb, &r2) == -ENOTCONN, "submit on failed qp");
		printf("%s: %s\n", sc, nvmfd_host_qp_errmsg(qp));
		if (!strcmp(sc, "term-after-partial"))
			CHECK(shaper_sent == SHAPER_LIMIT && shaper_eagains > 0,
			      "the shaper never cut a send (%zu bytes)", shaper_sent);
	}
out_disconnect:
	ret = nvmfd_host_ctrl_disconnect(c);
	CHECK(ret == 0, "disconnect %d: %s", ret, nvmfd_host_ctrl_errmsg(c));
	nvmfd_host_ctrl_destroy(&c);
	pthread_join(f.thread, NULL);
	close(f.lfd);
	CHECK(!f.fail[0], "fake target: %s", f.fail);
	return 0;
}
