// SPDX-License-Identifier: GPL-2.0
/*
 * Tracking the pages a tree writes between dump rounds, on a kernel
 * without soft-dirty bits.
 *
 * Each task's private areas are registered with a userfaultfd of its own
 * address space in write-protect mode with UFFD_FEATURE_WP_ASYNC: a write
 * to a protected page no longer waits for a handler, the kernel just
 * clears the page's protection, and PAGEMAP_SCAN reports it as written.
 * Each round reads the written pages and protects them again in one walk
 * (PM_SCAN_WP_MATCHING) while the tree is frozen.
 *
 * A userfaultfd can only be made for the caller's own address space: criu
 * makes it inside the task (one injected syscall), takes a copy with
 * pidfd_getfd and closes the task's. The registration lives as long as
 * the userfaultfd: between criu runs a tracker process holds them, and
 * nothing of it is left in the task, its fd table or its memory. The next
 * round takes the fds over from the tracker (over a unix socket in the
 * previous images directory), and the tracker exits. Whatever goes wrong
 * drops the fds, and the kernel unregisters the areas: a task is never
 * left half tracked, and a round after a lost tracker saves every page.
 *
 * What the tracking cannot see is treated as wholly written: an area the
 * kernel does not show as registered (PM_SCAN_CHECK_WPASYNC refuses it)
 * was mapped, or moved with mremap (which drops the registration), since
 * the previous round, and a forked child or an exec'd task has an address
 * space that was never registered.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/mm-dedup.h"
#include "parts/mm-track.h"
#include "proc/proc.h"
#include "task/infect.h"
#include "task/ptrace.h"

/* Debian 12's headers are 6.1's. */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY		1		/* Linux 5.11 */
#endif
#define UFFD_FEATURE_WP_UNPOPULATED_	(1ULL << 13)	/* Linux 6.6 */
#define UFFD_FEATURE_WP_ASYNC_		(1ULL << 15)	/* Linux 6.7 */
/*
 * WP_UNPOPULATED too: without it the kernel does not count an anonymous
 * area as write-protectable for PAGEMAP_SCAN (userfaultfd_wp_use_markers()).
 */
#define TRACK_FEATURES	(UFFD_FEATURE_WP_ASYNC_ | UFFD_FEATURE_WP_UNPOPULATED_)

#define TRACKER_SOCK	"mem-track.sock"
#define FDS_PER_MSG	200		/* SCM_RIGHTS takes 253 at most */
#define INFECT_AREA	(4 * PAGE_SIZE)

struct held {
	pid_t pid;
	int uffd;
};

/* --auto-dedup: the image pids of this round's tasks */
static pid_t *dumped;
static int nr_dumped;

/* One dump's tracking: one dump runs at a time in a criu process. */
static struct {
	int on;
	int depth;		/* parent images up the chain */
	int prev_dirfd;
	struct held *h;
	int nr;
} trk = { .prev_dirfd = -1 };

static int uffd_api(int fd)
{
	struct uffdio_api api = { .api = UFFD_API, .features = TRACK_FEATURES };

	return ioctl(fd, UFFDIO_API, &api);
}

int mtrack_supported(const char **why)
{
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY), pm, ret;
	struct uffdio_api api = { .api = UFFD_API };
	char arg[96] = { 0 };

	if (fd < 0) {
		*why = "no userfaultfd (CONFIG_USERFAULTFD off, or forbidden)";
		return 0;
	}
	ret = ioctl(fd, UFFDIO_API, &api);
	close(fd);
	if (ret || (api.features & TRACK_FEATURES) != TRACK_FEATURES) {
		*why = "the kernel's userfaultfd lacks UFFD_FEATURE_WP_ASYNC or "
		       "WP_UNPOPULATED (Linux 6.7)";
		return 0;
	}
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	/* an empty argument: EINVAL where the ioctl exists, ENOTTY where not */
	ret = pm < 0 ? -1 : ioctl(pm, _IOWR('f', 16, char[96]), arg);
	if (pm >= 0)
		close(pm);
	if (ret < 0 && errno != EINVAL) {
		*why = "the kernel has no PAGEMAP_SCAN ioctl (Linux 6.7)";
		return 0;
	}
	return 1;
}

static void drop_all(void)
{
	while (trk.nr)
		close(trk.h[--trk.nr].uffd);
	free(trk.h);
	trk.h = NULL;
}

