// SPDX-License-Identifier: MIT
/*
 * nvmf-bench: one run of one cell, end to end.
 *
 *   nvmfd (own group, -l 127.0.0.1:0, --control) -> read the port it got
 *   from the stats JSON -> contention (stress-ng or the hog) -> N x
 *   nvmf-perf --json -> poll the control socket and /proc/<nvmfd> while
 *   they run -> tear every group down -> parse the JSON into metrics.
 *
 * The measured window is [spawn + warmup, spawn + warmup + duration] on
 * the bench's clock: target CPU % and context switches are /proc deltas
 * over it, completion events/s and completions per event are deltas of
 * the per-queue counters over it. nvmfd forgets a queue when its
 * connection closes, so the bench keeps the last snapshot of every queue
 * it has seen (polled every 200 ms) and sums those.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define MAX_QUEUES 1024
#define STATS_BUF (1 << 20)
#define NQN "nqn.2026-11.io.nvmfd:bench"

enum qfield { QF_EVENTS, QF_BCOMPL, QF_REQUEUES, QF_IDLE_POLLS, QF_EAGAIN, QF_NR };

static const char *const qfield_names[QF_NR] = { "completion_events", "backend_completions", "requeues",
						 "idle_polls", "eagain_sends" };

struct qsnap {
	char key[96];
	double f[QF_NR];
};

struct run_state {
	struct qsnap q[MAX_QUEUES];
	int nr_q;
	char *stats_buf;
	char *last_live; /* last stats reply that listed queues */
	unsigned long live_polls; /* stats replies that listed I/O queues */
	char sock[108];
	long port;
};

