// SPDX-License-Identifier: MIT
/*
 * subsys.c - subsystems, namespaces, host access control and the
 * controller registry of the target core (see core.h for locking and
 * ownership).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal/log.h"
#include "internal/proc.h"
#include "target/core.h"
#include "internal/target.h"

#define COMP "target"

/**
 * nvmfd__tgt_now_ns() - CLOCK_MONOTONIC in nanoseconds.
 * Return: the time.
 * Context: any thread.
 */
uint64_t nvmfd__tgt_now_ns(void)
{
	return nvmfd__mono_ns();
}

/**
 * nvmfd__tgt_strpad() - copy a string into a space-padded wire field.
 * @dst:   field of @width bytes (not NUL-terminated on the wire).
 * @width: field width in bytes.
 * @s:     source string (borrowed), truncated to @width.
 * Context: any thread.
 */
void nvmfd__tgt_strpad(char *dst, size_t width, const char *s)
{
	size_t n = strnlen(s, width);

	memset(dst, ' ', width);
	memcpy(dst, s, n);
}

/**
 * nvmfd__tgt_win_put() - append @len bytes of a log page to a window.
 * @w:   the window: bytes [off, off + len) of the page land in buf.
 * @src: page bytes (borrowed), or NULL for zeroes.
 * @len: bytes.
 * Context: any thread.
 */
void nvmfd__tgt_win_put(struct nvmfd_tgt_win *w, const void *src, uint64_t len)
{
	uint64_t start = w->pos, end = w->pos + len;
	uint64_t wend = w->off + w->len;
	uint64_t lo = start > w->off ? start : w->off;
	uint64_t hi = end < wend ? end : wend;

	if (lo < hi) {
		if (src)
			memcpy(w->buf + (lo - w->off), (const uint8_t *)src + (lo - start), hi - lo);
		else
			memset(w->buf + (lo - w->off), 0, hi - lo);
	}
	w->pos = end;
}

/* 64-bit FNV-1a, used to derive stable identifiers from names. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Stable 16-byte identifier from (subnqn, nsid, salt). */
static void derive_id(uint8_t out[16], const char *nqn, uint32_t nsid, uint8_t salt)
{
	uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;

	h1 = fnv1a(h1, &salt, 1);
	h1 = fnv1a(h1, nqn, strlen(nqn));
	h1 = fnv1a(h1, &nsid, sizeof(nsid));
	h2 = fnv1a(h2, &nsid, sizeof(nsid));
	h2 = fnv1a(h2, nqn, strlen(nqn));
	h2 = fnv1a(h2, &salt, 1);
	memcpy(out, &h1, 8);
	memcpy(out + 8, &h2, 8);
}

static void ns_set_ids(struct nvmfd_tgt_ns *ns, const char *nqn, const struct nvmfd_cfg_ns *cn)
{
	if (cn->has_uuid) {
		memcpy(ns->uuid, cn->uuid, 16);
	} else {
		derive_id(ns->uuid, nqn, cn->nsid, 'u');
		/* RFC 4122: version 5-style (name based), variant 10b */
		ns->uuid[6] = (uint8_t)((ns->uuid[6] & 0x0f) | 0x50);
		ns->uuid[8] = (uint8_t)((ns->uuid[8] & 0x3f) | 0x80);
	}
	if (cn->has_nguid)
		memcpy(ns->nguid, cn->nguid, 16);
	else
		derive_id(ns->nguid, nqn, cn->nsid, 'g');
}

static int ns_cmp(const void *a, const void *b)
{
	const struct nvmfd_tgt_ns *x = a, *y = b;

	return x->nsid < y->nsid ? -1 : x->nsid > y->nsid;
}

/*
 * Backends that still hold unflushed writes (nvmfd_bk_dirty()) are closed
 * on threads of their own, up to CLOSE_PARALLEL at once, so that the stop
 * waits for the slowest fsync instead of their sum; or, without @sync_dirty
 * (the stop without stop_flush), closed without an fsync: the page cache
 * keeps the writes and the kernel writes them back as usual, which is all
 * an acknowledged write without a later Flush was promised (VWC = 1).
 */
#define CLOSE_PARALLEL 16

struct bk_closer {
	pthread_t thread;
	struct nvmfd_bk *bk; /* in: to close; NULL once closed */
	int ret;
};

static void *bk_closer_main(void *arg)
{
	struct bk_closer *c = arg;

	c->ret = nvmfd_bk_close(&c->bk);
	return NULL;
}

/* Close the backend of every slot that has one (target stop, or a
 * subsystem that never started); *@nr_dirty (may be NULL) counts the
 * namespaces that held writes no Flush covered. */
static void subsys_close_backends(struct nvmfd_tgt_subsys *s, bool sync_dirty,
				  unsigned int *nr_dirty, int *first_err)
{
	struct bk_closer cl[CLOSE_PARALLEL];
	unsigned int idx[CLOSE_PARALLEL], n = 0;

	for (unsigned int i = 0; i <= s->nr_ns; i++) {
		bool dirty = i < s->nr_ns && s->ns[i].bk && nvmfd_bk_dirty(s->ns[i].bk);
		bool flush = dirty && sync_dirty;

		if (dirty) {
			NVMFD_INFO(COMP, "subsystem %s nsid %u: writes no Flush covered: %s",
				   s->nqn, s->ns[i].nsid,
				   flush ? "fsync at stop (stop_flush)" :
					   "left to the kernel's writeback, no fsync at stop");
			if (nr_dirty)
				(*nr_dirty)++;
		}
		if (dirty && !flush) {
			int ret = nvmfd_bk_close_nosync(&s->ns[i].bk);

			if (ret < 0) {
				NVMFD_ERR(COMP, "subsystem %s nsid %u: close: %s", s->nqn,
					  s->ns[i].nsid, strerror(-ret));
				if (first_err && !*first_err)
					*first_err = ret;
			}
			s->ns[i].state = NVMFD_TGT_NS_FREE;
		}
		/* start the dirty ones to flush; join them when the batch is
		 * full or at the end */
		if (flush) {
			cl[n].bk = s->ns[i].bk;
			cl[n].ret = 0;
			if (pthread_create(&cl[n].thread, NULL, bk_closer_main, &cl[n]) == 0) {
				s->ns[i].bk = NULL;
				idx[n++] = i;
			}
		}
		if (n && (n == CLOSE_PARALLEL || i == s->nr_ns)) {
			for (unsigned int k = 0; k < n; k++) {
				pthread_join(cl[k].thread, NULL);
				if (cl[k].ret < 0) {
					NVMFD_ERR(COMP, "subsystem %s nsid %u: close: %s", s->nqn,
						  s->ns[idx[k]].nsid, strerror(-cl[k].ret));
					if (first_err && !*first_err)
						*first_err = cl[k].ret;
				}
				s->ns[idx[k]].state = NVMFD_TGT_NS_FREE;
			}
			n = 0;
		}
	}
	for (unsigned int i = 0; i < s->nr_ns; i++) {
		int ret;

		if (!s->ns[i].bk)
			continue;
		ret = nvmfd_bk_close(&s->ns[i].bk);
		if (ret < 0) {
			NVMFD_ERR(COMP, "subsystem %s nsid %u: close: %s", s->nqn, s->ns[i].nsid,
				  strerror(-ret));
			if (first_err && !*first_err)
				*first_err = ret;
		}
		s->ns[i].state = NVMFD_TGT_NS_FREE;
	}
}

/* Open @cn's backend into @bk, logging what went wrong. Return: 0 or the
 * backend's error (-EBUSY: another process exports the path). */
static int ns_open_bk(const struct nvmfd_tgt_subsys *s, const struct nvmfd_cfg_ns *cn,
		      struct nvmfd_bk **bk)
{
	struct nvmfd_bk_opts opts = cn->bk;
	int ret;

	if (opts.type == NVMFD_BK_FILE || opts.type == NVMFD_BK_BDEV)
		opts.path = cn->path;
	ret = nvmfd_bk_open(&opts, bk);
	if (ret == -EBUSY && opts.path)
		NVMFD_ERR(COMP, "subsystem %s nsid %u: %s is in use: another process "
			  "exports it (or it is mounted, or a namespace removed moments ago "
			  "still drains); only read-only exports (option 'readonly') may "
			  "share a path", s->nqn, cn->nsid, opts.path);
	else if (ret < 0)
		NVMFD_ERR(COMP, "subsystem %s nsid %u: %s%s%s", s->nqn, cn->nsid,
			  opts.path ? opts.path : "", opts.path ? ": " : "", strerror(-ret));
	return ret;
}

/* Fill slot @ns with the opened @bk for @cn; the NSID is published last
 * (release): readers that see it see the rest. */
