// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		pr_err("Out of memory allocating %zu bytes", size);
	return p;
}

void *xzalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p)
		pr_err("Out of memory allocating %zu bytes", size);
	return p;
}

void *xrealloc(void *p, size_t size)
{
	void *n = realloc(p, size ? size : 1);

	if (!n)
		pr_err("Out of memory reallocating %zu bytes", size);
	return n;
}

char *xstrdup(const char *s)
{
	char *n = strdup(s);

	if (!n)
		pr_err("Out of memory");
	return n;
}

char *read_file(int dirfd, const char *path, size_t *len)
{
	size_t size = 4096, off = 0;
	char *buf = NULL, *n;
	ssize_t ret;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
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

int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int64_t clock_ns(int clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_to_ns(&ts);
}

/* CRIU_FAULT=NAME kills criu at the first NAME, NAME#N at the N-th. */
void fault_point(const char *name)
{
	const char *want = getenv("CRIU_FAULT");
	static int hits;
	size_t len;

	if (!want)
		return;
	len = strcspn(want, "#");
	if (strlen(name) != len || strncmp(want, name, len))
		return;
	if (want[len] == '#' && ++hits < atoi(want + len + 1))
		return;
	pr_info("fault injection: killing criu at '%s'", want);
	kill(getpid(), SIGKILL);
}
