// SPDX-License-Identifier: GPL-2.0
/*
 * Shared memory objects: the shmem file the kernel creates behind a
 * MAP_SHARED|MAP_ANONYMOUS area (maps call it "/dev/zero (deleted)") and
 * memfd_create() files. Tasks that shared one before the dump (a parent
 * and the children it forked, or tasks that passed a memfd around) must
 * share one after the restore, so an object is saved once for the whole
 * tree, whoever maps it or holds it open, and created once by criu before
 * the first fork. Every task inherits an fd of each object: mm.c maps it
 * where the areas were, file-memfd.c reopens it for the task's own fds.
 * Regular files deleted while open or mapped (ghosts) are objects too:
 * shmem-ghost.c says what is kept of them and makes them again, file-reg.c
 * reopens them. In a mount namespace of the tree's own their directories
 * are in it: the tree's root makes them, once it built its mounts, before
 * it forks (the early hook), instead of criu.
 *
 * The identity of an object is the dev/ino that stat() of
 * /proc/PID/map_files/START-END or /proc/PID/fd/N shows; areas and fds
 * record it, and restore finds the new object by it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/pagestore.h"
#include "image/sums.h"
#include "parts/shmem-ghost.h"
#include "parts/part.h"
#include "task/idmap.h"
#include "task/mounts.h"
#include "shmem.pb-c.h"

/* Linux 6.3; Debian 12's headers are 6.1's. */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#define MFD_EXEC		0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC		0x0020
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define MEMFD_NAME_MAX		249	/* NAME_MAX minus "memfd:" */
#define SEALS_KNOWN		(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
				 F_SEAL_WRITE | F_SEAL_FUTURE_WRITE | F_SEAL_EXEC)

/* ---------------------------------------------------------------- dump */

struct shm_dump_obj {
	ShmemObject o;
	char *src;		/* a /proc path that opens it while the tree is frozen */
	int linked_back;	/* --link-remap: the dump made o.remap */
	struct stat st;
};

struct shm_dump {
	struct shm_dump_obj *objs;
	int nr;
};

static struct shm_dump *dump_state(struct dump_ctx *dc)
{
	if (!dc->shared[PART_SHMEM])
		dc->shared[PART_SHMEM] = xzalloc(sizeof(struct shm_dump));
	return dc->shared[PART_SHMEM];
}

static int add_object(struct dump_ctx *dc, pid_t pid, const char *src, int kind,
		      const char *link)
{
	struct shm_dump *s = dump_state(dc);
	struct shm_dump_obj *d;
	struct stat st;
	int i, fd, seals;

	if (!s)
		return -1;
	if (stat(src, &st)) {
		pr_perror("Task %d: can't stat the shared memory object %s (%s)", pid,
			  src, link);
		return -1;
	}
	for (i = 0; i < s->nr; i++)
		if (s->objs[i].o.dev == st.st_dev && s->objs[i].o.ino == st.st_ino)
			return 0;
	if (xgrow(s->objs, s->nr))
		return -1;
	d = &s->objs[s->nr];
	memset(d, 0, sizeof(*d));
	shmem_object__init(&d->o);
	d->o.kind = kind == SHMO_MEMFD ? SHMEM_KIND__SHMEM_MEMFD : SHMEM_KIND__SHMEM_ANON;
	d->o.dev = st.st_dev;
	d->o.ino = st.st_ino;
	d->o.size = st.st_size;
	d->st = st;
	d->src = xstrdup(src);
	if (!d->src)
		return -1;
	s->nr++;
	if (kind == SHMO_GHOST)
		return ghost_fill(&d->o, src, link, &st);
	if (kind != SHMO_MEMFD)
		return 0;
	d->o.name = proc_memfd_name(link);
	if (!d->o.name)
		return -1;
	if (strlen(d->o.name) > MEMFD_NAME_MAX) {
		pr_err("Task %d: memfd name '%.40s...' is too long", pid, d->o.name);
		return -1;
	}
	fd = open(src, O_RDONLY | O_CLOEXEC);
	seals = fd < 0 ? -1 : fcntl(fd, F_GET_SEALS);
	if (seals < 0) {
		pr_perror("Task %d: can't read the seals of memfd %s", pid, link);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (seals & ~SEALS_KNOWN) {
		pr_err("Task %d: memfd %s has unknown seals %#x", pid, link, seals);
		return -1;
	}
	d->o.has_seals = d->o.has_mode = d->o.has_uid = d->o.has_gid = 1;
	d->o.seals = seals;
	d->o.mode = st.st_mode & 07777;
	d->o.uid = st.st_uid;
	d->o.gid = st.st_gid;
	return 0;
}

/* An fd of a task: its number, its /proc path, the link and stat() of it. */
struct fd_seen {
	pid_t pid;
	const char *name;
	const char *path;
	const char *link;
	struct stat st;
};

/*
 * @fn for each fd of task @pid on a file with a path in /proc ('/'); the
 * fd table part names what it can't read, so those are passed over.
 */
static int walk_fds(struct dump_ctx *dc, pid_t pid,
		    int (*fn)(struct dump_ctx *dc, const struct fd_seen *f))
{
	char dir[64], path[320], link[PATH_MAX];
	struct fd_seen f = { .pid = pid, .path = path, .link = link };
	struct dirent *de;
	ssize_t len;
	int ret = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d) {
		pr_perror("Task %d: can't list its fds", pid);
		return -1;
	}
	while (!ret && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0 || link[0] != '/')
			continue;
		link[len] = '\0';
		f.name = de->d_name;
		if (!stat(path, &f.st))
			ret = fn(dc, &f);
	}
	closedir(d);
	return ret;
}

