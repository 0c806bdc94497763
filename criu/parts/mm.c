// SPDX-License-Identifier: GPL-2.0
/*
 * The address space: every area with its protection, flags and backing
 * file, the mm fields (code/data/brk/stack/arg/env bounds, auxv, exe),
 * the vDSO position; the contents of private pages are mm-pages.c's.
 *
 * Dump reads /proc (smaps, stat, auxv) from outside. Restore runs inside
 * the new task: unmap what criu left there, move the vDSO where it was,
 * map every area and pread() its pages straight from the store. Shared
 * memory is not the task's alone: an area of a shared anonymous mapping
 * or of a memfd maps the one object shmem.c created for the whole tree,
 * so does an area of a deleted file (a ghost, shmem-ghost.c: the fds on it
 * reopen the same object), and a System V segment is attached again by its id (sysvipc.c made it).
 * A packet socket's rings are mapped again from the task's fd of the new
 * socket, which has them already (file-packet.c; their frames are not
 * pages of the task's: criu writes them into the ring later).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/build-id.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "parts/mm-lazy.h"
#include "parts/mm-pages.h"
#include "parts/mm-track.h"
#include "parts/mm-vdso.h"
#include "parts/mm-vma.h"
#include "task/mounts.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_FIXED
#define MREMAP_MAYMOVE	1
#define MREMAP_FIXED	2
#endif

/* Linux 6.13: pages that fault on access, inside an ordinary area */
#define MADV_GUARD_INSTALL	102
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		1	/* Linux 4.4 */
#endif

struct mm_loaded {
	MmEntry *mm;
	PagemapEntry *pm;
	/* in the new task */
	int *fds;		/* per area: fd of its file or object, or -1 */
	int exe_fd;
	struct mm_stores stores;
};

static const char *vma_unsupported(const struct proc_vma *v)
{
	VmaKind k;
	size_t len;

	/* the faults of such an area are another process's to serve */
	if (v->vmflags & VMF_UFFD)
		return "area registered with a userfaultfd";
	if (v->vmflags & VMF_HUGETLB)
		return vma_is_huge_anon(v) ? NULL :
		       "hugetlb memory shared or of a hugetlbfs file (MAP_SHARED|MAP_HUGETLB, "
		       "hugetlbfs, MFD_HUGETLB, SHM_HUGETLB)";
	if (vma_special(v, &k))
		return NULL;
	if (vma_is_anon(v))
		return NULL;
	if (v->path[0] == '[')
		return "special mapping";
	len = strlen(v->path);
	switch (proc_vma_shmem(v)) {
	case SHMO_ANON:
	case SHMO_MEMFD:
	case SHMO_SYSV:
	case SHMO_GHOST:	/* the shmem part's check says whether it can be saved */
		return NULL;
	case SHMO_HUGETLB:
		return "hugetlbfs shared memory (MFD_HUGETLB, SHMO_HUGETLB)";
	}
	if (len > 10 && !strcmp(v->path + len - 10, " (deleted)"))
		return "mapping of a deleted file";
	if (v->path[0] != '/')
		return "mapping of a non-file object";
	if (v->vmflags & (VMF_IO | VMF_PFNMAP))
		return "device mapping";
	return NULL;
}

/*
 * shmat() attaches a whole segment; restore does that again and mprotect()s
 * the pieces. An attachment partly unmapped since can't be made that way.
 */
static const char *sysv_unsupported(struct dtask *t, int i)
{
	const struct proc_vma *v = &t->maps.vma[i], *p = i ? v - 1 : NULL;
	uint64_t covered = v->end - v->start;
	struct stat st;
	char path[96];
	int j;

	if (v->pgoff)
		return p && p->end == v->start && p->ino == v->ino &&
		       proc_vma_shmem(p) == SHMO_SYSV &&
		       p->pgoff + (p->end - p->start) == v->pgoff ? NULL :
		       "partly unmapped System V segment";
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", t->pid, v->start, v->end);
	if (stat(path, &st))
		return "System V segment that can't be looked at";
	for (j = i + 1; j < t->maps.nr && t->maps.vma[j].start == t->maps.vma[j - 1].end &&
	     t->maps.vma[j].ino == v->ino && t->maps.vma[j].pgoff == covered &&
	     proc_vma_shmem(&t->maps.vma[j]) == SHMO_SYSV; j++)
		covered += t->maps.vma[j].end - t->maps.vma[j].start;
	return covered < (((uint64_t)st.st_size + PAGE_SIZE - 1) & PAGE_MASK) ?
	       "partly unmapped System V segment" : NULL;
}

/*
 * criu's fds in the task at restore, at most (limit_fd_room()): the images
 * directory and the log, its executable, its page store and the store of
 * each ancestor its pages may come from, in these images and in each
 * parent's (pre-dump), one per area of a file or an object. As mm_load()
 * counts them.
 */
static int64_t own_fds_bound(const struct dtask *t)
{
	const struct dtask *a;
	int64_t n = 3, stores = 1;
	int i;

	for (a = t->parent; a; a = a->parent)
		stores++;
	n += stores * (1 + mtrack_depth());
	for (i = 0; i < t->maps.nr; i++)
		n += t->maps.vma[i].path && t->maps.vma[i].path[0] == '/';
	return n;
}

/*
 * A packet socket's rings are mapped whole, from offset 0 (the kernel
 * takes no other mmap() of them); restore maps them again from the
 * task's fd of the new socket, whose rings file-packet.c set up before.
 */
static const char *socket_unsupported(pid_t pid, const struct proc_vma *v)
{
	if (!vma_is_packet(pid, v))
		return "mapping of a socket that is not a packet socket";
	if (v->pgoff)
		return "part of a packet socket's rings";
	if (vma_sock_fd(pid, v->ino) < 0)
		return "packet socket's rings (the task holds no fd of the socket)";
	return NULL;
}

