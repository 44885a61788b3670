// SPDX-License-Identifier: MIT
/*
 * trid.c - pure helpers of the host library: transport ID strings, the
 * default host NQN and NVMe status names.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <nvmfd/host.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int copy_val(char *dst, size_t dlen, const char *v, size_t vlen)
{
	if (vlen == 0 || vlen >= dlen)
		return -EINVAL;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 0;
}

/*
 * Store a traddr value: "[V6ADDR]" (the URL form) loses its brackets and
 * marks the address IPv6; a bare address containing ':' is IPv6 too.
 * Return 0, 1 if the address is IPv6, or -EINVAL (message in @err).
 */
static int set_traddr(struct nvmfd_host_trid *trid, const char *v, size_t vlen, char *err,
		      size_t errlen)
{
	if (v[0] == '[') {
		const char *close = memchr(v, ']', vlen);

		if (!close) {
			set_err(err, errlen, "traddr '%s': missing ']' after the IPv6 address", v);
			return -EINVAL;
		}
		if (close != v + vlen - 1) {
			set_err(err, errlen, "traddr '%s': nothing may follow ']' (give the port "
				"as trsvcid:PORT)", v);
			return -EINVAL;
		}
		if (close == v + 1 || !memchr(v, ':', vlen)) {
			set_err(err, errlen, "traddr '%s': brackets must hold an IPv6 address", v);
			return -EINVAL;
		}
		if (copy_val(trid->traddr, sizeof(trid->traddr), v + 1, vlen - 2)) {
			set_err(err, errlen, "traddr '%s' too long", v);
			return -EINVAL;
		}
		return 1;
	}
	if (memchr(v, ']', vlen)) {
		set_err(err, errlen, "traddr '%s': ']' without '['", v);
		return -EINVAL;
	}
	if (copy_val(trid->traddr, sizeof(trid->traddr), v, vlen)) {
		set_err(err, errlen, "traddr '%s' too long", v);
		return -EINVAL;
	}
	return memchr(v, ':', vlen) ? 1 : 0;
}

