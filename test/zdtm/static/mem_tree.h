/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the tests of memory several tasks share (mem_shared_tree,
 * memfd_shared, sysvipc_ns, mem_cow_tree, mem_file_shared_tree).
 *
 * The root forks its children once its state is set up; each child sets
 * up its own part, takes a snapshot of its memory map, says it is ready on
 * a pipe and waits for SIGTERM. After the restore the root sends SIGTERM
 * to its children (mt_kids_check) once it has done what they are to see;
 * a child then checks its state and its map (same as before the dump,
 * as the runner checks the root's) and exits 0, or says why and exits 1.
 */
#ifndef MEM_TREE_H
#define MEM_TREE_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

#define MT_MAX_KIDS	16

static pid_t mt_kids[MT_MAX_KIDS];
static const char *mt_kid_names[MT_MAX_KIDS];
static int mt_nr_kids;
static const char *mt_me = "root";

#define mt_die(...) test_task_fail(!strcmp(mt_me, "root"), mt_me, __VA_ARGS__)

/*
 * /proc/self/maps as the runner compares it: adjacent areas that differ
 * only in where the boundary lies are merged, and the inode numbers of
 * shared memory objects and deleted files (which restore can't keep)
 * become labels that still tell which areas map the same object.
 */
#define MT_MAPS_SIZE	(1 << 16)

/* static buffers: a snapshot must not change the map it takes */
static char mt_raw[MT_MAPS_SIZE], mt_before[MT_MAPS_SIZE], mt_now[MT_MAPS_SIZE];

static char *mt_maps(char *out)
{
	char *line, *save = NULL, prev_path[256] = "", labels[16][32];
	unsigned long ps = 0, pe = 0, s, e, off, poff = 0, ino;
	char perms[8], pperms[8] = "", dev[16], pdev[16] = "", pino[32] = "", inos[32];
	int nlabels = 0, n, i, have = 0, path_at;
	size_t len = 0, cap = MT_MAPS_SIZE;
	ssize_t r;

	r = test_read_file("/proc/self/maps", mt_raw, sizeof(mt_raw) - 1);
	if (r < 0)
		mt_die("can't read /proc/self/maps: %m");
	mt_raw[r] = '\0';
	out[0] = '\0';
	for (line = strtok_r(mt_raw, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *path;

		path_at = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &s, &e, perms, &off, dev,
			   &ino, &path_at) < 6)
			mt_die("odd maps line '%s'", line);
		path = path_at ? line + path_at : "";
		snprintf(inos, sizeof(inos), "%lu", ino);
		n = strlen(path);
		/* memfds, shared anonymous memory, deleted files: all made anew */
		if (n > 10 && !strcmp(path + n - 10, " (deleted)") && path[0] == '/') {
			for (i = 0; i < nlabels && strcmp(labels[i], inos); i++)
				;
			if (i == nlabels && nlabels < 16)
				snprintf(labels[nlabels++], sizeof(labels[0]), "%s", inos);
			snprintf(inos, sizeof(inos), "shm#%d", i);
		}
		if (have && ps < pe && pe == s && !strcmp(pperms, perms) && !strcmp(pdev, dev) &&
		    !strcmp(pino, inos) && !strcmp(prev_path, path) &&
		    (!strcmp(inos, "0") || poff + (pe - ps) == off)) {
			pe = e;
			continue;
		}
		if (have)
			len += snprintf(out + len, cap - len, "%lx-%lx %s %08lx %s %s %s\n", ps,
					pe, pperms, poff, pdev, pino, prev_path);
		if (len + 512 > cap)
			mt_die("memory map too long");
		have = 1;
		ps = s;
		pe = e;
		poff = off;
		snprintf(pperms, sizeof(pperms), "%s", perms);
		snprintf(pdev, sizeof(pdev), "%s", dev);
		snprintf(pino, sizeof(pino), "%s", inos);
		snprintf(prev_path, sizeof(prev_path), "%s", path);
	}
	if (have)
		snprintf(out + len, cap - len, "%lx-%lx %s %08lx %s %s %s\n", ps, pe, pperms,
			 poff, pdev, pino, prev_path);
	return out;
}

/* The map now must be the one of @before; names the first line that differs. */
static void mt_check_maps(const char *before)
{
	char *now = mt_maps(mt_now);
	const char *a = before, *b = now;

	if (!strcmp(before, now))
		return;
	while (*a && *a == *b)
		a++, b++;
	while (a > before && a[-1] != '\n')
		a--, b--;
	mt_die("memory map changed: was '%.*s', now '%.*s'", (int)strcspn(a, "\n"), a,
	       (int)strcspn(b, "\n"), b);
}

static int mt_ready_pipe[2] = { -1, -1 };

/* Before the first mt_fork. */
static void mt_init(void)
{
	if (pipe(mt_ready_pipe))
		fail_errno("pipe");
}

/*
 * Forks a child that runs @setup (its own state), snapshots its map, says
 * it is ready, waits for SIGTERM, runs @check and exits 0. Grandchildren
 * may be made by @setup with mt_fork too (they report to the same pipe).
 */
static pid_t mt_fork(const char *name, void (*setup)(void), void (*check)(void))
{
	pid_t pid;

	if (mt_nr_kids == MT_MAX_KIDS)
		mt_die("too many children");
	pid = fork();
	if (pid < 0)
		mt_die("fork: %m");
	if (pid) {
		mt_kid_names[mt_nr_kids] = name;
		mt_kids[mt_nr_kids++] = pid;
		return pid;
	}
	mt_me = name;
	mt_nr_kids = 0;
	if (setup)
		setup();
	mt_maps(mt_before);
	if (write(mt_ready_pipe[1], "x", 1) != 1)
		_exit(2);
	close(mt_ready_pipe[0]);
	close(mt_ready_pipe[1]);
	test_waitsig();
	if (check)
		check();
	mt_check_maps(mt_before);
	/* what it forked itself goes the same way */
	while (mt_nr_kids) {
		int status;

		mt_nr_kids--;
		kill(mt_kids[mt_nr_kids], SIGTERM);
		if (waitpid(mt_kids[mt_nr_kids], &status, 0) != mt_kids[mt_nr_kids] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			mt_die("child %s failed (status %#x)", mt_kid_names[mt_nr_kids], status);
	}
	_exit(0);
}

/* In the root: wait until @n tasks below it are set up. */
static void mt_wait_ready(int n)
{
	char c;

	while (n--)
		if (read(mt_ready_pipe[0], &c, 1) != 1)
			fail("a child died while setting up");
	close(mt_ready_pipe[0]);
	close(mt_ready_pipe[1]);
}

/* In the root after SIGTERM: let the children check themselves, in order. */
static void mt_kids_check(void)
{
	int i, status;

	for (i = 0; i < mt_nr_kids; i++) {
		kill(mt_kids[i], SIGTERM);
		while (waitpid(mt_kids[i], &status, 0) < 0)
			if (errno != EINTR)
				fail_errno("waitpid %s", mt_kid_names[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("child %s failed (status %#x); see the log", mt_kid_names[i],
			     status);
	}
	mt_nr_kids = 0;
}

#endif
