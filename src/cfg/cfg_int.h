/* SPDX-License-Identifier: MIT */
/*
 * cfg_int.h - private to src/cfg: helpers shared by its .c files.
 */
#ifndef NVMFD_CFG_INT_H
#define NVMFD_CFG_INT_H

/** nvmfd__cfg_err() - format a message into @err (NVMFD_CFG_ERRLEN bytes;
 *  NULL: none). Return: -EINVAL, for "return cfg_err(err, ...)". */
int nvmfd__cfg_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define cfg_err nvmfd__cfg_err

#include <json-c/json.h>

#include "cfg/cfg.h"

int nvmfd__cfg_secret_read(const char *val, const char *base_dir, const char *what,
			   const char *kind, char key[NVMFD_CFG_SECRET_MAX],
			   char file[NVMFD_CFG_SECRET_PATH_MAX], char err[NVMFD_CFG_ERRLEN]);

/* tls.c: the "tls" objects of hosts[] and nvmfd (doc/tls.md). */
int nvmfd__cfg_load_tls(json_object *o, const char *path, const char *base_dir,
			struct nvmfd_cfg_psk *psk, uint32_t *timeout, char *err);
json_object *nvmfd__cfg_write_tls(const struct nvmfd_cfg_psk *psk, int64_t timeout, bool secrets);

#endif /* NVMFD_CFG_INT_H */
