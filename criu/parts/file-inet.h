/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_INET_H
#define CRIU_PARTS_FILE_INET_H

/*
 * TCP and UDP sockets: file-inet.c saves and reopens them, file-inet-opt.c
 * their socket options.
 */
#include <sys/types.h>

#include "fdinfo.pb-c.h"

/* every option of @e's kind of socket, into @e; -1 logged */
int inet_opts_read(int sk, InetSkEntry *e);
void inet_opts_free(InetSkEntry *e);
/* an image's options are all of the table and of its kind of socket */
int inet_opts_validate(const InetSkEntry *e);
/* set on a new socket, before it is bound; -1 logged */
int inet_opts_set(pid_t pid, int sk, const InetSkEntry *e);

#endif
