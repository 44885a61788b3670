// SPDX-License-Identifier: MIT
/*
 * test_txq.c - the PDU transmit queue (src/net/txq.c) over a socketpair.
 *
 * Every test PDU is self-describing: its first 8 header bytes hold a magic
 * byte, the owner slot, the PDU's index within its slot and its total
 * length; every other byte is a function of (slot, index, offset). A
 * reader parses what came out of the socketpair and checks that the
 * stream is exactly a concatenation of whole, intact PDUs, each slot's
 * PDUs in order, and that done() ran once per PDU in stream order.
 *
 * A fake sendv sends at most K bytes per call (K = 1, 7, random), so
 * partial sends happen constantly; it checks at every call that a partly
 * sent PDU is finished alone and that MSG_MORE is what the queue implies.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "net/sock.h"
#include "net/txq.h"

#define MAX_SLOTS 80 /* more than NVMFD_TXQ_BATCH_MAX elements queued */
#define MAX_PDUS_PER_SLOT 6
#define PDU_MAGIC 0xa5
#define HDR_MIN 8

struct tpdu {
	uint32_t hlen, dlen, dglen;
	uint8_t hdr[80];
	uint8_t data[600];
	uint8_t dg[4];
};

struct tslot {
	struct nvmfd_tx_pdu e;
	unsigned int id;
	unsigned int nr; /* PDUs in the script */
	unsigned int cur; /* PDU being sent */
	bool lazy; /* give new PDUs through prepare() */
	bool more_flag; /* set e.more on every PDU but the last */
	bool fuse; /* a data-less next PDU rides as the trailer of the current one */
	bool fused; /* the current element carries PDUs cur and cur + 1 */
	unsigned int prepared; /* prepare() calls */
	unsigned int sets; /* elements described (slot_set() calls) */
	struct tpdu pdu[MAX_PDUS_PER_SLOT];
};

struct tctx {
	struct nvmfd_txq q;
	struct tslot slot[MAX_SLOTS];
	unsigned int nr_slots;
	int fd[2];
	/* fake sendv */
	unsigned int k; /* most bytes per call; 0 = random 1..300 */
	uint32_t rng;
	unsigned int eagain_every; /* every Nth call returns -EAGAIN (0: never) */
	unsigned int calls;
	bool check_more; /* verify the MSG_MORE rule in sendv */
	unsigned int last_npdu; /* set by the driver before each send */
	/* done() log: (slot << 8) | index */
	unsigned int log[MAX_SLOTS * MAX_PDUS_PER_SLOT];
	unsigned int nr_log;
	/* received stream */
	uint8_t *rx;
	size_t rx_len, rx_cap;
	/* done() hooks */
	bool reset_in_done;
	struct nvmfd_tx_pdu *push_in_done; /* pushed by the first done() */
};

static uint32_t rnd(struct tctx *c)
{
	c->rng = c->rng * 1103515245u + 12345u;
	return (c->rng >> 8) & 0xffffff;
}

static uint8_t pattern(unsigned int slot, unsigned int idx, uint32_t off)
{
	return (uint8_t)(slot * 31u + idx * 17u + off * 7u + (off >> 8));
}

/* Fill PDU @idx of slot @s: header (with the 8-byte tag), data, digest. */
static void make_pdu(struct tctx *c, struct tslot *s, unsigned int idx)
{
	struct tpdu *p = &s->pdu[idx];
	uint32_t off = 0, total;

	p->hlen = HDR_MIN + rnd(c) % (sizeof(p->hdr) - HDR_MIN + 1);
	p->dlen = rnd(c) % 3 ? rnd(c) % (sizeof(p->data) + 1) : 0;
	p->dglen = p->dlen && rnd(c) % 2 ? 4 : 0;
	total = p->hlen + p->dlen + p->dglen;
	p->hdr[0] = PDU_MAGIC;
	p->hdr[1] = (uint8_t)s->id;
	p->hdr[2] = (uint8_t)idx;
	p->hdr[3] = 0;
	memcpy(&p->hdr[4], &total, 4);
	for (off = HDR_MIN; off < p->hlen; off++)
		p->hdr[off] = pattern(s->id, idx, off);
	for (uint32_t i = 0; i < p->dlen; i++, off++)
		p->data[i] = pattern(s->id, idx, off);
	for (uint32_t i = 0; i < p->dglen; i++, off++)
		p->dg[i] = pattern(s->id, idx, off);
}

