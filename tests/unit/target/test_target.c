// SPDX-License-Identifier: MIT
/* test_target.c - nvmfd_tgt_create/start/stop/destroy with the real runtime
 * and TCP listeners on 127.0.0.1: bound ports, stats JSON, and "nothing
 * listens when a step fails". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "internal/target.h"
#include "tcp_client.h"
#include "tgt_test.h"

/* A TCP socket bound to 127.0.0.1:@port (0 = any); listening if @listen_too.
 * Return: fd or -errno; *bound gets the port. */
static int bind_local(uint16_t port, bool listen_too, uint16_t *bound)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (listen_too && listen(fd, 4) < 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	getsockname(fd, (struct sockaddr *)&sa, &len);
	if (bound)
		*bound = ntohs(sa.sin_port);
	return fd;
}

static void cfg_for_tcp(struct nvmfd_cfg *cfg)
{
	struct nvmfd_cfg_exec exec;

	nvmfd_cfg_init_defaults(cfg);
	exec = cfg->exec;
	tt_cfg_build(cfg);
	cfg->exec = exec;
	cfg->exec.rt.workers_per_pool = 1;
	for (int i = 0; i < 2; i++) {
		strcpy(cfg->ports[i].traddr, "127.0.0.1");
		strcpy(cfg->ports[i].trsvcid, "0");
	}
}

static void test_lifecycle(void **state)
{
	struct nvmfd_cfg *cfg = calloc(1, sizeof(*cfg));
	struct nvmfd_tgt *tgt = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	json_object *root, *arr;
	uint16_t p0, p1;
	int fd;

	(void)state;
	cfg_for_tcp(cfg);
	assert_int_equal(nvmfd_tgt_create(cfg, &tgt), 0);
	assert_non_null(tgt);
	p0 = nvmfd_tgt_listen_port(tgt, 0);
	p1 = nvmfd_tgt_listen_port(tgt, 1);
	assert_int_not_equal(p0, 0);
	assert_int_not_equal(p1, 0);
	assert_int_not_equal(p0, p1);
	assert_int_equal(nvmfd_tgt_listen_port(tgt, 2), 0);
	/* bound: nobody else can take the port */
	assert_int_equal(bind_local(p0, false, NULL), -EADDRINUSE);
	assert_int_equal(nvmfd_tgt_start(tgt), 0);
	assert_int_equal(nvmfd_tgt_start(tgt), -EINVAL);

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(nvmfd_tgt_stats_json(tgt, f), 0);
	fclose(f);
	root = json_tokener_parse(buf);
	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "controllers", &arr));
	assert_int_equal(json_object_array_length(arr), 0);
	assert_true(json_object_object_get_ex(root, "ports", &arr));
	assert_int_equal(json_object_array_length(arr), 2);
	json_object_put(root);
	free(buf);

	nvmfd_tgt_stop(tgt);
	nvmfd_tgt_stop(tgt); /* idempotent */
	/* listeners are gone after stop */
	fd = bind_local(p0, true, NULL);
	assert_true(fd >= 0);
	close(fd);
	nvmfd_tgt_destroy(&tgt);
	assert_null(tgt);
	nvmfd_tgt_destroy(&tgt);
	free(cfg);
}

static void test_create_fails_cleanly(void **state)
{
	struct nvmfd_cfg *cfg = calloc(1, sizeof(*cfg));
	struct nvmfd_tgt *tgt = NULL;
	uint16_t free_port, busy_port;
	int busy, fd;

	(void)state;
	cfg_for_tcp(cfg);
	/* a port that is free now, and one that is taken */
	fd = bind_local(0, false, &free_port);
	assert_true(fd >= 0);
	close(fd);
	busy = bind_local(0, true, &busy_port);
	assert_true(busy >= 0);
	snprintf(cfg->ports[0].trsvcid, sizeof(cfg->ports[0].trsvcid), "%u", free_port);
	snprintf(cfg->ports[1].trsvcid, sizeof(cfg->ports[1].trsvcid), "%u", busy_port);
	assert_int_equal(nvmfd_tgt_create(cfg, &tgt), -EADDRINUSE);
	assert_null(tgt);
	/* the first listener was closed again */
	fd = bind_local(free_port, true, NULL);
	assert_true(fd >= 0);
	close(fd);
	close(busy);

	/* a backend that cannot open: no listener is created at all */
	cfg->subsys[0].ns[0].bk.size = 0;
	snprintf(cfg->ports[1].trsvcid, sizeof(cfg->ports[1].trsvcid), "%u", free_port);
	assert_int_equal(nvmfd_tgt_create(cfg, &tgt), -EINVAL);
	assert_null(tgt);
	fd = bind_local(free_port, true, NULL);
	assert_true(fd >= 0);
	close(fd);
	free(cfg);
}

/* Keep-alive end to end: the housekeeping thread expires a controller
 * whose host went quiet and the transport closes its queues. */
static void test_keep_alive_expiry_closes_queues(void **state)
{
	struct nvmfd_cfg *cfg = calloc(1, sizeof(*cfg));
	struct nvmfd_tgt *tgt = NULL;
	struct tc_conn a, io;
	struct nvmfd_cqe cqe;
	struct nvmfd_sqe sqe;
	uint16_t port, cntlid;

	(void)state;
	cfg_for_tcp(cfg);
	cfg->kato_grace_ms = 0;
	cfg->subsys[0].allow_any_host = true;
	assert_int_equal(nvmfd_tgt_create(cfg, &tgt), 0);
	assert_int_equal(nvmfd_tgt_start(tgt), 0);
	port = nvmfd_tgt_listen_port(tgt, 0);
	assert_int_equal(tc_admin_enable(&a, "127.0.0.1", port, SUB0, false, false, &cntlid), 0);
	assert_int_equal(tc_io_connect(&io, "127.0.0.1", port, SUB0, cntlid, 1, 31, 0, false,
				       false),
			 0);
	/* KATO 200 ms via Set Features, then silence */
	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_SET_FEATURES;
	sqe.cdw10 = NVMFD_FEAT_KATO;
	sqe.cdw11 = 200;
	assert_int_equal(tc_step(tc_cmd(&a, &sqe, NULL, 0, false, 0, &cqe), &cqe), 0);
	/* both connections are closed by the target (the client's receive
	 * timeout bounds the wait) */
	assert_int_equal(tc_wait_eof(&a), 0);
	assert_int_equal(tc_wait_eof(&io), 0);
	tc_close(&a);
	tc_close(&io);
	nvmfd_tgt_destroy(&tgt);
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_create_fails_cleanly),
		cmocka_unit_test(test_keep_alive_expiry_closes_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
