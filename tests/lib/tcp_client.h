/* SPDX-License-Identifier: MIT */
/*
 * tcp_client.h - a small, blocking, raw NVMe/TCP host for tests.
 *
 * It speaks the wire protocol directly (through the codec's builders and
 * receiver) so that functional tests can drive every PDU path and hostile
 * tests can send malformed PDUs with tc_send_raw(). One command at a time;
 * every receive has a timeout (TC_TIMEOUT_MS) so a broken target fails a
 * test instead of hanging it.
 *
 * Errors: negative errno; TC_TERM (> 0) when a C2HTermReq arrived (its FES
 * and FEI are in the connection).
 * Ownership: struct tc_conn is caller storage; buffers are borrowed.
 */
#ifndef NVMFD_TESTS_TCP_CLIENT_H
#define NVMFD_TESTS_TCP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nvmfd/pdu.h>
#include <nvmfd/spec.h>

#define TC_TERM 1
#define TC_TIMEOUT_MS 10000
#define TC_HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:7d2c4b1e-1111-4a2b-9c3d-0123456789ab"

/* tc_cmd() flags */
#define TC_F_R2T (1u << 0) /* write data through R2T even when it would fit in the capsule */
#define TC_F_ICD (1u << 1) /* put write data in the capsule whatever its size */

struct tc_conn {
	int fd;
	bool hdgst;
	bool ddgst;
	uint32_t maxh2cdata; /* from ICResp */
	uint32_t icd_max; /* writes up to this size go in-capsule (default 0: never) */
	uint16_t next_cid;
	uint32_t kato_ms; /* KATO sent by tc_connect() (0: none) */
	struct nvmfd_pdu_rx rx;
	/* last C2HTermReq */
	bool got_term;
	uint16_t term_fes;
	uint32_t term_fei;
	uint8_t term_hdr[NVMFD_TCP_TERM_ERR_DATA_MAX];
	uint32_t term_hdr_len;
	/* per command accounting, for assertions */
	unsigned int r2ts; /* R2Ts seen by the last tc_cmd() */
	unsigned int c2h_pdus; /* C2HData PDUs seen by the last tc_cmd() */
	unsigned int h2c_pdus; /* H2CData PDUs sent by the last tc_cmd() */
	bool success_flag; /* last tc_cmd() completed through C2HData SUCCESS */
	/* pipelined reads: when set, C2HData for cid < cid_data_n lands in
	 * cid_data[cid] (cid_data_cap bytes each) instead of tc_recv_pdu()'s
	 * @data */
	uint8_t **cid_data;
	uint32_t cid_data_n;
	uint32_t cid_data_cap;
	/* connection totals, to compare with the target's counters */
	uint64_t bytes_sent;
	uint64_t bytes_rcvd;
	uint64_t pdus_sent; /* counted by the tc_* helpers, not tc_send_raw() */
	uint64_t pdus_rcvd;
};

/** tc_attach() - use the connected stream socket @fd (owned from now on,
 *  even on failure; e.g. one end of a socketpair). Return: 0 or -errno. */
int tc_attach(struct tc_conn *c, int fd);
/** tc_open() - TCP connect to @addr:@port (no ICReq yet). Return: 0 or -errno. */
int tc_open(struct tc_conn *c, const char *addr, uint16_t port);
/** tc_close() - close the socket (idempotent). */
void tc_close(struct tc_conn *c);
/** tc_ic() - ICReq/ICResp exchange asking for the given digests.
 *  Return: 0, TC_TERM, -EPROTO (bad ICResp), -errno. */
int tc_ic(struct tc_conn *c, bool hdgst, bool ddgst);
/** tc_open_ic() - tc_open() + tc_ic(). */
int tc_open_ic(struct tc_conn *c, const char *addr, uint16_t port, bool hdgst, bool ddgst);

/**
 * tc_send_cmd() - send one CapsuleCmd without waiting (pipelining): @sqe's
 * dptr and flags are filled; in-capsule data when @icd_len > 0 (@data).
 * Return: 0 or -errno.
 */
int tc_send_cmd(struct tc_conn *c, struct nvmfd_sqe *sqe, const void *data, uint32_t icd_len,
		 uint32_t xfer_len);

/** tc_send_raw() - write exactly @len bytes. Return: 0 or -errno. */
int tc_send_raw(struct tc_conn *c, const void *buf, size_t len);

/**
 * tc_recv_pdu() - receive one PDU (blocking, with timeout).
 * @hdr:  out: header bytes (hlen, at least NVMFD_TCP_MAX_HDR_DGST_LEN room).
 * @data: destination for C2HData data at its DATAO, @cap bytes (or NULL).
 * Return: 0, TC_TERM, -EPROTO (codec error / data out of @data), -ECONNRESET
 *         (EOF), -ETIMEDOUT, -errno.
 */