static void slot_set(struct tslot *s)
{
	struct tpdu *p = &s->pdu[s->cur];
	unsigned int span;

	s->fused = s->fuse && s->cur + 1 < s->nr && s->pdu[s->cur + 1].dlen == 0;
	span = s->fused ? 2 : 1;
	s->sets++;
	s->e.more = s->more_flag && s->cur + span < s->nr;
	nvmfd_tx_pdu_set(&s->e, p->hdr, p->hlen, p->dlen ? p->data : NULL, p->dlen,
			 p->dglen ? p->dg : NULL, p->dglen);
	if (s->fused) {
		assert_int_equal(s->e.total, p->hlen + p->dlen + p->dglen);
		nvmfd_tx_pdu_set_trailer(&s->e, p[1].hdr, p[1].hlen);
		assert_int_equal(s->e.total, p->hlen + p->dlen + p->dglen + p[1].hlen);
	}
}

static void t_prepare(void *owner, struct nvmfd_tx_pdu *e)
{
	struct tslot *s = (struct tslot *)e;

	(void)owner;
	assert_false(e->built);
	s->prepared++;
	slot_set(s);
}

static enum nvmfd_tx_next t_done(void *owner, struct nvmfd_tx_pdu *e)
{
	struct tctx *c = owner;
	struct tslot *s = (struct tslot *)e;

	assert_false(e->queued);
	assert_int_equal(e->sent, e->total);
	c->log[c->nr_log++] = (s->id << 8) | s->cur;
	if (s->fused) /* the trailer PDU completed with it */
		c->log[c->nr_log++] = (s->id << 8) | ++s->cur;
	if (c->reset_in_done) {
		nvmfd_txq_reset(&c->q);
		return NVMFD_TX_LEAVE;
	}
	if (c->push_in_done) {
		nvmfd_txq_push(&c->q, c->push_in_done);
		c->push_in_done = NULL;
	}
	if (++s->cur >= s->nr)
		return NVMFD_TX_LEAVE;
	if (s->lazy)
		nvmfd_tx_pdu_clear(&s->e);
	else
		slot_set(s);
	return NVMFD_TX_STAY;
}

static void rx_drain(struct tctx *c)
{
	for (;;) {
		ssize_t n;

		if (c->rx_cap - c->rx_len < 4096) {
			c->rx_cap = c->rx_cap * 2 + 8192;
			c->rx = realloc(c->rx, c->rx_cap);
			assert_non_null(c->rx);
		}
		n = nvmfd__sock_recv(c->fd[1], c->rx + c->rx_len, c->rx_cap - c->rx_len);
		if (n == -EAGAIN)
			return;
		assert_true(n > 0);
		c->rx_len += (size_t)n;
	}
}

