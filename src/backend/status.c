// SPDX-License-Identifier: MIT
/*
 * status.c - the one errno -> NVMe status mapping (internal/backend.h).
 *
 * Status codes: NVMe Base spec 2.0 Figure 101 (generic) and Figure 104
 * (media and data integrity). DNR is set where resubmitting the same
 * command cannot succeed.
 */
#include <errno.h>

#include "internal/backend.h"
#include "nvmfd/spec.h"

/* See internal/backend.h for the kernel-doc. */
nvmfd_status_t nvmfd__status_from_errno(int err, enum nvmfd_bk_op op)
{
	if (err >= 0)
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_SUCCESS);

	switch (err) {
	case -ENOSPC:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_CAP_EXCEEDED) | NVMFD_STATUS_DNR;
	case -EREMOTEIO:
	case -ERANGE:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_LBA_RANGE) | NVMFD_STATUS_DNR;
	case -EOPNOTSUPP:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_OPCODE) | NVMFD_STATUS_DNR;
	case -EINVAL:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD) | NVMFD_STATUS_DNR;
	case -ECANCELED:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_ABORT_REQ);
	case -ENODATA:
		return NVMFD_STATUS(NVMFD_SCT_MEDIA, NVMFD_SC_READ_ERROR);
	case -EIO:
		if (op == NVMFD_BK_READ)
			return NVMFD_STATUS(NVMFD_SCT_MEDIA, NVMFD_SC_READ_ERROR);
		return NVMFD_STATUS(NVMFD_SCT_MEDIA, NVMFD_SC_WRITE_FAULT);
	case -EROFS:
	case -EACCES:
	case -EPERM:
		return NVMFD_STATUS(NVMFD_SCT_MEDIA, NVMFD_SC_ACCESS_DENIED) | NVMFD_STATUS_DNR;
	default:
		return NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL);
	}
}
