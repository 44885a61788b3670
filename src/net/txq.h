/* SPDX-License-Identifier: MIT */
/*
 * txq.h - the PDU transmit queue shared by the host and target transports:
 * a FIFO of PDUs, a gather step that turns the unsent rest of the first
 * PDUs into one iovec array, a send step over nvmfd__sock_sendv() and an
 * accounting step that applies a (possibly short) send to the PDUs.
 *
 * Model. Every PDU owner (a command slot, a connection's control-PDU
 * buffer) embeds one struct nvmfd_tx_pdu. The element describes ONE PDU at
 * a time as up to three segments - header (with its digest), data, data
 * digest - that the owner keeps alive until the PDU is complete, plus
 * optionally a trailer: a second, whole PDU without data that the owner
 * sends right behind the first (the target's CapsuleResp behind the last
 * C2HData of a read, nvmfd_tx_pdu_set_trailer()), so that both go out in
 * the same sendmsg. The element is then one unit for the queue: it is
 * complete (done()) when the trailer's last byte is sent, and its partial
 * rest is finished alone as for a single PDU. The owner
 * pushes the element on the queue; one round of transmission is
 *
 *     nvmfd_txq_gather()    fill a batch with up to max_pdus queued PDUs
 *     nvmfd_txq_send()      one non-blocking sendmsg of the batch
 *     nvmfd_txq_complete()  account the bytes sent, in queue order
 *
 * or nvmfd_txq_xmit(), which does the three. Owners loop over rounds with
 * their own stop rules (socket full, byte or PDU budget).
 *
 * Wire rule. The byte stream is the concatenation of whole PDUs: a PDU cut
 * short by a send (the "partial" PDU) is finished ALONE by the next
 * gather, before any byte of another PDU is gathered.
 *
 * Lazy build. An element pushed with built == false (nvmfd_tx_pdu_clear())
 * gets ops->prepare() the first time a gather reaches it; prepare() must
 * describe the PDU with nvmfd_tx_pdu_set(). The target builds its C2HData
 * header and data digest only then.
 *
 * Completion. For each PDU whose last byte was sent, nvmfd_txq_complete()
 * unlinks the element and calls ops->done(). done() returns
 *   NVMFD_TX_LEAVE: the element stays off the queue (done() may free it,
 *                   recycle it, or push it again at the tail), or
 *   NVMFD_TX_STAY:  done() gave the element a NEW PDU (nvmfd_tx_pdu_set()
 *                   or nvmfd_tx_pdu_clear()) and it goes back to the place
 *                   it had in the FIFO (a target slot sends R2T, then
 *                   C2HData chunks, then a CapsuleResp from one place).
 * done() may push other elements. It must not call gather/send/complete/
 * xmit on the same queue; it may call nvmfd_txq_reset() or
 * nvmfd_txq_drop_unsent(), after which the accounting stops at once.
 *
 * Control PDUs (ICReq, ICResp, TermReq) are plain elements. To send a
 * TermReq in the middle of traffic, nvmfd_txq_drop_unsent() first: it
 * keeps only a partly sent PDU, so the TermReq follows whole PDUs.
 *
 * Nothing here allocates, locks or logs. Context: a queue and its elements
 * belong to one thread at a time (the connection's owner).
 */
#ifndef NVMFD_NET_TXQ_H
#define NVMFD_NET_TXQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Segments of one element: header (+ header digest), data, data digest,
 * trailer (a second PDU of the owner, header only). */
#define NVMFD_TX_SEGS 4
/* Most PDUs one gather takes (the target gathers 16; the host up to 64, as
 * many capsules as its 64-entry iovec array used to hold). */
#define NVMFD_TXQ_BATCH_MAX 64

/**
 * struct nvmfd_tx_pdu - one queued PDU, embedded in its owner.
 * @next:   FIFO link (txq private).
 * @prev:   FIFO link (txq private).
 * @seg:    the PDU's segments in wire order; a zero iov_len is absent.
 *          Set by nvmfd_tx_pdu_set() (and _set_trailer()); the memory is
 *          borrowed until done().
 * @total:  bytes of the element (sum of the segment lengths), > 0.
 * @sent:   bytes of the element already accepted by the socket, 0..@total.
 * @built:  @seg/@total describe the PDU; false: ops->prepare() builds it
 *          when the first gather reaches it.
 * @more:   the owner will queue another PDU right after this one: send
 *          with MSG_MORE even if nothing is queued behind (owner-set).
 * @queued: on a txq (txq private, readable).
 *
 * Owners touch only @seg, @total, @more through the helpers below and read
 * @sent, @queued.
 */
