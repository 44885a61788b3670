// SPDX-License-Identifier: MIT
/* test_tcp_ipv6.c - an IPv6 listener ([::1], port 0): verify I/O over it.
 * Skips (77) when the host has no IPv6 loopback. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/sock.h"
#include "tcp_client.h"
#include "tgt_fixture.h"

static void tweak_v6(struct nvmfd_cfg *cfg)
{
	cfg->ports[0].adrfam = NVMFD_ADRFAM_IPV6;
	snprintf(cfg->ports[0].traddr, sizeof(cfg->ports[0].traddr), "::1");
}

int main(void)
{
	struct tf_target t;
	struct tc_conn c;
	uint16_t port = 0;
	char addr[80];
	int fd;

	if (nvmfd__sock_listen("::1", "0", 0, &fd, &port))
		return 77;
	TF_CHECK(port != 0);
	TF_CHECK_EQ(nvmfd__sock_local_addr(fd, addr, sizeof(addr)), 0);
	TF_CHECK(!strcmp(addr, "::1"));
	close(fd);

	TF_CHECK_EQ(tf_start(&t, tweak_v6), 0);
	TF_CHECK_EQ(tc_verify_io("::1", t.port, TF_SUBNQN, 42), 0);
	/* the peer string of an IPv6 connection is "[addr]:port" */
	TF_CHECK_EQ(tc_open(&c, "::1", t.port), 0);
	TF_CHECK_EQ(nvmfd__sock_peer_addr(c.fd, addr, sizeof(addr)), 0);
	TF_CHECK(!strncmp(addr, "[::1]:", 6));
	TF_CHECK_EQ(atoi(addr + 6), t.port);
	tc_close(&c);
	tf_stop(&t);
	return 0;
}
