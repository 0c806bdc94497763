// SPDX-License-Identifier: GPL-2.0-only
/*
 * Character devices: /dev/null, /dev/zero, /dev/urandom, /dev/full open
 * with various modes; after restore they are the same devices with the same
 * flags and behave as such.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zdtm.h"

struct dev {
	const char *path;
	int flags;
	int fd;
	int fl;
	dev_t rdev;
};

static struct dev devs[] = {
	{ "/dev/null", O_RDWR },
	{ "/dev/null", O_WRONLY | O_APPEND },
	{ "/dev/zero", O_RDONLY },
	{ "/dev/urandom", O_RDONLY | O_NONBLOCK },
	{ "/dev/full", O_WRONLY | O_CLOEXEC },
};

int main(int argc, char **argv)
{
	unsigned char buf[256];
	struct stat st;
	unsigned int n;
	int i, nz;

	test_init(argc, argv);
	for (n = 0; n < ARRAY_SIZE(devs); n++) {
		devs[n].fd = open(devs[n].path, devs[n].flags);
		if (devs[n].fd < 0 || fstat(devs[n].fd, &st))
			fail_errno("open %s", devs[n].path);
		devs[n].fl = fcntl(devs[n].fd, F_GETFL);
		devs[n].rdev = st.st_rdev;
	}
	/* move /dev/zero's offset */
	if (read(devs[2].fd, buf, 100) != 100)
		fail_errno("read zero");

	test_ready();
	test_waitsig();

	for (n = 0; n < ARRAY_SIZE(devs); n++) {
		if (fstat(devs[n].fd, &st))
			fail_errno("fd of %s is gone", devs[n].path);
		if (!S_ISCHR(st.st_mode) || st.st_rdev != devs[n].rdev)
			fail("fd %d is not %s any more", devs[n].fd, devs[n].path);
		if (fcntl(devs[n].fd, F_GETFL) != devs[n].fl)
			fail("%s: flags %#o, were %#o", devs[n].path,
			     fcntl(devs[n].fd, F_GETFL), devs[n].fl);
	}
	if (write(devs[0].fd, "abc", 3) != 3 || read(devs[0].fd, buf, 10) != 0)
		fail("/dev/null misbehaves");
	if (write(devs[1].fd, "abc", 3) != 3)
		fail("/dev/null (append) misbehaves");
	memset(buf, 0xff, sizeof(buf));
	if (read(devs[2].fd, buf, sizeof(buf)) != sizeof(buf))
		fail_errno("read /dev/zero");
	for (i = 0; i < (int)sizeof(buf); i++)
		if (buf[i])
			fail("/dev/zero gave non-zero data");
	if (read(devs[3].fd, buf, sizeof(buf)) != sizeof(buf))
		fail_errno("read /dev/urandom");
	for (i = 0, nz = 0; i < (int)sizeof(buf); i++)
		nz += buf[i] != 0;
	if (nz < 200)
		fail("/dev/urandom gave suspicious data");
	if (write(devs[4].fd, "x", 1) != -1 || errno != ENOSPC)
		fail("/dev/full does not say ENOSPC");
	if (!(fcntl(devs[4].fd, F_GETFD) & FD_CLOEXEC))
		fail("FD_CLOEXEC lost");
	pass();
}
