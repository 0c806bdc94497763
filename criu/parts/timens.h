/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_TIMENS_H
#define CRIU_PARTS_TIMENS_H

#include "parts/part.h"

/* Records the clocks the task sees, at the moment it is frozen. */
int timens_dump(struct dump_ctx *dc, pid_t pid);
/* Loads timens.img; then, right before the first fork, makes criu's
 * children start in a new time namespace continuing those clocks. */
int timens_load(struct rst_ctx *rc);
int timens_prepare(struct rst_ctx *rc);

#endif
