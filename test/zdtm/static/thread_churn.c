// SPDX-License-Identifier: GPL-2.0-only
/*
 * A thread pool that never rests, so that the dump meets threads being
 * created, running and exiting: three spawner threads each create
 * short-lived threads in a loop; two of them join theirs and check what
 * they computed, the third detaches them and counts them out. The dump
 * must succeed whatever the moment, and the restored process must hold a
 * consistent set: every thread that was caught alive finishes its work,
 * every join returns, and once the pool is stopped exactly the main thread
 * and the spawners remain.
 *
 * The main thread and the spawners are listed in tree.stable (the runner
 * compares only them, and not the memory map, where stacks come and go).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "zdtm.h"

#define NR_SPAWNERS	3
#define DETACHER	2
#define STACK_SIZE	(128 << 10)
#define WORK		512

struct job {
	unsigned long long seed;
	unsigned long long result;
};

struct spawner {
	pthread_t th;
	int idx;
	pid_t tid;
	unsigned long rounds;
	char why[200];
};

static struct spawner spawners[NR_SPAWNERS];
static volatile int stop;
static int detached_alive;
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

static void *short_detached(void *arg)
{
	volatile unsigned long long sink = work((unsigned long)arg);

	(void)sink;
	__atomic_sub_fetch(&detached_alive, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static void sfail(struct spawner *s, const char *what, int err)
{
	snprintf(s->why, sizeof(s->why), "%s: %s", what, strerror(err));
	failed = 1;
}

static void *spawner_fn(void *arg)
{
	struct spawner *s = arg;
	pthread_attr_t attr;
	char name[16];
	struct job job;
	pthread_t t;
	int err;

	s->tid = gettid();
	snprintf(name, sizeof(name), "tc-spawn%d", s->idx);
	prctl(PR_SET_NAME, name);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	if (s->idx == DETACHER)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (!stop && !failed) {
		s->rounds++;
		if (s->idx == DETACHER) {
			/* at most a few at once */
			while (__atomic_load_n(&detached_alive, __ATOMIC_ACQUIRE) >= 4)
				sched_yield();
			__atomic_add_fetch(&detached_alive, 1, __ATOMIC_ACQ_REL);
			err = pthread_create(&t, &attr, short_detached,
					     (void *)(unsigned long)s->rounds);
			if (err) {
				__atomic_sub_fetch(&detached_alive, 1, __ATOMIC_ACQ_REL);
				sfail(s, "pthread_create (detached)", err);
			}
			continue;
		}
		job.seed = s->idx * 1000003ULL + s->rounds;
		job.result = 0;
		err = pthread_create(&t, &attr, short_lived, &job);
		if (err) {
			sfail(s, "pthread_create", err);
			break;
		}
		err = pthread_join(t, NULL);
		if (err) {
			sfail(s, "pthread_join", err);
			break;
		}
		if (job.result != work(job.seed)) {
			snprintf(s->why, sizeof(s->why), "round %lu: the thread computed %#llx",
				 s->rounds, job.result);
			failed = 1;
		}
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

static int nr_threads(void)
{
	char buf[32];

	return test_status_field("Threads", buf, sizeof(buf)) ? atoi(buf) : -1;
}

int main(int argc, char **argv)
{
	unsigned long before[NR_SPAWNERS];
	sigset_t all, old;
	int i, n;
	FILE *f;

	test_init(argc, argv);
	/* the pool never takes SIGTERM */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < NR_SPAWNERS; i++) {
		spawners[i].idx = i;
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
	/* thread stacks come and go: our map is not ours to compare */
	if (fprintf(f, " -maps\n") < 0 || fclose(f))
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
	for (i = 0; i < 2000 && __atomic_load_n(&detached_alive, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	if (detached_alive)
		fail("%d detached threads never finished", detached_alive);
	/* a detached thread is gone a little after it said so */
	for (i = 0; i < 2000 && (n = nr_threads()) != 1; i++)
		usleep(1000);
	if (n != 1)
		fail("%d threads once the pool stopped, not 1", n);
	for (i = 0; i < NR_SPAWNERS; i++)
		test_msg("spawner %d: %lu rounds", i, spawners[i].rounds);
	pass();
}
