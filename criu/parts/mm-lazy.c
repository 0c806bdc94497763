// SPDX-License-Identifier: GPL-2.0
/*
 * restore --lazy-pages: the private anonymous areas of every task are
 * mapped empty, and their pages come later from the lazy-pages daemon
 * (criu/lazy.c) through a userfaultfd, once the task runs.
 *
 * Each task makes its userfaultfd itself (it binds to the maker's mm),
 * before its batch, and hands it to criu over a socket criu made before
 * the first fork. criu registers the lazy areas on it (the registration
 * applies to the fd's mm, whoever asks) only right before the tree goes,
 * after everything criu writes into the tasks' memory: a page written
 * while the area waits would be a page of zeroes with that write, and a
 * fault criu itself took could not be served. The only writes to lazy
 * areas before then are the kernel's, into the rseq areas (t->written):
 * their pages are read from the images as without --lazy-pages. Then
 * criu sends each task's fd and areas to the daemon and waits for its
 * word that it holds them all. Documentation/lazy-pages.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "parts/mm-lazy.h"
#include "parts/mm-pages.h"
#include "parts/mm-vma.h"
#include "task/batch.h"

/* how long criu waits for the daemon's word that it holds the tree */
#define ACK_TIMEOUT_S	60

struct lazy_task {
	struct rtask *t;
	MmEntry *mm;
	unsigned char *lazy;	/* per area */
	struct lazy_range *r;
	int nr;
	int uffd;		/* in criu, from the task */
};

/* One restore per criu process: the tree's state, inherited by the tasks. */
static struct lazy_state {
	struct lazy_task *tasks;
	int nr;
	int daemon;		/* criu's connection to the daemon */
	int to_criu[2];		/* the tasks' end ([1], inherited), criu's */
	int dev;		/* /dev/userfaultfd (inherited), or -1 */
} ls = { .daemon = -1, .to_criu = { -1, -1 }, .dev = -1 };

int lazy_supported(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = LAZY_FEATURES };
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK), ret;

	if (fd < 0)
		return 0;
	ret = !ioctl(fd, UFFDIO_API, &api) &&
	      (api.features & LAZY_FEATURES) == LAZY_FEATURES &&
	      (api.ioctls & (1ULL << _UFFDIO_REGISTER));
	close(fd);
	return ret;
}

static struct lazy_task *find(struct rtask *t)
{
	int i;

	for (i = 0; i < ls.nr; i++)
		if (ls.tasks[i].t == t)
			return &ls.tasks[i];
	return NULL;
}

/*
 * Private anonymous areas whose pages are saved, and which nothing fills
 * while restore maps them: mlock (not on fault) would fill them with
 * zeroes at once. Not MADV_HUGEPAGE ones either: UFFDIO_COPY maps small
 * pages, and the task asked for huge ones (restore fills those at once).
 */
static int can_wait(const VmaEntry *v)
{
	return v->kind == VMA_KIND__VMA_ANON_PRIVATE && vma_entry_has_pages(v) &&
	       (!(v->madv & VMF_LOCKED) || (v->madv & VMF_LOCKONFAULT)) &&
	       !(v->madv & VMF_HUGEPAGE);
}

int mm_lazy_load(struct rst_ctx *rc, struct rtask *t, MmEntry *mm)
{
	struct lazy_task *lt;
	size_t i;

	lt = xpush(ls.tasks, ls.nr);
	if (!lt)
		return -1;
	memset(lt, 0, sizeof(*lt));
	lt->t = t;
	lt->mm = mm;
	lt->uffd = -1;
	lt->lazy = xzalloc(mm->n_vmas + 1);
	if (!lt->lazy)
		return -1;
	for (i = 0; i < mm->n_vmas; i++) {
		struct lazy_range *r;

		if (!can_wait(mm->vmas[i]))
			continue;
		lt->lazy[i] = 1;
		r = xpush(lt->r, lt->nr);
		if (!r)
			return -1;
		r->start = mm->vmas[i]->start;
		r->end = mm->vmas[i]->end;
		r->flags = r->pad = 0;
		if (mm->vmas[i]->madv & VMF_DONTCOPY)
			r->flags |= LR_NOCOPY;
		if (mm->vmas[i]->madv & VMF_WIPEONFORK)
			r->flags |= LR_WIPE;
	}
	return 0;
}

void lazy_socket_addr(const struct opts *o, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (o->work_dirfd == AT_FDCWD)
		snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", LAZY_SOCKET);
	else
		snprintf(sun->sun_path, sizeof(sun->sun_path), "/proc/self/fd/%d/%s",
			 o->work_dirfd, LAZY_SOCKET);
}

