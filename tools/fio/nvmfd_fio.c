// SPDX-License-Identifier: MIT
/*
 * nvmfd_fio.c - an external fio ioengine on the nvmfd host library:
 * ioengine=external:/path/libnvmfd-fio.so drives any NVMe/TCP controller.
 * The user-facing description is doc/fio.md; the options are in
 * engine_opts[] below (fio --enghelp=/path/libnvmfd-fio.so lists them).
 *
 * Model:
 *  - setup() (fio's main process, or the job itself with
 *    create_serialize=0) connects a short-lived probe controller to learn
 *    the namespace's size and names the job's one "file" after it.
 *  - init() (the job's own thread or process, after fio forked it)
 *    connects the job's controller with io_queues I/O queue pairs; every
 *    qp is owned by the job thread, which is the only one that submits and
 *    polls (the host library's ownership rule). numjobs=N gives N
 *    controllers. The execution-model options pin the job thread here.
 *  - queue() only records the io_u; commit() submits the recorded ones
 *    (fio's iodepth_batch* decide how many per commit), spreading them
 *    round-robin over the qps, with the sockets corked after a reap of
 *    several I/Os (batch_send, nf_cork(): the host library's plug). Completion callbacks put io_us
 *    on a FIFO that getevents() fills fio's event array from; getevents()
 *    uncorks, polls, idle-polls or blocks in poll(2) as the exec options
 *    say.
 *  - A failed qp (target gone, timeout, protocol error) completes every
 *    outstanding command with an error; later submissions fail at once,
 *    so fio sees errors and ends the job instead of waiting.
 *
 * Data direction -> command: read/write -> Read/Write, trim -> Dataset
 * Management (deallocate) with one range, fsync/fdatasync/sync_file_range
 * -> Flush.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fio.h"
#include "optgroup.h"

#include <nvmfd/host.h>

#include "internal/rt.h"
#include "../nvmf-perf/perf.h" /* CPU lists, blk-mq groups, scope names, MDTS */

/* Bound of one blocking wait; the library's own timeout bounds the I/O. */
#define NF_WAIT_SLICE_MS 100

enum nf_exec {
	NF_EXEC_NONE, /* leave the job thread's affinity to fio */
	NF_EXEC_BOUND,
	NF_EXEC_UNBOUND,
};

/*
 * The namespace as setup() found it. It lives in the option struct (not in
 * io_ops_data) because setup() usually runs in fio's main process, which
 * forks the job afterwards and never calls cleanup() for it: the job gets
 * a copy with the options, and nothing is left to free in the parent.
 */
struct nf_ns {
	bool known;
	uint32_t nsid;
	uint32_t lba_size;
	uint64_t bytes;
};

/* Engine options (td->eo); offsets are given to fio in engine_opts[]. */
struct nf_opts {
	void *pad; /* fio keeps a pointer to the thread_data here */
	char *traddr;
	char *trsvcid;
	char *subnqn;
	char *hostnqn;
	char *ns_opt; /* ns=: parsed by nf_parse_nsid() into nsid */
	unsigned int nsid;
	unsigned int hdgst;
	unsigned int ddgst;
	unsigned int io_queues;
	unsigned int io_queue_size;
	unsigned int kato_ms;
	unsigned int timeout_ms;
	unsigned int disable_sqflow;
	char *exec;
	char *affinity_scope;
	unsigned int affinity_strict;
	char *io_cpu;
	char *cpus;
	unsigned int idle_poll_us;
	unsigned int busy_poll;
	unsigned int rx_budget;
	unsigned int tx_budget;
	unsigned long long ns_size;
	unsigned int batch_send;
	struct nf_ns ns; /* not an option: see struct nf_ns */
};

struct nf_job;

/* Per io_u state (io_u->engine_data). */
struct nf_io {
	struct io_u *io_u;
	struct nf_job *job;
	struct nvmfd_dsm_range range; /* trim */
	struct nvmfd_host_cpl cpl; /* last completion, for errdetails() */
	bool have_cpl;
	int submit_err; /* negative errno when the submission itself failed */
	uint32_t qidx;
};

/* Per job state (td->io_ops_data). */
struct nf_job {
	struct thread_data *td;
	struct nvmfd_host_ctrl *ctrl;
	struct nvmfd_host_qp **qps;
	struct pollfd *pfds;
	uint32_t nqps;
	uint32_t next_qp;
	uint32_t nsid;
	uint32_t lba_size;
	/* recorded by queue(), submitted by commit() */
	struct io_u **pending;
	uint32_t npending;
	/* completed, not yet handed to fio: FIFO of capacity @cap */
	struct io_u **cq;
	uint32_t cq_head;
	uint32_t cq_len;
	struct io_u **events; /* what event() returns */
	uint32_t cap;
	uint32_t outstanding;
	bool failed_logged;
	enum nf_exec exec;
	bool busy_poll;
	struct nvmfd_idle_poll idle;
	uint64_t *empty_seen; /* per qp: empty_polls at the last pass */
	bool polling; /* inside nvmfd_host_qp_poll() of nf_poll_once() */
	bool submitting; /* inside nf_submit_pending() */
	bool batch_send; /* the batch_send option */
	bool corked; /* the qps are plugged: they hold what is submitted */
	uint32_t last_reaped; /* io_us the last getevents() returned */
	cpu_set_t unit; /* exec: scope unit of the io_cpu */
	cpu_set_t allowed; /* exec: the affinity while running */
	bool repatriate; /* non-strict unbound: moved back into @unit on wake-up */
	int io_cpu;
};