static int mm_check(struct dump_ctx *dc, struct dtask *t)
{
	const char *why;
	int i, nr = 0;

	/* [vsyscall] is the kernel's, in no task's count */
	for (i = 0; i < t->maps.nr; i++)
		nr += !t->maps.vma[i].path || strcmp(t->maps.vma[i].path, "[vsyscall]");
	if (limit_areas(t->pid, nr))
		return -1;
	t->restore_own = own_fds_bound(t);
	for (i = 0; i < t->maps.nr; i++) {
		why = vma_is_socket(&t->maps.vma[i]) ? socket_unsupported(t->pid, &t->maps.vma[i]) :
		      vma_unsupported(&t->maps.vma[i]);
		/* criu's own tracking of an earlier round (pre-dump) is no obstacle */
		if (!why && (t->maps.vma[i].vmflags & VMF_UFFD_WP) && !mtrack_owns(t->pid))
			why = "area registered with a userfaultfd";
		if (!why && proc_vma_shmem(&t->maps.vma[i]) == SHMO_SYSV)
			why = sysv_unsupported(t, i);
		if (why) {
			pr_err("Task %d: %s at %#lx-%#lx (%s) is not supported",
			       t->pid, why, t->maps.vma[i].start, t->maps.vma[i].end,
			       t->maps.vma[i].path ? t->maps.vma[i].path : "anonymous");
			return -1;
		}
	}
	return 0;
}

struct mm_dump_priv {
	int brk_idx, thp_idx, dumpable_idx;
};

static int mm_prepare(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct mm_dump_priv *p = xzalloc(sizeof(*p));

	if (!p)
		return -1;
	t->priv[PART_MM] = p;
	p->brk_idx = BATCH(b, "brk(0)", __NR_brk, 0);
	p->thp_idx = BATCH(b, "prctl(PR_GET_THP_DISABLE)", __NR_prctl | SC_MAY_FAIL,
			   PR_GET_THP_DISABLE);
	p->dumpable_idx = BATCH(b, "prctl(PR_GET_DUMPABLE)", __NR_prctl, PR_GET_DUMPABLE);
	return (p->brk_idx < 0 || p->thp_idx < 0 || p->dumpable_idx < 0) ? -1 : 0;
}

/*
 * What stat() of a mapped file gave, by the device and inode maps shows
 * for the area. The tasks of a tree map the same binary and libraries,
 * each in several areas: one stat() of /proc/PID/map_files per file and
 * dump instead of one per area and task (5 us each).
 */
struct mapped_file {
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	struct stat st;
	uint64_t mnt;		/* the mount it is mapped from (the first area's) */
	int bid_read;			/* the build-id below was looked for */
	size_t bid_len;			/* 0: none */
	uint8_t bid[BUILD_ID_MAX];
	struct mapped_file *next;
};

#define MAPPED_HASH	256

static struct mapped_file *mapped[MAPPED_HASH];

static struct mapped_file *stat_mapped(pid_t pid, const struct proc_vma *v)
{
	size_t h = (v->ino ^ v->dev_minor * 31 ^ v->dev_major * 1021) % MAPPED_HASH;
	struct mapped_file *f;
	char path[64];

	for (f = mapped[h]; f; f = f->next)
		if (f->ino == v->ino && f->dev_minor == v->dev_minor &&
		    f->dev_major == v->dev_major)
			return f;
	f = xzalloc(sizeof(*f));
	if (!f)
		return NULL;
	/* map_files names the very file mapped, even if its path was reused */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, v->start, v->end);
	if (stat(path, &f->st)) {
		pr_perror("Task %d: can't stat the file mapped at %#lx (%s)", pid, v->start,
			  v->path);
		free(f);
		return NULL;
	}
	f->mnt = mnt_id_of(path);
	f->dev_major = v->dev_major;
	f->dev_minor = v->dev_minor;
	f->ino = v->ino;
	f->next = mapped[h];
	mapped[h] = f;
	return f;
}

/*
 * The build-id of a mapped file, read once per file and dump: a restore
 * that finds another mtime accepts a file of the same build-id and size.
 */
static int mapped_build_id(pid_t pid, const struct proc_vma *v, struct mapped_file *f,
			   VmaEntry *e)
{
	char path[64];
	int fd, ret;

	if (!f->bid_read) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, v->start,
			 v->end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ret = fd < 0 ? -1 : file_build_id(fd, f->bid, &f->bid_len);
		if (fd >= 0)
			close(fd);
		if (ret < 0) {
			pr_perror("Task %d: can't read the file mapped at %#lx (%s)", pid,
				  v->start, v->path);
			return -1;
		}
		if (ret)
			f->bid_len = 0;
		f->bid_read = 1;
	}
	e->has_file_build_id = f->bid_len != 0;
	e->file_build_id.data = f->bid;
	e->file_build_id.len = f->bid_len;
	return 0;
}

static void forget_mapped(void)
{
	struct mapped_file *f;
	size_t h;

	for (h = 0; h < MAPPED_HASH; h++)
		while ((f = mapped[h])) {
			mapped[h] = f->next;
			free(f);
		}
}

