// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pty pairs on a devpts instance of the test's own (in a mount namespace
 * of its own, as a container has): pair 0 in packet mode, without echo,
 * with its own termios and window size; a hole at index 1 (a pair closed
 * before the dump); pair 2 locked and exclusive, its slave held by a
 * child. After restore each end is the same /dev/pts path and index, the
 * termios, window size, packet, lock and exclusive modes are as they were,
 * what each slave wrote before the dump and its master had not read is
 * still there, and both pairs carry data both ways exactly as they did
 * before the dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <asm/termbits.h>

#include "mnt.h"
#include "zdtm.h"

struct end {
	int fd;
	char path[256];
};

struct pair {
	struct end m, s;
	struct termios2 t;
	struct winsize w;
	int pkt, lock, excl;
	char to_s[64], to_m[64];	/* what a ping and a pong read before the dump */
	int n_to_s, n_to_m;
};

static void link_of(struct end *e)
{
	char p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", e->fd);
	n = readlink(p, e->path, sizeof(e->path) - 1);
	if (n < 0)
		fail_errno("readlink %s", p);
	e->path[n] = '\0';
}

static int open_master(const char *ptmx, int want)
{
	int fd = open(ptmx, O_RDWR | O_NOCTTY), n = -1, unlock = 0;

	if (fd < 0 || ioctl(fd, TIOCGPTN, &n) || ioctl(fd, TIOCSPTLCK, &unlock))
		fail_errno("open %s", ptmx);
	if (n != want)
		fail("%s gave index %d, not %d", ptmx, n, want);
	return fd;
}

/*
 * Reads until @end has come (the ldisc may hand it over in pieces); in
 * packet mode each read starts with a status byte, which must be 0 (data).
 */
static int readall(int fd, char *buf, int size, const char *end, int pkt)
{
	char tmp[64];
	int n, got = 0;

	for (int tries = 0; tries < 500 && !memmem(buf, got, end, strlen(end)); tries++) {
		n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno != EAGAIN)
			return -1;
		if (n <= 0) {
			usleep(10000);
			continue;
		}
		if (pkt && tmp[0])
			fail("packet mode: status byte %#x", tmp[0]);
		if (got + n - pkt > size)
			return -1;
		memcpy(buf + got, tmp + pkt, n - pkt);
		got += n - pkt;
	}
	return got;
}

/* A ping master -> slave and a pong slave -> master; what each side reads. */
static void exchange(struct pair *p, char *to_s, int *n_to_s, char *to_m, int *n_to_m)
{
	/* one after the other: an echo of the ping comes before the pong */
	if (write(p->m.fd, "ping\n", 5) != 5)
		fail_errno("write on %s", p->m.path);
	*n_to_s = readall(p->s.fd, to_s, 64, "ping\n", 0);
	if (write(p->s.fd, "pong\n", 5) != 5)
		fail_errno("write on %s", p->s.path);
	*n_to_m = readall(p->m.fd, to_m, 64, "pong\r\n", p->pkt);
	if (*n_to_s <= 0 || *n_to_m <= 0)
		fail("%s: nothing came through (%d, %d)", p->s.path, *n_to_s, *n_to_m);
}

static void state(struct pair *p)
{
	if (ioctl(p->m.fd, TCGETS2, &p->t) || ioctl(p->m.fd, TIOCGWINSZ, &p->w) ||
	    ioctl(p->m.fd, TIOCGPKT, &p->pkt) || ioctl(p->m.fd, TIOCGPTLCK, &p->lock) ||
	    ioctl(p->s.fd, TIOCGEXCL, &p->excl))
		fail_errno("state of %s", p->s.path);
	link_of(&p->m);
	link_of(&p->s);
}

/* A line the slave writes and the master leaves unread across the dump. */
static void leave(struct pair *p, const char *line)
{
	int n = 0;

	if (write(p->s.fd, line, strlen(line)) != (ssize_t)strlen(line))
		fail_errno("write %s", p->s.path);
	/* the ldisc takes it in asynchronously: until it is all there */
	for (int i = 0; i < 500 && n < (int)strlen(line) + 1; i++) {
		if (ioctl(p->m.fd, FIONREAD, &n))
			fail_errno("FIONREAD");
		usleep(n < (int)strlen(line) + 1 ? 10000 : 0);
	}
}

static void left(struct pair *p, const char *want)
{
	char buf[64];
	int n;

	n = readall(p->m.fd, buf, sizeof(buf), want, p->pkt);
	if (n != (int)strlen(want) || memcmp(buf, want, n))
		fail("%s: the master reads %d bytes, not the %zu left unread before the dump",
		     p->s.path, n, strlen(want));
}

