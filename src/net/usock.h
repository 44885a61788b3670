/* SPDX-License-Identifier: MIT */
/*
 * usock.h - one connected stream socket driven through its own io_uring
 * (the target's --net uring, doc/execution-model.md §9).
 *
 * Receive. Bytes arrive as *chunks*, in stream order:
 *   - multishot mode: one IORING_OP_RECV with IORING_RECV_MULTISHOT stays
 *     armed and the kernel fills buffers of a provided buffer ring (one
 *     chunk per CQE, up to @buf_size bytes each). A chunk's buffer goes
 *     back to the ring once the owner consumed all of it. When every
 *     buffer is held (-ENOBUFS), or the kernel ended the multishot request
 *     for another reason, it is re-armed as soon as a buffer is free.
 *   - single mode: one IORING_OP_RECV at a time into one buffer of
 *     @buf_size bytes; re-armed when that chunk is consumed.
 * Auto mode takes multishot when the kernel registers the buffer ring and
 * accepts the multishot request, else falls back to single (once, for the
 * life of the socket).
 *
 * Send. One IORING_OP_SENDMSG in flight at a time, of an iovec array the
 * owner keeps alive until its completion is taken; a completion may report
 * fewer bytes than asked (a short send): the owner sends the rest.
 *
 * Nothing is submitted behind the owner's back: SQEs prepared by the
 * receive side (re-arms) go to the kernel with the next
 * nvmfd_usock_submit() or nvmfd_usock_send(), so that one io_uring_enter
 * carries both.
 *
 * Wake-ups. The ring has an eventfd the kernel signals for every CQE. The
 * owner watches it edge-triggered and never reads it. While the owner
 * runs it may mute it (nvmfd_usock_mute(): its own sends complete inline
 * and need no wake-up); before sleeping it calls nvmfd_usock_unmute(),
 * which turns signals back on and says whether a CQE slipped in meanwhile.
 *
 * Teardown. nvmfd_usock_cancel() cancels the receive and a send in flight
 * and stops re-arming; nvmfd_usock_idle() is true once the kernel has
 * returned every CQE, after which no buffer (neither the ring's nor the
 * owner's iovecs) is touched any more. Only then may the owner free what
 * its sends pointed at; nvmfd_usock_destroy() waits (blocking) if called
 * earlier.
 *
 * Shared ring (opts.ring, doc/execution-model.md §9.1): the SQEs go on the
 * worker ring of the owner's pool instead (internal/rt_ring.h), with this
 * socket's own buffer group there. Its CQEs reach the socket through a
 * sink: the reaper copies each into the socket's mailbox and queues the
 * owner's work item (when the mailbox was empty: the owner empties it
 * whole), so there is no eventfd (nvmfd_usock_event_fd() is -1) and mute
 * does nothing. SQEs go to the kernel with the owner's worker's next
 * io_uring_enter() (nvmfd_rt_ring_commit()): a send is in flight, not
 * completed, when nvmfd_usock_send() returns.
 *
 * Errors: negative errno. Context: one owner at a time (the connection's
 * io_work); nothing locks but the shared ring's lock. The socket fd stays
 * the caller's.
 */
#ifndef NVMFD_NET_USOCK_H
#define NVMFD_NET_USOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct nvmfd_usock;
struct nvmfd_rt_ring;
struct nvmfd_work;

enum nvmfd_usock_recv {
	NVMFD_USOCK_RECV_AUTO, /* multishot where the kernel has it, else single */
	NVMFD_USOCK_RECV_MULTISHOT, /* multishot only: create fails without buffer rings */
	NVMFD_USOCK_RECV_SINGLE, /* one recv SQE at a time */
};

/**
 * struct nvmfd_usock_opts - receive setup.
 * @recv:     mode (above).
 * @nbufs:    buffers of the provided ring (multishot), a power of two in
 *            2..4096; 0: 16.
 * @buf_size: bytes per buffer (and the single-mode buffer), 512..1 MiB;
 *            0: 16384.
 * @ring:     NULL: a ring of its own; else the worker ring to share
 *            (borrowed, outlives the socket).
 * @owner:    with @ring: the work item the CQEs queue (borrowed; it must
 *            outlive the socket's last CQE: nvmfd_usock_idle()).
 */
struct nvmfd_usock_opts {
	enum nvmfd_usock_recv recv;
	unsigned int nbufs;
	unsigned int buf_size;
	struct nvmfd_rt_ring *ring;
	struct nvmfd_work *owner;
};

/**
 * struct nvmfd_usock_stats - counters (the owner writes them with relaxed
 * stores; nvmfd_usock_get_stats() reads them relaxed from any thread).
 * @recv_cqes:  receive completions that carried bytes.
 * @recv_bytes: bytes received.
 * @recv_arms:  receive SQEs prepared (the first, and re-arms).
 * @enobufs:    multishot receives ended because every buffer was held.
 * @sends:      send SQEs.
 * @short_sends: sends that completed with fewer bytes than asked.
 * @submits:    io_uring_enter calls made to submit.
 */
struct nvmfd_usock_stats {
	uint64_t recv_cqes;
	uint64_t recv_bytes;
	uint64_t recv_arms;
	uint64_t enobufs;
	uint64_t sends;
	uint64_t short_sends;
	uint64_t submits;
};

