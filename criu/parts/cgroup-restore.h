/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CGROUP_RESTORE_H
#define CRIU_PARTS_CGROUP_RESTORE_H

/* The cgroup part's restore half, its hooks (cgroup-restore.c). */
#include "parts/part.h"

int cg_load_tree(struct rst_ctx *rc);
int cg_load(struct rst_ctx *rc, struct rtask *t);
int cg_prefork(struct rst_ctx *rc);
int cg_forked(struct rst_ctx *rc, struct rtask *root);
int cg_early(struct rst_ctx *rc, struct rtask *t);
int cg_final(struct rst_ctx *rc, struct rtask *t);
void cg_release_tree(struct rst_ctx *rc);

#endif
