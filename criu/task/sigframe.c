// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "core/log.h"
#include "core/util.h"
#include "task/ptrace.h"
#include "task/sigframe.h"

/* The kernel's x86_64 struct rt_sigframe, spelled out: glibc's differs. */
struct kstack {
	uint64_t sp;
	int32_t flags;
	int32_t pad;
	uint64_t size;
};

struct ksigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
};

struct kframe {
	uint64_t pretcode;
	uint64_t uc_flags, uc_link;
	struct kstack uc_stack;
	struct ksigcontext mc;
	uint64_t sigmask;
	uint8_t siginfo[128];
};

_Static_assert(sizeof(struct ksigcontext) == 256, "x86_64 sigcontext");
_Static_assert(sizeof(struct kframe) == 440, "x86_64 rt_sigframe");

#define UC_FP_XSTATE		0x1
#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4
#define FP_XSTATE_MAGIC1	0x46505853U
#define FP_XSTATE_MAGIC2	0x46505845U
#define FPX_SW_OFF		464	/* struct _fpx_sw_bytes in the legacy area */
#define XSTATE_BV_OFF		512
#define FP_OFF			448	/* 64-byte aligned, after the frame */
#define RED_ZONE		128
#define BAD_SS_MODE		(SS_ONSTACK | SS_DISABLE)
#define PREFIX			64	/* below the frame: the return into munmap */

#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

static const uint8_t pat_sc_ret[] = { 0x0f, 0x05, 0xc3 };
static const uint8_t pat_sigret[] = { 0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05 };
static const uint8_t pat_sigret32[] = { 0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05 };
/* mov $11,%eax; syscall; cmp $-4095,%rax; jae err; ret: returns either way */
static const uint8_t pat_unmap[] = { 0xb8, 0x0b, 0, 0, 0, 0x0f, 0x05, 0x48, 0x3d,
				     0x01, 0xf0, 0xff, 0xff, 0x73, 0x01, 0xc3 };

/*
 * Where the sequences are in a mapped file, by offset into the mapping:
 * the tasks of a tree share their libraries, so each is read once.
 */
struct gcache {
	unsigned int major, minor;
	uint64_t ino, pgoff, len;
	int64_t sc_ret, sigret, unmap;	/* -1: not there */
};

#define GCACHE_MAX	64
static struct gcache gcache[GCACHE_MAX];
static int gcache_nr;

static struct gcache *gcache_get(const struct proc_vma *v)
{
	int i;

	for (i = 0; i < gcache_nr; i++) {
		struct gcache *c = &gcache[i];

		if (c->major == v->dev_major && c->minor == v->dev_minor &&
		    c->ino == v->ino && c->pgoff == v->pgoff &&
		    c->len == v->end - v->start)
			return c;
	}
	return NULL;
}

static int64_t find_first(const uint8_t *buf, size_t len, const uint8_t *pat, size_t plen)
{
	const uint8_t *p = memmem(buf, len, pat, plen);

	return p ? p - buf : -1;
}

static struct gcache *gcache_scan(pid_t pid, const struct proc_vma *v)
{
	size_t len = v->end - v->start;
	struct gcache *c, tmp;
	struct iovec l, r;
	uint8_t *buf;

	if (len > (64 << 20))
		return NULL;
	buf = xmalloc(len);
	if (!buf)
		return NULL;
	l.iov_base = buf;
	l.iov_len = len;
	r.iov_base = (void *)v->start;
	r.iov_len = len;
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	tmp.major = v->dev_major;
	tmp.minor = v->dev_minor;
	tmp.ino = v->ino;
	tmp.pgoff = v->pgoff;
	tmp.len = len;
	tmp.sc_ret = find_first(buf, len, pat_sc_ret, sizeof(pat_sc_ret));
	tmp.sigret = find_first(buf, len, pat_sigret, sizeof(pat_sigret));
	if (tmp.sigret < 0)
		tmp.sigret = find_first(buf, len, pat_sigret32, sizeof(pat_sigret32));
	tmp.unmap = find_first(buf, len, pat_unmap, sizeof(pat_unmap));
	free(buf);
	if (gcache_nr == GCACHE_MAX)
		gcache_nr = 0;	/* a tree with that many libraries: start over */
	c = &gcache[gcache_nr++];
	*c = tmp;
	return c;
}

