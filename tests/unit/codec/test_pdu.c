// SPDX-License-Identifier: MIT
/*
 * test_pdu.c - NVMe/TCP codec: wire layouts, round trips through the
 * receiver in every fragmentation, and one failing example per validation
 * rule with the exact error/FES/FEI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <nvmfd/pdu.h>

#define STREAM_MAX 65536
#define EV_MAX 32
#define DATA_MAX 16384

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint8_t pattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 31 + seed * 7 + (i >> 8));
}

/* ------------------------------------------------------------------ */
/* Stream builder                                                      */
/* ------------------------------------------------------------------ */

struct stream {
	uint8_t b[STREAM_MAX];
	size_t len;
};

static void s_put(struct stream *s, const void *p, size_t n)
{
	assert_true(s->len + n <= sizeof(s->b));
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

/* Append a PDU whose header is in @hdr (@hlen bytes incl. digest), then
 * @data_len pattern bytes and, when DDGSTF is set, their digest. */
static void s_pdu(struct stream *s, const uint8_t *hdr, size_t hlen, uint32_t data_len,
		  unsigned int seed)
{
	uint8_t data[DATA_MAX];

	assert_true(data_len <= sizeof(data));
	s_put(s, hdr, hlen);
	for (uint32_t i = 0; i < data_len; i++)
		data[i] = pattern(i, seed);
	s_put(s, data, data_len);
	if (data_len && (hdr[1] & NVMFD_TCP_F_DDGST)) {
		uint8_t d[4];

		put32(d, nvmfd_digest(data, data_len));
		s_put(s, d, 4);
	}
}

/* ------------------------------------------------------------------ */
/* Receiver driver: records events for comparison across feed modes    */
/* ------------------------------------------------------------------ */

enum mode { M_WHOLE, M_ONE, M_RANDOM, M_WANT, M__MAX };

struct ev_rec {
	int ev;
	uint8_t type;
	uint8_t flags;
	uint32_t data_len;
	uint64_t stream_off;
	int err;
	uint16_t fes;
	uint32_t fei;
	uint64_t err_off;
	uint32_t err_hdr_len;
	uint32_t err_hdr_crc;
	uint32_t data_crc;
};

struct run {
	struct ev_rec ev[EV_MAX];
	int n;
	size_t consumed;
};

struct drive_cfg {
	struct nvmfd_pdu_rx_opts opts;
	bool set_dst; /* register a destination on EV_HDR */
	unsigned int seed; /* for M_RANDOM splits */
};

static uint8_t g_data[DATA_MAX];
static uint32_t g_rng;

static uint32_t rng(void)
{
	g_rng = g_rng * 1103515245u + 12345u;
	return g_rng >> 8;
}

static bool record(struct nvmfd_pdu_rx *rx, const struct drive_cfg *cfg, enum nvmfd_pdu_ev ev,
		   struct run *r, bool *dst_set)
{
	struct ev_rec *e;
	const struct nvmfd_pdu_error *err = nvmfd_pdu_rx_error(rx);

	assert_true(r->n < EV_MAX);
	e = &r->ev[r->n++];
	memset(e, 0, sizeof(*e));
	e->ev = ev;
	e->type = nvmfd_pdu_rx_ch(rx)->type;
	e->flags = nvmfd_pdu_rx_ch(rx)->flags;
	e->data_len = nvmfd_pdu_rx_data_len(rx);
	e->stream_off = rx->stream_off;
	switch (ev) {
	case NVMFD_PDU_EV_HDR:
		if (cfg->set_dst) {
			assert_true(nvmfd_pdu_rx_data_len(rx) <= sizeof(g_data));
			memset(g_data, 0xee, sizeof(g_data));
			nvmfd_pdu_rx_set_data(rx, g_data);
			*dst_set = true;
		}
		break;
	case NVMFD_PDU_EV_PDU:
		if (*dst_set)
			e->data_crc = nvmfd_digest(g_data, nvmfd_pdu_rx_data_len(rx));
		*dst_set = false;
		if (e->type == NVMFD_TCP_ICREQ || e->type == NVMFD_TCP_ICRESP)
			nvmfd_pdu_rx_ic_done(rx, cfg->opts.hdgst, cfg->opts.ddgst, 0);
		break;
	case NVMFD_PDU_EV_ERROR:
		*dst_set = false;
		e->err = err->err;
		e->fes = err->fes;
		e->fei = err->fei;
		e->err_off = err->stream_off;
		e->err_hdr_len = err->hdr_len;
		e->err_hdr_crc = nvmfd_digest(err->hdr, err->hdr_len);
		return err->err == NVMFD_PDU_ERR_DDGST; /* only this one continues */
	default:
		break;
	}
	return true;
}

static void drive(const struct drive_cfg *cfg, const uint8_t *s, size_t len, enum mode m,
		  struct run *r)
{
	struct nvmfd_pdu_rx rx;
	bool dst_set = false;
	size_t pos = 0;

	memset(r, 0, sizeof(*r));
	g_rng = cfg->seed;
	nvmfd_pdu_rx_init(&rx, &cfg->opts);
	while (pos < len) {
		size_t chunk = len - pos, c = 0;
		enum nvmfd_pdu_ev ev;
		uint8_t *p;

		if (m == M_ONE)
			chunk = 1;
		else if (m == M_RANDOM || m == M_WANT)
			chunk = 1 + rng() % 97;
		if (chunk > len - pos)
			chunk = len - pos;
		if (m == M_WANT) {
			size_t w = nvmfd_pdu_rx_want(&rx, &p);

			assert_true(w > 0);
			if (chunk > w)
				chunk = w;
			if (p) {
				memcpy(p, s + pos, chunk);
				ev = nvmfd_pdu_rx_advance(&rx, chunk);
				c = chunk;
			} else {
				ev = nvmfd_pdu_rx_feed(&rx, s + pos, chunk, &c);
			}
		} else {
			ev = nvmfd_pdu_rx_feed(&rx, s + pos, chunk, &c);
		}
		assert_true(c <= chunk);
		pos += c;
		if (ev == NVMFD_PDU_EV_NEED_MORE) {
			assert_int_equal(c, chunk);
			continue;
		}
		assert_true(c > 0);
		if (!record(&rx, cfg, ev, r, &dst_set))
			break;
	}
	r->consumed = pos;
	if (rx.state == NVMFD_PDU_RX_ERROR) {
		size_t c = 99;
		uint8_t *p;

		/* sticky */
		assert_int_equal(nvmfd_pdu_rx_feed(&rx, s, len, &c), NVMFD_PDU_EV_ERROR);
		assert_int_equal(c, 0);
		assert_int_equal(nvmfd_pdu_rx_want(&rx, &p), 0);
		assert_int_equal(nvmfd_pdu_rx_advance(&rx, 0), NVMFD_PDU_EV_ERROR);
	}
}

/* Drive in every mode (and several random seeds); all must agree. */
static void drive_all(struct drive_cfg *cfg, const uint8_t *s, size_t len, struct run *out)
{
	struct run r;

	drive(cfg, s, len, M_WHOLE, out);
	for (int m = M_ONE; m < M__MAX; m++) {
		for (unsigned int seed = 1; seed <= (m == M_ONE ? 1u : 5u); seed++) {
			cfg->seed = seed;
			drive(cfg, s, len, (enum mode)m, &r);
			if (r.n != out->n || memcmp(r.ev, out->ev, sizeof(r.ev[0]) * (size_t)r.n))
				fail_msg("mode %d seed %u: events differ from one-shot feed "
					 "(%d vs %d events)",
					 m, seed, r.n, out->n);
			assert_int_equal(r.consumed, out->consumed);
		}
	}
}

static struct drive_cfg cfg_of(enum nvmfd_pdu_role role, bool hd, bool dd)
{
	struct drive_cfg c;

	memset(&c, 0, sizeof(c));
	c.opts.role = role;
	c.opts.hdgst = hd;
	c.opts.ddgst = dd;
	c.opts.max_data = 8192;
	c.set_dst = true;
	return c;
}

static uint8_t dgst_bits(bool hd, bool dd)
{
	return (uint8_t)((hd ? NVMFD_TCP_DGST_HDR : 0) | (dd ? NVMFD_TCP_DGST_DATA : 0));
}

/* ------------------------------------------------------------------ */
/* Layouts against hand-built bytes                                    */
/* ------------------------------------------------------------------ */

static void test_hlen_table(void **state)
{
	static const uint8_t want[16] = { 128, 128, 24, 24, 72, 24, 24, 24, 0, 24, 0, 0, 0, 0, 0, 0 };

	(void)state;
	for (unsigned int t = 0; t < 16; t++)
		assert_int_equal(nvmfd_pdu_hlen((uint8_t)t), want[t]);
	assert_int_equal(nvmfd_pdu_hlen(0xff), 0);
}

static void test_layout_icreq(void **state)
{
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN], want[128];

	(void)state;
	memset(b, 0xa5, sizeof(b));
	memset(want, 0, sizeof(want));
	want[0] = 0x00;
	want[2] = 128;
	want[4] = 128;
	want[10] = 3; /* hpda */
	want[11] = 0x3; /* dgst */
	want[12] = 0x78;
	want[13] = 0x56;
	want[14] = 0x34;
	want[15] = 0x12;
	assert_int_equal(nvmfd_pdu_build_icreq(b, 3, 3, 0x12345678), 128);
	assert_memory_equal(b, want, 128);

	memset(b, 0xa5, sizeof(b));
	want[0] = 0x01;
	want[10] = 0; /* cpda */
	want[11] = 0x1;
	want[12] = 0x00;
	want[13] = 0x00;
	want[14] = 0x40;
	want[15] = 0x00;
	assert_int_equal(nvmfd_pdu_build_icresp(b, 0, 1, 0x400000), 128);
	assert_memory_equal(b, want, 128);
}

