// SPDX-License-Identifier: GPL-2.0-only
/*
 * Files at high fd numbers (1000 and the highest the soft RLIMIT_NOFILE
 * allows) keep their numbers, and no other fd appears or disappears.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

static int count_fds(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		fail_errno("opendir");
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

int main(int argc, char **argv)
{
	int fd, hi, n, nfds;
	struct rlimit rl;
	struct stat st, st2, st3;
	char name[64];

	test_init(argc, argv);
	if (getrlimit(RLIMIT_NOFILE, &rl))
		fail_errno("getrlimit");
	hi = rl.rlim_cur > 100000 ? 99999 : (int)rl.rlim_cur - 1;
	if (hi <= 1000)
		fail("RLIMIT_NOFILE is too low: %ld", (long)rl.rlim_cur);

	snprintf(name, sizeof(name), "%s.data", test_name);
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fail_errno("open");
	if (dup2(fd, 1000) != 1000)
		fail_errno("dup2 1000");
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	if (dup2(fd, hi) != hi)
		fail_errno("dup2 %d", hi);
	close(fd);
	if (fstat(1000, &st) || fstat(hi, &st2))
		fail_errno("fstat");
	nfds = count_fds();

	test_ready();
	test_waitsig();

	if (fstat(1000, &st3) || st3.st_ino != st.st_ino || st3.st_dev != st.st_dev)
		fail("fd 1000 is not our file");
	if (fstat(hi, &st3) || st3.st_rdev != st2.st_rdev)
		fail("fd %d is not /dev/null", hi);
	n = count_fds();
	if (n != nfds)
		fail("%d fds open, were %d", n, nfds);
	pass();
}
