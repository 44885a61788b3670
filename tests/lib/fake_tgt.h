/* SPDX-License-Identifier: MIT */
/*
 * fake_tgt.h - the socket plumbing of the scripted fake NVMe/TCP targets
 * that the host functional tests run in a thread: a loopback listener on an
 * ephemeral port, bounded full reads and full writes, and the transport ID
 * a host uses to reach the listener.
 *
 * Errors: negative errno.
 */
#ifndef NVMFD_TESTS_FAKE_TGT_H
#define NVMFD_TESTS_FAKE_TGT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvmfd/host.h>
#include <nvmfd/pdu.h>

/* How long one wait for the peer may take, in milliseconds. */
#define FT_TIMEOUT_MS 5000

/**
 * ft_listen() - listen on 127.0.0.1 at an ephemeral TCP port.
 * @port: out, the port chosen (host byte order)
 *
 * Return: the listening socket (close-on-exec, backlog 4) or -errno of the
 * failed socket()/bind()/listen()/getsockname() call.
 * Context: any.
 */
int ft_listen(uint16_t *port);

/**
 * ft_read_full() - receive exactly @len bytes.
 * @fd: connected socket
 * @buf: destination
 * @len: bytes to receive
 *
 * Every wait for data is bounded by FT_TIMEOUT_MS.
 * Return: 0; -ETIMEDOUT when no byte came in time; -ECONNRESET when the peer
 * closed; -errno of a failed recv().
 * Context: blocks.
 */
int ft_read_full(int fd, void *buf, size_t len);

/**
 * ft_write_full() - send all @len bytes (no SIGPIPE).
 * @fd: connected socket
 * @buf: source
 * @len: bytes to send
 *
 * Return: 0; -errno of a failed send(); -EPIPE if send() made no progress.
 * Context: blocks.
 */
int ft_write_full(int fd, const void *buf, size_t len);

/**
 * ft_trid() - the TCP/IPv4 transport ID of a fake target on 127.0.0.1.
 * @t: out, zeroed then filled
 * @port: the fake's port
 * @subnqn: subsystem NQN to ask for
 *
 * Context: any.
 */
void ft_trid(struct nvmfd_host_trid *t, uint16_t port, const char *subnqn);

/* One PDU as a fake target reads it (no header digests are negotiated). */
struct ft_pdu {
	uint8_t buf[16384];
	struct nvmfd_tcp_ch ch;
	struct nvmfd_sqe sqe; /* CapsuleCmd */
	uint8_t *data; /* in-capsule / H2CData data, or NULL */
	uint32_t dlen;
	bool bad_ddgst; /* the data digest did not match */
};

/**
 * ft_read_pdu() - read one PDU; split out the SQE and the data.
 * Return: 0; -EPROTO (PLEN out of range); ft_read_full() errors.
 */
int ft_read_pdu(int fd, struct ft_pdu *p);
/** ft_send_rsp() - send a CapsuleResp (status without phase). */
void ft_send_rsp(int fd, uint16_t cid, uint16_t sqid, uint32_t result, uint32_t dw1,
		 nvmfd_status_t st);
/** ft_send_c2h() - send one C2HData PDU; @corrupt flips the data digest. */
void ft_send_c2h(int fd, uint16_t cid, uint32_t datao, const void *data, uint32_t len,
		 uint8_t flags, bool ddgst, bool corrupt);
/** ft_icreq() - read an ICReq and answer with an ICResp echoing its digests. */
int ft_icreq(int fd, uint32_t maxh2cdata);

#endif /* NVMFD_TESTS_FAKE_TGT_H */
