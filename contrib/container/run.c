// SPDX-License-Identifier: GPL-2.0-only
/*
 * Starting a container: the host side and the container's init, and the
 * handshake between them.
 *
 *	host (ctr)				init (pid 1, new namespaces)
 *	cgroups created				setsid, waits for "go"
 *	clone(CLONE_NEW*)  ------------>
 *	joins it to its cgroups,
 *	writes its uid/gid maps,
 *	makes the veth with its end inside
 *	"go"  ------------------------->	cgroup namespace (rooted at the
 *						container's cgroups), network,
 *						hostname, mounts, pivot_root,
 *						console, stdio, exec
 *	reads until EOF  <--------------	an error line, or EOF at exec
 *
 * The socket is close-on-exec: EOF means the command (or `ctr init`) is
 * running.  On an error the host side kills the init and undoes what it
 * did; the error line is the init's, naming what failed inside.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctr.h"

#define NS_FLAGS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

static int init_network(const struct ctr_config *c)
{
	int i;

	if (c->share_net)
		return 0;	/* the host's: not ours to change */
	if (net_link_up("lo"))
		return -1;
	if (!c->veth_host)
		return 0;
	if (net_link_up(c->veth_ctr))
		return -1;
	for (i = 0; i < c->nr_ips; i++)
		if (net_addr_add(c->veth_ctr, c->ips[i]))
			return -1;
	return c->gw ? net_route_default(c->gw) : 0;
}

static int init_exec(const struct ctr_config *c)
{
	const char *argv[256];
	int i, n = 0;

	if (!c->init) {
		execvp(c->argv[0], c->argv);
		ctr_perr("exec %s in the container", c->argv[0]);
		return -1;
	}
	argv[n++] = "ctr";
	argv[n++] = "init";
	argv[n++] = "--";
	for (i = 0; c->argv[i] && n < 255; i++)
		argv[n++] = c->argv[i];
	argv[n] = NULL;
	execv(c->init, (char **)argv);
	ctr_perr("exec the init %s in the container", c->init);
	return -1;
}

static int init_setup(const struct ctr_config *c, const struct ctr_host *h, int console)
{
	const char *hostname = c->hostname ? c->hostname : c->name;

	/* now in the container's cgroups: they become its cgroup namespace's root */
	if (!c->share_cgroup && unshare(CLONE_NEWCGROUP)) {
		ctr_perr("unshare the cgroup namespace");
		return -1;
	}
	if (init_network(c))
		return -1;
	if (sethostname(hostname, strlen(hostname))) {
		ctr_perr("sethostname %s", hostname);
		return -1;
	}
	if (rootfs_setup(c, h))
		return -1;
	if (console >= 0 && console_setup(console))
		return -1;
	/* a read-only remount fails while a file is open for writing on it */
	if (rootfs_finish(c) || process_stdio(c))
		return -1;
	if (chdir(c->cwd ? c->cwd : "/")) {
		ctr_perr("chdir %s in the container", c->cwd);
		return -1;
	}
	if (process_env(c) || (c->restrict_process && process_restrict()))
		return -1;
	return init_exec(c);
}

static __attribute__((noreturn)) void init_main_child(const struct ctr_config *c,
						      const struct ctr_host *h,
						      int sync, int console)
{
	const char *msg;
	char go;

	if (setsid() < 0) {
		ctr_perr("setsid");
		goto fail;
	}
	if (read(sync, &go, 1) != 1)
		_exit(1);	/* the host side gave up: it reports why */
	if (c->userns && (setresgid(0, 0, 0) || setresuid(0, 0, 0))) {
		ctr_perr("become root in the user namespace");
		goto fail;
	}
	init_setup(c, h, console);
fail:
	msg = ctr_errmsg();
	if (write(sync, msg, strlen(msg)) < 0)
		_exit(2);
	_exit(1);
}

static int connect_console(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		ctr_err("--console-socket %s: path too long", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ctr_perr("connect to --console-socket %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* What the host does between the clone and "go". */
static int host_setup(const struct ctr_config *c, struct ctr_host *h)
{
	char path[64];

	if (cg_join(h, h->pid))
		return -1;
	if (c->userns) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", h->pid);
		if (write_file(path, c->uid_map))
			return -1;
		snprintf(path, sizeof(path), "/proc/%d/gid_map", h->pid);
		if (write_file(path, c->gid_map))
			return -1;
	}
	if (!c->veth_host)
		return 0;
	if (net_veth_create(c->veth_host, c->veth_ctr, h->pid))
		return -1;
	snprintf(h->veth, sizeof(h->veth), "%s", c->veth_host);
	if (net_link_up(c->veth_host))
		return -1;
	return c->host_ip ? net_addr_add(c->veth_host, c->host_ip) : 0;
}

/* Reads the init's error line, if any, until EOF: its exec. */
static int wait_exec(int sync)
{
	char msg[1024];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(msg) - 1) {
		n = read(sync, msg + len, sizeof(msg) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ctr_perr("read from the container's init");
			return -1;
		}
		if (n == 0)
			break;
		len += n;
	}
	msg[len] = '\0';
	if (len) {
		ctr_err("%s", msg);
		return -1;
	}
	return 0;
}

int ctr_start(struct ctr_config *c, struct ctr_host *h)
{
	int sv[2], console = -1, flags = NS_FLAGS | SIGCHLD;
	pid_t pid;

	if (c->userns)
		flags |= CLONE_NEWUSER;
	if (c->share_net)
		flags &= ~CLONE_NEWNET;
	if (cg_discover(h, c->cg_controllers) || rootfs_prepare_host(c))
		return -1;
	if (c->console_socket) {
		console = connect_console(c->console_socket);
		if (console < 0)
			return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ctr_perr("socketpair");
		goto err_console;
	}
	if (c->cgroup && cg_create(c, h))
		goto err_undo;
	fflush(NULL);
	pid = syscall(SYS_clone, flags, NULL, NULL, NULL, 0);
	if (pid < 0) {
		ctr_perr("clone the container's init (flags %#x)", flags);
		goto err_undo;
	}
	if (pid == 0) {
		close(sv[0]);
		init_main_child(c, h, sv[1], console);
	}
	close(sv[1]);
	sv[1] = -1;
	h->pid = pid;
	h->start = proc_start_time(pid);
	if (host_setup(c, h))
		goto err_undo;
	if (write(sv[0], "g", 1) != 1) {
		ctr_perr("start the container's init");
		goto err_undo;
	}
	if (wait_exec(sv[0]))
		goto err_undo;
	close(sv[0]);
	if (console >= 0)
		close(console);
	return 0;
err_undo:
	teardown(h, 5000);
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
err_console:
	if (console >= 0)
		close(console);
	return -1;
}
