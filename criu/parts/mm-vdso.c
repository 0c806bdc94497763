// SPDX-License-Identifier: GPL-2.0
/*
 * The vDSO across kernels.
 *
 * A task holds addresses inside its vDSO: glibc looks up clock_gettime,
 * gettimeofday, time, getcpu and clock_getres once at start and calls
 * them through pointers from then on, and AT_SYSINFO_EHDR names the image.
 * The restoring kernel brings its own [vvar], [vvar_vclock] and [vdso]
 * (criu's, inherited by every new task), and those must stay together:
 * the vDSO's code reads its data at fixed distances from itself.
 *
 * - Same vDSO (same text, same layout): the kernel's areas are moved to
 *   the dumped addresses (mm.c's batch), as always.
 * - Same layout and the same entry points, other text (another CPU's
 *   alternatives, a rebuild that moved nothing): moved there as well.
 * - Otherwise the new areas go, together, to a free place near the old
 *   ones, and the old [vdso] comes back as it was dumped (vdso.img keeps
 *   each distinct text once), with every entry point rewritten into a
 *   jump to the new function of the same name (core/vdso-elf.c). A call
 *   through an old pointer costs one jump more and no system call. The
 *   old [vvar] areas stay empty: only the old code read them, and no
 *   entry leads into it any more.
 *
 * What runs in the old vDSO past an entry would read data that is gone,
 * so no thread may be inside it: the dump steps any thread it finds there
 * out first (a few instructions, in the task's own flow, as if it had
 * been frozen a moment later), and a restore that redirects refuses a
 * thread whose saved ip is inside it but not on an entry. The same goes
 * for a frame of the old vDSO deeper in a stack: a signal handler that
 * interrupted clock_gettime and was still running at the dump returns
 * into it. The dump looks for such signal frames above each thread's
 * stack pointer (of tasks that handle signals) and records them; a
 * restore that redirects refuses them by name. The window is a signal
 * arriving during a call of some tens of nanoseconds and the handler
 * still running at the dump.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "core/log.h"
#include "core/util.h"
#include "core/vdso-elf.h"
#include "image/image.h"
#include "parts/mm-vdso.h"
#include "proc/proc.h"
#include "task/ptrace.h"
#include "regs.pb-c.h"
#include "vdso.pb-c.h"

#define VDSO_TEXT_MAX	(64 << 10)	/* the kernel's is 2 pages; 6.1's up to 3 */
#define SELF_MAX	8
#define USER_TOP	((1ULL << 47) - PAGE_SIZE)
#define LOW_LIMIT	(1ULL << 20)
#define STACK_ROOM	(256ULL << 20)	/* kept free below a stack that grows down */
#define HEAP_ROOM	(64ULL << 20)	/* and above the heap */
#define JUMP_REACH	((1ULL << 31) - (1ULL << 20))
#define STEP_MAX	20000
/* test hook: redirect even to an identical vDSO (test/zdtm, bench-vdso.sh) */
#define FORCE_ENV	"CRIU_VDSO_REDIRECT"
/* test hook: leave threads inside the vDSO at the dump (test_vdso.py) */
#define NO_STEP_ENV	"CRIU_VDSO_NO_STEP"

