// SPDX-License-Identifier: MIT
/*
 * test_usock.c - the io_uring socket (src/net/usock.c) over a loopback TCP
 * connection: the stream arrives whole and in order in multishot and
 * single mode (also when every provided buffer is held: -ENOBUFS and
 * re-arm), EOF after the data, short sends and a send that waits for a
 * full socket, the eventfd mute/unmute protocol, cancel with a receive
 * and a send in flight (idle only once every CQE is back), destroy
 * without waiting, and option checks. Skipped (77) without io_uring.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "net/usock.h"

/* A connected loopback pair: @a is driven by the usock, @b is the peer. */
static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int l, one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
	*b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(*b, (struct sockaddr *)&sa, sizeof(sa)), 0);
	*a = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); /* as the target */
	assert_true(*a >= 0);
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	close(l);
}

static uint8_t pat(size_t off)
{
	return (uint8_t)(off * 7 + (off >> 9));
}

static void write_all(int fd, size_t off, size_t len)
{
	uint8_t buf[4096];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < n; i++)
			buf[i] = pat(off + i);
		w = write(fd, buf, n);
		assert_true(w > 0);
		off += (size_t)w;
		len -= (size_t)w;
	}
}

/* Wait (at most 5 s) for the usock's eventfd, following the owner's sleep
 * protocol: unmute, and sleep only when nothing is waiting. */