/* memfds and ghosts the task holds open; the fd table saves the fds themselves */
static int dump_fd(struct dump_ctx *dc, const struct fd_seen *f)
{
	if (proc_shmem_kind(f->link, f->st.st_dev) == SHMO_MEMFD)
		return add_object(dc, f->pid, f->path, SHMO_MEMFD, f->link);
	if (proc_is_ghost(f->link, f->st.st_mode, f->st.st_dev))
		return add_object(dc, f->pid, f->path, SHMO_GHOST, f->link);
	return 0;
}

static int check_fd(struct dump_ctx *dc, const struct fd_seen *f)
{
	char what[64];

	if (!proc_is_ghost(f->link, f->st.st_mode, f->st.st_dev))
		return 0;	/* a deleted FIFO, device...: the fd table's */
	snprintf(what, sizeof(what), "fd %s", f->name);
	return ghost_check(f->pid, what, f->path, f->link, &f->st, dc->opts);
}

/* Ghosts the task maps or holds open that can't be saved, before anything is changed. */
static int shmem_check(struct dump_ctx *dc, struct dtask *t)
{
	const struct proc_vma *v;
	char src[96], what[64];
	struct stat st;
	int i;

	for (i = 0; i < t->maps.nr; i++) {
		v = &t->maps.vma[i];
		if (proc_vma_shmem(v) != SHMO_GHOST)
			continue;
		snprintf(src, sizeof(src), "/proc/%d/map_files/%lx-%lx", t->pid, v->start,
			 v->end);
		if (stat(src, &st)) {
			pr_perror("Task %d: can't stat the deleted file mapped at %#lx (%s)",
				  t->pid, v->start, v->path);
			return -1;
		}
		snprintf(what, sizeof(what), "the area at %#lx", v->start);
		if (ghost_check(t->pid, what, src, v->path, &st, dc->opts))
			return -1;
	}
	return walk_fds(dc, t->pid, check_fd);
}

/*
 * --link-remap: the files still linked elsewhere, linked back in their
 * directories as soon as they are known: before the mount part saves the
 * files of a container's tmpfs (its tree step), which must hold the link.
 */