static int fill_vma(pid_t pid, const struct proc_vma *v, VmaEntry *e)
{
	struct mapped_file *f;

	e->start = v->start;
	e->end = v->end;
	e->prot = v->prot;
	e->flags = v->shared ? MAP_SHARED : MAP_PRIVATE;
	if (v->vmflags & VMF_GROWSDOWN)
		e->flags |= MAP_GROWSDOWN;
	e->has_madv = 1;
	e->madv = v->vmflags & (VMF_DONTCOPY | VMF_DONTDUMP | VMF_HUGEPAGE |
				VMF_NOHUGEPAGE | VMF_MERGEABLE | VMF_WIPEONFORK |
				VMF_LOCKED | VMF_LOCKONFAULT);
	if (vma_special(v, &e->kind))
		return 0;
	if (vma_is_huge_anon(v)) {
		e->kind = VMA_KIND__VMA_HUGETLB_PRIVATE;
		e->has_huge_page_kb = 1;
		e->huge_page_kb = v->page_kb;
		return 0;
	}
	if (vma_is_anon(v)) {
		e->kind = VMA_KIND__VMA_ANON_PRIVATE;
		return 0;
	}
	if (vma_is_socket(v)) {
		e->kind = VMA_KIND__VMA_PACKET_RING;
		e->has_ino = e->has_sock_fd = 1;
		e->ino = v->ino;
		e->sock_fd = vma_sock_fd(pid, v->ino);
		return e->sock_fd == (uint32_t)-1 ? -1 : 0;
	}
	e->has_pgoff = 1;
	e->pgoff = v->pgoff;
	f = stat_mapped(pid, v);
	if (!f)
		return -1;
	e->has_dev = e->has_ino = e->has_file_size = 1;
	e->dev = f->st.st_dev;
	e->ino = f->st.st_ino;		/* the shmid of a System V segment */
	e->file_size = f->st.st_size;
	e->has_open_flags = 1;
	e->open_flags = (v->shared && (v->vmflags & VMF_MAYWRITE)) ? O_RDWR : O_RDONLY;
	switch (proc_vma_shmem(v)) {
	case SHMO_ANON:
		e->kind = VMA_KIND__VMA_ANON_SHARED;
		return 0;
	case SHMO_MEMFD:
		e->kind = v->shared ? VMA_KIND__VMA_MEMFD_SHARED : VMA_KIND__VMA_MEMFD_PRIVATE;
		e->path = v->path;
		return 0;
	case SHMO_SYSV:
		e->kind = VMA_KIND__VMA_SYSV_SHM;
		e->path = v->path;
		return 0;
	case SHMO_GHOST:
		e->kind = v->shared ? VMA_KIND__VMA_GHOST_SHARED : VMA_KIND__VMA_GHOST_PRIVATE;
		e->path = v->path;
		return 0;
	}
	e->kind = v->shared ? VMA_KIND__VMA_FILE_SHARED : VMA_KIND__VMA_FILE_PRIVATE;
	e->path = v->path;
	e->has_file_mtime_ns = 1;
	e->file_mtime_ns = ts_to_ns(&f->st.st_mtim);
	e->has_mnt_id = !!f->mnt;
	e->mnt_id = f->mnt;
	if (mapped_build_id(pid, v, f, e))
		return -1;
	return mnt_dump_reaches(pid, f->mnt, v->path) ? 0 : -1;
}

/*
 * An executable deleted since the task started is a ghost the task maps:
 * restore takes it from the object its areas map (shmem.c saves it).
 */
static int exe_ghost(struct dtask *t, MmEntry *mm, VmaEntry *vmas, int nr)
{
	size_t len = strlen(mm->exe_path);
	int i;

	if (len < 10 || strcmp(mm->exe_path + len - 10, " (deleted)"))
		return 0;
	for (i = 0; i < nr; i++)
		if ((vmas[i].kind == VMA_KIND__VMA_GHOST_PRIVATE ||
		     vmas[i].kind == VMA_KIND__VMA_GHOST_SHARED) &&
		    !strcmp(vmas[i].path, mm->exe_path)) {
			mm->has_exe_dev = mm->has_exe_ino = 1;
			mm->exe_dev = vmas[i].dev;
			mm->exe_ino = vmas[i].ino;
			return 0;
		}
	pr_err("Task %d: its executable %s was deleted and is not mapped: not supported",
	       t->pid, mm->exe_path);
	return -1;
}

static int read_auxv(pid_t pid, MmEntry *mm)
{
	char path[64];
	size_t len;
	uint64_t *a;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	a = (uint64_t *)read_file(-1, path, &len);
	if (!a) {
		pr_perror("Task %d: can't read auxv", pid);
		return -1;
	}
	mm->auxv = a;
	mm->n_auxv = len / sizeof(uint64_t);
	return 0;
}

