// SPDX-License-Identifier: MIT
/*
 * fuzz_pdu.c - libFuzzer target for the NVMe/TCP receiver (src/codec).
 *
 * Input layout: byte 0 selects the options (bit 0 header digest, bit 1
 * data digest, bits 3:2 CPDA, bit 4 discard data instead of registering a
 * destination, bit 5 small max_data), byte 1 seeds the piece sizes, the
 * rest is the byte stream. Every input is run in both roles and fed three
 * ways (one buffer; pieces sized by input bytes; want/advance), and the
 * event sequences must be identical. Every accepted header and every
 * reported header error must get the same verdict (err, FES, FEI) from the
 * stateless nvmfd_pdu_check_hdr(), and every serializer's output, built
 * from input-derived fields, must validate. Invariants are checked with
 * abort() so they hold in any build type.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvmfd/pdu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_DATA_MAX 16384

enum fz_mode { FZ_WHOLE, FZ_PIECES, FZ_WANT };

struct fz_run {
	uint32_t hash; /* running CRC over the event records */
	uint32_t events;
	uint64_t consumed;
};

struct fz_rec {
	uint32_t ev;
	uint32_t data_len;
	uint64_t stream_off;
	uint8_t hdr[8];
	uint32_t err, fes, fei, hdr_len;
	uint64_t err_off;
	uint32_t err_hdr_crc;
	uint32_t data_crc;
};

static uint8_t fz_data[FZ_DATA_MAX];

#define FZ_CHECK(cond)                                                              \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "fuzz_pdu: invariant failed: %s (line %d)\n", \
				#cond, __LINE__);                                   \
			abort();                                                    \
		}                                                                   \
	} while (0)

/* The stateless check must agree with the receiver on every accepted header. */
static void fz_cross_check(const struct nvmfd_pdu_rx *rx, bool ic_seen)
{
	struct nvmfd_pdu_error err;

	FZ_CHECK(nvmfd_pdu_check_hdr(rx->hdr, sizeof(rx->hdr), &rx->opts, ic_seen, &err) ==
		 NVMFD_PDU_OK);
}

/* Handle one event; returns false when the run must stop. */
static bool fz_event(struct nvmfd_pdu_rx *rx, enum nvmfd_pdu_ev ev, bool set_dst,
		     bool *dst_set, struct fz_run *r)
{
	const struct nvmfd_pdu_error *e = nvmfd_pdu_rx_error(rx);
	struct fz_rec rec;
	bool go_on = true;

	memset(&rec, 0, sizeof(rec));
	rec.ev = ev;
	rec.data_len = nvmfd_pdu_rx_data_len(rx);
	rec.stream_off = rx->stream_off;
	memcpy(rec.hdr, rx->hdr, sizeof(rec.hdr));
	switch (ev) {
	case NVMFD_PDU_EV_HDR:
		FZ_CHECK(rec.data_len > 0 && rec.data_len <= rx->opts.max_data);
		fz_cross_check(rx, rx->pdus > 0);
		if (set_dst && rec.data_len <= sizeof(fz_data)) {
			memset(fz_data, 0, rec.data_len);
			nvmfd_pdu_rx_set_data(rx, fz_data);
			*dst_set = true;
		}
		break;
	case NVMFD_PDU_EV_PDU:
		FZ_CHECK(rx->pdus > 0);
		fz_cross_check(rx, rx->pdus > 1);
		if (*dst_set)
			rec.data_crc = nvmfd_digest(fz_data, rec.data_len);
		*dst_set = false;
		if (rx->hdr[0] == NVMFD_TCP_ICREQ || rx->hdr[0] == NVMFD_TCP_ICRESP)
			nvmfd_pdu_rx_ic_done(rx, rx->opts.hdgst, rx->opts.ddgst, 0);
		break;
	case NVMFD_PDU_EV_ERROR:
		*dst_set = false;
		FZ_CHECK(e->err > NVMFD_PDU_OK && e->err < NVMFD_PDU_ERR__MAX);
		FZ_CHECK(e->hdr_len <= NVMFD_TCP_TERM_ERR_DATA_MAX);
		FZ_CHECK(e->stream_off <= rx->stream_off);
		if (e->err != NVMFD_PDU_ERR_TERM)
			FZ_CHECK(e->fes == nvmfd_pdu_err_fes(e->err));
		rec.err = e->err;
		rec.fes = e->fes;
		rec.fei = e->fei;
		rec.hdr_len = e->hdr_len;
		rec.err_off = e->stream_off;
		rec.err_hdr_crc = nvmfd_digest(e->hdr, e->hdr_len);
		if (e->err != NVMFD_PDU_ERR_TERM && e->err != NVMFD_PDU_ERR_DDGST) {
			struct nvmfd_pdu_error e2;

			/* The stateless check agrees on the echoed bytes. */
			FZ_CHECK(e->stream_off == rx->pdu_start);
			FZ_CHECK(nvmfd_pdu_check_hdr(e->hdr, e->hdr_len, &rx->opts, rx->pdus > 0,
						     &e2) == e->err);
			FZ_CHECK(e2.fes == e->fes && e2.fei == e->fei);
		}
		go_on = e->err == NVMFD_PDU_ERR_DDGST;
		if (!go_on) {
			size_t c = 1;
			uint8_t *p;

			FZ_CHECK(rx->state == NVMFD_PDU_RX_ERROR);
			FZ_CHECK(nvmfd_pdu_rx_feed(rx, rec.hdr, sizeof(rec.hdr), &c) ==
				 NVMFD_PDU_EV_ERROR);
			FZ_CHECK(c == 0);
			FZ_CHECK(nvmfd_pdu_rx_want(rx, &p) == 0);
		}
		break;
	default:
		FZ_CHECK(0);
	}
	r->hash = nvmfd_crc32c(r->hash, &rec, sizeof(rec));
	r->events++;
	return go_on;
}

