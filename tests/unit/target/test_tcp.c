// SPDX-License-Identifier: MIT
/*
 * test_tcp.c - the NVMe/TCP transport's queue (src/target/tcp/tcp.c)
 * driven over a socketpair: the real target core, runtime and completion
 * pool, but no TCP connection; the test host (tests/lib/tcp_client.c)
 * speaks the wire protocol on the other end. Checks the slot state machine
 * (every slot FREE again, per the stats), teardown with slots abandoned in
 * transport states, wire errors, stop with connected queues, and the
 * queue's resources after Connect (a few slots before, 2 x entries + 1
 * after; a Connect without them fails with Internal Error).
 *
 * Waits are bounded (10 s) only to turn a hang into a failure; no
 * assertion depends on timing.
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "internal/target.h"
#include "target/tcp/tcp_int.h"
#include "tcp_client.h"
#include "tgt_test.h"

struct env {
	struct nvmfd_cfg cfg;
	struct nvmfd_tgt *tgt;
	struct tcp_port *port;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct nvmfd_cfg_exec exec;

	if (!e)
		return -1;
	nvmfd_cfg_init_defaults(&e->cfg);
	exec = e->cfg.exec;
	tt_cfg_build(&e->cfg);
	e->cfg.exec = exec;
	e->cfg.exec.rt.workers_per_pool = 1;
	e->cfg.max_io_size = TT_MAX_IO;
	e->cfg.maxh2cdata = 16384; /* several H2CData / C2HData PDUs per command */
	for (int i = 0; i < 2; i++) {
		strcpy(e->cfg.ports[i].traddr, "127.0.0.1");
		strcpy(e->cfg.ports[i].trsvcid, "0");
	}
	if (nvmfd_tgt_create(&e->cfg, &e->tgt) || nvmfd_tgt_start(e->tgt))
		return -1;
	/* the transport's port object behind listener 0 */
	e->port = (struct tcp_port *)(void *)e->tgt->ports[0]->port;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	nvmfd_tgt_destroy(&e->tgt);
	free(e);
	return 0;
}

/* A queue on the transport whose peer is @c (a socketpair end). */
static void pair_queue(struct env *e, struct tc_conn *c)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(tc_attach(c, sv[0]), 0);
	assert_int_equal(tcp_queue_create(e->port, sv[1]), 0);
}

static unsigned int nr_queues(struct env *e)
{
	unsigned int n;

	pthread_mutex_lock(&e->port->lock);
	n = e->port->nr_queues;
	pthread_mutex_unlock(&e->port->lock);
	return n;
}

static void wait_queues(struct env *e, unsigned int n)
{
	for (int i = 0; nr_queues(e) != n; i++) {
		if (i > 10000)
			fail_msg("timeout: %u queues, waiting for %u", nr_queues(e), n);
		usleep(1000);
	}
}

/* The slot states of the queue whose qid is @qid (first found). */
static void slot_states(struct env *e, unsigned int qid, int *free_slots, int *slots)
{
	*free_slots = *slots = -1;
	pthread_mutex_lock(&e->port->lock);
	for (struct tcp_queue *q = e->port->queues; q; q = q->next) {
		json_object *o = tcp_queue_json(q), *v, *ss;

		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "qid", &v));
		if ((unsigned int)json_object_get_int(v) == qid) {
			assert_true(json_object_object_get_ex(o, "slots", &v));
			*slots = json_object_get_int(v);
			assert_true(json_object_object_get_ex(o, "slot_states", &ss));
			assert_true(json_object_object_get_ex(ss, "free", &v));
			*free_slots = json_object_get_int(v);
			json_object_put(o);
			break;
		}
		json_object_put(o);
	}
	pthread_mutex_unlock(&e->port->lock);
}

