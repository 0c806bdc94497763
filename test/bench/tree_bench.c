// SPDX-License-Identifier: GPL-2.0-only
/*
 * tree_bench: the target of scripts/bench-tree.sh, many tasks with little
 * memory each.
 *
 *	tree_bench tree N READY_FILE      the caller and N-1 children that sleep
 *	tree_bench threads N READY_FILE   one process, N threads that sleep
 *	tree_bench timers N READY_FILE    the same, with CPU-time timers armed:
 *	                                  ITIMER_PROF and ITIMER_VIRTUAL, a POSIX
 *	                                  CLOCK_PROCESS_CPUTIME_ID timer, and one
 *	                                  CLOCK_THREAD_CPUTIME_ID timer in every
 *	                                  TIMER_EVERY-th thread
 *
 * "tree 1" is a trivial single process. READY_FILE is created (whole, by a
 * rename) once every task or thread exists. On SIGUSR1 the main thread
 * counts its children (all alive, none a zombie) or its threads (and
 * checks that every timer is still armed) and writes
 * "ok" or "bad ..." to READY_FILE.verify, so that the benchmark can tell a
 * restored tree is whole. Inherited descriptors above 2 are closed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * The timers never fire while the benchmark runs (an hour away, and the
 * threads sleep): they are there for the kernel's and criu's bookkeeping
 * of CPU-time timers, which once grew with the threads squared.
 */
#define TIMER_EVERY	10
#define TIMER_SECONDS	3600

static volatile sig_atomic_t verify_requested;
static timer_t *thread_timers;		/* the one of thread i * TIMER_EVERY */
static int nr_thread_timers;
static pthread_barrier_t armed;

static void on_usr1(int sig)
{
	verify_requested = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "tree_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int write_file(const char *path, const char *text)
{
	char tmp[4200];
	ssize_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len) {
		close(fd);
		return -1;
	}
	if (close(fd))
		return -1;
	return rename(tmp, path);
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

static int arm(clockid_t clock, timer_t *id)
{
	struct itimerspec its = { .it_value.tv_sec = TIMER_SECONDS,
				  .it_interval.tv_sec = TIMER_SECONDS };
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };

	if (timer_create(clock, &sev, id))
		return -1;
	return timer_settime(*id, 0, &its, NULL);
}

/* A thread with a timer on its own CPU time: arms it, then sleeps. */
static void *timed_sleeper(void *arg)
{
	if (arm(CLOCK_THREAD_CPUTIME_ID, &thread_timers[(long)arg]))
		die("thread timer");
	pthread_barrier_wait(&armed);
	return sleeper(NULL);
}

/* ITIMER_PROF, ITIMER_VIRTUAL and the process's CPU-time timer. */
static void arm_process(timer_t *id)
{
	struct itimerval it = { .it_value.tv_sec = TIMER_SECONDS,
				.it_interval.tv_sec = TIMER_SECONDS };

	if (setitimer(ITIMER_PROF, &it, NULL) || setitimer(ITIMER_VIRTUAL, &it, NULL))
		die("setitimer");
	if (arm(CLOCK_PROCESS_CPUTIME_ID, id))
		die("process timer");
}

/* Every timer still armed after the restore, or why not. */
static int timers_armed(timer_t process, char *why, size_t size)
{
	struct itimerspec its;
	struct itimerval it;
	int i;

	if (getitimer(ITIMER_PROF, &it) || !it.it_value.tv_sec)
		return snprintf(why, size, "ITIMER_PROF disarmed"), 0;
	if (getitimer(ITIMER_VIRTUAL, &it) || !it.it_value.tv_sec)
		return snprintf(why, size, "ITIMER_VIRTUAL disarmed"), 0;
	if (timer_gettime(process, &its) || !its.it_value.tv_sec)
		return snprintf(why, size, "the process timer is disarmed"), 0;
	for (i = 0; i < nr_thread_timers; i++)
		if (timer_gettime(thread_timers[i], &its) || !its.it_value.tv_sec)
			return snprintf(why, size, "timer of thread %d disarmed",
					(i + 1) * TIMER_EVERY), 0;
	return 1;
}

