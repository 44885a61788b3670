// SPDX-License-Identifier: MIT
/*
 * tls.c - TLS settings of the configuration (doc/tls.md): the PSKs (per
 * host in hosts[].tls, global in nvmfd.tls), the handshake timeout, the
 * --psk flag value and the treq names. A PSK is checked when the config
 * is loaded, so a bad key stops nvmfd at startup naming the key, never
 * quoting it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cfg/cfg.h"
#include "cfg/cfg_int.h"
#include "internal/auth.h"

int nvmfd_cfg_tls_psk(const char *val, const char *base_dir, const char *what,
		      struct nvmfd_cfg_psk *psk, char err[NVMFD_CFG_ERRLEN])
{
	struct nvmfd_auth_psk k;
	int ret;

	ret = nvmfd__cfg_secret_read(val, base_dir, what, "TLS PSK", psk->psk, psk->file, err);
	if (ret)
		return ret;
	ret = nvmfd_auth_psk_parse(psk->psk, &k);
	nvmfd_auth_wipe(&k, sizeof(k));
	if (ret < 0) {
		nvmfd_auth_wipe(psk->psk, sizeof(psk->psk));
		return cfg_err(err,
			      "%s%s%s: not a valid TLS PSK (expected the interchange format "
			      "NVMeTLSkey-1:hh:<base64>: with hh 00, 01 or 02, 32 or 48 key "
			      "bytes and their CRC-32; e.g. from 'nvme gen-tls-key')",
			      what, psk->file[0] ? ": " : "", psk->file);
	}
	return 0;
}

int nvmfd_cfg_parse_treq(const char *s)
{
	if (!strcmp(s, "required"))
		return NVMFD_TREQ_SECURE_REQUIRED;
	if (!strcmp(s, "not required") || !strcmp(s, "not-required"))
		return NVMFD_TREQ_SECURE_NOT_REQUIRED;
	if (!strcmp(s, "not specified") || !strcmp(s, "not-specified"))
		return NVMFD_TREQ_SECURE_NOT_SPECIFIED;
	return -EINVAL;
}

static int cfg_v0_parse(const char *s, bool *spdk)
{
	if (!strcmp(s, "retained"))
		*spdk = false;
	else if (!strcmp(s, "spdk"))
		*spdk = true;
	else
		return -EINVAL;
	return 0;
}

int nvmfd_cfg_parse_psk(const char *spec, char nqn[256], struct nvmfd_cfg_psk *psk,
			char err[NVMFD_CFG_ERRLEN])
{
	char buf[NVMFD_CFG_SECRET_PATH_MAX + 256 + 64];
	char what[320], *key = buf, *opt, *eq;
	int ret = -EINVAL;

	memset(psk, 0, sizeof(*psk));
	nqn[0] = '\0';
	if (strlen(spec) >= sizeof(buf))
		return cfg_err(err, "--psk: value too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	eq = strchr(buf, '=');
	/* "nqn....=KEY": a host's PSK; a PSK itself has no '=' before its
	 * base64 ends, but base64 may end in '=': only an "nqn." prefix counts */
	if (eq && !strncmp(buf, "nqn.", 4)) {
		*eq = '\0';
		if (strlen(buf) > 223) {
			ret = cfg_err(err, "--psk: host NQN longer than 223 bytes");
			goto out;
		}
		snprintf(nqn, 256, "%s", buf);
		key = eq + 1;
	}
	opt = strchr(key, ',');
	if (opt) {
		*opt++ = '\0';
		if (strncmp(opt, "v0=", 3) || cfg_v0_parse(opt + 3, &psk->v0_spdk)) {
			char *e = strchr(opt, '=');

			if (e)
				*e = '\0';
			ret = cfg_err(err, "--psk: unknown option '%s' (v0=retained or v0=spdk)", opt);
			goto out;
		}
	}
	if (!key[0]) {
		ret = cfg_err(err, "--psk: no key (expected [HOSTNQN=]KEY|@FILE[,v0=spdk])");
		goto out;
	}
	snprintf(what, sizeof(what), "--psk%s%s", nqn[0] ? " " : "", nqn);
	ret = nvmfd_cfg_tls_psk(key, NULL, what, psk, err);
