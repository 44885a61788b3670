/* SPDX-License-Identifier: MIT */
/*
 * rpc.h - nvmfd's control socket: JSON-RPC 2.0 (version 1 of nvmfd's API)
 * and the older {"cmd":"stats"|"config"} requests, several clients at once.
 * The protocol and the methods are described in doc/rpc.md.
 *
 * Ownership: nvmfd_rpc_create() takes the listening socket, borrows the
 * target and the config (which the methods edit: the daemon owns it);
 * nvmfd_rpc_destroy() closes every client and the listener.
 * Context: the daemon's control thread only.
 */
#ifndef NVMFD_TOOLS_RPC_H
#define NVMFD_TOOLS_RPC_H

#include <poll.h>

#include "cfg/cfg.h"

struct nvmfd_tgt;
struct nvmfd_rpc;

#define NVMFD_RPC_MAX_CLIENTS 16 /* connections served at once */
#define NVMFD_RPC_POLLFDS (NVMFD_RPC_MAX_CLIENTS + 1)

/**
 * nvmfd_rpc_create() - serve @lfd (a listening, non-blocking UNIX socket;
 * -1: no socket, only nvmfd_rpc_reload()).
 * @save_path: where save_config writes without a "filename" (the one -c
 *             file), or NULL (then save_config returns the config).
 * @file_cfg:  with @save_path, that file's own config as loaded at startup
 *             (copied; the base a SIGHUP reload compares with), or NULL.
 * Return: 0, -ENOMEM.
 */
int nvmfd_rpc_create(int lfd, struct nvmfd_tgt *tgt, struct nvmfd_cfg *cfg, const char *save_path,
		     const struct nvmfd_cfg *file_cfg, struct nvmfd_rpc **out);
void nvmfd_rpc_destroy(struct nvmfd_rpc **rpc);

/**
 * nvmfd_rpc_reload() - SIGHUP: load @path again and apply what differs from
 * the running config as far as the live methods allow (doc/nvmfd.md,
 * "SIGHUP"): subsystems created and deleted, allow_any_host, namespaces
 * added or removed (by NSID), port links; allowed hosts, hosts'
 * DH-HMAC-CHAP keys and TLS PSKs and the global PSK (key files re-read).
 * For those last four only what changed in the file since it was last
 * read applies: hosts allowed and keys set over the control socket, which
 * the file does not mention, are kept (logged at INFO).
 * Other differences (listeners, subsystem attributes, a changed namespace)
 * are logged at WARN and not applied. A file that does not load or
 * validate changes nothing. Not atomic: each change is applied on its own,
 * and one that fails is logged and skipped.
 * Return: 0; -EINVAL (the file is bad: nothing changed); -EIO (some change
 *         failed); -ENOMEM.
 */
int nvmfd_rpc_reload(struct nvmfd_rpc *rpc, const char *path);

/** nvmfd_rpc_pollfds() - fill @pfd (NVMFD_RPC_POLLFDS entries); Return: count. */
int nvmfd_rpc_pollfds(struct nvmfd_rpc *rpc, struct pollfd *pfd);

/** nvmfd_rpc_handle() - serve what @pfd (from nvmfd_rpc_pollfds()) reports. */
void nvmfd_rpc_handle(struct nvmfd_rpc *rpc, const struct pollfd *pfd, int n);

#endif /* NVMFD_TOOLS_RPC_H */
