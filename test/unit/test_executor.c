// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall executor (task/executor.S) run in this very process: a batch
 * built in place in an executable page, the code called as a function,
 * its closing int3 caught and jumped out of. It checks what the tasks
 * being restored rely on: every entry's ret, the stop at the first failure
 * not marked SC_MAY_FAIL, and SC_ARG0_AT (an open's fd passed on to the
 * write and the close after it), in a batch built in place and in one
 * grown here and copied in (the dump's way), whose table's place is only
 * known once it is sealed.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "task/batch.h"
#include "unit.h"

#define AREA	(64 << 10)

static sigjmp_buf back;

static void trapped(int sig)
{
	siglongjmp(back, 1);
}

/* Runs @b's entries here; 0 once the executor reached its int3. */
static int run(struct batch *b)
{
	void (*code)(uint64_t table, long nr) = (void *)batch_code_remote(b);
	struct sigaction sa = { .sa_handler = trapped }, old;

	sigaction(SIGTRAP, &sa, &old);
	if (!sigsetjmp(back, 1))
		code(batch_entries_remote(b), b->nr);
	sigaction(SIGTRAP, &old, NULL);
	return 0;
}

static void *area(void)
{
	void *p = mmap(NULL, AREA, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* open of /dev/null, write and close of its fd (SC_ARG0_AT); the open's index */
static int queue_open_write_close(struct batch *b)
{
	uint64_t path, data, fd;
	int open;

	path = batch_put(b, "/dev/null", sizeof("/dev/null"));
	data = batch_put(b, "label", 5);
	open = BATCH(b, "open", __NR_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	fd = batch_ret_remote(b, open);
	BATCH(b, "write", __NR_write | SC_ARG0_AT, fd, data, 5);
	BATCH(b, "close", __NR_close | SC_ARG0_AT, fd);
	return open;
}

static void test_fd_passed_on(void)
{
	struct batch b;
	void *a = area();

	require(a, "mmap of an executable area: %m");
	require(!batch_init(&b, a, (uint64_t)a, AREA, 16), "batch_init");
	require(queue_open_write_close(&b) == 0, "the open is entry 0");
	run(&b);
	expect(batch_entry(&b, 0)->ret >= 0, "open: %ld", (long)batch_entry(&b, 0)->ret);
	expect(batch_entry(&b, 1)->ret == 5, "write through the fd: %ld",
	       (long)batch_entry(&b, 1)->ret);
	expect(batch_entry(&b, 2)->ret == 0, "close of the fd: %ld",
	       (long)batch_entry(&b, 2)->ret);
	expect(fcntl(batch_entry(&b, 0)->ret, F_GETFD) < 0 && errno == EBADF,
	       "fd %ld still open", (long)batch_entry(&b, 0)->ret);
	munmap(a, AREA);
}

static void test_fd_passed_on_grown(void)
{
	struct iovec loc[3], rem[3];
	struct batch b;
	void *a = area();
	int open, i, n;

	require(a, "mmap of an executable area: %m");
	require(!batch_init_grow(&b, (uint64_t)a), "batch_init_grow");
	open = queue_open_write_close(&b);
	require(batch_seal(&b) && batch_seal(&b) <= AREA, "batch_seal");
	expect(batch_entry(&b, 1)->args[0] == (int64_t)batch_ret_remote(&b, open),
	       "the write's fd is read from %#lx, the open's ret is at %#lx",
	       (long)batch_entry(&b, 1)->args[0], (long)batch_ret_remote(&b, open));
	n = batch_iov(&b, 1, loc, rem);
	for (i = 0; i < n; i++)
		memcpy(rem[i].iov_base, loc[i].iov_base, loc[i].iov_len);
	run(&b);
	n = batch_iov(&b, 0, loc, rem);
	for (i = 0; i < n; i++)
		memcpy(loc[i].iov_base, rem[i].iov_base, loc[i].iov_len);
	expect(batch_entry(&b, 1)->ret == 5, "write through the fd: %ld",
	       (long)batch_entry(&b, 1)->ret);
	expect(batch_entry(&b, 2)->ret == 0, "close of the fd: %ld",
	       (long)batch_entry(&b, 2)->ret);
	batch_free(&b);
	munmap(a, AREA);
}

static void test_stops_at_failure(void)
{
	struct batch b;
	void *a = area();

	require(a, "mmap of an executable area: %m");
	require(!batch_init(&b, a, (uint64_t)a, AREA, 16), "batch_init");
	BATCH(&b, "close of no fd, may fail", __NR_close | SC_MAY_FAIL, -1);
	BATCH(&b, "getpid", __NR_getpid);
	BATCH(&b, "close of no fd", __NR_close, -1);
	BATCH(&b, "never run", __NR_getpid);
	batch_entry(&b, 3)->ret = 12345;
	run(&b);
	expect(batch_entry(&b, 0)->ret == -EBADF, "%ld", (long)batch_entry(&b, 0)->ret);
	expect(batch_entry(&b, 1)->ret == getpid(), "the run went on past SC_MAY_FAIL");
	expect(batch_entry(&b, 2)->ret == -EBADF, "%ld", (long)batch_entry(&b, 2)->ret);
	expect(batch_entry(&b, 3)->ret == 12345, "ran past a failure");
	munmap(a, AREA);
}

static void unit_setup(void)
{
	log_open(NULL, LOG_ERR);
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_fd_passed_on),
	UNIT_TEST(test_fd_passed_on_grown),
	UNIT_TEST(test_stops_at_failure),
};

UNIT_MAIN(tests)
