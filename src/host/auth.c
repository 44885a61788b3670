// SPDX-License-Identifier: MIT
/*
 * auth.c - host side of NVMe in-band authentication on one queue: after a
 * Connect whose response sets AUTHREQ ATR, drive the DH-HMAC-CHAP host state
 * machine (src/auth) with Fabrics Authentication Send (data: the host's
 * message, in-capsule) and Authentication Receive (data: the controller's
 * message) commands, as NVMe Base 2.0 §5.21 / §8.13.5 describe.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host_auth.h"
#include "internal/auth.h"
#include "internal/log.h"

/* Allocation length of Authentication Receive: any controller message fits
 * (the longest, a Challenge with SHA-512 and ffdhe8192, is 1104 bytes). */
#define AUTH_RECV_AL 4096

static void auth_sqe(struct nvmfd_sqe *sqe, uint8_t fctype, uint32_t len)
{
	struct nvmfd_auth_send_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVMFD_ADMIN_FABRICS;
	cmd.fctype = fctype;
	cmd.secp = NVMFD_AUTH_SECP_NVME;
	cmd.spsp0 = NVMFD_AUTH_SPSP0;
	cmd.spsp1 = NVMFD_AUTH_SPSP1;
	cmd.tl = len; /* TL for Send, AL for Receive: same offset */
	memcpy(sqe, &cmd, sizeof(*sqe));
}

/*
 * One Authentication Send/Receive. @after names the last message the host
 * sent, for the error message: the Linux target drops the connection right
 * after a failed transaction (often before its AUTH_Failure1 is delivered),
 * so a closed connection at that point most likely means a refused secret.
 */
static int auth_cmd(struct nvmfd_host_qp *qp, uint8_t fctype, void *buf, uint32_t len,
		    const char *after)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;
	int ret;

	auth_sqe(&sqe, fctype, len);
	memset(&cpl, 0, sizeof(cpl));
	ret = nvmfd__host_qp_exec(qp, &sqe, buf, len, fctype == NVMFD_FCTYPE_AUTH_SEND, &cpl);
	if (ret == -EREMOTEIO) {
		char sb[32];

		nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP: Authentication %s failed: %s (status 0x%x)",
				      fctype == NVMFD_FCTYPE_AUTH_SEND ? "Send" : "Receive",
				      nvmfd_host_status_str(cpl.status, true, sb, sizeof(sb)),
				      cpl.status);
	} else if (ret < 0) {
		char orig[HOST_ERRMSG_LEN];

		snprintf(orig, sizeof(orig), "%s", qp->errmsg[0] ? qp->errmsg : strerror(-ret));
		nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP: Authentication %s after the host's %s "
					  "failed: %s%s",
				      fctype == NVMFD_FCTYPE_AUTH_SEND ? "Send" : "Receive", after,
				      orig,
				      !strcmp(after, "Reply") && fctype == NVMFD_FCTYPE_AUTH_RECV ?
					      " (the controller probably rejected the host secret)" :
					      "");
	}
	return ret;
}

static const char *msg_name(const uint8_t *msg, size_t len)
{
	if (len < 2)
		return "message";
	if (msg[0] == NVMFD_AUTH_TYPE_COMMON)
		return msg[1] == NVMFD_AUTH_ID_NEGOTIATE ? "AUTH_Negotiate" : "AUTH_Failure2";
	switch (msg[1]) {
	case NVMFD_AUTH_ID_REPLY:
		return "Reply";
	case NVMFD_AUTH_ID_SUCCESS2:
		return "Success2";
	default:
		return "message";
	}
}

/*
 * One DH-HMAC-CHAP step of the host state machine (the DH arithmetic: tens
 * of ms with ffdhe8192, seconds under a sanitizer on a loaded machine),
 * with @unlock (held on entry) released meanwhile when not NULL.
 */
static int dhchap_step(pthread_mutex_t *unlock, struct nvmfd_auth_host *h, const uint8_t *in,
		       uint8_t *out, size_t *outlen)
{
	int ret;

	if (unlock)
		pthread_mutex_unlock(unlock);
	if (!in) {
		ret = nvmfd_auth_host_start(h, out, NVMFD_AUTH_MSG_MAX);
		if (ret >= 0) {
			*outlen = (size_t)ret;
			ret = NVMFD_AUTH_NEXT_SEND_RECV;
		}
	} else {
		ret = nvmfd_auth_host_step(h, in, AUTH_RECV_AL, out, NVMFD_AUTH_MSG_MAX, outlen);
	}
	if (unlock)
		pthread_mutex_lock(unlock);
	return ret;
}