static void test_layout_cmd(void **state)
{
	struct nvmfd_sqe sqe;
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN], want[76];

	(void)state;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.flags = NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG;
	sqe.cid = 0xbeef;
	sqe.nsid = 0x01020304;
	sqe.mptr = 0x1122334455667788ull;
	sqe.dptr.addr = 0;
	sqe.dptr.length = 0x1000;
	sqe.dptr.type = NVMFD_SGL_ID_INCAPSULE;
	sqe.cdw10 = 0xa0a1a2a3;
	sqe.cdw11 = 0xb0b1b2b3;
	sqe.cdw12 = 7;
	sqe.cdw15 = 0xf0f1f2f3;

	memset(want, 0, sizeof(want));
	want[0] = 0x04; /* CapsuleCmd */
	want[1] = NVMFD_TCP_F_HDGST | NVMFD_TCP_F_DDGST;
	want[2] = 72;
	want[3] = 76; /* pdo = hlen + hdgst */
	put32(want + 4, 72 + 4 + 0x1000 + 4);
	want[8 + 0] = 0x01; /* opc */
	want[8 + 1] = 0x40; /* PSDT */
	want[8 + 2] = 0xef; /* cid */
	want[8 + 3] = 0xbe;
	put32(want + 8 + 4, 0x01020304); /* nsid */
	put32(want + 8 + 16, 0x55667788); /* mptr */
	put32(want + 8 + 20, 0x11223344);
	put32(want + 8 + 32, 0x1000); /* sgl length */
	want[8 + 39] = 0x01; /* sgl id: data block, offset */
	put32(want + 8 + 40, 0xa0a1a2a3); /* cdw10 */
	put32(want + 8 + 44, 0xb0b1b2b3);
	put32(want + 8 + 48, 7);
	put32(want + 8 + 60, 0xf0f1f2f3);
	put32(want + 72, nvmfd_digest(want, 72));

	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_cmd(b, &sqe, 0x1000, true, true), 76);
	assert_memory_equal(b, want, 76);

	/* no data, no digests: pdo 0, plen 72, no DDGSTF even if requested */
	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_cmd(b, &sqe, 0, false, true), 72);
	assert_int_equal(b[1], 0);
	assert_int_equal(b[3], 0);
	assert_int_equal(le32(b + 4), 72);
	assert_memory_equal(b + 8, want + 8, 64);
}

static void test_layout_rsp(void **state)
{
	struct nvmfd_cqe cqe;
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN];
	static const uint8_t want[24] = {
		0x05, 0x00, 24, 0, 24, 0, 0, 0,
		0x44, 0x33, 0x22, 0x11, /* result */
		0x88, 0x77, 0x66, 0x55, /* dw1 */
		0x02, 0x01, /* sqhd */
		0x04, 0x03, /* sqid */
		0x06, 0x05, /* cid */
		0x09, 0x00, /* status: (0x0004 << 1) | 1 */
	};

	(void)state;
	memset(&cqe, 0, sizeof(cqe));
	cqe.result = 0x11223344;
	cqe.dw1 = 0x55667788;
	cqe.sqhd = 0x0102;
	cqe.sqid = 0x0304;
	cqe.cid = 0x0506;
	cqe.status = (NVMFD_SC_DATA_XFER_ERROR << 1) | 1;
	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_rsp(b, &cqe, false), 24);
	assert_memory_equal(b, want, 24);
	assert_int_equal(nvmfd_pdu_build_rsp(b, &cqe, true), 28);
	assert_int_equal(b[1], NVMFD_TCP_F_HDGST);
	assert_int_equal(le32(b + 4), 28);
	assert_int_equal(le32(b + 24), nvmfd_digest(b, 24));
}

