// SPDX-License-Identifier: MIT
/*
 * rpc.c - the control socket (rpc.h; protocol in doc/rpc.md).
 *
 * A connection is classified by its first line: an object with "jsonrpc"
 * makes it a JSON-RPC 2.0 connection (any number of requests, one per
 * line, answered in order, until the client closes); anything else is an
 * old-style request ({"cmd":"stats"} or {"cmd":"config"}): exactly one
 * line, one reply, then the connection is closed, as before.
 *
 * Every method validates all of its parameters and checks every limit
 * before it changes anything, so a request that fails changes nothing.
 * Replies are written with a 1 s send timeout: a client that does not read
 * only stalls the control thread that long, then it is dropped. When all
 * NVMFD_RPC_MAX_CLIENTS slots are taken, a new client replaces the one idle
 * longest if that one sent nothing for RPC_IDLE_EVICT_MS (connections left
 * open by stopped or leaking clients would otherwise lock everyone out).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "internal/auth.h"
#include "internal/log.h"
#include "internal/proc.h"
#include "internal/target.h"
#include "rpc.h"

#ifndef NVMFD_VERSION
#define NVMFD_VERSION "unknown"
#endif

#define LOG_COMP "rpc"
#define RPC_LINE_MAX 16384 /* bytes of one request line */
/* the first line of a connection (old-style requests are short) */
#define RPC_FIRST_LINE_MAX 4096
#define RPC_SEND_TIMEOUT_MS 1000
/* a client idle this long gives up its slot to a new one when all are taken */
#define RPC_IDLE_EVICT_MS 5000
#define RPC_API_VERSION 1

/* JSON-RPC 2.0 error codes; methods also answer -errno (as SPDK does). */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)

enum client_mode { MODE_NEW, MODE_RPC };

struct client {
	int fd; /* -1: free slot */
	enum client_mode mode;
	uint64_t active_ns; /* accepted or last received bytes, nvmfd__mono_ns() */
	size_t len;
	char buf[RPC_LINE_MAX];
};

struct nvmfd_rpc {
	int lfd;
	struct nvmfd_tgt *tgt;
	struct nvmfd_cfg *cfg;
	/* the -c file as last read (at start, at each reload, after
	 * save_config wrote it), NULL if unknown: a reload applies to hosts,
	 * keys and PSKs only what changed in the file since, keeping what the
	 * control socket set */
	struct nvmfd_cfg *base;
	char save_path[4096];
	struct client clients[NVMFD_RPC_MAX_CLIENTS];
};

/* ---------------------------------------------------------------------- */
/* Sending                                                                */

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* client went away or timed out: nothing to report */
		buf += n;
		len -= (size_t)n;
	}
}

/* @o as one line; takes the reference. */
static void send_obj(int fd, json_object *o)
{
	const char *s;

	if (!o)
		return;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	send_all(fd, s, strlen(s));
	send_all(fd, "\n", 1);
	json_object_put(o);
}

static void legacy_error(int fd, const char *msg)
{
	json_object *o = json_object_new_object();

	if (!o)
		return;
	json_object_object_add(o, "error", json_object_new_string(msg));
	send_obj(fd, o);
}