struct nvmfd_tx_pdu {
	struct nvmfd_tx_pdu *next;
	struct nvmfd_tx_pdu *prev;
	struct iovec seg[NVMFD_TX_SEGS];
	uint32_t total;
	uint32_t sent;
	bool built;
	bool more;
	bool queued;
};

/**
 * struct nvmfd_txq - FIFO of PDUs waiting for (the rest of) their send.
 * @head:    oldest element.
 * @tail:    newest element.
 * @partial: the element whose PDU a send cut short (0 < sent < total), or
 *           NULL; the next gather takes it alone.
 * @count:   elements queued.
 * @epoch:   bumped by reset/drop_unsent, so that an accounting walk
 *           notices the queue changed under it.
 * All fields private; use the functions.
 */
struct nvmfd_txq {
	struct nvmfd_tx_pdu *head;
	struct nvmfd_tx_pdu *tail;
	struct nvmfd_tx_pdu *partial;
	uint32_t count;
	uint32_t epoch;
};

/* What ops->done() decides for the element whose PDU just completed. */
enum nvmfd_tx_next {
	NVMFD_TX_LEAVE, /* off the queue */
	NVMFD_TX_STAY, /* back at its place, with the new PDU done() gave it */
};

/**
 * struct nvmfd_txq_ops - the owner's callbacks; every member may be NULL.
 * @prepare: build the PDU of @p (built == false) with nvmfd_tx_pdu_set().
 *           NULL: every element must be pushed built.
 * @done:    @p's PDU is completely sent (@p is already unlinked); return
 *           LEAVE or STAY (see the file comment). NULL: always LEAVE.
 * @sendv:   replaces nvmfd__sock_sendv() (tests, stub transports); same
 *           contract: bytes sent > 0, -EAGAIN, or -errno.
 * @owner is the pointer given to the txq call.
 */
struct nvmfd_txq_ops {
	void (*prepare)(void *owner, struct nvmfd_tx_pdu *p);
	enum nvmfd_tx_next (*done)(void *owner, struct nvmfd_tx_pdu *p);
	ssize_t (*sendv)(void *owner, int fd, const struct iovec *iov, int iovcnt, bool more);
};

/**
 * struct nvmfd_txq_batch - what one gather took (caller-allocated, on the
 * stack; about 4 KiB).
 * @iov:    the unsent bytes of the gathered PDUs, in wire order.
 * @iovcnt: entries used in @iov.
 * @npdu:   PDUs gathered (0 when the queue was empty).
 * @bytes:  sum of the @iov lengths.
 * @more:   send with MSG_MORE: an element is queued that was not gathered,
 *          or the last gathered PDU has @more set.
 * @first:  the first gathered element.
 * @epoch:  the queue's epoch at gather time.
 */
struct nvmfd_txq_batch {
	struct iovec iov[NVMFD_TX_SEGS * NVMFD_TXQ_BATCH_MAX];
	int iovcnt;
	unsigned int npdu;
	size_t bytes;
	bool more;
	struct nvmfd_tx_pdu *first;
	uint32_t epoch;
};

/**
 * nvmfd_tx_pdu_set() - describe the PDU of @p: header, data, data digest.
 * @p:     element, not queued or being given a new PDU in done()/prepare().
 * @hdr:   header bytes (with header digest), @hlen > 0.
 * @data:  data bytes or NULL; @dlen may be 0.
 * @ddgst: data digest bytes or NULL; @dglen may be 0.
 * Sets built, resets sent to 0, clears the trailer; keeps @p->more. The
 * memory is borrowed until the PDU completes (done()) or the queue drops it.
 */
void nvmfd_tx_pdu_set(struct nvmfd_tx_pdu *p, const void *hdr, uint32_t hlen, const void *data,
		      uint32_t dlen, const void *ddgst, uint32_t dglen);

/**
 * nvmfd_tx_pdu_set_trailer() - append a whole second PDU of @len bytes
 * (header and header digest, no data) behind the PDU nvmfd_tx_pdu_set()
 * just described; both are sent and completed as one element.
 * @p:   element, right after nvmfd_tx_pdu_set() (sent == 0).
 * @pdu: the trailer PDU, borrowed until done(); @len > 0.
 */
void nvmfd_tx_pdu_set_trailer(struct nvmfd_tx_pdu *p, const void *pdu, uint32_t len);

/**
 * nvmfd_tx_pdu_clear() - mark @p's next PDU as not built yet: the gather
 * that reaches it calls ops->prepare(). Resets sent to 0.
 */
