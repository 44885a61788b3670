// SPDX-License-Identifier: MIT
/*
 * test_host_auth.c - the host library's DH-HMAC-CHAP over a real socket,
 * against a fake controller whose authentication side is src/auth's
 * controller state machine. The fake sets AUTHREQ ATR in the Connect
 * response (per scenario), answers every other command before a successful
 * authentication with "Authentication Required", and then serves the admin
 * bring-up (no I/O queues).
 *
 *   uni-ok            host secret right: connect succeeds, the fake saw the
 *                     authenticated state before the first Property Get
 *   bidi-ok           host and controller secrets right (Success2 seen)
 *   wrong-secret      host secret wrong: -EACCES, AUTH_Failure1 "failed"
 *   wrong-secret-close host secret wrong, the fake closes the connection
 *                     instead of answering (as the Linux target may): an
 *                     error naming the Reply and the likely cause
 *   wrong-ctrl-secret the controller proves another secret: -EACCES, the
 *                     fake receives AUTH_Failure2
 *   no-secret         ATR set, no host secret: -EACCES, nothing sent
 *   ctrl-secret-no-atr controller does not ask, host demands bidirectional:
 *                     -EACCES
 *   ascr              ATR|ASCR: -EOPNOTSUPP (no secure channel concatenation)
 *   dh-8192           the fake allows only SHA-512 + ffdhe8192: connect works
 *   reauth-ok         bidirectional; nvmfd_host_ctrl_reauth() twice: each a
 *                     new transaction (a new T_ID, Success2 again); an admin
 *                     command works after each
 *   reauth-changed-key the fake's host key changes after the connect: the
 *                     re-authentication fails with -EACCES and the message
 *                     names AUTH_Failure1 "authentication failed"; the
 *                     fake then refuses commands (AUTH_REQUIRED)
 *   reauth-none       the fake asks for no authentication: -EOPNOTSUPP
 *   reauth-slot-wait  admin queue of two slots, both held by other
 *                     threads' commands the fake does not answer yet: a
 *                     re-authentication waits for a slot without holding
 *                     the admin mutex (the test takes it while the wait
 *                     is seen in progress), a third thread's command
 *                     waits for a slot meanwhile instead of failing with
 *                     -EAGAIN, a second re-authentication gets -EBUSY;
 *                     once the fake answers, every call succeeds
 *
 * Usage: test_host_auth <scenario>; exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nvmfd/host.h>
#include <nvmfd/pdu.h>

#include "../../lib/fake_tgt.h"
#include "../../lib/host_check.h"
#include "host/host_int.h" /* reauth-slot-wait: the admin mutex and queue */
#include "internal/auth.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:9b7c3a5e-51a4-4bd7-9a0e-2b1e3d4c5f60"
#define SUBNQN "nqn.2026-11.io.nvmfd:auth-fake"
#define KEY_A "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:"
#define KEY_B "DHHC-1:01:jWiK0NeSweQjGFEI9c4bjHV792NxG/KQG1mAfCQAiRlmCljm:"
#define KEY_C "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"

struct fake {
	int lfd;
	uint16_t port;
	uint32_t authreq;
	const uint8_t *hashes;
	const uint8_t *dhgroups;
	pthread_t thread;
	bool authenticated_before_prop; /* first Property Get came after success */
	bool saw_prop;
	bool got_failure2;
	bool got_success2;
	bool close_on_failure1; /* close instead of returning an AUTH_Failure1 */
	bool rekey; /* a Negotiate after the first success: another host key */
	unsigned int negotiates;
	unsigned int success2s;
	uint16_t tids[4]; /* T_IDs of the first Negotiates */
	/* reauth-slot-wait: the first hold_max Get Features are left
	 * unanswered (held) until a byte arrives on release[0] */
	unsigned int hold_max;
	int release[2];
	pthread_mutex_t mu;
	pthread_cond_t cond;
	unsigned int nr_held; /* mu */
	uint16_t held[4];
	char fail[256];
};

/* Wait for the next PDU on @fd; answer the held commands when the test
 * releases them. Return: 0 when @fd is readable, -1 on timeout/error. */