/* Exactly one JSON value, nothing before or after it but blanks. */
static json_object *parse_line(const char *line, bool *ok)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(line), end;
	json_object *o;

	*ok = false;
	if (!tok)
		return NULL;
	o = json_tokener_parse_ex(tok, line, (int)len);
	*ok = json_tokener_get_error(tok) == json_tokener_success;
	end = (size_t)json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	end += strspn(line + end, " \t\r");
	if (*ok && end != len)
		*ok = false;
	if (!*ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* ---------------------------------------------------------------------- */
/* Helpers for the methods                                                */

struct call {
	struct nvmfd_rpc *r;
	json_object *params; /* object or NULL */
	json_object *result; /* set by the method on success */
	char msg[512]; /* error message */
};

static int fail(struct call *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct call *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* Only keys from @keys; @required ones present. */
static int check_params(struct call *c, const char *const *keys, const char *const *required)
{
	if (!c->params) {
		if (required && required[0])
			return fail(c, RPC_INVALID_PARAMS, "params: \"%s\" is required", required[0]);
		return 0;
	}
	json_object_object_foreach(c->params, k, v) {
		bool known = false;

		(void)v;
		for (size_t i = 0; keys && keys[i]; i++)
			known |= !strcmp(k, keys[i]);
		if (!known)
			return fail(c, RPC_INVALID_PARAMS, "params: unknown key \"%s\"", k);
	}
	for (size_t i = 0; required && required[i]; i++)
		if (!json_object_object_get_ex(c->params, required[i], NULL))
			return fail(c, RPC_INVALID_PARAMS, "params: \"%s\" is required", required[i]);
	return 0;
}

static int param_str(struct call *c, const char *key, const char **out)
{
	json_object *v;

	*out = NULL;
	if (!c->params || !json_object_object_get_ex(c->params, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(c, RPC_INVALID_PARAMS, "params.%s: expected a string", key);
	*out = json_object_get_string(v);
	return 0;
}

static int param_u32(struct call *c, json_object *obj, const char *key, uint32_t min, uint32_t max,
		     uint32_t *out, bool *given)
{
	json_object *v;
	int64_t n;

	*given = false;
	if (!obj || !json_object_object_get_ex(obj, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(c, RPC_INVALID_PARAMS, "%s: expected an integer", key);
	n = json_object_get_int64(v);
	if (n < min || n > max)
		return fail(c, RPC_INVALID_PARAMS, "%s: %" PRId64 " is out of range %u..%u", key, n,
			    min, max);
	*out = (uint32_t)n;
	*given = true;
	return 0;
}

/* The subsystem named by params.nqn. Return: its index or a code. */
static int find_subsys(struct call *c)
{
	const char *nqn;
	int ret = param_str(c, "nqn", &nqn);

	if (ret)
		return ret;
	if (!nqn)
		return fail(c, RPC_INVALID_PARAMS, "params: \"nqn\" is required");
	for (unsigned int i = 0; i < c->r->cfg->nr_subsys; i++)
		if (!strcmp(c->r->cfg->subsys[i].nqn, nqn))
			return (int)i;
	return fail(c, -ENODEV, "subsystem '%s' not found", nqn);
}

static bool nqn_ok(const char *s)
{
	size_t n = strlen(s);

	if (strncmp(s, "nqn.", 4) || n > 223)
		return false;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return false;
	return true;
}

/* ---------------------------------------------------------------------- */
/* Methods                                                                */

static json_object *addr_obj(const struct nvmfd_cfg_port *p, unsigned int port)
{
	json_object *a = json_object_new_object();

	json_object_object_add(a, "trtype", json_object_new_string("TCP"));
	json_object_object_add(a, "adrfam",
			       json_object_new_string(p->adrfam == NVMFD_ADRFAM_IPV6 ? "IPv6" : "IPv4"));
	char svc[16];

	json_object_object_add(a, "traddr", json_object_new_string(p->traddr));
	/* a listener given port 0 reports the port it bound */
	snprintf(svc, sizeof(svc), "%u", port);
	json_object_object_add(a, "trsvcid", json_object_new_string(port ? svc : p->trsvcid));
	return a;
}

static void fmt_uuid(const uint8_t u[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

static json_object *subsys_obj(struct nvmfd_rpc *r, unsigned int si)
{
	const struct nvmfd_cfg_subsys *s = &r->cfg->subsys[si];
	json_object *o = json_object_new_object(), *la = json_object_new_array();
	json_object *hosts = json_object_new_array(), *nss = json_object_new_array();

	json_object_object_add(o, "nqn", json_object_new_string(s->nqn));
	json_object_object_add(o, "subtype", json_object_new_string("NVMe"));
	for (unsigned int pi = 0; pi < r->cfg->nr_ports; pi++) {
		const struct nvmfd_cfg_port *p = &r->cfg->ports[pi];

		for (unsigned int k = 0; k < p->nr_subsys; k++)
			if (p->subsys_idx[k] == si)
				json_object_array_add(la, addr_obj(p, nvmfd_tgt_listen_port(r->tgt, pi)));
	}
	json_object_object_add(o, "listen_addresses", la);
	json_object_object_add(o, "allow_any_host", json_object_new_boolean(s->allow_any_host));
	for (unsigned int i = 0; i < s->nr_hosts; i++) {
		json_object *h = json_object_new_object();

		json_object_object_add(h, "nqn", json_object_new_string(s->hosts[i]));
		json_object_array_add(hosts, h);
	}
	json_object_object_add(o, "hosts", hosts);
	json_object_object_add(o, "serial_number", json_object_new_string(s->serial));
	json_object_object_add(o, "model_number", json_object_new_string(s->model));
	json_object_object_add(o, "max_namespaces", json_object_new_int(NVMFD_CFG_MAX_NS));
	for (unsigned int i = 0; i < s->nr_ns; i++) {
		const struct nvmfd_cfg_ns *ns = &s->ns[i];
		json_object *n = json_object_new_object();

		json_object_object_add(n, "nsid", json_object_new_int64(ns->nsid));
		/* SPDK's key for the backing; nvmfd's spec ("file:/x", "ram:1G") */
		json_object_object_add(n, "bdev_name", json_object_new_string(ns->path));
		json_object_object_add(n, "enable", json_object_new_boolean(ns->enable));
		if (ns->has_uuid) {
			char u[37];

			fmt_uuid(ns->uuid, u);
			json_object_object_add(n, "uuid", json_object_new_string(u));
		}
		json_object_array_add(nss, n);
	}
	json_object_object_add(o, "namespaces", nss);
	return o;
}

static int m_get_subsystems(struct call *c)
{
	static const char *const keys[] = { "nqn", NULL };
	json_object *arr;
	const char *nqn;
	int ret;

	ret = check_params(c, keys, NULL);
	if (ret || (ret = param_str(c, "nqn", &nqn)))
		return ret;
	if (nqn && find_subsys(c) < 0)
		return find_subsys(c);
	arr = json_object_new_array();
	if (!nqn || !strcmp(nqn, NVMFD_DISC_NQN)) {
		json_object *d = json_object_new_object(), *la = json_object_new_array();

		json_object_object_add(d, "nqn", json_object_new_string(NVMFD_DISC_NQN));
		json_object_object_add(d, "subtype", json_object_new_string("Discovery"));
		for (unsigned int pi = 0; pi < c->r->cfg->nr_ports; pi++)
			json_object_array_add(la, addr_obj(&c->r->cfg->ports[pi],
							   nvmfd_tgt_listen_port(c->r->tgt, pi)));
		json_object_object_add(d, "listen_addresses", la);
		json_object_object_add(d, "allow_any_host", json_object_new_boolean(true));
		json_object_object_add(d, "hosts", json_object_new_array());
		if (!nqn)
			json_object_array_add(arr, d);
		else
			json_object_put(d);
	}
	for (unsigned int i = 0; i < c->r->cfg->nr_subsys; i++)
		if (!nqn || !strcmp(nqn, c->r->cfg->subsys[i].nqn))
			json_object_array_add(arr, subsys_obj(c->r, i));
	c->result = arr;
	return 0;
}

/* The running config with the listeners' bound ports (trsvcid "0");
 * inline DH-HMAC-CHAP secrets only with @secrets (a 0600 file), else
 * redacted (see nvmfd_cfg_write_json_ex()). */
static int write_config(struct nvmfd_rpc *r, FILE *out, bool secrets)
{
	struct nvmfd_cfg *copy = malloc(sizeof(*copy));
	int ret;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, r->cfg, sizeof(*copy));
	for (unsigned int i = 0; i < copy->nr_ports; i++) {
		unsigned int port = nvmfd_tgt_listen_port(r->tgt, i);

		if (port)
			snprintf(copy->ports[i].trsvcid, sizeof(copy->ports[i].trsvcid), "%u", port);
	}
	ret = nvmfd_cfg_write_json_ex(copy, out, secrets);
	nvmfd_auth_wipe(copy->host_dhchap, sizeof(copy->host_dhchap));
	free(copy);
	return ret;
}

/* Text of write_config() (NUL-terminated; free()). */
static int config_text(struct nvmfd_rpc *r, char **out, size_t *len, bool secrets)
{
	FILE *mem = open_memstream(out, len);
	int ret;

	if (!mem)
		return -ENOMEM;
	ret = write_config(r, mem, secrets);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

/* Write @text to @path through a temporary file in the same directory
 * (mode 0600: configs may carry secrets), fsync, rename over @path, fsync
 * the directory. Return: 0 or -errno (@path untouched then). */
static int write_atomic(const char *path, const char *text, size_t len)
{
	char tmp[4200], dir[4200], real[PATH_MAX];
	int fd, dfd, ret = 0;
	size_t off = 0;

	/* a symbolic link (say /etc/nvmfd/nvmfd.json -> a managed file) keeps
	 * pointing at the file it names: the rename replaces that file, not
	 * the link */
	if (realpath(path, real))
		path = real;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0)
		ret = -errno;
	while (!ret && off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = -errno;
		else
			off += (size_t)n;
	}
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return ret;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* Free a loaded config, its secrets wiped. */
static void cfg_free(struct nvmfd_cfg *n)
{
	if (!n)
		return;
	nvmfd_auth_wipe(n->host_dhchap, sizeof(n->host_dhchap));
	nvmfd_auth_wipe(n->host_psk, sizeof(n->host_psk));
	nvmfd_auth_wipe(&n->psk, sizeof(n->psk));
	free(n);
}

/* @path alone, read as nvmfd reads it at start (defaults, the file, the
 * default exec mode), and validated. Return: 0 or -EINVAL (@err says). */
static int cfg_load_file(struct nvmfd_cfg *n, const char *path, char err[NVMFD_CFG_ERRLEN])
{
	nvmfd_cfg_init_defaults(n);
	if (nvmfd_cfg_load_json(n, path, err))
		return -EINVAL;
	nvmfd_cfg_exec_resolve(n);
	return nvmfd_cfg_validate(n, err) ? -EINVAL : 0;
}

/* @path as it is now, or NULL (not loadable: reloads then compare with
 * the running config only). */
static struct nvmfd_cfg *cfg_read(const char *path)
{
	struct nvmfd_cfg *n = malloc(sizeof(*n));
	char err[NVMFD_CFG_ERRLEN];

	if (!n)
		return NULL;
	if (cfg_load_file(n, path, err)) {
		cfg_free(n);
		return NULL;
	}
	return n;
}

static int m_save_config(struct call *c)
{
	static const char *const keys[] = { "filename", NULL };
	const char *path;
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = check_params(c, keys, NULL);
	if (ret || (ret = param_str(c, "filename", &path)))
		return ret;
	if (!path && c->r->save_path[0])
		path = c->r->save_path;
	/* a file is written mode 0600 (write_atomic): secrets may go there,
	 * never into a reply on the socket */
	ret = config_text(c->r, &text, &len, path != NULL);
	if (ret)
		return fail(c, ret, "cannot format the config: %s", strerror(-ret));
	if (!path) {
		/* no file: return the config itself, as SPDK's save_config */
		c->result = json_tokener_parse(text);
		free(text);
		return c->result ? 0 : fail(c, -ENOMEM, "out of memory");
	}
	ret = write_atomic(path, text, len);
	nvmfd_auth_wipe(text, len);
	free(text);
	if (ret)
		return fail(c, ret, "%s: %s", path, strerror(-ret));
	NVMFD_INFO(LOG_COMP, "configuration saved to %s", path);
	if (c->r->save_path[0] && !strcmp(path, c->r->save_path)) {
		/* the -c file now holds the running config: the next reload
		 * compares with it */
		struct nvmfd_cfg *n = cfg_read(path);

		if (n) {
			cfg_free(c->r->base);
			c->r->base = n;
		}
	}
	c->result = json_object_new_object();
	json_object_object_add(c->result, "filename", json_object_new_string(path));
	return 0;
}

static int m_get_stats(struct call *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	ret = check_params(c, NULL, NULL);
	if (ret)
		return ret;
	mem = open_memstream(&text, &len);
	if (!mem)
		return fail(c, -ENOMEM, "out of memory");
	ret = nvmfd_tgt_stats_json(c->r->tgt, mem);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (!ret)
		c->result = json_tokener_parse(text);
	free(text);
	if (ret || !c->result)
		return fail(c, ret ? ret : -ENOMEM, "statistics: %s", strerror(ret ? -ret : ENOMEM));
	return 0;
}

static int m_get_version(struct call *c)
{
	int ret = check_params(c, NULL, NULL);

	if (ret)
		return ret;
	c->result = json_object_new_object();
	json_object_object_add(c->result, "version", json_object_new_string("nvmfd " NVMFD_VERSION));
	json_object_object_add(c->result, "api_version", json_object_new_int(RPC_API_VERSION));
	return 0;
}

static int m_get_methods(struct call *c);

/* Namespaces ------------------------------------------------------------ */

/*
 * RAM namespaces together must fit in the machine's memory, the rule nvmfd
 * applies at start (nvmfd_cfg_check_ram()): refuse @grow more bytes of RAM
 * namespace on top of the running config when the sum would exceed the
 * physical memory (the mapping reserves no memory, so nothing else would
 * stop it before hosts' writes run the machine out of memory).
 * Return: 0, or -ENOMEM with c->msg set.
 */
static int ram_fits(struct call *c, uint64_t grow)
{
	uint64_t sum = nvmfd_cfg_ram_bytes(c->r->cfg), total, need;
	struct sysinfo si;

	if (!grow || sysinfo(&si))
		return 0;
	total = (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
	need = sum > UINT64_MAX - grow ? UINT64_MAX : sum + grow;
	if (need <= total)
		return 0;
	return fail(c, -ENOMEM, "ram namespaces would need %" PRIu64 " MiB together but the "
		    "machine has %" PRIu64 " MiB", need >> 20, total >> 20);
}

/* Add @cn (NSID set) to subsystem @si: target first, then the config. */
static int ns_add(struct call *c, int si, struct nvmfd_cfg_ns *cn)
{
	struct nvmfd_cfg_subsys *s = &c->r->cfg->subsys[si];
	int ret;

	for (unsigned int i = 0; i < s->nr_ns; i++)
		if (s->ns[i].nsid == cn->nsid)
			return fail(c, -EEXIST, "subsystem '%s' already has namespace %u", s->nqn,
				    cn->nsid);
	if (s->nr_ns >= NVMFD_CFG_MAX_NS)
		return fail(c, -ENOSPC, "subsystem '%s' has %d namespaces, the most", s->nqn,
			    NVMFD_CFG_MAX_NS);
	if (cn->bk.type == NVMFD_BK_RAM) {
		ret = ram_fits(c, cn->bk.size);
		if (ret)
			return ret;
	}
	ret = nvmfd_tgt_ns_add(c->r->tgt, (unsigned int)si, cn);
	if (ret == -EBUSY)
		return fail(c, ret, "%s is in use: another process exports it (or it is mounted, "
			    "or a namespace removed moments ago still drains: retry)", cn->path);
	if (ret == -ENOSPC)
		return fail(c, ret, "subsystem '%s': no free namespace slot (a removed namespace "
			    "frees its slot once its I/O drained: retry)", s->nqn);
	if (ret)
		return fail(c, ret, "%s: %s", cn->path, strerror(-ret));
	s->ns[s->nr_ns] = *cn;
	s->ns[s->nr_ns].bk.path = s->ns[s->nr_ns].path;
	s->nr_ns++;
	return 0;
}

static int m_add_ns(struct call *c)
{
	static const char *const keys[] = { "nqn", "namespace", NULL };
	static const char *const req[] = { "nqn", "namespace", NULL };
	static const char *const nkeys[] = { "bdev_name", "nsid", "uuid", "nguid", NULL };
	struct nvmfd_cfg_subsys *s;
	struct nvmfd_cfg_ns cn;
	char err[NVMFD_CFG_ERRLEN], spec[4400];
	json_object *nso, *v;
	uint32_t nsid = 0;
	bool given;
	int si, ret;

	ret = check_params(c, keys, req);
	if (ret)
		return ret;
	si = find_subsys(c);
	if (si < 0)
		return si;
	s = &c->r->cfg->subsys[si];
	json_object_object_get_ex(c->params, "namespace", &nso);
	if (!json_object_is_type(nso, json_type_object))
		return fail(c, RPC_INVALID_PARAMS, "params.namespace: expected an object");
	json_object_object_foreach(nso, k, kv) {
		bool known = false;

		(void)kv;
		for (size_t i = 0; nkeys[i]; i++)
			known |= !strcmp(k, nkeys[i]);
		if (!known)
			return fail(c, RPC_INVALID_PARAMS, "params.namespace: unknown key \"%s\"", k);
	}
	if (!json_object_object_get_ex(nso, "bdev_name", &v) ||
	    !json_object_is_type(v, json_type_string))
		return fail(c, RPC_INVALID_PARAMS,
			    "params.namespace.bdev_name: required, a namespace spec such as "
			    "\"file:/path,size=1G\", \"bdev:/dev/x\", \"ram:64M\" or \"null:1G\"");
	snprintf(spec, sizeof(spec), "%s", json_object_get_string(v));
	ret = param_u32(c, nso, "nsid", 1, 0xfffffffe, &nsid, &given);
	if (ret)
		return ret;
	/* uuid/nguid go through the spec parser, which validates them */
	for (size_t i = 2; i < 4; i++) {
		if (!json_object_object_get_ex(nso, nkeys[i], &v))
			continue;
		if (!json_object_is_type(v, json_type_string))
			return fail(c, RPC_INVALID_PARAMS, "params.namespace.%s: expected a string",
				    nkeys[i]);
		if (strchr(json_object_get_string(v), ','))
			return fail(c, RPC_INVALID_PARAMS, "params.namespace.%s: bad UUID", nkeys[i]);
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), ",%s=%s", nkeys[i],
			 json_object_get_string(v));
	}
	memset(&cn, 0, sizeof(cn));
	if (nvmfd_cfg_parse_namespace(&cn, spec, err))
		return fail(c, RPC_INVALID_PARAMS, "%s", err);
	if (given && cn.nsid && cn.nsid != nsid)
		return fail(c, RPC_INVALID_PARAMS, "nsid %u and the spec's nsid=%u differ", nsid,
			    cn.nsid);
	if (given)
		cn.nsid = nsid;
	if (cn.bk.size && nvmfd_cfg_check_ns_size(&cn, cn.bk.size, err))
		return fail(c, RPC_INVALID_PARAMS, "namespace '%s': %s", spec, err);
	if ((cn.bk.type == NVMFD_BK_FILE || cn.bk.type == NVMFD_BK_BDEV) && cn.path[0] != '/')
		return fail(c, RPC_INVALID_PARAMS, "'%s': give an absolute path (a relative one "
			    "would be taken from nvmfd's working directory, not the caller's)",
			    cn.path);
	if (cn.nsid > 1024)
		return fail(c, RPC_INVALID_PARAMS, "nsid %u: at most 1024", cn.nsid);
	if (!cn.nsid) {
		uint32_t max = 0;

		for (unsigned int i = 0; i < s->nr_ns; i++)
			if (s->ns[i].nsid > max)
				max = s->ns[i].nsid;
		cn.nsid = max + 1;
	}
	ret = ns_add(c, si, &cn);
	if (ret)
		return ret;
	c->result = json_object_new_int64(cn.nsid); /* SPDK answers the NSID */
	return 0;
}

static int ns_remove(struct call *c, int si, uint32_t nsid)
{
	struct nvmfd_cfg_subsys *s = &c->r->cfg->subsys[si];
	unsigned int i;
	int ret;

	for (i = 0; i < s->nr_ns; i++)
		if (s->ns[i].nsid == nsid)
			break;
	if (i == s->nr_ns)
		return fail(c, -ENOENT, "subsystem '%s' has no namespace %u", s->nqn, nsid);
	ret = nvmfd_tgt_ns_remove(c->r->tgt, (unsigned int)si, nsid);
	if (ret)
		return fail(c, ret, "namespace %u: %s", nsid, strerror(-ret));
	memmove(&s->ns[i], &s->ns[i + 1], (s->nr_ns - i - 1) * sizeof(s->ns[0]));
	s->nr_ns--;
	for (unsigned int k = i; k < s->nr_ns; k++)
		s->ns[k].bk.path = s->ns[k].path;
	return 0;
}

/* Params {nqn, nsid} plus @keys (those in @req required): the subsystem
 * and NSID. */
static int nsid_params(struct call *c, const char *const *keys, const char *const *req, int *si,
		       uint32_t *nsid)
{
	bool given;
	int ret;

	ret = check_params(c, keys, req);
	if (ret)
		return ret;
	*si = find_subsys(c);
	if (*si < 0)
		return *si;
	return param_u32(c, c->params, "nsid", 1, 0xfffffffe, nsid, &given);
}

static int m_remove_ns(struct call *c)
{
	static const char *const keys[] = { "nqn", "nsid", NULL };
	uint32_t nsid;
	int si, ret;

	ret = nsid_params(c, keys, keys, &si, &nsid);
	if (ret)
		return ret;
	ret = ns_remove(c, si, nsid);
	if (ret)
		return ret;
	c->result = json_object_new_boolean(true);
	return 0;
}

static int ns_enable(struct call *c, int si, uint32_t nsid, bool enable)
{
	struct nvmfd_cfg_subsys *s = &c->r->cfg->subsys[si];
	int ret;

	for (unsigned int i = 0; i < s->nr_ns; i++) {
		if (s->ns[i].nsid != nsid)
			continue;
		ret = nvmfd_tgt_ns_enable(c->r->tgt, (unsigned int)si, nsid, enable);
		if (ret)
			return fail(c, ret, "namespace %u: %s", nsid, strerror(-ret));
		s->ns[i].enable = enable;
		NVMFD_INFO(LOG_COMP, "subsystem %s: namespace %u %s", s->nqn, nsid,
			   enable ? "enabled" : "disabled");
		return 0;
	}
	return fail(c, -ENOENT, "subsystem '%s' has no namespace %u", s->nqn, nsid);
}

/* nvmfd_subsystem_ns_set_enable: nvmetcli's namespace "enable" (no SPDK
 * method does this) */
static int m_ns_enable(struct call *c)
{
	static const char *const keys[] = { "nqn", "nsid", "enable", NULL };
	uint32_t nsid;
	json_object *v;
	int si, ret;

	ret = nsid_params(c, keys, keys, &si, &nsid);
	if (ret)
		return ret;
	json_object_object_get_ex(c->params, "enable", &v);
	if (!json_object_is_type(v, json_type_boolean))
		return fail(c, RPC_INVALID_PARAMS, "params.enable: expected true or false");
	ret = ns_enable(c, si, nsid, json_object_get_boolean(v));
	if (ret)
		return ret;
	c->result = json_object_new_boolean(true);
	return 0;
}

/* Hosts ----------------------------------------------------------------- */

static int host_params(struct call *c, int *si, const char **host, bool add)
{
	static const char *const keys[] = { "nqn", "host", NULL };
	static const char *const add_keys[] = { "nqn", "host", "dhchap_key", "dhchap_ctrlr_key",
						NULL };
	int ret = check_params(c, add ? add_keys : keys, keys);

	if (ret)
		return ret;
	*si = find_subsys(c);
	if (*si < 0)
		return *si;
	ret = param_str(c, "host", host);
	if (ret)
		return ret;
	if (!nqn_ok(*host))
		return fail(c, RPC_INVALID_PARAMS, "host '%.64s': an NQN starts with \"nqn.\", is "
			    "printable and at most 223 bytes", *host);
	return 0;
}

/*
 * The DH-HMAC-CHAP part of nvmf_subsystem_add_host: SPDK's dhchap_key /
 * dhchap_ctrlr_key name keyring entries; nvmfd takes the secret itself
 * ("DHHC-1:...") or "@FILE" (an absolute path; the file must not be
 * readable by group/other). The keys belong to the host (the config's
 * hosts[] entry, as nvmet's host attributes), so they apply on every
 * subsystem that lists it: a host that already has other keys, or that
 * another subsystem allows without keys, is refused.
 * @d: out (wipe it); no key given: all zero, *@given false.
 */
static int host_add_dhchap(struct call *c, int si, const char *host, struct nvmfd_cfg_dhchap *d,
			   bool *given)
{
	const struct nvmfd_cfg *cfg = c->r->cfg;
	const char *key, *ckey;
	char err[NVMFD_CFG_ERRLEN];
	int ret, h;

	memset(d, 0, sizeof(*d));
	*given = false;
	ret = param_str(c, "dhchap_key", &key);
	if (!ret)
		ret = param_str(c, "dhchap_ctrlr_key", &ckey);
	if (ret)
		return ret;
	if (!key && ckey)
		return fail(c, RPC_INVALID_PARAMS, "params.dhchap_ctrlr_key needs a dhchap_key");
	if (!key)
		return 0;
	if ((key[0] == '@' && key[1] != '/') || (ckey && ckey[0] == '@' && ckey[1] != '/'))
		return fail(c, RPC_INVALID_PARAMS, "DH-HMAC-CHAP key files: give an absolute @FILE");
	ret = nvmfd_cfg_dhchap_secret(key, NULL, "params.dhchap_key", d->key, d->key_file, err);
	if (!ret && ckey)
		ret = nvmfd_cfg_dhchap_secret(ckey, NULL, "params.dhchap_ctrlr_key", d->ctrl_key,
					      d->ctrl_key_file, err);
	if (ret) {
		nvmfd_auth_wipe(d, sizeof(*d));
		return fail(c, RPC_INVALID_PARAMS, "%s", err);
	}
	h = nvmfd_cfg_host_find(cfg, host);
	if (h >= 0 && cfg->host_dhchap[h].key[0]) {
		if (strcmp(cfg->host_dhchap[h].key, d->key) ||
		    strcmp(cfg->host_dhchap[h].ctrl_key, d->ctrl_key)) {
			nvmfd_auth_wipe(d, sizeof(*d));
			return fail(c, -EEXIST, "host %s already has other DH-HMAC-CHAP keys (keys "
				    "belong to the host, on every subsystem)", host);
		}
		d->hashes = cfg->host_dhchap[h].hashes;
		d->dhgroups = cfg->host_dhchap[h].dhgroups;
	} else if (h >= 0) {
		for (unsigned int i = 0; i < cfg->nr_subsys; i++)
			for (unsigned int j = 0; i != (unsigned int)si && j < cfg->subsys[i].nr_hosts; j++)
				if (!strcmp(cfg->subsys[i].hosts[j], host)) {
					nvmfd_auth_wipe(d, sizeof(*d));
					return fail(c, -EBUSY, "host %s is allowed on %s without "
						    "DH-HMAC-CHAP; keys belong to the host, on every "
						    "subsystem", host, cfg->subsys[i].nqn);
				}
	}
	*given = true;
	return 0;
}

static int host_add(struct call *c, int si, const char *host)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_subsys *s = &cfg->subsys[si];
	struct nvmfd_cfg_dhchap d;
	bool top = false, dh, bidi;
	int h, ret;

	for (unsigned int i = 0; i < s->nr_hosts; i++)
		if (!strcmp(s->hosts[i], host))
			return fail(c, -EEXIST, "host %s is already allowed on %s", host, s->nqn);
	if (s->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
		return fail(c, -ENOSPC, "subsystem '%s' allows %d hosts, the most", s->nqn,
			    NVMFD_CFG_MAX_HOSTS);
	for (unsigned int i = 0; i < cfg->nr_hosts; i++)
		top |= !strcmp(cfg->hosts[i], host);
	if (!top && cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS)
		return fail(c, -ENOSPC, "the config defines %d hosts, the most", NVMFD_CFG_MAX_HOSTS);
	ret = host_add_dhchap(c, si, host, &d, &dh);
	if (ret)
		return ret;
	bidi = d.ctrl_key[0];
	nvmfd_tgt_cfg_lock(c->r->tgt);
	/* nvmetcli wants every allowed host defined at the top level; its
	 * keys are in place before the subsystem allows it */
	if (!top)
		snprintf(cfg->hosts[cfg->nr_hosts++], sizeof(cfg->hosts[0]), "%s", host);
	h = nvmfd_cfg_host_find(cfg, host);
	if (dh && h >= 0)
		cfg->host_dhchap[h] = d;
	snprintf(s->hosts[s->nr_hosts++], sizeof(s->hosts[0]), "%s", host);
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	nvmfd_auth_wipe(&d, sizeof(d));
	nvmfd_tgt_discovery_changed(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s: host %s allowed%s", s->nqn, host,
		   !dh ? "" : bidi ? " (DH-HMAC-CHAP, bidirectional)" : " (DH-HMAC-CHAP)");
	return 0;
}

static int host_remove(struct call *c, int si, const char *host)
{
	struct nvmfd_cfg_subsys *s = &c->r->cfg->subsys[si];
	unsigned int i;

	for (i = 0; i < s->nr_hosts; i++)
		if (!strcmp(s->hosts[i], host))
			break;
	if (i == s->nr_hosts)
		return fail(c, -ENOENT, "host %s is not in the allowed hosts of %s", host, s->nqn);
	nvmfd_tgt_cfg_lock(c->r->tgt);
	memmove(s->hosts[i], s->hosts[i + 1], (s->nr_hosts - i - 1) * sizeof(s->hosts[0]));
	s->nr_hosts--;
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	nvmfd_tgt_discovery_changed(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s: host %s no longer allowed (connected controllers "
		   "stay)", s->nqn, host);
	return 0;
}

/* nvmf_subsystem_add_host {nqn, host[, dhchap_key[, dhchap_ctrlr_key]]} /
 * remove_host {nqn, host} to @op. */
static int host_method(struct call *c, int (*op)(struct call *c, int si, const char *host))
{
	const char *host;
	int si, ret;

	ret = host_params(c, &si, &host, op == host_add);
	if (ret || (ret = op(c, si, host)))
		return ret;
	c->result = json_object_new_boolean(true);
	return 0;
}

static int m_add_host(struct call *c)
{
	return host_method(c, host_add);
}

static int m_remove_host(struct call *c)
{
	return host_method(c, host_remove);
}

static void set_any_host(struct nvmfd_rpc *r, struct nvmfd_cfg_subsys *s, bool any)
{
	nvmfd_tgt_cfg_lock(r->tgt);
	s->allow_any_host = any;
	nvmfd_tgt_cfg_unlock(r->tgt);
	nvmfd_tgt_discovery_changed(r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s: %s", s->nqn,
		   any ? "any host allowed" : "only the listed hosts allowed");
}

static int m_allow_any_host(struct call *c)
{
	static const char *const keys[] = { "nqn", "allow_any_host", NULL };
	struct nvmfd_cfg_subsys *s;
	json_object *v;
	int si, ret;

	ret = check_params(c, keys, keys);
	if (ret)
		return ret;
	si = find_subsys(c);
	if (si < 0)
		return si;
	json_object_object_get_ex(c->params, "allow_any_host", &v);
	if (!json_object_is_type(v, json_type_boolean))
		return fail(c, RPC_INVALID_PARAMS, "params.allow_any_host: expected true or false");
	s = &c->r->cfg->subsys[si];
	set_any_host(c->r, s, json_object_get_boolean(v));
	c->result = json_object_new_boolean(true);
	return 0;
}

/* Namespace resize ------------------------------------------------------ */

/* "ram:SIZE"/"null:SIZE" for the config's path, in the largest exact unit. */
static void fmt_sized_spec(char *out, size_t len, const char *kind, uint64_t bytes)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && bytes && !(bytes & 1023)) {
		bytes >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%s:%" PRIu64, kind, bytes);
	else
		snprintf(out, len, "%s:%" PRIu64 "%c", kind, bytes, units[u]);
}

/* nvmfd_subsystem_resize_ns {nqn, nsid, size?}: SPDK resizes bdevs
 * (bdev_null_resize, bdev_aio_rescan), not namespaces; nvmfd resizes the
 * namespace's backend. size: bytes (integer) or "64M"; absent = re-read
 * the file's or device's size. */
static int m_resize_ns(struct call *c)
{
	static const char *const keys[] = { "nqn", "nsid", "size", NULL };
	static const char *const req[] = { "nqn", "nsid", NULL };
	struct nvmfd_cfg_subsys *s;
	struct nvmfd_cfg_ns *cn = NULL;
	char err[NVMFD_CFG_ERRLEN];
	uint64_t size = 0, now = 0;
	uint32_t nsid;
	json_object *v;
	int si, ret;

	ret = nsid_params(c, keys, req, &si, &nsid);
	if (ret)
		return ret;
	s = &c->r->cfg->subsys[si];
	for (unsigned int i = 0; i < s->nr_ns; i++)
		if (s->ns[i].nsid == nsid)
			cn = &s->ns[i];
	if (!cn)
		return fail(c, -ENOENT, "subsystem '%s' has no namespace %u", s->nqn, nsid);
	if (json_object_object_get_ex(c->params, "size", &v)) {
		if (json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
			size = (uint64_t)json_object_get_int64(v);
		else if (!json_object_is_type(v, json_type_string) ||
			 nvmfd_cfg_parse_size(json_object_get_string(v), &size) || !size)
			return fail(c, RPC_INVALID_PARAMS,
				    "params.size: bytes (a positive integer) or a size such as "
				    "\"64M\", \"2G\"");
	} else if (cn->bk.type == NVMFD_BK_RAM || cn->bk.type == NVMFD_BK_NULL) {
		return fail(c, RPC_INVALID_PARAMS, "params.size: required for a %s namespace",
			    cn->bk.type == NVMFD_BK_RAM ? "ram" : "null");
	}
	if (size && cn->bk.type == NVMFD_BK_BDEV)
		return fail(c, RPC_INVALID_PARAMS, "namespace %u is a block device: its size is "
			    "the device's; resize without \"size\" re-reads it", nsid);
	if (size && nvmfd_cfg_check_ns_size(cn, size, err))
		return fail(c, RPC_INVALID_PARAMS, "namespace %u: %s", nsid, err);
	if (cn->bk.type == NVMFD_BK_RAM && size > cn->bk.size) {
		ret = ram_fits(c, size - cn->bk.size);
		if (ret)
			return ret;
	}
	ret = nvmfd_tgt_ns_resize(c->r->tgt, (unsigned int)si, nsid, size, &now);
	if (ret == -EINVAL && size && cn->bk.type == NVMFD_BK_FILE)
		return fail(c, ret, "namespace %u: a file namespace only grows (shrinking would "
			    "discard data hosts wrote)", nsid);
	if (ret == -ENOMEM && cn->bk.type == NVMFD_BK_RAM)
		return fail(c, ret, "namespace %u: the RAM namespace cannot grow in place (no "
			    "address space after it)", nsid);
	if (ret)
		return fail(c, ret, "namespace %u: resize: %s", nsid, strerror(-ret));
	if (cn->bk.type == NVMFD_BK_RAM || cn->bk.type == NVMFD_BK_NULL) {
		cn->bk.size = now;
		if (!strncmp(cn->path, "ram:", 4) || !strncmp(cn->path, "null:", 5))
			fmt_sized_spec(cn->path, sizeof(cn->path),
				       cn->bk.type == NVMFD_BK_RAM ? "ram" : "null", now);
	} else if (cn->bk.type == NVMFD_BK_FILE && (size || cn->bk.size)) {
		cn->bk.size = now; /* the size= the config recreates it with */
	}
	c->result = json_object_new_object();
	json_object_object_add(c->result, "nsid", json_object_new_int64(nsid));
	json_object_object_add(c->result, "size", json_object_new_int64((int64_t)now));
	return 0;
}

/* Subsystems ------------------------------------------------------------ */

/*
 * Create subsystem @cs (its namespaces and hosts are not looked at: added
 * afterwards through their own paths) in the target and the running config,
 * after checking the config's own rules on the result (serial/model
 * characters, cntlid range). Return: 0, or a negative errno / RPC code with
 * c->msg set; nothing changed then.
 */
static int subsys_insert(struct call *c, const struct nvmfd_cfg_subsys *cs)
{
	struct nvmfd_cfg *cfg = c->r->cfg, *check = NULL;
	struct nvmfd_cfg_subsys *bare = NULL;
	char err[NVMFD_CFG_ERRLEN];
	int ret;

	if (cfg->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
		return fail(c, -ENOSPC, "nvmfd has %d subsystems, the most", NVMFD_CFG_MAX_SUBSYS);
	check = malloc(sizeof(*check));
	bare = malloc(sizeof(*bare));
	if (!check || !bare) {
		ret = fail(c, -ENOMEM, "out of memory");
		goto out;
	}
	*bare = *cs;
	bare->nr_ns = 0;
	bare->nr_hosts = 0;
	memcpy(check, cfg, sizeof(*check));
	check->subsys[check->nr_subsys++] = *bare;
	ret = nvmfd_cfg_validate(check, err);
	nvmfd_auth_wipe(check->host_dhchap, sizeof(check->host_dhchap));
	if (ret) {
		ret = fail(c, RPC_INVALID_PARAMS, "%s", err);
		goto out;
	}
	ret = nvmfd_tgt_subsys_create(c->r->tgt, bare);
	if (ret) {
		ret = fail(c, ret, "subsystem '%s': %s", cs->nqn, strerror(-ret));
		goto out;
	}
	nvmfd_tgt_cfg_lock(c->r->tgt);
	cfg->subsys[cfg->nr_subsys++] = *bare;
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s created (no listener yet: "
		   "nvmf_subsystem_add_listener)", cs->nqn);
out:
	free(bare);
	free(check);
	return ret;
}

static int m_create_subsys(struct call *c)
{
	static const char *const keys[] = { "nqn", "serial_number", "model_number",
					    "allow_any_host", "max_namespaces", "min_cntlid",
					    "max_cntlid", "ana_reporting", NULL };
	static const char *const req[] = { "nqn", NULL };
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_subsys *cs = NULL;
	const char *nqn, *sn, *mn;
	char err[NVMFD_CFG_ERRLEN];
	uint32_t v;
	json_object *o;
	bool given;
	int ret;

	ret = check_params(c, keys, req);
	if (ret || (ret = param_str(c, "nqn", &nqn)) || (ret = param_str(c, "serial_number", &sn)) ||
	    (ret = param_str(c, "model_number", &mn)))
		return ret;
	if (!nqn_ok(nqn) || !strcmp(nqn, NVMFD_DISC_NQN))
		return fail(c, RPC_INVALID_PARAMS, "nqn '%.64s': an NQN starts with \"nqn.\", is "
			    "printable, at most 223 bytes and not the discovery NQN", nqn);
	for (unsigned int i = 0; i < cfg->nr_subsys; i++)
		if (!strcmp(cfg->subsys[i].nqn, nqn))
			return fail(c, -EEXIST, "subsystem '%s' already exists", nqn);
	if (cfg->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
		return fail(c, -ENOSPC, "nvmfd has %d subsystems, the most", NVMFD_CFG_MAX_SUBSYS);
	if (json_object_object_get_ex(c->params, "ana_reporting", &o) &&
	    (!json_object_is_type(o, json_type_boolean) || json_object_get_boolean(o)))
		return fail(c, RPC_INVALID_PARAMS, "params.ana_reporting: ANA is not implemented "
			    "(only false)");
	ret = param_u32(c, c->params, "max_namespaces", 0, UINT32_MAX, &v, &given);
	if (ret)
		return ret;
	if (given && v != 0 && v != NVMFD_CFG_MAX_NS)
		return fail(c, RPC_INVALID_PARAMS, "params.max_namespaces: an nvmfd subsystem "
			    "holds %d namespaces (0 or %d)", NVMFD_CFG_MAX_NS, NVMFD_CFG_MAX_NS);
	cs = malloc(sizeof(*cs));
	if (!cs) {
		ret = fail(c, -ENOMEM, "out of memory");
		goto out;
	}
	if (nvmfd_cfg_subsys_init(cs, nqn, err)) {
		ret = fail(c, RPC_INVALID_PARAMS, "%s", err);
		goto out;
	}
	if (json_object_object_get_ex(c->params, "allow_any_host", &o)) {
		if (!json_object_is_type(o, json_type_boolean)) {
			ret = fail(c, RPC_INVALID_PARAMS, "params.allow_any_host: expected true or "
				   "false");
			goto out;
		}
		cs->allow_any_host = json_object_get_boolean(o);
	}
	if (sn)
		snprintf(cs->serial, sizeof(cs->serial), "%s", sn);
	if (mn)
		snprintf(cs->model, sizeof(cs->model), "%s", mn);
	if ((sn && strlen(sn) >= sizeof(cs->serial)) || (mn && strlen(mn) >= sizeof(cs->model))) {
		ret = fail(c, RPC_INVALID_PARAMS, "serial_number is at most %zu, model_number at "
			   "most %zu characters", sizeof(cs->serial) - 1, sizeof(cs->model) - 1);
		goto out;
	}
	if ((ret = param_u32(c, c->params, "min_cntlid", 1, 0xffef, &v, &given)))
		goto out;
	if (given)
		cs->cntlid_min = (uint16_t)v;
	if ((ret = param_u32(c, c->params, "max_cntlid", 1, 0xffef, &v, &given)))
		goto out;
	if (given)
		cs->cntlid_max = (uint16_t)v;
	ret = subsys_insert(c, cs);
	if (!ret)
		c->result = json_object_new_boolean(true);
out:
	free(cs);
	return ret;
}

static int m_delete_subsys(struct call *c)
{
	static const char *const keys[] = { "nqn", NULL };
	struct nvmfd_cfg *cfg = c->r->cfg;
	char nqn[256];
	int si, ret;

	ret = check_params(c, keys, keys);
	if (ret)
		return ret;
	si = find_subsys(c);
	if (si < 0)
		return si;
	snprintf(nqn, sizeof(nqn), "%s", cfg->subsys[si].nqn);
	ret = nvmfd_tgt_subsys_delete(c->r->tgt, (unsigned int)si);
	if (ret)
		return fail(c, ret, "subsystem '%s': %s", nqn, strerror(-ret));
	nvmfd_tgt_cfg_lock(c->r->tgt);
	memmove(&cfg->subsys[si], &cfg->subsys[si + 1],
		(cfg->nr_subsys - (unsigned int)si - 1) * sizeof(cfg->subsys[0]));
	cfg->nr_subsys--;
	for (unsigned int i = (unsigned int)si; i < cfg->nr_subsys; i++)
		for (unsigned int k = 0; k < cfg->subsys[i].nr_ns; k++)
			cfg->subsys[i].ns[k].bk.path = cfg->subsys[i].ns[k].path;
	/* port links: drop the deleted one, renumber those after it */
	for (unsigned int pi = 0; pi < cfg->nr_ports; pi++) {
		struct nvmfd_cfg_port *p = &cfg->ports[pi];
		unsigned int n = 0;

		for (unsigned int k = 0; k < p->nr_subsys; k++) {
			if (p->subsys_idx[k] == (unsigned int)si)
				continue;
			p->subsys_idx[n++] = p->subsys_idx[k] - (p->subsys_idx[k] > (unsigned int)si);
		}
		p->nr_subsys = n;
	}
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s deleted", nqn);
	c->result = json_object_new_boolean(true);
	return 0;
}

/* Listeners ------------------------------------------------------------- */

/* params.listen_address {trtype, adrfam, traddr, trsvcid} into @p (a
 * port's address fields). Return: 0 or a code. */
static int listen_addr_param(struct call *c, const char *key, struct nvmfd_cfg_port *p)
{
	static const char *const akeys[] = { "trtype", "adrfam", "traddr", "trsvcid", NULL };
	char spec[300], err[NVMFD_CFG_ERRLEN];
	const char *tt = "TCP", *af = NULL, *ta = NULL, *ts = NULL;
	json_object *a, *v;

	if (!json_object_object_get_ex(c->params, key, &a) ||
	    !json_object_is_type(a, json_type_object))
		return fail(c, RPC_INVALID_PARAMS, "params.%s: required, an object {trtype, "
			    "adrfam, traddr, trsvcid}", key);
	json_object_object_foreach(a, k, kv) {
		bool known = false;

		for (size_t i = 0; akeys[i]; i++)
			known |= !strcmp(k, akeys[i]);
		if (!known)
			return fail(c, RPC_INVALID_PARAMS, "params.%s: unknown key \"%s\"", key, k);
		if (!json_object_is_type(kv, json_type_string))
			return fail(c, RPC_INVALID_PARAMS, "params.%s.%s: expected a string", key, k);
	}
	if (json_object_object_get_ex(a, "trtype", &v))
		tt = json_object_get_string(v);
	if (json_object_object_get_ex(a, "adrfam", &v))
		af = json_object_get_string(v);
	if (json_object_object_get_ex(a, "traddr", &v))
		ta = json_object_get_string(v);
	if (json_object_object_get_ex(a, "trsvcid", &v))
		ts = json_object_get_string(v);
	if (strcasecmp(tt, "TCP"))
		return fail(c, RPC_INVALID_PARAMS, "params.%s.trtype '%.32s': only TCP", key, tt);
	if (!ta || !ts)
		return fail(c, RPC_INVALID_PARAMS, "params.%s: traddr and trsvcid are required",
			    key);
	if (af && strcasecmp(af, "IPv4") && strcasecmp(af, "IPv6"))
		return fail(c, RPC_INVALID_PARAMS, "params.%s.adrfam '%.32s': IPv4 or IPv6", key,
			    af);
	snprintf(spec, sizeof(spec), strchr(ta, ':') ? "[%.256s]:%.16s" : "%.256s:%.16s", ta, ts);
	if (nvmfd_cfg_parse_listen(p, spec, err))
		return fail(c, RPC_INVALID_PARAMS, "params.%s: %s", key, err);
	if (af && (p->adrfam == NVMFD_ADRFAM_IPV6) != !strcasecmp(af, "IPv6"))
		return fail(c, RPC_INVALID_PARAMS, "params.%s: traddr %s is not an %s address", key,
			    ta, af);
	return 0;
}

/* The running listener with @p's address (its port as configured or as
 * bound), or -1. */
static int find_port(struct nvmfd_rpc *r, const struct nvmfd_cfg_port *p)
{
	for (unsigned int i = 0; i < r->cfg->nr_ports; i++) {
		const struct nvmfd_cfg_port *q = &r->cfg->ports[i];
		char bound[16];

		snprintf(bound, sizeof(bound), "%u", nvmfd_tgt_listen_port(r->tgt, i));
		if (q->adrfam == p->adrfam && !strcmp(q->traddr, p->traddr) &&
		    (!strcmp(q->trsvcid, p->trsvcid) || !strcmp(bound, p->trsvcid)))
			return (int)i;
	}
	return -1;
}

/* {nqn, listen_address}: the subsystem (-1: the discovery NQN) and address. */
static int listener_params(struct call *c, int *si, struct nvmfd_cfg_port *p)
{
	static const char *const keys[] = { "nqn", "listen_address", "tgt_name", NULL };
	static const char *const req[] = { "nqn", "listen_address", NULL };
	const char *nqn;
	int ret;

	ret = check_params(c, keys, req);
	if (ret || (ret = param_str(c, "nqn", &nqn)))
		return ret;
	if (nqn && !strcmp(nqn, NVMFD_DISC_NQN)) {
		*si = -1;
	} else {
		*si = find_subsys(c);
		if (*si < 0)
			return *si;
	}
	return listen_addr_param(c, "listen_address", p);
}

static json_object *bound_addr_obj(struct nvmfd_rpc *r, int pi)
{
	return addr_obj(&r->cfg->ports[pi], nvmfd_tgt_listen_port(r->tgt, (unsigned int)pi));
}

/* Link subsystem @si to running listener @pi (not linked yet, room left). */
static void port_link(struct nvmfd_rpc *r, int pi, int si)
{
	struct nvmfd_cfg_port *q = &r->cfg->ports[pi];

	nvmfd_tgt_cfg_lock(r->tgt);
	q->subsys_idx[q->nr_subsys++] = (unsigned int)si;
	nvmfd_tgt_cfg_unlock(r->tgt);
	nvmfd_tgt_discovery_changed(r->tgt);
	NVMFD_INFO(LOG_COMP, "subsystem %s: listening on port %u", r->cfg->subsys[si].nqn,
		   q->portid);
}

/* Drop link @k of listener @pi (the port stays for its other subsystems)
 * and disconnect that subsystem's controllers that came in on it (nvmet). */
static void port_unlink(struct nvmfd_rpc *r, int pi, unsigned int k)
{
	struct nvmfd_cfg_port *q = &r->cfg->ports[pi];
	unsigned int si = q->subsys_idx[k];
	int n;

	nvmfd_tgt_cfg_lock(r->tgt);
	memmove(&q->subsys_idx[k], &q->subsys_idx[k + 1],
		(q->nr_subsys - k - 1) * sizeof(q->subsys_idx[0]));
	q->nr_subsys--;
	nvmfd_tgt_cfg_unlock(r->tgt);
	nvmfd_tgt_discovery_changed(r->tgt);
	n = (int)nvmfd_tgt_drop_ctrls(r->tgt, q->portid, r->cfg->subsys[si].nqn);
	NVMFD_INFO(LOG_COMP, "subsystem %s: no longer on port %u (%d controller(s) "
		   "disconnected)", r->cfg->subsys[si].nqn, q->portid, n);
}

static int m_add_listener(struct call *c)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_port p;
	uint16_t bound = 0, portid = 0;
	int si, pi, ret;

	nvmfd_cfg_port_init(&p, 1);
	ret = listener_params(c, &si, &p);
	if (ret)
		return ret;
	pi = strcmp(p.trsvcid, "0") ? find_port(c->r, &p) : -1;
	if (pi >= 0) {
		struct nvmfd_cfg_port *q = &cfg->ports[pi];

		/* nvmfd's ports are shared: link the subsystem to the one there */
		if (si < 0)
			return fail(c, -EEXIST, "a listener on that address exists (every listener "
				    "serves discovery)");
		for (unsigned int k = 0; k < q->nr_subsys; k++)
			if (q->subsys_idx[k] == (unsigned int)si)
				return fail(c, -EEXIST, "subsystem '%s' already listens there",
					    cfg->subsys[si].nqn);
		if (q->nr_subsys >= NVMFD_CFG_MAX_SUBSYS)
			return fail(c, -ENOSPC, "port %u exports %d subsystems, the most",
				    q->portid, NVMFD_CFG_MAX_SUBSYS);
		port_link(c->r, pi, si);
		c->result = bound_addr_obj(c->r, pi);
		return 0;
	}
	if (cfg->nr_ports >= NVMFD_CFG_MAX_PORTS)
		return fail(c, -ENOSPC, "nvmfd has %d listeners, the most", NVMFD_CFG_MAX_PORTS);
	for (unsigned int i = 0; i < cfg->nr_ports; i++)
		if (cfg->ports[i].portid > portid)
			portid = cfg->ports[i].portid;
	p.portid = (uint16_t)(portid + 1);
	if (cfg->nr_ports) { /* the daemon's queue settings (--inline-data-size, ...) */
		p.inline_data_size = cfg->ports[0].inline_data_size;
		p.max_queue_size = cfg->ports[0].max_queue_size;
	}
	if (si >= 0)
		p.subsys_idx[p.nr_subsys++] = (unsigned int)si;
	ret = nvmfd_tgt_port_add(c->r->tgt, &p, &bound);
	if (ret)
		return fail(c, ret, strchr(p.traddr, ':') ? "listen on [%s]:%s: %s" :
							  "listen on %s:%s: %s",
			    p.traddr, p.trsvcid, strerror(-ret));
	snprintf(p.trsvcid, sizeof(p.trsvcid), "%u", bound); /* port 0: the one bound */
	nvmfd_tgt_cfg_lock(c->r->tgt);
	cfg->ports[cfg->nr_ports++] = p;
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	nvmfd_tgt_discovery_changed(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "%s: new listener port %u", si >= 0 ? cfg->subsys[si].nqn :
		   NVMFD_DISC_NQN, p.portid);
	c->result = bound_addr_obj(c->r, (int)cfg->nr_ports - 1);
	return 0;
}

static int m_remove_listener(struct call *c)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_port p, *q;
	unsigned int k;
	uint16_t portid;
	int si, pi, ret;

	nvmfd_cfg_port_init(&p, 1);
	ret = listener_params(c, &si, &p);
	if (ret)
		return ret;
	pi = find_port(c->r, &p);
	if (pi < 0 || !strcmp(p.trsvcid, "0"))
		return fail(c, -ENOENT, strchr(p.traddr, ':') ? "no listener on [%s]:%s" :
							      "no listener on %s:%s",
			    p.traddr, p.trsvcid);
	q = &cfg->ports[pi];
	portid = q->portid;
	for (k = 0; si >= 0 && k < q->nr_subsys; k++)
		if (q->subsys_idx[k] == (unsigned int)si)
			break;
	if (si >= 0 && k == q->nr_subsys)
		return fail(c, -ENOENT, "subsystem '%s' does not listen on port %u",
			    cfg->subsys[si].nqn, portid);
	if (si >= 0 && q->nr_subsys > 1) {
		/* the port stays for the others: unlink, and close this
		 * subsystem's controllers that came in on it (nvmet) */
		port_unlink(c->r, pi, k);
		c->result = json_object_new_boolean(true);
		return 0;
	}
	/* its last subsystem, or the discovery NQN: the listener goes, with
	 * every connection on it */
	nvmfd_tgt_cfg_lock(c->r->tgt);
	memmove(&cfg->ports[pi], &cfg->ports[pi + 1],
		(cfg->nr_ports - (unsigned int)pi - 1) * sizeof(cfg->ports[0]));
	cfg->nr_ports--;
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	ret = nvmfd_tgt_port_remove(c->r->tgt, (unsigned int)pi);
	if (ret) /* cannot happen: the tables are kept in step */
		NVMFD_ERR(LOG_COMP, "port %u: remove: %s", portid, strerror(-ret));
	NVMFD_INFO(LOG_COMP, "listener port %u removed", portid);
	c->result = json_object_new_boolean(true);
	return 0;
}

/* Referrals ------------------------------------------------------------- */

/* {address, portid?, ...}: the referred address in @ref and the parent
 * port ID (0: every port). */
static int referral_params(struct call *c, struct nvmfd_cfg_referral *ref, uint32_t *parent)
{
	static const char *const keys[] = { "address", "portid", "subnqn", "secure_channel",
					    "tgt_name", NULL };
	static const char *const req[] = { "address", NULL };
	struct nvmfd_cfg_port p;
	json_object *v;
	const char *sub;
	bool given;
	int ret;

	ret = check_params(c, keys, req);
	if (ret || (ret = param_str(c, "subnqn", &sub)))
		return ret;
	if (sub && strcmp(sub, NVMFD_DISC_NQN))
		return fail(c, RPC_INVALID_PARAMS, "params.subnqn: nvmfd refers to discovery "
			    "services only (%s)", NVMFD_DISC_NQN);
	if (json_object_object_get_ex(c->params, "secure_channel", &v) &&
	    (!json_object_is_type(v, json_type_boolean) || json_object_get_boolean(v)))
		return fail(c, RPC_INVALID_PARAMS, "params.secure_channel: TLS is not implemented "
			    "(only false)");
	ret = param_u32(c, c->params, "portid", 1, 65535, parent, &given);
	if (ret)
		return ret;
	if (!given)
		*parent = 0;
	nvmfd_cfg_port_init(&p, 1);
	ret = listen_addr_param(c, "address", &p);
	if (ret)
		return ret;
	memset(ref, 0, sizeof(*ref));
	ref->adrfam = p.adrfam;
	snprintf(ref->traddr, sizeof(ref->traddr), "%s", p.traddr);
	snprintf(ref->trsvcid, sizeof(ref->trsvcid), "%s", p.trsvcid);
	return 0;
}

static bool same_referral(const struct nvmfd_cfg_referral *a, const struct nvmfd_cfg_referral *b)
{
	return a->adrfam == b->adrfam && !strcmp(a->traddr, b->traddr) &&
	       !strcmp(a->trsvcid, b->trsvcid);
}

/* nvmf_discovery_add_referral: SPDK's referrals are target-wide; nvmfd's
 * (nvmet's) belong to a port: "portid" picks one, else every port gets it. */
static int m_add_referral(struct call *c)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_referral ref;
	unsigned int n = 0;
	uint32_t parent;
	int ret;

	ret = referral_params(c, &ref, &parent);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < cfg->nr_ports; i++)
		n += !parent || cfg->ports[i].portid == parent;
	if (!n)
		return fail(c, parent ? -ENOENT : -ENODEV, parent ? "no port %u" :
			    "no listener to advertise the referral on", parent);
	for (unsigned int i = 0; i < cfg->nr_referrals; i++)
		if (same_referral(&cfg->referrals[i], &ref) &&
		    (!parent || cfg->referrals[i].portid == parent))
			return fail(c, -EEXIST, "referral %s:%s already exists", ref.traddr,
				    ref.trsvcid);
	if (cfg->nr_referrals + n > NVMFD_CFG_MAX_REFERRALS)
		return fail(c, -ENOSPC, "nvmfd keeps %d referrals (one per port), the most",
			    NVMFD_CFG_MAX_REFERRALS);
	nvmfd_tgt_cfg_lock(c->r->tgt);
	for (unsigned int i = 0; i < cfg->nr_ports; i++) {
		if (parent && cfg->ports[i].portid != parent)
			continue;
		ref.portid = cfg->ports[i].portid;
		cfg->referrals[cfg->nr_referrals++] = ref;
	}
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	nvmfd_tgt_discovery_changed(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "referral to %s:%s added on %u port(s)", ref.traddr, ref.trsvcid, n);
	c->result = json_object_new_boolean(true);
	return 0;
}

static int m_remove_referral(struct call *c)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	struct nvmfd_cfg_referral ref;
	unsigned int n = 0, kept = 0;
	uint32_t parent;
	int ret;

	ret = referral_params(c, &ref, &parent);
	if (ret)
		return ret;
	for (unsigned int i = 0; i < cfg->nr_referrals; i++)
		n += same_referral(&cfg->referrals[i], &ref) &&
		     (!parent || cfg->referrals[i].portid == parent);
	if (!n)
		return fail(c, -ENOENT, "no referral to %s:%s", ref.traddr, ref.trsvcid);
	nvmfd_tgt_cfg_lock(c->r->tgt);
	for (unsigned int i = 0; i < cfg->nr_referrals; i++)
		if (!same_referral(&cfg->referrals[i], &ref) ||
		    (parent && cfg->referrals[i].portid != parent))
			cfg->referrals[kept++] = cfg->referrals[i];
	cfg->nr_referrals = kept;
	nvmfd_tgt_cfg_unlock(c->r->tgt);
	nvmfd_tgt_discovery_changed(c->r->tgt);
	NVMFD_INFO(LOG_COMP, "referral to %s:%s removed from %u port(s)", ref.traddr, ref.trsvcid,
		   n);
	c->result = json_object_new_boolean(true);
	return 0;
}

static int m_get_referrals(struct call *c)
{
	struct nvmfd_cfg *cfg = c->r->cfg;
	int ret = check_params(c, NULL, NULL);

	if (ret)
		return ret;
	c->result = json_object_new_array();
	for (unsigned int i = 0; i < cfg->nr_referrals; i++) {
		const struct nvmfd_cfg_referral *r = &cfg->referrals[i];
		struct nvmfd_cfg_port p = { .adrfam = r->adrfam };
		json_object *o = json_object_new_object();

		snprintf(p.traddr, sizeof(p.traddr), "%s", r->traddr);
		snprintf(p.trsvcid, sizeof(p.trsvcid), "%s", r->trsvcid);
		json_object_object_add(o, "address", addr_obj(&p, 0));
		json_object_object_add(o, "portid", json_object_new_int(r->portid));
		json_object_object_add(o, "secure_channel", json_object_new_boolean(false));
		json_object_array_add(c->result, o);
	}
	return 0;
}

struct method {
	const char *name;
	int (*fn)(struct call *c);
};

static const struct method methods[] = {
	{ "rpc_get_methods", m_get_methods },
	{ "nvmfd_get_version", m_get_version },
	{ "nvmf_get_subsystems", m_get_subsystems },
	{ "nvmf_get_stats", m_get_stats },
	{ "save_config", m_save_config },
	{ "nvmf_subsystem_add_ns", m_add_ns },
	{ "nvmf_subsystem_remove_ns", m_remove_ns },
	{ "nvmfd_subsystem_ns_set_enable", m_ns_enable },
	{ "nvmfd_subsystem_resize_ns", m_resize_ns },
	{ "nvmf_subsystem_add_host", m_add_host },
	{ "nvmf_subsystem_remove_host", m_remove_host },
	{ "nvmf_subsystem_allow_any_host", m_allow_any_host },
	{ "nvmf_create_subsystem", m_create_subsys },
	{ "nvmf_delete_subsystem", m_delete_subsys },
	{ "nvmf_subsystem_add_listener", m_add_listener },
	{ "nvmf_subsystem_remove_listener", m_remove_listener },
	{ "nvmf_discovery_add_referral", m_add_referral },
	{ "nvmf_discovery_remove_referral", m_remove_referral },
	{ "nvmf_discovery_get_referrals", m_get_referrals },
};

static int m_get_methods(struct call *c)
{
	int ret = check_params(c, NULL, NULL);

	if (ret)
		return ret;
	c->result = json_object_new_array();
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		json_object_array_add(c->result, json_object_new_string(methods[i].name));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Dispatch                                                               */

static json_object *rpc_error(json_object *id, int code, const char *msg)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	return o;
}

/* One JSON-RPC request object; Return: the reply, NULL for a notification. */
static json_object *rpc_call(struct nvmfd_rpc *r, json_object *req)
{
	json_object *v, *id = NULL, *params = NULL, *o;
	struct call c = { .r = r };
	const struct method *m = NULL;
	const char *name;
	bool notify;
	int ret;

	if (!json_object_is_type(req, json_type_object))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request: expected an object");
	notify = !json_object_object_get_ex(req, "id", &id);
	if (id && !json_object_is_type(id, json_type_string) &&
	    !json_object_is_type(id, json_type_int) && !json_object_is_type(id, json_type_null))
		return rpc_error(NULL, RPC_INVALID_REQUEST, "Invalid Request: bad id");
	if (!json_object_object_get_ex(req, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0"))
		return rpc_error(id, RPC_INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
	if (!json_object_object_get_ex(req, "method", &v) || !json_object_is_type(v, json_type_string))
		return rpc_error(id, RPC_INVALID_REQUEST, "Invalid Request: \"method\" missing");
	name = json_object_get_string(v);
	json_object_object_foreach(req, k, kv) {
		(void)kv;
		if (strcmp(k, "jsonrpc") && strcmp(k, "method") && strcmp(k, "params") &&
		    strcmp(k, "id"))
			return rpc_error(id, RPC_INVALID_REQUEST, "Invalid Request: unknown member");
	}
	if (json_object_object_get_ex(req, "params", &params) && params &&
	    !json_object_is_type(params, json_type_object))
		return rpc_error(id, RPC_INVALID_PARAMS, "params must be an object");
	c.params = params;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i].name, name))
			m = &methods[i];
	if (!m) {
		char msg[160];

		snprintf(msg, sizeof(msg), "Method not found: '%.64s' (rpc_get_methods lists them)",
			 name);
		return notify ? NULL : rpc_error(id, RPC_METHOD_NOT_FOUND, msg);
	}
	ret = m->fn(&c);
	if (ret) {
		if (!c.msg[0])
			snprintf(c.msg, sizeof(c.msg), "%s", strerror(ret < 0 && ret > -4096 ? -ret : EINVAL));
		NVMFD_DBG(LOG_COMP, "%s failed: %s", name, c.msg);
		json_object_put(c.result);
		return notify ? NULL : rpc_error(id, ret, c.msg);
	}
	if (notify) {
		json_object_put(c.result);
		return NULL;
	}
	o = json_object_new_object();
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "result", c.result ? c.result : json_object_new_boolean(true));
	json_object_object_add(o, "id", json_object_get(id));
	return o;
}

/* The old protocol: {"cmd":"stats"} or {"cmd":"config"}. */
static void legacy_call(struct nvmfd_rpc *r, int fd, json_object *o)
{
	json_object *cmd;
	const char *name;
	char *out = NULL;
	size_t out_len = 0;
	FILE *mem;
	int ret;

	if (!o || !json_object_is_type(o, json_type_object)) {
		legacy_error(fd, "expected exactly one JSON object per line: "
				 "{\"cmd\":\"stats\"} or {\"cmd\":\"config\"}");
		return;
	}
	if (!json_object_object_get_ex(o, "cmd", &cmd) || !json_object_is_type(cmd, json_type_string)) {
		legacy_error(fd, "expected {\"cmd\":\"stats\"} or {\"cmd\":\"config\"}");
		return;
	}
	name = json_object_get_string(cmd);
	if (strcmp(name, "stats") && strcmp(name, "config")) {
		char msg[128];

		snprintf(msg, sizeof(msg), "unknown cmd '%.64s' (stats, config)", name);
		legacy_error(fd, msg);
		return;
	}
	mem = open_memstream(&out, &out_len);
	if (!mem) {
		legacy_error(fd, "out of memory");
		return;
	}
	ret = !strcmp(name, "stats") ? nvmfd_tgt_stats_json(r->tgt, mem) : write_config(r, mem, false);
	if (fclose(mem) || ret) {
		legacy_error(fd, ret ? strerror(-ret) : "out of memory");
		free(out);
		return;
	}
	/* one line per reply: strip the pretty-printer's newlines */
	for (size_t i = 0; i < out_len; i++)
		if (out[i] == '\n')
			out[i] = ' ';
	send_all(fd, out, out_len);
	send_all(fd, "\n", 1);
	free(out);
}

/* ---------------------------------------------------------------------- */
/* SIGHUP: reload the config file                                         */

static int find_nqn(const struct nvmfd_cfg *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nr_subsys; i++)
		if (!strcmp(cfg->subsys[i].nqn, nqn))
			return (int)i;
	return -1;
}

static bool same_device(const struct nvmfd_cfg_ns *a, const struct nvmfd_cfg_ns *b)
{
	return !strcmp(a->path, b->path) && a->bk.type == b->bk.type && a->bk.size == b->bk.size &&
	       a->bk.lba_shift == b->bk.lba_shift && a->bk.direct == b->bk.direct &&
	       a->bk.read_only == b->bk.read_only && a->has_uuid == b->has_uuid &&
	       !memcmp(a->uuid, b->uuid, 16) &&
	       a->has_nguid == b->has_nguid && !memcmp(a->nguid, b->nguid, 16);
}

struct tally {
	unsigned int applied, failed, skipped;
};

static void count(struct tally *t, struct call *c, int ret, const char *what)
{
	if (ret) {
		t->failed++;
		NVMFD_ERR(LOG_COMP, "reload: %s: %s", what, c->msg);
	} else {
		t->applied++;
	}
}

/* One host's settings in a config (zeros when it does not define it). */
struct host_secrets {
	struct nvmfd_cfg_dhchap dh;
	struct nvmfd_cfg_psk psk;
};

static void host_secrets(const struct nvmfd_cfg *cfg, const char *nqn, struct host_secrets *hs)
{
	int i = cfg ? nvmfd_cfg_host_find(cfg, nqn) : -1;

	memset(hs, 0, sizeof(*hs));
	if (i >= 0) {
		hs->dh = cfg->host_dhchap[i];
		hs->psk = cfg->host_psk[i];
	}
}

/*
 * Top-level hosts' DH-HMAC-CHAP settings and TLS PSKs, and the global PSK
 * (keys re-read from their files): applied before the subsystems' allowed
 * hosts, so that a newly allowed host with a key is never allowed without
 * it, even briefly. Only what changed in the file since it was last read
 * is applied (r->base): a host the file no longer defines loses its
 * settings, while keys set over the control socket for a host the file
 * leaves as it was (or does not define) are kept, and logged. Queues already
 * authenticated stay so until they re-authenticate, which then uses the
 * new key; new Connects and TLS handshakes use the new settings.
 */
static void reload_hosts(struct nvmfd_rpc *r, const struct nvmfd_cfg *n, struct tally *t)
{
	struct nvmfd_cfg *cfg = r->cfg;
	struct host_secrets bs, ns, os;
	static const struct host_secrets none;

	for (unsigned int i = 0; i < n->nr_hosts; i++) {
		int oi = nvmfd_cfg_host_find(cfg, n->hosts[i]);
		bool dh, psk;

		if (nvmfd_cfg_host_find(n, n->hosts[i]) != (int)i)
			continue; /* a repeated entry (validated equal) */
		host_secrets(n, n->hosts[i], &ns);
		host_secrets(cfg, n->hosts[i], &os);
		dh = memcmp(&os.dh, &ns.dh, sizeof(ns.dh)) != 0;
		psk = memcmp(&os.psk, &ns.psk, sizeof(ns.psk)) != 0;
		if (r->base) {
			/* unchanged in the file: what runs stays (maybe set live) */
			host_secrets(r->base, n->hosts[i], &bs);
			if (!memcmp(&bs.dh, &ns.dh, sizeof(ns.dh)) && dh) {
				NVMFD_INFO(LOG_COMP, "reload: host %s: DH-HMAC-CHAP settings kept (set "
					   "over the control socket; the file's are unchanged)",
					   n->hosts[i]);
				dh = false;
			}
			if (!memcmp(&bs.psk, &ns.psk, sizeof(ns.psk)) && psk) {
				NVMFD_INFO(LOG_COMP, "reload: host %s: TLS PSK kept (the file's is "
					   "unchanged)", n->hosts[i]);
				psk = false;
			}
			nvmfd_auth_wipe(&bs, sizeof(bs));
		}
		if (!dh && !psk)
			goto next;
		if (oi < 0 && !memcmp(&ns, &none, sizeof(none)))
			goto next; /* host_add() defines it when a subsystem allows it */
		if (oi < 0 && cfg->nr_hosts >= NVMFD_CFG_MAX_HOSTS) {
			NVMFD_ERR(LOG_COMP, "reload: host %s: the config defines %d hosts, the "
				  "most", n->hosts[i], NVMFD_CFG_MAX_HOSTS);
			t->failed++;
			goto next;
		}
		nvmfd_tgt_cfg_lock(r->tgt);
		if (oi < 0) {
			oi = (int)cfg->nr_hosts;
			snprintf(cfg->hosts[cfg->nr_hosts++], sizeof(cfg->hosts[0]), "%s",
				 n->hosts[i]);
		}
		if (dh)
			cfg->host_dhchap[oi] = ns.dh;
		if (psk)
			cfg->host_psk[oi] = ns.psk;
		nvmfd_tgt_cfg_unlock(r->tgt);
		if (dh)
			NVMFD_INFO(LOG_COMP, "reload: host %s: DH-HMAC-CHAP settings %s", n->hosts[i],
				   ns.dh.key[0] ? "changed" : "removed");
		if (psk)
			NVMFD_INFO(LOG_COMP, "reload: host %s: TLS PSK %s", n->hosts[i],
				   ns.psk.psk[0] ? "changed" : "removed");
		t->applied += (unsigned int)dh + (unsigned int)psk;
next:
		nvmfd_auth_wipe(&ns, sizeof(ns));
		nvmfd_auth_wipe(&os, sizeof(os));
	}
	for (unsigned int i = 0; i < cfg->nr_hosts; i++) {
		if (nvmfd_cfg_host_find(n, cfg->hosts[i]) >= 0)
			continue;
		host_secrets(cfg, cfg->hosts[i], &os);
		if (!memcmp(&os, &none, sizeof(none)))
			continue;
		nvmfd_auth_wipe(&os, sizeof(os));
		if (r->base && nvmfd_cfg_host_find(r->base, cfg->hosts[i]) < 0) {
			NVMFD_INFO(LOG_COMP, "reload: host %s is not in the file (added over the "
				   "control socket): its keys are kept", cfg->hosts[i]);
			continue;
		}
		nvmfd_tgt_cfg_lock(r->tgt);
		nvmfd_auth_wipe(&cfg->host_dhchap[i], sizeof(cfg->host_dhchap[i]));
		nvmfd_auth_wipe(&cfg->host_psk[i], sizeof(cfg->host_psk[i]));
		nvmfd_tgt_cfg_unlock(r->tgt);
		NVMFD_INFO(LOG_COMP, "reload: host %s is no longer defined: DH-HMAC-CHAP settings "
			   "and TLS PSK removed", cfg->hosts[i]);
		t->applied++;
	}
	/* the global PSK (nvmfd.tls.psk, --psk without a host) */
	if (memcmp(&cfg->psk, &n->psk, sizeof(n->psk))) {
		if (r->base && !memcmp(&r->base->psk, &n->psk, sizeof(n->psk))) {
			NVMFD_INFO(LOG_COMP, "reload: the global TLS PSK is kept (the file's is "
				   "unchanged)");
		} else {
			nvmfd_tgt_cfg_lock(r->tgt);
			cfg->psk = n->psk;
			nvmfd_tgt_cfg_unlock(r->tgt);
			NVMFD_INFO(LOG_COMP, "reload: the global TLS PSK %s",
				   n->psk.psk[0] ? "changed" : "removed");
			t->applied++;
		}
	}
}

static bool subsys_lists(const struct nvmfd_cfg_subsys *s, const char *host)
{
	for (unsigned int i = 0; i < s->nr_hosts; i++)
		if (!strcmp(s->hosts[i], host))
			return true;
	return false;
}

static void reload_subsys(struct nvmfd_rpc *r, int oi, const struct nvmfd_cfg_subsys *ns,
			  struct tally *t)
{
	struct nvmfd_cfg_subsys *os = &r->cfg->subsys[oi];
	/* the subsystem as the file last had it; a subsystem new to the file
	 * (or created over the socket) has none: the file decides */
	int bi = r->base ? find_nqn(r->base, ns->nqn) : -1;
	const struct nvmfd_cfg_subsys *bs = bi >= 0 ? &r->base->subsys[bi] : NULL;
	struct call c = { .r = r };
	uint32_t gone[NVMFD_CFG_MAX_NS];
	unsigned int nr_gone = 0;
	char what[320];

	if (strcmp(os->serial, ns->serial) || strcmp(os->model, ns->model) ||
	    os->version != ns->version || strcmp(os->firmware, ns->firmware) ||
	    os->ieee_oui != ns->ieee_oui || os->cntlid_min != ns->cntlid_min ||
	    os->cntlid_max != ns->cntlid_max || os->qid_max != ns->qid_max) {
		NVMFD_WARN(LOG_COMP, "reload: subsystem %s: changed attributes (serial, model, "
			   "version, firmware, ieee_oui, cntlid, qid_max) need a restart: not applied",
			   os->nqn);
		t->skipped++;
	}
	if (os->allow_any_host != ns->allow_any_host) {
		set_any_host(r, os, ns->allow_any_host);
		t->applied++;
	}
	/* hosts: remove those gone from the file (from a copy: the list
	 * shifts), add new ones; with the file as last read known (@bs), a host
	 * the file did not list (allowed over the control socket) stays, and one it still lists but the control socket removed stays
	 * removed: only the file's own changes apply */
	for (unsigned int i = os->nr_hosts; i-- > 0;) {
		bool keep = false;

		for (unsigned int k = 0; k < ns->nr_hosts; k++)
			keep |= !strcmp(os->hosts[i], ns->hosts[k]);
		if (!keep && bs && !subsys_lists(bs, os->hosts[i])) {
			NVMFD_INFO(LOG_COMP, "reload: subsystem %s: host %s kept: not in the file "
				   "(allowed over the control socket; nvmf_subsystem_remove_host "
				   "removes it)", os->nqn, os->hosts[i]);
			keep = true;
		}
		if (!keep) {
			char host[256];

			snprintf(host, sizeof(host), "%s", os->hosts[i]);
			snprintf(what, sizeof(what), "%s: remove host %s", os->nqn, host);
			count(t, &c, host_remove(&c, oi, host), what);
		}
	}
	for (unsigned int k = 0; k < ns->nr_hosts; k++) {
		bool have = false;

		for (unsigned int i = 0; i < os->nr_hosts; i++)
			have |= !strcmp(os->hosts[i], ns->hosts[k]);
		if (!have && bs && subsys_lists(bs, ns->hosts[k])) {
			NVMFD_INFO(LOG_COMP, "reload: subsystem %s: host %s stays removed (removed "
				   "over the control socket; the file's entry is unchanged)",
				   os->nqn, ns->hosts[k]);
			have = true;
		}
		if (!have) {
			snprintf(what, sizeof(what), "%s: add host %s", os->nqn, ns->hosts[k]);
			count(t, &c, host_add(&c, oi, ns->hosts[k]), what);
		}
	}
	/* namespaces by NSID: gone ones removed, new ones added; a changed one
	 * is reported (remove it, reload, then add it back) */
	for (unsigned int i = 0; i < os->nr_ns; i++) {
		const struct nvmfd_cfg_ns *o = &os->ns[i], *m = NULL;

		for (unsigned int k = 0; k < ns->nr_ns; k++)
			if (ns->ns[k].nsid == o->nsid)
				m = &ns->ns[k];
		if (!m) {
			gone[nr_gone++] = o->nsid;
		} else if (!same_device(o, m)) {
			NVMFD_WARN(LOG_COMP, "reload: subsystem %s namespace %u changed (%s -> %s): "
				   "not applied (remove it, reload, add it back)", os->nqn, o->nsid,
				   o->path, m->path);
			t->skipped++;
		}
	}
	/* same device, "enable" changed */
	for (unsigned int i = 0; i < os->nr_ns; i++)
		for (unsigned int k = 0; k < ns->nr_ns; k++)
			if (ns->ns[k].nsid == os->ns[i].nsid && same_device(&os->ns[i], &ns->ns[k]) &&
			    ns->ns[k].enable != os->ns[i].enable) {
				snprintf(what, sizeof(what), "%s: %s namespace %u", os->nqn,
					 ns->ns[k].enable ? "enable" : "disable", os->ns[i].nsid);
				count(t, &c, ns_enable(&c, oi, os->ns[i].nsid, ns->ns[k].enable),
				      what);
			}
	for (unsigned int i = 0; i < nr_gone; i++) {
		snprintf(what, sizeof(what), "%s: remove namespace %u", os->nqn, gone[i]);
		count(t, &c, ns_remove(&c, oi, gone[i]), what);
	}
	for (unsigned int k = 0; k < ns->nr_ns; k++) {
		bool have = false;
		struct nvmfd_cfg_ns cn;

		for (unsigned int i = 0; i < os->nr_ns; i++)
			have |= os->ns[i].nsid == ns->ns[k].nsid;
		if (have)
			continue;
		cn = ns->ns[k];
		cn.bk.path = cn.path;
		snprintf(what, sizeof(what), "%s: add namespace %u (%.64s)", os->nqn, cn.nsid,
			 cn.path);
		count(t, &c, ns_add(&c, oi, &cn), what);
	}
}

/*
 * Listeners: the subsystems each running listener exports follow the file
 * (links added, links dropped with their controllers disconnected, as
 * nvmf_subsystem_add/remove_listener). What would open or close a socket
 * (a listener new to the file or gone from it, dropping a listener's last
 * link) or change a port's settings is reported and left for a restart or
 * the control socket's listener methods.
 */
static void reload_ports(struct nvmfd_rpc *r, const struct nvmfd_cfg *n, struct tally *t)
{
	struct nvmfd_cfg *cfg = r->cfg;
	bool seen[NVMFD_CFG_MAX_PORTS] = { false };

	for (unsigned int i = 0; i < n->nr_ports; i++) {
		const struct nvmfd_cfg_port *np = &n->ports[i];
		struct nvmfd_cfg_port *q;
		int pi = find_port(r, np);

		if (pi < 0) {
			NVMFD_WARN(LOG_COMP, strchr(np->traddr, ':') ?
				   "reload: listener [%s]:%s is new: not applied (restart, or "
				   "nvmf_subsystem_add_listener)" :
				   "reload: listener %s:%s is new: not applied (restart, or "
				   "nvmf_subsystem_add_listener)", np->traddr, np->trsvcid);
			t->skipped++;
			continue;
		}
		seen[pi] = true;
		q = &cfg->ports[pi];
		if (q->inline_data_size != np->inline_data_size ||
		    q->max_queue_size != np->max_queue_size || q->treq != np->treq ||
		    q->tls != np->tls) {
			NVMFD_WARN(LOG_COMP, "reload: port %u: changed settings (inline_data_size, "
				   "max_queue_size, treq, tsas) need a restart: not applied",
				   q->portid);
			t->skipped++;
		}
		for (unsigned int k = 0; k < np->nr_subsys; k++) {
			int si = find_nqn(cfg, n->subsys[np->subsys_idx[k]].nqn);
			bool linked = false;

			if (si < 0)
				continue; /* its creation failed: counted there */
			for (unsigned int j = 0; j < q->nr_subsys; j++)
				linked |= q->subsys_idx[j] == (unsigned int)si;
			if (linked)
				continue;
			if (q->nr_subsys >= NVMFD_CFG_MAX_SUBSYS) {
				NVMFD_ERR(LOG_COMP, "reload: port %u exports %d subsystems, the most",
					  q->portid, NVMFD_CFG_MAX_SUBSYS);
				t->failed++;
				continue;
			}
			port_link(r, pi, si);
			t->applied++;
		}
		for (unsigned int k = q->nr_subsys; k-- > 0;) {
			const char *nqn = cfg->subsys[q->subsys_idx[k]].nqn;
			bool keep = false;

			for (unsigned int j = 0; j < np->nr_subsys; j++)
				keep |= !strcmp(n->subsys[np->subsys_idx[j]].nqn, nqn);
			if (keep)
				continue;
			if (q->nr_subsys == 1) {
				NVMFD_WARN(LOG_COMP, "reload: port %u: dropping its last subsystem %s "
					   "would close it: not applied (nvmf_subsystem_remove_"
					   "listener closes a listener)", q->portid, nqn);
				t->skipped++;
				continue;
			}
			port_unlink(r, pi, k);
			t->applied++;
		}
	}
	for (unsigned int pi = 0; pi < cfg->nr_ports; pi++)
		if (!seen[pi]) {
			NVMFD_WARN(LOG_COMP, "reload: listener port %u is no longer in the file: not "
				   "applied (restart, or nvmf_subsystem_remove_listener)",
				   cfg->ports[pi].portid);
			t->skipped++;
		}
}

/* Two resolved exec sections differ in what they run: a file that now
 * names the mode it defaulted to (or stops naming it) changes nothing,
 * except that an explicit auto no longer keeps a given cq_pool shared
 * (nvmfd_cfg_exec_resolve()). */
static bool exec_changed(const struct nvmfd_cfg_exec *b, const struct nvmfd_cfg_exec *n)
{
	struct nvmfd_cfg_exec x = *n;

	if (!x.cq_pool_shared) {
		x.exec_mode_set = b->exec_mode_set;
		x.exec_mode_default = b->exec_mode_default;
	}
	return memcmp(b, &x, sizeof(x)) != 0;
}

/*
 * The file's top-level "nvmfd" settings (execution, limits, timeouts,
 * statistics, control socket) are read once at start: a change to them
 * since the file was last read (r->base; not the running values, which
 * command-line tuning flags may have changed) is reported, not applied.
 */
static void reload_globals(struct nvmfd_rpc *r, const struct nvmfd_cfg *n, struct tally *t)
{
	const struct nvmfd_cfg *b = r->base;
	char names[256] = "";
	size_t off = 0;

	if (!b)
		return;
#define GLOBAL_CHANGED(cond, name)                                                          \
	do {                                                                                \
		if ((cond) && off < sizeof(names))                                          \
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",     \
						off ? ", " : "", name);                     \
	} while (0)
	GLOBAL_CHANGED(exec_changed(&b->exec, &n->exec), "exec");
	GLOBAL_CHANGED(b->max_io_size != n->max_io_size, "max_io_size");
	GLOBAL_CHANGED(b->maxh2cdata != n->maxh2cdata, "maxh2cdata");
	GLOBAL_CHANGED(b->kato_grace_ms != n->kato_grace_ms, "kato_grace_ms");
	GLOBAL_CHANGED(b->auth_timeout_ms != n->auth_timeout_ms, "auth_timeout_ms");
	GLOBAL_CHANGED(b->auth_fail_burst != n->auth_fail_burst, "auth_fail_burst");
	GLOBAL_CHANGED(b->auth_fail_interval_ms != n->auth_fail_interval_ms,
		       "auth_fail_interval_ms");
	GLOBAL_CHANGED(b->stats_interval_s != n->stats_interval_s, "stats_interval");
	GLOBAL_CHANGED(strcmp(b->control_path, n->control_path), "control");
	GLOBAL_CHANGED(b->tls_handshake_timeout_ms != n->tls_handshake_timeout_ms,
		       "tls.handshake_timeout_ms");
#undef GLOBAL_CHANGED
	if (!off)
		return;
	NVMFD_WARN(LOG_COMP, "reload: nvmfd settings changed (%s): they are read at start, "
			     "restart to apply: not applied", names);
	t->skipped++;
}

int nvmfd_rpc_reload(struct nvmfd_rpc *r, const char *path)
{
	struct nvmfd_cfg *n = malloc(sizeof(*n));
	char err[NVMFD_CFG_ERRLEN], what[320];
	struct call c = { .r = r };
	struct tally t = { 0 };

	if (!n)
		return -ENOMEM;
	if (cfg_load_file(n, path, err)) {
		NVMFD_ERR(LOG_COMP, "reload: %s: %s; nothing changed", path, err);
		cfg_free(n);
		return -EINVAL;
	}
	/* subsystems gone from the file: deleted (their controllers closed,
	 * their port links dropped), as nvmf_delete_subsystem */
	for (unsigned int i = r->cfg->nr_subsys; i-- > 0;) {
		json_object *params;

		if (find_nqn(n, r->cfg->subsys[i].nqn) >= 0)
			continue;
		snprintf(what, sizeof(what), "delete subsystem %s", r->cfg->subsys[i].nqn);
		params = json_object_new_object();
		json_object_object_add(params, "nqn",
				       json_object_new_string(r->cfg->subsys[i].nqn));
		c.params = params;
		count(&t, &c, params ? m_delete_subsys(&c) : fail(&c, -ENOMEM, "out of memory"),
		      what);
		json_object_put(c.result);
		c.result = NULL;
		c.params = NULL;
		json_object_put(params);
	}
	reload_hosts(r, n, &t);
	/* new ones: created bare, then their hosts and namespaces below */
	for (unsigned int i = 0; i < n->nr_subsys; i++) {
		if (find_nqn(r->cfg, n->subsys[i].nqn) >= 0)
			continue;
		snprintf(what, sizeof(what), "create subsystem %s", n->subsys[i].nqn);
		count(&t, &c, subsys_insert(&c, &n->subsys[i]), what);
	}
	for (unsigned int i = 0; i < n->nr_subsys; i++) {
		int oi = find_nqn(r->cfg, n->subsys[i].nqn);

		if (oi >= 0)
			reload_subsys(r, oi, &n->subsys[i], &t);
	}
	reload_ports(r, n, &t);
	reload_globals(r, n, &t);
	NVMFD_INFO(LOG_COMP, "reload %s: %u change(s) applied, %u failed, %u not applicable "
		   "while running", path, t.applied, t.failed, t.skipped);
	/* the next reload compares with this file */
	cfg_free(r->base);
	r->base = n;
	return t.failed ? -EIO : 0;
}

/* ---------------------------------------------------------------------- */
/* Connections                                                            */

static void client_close(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	cl->fd = -1;
	cl->len = 0;
	cl->mode = MODE_NEW;
}

/* Serve the complete lines in @cl's buffer. @eof: the client shut down its
 * side, so a last line without newline counts. Return: false to close. */
static bool client_lines(struct nvmfd_rpc *r, struct client *cl, bool eof)
{
	for (;;) {
		char *nl = memchr(cl->buf, '\n', cl->len);
		size_t line_len, rest;
		json_object *o;
		bool ok;

		if (!nl && !(eof && cl->len))
			return !eof;
		line_len = nl ? (size_t)(nl - cl->buf) : cl->len;
		cl->buf[line_len] = '\0';
		if (line_len && cl->buf[line_len - 1] == '\r')
			cl->buf[line_len - 1] = '\0';
		rest = nl ? cl->len - line_len - 1 : 0;
		o = parse_line(cl->buf, &ok);
		if (cl->mode == MODE_NEW) {
			json_object *v;

			if (ok && o && json_object_is_type(o, json_type_object) &&
			    json_object_object_get_ex(o, "jsonrpc", &v)) {
				cl->mode = MODE_RPC;
			} else {
				/* old protocol: exactly one line, one reply, close */
				if (!cl->buf[strspn(cl->buf, " \t")]) {
					json_object_put(o);
					return false;
				}
				if (rest || !ok)
					legacy_error(cl->fd, "expected exactly one JSON object per line: "
							     "{\"cmd\":\"stats\"} or {\"cmd\":\"config\"}");
				else
					legacy_call(r, cl->fd, o);
				json_object_put(o);
				return false;
			}
		}
		if (!ok) {
			if (cl->buf[strspn(cl->buf, " \t")])
				send_obj(cl->fd, rpc_error(NULL, RPC_PARSE_ERROR,
							   "Parse error: one JSON object per line"));
		} else {
			send_obj(cl->fd, rpc_call(r, o));
		}
		json_object_put(o);
		memmove(cl->buf, cl->buf + cl->len - rest, rest);
		cl->len = rest;
		if (!nl)
			return false;
	}
}

static void client_read(struct nvmfd_rpc *r, struct client *cl)
{
	size_t cap = cl->mode == MODE_RPC ? sizeof(cl->buf) : RPC_FIRST_LINE_MAX;
	ssize_t n = recv(cl->fd, cl->buf + cl->len, cap - 1 - cl->len, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_lines(r, cl, true);
		client_close(cl);
		return;
	}
	cl->active_ns = nvmfd__mono_ns();
	cl->len += (size_t)n;
	if (!client_lines(r, cl, false)) {
		client_close(cl);
		return;
	}
	if (cl->len + 1 >= cap) {
		char drain[4096];

		if (cl->mode == MODE_RPC)
			send_obj(cl->fd, rpc_error(NULL, RPC_INVALID_REQUEST, "request too long"));
		else
			legacy_error(cl->fd, "request too long");
		/* read what is pending so that close() does not reset the reply */
		shutdown(cl->fd, SHUT_WR);
		for (size_t total = 0; total < (1u << 20);) {
			ssize_t d = recv(cl->fd, drain, sizeof(drain), MSG_DONTWAIT);

			if (d <= 0)
				break;
			total += (size_t)d;
		}
		client_close(cl);
	}
}

/*
 * Accept one pending connection. Return true when it took a free slot (the
 * caller may accept the next one), false when none was pending or the
 * connection was refused or took an idle client's slot.
 */
static bool accept_one(struct nvmfd_rpc *r)
{
	struct timeval tv = { .tv_sec = RPC_SEND_TIMEOUT_MS / 1000 };
	struct client *cl = NULL;
	bool took_free = true;
	int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return false;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < NVMFD_RPC_MAX_CLIENTS && !cl; i++)
		if (r->clients[i].fd < 0)
			cl = &r->clients[i];
	if (!cl) {
		uint64_t now = nvmfd__mono_ns();
		struct client *idle = &r->clients[0];

		for (int i = 1; i < NVMFD_RPC_MAX_CLIENTS; i++)
			if (r->clients[i].active_ns < idle->active_ns)
				idle = &r->clients[i];
		if (now - idle->active_ns < (uint64_t)RPC_IDLE_EVICT_MS * 1000000u) {
			legacy_error(fd, "too many control connections (16): try again later");
			close(fd);
			return false;
		}
		NVMFD_WARN(LOG_COMP, "control socket: all %d connections taken: closing one idle "
				     "for %" PRIu64 " s for a new client",
			   NVMFD_RPC_MAX_CLIENTS, (now - idle->active_ns) / 1000000000u);
		client_close(idle);
		cl = idle;
		took_free = false;
	}
	cl->fd = fd;
	cl->len = 0;
	cl->mode = MODE_NEW;
	cl->active_ns = nvmfd__mono_ns();
	return took_free;
}

int nvmfd_rpc_create(int lfd, struct nvmfd_tgt *tgt, struct nvmfd_cfg *cfg, const char *save_path,
		     const struct nvmfd_cfg *file_cfg, struct nvmfd_rpc **out)
{
	struct nvmfd_rpc *r = calloc(1, sizeof(*r));
	char err[NVMFD_CFG_ERRLEN];

	if (!r)
		return -ENOMEM;
	r->lfd = lfd;
	r->tgt = tgt;
	r->cfg = cfg;
	if (save_path) {
		snprintf(r->save_path, sizeof(r->save_path), "%s", save_path);
		/* the file as it was read at startup, not read again: a file
		 * changed in between would be taken as applied */
		if (file_cfg) {
			r->base = malloc(sizeof(*r->base));
			if (r->base) {
				memcpy(r->base, file_cfg, sizeof(*r->base));
				/* as cfg_load_file() reads it on each reload */
				nvmfd_cfg_exec_resolve(r->base);
				if (nvmfd_cfg_validate(r->base, err)) {
					cfg_free(r->base);
					r->base = NULL;
				}
			}
		}
	}
	for (int i = 0; i < NVMFD_RPC_MAX_CLIENTS; i++)
		r->clients[i].fd = -1;
	*out = r;
	return 0;
}

void nvmfd_rpc_destroy(struct nvmfd_rpc **rp)
{
	struct nvmfd_rpc *r = *rp;

	if (!r)
		return;
	for (int i = 0; i < NVMFD_RPC_MAX_CLIENTS; i++)
		client_close(&r->clients[i]);
	cfg_free(r->base);
	free(r);
	*rp = NULL;
}

int nvmfd_rpc_pollfds(struct nvmfd_rpc *r, struct pollfd *pfd)
{
	int n = 0;

	pfd[n++] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
	for (int i = 0; i < NVMFD_RPC_MAX_CLIENTS; i++)
		pfd[n++] = (struct pollfd){ .fd = r->clients[i].fd, .events = POLLIN };
	return n;
}

void nvmfd_rpc_handle(struct nvmfd_rpc *r, const struct pollfd *pfd, int n)
{
	for (int i = 1; i < n && i <= NVMFD_RPC_MAX_CLIENTS; i++)
		if (pfd[i].fd >= 0 && pfd[i].revents && r->clients[i - 1].fd == pfd[i].fd)
			client_read(r, &r->clients[i - 1]);
	/* every connection waiting in the backlog that a free slot can take;
	 * with all slots taken, one (refused or given an idle client's slot) */
	if (pfd[0].revents & POLLIN)
		for (int i = 0; i < NVMFD_RPC_MAX_CLIENTS && accept_one(r); i++)
			;
}