/* ------------------------------------------------------ the tracker */

struct fd_msg {
	int32_t nr;
	int32_t pids[FDS_PER_MSG];
};

static int send_fds(int sk)
{
	char cbuf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
	struct fd_msg m;
	struct msghdr mh;
	struct cmsghdr *c;
	struct iovec iov;
	int i = 0, n, j;

	do {
		n = min(trk.nr - i, FDS_PER_MSG);
		memset(&mh, 0, sizeof(mh));
		m.nr = n;
		iov.iov_base = &m;
		iov.iov_len = sizeof(m);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (n) {
			mh.msg_control = cbuf;
			mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(n * sizeof(int));
			for (j = 0; j < n; j++) {
				m.pids[j] = trk.h[i + j].pid;
				((int *)CMSG_DATA(c))[j] = trk.h[i + j].uffd;
			}
		}
		if (sendmsg(sk, &mh, MSG_NOSIGNAL) != sizeof(m))
			return -1;
		i += n;
	} while (n);	/* an empty message ends the list */
	return 0;
}

static int recv_fds(int sk)
{
	char cbuf[CMSG_SPACE(FDS_PER_MSG * sizeof(int))];
	struct fd_msg m;
	struct msghdr mh;
	struct cmsghdr *c;
	struct iovec iov = { &m, sizeof(m) };
	int j, *fds;

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if (recvmsg(sk, &mh, MSG_CMSG_CLOEXEC) != sizeof(m) || m.nr < 0 ||
		    m.nr > FDS_PER_MSG)
			return -1;
		if (!m.nr)
			return 0;
		c = CMSG_FIRSTHDR(&mh);
		if (!c || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(m.nr * sizeof(int)))
			return -1;
		fds = (int *)CMSG_DATA(c);
		for (j = 0; j < m.nr; j++) {
			if (xgrow(trk.h, trk.nr)) {
				close(fds[j]);
				continue;
			}
			trk.h[trk.nr].pid = m.pids[j];
			trk.h[trk.nr++].uffd = fds[j];
		}
	}
}

/* Every tracked task is gone: nothing is left to hand over. */
static int all_gone(struct pollfd *p, int nr)
{
	int i;

	for (i = 1; i < nr; i++)
		if (p[i].fd >= 0 && !(p[i].revents & POLLIN))
			return 0;
	return 1;
}

/*
 * The tracker: holds the fds until the next round takes them (or asks it
 * to drop them), or until every tracked task has exited.
 */