out:
	nvmfd_auth_wipe(buf, sizeof(buf));
	if (ret)
		nvmfd_auth_wipe(psk, sizeof(*psk));
	return ret;
}

const struct nvmfd_cfg_psk *nvmfd_cfg_psk_find(const struct nvmfd_cfg *cfg, const char *hostnqn)
{
	int i = nvmfd_cfg_host_find(cfg, hostnqn);

	if (i >= 0 && cfg->host_psk[i].psk[0])
		return &cfg->host_psk[i];
	return cfg->psk.psk[0] ? &cfg->psk : NULL;
}

/*
 * nvmfd__cfg_load_tls() - a "tls" object: {"psk": KEY|"@FILE", "v0":
 * "retained"|"spdk"} and, when @timeout is not NULL (nvmfd.tls),
 * "handshake_timeout_ms". @path names the object in messages.
 * Return: 0 or -EINVAL (@err set; @psk wiped).
 */
int nvmfd__cfg_load_tls(json_object *o, const char *path, const char *base_dir,
			struct nvmfd_cfg_psk *psk, uint32_t *timeout, char *err)
{
	json_object *v;
	char what[300];
	int ret;

	if (!json_object_is_type(o, json_type_object))
		return cfg_err(err, "%s: expected an object", path);
	json_object_object_foreach(o, k, val) {
		(void)val;
		if (strcmp(k, "psk") && strcmp(k, "v0") &&
		    (!timeout || strcmp(k, "handshake_timeout_ms")))
			return cfg_err(err, "%s.%s: unknown key (psk, v0%s)", path, k,
				      timeout ? ", handshake_timeout_ms" : "");
	}
	memset(psk, 0, sizeof(*psk));
	if (json_object_object_get_ex(o, "psk", &v)) {
		snprintf(what, sizeof(what), "%s.psk", path);
		if (!json_object_is_type(v, json_type_string))
			return cfg_err(err, "%s: expected a string", what);
		if (json_object_get_string(v)[0]) {
			ret = nvmfd_cfg_tls_psk(json_object_get_string(v), base_dir, what, psk, err);
			if (ret)
				return ret;
		}
	}
	if (json_object_object_get_ex(o, "v0", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    cfg_v0_parse(json_object_get_string(v), &psk->v0_spdk)) {
			nvmfd_auth_wipe(psk, sizeof(*psk));
			return cfg_err(err, "%s.v0: expected \"retained\" or \"spdk\"", path);
		}
	}
	if (timeout && json_object_object_get_ex(o, "handshake_timeout_ms", &v)) {
		int64_t t = json_object_get_int64(v);

		if ((!json_object_is_type(v, json_type_int) &&
		     !json_object_is_type(v, json_type_string)) ||
		    (json_object_is_type(v, json_type_string) &&
		     strspn(json_object_get_string(v), "0123456789") !=
			     strlen(json_object_get_string(v))) ||
		    t < 0 || t > 3600000) {
			nvmfd_auth_wipe(psk, sizeof(*psk));
			return cfg_err(err, "%s.handshake_timeout_ms: expected 0..3600000", path);
		}
		*timeout = (uint32_t)t;
	}
	return 0;
}

/*
 * nvmfd__cfg_write_tls() - the "tls" object of @psk (+ the timeout when
 * @timeout >= 0); an inline PSK is written only when @secrets, else
 * "<redacted>". Return: the object or NULL (no memory).
 */
json_object *nvmfd__cfg_write_tls(const struct nvmfd_cfg_psk *psk, int64_t timeout, bool secrets)
{
	json_object *o = json_object_new_object();
	char buf[NVMFD_CFG_SECRET_PATH_MAX + 1];
	const char *val;

	if (!o)
		return NULL;
	if (psk->file[0]) {
		snprintf(buf, sizeof(buf), "@%s", psk->file);
		val = buf;
	} else {
		val = !psk->psk[0] ? "" : secrets ? psk->psk : NVMFD_CFG_REDACTED;
	}
	if (json_object_object_add(o, "psk", json_object_new_string(val)) ||
	    json_object_object_add(o, "v0", json_object_new_string(psk->v0_spdk ? "spdk" :
									      "retained")) ||
	    (timeout >= 0 &&
	     json_object_object_add(o, "handshake_timeout_ms", json_object_new_int64(timeout)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
