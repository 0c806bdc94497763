// SPDX-License-Identifier: GPL-2.0-only
/*
 * inet_bench: a target for measuring TCP connections (--tcp-established).
 * Opens N connections over IPv4 loopback, both ends its own (2N sockets:
 * the listener is closed again), each end with a few bytes sent and left
 * unread, writes its pid to READY_FILE and waits to be dumped.
 *
 *	inet_bench N READY_FILE
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static int connection(const struct sockaddr_in *a, int l)
{
	int c = socket(AF_INET, SOCK_STREAM, 0), s;

	if (c < 0 || connect(c, (const struct sockaddr *)a, sizeof(*a)))
		return -1;
	s = accept(l, NULL, NULL);
	if (s < 0 || write(c, "ping", 4) != 4 || write(s, "pong!", 5) != 5)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct rlimit rl;
	int n, i, l;
	FILE *f;

	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 128) ||
	    getsockname(l, (struct sockaddr *)&a, &len)) {
		perror("listen");
		return 1;
	}
	for (i = 0; i < n; i++)
		if (connection(&a, l)) {
			perror("connection");
			return 1;
		}
	close(l);
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", getpid());
	fclose(f);
	for (;;)
		pause();
}
