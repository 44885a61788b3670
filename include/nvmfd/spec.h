/* SPDX-License-Identifier: MIT */
/*
 * spec.h - NVMe, NVMe over Fabrics and NVMe/TCP wire structures.
 *
 * Every structure here has the exact on-the-wire size and field offsets of
 * the NVM Express Base Specification 2.0 (SQE/CQE, Identify, log pages,
 * properties), the NVMe over Fabrics Specification 1.1 (Fabrics commands,
 * Connect data, discovery log) and the NVMe/TCP Transport Specification 1.0
 * (PDU headers). Sizes and offsets are pinned with _Static_assert.
 *
 * Byte order: all multi-byte wire fields are little-endian. nvmfd targets
 * little-endian hosts only (asserted below), so fields are read and written
 * directly once the bytes have been memcpy'd into a structure; never cast an
 * unchecked socket buffer to one of these types.
 *
 * Naming follows the specifications' field names (sqhd, cntlid, hlen, pdo,
 * plen, cccid, ttag, r2to, r2tl, ...).
 */
#ifndef NVMFD_SPEC_H
#define NVMFD_SPEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "nvmfd supports little-endian hosts only"
#endif

#define NVMFD_PACKED __attribute__((packed))
#define NVMFD_ASSERT_SIZE(t, n) _Static_assert(sizeof(t) == (n), #t " must be " #n " bytes")
#define NVMFD_ASSERT_OFF(t, f, n) \
	_Static_assert(offsetof(t, f) == (n), #t "." #f " must be at offset " #n)

/* ------------------------------------------------------------------ */
/* NVMe status (Base spec 2.0 §4.6.1.2)                                */
/* ------------------------------------------------------------------ */

/*
 * nvmfd_status_t - a completion status without the phase tag, as the
 * Linux drivers encode it: bits 7:0 SC, 10:8 SCT, 12:11 CRD, 13 MORE,
 * 14 DNR. The CQE's status field holds (status << 1) | phase.
 */
typedef uint16_t nvmfd_status_t;

#define NVMFD_SCT_GENERIC 0x0
#define NVMFD_SCT_CMD_SPECIFIC 0x1
#define NVMFD_SCT_MEDIA 0x2
#define NVMFD_SCT_PATH 0x3

#define NVMFD_STATUS(sct, sc) ((nvmfd_status_t)((((sct) & 0x7) << 8) | ((sc) & 0xff)))
#define NVMFD_STATUS_SC(s) ((uint8_t)((s) & 0xff))
#define NVMFD_STATUS_SCT(s) ((uint8_t)(((s) >> 8) & 0x7))
#define NVMFD_STATUS_CRD(s) ((uint8_t)(((s) >> 11) & 0x3))
#define NVMFD_STATUS_MORE 0x2000
#define NVMFD_STATUS_DNR 0x4000

/* Generic command status (SCT 0). */
#define NVMFD_SC_SUCCESS 0x00
#define NVMFD_SC_INVALID_OPCODE 0x01
#define NVMFD_SC_INVALID_FIELD 0x02
#define NVMFD_SC_CMDID_CONFLICT 0x03
#define NVMFD_SC_DATA_XFER_ERROR 0x04
#define NVMFD_SC_POWER_LOSS 0x05
#define NVMFD_SC_INTERNAL 0x06
#define NVMFD_SC_ABORT_REQ 0x07
#define NVMFD_SC_ABORT_SQ_DELETED 0x08
#define NVMFD_SC_INVALID_NS 0x0b
#define NVMFD_SC_CMD_SEQ_ERROR 0x0c
#define NVMFD_SC_SGL_INVALID_LAST 0x0d
#define NVMFD_SC_SGL_INVALID_COUNT 0x0e
#define NVMFD_SC_SGL_INVALID_DATA 0x0f
#define NVMFD_SC_SGL_INVALID_METADATA 0x10
#define NVMFD_SC_SGL_INVALID_TYPE 0x11
#define NVMFD_SC_SGL_INVALID_OFFSET 0x16
#define NVMFD_SC_HOST_ID_INCONSIST 0x18
#define NVMFD_SC_KA_TIMEOUT_EXPIRED 0x19
#define NVMFD_SC_KA_TIMEOUT_INVALID 0x1a
#define NVMFD_SC_TRANSIENT_TR_ERROR 0x22
#define NVMFD_SC_LBA_RANGE 0x80
#define NVMFD_SC_CAP_EXCEEDED 0x81
#define NVMFD_SC_NS_NOT_READY 0x82

/* Command specific status (SCT 1). */
#define NVMFD_SC_INVALID_QID 0x01
#define NVMFD_SC_INVALID_QSIZE 0x02
#define NVMFD_SC_ABORT_LIMIT 0x03
#define NVMFD_SC_ASYNC_LIMIT 0x05
#define NVMFD_SC_INVALID_LOG_PAGE 0x09
#define NVMFD_SC_FEATURE_NOT_SAVEABLE 0x0d
#define NVMFD_SC_FEATURE_NOT_CHANGEABLE 0x0e
/* Fabrics command specific status (NVMe-oF 1.1 §2.2). */
#define NVMFD_SC_CONNECT_FORMAT 0x80
#define NVMFD_SC_CONNECT_CTRL_BUSY 0x81
#define NVMFD_SC_CONNECT_INVALID_PARAM 0x82
#define NVMFD_SC_CONNECT_RESTART_DISC 0x83
#define NVMFD_SC_CONNECT_INVALID_HOST 0x84

/* Media and data integrity errors (SCT 2). */
#define NVMFD_SC_WRITE_FAULT 0x80
#define NVMFD_SC_READ_ERROR 0x81
#define NVMFD_SC_COMPARE_FAILED 0x85
#define NVMFD_SC_ACCESS_DENIED 0x86

/* ------------------------------------------------------------------ */
/* Opcodes                                                             */
/* ------------------------------------------------------------------ */

/* Admin (Base spec 2.0 Figure 28). */
#define NVMFD_ADMIN_GET_LOG_PAGE 0x02
#define NVMFD_ADMIN_IDENTIFY 0x06
#define NVMFD_ADMIN_ABORT 0x08
#define NVMFD_ADMIN_SET_FEATURES 0x09
#define NVMFD_ADMIN_GET_FEATURES 0x0a
#define NVMFD_ADMIN_ASYNC_EVENT 0x0c
#define NVMFD_ADMIN_KEEP_ALIVE 0x18
#define NVMFD_ADMIN_FABRICS 0x7f

/* NVM command set I/O (NVM Command Set spec 1.0 Figure 18). */
#define NVMFD_CMD_FLUSH 0x00
#define NVMFD_CMD_WRITE 0x01
#define NVMFD_CMD_READ 0x02
#define NVMFD_CMD_WRITE_ZEROES 0x08
#define NVMFD_CMD_DSM 0x09
#define NVMFD_CMD_FABRICS 0x7f

/* Fabrics command types (NVMe-oF 1.1 Figure 19). */
#define NVMFD_FCTYPE_PROP_SET 0x00
#define NVMFD_FCTYPE_CONNECT 0x01
#define NVMFD_FCTYPE_PROP_GET 0x04
#define NVMFD_FCTYPE_AUTH_SEND 0x05
#define NVMFD_FCTYPE_AUTH_RECV 0x06
#define NVMFD_FCTYPE_DISCONNECT 0x08

/* Identify CNS values. */
#define NVMFD_ID_CNS_NS 0x00
#define NVMFD_ID_CNS_CTRL 0x01
#define NVMFD_ID_CNS_NS_ACTIVE_LIST 0x02
#define NVMFD_ID_CNS_NS_DESC_LIST 0x03
#define NVMFD_ID_CNS_CS_NS 0x05
#define NVMFD_ID_CNS_CS_CTRL 0x06
#define NVMFD_ID_CNS_NS_CS_INDEP 0x08

/* Log page identifiers. */
#define NVMFD_LOG_SUPPORTED 0x00
#define NVMFD_LOG_ERROR 0x01
#define NVMFD_LOG_SMART 0x02
#define NVMFD_LOG_FW_SLOT 0x03
#define NVMFD_LOG_CHANGED_NS 0x04
#define NVMFD_LOG_CMD_EFFECTS 0x05
#define NVMFD_LOG_DISC 0x70

/* Feature identifiers. */
#define NVMFD_FEAT_ARBITRATION 0x01
#define NVMFD_FEAT_POWER_MGMT 0x02
#define NVMFD_FEAT_TEMP_THRESH 0x04
#define NVMFD_FEAT_ERR_RECOVERY 0x05
#define NVMFD_FEAT_VOLATILE_WC 0x06
#define NVMFD_FEAT_NUM_QUEUES 0x07
#define NVMFD_FEAT_ASYNC_EVENT 0x0b
#define NVMFD_FEAT_KATO 0x0f
#define NVMFD_FEAT_HOST_ID 0x81

/* Asynchronous event types and information (Base spec 2.0 Figure 146-150). */
#define NVMFD_AER_TYPE_NOTICE 0x2
#define NVMFD_AER_NOTICE_NS_CHANGED 0x00
#define NVMFD_AER_NOTICE_DISC_CHANGED 0xf0
/* Async Event Configuration bits. */
#define NVMFD_AEN_CFG_NS_ATTR (1u << 8)
#define NVMFD_AEN_CFG_DISC_CHANGE (1u << 31)

/* Dataset Management attributes (cdw11). */
#define NVMFD_DSM_IDR (1u << 0)
#define NVMFD_DSM_IDW (1u << 1)
#define NVMFD_DSM_AD (1u << 2)

/* Read/Write cdw12 flags. */
#define NVMFD_RW_FUA (1u << 30)
#define NVMFD_RW_LR (1u << 31)

/* Connect CATTR bits (NVMe-oF 1.1 Figure 20 / TP 8005). */
#define NVMFD_CONNECT_CATTR_PRIORITY_CLASS_MASK 0x3
#define NVMFD_CONNECT_CATTR_DISABLE_SQFLOW (1u << 2)

/* ------------------------------------------------------------------ */
/* SGL descriptors (Base spec 2.0 §4.3.2, NVMe/TCP 1.0 §3.3.5)         */
/* ------------------------------------------------------------------ */

#define NVMFD_SGL_TYPE_DATA_BLOCK 0x0
#define NVMFD_SGL_TYPE_TRANSPORT_DATA_BLOCK 0x5
#define NVMFD_SGL_SUBTYPE_ADDRESS 0x0
#define NVMFD_SGL_SUBTYPE_OFFSET 0x1
#define NVMFD_SGL_SUBTYPE_TRANSPORT 0xa
#define NVMFD_SGL_ID(type, subtype) ((uint8_t)(((type) << 4) | (subtype)))
/* In-capsule data: Data Block, Offset subtype. */
#define NVMFD_SGL_ID_INCAPSULE NVMFD_SGL_ID(NVMFD_SGL_TYPE_DATA_BLOCK, NVMFD_SGL_SUBTYPE_OFFSET)
/* Data moved by C2HData / R2T+H2CData: Transport Data Block, transport-specific. */
#define NVMFD_SGL_ID_TRANSPORT \
	NVMFD_SGL_ID(NVMFD_SGL_TYPE_TRANSPORT_DATA_BLOCK, NVMFD_SGL_SUBTYPE_TRANSPORT)

/* SQE flags: PSDT (bits 7:6). */
#define NVMFD_SQE_FLAGS_FUSE_MASK 0x03
#define NVMFD_SQE_FLAGS_PSDT_MASK 0xc0
#define NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_CONTIG 0x40 /* SGL for data, MPTR one buffer */
#define NVMFD_SQE_FLAGS_PSDT_SGL_MPTR_SGL 0x80

struct nvmfd_sgl_desc {
	uint64_t addr; /* offset for in-capsule data, 0 for transport data */
	uint32_t length; /* bytes */
	uint8_t rsvd[3];
	uint8_t type; /* SGL identifier: type << 4 | subtype */
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_sgl_desc, 16);
NVMFD_ASSERT_OFF(struct nvmfd_sgl_desc, type, 15);

/* ------------------------------------------------------------------ */
/* Submission and completion queue entries                             */
/* ------------------------------------------------------------------ */

/* Generic 64-byte SQE (Base spec 2.0 Figure 88). */
struct nvmfd_sqe {
	uint8_t opc;
	uint8_t flags; /* FUSE bits 1:0, PSDT bits 7:6 */
	uint16_t cid;
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	struct nvmfd_sgl_desc dptr;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_sqe, 64);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, cid, 2);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, nsid, 4);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, mptr, 16);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, dptr, 24);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, cdw10, 40);
NVMFD_ASSERT_OFF(struct nvmfd_sqe, cdw15, 60);