static int nf_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void nf_submit_pending(struct nf_job *job);
static void nf_cork(struct nf_job *job, bool on);

static int nf_err(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_err("nvmfd: %s\n", buf);
	return 1;
}

static struct nf_job *nf_job_get(struct thread_data *td)
{
	struct nf_job *job = td->io_ops_data;

	if (!job) {
		job = calloc(1, sizeof(*job));
		if (!job)
			return NULL;
		job->td = td;
		job->io_cpu = -1;
		td->io_ops_data = job;
	}
	return job;
}

/*
 * nf_parse_nsid() - ns=: decimal or 0x hex, 0 (the first active namespace)
 * or 1..0xfffffffe (FFFFFFFFh is the broadcast NSID, never a namespace
 * of I/O). A leading 0 is not octal. Return: 0 or -EINVAL.
 */
static int nf_parse_nsid(const char *s, unsigned int *nsid)
{
	unsigned long long v;
	char *end;

	if (!s || !*s) {
		*nsid = 0;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL; /* strtoull takes "-1" and " 1" */
	errno = 0;
	v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno || *end || v > 0xfffffffeull)
		return -EINVAL;
	*nsid = (unsigned int)v;
	return 0;
}

/* Options that need no connection; 0 or 1 (message logged). */
static int nf_check_opts(struct thread_data *td, enum nf_exec *exec)
{
	struct nf_opts *o = td->eo;

	if (!o->traddr || !*o->traddr)
		return nf_err("traddr= is required (the target's IP address)");
	if (!o->subnqn || !*o->subnqn)
		return nf_err("subnqn= is required (the NVM subsystem NQN)");
	if (nf_parse_nsid(o->ns_opt, &o->nsid))
		return nf_err("ns=%s: expected a namespace ID 1..4294967294, or 0 for the first "
			      "active namespace", o->ns_opt);
	if (!o->exec || !strcmp(o->exec, "none"))
		*exec = NF_EXEC_NONE;
	else if (!strcmp(o->exec, "bound"))
		*exec = NF_EXEC_BOUND;
	else if (!strcmp(o->exec, "unbound"))
		*exec = NF_EXEC_UNBOUND;
	else
		return nf_err("exec=%s: bound, unbound or none", o->exec);
	if (*exec == NF_EXEC_NONE && (o->io_cpu || o->cpus))
		return nf_err("io_cpu= and cpus= choose the job thread's CPU: they need exec=bound or exec=unbound");
	if (*exec != NF_EXEC_UNBOUND && (o->affinity_scope || o->affinity_strict))
		return nf_err("affinity_scope= and affinity_strict need exec=unbound");
	if (o->io_cpu && strcmp(o->io_cpu, "rr") && strcmp(o->io_cpu, "least-loaded"))
		return nf_err("io_cpu=%s: rr or least-loaded", o->io_cpu);
	if (o->affinity_scope) {
		bool found = false;

		for (int sc = NVMFD_RT_SCOPE_CPU; sc <= NVMFD_RT_SCOPE_SYSTEM; sc++)
			found |= !strcmp(o->affinity_scope, perf_scope_name((enum nvmfd_rt_scope)sc));
		if (!found)
			return nf_err("affinity_scope=%s: cpu, smt, cache, numa or system",
				      o->affinity_scope);
	}
	if (o->cpus) {
		cpu_set_t set;

		if (perf_parse_cpulist(o->cpus, &set))
			return nf_err("cpus=%s: not a CPU list such as 0-3,6", o->cpus);
	}
	if (o->busy_poll && o->idle_poll_us)
		return nf_err("busy_poll and idle_poll_us exclude each other (busy_poll never sleeps)");
	if (td->o.nr_files > 1 || td->files_index > 1)
		return nf_err("one namespace per job: nrfiles=%u and %u file names given; use one job per namespace",
			      td->o.nr_files, td->files_index);
	return 0;
}

static void nf_ctrl_opts(struct thread_data *td, struct nvmfd_host_ctrl_opts *co, uint32_t nqueues,
			 uint32_t qsize, uint32_t kato_ms)
{
	struct nf_opts *o = td->eo;

	nvmfd_host_ctrl_opts_init(co, sizeof(*co));
	if (o->hostnqn)
		snprintf(co->hostnqn, sizeof(co->hostnqn), "%s", o->hostnqn);
	co->hdgst = o->hdgst;
	co->ddgst = o->ddgst;
	co->nr_io_queues = nqueues;
	co->io_queue_size = qsize;
	co->kato_ms = kato_ms;
	co->timeout_ms = o->timeout_ms;
	co->disable_sqflow = o->disable_sqflow;
}

/* Connect a controller to the job's target; 0 or 1 (message logged). */
static int nf_connect(struct thread_data *td, const struct nvmfd_host_ctrl_opts *co,
		      struct nvmfd_host_ctrl **out)
{
	struct nf_opts *o = td->eo;
	struct nvmfd_host_trid trid;
	char str[1024], msg[256];
	int ret;

