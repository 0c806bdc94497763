// SPDX-License-Identifier: GPL-2.0
/*
 * The target of scripts/bench-predump.sh: SIZE MiB of anonymous memory,
 * all written once, then either
 *   passes  (RATE 0): writes one word in every page, over and over, and
 *           appends each pass's time (ns) to LOG, one line per pass;
 *   rate    (RATE > 0): writes RATE MiB/s of pseudo-random pages, in 10 ms
 *           ticks, and appends each tick's overrun (ns late) to LOG.
 * Writes its pid to READY once it runs; runs until killed.
 * Usage: predump_writer SIZE_MIB RATE_MIBPS LOG READY
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PS	4096UL

static int64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t size, pages, i, x = 88172645463325252ULL, per_tick;
	int64_t t0, next;
	volatile uint8_t *m;
	FILE *log, *ready;
	double rate;

	if (argc != 5)
		return 2;
	/* whatever the caller left open is no part of the benchmark (nor dumpable) */
	syscall(SYS_close_range, 3, ~0U, 0);
	size = strtoull(argv[1], NULL, 10) << 20;
	rate = atof(argv[2]);
	pages = size / PS;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	log = fopen(argv[3], "w");
	if (m == MAP_FAILED || !log)
		return 1;
	setvbuf(log, NULL, _IOLBF, 0);
	for (i = 0; i < pages; i++)
		m[i * PS] = 1;
	ready = fopen(argv[4], "w");
	fprintf(ready, "%d\n", getpid());
	fclose(ready);
	if (rate <= 0) {
		for (;;) {
			t0 = now();
			for (i = 0; i < pages; i++)
				m[i * PS + 8]++;
			fprintf(log, "%lld\n", (long long)(now() - t0));
		}
	}
	per_tick = (uint64_t)(rate * (1 << 20) / PS / 100);
	for (next = now();; ) {
		for (i = 0; i < per_tick; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			m[(x % pages) * PS + 16]++;
		}
		next += 10000000;
		t0 = now();
		if (t0 < next)
			usleep((next - t0) / 1000);
		else
			fprintf(log, "%lld\n", (long long)(t0 - next));
	}
}