/* 16-byte CQE (Base spec 2.0 Figure 89-91). */
struct nvmfd_cqe {
	uint32_t result; /* DW0, command specific */
	uint32_t dw1;
	uint16_t sqhd;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status; /* (nvmfd_status_t << 1) | phase tag */
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_cqe, 16);
NVMFD_ASSERT_OFF(struct nvmfd_cqe, sqhd, 8);
NVMFD_ASSERT_OFF(struct nvmfd_cqe, cid, 12);
NVMFD_ASSERT_OFF(struct nvmfd_cqe, status, 14);

static inline nvmfd_status_t nvmfd_cqe_status(const struct nvmfd_cqe *cqe)
{
	return (nvmfd_status_t)(cqe->status >> 1);
}

/* Read / Write / Write Zeroes command dwords (NVM Command Set 1.0 §3.2). */
static inline uint64_t nvmfd_sqe_slba(const struct nvmfd_sqe *sqe)
{
	return ((uint64_t)sqe->cdw11 << 32) | sqe->cdw10;
}

/* NLB is 0's based: the number of logical blocks is nlb + 1. */
static inline uint32_t nvmfd_sqe_nlb(const struct nvmfd_sqe *sqe)
{
	return (sqe->cdw12 & 0xffff) + 1;
}

/* Dataset Management range (NVM Command Set 1.0 Figure 39). */
struct nvmfd_dsm_range {
	uint32_t cattr;
	uint32_t nlb; /* number of logical blocks, not 0's based */
	uint64_t slba;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_dsm_range, 16);

