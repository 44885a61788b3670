// SPDX-License-Identifier: MIT
/*
 * admin.c - admin commands of an I/O controller: Identify, Get Log Page,
 * Set/Get Features, Asynchronous Event Request, Keep Alive, Abort
 * (NVMe Base 2.0 §5; nvmet's answers per doc/protocol-notes.md §2.4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal/log.h"
#include "target/core.h"

#define COMP "target"

#define ELPE (NVMFD_TGT_ERR_LOG_MAX - 1)
#define SMART_TEMP_K 293u /* the composite temperature reported: 20 C */
#define SUPPORTED_AEN NVMFD_AEN_CFG_NS_ATTR

static nvmfd_status_t dnr(uint8_t sc)
{
	return nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, sc);
}

/**
 * nvmfd__tgt_admin_init() - parse an admin command of an I/O or discovery
 * controller.
 * @req: the command (controller enabled and ready).
 * Return: SUCCESS with the transfer set, or the completion status
 *         (INVALID_OPCODE|DNR for unsupported opcodes; a discovery
 *         controller also refuses Abort, as nvmet's does).
 * Context: admin queue owner.
 */
nvmfd_status_t nvmfd__tgt_admin_init(struct nvmfd_tgt_req *req)
{
	if (req->sqe.opc == NVMFD_ADMIN_ABORT && req->qp->ctrl->subsys->is_disc)
		return dnr(NVMFD_SC_INVALID_OPCODE);
	switch (req->sqe.opc) {
	case NVMFD_ADMIN_IDENTIFY:
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_C2H, NVMFD_IDENTIFY_DATA_SIZE);
	case NVMFD_ADMIN_GET_LOG_PAGE:
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_C2H,
					   (uint64_t)nvmfd_get_log_numd(&req->sqe) * 4);
	case NVMFD_ADMIN_SET_FEATURES:
	case NVMFD_ADMIN_GET_FEATURES:
	case NVMFD_ADMIN_ASYNC_EVENT:
	case NVMFD_ADMIN_KEEP_ALIVE:
	case NVMFD_ADMIN_ABORT:
		return nvmfd__tgt_set_xfer(req, NVMFD_XFER_NONE, 0);
	default:
		return dnr(NVMFD_SC_INVALID_OPCODE);
	}
}

/* NN: at least NVMFD_TGT_NN, or the largest NSID (slots are not sorted:
 * namespaces are appended live). */
static uint32_t subsys_nn(const struct nvmfd_tgt_subsys *s)
{
	unsigned int n = __atomic_load_n(&s->nr_ns, __ATOMIC_ACQUIRE);
	uint32_t nn = NVMFD_TGT_NN;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = __atomic_load_n(&s->ns[i].nsid, __ATOMIC_RELAXED);

		if (id > nn)
			nn = id;
	}
	return nn;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Firmware revision: the subsystem's attr.firmware, else nvmfd's version. */
static const char *fw_rev(const struct nvmfd_tgt_subsys *s)
{
	return s->cfg && s->cfg->firmware[0] ? s->cfg->firmware : NVMFD_VERSION;
}

static void hex_serial(char *dst, size_t width, const char *nqn)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char tmp[24];

	for (const char *p = nqn; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	snprintf(tmp, sizeof(tmp), "%016llx", (unsigned long long)h);
	nvmfd__tgt_strpad(dst, width, tmp);
}

/**
 * nvmfd__tgt_identify_ctrl_fill() - Identify Controller data (CNS 01h) for
 * the controller of @req's queue; I/O and discovery controllers differ in
 * CNTRLTYPE, OAES, LPA, MDTS, CMIC, ACL, NN and VWC. VER is the
 * subsystem's version (1.4 by default; a discovery controller reports
 * 1.3, as its VS property does); Traffic Based Keep Alive, a 1.4 feature,
 * is advertised only when VER is 1.4 or later.
 * @req: Identify command.
 * @id:  zeroed output.
 * Context: admin queue owner.
 */
