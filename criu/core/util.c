// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/opts.h"
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

static int create_in(int dirfd, const char *name, int flags)
{
	int i, fd = -1;

	for (i = 0; i < CREATE_TRIES && fd < 0; i++) {
		if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			return -1;
		fd = openat(dirfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
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

int open_dir(const char *path, int create, const char *what)
{
	int made = create && !mkdir(path, 0700);
	struct stat st;
	int fd;

	if (create && !made && errno != EEXIST) {
		pr_perror("Can't create the %s directory %s", what, path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("Can't open the %s directory %s", what, path);
		return -1;
	}
	/* ours: exactly 0700, whatever the umask */
	if (made && (fstat(fd, &st) || (st.st_uid == geteuid() && fchmod(fd, 0700)))) {
		pr_perror("Can't make the %s directory %s 0700", what, path);
		close(fd);
		return -1;
	}
	return fd;
}

void dir_check_shared(int fd, const char *path, const char *what)
{
	struct stat st;

	if (fstat(fd, &st))
		return;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_uid != geteuid())
		pr_warn_user("The %s directory %s (mode %04o, owner uid %u) is writable "
			     "by others: criu follows nothing they plant there, but they "
			     "can replace what it wrote", what, path,
			     (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
}

int opts_open_dirs(struct opts *o, int create)
{
	o->images_dirfd = open_dir(o->images_dir, create, "images");
	if (o->images_dirfd < 0)
		return -1;
	o->work_dirfd = o->images_dirfd;
	if (o->work_dir) {
		o->work_dirfd = open_dir(o->work_dir, 0, "work");
		if (o->work_dirfd < 0)
			return -1;
	}
	return 0;
}

/* The kinds of --external some part reads. */
static const char *const external_kinds[] = { "mnt" };

static int known_external(const char *v, const char *bracket)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(external_kinds); i++)
		if ((size_t)(bracket - v) == strlen(external_kinds[i]) &&
		    !strncmp(v, external_kinds[i], bracket - v))
			return 1;
	return 0;
}

int opts_add_external(struct opts *o, const char *v, int map)
{
	const char *b = strchr(v, '['), *e = b ? strchr(b, ']') : NULL, *colon = strchr(v, ':');
	const char **n;
	char *s = NULL;

	if (map && !strcmp(v, "auto"))
		s = xstrdup("mnt[]");
	else if (map && colon && colon != v && colon[1] &&
		 asprintf(&s, "mnt[%.*s]%s", (int)(colon - v), v, colon) < 0)
		s = NULL;
	else if (!map && b && known_external(v, b) && e && (!e[1] || (e[1] == ':' && e[2])))
		s = xstrdup(v);
	if (!s)
		return -1;
	n = xrealloc(o->external, (o->nr_external + 1) * sizeof(*n));
	if (!n) {
		free(s);
		return -1;
	}
	o->external = n;
	o->external[o->nr_external++] = s;
	return 0;
}

void opts_warn_dirs(const struct opts *o)
{
	if (o->images_dirfd >= 0)
		dir_check_shared(o->images_dirfd, o->images_dir, "images");
	if (o->work_dir && o->work_dirfd >= 0)
		dir_check_shared(o->work_dirfd, o->work_dir, "work");
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
