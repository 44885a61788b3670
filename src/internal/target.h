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

#include <stdbool.h>
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
/** nvmfd_tgt_ns_remove() - see subsys.c: the backend is closed (its file
 *  lock released) once the namespace's submitted ios completed. */
int nvmfd_tgt_ns_remove(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid);
/** nvmfd_tgt_ns_enable() - enable or disable namespace @nsid of subsystem
 *  @si (a disabled one is inactive for hosts; AEN when it changes).
 *  Return: 0, -ENOENT. */
int nvmfd_tgt_ns_enable(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid, bool enable);
/**
 * nvmfd_tgt_ns_resize() - resize namespace @nsid of subsystem @si (see
 * nvmfd_bk_resize(): @size bytes, 0 = re-read the file's or device's
 * size); when the size changed, connected controllers get a Namespace
 * Attribute Changed AEN and the NSID in their Changed Namespace List, and
 * Identify Namespace reports the new NSZE.
 * @out: the size now (bytes), NULL if not wanted.
 * Return: 0, -ENOENT, the backend's error (nothing changed then).
 */
int nvmfd_tgt_ns_resize(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid, uint64_t size,
			uint64_t *out);

/*
 * Subsystems and listeners. The daemon keeps cfg->subsys[] and
 * cfg->ports[] in step with the target's tables: it calls these first and,
 * when they succeed, appends (or removes) the same entry of the config
 * under nvmfd_tgt_cfg_lock(). Port links (which subsystem a port exports)
 * are the config's only: the target reads them live, by port ID and NQN.
 */

/**
 * nvmfd_tgt_subsys_create() - add subsystem @cs (copied; its namespaces
 * opened) at index nr_subsys of a running target. It is reachable once the
 * daemon has appended @cs to cfg->subsys[] and linked it to a port.
 * Return: 0, -EEXIST (NQN in use), -ENOSPC (NVMFD_CFG_MAX_SUBSYS), -EINVAL,
 *         -ENOMEM, a backend open error. Nothing changes on failure.
 */
int nvmfd_tgt_subsys_create(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_subsys *cs);

/**
 * nvmfd_tgt_subsys_delete() - delete subsystem @si (as nvmet): its
 * controllers are torn down (queues closed), its namespaces take no new
 * command, their backends are flushed and closed once submitted ios have
 * completed, and the discovery log changes (AEN). The control thread never
 * waits for queues; the housekeeping thread finishes the job.
 * Return: 0, -ENOENT.
 */
int nvmfd_tgt_subsys_delete(struct nvmfd_tgt *tgt, unsigned int si);

/**
 * nvmfd_tgt_drop_ctrls() - tear down the controllers of subsystem @nqn
 * whose admin queue came in on port @portid (the subsystem was unlinked
 * from that port: nvmet's behaviour). Return: controllers shut down.
 */
unsigned int nvmfd_tgt_drop_ctrls(struct nvmfd_tgt *tgt, uint16_t portid, const char *nqn);

/**
 * nvmfd_tgt_port_add() - bind listener @p (copied) at index nr_ports and,
 * when the target runs, start accepting on it.
 * @bound: the service id bound (trsvcid "0" picks one), NULL if not wanted.
 * Return: 0, -ENOSPC (NVMFD_CFG_MAX_PORTS), -EEXIST (port ID in use),
 *         -EPROTONOSUPPORT, the transport's error (e.g. -EADDRINUSE).
 */
int nvmfd_tgt_port_add(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *p, uint16_t *bound);

/**
 * nvmfd_tgt_port_remove() - stop listener @idx, close every connection
 * that came in on it (their controllers are torn down) and wait until the
 * transport released them (bounded by their in-flight backend ios), then
 * free it. Return: 0, -ENOENT.
 */
int nvmfd_tgt_port_remove(struct nvmfd_tgt *tgt, unsigned int idx);

void nvmfd_tgt_cfg_lock(struct nvmfd_tgt *tgt);
void nvmfd_tgt_cfg_unlock(struct nvmfd_tgt *tgt);
/** nvmfd_tgt_discovery_changed() - after an ACL edit: bump the discovery
 *  log's generation and send the Discovery Log Change AEN. */
void nvmfd_tgt_discovery_changed(struct nvmfd_tgt *tgt);

#endif /* NVMFD_INTERNAL_TARGET_H */
