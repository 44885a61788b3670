// SPDX-License-Identifier: MIT
/*
 * tls.c - TLS 1.3 with external PSKs on a non-blocking socket; see tls.h.
 *
 * OpenSSL does the protocol: the server finds the PSK of the identity a
 * client offers in SSL_CTX_set_psk_find_session_callback(), the client
 * offers its one identity in SSL_CTX_set_psk_use_session_callback(); each
 * builds a TLS 1.3 SSL_SESSION whose master key is the PSK and whose cipher
 * fixes the PSK's hash. With no certificate on the server, an identity it
 * does not know, or a binder computed with another key, ends the handshake
 * with an alert.
 *
 * The socket is OpenSSL's own socket BIO (SSL_set_fd), so that OpenSSL can
 * move the record layer into the kernel after the handshake
 * (SSL_OP_ENABLE_KTLS); without kernel TLS it writes and reads the socket
 * with write(2) and read(2) itself. write(2) raises SIGPIPE on a reset
 * connection: a process that does not ignore SIGPIPE (a program using the
 * host library) gets it blocked and consumed around OpenSSL's writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "net/tls.h"

#define TLS_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"

struct nvmfd_tls_ctx {
	SSL_CTX *ssl_ctx;
	bool server;
	nvmfd_tls_psk_find_fn find;
	void *arg;
	const char *ktls_why; /* why kernel TLS cannot be used, NULL: it may */
};

struct nvmfd_tls {
	struct nvmfd_tls_ctx *ctx;
	SSL *ssl;
	int fd;
	bool server;
	bool done; /* handshake finished */
	bool want_write;
	bool psk_seen; /* server: the client offered an identity */
	bool guard_sigpipe;
	void *conn_arg;
	uint8_t hash; /* client: 1 or 2 */
	uint8_t keylen;
	uint8_t key[NVMFD_TLS_KEY_MAX];
	char identity[NVMFD_TLS_IDENTITY_MAX];
	uint8_t *stage;
	size_t st_off, st_len;
	char err[256];
};

/* The TLS 1.3 cipher suite of a PSK hash (RFC 8446 §B.4 code points). */
static const SSL_CIPHER *tls_cipher(SSL *ssl, uint8_t hash)
{
	static const unsigned char aes128[2] = { 0x13, 0x01 }, aes256[2] = { 0x13, 0x02 };

	if (hash == 1)
		return SSL_CIPHER_find(ssl, aes128);
	if (hash == 2)
		return SSL_CIPHER_find(ssl, aes256);
	return NULL;
}

static SSL_SESSION *tls_session(SSL *ssl, const uint8_t *key, size_t len, uint8_t hash)
{
	const SSL_CIPHER *c = tls_cipher(ssl, hash);
	SSL_SESSION *s;

	if (!c)
		return NULL;
	s = SSL_SESSION_new();
	if (!s)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, key, len) || !SSL_SESSION_set_cipher(s, c) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static int tls_find_cb(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	struct nvmfd_tls *t = SSL_get_app_data(ssl);
	uint8_t key[NVMFD_TLS_KEY_MAX], hash = 0;
	int n;

	*sess = NULL;
	t->psk_seen = true;
	if (idlen == 0 || idlen >= sizeof(t->identity) || memchr(id, 0, idlen)) {
		snprintf(t->err, sizeof(t->err), "malformed PSK identity (%zu bytes)", idlen);
		return 1;
	}
	memcpy(t->identity, id, idlen);
	t->identity[idlen] = '\0';
	n = t->ctx->find(t->ctx->arg, t->conn_arg, t->identity, key, &hash);
	if (n < 0) {
		snprintf(t->err, sizeof(t->err), "PSK identity refused");
		OPENSSL_cleanse(key, sizeof(key));
		return 1; /* no session: the handshake fails (no certificate) */
	}
	*sess = tls_session(ssl, key, (size_t)n, hash);
	OPENSSL_cleanse(key, sizeof(key));
	return *sess ? 1 : 0;
}

