// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-terminals (UNIX 98 ptys): a kind of open file for the fd table
 * (file.c).
 *
 * A pair is a master (an open of ptmx: /dev/ptmx, or the ptmx of a devpts
 * mount) and its slave, /dev/pts/N on the devpts instance the master was
 * opened on. Programs print and compare those paths, so the restore must
 * give the pair its old index N on the same instance: a container's
 * devpts is made anew (empty) by the mount part, and the pairs are then
 * recreated on it by opening its ptmx until the kernel hands out N (it
 * always gives the lowest free index; the extra masters are closed).
 *
 * The dump saves, with the master, what belongs to the pair: the slave's
 * termios (TCGETS2 on a master acts on its slave), the window size, the
 * lock (TIOCGPTLCK) and packet mode; with a slave its exclusive mode
 * (TIOCGEXCL). Each description names the pair by its devpts (st_dev) and
 * index, and the restore opens a pair as one object: the master first,
 * then every slave description through the master (TIOCGPTPEER), which
 * needs no path and finds the right instance by itself.
 *
 * The controlling terminal: a slave that is the terminal of the session
 * its holder leads carries the session and its foreground group; the
 * leader takes it back right after its setsid() (the `session` hook),
 * before it forks the tasks that inherit it, and /dev/tty is opened by a
 * helper that takes the pty as its own terminal for a moment.
 *
 * A slave whose master is outside the tree (a shell's terminal, a
 * container's console) needs --shell-job or --orphan-pts-master at dump;
 * restore gives it the terminal of --inherit-fd fd[N]:tty[RDEV:DEV], a new
 * pair whose master goes to the RPC client (--orphan-pts-master), or
 * criu's stdin (--shell-job).
 *
  * What the slave wrote and the master has not read is saved (the master's
 * queue is raw bytes): read at dump and written back through the slave
 * with output processing off, at once and on restore.
 *
 * Refused, one line each: data queued for the slave (the line discipline
 * has echoed it and cut it into lines: writing it back would do it
 * again), consoles, virtual consoles, serial lines, BSD ptys, a terminal
 * whose session leader holds no fd on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <asm/termbits.h>

#include "core/external.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "proc/proc.h"
#include "task/mounts.h"
#include "task/ptrace.h"
#include "task/pty.h"

#define PTMX_MAJOR		5
#define PTMX_MINOR		2
#define PTS_MAJOR		136	/* UNIX98_PTY_SLAVE_MAJOR, 8 majors of 256 */
#define PTS_MAJORS		8
/*
 * The kernel's: open() gives it to every file of a 64-bit task, TIOCGPTPEER
 * only when asked (glibc's O_LARGEFILE is 0 here, and images lack it)
 */
#define KO_LARGEFILE		0100000
#define DEVPTS_MAGIC		0x1cd1
#define MAX_INDEX		(PTS_MAJORS * 256 * 512)	/* well above any kernel.pty.max */
#define MAX_DEVPTS		(1ULL << 40)	/* st_dev of an anonymous superblock */

static int is_pts(dev_t rdev)
{
	return major(rdev) >= PTS_MAJOR && major(rdev) < PTS_MAJOR + PTS_MAJORS;
}

static int is_ptmx(dev_t rdev)
{
	return major(rdev) == PTMX_MAJOR && minor(rdev) == PTMX_MINOR;
}

/* Every tty driver's major that a task may hold: all of them are this kind's. */
static int tty_match(const char *link, const struct stat *st)
{
	unsigned int maj = major(st->st_rdev);

	return S_ISCHR(st->st_mode) && (is_pts(st->st_rdev) || (maj >= 2 && maj <= 5) ||
					(maj >= 128 && maj < PTS_MAJOR) || maj == 188 ||
					maj == 204);
}

static const char *tty_what(dev_t rdev)
{
	switch (major(rdev)) {
	case 5:
		return minor(rdev) == 1 ? "the system console" : "a tty of major 5";
	case 4:
		return minor(rdev) < 64 ? "a virtual console" : "a serial line";
	case 2:
	case 3:
		return "a BSD pty";
	default:
		return major(rdev) >= 128 && major(rdev) < PTS_MAJOR ? "a pty master of an old kind" :
		       "a serial line";
	}
}

/* Bytes the task would read from its end (FIONREAD on a copy of its fd). */
static int queued(const struct fd_dump *f, int ours)
{
	int n = 0;

	if (ioctl(ours, FIONREAD, &n)) {
		pr_perror("Task %d: fd %d (%s): can't learn what is queued", f->pid, f->fd,
			  f->link);
		return -1;
	}
	return n;
}

static int is_devtty(dev_t rdev)
{
	return major(rdev) == 5 && minor(rdev) == 0;
}

static int tty_check(const struct fd_dump *f)
{
	int ours, n;

	if (!is_pts(f->st->st_rdev) && !is_ptmx(f->st->st_rdev) && !is_devtty(f->st->st_rdev)) {
		pr_err("Task %d: fd %d (%s, tty %u:%u) is %s, which is not supported (only pty "
		       "pairs are)", f->pid, f->fd, f->link, major(f->st->st_rdev),
		       minor(f->st->st_rdev), tty_what(f->st->st_rdev));
		return -1;
	}
	ours = ptrace_getfd(f->pid, f->fd);
	if (ours < 0)
		return -1;
	/* a master's queue is saved (dump_master): it holds bytes as they were written */
	n = is_ptmx(f->st->st_rdev) ? 0 : queued(f, ours);
	close(ours);
	if (n > 0)
		pr_err("Task %d: fd %d (%s): %d bytes are queued unread on this end of the pty, "
		       "which is not supported (read them before the dump)", f->pid, f->fd,
		       f->link, n);
	return n ? -1 : 0;
}

/* The devpts instance a master's ptmx belongs to: its own, or the "pts" beside it. */
static int master_devpts(const struct fd_dump *f, uint64_t *dev)
{
	char path[PATH_MAX + 64], *slash;
	struct statfs sfs;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root%s", f->pid, f->link);
	slash = strrchr(path, '/');
	*slash = '\0';
	if (statfs(path, &sfs) || sfs.f_type != DEVPTS_MAGIC) {
		strcpy(slash, "/pts");
		if (statfs(path, &sfs) || sfs.f_type != DEVPTS_MAGIC) {
			pr_err("Task %d: fd %d (%s): no devpts next to it", f->pid, f->fd, f->link);
			return -1;
		}
	}
	if (stat(path, &st)) {
		pr_perror("Task %d: fd %d: can't stat %s", f->pid, f->fd, path);
		return -1;
	}
	*dev = st.st_dev;
	return 0;
}

static int get_termios(int fd, TtyEntry *e)
{
	struct termios2 t;
	TtyTermios *tt;

	if (ioctl(fd, TCGETS2, &t))
		return -1;
	tt = xzalloc(sizeof(*tt) + NCCS);
	if (!tt)
		return -1;
	tty_termios__init(tt);
	tt->iflag = t.c_iflag;
	tt->oflag = t.c_oflag;
	tt->cflag = t.c_cflag;
	tt->lflag = t.c_lflag;
	tt->line = t.c_line;
	tt->cc.data = (uint8_t *)(tt + 1);
	tt->cc.len = NCCS;
	memcpy(tt->cc.data, t.c_cc, NCCS);
	tt->ispeed = t.c_ispeed;
	tt->ospeed = t.c_ospeed;
	e->termios = tt;
	return 0;
}

static int get_winsize(int fd, TtyEntry *e)
{
	struct winsize w;
	TtyWinsize *tw;

	if (ioctl(fd, TIOCGWINSZ, &w))
		return -1;
	tw = xzalloc(sizeof(*tw));
	if (!tw)
		return -1;
	tty_winsize__init(tw);
	tw->row = w.ws_row;
	tw->col = w.ws_col;
	tw->xpixel = w.ws_xpixel;
	tw->ypixel = w.ws_ypixel;
	e->winsize = tw;
	return 0;
}

/* The slave, opened through @master (a locked pair unlocked for the moment). */
static int open_peer(int master, unsigned int index)
{
	int lock = 0, unlock = 0, slave = -1;

	if (!ioctl(master, TIOCGPTLCK, &lock) && (!lock || !ioctl(master, TIOCSPTLCK, &unlock)))
		slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (slave >= 0 && lock && ioctl(master, TIOCSPTLCK, &lock)) {
		close(slave);
		slave = -1;
	}
	if (slave < 0)
		pr_perror("Can't open the slave of pty %u", index);
	return slave;
}

/*
 * Writes @len bytes into the master's queue through @slave, as if the
 * slave wrote them without output processing (OPOST off for the moment).
 */
static int refill(int master, int slave, const uint8_t *buf, size_t len, unsigned int index)
{
	struct termios2 t, raw;
	int ret = -1;

	if (ioctl(master, TCGETS2, &t))
		goto out;
	raw = t;
	raw.c_oflag &= ~OPOST;
	if (ioctl(master, TCSETS2, &raw))
		goto out;
	ret = write(slave, buf, len) == (ssize_t)len ? 0 : -1;
	if (ioctl(master, TCSETS2, &t))
		ret = -1;
out:
	if (ret)
		pr_perror("Can't queue %zu bytes on pty %u", len, index);
	return ret;
}

/* refill() through a slave of our own */
static int requeue(int master, const uint8_t *buf, size_t len, unsigned int index)
{
	int slave = open_peer(master, index), ret;

	if (slave < 0)
		return -1;
	ret = refill(master, slave, buf, len, index);
	close(slave);
	return ret;
}

/*
 * What the slave wrote and the master has not read: read (packet mode
 * off for the moment) and queued again at once, for a tree that goes on.
 * The slave is opened first: no data is taken that can't be put back.
 */
static int save_queue(const struct fd_dump *f, int fd, TtyEntry *e)
{
	int n = queued(f, fd), off = 0, on = 1, slave, ret = -1;
	ssize_t got, r;

	if (n <= 0)
		return n;
	e->queued.data = xmalloc(n);
	slave = e->queued.data ? open_peer(fd, e->index) : -1;
	if (slave < 0 || (e->packet && ioctl(fd, TIOCPKT, &off)))
		goto out;
	for (got = 0; got < n; got += r) {
		r = read(fd, e->queued.data + got, n - got);
		if (r <= 0)
			break;
	}
	if (e->packet && ioctl(fd, TIOCPKT, &on))
		pr_perror("Task %d: fd %d: can't put pty %u back in packet mode", f->pid, f->fd,
			  e->index);
	if (got < n)
		pr_perror("Task %d: fd %d (%s): can't read the %d bytes queued on pty %u",
			  f->pid, f->fd, f->link, n, e->index);
	if (got > 0 && !refill(fd, slave, e->queued.data, got, e->index) && got == n) {
		e->queued.len = n;
		e->has_queued = 1;
		ret = 0;
	}
	pr_debug("Task %d: fd %d: %d bytes queued on pty %u", f->pid, f->fd, n, e->index);
out:
	if (slave >= 0)
		close(slave);
	return ret;
}

static int dump_master(const struct fd_dump *f, int fd, TtyEntry *e)
{
	const char *v = proc_fdinfo_field(f->fdinfo, "tty-index:");
	int lock = 0, pkt = 0;

	if (!v || sscanf(v, "%u", &e->index) != 1) {
		pr_err("Task %d: fdinfo of fd %d (%s) does not show its pty index", f->pid,
		       f->fd, f->link);
		return -1;
	}
	if (master_devpts(f, &e->devpts))
		return -1;
	if (get_termios(fd, e) || get_winsize(fd, e) || ioctl(fd, TIOCGPTLCK, &lock) ||
	    ioctl(fd, TIOCGPKT, &pkt)) {
		pr_perror("Task %d: fd %d (%s): can't read the state of pty %u", f->pid, f->fd,
			  f->link, e->index);
		return -1;
	}
	e->has_locked = e->has_packet = 1;
	e->locked = !!lock;
	e->packet = !!pkt;
	if (!mnt_dump_reaches(f->pid, f->mnt_id, f->link))
		return -1;
	return save_queue(f, fd, e);
}

/* The kernel's encoding of a device, as /proc/PID/stat's tty_nr shows it. */
static unsigned int kdev(dev_t d)
{
	return (minor(d) & 0xff) | (major(d) << 8) | ((minor(d) & ~0xffU) << 12);
}

/* The session, controlling tty and its foreground group of @pid (/proc/PID/stat). */
static int read_ctty(pid_t pid, int *sid, unsigned int *tty, int *tpgid)
{
	char path[64], buf[1024], *p, state;
	int fd, n, ppid, pgrp;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %d %d %u %d", &state, &ppid, &pgrp, sid, tty, tpgid) != 6) {
		pr_perror("Task %d: can't read its session and terminal from %s", pid, path);
		return -1;
	}
	return 0;
}