static size_t iov_bytes(const struct iovec *iov, int cnt)
{
	size_t t = 0;

	for (int i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

static ssize_t t_sendv(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more)
{
	struct tctx *c = owner;
	struct nvmfd_tx_pdu *part = nvmfd_txq_partial(&c->q);
	struct iovec cut[NVMFD_TX_SEGS * NVMFD_TXQ_BATCH_MAX];
	size_t want, left;
	ssize_t n;
	int cnt = 0;

	c->calls++;
	assert_true(iovcnt > 0 && iovcnt <= NVMFD_TX_SEGS * NVMFD_TXQ_BATCH_MAX);
	if (part) {
		/* A partly sent PDU goes alone: exactly its unsent rest. */
		assert_true(iovcnt <= NVMFD_TX_SEGS);
		assert_int_equal(iov_bytes(iov, iovcnt), part->total - part->sent);
	}
	if (c->check_more) {
		bool want_more = nvmfd_txq_count(&c->q) > c->last_npdu;
		struct nvmfd_tx_pdu *e = part;

		if (!e) {
			e = nvmfd_txq_head(&c->q);
			for (unsigned int i = 1; i < c->last_npdu; i++)
				e = e->next;
		}
		want_more = want_more || e->more;
		assert_int_equal(more, want_more);
	}
	if (c->eagain_every && c->calls % c->eagain_every == 0)
		return -EAGAIN;
	want = c->k ? c->k : 1 + rnd(c) % 300;
	left = want;
	for (int i = 0; i < iovcnt && left; i++) {
		cut[cnt] = iov[i];
		if (cut[cnt].iov_len > left)
			cut[cnt].iov_len = left;
		left -= cut[cnt].iov_len;
		cnt++;
	}
	n = nvmfd__sock_sendv(fd, cut, cnt, more);
	assert_true(n > 0);
	rx_drain(c);
	return n;
}

static const struct nvmfd_txq_ops t_ops = {
	.prepare = t_prepare,
	.done = t_done,
	.sendv = t_sendv,
};

static void ctx_init(struct tctx *c, unsigned int nr_slots, uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	c->rng = seed;
	c->nr_slots = nr_slots;
	nvmfd_txq_init(&c->q);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, c->fd), 0);
	for (unsigned int i = 0; i < nr_slots; i++) {
		struct tslot *s = &c->slot[i];

		s->id = i;
		s->nr = 1 + rnd(c) % MAX_PDUS_PER_SLOT;
		for (unsigned int j = 0; j < s->nr; j++)
			make_pdu(c, s, j);
	}
}

static void ctx_fini(struct tctx *c)
{
	close(c->fd[0]);
	close(c->fd[1]);
	free(c->rx);
}

/* Push slot @i: built now, or lazily through prepare(). */
static void push_slot(struct tctx *c, unsigned int i, bool lazy)
{
	struct tslot *s = &c->slot[i];

	s->lazy = lazy;
	if (lazy)
		nvmfd_tx_pdu_clear(&s->e);
	else
		slot_set(s);
	nvmfd_txq_push(&c->q, &s->e);
}

/*
 * Parse the received stream: whole PDUs, intact bytes, per-slot order,
 * and the done() log in stream order. Return: PDUs parsed.
 */
static unsigned int check_stream(struct tctx *c)
{
	unsigned int next_idx[MAX_SLOTS] = { 0 };
	unsigned int nr = 0;
	size_t pos = 0;

	while (pos < c->rx_len) {
		const uint8_t *h = c->rx + pos;
		unsigned int slot, idx;
		const struct tpdu *p;
		uint32_t total;

		assert_true(c->rx_len - pos >= HDR_MIN);
		assert_int_equal(h[0], PDU_MAGIC);
		slot = h[1];
		idx = h[2];
		memcpy(&total, &h[4], 4);
		assert_true(slot < c->nr_slots);
		assert_int_equal(idx, next_idx[slot]);
		p = &c->slot[slot].pdu[idx];
		assert_int_equal(total, p->hlen + p->dlen + p->dglen);
		assert_true(c->rx_len - pos >= total);
		assert_memory_equal(h, p->hdr, p->hlen);
		if (p->dlen)
			assert_memory_equal(h + p->hlen, p->data, p->dlen);
		if (p->dglen)
			assert_memory_equal(h + p->hlen + p->dlen, p->dg, p->dglen);
		assert_true(nr < c->nr_log);
		assert_int_equal(c->log[nr], (slot << 8) | idx);
		next_idx[slot]++;
		nr++;
		pos += total;
	}
	assert_int_equal(nr, c->nr_log);
	return nr;
}

