/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_LAZY_H
#define CRIU_PARTS_MM_LAZY_H

/*
 * restore --lazy-pages (mm-lazy.c), the restore half of post-copy: which
 * areas are left empty, the userfaultfd each task gets for them, and what
 * is said to the lazy-pages daemon (criu/lazy.c, the other half) over its
 * socket. Documentation/lazy-pages.md.
 */
#include <stdint.h>
#include <sys/types.h>

#include "parts/part.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"
#include "parts/mm-pages.h"

#define LAZY_SOCKET	"lazy-pages.socket"

struct opts;
struct sockaddr_un;
/* LAZY_SOCKET in the work directory of @o, as both ends name it. */
void lazy_socket_addr(const struct opts *o, struct sockaddr_un *sun);
/* what the userfaultfd reports: the daemon follows the task's mm with them */
#define LAZY_FEATURES	(UFFD_FEATURE_EVENT_FORK | UFFD_FEATURE_EVENT_REMAP | \
			 UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_UNMAP)

/* One lazy area, as sent: its pages come from the daemon. */
struct lazy_range {
	uint64_t start, end;
	uint32_t flags;		/* LR_* */
	uint32_t pad;
};
#define LR_NOCOPY	1	/* MADV_DONTFORK: a child has no such area */
#define LR_WIPE		2	/* MADV_WIPEONFORK: a child's is empty */

/*
 * Messages (SOCK_SEQPACKET), restore to daemon: RANGES carry a task's
 * areas, as many as fit; its TASK message carries the last of them and
 * the userfaultfd (SCM_RIGHTS). DONE ends the tree: the daemon answers
 * one int32, 0 or an errno, once it holds every task's pages.
 */
enum { LAZY_RANGES = 1, LAZY_TASK, LAZY_DONE };
#define LAZY_MAX_RANGES	256

struct lazy_msg {
	uint32_t type;
	int32_t img_pid;	/* pages-PID.img and pagemap-PID.img */
	int32_t host_pid;	/* the task as the daemon's /proc sees it */
	uint32_t nr;
	struct lazy_range r[LAZY_MAX_RANGES];
};

static inline size_t lazy_msg_size(uint32_t nr)
{
	return sizeof(struct lazy_msg) - (LAZY_MAX_RANGES - nr) * sizeof(struct lazy_range);
}

/* 1 where this kernel's userfaultfd can serve a lazy restore, 0 where not */
int lazy_supported(void);

/* restore (mm.c's hooks, when --lazy-pages): in criu, at load */
int mm_lazy_load(struct rst_ctx *rc, struct rtask *t, MmEntry *mm);
/* in criu, after every load: the daemon's socket, the tasks' way to criu */
int mm_lazy_prefork(struct rst_ctx *rc);
/* in the task, before its batch: makes its userfaultfd and hands it to criu */
int mm_lazy_child(struct rst_ctx *rc, struct rtask *t);
/* 1 when area @i of @t is left to the daemon, 0 when restore fills it */
int mm_lazy_area(struct rtask *t, size_t i);
/* in the task: of a lazy area's runs from *run on below @end, the reads of t->written */
int mm_lazy_queue_reads(struct batch *b, struct rtask *t, struct mm_stores *s,
			PagemapEntry *pm, uint64_t end, size_t *run);
/* in criu, right before the tree goes: registers the areas, tells the daemon */
int mm_lazy_resume(struct rst_ctx *rc, struct rtask *root);
void mm_lazy_release(struct rst_ctx *rc);

#endif