/* The bytes must still be there: a debugger may have patched the code. */
static int gadget_ok(pid_t pid, uint64_t at, const uint8_t *pat, size_t len)
{
	uint8_t buf[16];
	struct iovec l = { buf, len }, r = { (void *)at, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len &&
	       !memcmp(buf, pat, len);
}

static int sigret_ok(pid_t pid, uint64_t at)
{
	return gadget_ok(pid, at, pat_sigret, sizeof(pat_sigret)) ||
	       gadget_ok(pid, at, pat_sigret32, sizeof(pat_sigret32));
}

static void gadgets_from(pid_t pid, const struct proc_vma *v, struct gadgets *g)
{
	struct gcache *c = gcache_get(v);

	if (!c)
		c = gcache_scan(pid, v);
	if (!c)
		return;
	if (!g->sc_ret && c->sc_ret >= 0 &&
	    gadget_ok(pid, v->start + c->sc_ret, pat_sc_ret, sizeof(pat_sc_ret)))
		g->sc_ret = v->start + c->sc_ret;
	if (!g->sigret && c->sigret >= 0 && sigret_ok(pid, v->start + c->sigret))
		g->sigret = v->start + c->sigret;
	if (!g->unmap && c->unmap >= 0 &&
	    gadget_ok(pid, v->start + c->unmap, pat_unmap, sizeof(pat_unmap)))
		g->unmap = v->start + c->unmap;
}

int gadgets_find(pid_t pid, const struct proc_maps *maps, struct gadgets *g)
{
	int i, pass;

	memset(g, 0, sizeof(*g));
	/* the C library first (it has both), then any other program text */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < maps->nr && !(g->sc_ret && g->sigret && g->unmap); i++) {
			const struct proc_vma *v = &maps->vma[i];
			int libc;

			if (!(v->prot & PROT_EXEC) || !v->path || v->path[0] != '/')
				continue;
			libc = strstr(v->path, "/libc") || strstr(v->path, "/ld-");
			if (libc == !pass)
				gadgets_from(pid, v, g);
		}
	return g->sc_ret && g->sigret ? 0 : -1;
}

