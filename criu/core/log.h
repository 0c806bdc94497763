/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_LOG_H
#define CRIU_CORE_LOG_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

enum {
	LOG_ERR = 1,
	LOG_WARN = 2,
	LOG_INFO = 3,
	LOG_DEBUG = 4,
};

int log_open(const char *path, int level);
/* The log file @path relative to @dirfd, created as create_file_at() does. */
int log_open_at(int dirfd, const char *path, int level);
void log_close(void);
int log_fd(void);
void log_set_fd(int fd);
void log_msg(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same, and on stderr too when the log goes to a file. */
void log_msg_user(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Copies @src into @dst (@size bytes, NUL-terminated, cut if need be) with
 * every byte that is not printable ASCII or part of a printable UTF-8
 * character written as \xHH. Every message is passed through it. Returns
 * the length written.
 */
size_t log_escape(char *dst, size_t size, const char *src);
/* The first error of a failed command: printed once on stderr by main(). */
const char *log_first_error(void);
void log_keep_first_error(int on);
/* Off: errors are only remembered, for main()'s single stderr line. */
void log_set_stderr_errors(int on);

#define pr_err(fmt, ...) log_msg(LOG_ERR, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) log_msg(LOG_WARN, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define pr_warn_user(fmt, ...) log_msg_user(LOG_WARN, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) log_msg(LOG_INFO, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_msg(LOG_DEBUG, __FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define pr_perror(fmt, ...) \
	pr_err(fmt ": %s", ##__VA_ARGS__, strerror(errno))

#endif
