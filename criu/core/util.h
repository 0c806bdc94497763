/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_UTIL_H
#define CRIU_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

/* the file helpers that log nothing, which every user of these wants too */
#include "core/file.h"

#define PAGE_SIZE	4096UL
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))

void *xmalloc(size_t size);
void *xzalloc(size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

/*
 * Room for one more element at the end of array @arr of @nr elements:
 * xrealloc() to @nr + 1 of them. 0, or -1 (logged) with @arr as it was.
 */
#define xgrow(arr, nr)							\
	({								\
		typeof(arr) __grown = xrealloc((arr), ((nr) + 1) * sizeof(*(arr))); \
									\
		if (__grown)						\
			(arr) = __grown;				\
		__grown ? 0 : -1;					\
	})
/* The same, and the new element (not zeroed), counted in @nr; NULL on error. */
#define xpush(arr, nr)	(xgrow(arr, nr) ? NULL : &(arr)[(nr)++])

/* Opens the directory @path (made 0700 if @create and absent); -1 logged. */
int open_dir(const char *path, int create, const char *what);
/*
 * One warning (log and stderr) when others may plant files in the open
 * directory @fd: it is writable by its group or everyone, or not ours.
 */
void dir_check_shared(int fd, const char *path, const char *what);
/*
 * -D and -W of a command, opened once into o->images_dirfd and
 * o->work_dirfd (the images directory unless -W): the images, the log,
 * the pidfile and the stats are created in them by fd, never through a
 * path someone could change meanwhile. @create: a dump makes its images
 * directory, 0700. -1 logged.
 */
struct opts;
int opts_open_dirs(struct opts *o, int create);
/* One warning for each of those directories others may plant files in. */
void opts_warn_dirs(const struct opts *o);

/*
 * The next option of a mount's "k=v,flag,..." at *@p, cut out in place;
 * its value in *@v (NULL for a flag); NULL at the end. A value in double
 * quotes keeps its commas (SELinux contexts with categories:
 * context="u:r:t:s0:c1,c2") and loses its quotes.
 */
char *opt_next(char **p, char **v);

int64_t ts_to_ns(const struct timespec *ts);
/* A size as CRIU's options take it: bytes, or with a K, M or G suffix; -1 if not one. */
int parse_size(const char *s, uint64_t *v);
int64_t clock_ns(int clk);

/* Test-only fault injection: kill ourselves at a named point (CRIU_FAULT). */
void fault_point(const char *name);

/* An fd over a unix socket (SCM_RIGHTS, one byte of data): 0, -1 (errno). */
int send_fd(int sk, int fd);
/* @len bytes of @data, and @fd with them unless it is -1: 0, -1 (errno); no SIGPIPE. */
int send_msg_fd(int sk, const void *data, size_t len, int fd);
/* The fd send_fd() sent, O_CLOEXEC; -1 (errno). */
int recv_fd(int sk);

#endif
