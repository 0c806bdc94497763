// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <elf.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"
#include "task/ptrace.h"

#define XSTATE_MAX	(64 << 10)

static char proc_state(const char *stat_path)
{
	char buf[512], *p;
	ssize_t n;
	int fd;

	fd = open(stat_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * How long a wait for a tracee's stop polls before it sleeps. Most stops
 * a dump waits for (an injected syscall, a batch of them, an interrupt)
 * come within some tens of microseconds. Sleeping in wait4 costs two
 * cross-CPU wake-ups per round trip (the tracee's, on an idle CPU, and
 * ours); on a VM each is an IPI with an exit to the host: measured 38 us
 * per stop against 8 us when we poll and yield, which also lets a tracee
 * woken on our CPU run at once. Longer waits sleep as before.
 *
 * Only while the tracees are all frozen but the one we wait for: a
 * restore waits while the tasks it created still build themselves, and
 * polling took the CPU from them (100-task restore 93 -> 150 ms).
 */
#define WAIT_POLL_NS	200000

static int poll_waits;

void ptrace_poll_waits(int on)
{
	poll_waits = on;
}

/* waitpid(@tid, __WALL), polling for a while first; EINTR is retried. */
static pid_t wait_tracee(pid_t tid, int *status)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + WAIT_POLL_NS;
	pid_t ret = 0;

	while (poll_waits) {
		ret = waitpid(tid, status, __WALL | WNOHANG);
		if (ret || clock_ns(CLOCK_MONOTONIC) >= end)
			break;
		sched_yield();
	}
	while (ret <= 0) {
		if (ret < 0 && errno != EINTR)
			break;
		ret = waitpid(tid, status, __WALL);
	}
	return ret;
}

int ptrace_wait(pid_t tid, int *status)
{
	pid_t ret = wait_tracee(tid, status);

	if (ret < 0) {
		pr_perror("Task %d: wait failed", tid);
		return -1;
	}
	if (!WIFSTOPPED(*status)) {
		if (WIFEXITED(*status))
			pr_err("Task %d exited with %d while being traced", tid,
			       WEXITSTATUS(*status));
		else
			pr_err("Task %d was killed by signal %d while being traced",
			       tid, WTERMSIG(*status));
		return -1;
	}
	return 0;
}

/* The tracer of @tid if it is not criu, else 0. */
static pid_t foreign_tracer(pid_t tid)
{
	struct proc_status st;
	pid_t tracer;

	if (proc_read_status(tid, &st))
		return 0;
	tracer = st.tracer == getpid() ? 0 : st.tracer;
	proc_status_free(&st);
	return tracer;
}

static int dead(pid_t tid)
{
	char path[64], state;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	state = proc_state(path);
	return state == 'Z' || state == 'X';
}

/*
 * A thread that exits under us is gone, not an error: 1. Not one that
 * another tracer holds dead: it stays in its group until that tracer
 * collects it, and its task could not die after the dump (nor its pid be
 * restored) while it does not.
 */
static int gone(pid_t tid, int err)
{
	if (err == ESRCH || err == EPERM) {
		char path[64];

		/* EPERM also means not ours: tell the two apart */
		snprintf(path, sizeof(path), "/proc/%d", tid);
		if (err == ESRCH || access(path, F_OK))
			return 1;
		return dead(tid) && !foreign_tracer(tid);
	}
	return 0;
}

/* errno of the refused PTRACE_O_SUSPEND_SECCOMP; 0 while the kernel grants it */
static int suspend_refused;

int ptrace_seize_opts(pid_t tid, long opts)
{
	int err;

	if (!suspend_refused) {
		if (!ptrace(PTRACE_SEIZE, tid, 0, opts | PTRACE_O_SUSPEND_SECCOMP))
			return 0;
		err = errno;
		if (err != EPERM && err != EINVAL)
			return -1;
		/*
		 * EPERM may as well say that the task is not ours to trace:
		 * only a seize that works without the option tells.
		 */
		if (ptrace(PTRACE_SEIZE, tid, 0, opts)) {
			errno = err;
			return -1;
		}
		suspend_refused = err;
		pr_info("The kernel refuses PTRACE_O_SUSPEND_SECCOMP (%s): tasks with seccomp "
			"can't be handled", strerror(err));
		return 0;
	}
	return ptrace(PTRACE_SEIZE, tid, 0, opts) ? -1 : 0;
}

int ptrace_seccomp_suspended(int *err)
{
	*err = suspend_refused;
	return !suspend_refused;
}

int ptrace_seccomp_probe(int *err)
{
	static int known;
	int status, ret = -1;
	pid_t pid;

	if (known || suspend_refused)
		return ptrace_seccomp_suspended(err);
	pid = fork();
	if (pid < 0) {
		pr_perror("Can't fork to probe PTRACE_O_SUSPEND_SECCOMP");
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	if (ptrace_seize_opts(pid, 0))
		pr_perror("Can't seize a child of criu's own to probe PTRACE_O_SUSPEND_SECCOMP");
	else
		ret = ptrace_seccomp_suspended(err);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	known = ret >= 0;
	return ret;
}

int ptrace_seize_interrupt(pid_t tid)
{
	pid_t tracer;
	int err;

	if (ptrace_seize_opts(tid, PTRACE_O_TRACESYSGOOD)) {
		err = errno;
		if (gone(tid, err))
			return 1;
		tracer = err == EPERM ? foreign_tracer(tid) : 0;
		if (tracer) {
			pr_err("Task %d: traced by %d%s; it can't be seized", tid, tracer,
			       dead(tid) ? ", which has not collected its exit" : "");
			return -1;
		}
		errno = err;
		pr_perror("Task %d: can't seize it", tid);
		return -1;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		if (errno == ESRCH)
			return 1;
		pr_perror("Task %d: can't interrupt it", tid);
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -1;
	}
	return 0;
}

int ptrace_wait_interrupt(pid_t tid, int *stopsig)
{
	int status;
	pid_t ret;

	for (;;) {
		ret = wait_tracee(tid, &status);
		if (ret < 0 || !WIFSTOPPED(status))
			goto dead;
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (stopsig)
				*stopsig = WSTOPSIG(status);
			return 0;
		}
		/* exiting: PTRACE_EVENT_EXIT would come; nothing else will */
		/*
		 * A signal arrived before our interrupt: let it be delivered
		 * as the kernel would, the interrupt stop comes next.
		 */
		if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(status))) {
			if (errno == ESRCH)
				goto dead;
			pr_perror("Task %d: can't continue it", tid);
			goto detach;
		}
	}
