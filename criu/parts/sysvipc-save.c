// SPDX-License-Identifier: GPL-2.0
/*
 * What the sysvipc part's dump helper reads, once it has joined the tree's
 * IPC namespace: every segment, semaphore set and message queue there, by
 * index (SHM_STAT, SEM_STAT, MSG_STAT, which give the id), with their
 * contents: a segment's pages through an attachment of the helper's own,
 * the semaphores' values (GETALL), the messages with msgrcv(MSG_COPY),
 * which copies the Nth message and leaves the queue as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/pagestore.h"
#include "image/sums.h"
#include "parts/sysvipc-save.h"
#include "proc/proc.h"
#include "sysvipc.pb-c.h"

#ifndef MSG_COPY
#define MSG_COPY		040000	/* read by index, leave it queued */
#endif

const char *const sysvipc_limits[SYSVIPC_NR_LIMITS] = {
	"shmmax", "shmall", "shmmni", "shm_rmid_forced", "msgmax", "msgmnb", "msgmni", "sem",
};

static int read_limits(SysvipcEntry *e)
{
	char path[64], *buf, *nl;
	size_t i;

	e->sysctls = xzalloc(SYSVIPC_NR_LIMITS * sizeof(*e->sysctls));
	if (!e->sysctls)
		return -1;
	for (i = 0; i < SYSVIPC_NR_LIMITS; i++) {
		SysvipcSysctl *c = xmalloc(sizeof(*c));

		snprintf(path, sizeof(path), "/proc/sys/kernel/%s", sysvipc_limits[i]);
		buf = read_file(-1, path, NULL);
		if (!c || !buf) {
			pr_perror("Can't read %s in the tree's IPC namespace", path);
			free(c);
			free(buf);
			return -1;
		}
		nl = strchr(buf, '\n');
		if (nl)
			*nl = '\0';
		sysvipc_sysctl__init(c);
		c->name = (char *)sysvipc_limits[i];
		c->value = buf;
		e->sysctls[e->n_sysctls++] = c;
	}
	return 0;
}

static void perm_of(SysvipcPerm *p, int id, const struct ipc_perm *ip)
{
	sysvipc_perm__init(p);
	p->id = id;
	p->key = ip->__key;
	p->uid = ip->uid;
	p->gid = ip->gid;
	p->cuid = ip->cuid;
	p->cgid = ip->cgid;
	p->mode = ip->mode;
}

static int add_run(void *arg, uint64_t off, uint64_t len)
{
	SysvipcShm *m = arg;
	SysvipcRun *r = xmalloc(sizeof(*r));

	if (!r || xgrow(m->runs, m->n_runs)) {
		free(r);
		return -1;
	}
	sysvipc_run__init(r);
	r->off = off;
	r->nr_pages = len / PAGE_SIZE;
	m->runs[m->n_runs++] = r;
	return 0;
}

/* The pages of a segment that hold data, through an attachment of ours. */
static int shm_contents(SysvipcShm *m, int out, uint64_t *total)
{
	char path[96], name[32], what[48];
	struct stat st;
	int fd = -1, ret = -1;
	void *p;

	m->pages_off = *total;
	p = shmat(m->perm->id, NULL, SHM_RDONLY);
	if (p == (void *)-1) {
		pr_perror("Can't attach System V segment %d", m->perm->id);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", (unsigned long)p,
		 (unsigned long)p + ((m->size + PAGE_SIZE - 1) & PAGE_MASK));
	snprintf(name, sizeof(name), "/SYSV%08x (deleted)", m->perm->key);
	snprintf(what, sizeof(what), "System V segment %d", m->perm->id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("Can't open %s", what);
		goto out;
	}
	if (proc_shmem_kind(name, st.st_dev) != SHMO_SYSV) {
		pr_err("%s is on hugetlbfs (SHM_HUGETLB): not supported", what);
		goto out;
	}
	ret = pstore_copy_file(out, fd, m->size, add_run, m, what, total);
out:
	if (fd >= 0)
		close(fd);
	shmdt(p);
	return ret;
}

struct attachments {
	const struct sysvipc_attach *att;
	int nr;
};

static const struct sysvipc_attach *attached(const struct attachments *s, int id)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->att[i].id == id)
			return &s->att[i];
	return NULL;
}

static int collect_shm(const struct attachments *s, SysvipcEntry *e, int out)
{
	struct shm_info info;
	struct shmid_ds ds;
	int max, idx, id;

	max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
	if (max < 0) {
		pr_perror("Can't list System V shared memory");
		return -1;
	}
	e->shms = xzalloc((max + 1) * sizeof(*e->shms));
	if (!e->shms)
		return -1;
	for (idx = 0; idx <= max; idx++) {
		SysvipcShm *m;

		id = shmctl(idx, SHM_STAT, &ds);
		if (id < 0)
			continue;	/* a free index */
		m = xmalloc(sizeof(*m));
		if (!m)
			return -1;
		sysvipc_shm__init(m);
		e->shms[e->n_shms++] = m;
		m->perm = xmalloc(sizeof(*m->perm));
		if (!m->perm)
			return -1;
		perm_of(m->perm, id, &ds.shm_perm);
		m->size = ds.shm_segsz;
		if (ds.shm_perm.mode & SHM_DEST) {
			/* gone once its last task detaches: only the tree's matter */
			const struct sysvipc_attach *a = attached(s, id);

			m->has_rmid_by = m->has_name_key = 1;
			m->rmid_by = a ? a->last : 0;
			m->name_key = a ? a->key : 0;
			if (!m->rmid_by) {
				pr_info("System V segment %d is removed and no task of the tree "
					"has it: not saved", id);
				e->n_shms--;
				free(m->perm);
				free(m);
				continue;
			}
		}
		if (shm_contents(m, out, &e->pages_size))
			return -1;
		pr_info("System V segment %d: key %#x, %lu bytes", id, m->perm->key, m->size);
	}
	return 0;
}

