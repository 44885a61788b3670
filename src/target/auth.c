// SPDX-License-Identifier: MIT
/*
 * auth.c - the controller side of NVMe in-band authentication
 * (DH-HMAC-CHAP, NVMe Base 2.0 §8.13) on the target's queues.
 *
 * A Connect from a host whose "hosts" entry has a DH-HMAC-CHAP key, to a
 * subsystem that lists it in allowed_hosts (not one that allows any host,
 * nor discovery: as Linux nvmet), gets AUTHREQ ATR in its response. The
 * queue then accepts only Fabrics Authentication Send / Receive until a
 * transaction succeeds; everything else completes with AUTH_REQUIRED.
 * Each queue (admin and I/O) authenticates separately and holds its own
 * state machine (src/auth, nvmfd_auth_ctrl_*): Authentication Send feeds
 * it the host's message, and the next Authentication Receive returns the
 * answer it produced (zero padded to the allocation length).
 *
 * A failed transaction (an AUTH_Failure1 sent, an AUTH_Failure2 received)
 * leaves the queue unauthenticated; it accepts a new AUTH_Negotiate. A
 * successful queue may re-authenticate (a new Negotiate); it stays usable
 * until that transaction fails. Every new transaction takes the host's keys
 * as configured at that moment (reauth_rekey()).
 *
 * A queue must authenticate within a bounded time of its Connect: cfg
 * auth_timeout_ms, or the controller's KATO when that is shorter (neither
 * set: no deadline). The housekeeping thread closes a queue that missed it
 * (nvmfd__tgt_check_auth()); a queue whose re-authentication failed gets a
 * new deadline from the failure.
 *
 * Everything else runs on the queue owner's thread; nothing blocks (the DH
 * arithmetic is CPU work: tens of ms per transaction with ffdhe8192).
 * Secrets never appear in messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/auth.h"
#include "internal/log.h"
#include "target/core.h"

#define COMP "target"

/* Largest Authentication Send accepted: any host message is far smaller
 * (a Reply with SHA-512 and ffdhe8192 is 1168 bytes). */
#define AUTH_SEND_MAX 4096u

/* reauth_rekey(): the Negotiate was refused by the failed-attempt limit
 * (an AUTH_Failure1 is in the message buffer); not an enum nvmfd_auth_next */
#define NVMFD_AUTH_THROTTLED 100

struct nvmfd_tgt_auth {
	struct nvmfd_auth_ctrl *ctrl;
	bool authenticated; /* the queue may be used */
	bool rearm; /* authenticated before: a failure re-arms the deadline */
	bool finish_on_recv; /* the pending message is a Success1 that ends it */
	size_t msglen; /* the next Authentication Receive's message; 0 = none */
	uint8_t msg[NVMFD_AUTH_MSG_MAX];
};

/* The configured preference lists from a struct nvmfd_cfg_dhchap mask, in
 * the default order (0-terminated; DH null is 0xff, see auth.h). */
static void pref_lists(const struct nvmfd_cfg_dhchap *d, uint8_t hashes[4], uint8_t groups[7])
{
	static const uint8_t horder[] = { NVMFD_AUTH_HASH_SHA256, NVMFD_AUTH_HASH_SHA384,
					  NVMFD_AUTH_HASH_SHA512 };
	static const uint8_t gorder[] = { NVMFD_AUTH_DHGROUP_8192, NVMFD_AUTH_DHGROUP_6144,
					  NVMFD_AUTH_DHGROUP_4096, NVMFD_AUTH_DHGROUP_3072,
					  NVMFD_AUTH_DHGROUP_2048, NVMFD_AUTH_DHGROUP_NULL };
	unsigned int n = 0;

	for (unsigned int i = 0; i < sizeof(horder); i++)
		if (!d->hashes || (d->hashes & (1u << horder[i])))
			hashes[n++] = horder[i];
	hashes[n] = 0;
	n = 0;
	for (unsigned int i = 0; i < sizeof(gorder); i++)
		if (!d->dhgroups || (d->dhgroups & (1u << gorder[i])))
			groups[n++] = gorder[i] == NVMFD_AUTH_DHGROUP_NULL ? 0xff : gorder[i];
	groups[n] = 0;
}