static int fake_wait_pdu(struct fake *f, int fd)
{
	if (!f->hold_max)
		return 0; /* ft_read_pdu() waits itself */
	for (;;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = f->release[0], .events = POLLIN } };

		/* a bound for a hang: the test releases once it saw the wait */
		if (poll(pfd, 2, 120000) <= 0)
			return -1;
		if (pfd[1].revents) {
			char b;

			if (read(f->release[0], &b, 1) != 1)
				return -1;
			pthread_mutex_lock(&f->mu);
			for (unsigned int i = 0; i < f->nr_held; i++)
				ft_send_rsp(fd, f->held[i], 0, 0, 0, 0);
			f->hold_max = 0; /* answer the rest at once */
			pthread_mutex_unlock(&f->mu);
			return 0;
		}
		if (pfd[0].revents)
			return 0;
	}
}

/* reauth-slot-wait: hold this Get Features? Return: true when held. */
static bool fake_hold(struct fake *f, const struct nvmfd_sqe *s)
{
	bool held = false;

	if (s->opc != 0x0a)
		return false;
	pthread_mutex_lock(&f->mu);
	if (f->nr_held < f->hold_max) {
		f->held[f->nr_held++] = s->cid;
		pthread_cond_broadcast(&f->cond);
		held = true;
	}
	pthread_mutex_unlock(&f->mu);
	return held;
}

static void fake_admin(struct fake *f, int fd, struct ft_pdu *p)
{
	static uint8_t id[4096];
	struct nvmfd_sqe *s = &p->sqe;
	struct nvmfd_prop_cmd pc;

	memcpy(&pc, s, sizeof(pc));
	memset(id, 0, sizeof(id));
	if (s->opc == NVMFD_ADMIN_FABRICS && pc.fctype == NVMFD_FCTYPE_PROP_GET) {
		uint64_t v = pc.ofst == NVMFD_REG_CAP ? NVMFD_CAP_BUILD(63, 2) :
			     pc.ofst == NVMFD_REG_CSTS ? NVMFD_CSTS_RDY | NVMFD_CSTS_SHST_CMPLT :
							 NVMFD_VS_1_3;

		ft_send_rsp(fd, s->cid, 0, (uint32_t)v, (uint32_t)(v >> 32), 0);
		return;
	}
	if (s->opc == NVMFD_ADMIN_IDENTIFY) {
		if ((uint8_t)s->cdw10 == NVMFD_ID_CNS_CTRL) {
			struct nvmfd_id_ctrl *c = (struct nvmfd_id_ctrl *)(void *)id;

			c->cntrltype = NVMFD_CNTRLTYPE_IO;
			c->ioccsz = 4;
			c->maxcmd = 16;
			memcpy(c->subnqn, SUBNQN, sizeof(SUBNQN) - 1);
		}
		ft_send_c2h(fd, s->cid, 0, id, sizeof(id), NVMFD_TCP_F_DATA_LAST, false, false);
	}
	ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
}

