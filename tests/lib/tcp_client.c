// SPDX-License-Identifier: MIT
/* tcp_client.c - raw blocking NVMe/TCP test host; see tcp_client.h. */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "net/sock.h"
#include "tcp_client.h"

#define TC_MAX_DATA (16u << 20)

int tc_attach(struct tc_conn *c, int fd)
{
	struct nvmfd_pdu_rx_opts opts = {
		.role = NVMFD_PDU_ROLE_HOST,
		.max_data = TC_MAX_DATA,
	};
	struct timeval tv = {
		.tv_sec = TC_TIMEOUT_MS / 1000,
		.tv_usec = (TC_TIMEOUT_MS % 1000) * 1000,
	};
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->next_cid = 1;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		ret = -errno;
		tc_close(c);
		return ret;
	}
	nvmfd_pdu_rx_init(&c->rx, &opts);
	return 0;
}

int tc_open(struct tc_conn *c, const char *addr, uint16_t port)
{
	int fd, ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	ret = nvmfd__sock_connect(addr, port, &fd);
	if (ret)
		return ret;
	return tc_attach(c, fd);
}

void tc_close(struct tc_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int tc_send_raw(struct tc_conn *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		p += n;
		len -= (size_t)n;
		c->bytes_sent += (uint64_t)n;
	}
	return 0;
}

static int tc_recv_exact(struct tc_conn *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(c->fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
		c->bytes_rcvd += (uint64_t)n;
	}
	return 0;
}

static int tc_recv_term(struct tc_conn *c, const uint8_t ch8[8])
{
	const struct nvmfd_tcp_ch *ch = (const void *)ch8;
	uint8_t buf[sizeof(struct nvmfd_tcp_term) + NVMFD_TCP_TERM_ERR_DATA_MAX];
	const struct nvmfd_tcp_term *t = (const void *)buf;
	uint32_t plen = le32toh(ch->plen);
	int ret;

	if (plen < sizeof(*t) || plen > sizeof(buf))
		return -EPROTO;
	memcpy(buf, ch8, 8);
	ret = tc_recv_exact(c, buf + 8, plen - 8);
	if (ret)
		return ret;
	c->got_term = true;
	c->pdus_rcvd++;
	c->term_fes = le16toh(t->fes);
	c->term_fei = le32toh(t->fei);
	c->term_hdr_len = plen - (uint32_t)sizeof(*t);
	memcpy(c->term_hdr, buf + sizeof(*t), c->term_hdr_len);
	return TC_TERM;
}

static int tc_on_event(struct tc_conn *c, enum nvmfd_pdu_ev ev, uint8_t *hdr, void *data,
		       uint32_t cap, bool *done)
{
	const struct nvmfd_tcp_ch *ch = nvmfd_pdu_rx_ch(&c->rx);

	switch (ev) {
	case NVMFD_PDU_EV_NEED_MORE:
		return 0;
	case NVMFD_PDU_EV_HDR:
		if (ch->type == NVMFD_TCP_C2H_DATA) {
			const struct nvmfd_tcp_data *d = nvmfd_pdu_rx_hdr(&c->rx);
			uint64_t end = (uint64_t)le32toh(d->datao) + le32toh(d->datal);
			uint16_t cid = le16toh(d->cccid);

			if (c->cid_data && cid < c->cid_data_n) {
				data = c->cid_data[cid];
				cap = c->cid_data_cap;
			}

			if (!data || end > cap)
				return -EPROTO;
			nvmfd_pdu_rx_set_data(&c->rx, (uint8_t *)data + le32toh(d->datao));
		}
		return 0;
	case NVMFD_PDU_EV_PDU:
		memcpy(hdr, nvmfd_pdu_rx_hdr(&c->rx), ch->hlen);
		*done = true;
		c->pdus_rcvd++;
		return 0;
	case NVMFD_PDU_EV_ERROR:
	default:
		return -EPROTO;
	}
}