/* The whole file: /proc's give a page or so per read (a long children list) */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0)
		got += n;
	close(fd);
	if (n < 0)
		return -1;
	buf[got] = 0;
	return got;
}

/* Counts our live children (every thread's list), or -1. */
static int live_children(char *why, size_t size)
{
	char path[64], buf[1 << 16], stat[512], *p, *end, *s;
	int n = 0, pid;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", getpid());
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf;; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_file(path, stat, sizeof(stat)) < 0)
			continue;
		s = strrchr(stat, ')');
		if (s && s[2] != 'Z')
			n++;
		else
			snprintf(why, size, "child %d is a zombie", pid);
	}
	return n;
}

static int threads(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nThreads:");
	return p ? atoi(p + 9) : -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	char path[4200], verdict[256], why[128] = "";
	int n, i, tree, timers, got, pfd[2];
	timer_t process_timer = 0;
	sigset_t mask, old;
	pthread_attr_t attr;
	pthread_t t;
	pid_t pid;
	char c;

	if (argc != 4 || (strcmp(argv[1], "tree") && strcmp(argv[1], "threads") &&
			  strcmp(argv[1], "timers")) || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: tree_bench tree|threads|timers N READY_FILE\n");
		return 2;
	}
	tree = !strcmp(argv[1], "tree");
	timers = !strcmp(argv[1], "timers");
	syscall(SYS_close_range, 3, ~0U, 0);

	/* SIGUSR1 stays blocked except while we wait for it */
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigaction(SIGUSR1, &sa, NULL);

	if (tree) {
		if (pipe2(pfd, O_CLOEXEC))
			die("pipe");
		for (i = 1; i < n; i++) {
			pid = fork();
			if (pid < 0)
				die("fork");
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close(pfd[0]);
				if (write(pfd[1], "x", 1) != 1)
					_exit(1);
				close(pfd[1]);
				for (;;)
					pause();
			}
		}
		close(pfd[1]);
		for (got = 0; got < n - 1; got++)
			if (read(pfd[0], &c, 1) != 1)
				die("a child died");
		close(pfd[0]);
	} else {
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		if (timers) {
			arm_process(&process_timer);
			nr_thread_timers = (n - 1) / TIMER_EVERY;
			thread_timers = calloc(nr_thread_timers + 1, sizeof(timer_t));
			if (!thread_timers ||
			    pthread_barrier_init(&armed, NULL, nr_thread_timers + 1))
				die("timers");
		}
		for (i = 1; i < n; i++)
			if ((errno = pthread_create(&t, &attr,
						    timers && i % TIMER_EVERY == 0 &&
						    i / TIMER_EVERY <= nr_thread_timers ?
						    timed_sleeper : sleeper,
						    (void *)(long)(i / TIMER_EVERY - 1))))
				die("pthread_create");
		if (timers)
			pthread_barrier_wait(&armed);
	}

	if (write_file(argv[3], "ready\n"))
		die("ready file");
	while (!verify_requested)
		sigsuspend(&old);

	if (tree) {
		got = live_children(why, sizeof(why));
		if (got == n - 1)
			snprintf(verdict, sizeof(verdict), "ok\n");
		else
			snprintf(verdict, sizeof(verdict), "bad: %d live children of %d %s\n",
				 got, n - 1, why);
	} else {
		got = threads();
		if (got != n)
			snprintf(verdict, sizeof(verdict), "bad: %d threads of %d\n", got, n);
		else if (timers && !timers_armed(process_timer, why, sizeof(why)))
			snprintf(verdict, sizeof(verdict), "bad: %s\n", why);
		else
			snprintf(verdict, sizeof(verdict), "ok\n");
	}
	snprintf(path, sizeof(path), "%s.verify", argv[3]);
	if (write_file(path, verdict))
		die("verify file");
	for (;;)
		pause();
}