void nvmfd_tx_pdu_clear(struct nvmfd_tx_pdu *p);

/** nvmfd_txq_init() - an empty queue. */
void nvmfd_txq_init(struct nvmfd_txq *q);

/**
 * nvmfd_txq_push() - append @p (not queued; built, or clear with a
 * prepare callback) at the tail.
 */
void nvmfd_txq_push(struct nvmfd_txq *q, struct nvmfd_tx_pdu *p);

/** nvmfd_txq_empty() - nothing is queued. */
static inline bool nvmfd_txq_empty(const struct nvmfd_txq *q)
{
	return q->head == NULL;
}

/** nvmfd_txq_head() - the oldest queued element, or NULL. */
static inline struct nvmfd_tx_pdu *nvmfd_txq_head(const struct nvmfd_txq *q)
{
	return q->head;
}

/** nvmfd_txq_count() - elements queued. */
static inline uint32_t nvmfd_txq_count(const struct nvmfd_txq *q)
{
	return q->count;
}

/** nvmfd_txq_partial() - the element whose PDU is partly sent, or NULL. */
static inline struct nvmfd_tx_pdu *nvmfd_txq_partial(const struct nvmfd_txq *q)
{
	return q->partial;
}

/**
 * nvmfd_txq_reset() - drop every element (no callback), e.g. when the
 * connection fails. Elements are left unqueued; their owners recycle them.
 */
void nvmfd_txq_reset(struct nvmfd_txq *q);

/**
 * nvmfd_txq_drop_unsent() - drop every element except a partly sent one,
 * which stays (alone) so that it can be finished before a TermReq.
 * Return: elements dropped (no callback runs for them).
 */
uint32_t nvmfd_txq_drop_unsent(struct nvmfd_txq *q);

/**
 * nvmfd_txq_gather() - fill @b with the unsent bytes of queued PDUs.
 * @q:        queue.
 * @max_pdus: most PDUs to take: the owner's batch limit and PDU budget
 *            combined (min of both); 0 or > NVMFD_TXQ_BATCH_MAX means
 *            NVMFD_TXQ_BATCH_MAX. At least one PDU is taken when the queue
 *            is not empty.
 * @ops:      callbacks (prepare), may be NULL when every element is built.
 * @owner:    passed to the callbacks.
 * @b:        out: the batch.
 *
 * A partly sent PDU is taken alone. Otherwise PDUs are taken from the
 * head in FIFO order, calling ops->prepare() for elements not built yet.
 * Return: @b->npdu (0: queue empty).
 */
unsigned int nvmfd_txq_gather(struct nvmfd_txq *q, unsigned int max_pdus,
			      const struct nvmfd_txq_ops *ops, void *owner,
			      struct nvmfd_txq_batch *b);

/**
 * nvmfd_txq_send() - one non-blocking gather send of @b on @fd, with
 * MSG_MORE when @b->more (through ops->sendv when set, else
 * nvmfd__sock_sendv()).
 * Return: bytes sent (> 0, possibly fewer than @b->bytes); 0 when @b is
 *         empty; -EAGAIN (socket full); -errno (-EPIPE, -ECONNRESET...).
 */
ssize_t nvmfd_txq_send(int fd, const struct nvmfd_txq_batch *b, const struct nvmfd_txq_ops *ops,
		       void *owner);

/**
 * nvmfd_txq_complete() - account @n bytes sent of batch @b (the last
 * gather on @q, 0 <= @n <= @b->bytes).
 *
 * Walks the gathered PDUs in order: each one now complete is unlinked and
 * given to ops->done() (which decides LEAVE or STAY); the one the bytes
 * end inside becomes the queue's partial PDU. Stops early if done() reset
 * or trimmed the queue.
 * Return: PDUs completed.
 */
unsigned int nvmfd_txq_complete(struct nvmfd_txq *q, const struct nvmfd_txq_batch *b, size_t n,
				const struct nvmfd_txq_ops *ops, void *owner);

/**
 * nvmfd_txq_xmit() - one round: gather up to @max_pdus, send, complete.
 * @pdus: out (may be NULL): PDUs completed in this round.
 * Return: bytes sent (> 0); 0 when the queue is empty; -EAGAIN when the
 *         socket takes nothing; -errno from the send (queue unchanged).
 */
ssize_t nvmfd_txq_xmit(struct nvmfd_txq *q, int fd, unsigned int max_pdus,
		       const struct nvmfd_txq_ops *ops, void *owner, unsigned int *pdus);

#endif /* NVMFD_NET_TXQ_H */