static uint64_t fnv1a(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/* The fingerprint mm_entry.vdso_hash holds: size and FNV-1a 64 of the text. */
static uint64_t fingerprint(const uint8_t *text, size_t len)
{
	return fnv1a(text, len) ^ len;
}

/* ---------------------------------------------------------------- dump */

struct vdso_dump {
	VdsoEntry e;
	VdsoText **texts;
	VdsoFrame **frames;
};

static struct vdso_dump *dump_data(struct dump_ctx *dc)
{
	struct vdso_dump *d = dc->shared[PART_VDSO];

	if (d)
		return d;
	d = xzalloc(sizeof(*d));
	if (!d)
		return NULL;
	vdso_entry__init(&d->e);
	dc->shared[PART_VDSO] = d;
	return d;
}

static int keep_text(struct dump_ctx *dc, uint64_t hash, uint8_t *text, size_t len)
{
	struct vdso_dump *d = dump_data(dc);
	VdsoText **n, *v;
	size_t i;

	if (!d)
		return -1;
	for (i = 0; i < d->e.n_texts; i++)
		if (d->texts[i]->hash == hash) {
			free(text);
			return 0;
		}
	n = xrealloc(d->texts, (d->e.n_texts + 1) * sizeof(*n));
	v = xzalloc(sizeof(*v));
	if (!n || !v) {
		free(v);
		return -1;
	}
	d->texts = n;
	vdso_text__init(v);
	v->hash = hash;
	v->text.data = text;
	v->text.len = len;
	d->texts[d->e.n_texts++] = v;
	d->e.texts = d->texts;
	return 0;
}

int vdso_note(struct dump_ctx *dc, pid_t pid, uint64_t start, uint64_t end, uint64_t *hash)
{
	size_t len = end - start;
	struct iovec l, r;
	uint8_t *buf;

	if (len > VDSO_TEXT_MAX) {
		pr_err("Task %d: a [vdso] of %zu bytes at %#lx is not the kernel's", pid, len, start);
		return -1;
	}
	buf = xmalloc(len);
	if (!buf)
		return -1;
	l.iov_base = buf;
	l.iov_len = r.iov_len = len;
	r.iov_base = (void *)start;
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
		pr_perror("Task %d: can't read its [vdso] at %#lx", pid, start);
		free(buf);
		return -1;
	}
	*hash = fingerprint(buf, len);
	return keep_text(dc, *hash, buf, len);
}

static int vdso_dump_tree(struct dump_ctx *dc)
{
	struct vdso_dump *d = dc->shared[PART_VDSO];
	int ret = 0;
	size_t i;

	if (!d)
		return 0;
	ret = img_write(dc->dirfd, IMG_VDSO, 0, &d->e.base);
	for (i = 0; i < d->e.n_texts; i++) {
		free(d->texts[i]->text.data);
		free(d->texts[i]);
	}
	free(d->texts);
	for (i = 0; i < d->e.n_frames; i++)
		free(d->frames[i]);
	free(d->frames);
	free(d);
	dc->shared[PART_VDSO] = NULL;
	return ret;
}

/* ----------------------------------------------- dump: out of the vDSO */

static int in_syscall(const struct user_regs_struct *r)
{
	long ax = (long)r->rax;

	/* a restart code: the kernel would run the call again on resume */
	return (long)r->orig_rax >= 0 && ax <= -512 && ax >= -516;
}

/*
 * Back to the stop the freeze made (an interrupt, or the group stop): a
 * PTRACE_INTERRUPT taken on the way out of the single-step's trap.
 */
static int restop(pid_t tid)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || ptrace(PTRACE_CONT, tid, 0, 0)) {
		pr_perror("Thread %d: can't stop it again after stepping", tid);
		return -1;
	}
	return ptrace_wait(tid, &status);
}

/*
 * Single-steps @tid until its ip leaves [@start, @end). Every signal is
 * blocked meanwhile (its own mask comes back), so none is delivered in the
 * middle; one that stops it all the same (SIGSTOP) is queued again, and
 * the thread stays where it is. 1 when out, 0 when left inside, -1 error.
 */
static int step_out(pid_t pid, pid_t tid, struct user_regs_struct *r, uint64_t mask,
		    uint64_t start, uint64_t end)
{
	uint64_t ip = r->rip;
	int n, status, ret = 1;

	if (ptrace_set_sigmask(tid, ~0ULL))
		return -1;
	for (n = 0; n < STEP_MAX && r->rip >= start && r->rip < end; n++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0)) {
			pr_perror("Task %d: thread %d: can't step it", pid, tid);
			return -1;
		}
		if (ptrace_wait(tid, &status) || ptrace_get_regs(tid, r))
			return -1;
		if (WSTOPSIG(status) != SIGTRAP) {
			syscall(SYS_tgkill, pid, tid, WSTOPSIG(status));
			ret = 0;
			break;
		}
	}
	if (ptrace_set_sigmask(tid, mask) || restop(tid) || ptrace_get_regs(tid, r))
		return -1;
	if (ret && n == STEP_MAX)
		ret = 0;
	pr_info("Task %d: thread %d was in the vDSO at %#lx: %s after %d instruction(s), at %#llx",
		pid, tid, ip, ret ? "out" : "still inside", n, r->rip);
	return ret;
}