/* The area @addr is in; maps are sorted (a task of 10,000 threads has 20,000). */
static const struct proc_vma *vma_of(const struct proc_maps *maps, uint64_t addr)
{
	int lo = 0, hi = maps->nr, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (maps->vma[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < maps->nr && maps->vma[lo].start <= addr ? &maps->vma[lo] : NULL;
}

static void fill_mcontext(struct ksigcontext *mc, const struct user_regs_struct *r)
{
	mc->r8 = r->r8;
	mc->r9 = r->r9;
	mc->r10 = r->r10;
	mc->r11 = r->r11;
	mc->r12 = r->r12;
	mc->r13 = r->r13;
	mc->r14 = r->r14;
	mc->r15 = r->r15;
	mc->rdi = r->rdi;
	mc->rsi = r->rsi;
	mc->rbp = r->rbp;
	mc->rbx = r->rbx;
	mc->rdx = r->rdx;
	mc->rax = r->rax;
	mc->rcx = r->rcx;
	mc->rsp = r->rsp;
	mc->rip = r->rip;
	mc->eflags = r->eflags;
	mc->cs = r->cs;
	mc->ss = r->ss;
	/*
	 * rt_sigreturn never restarts a system call: do what the kernel would
	 * have done on the way out of the interrupted one, and run it again.
	 */
	if ((int64_t)r->orig_rax >= 0) {
		switch (-(int64_t)r->rax) {
		case ERESTARTSYS:
		case ERESTARTNOINTR:
		case ERESTARTNOHAND:
		case ERESTART_RESTARTBLOCK:
			mc->rax = r->orig_rax;
			mc->rip -= 2;
		}
	}
}

/* The XSAVE image as the kernel wants it in a signal frame. */
static void fill_fpstate(uint8_t *fp, size_t len)
{
	uint32_t magic1 = FP_XSTATE_MAGIC1, magic2 = FP_XSTATE_MAGIC2;
	uint32_t ext = len + sizeof(magic2), size = len;
	uint64_t features;

	memcpy(&features, fp + FPX_SW_OFF + 8, sizeof(features));
	if (memcmp(fp + FPX_SW_OFF, &magic1, sizeof(magic1))) {
		memcpy(&features, fp + XSTATE_BV_OFF, sizeof(features));
		features |= 3;	/* x87 and SSE always */
	}
	memcpy(fp + FPX_SW_OFF, &magic1, 4);
	memcpy(fp + FPX_SW_OFF + 4, &ext, 4);
	memcpy(fp + FPX_SW_OFF + 8, &features, 8);
	memcpy(fp + FPX_SW_OFF + 16, &size, 4);
	memcpy(fp + len, &magic2, 4);
}

static int64_t frame_place(const struct proc_maps *maps, uint64_t sp, size_t total)
{
	const struct proc_vma *v = vma_of(maps, sp - 1);
	uint64_t f;

	if (!v || !(v->prot & PROT_WRITE) || sp < RED_ZONE + total + PREFIX + 64)
		return 0;
	f = (sp - RED_ZONE - total) & ~63ULL;
	return f - PREFIX >= v->start ? (int64_t)f : 0;
}

int64_t sigframe_push(pid_t pid, pid_t tid, const struct proc_maps *maps,
		      const struct gadgets *g, const struct user_regs_struct *regs,
		      uint64_t sigmask, uint64_t borrowed)
{
	struct user_regs_struct base = *regs;
	struct kframe *fr;
	struct iovec l, r;
	size_t xlen, total;
	int64_t f, ret = -1;
	uint8_t *buf;
	void *xs;

	if (ptrace_get_xstate(tid, &xs, &xlen))
		return -1;
	total = FP_OFF + xlen + 64;
	f = frame_place(maps, regs->rsp, total);
	if (!f) {
		pr_info("Thread %d: no room for a way home below sp %#llx", tid, regs->rsp);
		free(xs);
		return 0;
	}
	buf = xzalloc(PREFIX + total);
	if (!buf)
		goto out;
	memcpy(buf + PREFIX - 8, &g->unmap, 8);
	fr = (struct kframe *)(buf + PREFIX);
	fr->pretcode = g->sigret;
	fr->uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/*
	 * rt_sigreturn sets the sigaltstack from the frame, but ignores every
	 * error but EFAULT: a mode no kernel knows leaves the thread's own
	 * altstack as it is, and saves asking the thread for it.
	 */
	fr->uc_stack.flags = BAD_SS_MODE;
	fill_mcontext(&fr->mc, regs);
	fr->mc.fpstate = f + FP_OFF;
	fr->sigmask = sigmask;
	memcpy(buf + PREFIX + FP_OFF, xs, xlen);
	fill_fpstate(buf + PREFIX + FP_OFF, xlen);
	l.iov_base = buf;
	l.iov_len = PREFIX + total;
	r.iov_base = (void *)(f - PREFIX);
	r.iov_len = PREFIX + total;
	if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)(PREFIX + total)) {
		pr_perror("Thread %d: can't write its way home at %#lx", tid, (long)f);
		goto out;
	}
	/*
	 * From here on, any injected syscall ends in the sigreturn, which
	 * also puts back the mask: block the task's signals before the first
	 * one, or a pending SIGCHLD would be delivered in its place. Parked
	 * on the sigreturn itself meanwhile.
	 */
	base.rip = g->sigret;
	base.rsp = f + 8;
	base.orig_rax = -1;
	if (ptrace_set_regs(tid, &base) || ptrace_set_sigmask(tid, borrowed))
		goto out;
	ret = f;
out:
	free(buf);
	free(xs);
	return ret;
}

int sigframe_pick_signal(const struct proc_status *st)
{
	static const int dfl_ign[] = { SIGURG, SIGWINCH, SIGCHLD };
	uint64_t busy = st->sig_pnd | st->shd_pnd;
	unsigned int i;
	int s;

#define BIT(s) (1ULL << ((s) - 1))
	for (i = 0; i < 2; i++)
		if (!((st->sig_cgt | busy) & BIT(dfl_ign[i])))
			return dfl_ign[i];
	for (s = 1; s <= 64; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCONT &&
		    (st->sig_ign & BIT(s)) && !(busy & BIT(s)))
			return s;
	if (!((st->sig_cgt | busy) & BIT(SIGCHLD)))
		return SIGCHLD;
#undef BIT
	return 0;
}