static void *fake_main(void *arg)
{
	static uint8_t pending[4096];
	struct fake *f = arg;
	struct ft_pdu *p = calloc(1, sizeof(*p));
	struct nvmfd_auth_key hk, ck;
	struct nvmfd_auth_ctrl *ac = NULL;
	struct nvmfd_auth_ctrl_cfg cfg = {
		.host_key = &hk, .ctrl_key = &ck, .hostnqn = HOSTNQN, .subnqn = SUBNQN,
		.hashes = f->hashes, .dhgroups = f->dhgroups,
	};
	size_t plen = 0;
	bool usable = false;
	int fd;

	if (nvmfd_auth_key_parse(KEY_A, &hk) || nvmfd_auth_key_parse(KEY_B, &ck) ||
	    nvmfd_auth_ctrl_new(&cfg, &ac) || !p) {
		snprintf(f->fail, sizeof(f->fail), "fake setup");
		goto out;
	}
	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0 || ft_icreq(fd, 65536))
		goto out;
	while (fake_wait_pdu(f, fd) == 0 && ft_read_pdu(fd, p) == 0 &&
	       p->ch.type == NVMFD_TCP_CMD) {
		struct nvmfd_sqe *s = &p->sqe;
		struct nvmfd_auth_send_cmd ac_cmd;

		memcpy(&ac_cmd, s, sizeof(ac_cmd));
		if (s->opc == NVMFD_ADMIN_FABRICS && ac_cmd.fctype == NVMFD_FCTYPE_CONNECT) {
			ft_send_rsp(fd, s->cid, 0, 1 | f->authreq, 0, 0);
			continue;
		}
		if (s->opc == NVMFD_ADMIN_FABRICS && ac_cmd.fctype == NVMFD_FCTYPE_AUTH_SEND) {
			int r;

			if (ac_cmd.secp != NVMFD_AUTH_SECP_NVME || ac_cmd.spsp0 != 1 ||
			    ac_cmd.spsp1 != 1 || ac_cmd.tl != p->dlen)
				snprintf(f->fail, sizeof(f->fail), "Auth Send fields secp %x tl %u/%u",
					 ac_cmd.secp, ac_cmd.tl, p->dlen);
			if (p->dlen >= 2 && p->data[0] == NVMFD_AUTH_TYPE_DHCHAP &&
			    p->data[1] == NVMFD_AUTH_ID_SUCCESS2) {
				f->got_success2 = true;
				f->success2s++;
			}
			if (p->dlen >= 6 && p->data[0] == NVMFD_AUTH_TYPE_COMMON &&
			    p->data[1] == NVMFD_AUTH_ID_NEGOTIATE) {
				if (f->negotiates < 4)
					f->tids[f->negotiates] =
						(uint16_t)(p->data[4] | p->data[5] << 8);
				if (f->rekey && nvmfd_auth_ctrl_authenticated(ac)) {
					/* as nvmfd after a key change: a new machine */
					nvmfd_auth_ctrl_free(ac);
					ac = NULL;
					if (nvmfd_auth_key_parse(KEY_C, &hk) ||
					    nvmfd_auth_ctrl_new(&cfg, &ac)) {
						snprintf(f->fail, sizeof(f->fail), "fake rekey");
						break;
					}
				}
				f->negotiates++;
			}
			r = nvmfd_auth_ctrl_step(ac, p->data, p->dlen, pending, sizeof(pending),
						 &plen);
			if (r == -EACCES)
				f->got_failure2 = true;
			/* as nvmfd: usable from a success until a transaction
			 * fails, so also while a re-authentication runs */
			if (nvmfd_auth_ctrl_authenticated(ac))
				usable = true;
			if (r < 0 || r == NVMFD_AUTH_NEXT_SEND_FAIL)
				usable = false;
			if (r == NVMFD_AUTH_NEXT_SEND_FAIL && f->close_on_failure1) {
				ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
				break;
			}
			ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
			continue;
		}
		if (s->opc == NVMFD_ADMIN_FABRICS && ac_cmd.fctype == NVMFD_FCTYPE_AUTH_RECV) {
			static uint8_t al_buf[8192];

			if (ac_cmd.tl > sizeof(al_buf) || ac_cmd.tl < plen) {
				ft_send_rsp(fd, s->cid, 0, 0, 0,
					    NVMFD_STATUS(NVMFD_SCT_GENERIC, NVMFD_SC_INVALID_FIELD));
				continue;
			}
			/* As nvmet does: AL bytes, the message then zeros. */
			memset(al_buf, 0, sizeof(al_buf));
			memcpy(al_buf, pending, plen);
			plen = 0;
			ft_send_c2h(fd, s->cid, 0, al_buf, ac_cmd.tl, NVMFD_TCP_F_DATA_LAST, false,
				    false);
			ft_send_rsp(fd, s->cid, 0, 0, 0, 0);
			continue;
		}
		if ((f->authreq & NVMFD_CONNECT_AUTHREQ_ATR) && !usable) {
			ft_send_rsp(fd, s->cid, 0, 0, 0,
				    NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED) |
					    NVMFD_STATUS_DNR);
			continue;
		}
		if (fake_hold(f, s))
			continue;
		if (!f->saw_prop && s->opc == NVMFD_ADMIN_FABRICS &&
		    ac_cmd.fctype == NVMFD_FCTYPE_PROP_GET) {
			f->saw_prop = true;
			f->authenticated_before_prop = nvmfd_auth_ctrl_authenticated(ac);
		}
		fake_admin(f, fd, p);
	}
	close(fd);
out:
	nvmfd_auth_ctrl_free(ac);
	free(p);
	return NULL;
}

/* An admin command (Get Features, Number of Queues) on @c; its status. */
static nvmfd_status_t admin_probe(struct nvmfd_host_ctrl *c)
{
	struct nvmfd_host_cpl cpl;
	struct nvmfd_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	memset(&cpl, 0, sizeof(cpl));
	sqe.opc = 0x0a; /* Get Features */
	sqe.cdw10 = 0x07;
	nvmfd_host_admin_cmd(c, &sqe, NULL, 0, false, &cpl);
	return cpl.err ? 0xffff : cpl.status;
}