int nvmfd_host_trid_parse(const char *str, struct nvmfd_host_trid *trid, char *err,
			  size_t errlen)
{
	const char *p = str;
	bool adrfam_given = false, v6_addr = false;
	int ret;

	if (!str || !trid)
		return -EINVAL;
	memset(trid, 0, sizeof(*trid));
	trid->trtype = NVMFD_TRTYPE_TCP;
	trid->adrfam = NVMFD_ADRFAM_IPV4;
	snprintf(trid->trsvcid, sizeof(trid->trsvcid), "%u", NVMFD_TCP_DEFAULT_PORT);
	for (;;) {
		const char *tok, *colon, *val;
		char key[16], v[NVMFD_NQN_SIZE];
		size_t tlen, klen, vlen;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		tlen = (size_t)(p - tok);
		/* "key=value" is accepted too, as SPDK does: split at the first
		 * ':' or '=' (an IPv6 traddr may contain more colons). */
		colon = memchr(tok, ':', tlen);
		{
			const char *eq = memchr(tok, '=', tlen);

			if (eq && (!colon || eq < colon))
				colon = eq;
		}
		if (!colon) {
			char t[64];

			snprintf(t, sizeof(t), "%.*s", (int)(tlen < 60 ? tlen : 60), tok);
			set_err(err, errlen, "malformed token '%s' (want key:value)", t);
			return -EINVAL;
		}
		klen = (size_t)(colon - tok);
		val = colon + 1;
		vlen = tlen - klen - 1;
		if (klen == 0 || klen >= sizeof(key)) {
			set_err(err, errlen, "bad key in '%s'", str);
			return -EINVAL;
		}
		memcpy(key, tok, klen);
		key[klen] = '\0';
		if (vlen == 0 || vlen >= sizeof(v)) {
			set_err(err, errlen, "empty or too long value for key '%s'", key);
			return -EINVAL;
		}
		memcpy(v, val, vlen);
		v[vlen] = '\0';
		if (!strcasecmp(key, "trtype")) {
			if (strcasecmp(v, "tcp")) {
				set_err(err, errlen, "unsupported trtype '%s' (only TCP)", v);
				return -EINVAL;
			}
			trid->trtype = NVMFD_TRTYPE_TCP;
		} else if (!strcasecmp(key, "adrfam")) {
			adrfam_given = true;
			if (!strcasecmp(v, "ipv4")) {
				trid->adrfam = NVMFD_ADRFAM_IPV4;
			} else if (!strcasecmp(v, "ipv6")) {
				trid->adrfam = NVMFD_ADRFAM_IPV6;
			} else {
				set_err(err, errlen, "unsupported adrfam '%s'", v);
				return -EINVAL;
			}
		} else if (!strcasecmp(key, "traddr")) {
			ret = set_traddr(trid, v, vlen, err, errlen);
			if (ret < 0)
				return ret;
			v6_addr = ret == 1;
		} else if (!strcasecmp(key, "trsvcid")) {
			for (size_t i = 0; i < vlen; i++) {
				if (!isdigit((unsigned char)v[i])) {
					set_err(err, errlen, "trsvcid '%s' is not a port number", v);
					return -EINVAL;
				}
			}
			if (copy_val(trid->trsvcid, sizeof(trid->trsvcid), v, vlen) ||
			    atoi(v) <= 0 || atoi(v) > 65535) {
				set_err(err, errlen, "trsvcid '%s' out of range", v);
				return -EINVAL;
			}
		} else if (!strcasecmp(key, "subnqn")) {
			if (copy_val(trid->subnqn, sizeof(trid->subnqn), v, vlen)) {
				set_err(err, errlen, "subnqn too long");
				return -EINVAL;
			}
		} else if (!strcasecmp(key, "hostnqn")) {
			if (copy_val(trid->hostnqn, sizeof(trid->hostnqn), v, vlen)) {
				set_err(err, errlen, "hostnqn too long");
				return -EINVAL;
			}
		} else {
			set_err(err, errlen, "unknown key '%s'", key);
			return -EINVAL;
		}
	}
	if (!trid->traddr[0]) {
		set_err(err, errlen, "missing traddr in '%s'", str);
		return -EINVAL;
	}
	if (v6_addr) {
		if (adrfam_given && trid->adrfam != NVMFD_ADRFAM_IPV6) {
			set_err(err, errlen, "traddr '%s' is an IPv6 address but adrfam is IPv4",
				trid->traddr);
			return -EINVAL;
		}
		trid->adrfam = NVMFD_ADRFAM_IPV6;
	}
	return 0;
}

int nvmfd_host_default_hostnqn(char *buf, size_t len)
{
	static const char prefix[] = "nqn.2014-08.org.nvmexpress:uuid:";
	uint8_t u[16];
	FILE *f;
	int n;

	f = fopen("/etc/nvme/hostnqn", "re");
	if (f) {
		char line[NVMFD_NQN_SIZE + 2];

		if (fgets(line, sizeof(line), f)) {
			size_t l = strcspn(line, "\r\n");

			line[l] = '\0';
			if (l > 0 && l < NVMFD_NQN_SIZE && !strncmp(line, "nqn.", 4)) {
				fclose(f);
				if (l >= len)
					return -ENOSPC;
				memcpy(buf, line, l + 1);
				return 0;
			}
		}
		fclose(f);
	}
	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		for (size_t i = 0; i < sizeof(u); i++)
			u[i] = (uint8_t)((uint64_t)ts.tv_nsec >> (i % 8) ^ (uint64_t)getpid() >> i);
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* RFC 4122 version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* variant 10 */
	n = snprintf(buf, len,
		     "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		     prefix, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
		     u[11], u[12], u[13], u[14], u[15]);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}

