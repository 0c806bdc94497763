// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open file descriptions shared by a parent and its child (inherited over
 * fork(), at other fd numbers in the child): a regular file, an eventfd
 * and a timerfd. After restore they are still one description each: the
 * parent moves the file's offset and the child sees it, the child writes
 * and the parent sees the offset move; the child drains the eventfd and
 * the parent finds it empty; the child re-arms the timer and the parent
 * sees the new time. An fd the child opened on the file itself keeps its
 * own offset, and the shared timer kept its remaining time: it runs on the
 * tree's clocks, which did not move over the downtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "zdtm.h"
#include "files_lib.h"

#define NS		1000000000LL
#define TIMER_S		3600
#define CHILD_FILE	77
#define CHILD_EFD	78
#define CHILD_TFD	79

static int file, efd, tfd, own;
static char name[64];

static long long remaining(int fd)
{
	struct itimerspec its;

	if (timerfd_gettime(fd, &its))
		return -1;
	return its.it_value.tv_sec * NS + its.it_value.tv_nsec;
}

/* The child keeps the shared ones at other numbers, and a file of its own. */
static void child_setup(void)
{
	if (dup2(file, CHILD_FILE) != CHILD_FILE || dup2(efd, CHILD_EFD) != CHILD_EFD ||
	    dup2(tfd, CHILD_TFD) != CHILD_TFD)
		_exit(2);
	close(file);
	close(efd);
	close(tfd);
	own = open(name, O_RDONLY);
	if (own < 0 || lseek(own, 100, SEEK_SET) != 100)
		_exit(2);
}

static const char *child_check(void)
{
	struct itimerspec its = { .it_value = { 2 * TIMER_S, 0 } };
	uint64_t v = 0;

	/* the parent moved the offset to 5000 */
	if (lseek(CHILD_FILE, 0, SEEK_CUR) != 5000)
		return "the file's offset did not follow the parent's lseek";
	if (write(CHILD_FILE, "0123456789", 10) != 10)
		return "write";
	if (lseek(own, 0, SEEK_CUR) != 100)
		return "the child's own description lost its offset";
	if (read(CHILD_EFD, &v, sizeof(v)) != sizeof(v) || v != 5)
		return "the eventfd does not hold 5";
	if (timerfd_settime(CHILD_TFD, 0, &its, NULL))
		return "timerfd_settime";
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerspec its = { .it_value = { TIMER_S, 0 } };
	long long left;
	uint64_t v;
	pid_t child;

	test_init(argc, argv);
	snprintf(name, sizeof(name), "%s.data", test_name);
	file = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	efd = eventfd(5, EFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	if (file < 0 || efd < 0 || tfd < 0 || timerfd_settime(tfd, 0, &its, NULL))
		fail_errno("setup");
	if (ftruncate(file, 10000) || lseek(file, 1234, SEEK_SET) != 1234)
		fail_errno("file");
	child = fork_checker(child_setup, child_check);

	test_ready();
	test_waitsig();

	if (lseek(file, 0, SEEK_CUR) != 1234)
		fail("the file's offset is %ld, not 1234", (long)lseek(file, 0, SEEK_CUR));
	/* namespace time stood still over the downtime (ZDTM_GAP): no less left */
	left = remaining(tfd);
	if (left <= (TIMER_S - 1) * NS || left > TIMER_S * NS)
		fail("the timer has %lld ns left", left);
	lseek(file, 5000, SEEK_SET);
	end_checker(child);
	if (lseek(file, 0, SEEK_CUR) != 5010)
		fail("the child's write moved the offset to %ld, not 5010",
		     (long)lseek(file, 0, SEEK_CUR));
	if (read(efd, &v, sizeof(v)) != -1 || errno != EAGAIN)
		fail("the eventfd is not the one the child drained");
	if (remaining(tfd) <= (2 * TIMER_S - 60) * NS)
		fail("the timer is not the one the child re-armed (%lld ns left)",
		     remaining(tfd));
	pass();
}