/* The [vdso] of task @pid, from its maps: 0 and *@start, *@end, or 1 for none. */
static int find_vdso(pid_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], line[512];
	int ret = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		pr_perror("Task %d: can't open its maps", pid);
		return -1;
	}
	while (ret > 0 && fgets(line, sizeof(line), f))
		if (strstr(line, " [vdso]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2)
			ret = 0;
	fclose(f);
	return ret;
}

/* ------------------------------------ dump: vDSO frames deeper in a stack */

/*
 * How far above a thread's stack pointer a signal frame is looked for: a
 * handler's own frames lie below the frame the kernel pushed for it.
 */
#define FRAME_SCAN	(32 << 10)
/* x86-64's rt_sigframe: pretcode, then the ucontext, whose sigcontext has */
#define SF_RSP		168
#define SF_RIP		176
#define SF_CS		192	/* u16 */
#define SF_SIZE		240	/* through its fpstate pointer */
#define USER64_CS	0x33

static int add_frame(struct dump_ctx *dc, pid_t tid, uint64_t frame, uint64_t ip)
{
	struct vdso_dump *d = dump_data(dc);
	VdsoFrame *f = xmalloc(sizeof(*f));

	if (!d || !f || xgrow(d->frames, d->e.n_frames)) {
		free(f);
		return -1;
	}
	vdso_frame__init(f);
	f->tid = tid;
	f->frame = frame;
	f->ip = ip;
	d->frames[d->e.n_frames++] = f;
	d->e.frames = d->frames;
	return 0;
}

/*
 * The stack above @sp, a page per iovec so that the read stops at the end
 * of the mapping instead of failing; the bytes read.
 */
static ssize_t read_above(pid_t pid, uint64_t sp, uint64_t *buf)
{
	struct iovec l = { buf, FRAME_SCAN }, r[FRAME_SCAN / PAGE_SIZE + 1];
	uint64_t at = sp & ~7ULL, next;
	int n = 0;

	while (at < (sp & ~7ULL) + FRAME_SCAN) {
		next = min((at & PAGE_MASK) + PAGE_SIZE, (sp & ~7ULL) + FRAME_SCAN);
		r[n].iov_base = (void *)at;
		r[n++].iov_len = next - at;
		at = next;
	}
	return process_vm_readv(pid, &l, 1, r, n, 0);
}

/*
 * Signal frames above thread @i's stack pointer whose saved ip is in the
 * vDSO [@start, @end): a user code segment, the ip there, and a saved
 * stack pointer above the frame, as the kernel pushes them.
 */
static int scan_frames(struct dump_ctx *dc, struct dtask *t, int i, uint64_t sp,
		       uint64_t start, uint64_t end)
{
	static uint64_t buf[FRAME_SCAN / 8];
	uint64_t base = sp & ~7ULL, at, ip;
	ssize_t n = read_above(t->pid, sp, buf);
	size_t w;
	uint16_t cs;

	for (w = 0; n > 0 && (w + 1) * 8 + SF_SIZE <= (size_t)n; w++) {
		at = base + w * 8;
		ip = buf[w + SF_RIP / 8];
		memcpy(&cs, &buf[w + SF_CS / 8], sizeof(cs));
		if (ip < start || ip >= end || cs != USER64_CS || buf[w + SF_RSP / 8] <= at)
			continue;
		pr_info("Task %d: thread %d: a signal frame at %#lx returns into the vDSO at "
			"%#lx", t->pid, t->th[i].tid, at, ip);
		if (add_frame(dc, t->ns_tids[i], at, ip))
			return -1;
	}
	return 0;
}

/*
 * A thread inside the vDSO leaves it before anything is saved, so that
 * its registers never point into code a restore may replace. Done once
 * the tree is frozen and before the dump's moment (ns-time.c takes it in
 * its check): what the thread reads of the clocks on its way out is
 * never later than that moment, as if it had been frozen a little later.
 * A dump that fails after it leaves the task that few instructions on.
 */
static int vdso_frozen(struct dump_ctx *dc, struct dtask *t)
{
	struct user_regs_struct r;
	uint64_t start, end, mask;
	int i, ret, handles;

	ret = find_vdso(t->pid, &start, &end);
	if (ret)
		return ret < 0 ? -1 : 0;
	/* a task that handles no signal has no signal frame */
	handles = t->status.sig_cgt != 0;
	for (i = 0; i < t->nr_threads; i++) {
		if (ptrace_get_regs(t->th[i].tid, &r))
			return -1;
		if (handles && scan_frames(dc, t, i, r.rsp, start, end))
			return -1;
		if (r.rip < start || r.rip >= end)
			continue;
		/* a thread in a group stop stays in it; so does one in a system call */
		if (getenv(NO_STEP_ENV) || in_syscall(&r) || t->stopped) {
			pr_info("Task %d: thread %d left in the vDSO at %#llx%s", t->pid,
				t->th[i].tid, r.rip, t->stopped ? " (stopped)" :
				in_syscall(&r) ? " (in a system call)" : "");
			continue;
		}
		if (ptrace_get_sigmask(t->th[i].tid, &mask) ||
		    step_out(t->pid, t->th[i].tid, &r, mask, start, end) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- restore */

/* Tree-wide: the dumped texts and the restoring kernel's vDSO. */
struct vdso_tree {
	VdsoEntry *img;			/* NULL: the checkpoint has none */
	int self_known;
	uint64_t self_hash;
	uint8_t *self_text;
	size_t self_len;
	struct vdso_syms self_syms;
	const char *self_why;		/* its symbols could not be read */
	int force;
};

enum vdso_mode {
	VDSO_KEEP,		/* the kernel's areas go to the dumped addresses */
	VDSO_MOVE_REDIRECT,	/* they go elsewhere; the old vDSO becomes a redirect */
};

/* Per task: where criu's areas go, and the redirect. */
struct vdso_task {
	enum vdso_mode mode;
	int changed;			/* the text differs from the dumped one */
	uint64_t dest[SELF_MAX];	/* per criu area; 0: unmapped */
	uint64_t old_start, old_end;	/* the dumped [vdso] */
	unsigned int old_prot;
	uint8_t *text;			/* the redirect's bytes */
	struct vdso_syms old_syms;
};

static int vdso_load_tree(struct rst_ctx *rc)
{
	struct vdso_tree *vt = xzalloc(sizeof(*vt));

	if (!vt)
		return -1;
	rc->shared[PART_VDSO] = vt;
	vt->force = getenv(FORCE_ENV) && *getenv(FORCE_ENV) == '1';
	if (vt->force)
		pr_info("%s=1: every task's vDSO is redirected (a test hook)", FORCE_ENV);
	return img_read(rc->dirfd, IMG_VDSO, 0, (void **)&vt->img, 1) < 0 ? -1 : 0;
}

static void vdso_release_tree(struct rst_ctx *rc)
{
	struct vdso_tree *vt = rc->shared[PART_VDSO];

	if (!vt)
		return;
	img_free(IMG_VDSO, vt->img);
	free(vt->self_text);
	free(vt);
	rc->shared[PART_VDSO] = NULL;
}

static int find_kind(const struct vdso_area *a, int nr, VmaKind k)
{
	int i;

	for (i = 0; i < nr; i++)
		if (a[i].kind == k)
			return i;
	return -1;
}

/* The restoring kernel's vDSO, read from criu's own memory once. */
static int know_self(struct vdso_tree *vt, const struct vdso_area *self, int nr)
{
	int i = find_kind(self, nr, VMA_KIND__VMA_VDSO);

	if (vt->self_known)
		return 0;
	vt->self_known = 1;
	if (i < 0)
		return 0;
	if (self[i].size > VDSO_TEXT_MAX) {
		pr_err("criu's own [vdso] has %lu bytes: not the kernel's", self[i].size);
		return -1;
	}
	vt->self_len = self[i].size;
	vt->self_text = xmalloc(vt->self_len);
	if (!vt->self_text)
		return -1;
	memcpy(vt->self_text, (void *)self[i].start, vt->self_len);
	vt->self_hash = fingerprint(vt->self_text, vt->self_len);
	if (vdso_parse(vt->self_text, vt->self_len, &vt->self_syms, &vt->self_why))
		pr_info("This kernel's vDSO: %s", vt->self_why);
	return 0;
}

/* The dumped areas of the kernel's kinds, by kind: [0] for none. */
struct dumped {
	const VmaEntry *v[VMA_KIND__VMA_VVAR_VCLOCK + 1];
};

static void find_dumped(const MmEntry *mm, struct dumped *d)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < mm->n_vmas; i++)
		switch (mm->vmas[i]->kind) {
		case VMA_KIND__VMA_VDSO:
		case VMA_KIND__VMA_VVAR:
		case VMA_KIND__VMA_VVAR_VCLOCK:
			if (!d->v[mm->vmas[i]->kind])
				d->v[mm->vmas[i]->kind] = mm->vmas[i];
			break;
		default:
			break;
		}
}

/*
 * The same areas, of the same sizes, at the same distances from the
 * [vdso] as criu's: the task's and the kernel's layouts are one.
 */
static int same_layout(const struct dumped *d, const struct vdso_area *self, int nr)
{
	const VmaEntry *vd = d->v[VMA_KIND__VMA_VDSO];
	int i, k, s = find_kind(self, nr, VMA_KIND__VMA_VDSO);

	if (!vd || s < 0)
		return 0;
	for (k = VMA_KIND__VMA_VDSO; k <= VMA_KIND__VMA_VVAR_VCLOCK; k++) {
		i = find_kind(self, nr, k);
		if (!d->v[k] != (i < 0))
			return 0;
		if (i >= 0 && (d->v[k]->end - d->v[k]->start != self[i].size ||
			       d->v[k]->start - vd->start != self[i].start - self[s].start))
			return 0;
	}
	return 1;
}

static void keep_in_place(struct vdso_task *vp, const struct dumped *d,
			  const struct vdso_area *self, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		const VmaEntry *v = self[i].kind <= VMA_KIND__VMA_VVAR_VCLOCK ?
				    d->v[self[i].kind] : NULL;

		/* an area the task had unmapped goes again */
		vp->dest[i] = v && v->end - v->start == self[i].size ? v->start : 0;
	}
}

static const VdsoText *dumped_text(const struct vdso_tree *vt, uint64_t hash)
{
	size_t i;

	for (i = 0; vt->img && i < vt->img->n_texts; i++)
		if (vt->img->texts[i]->hash == hash)
			return vt->img->texts[i];
	return NULL;
}

/* ------------------------------------------- restore: a place for them */

struct span {
	uint64_t start, end;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int hits(const struct span *s, int n, uint64_t start, uint64_t end)
{
	int i;

	for (i = 0; i < n; i++)
		if (start < s[i].end && s[i].start < end)
			return 1;
	return 0;
}

/*
 * The free place for @size bytes nearest to @near: not on any area of the
 * task (with a page between), not where its stack or heap would grow.
 */
static uint64_t pick_place(const struct rtask *t, const MmEntry *mm, uint64_t near,
			   uint64_t size)
{
	struct span *busy, *cand;
	uint64_t best = 0, dist, bd = ~0ULL;
	int i, j, n = 0, nc = 0;

	busy = xmalloc((t->nr_used + mm->n_vmas + 1) * sizeof(*busy));
	cand = xmalloc((2 * t->nr_used + 2 * mm->n_vmas + 2) * sizeof(*cand));
	if (!busy || !cand)
		goto out;
	for (i = 0; i < t->nr_used; i++) {
		busy[n].start = t->used[i].start - PAGE_SIZE;
		busy[n++].end = t->used[i].end + PAGE_SIZE;
	}
	for (i = 0; i < (int)mm->n_vmas; i++)
		if (mm->vmas[i]->flags & MAP_GROWSDOWN) {
			busy[n].start = mm->vmas[i]->start > STACK_ROOM ?
					mm->vmas[i]->start - STACK_ROOM : 0;
			busy[n++].end = mm->vmas[i]->start;
		}
	busy[n].start = mm->brk;
	busy[n++].end = mm->brk + HEAP_ROOM;
	qsort(busy, n, sizeof(*busy), span_cmp);
	/* candidates: right after and right before each busy span */
	for (i = 0; i < n; i++) {
		cand[nc].start = busy[i].end;
		cand[nc++].end = busy[i].end + size;
		if (busy[i].start >= size) {
			cand[nc].start = busy[i].start - size;
			cand[nc++].end = busy[i].start;
		}
	}
	for (j = 0; j < nc; j++) {
		if (cand[j].start < LOW_LIMIT || cand[j].end > USER_TOP ||
		    cand[j].end < cand[j].start || hits(busy, n, cand[j].start, cand[j].end))
			continue;
		dist = cand[j].start > near ? cand[j].start - near : near - cand[j].start;
		if (dist < bd) {
			bd = dist;
			best = cand[j].start;
		}
	}
out:
	free(busy);
	free(cand);
	return best;
}

static int add_used(struct rtask *t, uint64_t start, uint64_t end)
{
	struct rst_range *n = xpush(t->used, t->nr_used);

	if (!n)
		return -1;
	n->start = start;
	n->end = end;
	return 0;
}

static const char *kind_name(VmaKind k)
{
	switch (k) {
	case VMA_KIND__VMA_VDSO:
		return "[vdso]";
	case VMA_KIND__VMA_VVAR:
		return "[vvar]";
	case VMA_KIND__VMA_VVAR_VCLOCK:
		return "[vvar_vclock]";
	default:
		return "[?]";
	}
}

/* One line the zdtm runner reads (test/zdtm/zdtm.py: vdso_redirects). */
static void log_redirect(const struct rtask *t, const struct vdso_task *vp,
			 const struct vdso_area *self, int nr)
{
	char buf[512], *p = buf, *end = buf + sizeof(buf);
	int i;

	buf[0] = '\0';
	for (i = 0; i < nr && p < end; i++)
		if (vp->dest[i])
			p += snprintf(p, end - p, " %s %#lx-%#lx", kind_name(self[i].kind),
				      vp->dest[i], vp->dest[i] + self[i].size);
	pr_info("Task %d: vDSO redirect %#lx-%#lx:%s", t->pid, vp->old_start, vp->old_end, buf);
}

static void log_fates(const struct rtask *t, const struct vdso_redirect *r)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->p[i].fate == VDSO_SYSCALL)
			pr_info("Task %d: this kernel's vDSO has no %s: the old entry makes "
				"its system call", t->pid, r->p[i].name);
		else if (r->p[i].fate == VDSO_ENOSYS)
			pr_warn("Task %d: this kernel's vDSO has no %s, nor a system call for "
				"it: the old entry returns -ENOSYS", t->pid, r->p[i].name);
}