void nvmfd__tgt_identify_ctrl_fill(struct nvmfd_tgt_req *req, struct nvmfd_id_ctrl *id)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	struct nvmfd_tgt_ctrl *ctrl = qp->ctrl;
	struct nvmfd_tgt_subsys *s = ctrl->subsys;
	const struct nvmfd_cfg_subsys *cs = s->cfg;
	uint32_t inline_size = qp->port ? qp->port->inline_data_size : 0;
	uint32_t max_io = nvmfd__tgt_max_io_size(qp->tgt);

	if (cs && cs->serial[0])
		nvmfd__tgt_strpad(id->sn, sizeof(id->sn), cs->serial);
	else
		hex_serial(id->sn, sizeof(id->sn), s->nqn);
	nvmfd__tgt_strpad(id->mn, sizeof(id->mn), cs && cs->model[0] ? cs->model : "nvmfd");
	nvmfd__tgt_strpad(id->fr, sizeof(id->fr), fw_rev(s));
	if (cs) { /* IEEE OUI, least significant byte first */
		id->ieee[0] = (uint8_t)cs->ieee_oui;
		id->ieee[1] = (uint8_t)(cs->ieee_oui >> 8);
		id->ieee[2] = (uint8_t)(cs->ieee_oui >> 16);
	}
	id->rab = 6;
	id->cntlid = ctrl->cntlid;
	id->ver = cs && cs->version ? cs->version : NVMFD_VS_1_3;
	id->ctratt = NVMFD_CTRATT_HOST_ID_128;
	if (id->ver >= NVMFD_VS_1_4)
		id->ctratt |= NVMFD_CTRATT_TBKAS;
	id->acl = 3;
	id->aerl = NVMFD_TGT_AER_MAX - 1;
	id->frmw = 0x3; /* slot 1 read-only, one slot (see the Firmware Slot log) */
	id->elpe = ELPE;
	id->npss = 0;
	id->kas = 10; /* 100 ms units: 1 s granularity */
	id->sqes = 0x66;
	id->cqes = 0x44;
	id->maxcmd = (uint16_t)(ctrl->mqes + 1u);
	/*
	 * SGLs supported, with in-capsule data addressed by offset. No
	 * Keyed SGL Data Block bit: keys are an RDMA memory-region concept and
	 * NVMe/TCP uses Transport SGL Data Block descriptors (nvmet sets bit 2
	 * only for RDMA).
	 */
	id->sgls = NVMFD_SGLS_SUPPORTED | NVMFD_SGLS_OFFSET;
	snprintf(id->subnqn, sizeof(id->subnqn), "%s", s->nqn);
	/* NVMe-oF: IOCCSZ = (SQE + in-capsule data) / 16, same on the admin queue */
	id->ioccsz = (64u + inline_size) / 16u;
	id->iorcsz = 1;
	id->icdoff = 0;
	id->msdbd = 1;
	if (s->is_disc) {
		id->cntrltype = NVMFD_CNTRLTYPE_DISC;
		/* Abort is refused (Invalid Opcode): ACL is 0's based, so 0
		 * ("one") is the least it can say, and what nvmet reports */
		id->acl = 0;
		id->oaes = NVMFD_OAES_DISC_CHANGE;
		id->lpa = NVMFD_LPA_EXT_DATA;
		id->mdts = 0;
		return;
	}
	id->cntrltype = NVMFD_CNTRLTYPE_IO;
	/* bit 0: the subsystem may have several ports - always true, as
	 * nvmet says: any listener (--listen repeats) exports it, and ports
	 * may be added while hosts are connected; bit 1: several controllers
	 * (dynamic model) */
	id->cmic = (1u << 0) | (1u << 1);
	if (max_io >= 8192) {
		uint8_t m = 0;

		while ((4096ull << (m + 1)) <= max_io && m < 31)
			m++;
		id->mdts = m;
	} else {
		id->mdts = 1; /* never advertise "no limit" below one page pair */
	}
	id->oaes = NVMFD_OAES_NS_ATTR;
	id->lpa = NVMFD_LPA_CMD_EFFECTS | NVMFD_LPA_EXT_DATA;
	id->nn = subsys_nn(s);
	id->mnan = id->nn;
	id->oncs = NVMFD_ONCS_DSM | NVMFD_ONCS_WRITE_ZEROES;
	id->vwc = NVMFD_VWC_PRESENT;
	/* one power state with nvmet's placeholder numbers */
	id->psd[0].max_power = 0x9c4;
	id->psd[0].entry_lat = 0x10;
	id->psd[0].exit_lat = 0x4;
}

