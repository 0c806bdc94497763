// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task state criu must refuse to dump, one per run (test_taskstate.py
 * picks it with an argument):
 *   userfaultfd  a userfaultfd with an area registered with it: the faults
 *                of that area are served by whoever reads the fd, which no
 *                restore can hand back;
 *   uffd_area    the same area, its userfaultfd held only by a process
 *                outside the tree (a grandchild whose parent exited: the
 *                runner, a subreaper, adopts it), the task's own fd closed;
 *   hugetlb      a MAP_SHARED MAP_HUGETLB area (skipped where the machine has
 *                no huge pages: /proc/sys/vm/nr_hugepages is 0); a private
 *                one is saved (mem_hugetlb);
 *   ptraced      a child of ours that we trace (PTRACE_SEIZE).
 * Whatever the dump did, the state is still there afterwards.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtm.h"

#define HUGE_LEN	(2UL << 20)

static void *area;
static int uffd = -1;
static pid_t kid;

static void hold_userfaultfd(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		skip("no userfaultfd: %m");
	if (ioctl(uffd, UFFDIO_API, &api))
		fail_errno("UFFDIO_API");
	area = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		fail_errno("mmap");
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)area;
	reg.range.len = 4 * page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		fail_errno("UFFDIO_REGISTER");
}

static void check_userfaultfd(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_range r = { (unsigned long)area, 4 * page };

	/* still registered: unregistering works only for a registered range */
	if (ioctl(uffd, UFFDIO_UNREGISTER, &r))
		fail_errno("UFFDIO_UNREGISTER after the dump");
}

/* Hands the userfaultfd to a process outside the tree and closes ours. */
static void give_userfaultfd_away(void)
{
	int p[2], st;
	pid_t mid;

	if (pipe(p))
		fail_errno("pipe");
	mid = fork();
	if (mid < 0)
		fail_errno("fork");
	if (!mid) {
		pid_t holder = fork();

		if (holder == 0) {
			close(p[0]);
			close(p[1]);
			for (;;)
				pause();
		}
		_exit(holder < 0 || write(p[1], &holder, sizeof(holder)) != sizeof(holder));
	}
	if (waitpid(mid, &st, 0) != mid || st || read(p[0], &kid, sizeof(kid)) != sizeof(kid))
		fail("no holder of the userfaultfd outside the tree");
	close(p[0]);
	close(p[1]);
	close(uffd);
	uffd = -1;
}

static void check_area_registered(void)
{
	char path[64], buf[1 << 16], key[32], *p, *flags;

	snprintf(path, sizeof(path), "/proc/self/smaps");
	if (test_read_file(path, buf, sizeof(buf)) <= 0)
		fail_errno("read smaps");
	snprintf(key, sizeof(key), "%lx-", (unsigned long)area);
	p = strstr(buf, key);
	flags = p ? strstr(p, "VmFlags:") : NULL;
	if (!flags || !strstr(strtok(flags, "\n"), " um"))
		fail("the area is no longer registered with the userfaultfd");
	kill(kid, SIGKILL);
	kid = 0;
}

static void hold_hugetlb(void)
{
	char buf[32];

	if (test_read_file("/proc/sys/vm/nr_hugepages", buf, sizeof(buf)) <= 0 ||
	    atol(buf) == 0)
		skip("no huge pages reserved (vm.nr_hugepages is 0)");
	area = mmap(NULL, HUGE_LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (area == MAP_FAILED)
		skip("MAP_HUGETLB: %m");
	memset(area, 0x6b, HUGE_LEN);
}

static void hold_ptraced(void)
{
	kid = fork();
	if (kid < 0)
		fail_errno("fork");
	if (!kid) {
		for (;;)
			pause();
	}
	if (ptrace(PTRACE_SEIZE, kid, 0, 0))
		fail_errno("PTRACE_SEIZE %d", kid);
}

static void check_ptraced(void)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", kid);
	if (test_read_file(path, buf, sizeof(buf)) <= 0)
		fail_errno("read %s", path);
	p = strstr(buf, "TracerPid:");
	if (!p || atoi(p + 10) != getpid())
		fail("child %d is no longer traced by us", kid);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[argc - 1] : "";

	test_init(argc, argv);
	if (!strcmp(what, "userfaultfd")) {
		hold_userfaultfd();
	} else if (!strcmp(what, "uffd_area")) {
		hold_userfaultfd();
		give_userfaultfd_away();
	}
	else if (!strcmp(what, "hugetlb"))
		hold_hugetlb();
	else if (!strcmp(what, "ptraced"))
		hold_ptraced();
	else
		fail("what to hold? %s", what);

	test_ready();
	test_waitsig();

	if (uffd >= 0)
		check_userfaultfd();
	else if (!strcmp(what, "uffd_area"))
		check_area_registered();
	if (kid)
		check_ptraced();
	if (!strcmp(what, "hugetlb") && ((char *)area)[HUGE_LEN - 1] != 0x6b)
		fail("the hugetlb area lost its data");
	pass();
}
