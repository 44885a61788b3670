// SPDX-License-Identifier: MIT
/*
 * pdu.c - NVMe/TCP PDU validation, incremental receiver and serializers.
 *
 * Validation is split in two stages so that the incremental receiver and the
 * stateless nvmfd_pdu_check_hdr() apply the same rules in the same order:
 *
 *  1. pdu_check_ch(): everything decidable from the 8-byte common header
 *     (type legal for the role, connection sequence, hlen, flags, digests,
 *     plen, pdo, data length). The receiver runs it as soon as 8 bytes are
 *     in, so a bogus hlen/plen never makes it wait for more input.
 *  2. pdu_check_rest(): the header digest, then type-specific fields of
 *     the complete header (ICReq/ICResp parameters, data PDU DATAL and
 *     reserved bytes).
 *
 * Choices where the specification or the peers leave room (see
 * doc/protocol-notes.md §1):
 *  - PFV != 0, HPDA/CPDA > 31, bad MAXH2CDATA: NVMFD_PDU_ERR_PARAM with FES
 *    0x06 (Unsupported Parameter) and FEI = the field's offset (8, 10, 12).
 *  - TermReqs are legal in both directions at any time, including before
 *    ICReq/ICResp (a controller may reject an ICReq with a C2HTermReq).
 *    Their pdo and reserved bytes are ignored: the peer is closing anyway
 *    and its FES/FEI matter more than its formatting.
 *  - Reserved bytes are only enforced where the Linux and SPDK senders zero
 *    them: H2CData bytes 20..23. ICReq/ICResp bytes 16..127, C2HData TTAG
 *    and reserved bytes and R2T reserved bytes are not checked (Linux nvmet
 *    does not clear its C2HData/R2T PDU buffers).
 *  - Undefined FLAGS bits are rejected (NVMFD_PDU_ERR_FLAGS, FEI 1).
 *  - H2CData/C2HData must carry data (pdo != 0) and their DATAL must equal
 *    the data length implied by plen/pdo (NVMFD_PDU_ERR_PLEN, FEI 16).
 *  - DDGSTF on a PDU without data is NVMFD_PDU_ERR_FLAGS.
 *  - A data digest mismatch (NVMFD_PDU_ERR_DDGST, fes 0) does not wedge the
 *    receiver: the PDU was framed correctly, so the stream stays in sync and
 *    the caller may either go on feeding (fail the command, as the Linux
 *    host does) or tear the connection down (as Linux nvmet does).
 *  - For NVMFD_PDU_ERR_TERM, error.hdr holds the peer's error data (the
 *    header it complained about), fes/fei are the peer's values.
 */
#include <assert.h>
#include <string.h>

#include <nvmfd/pdu.h>

#define CH_LEN ((uint32_t)sizeof(struct nvmfd_tcp_ch))
#define TERM_HLEN ((uint32_t)sizeof(struct nvmfd_tcp_term))
#define TERM_PLEN_MAX (TERM_HLEN + NVMFD_TCP_TERM_ERR_DATA_MAX)
#define IC_LEN ((uint32_t)sizeof(struct nvmfd_tcp_icreq))

/* FEI values: byte offsets in the PDU header. */
#define FEI_TYPE 0
#define FEI_FLAGS 1
#define FEI_HLEN 2
#define FEI_PDO 3
#define FEI_PLEN 4
#define FEI_IC_PFV 8
#define FEI_IC_PDA 10
#define FEI_IC_MAXDATA 12
#define FEI_DATA_DATAL 16
#define FEI_DATA_RSVD 20

/* What stage 1 learned about the PDU. */
struct pdu_shape {
	uint32_t hdr_len; /* hlen + header digest */
	uint32_t pad; /* bytes between header (+digest) and data */
	uint32_t data_len; /* data bytes (TermReq: error data bytes) */
	bool ddgst; /* a data digest follows the data */
};

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static bool type_is_ic(uint8_t type)
{
	return type == NVMFD_TCP_ICREQ || type == NVMFD_TCP_ICRESP;
}

static bool type_is_term(uint8_t type)
{
	return type == NVMFD_TCP_H2C_TERM || type == NVMFD_TCP_C2H_TERM;
}

static bool type_is_data(uint8_t type)
{
	return type == NVMFD_TCP_H2C_DATA || type == NVMFD_TCP_C2H_DATA;
}

static bool type_legal(uint8_t type, enum nvmfd_pdu_role role)
{
	switch (type) {
	case NVMFD_TCP_ICREQ:
	case NVMFD_TCP_H2C_TERM:
	case NVMFD_TCP_CMD:
	case NVMFD_TCP_H2C_DATA:
		return role == NVMFD_PDU_ROLE_CTRL;
	case NVMFD_TCP_ICRESP:
	case NVMFD_TCP_C2H_TERM:
	case NVMFD_TCP_RSP:
	case NVMFD_TCP_C2H_DATA:
	case NVMFD_TCP_R2T:
		return role == NVMFD_PDU_ROLE_HOST;
	default:
		return false;
	}
}

/* FLAGS bits a PDU type may carry at all. */
static uint8_t type_flags(uint8_t type)
{
	switch (type) {
	case NVMFD_TCP_CMD:
		return NVMFD_TCP_F_HDGST | NVMFD_TCP_F_DDGST;
	case NVMFD_TCP_RSP:
	case NVMFD_TCP_R2T:
		return NVMFD_TCP_F_HDGST;
	case NVMFD_TCP_H2C_DATA:
		return NVMFD_TCP_F_HDGST | NVMFD_TCP_F_DDGST | NVMFD_TCP_F_DATA_LAST;
	case NVMFD_TCP_C2H_DATA:
		return NVMFD_TCP_F_HDGST | NVMFD_TCP_F_DDGST | NVMFD_TCP_F_DATA_LAST |
		       NVMFD_TCP_F_DATA_SUCCESS;
	default:
		return 0; /* ICReq, ICResp, TermReqs */
	}
}

