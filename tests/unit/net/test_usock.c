// SPDX-License-Identifier: MIT
/*
 * test_usock.c - the io_uring socket (src/net/usock.c) over a loopback TCP
 * connection: the stream arrives whole and in order in multishot and
 * single mode (also when every provided buffer is held: -ENOBUFS and
 * re-arm), EOF after the data, short sends and a send that waits for a
 * full socket, the eventfd mute/unmute protocol, cancel with a receive
 * and a send in flight (idle only once every CQE is back), destroy
 * without waiting, and option checks. On a worker ring (opts.ring): two
 * sockets of one bound pool echo their streams through work items, one is
 * cancelled and destroyed mid-stream while the other keeps going.
 * Skipped (77) without io_uring.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
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

#include "internal/rt.h"
#include "internal/rt_ring.h"
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

/* ---- worker ring ------------------------------------------------------- */

#define ECHO_TOTAL (1u << 20)
#define ECHO_CANCEL_AT (64u << 10)

/* A work item echoing its socket's stream back, on a worker ring. */
struct echo {
	struct nvmfd_work work;
	struct nvmfd_usock *u;
	uint8_t buf[8192];
	struct iovec iov;
	size_t len, off; /* bytes in buf, of which sent */
	size_t echoed;
	size_t cancel_at; /* 0: never */
	bool cancelled;
	long idle; /* atomic: cancelled and every CQE back */
	long bad; /* atomic: an unexpected result */
	long runs; /* atomic */
};

static void echo_fn(struct nvmfd_work *w)
{
	struct echo *e = (struct echo *)w;
	const uint8_t *p;
	ssize_t n, res;

	__atomic_add_fetch(&e->runs, 1, __ATOMIC_RELAXED);
	if (e->cancelled) {
		if (nvmfd_usock_idle(e->u))
			__atomic_store_n(&e->idle, 1, __ATOMIC_RELEASE);
		return; /* the last CQEs queue us again */
	}
	if (nvmfd_usock_send_busy(e->u)) {
		if (!nvmfd_usock_send_result(e->u, &res))
			goto sleep;
		if (res <= 0) {
			__atomic_add_fetch(&e->bad, 1, __ATOMIC_RELAXED);
			return;
		}
		e->off += (size_t)res;
		e->echoed += (size_t)res;
		if (e->off == e->len)
			e->off = e->len = 0;
	}
	if (e->cancel_at && e->echoed >= e->cancel_at) {
		e->cancelled = true;
		if (nvmfd_usock_cancel(e->u))
			__atomic_add_fetch(&e->bad, 1, __ATOMIC_RELAXED);
		if (nvmfd_usock_idle(e->u))
			__atomic_store_n(&e->idle, 1, __ATOMIC_RELEASE);
		return;
	}
	while (e->len < sizeof(e->buf) && (n = nvmfd_usock_peek(e->u, &p)) > 0) {
		size_t take = (size_t)n < sizeof(e->buf) - e->len ? (size_t)n : sizeof(e->buf) - e->len;

		memcpy(e->buf + e->len, p, take);
		nvmfd_usock_consume(e->u, take);
		e->len += take;
	}
	if (e->len > e->off) {
		/* borrowed until the result is taken: the SQE goes to the
		 * kernel after this run, with the worker's next enter */
		e->iov = (struct iovec){ e->buf + e->off, e->len - e->off };
		if (nvmfd_usock_send(e->u, &e->iov, 1, false))
			__atomic_add_fetch(&e->bad, 1, __ATOMIC_RELAXED);
	}
sleep:
	if (nvmfd_usock_unmute(e->u))
		nvmfd_rt_queue_work(w);
}

/* The peer of an echo: write @total bytes and read them back, checking. */
struct peer {
	int fd;
	size_t total;
	size_t got; /* echoed bytes read back and checked */
	long bad;
	pthread_t thread;
};

static void *peer_main(void *arg)
{
	struct peer *pe = arg;
	size_t sent = 0;
	uint8_t buf[4096];

	while (pe->got < pe->total) {
		struct pollfd p = { .fd = pe->fd, .events = POLLIN };
		ssize_t n;

		if (sent < pe->total && sent - pe->got < 65536) {
			size_t len = pe->total - sent < sizeof(buf) ? pe->total - sent : sizeof(buf);

			for (size_t i = 0; i < len; i++)
				buf[i] = pat(sent + i);
			/* no SIGPIPE: the test shuts the socket down under us */
			n = send(pe->fd, buf, len, MSG_NOSIGNAL);
			if (n <= 0)
				break; /* cancelled and shut down */
			sent += (size_t)n;
			continue;
		}
		if (poll(&p, 1, 10000) != 1)
			break;
		n = read(pe->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pat(pe->got + (size_t)i))
				pe->bad++;
		pe->got += (size_t)n;
	}
	return NULL;
}