static void test_layout_data_r2t_term(void **state)
{
	uint8_t b[200];
	static const uint8_t want_c2h[24] = {
		0x07, 0x0c, 24, 24, 0x18, 0x02, 0, 0, /* plen 24 + 512 */
		0x34, 0x12, 0x00, 0x00, /* cccid, ttag reserved */
		0x00, 0x10, 0x00, 0x00, /* datao 4096 */
		0x00, 0x02, 0x00, 0x00, /* datal 512 */
		0, 0, 0, 0,
	};
	static const uint8_t want_r2t[24] = {
		0x09, 0x00, 24, 0, 24, 0, 0, 0,
		0x01, 0x00, 0xcd, 0xab, /* cccid 1, ttag 0xabcd */
		0x00, 0x20, 0x00, 0x00, /* r2to 8192 */
		0x00, 0x00, 0x01, 0x00, /* r2tl 65536 */
		0, 0, 0, 0,
	};
	uint8_t err[200];

	(void)state;
	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_data(b, NVMFD_TCP_C2H_DATA,
					      NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS,
					      0x1234, 0, 4096, 512, false, false),
			 24);
	assert_memory_equal(b, want_c2h, 24);

	/* H2C drops SUCCESS; digests: pdo 28, plen 28 + 512 + 4 */
	assert_int_equal(nvmfd_pdu_build_data(b, NVMFD_TCP_H2C_DATA,
					      NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS,
					      7, 9, 0, 512, true, true),
			 28);
	assert_int_equal(b[0], NVMFD_TCP_H2C_DATA);
	assert_int_equal(b[1], NVMFD_TCP_F_HDGST | NVMFD_TCP_F_DDGST | NVMFD_TCP_F_DATA_LAST);
	assert_int_equal(b[3], 28);
	assert_int_equal(le32(b + 4), 28 + 512 + 4);
	assert_int_equal(b[10], 9);
	assert_int_equal(le32(b + 24), nvmfd_digest(b, 24));

	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_r2t(b, 1, 0xabcd, 8192, 65536, false), 24);
	assert_memory_equal(b, want_r2t, 24);

	for (int i = 0; i < 200; i++)
		err[i] = (uint8_t)i;
	memset(b, 0xa5, sizeof(b));
	assert_int_equal(nvmfd_pdu_build_term(b, sizeof(b), NVMFD_TCP_C2H_TERM,
					      NVMFD_TCP_FES_HDR_DIGEST, 72, err, 200),
			 152);
	assert_int_equal(b[0], NVMFD_TCP_C2H_TERM);
	assert_int_equal(b[1], 0);
	assert_int_equal(b[2], 24);
	assert_int_equal(b[3], 0);
	assert_int_equal(le32(b + 4), 152);
	assert_int_equal(b[8], 0x03);
	assert_int_equal(b[9], 0x00);
	assert_int_equal(le32(b + 10), 72);
	for (int i = 14; i < 24; i++)
		assert_int_equal(b[i], 0);
	assert_memory_equal(b + 24, err, 128);
	/* truncated to the buffer */
	assert_int_equal(nvmfd_pdu_build_term(b, 30, NVMFD_TCP_H2C_TERM, 1, 0, err, 100), 30);
	assert_int_equal(le32(b + 4), 30);
	assert_int_equal(nvmfd_pdu_build_term(b, 23, NVMFD_TCP_H2C_TERM, 1, 0, err, 100), 0);
	assert_int_equal(nvmfd_pdu_build_term(b, 24, NVMFD_TCP_H2C_TERM, 1, 0, NULL, 0), 24);
}

/* ------------------------------------------------------------------ */
/* Round trips                                                         */
/* ------------------------------------------------------------------ */

static void check_ev(const struct ev_rec *e, int ev, uint8_t type, uint32_t data_len)
{
	if (e->ev != ev || e->type != type || e->data_len != data_len)
		fail_msg("event %d type %s len %u, want %d %s %u", e->ev,
			 nvmfd_pdu_type_str(e->type), e->data_len, ev, nvmfd_pdu_type_str(type),
			 data_len);
}

static void roundtrip_ctrl(bool hd, bool dd, bool set_dst)
{
	static struct stream s;
	struct drive_cfg cfg = cfg_of(NVMFD_PDU_ROLE_CTRL, hd, dd);
	struct nvmfd_sqe sqe;
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN], errdata[40];
	struct run r;
	size_t n;
	int i = 0;

	cfg.set_dst = set_dst;
	memset(&s, 0, sizeof(s));
	memset(&sqe, 0, sizeof(sqe));
	n = nvmfd_pdu_build_icreq(h, 0, dgst_bits(hd, dd), 0);
	s_pdu(&s, h, n, 0, 0);
	sqe.opc = NVMFD_ADMIN_KEEP_ALIVE;
	sqe.cid = 1;
	n = nvmfd_pdu_build_cmd(h, &sqe, 0, hd, dd);
	s_pdu(&s, h, n, 0, 0);
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 2;
	n = nvmfd_pdu_build_cmd(h, &sqe, 1024, hd, dd);
	s_pdu(&s, h, n, 1024, 1);
	n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 3, 5, 0, 4096, hd, dd);
	s_pdu(&s, h, n, 4096, 2);
	n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 3, 5, 4096, 8192,
				 hd, dd);
	s_pdu(&s, h, n, 8192, 3);
	for (size_t k = 0; k < sizeof(errdata); k++)
		errdata[k] = (uint8_t)(0x80 + k);
	n = nvmfd_pdu_build_term(h, sizeof(h), NVMFD_TCP_H2C_TERM, NVMFD_TCP_FES_PDU_SEQUENCE, 7,
				 errdata, sizeof(errdata));
	s_put(&s, h, n);

	drive_all(&cfg, s.b, s.len, &r);
	assert_int_equal(r.n, 9);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_PDU, NVMFD_TCP_ICREQ, 0);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_PDU, NVMFD_TCP_CMD, 0);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_HDR, NVMFD_TCP_CMD, 1024);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_PDU, NVMFD_TCP_CMD, 1024);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_HDR, NVMFD_TCP_H2C_DATA, 4096);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_PDU, NVMFD_TCP_H2C_DATA, 4096);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_HDR, NVMFD_TCP_H2C_DATA, 8192);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_PDU, NVMFD_TCP_H2C_DATA, 8192);
	assert_int_equal(r.ev[7].flags & NVMFD_TCP_F_DATA_LAST, NVMFD_TCP_F_DATA_LAST);
	check_ev(&r.ev[i++], NVMFD_PDU_EV_ERROR, NVMFD_TCP_H2C_TERM, sizeof(errdata));
	assert_int_equal(r.ev[8].err, NVMFD_PDU_ERR_TERM);
	assert_int_equal(r.ev[8].fes, NVMFD_TCP_FES_PDU_SEQUENCE);
	assert_int_equal(r.ev[8].fei, 7);
	assert_int_equal(r.ev[8].err_off, s.len - n);
	assert_int_equal(r.ev[8].err_hdr_len, sizeof(errdata));
	assert_int_equal(r.ev[8].err_hdr_crc, nvmfd_digest(errdata, sizeof(errdata)));
	assert_int_equal(r.consumed, s.len);
	assert_int_equal(r.ev[8].stream_off, s.len);

	/* data landed intact */
	if (set_dst) {
		uint8_t want[8192];

		for (uint32_t k = 0; k < 1024; k++)
			want[k] = pattern(k, 1);
		assert_int_equal(r.ev[3].data_crc, nvmfd_digest(want, 1024));
		for (uint32_t k = 0; k < 8192; k++)
			want[k] = pattern(k, 3);
		assert_int_equal(r.ev[7].data_crc, nvmfd_digest(want, 8192));
	} else {
		assert_int_equal(r.ev[3].data_crc, 0);
	}
}

static void test_roundtrip_ctrl(void **state)
{
	(void)state;
	for (int hd = 0; hd < 2; hd++)
		for (int dd = 0; dd < 2; dd++)
			for (int dst = 0; dst < 2; dst++)
				roundtrip_ctrl(hd, dd, dst);
}

