// SPDX-License-Identifier: GPL-2.0-only
/*
 * subreaper: run a command as the child of a child subreaper that reaps.
 *
 *	subreaper COMMAND [ARGS...]
 *
 * PID 1 on some machines (containers, minimal VMs) never reaps orphans.  A
 * task restored with `criu restore -d` is an orphan as soon as criu exits;
 * once killed it would stay a zombie and keep its pid, so the next restore of
 * that pid fails.  With PR_SET_CHILD_SUBREAPER such orphans are re-parented
 * to this process instead, and it reaps every one of them.
 *
 * Exits with the command's status (128 + signal if it was killed).  When the
 * command has exited, orphans that are still alive are left alone: they are
 * re-parented further up, as they would have been without us.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

/* Hand the terminal's (or the caller's) signals on to the command. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = forward };
	int status, ret = 1;
	unsigned int i;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: %s COMMAND [ARGS...]\n", argv[0]);
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		fprintf(stderr, "subreaper: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		return 1;
	}

	child = fork();
	if (child < 0) {
		fprintf(stderr, "subreaper: fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, "subreaper: exec %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaction(fwd[i], &sa, NULL);

	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;		/* ECHILD: nothing left, cannot happen before child */
		}
		if (pid != child)
			continue;	/* an orphan: reaped, that is all it needed */
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
		break;
	}

	/* Reap orphans that are already dead; the living ones go up the tree. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return ret;
}
