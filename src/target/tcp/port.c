// SPDX-License-Identifier: MIT
/*
 * port.c - the NVMe/TCP transport's ports: listen and accept, the
 * connection-setup deadlines, the release work (queue teardown ends there,
 * since a queue's io_work cannot cancel and free itself: the nvmet
 * release_work pattern), migration onto per-controller runtimes, stats, and
 * the transport type the core reaches all of this through (xprt.h).
 *
 * Accepting: a listener work item on the execution runtime watches the
 * listen socket (one-shot readiness, like any queue) and accepts up to
 * TCP_ACCEPT_BATCH connections per run, as SPDK's acceptor poller does;
 * no extra thread.
 *
 * Setup deadlines: a connection must complete ICReq within icreq_timeout_ms
 * and a successful Connect within connect_timeout_ms of accept (cfg,
 * default 10 s each: the Linux host waits 10 s for ICResp; KATO only
 * starts after Connect), or it is closed: an idle socket would otherwise
 * hold its fd and memory for ever. The target's housekeeping thread calls
 * ->check_timeouts, which only marks an expired queue (q->expired) and
 * kicks it; the queue's own io_work confirms the stage, logs, tears down.
 *
 * --wq-per-ctrl: queues are accepted on the global runtime (the controller
 * is unknown before Connect); after a successful Connect a pass ends
 * without re-arming and hands the queue to the release work, which moves
 * its io_work onto the controller's runtime (nvmfd_rt_group_get() +
 * nvmfd_rt_work_move(), src/rt). The group destroys a controller's
 * runtime when its last queue is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal/log.h"
#include "net/sock.h"
#include "target/tcp/tcp_int.h"

static struct tcp_port *tcp_port(struct nvmfd_tgt_port *p)
{
	return (struct tcp_port *)(void *)p;
}

/* ------------------------------------------------------------------ */
/* Release and migration                                               */
/* ------------------------------------------------------------------ */

/*
 * Move @q (whose last pass ended without re-arming) to its controller's
 * runtime. Context: the port's release work.
 */
static void tcp_queue_migrate(struct tcp_port *port, struct tcp_queue *q)
{
	const struct nvmfd_tgt_ctrl *ctrl = q->qp.ctrl;
	uint64_t key = ((uint64_t)(uint32_t)(ctrl->subsys->idx + 1) << 16) | ctrl->cntlid;
	struct nvmfd_rt *rt = NULL;
	int ret;

	ret = nvmfd_rt_group_get(port->ctrl_rts, key, ctrl->cntlid, &rt);
	if (ret) {
		NVMFD_WARN_RATELIMIT(TCP_COMP,
				     "queue %u qid %u: no pools for its controller (%s), staying",
				     q->id, q->qp.qid, strerror(-ret));
		rt = port->rt;
	} else {
		q->ctrl_cntlid = ctrl->cntlid;
		__atomic_store_n(&q->ctrl_rt, rt, __ATOMIC_RELEASE);
	}
	tcp_queue_move(q, rt, q->io_cpu);
}

/*
 * tcp_queue_move() - move @q's io_work to @rt on @io_cpu. No run of the
 * item may be in progress while the owner's readiness fields are reset
 * (a kick may have started one on the old pool): cancel first; the move's
 * own cancel then finds it cancelled already. The first pass on the new
 * pool re-arms readiness; a kick or a shutdown that hit the item during
 * the move is seen by that pass. A queue torn down meanwhile (DEAD) is
 * left cancelled for the release work. Context: the release work
 * (--wq-per-ctrl) or the housekeeping thread (--exec auto), never both
 * for one port (the config rejects the pair), or the target stop once
 * both are stopped (tcp_port_move_for_stop()); may sleep.
 */
