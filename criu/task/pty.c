// SPDX-License-Identifier: GPL-2.0
/* Pty pairs at a given index, for the restore (see pty.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "task/pty.h"

#define KEPT_MAX	8

static struct {
	unsigned int index;
	int master;
} kept[KEPT_MAX];
static int nr_kept;
static int handover[2] = { -1, -1 };

int pty_open_index(int (*open_ptmx)(const void *arg), const void *arg, unsigned int index)
{
	int *extra, n = 0, fd = -1, got = -1;

	extra = xmalloc((index + 1) * sizeof(*extra));
	if (!extra)
		return -1;
	while (n <= (int)index) {
		fd = open_ptmx(arg);
		if (fd < 0)
			break;
		if (ioctl(fd, TIOCGPTN, &got)) {
			pr_perror("Can't learn the index of a new pty (for pty %u)", index);
			close(fd);
			fd = -1;
			break;
		}
		if (got == (int)index)
			break;
		extra[n++] = fd;
		fd = -1;
		if (got > (int)index) {
			pr_err("Can't recreate pty %u: its index is taken", index);
			break;
		}
	}
	while (n > 0)
		close(extra[--n]);
	free(extra);
	return fd;
}

int pty_keep(unsigned int index, int master)
{
	int i;

	for (i = 0; i < nr_kept && kept[i].index != index; i++)
		;
	if (i < nr_kept || nr_kept == KEPT_MAX) {
		pr_err("Can't keep the master of pty %u: %s", index,
		       nr_kept == KEPT_MAX ? "too many" : "one is kept already");
		return -1;
	}
	kept[nr_kept].index = index;
	kept[nr_kept++].master = master;
	return 0;
}

int pty_take(unsigned int index)
{
	int i, fd;

	for (i = 0; i < nr_kept; i++) {
		if (kept[i].index != index)
			continue;
		fd = kept[i].master;
		kept[i] = kept[--nr_kept];
		return fd;
	}
	return -1;
}

int pty_handover_open(void)
{
	if (handover[0] >= 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, handover)) {
		pr_perror("Can't create a socket pair for new pty masters");
		return -1;
	}
	return 0;
}

int pty_hand_over(int master)
{
	if (handover[1] < 0 || send_fd(handover[1], master)) {
		pr_perror("Can't keep a new pty master for the RPC client");
		return -1;
	}
	return 0;
}

int pty_handed_over(void)
{
	return handover[0] < 0 ? -1 : recv_fd(handover[0]);
}

void pty_handover_close(void)
{
	if (handover[0] < 0)
		return;
	close(handover[0]);
	close(handover[1]);
	handover[0] = handover[1] = -1;
}
