// SPDX-License-Identifier: MIT
/* tgt_fixture.c - in-process target for tests; see tgt_fixture.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "tgt_fixture.h"

int tf_start(struct tf_target *t, tf_tweak_fn tweak)
{
	char err[NVMFD_CFG_ERRLEN] = "";
	struct nvmfd_cfg *cfg;
	const char *net;
	char spec[64];
	int ret;

	memset(t, 0, sizeof(*t));
	signal(SIGPIPE, SIG_IGN);
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	nvmfd_cfg_init_defaults(cfg);
	cfg->nr_ports = 1;
	nvmfd_cfg_port_init(&cfg->ports[0], 1);
	snprintf(cfg->ports[0].traddr, sizeof(cfg->ports[0].traddr), "%s", TF_ADDR);
	snprintf(cfg->ports[0].trsvcid, sizeof(cfg->ports[0].trsvcid), "0");
	cfg->ports[0].nr_subsys = 1;
	cfg->ports[0].subsys_idx[0] = 0;
	cfg->nr_subsys = 1;
	ret = nvmfd_cfg_subsys_init(&cfg->subsys[0], TF_SUBNQN, err);
	if (ret)
		goto out_err;
	cfg->subsys[0].allow_any_host = true;
	cfg->subsys[0].nr_ns = 1;
	snprintf(spec, sizeof(spec), "ram:%u", TF_NS_SIZE);
	ret = nvmfd_cfg_parse_namespace(&cfg->subsys[0].ns[0], spec, err);
	if (ret)
		goto out_err;
	cfg->subsys[0].ns[0].nsid = 1;
	cfg->subsys[0].ns[0].enable = true;
	/* TF_NET=uring / uring-single / uring-worker: the same test over
	 * --net uring (uring-worker: on the worker rings, --uring-ring worker) */
	net = getenv("TF_NET");
	if (net && !strncmp(net, "uring", 5)) {
		cfg->exec.net = NVMFD_CFG_NET_URING;
		if (!strcmp(net, "uring-single"))
			cfg->exec.uring_recv = NVMFD_CFG_URING_RECV_SINGLE;
		if (!strcmp(net, "uring-worker"))
			cfg->exec.uring_ring = NVMFD_CFG_URING_RING_WORKER;
	}
	if (tweak)
		tweak(cfg);
	ret = nvmfd_cfg_validate(cfg, err);
	if (ret)
		goto out_err;
	t->cfg = cfg;
	ret = nvmfd_tgt_create(cfg, &t->tgt);
	if (ret) {
		snprintf(err, sizeof(err), "nvmfd_tgt_create: %s", strerror(-ret));
		goto out_err;
	}
	ret = nvmfd_tgt_start(t->tgt);
	if (ret) {
		snprintf(err, sizeof(err), "nvmfd_tgt_start: %s", strerror(-ret));
		nvmfd_tgt_destroy(&t->tgt);
		goto out_err;
	}
	t->port = nvmfd_tgt_listen_port(t->tgt, 0);
	if (!t->port) {
		snprintf(err, sizeof(err), "no bound port");
		ret = -EINVAL;
		tf_stop(t);
		return ret;
	}
	return 0;

out_err:
	fprintf(stderr, "tf_start: %s\n", err);
	free(cfg);
	t->cfg = NULL;
	return ret ? ret : -EINVAL;
}

void tf_stop(struct tf_target *t)
{
	if (t->tgt) {
		nvmfd_tgt_stop(t->tgt);
		nvmfd_tgt_destroy(&t->tgt);
	}
	free(t->cfg);
	t->cfg = NULL;
}

/* Controllers and queues in a stats snapshot of @t; -1 each when unreadable. */
static void tf_count_live(struct tf_target *t, int *ctrls, int *queues)
{
	json_object *root = NULL, *arr, *v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*ctrls = *queues = -1;
	if (!f)
		return;
	if (nvmfd_tgt_stats_json(t->tgt, f) == 0) {
		fclose(f);
		root = json_tokener_parse(buf);
	} else {
		fclose(f);
	}
	free(buf);
	if (!root)
		return;
	if (json_object_object_get_ex(root, "controllers", &arr))
		*ctrls = (int)json_object_array_length(arr);
	if (json_object_object_get_ex(root, "ports", &arr)) {
		*queues = 0;
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			if (!json_object_object_get_ex(json_object_array_get_idx(arr, i), "nr_queues",
						       &v)) {
				*queues = -1;
				break;
			}
			*queues += json_object_get_int(v);
		}
	}
	json_object_put(root);
}

int tf_wait_idle(struct tf_target *t, unsigned int limit_s)
{
	struct timespec t0, now;
	int ctrls, queues;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		tf_count_live(t, &ctrls, &queues);
		if (ctrls == 0 && queues == 0)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= (time_t)limit_s)
			break;
		usleep(10000);
	}
	fprintf(stderr, "tf_wait_idle: %d controller(s), %d queue(s) left after %u s\n", ctrls,
		queues, limit_s);
	return -ETIMEDOUT;
}