/* ------------------------------------------------------------------ */
/* Fabrics commands (NVMe-oF 1.1 §3)                                   */
/* ------------------------------------------------------------------ */

/* Common layout of every Fabrics command SQE (opcode 0x7f). */
struct nvmfd_fabrics_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd2[19];
	struct nvmfd_sgl_desc dptr;
	uint8_t ts[24];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_fabrics_cmd, 64);
NVMFD_ASSERT_OFF(struct nvmfd_fabrics_cmd, fctype, 4);

/* Connect command (NVMe-oF 1.1 Figure 20). */
struct nvmfd_connect_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd2[19];
	struct nvmfd_sgl_desc dptr;
	uint16_t recfmt;
	uint16_t qid;
	uint16_t sqsize; /* 0's based */
	uint8_t cattr;
	uint8_t rsvd3;
	uint32_t kato; /* milliseconds */
	uint8_t rsvd4[12];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_connect_cmd, 64);
NVMFD_ASSERT_OFF(struct nvmfd_connect_cmd, recfmt, 40);
NVMFD_ASSERT_OFF(struct nvmfd_connect_cmd, qid, 42);
NVMFD_ASSERT_OFF(struct nvmfd_connect_cmd, sqsize, 44);
NVMFD_ASSERT_OFF(struct nvmfd_connect_cmd, cattr, 46);
NVMFD_ASSERT_OFF(struct nvmfd_connect_cmd, kato, 48);

#define NVMFD_NQN_SIZE 256
#define NVMFD_DISC_NQN "nqn.2014-08.org.nvmexpress.discovery"

/* Connect command data, 1024 bytes (NVMe-oF 1.1 Figure 21). */
struct nvmfd_connect_data {
	uint8_t hostid[16];
	uint16_t cntlid; /* 0xffff: dynamic controller model */
	uint8_t rsvd1[238];
	char subnqn[NVMFD_NQN_SIZE];
	char hostnqn[NVMFD_NQN_SIZE];
	uint8_t rsvd2[256];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_connect_data, 1024);
NVMFD_ASSERT_OFF(struct nvmfd_connect_data, cntlid, 16);
NVMFD_ASSERT_OFF(struct nvmfd_connect_data, subnqn, 256);
NVMFD_ASSERT_OFF(struct nvmfd_connect_data, hostnqn, 512);

/* Connect response DW0 on success: cntlid in bits 15:0. On CONNECT_INVALID_PARAM
 * or CONNECT_INVALID_HOST, DW0 carries IPO (bits 15:0, byte offset of the bad
 * field) and IATTR (bits 23:16; bit 16 set = the field is in the connect data,
 * clear = in the SQE), as the Linux target encodes it. */
#define NVMFD_CONNECT_RSP_IATTR_DATA 1u

/* Property Set / Get (NVMe-oF 1.1 Figures 24, 26). */
struct nvmfd_prop_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd2[35];
	uint8_t attrib; /* bits 2:0 size: 0 = 4 bytes, 1 = 8 bytes */
	uint8_t rsvd3[3];
	uint32_t ofst;
	uint64_t value; /* Property Set only */
	uint8_t rsvd4[8];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_prop_cmd, 64);
NVMFD_ASSERT_OFF(struct nvmfd_prop_cmd, attrib, 40);
NVMFD_ASSERT_OFF(struct nvmfd_prop_cmd, ofst, 44);
NVMFD_ASSERT_OFF(struct nvmfd_prop_cmd, value, 48);

#define NVMFD_PROP_ATTRIB_SIZE_4 0
#define NVMFD_PROP_ATTRIB_SIZE_8 1

/* Disconnect (NVMe-oF 1.1 §3.4): recfmt at DW10 bits 15:0, must be 0. */
struct nvmfd_disconnect_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd2[35];
	uint16_t recfmt;
	uint8_t rsvd3[22];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_disconnect_cmd, 64);
NVMFD_ASSERT_OFF(struct nvmfd_disconnect_cmd, recfmt, 40);

/* ------------------------------------------------------------------ */
/* Controller properties (Base spec 2.0 §3.1.3; NVMe-oF 1.1 §3.5)      */
/* ------------------------------------------------------------------ */

#define NVMFD_REG_CAP 0x00
#define NVMFD_REG_VS 0x08
#define NVMFD_REG_CC 0x14
#define NVMFD_REG_CSTS 0x1c
#define NVMFD_REG_NSSR 0x20
#define NVMFD_REG_CRTO 0x68