/* The daemon's socket in the work directory; -1 with one error line. */
static int connect_daemon(const struct opts *o)
{
	struct sockaddr_un sun;
	int sk;

	lazy_socket_addr(o, &sun);
	sk = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk < 0 || connect(sk, (struct sockaddr *)&sun, sizeof(sun))) {
		pr_perror("Can't reach the lazy-pages daemon at %s in the work directory "
			  "(is criu lazy-pages running there?)", LAZY_SOCKET);
		if (sk >= 0)
			close(sk);
		return -1;
	}
	return sk;
}

int mm_lazy_prefork(struct rst_ctx *rc)
{
	if (!rc->opts->lazy_pages)
		return 0;
	if (!lazy_supported()) {
		pr_err("--lazy-pages: this kernel's userfaultfd lacks the fork, remap, "
		       "remove and unmap events the daemon follows the tasks with");
		return -1;
	}
	ls.daemon = connect_daemon(rc->opts);
	if (ls.daemon < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ls.to_criu)) {
		pr_perror("Can't make the socket the tasks hand their userfaultfds over");
		return -1;
	}
	ls.to_criu[0] = rst_inherit_fd(rc, ls.to_criu[0]);
	if (ls.to_criu[0] < 0)
		return -1;
	/*
	 * A task in a user namespace of its own may not call userfaultfd()
	 * (it needs CAP_SYS_PTRACE outside); the device (Linux 6.1) asks
	 * only for the file's permission, checked here, at criu's open.
	 */
	ls.dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (ls.dev >= 0)
		ls.dev = rst_inherit_fd(rc, ls.dev);
	return 0;
}

/* The task's own userfaultfd, through the device when criu could open it. */
static int make_uffd(void)
{
	if (ls.dev >= 0)
		return ioctl(ls.dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	return syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
}

int mm_lazy_child(struct rst_ctx *rc, struct rtask *t)
{
	struct lazy_task *lt = find(t);
	int32_t pid = t->pid;
	int fd, ret;

	if (!lt || !lt->nr)
		return 0;
	fd = make_uffd();
	if (fd < 0) {
		pr_perror("Task %d: can't make its userfaultfd", t->pid);
		return -1;
	}
	ret = send_msg_fd(ls.to_criu[0], &pid, sizeof(pid), fd);
	if (ret)
		pr_perror("Task %d: can't hand its userfaultfd to criu", t->pid);
	close(fd);
	return ret;
}

int mm_lazy_area(struct rtask *t, size_t i)
{
	struct lazy_task *lt = find(t);

	return lt && lt->lazy[i];
}

/* The reads of @p's pages that lie in what the kernel writes before the tree goes. */
static int queue_written(struct batch *b, struct rtask *t, struct mm_stores *s,
			 const struct page_src *p)
{
	uint64_t from, to;
	int i;

	for (i = 0; i < t->nr_written; i++) {
		from = max(p->vaddr, t->written[i].start & PAGE_MASK);
		to = min(p->vaddr + p->len, (t->written[i].end + PAGE_SIZE - 1) & PAGE_MASK);
		if (from < to && BATCH(b, "pread of saved pages the kernel writes into",
				       __NR_pread64, s->st[p->store].fd, from, to - from,
				       p->off + (from - p->vaddr)) < 0)
			return -1;
	}
	return 0;
}

int mm_lazy_queue_reads(struct batch *b, struct rtask *t, struct mm_stores *s,
			PagemapEntry *pm, uint64_t end, size_t *run)
{
	size_t k;

	for (; *run < pm->n_runs && pm->runs[*run]->vaddr < end; (*run)++)
		for (k = s->first[*run]; k < s->first[*run + 1]; k++)
			if (queue_written(b, t, s, &s->src[k]))
				return -1;
	return 0;
}

/* Task @pid's waiting entry, or NULL. */
static struct lazy_task *waiting(int32_t pid)
{
	int i;

	for (i = 0; i < ls.nr; i++)
		if (ls.tasks[i].t->pid == pid && ls.tasks[i].nr && ls.tasks[i].uffd < 0)
			return &ls.tasks[i];
	return NULL;
}

/* criu's copy of each task's userfaultfd, as the tasks sent them. */
static int collect_fds(void)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	struct lazy_task *lt;
	int32_t pid;
	int i, fd, want = 0;

	for (i = 0; i < ls.nr; i++)
		want += !!ls.tasks[i].nr;
	for (; want; want--) {
		memset(&mh, 0, sizeof(mh));
		iov.iov_base = &pid;
		iov.iov_len = sizeof(pid);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		if (recvmsg(ls.to_criu[1], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) !=
		    sizeof(pid)) {
			pr_perror("A task's userfaultfd did not come");
			return -1;
		}
		c = CMSG_FIRSTHDR(&mh);
		if (!c || c->cmsg_type != SCM_RIGHTS) {
			pr_err("Task %d sent no userfaultfd", pid);
			return -1;
		}
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
		lt = waiting(pid);
		if (!lt) {
			pr_err("A userfaultfd came from %d, no task of the tree", pid);
			close(fd);
			return -1;
		}
		lt->uffd = fd;
	}
	return 0;
}

