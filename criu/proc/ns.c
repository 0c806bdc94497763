// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/ns/NAME: which namespace a task (or thread) is in;
 * /proc/PID/timens_offsets: how far its time namespace's clocks are ahead.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080	/* Linux 5.6 */
#endif

#define NSEC_PER_SEC	1000000000LL
#define OFFSET_SEC_MAX	(LLONG_MAX / NSEC_PER_SEC - 1)

uint64_t proc_parse_ns_link(const char *link)
{
	unsigned long long id;
	const char *p;
	char *end;

	p = strstr(link, ":[");
	if (!p || (errno = 0, id = strtoull(p + 2, &end, 10), errno) || *end != ']' ||
	    end[1])
		return 0;
	return id;
}

uint64_t proc_ns_id(pid_t pid, pid_t tid, const char *name)
{
	char path[96], link[128];
	uint64_t id;
	ssize_t n;

	if (!pid)
		snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	else if (tid && tid != pid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/%s", pid, tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, name);
	/*
	 * "NAME:[ID]", ID the inode number of the namespace on nsfs, the one
	 * stat() of the link would give: reading the link costs less than
	 * half as much as following it (1.9 against 4.6 us here).
	 */
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		pr_perror("Can't read %s", path);
		return 0;
	}
	link[n] = '\0';
	id = proc_parse_ns_link(link);
	if (!id) {
		pr_err("Can't parse %s: '%s'", path, link);
		return 0;
	}
	return id;
}

/* "monotonic SEC NSEC\nboottime SEC NSEC\n" (or clock ids 1 and 7). */
int proc_parse_timens_offsets(const char *buf, int64_t *mono, int64_t *boot)
{
	const char *p = buf;
	long long sec, nsec;
	char name[32];
	int n, seen = 0;

	*mono = *boot = 0;
	while (sscanf(p, "%31s %lld %lld%n", name, &sec, &nsec, &n) == 3) {
		/*
		 * The kernel keeps offsets within KTIME_SEC_MAX / 2 seconds and
		 * nsec within a second; anything else is no offsets file, and
		 * would overflow the nanoseconds.
		 */
		if (nsec < 0 || nsec >= NSEC_PER_SEC || sec > OFFSET_SEC_MAX ||
		    sec < -OFFSET_SEC_MAX)
			return -1;
		if (!strcmp(name, "monotonic") || !strcmp(name, "1"))
			*mono = sec * NSEC_PER_SEC + nsec, seen |= 1;
		else if (!strcmp(name, "boottime") || !strcmp(name, "7"))
			*boot = sec * NSEC_PER_SEC + nsec, seen |= 2;
		p += n;
	}
	return seen == 3 ? 0 : -1;
}

static int read_timens_offsets(const char *path, int64_t *mono, int64_t *boot)
{
	/* a kernel without time namespaces: no offsets */
	if (access("/proc/self/ns/time", F_OK) && errno == ENOENT)
		return *mono = *boot = 0;
	return proc_read(path, proc_parse_timens_offsets, mono, boot);
}

/*
 * /proc/PID/timens_offsets shows the namespace of the task's future
 * children: its own, unless it unshared one (and never entered it). Then a
 * forked helper joins the task's own namespace and reads its offsets there
 * (a fork is single-threaded, as setns() into a time namespace wants).
 */
int proc_timens_offsets(pid_t pid, int64_t *mono, int64_t *boot)
{
	char path[64];
	int64_t res[2];
	int pfd[2], fd, status;
	pid_t child;

	if (proc_ns_id(pid, 0, "time") == proc_ns_id(pid, 0, "time_for_children")) {
		if (pid)
			snprintf(path, sizeof(path), "/proc/%d/timens_offsets", pid);
		else
			snprintf(path, sizeof(path), "/proc/self/timens_offsets");
		return read_timens_offsets(path, mono, boot);
	}
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/time", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/time");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe2(pfd, O_CLOEXEC)) {
		pr_perror("Can't open %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	child = fork();
	if (child == 0) {
		if (setns(fd, CLONE_NEWTIME) ||
		    read_timens_offsets("/proc/self/timens_offsets", &res[0], &res[1]))
			_exit(1);
		_exit(write(pfd[1], res, sizeof(res)) != sizeof(res));
	}
	close(fd);
	close(pfd[1]);
	if (child < 0 || read(pfd[0], res, sizeof(res)) != sizeof(res)) {
		pr_perror("Can't learn the offsets of %s", path);
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
