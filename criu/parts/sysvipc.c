// SPDX-License-Identifier: GPL-2.0
/*
 * System V IPC: shared memory segments, semaphore sets and message queues
 * of the IPC namespace the tree made for itself (the root unshared
 * CLONE_NEWIPC). Objects live in a namespace, not in a task, so they are
 * saved once for the tree, with their ids: tasks name them by id (and
 * shmat() areas show the id as their inode).
 *
 * Dump: a helper forked from criu joins the namespace (setns) and reads
 * every object there (sysvipc-save.c). Restore: the root is born into a
 * new IPC namespace (clone3 CLONE_NEWIPC) and, in its child hook, makes every
 * object with the same id (the namespace's shm_next_id, sem_next_id,
 * msg_next_id, writable there with CAP_CHECKPOINT_RESTORE) and the same
 * creator, owner, mode and contents. Tasks attach segments again in their
 * batches (mm.c). Documentation/shared-memory.md tells the whole story.
 *
 * A tree in criu's own IPC namespace shares it with the host: its segments
 * can't be told from the host's, and recreating them would clash with the
 * host's objects. Attached segments there are refused; nested IPC
 * namespaces too. Semaphore undo lists (SEM_UNDO) are not saved.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/sums.h"
#include "parts/part.h"
#include "parts/sysvipc-save.h"
#include "sysvipc.pb-c.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/* ---------------------------------------------------------------- dump */

struct ipc_dump {
	uint64_t ns;		/* the root's IPC namespace */
	int own;		/* not criu's */
	pid_t root, root_ns_pid;
	struct sysvipc_attach *att;
	int nr_att;
};

static struct ipc_dump *dump_state(struct dump_ctx *dc)
{
	if (!dc->shared[PART_SYSVIPC])
		dc->shared[PART_SYSVIPC] = xzalloc(sizeof(struct ipc_dump));
	return dc->shared[PART_SYSVIPC];
}

static int note_attach(struct ipc_dump *s, const struct proc_vma *v, pid_t pid)
{
	struct sysvipc_attach *a;
	unsigned int key = 0;
	int i;

	for (i = 0; i < s->nr_att; i++)
		if (s->att[i].id == (int)v->ino) {
			s->att[i].last = pid;
			return 0;
		}
	a = xpush(s->att, s->nr_att);
	if (!a)
		return -1;
	sscanf(v->path, "/SYSV%08x", &key);
	a->id = v->ino;
	a->key = key;
	a->last = pid;
	return 0;
}

static int sysvipc_check(struct dump_ctx *dc, struct dtask *t)
{
	struct ipc_dump *s = dump_state(dc);
	uint64_t ns, self, th;
	const struct proc_vma *v;
	int i;

	if (!s)
		return -1;
	self = proc_ns_id(0, 0, "ipc");
	ns = proc_ns_id(t->pid, 0, "ipc");
	if (!self || !ns)
		return -1;
	for (i = 1; i < t->nr_threads; i++) {
		th = proc_ns_id(t->pid, t->th[i].tid, "ipc");
		if (th != ns) {
			pr_err("Task %d: thread %d is in an IPC namespace of its own "
			       "(ipc:[%lu]); not supported", t->pid, t->th[i].tid, th);
			return -1;
		}
	}
	if (!t->parent) {
		s->ns = ns;
		s->own = ns != self;
		s->root = t->pid;
		s->root_ns_pid = t->ns_pid;
	} else if (ns != s->ns) {
		pr_err("Task %d is in IPC namespace ipc:[%lu], not the root's (ipc:[%lu]); "
		       "nested IPC namespaces are not supported", t->pid, ns, s->ns);
		return -1;
	}
	for (i = 0; i < t->maps.nr; i++) {
		v = &t->maps.vma[i];
		if (proc_vma_shmem(v) != SHMO_SYSV)
			continue;
		if (!s->own) {
			pr_err("Task %d: System V shared memory segment %lu (%s) at %#lx is in "
			       "criu's own IPC namespace ipc:[%lu]; restoring it there would "
			       "clash with the host's objects: run the tree in an IPC "
			       "namespace of its own (unshare -i)", t->pid, v->ino, v->path,
			       v->start, ns);
			return -1;
		}
		if (note_attach(s, v, t->ns_pid))
			return -1;
	}
	return 0;
}