/* The kernel's areas together at a free place; the old [vdso] a redirect to them. */
static int plan_redirect(struct rtask *t, const MmEntry *mm, struct vdso_tree *vt,
			 struct vdso_task *vp, const VdsoText *old, const struct vdso_area *self,
			 int nr)
{
	int i, s = find_kind(self, nr, VMA_KIND__VMA_VDSO);
	uint64_t lo = ~0ULL, hi = 0, at;
	struct vdso_redirect r;
	const char *why;

	for (i = 0; i < nr; i++)
		if (self[i].kind != VMA_KIND__VMA_VSYSCALL) {
			lo = min(lo, self[i].start);
			hi = max(hi, self[i].start + self[i].size);
		}
	at = pick_place(t, mm, vp->old_start, hi - lo);
	if (!at || (at > vp->old_start ? at - vp->old_start : vp->old_start - at) > JUMP_REACH) {
		pr_err("Task %d: no free place within reach of its vDSO at %#lx for this "
		       "kernel's (%lu bytes)", t->pid, vp->old_start, hi - lo);
		return -1;
	}
	for (i = 0; i < nr; i++)
		vp->dest[i] = self[i].kind == VMA_KIND__VMA_VSYSCALL ? 0 : at + self[i].start - lo;
	vp->text = xmalloc(old->text.len);
	if (!vp->text)
		return -1;
	memcpy(vp->text, old->text.data, old->text.len);
	if (vdso_redirect(vp->text, old->text.len, vp->old_start, &vp->old_syms, vp->dest[s],
			  &vt->self_syms, &r, &why)) {
		pr_err("Task %d: can't redirect its vDSO at %#lx to this kernel's: %s", t->pid,
		       vp->old_start, why);
		return -1;
	}
	vp->mode = VDSO_MOVE_REDIRECT;
	log_redirect(t, vp, self, nr);
	log_fates(t, &r);
	t->batch_entries += 3;
	t->batch_data += old->text.len + 2 * sizeof(struct iovec);
	return add_used(t, at, at + hi - lo);
}

