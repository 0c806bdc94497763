// SPDX-License-Identifier: GPL-2.0-only
/*
 * The audit loginuid is kept. It can be written once by the task itself
 * (CAP_AUDIT_CONTROL); a kernel without audit has no such file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdtm.h"

#define LOGINUID_PATH	"/proc/self/loginuid"
#define UNSET		4294967295UL
#define WANT		"4711"

int main(int argc, char **argv)
{
	char buf[32];
	int fd;

	test_init(argc, argv);
	if (test_read_file(LOGINUID_PATH, buf, sizeof(buf)) <= 0)
		skip("no " LOGINUID_PATH ": kernel without audit");
	if (strtoul(buf, NULL, 10) != UNSET)
		skip("loginuid already set (%s): it can be set only once", buf);
	fd = open(LOGINUID_PATH, O_WRONLY);
	if (fd < 0 || write(fd, WANT, strlen(WANT)) != (ssize_t)strlen(WANT)) {
		if (errno == EPERM)
			skip("can't set the loginuid: no CAP_AUDIT_CONTROL");
		fail_errno("write " LOGINUID_PATH);
	}
	close(fd);

	test_ready();
	test_waitsig();

	if (test_read_file(LOGINUID_PATH, buf, sizeof(buf)) <= 0)
		fail_errno("read " LOGINUID_PATH);
	if (strcmp(buf, WANT))
		fail("loginuid is %s, was " WANT, buf);
	pass();
}
