// SPDX-License-Identifier: GPL-2.0
/*
 * Group stops: a task stopped by SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU comes
 * back stopped by the same signal, and its parent sees what it saw before.
 *
 * What the parent sees is kernel state of the child's signal struct: the
 * stop (SIGNAL_STOP_STOPPED) and a code that a wait with WUNTRACED reports
 * once and then clears; and a SIGCHLD the stop sent, pending in the parent
 * while it blocks SIGCHLD or has a handler that has not run yet. There is
 * no view of the code from outside, so dump asks the parent itself:
 * waitid(WSTOPPED | WNOHANG | WNOWAIT) in its batch says whether the stop
 * is still to be reported, without taking the report. The stop signal is
 * what the group-stop trap shows the tracer when the task is seized.
 * Neither a seize nor a detach (without a signal) of a stopped task
 * notifies the parent or touches the code: the kernel puts a stopped
 * tracee back into its stop when the tracer leaves.
 *
 * Restore makes the stop anew while criu still holds the task: it lets the
 * leader take the dumped signal as a delivered signal, so the kernel starts
 * the group stop, each thread joins it in a trap, and the last one notifies
 * the parent (still held too). Then, in the parent, a wait4(WUNTRACED) takes
 * the new report if the old one had been taken, and rt_sigtimedwait drops
 * the new SIGCHLD unless one was pending at the dump. Only after that is
 * the tree released; the stopped tasks sink back into their stop silently.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "task/ptrace.h"
#include "tree/stop.h"

#define SIGBIT(sig)	(1ULL << ((sig) - 1))
#define MAX_TRAPS	8	/* stray traps tolerated on the way to a stop */

int stop_signal_valid(uint32_t sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* ---------------------------------------------------------------- dump */

static int stopped_child(const struct dtask *c, const struct dtask *parent)
{
	return c->parent == parent && c->stopped && !c->zombie;
}

int stop_ask_parent(struct dtask **tasks, int nr, struct dtask *parent, struct batch *b)
{
	struct dtask *c;
	int i;

	for (i = 0; i < nr; i++) {
		c = tasks[i];
		if (!stopped_child(c, parent))
			continue;
		c->stop_query = batch_put(b, NULL, sizeof(siginfo_t));
		if (!c->stop_query)
			return -1;
		/* WNOWAIT: asking must not take the report */
		if (BATCH(b, "waitid(WNOWAIT) for a stopped child", __NR_waitid, P_PID,
			  c->ns_pid, c->stop_query,
			  WSTOPPED | WNOHANG | WNOWAIT | __WALL, 0) < 0)
			return -1;
	}
	return 0;
}

void stop_read_answers(struct dtask **tasks, int nr, struct dtask *parent, struct batch *b)
{
	const siginfo_t *si;
	struct dtask *c;
	int i;

	for (i = 0; i < nr; i++) {
		c = tasks[i];
		if (!stopped_child(c, parent) || !c->stop_query)
			continue;
		si = batch_local(b, c->stop_query);
		/* nothing to report (si_pid 0): the parent has waited already */
		c->stop_waited = si->si_pid != c->ns_pid;
		pr_debug("Task %d: stopped by signal %d, %s by its parent %d", c->pid,
			 c->stop_sig, c->stop_waited ? "collected" : "not yet collected",
			 parent->pid);
	}
}

void stop_fill(const struct dtask *t, PstreeTask *pt)
{
	if (!t->zombie && ((t->status.sig_pnd | t->status.shd_pnd) & SIGBIT(SIGCHLD)))
		pt->has_sigchld_pending = pt->sigchld_pending = 1;
	if (!t->stopped)
		return;
	pt->has_stopped = pt->stopped = 1;
	pt->has_stop_signal = 1;
	pt->stop_signal = t->stop_sig;
	if (t->stop_waited)
		pt->has_stop_waited = pt->stop_waited = 1;
}

/* ------------------------------------------------------------- restore */

static int cont_wait(pid_t pid, pid_t tid, int sig, int *status)
{
	if (ptrace(PTRACE_CONT, tid, 0, sig)) {
		pr_perror("Task %d: can't resume thread %d into its stop", pid, tid);
		return -1;
	}
	return ptrace_wait(tid, status);
}

static int is_trap(int status)
{
	return status >> 16 == PTRACE_EVENT_STOP;
}

/*
 * The leader takes @sig as a delivered signal. A SIGSTOP queued from here
 * reaches us first as a signal-delivery stop (it can't be blocked, and
 * every other signal is blocked while criu holds the task); resuming it
 * with @sig makes the kernel act on @sig instead: with its default action,
 * a group stop. Returns the signal of the group stop the leader then traps
 * in, SIGTRAP if the kernel dropped @sig (a stop signal other than SIGSTOP
 * sent into an orphaned process group), -1 on error.
 */
static int deliver_stop(struct rtask *t, int sig)
{
	pid_t pid = t->host_pid;
	int status, n = 0, got;
	uint64_t mask;

	if (syscall(SYS_tgkill, pid, pid, SIGSTOP)) {
		pr_perror("Task %d: can't send it SIGSTOP", t->pid);
		return -1;
	}
	do {
		if (n++ == MAX_TRAPS || cont_wait(t->pid, pid, 0, &status))
			return -1;
	} while (is_trap(status));
	if (WSTOPSIG(status) != SIGSTOP) {
		pr_err("Task %d: stopped by signal %d, not by the SIGSTOP sent to it",
		       t->pid, WSTOPSIG(status));
		return -1;
	}
	/* a blocked signal would be queued back instead of acted on */
	if (ptrace_get_sigmask(pid, &mask) || ptrace_set_sigmask(pid, mask & ~SIGBIT(sig)))
		return -1;
	/* should the kernel drop it, trap anyway instead of running on */
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
		pr_perror("Task %d: can't interrupt it", t->pid);
		return -1;
	}
	if (cont_wait(t->pid, pid, sig, &status) || ptrace_set_sigmask(pid, mask))
		return -1;
	if (!is_trap(status)) {
		pr_err("Task %d: stopped by signal %d instead of its group stop", t->pid,
		       WSTOPSIG(status));
		return -1;
	}
	got = WSTOPSIG(status);
	return got;
}