/**
 * nvmfd_pdu_hlen() - fixed header length of a PDU type.
 * @type: PDU type byte.
 * Return: hlen in bytes (128, 72 or 24), 0 for an unknown type.
 * Context: any thread; pure.
 */
uint8_t nvmfd_pdu_hlen(uint8_t type)
{
	switch (type) {
	case NVMFD_TCP_ICREQ:
	case NVMFD_TCP_ICRESP:
		return (uint8_t)IC_LEN;
	case NVMFD_TCP_CMD:
		return (uint8_t)sizeof(struct nvmfd_tcp_cmd);
	case NVMFD_TCP_H2C_TERM:
	case NVMFD_TCP_C2H_TERM:
	case NVMFD_TCP_RSP:
	case NVMFD_TCP_H2C_DATA:
	case NVMFD_TCP_C2H_DATA:
	case NVMFD_TCP_R2T:
		return 24;
	default:
		return 0;
	}
}

static enum nvmfd_pdu_err set_err(struct nvmfd_pdu_error *e, enum nvmfd_pdu_err err,
				  uint16_t fes, uint32_t fei)
{
	e->err = err;
	e->fes = fes;
	e->fei = fei;
	return err;
}

/*
 * Stage 1: rules decidable from the common header @h (8 bytes). @ic_seen:
 * the ICReq/ICResp has been received (sequence rules); @dgst: negotiated
 * digests apply. On success fills @shape.
 */
static enum nvmfd_pdu_err pdu_check_ch(const uint8_t *h, const struct nvmfd_pdu_rx_opts *opts,
				       bool ic_seen, bool dgst, struct pdu_shape *shape,
				       struct nvmfd_pdu_error *e)
{
	uint8_t type = h[0], flags = h[1], hlen = h[2], pdo = h[3];
	uint32_t plen = get_le32(h + 4);
	bool hd_neg = dgst && opts->hdgst;
	bool dd_neg = dgst && opts->ddgst;
	uint32_t hdr_len, dd, align;

	memset(shape, 0, sizeof(*shape));

	if (!type_legal(type, opts->role))
		return set_err(e, NVMFD_PDU_ERR_TYPE, NVMFD_TCP_FES_INVALID_HEADER, FEI_TYPE);
	if (type_is_ic(type) ? ic_seen : (!ic_seen && !type_is_term(type)))
		return set_err(e, NVMFD_PDU_ERR_SEQUENCE, NVMFD_TCP_FES_PDU_SEQUENCE, FEI_TYPE);
	if (hlen != nvmfd_pdu_hlen(type))
		return set_err(e, NVMFD_PDU_ERR_HLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_HLEN);

	/* Flags: only the ones defined for the type; digests as negotiated. */
	if (flags & ~type_flags(type))
		return set_err(e, NVMFD_PDU_ERR_FLAGS, NVMFD_TCP_FES_INVALID_HEADER, FEI_FLAGS);
	if ((flags & NVMFD_TCP_F_DATA_SUCCESS) && !(flags & NVMFD_TCP_F_DATA_LAST))
		return set_err(e, NVMFD_PDU_ERR_FLAGS, NVMFD_TCP_FES_INVALID_HEADER, FEI_FLAGS);
	if (!type_is_ic(type) && !type_is_term(type)) {
		if ((flags & NVMFD_TCP_F_HDGST) && !hd_neg)
			return set_err(e, NVMFD_PDU_ERR_FLAGS, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_FLAGS);
		if (!(flags & NVMFD_TCP_F_HDGST) && hd_neg)
			return set_err(e, NVMFD_PDU_ERR_DGST_MISSING,
				       NVMFD_TCP_FES_INVALID_HEADER, FEI_FLAGS);
		if ((flags & NVMFD_TCP_F_DDGST) && !dd_neg)
			return set_err(e, NVMFD_PDU_ERR_FLAGS, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_FLAGS);
	}
	hdr_len = hlen + ((flags & NVMFD_TCP_F_HDGST) ? NVMFD_TCP_DIGEST_LEN : 0);
	shape->hdr_len = hdr_len;