/* The dumped vDSO differs from this kernel's: what its symbols allow. */
static int plan_changed(struct rtask *t, const MmEntry *mm, struct vdso_tree *vt,
			struct vdso_task *vp, const struct dumped *d,
			const struct vdso_area *self, int nr)
{
	const VdsoText *old = dumped_text(vt, mm->vdso_hash);
	const char *why;

	vp->changed = 1;
	if (!old || old->text.len != vp->old_end - vp->old_start) {
		pr_err("Task %d: the vDSO of this kernel differs from the dumped one (%#lx-%#lx) "
		       "and the images hold no copy of that one to redirect", t->pid,
		       vp->old_start, vp->old_end);
		return -1;
	}
	if (vdso_parse(old->text.data, old->text.len, &vp->old_syms, &why)) {
		pr_err("Task %d: the dumped vDSO in vdso.img: %s", t->pid, why);
		return -1;
	}
	if (vt->self_why || find_kind(self, nr, VMA_KIND__VMA_VDSO) < 0) {
		pr_err("Task %d: its vDSO differs from this kernel's, whose symbols can't be "
		       "read (%s)", t->pid, vt->self_why ? vt->self_why : "criu has no [vdso]");
		return -1;
	}
	if (!vt->force && same_layout(d, self, nr) &&
	    vdso_same_entries(&vp->old_syms, &vt->self_syms)) {
		pr_info("Task %d: this kernel's vDSO differs from the dumped one, with the same "
			"entry points and layout: put where it was", t->pid);
		keep_in_place(vp, d, self, nr);
		return 0;
	}
	return plan_redirect(t, mm, vt, vp, old, self, nr);
}

