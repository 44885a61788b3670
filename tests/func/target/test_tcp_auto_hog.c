// SPDX-License-Identifier: MIT
/*
 * test_tcp_auto_hog.c - issue 10's starvation with a real hog, made
 * deterministic by the scheduler rather than by timing: a child process
 * pinned to the io_cpu of one I/O queue runs SCHED_FIFO (priority 1), so
 * every normal task on that CPU gets only what the kernel's RT throttling
 * leaves (sched_rt_runtime_us of sched_rt_period_us: 5 % by default, at the
 * end of each period), i.e. the queue's bound worker waits up to ~950 ms
 * at a time. The target's watchdog runs on a housekeeping thread that the
 * scheduler moves to the other CPU.
 *
 *  - auto: while the hog still runs, every queue (admin, the I/O queue on
 *    the hogged CPU, the I/O queue on the other CPU) completes writes and
 *    reads, and the hogged queue has left its io_cpu (exec mode not
 *    "bound", moves >= 1, last_reason starved or pressure/queue_delay);
 *  - bound (allowed to stall): whether the hogged queue was served during
 *    the hog, and how long its commands took, is printed, not asserted
 *    (kernels with the fair deadline server, 6.12 and later, hand normal
 *    tasks their 5 % early in each period, so bound is slow rather than
 *    stalled); after the hog ends every queue works.
 *
 * The hog exits by itself after HOG_MAX_S (it is killed as soon as the
 * checks are done), so it never holds a CPU of a shared machine for long.
 * Skips (77) with fewer than 2 CPUs, when SCHED_FIFO is not permitted, or
 * when RT throttling is off (sched_rt_runtime_us -1: a FIFO hog could then
 * starve the watchdog too).
 */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include <sys/wait.h>

#include "exec_common.h"
#include "internal/proc.h"
#include "target/xprt.h"

#define HOG_MAX_S 4

static int g_cpus[2];

static void tweak_cpus(struct nvmfd_cfg *cfg)
{
	CPU_ZERO(&cfg->exec.rt.cpus);
	CPU_SET(g_cpus[0], &cfg->exec.rt.cpus);
	CPU_SET(g_cpus[1], &cfg->exec.rt.cpus);
}

static void tweak_auto(struct nvmfd_cfg *cfg)
{
	tweak_cpus(cfg);
	cfg->exec.exec_auto = true;
}

/* A hog child: pinned to @cpu, SCHED_FIFO 1 once told to start (a byte on
 * @go), spinning for at most HOG_MAX_S. It answers on @ack: 'y' running,
 * 'n' the policy was refused. Forked while the test is single-threaded. */
struct hog {
	pid_t pid;
	int go, ack;
};

static void hog_main(int cpu, int go, int ack)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec t0, t;
	cpu_set_t set;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp)) {
		c = 'n';
		(void)!write(ack, &c, 1);
		_exit(0);
	}
	c = 'y';
	(void)!write(ack, &c, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec - t0.tv_sec < HOG_MAX_S);
	_exit(0);
}

static void hog_fork(struct hog *h, int cpu)
{
	int go[2], ack[2];

	TF_CHECK_EQ(pipe(go), 0);
	TF_CHECK_EQ(pipe(ack), 0);
	h->pid = fork();
	TF_CHECK(h->pid >= 0);
	if (h->pid == 0) {
		close(go[1]);
		close(ack[0]);
		hog_main(cpu, go[0], ack[1]);
	}
	close(go[0]);
	close(ack[1]);
	h->go = go[1];
	h->ack = ack[0];
}

/* Return: true when the hog runs (SCHED_FIFO granted). */
static bool hog_start(struct hog *h)
{
	char c = 'g';

	TF_CHECK_EQ(write(h->go, &c, 1), 1);
	TF_CHECK_EQ(read(h->ack, &c, 1), 1);
	return c == 'y';
}

static bool hog_running(const struct hog *h)
{
	return waitpid(h->pid, NULL, WNOHANG) == 0;
}

static void hog_end(struct hog *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	h->pid = 0;
	close(h->go);
	close(h->ack);
}

static bool rt_throttled(void)
{
	FILE *f = fopen("/proc/sys/kernel/sched_rt_runtime_us", "re");
	long v = -1;

	if (!f)
		return false;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v >= 0;
}

/* An admin command (Identify Controller) completes. */
static void admin_works(struct tc_conn *adm)
{
	static uint8_t buf[4096];
	struct nvmfd_cqe cqe;

	TF_CHECK_EQ(tc_step(tc_identify(adm, 1, 0, buf, &cqe), &cqe), 0);
}