static int mm_dump(struct dump_ctx *dc, struct dtask *t, struct batch *b)
{
	struct mm_dump_priv *p = t->priv[PART_MM];
	MmEntry mm = MM_ENTRY__INIT;
	PagemapEntry pm = PAGEMAP_ENTRY__INIT;
	VmaEntry *vmas = NULL, **pv = NULL;
	char path[64], exe[PATH_MAX];
	ssize_t n;
	int i, ret = -1;

	mm.start_code = t->stat.start_code;
	mm.end_code = t->stat.end_code;
	mm.start_data = t->stat.start_data;
	mm.end_data = t->stat.end_data;
	mm.start_brk = t->stat.start_brk;
	mm.brk = batch_entry(b, p->brk_idx)->ret;
	mm.start_stack = t->stat.start_stack;
	mm.arg_start = t->stat.arg_start;
	mm.arg_end = t->stat.arg_end;
	mm.env_start = t->stat.env_start;
	mm.env_end = t->stat.env_end;
	mm.has_thp_disabled = mm.has_dumpable = 1;
	mm.thp_disabled = batch_entry(b, p->thp_idx)->ret > 0;
	mm.dumpable = batch_entry(b, p->dumpable_idx)->ret;
	if (read_auxv(t->pid, &mm))
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0) {
		pr_perror("Task %d: can't read its exe link", t->pid);
		goto out;
	}
	exe[n] = '\0';
	mm.exe_path = exe;
	mm.exe_mnt = mnt_id_of(path);
	mm.has_exe_mnt = !!mm.exe_mnt;
	if (!mnt_dump_reaches(t->pid, mm.exe_mnt, "its executable"))
		goto out;

	vmas = xzalloc(t->maps.nr * sizeof(*vmas));
	pv = xzalloc(t->maps.nr * sizeof(*pv));
	if (!vmas || !pv)
		goto out;
	for (i = 0; i < t->maps.nr; i++) {
		vma_entry__init(&vmas[i]);
		if (fill_vma(t->pid, &t->maps.vma[i], &vmas[i]))
			goto out;
		if (vmas[i].kind == VMA_KIND__VMA_VDSO) {
			mm.has_vdso_hash = 1;
			if (vdso_note(dc, t->pid, vmas[i].start, vmas[i].end, &mm.vdso_hash))
				goto out;
		}
		pv[i] = &vmas[i];
	}
	mm.vmas = pv;
	mm.n_vmas = t->maps.nr;
	if (exe_ghost(t, &mm, vmas, t->maps.nr))
		goto out;

	if (mm_dump_pages(dc, t, &mm, &pm))
		goto out;
	if (img_write(dc->dirfd, IMG_MM, t->ns_pid, &mm.base) ||
	    img_write(dc->dirfd, IMG_PAGEMAP, t->ns_pid, &pm.base))
		goto out;
	/*
	 * pages sent to a page server while tracked: the next round, run
	 * with --prev-images-dir here, reads what this one saved from here
	 */
	if (dc->opts->page_server && dc->opts->track_mem &&
	    img_write_here(dc->dirfd, IMG_PAGEMAP, t->ns_pid, &pm.base))
		goto out;
	ret = 0;
out:
	for (i = 0; i < (int)pm.n_runs; i++)
		free(pm.runs[i]);
	free(pm.runs);
	for (i = 0; i < (int)mm.n_guards; i++)
		free(mm.guards[i]);
	free(mm.guards);
	free(mm.auxv);
	free(vmas);
	free(pv);
	free(p);
	t->priv[PART_MM] = NULL;
	return ret;
}

static int mm_dump_tree(struct dump_ctx *dc)
{
	forget_mapped();
	mm_dump_pages_done(dc);
	return 0;
}

/* ------------------------------------------------------------- restore */

static int bad_vma(struct rst_ctx *rc, const VmaEntry *v)
{
	switch (v->kind) {
	case VMA_KIND__VMA_FILE_PRIVATE:
	case VMA_KIND__VMA_FILE_SHARED:
		return !v->path || v->path[0] != '/';
	case VMA_KIND__VMA_ANON_SHARED:
		return v->has_ino && (!v->has_dev || !rst_object_known(rc, v->dev, v->ino));
	case VMA_KIND__VMA_MEMFD_SHARED:
	case VMA_KIND__VMA_MEMFD_PRIVATE:
	case VMA_KIND__VMA_GHOST_SHARED:
	case VMA_KIND__VMA_GHOST_PRIVATE:
		return !v->has_ino || !v->has_dev || !rst_object_known(rc, v->dev, v->ino);
	case VMA_KIND__VMA_SYSV_SHM:
		return !v->has_ino || v->ino > INT_MAX || !v->has_pgoff;
	case VMA_KIND__VMA_HUGETLB_PRIVATE:
		return !v->has_huge_page_kb || !vma_huge_flags(v->huge_page_kb) ||
		       ((v->start | v->end) & ((uint64_t)v->huge_page_kb * 1024 - 1));
	case VMA_KIND__VMA_PACKET_RING:
		return !v->has_sock_fd || v->sock_fd > INT_MAX || !(v->flags & MAP_SHARED);
	default:
		return v->kind < 1 || v->kind > VMA_KIND__VMA_PACKET_RING;
	}
}

static int validate(struct rst_ctx *rc, struct rtask *t, MmEntry *mm)
{
	uint64_t prev_end = 0;
	size_t i, j = 0, nr = 0;
	VmaEntry *v;

	for (i = 0; i < mm->n_vmas; i++)
		nr += mm->vmas[i]->kind != VMA_KIND__VMA_VSYSCALL;
	if (mm->has_exe_ino &&
	    (!mm->has_exe_dev || !rst_object_known(rc, mm->exe_dev, mm->exe_ino))) {
		pr_err("Task %d: image mm has a deleted executable without its object", t->pid);
		return -1;
	}
	if (limit_areas(t->pid, nr))
		return -1;
	for (i = 0; i < mm->n_vmas; i++) {
		v = mm->vmas[i];
		if ((v->start | v->end) & ~PAGE_MASK || v->start >= v->end ||
		    v->start < prev_end || bad_vma(rc, v)) {
			pr_err("Task %d: image mm has an invalid area #%zu (%#lx-%#lx)",
			       t->pid, i, v->start, v->end);
			return -1;
		}
		prev_end = v->end;
	}
	for (i = 0, j = 0; i < mm->n_guards; i++) {
		GuardRange *g = mm->guards[i];

		while (j < mm->n_vmas && mm->vmas[j]->end <= g->start)
			j++;
		if (!g->nr_pages || g->nr_pages > (1ULL << 36) || j == mm->n_vmas ||
		    g->start < mm->vmas[j]->start ||
		    g->start + g->nr_pages * PAGE_SIZE > mm->vmas[j]->end) {
			pr_err("Task %d: image mm has a guard region #%zu outside any area",
			       t->pid, i);
			return -1;
		}
	}
	return 0;
}

/*
 * criu's own vDSO areas and the top of its memory, read once for the whole
 * tree (rc->shared[PART_MM] during a restore): every task is checked
 * against the same vDSO, and every new task, a fork of criu, still has
 * them where criu has them when its batch unmaps criu and moves them.
 */