/* Run rounds (gather, send, complete) until the queue is empty. */
static void drive(struct tctx *c, unsigned int max_pdus, bool vary_budget)
{
	unsigned int rounds = 0;

	while (!nvmfd_txq_empty(&c->q)) {
		struct nvmfd_txq_batch b;
		struct nvmfd_tx_pdu *part = nvmfd_txq_partial(&c->q);
		unsigned int max = max_pdus, got, done;
		uint32_t before = nvmfd_txq_count(&c->q);
		ssize_t n;

		if (vary_budget)
			max = 1 + rnd(c) % 5; /* what a PDU budget leaves in this slice */
		got = nvmfd_txq_gather(&c->q, max, &t_ops, c, &b);
		assert_true(got > 0);
		if (part) {
			assert_int_equal(got, 1);
			assert_ptr_equal(b.first, part);
		} else {
			unsigned int lim = max == 0 || max > NVMFD_TXQ_BATCH_MAX ?
						   NVMFD_TXQ_BATCH_MAX : max;

			assert_int_equal(got, before < lim ? before : lim);
		}
		c->last_npdu = got;
		n = nvmfd_txq_send(c->fd[0], &b, &t_ops, c);
		if (n == -EAGAIN)
			continue;
		assert_true(n > 0 && (size_t)n <= b.bytes);
		done = nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c);
		part = nvmfd_txq_partial(&c->q);
		if ((size_t)n == b.bytes)
			assert_null(part);
		else if (part) /* else the send ended on a PDU boundary */
			assert_true(part->sent > 0 && part->sent < part->total);
		assert_true(done <= got);
		assert_true(++rounds < 1000000);
	}
}

static void run_mix_fuse(unsigned int k, uint32_t seed, unsigned int max_pdus, bool vary_budget,
			 bool more_flags, unsigned int eagain_every, bool fuse)
{
	struct tctx *c = calloc(1, sizeof(*c));
	unsigned int want = 0;

	assert_non_null(c);
	ctx_init(c, MAX_SLOTS, seed);
	c->k = k;
	c->check_more = true;
	c->eagain_every = eagain_every;
	for (unsigned int i = 0; i < c->nr_slots; i++) {
		c->slot[i].more_flag = more_flags && i % 3 == 0;
		c->slot[i].fuse = fuse && i % 4 != 3;
		push_slot(c, i, i % 2 == 1);
		want += c->slot[i].nr;
	}
	drive(c, max_pdus, vary_budget);
	assert_int_equal(check_stream(c), want);
	for (unsigned int i = 0; i < c->nr_slots; i++) {
		struct tslot *s = &c->slot[i];

		assert_int_equal(s->cur, s->nr);
		assert_false(s->e.queued);
		/* Lazy slots are prepared exactly once per element, eager never. */
		assert_int_equal(s->prepared, s->lazy ? s->sets : 0);
		if (!fuse)
			assert_int_equal(s->sets, s->nr);
	}
	assert_int_equal(nvmfd_txq_count(&c->q), 0);
	ctx_fini(c);
	free(c);
}

static void run_mix(unsigned int k, uint32_t seed, unsigned int max_pdus, bool vary_budget,
		    bool more_flags, unsigned int eagain_every)
{
	run_mix_fuse(k, seed, max_pdus, vary_budget, more_flags, eagain_every, false);
}

static void test_k1(void **state)
{
	run_mix(1, 1, 16, false, false, 0);
}

static void test_k7(void **state)
{
	run_mix(7, 2, 16, false, true, 0);
}

static void test_k_random(void **state)
{
	for (uint32_t seed = 10; seed < 40; seed++)
		run_mix(0, seed, 16, false, seed % 2, seed % 4 == 0 ? 3 : 0);
}

/*
 * Trailers (nvmfd_tx_pdu_set_trailer(): the target's CapsuleResp behind
 * its last C2HData): the two PDUs of an element leave back to back in one
 * gather, cut anywhere by short sends (also inside the trailer), and
 * complete together; the stream stays whole PDUs in order.
 */
static void test_trailer(void **state)
{
	unsigned int fused = 0;

	for (uint32_t seed = 50; seed < 70; seed++)
		run_mix_fuse(seed % 3 ? 0 : 5, seed, seed % 5 ? 16 : 0, seed % 2, seed % 3 == 0,
			     seed % 4 == 0 ? 3 : 0, true);
	/* the scripts above do fuse: count elements with a trailer once */
	{
		struct tctx *c = calloc(1, sizeof(*c));

		assert_non_null(c);
		ctx_init(c, MAX_SLOTS, 50);
		for (unsigned int i = 0; i < c->nr_slots; i++)
			for (unsigned int j = 0; j + 1 < c->slot[i].nr; j++)
				fused += c->slot[i].pdu[j + 1].dlen == 0;
		ctx_fini(c);
		free(c);
	}
	assert_true(fused > 10);
}

