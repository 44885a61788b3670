/* SPDX-License-Identifier: MIT */
/*
 * pdu.h - the pure NVMe/TCP codec: bytes in, PDUs or precise errors out.
 *
 * No sockets, no allocation, no global state. The incremental receiver
 * (struct nvmfd_pdu_rx) accepts bytes in any fragmentation: feeding a stream
 * one byte at a time gives exactly the same PDUs and errors as feeding it in
 * one buffer. Serializers write complete PDU headers (with header digest)
 * into caller buffers.
 *
 * Error domain: enum nvmfd_pdu_err. Every error maps 1:1 onto the Fatal
 * Error Status (FES) and Field Error Information (FEI, a byte offset into
 * the offending PDU header) that the receiver must put in its TermReq
 * (NVMe/TCP 1.0 §3.6.2.4 / §3.6.2.9, §7.4.6).
 *
 * Ownership: every pointer argument is borrowed for the duration of the
 * call. A data destination registered with nvmfd_pdu_rx_set_data() is
 * borrowed until the PDU completes (NVMFD_PDU_EV_PDU) or the receiver is
 * reset.
 */
#ifndef NVMFD_PDU_H
#define NVMFD_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/spec.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* CRC32C digests                                                      */
/* ------------------------------------------------------------------ */

/**
 * nvmfd_crc32c() - CRC32C (Castagnoli) of a buffer, as NVMe/TCP digests use it.
 * @crc: running value; start with NVMFD_CRC32C_INIT (~0).
 * @buf: @len bytes, borrowed; any alignment.
 * @len: bytes.
 * Return: the running (not yet inverted) CRC; finish with nvmfd_crc32c_final().
 * Context: any thread; pure. Backed by isa-l's crc32_iscsi().
 *
 * The NVMe/TCP digest of a region is ~crc32c(~0, region), stored little-endian
 * (NVMe/TCP 1.0 §3.6.1.5; what the Linux host and target compute).
 */
#define NVMFD_CRC32C_INIT 0xffffffffu
uint32_t nvmfd_crc32c(uint32_t crc, const void *buf, size_t len);

static inline uint32_t nvmfd_crc32c_final(uint32_t crc)
{
	return ~crc;
}

/**
 * nvmfd_digest() - one-shot NVMe/TCP digest: ~crc32c(~0, buf, len).
 * @buf: @len bytes, borrowed.
 * @len: bytes.
 * Return: the digest value to store (little-endian) after the region.
 */
uint32_t nvmfd_digest(const void *buf, size_t len);

/**
 * nvmfd_crc32c_copy() - memcpy() and nvmfd_crc32c() of @src, in one pass
 * over it where that is the faster way (x86-64 with SSE4.2 and PCLMULQDQ
 * but without AVX-512 VPCLMULQDQ), else the copy, then the CRC of the
 * cached copy.
 * @crc: running value; start with NVMFD_CRC32C_INIT.
 * @dst: @len bytes of room, any alignment; must not overlap @src.
 * @src: @len bytes, borrowed; any alignment.
 * @len: bytes.
 * Return: nvmfd_crc32c(@crc, @src, @len); @dst then holds a copy of @src.
 * Context: any thread; pure besides writing @dst.
 */
uint32_t nvmfd_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/**
 * nvmfd_crc32c_combine() - running CRC32C of A||B from A's running CRC and
 * B's CRC started from 0 (nvmfd_crc32c(0, B, @len_b)), without B's bytes.
 * @len_b: bytes of B. Return: nvmfd_crc32c(@crc_a, B, @len_b).
 */
uint32_t nvmfd_crc32c_combine(uint32_t crc_a, uint32_t crc0_b, size_t len_b);

/**
 * nvmfd_digest_cold() - nvmfd_digest() for data probably in no cache.
 * @buf: @len bytes, borrowed.
 * @len: bytes.
 * Return: nvmfd_digest(@buf, @len).
 * Context: any thread; pure. Reads one byte per cache line in order before
 * the CRC (faster on cold data, slower on cached data).
 */