	if (plen < hdr_len)
		return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_PLEN);
	if (type_is_ic(type) && plen != IC_LEN)
		return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_PLEN);
	if (type_is_term(type)) {
		if (plen > TERM_PLEN_MAX)
			return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_PLEN);
		shape->data_len = plen - hdr_len; /* error data, no pdo rules */
		return NVMFD_PDU_OK;
	}

	/* Types that never carry data. */
	if (type != NVMFD_TCP_CMD && !type_is_data(type)) {
		if (pdo != 0)
			return set_err(e, NVMFD_PDU_ERR_PDO, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_PDO);
		if (plen != hdr_len)
			return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_PLEN);
		return NVMFD_PDU_OK;
	}

	if (pdo == 0) {
		/* No data: only a CapsuleCmd may do that. */
		if (type_is_data(type))
			return set_err(e, NVMFD_PDU_ERR_PDO, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_PDO);
		if (plen != hdr_len)
			return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_PLEN);
		if (flags & NVMFD_TCP_F_DDGST)
			return set_err(e, NVMFD_PDU_ERR_FLAGS, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_FLAGS);
		return NVMFD_PDU_OK;
	}

	align = ((uint32_t)opts->cpda + 1) * 4;
	if (pdo < hdr_len || (opts->cpda && pdo % align) || pdo > plen)
		return set_err(e, NVMFD_PDU_ERR_PDO, NVMFD_TCP_FES_INVALID_HEADER, FEI_PDO);
	if (dd_neg && !(flags & NVMFD_TCP_F_DDGST))
		return set_err(e, NVMFD_PDU_ERR_DGST_MISSING, NVMFD_TCP_FES_INVALID_HEADER,
			       FEI_FLAGS);
	dd = (flags & NVMFD_TCP_F_DDGST) ? NVMFD_TCP_DIGEST_LEN : 0;
	if (plen - pdo <= dd)
		return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_PLEN);
	shape->pad = pdo - hdr_len;
	shape->data_len = plen - pdo - dd;
	shape->ddgst = dd != 0;
	if (shape->data_len > opts->max_data)
		return set_err(e, NVMFD_PDU_ERR_DATA_TOO_LONG,
			       NVMFD_TCP_FES_DATA_LIMIT_EXCEEDED, opts->max_data);
	return NVMFD_PDU_OK;
}

/*
 * Stage 2: the complete header @h (shape->hdr_len bytes, digest included):
 * header digest first, then type-specific fields.
 */
static enum nvmfd_pdu_err pdu_check_rest(const uint8_t *h, const struct pdu_shape *shape,
					 struct nvmfd_pdu_error *e)
{
	uint8_t type = h[0], hlen = h[2];

	if (h[1] & NVMFD_TCP_F_HDGST) {
		if (get_le32(h + hlen) != nvmfd_digest(h, hlen))
			return set_err(e, NVMFD_PDU_ERR_HDGST, NVMFD_TCP_FES_HDR_DIGEST, hlen);
	}

	switch (type) {
	case NVMFD_TCP_ICREQ:
	case NVMFD_TCP_ICRESP:
		if (get_le16(h + FEI_IC_PFV) != NVMFD_TCP_PFV_1_0)
			return set_err(e, NVMFD_PDU_ERR_PARAM, NVMFD_TCP_FES_UNSUPPORTED_PARAM,
				       FEI_IC_PFV);
		if (h[FEI_IC_PDA] > NVMFD_TCP_HPDA_MAX)
			return set_err(e, NVMFD_PDU_ERR_PARAM, NVMFD_TCP_FES_UNSUPPORTED_PARAM,
				       FEI_IC_PDA);
		if (type == NVMFD_TCP_ICRESP) {
			uint32_t maxh2cdata = get_le32(h + FEI_IC_MAXDATA);

			if (maxh2cdata < NVMFD_TCP_MIN_MAXH2CDATA || maxh2cdata % 4)
				return set_err(e, NVMFD_PDU_ERR_PARAM,
					       NVMFD_TCP_FES_UNSUPPORTED_PARAM, FEI_IC_MAXDATA);
		}
		break;
	case NVMFD_TCP_H2C_DATA:
	case NVMFD_TCP_C2H_DATA:
		if (get_le32(h + FEI_DATA_DATAL) != shape->data_len)
			return set_err(e, NVMFD_PDU_ERR_PLEN, NVMFD_TCP_FES_INVALID_HEADER,
				       FEI_DATA_DATAL);
		if (type == NVMFD_TCP_H2C_DATA) {
			for (uint32_t i = FEI_DATA_RSVD; i < 24; i++)
				if (h[i])
					return set_err(e, NVMFD_PDU_ERR_RSVD,
						       NVMFD_TCP_FES_INVALID_HEADER, i);
		}
		break;
	default:
		break;
	}
	return NVMFD_PDU_OK;
}

static void err_copy_hdr(struct nvmfd_pdu_error *e, const uint8_t *h, size_t len)
{
	if (len > NVMFD_TCP_TERM_ERR_DATA_MAX)
		len = NVMFD_TCP_TERM_ERR_DATA_MAX;
	memcpy(e->hdr, h, len);
	e->hdr_len = (uint32_t)len;
}

/**
 * nvmfd_pdu_check_hdr() - validate a complete PDU header (stateless).
 * @hdr:     hlen bytes plus 4 header digest bytes when HDGSTF is set, borrowed.
 * @len:     bytes available in @hdr.
 * @opts:    negotiated parameters (role, digests, cpda, max_data).
 * @ic_done: ICReq/ICResp has completed: digests apply, IC PDUs are a sequence
 *           error, and other PDUs are allowed.
 * @err:     out (may be NULL): the failed rule with FES/FEI, stream_off 0 and
 *           up to 128 bytes of @hdr.
 * Return: NVMFD_PDU_OK, or the first rule that fails, in the receiver's
 *         order; NVMFD_PDU_ERR_HLEN (FEI 2) also when @len is shorter than
 *         8 or than the header the common header announces.
 * Context: any thread; pure.
 */
enum nvmfd_pdu_err nvmfd_pdu_check_hdr(const void *hdr, size_t len,
				       const struct nvmfd_pdu_rx_opts *opts, bool ic_done,
				       struct nvmfd_pdu_error *err)
{
	struct nvmfd_pdu_error local;
	struct nvmfd_pdu_error *e = err ? err : &local;
	struct pdu_shape shape;
	enum nvmfd_pdu_err r;