static int link_back_new(struct dump_ctx *dc, struct shm_dump *s)
{
	int i, root = AT_FDCWD, ret = 0;

	for (i = 0; s && i < s->nr && !ret; i++) {
		if (s->objs[i].o.kind != SHMEM_KIND__SHMEM_LINKED || s->objs[i].linked_back)
			continue;
		/* the paths are the tree's root's: a container's, maybe */
		if (root == AT_FDCWD)
			root = ghost_root(dc->opts->pid);
		if (root == -1)
			return -1;
		ret = ghost_link_back(&s->objs[i].o, s->objs[i].src, root);
		s->objs[i].linked_back = !ret;
	}
	if (root >= 0)
		close(root);
	return ret;
}

static int shmem_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	const struct proc_vma *v;
	char src[96];
	int i, k;

	for (i = 0; i < t->maps.nr; i++) {
		v = &t->maps.vma[i];
		k = proc_vma_shmem(v);
		if (k != SHMO_ANON && k != SHMO_MEMFD && k != SHMO_GHOST)
			continue;
		snprintf(src, sizeof(src), "/proc/%d/map_files/%lx-%lx", t->pid, v->start,
			 v->end);
		if (add_object(dc, t->pid, src, k, v->path))
			return -1;
	}
	if (walk_fds(dc, t->pid, dump_fd))
		return -1;
	return link_back_new(dc, dc->shared[PART_SHMEM]);
}

static int add_run(void *arg, uint64_t off, uint64_t len)
{
	ShmemObject *o = arg;
	ShmemRun *r;

	if (xgrow(o->runs, o->n_runs))
		return -1;
	r = xmalloc(sizeof(*r));
	if (!r)
		return -1;
	shmem_run__init(r);
	r->off = off;
	r->nr_pages = len / PAGE_SIZE;
	o->runs[o->n_runs++] = r;
	return 0;
}

/* The pages of one object that hold data, into the store. */
static int dump_contents(struct shm_dump_obj *d, int out, uint64_t *total)
{
	int fd, ret;

	d->o.pages_off = *total;
	if (d->o.kind == SHMEM_KIND__SHMEM_LINKED)
		return 0;	/* its contents are in the filesystem: linked back, not copied */
	fd = open(d->src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("Can't open the shared memory object %s", d->src);
		return -1;
	}
	ret = pstore_copy_file(out, fd, d->o.size, add_run, &d->o, d->src, total);
	close(fd);
	return ret;
}

/* The dump's objects freed; with @failed, the links --link-remap made removed. */
static void free_dump(struct dump_ctx *dc, int failed)
{
	struct shm_dump *s = dc->shared[PART_SHMEM];
	int i, root = AT_FDCWD;

	for (i = 0; s && i < s->nr; i++) {
		ShmemObject *o = &s->objs[i].o;

		if (failed && s->objs[i].linked_back && root == AT_FDCWD)
			root = ghost_root(dc->opts->pid);
		if (failed && s->objs[i].linked_back && root != -1)
			ghost_unlink_back(o, &s->objs[i].st, root);
		while (o->n_runs)
			free(o->runs[--o->n_runs]);
		free(o->runs);
		free(o->name);
		free(o->path);
		free(o->remap);
		free(s->objs[i].src);
	}
	if (root >= 0)
		close(root);
	if (s)
		free(s->objs);
	free(s);
	dc->shared[PART_SHMEM] = NULL;
}

static int shmem_dump_tree(struct dump_ctx *dc)
{
	struct shm_dump *s = dc->shared[PART_SHMEM];
	ShmemEntry e = SHMEM_ENTRY__INIT;
	ShmemObject **po;
	uint64_t total = 0;
	int i, out, ret = -1;

	if (!s || !s->nr)
		return 0;
	po = xmalloc(s->nr * sizeof(*po));
	out = img_open_raw(dc->dirfd, IMG_SHMEM_PAGES, 0, 1);
	if (!po || out < 0)
		goto out;
	for (i = 0; i < s->nr; i++) {
		if (dump_contents(&s->objs[i], out, &total))
			goto out;
		po[i] = &s->objs[i].o;
	}
	if (ftruncate(out, total)) {
		pr_perror("Can't size the shared memory store");
		goto out;
	}
	if (img_checksum_on() && img_sums_file(dc->dirfd, IMG_SHMEM_PAGES, 0))
		goto out;
	e.objects = po;
	e.n_objects = s->nr;
	dc->restore_shared += s->nr;	/* each made by criu, for every task to inherit */
	e.pages_size = total;
	ret = img_write(dc->dirfd, IMG_SHMEM, 0, &e.base);
	pr_info("%d shared memory object(s), %lu bytes", s->nr, total);
out:
	if (out >= 0)
		close(out);
	free(po);
	free_dump(dc, ret != 0);
	return ret;
}

