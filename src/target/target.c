// SPDX-License-Identifier: MIT
/*
 * target.c - the target as the daemon sees it (internal/target.h): backends,
 * the execution runtime, TCP listeners and the housekeeping thread that
 * expires keep-alive timers and the transport's ICReq/Connect deadlines.
 *
 * Order: create = backends -> runtime -> listeners (bound, not accepting);
 * start = accepting + housekeeping; stop = housekeeping off, every queue
 * shut down, listeners destroyed (which waits for their queues), backends
 * flushed and closed, so no acknowledged write is lost.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal/log.h"
#include "internal/target.h"
#include "target/core.h"

#define COMP "target"

static void destroy_ports(struct nvmfd_tgt *tgt)
{
	for (unsigned int i = 0; i < tgt->nr_ports; i++) {
		if (tgt->ports[i])
			nvmfd__tcp_port_destroy(&tgt->ports[i]);
	}
}

/**
 * nvmfd_tgt_create() - open every namespace backend, create the runtime and
 * bind every listener of @cfg; nothing listens if any step fails.
 * @cfg: configuration, borrowed for the target's lifetime.
 * @out: the new target.
 * Return: 0, -EINVAL (bad config), -ENOMEM, the backend open error, the
 *         runtime error, or the listener error (e.g. -EADDRINUSE), each
 *         logged with the object it concerns.
 * Context: control thread.
 */
int nvmfd_tgt_create(const struct nvmfd_cfg *cfg, struct nvmfd_tgt **out)
{
	struct nvmfd_rt_opts opts;
	struct nvmfd_tgt *tgt;
	int ret;

	*out = NULL;
	ret = nvmfd__tgt_core_create(cfg, &tgt);
	if (ret < 0)
		return ret;
	pthread_mutex_init(&tgt->hk_lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&tgt->hk_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	opts = cfg->exec.rt;
	if (opts.size == 0)
		nvmfd_rt_opts_init(&opts);
	ret = nvmfd_rt_create(&opts, &tgt->rt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "execution runtime: %s", strerror(-ret));
		goto out_destroy_core;
	}
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		const struct nvmfd_cfg_port *p = &cfg->ports[i];

		ret = nvmfd__tcp_port_create(tgt, p, &tgt->ports[i]);
		tgt->nr_ports = i + 1;
		if (ret < 0) /* the transport logged "port N ADDR:PORT: reason" */
			goto out_destroy_ports;
		tgt->bound_port[i] = nvmfd__tcp_port_bound_port(tgt->ports[i]);
	}
	*out = tgt;
	return 0;

out_destroy_ports:
	destroy_ports(tgt);
	nvmfd_rt_destroy(tgt->rt);
	tgt->rt = NULL;
out_destroy_core:
	pthread_cond_destroy(&tgt->hk_cond);
	pthread_mutex_destroy(&tgt->hk_lock);
	nvmfd__tgt_core_destroy(&tgt);
	return ret;
}

static void *hk_main(void *arg)
{
	struct nvmfd_tgt *tgt = arg;
	struct timespec ts;
	uint64_t now;

	pthread_mutex_lock(&tgt->hk_lock);
	while (!tgt->hk_stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += NVMFD_TGT_HK_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&tgt->hk_cond, &tgt->hk_lock, &ts);
		if (tgt->hk_stop)
			break;
		pthread_mutex_unlock(&tgt->hk_lock);
		now = nvmfd__tgt_now_ns();
		nvmfd__tgt_check_kato(tgt, now);
		for (unsigned int i = 0; i < tgt->nr_ports; i++)
			if (tgt->ports[i])
				nvmfd__tcp_port_check_timeouts(tgt->ports[i], now);
		pthread_mutex_lock(&tgt->hk_lock);
	}
	pthread_mutex_unlock(&tgt->hk_lock);
	return NULL;
}

/**
 * nvmfd_tgt_start() - start accepting on every listener and start the
 * housekeeping thread.
 * @tgt: target from nvmfd_tgt_create().
 * Return: 0, -EINVAL (already started or stopped), the listener's error, or
 *         -errno from pthread_create; on failure nothing accepts.
 * Context: control thread.
 */
int nvmfd_tgt_start(struct nvmfd_tgt *tgt)
{
	int ret;

	if (tgt->started || tgt->stopped)
		return -EINVAL;
	tgt->hk_stop = false;
	ret = -pthread_create(&tgt->hk_thread, NULL, hk_main, tgt);
	if (ret < 0) {
		NVMFD_ERR(COMP, "housekeeping thread: %s", strerror(-ret));
		return ret;
	}
	tgt->hk_running = true;
	for (unsigned int i = 0; i < tgt->nr_ports; i++) {
		const struct nvmfd_cfg_port *p = &tgt->cfg->ports[i];

		ret = nvmfd__tcp_port_start(tgt->ports[i]);
		if (ret < 0) {
			NVMFD_ERR(COMP, "port %u %s:%s: start: %s", p->portid, p->traddr,
				  p->trsvcid, strerror(-ret));
			nvmfd_tgt_stop(tgt);
			return ret;
		}
	}
	tgt->started = true;
	return 0;
}

/**
 * nvmfd_tgt_stop() - stop accepting, shut every queue down (waiting for
 * them), then flush and close the backends.
 * @tgt: target.
 * Context: control thread; idempotent.
 */
void nvmfd_tgt_stop(struct nvmfd_tgt *tgt)
{
	int ret;

	if (tgt->stopped)
		return;
	tgt->stopped = true;
	if (tgt->hk_running) {
		pthread_mutex_lock(&tgt->hk_lock);
		tgt->hk_stop = true;
		pthread_cond_signal(&tgt->hk_cond);
		pthread_mutex_unlock(&tgt->hk_lock);
		pthread_join(tgt->hk_thread, NULL);
		tgt->hk_running = false;
	}
	nvmfd__tgt_shutdown_all(tgt);
	destroy_ports(tgt);
	ret = nvmfd__tgt_core_close_backends(tgt);
	if (ret < 0)
		NVMFD_ERR(COMP, "closing backends: %s", strerror(-ret));
}

