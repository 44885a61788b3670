// SPDX-License-Identifier: MIT
/*
 * ctrl.c - host controller: admin queue bring-up (Connect, CAP, CC.EN,
 * CSTS.RDY), Identify, Number of Queues, I/O queue connects, keep-alive,
 * discovery log and orderly shutdown (NVMe-oF 1.1 §3, Base spec 2.0 §3.5).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "host/host_auth.h"
#include "host/host_int.h"
#include "net/tls.h"
#include "internal/auth.h"
#include "internal/proc.h"
#include "internal/log.h"

#define DISC_MAX_RECORDS 4096
#define CSTS_POLL_MS 10

static void ctrl_seterr(struct nvmfd_host_ctrl *ctrl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ctrl_seterr(struct nvmfd_host_ctrl *ctrl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctrl->errmsg, sizeof(ctrl->errmsg), fmt, ap);
	va_end(ap);
}

/* Copy a qp's failure reason into the controller, with a prefix. */
static int ctrl_qp_err(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp, int ret,
		       const char *what)
{
	if (qp && qp->errmsg[0])
		ctrl_seterr(ctrl, "%s: %s", what, qp->errmsg);
	else
		ctrl_seterr(ctrl, "%s: %s", what, strerror(-ret));
	return ret;
}

/* /etc/nvme/hostid holds a UUID string, as nvme-cli writes it. */
static int read_etc_hostid(uint8_t id[16])
{
	char line[64];
	unsigned int n = 0;
	FILE *f;

	f = fopen("/etc/nvme/hostid", "re");
	if (!f)
		return -ENOENT;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	for (const char *p = line; *p && *p != '\n' && n < 32; p++) {
		int v;

		if (*p == '-')
			continue;
		if (*p >= '0' && *p <= '9')
			v = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			v = (*p | 0x20) - 'a' + 10;
		else
			return -EINVAL;
		if (n % 2 == 0)
			id[n / 2] = (uint8_t)(v << 4);
		else
			id[n / 2] |= (uint8_t)v;
		n++;
	}
	return n == 32 ? 0 : -EINVAL;
}

void nvmfd_host_ctrl_opts_init(struct nvmfd_host_ctrl_opts *opts, size_t size)
{
	struct nvmfd_host_ctrl_opts d;

	memset(&d, 0, sizeof(d));
	d.size = size < sizeof(d) ? size : sizeof(d);
	d.nr_io_queues = 1;
	d.io_queue_size = 128;
	d.admin_queue_size = 32;
	d.kato_ms = 5000;
	d.timeout_ms = 10000;
	d.max_io_size = 1024 * 1024;
	d.tls_identity = NVMFD_HOST_TLS_ID_V1;
	memcpy(opts, &d, d.size);
}

int nvmfd_host_ctrl_create(const struct nvmfd_host_ctrl_opts *opts,
			   struct nvmfd_host_ctrl **out)
{
	struct nvmfd_host_ctrl *ctrl;
	struct nvmfd_host_ctrl_opts o;
	static const uint8_t zero_id[16];

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	if (opts) {
		size_t n = opts->size < sizeof(o) ? opts->size : sizeof(o);

		memcpy(&o, opts, n);
		o.size = sizeof(o);
	}
	if (o.io_queue_size < 2 || o.io_queue_size > 65536 || o.admin_queue_size < 2 ||
	    o.admin_queue_size > 4096 || o.timeout_ms == 0 || o.max_io_size < 512)
		return -EINVAL;
	/* Secrets must be NUL-terminated representations; a controller secret
	 * needs a host secret (bidirectional authentication includes the host's). */
	if (!memchr(o.dhchap_secret, 0, sizeof(o.dhchap_secret)) ||
	    !memchr(o.dhchap_ctrl_secret, 0, sizeof(o.dhchap_ctrl_secret)) ||
	    (o.dhchap_ctrl_secret[0] && !o.dhchap_secret[0]))
		return -EINVAL;
	{
		struct nvmfd_auth_key k;
		int bad = (o.dhchap_secret[0] && nvmfd_auth_key_parse(o.dhchap_secret, &k) < 0) ||
			  (o.dhchap_ctrl_secret[0] &&
			   nvmfd_auth_key_parse(o.dhchap_ctrl_secret, &k) < 0);

		nvmfd_auth_wipe(&k, sizeof(k));
		if (bad) {
			nvmfd_auth_wipe(&o, sizeof(o));
			return -EINVAL;
		}
	}
	if (o.tls) {
		struct nvmfd_auth_psk p;
		int bad = !memchr(o.tls_psk, 0, sizeof(o.tls_psk)) ||
			  nvmfd_auth_psk_parse(o.tls_psk, &p) < 0 ||
			  o.tls_identity > NVMFD_HOST_TLS_ID_SPDK;

		nvmfd_auth_wipe(&p, sizeof(p));
		if (bad) {
			nvmfd_auth_wipe(&o, sizeof(o));
			return -EINVAL;
		}
	}
	ctrl = calloc(1, sizeof(*ctrl));
	if (!ctrl) {
		nvmfd_auth_wipe(&o, sizeof(o));
		return -ENOMEM;
	}
	ctrl->opts = o;
	nvmfd_auth_wipe(&o, sizeof(o));
	if (ctrl->opts.tls) {
		int ret = nvmfd_tls_ctx_client(&ctrl->tls_ctx);

		if (ret) {
			nvmfd_auth_wipe(&ctrl->opts, sizeof(ctrl->opts));
			free(ctrl);
			return ret;
		}
	}
	if (!memcmp(ctrl->opts.hostid, zero_id, sizeof(zero_id)) &&
	    read_etc_hostid(ctrl->opts.hostid) < 0) {
		if (getrandom(ctrl->opts.hostid, sizeof(ctrl->opts.hostid), 0) !=
		    (ssize_t)sizeof(ctrl->opts.hostid)) {
			uint64_t t = nvmfd__host_now_ns() ^ (uint64_t)getpid();

			memcpy(ctrl->opts.hostid, &t, sizeof(t));
		}
	}
	ctrl->admin_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ctrl->admin_efd < 0) {
		int err = -errno;

		nvmfd_tls_ctx_free(ctrl->tls_ctx);
		nvmfd_auth_wipe(&ctrl->opts, sizeof(ctrl->opts));
		free(ctrl);
		return err;
	}
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&ctrl->admin_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_mutex_init(&ctrl->admin_lock, NULL);
	pthread_mutex_init(&ctrl->info_lock, NULL);
	*out = ctrl;
	return 0;
}

