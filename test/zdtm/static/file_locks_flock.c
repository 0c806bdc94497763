// SPDX-License-Identifier: GPL-2.0-only
/*
 * flock() locks belong to the open file description. One description,
 * shared with a child, holds an exclusive lock on one file; two opens of
 * a second file each hold a shared lock. After restore a new open can
 * take neither lock on the first file, a shared but not an exclusive one
 * on the second, and the exclusive one only once both shared holders are
 * closed; the child's exit leaves the exclusive lock to the parent.
 */
#include "file_locks_lib.h"
#include "files_lib.h"

static char path_x[64], path_s[64];
static int x;

/* 0 if a new open of @path gets @op now (and drops it), else the errno. */
static int try_flock(const char *path, int op)
{
	int f = open(path, O_RDONLY), ret = 0;

	if (f < 0)
		fail_errno("open %s", path);
	if (flock(f, op | LOCK_NB))
		ret = errno;
	close(f);
	return ret;
}

static const char *child_check(void)
{
	if (lk_fdinfo_count(x, "FLOCK  ADVISORY  WRITE") != 1)
		return "the shared description does not show its exclusive lock";
	return NULL;
}

int main(int argc, char **argv)
{
	int s1, s2;
	pid_t child;

	test_init(argc, argv);
	snprintf(path_x, sizeof(path_x), "%s.x", test_name);
	snprintf(path_s, sizeof(path_s), "%s.s", test_name);
	x = open(path_x, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (x < 0 || flock(x, LOCK_EX))
		fail_errno("open and lock %s", path_x);
	child = fork_checker(NULL, child_check);
	/* after the fork: the child must not hold these */
	s1 = open(path_s, O_RDWR | O_CREAT | O_TRUNC, 0600);
	s2 = open(path_s, O_RDONLY);
	if (s1 < 0 || s2 < 0 || flock(s1, LOCK_SH) || flock(s2, LOCK_SH))
		fail_errno("open and lock %s", path_s);

	test_ready();
	test_waitsig();

	if (try_flock(path_x, LOCK_SH) != EWOULDBLOCK || try_flock(path_x, LOCK_EX) != EWOULDBLOCK)
		fail("the exclusive lock is not held");
	if (try_flock(path_s, LOCK_SH))
		fail("the shared lock is exclusive");
	if (try_flock(path_s, LOCK_EX) != EWOULDBLOCK)
		fail("the shared locks are not held");
	if (lk_fdinfo_count(s1, "FLOCK  ADVISORY  READ") != 1 ||
	    lk_fdinfo_count(s2, "FLOCK  ADVISORY  READ") != 1)
		fail("a shared holder lost its lock");
	close(s1);
	if (try_flock(path_s, LOCK_EX) != EWOULDBLOCK)
		fail("the second shared lock is not held");
	close(s2);
	if (try_flock(path_s, LOCK_EX))
		fail("the shared locks outlive their descriptions");
	end_checker(child);
	if (try_flock(path_x, LOCK_SH) != EWOULDBLOCK)
		fail("the exclusive lock went with the child");
	pass();
}