struct mm_self {
	int nr;
	struct vdso_area sp[8];
	uint64_t top;			/* the end of criu's highest area, [vsyscall] aside */
};

static struct mm_self *self_special(struct rst_ctx *rc)
{
	struct mm_self *ms = rc->shared[PART_MM];
	struct proc_maps self;
	VmaKind k;
	int j;

	if (ms)
		return ms;
	if (proc_read_maps(getpid(), 0, &self))
		return NULL;
	ms = xzalloc(sizeof(*ms));
	for (j = 0; ms && j < self.nr && ms->nr < (int)ARRAY_SIZE(ms->sp); j++) {
		if (self.vma[j].end < (1ULL << 56))
			ms->top = max(ms->top, self.vma[j].end);
		if (!vma_special(&self.vma[j], &k))
			continue;
		ms->sp[ms->nr].kind = k;
		ms->sp[ms->nr].start = self.vma[j].start;
		ms->sp[ms->nr].size = self.vma[j].end - self.vma[j].start;
		ms->nr++;
	}
	proc_maps_free(&self);
	rc->shared[PART_MM] = ms;
	return ms;
}

static int is_file(const VmaEntry *v);
static int is_object(const VmaEntry *v);

/*
 * criu's fds mm_child opens, at most: executable, page stores (its own
 * among them, and those of parent images), mapped files and objects.
 */
static int own_fds(const struct mm_loaded *l)
{
	size_t i;
	int n = 1 + l->stores.nr;

	for (i = 0; i < l->mm->n_vmas; i++)
		n += is_file(l->mm->vmas[i]) || is_object(l->mm->vmas[i]);
	return n;
}

static int mm_load(struct rst_ctx *rc, struct rtask *t)
{
	struct mm_loaded *l = xzalloc(sizeof(*l));
	struct mm_self *ms;
	size_t i;

	if (!l)
		return -1;
	t->img[PART_MM] = l;
	l->exe_fd = -1;
	l->stores.pid = t->pid;
	if (img_read(rc->dirfd, IMG_MM, t->pid, (void **)&l->mm, 0) < 0 ||
	    img_read(rc->dirfd, IMG_PAGEMAP, t->pid, (void **)&l->pm, 0) < 0)
		return -1;
	if (validate(rc, t, l->mm) || vma_huge_room(t->pid, l->mm) ||
	    mm_check_pages(rc, t, l->mm, l->pm, &l->stores))
		return -1;
	ms = self_special(rc);
	if (!ms)
		return -1;
	t->used = xzalloc(l->mm->n_vmas * sizeof(*t->used));
	if (!t->used)
		return -1;
	for (i = 0; i < l->mm->n_vmas; i++) {
		t->used[i].start = l->mm->vmas[i]->start;
		t->used[i].end = l->mm->vmas[i]->end;
	}
	t->nr_used = l->mm->n_vmas;
	/* where the kernel's [vvar], [vdso] go; it may take a place in t->used */
	if (vdso_plan(rc, t, l->mm, ms->sp, ms->nr))
		return -1;
	t->own_fds += own_fds(l);
	t->batch_entries += 16 + 12 * l->mm->n_vmas + l->pm->n_runs + l->stores.nr_src +
			    l->mm->n_guards;
	/* --lazy-pages: reads of the rseq areas, one per thread and piece at most */
	if (rc->opts->lazy_pages) {
		if (mm_lazy_load(rc, t, l->mm))
			return -1;
		t->batch_entries += l->stores.nr_src * t->nr_threads;
	}
	t->batch_data += 1024 + l->mm->n_auxv * 8;
	return 0;
}

/*
 * The file at the dumped path is the one the task mapped: the same size
 * and mtime, or, another mtime (a copy: a container image unpacked on
 * another host), the same build-id. One line names a file that is not.
 */
static int same_file(struct rtask *t, const VmaEntry *v, int fd, const struct stat *st)
{
	uint8_t id[BUILD_ID_MAX];
	size_t len = 0;
	int ret;

	if (v->has_file_size && (uint64_t)st->st_size != v->file_size) {
		pr_err("Task %d: %s mapped at %#lx changed since the dump: %lld bytes, were %lu",
		       t->pid, v->path, v->start, (long long)st->st_size, v->file_size);
		return 0;
	}
	if (!v->has_file_mtime_ns || ts_to_ns(&st->st_mtim) == v->file_mtime_ns)
		return 1;
	if (!v->has_file_build_id) {
		pr_err("Task %d: %s mapped at %#lx changed since the dump: another mtime, and "
		       "no build-id to tell a copy", t->pid, v->path, v->start);
		return 0;
	}
	ret = file_build_id(fd, id, &len);
	if (ret < 0) {
		pr_perror("Task %d: can't read %s mapped at %#lx", t->pid, v->path, v->start);
		return 0;
	}
	if (ret || len != v->file_build_id.len || memcmp(id, v->file_build_id.data, len)) {
		pr_err("Task %d: %s mapped at %#lx changed since the dump: another mtime and "
		       "%s build-id", t->pid, v->path, v->start, ret ? "no" : "another");
		return 0;
	}
	pr_info("Task %d: %s mapped at %#lx has another mtime, the same size and build-id: "
		"a copy", t->pid, v->path, v->start);
	return 1;
}

static int open_checked(struct rtask *t, const VmaEntry *v)
{
	struct stat st;
	int fd;

	fd = mnt_open(t->pid, v->mnt_id, v->path, v->has_open_flags ? v->open_flags : O_RDONLY);
	if (fd < 0) {
		pr_perror("Task %d: can't open %s mapped at %#lx", t->pid, v->path, v->start);
		return -1;
	}
	if (fstat(fd, &st) || !same_file(t, v, fd, &st)) {
		close(fd);
		return -1;
	}
	return rst_private_fd(t, fd);
}