	snprintf(str, sizeof(str), "trtype:TCP traddr:%s trsvcid:%s subnqn:%s%s%s", o->traddr,
		 o->trsvcid ? o->trsvcid : "4420", o->subnqn, o->hostnqn ? " hostnqn:" : "",
		 o->hostnqn ? o->hostnqn : "");
	if (nvmfd_host_trid_parse(str, &trid, msg, sizeof(msg)))
		return nf_err("bad target address: %s", msg);
	ret = nvmfd_host_ctrl_create(co, out);
	if (ret)
		return nf_err("controller options rejected: %s", strerror(-ret));
	ret = nvmfd_host_ctrl_connect(*out, &trid);
	if (ret) {
		nf_err("connect to %s:%s %s: %s (%s)", trid.traddr, trid.trsvcid, trid.subnqn,
		       strerror(-ret), nvmfd_host_ctrl_errmsg(*out));
		nvmfd_host_ctrl_destroy(out);
		return 1;
	}
	return 0;
}

/* Find the namespace (ns=, or the first active one); 0 or 1. */
static int nf_pick_ns(struct thread_data *td, struct nvmfd_host_ctrl *ctrl)
{
	struct nf_opts *o = td->eo;
	const struct nvmfd_host_ns *ns;

	ns = o->nsid ? nvmfd_host_ctrl_find_ns(ctrl, o->nsid) : nvmfd_host_ctrl_ns(ctrl, 0);
	if (!ns)
		return o->nsid ? nf_err("namespace %u is not active on %s", o->nsid, o->subnqn)
			       : nf_err("%s has no active namespace", o->subnqn);
	if (o->ns.known && (o->ns.nsid != ns->nsid || o->ns.lba_size != ns->lba_size ||
			    o->ns.bytes != ns->nsze * ns->lba_size))
		return nf_err("namespace %u changed between setup and init", ns->nsid);
	o->ns.nsid = ns->nsid;
	o->ns.lba_size = ns->lba_size;
	o->ns.bytes = ns->nsze * ns->lba_size;
	o->ns.known = true;
	return 0;
}

/* What fio is told the namespace holds: its size, or ns_size=. */
static uint64_t nf_file_size(struct thread_data *td)
{
	struct nf_opts *o = td->eo;

	return o->ns_size ? o->ns_size : o->ns.bytes;
}

/* The job's one file is the namespace; fio learns its size here. */
static int nf_setup(struct thread_data *td)
{
	struct nf_opts *o = td->eo;
	struct nvmfd_host_ctrl_opts co;
	struct nvmfd_host_ctrl *probe = NULL;
	struct fio_file *f;
	enum nf_exec exec;
	int ret;

	if (nf_check_opts(td, &exec))
		return 1;
	if (!o->ns.known) {
		/* one queue of 2 entries, no keep-alive: only Identify matters */
		nf_ctrl_opts(td, &co, 1, 2, 0);
		if (nf_connect(td, &co, &probe))
			return 1;
		ret = nf_pick_ns(td, probe);
		nvmfd_host_ctrl_destroy(&probe);
		if (ret)
			return 1;
	}
	if (o->ns_size % o->ns.lba_size)
		return nf_err("ns_size=%llu: not a multiple of namespace %u's LBA size %u",
			      o->ns_size, o->ns.nsid, o->ns.lba_size);
	if (!td->files_index) {
		char name[64];

		snprintf(name, sizeof(name), "nvmfd-ns%u", o->ns.nsid);
		add_file(td, name, 0, 0);
		td->o.nr_files = td->o.nr_files ? td->o.nr_files : 1;
		td->o.open_files++;
	}
	f = td->files[0];
	f->real_file_size = nf_file_size(td);
	return 0;
}

static int nf_place_rt(struct thread_data *td, struct nf_job *job, const cpu_set_t *cpus,
		       int io_cpu, cpu_set_t *allowed)
{
	struct nf_opts *o = td->eo;
	struct nvmfd_rt_opts ro;
	struct nvmfd_rt_pool_stats ps;
	struct nvmfd_rt *rt = NULL;
	int ret;

	nvmfd_rt_opts_init(&ro);
	ro.mode = NVMFD_RT_UNBOUND;
	ro.scope = NVMFD_RT_SCOPE_CACHE;
	for (int sc = NVMFD_RT_SCOPE_CPU; o->affinity_scope && sc <= NVMFD_RT_SCOPE_SYSTEM; sc++) {
		if (!strcmp(o->affinity_scope, perf_scope_name((enum nvmfd_rt_scope)sc)))
			ro.scope = (enum nvmfd_rt_scope)sc;
	}
	ro.strict = o->affinity_strict;
	ro.workers_per_pool = 1;
	ro.name = "nvmfd-fio";
	ro.cpus = *cpus;
	ret = nvmfd_rt_create(&ro, &rt);
	if (ret)
		return nf_err("exec=unbound: cannot read the CPU topology: %s", strerror(-ret));
	CPU_ZERO(&job->unit);
	CPU_SET(io_cpu, &job->unit);
	if (nvmfd_rt_pool_stats(rt, nvmfd_rt_pool_of_cpu(rt, io_cpu), &ps) == 0 &&
	    CPU_COUNT(&ps.cpus))
		job->unit = ps.cpus;
	nvmfd_rt_destroy(rt);
	*allowed = o->affinity_strict ? job->unit : *cpus;
	job->repatriate = !o->affinity_strict && !CPU_EQUAL(&job->unit, allowed);
	return 0;
}

/*
 * exec=bound|unbound: choose the job's io_cpu among cpus= (default: the
 * CPUs the job thread may run on now, i.e. after fio's cpus_allowed) and
 * set the thread's affinity. Job i (0-based fio job number among all
 * jobs) plays the part of nvmf-perf's queue i: rr takes CPU i mod n;
 * least-loaded splits the CPUs into min(jobs, n) contiguous groups, job i
 * takes group i mod G and, as the jobs are placed in job order, the
 * (i / G)-th CPU of that group round-robin, which is the least loaded one
 * at its turn.
 */