uint32_t nvmfd_digest_cold(const void *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

enum nvmfd_pdu_err {
	NVMFD_PDU_OK = 0,
	NVMFD_PDU_ERR_TYPE, /* unknown type, or a type this side never receives */
	NVMFD_PDU_ERR_HLEN, /* hlen differs from the fixed length of the type */
	NVMFD_PDU_ERR_PDO, /* pdo inside the header, misaligned to CPDA/HPDA, or set without data */
	NVMFD_PDU_ERR_PLEN, /* plen < hlen (+ digests), or inconsistent with pdo */
	NVMFD_PDU_ERR_DATA_TOO_LONG, /* data length over the negotiated maximum */
	NVMFD_PDU_ERR_FLAGS, /* flag not valid for the type, or digest flag without negotiation */
	NVMFD_PDU_ERR_DGST_MISSING, /* digest negotiated but the PDU's flag is clear */
	NVMFD_PDU_ERR_HDGST, /* header digest mismatch */
	NVMFD_PDU_ERR_DDGST, /* data digest mismatch */
	NVMFD_PDU_ERR_RSVD, /* reserved field not zero where the spec requires it */
	NVMFD_PDU_ERR_SEQUENCE, /* PDU not allowed in the current connection state */
	NVMFD_PDU_ERR_PARAM, /* unsupported parameter value (PFV, HPDA, MAXH2CDATA...) */
	NVMFD_PDU_ERR_TERM, /* a TermReq was received: the peer is closing */
	NVMFD_PDU_ERR__MAX,
};

/**
 * struct nvmfd_pdu_error - where and why the stream was rejected.
 * @err:    the rule that failed.
 * @fes:    Fatal Error Status to send in the TermReq (enum nvmfd_tcp_fes); 0 for
 *          NVMFD_PDU_ERR_TERM (never answer a TermReq) and NVMFD_PDU_ERR_DDGST
 *          (the spec lets the receiver choose; see nvmfd_pdu_err_fes()).
 * @fei:    Field Error Information: byte offset of the offending field within
 *          the PDU header (e.g. 2 for hlen, 4 for plen), or for FES 0x05/0x06
 *          the value the spec asks for.
 * @stream_off: offset of the first byte of the offending PDU in the stream
 *          fed so far (bytes since the receiver was initialized).
 * @hdr:    the offending header bytes (up to NVMFD_TCP_TERM_ERR_DATA_MAX) and
 * @hdr_len: their count, to echo back in the TermReq's error data: the 8-byte
 *          common header for rules decided on it (type, sequence, hlen, flags,
 *          pdo, plen, data length), the whole header (+ digest) otherwise.
 *          For NVMFD_PDU_ERR_TERM, @fes/@fei are the peer's values and @hdr
 *          holds the peer's error data (the header it complained about).
 */
struct nvmfd_pdu_error {
	enum nvmfd_pdu_err err;
	uint16_t fes;
	uint32_t fei;
	uint64_t stream_off;
	uint8_t hdr[NVMFD_TCP_TERM_ERR_DATA_MAX];
	uint32_t hdr_len;
};

/** nvmfd_pdu_err_str() - static, human-readable name of an error. */
const char *nvmfd_pdu_err_str(enum nvmfd_pdu_err err);

/** nvmfd_pdu_fes_str() - static, human-readable name of a FES code. */
const char *nvmfd_pdu_fes_str(uint16_t fes);

/**
 * nvmfd_pdu_err_fes() - the FES to send in a TermReq for @err (the value the
 * receiver also stores in error.fes); 0 for NVMFD_PDU_OK, NVMFD_PDU_ERR_TERM
 * and NVMFD_PDU_ERR_DDGST. A data digest error leaves the stream in sync:
 * the receiver may go on (failing the command with a transport error
 * status, as the Linux host does) or close the connection (as Linux nvmet).
 */
uint16_t nvmfd_pdu_err_fes(enum nvmfd_pdu_err err);

/* ------------------------------------------------------------------ */
/* Incremental receiver                                                */
/* ------------------------------------------------------------------ */

/* Which end of the connection is receiving. */
enum nvmfd_pdu_role {
	NVMFD_PDU_ROLE_CTRL, /* target: receives ICReq, H2CTermReq, CapsuleCmd, H2CData */
	NVMFD_PDU_ROLE_HOST, /* host: receives ICResp, C2HTermReq, CapsuleResp, C2HData, R2T */
};

/**
 * struct nvmfd_pdu_rx_opts - negotiated parameters the receiver enforces.
 * @role:      which PDU types are legal.
 * @hdgst:     header digest negotiated (ignored before ICReq/ICResp completes).
 * @ddgst:     data digest negotiated.
 * @cpda:      0's based dword alignment of PDO for data PDUs this side receives
 *             (target: the CPDA it sent; host: the HPDA it sent). 0 = no padding.
 * @max_data:  largest data segment accepted in one PDU, in bytes
 *             (target: max(MAXH2CDATA, in-capsule size); host: largest I/O).
 */
struct nvmfd_pdu_rx_opts {
	enum nvmfd_pdu_role role;
	bool hdgst;
	bool ddgst;
	uint8_t cpda;
	uint32_t max_data;
};

/* Receiver phase; public only so the struct can be embedded. */
enum nvmfd_pdu_rx_state {
	NVMFD_PDU_RX_CH, /* collecting the 8-byte common header */
	NVMFD_PDU_RX_HDR, /* collecting the rest of the header (+ HDGST) */
	NVMFD_PDU_RX_PAD, /* skipping padding between header and data */
	NVMFD_PDU_RX_DATA, /* copying data into the registered destination */
	NVMFD_PDU_RX_DDGST, /* collecting the data digest */
	NVMFD_PDU_RX_ERROR, /* sticky: a fatal error was reported */
};

/**
 * struct nvmfd_pdu_rx - incremental PDU receiver, embedded by the caller.
 *
 * Transparent so it can live inside a queue without allocation; treat the
 * fields as private and use the functions below.
 */
struct nvmfd_pdu_rx {
	struct nvmfd_pdu_rx_opts opts;
	bool ic_done; /* ICReq (target) / ICResp (host) seen: digests now apply */
	enum nvmfd_pdu_rx_state state;
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN]; /* header (+ HDGST) of the current PDU */
	uint32_t hdr_have; /* bytes of hdr[] filled */
	uint32_t hdr_need; /* hlen (+ 4 if header digest) */
	uint32_t pad_left;
	uint32_t data_len; /* data bytes in this PDU */
	uint32_t data_have;
	uint8_t *data_dst; /* registered destination, or NULL: data is discarded after digest */
	uint32_t ddgst_calc; /* running CRC over the data */
	uint8_t ddgst[NVMFD_TCP_DIGEST_LEN];
	uint32_t ddgst_have;
	uint64_t stream_off; /* bytes consumed since init */
	uint64_t pdu_start; /* stream offset of the current PDU */
	uint64_t pdus; /* PDUs completed */
	struct nvmfd_pdu_error error;
};

