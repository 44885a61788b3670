// SPDX-License-Identifier: MIT
/*
 * test_nvmfd_e2e.c - the nvmfd binary, configured only by flags, as a host
 * sees it: run it as a child on 127.0.0.1 port 0, connect with the host
 * library and check that every flag reached the wire (serial, model, MDTS,
 * MAXH2CDATA, queue size, namespaces and their sizes, host access control,
 * discovery), then SIGTERM it and expect exit status 0.
 *
 * Usage: test_nvmfd_e2e PATH-TO-NVMFD. Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "nvmfd/host.h"
#include "nvmfd/spec.h"

#define NQN_E2E "nqn.2026-11.io.nvmfd:e2e"
#define NQN_OPEN "nqn.2026-11.io.nvmfd:open"
#define HOST_OK "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000aa"
#define HOST_BAD "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000bb"

static int failures;
static pid_t child = -1;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	va_start(ap, fmt);
	fputs("FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

static void die(const char *msg)
{
	fprintf(stderr, "FAIL: %s\n", msg);
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

/* Start nvmfd; return the stderr pipe (read end). */
static int spawn(const char *nvmfd, char *const argv[])
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		dup2(p[1], STDERR_FILENO);
		execv(nvmfd, argv);
		_exit(127);
	}
	close(p[1]);
	return p[0];
}

/* Read the child's stderr until the listening line of port 1; 10 s bound. */
static unsigned int wait_listen_port(int fd, char *log, size_t len)
{
	size_t n = 0;
	const char *key = "[nvmfd] INFO: listening on 127.0.0.1:";

	log[0] = '\0';
	for (int i = 0; i < 100; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *at;

		if (poll(&pfd, 1, 100) > 0) {
			ssize_t r = read(fd, log + n, len - 1 - n);

			if (r <= 0)
				break;
			n += (size_t)r;
			log[n] = '\0';
		}
		at = strstr(log, key);
		if (at && strchr(at, '\n'))
			return (unsigned int)strtoul(at + strlen(key), NULL, 10);
	}
	fprintf(stderr, "nvmfd output:\n%s\n", log);
	die("nvmfd did not report listening");
	return 0;
}

static int connect_ctrl(unsigned int port, const char *subnqn, const char *hostnqn,
			struct nvmfd_host_ctrl **out)
{
	struct nvmfd_host_ctrl_opts opts;
	struct nvmfd_host_trid trid = { 0 };
	int ret;

	nvmfd_host_ctrl_opts_init(&opts, sizeof(opts));
	snprintf(opts.hostnqn, sizeof(opts.hostnqn), "%s", hostnqn);
	opts.timeout_ms = 5000;
	opts.io_queue_size = 128; /* the target must clamp it to --max-queue-size */
	opts.kato_ms = subnqn[0] ? 5000 : 0;
	trid.trtype = NVMFD_TRTYPE_TCP;
	trid.adrfam = NVMFD_ADRFAM_IPV4;
	snprintf(trid.traddr, sizeof(trid.traddr), "127.0.0.1");
	snprintf(trid.trsvcid, sizeof(trid.trsvcid), "%u", port);
	snprintf(trid.subnqn, sizeof(trid.subnqn), "%s", subnqn);
	ret = nvmfd_host_ctrl_create(&opts, out);
	if (ret)
		return ret;
	ret = nvmfd_host_ctrl_connect(*out, &trid);
	if (ret)
		fprintf(stderr, "connect %s as %s: %s (%s)\n", subnqn[0] ? subnqn : "discovery",
			hostnqn, strerror(-ret), nvmfd_host_ctrl_errmsg(*out));
	return ret;
}

static void check_e2e(unsigned int port)
{
	const struct nvmfd_host_ctrl_info *info;
	const struct nvmfd_host_ns *ns;
	struct nvmfd_host_ctrl *ctrl = NULL;
	int ret;

	ret = connect_ctrl(port, NQN_E2E, HOST_OK, &ctrl);
	check(ret == 0, "allowed host cannot connect to %s: %d", NQN_E2E, ret);
	if (ret)
		goto out;
	info = nvmfd_host_ctrl_get_info(ctrl);
	check(!strcmp(info->sn, "SN-E2E-42"), "serial '%s', want SN-E2E-42", info->sn);
	check(!strcmp(info->mn, "E2E Model"), "model '%s', want 'E2E Model'", info->mn);
	check(!strcmp(info->subnqn, NQN_E2E), "subnqn '%s'", info->subnqn);
	/* --max-io-size 256K: MDTS in units of CAP.MPSMIN (4 KiB) = 2^6 */
	check(info->mdts == 6, "mdts %u, want 6 (256 KiB)", info->mdts);
	check(info->maxh2cdata == 65536, "maxh2cdata %u, want 65536", info->maxh2cdata);
	/* --max-queue-size 32: CAP.MQES = 31, the host clamps to 32 entries */
	check((info->cap & 0xffff) == 31, "CAP.MQES %llu, want 31",
	      (unsigned long long)(info->cap & 0xffff));
	check(info->io_queue_size == 32, "io queue size %u, want 32", info->io_queue_size);
	check(nvmfd_host_ctrl_ns_count(ctrl) == 2, "%u namespaces, want 2",
	      nvmfd_host_ctrl_ns_count(ctrl));
	ns = nvmfd_host_ctrl_find_ns(ctrl, 1);
	check(ns && ns->lba_size == 512 && ns->nsze == (8u << 20) / 512,
	      "nsid 1: lba %u nsze %llu, want 512 / 16384", ns ? ns->lba_size : 0,
	      ns ? (unsigned long long)ns->nsze : 0ull);
	ns = nvmfd_host_ctrl_find_ns(ctrl, 5);
	check(ns && ns->lba_size == 4096 && ns->nsze == (1ull << 30) / 4096,
	      "nsid 5: lba %u nsze %llu, want 4096 / 262144", ns ? ns->lba_size : 0,
	      ns ? (unsigned long long)ns->nsze : 0ull);
out:
	nvmfd_host_ctrl_destroy(&ctrl);

	/* --allow-host: any other host is refused */
	ret = connect_ctrl(port, NQN_E2E, HOST_BAD, &ctrl);
	check(ret == -EREMOTEIO, "host not in --allow-host: connect returned %d, want -EREMOTEIO",
	      ret);
	nvmfd_host_ctrl_destroy(&ctrl);
}