static void roundtrip_host(bool hd, bool dd)
{
	static struct stream s;
	struct drive_cfg cfg = cfg_of(NVMFD_PDU_ROLE_HOST, hd, dd);
	struct nvmfd_cqe cqe;
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct run r;
	size_t n;

	memset(&s, 0, sizeof(s));
	memset(&cqe, 0, sizeof(cqe));
	n = nvmfd_pdu_build_icresp(h, 0, dgst_bits(hd, dd), 0x400000);
	s_pdu(&s, h, n, 0, 0);
	cqe.cid = 9;
	n = nvmfd_pdu_build_rsp(h, &cqe, hd);
	s_pdu(&s, h, n, 0, 0);
	n = nvmfd_pdu_build_data(h, NVMFD_TCP_C2H_DATA,
				 NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS, 9, 0, 0, 512, hd,
				 dd);
	s_pdu(&s, h, n, 512, 4);
	n = nvmfd_pdu_build_r2t(h, 10, 77, 0, 131072, hd);
	s_pdu(&s, h, n, 0, 0);
	n = nvmfd_pdu_build_term(h, sizeof(h), NVMFD_TCP_C2H_TERM, NVMFD_TCP_FES_HDR_DIGEST, 24,
				 NULL, 0);
	s_put(&s, h, n);

	drive_all(&cfg, s.b, s.len, &r);
	assert_int_equal(r.n, 6);
	check_ev(&r.ev[0], NVMFD_PDU_EV_PDU, NVMFD_TCP_ICRESP, 0);
	check_ev(&r.ev[1], NVMFD_PDU_EV_PDU, NVMFD_TCP_RSP, 0);
	check_ev(&r.ev[2], NVMFD_PDU_EV_HDR, NVMFD_TCP_C2H_DATA, 512);
	check_ev(&r.ev[3], NVMFD_PDU_EV_PDU, NVMFD_TCP_C2H_DATA, 512);
	check_ev(&r.ev[4], NVMFD_PDU_EV_PDU, NVMFD_TCP_R2T, 0);
	check_ev(&r.ev[5], NVMFD_PDU_EV_ERROR, NVMFD_TCP_C2H_TERM, 0);
	assert_int_equal(r.ev[5].err, NVMFD_PDU_ERR_TERM);
	assert_int_equal(r.ev[5].fes, NVMFD_TCP_FES_HDR_DIGEST);
	assert_int_equal(r.ev[5].fei, 24);
	assert_int_equal(r.ev[5].err_hdr_len, 0);
	assert_int_equal(r.consumed, s.len);
}

static void test_roundtrip_host(void **state)
{
	(void)state;
	for (int hd = 0; hd < 2; hd++)
		for (int dd = 0; dd < 2; dd++)
			roundtrip_host(hd, dd);
}

/* Header fields are readable after EV_PDU, padding honoured with CPDA. */
static void test_fields_and_padding(void **state)
{
	struct nvmfd_pdu_rx_opts o = { .role = NVMFD_PDU_ROLE_CTRL, .hdgst = true, .ddgst = true,
				       .cpda = 7, .max_data = 4096 };
	struct nvmfd_pdu_rx rx;
	struct nvmfd_sqe sqe;
	static struct stream s;
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN], dst[100], pad[32] = { 0 };
	const struct nvmfd_tcp_cmd *cmd;
	size_t n, c, pos = 0;
	enum nvmfd_pdu_ev ev;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&sqe, 0, sizeof(sqe));
	n = nvmfd_pdu_build_icreq(h, 0, 3, 0);
	s_put(&s, h, n);
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.cid = 0x4242;
	sqe.cdw10 = 0xdeadbeef;
	n = nvmfd_pdu_build_cmd(h, &sqe, 100, true, true);
	/* pad pdo to a multiple of 32: 76 -> 96 */
	h[3] = 96;
	put32(h + 4, 96 + 100 + 4);
	put32(h + 72, nvmfd_digest(h, 72));
	s_put(&s, h, n);
	s_put(&s, pad, 20);
	{
		uint8_t d[100], dg[4];

		for (int i = 0; i < 100; i++)
			d[i] = pattern((size_t)i, 9);
		s_put(&s, d, 100);
		put32(dg, nvmfd_digest(d, 100));
		s_put(&s, dg, 4);
	}

	nvmfd_pdu_rx_init(&rx, &o);
	ev = nvmfd_pdu_rx_feed(&rx, s.b, s.len, &c);
	assert_int_equal(ev, NVMFD_PDU_EV_PDU);
	assert_int_equal(c, 128);
	assert_true(rx.ic_done); /* controller: ICReq turns the digests on */
	pos += c;
	ev = nvmfd_pdu_rx_feed(&rx, s.b + pos, s.len - pos, &c);
	assert_int_equal(ev, NVMFD_PDU_EV_HDR);
	assert_int_equal(c, 76);
	pos += c;
	cmd = nvmfd_pdu_rx_hdr(&rx);
	assert_int_equal(cmd->sqe.cid, 0x4242);
	assert_int_equal(cmd->sqe.cdw10, 0xdeadbeef);
	assert_int_equal(nvmfd_pdu_rx_data_len(&rx), 100);
	nvmfd_pdu_rx_set_data(&rx, dst);
	ev = nvmfd_pdu_rx_feed(&rx, s.b + pos, s.len - pos, &c);
	assert_int_equal(ev, NVMFD_PDU_EV_PDU);
	assert_int_equal(c, s.len - pos);
	for (int i = 0; i < 100; i++)
		assert_int_equal(dst[i], pattern((size_t)i, 9));
	assert_int_equal(nvmfd_pdu_rx_ch(&rx)->type, NVMFD_TCP_CMD);
	assert_int_equal(rx.pdus, 2);
	assert_int_equal(rx.stream_off, s.len);
	/* nothing left: NEED_MORE, consumed 0 */
	assert_int_equal(nvmfd_pdu_rx_feed(&rx, s.b, 0, &c), NVMFD_PDU_EV_NEED_MORE);
	assert_int_equal(c, 0);
}

/* ------------------------------------------------------------------ */
/* Validation rules                                                    */
/* ------------------------------------------------------------------ */

struct bad_case {
	const char *name;
	enum nvmfd_pdu_role role;
	bool hd, dd;
	uint8_t cpda;
	uint32_t max_data;
	bool preamble; /* ICReq/ICResp first */
	/* writes the bad PDU header into h (>= 160 bytes), returns its header
	 * length; *data_len: data bytes (pattern) that follow */
	size_t (*mk)(uint8_t *h, uint32_t *data_len);
	enum nvmfd_pdu_err err;
	uint16_t fes;
	uint32_t fei;
	uint32_t err_hdr_len; /* bytes echoed in error.hdr */
};

static void fix_hdgst(uint8_t *h)
{
	if (h[1] & NVMFD_TCP_F_HDGST)
		put32(h + h[2], nvmfd_digest(h, h[2]));
}

static struct nvmfd_sqe g_sqe;

static size_t mk_unknown_type(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_rsp(h, &(struct nvmfd_cqe){ 0 }, false);

	h[0] = 0x08;
	*dl = 0;
	return n;
}

static size_t mk_type_0x0a(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_unknown_type(h, dl);

	h[0] = 0x0a;
	return n;
}

static size_t mk_rsp(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_rsp(h, &(struct nvmfd_cqe){ 0 }, false);
}

static size_t mk_cmd(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_cmd(h, &g_sqe, 0, false, false);
}

static size_t mk_cmd_hd(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_cmd(h, &g_sqe, 0, true, false);
}

static size_t mk_cmd_icd(uint8_t *h, uint32_t *dl)
{
	*dl = 256;
	return nvmfd_pdu_build_cmd(h, &g_sqe, 256, false, false);
}

static size_t mk_cmd_icd_dd(uint8_t *h, uint32_t *dl)
{
	*dl = 256;
	return nvmfd_pdu_build_cmd(h, &g_sqe, 256, false, true);
}

