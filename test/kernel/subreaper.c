// SPDX-License-Identifier: GPL-2.0
/*
 * subreaper CMD [ARG...]: run CMD as a child subreaper.
 *
 * In the guest the test runner is a busybox shell; a tree restored with
 * "criu restore -d" loses criu, its parent, and must be adopted by the
 * runner (as on the host, where the pytest runner is a subreaper), not by
 * init: the tree tests check their root's parent. The flag survives
 * execve(), so the shell that CMD becomes is the subreaper
 * (contrib/subreaper runs its command as a child: the parent a test
 * records would then not be the one that adopts it).
 */
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: subreaper CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("subreaper: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
