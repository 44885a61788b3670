/* SPDX-License-Identifier: MIT */
/*
 * host_auth.h - DH-HMAC-CHAP on a host queue (auth.c): run after a queue's
 * Fabrics Connect, before any other command.
 */
#ifndef NVMFD_HOST_AUTH_H
#define NVMFD_HOST_AUTH_H

#include "host/host_int.h"

/**
 * nvmfd__host_qp_authenticate() - authenticate @qp if its Connect response
 * asks for it (AUTHREQ ATR), with the secrets of ctrl->opts.
 * @ctrl:    the owning controller (options: secrets, host NQN).
 * @qp:      live qp, Connect just completed.
 * @subnqn:  the subsystem NQN the qp connected to.
 * @connect: the Connect completion.
 * Return: 0 (authenticated, or no authentication asked and none demanded);
 *         -EACCES (authentication failed or impossible; qp->errmsg says
 *         why); -EOPNOTSUPP (secure channel concatenation required);
 *         -EINVAL (a secret does not parse); transport errors of the
 *         Authentication Send/Receive commands; -EREMOTEIO (one of them
 *         completed with an error status).
 * Context: the qp's owner; blocks for at most a few qp timeouts.
 */
int nvmfd__host_qp_authenticate(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp,
				const char *subnqn, const struct nvmfd_host_cpl *connect);

/**
 * nvmfd__host_qp_reauth() - run a new DH-HMAC-CHAP transaction on a live
 * @qp that authenticated at connect (nvmfd_host_qp_reauth()). Commands
 * outstanding on @qp keep completing meanwhile (their callbacks run); one
 * request slot is kept for the transaction's own commands. On the admin
 * queue admin_lock is released while the transaction waits (for a slot,
 * a completion, its DH arithmetic), so the caller guards against a second
 * transaction running meanwhile (ctrl->reauth_running).
 * Return: as nvmfd_host_qp_reauth(); qp->errmsg says why it failed.
 * Context: the qp's owner (admin queue: under admin_lock), not a callback.
 */
int nvmfd__host_qp_reauth(struct nvmfd_host_ctrl *ctrl, struct nvmfd_host_qp *qp);

#endif /* NVMFD_HOST_AUTH_H */