static void fz_run(const struct nvmfd_pdu_rx_opts *o, bool set_dst, const uint8_t *s, size_t len,
		   enum fz_mode m, const uint8_t *sizes, size_t nsizes, uint8_t seed,
		   struct fz_run *r)
{
	static struct nvmfd_pdu_rx rx;
	bool dst_set = false;
	size_t pos = 0, k = seed;

	memset(r, 0, sizeof(*r));
	nvmfd_pdu_rx_init(&rx, o);
	while (pos < len) {
		size_t chunk = len - pos, c = 0;
		enum nvmfd_pdu_ev ev;
		uint8_t *p;

		if (m != FZ_WHOLE && nsizes) {
			chunk = 1 + (size_t)((sizes[k % nsizes] ^ seed) % 64);
			k++;
			if (chunk > len - pos)
				chunk = len - pos;
		}
		if (m == FZ_WANT) {
			size_t w = nvmfd_pdu_rx_want(&rx, &p);

			FZ_CHECK(w > 0);
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
		FZ_CHECK(c <= chunk);
		pos += c;
		FZ_CHECK(rx.stream_off == pos);
		if (ev == NVMFD_PDU_EV_NEED_MORE) {
			FZ_CHECK(c == chunk);
			continue;
		}
		FZ_CHECK(c > 0);
		if (!fz_event(&rx, ev, set_dst, &dst_set, r))
			break;
	}
	r->consumed = pos;
}

static uint32_t fz_u32(const uint8_t *data, size_t size, size_t at)
{
	uint32_t v = 0;

	for (size_t i = 0; i < 4; i++)
		v = v << 8 | (size ? data[(at + i) % size] : 0);
	return v;
}

/* Every serializer's output passes the validator with matching options. */
static void fz_builders(const uint8_t *data, size_t size, const struct nvmfd_pdu_rx_opts *base)
{
	struct nvmfd_pdu_rx_opts o = *base;
	uint8_t b[NVMFD_TCP_MAX_HDR_DGST_LEN + NVMFD_TCP_TERM_ERR_DATA_MAX];
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	uint32_t x = fz_u32(data, size, 2), y = fz_u32(data, size, 6);
	uint32_t dl = 1 + x % o.max_data;
	uint8_t fl = (uint8_t)(y & (NVMFD_TCP_F_DATA_LAST | NVMFD_TCP_F_DATA_SUCCESS));
	uint8_t dg = (uint8_t)((o.hdgst ? NVMFD_TCP_DGST_HDR : 0) |
			       (o.ddgst ? NVMFD_TCP_DGST_DATA : 0));
	size_t n;

	o.cpda = 0; /* builders never pad */
	memset(&sqe, 0, sizeof(sqe));
	memset(&cqe, 0, sizeof(cqe));
	memcpy(&sqe, data, size < sizeof(sqe) ? size : sizeof(sqe));
	memcpy(&cqe, data, size < sizeof(cqe) ? size : sizeof(cqe));
	if (fl & NVMFD_TCP_F_DATA_SUCCESS)
		fl |= NVMFD_TCP_F_DATA_LAST;

	o.role = NVMFD_PDU_ROLE_CTRL;
	n = nvmfd_pdu_build_icreq(b, (uint8_t)(x % 32), dg, y);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, false, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_cmd(b, &sqe, (y & 1) ? dl : 0, o.hdgst, o.ddgst);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, true, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_data(b, NVMFD_TCP_H2C_DATA, fl, (uint16_t)x, (uint16_t)y, y, dl,
				 o.hdgst, o.ddgst);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, true, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_term(b, sizeof(b), NVMFD_TCP_H2C_TERM, (uint16_t)x, y, data,
				 size);
	FZ_CHECK(n >= 24 && n <= 152);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, y & 1, NULL) == NVMFD_PDU_OK);

	o.role = NVMFD_PDU_ROLE_HOST;
	n = nvmfd_pdu_build_icresp(b, (uint8_t)(y % 32), dg, 4096 + 4 * (x % 100000));
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, false, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_rsp(b, &cqe, o.hdgst);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, true, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_data(b, NVMFD_TCP_C2H_DATA, fl, (uint16_t)x, 0, y, dl, o.hdgst,
				 o.ddgst);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, true, NULL) == NVMFD_PDU_OK);
	n = nvmfd_pdu_build_r2t(b, (uint16_t)x, (uint16_t)y, x, y, o.hdgst);
	FZ_CHECK(nvmfd_pdu_check_hdr(b, n, &o, true, NULL) == NVMFD_PDU_OK);
}