static void mkdirs(const char *path)
{
	char tmp[1024];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

static struct qsnap *qfind(struct run_state *rs, const char *key)
{
	int i;

	for (i = 0; i < rs->nr_q; i++)
		if (!strcmp(rs->q[i].key, key))
			return &rs->q[i];
	if (rs->nr_q == MAX_QUEUES)
		return NULL;
	snprintf(rs->q[rs->nr_q].key, sizeof(rs->q[0].key), "%s", key);
	return &rs->q[rs->nr_q++];
}

/* Merge one stats reply into the per-queue table; 1 if it listed I/O queues. */
static int stats_merge(struct run_state *rs, const char *text)
{
	struct json_object *root, *ports;
	size_t i, j;
	int live = 0;

	root = json_tokener_parse(text);
	if (!root)
		return -EINVAL;
	if (json_object_object_get_ex(root, "ports", &ports) && json_object_is_type(ports, json_type_array)) {
		for (i = 0; i < json_object_array_length(ports); i++) {
			struct json_object *pt = json_object_array_get_idx(ports, i), *qs, *v;
			long portid = 0;

			if (json_object_object_get_ex(pt, "portid", &v))
				portid = (long)json_object_get_int64(v);
			if (json_object_object_get_ex(pt, "trsvcid", &v) && rs->port <= 0)
				rs->port = (long)json_object_get_int64(v);
			if (!json_object_object_get_ex(pt, "queues", &qs) ||
			    !json_object_is_type(qs, json_type_array))
				continue;
			for (j = 0; j < json_object_array_length(qs); j++) {
				struct json_object *q = json_object_array_get_idx(qs, j);
				const char *peer = "";
				char key[96];
				struct qsnap *s;
				long id = -1, qid = -1;
				int k;

				if (json_object_object_get_ex(q, "id", &v))
					id = (long)json_object_get_int64(v);
				if (json_object_object_get_ex(q, "qid", &v))
					qid = (long)json_object_get_int64(v);
				if (json_object_object_get_ex(q, "peer", &v))
					peer = json_object_get_string(v);
				if (qid > 0)
					live = 1;
				snprintf(key, sizeof(key), "%ld/%ld/%s", portid, id, peer);
				s = qfind(rs, key);
				if (!s)
					continue;
				for (k = 0; k < QF_NR; k++)
					if (json_object_object_get_ex(q, qfield_names[k], &v))
						s->f[k] = json_object_get_double(v);
			}
		}
	}
	json_object_put(root);
	return live;
}

static void qsum(const struct run_state *rs, double out[QF_NR])
{
	int i, k;

	for (k = 0; k < QF_NR; k++)
		out[k] = 0;
	for (i = 0; i < rs->nr_q; i++)
		for (k = 0; k < QF_NR; k++)
			out[k] += rs->q[i].f[k];
}

static void poll_stats(struct run_state *rs)
{
	if (bench_control_query(rs->sock, "stats", rs->stats_buf, STATS_BUF))
		return;
	if (stats_merge(rs, rs->stats_buf) > 0) {
		snprintf(rs->last_live, STATS_BUF, "%s", rs->stats_buf);
		rs->live_polls++;
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs(text, f);
	fputc('\n', f);
	fclose(f);
}

static void tail_file(const char *path, char *out, size_t len)
{
	char buf[4096];
	size_t n;
	FILE *f;
	char *p;

	out[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	if (ftell(f) > (long)sizeof(buf) - 1)
		fseek(f, -(long)sizeof(buf) + 1, SEEK_END);
	else
		fseek(f, 0, SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	p = strrchr(buf, '\n');
	bench_fmt(out, len, "%s", p ? p + 1 : buf);
}

static void append_arg(char **argv, int *argc, char *store, size_t *off, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Append one argument to @argv, its text in @store (@cap bytes, *@off
 * used). What does not fit (argument slots or bytes) is dropped, and so
 * is every later argument: *@off is then past @cap, which the builders
 * below turn into -E2BIG. */
static void append_arg(char **argv, int *argc, char *store, size_t *off, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off > cap)
		return; /* an earlier argument was dropped */
	if (*argc >= BENCH_MAX_ARGS - 1 || *off == cap)
		goto drop;
	va_start(ap, fmt);
	n = vsnprintf(store + *off, cap - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *off)
		goto drop;
	argv[(*argc)++] = store + *off;
	argv[*argc] = NULL;
	*off += n + 1;
	return;
drop:
	*off = cap + 1;
}

static void join_argv(char *const *argv, char *out, size_t len)
{
	size_t off = 0;
	int i;

	out[0] = 0;
	for (i = 0; argv[i] && off < len; i++) {
		bool q = strchr(argv[i], ' ') != NULL;

		off += snprintf(out + off, len - off, "%s%s%s%s", i ? " " : "", q ? "'" : "", argv[i], q ? "'" : "");
	}
}

static double jget(struct json_object *o, const char *k, bool *have)
{
	struct json_object *v;

	if (o && json_object_object_get_ex(o, k, &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
		if (have)
			*have = true;
		return json_object_get_double(v);
	}
	if (have)
		*have = false;
	return 0;
}

/*
 * Merge the reports of @n nvmf-perf processes: throughput and CPU add
 * up; latency avg and percentiles are IOPS-weighted means (an
 * approximation when processes differ: the histograms are not in the
 * JSON; perf.one_process runs every controller in one nvmf-perf, whose
 * total merges the histograms exactly), min/max are min/max.
 */
static int parse_perf_reports(const char *dir, int n, double *v, bool *have, char *err, size_t elen)
{
	static const struct {
		const char *key;
		int m;
	} lat[] = { { "avg", BM_LAT_AVG },   { "p50", BM_P50 },	    { "p90", BM_P90 }, { "p99", BM_P99 },
		    { "p99.9", BM_P999 }, { "p99.99", BM_P9999 }, { "stdev", BM_LAT_STDEV } };
	double wsum = 0, cpu_s = 0, ios_sum = 0, ctxsw = 0, sysc = 0, compl = 0;
	int i, k;

	for (k = 0; k < BM_NR; k++) {
		v[k] = 0;
		have[k] = false;
	}
	v[BM_LAT_MIN] = 1e300;
	for (i = 0; i < n; i++) {
		struct json_object *root, *tot, *l;
		char path[1100];
		double iops;
		bool h;

		snprintf(path, sizeof(path), "%s/perf-%d.json", dir, i);
		root = json_object_from_file(path);
		if (!root || !json_object_object_get_ex(root, "total", &tot)) {
			snprintf(err, elen, "controller %d: no JSON report from nvmf-perf", i);
			if (root)
				json_object_put(root);
			return -EINVAL;
		}
		iops = jget(tot, "iops", &h);
		if (!h) {
			json_object_put(root);
			snprintf(err, elen, "controller %d: report without total.iops", i);
			return -EINVAL;
		}
		v[BM_IOPS] += iops;
		v[BM_MIBS] += jget(tot, "mib_per_s", NULL);
		v[BM_HOST_CPU] += jget(tot, "cpu_user_pct", NULL) + jget(tot, "cpu_sys_pct", NULL);
		v[BM_HOST_CTXSW] += jget(tot, "voluntary_ctxsw", NULL) + jget(tot, "involuntary_ctxsw", NULL);
		/* cost per I/O over the measured window of this process */
		cpu_s += (jget(tot, "cpu_user_pct", NULL) + jget(tot, "cpu_sys_pct", NULL)) / 100.0 *
			 jget(tot, "seconds", NULL);
		ios_sum += jget(tot, "ios", NULL);
		ctxsw += jget(tot, "voluntary_ctxsw", NULL) + jget(tot, "involuntary_ctxsw", NULL);
		/* syscalls of the queue threads (whole run): sends, receives, waits */
		if (json_object_object_get_ex(root, "queues", &l) && json_object_is_type(l, json_type_array)) {
			for (size_t q = 0; q < json_object_array_length(l); q++) {
				struct json_object *qo = json_object_array_get_idx(l, q), *tr, *ex;

				if (json_object_object_get_ex(qo, "transport", &tr)) {
					sysc += jget(tr, "sendmsgs", NULL) + jget(tr, "recvs", NULL);
					compl += jget(tr, "completed", NULL);
				}
				if (json_object_object_get_ex(qo, "exec", &ex))
					sysc += jget(ex, "blocking_waits", NULL);
			}
		}
		if (json_object_object_get_ex(tot, "latency_us", &l)) {
			double mn = jget(l, "min", NULL), mx = jget(l, "max", NULL);

			if (mn < v[BM_LAT_MIN])
				v[BM_LAT_MIN] = mn;
			if (mx > v[BM_LAT_MAX])
				v[BM_LAT_MAX] = mx;
			have[BM_LAT_MIN] = have[BM_LAT_MAX] = true;
			for (k = 0; k < (int)(sizeof(lat) / sizeof(lat[0])); k++) {
				double x = jget(l, lat[k].key, &h);

				if (!h && lat[k].m == BM_LAT_STDEV)
					x = jget(l, "stddev", &h);
				if (h) {
					v[lat[k].m] += x * (iops > 0 ? iops : 1);
					have[lat[k].m] = true;
				}
			}
			wsum += iops > 0 ? iops : 1;
		}
		json_object_put(root);
	}
	for (k = 0; k < (int)(sizeof(lat) / sizeof(lat[0])); k++)
		if (have[lat[k].m] && wsum > 0)
			v[lat[k].m] /= wsum;
	have[BM_IOPS] = have[BM_MIBS] = have[BM_HOST_CPU] = have[BM_HOST_CTXSW] = true;
	if (ios_sum > 0) {
		v[BM_HOST_CPU_S_MIO] = cpu_s / ios_sum * 1e6;
		v[BM_HOST_CTXSW_IO] = ctxsw / ios_sum;
		have[BM_HOST_CPU_S_MIO] = have[BM_HOST_CTXSW_IO] = true;
	}
	if (compl > 0) {
		v[BM_HOST_SYSCALLS_IO] = sysc / compl;
		have[BM_HOST_SYSCALLS_IO] = true;
	}
	if (!have[BM_LAT_MIN])
		v[BM_LAT_MIN] = 0;
	return 0;
}

static int build_target_argv(const struct bench_cell *c, const char *nvmfd, const char *dir, struct run_state *rs,
			     const struct bench_cpuset *tcpus, char **argv, char *store, size_t cap)
{
	const struct bench_target *t = &c->target;
	size_t off = 0;
	int argc = 0, i;
	char cpus[512];

	append_arg(argv, &argc, store, &off, cap, "%s", nvmfd);
	append_arg(argv, &argc, store, &off, cap, "-l");
	append_arg(argv, &argc, store, &off, cap, "127.0.0.1:0");
	append_arg(argv, &argc, store, &off, cap, "-s");
	append_arg(argv, &argc, store, &off, cap, NQN);
	append_arg(argv, &argc, store, &off, cap, "-n");
	if (!strcmp(t->backend, "file"))
		append_arg(argv, &argc, store, &off, cap, "file:%s/backing.img,size=%s", dir, t->backend_size);
	else
		append_arg(argv, &argc, store, &off, cap, "%s:%s", t->backend, t->backend_size);
	append_arg(argv, &argc, store, &off, cap, "--allow-any-host");
	append_arg(argv, &argc, store, &off, cap, "--control");
	append_arg(argv, &argc, store, &off, cap, "%s", rs->sock);
	append_arg(argv, &argc, store, &off, cap, "--log-level");
	append_arg(argv, &argc, store, &off, cap, "info");
	if (*t->exec) {
		append_arg(argv, &argc, store, &off, cap, "--exec");
		append_arg(argv, &argc, store, &off, cap, "%s", t->exec);
	}
	if (*t->affinity_scope) {
		append_arg(argv, &argc, store, &off, cap, "--affinity-scope");
		append_arg(argv, &argc, store, &off, cap, "%s", t->affinity_scope);
	}
	if (t->affinity_strict > 0)
		append_arg(argv, &argc, store, &off, cap, "--affinity-strict");
	if (t->max_active >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--max-active");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->max_active);
	}
	if (t->wq_per_ctrl > 0)
		append_arg(argv, &argc, store, &off, cap, "--wq-per-ctrl");
	if (t->idle_poll_us >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--idle-poll-us");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->idle_poll_us);
	}
	if (t->backend_poll > 0)
		append_arg(argv, &argc, store, &off, cap, "--backend-poll");
	if (*t->cq_pool) {
		append_arg(argv, &argc, store, &off, cap, "--cq-pool");
		append_arg(argv, &argc, store, &off, cap, "%s", t->cq_pool);
	}
	if (t->rx_budget >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--rx-budget");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->rx_budget);
	}
	if (t->tx_budget >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--tx-budget");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->tx_budget);
	}
	if (t->rx_budget_pdus >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--rx-budget-pdus");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->rx_budget_pdus);
	}
	if (t->tx_budget_pdus >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--tx-budget-pdus");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->tx_budget_pdus);
	}
	if (t->io_work_deadline_us >= 0) {
		append_arg(argv, &argc, store, &off, cap, "--io-work-deadline-us");
		append_arg(argv, &argc, store, &off, cap, "%ld", t->io_work_deadline_us);
	}
	if (*t->io_cpu) {
		append_arg(argv, &argc, store, &off, cap, "--io-cpu");
		append_arg(argv, &argc, store, &off, cap, "%s", t->io_cpu);
	}
	if (*t->cpus && strcmp(t->cpus, "all")) {
		bench_cpuset_format(tcpus, cpus, sizeof(cpus));
		append_arg(argv, &argc, store, &off, cap, "--cpus");
		append_arg(argv, &argc, store, &off, cap, "%s", cpus);
	}
	for (i = 0; i < t->nr_extra; i++)
		append_arg(argv, &argc, store, &off, cap, "%s", t->extra[i]);
	return off > cap ? -E2BIG : argc;
}

/*
 * The workload arguments nvmf-perf and spdk_nvme_perf spell alike: one -r
 * per controller, -q, -o, -w, -M (mixed patterns only: nvmf-perf refuses it
 * otherwise), -t.
 */
static void append_workload_args(const struct bench_cell *c, long port, long nr_r, char **argv, int *argc,
				 char *store, size_t *off, size_t cap)
{
	const struct bench_perf *p = &c->perf;
	long i;

	for (i = 0; i < nr_r; i++) {
		append_arg(argv, argc, store, off, cap, "-r");
		append_arg(argv, argc, store, off, cap, "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%ld subnqn:%s",
			   port, NQN);
	}
	append_arg(argv, argc, store, off, cap, "-q");
	append_arg(argv, argc, store, off, cap, "%ld", p->qd);
	append_arg(argv, argc, store, off, cap, "-o");
	append_arg(argv, argc, store, off, cap, "%ld", p->io_size);
	append_arg(argv, argc, store, off, cap, "-w");
	append_arg(argv, argc, store, off, cap, "%s", p->pattern);
	if (!strcmp(p->pattern, "rw") || !strcmp(p->pattern, "randrw")) {
		append_arg(argv, argc, store, off, cap, "-M");
		append_arg(argv, argc, store, off, cap, "%ld", p->read_pct);
	}
	append_arg(argv, argc, store, off, cap, "-t");
	append_arg(argv, argc, store, off, cap, "%ld", lround(c->duration));
}

/* Does the cell's extra nvmf-perf arguments hold option @opt (as its own
 * argument, or "@opt=...")? */
static bool perf_extra_has(const struct bench_perf *p, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 0; i < p->nr_extra; i++)
		if (!strncmp(p->extra[i], opt, n) && (!p->extra[i][n] || p->extra[i][n] == '='))
			return true;
	return false;
}

/* nvmf-perf's arguments; @nr_r controllers (-r each) in this process. */
static int build_perf_argv(const struct bench_cell *c, const char *perf, long port, long queues, long nr_r,
			   const struct bench_cpuset *pcpus, char **argv, char *store, size_t cap)
{
	const struct bench_perf *p = &c->perf;
	size_t off = 0;
	int argc = 0, i;

	append_arg(argv, &argc, store, &off, cap, "%s", perf);
	append_workload_args(c, port, nr_r, argv, &argc, store, &off, cap);
	append_arg(argv, &argc, store, &off, cap, "--warmup");
	append_arg(argv, &argc, store, &off, cap, "%ld", lround(c->warmup));
	append_arg(argv, &argc, store, &off, cap, "-P");
	append_arg(argv, &argc, store, &off, cap, "%ld", queues);
	append_arg(argv, &argc, store, &off, cap, "--timeout");
	append_arg(argv, &argc, store, &off, cap, "%ld", p->timeout_ms);
	if (*p->digest && strcmp(p->digest, "none")) {
		append_arg(argv, &argc, store, &off, cap, "--digest");
		append_arg(argv, &argc, store, &off, cap, "%s", p->digest);
	}
	if (p->busy_poll > 0)
		append_arg(argv, &argc, store, &off, cap, "--busy-poll");
	if (p->rate > 0) {
		append_arg(argv, &argc, store, &off, cap, "--rate");
		append_arg(argv, &argc, store, &off, cap, "%ld", p->rate);
	}
	if (pcpus->nr) {
		char cpus[512];

		/* its queue threads pin themselves inside this list */
		bench_cpuset_format(pcpus, cpus, sizeof(cpus));
		append_arg(argv, &argc, store, &off, cap, "--cpus");
		append_arg(argv, &argc, store, &off, cap, "%s", cpus);
	}
	/* the host's execution mode is the scenario's: bound (what every
	 * scenario was measured with; nvmf-perf's own default is auto since
	 * session 30) unless the cell's extra arguments name one */
	if (!perf_extra_has(p, "--exec")) {
		append_arg(argv, &argc, store, &off, cap, "--exec");
		append_arg(argv, &argc, store, &off, cap, "bound");
	}
	for (i = 0; i < p->nr_extra; i++)
		append_arg(argv, &argc, store, &off, cap, "%s", p->extra[i]);
	append_arg(argv, &argc, store, &off, cap, "--json");
	return off > cap ? -E2BIG : argc;
}

/* ---------------------------------------------------------------------- */
/* SPDK: nvmf_tgt as the target, spdk_nvme_perf as the initiator           */

/* "0x..." core mask of @set for SPDK's -m / -c. */
static void core_mask(const struct bench_cpuset *set, char *buf, size_t len)
{
	unsigned char bits[BENCH_MAX_CPUS / 8] = { 0 };
	int i, top = 0, b;
	size_t off;

	for (i = 0; i < set->nr; i++) {
		bits[set->cpu[i] / 8] |= 1u << (set->cpu[i] % 8);
		if (set->cpu[i] > top)
			top = set->cpu[i];
	}
	off = (size_t)snprintf(buf, len, "0x");
	for (b = top / 4; b >= 0 && off + 1 < len; b--) {
		unsigned v = (bits[b / 2] >> (b % 2 * 4)) & 0xf;

		buf[off++] = "0123456789abcdef"[v];
	}
	buf[off] = 0;
}

/*
 * A port for nvmf_tgt, which cannot be told port 0 and report the port it
 * got: bind 127.0.0.1:0 with SO_REUSEADDR and keep the socket bound (not
 * listening) while nvmf_tgt starts. Nobody else gets the port meanwhile
 * (the kernel does not hand out a bound port), and nvmf_tgt, which sets
 * SO_REUSEADDR too, may bind and listen on it.
 * Return: the socket (close it once nvmf_tgt listens), or -errno.
 */
static int reserve_port(long *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		int e = -errno;

		close(fd);
		return e;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Is somebody listening on 127.0.0.1:@port (/proc/net/tcp, state 0A)? */
static bool port_listening(long port)
{
	char line[512], want[32];
	bool hit = false;
	FILE *f = fopen("/proc/net/tcp", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "0100007F:%04lX", port);
	while (!hit && fgets(line, sizeof(line), f)) {
		char local[64], remote[64], st[8];

		if (sscanf(line, "%*s %63s %63s %7s", local, remote, st) == 3 && !strcmp(local, want) &&
		    !strcmp(st, "0A"))
			hit = true;
	}
	fclose(f);
	return hit;
}

/*
 * One JSON-RPC 2.0 call on nvmf_tgt's RPC socket; @reply gets the parsed
 * response (json_object_put() it). Return: 0, or -errno / -ETIMEDOUT after
 * 2 s without a complete reply.
 */
static int spdk_rpc(const char *sock_path, const char *method, struct json_object **reply)
{
	struct json_tokener *tok;
	char req[256], buf[16384];
	int fd, ret = -EIO;

	*reply = NULL;
	fd = bench_unix_connect(sock_path, 2);
	if (fd < 0)
		return fd;
	tok = json_tokener_new();
	if (!tok) {
		close(fd);
		return -ENOMEM;
	}
	snprintf(req, sizeof(req), "{\"jsonrpc\": \"2.0\", \"method\": \"%s\", \"id\": 1}", method);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		ret = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0) {
			ret = n < 0 && errno == EAGAIN ? -ETIMEDOUT : -EIO;
			break;
		}
		*reply = json_tokener_parse_ex(tok, buf, (int)n);
		if (*reply) {
			ret = 0;
			break;
		}
		if (json_tokener_get_error(tok) != json_tokener_continue)
			break;
	}
out:
	json_tokener_free(tok);
	close(fd);
	return ret;
}

/*
 * Has nvmf_tgt applied its whole configuration? nvmf_get_subsystems is
 * answered only once initialization is done; the bench's subsystem must
 * list its namespace and a listener (the configuration's last two calls).
 * Listening alone is not enough: a Connect that arrives while the
 * configuration is still being applied can be refused.
 */
static bool spdk_ready(const char *rpc_sock)
{
	struct json_object *reply, *result, *sub, *v;
	bool ready = false;
	size_t i;

	if (spdk_rpc(rpc_sock, "nvmf_get_subsystems", &reply))
		return false;
	if (json_object_object_get_ex(reply, "result", &result) && json_object_is_type(result, json_type_array)) {
		for (i = 0; i < json_object_array_length(result); i++) {
			sub = json_object_array_get_idx(result, i);
			if (!json_object_object_get_ex(sub, "nqn", &v) || strcmp(json_object_get_string(v), NQN))
				continue;
			ready = json_object_object_get_ex(sub, "namespaces", &v) &&
				json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0 &&
				json_object_object_get_ex(sub, "listen_addresses", &v) &&
				json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0;
		}
	}
	json_object_put(reply);
	return ready;
}

static struct json_object *rpc(const char *method, struct json_object *params)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "params", params);
	return o;
}

static struct json_object *subsys(const char *name, struct json_object *config)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "subsystem", json_object_new_string(name));
	json_object_object_add(o, "config", config);
	return o;
}