static int sysvipc_dump_tree(struct dump_ctx *dc)
{
	struct ipc_dump *s = dc->shared[PART_SYSVIPC];
	char path[64];
	int status, fd, ret = -1;
	pid_t helper;

	if (!s || !s->own) {
		ret = 0;
		goto out_free;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", s->root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_perror("Can't open %s", path);
		goto out_free;
	}
	helper = fork();
	if (helper < 0) {
		pr_perror("Can't fork a helper for the tree's IPC namespace");
		close(fd);
		goto out_free;
	}
	if (!helper) {
		if (setns(fd, CLONE_NEWIPC)) {
			pr_perror("Can't enter the tree's IPC namespace");
			_exit(1);
		}
		_exit(sysvipc_save(s->att, s->nr_att, s->root_ns_pid, dc->dirfd) ? 1 : 0);
	}
	close(fd);
	while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pr_err("Can't save the System V IPC objects of the tree's IPC namespace "
		       "(see the log)");
		goto out_free;
	}
	if (img_checksum_on() && img_sums_file(dc->dirfd, IMG_SYSVIPC_PAGES, 0))
		goto out_free;
	ret = 0;
out_free:
	if (s) {
		free(s->att);
		free(s);
	}
	dc->shared[PART_SYSVIPC] = NULL;
	return ret;
}

/* ------------------------------------------------------------- restore */

static int valid_perm(const SysvipcPerm *p)
{
	return p && p->id >= 0 && !(p->mode & ~(0777 | SHM_DEST | SHM_LOCKED));
}

static int valid_sysctl(const SysvipcSysctl *c)
{
	size_t i;

	for (i = 0; i < SYSVIPC_NR_LIMITS; i++)
		if (!strcmp(c->name, sysvipc_limits[i]))
			break;
	/* names go into a /proc path: only the ones we know */
	if (i == SYSVIPC_NR_LIMITS || !c->value[0] || strlen(c->value) > 80 ||
	    strspn(c->value, "0123456789 \t") != strlen(c->value))
		return 0;
	return 1;
}

static int validate(SysvipcEntry *e, uint64_t store)
{
	uint64_t pos = 0, end;
	size_t i, j;

	for (i = 0; i < e->n_sysctls; i++)
		if (!valid_sysctl(e->sysctls[i])) {
			pr_err("Image sysvipc.img has an invalid limit #%zu", i);
			return -1;
		}
	for (i = 0; i < e->n_shms; i++) {
		SysvipcShm *m = e->shms[i];

		if (!valid_perm(m->perm) || !m->size || m->size > LIMIT_FILE_SIZE ||
		    m->pages_off != pos)
			goto bad;
		for (j = 0, end = 0; j < m->n_runs; j++) {
			SysvipcRun *r = m->runs[j];

			if ((r->off & ~PAGE_MASK) || r->off < end || !r->nr_pages ||
			    r->off > m->size ||
			    r->off + (uint64_t)r->nr_pages * PAGE_SIZE >
			    ((m->size + PAGE_SIZE - 1) & PAGE_MASK))
				goto bad;
			end = r->off + (uint64_t)r->nr_pages * PAGE_SIZE;
			pos += (uint64_t)r->nr_pages * PAGE_SIZE;
		}
	}
	for (i = 0; i < e->n_sems; i++)
		/* kernel.sem's SEMMSL has no bound of its own but an int's */
		if (!valid_perm(e->sems[i]->perm) || !e->sems[i]->n_values ||
		    e->sems[i]->n_values > INT_MAX)
			goto bad;
	for (i = 0; i < e->n_msqs; i++) {
		if (!valid_perm(e->msqs[i]->perm) || e->msqs[i]->qbytes > INT_MAX)
			goto bad;
		for (j = 0; j < e->msqs[i]->n_msgs; j++)
			if (e->msqs[i]->msgs[j]->mtype <= 0 ||
			    e->msqs[i]->msgs[j]->text.len > INT_MAX)
				goto bad;
	}
	if (pos != e->pages_size || pos != store) {
		pr_err("Image sysvipc-pages.img is %lu bytes, sysvipc.img says %lu and lists %lu",
		       store, e->pages_size, pos);
		return -1;
	}
	return 0;
bad:
	pr_err("Image sysvipc.img has an invalid object");
	return -1;
}