/*
 * The controller state machine for @hostnqn on @s with the keys the
 * configuration holds now, or *@out NULL when it holds none for this pair
 * (no host entry or no key, a subsystem that allows any host, discovery).
 * Return: 0; -EINVAL (a key that does not parse); -ENOMEM.
 */
static int auth_ctrl_build(struct nvmfd_tgt_qp *qp, const struct nvmfd_tgt_subsys *s,
			   const char *hostnqn, struct nvmfd_auth_ctrl **out)
{
	const struct nvmfd_cfg *cfg = qp->tgt->cfg;
	struct nvmfd_cfg_dhchap d;
	struct nvmfd_auth_key hk, ck;
	struct nvmfd_auth_ctrl_cfg cc;
	uint8_t hashes[4], groups[7];
	bool any;
	int h, ret;

	*out = NULL;
	if (s->is_disc || !s->cfg || !cfg)
		return 0;
	/* the daemon edits hosts live under nvmfd_tgt_cfg_lock() */
	pthread_mutex_lock(&qp->tgt->lock);
	any = nvmfd__tgt_live_subsys_locked(s) && nvmfd__tgt_live_subsys_locked(s)->allow_any_host;
	h = any ? -1 : nvmfd_cfg_host_find(cfg, hostnqn);
	if (h >= 0)
		d = cfg->host_dhchap[h];
	pthread_mutex_unlock(&qp->tgt->lock);
	if (h < 0)
		return 0;
	memset(&cc, 0, sizeof(cc));
	memset(&hk, 0, sizeof(hk));
	memset(&ck, 0, sizeof(ck));
	if (!d.key[0]) {
		ret = 0;
		goto out_wipe;
	}
	ret = nvmfd_auth_key_parse(d.key, &hk);
	if (ret == 0 && d.ctrl_key[0])
		ret = nvmfd_auth_key_parse(d.ctrl_key, &ck);
	if (ret < 0) {
		NVMFD_ERR(COMP, "%s: host %s: configured DH-HMAC-CHAP key does not parse",
			  qp->peer_addr, hostnqn);
		goto out_wipe;
	}
	pref_lists(&d, hashes, groups);
	cc.host_key = &hk;
	cc.ctrl_key = d.ctrl_key[0] ? &ck : NULL;
	cc.hostnqn = hostnqn;
	cc.subnqn = s->nqn;
	cc.hashes = hashes;
	cc.dhgroups = groups;
	ret = nvmfd_auth_ctrl_new(&cc, out);
out_wipe:
	nvmfd_auth_wipe(&d, sizeof(d));
	nvmfd_auth_wipe(&hk, sizeof(hk));
	nvmfd_auth_wipe(&ck, sizeof(ck));
	return ret;
}

/**
 * nvmfd__tgt_auth_setup() - decide whether a queue being connected must
 * authenticate, and prepare its state.
 * @qp:      the queue (not yet attached).
 * @s:       the subsystem of the Connect.
 * @hostnqn: the Connect's host NQN.
 * @out:     the new state, or NULL when no authentication is required.
 * Return: 0; -EINVAL (the configured key does not parse: cfg validates
 *         keys, so only a config edited behind its back); -ENOMEM.
 * Context: queue owner.
 */
int nvmfd__tgt_auth_setup(struct nvmfd_tgt_qp *qp, const struct nvmfd_tgt_subsys *s,
			  const char *hostnqn, struct nvmfd_tgt_auth **out)
{
	struct nvmfd_auth_ctrl *c;
	struct nvmfd_tgt_auth *a;
	int ret;

	*out = NULL;
	ret = auth_ctrl_build(qp, s, hostnqn, &c);
	if (ret < 0 || !c)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a) {
		nvmfd_auth_ctrl_free(c);
		return -ENOMEM;
	}
	a->ctrl = c;
	*out = a;
	return 0;
}

/** nvmfd__tgt_auth_free() - free a queue's state (NULL: no-op). */
void nvmfd__tgt_auth_free(struct nvmfd_tgt_auth *a)
{
	if (!a)
		return;
	nvmfd_auth_ctrl_free(a->ctrl);
	nvmfd_auth_wipe(a, sizeof(*a));
	free(a);
}