/*
 * A dump that failed before the tree step (another task, another part's
 * tree step): the links --link-remap made go, the tree still runs.
 */
static void shmem_after_dump(struct dump_ctx *dc, int runs)
{
	free_dump(dc, 1);
}

/* ------------------------------------------------------------- restore */

/* rc->shared[PART_SHMEM]; areas and fds find the objects by rst_object_fd() */
struct shm_rst {
	ShmemEntry *e;
	int *fds;		/* per object: the inherited fd, -1 until created */
	/*
	 * per object: stat() of a linked-back file opened, by criu or the root
	 * (shared with it: criu removes the link the dump made, shmem_resumed)
	 */
	struct stat *linked;
	int pages_fd;
	int tasks, finished;	/* live tasks loaded, and through their batches */
};

static int validate(ShmemEntry *e, uint64_t store_size)
{
	uint64_t pos = 0, end;
	size_t i, j;

	for (i = 0; i < e->n_objects; i++) {
		ShmemObject *o = e->objects[i];

		if (o->pages_off != pos || o->size > LIMIT_FILE_SIZE ||
		    (o->kind == SHMEM_KIND__SHMEM_ANON && (!o->size || (o->size & ~PAGE_MASK))) ||
		    (o->kind == SHMEM_KIND__SHMEM_MEMFD &&
		     (!o->name || strlen(o->name) > MEMFD_NAME_MAX || !o->has_seals ||
		      (o->seals & ~SEALS_KNOWN))) ||
		    o->kind < SHMEM_KIND__SHMEM_ANON || o->kind > SHMEM_KIND__SHMEM_LINKED)
			goto bad;
		if ((o->kind == SHMEM_KIND__SHMEM_GHOST || o->kind == SHMEM_KIND__SHMEM_LINKED) &&
		    ghost_valid(o, i))
			return -1;
		for (j = 0; j < i; j++)
			if (e->objects[j]->dev == o->dev && e->objects[j]->ino == o->ino)
				goto bad;
		end = 0;
		for (j = 0; j < o->n_runs; j++) {
			ShmemRun *r = o->runs[j];

			if ((r->off & ~PAGE_MASK) || r->off < end || !r->nr_pages ||
			    r->off > o->size ||
			    r->off + (uint64_t)r->nr_pages * PAGE_SIZE >
			    ((o->size + PAGE_SIZE - 1) & PAGE_MASK))
				goto bad;
			end = r->off + (uint64_t)r->nr_pages * PAGE_SIZE;
			pos += (uint64_t)r->nr_pages * PAGE_SIZE;
		}
		continue;
bad:
		pr_err("Image shmem.img has an invalid object #%zu", i);
		return -1;
	}
	if (pos != e->pages_size || pos != store_size) {
		pr_err("Image shmem-pages.img is %lu bytes, shmem.img says %lu and lists %lu",
		       store_size, e->pages_size, pos);
		return -1;
	}
	return 0;
}

static size_t linked_size(const ShmemEntry *e)
{
	return (e->n_objects ? e->n_objects : 1) * sizeof(struct stat);
}