static const char *exec_str(json_object *q, const char *k)
{
	return json_object_get_string(ex_get(ex_get(q, "exec"), k));
}

/*
 * One run: admin on the first CPU, io1 on the second (hogged), io2 on the
 * first (rr placement). Return: 77 when the hog could not get SCHED_FIFO.
 */
static int run(bool auto_mode)
{
	struct tc_conn adm, io1, io2;
	struct tf_target t;
	struct hog h;
	json_object *root, *q;
	uint16_t cntlid = 0;
	int64_t n1 = 0, n2 = 0;
	uint64_t t0, io1_ms;
	bool during;

	hog_fork(&h, g_cpus[1]);
	TF_CHECK_EQ(tf_start(&t, auto_mode ? tweak_auto : tweak_cpus), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io1, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false,
				  false), 0);
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 31, 0, false,
				  false), 0);
	root = ex_stats(&t);
	TF_CHECK_EQ(ex_int(ex_queue(root, &io1), "io_cpu"), g_cpus[1]);
	TF_CHECK_EQ(ex_int(ex_queue(root, &io2), "io_cpu"), g_cpus[0]);
	json_object_put(root);
	n1 += ex_rw(&io1, 2, 1);
	n2 += ex_rw(&io2, 2, 2);
	ex_wait_completions(&t, &io1, n1);
	ex_wait_completions(&t, &io2, n2);
	if (!hog_start(&h)) {
		fprintf(stderr, "SCHED_FIFO refused: skipped\n");
		hog_end(&h);
		ex_stop_and_close(&t, (struct tc_conn *[]){ &adm, &io1, &io2 }, 3);
		return 77;
	}
	fprintf(stderr, "%s: SCHED_FIFO hog on cpu %d (io1's io_cpu)\n",
		auto_mode ? "auto" : "bound", g_cpus[1]);
	/* I/O on every queue while the hog runs (tc_rw waits up to 10 s) */
	t0 = nvmfd__mono_ns();
	n1 += ex_rw(&io1, 10, 3);
	io1_ms = (nvmfd__mono_ns() - t0) / 1000000u;
	n2 += ex_rw(&io2, 10, 4);
	admin_works(&adm);
	during = hog_running(&h);
	if (auto_mode) {
		/* served while the hog still ran: auto moved the queue */
		TF_CHECK(during);
		ex_wait_completions(&t, &io1, n1);
		root = ex_stats(&t);
		q = ex_queue(root, &io1);
		fprintf(stderr, "auto: io1 %s on cpu %lld, moves %lld, last reason %s (its 20 "
				"commands took %llu ms)\n",
			exec_str(q, "mode"), (long long)ex_int(ex_get(q, "exec"), "cpu"),
			(long long)ex_int(ex_get(q, "exec"), "moves"), exec_str(q, "last_reason"),
			(unsigned long long)io1_ms);
		TF_CHECK(strcmp(exec_str(q, "mode"), "bound"));
		TF_CHECK(ex_int(ex_get(q, "exec"), "moves") >= 1);
		TF_CHECK(!strcmp(exec_str(q, "last_reason"), "starved") ||
			 !strcmp(exec_str(q, "last_reason"), "pressure") ||
			 !strcmp(exec_str(q, "last_reason"), "queue_delay"));
		json_object_put(root);
		TF_CHECK(hog_running(&h));
	} else {
		fprintf(stderr, "bound: io1 %s while the hog ran (its 20 commands took %llu ms)\n",
			during ? "was served" : "stalled until the hog ended",
			(unsigned long long)io1_ms);
	}
	hog_end(&h);
	/* after the hog every queue works */
	n1 += ex_rw(&io1, 2, 5);
	n2 += ex_rw(&io2, 2, 6);
	ex_wait_completions(&t, &io1, n1);
	ex_wait_completions(&t, &io2, n2);
	ex_stop_and_close(&t, (struct tc_conn *[]){ &adm, &io1, &io2 }, 3);
	return 0;
}

int main(void)
{
	if (ex_two_cpus(g_cpus) < 2) {
		fprintf(stderr, "needs 2 CPUs: skipped\n");
		return 77;
	}
	if (!rt_throttled()) {
		fprintf(stderr, "RT throttling off (sched_rt_runtime_us -1): skipped\n");
		return 77;
	}
	if (run(true) == 77)
		return 77;
	run(false);
	fprintf(stderr, "ok\n");
	return 0;
}