static void identify_ns_fill(const struct nvmfd_tgt_ns *ns, struct nvmfd_id_ns *id)
{
	/* cached at add: a removed namespace's backend may be closing */
	enum nvmfd_bk_type t = ns->bk_type;
	uint64_t nsze = __atomic_load_n(&ns->nsze, __ATOMIC_ACQUIRE); /* resize */

	id->nsze = nsze;
	id->ncap = nsze;
	id->nuse = nsze;
	id->nlbaf = 0;
	id->flbas = 0;
	id->lbaf[0].ds = (uint8_t)ns->lba_shift;
	id->nmic = NVMFD_NMIC_SHARED;
	if (t == NVMFD_BK_RAM || t == NVMFD_BK_NULL || t == NVMFD_BK_FILE)
		id->dlfeat = NVMFD_DLFEAT_READ_ZEROES;
	id->endgid = 0;
	if (ns->read_only)
		id->nsattr = 1; /* write protected: a shared read-only export */
	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
}

static nvmfd_status_t identify(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_subsys *s = req->qp->ctrl->subsys;
	uint8_t cns = (uint8_t)(req->sqe.cdw10 & 0xff);
	uint8_t csi = (uint8_t)(req->sqe.cdw11 >> 24);
	uint32_t nsid = req->sqe.nsid;
	uint8_t *buf = req->data;
	struct nvmfd_tgt_ns *ns;

	memset(buf, 0, NVMFD_IDENTIFY_DATA_SIZE);
	switch (cns) {
	case NVMFD_ID_CNS_NS: {
		struct nvmfd_id_ns id;

		if (nsid == 0 || nsid == 0xffffffff || nsid > subsys_nn(s))
			return dnr(NVMFD_SC_INVALID_NS);
		ns = nvmfd__tgt_ns_find(s, nsid);
		/* pinned: the slot cannot be closed and reused while read */
		if (!ns || !nvmfd__tgt_ns_get(ns, nsid))
			return NVMFD_SC_SUCCESS; /* inactive: all zeroes */
		memset(&id, 0, sizeof(id));
		identify_ns_fill(ns, &id);
		nvmfd__tgt_ns_put(ns);
		memcpy(buf, &id, sizeof(id));
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_ID_CNS_CTRL: {
		struct nvmfd_id_ctrl id;

		memset(&id, 0, sizeof(id));
		nvmfd__tgt_identify_ctrl_fill(req, &id);
		memcpy(buf, &id, sizeof(id));
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_ID_CNS_NS_ACTIVE_LIST: {
		unsigned int n = 0, nr = __atomic_load_n(&s->nr_ns, __ATOMIC_ACQUIRE);
		uint32_t ids[NVMFD_CFG_MAX_NS];

		if (nsid >= 0xfffffffe)
			return dnr(NVMFD_SC_INVALID_NS);
		/* increasing order; slots added live are not sorted */
		for (unsigned int i = 0; i < nr && n < NVMFD_CFG_MAX_NS; i++) {
			uint32_t id = __atomic_load_n(&s->ns[i].nsid, __ATOMIC_RELAXED);

			if (id <= nsid || !__atomic_load_n(&s->ns[i].enabled, __ATOMIC_ACQUIRE))
				continue;
			ids[n++] = id;
		}
		qsort(ids, n, sizeof(ids[0]), u32_cmp);
		for (unsigned int i = 0; i < n && i < NVMFD_ACTIVE_NS_LIST_MAX; i++)
			memcpy(buf + 4 * i, &ids[i], 4);
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_ID_CNS_NS_DESC_LIST: {
		struct nvmfd_ns_id_desc d = { 0 };
		size_t off = 0;
		uint8_t csi_nvm = NVMFD_CSI_NVM;

		ns = nvmfd__tgt_ns_find(s, nsid);
		if (!ns || !nvmfd__tgt_ns_get(ns, nsid))
			return dnr(NVMFD_SC_INVALID_NS);
		d.nidt = NVMFD_NIDT_UUID;
		d.nidl = NVMFD_NIDT_UUID_LEN;
		memcpy(buf + off, &d, sizeof(d));
		memcpy(buf + off + sizeof(d), ns->uuid, 16);
		off += sizeof(d) + 16;
		d.nidt = NVMFD_NIDT_NGUID;
		d.nidl = NVMFD_NIDT_NGUID_LEN;
		memcpy(buf + off, &d, sizeof(d));
		memcpy(buf + off + sizeof(d), ns->nguid, 16);
		nvmfd__tgt_ns_put(ns);
		off += sizeof(d) + 16;
		d.nidt = NVMFD_NIDT_CSI;
		d.nidl = NVMFD_NIDT_CSI_LEN;
		memcpy(buf + off, &d, sizeof(d));
		memcpy(buf + off + sizeof(d), &csi_nvm, 1);
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_ID_CNS_CS_NS:
		if (csi != NVMFD_CSI_NVM)
			return dnr(NVMFD_SC_INVALID_FIELD);
		if (!nvmfd__tgt_ns_find(s, nsid))
			return dnr(NVMFD_SC_INVALID_NS);
		return NVMFD_SC_SUCCESS; /* NVM command set specific: all zeroes */
	case NVMFD_ID_CNS_CS_CTRL:
		if (csi != NVMFD_CSI_NVM)
			return dnr(NVMFD_SC_INVALID_FIELD);
		return NVMFD_SC_SUCCESS; /* no NVM-specific controller limits */
	case NVMFD_ID_CNS_NS_CS_INDEP:
		if (!nvmfd__tgt_ns_find(s, nsid))
			return dnr(NVMFD_SC_INVALID_NS);
		/* Base 2.0 Figure 280: NMIC @1, NSTAT @14 (bit 0 ready) */
		buf[1] = NVMFD_NMIC_SHARED;
		buf[14] = 1;
		return NVMFD_SC_SUCCESS;
	default:
		return dnr(NVMFD_SC_INVALID_FIELD);
	}
}

/* Little-endian 128-bit counter from a 64-bit value. */
static void put_u128(uint8_t dst[16], uint64_t v)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, 8);
}

static nvmfd_status_t log_smart(struct nvmfd_tgt_req *req, struct nvmfd_tgt_win *w)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_smart_log sl;
	uint64_t r = 0, wr = 0, br = 0, bw = 0;

	for (unsigned int q = 0; q <= ctrl->qid_max; q++) {
		r += __atomic_load_n(&ctrl->qstats[q].reads, __ATOMIC_RELAXED);
		wr += __atomic_load_n(&ctrl->qstats[q].writes, __ATOMIC_RELAXED);
		br += __atomic_load_n(&ctrl->qstats[q].bytes_read, __ATOMIC_RELAXED);
		bw += __atomic_load_n(&ctrl->qstats[q].bytes_written, __ATOMIC_RELAXED);
	}
	memset(&sl, 0, sizeof(sl));
	sl.temperature[0] = (uint8_t)(SMART_TEMP_K & 0xff);
	sl.temperature[1] = (uint8_t)(SMART_TEMP_K >> 8);
	sl.avail_spare = 100;
	sl.spare_thresh = 10;
	/* Base 2.0 Figure 207: data units are thousands of 512-byte units,
	 * rounded up */
	put_u128(sl.data_units_read, (br / 512 + 999) / 1000);
	put_u128(sl.data_units_written, (bw / 512 + 999) / 1000);
	put_u128(sl.host_reads, r);
	put_u128(sl.host_writes, wr);
	pthread_mutex_lock(&ctrl->err_lock);
	put_u128(sl.num_err_log_entries, ctrl->err_count);
	pthread_mutex_unlock(&ctrl->err_lock);
	/* Critical Warning bit 1: the temperature crossed a threshold the
	 * host set with Temperature Threshold (04h) */
	pthread_mutex_lock(&req->qp->tgt->lock);
	if (SMART_TEMP_K >= ctrl->feat.tmpth_over ||
	    SMART_TEMP_K <= ctrl->feat.tmpth_under)
		sl.critical_warning |= 1u << 1;
	pthread_mutex_unlock(&req->qp->tgt->lock);
	nvmfd__tgt_win_put(w, &sl, sizeof(sl));
	return NVMFD_SC_SUCCESS;
}

static nvmfd_status_t log_changed_ns(struct nvmfd_tgt_req *req, struct nvmfd_tgt_win *w)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_tgt *tgt = req->qp->tgt;
	unsigned int n;

	pthread_mutex_lock(&tgt->lock);
	n = ctrl->nr_changed;
	nvmfd__tgt_win_put(w, ctrl->changed, (uint64_t)n * 4);
	nvmfd__tgt_win_put(w, NULL, (uint64_t)(NVMFD_CHANGED_NS_LIST_MAX - n) * 4);
	/* Base 2.0 §5.16: reading clears the log and re-arms the AEN unless
	 * Retain Asynchronous Event is set */
	if (!NVMFD_GET_LOG_RAE(&req->sqe)) {
		ctrl->nr_changed = 0;
		ctrl->aen_masked &= ~NVMFD_AEN_CFG_NS_ATTR;
	}
	pthread_mutex_unlock(&tgt->lock);
	return NVMFD_SC_SUCCESS;
}

