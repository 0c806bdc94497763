// SPDX-License-Identifier: GPL-2.0-only
/*
 * System V IPC in an IPC namespace of the tree's own (the root unshares
 * CLONE_NEWIPC first): segment A (3 pages and a byte, key, chosen id,
 * owner and mode changed) attached read-write by the root (one page made
 * read-only) and by its child (inherited), and read-only by the child
 * again; segment B (IPC_PRIVATE, sparse) attached by no one; segment C
 * attached by the child only and removed (IPC_RMID) while attached; a
 * semaphore set and two message queues (messages of several types and
 * lengths, one empty; qbytes changed); the namespace's msgmnb and shmmni.
 * Ids, keys, owners, creators, modes, sizes, attachment counts, contents,
 * semaphore values, messages and limits must be kept, and the root and
 * the child must still share segment A after the restore.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#include "mem_tree.h"

#define PG		4096
#define A_KEY		0x5a0001
#define A_ID		(3 * 32768 + 5)
#define A_SIZE		(3 * PG + 1)
#define B_PAGES		64
#define C_KEY		0x5a0003
#define SEM_KEY		0x5a0010
#define SEM_ID		7
#define MSG_KEY		0x5a0020
#define MSG_ID		(2 * 32768 + 3)
#define BIG		5000
#define TOKEN		0x1badcafe2badf00dULL
#define ACK		0x600dbeef600dbeefULL

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static const unsigned short sem_vals[5] = { 1, 2, 3, 40, 5 };
static int a_id, b_id, c_id, sem_id, msg_id, msg2_id;
static uint8_t *a_rw, *a_ro, *c_at;

static void fill(uint8_t *p, size_t len, unsigned long seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = test_pattern(seed, i / 8) >> (8 * (i % 8));
}

/* bytes [from, len) of @p are the pattern of @seed */
static int same_from(const uint8_t *p, size_t from, size_t len, unsigned long seed)
{
	size_t i;

	for (i = from; i < len; i++)
		if (p[i] != (uint8_t)(test_pattern(seed, i / 8) >> (8 * (i % 8))))
			return 0;
	return 1;
}

static int same(const uint8_t *p, size_t len, unsigned long seed)
{
	return same_from(p, 0, len, seed);
}

static void set_next(const char *what, int id)
{
	char path[64], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", what);
	n = snprintf(buf, sizeof(buf), "%d", id);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, buf, n) != n)
		fail_errno("writing %s", path);
	close(fd);
}

static long read_sysctl(const char *what)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", what);
	if (test_read_file(path, buf, sizeof(buf)) < 0)
		mt_die("can't read %s: %m", path);
	return atol(buf);
}

static void check_segment_a(const uint8_t *p)
{
	/* the first word of page 2 gets the root's token after the restore */
	if (!same(p, 2 * PG, 1) || !same_from(p + 2 * PG, 8, PG, 2) || p[4 * PG - 1])
		mt_die("segment A is not what it was");
}

static void kid_setup(void)
{
	a_ro = shmat(a_id, NULL, SHM_RDONLY);
	c_at = shmat(c_id, NULL, 0);
	if (a_ro == (void *)-1 || c_at == (void *)-1)
		mt_die("shmat: %m");
	fill(c_at, 2 * PG, 30);
}

static void kid_check(void)
{
	char mine[64], parent[64], path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", getppid());
	n = readlink(path, parent, sizeof(parent) - 1);
	if (n < 0 || readlink("/proc/self/ns/ipc", mine, sizeof(mine) - 1) != n ||
	    memcmp(mine, parent, n))
		mt_die("not in its parent's IPC namespace");
	check_segment_a(a_ro);
	if (*(uint64_t *)(a_ro + 2 * PG) != TOKEN || *(uint64_t *)(a_rw + 2 * PG) != TOKEN)
		mt_die("the parent's write to segment A after the restore is not seen");
	if (mprotect(a_ro, PG, PROT_READ | PROT_WRITE) == 0)
		mt_die("a read-only attachment could be made writable");
	if (!same(c_at, 2 * PG, 30))
		mt_die("segment C is not what it was");
	*(uint64_t *)(a_rw + 3 * PG) = ACK;
}