void tcp_queue_move(struct tcp_queue *q, struct nvmfd_rt *rt, int io_cpu)
{
	int fds[2];

	nvmfd_rt_work_cancel_sync(&q->io_work);
	if (q->state == TCP_Q_DEAD)
		return;
	fds[0] = q->uring ? tcp_uring_watch_fd(q) : q->fd;
	fds[1] = q->ring_fd;
	q->ring_watched = false;
	q->requeued = false;
	nvmfd_rt_work_move(&q->io_work, rt, io_cpu, fds, 2);
}

/* Queue @q for migration by the release work. Context: @q's io_work.
 * The release work is queued under port->lock: the stop re-targets it
 * under that lock (tcp_port_move_for_stop()). */
void tcp_port_migrate(struct tcp_port *port, struct tcp_queue *q)
{
	pthread_mutex_lock(&port->lock);
	q->mig_next = port->migrate;
	port->migrate = q;
	nvmfd_rt_queue_work(&port->release_work);
	pthread_mutex_unlock(&port->lock);
}

/*
 * The release work: moves queues to their controller's runtime and frees
 * dead queues. Both wait (cancel_sync for a run in progress, a shared
 * ring's completion work, runtime creation), so the whole run is a
 * declared blocking section: on a bound pool another worker serves the
 * CPU's queues meanwhile (nvmfd_rt_blocking_begin()).
 */
static void tcp_release_work(struct nvmfd_work *w)
{
	struct tcp_port *port = container_of(w, struct tcp_port, release_work);
	struct tcp_queue *q;

	nvmfd_rt_blocking_begin();
	for (;;) {
		pthread_mutex_lock(&port->lock);
		q = port->migrate;
		if (q)
			port->migrate = q->mig_next;
		pthread_mutex_unlock(&port->lock);
		if (!q)
			break;
		tcp_queue_migrate(port, q);
	}
	for (;;) {
		pthread_mutex_lock(&port->lock);
		q = port->dead;
		if (!q) {
			pthread_mutex_unlock(&port->lock);
			break;
		}
		port->dead = q->dead_next;
		if (q->prev)
			q->prev->next = q->next;
		else
			port->queues = q->next;
		if (q->next)
			q->next->prev = q->prev;
		/* --exec auto: the checker may be moving it right now */
		while (q->rescuing)
			pthread_cond_wait(&port->cond, &port->lock);
		pthread_mutex_unlock(&port->lock);

		nvmfd_rt_work_cancel_sync(&q->io_work);
		tcp_queue_free(q);

		pthread_mutex_lock(&port->lock);
		port->nr_queues--;
		pthread_cond_broadcast(&port->cond);
		pthread_mutex_unlock(&port->lock);
	}
	nvmfd_rt_blocking_end();
}

/* @q is torn down: free it from the release work. Context: @q's io_work. */
void tcp_port_release(struct tcp_port *port, struct tcp_queue *q)
{
	pthread_mutex_lock(&port->lock);
	/* under the lock: the stall check looks at the socket (tcp_auto.c) */
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->dead_next = port->dead;
	port->dead = q;
	nvmfd_rt_queue_work(&port->release_work);
	pthread_mutex_unlock(&port->lock);
}

/*
 * Target stop (see target.c): move every queue's io_work and the release
 * work to the stop runtime @rt, so that no queue waits for a starved CPU
 * to drain and close. The release work is cancelled first, so neither a
 * migration nor a free races with the moves; queues waiting for migration
 * are simply moved to @rt instead. The list cannot change meanwhile: the
 * accept work is stopped and only the release work removes queues.
 * Context: ->remove_port (control thread), housekeeping stopped.
 */