const char *nvmfd_host_ctrl_errmsg(const struct nvmfd_host_ctrl *ctrl)
{
	return ctrl ? ctrl->errmsg : "";
}

/* Wake the thread polling the admin socket (it re-reads what to wait
 * for: a command was queued, or keep-alive stops). */
static void admin_wake(struct nvmfd_host_ctrl *ctrl)
{
	uint64_t one = 1;

	if (write(ctrl->admin_efd, &one, sizeof(one)) != (ssize_t)sizeof(one) && errno != EAGAIN)
		NVMFD_WARN("host", "ctrl %u: cannot wake the admin queue poller: %s",
			   ctrl->info.cntlid, strerror(errno));
}

/* Milliseconds from now to @deadline (CLOCK_MONOTONIC ns), rounded up. */
static int ms_until(uint64_t deadline)
{
	uint64_t now = nvmfd__host_now_ns();

	if (now >= deadline)
		return 0;
	if (deadline - now > 3600000ull * 1000000ull)
		return 3600000;
	return (int)((deadline - now + 999999ull) / 1000000ull);
}

/*
 * One wait step on the admin queue, admin_lock held on entry and return:
 * if no other thread polls the admin socket this one does, without the
 * lock, for up to @tmo_ms (or until admin_efd is written), then reaps
 * what arrived (callbacks run under the lock) and wakes the sleepers;
 * otherwise it sleeps on admin_cond until that poller has reaped, at most
 * @tmo_ms. So keep-alive and other callers submit while a command is
 * outstanding, and a completion reaped by any thread reaches its waiter.
 * Return: 0, or the admin qp's error.
 */
