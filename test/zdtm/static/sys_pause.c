// SPDX-License-Identifier: GPL-2.0-only
/*
 * A task sleeping in pause() at the checkpoint: after restore it must still
 * (or again) be in pause(), which returns only once a handler ran, i.e.
 * when our SIGTERM arrives.
 */
#include <errno.h>
#include <unistd.h>

#include "zdtm.h"

int main(int argc, char **argv)
{
	int ret;

	test_init(argc, argv);
	test_ready();

	ret = pause();
	if (ret != -1 || errno != EINTR)
		fail("pause() returned %d, errno %d", ret, errno);
	if (!test_sigterm)
		fail("pause() returned without SIGTERM");
	pass();
}
