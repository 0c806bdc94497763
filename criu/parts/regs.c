// SPDX-License-Identifier: GPL-2.0
/*
 * CPU registers: general purpose (with fs/gs base) and the XSAVE area,
 * read and written from outside with ptrace.
 *
 * A task interrupted inside a system call stops with the kernel's restart
 * code in rax; the kernel would fix that up on its way back to user space.
 * The image holds the state that fix-up would produce, so restore only has
 * to load it: restartable calls are re-executed, calls whose restart needs
 * kernel state we cannot carry (restart_syscall) return EINTR instead.
 *
 * The XSAVE area is saved component by component (task/xsave.c): the
 * CPU that loads it may place them elsewhere and have an area of another
 * size, and PTRACE_SETREGSET takes only its own. Restore asks the kernel
 * for the new thread's area and puts each component where this CPU has it.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/part.h"
#include "task/ptrace.h"
#include "task/xsave.h"
#include "regs.pb-c.h"

#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

struct regs_loaded {
	RegsEntry *e;
	struct user_regs_struct regs;
	int has_xsave;
	struct xsave_state xs;	/* points into e */
};

/* This CPU's XSAVE layout: read once, it does not change under criu. */
static const struct xsave_layout *host_layout(void)
{
	static struct xsave_layout l;
	static int done;

	if (!done && xsave_layout_host(&l))
		return NULL;
	done = 1;
	return &l;
}

static int fixup_syscall(pid_t pid, struct user_regs_struct *r)
{
	if ((long)r->orig_rax < 0)
		return 0;
	switch ((long)r->rax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
		r->rax = r->orig_rax;
		r->rip -= 2;
		break;
	case -ERESTART_RESTARTBLOCK:
		pr_info("Task %d: syscall %lld interrupted, it will return EINTR",
			pid, r->orig_rax);
		r->rax = -EINTR;
		return 1;
	}
	return 0;
}

/*
 * A thread stopped inside an rseq critical section would be sent to the
 * section's abort handler by the kernel on its way back to user space.
 * The image must hold where it would really continue.
 */
static int fixup_rseq(pid_t tid, struct user_regs_struct *r)
{
	struct ptrace_rseq_conf c;
	struct {
		uint32_t version, flags;
		uint64_t start_ip, post_commit_offset, abort_ip;
	} cs;
	uint64_t cs_ptr;
	struct iovec l, rv;

	if (ptrace_get_rseq(tid, &c) || !c.rseq_abi_pointer)
		return 0;
	l.iov_base = &cs_ptr;
	l.iov_len = sizeof(cs_ptr);
	rv.iov_base = (void *)(c.rseq_abi_pointer + 8);	/* struct rseq.rseq_cs */
	rv.iov_len = sizeof(cs_ptr);
	if (process_vm_readv(tid, &l, 1, &rv, 1, 0) != sizeof(cs_ptr) || !cs_ptr)
		return 0;
	l.iov_base = &cs;
	l.iov_len = sizeof(cs);
	rv.iov_base = (void *)cs_ptr;
	rv.iov_len = sizeof(cs);
	if (process_vm_readv(tid, &l, 1, &rv, 1, 0) != sizeof(cs))
		return 0;
	if (r->rip - cs.start_ip < cs.post_commit_offset) {
		pr_info("Task %d: in an rseq critical section, continues at its abort handler %#lx",
			tid, cs.abort_ip);
		r->rip = cs.abort_ip;
	}
	return 0;
}

/* Each field of the image (UserRegsX86) and of struct user_regs_struct it holds. */
#define GP_REGS(X)								\
	X(r15, r15) X(r14, r14) X(r13, r13) X(r12, r12) X(bp, rbp) X(bx, rbx)	\
	X(r11, r11) X(r10, r10) X(r9, r9) X(r8, r8) X(ax, rax) X(cx, rcx)	\
	X(dx, rdx) X(si, rsi) X(di, rdi) X(orig_ax, orig_rax) X(ip, rip)	\
	X(cs, cs) X(flags, eflags) X(sp, rsp) X(ss, ss) X(fs_base, fs_base)	\
	X(gs_base, gs_base) X(ds, ds) X(es, es) X(fs, fs) X(gs, gs)

static void to_image(const struct user_regs_struct *r, UserRegsX86 *e)
{
#define TO_IMAGE(f, g)		e->f = r->g;
	GP_REGS(TO_IMAGE)
#undef TO_IMAGE
}

static void from_image(const UserRegsX86 *e, struct user_regs_struct *r)
{
#define FROM_IMAGE(f, g)	r->g = e->f;
	GP_REGS(FROM_IMAGE)
#undef FROM_IMAGE
}