dead:
	return 1;
detach:
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return -1;
}

int ptrace_seize_stop(pid_t tid, int *stopsig)
{
	int ret = ptrace_seize_interrupt(tid);

	return ret ? ret : ptrace_wait_interrupt(tid, stopsig);
}

int ptrace_get_regs(pid_t tid, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, tid, 0, regs)) {
		pr_perror("Task %d: can't get registers", tid);
		return -1;
	}
	return 0;
}

int ptrace_set_regs(pid_t tid, const struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_SETREGS, tid, 0, regs)) {
		pr_perror("Task %d: can't set registers", tid);
		return -1;
	}
	return 0;
}

int ptrace_get_xstate(pid_t tid, void **buf, size_t *len)
{
	struct iovec iov;
	void *p = xmalloc(XSTATE_MAX);

	if (!p)
		return -1;
	iov.iov_base = p;
	iov.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov)) {
		pr_perror("Task %d: can't get the xstate", tid);
		free(p);
		return -1;
	}
	*buf = p;
	*len = iov.iov_len;
	return 0;
}

int ptrace_set_xstate(pid_t tid, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &iov)) {
		pr_perror("Task %d: can't set the xstate (%zu bytes)", tid, len);
		return -1;
	}
	return 0;
}

int ptrace_get_sigmask(pid_t tid, uint64_t *mask)
{
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(*mask), mask)) {
		pr_perror("Task %d: can't get the signal mask", tid);
		return -1;
	}
	return 0;
}

int ptrace_set_sigmask(pid_t tid, uint64_t mask)
{
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask)) {
		pr_perror("Task %d: can't set the signal mask", tid);
		return -1;
	}
	return 0;
}

int ptrace_get_rseq(pid_t tid, struct ptrace_rseq_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, sizeof(*conf), conf) < 0) {
		if (errno == EIO || errno == EINVAL)
			return 1;	/* kernel without it: nothing registered */
		pr_perror("Task %d: can't get the rseq configuration", tid);
		return -1;
	}
	return 0;
}

static int syscall_stop(pid_t tid, const char *what)
{
	int status;

	do {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0)) {
			pr_perror("Task %d: can't resume it to the syscall %s", tid, what);
			return -1;
		}
		if (ptrace_wait(tid, &status))
			return -1;
		/* a stopped task traps for its group stop once more: go on */
	} while (status >> 16 == PTRACE_EVENT_STOP);
	if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
		pr_err("Task %d: stopped by signal %d instead of at syscall %s",
		       tid, WSTOPSIG(status), what);
		return -1;
	}
	return 0;
}

int remote_syscall(pid_t tid, const struct user_regs_struct *base, uint64_t ip,
		   long *ret, long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	struct user_regs_struct regs = *base;

	regs.rip = ip;
	regs.rax = nr;
	regs.orig_rax = -1;	/* no syscall restart on the way out of the stop */
	regs.rdi = a0;
	regs.rsi = a1;
	regs.rdx = a2;
	regs.r10 = a3;
	regs.r8 = a4;
	regs.r9 = a5;
	if (ptrace_set_regs(tid, &regs))
		return -1;
	if (syscall_stop(tid, "entry") || syscall_stop(tid, "exit"))
		return -1;
	if (ptrace_get_regs(tid, &regs))
		return -1;
	*ret = regs.rax;
	return 0;
}

int ptrace_getfd(pid_t pid, int fd)
{
	int pidfd, ours;

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		pr_perror("Task %d: can't open a pidfd", pid);
		return -1;
	}
	ours = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (ours < 0)
		pr_perror("Task %d: can't take a copy of its fd %d", pid, fd);
	close(pidfd);
	return ours;
}

int ptrace_fd_queued(pid_t pid, int fd)
{
	int ours = ptrace_getfd(pid, fd), queued = 0;

	if (ours >= 0 && ioctl(ours, FIONREAD, &queued))
		queued = 0;
	if (ours >= 0)
		close(ours);
	return queued;
}
