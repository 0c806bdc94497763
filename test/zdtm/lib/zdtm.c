// SPDX-License-Identifier: GPL-2.0-only
/*
 * zdtm test library: option parsing, the ready/verdict protocol with the
 * runner, and a few optional "extra" resources that the error-path tests of
 * the runner ask for (a thread, a child, a socket, a deleted file, a large
 * touched memory area).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtm.h"

volatile sig_atomic_t test_sigterm;
const char *test_name = "zdtm";

static char outfile[PATH_MAX];
static char readyfile[PATH_MAX];
static double gap = -1;
static const char *extra;
static int pidns;
static int ready;		/* test_ready() was called */

/* state of the extras */
static int extra_threads;
static pid_t extra_child = -1;
static int extra_fd = -1;
static unsigned char *extra_mem;
static size_t extra_mem_size;

static void sigterm_handler(int sig)
{
	int saved = errno;

	test_sigterm = 1;
	errno = saved;
}

static void die(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(2, buf, n);
	exit(2);
}

static void abspath(char *dst, const char *src)
{
	char cwd[PATH_MAX];

	if (src[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		snprintf(dst, PATH_MAX, "%s", src);
		return;
	}
	if (snprintf(dst, PATH_MAX, "%s/%s", cwd, src) >= PATH_MAX)
		die("%s: path too long", test_name);
}

/*
 * --pidns: the test goes on as the init (pid 1) of a new pid namespace and
 * the leader of a new session; this process stays outside, waits for it and
 * exits with its status. The init's handler makes SIGTERM deliverable from
 * outside (an init only gets the signals it handles).
 */
static void become_pidns_init(void)
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		die("%s: unshare(CLONE_NEWPID): %m", test_name);
	pid = fork();
	if (pid < 0)
		die("%s: fork: %m", test_name);
	if (pid == 0) {
		/* until it is ready (and the runner knows it), it dies with the launcher */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || setsid() < 0)
			die("%s: setsid: %m", test_name);
		return;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			exit(2);
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

void test_init(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "outfile", required_argument, NULL, 'o' },
		{ "readyfile", required_argument, NULL, 'r' },
		{ "gap", required_argument, NULL, 'g' },
		{ "extra", required_argument, NULL, 'x' },
		{ "pidns", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	const char *slash;
	int c;

	slash = strrchr(argv[0], '/');
	test_name = slash ? slash + 1 : argv[0];

	while ((c = getopt_long(argc, argv, "+o:r:g:x:n", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			abspath(outfile, optarg);
			break;
		case 'r':
			abspath(readyfile, optarg);
			break;
		case 'g':
			gap = strtod(optarg, NULL);
			break;
		case 'x':
			extra = optarg;
			break;
		case 'n':
			pidns = 1;
			break;
		default:
			die("usage: %s --outfile F --readyfile R [--gap S] [--extra KIND] [--pidns]",
			    test_name);
		}
	}
	if (!outfile[0])
		snprintf(outfile, sizeof(outfile), "%s.out", test_name);
	if (gap < 0) {
		const char *env = getenv("ZDTM_GAP");

		gap = env ? strtod(env, NULL) : 0;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sigterm_handler;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: blocking calls must see the signal */
	if (sigaction(SIGTERM, &sa, NULL))
		die("%s: sigaction: %m", test_name);
	if (pidns)
		become_pidns_init();
}

int test_pidns(void)
{
	return pidns;
}

pid_t test_host_pid(void)
{
	char buf[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return getpid();
	buf[n] = 0;
	return atoi(buf);
}

double test_gap(void)
{
	return gap;
}

static void rebase(char *path, const char *root)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) || path[n] != '/')
		die("%s: %s is not under the new root %s", test_name, path, root);
	memmove(path, path + n, strlen(path + n) + 1);
}

void test_chroot(const char *dir)
{
	char root[PATH_MAX];

	abspath(root, dir);
	if (chroot(dir))
		fail_errno("chroot(%s)", dir);
	rebase(outfile, root);
	if (readyfile[0])
		rebase(readyfile, root);
}

static void *extra_thread_fn(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/*
 * An established TCP connection over loopback, both ends ours (the
 * listener closed): criu refuses it without --tcp-established. Returns
 * one end; the other stays open, unnamed.
 */
static int extra_connection(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l, c, s;

	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &len) || connect(c, (void *)&a, sizeof(a)))
		fail_errno("an extra TCP connection");
	s = accept(l, NULL, NULL);
	if (s < 0)
		fail_errno("accept the extra TCP connection");
	close(l);
	return c;
}

