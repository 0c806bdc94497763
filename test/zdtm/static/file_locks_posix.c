// SPDX-License-Identifier: GPL-2.0-only
/*
 * POSIX record locks (fcntl F_SETLK) belong to their process. The parent
 * holds a write lock, a read lock and a write lock to the end of the file,
 * and maps the file (criu's own fd of that mapping is closed in the
 * restored task, which must not drop the locks); its child holds a read
 * lock through the open file it shares with the parent, and a write lock
 * through an open of its own. After restore another process meets each
 * lock, owned by the right pid, and nothing in the gaps; the child's go
 * when it exits.
 */
#include <sys/mman.h>

#include "file_locks_lib.h"
#include "files_lib.h"

static char path[64];
static int fd;

static void setlk(int f, int type, off_t start, off_t len, const char *who)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	if (fcntl(f, F_SETLK, &fl))
		test_task_fail(!strcmp(who, "parent"), who, "F_SETLK [%ld, +%ld): %m",
			       (long)start, (long)len);
}

static void child_setup(void)
{
	int own = open(path, O_RDWR);

	if (own < 0)
		_exit(2);
	setlk(fd, F_RDLCK, 200, 10, "child");
	setlk(own, F_WRLCK, 300, 10, "child");
}

static const char *child_check(void)
{
	if (lk_fdinfo_count(fd, "POSIX  ADVISORY  READ") != 1)
		return "its read lock is not on the open file it shares with the parent";
	return NULL;
}

static void expect_holder(int type, off_t start, off_t len, pid_t want, int want_type)
{
	pid_t got = lk_holder(path, type, start, len, 0, want_type);

	if (got != want)
		fail("a %s lock on [%ld, +%ld) meets pid %d's, not %d's",
		     type == F_WRLCK ? "write" : "read", (long)start, (long)len, got, want);
}

int main(int argc, char **argv)
{
	volatile char *map;
	pid_t child, me;

	test_init(argc, argv);
	snprintf(path, sizeof(path), "%s.data", test_name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 8192))
		fail_errno("open %s", path);
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		fail_errno("mmap");
	map[7] = 'x';
	setlk(fd, F_WRLCK, 10, 20, "parent");
	setlk(fd, F_RDLCK, 100, 50, "parent");
	setlk(fd, F_WRLCK, 1000, 0, "parent");
	child = fork_checker(child_setup, child_check);

	test_ready();
	test_waitsig();

	me = getpid();
	expect_holder(F_WRLCK, 10, 20, me, F_WRLCK);
	expect_holder(F_RDLCK, 29, 1, me, F_WRLCK);
	expect_holder(F_WRLCK, 120, 1, me, F_RDLCK);
	expect_holder(F_RDLCK, 100, 50, 0, F_UNLCK);
	expect_holder(F_RDLCK, 1000000, 1, me, F_WRLCK);
	expect_holder(F_WRLCK, 30, 70, 0, F_UNLCK);
	expect_holder(F_WRLCK, 150, 50, 0, F_UNLCK);
	expect_holder(F_WRLCK, 200, 10, child, F_RDLCK);
	expect_holder(F_WRLCK, 300, 10, child, F_WRLCK);
	if (lk_fdinfo_count(fd, "POSIX") != 3)
		fail("fd %d shows %d POSIX locks of ours, not 3", fd, lk_fdinfo_count(fd, "POSIX"));
	if (map[7] != 'x')
		fail("the mapping lost its byte");
	end_checker(child);
	expect_holder(F_WRLCK, 200, 110, 0, F_UNLCK);
	expect_holder(F_WRLCK, 10, 20, me, F_WRLCK);
	pass();
}
