// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctr-service: the workload of the container test, a small service whose
 * state lives in its processes' memory, so that a restart can be told from
 * a restore.
 *
 *	ctr-service [--count FILE] [--socket PATH|none] [--interval MS] [--tcp PORT]
 *		    [--udp IP:PORT] [--private-tmp]
 *
 * Runs as the container's init (pid 1) with two children:
 *  - the counter: every interval (50 ms) counts one up and writes the
 *    number, padded, at the start of FILE (/dev/shm/count: on a tmpfs of
 *    the container), through an fd it keeps open; with --udp, it also
 *    answers each datagram to IP:PORT with "count N\n" once a tick;
 *  - the server: answers every connection to the unix socket PATH
 *    (/run/service.sock) with one line "count N served K\n", N read from
 *    FILE and K the connections it served before this one.
 * After a restore the count goes on from where it was and K from where it
 * was; a restarted service would begin again at 1 and 0. --socket none:
 * no server (a listening socket is a piece of state of its own: the
 * mount tests check the counter alone).
 *
 * --private-tmp: the counter runs with a /tmp of its own, as systemd's
 * PrivateTmp makes one: it unshares its mount namespace, makes every mount
 * a slave, mounts a tmpfs on /tmp and writes the count to /tmp/count too
 * (the container's own /tmp never sees it).
 *
 * SIGTERM: the children are killed with it, the init exits 0.  If a child dies
 * otherwise, the init exits 1 (the test sees the container gone).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static volatile pid_t children[2];

/* The children die of SIGTERM's default action; the init passes it on
 * from its handler, which no wait() can miss. */
static void on_term(int sig)
{
	int i;

	stop = 1;
	for (i = 0; i < 2; i++)
		if (children[i] > 0)
			kill(children[i], SIGTERM);
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "ctr-service: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int udp_fd = -1;		/* --udp: the counter's socket */
static int private_tmp;		/* --private-tmp */
static int tmp_fd = -1;		/* --private-tmp: /tmp/count in the counter's own /tmp */

/* The counter's own /tmp: a mount namespace of its own, a tmpfs only it sees. */
static void make_private_tmp(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) ||
	    mount("private-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=1777"))
		die("a private /tmp");
	tmp_fd = open("/tmp/count", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tmp_fd < 0)
		die("/tmp/count");
}

/* --udp IP:PORT: a UDP socket bound there (an address of the container's own) */
static void bind_udp(const char *arg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *colon = strrchr(arg, ':');
	char ip[INET_ADDRSTRLEN] = "";

	if (!colon || colon - arg >= (long)sizeof(ip)) {
		errno = EINVAL;
		die(arg);
	}
	memcpy(ip, arg, colon - arg);
	sin.sin_port = htons((unsigned short)atoi(colon + 1));
	udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1 || udp_fd < 0 ||
	    bind(udp_fd, (struct sockaddr *)&sin, sizeof(sin)))
		die(arg);
}

/* Every datagram waiting gets the count as its answer. */
static void answer_udp(unsigned long long n)
{
	struct sockaddr_storage from;
	socklen_t len = sizeof(from);
	char buf[64];
	int l;

	while (udp_fd >= 0 && recvfrom(udp_fd, buf, sizeof(buf), 0,
				       (struct sockaddr *)&from, &len) >= 0) {
		l = snprintf(buf, sizeof(buf), "count %llu\n", n);
		sendto(udp_fd, buf, l, 0, (struct sockaddr *)&from, len);
		len = sizeof(from);
	}
}

static __attribute__((noreturn)) void counter(const char *path, long interval_ms)
{
	struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };
	unsigned long long n = 0;
	char buf[32];
	int fd, len;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	if (private_tmp)
		make_private_tmp();
	for (;;) {
		len = snprintf(buf, sizeof(buf), "%20llu\n", ++n);
		if (pwrite(fd, buf, len, 0) != len ||
		    (tmp_fd >= 0 && pwrite(tmp_fd, buf, len, 0) != len))
			die("write the count");
		answer_udp(n);
		nanosleep(&ts, NULL);
	}
}

static unsigned long long read_count(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return strtoull(buf, NULL, 10);
}

static __attribute__((noreturn)) void server(const char *sock_path, const char *count_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned long long served = 0;
	char buf[96];
	int fd, c, len;

	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		die(sock_path);
	}
	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16))
		die(sock_path);
	for (;;) {
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		len = snprintf(buf, sizeof(buf), "count %llu served %llu\n",
			       read_count(count_path), served++);
		if (write(c, buf, len) != len)
			fprintf(stderr, "ctr-service: a client left early\n");
		close(c);
	}
}

/*
 * --tcp PORT: the init also holds a TCP socket listening on 127.0.0.1:PORT
 * and both ends of a connection to it (nothing is served on it): a TCP
 * connection, which criu refuses without --tcp-established, for the
 * tests of a refused dump of a whole container.
 */
static void listen_tcp(const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, c, one = 1;

	sin.sin_port = htons((unsigned short)atoi(port));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || c < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 4) ||
	    connect(c, (struct sockaddr *)&sin, sizeof(sin)) ||
	    accept4(fd, NULL, NULL, SOCK_CLOEXEC) < 0)
		die("tcp");
}

static pid_t spawn(void (*fn)(const char *, const char *), const char *a, const char *b)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		children[0] = children[1] = 0;
		signal(SIGTERM, SIG_DFL);
		fn(a, b);
		exit(1);
	}
	return pid;
}

static void counter_main(const char *path, const char *interval)
{
	counter(path, atol(interval));
}

static void server_main(const char *sock, const char *count)
{
	server(sock, count);
}

/* Waits for the children; reaps orphans (it may be pid 1). */
static int supervise(pid_t a, pid_t b)
{
	int status, left = b ? 2 : 1, ret = 0;
	pid_t pid;

	while (left) {
		pid = wait(&status);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		if (pid != a && pid != b)
			continue;
		left--;
		if (!stop) {
			fprintf(stderr, "ctr-service: child %d ended (status %#x)\n", pid, status);
			ret = 1;
			stop = 1;
			if (left)
				kill(pid == a ? b : a, SIGTERM);
		}
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "tcp", required_argument, NULL, 't' },
		{ "udp", required_argument, NULL, 'u' },
		{ "private-tmp", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *count = "/dev/shm/count", *sock = "/run/service.sock";
	const char *interval = "50", *tcp = NULL;
	struct sigaction sa = { .sa_handler = on_term };
	pid_t a, b;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'c')
			count = optarg;
		else if (opt == 's')
			sock = optarg;
		else if (opt == 'i' && atol(optarg) > 0)
			interval = optarg;
		else if (opt == 't' && atoi(optarg) > 0 && atoi(optarg) < 65536)
			tcp = optarg;
		else if (opt == 'u')
			bind_udp(optarg);
		else if (opt == 'p')
			private_tmp = 1;
		else {
			fprintf(stderr, "usage: ctr-service [--count FILE] [--socket PATH|none] "
				"[--interval MS] [--tcp PORT] [--udp IP:PORT] [--private-tmp]\n");
			return 2;
		}
	}
	if (tcp)
		listen_tcp(tcp);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);	/* no SA_RESTART: wait() must see it */
	a = spawn(counter_main, count, interval);
	children[0] = a;
	b = strcmp(sock, "none") ? spawn(server_main, sock, count) : 0;
	children[1] = b;
	if (stop) {		/* SIGTERM came before the pids were known */
		kill(a, SIGTERM);
		if (b)
			kill(b, SIGTERM);
	}
	return supervise(a, b);
}