static void ns_fill(struct nvmfd_tgt_subsys *s, struct nvmfd_tgt_ns *ns,
		    const struct nvmfd_cfg_ns *cn, struct nvmfd_bk *bk)
{
	ns->bk = bk;
	ns->bk_type = nvmfd_bk_get_type(bk);
	ns->read_only = nvmfd_bk_is_read_only(bk);
	ns->lba_shift = nvmfd_bk_lba_shift(bk);
	__atomic_store_n(&ns->size, nvmfd_bk_size(bk), __ATOMIC_RELAXED);
	__atomic_store_n(&ns->nsze, nvmfd_bk_size(bk) >> ns->lba_shift, __ATOMIC_RELAXED);
	snprintf(ns->path, sizeof(ns->path), "%.63s", cn->path[0] ? cn->path : "-");
	ns_set_ids(ns, s->nqn, cn);
	__atomic_store_n(&ns->state, NVMFD_TGT_NS_LIVE, __ATOMIC_RELAXED);
	__atomic_store_n(&ns->enabled, cn->enable, __ATOMIC_RELEASE);
	__atomic_store_n(&ns->nsid, cn->nsid, __ATOMIC_RELEASE);
}

static void subsys_free(struct nvmfd_tgt_subsys *s)
{
	struct nvmfd_tgt_ctrl *c, *n;

	for (c = s->ctrls; c; c = n) {
		n = c->next;
		c->registered = false;
		pthread_mutex_destroy(&c->err_lock);
		free(c->sqs);
		free(c->qstats);
		free(c);
	}
	free((void *)s->cfg);
	free(s);
}

/* A new subsystem object for @cs with its namespaces opened (not in the
 * table yet). Return: 0, -EINVAL (bad or duplicate NSID), -ENOMEM, the
 * backend error; nothing is left open on failure. */
static int subsys_open(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_subsys *cs,
		       struct nvmfd_tgt_subsys **out)
{
	struct nvmfd_tgt_subsys *s = calloc(1, sizeof(*s));
	struct nvmfd_cfg_subsys *copy = malloc(sizeof(*copy));
	int ret = 0;

	if (!s || !copy) {
		free(s);
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, cs, sizeof(*copy));
	s->tgt = tgt;
	s->cfg = copy;
	s->idx = tgt->next_subsys_idx++;
	snprintf(s->nqn, sizeof(s->nqn), "%s", cs->nqn);
	s->next_cntlid = cs->cntlid_min;
	for (unsigned int i = 0; i < cs->nr_ns; i++) {
		const struct nvmfd_cfg_ns *cn = &cs->ns[i];
		struct nvmfd_bk *bk = NULL;

		if (cn->nsid == 0 || cn->nsid == 0xffffffff) {
			NVMFD_ERR(COMP, "subsystem %s: invalid nsid %u", s->nqn, cn->nsid);
			ret = -EINVAL;
			goto out_close;
		}
		ret = ns_open_bk(s, cn, &bk);
		if (ret < 0)
			goto out_close;
		ns_fill(s, &s->ns[s->nr_ns++], cn, bk);
	}
	qsort(s->ns, s->nr_ns, sizeof(s->ns[0]), ns_cmp);
	for (unsigned int i = 1; i < s->nr_ns; i++) {
		if (s->ns[i].nsid == s->ns[i - 1].nsid) {
			NVMFD_ERR(COMP, "subsystem %s: duplicate nsid %u", s->nqn, s->ns[i].nsid);
			ret = -EINVAL;
			goto out_close;
		}
	}
	*out = s;
	return 0;

out_close:
	subsys_close_backends(s, true, NULL, NULL);
	subsys_free(s);
	return ret;
}

/**
 * nvmfd__tgt_core_create() - build subsystems and open every namespace
 * backend of @cfg (no runtime, no listeners).
 * @cfg: configuration, borrowed for the target's lifetime.
 * @out: the new target core.
 * Return: 0, -EINVAL (bad nsid), -ENOMEM, or the backend open error; on
 *         failure every backend opened so far is closed again.
 * Context: control thread.
 */
int nvmfd__tgt_core_create(const struct nvmfd_cfg *cfg, struct nvmfd_tgt **out)
{
	struct nvmfd_tgt *tgt;
	int ret;

	*out = NULL;
	if (cfg->nr_subsys > NVMFD_CFG_MAX_SUBSYS || cfg->nr_ports > NVMFD_CFG_MAX_PORTS)
		return -EINVAL;
	tgt = calloc(1, sizeof(*tgt));
	if (!tgt)
		return -ENOMEM;
	tgt->cfg = cfg;
	pthread_mutex_init(&tgt->lock, NULL);
	pthread_cond_init(&tgt->bk_closers_cond, NULL);
	pthread_mutex_init(&tgt->port_lock, NULL);
	pthread_mutex_init(&tgt->auth_fail_lock, NULL);
	{
		/* per-queue rings need no runtime; target.c swaps in the
		 * configured pool (shared rings) once the runtime exists */
		struct nvmfd_cq_pool_opts po = { .iopoll = cfg->exec.backend_poll };

		ret = nvmfd_cq_pool_create(NULL, &po, &tgt->cqpool);
		if (ret < 0)
			goto out_free_tgt;
	}
	tgt->disc = calloc(1, sizeof(*tgt->disc));
	if (!tgt->disc) {
		ret = -ENOMEM;
		goto out_free_tgt;
	}
	for (unsigned int i = 0; i < cfg->nr_subsys; i++) {
		ret = subsys_open(tgt, &cfg->subsys[i], &tgt->subsys[i]);
		if (ret < 0)
			goto out_close_backends;
		tgt->nr_subsys = i + 1;
	}
	tgt->disc->tgt = tgt;
	tgt->disc->idx = -1;
	tgt->disc->is_disc = true;
	tgt->disc->refs = 1;
	snprintf(tgt->disc->nqn, sizeof(tgt->disc->nqn), "%s", NVMFD_DISC_NQN);
	tgt->disc->next_cntlid = 1;
	tgt->genctr = 1;
	*out = tgt;
	return 0;

out_close_backends:
	for (unsigned int i = 0; i < tgt->nr_subsys; i++) {
		subsys_close_backends(tgt->subsys[i], true, NULL, NULL);
		subsys_free(tgt->subsys[i]);
	}
out_free_tgt:
	free(tgt->disc);
	nvmfd_cq_pool_destroy(&tgt->cqpool);
	pthread_mutex_destroy(&tgt->port_lock);
	pthread_mutex_destroy(&tgt->auth_fail_lock);
	pthread_cond_destroy(&tgt->bk_closers_cond);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
	return ret;
}

/* Until every closer thread (ns_close_drained()) is done. */
static void wait_closers(struct nvmfd_tgt *tgt)
{
	pthread_mutex_lock(&tgt->lock);
	while (tgt->bk_closers)
		pthread_cond_wait(&tgt->bk_closers_cond, &tgt->lock);
	pthread_mutex_unlock(&tgt->lock);
}

/**
 * nvmfd__tgt_core_close_backends() - close every backend, deleted
 * subsystems' included; those holding writes no Flush covered are
 * fsynced first when @sync_dirty (the stop with stop_flush), else left to
 * the kernel's writeback.
 * @tgt:        target whose queues are all gone.
 * @sync_dirty: fsync the dirty ones (nvmfd_bk_dirty()).
 * @nr_dirty:   out (may be NULL): how many were dirty.
 * Return: 0 or the first close error (-errno); all are closed regardless.
 * Context: control thread; idempotent (a second call closes nothing).
 */
int nvmfd__tgt_core_close_backends(struct nvmfd_tgt *tgt, bool sync_dirty, unsigned int *nr_dirty)
{
	int err = 0;

	if (nr_dirty)
		*nr_dirty = 0;
	if (tgt->bk_closed)
		return 0;
	/* removed namespaces still being fsynced (stop_flush) */
	wait_closers(tgt);
	for (unsigned int i = 0; i < tgt->nr_subsys; i++)
		subsys_close_backends(tgt->subsys[i], sync_dirty, nr_dirty, &err);
	for (struct nvmfd_tgt_subsys *z = tgt->zombies; z; z = z->zombie_next)
		subsys_close_backends(z, sync_dirty, nr_dirty, &err);
	tgt->bk_closed = true;
	return err;
}

/**
 * nvmfd__tgt_core_destroy() - close backends and free the core; NULLs *tgt.
 * @tgt: target core, no queue may still be connected (controllers left in
 *       the registry are freed without notice).
 * Context: control thread.
 */
void nvmfd__tgt_core_destroy(struct nvmfd_tgt **tgtp)
{
	struct nvmfd_tgt *tgt = *tgtp;
	struct nvmfd_tgt_subsys *z, *n;

	if (!tgt)
		return;
	nvmfd__tgt_core_close_backends(tgt, true, NULL);
	for (unsigned int i = 0; i < tgt->nr_subsys; i++)
		subsys_free(tgt->subsys[i]);
	for (z = tgt->zombies; z; z = n) {
		n = z->zombie_next;
		subsys_free(z);
	}
	if (tgt->disc)
		subsys_free(tgt->disc);
	nvmfd_cq_pool_destroy(&tgt->cqpool);
	pthread_mutex_destroy(&tgt->port_lock);
	pthread_cond_destroy(&tgt->bk_closers_cond);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
	*tgtp = NULL;
}

