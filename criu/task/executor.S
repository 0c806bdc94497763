/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall executor copied into a task's scratch area. It runs a table
 * of struct sc_entry { nr, args[6], ret } (64 bytes each), then hands
 * control back to the tracer: N syscalls for one ptrace round trip.
 *
 * In:  rdi = table, rsi = number of entries.
 * Out: each entry's ret filled; on the first failing entry not marked
 *      SC_MAY_FAIL (bit 62 of nr) it stops; r13 = entries not run.
 * SC_ARG0_AT (bit 61 of nr): args[0] is the address of the value to pass
 *      (an earlier entry's ret: the fd an open returned, for its write).
 * Uses no stack: the restore variant unmaps the old one under its feet.
 *
 * The way back is chosen by the batch header (struct batch_hdr, HDR_OFF
 * bytes into this page). exit_sig 0: int3 (restore: a task whose tracer
 * dies there is lost anyway). Otherwise (dump) the executor sends itself
 * exit_sig, a signal the task ignores: a live tracer sees the signal stop
 * at executor_signalled and takes over, while with the tracer gone the
 * signal is dropped and the code below takes the task home: munmap of
 * the scratch area through a `syscall; ret` of the task's own libraries
 * (exit_ip), whose ret lands on the rt_sigreturn frame at exit_sp that
 * holds the task's registers, mask and FPU state.
 */
	.equ	HDR_OFF, 2048
	.equ	HDR_EXIT_SIG, HDR_OFF + 16
	.equ	HDR_EXIT_IP, HDR_OFF + 24
	.equ	HDR_EXIT_SP, HDR_OFF + 32
	.equ	HDR_UNMAP_ADDR, HDR_OFF + 40
	.equ	HDR_UNMAP_LEN, HDR_OFF + 48

	.section .rodata, "a"
	.globl executor_code_start
	.globl executor_code_end
	.globl executor_syscall_insn
	.globl executor_signalled
	.p2align 4
executor_code_start:
	mov	%rdi, %r12
	mov	%rsi, %r13
1:	test	%r13, %r13
	jz	3f
	mov	0(%r12), %rax
	mov	%rax, %r14
	btr	$62, %rax
	btr	$61, %rax
	mov	8(%r12), %rdi
	bt	$61, %r14
	jnc	5f
	mov	(%rdi), %rdi
5:
	mov	16(%r12), %rsi
	mov	24(%r12), %rdx
	mov	32(%r12), %r10
	mov	40(%r12), %r8
	mov	48(%r12), %r9
	syscall
	mov	%rax, 56(%r12)
	cmp	$-4095, %rax
	jb	2f
	bt	$62, %r14
	jnc	3f
2:	add	$64, %r12
	dec	%r13
	jmp	1b
3:	lea	executor_code_start(%rip), %rbx
	mov	HDR_EXIT_SIG(%rbx), %rdx
	test	%rdx, %rdx
	jz	4f
	mov	$39, %eax		/* getpid, as the task's pid namespace says */
	syscall
	mov	%rax, %rbp
	mov	$186, %eax		/* gettid */
	syscall
	mov	%rax, %rsi
	mov	%rbp, %rdi
	mov	HDR_EXIT_SIG(%rbx), %rdx
	mov	$234, %eax		/* tgkill */
	syscall
executor_signalled:
	/* only with no tracer left: home without a trace */
	mov	HDR_UNMAP_ADDR(%rbx), %rdi
	mov	HDR_UNMAP_LEN(%rbx), %rsi
	mov	HDR_EXIT_SP(%rbx), %rsp
	mov	HDR_EXIT_IP(%rbx), %rcx
	mov	$11, %eax		/* munmap */
	jmp	*%rcx
4:	int3
	/* A lone syscall instruction the tracer aims remote_syscall() at. */
executor_syscall_insn:
	syscall
	int3
executor_code_end:
	.section .note.GNU-stack, "", @progbits
