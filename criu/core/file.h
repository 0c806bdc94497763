/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_FILE_H
#define CRIU_CORE_FILE_H

/* Whole reads and writes; errno set, nothing logged (file.c). */
#include <stddef.h>
#include <sys/types.h>

/* Reads a whole small file (a /proc one) into a NUL-terminated buffer. */
char *read_file(int dirfd, const char *path, size_t *len);
/* The same from an open fd, which it closes. */
char *read_fd(int fd, size_t *len);

/*
 * Creates @path (relative to @dirfd unless absolute) for writing as a new
 * file of mode 0600 that is ours: whatever has the name (an old file, or a
 * symlink or hard link someone planted in a directory others can write
 * to) is removed first and the file is made with O_CREAT | O_EXCL |
 * O_NOFOLLOW, so nothing else is ever followed, truncated or written
 * through. @flags: O_WRONLY or O_RDWR, maybe O_APPEND. Returns the fd, or
 * -1 with errno set (nothing logged).
 */
int create_file_at(int dirfd, const char *path, int flags);
/* pread() until @len bytes are read (ENODATA at the end of the file) */
int read_full(int fd, void *buf, size_t len, off_t off);
/* write() until @len bytes are written */
int write_full(int fd, const void *buf, size_t len);

#endif