static void log_effects(struct nvmfd_tgt_win *w)
{
	static const uint8_t admin_ops[] = {
		NVMFD_ADMIN_GET_LOG_PAGE, NVMFD_ADMIN_IDENTIFY,	    NVMFD_ADMIN_ABORT,
		NVMFD_ADMIN_SET_FEATURES, NVMFD_ADMIN_GET_FEATURES, NVMFD_ADMIN_ASYNC_EVENT,
		NVMFD_ADMIN_KEEP_ALIVE,
	};
	static const uint8_t io_ops[] = {
		NVMFD_CMD_FLUSH, NVMFD_CMD_WRITE, NVMFD_CMD_READ, NVMFD_CMD_WRITE_ZEROES,
		NVMFD_CMD_DSM,
	};
	uint32_t acs[256] = { 0 }, iocs[256] = { 0 };

	for (size_t i = 0; i < sizeof(admin_ops); i++)
		acs[admin_ops[i]] = 1u; /* CSUPP */
	for (size_t i = 0; i < sizeof(io_ops); i++) {
		iocs[io_ops[i]] = 1u;
		if (io_ops[i] != NVMFD_CMD_READ && io_ops[i] != NVMFD_CMD_FLUSH)
			iocs[io_ops[i]] |= 1u << 1; /* LBCC: logical block content change */
	}
	nvmfd__tgt_win_put(w, acs, sizeof(acs));
	nvmfd__tgt_win_put(w, iocs, sizeof(iocs));
	nvmfd__tgt_win_put(w, NULL, 4096 - sizeof(acs) - sizeof(iocs));
}

