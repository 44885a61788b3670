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
#include <stdint.h>

#include <nvmfd/host.h>

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

#endif /* NVMFD_TESTS_FAKE_TGT_H */