/* Events returned by nvmfd_pdu_rx_feed(). */
enum nvmfd_pdu_ev {
	NVMFD_PDU_EV_NEED_MORE, /* all input consumed, no event yet */
	NVMFD_PDU_EV_HDR, /* a PDU with data has a validated header: call
			   * nvmfd_pdu_rx_set_data() (or not, to discard), feed on */
	NVMFD_PDU_EV_PDU, /* a PDU is complete: header, data and digests checked */
	NVMFD_PDU_EV_ERROR, /* fatal stream error: see nvmfd_pdu_rx_error() */
};

/**
 * nvmfd_pdu_rx_init() - reset a receiver to expect the first PDU.
 * @rx:   receiver, caller-owned storage.
 * @opts: copied; digests and alignment apply only once ICReq/ICResp has
 *        been received (target) or processed (host: call nvmfd_pdu_rx_ic_done()).
 * Context: the receiver's owner.
 */
void nvmfd_pdu_rx_init(struct nvmfd_pdu_rx *rx, const struct nvmfd_pdu_rx_opts *opts);

/**
 * nvmfd_pdu_rx_ic_done() - apply the digests and data limits negotiated by
 * ICReq/ICResp to every following PDU.
 * @rx:     receiver.
 * @hdgst:  header digest enabled.
 * @ddgst:  data digest enabled.
 * @max_data: new maximum data length per PDU (bytes); 0 keeps the old one.
 */
