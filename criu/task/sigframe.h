/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TASK_SIGFRAME_H
#define CRIU_TASK_SIGFRAME_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "proc/proc.h"

/*
 * A way home for a thread whose registers criu borrows during a dump, in
 * case criu dies (SIGKILL, OOM) while it holds them: the kernel then
 * detaches the thread and it runs from wherever its registers point.
 *
 * Before borrowing a thread, criu writes an rt_sigreturn frame with the
 * thread's registers, mask, FPU state and sigaltstack below its stack
 * pointer (past the red zone, in memory the thread does not use), with
 * the address of a sigreturn sequence (`mov $15,%rax; syscall`, glibc's
 * and musl's __restore_rt) as the return address. Every syscall criu
 * then injects runs at a `syscall; ret` of the task's own code with the
 * stack pointer at that frame, so whichever moment the tracer vanishes,
 * the thread finishes the syscall, returns into the sigreturn and is
 * back in its own code with its own state.
 */
struct gadgets {
	uint64_t sc_ret;	/* syscall; ret */
	uint64_t sigret;	/* mov $15,%rax; syscall */
	uint64_t unmap;		/* glibc's munmap(): optional, see infect.c */
};

/* Finds both sequences in the task's executable file mappings; 0 or -1. */
int gadgets_find(pid_t pid, const struct proc_maps *maps, struct gadgets *g);

/*
 * Writes thread @tid's frame below @regs->rsp, gives the thread the
 * signal mask @borrowed and fills in its sigaltstack from inside it. Returns the frame's address (the stack pointer
 * for injected syscalls), 0 when the thread's stack has no room (not an
 * error: that thread is borrowed without a way home), or -1. The word
 * below the frame holds @g->unmap: a syscall made with the stack pointer
 * there returns into munmap(rdi, rsi) before the sigreturn.
 */
int64_t sigframe_push(pid_t pid, pid_t tid, const struct proc_maps *maps,
		      const struct gadgets *g, const struct user_regs_struct *regs,
		      uint64_t sigmask, uint64_t borrowed);

/* A signal the task ignores, not pending: how the executor calls home. */
int sigframe_pick_signal(const struct proc_status *st);

#endif