static int shmem_load_tree(struct rst_ctx *rc)
{
	struct shm_rst *rst;
	struct stat st;
	ShmemEntry *e;
	size_t i;
	int ret;

	ret = img_read(rc->dirfd, IMG_SHMEM, 0, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	rst = xzalloc(sizeof(*rst));
	if (!rst) {
		img_free(IMG_SHMEM, e);
		return -1;
	}
	rc->shared[PART_SHMEM] = rst;
	rst->e = e;
	rst->pages_fd = img_open_raw(rc->dirfd, IMG_SHMEM_PAGES, 0, 0);
	rst->fds = xmalloc(e->n_objects * sizeof(int));
	rst->linked = mmap(NULL, linked_size(e), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rst->linked == MAP_FAILED) {
		pr_perror("Can't map room for %zu deleted files", e->n_objects);
		rst->linked = NULL;
		return -1;
	}
	if (rst->pages_fd < 0 || !rst->fds)
		return -1;
	for (i = 0; i < e->n_objects; i++)
		rst->fds[i] = -1;
	if (fstat(rst->pages_fd, &st)) {
		pr_perror("Can't stat shmem-pages.img");
		return -1;
	}
	if (validate(e, st.st_size))
		return -1;
	for (i = 0; i < e->n_objects; i++)
		if (rst_object_name(rc, e->objects[i]->dev, e->objects[i]->ino))
			return -1;
	return 0;
}

/* A run of saved pages at @p, where the object is mapped shared in criu. */
static int fill_run(struct shm_rst *rst, uint8_t *p, uint64_t len, uint64_t pos)
{
	/* allocating in one go is much cheaper than a fault per page */
	madvise(p, len, MADV_POPULATE_WRITE);
	if (read_full(rst->pages_fd, p, len, pos)) {
		pr_perror("Can't read shmem-pages.img at %lu", pos);
		return -1;
	}
	return 0;
}

/* The saved pages into @p, the object mapped shared in criu. */
static int fill(struct shm_rst *rst, ShmemObject *o, uint8_t *p)
{
	uint64_t pos = o->pages_off, len;
	size_t i;

	for (i = 0; i < o->n_runs; i++) {
		len = (uint64_t)o->runs[i]->nr_pages * PAGE_SIZE;
		if (fill_run(rst, p + o->runs[i]->off, len, pos))
			return -1;
		pos += len;
	}
	return 0;
}

/*
 * A memfd's pages, run by run: a memfd may be far bigger than an address
 * space (ftruncate to 2^62 bytes), only what holds data is mapped.
 */
static int fill_memfd(struct shm_rst *rst, ShmemObject *o, int fd)
{
	uint64_t pos = o->pages_off, len;
	uint8_t *p;
	size_t i;
	int ret;

	for (i = 0; i < o->n_runs; i++) {
		len = (uint64_t)o->runs[i]->nr_pages * PAGE_SIZE;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, o->runs[i]->off);
		if (p == MAP_FAILED) {
			pr_perror("Can't map %lu bytes of %s at %lu", len,
				  o->name ? o->name : o->path, o->runs[i]->off);
			return -1;
		}
		ret = fill_run(rst, p, len, pos);
		munmap(p, len);
		if (ret)
			return -1;
		pos += len;
	}
	return 0;
}

static int create_anon(struct shm_rst *rst, ShmemObject *o)
{
	char path[96];
	uint8_t *p;
	int fd = -1;

	/* the kernel names the file of a shared anonymous area itself: make one */
	p = mmap(NULL, o->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		pr_perror("Can't create a shared memory object of %lu bytes", o->size);
		return -1;
	}
	if (!fill(rst, o, p)) {
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)p, (unsigned long)p + o->size);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			pr_perror("Can't open the new shared memory object %s", path);
	}
	munmap(p, o->size);
	return fd;
}

/*
 * F_SEAL_FUTURE_WRITE forbids new writable mappings, not the ones made
 * before it: the tasks must map first. It and F_SEAL_SEAL wait for
 * shmem_final; the others can't coexist with a writable shared mapping.
 */