/**
 * nvmfd_usock_probe() - does this kernel have what the io_uring socket
 * path needs (io_uring itself, RECV, SENDMSG, ASYNC_CANCEL)?
 * Return: 0; -ENOSYS / -EPERM (no io_uring, or forbidden), -EOPNOTSUPP (an
 * opcode missing), -ENOMEM. Context: any thread; creates a small ring.
 */
int nvmfd_usock_probe(void);

/**
 * nvmfd_usock_create() - set up the ring, its eventfd and the receive
 * buffers for connected socket @fd (borrowed, stays open). Nothing is
 * submitted yet: the first receive is prepared by the first
 * nvmfd_usock_peek() (so that the thread that will run the connection is
 * the one that submits it).
 * Return: 0; -EINVAL (bad options); -ENOMEM; -EOPNOTSUPP (multishot mode
 *         asked for and the kernel has no buffer rings); -errno from
 *         io_uring setup.
 */
int nvmfd_usock_create(int fd, const struct nvmfd_usock_opts *opts, struct nvmfd_usock **out);

/**
 * nvmfd_usock_destroy() - free the ring and buffers, NULL *@up. If CQEs
 * are still owed it cancels and waits for them first (blocking). NULL or
 * *NULL is ignored.
 */
void nvmfd_usock_destroy(struct nvmfd_usock **up);

/** nvmfd_usock_event_fd() - the eventfd to watch (EPOLLIN | EPOLLET);
 *  -1 on a shared ring (the sink queues the owner). */
int nvmfd_usock_event_fd(const struct nvmfd_usock *u);

/** nvmfd_usock_shared() - on a worker ring (opts.ring). */
bool nvmfd_usock_shared(const struct nvmfd_usock *u);

/** nvmfd_usock_multishot() - receiving by multishot (false: single). */
bool nvmfd_usock_multishot(const struct nvmfd_usock *u);

/**
 * nvmfd_usock_peek() - the oldest received bytes not consumed yet. Takes
 * new completions first; prepares a (re-)arm of the receive when needed.
 * @p: out: where they are (valid until they are consumed).
 * Return: bytes available at *@p (> 0); 0: nothing received yet; after all
 *         data: -ECONNRESET for an orderly close by the peer, or the
 *         receive's -errno.
 */
ssize_t nvmfd_usock_peek(struct nvmfd_usock *u, const uint8_t **p);

/**
 * nvmfd_usock_consume() - @n bytes (at most what the last peek returned)
 * were used; a chunk used up gives its buffer back.
 */
void nvmfd_usock_consume(struct nvmfd_usock *u, size_t n);

/**
 * nvmfd_usock_send() - submit one sendmsg of @iov (@iovcnt entries, with
 * MSG_MORE when @more), together with any SQE prepared before.
 * @iov is borrowed until nvmfd_usock_send_result() returned its result
 * (or nvmfd_usock_idle() is true after a cancel).
 * Return: 0; -EBUSY (a send is in flight or its result not taken);
 *         -ECANCELED (after nvmfd_usock_cancel()); -errno from the submit.
 */
int nvmfd_usock_send(struct nvmfd_usock *u, const struct iovec *iov, int iovcnt, bool more);

/**
 * nvmfd_usock_send_result() - take the completion of the send in flight.
 * @res: out: bytes sent (> 0, possibly short) or -errno.
 * Return: true when @res is set (the iovec is free again); false while
 *         the send is in flight (or none was made).
 */
bool nvmfd_usock_send_result(struct nvmfd_usock *u, ssize_t *res);

/** nvmfd_usock_send_busy() - a send is in flight (or its result not taken). */
bool nvmfd_usock_send_busy(const struct nvmfd_usock *u);

/**
 * nvmfd_usock_submit() - give prepared SQEs (receive re-arms) to the
 * kernel; no system call when there are none.
 * Return: 0 or -errno.
 */
int nvmfd_usock_submit(struct nvmfd_usock *u);

/** nvmfd_usock_mute() - no eventfd signal for CQEs from now on (the owner
 *  runs and looks itself). No system call. */
void nvmfd_usock_mute(struct nvmfd_usock *u);

/**
 * nvmfd_usock_unmute() - before sleeping: submit what is prepared, turn
 * eventfd signals back on, then look once more.
 * Return: true when completions are waiting (do not sleep: run again);
 *         false: every later CQE signals the eventfd (shared ring: queues
 *         the owner).
 */
bool nvmfd_usock_unmute(struct nvmfd_usock *u);

/**
 * nvmfd_usock_cancel() - cancel the receive and a send in flight; nothing
 * is re-armed any more and received bytes are dropped. Idempotent.
 * Return: 0 or -errno from the submit (then nvmfd_usock_destroy() still
 * waits correctly).
 */
int nvmfd_usock_cancel(struct nvmfd_usock *u);

/**
 * nvmfd_usock_idle() - take completions; true when none is owed any more
 * (after a cancel: the kernel no longer touches any buffer; shared ring:
 * and no reaper will call into the socket or queue its owner again).
 */
bool nvmfd_usock_idle(struct nvmfd_usock *u);

/** nvmfd_usock_get_stats() - copy the counters (any thread: relaxed loads). */
void nvmfd_usock_get_stats(const struct nvmfd_usock *u, struct nvmfd_usock_stats *st);

#endif /* NVMFD_NET_USOCK_H */
