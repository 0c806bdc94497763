// SPDX-License-Identifier: GPL-2.0
/* criu as a daemon (service -d, page-server -d) and its pidfile. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "core/daemon.h"
#include "core/file.h"
#include "core/log.h"

int write_pid(const char *path, pid_t pid)
{
	char buf[16];
	int fd, len = snprintf(buf, sizeof(buf), "%d", pid);

	fd = create_file_at(AT_FDCWD, path, O_WRONLY);
	if (fd < 0 || write(fd, buf, len) != len) {
		pr_perror("Can't write pidfile %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * -d: the daemon runs on in a session of its own. The caller returns once
 * the socket listens and the pidfile names the daemon: ready to be used.
 */
int cr_daemonize(const char *pidfile)
{
	pid_t pid = fork();
	int null;

	if (pid < 0) {
		pr_perror("Can't fork the daemon");
		return -1;
	}
	if (pid) {
		if (pidfile && write_pid(pidfile, pid)) {
			kill(pid, SIGKILL);
			return -1;
		}
		_exit(0);
	}
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (log_fd() <= 2)
			dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return 0;
}
