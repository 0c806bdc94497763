// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container's console, as runc makes it with --console-socket: a pty
 * pair of the container's own devpts, the slave bound at /dev/console and
 * made the init's controlling terminal and stdio, the master handed over
 * a unix socket to whoever listens there (SCM_RIGHTS, with the slave's
 * path as the message).  The master lives outside the container from then
 * on: checkpointing such a container means giving it back on restore.
 *
 * The socket was connected by the host side before the namespaces were
 * made: its path is not reachable from the container's root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctr.h"

static int send_fd(int sock, int fd, const char *name)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)name, .iov_len = strlen(name) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
		ctr_perr("send the console's master over --console-socket");
		return -1;
	}
	return 0;
}

static int open_pair(int *master, char *slave, size_t size)
{
	int unlock = 0, n;

	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0) {
		ctr_perr("open /dev/ptmx");
		return -1;
	}
	if (ioctl(*master, TIOCSPTLCK, &unlock) || ioctl(*master, TIOCGPTN, &n)) {
		ctr_perr("unlock the console pty");
		close(*master);
		return -1;
	}
	snprintf(slave, size, "/dev/pts/%d", n);
	return 0;
}

int console_setup(int sock)
{
	char name[64];
	int master, slave, i;

	if (open_pair(&master, name, sizeof(name)))
		return -1;
	slave = open(name, O_RDWR | O_NOCTTY);
	if (slave < 0) {
		ctr_perr("open %s", name);
		goto err_master;
	}
	if (touch("/dev/console", 0600) ||
	    mount(name, "/dev/console", NULL, MS_BIND, NULL)) {
		ctr_perr("bind %s on /dev/console", name);
		goto err_slave;
	}
	if (send_fd(sock, master, name))
		goto err_slave;
	close(master);
	if (ioctl(slave, TIOCSCTTY, 0)) {
		ctr_perr("make %s the controlling terminal", name);
		close(slave);
		return -1;
	}
	for (i = 0; i < 3; i++)
		if (dup2(slave, i) < 0) {
			ctr_perr("dup2 the console to fd %d", i);
			close(slave);
			return -1;
		}
	if (slave > 2)
		close(slave);
	return 0;
err_slave:
	close(slave);
err_master:
	close(master);
	return -1;
}
