/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_DUMP_H
#define CRIU_DUMP_H

#include "core/opts.h"

int cr_dump(const struct opts *o);
int cr_restore(const struct opts *o);
int cr_check(const struct opts *o);
/*
 * What dump or restore (@cmd) needs of criu's privileges, checked before
 * anything is created or changed: one error naming what is missing.
 */
int check_privileges(const struct opts *o, const char *cmd);
/* criu cpuinfo dump|check (parts/cpuinfo.c) */
int cr_cpuinfo(const struct opts *o, const char *sub);

#endif
