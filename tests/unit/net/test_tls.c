// SPDX-License-Identifier: MIT
/*
 * test_tls.c - src/net/tls.c over a non-blocking socketpair, both ends in
 * one thread: handshakes with each cipher suite, a refused key, an unknown
 * identity, garbage instead of a ClientHello, bulk data both ways through
 * a small socket buffer (sendv taking bytes the socket cannot take yet,
 * flush, -EAGAIN), and end of stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/stream.h"
#include "net/tls.h"

static const uint8_t key256[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const uint8_t key384[48] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };

/* server lookup: "id256" and "id384" are known */
static int find(void *ctx_arg, void *conn_arg, const char *identity, uint8_t *key, uint8_t *hash)
{
	int *calls = ctx_arg;

	(*calls)++;
	assert_ptr_equal(conn_arg, (void *)&key256);
	if (!strcmp(identity, "id256")) {
		memcpy(key, key256, 32);
		*hash = 1;
		return 32;
	}
	if (!strcmp(identity, "id384")) {
		memcpy(key, key384, 48);
		*hash = 2;
		return 48;
	}
	return -1;
}

struct pair {
	int fd[2];
	int calls;
	struct nvmfd_tls_ctx *sctx, *cctx;
	struct nvmfd_tls *s, *c;
};

static void pair_open(struct pair *p, int sndbuf)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fd), 0);
	if (sndbuf) {
		for (int i = 0; i < 2; i++) {
			assert_int_equal(setsockopt(p->fd[i], SOL_SOCKET, SO_SNDBUF, &sndbuf,
						    sizeof(sndbuf)),
					 0);
			assert_int_equal(setsockopt(p->fd[i], SOL_SOCKET, SO_RCVBUF, &sndbuf,
						    sizeof(sndbuf)),
					 0);
		}
	}
	assert_int_equal(nvmfd_tls_ctx_server(find, &p->calls, &p->sctx), 0);
	assert_int_equal(nvmfd_tls_ctx_client(&p->cctx), 0);
	assert_int_equal(nvmfd_tls_new(p->sctx, p->fd[0], true, (void *)&key256, &p->s), 0);
	assert_int_equal(nvmfd_tls_new(p->cctx, p->fd[1], false, NULL, &p->c), 0);
}

static void pair_close(struct pair *p)
{
	nvmfd_tls_free(p->s);
	nvmfd_tls_free(p->c);
	nvmfd_tls_ctx_free(p->sctx);
	nvmfd_tls_ctx_free(p->cctx);
	close(p->fd[0]);
	close(p->fd[1]);
}

/* Step both handshakes until neither makes progress; their last returns. */
static void handshake(struct pair *p, int *rs, int *rc)
{
	*rs = *rc = -EAGAIN;
	for (int i = 0; i < 100 && (*rs == -EAGAIN || *rc == -EAGAIN); i++) {
		if (*rc == -EAGAIN)
			*rc = nvmfd_tls_handshake(p->c);
		if (*rs == -EAGAIN)
			*rs = nvmfd_tls_handshake(p->s);
	}
}

static void test_ciphers(void **state)
{
	static const struct {
		const char *id;
		const uint8_t *key;
		size_t len;
		uint8_t hash;
		const char *cipher;
	} v[] = {
		{ "id256", key256, 32, 1, "TLS_AES_128_GCM_SHA256" },
		{ "id384", key384, 48, 2, "TLS_AES_256_GCM_SHA384" },
	};
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct nvmfd_tls_info si, ci;
		struct pair p;
		int rs, rc;

		pair_open(&p, 0);
		assert_int_equal(nvmfd_tls_set_psk(p.c, v[i].id, v[i].key, v[i].len, v[i].hash), 0);
		handshake(&p, &rs, &rc);
		assert_int_equal(rs, 0);
		assert_int_equal(rc, 0);
		assert_int_equal(p.calls, 1);
		nvmfd_tls_get_info(p.s, &si);
		nvmfd_tls_get_info(p.c, &ci);
		assert_string_equal(si.cipher, v[i].cipher);
		assert_string_equal(ci.cipher, v[i].cipher);
		/* a unix socket never gets kernel TLS: the reason is given */
		assert_false(si.ktls_tx || si.ktls_rx);
		assert_non_null(si.ktls_why);
		pair_close(&p);
	}
	/* bad arguments */
	{
		struct pair p;

		pair_open(&p, 0);
		assert_int_equal(nvmfd_tls_set_psk(p.c, "id", key256, 48, 1), -EINVAL);
		assert_int_equal(nvmfd_tls_set_psk(p.c, "id", key256, 32, 3), -EINVAL);
		assert_int_equal(nvmfd_tls_set_psk(p.c, "", key256, 32, 1), -EINVAL);
		assert_int_equal(nvmfd_tls_set_psk(p.s, "id", key256, 32, 1), -EINVAL);
		pair_close(&p);
	}
}

