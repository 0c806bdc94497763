// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task whose executable was deleted since it started (a binary replaced
 * while it runs): the program copies itself next to its work directory,
 * executes the copy (the pid stays) and deletes it. After the restore
 * /proc/self/exe must still be the deleted copy, on the inode the text is
 * mapped from, with its mode.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define ENV	"ZDTM_GHOST_EXE"

/* The first run copies the program and executes the copy, which goes on. */
static void run_a_copy(char **argv)
{
	char copy[PATH_MAX + 64], cwd[PATH_MAX];
	struct stat st;
	int in, out;

	if (getenv(ENV))
		return;
	if (!getcwd(cwd, sizeof(cwd)))
		exit(1);
	snprintf(copy, sizeof(copy), "%s/file_ghost_exe.bin", cwd);
	in = open("/proc/self/exe", O_RDONLY);
	out = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0750);
	if (in < 0 || out < 0 || fstat(in, &st) ||
	    sendfile(out, in, NULL, st.st_size) != st.st_size || close(out))
		exit(1);
	setenv(ENV, copy, 1);
	execv(copy, argv);
	exit(1);
}

/* The inode of the first area mapped from @path. */
static int mapped_ino(const char *path, struct stat *st)
{
	char line[PATH_MAX + 256], where[96];
	unsigned long s, e;
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strlen(line) < strlen(path) ||
		    strcmp(line + strlen(line) - strlen(path), path) ||
		    sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		snprintf(where, sizeof(where), "/proc/self/map_files/%lx-%lx", s, e);
		found = !stat(where, st);
	}
	if (f)
		fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	char want[PATH_MAX + 128], shown[PATH_MAX + 128];
	struct stat exe, text;
	ssize_t n;

	run_a_copy(argv);
	test_init(argc, argv);
	snprintf(want, sizeof(want), "%s (deleted)", getenv(ENV));
	if (unlink(getenv(ENV)))
		fail_errno("unlink %s", getenv(ENV));

	test_ready();
	test_waitsig();

	n = readlink("/proc/self/exe", shown, sizeof(shown) - 1);
	if (n < 0)
		fail_errno("readlink /proc/self/exe");
	shown[n] = '\0';
	if (strcmp(shown, want))
		fail("exe is '%s', not '%s'", shown, want);
	if (stat("/proc/self/exe", &exe) || exe.st_nlink || (exe.st_mode & 07777) != 0750)
		fail("exe: %lu links, mode %o", (unsigned long)exe.st_nlink, exe.st_mode & 07777);
	if (!mapped_ino(want, &text) || text.st_ino != exe.st_ino || text.st_dev != exe.st_dev)
		fail("exe is not the file the text is mapped from");
	pass();
}