static void extra_setup(void)
{
	if (!extra)
		return;

	if (!strcmp(extra, "thread")) {
		sigset_t all, old;
		pthread_t t;

		/* the thread must never take SIGTERM away from the main one */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&t, NULL, extra_thread_fn, NULL))
			fail("pthread_create failed");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		extra_threads = 1;
	} else if (!strcmp(extra, "child")) {
		extra_child = fork();
		if (extra_child < 0)
			fail_errno("fork");
		if (extra_child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
	} else if (!strcmp(extra, "socket")) {
		extra_fd = extra_connection();
	} else if (!strcmp(extra, "deleted")) {
		char name[64];

		snprintf(name, sizeof(name), "%s.deleted.%d", test_name, getpid());
		extra_fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (extra_fd < 0)
			fail_errno("open %s", name);
		if (write(extra_fd, "deleted\n", 8) != 8)
			fail_errno("write %s", name);
		if (unlink(name))
			fail_errno("unlink %s", name);
	} else if (!strncmp(extra, "mem=", 4)) {
		size_t i;

		extra_mem_size = strtoul(extra + 4, NULL, 0) << 20;
		extra_mem = mmap(NULL, extra_mem_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (extra_mem == MAP_FAILED)
			fail_errno("mmap %zu", extra_mem_size);
		for (i = 0; i < extra_mem_size; i += sizeof(unsigned long long))
			*(unsigned long long *)(extra_mem + i) = test_pattern(7, i);
	} else {
		fail("unknown --extra %s", extra);
	}
}

/* Returns an error text or NULL when the extra resource is intact. */
static const char *extra_check(void)
{
	static char why[128];

	if (extra_mem) {
		size_t i;

		for (i = 0; i < extra_mem_size; i += sizeof(unsigned long long)) {
			if (*(unsigned long long *)(extra_mem + i) != test_pattern(7, i)) {
				snprintf(why, sizeof(why),
					 "extra memory differs at offset %zu", i);
				return why;
			}
		}
	}
	if (extra_fd >= 0 && fcntl(extra_fd, F_GETFD) < 0)
		return "extra fd is gone";
	if (extra_threads) {
		char buf[64];
		const char *n = test_status_field("Threads", buf, sizeof(buf));

		if (!n || atoi(n) != 1 + extra_threads) {
			snprintf(why, sizeof(why), "%s threads, not %d",
				 n ? n : "?", 1 + extra_threads);
			return why;
		}
	}
	if (extra_child > 0) {
		if (kill(extra_child, 0))
			return "extra child is gone";
		kill(extra_child, SIGKILL);
		waitpid(extra_child, NULL, 0);
		extra_child = -1;
	}
	return NULL;
}

void test_ready(void)
{
	char tmp[PATH_MAX + 8], buf[32];
	int fd, n;

	ready = 1;
	extra_setup();
	/* from now on the runner kills it itself; a restored one has criu as parent */
	if (pidns)
		prctl(PR_SET_PDEATHSIG, 0);
	if (!readyfile[0])
		return;

	snprintf(tmp, sizeof(tmp), "%s.tmp", readyfile);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		fail_errno("open %s", tmp);
	/* the runner's view of us: not 1 with --pidns */
	n = snprintf(buf, sizeof(buf), "%d\n", pidns ? test_host_pid() : getpid());
	if (write(fd, buf, n) != n)
		fail_errno("write %s", tmp);
	close(fd);
	if (rename(tmp, readyfile))
		fail_errno("rename %s", tmp);
}

/*
 * The raw system calls keep the mask exact: glibc's wrappers quietly drop
 * its internal signals 32 and 33, which a test may have blocked.
 */
void test_waitsig(void)
{
	unsigned long long term = 1ULL << (SIGTERM - 1), old, wait;

	/* block SIGTERM so that checking the flag and sleeping is atomic */
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &term, &old, sizeof(old));
	wait = old & ~term;
	while (!test_sigterm)
		syscall(SYS_rt_sigsuspend, &wait, sizeof(wait));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

long long test_waitsig_stall(void)
{
	struct timespec tick = { 0, 1000000 }, ts;
	long long last, now, stall = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	last = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	while (!test_sigterm) {
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec * 1000000000LL + ts.tv_nsec;
		if (now - last > stall)
			stall = now - last;
		last = now;
	}
	return stall;
}

static void vmsg(int fd, const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	int n, m;

	n = snprintf(buf, sizeof(buf), "%s", prefix);
	m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if (m > (int)sizeof(buf) - n - 2)
		m = sizeof(buf) - n - 2;
	n += m;
	buf[n++] = '\n';
	(void)!write(fd, buf, n);
}

void test_msg(const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s[%d]: ", test_name, getpid());
	va_start(ap, fmt);
	vmsg(1, prefix, fmt, ap);
	va_end(ap);
}

/*
 * Writes "PREFIX<message>" to the out file and exits with @code: the
 * verdict the runner reads (PASS, "FAIL: why" or "SKIP: why").
 */
static void __attribute__((noreturn)) verdict(int code, const char *prefix, const char *fmt,
					      va_list ap)
{
	int saved = errno, fd;

	fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		char msg[PATH_MAX + 128];

		snprintf(msg, sizeof(msg), "%s: cannot open %s: %s: %s", test_name, outfile,
			 strerror(errno), prefix);
		errno = saved;
		vmsg(2, msg, fmt, ap);
		exit(2);
	}
	errno = saved;
	vmsg(fd, prefix, fmt, ap);
	close(fd);
	exit(code);
}

