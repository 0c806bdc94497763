// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bind mounts and overmounts in a mount namespace of the test's own:
 *   src      a tmpfs: dir/x, file, under/hidden
 *   bdir     a bind of src/dir (a directory), the cwd
 *   bfile    a bind of src/file (a single file, over a file of the host's)
 *   rodir    a bind of src/dir made read-only
 *   hostbind a bind of a directory of the host's filesystem
 *   src/under a tmpfs over src/under: a file stays open on src/under/hidden,
 *            and an inotify watch on it
 *   stack    two tmpfs mounted one over the other at the same place
 * After restore: every mount in the same order with the same options and
 * roots; the binds show the same inodes as their sources (a write through
 * one is seen through the other); rodir refuses writes; the fd still reads
 * the hidden file, on the mount below, and reading it fires the watch (with
 * its wd); the stack's top is the second
 * tmpfs and unmounting it shows the first; the cwd is bdir.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

#define MAX	32

static char base[4096];

static const char *at(const char *name)
{
	return mnt_at(base, name);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd))
		fail_errno("write %s", path);
}

static void expect_text(const char *path, const char *text)
{
	char buf[64];
	ssize_t n = test_read_file(path, buf, sizeof(buf));

	if (n < 0 || strcmp(buf, text))
		fail("%s holds '%s', not '%s'", path, n < 0 ? "(unreadable)" : buf, text);
}

static void tmpfs(const char *path, const char *name)
{
	if (mount(name, path, "tmpfs", 0, "size=1m"))
		fail_errno("mount tmpfs %s", path);
}

static void bind(const char *from, const char *to)
{
	if (mount(from, to, NULL, MS_BIND, NULL))
		fail_errno("bind %s on %s", from, to);
}

static void same_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb) || sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev)
		fail("%s and %s are not the same file", a, b);
}

static void set_up(void)
{
	static const char *const dirs[] = { "src", "bdir", "rodir", "hostdir", "hostbind", "stack" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (mkdir(at(dirs[i]), 0755) && errno != EEXIST)
			fail_errno("mkdir %s", dirs[i]);
	put(at("bfile"), "host file\n");
	put(at("hostdir/h"), "on the host\n");
	tmpfs(at("src"), "zdtm-src");
	if (mkdir(at("src/dir"), 0755) || mkdir(at("src/under"), 0700))
		fail_errno("mkdir in src");
	put(at("src/dir/x"), "X");
	put(at("src/file"), "F");
	put(at("src/under/hidden"), "H");
	bind(at("src/dir"), at("bdir"));
	bind(at("src/file"), at("bfile"));
	bind(at("src/dir"), at("rodir"));
	if (mount(NULL, at("rodir"), NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
		fail_errno("remount rodir read-only");
	bind(at("hostdir"), at("hostbind"));
	tmpfs(at("stack"), "zdtm-one");
	put(at("stack/one"), "1");
	tmpfs(at("stack"), "zdtm-two");
	put(at("stack/two"), "2");
}

static int snapshot(struct mnt_line *m)
{
	return mnt_list(base, m, MAX);
}

/* Some queued event is IN_ACCESS for @wd (a dump's own read may have queued one before). */
static int accessed(int in, int wd)
{
	char ev[4096] __attribute__((aligned(8)));
	struct inotify_event *e;
	ssize_t len, off;
	int seen = 0;

	while ((len = read(in, ev, sizeof(ev))) > 0)
		for (off = 0; off < len; off += sizeof(*e) + e->len) {
			e = (void *)(ev + off);
			seen |= e->wd == wd && (e->mask & IN_ACCESS);
		}
	return seen;
}

int main(int argc, char **argv)
{
	static struct mnt_line before[MAX], after[MAX];
	struct mnt_line src;
	struct stat st;
	char buf[8];
	int hidden, nb, na, in, wd;

	test_init(argc, argv);
	mnt_enter_ns();
	snprintf(base, sizeof(base), "%s", mnt_abs("mnt_bind.d"));
	if (mkdir(base, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", base);
	set_up();
	hidden = open(at("src/under/hidden"), O_RDONLY);
	if (hidden < 0)
		fail_errno("open src/under/hidden");
	in = inotify_init1(IN_NONBLOCK);
	wd = in < 0 ? -1 : inotify_add_watch(in, at("src/under/hidden"), IN_ACCESS);
	if (wd < 0)
		fail_errno("watch src/under/hidden");
	tmpfs(at("src/under"), "zdtm-over");
	put(at("src/under/top"), "T");
	if (chdir(at("bdir")))
		fail_errno("chdir bdir");
	nb = snapshot(before);

	test_ready();
	test_waitsig();

	na = snapshot(after);
	mnt_compare(base, before, nb, after, na);
	same_inode(at("bdir/x"), at("src/dir/x"));
	same_inode(at("bfile"), at("src/file"));
	same_inode(".", at("src/dir"));
	put(at("bfile"), "G");
	expect_text(at("src/file"), "G");
	expect_text(at("rodir/x"), "X");
	if (open(at("rodir/new"), O_WRONLY | O_CREAT, 0644) >= 0 || errno != EROFS)
		fail("rodir is writable");
	expect_text(at("hostbind/h"), "on the host\n");
	same_inode(at("hostbind/h"), at("hostdir/h"));
	/* the file under the overmount, still open on the mount below */
	if (mnt_find(at("src"), 0, &src) || fstat(hidden, &st) ||
	    st.st_dev != makedev(src.major, src.minor))
		fail("the fd on src/under/hidden is not on src's tmpfs");
	if (pread(hidden, buf, sizeof(buf), 0) != 1 || buf[0] != 'H')
		fail("the fd on the hidden file does not read it");
	if (!accessed(in, wd))
		fail("reading the hidden file does not fire its watch");
	expect_text(at("src/under/top"), "T");
	if (access(at("src/under/hidden"), F_OK) == 0)
		fail("src/under/hidden is not hidden any more");
	expect_text(at("stack/two"), "2");
	if (umount(at("stack")))
		fail_errno("umount the top of the stack");
	expect_text(at("stack/one"), "1");
	pass();
}