/* CAP (64 bit). */
#define NVMFD_CAP_MQES(cap) ((uint16_t)((cap) & 0xffff)) /* 0's based */
#define NVMFD_CAP_CQR (1ull << 16)
#define NVMFD_CAP_AMS_SHIFT 17
#define NVMFD_CAP_TO(cap) ((uint8_t)(((cap) >> 24) & 0xff)) /* 500 ms units */
#define NVMFD_CAP_DSTRD(cap) ((uint8_t)(((cap) >> 32) & 0xf))
#define NVMFD_CAP_CSS_NVM (1ull << 37)
#define NVMFD_CAP_CSS_CSI (1ull << 43)
#define NVMFD_CAP_MPSMIN(cap) ((uint8_t)(((cap) >> 48) & 0xf))
#define NVMFD_CAP_MPSMAX(cap) ((uint8_t)(((cap) >> 52) & 0xf))
#define NVMFD_CAP_BUILD(mqes, to) \
	((uint64_t)((mqes) & 0xffff) | NVMFD_CAP_CQR | ((uint64_t)((to) & 0xff) << 24) | \
	 NVMFD_CAP_CSS_NVM)

/* VS. */
#define NVMFD_VS(mjr, mnr, ter) ((uint32_t)(((mjr) << 16) | ((mnr) << 8) | (ter)))
#define NVMFD_VS_1_3 NVMFD_VS(1, 3, 0)
#define NVMFD_VS_1_4 NVMFD_VS(1, 4, 0)

/* CC. */
#define NVMFD_CC_EN (1u << 0)
#define NVMFD_CC_CSS(cc) (((cc) >> 4) & 0x7)
#define NVMFD_CC_MPS(cc) (((cc) >> 7) & 0xf)
#define NVMFD_CC_AMS(cc) (((cc) >> 11) & 0x7)
#define NVMFD_CC_SHN(cc) (((cc) >> 14) & 0x3)
#define NVMFD_CC_IOSQES(cc) (((cc) >> 16) & 0xf)
#define NVMFD_CC_IOCQES(cc) (((cc) >> 20) & 0xf)
#define NVMFD_CC_SHN_NONE 0
#define NVMFD_CC_SHN_NORMAL 1
#define NVMFD_CC_SHN_ABRUPT 2
#define NVMFD_CC_CSS_NVM 0
#define NVMFD_CC_CSS_CSI 6

/* CSTS. */
#define NVMFD_CSTS_RDY (1u << 0)
#define NVMFD_CSTS_CFS (1u << 1)
#define NVMFD_CSTS_SHST_MASK (3u << 2)
#define NVMFD_CSTS_SHST_OCCUR (1u << 2)
#define NVMFD_CSTS_SHST_CMPLT (2u << 2)

/* ------------------------------------------------------------------ */
/* Identify data structures                                            */
/* ------------------------------------------------------------------ */

struct nvmfd_id_power_state {
	uint16_t max_power; /* centiwatts */
	uint8_t rsvd2;
	uint8_t flags;
	uint32_t entry_lat; /* microseconds */
	uint32_t exit_lat; /* microseconds */
	uint8_t read_tput;
	uint8_t read_lat;
	uint8_t write_tput;
	uint8_t write_lat;
	uint16_t idle_power;
	uint8_t idle_scale;
	uint8_t rsvd19;
	uint16_t active_power;
	uint8_t active_work_scale;
	uint8_t rsvd23[9];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_id_power_state, 32);

/* Identify Controller, CNS 01h, 4096 bytes (Base spec 2.0 Figure 275). */
struct nvmfd_id_ctrl {
	uint16_t vid;
	uint16_t ssvid;
	char sn[20];
	char mn[40];
	char fr[8];
	uint8_t rab;
	uint8_t ieee[3];
	uint8_t cmic;
	uint8_t mdts; /* 2^n minimum memory pages (CAP.MPSMIN); 0 = no limit */
	uint16_t cntlid;
	uint32_t ver;
	uint32_t rtd3r;
	uint32_t rtd3e;
	uint32_t oaes;
	uint32_t ctratt;
	uint16_t rrls;
	uint8_t rsvd102[9];
	uint8_t cntrltype; /* 1 I/O, 2 discovery, 3 administrative */
	uint8_t fguid[16];
	uint16_t crdt1;
	uint16_t crdt2;
	uint16_t crdt3;
	uint8_t rsvd134[119];
	uint8_t nvmsr;
	uint8_t vwci;
	uint8_t mec;
	uint16_t oacs;
	uint8_t acl;
	uint8_t aerl;
	uint8_t frmw;
	uint8_t lpa;
	uint8_t elpe;
	uint8_t npss;
	uint8_t avscc;
	uint8_t apsta;
	uint16_t wctemp;
	uint16_t cctemp;
	uint16_t mtfa;
	uint32_t hmpre;
	uint32_t hmmin;
	uint8_t tnvmcap[16];
	uint8_t unvmcap[16];
	uint32_t rpmbs;
	uint16_t edstt;
	uint8_t dsto;
	uint8_t fwug;
	uint16_t kas; /* 100 ms units */
	uint16_t hctma;
	uint16_t mntmt;
	uint16_t mxtmt;
	uint32_t sanicap;
	uint32_t hmminds;
	uint16_t hmmaxd;
	uint16_t nsetidmax;
	uint16_t endgidmax;
	uint8_t anatt;
	uint8_t anacap;
	uint32_t anagrpmax;
	uint32_t nanagrpid;
	uint32_t pels;
	uint16_t domainid;
	uint8_t rsvd358[10];
	uint8_t megcap[16];
	uint8_t rsvd384[128];
	uint8_t sqes;
	uint8_t cqes;
	uint16_t maxcmd;
	uint32_t nn;
	uint16_t oncs;
	uint16_t fuses;
	uint8_t fna;
	uint8_t vwc;
	uint16_t awun;
	uint16_t awupf;
	uint8_t icsvscc;
	uint8_t nwpc;
	uint16_t acwu;
	uint16_t ocfs;
	uint32_t sgls;
	uint32_t mnan;
	uint8_t maxdna[16];
	uint32_t maxcna;
	uint8_t rsvd564[204];
	char subnqn[NVMFD_NQN_SIZE];
	uint8_t rsvd1024[768];
	/* NVMe-oF attributes (NVMe-oF 1.1 Figure 30) */
	uint32_t ioccsz; /* 16-byte units: (64 + in-capsule data bytes) / 16 */
	uint32_t iorcsz; /* 16-byte units */
	uint16_t icdoff;
	uint8_t fcatt;
	uint8_t msdbd;
	uint16_t ofcs;
	uint8_t rsvd1806[242];
	struct nvmfd_id_power_state psd[32];
	uint8_t vs[1024];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_id_ctrl, 4096);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, sn, 4);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, mn, 24);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, fr, 64);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, mdts, 77);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, cntlid, 78);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, ver, 80);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, oaes, 92);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, ctratt, 96);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, cntrltype, 111);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, oacs, 256);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, lpa, 261);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, kas, 320);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, anatt, 342);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, sqes, 512);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, maxcmd, 514);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, nn, 516);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, oncs, 520);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, vwc, 525);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, sgls, 536);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, mnan, 540);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, subnqn, 768);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, ioccsz, 1792);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, msdbd, 1803);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, psd, 2048);
