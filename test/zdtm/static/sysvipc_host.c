// SPDX-License-Identifier: GPL-2.0-only
/*
 * A System V segment attached in criu's own IPC namespace: the dump must
 * refuse it (restoring it there would clash with the host's objects) and
 * leave the task running as it was. Run by test_mem_tree.py only.
 */
#include <stdint.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char *p;
	int id;

	test_init(argc, argv);
	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (id < 0)
		fail_errno("shmget");
	p = shmat(id, NULL, 0);
	/* gone with its last attachment, whatever happens to the test */
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1)
		fail_errno("shmat");
	strcpy(p, "host segment");
	test_ready();
	test_waitsig();
	if (strcmp(p, "host segment"))
		fail("the segment changed");
	pass();
}
