// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench-ns: what making a container's namespaces costs on this machine,
 * the floor under any restore of a container (issue 12 aims at 20 ms).
 *
 *	bench-ns ROOTFS [RUNS]
 *
 * RUNS rounds, each taking every measurement once, so that every row sees
 * the same machine (a shared one is noisy; the namespaces earlier rows
 * dropped are cleaned up by the kernel meanwhile); each row gives the
 * minimum, median and 90th percentile:
 *  - unshare(CLONE_NEWxxx) of each kind alone, and of the container's set
 *    (pid, mount, network, ipc, uts, cgroup) at once: the system call
 *    only, timed in a fresh child each run (the fork is not counted);
 *  - unshare(CLONE_NEWNET) back to back in one process: each one drops
 *    the previous namespace, whose cleanup then runs beside the next
 *    creation (the kernel's cleanup_net);
 *  - clone() with the container's flags, in the parent, until it returns;
 *  - the mounts of runc's default spec, the device nodes, pivot_root and
 *    the masked and read-only paths (ctr's rootfs_setup), in a child that
 *    has its namespaces already; and the same without the cgroup mounts
 *    (ten of them on a hybrid host);
 *  - a whole start by ctr's library: clone to the exec of /bin/true in
 *    the container, and the same with its teardown (wait + cleanup);
 *  - `ctr run ROOTFS /bin/true`: the process, from spawn to exit.
 *
 * Run it as root, under a child subreaper (scripts/bench-ns.sh does).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctr.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080	/* Linux 5.6 */
#endif

#define CTR_FLAGS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | \
		   CLONE_NEWUTS | CLONE_NEWCGROUP)

extern char **environ;

static const char *rootfs;
static char ctr_path[4096];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, long long *ns, int n)
{
	qsort(ns, n, sizeof(*ns), cmp_ll);
	printf("%-52s %5d %9.1f %9.1f %9.1f\n", what, n, ns[0] / 1000.0, ns[n / 2] / 1000.0,
	       ns[(n * 9) / 10] / 1000.0);
	fflush(stdout);
}