/* dump: --orphan-pts-master, --shell-job; restore: the options */
static int orphans_ok, shell_ok;
static const struct opts *rst_opts;

/* Tasks whose terminal is a pty of the tree but which do not lead its session. */
struct follower {
	uint64_t devpts;
	uint32_t index;
	pid_t pid;
	int fd;
};

static struct follower *followers;
static int nr_followers;

/*
 * A task holding a slave (@f) that is its controlling terminal: its
 * session leader restores it (TIOCSCTTY) with the foreground group.
 */
static int ctty_seen(const struct fd_dump *f, TtyEntry *e)
{
	unsigned int tty;
	int sid, tpgid;
	pid_t fg;
	struct follower *w;

	if (read_ctty(f->pid, &sid, &tty, &tpgid))
		return -1;
	if (tty != kdev(f->st->st_rdev))
		return 0;
	if (sid != f->pid) {
		w = xpush(followers, nr_followers);
		if (!w)
			return -1;
		*w = (struct follower){ e->devpts, e->index, f->pid, f->fd };
		return 0;
	}
	fg = tpgid > 0 ? proc_ns_pid(tpgid) : 0;
	if (tpgid > 0 && !fg) {
		pr_err("Task %d: the foreground group %d of its terminal %s has no leader, "
		       "which is not supported", f->pid, tpgid, f->link);
		return -1;
	}
	e->has_session = 1;
	e->session = f->ns_pid;
	e->has_fg_pgrp = !!fg;
	e->fg_pgrp = fg;
	return 0;
}

