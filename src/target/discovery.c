// SPDX-License-Identifier: MIT
/*
 * discovery.c - the discovery controller (NVMe-oF 1.1 §5; nvmet's
 * behaviour per doc/protocol-notes.md §2.6): Identify Controller, the Discovery
 * Log Page (70h), KATO/AEC features, AER and Keep Alive.
 *
 * The log lists, after entry 0 (the discovery subsystem itself, subtype 3),
 * one entry per (port, subsystem exported on that port) over all configured
 * ports that the connected host may access (ACL), then the referrals
 * configured for the port the host came in on.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "internal/log.h"
#include "target/core.h"

#define DISC_ASQSZ 32 /* admin queue size a host should use (nvmet) */

static nvmfd_status_t dnr(uint8_t sc)
{
	return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, sc);
}

static bool is_wildcard(const char *a)
{
	return !a[0] || !strcmp(a, "0.0.0.0") || !strcmp(a, "::") || !strcmp(a, "[::]");
}

/* An address of family @af on the interface that holds @have (of the other
 * family), else on any interface but loopback. Return: true if found. */
static bool addr_of_family(int af, const void *have, int have_af, char *out, size_t len)
{
	struct ifaddrs *ifa = NULL, *i;
	char ifname[IF_NAMESIZE] = "";
	bool found = false;

	if (getifaddrs(&ifa) < 0)
		return false;
	for (i = ifa; i; i = i->ifa_next) {
		const void *a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != have_af)
			continue;
		a = have_af == AF_INET ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr :
					 (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		if (!memcmp(a, have, have_af == AF_INET ? 4 : 16)) {
			snprintf(ifname, sizeof(ifname), "%s", i->ifa_name);
			break;
		}
	}
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (i = ifa; i && !found; i = i->ifa_next) {
			const void *a;

			if (!i->ifa_addr || i->ifa_addr->sa_family != af)
				continue;
			if (pass == 0 ? strcmp(i->ifa_name, ifname) != 0 : (i->ifa_flags & IFF_LOOPBACK))
				continue;
			a = af == AF_INET ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr :
					    (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
			if (af == AF_INET6 && IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)a))
				continue; /* would need a scope id */
			found = inet_ntop(af, a, out, (socklen_t)len) != NULL;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/*
 * The address a wildcard listener of family @adrfam reports to the host of
 * @local (the address it reached us on, maybe of the other family): that
 * address when the families agree; else its IPv4-mapped form or the
 * loopback of the wanted family, else an address of that family on the
 * same interface (any non-loopback one if none). Never an address of the
 * wrong family. Return: false if the machine has none of that family.
 */
static bool wildcard_traddr(const char *local, uint8_t adrfam, char *out, size_t len)
{
	bool want6 = adrfam == NVMFD_ADRFAM_IPV6;
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, local, &a4) == 1) {
		if (!want6) {
			snprintf(out, len, "%s", local);
			return true;
		}
		if ((ntohl(a4.s_addr) >> 24) == 127) {
			snprintf(out, len, "::1");
			return true;
		}
		if (addr_of_family(AF_INET6, &a4, AF_INET, out, len))
			return true;
		/* a Linux [::] listener is dual-stack (nvmfd clears IPV6_V6ONLY) */
		snprintf(out, len, "::ffff:%s", local);
		return true;
	}
	if (inet_pton(AF_INET6, local, &a6) != 1)
		return false;
	if (want6) {
		snprintf(out, len, "%s", local);
		return true;
	}
	if (IN6_IS_ADDR_V4MAPPED(&a6))
		return inet_ntop(AF_INET, &a6.s6_addr[12], out, (socklen_t)len) != NULL;
	if (IN6_IS_ADDR_LOOPBACK(&a6)) {
		snprintf(out, len, "127.0.0.1");
		return true;
	}
	return addr_of_family(AF_INET, &a6, AF_INET6, out, len);
}