/* The area taken apart: @c and @pc (XSAVE_NR each) point into @area. */
static int put_xsave(pid_t tid, RegsEntry *e, const void *area, size_t len,
		     XsaveComponent *c, XsaveComponent **pc)
{
	const struct xsave_layout *l = host_layout();
	struct xsave_state st;
	char err[256];
	int i;

	if (!l)
		return -1;
	if (xsave_split(l, area, len, &st, err, sizeof(err))) {
		pr_err("Thread %d: can't read its registers: %s", tid, err);
		return -1;
	}
	e->has_fxsave = e->has_xstate_bv = 1;
	e->fxsave.data = (uint8_t *)area;
	e->fxsave.len = XSAVE_LEGACY_SIZE;
	e->xstate_bv = st.xstate_bv;
	for (i = XSAVE_FIRST_EXT; i < XSAVE_NR; i++) {
		if (!st.comp[i])
			continue;
		xsave_component__init(&c[e->n_components]);
		c[e->n_components].feature = i;
		c[e->n_components].data.data = (uint8_t *)st.comp[i];
		c[e->n_components].data.len = st.comp_size[i];
		pc[e->n_components] = &c[e->n_components];
		e->n_components++;
	}
	e->components = pc;
	/* ptrace puts XCR0 in the first word of the software-reserved bytes */
	e->has_xfeatures = 1;
	memcpy(&e->xfeatures, (const char *)area + XSAVE_SW_XCR0_OFF, 8);
	return 0;
}

static int dump_thread(struct dump_ctx *dc, pid_t tid, pid_t ns_tid,
		       struct user_regs_struct r)
{
	RegsEntry e = REGS_ENTRY__INIT;
	UserRegsX86 gp = USER_REGS_X86__INIT;
	XsaveComponent c[XSAVE_NR], *pc[XSAVE_NR];
	void *xs = NULL;
	size_t xlen;
	int ret;

	e.tid = ns_tid;
	e.has_syscall_interrupted = 1;
	e.syscall_interrupted = fixup_syscall(tid, &r);
	fixup_rseq(tid, &r);
	r.orig_rax = -1;
	to_image(&r, &gp);
	e.gpregs = &gp;
	if (ptrace_get_xstate(tid, &xs, &xlen))
		return -1;
	ret = put_xsave(tid, &e, xs, xlen, c, pc);
	if (!ret)
		ret = img_write(dc->dirfd, IMG_REGS, ns_tid, &e.base);
	free(xs);
	return ret;
}

/* One image per thread, named by its tid. */
static int regs_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	int i;

	for (i = 0; i < t->nr_threads; i++)
		if (dump_thread(dc, t->th[i].tid, t->ns_tids[i], t->th[i].regs))
			return -1;
	return 0;
}

/* A newer image's components, checked: each bit of xstate_bv from 2 up has one. */
static int get_components(pid_t pid, pid_t tid, const RegsEntry *e, struct xsave_state *st)
{
	uint64_t seen = 0, bit;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (e->fxsave.len != XSAVE_LEGACY_SIZE)
		goto bad;
	memcpy(st->legacy, e->fxsave.data, XSAVE_LEGACY_SIZE);
	st->xstate_bv = e->xstate_bv;
	for (i = 0; i < e->n_components; i++) {
		const XsaveComponent *c = e->components[i];

		bit = c->feature < XSAVE_NR ? 1ULL << c->feature : 0;
		if (c->feature < XSAVE_FIRST_EXT || !(e->xstate_bv & bit) || (seen & bit) ||
		    !c->data.len || c->data.len > XSAVE_AREA_MAX)
			goto bad;
		seen |= bit;
		st->comp[c->feature] = c->data.data;
		st->comp_size[c->feature] = c->data.len;
	}
	if ((e->xstate_bv & ~XSAVE_LEGACY_MASK) == seen)
		return 0;
bad:
	pr_err("Task %d: image regs-%d.img has an invalid XSAVE state: XSTATE_BV %#llx, "
	       "%zu components, %zu legacy bytes", pid, tid,
	       (unsigned long long)e->xstate_bv, e->n_components, e->fxsave.len);
	return -1;
}

/* An older image's whole area: its layout is known only if it is this CPU's size. */
static int get_area(pid_t pid, pid_t tid, const RegsEntry *e, const struct xsave_layout *l,
		    struct xsave_state *st)
{
	char err[256];

	if (e->xstate.len != l->size) {
		pr_err("Task %d: image regs-%d.img holds its XSAVE area whole (an older criu "
		       "wrote it), of %zu bytes; this CPU's has %u and the dumping CPU's "
		       "layout is not recorded: it can't be converted", pid, tid,
		       e->xstate.len, l->size);
		return -1;
	}
	if (xsave_split(l, e->xstate.data, e->xstate.len, st, err, sizeof(err))) {
		pr_err("Task %d: image regs-%d.img: %s", pid, tid, err);
		return -1;
	}
	return 0;
}

/*
 * Builds the area once in load, so that whatever this CPU can't hold is
 * refused before anything exists: a component of another size, or (under
 * --cpu-cap=fpu, which parts/cpu.c checks first) one it lacks; without
 * fpu, those are dropped.
 */