static int dump_slave(const struct fd_dump *f, int fd, TtyEntry *e)
{
	int excl = 0;

	e->index = (major(f->st->st_rdev) - PTS_MAJOR) * 256 + minor(f->st->st_rdev);
	e->devpts = f->st->st_dev;
	if (ioctl(fd, TIOCGEXCL, &excl)) {
		pr_perror("Task %d: fd %d (%s): can't read its exclusive mode", f->pid, f->fd,
			  f->link);
		return -1;
	}
	e->has_exclusive = 1;
	e->exclusive = !!excl;
	/* the pair's state, for a slave whose master is outside (--orphan-pts-master) */
	if (get_termios(fd, e) || get_winsize(fd, e)) {
		pr_perror("Task %d: fd %d (%s): can't read the state of pty %u", f->pid, f->fd,
			  f->link, e->index);
		return -1;
	}
	return ctty_seen(f, e);
}

static int tty_dump_more(const struct fd_dump *f, FileDesc *d)
{
	return d->tty->type == TTY_TYPE__TTY_PTY_SLAVE && !d->tty->has_session ?
	       ctty_seen(f, d->tty) : 0;
}

/* /dev/tty: the task's controlling terminal, a slave of the tree (the pair found later). */
static int dump_devtty(const struct fd_dump *f, TtyEntry *e)
{
	unsigned int tty;
	int sid, tpgid;
	dev_t dev;

	if (read_ctty(f->pid, &sid, &tty, &tpgid))
		return -1;
	dev = makedev((tty >> 8) & 0xfff, (tty & 0xff) | ((tty >> 12) & 0xfff00));
	if (!is_pts(dev)) {
		pr_err("Task %d: fd %d (%s): its controlling terminal (tty %u:%u) is not a pty, "
		       "which is not supported", f->pid, f->fd, f->link, major(dev), minor(dev));
		return -1;
	}
	e->index = (major(dev) - PTS_MAJOR) * 256 + minor(dev);
	return 0;
}