/*
 * nvmf_tgt's JSON configuration (-c): posix sockets, a malloc ("ram") or
 * null bdev of the cell's size with 512-byte blocks, the TCP transport
 * with its defaults, one subsystem open to any host with the namespace,
 * a listener on 127.0.0.1:@port.
 */
static int write_spdk_config(const struct bench_cell *c, const char *path, long port)
{
	struct json_object *root = json_object_new_object(), *subs = json_object_new_array();
	struct json_object *sock = json_object_new_array(), *bdev = json_object_new_array();
	struct json_object *nvmf = json_object_new_array(), *p, *ns, *la;
	long size = 0;
	char svc[16];
	int ret;

	bench_parse_size(c->target.backend_size, &size);
	p = json_object_new_object();
	json_object_object_add(p, "impl_name", json_object_new_string("posix"));
	json_object_array_add(sock, rpc("sock_set_default_impl", p));
	p = json_object_new_object();
	json_object_object_add(p, "name", json_object_new_string("Bench0"));
	json_object_object_add(p, "num_blocks", json_object_new_int64(size / 512));
	json_object_object_add(p, "block_size", json_object_new_int(512));
	json_object_array_add(bdev, rpc(!strcmp(c->target.backend, "ram") ? "bdev_malloc_create" : "bdev_null_create",
					p));
	p = json_object_new_object();
	json_object_object_add(p, "trtype", json_object_new_string("TCP"));
	json_object_array_add(nvmf, rpc("nvmf_create_transport", p));
	p = json_object_new_object();
	json_object_object_add(p, "nqn", json_object_new_string(NQN));
	json_object_object_add(p, "allow_any_host", json_object_new_boolean(1));
	json_object_object_add(p, "serial_number", json_object_new_string("NVMFBENCH0000001"));
	json_object_object_add(p, "model_number", json_object_new_string("nvmf-bench SPDK target"));
	json_object_array_add(nvmf, rpc("nvmf_create_subsystem", p));
	p = json_object_new_object();
	ns = json_object_new_object();
	json_object_object_add(ns, "bdev_name", json_object_new_string("Bench0"));
	json_object_object_add(p, "nqn", json_object_new_string(NQN));
	json_object_object_add(p, "namespace", ns);
	json_object_array_add(nvmf, rpc("nvmf_subsystem_add_ns", p));
	p = json_object_new_object();
	la = json_object_new_object();
	snprintf(svc, sizeof(svc), "%ld", port);
	json_object_object_add(la, "trtype", json_object_new_string("TCP"));
	json_object_object_add(la, "adrfam", json_object_new_string("IPv4"));
	json_object_object_add(la, "traddr", json_object_new_string("127.0.0.1"));
	json_object_object_add(la, "trsvcid", json_object_new_string(svc));
	json_object_object_add(p, "nqn", json_object_new_string(NQN));
	json_object_object_add(p, "listen_address", la);
	json_object_array_add(nvmf, rpc("nvmf_subsystem_add_listener", p));
	json_object_array_add(subs, subsys("sock", sock));
	json_object_array_add(subs, subsys("bdev", bdev));
	json_object_array_add(subs, subsys("nvmf", nvmf));
	json_object_object_add(root, "subsystems", subs);
	ret = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY) ? -EIO : 0;
	json_object_put(root);
	return ret;
}