static size_t mk_icreq(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_icreq(h, 0, 0, 0);
}

static size_t mk_cmd_bad_hlen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd(h, dl);

	h[2] = 70;
	return n;
}

static size_t mk_cmd_misaligned(uint8_t *h, uint32_t *dl)
{
	return mk_cmd_icd(h, dl); /* pdo 72 with cpda 3 (16-byte units) */
}

static size_t mk_h2c_pdo_inside(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 1, 1, 0, 64, false, false);

	*dl = 64;
	h[3] = 16;
	return n;
}

static size_t mk_h2c_no_data(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 1, 1, 0, 0, false, false);

	*dl = 0;
	return n;
}

static size_t mk_cmd_pdo_past_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd_icd(h, dl);

	put32(h + 4, 72 + 4); /* pdo 72 ok, but only 4 data bytes: plen 76 */
	h[3] = 80;
	*dl = 4;
	return n;
}

static size_t mk_rsp_short_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_rsp(h, dl);

	put32(h + 4, 20);
	return n;
}

static size_t mk_rsp_long_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_rsp(h, dl);

	put32(h + 4, 28);
	*dl = 4; /* keep the stream length consistent */
	return n;
}

static size_t mk_rsp_pdo(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_rsp(h, dl);

	h[3] = 24;
	return n;
}

static size_t mk_cmd_nodata_long_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd(h, dl);

	put32(h + 4, 72 + 16);
	*dl = 16;
	return n;
}

static size_t mk_cmd_pdo_eq_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd_icd_dd(h, dl); /* pdo 72, plen 72 + 256 + 4 */

	put32(h + 4, 72 + 4);
	*dl = 0;
	return n;
}

static size_t mk_h2c_too_long(uint8_t *h, uint32_t *dl)
{
	*dl = 8192;
	return nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 1, 1, 0, 8192,
				    false, false);
}

static size_t mk_h2c_datal_mismatch(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 1, 1, 0, 64, false, false);

	put32(h + 16, 63);
	*dl = 64;
	return n;
}

static size_t mk_h2c_rsvd(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 1, 1, 0, 64, false, false);

	h[21] = 1;
	*dl = 64;
	return n;
}

static size_t mk_h2c_success(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 1, 1, 0, 64,
					false, false);

	h[1] |= NVMFD_TCP_F_DATA_SUCCESS;
	*dl = 64;
	return n;
}

static size_t mk_c2h_success_not_last(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_C2H_DATA, 0, 1, 0, 0, 64, false, false);

	h[1] |= NVMFD_TCP_F_DATA_SUCCESS;
	*dl = 64;
	return n;
}

static size_t mk_c2h_rsvd_garbage(uint8_t *h, uint32_t *dl)
{
	/* Linux nvmet does not clear these: accepted */
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_C2H_DATA, NVMFD_TCP_F_DATA_LAST, 1, 0, 0, 64,
					false, false);

	h[10] = 0x5a;
	h[22] = 0x77;
	*dl = 64;
	return n;
}

static size_t mk_cmd_last(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd(h, dl);

	h[1] |= NVMFD_TCP_F_DATA_LAST;
	return n;
}

static size_t mk_cmd_rsvd_flag(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd(h, dl);

	h[1] |= 0x10;
	return n;
}

static size_t mk_icreq_hdgstf(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_icreq(h, dl);

	h[1] = NVMFD_TCP_F_HDGST;
	return n;
}

static size_t mk_icreq_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_icreq(h, dl);

	put32(h + 4, 132);
	*dl = 4;
	return n;
}

static size_t mk_icreq_pfv(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_icreq(h, dl);

	h[8] = 1;
	return n;
}

static size_t mk_icreq_hpda(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_icreq(h, dl);

	h[10] = 32;
	return n;
}

static size_t mk_icreq_garbage_rsvd(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_icreq(h, dl);

	memset(h + 16, 0xcc, 112); /* lenient */
	h[10] = 31;
	return n;
}

static size_t mk_icresp_maxh2c(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_icresp(h, 0, 0, 1000);
}

static size_t mk_icresp_cpda(uint8_t *h, uint32_t *dl)
{
	*dl = 0;
	return nvmfd_pdu_build_icresp(h, 40, 0, 8192);
}

static size_t mk_cmd_bad_hdgst(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd_hd(h, dl);

	h[8 + 10] ^= 1; /* change a byte after the digest was computed */
	return n;
}

static size_t mk_term_long(uint8_t *h, uint32_t *dl)
{
	static const uint8_t e[128];
	nvmfd_pdu_build_term(h, 160, NVMFD_TCP_H2C_TERM, 1, 0, e, sizeof(e));
	put32(h + 4, 153);
	*dl = 153 - 24;
	return 24;
}

static size_t mk_term_short(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_term(h, 160, NVMFD_TCP_C2H_TERM, 1, 0, NULL, 0);

	put32(h + 4, 20);
	*dl = 0;
	return n;
}

static size_t mk_term_hlen(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_term(h, 160, NVMFD_TCP_H2C_TERM, 1, 0, NULL, 0);

	h[2] = 28;
	*dl = 0;
	return n;
}

static size_t mk_cmd_dd_nodata(uint8_t *h, uint32_t *dl)
{
	size_t n = mk_cmd(h, dl);

	h[1] |= NVMFD_TCP_F_DDGST;
	return n;
}

static size_t mk_huge_plen(uint8_t *h, uint32_t *dl)
{
	size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, 0, 1, 1, 0, 64, false, false);

	put32(h + 4, 0xffffffffu);
	*dl = 64;
	return n;
}

#define OK_CASE NVMFD_PDU_OK, 0, 0, 0
#define C NVMFD_PDU_ROLE_CTRL
#define H NVMFD_PDU_ROLE_HOST