static int tty_dump(const struct fd_dump *f, const FileDesc *same_inode, FileDesc *d)
{
	TtyEntry *e;
	int fd, ret;

	e = xzalloc(sizeof(*e));
	if (!e)
		return -1;
	tty_entry__init(e);
	d->tty = e;
	e->type = is_ptmx(f->st->st_rdev) ? TTY_TYPE__TTY_PTY_MASTER : TTY_TYPE__TTY_PTY_SLAVE;
	orphans_ok = f->opts->orphan_pts_master;
	shell_ok = f->opts->shell_job;
	d->has_mnt_id = 1;
	d->mnt_id = f->mnt_id;
	if (is_devtty(f->st->st_rdev)) {
		e->type = TTY_TYPE__TTY_CTTY;
		return dump_devtty(f, e);
	}
	fd = ptrace_getfd(f->pid, f->fd);
	if (fd < 0)
		return -1;
	ret = e->type == TTY_TYPE__TTY_PTY_MASTER ? dump_master(f, fd, e) : dump_slave(f, fd, e);
	close(fd);
	pr_debug("Task %d: fd %d: pty %s %u on devpts %#llx", f->pid, f->fd,
		 e->type == TTY_TYPE__TTY_PTY_MASTER ? "master" : "slave", e->index,
		 (unsigned long long)e->devpts);
	return ret;
}

