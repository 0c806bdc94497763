// SPDX-License-Identifier: GPL-2.0-only
/*
 * The oom_score_adj is kept. The value is raised above the one the task
 * was born with: lowering it needs CAP_SYS_RESOURCE, raising it does not,
 * so a restore without that capability can still give it back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdtm.h"

#define OOM_PATH	"/proc/self/oom_score_adj"

static int read_adj(void)
{
	char buf[32];

	if (test_read_file(OOM_PATH, buf, sizeof(buf)) <= 0)
		fail_errno("read " OOM_PATH);
	return atoi(buf);
}

int main(int argc, char **argv)
{
	FILE *f;
	int want;

	test_init(argc, argv);
	want = read_adj() + 317;
	if (want > 1000)
		want = 1000;
	f = fopen(OOM_PATH, "w");
	if (!f || fprintf(f, "%d", want) < 0 || fclose(f))
		fail_errno("write " OOM_PATH);
	if (read_adj() != want)
		fail("oom_score_adj did not take %d", want);

	test_ready();
	test_waitsig();

	if (read_adj() != want)
		fail("oom_score_adj is %d, was %d", read_adj(), want);
	pass();
}
