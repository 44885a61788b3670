// SPDX-License-Identifier: MIT
/*
 * dhchap.c - DH-HMAC-CHAP host settings of the configuration: secrets given
 * inline or as @FILE, the --dhchap-key flag value, and the hash / DH group
 * names (nvmet's spellings). The secrets are checked here (they must parse
 * as DHHC-1 representations) so that a bad key is a configuration error
 * naming the key, never a refused host at run time. No message quotes a
 * secret.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/cfg_int.h"
#include "internal/auth.h"

int nvmfd_cfg_host_find(const struct nvmfd_cfg *cfg, const char *nqn)
{
	for (unsigned int i = 0; i < cfg->nr_hosts && i < NVMFD_CFG_MAX_HOSTS; i++)
		if (!strcmp(cfg->hosts[i], nqn))
			return (int)i;
	return -1;
}

bool nvmfd_cfg_has_inline_secrets(const struct nvmfd_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->nr_hosts && i < NVMFD_CFG_MAX_HOSTS; i++) {
		const struct nvmfd_cfg_dhchap *d = &cfg->host_dhchap[i];

		if ((d->key[0] && !d->key_file[0]) || (d->ctrl_key[0] && !d->ctrl_key_file[0]))
			return true;
		if (cfg->host_psk[i].psk[0] && !cfg->host_psk[i].file[0])
			return true;
	}
	return cfg->psk.psk[0] && !cfg->psk.file[0];
}

/*
 * nvmfd__cfg_secret_read() - a secret given as @val: inline, or "@FILE"
 * (the file's first line; relative to @base_dir when not NULL; mode 0600
 * or stricter). @kind names the secret in messages ("DH-HMAC-CHAP secret",
 * "TLS PSK"), @what the key. The caller checks the representation.
 * Return: 0 or -EINVAL (@err set; @key wiped).
 */
int nvmfd__cfg_secret_read(const char *val, const char *base_dir, const char *what,
			   const char *kind, char key[NVMFD_CFG_SECRET_MAX],
			   char file[NVMFD_CFG_SECRET_PATH_MAX], char err[NVMFD_CFG_ERRLEN])
{
	int ret, n;

	file[0] = '\0';
	if (val[0] == '@') {
		const char *path = val + 1;

		if (!path[0])
			return cfg_err(err, "%s: '@' without a file name", what);
		if (path[0] != '/' && base_dir && base_dir[0])
			n = snprintf(file, NVMFD_CFG_SECRET_PATH_MAX, "%s/%s", base_dir, path);
		else
			n = snprintf(file, NVMFD_CFG_SECRET_PATH_MAX, "%s", path);
		if (n < 0 || n >= NVMFD_CFG_SECRET_PATH_MAX) {
			file[0] = '\0';
			return cfg_err(err, "%s: file name longer than %d bytes", what,
				      NVMFD_CFG_SECRET_PATH_MAX - 1);
		}
		ret = nvmfd_auth_read_secret_file(file, key, NVMFD_CFG_SECRET_MAX);
		if (ret == -EPERM)
			return cfg_err(err,
				      "%s: %s: not a regular file, or group/other may access it "
				      "(a secret file must be mode 0600 or stricter)",
				      what, file);
		if (ret == -ELOOP)
			return cfg_err(err, "%s: %s: a symbolic link (secret files are opened "
					   "without following links: name the file itself)",
				      what, file);
		if (ret == -ENODATA)
			return cfg_err(err, "%s: %s: empty (no key on any line)", what, file);
		if (ret == -ENAMETOOLONG)
			return cfg_err(err, "%s: %s: first line is too long for a secret", what,
				      file);
		if (ret < 0)
			return cfg_err(err, "%s: %s: %s", what, file, strerror(-ret));
		/* kept absolute, so a written config reads back from anywhere */
		if (file[0] != '/') {
			char abs[PATH_MAX];

			if (realpath(file, abs) && strlen(abs) < NVMFD_CFG_SECRET_PATH_MAX)
				snprintf(file, NVMFD_CFG_SECRET_PATH_MAX, "%s", abs);
		}
	} else {
		if (!strcmp(val, NVMFD_CFG_REDACTED))
			return cfg_err(err, "%s: the secret was redacted by --print-config; put it "
					   "in a file (mode 0600) and write \"@FILE\"",
				      what);
		if (strlen(val) >= NVMFD_CFG_SECRET_MAX)
			return cfg_err(err, "%s: not a %s (longer than any representation)", what,
				      kind);
		snprintf(key, NVMFD_CFG_SECRET_MAX, "%s", val);
	}
	return 0;
}

