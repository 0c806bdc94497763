// SPDX-License-Identifier: GPL-2.0
/*
 * The replay driver of the fuzz targets that meson builds with the
 * project's compiler (FUZZ_STANDALONE): every seed given (a file, or every
 * file of a directory), then deterministic mutations of each (bit flips,
 * cuts, inserted varints, extreme bytes, repeated slices), each through
 * the target's LLVMFuzzerTestOneInput. The same inputs every run.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"

#define MUTATIONS	5000

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

/* One mutation of @in into @out (room for @len + 16 bytes); its length. */
static size_t mutate(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t n = len, at = len ? rnd() % len : 0, i, k;

	memcpy(out, in, len);
	switch (rnd() % 5) {
	case 0:		/* flip bits */
		for (i = 0; n && i < 1 + rnd() % 3; i++)
			out[rnd() % n] ^= 1 << (rnd() % 8);
		break;
	case 1:		/* cut */
		n = at;
		break;
	case 2:		/* a varint or a key in the middle */
		k = 1 + rnd() % 10;
		memmove(out + at + k, out + at, len - at);
		for (i = 0; i < k; i++)
			out[at + i] = (i + 1 < k ? 0x80 : 0) | (rnd() & 0x7f);
		n = len + k;
		break;
	case 3:		/* a byte of extremes */
		if (n)
			out[at] = (uint8_t[]){ 0x00, 0x7f, 0x80, 0xff }[rnd() % 4];
		break;
	default:	/* repeat a slice */
		k = len - at > 16 ? 16 : len - at;
		memmove(out + at + k, out + at, len - at);
		n = len + k;
		break;
	}
	return n;
}

static int run_file(const char *path)
{
	uint8_t in[1 << 16], out[(1 << 16) + 16];
	size_t len, n;
	FILE *f = fopen(path, "rb");
	int i;

	if (!f)
		return 0;
	len = fread(in, 1, sizeof(in) - 16, f);
	fclose(f);
	LLVMFuzzerTestOneInput(in, len);
	for (i = 0; i < MUTATIONS; i++) {
		n = mutate(in, len, out);
		LLVMFuzzerTestOneInput(out, n);
		if (n <= sizeof(in) - 16 && rnd() % 4 == 0) {
			memcpy(in, out, n);	/* mutations build on each other */
			len = n;
		}
	}
	return 1;
}

int fuzz_replay(const char *name, int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	int i, files = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		d = opendir(argv[i]);
		if (!d) {
			files += run_file(argv[i]);
			continue;
		}
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				files += run_file(path);
			}
		closedir(d);
	}
	printf("%s: %d seeds, %d inputs each, no finding\n", name, files, MUTATIONS + 1);
	return files ? 0 : 1;
}
