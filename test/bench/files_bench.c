// SPDX-License-Identifier: GPL-2.0-only
/*
 * files_bench: a target for measuring open files. Forks KIDS children,
 * then every task (the root too) opens N eventfds of its own, the root
 * writes its pid to READY_FILE, and all wait to be dumped.
 *
 *	files_bench N KIDS READY_FILE
 *
 * eventfds all share one anonymous inode: the dump's lookup of a
 * description among those of its inode is what grows with N.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rlimit rl;
	int n, kids, i, root = 1;
	FILE *f;

	if (argc != 4)
		return 2;
	n = atoi(argv[1]);
	kids = atoi(argv[2]);
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < kids && root; i++)
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			root = 0;
		}
	for (i = 0; i < n; i++)
		if (eventfd(i, 0) < 0) {
			perror("eventfd");
			return 1;
		}
	if (root) {
		sleep(1);	/* the children are done as well */
		f = fopen(argv[3], "w");
		if (!f)
			return 1;
		fprintf(f, "%d\n", getpid());
		fclose(f);
	}
	for (;;)
		pause();
}
