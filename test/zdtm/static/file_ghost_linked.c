// SPDX-License-Identifier: GPL-2.0-only
/*
 * A file unlinked while open and mapped, but linked under another name
 * still (run with --link-remap): the fd and a shared mapping show "NAME
 * (deleted)" with one link left. After the restore the fd, the mapping
 * and the other name must be one inode (a write through the fd is read
 * through the other name and seen in the mapping), the fd must still show
 * the deleted name, with its offset and flags, and the link the dump made
 * must be gone (one link left: the other name).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define PG	4096
#define POS	1000

int main(int argc, char **argv)
{
	char name[PATH_MAX + 64], other[PATH_MAX + 64], cwd[PATH_MAX], want[PATH_MAX + 128];
	char proc[64], shown[PATH_MAX + 128], buf[8];
	struct stat st, os;
	ssize_t n;
	char *p;
	int fd, o;

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	snprintf(name, sizeof(name), "%s/%s.data", cwd, test_name);
	snprintf(other, sizeof(other), "%s/%s.other", cwd, test_name);
	snprintf(want, sizeof(want), "%s (deleted)", name);
	fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 2 * PG) || pwrite(fd, "linked", 6, PG) != 6)
		fail_errno("create %s", name);
	p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fail_errno("mmap");
	if (link(name, other) || unlink(name))
		fail_errno("link, unlink");
	lseek(fd, POS, SEEK_SET);

	test_ready();
	test_waitsig();

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, shown, sizeof(shown) - 1);
	if (n < 0)
		fail_errno("readlink");
	shown[n] = '\0';
	if (strcmp(shown, want))
		fail("the fd is '%s', not '%s'", shown, want);
	o = open(other, O_RDONLY);
	if (o < 0 || fstat(fd, &st) || fstat(o, &os))
		fail_errno("open %s", other);
	if (st.st_ino != os.st_ino || st.st_dev != os.st_dev || st.st_nlink != 1)
		fail("the fd is not on %s (ino %lu, %lu; %lu links)", other,
		     (unsigned long)st.st_ino, (unsigned long)os.st_ino,
		     (unsigned long)st.st_nlink);
	if (lseek(fd, 0, SEEK_CUR) != POS || (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR)
		fail("offset or flags not kept");
	if (memcmp(p + PG, "linked", 6))
		fail("the mapping does not hold the file's contents");
	if (pwrite(fd, "fd!", 3, 10) != 3 || pread(o, buf, 3, 10) != 3 || memcmp(buf, "fd!", 3) ||
	    memcmp(p + 10, "fd!", 3))
		fail("a write through the fd is not read through the other name or the mapping");
	unlink(other);
	pass();
}