static void test_batch_limits(void **state)
{
	unsigned int limits[] = { 1, 2, 3, 16, 0, NVMFD_TXQ_BATCH_MAX, NVMFD_TXQ_BATCH_MAX + 5 };

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		run_mix(0, 100 + (uint32_t)i, limits[i], false, false, 0);
	/* A large K: whole batches go in one call. */
	run_mix(1u << 20, 120, 16, false, true, 0);
}

static void test_budget(void **state)
{
	for (uint32_t seed = 200; seed < 210; seed++)
		run_mix(0, seed, 0, true, seed % 2, 0);
}

/* The production send path (nvmfd__sock_sendv), one xmit per round. */
static void test_real_sendv(void **state)
{
	static const struct nvmfd_txq_ops ops = { .prepare = t_prepare, .done = t_done };
	struct tctx *c = calloc(1, sizeof(*c));
	unsigned int want = 0;

	assert_non_null(c);
	ctx_init(c, MAX_SLOTS, 7);
	for (unsigned int i = 0; i < c->nr_slots; i++) {
		push_slot(c, i, i % 3 == 0);
		want += c->slot[i].nr;
	}
	while (!nvmfd_txq_empty(&c->q)) {
		unsigned int pdus = 0;
		ssize_t n = nvmfd_txq_xmit(&c->q, c->fd[0], 16, &ops, c, &pdus);

		assert_true(n > 0 || n == -EAGAIN);
		rx_drain(c);
	}
	assert_int_equal(nvmfd_txq_xmit(&c->q, c->fd[0], 16, &ops, c, NULL), 0);
	assert_int_equal(check_stream(c), want);
	ctx_fini(c);
	free(c);
}

/* MSG_MORE: set while PDUs stay queued behind the batch or the owner says
 * more follows; clear on the last PDU otherwise. */
static void test_msg_more(void **state)
{
	struct tctx *c = calloc(1, sizeof(*c));
	struct nvmfd_txq_batch b;

	assert_non_null(c);
	ctx_init(c, 3, 5);
	for (unsigned int i = 0; i < 3; i++) {
		c->slot[i].nr = 1;
		push_slot(c, i, false);
	}
	assert_int_equal(nvmfd_txq_gather(&c->q, 2, &t_ops, c, &b), 2);
	assert_true(b.more);
	assert_int_equal(nvmfd_txq_gather(&c->q, 3, &t_ops, c, &b), 3);
	assert_false(b.more);
	c->slot[2].e.more = true;
	assert_int_equal(nvmfd_txq_gather(&c->q, 3, &t_ops, c, &b), 3);
	assert_true(b.more);
	/* The owner's flag on a PDU that is not the last gathered does not count. */
	c->slot[2].e.more = false;
	c->slot[0].e.more = true;
	assert_int_equal(nvmfd_txq_gather(&c->q, 3, &t_ops, c, &b), 3);
	assert_false(b.more);
	ctx_fini(c);
	free(c);
}

/* A send error or -EAGAIN leaves the queue as it was. */
static ssize_t fail_sendv(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more)
{
	return *(ssize_t *)owner;
}

