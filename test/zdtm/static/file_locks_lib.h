/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the file lock tests: who holds a lock, as another process sees
 * it, and what the kernel shows of a fd's locks in its fdinfo.
 */
#ifndef FILE_LOCKS_LIB_H
#define FILE_LOCKS_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

#ifndef F_OFD_GETLK
#define F_OFD_GETLK	36	/* Linux 3.15 */
#define F_OFD_SETLK	37
#endif

/*
 * Asks from a new process (a POSIX lock never conflicts with its own
 * process's) which lock a @type lock on [@start, @start + @len) of @path
 * would meet, by F_GETLK, or F_OFD_GETLK with @ofd. Returns the pid the
 * kernel names (-1 for an OFD lock), 0 when it would meet none, and fails
 * the test when the lock found is not of type @want (F_UNLCK: any).
 */
static inline pid_t lk_holder(const char *path, int type, off_t start, off_t len, int ofd, int want)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	int p[2], status, fd;
	pid_t pid;

	if (pipe(p))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		close(p[0]);
		fd = open(path, O_RDWR);
		if (fd < 0 || fcntl(fd, ofd ? F_OFD_GETLK : F_GETLK, &fl))
			_exit(2);
		if (write(p[1], &fl, sizeof(fl)) != sizeof(fl))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &fl, sizeof(fl)) != sizeof(fl))
		fail("the F_GETLK probe of %s failed", path);
	close(p[0]);
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			fail_errno("waitpid");
	if (fl.l_type == F_UNLCK)
		return 0;
	if (want != F_UNLCK && fl.l_type != want)
		fail("%s: the lock met on [%ld, +%ld) is of type %d, not %d", path, (long)start,
		     (long)len, fl.l_type, want);
	if (fl.l_type != F_UNLCK && ofd && fl.l_pid != -1)
		fail("%s: an OFD probe met a lock of pid %d, not an OFD lock", path, fl.l_pid);
	return fl.l_pid;
}

/* How many lock lines of @fd's fdinfo contain @what ("FLOCK  ADVISORY  WRITE"). */
static inline int lk_fdinfo_count(int fd, const char *what)
{
	char path[64], buf[4096], *p;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		fail_errno("read %s", path);
	for (p = buf; (p = strstr(p, "lock:")); p++) {
		char *eol = strchr(p, '\n');

		if (eol)
			*eol = '\0';
		n += strstr(p, what) != NULL;
		if (!eol)
			break;
		p = eol;
	}
	return n;
}

#endif