/**
 * LLVMFuzzerTestOneInput() - libFuzzer entry point (also called by replay.c).
 * @data: option byte, split seed byte, then the stream; borrowed.
 * @size: bytes in @data.
 * Return: 0; a broken invariant aborts.
 * Context: single-threaded (uses static buffers).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvmfd_pdu_rx_opts o;
	struct fz_run ref, run;
	const uint8_t *s;
	bool set_dst;
	size_t len;

	if (size < 2)
		return 0;
	memset(&o, 0, sizeof(o));
	o.hdgst = data[0] & 0x01;
	o.ddgst = data[0] & 0x02;
	o.cpda = (uint8_t)((data[0] >> 2) & 0x3);
	set_dst = !(data[0] & 0x10);
	o.max_data = (data[0] & 0x20) ? 4096 : FZ_DATA_MAX;
	s = data + 2;
	len = size - 2;
	fz_builders(data, size, &o);

	for (int role = 0; role < 2; role++) {
		o.role = role ? NVMFD_PDU_ROLE_HOST : NVMFD_PDU_ROLE_CTRL;
		fz_run(&o, set_dst, s, len, FZ_WHOLE, NULL, 0, 0, &ref);
		FZ_CHECK(ref.consumed <= len);
		fz_run(&o, set_dst, s, len, FZ_PIECES, data, size, data[1], &run);
		FZ_CHECK(run.hash == ref.hash && run.events == ref.events &&
			 run.consumed == ref.consumed);
		fz_run(&o, set_dst, s, len, FZ_WANT, data, size, (uint8_t)(data[1] + 1), &run);
		FZ_CHECK(run.hash == ref.hash && run.events == ref.events &&
			 run.consumed == ref.consumed);
	}
	return 0;
}