/**
 * nvmfd_tgt_destroy() - stop if needed and free everything; NULLs *tgt.
 * @tgtp: target (NULL is fine).
 * Context: control thread.
 */
void nvmfd_tgt_destroy(struct nvmfd_tgt **tgtp)
{
	struct nvmfd_tgt *tgt = *tgtp;

	if (!tgt)
		return;
	nvmfd_tgt_stop(tgt);
	if (tgt->rt)
		nvmfd_rt_destroy(tgt->rt);
	tgt->rt = NULL;
	pthread_cond_destroy(&tgt->hk_cond);
	pthread_mutex_destroy(&tgt->hk_lock);
	nvmfd__tgt_core_destroy(tgtp);
}

/**
 * nvmfd_tgt_listen_port() - TCP port bound by listener @idx.
 * @tgt: target.
 * @idx: index in cfg->ports[].
 * Return: the port, 0 if @idx is out of range or the listener is gone.
 * Context: any thread.
 */
uint16_t nvmfd_tgt_listen_port(const struct nvmfd_tgt *tgt, unsigned int idx)
{
	if (idx >= tgt->nr_ports || !tgt->ports[idx])
		return 0;
	return nvmfd__tcp_port_bound_port(tgt->ports[idx]);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* Process-wide context switches (live threads) and CPU time, from /proc. */
static void process_json(FILE *out)
{
	unsigned long long vol = 0, invol = 0, ut = 0, st = 0;
	char line[256];
	FILE *f;

	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	/* summed over the threads (the process's own status shows the
	 * main thread only) */
	while (d && (de = readdir(d))) {
		char path[64];
		unsigned long long v;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/status", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue; /* the thread just exited */
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				vol += v;
			else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				invol += v;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	f = fopen("/proc/self/stat", "r");
	if (f) {
		char buf[1024];
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		char *p;

		buf[n] = 0;
		/* fields after the ")" of comm: state is field 3, utime 14, stime 15 */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) != 2)
			ut = st = 0;
		fclose(f);
	}
	fprintf(out,
		"{\"voluntary_ctxt_switches\":%llu,\"nonvoluntary_ctxt_switches\":%llu,"
		"\"utime_ticks\":%llu,\"stime_ticks\":%llu}",
		vol, invol, ut, st);
}

/**
 * nvmfd_tgt_stats_json() - write counters as one JSON object on @out:
 * {"controllers":[{cntlid, subnqn, hostnqn, kato_ms, queues, reads, writes,
 * bytes_read, bytes_written}...], "ports":[<transport port objects: queues,
 * shared rings, per-controller pools>], "runtime":<the global runtime's
 * pools (nvmfd_rt_stats_json)>, "process":{context switches, CPU ticks}}.
 * @tgt: target.
 * @out: stream (borrowed).
 * Return: 0, -EIO when writing failed, or the transport's error.
 * Context: any thread; takes tgt->lock briefly.
 */
int nvmfd_tgt_stats_json(struct nvmfd_tgt *tgt, FILE *out)
{
	bool first = true;
	int ret = 0;

	fputs("{\"controllers\":[", out);
	pthread_mutex_lock(&tgt->lock);
	for (unsigned int i = 0; i <= tgt->nr_subsys; i++) {
		for (struct nvmfd_tgt_ctrl *c = tgt->subsys[i].ctrls; c; c = c->next) {
			uint64_t r = 0, w = 0, br = 0, bw = 0;
			unsigned int nq = 0;

			for (unsigned int q = 0; q <= c->qid_max; q++) {
				nq += c->sqs[q] != NULL;
				r += __atomic_load_n(&c->qstats[q].reads, __ATOMIC_RELAXED);
				w += __atomic_load_n(&c->qstats[q].writes, __ATOMIC_RELAXED);
				br += __atomic_load_n(&c->qstats[q].bytes_read, __ATOMIC_RELAXED);
				bw += __atomic_load_n(&c->qstats[q].bytes_written,
						      __ATOMIC_RELAXED);
			}
			fprintf(out, "%s{\"cntlid\":%u,\"subnqn\":", first ? "" : ",", c->cntlid);
			json_str(out, c->subsys->nqn);
			fputs(",\"hostnqn\":", out);
			json_str(out, c->hostnqn);
			fprintf(out,
				",\"kato_ms\":%u,\"queues\":%u,\"reads\":%llu,\"writes\":%llu,"
				"\"bytes_read\":%llu,\"bytes_written\":%llu}",
				__atomic_load_n(&c->kato_ms, __ATOMIC_RELAXED), nq,
				(unsigned long long)r, (unsigned long long)w,
				(unsigned long long)br, (unsigned long long)bw);
			first = false;
		}
	}
	pthread_mutex_unlock(&tgt->lock);
	fputs("],\"ports\":[", out);
	first = true;
	for (unsigned int i = 0; i < tgt->nr_ports; i++) {
		if (!tgt->ports[i])
			continue;
		if (!first)
			fputc(',', out);
		ret = nvmfd__tcp_port_stats_json(tgt->ports[i], out);
		if (ret < 0)
			break;
		first = false;
	}
	fputs("],\"runtime\":", out);
	if (tgt->rt)
		nvmfd_rt_stats_json(tgt->rt, out);
	else
		fputs("null", out);
	fputs(",\"process\":", out);
	process_json(out);
	fputs("}", out);
	if (ret == 0 && ferror(out))
		ret = -EIO;
	return ret;
}
