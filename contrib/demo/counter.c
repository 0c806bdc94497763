// SPDX-License-Identifier: GPL-2.0-only
/*
 * counter: the demo's target.  Once a second it appends one line to a log:
 *
 *	count=N pid=P mono=S.NNNNNNNNN real=S.NNNNNNNNN
 *
 * with the counter, its pid and the CLOCK_MONOTONIC and CLOCK_REALTIME it
 * read.  The log stays open (O_APPEND) for the whole run, so a restored
 * counter writes through its restored descriptor.  The ticks are absolute
 * CLOCK_MONOTONIC deadlines, so a restore that keeps the monotonic clock
 * running from the dump sees the next tick come on time, and the log then
 * shows how both clocks moved across the checkpoint gap.
 *
 * The launcher is expected to make it a session leader (setsid) with its
 * stdio on /dev/null; it runs until killed.  Descriptors above 2 that it
 * inherits are closed first: the demo is about this program's own state, not
 * about whatever pipe its launcher happened to leak.
 *
 * Usage: counter LOGFILE [INTERVAL_MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000LL

static void timespec_add_ns(struct timespec *ts, long long ns)
{
	long long t = ts->tv_nsec + ns;

	ts->tv_sec += t / NSEC_PER_SEC;
	ts->tv_nsec = t % NSEC_PER_SEC;
}

/* write() the whole buffer; a short write to a regular file is rare but legal. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec next, mono, real;
	long long interval_ns = NSEC_PER_SEC;
	unsigned long long count = 0;
	char line[160];
	int fd, len;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s LOGFILE [INTERVAL_MS]\n", argv[0]);
		return 2;
	}
	if (argc == 3) {
		interval_ns = strtoll(argv[2], NULL, 10) * 1000000LL;
		if (interval_ns <= 0) {
			fprintf(stderr, "counter: bad interval '%s'\n", argv[2]);
			return 2;
		}
	}

	closefrom(3);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		fprintf(stderr, "counter: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &mono);
		clock_gettime(CLOCK_REALTIME, &real);
		count++;
		len = snprintf(line, sizeof(line),
			       "count=%llu pid=%d mono=%lld.%09ld real=%lld.%09ld\n",
			       count, (int)getpid(),
			       (long long)mono.tv_sec, mono.tv_nsec,
			       (long long)real.tv_sec, real.tv_nsec);
		if (write_all(fd, line, len) < 0) {
			fprintf(stderr, "counter: write: %s\n", strerror(errno));
			return 1;
		}

		timespec_add_ns(&next, interval_ns);
		/* clock_nanosleep returns the error number, not -1/errno. */
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
}