/* Newest entry first; unused entries are zero (error count 0). */
static void log_errors(struct nvmfd_tgt_req *req, struct nvmfd_tgt_win *w)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	uint64_t n;

	pthread_mutex_lock(&ctrl->err_lock);
	n = ctrl->err_count < NVMFD_TGT_ERR_LOG_MAX ? ctrl->err_count : NVMFD_TGT_ERR_LOG_MAX;
	for (uint64_t i = 0; i < n; i++)
		nvmfd__tgt_win_put(w, &ctrl->err_log[(ctrl->err_count - 1 - i) %
						     NVMFD_TGT_ERR_LOG_MAX],
				   sizeof(ctrl->err_log[0]));
	pthread_mutex_unlock(&ctrl->err_lock);
}

static nvmfd_status_t get_log_page(struct nvmfd_tgt_req *req)
{
	uint8_t lid = NVMFD_GET_LOG_LID(&req->sqe);
	uint64_t lpo = nvmfd_get_log_lpo(&req->sqe);
	struct nvmfd_tgt_win w = { .buf = req->data, .off = lpo, .len = req->data_len };
	uint64_t size;

	switch (lid) {
	case NVMFD_LOG_SUPPORTED:
		size = 1024;
		break;
	case NVMFD_LOG_ERROR:
		size = 64ull * (ELPE + 1);
		break;
	case NVMFD_LOG_SMART:
	case NVMFD_LOG_FW_SLOT:
		size = 512;
		break;
	case NVMFD_LOG_CHANGED_NS:
	case NVMFD_LOG_CMD_EFFECTS:
		size = 4096;
		break;
	default:
		return dnr(NVMFD_SC_INVALID_FIELD);
	}
	/* Base 2.0 §5.16: LPO is dword aligned and inside the page */
	if ((lpo & 3) || lpo >= size)
		return dnr(NVMFD_SC_INVALID_FIELD);
	memset(req->data, 0, req->data_len);
	switch (lid) {
	case NVMFD_LOG_SUPPORTED: {
		static const uint8_t lids[] = { NVMFD_LOG_SUPPORTED, NVMFD_LOG_ERROR,
						NVMFD_LOG_SMART,     NVMFD_LOG_FW_SLOT,
						NVMFD_LOG_CHANGED_NS, NVMFD_LOG_CMD_EFFECTS };
		uint32_t sup[256] = { 0 };

		for (size_t i = 0; i < sizeof(lids); i++)
			sup[lids[i]] = 1u; /* LSUPP */
		nvmfd__tgt_win_put(&w, sup, sizeof(sup));
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_LOG_ERROR:
		log_errors(req, &w);
		return NVMFD_SC_SUCCESS;
	case NVMFD_LOG_FW_SLOT: {
		/* Base 2.0 Figure 209: AFI bits 2:0 = active slot 1; FRS1 at
		 * byte 8 = the revision Identify Controller FR reports */
		uint8_t fw[16] = { 0x01 };

		nvmfd__tgt_strpad((char *)fw + 8, 8, fw_rev(req->qp->ctrl->subsys));
		nvmfd__tgt_win_put(&w, fw, sizeof(fw));
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_LOG_SMART:
		return log_smart(req, &w);
	case NVMFD_LOG_CHANGED_NS:
		return log_changed_ns(req, &w);
	default:
		log_effects(&w);
		return NVMFD_SC_SUCCESS;
	}
}

/* Any I/O queue connected to @ctrl (its queue table above qid 0). */
static bool io_queues_exist(struct nvmfd_tgt_ctrl *ctrl)
{
	bool any = false;

	pthread_mutex_lock(&ctrl->tgt->lock);
	for (unsigned int q = 1; q <= ctrl->qid_max && !any; q++)
		any = ctrl->sqs[q] != NULL;
	pthread_mutex_unlock(&ctrl->tgt->lock);
	return any;
}

/*
 * The four features every I/O controller must support (Base 2.0 Figure
 * 385) that nvmfd stores and reports but has nothing to apply to:
 * - Arbitration (01h): kept as set; CAP.AMS is round robin only, so the
 *   weights do not matter and the burst is not enforced.
 * - Power Management (02h): NPSS is 0, so PS must be 0 (else Invalid
 *   Field); the workload hint is kept.
 * - Temperature Threshold (04h): TMPSEL 0 (composite) or Fh (all) sets
 *   the composite sensor's over (THSEL 0) or under (THSEL 1) threshold,
 *   which the SMART log's critical warning bit 1 compares with the
 *   reported temperature; sensors 1-8 are not implemented (Set accepted,
 *   Get 0); reserved TMPSEL (9-Eh) or THSEL (2-3) is Invalid Field.
 * - Error Recovery (05h): TLER kept; DULBE is refused with Invalid Field
 *   because Identify Namespace does not set NSFEAT bit 2.
 * Same answers as SPDK's target; nvmet leaves these to the transport.
 */
static nvmfd_status_t mandatory_feature(struct nvmfd_tgt_req *req, uint8_t fid, bool set)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_tgt_ctrl_feat *f = &ctrl->feat;
	uint32_t v = req->sqe.cdw11;
	nvmfd_status_t st = NVMFD_SC_SUCCESS;

	pthread_mutex_lock(&ctrl->tgt->lock);
	switch (fid) {
	case NVMFD_FEAT_ARBITRATION:
		if (set)
			f->arbitration = v & 0xffffff07u;
		req->cqe.result = f->arbitration;
		break;
	case NVMFD_FEAT_POWER_MGMT:
		if (set && (v & 0x1f) > 0) { /* PS above NPSS */
			st = dnr(NVMFD_SC_INVALID_FIELD);
			break;
		}
		if (set)
			f->power_mgmt = v & 0xe0u;
		req->cqe.result = f->power_mgmt;
		break;
	case NVMFD_FEAT_TEMP_THRESH: {
		unsigned int tmpsel = (v >> 16) & 0xf, thsel = (v >> 20) & 0x3;
		uint16_t *th = thsel ? &f->tmpth_under : &f->tmpth_over;

		if ((tmpsel >= 9 && tmpsel != 0xf) || thsel > 1 || (!set && tmpsel == 0xf)) {
			st = dnr(NVMFD_SC_INVALID_FIELD);
			break;
		}
		if (tmpsel != 0 && tmpsel != 0xf) {
			req->cqe.result = 0; /* sensor not implemented */
			break;
		}
		if (set)
			*th = (uint16_t)v;
		req->cqe.result = *th;
		break;
	}
	default: /* NVMFD_FEAT_ERR_RECOVERY */
		if (set && (v & (1u << 16))) { /* DULBE */
			st = dnr(NVMFD_SC_INVALID_FIELD);
			break;
		}
		if (set)
			f->err_recovery = v & 0xffffu;
		req->cqe.result = f->err_recovery;
		break;
	}
	pthread_mutex_unlock(&ctrl->tgt->lock);
	return st;
}

/**
 * nvmfd__tgt_features_common() - Set/Get Features for I/O and discovery
 * controllers (discovery: KATO and AEC bit 31 only).
 * @req: the command.
 * @set: Set Features (else Get).
 * Return: the completion status; the feature value is in req->cqe.result.
 * Context: admin queue owner.
 */
nvmfd_status_t nvmfd__tgt_features_common(struct nvmfd_tgt_req *req, bool set)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_tgt *tgt = req->qp->tgt;
	bool disc = ctrl->subsys->is_disc;
	uint8_t fid = (uint8_t)(req->sqe.cdw10 & 0xff);
	uint32_t v = req->sqe.cdw11;

	/* SV (cdw10 bit 31): nothing is saveable */
	if (set && (req->sqe.cdw10 & (1u << 31)))
		return nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_FEATURE_NOT_SAVEABLE);
	switch (fid) {
	case NVMFD_FEAT_KATO:
		if (set)
			__atomic_store_n(&ctrl->kato_ms, v, __ATOMIC_RELAXED);
		req->cqe.result = __atomic_load_n(&ctrl->kato_ms, __ATOMIC_RELAXED);
		return NVMFD_SC_SUCCESS;
	case NVMFD_FEAT_ASYNC_EVENT: {
		uint32_t mask = disc ? NVMFD_AEN_CFG_DISC_CHANGE : SUPPORTED_AEN;

		pthread_mutex_lock(&tgt->lock);
		if (set)
			ctrl->aen_cfg = v & mask;
		req->cqe.result = ctrl->aen_cfg;
		pthread_mutex_unlock(&tgt->lock);
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_FEAT_NUM_QUEUES: {
		uint32_t nsqr = v & 0xffff, ncqr = v >> 16, n;

		if (disc)
			break;
		if (set) {
			/* 0xFFFF (65536 queues) is invalid (Base 2.0 §5.27.1.5) */
			if (nsqr == 0xffff || ncqr == 0xffff)
				return dnr(NVMFD_SC_INVALID_FIELD);
			/* "only valid before any I/O queue is created": after
			 * that, Command Sequence Error (Base 2.0 §5.27.1.5) */
			if (io_queues_exist(ctrl))
				return dnr(NVMFD_SC_CMD_SEQ_ERROR);
			n = (nsqr < ncqr ? nsqr : ncqr) + 1;
			if (n > ctrl->qid_max)
				n = ctrl->qid_max;
			__atomic_store_n(&ctrl->nr_io_queues, (uint16_t)n, __ATOMIC_RELAXED);
		}
		n = __atomic_load_n(&ctrl->nr_io_queues, __ATOMIC_RELAXED);
		if (n == 0)
			n = 1;
		req->cqe.result = (n - 1) | ((n - 1) << 16);
		return NVMFD_SC_SUCCESS;
	}
	case NVMFD_FEAT_VOLATILE_WC:
		if (disc || set)
			break;
		req->cqe.result = 1; /* WCE: enabled, not changeable */
		return NVMFD_SC_SUCCESS;
	case NVMFD_FEAT_ARBITRATION:
	case NVMFD_FEAT_POWER_MGMT:
	case NVMFD_FEAT_TEMP_THRESH:
	case NVMFD_FEAT_ERR_RECOVERY:
		if (disc)
			break;
		return mandatory_feature(req, fid, set);
	default:
		break;
	}
	return dnr(NVMFD_SC_INVALID_FIELD);
}

