// SPDX-License-Identifier: GPL-2.0
/*
 * The namespace's sysctls: every file under /proc/sys/net that criu, in
 * the namespace, can read and that its owner may write. What a network
 * namespace other than the first shows there is its own (the kernel
 * registers the global ones, net.core.netdev_max_backlog and the like, in
 * the initial namespace only, and shows net.core.[rw]mem_* read-only in
 * the others), so a restore that writes them back changes nothing outside.
 * /proc/sys/net answers for the namespace of the thread that looks, hence
 * all of this runs on a thread that entered it.
 *
 * The dump keeps only what a restore would not get anyway: a value that
 * differs from what a new namespace has (criu makes one and reads it, on
 * the dump's host), and for a link other than lo, from the namespace's own
 * conf/default/ and neigh/default/ (which the kernel copies into a new
 * link). Restore writes what was kept, in two phases: the namespace's own
 * values (with all/ and default/) before the links exist, each link's
 * once it does; reading the 600-odd files of a namespace costs more
 * (10 ms) than everything else its restore does.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/ns-net-sysctl.h"

#define SYSCTL_NET	"/proc/sys/net"
#define MAX_DEPTH	8

struct walk {
	const struct net_who *w;
	NetSysctl **v;
	size_t nr, cap;
};

static void chomp(char *v)
{
	size_t n = strlen(v);

	if (n && v[n - 1] == '\n')
		v[n - 1] = '\0';
}

static int add(struct walk *wk, const char *path, char *value)
{
	NetSysctl *s, **n;

	if (wk->nr == wk->cap) {
		wk->cap = wk->cap ? 2 * wk->cap : 512;
		n = xrealloc(wk->v, wk->cap * sizeof(*n));
		if (!n)
			return -1;
		wk->v = n;
	}
	s = xzalloc(sizeof(*s));
	if (!s)
		return -1;
	net_sysctl__init(s);
	s->path = xstrdup(path);
	s->value = value;
	if (!s->path) {
		free(s);
		return -1;
	}
	wk->v[wk->nr++] = s;
	return 0;
}

static int walk_dir(struct walk *wk, int dfd, char *path, size_t len, int depth);

static int walk_entry(struct walk *wk, int dfd, const char *name, char *path, size_t len,
		      int depth)
{
	struct stat st;
	char *value;
	int fd, ret;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		ret = walk_dir(wk, fd, path, len, depth + 1);
		return ret;
	}
	/* write-only triggers (route/flush) and what is read-only here are no state */
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IRUSR | S_IWUSR)) != (S_IRUSR | S_IWUSR))
		return 0;
	value = read_file(dfd, name, NULL);
	if (!value) {
		/* stable_secret answers EIO until it is set: nothing to keep */
		pr_debug(NET_FMT ": sysctl net/%s unreadable: %s", NET_ARGS(wk->w), path,
			 strerror(errno));
		return 0;
	}
	chomp(value);
	if (add(wk, path, value)) {
		free(value);
		return -1;
	}
	return 0;
}

/* @path holds the directory's path below /proc/sys/net (@len bytes); @dfd is closed */
static int walk_dir(struct walk *wk, int dfd, char *path, size_t len, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		close(dfd);
		return -1;
	}
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || depth > MAX_DEPTH)
			continue;
		if (len + strlen(de->d_name) + 2 >= PATH_MAX)
			continue;
		snprintf(path + len, PATH_MAX - len, "%s%s", len ? "/" : "", de->d_name);
		ret = walk_entry(wk, dirfd(d), de->d_name, path, strlen(path), depth);
		path[len] = '\0';
	}
	closedir(d);
	return ret;
}

static void free_one(NetSysctl *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->value);
	free(s);
}

static void free_all(NetSysctl **v, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free_one(v[i]);
	free(v);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((*(NetSysctl *const *)a)->path, (*(NetSysctl *const *)b)->path);
}

/* Every sysctl of the namespace this thread is in, sorted by path. */
static int walk_here(struct walk *wk)
{
	char path[PATH_MAX] = "";
	int fd;

	fd = open(SYSCTL_NET, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror(NET_FMT ": can't open %s", NET_ARGS(wk->w), SYSCTL_NET);
		return -1;
	}
	if (walk_dir(wk, fd, path, 0, 0)) {
		pr_err(NET_FMT ": can't read the sysctls", NET_ARGS(wk->w));
		return -1;
	}
	qsort(wk->v, wk->nr, sizeof(*wk->v), cmp_path);
	return 0;
}

static const char *value_at(const struct walk *wk, const char *path)
{
	NetSysctl key = { .path = (char *)path }, *k = &key, **f;

	f = bsearch(&k, wk->v, wk->nr, sizeof(*wk->v), cmp_path);
	return f ? (*f)->value : NULL;
}

/* A new namespace's values, on this host: made, read, left (it goes with the fd). */
static int walk_fresh(struct walk *ref)
{
	int back, ret;

	back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (back < 0 || unshare(CLONE_NEWNET)) {
		pr_perror(NET_FMT ": can't make a new namespace to compare sysctls with",
			  NET_ARGS(ref->w));
		if (back >= 0)
			close(back);
		return -1;
	}
	ret = walk_here(ref);
	netns_leave(back);
	return ret;
}

static int of_a_link(const char *path);

