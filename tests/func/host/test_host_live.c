// SPDX-License-Identifier: MIT
/*
 * test_host_live.c - live reconfiguration of a running nvmfd target (the
 * internal/target.h calls the control socket's methods make), seen by the
 * host library over 127.0.0.1. One subsystem with a RAM namespace (nsid 1,
 * 4 KiB blocks) on a port bound to port 0.
 *
 *  resize      nvmfd_tgt_ns_resize() of the RAM namespace: the host's AER
 *              completes with Namespace Attribute Changed, the Changed
 *              Namespace List names it, Identify Namespace reports the new
 *              NSZE, a read beyond the old end works after growing and is
 *              an LBA Out of Range after shrinking back.
 *  release     a file namespace with an acknowledged write is removed while
 *              the host stays connected: its file lock is released (a new
 *              exclusive open succeeds, within 10 s) and the file holds the
 *              write; adding it again serves the same data.
 *  subsystem   a subsystem created live (file namespace, linked to the
 *              port) serves I/O and appears in the discovery log; deleting
 *              it with the host connected closes the host's queues, drops
 *              it from the discovery log (with a Discovery Log Change AEN),
 *              releases the file with the acknowledged write in it; nvmfd
 *              keeps serving the other subsystem.
 *  port        a listener added live (port 0: the bound port is reported,
 *              in the discovery log too) accepts a host; removing it closes
 *              that host's connection, sends the discovery controller on
 *              the first port a Discovery Log Change AEN, and the log no
 *              longer lists it; the first port still serves I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <nvmfd/host.h>

#include "cfg/cfg.h"
#include "internal/backend.h"
#include "internal/target.h"
#include "../../lib/host_check.h"

#define NQN "nqn.2026-11.io.nvmfd:live"
#define NQN2 "nqn.2026-11.io.nvmfd:live2"
#define AER_NS_CHANGED 0x00040002u /* notice, namespace attribute changed, log 04h */
#define AER_DISC_CHANGED 0x0070f002u /* notice, discovery log change, log 70h */

static struct nvmfd_cfg *g_cfg;
static struct nvmfd_tgt *g_tgt;

/* One raw read/write of @nlb blocks of @bs bytes at @slba (the library only
 * knows the namespaces it saw at connect). Return: the completion; a
 * transport error is returned in cpl.err (not fatal). */
static struct nvmfd_host_cpl raw_rw(struct nvmfd_host_qp *qp, bool write, uint32_t nsid,
				    uint64_t slba, uint32_t bs, void *buf)
{
	struct hc_cpl st = { 0 };
	struct nvmfd_sqe sqe;
	int r;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = write ? NVMFD_CMD_WRITE : NVMFD_CMD_READ;
	sqe.nsid = nsid;
	sqe.cdw10 = (uint32_t)slba;
	sqe.cdw11 = (uint32_t)(slba >> 32);
	r = nvmfd_host_qp_submit_raw(qp, &sqe, buf, bs, write, hc_cpl_cb, &st);
	if (r) {
		st.cpl.err = r;
		return st.cpl;
	}
	while (!st.done) {
		r = nvmfd_host_qp_wait(qp, 100);
		if (r < 0 && !st.done) {
			st.cpl.err = r;
			break;
		}
	}
	return st.cpl;
}

struct aer_arg {
	struct hc_aer a; /* first: hc_aer_thread() takes it */
	pthread_t th;
};

static void aer_start(struct aer_arg *a, struct nvmfd_host_ctrl *c)
{
	memset(a, 0, sizeof(*a));
	a->a.ctrl = c;
	CHECK(pthread_create(&a->th, NULL, hc_aer_thread, &a->a) == 0, "thread");
	usleep(200 * 1000); /* held by then; if not, the event waits for it */
}

static void aer_expect(struct aer_arg *a, uint32_t result)
{
	pthread_join(a->th, NULL);
	CHECK(a->a.ret == 0, "AER: %d %s", a->a.ret, nvmfd_host_ctrl_errmsg(a->a.ctrl));
	CHECK(a->a.cpl.cqe.result == result, "AER result 0x%08x, expected 0x%08x",
	      a->a.cpl.cqe.result, result);
}