static int is_file(const VmaEntry *v)
{
	return v->kind == VMA_KIND__VMA_FILE_PRIVATE || v->kind == VMA_KIND__VMA_FILE_SHARED;
}

static int is_object(const VmaEntry *v)
{
	return (v->kind == VMA_KIND__VMA_ANON_SHARED && v->has_ino) ||
	       v->kind == VMA_KIND__VMA_MEMFD_SHARED || v->kind == VMA_KIND__VMA_MEMFD_PRIVATE ||
	       v->kind == VMA_KIND__VMA_GHOST_SHARED || v->kind == VMA_KIND__VMA_GHOST_PRIVATE;
}

/* A reopening of the object criu made for the tree (@what) with @flags; -1 logged. */
static int reopen_object(struct rst_ctx *rc, struct rtask *t, uint64_t dev, uint64_t ino,
			 int flags, const char *what)
{
	int fd = rst_object_fd(rc, dev, ino);
	char path[64];

	if (fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		pr_perror("Task %d: can't reopen %s (flags %#x)", t->pid, what, flags);
	return fd;
}

/*
 * The fd an area of a shared object is mapped from: the one criu made for
 * the tree, or a reopening of it with the area's open flags: read-only for
 * a shared memfd area that could never be made writable (as if mapped
 * from an fd opened O_RDONLY), and for a shared area of a ghost, whose
 * object fd is read-only (the kernel takes no deleted executable that
 * someone may write to, shmem.c).
 */
static int object_fd(struct rst_ctx *rc, struct rtask *t, const VmaEntry *v)
{
	int fd;

	if (!(v->kind == VMA_KIND__VMA_MEMFD_SHARED && v->open_flags == O_RDONLY) &&
	    v->kind != VMA_KIND__VMA_GHOST_SHARED)
		return rst_object_fd(rc, v->dev, v->ino);
	fd = reopen_object(rc, t, v->dev, v->ino, v->open_flags, v->path);
	return fd < 0 ? -1 : rst_private_fd(t, fd);
}

static int mm_child(struct rst_ctx *rc, struct rtask *t)
{
	struct mm_loaded *l = t->img[PART_MM];
	size_t i, j;
	VmaEntry *v, *w;

	l->fds = xmalloc(l->mm->n_vmas * sizeof(int));
	if (!l->fds)
		return -1;
	for (i = 0; i < l->mm->n_vmas; i++) {
		v = l->mm->vmas[i];
		l->fds[i] = -1;
		if (!is_file(v) && !is_object(v))
			continue;
		/* one fd per file (or object) and mode serves all of its areas */
		for (j = 0; j < i && l->fds[i] < 0; j++) {
			w = l->mm->vmas[j];
			if (l->fds[j] >= 0 && is_file(v) == is_file(w) &&
			    w->open_flags == v->open_flags &&
			    (is_file(v) ? !strcmp(w->path, v->path) :
			     w->dev == v->dev && w->ino == v->ino && w->kind == v->kind))
				l->fds[i] = l->fds[j];
		}
		if (l->fds[i] < 0)
			l->fds[i] = is_file(v) ? open_checked(t, v) : object_fd(rc, t, v);
		if (l->fds[i] < 0)
			return -1;
	}
	if (l->mm->exe_path) {
		l->exe_fd = l->mm->has_exe_ino ?
			reopen_object(rc, t, l->mm->exe_dev, l->mm->exe_ino, O_RDONLY,
				      l->mm->exe_path) :
			mnt_open(t->pid, l->mm->exe_mnt, l->mm->exe_path, O_RDONLY);
		if (l->exe_fd < 0) {
			pr_perror("Task %d: can't open its executable %s", t->pid,
				  l->mm->exe_path);
			return -1;
		}
		l->exe_fd = rst_private_fd(t, l->exe_fd);
	}
	if (l->mm->exe_path && l->exe_fd < 0)
		return -1;
	if (rc->opts->lazy_pages && mm_lazy_child(rc, t))
		return -1;
	return mm_open_stores(rc, t, l->pm, &l->stores);
}

#define SPECIAL_SLOTS	3
#define USER_TOP	((1ULL << 47) - PAGE_SIZE)	/* TASK_SIZE of 4-level page tables */

/* Unmap everything criu had here but the trampoline and the vDSO. */
static int unmap_criu(struct rtask *t, struct batch *b, struct mm_self *ms, uint64_t top)
{
	struct rst_range keep[SPECIAL_SLOTS + 1];
	uint64_t from = 0;
	int i, j, nr = 0;

	keep[nr].start = t->area;
	keep[nr++].end = t->area + t->area_size;
	for (i = 0; i < ms->nr && nr < (int)ARRAY_SIZE(keep); i++)
		if (ms->sp[i].kind != VMA_KIND__VMA_VSYSCALL) {
			keep[nr].start = ms->sp[i].start;
			keep[nr++].end = ms->sp[i].start + ms->sp[i].size;
		}
	for (i = 0; i < nr; i++)		/* sort by address */
		for (j = i + 1; j < nr; j++)
			if (keep[j].start < keep[i].start) {
				struct rst_range x = keep[i];

				keep[i] = keep[j];
				keep[j] = x;
			}
	for (i = 0; i <= nr; i++) {
		uint64_t to = i < nr ? keep[i].start : top;

		if (to > from && BATCH(b, "munmap of criu's own memory", __NR_munmap,
				       from, to - from) < 0)
			return -1;
		if (i < nr)
			from = keep[i].end;
	}
	return 0;
}

/*
 * Move the kernel's [vvar], [vvar_vclock] and [vdso] where mm-vdso.c says
 * (where the task had them, or a place of their own), through slots at
 * the top of the trampoline: an old place of one may be the new place of
 * another.
 */
static int move_specials(struct rtask *t, struct batch *b, struct mm_self *ms)
{
	uint64_t slot = t->area + t->area_size, size, to;
	struct {
		uint64_t slot, to, size;
	} moves[SPECIAL_SLOTS];
	int j, n = 0;

	for (j = 0; j < ms->nr; j++) {
		if (ms->sp[j].kind == VMA_KIND__VMA_VSYSCALL)
			continue;
		size = ms->sp[j].size;
		to = vdso_dest(t, j);
		if (!to) {
			if (BATCH(b, "munmap of an unused vDSO area", __NR_munmap,
				  ms->sp[j].start, size) < 0)
				return -1;
			continue;
		}
		if (n == SPECIAL_SLOTS)
			return -1;
		/*
		 * packed at the very top: the rest of the trampoline stays one
		 * area, so the task's areas and it fit in vm.max_map_count
		 * whenever the dump's scratch area did (limit_areas())
		 */
		slot -= size;
		moves[n].slot = slot;
		moves[n].to = to;
		moves[n++].size = size;
		if (BATCH(b, "mremap of the vDSO aside", __NR_mremap, ms->sp[j].start,
			  size, size, MREMAP_MAYMOVE | MREMAP_FIXED, slot) < 0)
			return -1;
	}
	for (j = 0; j < n; j++)
		if (BATCH(b, "mremap of the vDSO into place", __NR_mremap, moves[j].slot,
			  moves[j].size, moves[j].size, MREMAP_MAYMOVE | MREMAP_FIXED,
			  moves[j].to) < 0)
			return -1;
	return 0;
}

/*
 * A System V segment is attached whole at the first of its areas (the one
 * at offset 0, see sysv_unsupported); the others only get their protection.
 */
static int attach_sysv(struct batch *b, VmaEntry *v, unsigned int *prot)
{
	int rdonly = v->open_flags == O_RDONLY;

	*prot = PROT_READ | (rdonly ? 0 : PROT_WRITE) | (v->prot & PROT_EXEC);
	if (v->pgoff)
		return 0;
	return BATCH(b, "shmat of a System V segment", __NR_shmat, v->ino, v->start,
		     SHM_REMAP | (rdonly ? SHM_RDONLY : 0) |
		     ((v->prot & PROT_EXEC) ? SHM_EXEC : 0));
}

static int advise_area(struct batch *b, VmaEntry *v)
{
	static const struct {
		unsigned int vmf;
		int advice;
		int may_fail;
	} adv[] = {
		{ VMF_DONTCOPY, MADV_DONTFORK, 0 },
		{ VMF_DONTDUMP, MADV_DONTDUMP, 0 },
		/*
		 * kernels without THP (EINVAL, the only error on an area just
		 * mapped): no huge page to ask for or against there
		 */
		{ VMF_HUGEPAGE, MADV_HUGEPAGE, 1 },
		{ VMF_NOHUGEPAGE, MADV_NOHUGEPAGE, 1 },
		{ VMF_WIPEONFORK, MADV_WIPEONFORK, 0 },
		{ VMF_MERGEABLE, MADV_MERGEABLE, 1 },	/* kernels without KSM */
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(adv); i++)
		if ((v->madv & adv[i].vmf) &&
		    BATCH(b, "madvise of a memory area",
			  __NR_madvise | (adv[i].may_fail ? SC_MAY_FAIL : 0),
			  v->start, v->end - v->start, adv[i].advice) < 0)
			return -1;
	/* locked on fault: mlock2(MLOCK_ONFAULT) does not fill the area */
	if ((v->madv & VMF_LOCKED) && (v->madv & VMF_LOCKONFAULT) &&
	    BATCH(b, "mlock2(MLOCK_ONFAULT) of a memory area", __NR_mlock2, v->start,
		  v->end - v->start, MLOCK_ONFAULT) < 0)
		return -1;
	if ((v->madv & VMF_LOCKED) && !(v->madv & VMF_LOCKONFAULT) &&
	    BATCH(b, "mlock of a memory area", __NR_mlock, v->start, v->end - v->start) < 0)
		return -1;
	return 0;
}

/* Its pages: read here, or (--lazy-pages) left to the daemon. */
static int queue_fill(struct rtask *t, struct batch *b, struct mm_loaded *l, size_t i,
		      size_t *run)
{
	if (mm_lazy_area(t, i))
		return mm_lazy_queue_reads(b, t, &l->stores, l->pm, l->mm->vmas[i]->end, run);
	return mm_queue_reads(b, &l->stores, l->pm, l->mm->vmas[i]->end, run);
}

static int map_area(struct rtask *t, struct batch *b, struct mm_loaded *l, size_t i,
		    size_t *run)
{
	VmaEntry *v = l->mm->vmas[i];
	uint64_t len = v->end - v->start;
	unsigned int prot = v->prot, flags = MAP_FIXED | (v->flags & MAP_GROWSDOWN);
	int fd = -1;

	if (*run < l->pm->n_runs && l->pm->runs[*run]->vaddr < v->end)
		prot |= PROT_READ | PROT_WRITE;		/* to be filled */
	switch (v->kind) {
	case VMA_KIND__VMA_ANON_PRIVATE:
		flags |= MAP_PRIVATE | MAP_ANONYMOUS;
		break;
	case VMA_KIND__VMA_HUGETLB_PRIVATE:
		flags |= MAP_PRIVATE | MAP_ANONYMOUS | vma_huge_flags(v->huge_page_kb);
		break;
	case VMA_KIND__VMA_ANON_SHARED:
		fd = v->has_ino ? l->fds[i] : -1;
		flags |= MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0);
		break;
	case VMA_KIND__VMA_FILE_PRIVATE:
	case VMA_KIND__VMA_MEMFD_PRIVATE:
	case VMA_KIND__VMA_GHOST_PRIVATE:
		flags |= MAP_PRIVATE;
		fd = l->fds[i];
		break;
	case VMA_KIND__VMA_FILE_SHARED:
	case VMA_KIND__VMA_MEMFD_SHARED:
	case VMA_KIND__VMA_GHOST_SHARED:
		flags |= MAP_SHARED;
		fd = l->fds[i];
		break;
	case VMA_KIND__VMA_PACKET_RING:
		flags |= MAP_SHARED;
		fd = v->sock_fd;
		break;
	case VMA_KIND__VMA_SYSV_SHM:
		if (attach_sysv(b, v, &prot) < 0 || advise_area(b, v))
			return -1;
		goto protect;
	default:
		return 0;	/* the kernel's own areas come with their flags */
	}
	/* advised before it is filled: MADV_HUGEPAGE makes the fill's faults huge */
	if (BATCH(b, "mmap of a memory area", __NR_mmap, v->start, len, prot, flags, fd,
		  v->has_pgoff ? v->pgoff : 0) < 0 || advise_area(b, v) ||
	    queue_fill(t, b, l, i, run))
		return -1;
protect:
	if (prot != v->prot &&
	    BATCH(b, "mprotect of a memory area", __NR_mprotect, v->start, len, v->prot) < 0)
		return -1;
	return 0;
}

