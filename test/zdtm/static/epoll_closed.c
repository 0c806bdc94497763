// SPDX-License-Identifier: GPL-2.0-only
/*
 * epoll watches whose fd the task has closed while the file stays open at
 * another fd (a watch goes with its file, not its fd):
 *  - the read end of pipe A added at fd N, then dup'ed and N closed;
 *  - the read end of pipe B added at fd K, dup'ed, K closed, and K reused
 *    by an eventfd that is added too: two watches under number K.
 * (The dups go high, so that nothing takes N.) After restore each watch
 * reports its own data when its file gets ready,
 * N is still closed, K holds the eventfd, and the watches are still keyed
 * by their old numbers (deleting one by the fd that holds its file now
 * finds nothing; by the old number the eventfd's is found).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtm.h"

#define DATA_A	0x1111
#define DATA_B	0x2222
#define DATA_E	0x3333

static int ep;

static void add(int fd, uint64_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		fail_errno("epoll_ctl ADD %d", fd);
}

/* Exactly one event is ready, with @data; it is read away through @fd. */
static void expect(uint64_t data, int fd, const char *what)
{
	struct epoll_event ev[4];
	uint64_t v;
	int n = epoll_wait(ep, ev, 4, 1000);

	if (n != 1 || ev[0].data.u64 != data)
		fail("%s: %d events, the first with data %#llx, not %#llx", what, n,
		     n > 0 ? (unsigned long long)ev[0].data.u64 : 0ULL, (unsigned long long)data);
	if (read(fd, &v, sizeof(v)) <= 0)
		fail_errno("%s: read", what);
}

int main(int argc, char **argv)
{
	int a[2], b[2], a_at, b_at, n, k, efd;
	struct epoll_event ev;
	uint64_t one = 1;

	test_init(argc, argv);
	ep = epoll_create1(0);
	if (ep < 0 || pipe(a) || pipe(b))
		fail_errno("setup");
	n = a[0];
	add(n, DATA_A);
	a_at = fcntl(n, F_DUPFD, 100);
	close(n);
	k = b[0];
	add(k, DATA_B);
	b_at = fcntl(k, F_DUPFD, 100);
	close(k);
	efd = eventfd(0, 0);
	if (efd != k && dup2(efd, k) != k)
		fail_errno("eventfd at %d", k);
	if (efd != k)
		close(efd);
	add(k, DATA_E);
	if (a_at < 0 || b_at < 0)
		fail_errno("dup");
	test_msg("A watched at %d, now at %d; B at %d, now at %d; the eventfd at %d", n, a_at,
		 k, b_at, k);

	test_ready();
	test_waitsig();

	if (fcntl(n, F_GETFD) != -1 || errno != EBADF)
		fail("fd %d is open again", n);
	if (write(a[1], "a", 1) != 1)
		fail_errno("write A");
	expect(DATA_A, a_at, "pipe A");
	if (write(b[1], "b", 1) != 1)
		fail_errno("write B");
	expect(DATA_B, b_at, "pipe B");
	if (write(k, &one, sizeof(one)) != sizeof(one))
		fail_errno("write the eventfd at %d", k);
	expect(DATA_E, k, "the eventfd");
	if (!epoll_ctl(ep, EPOLL_CTL_DEL, a_at, &ev) || errno != ENOENT)
		fail("a watch is keyed by fd %d, which was never added", a_at);
	if (epoll_ctl(ep, EPOLL_CTL_DEL, k, &ev))
		fail_errno("the eventfd's watch under fd %d", k);
	pass();
}
