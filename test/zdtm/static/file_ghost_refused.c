// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deleted files criu must refuse to dump (test_ghost_errors.py): "big", a
 * deleted file of 2 MiB held open (over the default --ghost-limit of
 * 1 MiB); "big-mapped", the same only mapped; "linked", a file unlinked
 * while another name still links it (CRIU's --link-remap case). The file
 * and the mapping must be intact after the refused dump. "in-dir": a small
 * ghost in a directory of its own, which the test removes before the
 * restore (test_ghost_errors.py).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define BIG	(2 << 20)

static char name[64], other[64];

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";
	uint8_t *p = NULL;
	struct stat st;
	int fd;

	test_init(argc, argv);
	snprintf(name, sizeof(name), "%s.ghost", test_name);
	if (!strcmp(what, "in-dir")) {
		snprintf(name, sizeof(name), "%s.dir/%s.ghost", test_name, test_name);
		snprintf(other, sizeof(other), "%s.dir", test_name);
		if (mkdir(other, 0700))
			fail_errno("mkdir %s", other);
	}
	snprintf(other, sizeof(other), "%s.link", test_name);
	fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, BIG) || pwrite(fd, "big", 3, BIG - 3) != 3)
		fail_errno("create %s", name);
	if (!strcmp(what, "in-dir") && ftruncate(fd, 3))
		fail_errno("ftruncate");
	if (!strcmp(what, "linked") && link(name, other))
		fail_errno("link %s", other);
	if (!strcmp(what, "big-mapped")) {
		p = mmap(NULL, BIG, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			fail_errno("mmap");
		close(fd);
		fd = -1;
	} else if (strcmp(what, "big") && strcmp(what, "linked") && strcmp(what, "in-dir")) {
		fail("no such case '%s'", what);
	}
	if (unlink(name))
		fail_errno("unlink");

	test_ready();
	test_waitsig();

	if (p ? memcmp(p + BIG - 3, "big", 3) :
	    fstat(fd, &st) || st.st_size != (strcmp(what, "in-dir") ? BIG : 3) ||
	    st.st_nlink != !strcmp(what, "linked"))
		fail("the deleted file is not what it was");
	if (!strcmp(what, "in-dir"))
		rmdir(other);
	else
		unlink(other);
	pass();
}