/* Admin bring-up over @c: ICReq, Connect, CC.EN, CSTS.RDY. */
static uint16_t admin_up(struct tc_conn *c)
{
	struct nvmfd_cqe cqe;
	uint64_t csts = 0;
	uint16_t cntlid;

	assert_int_equal(tc_ic(c, false, false), 0);
	assert_int_equal(tc_step(tc_connect(c, 0, 31, 0, SUB0, TC_HOSTNQN, 0xffff, &cqe), &cqe),
			 0);
	cntlid = (uint16_t)(le32toh(cqe.result) & 0xffff);
	assert_int_equal(tc_step(tc_prop_set(c, NVMFD_REG_CC, false, 1u | (6u << 16) | (4u << 20),
					     &cqe),
				 &cqe),
			 0);
	for (int i = 0; !(csts & NVMFD_CSTS_RDY); i++) {
		assert_true(i < 1000);
		assert_int_equal(tc_step(tc_prop_get(c, NVMFD_REG_CSTS, false, &csts, &cqe), &cqe),
				 0);
		if (!(csts & NVMFD_CSTS_RDY))
			usleep(10000);
	}
	return cntlid;
}

static void test_io_and_slots(void **state)
{
	struct env *e = *state;
	struct tc_conn a, q;
	static uint8_t wbuf[65536], rbuf[65536];
	struct nvmfd_cqe cqe;
	uint16_t cntlid;
	int fr, n;

	pair_queue(e, &a);
	cntlid = admin_up(&a);
	pair_queue(e, &q);
	assert_int_equal(tc_ic(&q, true, true), 0); /* with digests */
	assert_int_equal(tc_step(tc_connect(&q, 1, 63, 0, SUB0, TC_HOSTNQN, cntlid, &cqe), &cqe),
			 0);
	/* 64 KiB through R2T + several H2CData, then in-capsule 4 KiB */
	tc_pattern(wbuf, sizeof(wbuf), 7);
	assert_int_equal(tc_step(tc_rw(&q, true, 1, 0, 128, wbuf, sizeof(wbuf), 0, &cqe), &cqe), 0);
	assert_true(q.r2ts >= 1);
	assert_int_equal(tc_step(tc_rw(&q, true, 1, 128, 8, wbuf, 4096, 0, &cqe), &cqe), 0);
	memset(rbuf, 0, sizeof(rbuf));
	assert_int_equal(tc_step(tc_rw(&q, false, 1, 0, 128, rbuf, sizeof(rbuf), 0, &cqe), &cqe),
			 0);
	assert_true(q.c2h_pdus >= 4); /* 16 KiB chunks */
	assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
	/* a command the core fails never leaves a slot behind */
	assert_int_equal(tc_step(tc_rw(&q, false, 1, 1u << 30, 1, rbuf, 512, 0, &cqe), &cqe) >
				 0x10000,
			 1);
	/* every slot back on the free list (a slot is freed just after its
	 * last PDU left in sendmsg, which may be after the host read it) */
	for (unsigned int qid = 0; qid < 2; qid++) {
		for (int i = 0;; i++) {
			slot_states(e, qid, &fr, &n);
			assert_true(n > 0);
			if (fr == n)
				break;
			assert_true(i < 10000);
			usleep(1000);
		}
	}
	tc_close(&q);
	tc_close(&a);
	wait_queues(e, 0);
}

/* Admin queue @a up, I/O queue 1 @q connected with a 64 KiB write sent
 * whose R2T arrived (its data is never sent: the slot waits in H2C). */
static void pending_write(struct env *e, struct tc_conn *a, struct tc_conn *q)
{
	static uint8_t buf[65536];
	uint8_t hdr[NVMFD_TCP_MAX_HDR_DGST_LEN];
	struct nvmfd_sqe sqe;
	struct nvmfd_cqe cqe;
	uint16_t cntlid;

	pair_queue(e, a);
	cntlid = admin_up(a);
	pair_queue(e, q);
	assert_int_equal(tc_ic(q, false, false), 0);
	assert_int_equal(tc_step(tc_connect(q, 1, 63, 0, SUB0, TC_HOSTNQN, cntlid, &cqe), &cqe),
			 0);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_CMD_WRITE;
	sqe.nsid = 1;
	sqe.cdw12 = htole32(127); /* 128 blocks: 64 KiB, beyond in-capsule */
	sqe.dptr.length = htole32(sizeof(buf));
	assert_int_equal(tc_send_cmd(q, &sqe, NULL, 0, sizeof(buf)), 0);
	assert_int_equal(tc_recv_pdu(q, hdr, NULL, 0), 0);
	assert_int_equal(((struct nvmfd_tcp_ch *)hdr)->type, NVMFD_TCP_R2T);
}

