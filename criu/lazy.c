// SPDX-License-Identifier: GPL-2.0
/*
 * criu lazy-pages: serves the private pages of the checkpoint in -D to a
 * restore --lazy-pages (parts/mm-lazy.c) through each task's userfaultfd.
 *
 * It listens on lazy-pages.socket in the work directory, takes one
 * restore's connection and, per task, the areas left empty and the
 * userfaultfd registered on them. The task's pages are looked up in the
 * images as restore does (mm_check_pages: its own store, its parent's,
 * the pre-dumps' below). What is still to come is a sorted list of pieces
 * (address, store, offset). A fault gets the pieces around it at once
 * (UFFDIO_COPY), or a zero page where the images hold nothing; between
 * faults the rest is copied in chunks. The task's events keep the list
 * true: an unmapped or dropped (MADV_DONTNEED) range leaves it, a moved
 * one moves, a forked child gets a copy of it and its own userfaultfd:
 * the pages its parent had not received yet are missing in the child too.
 * While an event is unread the kernel refuses copies (EAGAIN): the events
 * are read first. A task gone (ESRCH) is dropped; the daemon exits once
 * nothing is left to copy. Documentation/lazy-pages.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "core/daemon.h"
#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/mm-lazy.h"
#include "parts/mm-pages.h"

#define FAULT_PAGES	16		/* copied at once around a fault */
#define BG_CHUNK	(2UL << 20)	/* copied at once in the background */
#define MAX_EVENTS	64		/* read at once from one userfaultfd */
#define AGAIN_TRIES	3		/* then the event's sender must run first */

/* Pages still to copy: @len bytes at @vaddr, from store @store at @off. */
struct piece {
	uint64_t vaddr, len;
	int store;
	uint64_t off;
};

/* One address space being served (a task, or a child it forked). */
struct lmm {
	int uffd;
	pid_t img_pid, host_pid;	/* host_pid 0: a child forked since */
	int pidfd;
	struct piece *pend;
	size_t nr_pend;
	struct lazy_range *r;
	int nr_r;
	uint64_t *faults;		/* read, to be served */
	size_t nr_faults;
	int gone;
	int again;			/* a copy met an event not complete yet */
	uint64_t gen;			/* counts the events that change the list */
};

struct lazyd {
	int dirfd;
	struct mm_store *st;		/* every store opened, fds kept */
	int nr_st;
	struct lmm **mm;
	int nr;
	struct lmm *building;		/* the task whose RANGES come */
	uint8_t *buf;
	uint64_t on_fault, in_bg, zero;
	uint64_t ev[UFFD_EVENT_UNMAP + 1];	/* events seen, by kind */
	int failed;
};

static int store_of(struct lazyd *d, const struct mm_store *st)
{
	struct mm_store *n;
	int i;

	for (i = 0; i < d->nr_st; i++)
		if (d->st[i].level == st->level && d->st[i].pid == st->pid)
			return i;
	n = xpush(d->st, d->nr_st);
	if (!n)
		return -1;
	*n = *st;
	n->fd = mm_store_open(d->dirfd, st);
	if (n->fd < 0) {
		d->nr_st--;
		return -1;
	}
	return d->nr_st - 1;
}

static int add_piece(struct lmm *m, uint64_t vaddr, uint64_t len, int store, uint64_t off)
{
	struct piece *p = xpush(m->pend, m->nr_pend);

	if (!p)
		return -1;
	p->vaddr = vaddr;
	p->len = len;
	p->store = store;
	p->off = off;
	return 0;
}