static int sysvipc_load_tree(struct rst_ctx *rc)
{
	SysvipcEntry *e;
	int64_t size;
	int ret;

	ret = img_read(rc->dirfd, IMG_SYSVIPC, 0, (void **)&e, 1);
	if (ret <= 0)
		return ret;
	rc->shared[PART_SYSVIPC] = e;
	size = img_raw_size(rc->dirfd, IMG_SYSVIPC_PAGES, 0);
	if (size < 0 || validate(e, size))
		return -1;
	/* the root is born into a namespace of its own; the tree follows */
	rc->root_flags |= CLONE_NEWIPC;
	pr_info("System V IPC: %zu segments, %zu semaphore sets, %zu message queues",
		e->n_shms, e->n_sems, e->n_msqs);
	return 0;
}

/*
 * criu's /proc (rst_ctx.proc_fd) when the tree's own may be mounted by
 * now, with /proc/sys read-only as containers have it. A sysctl of the IPC
 * namespace is the writer's, whichever /proc it is written through.
 */
static int proc_fd = -1;

static int write_sysctl(const char *name, const char *value)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%ssys/kernel/%s", proc_fd >= 0 ? "" : "/proc/", name);
	fd = openat(proc_fd >= 0 ? proc_fd : AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value)) {
		pr_perror("Can't write %s to %s", value, path);
		ret = -1;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

static int write_num(const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	return write_sysctl(name, buf);
}

static const char *saved_limit(SysvipcEntry *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->n_sysctls; i++)
		if (!strcmp(e->sysctls[i]->name, name))
			return e->sysctls[i]->value;
	return NULL;
}

static uint64_t limit_or(SysvipcEntry *e, const char *name, uint64_t need)
{
	const char *v = saved_limit(e, name);

	return max(v ? strtoull(v, NULL, 10) : 0, need);
}

/*
 * Limits at least as high as what the objects need while they are made:
 * the saved ones may have been lowered since they were created, and
 * msg_qbytes above msgmnb would need CAP_SYS_RESOURCE.
 */
static int open_limits(SysvipcEntry *e)
{
	uint64_t seg = 0, pages = 0, text = 0, queue = 0, nsems = 0, tsems = 0, qb;
	unsigned long sem[4] = { 0 };
	const char *v;
	char buf[96];
	size_t i, j;

	for (i = 0; i < e->n_shms; i++) {
		seg = max(seg, e->shms[i]->size);
		pages += (e->shms[i]->size + PAGE_SIZE - 1) / PAGE_SIZE;
	}
	for (i = 0; i < e->n_msqs; i++) {
		for (j = 0, qb = 0; j < e->msqs[i]->n_msgs; j++) {
			text = max(text, e->msqs[i]->msgs[j]->text.len);
			qb += e->msqs[i]->msgs[j]->text.len;
		}
		queue = max(queue, max(qb, e->msqs[i]->qbytes));
	}
	for (i = 0; i < e->n_sems; i++) {
		nsems = max(nsems, e->sems[i]->n_values);
		tsems += e->sems[i]->n_values;
	}
	v = saved_limit(e, "sem");
	if (v)
		sscanf(v, "%lu %lu %lu %lu", &sem[0], &sem[1], &sem[2], &sem[3]);
	snprintf(buf, sizeof(buf), "%lu %lu %lu %lu", max(sem[0], nsems), max(sem[1], tsems),
		 sem[2] ? sem[2] : 32, max(sem[3], (unsigned long)e->n_sems));
	return write_num("shmmax", limit_or(e, "shmmax", seg)) ||
	       write_num("shmall", limit_or(e, "shmall", pages)) ||
	       write_num("shmmni", limit_or(e, "shmmni", e->n_shms)) ||
	       write_num("msgmax", limit_or(e, "msgmax", text)) ||
	       write_num("msgmnb", limit_or(e, "msgmnb", queue)) ||
	       write_num("msgmni", limit_or(e, "msgmni", e->n_msqs)) ||
	       write_sysctl("sem", buf);
}

/*
 * Makes an object with id @p->id as its creator did: the next id is set
 * just before, and the creator's uid and gid are taken for the call (the
 * effective ones, of this thread only; root comes back).
 */
static int create_as(const SysvipcPerm *p, const char *next_id, int (*make)(void *), void *arg)
{
	int id, uid = geteuid(), gid = getegid();

	if (write_num(next_id, p->id))
		return -1;
	if (syscall(SYS_setresgid, -1, p->cgid, -1) || syscall(SYS_setresuid, -1, p->cuid, -1)) {
		pr_perror("Can't take the creator's ids %u:%u", p->cuid, p->cgid);
		return -1;
	}
	id = make(arg);
	if (syscall(SYS_setresuid, -1, uid, -1) || syscall(SYS_setresgid, -1, gid, -1)) {
		pr_perror("Can't come back to ids %d:%d", uid, gid);
		return -1;
	}
	if (id != p->id) {
		if (id < 0)
			pr_perror("Can't create System V object %d (key %#x)", p->id, p->key);
		else
			pr_err("System V object %d (key %#x) was created as %d", p->id, p->key, id);
		return -1;
	}
	return 0;
}