static void wait_event(struct nvmfd_usock *u)
{
	struct pollfd p = { .fd = nvmfd_usock_event_fd(u), .events = POLLIN };
	uint64_t v;

	if (nvmfd_usock_unmute(u))
		return;
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(read(p.fd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* Read @total bytes (stream offsets from @got) through @u, consuming in
 * pieces of 1..@step bytes, checking the pattern; then expect EOF if @eof. */
static void read_stream(struct nvmfd_usock *u, size_t got, size_t total, size_t step, bool eof)
{
	unsigned int seed = 1;

	total += got;
	while (got < total) {
		const uint8_t *p;
		ssize_t n = nvmfd_usock_peek(u, &p);
		size_t take;

		if (n == 0) {
			assert_int_equal(nvmfd_usock_submit(u), 0);
			wait_event(u);
			continue;
		}
		assert_true(n > 0);
		take = 1 + (size_t)rand_r(&seed) % step;
		if (take > (size_t)n)
			take = (size_t)n;
		for (size_t i = 0; i < take; i++)
			if (p[i] != pat(got + i))
				fail_msg("byte %zu: %u, expected %u", got + i, p[i], pat(got + i));
		nvmfd_usock_mute(u);
		nvmfd_usock_consume(u, take);
		got += take;
	}
	if (!eof)
		return;
	for (int i = 0; i < 1000; i++) {
		const uint8_t *p;
		ssize_t n = nvmfd_usock_peek(u, &p);

		if (n == -ECONNRESET)
			return;
		assert_int_equal(n, 0);
		assert_int_equal(nvmfd_usock_submit(u), 0);
		wait_event(u);
	}
	fail_msg("no EOF");
}

static void run_stream(enum nvmfd_usock_recv mode, bool want_multishot)
{
	struct nvmfd_usock_opts o = { .recv = mode, .nbufs = 4, .buf_size = 4096 };
	struct nvmfd_usock_stats st;
	struct nvmfd_usock *u;
	int a, b;

	tcp_pair(&a, &b);
	assert_int_equal(nvmfd_usock_create(a, &o, &u), 0);
	assert_int_equal(nvmfd_usock_multishot(u), want_multishot);
	/* 100 KiB waiting before the first arm: more than the 4 buffers */
	write_all(b, 0, 100 << 10);
	read_stream(u, 0, 100 << 10, 3000, false);
	nvmfd_usock_get_stats(u, &st);
	assert_int_equal(st.recv_bytes, 100 << 10);
	if (want_multishot)
		assert_true(st.enobufs >= 1); /* every buffer held, then re-armed */
	/* more, then an orderly close */
	write_all(b, 100 << 10, 20000);
	close(b);
	read_stream(u, 100 << 10, 20000, 70, true);
	assert_true(nvmfd_usock_idle(u));
	nvmfd_usock_destroy(&u);
	assert_null(u);
	close(a);
}

static void test_stream_multishot(void **st)
{
	(void)st;
	run_stream(NVMFD_USOCK_RECV_MULTISHOT, true);
}

static void test_stream_auto(void **st)
{
	(void)st;
	run_stream(NVMFD_USOCK_RECV_AUTO, true);
}

static void test_stream_single(void **st)
{
	(void)st;
	run_stream(NVMFD_USOCK_RECV_SINGLE, false);
}

/* Read everything the peer gets, checking the pattern from @off. */
static size_t peer_read(int fd, size_t off, size_t want)
{
	uint8_t buf[65536];
	size_t got = 0;

	while (got < want) {
		ssize_t n = read(fd, buf, sizeof(buf));

		assert_true(n > 0);
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pat(off + got + (size_t)i))
				fail_msg("peer byte %zu", off + got + (size_t)i);
		got += (size_t)n;
	}
	return got;
}

static void test_send_short_and_full(void **state)
{
	struct nvmfd_usock_opts o = { .recv = NVMFD_USOCK_RECV_AUTO };
	size_t total = 4u << 20, sent = 0, peer = 0;
	struct nvmfd_usock_stats st;
	struct nvmfd_usock *u;
	struct iovec iov[2];
	uint8_t *data;
	bool waited = false;
	int a, b, small = 16384;
	ssize_t res;

	(void)state;
	tcp_pair(&a, &b);
	setsockopt(a, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(b, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	data = malloc(total);
	assert_non_null(data);
	for (size_t i = 0; i < total; i++)
		data[i] = pat(i);
	assert_int_equal(nvmfd_usock_create(a, &o, &u), 0);
	while (sent < total) {
		size_t left = total - sent, h = left > 100 ? 100 : left;

		/* two segments, as header + data */
		iov[0] = (struct iovec){ data + sent, h };
		iov[1] = (struct iovec){ data + sent + h, left - h };
		assert_int_equal(nvmfd_usock_send(u, iov, 2, false), 0);
		assert_int_equal(nvmfd_usock_send(u, iov, 2, false), -EBUSY);
		while (!nvmfd_usock_send_result(u, &res)) {
			/* socket full: the send waits in the kernel; drain */
			waited = true;
			assert_true(nvmfd_usock_send_busy(u));
			if (peer < sent + 1)
				peer += peer_read(b, peer, 1);
			else
				wait_event(u);
		}
		assert_true(res > 0);
		assert_true((size_t)res <= left);
		sent += (size_t)res;
	}
	nvmfd_usock_get_stats(u, &st);
	assert_true(st.short_sends >= 1);
	assert_true(waited);
	peer_read(b, peer, total - peer);
	assert_true(nvmfd_usock_idle(u));
	nvmfd_usock_destroy(&u);
	free(data);
	close(a);
	close(b);
}

static void test_mute(void **state)
{
	struct nvmfd_usock_opts o = { .recv = NVMFD_USOCK_RECV_AUTO };
	struct nvmfd_usock *u;
	const uint8_t *p;
	uint64_t v;
	int a, b;

	(void)state;
	tcp_pair(&a, &b);
	assert_int_equal(nvmfd_usock_create(a, &o, &u), 0);
	assert_int_equal(nvmfd_usock_peek(u, &p), 0); /* prepares the receive */
	nvmfd_usock_mute(u);
	assert_int_equal(nvmfd_usock_submit(u), 0);
	write_all(b, 0, 10);
	/* the CQE arrives without a signal; unmute sees it */
	for (int i = 0; i < 500 && !nvmfd_usock_unmute(u); i++) {
		nvmfd_usock_mute(u);
		usleep(1000);
	}
	nvmfd_usock_mute(u);
	assert_int_equal(read(nvmfd_usock_event_fd(u), &v, sizeof(v)), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(nvmfd_usock_peek(u, &p), 10);
	nvmfd_usock_consume(u, 10);
	/* unmuted, the next CQE signals */
	assert_false(nvmfd_usock_unmute(u));
	write_all(b, 10, 5);
	wait_event(u);
	assert_int_equal(nvmfd_usock_peek(u, &p), 5);
	assert_int_equal(p[0], pat(10));
	nvmfd_usock_consume(u, 5);
	nvmfd_usock_destroy(&u); /* receive still armed: destroy cancels and waits */
	close(a);
	close(b);
}

/* Cancel with a receive armed and a send blocked on a full socket: idle
 * only after both CQEs and the cancels' own came back. */
static void test_cancel_in_flight(void **state)
{
	struct nvmfd_usock_opts o = { .recv = NVMFD_USOCK_RECV_AUTO };
	size_t total = 8u << 20;
	struct nvmfd_usock *u;
	struct iovec iov;
	const uint8_t *p;
	uint8_t *data;
	ssize_t res;
	int a, b, small = 16384;

	(void)state;
	tcp_pair(&a, &b);
	setsockopt(a, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	data = calloc(1, total);
	assert_non_null(data);
	assert_int_equal(nvmfd_usock_create(a, &o, &u), 0);
	assert_int_equal(nvmfd_usock_peek(u, &p), 0);
	iov = (struct iovec){ data, total };
	assert_int_equal(nvmfd_usock_send(u, &iov, 1, false), 0);
	/* the first attempt may have sent a part: send the rest until one waits */
	for (int i = 0; i < 100 && nvmfd_usock_send_result(u, &res); i++) {
		assert_true(res > 0);
		iov.iov_base = (uint8_t *)iov.iov_base + res;
		iov.iov_len -= (size_t)res;
		assert_int_equal(nvmfd_usock_send(u, &iov, 1, false), 0);
	}
	assert_true(nvmfd_usock_send_busy(u));
	assert_false(nvmfd_usock_idle(u));
	assert_int_equal(nvmfd_usock_cancel(u), 0);
	assert_int_equal(nvmfd_usock_cancel(u), 0); /* idempotent */
	assert_int_equal(nvmfd_usock_send(u, &iov, 1, false), -EBUSY);
	for (int i = 0; i < 100 && !nvmfd_usock_idle(u); i++)
		wait_event(u);
	assert_true(nvmfd_usock_idle(u));
	/* data arriving now is dropped, nothing re-armed */
	write_all(b, 0, 100);
	usleep(10000);
	assert_int_equal(nvmfd_usock_peek(u, &p), 0);
	assert_true(nvmfd_usock_idle(u));
	nvmfd_usock_destroy(&u);
	free(data); /* only now: the kernel no longer reads it */
	close(a);
	close(b);
}

static void test_opts(void **state)
{
	struct nvmfd_usock_opts o = { .recv = NVMFD_USOCK_RECV_AUTO, .nbufs = 3 };
	struct nvmfd_usock *u = (struct nvmfd_usock *)1;
	int a, b;

	(void)state;
	tcp_pair(&a, &b);
	assert_int_equal(nvmfd_usock_create(a, &o, &u), -EINVAL);
	assert_null(u);
	o.nbufs = 8;
	o.buf_size = 100;
	assert_int_equal(nvmfd_usock_create(a, &o, &u), -EINVAL);
	assert_int_equal(nvmfd_usock_create(-1, &o, &u), -EINVAL);
	nvmfd_usock_destroy(NULL);
	nvmfd_usock_destroy(&u);
	close(a);
	close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_multishot), cmocka_unit_test(test_stream_auto),
		cmocka_unit_test(test_stream_single),	 cmocka_unit_test(test_send_short_and_full),
		cmocka_unit_test(test_mute),		 cmocka_unit_test(test_cancel_in_flight),
		cmocka_unit_test(test_opts),
	};
	int ret = nvmfd_usock_probe();

	if (ret) {
		fprintf(stderr, "no io_uring socket support here (%s): skipped\n", strerror(-ret));
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