static void check_perm(const struct ipc_perm *p, int key, int mode, int uid, int gid,
		       const char *what)
{
	if (p->__key != key || (int)(p->mode & 0777) != mode || p->uid != (uid_t)uid ||
	    p->gid != (gid_t)gid || p->cuid || p->cgid)
		fail("%s: key %#x mode %o owner %u:%u creator %u:%u", what, p->__key,
		     p->mode, p->uid, p->gid, p->cuid, p->cgid);
}

static void check_shm(void)
{
	struct shmid_ds ds;
	uint8_t *p;

	/* an attachment counts once per area: the root's is split in three */
	if (shmctl(a_id, IPC_STAT, &ds) || ds.shm_segsz != A_SIZE || ds.shm_nattch != 7)
		fail("segment A: size %zu, %lu attached", ds.shm_segsz, ds.shm_nattch);
	check_perm(&ds.shm_perm, A_KEY, 0640, 1000, 1001, "segment A");
	check_segment_a(a_rw);
	if (mprotect(a_rw + PG, PG, PROT_READ | PROT_WRITE))
		fail_errno("the read-write attachment can't be written again");
	mprotect(a_rw + PG, PG, PROT_READ);
	if (shmctl(b_id, IPC_STAT, &ds) || ds.shm_segsz != B_PAGES * PG || ds.shm_nattch)
		fail("segment B: size %zu, %lu attached", ds.shm_segsz, ds.shm_nattch);
	check_perm(&ds.shm_perm, IPC_PRIVATE, 0600, 0, 0, "segment B");
	p = shmat(b_id, NULL, SHM_RDONLY);
	if (p == (void *)-1)
		fail_errno("shmat B");
	if (!same(p, PG, 10) || !same(p + 40 * PG, PG, 11) || p[20 * PG])
		fail("segment B is not what it was");
	shmdt(p);
	/* removed, still there for the child that has it */
	if (shmctl(c_id, IPC_STAT, &ds) || !(ds.shm_perm.mode & SHM_DEST) || ds.shm_nattch != 1)
		fail("segment C: mode %o, %lu attached", ds.shm_perm.mode, ds.shm_nattch);
}

static void check_sem(void)
{
	unsigned short vals[5];
	struct semid_ds ds;
	union semun arg;

	arg.buf = &ds;
	if (semctl(sem_id, 0, IPC_STAT, arg) || ds.sem_nsems != 5)
		fail("semaphore set: %lu semaphores", ds.sem_nsems);
	check_perm(&ds.sem_perm, SEM_KEY, 0600, 0, 0, "semaphore set");
	arg.array = vals;
	if (semctl(sem_id, 0, GETALL, arg) || memcmp(vals, sem_vals, sizeof(vals)))
		fail("semaphore values %u %u %u %u %u", vals[0], vals[1], vals[2], vals[3],
		     vals[4]);
}

static void check_msg(void)
{
	struct {
		long mtype;
		uint8_t text[8192];
	} m;
	struct msqid_ds ds;

	if (msgctl(msg_id, IPC_STAT, &ds) || ds.msg_qnum != 3 || ds.msg_qbytes != 12000 ||
	    ds.msg_cbytes != 6 + BIG)
		fail("queue: %lu messages, %lu bytes, qbytes %lu", ds.msg_qnum, ds.msg_cbytes,
		     ds.msg_qbytes);
	check_perm(&ds.msg_perm, MSG_KEY, 0620, 0, 0, "queue");
	if (msgrcv(msg_id, &m, sizeof(m.text), 0, IPC_NOWAIT) != 6 || m.mtype != 1 ||
	    memcmp(m.text, "first", 6))
		fail("the first message is not what it was");
	if (msgrcv(msg_id, &m, sizeof(m.text), 0, IPC_NOWAIT) != 0 || m.mtype != 7)
		fail("the second message is not what it was");
	if (msgrcv(msg_id, &m, sizeof(m.text), 0, IPC_NOWAIT) != BIG || m.mtype != 2 ||
	    !same(m.text, BIG, 20))
		fail("the third message is not what it was");
	if (msgctl(msg2_id, IPC_STAT, &ds) || ds.msg_qnum || ds.msg_qbytes != 20000)
		fail("the empty queue: %lu messages, qbytes %lu", ds.msg_qnum, ds.msg_qbytes);
}