/*
 * What a link other than lo starts with: its namespace's default/ value;
 * for neigh/, which has no default/ outside the first namespace, what a
 * new namespace's lo got from the same global table.
 */
static const char *link_default(const struct walk *tree, const struct walk *ref,
				const char *path)
{
	char dflt[PATH_MAX];
	const char *dev = strchr(strchr(path, '/') + 1, '/') + 1, *rest = strchr(dev, '/');
	const char *v;

	if (!rest || !strncmp(dev, "lo/", 3))
		return NULL;
	snprintf(dflt, sizeof(dflt), "%.*sdefault%s", (int)(dev - path), path, rest);
	v = value_at(tree, dflt);
	if (v)
		return v;
	snprintf(dflt, sizeof(dflt), "%.*slo%s", (int)(dev - path), path, rest);
	return value_at(ref, dflt);
}

int net_dump_sysctls(const struct net_who *w, NetnsEntry *e)
{
	struct walk tree = { .w = w }, ref = { .w = w };
	char *keep = NULL;
	const char *want;
	size_t i;
	int ret = -1;

	if (walk_here(&tree) || walk_fresh(&ref))
		goto out;
	e->sysctls = xzalloc(tree.nr * sizeof(*e->sysctls) + 1);
	if (!e->sysctls)
		goto out;
	keep = xzalloc(tree.nr + 1);
	if (!keep)
		goto out;
	for (i = 0; i < tree.nr; i++) {
		want = of_a_link(tree.v[i]->path) ? link_default(&tree, &ref, tree.v[i]->path) :
							 NULL;
		if (!want)
			want = value_at(&ref, tree.v[i]->path);
		keep[i] = !want || strcmp(want, tree.v[i]->value);
	}
	/* moved only now: the lookups above search the whole sorted array */
	for (i = 0; i < tree.nr; i++)
		if (keep[i]) {
			e->sysctls[e->n_sysctls++] = tree.v[i];
			tree.v[i] = NULL;
		}
	pr_info(NET_FMT ": %zu sysctls, %zu of them to restore", NET_ARGS(w), tree.nr,
		e->n_sysctls);
	ret = 0;
out:
	free(keep);
	free_all(tree.v, tree.nr);
	free_all(ref.v, ref.nr);
	return ret;
}

/* "ipv4/conf/eth0/...", "ipv6/neigh/eth0/...": a link's; all/ and default/ are not */
static int of_a_link(const char *path)
{
	const char *p = strchr(path, '/'), *dev;

	if (!p || (strncmp(p + 1, "conf/", 5) && strncmp(p + 1, "neigh/", 6)))
		return 0;
	dev = strchr(p + 1, '/') + 1;
	return strncmp(dev, "all/", 4) && strncmp(dev, "default/", 8);
}

static int write_value(const struct net_who *w, const char *path, const char *want)
{
	char full[PATH_MAX];
	int fd;

	snprintf(full, sizeof(full), SYSCTL_NET "/%s", path);
	fd = open(full, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_full(fd, want, strlen(want))) {
		pr_perror(NET_FMT ": can't set sysctl net/%s to '%s'", NET_ARGS(w), path,
			  want);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	pr_debug(NET_FMT ": sysctl net/%s = %s", NET_ARGS(w), path, want);
	return 0;
}

int net_restore_sysctls(const struct net_who *w, const NetnsEntry *e,
			enum net_sysctl_phase phase)
{
	size_t i;

	for (i = 0; i < e->n_sysctls; i++) {
		if (of_a_link(e->sysctls[i]->path) != (phase == NET_SYSCTL_LINKS))
			continue;
		if (write_value(w, e->sysctls[i]->path, e->sysctls[i]->value))
			return -1;
	}
	return 0;
}

/*
 * Duplicate address detection would leave every IPv6 address tentative
 * (unusable) for a second or two after the tree runs again: it is off
 * (all/ and every link) while the addresses come back and the links go
 * up, and then set back. @saved: "NAME VALUE\n" lines.
 */
int net_dad_off(const struct net_who *w, char **saved)
{
	char path[PATH_MAX], *v, *buf = NULL;
	size_t len = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	*saved = NULL;
	d = opendir(SYSCTL_NET "/ipv6/conf");
	if (!d)
		return errno == ENOENT ? 0 : -1;	/* no IPv6 */
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "default"))
			continue;
		snprintf(path, sizeof(path), "ipv6/conf/%s/accept_dad", de->d_name);
		v = read_file(dirfd(d), path + 10, NULL);
		if (!v)
			continue;
		chomp(v);
		buf = xrealloc(buf, len + strlen(path) + strlen(v) + 3);
		if (!buf) {
			ret = -1;
		} else {
			len += sprintf(buf + len, "%s %s\n", path, v);
			ret = write_value(w, path, "0");
		}
		free(v);
	}
	closedir(d);
	*saved = buf;
	return ret;
}

int net_dad_restore(const struct net_who *w, char *saved)
{
	char *line, *next, *sp;
	int ret = 0;

	for (line = saved; line && *line && !ret; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		sp = strchr(line, ' ');
		*sp = '\0';
		ret = write_value(w, line, sp + 1);
	}
	free(saved);
	return ret;
}

void net_free_sysctls(NetnsEntry *e)
{
	free_all(e->sysctls, e->n_sysctls);
	e->sysctls = NULL;
	e->n_sysctls = 0;
}