/**
 * nvmfd__tgt_subsys_find_get() - subsystem (or the discovery subsystem) by
 * NQN, with a reference.
 * @tgt: target.
 * @nqn: NUL-terminated NQN (borrowed).
 * Return: the subsystem (drop it with nvmfd__tgt_subsys_put()) or NULL.
 * Context: any thread; takes tgt->lock.
 */
struct nvmfd_tgt_subsys *nvmfd__tgt_subsys_find_get(struct nvmfd_tgt *tgt, const char *nqn)
{
	struct nvmfd_tgt_subsys *s = NULL;

	if (!strcmp(nqn, NVMFD_DISC_NQN))
		s = tgt->disc;
	pthread_mutex_lock(&tgt->lock);
	for (unsigned int i = 0; !s && i < tgt->nr_subsys; i++) {
		if (!strcmp(tgt->subsys[i]->nqn, nqn))
			s = tgt->subsys[i];
	}
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&tgt->lock);
	return s;
}

/**
 * nvmfd__tgt_subsys_put() - drop a reference; a deleted subsystem is
 * freed by the housekeeping pass once none is left (nvmfd__tgt_reap()).
 * @s: subsystem.
 * Context: any thread.
 */
void nvmfd__tgt_subsys_put(struct nvmfd_tgt_subsys *s)
{
	__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
}

/**
 * nvmfd__tgt_live_subsys_locked() - the daemon's live config of @s (its
 * ACL: allow_any_host, hosts), found by NQN.
 * @s: subsystem (not discovery).
 * Return: the config entry, NULL when the daemon no longer has it
 *         (deleted, or not yet added: nothing is allowed then).
 * Context: tgt->lock held (the daemon edits the config under it).
 */
const struct nvmfd_cfg_subsys *nvmfd__tgt_live_subsys_locked(const struct nvmfd_tgt_subsys *s)
{
	const struct nvmfd_cfg *cfg = s->tgt->cfg;

	if (s->is_disc || s->deleted || !cfg)
		return NULL;
	for (unsigned int i = 0; i < cfg->nr_subsys && i < NVMFD_CFG_MAX_SUBSYS; i++)
		if (!strcmp(cfg->subsys[i].nqn, s->nqn))
			return &cfg->subsys[i];
	return NULL;
}

/**
 * nvmfd__tgt_bound_locked() - the service id bound by the listener with
 * port ID @portid (trsvcid "0" binds an ephemeral one), 0 if none.
 * Context: tgt->lock or port_lock held.
 */
uint16_t nvmfd__tgt_bound_locked(const struct nvmfd_tgt *tgt, uint16_t portid)
{
	for (unsigned int i = 0; i < tgt->nr_ports; i++)
		if (tgt->ports[i] && tgt->ports[i]->cfg.portid == portid)
			return tgt->ports[i]->bound;
	return 0;
}

/**
 * nvmfd__tgt_subsys_on_port() - is @s exported on @port?
 * @s:    subsystem; the discovery subsystem is on every port.
 * @port: listener config (a port slot's copy: only its portid is used, the
 *        links are the daemon's live config), or NULL (no port: every
 *        subsystem, unit tests).
 * Return: true if it is.
 * Context: any thread; takes tgt->lock.
 */
bool nvmfd__tgt_subsys_on_port(const struct nvmfd_tgt_subsys *s, const struct nvmfd_cfg_port *port)
{
	const struct nvmfd_cfg *cfg = s->tgt->cfg;
	bool on = false;

	if (s->is_disc || !port)
		return true;
	pthread_mutex_lock(&s->tgt->lock);
	for (unsigned int pi = 0; !on && pi < cfg->nr_ports && pi < NVMFD_CFG_MAX_PORTS; pi++) {
		const struct nvmfd_cfg_port *p = &cfg->ports[pi];

		if (p->portid != port->portid)
			continue;
		for (unsigned int i = 0; i < p->nr_subsys && i < NVMFD_CFG_MAX_SUBSYS; i++)
			if (p->subsys_idx[i] < cfg->nr_subsys &&
			    !strcmp(cfg->subsys[p->subsys_idx[i]].nqn, s->nqn))
				on = !s->deleted;
	}
	pthread_mutex_unlock(&s->tgt->lock);
	return on;
}

/**
 * nvmfd__tgt_host_allowed_locked() - host ACL check.
 * @s:       subsystem (discovery: every host is allowed).
 * @hostnqn: NUL-terminated host NQN (borrowed).
 * Return: true if @hostnqn may connect to / see @s (never for a subsystem
 *         the daemon's config no longer has).
 * Context: tgt->lock held.
 */
bool nvmfd__tgt_host_allowed_locked(const struct nvmfd_tgt_subsys *s, const char *hostnqn)
{
	const struct nvmfd_cfg_subsys *cs;
	bool ok;

	if (s->is_disc)
		return true;
	cs = nvmfd__tgt_live_subsys_locked(s);
	if (!cs)
		return false;
	ok = cs->allow_any_host;
	for (unsigned int i = 0; !ok && i < cs->nr_hosts && i < NVMFD_CFG_MAX_HOSTS; i++)
		ok = !strncmp(cs->hosts[i], hostnqn, sizeof(cs->hosts[i]));
	return ok;
}

/**
 * nvmfd__tgt_host_allowed() - nvmfd__tgt_host_allowed_locked() taking
 * tgt->lock. Context: any thread.
 */
bool nvmfd__tgt_host_allowed(const struct nvmfd_tgt_subsys *s, const char *hostnqn)
{
	bool ok;

	if (s->is_disc)
		return true;
	/* the daemon edits the host list live under nvmfd_tgt_cfg_lock() */
	pthread_mutex_lock(&s->tgt->lock);
	ok = nvmfd__tgt_host_allowed_locked(s, hostnqn);
	pthread_mutex_unlock(&s->tgt->lock);
	return ok;
}

/**
 * nvmfd__tgt_ns_find() - an enabled namespace by NSID.
 * @s:    subsystem.
 * @nsid: namespace ID from the wire.
 * Return: the namespace, or NULL if absent or disabled. The slot stays
 *         valid memory, but its backend may only be used between
 *         nvmfd__tgt_ns_get() and nvmfd__tgt_ns_put().
 * Context: any thread (data path: no lock).
 */
struct nvmfd_tgt_ns *nvmfd__tgt_ns_find(struct nvmfd_tgt_subsys *s, uint32_t nsid)
{
	/* slots are reused live (nvmfd_tgt_ns_add()), so not sorted: scan
	 * them all (at most NVMFD_CFG_MAX_NS) */
	unsigned int n = __atomic_load_n(&s->nr_ns, __ATOMIC_ACQUIRE);

	if (nsid == 0)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		struct nvmfd_tgt_ns *ns = &s->ns[i];

		if (__atomic_load_n(&ns->nsid, __ATOMIC_ACQUIRE) == nsid &&
		    __atomic_load_n(&ns->enabled, __ATOMIC_ACQUIRE))
			return ns;
	}
	return NULL;
}

/**
 * nvmfd__tgt_ns_get() - count one backend io on @ns (or pin it while its
 * fields are read), if it still is namespace @nsid (not removed since the
 * command found it).
 * @ns:   slot from nvmfd__tgt_ns_find().
 * @nsid: the command's NSID.
 * Return: true: ns->bk may be used, and the slot is not closed or reused,
 *         until the matching nvmfd__tgt_ns_put(); false: the namespace is
 *         gone (nothing counted).
 * The count goes up before the NSID is checked, and removal clears the
 * NSID before it reads the count (both seq_cst): either the io sees the
 * removal, or removal sees the io and defers the close.
 * Context: queue owner.
 */
bool nvmfd__tgt_ns_get(struct nvmfd_tgt_ns *ns, uint32_t nsid)
{
	__atomic_add_fetch(&ns->inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ns->nsid, __ATOMIC_SEQ_CST) == nsid)
		return true;
	__atomic_sub_fetch(&ns->inflight, 1, __ATOMIC_SEQ_CST);
	return false;
}

/** nvmfd__tgt_ns_put() - the io counted by nvmfd__tgt_ns_get() completed
 *  (a drained, removed namespace is closed by the next nvmfd__tgt_reap()).
 *  Context: queue owner. */
void nvmfd__tgt_ns_put(struct nvmfd_tgt_ns *ns)
{
	__atomic_sub_fetch(&ns->inflight, 1, __ATOMIC_SEQ_CST);
}

/* The live slot of a namespace by NSID, enabled or not. Context: control
 * thread. */
