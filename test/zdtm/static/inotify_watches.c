// SPDX-License-Identifier: GPL-2.0-only
/*
 * inotify watches with gaps between their wds (watches added and removed
 * before): on a directory for creations, on a file for changes (one-shot),
 * on a symlink itself. After restore each fires with its own wd: creating
 * a file in the directory, writing the file, touching the link; watching
 * the directory again gives back its old wd, and nothing else is queued
 * (no trace of how the wds were restored). With the argument "unread",
 * an event is left unread at the dump: criu warns that it is not saved,
 * and it is not there after the restore. With "in=DIR", all of it is
 * made in DIR (test_irmap.py: an overlayfs, whose file handles don't open).
 * With "deleted", one more watch is on a file deleted while the task holds
 * it open: writing through that fd after the restore fires it. With
 * "outside", a watched file is left for the test to open and delete (the
 * dump must refuse the watch: the file is held outside the tree).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

static char dir[64], file[64], link_[64], made[96], ghost[64];
static int in, wd_dir, wd_file, wd_link, wd_ghost = -1, ghost_fd = -1;

static char evbuf[8192] __attribute__((aligned(8)));
static ssize_t evlen, evoff;

/* The next event must be for @wd with @mask, and come from what was just done. */
static void expect_event(int wd, uint32_t mask, const char *what)
{
	struct inotify_event *e;

	if (evoff >= evlen) {
		evoff = 0;
		evlen = read(in, evbuf, sizeof(evbuf));
		if (evlen < (ssize_t)sizeof(*e))
			fail("%s: no event (%m)", what);
	}
	e = (void *)(evbuf + evoff);
	evoff += sizeof(*e) + e->len;
	if (e->wd != wd || !(e->mask & mask))
		fail("%s: an event for wd %d mask %#x, not wd %d %#x", what, e->wd, e->mask, wd,
		     mask);
}

static void expect_none(const char *what)
{
	if (evoff < evlen || read(in, evbuf, sizeof(evbuf)) != -1 || errno != EAGAIN)
		fail("%s", what);
}

static int has_arg(int argc, char **argv, const char *arg)
{
	int i;

	for (i = optind; i < argc; i++)
		if (!strcmp(argv[i], arg))
			return 1;
	return 0;
}

/* A watch on @ghost, deleted at once (held by an fd of ours) or left to the test. */
static void watch_ghost(int deleted)
{
	snprintf(ghost, sizeof(ghost), "%s.%s", test_name, deleted ? "ghost" : "outside");
	ghost_fd = open(ghost, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (ghost_fd < 0)
		fail_errno("open %s", ghost);
	wd_ghost = inotify_add_watch(in, ghost, IN_MODIFY);
	if (wd_ghost < 0)
		fail_errno("watch %s", ghost);
	if (!deleted) {
		close(ghost_fd);	/* the test holds it */
		ghost_fd = -1;
	} else if (unlink(ghost)) {
		fail_errno("unlink %s", ghost);
	}
}

int main(int argc, char **argv)
{
	int gap, fd, i;

	test_init(argc, argv);
	for (i = optind; i < argc; i++)
		if (!strncmp(argv[i], "in=", 3) && chdir(argv[i] + 3))
			fail_errno("chdir %s", argv[i] + 3);
	snprintf(dir, sizeof(dir), "%s.dir", test_name);
	snprintf(file, sizeof(file), "%s.file", test_name);
	snprintf(link_, sizeof(link_), "%s.link", test_name);
	snprintf(made, sizeof(made), "%s/new", dir);
	unlink(made);
	rmdir(dir);
	unlink(link_);
	if (mkdir(dir, 0700) || (fd = open(file, O_CREAT | O_RDWR | O_TRUNC, 0600)) < 0 ||
	    close(fd) || symlink(file, link_))
		fail_errno("setup");
	in = inotify_init1(IN_NONBLOCK);
	if (in < 0)
		fail_errno("inotify_init1");
	/* wds 1..3 come and go: the first real one gets 4, then gaps */
	for (i = 0; i < 3; i++) {
		gap = inotify_add_watch(in, ".", IN_ATTRIB);
		if (gap < 0 || inotify_rm_watch(in, gap))
			fail_errno("gap");
	}
	wd_dir = inotify_add_watch(in, dir, IN_CREATE);
	gap = inotify_add_watch(in, "/", IN_ATTRIB);
	wd_file = inotify_add_watch(in, file, IN_MODIFY | IN_ONESHOT);
	wd_link = inotify_add_watch(in, link_, IN_ATTRIB | IN_DONT_FOLLOW);
	if (wd_dir < 0 || gap < 0 || wd_file < 0 || wd_link < 0 || inotify_rm_watch(in, gap))
		fail_errno("inotify_add_watch");
	if (has_arg(argc, argv, "deleted") || has_arg(argc, argv, "outside"))
		watch_ghost(has_arg(argc, argv, "deleted"));
	/* read away what the removals (and the unlink) queued */
	while (read(in, evbuf, sizeof(evbuf)) > 0)
		;
	test_msg("wds: dir %d, file %d, link %d", wd_dir, wd_file, wd_link);
	if (has_arg(argc, argv, "unread") &&
	    utimensat(AT_FDCWD, link_, NULL, AT_SYMLINK_NOFOLLOW))
		fail_errno("touch link before the dump");

	test_ready();
	test_waitsig();

	if (has_arg(argc, argv, "outside"))
		/* the test deleted the file: what that queued, and the watch, are its */
		while (read(in, evbuf, sizeof(evbuf)) > 0)
			;

	expect_none("events are queued that nothing caused");
	if ((fd = open(made, O_CREAT | O_WRONLY, 0600)) < 0 || close(fd))
		fail_errno("create");
	expect_event(wd_dir, IN_CREATE, "creating a file in the directory");
	if ((fd = open(file, O_WRONLY)) < 0 || write(fd, "x", 1) != 1 || close(fd))
		fail_errno("write");
	expect_event(wd_file, IN_MODIFY, "writing the file");
	expect_event(wd_file, IN_IGNORED, "the one-shot watch going");
	if (utimensat(AT_FDCWD, link_, NULL, AT_SYMLINK_NOFOLLOW))
		fail_errno("touch link");
	expect_event(wd_link, IN_ATTRIB, "touching the link itself");
	if (ghost_fd >= 0) {
		if (write(ghost_fd, "y", 1) != 1)
			fail_errno("write the deleted file");
		expect_event(wd_ghost, IN_MODIFY, "writing the deleted file");
	}
	expect_none("more events than were caused");
	if (inotify_add_watch(in, dir, IN_CREATE | IN_MASK_ADD) != wd_dir)
		fail("the directory's watch has another wd now");
	unlink(made);
	rmdir(dir);
	unlink(link_);
	pass();
}