/*
 * One DH-HMAC-CHAP transaction on @qp with the secrets of ctrl->opts: the
 * first one after Connect (@last "Connect") or a re-authentication. The
 * arithmetic between two commands runs with @unlock (the admin_lock a
 * re-authentication of the admin queue holds, or NULL) released, so
 * keep-alive and other admin commands go on meanwhile.
 * Return: as nvmfd__host_qp_authenticate() (without -EOPNOTSUPP).
 */
static int qp_dhchap(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp, const char *subnqn,
		     const char *last, pthread_mutex_t *unlock)
{
	const struct nvmfd_host_ctrl_opts *o = &ctrl->opts;
	struct nvmfd_auth_key key, ckey;
	struct nvmfd_auth_host_cfg cfg;
	struct nvmfd_auth_host *h = NULL;
	uint8_t *out = NULL, *in = NULL;
	size_t outlen = 0;
	int ret, next;

	memset(&cfg, 0, sizeof(cfg));
	memset(&ckey, 0, sizeof(ckey));
	if (nvmfd_auth_key_parse(o->dhchap_secret, &key) < 0) {
		nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP host secret is not a valid "
					  "DHHC-1:hh:<base64>: representation");
		return -EINVAL;
	}
	cfg.key = &key;
	if (o->dhchap_ctrl_secret[0]) {
		if (nvmfd_auth_key_parse(o->dhchap_ctrl_secret, &ckey) < 0) {
			nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP controller secret is not a valid "
						  "DHHC-1:hh:<base64>: representation");
			ret = -EINVAL;
			goto out_wipe;
		}
		cfg.ctrl_key = &ckey;
	}
	cfg.hostnqn = o->hostnqn;
	cfg.subnqn = subnqn;
	/* one transaction per queue at a time; a new T_ID for each */
	cfg.tid = (uint16_t)(qp->qid + qp->auth_tid++);
	ret = nvmfd_auth_host_new(&cfg, &h);
	if (ret < 0) {
		nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP: cannot set up: %s", strerror(-ret));
		goto out_wipe;
	}
	out = calloc(1, NVMFD_AUTH_MSG_MAX);
	in = calloc(1, AUTH_RECV_AL);
	if (!out || !in) {
		ret = -ENOMEM;
		goto out_free;
	}
	next = dhchap_step(unlock, h, NULL, out, &outlen);
	if (next < 0) {
		ret = next;
		goto out_free;
	}
	for (;;) {
		if (outlen) {
			ret = auth_cmd(qp, NVMFD_FCTYPE_AUTH_SEND, out, (uint32_t)outlen, last);
			if (ret < 0)
				goto out_free;
			last = msg_name(out, outlen);
		}
		if (next == NVMFD_AUTH_NEXT_SEND_DONE || next == NVMFD_AUTH_NEXT_DONE) {
			const struct nvmfd_auth_result *r = nvmfd_auth_host_result(h);

			NVMFD_DBG("host", "qid %u: DH-HMAC-CHAP %s, %s, %s", qp->qid,
				   r->bidirectional ? "bidirectional" : "unidirectional",
				   nvmfd_auth_hash_name(r->hashid), nvmfd_auth_dhgroup_name(r->dhgid));
			pthread_mutex_lock(&ctrl->info_lock);
			if (!qp->dhchap)
				ctrl->info.dhchap_queues++;
			ctrl->info.dhchap_hash = r->hashid;
			ctrl->info.dhchap_dhgroup = r->dhgid;
			ctrl->info.dhchap_bidirectional = r->bidirectional;
			pthread_mutex_unlock(&ctrl->info_lock);
			qp->dhchap = true;
			ret = 0;
			goto out_free;
		}
		if (next == NVMFD_AUTH_NEXT_SEND_FAIL) {
			nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP failed: %s (sent AUTH_Failure2)",
					      nvmfd_auth_host_result(h)->why);
			ret = -EACCES;
			goto out_free;
		}
		/* The data length of the Receive is not reported; the buffer
		 * is zeroed so that a short message cannot leave stale bytes. */
		memset(in, 0, AUTH_RECV_AL);
		ret = auth_cmd(qp, NVMFD_FCTYPE_AUTH_RECV, in, AUTH_RECV_AL, last);
		if (ret < 0)
			goto out_free;
		next = dhchap_step(unlock, h, in, out, &outlen);
		if (next < 0) {
			ret = next;
			nvmfd__host_qp_seterr(qp, "DH-HMAC-CHAP failed: %s",
					      nvmfd_auth_host_result(h)->why);
			if (ret != -EACCES && ret != -ENOMEM)
				ret = -EACCES;
			goto out_free;
		}
	}