int tc_recv_pdu(struct tc_conn *c, uint8_t *hdr, void *data, uint32_t cap)
{
	uint8_t ch8[8], scratch[4096];
	bool done = false;
	size_t off = 0, used;
	int ret;

	ret = tc_recv_exact(c, ch8, sizeof(ch8));
	if (ret)
		return ret;
	if (((const struct nvmfd_tcp_ch *)(const void *)ch8)->type == NVMFD_TCP_C2H_TERM)
		return tc_recv_term(c, ch8);
	while (off < sizeof(ch8) && !done) {
		enum nvmfd_pdu_ev ev = nvmfd_pdu_rx_feed(&c->rx, ch8 + off, sizeof(ch8) - off, &used);

		off += used;
		ret = tc_on_event(c, ev, hdr, data, cap, &done);
		if (ret)
			return ret;
	}
	while (!done) {
		uint8_t *ptr;
		size_t want = nvmfd_pdu_rx_want(&c->rx, &ptr);
		enum nvmfd_pdu_ev ev;

		if (!want)
			return -EPROTO;
		if (!ptr) {
			ptr = scratch;
			if (want > sizeof(scratch))
				want = sizeof(scratch);
		}
		ret = tc_recv_exact(c, ptr, want);
		if (ret)
			return ret;
		if (ptr == scratch) {
			/* discarded bytes (padding, unwanted data): feed them */
			size_t o = 0;

			while (o < want && !done) {
				ev = nvmfd_pdu_rx_feed(&c->rx, scratch + o, want - o, &used);
				o += used;
				ret = tc_on_event(c, ev, hdr, data, cap, &done);
				if (ret)
					return ret;
			}
			continue;
		}
		ev = nvmfd_pdu_rx_advance(&c->rx, want);
		ret = tc_on_event(c, ev, hdr, data, cap, &done);
		if (ret)
			return ret;
	}
	return 0;
}

int tc_ic(struct tc_conn *c, bool hdgst, bool ddgst)
{
	uint8_t buf[NVMFD_TCP_MAX_HDR_DGST_LEN];
	const struct nvmfd_tcp_icresp *ic = (const void *)buf;
	uint8_t dgst = (hdgst ? NVMFD_TCP_DGST_HDR : 0) | (ddgst ? NVMFD_TCP_DGST_DATA : 0);
	size_t len;
	int ret;

	len = nvmfd_pdu_build_icreq(buf, 0, dgst, 0);
	ret = tc_send_raw(c, buf, len);
	if (ret)
		return ret;
	c->pdus_sent++;
	ret = tc_recv_pdu(c, buf, NULL, 0);
	if (ret)
		return ret;
	if (ic->ch.type != NVMFD_TCP_ICRESP || le32toh(ic->ch.plen) != 128 || ic->pfv != 0 ||
	    ic->cpda != 0 || ic->dgst != dgst)
		return -EPROTO;
	c->maxh2cdata = le32toh(ic->maxh2cdata);
	if (c->maxh2cdata < NVMFD_TCP_MIN_MAXH2CDATA || c->maxh2cdata % 4)
		return -EPROTO;
	c->hdgst = hdgst;
	c->ddgst = ddgst;
	nvmfd_pdu_rx_ic_done(&c->rx, hdgst, ddgst, 0);
	return 0;
}

int tc_open_ic(struct tc_conn *c, const char *addr, uint16_t port, bool hdgst, bool ddgst)
{
	int ret = tc_open(c, addr, port);

	if (ret)
		return ret;
	ret = tc_ic(c, hdgst, ddgst);
	if (ret)
		tc_close(c);
	return ret;
}

static int tc_send_pdu(struct tc_conn *c, const uint8_t *hdr, size_t hlen, const void *data,
		       uint32_t dlen)
{
	int ret = tc_send_raw(c, hdr, hlen);

	if (ret)
		return ret;
	c->pdus_sent++;
	if (!dlen)
		return 0;
	ret = tc_send_raw(c, data, dlen);
	if (ret || !c->ddgst)
		return ret;
	{
		uint32_t dg = htole32(nvmfd_digest(data, dlen));

		return tc_send_raw(c, &dg, sizeof(dg));
	}
}

static int tc_answer_r2t(struct tc_conn *c, const struct nvmfd_tcp_r2t *r2t, uint16_t cid,
			 const uint8_t *data, uint32_t len)
{
	uint32_t off = le32toh(r2t->r2to), r2tl = le32toh(r2t->r2tl), end;
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];

	if (le16toh(r2t->cccid) != cid || !r2tl || (uint64_t)off + r2tl > len)
		return -EPROTO;
	c->r2ts++;
	end = off + r2tl;
	while (off < end) {
		uint32_t chunk = end - off < c->maxh2cdata ? end - off : c->maxh2cdata;
		uint8_t fl = off + chunk == end ? NVMFD_TCP_F_DATA_LAST : 0;
		size_t hlen = nvmfd_pdu_build_data(hdr, NVMFD_TCP_H2C_DATA, fl, cid,
						   le16toh(r2t->ttag), off, chunk, c->hdgst,
						   c->ddgst);
		int ret = tc_send_pdu(c, hdr, hlen, data + off, chunk);

		if (ret)
			return ret;
		c->h2c_pdus++;
		off += chunk;
	}
	return 0;
}

