// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two fanotify groups with marks of every kind:
 *  - "fid": FAN_CLASS_NOTIF | FAN_REPORT_FID, O_LARGEFILE: an inode mark on a
 *    directory for creations in it (FAN_ONDIR | FAN_EVENT_ON_CHILD), and a
 *    filesystem mark for FAN_CLOSE_WRITE;
 *  - "fd": FAN_CLASS_NOTIF, O_RDONLY: an inode mark on a file for FAN_OPEN, a
 *    mount mark on the mount of the test's directory for FAN_CLOSE_NOWRITE,
 *    and an ignore mark on another file (FAN_OPEN ignored, surviving
 *    modification).
 * After restore: each group's marks, read back from fdinfo (mount ids as
 * mount points, the rest as they were), are the ones it had; the groups'
 * flags too; and they work: opening the file gives FAN_OPEN for it in
 * "fd", opening the ignored file gives none, creating a file in the
 * directory gives FAN_CREATE in "fid".
 *
 * With the argument "deleted" (test_fanotify.py) the fd group only marks a
 * file that is then deleted while it stays open: after restore, writing
 * through that fd gives FAN_MODIFY for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

#define SIG_MAX	4096

static char dir[PATH_MAX], file[PATH_MAX], ignored[PATH_MAX], made[PATH_MAX + 8];

/* The mount point of mount @id in our own mountinfo. */
static void mount_point(unsigned int id, char *out, size_t len)
{
	char line[1024], mp[PATH_MAX];
	unsigned int mid;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		fail_errno("mountinfo");
	snprintf(out, len, "?%u", id);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %*u %*s %*s %4095s", &mid, mp) == 2 && mid == id)
			snprintf(out, len, "%s", mp);
	fclose(f);
}

/*
 * The group's flags and marks as fdinfo shows them, one line each, a
 * mount mark's id replaced by its mount point (ids are new after restore).
 */
static void signature(int fd, char *sig, size_t len)
{
	char path[64], buf[8192], mp[PATH_MAX], *p, *nl;
	unsigned int id, ev;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	n = test_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		fail_errno("%s", path);
	sig[0] = '\0';
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(p, "fanotify ", 9))
			continue;
		if (sscanf(p, "fanotify flags:%x event-flags:%x", &id, &ev) == 2) {
			/* FAN_CLOEXEC: restore makes every group so (each fd has its own) */
			snprintf(sig + strlen(sig), len - strlen(sig), "flags %x event-flags %x\n",
				 id & ~FAN_CLOEXEC, ev);
		} else if (sscanf(p, "fanotify mnt_id:%x ", &id) == 1) {
			mount_point(id, mp, sizeof(mp));
			snprintf(sig + strlen(sig), len - strlen(sig), "mount %s%s\n", mp,
				 strchr(p + 9, ' '));
		} else {
			snprintf(sig + strlen(sig), len - strlen(sig), "%s\n", p);
		}
	}
}

static int group(unsigned int flags, unsigned int event_flags)
{
	int fd = fanotify_init(flags, event_flags);

	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM)
			skip("fanotify_init: %m");
		fail_errno("fanotify_init");
	}
	return fd;
}

static void mark(int fd, unsigned int flags, uint64_t mask, const char *path)
{
	if (fanotify_mark(fd, FAN_MARK_ADD | flags, mask, AT_FDCWD, path))
		fail_errno("fanotify_mark %s %#x", path, (unsigned int)mask);
}

static void touch(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd < 0 || close(fd))
		fail_errno("open %s", path);
}

/* The events of @fd until none is left: is there one of @mask on @ino? */
static int event_on(int fd, uint64_t mask, ino_t ino)
{
	char buf[8192] __attribute__((aligned(8)));
	struct fanotify_event_metadata *m;
	struct stat st;
	int found = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->fd >= 0 && !fstat(m->fd, &st) && st.st_ino == ino &&
			    (m->mask & mask))
				found = 1;
			if (m->fd >= 0)
				close(m->fd);
		}
	}
	if (n < 0 && errno != EAGAIN)
		fail_errno("read fanotify");
	return found;
}

