/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_PTRACE_H
#define CRIU_TASK_PTRACE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* Added in 5.13; Debian 12's headers (6.1) have it, kept for older ones. */
#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION	0x420f

#endif

struct ptrace_rseq_conf {
	uint64_t rseq_abi_pointer;
	uint32_t rseq_abi_size;
	uint32_t signature;
	uint32_t flags;
	uint32_t pad;
};

/*
 * PTRACE_SEIZE with @opts plus PTRACE_O_SUSPEND_SECCOMP, so that no system
 * call criu makes the task run is judged by its seccomp filters or strict
 * mode. The kernel grants that option only to a tracer with CAP_SYS_ADMIN
 * that is not itself under seccomp (EPERM), and only with
 * CONFIG_CHECKPOINT_RESTORE (EINVAL): then the task is seized without it
 * and ptrace_seccomp_suspended() answers 0 from then on. Returns what
 * ptrace() returns, errno set.
 */
int ptrace_seize_opts(pid_t tid, long opts);
/*
 * 1: every task seized so far has seccomp suspended; 0: the kernel refused
 * the option (*@err says why; a task with seccomp must then be refused).
 */
int ptrace_seccomp_suspended(int *err);
/*
 * Finds out, without a task to seize, whether the kernel grants the option
 * to criu: seizes a child of its own once. 1 yes, 0 no (*@err), -1 error.
 */
int ptrace_seccomp_probe(int *err);

/*
 * PTRACE_SEIZE + PTRACE_INTERRUPT and wait for the stop. Returns 0, 1 when
 * the thread exited under us (not logged), -1 on an error (logged).
 * @stopsig (may be NULL) gets the signal of the group stop the thread is
 * in (SIGSTOP, SIGTSTP...), or SIGTRAP when there is none.
 */
int ptrace_seize_stop(pid_t tid, int *stopsig);
/*
 * Its two halves, for a tree frozen by its cgroup (--freeze-cgroup): seize
 * and interrupt every thread while they are frozen, thaw, then wait for
 * each stop. The same returns; a thread interrupted and then not waited
 * for can't be detached.
 */
int ptrace_seize_interrupt(pid_t tid);
int ptrace_wait_interrupt(pid_t tid, int *stopsig);
/*
 * On: waits poll briefly before they sleep (ptrace.c says why); for a
 * dump, whose tracees are all frozen but the one waited for.
 */
void ptrace_poll_waits(int on);
/* Waits for a ptrace stop of @tid; returns the wait status or -1. */
int ptrace_wait(pid_t tid, int *status);
int ptrace_get_regs(pid_t tid, struct user_regs_struct *regs);
int ptrace_set_regs(pid_t tid, const struct user_regs_struct *regs);
int ptrace_get_xstate(pid_t tid, void **buf, size_t *len);
int ptrace_set_xstate(pid_t tid, const void *buf, size_t len);
int ptrace_get_sigmask(pid_t tid, uint64_t *mask);
int ptrace_set_sigmask(pid_t tid, uint64_t mask);
int ptrace_get_rseq(pid_t tid, struct ptrace_rseq_conf *conf);

/*
 * Runs one system call in a stopped tracee: @regs is a register set valid
 * for the task (its own, saved earlier), @ip points at a syscall
 * instruction. Stops at syscall entry and exit (PTRACE_SYSCALL), so the
 * task never executes anything after the instruction. On return the
 * tracee sits in the syscall-exit stop.
 */
int remote_syscall(pid_t tid, const struct user_regs_struct *regs, uint64_t ip,
		   long *ret, long nr, long a0, long a1, long a2, long a3, long a4, long a5);

/*
 * Our own reference to the open file description behind fd @fd of task
 * @pid (pidfd_getfd(), which asks what PTRACE_ATTACH would); -1 logged.
 */
int ptrace_getfd(pid_t pid, int fd);
/*
 * The bytes waiting to be read from fd @fd of task @pid (FIONREAD on our
 * copy of it, for kinds whose queue is not saved); 0 when it can't be told.
 */
int ptrace_fd_queued(pid_t pid, int fd);

#endif
