// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

void opts_warn_dirs(const struct opts *o)
{
	if (o->images_dirfd >= 0)
		dir_check_shared(o->images_dirfd, o->images_dir, "images");
	if (o->work_dir && o->work_dirfd >= 0)
		dir_check_shared(o->work_dirfd, o->work_dir, "work");
}

int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int parse_size(const char *s, uint64_t *v)
{
	static const char suffix[] = "KMG";
	unsigned long long n;
	const char *k;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	if (*end) {
		k = strchr(suffix, *end);
		if (!k || end[1] || n >> (62 - 10 * (k - suffix)))
			return -1;
		n <<= 10 * (k - suffix + 1);
	}
	*v = n;
	return 0;
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
	/* the init of a pid namespace ignores its own SIGKILL (a restored root) */
	_exit(128 + SIGKILL);
}

int send_msg_fd(int sk, const void *data, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)data, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t ret;

	if (fd >= 0) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		ret = sendmsg(sk, &m, MSG_NOSIGNAL);
	while (ret < 0 && errno == EINTR);
	return ret == (ssize_t)len ? 0 : -1;
}

int send_fd(int sk, int fd)
{
	return send_msg_fd(sk, "f", 1, fd);
}

int recv_fd(int sk)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sk, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

char *opt_next(char **p, char **v)
{
	char *w = *p, *s, *q;

	if (!w || !*w)
		return NULL;
	*v = NULL;
	for (s = w; *s && *s != ','; s++) {
		if (*s != '=' || *v)
			continue;
		*s = '\0';
		*v = s + 1;
		q = s[1] == '"' ? strchr(s + 2, '"') : NULL;
		if (q) {
			*v = s + 2;
			*q = '\0';
			s = q;
		}
	}
	*p = *s ? s + 1 : s;
	*s = '\0';
	return w;
}
