// SPDX-License-Identifier: GPL-2.0-only
/* Helpers for the mount tests: see mnt.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

void mnt_enter_ns(void)
{
	if (unshare(CLONE_NEWNS))
		skip("unshare(CLONE_NEWNS): %m");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		fail_errno("make every mount private");
}

static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

static int parse(char *line, struct mnt_line *m)
{
	char *tags, *dash, *w, *save = NULL;
	int n;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%d %d %u:%u %511s %511s %255s%n", &m->id, &m->parent, &m->major,
		   &m->minor, m->root, m->mountpoint, m->opts, &n) != 7)
		return -1;
	tags = line + n;
	dash = strstr(tags, " - ");
	if (!dash || sscanf(dash + 3, "%63s %255s %511s", m->fstype, m->source, m->sb) < 2)
		return -1;
	*dash = '\0';
	for (w = strtok_r(tags, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strncmp(w, "shared:", 7))
			m->shared = atoi(w + 7);
		else if (!strncmp(w, "master:", 7))
			m->master = atoi(w + 7);
		else if (!strcmp(w, "unbindable"))
			m->unbindable = 1;
	}
	unescape(m->root);
	unescape(m->mountpoint);
	return 0;
}

static int each(int (*fn)(struct mnt_line *, void *), void *arg)
{
	char line[4096];
	struct mnt_line m;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = 0;

	if (!f)
		fail_errno("open /proc/self/mountinfo");
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (parse(line, &m))
			fail("bad mountinfo line: %s", line);
		ret = fn(&m, arg);
	}
	fclose(f);
	return ret;
}

struct find {
	const char *mountpoint;
	int nth;
	struct mnt_line *out;
};

static int find_one(struct mnt_line *m, void *arg)
{
	struct find *f = arg;

	if (strcmp(m->mountpoint, f->mountpoint) || f->nth--)
		return 0;
	*f->out = *m;
	return 1;
}

int mnt_find(const char *mountpoint, int nth, struct mnt_line *out)
{
	struct find f = { mountpoint, nth, out };

	return each(find_one, &f) ? 0 : -1;
}

struct list {
	const char *prefix;
	struct mnt_line *out;
	int nr, max;
};

static int list_one(struct mnt_line *m, void *arg)
{
	struct list *l = arg;

	if (strncmp(m->mountpoint, l->prefix, strlen(l->prefix)))
		return 0;
	if (l->nr == l->max)
		fail("more than %d mounts below %s", l->max, l->prefix);
	l->out[l->nr++] = *m;
	return 0;
}

int mnt_list(const char *prefix, struct mnt_line *out, int max)
{
	struct list l = { prefix, out, 0, max };

	each(list_one, &l);
	return l.nr;
}

int mnt_id_of_path(const char *path)
{
	struct statx sx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) ||
	    !(sx.stx_mask & STATX_MNT_ID))
		return -1;
	return (int)sx.stx_mnt_id;
}

const char *mnt_abs(const char *name)
{
	static char buf[8][PATH_MAX];
	static int next;
	char *b = buf[next++ % 8];
	size_t n;

	if (!getcwd(b, PATH_MAX))
		fail_errno("getcwd");
	n = strlen(b);
	if (n + 1 + strlen(name) >= PATH_MAX)
		fail("path too long: %s/%s", b, name);
	b[n] = '/';
	strcpy(b + n + 1, name);
	return b;
}

const char *mnt_at(const char *base, const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int n;
	char *b = buf[n++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", base, name);
	return b;
}

void mnt_compare(const char *base, const struct mnt_line *a, int na,
		 const struct mnt_line *b, int nb)
{
	int i;

	if (na != nb)
		fail("%d mounts below %s, there were %d", nb, base, na);
	for (i = 0; i < na; i++)
		if (strcmp(a[i].mountpoint, b[i].mountpoint) || strcmp(a[i].root, b[i].root) ||
		    strcmp(a[i].opts, b[i].opts) || strcmp(a[i].fstype, b[i].fstype) ||
		    strcmp(a[i].source, b[i].source) || strcmp(a[i].sb, b[i].sb))
			fail("mount #%d: %s %s %s %s %s %s, was %s %s %s %s %s %s", i, b[i].mountpoint,
			     b[i].root, b[i].opts, b[i].fstype, b[i].source, b[i].sb, a[i].mountpoint,
			     a[i].root, a[i].opts, a[i].fstype, a[i].source, a[i].sb);
}

pid_t mnt_fork_ready(void (*fn)(int ready))
{
	int p[2];
	pid_t kid;
	char c;

	if (pipe(p))
		return -1;
	kid = fork();
	if (kid == 0) {
		close(p[0]);
		fn(p[1]);
		_exit(1);
	}
	close(p[1]);
	if (kid > 0 && read(p[0], &c, 1) != 1) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		kid = -1;
	}
	close(p[0]);
	return kid;
}

int mnt_stop_child(pid_t kid)
{
	int status;

	if (kill(kid, SIGTERM) || waitpid(kid, &status, 0) != kid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

void mnt_catch_term(void)
{
	signal(SIGTERM, on_term);
}

void mnt_until_term(void)
{
	sigset_t block, old;

	/* blocked while it is checked: a SIGTERM between check and sleep can't be lost */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigdelset(&old, SIGTERM);
	while (!term)
		sigsuspend(&old);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
}

int mnt_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int mnt_is_mount(const char *path)
{
	struct mnt_line m;

	return mnt_find(path, 0, &m) == 0;
}