void nvmfd_pdu_rx_ic_done(struct nvmfd_pdu_rx *rx, bool hdgst, bool ddgst, uint32_t max_data);

/**
 * nvmfd_pdu_rx_feed() - consume bytes until the next event.
 * @rx:       receiver.
 * @buf:      @len input bytes, borrowed.
 * @len:      bytes available.
 * @consumed: out: bytes of @buf used (always <= @len). Feed the rest again
 *            after handling the event.
 * Return: the next event. After NVMFD_PDU_EV_PDU, nvmfd_pdu_rx_hdr() and the
 *         data destination stay valid until the next call. After
 *         NVMFD_PDU_EV_ERROR the receiver is stuck in the error state,
 *         except for NVMFD_PDU_ERR_DDGST: that PDU was consumed whole and
 *         feeding may continue with the next PDU.
 * Context: the receiver's owner; no allocation; pure.
 */
enum nvmfd_pdu_ev nvmfd_pdu_rx_feed(struct nvmfd_pdu_rx *rx, const void *buf, size_t len,
				   size_t *consumed);

/**
 * nvmfd_pdu_rx_want() - where the next bytes should go, for zero-copy receive.
 * @rx:  receiver.
 * @ptr: out: destination for the next bytes (header buffer, data destination,
 *       digest scratch), or NULL when the bytes are to be discarded (padding,
 *       data without a destination): receive them anywhere and feed them.
 * Return: how many bytes can be received into @ptr before the next event
 *         boundary (> 0 unless the receiver is in the error state).
 *
 * After receiving n bytes into @ptr, call nvmfd_pdu_rx_advance(rx, n).
 */
size_t nvmfd_pdu_rx_want(struct nvmfd_pdu_rx *rx, uint8_t **ptr);

/**
 * nvmfd_pdu_rx_advance() - account for n bytes placed where _want() said.
 * Return: as nvmfd_pdu_rx_feed(); NVMFD_PDU_EV_NEED_MORE until an event.
 */
enum nvmfd_pdu_ev nvmfd_pdu_rx_advance(struct nvmfd_pdu_rx *rx, size_t n);

/**
 * nvmfd_pdu_rx_set_data() - register where the data of the current PDU goes.
 * @rx:  receiver, just after NVMFD_PDU_EV_HDR.
 * @dst: at least nvmfd_pdu_rx_data_len() bytes, borrowed until the PDU completes.
 */
void nvmfd_pdu_rx_set_data(struct nvmfd_pdu_rx *rx, void *dst);

/** nvmfd_pdu_rx_hdr() - the current PDU's header bytes (hlen, no digest). */
static inline const void *nvmfd_pdu_rx_hdr(const struct nvmfd_pdu_rx *rx)
{
	return rx->hdr;
}

/** nvmfd_pdu_rx_ch() - the current PDU's common header. */
static inline const struct nvmfd_tcp_ch *nvmfd_pdu_rx_ch(const struct nvmfd_pdu_rx *rx)
{
	return (const struct nvmfd_tcp_ch *)(const void *)rx->hdr;
}

/** nvmfd_pdu_rx_data_len() - data bytes carried by the current PDU. */
static inline uint32_t nvmfd_pdu_rx_data_len(const struct nvmfd_pdu_rx *rx)
{
	return rx->data_len;
}

/** nvmfd_pdu_rx_error() - details of the last NVMFD_PDU_EV_ERROR. */
static inline const struct nvmfd_pdu_error *nvmfd_pdu_rx_error(const struct nvmfd_pdu_rx *rx)
{
	return &rx->error;
}