NVMFD_ASSERT_OFF(struct nvmfd_id_ctrl, vs, 3072);

#define NVMFD_CNTRLTYPE_IO 1
#define NVMFD_CNTRLTYPE_DISC 2
#define NVMFD_CTRATT_HOST_ID_128 (1u << 0)
#define NVMFD_CTRATT_TBKAS (1u << 6)
#define NVMFD_ONCS_DSM (1u << 2)
#define NVMFD_ONCS_WRITE_ZEROES (1u << 3)
#define NVMFD_LPA_CMD_EFFECTS (1u << 1)
#define NVMFD_LPA_EXT_DATA (1u << 2)
#define NVMFD_VWC_PRESENT (1u << 0)
#define NVMFD_SGLS_SUPPORTED (1u << 0)
#define NVMFD_SGLS_KSDBDS (1u << 2)
#define NVMFD_SGLS_OFFSET (1u << 20)
#define NVMFD_OAES_NS_ATTR (1u << 8)
#define NVMFD_OAES_DISC_CHANGE (1u << 31)

/* LBA format (Base spec 2.0 Figure 276, LBAF). */
struct nvmfd_lbaf {
	uint16_t ms; /* metadata bytes per LBA */
	uint8_t ds; /* LBA data size as a power of two */
	uint8_t rp;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_lbaf, 4);

/* Identify Namespace, CNS 00h, 4096 bytes (NVM Command Set 1.0 Figure 97). */
struct nvmfd_id_ns {
	uint64_t nsze; /* logical blocks */
	uint64_t ncap;
	uint64_t nuse;
	uint8_t nsfeat;
	uint8_t nlbaf; /* 0's based */
	uint8_t flbas;
	uint8_t mc;
	uint8_t dpc;
	uint8_t dps;
	uint8_t nmic;
	uint8_t rescap;
	uint8_t fpi;
	uint8_t dlfeat;
	uint16_t nawun;
	uint16_t nawupf;
	uint16_t nacwu;
	uint16_t nabsn;
	uint16_t nabo;
	uint16_t nabspf;
	uint16_t noiob;
	uint8_t nvmcap[16];
	uint16_t npwg;
	uint16_t npwa;
	uint16_t npdg;
	uint16_t npda;
	uint16_t nows;
	uint16_t mssrl;
	uint32_t mcl;
	uint8_t msrc;
	uint8_t rsvd81;
	uint8_t nulbaf;
	uint8_t rsvd83[9];
	uint32_t anagrpid;
	uint8_t rsvd96[3];
	uint8_t nsattr;
	uint16_t nvmsetid;
	uint16_t endgid;
	uint8_t nguid[16];
	uint8_t eui64[8];
	struct nvmfd_lbaf lbaf[64];
	uint8_t rsvd384[3456];
	uint8_t vs[256];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_id_ns, 4096);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, nsfeat, 24);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, flbas, 26);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, nmic, 30);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, dlfeat, 33);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, nvmcap, 48);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, npwg, 64);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, anagrpid, 92);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, nsattr, 99);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, nguid, 104);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, eui64, 120);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, lbaf, 128);
NVMFD_ASSERT_OFF(struct nvmfd_id_ns, vs, 3840);

#define NVMFD_NSFEAT_THIN (1u << 0)
#define NVMFD_NSFEAT_DAE (1u << 2) /* deallocated/unwritten error */
#define NVMFD_NMIC_SHARED (1u << 0)
#define NVMFD_DLFEAT_READ_ZEROES 0x1 /* deallocated blocks read as zeroes */
#define NVMFD_DLFEAT_WZ_DEALLOC (1u << 3)

/* Namespace Identification Descriptor (Base spec 2.0 Figure 280). */
struct nvmfd_ns_id_desc {
	uint8_t nidt;
	uint8_t nidl;
	uint16_t rsvd;
	/* nidl bytes of identifier follow */
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_ns_id_desc, 4);
#define NVMFD_NIDT_EUI64 0x1
#define NVMFD_NIDT_NGUID 0x2
#define NVMFD_NIDT_UUID 0x3
#define NVMFD_NIDT_CSI 0x4
#define NVMFD_NIDT_EUI64_LEN 8
#define NVMFD_NIDT_NGUID_LEN 16
#define NVMFD_NIDT_UUID_LEN 16
#define NVMFD_NIDT_CSI_LEN 1
#define NVMFD_CSI_NVM 0x0

#define NVMFD_IDENTIFY_DATA_SIZE 4096
#define NVMFD_ACTIVE_NS_LIST_MAX 1024 /* NSIDs (uint32_t) in one CNS 02h page */

/* ------------------------------------------------------------------ */
/* Log pages                                                           */
/* ------------------------------------------------------------------ */

/* Get Log Page NUMD: ((NUMDU << 16) | NUMDL) + 1 dwords. */
static inline uint32_t nvmfd_get_log_numd(const struct nvmfd_sqe *sqe)
{
	return (((sqe->cdw11 & 0xffff) << 16) | (sqe->cdw10 >> 16)) + 1;
}

static inline uint64_t nvmfd_get_log_lpo(const struct nvmfd_sqe *sqe)
{
	return ((uint64_t)sqe->cdw13 << 32) | sqe->cdw12;
}

#define NVMFD_GET_LOG_LID(sqe) ((uint8_t)((sqe)->cdw10 & 0xff))
#define NVMFD_GET_LOG_RAE(sqe) (((sqe)->cdw10 >> 15) & 0x1)

/* Error Information log entry, 64 bytes (Base spec 2.0 Figure 205). */
struct nvmfd_error_log_entry {
	uint64_t error_count;
	uint16_t sqid;
	uint16_t cmdid;
	uint16_t status_field; /* (status << 1) | phase, as in the CQE */
	uint16_t parm_error_location;
	uint64_t lba;
	uint32_t nsid;
	uint8_t vs;
	uint8_t trtype;
	uint8_t rsvd30[2];
	uint64_t cs;
	uint16_t trtype_spec_info;
	uint8_t rsvd42[22];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_error_log_entry, 64);
