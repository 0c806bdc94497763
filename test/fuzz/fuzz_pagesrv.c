// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target of the page server's receiver (criu/image/psrecv.c): the
 * input is what a peer sends on the connection, fed from a memfd (read and
 * splice take it as they take a socket) into a fresh directory that holds
 * a symlink planted under an image name. After each input:
 *   - nothing but the directory and the link's target is next to it, and
 *     the target is unchanged: nothing was written outside;
 *   - a transfer refused before its commit left nothing of its own in the
 *     directory (after the commit, the checkpoint is kept: the dump may
 *     have let its tree go);
 *   - an accepted one (DONE after a commit) has inventory.img.
 * Any violation aborts.
 *
 * libFuzzer (test/fuzz/build.sh fuzz_pagesrv), and, with FUZZ_STANDALONE,
 * the replay driver (replay.c) that meson runs on test/fuzz/corpus-pagesrv.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "image/imgout.h"
#include "replay.h"

#define PLANTED	"pages-1.img"
#define TARGET	"untouched"

static char top[64];
static int topfd = -1, dirfd_ = -1;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_pagesrv: %s (in %s)\n", what, top);
	abort();
}

/* The entries of @fd but "." and ".."; 0, 1 or 2 of them told in @names. */
static int entries(int fd, char names[2][256])
{
	DIR *d = fdopendir(dup(fd));
	struct dirent *de;
	int n = 0;

	if (!d)
		die("can't list a directory");
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n < 2)
			snprintf(names[n], 256, "%s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void reset(void);

/* At exit (libFuzzer's too): the directories go. */
static void remove_dirs(void)
{
	reset();
	unlinkat(dirfd_, PLANTED, 0);
	unlinkat(topfd, "d", AT_REMOVEDIR);
	unlinkat(topfd, "victim", 0);
	rmdir(top);
}

static void setup(void)
{
	int fd;

	snprintf(top, sizeof(top), "/tmp/fuzz_pagesrv.XXXXXX");
	if (!mkdtemp(top) || (topfd = open(top, O_RDONLY | O_DIRECTORY)) < 0 ||
	    mkdirat(topfd, "d", 0700) || (dirfd_ = openat(topfd, "d", O_RDONLY | O_DIRECTORY)) < 0)
		die("can't make the directories");
	fd = openat(topfd, "victim", O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, TARGET, strlen(TARGET)) != (ssize_t)strlen(TARGET))
		die("can't make the victim");
	close(fd);
	atexit(remove_dirs);
	log_open(NULL, 0);	/* errors kept, nothing printed */
	log_set_stderr_errors(0);
}

/* Empties the directory, plants the link again. */
static void reset(void)
{
	char names[2][256];

	while (entries(dirfd_, names))
		if (unlinkat(dirfd_, names[0], 0))
			die("can't empty the directory");
	if (symlinkat("../victim", dirfd_, PLANTED))
		die("can't plant the link");
}

static void check(int ret)
{
	char names[2][256], buf[64];
	int fd, n;

	n = entries(topfd, names);
	if (n != 2)
		die("something was written next to the directory");
	fd = openat(topfd, "victim", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	if (n != (int)strlen(TARGET) || memcmp(buf, TARGET, n))
		die("the link's target was written through");
	/* named at the commit only: after it, the checkpoint is kept whatever follows */
	if (!faccessat(dirfd_, "inventory.img", F_OK, AT_SYMLINK_NOFOLLOW))
		return;
	if (!ret)
		die("an accepted transfer has no inventory.img");
	n = entries(dirfd_, names);
	if (n > 1 || (n == 1 && strcmp(names[0], PLANTED)))
		die("a transfer refused before its commit left files");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd, ret;

	if (topfd < 0)
		setup();
	reset();
	fd = memfd_create("peer", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET))
		die("can't make the input");
	ret = ps_receive(dirfd_, fd);
	close(fd);
	check(ret);
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv)
{
	return fuzz_replay("fuzz_pagesrv", argc, argv);
}
#endif
