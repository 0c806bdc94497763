// SPDX-License-Identifier: GPL-2.0-only
/*
 * Filesystems restore mounts anew, in a mount namespace of the test's own:
 * proc (with hidepid), a new devpts instance with runc's options, mqueue,
 * sysfs read-only, cgroup2 read-only, ramfs with a file, a read-only
 * tmpfs (read-only superblock), a tmpfs with nosuid, nodev, noexec and
 * strictatime, and a read-only self-bind of a proc subdirectory (what
 * runc does to /proc/sys). After restore each is there, in the same
 * order, with the same mount and superblock options, and works: proc
 * shows this task, the devpts has its ptmx, the ramfs its file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

#define MAX	32

static char base[4096];

static const char *at(const char *name)
{
	return mnt_at(base, name);
}

struct fs {
	const char *dir, *type, *source, *data;
	unsigned long flags;
	int optional;		/* a kernel without it: not mounted, said so */
};

static const struct fs fss[] = {
	{ "proc", "proc", "proc", "hidepid=1", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0 },
	{ "pts", "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620,gid=5",
	  MS_NOSUID | MS_NOEXEC, 0 },
	{ "mq", "mqueue", "mqueue", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC, 1 },
	{ "sys", "sysfs", "sysfs", NULL, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0 },
	{ "cg", "cgroup2", "cgroup", NULL, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 1 },
	{ "ram", "ramfs", "zdtm-ram", "mode=0711", 0, 0 },
	{ "ro", "tmpfs", "zdtm-ro", "size=64k", MS_RDONLY, 0 },
	{ "strict", "tmpfs", "zdtm-strict", "size=64k,nr_inodes=50",
	  MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_STRICTATIME, 0 },
};

int main(int argc, char **argv)
{
	static struct mnt_line before[MAX], after[MAX];
	char self[64], buf[16];
	struct stat st;
	size_t i;
	int nb, na, fd;

	test_init(argc, argv);
	mnt_enter_ns();
	snprintf(base, sizeof(base), "%s", mnt_abs("mnt_fs.d"));
	if (mkdir(base, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", base);
	for (i = 0; i < ARRAY_SIZE(fss); i++) {
		if (mkdir(at(fss[i].dir), 0755) && errno != EEXIST)
			fail_errno("mkdir %s", fss[i].dir);
		if (!strcmp(fss[i].dir, "ro")) {
			/* read-only from the start: a file made before the superblock went ro */
			if (mount(fss[i].source, at("ro"), "tmpfs", 0, fss[i].data) ||
			    mkdir(at("ro/kept"), 0700) ||
			    mount(NULL, at("ro"), NULL, MS_REMOUNT | MS_RDONLY, NULL))
				fail_errno("mount the read-only tmpfs");
			continue;
		}
		if (mount(fss[i].source, at(fss[i].dir), fss[i].type, fss[i].flags, fss[i].data)) {
			if (fss[i].optional && errno == ENODEV) {
				test_msg("no %s here: not tested", fss[i].type);
				continue;
			}
			fail_errno("mount %s", fss[i].type);
		}
	}
	fd = open(at("ram/f"), O_WRONLY | O_CREAT, 0640);
	if (fd < 0 || write(fd, "ramfs", 5) != 5 || close(fd))
		fail_errno("write ram/f");
	/* runc's read-only paths: a bind of a proc directory on itself, made read-only */
	if (mount(at("proc/sys"), at("proc/sys"), NULL, MS_BIND, NULL) ||
	    mount(NULL, at("proc/sys"), NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
		fail_errno("read-only bind of proc/sys");
	nb = mnt_list(base, before, MAX);

	test_ready();
	test_waitsig();

	na = mnt_list(base, after, MAX);
	mnt_compare(base, before, nb, after, na);
	snprintf(self, sizeof(self), "proc/%d/status", getpid());
	if (access(at(self), R_OK))
		fail("the proc at %s does not show this task", at("proc"));
	if (stat(at("pts/ptmx"), &st) || !S_ISCHR(st.st_mode) || (st.st_mode & 0777) != 0666)
		fail("the devpts has no ptmx of mode 0666");
	if (test_read_file(at("ram/f"), buf, sizeof(buf)) != 5 || strcmp(buf, "ramfs"))
		fail("the ramfs lost its file");
	if (stat(at("ro/kept"), &st) || !S_ISDIR(st.st_mode))
		fail("the read-only tmpfs lost its directory");
	if (mkdir(at("ro/new"), 0700) == 0 || errno != EROFS)
		fail("the read-only tmpfs is writable");
	if (open(at("proc/sys/kernel/hostname"), O_WRONLY) >= 0 || errno != EROFS)
		fail("proc/sys is writable");
	pass();
}