static int nf_exec_setup(struct thread_data *td, struct nf_job *job)
{
	struct nf_opts *o = td->eo;
	cpu_set_t cpus, group, allowed;
	int list[CPU_SETSIZE];
	unsigned int n = 0, idx = td->thread_number ? td->thread_number - 1 : 0;
	unsigned int njobs = thread_number > idx ? thread_number : idx + 1;
	int ret;

	if (job->exec == NF_EXEC_NONE)
		return 0;
	if (o->cpus) {
		perf_parse_cpulist(o->cpus, &cpus);
	} else if ((ret = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus))) {
		return nf_err("cannot read the job's CPU affinity: %s", strerror(ret));
	}
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (CPU_ISSET(c, &cpus))
			list[n++] = c;
	}
	if (!n)
		return nf_err("cpus=%s: no CPU", o->cpus ? o->cpus : "");
	if (!o->io_cpu || !strcmp(o->io_cpu, "rr")) {
		job->io_cpu = list[idx % n];
	} else {
		unsigned int groups = njobs < n ? njobs : n;
		int size = perf_hwq_group(list, n, njobs, idx, &group);
		int k = 0, want;

		if (size <= 0)
			return nf_err("io_cpu=least-loaded: no CPU group for job %u", idx);
		want = (int)((idx / groups) % (unsigned int)size);
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (CPU_ISSET(c, &group) && k++ == want) {
				job->io_cpu = c;
				break;
			}
		}
	}
	CPU_ZERO(&job->unit);
	CPU_SET(job->io_cpu, &job->unit);
	allowed = job->unit;
	job->repatriate = false;
	if (job->exec == NF_EXEC_UNBOUND && nf_place_rt(td, job, &cpus, job->io_cpu, &allowed))
		return 1;
	ret = pthread_setaffinity_np(pthread_self(), sizeof(job->unit), &job->unit);
	if (!ret && !CPU_EQUAL(&job->unit, &allowed))
		ret = pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
	if (ret)
		return nf_err("cannot set the job thread's CPU affinity (io_cpu %d): %s",
			      job->io_cpu, strerror(ret));
	job->allowed = allowed;
	return 0;
}

static void nf_free(struct nf_job *job)
{
	nvmfd_host_ctrl_destroy(&job->ctrl);
	free(job->qps);
	free(job->pfds);
	free(job->empty_seen);
	free(job->pending);
	free(job->cq);
	free(job->events);
	free(job);
}

static int nf_init(struct thread_data *td)
{
	struct nf_opts *o = td->eo;
	struct nf_job *job = nf_job_get(td);
	struct nvmfd_host_ctrl_opts co;
	const struct nvmfd_host_ctrl_info *info;
	uint64_t mdts, max_bs = 0;
	uint32_t qsize;

	if (!job) {
		td_verror(td, ENOMEM, "calloc");
		return 1;
	}
	if (nf_check_opts(td, &job->exec))
		return 1;
	for (int d = 0; d < DDIR_RWDIR_CNT; d++) {
		if (td->o.max_bs[d] > max_bs)
			max_bs = td->o.max_bs[d];
	}
	job->cap = td->o.iodepth ? td->o.iodepth : 1;
	/* every qp can take all io_us: a qp keeps io_queue_size - 1 in flight */
	qsize = o->io_queue_size ? o->io_queue_size : job->cap + 1;
	if (qsize < 2 || qsize > 65536)
		return nf_err("io_queue_size=%u: 2..65536", qsize);
	nf_ctrl_opts(td, &co, o->io_queues, qsize, o->kato_ms);
	if (max_bs > co.max_io_size)
		co.max_io_size = max_bs > UINT32_MAX ? UINT32_MAX : (uint32_t)max_bs;
	if (nf_connect(td, &co, &job->ctrl))
		return 1;
	if (nf_pick_ns(td, job->ctrl))
		return 1;
	job->nsid = o->ns.nsid;
	job->lba_size = o->ns.lba_size;
	info = nvmfd_host_ctrl_get_info(job->ctrl);
	mdts = perf_mdts_bytes(info->mdts, info->cap);
	for (int d = 0; d < DDIR_RWDIR_CNT; d++) {
		if (td->o.min_bs[d] % job->lba_size || td->o.max_bs[d] % job->lba_size)
			return nf_err("%s bs %llu..%llu: not a multiple of namespace %u's LBA size %u",
				      io_ddir_name((enum fio_ddir)d), td->o.min_bs[d],
				      td->o.max_bs[d], job->nsid, job->lba_size);
		if (d != DDIR_TRIM && mdts && td->o.max_bs[d] > mdts)
			return nf_err("%s bs %llu exceeds the controller's maximum transfer size %" PRIu64
				      " (MDTS)", io_ddir_name((enum fio_ddir)d), td->o.max_bs[d], mdts);
	}
	if (td_trim(td) && !(info->oncs & NVMFD_ONCS_DSM))
		return nf_err("trim needs Dataset Management, which %s does not support (ONCS)",
			      o->subnqn);
	job->nqps = nvmfd_host_ctrl_qp_count(job->ctrl);
	if (job->nqps < o->io_queues)
		return nf_err("io_queues=%u: the controller granted %u I/O queues", o->io_queues,
			      job->nqps);
	if (info->io_queue_size < qsize && info->io_queue_size - 1 < job->cap)
		log_info("nvmfd: %s: I/O queues have %u entries (asked for %u); fio's iodepth %u is "
			 "limited to %u per queue\n", td->o.name, info->io_queue_size, qsize, job->cap,
			 info->io_queue_size - 1);
	job->qps = calloc(job->nqps, sizeof(*job->qps));
	job->pfds = calloc(job->nqps, sizeof(*job->pfds));
	job->empty_seen = calloc(job->nqps, sizeof(*job->empty_seen));
	job->pending = calloc(job->cap, sizeof(*job->pending));
	job->cq = calloc(job->cap, sizeof(*job->cq));
	job->events = calloc(job->cap, sizeof(*job->events));
	if (!job->qps || !job->pfds || !job->empty_seen || !job->pending || !job->cq || !job->events) {
		td_verror(td, ENOMEM, "calloc");
		return 1;
	}
	for (uint32_t i = 0; i < job->nqps; i++) {
		job->qps[i] = nvmfd_host_ctrl_qp(job->ctrl, i);
		nvmfd_host_qp_set_budget(job->qps[i], o->rx_budget, o->tx_budget);
		job->pfds[i].fd = nvmfd_host_qp_fd(job->qps[i]);
		job->pfds[i].events = POLLIN;
	}
	job->busy_poll = o->busy_poll;
	job->batch_send = o->batch_send;
	nvmfd_idle_poll_init(&job->idle, o->idle_poll_us);
	if (nf_exec_setup(td, job))
		return 1;
	return 0;
}

