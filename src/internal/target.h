/* SPDX-License-Identifier: MIT */
/*
 * target.h - the NVMe-oF target as the daemon sees it.
 *
 * nvmfd_tgt_create() opens every namespace backend and binds every listener
 * of the config (nothing listens if any step fails); nvmfd_tgt_start() starts
 * the execution runtime and accepting; nvmfd_tgt_stop() stops accepting,
 * completes or fails in-flight commands with a status, tears controllers
 * down and flushes file backends; nvmfd_tgt_destroy() frees everything.
 *
 * Errors: negative errno, with a message logged that names the object
 * (e.g. "port 1 127.0.0.1:4420: Address already in use").
 * Context: create/start/stop/destroy from one control thread.
 */
#ifndef NVMFD_INTERNAL_TARGET_H
#define NVMFD_INTERNAL_TARGET_H

#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"

struct nvmfd_tgt;

/** nvmfd_tgt_create() - @cfg is borrowed for the target's lifetime. */
int nvmfd_tgt_create(const struct nvmfd_cfg *cfg, struct nvmfd_tgt **out);
int nvmfd_tgt_start(struct nvmfd_tgt *tgt);
void nvmfd_tgt_stop(struct nvmfd_tgt *tgt);
void nvmfd_tgt_destroy(struct nvmfd_tgt **tgt);

/** nvmfd_tgt_listen_port() - TCP port actually bound by listener @idx
 *  (useful with trsvcid "0"); 0 if @idx is out of range. */
uint16_t nvmfd_tgt_listen_port(const struct nvmfd_tgt *tgt, unsigned int idx);

/** nvmfd_tgt_stats_json() - write counters (per queue, per pool) as one JSON
 *  object on @out. Return: 0 or -errno. Context: any thread. */
int nvmfd_tgt_stats_json(struct nvmfd_tgt *tgt, FILE *out);

/*
 * Live reconfiguration (src/target/subsys.c), from the control thread while
 * the target runs. Namespaces: see the kernel-doc of each. Hosts: the
 * daemon edits cfg->subsys[i].allow_any_host and hosts[] itself, holding
 * nvmfd_tgt_cfg_lock(), since the target reads them at every Connect.
 */
int nvmfd_tgt_ns_add(struct nvmfd_tgt *tgt, unsigned int si, const struct nvmfd_cfg_ns *cn);
int nvmfd_tgt_ns_remove(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid);
/** nvmfd_tgt_ns_enable() - enable or disable namespace @nsid of subsystem
 *  @si (a disabled one is inactive for hosts; AEN when it changes).
 *  Return: 0, -ENOENT. */
int nvmfd_tgt_ns_enable(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid, bool enable);
void nvmfd_tgt_cfg_lock(struct nvmfd_tgt *tgt);
void nvmfd_tgt_cfg_unlock(struct nvmfd_tgt *tgt);
/** nvmfd_tgt_discovery_changed() - after an ACL edit: bump the discovery
 *  log's generation and send the Discovery Log Change AEN. */
void nvmfd_tgt_discovery_changed(struct nvmfd_tgt *tgt);

#endif /* NVMFD_INTERNAL_TARGET_H */