static int make_shm(void *arg)
{
	SysvipcShm *m = arg;

	return shmget(m->has_name_key ? m->name_key : m->perm->key, m->size,
		      IPC_CREAT | IPC_EXCL | (m->perm->mode & 0777));
}

/*
 * A removed segment is made with the key its areas are named by, removed
 * again later (sysvipc_batch); unless a live one has that key now.
 */
static void pick_name_keys(SysvipcEntry *e)
{
	size_t i, j;

	for (i = 0; i < e->n_shms; i++) {
		SysvipcShm *m = e->shms[i];

		if (!m->has_name_key || !m->name_key)
			continue;
		for (j = 0; j < e->n_shms; j++)
			if (j != i && (e->shms[j]->perm->key == m->name_key ||
				       (j < i && e->shms[j]->has_name_key &&
					e->shms[j]->name_key == m->name_key))) {
				pr_warn("System V segment %d: key %#x is taken, its areas will "
					"be named by key 0", m->perm->id, m->name_key);
				m->name_key = 0;
				break;
			}
	}
}

static int fill_shm(SysvipcShm *m, int pages)
{
	uint64_t pos = m->pages_off, len;
	uint8_t *p;
	size_t i;
	int ret = 0;

	if (!m->n_runs)
		return 0;
	p = shmat(m->perm->id, NULL, 0);
	if (p == (void *)-1) {
		pr_perror("Can't attach System V segment %d", m->perm->id);
		return -1;
	}
	for (i = 0; i < m->n_runs && !ret; i++) {
		len = (uint64_t)m->runs[i]->nr_pages * PAGE_SIZE;
		madvise(p + m->runs[i]->off, len, MADV_POPULATE_WRITE);
		if (read_full(pages, p + m->runs[i]->off, len, pos)) {
			pr_perror("Can't read sysvipc-pages.img at %lu", pos);
			ret = -1;
		}
		pos += len;
	}
	shmdt(p);
	return ret;
}

static int restore_shm(SysvipcShm *m, int pages)
{
	struct shmid_ds ds;

	if (create_as(m->perm, "shm_next_id", make_shm, m) || fill_shm(m, pages))
		return -1;
	memset(&ds, 0, sizeof(ds));
	ds.shm_perm.uid = m->perm->uid;
	ds.shm_perm.gid = m->perm->gid;
	ds.shm_perm.mode = m->perm->mode & 0777;
	if (shmctl(m->perm->id, IPC_SET, &ds) ||
	    ((m->perm->mode & SHM_LOCKED) && shmctl(m->perm->id, SHM_LOCK, NULL))) {
		pr_perror("Can't set up System V segment %d", m->perm->id);
		return -1;
	}
	return 0;
}

static int make_sem(void *arg)
{
	SysvipcSem *m = arg;

	return semget(m->perm->key, m->n_values, IPC_CREAT | IPC_EXCL | (m->perm->mode & 0777));
}

static int restore_sem(SysvipcSem *m)
{
	unsigned short *vals = xmalloc(m->n_values * sizeof(*vals));
	struct semid_ds ds;
	union semun arg;
	size_t i;
	int ret = -1;

	if (!vals || create_as(m->perm, "sem_next_id", make_sem, m))
		goto out;
	for (i = 0; i < m->n_values; i++)
		vals[i] = m->values[i];
	arg.array = vals;
	if (semctl(m->perm->id, 0, SETALL, arg)) {
		pr_perror("Can't set the values of semaphore set %d", m->perm->id);
		goto out;
	}
	memset(&ds, 0, sizeof(ds));
	ds.sem_perm.uid = m->perm->uid;
	ds.sem_perm.gid = m->perm->gid;
	ds.sem_perm.mode = m->perm->mode & 0777;
	arg.buf = &ds;
	if (semctl(m->perm->id, 0, IPC_SET, arg)) {
		pr_perror("Can't set up semaphore set %d", m->perm->id);
		goto out;
	}
	ret = 0;
out:
	free(vals);
	return ret;
}

static int make_msq(void *arg)
{
	SysvipcMsq *q = arg;

	return msgget(q->perm->key, IPC_CREAT | IPC_EXCL | (q->perm->mode & 0777));
}