static unsigned int now_seals(ShmemObject *o)
{
	unsigned int seals = o->seals & ~F_SEAL_EXEC;

	if (seals & F_SEAL_FUTURE_WRITE)
		seals &= ~(F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
	return seals;
}

static int add_seals(int fd, ShmemObject *o, unsigned int seals)
{
	if (seals && fcntl(fd, F_ADD_SEALS, seals)) {
		pr_perror("Can't seal memfd %s with %#x", o->name, seals);
		return -1;
	}
	return 0;
}

static int create_memfd(struct shm_rst *rst, ShmemObject *o)
{
	unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	struct stat st;
	int fd;

	/* the exec seal and mode come from how it was created (Linux 6.3) */
	fd = memfd_create(o->name, flags | ((o->seals & F_SEAL_EXEC) ? MFD_NOEXEC_SEAL : MFD_EXEC));
	if (fd < 0 && errno == EINVAL && !(o->seals & F_SEAL_EXEC))
		fd = memfd_create(o->name, flags);
	if (fd < 0) {
		pr_perror("Can't create memfd %s", o->name);
		return -1;
	}
	if (ftruncate(fd, o->size)) {
		pr_perror("Can't size memfd %s to %lu", o->name, o->size);
		goto err;
	}
	if (fill_memfd(rst, o, fd))
		goto err;
	if (fstat(fd, &st) ||
	    (o->has_mode && (st.st_mode & 07777) != o->mode && fchmod(fd, o->mode)) ||
	    (o->has_uid && o->has_gid && (st.st_uid != o->uid || st.st_gid != o->gid) &&
	     fchown(fd, o->uid, o->gid))) {
		pr_perror("Can't give memfd %s its owner and mode", o->name);
		goto err;
	}
	/* seals last: they may forbid the writes that filled it */
	if (add_seals(fd, o, now_seals(o)))
		goto err;
	return fd;
err:
	close(fd);
	return -1;
}

struct ghost_fill {
	struct shm_rst *rst;
	ShmemObject *o;
};

static int fill_ghost(void *arg, int fd)
{
	struct ghost_fill *g = arg;

	return fill_memfd(g->rst, g->o, fd);
}

/*
 * A ghost's fd, read-only: criu and every task hold it, and the kernel
 * refuses a file open for writing as a task's executable (PR_SET_MM_MAP's
 * exe_fd, a deleted binary); areas and fds reopen it as they need.
 */
static int read_only(int fd, int proc)
{
	char path[64];
	int ro;

	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "%sself/fd/%d", proc >= 0 ? "" : "/proc/", fd);
	ro = openat(proc >= 0 ? proc : AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		pr_perror("Can't reopen the deleted file %s read-only", path);
	close(fd);
	return ro;
}

static int is_file(const ShmemObject *o)
{
	return o->kind == SHMEM_KIND__SHMEM_GHOST || o->kind == SHMEM_KIND__SHMEM_LINKED;
}

static int create(struct shm_rst *rst, size_t i, const struct ghost_at *at)
{
	ShmemObject *o = rst->e->objects[i];
	struct ghost_fill g = { rst, o };

	switch (o->kind) {
	case SHMEM_KIND__SHMEM_MEMFD:
		return create_memfd(rst, o);
	case SHMEM_KIND__SHMEM_GHOST:
		return read_only(ghost_create(o, at, fill_ghost, &g), at->proc);
	case SHMEM_KIND__SHMEM_LINKED:
		return read_only(ghost_open_linked(o, at, &rst->linked[i]), at->proc);
	default:
		return create_anon(rst, o);
	}
}

struct create_arg {
	struct shm_rst *rst;
	size_t i;
	const struct ghost_at *at;
};

static int create_fn(void *arg)
{
	struct create_arg *c = arg;

	return create(c->rst, c->i, c->at);
}

/*
 * Objects @files (the deleted files) or not, filled, inherited by every
 * task (rst_object_set).
 */
static int create_all(struct rst_ctx *rc, int files, const struct ghost_at *at)
{
	struct shm_rst *rst = rc->shared[PART_SHMEM];
	ShmemObject *o;
	size_t i;
	int fd;

	for (i = 0; rst && i < rst->e->n_objects; i++) {
		o = rst->e->objects[i];
		if (is_file(o) != files)
			continue;
		/* in a user namespace of the tree's: with its ids, criu's can't own a file */
		fd = idmap_make_fd(at->ids, create_fn, &(struct create_arg){ rst, i, at }, o->path);
		rst->fds[i] = rst_object_set(rc, o->dev, o->ino, fd);
		if (rst->fds[i] < 0)
			return -1;
	}
	return 0;
}

/*
 * In criu, before the first fork: every object but the deleted files of
 * a tree with a mount namespace of its own, whose directories are in it.
 */
static int shmem_prefork(struct rst_ctx *rc)
{
	struct ghost_at at = { .root = AT_FDCWD, .pid = getpid(), .proc = -1 };

	if (create_all(rc, 0, &at))
		return -1;
	return mnt_tree_has_ns() ? 0 : create_all(rc, 1, &at);
}

/*
 * In the root, once it built the tree's mounts and entered them, before it
 * forks: the deleted files, in their directories there, made from inside
 * (the container's tmpfs, its root filesystem, a volume); every task is
 * born with them. criu never holds them.
 */
static int shmem_early(struct rst_ctx *rc, struct rtask *t)
{
	struct ghost_at at = {
		.root = GHOST_IN_TREE, .pid = t->pid, .proc = rc->proc_fd, .ids = rc->idmap,
	};

	if (t->creator || !mnt_tree_has_ns())
		return 0;
	if (create_all(rc, 1, &at))
		return -1;
	pr_info("Task %d: made the deleted files again in the tree's mount namespace", t->pid);
	return 0;
}

static int shmem_load(struct rst_ctx *rc, struct rtask *t)
{
	struct shm_rst *rst = rc->shared[PART_SHMEM];

	if (rst)
		rst->tasks++;
	return 0;
}

/* In criu, once the last task's batch has mapped what it maps: the rest of the seals. */
static int shmem_final(struct rst_ctx *rc, struct rtask *t)
{
	struct shm_rst *rst = rc->shared[PART_SHMEM];
	ShmemObject *o;
	size_t i;

	if (!rst || ++rst->finished < rst->tasks)
		return 0;
	for (i = 0; i < rst->e->n_objects; i++) {
		o = rst->e->objects[i];
		if (o->kind == SHMEM_KIND__SHMEM_MEMFD &&
		    add_seals(rst->fds[i], o, (o->seals & ~F_SEAL_EXEC) & ~now_seals(o)))
			return -1;
	}
	return 0;
}

/*
 * The tree runs: the links --link-remap made at dump are no longer needed.
 * In a mount namespace of the tree's, the root opened them (criu knows
 * them by the image) and its root is where the paths lead.
 */
static void shmem_resumed(struct rst_ctx *rc, struct rtask *root)
{
	struct shm_rst *rst = rc->shared[PART_SHMEM];
	int dir = AT_FDCWD, in_tree = mnt_tree_has_ns();
	ShmemObject *o;
	size_t i;

	for (i = 0; rst && i < rst->e->n_objects; i++) {
		o = rst->e->objects[i];
		/* opened: criu or the root filled rst->linked[i] */
		if (o->kind != SHMEM_KIND__SHMEM_LINKED || !rst->linked[i].st_ino)
			continue;
		if (in_tree && dir == AT_FDCWD)
			dir = ghost_root(root->host_pid);
		if (dir == -1)
			return;
		ghost_unlink_back(o, &rst->linked[i], dir);
	}
	if (dir >= 0)
		close(dir);
}

static void shmem_release_tree(struct rst_ctx *rc)
{
	struct shm_rst *rst = rc->shared[PART_SHMEM];

	if (!rst)
		return;
	if (rst->pages_fd >= 0)
		close(rst->pages_fd);
	/* the inherited fds are criu's to close */
	free(rst->fds);
	if (rst->linked)
		munmap(rst->linked, linked_size(rst->e));
	img_free(IMG_SHMEM, rst->e);
	free(rst);
	rc->shared[PART_SHMEM] = NULL;
}

const struct part part_shmem = {
	.name = "shmem",
	.id = PART_SHMEM,
	.check = shmem_check,
	.dump = shmem_dump,
	.dump_tree = shmem_dump_tree,
	.after_dump = shmem_after_dump,
	.load_tree = shmem_load_tree,
	.load = shmem_load,
	.prefork = shmem_prefork,
	.early = shmem_early,
	.final = shmem_final,
	.resumed = shmem_resumed,
	.release_tree = shmem_release_tree,
};