NVMFD_ASSERT_OFF(struct nvmfd_error_log_entry, lba, 16);
NVMFD_ASSERT_OFF(struct nvmfd_error_log_entry, nsid, 24);
NVMFD_ASSERT_OFF(struct nvmfd_error_log_entry, cs, 32);

/* SMART / Health Information log, 512 bytes (Base spec 2.0 Figure 207).
 * The 128-bit counters are little-endian; data units are 1000 x 512 bytes. */
struct nvmfd_smart_log {
	uint8_t critical_warning;
	uint8_t temperature[2]; /* kelvin */
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint8_t endu_grp_crit_warn_sumry;
	uint8_t rsvd7[25];
	uint8_t data_units_read[16];
	uint8_t data_units_written[16];
	uint8_t host_reads[16];
	uint8_t host_writes[16];
	uint8_t ctrl_busy_time[16];
	uint8_t power_cycles[16];
	uint8_t power_on_hours[16];
	uint8_t unsafe_shutdowns[16];
	uint8_t media_errors[16];
	uint8_t num_err_log_entries[16];
	uint32_t warning_temp_time;
	uint32_t critical_comp_time;
	uint16_t temp_sensor[8];
	uint32_t thm_temp1_trans_count;
	uint32_t thm_temp2_trans_count;
	uint32_t thm_temp1_total_time;
	uint32_t thm_temp2_total_time;
	uint8_t rsvd232[280];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_smart_log, 512);
NVMFD_ASSERT_OFF(struct nvmfd_smart_log, data_units_read, 32);
NVMFD_ASSERT_OFF(struct nvmfd_smart_log, data_units_written, 48);
NVMFD_ASSERT_OFF(struct nvmfd_smart_log, host_reads, 64);
NVMFD_ASSERT_OFF(struct nvmfd_smart_log, warning_temp_time, 192);
NVMFD_ASSERT_OFF(struct nvmfd_smart_log, temp_sensor, 200);

/* Changed Namespace List log: up to 1024 NSIDs; 0xffffffff in entry 0 when
 * more than 1024 changed (Base spec 2.0 §5.16.1.5). */
#define NVMFD_CHANGED_NS_LIST_MAX 1024
struct nvmfd_changed_ns_log {
	uint32_t nsid[NVMFD_CHANGED_NS_LIST_MAX];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_changed_ns_log, 4096);

/* Discovery log page (NVMe-oF 1.1 Figures 31, 32). */
#define NVMFD_TRTYPE_RDMA 1
#define NVMFD_TRTYPE_FC 2
#define NVMFD_TRTYPE_TCP 3
#define NVMFD_TRTYPE_LOOP 254
#define NVMFD_ADRFAM_IPV4 1
#define NVMFD_ADRFAM_IPV6 2
#define NVMFD_SUBTYPE_REFERRAL 1
#define NVMFD_SUBTYPE_NVME 2
#define NVMFD_SUBTYPE_CUR_DISCOVERY 3
#define NVMFD_TREQ_SECURE_NOT_SPECIFIED 0x0
#define NVMFD_TREQ_SECURE_REQUIRED 0x1
#define NVMFD_TREQ_SECURE_NOT_REQUIRED 0x2
#define NVMFD_TREQ_DISABLE_SQFLOW (1u << 2)
#define NVMFD_TCP_SECTYPE_NONE 0
#define NVMFD_TCP_SECTYPE_TLS12 1 /* obsolete */
#define NVMFD_TCP_SECTYPE_TLS13 2
#define NVMFD_CNTLID_DYNAMIC 0xffff

struct nvmfd_disc_log_hdr {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t rsvd18[1006];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_disc_log_hdr, 1024);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_hdr, recfmt, 16);

struct nvmfd_disc_log_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t rsvd12[20];
	char trsvcid[32];
	uint8_t rsvd64[192];
	char subnqn[NVMFD_NQN_SIZE];
	char traddr[256];
	uint8_t tsas[256]; /* TCP: byte 0 SECTYPE */
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_disc_log_entry, 1024);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, portid, 4);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, cntlid, 6);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, asqsz, 8);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, trsvcid, 32);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, subnqn, 256);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, traddr, 512);
NVMFD_ASSERT_OFF(struct nvmfd_disc_log_entry, tsas, 768);

/* ------------------------------------------------------------------ */
/* NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, §3.6)          */
/* ------------------------------------------------------------------ */

#define NVMFD_TCP_DEFAULT_PORT 4420
#define NVMFD_TCP_DISC_PORT 8009
#define NVMFD_TCP_PFV_1_0 0
#define NVMFD_TCP_DIGEST_LEN 4
#define NVMFD_TCP_MIN_MAXH2CDATA 4096
#define NVMFD_TCP_HPDA_MAX 31
#define NVMFD_TCP_TERM_ERR_DATA_MAX 128 /* header bytes echoed in a TermReq */

/* PDU types (§3.6.2, Figure 8). */
enum nvmfd_tcp_pdu_type {
	NVMFD_TCP_ICREQ = 0x00,
	NVMFD_TCP_ICRESP = 0x01,
	NVMFD_TCP_H2C_TERM = 0x02,
	NVMFD_TCP_C2H_TERM = 0x03,
	NVMFD_TCP_CMD = 0x04,
	NVMFD_TCP_RSP = 0x05,
	NVMFD_TCP_H2C_DATA = 0x06,
	NVMFD_TCP_C2H_DATA = 0x07,
	NVMFD_TCP_R2T = 0x09,
};
#define NVMFD_TCP_PDU_TYPE_MAX 0x09

/* Common header FLAGS (§3.6.1). */
#define NVMFD_TCP_F_HDGST (1u << 0)
#define NVMFD_TCP_F_DDGST (1u << 1)
#define NVMFD_TCP_F_DATA_LAST (1u << 2) /* H2CData/C2HData only */
#define NVMFD_TCP_F_DATA_SUCCESS (1u << 3) /* C2HData only */

/* ICReq/ICResp DGST bits. */
#define NVMFD_TCP_DGST_HDR (1u << 0)
#define NVMFD_TCP_DGST_DATA (1u << 1)