int tc_cmd(struct tc_conn *c, struct nvmfd_sqe *sqe, void *data, uint32_t len, bool write,
	   unsigned int flags, struct nvmfd_cqe *cqe)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	bool icd;
	uint16_t cid;
	size_t hlen;
	int ret;

	c->r2ts = 0;
	c->c2h_pdus = 0;
	c->h2c_pdus = 0;
	c->success_flag = false;
	cid = c->next_cid++;
	if (c->next_cid == 0xffff)
		c->next_cid = 1;
	sqe->cid = cid;
	sqe->flags = (uint8_t)((sqe->flags & ~NVMFD_SQE_FLAGS_PSDT_MASK) |
			       NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG);
	icd = write && len && ((flags & TC_F_ICD) || (!(flags & TC_F_R2T) && len <= c->icd_max));
	memset(&sqe->dptr, 0, sizeof(sqe->dptr));
	sqe->dptr.length = htole32(len);
	sqe->dptr.type = icd ? NVMFD_SGL_ID_INCAPSULE : NVMFD_SGL_ID_TRANSPORT;
	hlen = nvmfd_pdu_build_cmd(hdr, sqe, icd ? len : 0, c->hdgst, c->ddgst);
	ret = tc_send_pdu(c, hdr, hlen, data, icd ? len : 0);
	if (ret)
		return ret;

	for (;;) {
		const struct nvmfd_tcp_ch *ch = (const void *)hdr;

		ret = tc_recv_pdu(c, hdr, write ? NULL : data, write ? 0 : len);
		if (ret)
			return ret;
		switch (ch->type) {
		case NVMFD_TCP_R2T:
			if (!write || icd)
				return -EPROTO;
			ret = tc_answer_r2t(c, (const void *)hdr, cid, data, len);
			if (ret)
				return ret;
			break;
		case NVMFD_TCP_C2H_DATA: {
			const struct nvmfd_tcp_data *d = (const void *)hdr;

			if (le16toh(d->cccid) != cid)
				return -EPROTO;
			c->c2h_pdus++;
			if (ch->flags & NVMFD_TCP_F_DATA_SUCCESS) {
				if (!(ch->flags & NVMFD_TCP_F_DATA_LAST))
					return -EPROTO;
				memset(cqe, 0, sizeof(*cqe));
				cqe->cid = cid;
				c->success_flag = true;
				return 0;
			}
			break;
		}
		case NVMFD_TCP_RSP:
			memcpy(cqe, &((const struct nvmfd_tcp_rsp *)(const void *)hdr)->cqe,
			       sizeof(*cqe));
			if (cqe->cid != cid)
				return -EPROTO;
			return 0;
		default:
			return -EPROTO;
		}
	}
}

int tc_connect(struct tc_conn *c, uint16_t qid, uint16_t sqsize, uint8_t cattr,
	       const char *subnqn, const char *hostnqn, uint16_t cntlid, struct nvmfd_cqe *cqe)
{
	struct nvmfd_connect_data cd;
	struct nvmfd_sqe sqe;
	struct nvmfd_connect_cmd *cc = (void *)&sqe;
	uint32_t save = c->icd_max;
	int ret;

	memset(&sqe, 0, sizeof(sqe));
	memset(&cd, 0, sizeof(cd));
	cc->opc = NVMFD_ADMIN_FABRICS;
	cc->fctype = NVMFD_FCTYPE_CONNECT;
	cc->qid = htole16(qid);
	cc->sqsize = htole16(sqsize);
	cc->cattr = cattr;
	cc->kato = htole32(c->kato_ms);
	for (int i = 0; i < 16; i++)
		cd.hostid[i] = (uint8_t)(0x10 + i);
	cd.cntlid = htole16(cntlid);
	snprintf(cd.subnqn, sizeof(cd.subnqn), "%s", subnqn);
	snprintf(cd.hostnqn, sizeof(cd.hostnqn), "%s", hostnqn);
	/* Linux hosts always send the Connect data in the capsule. */
	ret = tc_cmd(c, &sqe, &cd, sizeof(cd), true, TC_F_ICD, cqe);
	c->icd_max = save;
	return ret;
}

