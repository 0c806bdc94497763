// SPDX-License-Identifier: GPL-2.0
/*
 * The GNU build-id of an ELF file (criu/core/build-id.c), which tells a
 * copy of a mapped file from a changed one at restore: the ids readelf -n
 * shows for three real kernels' vDSOs, nothing for a file that is not ELF
 * or has no such note, and every cut of a file read without harm.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/build-id.h"
#include "unit.h"

#define FILE_MAX	16384

static void unit_setup(void)
{
}

static const struct {
	const char *file;
	const char *id;
} known[] = {
	{ "6.1-debian.so", "4c094903377ab138c3805fd8b6b97aa182f903d1" },
	{ "6.1-patched.so", "922044b6bfda2cd484d1342b69c331f655c5edff" },
	{ "6.18-host.so", "b0af7178ba47aca58d16966d2c4d17c913589189" },
};

static void hex(const uint8_t *id, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = '\0';
}

static int open_known(int i)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", VDSO_DIR, known[i].file);
	return open(path, O_RDONLY);
}

static void test_known(void)
{
	uint8_t id[BUILD_ID_MAX];
	char s[2 * BUILD_ID_MAX + 1];
	size_t i, len;
	int fd, ret;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		fd = open_known(i);
		require(fd >= 0, "can't open %s", known[i].file);
		ret = file_build_id(fd, id, &len);
		close(fd);
		expect(!ret, "%s: %d", known[i].file, ret);
		if (!ret) {
			hex(id, len, s);
			expect(!strcmp(s, known[i].id), "%s: %s", known[i].file, s);
		}
	}
}

/* A memfd holding @len bytes of @data. */
static int mem_file(const uint8_t *data, size_t len)
{
	int fd = memfd_create("build-id", 0);

	if (fd >= 0 && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_none_and_cut(void)
{
	static uint8_t buf[FILE_MAX];
	uint8_t id[BUILD_ID_MAX], *note;
	size_t n, cut, len;
	int fd, ret;

	fd = open_known(0);
	require(fd >= 0, "can't open %s", known[0].file);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	require(n > 64, "read %zu", n);
	for (cut = 0; cut < n; cut += 13) {
		fd = mem_file(buf, cut);
		require(fd >= 0, "memfd");
		ret = file_build_id(fd, id, &len);
		close(fd);
		expect(ret == 1 || (ret == 0 && len == 20), "cut at %zu: %d", cut, ret);
	}
	fd = mem_file((const uint8_t *)"#!/bin/sh\necho not ELF\n", 23);
	expect(file_build_id(fd, id, &len) == 1, "a script");
	close(fd);
	/* the note's name changed: no build-id, whatever follows */
	note = memmem(buf, n, "GNU", 4);
	require(note, "no GNU note in %s", known[0].file);
	memcpy(note, "XYZ", 3);
	fd = mem_file(buf, n);
	expect(file_build_id(fd, id, &len) == 1, "a note of another name");
	close(fd);
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_known),
	UNIT_TEST(test_none_and_cut),
};

UNIT_MAIN(tests)