static struct nvmfd_tgt_ns *ns_slot(struct nvmfd_tgt_subsys *s, uint32_t nsid)
{
	for (unsigned int i = 0; i < s->nr_ns; i++)
		if (__atomic_load_n(&s->ns[i].state, __ATOMIC_RELAXED) == NVMFD_TGT_NS_LIVE &&
		    s->ns[i].nsid == nsid)
			return &s->ns[i];
	return NULL;
}


/* Every controller of @s: @nsid changed (Changed Namespace List, AEN). */
static void subsys_ns_changed_locked(struct nvmfd_tgt_subsys *s, uint32_t nsid);

/**
 * nvmfd_tgt_ns_add() - open @cn's backend and add it to subsystem @si of a
 * running target; connected controllers get a Namespace Attribute Changed
 * AEN and the NSID in their Changed Namespace List.
 * @tgt: target.
 * @si:  index in cfg->subsys[].
 * @cn:  the namespace (nsid set, 1..NVMFD_CFG_MAX_NSID), borrowed for the
 *       call.
 * Return: 0; -ENOENT (no subsystem @si); -EEXIST (the NSID is in use);
 *         -ENOSPC (all NVMFD_CFG_MAX_NS slots used, draining ones
 *         included); -EINVAL (bad NSID); the backend's open error (-EBUSY:
 *         the path is exported elsewhere, or by a removed namespace that
 *         still drains). Nothing changes on failure.
 * Context: control thread (one at a time); the data path runs meanwhile.
 */
int nvmfd_tgt_ns_add(struct nvmfd_tgt *tgt, unsigned int si, const struct nvmfd_cfg_ns *cn)
{
	struct nvmfd_tgt_subsys *s;
	struct nvmfd_tgt_ns *ns = NULL;
	struct nvmfd_bk *bk = NULL;
	unsigned int slot;
	int ret;

	if (si >= tgt->nr_subsys)
		return -ENOENT;
	s = tgt->subsys[si];
	if (cn->nsid == 0 || cn->nsid == 0xffffffff)
		return -EINVAL;
	if (ns_slot(s, cn->nsid))
		return -EEXIST;
	nvmfd__tgt_reap(tgt); /* a drained slot (or path) may come free */
	pthread_mutex_lock(&tgt->lock);
	for (slot = 0; slot < s->nr_ns &&
		       __atomic_load_n(&s->ns[slot].state, __ATOMIC_RELAXED) != NVMFD_TGT_NS_FREE;
	     slot++)
		;
	pthread_mutex_unlock(&tgt->lock);
	if (slot >= NVMFD_CFG_MAX_NS)
		return -ENOSPC;
	ret = ns_open_bk(s, cn, &bk);
	if (ret < 0)
		return ret;
	ns = &s->ns[slot];
	pthread_mutex_lock(&tgt->lock);
	/* a reused slot keeps its (zero) in-flight count: a late
	 * nvmfd__tgt_ns_get() of the old namespace may still touch it */
	ns_fill(s, ns, cn, bk);
	if (slot == s->nr_ns) /* publish a new slot: readers load nr_ns with acquire */
		__atomic_store_n(&s->nr_ns, s->nr_ns + 1, __ATOMIC_RELEASE);
	if (cn->enable)
		subsys_ns_changed_locked(s, cn->nsid);
	pthread_mutex_unlock(&tgt->lock);
	NVMFD_INFO(COMP, "subsystem %s: namespace %u added (%s)", s->nqn, cn->nsid, ns->path);
	return 0;
}

/* Tear @c down (as nvmet's fatal error): held AERs fail with Internal
 * Error|DNR, every queue is shut down. Context: tgt->lock held. */
static void ctrl_kill_locked(struct nvmfd_tgt_ctrl *c)
{
	nvmfd__tgt_ctrl_fail_aers_locked(c, nvmfd__tgt_dnr(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL));
	nvmfd__tgt_ctrl_shutdown_locked(c);
}

/* Take @ns out of service: new commands fail with Invalid Namespace, the
 * backend is closed once its ios drained (nvmfd__tgt_reap()). */
static void ns_retire_locked(struct nvmfd_tgt_ns *ns)
{
	__atomic_store_n(&ns->enabled, false, __ATOMIC_RELEASE);
	__atomic_store_n(&ns->nsid, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ns->state, NVMFD_TGT_NS_DRAINING, __ATOMIC_RELAXED);
}

/**
 * nvmfd_tgt_ns_remove() - remove namespace @nsid from subsystem @si of a
 * running target: new commands to it fail with Invalid Namespace, every
 * controller gets the AEN and the Changed Namespace List entry.
 * @tgt: target.  @si: index in cfg->subsys[].  @nsid: the namespace.
 * Return: 0; -ENOENT (no such subsystem or namespace).
 *
 * The backend is flushed and closed (its file lock released) and the slot
 * freed as soon as the namespace's submitted backend ios have completed:
 * here when none is in flight, else by the housekeeping thread's next pass
 * (every NVMFD_TGT_HK_TICK_MS). The control thread never waits for them.
 * Context: control thread.
 */
int nvmfd_tgt_ns_remove(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid)
{
	struct nvmfd_tgt_subsys *s;
	struct nvmfd_tgt_ns *ns;

	if (si >= tgt->nr_subsys || nsid == 0)
		return -ENOENT;
	s = tgt->subsys[si];
	ns = ns_slot(s, nsid);
	if (!ns)
		return -ENOENT;
	pthread_mutex_lock(&tgt->lock);
	ns_retire_locked(ns);
	subsys_ns_changed_locked(s, nsid);
	pthread_mutex_unlock(&tgt->lock);
	NVMFD_INFO(COMP, "subsystem %s: namespace %u removed", s->nqn, nsid);
	nvmfd__tgt_reap(tgt);
	return 0;
}

/* Claim one drained slot of @s (DRAINING, nothing in flight) for closing.
 * Context: tgt->lock held. */
static struct nvmfd_tgt_ns *claim_drained_locked(struct nvmfd_tgt_subsys *s)
{
	for (unsigned int i = 0; i < s->nr_ns; i++) {
		struct nvmfd_tgt_ns *ns = &s->ns[i];

		if (ns->state == NVMFD_TGT_NS_DRAINING &&
		    __atomic_load_n(&ns->inflight, __ATOMIC_SEQ_CST) == 0) {
			__atomic_store_n(&ns->state, NVMFD_TGT_NS_CLOSING, __ATOMIC_RELAXED);
			return ns;
		}
	}
	return NULL;
}

static bool subsys_drained_locked(const struct nvmfd_tgt_subsys *s)
{
	for (unsigned int i = 0; i < s->nr_ns; i++)
		if (s->ns[i].state != NVMFD_TGT_NS_FREE)
			return false;
	return !s->ctrls && __atomic_load_n(&s->refs, __ATOMIC_ACQUIRE) == 0;
}

/* The drained namespace @ns is closed: free its slot. @closer: it was
 * closed on a closer thread (ns_closer_main()). */
static void ns_closed(struct nvmfd_tgt *tgt, struct nvmfd_tgt_subsys *s,
		      struct nvmfd_tgt_ns *ns, int ret, bool closer)
{
	if (ret < 0)
		NVMFD_ERR(COMP, "subsystem %s: removed namespace (%s): close: %s", s->nqn,
			  ns->path, strerror(-ret));
	else
		NVMFD_INFO(COMP, "subsystem %s: removed namespace (%s) drained and closed", s->nqn,
			   ns->path);
	pthread_mutex_lock(&tgt->lock);
	ns->bk = NULL;
	__atomic_store_n(&ns->state, NVMFD_TGT_NS_FREE, __ATOMIC_RELAXED);
	if (closer && --tgt->bk_closers == 0)
		pthread_cond_broadcast(&tgt->bk_closers_cond);
	pthread_mutex_unlock(&tgt->lock);
}

struct ns_closer {
	struct nvmfd_tgt *tgt;
	struct nvmfd_tgt_subsys *s;
	struct nvmfd_tgt_ns *ns;
	struct nvmfd_bk *bk;
};

/* A removed namespace's fsync and close (stop_flush) on a thread of its
 * own: the slot, the subsystem (a deleted one stays a zombie until its
 * slots are free) and the target outlive it (the stop waits for
 * tgt->bk_closers). */
static void *ns_closer_main(void *arg)
{
	struct ns_closer *c = arg;
	int ret = nvmfd_bk_close(&c->bk);

	ns_closed(c->tgt, c->s, c->ns, ret, true);
	free(c);
	return NULL;
}

/*
 * Close the drained backend @bk of @ns (CLOSING, claimed by the caller)
 * as the stop does: one holding writes no Flush covered is closed without
 * an fsync, its writes left to the kernel's writeback (the promise of an
 * acknowledged write without a later Flush, VWC = 1), unless stop_flush
 * asks for the fsync; that one runs on a detached thread of its own, so
 * neither the control thread (the removal's RPC) nor housekeeping
 * (keep-alive expiry) waits for the device (an fsync took 0.9-17 s here,
 * doc/nvmfd.md SIGNALS).
 */
