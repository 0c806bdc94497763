// SPDX-License-Identifier: GPL-2.0
/*
 * Whole reads and writes, and files created without following anything
 * planted where they go (core/file.h). Nothing here logs: the log opens
 * its own file with create_file_at(); the callers say what failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

char *read_fd(int fd, size_t *len)
{
	size_t size = 4096, off = 0;
	char *buf = NULL, *n;
	ssize_t ret;

	for (;;) {
		n = realloc(buf, size + 1);
		if (!n)
			goto err;
		buf = n;
		ret = read(fd, buf + off, size - off);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			goto err;
		}
		if (ret == 0)
			break;
		off += ret;
		if (off == size)
			size *= 2;
	}
	close(fd);
	buf[off] = '\0';
	if (len)
		*len = off;
	return buf;
err:
	ret = errno;
	close(fd);
	free(buf);
	errno = ret;
	return NULL;
}

char *read_file(int dirfd, const char *path, size_t *len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? NULL : read_fd(fd, len);
}

/* A name can be taken again between our unlink and our create: try again. */
#define CREATE_TRIES	8

static int create_new(int dirfd, const char *name, int flags)
{
	return openat(dirfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static int create_in(int dirfd, const char *name, int flags)
{
	struct stat st;
	int i, fd;

	/*
	 * Mostly the name is free (a dump makes some 17 images a task): made
	 * at once, without the look and the unlink that find nothing. Whatever
	 * is there (EEXIST, a symlink too: O_EXCL never follows) takes the
	 * long way.
	 */
	fd = create_new(dirfd, name, flags);
	if (fd < 0 && errno != EEXIST)
		return -1;
	/*
	 * A character device there (-o /dev/null, --pidfile /dev/null) is
	 * written to, not replaced: only root makes device nodes, so nobody
	 * can plant one, and replacing /dev/null would break the machine.
	 */
	if (fd < 0 && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISCHR(st.st_mode))
		return openat(dirfd, name, (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW |
			      O_CLOEXEC);
	for (i = 0; i < CREATE_TRIES && fd < 0; i++) {
		if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			return -1;
		fd = create_new(dirfd, name, flags);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	/* the umask may have taken bits away */
	if (fd >= 0 && fchmod(fd, 0600)) {
		i = errno;
		close(fd);
		errno = i;
		return -1;
	}
	return fd;
}

int create_file_at(int dirfd, const char *path, int flags)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd, fd, err;

	if (!slash)
		return create_in(dirfd, path, flags);
	dir = slash == path ? strdup("/") : strndup(path, slash - path);
	if (!dir)
		return -1;
	dfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd < 0)
		return -1;
	fd = create_in(dfd, slash + 1, flags);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

int read_full(int fd, void *buf, size_t len, off_t off)
{
	ssize_t ret;

	while (len) {
		ret = pread(fd, buf, len, off);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			if (ret == 0)
				errno = ENODATA;
			return -1;
		}
		buf = (char *)buf + ret;
		len -= ret;
		off += ret;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	ssize_t ret;

	while (len) {
		ret = write(fd, buf, len);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -1;
		buf = (const char *)buf + ret;
		len -= ret;
	}
	return 0;
}