/* The pieces of the images' runs that lie in the areas registered. */
static int plan_pieces(struct lazyd *d, struct lmm *m, struct mm_stores *s)
{
	uint64_t from, to;
	size_t k;
	int i, idx;

	for (k = 0; k < s->nr_src; k++) {
		struct page_src *p = &s->src[k];

		idx = store_of(d, &s->st[p->store]);
		if (idx < 0)
			return -1;
		for (i = 0; i < m->nr_r; i++) {
			from = max(p->vaddr, m->r[i].start);
			to = min(p->vaddr + p->len, m->r[i].end);
			if (from < to &&
			    add_piece(m, from, to - from, idx, p->off + (from - p->vaddr)))
				return -1;
		}
	}
	return 0;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The task's pages, as restore finds them in the images. */
static int load_task(struct lazyd *d, struct lmm *m)
{
	struct rst_ctx rc = { .dirfd = d->dirfd, .proc_fd = -1 };
	struct rtask t = { .pid = m->img_pid };
	struct mm_stores s = { .pid = m->img_pid };
	PagemapEntry *pm = NULL;
	MmEntry *mm = NULL;
	int ret = -1;

	if (img_read(d->dirfd, IMG_MM, m->img_pid, (void **)&mm, 0) < 0 ||
	    img_read(d->dirfd, IMG_PAGEMAP, m->img_pid, (void **)&pm, 0) < 0 ||
	    mm_check_pages(&rc, &t, mm, pm, &s) || plan_pieces(d, m, &s))
		goto out;
	qsort(m->pend, m->nr_pend, sizeof(*m->pend), piece_cmp);
	pr_info("Task %d (pid %d here): %zu piece(s) in %d lazy area(s) to serve",
		m->img_pid, m->host_pid, m->nr_pend, m->nr_r);
	ret = 0;
out:
	mm_free_stores(&s);
	img_free(IMG_PAGEMAP, pm);
	img_free(IMG_MM, mm);
	return ret;
}

/* Drops @start-@end from what is still to come. */
static int pend_cut(struct lmm *m, uint64_t start, uint64_t end)
{
	size_t i;
	struct piece *p, right;
	uint64_t pe;

	for (i = 0; i < m->nr_pend; i++) {
		p = &m->pend[i];
		pe = p->vaddr + p->len;
		if (pe <= start || p->vaddr >= end)
			continue;
		if (p->vaddr < start && pe > end) {	/* split */
			right = *p;
			right.off += end - p->vaddr;
			right.len = pe - end;
			right.vaddr = end;
			p->len = start - p->vaddr;
			if (add_piece(m, right.vaddr, right.len, right.store, right.off))
				return -1;
			qsort(m->pend, m->nr_pend, sizeof(*m->pend), piece_cmp);
			return 0;
		}
		if (p->vaddr < start) {
			p->len = start - p->vaddr;
		} else if (pe > end) {
			p->off += end - p->vaddr;
			p->len = pe - end;
			p->vaddr = end;
		} else {
			memmove(p, p + 1, (m->nr_pend - i - 1) * sizeof(*p));
			m->nr_pend--;
			i--;
		}
	}
	return 0;
}

static struct piece *pend_find(struct lmm *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr_pend, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (m->pend[mid].vaddr + m->pend[mid].len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nr_pend && m->pend[lo].vaddr <= addr ? &m->pend[lo] : NULL;
}

static const char *who(struct lmm *m, char *buf, size_t len)
{
	if (m->host_pid)
		snprintf(buf, len, "Task %d", m->img_pid);
	else
		snprintf(buf, len, "A child forked by task %d", m->img_pid);
	return buf;
}

static int read_events(struct lazyd *d, struct lmm *m);

/* An ioctl that may meet unread events; 0, or -errno. */
static int uffd_call(struct lazyd *d, struct lmm *m, unsigned long req, void *arg,
		     __s64 *res)
{
	int i;

	for (i = 0; i < AGAIN_TRIES; i++) {
		*res = 0;
		if (!ioctl(m->uffd, req, arg))
			return 0;
		if (errno != EAGAIN || *res > 0)
			return *res > 0 ? 0 : -errno;
		if (read_events(d, m))
			return -EIO;
		if (m->gone)
			return -ESRCH;
	}
	return -EAGAIN;
}

/*
 * Copies @len bytes of @p from @vaddr on into the task; -1 fatal, 1 gone,
 * 2 to try again: the sender of an event read (a fork, an mremap) has not
 * finished it yet, and the kernel refuses copies until it has.
 */
static int fill(struct lazyd *d, struct lmm *m, uint64_t vaddr, uint64_t len,
		const struct piece *p, uint64_t *count)
{
	struct uffdio_copy c;
	uint64_t done = 0, step, gen, off = p->off + (vaddr - p->vaddr);
	int store = p->store, ret;
	char name[64];

	if (pread(d->st[store].fd, d->buf, len, off) != (ssize_t)len) {
		pr_perror("Can't read %lu bytes of pages-%d.img at %lu", len,
			  d->st[store].pid, off);
		return -1;
	}
	while (done < len) {
		c.dst = vaddr + done;
		c.src = (uint64_t)(uintptr_t)(d->buf + done);
		c.len = len - done;
		c.mode = 0;
		gen = m->gen;
		ret = uffd_call(d, m, UFFDIO_COPY, &c, &c.copy);
		/*
		 * The events read meanwhile may have moved or dropped what is
		 * left (or moved another area here): it is looked up again.
		 */
		if (gen != m->gen && ret != -ESRCH)
			return 2;
		if (!ret && c.copy > 0) {
			*count += c.copy / PAGE_SIZE;
			step = c.copy;
		} else if (ret == -EEXIST || ret == -ENOENT) {
			/* there already (criu's, or a fault's), or no longer mapped */
			step = PAGE_SIZE;
		} else if (ret == -ESRCH) {
			return 1;
		} else if (ret == -EAGAIN) {
			return 2;
		} else {
			errno = -ret;
			pr_perror("%s: can't copy its pages at %#llx", who(m, name, sizeof(name)),
				  (unsigned long long)c.dst);
			return -1;
		}
		/* dropped at once: the next event may move what is left */
		if (pend_cut(m, c.dst, c.dst + step))
			return -1;
		done += step;
	}
	return 0;
}

static int zero_page(struct lazyd *d, struct lmm *m, uint64_t addr)
{
	struct uffdio_zeropage z = { .range = { addr, PAGE_SIZE }, .mode = 0 };
	struct uffdio_range wake = { addr, PAGE_SIZE };
	char name[64];
	int ret;

	ret = uffd_call(d, m, UFFDIO_ZEROPAGE, &z, &z.zeropage);
	if (!ret) {
		d->zero++;
		return 0;
	}
	if (ret == -ESRCH)
		return 1;
	if (ret == -EAGAIN)
		return 2;
	if (ret == -EEXIST || ret == -ENOENT)
		return ioctl(m->uffd, UFFDIO_WAKE, &wake) && errno != ESRCH ? -1 : 0;
	errno = -ret;
	pr_perror("%s: can't give it a zero page at %#lx", who(m, name, sizeof(name)), addr);
	return -1;
}

static int serve_fault(struct lazyd *d, struct lmm *m, uint64_t addr)
{
	struct piece *p;
	uint64_t len;

	addr &= PAGE_MASK;
	p = pend_find(m, addr);
	if (!p)
		return zero_page(d, m, addr);
	len = min(p->vaddr + p->len - addr, FAULT_PAGES * PAGE_SIZE);
	return fill(d, m, addr, len, p, &d->on_fault);
}

/* A child's list: its parent's, without the areas a child does not get. */
static struct lmm *forked(struct lmm *m, int ufd)
{
	struct lmm *c = xzalloc(sizeof(*c));
	int i;

	if (!c)
		goto err;
	c->uffd = ufd;
	c->img_pid = m->img_pid;
	c->pidfd = -1;
	c->pend = xmalloc((m->nr_pend + 1) * sizeof(*c->pend));
	c->r = xmalloc((m->nr_r + 1) * sizeof(*c->r));
	if (!c->pend || !c->r)
		goto err;
	memcpy(c->pend, m->pend, m->nr_pend * sizeof(*c->pend));
	c->nr_pend = m->nr_pend;
	for (i = 0; i < m->nr_r; i++) {
		if (m->r[i].flags & (LR_NOCOPY | LR_WIPE) &&
		    pend_cut(c, m->r[i].start, m->r[i].end))
			goto err;
		if (!(m->r[i].flags & LR_NOCOPY))
			c->r[c->nr_r++] = m->r[i];
	}
	fcntl(ufd, F_SETFL, O_NONBLOCK);
	return c;
err:
	close(ufd);
	if (c) {
		free(c->pend);
		free(c->r);
		free(c);
	}
	return NULL;
}

/* mremap moved @len bytes from @from to @to: so do their pieces. */
static int remapped(struct lmm *m, uint64_t from, uint64_t to, uint64_t len)
{
	size_t i, n = m->nr_pend;
	int j;

	if (pend_cut(m, to, to + len))
		return -1;
	/* split at the edges first: then pieces lie wholly in or out */
	if (pend_cut(m, from, from) || pend_cut(m, from + len, from + len))
		return -1;
	for (i = 0, n = m->nr_pend; i < n; i++)
		if (m->pend[i].vaddr >= from && m->pend[i].vaddr < from + len)
			m->pend[i].vaddr = m->pend[i].vaddr - from + to;
	qsort(m->pend, m->nr_pend, sizeof(*m->pend), piece_cmp);
	for (j = 0; j < m->nr_r; j++)
		if (m->r[j].start >= from && m->r[j].end <= from + len) {
			m->r[j].start = m->r[j].start - from + to;
			m->r[j].end = m->r[j].end - from + to;
		}
	return 0;
}

static int event(struct lazyd *d, struct lmm *m, struct uffd_msg *msg)
{
	struct lmm *c, **slot;

	if (msg->event < ARRAY_SIZE(d->ev))
		d->ev[msg->event]++;
	switch (msg->event) {
	case UFFD_EVENT_PAGEFAULT:
		if (xgrow(m->faults, m->nr_faults))
			return -1;
		m->faults[m->nr_faults++] = msg->arg.pagefault.address;
		return 0;
	case UFFD_EVENT_FORK:
		c = forked(m, msg->arg.fork.ufd);
		slot = c ? xpush(d->mm, d->nr) : NULL;
		if (!slot)
			return -1;
		*slot = c;
		pr_info("Task %d forked: its child gets %zu piece(s) yet to come",
			m->img_pid, c->nr_pend);
		return 0;
	case UFFD_EVENT_REMAP:
		m->gen++;
		return remapped(m, msg->arg.remap.from, msg->arg.remap.to, msg->arg.remap.len);
	case UFFD_EVENT_REMOVE:
	case UFFD_EVENT_UNMAP:
		m->gen++;
		/* dropped pages read as zeroes from now on, as without us */
		return pend_cut(m, msg->arg.remove.start, msg->arg.remove.end);
	}
	pr_err("Task %d: unknown userfaultfd event %u", m->img_pid, msg->event);
	return -1;
}

/* Every message the task's userfaultfd has: events now, faults queued. */
static int read_events(struct lazyd *d, struct lmm *m)
{
	struct uffd_msg msg[MAX_EVENTS];
	ssize_t n;
	int i;

	for (;;) {
		n = read(m->uffd, msg, sizeof(msg));
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0 || n % sizeof(msg[0])) {
			pr_perror("Task %d: can't read its userfaultfd", m->img_pid);
			return -1;
		}
		for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			if (event(d, m, &msg[i]))
				return -1;
	}
}

static int serve_faults(struct lazyd *d, struct lmm *m)
{
	size_t i;
	int ret;

	/* served in turn; serving may read more of them */
	for (i = 0; i < m->nr_faults && !m->gone; i++) {
		ret = serve_fault(d, m, m->faults[i]);
		if (ret < 0)
			return -1;
		if (ret == 2) {
			/* this one and the rest wait for the event's end */
			m->again = 1;
			memmove(m->faults, m->faults + i, (m->nr_faults - i) * sizeof(*m->faults));
			m->nr_faults -= i;
			return 0;
		}
		m->gone |= ret;
	}
	m->nr_faults = 0;
	return 0;
}

static int background(struct lazyd *d, struct lmm *m)
{
	struct piece p;
	int ret;

	if (!m->nr_pend)
		return 0;
	p = m->pend[0];
	ret = fill(d, m, p.vaddr, min(p.len, BG_CHUNK), &p, &d->in_bg);
	if (ret < 0)
		return -1;
	if (ret == 2)
		m->again = 1;
	else
		m->gone |= ret;
	return 0;
}

static void drop(struct lazyd *d, int i)
{
	struct lmm *m = d->mm[i];
	char name[64];

	if (m->gone || !m->nr_pend)
		pr_info("%s: %s", who(m, name, sizeof(name)),
			m->gone ? "gone" : "every page is in");
	else
		pr_info("%s: left with %zu piece(s) not served", who(m, name, sizeof(name)),
			m->nr_pend);
	close(m->uffd);
	if (m->pidfd >= 0)
		close(m->pidfd);
	free(m->pend);
	free(m->r);
	free(m->faults);
	free(m);
	d->mm[i] = d->mm[--d->nr];
}

/* A task that can't get its pages must not go on with zeroes in their place. */
static void kill_waiting(struct lazyd *d)
{
	int i;

	for (i = 0; i < d->nr; i++)
		if (d->mm[i]->nr_pend && d->mm[i]->pidfd >= 0) {
			pr_err("Task %d: killed, its pages can't be served", d->mm[i]->img_pid);
			syscall(__NR_pidfd_send_signal, d->mm[i]->pidfd, SIGKILL, NULL, 0);
		}
}

/* A RANGES or TASK message; the TASK's fd in @fd. */
static int take_task(struct lazyd *d, struct lazy_msg *msg, size_t len, int fd)
{
	struct lmm *m = d->building, **slot;
	struct lazy_range *r;

	if (len < lazy_msg_size(0) || msg->nr > LAZY_MAX_RANGES ||
	    len != lazy_msg_size(msg->nr) || (msg->type == LAZY_TASK) != (fd >= 0) ||
	    (m && m->img_pid != msg->img_pid)) {
		pr_err("The restore sent a malformed message (type %u, %zu bytes)",
		       msg->type, len);
		goto err;
	}
	if (!m) {
		m = d->building = xzalloc(sizeof(*m));
		if (!m)
			goto err;
		m->uffd = m->pidfd = -1;
		m->img_pid = msg->img_pid;
		m->host_pid = msg->host_pid;
	}
	r = xrealloc(m->r, (m->nr_r + msg->nr + 1) * sizeof(*r));
	if (!r)
		goto err;
	m->r = r;
	memcpy(m->r + m->nr_r, msg->r, msg->nr * sizeof(*m->r));
	m->nr_r += msg->nr;
	if (msg->type == LAZY_RANGES)
		return 0;
	slot = xpush(d->mm, d->nr);
	if (!slot)
		goto err;
	m->uffd = fd;
	d->building = NULL;
	*slot = m;
	m->pidfd = syscall(__NR_pidfd_open, m->host_pid, 0);
	return load_task(d, m);
err:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The restore's next message; 1 once the tree is complete, -1 on error. */
static int take_msg(struct lazyd *d, int sk)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct lazy_msg *msg = (struct lazy_msg *)d->buf;
	struct iovec iov = { msg, sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd = -1;
	ssize_t n;

	n = recvmsg(sk, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0) {
		pr_err("The restore went away before it handed its tree over");
		return -1;
	}
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (msg->type == LAZY_DONE && fd < 0)
		return 1;
	if (msg->type == LAZY_RANGES || msg->type == LAZY_TASK) {
		/* a task's fd is the daemon's from here on, whatever happens */
		if (take_task(d, msg, n, fd) == 0)
			return 0;
		d->failed = 1;
		return 0;	/* said in the answer to DONE */
	}
	pr_err("The restore sent an unknown message %u", msg->type);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* lazy-pages.socket in the work directory, made anew (never through a link). */
static int listen_here(const struct opts *o)
{
	struct sockaddr_un sun;
	mode_t old;
	int sk, ret;

	lazy_socket_addr(o, &sun);
	sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk < 0) {
		pr_perror("Lazy pages: can't make a socket");
		return -1;
	}
	/* bind() makes the file, O_EXCL-like: it fails on anything there, links too */
	old = umask(0077);
	ret = bind(sk, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (ret && errno == EADDRINUSE) {
		pr_err("Lazy pages: %s exists in the work directory (another daemon's, or "
		       "one left behind: remove it)", LAZY_SOCKET);
		close(sk);
		return -1;
	}
	if (ret || listen(sk, 1)) {
		pr_perror("Lazy pages: can't listen on %s in the work directory", LAZY_SOCKET);
		if (!ret)
			unlinkat(o->work_dirfd, LAZY_SOCKET, 0);
		close(sk);
		return -1;
	}
	return sk;
}

/*
 * The restore's connection; only criu's own user may hand tasks over.
 * A stop signal (@sfd) before it comes ends the wait.
 */
static int accept_restore(const struct opts *o, int lsk, int sfd)
{
	struct pollfd pfd[2] = { { .fd = lsk, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int sk;

	while (poll(pfd, 2, -1) < 0)
		if (errno != EINTR) {
			pr_perror("Lazy pages: poll");
			return -1;
		}
	if (pfd[1].revents & POLLIN) {
		pr_err("Lazy pages: stopped by a signal before a restore came");
		return -1;
	}
	sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC);
	if (sk < 0) {
		pr_perror("Lazy pages: can't accept the restore's connection");
		return -1;
	}
	if (getsockopt(sk, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.uid != geteuid()) {
		pr_err("Lazy pages: a connection from uid %d, not ours: refused", (int)cr.uid);
		close(sk);
		return -1;
	}
	pr_info("Lazy pages: restore %d connected", cr.pid);
	return sk;
}

static int announce(const struct opts *o)
{
	pr_info("Lazy pages: listening on %s", LAZY_SOCKET);
	if (o->status_fd >= 0) {
		if (write(o->status_fd, "", 1) != 1)
			pr_perror("Lazy pages: can't write status fd %d", o->status_fd);
		close(o->status_fd);
	}
	return o->restore_detached ? cr_daemonize(o->pidfile) : 0;
}

/* SIGTERM, SIGINT, SIGHUP: the tasks waiting for pages die first (kill_waiting). */
static int stop_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Every task's faults, then a chunk of each one's rest; the gone dropped. */
static int serve_all(struct lazyd *d, struct pollfd *pfd, int first, int nr, int tree_in)
{
	int i;

	for (i = 0; i < d->nr; i++)
		d->mm[i]->again = 0;
	for (i = 0; i < nr; i++)
		if ((pfd[first + i].revents & POLLIN) && read_events(d, d->mm[i]))
			return -1;
	for (i = 0; i < d->nr; i++)
		if (serve_faults(d, d->mm[i]))
			return -1;
	for (i = 0; tree_in && i < d->nr; i++)
		if (!d->mm[i]->gone && !d->mm[i]->nr_faults && !d->mm[i]->again &&
		    background(d, d->mm[i]))
			return -1;
	for (i = d->nr - 1; i >= 0; i--)
		if (tree_in && (d->mm[i]->gone || !d->mm[i]->nr_pend))
			drop(d, i);
	return 0;
}

static int answer(int sk, int32_t err)
{
	if (send(sk, &err, sizeof(err), MSG_NOSIGNAL) != sizeof(err)) {
		pr_perror("Lazy pages: can't answer the restore");
		return -1;
	}
	return 0;
}

/* How long poll() waits: not at all while there is work, 1 ms while a copy waits for an event's end. */
static int poll_timeout(struct lazyd *d, int tree_in)
{
	int i, again = 0;

	if (!tree_in || !d->nr)
		return -1;
	for (i = 0; i < d->nr; i++)
		again |= d->mm[i]->again;
	return again ? 1 : 0;
}

static int serve(struct lazyd *d, int sk, int sfd)
{
	struct pollfd *pfd = NULL;
	int i, n, ret, tree_in = 0;

	for (;;) {
		if (tree_in && !d->nr)
			return 0;
		pfd = xrealloc(pfd, (d->nr + 2) * sizeof(*pfd));
		if (!pfd)
			return -1;
		pfd[0].fd = sfd;
		pfd[1].fd = tree_in ? -1 : sk;
		for (i = 0; i < d->nr; i++)
			pfd[2 + i].fd = d->mm[i]->uffd;
		for (i = 0; i < d->nr + 2; i++)
			pfd[i].events = POLLIN;
		n = d->nr;
		if (poll(pfd, n + 2, poll_timeout(d, tree_in)) < 0 && errno != EINTR) {
			pr_perror("Lazy pages: poll");
			break;
		}
		if (pfd[0].revents & POLLIN) {
			pr_err("Lazy pages: stopped by a signal while tasks wait for pages");
			break;
		}
		if (!tree_in && (pfd[1].revents & (POLLIN | POLLHUP))) {
			ret = take_msg(d, sk);
			if (ret < 0)
				break;
			if (ret > 0) {
				tree_in = 1;
				if (answer(sk, d->failed || d->building ? EINVAL : 0) || d->failed)
					break;
				pr_info("Lazy pages: the tree is in, %d task(s)", d->nr);
			}
		}
		if (serve_all(d, pfd, 2, n, tree_in))
			break;
	}
	free(pfd);
	kill_waiting(d);
	return -1;
}

int cr_lazy_pages(const struct opts *o)
{
	struct lazyd d = { .dirfd = o->images_dirfd };
	int lsk, sk = -1, sfd = -1, ret = -1, i;

	d.buf = xmalloc(max(BG_CHUNK, sizeof(struct lazy_msg)));
	if (!d.buf)
		return -1;
	lsk = listen_here(o);
	if (lsk < 0)
		goto out_buf;
	sfd = stop_signals();
	if (sfd < 0) {
		pr_perror("Lazy pages: can't take the stop signals");
		goto out;
	}
	if (announce(o))
		goto out;
	sk = accept_restore(o, lsk, sfd);
	/* one restore is served: nobody else may connect */
	unlinkat(o->work_dirfd, LAZY_SOCKET, 0);
	close(lsk);
	lsk = -1;
	if (sk < 0)
		goto out;
	ret = serve(&d, sk, sfd);
	pr_info("Lazy pages: %lu page(s) served on fault, %lu in the background, "
		"%lu zero page(s)", d.on_fault, d.in_bg, d.zero);
	pr_info("Lazy pages: events: %lu fork, %lu remap, %lu remove, %lu unmap",
		d.ev[UFFD_EVENT_FORK], d.ev[UFFD_EVENT_REMAP], d.ev[UFFD_EVENT_REMOVE],
		d.ev[UFFD_EVENT_UNMAP]);
out:
	if (lsk >= 0) {
		unlinkat(o->work_dirfd, LAZY_SOCKET, 0);
		close(lsk);
	}
	while (d.nr)
		drop(&d, d.nr - 1);
	for (i = 0; i < d.nr_st; i++)
		close(d.st[i].fd);
	free(d.st);
	free(d.mm);
	if (d.building) {
		free(d.building->r);
		free(d.building);
	}
	if (sk >= 0)
		close(sk);
	if (sfd >= 0)
		close(sfd);
out_buf:
	free(d.buf);
	return ret;
}