static void ns_close_drained(struct nvmfd_tgt *tgt, struct nvmfd_tgt_subsys *s,
			     struct nvmfd_tgt_ns *ns, struct nvmfd_bk *bk)
{
	bool flush = tgt->cfg->stop_flush;
	struct ns_closer *c;
	pthread_attr_t attr;
	pthread_t th;
	int ret;

	if (!nvmfd_bk_dirty(bk)) {
		ns_closed(tgt, s, ns, nvmfd_bk_close(&bk), false);
		return;
	}
	/* ns->nsid is cleared by the removal: the path names it */
	NVMFD_INFO(COMP, "subsystem %s: removed namespace (%s): writes no Flush covered: %s",
		   s->nqn, ns->path, flush ? "fsync at removal (stop_flush), on a thread of its own" :
			   "left to the kernel's writeback, no fsync at removal");
	if (!flush) {
		ns_closed(tgt, s, ns, nvmfd_bk_close_nosync(&bk), false);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		*c = (struct ns_closer){ .tgt = tgt, .s = s, .ns = ns, .bk = bk };
		pthread_mutex_lock(&tgt->lock);
		tgt->bk_closers++;
		pthread_mutex_unlock(&tgt->lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&th, &attr, ns_closer_main, c);
		pthread_attr_destroy(&attr);
		if (ret == 0)
			return;
		pthread_mutex_lock(&tgt->lock);
		tgt->bk_closers--;
		pthread_mutex_unlock(&tgt->lock);
		free(c);
	}
	NVMFD_WARN(COMP, "subsystem %s: removed namespace (%s): no thread for the fsync: done here",
		   s->nqn, ns->path);
	ns_closed(tgt, s, ns, nvmfd_bk_close(&bk), false);
}

/**
 * nvmfd__tgt_reap() - close the backends of removed namespaces whose
 * backend ios have all completed (close, file lock released, slot free;
 * one holding writes no Flush covered without an fsync, or with
 * stop_flush fsynced on a thread of its own: ns_close_drained()), and free
 * deleted subsystems nobody holds any more.
 * @tgt: target.
 * Return: backends closed or handed to a closer thread.
 * Context: control or housekeeping thread (not a queue's); takes tgt->lock,
 *          closes outside it; never waits for an fsync.
 */
unsigned int nvmfd__tgt_reap(struct nvmfd_tgt *tgt)
{
	unsigned int closed = 0;

	for (;;) {
		struct nvmfd_tgt_subsys *s = NULL, **zp;
		struct nvmfd_tgt_ns *ns = NULL;
		struct nvmfd_bk *bk;
		uint32_t i;

		pthread_mutex_lock(&tgt->lock);
		if (tgt->bk_closed) {
			pthread_mutex_unlock(&tgt->lock);
			break;
		}
		for (i = 0; !ns && i < tgt->nr_subsys; i++)
			ns = claim_drained_locked(s = tgt->subsys[i]);
		for (struct nvmfd_tgt_subsys *z = tgt->zombies; !ns && z; z = z->zombie_next)
			ns = claim_drained_locked(s = z);
		if (!ns) {
			/* deleted subsystems with nothing left */
			for (zp = &tgt->zombies; *zp;) {
				struct nvmfd_tgt_subsys *z = *zp;

				if (subsys_drained_locked(z)) {
					*zp = z->zombie_next;
					NVMFD_INFO(COMP, "subsystem %s: released", z->nqn);
					free((void *)z->cfg);
					free(z);
				} else {
					zp = &z->zombie_next;
				}
			}
			pthread_mutex_unlock(&tgt->lock);
			break;
		}
		bk = ns->bk;
		pthread_mutex_unlock(&tgt->lock);
		ns_close_drained(tgt, s, ns, bk);
		closed++;
	}
	return closed;
}

/**
 * nvmfd_tgt_ns_resize() - see internal/target.h.
 */
int nvmfd_tgt_ns_resize(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid, uint64_t size,
			uint64_t *out)
{
	struct nvmfd_tgt_subsys *s;
	struct nvmfd_tgt_ns *ns;
	uint64_t bytes = 0, old;
	int ret;

	if (si >= tgt->nr_subsys || nsid == 0)
		return -ENOENT;
	s = tgt->subsys[si];
	ns = ns_slot(s, nsid);
	if (!ns)
		return -ENOENT;
	old = __atomic_load_n(&ns->size, __ATOMIC_RELAXED);
	ret = nvmfd_bk_resize(ns->bk, size, &bytes);
	if (ret < 0)
		return ret;
	if (out)
		*out = bytes;
	if (bytes == old)
		return 0;
	pthread_mutex_lock(&tgt->lock);
	__atomic_store_n(&ns->size, bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&ns->nsze, bytes >> ns->lba_shift, __ATOMIC_RELEASE);
	if (__atomic_load_n(&ns->enabled, __ATOMIC_RELAXED))
		subsys_ns_changed_locked(s, nsid);
	pthread_mutex_unlock(&tgt->lock);
	NVMFD_INFO(COMP, "subsystem %s: namespace %u resized from %llu to %llu bytes", s->nqn,
		   nsid, (unsigned long long)old, (unsigned long long)bytes);
	return 0;
}

/**
 * nvmfd_tgt_subsys_create() - see internal/target.h.
 */
int nvmfd_tgt_subsys_create(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_subsys *cs)
{
	struct nvmfd_tgt_subsys *s;
	int ret;

	if (tgt->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
		return -ENOSPC;
	if (!strcmp(cs->nqn, NVMFD_DISC_NQN))
		return -EEXIST;
	for (unsigned int i = 0; i < tgt->nr_subsys; i++)
		if (!strcmp(tgt->subsys[i]->nqn, cs->nqn))
			return -EEXIST;
	ret = subsys_open(tgt, cs, &s);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&tgt->lock);
	tgt->subsys[tgt->nr_subsys++] = s;
	pthread_mutex_unlock(&tgt->lock);
	NVMFD_INFO(COMP, "subsystem %s: created (%u namespace(s))", s->nqn, s->nr_ns);
	return 0;
}

/**
 * nvmfd_tgt_subsys_delete() - see internal/target.h.
 */
int nvmfd_tgt_subsys_delete(struct nvmfd_tgt *tgt, unsigned int si)
{
	struct nvmfd_tgt_subsys *s;
	unsigned int nc = 0;

	if (si >= tgt->nr_subsys)
		return -ENOENT;
	pthread_mutex_lock(&tgt->lock);
	s = tgt->subsys[si];
	memmove(&tgt->subsys[si], &tgt->subsys[si + 1],
		(tgt->nr_subsys - si - 1) * sizeof(tgt->subsys[0]));
	tgt->subsys[--tgt->nr_subsys] = NULL;
	s->deleted = true;
	for (unsigned int i = 0; i < s->nr_ns; i++)
		if (s->ns[i].state == NVMFD_TGT_NS_LIVE)
			ns_retire_locked(&s->ns[i]);
	/* as nvmet: every controller of the subsystem is torn down; its
	 * submitted ios complete before the backends are closed */
	for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next, nc++) {
		ctrl_kill_locked(c);
	}
	s->zombie_next = tgt->zombies;
	tgt->zombies = s;
	pthread_mutex_unlock(&tgt->lock);
	NVMFD_INFO(COMP, "subsystem %s: deleted (%u controller(s) disconnected)", s->nqn, nc);
	nvmfd__tgt_disc_changed(tgt);
	nvmfd__tgt_reap(tgt);
	return 0;
}

/**
 * nvmfd_tgt_drop_ctrls() - see internal/target.h.
 */
