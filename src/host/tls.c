// SPDX-License-Identifier: MIT
/*
 * tls.c - the host side of NVMe/TCP over TLS 1.3 with a PSK (NVMe/TCP 1.1
 * §3.6, TP 8011; doc/tls.md): each queue's TLS handshake right after its
 * TCP connect, with the identity and TLS PSK derived from the configured
 * PSK (src/auth), bounded by the connect deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "host/host_int.h"
#include "internal/auth.h"
#include "net/tls.h"

/* Identity and TLS PSK of this host and @subnqn. Return: key length or -EINVAL. */
static int host_tls_key(const struct nvmfd_host_ctrl *ctrl, const char *subnqn, char *id,
			size_t idlen, uint8_t *key, uint8_t *hash)
{
	const char *hostnqn = ctrl->opts.hostnqn;
	int ver = ctrl->opts.tls_identity == NVMFD_HOST_TLS_ID_V1 ? 1 : 0;
	struct nvmfd_auth_psk psk;
	uint8_t retained[48];
	char digest[4 * ((NVMFD_AUTH_MAX_HASH_LEN + 2) / 3) + 1];
	int rlen, n = -EINVAL;

	if (nvmfd_auth_psk_parse(ctrl->opts.tls_psk, &psk) < 0)
		return -EINVAL;
	*hash = nvmfd_auth_psk_tls_hash(&psk);
	rlen = nvmfd_auth_retained_psk(&psk, hostnqn, retained);
	if (rlen < 0)
		goto out;
	if (ver == 1 && nvmfd_auth_psk_digest(*hash, retained, (size_t)rlen, hostnqn, subnqn,
					      digest, sizeof(digest)) < 0)
		goto out;
	if (nvmfd_auth_tls_identity(ver, *hash, hostnqn, subnqn, ver ? digest : NULL, id, idlen))
		goto out;
	if (ctrl->opts.tls_identity == NVMFD_HOST_TLS_ID_SPDK)
		n = nvmfd_auth_tls_psk_spdk(*hash, retained, (size_t)rlen, id, key);
	else
		n = nvmfd_auth_tls_psk(ver, *hash, retained, (size_t)rlen, ver ? digest : NULL, key);
out:
	nvmfd_auth_wipe(&psk, sizeof(psk));
	nvmfd_auth_wipe(retained, sizeof(retained));
	return n < 0 ? -EINVAL : n;
}

static int host_tls_left_ms(uint64_t deadline)
{
	uint64_t now = nvmfd__host_now_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999ull) / 1000000ull);
}

int nvmfd__host_qp_tls(struct nvmfd_host_qp *qp, const char *subnqn, uint64_t deadline)
{
	struct nvmfd_host_ctrl *ctrl = qp->ctrl;
	char id[NVMFD_TLS_IDENTITY_MAX];
	uint8_t key[NVMFD_TLS_KEY_MAX], hash = 0;
	int n, ret;

	n = host_tls_key(ctrl, subnqn, id, sizeof(id), key, &hash);
	if (n < 0) {
		nvmfd__host_qp_seterr(qp, "cannot derive the TLS PSK and identity (host NQN %s, "
					  "subsystem %s)",
				      ctrl->opts.hostnqn, subnqn);
		return n;
	}
	ret = nvmfd_tls_new(ctrl->tls_ctx, qp->fd, false, qp, &qp->tls);
	if (!ret)
		ret = nvmfd_tls_set_psk(qp->tls, id, key, (size_t)n, hash);
	nvmfd_auth_wipe(key, sizeof(key));
	if (ret) {
		nvmfd__host_qp_seterr(qp, "cannot set TLS up: %s", strerror(-ret));
		return ret;
	}
	for (;;) {
		struct pollfd pfd = { .fd = qp->fd };
		int ms;

		ret = nvmfd_tls_handshake(qp->tls);
		if (ret != -EAGAIN)
			break;
		ms = host_tls_left_ms(deadline);
		if (ms == 0) {
			ret = -ETIMEDOUT;
			break;
		}
		pfd.events = nvmfd_tls_want_write(qp->tls) ? POLLOUT : POLLIN;
		if (poll(&pfd, 1, ms > 100 ? 100 : ms) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	if (ret == 0) {
		if (qp->qid == 0) {
			struct nvmfd_tls_info info;

			nvmfd_tls_get_info(qp->tls, &info);
			snprintf(ctrl->info.tls_cipher, sizeof(ctrl->info.tls_cipher), "%s",
				 info.cipher);
			ctrl->info.tls_ktls = info.ktls_tx || info.ktls_rx;
		}
		return 0;
	}
	if (ret == -EACCES)
		nvmfd__host_qp_seterr(qp, "TLS handshake refused: the target does not accept the "
					  "PSK (identity %s): %s",
				      id, nvmfd_tls_errstr(qp->tls));
	else if (ret == -ETIMEDOUT)
		nvmfd__host_qp_seterr(qp, "TLS handshake timed out");
	else if (ret == -ECONNRESET)
		nvmfd__host_qp_seterr(qp, "TLS handshake: connection closed by the target "
					  "(does the port take TLS?)");
	else
		nvmfd__host_qp_seterr(qp, "TLS handshake failed: %s", nvmfd_tls_errstr(qp->tls));
	return ret;
}
