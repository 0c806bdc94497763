/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_FILE_UNIX_SK_H
#define CRIU_PARTS_FILE_UNIX_SK_H

/*
 * Unix sockets: file-unix.c saves every socket and restores connected
 * unnamed pairs; file-unix-bound.c restores the others (bound, listening,
 * accepted, connected to a bound one, unconnected), all of the tree at
 * once. Both use these (file-unix-sk.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fdinfo.pb-c.h"
#include "parts/file-kind.h"

#define TCP_ESTABLISHED	1
#define TCP_CLOSE	7
#define TCP_LISTEN	10
#define UNIX_NAME_MAX	108	/* sizeof(sun_path) */

struct sockaddr_un;

const char *unix_type_name(int type);
/* getsockopt(SOL_SOCKET, @opt) of an int */
int unix_sockopt(int sk, int opt, int *val);
/*
 * Sends @d's queue from @from into its socket (to address @to, when not
 * NULL), keeping datagram boundaries.
 */
int unix_refill(int from, const FileDesc *d, const struct sockaddr_un *to, socklen_t tolen);
/*
 * Sets buffer size @opt (SO_RCVBUF, SO_SNDBUF) to @val as getsockopt()
 * showed it (the kernel doubles what it is given); @force is its *FORCE
 * twin, past the sysctl's limit. Every socket kind uses it.
 */
int sk_set_buf(int sk, int opt, int force, uint64_t val);
/* Socket options and shutdown state as saved, and the file status flags. */
int unix_set_options(int sk, const FileDesc *d);

/*
 * A NETLINK_SOCK_DIAG socket in @pid's network namespace (the kernel
 * answers only about sockets of its own); -1 with errno. Network sockets
 * (file-inet.c) ask through it too.
 */
int sock_diag_open(pid_t pid);
struct nlmsghdr;
/*
 * Sends @req, a request of @size bytes, through such a socket @nl and
 * calls @one on each answer (< 0: failed, > 0: found, stop): 1 when @one
 * stopped it, 0 when the answers ran out, -1 with errno.
 */
int sock_diag_ask(int nl, const void *req, size_t size,
		  int (*one)(struct nlmsghdr *h, void *arg), void *arg);
/* the same through a socket of its own in @pid's network namespace */
int sock_diag_dump(pid_t pid, const void *req, size_t size,
		   int (*one)(struct nlmsghdr *h, void *arg), void *arg);

/*
 * The sockfs name of fd @fd of task @pid's protocol ("TCP", "NETLINK",
 * "PACKET", "RAW"...; the attribute system.sockprotoname), read from
 * outside; -1 when it is no socket. Socket kinds match by it.
 */
int sock_protoname(pid_t pid, int fd, const char *link, const struct stat *st, char *name,
		   size_t size);
/* whether that name is @want */
int sock_protoname_is(pid_t pid, int fd, const char *link, const struct stat *st,
		      const char *want);

/*
 * A socket's classic BPF filter (SO_GET_FILTER), each instruction as
 * code << 48 | jt << 40 | jf << 32 | k; none: @n 0. 0 or -errno: -EACCES
 * for an eBPF program, which can't be read back.
 */
int sk_filter_read(int sk, uint64_t **insns, size_t *n);
/* whether an image's filter may be attached (the kernel checks the rest) */
int sk_filter_valid(const uint64_t *insns, size_t n);
/* Attaches it (SO_ATTACH_FILTER), and locks it (SO_LOCK_FILTER) if @locked. */
int sk_filter_set(int sk, const uint64_t *insns, size_t n, int locked);

/*
 * The SOL_SOCKET options of an int that netlink and packet sockets keep
 * (SO_PRIORITY, SO_MARK, SO_RCVLOWAT, SO_PASSCRED, the SO_TIMESTAMP*
 * family): read into @out (one allocation, freed with free(*out)), checked
 * against the table, set where a new socket differs (@failed: the one
 * that could not be).
 */
int sk_opts_read(int sk, SkOptEntry ***out, size_t *n);
int sk_opts_valid(SkOptEntry *const *o, size_t n);
int sk_opts_set(int sk, SkOptEntry *const *o, size_t n, uint32_t *failed);

/* Not a plain socketpair end: restored with the others by unix_open_bound(). */
static inline int unix_is_bound(const UnixSkEntry *e)
{
	return e->has_state;
}

#endif