/* @bound: the service id the port bound (0: report p->trsvcid). */
static void fill_entry(struct nvmfd_disc_log_entry *e, const struct nvmfd_tgt_qp *qp,
		       const struct nvmfd_cfg_port *p, uint16_t bound, uint8_t subtype,
		       const char *nqn)
{
	const char *traddr = p->traddr;
	char wild[80]; /* local_addr (64) with "::ffff:" */

	const struct nvmfd_tgt_xprt_type *x = nvmfd__tgt_xprt_find(NULL);

	memset(e, 0, sizeof(*e));
	e->adrfam = p->adrfam ? p->adrfam : NVMFD_ADRFAM_IPV4;
	e->subtype = subtype;
	/* trtype, treq and tsas are the port's transport's (xprt.h) */
	if (x)
		x->disc_entry(p, e);
	e->portid = p->portid;
	e->cntlid = NVMFD_CNTLID_DYNAMIC;
	e->asqsz = DISC_ASQSZ;
	/* nvmet disc_traddr: a wildcard listener reports the address the
	 * host reached us on - in the listener's own family */
	if (is_wildcard(traddr) && qp->local_addr[0] &&
	    wildcard_traddr(qp->local_addr, e->adrfam, wild, sizeof(wild)))
		traddr = wild;
	snprintf(e->trsvcid, sizeof(e->trsvcid), "%s", p->trsvcid);
	/* a listener configured with port 0 reports the port it bound */
	if (bound)
		snprintf(e->trsvcid, sizeof(e->trsvcid), "%u", bound);
	snprintf(e->subnqn, sizeof(e->subnqn), "%s", nqn);
	snprintf(e->traddr, sizeof(e->traddr), "%s", traddr);
}

/* Emit (or, with @w NULL, count) the entries the host of @qp may see:
 * the live config's ports and links (by index: the config is edited under
 * tgt->lock, which the caller holds), the ACL, and the referrals of the
 * port the host came in on. Context: tgt->lock held. */
static uint64_t disc_entries_locked(struct nvmfd_tgt_qp *qp, struct nvmfd_tgt_win *w)
{
	const struct nvmfd_cfg *cfg = qp->tgt->cfg;
	struct nvmfd_tgt *tgt = qp->tgt;
	const char *host = qp->ctrl->hostnqn;
	struct nvmfd_cfg_port none = { 0 };
	const struct nvmfd_cfg_port *self = qp->port ? qp->port : &none;
	struct nvmfd_disc_log_entry e;
	uint64_t n = 0;

	n++;
	if (w) {
		fill_entry(&e, qp, self, nvmfd__tgt_bound_locked(tgt, self->portid),
			   NVMFD_SUBTYPE_CUR_DISCOVERY, NVMFD_DISC_NQN);
		nvmfd__tgt_win_put(w, &e, sizeof(e));
	}
	for (unsigned int pi = 0; pi < cfg->nr_ports && pi < NVMFD_CFG_MAX_PORTS; pi++) {
		const struct nvmfd_cfg_port *p = &cfg->ports[pi];

		for (unsigned int k = 0; k < p->nr_subsys && k < NVMFD_CFG_MAX_SUBSYS; k++) {
			unsigned int ci = p->subsys_idx[k];
			struct nvmfd_tgt_subsys *s = NULL;

			if (ci >= cfg->nr_subsys)
				continue;
			for (unsigned int si = 0; !s && si < tgt->nr_subsys; si++)
				if (!strcmp(tgt->subsys[si]->nqn, cfg->subsys[ci].nqn))
					s = tgt->subsys[si];
			if (!s || !nvmfd__tgt_host_allowed_locked(s, host))
				continue;
			n++;
			if (w) {
				fill_entry(&e, qp, p, nvmfd__tgt_bound_locked(tgt, p->portid),
					   NVMFD_SUBTYPE_NVME, s->nqn);
				nvmfd__tgt_win_put(w, &e, sizeof(e));
			}
		}
	}
	for (unsigned int ri = 0; ri < cfg->nr_referrals && ri < NVMFD_CFG_MAX_REFERRALS; ri++) {
		const struct nvmfd_cfg_referral *r = &cfg->referrals[ri];
		struct nvmfd_cfg_port rp = { 0 };

		if (r->portid != self->portid)
			continue;
		n++;
		if (!w)
			continue;
		/* the entry carries the referred port's own ID (nvmet) */
		rp.portid = r->ref_portid;
		rp.adrfam = r->adrfam;
		snprintf(rp.traddr, sizeof(rp.traddr), "%s", r->traddr);
		snprintf(rp.trsvcid, sizeof(rp.trsvcid), "%s", r->trsvcid);
		fill_entry(&e, qp, &rp, 0, NVMFD_SUBTYPE_REFERRAL, NVMFD_DISC_NQN);
		nvmfd__tgt_win_put(w, &e, sizeof(e));
	}
	return n;
}