/* A measurement made in a fresh child: it sends its nanoseconds back. */
static long long in_child(long long (*fn)(void *), void *arg)
{
	long long ns = -1;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		ns = fn(arg);
		if (write(p[1], &ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ns;
}

static long long do_unshare(void *arg)
{
	int flags = *(int *)arg;
	long long t0 = now_ns();

	if (unshare(flags))
		return -1;
	return now_ns() - t0;
}

/* back to back in one process: each drops the one before */
static long long net_churn(void *arg)
{
	long long *ns = arg, t0;
	int i, runs = (int)ns[0];

	for (i = 0; i < runs; i++) {
		t0 = now_ns();
		if (unshare(CLONE_NEWNET))
			return -1;
		ns[i] = now_ns() - t0;
	}
	return 0;
}

static long long m_clone(void *arg)
{
	long long t0 = now_ns(), ns;
	int status;
	pid_t pid;

	pid = syscall(SYS_clone, CTR_FLAGS | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0)
		_exit(0);
	ns = now_ns() - t0;
	if (pid < 0)
		return -1;
	waitpid(pid, &status, 0);
	return ns;
}

static void config(struct ctr_config *c, char **argv)
{
	memset(c, 0, sizeof(*c));
	c->name = "bench-ns";
	snprintf(c->rootfs, sizeof(c->rootfs), "%s", rootfs);
	c->argv = argv;
	c->detach = true;	/* stdio on the container's /dev/null */
	c->cg_controllers = "cpu,memory,pids,freezer";
	c->propagation = MS_SLAVE;
}

/* rootfs_setup in a child that made its namespaces (but pid) already */
static long long do_mounts(void *arg)
{
	static struct ctr_host h;
	struct ctr_config c;
	long long t0;

	config(&c, NULL);
	c.cgfs = *(enum ctr_cgfs *)arg;
	if (cg_discover(&h, c.cg_controllers) ||
	    unshare(CTR_FLAGS & ~CLONE_NEWPID))
		return -1;
	t0 = now_ns();
	if (rootfs_setup(&c, &h)) {
		fprintf(stderr, "bench-ns: %s\n", ctr_errmsg());
		return -1;
	}
	return now_ns() - t0;
}

/* a container of /bin/true by the library: to its exec, or with its end */
static long long m_start(void *arg)
{
	static char *argv[] = { "/bin/true", NULL };
	static struct ctr_host h;
	struct ctr_config c;
	long long t0, ns;
	int status;

	config(&c, argv);
	memset(&h, 0, sizeof(h));
	t0 = now_ns();
	if (ctr_start(&c, &h)) {
		fprintf(stderr, "bench-ns: ctr_start: %s\n", ctr_errmsg());
		return -1;
	}
	ns = now_ns() - t0;
	waitpid(h.pid, &status, 0);
	h.start = 0;
	if (teardown(&h, 5000))
		return -1;
	return *(int *)arg ? now_ns() - t0 : ns;
}

static long long m_ctr_run(void *arg)
{
	char *argv[] = { ctr_path, "run", (char *)rootfs, "/bin/true", NULL };
	long long t0 = now_ns();
	int status = -1;
	pid_t pid;

	if (posix_spawn(&pid, ctr_path, NULL, NULL, argv, environ) ||
	    waitpid(pid, &status, 0) < 0 || status) {
		fprintf(stderr, "bench-ns: %s run failed (status %#x)\n", ctr_path, status);
		return -1;
	}
	return now_ns() - t0;
}

static long long m_unshare(void *arg)
{
	return in_child(do_unshare, arg);
}

static long long m_mounts(void *arg)
{
	return in_child(do_mounts, arg);
}

struct measure {
	const char *what;
	long long (*fn)(void *);
	void *arg;
};

static int flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWCGROUP,
	CLONE_NEWPID, CLONE_NEWUSER, CLONE_NEWTIME, CTR_FLAGS,
};
static enum ctr_cgfs cgfs[] = { CGFS_AUTO, CGFS_NONE };
static int with_end[] = { 0, 1 };

static const struct measure measures[] = {
	{ "unshare(CLONE_NEWNS)", m_unshare, &flags[0] },
	{ "unshare(CLONE_NEWUTS)", m_unshare, &flags[1] },
	{ "unshare(CLONE_NEWIPC)", m_unshare, &flags[2] },
	{ "unshare(CLONE_NEWNET)", m_unshare, &flags[3] },
	{ "unshare(CLONE_NEWCGROUP)", m_unshare, &flags[4] },
	{ "unshare(CLONE_NEWPID)", m_unshare, &flags[5] },
	{ "unshare(CLONE_NEWUSER)", m_unshare, &flags[6] },
	{ "unshare(CLONE_NEWTIME)", m_unshare, &flags[7] },
	{ "unshare(pid|mnt|net|ipc|uts|cgroup)", m_unshare, &flags[8] },
	{ "clone(pid|mnt|net|ipc|uts|cgroup), in the parent", m_clone, NULL },
	{ "mounts, /dev nodes, pivot_root, masks (rootfs_setup)", m_mounts, &cgfs[0] },
	{ "  the same without /sys/fs/cgroup", m_mounts, &cgfs[1] },
	{ "container start: clone to exec (ctr library)", m_start, &with_end[0] },
	{ "container start + /bin/true + teardown", m_start, &with_end[1] },
	{ "`ctr run ROOTFS /bin/true` (spawn to exit)", m_ctr_run, NULL },
};

#define NR_MEASURES (sizeof(measures) / sizeof(measures[0]))

static int rounds(int runs)
{
	long long *ns = calloc(NR_MEASURES * runs, sizeof(*ns));
	unsigned int m;
	int i;

	if (!ns)
		return -1;
	for (i = 0; i < runs; i++)
		for (m = 0; m < NR_MEASURES; m++) {
			ns[m * runs + i] = measures[m].fn(measures[m].arg);
			if (ns[m * runs + i] < 0) {
				fprintf(stderr, "bench-ns: %s failed: %s\n", measures[m].what,
					strerror(errno));
				free(ns);
				return -1;
			}
		}
	for (m = 0; m < NR_MEASURES; m++)
		report(measures[m].what, ns + m * runs, runs);
	free(ns);
	return 0;
}

/* filled by a child: the namespaces it leaves behind are its own */
static int churn(int runs)
{
	long long *ns = mmap(NULL, runs * sizeof(*ns), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (ns == MAP_FAILED)
		return -1;
	ns[0] = runs;
	if (in_child(net_churn, ns) < 0) {
		perror("bench-ns: unshare(CLONE_NEWNET) back to back");
		munmap(ns, runs * sizeof(*ns));
		return -1;
	}
	report("unshare(CLONE_NEWNET) back to back, one process", ns, runs);
	munmap(ns, runs * sizeof(*ns));
	return 0;
}

int main(int argc, char **argv)
{
	char *slash;
	int runs;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-ns ROOTFS [RUNS]\n");
		return 2;
	}
	rootfs = argv[1];
	runs = argc > 2 ? atoi(argv[2]) : 100;
	if (runs < 1)
		runs = 1;
	/* ctr is built beside us */
	if (!realpath("/proc/self/exe", ctr_path))
		return 1;
	slash = strrchr(ctr_path, '/');
	snprintf(slash + 1, sizeof(ctr_path) - (slash + 1 - ctr_path), "ctr");
	printf("%-52s %5s %9s %9s %9s\n", "what (microseconds)", "runs", "min", "median",
	       "p90");
	if (rounds(runs) || churn(runs))
		return 1;
	return 0;
}