	memset(e, 0, sizeof(*e));
	if (len < CH_LEN) {
		r = set_err(e, NVMFD_PDU_ERR_HLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_HLEN);
		goto fail;
	}
	r = pdu_check_ch(hdr, opts, ic_done, ic_done, &shape, e);
	if (r != NVMFD_PDU_OK)
		goto fail;
	if (len < shape.hdr_len) {
		r = set_err(e, NVMFD_PDU_ERR_HLEN, NVMFD_TCP_FES_INVALID_HEADER, FEI_HLEN);
		goto fail;
	}
	r = pdu_check_rest(hdr, &shape, e);
	if (r != NVMFD_PDU_OK)
		goto fail;
	return NVMFD_PDU_OK;

fail:
	err_copy_hdr(e, hdr, len);
	return r;
}

/* ------------------------------------------------------------------ */
/* Incremental receiver                                                */
/* ------------------------------------------------------------------ */

static void rx_start_pdu(struct nvmfd_pdu_rx *rx)
{
	rx->state = NVMFD_PDU_RX_CH;
	rx->hdr_have = 0;
	rx->hdr_need = CH_LEN;
	rx->pdu_start = rx->stream_off;
}

/**
 * nvmfd_pdu_rx_init() - reset a receiver to expect the first PDU.
 * @rx:   receiver, caller-owned storage.
 * @opts: copied. In the controller role the digests in @opts apply once the
 *        ICReq is received; in the host role once nvmfd_pdu_rx_ic_done() is
 *        called. nvmfd_pdu_rx_ic_done() overrides them in both roles.
 * Context: the receiver's owner.
 */
void nvmfd_pdu_rx_init(struct nvmfd_pdu_rx *rx, const struct nvmfd_pdu_rx_opts *opts)
{
	memset(rx, 0, sizeof(*rx));
	rx->opts = *opts;
	rx_start_pdu(rx);
}

/**
 * nvmfd_pdu_rx_ic_done() - apply negotiated digests and data limit.
 * @rx:       receiver.
 * @hdgst:    header digest enabled.
 * @ddgst:    data digest enabled.
 * @max_data: new maximum data bytes per PDU; 0 keeps the old one.
 * Context: the receiver's owner, between feeds (e.g. right after the
 *          NVMFD_PDU_EV_PDU of the ICReq/ICResp).
 */
void nvmfd_pdu_rx_ic_done(struct nvmfd_pdu_rx *rx, bool hdgst, bool ddgst, uint32_t max_data)
{
	rx->opts.hdgst = hdgst;
	rx->opts.ddgst = ddgst;
	if (max_data)
		rx->opts.max_data = max_data;
	rx->ic_done = true;
}

static enum nvmfd_pdu_ev rx_fail(struct nvmfd_pdu_rx *rx)
{
	rx->state = NVMFD_PDU_RX_ERROR;
	rx->error.stream_off = rx->pdu_start;
	err_copy_hdr(&rx->error, rx->hdr, rx->hdr_have);
	return NVMFD_PDU_EV_ERROR;
}

/* The current PDU has been consumed completely. */
static enum nvmfd_pdu_ev rx_finish(struct nvmfd_pdu_rx *rx)
{
	const uint8_t *h = rx->hdr;

	rx->pdus++;
	if (type_is_term(h[0])) {
		/* error.hdr already holds the error data (the data destination). */
		rx->error.err = NVMFD_PDU_ERR_TERM;
		rx->error.fes = get_le16(h + 8);
		rx->error.fei = get_le32(h + 10);
		rx->error.stream_off = rx->pdu_start;
		rx->error.hdr_len = rx->data_len;
		rx->state = NVMFD_PDU_RX_ERROR;
		return NVMFD_PDU_EV_ERROR;
	}
	if (h[0] == NVMFD_TCP_ICREQ)
		rx->ic_done = true; /* controller: the ICReq opens the connection */
	rx_start_pdu(rx);
	return NVMFD_PDU_EV_PDU;
}

/* Header and digest are in and valid: set up padding/data. */
static enum nvmfd_pdu_ev rx_start_body(struct nvmfd_pdu_rx *rx, const struct pdu_shape *shape)
{
	rx->pad_left = shape->pad;
	rx->data_len = shape->data_len;
	rx->data_have = 0;
	rx->data_dst = NULL;
	rx->ddgst_calc = NVMFD_CRC32C_INIT;
	rx->ddgst_have = 0;
	if (!shape->data_len)
		return rx_finish(rx);
	rx->state = rx->pad_left ? NVMFD_PDU_RX_PAD : NVMFD_PDU_RX_DATA;
	if (type_is_term(rx->hdr[0])) {
		/* shape guarantees data_len <= 128 for TermReqs */
		rx->data_dst = rx->error.hdr;
		return NVMFD_PDU_EV_NEED_MORE;
	}
	return NVMFD_PDU_EV_HDR;
}

static bool rx_dgst_apply(const struct nvmfd_pdu_rx *rx)
{
	return rx->ic_done;
}

/*
 * Account for @n bytes of the current region. @src is where they are when
 * no destination holds them (discarded data fed through feed()), or NULL.
 * @crc_done: the caller already added data bytes to the data digest
 * (copied with nvmfd_crc32c_copy()).
 */
