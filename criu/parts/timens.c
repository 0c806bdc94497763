// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces. The dump records CLOCK_MONOTONIC and CLOCK_BOOTTIME as
 * the task saw them when it was frozen; restore unshares a new time
 * namespace for its children and sets its offsets so that, inside, these
 * clocks go on from those values: the downtime is invisible.
 *
 * Offsets are always relative to the host's clocks, whatever namespace
 * the reader sits in; criu may itself run in a time namespace, so its own
 * offsets are added back.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/timens.h"
#include "timens.pb-c.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080	/* Linux 5.6 */
#endif

#define NSEC	1000000000LL

static TimensEntry *loaded;

static int parse_offsets(const char *buf, int64_t *mono, int64_t *boot)
{
	const char *p = buf;
	char name[32];
	long long sec, nsec;
	int n, seen = 0;

	*mono = *boot = 0;
	while (sscanf(p, "%31s %lld %lld%n", name, &sec, &nsec, &n) == 3) {
		if (!strcmp(name, "monotonic") || !strcmp(name, "1"))
			*mono = sec * NSEC + nsec, seen++;
		else if (!strcmp(name, "boottime") || !strcmp(name, "7"))
			*boot = sec * NSEC + nsec, seen++;
		p += n;
	}
	return seen == 2 ? 0 : -1;
}

static int read_offsets(const char *path, int64_t *mono, int64_t *boot)
{
	char *buf = read_file(-1, path, NULL);
	int ret;

	if (!buf) {
		if (errno == ENOENT) {	/* kernel without time namespaces */
			*mono = *boot = 0;
			return 0;
		}
		pr_perror("Can't read %s", path);
		return -1;
	}
	ret = parse_offsets(buf, mono, boot);
	if (ret)
		pr_err("Can't parse %s", path);
	free(buf);
	return ret;
}

static int same_ns(pid_t pid, const char *a, const char *b)
{
	char pa[64], pb[64];
	struct stat sa, sb;

	snprintf(pa, sizeof(pa), "/proc/%d/ns/%s", pid, a);
	snprintf(pb, sizeof(pb), "/proc/%d/ns/%s", pid, b);
	if (stat(pa, &sa) || stat(pb, &sb))
		return 1;
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/*
 * /proc/PID/timens_offsets shows the namespace of the task's future
 * children. When the task unshared one without forking yet, learn its own
 * namespace's offsets by joining it from a helper.
 */
static int task_offsets(pid_t pid, int64_t *mono, int64_t *boot)
{
	int64_t res[2];
	char path[64];
	int pfd[2], fd, status;
	pid_t child;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
	if (same_ns(pid, "time", "time_for_children"))
		return read_offsets(path, mono, boot);
	snprintf(path, sizeof(path), "/proc/%d/ns/time", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe(pfd)) {
		pr_perror("Task %d: can't open its time namespace", pid);
		return -1;
	}
	child = fork();
	if (child == 0) {
		res[0] = res[1] = 0;
		if (setns(fd, CLONE_NEWTIME) ||
		    read_offsets("/proc/self/timens_offsets", &res[0], &res[1]))
			_exit(1);
		_exit(write(pfd[1], res, sizeof(res)) != sizeof(res));
	}
	close(fd);
	close(pfd[1]);
	if (child < 0 || read(pfd[0], res, sizeof(res)) != sizeof(res)) {
		pr_perror("Task %d: can't learn its time namespace offsets", pid);
		close(pfd[0]);
		if (child > 0)
			waitpid(child, &status, 0);
		return -1;
	}
	close(pfd[0]);
	waitpid(child, &status, 0);
	*mono = res[0];
	*boot = res[1];
	return 0;
}

int timens_dump(struct dump_ctx *dc, pid_t pid)
{
	TimensEntry e = TIMENS_ENTRY__INIT;
	int64_t tmono, tboot, smono, sboot;

	/* the task's offsets are from the host clocks; ours too */
	if (task_offsets(pid, &tmono, &tboot) ||
	    read_offsets("/proc/self/timens_offsets", &smono, &sboot))
		return -1;
	e.has_host_monotonic_ns = e.has_host_boottime_ns = e.has_realtime_ns = 1;
	e.host_monotonic_ns = clock_ns(CLOCK_MONOTONIC) - smono;
	e.host_boottime_ns = clock_ns(CLOCK_BOOTTIME) - sboot;
	e.realtime_ns = clock_ns(CLOCK_REALTIME);
	e.monotonic_ns = e.host_monotonic_ns + tmono;
	e.boottime_ns = e.host_boottime_ns + tboot;
	pr_info("Task %d: monotonic %ld ns, boottime %ld ns inside", pid,
		e.monotonic_ns, e.boottime_ns);
	return img_write(dc->dirfd, IMG_TIMENS, 0, &e.base);
}

int timens_load(struct rst_ctx *rc)
{
	if (img_read(rc->dirfd, IMG_TIMENS, 0, (void **)&loaded, 0) < 0)
		return -1;
	if (loaded->monotonic_ns < 0 || loaded->boottime_ns < 0 ||
	    loaded->boottime_ns < loaded->monotonic_ns - NSEC) {
		pr_err("Image timens.img has impossible clocks (monotonic %ld, boottime %ld)",
		       loaded->monotonic_ns, loaded->boottime_ns);
		return -1;
	}
	return 0;
}

static void split(int64_t ns, long long *sec, long long *nsec)
{
	*sec = ns / NSEC;
	*nsec = ns % NSEC;
	if (*nsec < 0) {
		*nsec += NSEC;
		(*sec)--;
	}
}

int timens_prepare(struct rst_ctx *rc)
{
	int64_t smono, sboot, omono, oboot;
	long long ms, mn, bs, bn;
	char buf[128];
	int fd, len;

	if (read_offsets("/proc/self/timens_offsets", &smono, &sboot))
		return -1;
	if (unshare(CLONE_NEWTIME)) {
		pr_perror("Can't create a time namespace");
		return -1;
	}
	omono = loaded->monotonic_ns - (clock_ns(CLOCK_MONOTONIC) - smono);
	oboot = loaded->boottime_ns - (clock_ns(CLOCK_BOOTTIME) - sboot);
	split(omono, &ms, &mn);
	split(oboot, &bs, &bn);
	len = snprintf(buf, sizeof(buf), "monotonic %lld %lld\nboottime %lld %lld\n",
		       ms, mn, bs, bn);
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != len) {
		pr_perror("Can't set time namespace offsets (monotonic %lld.%09lld, boottime %lld.%09lld)",
			  ms, mn, bs, bn);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	pr_info("Time namespace offsets: monotonic %lld.%09lld boottime %lld.%09lld",
		ms, mn, bs, bn);
	return 0;
}