static void tracker_main(int lsk, int dirfd)
{
	struct pollfd *p = calloc(trk.nr + 1, sizeof(*p));
	struct ucred cr;
	socklen_t len;
	char cmd;
	int i, sk;

	if (!p)
		_exit(1);
	p[0].fd = lsk;
	p[0].events = POLLIN;
	for (i = 0; i < trk.nr; i++) {
		p[i + 1].fd = syscall(SYS_pidfd_open, trk.h[i].pid, 0);
		p[i + 1].events = POLLIN;
	}
	for (;;) {
		if (poll(p, trk.nr + 1, -1) < 0)
			continue;
		if (trk.nr && all_gone(p, trk.nr + 1))
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		sk = accept4(lsk, NULL, NULL, SOCK_CLOEXEC);
		if (sk < 0)
			continue;
		len = sizeof(cr);
		/* only root or the user who tracks may take the fds */
		if (getsockopt(sk, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    (cr.uid && cr.uid != getuid()) || read(sk, &cmd, 1) != 1) {
			close(sk);
			continue;
		}
		if (cmd == 'T')
			send_fds(sk);
		/* the areas are unregistered as the last fd closes: before the answer */
		drop_all();
		/* gone before the answer: a new tracker may bind the same name next */
		unlinkat(dirfd, TRACKER_SOCK, 0);
		if (cmd == 'Q')
			(void)!write(sk, &cmd, 1);
		close(sk);
		_exit(0);
	}
	unlinkat(dirfd, TRACKER_SOCK, 0);
	_exit(0);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * Closes every fd above 2 but the tracker's own: criu's (the RPC client's
 * socket above all) would be held open as long as the tracker lives.
 */
static void close_others(int lsk, int dirfd)
{
	int *keep = calloc(trk.nr + 2, sizeof(int)), n = 0, i, from = 3;

	if (!keep)
		_exit(1);
	keep[n++] = lsk;
	keep[n++] = dirfd;
	for (i = 0; i < trk.nr; i++)
		keep[n++] = trk.h[i].uffd;
	qsort(keep, n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++) {
		if (keep[i] > from)
			syscall(SYS_close_range, from, keep[i] - 1, 0);
		from = max(from, keep[i] + 1);
	}
	syscall(SYS_close_range, from, ~0U, 0);
	free(keep);
}

/* Forks the tracker, detached, with the fds; 0, or -1 logged. */
static int start_tracker(int dirfd)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int lsk, st, i;
	pid_t pid;

	lsk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" TRACKER_SOCK, dirfd);
	unlinkat(dirfd, TRACKER_SOCK, 0);
	i = umask(077);
	if (lsk < 0 || bind(lsk, (struct sockaddr *)&a, sizeof(a)) || listen(lsk, 4)) {
		umask(i);
		pr_perror("Can't make the memory tracker's socket %s", a.sun_path);
		if (lsk >= 0)
			close(lsk);
		return -1;
	}
	umask(i);
	pid = fork();
	if (pid < 0) {
		pr_perror("Can't start the memory tracker");
		close(lsk);
		unlinkat(dirfd, TRACKER_SOCK, 0);
		return -1;
	}
	if (!pid) {
		/* a grandchild: criu exits, the tracker goes on */
		if (fork())
			_exit(0);
		setsid();
		signal(SIGPIPE, SIG_IGN);
		i = open("/dev/null", O_RDWR);
		dup2(i, 0);
		dup2(i, 1);
		dup2(i, 2);
		log_close();
		close_others(lsk, dirfd);
		tracker_main(lsk, dirfd);
	}
	close(lsk);
	waitpid(pid, &st, 0);
	return 0;
}

/* Takes the fds of the tracker in @dirfd (or tells it to drop them: @cmd 'Q'). */
static int ask_tracker(int dirfd, char cmd)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ret = -1;

	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" TRACKER_SOCK, dirfd);
	if (sk < 0 || connect(sk, (struct sockaddr *)&a, sizeof(a)))
		goto out;
	if (write(sk, &cmd, 1) != 1)
		goto out;
	ret = cmd == 'T' ? recv_fds(sk) : read(sk, &cmd, 1) == 1 ? 0 : -1;
out:
	if (sk >= 0)
		close(sk);
	return ret;
}

/* ------------------------------------------------------------ rounds */

int mtrack_depth(void)
{
	return trk.depth;
}