struct call {
	struct nvmfd_host_ctrl *c;
	bool reauth; /* nvmfd_host_ctrl_reauth(), else admin_probe() */
	pthread_t thread;
	int ret; /* reauth's return, or the probe's status (0xffff: error) */
};

static void *call_main(void *arg)
{
	struct call *k = arg;

	k->ret = k->reauth ? nvmfd_host_ctrl_reauth(k->c) : (int)admin_probe(k->c);
	return NULL;
}

static void call_start(struct call *k, struct nvmfd_host_ctrl *c, bool reauth)
{
	k->c = c;
	k->reauth = reauth;
	CHECK(pthread_create(&k->thread, NULL, call_main, k) == 0, "thread");
}

/* Until the fake holds @n commands (a bound for a hang). */
static void wait_held(struct fake *f, unsigned int n)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 120;
	pthread_mutex_lock(&f->mu);
	while (f->nr_held < n)
		if (pthread_cond_timedwait(&f->cond, &f->mu, &ts) == ETIMEDOUT)
			break;
	CHECK(f->nr_held == n, "the fake holds %u commands, want %u", f->nr_held, n);
	pthread_mutex_unlock(&f->mu);
}

/*
 * reauth-slot-wait: both slots of the admin queue held by unanswered
 * commands; a re-authentication waiting for one must leave the admin
 * mutex free (the old code polled for the slot with it held, so keep-alive
 * and every other admin caller stopped until a completion came).
 */
static void reauth_slot_wait(struct nvmfd_host_ctrl *c, struct fake *f)
{
	struct call b, cc, r, d;
	bool seen = false;
	int ret;

	call_start(&b, c, false);
	wait_held(f, 1);
	call_start(&cc, c, false);
	wait_held(f, 2);
	call_start(&r, c, true);
	/* The wait is seen under the mutex: the kept slot (qp->reserve) with
	 * none free. A mutex held across the wait times out here. */
	for (int i = 0; i < 120000 && !seen; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 60;
		ret = pthread_mutex_timedlock(&c->admin_lock, &ts);
		CHECK(ret == 0, "admin mutex held for 60 s while a re-authentication waits "
				"for a slot: %s", strerror(ret));
		seen = c->admin->reserve == 1 && c->admin->nr_free == 0;
		pthread_mutex_unlock(&c->admin_lock);
		if (!seen)
			usleep(1000);
	}
	CHECK(seen, "the re-authentication never waited for a slot");
	/* meanwhile: another thread's re-authentication is refused, another
	 * admin command waits (no slot may be taken from the one kept) */
	ret = nvmfd_host_ctrl_reauth(c);
	CHECK(ret == -EBUSY, "second re-authentication: %d (%s)", ret,
	      nvmfd_host_ctrl_errmsg(c));
	call_start(&d, c, false);
	CHECK(write(f->release[1], "r", 1) == 1, "release");
	pthread_join(b.thread, NULL);
	pthread_join(cc.thread, NULL);
	pthread_join(r.thread, NULL);
	pthread_join(d.thread, NULL);
	CHECK(b.ret == 0 && cc.ret == 0, "held commands: status 0x%x 0x%x", b.ret, cc.ret);
	CHECK(r.ret == 0, "re-authentication: %d (%s)", r.ret, nvmfd_host_ctrl_errmsg(c));
	CHECK(d.ret == 0, "the command during the re-authentication: status 0x%x", d.ret);
	CHECK(f->negotiates == 2, "negotiates %u", f->negotiates);
	CHECK(admin_probe(c) == 0, "admin command after the re-authentication");
	CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect: %s", nvmfd_host_ctrl_errmsg(c));
}

