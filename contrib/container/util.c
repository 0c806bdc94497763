// SPDX-License-Identifier: GPL-2.0-only
/*
 * Errors and small file helpers shared by both sides of ctr.
 *
 * An error is reported once, at the place that knows what failed (the
 * path, the syscall, errno); the callers only pass -1 up.  The first error
 * set wins: an undo step failing after it must not hide the cause.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctr.h"

static char errbuf[1024];

static void verr(const char *fmt, va_list ap, int errnum)
{
	size_t n;

	if (errbuf[0])
		return;
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	n = strlen(errbuf);
	if (errnum && n < sizeof(errbuf))
		snprintf(errbuf + n, sizeof(errbuf) - n, ": %s", strerror(errnum));
}

void ctr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap, 0);
	va_end(ap);
}

void ctr_perr(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	verr(fmt, ap, errnum);
	va_end(ap);
	errno = errnum;
}

const char *ctr_errmsg(void)
{
	return errbuf[0] ? errbuf : "unknown error";
}

void ctr_err_clear(void)
{
	errbuf[0] = '\0';
}

int write_file(const char *path, const char *data)
{
	size_t len = strlen(data);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		ctr_perr("open %s", path);
		return -1;
	}
	n = write(fd, data, len);
	if (n != (ssize_t)len) {
		ctr_perr("write '%.*s' to %s", (int)strcspn(data, "\n"), data, path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Reads at most size - 1 bytes and terminates them; -1 with errno set. */
int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

int mkdir_p(const char *path, mode_t mode)
{
	char tmp[4096];
	char *p, c;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		ctr_err("path too long: %s", path);
		return -1;
	}
	for (p = tmp + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST) {
			ctr_perr("mkdir %s", tmp);
			return -1;
		}
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

/* An empty file to mount something on; an existing one is fine. */
int touch(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);

	if (fd < 0) {
		ctr_perr("create %s", path);
		return -1;
	}
	close(fd);
	return 0;
}

/* Field 22 of /proc/PID/stat; 0 when there is no such task. */
unsigned long long proc_start_time(pid_t pid)
{
	unsigned long long start = 0;
	char path[64], buf[1024], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* after ") " comes field 3 (state); 19 more to field 22 */
	for (i = 0, p += 2; i < 19 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		sscanf(p, "%llu", &start);
	return start;
}

/* The state letter, or 0 when the task is gone. */
char proc_state(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Waits until pid is gone or a zombie (it may not be ours to reap). */
int wait_gone(pid_t pid, int ms)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	char st;

	for (;;) {
		st = proc_state(pid);
		if (!st || st == 'Z' || st == 'X')
			return 0;
		if (ms <= 0)
			return -1;
		nanosleep(&ts, NULL);
		ms -= 5;
	}
}