/* Fatal Error Status for H2CTermReq / C2HTermReq (§3.6.2.9, Figure 20). */
enum nvmfd_tcp_fes {
	NVMFD_TCP_FES_INVALID_HEADER = 0x01,
	NVMFD_TCP_FES_PDU_SEQUENCE = 0x02,
	NVMFD_TCP_FES_HDR_DIGEST = 0x03,
	NVMFD_TCP_FES_DATA_OUT_OF_RANGE = 0x04,
	NVMFD_TCP_FES_R2T_LIMIT_EXCEEDED = 0x05,
	NVMFD_TCP_FES_DATA_LIMIT_EXCEEDED = 0x05,
	NVMFD_TCP_FES_UNSUPPORTED_PARAM = 0x06,
};

/* Common header, 8 bytes. */
struct nvmfd_tcp_ch {
	uint8_t type;
	uint8_t flags;
	uint8_t hlen; /* PDU header length, excluding the header digest */
	uint8_t pdo; /* PDU data offset from PDU start; 0 if no data */
	uint32_t plen; /* total PDU length: header + HDGST + PAD + data + DDGST */
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_ch, 8);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_ch, hlen, 2);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_ch, pdo, 3);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_ch, plen, 4);

/* ICReq, 128 bytes (§3.6.2.2). */
struct nvmfd_tcp_icreq {
	struct nvmfd_tcp_ch ch;
	uint16_t pfv;
	uint8_t hpda; /* 0's based dwords */
	uint8_t dgst;
	uint32_t maxr2t; /* 0's based */
	uint8_t rsvd16[112];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_icreq, 128);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icreq, pfv, 8);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icreq, hpda, 10);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icreq, dgst, 11);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icreq, maxr2t, 12);

/* ICResp, 128 bytes (§3.6.2.3). */
struct nvmfd_tcp_icresp {
	struct nvmfd_tcp_ch ch;
	uint16_t pfv;
	uint8_t cpda; /* 0's based dwords */
	uint8_t dgst;
	uint32_t maxh2cdata; /* bytes, multiple of 4, >= 4096 */
	uint8_t rsvd16[112];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_icresp, 128);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icresp, cpda, 10);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_icresp, maxh2cdata, 12);

/* H2CTermReq / C2HTermReq header, 24 bytes (§3.6.2.4, §3.6.2.9); up to 128
 * bytes of the offending PDU header follow as error data. */
struct nvmfd_tcp_term {
	struct nvmfd_tcp_ch ch;
	uint16_t fes;
	uint32_t fei; /* field error information: byte offset, or a value for 0x05/0x06 */
	uint8_t rsvd14[10];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_term, 24);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_term, fes, 8);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_term, fei, 10);

/* CapsuleCmd, 72 bytes + in-capsule data (§3.6.2.5). */
struct nvmfd_tcp_cmd {
	struct nvmfd_tcp_ch ch;
	struct nvmfd_sqe sqe;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_cmd, 72);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_cmd, sqe, 8);

/* CapsuleResp, 24 bytes (§3.6.2.6). */
struct nvmfd_tcp_rsp {
	struct nvmfd_tcp_ch ch;
	struct nvmfd_cqe cqe;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_rsp, 24);

/* H2CData / C2HData, 24 bytes + data (§3.6.2.7, §3.6.2.8). */
struct nvmfd_tcp_data {
	struct nvmfd_tcp_ch ch;
	uint16_t cccid;
	uint16_t ttag; /* H2CData: from the R2T; C2HData: reserved */
	uint32_t datao; /* byte offset within the command's data */
	uint32_t datal; /* bytes of data in this PDU */
	uint8_t rsvd20[4];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_data, 24);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_data, cccid, 8);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_data, ttag, 10);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_data, datao, 12);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_data, datal, 16);

/* R2T, 24 bytes (§3.6.2.10). */
struct nvmfd_tcp_r2t {
	struct nvmfd_tcp_ch ch;
	uint16_t cccid;
	uint16_t ttag;
	uint32_t r2to;
	uint32_t r2tl;
	uint8_t rsvd20[4];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_tcp_r2t, 24);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_r2t, r2to, 12);
NVMFD_ASSERT_OFF(struct nvmfd_tcp_r2t, r2tl, 16);

/* Largest PDU header plus header digest: ICReq/ICResp are the longest. */
#define NVMFD_TCP_MAX_HDR_LEN 128
#define NVMFD_TCP_MAX_HDR_DGST_LEN (NVMFD_TCP_MAX_HDR_LEN + NVMFD_TCP_DIGEST_LEN)

/* ------------------------------------------------------------------ */
/* In-band authentication (NVMe Base 2.0 §5.20, §5.21, §8.13)          */
/* ------------------------------------------------------------------ */

/*
 * Connect response DW0 bits 17 and 18 (AUTHREQ): bit 17 ATR - an
 * authentication transaction is required before the queue may be used;
 * bit 18 ASCR - secure channel concatenation is required. Bit 17, not 16,
 * is what the Linux host and target use; nvmfd does the same.
 */
#define NVMFD_CONNECT_AUTHREQ_ATR (1u << 17)
#define NVMFD_CONNECT_AUTHREQ_ASCR (1u << 18)

/* Command specific status: the queue has not completed authentication. */
#define NVMFD_SC_AUTH_REQUIRED 0x91

/* Authentication Send / Receive (Fabrics command types 05h / 06h). */
#define NVMFD_AUTH_SECP_NVME 0xe9 /* SECP: NVMe in-band authentication */
#define NVMFD_AUTH_SPSP0 0x01
#define NVMFD_AUTH_SPSP1 0x01

struct nvmfd_auth_send_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd2[19];
	struct nvmfd_sgl_desc dptr;
	uint8_t nssf; /* reserved for NVMe in-band authentication */
	uint8_t spsp0;
	uint8_t spsp1;
	uint8_t secp;
	uint32_t tl; /* Auth Send: transfer length; Auth Receive: allocation length */
	uint8_t rsvd3[16];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_send_cmd, 64);
NVMFD_ASSERT_OFF(struct nvmfd_auth_send_cmd, nssf, 40);
NVMFD_ASSERT_OFF(struct nvmfd_auth_send_cmd, spsp0, 41);
NVMFD_ASSERT_OFF(struct nvmfd_auth_send_cmd, spsp1, 42);
NVMFD_ASSERT_OFF(struct nvmfd_auth_send_cmd, secp, 43);
NVMFD_ASSERT_OFF(struct nvmfd_auth_send_cmd, tl, 44);

