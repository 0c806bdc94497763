// SPDX-License-Identifier: GPL-2.0-only
/*
 * Leases (fcntl F_SETLEASE): a read lease on a file open read-only and a
 * write lease on another. After restore F_GETLEASE sees each again, and
 * an open of the first file for writing from another process is what
 * breaks the read lease: we get SIGIO, as the lease's owner.
 */
#include <signal.h>

#include "file_locks_lib.h"

static volatile sig_atomic_t broken;

static void on_sigio(int sig)
{
	broken = 1;
}

int main(int argc, char **argv)
{
	char path_r[64], path_w[64];
	struct sigaction sa = { .sa_handler = on_sigio };
	int r, w, status, i;
	pid_t pid;

	test_init(argc, argv);
	snprintf(path_r, sizeof(path_r), "%s.r", test_name);
	snprintf(path_w, sizeof(path_w), "%s.w", test_name);
	close(open(path_r, O_RDWR | O_CREAT | O_TRUNC, 0600));
	close(open(path_w, O_RDWR | O_CREAT | O_TRUNC, 0600));
	r = open(path_r, O_RDONLY);
	w = open(path_w, O_RDONLY);
	if (r < 0 || w < 0)
		fail_errno("open");
	if (sigaction(SIGIO, &sa, NULL))
		fail_errno("sigaction");
	if (fcntl(r, F_SETLEASE, F_RDLCK) || fcntl(w, F_SETLEASE, F_WRLCK)) {
		if (errno == EINVAL || errno == EACCES)
			skip("this filesystem takes no leases: %m");
		fail_errno("F_SETLEASE");
	}

	test_ready();
	test_waitsig();

	if (fcntl(r, F_GETLEASE) != F_RDLCK || fcntl(w, F_GETLEASE) != F_WRLCK)
		fail("the leases are %d and %d, not %d and %d", fcntl(r, F_GETLEASE),
		     fcntl(w, F_GETLEASE), F_RDLCK, F_WRLCK);
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0)
		_exit(open(path_r, O_WRONLY | O_NONBLOCK) < 0 && errno == EWOULDBLOCK ? 0 : 1);
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("an open for writing did not meet the read lease");
	/* the kernel signals the breaking before the open returns; 10 s is for a slow machine */
	for (i = 0; !broken && i < 10000; i++)
		usleep(1000);
	if (!broken)
		fail("no SIGIO for the broken lease: it has another owner");
	pass();
}