static void test_worker_ring_echo(void **state)
{
	struct nvmfd_usock_opts o = { .recv = NVMFD_USOCK_RECV_AUTO };
	struct nvmfd_rt_ring_stats rs;
	struct nvmfd_rt_opts ro;
	struct nvmfd_rt_ring *ring;
	struct peer pa = { 0 }, pb = { 0 };
	struct echo *ea, *eb;
	struct nvmfd_rt *rt;
	int a, b, a2, b2;

	(void)state;
	nvmfd_rt_opts_init(&ro);
	ro.uring = true;
	ro.name = "usockt";
	assert_int_equal(nvmfd_rt_create(&ro, &rt), 0);
	ring = nvmfd_rt_ring_of(rt, -1);
	assert_non_null(ring);
	ea = calloc(1, sizeof(*ea));
	eb = calloc(1, sizeof(*eb));
	assert_non_null(ea);
	assert_non_null(eb);
	tcp_pair(&a, &b);
	tcp_pair(&a2, &b2);
	/* both on the first pool: one ring, one worker */
	o.ring = ring;
	o.owner = &ea->work;
	assert_int_equal(nvmfd_usock_create(a, &o, &ea->u), 0);
	o.owner = &eb->work;
	assert_int_equal(nvmfd_usock_create(a2, &o, &eb->u), 0);
	assert_true(nvmfd_usock_shared(ea->u));
	assert_int_equal(nvmfd_usock_event_fd(ea->u), -1);
	o.owner = NULL;
	{
		struct nvmfd_usock *x;

		assert_int_equal(nvmfd_usock_create(a, &o, &x), -EINVAL); /* needs an owner */
		assert_null(x);
	}
	ea->cancel_at = ECHO_CANCEL_AT;
	nvmfd_work_init(&ea->work, rt, echo_fn, -1);
	nvmfd_work_init(&eb->work, rt, echo_fn, -1);
	pa.fd = b;
	pa.total = ECHO_TOTAL;
	pb.fd = b2;
	pb.total = ECHO_TOTAL;
	assert_int_equal(pthread_create(&pa.thread, NULL, peer_main, &pa), 0);
	assert_int_equal(pthread_create(&pb.thread, NULL, peer_main, &pb), 0);
	assert_true(nvmfd_rt_queue_work(&ea->work));
	assert_true(nvmfd_rt_queue_work(&eb->work));

	/* a is cancelled mid-stream: idle once its CQEs are back */
	for (int i = 0; i < 10000 && !__atomic_load_n(&ea->idle, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	if (!__atomic_load_n(&ea->idle, __ATOMIC_ACQUIRE))
		fprintf(stderr, "not idle: a echoed %zu runs %ld cancelled %d len %zu off %zu peer got %zu; b: echoed %zu runs %ld peer got %zu\n",
			ea->echoed, ea->runs, ea->cancelled, ea->len, ea->off, pa.got, eb->echoed, eb->runs, pb.got);
	assert_true(__atomic_load_n(&ea->idle, __ATOMIC_ACQUIRE));
	nvmfd_rt_work_cancel_sync(&ea->work);
	nvmfd_usock_destroy(&ea->u);
	shutdown(b, SHUT_RDWR); /* its peer stops */
	pthread_join(pa.thread, NULL);
	/* what a's peer read back (before the shutdown) was in order; a
	 * stopped mid-stream */
	assert_int_equal(pa.bad, 0);
	assert_true(pa.got <= ea->echoed);
	assert_true(ea->echoed >= ECHO_CANCEL_AT);
	assert_true(ea->echoed < ECHO_TOTAL);

	/* b, on the same worker and ring, gets its whole stream back */
	pthread_join(pb.thread, NULL);
	assert_int_equal(pb.bad, 0);
	assert_int_equal(pb.got, ECHO_TOTAL);
	assert_int_equal(__atomic_load_n(&eb->bad, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&ea->bad, __ATOMIC_RELAXED), 0);
	nvmfd_rt_work_cancel_sync(&eb->work);
	/* destroy with the receive still armed: cancels and waits itself */
	nvmfd_usock_destroy(&eb->u);
	nvmfd_rt_ring_get_stats(ring, &rs);
	assert_true(rs.waits >= 1);
	assert_true(rs.cqes >= 2 * ECHO_TOTAL / 16384);
	nvmfd_rt_destroy(rt);
	close(a);
	close(b);
	close(a2);
	close(b2);
	free(ea);
	free(eb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_multishot), cmocka_unit_test(test_stream_auto),
		cmocka_unit_test(test_stream_single),	 cmocka_unit_test(test_send_short_and_full),
		cmocka_unit_test(test_mute),		 cmocka_unit_test(test_cancel_in_flight),
		cmocka_unit_test(test_opts),		 cmocka_unit_test(test_worker_ring_echo),
	};
	int ret = nvmfd_usock_probe();

	if (ret) {
		fprintf(stderr, "no io_uring socket support here (%s): skipped\n", strerror(-ret));
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