static int tls_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		      SSL_SESSION **sess)
{
	struct nvmfd_tls *t = SSL_get_app_data(ssl);
	const SSL_CIPHER *c = tls_cipher(ssl, t->hash);

	*sess = NULL;
	*id = NULL;
	*idlen = 0;
	if (!c || !t->keylen)
		return 0;
	/* after a HelloRetryRequest: only a PSK of the chosen suite's hash */
	if (md && EVP_MD_get_type(md) != EVP_MD_get_type(SSL_CIPHER_get_handshake_digest(c)))
		return 1;
	*sess = tls_session(ssl, t->key, t->keylen, t->hash);
	if (!*sess)
		return 0;
	*id = (const unsigned char *)t->identity;
	*idlen = strlen(t->identity);
	return 1;
}

/* Is there a TLS upper layer protocol in this kernel? */
static const char *tls_ktls_probe(void)
{
#ifdef OPENSSL_NO_KTLS
	return "OpenSSL built without kTLS";
#else
	char buf[256] = "";
	ssize_t n;
	int fd = open("/proc/sys/net/ipv4/tcp_available_ulp", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (char *s = strtok(buf, " \n"); s; s = strtok(NULL, " \n"))
		if (!strcmp(s, "tls"))
			return NULL;
	/* the tls module might still load on demand: OpenSSL tries anyway */
	return "kernel has no TLS ULP (net.ipv4.tcp_available_ulp lacks \"tls\")";
#endif
}

static int tls_ctx_new(bool server, struct nvmfd_tls_ctx **out)
{
	struct nvmfd_tls_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->server = server;
	c->ssl_ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!c->ssl_ctx)
		goto fail;
	if (!SSL_CTX_set_min_proto_version(c->ssl_ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(c->ssl_ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(c->ssl_ctx, TLS_SUITES))
		goto fail;
	/* no resumption (tickets) and no early data: every connection uses
	 * the external PSK; EOF without close_notify is an ordinary close */
	SSL_CTX_set_options(c->ssl_ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF
#ifndef OPENSSL_NO_KTLS
						 | SSL_OP_ENABLE_KTLS
#endif
	);
	SSL_CTX_set_num_tickets(c->ssl_ctx, 0);
	SSL_CTX_set_mode(c->ssl_ctx,
			 SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_session_cache_mode(c->ssl_ctx, SSL_SESS_CACHE_OFF);
	if (server)
		SSL_CTX_set_psk_find_session_callback(c->ssl_ctx, tls_find_cb);
	else
		SSL_CTX_set_psk_use_session_callback(c->ssl_ctx, tls_use_cb);
	c->ktls_why = tls_ktls_probe();
	ERR_clear_error();
	*out = c;
	return 0;
fail:
	ERR_clear_error();
	nvmfd_tls_ctx_free(c);
	return -EIO;
}

int nvmfd_tls_ctx_server(nvmfd_tls_psk_find_fn find, void *ctx_arg, struct nvmfd_tls_ctx **out)
{
	int ret;

	if (!find || !out)
		return -EINVAL;
	ret = tls_ctx_new(true, out);
	if (ret)
		return ret;
	(*out)->find = find;
	(*out)->arg = ctx_arg;
	return 0;
}

int nvmfd_tls_ctx_client(struct nvmfd_tls_ctx **out)
{
	if (!out)
		return -EINVAL;
	return tls_ctx_new(false, out);
}

void nvmfd_tls_ctx_free(struct nvmfd_tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ssl_ctx);
	free(ctx);
}

int nvmfd_tls_new(struct nvmfd_tls_ctx *ctx, int fd, bool server, void *conn_arg,
		  struct nvmfd_tls **out)
{
	struct nvmfd_tls *t;
	struct sigaction sa;

	if (!ctx || fd < 0 || server != ctx->server || !out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ctx = ctx;
	t->fd = fd;
	t->server = server;
	t->conn_arg = conn_arg;
	t->stage = malloc(NVMFD_TLS_STAGE);
	t->ssl = SSL_new(ctx->ssl_ctx);
	if (!t->stage || !t->ssl)
		goto fail;
	if (!SSL_set_fd(t->ssl, fd))
		goto fail;
	SSL_set_app_data(t->ssl, t);
	if (server)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	t->guard_sigpipe = sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN;
	ERR_clear_error();
	*out = t;
	return 0;
fail:
	ERR_clear_error();
	if (t->ssl)
		SSL_free(t->ssl);
	free(t->stage);
	free(t);
	return -ENOMEM;
}

int nvmfd_tls_set_psk(struct nvmfd_tls *t, const char *identity, const uint8_t *key,
		      size_t keylen, uint8_t hash)
{
	size_t il;

	if (!t || t->server || !identity || !key || (hash != 1 && hash != 2) ||
	    keylen != (hash == 1 ? 32u : 48u))
		return -EINVAL;
	il = strlen(identity);
	if (il == 0 || il >= sizeof(t->identity))
		return -EINVAL;
	if (!SSL_set_ciphersuites(t->ssl, hash == 1 ? "TLS_AES_128_GCM_SHA256" :
						       "TLS_AES_256_GCM_SHA384")) {
		ERR_clear_error();
		return -EIO;
	}
	memcpy(t->identity, identity, il + 1);
	memcpy(t->key, key, keylen);
	t->keylen = (uint8_t)keylen;
	t->hash = hash;
	return 0;
}

/*
 * SIGPIPE: blocked around OpenSSL's writes when the process does not ignore
 * it; one raised by this thread's write is taken off the pending set.
 */
struct tls_guard {
	bool on;
	bool was_pending;
	sigset_t old;
};

static void tls_guard_begin(const struct nvmfd_tls *t, struct tls_guard *g)
{
	sigset_t set, pend;

	g->on = t->guard_sigpipe;
	if (!g->on)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	g->was_pending = sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void tls_guard_end(struct tls_guard *g)
{
	sigset_t set, pend;
	struct timespec zero = { 0, 0 };

	if (!g->on)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (!g->was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE))
		sigtimedwait(&set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/*
 * Map the result @r of an SSL call to an errno and keep a text.
 * @what: "handshake", "read", "write".
 */
static int tls_error(struct nvmfd_tls *t, int r, const char *what)
{
	int e = SSL_get_error(t->ssl, r), sys = errno;
	unsigned long code;

	switch (e) {
	case SSL_ERROR_WANT_READ:
		t->want_write = false;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		t->want_write = true;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		snprintf(t->err, sizeof(t->err), "%s: the peer closed the TLS session", what);
		return -ECONNRESET;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (!sys || sys == EPIPE || sys == ECONNRESET) {
			snprintf(t->err, sizeof(t->err), "%s: connection closed by the peer", what);
			return sys == EPIPE ? -EPIPE : -ECONNRESET;
		}
		snprintf(t->err, sizeof(t->err), "%s: %s", what, strerror(sys));
		return -sys;
	case SSL_ERROR_SSL:
		code = ERR_peek_last_error();
		if (t->err[0] == '\0' || t->done) {
			char txt[120];

			ERR_error_string_n(code, txt, sizeof(txt));
			if (!t->done && !t->server && ERR_GET_LIB(code) == ERR_LIB_SSL &&
			    ERR_GET_REASON(code) == SSL_R_WRONG_VERSION_NUMBER)
				/* the first bytes back are no TLS record: a plain
				 * NVMe/TCP port answers the ClientHello with a
				 * C2HTermReq, another service with its own bytes */
				snprintf(t->err, sizeof(t->err),
					 "%s: the peer did not answer with TLS (a port without "
					 "TLS, or not an NVMe/TCP target?): %s", what, txt);
			else
				snprintf(t->err, sizeof(t->err), "%s: %s", what, txt);
		}
		ERR_clear_error();
		if (!t->done) {
			/* the server refused a PSK it was offered; the client got
			 * an alert back (alert reasons start at 1000) */
			if (t->server ? t->psk_seen : ERR_GET_REASON(code) >= SSL_AD_REASON_OFFSET)
				return -EACCES;
		}
		return -EPROTO;
	default:
		ERR_clear_error();
		snprintf(t->err, sizeof(t->err), "%s: OpenSSL error %d", what, e);
		return -EIO;
	}
}

int nvmfd_tls_handshake(struct nvmfd_tls *t)
{
	struct tls_guard g;
	int r;

	if (t->done)
		return 0;
	ERR_clear_error();
	tls_guard_begin(t, &g);
	r = SSL_do_handshake(t->ssl);
	tls_guard_end(&g);
	if (r == 1) {
		t->done = true;
		t->want_write = false;
		if (!t->server)
			OPENSSL_cleanse(t->key, sizeof(t->key));
		return 0;
	}
	return tls_error(t, r, "TLS handshake");
}

bool nvmfd_tls_want_write(const struct nvmfd_tls *t)
{
	return t->want_write;
}

ssize_t nvmfd_tls_recv(struct nvmfd_tls *t, void *buf, size_t len)
{
	size_t n = 0;
	int r, ret;

	ERR_clear_error();
	r = SSL_read_ex(t->ssl, buf, len, &n);
	if (r == 1)
		return (ssize_t)n;
	ret = tls_error(t, r, "TLS read");
	return ret == -ECONNRESET && SSL_get_error(t->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : ret;
}

bool nvmfd_tls_rx_pending(const struct nvmfd_tls *t)
{
	return SSL_pending(t->ssl) > 0;
}

int nvmfd_tls_flush(struct nvmfd_tls *t)
{
	struct tls_guard g;
	int ret = 0;

	if (t->st_off >= t->st_len)
		return 0;
	tls_guard_begin(t, &g);
	while (t->st_off < t->st_len) {
		size_t w = 0;
		int r;

		ERR_clear_error();
		/* a retry after WANT_WRITE passes the same bytes again */
		r = SSL_write_ex(t->ssl, t->stage + t->st_off, t->st_len - t->st_off, &w);
		if (r != 1) {
			ret = tls_error(t, r, "TLS write");
			break;
		}
		t->st_off += w;
	}
	tls_guard_end(&g);
	if (ret == 0)
		t->st_off = t->st_len = 0;
	return ret;
}

bool nvmfd_tls_wpending(const struct nvmfd_tls *t)
{
	return t->st_off < t->st_len;
}

ssize_t nvmfd_tls_sendv(struct nvmfd_tls *t, const struct iovec *iov, int iovcnt)
{
	size_t n = 0;
	int ret;

	ret = nvmfd_tls_flush(t);
	if (ret)
		return ret; /* -EAGAIN: nothing taken */
	for (int i = 0; i < iovcnt && n < NVMFD_TLS_STAGE; i++) {
		size_t l = iov[i].iov_len;

		if (l > NVMFD_TLS_STAGE - n)
			l = NVMFD_TLS_STAGE - n;
		memcpy(t->stage + n, iov[i].iov_base, l);
		n += l;
	}
	if (n == 0)
		return 0;
	t->st_off = 0;
	t->st_len = n;
	ret = nvmfd_tls_flush(t);
	if (ret && ret != -EAGAIN)
		return ret;
	return (ssize_t)n;
}

void nvmfd_tls_get_info(const struct nvmfd_tls *t, struct nvmfd_tls_info *info)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);

	memset(info, 0, sizeof(*info));
	info->cipher = c ? SSL_CIPHER_get_name(c) : "none";
#ifndef OPENSSL_NO_KTLS
	info->ktls_tx = BIO_get_ktls_send(SSL_get_wbio(t->ssl)) > 0;
	info->ktls_rx = BIO_get_ktls_recv(SSL_get_rbio(t->ssl)) > 0;
#endif
	if (!info->ktls_tx && !info->ktls_rx)
		info->ktls_why = t->ctx->ktls_why ? t->ctx->ktls_why :
						     "OpenSSL did not enable it for this connection";
}

const char *nvmfd_tls_errstr(const struct nvmfd_tls *t)
{
	return t->err;
}

void nvmfd_tls_free(struct nvmfd_tls *t)
{
	struct tls_guard g;

	if (!t)
		return;
	if (t->done) {
		/* one try at close_notify, never waiting for the peer's */
		ERR_clear_error();
		tls_guard_begin(t, &g);
		SSL_shutdown(t->ssl);
		tls_guard_end(&g);
		ERR_clear_error();
	}
	SSL_free(t->ssl);
	OPENSSL_cleanse(t->key, sizeof(t->key));
	if (t->stage) {
		OPENSSL_cleanse(t->stage, NVMFD_TLS_STAGE);
		free(t->stage);
	}
	free(t);
}
