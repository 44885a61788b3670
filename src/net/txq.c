// SPDX-License-Identifier: MIT
/*
 * txq.c - PDU transmit queue: gather, send, partial-send accounting; see
 * txq.h for the model and the rules.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "net/sock.h"
#include "net/txq.h"

void nvmfd_tx_pdu_set(struct nvmfd_tx_pdu *p, const void *hdr, uint32_t hlen, const void *data,
		      uint32_t dlen, const void *ddgst, uint32_t dglen)
{
	assert(hdr && hlen > 0);
	assert(dlen == 0 || data);
	assert(dglen == 0 || ddgst);
	p->seg[0].iov_base = (void *)hdr;
	p->seg[0].iov_len = hlen;
	p->seg[1].iov_base = (void *)data;
	p->seg[1].iov_len = dlen;
	p->seg[2].iov_base = (void *)ddgst;
	p->seg[2].iov_len = dglen;
	p->seg[3].iov_base = NULL;
	p->seg[3].iov_len = 0;
	p->total = hlen + dlen + dglen;
	p->sent = 0;
	p->built = true;
}

void nvmfd_tx_pdu_set_trailer(struct nvmfd_tx_pdu *p, const void *pdu, uint32_t len)
{
	assert(p->built && p->sent == 0 && !p->seg[3].iov_len);
	assert(pdu && len > 0);
	p->seg[3].iov_base = (void *)pdu;
	p->seg[3].iov_len = len;
	p->total += len;
}

void nvmfd_tx_pdu_clear(struct nvmfd_tx_pdu *p)
{
	p->built = false;
	p->sent = 0;
	p->total = 0;
}

void nvmfd_txq_init(struct nvmfd_txq *q)
{
	memset(q, 0, sizeof(*q));
}

static void txq_unlink(struct nvmfd_txq *q, struct nvmfd_tx_pdu *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		q->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		q->tail = p->prev;
	p->next = p->prev = NULL;
	p->queued = false;
	q->count--;
	if (q->partial == p)
		q->partial = NULL;
}

/* Link @p after @prev (NULL: at the head). */
static void txq_link_after(struct nvmfd_txq *q, struct nvmfd_tx_pdu *prev, struct nvmfd_tx_pdu *p)
{
	assert(!p->queued);
	p->prev = prev;
	p->next = prev ? prev->next : q->head;
	if (p->next)
		p->next->prev = p;
	else
		q->tail = p;
	if (prev)
		prev->next = p;
	else
		q->head = p;
	p->queued = true;
	q->count++;
}

void nvmfd_txq_push(struct nvmfd_txq *q, struct nvmfd_tx_pdu *p)
{
	assert(!p->built || p->total > 0);
	txq_link_after(q, q->tail, p);
}

void nvmfd_txq_reset(struct nvmfd_txq *q)
{
	while (q->head)
		txq_unlink(q, q->head);
	q->epoch++;
}

uint32_t nvmfd_txq_drop_unsent(struct nvmfd_txq *q)
{
	struct nvmfd_tx_pdu *keep = q->partial;
	uint32_t dropped = 0;

	while (q->head) {
		if (q->head == keep) {
			if (!keep->next)
				break;
			txq_unlink(q, keep->next);
		} else {
			txq_unlink(q, q->head);
		}
		dropped++;
	}
	q->partial = keep;
	q->epoch++;
	return dropped;
}

/* Append the unsent rest of @p's PDU to @b. */
static void batch_add(struct nvmfd_txq_batch *b, const struct nvmfd_tx_pdu *p)
{
	size_t skip = p->sent;

	for (int i = 0; i < NVMFD_TX_SEGS; i++) {
		size_t len = p->seg[i].iov_len;

		if (skip >= len) {
			skip -= len;
			continue;
		}
		b->iov[b->iovcnt].iov_base = (uint8_t *)p->seg[i].iov_base + skip;
		b->iov[b->iovcnt].iov_len = len - skip;
		b->bytes += len - skip;
		b->iovcnt++;
		skip = 0;
	}
	b->npdu++;
}

unsigned int nvmfd_txq_gather(struct nvmfd_txq *q, unsigned int max_pdus,
			      const struct nvmfd_txq_ops *ops, void *owner,
			      struct nvmfd_txq_batch *b)
{
	struct nvmfd_tx_pdu *p, *last = NULL;

	b->iovcnt = 0;
	b->npdu = 0;
	b->bytes = 0;
	b->more = false;
	b->first = NULL;
	b->epoch = q->epoch;
	if (max_pdus == 0 || max_pdus > NVMFD_TXQ_BATCH_MAX)
		max_pdus = NVMFD_TXQ_BATCH_MAX;
	if (q->partial) {
		/* Finish the cut PDU alone: nothing may land inside it. */
		last = b->first = q->partial;
		batch_add(b, last);
	} else {
		for (p = q->head; p && b->npdu < max_pdus; p = p->next) {
			if (!p->built) {
				assert(ops && ops->prepare);
				ops->prepare(owner, p);
				assert(p->built && p->total > 0 && p->sent == 0);
			}
			if (!b->first)
				b->first = p;
			batch_add(b, p);
			last = p;
		}
	}
	if (last)
		b->more = q->count > b->npdu || last->more;
	return b->npdu;
}

ssize_t nvmfd_txq_send(int fd, const struct nvmfd_txq_batch *b, const struct nvmfd_txq_ops *ops,
		       void *owner)
{
	if (b->iovcnt == 0)
		return 0;
	if (ops && ops->sendv)
		return ops->sendv(owner, fd, b->iov, b->iovcnt, b->more);
	return nvmfd__sock_sendv(fd, b->iov, b->iovcnt, b->more);
}

unsigned int nvmfd_txq_complete(struct nvmfd_txq *q, const struct nvmfd_txq_batch *b, size_t n,
				const struct nvmfd_txq_ops *ops, void *owner)
{
	struct nvmfd_tx_pdu *p = b->first;
	unsigned int done = 0;

	assert(n <= b->bytes);
	if (b->epoch != q->epoch)
		return 0; /* the queue was reset since the gather */
	q->partial = NULL;
	for (unsigned int i = 0; i < b->npdu && p; i++) {
		struct nvmfd_tx_pdu *next = p->next, *prev = p->prev;
		size_t rem = p->total - p->sent;
		enum nvmfd_tx_next verdict = NVMFD_TX_LEAVE;

		if (n < rem) {
			p->sent += (uint32_t)n;
			if (p->sent)
				q->partial = p;
			break;
		}
		n -= rem;
		p->sent = p->total;
		txq_unlink(q, p);
		done++;
		if (ops && ops->done)
			verdict = ops->done(owner, p);
		if (b->epoch != q->epoch)
			break; /* done() reset or trimmed the queue */
		if (verdict == NVMFD_TX_STAY) {
			assert(!p->queued && (!p->built || p->total > 0));
			txq_link_after(q, prev, p);
		}
		p = next;
	}
	return done;
}

ssize_t nvmfd_txq_xmit(struct nvmfd_txq *q, int fd, unsigned int max_pdus,
		       const struct nvmfd_txq_ops *ops, void *owner, unsigned int *pdus)
{
	struct nvmfd_txq_batch b;
	unsigned int c = 0;
	ssize_t n = 0;

	if (nvmfd_txq_gather(q, max_pdus, ops, owner, &b)) {
		n = nvmfd_txq_send(fd, &b, ops, owner);
		if (n > 0)
			c = nvmfd_txq_complete(q, &b, (size_t)n, ops, owner);
	}
	if (pdus)
		*pdus = c;
	return n;
}