static const FileDesc *find_pair(struct file_ref *files, size_t n, uint64_t devpts,
				 uint32_t index, int (*want)(const TtyEntry *e))
{
	size_t i;

	for (i = 0; i < n; i++)
		if (files[i].d->kind == FILE_KIND__FILE_TTY && files[i].d->tty->devpts == devpts &&
		    files[i].d->tty->index == index && want(files[i].d->tty))
			return files[i].d;
	return NULL;
}

static int is_master(const TtyEntry *e)
{
	return e->type == TTY_TYPE__TTY_PTY_MASTER;
}

static int is_ctty(const TtyEntry *e)
{
	return e->has_session;
}

static void free_followers(void)
{
	free(followers);
	followers = NULL;
	nr_followers = 0;
}

/* A terminal of a session whose leader holds no fd on it would be lost. */
static int check_followers(struct file_ref *files, size_t n)
{
	int i, ret = 0;

	for (i = 0; i < nr_followers && !ret; i++) {
		/* a shell job's terminal: the session, like the master, is outside */
		if (find_pair(files, n, followers[i].devpts, followers[i].index, is_ctty) ||
		    !find_pair(files, n, followers[i].devpts, followers[i].index, is_master))
			continue;
		pr_err("Task %d: fd %d: pty %u is its controlling terminal, but its session "
		       "leader holds no fd on it, which is not supported", followers[i].pid,
		       followers[i].fd, followers[i].index);
		ret = -1;
	}
	free_followers();
	return ret;
}

/* /dev/tty's pair: a slave of that index a session leader holds as its terminal. */
static int set_ctty_pair(struct file_ref *files, size_t n, struct file_ref *c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (files[i].d->kind == FILE_KIND__FILE_TTY && is_ctty(files[i].d->tty) &&
		    files[i].d->tty->index == c->d->tty->index) {
			c->d->tty->devpts = files[i].d->tty->devpts;
			return 0;
		}
	pr_err("Task %d: fd %d (%s): its terminal, pty %u, is held by no session leader of "
	       "the tree, which is not supported", c->pid, c->fd, c->d->path, c->d->tty->index);
	return -1;
}

/* Every slave's master is in the tree: an external one is not supported yet. */
static int tty_dump_done(struct file_ref *files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		TtyEntry *s = files[i].d->tty;

		if (files[i].d->kind == FILE_KIND__FILE_TTY && s->type == TTY_TYPE__TTY_CTTY &&
		    set_ctty_pair(files, n, &files[i])) {
			free_followers();
			return -1;
		}
		if (files[i].d->kind != FILE_KIND__FILE_TTY || s->type != TTY_TYPE__TTY_PTY_SLAVE)
			continue;
		if (!find_pair(files, n, s->devpts, s->index, is_master)) {
			if (orphans_ok || shell_ok) {
				pr_info("pty %u: its master is outside the tree: %s", s->index,
					orphans_ok ? "a new pair on restore" : "a terminal of the "
					"restore's (--shell-job, --inherit-fd)");
				continue;
			}
			pr_err("Task %d: fd %d (%s): the master of pty %u is outside the tree (an "
			       "external terminal), which is not supported without --shell-job "
			       "or --orphan-pts-master", files[i].pid, files[i].fd,
			       files[i].d->path, s->index);
			free_followers();
			return -1;
		}
	}
	return check_followers(files, n);
}