/** nvmfd__tgt_auth_required() - the queue must authenticate before use. */
bool nvmfd__tgt_auth_required(const struct nvmfd_tgt_qp *qp)
{
	const struct nvmfd_tgt_auth *a = qp->auth;

	return a && !a->authenticated;
}

/** nvmfd__tgt_auth_authenticated() - the queue has authenticated (false
 *  when no authentication is configured for it). */
bool nvmfd__tgt_auth_authenticated(const struct nvmfd_tgt_qp *qp)
{
	const struct nvmfd_tgt_auth *a = qp->auth;

	return a && a->authenticated;
}

/**
 * nvmfd__tgt_auth_init() - parse an Authentication Send (05h) or Receive
 * (06h) on a connected queue.
 * Return: SUCCESS with the transfer set (Send: TL bytes H2C; Receive: AL
 *         bytes C2H); INVALID_FIELD|DNR for another security protocol
 *         (SECP, SPSP0/1), TL or AL 0 or too large; CMD_SEQ_ERROR|DNR when
 *         no authentication is configured for the queue.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_auth_init(struct nvmfd_tgt_req *req)
{
	struct nvmfd_auth_send_cmd c;

	memcpy(&c, &req->sqe, sizeof(c));
	if (!req->qp->auth)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
	if (c.secp != NVMFD_AUTH_SECP_NVME || c.spsp0 != NVMFD_AUTH_SPSP0 ||
	    c.spsp1 != NVMFD_AUTH_SPSP1 || c.tl == 0)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	if (c.fctype == NVMFD_FCTYPE_AUTH_SEND) {
		if (c.tl > AUTH_SEND_MAX)
			return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_H2C, c.tl);
	}
	return nvmfd__tgt_set_xfer(req, NVMFD_XFER_C2H, c.tl);
}

/* The queue's authentication time limit in ms (0: none): auth_timeout_ms,
 * or the controller's KATO when that is shorter. */
static uint64_t auth_limit_ms(const struct nvmfd_tgt_qp *qp)
{
	uint64_t lim = qp->tgt->cfg ? qp->tgt->cfg->auth_timeout_ms : 0;
	uint32_t kato = qp->ctrl ? __atomic_load_n(&qp->ctrl->kato_ms, __ATOMIC_RELAXED) : 0;

	if (kato && (!lim || kato < lim))
		lim = kato;
	return lim;
}

/**
 * nvmfd__tgt_auth_arm() - start the authentication deadline of a queue
 * that must authenticate (no-op for other queues, or when no limit is set).
 * @qp:     the queue, attached to its controller.
 * @now_ns: CLOCK_MONOTONIC now (ns).
 * Context: queue owner.
 */
void nvmfd__tgt_auth_arm(struct nvmfd_tgt_qp *qp, uint64_t now_ns)
{
	uint64_t lim = auth_limit_ms(qp);

	if (!qp->auth || !lim)
		return;
	__atomic_store_n(&qp->auth_deadline_ns, now_ns + lim * 1000000ull, __ATOMIC_RELEASE);
}

/**
 * nvmfd__tgt_check_auth() - one housekeeping pass: close every connected
 * queue whose authentication deadline has passed (logged once per queue,
 * counted in tgt->auth_timeouts, the queue shut down through
 * ops->shutdown_queue; an admin queue's teardown deletes its controller).
 * @tgt:    target.
 * @now_ns: current CLOCK_MONOTONIC time (ns).
 * Return: number of queues closed in this pass.
 * Context: housekeeping thread (or a test); takes tgt->lock.
 */