static int tc_prop(struct tc_conn *c, uint8_t fctype, uint32_t ofst, bool size8, uint64_t val,
		   struct nvmfd_cqe *cqe)
{
	struct nvmfd_sqe sqe;
	struct nvmfd_prop_cmd *p = (void *)&sqe;

	memset(&sqe, 0, sizeof(sqe));
	p->opc = NVMFD_ADMIN_FABRICS;
	p->fctype = fctype;
	p->attrib = size8 ? NVMFD_PROP_ATTRIB_SIZE_8 : NVMFD_PROP_ATTRIB_SIZE_4;
	p->ofst = htole32(ofst);
	p->value = htole64(val);
	return tc_cmd(c, &sqe, NULL, 0, false, 0, cqe);
}

int tc_prop_get(struct tc_conn *c, uint32_t ofst, bool size8, uint64_t *val,
		struct nvmfd_cqe *cqe)
{
	int ret = tc_prop(c, NVMFD_FCTYPE_PROP_GET, ofst, size8, 0, cqe);

	if (!ret)
		*val = ((uint64_t)le32toh(cqe->dw1) << 32) | le32toh(cqe->result);
	return ret;
}

int tc_prop_set(struct tc_conn *c, uint32_t ofst, bool size8, uint64_t val,
		struct nvmfd_cqe *cqe)
{
	return tc_prop(c, NVMFD_FCTYPE_PROP_SET, ofst, size8, val, cqe);
}

int tc_identify(struct tc_conn *c, uint8_t cns, uint32_t nsid, void *buf4k,
		struct nvmfd_cqe *cqe)
{
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_IDENTIFY;
	sqe.nsid = htole32(nsid);
	sqe.cdw10 = htole32(cns);
	return tc_cmd(c, &sqe, buf4k, NVMFD_IDENTIFY_DATA_SIZE, false, 0, cqe);
}

int tc_rw(struct tc_conn *c, bool write, uint32_t nsid, uint64_t slba, uint32_t nlb, void *buf,
	  uint32_t len, unsigned int flags, struct nvmfd_cqe *cqe)
{
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = write ? NVMFD_CMD_WRITE : NVMFD_CMD_READ;
	sqe.nsid = htole32(nsid);
	sqe.cdw10 = htole32((uint32_t)slba);
	sqe.cdw11 = htole32((uint32_t)(slba >> 32));
	sqe.cdw12 = htole32((nlb - 1) & 0xffff);
	return tc_cmd(c, &sqe, buf, len, write, flags, cqe);
}

int tc_step(int ret, const struct nvmfd_cqe *cqe)
{
	if (ret)
		return ret;
	if (tc_status(cqe))
		return 0x10000 | tc_status(cqe);
	return 0;
}