static void compare(struct pair *old, const char *unread)
{
	struct pair now = *old;
	char to_s[64], to_m[64];
	int n_to_s, n_to_m;

	left(old, unread);
	state(&now);
	if (strcmp(now.m.path, old->m.path) || strcmp(now.s.path, old->s.path))
		fail("the ends are %s and %s, were %s and %s", now.m.path, now.s.path,
		     old->m.path, old->s.path);
	if (memcmp(&now.t, &old->t, sizeof(now.t)))
		fail("%s: termios differ (lflag %#x, was %#x)", now.s.path, now.t.c_lflag,
		     old->t.c_lflag);
	if (memcmp(&now.w, &old->w, sizeof(now.w)))
		fail("%s: window %ux%u, was %ux%u", now.s.path, now.w.ws_row, now.w.ws_col,
		     old->w.ws_row, old->w.ws_col);
	if (now.pkt != old->pkt || now.lock != old->lock || now.excl != old->excl)
		fail("%s: packet %d lock %d excl %d, were %d %d %d", now.s.path, now.pkt,
		     now.lock, now.excl, old->pkt, old->lock, old->excl);
	exchange(&now, to_s, &n_to_s, to_m, &n_to_m);
	if (n_to_s != old->n_to_s || memcmp(to_s, old->to_s, n_to_s) ||
	    n_to_m != old->n_to_m || memcmp(to_m, old->to_m, n_to_m))
		fail("%s: the exchange gave %d and %d bytes, not %d and %d as before",
		     now.s.path, n_to_s, n_to_m, old->n_to_s, old->n_to_m);
}

int main(int argc, char **argv)
{
	static struct pair p0, p2;
	const char *pts, *ptmx;
	int hole, lock = 1, status;
	pid_t child;

	test_init(argc, argv);
	mnt_enter_ns();
	pts = mnt_abs("pts");
	if (mkdir(pts, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", pts);
	if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666"))
		fail_errno("mount devpts on %s", pts);
	ptmx = mnt_abs("pts/ptmx");

	p0.m.fd = open_master(ptmx, 0);
	hole = open_master(ptmx, 1);
	p2.m.fd = open_master(ptmx, 2);
	close(hole);
	p0.s.fd = open(mnt_abs("pts/0"), O_RDWR | O_NOCTTY | O_NONBLOCK);
	p2.s.fd = open(mnt_abs("pts/2"), O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (p0.s.fd < 0 || p2.s.fd < 0 || fcntl(p0.m.fd, F_SETFL, O_NONBLOCK) ||
	    fcntl(p2.m.fd, F_SETFL, O_NONBLOCK))
		fail_errno("open the slaves");

	if (ioctl(p0.m.fd, TCGETS2, &p0.t))
		fail_errno("TCGETS2");
	p0.t.c_lflag &= ~(ECHO | ECHOE | ECHOK);
	p0.t.c_cc[VINTR] = 0x07;
	p0.t.c_ospeed = p0.t.c_ispeed = 57600;
	p0.t.c_cflag = (p0.t.c_cflag & ~CBAUD) | BOTHER;
	p0.w = (struct winsize){ .ws_row = 33, .ws_col = 77, .ws_xpixel = 5, .ws_ypixel = 9 };
	p0.pkt = 1;
	if (ioctl(p0.m.fd, TCSETS2, &p0.t) || ioctl(p0.m.fd, TIOCSWINSZ, &p0.w) ||
	    ioctl(p0.m.fd, TIOCPKT, &p0.pkt))
		fail_errno("set up %s", mnt_abs("pts/0"));
	if (ioctl(p2.m.fd, TIOCSPTLCK, &lock) || ioctl(p2.s.fd, TIOCEXCL))
		fail_errno("lock pts/2");

	exchange(&p0, p0.to_s, &p0.n_to_s, p0.to_m, &p0.n_to_m);
	exchange(&p2, p2.to_s, &p2.n_to_s, p2.to_m, &p2.n_to_m);
	state(&p0);
	state(&p2);
	leave(&p0, "left0\n");
	leave(&p2, "left2\n");

	/* a child holds pair 2's slave too: the pair spans two tasks */
	child = fork();
	if (child < 0)
		fail_errno("fork");
	if (!child) {
		pause();
		_exit(0);
	}

	test_ready();
	test_waitsig();

	compare(&p0, "left0\r\n");
	compare(&p2, "left2\r\n");
	kill(child, SIGKILL);
	if (waitpid(child, &status, 0) != child)
		fail_errno("waitpid");
	pass();
}
