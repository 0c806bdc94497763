// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tmpfs in a mount namespace of the test's own, holding one of every
 * kind of node: directories (one sticky, one setgid), regular files (one
 * setuid, one empty, one sparse with data around a hole, one with xattrs),
 * a hard link, symlinks (one dangling), a FIFO, character and block
 * devices; owners other than root, chosen access and modification times,
 * user and trusted xattrs (also on a symlink and a FIFO). A file stays
 * open on it (read-write, at an offset), the cwd is a directory of it,
 * and it is mounted noatime with its own size, mode and inode limit.
 *
 * After restore the whole tree, walked again, is what it was (every
 * field above, the data, where the holes are), the open file is the
 * same inode as its name, and the mount has its options.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

#define DIR_NAME	"mnt_tmpfs.d"
#define SNAP		(1 << 16)

static char snap[SNAP];
static size_t used;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void add(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(snap + used, SNAP - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= SNAP - used)
		fail("the snapshot is too big");
	used += n;
}

static unsigned long sum_file(const char *path, char *holes, size_t size)
{
	unsigned long h = 5381;
	off_t data = 0, hole;
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0)
		fail_errno("open %s", path);
	holes[0] = '\0';
	/* where the data is: a hole filled with zeros would read the same */
	while ((data = lseek(fd, data, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		snprintf(holes + strlen(holes), size - strlen(holes), "[%ld,%ld)", (long)data,
			 (long)hole);
		data = hole;
	}
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		while (n--)
			h = h * 33 + (unsigned char)buf[n];
	close(fd);
	return h;
}

static void add_xattrs(const char *path)
{
	char list[1024], val[256], *p;
	ssize_t len = llistxattr(path, list, sizeof(list)), vl;

	if (len < 0)
		fail_errno("llistxattr %s", path);
	/* the kernel lists them in the order they were set; restore keeps it */
	for (p = list; p < list + len; p += strlen(p) + 1) {
		vl = lgetxattr(path, p, val, sizeof(val) - 1);
		if (vl < 0)
			fail_errno("lgetxattr %s %s", path, p);
		val[vl] = '\0';
		add(" %s=%s", p, val);
	}
}

static void walk(const char *dir, const char *rel)
{
	struct dirent **names;
	char path[4096], target[256], holes[256];
	struct stat st;
	int i, n;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_errno("scandir %s", dir);
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] == '.' && (!names[i]->d_name[1] ||
		    !strcmp(names[i]->d_name, "..")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (lstat(path, &st))
			fail_errno("lstat %s", path);
		add("%s/%s: mode %o uid %d gid %d nlink %lu atime %ld.%09ld mtime %ld.%09ld",
		    rel, names[i]->d_name, st.st_mode, st.st_uid, st.st_gid, (long)st.st_nlink,
		    st.st_atim.tv_sec, st.st_atim.tv_nsec, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		if (S_ISREG(st.st_mode))
			add(" size %ld sum %lx data %s", (long)st.st_size,
			    sum_file(path, holes, sizeof(holes)), holes);
		else if (S_ISLNK(st.st_mode)) {
			target[readlink(path, target, sizeof(target) - 1)] = '\0';
			add(" -> %s", target);
		} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			add(" dev %u:%u", major(st.st_rdev), minor(st.st_rdev));
		add_xattrs(path);
		add("\n");
		if (S_ISDIR(st.st_mode)) {
			char sub[4096];

			snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]->d_name);
			walk(path, sub);
		}
		free(names[i]);
	}
	free(names);
}

static void set_times(const char *path, long atime, long mtime)
{
	struct timespec ts[2] = { { atime, 123456789 }, { mtime, 987654321 } };

	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW))
		fail_errno("utimensat %s", path);
}

static void write_at(int fd, off_t off, char c, size_t len)
{
	char buf[4096];

	memset(buf, c, sizeof(buf));
	if (pwrite(fd, buf, len, off) != (ssize_t)len)
		fail_errno("pwrite");
}