/* Message types (AUTH_Type) and identifiers (AUTH_Id). */
#define NVMFD_AUTH_TYPE_COMMON 0x00
#define NVMFD_AUTH_TYPE_DHCHAP 0x01
#define NVMFD_AUTH_ID_NEGOTIATE 0x00 /* common */
#define NVMFD_AUTH_ID_FAILURE2 0xf0 /* common, host to controller */
#define NVMFD_AUTH_ID_FAILURE1 0xf1 /* common, controller to host */
#define NVMFD_AUTH_ID_CHALLENGE 0x01 /* DH-HMAC-CHAP */
#define NVMFD_AUTH_ID_REPLY 0x02
#define NVMFD_AUTH_ID_SUCCESS1 0x03
#define NVMFD_AUTH_ID_SUCCESS2 0x04

/* Authentication protocol identifier of DH-HMAC-CHAP (AUTHID). */
#define NVMFD_AUTH_PROTO_DHCHAP 0x01
/* Secure channel concatenation (SC_C). */
#define NVMFD_AUTH_SCC_NONE 0x00
#define NVMFD_AUTH_SCC_NEWTLSPSK 0x01
#define NVMFD_AUTH_SCC_REPLACETLSPSK 0x02

/* Hash function identifiers (HashID). */
#define NVMFD_AUTH_HASH_SHA256 0x01
#define NVMFD_AUTH_HASH_SHA384 0x02
#define NVMFD_AUTH_HASH_SHA512 0x03
/* Diffie-Hellman group identifiers (DHgroupID). */
#define NVMFD_AUTH_DHGROUP_NULL 0x00
#define NVMFD_AUTH_DHGROUP_2048 0x01
#define NVMFD_AUTH_DHGROUP_3072 0x02
#define NVMFD_AUTH_DHGROUP_4096 0x03
#define NVMFD_AUTH_DHGROUP_6144 0x04
#define NVMFD_AUTH_DHGROUP_8192 0x05

/* AUTH_Failure reason code and reason code explanations. */
#define NVMFD_AUTH_RC_FAILED 0x01
#define NVMFD_AUTH_RCE_FAILED 0x01
#define NVMFD_AUTH_RCE_PROTO_UNUSABLE 0x02
#define NVMFD_AUTH_RCE_CONCAT_MISMATCH 0x03
#define NVMFD_AUTH_RCE_HASH_UNUSABLE 0x04
#define NVMFD_AUTH_RCE_DHGROUP_UNUSABLE 0x05
#define NVMFD_AUTH_RCE_INCORRECT_PAYLOAD 0x06
#define NVMFD_AUTH_RCE_INCORRECT_PROTOCOL 0x07

/* First 6 bytes of every authentication message. */
struct nvmfd_auth_hdr {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_hdr, 6);

/* DH-HMAC-CHAP protocol descriptor, 64 bytes: HALEN hash IDs from
 * idlist[0], DHLEN DH group IDs from idlist[30]. */
#define NVMFD_AUTH_IDLIST_DH 30
#define NVMFD_AUTH_IDLIST_MAX 30
struct nvmfd_auth_dhchap_desc {
	uint8_t authid;
	uint8_t rsvd1;
	uint8_t halen;
	uint8_t dhlen;
	uint8_t idlist[60];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_dhchap_desc, 64);

/* AUTH_Negotiate: 8 bytes + NAPD protocol descriptors. */
struct nvmfd_auth_negotiate {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t sc_c;
	uint8_t napd;
	struct nvmfd_auth_dhchap_desc desc[];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_negotiate, 8);
NVMFD_ASSERT_OFF(struct nvmfd_auth_negotiate, t_id, 4);
NVMFD_ASSERT_OFF(struct nvmfd_auth_negotiate, sc_c, 6);
NVMFD_ASSERT_OFF(struct nvmfd_auth_negotiate, napd, 7);

/* DH-HMAC-CHAP_Challenge: 16 bytes + HL bytes C1 + DHVLEN bytes DH value. */
struct nvmfd_auth_challenge {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t hashid;
	uint8_t dhgid;
	uint16_t dhvlen;
	uint32_t seqnum; /* S1 */
	uint8_t cval[];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_challenge, 16);
NVMFD_ASSERT_OFF(struct nvmfd_auth_challenge, hl, 6);
NVMFD_ASSERT_OFF(struct nvmfd_auth_challenge, hashid, 8);
NVMFD_ASSERT_OFF(struct nvmfd_auth_challenge, dhgid, 9);
NVMFD_ASSERT_OFF(struct nvmfd_auth_challenge, dhvlen, 10);
NVMFD_ASSERT_OFF(struct nvmfd_auth_challenge, seqnum, 12);

/* DH-HMAC-CHAP_Reply: 16 bytes + HL bytes R1 + HL bytes C2 + DHVLEN bytes. */
#define NVMFD_AUTH_REPLY_CVALID 0x01
struct nvmfd_auth_reply {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t cvalid; /* bit 0: C2 valid (controller authentication requested) */
	uint8_t rsvd9;
	uint16_t dhvlen;
	uint32_t seqnum; /* S2; 0 when C2 is not valid */
	uint8_t rval[];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_reply, 16);
NVMFD_ASSERT_OFF(struct nvmfd_auth_reply, cvalid, 8);
NVMFD_ASSERT_OFF(struct nvmfd_auth_reply, dhvlen, 10);
NVMFD_ASSERT_OFF(struct nvmfd_auth_reply, seqnum, 12);

/* DH-HMAC-CHAP_Success1: 16 bytes + HL bytes R2 (when RVALID). */
#define NVMFD_AUTH_SUCCESS1_RVALID 0x01
struct nvmfd_auth_success1 {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t rvalid;
	uint8_t rsvd9[7];
	uint8_t rval[];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_success1, 16);
NVMFD_ASSERT_OFF(struct nvmfd_auth_success1, rvalid, 8);

/* DH-HMAC-CHAP_Success2, 16 bytes. */
struct nvmfd_auth_success2 {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t rsvd6[10];
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_success2, 16);

/* AUTH_Failure1 / AUTH_Failure2, 8 bytes. */
struct nvmfd_auth_failure {
	uint8_t auth_type;
	uint8_t auth_id;
	uint8_t rsvd2[2];
	uint16_t t_id;
	uint8_t rescode;
	uint8_t rescode_exp;
} NVMFD_PACKED;
NVMFD_ASSERT_SIZE(struct nvmfd_auth_failure, 8);
NVMFD_ASSERT_OFF(struct nvmfd_auth_failure, rescode, 6);
NVMFD_ASSERT_OFF(struct nvmfd_auth_failure, rescode_exp, 7);

#ifdef __cplusplus
}
#endif

#endif /* NVMFD_SPEC_H */