static void set_aec(struct nvmfd_host_ctrl *c, uint32_t bits)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_SET_FEATURES;
	sqe.cdw10 = NVMFD_FEAT_ASYNC_EVENT;
	sqe.cdw11 = bits;
	CHECK(nvmfd_host_admin_cmd(c, &sqe, NULL, 0, false, &cpl) == 0 && cpl.status == 0,
	      "AEC: %s", nvmfd_host_ctrl_errmsg(c));
}

static struct nvmfd_host_ctrl *connect_to(const char *port, const char *nqn)
{
	struct nvmfd_host_ctrl_opts o;

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.nr_io_queues = nqn[0] ? 1 : 0;
	o.timeout_ms = 5000;
	if (!nqn[0])
		o.kato_ms = 0;
	return hc_loop_connect(&o, port, nqn);
}

static uint64_t id_ns_nsze(struct nvmfd_host_ctrl *c, uint32_t nsid)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_id_ns id;
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opc = NVMFD_ADMIN_IDENTIFY;
	sqe.nsid = nsid;
	sqe.cdw10 = NVMFD_ID_CNS_NS;
	CHECK(nvmfd_host_admin_cmd(c, &sqe, &id, sizeof(id), false, &cpl) == 0 && !cpl.status,
	      "identify ns: %s", nvmfd_host_ctrl_errmsg(c));
	return id.nsze;
}

static void expect_changed(struct nvmfd_host_ctrl *c, uint32_t nsid)
{
	static uint32_t list[1024];

	CHECK(nvmfd_host_get_log_page(c, NVMFD_LOG_CHANGED_NS, 0xffffffff, 0, list,
				      sizeof(list)) == 0,
	      "changed ns log: %s", nvmfd_host_ctrl_errmsg(c));
	CHECK(list[0] == nsid && list[1] == 0, "changed ns list %u %u", list[0], list[1]);
}

/* The discovery log on @c lists @nqn on service id @svc ("" = anywhere)?
 * Return: number of such entries. */
static int disc_count(struct nvmfd_host_ctrl *c, const char *nqn, const char *svc)
{
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_disc_log_entry *e = NULL;
	int n = 0;

	CHECK(nvmfd_host_discover(c, &hdr, &e) == 0, "discover: %s", nvmfd_host_ctrl_errmsg(c));
	for (uint64_t i = 0; i < hdr.numrec; i++)
		if (!strncmp(e[i].subnqn, nqn, sizeof(e[i].subnqn)) &&
		    (!svc[0] || !strncmp(e[i].trsvcid, svc, sizeof(e[i].trsvcid))))
			n++;
	free(e);
	return n;
}

/* Wait (10 s at most) until nobody holds @path's lock, then check that
 * the first block holds @want. */
static void expect_released(const char *path, const uint8_t *want, size_t len)
{
	uint8_t got[4096];
	int fd = -1;

	for (int i = 0; i < 100; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0, "open %s", path);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(100 * 1000);
	}
	CHECK(fd >= 0, "%s still locked 10 s after its namespace went", path);
	CHECK(pread(fd, got, len, 0) == (ssize_t)len, "pread %s", path);
	CHECK(!memcmp(got, want, len), "%s lost the acknowledged write", path);
	flock(fd, LOCK_UN);
	close(fd);
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed);
}