static int collect_sem(SysvipcEntry *e)
{
	struct semid_ds ds;
	struct seminfo info;
	union semun arg;
	unsigned short *vals;
	int max, idx, id;
	unsigned long i;

	arg.__buf = &info;
	max = semctl(0, 0, SEM_INFO, arg);
	if (max < 0) {
		pr_perror("Can't list System V semaphores");
		return -1;
	}
	e->sems = xzalloc((max + 1) * sizeof(*e->sems));
	if (!e->sems)
		return -1;
	for (idx = 0; idx <= max; idx++) {
		SysvipcSem *m;

		arg.buf = &ds;
		id = semctl(idx, 0, SEM_STAT, arg);
		if (id < 0)
			continue;
		m = xmalloc(sizeof(*m));
		vals = xmalloc((ds.sem_nsems + 1) * sizeof(*vals));
		if (m)
			sysvipc_sem__init(m);
		if (m)
			e->sems[e->n_sems++] = m;
		if (!m || !vals)
			goto err;
		m->perm = xmalloc(sizeof(*m->perm));
		m->values = xmalloc((ds.sem_nsems + 1) * sizeof(*m->values));
		if (!m->perm || !m->values)
			goto err;
		perm_of(m->perm, id, &ds.sem_perm);
		arg.array = vals;
		if (semctl(id, 0, GETALL, arg)) {
			pr_perror("Can't read semaphore set %d", id);
			goto err;
		}
		for (i = 0; i < ds.sem_nsems; i++)
			m->values[i] = vals[i];
		m->n_values = ds.sem_nsems;
		free(vals);
		pr_info("System V semaphore set %d: key %#x, %lu semaphores", id,
			m->perm->key, ds.sem_nsems);
	}
	return 0;
err:
	free(vals);
	return -1;
}

static int collect_msgs(SysvipcMsq *q, unsigned long qnum, size_t max_text)
{
	struct {
		long mtype;
		char text[];
	} *buf;
	unsigned long i;
	ssize_t n;

	buf = xmalloc(sizeof(*buf) + max_text);
	q->msgs = xzalloc((qnum + 1) * sizeof(*q->msgs));
	if (!buf || !q->msgs)
		goto err;
	for (i = 0; i < qnum; i++) {
		SysvipcMsg *m = xmalloc(sizeof(*m));

		if (!m)
			goto err;
		sysvipc_msg__init(m);
		q->msgs[q->n_msgs++] = m;
		/* the i-th message, copied: the queue stays as it is */
		n = msgrcv(q->perm->id, buf, max_text, i, IPC_NOWAIT | MSG_COPY);
		if (n < 0) {
			pr_perror("Can't read message %lu of queue %d (MSG_COPY needs "
				  "CONFIG_CHECKPOINT_RESTORE)", i, q->perm->id);
			goto err;
		}
		m->mtype = buf->mtype;
		m->text.len = n;
		m->text.data = xmalloc(n + 1);
		if (!m->text.data)
			goto err;
		memcpy(m->text.data, buf->text, n);
	}
	free(buf);
	return 0;
err:
	free(buf);
	return -1;
}

static int collect_msq(SysvipcEntry *e)
{
	struct msqid_ds ds;
	struct msginfo info;
	int max, idx, id;

	max = msgctl(0, MSG_INFO, (struct msqid_ds *)&info);
	if (max < 0) {
		pr_perror("Can't list System V message queues");
		return -1;
	}
	e->msqs = xzalloc((max + 1) * sizeof(*e->msqs));
	if (!e->msqs)
		return -1;
	for (idx = 0; idx <= max; idx++) {
		SysvipcMsq *q;

		id = msgctl(idx, MSG_STAT, &ds);
		if (id < 0)
			continue;
		q = xmalloc(sizeof(*q));
		if (!q)
			return -1;
		sysvipc_msq__init(q);
		e->msqs[e->n_msqs++] = q;
		q->perm = xmalloc(sizeof(*q->perm));
		if (!q->perm)
			return -1;
		perm_of(q->perm, id, &ds.msg_perm);
		q->qbytes = ds.msg_qbytes;
		/* no message is longer than all a queue holds (msgmax may have shrunk since) */
		if (collect_msgs(q, ds.msg_qnum, ds.__msg_cbytes))
			return -1;
		pr_info("System V message queue %d: key %#x, %lu messages", id,
			q->perm->key, ds.msg_qnum);
	}
	return 0;
}

int sysvipc_save(const struct sysvipc_attach *att, int nr_att, pid_t root, int dirfd)
{
	const struct attachments s = { att, nr_att };
	SysvipcEntry e = SYSVIPC_ENTRY__INIT;
	int out;

	out = img_open_raw(dirfd, IMG_SYSVIPC_PAGES, 0, 1);
	if (out < 0)
		return -1;
	e.root_pid = root;
	if (read_limits(&e) || collect_shm(&s, &e, out) || collect_sem(&e) ||
	    collect_msq(&e))
		return -1;
	if (ftruncate(out, e.pages_size)) {
		pr_perror("Can't size sysvipc-pages.img");
		return -1;
	}
	close(out);
	/* the helper exits right after: what was allocated goes with it */
	return img_write(dirfd, IMG_SYSVIPC, 0, &e.base);
}