static int populate(const char *m)
{
	char p[4096], q[4096];
	int fd, rw;

#define P(name) (snprintf(p, sizeof(p), "%s/%s", m, name), p)
#define Q(name) (snprintf(q, sizeof(q), "%s/%s", m, name), q)
	if (mkdir(P("d"), 0750) || chown(p, 1000, 2000) || mkdir(P("sticky"), 0700) ||
	    chmod(p, 01777) || mkdir(P("d/setgid"), 0700) || chmod(p, 02755))
		fail_errno("mkdir");
	fd = open(P("d/f"), O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		fail_errno("create");
	write_at(fd, 0, 'f', 3000);
	write_at(fd, 3000, 'g', 4000);
	close(fd);
	if (chown(p, 1000, 2000) || chmod(p, 04755) || link(p, Q("hard")))
		fail_errno("chown/chmod/link");
	fd = open(P("sparse"), O_RDWR | O_CREAT, 0640);
	if (fd < 0)
		fail_errno("create");
	write_at(fd, 0, 'a', 4096);
	write_at(fd, 1 << 20, 'b', 4096);
	if (ftruncate(fd, 3 << 20))
		fail_errno("ftruncate");
	close(fd);
	fd = open(P("empty"), O_WRONLY | O_CREAT, 0);
	if (fd < 0)
		fail_errno("create");
	close(fd);
	if (symlink("d/f", P("link")) || symlink("/nonexistent/x", P("dangling")) ||
	    lchown(p, 33, 44))
		fail_errno("symlink");
	if (mkfifo(P("fifo"), 0620) || mknod(P("null"), S_IFCHR | 0666, makedev(1, 3)) ||
	    mknod(P("loop"), S_IFBLK | 0660, makedev(7, 0)))
		fail_errno("mknod");
	/* a kernel built without CONFIG_TMPFS_XATTR (the test kernel's tinyconfig) */
	if (setxattr(P("d/f"), "user.mime", "text/plain", 10, 0) && errno == EOPNOTSUPP)
		skip("tmpfs without xattrs (CONFIG_TMPFS_XATTR off)");
	if (setxattr(P("d/f"), "user.mime", "text/plain", 10, 0) ||
	    setxattr(p, "trusted.first", "1", 1, 0) || setxattr(Q("d"), "user.dir", "yes", 3, 0) ||
	    lsetxattr(P("link"), "trusted.onlink", "L", 1, 0) ||
	    setxattr(P("fifo"), "trusted.onfifo", "F", 1, 0))
		fail_errno("setxattr");
	rw = open(P("d/f"), O_RDWR);
	if (rw < 0 || lseek(rw, 1234, SEEK_SET) != 1234)
		fail_errno("open d/f");
	/* times last, directories after what is in them */
	set_times(P("d/f"), 1700000000, 1600000000);
	set_times(P("sparse"), 1700000001, 1600000001);
	set_times(P("empty"), 1700000002, 1600000002);
	set_times(P("link"), 1700000003, 1600000003);
	set_times(P("fifo"), 1700000004, 1600000004);
	set_times(P("null"), 1700000005, 1600000005);
	set_times(P("d/setgid"), 1700000006, 1600000006);
	set_times(P("d"), 1700000007, 1600000007);
	set_times(P("sticky"), 1700000008, 1600000008);
	set_times(m, 1700000009, 1600000009);
#undef P
#undef Q
	return rw;
}

int main(int argc, char **argv)
{
	struct mnt_line before, after;
	char *first, cwd[4096];
	struct stat a, b;
	const char *m;
	int rw;

	test_init(argc, argv);
	mnt_enter_ns();
	m = mnt_abs(DIR_NAME);
	if (mkdir(m, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", m);
	if (mount("zdtm-tmpfs", m, "tmpfs", MS_NOATIME, "size=4m,mode=1751,nr_inodes=1000"))
		fail_errno("mount tmpfs");
	rw = populate(m);
	if (mnt_find(m, 0, &before))
		fail("the tmpfs is not in mountinfo");
	walk(m, "");
	first = strdup(snap);
	snprintf(cwd, sizeof(cwd), "%s/d/setgid", m);
	if (chdir(cwd))
		fail_errno("chdir");

	test_ready();
	test_waitsig();

	if (stat(".", &a) || stat(cwd, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		fail("the cwd is not %s any more", cwd);
	if (fstat(rw, &a) || stat("../f", &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		fail("the open file is not d/f any more");
	if (lseek(rw, 0, SEEK_CUR) != 1234 || (fcntl(rw, F_GETFL) & O_ACCMODE) != O_RDWR)
		fail("the open file lost its offset or mode");
	if (mnt_find(m, 0, &after))
		fail("the tmpfs is gone");
	if (strcmp(before.opts, after.opts) || strcmp(before.sb, after.sb) ||
	    strcmp(before.source, after.source) || strcmp(after.fstype, "tmpfs"))
		fail("the mount changed: %s %s %s -> %s %s %s", before.opts, before.sb,
		     before.source, after.opts, after.sb, after.source);
	used = 0;
	walk(m, "");
	if (strcmp(first, snap))
		fail("the files changed:\n--- before\n%s--- now\n%s", first, snap);
	pass();
}
