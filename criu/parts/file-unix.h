/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_UNIX_H
#define CRIU_PARTS_FILE_UNIX_H

/*
 * Unix sockets: file-unix.c saves every socket and restores connected
 * unnamed pairs; file-unix-bound.c restores the others (bound, listening,
 * accepted, connected to a bound one, unconnected), all of the tree at once.
 */
#include <stddef.h>
#include <sys/socket.h>

#include "fdinfo.pb-c.h"
#include "parts/files.h"

#define TCP_ESTABLISHED	1
#define TCP_CLOSE	7
#define TCP_LISTEN	10
#define UNIX_NAME_MAX	108	/* sizeof(sun_path) */

const char *unix_type_name(int type);
/*
 * Sends @d's queue from @from into its socket (to address @to, when not
 * NULL), keeping datagram boundaries.
 */
struct sockaddr_un;
int unix_refill(int from, const FileDesc *d, const struct sockaddr_un *to, socklen_t tolen);
/* Socket options and shutdown state as saved, and the file status flags. */
int unix_set_options(int sk, const FileDesc *d);

/* Not a plain socketpair end: restored with the others by unix_open_bound(). */
static inline int unix_is_bound(const UnixSkEntry *e)
{
	return e->has_state;
}

/* Dump, once every task is saved: queued clients, accepted ends, peers. */
int unix_bound_dump_done(struct file_ref *files, size_t n);
int unix_bound_validate(pid_t pid, const FileDesc *d);
int unix_open_bound(FileDesc **d, int n, int *fds);
/* A failed restore: the socket files criu made go again. */
void unix_bound_undo(void);

#endif