static void test_resize(const char *port)
{
	struct nvmfd_host_ctrl *c = connect_to(port, NQN);
	struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(c, 0);
	uint64_t old = 8u << 20, now = 0;
	static uint8_t buf[4096];
	struct nvmfd_host_cpl cpl;
	struct aer_arg a;

	set_aec(c, NVMFD_AEN_CFG_NS_ATTR);
	CHECK(id_ns_nsze(c, 1) == old / 4096, "nsze before %llu",
	      (unsigned long long)id_ns_nsze(c, 1));
	cpl = raw_rw(qp, false, 1, old / 4096, 4096, buf);
	CHECK(!cpl.err && cpl.status == (NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_LBA_RANGE) |
					 NVMFD_STATUS_DNR),
	      "read past the end before: err %d status 0x%x", cpl.err, cpl.status);

	aer_start(&a, c);
	CHECK(nvmfd_tgt_ns_resize(g_tgt, 0, 1, 2 * old, &now) == 0 && now == 2 * old, "grow");
	aer_expect(&a, AER_NS_CHANGED);
	expect_changed(c, 1);
	CHECK(id_ns_nsze(c, 1) == 2 * old / 4096, "nsze after growing %llu",
	      (unsigned long long)id_ns_nsze(c, 1));
	fill(buf, sizeof(buf), 3);
	cpl = raw_rw(qp, true, 1, 2 * old / 4096 - 1, 4096, buf);
	CHECK(!cpl.err && !cpl.status, "write of the new last block: %d 0x%x", cpl.err,
	      cpl.status);

	aer_start(&a, c);
	CHECK(nvmfd_tgt_ns_resize(g_tgt, 0, 1, old, &now) == 0 && now == old, "shrink");
	aer_expect(&a, AER_NS_CHANGED);
	expect_changed(c, 1);
	CHECK(id_ns_nsze(c, 1) == old / 4096, "nsze after shrinking");
	cpl = raw_rw(qp, false, 1, old / 4096, 4096, buf);
	CHECK(!cpl.err && (cpl.status & 0x7ff) == NVMFD_SC_LBA_RANGE,
	      "read past the end after shrinking: 0x%x", cpl.status);
	/* grown again, the dropped tail reads zeroes */
	CHECK(nvmfd_tgt_ns_resize(g_tgt, 0, 1, 2 * old, &now) == 0, "grow again");
	cpl = raw_rw(qp, false, 1, 2 * old / 4096 - 1, 4096, buf);
	CHECK(!cpl.err && !cpl.status && buf[0] == 0 && buf[4095] == 0,
	      "regrown tail: 0x%x %u", cpl.status, buf[0]);
	/* unchanged size: no event; errors change nothing */
	CHECK(nvmfd_tgt_ns_resize(g_tgt, 0, 1, 2 * old + 512, NULL) == -EINVAL, "unaligned");
	CHECK(nvmfd_tgt_ns_resize(g_tgt, 0, 9, old, NULL) == -ENOENT, "no ns 9");
	CHECK(id_ns_nsze(c, 1) == 2 * old / 4096, "nsze after the failed resizes");
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect");
	nvmfd_host_ctrl_destroy(&c);
}

static void test_release(const char *port, const char *dir)
{
	struct nvmfd_host_ctrl *c = connect_to(port, NQN);
	struct nvmfd_host_qp *qp = nvmfd_host_ctrl_qp(c, 0);
	static uint8_t w[4096], r[4096];
	char err[NVMFD_CFG_ERRLEN], spec[512];
	struct nvmfd_host_cpl cpl;
	struct nvmfd_cfg_ns cn;

	snprintf(spec, sizeof(spec), "file:%s/rel.img,size=1M,bs=4096", dir);
	memset(&cn, 0, sizeof(cn));
	CHECK(nvmfd_cfg_parse_namespace(&cn, spec, err) == 0, "%s", err);
	cn.nsid = 4;
	CHECK(nvmfd_tgt_ns_add(g_tgt, 0, &cn) == 0, "add file ns");
	fill(w, sizeof(w), 11);
	cpl = raw_rw(qp, true, 4, 0, 4096, w);
	CHECK(!cpl.err && !cpl.status, "write: %d 0x%x", cpl.err, cpl.status);
	CHECK(nvmfd_tgt_ns_remove(g_tgt, 0, 4) == 0, "remove");
	expect_released(cn.path, w, sizeof(w));
	/* the path can be exported again, and serves the data */
	CHECK(nvmfd_tgt_ns_add(g_tgt, 0, &cn) == 0, "add it again");
	cpl = raw_rw(qp, false, 4, 0, 4096, r);
	CHECK(!cpl.err && !cpl.status && !memcmp(r, w, sizeof(w)), "read back: 0x%x",
	      cpl.status);
	CHECK(nvmfd_tgt_ns_remove(g_tgt, 0, 4) == 0, "remove again");
	expect_released(cn.path, w, sizeof(w));
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect");
	nvmfd_host_ctrl_destroy(&c);
}