static void nf_cleanup(struct thread_data *td)
{
	struct nf_job *job = td->io_ops_data;

	if (!job)
		return;
	/* fio has reaped every io_u; a failed queue completed its own */
	nf_free(job);
	td->io_ops_data = NULL;
}

static int nf_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct nf_io *io = calloc(1, sizeof(*io));

	if (!io)
		return 1;
	io->io_u = io_u;
	io->job = td->io_ops_data;
	io_u->engine_data = io;
	return 0;
}

/*
 * fio frees its io_us before it calls cleanup(). It reaps every I/O before
 * that on its normal paths; should a command still be in flight, wait for
 * it (bounded by the command timeout, after which the library fails it),
 * and failing that tear the controller down, which completes the rest
 * with -ECANCELED: no callback may run on a freed io_u.
 */
static void nf_drain(struct thread_data *td, struct nf_job *job)
{
	struct nf_opts *o = td->eo;
	uint64_t deadline = nvmfd_now_ns() + ((uint64_t)o->timeout_ms + 1000) * 1000000ull;

	nf_cork(job, false);
	while (job->outstanding && nvmfd_now_ns() < deadline) {
		for (uint32_t i = 0; i < job->nqps; i++)
			nvmfd_host_qp_wait(job->qps[i], 10);
	}
	if (job->outstanding) {
		nf_err("%s: %u commands still outstanding at exit: closing the controller",
		       td->o.name, job->outstanding);
		nvmfd_host_ctrl_destroy(&job->ctrl);
		job->nqps = 0;
	}
}

static void nf_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct nf_job *job = td->io_ops_data;

	if (job && job->outstanding)
		nf_drain(td, job);
	free(io_u->engine_data);
	io_u->engine_data = NULL;
}

static int nf_open_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int nf_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int nf_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct nf_opts *o = td->eo;

	if (!o->ns.known)
		return EINVAL;
	f->real_file_size = nf_file_size(td);
	fio_file_set_size_known(f);
	return 0;
}

static void nf_complete(struct nf_job *job, struct io_u *io_u)
{
	job->cq[(job->cq_head + job->cq_len) % job->cap] = io_u;
	job->cq_len++;
}

/* errno for fio from one completion. */
static int nf_cpl_errno(const struct nvmfd_host_cpl *cpl)
{
	if (cpl->err)
		return -cpl->err;
	if (!cpl->status)
		return 0;
	return EIO; /* errdetails() names the NVMe status */
}

/* Why qp @qi failed, or "" (owner thread; the qp must still exist). */
static const char *nf_qp_reason(const struct nf_job *job, uint32_t qi)
{
	return job->ctrl && qi < job->nqps ? nvmfd_host_qp_errmsg(job->qps[qi]) : "";
}

/* Say once per job that a queue failed, and why. */
static void nf_log_failure(struct nf_job *job, uint32_t qi)
{
	if (job->failed_logged)
		return;
	job->failed_logged = true;
	nf_err("%s: queue %u failed: %s", job->td->o.name, qi + 1, nf_qp_reason(job, qi));
}

static void nf_cb(void *arg, const struct nvmfd_host_cpl *cpl)
{
	struct nf_io *io = arg;
	struct io_u *io_u = io->io_u;

	io->cpl = *cpl;
	io->have_cpl = true;
	if (cpl->err)
		nf_log_failure(io->job, io->qidx);
	io_u->error = nf_cpl_errno(cpl);
	io_u->resid = io_u->error ? io_u->xfer_buflen : 0;
	io->job->outstanding--;
	nf_complete(io->job, io_u);
	if (io->job->polling)
		nf_submit_pending(io->job); /* sent when the poll returns */
}