/* Any event of @mask in the FID group @fd (no fds: information records). */
static int fid_event(int fd, uint64_t mask)
{
	char buf[8192] __attribute__((aligned(8)));
	struct fanotify_event_metadata *m;
	int found = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n))
			found |= !!(m->mask & mask);
	if (n < 0 && errno != EAGAIN)
		fail_errno("read fanotify (fid)");
	return found;
}

/* The "deleted" case: a mark on a file deleted while open; its events after restore. */
static void deleted_only(int byfd)
{
	char gone[PATH_MAX];
	struct stat st;
	int gfd;

	snprintf(gone, sizeof(gone), "%s.gone", test_name);
	/* kept open: the kernel drops marks of an inode once it is gone */
	gfd = open(gone, O_RDWR | O_CREAT, 0600);
	if (gfd < 0)
		fail_errno("open %s", gone);
	mark(byfd, 0, FAN_MODIFY, gone);
	if (unlink(gone))
		fail_errno("unlink");
	event_on(byfd, ~0ULL, 0);

	test_ready();
	test_waitsig();

	if (write(gfd, "x", 1) != 1 || fstat(gfd, &st))
		fail_errno("write the deleted file");
	if (!event_on(byfd, FAN_MODIFY, st.st_ino))
		fail("writing the deleted file gave no FAN_MODIFY");
	pass();
	exit(0);
}

int main(int argc, char **argv)
{
	static char before_fid[SIG_MAX], before_fd[SIG_MAX], after[SIG_MAX];
	int fid, byfd;
	struct stat fst, ist;

	test_init(argc, argv);
	snprintf(dir, sizeof(dir), "%s.dir", test_name);
	snprintf(file, sizeof(file), "%s.file", test_name);
	snprintf(ignored, sizeof(ignored), "%s.ignored", test_name);
	snprintf(made, sizeof(made), "%s/new", dir);
	unlink(made);
	rmdir(dir);
	if (mkdir(dir, 0700))
		fail_errno("mkdir");
	touch(file, O_RDWR);
	touch(ignored, O_RDWR);
	if (stat(file, &fst) || stat(ignored, &ist))
		fail_errno("stat");

	fid = group(FAN_CLASS_NOTIF | FAN_NONBLOCK | FAN_REPORT_FID, O_RDONLY | O_LARGEFILE);
	mark(fid, 0, FAN_CREATE | FAN_ONDIR | FAN_EVENT_ON_CHILD, dir);
	mark(fid, FAN_MARK_FILESYSTEM, FAN_CLOSE_WRITE, ".");
	byfd = group(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
	mark(byfd, 0, FAN_OPEN, file);
	mark(byfd, FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE, ".");
	mark(byfd, FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY, FAN_OPEN, ignored);
	if (optind < argc && !strcmp(argv[optind], "deleted"))
		deleted_only(byfd);
	signature(fid, before_fid, sizeof(before_fid));
	signature(byfd, before_fd, sizeof(before_fd));
	/* nothing queued: what the restore must not lose */
	fid_event(fid, ~0ULL);
	event_on(byfd, ~0ULL, 0);

	test_ready();
	test_waitsig();

	signature(fid, after, sizeof(after));
	if (strcmp(before_fid, after))
		fail("the FID group's marks differ:\n%s--- now:\n%s", before_fid, after);
	signature(byfd, after, sizeof(after));
	if (strcmp(before_fd, after))
		fail("the fd group's marks differ:\n%s--- now:\n%s", before_fd, after);
	touch(ignored, O_RDONLY);
	if (event_on(byfd, FAN_OPEN, ist.st_ino))
		fail("opening the ignored file gave FAN_OPEN");
	touch(file, O_RDONLY);
	if (!event_on(byfd, FAN_OPEN, fst.st_ino))
		fail("opening the marked file gave no FAN_OPEN");
	touch(made, O_WRONLY);
	if (!fid_event(fid, FAN_CREATE))
		fail("creating a file in the marked directory gave no FAN_CREATE");
	unlink(made);
	rmdir(dir);
	unlink(file);
	unlink(ignored);
	pass();
}