static void check_open(unsigned int port)
{
	const struct nvmfd_host_ctrl_info *info;
	struct nvmfd_host_ctrl *ctrl = NULL;
	char sn[21];
	int ret;

	/* --allow-any-host on the second subsystem; defaults for SN and MN */
	ret = connect_ctrl(port, NQN_OPEN, HOST_BAD, &ctrl);
	check(ret == 0, "any host cannot connect to %s: %d", NQN_OPEN, ret);
	if (!ret) {
		info = nvmfd_host_ctrl_get_info(ctrl);
		nvmfd_cfg_serial_from_nqn(NQN_OPEN, sn);
		check(!strcmp(info->sn, sn), "default serial '%s', want '%s'", info->sn, sn);
		check(!strcmp(info->mn, "nvmfd"), "default model '%s'", info->mn);
		check(nvmfd_host_ctrl_ns_count(ctrl) == 1, "%u namespaces in %s, want 1",
		      nvmfd_host_ctrl_ns_count(ctrl), NQN_OPEN);
	}
	nvmfd_host_ctrl_destroy(&ctrl);
}

static void check_discovery(unsigned int port)
{
	struct nvmfd_disc_log_entry *e = NULL;
	struct nvmfd_disc_log_hdr hdr;
	struct nvmfd_host_ctrl *ctrl = NULL;
	bool seen_open = false;
	char svc[8];
	int ret;

	ret = connect_ctrl(port, "", HOST_OK, &ctrl);
	check(ret == 0, "discovery connect: %d", ret);
	if (ret)
		goto out;
	ret = nvmfd_host_discover(ctrl, &hdr, &e);
	check(ret == 0, "discover: %d", ret);
	if (ret)
		goto out;
	snprintf(svc, sizeof(svc), "%u", port);
	for (uint64_t i = 0; i < hdr.numrec; i++) {
		char nqn[NVMFD_NQN_SIZE + 1], tsvc[33];

		memcpy(nqn, e[i].subnqn, NVMFD_NQN_SIZE);
		nqn[NVMFD_NQN_SIZE] = '\0';
		memcpy(tsvc, e[i].trsvcid, 32);
		tsvc[32] = '\0';
		tsvc[strcspn(tsvc, " ")] = '\0';
		if (!strcmp(nqn, NQN_OPEN)) {
			seen_open = true;
			check(e[i].portid == 1, "discovery portid %u, want 1", e[i].portid);
			check(!strcmp(tsvc, svc), "discovery trsvcid '%s', want '%s'", tsvc, svc);
		}
	}
	check(seen_open, "%s not in the discovery log (%llu records)", NQN_OPEN,
	      (unsigned long long)hdr.numrec);
out:
	free(e);
	nvmfd_host_ctrl_destroy(&ctrl);
}

int main(int argc, char **argv)
{
	char log[16384];
	char *args[] = {
		argv[1], "-l", "127.0.0.1:0", "--max-io-size", "256K", "--maxh2cdata", "64K",
		"--max-queue-size", "32",
		"-s", NQN_E2E, "-n", "ram:8M", "-n", "null:1G,bs=4096,nsid=5",
		"--serial", "SN-E2E-42", "--model", "E2E Model", "--allow-host", HOST_OK,
		"-s", NQN_OPEN, "-n", "ram:1M", "--allow-any-host",
		NULL,
	};
	unsigned int port;
	int fd, status;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-NVMFD\n", argv[0]);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	fd = spawn(argv[1], args);
	port = wait_listen_port(fd, log, sizeof(log));
	check(port > 0 && port < 65536, "listen port %u", port);

	check_e2e(port);
	check_open(port);
	check_discovery(port);

	kill(child, SIGTERM);
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(child, &status, WNOHANG);

		if (r == child) {
			child = -1;
			break;
		}
		usleep(100 * 1000);
	}
	if (child > 0)
		die("nvmfd did not exit within 10 s of SIGTERM");
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nvmfd exit status 0x%x", status);
	close(fd);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("nvmfd end-to-end checks passed\n");
	return 0;
}