/* env LD_LIBRARY_PATH=<spdk>/build/lib <spdk>/build/bin/@prog: the first argv words. */
static void spdk_prog(const struct bench_paths *paths, const char *prog, char **argv, int *argc, char *store,
		      size_t *off, size_t cap)
{
	append_arg(argv, argc, store, off, cap, "%s", paths->env);
	append_arg(argv, argc, store, off, cap, "LD_LIBRARY_PATH=%s/build/lib", paths->spdk_dir);
	append_arg(argv, argc, store, off, cap, "%s/build/bin/%s", paths->spdk_dir, prog);
}

/*
 * nvmf_tgt --no-huge -s MB -m MASK --no-pci -r RPC-SOCKET -c CONFIG: the
 * reactor runs on the target's CPUs; memory: the namespace plus 768 MiB
 * for the transport's buffers and DPDK.
 */
static int build_spdk_target_argv(const struct bench_cell *c, const struct bench_paths *paths, const char *cfg,
				  const char *rpc_sock, const struct bench_cpuset *tcpus, char **argv, char *store,
				  size_t cap)
{
	size_t off = 0;
	int argc = 0, i;
	long size = 0;
	char mask[300];

	bench_parse_size(c->target.backend_size, &size);
	core_mask(tcpus, mask, sizeof(mask));
	spdk_prog(paths, "nvmf_tgt", argv, &argc, store, &off, cap);
	append_arg(argv, &argc, store, &off, cap, "--no-huge");
	append_arg(argv, &argc, store, &off, cap, "-s");
	append_arg(argv, &argc, store, &off, cap, "%ld",
		   (!strcmp(c->target.backend, "ram") ? size >> 20 : 0) + 768);
	append_arg(argv, &argc, store, &off, cap, "-m");
	append_arg(argv, &argc, store, &off, cap, "%s", mask);
	append_arg(argv, &argc, store, &off, cap, "--no-pci");
	append_arg(argv, &argc, store, &off, cap, "-r");
	append_arg(argv, &argc, store, &off, cap, "%s", rpc_sock);
	append_arg(argv, &argc, store, &off, cap, "-c");
	append_arg(argv, &argc, store, &off, cap, "%s", cfg);
	for (i = 0; i < c->target.nr_extra; i++)
		append_arg(argv, &argc, store, &off, cap, "%s", c->target.extra[i]);
	return off > cap ? -E2BIG : argc;
}

/*
 * spdk_nvme_perf for the cell: one process for all controllers (-r each),
 * its queue pairs (-P) and depth (-q: spdk_nvme_perf's depth is per
 * namespace and core, spread over the queue pairs), latency summary (-L)
 * for the percentiles unless perf.latency is false, digests as -H / -I, its cores (-c) the
 * initiator's CPUs (default: the upper half).
 */
static int build_spdk_perf_argv(const struct bench_cell *c, const struct bench_paths *paths, long port,
				long queues, long nr_r, const struct bench_cpuset *pcpus, char **argv, char *store,
				size_t cap)
{
	const struct bench_perf *p = &c->perf;
	struct bench_cpuset online, half;
	size_t off = 0;
	int argc = 0, i;
	char mask[300];

	if (!pcpus->nr) {
		bench_cpuset_online(&online);
		bench_cpuset_resolve("upper-half", &online, &half);
		pcpus = &half;
	}
	core_mask(pcpus, mask, sizeof(mask));
	spdk_prog(paths, "spdk_nvme_perf", argv, &argc, store, &off, cap);
	append_arg(argv, &argc, store, &off, cap, "--no-huge");
	append_arg(argv, &argc, store, &off, cap, "-s");
	append_arg(argv, &argc, store, &off, cap, "%ld", 256 + (p->io_size * p->qd * nr_r >> 20) * 2);
	append_arg(argv, &argc, store, &off, cap, "-c");
	append_arg(argv, &argc, store, &off, cap, "%s", mask);
	append_workload_args(c, port, nr_r, argv, &argc, store, &off, cap);
	if (lround(c->warmup) > 0) {
		append_arg(argv, &argc, store, &off, cap, "-a");
		append_arg(argv, &argc, store, &off, cap, "%ld", lround(c->warmup));
	}
	append_arg(argv, &argc, store, &off, cap, "-P");
	append_arg(argv, &argc, store, &off, cap, "%ld", queues);
	if (strstr(p->digest, "hdr"))
		append_arg(argv, &argc, store, &off, cap, "-H");
	if (strstr(p->digest, "data"))
		append_arg(argv, &argc, store, &off, cap, "-I");
	if (p->latency)
		append_arg(argv, &argc, store, &off, cap, "-L");
	for (i = 0; i < p->nr_extra; i++)
		append_arg(argv, &argc, store, &off, cap, "%s", p->extra[i]);
	return off > cap ? -E2BIG : argc;
}