static enum nvmfd_pdu_ev rx_step(struct nvmfd_pdu_rx *rx, size_t n, const uint8_t *src,
				 bool crc_done)
{
	struct pdu_shape shape;

	rx->stream_off += n;
	switch (rx->state) {
	case NVMFD_PDU_RX_CH:
		rx->hdr_have += (uint32_t)n;
		if (rx->hdr_have < CH_LEN)
			return NVMFD_PDU_EV_NEED_MORE;
		if (pdu_check_ch(rx->hdr, &rx->opts, rx->pdus > 0, rx_dgst_apply(rx), &shape,
				 &rx->error) != NVMFD_PDU_OK)
			return rx_fail(rx);
		/* Keep the shape: nvmfd_pdu_rx_ic_done() may change opts meanwhile. */
		rx->hdr_need = shape.hdr_len;
		rx->pad_left = shape.pad;
		rx->data_len = shape.data_len;
		rx->state = NVMFD_PDU_RX_HDR;
		return NVMFD_PDU_EV_NEED_MORE;
	case NVMFD_PDU_RX_HDR:
		rx->hdr_have += (uint32_t)n;
		if (rx->hdr_have < rx->hdr_need)
			return NVMFD_PDU_EV_NEED_MORE;
		shape.hdr_len = rx->hdr_need;
		shape.pad = rx->pad_left;
		shape.data_len = rx->data_len;
		shape.ddgst = rx->hdr[1] & NVMFD_TCP_F_DDGST;
		if (pdu_check_rest(rx->hdr, &shape, &rx->error) != NVMFD_PDU_OK)
			return rx_fail(rx);
		return rx_start_body(rx, &shape);
	case NVMFD_PDU_RX_PAD:
		rx->pad_left -= (uint32_t)n;
		if (!rx->pad_left)
			rx->state = NVMFD_PDU_RX_DATA;
		return NVMFD_PDU_EV_NEED_MORE;
	case NVMFD_PDU_RX_DATA:
		if (rx->data_dst)
			src = rx->data_dst + rx->data_have;
		/* CRC32C only when the PDU carries a data digest to check */
		if (src && !crc_done && (rx->hdr[1] & NVMFD_TCP_F_DDGST))
			rx->ddgst_calc = nvmfd_crc32c(rx->ddgst_calc, src, n);
		rx->data_have += (uint32_t)n;
		if (rx->data_have < rx->data_len)
			return NVMFD_PDU_EV_NEED_MORE;
		if (rx->hdr[1] & NVMFD_TCP_F_DDGST) {
			rx->state = NVMFD_PDU_RX_DDGST;
			return NVMFD_PDU_EV_NEED_MORE;
		}
		return rx_finish(rx);
	case NVMFD_PDU_RX_DDGST:
		rx->ddgst_have += (uint32_t)n;
		if (rx->ddgst_have < NVMFD_TCP_DIGEST_LEN)
			return NVMFD_PDU_EV_NEED_MORE;
		if (get_le32(rx->ddgst) != nvmfd_crc32c_final(rx->ddgst_calc)) {
			/* Framing is intact: report, then continue with the next PDU. */
			set_err(&rx->error, NVMFD_PDU_ERR_DDGST, 0, 0);
			rx->error.stream_off = rx->pdu_start;
			err_copy_hdr(&rx->error, rx->hdr, rx->hdr_need);
			rx->pdus++;
			rx_start_pdu(rx);
			return NVMFD_PDU_EV_ERROR;
		}
		return rx_finish(rx);
	case NVMFD_PDU_RX_ERROR:
	default:
		return NVMFD_PDU_EV_ERROR;
	}
}

/**
 * nvmfd_pdu_rx_want() - where the next bytes should go.
 * @rx:  receiver.
 * @ptr: out: destination, or NULL for bytes to discard (padding, data
 *       without a destination). Discarded data must go through
 *       nvmfd_pdu_rx_feed() to be digest-checked; advancing over it
 *       skips it unseen, which fails the data digest if one is present.
 * Return: bytes until the next boundary; 0 only in the error state.
 * Context: the receiver's owner.
 */
size_t nvmfd_pdu_rx_want(struct nvmfd_pdu_rx *rx, uint8_t **ptr)
{
	*ptr = NULL;
	switch (rx->state) {
	case NVMFD_PDU_RX_CH:
	case NVMFD_PDU_RX_HDR:
		*ptr = rx->hdr + rx->hdr_have;
		return rx->hdr_need - rx->hdr_have;
	case NVMFD_PDU_RX_PAD:
		return rx->pad_left;
	case NVMFD_PDU_RX_DATA:
		if (rx->data_dst)
			*ptr = rx->data_dst + rx->data_have;
		return rx->data_len - rx->data_have;
	case NVMFD_PDU_RX_DDGST:
		*ptr = rx->ddgst + rx->ddgst_have;
		return NVMFD_TCP_DIGEST_LEN - rx->ddgst_have;
	case NVMFD_PDU_RX_ERROR:
	default:
		return 0;
	}
}

/**
 * nvmfd_pdu_rx_advance() - account for @n bytes placed where _want() said.
 * @rx: receiver.
 * @n:  bytes received, at most what nvmfd_pdu_rx_want() returned.
 * Return: as nvmfd_pdu_rx_feed().
 * Context: the receiver's owner.
 */
enum nvmfd_pdu_ev nvmfd_pdu_rx_advance(struct nvmfd_pdu_rx *rx, size_t n)
{
	uint8_t *ptr;
	size_t want = nvmfd_pdu_rx_want(rx, &ptr);

	if (rx->state == NVMFD_PDU_RX_ERROR)
		return NVMFD_PDU_EV_ERROR;
	assert(n <= want);
	if (n > want)
		n = want;
	if (!n)
		return NVMFD_PDU_EV_NEED_MORE;
	return rx_step(rx, n, NULL, false);
}

