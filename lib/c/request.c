// SPDX-License-Identifier: LGPL-2.1
/*
 * libcriu's requests: reach criu, send one criu_req, answer its
 * notifications through the callback, read the final criu_resp.
 *
 * With CRIU_COMM_BIN (the default) every request starts its own
 * `criu swrk FD` as the caller's child and waits for it after the answer;
 * the child unblocks SIGCHLD, which a caller may hold blocked, because
 * criu watches the tasks it restores with it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu.h"
#include "internal.h"

static int saved_errno;
static int orphan_fd = -1;

int libcriu_orphan_fd(void)
{
	return orphan_fd;
}

/* `BINARY swrk FD` as our child; its pid comes back through the socket. */
static int start_swrk(criu_opts *opts, int detach)
{
	sigset_t chld;
	int sk[2];
	pid_t pid;
	char fd[16];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sk))
		return -1;
	pid = fork();
	if (pid < 0)
		goto err;
	if (!pid) {
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		close(sk[0]);
		/* a self-dump: criu must not be a child of the task it dumps */
		if (detach && daemon(0, 1))
			_exit(1);
		pid = getpid();
		if (write(sk[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		snprintf(fd, sizeof(fd), "%d", sk[1]);
		execlp(opts->binary, opts->binary, "swrk", fd, (char *)NULL);
		_exit(127);
	}
	close(sk[1]);
	if (read(sk[0], &opts->swrk, sizeof(opts->swrk)) != sizeof(opts->swrk)) {
		waitpid(pid, NULL, 0);
		close(sk[0]);
		return -1;
	}
	/* detached, the one that wrote is not our child: reap the one that is */
	if (detach)
		waitpid(pid, NULL, 0);
	return sk[0];
err:
	close(sk[0]);
	close(sk[1]);
	return -1;
}

static int connect_service(const char *address)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int sk;

	if (strlen(address) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(addr.sun_path, address);
	sk = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (sk < 0)
		return -1;
	if (connect(sk, (struct sockaddr *)&addr, sizeof(addr))) {
		close(sk);
		return -1;
	}
	return sk;
}

static int criu_connect(criu_opts *opts, int detach)
{
	opts->swrk = 0;
	switch (opts->comm) {
	case CRIU_COMM_FD:
		return opts->fd;
	case CRIU_COMM_SK:
		return connect_service(opts->address);
	default:
		return start_swrk(opts, detach);
	}
}

static void criu_disconnect(criu_opts *opts, int sk)
{
	if (opts->comm != CRIU_COMM_FD)
		close(sk);
	if (opts->comm == CRIU_COMM_BIN && opts->swrk > 0)
		while (waitpid(opts->swrk, NULL, 0) < 0 && errno == EINTR)
			;
	opts->swrk = 0;
}

static int send_req(int sk, CriuReq *req)
{
	size_t len = criu_req__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	ssize_t ret;

	if (!buf)
		return -1;
	criu_req__pack(req, buf);
	ret = send(sk, buf, len, MSG_NOSIGNAL);
	free(buf);
	return ret == (ssize_t)len ? 0 : -1;
}

/* One answer; an fd that comes with it is the orphan pty master. */
static CriuResp *recv_resp(int sk)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { 0 };
	struct cmsghdr *c;
	struct iovec iov;
	CriuResp *resp;
	uint8_t *buf;
	ssize_t len;

	len = recv(sk, NULL, 0, MSG_PEEK | MSG_TRUNC);
	if (len <= 0 || !(buf = malloc(len)))
		return NULL;
	iov.iov_base = buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	len = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);
	c = len > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&orphan_fd, CMSG_DATA(c), sizeof(int));
	resp = len > 0 ? criu_resp__unpack(NULL, len, buf) : NULL;
	free(buf);
	return resp;
}

static int ack_notify(int sk, int ok)
{
	CriuReq req = CRIU_REQ__INIT;

	req.type = CRIU_REQ_TYPE__NOTIFY;
	req.has_notify_success = 1;
	req.notify_success = ok;
	return send_req(sk, &req);
}

/*
 * Sends @req on @sk and returns criu's final answer in *@resp: 0, or a
 * negative code of criu.h (a callback's own non-zero value included).
 */
static int exchange(criu_opts *opts, int sk, CriuReq *req, CriuResp **resp)
{
	int ret;

	*resp = NULL;
	if (send_req(sk, req))
		return -ECOMM;
	for (;;) {
		*resp = recv_resp(sk);
		if (!*resp)
			return -ECOMM;
		if ((*resp)->type != CRIU_REQ_TYPE__NOTIFY)
			break;
		ret = opts->notify && (*resp)->notify ?
		      opts->notify((*resp)->notify->script, (*resp)->notify) : 0;
		if (ack_notify(sk, !ret) && !ret)
			ret = -ECOMM;
		criu_resp__free_unpacked(*resp, NULL);
		*resp = NULL;
		if (ret)
			return ret;
	}
	if ((*resp)->has_cr_errno)
		saved_errno = (*resp)->cr_errno;
	if ((*resp)->type == req->type)
		return 0;
	return (*resp)->type == CRIU_REQ_TYPE__EMPTY && !(*resp)->success ? -EINVAL : -EBADMSG;
}

int libcriu_call(criu_opts *opts, CriuReq *req, CriuResp **resp)
{
	int sk, ret, detach = req->type == CRIU_REQ_TYPE__DUMP && req->opts &&
			      !req->opts->has_pid;

	saved_errno = 0;
	sk = criu_connect(opts, detach);
	if (sk < 0) {
		saved_errno = errno;
		return -ECONNREFUSED;
	}
	ret = exchange(opts, sk, req, resp);
	criu_disconnect(opts, sk);
	return ret;
}

/* The same on a connection of the caller's, kept for more requests. */
int libcriu_call_on(criu_opts *opts, int sk, CriuReq *req, CriuResp **resp)
{
	saved_errno = 0;
	return exchange(opts, sk, req, resp);
}

int libcriu_connect(criu_opts *opts)
{
	return criu_connect(opts, 0);
}

void libcriu_disconnect(criu_opts *opts, int sk)
{
	criu_disconnect(opts, sk);
}

/* errno for the caller: criu's cr_errno, or what failed here. */
int libcriu_finish(CriuResp *resp, int ret)
{
	if (resp)
		criu_resp__free_unpacked(resp, NULL);
	errno = saved_errno;
	return ret;
}