static void test_subsystem(const char *port, const char *dir)
{
	struct nvmfd_cfg_subsys *cs = calloc(1, sizeof(*cs));
	struct nvmfd_host_ctrl *d, *c;
	static uint8_t w[4096];
	char err[NVMFD_CFG_ERRLEN], spec[512], path[4096];
	struct nvmfd_host_cpl cpl;
	struct aer_arg a;
	bool dead = false;

	CHECK(cs, "oom");
	CHECK(nvmfd_cfg_subsys_init(cs, NQN2, err) == 0, "%s", err);
	cs->allow_any_host = true;
	snprintf(spec, sizeof(spec), "file:%s/sub.img,size=1M", dir);
	CHECK(nvmfd_cfg_parse_namespace(&cs->ns[0], spec, err) == 0, "%s", err);
	cs->ns[0].nsid = 1;
	cs->nr_ns = 1;
	snprintf(path, sizeof(path), "%s", cs->ns[0].path);
	/* what nvmf_create_subsystem + add_ns + add_listener do */
	CHECK(nvmfd_tgt_subsys_create(g_tgt, cs) == 0, "create");
	CHECK(nvmfd_tgt_subsys_create(g_tgt, cs) == -EEXIST, "create twice");
	nvmfd_tgt_cfg_lock(g_tgt);
	g_cfg->subsys[g_cfg->nr_subsys] = *cs;
	g_cfg->subsys[g_cfg->nr_subsys].ns[0].bk.path = g_cfg->subsys[g_cfg->nr_subsys].ns[0].path;
	g_cfg->ports[0].subsys_idx[g_cfg->ports[0].nr_subsys++] = g_cfg->nr_subsys++;
	nvmfd_tgt_cfg_unlock(g_tgt);
	nvmfd_tgt_discovery_changed(g_tgt);

	d = connect_to(port, "");
	CHECK(disc_count(d, NQN2, port) == 1, "new subsystem not in the discovery log");
	set_aec(d, NVMFD_AEN_CFG_DISC_CHANGE);
	c = connect_to(port, NQN2);
	fill(w, sizeof(w), 23);
	cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), true, 1, 0, 512, w);
	CHECK(!cpl.err && !cpl.status, "write: %d 0x%x", cpl.err, cpl.status);

	/* delete with the host connected (what nvmf_delete_subsystem does) */
	aer_start(&a, d);
	CHECK(nvmfd_tgt_subsys_delete(g_tgt, 1) == 0, "delete");
	nvmfd_tgt_cfg_lock(g_tgt);
	g_cfg->nr_subsys--;
	g_cfg->ports[0].nr_subsys--;
	nvmfd_tgt_cfg_unlock(g_tgt);
	aer_expect(&a, AER_DISC_CHANGED);
	CHECK(disc_count(d, NQN2, "") == 0, "deleted subsystem still in the discovery log");
	/* the host's queues are closed */
	for (int i = 0; i < 50 && !dead; i++) {
		uint8_t r[512];

		cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), false, 1, 0, 512, r);
		dead = cpl.err != 0;
		if (!dead)
			usleep(100 * 1000);
	}
	CHECK(dead, "the deleted subsystem's host queue still answers");
	nvmfd_host_ctrl_destroy(&c);
	expect_released(path, w, 512);
	CHECK(nvmfd_tgt_subsys_delete(g_tgt, 1) == -ENOENT, "delete twice");
	CHECK(nvmfd_host_ctrl_disconnect(d) == 0, "disc disconnect");
	nvmfd_host_ctrl_destroy(&d);
	/* the first subsystem is untouched */
	c = connect_to(port, NQN);
	cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), false, 1, 0, 4096, w);
	CHECK(!cpl.err && !cpl.status, "I/O on the other subsystem: 0x%x", cpl.status);
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect");
	nvmfd_host_ctrl_destroy(&c);
	free(cs);
}