/**
 * nvmfd_pdu_rx_feed() - consume bytes until the next event.
 * @rx:       receiver.
 * @buf:      @len input bytes, borrowed.
 * @len:      bytes available.
 * @consumed: out: bytes of @buf used, <= @len.
 * Return: the next event (see enum nvmfd_pdu_ev). NVMFD_PDU_EV_ERROR is
 *         sticky (consumed 0 on every later call) except for
 *         NVMFD_PDU_ERR_DDGST, after which the next PDU can be fed.
 * Context: the receiver's owner; no allocation.
 */
enum nvmfd_pdu_ev nvmfd_pdu_rx_feed(struct nvmfd_pdu_rx *rx, const void *buf, size_t len,
				   size_t *consumed)
{
	const uint8_t *in = buf;
	size_t off = 0;

	*consumed = 0;
	if (rx->state == NVMFD_PDU_RX_ERROR)
		return NVMFD_PDU_EV_ERROR;
	while (off < len) {
		uint8_t *dst;
		size_t n = nvmfd_pdu_rx_want(rx, &dst);
		enum nvmfd_pdu_ev ev;

		if (n > len - off)
			n = len - off;
		if (dst && rx->state == NVMFD_PDU_RX_DATA && (rx->hdr[1] & NVMFD_TCP_F_DDGST)) {
			/* Data with a digest: copy and CRC in one pass. */
			rx->ddgst_calc = nvmfd_crc32c_copy(rx->ddgst_calc, dst, in + off, n);
			ev = rx_step(rx, n, NULL, true);
		} else {
			if (dst)
				memcpy(dst, in + off, n);
			ev = rx_step(rx, n, in + off, false);
		}
		off += n;
		if (ev != NVMFD_PDU_EV_NEED_MORE) {
			*consumed = off;
			return ev;
		}
	}
	*consumed = off;
	return NVMFD_PDU_EV_NEED_MORE;
}

/**
 * nvmfd_pdu_rx_set_data() - register the current PDU's data destination.
 * @rx:  receiver, after NVMFD_PDU_EV_HDR and before any data byte is fed.
 * @dst: nvmfd_pdu_rx_data_len() bytes, borrowed until the PDU completes.
 *       Ignored when called at any other point.
 * Context: the receiver's owner.
 */
void nvmfd_pdu_rx_set_data(struct nvmfd_pdu_rx *rx, void *dst)
{
	if ((rx->state != NVMFD_PDU_RX_PAD && rx->state != NVMFD_PDU_RX_DATA) || rx->data_have)
		return;
	if (type_is_term(rx->hdr[0]))
		return;
	rx->data_dst = dst;
}

/* ------------------------------------------------------------------ */
/* Serializers                                                         */
/* ------------------------------------------------------------------ */

static size_t build_ch(uint8_t *b, uint8_t type, uint8_t flags, uint32_t data_len, bool hdgst,
		       bool ddgst)
{
	uint32_t hlen = nvmfd_pdu_hlen(type);
	uint32_t hd = hdgst ? NVMFD_TCP_DIGEST_LEN : 0;
	uint32_t dd = (ddgst && data_len) ? NVMFD_TCP_DIGEST_LEN : 0;

	memset(b, 0, hlen + hd);
	if (hdgst)
		flags |= NVMFD_TCP_F_HDGST;
	if (dd)
		flags |= NVMFD_TCP_F_DDGST;
	b[0] = type;
	b[1] = flags;
	b[2] = (uint8_t)hlen;
	b[3] = (uint8_t)(data_len ? hlen + hd : 0);
	put_le32(b + 4, hlen + hd + data_len + dd);
	return hlen + hd;
}

static size_t build_finish(uint8_t *b, size_t hdr_len, bool hdgst)
{
	if (hdgst)
		put_le32(b + hdr_len - NVMFD_TCP_DIGEST_LEN,
			 nvmfd_digest(b, hdr_len - NVMFD_TCP_DIGEST_LEN));
	return hdr_len;
}

/* ICReq and ICResp share one layout: PDA at 10, digests at 11, then
 * MAXR2T (ICReq) or MAXH2CDATA (ICResp) at 12. */
static size_t build_ic(uint8_t *b, uint8_t type, uint8_t pda, uint8_t dgst, uint32_t max)
{
	size_t n = build_ch(b, type, 0, 0, false, false);

	b[FEI_IC_PDA] = pda;
	b[11] = dgst;
	put_le32(b + 12, max);
	return n;
}