static void reauth_checks(const char *sc, struct nvmfd_host_ctrl *c, struct fake *f)
{
	int ret;

	if (!strcmp(sc, "reauth-slot-wait")) {
		reauth_slot_wait(c, f);
		return;
	}

	if (!strcmp(sc, "reauth-none")) {
		ret = nvmfd_host_ctrl_reauth(c);
		CHECK(ret == -EOPNOTSUPP, "reauth without authentication: %d (%s)", ret,
		      nvmfd_host_ctrl_errmsg(c));
		CHECK(strstr(nvmfd_host_ctrl_errmsg(c), "admin queue: qid 0: the queue did not "
						    "authenticate"), "message '%s'",
		      nvmfd_host_ctrl_errmsg(c));
		CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect");
		return;
	}
	if (!strcmp(sc, "reauth-ok")) {
		for (int i = 0; i < 2; i++) {
			ret = nvmfd_host_ctrl_reauth(c);
			CHECK(ret == 0, "reauth %d: %d (%s)", i, ret, nvmfd_host_ctrl_errmsg(c));
			CHECK(admin_probe(c) == 0, "admin command after reauth %d", i);
		}
		CHECK(f->negotiates == 3 && f->success2s == 3, "negotiates %u success2 %u",
		      f->negotiates, f->success2s);
		CHECK(f->tids[0] != f->tids[1] && f->tids[1] != f->tids[2], "T_IDs %u %u %u",
		      f->tids[0], f->tids[1], f->tids[2]);
		CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect: %s",
		      nvmfd_host_ctrl_errmsg(c));
		return;
	}
	/* reauth-changed-key */
	CHECK(admin_probe(c) == 0, "admin command before the key change");
	ret = nvmfd_host_ctrl_reauth(c);
	printf("%s: reauth %d: %s\n", sc, ret, nvmfd_host_ctrl_errmsg(c));
	CHECK(ret == -EACCES, "reauth with a changed key: %d (%s)", ret,
	      nvmfd_host_ctrl_errmsg(c));
	CHECK(strstr(nvmfd_host_ctrl_errmsg(c), "admin queue: qid 0: re-authentication failed: "
						"DH-HMAC-CHAP failed: controller sent ") &&
		      strstr(nvmfd_host_ctrl_errmsg(c), "AUTH_Failure1: authentication failed"),
	      "message '%s'", nvmfd_host_ctrl_errmsg(c));
	CHECK(!strstr(nvmfd_host_ctrl_errmsg(c), "DHHC-1"), "a secret in the message");
	CHECK((admin_probe(c) & 0x7ff) ==
		      (NVMFD_STATUS(NVMFD_SCT_CMD_SPECIFIC, NVMFD_SC_AUTH_REQUIRED) & 0x7ff),
	      "after a failed reauth the fake still served a command");
}