static int admin_poll_once_locked(struct nvmfd_host_ctrl *ctrl, int tmo_ms)
{
	struct nvmfd_host_qp *qp = ctrl->admin;
	struct pollfd pfd[2];
	int ret;

	if (!qp)
		return -ENOTCONN;
	if (qp->state == HOST_QP_FAILED)
		return qp->fail_err;
	if (ctrl->admin_polling) {
		uint64_t at = nvmfd__host_now_ns() + (uint64_t)tmo_ms * 1000000ull;
		struct timespec ts = { .tv_sec = (time_t)(at / 1000000000ull),
				       .tv_nsec = (long)(at % 1000000000ull) };

		pthread_cond_timedwait(&ctrl->admin_cond, &ctrl->admin_lock, &ts);
		return qp->state == HOST_QP_FAILED ? qp->fail_err : 0;
	}
	ctrl->admin_polling = true;
	if (nvmfd__host_qp_pollfd(qp, &pfd[0]))
		tmo_ms = 0;
	pfd[1].fd = ctrl->admin_efd;
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	pthread_mutex_unlock(&ctrl->admin_lock);
	ret = poll(pfd, 2, tmo_ms);
	if (ret < 0)
		ret = errno == EINTR ? 0 : -errno;
	pthread_mutex_lock(&ctrl->admin_lock);
	if (pfd[1].revents) {
		uint64_t v;

		if (read(ctrl->admin_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			NVMFD_WARN("host", "ctrl %u: admin wake-up read failed: %s",
				   ctrl->info.cntlid, strerror(errno));
	}
	if (ret < 0) {
		nvmfd__host_qp_seterr(qp, "poll failed: %s", strerror(-ret));
	} else {
		ret = nvmfd_host_qp_poll(qp, 0);
	}
	ctrl->admin_polling = false;
	pthread_cond_broadcast(&ctrl->admin_cond);
	return ret < 0 ? ret : 0;
}

int nvmfd__host_admin_wait_locked(struct nvmfd_host_ctrl *ctrl, const bool *done,
				  uint64_t deadline)
{
	while (!*done) {
		int ret;

		if (nvmfd__host_now_ns() >= deadline)
			return -ETIMEDOUT;
		ret = admin_poll_once_locked(ctrl, ms_until(deadline));
		if (ret < 0 && !*done)
			return ret;
	}
	return 0;
}

/*
 * Keep Alives, other threads' commands and a re-authentication (which keeps
 * one slot for its own commands, qp->reserve) may hold every slot a new
 * command could take (admin_queue_size 2 leaves one): wait until one is
 * free, at most the command timeout, with admin_lock released while asleep.
 * Every held slot is a command in flight (it completes or times out) or
 * the re-authentication's (it ends), so the wait ends.
 * Return: 0, or the admin qp's error. admin_lock held.
 */
static int admin_wait_free_locked(struct nvmfd_host_ctrl *ctrl, unsigned int keep)
{
	uint64_t deadline = nvmfd__host_now_ns() + ctrl->admin->timeout_ns;

	while (ctrl->admin->nr_free <= keep) {
		int ret = admin_poll_once_locked(ctrl, ms_until(deadline));

		if (ret < 0)
			return ret;
		if (nvmfd__host_now_ns() >= deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

/* A new command's slot: more free than the re-authentication keeps. */
static int admin_slot_wait_locked(struct nvmfd_host_ctrl *ctrl)
{
	return admin_wait_free_locked(ctrl, ctrl->admin->reserve);
}

int nvmfd__host_admin_reserve_slot_locked(struct nvmfd_host_ctrl *ctrl)
{
	int ret;

	ctrl->admin->reserve = 1;
	/* as a command's wait: keep-alive and the other admin callers go
	 * on, one thread polls */
	ret = admin_wait_free_locked(ctrl, 0);
	if (ret == -ETIMEDOUT)
		nvmfd__host_qp_seterr(ctrl->admin, "no request slot became free within the timeout");
	if (ret < 0)
		nvmfd__host_admin_unreserve_locked(ctrl);
	return ret;
}

void nvmfd__host_admin_unreserve_locked(struct nvmfd_host_ctrl *ctrl)
{
	ctrl->admin->reserve = 0;
	/* the commands waiting for the kept slot (admin_slot_wait_locked()),
	 * asleep or polling */
	pthread_cond_broadcast(&ctrl->admin_cond);
	if (ctrl->admin_polling)
		admin_wake(ctrl);
}

/* Run one admin command; admin_lock must be held. */
static int admin_exec_locked(struct nvmfd_host_ctrl *ctrl, const struct nvmfd_sqe *sqe,
			     void *buf, uint32_t len, bool write, struct nvmfd_host_cpl *cpl)
{
	struct nvmfd_host_cpl c;
	int ret;

	if (!ctrl->admin || ctrl->admin->state != HOST_QP_LIVE)
		return -ENOTCONN;
	memset(&c, 0, sizeof(c));
	ret = admin_slot_wait_locked(ctrl);
	if (ret == 0)
		ret = nvmfd__host_qp_exec(ctrl->admin, sqe, buf, len, write, &c);
	if (cpl)
		*cpl = c;
	if (ret == -EREMOTEIO) {
		char sb[32];

		ctrl_seterr(ctrl, "admin opcode 0x%02x failed: %s (status 0x%x)", sqe->opc,
			    nvmfd_host_status_str(c.status, sqe->opc == NVMFD_ADMIN_FABRICS, sb,
						  sizeof(sb)),
			    c.status);
	} else if (ret < 0) {
		ctrl_qp_err(ctrl, ctrl->admin, ret, "admin queue");
	}
	return ret;
}

int nvmfd_host_admin_cmd(struct nvmfd_host_ctrl *ctrl, const struct nvmfd_sqe *sqe, void *buf,
			 uint32_t len, bool write, struct nvmfd_host_cpl *cpl)
{
	int ret;

	if (!ctrl || !sqe || (len && !buf))
		return -EINVAL;
	pthread_mutex_lock(&ctrl->admin_lock);
	ret = admin_exec_locked(ctrl, sqe, buf, len, write, cpl);
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}

int nvmfd_host_ctrl_reauth(struct nvmfd_host_ctrl *ctrl)
{
	int ret;

	if (!ctrl)
		return -EINVAL;
	pthread_mutex_lock(&ctrl->admin_lock);
	if (!ctrl->connected || !ctrl->admin || ctrl->admin->state != HOST_QP_LIVE) {
		ctrl_seterr(ctrl, "admin queue: not connected");
		ret = -ENOTCONN;
	} else if (ctrl->reauth_running) {
		/* the lock is released while a transaction waits */
		ctrl_seterr(ctrl, "admin queue: a re-authentication is already running");
		ret = -EBUSY;
	} else {
		ctrl->reauth_running = true;
		ret = nvmfd__host_qp_reauth(ctrl, ctrl->admin);
		ctrl->reauth_running = false;
		if (ret < 0)
			ctrl_qp_err(ctrl, ctrl->admin, ret, "admin queue");
	}
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}

int nvmfd_host_qp_reauth(struct nvmfd_host_qp *qp)
{
	if (!qp)
		return -EINVAL;
	if (qp->qid == 0)
		return -EINVAL; /* the admin queue: nvmfd_host_ctrl_reauth() */
	return nvmfd__host_qp_reauth(qp->ctrl, qp);
}

/* A Property Get of @ofst (8 bytes when @eight) into *@sqe. */
static void prop_get_sqe(struct nvmfd_sqe *sqe, uint32_t ofst, bool eight)
{
	struct nvmfd_prop_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVMFD_ADMIN_FABRICS;
	cmd.fctype = NVMFD_FCTYPE_PROP_GET;
	cmd.attrib = eight ? NVMFD_PROP_ATTRIB_SIZE_8 : NVMFD_PROP_ATTRIB_SIZE_4;
	cmd.ofst = ofst;
	memcpy(sqe, &cmd, sizeof(*sqe));
}

static int prop_get(struct nvmfd_host_ctrl *ctrl, uint32_t ofst, bool eight, uint64_t *val)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;
	int ret;

	prop_get_sqe(&sqe, ofst, eight);
	ret = admin_exec_locked(ctrl, &sqe, NULL, 0, false, &cpl);
	if (ret < 0)
		return ret;
	/* The value is in CQE DW0 (and DW1 for 8-byte properties). */
	*val = cpl.cqe.result | (eight ? (uint64_t)cpl.cqe.dw1 << 32 : 0);
	return 0;
}

static int prop_set(struct nvmfd_host_ctrl *ctrl, uint32_t ofst, uint32_t val)
{
	struct nvmfd_prop_cmd cmd;
	struct nvmfd_sqe sqe;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVMFD_ADMIN_FABRICS;
	cmd.fctype = NVMFD_FCTYPE_PROP_SET;
	cmd.attrib = NVMFD_PROP_ATTRIB_SIZE_4;
	cmd.ofst = ofst;
	cmd.value = val;
	memcpy(&sqe, &cmd, sizeof(sqe));
	return admin_exec_locked(ctrl, &sqe, NULL, 0, false, NULL);
}

static int identify(struct nvmfd_host_ctrl *ctrl, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_IDENTIFY;
	sqe.nsid = nsid;
	sqe.cdw10 = cns;
	return admin_exec_locked(ctrl, &sqe, buf, NVMFD_IDENTIFY_DATA_SIZE, false, NULL);
}

static int get_log_locked(struct nvmfd_host_ctrl *ctrl, uint8_t lid, uint32_t nsid, uint64_t lpo,
			  void *buf, uint32_t len)
{
	struct nvmfd_sqe sqe;
	uint32_t numd;

	if (len == 0 || len % 4 || lpo % 4)
		return -EINVAL;
	numd = len / 4 - 1; /* 0's based */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_GET_LOG_PAGE;
	sqe.nsid = nsid;
	sqe.cdw10 = lid | ((numd & 0xffff) << 16);
	sqe.cdw11 = numd >> 16;
	sqe.cdw12 = (uint32_t)lpo;
	sqe.cdw13 = (uint32_t)(lpo >> 32);
	return admin_exec_locked(ctrl, &sqe, buf, len, false, NULL);
}

int nvmfd_host_get_log_page(struct nvmfd_host_ctrl *ctrl, uint8_t lid, uint32_t nsid,
			    uint64_t lpo, void *buf, uint32_t len)
{
	int ret;

	if (!ctrl || !buf)
		return -EINVAL;
	pthread_mutex_lock(&ctrl->admin_lock);
	ret = get_log_locked(ctrl, lid, nsid, lpo, buf, len);
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}

/* Copy a space-padded identify string, dropping trailing blanks. */
static void copy_trim(char *dst, size_t dlen, const char *src, size_t slen)
{
	size_t n = slen < dlen - 1 ? slen : dlen - 1;

	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n > 0 && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

static int ctrl_enable(struct nvmfd_host_ctrl *ctrl)
{
	uint64_t cap = 0, csts = 0, vs = 0, deadline;
	uint32_t cc, to_ms;
	int ret;

	ret = prop_get(ctrl, NVMFD_REG_CAP, true, &cap);
	if (ret < 0)
		return ret;
	ctrl->info.cap = cap;
	if (prop_get(ctrl, NVMFD_REG_VS, false, &vs) == 0)
		ctrl->info.vs = (uint32_t)vs;
	/* Base spec 2.0 §3.1.3.5: CSS NVM, MPS 4 KiB, AMS RR, IOSQES 2^6, IOCQES 2^4. */
	cc = NVMFD_CC_EN | (NVMFD_CC_CSS_NVM << 4) | (6u << 16) | (4u << 20);
	ret = prop_set(ctrl, NVMFD_REG_CC, cc);
	if (ret < 0)
		return ret;
	ctrl->enabled = true;
	/* CAP.TO is in 500 ms units; 0 would mean "no bound", use ours then. */
	to_ms = NVMFD_CAP_TO(cap) ? NVMFD_CAP_TO(cap) * 500u : ctrl->opts.timeout_ms;
	deadline = nvmfd__host_now_ns() + (uint64_t)to_ms * 1000000ull;
	for (;;) {
		ret = prop_get(ctrl, NVMFD_REG_CSTS, false, &csts);
		if (ret < 0)
			return ret;
		if (csts & NVMFD_CSTS_CFS) {
			ctrl_seterr(ctrl, "controller fatal status (CSTS 0x%llx) after CC.EN",
				    (unsigned long long)csts);
			return -EIO;
		}
		if (csts & NVMFD_CSTS_RDY) {
			ctrl->ready = true; /* keep-alive may send Keep Alive now */
			return 0;
		}
		if (nvmfd__host_now_ns() >= deadline) {
			ctrl_seterr(ctrl, "timed out: CSTS.RDY not set within CAP.TO %u ms", to_ms);
			return -ETIMEDOUT;
		}
		usleep(CSTS_POLL_MS * 1000);
	}
}

static int ctrl_identify_ns(struct nvmfd_host_ctrl *ctrl)
{
	uint32_t *list;
	uint32_t n = 0;
	int ret;

	list = calloc(1, NVMFD_IDENTIFY_DATA_SIZE);
	if (!list)
		return -ENOMEM;
	ret = identify(ctrl, NVMFD_ID_CNS_NS_ACTIVE_LIST, 0, list);
	if (ret < 0)
		goto out_free_list;
	while (n < NVMFD_ACTIVE_NS_LIST_MAX && list[n])
		n++;
	free(ctrl->ns);
	ctrl->nr_ns = 0;
	ctrl->ns = n ? calloc(n, sizeof(*ctrl->ns)) : NULL;
	if (n && !ctrl->ns) {
		ret = -ENOMEM;
		goto out_free_list;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct nvmfd_host_ns *ns = &ctrl->ns[ctrl->nr_ns];
		uint8_t fmt, ds;

		ret = identify(ctrl, NVMFD_ID_CNS_NS, list[i], &ns->id);
		if (ret < 0)
			goto out_free_list;
		fmt = ns->id.flbas & 0xf;
		ds = ns->id.lbaf[fmt].ds;
		/* Validate what the wire said: LBA sizes 512 B .. 64 KiB only. */
		if (ds < 9 || ds > 16) {
			ctrl_seterr(ctrl, "namespace %u reports unsupported LBA data size 2^%u",
				    list[i], ds);
			continue;
		}
		ns->nsid = list[i];
		ns->nsze = ns->id.nsze;
		ns->lba_size = 1u << ds;
		ctrl->nr_ns++;
	}
	ret = 0;
out_free_list:
	free(list);
	return ret;
}

static int ctrl_set_num_queues(struct nvmfd_host_ctrl *ctrl, uint32_t want, uint32_t *got)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;
	uint32_t nsqa, ncqa;
	int ret;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_SET_FEATURES;
	sqe.cdw10 = NVMFD_FEAT_NUM_QUEUES;
	sqe.cdw11 = (want - 1) | ((want - 1) << 16);
	ret = admin_exec_locked(ctrl, &sqe, NULL, 0, false, &cpl);
	if (ret < 0)
		return ret;
	nsqa = (cpl.cqe.result & 0xffff) + 1;
	ncqa = (cpl.cqe.result >> 16) + 1;
	*got = want;
	if (*got > nsqa)
		*got = nsqa;
	if (*got > ncqa)
		*got = ncqa;
	return 0;
}

/*
 * Keep-alive (NVMe base spec 2.0 §3.9): the target expires the controller
 * when no command reached it for KATO (nvmfd: KATO + 1 s). The timer runs
 * from the admin Connect on, so the thread starts right after it (and the
 * admin queue's authentication) and runs until disconnect, whatever the
 * bring-up, the I/O queue connects or the user's admin commands do.
 *
 * It sends one command every KATO/2, counted from the previous one's
 * *send*, and does not wait for the previous one's completion before the
 * next is due (up to KA_MAX_INFLIGHT outstanding): a slow round trip (the
 * target or this host short of CPU, seconds at 1000 controllers on two
 * CPUs) must not stretch the interval the target sees. Scheduling the next
 * one KATO/2 after the previous one's completion made that interval
 * KATO/2 + round trip + wake-up delay, and controllers that only sent Keep
 * Alives (their I/O done, waiting for their turn to disconnect) expired
 * (issue 14). The command is a Keep Alive once CSTS.RDY was seen; before
 * that a Property Get of CSTS, a Fabrics command a controller processes
 * while not enabled (a Keep Alive would be a Command Sequence Error, and
 * traffic-based targets, nvmfd and Linux nvmet, count any processed
 * command).
 *
 * Nothing the user's thread waits for blocks it: a synchronous admin
 * command (the bring-up's Property Get/Set, Identify, Set Features as
 * well) releases admin_lock while it waits (admin_poll_once_locked()).
 * When keep-alive could not send while a bring-up command was unanswered,
 * a controller whose bring-up round trip passed KATO + grace expired while
 * still connecting, though every connected one survived (issue 14, the
 * 1024 x 4 long run).
 *
 * The completions come back on the admin queue: whichever thread polls it
 * (this one while a Keep Alive is outstanding and nobody else polls, or
 * the user's admin command) runs ka_done().
 */
#define KA_MAX_INFLIGHT 4u

static uint32_t ka_max_inflight(const struct nvmfd_host_ctrl *ctrl)
{
	uint32_t depth = ctrl->admin ? ctrl->admin->depth : 1;

	/* leave the user's admin commands a slot */
	if (depth <= 1)
		return 1;
	return depth - 1 < KA_MAX_INFLIGHT ? depth - 1 : KA_MAX_INFLIGHT;
}

/* A Keep Alive completed (or was cancelled). Context: admin_lock held. */
static void ka_done(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct nvmfd_host_ctrl *ctrl = arg;

	ctrl->ka_inflight--;
	/* not ctrl->errmsg: it belongs to the user's thread; a failed admin
	 * qp shows up with its own message on the next admin call */
	if (cpl->err && cpl->err != -ECANCELED)
		NVMFD_WARN("host", "ctrl %u: keep-alive failed: %s", ctrl->info.cntlid,
			   strerror(-cpl->err));
	else if (!cpl->err && cpl->status)
		NVMFD_WARN("host", "ctrl %u: keep-alive failed: status 0x%x", ctrl->info.cntlid,
			   cpl->status);
}

/* Submit one keep-alive command unless KA_MAX_INFLIGHT are outstanding.
 * Return: true when one was sent. Context: ka thread, admin_lock held. */
static bool ka_send_locked(struct nvmfd_host_ctrl *ctrl)
{
	struct nvmfd_sqe sqe;

	if (!ctrl->admin || ctrl->admin->state != HOST_QP_LIVE ||
	    ctrl->ka_inflight >= ka_max_inflight(ctrl))
		return false;
	if (ctrl->ready) {
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_ADMIN_KEEP_ALIVE;
	} else {
		prop_get_sqe(&sqe, NVMFD_REG_CSTS, false);
	}
	if (nvmfd_host_qp_submit_raw(ctrl->admin, &sqe, NULL, 0, false, ka_done, ctrl) != 0)
		return false;
	ctrl->ka_inflight++;
	ctrl->ka_sent++;
	if (ctrl->admin_polling)
		admin_wake(ctrl);
	return true;
}

static void *ka_main(void *arg)
{
	struct nvmfd_host_ctrl *ctrl = arg;
	uint64_t period_ns = (uint64_t)ctrl->opts.kato_ms * 1000000ull / 2;
	uint64_t next = nvmfd__mono_ns() + period_ns;

	pthread_mutex_lock(&ctrl->admin_lock);
	while (!ctrl->ka_stop) {
		uint64_t now = nvmfd__mono_ns();

		if (now >= next) {
			/* the next one is due a period after this send, whatever
			 * the round trip; a send refused (all KA_MAX_INFLIGHT out,
			 * the queue failed) is retried an eighth of it later */
			next = now + (ka_send_locked(ctrl) ? period_ns : period_ns / 8);
			continue;
		}
		if (ctrl->ka_inflight && ctrl->admin && ctrl->admin->state == HOST_QP_LIVE) {
			/* reap (or sleep while another thread polls) */
			(void)admin_poll_once_locked(ctrl, ms_until(next));
		} else {
			struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ull),
					       .tv_nsec = (long)(next % 1000000000ull) };

			pthread_cond_timedwait(&ctrl->admin_cond, &ctrl->admin_lock, &ts);
		}
	}
	pthread_mutex_unlock(&ctrl->admin_lock);
	return NULL;
}

static void ka_stop(struct nvmfd_host_ctrl *ctrl)
{
	if (!ctrl->ka_running)
		return;
	pthread_mutex_lock(&ctrl->admin_lock);
	ctrl->ka_stop = true;
	pthread_cond_broadcast(&ctrl->admin_cond);
	admin_wake(ctrl); /* when it polls the admin socket */
	pthread_mutex_unlock(&ctrl->admin_lock);
	pthread_join(ctrl->ka_thread, NULL);
	ctrl->ka_running = false;
}

/* Context: admin_lock held (the thread starts by taking it). */
static int ka_start(struct nvmfd_host_ctrl *ctrl)
{
	int ret;

	ctrl->ka_stop = false;
	ret = pthread_create(&ctrl->ka_thread, NULL, ka_main, ctrl);
	if (ret)
		return -ret;
	ctrl->ka_running = true;
	return 0;
}

/*
 * The admin part of bringing up I/O queues (caller holds admin_lock):
 * Number of Queues and the queue size. *@got: queues to connect (0: none).
 */
static int ctrl_prepare_io(struct nvmfd_host_ctrl *ctrl, uint32_t *got_out, uint32_t *qsize_out)
{
	uint32_t want = ctrl->opts.nr_io_queues, got = 0, qsize;
	int ret;

	*got_out = 0;
	if (want == 0)
		return 0;
	if (want > 65534)
		want = 65534;
	ret = ctrl_set_num_queues(ctrl, want, &got);
	if (ret < 0)
		return ret;
	qsize = ctrl->opts.io_queue_size;
	if (qsize > (uint32_t)NVMFD_CAP_MQES(ctrl->info.cap) + 1)
		qsize = (uint32_t)NVMFD_CAP_MQES(ctrl->info.cap) + 1;
	if (ctrl->info.maxcmd && qsize > ctrl->info.maxcmd)
		qsize = ctrl->info.maxcmd;
	if (qsize < 2) {
		ctrl_seterr(ctrl, "controller allows only %u queue entries", qsize);
		return -EINVAL;
	}
	ctrl->info.io_queue_size = qsize;
	ctrl->qps = calloc(got, sizeof(*ctrl->qps));
	if (!ctrl->qps)
		return -ENOMEM;
	*got_out = got;
	*qsize_out = qsize;
	return 0;
}

/* I/O queue connects in flight at once (threads per controller connect). */
#define CONNECT_PARALLEL_MAX 16u

/* The I/O queue connects of one nvmfd_host_ctrl_connect(): queue indexes
 * are taken in order by up to CONNECT_PARALLEL_MAX threads. */
struct io_connect {
	struct nvmfd_host_ctrl *ctrl;
	uint32_t got;
	uint32_t qsize;
	uint8_t cattr;
	uint32_t next; /* atomic: next queue index to connect */
	int failed; /* atomic: a queue failed, start no more */
	int *rets; /* per queue: 0, -errno, or 1 (not tried) */
};

/* Allocate, connect and authenticate I/O queue @i + 1 into ctrl->qps[i]. */
static int connect_one(struct io_connect *c, uint32_t i)
{
	struct nvmfd_host_ctrl *ctrl = c->ctrl;
	struct nvmfd_host_qp *qp = NULL;
	struct nvmfd_host_cpl cpl;
	int ret;

	/* A queue of qsize entries holds qsize - 1 commands (one SQ slot
	 * always stays empty), as the Linux host's tag depth = sqsize. */
	ret = nvmfd__host_qp_alloc(ctrl, (uint16_t)(i + 1), c->qsize - 1, &qp);
	if (ret < 0)
		return ret;
	qp->icd_max = ctrl->info.in_capsule_max;
	ctrl->qps[i] = qp;
	ret = nvmfd__host_qp_connect(qp, &ctrl->trid, ctrl->info.cntlid, (uint16_t)(c->qsize - 1),
				     c->cattr, 0, &cpl);
	if (ret == 0)
		ret = nvmfd__host_qp_authenticate(ctrl, qp, ctrl->trid.subnqn, &cpl);
	return ret;
}

static void *connect_main(void *arg)
{
	struct io_connect *c = arg;
	uint32_t i;

	while (!__atomic_load_n(&c->failed, __ATOMIC_ACQUIRE) &&
	       (i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED)) < c->got) {
		c->rets[i] = connect_one(c, i);
		if (c->rets[i] < 0)
			__atomic_store_n(&c->failed, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Connect @got I/O queues of @qsize entries, each on its own connection,
 * up to CONNECT_PARALLEL_MAX at once (a slow target answers ICReq and
 * Connect of many queues in the time of one). Not under admin_lock: a
 * queue's ICResp/Connect may take up to the connect timeout, and the
 * keep-alive thread must reach the admin queue meanwhile (a KATO shorter
 * than a slow connect would expire). After a failure no new connect
 * starts; the error names the lowest-numbered queue that failed and why
 * (and how many others failed); the caller closes every queue.
 */
static int ctrl_connect_io(struct nvmfd_host_ctrl *ctrl, uint32_t got, uint32_t qsize)
{
	struct io_connect c = {
		.ctrl = ctrl,
		.got = got,
		.qsize = qsize,
		.cattr = ctrl->opts.disable_sqflow ? NVMFD_CONNECT_CATTR_DISABLE_SQFLOW : 0,
	};
	pthread_t th[CONNECT_PARALLEL_MAX];
	uint32_t nth = 0, nfail = 0, first = got;
	int ret = 0;

	c.rets = calloc(got, sizeof(*c.rets));
	if (!c.rets)
		return -ENOMEM;
	for (uint32_t i = 0; i < got; i++)
		c.rets[i] = 1;
	ctrl->nr_qps = got; /* NULL entries until connected; freeing skips them */
	/* the caller's thread is one of the connectors; a thread that cannot
	 * be started only means fewer connects at once */
	while (nth + 1 < got && nth + 1 < CONNECT_PARALLEL_MAX &&
	       pthread_create(&th[nth], NULL, connect_main, &c) == 0)
		nth++;
	connect_main(&c);
	for (uint32_t t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	for (uint32_t i = 0; i < got; i++) {
		if (c.rets[i] >= 0)
			continue;
		if (first == got)
			first = i;
		nfail++;
	}
	if (first < got) {
		char what[64];

		if (nfail > 1)
			snprintf(what, sizeof(what), "I/O queue %u (and %u more)", first + 1,
				 nfail - 1);
		else
			snprintf(what, sizeof(what), "I/O queue %u", first + 1);
		ret = ctrl_qp_err(ctrl, ctrl->qps[first], c.rets[first], what);
	} else {
		ctrl->info.nr_io_queues = ctrl->nr_qps;
	}
	free(c.rets);
	return ret;
}

static void ctrl_close_all(struct nvmfd_host_ctrl *ctrl)
{
	ka_stop(ctrl);
	for (uint32_t i = 0; i < ctrl->nr_qps; i++)
		nvmfd__host_qp_free(ctrl->qps[i]);
	free(ctrl->qps);
	ctrl->qps = NULL;
	ctrl->nr_qps = 0;
	nvmfd__host_qp_free(ctrl->admin);
	ctrl->admin = NULL;
	ctrl->connected = false;
	ctrl->enabled = false;
	ctrl->ready = false;
}

int nvmfd_host_ctrl_connect(struct nvmfd_host_ctrl *ctrl, const struct nvmfd_host_trid *trid)
{
	uint32_t io_got = 0, io_qsize = 0;
	struct nvmfd_host_cpl cpl;
	bool disc;
	int ret;

	if (!ctrl || !trid)
		return -EINVAL;
	if (ctrl->connected || ctrl->admin)
		return -EALREADY;
	ctrl->errmsg[0] = '\0';
	ctrl->info.dhchap_queues = 0;
	ctrl->info.dhchap_bidirectional = false;
	if (trid->trtype != NVMFD_TRTYPE_TCP || !trid->traddr[0] || !trid->trsvcid[0]) {
		ctrl_seterr(ctrl, "transport ID needs trtype TCP, traddr and trsvcid");
		return -EINVAL;
	}
	ctrl->trid = *trid;
	if (!ctrl->trid.subnqn[0])
		snprintf(ctrl->trid.subnqn, sizeof(ctrl->trid.subnqn), "%s", NVMFD_DISC_NQN);
	if (!ctrl->opts.hostnqn[0]) {
		if (trid->hostnqn[0])
			snprintf(ctrl->opts.hostnqn, sizeof(ctrl->opts.hostnqn), "%s",
				 trid->hostnqn);
		else
			nvmfd_host_default_hostnqn(ctrl->opts.hostnqn, sizeof(ctrl->opts.hostnqn));
	}
	disc = !strcmp(ctrl->trid.subnqn, NVMFD_DISC_NQN);

	ret = nvmfd__host_qp_alloc(ctrl, 0, ctrl->opts.admin_queue_size - 1, &ctrl->admin);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&ctrl->admin_lock);
	ret = nvmfd__host_qp_connect(ctrl->admin, &ctrl->trid, NVMFD_CNTLID_DYNAMIC,
				     (uint16_t)(ctrl->opts.admin_queue_size - 1), 0,
				     ctrl->opts.kato_ms, &cpl);
	if (ret == 0)
		ret = nvmfd__host_qp_authenticate(ctrl, ctrl->admin, ctrl->trid.subnqn, &cpl);
	if (ret < 0) {
		ctrl_qp_err(ctrl, ctrl->admin, ret, "admin queue");
		goto out_unlock;
	}
	ctrl->info.cntlid = (uint16_t)(cpl.cqe.result & 0xffff);
	ctrl->info.maxh2cdata = ctrl->admin->maxh2cdata;
	/* Keep-alive from here on, whatever follows: the target's timer runs
	 * from the Connect, and neither a bring-up command's round trip nor
	 * an I/O queue's connect may leave the controller silent for KATO. */
	if (ctrl->opts.kato_ms) {
		ret = ka_start(ctrl);
		if (ret < 0) {
			ctrl_seterr(ctrl, "cannot start keep-alive thread: %s", strerror(-ret));
			goto out_unlock;
		}
	}
	ret = ctrl_enable(ctrl);
	if (ret < 0)
		goto out_unlock;
	free(ctrl->id);
	ctrl->id = calloc(1, sizeof(*ctrl->id));
	if (!ctrl->id) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	ret = identify(ctrl, NVMFD_ID_CNS_CTRL, 0, ctrl->id);
	if (ret < 0)
		goto out_unlock;
	ctrl->info.cntrltype = ctrl->id->cntrltype;
	ctrl->info.mdts = ctrl->id->mdts;
	ctrl->info.ioccsz = ctrl->id->ioccsz;
	ctrl->info.maxcmd = ctrl->id->maxcmd;
	ctrl->info.nn = ctrl->id->nn;
	ctrl->info.oncs = ctrl->id->oncs;
	/* NVMe-oF 1.1 Figure 30: IOCCSZ counts the 64-byte SQE too. */
	{
		uint64_t icd = ctrl->id->ioccsz > 4 ? (uint64_t)ctrl->id->ioccsz * 16 - 64 : 0;

		if (icd > ctrl->opts.max_io_size)
			icd = ctrl->opts.max_io_size;
		ctrl->info.in_capsule_max = (uint32_t)icd;
	}
	copy_trim(ctrl->info.sn, sizeof(ctrl->info.sn), ctrl->id->sn, sizeof(ctrl->id->sn));
	copy_trim(ctrl->info.mn, sizeof(ctrl->info.mn), ctrl->id->mn, sizeof(ctrl->id->mn));
	copy_trim(ctrl->info.fr, sizeof(ctrl->info.fr), ctrl->id->fr, sizeof(ctrl->id->fr));
	copy_trim(ctrl->info.subnqn, sizeof(ctrl->info.subnqn), ctrl->id->subnqn,
		  sizeof(ctrl->id->subnqn));
	if (!disc && ctrl->id->cntrltype != NVMFD_CNTRLTYPE_DISC) {
		ret = ctrl_identify_ns(ctrl);
		if (ret < 0)
			goto out_unlock;
		ret = ctrl_prepare_io(ctrl, &io_got, &io_qsize);
		if (ret < 0)
			goto out_unlock;
	}
	pthread_mutex_unlock(&ctrl->admin_lock);
	if (io_got) {
		ret = ctrl_connect_io(ctrl, io_got, io_qsize);
		if (ret < 0)
			goto out_close;
	}
	ctrl->connected = true;
	return 0;

out_unlock:
	pthread_mutex_unlock(&ctrl->admin_lock);
out_close:
	ctrl_close_all(ctrl);
	return ret;
}

int nvmfd_host_ctrl_disconnect(struct nvmfd_host_ctrl *ctrl)
{
	uint64_t csts = 0, deadline;
	uint32_t cc;
	int ret = 0;

	if (!ctrl)
		return -EINVAL;
	if (!ctrl->connected && !ctrl->admin)
		return -ENOTCONN;
	ka_stop(ctrl);
	/* I/O queues first: the Linux host tears them down by closing sockets. */
	for (uint32_t i = 0; i < ctrl->nr_qps; i++)
		nvmfd__host_qp_free(ctrl->qps[i]);
	ctrl->nr_qps = 0;
	pthread_mutex_lock(&ctrl->admin_lock);
	if (ctrl->enabled && ctrl->admin && ctrl->admin->state == HOST_QP_LIVE) {
		/* Base spec 2.0 §3.6.1: CC.SHN normal, then wait for SHST complete. */
		cc = NVMFD_CC_EN | (NVMFD_CC_CSS_NVM << 4) | (6u << 16) | (4u << 20) |
		     (NVMFD_CC_SHN_NORMAL << 14);
		ret = prop_set(ctrl, NVMFD_REG_CC, cc);
		deadline = nvmfd__host_now_ns() + (uint64_t)ctrl->opts.timeout_ms * 1000000ull;
		while (ret == 0) {
			ret = prop_get(ctrl, NVMFD_REG_CSTS, false, &csts);
			if (ret < 0)
				break;
			if ((csts & NVMFD_CSTS_SHST_MASK) == NVMFD_CSTS_SHST_CMPLT)
				break;
			if (nvmfd__host_now_ns() >= deadline) {
				ctrl_seterr(ctrl, "timed out waiting for CSTS.SHST complete");
				ret = -ETIMEDOUT;
				break;
			}
			usleep(CSTS_POLL_MS * 1000);
		}
	}
	pthread_mutex_unlock(&ctrl->admin_lock);
	ctrl_close_all(ctrl);
	return ret;
}

void nvmfd_host_ctrl_destroy(struct nvmfd_host_ctrl **ctrlp)
{
	struct nvmfd_host_ctrl *ctrl;

	if (!ctrlp || !*ctrlp)
		return;
	ctrl = *ctrlp;
	if (ctrl->connected)
		nvmfd_host_ctrl_disconnect(ctrl);
	ctrl_close_all(ctrl);
	free(ctrl->id);
	free(ctrl->ns);
	nvmfd_auth_wipe(ctrl->opts.dhchap_secret, sizeof(ctrl->opts.dhchap_secret));
	nvmfd_auth_wipe(ctrl->opts.dhchap_ctrl_secret, sizeof(ctrl->opts.dhchap_ctrl_secret));
	nvmfd_auth_wipe(ctrl->opts.tls_psk, sizeof(ctrl->opts.tls_psk));
	nvmfd_tls_ctx_free(ctrl->tls_ctx);
	close(ctrl->admin_efd);
	pthread_cond_destroy(&ctrl->admin_cond);
	pthread_mutex_destroy(&ctrl->info_lock);
	pthread_mutex_destroy(&ctrl->admin_lock);
	free(ctrl);
	*ctrlp = NULL;
}

const struct nvmfd_host_ctrl_info *nvmfd_host_ctrl_get_info(const struct nvmfd_host_ctrl *ctrl)
{
	return &ctrl->info;
}

const struct nvmfd_id_ctrl *nvmfd_host_ctrl_identify_data(const struct nvmfd_host_ctrl *ctrl)
{
	return ctrl->id;
}

uint32_t nvmfd_host_ctrl_ns_count(const struct nvmfd_host_ctrl *ctrl)
{
	return ctrl->nr_ns;
}

const struct nvmfd_host_ns *nvmfd_host_ctrl_ns(const struct nvmfd_host_ctrl *ctrl, uint32_t idx)
{
	return idx < ctrl->nr_ns ? &ctrl->ns[idx] : NULL;
}

const struct nvmfd_host_ns *nvmfd_host_ctrl_find_ns(const struct nvmfd_host_ctrl *ctrl,
						    uint32_t nsid)
{
	for (uint32_t i = 0; i < ctrl->nr_ns; i++)
		if (ctrl->ns[i].nsid == nsid)
			return &ctrl->ns[i];
	return NULL;
}

uint32_t nvmfd_host_ctrl_qp_count(const struct nvmfd_host_ctrl *ctrl)
{
	return ctrl->nr_qps;
}

struct nvmfd_host_qp *nvmfd_host_ctrl_qp(struct nvmfd_host_ctrl *ctrl, uint32_t idx)
{
	return idx < ctrl->nr_qps ? ctrl->qps[idx] : NULL;
}

int nvmfd_host_discover(struct nvmfd_host_ctrl *ctrl, struct nvmfd_disc_log_hdr *hdr,
			struct nvmfd_disc_log_entry **entries)
{
	size_t chunk;
	int ret = -EIO;

	if (!ctrl || !hdr || !entries)
		return -EINVAL;
	*entries = NULL;
	/* One Get Log Page moves at most max_io_size and MDTS (2^MDTS pages of
	 * CAP.MPSMIN, 0 = no limit); larger logs are read in LPO steps. */
	chunk = ctrl->opts.max_io_size & ~(size_t)3;
	if (ctrl->info.mdts && ctrl->info.mdts < 20) {
		size_t mdts = ((size_t)1 << ctrl->info.mdts) *
			      ((size_t)4096 << NVMFD_CAP_MPSMIN(ctrl->info.cap));

		if (mdts < chunk)
			chunk = mdts;
	}
	pthread_mutex_lock(&ctrl->admin_lock);
	for (int attempt = 0; attempt < 3; attempt++) {
		struct nvmfd_disc_log_hdr *full;
		uint64_t numrec;
		size_t len;

		ret = get_log_locked(ctrl, NVMFD_LOG_DISC, 0, 0, hdr, sizeof(*hdr));
		if (ret < 0)
			goto out_unlock;
		numrec = hdr->numrec;
		if (numrec > DISC_MAX_RECORDS) {
			ctrl_seterr(ctrl, "discovery log claims %llu records",
				    (unsigned long long)numrec);
			ret = -EIO;
			goto out_unlock;
		}
		if (numrec == 0)
			goto out_unlock;
		len = sizeof(*hdr) + numrec * sizeof(struct nvmfd_disc_log_entry);
		full = calloc(1, len);
		if (!full) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		for (size_t off = 0; off < len; off += chunk) {
			size_t n = len - off < chunk ? len - off : chunk;

			ret = get_log_locked(ctrl, NVMFD_LOG_DISC, 0, off, (uint8_t *)full + off,
					     (uint32_t)n);
			if (ret < 0) {
				free(full);
				goto out_unlock;
			}
		}
		/* NVMe-oF 1.1 §5.3: a changed GENCTR means the log moved under us. */
		if (full->genctr != hdr->genctr || full->numrec != numrec) {
			free(full);
			ret = -EIO;
			continue;
		}
		*entries = calloc(numrec, sizeof(struct nvmfd_disc_log_entry));
		if (!*entries) {
			free(full);
			ret = -ENOMEM;
			goto out_unlock;
		}
		memcpy(*entries, full + 1, numrec * sizeof(struct nvmfd_disc_log_entry));
		*hdr = *full;
		free(full);
		ret = 0;
		goto out_unlock;
	}
	ctrl_seterr(ctrl, "discovery log generation kept changing");
out_unlock:
	pthread_mutex_unlock(&ctrl->admin_lock);
	return ret;
}