int tc_recv_pdu(struct tc_conn *c, uint8_t *hdr, void *data, uint32_t cap);

/**
 * tc_cmd() - run one command: send the capsule (in-capsule data, or R2T and
 * H2CData PDUs of at most MAXH2CDATA for writes), collect C2HData into @data
 * for reads and the CapsuleResp (or a SUCCESS C2HData).
 * @sqe:   the command; cid and dptr are filled in here.
 * @data:  @len bytes to write or to read into (NULL when @len is 0).
 * @write: direction of the data.
 * @flags: TC_F_*.
 * @cqe:   out: the completion.
 * Return: 0 (see cqe->status), TC_TERM, -errno.
 */
int tc_cmd(struct tc_conn *c, struct nvmfd_sqe *sqe, void *data, uint32_t len, bool write,
	   unsigned int flags, struct nvmfd_cqe *cqe);

/** tc_status() - the status of @cqe without phase bit. */
static inline uint16_t tc_status(const struct nvmfd_cqe *cqe)
{
	return nvmfd_cqe_status(cqe);
}

/** tc_connect() - Fabrics Connect. @cattr may carry
 *  NVMFD_CONNECT_CATTR_DISABLE_SQFLOW. @cntlid: 0xffff for the admin queue.
 *  Return: as tc_cmd(). */
int tc_connect(struct tc_conn *c, uint16_t qid, uint16_t sqsize, uint8_t cattr,
	       const char *subnqn, const char *hostnqn, uint16_t cntlid, struct nvmfd_cqe *cqe);
int tc_prop_get(struct tc_conn *c, uint32_t ofst, bool size8, uint64_t *val,
		struct nvmfd_cqe *cqe);
int tc_prop_set(struct tc_conn *c, uint32_t ofst, bool size8, uint64_t val,
		struct nvmfd_cqe *cqe);
int tc_identify(struct tc_conn *c, uint8_t cns, uint32_t nsid, void *buf4k,
		struct nvmfd_cqe *cqe);
/** tc_rw() - NVM Read/Write of @nlb blocks (1-based count) at @slba. */
int tc_rw(struct tc_conn *c, bool write, uint32_t nsid, uint64_t slba, uint32_t nlb, void *buf,
	  uint32_t len, unsigned int flags, struct nvmfd_cqe *cqe);

/**
 * tc_admin_enable() - the admin bring-up a host does: ICReq, Connect qid 0,
 * Property Set CC.EN=1, wait CSTS.RDY. @cntlid: out.
 * Return: 0 or a negative/TC_TERM/NVMe status (> 1) describing the failing step.
 */
int tc_admin_enable(struct tc_conn *c, const char *addr, uint16_t port, const char *subnqn,
		    bool hdgst, bool ddgst, uint16_t *cntlid);
/** tc_io_connect() - open, ICReq and Connect an I/O queue @qid of @cntlid. */
int tc_io_connect(struct tc_conn *c, const char *addr, uint16_t port, const char *subnqn,
		  uint16_t cntlid, uint16_t qid, uint16_t sqsize, uint8_t cattr, bool hdgst,
		  bool ddgst);

/**
 * tc_expect_term() - read until a C2HTermReq, EOF or timeout.
 * Return: TC_TERM (fes/fei in @c), 0 for EOF without TermReq, -ETIMEDOUT.
 */
int tc_expect_term(struct tc_conn *c);
/** tc_wait_eof() - read and discard until EOF. Return: 0, -ETIMEDOUT, -errno. */
int tc_wait_eof(struct tc_conn *c);

/** tc_step() - fold a tc_* return and its CQE: 0 on success, the error, or
 *  0x10000 | status when the command failed. */
int tc_step(int ret, const struct nvmfd_cqe *cqe);

/**
 * tc_verify_io() - on fresh connections: admin bring-up, I/O queue 1,
 * write 4 KiB in-capsule and 64 KiB through R2T, read both back and compare.
 * Return: 0, -EIO on a data mismatch, or as tc_step().
 */
int tc_verify_io(const char *addr, uint16_t port, const char *subnqn, uint32_t seed);

/** tc_pattern() - fill @buf with a pattern derived from @seed. */
void tc_pattern(void *buf, size_t len, uint32_t seed);

/** tc_count_fds() - open file descriptors of this process (/proc/self/fd). */
int tc_count_fds(void);

#endif /* NVMFD_TESTS_TCP_CLIENT_H */