static const struct bad_case bad_cases[] = {
	{ "unknown type 0x08", C, 0, 0, 0, 4096, true, mk_unknown_type, NVMFD_PDU_ERR_TYPE, 1, 0, 8 },
	{ "unknown type 0x0a (host)", H, 0, 0, 0, 4096, true, mk_type_0x0a, NVMFD_PDU_ERR_TYPE, 1, 0, 8 },
	{ "ctrl receives CapsuleResp", C, 0, 0, 0, 4096, true, mk_rsp, NVMFD_PDU_ERR_TYPE, 1, 0, 8 },
	{ "host receives CapsuleCmd", H, 0, 0, 0, 4096, true, mk_cmd, NVMFD_PDU_ERR_TYPE, 1, 0, 8 },
	{ "host receives ICReq", H, 0, 0, 0, 4096, false, mk_icreq, NVMFD_PDU_ERR_TYPE, 1, 0, 8 },
	{ "PDU before ICReq", C, 0, 0, 0, 4096, false, mk_cmd, NVMFD_PDU_ERR_SEQUENCE, 2, 0, 8 },
	{ "PDU before ICResp", H, 0, 0, 0, 4096, false, mk_rsp, NVMFD_PDU_ERR_SEQUENCE, 2, 0, 8 },
	{ "second ICReq", C, 0, 0, 0, 4096, true, mk_icreq, NVMFD_PDU_ERR_SEQUENCE, 2, 0, 8 },
	{ "bad hlen", C, 0, 0, 0, 4096, true, mk_cmd_bad_hlen, NVMFD_PDU_ERR_HLEN, 1, 2, 8 },
	{ "TermReq bad hlen", C, 0, 0, 0, 4096, true, mk_term_hlen, NVMFD_PDU_ERR_HLEN, 1, 2, 8 },
	{ "pdo misaligned to cpda", C, 0, 0, 3, 4096, true, mk_cmd_misaligned, NVMFD_PDU_ERR_PDO, 1, 3, 8 },
	{ "pdo inside header", C, 0, 0, 0, 4096, true, mk_h2c_pdo_inside, NVMFD_PDU_ERR_PDO, 1, 3, 8 },
	{ "pdo past plen", C, 0, 0, 0, 4096, true, mk_cmd_pdo_past_plen, NVMFD_PDU_ERR_PDO, 1, 3, 8 },
	{ "data PDU without data", C, 0, 0, 0, 4096, true, mk_h2c_no_data, NVMFD_PDU_ERR_PDO, 1, 3, 8 },
	{ "pdo on CapsuleResp", H, 0, 0, 0, 4096, true, mk_rsp_pdo, NVMFD_PDU_ERR_PDO, 1, 3, 8 },
	{ "plen < hlen", H, 0, 0, 0, 4096, true, mk_rsp_short_plen, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "plen > hlen without data", H, 0, 0, 0, 4096, true, mk_rsp_long_plen, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "pdo 0 but plen has data", C, 0, 0, 0, 4096, true, mk_cmd_nodata_long_plen, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "no data bytes after pdo", C, 0, 1, 0, 4096, true, mk_cmd_pdo_eq_plen, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "ICReq plen 132", C, 0, 0, 0, 4096, false, mk_icreq_plen, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "TermReq plen 153", C, 0, 0, 0, 4096, true, mk_term_long, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "TermReq plen 20", H, 0, 0, 0, 4096, true, mk_term_short, NVMFD_PDU_ERR_PLEN, 1, 4, 8 },
	{ "DATAL != data length", C, 0, 0, 0, 4096, true, mk_h2c_datal_mismatch, NVMFD_PDU_ERR_PLEN, 1, 16, 24 },
	{ "data over max", C, 0, 0, 0, 4096, true, mk_h2c_too_long, NVMFD_PDU_ERR_DATA_TOO_LONG, 5, 4096, 8 },
	{ "plen 0xffffffff", C, 0, 0, 0, 4096, true, mk_huge_plen, NVMFD_PDU_ERR_DATA_TOO_LONG, 5, 4096, 8 },
	{ "HDGSTF not negotiated", C, 0, 0, 0, 4096, true, mk_cmd_hd, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "DDGSTF not negotiated", C, 0, 0, 0, 4096, true, mk_cmd_icd_dd, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "HDGSTF on ICReq", C, 1, 1, 0, 4096, false, mk_icreq_hdgstf, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "LAST_PDU on CapsuleCmd", C, 0, 0, 0, 4096, true, mk_cmd_last, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "reserved flag bit 4", C, 0, 0, 0, 4096, true, mk_cmd_rsvd_flag, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "SUCCESS on H2CData", C, 0, 0, 0, 4096, true, mk_h2c_success, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "SUCCESS without LAST", H, 0, 0, 0, 4096, true, mk_c2h_success_not_last, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "DDGSTF without data", C, 0, 1, 0, 4096, true, mk_cmd_dd_nodata, NVMFD_PDU_ERR_FLAGS, 1, 1, 8 },
	{ "header digest missing", C, 1, 0, 0, 4096, true, mk_cmd, NVMFD_PDU_ERR_DGST_MISSING, 1, 1, 8 },
	{ "data digest missing", C, 0, 1, 0, 4096, true, mk_cmd_icd, NVMFD_PDU_ERR_DGST_MISSING, 1, 1, 8 },
	{ "header digest mismatch", C, 1, 0, 0, 4096, true, mk_cmd_bad_hdgst, NVMFD_PDU_ERR_HDGST, 3, 72, 76 },
	{ "H2CData reserved byte 21", C, 0, 0, 0, 4096, true, mk_h2c_rsvd, NVMFD_PDU_ERR_RSVD, 1, 21, 24 },
	{ "ICReq PFV 1", C, 0, 0, 0, 4096, false, mk_icreq_pfv, NVMFD_PDU_ERR_PARAM, 6, 8, 128 },
	{ "ICReq HPDA 32", C, 0, 0, 0, 4096, false, mk_icreq_hpda, NVMFD_PDU_ERR_PARAM, 6, 10, 128 },
	{ "ICResp MAXH2CDATA 1000", H, 0, 0, 0, 4096, false, mk_icresp_maxh2c, NVMFD_PDU_ERR_PARAM, 6, 12, 128 },
	{ "ICResp CPDA 40", H, 0, 0, 0, 4096, false, mk_icresp_cpda, NVMFD_PDU_ERR_PARAM, 6, 10, 128 },
	/* accepted on purpose */
	{ "ICReq reserved garbage ok", C, 0, 0, 0, 4096, false, mk_icreq_garbage_rsvd, OK_CASE },
	{ "C2HData ttag/rsvd garbage ok", H, 0, 0, 0, 4096, true, mk_c2h_rsvd_garbage, OK_CASE },
	{ "digests both ways ok", C, 1, 1, 0, 4096, true, mk_cmd_hd, OK_CASE },
};

static void run_bad_case(const struct bad_case *bc)
{
	static struct stream s;
	struct drive_cfg cfg = cfg_of(bc->role, bc->hd, bc->dd);
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN + 64];
	struct nvmfd_pdu_error err;
	enum nvmfd_pdu_err r;
	struct run run;
	size_t pre = 0, n;
	uint32_t dl;
	const struct ev_rec *e;

	cfg.opts.cpda = bc->cpda;
	cfg.opts.max_data = bc->max_data;
	memset(&s, 0, sizeof(s));
	memset(&g_sqe, 0, sizeof(g_sqe));
	g_sqe.opc = NVMFD_CMD_READ;
	if (bc->preamble) {
		if (bc->role == NVMFD_PDU_ROLE_CTRL)
			n = nvmfd_pdu_build_icreq(h, 0, dgst_bits(bc->hd, bc->dd), 0);
		else
			n = nvmfd_pdu_build_icresp(h, 0, dgst_bits(bc->hd, bc->dd), 8192);
		s_put(&s, h, n);
		pre = n;
	}
	memset(h, 0, sizeof(h));
	n = bc->mk(h, &dl);
	if (bc->err != NVMFD_PDU_ERR_HDGST)
		fix_hdgst(h);
	s_pdu(&s, h, n, dl, 5);

	/* stateless check: same verdict */
	r = nvmfd_pdu_check_hdr(h, n, &cfg.opts, bc->preamble, &err);
	if (r != bc->err)
		fail_msg("%s: check_hdr gave %s, want %s", bc->name, nvmfd_pdu_err_str(r),
			 nvmfd_pdu_err_str(bc->err));
	if (r != NVMFD_PDU_OK) {
		assert_int_equal(err.fes, bc->fes);
		assert_int_equal(err.fei, bc->fei);
		assert_int_equal(err.stream_off, 0);
		assert_int_equal(err.hdr_len, n);
		assert_memory_equal(err.hdr, h, n);
		assert_int_equal(nvmfd_pdu_err_fes(r), bc->fes);
	}

	/* receiver, all fragmentations */
	drive_all(&cfg, s.b, s.len, &run);
	assert_true(run.n >= 1);
	e = &run.ev[run.n - 1];
	if (bc->err == NVMFD_PDU_OK) {
		if (e->ev != NVMFD_PDU_EV_PDU)
			fail_msg("%s: receiver gave event %d err %s", bc->name, e->ev,
				 nvmfd_pdu_err_str(e->err));
		assert_int_equal(run.consumed, s.len);
		return;
	}
	if (e->ev != NVMFD_PDU_EV_ERROR || (int)e->err != (int)bc->err)
		fail_msg("%s: receiver gave event %d err %s, want %s", bc->name, e->ev,
			 nvmfd_pdu_err_str(e->err), nvmfd_pdu_err_str(bc->err));
	if (e->fes != bc->fes || e->fei != bc->fei)
		fail_msg("%s: fes %u fei %u, want %u %u", bc->name, e->fes, e->fei, bc->fes,
			 bc->fei);
	assert_int_equal(e->err_off, pre);
	if (e->err_hdr_len != bc->err_hdr_len)
		fail_msg("%s: echoed %u header bytes, want %u", bc->name, e->err_hdr_len,
			 bc->err_hdr_len);
	assert_int_equal(e->err_hdr_crc, nvmfd_digest(h, bc->err_hdr_len));
	/* consumed exactly up to the point of detection */
	assert_int_equal(run.consumed, pre + bc->err_hdr_len);
}

