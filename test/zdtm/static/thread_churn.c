// SPDX-License-Identifier: GPL-2.0-only
/*
 * A thread pool that never rests, so that the dump meets threads being
 * created, running and exiting: three spawner threads each create
 * short-lived threads in a loop. Two join each one at once and check what
 * it computed; the third keeps four in flight and joins each only when it
 * needs its slot again, so that most of its threads have exited long
 * before they are joined. The dump must succeed whatever the moment, and
 * the restored process must hold a consistent set: every thread that was
 * caught alive finishes its work, every join returns the right result, and
 * once the pool is stopped exactly the main thread remains.
 *
 * The stacks come from a pool mapped once, so the memory map stays as it
 * was. The main thread and the spawners are listed in tree.stable (the
 * runner compares only them).
 *
 * A join is not the end of a thread: pthread_join() returns when the
 * kernel clears the thread's tid (CLONE_CHILD_CLEARTID, in exit_mm(), early
 * in its exit), and the thread leaves the group, and the Threads: count,
 * only at the end of it (release_task()). Counting right after the joins
 * saw a spawner still there in 9 of 15 runs without criu in a 4-CPU TCG
 * guest (14 % of all joins there, 3 in 20,000 on a host); so the count is
 * waited for. A thread that stays (one a restore brought back or made
 * twice) fails the test after SETTLE_MS, named.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "zdtm.h"

#define NR_SPAWNERS	3
#define LATE_JOINER	2
#define SLOTS		4
#define STACK_SIZE	(128 << 10)
#define WORK		512
#define SETTLE_MS	10000	/* far beyond the end of any exit */

struct job {
	pthread_t th;
	int busy;			/* a thread runs or ran here, not joined yet */
	unsigned long long seed;
	unsigned long long result;
};

struct spawner {
	pthread_t th;
	int idx;
	pid_t tid;
	unsigned long rounds;
	struct job jobs[SLOTS];
	char *stacks;			/* SLOTS stacks of STACK_SIZE */
	char why[200];
};

static struct spawner spawners[NR_SPAWNERS];
static volatile int stop;
static volatile int failed;

static unsigned long long work(unsigned long long seed)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < WORK; i++)
		sum += test_pattern(seed, i);
	return sum;
}

static void *short_lived(void *arg)
{
	struct job *j = arg;

	j->result = work(j->seed);
	return NULL;
}

static int sfail(struct spawner *s, const char *what, int err)
{
	snprintf(s->why, sizeof(s->why), "%s: %s", what, strerror(err));
	failed = 1;
	return -1;
}

static int join(struct spawner *s, struct job *j)
{
	int err;

	if (!j->busy)
		return 0;
	err = pthread_join(j->th, NULL);
	if (err)
		return sfail(s, "pthread_join", err);
	j->busy = 0;
	if (j->result != work(j->seed)) {
		snprintf(s->why, sizeof(s->why), "seed %llu: the thread computed %#llx",
			 j->seed, j->result);
		failed = 1;
		return -1;
	}
	return 0;
}

static int spawn(struct spawner *s, int slot)
{
	struct job *j = &s->jobs[slot];
	pthread_attr_t attr;
	int err;

	j->seed = s->idx * 1000003ULL + s->rounds;
	j->result = 0;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, s->stacks + slot * STACK_SIZE, STACK_SIZE);
	err = pthread_create(&j->th, &attr, short_lived, j);
	pthread_attr_destroy(&attr);
	if (err)
		return sfail(s, "pthread_create", err);
	j->busy = 1;
	return 0;
}

static void *spawner_fn(void *arg)
{
	struct spawner *s = arg;
	char name[16];
	int slot;

	s->tid = gettid();
	snprintf(name, sizeof(name), "tc-spawn%d", s->idx);
	prctl(PR_SET_NAME, name);
	while (!stop && !failed) {
		slot = s->rounds % SLOTS;
		s->rounds++;
		if (s->idx == LATE_JOINER) {
			/* the thread that had this slot is most likely long gone */
			if (join(s, &s->jobs[slot]) || spawn(s, slot))
				break;
			continue;
		}
		if (spawn(s, slot) || join(s, &s->jobs[slot]))
			break;
	}
	for (slot = 0; slot < SLOTS; slot++)
		if (join(s, &s->jobs[slot]))
			break;
	return NULL;
}

static int nr_threads(void)
{
	char buf[32];

	return test_status_field("Threads", buf, sizeof(buf)) ? atoi(buf) : -1;
}

/* The threads besides the main one, "tid (name) state", for a failure. */
static void list_others(char *out, size_t size)
{
	char path[64], stat[128], *p;
	struct dirent *de;
	size_t len = 0;
	DIR *d;

	out[0] = '\0';
	d = opendir("/proc/self/task");
	if (!d)
		return;
	while ((de = readdir(d)) && len < size) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/stat", de->d_name);
		if (test_read_file(path, stat, sizeof(stat)) < 0)
			continue;
		/* "tid (comm) S ...": up to the state */
		p = strrchr(stat, ')');
		if (p && p[1] && p[2])
			p[3] = '\0';
		len += snprintf(out + len, size - len, " %s;", stat);
	}
	closedir(d);
}

/* Waits for the kernel to release the joined threads: 0 once only main is left. */
static int settle(int *n)
{
	int waited;

	for (waited = 0; (*n = nr_threads()) != 1 && waited < SETTLE_MS; waited++)
		usleep(1000);
	return *n == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	unsigned long before[NR_SPAWNERS];
	sigset_t all, old;
	char *pool;
	int i, n;
	FILE *f;

	test_init(argc, argv);
	pool = mmap(NULL, NR_SPAWNERS * SLOTS * STACK_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		fail_errno("mmap");
	/* the pool never takes SIGTERM */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < NR_SPAWNERS; i++) {
		spawners[i].idx = i;
		spawners[i].stacks = pool + i * SLOTS * STACK_SIZE;
		if (pthread_create(&spawners[i].th, NULL, spawner_fn, &spawners[i]))
			fail("pthread_create");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < NR_SPAWNERS; i++)
		while (!__atomic_load_n(&spawners[i].tid, __ATOMIC_ACQUIRE) ||
		       spawners[i].rounds < 100)
			usleep(1000);

	f = fopen("tree.stable", "w");
	if (!f)
		fail_errno("tree.stable");
	fprintf(f, "%d %d", getpid(), getpid());
	for (i = 0; i < NR_SPAWNERS; i++)
		fprintf(f, " %d", spawners[i].tid);
	if (fprintf(f, "\n") < 0 || fclose(f))
		fail_errno("tree.stable");

	test_ready();
	test_waitsig();

	/* the pool still turns */
	for (i = 0; i < NR_SPAWNERS; i++)
		before[i] = spawners[i].rounds;
	usleep(50 * 1000);
	for (i = 0; i < NR_SPAWNERS; i++)
		if (!failed && spawners[i].rounds == before[i])
			fail("spawner %d is stuck after %lu rounds", i, before[i]);
	stop = 1;
	for (i = 0; i < NR_SPAWNERS; i++)
		pthread_join(spawners[i].th, NULL);
	for (i = 0; i < NR_SPAWNERS; i++)
		if (spawners[i].why[0])
			fail("spawner %d: %s", i, spawners[i].why);
	if (settle(&n)) {
		char others[512];

		list_others(others, sizeof(others));
		fail("%d threads %d s after the pool stopped, not 1:%s", n, SETTLE_MS / 1000,
		     others);
	}
	for (i = 0; i < NR_SPAWNERS; i++)
		test_msg("spawner %d: %lu rounds", i, spawners[i].rounds);
	pass();
}