static char *nf_errdetails(struct io_u *io_u)
{
	struct nf_io *io = io_u->engine_data;
	char buf[48], *s = NULL;

	if (!io)
		return strdup("nvmfd: no engine state for this I/O");
	if (io->submit_err) {
		const char *why = nf_qp_reason(io->job, io->qidx);

		if (asprintf(&s, "nvmfd: queue %u: not submitted: %s%s%s%s", io->qidx + 1,
			     strerror(-io->submit_err), *why ? " (" : "", why, *why ? ")" : "") < 0)
			return NULL;
	} else if (!io->have_cpl) {
		return strdup("nvmfd: the command has not completed");
	} else if (io->cpl.err) {
		if (asprintf(&s, "nvmfd: queue %u: command did not complete: %s", io->qidx + 1,
			     strerror(-io->cpl.err)) < 0)
			return NULL;
	} else if (asprintf(&s, "nvmfd: queue %u: NVMe status %s (SCT %u SC 0x%02x)", io->qidx + 1,
			    nvmfd_host_status_str(io->cpl.status, false, buf, sizeof(buf)),
			    NVMFD_STATUS_SCT(io->cpl.status), NVMFD_STATUS_SC(io->cpl.status)) < 0) {
		return NULL;
	}
	return s;
}

static enum fio_q_status nf_queue(struct thread_data *td, struct io_u *io_u)
{
	struct nf_job *job = td->io_ops_data;

	fio_ro_check(td, io_u);
	if (job->npending >= job->cap)
		return FIO_Q_BUSY;
	job->pending[job->npending++] = io_u;
	return FIO_Q_QUEUED;
}

/* Submit one io_u on qp @qi; 0, -EAGAIN, or another negative errno. */
static int nf_submit(struct nf_job *job, struct io_u *io_u, uint32_t qi)
{
	struct nf_io *io = io_u->engine_data;
	struct nvmfd_host_qp *qp = job->qps[qi];
	uint64_t slba = io_u->offset / job->lba_size;
	uint64_t nlb = io_u->xfer_buflen / job->lba_size;

	io->qidx = qi;
	io->have_cpl = false;
	io->submit_err = 0;
	if (io_u->offset % job->lba_size || io_u->xfer_buflen % job->lba_size)
		return -EINVAL;
	switch (io_u->ddir) {
	case DDIR_READ:
		return nvmfd_host_qp_read(qp, job->nsid, slba, (uint32_t)nlb, io_u->xfer_buf, nf_cb,
					  io);
	case DDIR_WRITE:
		return nvmfd_host_qp_write(qp, job->nsid, slba, (uint32_t)nlb, io_u->xfer_buf,
					   nf_cb, io);
	case DDIR_TRIM:
		if (nlb == 0 || nlb > UINT32_MAX)
			return -EINVAL;
		memset(&io->range, 0, sizeof(io->range));
		io->range.nlb = (uint32_t)nlb;
		io->range.slba = slba;
		return nvmfd_host_qp_dsm(qp, job->nsid, &io->range, 1, NVMFD_DSM_AD, nf_cb, io);
	default:
		if (ddir_sync(io_u->ddir))
			return nvmfd_host_qp_flush(qp, job->nsid, nf_cb, io);
		return -EINVAL;
	}
}

/* Submit the recorded io_us, in order, until a qp is full. */
static void nf_submit_pending(struct nf_job *job)
{
	struct thread_data *td = job->td;
	uint32_t done = 0;
	bool stamp = fio_fill_issue_time(td);
	struct timespec now;

	if (job->submitting || !job->npending)
		return;
	job->submitting = true; /* a qp failing inside a submit runs callbacks */
	if (stamp)
		fio_gettime(&now, NULL);
	while (done < job->npending) {
		struct io_u *io_u = job->pending[done];
		uint32_t qi = job->next_qp;
		int ret = nf_submit(job, io_u, qi);

		if (ret == -EAGAIN && job->nqps > 1) {
			/* that qp is full: try the others once */
			for (uint32_t k = 1; k < job->nqps && ret == -EAGAIN; k++) {
				qi = (job->next_qp + k) % job->nqps;
				ret = nf_submit(job, io_u, qi);
			}
		}
		if (ret == -EAGAIN)
			break; /* resubmitted from getevents() once slots free up */
		job->next_qp = (qi + 1) % job->nqps;
		if (stamp) {
			/* fio's submission latency ends and completion latency starts here */
			memcpy(&io_u->issue_time, &now, sizeof(now));
			io_u_queued(td, io_u);
		}
		if (ret) {
			((struct nf_io *)io_u->engine_data)->submit_err = ret;
			if (ret == -ENOTCONN)
				nf_log_failure(job, qi);
			io_u->error = -ret;
			io_u->resid = io_u->xfer_buflen;
			nf_complete(job, io_u);
		} else {
			job->outstanding++;
		}
		done++;
	}
	if (done) {
		io_u_mark_submit(td, done);
		memmove(job->pending, job->pending + done,
			(job->npending - done) * sizeof(*job->pending));
		job->npending -= done;
	}
	job->submitting = false;
}

/*
 * Submit what queue() recorded. The host library writes each command
 * submitted outside a poll to the socket at once (one sendmsg() each);
 * only commands submitted by completion callbacks leave together, when the
 * poll returns. io_us left over because a qp was full are submitted by the
 * callbacks of the next poll (nf_cb()), so they go out in one write too.
 */