static const struct vdso_sym *entry_at(const struct vdso_syms *s, uint64_t off)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->sym[i].off == off)
			return &s->sym[i];
	return NULL;
}

/* The function @off lies in, for the message: the nearest entry below it. */
static const struct vdso_sym *entry_below(const struct vdso_syms *s, uint64_t off)
{
	const struct vdso_sym *best = NULL;
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->sym[i].off <= off && (!best || s->sym[i].off > best->off))
			best = &s->sym[i];
	return best;
}

/* 0, or -1 when thread @tid's saved @ip is inside the replaced vDSO, not on an entry */
static int check_ip(const struct rtask *t, const struct vdso_task *vp, pid_t tid, uint64_t ip)
{
	const struct vdso_sym *f;
	uint64_t off;

	if (ip < vp->old_start || ip >= vp->old_end)
		return 0;
	off = ip - vp->old_start;
	/* on an entry: the jump there is the first thing it runs */
	f = entry_at(&vp->old_syms, off);
	if (vp->mode == VDSO_MOVE_REDIRECT && f) {
		pr_info("Task %d: thread %d is at the vDSO entry %s (%#lx): it goes on "
			"through the redirect", t->pid, tid, f->name, ip);
		return 0;
	}
	f = entry_below(&vp->old_syms, off);
	pr_err("Task %d: thread %d was inside the vDSO at the dump (%#lx, %s+%#lx) and this "
	       "kernel's vDSO differs: it can't go on there", t->pid, tid, ip,
	       f ? f->name : "?", f ? off - f->off : off);
	return -1;
}

