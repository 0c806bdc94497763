// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task state criu must refuse to dump, one per run (test_taskstate.py
 * picks it with an argument):
 *   userfaultfd  a userfaultfd with an area registered with it: the faults
 *                of that area are served by whoever reads the fd, which no
 *                restore can hand back;
 *   hugetlb      a MAP_HUGETLB area (skipped where the machine has no huge
 *                pages: /proc/sys/vm/nr_hugepages is 0);
 *   ptraced      a child of ours that we trace (PTRACE_SEIZE).
 * Whatever the dump did, the state is still there afterwards.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
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

static void hold_hugetlb(void)
{
	char buf[32];

	if (test_read_file("/proc/sys/vm/nr_hugepages", buf, sizeof(buf)) <= 0 ||
	    atol(buf) == 0)
		skip("no huge pages reserved (vm.nr_hugepages is 0)");
	area = mmap(NULL, HUGE_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
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
	if (!strcmp(what, "userfaultfd"))
		hold_userfaultfd();
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
	if (kid)
		check_ptraced();
	if (area && uffd < 0 && ((char *)area)[HUGE_LEN - 1] != 0x6b)
		fail("the hugetlb area lost its data");
	pass();
}