/* A write whose data never comes: the slot sits in H2C when the host
 * goes; teardown takes it back (asserts, ASan) and frees the queue. */
static void test_close_with_r2t_pending(void **state)
{
	struct env *e = *state;
	struct tc_conn a, q;
	struct nvmfd_cqe cqe;

	pending_write(e, &a, &q);
	tc_close(&q);
	/* the admin queue is unaffected */
	assert_int_equal(tc_step(tc_prop_get(&a, NVMFD_REG_CSTS, false, &(uint64_t){ 0 }, &cqe),
				 &cqe),
			 0);
	wait_queues(e, 1);
	tc_close(&a);
	wait_queues(e, 0);
}

/* A host that leaves with Asynchronous Event Requests held by the core
 * (the Linux host keeps one outstanding): those slots sit in EXEC with
 * no backend I/O; teardown must take them back (regression: the slot
 * check asserted "no EXEC slot" before the core forgot its AERs). */
static void test_close_with_aers_held(void **state)
{
	struct env *e = *state;
	struct tc_conn a;
	struct nvmfd_sqe sqe;

	pair_queue(e, &a);
	admin_up(&a);
	for (int i = 0; i < 2; i++) {
		memset(&sqe, 0, sizeof(sqe));
		sqe.opc = NVMFD_ADMIN_ASYNC_EVENT;
		assert_int_equal(tc_send_cmd(&a, &sqe, NULL, 0, 0), 0);
	}
	/* the AERs stay held: a later command still completes first */
	assert_int_equal(tc_step(tc_prop_get(&a, NVMFD_REG_CSTS, false, &(uint64_t){ 0 },
					     &(struct nvmfd_cqe){ 0 }),
				 &(struct nvmfd_cqe){ 0 }),
			 0);
	tc_close(&a);
	wait_queues(e, 0);
}

/* A wire error: C2HTermReq with the rule's FES, that connection only. */
static void test_bad_ttag(void **state)
{
	struct env *e = *state;
	struct tc_conn a, bad;
	uint8_t pdu[sizeof(struct nvmfd_tcp_data) + 4] = { 0 };
	struct nvmfd_cqe cqe;
	size_t len;

	pair_queue(e, &a);
	admin_up(&a);
	pair_queue(e, &bad);
	assert_int_equal(tc_ic(&bad, false, false), 0);
	len = nvmfd_pdu_build_data(pdu, NVMFD_TCP_H2C_DATA, NVMFD_TCP_F_DATA_LAST, 1, 0x777, 0, 4,
				   false, false);
	assert_int_equal(len, sizeof(struct nvmfd_tcp_data));
	assert_int_equal(tc_send_raw(&bad, pdu, len + 4), 0);
	assert_int_equal(tc_expect_term(&bad), TC_TERM);
	assert_int_equal(bad.term_fes, NVMFD_TCP_FES_INVALID_HEADER);
	assert_int_equal(bad.term_fei, offsetof(struct nvmfd_tcp_data, ttag));
	assert_int_equal(tc_wait_eof(&bad), 0);
	tc_close(&bad);
	assert_int_equal(tc_step(tc_prop_get(&a, NVMFD_REG_CSTS, false, &(uint64_t){ 0 }, &cqe),
				 &cqe),
			 0);
	tc_close(&a);
	wait_queues(e, 0);
}

/* Stopping the target with connected queues (one with a write waiting for
 * its data) tears every queue down and returns. */