/* 0, or -1 when a signal frame of thread @tid returns inside the replaced vDSO */
static int check_frames(const struct vdso_tree *vt, const struct rtask *t,
			const struct vdso_task *vp, pid_t tid)
{
	const struct vdso_sym *f;
	const VdsoFrame *fr;
	uint64_t off;
	size_t i;

	for (i = 0; vt->img && i < vt->img->n_frames; i++) {
		fr = vt->img->frames[i];
		if (fr->tid != (uint32_t)tid || fr->ip < vp->old_start || fr->ip >= vp->old_end)
			continue;
		off = fr->ip - vp->old_start;
		if (vp->mode == VDSO_MOVE_REDIRECT && entry_at(&vp->old_syms, off))
			continue;
		f = entry_below(&vp->old_syms, off);
		pr_err("Task %d: thread %d was in a signal handler that interrupted the vDSO "
		       "(its frame at %#lx returns to %#lx, %s+%#lx) and this kernel's vDSO "
		       "differs: the handler's return can't go on there", t->pid, tid,
		       fr->frame, fr->ip, f ? f->name : "?", f ? off - f->off : off);
		return -1;
	}
	return 0;
}

/*
 * No thread may go on inside a vDSO that changed, now or once a signal
 * handler returns: each one's saved ip, read from its regs image here
 * (only when the vDSO changed), as the regs part loads after this one and
 * is another part, and the signal frames the dump found.
 */