int main(int argc, char **argv)
{
	static const uint8_t h512[] = { NVMFD_AUTH_HASH_SHA512, 0 };
	static const uint8_t g8192[] = { NVMFD_AUTH_DHGROUP_8192, 0 };
	struct nvmfd_host_ctrl_opts o;
	struct nvmfd_host_ctrl *c = NULL;
	struct nvmfd_host_trid t;
	const char *sc, *secret = KEY_A, *csecret = "";
	struct fake f;
	int want = 0, ret;
	const char *msg = "";

	CHECK(argc == 2, "usage: %s <scenario>", argv[0]);
	sc = argv[1];
	memset(&f, 0, sizeof(f));
	f.authreq = NVMFD_CONNECT_AUTHREQ_ATR;
	if (!strcmp(sc, "uni-ok")) {
	} else if (!strcmp(sc, "bidi-ok")) {
		csecret = KEY_B;
	} else if (!strcmp(sc, "dh-8192")) {
		csecret = KEY_B;
		f.hashes = h512;
		f.dhgroups = g8192;
	} else if (!strcmp(sc, "wrong-secret")) {
		secret = KEY_C;
		want = -EACCES;
		msg = "AUTH_Failure1: authentication failed";
	} else if (!strcmp(sc, "wrong-secret-close")) {
		secret = KEY_C;
		f.close_on_failure1 = true;
		want = 1; /* a transport error: -ECONNRESET or -ENOTCONN, by timing */
		msg = "after the host's Reply failed";
	} else if (!strcmp(sc, "wrong-ctrl-secret")) {
		csecret = KEY_C;
		want = -EACCES;
		msg = "controller response does not match";
	} else if (!strcmp(sc, "no-secret")) {
		secret = "";
		want = -EACCES;
		msg = "no host secret";
	} else if (!strcmp(sc, "ctrl-secret-no-atr")) {
		csecret = KEY_B;
		f.authreq = 0;
		want = -EACCES;
		msg = "did not ask for DH-HMAC-CHAP";
	} else if (!strcmp(sc, "reauth-ok")) {
		csecret = KEY_B;
	} else if (!strcmp(sc, "reauth-changed-key")) {
		f.rekey = true;
	} else if (!strcmp(sc, "reauth-none")) {
		f.authreq = 0;
	} else if (!strcmp(sc, "reauth-slot-wait")) {
		f.hold_max = 2;
	} else if (!strcmp(sc, "ascr")) {
		f.authreq |= NVMFD_CONNECT_AUTHREQ_ASCR;
		want = -EOPNOTSUPP;
		msg = "secure channel concatenation";
	} else {
		CHECK(0, "unknown scenario %s", sc);
	}
	pthread_mutex_init(&f.mu, NULL);
	pthread_cond_init(&f.cond, NULL);
	f.release[0] = f.release[1] = -1;
	if (f.hold_max)
		CHECK(pipe(f.release) == 0, "pipe");
	f.lfd = ft_listen(&f.port);
	CHECK(f.lfd >= 0, "listen: %s", strerror(-f.lfd));
	CHECK(pthread_create(&f.thread, NULL, fake_main, &f) == 0, "thread");

	nvmfd_host_ctrl_opts_init(&o, sizeof(o));
	o.kato_ms = 0;
	/* A bound for a hang, not a speed check: under ASan on a loaded
	 * machine the fake's ffdhe8192 step alone (key pair + derivation on
	 * its thread, before it answers) took longer than the 5 s this was. */
	o.timeout_ms = 120000;
	o.nr_io_queues = 0;
	if (f.hold_max)
		o.admin_queue_size = 3; /* two request slots */
	snprintf(o.hostnqn, sizeof(o.hostnqn), "%s", HOSTNQN);
	snprintf(o.dhchap_secret, sizeof(o.dhchap_secret), "%s", secret);
	snprintf(o.dhchap_ctrl_secret, sizeof(o.dhchap_ctrl_secret), "%s", csecret);
	ft_trid(&t, f.port, SUBNQN);
	CHECK(nvmfd_host_ctrl_create(&o, &c) == 0, "create");
	ret = nvmfd_host_ctrl_connect(c, &t);
	printf("%s: connect %d: %s\n", sc, ret, nvmfd_host_ctrl_errmsg(c));
	if (want == 1)
		CHECK(ret == -ECONNRESET || ret == -ENOTCONN || ret == -EPIPE,
		      "connect returned %d, want a transport error (%s)", ret,
		      nvmfd_host_ctrl_errmsg(c));
	else
		CHECK(ret == want, "connect returned %d, want %d (%s)", ret, want,
		      nvmfd_host_ctrl_errmsg(c));
	CHECK(strstr(nvmfd_host_ctrl_errmsg(c), msg), "message '%s' lacks '%s'",
	      nvmfd_host_ctrl_errmsg(c), msg);
	CHECK(!strstr(nvmfd_host_ctrl_errmsg(c), "DHHC-1"), "a secret in the message");
	if (ret == 0) {
		const struct nvmfd_host_ctrl_info *ci = nvmfd_host_ctrl_get_info(c);

		CHECK(f.saw_prop && (f.authenticated_before_prop || !f.authreq),
		      "the host used the queue before authenticating");
		CHECK(ci->dhchap_queues == (f.authreq ? 1u : 0u), "dhchap_queues %u",
		      ci->dhchap_queues);
		CHECK(ci->dhchap_bidirectional == (csecret[0] != 0), "bidirectional %d",
		      ci->dhchap_bidirectional);
		if (f.hashes)
			CHECK(ci->dhchap_hash == NVMFD_AUTH_HASH_SHA512 &&
				      ci->dhchap_dhgroup == NVMFD_AUTH_DHGROUP_8192,
			      "hash %u group %u", ci->dhchap_hash, ci->dhchap_dhgroup);
		if (!strncmp(sc, "reauth-", 7))
			reauth_checks(sc, c, &f);
		else
			CHECK(nvmfd_host_ctrl_disconnect(c) == 0, "disconnect: %s",
			      nvmfd_host_ctrl_errmsg(c));
	}
	nvmfd_host_ctrl_destroy(&c);
	pthread_join(f.thread, NULL);
	close(f.lfd);
	CHECK(!f.fail[0], "fake target: %s", f.fail);
	if (!strcmp(sc, "bidi-ok") || !strcmp(sc, "dh-8192"))
		CHECK(f.got_success2, "no Success2");
	if (!strcmp(sc, "wrong-ctrl-secret"))
		CHECK(f.got_failure2, "no AUTH_Failure2 from the host");
	return 0;
}