/* ------------------------------------------------------------------ */
/* Stateless header validation                                         */
/* ------------------------------------------------------------------ */

/**
 * nvmfd_pdu_check_hdr() - validate a complete PDU header against the rules
 * of NVMe/TCP 1.0 §3.6 (type legal for @opts->role, exact hlen, pdo, plen,
 * flags, digests, data length, reserved bytes).
 * @hdr:     hlen bytes (plus 4 digest bytes when header digest applies), borrowed.
 * @len:     bytes available in @hdr.
 * @opts:    negotiated parameters.
 * @ic_done: whether ICReq/ICResp has completed (digests apply).
 * @err:     out: filled when the return value is not NVMFD_PDU_OK.
 * Return: NVMFD_PDU_OK or the first rule that fails.
 * Context: any thread; pure.
 */
enum nvmfd_pdu_err nvmfd_pdu_check_hdr(const void *hdr, size_t len,
				       const struct nvmfd_pdu_rx_opts *opts, bool ic_done,
				       struct nvmfd_pdu_error *err);

/** nvmfd_pdu_hlen() - fixed header length of a PDU type, 0 if unknown. */
uint8_t nvmfd_pdu_hlen(uint8_t type);

/* ------------------------------------------------------------------ */
/* Serializers                                                         */
/* ------------------------------------------------------------------ */

/*
 * Each builder writes the PDU header into @buf (at least
 * NVMFD_TCP_MAX_HDR_DGST_LEN bytes), fills the common header (type, flags
 * incl. HDGSTF/DDGSTF, hlen, pdo, plen) from the negotiated digests, appends
 * the header digest when @hdgst, and returns the number of header bytes to
 * send (hlen [+ 4]). The caller sends the data (if any) next, then the data
 * digest (nvmfd_digest() over the data) when @ddgst and data_len > 0.
 * pdo = hlen + hdgst length when data follows (CPDA/HPDA 0 alignment:
 * nvmfd pads nothing), else 0.
 */
size_t nvmfd_pdu_build_icreq(void *buf, uint8_t hpda, uint8_t dgst, uint32_t maxr2t);
size_t nvmfd_pdu_build_icresp(void *buf, uint8_t cpda, uint8_t dgst, uint32_t maxh2cdata);
size_t nvmfd_pdu_build_cmd(void *buf, const struct nvmfd_sqe *sqe, uint32_t icd_len,
			   bool hdgst, bool ddgst);
size_t nvmfd_pdu_build_rsp(void *buf, const struct nvmfd_cqe *cqe, bool hdgst);
/* @type is NVMFD_TCP_H2C_DATA or NVMFD_TCP_C2H_DATA; @flags may carry
 * NVMFD_TCP_F_DATA_LAST and (C2H only) NVMFD_TCP_F_DATA_SUCCESS. */
size_t nvmfd_pdu_build_data(void *buf, uint8_t type, uint8_t flags, uint16_t cccid,
			    uint16_t ttag, uint32_t datao, uint32_t datal, bool hdgst, bool ddgst);
size_t nvmfd_pdu_build_r2t(void *buf, uint16_t cccid, uint16_t ttag, uint32_t r2to,
			   uint32_t r2tl, bool hdgst);
/* @type is NVMFD_TCP_H2C_TERM or NVMFD_TCP_C2H_TERM; up to 128 bytes of
 * @err_data (the offending header) are copied after the 24-byte header.
 * Returns the whole PDU length (TermReqs never carry digests). */
size_t nvmfd_pdu_build_term(void *buf, size_t buf_len, uint8_t type, uint16_t fes, uint32_t fei,
			    const void *err_data, size_t err_len);

/** nvmfd_pdu_type_str() - static name of a PDU type ("ICReq", "H2CData", ...). */
const char *nvmfd_pdu_type_str(uint8_t type);

#ifdef __cplusplus
}
#endif

#endif /* NVMFD_PDU_H */