int main(int argc, char **argv)
{
	struct {
		long mtype;
		uint8_t text[BIG];
	} m;
	struct shmid_ds ds;
	struct msqid_ds qs;
	union semun arg;
	uint8_t *p;

	test_init(argc, argv);
	if (unshare(CLONE_NEWIPC))
		fail_errno("unshare(CLONE_NEWIPC)");
	mt_init();
	set_next("msgmnb", 20000);
	set_next("shmmni", 1000);

	set_next("shm_next_id", A_ID);
	a_id = shmget(A_KEY, A_SIZE, IPC_CREAT | 0600);
	b_id = shmget(IPC_PRIVATE, B_PAGES * PG, IPC_CREAT | 0600);
	c_id = shmget(C_KEY, 2 * PG, IPC_CREAT | 0600);
	if (a_id != A_ID || b_id < 0 || c_id < 0)
		fail_errno("shmget (A is %d)", a_id);
	a_rw = shmat(a_id, NULL, 0);
	p = shmat(b_id, NULL, 0);
	if (a_rw == (void *)-1 || p == (void *)-1)
		fail_errno("shmat");
	fill(a_rw, 2 * PG, 1);
	fill(a_rw + 2 * PG, PG, 2);
	a_rw[3 * PG] = 0;
	fill(p, PG, 10);
	fill(p + 40 * PG, PG, 11);
	shmdt(p);
	if (mprotect(a_rw + PG, PG, PROT_READ))
		fail_errno("mprotect");
	memset(&ds, 0, sizeof(ds));
	ds.shm_perm.uid = 1000;
	ds.shm_perm.gid = 1001;
	ds.shm_perm.mode = 0640;
	if (shmctl(a_id, IPC_SET, &ds))
		fail_errno("shmctl(IPC_SET)");

	set_next("sem_next_id", SEM_ID);
	sem_id = semget(SEM_KEY, 5, IPC_CREAT | 0600);
	arg.array = (unsigned short *)sem_vals;
	if (sem_id != SEM_ID || semctl(sem_id, 0, SETALL, arg))
		fail_errno("semaphores (%d)", sem_id);

	set_next("msg_next_id", MSG_ID);
	msg_id = msgget(MSG_KEY, IPC_CREAT | 0620);
	msg2_id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (msg_id != MSG_ID || msg2_id < 0)
		fail_errno("msgget (%d)", msg_id);
	m.mtype = 1;
	memcpy(m.text, "first", 6);
	if (msgsnd(msg_id, &m, 6, 0))
		fail_errno("msgsnd");
	m.mtype = 7;
	if (msgsnd(msg_id, &m, 0, 0))
		fail_errno("msgsnd");
	m.mtype = 2;
	fill(m.text, BIG, 20);
	if (msgsnd(msg_id, &m, BIG, 0))
		fail_errno("msgsnd");
	if (msgctl(msg_id, IPC_STAT, &qs))
		fail_errno("msgctl");
	qs.msg_qbytes = 12000;
	if (msgctl(msg_id, IPC_SET, &qs))
		fail_errno("msgctl(IPC_SET)");

	mt_fork("kid", kid_setup, kid_check);
	mt_wait_ready(1);
	if (shmctl(c_id, IPC_RMID, NULL))
		fail_errno("shmctl(IPC_RMID)");
	test_ready();
	test_waitsig();

	if (read_sysctl("msgmnb") != 20000 || read_sysctl("shmmni") != 1000)
		fail("the namespace's limits changed: msgmnb %ld, shmmni %ld",
		     read_sysctl("msgmnb"), read_sysctl("shmmni"));
	check_shm();
	check_sem();
	check_msg();
	*(uint64_t *)(a_rw + 2 * PG) = TOKEN;
	mt_kids_check();
	if (*(uint64_t *)(a_rw + 3 * PG) != ACK)
		fail("the child's write to segment A after the restore is not seen");
	if (shmctl(c_id, IPC_STAT, &ds) == 0)
		fail("segment C outlived its last attachment");
	pass();
}
