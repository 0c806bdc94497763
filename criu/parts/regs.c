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
#include "regs.pb-c.h"

#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

/* offsetof(struct xregs_state, header.xfeatures) / xsave sw bytes */
#define XSAVE_XFEATURES_OFF	512
#define XSAVE_SW_BYTES_OFF	464
#define XSAVE_MIN		576

struct regs_loaded {
	RegsEntry *e;
	struct user_regs_struct regs;
};

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

static int dump_thread(struct dump_ctx *dc, pid_t tid, pid_t ns_tid,
		       struct user_regs_struct r)
{
	RegsEntry e = REGS_ENTRY__INIT;
	UserRegsX86 gp = USER_REGS_X86__INIT;
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
	e.has_xstate = 1;
	e.xstate.data = xs;
	e.xstate.len = xlen;
	if (xlen >= XSAVE_MIN) {
		e.has_xfeatures = 1;
		/* ptrace puts XCR0 in the first word of the software-reserved bytes */
		memcpy(&e.xfeatures, (char *)xs + XSAVE_SW_BYTES_OFF, 8);
	}
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

static int load_thread(struct rst_ctx *rc, pid_t pid, pid_t tid, struct regs_loaded *l)
{
	if (img_read(rc->dirfd, IMG_REGS, tid, (void **)&l->e, 0) < 0)
		return -1;
	if (l->e->tid != (uint32_t)tid) {
		pr_err("Task %d: image regs-%d.img is of thread %u", pid, tid, l->e->tid);
		return -1;
	}
	if (l->e->has_xstate && (l->e->xstate.len < XSAVE_MIN ||
				 l->e->xstate.len > (64 << 10))) {
		pr_err("Task %d: image regs-%d.img has an xstate of %zu bytes", pid, tid,
		       l->e->xstate.len);
		return -1;
	}
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

static int regs_final(struct rst_ctx *rc, struct rtask *t)
{
	struct regs_loaded *l = t->img[PART_REGS];
	int i;

	for (i = 0; i < t->nr_threads; i++) {
		if (ptrace_set_regs(t->host_tids[i], &l[i].regs))
			return -1;
		if (l[i].e->has_xstate &&
		    ptrace_set_xstate(t->host_tids[i], l[i].e->xstate.data, l[i].e->xstate.len))
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
