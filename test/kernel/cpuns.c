// SPDX-License-Identifier: GPL-2.0
/*
 * cpuns V:CPU[,V:CPU...] CMD [ARG...]: run CMD in a new CPU namespace
 * (kernel/ patches) whose virtual CPU V is CPU CPU.
 *
 * The namespace is for children only, so CMD runs in a child. The parent
 * exits at once and the child waits until it has been adopted (by the
 * runner, a subreaper) before it execs: a test that records its parent at
 * start must find the same one after its restore, when criu is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CLONE_NEWCPU	0x00000040

int main(int argc, char **argv)
{
	char map[1024], *p = map;
	const char *s;
	pid_t parent = getpid();
	int fd, len;

	if (argc < 3) {
		fprintf(stderr, "usage: cpuns V:CPU[,V:CPU...] CMD [ARG...]\n");
		return 2;
	}
	for (s = argv[1]; *s && p < map + sizeof(map) - 2; s++)
		*p++ = *s == ':' ? ' ' : *s == ',' ? '\n' : *s;
	*p++ = '\n';
	len = p - map;
	if (unshare(CLONE_NEWCPU)) {
		perror("cpuns: unshare(CLONE_NEWCPU)");
		return 1;
	}
	fd = open("/proc/self/cpu_map", O_WRONLY);
	if (fd < 0 || write(fd, map, len) != len) {
		perror("cpuns: /proc/self/cpu_map");
		return 1;
	}
	close(fd);
	switch (fork()) {
	case -1:
		perror("cpuns: fork");
		return 1;
	case 0:
		while (getppid() == parent)
			usleep(1000);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	return 0;
}
