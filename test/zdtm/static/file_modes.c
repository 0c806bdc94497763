// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regular files opened with different access modes and flags (read-only,
 * write-only, read-write, O_APPEND, O_NONBLOCK, O_CLOEXEC, O_NOATIME,
 * O_SYNC) at different offsets, with written content: same file, flags,
 * FD_CLOEXEC and offset after restore, and they still work.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

struct f {
	int flags;
	off_t pos;
	int fd;
	int fl;		/* F_GETFL before */
	int fdfl;	/* F_GETFD before */
	struct stat st;
	char name[64];
};

static struct f files[] = {
	{ O_RDONLY, 100 },
	{ O_WRONLY, 4000 },
	{ O_RDWR, 0 },
	{ O_RDWR | O_APPEND, 17 },
	{ O_WRONLY | O_APPEND | O_CLOEXEC, 5 },
	{ O_RDONLY | O_NONBLOCK, 1 << 20 },	/* beyond the end */
	{ O_RDWR | O_CLOEXEC | O_NOATIME, 333 },
	{ O_RDWR | O_SYNC, 8191 },
};

#define SIZE 8192

static char content(int n, off_t off)
{
	return 'A' + (n * 7 + off) % 26;
}

int main(int argc, char **argv)
{
	char buf[SIZE];
	unsigned int n;
	int i;

	test_init(argc, argv);

	for (n = 0; n < ARRAY_SIZE(files); n++) {
		struct f *f = &files[n];
		int fd;

		snprintf(f->name, sizeof(f->name), "%s.%u", test_name, n);
		fd = open(f->name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			fail_errno("create %s", f->name);
		for (i = 0; i < SIZE; i++)
			buf[i] = content(n, i);
		if (write(fd, buf, SIZE) != SIZE)
			fail_errno("write");
		close(fd);

		f->fd = open(f->name, f->flags);
		if (f->fd < 0)
			fail_errno("open %s", f->name);
		if (lseek(f->fd, f->pos, SEEK_SET) != f->pos)
			fail_errno("lseek");
		f->fl = fcntl(f->fd, F_GETFL);
		f->fdfl = fcntl(f->fd, F_GETFD);
		if (fstat(f->fd, &f->st))
			fail_errno("fstat");
	}
	/* data written through the fds before the checkpoint */
	if (write(files[1].fd, "before", 6) != 6 || write(files[3].fd, "appended", 8) != 8)
		fail_errno("write before");
	files[1].pos += 6;
	files[3].pos = SIZE + 8;

	test_ready();
	test_waitsig();

	for (n = 0; n < ARRAY_SIZE(files); n++) {
		struct f *f = &files[n];
		struct stat st;
		off_t pos;

		if (fstat(f->fd, &st))
			fail_errno("fd %d (%s) is gone", f->fd, f->name);
		if (st.st_dev != f->st.st_dev || st.st_ino != f->st.st_ino)
			fail("fd %d is another file than %s", f->fd, f->name);
		if (fcntl(f->fd, F_GETFL) != f->fl)
			fail("fd %d: flags %#o, were %#o", f->fd, fcntl(f->fd, F_GETFL), f->fl);
		if (fcntl(f->fd, F_GETFD) != f->fdfl)
			fail("fd %d: fd flags %#x, were %#x", f->fd, fcntl(f->fd, F_GETFD), f->fdfl);
		pos = lseek(f->fd, 0, SEEK_CUR);
		if (pos != f->pos)
			fail("fd %d: offset %lld, was %lld", f->fd, (long long)pos, (long long)f->pos);
	}

	/* reads continue at the offset */
	if (read(files[0].fd, buf, 10) != 10)
		fail_errno("read");
	for (i = 0; i < 10; i++)
		if (buf[i] != content(0, 100 + i))
			fail("read returned wrong data");
	/* appends go to the end, whatever the offset */
	lseek(files[4].fd, 0, SEEK_SET);
	if (write(files[4].fd, "xyz", 3) != 3)
		fail_errno("append");
	if (pread(files[2].fd, buf, 1, 0) != 1 || buf[0] != content(2, 0))
		fail("pread through the O_RDWR fd");
	if (read(files[5].fd, buf, 1) != 0)
		fail("read beyond the end returned data");
	/* the contents */
	if (pread(files[1].fd, buf, 6, 4000) >= 0)
		fail("pread works on a write-only fd");
	for (n = 0; n < ARRAY_SIZE(files); n++) {
		int fd = open(files[n].name, O_RDONLY);
		ssize_t len = read(fd, buf, sizeof(buf));
		struct stat st;

		if (fd < 0 || len != SIZE)
			fail("cannot read %s back", files[n].name);
		for (i = 0; i < SIZE; i++) {
			char want = content(n, i);

			if (n == 1 && i >= 4000 && i < 4006)
				want = "before"[i - 4000];
			if (buf[i] != want)
				fail("%s byte %d is %c, want %c", files[n].name, i, buf[i], want);
		}
		fstat(fd, &st);
		if (n == 3 && (st.st_size != SIZE + 8 || pread(fd, buf, 8, SIZE) != 8 ||
			       memcmp(buf, "appended", 8)))
			fail("appended data is lost");
		if (n == 4 && (st.st_size != SIZE + 3 || pread(fd, buf, 3, SIZE) != 3 ||
			       memcmp(buf, "xyz", 3)))
			fail("O_APPEND is not honoured after restore");
		close(fd);
	}
	pass();
}