static void __attribute__((noreturn)) verdict_va(int code, const char *prefix,
						 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict(code, prefix, fmt, ap);
	va_end(ap);
}

void pass(void)
{
	const char *why = extra_check();

	if (why) {
		test_msg("FAIL: %s", why);
		verdict_va(1, "FAIL: ", "%s", why);
	}
	test_msg("PASS");
	verdict_va(0, "", "PASS");
}

/*
 * Logs "WHAT: why" with our name and pid, then writes it as the verdict
 * and exits with @code. errno is the caller's (for %m).
 */
static void __attribute__((noreturn)) conclude(int code, const char *what, const char *fmt,
					       va_list ap)
{
	int saved = errno;
	char prefix[128];
	va_list cp;

	va_copy(cp, ap);
	snprintf(prefix, sizeof(prefix), "%s[%d]: %s: ", test_name, getpid(), what);
	vmsg(1, prefix, fmt, cp);
	va_end(cp);
	snprintf(prefix, sizeof(prefix), "%s: ", what);
	errno = saved;
	verdict(code, prefix, fmt, ap);
}

void fail(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (extra_child > 0) {
		kill(extra_child, SIGKILL);
		waitpid(extra_child, NULL, 0);
	}
	va_start(ap, fmt);
	errno = saved;
	conclude(1, "FAIL", fmt, ap);
}

void skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* criu may have been at the task: what it did must be checked, not skipped */
	if (ready)
		conclude(1, "FAIL: skip() after test_ready()", fmt, ap);
	conclude(TEST_EXIT_SKIP, "SKIP", fmt, ap);
}

ssize_t test_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return len;
}

char test_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

const char *test_status_field(const char *key, char *buf, size_t size)
{
	static char status[8192];
	size_t klen = strlen(key);
	char *p, *e;

	if (test_read_file("/proc/self/status", status, sizeof(status)) < 0)
		return NULL;
	for (p = status; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		e = strchrnul(p, '\n');
		snprintf(buf, size, "%.*s", (int)(e - p), p);
		return buf;
	}
	return NULL;
}

pid_t test_find_child(const char *comm)
{
	char path[64], buf[4096], name[32];
	char *p, *end;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", getpid());
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		fail_errno("read %s", path);
	for (p = buf; *p; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (test_read_file(path, name, sizeof(name)) < 0)
			continue;
		name[strcspn(name, "\n")] = 0;
		if (!strcmp(name, comm))
			return pid;
	}
	return 0;
}

int test_tkill_code(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set, old;
	siginfo_t si;

	sigemptyset(&set);
	sigaddset(&set, 50);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (syscall(SYS_tgkill, getpid(), gettid(), 50))
		fail_errno("tgkill");
	if (sigtimedwait(&set, &si, &zero) != 50)
		fail_errno("sigtimedwait");
	sigprocmask(SIG_SETMASK, &old, NULL);
	return si.si_code;
}

static sigjmp_buf fault_jb;

static void fault_segv(int sig)
{
	siglongjmp(fault_jb, 1);
}

int test_faults(volatile unsigned char *addr)
{
	struct sigaction sa = { .sa_handler = fault_segv }, old;
	int ret;

	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(fault_jb, 1) == 0) {
		(void)*addr;
		ret = 0;
	} else {
		ret = 1;
	}
	sigaction(SIGSEGV, &old, NULL);
	return ret;
}

void test_task_fail(int root, const char *who, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (root)
		fail("%s: %s", who, buf);
	test_msg("FAIL: %s (%d): %s", who, getpid(), buf);
	_exit(1);
}

int test_hold_outside(int keep, int drop)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		fail_errno("pipe");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		if (fork() == 0) {
			close(p[1]);
			if (drop >= 0)
				close(drop);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	close(p[0]);
	close(keep);
	return p[1];
}

int test_ask_lo(void)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
		       .nlmsg_flags = NLM_F_REQUEST },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = 1 },
	};
	int s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);

	if (s < 0 || send(s, &req, sizeof(req), 0) != sizeof(req))
		fail_errno("ask rtnetlink about lo");
	return s;
}