static int fits_here(const struct opts *o, pid_t pid, pid_t tid,
		     const struct xsave_state *st, const struct xsave_layout *l)
{
	uint64_t dropped;
	char err[256];
	void *area;
	int ret;

	area = xzalloc(max((size_t)l->size, (size_t)XSAVE_EXT_OFF));
	if (!area)
		return -1;
	ret = xsave_build(l, st, area, max((size_t)l->size, (size_t)XSAVE_EXT_OFF), &dropped, err,
			  sizeof(err));
	free(area);
	if (ret) {
		pr_err("Task %d: thread %d: its registers can't be loaded on this CPU: %s", pid,
		       tid, err);
		return -1;
	}
	if (dropped & XSAVE_PKRU)
		pr_info("Task %d: thread %d: this CPU lacks XSAVE component pkru: left out (no "
			"memory of the task has a protection key)", pid, tid);
	dropped &= ~XSAVE_PKRU;
	if ((dropped & XSAVE_MPX) && !xsave_mpx_enabled(st)) {
		pr_info("Task %d: thread %d: this CPU lacks XSAVE components of MPX: left out "
			"(MPX was not enabled, BNDCFGU.EN clear)", pid, tid);
		dropped &= ~XSAVE_MPX;
	}
	if (!dropped)
		return 0;
	xsave_features_str(dropped, err, sizeof(err));
	if (o->cpu_cap & CPU_CAP_FPU) {
		pr_err("Task %d: thread %d uses XSAVE components this CPU lacks: %s; "
		       "--cpu-cap=^fpu restores it without them", pid, tid, err);
		return -1;
	}
	pr_warn("Task %d: thread %d: this CPU lacks XSAVE components %s: their registers "
		"are lost (--cpu-cap without fpu)", pid, tid, err);
	return 0;
}

static int load_xsave(struct rst_ctx *rc, pid_t pid, pid_t tid, struct regs_loaded *l)
{
	const struct xsave_layout *host = host_layout();
	RegsEntry *e = l->e;

	if (!host)
		return -1;
	if (e->has_fxsave)
		l->has_xsave = !get_components(pid, tid, e, &l->xs);
	else if (e->has_xstate)
		l->has_xsave = !get_area(pid, tid, e, host, &l->xs);
	else
		return 0;
	if (!l->has_xsave)
		return -1;
	return fits_here(rc->opts, pid, tid, &l->xs, host);
}

static int load_thread(struct rst_ctx *rc, pid_t pid, pid_t tid, struct regs_loaded *l)
{
	if (img_read(rc->dirfd, IMG_REGS, tid, (void **)&l->e, 0) < 0)
		return -1;
	if (l->e->tid != (uint32_t)tid) {
		pr_err("Task %d: image regs-%d.img is of thread %u", pid, tid, l->e->tid);
		return -1;
	}
	if (load_xsave(rc, pid, tid, l))
		return -1;
	from_image(l->e->gpregs, &l->regs);
	if (l->regs.cs != 0x33 || l->regs.ss != 0x2b) {
		pr_err("Task %d: image regs-%d.img has segments cs %#llx ss %#llx, not 64-bit user ones",
		       pid, tid, l->regs.cs, l->regs.ss);
		return -1;
	}
	return 0;
}

static int regs_load(struct rst_ctx *rc, struct rtask *t)
{
	struct regs_loaded *l = xzalloc(t->nr_threads * sizeof(*l));
	int i;

	if (!l)
		return -1;
	t->img[PART_REGS] = l;
	for (i = 0; i < t->nr_threads; i++)
		if (load_thread(rc, t->pid, t->tids[i], &l[i]))
			return -1;
	return 0;
}

/* The new thread's area, as the kernel sizes it, with the saved state in place. */
static int set_xsave(struct rtask *t, int i, const struct regs_loaded *l)
{
	const struct xsave_layout *host = host_layout();
	pid_t tid = t->host_tids[i];
	uint64_t dropped;
	char err[256];
	size_t len;
	void *area;
	int ret = -1;

	if (!host || ptrace_get_xstate(tid, &area, &len))
		return -1;
	if (xsave_build(host, &l->xs, area, len, &dropped, err, sizeof(err)))
		pr_err("Task %d: thread %d: can't load its registers: %s", t->pid, t->tids[i],
		       err);
	else
		ret = ptrace_set_xstate(tid, area, len);
	free(area);
	return ret;
}

static int regs_final(struct rst_ctx *rc, struct rtask *t)
{
	struct regs_loaded *l = t->img[PART_REGS];
	int i;

	for (i = 0; i < t->nr_threads; i++) {
		if (ptrace_set_regs(t->host_tids[i], &l[i].regs))
			return -1;
		if (l[i].has_xsave && set_xsave(t, i, &l[i]))
			return -1;
	}
	return 0;
}

static void regs_release(struct rtask *t)
{
	struct regs_loaded *l = t->img[PART_REGS];
	int i;

	if (!l)
		return;
	for (i = 0; i < t->nr_threads; i++)
		img_free(IMG_REGS, l[i].e);
	free(l);
	t->img[PART_REGS] = NULL;
}

const struct part part_regs = {
	.name = "regs",
	.id = PART_REGS,
	.dump = regs_dump,
	.load = regs_load,
	.final = regs_final,
	.release = regs_release,
};