static void test_refused(void **state)
{
	uint8_t other[32] = { 42 };
	struct pair p;
	int rs, rc;

	(void)state;
	/* the right identity, another key: the binder does not verify */
	pair_open(&p, 0);
	assert_int_equal(nvmfd_tls_set_psk(p.c, "id256", other, 32, 1), 0);
	handshake(&p, &rs, &rc);
	assert_int_equal(rs, -EACCES);
	assert_int_equal(rc, -EACCES);
	assert_non_null(strstr(nvmfd_tls_errstr(p.s), "binder"));
	pair_close(&p);
	/* an identity the server does not know */
	pair_open(&p, 0);
	assert_int_equal(nvmfd_tls_set_psk(p.c, "nobody", key256, 32, 1), 0);
	handshake(&p, &rs, &rc);
	assert_int_equal(rs, -EACCES);
	assert_int_equal(rc, -EACCES);
	assert_int_equal(p.calls, 1);
	pair_close(&p);
	/* a SHA-384 suite for a SHA-256 key: no common cipher for the PSK */
	pair_open(&p, 0);
	assert_int_equal(nvmfd_tls_set_psk(p.c, "id256", key384, 48, 2), 0);
	handshake(&p, &rs, &rc);
	assert_int_equal(rs, -EACCES);
	assert_true(rc == -EACCES || rc == -ECONNRESET);
	pair_close(&p);
}

static void test_garbage(void **state)
{
	static const uint8_t junk[] = { 0x16, 0x03, 0x01, 0x00, 0x08, 'g', 'a', 'r', 'b',
					'a', 'g', 'e', '!' };
	struct pair p;

	(void)state;
	pair_open(&p, 0);
	assert_int_equal(write(p.fd[1], junk, sizeof(junk)), (ssize_t)sizeof(junk));
	assert_int_equal(nvmfd_tls_handshake(p.s), -EPROTO);
	assert_true(nvmfd_tls_errstr(p.s)[0] != '\0');
	pair_close(&p);
	/* nothing yet: wait for reading */
	pair_open(&p, 0);
	assert_int_equal(nvmfd_tls_handshake(p.s), -EAGAIN);
	assert_false(nvmfd_tls_want_write(p.s));
	/* the client goes away mid-handshake */
	close(p.fd[1]);
	p.fd[1] = -1;
	assert_int_equal(nvmfd_tls_handshake(p.s), -ECONNRESET);
	nvmfd_tls_free(p.c);
	p.c = NULL;
	pair_close(&p);
}

/* Move @len bytes from @a to @b through TLS with a small socket buffer. */
static void pump(struct nvmfd_tls *a, struct nvmfd_tls *b, size_t len)
{
	uint8_t *src = malloc(len), *dst = malloc(len);
	size_t sent = 0, got = 0;
	unsigned int eagain = 0;

	assert_non_null(src);
	assert_non_null(dst);
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 7 + (i >> 9));
	while (got < len) {
		if (sent < len) {
			/* three segments, as a PDU's header, data and digest */
			size_t rest = len - sent, h = rest < 24 ? rest : 24;
			size_t d = rest - h < 100000 ? rest - h : 100000;
			struct iovec iov[3] = {
				{ src + sent, h },
				{ src + sent + h, d },
				{ src + sent + h + d, rest - h - d < 4 ? rest - h - d : 4 },
			};
			ssize_t n = nvmfd_stream_sendv(-1, a, iov, 3, false);

			if (n == -EAGAIN) {
				eagain++;
			} else {
				assert_true(n > 0 && n <= NVMFD_TLS_STAGE);
				sent += (size_t)n;
			}
		} else if (nvmfd_tls_wpending(a)) {
			int r = nvmfd_stream_flush(a);

			assert_true(r == 0 || r == -EAGAIN);
		}
		for (;;) {
			ssize_t n = nvmfd_stream_recv(-1, b, dst + got,
						      len - got < 1000 ? len - got : 1000);

			if (n == -EAGAIN)
				break;
			assert_true(n > 0);
			got += (size_t)n;
		}
	}
	assert_false(nvmfd_tls_wpending(a));
	assert_memory_equal(src, dst, len);
	/* the socket buffer is small: sends had to wait */
	assert_true(eagain > 0);
	free(src);
	free(dst);
}

static void test_bulk(void **state)
{
	struct pair p;
	int rs, rc;
	uint8_t b;

	(void)state;
	pair_open(&p, 4096);
	assert_int_equal(nvmfd_tls_set_psk(p.c, "id384", key384, 48, 2), 0);
	handshake(&p, &rs, &rc);
	assert_int_equal(rs, 0);
	assert_int_equal(rc, 0);
	pump(p.c, p.s, 3u << 20);
	pump(p.s, p.c, (1u << 20) + 12345);
	assert_false(nvmfd_stream_rx_pending(p.s));
	assert_int_equal(nvmfd_stream_recv(-1, p.s, &b, 1), -EAGAIN);
	/* an orderly end: close_notify, then EOF */
	nvmfd_tls_free(p.c);
	p.c = NULL;
	assert_int_equal(nvmfd_stream_recv(-1, p.s, &b, 1), 0);
	pair_close(&p);
	/* the plain path of the seam */
	{
		int fd[2];
		char x = 'x';
		struct iovec iov = { &x, 1 };

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0);
		assert_int_equal(nvmfd_stream_sendv(fd[0], NULL, &iov, 1, false), 1);
		x = 0;
		assert_int_equal(nvmfd_stream_recv(fd[1], NULL, &x, 1), 1);
		assert_int_equal(x, 'x');
		assert_int_equal(nvmfd_stream_flush(NULL), 0);
		assert_false(nvmfd_stream_want_out(NULL));
		assert_false(nvmfd_stream_rx_pending(NULL));
		close(fd[0]);
		close(fd[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ciphers),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_bulk),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