static int parse_spdk_perf_report(const char *path, double *v, bool *have, char *err, size_t elen)
{
	char *text;
	long sz;
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		bench_fmt(err, elen, "no report from spdk_nvme_perf (%s)", path);
		return -EINVAL;
	}
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc(sz > 0 ? sz + 1 : 1);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	sz = (long)fread(text, 1, sz > 0 ? sz : 0, f);
	text[sz] = 0;
	fclose(f);
	ret = bench_parse_spdk_perf(text, v, have);
	free(text);
	if (ret)
		bench_fmt(err, elen, "spdk_nvme_perf printed no Total line (see %s)", path);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Target syscalls over the measured window (--syscalls)                  */

/*
 * perf stat -e raw_syscalls:sys_enter -x, -p PID -- sleep @window (it
 * counts PID for as long as the sleep runs, then prints and exits: no
 * signal can reach it before it is ready), or strace -c -f -p PID (ended
 * with SIGINT by stop_syscall_count()).
 */
static pid_t start_syscall_count(const struct bench_run_opts *ro, const struct bench_paths *paths, pid_t tpid,
				 const char *dir, double window)
{
	char *argv[16], store[2048], out[1100];
	size_t off = 0;
	int argc = 0;

	if (ro->syscalls == BENCH_SYSCALLS_PERF) {
		snprintf(out, sizeof(out), "%s/target-syscalls.csv", dir);
		append_arg(argv, &argc, store, &off, sizeof(store), "%s", paths->perf_tool);
		append_arg(argv, &argc, store, &off, sizeof(store), "stat");
		append_arg(argv, &argc, store, &off, sizeof(store), "-e");
		append_arg(argv, &argc, store, &off, sizeof(store), "raw_syscalls:sys_enter");
		append_arg(argv, &argc, store, &off, sizeof(store), "-x");
		append_arg(argv, &argc, store, &off, sizeof(store), ",");
		append_arg(argv, &argc, store, &off, sizeof(store), "-o");
		append_arg(argv, &argc, store, &off, sizeof(store), "%s", out);
		append_arg(argv, &argc, store, &off, sizeof(store), "-p");
		append_arg(argv, &argc, store, &off, sizeof(store), "%d", (int)tpid);
		append_arg(argv, &argc, store, &off, sizeof(store), "--");
		append_arg(argv, &argc, store, &off, sizeof(store), "sleep");
		append_arg(argv, &argc, store, &off, sizeof(store), "%.3f", window);
	} else if (ro->syscalls == BENCH_SYSCALLS_STRACE) {
		snprintf(out, sizeof(out), "%s/target-strace.txt", dir);
		append_arg(argv, &argc, store, &off, sizeof(store), "%s", paths->strace);
		append_arg(argv, &argc, store, &off, sizeof(store), "-c");
		append_arg(argv, &argc, store, &off, sizeof(store), "-f");
		append_arg(argv, &argc, store, &off, sizeof(store), "-qq");
		append_arg(argv, &argc, store, &off, sizeof(store), "-o");
		append_arg(argv, &argc, store, &off, sizeof(store), "%s", out);
		append_arg(argv, &argc, store, &off, sizeof(store), "-p");
		append_arg(argv, &argc, store, &off, sizeof(store), "%d", (int)tpid);
	} else {
		return 0;
	}
	snprintf(out + strlen(out) - 4, 8, ".log");
	return bench_proc_spawn(argv, NULL, out, NULL, 0, NULL);
}

/* Collect the counter (perf ends by itself, strace on SIGINT), read its count. */
static int stop_syscall_count(pid_t cpid, const struct bench_run_opts *ro, const char *dir, double *count)
{
	char path[1100], text[8192];
	int st, ret;
	FILE *f;
	size_t n;

	if (ro->syscalls == BENCH_SYSCALLS_STRACE)
		kill(cpid, SIGINT);
	if (bench_proc_wait(cpid, &st, 10))
		return -ETIMEDOUT;
	snprintf(path, sizeof(path), "%s/%s", dir,
		 ro->syscalls == BENCH_SYSCALLS_PERF ? "target-syscalls.csv" : "target-strace.txt");
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	ret = bench_parse_syscall_count(text, count);
	return ret;
}

static pid_t start_load(const struct bench_cell *c, const char *dir, const struct bench_cpuset *lcpus,
			const struct bench_paths *paths, const char *cg_procs, char *desc, size_t dlen)
{
	const struct bench_load *l = &c->load;
	char cpus[512], log[1100];
	char *argv[BENCH_MAX_ARGS];
	char store[2048];
	size_t off = 0;
	int argc = 0;

	bench_cpuset_format(lcpus, cpus, sizeof(cpus));
	snprintf(log, sizeof(log), "%s/contention.log", dir);
	if (l->kind == BENCH_LOAD_HOG) {
		pid_t pid;

		bench_fmt(desc, dlen, "hog on CPUs %s, nice %ld, load %ld%%, %ld MiB/thread%s", cpus,
			  l->nice, l->load_pct, l->buffer_mb, l->own_session ? ", own session" : "");
		bench_proc_own_session(l->own_session);
		pid = bench_proc_spawn_hog(lcpus, (int)l->nice, l->load_pct, l->buffer_mb, log, cg_procs);
		bench_proc_own_session(false);
		return pid;
	}
	append_arg(argv, &argc, store, &off, sizeof(store), "%s", paths->stress_ng);
	append_arg(argv, &argc, store, &off, sizeof(store), "--cpu");
	append_arg(argv, &argc, store, &off, sizeof(store), "%ld", l->workers ? l->workers : (long)lcpus->nr);
	append_arg(argv, &argc, store, &off, sizeof(store), "--cpu-load");
	append_arg(argv, &argc, store, &off, sizeof(store), "%ld", l->load_pct);
	append_arg(argv, &argc, store, &off, sizeof(store), "--taskset");
	append_arg(argv, &argc, store, &off, sizeof(store), "%s", cpus);
	if (l->buffer_mb > 0) {
		append_arg(argv, &argc, store, &off, sizeof(store), "--vm");
		append_arg(argv, &argc, store, &off, sizeof(store), "1");
		append_arg(argv, &argc, store, &off, sizeof(store), "--vm-bytes");
		append_arg(argv, &argc, store, &off, sizeof(store), "%ldM", l->buffer_mb);
	}
	append_arg(argv, &argc, store, &off, sizeof(store), "--timeout");
	append_arg(argv, &argc, store, &off, sizeof(store), "0");
	append_arg(argv, &argc, store, &off, sizeof(store), "-q");
	join_argv(argv, desc, dlen);
	snprintf(desc + strlen(desc), dlen - strlen(desc), " (nice %ld%s)", l->nice,
		 l->own_session ? ", own session" : "");
	{
		pid_t pid;

		bench_proc_own_session(l->own_session);
		pid = bench_proc_spawn(argv, NULL, log, NULL, (int)l->nice, cg_procs);
		bench_proc_own_session(false);
		return pid;
	}
}

static bool have_exe(const char *path)
{
	return path && access(path, X_OK) == 0;
}

/*
 * Has the target (@name: "nvmfd" or "nvmf_tgt") exited while starting? Then
 * its group is reaped, *@tpid is 0 and @err says why with its log's last line.
 */
static bool target_exited(pid_t *tpid, const char *name, const char *logp, char *err, size_t elen)
{
	char tail[200];
	int st;

	if (bench_proc_poll_exit(*tpid, &st) != 1)
		return false;
	tail_file(logp, tail, sizeof(tail));
	bench_fmt(err, elen, "%s exited (status %d): %s", name, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		  tail);
	bench_proc_reap_group(*tpid, NULL, 0);
	*tpid = 0;
	return true;
}

/**
 * bench_cell_run_once() - run @cell once (repeat index @rep) and record it.
 * @sc: the cell's scenario (borrowed).
 * @cell: the cell; its res.v[@rep] etc. are filled (borrowed).
 * @rep: repeat index, 0..BENCH_MAX_REPEAT-1.
 * @out_dir: results folder; raw files go to raw/<scenario>/<cell>/rep<N>.
 * @paths: executables (borrowed).
 * @ro: noise-guard threshold (borrowed).
 * @tick: called about every 200 ms while waiting (progress bar), or NULL.
 * @tick_arg: passed to @tick.
 *
 * Every process started here is stopped and reaped before returning,
 * also on failure and when bench_stop_sig is set.
 *
 * Return: 0 if the run produced metrics; -EINTR if interrupted by a
 * signal; -EIO (reason in res.err[@rep]) if a process failed.
 * Context: main thread.
 */
