// SPDX-License-Identifier: GPL-2.0
/*
 * Packets on the RPC socket: one protobuf per SOCK_SEQPACKET packet, no
 * length prefix (the size comes from MSG_PEEK|MSG_TRUNC), fds only as
 * SCM_RIGHTS. Clients send none: any that come are closed at once, so a
 * client can't make criu hold its fds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "rpc/wire.h"

#define MAX_PASSED_FDS	16

static void drop_fds(struct msghdr *mh)
{
	struct cmsghdr *c;
	int i, n, fd;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

ssize_t rpc_recv(int sk, uint8_t **buf)
{
	char cbuf[CMSG_SPACE(MAX_PASSED_FDS * sizeof(int))];
	struct msghdr mh = { 0 };
	struct iovec iov;
	ssize_t len;

	*buf = NULL;
	do
		len = recv(sk, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (len < 0 && errno == EINTR);
	if (len <= 0)
		return len;
	/* an oversized packet is read whole all the same, and refused by its size */
	*buf = xmalloc(len);
	if (!*buf)
		return -1;
	iov.iov_base = *buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	do
		len = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);
	while (len < 0 && errno == EINTR);
	if (len >= 0)
		drop_fds(&mh);
	if (len <= 0) {
		free(*buf);
		*buf = NULL;
	}
	return len;
}

int rpc_send(int sk, const CriuResp *resp, int fd)
{
	size_t len = criu_resp__get_packed_size(resp);
	uint8_t *buf;
	int ret;

	buf = xmalloc(len ? len : 1);
	if (!buf)
		return -1;
	criu_resp__pack(resp, buf);
	/* no SIGPIPE there: a client that went away must not kill criu mid-restore */
	ret = send_msg_fd(sk, buf, len, fd);
	free(buf);
	return ret;
}