int tc_admin_enable(struct tc_conn *c, const char *addr, uint16_t port, const char *subnqn,
		    bool hdgst, bool ddgst, uint16_t *cntlid)
{
	struct nvmfd_cqe cqe;
	uint64_t csts = 0;
	int ret;

	ret = tc_open_ic(c, addr, port, hdgst, ddgst);
	if (ret)
		return ret;
	ret = tc_step(tc_connect(c, 0, 31, 0, subnqn, TC_HOSTNQN, 0xffff, &cqe), &cqe);
	if (ret)
		return ret;
	*cntlid = (uint16_t)(le32toh(cqe.result) & 0xffff);
	/* CC: EN, IOSQES 6 (64 B), IOCQES 4 (16 B), as the Linux host. */
	ret = tc_step(tc_prop_set(c, NVMFD_REG_CC, false, 1u | (6u << 16) | (4u << 20), &cqe),
		      &cqe);
	if (ret)
		return ret;
	for (int i = 0; i < 500; i++) {
		ret = tc_step(tc_prop_get(c, NVMFD_REG_CSTS, false, &csts, &cqe), &cqe);
		if (ret)
			return ret;
		if (csts & NVMFD_CSTS_RDY) {
			struct nvmfd_sqe sqe;

			/* Number of Queues: 4 I/O queues, as a host asks first. */
			memset(&sqe, 0, sizeof(sqe));
			sqe.opc = NVMFD_ADMIN_SET_FEATURES;
			sqe.cdw10 = htole32(NVMFD_FEAT_NUM_QUEUES);
			sqe.cdw11 = htole32(3u | (3u << 16));
			return tc_step(tc_cmd(c, &sqe, NULL, 0, false, 0, &cqe), &cqe);
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

int tc_io_connect(struct tc_conn *c, const char *addr, uint16_t port, const char *subnqn,
		  uint16_t cntlid, uint16_t qid, uint16_t sqsize, uint8_t cattr, bool hdgst,
		  bool ddgst)
{
	struct nvmfd_cqe cqe;
	int ret;

	ret = tc_open_ic(c, addr, port, hdgst, ddgst);
	if (ret)
		return ret;
	return tc_step(tc_connect(c, qid, sqsize, cattr, subnqn, TC_HOSTNQN, cntlid, &cqe), &cqe);
}

int tc_expect_term(struct tc_conn *c)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	int ret;

	for (;;) {
		ret = tc_recv_pdu(c, hdr, NULL, 0);
		if (ret == TC_TERM)
			return TC_TERM;
		if (ret == -ECONNRESET || ret == -EPIPE)
			return 0;
		if (ret == -ETIMEDOUT)
			return ret;
		if (ret)
			return tc_wait_eof(c) == 0 ? 0 : -ETIMEDOUT;
	}
}

int tc_wait_eof(struct tc_conn *c)
{
	uint8_t buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n == 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : (errno == ECONNRESET ? 0 : -errno);
	}
}

void tc_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

int tc_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory stream's own fd */
}

int tc_verify_io(const char *addr, uint16_t port, const char *subnqn, uint32_t seed)
{
	static uint8_t wbuf[65536], rbuf[65536];
	struct tc_conn adm, io;
	struct nvmfd_cqe cqe;
	uint16_t cntlid = 0;
	int ret;

	ret = tc_admin_enable(&adm, addr, port, subnqn, false, false, &cntlid);
	if (ret)
		goto out_adm;
	ret = tc_io_connect(&io, addr, port, subnqn, cntlid, 1, 31, 0, false, false);
	if (ret)
		goto out_io;
	tc_pattern(wbuf, sizeof(wbuf), seed);
	io.icd_max = 8192;
	/* in-capsule 4 KiB at LBA 8, R2T 64 KiB at LBA 64 */
	ret = tc_step(tc_rw(&io, true, 1, 8, 8, wbuf, 4096, 0, &cqe), &cqe);
	if (ret)
		goto out_io;
	ret = tc_step(tc_rw(&io, true, 1, 64, 128, wbuf, sizeof(wbuf), 0, &cqe), &cqe);
	if (ret)
		goto out_io;
	memset(rbuf, 0, sizeof(rbuf));
	ret = tc_step(tc_rw(&io, false, 1, 8, 8, rbuf, 4096, 0, &cqe), &cqe);
	if (ret)
		goto out_io;
	if (memcmp(rbuf, wbuf, 4096)) {
		ret = -EIO;
		goto out_io;
	}
	ret = tc_step(tc_rw(&io, false, 1, 64, 128, rbuf, sizeof(rbuf), 0, &cqe), &cqe);
	if (!ret && memcmp(rbuf, wbuf, sizeof(rbuf)))
		ret = -EIO;
out_io:
	tc_close(&io);
out_adm:
	tc_close(&adm);
	return ret;
}

int tc_send_cmd(struct tc_conn *c, struct nvmfd_sqe *sqe, const void *data, uint32_t icd_len,
		 uint32_t xfer_len)
{
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	size_t hlen;

	sqe->flags = (uint8_t)((sqe->flags & ~NVMFD_SQE_FLAGS_PSDT_MASK) |
			       NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG);
	memset(&sqe->dptr, 0, sizeof(sqe->dptr));
	sqe->dptr.length = htole32(icd_len ? icd_len : xfer_len);
	sqe->dptr.type = icd_len ? NVMFD_SGL_ID_INCAPSULE : NVMFD_SGL_ID_TRANSPORT;
	hlen = nvmfd_pdu_build_cmd(hdr, sqe, icd_len, c->hdgst, c->ddgst);
	return tc_send_pdu(c, hdr, hlen, data, icd_len);
}