static void tty_free(FileDesc *d)
{
	if (!d->tty)
		return;
	free(d->tty->termios);
	free(d->tty->winsize);
	free(d->tty->queued.data);
	free(d->tty);
	d->tty = NULL;
}

static int tty_validate(struct rst_ctx *rc, pid_t pid, const FileDesc *d)
{
	const TtyEntry *e = d->tty;
	int master = e && e->type == TTY_TYPE__TTY_PTY_MASTER;

	if (!e || e->index >= MAX_INDEX || e->devpts >= MAX_DEVPTS || d->path[0] != '/' ||
	    (master && (!e->termios || e->termios->cc.len != NCCS || !e->winsize)) ||
	    (!master && e->type != TTY_TYPE__TTY_PTY_SLAVE && e->type != TTY_TYPE__TTY_CTTY)) {
		pr_err("Task %d: image files.img has an invalid pty #%u", pid, d->id);
		return -1;
	}
	rst_opts = rc->opts;
	if (e->type == TTY_TYPE__TTY_PTY_SLAVE && rc->opts->orphan_pts_master &&
	    pty_handover_open())
		return -1;
	return 0;
}

static uint64_t tty_object(const FileDesc *d)
{
	return d->tty->devpts << 24 | d->tty->index;
}

struct ptmx_at {
	uint64_t mnt_id;
	const char *path;
};

static int open_ptmx(const void *arg)
{
	const struct ptmx_at *p = arg;

	return mnt_open(0, p->mnt_id, p->path, O_RDWR | O_NOCTTY | O_NONBLOCK);
}

/* A new master of index @index, by @path, unless the mounts made it already. */
static int open_master(uint64_t mnt_id, const char *path, unsigned int index)
{
	struct ptmx_at p = { mnt_id, path };
	int fd = pty_take(index);

	return fd >= 0 ? fd : pty_open_index(open_ptmx, &p, index);
}

static int set_termios(int fd, const TtyEntry *e)
{
	const TtyTermios *tt = e->termios;
	struct termios2 t = {
		.c_iflag = tt->iflag, .c_oflag = tt->oflag,
		.c_cflag = tt->cflag, .c_lflag = tt->lflag,
		.c_line = tt->line, .c_ispeed = tt->ispeed, .c_ospeed = tt->ospeed,
	};
	struct winsize w = {
		.ws_row = e->winsize->row, .ws_col = e->winsize->col,
		.ws_xpixel = e->winsize->xpixel, .ws_ypixel = e->winsize->ypixel,
	};
	int pkt = e->packet;

	memcpy(t.c_cc, tt->cc.data, NCCS);
	return ioctl(fd, TCSETS2, &t) || ioctl(fd, TIOCSWINSZ, &w) || ioctl(fd, TIOCPKT, &pkt);
}

/* The descriptions of one pair: exactly one master, and its slaves. */
static int find_master(FileDesc **d, int n)
{
	int i, m = -1;

	for (i = 0; i < n; i++) {
		if (d[i]->tty->type != TTY_TYPE__TTY_PTY_MASTER)
			continue;
		if (m >= 0) {
			pr_err("Image files.img: pty %u has two masters", d[i]->tty->index);
			return -1;
		}
		m = i;
	}
	return m < 0 ? n : m;
}