static int register_areas(struct lazy_task *lt)
{
	struct uffdio_api api = { .api = UFFD_API, .features = LAZY_FEATURES };
	struct uffdio_register reg;
	int i;

	if (lt->uffd < 0) {
		pr_err("Task %d: its userfaultfd did not come", lt->t->pid);
		return -1;
	}
	if (ioctl(lt->uffd, UFFDIO_API, &api)) {
		pr_perror("Task %d: userfaultfd refuses features %#llx", lt->t->pid,
			  (unsigned long long)LAZY_FEATURES);
		return -1;
	}
	for (i = 0; i < lt->nr; i++) {
		reg.range.start = lt->r[i].start;
		reg.range.len = lt->r[i].end - lt->r[i].start;
		reg.mode = UFFDIO_REGISTER_MODE_MISSING;
		if (ioctl(lt->uffd, UFFDIO_REGISTER, &reg)) {
			pr_perror("Task %d: can't register its area %#lx-%#lx with userfaultfd",
				  lt->t->pid, lt->r[i].start, lt->r[i].end);
			return -1;
		}
	}
	return 0;
}

/* RANGES messages, then the TASK one with the fd. */
static int send_task(struct lazy_task *lt)
{
	struct lazy_msg *m = xzalloc(sizeof(*m));
	int done = 0, n, ret = -1;

	if (!m)
		return -1;
	m->img_pid = lt->t->pid;
	m->host_pid = lt->t->host_pid;
	do {
		n = min(lt->nr - done, LAZY_MAX_RANGES);
		m->type = done + n == lt->nr ? LAZY_TASK : LAZY_RANGES;
		m->nr = n;
		memcpy(m->r, lt->r + done, n * sizeof(*m->r));
		if (send_msg_fd(ls.daemon, m, lazy_msg_size(n),
			    m->type == LAZY_TASK ? lt->uffd : -1)) {
			pr_perror("Task %d: can't hand its pages over to the lazy-pages daemon",
				  lt->t->pid);
			goto out;
		}
		done += n;
	} while (done < lt->nr);
	ret = 0;
out:
	free(m);
	return ret;
}

static int wait_ack(void)
{
	struct timeval tv = { ACK_TIMEOUT_S, 0 };
	struct lazy_msg m = { .type = LAZY_DONE };
	int32_t err;

	ssize_t n;

	if (send_msg_fd(ls.daemon, &m, lazy_msg_size(0), -1) ||
	    setsockopt(ls.daemon, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		pr_perror("Can't hand the tree to the lazy-pages daemon");
		return -1;
	}
	n = recv(ls.daemon, &err, sizeof(err), 0);
	if (n == 0) {
		pr_err("The lazy-pages daemon went away before it took the tree");
		return -1;
	}
	if (n != sizeof(err)) {
		pr_perror("The lazy-pages daemon did not take the tree");
		return -1;
	}
	if (err) {
		errno = err;
		pr_perror("The lazy-pages daemon can't serve the tree");
		return -1;
	}
	return 0;
}

int mm_lazy_resume(struct rst_ctx *rc, struct rtask *root)
{
	int i;

	if (!rc->opts->lazy_pages)
		return 0;
	if (collect_fds())
		return -1;
	for (i = 0; i < ls.nr; i++)
		if (ls.tasks[i].nr && (register_areas(&ls.tasks[i]) || send_task(&ls.tasks[i])))
			return -1;
	if (wait_ack())
		return -1;
	/*
	 * The daemon's copies are the only ones now: once it closes them,
	 * the areas are the task's alone (a later fault must not wait for
	 * a reader that is gone).
	 */
	for (i = 0; i < ls.nr; i++)
		if (ls.tasks[i].uffd >= 0) {
			close(ls.tasks[i].uffd);
			ls.tasks[i].uffd = -1;
		}
	pr_info("Lazy pages: %d task(s) handed to the daemon", ls.nr);
	return 0;
}

void mm_lazy_release(struct rst_ctx *rc)
{
	int i;

	for (i = 0; i < ls.nr; i++) {
		if (ls.tasks[i].uffd >= 0)
			close(ls.tasks[i].uffd);
		free(ls.tasks[i].lazy);
		free(ls.tasks[i].r);
	}
	free(ls.tasks);
	if (ls.daemon >= 0)
		close(ls.daemon);
	if (ls.to_criu[1] >= 0)
		close(ls.to_criu[1]);
	memset(&ls, 0, sizeof(ls));
	ls.daemon = ls.to_criu[0] = ls.to_criu[1] = ls.dev = -1;
}