int nvmfd_cfg_dhchap_secret(const char *val, const char *base_dir, const char *what,
			    char key[NVMFD_CFG_SECRET_MAX], char file[NVMFD_CFG_SECRET_PATH_MAX],
			    char err[NVMFD_CFG_ERRLEN])
{
	struct nvmfd_auth_key k;
	int ret;

	ret = nvmfd__cfg_secret_read(val, base_dir, what, "DH-HMAC-CHAP secret", key, file, err);
	if (ret)
		return ret;
	ret = nvmfd_auth_key_parse(key, &k);
	nvmfd_auth_wipe(&k, sizeof(k));
	if (ret < 0) {
		nvmfd_auth_wipe(key, NVMFD_CFG_SECRET_MAX);
		return cfg_err(err,
			      "%s%s%s: not a valid DH-HMAC-CHAP secret (expected "
			      "DHHC-1:hh:<base64>: with hh 00..03, 32/48/64 key bytes and "
			      "their CRC-32; e.g. from 'nvme gen-dhchap-key')",
			      what, file[0] ? ": " : "", file);
	}
	return 0;
}

/* "hmac(sha256)" etc. into a one-bit mask. */
int nvmfd_cfg_dhchap_hash(const char *s, uint8_t *mask)
{
	int id = nvmfd_auth_hash_parse(s);

	if (id < 0)
		return id;
	*mask = (uint8_t)(1u << id);
	return 0;
}

int nvmfd_cfg_dhchap_dhgroup(const char *s, uint8_t *mask)
{
	int id = nvmfd_auth_dhgroup_parse(s);

	if (id < 0)
		return id;
	*mask = (uint8_t)(1u << id);
	return 0;
}

int nvmfd_cfg_parse_dhchap(const char *spec, char nqn[256], struct nvmfd_cfg_dhchap *d,
			   char err[NVMFD_CFG_ERRLEN])
{
	char buf[NVMFD_CFG_SECRET_PATH_MAX + 256 + 64];
	char *eq, *opt, *save = NULL;
	int ret = -EINVAL;
	bool first = true;

	memset(d, 0, sizeof(*d));
	if (strlen(spec) >= sizeof(buf))
		return cfg_err(err, "--dhchap-key: value too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	eq = strchr(buf, '=');
	if (!eq || eq == buf) {
		ret = cfg_err(err, "--dhchap-key: expected HOSTNQN=KEY[,ctrl=KEY][,hash=H]"
				  "[,dhgroup=G]");
		goto out;
	}
	*eq = '\0';
	if (strncmp(buf, "nqn.", 4) || strlen(buf) > 223) {
		ret = cfg_err(err, "--dhchap-key: '%s' is not a host NQN (\"nqn.\" prefix, "
				  "<= 223 bytes)",
			     buf);
		goto out;
	}
	snprintf(nqn, 256, "%s", buf);
	for (opt = strtok_r(eq + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char what[320];

		if (first) {
			first = false;
			snprintf(what, sizeof(what), "--dhchap-key %s: host key", nqn);
			ret = nvmfd_cfg_dhchap_secret(opt, NULL, what, d->key, d->key_file, err);
			if (ret)
				goto out;
			continue;
		}
		if (!strncmp(opt, "ctrl=", 5)) {
			snprintf(what, sizeof(what), "--dhchap-key %s: ctrl key", nqn);
			ret = nvmfd_cfg_dhchap_secret(opt + 5, NULL, what, d->ctrl_key,
						      d->ctrl_key_file, err);
			if (ret)
				goto out;
		} else if (!strncmp(opt, "hash=", 5)) {
			if (nvmfd_cfg_dhchap_hash(opt + 5, &d->hashes) < 0) {
				ret = cfg_err(err, "--dhchap-key %s: hash '%s': expected sha256, "
						  "sha384 or sha512",
					     nqn, opt + 5);
				goto out;
			}
		} else if (!strncmp(opt, "dhgroup=", 8)) {
			if (nvmfd_cfg_dhchap_dhgroup(opt + 8, &d->dhgroups) < 0) {
				ret = cfg_err(err, "--dhchap-key %s: dhgroup '%s': expected null or "
						  "ffdhe2048, 3072, 4096, 6144, 8192",
					     nqn, opt + 8);
				goto out;
			}
		} else {
			/* name the option only up to '=': it might be a secret */
			char *e = strchr(opt, '=');

			if (e)
				*e = '\0';
			ret = cfg_err(err, "--dhchap-key %s: unknown option '%s' (ctrl=, hash=, "
					  "dhgroup=)",
				     nqn, opt);
			goto out;
		}
	}
	if (!d->key[0]) {
		ret = cfg_err(err, "--dhchap-key %s: no host key", nqn);
		goto out;
	}
	ret = 0;
out:
	nvmfd_auth_wipe(buf, sizeof(buf));
	if (ret)
		nvmfd_auth_wipe(d, sizeof(*d));
	return ret;
}
