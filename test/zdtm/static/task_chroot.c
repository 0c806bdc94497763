// SPDX-License-Identifier: GPL-2.0-only
/*
 * The root directory: the test chroots into its work directory (the one
 * holding its out file) after leaving a marker file there, and then moves
 * its cwd into a subdirectory. Root and cwd must be the same after restore.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char root[PATH_MAX], marker[64], cwd[PATH_MAX], buf[128];
	struct stat rst, sub, st;
	int fd, n;

	test_init(argc, argv);
	if (!getcwd(root, sizeof(root)))
		fail_errno("getcwd");
	snprintf(marker, sizeof(marker), "%s.marker", test_name);
	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "marker\n", 7) != 7)
		fail_errno("write %s", marker);
	close(fd);
	if (mkdir("chroot.sub", 0700) && access("chroot.sub", F_OK))
		fail_errno("mkdir");
	if (stat(".", &rst) || stat("chroot.sub", &sub))
		fail_errno("stat");

	test_chroot(root);
	if (chdir("/chroot.sub"))
		fail_errno("chdir");

	test_ready();
	test_waitsig();

	if (stat("/", &st))
		fail_errno("stat /");
	if (st.st_dev != rst.st_dev || st.st_ino != rst.st_ino)
		fail("/ is another directory");
	if (stat("/..", &st) || st.st_ino != rst.st_ino)
		fail("/.. is not / (not chrooted?)");
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, "/chroot.sub"))
		fail("cwd is %s, was /chroot.sub", cwd);
	if (stat(".", &st) || st.st_ino != sub.st_ino || st.st_dev != sub.st_dev)
		fail("cwd is another directory");
	snprintf(buf, sizeof(buf), "/%s", marker);
	fd = open(buf, O_RDONLY);
	if (fd < 0)
		fail_errno("open %s", buf);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n != 7 || memcmp(buf, "marker\n", 7))
		fail("marker content differs");
	pass();
}