/*
 * batch_send. The host library writes every command submitted outside a
 * poll to the socket at once, one sendmsg() each, and on loopback or a
 * fast link each of those pays for the whole TCP transmit (on loopback the
 * receive too): that is most of the engine's CPU time at high queue depth.
 * When the last getevents() handed fio more than one io_u, fio is about to
 * refill that many slots, one commit each by default; so while commands
 * are in flight, commit plugs the qps (nvmfd_host_qp_plug(): the library
 * holds what is submitted) and getevents() unplugs them first thing,
 * sending the lot in one sendmsg() per qp. fio calls getevents() as soon
 * as its queue is full and before it sleeps (thinktime, rate) or ends. With one io_u per reap (fio's default
 * iodepth_batch_complete_max is 1) there is nothing to batch and the
 * sockets are never corked.
 */
static void nf_cork(struct nf_job *job, bool on)
{
	if (job->corked == on)
		return;
	for (uint32_t i = 0; i < job->nqps; i++) {
		if (on)
			nvmfd_host_qp_plug(job->qps[i]);
		else
			nvmfd_host_qp_unplug(job->qps[i]); /* a failure shows in the next poll */
	}
	job->corked = on;
}

static int nf_commit(struct thread_data *td)
{
	struct nf_job *job = td->io_ops_data;

	if (!job->npending)
		return 0;
	if (job->batch_send && job->outstanding && job->last_reaped > 1 && job->nqps)
		nf_cork(job, true);
	if (!job->nqps) {
		/* the controller was closed (nf_drain()): fail what is left */
		for (uint32_t i = 0; i < job->npending; i++) {
			job->pending[i]->error = ENOTCONN;
			nf_complete(job, job->pending[i]);
		}
		job->npending = 0;
		return 0;
	}
	nf_submit_pending(job);
	return 0;
}

/* One non-blocking pass over the qps; 1 if anything moved, 0, or -1 once
 * a qp has failed (its commands are then completed with errors).
 * Completion callbacks submit recorded io_us meanwhile (nf_cb()). */
static int nf_poll_once(struct nf_job *job, uint32_t room)
{
	bool progressed = false, failed = false;

	for (uint32_t i = 0; i < job->nqps; i++) {
		struct nvmfd_host_qp_stats hs;
		int n;

		job->polling = true;
		n = nvmfd_host_qp_poll(job->qps[i], room);
		job->polling = false;
		if (n < 0) {
			failed = true; /* logged by nf_cb() */
			continue;
		}
		/* bytes moved without a completion are progress too */
		nvmfd_host_qp_get_stats(job->qps[i], &hs);
		if (n > 0 || hs.empty_polls == job->empty_seen[i])
			progressed = true;
		job->empty_seen[i] = hs.empty_polls;
	}
	if (failed)
		return -1;
	return progressed ? 1 : 0;
}

/* Block until a qp socket is readable, at most @ms; then poll. */
static void nf_wait(struct nf_job *job, int ms)
{
	if (job->nqps == 1) {
		nvmfd_host_qp_wait(job->qps[0], ms);
	} else {
		/* the library re-sends what the socket did not take at every
		 * poll; waking at least each ms keeps a full socket moving */
		poll(job->pfds, job->nqps, ms < 1 ? ms : 1);
	}
	if (job->repatriate) {
		int cpu = sched_getcpu();

		/* as at init: into the unit, then widened to what is allowed */
		if (cpu >= 0 && !CPU_ISSET(cpu, &job->unit) &&
		    !pthread_setaffinity_np(pthread_self(), sizeof(job->unit), &job->unit))
			pthread_setaffinity_np(pthread_self(), sizeof(job->allowed), &job->allowed);
	}
}

static int nf_getevents(struct thread_data *td, unsigned int min, unsigned int max,
			const struct timespec *t)
{
	struct nf_job *job = td->io_ops_data;
	uint64_t deadline = 0;
	unsigned int n = 0;

	if (t)
		deadline = nvmfd_now_ns() + (uint64_t)t->tv_sec * 1000000000ull +
			   (uint64_t)t->tv_nsec;
	if (max > job->cap)
		max = job->cap;
	nf_cork(job, false); /* what commit() held goes out now */
	for (;;) {
		int r;

		if (job->npending)
			nf_commit(td);
		r = job->outstanding && job->cq_len < max ? nf_poll_once(job, max - job->cq_len) : 0;
		if (job->cq_len >= min || job->cq_len >= max ||
		    (!job->outstanding && !job->npending))
			break;
		if (r < 0)
			continue; /* the failed qp's commands are on the cq now */
		if (t && nvmfd_now_ns() >= deadline)
			break;
		if (job->busy_poll || nvmfd_idle_poll_update(&job->idle, r > 0, nvmfd_now_ns()))
			continue;
		{
			int ms = NF_WAIT_SLICE_MS;

			if (t) {
				uint64_t now = nvmfd_now_ns();
				uint64_t left = deadline > now ? (deadline - now) / 1000000ull + 1 : 0;

				ms = left < (uint64_t)ms ? (int)left : ms;
			}
			nf_wait(job, ms);
		}
	}
	while (n < max && job->cq_len) {
		job->events[n++] = job->cq[job->cq_head];
		job->cq_head = (job->cq_head + 1) % job->cap;
		job->cq_len--;
	}
	job->last_reaped = n;
	return (int)n;
}

static struct io_u *nf_event(struct thread_data *td, int ev)
{
	struct nf_job *job = td->io_ops_data;

	return job->events[ev];
}