/* A handler or SIG_IGN for @sig: its default action, the stop, would not happen. */
static int stop_handled(struct rtask *t, int sig)
{
	struct proc_status st;
	int ret;

	if (sig == SIGSTOP || proc_read_status(t->host_pid, &st))
		return 0;
	ret = !!((st.sig_cgt | st.sig_ign) & SIGBIT(sig));
	proc_status_free(&st);
	return ret;
}

int stop_enter(struct rtask *t, const PstreeTask *pt)
{
	int sig = pt->stop_signal ? (int)pt->stop_signal : SIGSTOP;
	int i, j, got, status;
	uint64_t mask;

	if (stop_handled(t, sig)) {
		pr_warn("Task %d: signal %d is caught or ignored now; stopped by SIGSTOP",
			t->pid, sig);
		sig = SIGSTOP;
	}
	got = deliver_stop(t, sig);
	if (got == SIGTRAP && sig != SIGSTOP) {
		pr_warn("Task %d: the kernel dropped its stop signal %d (an orphaned "
			"process group); stopped by SIGSTOP", t->pid, sig);
		sig = SIGSTOP;
		got = deliver_stop(t, sig);
	}
	if (got < 0)
		return -1;
	if (got != sig) {
		pr_err("Task %d: in a group stop by signal %d, not %d", t->pid, got, sig);
		return -1;
	}
	/* every other thread joins the stop from where criu holds it */
	for (i = 1; i < t->nr_threads; i++) {
		for (j = 0;; j++) {
			if (j == MAX_TRAPS || cont_wait(t->pid, t->host_tids[i], 0, &status))
				return -1;
			if (is_trap(status) && WSTOPSIG(status) == sig)
				break;
			if (!is_trap(status)) {
				pr_err("Task %d: thread %d stopped by signal %d instead of "
				       "joining the group stop", t->pid, t->tids[i],
				       WSTOPSIG(status));
				return -1;
			}
		}
	}
	/*
	 * The last thread to join notifies the parent just after it is seen
	 * trapped; any ptrace request waits until it is off the CPU, past that.
	 */
	for (i = 0; i < t->nr_threads; i++)
		if (ptrace_get_sigmask(t->host_tids[i], &mask))
			return -1;
	pr_info("Task %d: in its group stop again (signal %d)", t->pid, sig);
	return 0;
}

int stop_collect(struct rtask *p, const struct rtask *c, const PstreeTask *cpt, uint64_t insn)
{
	struct user_regs_struct base;
	long ret;

	if (!cpt->stop_waited)
		return 0;
	if (ptrace_get_regs(p->host_pid, &base) ||
	    remote_syscall(p->host_pid, &base, insn, &ret, __NR_wait4, c->pid, 0,
			   WUNTRACED | WNOHANG | __WALL, 0, 0, 0))
		return -1;
	if (ret != c->pid) {
		pr_err("Task %d: can't collect the stop of its child %d again (%ld)",
		       p->pid, c->pid, ret);
		return -1;
	}
	pr_debug("Task %d: collected the stop of its child %d", p->pid, c->pid);
	return 0;
}

/* rt_sigtimedwait({SIGCHLD}, NULL, {0, 0}) in @p: takes one if there is one. */
int stop_drop_sigchld(struct rtask *p, const PstreeTask *ppt, uint64_t insn, uint64_t scratch)
{
	struct {
		uint64_t set;
		struct timespec zero;
	} arg = { SIGBIT(SIGCHLD), { 0, 0 } };
	struct iovec l = { &arg, sizeof(arg) }, r = { (void *)scratch, sizeof(arg) };
	struct user_regs_struct base;
	long ret;

	if (ppt->sigchld_pending)
		return 0;
	if (process_vm_writev(p->host_pid, &l, 1, &r, 1, 0) != sizeof(arg)) {
		pr_perror("Task %d: can't write the arguments of rt_sigtimedwait", p->pid);
		return -1;
	}
	if (ptrace_get_regs(p->host_pid, &base) ||
	    remote_syscall(p->host_pid, &base, insn, &ret, __NR_rt_sigtimedwait, scratch, 0,
			   scratch + sizeof(uint64_t), sizeof(uint64_t), 0, 0))
		return -1;
	if (ret != SIGCHLD && ret != -EAGAIN) {
		pr_err("Task %d: rt_sigtimedwait for SIGCHLD failed (%ld)", p->pid, ret);
		return -1;
	}
	if (ret == SIGCHLD)
		pr_debug("Task %d: dropped the SIGCHLD of its children's stops", p->pid);
	return 0;
}
