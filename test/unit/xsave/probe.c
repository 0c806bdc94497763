// SPDX-License-Identifier: GPL-2.0
/*
 * Prints this CPU's XSAVE layout as test_xsave.c reads it: CPUID leaf 0xD
 * (subleaves 0, 1 and each component the CPU knows or the kernel
 * enabled), XCR0, and the size of the area ptrace hands for a thread
 * (NT_X86_XSTATE), which PTRACE_SETREGSET wants back exactly.
 * record.sh runs it in QEMU guests of several -cpu models.
 */
#include <cpuid.h>
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void brand(void)
{
	uint32_t r[12];
	char *s;
	int i;

	if (__get_cpuid_max(0x80000000, NULL) < 0x80000004)
		return;
	for (i = 0; i < 3; i++)
		__cpuid(0x80000002 + i, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]);
	s = (char *)r;
	s[47] = 0;
	while (*s == ' ')
		s++;
	printf("brand %s\n", s);
}

/* The kernel's area for a stopped child: what criu dumps and restores. */
static long ptrace_size(void)
{
	static uint8_t area[1 << 16];
	struct iovec iov = { area, sizeof(area) };
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov))
		iov.iov_len = 0;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return iov.iov_len;
}

int main(void)
{
	uint32_t a, b, c, d, lo = 0, hi = 0, v[3];
	uint64_t known;
	int i;

	__cpuid(0, a, v[0], v[2], v[1]);
	printf("vendor %.12s\n", (char *)v);
	brand();
	if (a < 0xd) {
		printf("# no CPUID leaf 0xD\n");
		return 0;
	}
	__cpuid(1, a, b, c, d);
	if (c & (1u << 27))
		asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	printf("xcr0 %#llx\n", ((unsigned long long)hi << 32) | lo);
	printf("ptrace_size %ld\n", ptrace_size());
	__cpuid_count(0xd, 0, a, b, c, d);
	known = ((uint64_t)d << 32) | a | ((uint64_t)hi << 32) | lo;
	for (i = 0; i < 64; i++) {
		if (i > 1 && !(known & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		printf("0xd.%d %#x %#x %#x %#x\n", i, a, b, c, d);
	}
	return 0;
}