const char *nvmfd_host_status_str(nvmfd_status_t status, bool fabrics, char *buf, size_t len)
{
	uint8_t sct = NVMFD_STATUS_SCT(status), sc = NVMFD_STATUS_SC(status);

	if (sct == NVMFD_SCT_GENERIC) {
		switch (sc) {
		case NVMFD_SC_SUCCESS:
			return "SUCCESS";
		case NVMFD_SC_INVALID_OPCODE:
			return "INVALID_OPCODE";
		case NVMFD_SC_INVALID_FIELD:
			return "INVALID_FIELD";
		case NVMFD_SC_CMDID_CONFLICT:
			return "CMDID_CONFLICT";
		case NVMFD_SC_DATA_XFER_ERROR:
			return "DATA_XFER_ERROR";
		case NVMFD_SC_POWER_LOSS:
			return "POWER_LOSS";
		case NVMFD_SC_INTERNAL:
			return "INTERNAL";
		case NVMFD_SC_ABORT_REQ:
			return "ABORT_REQ";
		case NVMFD_SC_ABORT_SQ_DELETED:
			return "ABORT_SQ_DELETED";
		case NVMFD_SC_INVALID_NS:
			return "INVALID_NS";
		case NVMFD_SC_CMD_SEQ_ERROR:
			return "CMD_SEQ_ERROR";
		case NVMFD_SC_SGL_INVALID_LAST:
			return "SGL_INVALID_LAST";
		case NVMFD_SC_SGL_INVALID_COUNT:
			return "SGL_INVALID_COUNT";
		case NVMFD_SC_SGL_INVALID_DATA:
			return "SGL_INVALID_DATA";
		case NVMFD_SC_SGL_INVALID_METADATA:
			return "SGL_INVALID_METADATA";
		case NVMFD_SC_SGL_INVALID_TYPE:
			return "SGL_INVALID_TYPE";
		case NVMFD_SC_SGL_INVALID_OFFSET:
			return "SGL_INVALID_OFFSET";
		case NVMFD_SC_HOST_ID_INCONSIST:
			return "HOST_ID_INCONSIST";
		case NVMFD_SC_KA_TIMEOUT_EXPIRED:
			return "KA_TIMEOUT_EXPIRED";
		case NVMFD_SC_KA_TIMEOUT_INVALID:
			return "KA_TIMEOUT_INVALID";
		case NVMFD_SC_TRANSIENT_TR_ERROR:
			return "TRANSIENT_TRANSPORT_ERROR";
		case NVMFD_SC_LBA_RANGE:
			return "LBA_RANGE";
		case NVMFD_SC_CAP_EXCEEDED:
			return "CAP_EXCEEDED";
		case NVMFD_SC_NS_NOT_READY:
			return "NS_NOT_READY";
		default:
			break;
		}
	} else if (sct == NVMFD_SCT_CMD_SPECIFIC) {
		if (fabrics) {
			switch (sc) {
			case NVMFD_SC_CONNECT_FORMAT:
				return "CONNECT_FORMAT";
			case NVMFD_SC_CONNECT_CTRL_BUSY:
				return "CONNECT_CTRL_BUSY";
			case NVMFD_SC_CONNECT_INVALID_PARAM:
				return "CONNECT_INVALID_PARAM";
			case NVMFD_SC_CONNECT_RESTART_DISC:
				return "CONNECT_RESTART_DISC";
			case NVMFD_SC_CONNECT_INVALID_HOST:
				return "CONNECT_INVALID_HOST";
			default:
				break;
			}
		}
		switch (sc) {
		case NVMFD_SC_INVALID_QID:
			return "INVALID_QID";
		case NVMFD_SC_INVALID_QSIZE:
			return "INVALID_QSIZE";
		case NVMFD_SC_ABORT_LIMIT:
			return "ABORT_LIMIT";
		case NVMFD_SC_ASYNC_LIMIT:
			return "ASYNC_LIMIT";
		case NVMFD_SC_INVALID_LOG_PAGE:
			return "INVALID_LOG_PAGE";
		case NVMFD_SC_FEATURE_NOT_SAVEABLE:
			return "FEATURE_NOT_SAVEABLE";
		case NVMFD_SC_FEATURE_NOT_CHANGEABLE:
			return "FEATURE_NOT_CHANGEABLE";
		case NVMFD_SC_AUTH_REQUIRED:
			/* any command on a queue that has not authenticated */
			return "AUTH_REQUIRED";
		default:
			break;
		}
	} else if (sct == NVMFD_SCT_MEDIA) {
		switch (sc) {
		case NVMFD_SC_WRITE_FAULT:
			return "WRITE_FAULT";
		case NVMFD_SC_READ_ERROR:
			return "READ_ERROR";
		case NVMFD_SC_COMPARE_FAILED:
			return "COMPARE_FAILED";
		case NVMFD_SC_ACCESS_DENIED:
			return "ACCESS_DENIED";
		default:
			break;
		}
	}
	if (buf && len) {
		snprintf(buf, len, "SCT 0x%x SC 0x%02x", sct, sc);
		return buf;
	}
	return "UNKNOWN";
}
