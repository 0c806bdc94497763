// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_mem: the benchmark's target.  Maps MIB MiB of private anonymous
 * memory, writes a pattern to every 8-byte word (so no page is zero and no
 * two pages are alike), creates READY_FILE and then waits to be dumped.
 *
 *	bench_mem MIB READY_FILE
 *
 * On SIGUSR1 it checks the whole pattern and writes the verdict ("ok" or
 * "bad ...") to READY_FILE.verify, so the benchmark can tell that a restored
 * copy has the memory it had.  MIB may be 0: a trivial process.  Inherited
 * descriptors above 2 are closed, so that only memory is measured.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t verify_requested;

static void on_usr1(int sig)
{
	verify_requested = 1;
}

/* A cheap word pattern that differs for every word of the area. */
static inline uint64_t pattern(size_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	char verify_path[4096], verdict[128];
	uint64_t *area = NULL;
	size_t words, i;
	sigset_t mask, old;
	long mib;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MIB READY_FILE\n", argv[0]);
		return 2;
	}
	mib = strtol(argv[1], NULL, 10);
	if (mib < 0) {
		fprintf(stderr, "bench_mem: bad size '%s'\n", argv[1]);
		return 2;
	}
	words = (size_t)mib << 17;	/* MiB / 8 bytes */
	snprintf(verify_path, sizeof(verify_path), "%s.verify", argv[2]);

	closefrom(3);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	if (mib) {
		area = mmap(NULL, words * 8, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED) {
			fprintf(stderr, "bench_mem: mmap %ld MiB: %s\n", mib, strerror(errno));
			return 1;
		}
		for (i = 0; i < words; i++)
			area[i] = pattern(i);
	}

	if (write_file(argv[2], "ready\n")) {
		fprintf(stderr, "bench_mem: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, &old);
	for (;;) {
		while (!verify_requested)
			sigsuspend(&old);
		verify_requested = 0;

		strcpy(verdict, "ok\n");
		for (i = 0; i < words; i++) {
			if (area[i] != pattern(i)) {
				snprintf(verdict, sizeof(verdict),
					 "bad word %zu: %#llx\n", i,
					 (unsigned long long)area[i]);
				break;
			}
		}
		write_file(verify_path, verdict);
	}
}