static void test_bad_pdus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		run_bad_case(&bad_cases[i]);
}

/* Data digest mismatch: reported with fes 0, the stream stays usable, and
 * data without a destination is still digest-checked. */
static void test_ddgst(void **state)
{
	static struct stream s;
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
	size_t n, first;
	struct run r;

	(void)state;
	for (int dst = 0; dst < 2; dst++) {
		struct drive_cfg cfg = cfg_of(NVMFD_PDU_ROLE_HOST, false, true);

		cfg.set_dst = dst;
		memset(&s, 0, sizeof(s));
		n = nvmfd_pdu_build_icresp(h, 0, NVMFD_TCP_DGST_DATA, 8192);
		s_put(&s, h, n);
		n = nvmfd_pdu_build_data(h, NVMFD_TCP_C2H_DATA, NVMFD_TCP_F_DATA_LAST, 1, 0, 0, 300,
					 false, true);
		s_pdu(&s, h, n, 300, 1);
		first = s.len;
		s.b[s.len - 1] ^= 0x80; /* first: corrupt digest */
		s_pdu(&s, h, n, 300, 1);
		s.b[first + 24 + 7] ^= 0x01; /* second: corrupt data */
		s_pdu(&s, h, n, 300, 1); /* third: intact */

		drive_all(&cfg, s.b, s.len, &r);
		assert_int_equal(r.n, 1 + 2 + 2 + 2);
		check_ev(&r.ev[1], NVMFD_PDU_EV_HDR, NVMFD_TCP_C2H_DATA, 300);
		check_ev(&r.ev[2], NVMFD_PDU_EV_ERROR, NVMFD_TCP_C2H_DATA, 300);
		assert_int_equal(r.ev[2].err, NVMFD_PDU_ERR_DDGST);
		assert_int_equal(r.ev[2].fes, 0);
		assert_int_equal(r.ev[2].err_off, 128);
		assert_int_equal(r.ev[2].err_hdr_len, 24);
		check_ev(&r.ev[4], NVMFD_PDU_EV_ERROR, NVMFD_TCP_C2H_DATA, 300);
		assert_int_equal(r.ev[4].err, NVMFD_PDU_ERR_DDGST);
		assert_int_equal(r.ev[4].err_off, first);
		check_ev(&r.ev[6], NVMFD_PDU_EV_PDU, NVMFD_TCP_C2H_DATA, 300);
		assert_int_equal(r.consumed, s.len);
	}
	assert_int_equal(nvmfd_pdu_err_fes(NVMFD_PDU_ERR_DDGST), 0);
	assert_int_equal(nvmfd_pdu_err_fes(NVMFD_PDU_ERR_TERM), 0);
}

/*
 * Data with a digest fed in large pieces (the copy and CRC are one pass,
 * nvmfd_crc32c_copy(), for pieces of any size): three H2CData PDUs of
 * odd lengths, fed from an odd address in pieces that cut data and digest
 * anywhere; the data lands intact and a flipped data byte or digest bit
 * fails only its PDU.
 */
static void feed_pieces(struct nvmfd_pdu_rx *rx, const uint8_t *in, size_t len,
			const size_t *cuts, size_t ncuts, uint8_t *dst, int *evs, int *nev)
{
	size_t pos = 0, k = 0;

	while (pos < len) {
		size_t chunk = cuts[k++ % ncuts], used;
		enum nvmfd_pdu_ev ev;

		if (chunk > len - pos)
			chunk = len - pos;
		ev = nvmfd_pdu_rx_feed(rx, in + pos, chunk, &used);
		pos += used;
		if (ev == NVMFD_PDU_EV_NEED_MORE)
			continue;
		assert_true(*nev < EV_MAX);
		evs[(*nev)++] = ev == NVMFD_PDU_EV_ERROR ? -(int)nvmfd_pdu_rx_error(rx)->err : (int)ev;
		if (ev == NVMFD_PDU_EV_HDR)
			nvmfd_pdu_rx_set_data(rx, dst);
		if (ev == NVMFD_PDU_EV_PDU && nvmfd_pdu_rx_ch(rx)->type == NVMFD_TCP_ICREQ)
			nvmfd_pdu_rx_ic_done(rx, true, true, 0);
	}
}

static void test_ddgst_large_pieces(void **state)
{
	static struct stream s;
	static uint8_t in[STREAM_MAX + 1], dst[DATA_MAX];
	const uint32_t lens[] = { 4099, 191, 8191 };
	const size_t cuts_a[] = { 5, 4096, 193, 1, 7000, 191, 3 };
	const size_t cuts_b[] = { 200, 12289 };
	const size_t *cuts[] = { cuts_a, cuts_b };
	const size_t ncuts[] = { 7, 2 };
	struct nvmfd_pdu_rx_opts o = { .role = NVMFD_PDU_ROLE_CTRL, .hdgst = true, .ddgst = true,
				       .max_data = DATA_MAX };
	uint8_t h[NVMFD_TCP_MAX_HDR_DGST_LEN];
	size_t off[3];

	(void)state;
	memset(&s, 0, sizeof(s));
	s_put(&s, h, nvmfd_pdu_build_icreq(h, 0, NVMFD_TCP_DGST_HDR | NVMFD_TCP_DGST_DATA, 0));
	for (int i = 0; i < 3; i++) {
		size_t n = nvmfd_pdu_build_data(h, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST,
						(uint16_t)i, 1, 0, lens[i], true, true);

		off[i] = s.len + n; /* the PDU's first data byte */
		s_pdu(&s, h, n, lens[i], (unsigned int)i + 5);
	}
	for (int corrupt = 0; corrupt < 3; corrupt++) {
		for (int c = 0; c < 2; c++) {
			struct nvmfd_pdu_rx rx;
			int evs[EV_MAX], nev = 0;

			memcpy(in + 1, s.b, s.len); /* odd source address */
			if (corrupt == 1)
				in[1 + off[0] + 4000] ^= 0x40; /* data byte of PDU 0 */
			if (corrupt == 2)
				in[1 + off[2] + lens[2] + 2] ^= 0x01; /* digest of PDU 2 */
			memset(dst, 0, sizeof(dst));
			nvmfd_pdu_rx_init(&rx, &o);
			feed_pieces(&rx, in + 1, s.len, cuts[c], ncuts[c], dst, evs, &nev);
			assert_int_equal(nev, 1 + 3 * 2);
			assert_int_equal(evs[0], NVMFD_PDU_EV_PDU);
			for (int i = 0; i < 3; i++) {
				bool bad = (corrupt == 1 && i == 0) || (corrupt == 2 && i == 2);

				assert_int_equal(evs[1 + 2 * i], NVMFD_PDU_EV_HDR);
				assert_int_equal(evs[2 + 2 * i],
						 bad ? -(int)NVMFD_PDU_ERR_DDGST : NVMFD_PDU_EV_PDU);
			}
			/* the last PDU's data is in dst, copied whole */
			for (uint32_t k = 0; k < lens[2]; k++)
				assert_int_equal(dst[k], pattern(k, 7));
			assert_int_equal(rx.stream_off, s.len);
		}
	}
}

