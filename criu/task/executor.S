/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The syscall executor copied into a task's scratch area. It runs a table
 * of struct sc_entry { nr, args[6], ret } (64 bytes each) and ends in int3
 * so the tracer gets control back: N syscalls for one ptrace round trip.
 *
 * In:  rdi = table, rsi = number of entries.
 * Out: each entry's ret filled; on the first failing entry not marked
 *      SC_MAY_FAIL (bit 62 of nr) it stops; r13 = entries not run.
 * Uses no stack: the restore variant unmaps the old one under its feet.
 */
	.section .rodata, "a"
	.globl executor_code_start
	.globl executor_code_end
	.globl executor_syscall_insn
	.p2align 4
executor_code_start:
	mov	%rdi, %r12
	mov	%rsi, %r13
1:	test	%r13, %r13
	jz	3f
	mov	0(%r12), %rax
	mov	%rax, %r14
	btr	$62, %rax
	mov	8(%r12), %rdi
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
3:	int3
	/* A lone syscall instruction the tracer aims remote_syscall() at. */
executor_syscall_insn:
	syscall
	int3
executor_code_end:
	.section .note.GNU-stack, "", @progbits
