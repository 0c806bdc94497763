/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_UTIL_H
#define CRIU_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#define PAGE_SIZE	4096UL
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))

void *xmalloc(size_t size);
void *xzalloc(size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

/* Reads a whole small file (a /proc one) into a NUL-terminated buffer. */
char *read_file(int dirfd, const char *path, size_t *len);
int read_full(int fd, void *buf, size_t len, off_t off);
int write_full(int fd, const void *buf, size_t len);

int64_t ts_to_ns(const struct timespec *ts);
int64_t clock_ns(int clk);

/* Test-only fault injection: kill ourselves at a named point (CRIU_FAULT). */
void fault_point(const char *name);

#endif