/* TermReq before the ICReq is the peer's right; digests never apply to it. */
static void test_term_before_ic(void **state)
{
	struct nvmfd_pdu_rx_opts o = { .role = NVMFD_PDU_ROLE_HOST, .hdgst = true, .max_data = 4096 };
	struct nvmfd_pdu_rx rx;
	uint8_t b[200], hdr[8] = { 0, 0, 128, 0, 128, 0, 0, 0 };
	size_t n, c;

	(void)state;
	n = nvmfd_pdu_build_term(b, sizeof(b), NVMFD_TCP_C2H_TERM, NVMFD_TCP_FES_UNSUPPORTED_PARAM,
				 8, hdr, sizeof(hdr));
	nvmfd_pdu_rx_init(&rx, &o);
	assert_int_equal(nvmfd_pdu_rx_feed(&rx, b, n, &c), NVMFD_PDU_EV_ERROR);
	assert_int_equal(c, n);
	assert_int_equal(rx.error.err, NVMFD_PDU_ERR_TERM);
	assert_int_equal(rx.error.fes, NVMFD_TCP_FES_UNSUPPORTED_PARAM);
	assert_int_equal(rx.error.fei, 8);
	assert_int_equal(rx.error.hdr_len, 8);
	assert_memory_equal(rx.error.hdr, hdr, 8);
	assert_int_equal(nvmfd_pdu_check_hdr(b, n, &o, false, NULL), NVMFD_PDU_OK);
}

/* Events stop at the boundary: the receiver never reads past an event. */
static void test_consumed_stops_at_event(void **state)
{
	struct nvmfd_pdu_rx_opts o = { .role = NVMFD_PDU_ROLE_CTRL, .max_data = 4096 };
	struct nvmfd_pdu_rx rx;
	uint8_t b[400];
	size_t n, c;
	uint8_t *p;

	(void)state;
	n = nvmfd_pdu_build_icreq(b, 0, 0, 0);
	n += nvmfd_pdu_build_cmd(b + n, &(struct nvmfd_sqe){ .opc = 0x18 }, 0, false, false);
	nvmfd_pdu_rx_init(&rx, &o);
	assert_int_equal(nvmfd_pdu_rx_want(&rx, &p), 8);
	assert_ptr_equal(p, rx.hdr);
	assert_int_equal(nvmfd_pdu_rx_feed(&rx, b, n, &c), NVMFD_PDU_EV_PDU);
	assert_int_equal(c, 128);
	assert_int_equal(nvmfd_pdu_rx_feed(&rx, b + 128, 8, &c), NVMFD_PDU_EV_NEED_MORE);
	assert_int_equal(c, 8);
	assert_int_equal(nvmfd_pdu_rx_want(&rx, &p), 64);
	memcpy(p, b + 136, 64);
	assert_int_equal(nvmfd_pdu_rx_advance(&rx, 64), NVMFD_PDU_EV_PDU);
	assert_int_equal(rx.pdus, 2);
	assert_int_equal(rx.stream_off, 200);
	/* set_data outside a data phase is ignored */
	nvmfd_pdu_rx_set_data(&rx, b);
	assert_null(rx.data_dst);
}

static void test_check_hdr_short(void **state)
{
	struct nvmfd_pdu_rx_opts o = { .role = NVMFD_PDU_ROLE_CTRL, .hdgst = true, .max_data = 4096 };
	struct nvmfd_pdu_error err;
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN];
	size_t n = nvmfd_pdu_build_cmd(b, &(struct nvmfd_sqe){ 0 }, 0, true, false);

	(void)state;
	assert_int_equal(nvmfd_pdu_check_hdr(b, 7, &o, true, &err), NVMFD_PDU_ERR_HLEN);
	assert_int_equal(err.fei, 2);
	assert_int_equal(nvmfd_pdu_check_hdr(b, n - 1, &o, true, &err), NVMFD_PDU_ERR_HLEN);
	assert_int_equal(nvmfd_pdu_check_hdr(b, n, &o, true, &err), NVMFD_PDU_OK);
	assert_int_equal(nvmfd_pdu_check_hdr(b, n, &o, false, &err), NVMFD_PDU_ERR_SEQUENCE);
}

static void test_strings(void **state)
{
	(void)state;
	for (int e = 0; e < NVMFD_PDU_ERR__MAX; e++) {
		assert_non_null(nvmfd_pdu_err_str((enum nvmfd_pdu_err)e));
		assert_string_not_equal(nvmfd_pdu_err_str((enum nvmfd_pdu_err)e), "unknown");
	}
	assert_string_equal(nvmfd_pdu_err_str(NVMFD_PDU_ERR__MAX), "unknown");
	assert_string_equal(nvmfd_pdu_err_str(NVMFD_PDU_ERR_HDGST), "header digest mismatch");
	for (uint16_t f = 1; f <= 6; f++)
		assert_string_not_equal(nvmfd_pdu_fes_str(f), "unknown");
	assert_string_equal(nvmfd_pdu_fes_str(0), "unknown");
	assert_string_equal(nvmfd_pdu_fes_str(7), "unknown");
	assert_string_equal(nvmfd_pdu_type_str(NVMFD_TCP_ICREQ), "ICReq");
	assert_string_equal(nvmfd_pdu_type_str(NVMFD_TCP_H2C_DATA), "H2CData");
	assert_string_equal(nvmfd_pdu_type_str(NVMFD_TCP_R2T), "R2T");
	assert_string_equal(nvmfd_pdu_type_str(0x08), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hlen_table),
		cmocka_unit_test(test_layout_icreq),
		cmocka_unit_test(test_layout_cmd),
		cmocka_unit_test(test_layout_rsp),
		cmocka_unit_test(test_layout_data_r2t_term),
		cmocka_unit_test(test_roundtrip_ctrl),
		cmocka_unit_test(test_roundtrip_host),
		cmocka_unit_test(test_fields_and_padding),
		cmocka_unit_test(test_bad_pdus),
		cmocka_unit_test(test_ddgst),
		cmocka_unit_test(test_ddgst_large_pieces),
		cmocka_unit_test(test_term_before_ic),
		cmocka_unit_test(test_consumed_stops_at_event),
		cmocka_unit_test(test_check_hdr_short),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
