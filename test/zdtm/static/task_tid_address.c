// SPDX-License-Identifier: GPL-2.0-only
/*
 * The clear_child_tid address set with set_tid_address() is kept
 * (read back with PR_GET_TID_ADDRESS).
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef PR_GET_TID_ADDRESS
#define PR_GET_TID_ADDRESS 40
#endif

static int tid_word;

int main(int argc, char **argv)
{
	int *addr = NULL;
	long tid;

	test_init(argc, argv);
	tid = syscall(SYS_set_tid_address, &tid_word);
	if (tid != gettid())
		fail("set_tid_address returned %ld", tid);
	if (prctl(PR_GET_TID_ADDRESS, &addr, 0, 0, 0))
		fail_errno("PR_GET_TID_ADDRESS");
	if (addr != &tid_word)
		fail("PR_GET_TID_ADDRESS gives %p before the checkpoint", addr);

	test_ready();
	test_waitsig();

	addr = NULL;
	if (prctl(PR_GET_TID_ADDRESS, &addr, 0, 0, 0))
		fail_errno("PR_GET_TID_ADDRESS");
	if (addr != &tid_word)
		fail("tid address is %p, was %p", addr, &tid_word);
	pass();
}
