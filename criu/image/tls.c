// SPDX-License-Identifier: GPL-2.0
/*
 * --tls: the page server's connection through the helper criu-tls
 * (image/tls.h). The helper's status line says whether the handshake and
 * both certificates passed; its reason becomes our one error line.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "image/tls.h"

#define HELPER		"criu-tls"
#define MAX_ARGS	16

/* criu-tls sits next to criu, built and installed. */
static int helper_path(char *path, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	return snprintf(path, len, "%s/" HELPER, dirname(exe)) < (int)len ? 0 : -1;
}

static void build_argv(const char **av, const char *path, const struct tls_opts *o,
		       const char *host)
{
	int n = 0;

	av[n++] = path;
	av[n++] = host ? "client" : "server";
	if (host) {
		av[n++] = "--host";
		av[n++] = host;
	}
#define ARG(name, val) do { if (val) { av[n++] = "--" name; av[n++] = val; } } while (0)
	ARG("cacert", o->cacert);
	ARG("cacrl", o->cacrl);
	ARG("cert", o->cert);
	ARG("key", o->key);
#undef ARG
	if (o->no_cn_verify)
		av[n++] = "--no-cn-verify";
	if (o->no_cert_verify)
		av[n++] = "--no-cert-verify";
	av[n] = NULL;
}

/* In the child: fds 3, 4, 5 as criu-tls wants them, then exec. */
static void run_helper(const char **av, int sk, int plain, int status)
{
	sigset_t all;
	int fds[3] = { sk, plain, status }, i, null;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* above 5 first: one of them may sit where another goes */
	for (i = 0; i < 3; i++)
		fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
	for (i = 0; i < 3; i++)
		if (fds[i] < 0 || dup2(fds[i], 3 + i) < 0)
			_exit(127);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	execv(av[0], (char *const *)av);
	dprintf(5, "can't run the TLS helper %s: %s\n", av[0], strerror(errno));
	_exit(127);
}

/* The helper's status line: "OK ..." or its reason; "" if it died first. */
static void read_status(int fd, char *line, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len - 1) {
		n = read(fd, line + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
}

static int handshake_done(struct tls_helper *h, int status, const char *who)
{
	char line[600];
	int ws = 0;

	read_status(status, line, sizeof(line));
	if (!strncmp(line, "OK ", 3)) {
		pr_info("%s: TLS: %s", who, line + 3);
		return 0;
	}
	close(h->fd);
	h->fd = -1;
	waitpid(h->pid, &ws, 0);
	if (line[0])
		pr_err("%s: %s", who, line);
	else
		pr_err("%s: the TLS helper " HELPER " died (wait status %#x)", who, ws);
	return -1;
}

static int wrap(int sk, const struct tls_opts *o, const char *host, const char *who,
		struct tls_helper *h)
{
	const char *av[MAX_ARGS];
	char path[PATH_MAX];
	int sp[2], st[2];

	h->fd = -1;
	if (helper_path(path, sizeof(path))) {
		pr_err("%s: can't find the TLS helper " HELPER " next to criu", who);
		return -1;
	}
	build_argv(av, path, o, host);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) {
		pr_perror("%s: can't make the TLS helper's socket", who);
		return -1;
	}
	if (pipe2(st, O_CLOEXEC)) {
		pr_perror("%s: can't make the TLS helper's pipe", who);
		goto err_sp;
	}
	h->pid = fork();
	if (h->pid < 0) {
		pr_perror("%s: can't start the TLS helper", who);
		goto err_st;
	}
	if (!h->pid)
		run_helper(av, sk, sp[1], st[1]);
	close(sp[1]);
	close(st[1]);
	h->fd = sp[0];
	if (handshake_done(h, st[0], who)) {
		close(st[0]);
		return -1;
	}
	close(st[0]);
	return 0;
err_st:
	close(st[0]);
	close(st[1]);
err_sp:
	close(sp[0]);
	close(sp[1]);
	return -1;
}

int tls_wrap(int sk, const struct tls_opts *o, const char *host, const char *who,
	     struct tls_helper *h)
{
	int ret = wrap(sk, o, host, who, h);

	close(sk);	/* the helper's now, or no use */
	return ret;
}

void tls_unwrap(struct tls_helper *h)
{
	if (h->fd < 0)
		return;
	close(h->fd);
	h->fd = -1;
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
}
