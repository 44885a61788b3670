// SPDX-License-Identifier: MIT
/*
 * tcp-floor.c - the latency floor of one NVMe/TCP-sized exchange over
 * loopback on this machine, without any NVMe: a "host" thread on CPU 1
 * sends 72 bytes (a CapsuleCmd) and waits for 4144 bytes (C2HData header,
 * 4 KiB, CapsuleResp); a "target" thread on CPU 0 waits in epoll_wait()
 * (edge-triggered) or spins on recv(), reads the 72 bytes and answers
 * with one send(). Prints the round-trip p10/p50/p90 and the target
 * thread's CPU time per round trip. What nvmfd adds at QD1 is its
 * latency minus this floor (doc/perf.md §6).
 *
 *   cc -O2 -pthread -o /tmp/tcp-floor bench/tcp-floor.c
 *   chrt -f 5 /tmp/tcp-floor [TARGET_SPIN [HOST_SPIN [ROUND_TRIPS]]]
 *
 * TARGET_SPIN, HOST_SPIN: 0 (default) sleeps in the kernel, 1 spins on
 * non-blocking recv(). ROUND_TRIPS default 20000.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CMD_LEN 72
#define RSP_LEN (24 + 4096 + 24)

static int lfd, tgt_spin, host_spin;
static double tgt_cpu_us_per_rt;

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static uint64_t ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *target(void *arg)
{
	static char in[8192], out[RSP_LEN];
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	int one = 1, fd, ep;
	uint64_t c0, rts = 0;

	(void)arg;
	pin(0);
	fd = accept(lfd, NULL, NULL);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	c0 = ns(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		struct epoll_event o;
		ssize_t n;

		if (!tgt_spin)
			epoll_wait(ep, &o, 1, -1);
		n = recv(fd, in, sizeof(in), MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0)
			continue;
		send(fd, out, sizeof(out), 0);
		rts++;
	}
	tgt_cpu_us_per_rt = (double)(ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e3 / (double)(rts ?: 1);
	close(fd);
	close(ep);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	static char cmd[CMD_LEN], in[8192];
	int n = 20000, one = 1, fd;
	uint64_t *lat;
	pthread_t t;

	tgt_spin = argc > 1 && atoi(argv[1]);
	host_spin = argc > 2 && atoi(argv[2]);
	if (argc > 3)
		n = atoi(argv[3]);
	if (n < 10) {
		fprintf(stderr, "usage: %s [TARGET_SPIN [HOST_SPIN [ROUND_TRIPS >= 10]]]\n", argv[0]);
		return 2;
	}
	lat = calloc((size_t)n, sizeof(*lat));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!lat || lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0) {
		perror("tcp-floor: set-up");
		return 1;
	}
	pthread_create(&t, NULL, target, NULL);
	pin(1);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("tcp-floor: connect");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < n; i++) {
		uint64_t t0 = ns(CLOCK_MONOTONIC);
		size_t got = 0;

		if (send(fd, cmd, sizeof(cmd), 0) != sizeof(cmd)) {
			perror("tcp-floor: send");
			return 1;
		}
		while (got < RSP_LEN) {
			ssize_t r = recv(fd, in, sizeof(in), host_spin ? MSG_DONTWAIT : 0);

			if (r > 0)
				got += (size_t)r;
			else if (r == 0)
				return 1;
		}
		lat[i] = ns(CLOCK_MONOTONIC) - t0;
	}
	close(fd);
	pthread_join(t, NULL);
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	printf("target %s, host %s: round trip p10 %.1f us, p50 %.1f us, p90 %.1f us; "
	       "target CPU %.1f us per round trip\n",
	       tgt_spin ? "spins" : "sleeps in epoll_wait", host_spin ? "spins" : "sleeps in recv",
	       (double)lat[n / 10] / 1e3, (double)lat[n / 2] / 1e3, (double)lat[n * 9 / 10] / 1e3,
	       tgt_cpu_us_per_rt);
	free(lat);
	return 0;
}
