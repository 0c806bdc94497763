// SPDX-License-Identifier: GPL-2.0
/*
 * probe: the task the kernel tests checkpoint and restore in the guest.
 *
 * It runs as a session leader with two threads and, every 100 ms, appends
 * one line to OUT describing what it sees:
 *
 *   seq=N mono=NS boot=NS cpu=C vcpu=C tcpu=C aff=LIST taff=LIST nproc=N
 *   start=TICKS tstart=TICKS cpuns=INO
 *
 * mono/boot: CLOCK_MONOTONIC/BOOTTIME through the vDSO; cpu: sched_getcpu()
 * (rseq), vcpu: getcpu() (vDSO), tcpu: sched_getcpu() of the second thread;
 * aff/taff: the affinities of both threads as sched_getaffinity() returns
 * them; nproc: online CPUs (sysconf); start/tstart: /proc/self/stat and
 * /proc/self/task/TID/stat field 22 of both threads, read inside; cpuns:
 * the inode of /proc/self/ns/cpu (0 without CPU namespaces).
 *
 * OUT is opened for each line and closed again: the probe holds no file
 * open but its stdio, so its images restore on another machine where only
 * its binary (and libraries) exist.
 *
 * Usage: probe OUT [--cpus LIST] [--thread-cpus LIST]
 *                  [--cpu-ns V:CPU,...] [--timens MONO_S,BOOT_S]
 *
 * --cpus and --thread-cpus pin the threads (in the numbers the probe sees).
 * --timens and --cpu-ns first make a time namespace with these offsets and
 * a CPU namespace with this map for a child, which becomes the probe; the
 * launcher prints the child's pid and exits. Without them the same happens
 * (a child can always call setsid()). The probe's stdio is /dev/null.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif
#define CLONE_NEWCPU	0x00000040	/* kernel/ patches */

static const char *out_path;
static pid_t thread_tid;
static volatile int thread_cpu = -1;

static void die(const char *what)
{
	fprintf(stderr, "probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void parse_list(const char *s, cpu_set_t *set)
{
	char *end;
	long a, b;

	CPU_ZERO(set);
	while (*s) {
		a = b = strtol(s, &end, 10);
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b; a++)
			CPU_SET(a, set);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			fprintf(stderr, "probe: bad CPU list\n");
			exit(2);
		}
	}
}

static void fmt_list(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int c;

	buf[0] = 0;
	for (c = 0; c < CPU_SETSIZE && off < len; c++)
		if (CPU_ISSET(c, set))
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
}

static long long now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned long long start_ticks(const char *path)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	int fd, n, field;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* after the ")" of the name: field 3 onwards */
	p = strrchr(buf, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

static void *thread_main(void *arg)
{
	cpu_set_t *set = arg;

	thread_tid = syscall(SYS_gettid);
	if (set && sched_setaffinity(0, sizeof(*set), set))
		die("thread affinity");
	for (;;) {
		thread_cpu = sched_getcpu();
		usleep(20000);
	}
	return NULL;
}

static void report(unsigned long seq)
{
	char line[1024], aff[256], taff[256], path[64];
	unsigned int vcpu = -1;
	cpu_set_t set;
	struct stat st;
	int fd, len;

	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	fmt_list(&set, aff, sizeof(aff));
	CPU_ZERO(&set);
	sched_getaffinity(thread_tid, sizeof(set), &set);
	fmt_list(&set, taff, sizeof(taff));
	getcpu(&vcpu, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", thread_tid);
	if (stat("/proc/self/ns/cpu", &st))
		st.st_ino = 0;
	len = snprintf(line, sizeof(line),
		       "seq=%lu mono=%lld boot=%lld cpu=%d vcpu=%u tcpu=%d aff=%s taff=%s "
		       "nproc=%ld start=%llu tstart=%llu cpuns=%lu\n", seq,
		       now(CLOCK_MONOTONIC), now(CLOCK_BOOTTIME), sched_getcpu(), vcpu,
		       thread_cpu, aff, taff, sysconf(_SC_NPROCESSORS_ONLN),
		       start_ticks("/proc/self/stat"), start_ticks(path),
		       (unsigned long)st.st_ino);
	fd = open(out_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die(out_path);
	if (write(fd, line, len) != len)
		die("write");
	close(fd);
}

static void write_file(const char *path, const char *buf)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf))
		die(path);
	close(fd);
}

/* "0:3,1:2" -> "0 3\n1 2\n" */
static void make_cpu_ns(const char *map)
{
	char buf[1024], *p = buf;
	const char *s;

	for (s = map; *s && p < buf + sizeof(buf) - 2; s++)
		*p++ = *s == ':' ? ' ' : *s == ',' ? '\n' : *s;
	*p++ = '\n';
	*p = 0;
	if (unshare(CLONE_NEWCPU))
		die("unshare(CLONE_NEWCPU)");
	write_file("/proc/self/cpu_map", buf);
}

static void make_timens(const char *offsets)
{
	long long mono = 0, boot = 0;
	char buf[128];

	if (sscanf(offsets, "%lld,%lld", &mono, &boot) != 2) {
		fprintf(stderr, "probe: --timens MONO_S,BOOT_S\n");
		exit(2);
	}
	if (unshare(CLONE_NEWTIME))
		die("unshare(CLONE_NEWTIME)");
	snprintf(buf, sizeof(buf), "monotonic %lld 0\nboottime %lld 0\n", mono, boot);
	write_file("/proc/self/timens_offsets", buf);
}

int main(int argc, char **argv)
{
	cpu_set_t cpus, tcpus, *tset = NULL;
	const char *cpu_ns = NULL, *timens = NULL;
	unsigned long seq = 0;
	pthread_t th;
	pid_t child;
	int i, pin = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: probe OUT [--cpus LIST] [--thread-cpus LIST] "
			"[--cpu-ns V:CPU,...] [--timens MONO_S,BOOT_S]\n");
		return 2;
	}
	out_path = argv[1];
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cpus")) {
			parse_list(argv[i + 1], &cpus);
			pin = 1;
		} else if (!strcmp(argv[i], "--thread-cpus")) {
			parse_list(argv[i + 1], &tcpus);
			tset = &tcpus;
		} else if (!strcmp(argv[i], "--cpu-ns")) {
			cpu_ns = argv[i + 1];
		} else if (!strcmp(argv[i], "--timens")) {
			timens = argv[i + 1];
		} else {
			fprintf(stderr, "probe: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (timens)
		make_timens(timens);
	if (cpu_ns)
		make_cpu_ns(cpu_ns);
	child = fork();
	if (child < 0)
		die("fork");
	if (child) {
		printf("%d\n", child);
		return 0;
	}
	/* nothing of the launcher's: no pipe to wait for, no file to restore */
	i = open("/dev/null", O_RDWR);
	if (i < 0 || dup2(i, 0) < 0 || dup2(i, 1) < 0 || dup2(i, 2) < 0)
		die("/dev/null");
	if (i > 2)
		close(i);
	setsid();
	if (chdir("/"))
		die("chdir");
	if (pin && sched_setaffinity(0, sizeof(cpus), &cpus))
		die("affinity");
	/* the thread starts later: its start time differs from the process's */
	usleep(300000);
	if (pthread_create(&th, NULL, thread_main, tset))
		die("pthread_create");
	while (!thread_tid || thread_cpu < 0)
		usleep(10000);
	for (;; seq++) {
		report(seq);
		usleep(100000);
	}
}