/* The prev images' own chain, as restore follows it (at most its 64 levels). */
static int chain_depth(int dirfd)
{
	int d = dup(dirfd), up, n = 1;

	while (d >= 0 && n < 64) {
		up = openat(d, "parent", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(d);
		d = up;
		if (d >= 0)
			n++;
	}
	if (d >= 0)
		close(d);
	return n;
}

int mtrack_begin(const struct opts *o, int dirfd)
{
	const char *why;

	trk.on = 0;
	trk.depth = 0;
	drop_all();
	nr_dumped = 0;
	if (o->auto_dedup && !o->prev_images_dir) {
		pr_err("--auto-dedup needs --prev-images-dir: there is no parent to free "
		       "pages in");
		return -1;
	}
	if (o->prev_images_dir && !o->track_mem) {
		pr_err("--prev-images-dir %s needs --track-mem: without it nothing tells "
		       "which pages changed since", o->prev_images_dir);
		return -1;
	}
	/*
	 * a round done again into the same directory, or a plain dump after
	 * pre-dumps there (libcriu's criu_dump_iters()): its tracker goes first,
	 * and with it the write protection of the task's areas
	 */
	if (!ask_tracker(dirfd, 'Q'))
		pr_info("The tracker of an earlier round into these images stopped");
	if (!o->track_mem)
		return 0;
	if (o->auto_dedup && o->page_server) {
		pr_err("--auto-dedup with --page-server: the parent images' pages are on the "
		       "page server, out of this dump's reach");
		return -1;
	}
	if (!mtrack_supported(&why)) {
		pr_err("Can't track memory (--track-mem): %s", why);
		return -1;
	}
	trk.on = 1;
	if (!o->prev_images_dir)
		return 0;
	if (img_link_parent(dirfd, o->prev_images_dir))
		return -1;
	trk.prev_dirfd = openat(dirfd, o->prev_images_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (trk.prev_dirfd < 0) {
		pr_perror("Can't open the previous images %s (relative to the images dir)",
			  o->prev_images_dir);
		return -1;
	}
	trk.depth = chain_depth(trk.prev_dirfd);
	if (ask_tracker(trk.prev_dirfd, 'T'))
		pr_warn("No memory tracker answers in %s: every page is saved again",
			o->prev_images_dir);
	pr_info("Took %d userfaultfd(s) over from the previous round", trk.nr);
	return 0;
}

/* Once the round's images are complete: the parents' superseded pages go. */
static void dedup_all(int dirfd)
{
	uint64_t freed = 0;
	int i;

	for (i = 0; i < nr_dumped; i++)
		if (mm_dedup(dirfd, dumped[i], &freed)) {
			pr_warn("--auto-dedup stopped: the parent images keep some old pages");
			break;
		}
	pr_info("--auto-dedup freed %lu bytes in the parent images", freed);
}

void mtrack_end(const struct opts *o, int dirfd, int ok)
{
	if (!trk.on)
		return;
	if (ok && o->auto_dedup)
		dedup_all(dirfd);
	free(dumped);
	dumped = NULL;
	nr_dumped = 0;
	if (ok && o->pre_dump && trk.nr && !start_tracker(dirfd))
		pr_info("A tracker holds %d userfaultfd(s) until the next round", trk.nr);
	else if (trk.nr)
		pr_info("Memory tracking ends (%d userfaultfd(s) closed)", trk.nr);
	drop_all();
	if (trk.prev_dirfd >= 0)
		close(trk.prev_dirfd);
	trk.prev_dirfd = -1;
	trk.on = 0;
}

/*
 * A userfaultfd of @t's address space: made inside the task by one
 * injected syscall, copied here, and closed there by a second.
 */
static int uffd_from_task(struct dtask *t)
{
	struct infect inf;
	struct batch b = { 0 };
	uint64_t area;
	long fd = -1;
	int ours = -1, ret = -1;

	if (infect_start(&inf, t->pid, &t->maps, &t->status, INFECT_AREA, INFECT_AREA, 1))
		return -1;
	if (infect_borrow(&inf, t->th[0].tid, &t->th[0].regs, t->th[0].sigmask, &area) ||
	    batch_init_grow(&b, area) ||
	    BATCH(&b, "userfaultfd (--track-mem)", __NR_userfaultfd,
		  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY) < 0 ||
	    infect_resize(&inf, 0, batch_seal(&b)) || infect_run(&inf, 0, &b))
		goto out;
	fd = batch_entry(&b, 0)->ret;
	ours = ptrace_getfd(t->pid, fd);
	batch_free(&b);
	if (batch_init_grow(&b, area) ||
	    BATCH(&b, "close of the userfaultfd", __NR_close, fd) < 0 ||
	    infect_resize(&inf, 0, batch_seal(&b)) || infect_run(&inf, 0, &b))
		goto out;
	ret = 0;
out:
	batch_free(&b);
	if (infect_stop(&inf))
		ret = -1;
	if (ret && ours >= 0) {
		close(ours);
		ours = -1;
	}
	return ours;
}

static int held_uffd(pid_t pid)
{
	int i;

	for (i = 0; i < trk.nr; i++)
		if (trk.h[i].pid == pid)
			return trk.h[i].uffd;
	return -1;
}

/* A userfaultfd made in the task now, held in place of any older one. */
static int new_uffd(struct mtrack_task *mt)
{
	struct held *h;
	int i;

	mt->uffd = uffd_from_task(mt->t);
	if (mt->uffd < 0 || uffd_api(mt->uffd)) {
		pr_perror("Task %d: can't make a userfaultfd to track its memory", mt->pid);
		return -1;
	}
	mt->fresh = 1;
	for (i = 0; i < trk.nr; i++)
		if (trk.h[i].pid == mt->pid) {
			close(trk.h[i].uffd);
			trk.h[i].uffd = mt->uffd;
			return 0;
		}
	h = xpush(trk.h, trk.nr);
	if (!h)
		return -1;
	h->pid = mt->pid;
	h->uffd = mt->uffd;
	return 0;
}

int mtrack_owns(pid_t pid)
{
	return trk.on && held_uffd(pid) >= 0;
}

int mtrack_task_start(struct dtask *t, int pmfd, struct mtrack_task *mt)
{
	void *msg = NULL;

	memset(mt, 0, sizeof(*mt));
	mt->uffd = -1;
	if (!trk.on)
		return 0;
	if (xgrow(dumped, nr_dumped))
		return -1;
	dumped[nr_dumped++] = t->ns_pid;
	mt->on = 1;
	mt->t = t;
	mt->pid = t->pid;
	mt->pmfd = pmfd;
	mt->uffd = held_uffd(t->pid);
	if (trk.prev_dirfd >= 0) {
		if (img_read(trk.prev_dirfd, IMG_PAGEMAP, t->ns_pid, &msg, 1) < 0)
			return -1;
		mt->parent = msg;
	}
	return mt->uffd >= 0 ? 0 : new_uffd(mt);
}

static int add_dirty(void *arg, uint64_t start, uint64_t end)
{
	struct mtrack_task *mt = arg;
	struct mtrack_range *r = xpush(mt->dirty, mt->nr_dirty);

	if (!r)
		return -1;
	r->start = start;
	r->end = end;
	return 0;
}

static int nop_cb(void *arg, uint64_t start, uint64_t end)
{
	return 0;
}

int mtrack_area(struct mtrack_task *mt, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int ret;

	mt->nr_dirty = mt->dcur = 0;
	mt->tracked = 0;
	if (!mt->on)
		return 0;
	ret = pagemap_scan_written(mt->pmfd, start, end, add_dirty, mt);
	if (ret < 0)
		return -1;
	/* registered before this round: what it wrote is known */
	mt->tracked = !ret && mt->parent;
	if (!ret)
		return 0;
	/* new since the previous round, or the first round: all of it is saved */
	ret = ioctl(mt->uffd, UFFDIO_REGISTER, &reg);
	/* the previous round's fd is of an address space the task left (exec) */
	if (ret && !mt->fresh && (errno == ESRCH || errno == EINVAL || errno == ENOMEM)) {
		pr_info("Task %d: the previous round's userfaultfd is not of its memory now",
			mt->pid);
		if (new_uffd(mt))
			return -1;
		ret = ioctl(mt->uffd, UFFDIO_REGISTER, &reg);
	}
	if (ret) {
		/* a VM_IO/PFNMAP area, or one the task registered itself */
		pr_warn("Task %d: area %#lx-%#lx can't be tracked (%s): saved whole each round",
			mt->pid, start, end, strerror(errno));
		return 0;
	}
	/* protect what it holds now; the pages are read next, while still frozen */
	return pagemap_scan_written(mt->pmfd, start, end, nop_cb, NULL) ? -1 : 0;
}

static int in_dirty(struct mtrack_task *mt, uint64_t addr)
{
	while (mt->dcur < mt->nr_dirty && mt->dirty[mt->dcur].end <= addr)
		mt->dcur++;
	return mt->dcur < mt->nr_dirty && mt->dirty[mt->dcur].start <= addr;
}

/* The previous round listed page @addr (saved there, or in its own parent). */
static int parent_has(struct mtrack_task *mt, uint64_t addr)
{
	PagemapEntry *p = mt->parent;
	PagemapRun *r;
	size_t lo = 0, hi = p->n_runs;

	r = mt->pcur < p->n_runs ? p->runs[mt->pcur] : NULL;
	if (r && addr >= r->vaddr && addr < r->vaddr + (uint64_t)r->nr_pages * PAGE_SIZE)
		return 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		r = p->runs[mid];
		if (r->vaddr + (uint64_t)r->nr_pages * PAGE_SIZE <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n_runs || addr < p->runs[lo]->vaddr)
		return 0;
	mt->pcur = lo;
	return 1;
}

int mtrack_in_parent(struct mtrack_task *mt, uint64_t addr)
{
	if (!mt->tracked || in_dirty(mt, addr) || !parent_has(mt, addr))
		return 0;
	mt->clean += PAGE_SIZE;
	return 1;
}

void mtrack_task_end(struct mtrack_task *mt)
{
	if (mt->parent)
		img_free(IMG_PAGEMAP, mt->parent);
	free(mt->dirty);
	mt->parent = NULL;
	mt->dirty = NULL;
}