out_free:
	nvmfd_auth_host_free(h);
	if (out)
		nvmfd_auth_wipe(out, NVMFD_AUTH_MSG_MAX);
	free(out);
	free(in);
out_wipe:
	nvmfd_auth_wipe(&key, sizeof(key));
	nvmfd_auth_wipe(&ckey, sizeof(ckey));
	return ret;
}

int nvmfd__host_qp_authenticate(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp,
				const char *subnqn, const struct nvmfd_host_cpl *connect)
{
	const struct nvmfd_host_ctrl_opts *o = &ctrl->opts;
	uint32_t authreq = connect->cqe.result;

	if (authreq & NVMFD_CONNECT_AUTHREQ_ASCR) {
		nvmfd__host_qp_seterr(qp, "controller requires secure channel concatenation "
					  "(AUTHREQ ASCR), which is not supported");
		return -EOPNOTSUPP;
	}
	if (!(authreq & NVMFD_CONNECT_AUTHREQ_ATR)) {
		if (o->dhchap_ctrl_secret[0]) {
			nvmfd__host_qp_seterr(qp, "controller did not ask for DH-HMAC-CHAP, so it "
						  "cannot prove the controller secret; refused");
			return -EACCES;
		}
		return 0;
	}
	if (!o->dhchap_secret[0]) {
		nvmfd__host_qp_seterr(qp, "controller requires DH-HMAC-CHAP authentication "
					  "(AUTHREQ ATR) and no host secret is configured");
		return -EACCES;
	}
	return qp_dhchap(ctrl, qp, subnqn, "Connect", NULL);
}

int nvmfd__host_qp_reauth(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp)
{
	bool admin = qp->qid == 0;
	int ret;

	if (qp->state != HOST_QP_LIVE)
		return -ENOTCONN;
	if (qp->in_poll)
		return -EBUSY;
	/* a live queue's message can only be an earlier re-authentication's */
	qp->errmsg[0] = '\0';
	if (!qp->dhchap) {
		nvmfd__host_qp_seterr(qp, "the queue did not authenticate when it connected (the "
					  "controller asked for no DH-HMAC-CHAP)");
		return -EOPNOTSUPP;
	}
	if (admin) {
		/* without admin_lock while it waits (a slot, a completion,
		 * the arithmetic): keep-alive and other admin callers go on */
		ret = nvmfd__host_admin_reserve_slot_locked(ctrl);
		if (ret < 0)
			return ret;
		ret = qp_dhchap(ctrl, qp, ctrl->trid.subnqn, "last transaction",
				&ctrl->admin_lock);
		nvmfd__host_admin_unreserve_locked(ctrl);
	} else {
		ret = nvmfd__host_qp_reserve_slot(qp);
		if (ret < 0)
			return ret;
		ret = qp_dhchap(ctrl, qp, ctrl->trid.subnqn, "last transaction", NULL);
		qp->reserve = 0;
	}
	if (ret < 0 && qp->state == HOST_QP_LIVE) {
		char why[HOST_ERRMSG_LEN];
		const char *w = qp->errmsg;

		/* without seterr's own "qid N: " prefix */
		if (!strncmp(w, "qid ", 4) && strstr(w, ": "))
			w = strstr(w, ": ") + 2;
		snprintf(why, sizeof(why), "%s", w);
		nvmfd__host_qp_seterr(qp, "re-authentication failed: %s", why);
	}
	return ret;
}
