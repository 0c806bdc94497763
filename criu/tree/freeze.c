// SPDX-License-Identifier: GPL-2.0
/*
 * --freeze-cgroup PATH: the tree is frozen by its cgroup's freezer before
 * criu seizes it (v2: cgroup.freeze, waiting for cgroup.events to say
 * "frozen 1"; v1: freezer.state until FROZEN). A frozen task can neither
 * fork nor clone, so every thread is seized and interrupted in one pass,
 * without waiting for each stop in turn; the cgroup is thawed then (a v1
 * frozen task reaches its interrupt stop only once thawed), and the stops
 * are collected. The threads frozen in the cgroup and below are listed
 * once: a task of the tree outside it is seized the ordinary way.
 *
 * The cgroup is left as it was found: a cgroup that was frozen before
 * (CRI-O pauses a container first) is frozen again while criu still holds
 * the tree, so that tasks left running (--leave-running) stay frozen; one
 * that was not is thawed, also after a failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/log.h"
#include "core/util.h"
#include "tree/freeze.h"

#define FREEZE_TIMEOUT_MS	10000	/* CRIU's --timeout default */
#define MAX_FROZEN_DIRS		10000

static struct {
	const char *path;
	int fd;
	int v2;
	int was_frozen;		/* before criu came */
	int frozen;		/* frozen by criu and not thawed yet */
	pid_t *tids;		/* in the cgroup and below, sorted */
	int nr;
	int dirs;
} fz = { .fd = -1 };

static int write_state(int frozen)
{
	if (fz.v2 ? cgfs_write(fz.fd, "cgroup.freeze", frozen ? "1" : "0") :
		    cgfs_write(fz.fd, "freezer.state", frozen ? "FROZEN" : "THAWED")) {
		pr_perror("Can't %s cgroup %s", frozen ? "freeze" : "thaw", fz.path);
		return -1;
	}
	return 0;
}

/* 1 frozen, 0 not (yet), -1 error. */
static int is_frozen(void)
{
	char *s = cgfs_read(fz.fd, fz.v2 ? "cgroup.events" : "freezer.state");
	int ret;

	if (!s) {
		pr_perror("Can't read the freezer state of cgroup %s", fz.path);
		return -1;
	}
	ret = fz.v2 ? strstr(s, "frozen 1") != NULL : !strcmp(s, "FROZEN");
	free(s);
	return ret;
}

static int self_frozen(void)
{
	char *s = cgfs_read(fz.fd, fz.v2 ? "cgroup.freeze" : "freezer.self_freezing");
	int ret = s && !strcmp(s, "1");

	if (!s)
		pr_perror("Can't read the freezer state of cgroup %s", fz.path);
	free(s);
	return s ? ret : -1;
}

static int wait_frozen(void)
{
	struct timespec tick = { 0, 100 * 1000 };
	int64_t deadline = clock_ns(CLOCK_MONOTONIC) + FREEZE_TIMEOUT_MS * 1000000LL;
	int ret;

	while (!(ret = is_frozen())) {
		if (clock_ns(CLOCK_MONOTONIC) > deadline) {
			pr_err("Cgroup %s is not frozen after %d s (a task in an uninterruptible "
			       "sleep?)", fz.path, FREEZE_TIMEOUT_MS / 1000);
			return -1;
		}
		nanosleep(&tick, NULL);
		if (tick.tv_nsec < 10 * 1000 * 1000)
			tick.tv_nsec *= 2;
	}
	return ret < 0 ? -1 : 0;
}

static int add_tids(int dirfd, const char *what)
{
	char *buf = cgfs_read(dirfd, fz.v2 ? "cgroup.threads" : "tasks"), *p, *end;
	pid_t *n;
	long v;

	if (!buf) {
		pr_perror("Can't list the threads of cgroup %s", what);
		return -1;
	}
	for (p = buf; *p; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		n = xpush(fz.tids, fz.nr);
		if (!n) {
			free(buf);
			return -1;
		}
		*n = v;
	}
	free(buf);
	return 0;
}

/* The threads of @dirfd's cgroup and of every one below it. */
static int list_tids(int dirfd, const char *what)
{
	struct dirent *e;
	int fd, ret;
	DIR *dir;

	if (++fz.dirs > MAX_FROZEN_DIRS) {
		pr_err("Cgroup %s has more than %d cgroups below it", fz.path, MAX_FROZEN_DIRS);
		return -1;
	}
	if (add_tids(dirfd, what))
		return -1;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		pr_perror("Can't list cgroup %s", what);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (ret = 0; !ret && (e = readdir(dir));) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = fd < 0 ? -1 : list_tids(fd, e->d_name);
		if (fd >= 0)
			close(fd);
	}
	closedir(dir);
	return ret;
}

static int cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a - *(const pid_t *)b;
}

int freezer_freeze(const char *path)
{
	fz.path = path;
	fz.fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fz.fd < 0) {
		pr_perror("Can't open cgroup %s (--freeze-cgroup)", path);
		return -1;
	}
	fz.v2 = !faccessat(fz.fd, "cgroup.freeze", F_OK, 0);
	if (!fz.v2 && faccessat(fz.fd, "freezer.state", F_OK, 0)) {
		pr_err("%s is neither a v2 cgroup nor one of the v1 freezer (--freeze-cgroup)",
		       path);
		return -1;
	}
	fz.was_frozen = self_frozen();
	if (fz.was_frozen < 0)
		return -1;
	if (!fz.was_frozen && write_state(1))
		return -1;
	fz.frozen = 1;
	if (wait_frozen() || list_tids(fz.fd, path))
		return -1;
	qsort(fz.tids, fz.nr, sizeof(*fz.tids), cmp_pid);
	pr_info("Froze cgroup %s (%s, %d threads%s)", path, fz.v2 ? "v2" : "v1", fz.nr,
		fz.was_frozen ? ", frozen before" : "");
	return 0;
}

int freezer_holds(pid_t tid)
{
	return fz.frozen && fz.nr && bsearch(&tid, fz.tids, fz.nr, sizeof(*fz.tids), cmp_pid);
}

int freezer_thaw(void)
{
	if (!fz.frozen)
		return 0;
	fz.frozen = 0;
	return write_state(0);
}

int freezer_end(void)
{
	int ret = 0;

	if (fz.fd < 0)
		return 0;
	if (fz.was_frozen && !fz.frozen)
		ret = write_state(1) || wait_frozen();
	else if (!fz.was_frozen && fz.frozen)
		ret = write_state(0);
	fz.frozen = fz.was_frozen;
	return ret ? -1 : 0;
}

void freezer_release(void)
{
	if (fz.fd >= 0)
		close(fz.fd);
	free(fz.tids);
	memset(&fz, 0, sizeof(fz));
	fz.fd = -1;
}
