// SPDX-License-Identifier: GPL-2.0-only
/*
 * epoll instances and their watches: a pipe with data (ready to read), a
 * pipe end ready to write (edge-triggered), an empty eventfd and a quiet
 * socket (not ready), each with its own data word, and an epoll watching
 * that epoll. After restore exactly the ready ones are reported, with
 * their data; the others become ready when they should; the edge is
 * reported once. A second instance is shared with a child and watches a
 * pipe only the child still holds (the parent closed its copy): the child
 * is the one to set it up again, and both see the data the pipe holds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zdtm.h"
#include "files_lib.h"

static int ep, outer, shared, in[2], out[2], efd, sk[2], sp[2];

static int wait_set(int e, uint64_t *data, uint32_t *events, int max)
{
	struct epoll_event ev[8];
	int n, i;

	n = epoll_wait(e, ev, max, 0);
	for (i = 0; i < n; i++) {
		data[i] = ev[i].data.u64;
		events[i] = ev[i].events;
	}
	return n;
}

/* Exactly one event, for @want, with @events among its bits. */
static const char *expect_one(int e, uint64_t want, uint32_t events)
{
	uint64_t data[8];
	uint32_t ev[8];
	int n = wait_set(e, data, ev, 8);

	if (n != 1 || data[0] != want || !(ev[0] & events))
		return "the ready set is not as it was";
	return NULL;
}

static void child_setup(void)
{
	/* the parent closes its copy of sp[0]: only this one is watched */
}

static const char *child_check(void)
{
	return expect_one(shared, 0x6666, EPOLLIN);
}

static void add(int e, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(e, EPOLL_CTL_ADD, fd, &ev))
		fail_errno("epoll_ctl %d", fd);
}

int main(int argc, char **argv)
{
	uint64_t data[8], v = 1;
	uint32_t events[8];
	const char *why;
	int n, i, seen = 0;
	pid_t child;

	test_init(argc, argv);
	ep = epoll_create1(0);
	outer = epoll_create1(EPOLL_CLOEXEC);
	shared = epoll_create1(0);
	efd = eventfd(0, EFD_NONBLOCK);
	if (ep < 0 || outer < 0 || shared < 0 || efd < 0 || pipe(in) || pipe(out) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sk) || pipe(sp))
		fail_errno("setup");
	if (write(in[1], "data", 4) != 4 || write(sp[1], "x", 1) != 1)
		fail_errno("write");
	add(ep, in[0], EPOLLIN, 0x1111);
	add(ep, out[1], EPOLLOUT | EPOLLET, 0x2222);
	add(ep, efd, EPOLLIN, 0x3333);
	add(ep, sk[0], EPOLLIN | EPOLLRDHUP, 0x4444);
	add(outer, ep, EPOLLIN, 0x5555);
	add(shared, sp[0], EPOLLIN, 0x6666);
	child = fork_checker(child_setup, child_check);
	close(sp[0]);

	test_ready();
	test_waitsig();

	n = wait_set(ep, data, events, 8);
	for (i = 0; i < n; i++) {
		if (data[i] == 0x1111 && (events[i] & EPOLLIN))
			seen |= 1;
		else if (data[i] == 0x2222 && (events[i] & EPOLLOUT))
			seen |= 2;
		else
			fail("an event for %#llx (%#x) that was not ready",
			     (unsigned long long)data[i], events[i]);
	}
	if (seen != 3)
		fail("the ready watches are not reported (%d of them)", n);
	/* the edge was reported: not again; the level is */
	if ((why = expect_one(ep, 0x1111, EPOLLIN)))
		fail("after the first wait: %s", why);
	if ((why = expect_one(outer, 0x5555, EPOLLIN)))
		fail("the epoll watching the epoll: %s", why);
	if (write(efd, &v, sizeof(v)) != sizeof(v) || read(in[0], data, 4) != 4)
		fail_errno("eventfd");
	if ((why = expect_one(ep, 0x3333, EPOLLIN)))
		fail("after the eventfd was written: %s", why);
	if (read(efd, &v, sizeof(v)) != sizeof(v) || write(sk[1], "s", 1) != 1)
		fail_errno("socket");
	if ((why = expect_one(ep, 0x4444, EPOLLIN)))
		fail("after the socket was written: %s", why);
	if ((why = expect_one(shared, 0x6666, EPOLLIN)))
		fail("the shared epoll: %s", why);
	end_checker(child);
	pass();
}
