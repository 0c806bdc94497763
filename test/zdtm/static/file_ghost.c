// SPDX-License-Identifier: GPL-2.0-only
/*
 * A regular file deleted while open (a ghost file): three descriptions on
 * it (read-write, read-only, write-only with O_APPEND, a dup of the first)
 * with their own offsets, four pages and 100 bytes of which pages 1 and 2
 * are a hole, mode 0640 and a set mtime. After the restore the file must
 * still be deleted (no link), one inode behind every fd, with its contents,
 * its hole, mode, times, offsets and flags; a write through one fd must be
 * read through another.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define PG		4096
#define SIZE		(4 * PG + 100)
#define MTIME		1234567890
#define POS_RW		1234
#define POS_RO		(3 * PG + 7)

static uint8_t byte_at(size_t i)
{
	return test_pattern(77, i / 8) >> (8 * (i % 8));
}

/* page 0, page 3 and the tail hold the pattern; pages 1 and 2 are a hole */
static int expected(size_t i)
{
	return i >= PG && i < 3 * PG ? 0 : byte_at(i);
}

static void make(int fd)
{
	static uint8_t buf[SIZE];
	size_t i;

	for (i = 0; i < SIZE; i++)
		buf[i] = byte_at(i);
	if (pwrite(fd, buf, PG, 0) != PG ||
	    pwrite(fd, buf + 3 * PG, SIZE - 3 * PG, 3 * PG) != SIZE - 3 * PG)
		fail_errno("write the contents");
}

static void check_contents(int fd)
{
	uint8_t buf[SIZE];
	size_t i;

	if (pread(fd, buf, SIZE, 0) != SIZE)
		fail_errno("read the contents");
	for (i = 0; i < SIZE; i++)
		if (buf[i] != expected(i))
			fail("byte %zu is %#x, not %#x", i, buf[i], expected(i));
	if (lseek(fd, PG, SEEK_DATA) != 3 * PG)
		fail("the hole at page 1 is gone: data at %ld", (long)lseek(fd, PG, SEEK_DATA));
}

static void check_fd(int fd, const char *want, const struct stat *first)
{
	char path[64], link[PATH_MAX + 16];
	struct stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		fail_errno("readlink %s", path);
	link[n] = '\0';
	if (strcmp(link, want))
		fail("fd %d is '%s', not '%s'", fd, link, want);
	if (fstat(fd, &st))
		fail_errno("fstat %d", fd);
	if (st.st_nlink != 0)
		fail("fd %d: the file has %lu links, it should be deleted", fd,
		     (unsigned long)st.st_nlink);
	if (st.st_ino != first->st_ino || st.st_dev != first->st_dev)
		fail("fd %d is not on the same inode as the others", fd);
	if (st.st_size != SIZE || (st.st_mode & 07777) != 0640 || st.st_mtim.tv_sec != MTIME)
		fail("fd %d: size %ld mode %o mtime %ld", fd, (long)st.st_size,
		     st.st_mode & 07777, (long)st.st_mtim.tv_sec);
}

int main(int argc, char **argv)
{
	struct timespec ts[2] = { { MTIME, 0 }, { MTIME, 0 } };
	char name[PATH_MAX + 64], cwd[PATH_MAX], want[PATH_MAX + 128];
	int rw, ro, ap, dup_rw;
	struct stat st;

	test_init(argc, argv);
	if (!getcwd(cwd, sizeof(cwd)))
		fail_errno("getcwd");
	snprintf(name, sizeof(name), "%s/%s.ghost", cwd, test_name);
	snprintf(want, sizeof(want), "%s (deleted)", name);
	rw = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (rw < 0)
		fail_errno("create %s", name);
	if (ftruncate(rw, SIZE))
		fail_errno("ftruncate");
	make(rw);
	if (lseek(rw, PG, SEEK_DATA) != 3 * PG) {
		unlink(name);
		skip("the filesystem of %s keeps no holes", cwd);
	}
	ro = open(name, O_RDONLY);
	ap = open(name, O_WRONLY | O_APPEND);
	dup_rw = dup(rw);
	if (ro < 0 || ap < 0 || dup_rw < 0)
		fail_errno("open it again");
	if (fchmod(rw, 0640) || futimens(rw, ts))
		fail_errno("mode and times");
	lseek(rw, POS_RW, SEEK_SET);
	lseek(ro, POS_RO, SEEK_SET);
	if (unlink(name))
		fail_errno("unlink");

	test_ready();
	test_waitsig();

	if (fstat(rw, &st))
		fail_errno("fstat");
	check_fd(rw, want, &st);
	check_fd(ro, want, &st);
	check_fd(ap, want, &st);
	check_fd(dup_rw, want, &st);
	if (lseek(rw, 0, SEEK_CUR) != POS_RW || lseek(ro, 0, SEEK_CUR) != POS_RO ||
	    lseek(ap, 0, SEEK_CUR) != 0)
		fail("offsets are %ld %ld %ld", (long)lseek(rw, 0, SEEK_CUR),
		     (long)lseek(ro, 0, SEEK_CUR), (long)lseek(ap, 0, SEEK_CUR));
	if ((fcntl(rw, F_GETFL) & O_ACCMODE) != O_RDWR ||
	    (fcntl(ro, F_GETFL) & O_ACCMODE) != O_RDONLY ||
	    (fcntl(ap, F_GETFL) & (O_ACCMODE | O_APPEND)) != (O_WRONLY | O_APPEND))
		fail("the access flags or O_APPEND are not kept");
	check_contents(ro);
	/* one description behind rw and its dup, one inode behind all */
	lseek(dup_rw, 10, SEEK_SET);
	if (lseek(rw, 0, SEEK_CUR) != 10)
		fail("rw and its dup no longer share a description");
	if (write(ap, "zz", 2) != 2)
		fail_errno("append");
	if (fstat(ro, &st) || st.st_size != SIZE + 2)
		fail("an append through one fd is not seen through another");
	if (pwrite(rw, "ghost", 5, PG + 3) != 5 || pread(ro, want, 5, PG + 3) != 5 ||
	    memcmp(want, "ghost", 5))
		fail("a write through one fd is not read through another");
	pass();
}
