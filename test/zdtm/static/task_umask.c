// SPDX-License-Identifier: GPL-2.0-only
/*
 * The umask is kept.
 */
#include <string.h>
#include <sys/stat.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	char buf[16];
	mode_t m;

	test_init(argc, argv);
	umask(0163);

	test_ready();
	test_waitsig();

	if (!test_status_field("Umask", buf, sizeof(buf)) || strcmp(buf, "0163"))
		fail("status Umask is '%s', was 0163", buf);
	m = umask(0);
	if (m != 0163)
		fail("umask is %#o, was 0163", m);
	pass();
}
