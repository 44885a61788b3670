// SPDX-License-Identifier: MIT
/*
 * group.c - runtime groups (rt.h): one runtime per key, reference counted,
 * destroyed off the workers by a short-lived reaper thread. Used for
 * per-controller pools (--wq-per-ctrl): queues are accepted on the global
 * runtime and moved onto their controller's with nvmfd_rt_work_move().
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal/log.h"
#include "internal/rt.h"

struct rt_member {
	struct rt_member *next; /* g->members or g->grave, g->lock */
	uint64_t key;
	uint64_t label; /* shown in stats under the group's key name */
	unsigned int users; /* g->lock */
	struct nvmfd_rt *rt;
};

struct nvmfd_rt_group {
	struct nvmfd_rt_opts opts;
	char name[9];
	pthread_mutex_t lock; /* members, grave, nr_dying; only pool locks nest inside (unpin) */
	pthread_cond_t cond; /* nr_dying dropped */
	struct rt_member *members;
	struct rt_member *grave; /* no reaper thread could be started */
	unsigned int nr_dying;
	bool destroying;
};

struct rt_reaper {
	struct nvmfd_rt_group *g;
	struct nvmfd_rt *rt;
};

int nvmfd_rt_group_create(const struct nvmfd_rt_opts *opts, const char *name,
			  struct nvmfd_rt_group **out)
{
	struct nvmfd_rt_group *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	if (opts && opts->size)
		g->opts = *opts;
	else
		nvmfd_rt_opts_init(&g->opts);
	snprintf(g->name, sizeof(g->name), "%s", name ? name : "nvmfg");
	g->opts.name = g->name;
	/* opts->sysfs_root is kept as given: it must outlive the group */
	ret = -pthread_mutex_init(&g->lock, NULL);
	if (ret)
		goto out_free;
	ret = -pthread_cond_init(&g->cond, NULL);
	if (ret)
		goto out_destroy_lock;
	*out = g;
	return 0;

out_destroy_lock:
	pthread_mutex_destroy(&g->lock);
out_free:
	free(g);
	return ret;
}

int nvmfd_rt_group_get(struct nvmfd_rt_group *g, uint64_t key, uint64_t label,
		       struct nvmfd_rt **out)
{
	struct rt_member *m;
	int ret;

	pthread_mutex_lock(&g->lock);
	if (g->destroying) {
		pthread_mutex_unlock(&g->lock);
		return -ESHUTDOWN;
	}
	for (m = g->members; m; m = m->next) {
		if (m->key == key) {
			m->users++;
			*out = m->rt;
			pthread_mutex_unlock(&g->lock);
			return 0;
		}
	}
	/* created outside the lock (it starts threads); the users of one key
	 * are serialised by the caller or both create and one is dropped */
	pthread_mutex_unlock(&g->lock);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = nvmfd_rt_create(&g->opts, &m->rt);
	if (ret) {
		free(m);
		return ret;
	}
	m->key = key;
	m->label = label;
	m->users = 1;
	pthread_mutex_lock(&g->lock);
	for (struct rt_member *o = g->members; o; o = o->next) {
		if (o->key == key) {
			/* lost a race: use the other one */
			o->users++;
			*out = o->rt;
			pthread_mutex_unlock(&g->lock);
			nvmfd_rt_destroy(m->rt);
			free(m);
			return 0;
		}
	}
	m->next = g->members;
	g->members = m;
	pthread_mutex_unlock(&g->lock);
	*out = m->rt;
	return 0;
}

static void *reaper_main(void *arg)
{
	struct rt_reaper *rp = arg;
	struct nvmfd_rt_group *g = rp->g;

	nvmfd_rt_destroy(rp->rt);
	free(rp);
	pthread_mutex_lock(&g->lock);
	g->nr_dying--;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

void nvmfd_rt_group_put(struct nvmfd_rt_group *g, struct nvmfd_rt *rt)
{
	struct rt_member **pp, *m;
	struct rt_reaper *rp;
	pthread_attr_t attr;
	pthread_t th;
	bool ok = false;

	pthread_mutex_lock(&g->lock);
	for (pp = &g->members; *pp && (*pp)->rt != rt; pp = &(*pp)->next)
		;
	m = *pp;
	assert(m);
	if (!m || --m->users) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	*pp = m->next;
	g->nr_dying++;
	pthread_mutex_unlock(&g->lock);

	rp = malloc(sizeof(*rp));
	if (rp && !pthread_attr_init(&attr)) {
		rp->g = g;
		rp->rt = rt;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = !pthread_create(&th, &attr, reaper_main, rp);
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_lock(&g->lock);
	if (ok) {
		free(m);
	} else {
		/* no thread: nvmfd_rt_group_destroy() destroys it */
		free(rp);
		g->nr_dying--;
		m->next = g->grave;
		g->grave = m;
		pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
}

unsigned int nvmfd_rt_group_count(struct nvmfd_rt_group *g)
{
	unsigned int n = 0;

	pthread_mutex_lock(&g->lock);
	for (struct rt_member *m = g->members; m; m = m->next)
		n++;
	pthread_mutex_unlock(&g->lock);
	return n;
}

json_object *nvmfd_rt_group_stats_obj(struct nvmfd_rt_group *g, const char *key_name)
{
	json_object *arr = json_object_new_array();

	if (!arr)
		return NULL;
	pthread_mutex_lock(&g->lock);
	for (struct rt_member *m = g->members; m; m = m->next) {
		json_object *e = json_object_new_object();

		if (!e)
			break;
		json_object_object_add(e, key_name, json_object_new_uint64(m->label));
		json_object_object_add(e, "users", json_object_new_int((int)m->users));
		json_object_object_add(e, "runtime", nvmfd_rt_stats_obj(m->rt));
		json_object_array_add(arr, e);
	}
	pthread_mutex_unlock(&g->lock);
	return arr;
}

int nvmfd_rt_group_stats_json(struct nvmfd_rt_group *g, const char *key_name, FILE *f)
{
	json_object *arr = nvmfd_rt_group_stats_obj(g, key_name);
	int ret = 0;

	if (!arr)
		return -ENOMEM;
	if (fputs(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN), f) < 0 ||
	    ferror(f))
		ret = -EIO;
	json_object_put(arr);
	return ret;
}

void nvmfd_rt_group_destroy(struct nvmfd_rt_group **gp)
{
	struct nvmfd_rt_group *g = gp ? *gp : NULL;

	if (!g)
		return;
	*gp = NULL;
	pthread_mutex_lock(&g->lock);
	g->destroying = true;
	while (g->nr_dying)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
	assert(!g->members);
	while (g->members) { /* users left behind: stop their pools anyway */
		struct rt_member *m = g->members;

		g->members = m->next;
		nvmfd_rt_destroy(m->rt);
		free(m);
	}
	while (g->grave) {
		struct rt_member *m = g->grave;

		g->grave = m->next;
		nvmfd_rt_destroy(m->rt);
		free(m);
	}
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* nvmfd_rt_group_unpin() - see internal/rt.h. */
void nvmfd_rt_group_unpin(struct nvmfd_rt_group *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	for (struct rt_member *m = g->members; m; m = m->next)
		nvmfd_rt_unpin(m->rt);
	pthread_mutex_unlock(&g->lock);
}