/**
 * nvmfd_pdu_build_icreq() - write an ICReq (128 bytes, no digests).
 * @buf:    at least 128 bytes.
 * @hpda:   host PDU data alignment, 0's based dwords (0..31).
 * @dgst:   NVMFD_TCP_DGST_HDR / NVMFD_TCP_DGST_DATA requested.
 * @maxr2t: 0's based maximum outstanding R2Ts per command.
 * Return: 128.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_icreq(void *buf, uint8_t hpda, uint8_t dgst, uint32_t maxr2t)
{
	return build_ic(buf, NVMFD_TCP_ICREQ, hpda, dgst, maxr2t);
}

/**
 * nvmfd_pdu_build_icresp() - write an ICResp (128 bytes, no digests).
 * @buf:        at least 128 bytes.
 * @cpda:       controller PDU data alignment, 0's based dwords.
 * @dgst:       digests granted (NVMFD_TCP_DGST_*).
 * @maxh2cdata: bytes per H2CData PDU (multiple of 4, >= 4096).
 * Return: 128.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_icresp(void *buf, uint8_t cpda, uint8_t dgst, uint32_t maxh2cdata)
{
	return build_ic(buf, NVMFD_TCP_ICRESP, cpda, dgst, maxh2cdata);
}

/**
 * nvmfd_pdu_build_cmd() - write a CapsuleCmd header.
 * @buf:     at least NVMFD_TCP_MAX_HDR_DGST_LEN bytes.
 * @sqe:     the 64-byte command, copied.
 * @icd_len: in-capsule data bytes that will follow (0: none).
 * @hdgst:   append a header digest.
 * @ddgst:   a data digest will follow the in-capsule data (only if @icd_len).
 * Return: header bytes to send: 72 or 76.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_cmd(void *buf, const struct nvmfd_sqe *sqe, uint32_t icd_len, bool hdgst,
			   bool ddgst)
{
	uint8_t *b = buf;
	size_t n = build_ch(b, NVMFD_TCP_CMD, 0, icd_len, hdgst, ddgst);

	memcpy(b + CH_LEN, sqe, sizeof(*sqe));
	return build_finish(b, n, hdgst);
}

/**
 * nvmfd_pdu_build_rsp() - write a CapsuleResp.
 * @buf:   at least NVMFD_TCP_MAX_HDR_DGST_LEN bytes.
 * @cqe:   the 16-byte completion, copied.
 * @hdgst: append a header digest.
 * Return: bytes to send: 24 or 28.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_rsp(void *buf, const struct nvmfd_cqe *cqe, bool hdgst)
{
	uint8_t *b = buf;
	size_t n = build_ch(b, NVMFD_TCP_RSP, 0, 0, hdgst, false);

	memcpy(b + CH_LEN, cqe, sizeof(*cqe));
	return build_finish(b, n, hdgst);
}

/**
 * nvmfd_pdu_build_data() - write an H2CData or C2HData header.
 * @buf:   at least NVMFD_TCP_MAX_HDR_DGST_LEN bytes.
 * @type:  NVMFD_TCP_H2C_DATA or NVMFD_TCP_C2H_DATA.
 * @flags: NVMFD_TCP_F_DATA_LAST, NVMFD_TCP_F_DATA_SUCCESS (C2H); other bits dropped.
 * @cccid: command identifier.
 * @ttag:  transfer tag from the R2T (H2C); 0 for C2H.
 * @datao: byte offset of this data in the command's data.
 * @datal: data bytes following the header.
 * @hdgst: append a header digest.
 * @ddgst: a data digest will follow the data.
 * Return: header bytes to send: 24 or 28.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_data(void *buf, uint8_t type, uint8_t flags, uint16_t cccid,
			    uint16_t ttag, uint32_t datao, uint32_t datal, bool hdgst, bool ddgst)
{
	uint8_t *b = buf;
	uint8_t keep = NVMFD_TCP_F_DATA_LAST;
	size_t n;

	if (type == NVMFD_TCP_C2H_DATA)
		keep |= NVMFD_TCP_F_DATA_SUCCESS;
	n = build_ch(b, type, flags & keep, datal, hdgst, ddgst);
	b[8] = (uint8_t)cccid;
	b[9] = (uint8_t)(cccid >> 8);
	b[10] = (uint8_t)ttag;
	b[11] = (uint8_t)(ttag >> 8);
	put_le32(b + 12, datao);
	put_le32(b + 16, datal);
	return build_finish(b, n, hdgst);
}

/**
 * nvmfd_pdu_build_r2t() - write an R2T.
 * @buf:   at least NVMFD_TCP_MAX_HDR_DGST_LEN bytes.
 * @cccid: command identifier.
 * @ttag:  transfer tag the host echoes in its H2CData.
 * @r2to:  requested data offset.
 * @r2tl:  requested data length.
 * @hdgst: append a header digest.
 * Return: bytes to send: 24 or 28.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_r2t(void *buf, uint16_t cccid, uint16_t ttag, uint32_t r2to,
			   uint32_t r2tl, bool hdgst)
{
	uint8_t *b = buf;
	size_t n = build_ch(b, NVMFD_TCP_R2T, 0, 0, hdgst, false);

	b[8] = (uint8_t)cccid;
	b[9] = (uint8_t)(cccid >> 8);
	b[10] = (uint8_t)ttag;
	b[11] = (uint8_t)(ttag >> 8);
	put_le32(b + 12, r2to);
	put_le32(b + 16, r2tl);
	return build_finish(b, n, hdgst);
}

/**
 * nvmfd_pdu_build_term() - write a complete H2CTermReq / C2HTermReq.
 * @buf:      @buf_len bytes.
 * @buf_len:  room in @buf; the error data is truncated to fit.
 * @type:     NVMFD_TCP_H2C_TERM or NVMFD_TCP_C2H_TERM.
 * @fes:      fatal error status (enum nvmfd_tcp_fes).
 * @fei:      field error information.
 * @err_data: the offending header, @err_len bytes (may be NULL if 0).
 * @err_len:  bytes; at most 128 are copied.
 * Return: the PDU length to send (24 + error data), 0 if @buf_len < 24.
 * Context: any thread; pure.
 */
