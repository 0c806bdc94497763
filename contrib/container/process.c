// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container's process: its stdio, environment and (with --restrict)
 * runc's default process settings, and `ctr init`, the reaper that runs as
 * pid 1 with --init.
 *
 * A detached container holds no file of the host: its stdio are opened
 * after pivot_root, on its own /dev/null or on the --output file inside
 * it, so that a checkpoint of the container finds nothing outside its
 * mounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctr.h"

static int open_on(const char *path, int flags, const int *fds, int n)
{
	int fd, i;

	fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0) {
		ctr_perr("open %s in the container", path);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (dup2(fd, fds[i]) < 0) {
			ctr_perr("dup2 %s to fd %d", path, fds[i]);
			close(fd);
			return -1;
		}
	close(fd);
	return 0;
}

int process_stdio(const struct ctr_config *c)
{
	static const int in[] = { 0 }, out[] = { 1, 2 };

	if (c->console_socket)
		return 0;	/* the console is the stdio */
	if (c->detach && open_on("/dev/null", O_RDONLY, in, 1))
		return -1;
	if (c->output)
		return open_on(c->output, O_WRONLY | O_CREAT | O_APPEND, out, 2);
	if (c->detach)
		return open_on("/dev/null", O_WRONLY, out, 2);
	return 0;
}

/* runc spec's environment, and the -e additions. */
int process_env(const struct ctr_config *c)
{
	int i;

	if (clearenv() ||
	    setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1) ||
	    setenv("TERM", "xterm", 1) || setenv("HOME", "/root", 1)) {
		ctr_perr("set the environment");
		return -1;
	}
	for (i = 0; i < c->nr_env; i++)
		if (putenv((char *)c->env[i])) {
			ctr_perr("set %s", c->env[i]);
			return -1;
		}
	return 0;
}

static int last_cap(void)
{
	char buf[16];

	if (read_file("/proc/sys/kernel/cap_last_cap", buf, sizeof(buf)) <= 0)
		return CAP_LAST_CAP;
	return atoi(buf);
}

/*
 * runc spec's process: capabilities AUDIT_WRITE, KILL and NET_BIND_SERVICE
 * (bounding, effective, permitted, and ambient, for which the kernel wants
 * them inheritable too), no_new_privs, RLIMIT_NOFILE 1024.
 */
int process_restrict(void)
{
	static const int keep[] = { CAP_AUDIT_WRITE, CAP_KILL, CAP_NET_BIND_SERVICE };
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	struct rlimit rl = { 1024, 1024 };
	unsigned long long set = 0;
	unsigned int i;
	int cap;

	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		ctr_perr("setrlimit NOFILE 1024");
		return -1;
	}
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		set |= 1ULL << keep[i];
	for (cap = 0; cap <= last_cap(); cap++)
		if (!(set & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			ctr_perr("drop capability %d from the bounding set", cap);
			return -1;
		}
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = data[0].inheritable = (__u32)set;
	if (syscall(SYS_capset, &hdr, data)) {
		ctr_perr("capset");
		return -1;
	}
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, keep[i], 0, 0)) {
			ctr_perr("raise ambient capability %d", keep[i]);
			return -1;
		}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		ctr_perr("PR_SET_NO_NEW_PRIVS");
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- ctr init */

static volatile pid_t init_child;

static void forward(int sig)
{
	if (init_child > 0)
		kill(init_child, sig);
}

/*
 * ctr init CMD [ARGS...]: pid 1 of a container that runs CMD as its child
 * (like `docker run --init`): programs written for an ordinary parent, such
 * as the zdtm tests, keep their semantics (they are no init: signals, the
 * orphans they make), and every orphan is reaped.  Exits with CMD's status;
 * the kernel then kills what is left of the pid namespace.  The signals a
 * caller sends to the container (pid 1) go on to CMD.
 */
int init_main(int argc, char **argv)
{
	static const int fwd[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = forward };
	unsigned int i;
	int status;
	pid_t pid;

	if (argc > 0 && !strcmp(argv[0], "--"))
		argc--, argv++;
	if (argc < 1) {
		fprintf(stderr, "usage: ctr init [--] CMD [ARGS...]\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaction(fwd[i], &sa, NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ctr init: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		/* a session of its own, as a test runner starts a test; with a
		 * console the session is the init's, which holds the terminal */
		if (!isatty(0))
			setsid();
		for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
			signal(fwd[i], SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "ctr init: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	init_child = pid;
	for (;;) {
		pid_t got = wait(&status);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return 1;
		if (got != init_child)
			continue;	/* an orphan: reaped, that is all */
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		return 128 + WTERMSIG(status);
	}
}