static int set_mm_map(struct rtask *t, struct batch *b, struct mm_loaded *l)
{
	MmEntry *mm = l->mm;
	struct prctl_mm_map map = {
		.start_code = mm->start_code, .end_code = mm->end_code,
		.start_data = mm->start_data, .end_data = mm->end_data,
		.start_brk = mm->start_brk, .brk = mm->brk,
		.start_stack = mm->start_stack,
		.arg_start = mm->arg_start, .arg_end = mm->arg_end,
		.env_start = mm->env_start, .env_end = mm->env_end,
		.auxv_size = mm->n_auxv * sizeof(uint64_t),
		.exe_fd = l->exe_fd >= 0 ? l->exe_fd : -1,
	};
	uint64_t addr;

	if (mm->n_auxv) {
		map.auxv = (__u64 *)batch_put(b, mm->auxv, map.auxv_size);
		if (!map.auxv)
			return -1;
	}
	addr = batch_put(b, &map, sizeof(map));
	if (!addr || BATCH(b, "prctl(PR_SET_MM_MAP)", __NR_prctl, PR_SET_MM, PR_SET_MM_MAP,
			   addr, sizeof(map)) < 0)
		return -1;
	if (mm->thp_disabled &&
	    BATCH(b, "prctl(PR_SET_THP_DISABLE)", __NR_prctl, PR_SET_THP_DISABLE, 1) < 0)
		return -1;
	if (mm->has_dumpable && mm->dumpable == 0 &&
	    BATCH(b, "prctl(PR_SET_DUMPABLE)", __NR_prctl, PR_SET_DUMPABLE, 0) < 0)
		return -1;
	return 0;
}