static int restore_msq(SysvipcMsq *q)
{
	struct msqid_ds ds;
	struct {
		long mtype;
		char text[];
	} *buf = NULL;
	size_t i, len = 0;
	int ret = -1;

	if (create_as(q->perm, "msg_next_id", make_msq, q))
		return -1;
	memset(&ds, 0, sizeof(ds));
	ds.msg_perm.uid = q->perm->uid;
	ds.msg_perm.gid = q->perm->gid;
	ds.msg_perm.mode = q->perm->mode & 0777;
	ds.msg_qbytes = q->qbytes;
	if (msgctl(q->perm->id, IPC_SET, &ds)) {
		pr_perror("Can't set up message queue %d", q->perm->id);
		return -1;
	}
	for (i = 0; i < q->n_msgs; i++)
		len = max(len, q->msgs[i]->text.len);
	buf = xmalloc(sizeof(*buf) + len + 1);
	if (!buf)
		return -1;
	for (i = 0; i < q->n_msgs; i++) {
		buf->mtype = q->msgs[i]->mtype;
		memcpy(buf->text, q->msgs[i]->text.data, q->msgs[i]->text.len);
		if (msgsnd(q->perm->id, buf, q->msgs[i]->text.len, IPC_NOWAIT)) {
			pr_perror("Can't queue message %zu of queue %d", i, q->perm->id);
			goto out;
		}
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

/* In the root, born in the new namespace: every object, as it was. */
static int sysvipc_child(struct rst_ctx *rc, struct rtask *t)
{
	SysvipcEntry *e = rc->shared[PART_SYSVIPC];
	int pages, ret = -1;
	size_t i;

	if (!e || (uint32_t)t->pid != e->root_pid)
		return 0;
	proc_fd = rc->proc_fd;
	pick_name_keys(e);
	pages = img_open_raw(rc->dirfd, IMG_SYSVIPC_PAGES, 0, 0);
	if (pages < 0 || open_limits(e))
		goto out;
	for (i = 0; i < e->n_shms; i++)
		if (restore_shm(e->shms[i], pages))
			goto out;
	for (i = 0; i < e->n_sems; i++)
		if (restore_sem(e->sems[i]))
			goto out;
	for (i = 0; i < e->n_msqs; i++)
		if (restore_msq(e->msqs[i]))
			goto out;
	/* the limits as they were, now that nothing more is made */
	for (i = 0; i < e->n_sysctls; i++)
		if (write_sysctl(e->sysctls[i]->name, e->sysctls[i]->value))
			goto out;
	ret = 0;
out:
	if (pages >= 0)
		close(pages);
	return ret;
}

/*
 * The task that removes a segment again must do so after every other task
 * attached it: its batch waits for every earlier task's.
 */
static int sysvipc_load(struct rst_ctx *rc, struct rtask *t)
{
	SysvipcEntry *e = rc->shared[PART_SYSVIPC];
	size_t i;

	for (i = 0; e && i < e->n_shms; i++)
		if (e->shms[i]->has_rmid_by && e->shms[i]->rmid_by == (uint32_t)t->pid)
			t->ordered = 1;
	return 0;
}

/* A removed segment goes again once the last of its tasks has attached it. */
static int sysvipc_batch(struct rst_ctx *rc, struct rtask *t, struct batch *b)
{
	SysvipcEntry *e = rc->shared[PART_SYSVIPC];
	size_t i;

	for (i = 0; e && i < e->n_shms; i++)
		if (e->shms[i]->has_rmid_by && e->shms[i]->rmid_by == (uint32_t)t->pid &&
		    BATCH(b, "shmctl(IPC_RMID) of a removed segment", __NR_shmctl,
			  e->shms[i]->perm->id, IPC_RMID, 0) < 0)
			return -1;
	return 0;
}

static void sysvipc_release_tree(struct rst_ctx *rc)
{
	img_free(IMG_SYSVIPC, rc->shared[PART_SYSVIPC]);
	rc->shared[PART_SYSVIPC] = NULL;
}

const struct part part_sysvipc = {
	.name = "sysvipc",
	.id = PART_SYSVIPC,
	.check = sysvipc_check,
	.dump_tree = sysvipc_dump_tree,
	.load_tree = sysvipc_load_tree,
	.load = sysvipc_load,
	.child = sysvipc_child,
	.batch = sysvipc_batch,
	.release_tree = sysvipc_release_tree,
};