static struct fio_option engine_opts[] = {
	{
		.name = "traddr",
		.lname = "NVMe/TCP target address",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, traddr),
		.help = "Target IP address (IPv4, or IPv6 bare or in brackets). Required",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "trsvcid",
		.lname = "NVMe/TCP port",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, trsvcid),
		.def = "4420",
		.help = "Target TCP port",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "subnqn",
		.lname = "Subsystem NQN",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, subnqn),
		.help = "NVM subsystem NQN to connect to. Required",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "hostnqn",
		.lname = "Host NQN",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, hostnqn),
		.help = "Host NQN (default: /etc/nvme/hostnqn, else a random UUID NQN)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ns",
		.lname = "Namespace ID",
		/* a string, checked by nf_parse_nsid(): fio's integer options
		 * keep the low 32 bits of a larger value (ns=4294967297 was ns 1) */
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, ns_opt),
		.def = "0",
		.help = "Namespace ID (0: the first active namespace)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "hdgst",
		.lname = "Header digest",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, hdgst),
		.def = "0",
		.help = "Request PDU header digests (CRC32C)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ddgst",
		.lname = "Data digest",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, ddgst),
		.def = "0",
		.help = "Request PDU data digests (CRC32C)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "io_queues",
		.lname = "I/O queues per job",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, io_queues),
		.minval = 1,
		.maxval = 1024,
		.def = "1",
		.help = "I/O queue pairs (TCP connections) of the job's controller; the job's I/Os go round-robin over them",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "io_queue_size",
		.lname = "I/O queue entries",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, io_queue_size),
		.minval = 0,
		.maxval = 65536,
		.def = "0",
		.help = "Entries per I/O queue (0: iodepth + 1, so one queue holds every I/O)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "keep_alive_ms",
		.lname = "Keep Alive Timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, kato_ms),
		.minval = 0,
		.maxval = 3600000,
		.def = "5000",
		.help = "KATO sent in Connect, ms; Keep Alive goes out every KATO/2 (0: off)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "timeout_ms",
		.lname = "Command timeout",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, timeout_ms),
		.minval = 1,
		.maxval = 3600000,
		.def = "10000",
		.help = "Bound of every wait (connect, admin command, each I/O), ms",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "disable_sqflow",
		.lname = "Disable SQ flow control",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, disable_sqflow),
		.def = "0",
		.help = "Ask for SQ flow control disable (Connect CATTR bit 2) on I/O queues",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "exec",
		.lname = "Execution model",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, exec),
		.help = "none (default: fio's CPU options apply), bound (pin the job thread to its io_cpu) or unbound (allow the affinity_scope unit of its io_cpu)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "affinity_scope",
		.lname = "Affinity scope",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, affinity_scope),
		.help = "exec=unbound: cpu, smt, cache (default), numa or system",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "affinity_strict",
		.lname = "Strict affinity",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, affinity_strict),
		.def = "0",
		.help = "exec=unbound: never leave the unit (else start in it, may run on any cpus= CPU and are moved back on wake-up)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "io_cpu",
		.lname = "io_cpu policy",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, io_cpu),
		.help = "rr (default): job i takes CPU i mod n; least-loaded: blk-mq style CPU groups, least loaded CPU of the job's group",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "cpus",
		.lname = "CPUs for io_cpu",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct nf_opts, cpus),
		.help = "CPU list such as 0-3,6 to choose io_cpus from (default: the job's allowed CPUs)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "idle_poll_us",
		.lname = "Idle poll period",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, idle_poll_us),
		.minval = 0,
		.maxval = 10000000,
		.def = "0",
		.help = "Keep polling this many us after the last progress before blocking in poll(2) (0: block at once)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "busy_poll",
		.lname = "Busy poll",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, busy_poll),
		.def = "0",
		.help = "Never block waiting for completions (poll for ever)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "rx_budget",
		.lname = "Receive budget",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, rx_budget),
		.minval = 0,
		.def = "0",
		.help = "Receive at most this many bytes per poll call (0: no limit)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "tx_budget",
		.lname = "Send budget",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct nf_opts, tx_budget),
		.minval = 0,
		.def = "0",
		.help = "Send about this many bytes per poll call (0: no limit)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ns_size",
		.lname = "Namespace size seen by fio",
		.type = FIO_OPT_STR_VAL,
		.off1 = offsetof(struct nf_opts, ns_size),
		.def = "0",
		.help = "Bytes fio is told the namespace has (0: NSZE x LBA size). Larger: I/O past the end reaches the target, which must fail it (LBA Out of Range) - a check of the target",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "batch_send",
		.lname = "Batch command sends",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct nf_opts, batch_send),
		.def = "1",
		.help = "After a reap of several I/Os, hold the commands fio commits in the host library (plugged qps) until its next reap and send them in one sendmsg() (0: one sendmsg() per command)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

/* fio looks the engine up by this symbol name. */
struct ioengine_ops ioengine = {
	.name = "nvmfd",
	.version = FIO_IOOPS_VERSION,
	.flags = FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL,
	.setup = nf_setup,
	.init = nf_init,
	.queue = nf_queue,
	.commit = nf_commit,
	.getevents = nf_getevents,
	.event = nf_event,
	.errdetails = nf_errdetails,
	.cleanup = nf_cleanup,
	.open_file = nf_open_file,
	.close_file = nf_close_file,
	.get_file_size = nf_get_file_size,
	.io_u_init = nf_io_u_init,
	.io_u_free = nf_io_u_free,
	.option_struct_size = sizeof(struct nf_opts),
	.options = engine_opts,
};