/*
 * criu's memory goes, all of it up to the top of the user address space
 * (an munmap of nothing costs nothing): what a task maps after its fork
 * (its trampoline aside) lies below criu's stack, where criu had it.
 */
static int mm_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	struct mm_self *ms = rc->shared[PART_MM];
	struct mm_loaded *l = t->img[PART_MM];
	uint64_t top;
	size_t i, run = 0;

	if (!ms) {
		pr_err("Task %d: criu's own areas are not known", t->pid);
		return -1;
	}
	top = max(ms->top, USER_TOP);
	for (i = 0; i < l->mm->n_vmas; i++)
		if (l->mm->vmas[i]->kind != VMA_KIND__VMA_VSYSCALL)
			top = max(top, l->mm->vmas[i]->end);
	if (unmap_criu(t, b, ms, top) || move_specials(t, b, ms))
		return -1;
	for (i = 0; i < l->mm->n_vmas; i++) {
		if (map_area(t, b, l, i, &run))
			return -1;
	}
	if (vdso_batch(t, b))
		return -1;
	for (i = 0; i < l->mm->n_guards; i++)
		if (BATCH(b, "madvise(MADV_GUARD_INSTALL)", __NR_madvise,
			  l->mm->guards[i]->start, l->mm->guards[i]->nr_pages * PAGE_SIZE,
			  MADV_GUARD_INSTALL) < 0)
			return -1;
	return set_mm_map(t, b, l);
}

static void mm_release(struct rtask *t)
{
	struct mm_loaded *l = t->img[PART_MM];

	if (!l)
		return;
	img_free(IMG_MM, l->mm);
	img_free(IMG_PAGEMAP, l->pm);
	mm_free_stores(&l->stores);
	free(l->fds);
	free(l);
	t->img[PART_MM] = NULL;
}

/* The task's batch is done: the pages it left to criu (--jobs). */
static int mm_final(struct rst_ctx *rc, struct rtask *t)
{
	struct mm_loaded *l = t->img[PART_MM];

	return mm_fill_outside(rc, t, &l->stores, l->pm);
}

static void mm_release_tree(struct rst_ctx *rc)
{
	mm_lazy_release(rc);
	free(rc->shared[PART_MM]);
	rc->shared[PART_MM] = NULL;
}

const struct part part_mm = {
	.name = "mm",
	.id = PART_MM,
	.in_pre_dump = 1,
	.check = mm_check,
	.prepare = mm_prepare,
	.dump = mm_dump,
	.dump_tree = mm_dump_tree,
	.load = mm_load,
	.child = mm_child,
	.prefork = mm_lazy_prefork,
	.resume = mm_lazy_resume,
	.batch = mm_batch,
	.final = mm_final,
	.release = mm_release,
	.release_tree = mm_release_tree,
};