static void test_stop_connected(void **state)
{
	struct env *e = *state;
	struct tc_conn a, q;

	pending_write(e, &a, &q);
	nvmfd_tgt_stop(e->tgt); /* waits for every queue of every port */
	assert_int_equal(tc_wait_eof(&q), 0);
	assert_int_equal(tc_wait_eof(&a), 0);
	tc_close(&q);
	tc_close(&a);
}

/* The newest queue of the port (the list's head; with @alone, the only
 * one): its slots in use and whether its completion context is open,
 * read as the stats dumper does. */
static void newest_queue(struct env *e, bool alone, int *slots, bool *cq)
{
	pthread_mutex_lock(&e->port->lock);
	assert_non_null(e->port->queues);
	if (alone)
		assert_null(e->port->queues->next);
	*slots = (int)__atomic_load_n(&e->port->queues->nr_reqs, __ATOMIC_RELAXED);
	*cq = __atomic_load_n(&e->port->queues->qp.cq, __ATOMIC_ACQUIRE) != NULL;
	pthread_mutex_unlock(&e->port->lock);
}

/* Connect @c as qid 0 with @sqsize (0's based); Return: the status. */
static uint16_t connect_admin_q(struct tc_conn *c, uint16_t sqsize)
{
	struct nvmfd_cqe cqe;

	assert_int_equal(tc_connect(c, 0, sqsize, 0, SUB0, TC_HOSTNQN, 0xffff, &cqe), 0);
	return tc_status(&cqe);
}

/* Until its Connect succeeds a queue holds TCP_SETUP_SLOTS slots and no
 * completion context; a successful Connect grows it to 2 x entries + 1
 * (at most what the port reserves); a failed one does not. */
static void test_slots_after_connect(void **state)
{
	struct env *e = *state;
	uint32_t max = 2u * TCP_DEF_QUEUE_SIZE + 1u;
	static const struct {
		uint16_t qid, sqsize;
		int slots; /* after the Connect; 0: it fails */
	} cases[] = {
		{ 0, 31, 65 },	     /* a Linux admin queue */
		{ 0, 0xfffe, 257 },  /* admin SQSIZE is not bounded by MQES: capped */
		{ 1, 127, 257 },     /* an I/O queue of MQES + 1 entries */
		{ 1, 3, 9 },	     /* QD 4 */
		{ 1, 128, 0 },	     /* beyond MQES: Connect Invalid Parameters */
	};
	struct tc_conn a, q;
	struct nvmfd_cqe cqe;
	uint16_t cntlid;
	int slots;
	bool cq;

	assert_int_equal(e->cfg.ports[0].max_queue_size ?: TCP_DEF_QUEUE_SIZE,
			 TCP_DEF_QUEUE_SIZE);
	assert_int_equal(cases[1].slots, (int)max);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pair_queue(e, &q);
		wait_queues(e, 1);
		newest_queue(e, true, &slots, &cq);
		assert_int_equal(slots, TCP_SETUP_SLOTS);
		assert_false(cq);
		assert_int_equal(tc_ic(&q, false, false), 0);
		if (cases[i].qid == 0) {
			assert_int_equal(connect_admin_q(&q, cases[i].sqsize), 0);
			newest_queue(e, false, &slots, &cq);
		} else {
			/* the I/O queue's controller: an admin queue first */
			tc_close(&q);
			wait_queues(e, 0);
			pair_queue(e, &a);
			cntlid = admin_up(&a);
			pair_queue(e, &q);
			assert_int_equal(tc_ic(&q, false, false), 0);
			assert_int_equal(tc_connect(&q, cases[i].qid, cases[i].sqsize, 0, SUB0,
						    TC_HOSTNQN, cntlid, &cqe),
					 0);
			assert_int_equal(tc_status(&cqe) == 0, cases[i].slots > 0);
			/* the controller's deletion closes its I/O queue too */
			newest_queue(e, false, &slots, &cq);
			tc_close(&a);
		}
		assert_int_equal(slots, cases[i].slots ?: TCP_SETUP_SLOTS);
		assert_int_equal(cq, cases[i].slots > 0);
		tc_close(&q);
		wait_queues(e, 0);
	}
}