/**
 * nvmfd__tgt_aer_execute() - hold an Asynchronous Event Request (at most
 * NVMFD_TGT_AER_MAX; the next gets ASYNC_LIMIT|DNR), or complete it at once
 * with a pending event.
 * @req: the AER.
 * Context: admin queue owner; takes tgt->lock.
 */
void nvmfd__tgt_aer_execute(struct nvmfd_tgt_req *req)
{
	struct nvmfd_tgt_ctrl *ctrl = req->qp->ctrl;
	struct nvmfd_tgt *tgt = req->qp->tgt;
	uint32_t evt;

	pthread_mutex_lock(&tgt->lock);
	if (ctrl->nr_evt) {
		evt = ctrl->evt[0];
		memmove(&ctrl->evt[0], &ctrl->evt[1], (ctrl->nr_evt - 1) * sizeof(ctrl->evt[0]));
		ctrl->nr_evt--;
		pthread_mutex_unlock(&tgt->lock);
		req->cqe.result = evt;
		nvmfd__tgt_req_complete(req, NVMFD_SC_SUCCESS);
		return;
	}
	if (ctrl->nr_aer >= NVMFD_TGT_AER_MAX) {
		pthread_mutex_unlock(&tgt->lock);
		nvmfd__tgt_req_complete(req, nvmfd__tgt_dnr(NVMFD_SCT_CMD_SPECIFIC,
							    NVMFD_SC_ASYNC_LIMIT));
		return;
	}
	ctrl->aer[ctrl->nr_aer++] = req;
	pthread_mutex_unlock(&tgt->lock);
}

