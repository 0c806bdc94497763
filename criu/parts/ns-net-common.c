// SPDX-License-Identifier: GPL-2.0
/*
 * What every piece of the network namespace part uses (ns-net-common.h):
 * rtnetlink sockets with libnl, one request and its answer, a thread of
 * criu in and out of the tree's namespace, a tool of the host run there.
 * The lowest of the ns-net files: it uses none of the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/ns-net-common.h"

struct nl_sock *net_rtnl_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk) {
		pr_err("Can't allocate an rtnetlink socket");
		return NULL;
	}
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err) {
		pr_err("Can't open an rtnetlink socket: %s", nl_geterror(err));
		nl_socket_free(sk);
		return NULL;
	}
	/* a dump of many routes comes in big answers */
	nl_socket_set_buffer_size(sk, 1 << 20, 1 << 20);
	nl_socket_set_msg_buf_size(sk, 64 << 10);
	return sk;
}

static int talk_err(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	*(int *)arg = e->error;
	return NL_STOP;
}

static int talk_ack(struct nl_msg *msg, void *arg)
{
	return NL_STOP;
}

int net_talk(struct nl_sock *sk, struct nl_msg *msg)
{
	struct nl_cb *cb = nl_cb_clone(nl_socket_get_cb(sk));
	int err = 0, ret = -1;

	if (cb) {
		nl_cb_err(cb, NL_CB_CUSTOM, talk_err, &err);
		nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, talk_ack, NULL);
		ret = nl_send_auto(sk, msg);
		if (ret >= 0)
			ret = nl_recvmsgs(sk, cb);
		nl_cb_put(cb);
	}
	nlmsg_free(msg);
	if (err)
		return err;
	return ret < 0 ? -EIO : 0;
}

int netns_enter(int nsfd, int *back)
{
	*back = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*back < 0) {
		pr_perror("Can't open criu's own network namespace");
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET)) {
		pr_perror("Can't enter the tree's network namespace");
		close(*back);
		return -1;
	}
	return 0;
}

void netns_leave(int back)
{
	if (setns(back, CLONE_NEWNET)) {
		/* criu would go on in the tree's namespace: better not go on */
		pr_perror("Can't go back into criu's network namespace");
		_exit(1);
	}
	close(back);
}

static const char *const tool_dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

/* The tool's path in the usual places (criu's PATH may lack sbin); 0 or -1. */
static int find_tool(const char *name, char *path, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tool_dirs); i++) {
		snprintf(path, len, "%s/%s", tool_dirs[i], name);
		if (!access(path, X_OK))
			return 0;
	}
	return -1;
}

/*
 * posix_spawn (a vfork): the child shares criu's memory until it execs,
 * where a fork would copy every mapping of a static criu first. It is
 * born in the namespaces of the calling thread.
 */
static pid_t spawn_tool(const char *path, char *const argv[], int in, int out, int err)
{
	static char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int e;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	e = posix_spawn_file_actions_adddup2(&fa, in, 0) ||
	    posix_spawn_file_actions_adddup2(&fa, out, 1) ||
	    posix_spawn_file_actions_adddup2(&fa, err, 2) ||
	    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!e)
		e = posix_spawn(&pid, path, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		errno = e;
		return -1;
	}
	return pid;
}

static int memfd_with(const char *name, const char *data)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (data && write_full(fd, data, strlen(data))) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The tool's stderr, one line, for the error message (a debug line if @quiet). */
static void tool_failed(const struct net_who *w, const char *tool, int status, int err,
			int quiet)
{
	char *msg, *nl;

	lseek(err, 0, SEEK_SET);
	msg = read_fd(dup(err), NULL);
	nl = msg ? strchr(msg, '\n') : NULL;
	if (nl)
		*nl = '\0';
	if (quiet)
		pr_debug(NET_FMT ": %s failed: %s", NET_ARGS(w), tool, msg ? msg : "");
	else
		pr_err(NET_FMT ": %s failed (status %d): %s", NET_ARGS(w), tool,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		       msg && *msg ? msg : "no message");
	free(msg);
}

int net_run_tool(const struct net_who *w, char *const argv[], const char *in, char **out,
		 int quiet)
{
	int fin = memfd_with("criu-in", in), fout = memfd_with("criu-out", NULL);
	int ferr = memfd_with("criu-err", NULL), status = -1, ret = -1;
	char path[256];
	pid_t pid;

	if (fin < 0 || fout < 0 || ferr < 0) {
		pr_perror(NET_FMT ": can't run %s", NET_ARGS(w), argv[0]);
		goto out;
	}
	if (find_tool(argv[0], path, sizeof(path))) {
		if (!quiet)
			pr_err(NET_FMT ": can't find %s in /usr/sbin, /sbin, /usr/bin or /bin "
			       "(not installed?)", NET_ARGS(w), argv[0]);
		goto out;
	}
	pid = spawn_tool(path, argv, fin, fout, ferr);
	if (pid < 0) {
		pr_perror(NET_FMT ": can't run %s", NET_ARGS(w), path);
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror(NET_FMT ": can't wait for %s", NET_ARGS(w), argv[0]);
			goto out;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tool_failed(w, argv[0], status, ferr, quiet);
		goto out;
	}
	ret = 0;
	if (out) {
		lseek(fout, 0, SEEK_SET);
		*out = read_fd(dup(fout), NULL);
		ret = *out ? 0 : -1;
	}
out:
	if (fin >= 0)
		close(fin);
	if (fout >= 0)
		close(fout);
	if (ferr >= 0)
		close(ferr);
	return ret;
}