/* A Connect that passes its checks gets the queue's resources before the
 * last one fails (an I/O qid already taken): a second Connect on the same
 * connection that asks for more grows them again, its own ring reopened
 * at the new depth, and the queue works. */
static void test_connect_again_larger(void **state)
{
	struct env *e = *state;
	static uint8_t wbuf[4096], rbuf[4096];
	struct tc_conn a, q1, q;
	struct nvmfd_cqe cqe;
	uint16_t cntlid;
	int slots;
	bool cq;

	pair_queue(e, &a);
	cntlid = admin_up(&a);
	pair_queue(e, &q1);
	assert_int_equal(tc_ic(&q1, false, false), 0);
	assert_int_equal(tc_step(tc_connect(&q1, 1, 3, 0, SUB0, TC_HOSTNQN, cntlid, &cqe), &cqe),
			 0);
	pair_queue(e, &q);
	assert_int_equal(tc_ic(&q, false, false), 0);
	/* qid 1 is taken: Command Sequence Error, after the enable */
	assert_int_equal(tc_step(tc_connect(&q, 1, 3, 0, SUB0, TC_HOSTNQN, cntlid, &cqe), &cqe),
			 0x10000 | NVMFD_STATUS_DNR |
				 NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_CMD_SEQ_ERROR));
	newest_queue(e, false, &slots, &cq);
	assert_int_equal(slots, 9);
	assert_true(cq);
	assert_int_equal(tc_step(tc_connect(&q, 2, 63, 0, SUB0, TC_HOSTNQN, cntlid, &cqe), &cqe),
			 0);
	newest_queue(e, false, &slots, &cq);
	assert_int_equal(slots, 129);
	assert_true(cq);
	tc_pattern(wbuf, sizeof(wbuf), 11);
	assert_int_equal(tc_step(tc_rw(&q, true, 1, 64, 8, wbuf, sizeof(wbuf), 0, &cqe), &cqe), 0);
	assert_int_equal(tc_step(tc_rw(&q, false, 1, 64, 8, rbuf, sizeof(rbuf), 0, &cqe), &cqe), 0);
	assert_memory_equal(rbuf, wbuf, sizeof(wbuf));
	tc_close(&q);
	tc_close(&q1);
	tc_close(&a);
	wait_queues(e, 0);
}

/* The lowest fd number not in use (every lower one is). */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/*
 * No resources for a queue at its Connect: the queue's own completion
 * ring needs file descriptors and none is left (RLIMIT_NOFILE at the
 * lowest free fd). The Connect fails with Internal Error, without DNR
 * (a retry may find them), no controller is left behind, the connection
 * closes and every queue is freed; with fds back, the next host is
 * served.
 */
static void test_connect_no_resources(void **state)
{
	struct env *e = *state;
	struct rlimit old, low;
	struct tc_conn q;
	uint16_t st;

	pair_queue(e, &q);
	assert_int_equal(tc_ic(&q, false, false), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)lowest_free_fd();
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	st = connect_admin_q(&q, 31);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(st, NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INTERNAL));
	assert_int_equal(tc_wait_eof(&q), 0);
	tc_close(&q);
	wait_queues(e, 0);
	pthread_mutex_lock(&e->tgt->lock);
	for (unsigned int i = 0; i < e->tgt->nr_subsys; i++)
		assert_null(e->tgt->subsys[i]->ctrls);
	pthread_mutex_unlock(&e->tgt->lock);
	/* the same target serves the next host */
	pair_queue(e, &q);
	admin_up(&q);
	tc_close(&q);
	wait_queues(e, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_io_and_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_with_r2t_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_with_aers_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_ttag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_connected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots_after_connect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_no_resources, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_again_larger, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
