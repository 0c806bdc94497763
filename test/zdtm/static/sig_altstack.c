// SPDX-License-Identifier: GPL-2.0-only
/*
 * An alternate signal stack (with SS_AUTODISARM): address, size and flags
 * read back the same after restore, and an SA_ONSTACK handler still runs
 * on it.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

#include "zdtm.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

#define ALT_SIZE (64 * 1024)

static volatile uintptr_t handler_sp;

static void on_usr1(int sig)
{
	volatile int local;

	handler_sp = (uintptr_t)&local;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	stack_t ss, want;
	void *alt;

	test_init(argc, argv);
	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		fail_errno("mmap");
	ss.ss_sp = alt;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = SS_AUTODISARM;
	if (sigaltstack(&ss, NULL))
		fail_errno("sigaltstack");
	if (sigaltstack(NULL, &want))
		fail_errno("sigaltstack get");
	if (sigaction(SIGUSR1, &sa, NULL))
		fail_errno("sigaction");

	test_ready();
	test_waitsig();

	if (sigaltstack(NULL, &ss))
		fail_errno("sigaltstack get");
	if (ss.ss_sp != want.ss_sp || ss.ss_size != want.ss_size ||
	    ss.ss_flags != want.ss_flags)
		fail("sigaltstack is %p/%zu/%#x, was %p/%zu/%#x",
		     ss.ss_sp, ss.ss_size, ss.ss_flags,
		     want.ss_sp, want.ss_size, want.ss_flags);
	raise(SIGUSR1);
	if (handler_sp < (uintptr_t)alt || handler_sp >= (uintptr_t)alt + ALT_SIZE)
		fail("the handler ran at sp %#lx, not on the alternate stack",
		     (unsigned long)handler_sp);
	pass();
}
