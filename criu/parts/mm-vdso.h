/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_VDSO_H
#define CRIU_PARTS_MM_VDSO_H

/*
 * The vDSO across kernels (mm-vdso.c): what the mm part asks of it. The dump
 * keeps each vDSO text once (vdso.img); the restore decides per task where
 * the restoring kernel's [vvar], [vvar_vclock] and [vdso] go, and, when
 * its vDSO differs from the dumped one, puts the old one back as a
 * redirect to the new one.
 */
#include <stdint.h>
#include <sys/types.h>

#include "parts/part.h"
#include "mm.pb-c.h"

/* One of the kernel's own areas ([vvar], [vvar_vclock], [vdso]) in criu. */
struct vdso_area {
	VmaKind kind;
	uint64_t start, size;
};

/* dump: the fingerprint of task @pid's [vdso] at @start-@end; its text is kept for vdso.img. */
int vdso_note(struct dump_ctx *dc, pid_t pid, uint64_t start, uint64_t end, uint64_t *hash);

/*
 * restore, mm's load: where each of criu's @nr areas @self goes in task
 * @t, from what the task had (@mm). Refuses (-1, logged) what can't be
 * made to work; a place it picks for them is added to t->used.
 */
int vdso_plan(struct rst_ctx *rc, struct rtask *t, const MmEntry *mm,
	      const struct vdso_area *self, int nr);
/* restore, mm's batch: where criu's area @i goes in @t; 0: unmapped */
uint64_t vdso_dest(const struct rtask *t, int i);
/* restore, mm's batch, after the task's areas: the old vDSO as a redirect */
int vdso_batch(struct rtask *t, struct batch *b);

#endif
