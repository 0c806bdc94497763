// SPDX-License-Identifier: GPL-2.0
/*
 * Logging. Messages go to the log file (or stderr without one). The first
 * error is remembered so that main() can print exactly one line on stderr
 * when a command fails, whatever went to the log.
 *
 * Much of what is logged comes from images and /proc (paths, names, comm)
 * that someone else chose: every byte of a message that is not printable
 * text is written as \xHH here, once for all callers, so a crafted name
 * can neither drive the terminal (escape sequences) nor fake log lines.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"

#define MSG_MAX		1024

static int log_level = LOG_WARN;
static int logfd = 2;
static char first_error[MSG_MAX];	/* whole: the hint of a long line comes last */
static int keep_first = 1;
static int errors_to_log = 1;
static struct timespec log_start;

/*
 * Length of the UTF-8 sequence at @s if it is one of a printable character
 * (not a C1 control, U+0080-U+009F, which some terminals obey), else 0.
 */
static int utf8_printable(const unsigned char *s)
{
	unsigned int cp, n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t log_escape(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;
	int n;

	if (!size)
		return 0;
	while (*s) {
		n = *s >= 0x20 && *s < 0x7f ? 1 : utf8_printable(s);
		if (n) {
			if (o + n >= size)
				break;
			while (n--)
				dst[o++] = *s++;
			continue;
		}
		if (o + 4 >= size)
			break;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[*s >> 4];
		dst[o++] = hex[*s & 15];
		s++;
	}
	dst[o] = '\0';
	return o;
}

int log_open_at(int dirfd, const char *path, int level)
{
	log_level = level;
	clock_gettime(CLOCK_REALTIME, &log_start);
	if (!path)
		return 0;
	logfd = create_file_at(dirfd, path, O_WRONLY | O_APPEND);
	if (logfd < 0) {
		logfd = 2;
		pr_perror("Can't create log file %s", path);
		return -1;
	}
	return 0;
}

int log_open(const char *path, int level)
{
	return log_open_at(AT_FDCWD, path, level);
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

/* "(SS.UUUUUU) Tag (file:line): message\n", the message escaped, to @fd. */
static void log_write(int fd, int level, const char *file, int line, const char *msg)
{
	static const char *tag[] = { "", "Error", "Warn", "", "" };
	char buf[4 * MSG_MAX + 128];
	struct timespec now;
	int n, off;

	clock_gettime(CLOCK_REALTIME, &now);
	n = (now.tv_sec - log_start.tv_sec) * 1000000 +
	    (now.tv_nsec - log_start.tv_nsec) / 1000;
	off = snprintf(buf, sizeof(buf), "(%02d.%06d) ", n / 1000000, n % 1000000);
	if (level <= LOG_WARN)
		off += snprintf(buf + off, sizeof(buf) - off, "%s (%s:%d): ",
				tag[level], file, line);
	off += log_escape(buf + off, sizeof(buf) - off - 1, msg);
	buf[off++] = '\n';
	/* nowhere left to report a failed write to */
	(void)!write(fd, buf, off);
}

static void log_vmsg(int level, int user, const char *file, int line, const char *fmt,
		     va_list ap)
{
	char msg[MSG_MAX], out[4 * MSG_MAX];
	int save = errno, n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (level == LOG_ERR && keep_first && !first_error[0])
		log_escape(first_error, sizeof(first_error), msg);
	/* the user must see it even when the log goes to a file */
	if (user && logfd != 2 && level <= log_level) {
		n = snprintf(out, sizeof(out), "Warning: ");
		n += log_escape(out + n, sizeof(out) - n - 1, msg);
		out[n++] = '\n';
		(void)!write(2, out, n);
	}
	if (level <= log_level && (level != LOG_ERR || errors_to_log))
		log_write(logfd, level, file, line, msg);
	errno = save;
}

void log_msg(int level, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, 0, file, line, fmt, ap);
	va_end(ap);
}

void log_msg_user(int level, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, 1, file, line, fmt, ap);
	va_end(ap);
}

void log_set_fd(int fd)
{
	logfd = fd;
}

void log_set_stderr_errors(int on)
{
	errors_to_log = on;
}