static nvmfd_status_t disc_get_log(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	uint64_t lpo = nvmfd_get_log_lpo(&req->sqe);
	struct nvmfd_tgt_win w = { .buf = req->data, .off = lpo, .len = req->data_len };
	struct nvmfd_disc_log_hdr hdr;
	uint64_t numrec;

	if (NVMFD_GET_LOG_LID(&req->sqe) != NVMFD_LOG_DISC)
		return dnr(NVMFD_SC_INVALID_FIELD);
	/* nvmet: the offset must be dword aligned */
	if (lpo & 3)
		return dnr(NVMFD_SC_INVALID_FIELD);
	/* one snapshot: the config may change between two lock holds */
	pthread_mutex_lock(&qp->tgt->lock);
	numrec = disc_entries_locked(qp, NULL);
	if (lpo >= sizeof(hdr) * (numrec + 1)) {
		pthread_mutex_unlock(&qp->tgt->lock);
		return dnr(NVMFD_SC_INVALID_FIELD);
	}
	memset(req->data, 0, req->data_len);
	memset(&hdr, 0, sizeof(hdr));
	hdr.genctr = qp->tgt->genctr;
	/* reading the log re-arms the change AEN unless RAE */
	if (!NVMFD_GET_LOG_RAE(&req->sqe))
		qp->ctrl->aen_masked &= ~NVMFD_AEN_CFG_DISC_CHANGE;
	hdr.numrec = numrec;
	hdr.recfmt = 0;
	nvmfd__tgt_win_put(&w, &hdr, sizeof(hdr));
	disc_entries_locked(qp, &w);
	pthread_mutex_unlock(&qp->tgt->lock);
	return NVMFD_SC_SUCCESS;
}

/**
 * nvmfd__tgt_disc_execute() - run a discovery controller admin command.
 * @req: the command, accepted by nvmfd__tgt_admin_init().
 * Context: admin queue owner.
 */
void nvmfd__tgt_disc_execute(struct nvmfd_tgt_req *req)
{
	nvmfd_status_t st;
	uint8_t fid = (uint8_t)(req->sqe.cdw10 & 0xff);

	switch (req->sqe.opc) {
	case NVMFD_ADMIN_IDENTIFY: {
		struct nvmfd_id_ctrl id;

		if ((req->sqe.cdw10 & 0xff) != NVMFD_ID_CNS_CTRL) {
			st = dnr(NVMFD_SC_INVALID_FIELD);
			break;
		}
		memset(&id, 0, sizeof(id));
		nvmfd__tgt_identify_ctrl_fill(req, &id);
		memcpy(req->data, &id, sizeof(id));
		st = NVMFD_SC_SUCCESS;
		break;
	}
	case NVMFD_ADMIN_GET_LOG_PAGE:
		st = disc_get_log(req);
		break;
	case NVMFD_ADMIN_SET_FEATURES:
	case NVMFD_ADMIN_GET_FEATURES:
		if (fid != NVMFD_FEAT_KATO && fid != NVMFD_FEAT_ASYNC_EVENT) {
			st = dnr(NVMFD_SC_INVALID_FIELD);
			break;
		}
		st = nvmfd__tgt_features_common(req, req->sqe.opc == NVMFD_ADMIN_SET_FEATURES);
		break;
	case NVMFD_ADMIN_ASYNC_EVENT:
		nvmfd__tgt_aer_execute(req);
		return;
	case NVMFD_ADMIN_KEEP_ALIVE:
		st = NVMFD_SC_SUCCESS; /* discovery KATO is never 0 */
		break;
	default:
		st = dnr(NVMFD_SC_INVALID_OPCODE);
		break;
	}
	nvmfd__tgt_req_complete(req, st);
}
