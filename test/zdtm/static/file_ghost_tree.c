// SPDX-License-Identifier: GPL-2.0-only
/*
 * One deleted file (a ghost) shared by a parent and its child: a
 * description both hold (its offset is shared), one only the child holds
 * (its own offset), and a shared mapping both inherited. After the
 * restore all of them must be on one inode, still deleted: the offset the
 * root sets is the child's too, the root's write through the mapping is
 * read through the child's own fd, and the child's write through its fd
 * is seen in the root's mapping.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "mem_tree.h"

#define PG		4096
#define SIZE		(3 * PG)
#define KID_POS		777
#define SHARED_POS	2 * PG
#define SHARED_POS2	1234

static int both, kid_own;
static uint8_t *p;
static struct stat first;

/* @fd is on the ghost the root had, deleted */
static void check_inode(int fd, const char *what)
{
	struct stat st;

	if (fstat(fd, &st))
		mt_die("fstat %s: %m", what);
	if (st.st_ino != first.st_ino || st.st_nlink || st.st_size != SIZE)
		mt_die("%s: ino %lu (not %lu?), %lu links, %ld bytes", what,
		       (unsigned long)st.st_ino, (unsigned long)first.st_ino,
		       (unsigned long)st.st_nlink, (long)st.st_size);
}

/* the child makes nothing of its own: it inherited all of it */
static void kid_setup(void)
{
}

static void kid_check(void)
{
	char buf[8];

	if (fstat(both, &first))
		mt_die("fstat: %m");
	check_inode(kid_own, "the child's own fd");
	if (lseek(both, 0, SEEK_CUR) != SHARED_POS2)
		mt_die("the shared description is at %ld, not %d", (long)lseek(both, 0, SEEK_CUR),
		       SHARED_POS2);
	if (lseek(kid_own, 0, SEEK_CUR) != KID_POS)
		mt_die("the child's own fd is at %ld", (long)lseek(kid_own, 0, SEEK_CUR));
	if (pread(kid_own, buf, 4, 100) != 4 || memcmp(buf, "root", 4))
		mt_die("the root's write through its mapping is not read through the child's fd");
	if (p[PG - 1] != 'a' || p[PG] || p[2 * PG] != 'c')
		mt_die("the contents are not what they were");
	if (pwrite(kid_own, "kid!", 4, 200) != 4)
		mt_die("pwrite: %m");
}

int main(int argc, char **argv)
{
	char name[64], path[96];
	struct stat ms;

	test_init(argc, argv);
	mt_init();
	snprintf(name, sizeof(name), "%s.ghost", test_name);
	both = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	kid_own = open(name, O_RDWR);
	if (both < 0 || kid_own < 0 || ftruncate(both, SIZE))
		fail_errno("create %s", name);
	p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, both, 0);
	if (p == MAP_FAILED)
		fail_errno("mmap");
	p[PG - 1] = 'a';		/* page 1 stays a hole */
	p[2 * PG] = 'c';
	lseek(both, SHARED_POS, SEEK_SET);
	lseek(kid_own, KID_POS, SEEK_SET);
	if (unlink(name))
		fail_errno("unlink");
	mt_fork("kid", kid_setup, kid_check);
	close(kid_own);
	mt_wait_ready(1);
	test_ready();
	test_waitsig();

	if (fstat(both, &first))
		fail_errno("fstat");
	check_inode(both, "the root's fd");
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + SIZE);
	if (stat(path, &ms) || ms.st_ino != first.st_ino)
		fail("the mapping is not on the fd's inode");
	if (lseek(both, 0, SEEK_CUR) != SHARED_POS)
		fail("the shared description is at %ld", (long)lseek(both, 0, SEEK_CUR));
	memcpy(p + 100, "root", 4);
	lseek(both, SHARED_POS2, SEEK_SET);
	mt_kids_check();
	if (memcmp(p + 200, "kid!", 4))
		fail("the child's write through its fd is not seen in the root's mapping");
	pass();
}
