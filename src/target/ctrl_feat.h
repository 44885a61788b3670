/* SPDX-License-Identifier: MIT */
/*
 * ctrl_feat.h - private to src/target: the current values of the Set
 * Features features that an I/O controller stores but does not act on
 * (Arbitration, Power Management, Temperature Threshold, Error Recovery).
 *
 * They live behind struct nvmfd_tgt_ctrl in one allocation made by
 * nvmfd__tgt_ctrl_alloc() (subsys.c), so they are freed with the
 * controller. Protected by tgt->lock.
 */
#ifndef NVMFD_TARGET_CTRL_FEAT_H
#define NVMFD_TARGET_CTRL_FEAT_H

#include <stddef.h>
#include <stdint.h>

#include "target/core.h"

/* Arbitration Burst "no limit" (Base 2.0 §5.27.1.1) */
#define NVMFD_TGT_ARB_DEFAULT 0x7u
/* Over Temperature Threshold of the composite sensor, kelvin (70 C) */
#define NVMFD_TGT_TMPTH_OVER_DEFAULT 343u

struct nvmfd_tgt_ctrl_feat {
	uint32_t arbitration; /* cdw11 of Arbitration (01h), reserved bits clear */
	uint32_t power_mgmt; /* PS (always 0) and WH of Power Management (02h) */
	uint16_t tmpth_over; /* composite sensor thresholds (04h), kelvin */
	uint16_t tmpth_under;
	uint32_t err_recovery; /* TLER of Error Recovery (05h); DULBE never set */
};

struct nvmfd_tgt_ctrl_ext {
	struct nvmfd_tgt_ctrl ctrl; /* first: the allocation is freed as a ctrl */
	struct nvmfd_tgt_ctrl_feat feat;
};

/* The feature block of a controller allocated by nvmfd__tgt_ctrl_alloc(). */
static inline struct nvmfd_tgt_ctrl_feat *nvmfd__tgt_ctrl_feat(struct nvmfd_tgt_ctrl *c)
{
	return &((struct nvmfd_tgt_ctrl_ext *)(void *)c)->feat;
}

#endif /* NVMFD_TARGET_CTRL_FEAT_H */