static void tcp_port_move_for_stop(struct tcp_port *port, struct nvmfd_rt *rt)
{
	unsigned int moved = 0;
	struct tcp_queue *q;

	nvmfd_rt_group_unpin(port->ctrl_rts);
	nvmfd_rt_work_cancel_sync(&port->release_work);
	pthread_mutex_lock(&port->lock);
	port->migrate = NULL;
	for (q = port->queues; q; q = q->next) {
		pthread_mutex_unlock(&port->lock);
		tcp_queue_move(q, rt, q->io_cpu);
		moved++;
		pthread_mutex_lock(&port->lock);
	}
	nvmfd_work_init(&port->release_work, rt, tcp_release_work, 0);
	if (port->dead)
		nvmfd_rt_queue_work(&port->release_work);
	pthread_mutex_unlock(&port->lock);
	NVMFD_DBG(TCP_COMP, "port %u: stop: %u queues moved to the stop runtime",
		  port->cfg->portid, moved);
}

/* ------------------------------------------------------------------ */
/* Accept and setup deadlines                                          */
/* ------------------------------------------------------------------ */

/*
 * Out of file descriptors (EMFILE/ENFILE): the pending connection stays in
 * the backlog, the listener stays readable, and the accept work would run
 * again at once for ever while the host waits 10 s for an ICResp. Give up
 * the spare fd, accept the connection and close it (the host sees the close
 * at once and names the queue), take the spare back. Return: true if one
 * was shed (accept again), false if not even that worked.
 */
static bool tcp_accept_shed(struct tcp_port *port, int err)
{
	int fd;

	NVMFD_WARN_RATELIMIT(TCP_COMP, "port %u: accept: %s: closing new connections until "
			     "connections go away (raise the open-file limit: ulimit -n, "
			     "LimitNOFILE=)", port->cfg->portid, strerror(-err));
	if (port->spare_fd < 0)
		return false;
	close(port->spare_fd);
	fd = accept4(port->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		__atomic_add_fetch(&port->accept_shed, 1, __ATOMIC_RELAXED);
	}
	port->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return fd >= 0;
}

static void tcp_accept_work(struct nvmfd_work *w)
{
	struct tcp_port *port = container_of(w, struct tcp_port, accept_work);
	int i, fd, ret;

	for (i = 0; i < TCP_ACCEPT_BATCH; i++) {
		if (__atomic_load_n(&port->stopping, __ATOMIC_ACQUIRE))
			return;
		ret = nvmfd__sock_accept(port->lfd, &fd);
		if (ret == -EAGAIN)
			break;
		if (ret == -EMFILE || ret == -ENFILE) {
			__atomic_add_fetch(&port->accept_errors, 1, __ATOMIC_RELAXED);
			if (tcp_accept_shed(port, ret))
				continue;
			break;
		}
		if (ret) {
			__atomic_add_fetch(&port->accept_errors, 1, __ATOMIC_RELAXED);
			if (ret != -ECONNABORTED)
				NVMFD_WARN_RATELIMIT(TCP_COMP, "port %u: accept: %s",
						     port->cfg->portid, strerror(-ret));
			break;
		}
		__atomic_add_fetch(&port->accepted, 1, __ATOMIC_RELAXED);
		ret = tcp_queue_create(port, fd);
		if (ret) {
			if (ret != -ESHUTDOWN)
				NVMFD_WARN_RATELIMIT(TCP_COMP, "port %u: cannot set up a queue: %s",
						     port->cfg->portid, strerror(-ret));
			close(fd);
		}
	}
	if (i == TCP_ACCEPT_BATCH) {
		nvmfd_rt_queue_work(&port->accept_work);
		return;
	}
	ret = nvmfd_rt_watch_fd(&port->accept_work, port->lfd, EPOLLIN);
	if (ret)
		NVMFD_ERR(TCP_COMP, "port %u: cannot watch the listener: %s", port->cfg->portid,
			  strerror(-ret));
}

