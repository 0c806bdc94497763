/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_DUMP_H
#define CRIU_DUMP_H

#include "core/opts.h"

int cr_dump(const struct opts *o);
int cr_restore(const struct opts *o);
int cr_check(const struct opts *o);

#endif