static void test_port(const char *port)
{
	struct nvmfd_cfg_port p;
	struct nvmfd_host_ctrl *d, *c;
	char err[NVMFD_CFG_ERRLEN], port2[16];
	static uint8_t buf[4096];
	struct nvmfd_host_cpl cpl;
	struct aer_arg a;
	uint16_t bound = 0;
	bool dead = false;

	nvmfd_cfg_port_init(&p, 2);
	CHECK(nvmfd_cfg_parse_listen(&p, "127.0.0.1:0", err) == 0, "%s", err);
	p.subsys_idx[p.nr_subsys++] = 0;
	CHECK(nvmfd_tgt_port_add(g_tgt, &p, &bound) == 0 && bound, "port add");
	CHECK(nvmfd_tgt_port_add(g_tgt, &p, NULL) == -EEXIST, "port id twice");
	CHECK(nvmfd_tgt_listen_port(g_tgt, 1) == bound, "bound port of index 1");
	nvmfd_tgt_cfg_lock(g_tgt);
	g_cfg->ports[g_cfg->nr_ports++] = p;
	nvmfd_tgt_cfg_unlock(g_tgt);
	nvmfd_tgt_discovery_changed(g_tgt);
	snprintf(port2, sizeof(port2), "%u", bound);

	d = connect_to(port, "");
	CHECK(disc_count(d, NQN, port2) == 1, "new port (bound %s) not in the discovery log",
	      port2);
	set_aec(d, NVMFD_AEN_CFG_DISC_CHANGE);
	c = connect_to(port2, NQN);
	cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), false, 1, 0, 4096, buf);
	CHECK(!cpl.err && !cpl.status, "I/O through the new port: 0x%x", cpl.status);

	aer_start(&a, d);
	nvmfd_tgt_cfg_lock(g_tgt);
	g_cfg->nr_ports--;
	nvmfd_tgt_cfg_unlock(g_tgt);
	CHECK(nvmfd_tgt_port_remove(g_tgt, 1) == 0, "port remove");
	CHECK(nvmfd_tgt_port_remove(g_tgt, 1) == -ENOENT, "port remove twice");
	aer_expect(&a, AER_DISC_CHANGED);
	CHECK(disc_count(d, NQN, port2) == 0, "removed port still in the discovery log");
	CHECK(disc_count(d, NQN, port) == 1, "first port gone from the discovery log");
	for (int i = 0; i < 50 && !dead; i++) {
		cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), false, 1, 0, 4096, buf);
		dead = cpl.err != 0;
		if (!dead)
			usleep(100 * 1000);
	}
	CHECK(dead, "a connection of the removed port still answers");
	nvmfd_host_ctrl_destroy(&c);
	CHECK(nvmfd_host_ctrl_disconnect(d) == 0, "disc disconnect");
	nvmfd_host_ctrl_destroy(&d);
	c = connect_to(port, NQN);
	cpl = raw_rw(nvmfd_host_ctrl_qp(c, 0), false, 1, 0, 4096, buf);
	CHECK(!cpl.err && !cpl.status, "I/O through the first port: 0x%x", cpl.status);
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect");
	nvmfd_host_ctrl_destroy(&c);
}

int main(void)
{
	char err[NVMFD_CFG_ERRLEN], port[16], dir[] = "/tmp/nvmfd-live.XXXXXX";
	struct nvmfd_cfg_subsys *s;

	CHECK(mkdtemp(dir), "mkdtemp");
	g_cfg = calloc(1, sizeof(*g_cfg));
	CHECK(g_cfg, "oom");
	nvmfd_cfg_init_defaults(g_cfg);
	nvmfd_cfg_port_init(&g_cfg->ports[0], 1);
	CHECK(nvmfd_cfg_parse_listen(&g_cfg->ports[0], "127.0.0.1:0", err) == 0, "%s", err);
	g_cfg->ports[0].nr_subsys = 1;
	g_cfg->ports[0].subsys_idx[0] = 0;
	g_cfg->nr_ports = 1;
	s = &g_cfg->subsys[0];
	CHECK(nvmfd_cfg_subsys_init(s, NQN, err) == 0, "%s", err);
	s->allow_any_host = true;
	CHECK(nvmfd_cfg_parse_namespace(&s->ns[0], "ram:8M,bs=4096", err) == 0, "%s", err);
	s->ns[0].nsid = 1;
	s->nr_ns = 1;
	g_cfg->nr_subsys = 1;
	CHECK(nvmfd_cfg_validate(g_cfg, err) == 0, "%s", err);
	CHECK(nvmfd_tgt_create(g_cfg, &g_tgt) == 0, "tgt_create");
	CHECK(nvmfd_tgt_start(g_tgt) == 0, "tgt_start");
	snprintf(port, sizeof(port), "%u", nvmfd_tgt_listen_port(g_tgt, 0));

	test_resize(port);
	printf("resize: ok\n");
	test_release(port, dir);
	printf("release: ok\n");
	test_subsystem(port, dir);
	printf("subsystem: ok\n");
	test_port(port);
	printf("port: ok\n");

	nvmfd_tgt_stop(g_tgt);
	nvmfd_tgt_destroy(&g_tgt);
	free(g_cfg);
	{
		char p[4200];

		snprintf(p, sizeof(p), "%s/rel.img", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/sub.img", dir);
		unlink(p);
		rmdir(dir);
	}
	printf("ok\n");
	return 0;
}
