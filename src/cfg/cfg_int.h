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

#endif /* NVMFD_CFG_INT_H */
