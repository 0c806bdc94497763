// SPDX-License-Identifier: GPL-2.0
/*
 * criu service --address PATH [-d] [--pidfile FILE]: the RPC on a unix
 * socket of its own, each connection served by a worker process of its
 * own (a dump or a restore changes the process that does it; the next
 * client must not inherit that). The worker is the daemon's child, not the
 * client's: rst_sibling is refused here, as in CRIU.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "core/daemon.h"
#include "core/log.h"
#include "core/util.h"
#include "rpc/server.h"

#define BACKLOG		16

static int listen_on(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int sk;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		pr_err("Service address %s is longer than a unix socket path may be", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	/* a socket left by an earlier service goes; anything else stays */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
		unlink(path);
	sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		pr_perror("Can't create the service socket");
		return -1;
	}
	if (bind(sk, (struct sockaddr *)&addr, sizeof(addr)) || listen(sk, BACKLOG)) {
		pr_perror("Can't listen on %s", path);
		close(sk);
		return -1;
	}
	return sk;
}


static void serve_connection(int lsk, int sk)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	close(lsk);
	/* the worker waits for its own children (WAIT_PID, CHECK) */
	sigaction(SIGCHLD, &dfl, NULL);
	_exit(rpc_serve(sk, RPC_SERVICE) ? 1 : 0);
}

int cr_service(const struct opts *o)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };
	int lsk, sk;
	pid_t pid;

	if (!o->address) {
		pr_err("criu service needs --address PATH");
		return -1;
	}
	lsk = listen_on(o->address);
	if (lsk < 0)
		return -1;
	if (o->restore_detached ? cr_daemonize(o->pidfile) :
	    o->pidfile && write_pid(o->pidfile, getpid()))
		return -1;
	/* workers are reaped by the kernel: the daemon never waits */
	sigaction(SIGCHLD, &ign, NULL);
	pr_info("Service listening on %s", o->address);
	for (;;) {
		sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC);
		if (sk < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			pr_perror("Can't accept on %s", o->address);
			return -1;
		}
		pid = fork();
		if (!pid)
			serve_connection(lsk, sk);
		if (pid < 0)
			pr_warn("Can't fork a worker for a connection: %s", strerror(errno));
		close(sk);
	}
}