int bench_cell_run_once(const struct bench_scenario *sc, struct bench_cell *cell, int rep, const char *out_dir,
			const struct bench_paths *paths, const struct bench_run_opts *ro, void (*tick)(void *arg),
			void *tick_arg)
{
	struct bench_result *res = &cell->res;
	char *targv[BENCH_MAX_ARGS], *pargv[BENCH_MAX_ARGS];
	char tstore[4096], pstore[16384];
	char dir[1024], path[1100], logp[1100];
	struct bench_cpuset online, tcpus, lcpus, pcpus;
	pid_t tpid = 0, lpid = 0, ppid[BENCH_MAX_CTRLS] = { 0 };
	bool pdone[BENCH_MAX_CTRLS] = { false };
	int pstatus[BENCH_MAX_CTRLS];
	long nctrl, queues, nproc;
	struct run_state *rs;
	double t_start, t0, t1, deadline, q0[QF_NR], q1[QF_NR];
	uint64_t c0 = 0, v0 = 0, i0 = 0, c1 = 0, v1 = 0, i1 = 0, ns0 = 0, ns1 = 0;
	uint64_t hns0 = 0, hns1 = 0, hc0 = 0, hv0 = 0, hi0 = 0, hc1 = 0, hv1 = 0, hi1 = 0;
	bool s0 = false, s1 = false, have_ns = false, have_hns = false;
	unsigned long lp0 = 0; /* rs->live_polls at the first sample */
	bool spdk_tgt = cell->target.kind == BENCH_TARGET_SPDK, spdk_perf = cell->perf.tool == BENCH_PERF_SPDK;
	char cgp[BENCH_CG_NR][4300];
	pid_t scpid = 0; /* syscall counter */
	double sc_t0 = 0, sc_count = 0, sc_w = 0;
	bool have_sc = false;
	int port_fd = -1;
	char rpcs[200] = ""; /* nvmf_tgt's RPC socket (unused, but it must not be SPDK's default) */
	struct bench_sys_sample sys_pre, sys0, sys1;
	char *err = res->err[rep];
	int ret = -EIO, i, st, ndone = 0;
	long tck = sysconf(_SC_CLK_TCK);

	res->ok[rep] = false;
	res->busy[rep] = false;
	err[0] = 0;
	rs = calloc(1, sizeof(*rs));
	if (!rs) {
		snprintf(err, sizeof(res->err[0]), "out of memory");
		return -EIO;
	}
	rs->stats_buf = malloc(STATS_BUF);
	rs->last_live = calloc(1, STATS_BUF);
	if (!rs->stats_buf || !rs->last_live) {
		snprintf(err, sizeof(res->err[0]), "out of memory");
		goto out_free;
	}
	snprintf(dir, sizeof(dir), "%s/raw/%s/%s/rep%d", out_dir, sc->name, cell->name, rep + 1);
	mkdirs(dir);
	if ((size_t)snprintf(rs->sock, sizeof(rs->sock), "%s/%s.sock", paths->sock_dir, cell->name) >
	    100)
		snprintf(rs->sock, sizeof(rs->sock), "%s/nvmfd.sock", paths->sock_dir);
	unlink(rs->sock);

	if (bench_cpuset_online(&online) || bench_cpuset_resolve(cell->target.cpus, &online, &tcpus) ||
	    bench_cpuset_resolve(cell->load.cpus, &tcpus, &lcpus) ||
	    bench_count_resolve(cell->perf.controllers, &nctrl) || bench_count_resolve(cell->perf.queues, &queues)) {
		snprintf(err, sizeof(res->err[0]), "cannot resolve CPU sets or counts on this machine");
		goto out_free;
	}
	pcpus.nr = 0;
	if (*cell->perf.cpus && bench_cpuset_resolve(cell->perf.cpus, &tcpus, &pcpus)) {
		snprintf(err, sizeof(res->err[0]), "cannot resolve perf.cpus");
		goto out_free;
	}
	if (nctrl > BENCH_MAX_CTRLS)
		nctrl = BENCH_MAX_CTRLS;
	/* one nvmf-perf per controller, or one for all (merged histograms) */
	nproc = cell->perf.one_process > 0 ? 1 : nctrl;
	bench_cpuset_format(&tcpus, res->target_cpus, sizeof(res->target_cpus));
	if (pcpus.nr)
		bench_cpuset_format(&pcpus, res->perf_cpus, sizeof(res->perf_cpus));
	else
		snprintf(res->perf_cpus, sizeof(res->perf_cpus), "any");
	if (cell->load.kind != BENCH_LOAD_NONE)
		bench_cpuset_format(&lcpus, res->load_cpus, sizeof(res->load_cpus));
	else
		snprintf(res->load_cpus, sizeof(res->load_cpus), "-");
	if (cell->load.kind == BENCH_LOAD_STRESS && !have_exe(paths->stress_ng)) {
		snprintf(err, sizeof(res->err[0]), "stress-ng not found (%s)", paths->stress_ng);
		goto out_free;
	}
	if ((spdk_tgt || spdk_perf) && (!paths->spdk_dir || !paths->env)) {
		snprintf(err, sizeof(res->err[0]), "SPDK is not available (--spdk DIR)");
		goto out_free;
	}
	/* one nvmf-perf per controller unless one_process; spdk_nvme_perf takes them all */
	if (spdk_perf)
		nproc = 1;
	/* a cpuset cgroup per role, set to this cell's CPUs (affinity only without) */
	snprintf(res->isolation, sizeof(res->isolation), "%s", paths->cg && paths->cg->version ?
			 (paths->cg->version == 2 ? "cpuset cgroups (v2)" : "cpuset cgroups (v1)") : "affinity only");
	st = bench_cg_prepare(paths->cg, BENCH_CG_TARGET, &tcpus, cgp[BENCH_CG_TARGET], sizeof(cgp[0]));
	if (!st)
		st = bench_cg_prepare(paths->cg, BENCH_CG_INITIATOR, pcpus.nr ? &pcpus : &online,
				      cgp[BENCH_CG_INITIATOR], sizeof(cgp[0]));
	if (!st)
		st = bench_cg_prepare(paths->cg, BENCH_CG_LOAD, &lcpus, cgp[BENCH_CG_LOAD], sizeof(cgp[0]));
	if (st) {
		snprintf(err, sizeof(res->err[0]), "cannot set the CPUs of the cpuset cgroups: %s", strerror(-st));
		goto out_free;
	}
	/* the target's CPU quota; never run a cell that asks for one without it */
	res->target_cpu_quota = cell->target.cpu_quota;
	st = bench_cg_prepare_quota(paths->cg, cell->target.cpu_quota, cgp[BENCH_CG_TARGET], sizeof(cgp[0]));
	if (st == -ENODEV) {
		bench_fmt(err, sizeof(res->err[0]), "target.cpu_quota %g: no usable cpu controller: %s",
			  cell->target.cpu_quota, paths->cg && *paths->cg->cpu_why ? paths->cg->cpu_why : "none");
		goto out_free;
	} else if (st) {
		snprintf(err, sizeof(res->err[0]), "cannot set the target's CPU quota: %s", strerror(-st));
		goto out_free;
	}

	/*
	 * noise guard, before: nothing of ours runs for a quarter second, so
	 * whatever CPU the machine uses meanwhile is other work
	 */
	bench_sys_sample(&sys_pre);
	bench_sleep(0.25);
	bench_sys_sample(&sys0);

	/* target, pinned to its CPU set (and told it with --cpus, or -m for SPDK) */
	if (spdk_tgt) {
		char cfg[1100];

		port_fd = reserve_port(&rs->port);
		if (port_fd < 0) {
			snprintf(err, sizeof(res->err[0]), "cannot reserve a port: %s", strerror(-port_fd));
			goto out_free;
		}
		snprintf(cfg, sizeof(cfg), "%s/nvmf_tgt.json", dir);
		snprintf(rpcs, sizeof(rpcs), "%s/spdk.sock", paths->sock_dir);
		unlink(rpcs);
		if (write_spdk_config(cell, cfg, rs->port)) {
			bench_fmt(err, sizeof(res->err[0]), "cannot write %s", cfg);
			goto out_free;
		}
		i = build_spdk_target_argv(cell, paths, cfg, rpcs, &tcpus, targv, tstore, sizeof(tstore));
		snprintf(logp, sizeof(logp), "%s/nvmf_tgt.log", dir);
	} else {
		i = build_target_argv(cell, paths->nvmfd, dir, rs, &tcpus, targv, tstore, sizeof(tstore));
		snprintf(logp, sizeof(logp), "%s/nvmfd.log", dir);
	}
	if (i < 1) {
		snprintf(err, sizeof(res->err[0]), "%s argument list too long", spdk_tgt ? "nvmf_tgt" : "nvmfd");
		goto out_free;
	}
	join_argv(targv, res->target_cmd, sizeof(res->target_cmd));
	tpid = bench_proc_spawn(targv, NULL, logp, &tcpus, 0, cgp[BENCH_CG_TARGET]);
	if (tpid < 0) {
		snprintf(err, sizeof(res->err[0]), "fork: %s", strerror(-tpid));
		tpid = 0;
		goto out_free;
	}
	t_start = bench_now();
	/* nvmf_tgt: ready once it listens on the reserved port with its configuration applied */
	while (spdk_tgt) {
		if (bench_stop_sig) {
			ret = -EINTR;
			goto out_stop;
		}
		if (target_exited(&tpid, "nvmf_tgt", logp, err, sizeof(res->err[0])))
			goto out_free;
		if (port_listening(rs->port) && spdk_ready(rpcs))
			break;
		if (bench_now() - t_start > 60) {
			snprintf(err, sizeof(res->err[0]),
				 "nvmf_tgt did not listen on port %ld with its subsystem configured within 60 s", rs->port);
			goto out_stop;
		}
		bench_sleep(0.05);
	}
	if (port_fd >= 0) {
		close(port_fd);
		port_fd = -1;
	}
	while (rs->port <= 0) {
		if (bench_stop_sig) {
			ret = -EINTR;
			goto out_stop;
		}
		if (target_exited(&tpid, "nvmfd", logp, err, sizeof(res->err[0])))
			goto out_free;
		if (!bench_control_query(rs->sock, "stats", rs->stats_buf, STATS_BUF))
			stats_merge(rs, rs->stats_buf);
		if (rs->port > 0)
			break;
		/* a bound for a hang (as nvmf_tgt's above): a loaded machine
		 * starting an ASan nvmfd took more than 10 s (bench-aa) */
		if (bench_now() - t_start > 60) {
			snprintf(err, sizeof(res->err[0]), "nvmfd did not answer on %s within 60 s", rs->sock);
			goto out_stop;
		}
		bench_sleep(0.02);
	}
	if (!spdk_tgt && !bench_control_query(rs->sock, "config", rs->stats_buf, STATS_BUF)) {
		snprintf(path, sizeof(path), "%s/nvmfd-config.json", dir);
		write_text(path, rs->stats_buf);
	}

	/* contention */
	res->load_desc[0] = 0;
	if (cell->load.kind != BENCH_LOAD_NONE) {
		lpid = start_load(cell, dir, &lcpus, paths, cgp[BENCH_CG_LOAD], res->load_desc,
				  sizeof(res->load_desc));
		if (lpid < 0) {
			snprintf(err, sizeof(res->err[0]), "cannot start contention: %s", strerror(-lpid));
			lpid = 0;
			goto out_stop;
		}
		bench_sleep(0.3); /* let it ramp up before measuring */
		if (bench_proc_poll_exit(lpid, &st) == 1) {
			bench_fmt(err, sizeof(res->err[0]), "contention exited early (see %s/contention.log)", dir);
			bench_proc_reap_group(lpid, NULL, 0);
			lpid = 0;
			goto out_stop;
		}
	} else {
		snprintf(res->load_desc, sizeof(res->load_desc), "none");
	}

	/* initiators */
	if (spdk_perf)
		i = build_spdk_perf_argv(cell, paths, rs->port, queues, nctrl, &pcpus, pargv, pstore, sizeof(pstore));
	else
		i = build_perf_argv(cell, paths->perf, rs->port, queues, nctrl / nproc, &pcpus, pargv, pstore,
				    sizeof(pstore));
	if (i < 1) {
		snprintf(err, sizeof(res->err[0]), "%s argument list too long",
			 spdk_perf ? "spdk_nvme_perf" : "nvmf-perf");
		goto out_stop;
	}
	join_argv(pargv, res->perf_cmd, sizeof(res->perf_cmd));
	if (nproc > 1)
		snprintf(res->perf_cmd + strlen(res->perf_cmd), sizeof(res->perf_cmd) - strlen(res->perf_cmd),
			 "  (x%ld processes, one controller each)", nproc);
	t_start = bench_now();
	for (i = 0; i < nproc; i++) {
		char outp[1100], errp[1100];

		snprintf(outp, sizeof(outp), "%s/perf-%d.%s", dir, i, spdk_perf ? "txt" : "json");
		snprintf(errp, sizeof(errp), "%s/perf-%d.log", dir, i);
		ppid[i] = bench_proc_spawn(pargv, outp, errp, &pcpus, 0, cgp[BENCH_CG_INITIATOR]);
		if (ppid[i] < 0) {
			snprintf(err, sizeof(res->err[0]), "fork: %s", strerror(-ppid[i]));
			ppid[i] = 0;
			goto out_stop;
		}
	}
	t0 = t_start + cell->warmup + 0.1;
	t1 = t0 + cell->duration - 0.2;
	deadline = t_start + cell->warmup + cell->duration + cell->perf.timeout_ms / 1000.0 + 15;
	while (ndone < nproc) {
		double now;

		if (bench_stop_sig) {
			ret = -EINTR;
			goto out_stop;
		}
		for (i = 0; i < nproc; i++) {
			if (!pdone[i] && bench_proc_poll_exit(ppid[i], &pstatus[i]) == 1) {
				pdone[i] = true;
				ndone++;
				bench_proc_reap_group(ppid[i], NULL, 0);
				ppid[i] = 0;
			}
		}
		if (!spdk_tgt)
			poll_stats(rs);
		now = bench_now();
		/*
		 * The window's end samples the target's queue counters, so it
		 * needs a stats reply newer than the start that listed the I/O
		 * queues (a queue not seen yet at the start counts from 0): a
		 * loaded machine that connected the initiator late otherwise
		 * ended the window before its queues were seen, with 0 events
		 */
		if (!s0 && (now >= t0 || ndone)) {
			lp0 = rs->live_polls;
			bench_proc_sample(tpid, &c0, &v0, &i0);
			have_ns = bench_proc_cpu_ns(tpid, &ns0) == 0;
			if (spdk_perf && !ndone) {
				/* spdk_nvme_perf reports no CPU of its own: /proc of it */
				bench_proc_sample(ppid[0], &hc0, &hv0, &hi0);
				have_hns = bench_proc_cpu_ns(ppid[0], &hns0) == 0;
			}
			qsum(rs, q0);
			t0 = now;
			s0 = true;
			/* a late first sample (the bench starved) still gets a window */
			if (t1 < t0 + 0.2)
				t1 = t0 + 0.2;
			if (ro->syscalls != BENCH_SYSCALLS_OFF && !ndone) {
				sc_w = t1 - t0; /* perf's window; strace's is measured */
				sc_t0 = bench_now();
				scpid = start_syscall_count(ro, paths, tpid, dir, sc_w);
				if (scpid < 0)
					scpid = 0;
			}
		}
		if (s0 && !s1 && (((now = bench_now()) >= t1 && (spdk_tgt || rs->live_polls > lp0)) ||
				  ndone)) {
			bench_proc_sample(tpid, &c1, &v1, &i1);
			have_ns = have_ns && bench_proc_cpu_ns(tpid, &ns1) == 0;
			if (spdk_perf && have_hns) {
				bench_proc_sample(ppid[0], &hc1, &hv1, &hi1);
				have_hns = !ndone && bench_proc_cpu_ns(ppid[0], &hns1) == 0;
			}
			qsum(rs, q1);
			t1 = now;
			s1 = true;
			if (scpid > 0) {
				if (ro->syscalls == BENCH_SYSCALLS_STRACE)
					sc_w = bench_now() - sc_t0;
				have_sc = stop_syscall_count(scpid, ro, dir, &sc_count) == 0;
				scpid = 0;
			}
		}
		if (now > deadline) {
			snprintf(err, sizeof(res->err[0]), "nvmf-perf did not finish within %.0f s",
				 deadline - t_start);
			goto out_stop;
		}
		if (bench_proc_poll_exit(tpid, &st) == 1) {
			snprintf(err, sizeof(res->err[0]), "nvmfd died during the run (status %d)",
				 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			bench_proc_reap_group(tpid, NULL, 0);
			tpid = 0;
			goto out_stop;
		}
		if (tick)
			tick(tick_arg);
		bench_sleep(0.2);
	}
	/* final snapshots */
	snprintf(path, sizeof(path), "%s/stats-live.json", dir);
	if (*rs->last_live)
		write_text(path, rs->last_live);
	if (!spdk_tgt && !bench_control_query(rs->sock, "stats", rs->stats_buf, STATS_BUF)) {
		snprintf(path, sizeof(path), "%s/stats.json", dir);
		write_text(path, rs->stats_buf);
	}
	for (i = 0; i < nproc; i++) {
		if (!WIFEXITED(pstatus[i]) || WEXITSTATUS(pstatus[i])) {
			char tail[200];

			snprintf(path, sizeof(path), "%s/perf-%d.log", dir, i);
			tail_file(path, tail, sizeof(tail));
			if (!*tail) {
				snprintf(path, sizeof(path), "%s/perf-%d.txt", dir, i);
				tail_file(path, tail, sizeof(tail));
			}
			bench_fmt(err, sizeof(res->err[0]), "%s %d failed (status %d): %s",
				  spdk_perf ? "spdk_nvme_perf" : "nvmf-perf", i,
				 WIFEXITED(pstatus[i]) ? WEXITSTATUS(pstatus[i]) : 128 + WTERMSIG(pstatus[i]), tail);
			goto out_stop;
		}
	}
	if (spdk_perf) {
		snprintf(path, sizeof(path), "%s/perf-0.txt", dir);
		if (parse_spdk_perf_report(path, res->v[rep], res->have[rep], err, sizeof(res->err[0])))
			goto out_stop;
	} else if (parse_perf_reports(dir, (int)nproc, res->v[rep], res->have[rep], err, sizeof(res->err[0]))) {
		goto out_stop;
	}
	if (s0 && s1 && t1 > t0) {
		double w = t1 - t0;
		double *v = res->v[rep];
		bool *h = res->have[rep];

		double cpu_s = have_ns && ns1 >= ns0 ? (double)(ns1 - ns0) / 1e9 : (double)(c1 - c0) / tck;
		double ios = v[BM_IOPS] * w; /* I/Os in the window */

		v[BM_TGT_CPU] = 100.0 * cpu_s / w;
		v[BM_TGT_CTXSW] = (double)(v1 - v0 + i1 - i0);
		v[BM_TGT_CTXSW_PS] = v[BM_TGT_CTXSW] / w;
		h[BM_TGT_CPU] = h[BM_TGT_CTXSW] = h[BM_TGT_CTXSW_PS] = true;
		if (ios > 0) {
			v[BM_TGT_CPU_S_MIO] = cpu_s / ios * 1e6;
			v[BM_TGT_CTXSW_IO] = v[BM_TGT_CTXSW] / ios;
			h[BM_TGT_CPU_S_MIO] = h[BM_TGT_CTXSW_IO] = true;
		}
		if (cpu_s > 0) {
			v[BM_IOPS_PER_TGT_CPU_S] = ios / cpu_s;
			h[BM_IOPS_PER_TGT_CPU_S] = true;
		}
		/* the counter ran for sc_w seconds: I/Os at the run's rate */
		if (have_sc && sc_w > 0 && v[BM_IOPS] > 0) {
			v[BM_TGT_SYSCALLS_IO] = sc_count / (v[BM_IOPS] * sc_w);
			h[BM_TGT_SYSCALLS_IO] = true;
		}
		if (spdk_perf && have_hns && hns1 >= hns0 && ios > 0) {
			double hcpu = (double)(hns1 - hns0) / 1e9;

			v[BM_HOST_CPU] = 100.0 * hcpu / w;
			v[BM_HOST_CTXSW] = (double)(hv1 - hv0 + hi1 - hi0);
			v[BM_HOST_CPU_S_MIO] = hcpu / ios * 1e6;
			v[BM_HOST_CTXSW_IO] = v[BM_HOST_CTXSW] / ios;
			h[BM_HOST_CPU] = h[BM_HOST_CTXSW] = h[BM_HOST_CPU_S_MIO] = h[BM_HOST_CTXSW_IO] = true;
		}
		if (rs->nr_q) {
			double ev = q1[QF_EVENTS] - q0[QF_EVENTS];

			v[BM_CQ_EVENTS_PS] = ev / w;
			v[BM_CPE] = ev > 0 ? (q1[QF_BCOMPL] - q0[QF_BCOMPL]) / ev : 0;
			v[BM_REQUEUES_PS] = (q1[QF_REQUEUES] - q0[QF_REQUEUES]) / w;
			v[BM_IDLE_POLLS_PS] = (q1[QF_IDLE_POLLS] - q0[QF_IDLE_POLLS]) / w;
			v[BM_EAGAIN] = q1[QF_EAGAIN] - q0[QF_EAGAIN];
			h[BM_CQ_EVENTS_PS] = h[BM_CPE] = h[BM_REQUEUES_PS] = h[BM_IDLE_POLLS_PS] = h[BM_EAGAIN] =
				true;
		}
	}
	res->ok[rep] = true;
	ret = 0;

out_stop:
	if (scpid > 0)
		bench_proc_reap_group(scpid, NULL, 1);
	for (i = 0; i < nproc; i++)
		if (ppid[i] > 0)
			bench_proc_reap_group(ppid[i], NULL, 1);
	if (lpid > 0)
		bench_proc_reap_group(lpid, NULL, 1);
	if (tpid > 0 && bench_proc_reap_group(tpid, &st, 10) == 0 && ret == 0 && WIFSIGNALED(st) &&
	    WTERMSIG(st) != SIGTERM)
		snprintf(err, sizeof(res->err[0]), "warning: nvmfd ended by signal %d at teardown", WTERMSIG(st));
	if (ret == 0) {
		/* noise guard, during: every child is reaped, so our own CPU time
		 * is all in RUSAGE_CHILDREN and the rest of the machine's is not */
		double *v = res->v[rep];
		bool *h = res->have[rep];

		bench_sys_sample(&sys1);
		v[BM_FOREIGN_PRE] = bench_sys_foreign_cpus(&sys_pre, &sys0);
		v[BM_PSI_PRE] = sys0.psi_some_avg10;
		v[BM_LOADAVG_PRE] = sys0.loadavg1;
		v[BM_FOREIGN_RUN] = bench_sys_foreign_cpus(&sys0, &sys1);
		v[BM_STEAL] = bench_sys_steal_cpus(&sys0, &sys1);
		h[BM_FOREIGN_PRE] = h[BM_FOREIGN_RUN] = h[BM_STEAL] = h[BM_LOADAVG_PRE] = true;
		h[BM_PSI_PRE] = v[BM_PSI_PRE] >= 0;
		res->busy[rep] = v[BM_FOREIGN_PRE] > ro->busy_cpus || v[BM_FOREIGN_RUN] > ro->busy_cpus;
	}
out_free:
	if (port_fd >= 0)
		close(port_fd);
	if (*rpcs) {
		/* nvmf_tgt leaves its lock file beside the socket */
		unlink(rpcs);
		snprintf(path, sizeof(path), "%s.lock", rpcs);
		unlink(path);
	}
	if (!strcmp(cell->target.backend, "file")) {
		snprintf(path, sizeof(path), "%s/backing.img", dir);
		unlink(path);
	}
	unlink(rs->sock);
	if (ret == -EINTR)
		snprintf(err, sizeof(res->err[0]), "interrupted");
	free(rs->stats_buf);
	free(rs->last_live);
	free(rs);
	return ret;
}