/**
 * nvmfd__tgt_admin_execute() - run an admin command of an I/O controller.
 * @req: the command, accepted by nvmfd__tgt_admin_init().
 * Context: admin queue owner.
 */
void nvmfd__tgt_admin_execute(struct nvmfd_tgt_req *req)
{
	nvmfd_status_t st;

	switch (req->sqe.opc) {
	case NVMFD_ADMIN_IDENTIFY:
		st = identify(req);
		break;
	case NVMFD_ADMIN_GET_LOG_PAGE:
		st = get_log_page(req);
		break;
	case NVMFD_ADMIN_SET_FEATURES:
		st = nvmfd__tgt_features_common(req, true);
		break;
	case NVMFD_ADMIN_GET_FEATURES:
		st = nvmfd__tgt_features_common(req, false);
		break;
	case NVMFD_ADMIN_ASYNC_EVENT:
		nvmfd__tgt_aer_execute(req);
		return;
	case NVMFD_ADMIN_KEEP_ALIVE:
		/* the timer was refreshed when the command arrived */
		st = __atomic_load_n(&req->qp->ctrl->kato_ms, __ATOMIC_RELAXED) ?
			     NVMFD_SC_SUCCESS :
			     NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_KA_TIMEOUT_INVALID);
		break;
	case NVMFD_ADMIN_ABORT:
		req->cqe.result = 1; /* command not aborted */
		st = NVMFD_SC_SUCCESS;
		break;
	default:
		st = dnr(NVMFD_SC_INVALID_OPCODE);
		break;
	}
	nvmfd__tgt_req_complete(req, st);
}