static void test_send_errors(void **state)
{
	static const struct nvmfd_txq_ops ops = { .sendv = fail_sendv };
	uint8_t hdr[24] = { 1 };
	struct nvmfd_tx_pdu e[2];
	struct nvmfd_txq q;
	ssize_t ret = -EPIPE;
	unsigned int pdus = 9;

	memset(e, 0, sizeof(e));
	nvmfd_txq_init(&q);
	assert_true(nvmfd_txq_empty(&q));
	assert_null(nvmfd_txq_head(&q));
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), 0);
	assert_int_equal(pdus, 0);
	nvmfd_tx_pdu_set(&e[0], hdr, sizeof(hdr), NULL, 0, NULL, 0);
	nvmfd_tx_pdu_set(&e[1], hdr, 8, hdr + 8, 16, NULL, 0);
	nvmfd_txq_push(&q, &e[0]);
	nvmfd_txq_push(&q, &e[1]);
	assert_ptr_equal(nvmfd_txq_head(&q), &e[0]);
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), -EPIPE);
	ret = -EAGAIN;
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), -EAGAIN);
	assert_int_equal(nvmfd_txq_count(&q), 2);
	assert_int_equal(e[0].sent, 0);
	assert_null(nvmfd_txq_partial(&q));
	/* The bytes of 1.5 PDUs: the first completes, the second is partial. */
	ret = 24 + 12;
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), 36);
	assert_int_equal(pdus, 1);
	assert_false(e[0].queued);
	assert_ptr_equal(nvmfd_txq_partial(&q), &e[1]);
	assert_int_equal(e[1].sent, 12);
	/* A send error does not touch the partial PDU either. */
	ret = -ECONNRESET;
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), -ECONNRESET);
	assert_int_equal(e[1].sent, 12);
	ret = 12;
	assert_int_equal(nvmfd_txq_xmit(&q, -1, 0, &ops, &ret, &pdus), 12);
	assert_int_equal(pdus, 1);
	assert_true(nvmfd_txq_empty(&q));
	assert_null(nvmfd_txq_partial(&q));
}

/* drop_unsent keeps only the partly sent PDU: a TermReq pushed after it
 * follows whole PDUs on the wire. */
static void test_drop_unsent_termreq(void **state)
{
	struct tctx *c = calloc(1, sizeof(*c));
	struct tslot *term;
	struct nvmfd_txq_batch b;
	ssize_t n;

	assert_non_null(c);
	ctx_init(c, 5, 9);
	c->k = 50;
	for (unsigned int i = 0; i < 4; i++) {
		c->slot[i].nr = 1;
		c->slot[i].pdu[0].hlen = 40;
		c->slot[i].pdu[0].dlen = 100;
		c->slot[i].pdu[0].dglen = 0;
		memcpy(&c->slot[i].pdu[0].hdr[4], &(uint32_t){ 140 }, 4);
		for (uint32_t off = HDR_MIN; off < 40; off++)
			c->slot[i].pdu[0].hdr[off] = pattern(i, 0, off);
		for (uint32_t j = 0; j < 100; j++)
			c->slot[i].pdu[0].data[j] = pattern(i, 0, 40 + j);
		push_slot(c, i, false);
	}
	/* 50 bytes per call: slot 0 is cut after 50 bytes. */
	assert_int_equal(nvmfd_txq_gather(&c->q, 16, &t_ops, c, &b), 4);
	n = nvmfd_txq_send(c->fd[0], &b, &t_ops, c);
	assert_int_equal(n, 50);
	assert_int_equal(nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c), 0);
	assert_ptr_equal(nvmfd_txq_partial(&c->q), &c->slot[0].e);
	assert_int_equal(nvmfd_txq_drop_unsent(&c->q), 3);
	assert_int_equal(nvmfd_txq_count(&c->q), 1);
	assert_ptr_equal(nvmfd_txq_partial(&c->q), &c->slot[0].e);
	for (unsigned int i = 1; i < 4; i++)
		assert_false(c->slot[i].e.queued);
	/* The "TermReq": slot 4, one PDU. */
	term = &c->slot[4];
	term->nr = 1;
	push_slot(c, 4, false);
	c->check_more = true;
	drive(c, 16, false);
	assert_int_equal(check_stream(c), 2);
	assert_int_equal(c->log[0], 0u << 8);
	assert_int_equal(c->log[1], 4u << 8);
	ctx_fini(c);
	free(c);
}

/* A done() that resets the queue stops the walk; one that pushes another
 * element finds it behind a STAY element's place. */