static int open_slaves(int master, FileDesc **d, int n, int *fds)
{
	int i, excl = 0, unlock = 0;

	if (ioctl(master, TIOCSPTLCK, &unlock)) {
		pr_perror("Can't unlock pty %u", d[0]->tty->index);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (d[i]->tty->type != TTY_TYPE__TTY_PTY_SLAVE)
			continue;
		/* what it is given stays in its f_flags: O_CLOEXEC is the fd's, set apart */
		fds[i] = ioctl(master, TIOCGPTPEER, (d[i]->flags & O_ACCMODE) | KO_LARGEFILE |
			       O_NOCTTY | O_NONBLOCK);
		if (fds[i] >= 0 && fcntl(fds[i], F_SETFD, FD_CLOEXEC)) {
			close(fds[i]);
			fds[i] = -1;
		}
		if (fds[i] < 0) {
			pr_perror("Can't open the slave of pty %u for #%u", d[i]->tty->index,
				  d[i]->id);
			return -1;
		}
		excl |= d[i]->tty->exclusive;
		if (excl && ioctl(fds[i], TIOCEXCL)) {
			pr_perror("Can't make pty %u exclusive", d[i]->tty->index);
			return -1;
		}
	}
	return 0;
}

/*
 * /dev/tty opens the opener's controlling terminal: a helper makes the
 * pty its terminal in a session of its own, opens /dev/tty there and
 * sends it back. Its session ends with it, leaving the pty free for the
 * session leader of the tree.
 */
static int open_devtty(int master, const FileDesc *d)
{
	int sk[2], slave, fd, status;
	pid_t helper;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sk)) {
		pr_perror("Can't create a socket pair to open %s", d->path);
		return -1;
	}
	helper = fork();
	if (!helper) {
		slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
		if (setsid() < 0 || slave < 0 || ioctl(slave, TIOCSCTTY, 0))
			_exit(1);
		fd = mnt_open(0, d->mnt_id, d->path, (d->flags & OPEN_STATUS_MASK) | O_NOCTTY);
		_exit(fd < 0 || send_fd(sk[1], fd));
	}
	close(sk[1]);
	fd = helper < 0 ? -1 : recv_fd(sk[0]);
	close(sk[0]);
	if (helper > 0)
		while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
			;
	if (fd < 0)
		pr_err("Can't open %s as the terminal of pty %u", d->path, d->tty->index);
	return fd;
}

