// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_memcpy: the benchmark's yardstick for memory bandwidth.  Copies MIB
 * MiB between two buffers that are already faulted in, RUNS times, and
 * prints one line per run:
 *
 *	memcpy_ns NANOSECONDS
 *
 *	bench_memcpy MIB RUNS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	size_t size;
	long mib, runs, i;
	char *src, *dst;
	long long t0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MIB RUNS\n", argv[0]);
		return 2;
	}
	mib = strtol(argv[1], NULL, 10);
	runs = strtol(argv[2], NULL, 10);
	if (mib <= 0 || runs <= 0) {
		fprintf(stderr, "bench_memcpy: MIB and RUNS must be positive\n");
		return 2;
	}
	size = (size_t)mib << 20;

	src = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED) {
		perror("bench_memcpy: mmap");
		return 1;
	}
	/* Fault both in, with data that is not zero, and warm up once. */
	memset(src, 0x5a, size);
	memset(dst, 0xa5, size);
	memcpy(dst, src, size);

	for (i = 0; i < runs; i++) {
		src[i % size]++;
		t0 = now_ns();
		memcpy(dst, src, size);
		printf("memcpy_ns %lld\n", now_ns() - t0);
		/* Keep the copy from being optimised away. */
		if (dst[i % size] != src[i % size])
			return 1;
	}
	return 0;
}
