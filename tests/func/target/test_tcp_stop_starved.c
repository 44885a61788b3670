// SPDX-License-Identifier: MIT
/*
 * test_tcp_stop_starved.c - a target stop while one CPU's worker never runs
 * (issue 14: SIGTERM took 10-26 s with a hog pinned to a worker's CPU).
 * As in test_tcp_auto.c, the hog is made deterministic: a work item holds
 * the bound pool of one CPU (it does not return until the test opens its
 * gate, and declares no blocking section), so the queues placed there are
 * never served again.
 *
 * For a per-queue and a shared completion pool, on a file namespace:
 *  - admin queue and I/O queues 1 and 2 connect; each I/O queue writes a
 *    block that is acknowledged;
 *  - the pool of the CPU queue 2 is placed on is held; queue 2 gets one
 *    more write it can never answer; queue 1 (on the other CPU) writes
 *    and is acknowledged;
 *  - nvmfd_tgt_stop() must return while the pool is still held (it used to
 *    wait until the pool ran again: here, for ever); every connection then
 *    sees EOF, and queue 2 never received a response for its write;
 *  - after the gate opens and the target is destroyed, the file holds
 *    every acknowledged block.
 *
 * Every wait is bounded (a hang detector, not a timing assertion).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>

#include <sys/socket.h>

#include "exec_common.h"
#include "target/xprt.h"

#define NS_MIB 16u
#define BLK 512u

static int g_cpus[2];
static char g_path[64];
static bool g_shared;

static void tweak(struct nvmfd_cfg *cfg)
{
	char err[NVMFD_CFG_ERRLEN] = "", spec[128];

	CPU_ZERO(&cfg->exec.rt.cpus);
	CPU_SET(g_cpus[0], &cfg->exec.rt.cpus);
	CPU_SET(g_cpus[1], &cfg->exec.rt.cpus);
	cfg->exec.cq_pool_shared = g_shared;
	snprintf(spec, sizeof(spec), "file:%s,size=%uM", g_path, NS_MIB);
	memset(&cfg->subsys[0].ns[0], 0, sizeof(cfg->subsys[0].ns[0]));
	if (nvmfd_cfg_parse_namespace(&cfg->subsys[0].ns[0], spec, err)) {
		fprintf(stderr, "namespace %s: %s\n", spec, err);
		exit(1);
	}
	cfg->subsys[0].ns[0].nsid = 1;
	cfg->subsys[0].ns[0].enable = true;
}

static int queue_cpu(struct tf_target *t, const struct tc_conn *c)
{
	json_object *root = ex_stats(t), *q = ex_find_queue(root, c);
	int cpu;

	TF_CHECK(q);
	cpu = (int)ex_int(q, "io_cpu");
	json_object_put(root);
	return cpu;
}

static void write_block(struct tc_conn *c, uint64_t lba, uint32_t seed)
{
	uint8_t buf[BLK];
	struct nvmfd_cqe cqe;

	tc_pattern(buf, sizeof(buf), seed);
	TF_CHECK_EQ(tc_step(tc_rw(c, true, 1, lba, 1, buf, sizeof(buf), 0, &cqe), &cqe), 0);
}

struct stopper {
	struct nvmfd_tgt *tgt;
	long done;
};

static void *stop_main(void *arg)
{
	struct stopper *s = arg;

	nvmfd_tgt_stop(s->tgt);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* No PDU may arrive on @c before EOF (its write was never answered). */
static void expect_eof_only(struct tc_conn *c)
{
	uint8_t buf[4096];
	ssize_t n;

	for (;;) {
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n > 0)
		fprintf(stderr, "queue 2 received %zd bytes after its pool was held\n", n);
	TF_CHECK(n == 0 || (n < 0 && errno == ECONNRESET));
}

static void check_block(int fd, uint64_t lba, uint32_t seed)
{
	uint8_t want[BLK], got[BLK];

	tc_pattern(want, sizeof(want), seed);
	TF_CHECK_EQ(pread(fd, got, sizeof(got), (off_t)(lba * BLK)), (long long)BLK);
	if (memcmp(want, got, BLK))
		fprintf(stderr, "lba %llu: acknowledged write lost\n", (unsigned long long)lba);
	TF_CHECK(!memcmp(want, got, BLK));
}

static void run(bool shared)
{
	struct tc_conn adm, io1, io2;
	struct tf_target t;
	struct stopper st;
	struct gate g;
	struct nvmfd_sqe sqe;
	uint8_t buf[BLK];
	pthread_t th;
	uint16_t cntlid = 0;
	int held, fd;

	fprintf(stderr, "stop with a held pool, %s completion pool\n",
		shared ? "shared" : "per-queue");
	g_shared = shared;
	snprintf(g_path, sizeof(g_path), "/tmp/nvmfd-stop-starved-%d.img", (int)getpid());
	unlink(g_path);
	TF_CHECK_EQ(tf_start(&t, tweak), 0);
	TF_CHECK_EQ(tc_admin_enable(&adm, TF_ADDR, t.port, TF_SUBNQN, false, false, &cntlid), 0);
	TF_CHECK_EQ(tc_io_connect(&io1, TF_ADDR, t.port, TF_SUBNQN, cntlid, 1, 31, 0, false,
				  false), 0);
	TF_CHECK_EQ(tc_io_connect(&io2, TF_ADDR, t.port, TF_SUBNQN, cntlid, 2, 31, 0, false,
				  false), 0);
	held = queue_cpu(&t, &io2);
	/* rr placement puts queues 1 and 2 on different CPUs */
	TF_CHECK(queue_cpu(&t, &io1) != held);
	write_block(&io1, 0, 1);
	write_block(&io2, 1, 2);

	gate_hold(&g, &t, held);
	/* queue 2's pool is held: this write is never answered */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.nsid = htole32(1);
	sqe.cdw10 = htole32(2);
	tc_pattern(buf, sizeof(buf), 3);
	TF_CHECK_EQ(tc_send_cmd(&io2, &sqe, buf, sizeof(buf), sizeof(buf)), 0);
	write_block(&io1, 3, 4);

	st = (struct stopper){ .tgt = t.tgt };
	TF_CHECK_EQ(pthread_create(&th, NULL, stop_main, &st), 0);
	for (int i = 0; !__atomic_load_n(&st.done, __ATOMIC_ACQUIRE); i++) {
		if (i == 60000) { /* 60 s: the stop waits for the held pool */
			fprintf(stderr, "nvmfd_tgt_stop() did not return while cpu %d was held\n",
				held);
			TF_CHECK(0);
		}
		usleep(1000);
	}
	pthread_join(th, NULL);
	TF_CHECK_EQ(tc_wait_eof(&adm), 0);
	TF_CHECK_EQ(tc_wait_eof(&io1), 0);
	expect_eof_only(&io2);
	tc_close(&adm);
	tc_close(&io1);
	tc_close(&io2);

	gate_open(&g);
	tf_stop(&t);

	fd = open(g_path, O_RDONLY | O_CLOEXEC);
	TF_CHECK(fd >= 0);
	check_block(fd, 0, 1);
	check_block(fd, 1, 2);
	check_block(fd, 3, 4);
	close(fd);
	unlink(g_path);
}

int main(void)
{
	cpu_set_t set;
	int n = 0;

	TF_CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			g_cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "SKIP: needs two CPUs\n");
		return 77;
	}
	run(false);
	run(true);
	fprintf(stderr, "ok\n");
	return 0;
}