static int check_threads(struct rst_ctx *rc, const struct rtask *t, const struct vdso_task *vp)
{
	const struct vdso_tree *vt = rc->shared[PART_VDSO];
	RegsEntry *e;
	int i, ret = 0;

	for (i = 0; i < t->nr_threads && !ret; i++) {
		if (img_read(rc->dirfd, IMG_REGS, t->tids[i], (void **)&e, 0) < 0)
			return -1;
		ret = check_ip(t, vp, t->tids[i], e->gpregs->ip);
		img_free(IMG_REGS, e);
		if (!ret)
			ret = check_frames(vt, t, vp, t->tids[i]);
	}
	return ret;
}

int vdso_plan(struct rst_ctx *rc, struct rtask *t, const MmEntry *mm,
	      const struct vdso_area *self, int nr)
{
	struct vdso_tree *vt = rc->shared[PART_VDSO];
	struct vdso_task *vp;
	const VmaEntry *vd;
	struct dumped d;

	if (!vt || nr > SELF_MAX || know_self(vt, self, nr))
		return -1;
	vp = xzalloc(sizeof(*vp));
	if (!vp)
		return -1;
	t->img[PART_VDSO] = vp;
	find_dumped(mm, &d);
	vd = d.v[VMA_KIND__VMA_VDSO];
	keep_in_place(vp, &d, self, nr);
	if (!vd)
		return 0;	/* nothing of the vDSO to call */
	vp->old_start = vd->start;
	vp->old_end = vd->end;
	vp->old_prot = vd->prot;
	if (!vt->force && same_layout(&d, self, nr) &&
	    (!mm->has_vdso_hash || mm->vdso_hash == vt->self_hash))
		return 0;
	if (plan_changed(t, mm, vt, vp, &d, self, nr))
		return -1;
	return check_threads(rc, t, vp);
}

uint64_t vdso_dest(const struct rtask *t, int i)
{
	const struct vdso_task *vp = t->img[PART_VDSO];

	return vp && i < SELF_MAX ? vp->dest[i] : 0;
}

/*
 * The old image at its old place: an anonymous area written from the
 * batch's data (process_vm_writev on itself), then given the old [vdso]'s
 * protection. Its pages are the task's from now on, dumped as any.
 */
int vdso_batch(struct rtask *t, struct batch *b)
{
	struct vdso_task *vp = t->img[PART_VDSO];
	uint64_t len, data, iov;
	struct iovec v[2];

	if (!vp || vp->mode != VDSO_MOVE_REDIRECT)
		return 0;
	len = vp->old_end - vp->old_start;
	data = batch_put(b, vp->text, len);
	v[0].iov_base = (void *)data;
	v[1].iov_base = (void *)vp->old_start;
	v[0].iov_len = v[1].iov_len = len;
	iov = data ? batch_put(b, v, sizeof(v)) : 0;
	if (!iov ||
	    BATCH(b, "mmap of the old vDSO", __NR_mmap, vp->old_start, len,
		  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) < 0 ||
	    BATCH(b, "process_vm_writev of the old vDSO's redirect", __NR_process_vm_writev,
		  t->pid, iov, 1, iov + sizeof(v[0]), 1, 0) < 0 ||
	    BATCH(b, "mprotect of the old vDSO", __NR_mprotect, vp->old_start, len,
		  vp->old_prot) < 0)
		return -1;
	return 0;
}

static void vdso_release(struct rtask *t)
{
	struct vdso_task *vp = t->img[PART_VDSO];

	if (!vp)
		return;
	free(vp->text);
	free(vp);
	t->img[PART_VDSO] = NULL;
}

const struct part part_vdso = {
	.name = "vdso",
	.id = PART_VDSO,
	.in_pre_dump = 1,
	.frozen = vdso_frozen,
	.dump_tree = vdso_dump_tree,
	.load_tree = vdso_load_tree,
	.release = vdso_release,
	.release_tree = vdso_release_tree,
};