unsigned int nvmfd__tgt_check_auth(struct nvmfd_tgt *tgt, uint64_t now_ns)
{
	struct nvmfd_tgt_subsys *s;
	unsigned int n = 0, i;

	pthread_mutex_lock(&tgt->lock);
	nvmfd__tgt_for_each_subsys(tgt, i, s) {
		for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next) {
			for (unsigned int q = 0; q <= c->qid_max; q++) {
				struct nvmfd_tgt_qp *qp = c->sqs[q];
				uint64_t dl;

				if (!qp)
					continue;
				dl = __atomic_load_n(&qp->auth_deadline_ns, __ATOMIC_ACQUIRE);
				if (!dl || now_ns < dl)
					continue;
				/* the owner clears it when the queue authenticates */
				if (!__atomic_compare_exchange_n(&qp->auth_deadline_ns, &dl, 0, false,
								 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
					continue;
				NVMFD_WARN_RATELIMIT(COMP,
						     "ctrl %u: qid %u: %s: not authenticated in time, closing",
						     c->cntlid, qp->qid, qp->peer_addr);
				__atomic_add_fetch(&tgt->auth_timeouts, 1, __ATOMIC_RELAXED);
				if (qp->ops && qp->ops->shutdown_queue)
					qp->ops->shutdown_queue(qp);
				n++;
			}
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	return n;
}

/* ---- failed attempts: a token bucket per (host NQN, peer address) ---- */

/* "addr:port" or "[v6]:port" without the port. */
static void peer_host(const char *peer, char *out, size_t len)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	snprintf(out, len, "%.*s", (int)n, peer);
}

/*
 * The bucket of @hostnqn from @addr, refilled to @now; NULL when there is
 * none and !@create. A new bucket starts full; when the table is full the
 * least recently used one is taken over. Caller holds auth_fail_lock.
 */
static struct nvmfd_tgt_auth_bucket *bucket_get(struct nvmfd_tgt *tgt, const char *hostnqn,
						const char *addr, uint64_t now, bool create)
{
	const struct nvmfd_cfg *cfg = tgt->cfg;
	uint64_t step = (uint64_t)cfg->auth_fail_interval_ms * 1000000ull;
	uint64_t full = step * cfg->auth_fail_burst;
	struct nvmfd_tgt_auth_bucket *b = NULL, *lru = &tgt->auth_fail[0];

	for (unsigned int i = 0; i < NVMFD_TGT_AUTH_BUCKETS; i++) {
		struct nvmfd_tgt_auth_bucket *e = &tgt->auth_fail[i];

		if (e->last_ns && !strcmp(e->hostnqn, hostnqn) && !strcmp(e->addr, addr)) {
			b = e;
			break;
		}
		if (e->last_ns < lru->last_ns)
			lru = e;
	}
	if (!b) {
		if (!create)
			return NULL;
		b = lru;
		snprintf(b->hostnqn, sizeof(b->hostnqn), "%s", hostnqn);
		snprintf(b->addr, sizeof(b->addr), "%s", addr);
		b->tokens_ns = full;
		b->last_ns = now;
	}
	if (now > b->last_ns) {
		b->tokens_ns = full - b->tokens_ns < now - b->last_ns ? full :
									 b->tokens_ns + (now - b->last_ns);
		b->last_ns = now;
	}
	return b;
}

/*
 * What a transaction's outcome does to its bucket: a failure takes one
 * attempt; a success forgets the bucket (the host knows its key).
 * Without a limit (auth_fail_burst 0), nothing.
 */
static void bucket_account(struct nvmfd_tgt_qp *qp, bool ok)
{
	struct nvmfd_tgt *tgt = qp->tgt;
	struct nvmfd_tgt_auth_bucket *b;
	uint64_t step, now;
	char addr[64];

	if (!tgt->cfg || !tgt->cfg->auth_fail_burst || !qp->ctrl)
		return;
	step = (uint64_t)tgt->cfg->auth_fail_interval_ms * 1000000ull;
	now = nvmfd__tgt_now_ns();
	peer_host(qp->peer_addr, addr, sizeof(addr));
	pthread_mutex_lock(&tgt->auth_fail_lock);
	b = bucket_get(tgt, qp->ctrl->hostnqn, addr, now ? now : 1, !ok);
	if (b && ok)
		memset(b, 0, sizeof(*b));
	else if (b)
		b->tokens_ns = b->tokens_ns > step ? b->tokens_ns - step : 0;
	pthread_mutex_unlock(&tgt->auth_fail_lock);
}

/* No attempt left for this queue's host NQN and peer address. */
static bool bucket_empty(struct nvmfd_tgt_qp *qp)
{
	struct nvmfd_tgt *tgt = qp->tgt;
	struct nvmfd_tgt_auth_bucket *b;
	uint64_t step, now;
	char addr[64];
	bool empty;

	if (!tgt->cfg || !tgt->cfg->auth_fail_burst || !qp->ctrl)
		return false;
	step = (uint64_t)tgt->cfg->auth_fail_interval_ms * 1000000ull;
	now = nvmfd__tgt_now_ns();
	peer_host(qp->peer_addr, addr, sizeof(addr));
	pthread_mutex_lock(&tgt->auth_fail_lock);
	b = bucket_get(tgt, qp->ctrl->hostnqn, addr, now ? now : 1, false);
	empty = b && b->tokens_ns < step;
	pthread_mutex_unlock(&tgt->auth_fail_lock);
	return empty;
}

static void log_result(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt_auth *a, bool ok)
{
	const struct nvmfd_auth_result *r = nvmfd_auth_ctrl_result(a->ctrl);
	const struct nvmfd_tgt_ctrl *ctrl = qp->ctrl;

	__atomic_add_fetch(ok ? &qp->tgt->auth_ok : &qp->tgt->auth_failed, 1, __ATOMIC_RELAXED);
	bucket_account(qp, ok);
	if (ok) {
		__atomic_store_n(&qp->auth_deadline_ns, 0, __ATOMIC_RELEASE);
		a->rearm = true;
	} else if (a->rearm) {
		/* a failed re-authentication: the queue is closed to use again */
		a->rearm = false;
		nvmfd__tgt_auth_arm(qp, nvmfd__tgt_now_ns());
	}

	if (ok && qp->qid == 0)
		NVMFD_INFO(COMP, "ctrl %u: host %s authenticated (DH-HMAC-CHAP %s, %s, %s)",
			   ctrl->cntlid, ctrl->hostnqn,
			   r->bidirectional ? "bidirectional" : "unidirectional",
			   nvmfd_auth_hash_name(r->hashid), nvmfd_auth_dhgroup_name(r->dhgid));
	else if (ok)
		NVMFD_DBG(COMP, "ctrl %u: qid %u authenticated", ctrl->cntlid, qp->qid);
	else
		NVMFD_WARN(COMP, "ctrl %u: qid %u: %s: DH-HMAC-CHAP failed: %s", ctrl->cntlid,
			   qp->qid, qp->peer_addr, r->why[0] ? r->why : "?");
}

/*
 * An AUTH_Negotiate that starts a new transaction (a re-authentication, or
 * a retry after a failure) uses the keys configured now, not those of the
 * Connect: a key changed since (SIGHUP reload, control socket) applies,
 * and a key removed refuses it (AUTH_Failure1 01h). A Negotiate in the
 * middle of a transaction goes to the state machine (07h).
 * Return: the step's result, or 0 to run the usual step.
 */
static int reauth_rekey(struct nvmfd_tgt_req *req, size_t *outlen)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_auth *a = qp->auth;
	const uint8_t *m = req->data;
	struct nvmfd_auth_ctrl *c = NULL;
	int ret;

	if (!qp->ctrl || req->data_len < 2 || m[0] != NVMFD_AUTH_TYPE_COMMON ||
	    m[1] != NVMFD_AUTH_ID_NEGOTIATE || !nvmfd_auth_ctrl_idle(a->ctrl))
		return 0;
	if (bucket_empty(qp)) {
		/* refused before any DH work: not one more failure either */
		__atomic_add_fetch(&qp->tgt->auth_throttled, 1, __ATOMIC_RELAXED);
		NVMFD_WARN_RATELIMIT(COMP, "ctrl %u: qid %u: %s: host %s: DH-HMAC-CHAP refused: "
				     "too many failed attempts (auth_fail_burst)", qp->ctrl->cntlid,
				     qp->qid, qp->peer_addr, qp->ctrl->hostnqn);
		ret = nvmfd_auth_ctrl_refuse(a->ctrl, req->data, req->data_len,
					     "too many failed attempts from this host and address",
					     a->msg, sizeof(a->msg), outlen);
		return ret == NVMFD_AUTH_NEXT_SEND_FAIL ? NVMFD_AUTH_THROTTLED : ret;
	}
	ret = auth_ctrl_build(qp, qp->ctrl->subsys, qp->ctrl->hostnqn, &c);
	if (ret == -ENOMEM)
		return ret;
	if (!c)
		return nvmfd_auth_ctrl_refuse(a->ctrl, req->data, req->data_len,
					      "re-authentication: the host has no DH-HMAC-CHAP "
					      "key any more", a->msg, sizeof(a->msg), outlen);
	nvmfd_auth_ctrl_free(a->ctrl);
	a->ctrl = c;
	return 0;
}

/* A transaction succeeded: the queue may be used, at its depth now
 * (nvmfd__tgt_qp_enable(): its resources wait for the first success).
 * Return: false when they could not be had (the command fails with
 * Internal Error, the queue closes, it stays unauthenticated). */
static bool auth_succeeded(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt_auth *a)
{
	if (nvmfd__tgt_qp_enable(qp, qp->sqsize)) {
		a->authenticated = false;
		return false;
	}
	a->authenticated = true;
	log_result(qp, a, true);
	return true;
}

static nvmfd_status_t exec_send(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_auth *a = qp->auth;
	size_t outlen = 0;
	int next;

	next = reauth_rekey(req, &outlen);
	if (next == 0)
		next = nvmfd_auth_ctrl_step(a->ctrl, req->data, req->data_len, a->msg,
					    sizeof(a->msg), &outlen);
	a->msglen = 0;
	a->finish_on_recv = false;
	switch (next) {
	case NVMFD_AUTH_THROTTLED:
		/* the AUTH_Failure1 goes out with the next Receive; counted apart */
		a->msglen = outlen;
		if (a->authenticated) {
			a->authenticated = false;
			a->rearm = false;
			nvmfd__tgt_auth_arm(qp, nvmfd__tgt_now_ns());
		}
		return NVMFD_SC_SUCCESS;
	case NVMFD_AUTH_NEXT_SEND_RECV:
		a->msglen = outlen;
		return NVMFD_SC_SUCCESS;
	case NVMFD_AUTH_NEXT_SEND_DONE:
		/* unidirectional: done once the host has its Success1 */
		a->msglen = outlen;
		a->finish_on_recv = true;
		return NVMFD_SC_SUCCESS;
	case NVMFD_AUTH_NEXT_DONE:
		if (!auth_succeeded(qp, a))
			return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
		return NVMFD_SC_SUCCESS;
	case NVMFD_AUTH_NEXT_SEND_FAIL:
		/* the AUTH_Failure1 goes out with the next Receive */
		a->msglen = outlen;
		a->authenticated = false;
		log_result(qp, a, false);
		return NVMFD_SC_SUCCESS;
	case -EACCES:
		/* the host sent an AUTH_Failure2: the command itself succeeded */
		a->authenticated = false;
		log_result(qp, a, false);
		return NVMFD_SC_SUCCESS;
	default:
		a->authenticated = false;
		NVMFD_WARN(COMP, "ctrl %u: qid %u: DH-HMAC-CHAP: local error %d", qp->ctrl->cntlid,
			   qp->qid, next);
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	}
}

static nvmfd_status_t exec_recv(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_auth *a = qp->auth;

	/* nothing to return: a Receive without a Send that asked for one */
	if (!a->msglen)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR);
	if (a->msglen > req->data_len)
		return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD);
	memcpy(req->data, a->msg, a->msglen);
	memset((uint8_t *)req->data + a->msglen, 0, req->data_len - a->msglen);
	nvmfd_auth_wipe(a->msg, a->msglen);
	a->msglen = 0;
	if (a->finish_on_recv) {
		a->finish_on_recv = false;
		if (!auth_succeeded(qp, a))
			return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	}
	return NVMFD_SC_SUCCESS;
}

/**
 * nvmfd__tgt_auth_execute() - run an Authentication Send / Receive accepted
 * by nvmfd__tgt_auth_init().
 * Return: the completion status (protocol failures are answered with an
 *         AUTH_Failure1 message, not a status); INTERNAL on a local error;
 *         CMD_SEQ_ERROR|DNR for a Receive with nothing to return;
 *         INVALID_FIELD|DNR when AL is shorter than the message.
 * Context: queue owner.
 */
nvmfd_status_t nvmfd__tgt_auth_execute(struct nvmfd_tgt_req *req)
{
	uint8_t fctype = (uint8_t)(req->sqe.nsid & 0xff);

	return fctype == NVMFD_FCTYPE_AUTH_SEND ? exec_send(req) : exec_recv(req);
}