static void test_done_reentry(void **state)
{
	struct tctx *c = calloc(1, sizeof(*c));
	struct nvmfd_txq_batch b;
	ssize_t n;

	assert_non_null(c);
	ctx_init(c, 4, 11);
	for (unsigned int i = 0; i < 3; i++) {
		c->slot[i].nr = 2;
		push_slot(c, i, false);
	}
	c->k = 1u << 20;
	c->reset_in_done = true;
	assert_int_equal(nvmfd_txq_gather(&c->q, 16, &t_ops, c, &b), 3);
	n = nvmfd_txq_send(c->fd[0], &b, &t_ops, c);
	assert_int_equal((size_t)n, b.bytes);
	assert_int_equal(nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c), 1);
	assert_true(nvmfd_txq_empty(&c->q));
	for (unsigned int i = 0; i < 3; i++)
		assert_false(c->slot[i].e.queued);
	/* A stale batch after a reset is ignored. */
	assert_int_equal(nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c), 0);
	ctx_fini(c);

	/* Slot 0 (2 PDUs) stays at the head; slot 3 pushed from done()
	 * lands at the tail, behind slot 1. */
	ctx_init(c, 4, 12);
	c->slot[0].nr = 2;
	c->slot[1].nr = 1;
	c->slot[3].nr = 1;
	push_slot(c, 0, true);
	push_slot(c, 1, false);
	slot_set(&c->slot[3]);
	c->push_in_done = &c->slot[3].e;
	c->k = 1u << 20;
	assert_int_equal(nvmfd_txq_gather(&c->q, 1, &t_ops, c, &b), 1);
	n = nvmfd_txq_send(c->fd[0], &b, &t_ops, c);
	assert_int_equal(nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c), 1);
	assert_ptr_equal(nvmfd_txq_head(&c->q), &c->slot[0].e);
	assert_ptr_equal(nvmfd_txq_head(&c->q)->next, &c->slot[1].e);
	assert_ptr_equal(nvmfd_txq_head(&c->q)->next->next, &c->slot[3].e);
	assert_false(c->slot[0].e.built); /* lazy: prepared when gathered */
	drive(c, 16, false);
	assert_int_equal(check_stream(c), 4);
	assert_int_equal(c->log[1], 0u << 8 | 1);
	assert_int_equal(c->log[2], 1u << 8);
	assert_int_equal(c->log[3], 3u << 8);
	ctx_fini(c);
	free(c);
}

/* A partial PDU in the middle of the queue (a STAY element with a new PDU
 * sits before it) is still finished alone, then gathering restarts at the
 * head. */
static void test_partial_behind_stay(void **state)
{
	struct tctx *c = calloc(1, sizeof(*c));
	struct nvmfd_txq_batch b;
	size_t first;
	ssize_t n;

	assert_non_null(c);
	ctx_init(c, 2, 13);
	c->slot[0].nr = 2;
	c->slot[1].nr = 1;
	push_slot(c, 0, false);
	push_slot(c, 1, false);
	first = c->slot[0].e.total;
	c->k = (unsigned int)first + 3;
	assert_int_equal(nvmfd_txq_gather(&c->q, 16, &t_ops, c, &b), 2);
	n = nvmfd_txq_send(c->fd[0], &b, &t_ops, c);
	assert_int_equal((size_t)n, first + 3);
	assert_int_equal(nvmfd_txq_complete(&c->q, &b, (size_t)n, &t_ops, c), 1);
	assert_ptr_equal(nvmfd_txq_head(&c->q), &c->slot[0].e); /* stayed, PDU 1 */
	assert_ptr_equal(nvmfd_txq_partial(&c->q), &c->slot[1].e);
	assert_int_equal(c->slot[1].e.sent, 3);
	c->k = 1u << 20;
	assert_int_equal(nvmfd_txq_gather(&c->q, 16, &t_ops, c, &b), 1);
	assert_ptr_equal(b.first, &c->slot[1].e);
	assert_true(b.more); /* slot 0's next PDU is queued */
	drive(c, 16, false);
	assert_int_equal(check_stream(c), 3);
	assert_int_equal(c->log[1], 1u << 8);
	assert_int_equal(c->log[2], 0u << 8 | 1);
	ctx_fini(c);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k1),
		cmocka_unit_test(test_k7),
		cmocka_unit_test(test_k_random),
		cmocka_unit_test(test_trailer),
		cmocka_unit_test(test_batch_limits),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_real_sendv),
		cmocka_unit_test(test_msg_more),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_drop_unsent_termreq),
		cmocka_unit_test(test_done_reentry),
		cmocka_unit_test(test_partial_behind_stay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
