// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deleted files in several places at once, one of each kind: in every
 * directory named on the command line (its cwd without any), a file held
 * open and a file mapped shared, both deleted; the cwd is a directory
 * removed in the first one. test_container_ghost.py names a container's
 * tmpfs, its root filesystem and a volume. After the restore each is still
 * deleted, at its path, with its contents, mode and offset, and nothing
 * criu made is left in the directories.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define PG		4096
#define FD_SIZE		(3 * PG + 17)
#define FD_POS		100
#define MAP_SIZE	(2 * PG)
#define MAX_DIRS	8

struct place {
	char dir[PATH_MAX];
	char fd_path[PATH_MAX + 64], map_path[PATH_MAX + 64];
	int fd;
	uint8_t *map;
};

static uint8_t byte_at(int seed, size_t i)
{
	return test_pattern(seed, i / 8) >> (8 * (i % 8));
}

static void fill(uint8_t *buf, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = byte_at(seed, i);
}

static int differs(const uint8_t *buf, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != byte_at(seed, i))
			return 1;
	return 0;
}

static void make(struct place *p, int n)
{
	static uint8_t buf[FD_SIZE];
	int fd;

	snprintf(p->fd_path, sizeof(p->fd_path), "%s/%s.fd.%d", p->dir, test_name, n);
	snprintf(p->map_path, sizeof(p->map_path), "%s/%s.map.%d", p->dir, test_name, n);
	fill(buf, FD_SIZE, 2 * n);
	p->fd = open(p->fd_path, O_RDWR | O_CREAT | O_EXCL, 0640);
	if (p->fd < 0 || fchmod(p->fd, 0640) || write(p->fd, buf, FD_SIZE) != FD_SIZE ||
	    lseek(p->fd, FD_POS, SEEK_SET) != FD_POS || unlink(p->fd_path))
		fail_errno("make the deleted file %s", p->fd_path);
	fd = open(p->map_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, MAP_SIZE))
		fail_errno("make %s", p->map_path);
	p->map = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p->map == MAP_FAILED)
		fail_errno("map %s", p->map_path);
	fill(p->map, MAP_SIZE, 2 * n + 1);
	if (close(fd) || unlink(p->map_path))
		fail_errno("unlink %s", p->map_path);
}

static void check_link(const char *proc, const char *path)
{
	char want[PATH_MAX + 96], shown[PATH_MAX + 96];
	ssize_t n = readlink(proc, shown, sizeof(shown) - 1);

	if (n < 0)
		fail_errno("readlink %s", proc);
	shown[n] = '\0';
	snprintf(want, sizeof(want), "%s (deleted)", path);
	if (strcmp(shown, want))
		fail("%s is '%s', not '%s'", proc, shown, want);
}

static void check(struct place *p, int n)
{
	static uint8_t buf[FD_SIZE];
	char proc[96];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p->fd);
	check_link(proc, p->fd_path);
	if (fstat(p->fd, &st) || st.st_nlink || (st.st_mode & 07777) != 0640 ||
	    st.st_size != FD_SIZE)
		fail("%s: %lu links, mode %o, %ld bytes", p->fd_path, (unsigned long)st.st_nlink,
		     st.st_mode & 07777, (long)st.st_size);
	if (lseek(p->fd, 0, SEEK_CUR) != FD_POS)
		fail("%s: the offset is %ld", p->fd_path, (long)lseek(p->fd, 0, SEEK_CUR));
	if (pread(p->fd, buf, FD_SIZE, 0) != FD_SIZE || differs(buf, FD_SIZE, 2 * n))
		fail("%s: the contents changed", p->fd_path);
	snprintf(proc, sizeof(proc), "/proc/self/map_files/%lx-%lx", (unsigned long)p->map,
		 (unsigned long)p->map + MAP_SIZE);
	check_link(proc, p->map_path);
	if (differs(p->map, MAP_SIZE, 2 * n + 1))
		fail("%s: the mapped contents changed", p->map_path);
}

/* Is @name one of the files or directories we deleted? */
static int ours(const char *name)
{
	size_t len = strlen(test_name);

	return !strncmp(name, test_name, len) &&
	       (!strncmp(name + len, ".fd.", 4) || !strncmp(name + len, ".map.", 5) ||
		!strcmp(name + len, ".cwd"));
}

/* Nothing we deleted, nor anything of criu's, has a name in @dir again. */
static void check_empty(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		fail_errno("opendir %s", dir);
	while ((de = readdir(d)))
		if (ours(de->d_name) || !strncmp(de->d_name, ".criu", 5))
			fail("%s/%s is left", dir, de->d_name);
	closedir(d);
}

static void remove_cwd(const char *dir, char *cwd, size_t size)
{
	snprintf(cwd, size, "%s/%s.cwd", dir, test_name);
	if (mkdir(cwd, 0700) || chmod(cwd, 0751) || chdir(cwd) || rmdir(cwd))
		fail_errno("mkdir, chdir, rmdir %s", cwd);
}

int main(int argc, char **argv)
{
	static struct place places[MAX_DIRS];
	char cwd[PATH_MAX + 64];
	struct stat st;
	int i, n;

	test_init(argc, argv);
	n = argc - optind;
	if (n > MAX_DIRS)
		fail("at most %d directories", MAX_DIRS);
	for (i = 0; i < (n ? n : 1); i++)
		if (!realpath(n ? argv[optind + i] : ".", places[i].dir))
			fail_errno("realpath %s", n ? argv[optind + i] : ".");
	n = n ? n : 1;
	for (i = 0; i < n; i++)
		make(&places[i], i);
	remove_cwd(places[0].dir, cwd, sizeof(cwd));

	test_ready();
	test_waitsig();

	for (i = 0; i < n; i++) {
		check(&places[i], i);
		check_empty(places[i].dir);
	}
	check_link("/proc/self/cwd", cwd);
	if (stat(".", &st) || st.st_nlink || (st.st_mode & 07777) != 0751)
		fail("the cwd: mode %o, %lu links", st.st_mode & 07777, (unsigned long)st.st_nlink);
	pass();
}