/*
 * ->check_timeouts: mark the port's connections that missed a setup
 * deadline (no ICReq within cfg icreq_timeout_ms, or no successful Connect
 * within cfg connect_timeout_ms, of accept; 0: no such deadline). Each
 * marked queue's io_work confirms, logs and tears itself down. A queue
 * whose io_work was starved (queued, not run) is not marked: that is a
 * target-side stall (tcp_auto_stalled()). With --exec auto, also the
 * watchdog and controller tick of every queue (tcp_auto.c).
 * @now_ns: CLOCK_MONOTONIC now, ns.
 * Return: queues newly marked. Context: housekeeping thread; port->lock.
 */
static unsigned int tcp_check_timeouts(struct nvmfd_tgt_port *p, uint64_t now_ns)
{
	struct tcp_port *port = tcp_port(p);
	uint64_t ic_ns = (uint64_t)port->gcfg->icreq_timeout_ms * 1000000ull;
	uint64_t conn_ns = (uint64_t)port->gcfg->connect_timeout_ms * 1000000ull;
	uint64_t tls_ns = (uint64_t)port->gcfg->tls_handshake_timeout_ms * 1000000ull;
	struct tcp_queue *q, *rescue = NULL;
	unsigned int n = 0;

	if (port->apools)
		tcp_auto_sample_pools(port, now_ns);
	pthread_mutex_lock(&port->lock);
	tcp_auto_port_tick(port, now_ns);
	for (q = port->queues; q; q = q->next) {
		int st = __atomic_load_n(&q->stage, __ATOMIC_ACQUIRE);
		uint64_t age = now_ns > q->accept_ns ? now_ns - q->accept_ns : 0;
		uint64_t pending = tcp_auto_stall_ns(
			q, nvmfd_rt_work_pending_ns(&q->io_work, now_ns), now_ns);
		int missed = -1, zero = 0;

		tcp_auto_queue_tick(q, pending, now_ns, &rescue);
		if (st == TCP_STAGE_TLS && tls_ns && age >= tls_ns)
			missed = TCP_STAGE_TLS;
		else if (st == TCP_STAGE_ACCEPTED && ic_ns && age >= ic_ns)
			missed = TCP_STAGE_ACCEPTED;
		else if (st != TCP_STAGE_CONNECTED && conn_ns && age >= conn_ns)
			missed = TCP_STAGE_IC_DONE;
		if (missed < 0 || tcp_auto_stalled(q, pending, missed))
			continue;
		/* once per mark: the owner clears it when it looked */
		if (__atomic_compare_exchange_n(&q->expired, &zero, missed + 1, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			tcp_queue_kick(q);
			n++;
		}
	}
	pthread_mutex_unlock(&port->lock);
	tcp_auto_rescue(port, rescue);
	return n;
}

/* ------------------------------------------------------------------ */
/* Port ops                                                            */
/* ------------------------------------------------------------------ */

/*
 * ->add_port: bind and listen for one configured port; trsvcid "0" binds
 * an ephemeral port (->bound_trsvcid). Return: 0, -ENOMEM, -EINVAL
 * (traddr/trsvcid not numeric), -errno from socket/bind/listen (e.g.
 * -EADDRINUSE), logged with the port.
 */
static int tcp_add_port(struct nvmfd_tgt *tgt, const struct nvmfd_cfg_port *cfg,
			struct nvmfd_tgt_port **out)
{
	struct tcp_port *port;
	int ret;

	port = calloc(1, sizeof(*port));
	if (!port)
		return -ENOMEM;
	port->tgt = tgt;
	port->cfg = cfg;
	port->gcfg = nvmfd__tgt_cfg(tgt);
	port->lfd = -1;
	port->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ret = nvmfd__sock_listen(cfg->traddr, cfg->trsvcid, NVMFD_SOCK_BACKLOG, &port->lfd,
				 &port->bound);
	if (ret) {
		NVMFD_ERR(TCP_COMP, strchr(cfg->traddr, ':') ? "port %u [%s]:%s: %s" : "port %u %s:%s: %s",
			  cfg->portid, cfg->traddr, cfg->trsvcid,
			  strerror(-ret));
		goto out_free;
	}
	ret = -pthread_mutex_init(&port->lock, NULL);
	if (ret)
		goto out_close;
	ret = -pthread_cond_init(&port->cond, NULL);
	if (ret)
		goto out_destroy_lock;
	ret = tcp_uring_port_init(port); /* --net uring: can this kernel? */
	if (ret)
		goto out_destroy_cond;
	if (port->gcfg->exec.wq_per_ctrl) {
		ret = nvmfd_rt_group_create(&port->gcfg->exec.rt, "nvmfc", &port->ctrl_rts);
		if (ret)
			goto out_destroy_cond;
	}
	ret = tcp_auto_port_init(port);
	if (ret)
		goto out_destroy_cond;
	ret = tcp_tls_port_init(port);
	if (ret) {
		tcp_auto_port_fini(port);
		goto out_destroy_cond;
	}
	NVMFD_INFO(TCP_COMP,
		   strchr(cfg->traddr, ':') ? "port %u listening on [%s]:%u" :
					      "port %u listening on %s:%u",
		   cfg->portid, cfg->traddr, port->bound);
	*out = (struct nvmfd_tgt_port *)(void *)port;
	return 0;

out_destroy_cond:
	nvmfd_rt_group_destroy(&port->ctrl_rts);
	pthread_cond_destroy(&port->cond);
out_destroy_lock:
	pthread_mutex_destroy(&port->lock);
out_close:
	close(port->lfd);
out_free:
	if (port->spare_fd >= 0)
		close(port->spare_fd);
	free(port);
	return ret;
}

/* ->start_port: accept on the target's runtime. Return: 0, -EALREADY,
 * -EINVAL (no runtime yet), -errno from nvmfd_rt_watch_fd(). */
static int tcp_start_port(struct nvmfd_tgt_port *p)
{
	struct tcp_port *port = tcp_port(p);
	struct nvmfd_rt *own;
	int ret;

	if (port->started)
		return -EALREADY;
	port->rt = nvmfd__tgt_rt(port->tgt);
	if (!port->rt)
		return -EINVAL;
	/* --exec auto: the port's own work runs unbound, so that a starved
	 * CPU cannot stop accepting and releasing */
	own = nvmfd__tgt_rt_escape(port->tgt) ?: port->rt;
	nvmfd_work_init(&port->accept_work, own, tcp_accept_work, 0);
	nvmfd_work_init(&port->release_work, own, tcp_release_work, 0);
	ret = nvmfd_rt_watch_fd(&port->accept_work, port->lfd, EPOLLIN);
	if (ret) {
		NVMFD_ERR(TCP_COMP, "port %u: cannot watch the listener: %s", port->cfg->portid,
			  strerror(-ret));
		return ret;
	}
	port->started = true;
	return 0;
}

static uint16_t tcp_bound_trsvcid(const struct nvmfd_tgt_port *p)
{
	return p ? ((const struct tcp_port *)(const void *)p)->bound : 0;
}

/*
 * ->remove_port: stop accepting, move the queues to the stop runtime when
 * there is one (target stop), shut every queue down, wait until they are
 * released, close the listener, free. Context: control thread, never a
 * runtime worker; the runtime must still run if the port was started.
 */
static void tcp_remove_port(struct nvmfd_tgt_port *p)
{
	struct tcp_port *port = tcp_port(p);
	struct tcp_queue *q;

	if (!port)
		return;
	__atomic_store_n(&port->stopping, 1, __ATOMIC_RELEASE);
	if (port->started) {
		nvmfd_rt_unwatch_fd(&port->accept_work, port->lfd);
		nvmfd_rt_work_cancel_sync(&port->accept_work);
		nvmfd_rt_unwatch_fd(&port->accept_work, port->lfd);
		pthread_mutex_lock(&port->lock);
		for (q = port->queues; q; q = q->next)
			tcp_queue_shutdown(q);
		pthread_mutex_unlock(&port->lock);
		/* shut down first: a moved queue's first pass closes it */
		if (nvmfd__tgt_rt_stop(port->tgt))
			tcp_port_move_for_stop(port, nvmfd__tgt_rt_stop(port->tgt));
		pthread_mutex_lock(&port->lock);
		while (port->nr_queues)
			pthread_cond_wait(&port->cond, &port->lock);
		pthread_mutex_unlock(&port->lock);
		nvmfd_rt_work_cancel_sync(&port->release_work);
	}
	nvmfd_rt_group_destroy(&port->ctrl_rts);
	tcp_auto_port_fini(port);
	tcp_tls_port_fini(port);
	close(port->lfd);
	if (port->spare_fd >= 0)
		close(port->spare_fd);
	pthread_cond_destroy(&port->cond);
	pthread_mutex_destroy(&port->lock);
	free(port);
}

/* ->port_stats: counters and one object per live queue. Takes port->lock. */
static json_object *tcp_port_stats(struct nvmfd_tgt_port *p)
{
	struct tcp_port *port = tcp_port(p);
	json_object *o = json_object_new_object(), *qs;

	if (!o)
		return NULL;
	json_object_object_add(o, "portid", json_object_new_int(port->cfg->portid));
	json_object_object_add(o, "traddr", json_object_new_string(port->cfg->traddr));
	json_object_object_add(o, "trsvcid", json_object_new_int(port->bound));
	json_object_object_add(o, "accepted", json_object_new_uint64(__atomic_load_n(
						      &port->accepted, __ATOMIC_RELAXED)));
	json_object_object_add(o, "accept_errors", json_object_new_uint64(__atomic_load_n(
							   &port->accept_errors, __ATOMIC_RELAXED)));
	json_object_object_add(o, "accept_shed", json_object_new_uint64(__atomic_load_n(
							 &port->accept_shed, __ATOMIC_RELAXED)));
	qs = json_object_new_array();
	pthread_mutex_lock(&port->lock);
	json_object_object_add(o, "nr_queues", json_object_new_int((int)port->nr_queues));
	for (struct tcp_queue *q = port->queues; q && qs; q = q->next)
		json_object_array_add(qs, tcp_queue_json(q));
	pthread_mutex_unlock(&port->lock);
	json_object_object_add(o, "queues", qs);
	json_object_object_add(o, "shared_rings", nvmfd__tgt_shared_rings_json(port->tgt));
	json_object_object_add(o, "ctrl_pools", port->ctrl_rts ? nvmfd_rt_group_stats_obj(
							     port->ctrl_rts, "cntlid")
						       : json_object_new_array());
	return o;
}

/* ->disc_entry: NVMe/TCP discovery log fields (doc/protocol-notes.md §2.6). */
static void tcp_disc_entry(const struct nvmfd_cfg_port *cfg, struct nvmfd_disc_log_entry *e)
{
	e->trtype = NVMFD_TRTYPE_TCP;
	/* TREQ bits 1:0 and the TCP SECTYPE say what the port does (TLS) */
	e->treq = (uint8_t)((cfg->treq & 3u) | NVMFD_TREQ_DISABLE_SQFLOW);
	e->tsas[0] = cfg->tls ? NVMFD_TCP_SECTYPE_TLS13 : NVMFD_TCP_SECTYPE_NONE;
}

static const struct nvmfd_tgt_xprt_type tcp_xprt_type = {
	.name = "tcp",
	.trtype = NVMFD_TRTYPE_TCP,
	.add_port = tcp_add_port,
	.start_port = tcp_start_port,
	.remove_port = tcp_remove_port,
	.bound_trsvcid = tcp_bound_trsvcid,
	.check_timeouts = tcp_check_timeouts,
	.port_stats = tcp_port_stats,
	.disc_entry = tcp_disc_entry,
};

NVMFD_TGT_XPRT_REGISTER(tcp_xprt_type)