unsigned int nvmfd_tgt_drop_ctrls(struct nvmfd_tgt *tgt, uint16_t portid, const char *nqn)
{
	unsigned int n = 0;

	pthread_mutex_lock(&tgt->lock);
	for (unsigned int i = 0; i < tgt->nr_subsys; i++) {
		if (strcmp(tgt->subsys[i]->nqn, nqn))
			continue;
		for (struct nvmfd_tgt_ctrl *c = tgt->subsys[i]->ctrls; c; c = c->next) {
			if (!c->port || c->port->portid != portid)
				continue;
			ctrl_kill_locked(c);
			n++;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	return n;
}

/**
 * nvmfd_tgt_cfg_lock() / nvmfd_tgt_cfg_unlock() - hold while editing the
 * parts of the borrowed config that the target reads live: subsystems'
 * allow_any_host and hosts[], the subsystem and port arrays, port links
 * and referrals (read at every Connect and discovery log).
 * Context: control thread; never around a call into the target.
 */
void nvmfd_tgt_cfg_lock(struct nvmfd_tgt *tgt)
{
	pthread_mutex_lock(&tgt->lock);
}

void nvmfd_tgt_cfg_unlock(struct nvmfd_tgt *tgt)
{
	pthread_mutex_unlock(&tgt->lock);
}

/* See internal/target.h. Context: control thread; takes tgt->lock. */
int nvmfd_tgt_ns_enable(struct nvmfd_tgt *tgt, unsigned int si, uint32_t nsid, bool enable)
{
	if (nsid == 0)
		return -ENOENT;
	return nvmfd__tgt_ns_set_enabled(tgt, si, nsid, enable);
}

/* See internal/target.h. Context: control thread; takes tgt->lock. */
void nvmfd_tgt_discovery_changed(struct nvmfd_tgt *tgt)
{
	nvmfd__tgt_disc_changed(tgt);
}

/* Next free cntlid in [min, max], starting after the last one handed out
 * (so a reconnecting host does not get its old, possibly stale, cntlid). */
static int alloc_cntlid_locked(struct nvmfd_tgt_subsys *s, uint16_t *out)
{
	uint16_t lo = s->cfg ? s->cfg->cntlid_min : 1; /* the core's copy: immutable */
	uint16_t hi = s->cfg ? s->cfg->cntlid_max : 0xffef;
	uint32_t span, id;

	/* 0 and 0xfff0..0xffff are reserved (0xffff: dynamic model) */
	if (lo == 0)
		lo = 1;
	if (hi == 0 || hi > 0xffef)
		hi = 0xffef;
	if (lo > hi)
		return -EINVAL;
	span = (uint32_t)hi - lo + 1;
	id = s->next_cntlid;
	if (id < lo || id > hi)
		id = lo;
	for (uint32_t n = 0; n < span; n++) {
		struct nvmfd_tgt_ctrl *c;
		bool used = false;

		for (c = s->ctrls; c; c = c->next) {
			if (c->cntlid == id) {
				used = true;
				break;
			}
		}
		if (!used) {
			*out = (uint16_t)id;
			s->next_cntlid = (uint16_t)(id == hi ? lo : id + 1);
			return 0;
		}
		id = id == hi ? lo : id + 1;
	}
	return -EBUSY;
}

/**
 * nvmfd__tgt_ctrl_alloc() - create and register a controller (dynamic model).
 * @s:       subsystem.
 * @port:    listener the admin queue came in on (borrowed config).
 * @hostnqn: host NQN (borrowed, copied).
 * @hostid:  16-byte host identifier (copied).
 * @out:     the controller with one reference (the admin queue's).
 * Return: 0, -ENOMEM, -EBUSY (no free cntlid in the subsystem's range),
 *         -ENODEV (the subsystem was deleted meanwhile).
 * Context: any thread; takes tgt->lock.
 */
int nvmfd__tgt_ctrl_alloc(struct nvmfd_tgt_subsys *s, const struct nvmfd_cfg_port *port,
			  const char *hostnqn, const uint8_t hostid[16], struct nvmfd_tgt_ctrl **out)
{
	struct nvmfd_tgt *tgt = s->tgt;
	struct nvmfd_tgt_ctrl *c;
	uint32_t mqs = port && port->max_queue_size ? port->max_queue_size : 128;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->feat.arbitration = NVMFD_TGT_ARB_DEFAULT;
	c->feat.tmpth_over = NVMFD_TGT_TMPTH_OVER_DEFAULT;
	pthread_mutex_init(&c->err_lock, NULL);
	c->tgt = tgt;
	c->subsys = s;
	c->refs = 1;
	c->port = port;
	snprintf(c->hostnqn, sizeof(c->hostnqn), "%s", hostnqn);
	memcpy(c->hostid, hostid, 16);
	if (mqs < 2)
		mqs = 2;
	if (mqs > 65536)
		mqs = 65536;
	c->mqes = (uint16_t)(mqs - 1);
	c->qid_max = s->is_disc ? 0 : (s->cfg->qid_max ? s->cfg->qid_max : 128);
	c->nr_io_queues = c->qid_max;
	c->sqs = calloc((size_t)c->qid_max + 1, sizeof(*c->sqs));
	c->qstats = calloc((size_t)c->qid_max + 1, sizeof(*c->qstats));
	if (!c->sqs || !c->qstats) {
		ret = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_lock(&tgt->lock);
	ret = s->deleted ? -ENODEV : alloc_cntlid_locked(s, &c->cntlid);
	if (ret < 0) {
		pthread_mutex_unlock(&tgt->lock);
		goto out_free;
	}
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED); /* dropped with the controller */
	c->next = s->ctrls;
	s->ctrls = c;
	c->registered = true;
	pthread_mutex_unlock(&tgt->lock);
	*out = c;
	return 0;

out_free:
	pthread_mutex_destroy(&c->err_lock);
	free(c->qstats);
	free(c->sqs);
	free(c);
	return ret;
}

/**
 * nvmfd__tgt_ctrl_find_get() - registered controller by cntlid, with a ref.
 * @s:      subsystem.
 * @cntlid: controller ID from the wire.
 * Return: the controller (put it with nvmfd__tgt_ctrl_put()) or NULL.
 * Context: any thread; takes tgt->lock.
 */
struct nvmfd_tgt_ctrl *nvmfd__tgt_ctrl_find_get(struct nvmfd_tgt_subsys *s, uint16_t cntlid)
{
	struct nvmfd_tgt_ctrl *c;

	pthread_mutex_lock(&s->tgt->lock);
	for (c = s->ctrls; c; c = c->next) {
		if (c->cntlid == cntlid && !c->kato_expired) {
			nvmfd__tgt_ctrl_get(c);
			break;
		}
	}
	pthread_mutex_unlock(&s->tgt->lock);
	return c;
}

/**
 * nvmfd__tgt_ctrl_get() - take a reference.
 * @ctrl: controller the caller already holds a reference to (or finds under
 *        tgt->lock).
 * Context: any thread.
 */
void nvmfd__tgt_ctrl_get(struct nvmfd_tgt_ctrl *ctrl)
{
	__atomic_add_fetch(&ctrl->refs, 1, __ATOMIC_RELAXED);
}

/**
 * nvmfd__tgt_ctrl_put() - drop a reference; the last one frees @ctrl, which
 * must already be out of the registry.
 * @ctrl: controller.
 * Context: any thread, not under tgt->lock.
 */
void nvmfd__tgt_ctrl_put(struct nvmfd_tgt_ctrl *ctrl)
{
	if (__atomic_sub_fetch(&ctrl->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	nvmfd__tgt_subsys_put(ctrl->subsys);
	pthread_mutex_destroy(&ctrl->err_lock);
	free(ctrl->sqs);
	free(ctrl->qstats);
	free(ctrl);
}

/**
 * nvmfd__tgt_qp_post() - complete @req from a thread that does not own its
 * queue: store the status, push it on the queue's posted list and kick the
 * owner, which delivers it in nvmfd__tgt_qp_drain_posted().
 * @req:    a request the core holds (an AER).
 * @status: completion status.
 * Context: any thread, tgt->lock held (so the queue cannot be destroyed).
 */
void nvmfd__tgt_qp_post(struct nvmfd_tgt_req *req, nvmfd_status_t status)
{
	struct nvmfd_tgt_qp *qp = req->qp;
	void *head;

	req->sub_status = status;
	head = __atomic_load_n(&qp->posted, __ATOMIC_RELAXED);
	do {
		req->core = head;
	} while (!__atomic_compare_exchange_n(&qp->posted, &head, req, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	if (qp->ops && qp->ops->kick)
		qp->ops->kick(qp);
}

/**
 * nvmfd__tgt_ctrl_fail_aers_locked() - complete every held AER with @status.
 * @ctrl:   controller.
 * @status: e.g. INTERNAL|DNR at teardown.
 * Context: tgt->lock held.
 */
void nvmfd__tgt_ctrl_fail_aers_locked(struct nvmfd_tgt_ctrl *ctrl, nvmfd_status_t status)
{
	for (unsigned int i = 0; i < ctrl->nr_aer; i++) {
		ctrl->aer[i]->cqe.result = 0;
		nvmfd__tgt_qp_post(ctrl->aer[i], status);
		ctrl->aer[i] = NULL;
	}
	ctrl->nr_aer = 0;
}

/**
 * nvmfd__tgt_ctrl_add_event_locked() - report an asynchronous event: the
 * oldest held AER completes with result @evt, or the event waits for one.
 * @ctrl: controller.
 * @evt:  AER result dword (type | info << 8 | log page << 16).
 * Context: tgt->lock held.
 */
void nvmfd__tgt_ctrl_add_event_locked(struct nvmfd_tgt_ctrl *ctrl, uint32_t evt)
{
	if (ctrl->nr_aer) {
		struct nvmfd_tgt_req *req = ctrl->aer[0];

		memmove(&ctrl->aer[0], &ctrl->aer[1], (ctrl->nr_aer - 1) * sizeof(ctrl->aer[0]));
		ctrl->aer[--ctrl->nr_aer] = NULL;
		req->cqe.result = evt;
		nvmfd__tgt_qp_post(req, NVMFD_SC_SUCCESS);
		return;
	}
	for (unsigned int i = 0; i < ctrl->nr_evt; i++) {
		if (ctrl->evt[i] == evt)
			return;
	}
	if (ctrl->nr_evt < NVMFD_TGT_EVT_MAX)
		ctrl->evt[ctrl->nr_evt++] = evt;
}

/**
 * nvmfd__tgt_ctrl_shutdown_locked() - ask the transport to close every
 * queue of @ctrl (asynchronously).
 * @ctrl: controller.
 * Context: tgt->lock held.
 */
void nvmfd__tgt_ctrl_shutdown_locked(struct nvmfd_tgt_ctrl *ctrl)
{
	for (unsigned int q = 0; q <= ctrl->qid_max; q++) {
		struct nvmfd_tgt_qp *qp = ctrl->sqs[q];

		if (qp && qp->ops && qp->ops->shutdown_queue)
			qp->ops->shutdown_queue(qp);
	}
}

static uint64_t ctrl_last_activity_locked(const struct nvmfd_tgt_ctrl *c)
{
	uint64_t last = 0;

	for (unsigned int q = 0; q <= c->qid_max; q++) {
		uint64_t t;

		if (!c->sqs[q])
			continue;
		t = __atomic_load_n(&c->sqs[q]->last_cmd_ns, __ATOMIC_RELAXED);
		if (t > last)
			last = t;
	}
	/* an answer on the admin queue counts too: the host waits for it */
	if (c->sqs[0]) {
		uint64_t t = __atomic_load_n(&c->sqs[0]->admin_cpl_ns, __ATOMIC_RELAXED);

		if (t > last)
			last = t;
	}
	return last;
}

/* An admin command of @c (not an AER) received and not answered yet: how
 * long it has waited at @now_ns for the target, else 0. */
static uint64_t ctrl_admin_unanswered_locked(const struct nvmfd_tgt_ctrl *c, uint64_t now_ns)
{
	uint64_t rx, cpl;

	if (!c->sqs[0])
		return 0;
	rx = __atomic_load_n(&c->sqs[0]->admin_rx_ns, __ATOMIC_RELAXED);
	cpl = __atomic_load_n(&c->sqs[0]->admin_cpl_ns, __ATOMIC_RELAXED);
	return rx > cpl && now_ns > rx ? now_ns - rx : 0;
}

/* The longest a queue of @c has been stalled on the target (ops->stall_ns,
 * or an admin command it has not answered yet), ns at @now_ns; its qid in
 * *@qid. */
static uint64_t ctrl_stall_locked(const struct nvmfd_tgt_ctrl *c, uint64_t now_ns,
				  unsigned int *qid)
{
	uint64_t worst = ctrl_admin_unanswered_locked(c, now_ns);

	for (unsigned int q = 0; q <= c->qid_max; q++) {
		const struct nvmfd_tgt_qp *qp = c->sqs[q];
		uint64_t t;

		if (!qp || !qp->ops || !qp->ops->stall_ns)
			continue;
		t = qp->ops->stall_ns(c->sqs[q]);
		if (t > worst) {
			worst = t;
			*qid = q;
		}
	}
	return worst;
}

/* ms from @t to @now_ns (0 when @t is not before it) */
static uint64_t ns_ago(uint64_t now_ns, uint64_t t)
{
	return now_ns > t ? (now_ns - t) / 1000000u : 0;
}

/* Where queue @qid of @c waits, for the keep-alive log, into @buf: on the
 * admin queue a command read and not answered yet (in execution: the
 * command itself, or the backend), then for any queue input left unread
 * in its socket while it made no pass (its readiness not dispatched, or
 * its worker off the CPU) and its work queued on its worker's run queue
 * without running (ops->stall_parts). */
static void stall_where_locked(const struct nvmfd_tgt_ctrl *c, unsigned int qid, uint64_t now_ns,
			       char *buf, size_t len)
{
	const struct nvmfd_tgt_qp *qp = qid <= c->qid_max ? c->sqs[qid] : NULL;
	uint64_t unread = 0, queued = 0, exec = 0;
	int n = 0;

	buf[0] = '\0';
	if (!qp)
		return;
	if (qid == 0)
		exec = ctrl_admin_unanswered_locked(c, now_ns);
	if (qp->ops && qp->ops->stall_parts)
		qp->ops->stall_parts((struct nvmfd_tgt_qp *)qp, &unread, &queued);
	if (exec)
		n = snprintf(buf, len, "admin command opcode 0x%02x read %" PRIu64
				       " ms ago and not answered (executing); ",
			     __atomic_load_n(&qp->admin_opc, __ATOMIC_RELAXED), exec / 1000000u);
	if (n < 0 || (size_t)n >= len)
		return;
	snprintf(buf + n, len - (size_t)n,
		 "input unread in its socket for %" PRIu64 " ms, its work queued on its "
		 "worker for %" PRIu64 " ms",
		 unread / 1000000u, queued / 1000000u);
}

/**
 * nvmfd__tgt_check_kato() - one housekeeping pass: expire controllers whose
 * last command on any queue (traffic-based keep-alive, TBKAS), or last
 * answer on the admin queue (an AER's aside: a host waits for the answer
 * before its next bring-up command), is older than KATO +
 * cfg->kato_grace_ms: set CSTS.CFS, fail held AERs, shut every queue of
 * the controller down. While a queue of the controller is stalled on the
 * target (ops->stall_ns() >= cfg exec.auto_starve_ms, default 50 ms: the
 * host's commands may be sitting unread; or an admin command other than
 * an AER waits for its answer that long) the expiry is a target-side
 * stall, not a silent host: it is logged as such once and deferred, for
 * at most one more KATO + grace (then the controller expires, the log
 * naming the stall); --exec auto moves the stalled queue meanwhile.
 * @tgt:    target.
 * @now_ns: current CLOCK_MONOTONIC time (ns).
 * Return: number of controllers expired in this pass.
 * Context: housekeeping thread (or a test); takes tgt->lock.
 */
unsigned int nvmfd__tgt_check_kato(struct nvmfd_tgt *tgt, uint64_t now_ns)
{
	uint64_t stall_min = (uint64_t)(tgt->cfg->exec.auto_starve_ms ?: 50) * 1000000ull;
	unsigned int expired = 0;

	struct nvmfd_tgt_subsys *s;
	unsigned int i;

	pthread_mutex_lock(&tgt->lock);
	nvmfd__tgt_for_each_subsys(tgt, i, s) {
		for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next) {
			uint32_t kato = __atomic_load_n(&c->kato_ms, __ATOMIC_RELAXED);
			uint64_t last, limit, stall;
			unsigned int qid = 0;
			char where[192], admin[192];

			if (!kato || c->kato_expired)
				continue;
			last = ctrl_last_activity_locked(c);
			limit = ((uint64_t)kato + tgt->cfg->kato_grace_ms) * 1000000ull;
			if (!last || now_ns <= last || now_ns - last <= limit) {
				c->kato_deferred = false;
				continue;
			}
			stall = ctrl_stall_locked(c, now_ns, &qid);
			if (stall >= stall_min && now_ns - last <= 2 * limit) {
				if (!c->kato_deferred) {
					c->kato_deferred = true;
					__atomic_add_fetch(&c->kato_stalls, 1, __ATOMIC_RELAXED);
					stall_where_locked(c, qid, now_ns, where, sizeof(where));
					stall_where_locked(c, 0, now_ns, admin, sizeof(admin));
					NVMFD_WARN(COMP,
						   "ctrl %u: keep-alive timer (kato %u ms) passed while "
						   "queue %u waited %" PRIu64 " ms for the target (%s; "
						   "admin queue: %s; last command %" PRIu64 " ms ago): a "
						   "target-side stall, not a silent host; expiry deferred",
						   c->cntlid, kato, qid, stall / 1000000u, where, admin,
						   ns_ago(now_ns, last));
				}
				continue;
			}
			c->kato_expired = true;
			__atomic_or_fetch(&c->csts, NVMFD_CSTS_CFS, __ATOMIC_RELAXED);
			if (stall >= stall_min) {
				stall_where_locked(c, qid, now_ns, where, sizeof(where));
				stall_where_locked(c, 0, now_ns, admin, sizeof(admin));
				NVMFD_WARN(COMP,
					   "ctrl %u: keep-alive timer (kato %u ms) expired: queue %u "
					   "has waited %" PRIu64 " ms for the target (%s; admin queue: "
					   "%s; last command %" PRIu64 " ms ago): a target-side stall "
					   "outlasted the deferral",
					   c->cntlid, kato, qid, stall / 1000000u, where, admin,
					   ns_ago(now_ns, last));
			} else
				NVMFD_WARN(COMP,
					   "ctrl %u: keep-alive timer (kato %u ms) expired: nothing "
					   "from the host for %" PRIu64 " ms (its last admin command, "
					   "opcode 0x%02x, was answered %" PRIu64 " ms ago)",
					   c->cntlid, kato, (now_ns - last) / 1000000u,
					   c->sqs[0] ? __atomic_load_n(&c->sqs[0]->admin_opc,
								       __ATOMIC_RELAXED) : 0,
					   c->sqs[0] ? ns_ago(now_ns, __atomic_load_n(
								&c->sqs[0]->admin_cpl_ns,
								__ATOMIC_RELAXED)) : 0);
			ctrl_kill_locked(c);
			expired++;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	return expired;
}

/**
 * nvmfd__tgt_shutdown_all() - fail held AERs and shut every queue of every
 * controller down (target stop).
 * @tgt: target.
 * Context: control thread; takes tgt->lock.
 */
void nvmfd__tgt_shutdown_all(struct nvmfd_tgt *tgt)
{
	struct nvmfd_tgt_subsys *s;
	unsigned int i;

	pthread_mutex_lock(&tgt->lock);
	nvmfd__tgt_for_each_subsys(tgt, i, s) {
		for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next) {
			ctrl_kill_locked(c);
		}
	}
	for (s = tgt->zombies; s; s = s->zombie_next)
		for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next)
			nvmfd__tgt_ctrl_shutdown_locked(c);
	pthread_mutex_unlock(&tgt->lock);
}

static void ctrl_ns_changed_locked(struct nvmfd_tgt_ctrl *c, uint32_t nsid)
{
	bool found = false;

	if (c->nr_changed == 1 && c->changed[0] == 0xffffffff) {
		found = true;
	} else {
		for (unsigned int i = 0; i < c->nr_changed; i++) {
			if (c->changed[i] == nsid) {
				found = true;
				break;
			}
		}
	}
	if (!found) {
		if (c->nr_changed < NVMFD_CHANGED_NS_LIST_MAX) {
			c->changed[c->nr_changed++] = nsid;
		} else {
			/* Base spec 2.0 §5.16.1.5: more than 1024 -> 0xffffffff */
			c->changed[0] = 0xffffffff;
			c->nr_changed = 1;
		}
	}
	if ((c->aen_cfg & NVMFD_AEN_CFG_NS_ATTR) && !(c->aen_masked & NVMFD_AEN_CFG_NS_ATTR)) {
		c->aen_masked |= NVMFD_AEN_CFG_NS_ATTR;
		nvmfd__tgt_ctrl_add_event_locked(c, NVMFD_AER_TYPE_NOTICE |
							    (NVMFD_AER_NOTICE_NS_CHANGED << 8) |
							    ((uint32_t)NVMFD_LOG_CHANGED_NS << 16));
	}
}

/**
 * nvmfd__tgt_ns_set_enabled() - enable or disable a namespace; every
 * controller of the subsystem gets it in its Changed Namespace List and a
 * Namespace Attribute Changed AEN (if enabled by Set Features 0Bh).
 * @tgt:        target.
 * @subsys_idx: index in cfg->subsys[].
 * @nsid:       namespace ID.
 * @enable:     new state.
 * Return: 0, -ENOENT (no such subsystem/namespace), 0 also when unchanged
 *         (no event then).
 * Context: control thread; takes tgt->lock.
 */
int nvmfd__tgt_ns_set_enabled(struct nvmfd_tgt *tgt, unsigned int subsys_idx, uint32_t nsid,
			      bool enable)
{
	struct nvmfd_tgt_subsys *s;
	struct nvmfd_tgt_ns *ns = NULL;

	if (subsys_idx >= tgt->nr_subsys)
		return -ENOENT;
	s = tgt->subsys[subsys_idx];
	ns = ns_slot(s, nsid);
	if (!ns)
		return -ENOENT;
	pthread_mutex_lock(&tgt->lock);
	if (__atomic_load_n(&ns->enabled, __ATOMIC_RELAXED) != enable) {
		__atomic_store_n(&ns->enabled, enable, __ATOMIC_RELEASE);
		subsys_ns_changed_locked(s, nsid);
	}
	pthread_mutex_unlock(&tgt->lock);
	return 0;
}

static void subsys_ns_changed_locked(struct nvmfd_tgt_subsys *s, uint32_t nsid)
{
	for (struct nvmfd_tgt_ctrl *c = s->ctrls; c; c = c->next)
		ctrl_ns_changed_locked(c, nsid);
}

/**
 * nvmfd__tgt_disc_changed() - the discovery information changed (a port,
 * subsystem link, host or referral): bump GENCTR and send a Discovery Log
 * Page Change AEN to connected discovery controllers that enabled it (AEC
 * bit 31) and have no unread change.
 * @tgt: target.
 * Context: control thread; takes tgt->lock.
 */
void nvmfd__tgt_disc_changed(struct nvmfd_tgt *tgt)
{
	pthread_mutex_lock(&tgt->lock);
	tgt->genctr++;
	for (struct nvmfd_tgt_ctrl *c = tgt->disc->ctrls; c; c = c->next) {
		if (!(c->aen_cfg & NVMFD_AEN_CFG_DISC_CHANGE) ||
		    (c->aen_masked & NVMFD_AEN_CFG_DISC_CHANGE))
			continue;
		c->aen_masked |= NVMFD_AEN_CFG_DISC_CHANGE;
		nvmfd__tgt_ctrl_add_event_locked(c, NVMFD_AER_TYPE_NOTICE |
							    (NVMFD_AER_NOTICE_DISC_CHANGED << 8) |
							    ((uint32_t)NVMFD_LOG_DISC << 16));
	}
	pthread_mutex_unlock(&tgt->lock);
}

/**
 * nvmfd__tgt_ctrl_is_ready() - CC.EN and CSTS.RDY both set.
 * @ctrl: controller.
 * Return: true if non-fabrics commands may run.
 * Context: any thread.
 */
bool nvmfd__tgt_ctrl_is_ready(const struct nvmfd_tgt_ctrl *ctrl)
{
	uint32_t cc = __atomic_load_n(&ctrl->cc, __ATOMIC_ACQUIRE);
	uint32_t csts = __atomic_load_n(&ctrl->csts, __ATOMIC_ACQUIRE);

	return (cc & NVMFD_CC_EN) && (csts & NVMFD_CSTS_RDY);
}

/**
 * nvmfd__tgt_cap() - the CAP property of @ctrl.
 * @ctrl: controller.
 * Return: MQES from the port's max_queue_size, CQR, TO 15, CSS NVM, MPSMIN=MPSMAX=0.
 * Context: any thread.
 */
uint64_t nvmfd__tgt_cap(const struct nvmfd_tgt_ctrl *ctrl)
{
	return NVMFD_CAP_BUILD(ctrl->mqes, NVMFD_TGT_CAP_TO);
}

/**
 * nvmfd__tgt_max_io_size() - MDTS in bytes (transport buffers hold this much).
 * @tgt: target.
 * Return: cfg->max_io_size, or 1 MiB when unset.
 * Context: any thread.
 */
uint32_t nvmfd__tgt_max_io_size(const struct nvmfd_tgt *tgt)
{
	return tgt->cfg->max_io_size ? tgt->cfg->max_io_size : 1u << 20;
}

/**
 * nvmfd__tgt_cfg() - the borrowed config.
 * @tgt: target.
 * Return: the config passed to nvmfd_tgt_create().
 * Context: any thread.
 */
const struct nvmfd_cfg *nvmfd__tgt_cfg(const struct nvmfd_tgt *tgt)
{
	return tgt->cfg;
}

/**
 * nvmfd__tgt_rt() - the execution runtime.
 * @tgt: target.
 * Return: the runtime (NULL for a core-only target in unit tests).
 * Context: any thread.
 */
struct nvmfd_rt *nvmfd__tgt_rt(const struct nvmfd_tgt *tgt)
{
	return tgt->rt;
}

/**
 * nvmfd__tgt_rt_escape() - the unbound runtime of --exec auto.
 * @tgt: target.
 * Return: the runtime, or NULL when the exec mode is not auto.
 * Context: any thread.
 */
struct nvmfd_rt *nvmfd__tgt_rt_escape(const struct nvmfd_tgt *tgt)
{
	return tgt->rt_escape;
}

/**
 * nvmfd__tgt_rt_stop() - the stop runtime (xprt.h).
 * @tgt: target.
 * Return: the runtime while nvmfd_tgt_stop() runs and after, or NULL.
 * Context: any thread.
 */
struct nvmfd_rt *nvmfd__tgt_rt_stop(const struct nvmfd_tgt *tgt)
{
	return tgt->rt_stop;
}