size_t nvmfd_pdu_build_term(void *buf, size_t buf_len, uint8_t type, uint16_t fes, uint32_t fei,
			    const void *err_data, size_t err_len)
{
	uint8_t *b = buf;

	if (buf_len < TERM_HLEN)
		return 0;
	if (err_len > NVMFD_TCP_TERM_ERR_DATA_MAX)
		err_len = NVMFD_TCP_TERM_ERR_DATA_MAX;
	if (err_len > buf_len - TERM_HLEN)
		err_len = buf_len - TERM_HLEN;
	build_ch(b, type, 0, 0, false, false);
	put_le32(b + 4, TERM_HLEN + (uint32_t)err_len);
	b[8] = (uint8_t)fes;
	b[9] = (uint8_t)(fes >> 8);
	put_le32(b + 10, fei);
	if (err_len)
		memcpy(b + TERM_HLEN, err_data, err_len);
	return TERM_HLEN + err_len;
}

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * nvmfd_pdu_err_fes() - the FES a receiver sends in its TermReq for @err.
 * @err: a codec error.
 * Return: the FES (enum nvmfd_tcp_fes), or 0 for NVMFD_PDU_OK,
 *         NVMFD_PDU_ERR_TERM (never answer a TermReq) and NVMFD_PDU_ERR_DDGST
 *         (not a framing error: the command fails with a transport error
 *         status, or the receiver closes the connection by its own choice).
 *         NVMFD_PDU_ERR_PLEN also covers a DATAL mismatch (FES 0x01).
 * Context: any thread; pure.
 */
uint16_t nvmfd_pdu_err_fes(enum nvmfd_pdu_err err)
{
	switch (err) {
	case NVMFD_PDU_ERR_TYPE:
	case NVMFD_PDU_ERR_HLEN:
	case NVMFD_PDU_ERR_PDO:
	case NVMFD_PDU_ERR_PLEN:
	case NVMFD_PDU_ERR_FLAGS:
	case NVMFD_PDU_ERR_DGST_MISSING:
	case NVMFD_PDU_ERR_RSVD:
		return NVMFD_TCP_FES_INVALID_HEADER;
	case NVMFD_PDU_ERR_SEQUENCE:
		return NVMFD_TCP_FES_PDU_SEQUENCE;
	case NVMFD_PDU_ERR_HDGST:
		return NVMFD_TCP_FES_HDR_DIGEST;
	case NVMFD_PDU_ERR_DATA_TOO_LONG:
		return NVMFD_TCP_FES_DATA_LIMIT_EXCEEDED;
	case NVMFD_PDU_ERR_PARAM:
		return NVMFD_TCP_FES_UNSUPPORTED_PARAM;
	default:
		return 0;
	}
}

static const char *const err_names[NVMFD_PDU_ERR__MAX] = {
	[NVMFD_PDU_OK] = "ok",
	[NVMFD_PDU_ERR_TYPE] = "invalid PDU type",
	[NVMFD_PDU_ERR_HLEN] = "invalid header length",
	[NVMFD_PDU_ERR_PDO] = "invalid PDU data offset",
	[NVMFD_PDU_ERR_PLEN] = "invalid PDU length",
	[NVMFD_PDU_ERR_DATA_TOO_LONG] = "data length over limit",
	[NVMFD_PDU_ERR_FLAGS] = "invalid flags",
	[NVMFD_PDU_ERR_DGST_MISSING] = "negotiated digest missing",
	[NVMFD_PDU_ERR_HDGST] = "header digest mismatch",
	[NVMFD_PDU_ERR_DDGST] = "data digest mismatch",
	[NVMFD_PDU_ERR_RSVD] = "reserved field not zero",
	[NVMFD_PDU_ERR_SEQUENCE] = "PDU sequence error",
	[NVMFD_PDU_ERR_PARAM] = "unsupported parameter",
	[NVMFD_PDU_ERR_TERM] = "connection terminated by peer",
};

/**
 * nvmfd_pdu_err_str() - human-readable name of a codec error.
 * @err: error.
 * Return: a static string; "unknown" for values out of range.
 * Context: any thread.
 */
const char *nvmfd_pdu_err_str(enum nvmfd_pdu_err err)
{
	if ((unsigned int)err >= NVMFD_PDU_ERR__MAX || !err_names[err])
		return "unknown";
	return err_names[err];
}

/**
 * nvmfd_pdu_fes_str() - human-readable name of a Fatal Error Status.
 * @fes: FES value from a TermReq.
 * Return: a static string; "unknown" for undefined values.
 * Context: any thread.
 */
const char *nvmfd_pdu_fes_str(uint16_t fes)
{
	switch (fes) {
	case NVMFD_TCP_FES_INVALID_HEADER:
		return "invalid PDU header field";
	case NVMFD_TCP_FES_PDU_SEQUENCE:
		return "PDU sequence error";
	case NVMFD_TCP_FES_HDR_DIGEST:
		return "header digest error";
	case NVMFD_TCP_FES_DATA_OUT_OF_RANGE:
		return "data transfer out of range";
	case NVMFD_TCP_FES_DATA_LIMIT_EXCEEDED:
		return "data transfer limit exceeded";
	case NVMFD_TCP_FES_UNSUPPORTED_PARAM:
		return "unsupported parameter";
	default:
		return "unknown";
	}
}

/**
 * nvmfd_pdu_type_str() - name of a PDU type.
 * @type: PDU type byte.
 * Return: a static string ("ICReq", "H2CData", ...); "unknown" otherwise.
 * Context: any thread.
 */
const char *nvmfd_pdu_type_str(uint8_t type)
{
	switch (type) {
	case NVMFD_TCP_ICREQ:
		return "ICReq";
	case NVMFD_TCP_ICRESP:
		return "ICResp";
	case NVMFD_TCP_H2C_TERM:
		return "H2CTermReq";
	case NVMFD_TCP_C2H_TERM:
		return "C2HTermReq";
	case NVMFD_TCP_CMD:
		return "CapsuleCmd";
	case NVMFD_TCP_RSP:
		return "CapsuleResp";
	case NVMFD_TCP_H2C_DATA:
		return "H2CData";
	case NVMFD_TCP_C2H_DATA:
		return "C2HData";
	case NVMFD_TCP_R2T:
		return "R2T";
	default:
		return "unknown";
	}
}
