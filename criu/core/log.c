// SPDX-License-Identifier: GPL-2.0
/*
 * Logging. Messages go to the log file (or stderr without one). The first
 * error is remembered so that main() can print exactly one line on stderr
 * when a command fails, whatever went to the log.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

static int log_level = LOG_WARN;
static int logfd = 2;
static char first_error[512];
static int keep_first = 1;
static int errors_to_log = 1;
static struct timespec log_start;

int log_open(const char *path, int level)
{
	log_level = level;
	clock_gettime(CLOCK_REALTIME, &log_start);
	if (!path)
		return 0;
	logfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (logfd < 0) {
		logfd = 2;
		pr_perror("Can't open log file %s", path);
		return -1;
	}
	return 0;
}

void log_close(void)
{
	if (logfd > 2)
		close(logfd);
	logfd = 2;
}

int log_fd(void)
{
	return logfd;
}

const char *log_first_error(void)
{
	return first_error[0] ? first_error : NULL;
}

void log_keep_first_error(int on)
{
	keep_first = on;
}

void log_msg(int level, const char *file, int line, const char *fmt, ...)
{
	static const char *tag[] = { "", "Error", "Warn", "", "" };
	char buf[1024];
	struct timespec now;
	int save = errno;
	int n, off;
	va_list ap;

	if (level == LOG_ERR && keep_first && !first_error[0]) {
		va_start(ap, fmt);
		vsnprintf(first_error, sizeof(first_error), fmt, ap);
		va_end(ap);
	}
	if (level > log_level || (level == LOG_ERR && !errors_to_log)) {
		errno = save;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	n = (now.tv_sec - log_start.tv_sec) * 1000000 +
	    (now.tv_nsec - log_start.tv_nsec) / 1000;
	off = snprintf(buf, sizeof(buf), "(%02d.%06d) ", n / 1000000, n % 1000000);
	if (level <= LOG_WARN)
		off += snprintf(buf + off, sizeof(buf) - off, "%s (%s:%d): ",
				tag[level], file, line);
	va_start(ap, fmt);
	off += vsnprintf(buf + off, sizeof(buf) - off, fmt, ap);
	va_end(ap);
	if (off >= (int)sizeof(buf) - 1)
		off = sizeof(buf) - 2;
	buf[off++] = '\n';
	/* nowhere left to report a failed write to */
	(void)!write(logfd, buf, off);
	errno = save;
}

void log_set_fd(int fd)
{
	logfd = fd;
}

void log_set_stderr_errors(int on)
{
	errors_to_log = on;
}