static int open_devttys(int master, FileDesc **d, int n, int *fds)
{
	int i;

	for (i = 0; i < n; i++) {
		if (d[i]->tty->type != TTY_TYPE__TTY_CTTY)
			continue;
		fds[i] = open_devtty(master, d[i]);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

/*
 * A pair whose master was outside the tree: a new one on the slave's
 * devpts, its master handed over to the driver (task/pty.h).
 */
static int open_orphan(FileDesc **d, int n, int *fds)
{
	char path[PATH_MAX + 8], *slash;
	int master, ret = -1;

	snprintf(path, sizeof(path), "%s", d[0]->path);
	slash = strrchr(path, '/');
	strcpy(slash + 1, "ptmx");
	if (!d[0]->tty->termios || d[0]->tty->termios->cc.len != NCCS || !d[0]->tty->winsize) {
		pr_err("Image files.img: pty %u (%s) has no state", d[0]->tty->index, d[0]->path);
		return -1;
	}
	master = open_master(d[0]->mnt_id, path, d[0]->tty->index);
	if (master < 0)
		return -1;
	if (set_termios(master, d[0]->tty))
		pr_perror("Can't give pty %u its termios and window size", d[0]->tty->index);
	else if (!open_slaves(master, d, n, fds) && !open_devttys(master, d, n, fds))
		ret = pty_hand_over(master);
	close(master);
	return ret;
}

/*
 * A pair whose master is outside the tree, given a terminal of the
 * restore's: --inherit-fd fd[N]:tty[RDEV:DEV] (CRIU's key: the slave's
 * device and its devpts', in hex) or, with --shell-job, criu's own stdin.
 * Its slaves share that description; /dev/tty is criu's terminal, which
 * a shell job shares.
 */
static int open_external(FileDesc **d, int n, int *fds)
{
	unsigned int idx = d[0]->tty->index;
	char key[64];
	int ext, i;

	snprintf(key, sizeof(key), "tty[%x:%x]",
		 (unsigned int)makedev(PTS_MAJOR + idx / 256, idx % 256),
		 (unsigned int)d[0]->tty->devpts);
	ext = rst_opts ? inherit_fd_lookup(rst_opts, key) : -1;
	if (ext < 0 && rst_opts && rst_opts->orphan_pts_master)
		return open_orphan(d, n, fds);
	if (ext < 0 && rst_opts && rst_opts->shell_job && isatty(0))
		ext = 0;
	if (ext < 0) {
		pr_err("pty %u (%s): its master was outside the tree: restore with "
		       "--inherit-fd fd[N]:%s, --shell-job or --orphan-pts-master", idx,
		       d[0]->path, key);
		return -1;
	}
	for (i = 0; i < n; i++) {
		fds[i] = d[i]->tty->type == TTY_TYPE__TTY_CTTY ?
			 mnt_open(0, d[i]->mnt_id, d[i]->path,
				  (d[i]->flags & OPEN_STATUS_MASK) | O_NOCTTY) :
			 fcntl(ext, F_DUPFD_CLOEXEC, 0);
		if (fds[i] < 0) {
			pr_perror("pty %u: can't take %s for #%u", idx, key, d[i]->id);
			return -1;
		}
	}
	return 0;
}

static int tty_open_object(struct rst_ctx *rc, int in_tree, void **own, FileDesc **d, int n,
			   int *fds)
{
	int i, m, lock;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	m = find_master(d, n);
	if (m < 0)
		return -1;
	if (m == n) {
		if (open_external(d, n, fds))
			goto err;
		goto flags;
	}
	fds[m] = open_master(d[m]->mnt_id, d[m]->path, d[m]->tty->index);
	if (fds[m] < 0)
		goto err;
	lock = d[m]->tty->locked;
	if (set_termios(fds[m], d[m]->tty)) {
		pr_perror("Can't give pty %u its termios, window size and mode", d[m]->tty->index);
		goto err;
	}
	if (open_slaves(fds[m], d, n, fds) ||
	    (d[m]->tty->has_queued &&
	     requeue(fds[m], d[m]->tty->queued.data, d[m]->tty->queued.len, d[m]->tty->index)) ||
	    open_devttys(fds[m], d, n, fds) || ioctl(fds[m], TIOCSPTLCK, &lock))
		goto err;
flags:
	for (i = 0; i < n; i++)
		if (fcntl(fds[i], F_SETFL, d[i]->flags & (O_NONBLOCK | O_APPEND | O_ASYNC))) {
			pr_perror("Can't set the flags of %s", d[i]->path);
			goto err;
		}
	pr_debug("pty %u: recreated with %d description(s)", d[0]->tty->index, n);
	return 0;
err:
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return -1;
}

static pid_t tty_installer(const FileDesc *d)
{
	return d->tty->has_session ? d->tty->session : 0;
}

/* In the session leader, before it forks its session: its terminal. */
static int tty_session(pid_t pid, int fd, const FileDesc *d)
{
	if (ioctl(fd, TIOCSCTTY, 0)) {
		pr_perror("Task %d: can't make pty %u its controlling terminal", pid,
			  d->tty->index);
		return -1;
	}
	return 0;
}

/* In the session leader, once the session's groups exist: the foreground one. */
static int tty_install(pid_t pid, int fd, const FileDesc *d)
{
	pid_t fg = d->tty->fg_pgrp;

	if (d->tty->has_fg_pgrp && ioctl(fd, TIOCSPGRP, &fg)) {
		pr_perror("Task %d: can't give pty %u the foreground group %d", pid,
			  d->tty->index, fg);
		return -1;
	}
	return 0;
}

static void tty_restored(void **data, int failed)
{
	pty_handover_close();
}

const struct file_kind fk_tty = {
	.name = "pty",
	.kind = FILE_KIND__FILE_TTY,
	.match = tty_match,
	.check = tty_check,
	.dump = tty_dump,
	.dump_more = tty_dump_more,
	.dump_done = tty_dump_done,
	.free = tty_free,
	.validate = tty_validate,
	.object = tty_object,
	.open_object = tty_open_object,
	.installer = tty_installer,
	.install = tty_install,
	.session = tty_session,
	.restored = tty_restored,
};
