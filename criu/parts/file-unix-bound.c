// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets other than socketpair() ends: bound to a path or an
 * abstract name, listening (with connections queued and not accepted),
 * accepted, connected to a bound one, unconnected.
 *
 * Dump (file-unix.c saves each socket; here, once every task is saved):
 * a listener's queued connections are known by their clients' inodes
 * (UDIAG_SHOW_ICONS); each such client must be in the tree. An accepted
 * socket carries its listener's name: one that a listener of the tree has
 * (the same path and socket file, or the same abstract name) was accepted
 * from it. Of two connected stream or seqpacket sockets that are not a
 * socketpair, exactly one must be such an accepted end; a datagram socket
 * must be connected to a bound one in the tree.
 *
 * Restore, all of them at once, in the tree's namespaces: sockets made,
 * names bound (a dead socket file at the path, which the dumped process
 * left, is removed first; a live one or another file is an error), mode
 * and owner of the socket file set back, listeners listen with their
 * backlog; each accepted connection is made again by its client's
 * connect() and the listener's accept(), then the queued ones are
 * connected in their order and left in the queue. Datagram sockets are
 * connected, then every queue is sent again: from the peer, or from a
 * socket of criu's connected to the receiver's name. Socket files criu
 * made are removed again when the restore fails.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/file-kind.h"
#include "parts/file-unix-bound.h"
#include "parts/file-unix-sk.h"
#include "task/idmap.h"

/* ------------------------------------------------------------- dump */

static UnixSkEntry *find_sk(struct file_ref *files, size_t n, uint64_t ino)
{
	size_t i;

	for (i = 0; ino && i < n; i++)
		if (files[i].d->kind == FILE_KIND__FILE_UNIX && files[i].d->usk->ino == ino)
			return files[i].d->usk;
	return NULL;
}

static int same_name(const UnixSkEntry *a, const UnixSkEntry *b)
{
	return a->has_name && b->has_name && a->name.len == b->name.len &&
	       !memcmp(a->name.data, b->name.data, a->name.len) &&
	       a->vfs_ino == b->vfs_ino;
}

/* A name for messages: abstract ones as @name. */
static const char *show(const ProtobufCBinaryData *name)
{
	static char buf[UNIX_NAME_MAX + 2];
	size_t len = min(name->len, (size_t)UNIX_NAME_MAX);

	memcpy(buf, name->data, len);
	buf[len] = '\0';
	if (!buf[0])
		buf[0] = '@';
	return buf;
}

static const char *name_of(const UnixSkEntry *e)
{
	return e->has_name && e->name.len ? show(&e->name) : "no name";
}

/* The listener whose queue holds a connection from @ino, or NULL. */
static UnixSkEntry *queued_on(struct file_ref *files, size_t n, uint64_t ino)
{
	UnixSkEntry *l;
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_UNIX)
			continue;
		l = files[i].d->usk;
		for (j = 0; j < l->n_icons; j++)
			if (l->icons[j] == ino)
				return l;
	}
	return NULL;
}

/* The clients of queued connections: in the tree, restored with their listener. */
static int mark_queued(struct file_ref *files, size_t n)
{
	UnixSkEntry *l, *c;
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_UNIX)
			continue;
		l = files[i].d->usk;
		for (j = 0; j < l->n_icons; j++) {
			if (!l->icons[j])
				continue;	/* its client closed */
			c = find_sk(files, n, l->icons[j]);
			if (!c) {
				pr_err("Task %d: fd %d is a unix socket listening on %s with a "
				       "connection queued from socket:[%lu] outside the dumped "
				       "tree, which is not supported", files[i].pid, files[i].fd,
				       name_of(l), l->icons[j]);
				return -1;
			}
			c->has_state = 1;
			c->state = TCP_ESTABLISHED;
		}
	}
	return 0;
}

static void mark_accepted(struct file_ref *files, size_t n, UnixSkEntry *a)
{
	const UnixSkEntry *l;
	size_t i;

	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_UNIX)
			continue;
		l = files[i].d->usk;
		if (l != a && l->has_state && l->state == TCP_LISTEN && l->type == a->type &&
		    same_name(l, a)) {
			a->has_accepted_by = 1;
			a->accepted_by = l->ino;
			return;
		}
	}
}

/* A peer outside the tree: only a datagram socket's, named, allowed, nothing queued. */
static const char *outside(UnixSkEntry *e)
{
	if (e->type != SOCK_DGRAM)
		return "whose peer is outside the dumped tree (a connection can't be made "
		       "again from one end)";
	if (!e->has_peer_name)
		return "whose peer outside the dumped tree has no name";
	if (!e->external)
		return "whose peer is outside the dumped tree (--ext-unix-sk allows it for a "
		       "datagram socket)";
	if (e->n_queue)
		return "connected outside the dumped tree with datagrams queued";
	return NULL;
}

static int check_peer(const struct file_ref *x, struct file_ref *files, size_t n)
{
	UnixSkEntry *e = x->d->usk;
	const UnixSkEntry *p = find_sk(files, n, e->peer);
	const char *why = NULL;

	if (p || !e->peer)
		e->has_external = e->external = 0;
	if (e->peer && !p)
		why = outside(e);
	else if (e->type == SOCK_DGRAM && p && !p->has_name)
		why = "connected to an unnamed datagram socket";
	else if (e->type == SOCK_DGRAM || queued_on(files, n, e->ino))
		return 0;
	else if (!p && !e->has_accepted_by)
		why = "whose peer closed, and that no listener of the tree accepted";
	else if (p && !!e->has_accepted_by == !!p->has_accepted_by)
		why = "connected to a socket neither or both of which a listener of the tree "
		      "accepted (its listener was closed?)";
	if (!why)
		return 0;
	pr_err("Task %d: fd %d is a unix %s socket (socket:[%lu], %s) %s, which is not "
	       "supported", x->pid, x->fd, unix_type_name(e->type), e->ino, name_of(e), why);
	return -1;
}

int unix_bound_dump_done(struct file_ref *files, size_t n)
{
	UnixSkEntry *e;
	size_t i;

	if (mark_queued(files, n))
		return -1;
	for (i = 0; i < n; i++) {
		if (files[i].d->kind != FILE_KIND__FILE_UNIX)
			continue;
		e = files[i].d->usk;
		if (unix_is_bound(e) && e->state == TCP_ESTABLISHED && e->type != SOCK_DGRAM &&
		    e->has_name)
			mark_accepted(files, n, e);
	}
	for (i = 0; i < n; i++)
		if (files[i].d->kind == FILE_KIND__FILE_UNIX && unix_is_bound(files[i].d->usk) &&
		    files[i].d->usk->state == TCP_ESTABLISHED && check_peer(&files[i], files, n))
			return -1;
	return 0;
}

/* ---------------------------------------------------------- restore */

int unix_bound_validate(pid_t pid, const FileDesc *d)
{
	const UnixSkEntry *e = d->usk;
	const char *why = NULL;

	if (e->state != TCP_ESTABLISHED && e->state != TCP_CLOSE && e->state != TCP_LISTEN)
		why = "state";
	else if (e->has_name && (!e->name.len || e->name.len > UNIX_NAME_MAX))
		why = "name";
	else if (e->has_name && e->name.data[0] &&
		 (e->name.data[0] != '/' || strnlen((char *)e->name.data, e->name.len) <
					    e->name.len - 1))
		why = "path";
	else if (e->state == TCP_LISTEN && (!e->has_name || e->n_queue || e->peer))
		why = "listener";
	else if (e->n_icons && e->state != TCP_LISTEN)
		why = "queued connections";
	else if (e->has_accepted_by && (e->state != TCP_ESTABLISHED || e->type == SOCK_DGRAM))
		why = "accepted socket";
	else if (e->external && (e->type != SOCK_DGRAM || !e->has_peer_name || !e->peer ||
				 !e->peer_name.len || e->peer_name.len > UNIX_NAME_MAX || e->n_queue))
		why = "peer outside the tree";
	else if (e->deleted && (!e->has_name || !e->name.data[0]))
		why = "deleted socket file";
	if (!why)
		return 0;
	pr_err("Task %d: image files.img has a unix socket #%u with an invalid %s", pid, d->id,
	       why);
	return -1;
}

/*
 * Paths criu bound that were not there before, removed again if the
 * restore fails: the kind's data (its slot in the file part's context).
 */
struct created {
	char **paths;
	int nr;
};

static struct created *created_of(void **slot)
{
	if (slot && !*slot)
		*slot = xzalloc(sizeof(struct created));
	return slot ? *slot : NULL;
}

static void forget_created(struct created *c, int from, int unlink_them)
{
	while (c && c->nr > from) {
		c->nr--;
		if (unlink_them && unlink(c->paths[c->nr]) && errno != ENOENT)
			pr_perror("Can't remove the socket file %s", c->paths[c->nr]);
		free(c->paths[c->nr]);
	}
}

void unix_bound_restored(void **slot, int failed)
{
	struct created *c = slot ? *slot : NULL;

	if (!c)
		return;
	forget_created(c, 0, failed);
	free(c->paths);
	free(c);
	*slot = NULL;
}

static int remember_created(struct created *c, const char *path)
{
	char *copy = c ? xstrdup(path) : NULL;

	if (!copy || xgrow(c->paths, c->nr)) {
		free(copy);
		return -1;
	}
	c->paths[c->nr++] = copy;
	return 0;
}

static socklen_t name_addr(const ProtobufCBinaryData *name, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, name->data, name->len);
	return offsetof(struct sockaddr_un, sun_path) + name->len;
}

static socklen_t sk_addr(const UnixSkEntry *e, struct sockaddr_un *sa)
{
	return name_addr(&e->name, sa);
}

/*
 * A socket file at @path: a dead one (the dumped process's) goes, 1; nothing
 * there, 0; a live socket or another file, -1.
 */
static int clear_stale(const UnixSkEntry *e, const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int probe, ret;

	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		pr_perror("Can't bind unix socket:[%lu] to %s", e->ino, path);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		pr_err("Can't bind unix socket:[%lu] to %s: a file that is not a socket is there",
		       e->ino, path);
		return -1;
	}
	/* a datagram probe: refused only by a file no socket is bound to */
	probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (probe < 0) {
		pr_perror("Can't make a socket to probe %s", path);
		return -1;
	}
	ret = connect(probe, (struct sockaddr *)&sa, sk_addr(e, &sa));
	close(probe);
	if (ret && errno == ECONNREFUSED) {
		if (!unlink(path))
			return 1;
		pr_perror("Can't remove the old socket file %s", path);
		return -1;
	}
	pr_err("Can't bind unix socket:[%lu] to %s: a live socket is bound there", e->ino, path);
	return -1;
}

/*
 * The images hold criu's ids; a container with a user namespace binds its
 * sockets from inside, where only ids its maps (@ids) name can be given
 * (else EINVAL).
 */
static int chown_inside(const struct idmap *ids, const char *path, uint32_t uid, uint32_t gid)
{
	if (idmap_inside(ids, 0, uid, &uid) || idmap_inside(ids, 1, gid, &gid)) {
		errno = EOVERFLOW;
		return -1;
	}
	return fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW);
}

/* In a user namespace of the tree's: criu's root (0) is not root inside. */
static int in_user_ns(const struct idmap *ids)
{
	uint32_t id;

	return ids && (idmap_inside(ids, 0, 0, &id) || id != 0);
}

/* 0: bound and given its mode and owner; 1: not bound; 2: bound, not given. */
static int bind_and_own(const struct idmap *ids, int sk, const struct sockaddr_un *sa,
			socklen_t len, const UnixSkEntry *e, const char *path)
{
	if (bind(sk, (const struct sockaddr *)sa, len)) {
		pr_perror("Can't bind unix %s socket:[%lu] to %s", unix_type_name(e->type),
			  e->ino, name_of(e));
		return 1;
	}
	if (!path[0])
		return 0;
	if ((e->has_mode && fchmodat(AT_FDCWD, path, e->mode, 0)) ||
	    (e->has_uid && chown_inside(ids, path, e->uid, e->gid))) {
		pr_perror("Can't give the socket file %s of socket:[%lu] its mode and owner",
			  path, e->ino);
		return 2;
	}
	return 0;
}

/*
 * In a user namespace of the tree's, the restoring task still has criu's
 * filesystem ids, which the namespace does not map: a socket file it binds
 * would belong to an id the namespace can't name, and no chown could move
 * it (EPERM). A child binds the shared socket as the namespace's root (its
 * filesystem ids, idmap_take_fs_ids()) and gives the file its owner; the task's own ids stay criu's, which the
 * images directory needs, until the creds part sets them.
 */
static int bind_in_child(const struct idmap *ids, int sk, const struct sockaddr_un *sa,
			 socklen_t len, const UnixSkEntry *e, const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		pr_perror("Can't fork to bind socket:[%lu] to %s", e->ino, name_of(e));
		return 1;
	}
	if (!pid)
		_exit(idmap_take_fs_ids(ids) ? 1 : bind_and_own(ids, sk, sa, len, e, path));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		pr_err("The child binding socket:[%lu] to %s died", e->ino, name_of(e));
		return 2;
	}
	return WEXITSTATUS(status);
}

static int bind_one(const struct idmap *ids, struct created *c, int sk, const UnixSkEntry *e)
{
	char path[UNIX_NAME_MAX + 1] = "";
	struct sockaddr_un sa;
	socklen_t len = sk_addr(e, &sa);
	int stale = 0, ret;

	if (e->name.data[0]) {
		memcpy(path, e->name.data, e->name.len);
		stale = clear_stale(e, path);
		if (stale < 0)
			return -1;
	}
	if (path[0] && in_user_ns(ids))
		ret = bind_in_child(ids, sk, &sa, len, e, path);
	else
		ret = bind_and_own(ids, sk, &sa, len, e, path);
	if (ret == 1)
		return -1;
	if (path[0] && !stale && remember_created(c, path))
		return -1;
	return ret ? -1 : 0;
}

struct graph {
	FileDesc **d;
	int n;
	int *fds;
	struct created *created;
	const struct idmap *ids;	/* the tree's user namespace's, bound inside it */
	char *named;	/* bound (and listening) already */
};

static int index_of(const struct graph *g, uint64_t ino)
{
	int i;

	for (i = 0; ino && i < g->n; i++)
		if (g->d[i]->usk->ino == ino)
			return i;
	return -1;
}

/* Every socket another one names is in the group. */
static int check_graph(const struct graph *g)
{
	const UnixSkEntry *e, *l;
	size_t j;
	int i;

	for (i = 0; i < g->n; i++) {
		e = g->d[i]->usk;
		l = e->has_accepted_by && index_of(g, e->accepted_by) >= 0 ?
		    g->d[index_of(g, e->accepted_by)]->usk : NULL;
		if ((e->has_accepted_by && (!l || l->state != TCP_LISTEN || l->type != e->type)) ||
		    (e->peer && index_of(g, e->peer) < 0 && !e->external) ||
		    (e->type == SOCK_DGRAM && e->peer && !e->external &&
		     !g->d[index_of(g, e->peer)]->usk->has_name) ||
		    (e->type == SOCK_DGRAM && e->n_queue && !e->has_name))
			goto bad;
		for (j = 0; j < e->n_icons; j++)
			if (e->icons[j] && index_of(g, e->icons[j]) < 0)
				goto bad;
	}
	return 0;
bad:
	pr_err("Image files.img: unix socket:[%lu] names sockets that don't match it",
	       g->d[i]->usk->ino);
	return -1;
}

static int sk_new(const UnixSkEntry *e)
{
	int sk = socket(AF_UNIX, e->type | SOCK_CLOEXEC, 0);

	if (sk < 0)
		pr_perror("Can't create a unix %s socket for socket:[%lu]",
			  unix_type_name(e->type), e->ino);
	return sk;
}

static int make_all(struct graph *g)
{
	int i;

	for (i = 0; i < g->n; i++) {
		if (g->d[i]->usk->has_accepted_by)
			continue;	/* accept() makes it */
		g->fds[i] = sk_new(g->d[i]->usk);
		if (g->fds[i] < 0)
			return -1;
	}
	return 0;
}

/* Named (once); a listener listens. */
static int name_one(struct graph *g, int i)
{
	const UnixSkEntry *e = g->d[i]->usk;

	if (g->named[i] || e->has_accepted_by)
		return 0;
	if (e->has_name && bind_one(g->ids, g->created, g->fds[i], e))
		return -1;
	if (e->state == TCP_LISTEN && listen(g->fds[i], e->backlog)) {
		pr_perror("Can't listen on %s (socket:[%lu])", name_of(e), e->ino);
		return -1;
	}
	g->named[i] = 1;
	return 0;
}

/* @sk connects to @name, a listener or a bound datagram socket, without waiting. */
static int connect_name(int sk, const ProtobufCBinaryData *name, uint64_t ino)
{
	struct sockaddr_un sa;
	socklen_t len = name_addr(name, &sa);
	int fl = fcntl(sk, F_GETFL);

	if (fl < 0 || fcntl(sk, F_SETFL, fl | O_NONBLOCK) ||
	    connect(sk, (struct sockaddr *)&sa, len)) {
		pr_perror("Can't connect to %s (socket:[%lu]) again", show(name), ino);
		return -1;
	}
	return 0;
}

static int connect_to(int sk, const UnixSkEntry *to)
{
	return connect_name(sk, &to->name, to->ino);
}

/* An accepted connection: its client connects, the listener accepts. */
static int accept_one(struct graph *g, int i)
{
	const UnixSkEntry *e = g->d[i]->usk;
	int l = index_of(g, e->accepted_by), c = index_of(g, e->peer), client;
	int ret = -1;

	if (c >= 0 && name_one(g, c))
		return -1;
	/* a client that closed: one of criu's, closed once it sent the queue */
	client = c >= 0 ? g->fds[c] : sk_new(e);
	if (client < 0)
		return -1;
	if (connect_to(client, g->d[l]->usk))
		goto out;
	g->fds[i] = accept4(g->fds[l], NULL, NULL, SOCK_CLOEXEC);
	if (g->fds[i] < 0) {
		pr_perror("Can't accept socket:[%lu] on %s again", e->ino, name_of(g->d[l]->usk));
		goto out;
	}
	ret = c < 0 ? unix_refill(client, g->d[i], NULL, 0) : 0;
out:
	if (c < 0)
		close(client);
	return ret;
}

/* A queued connection from client @c (-1: one that closed) to listener @l. */
static int queue_one(struct graph *g, int c, const UnixSkEntry *l)
{
	int temp = c < 0 ? sk_new(l) : -1, ret;

	if (c < 0 && temp < 0)
		return -1;
	ret = (c >= 0 && name_one(g, c)) || connect_to(c < 0 ? temp : g->fds[c], l) ? -1 : 0;
	if (temp >= 0)
		close(temp);
	return ret;
}

/*
 * The connections made to socket @l by its name: accepted ones, then
 * those queued, in their order; datagram sockets connected to it.
 */
static int link_to(struct graph *g, int l)
{
	const UnixSkEntry *e = g->d[l]->usk, *x;
	size_t j;
	int i;

	for (i = 0; i < g->n; i++)
		if (g->d[i]->usk->has_accepted_by && g->d[i]->usk->accepted_by == e->ino &&
		    accept_one(g, i))
			return -1;
	for (j = 0; j < e->n_icons; j++)
		if (queue_one(g, index_of(g, e->icons[j]), e))
			return -1;
	for (i = 0; i < g->n; i++) {
		x = g->d[i]->usk;
		if (x->type == SOCK_DGRAM && x->peer == e->ino && !x->external &&
		    (name_one(g, i) || connect_to(g->fds[i], e)))
			return -1;
	}
	return 0;
}

/* A datagram queue sent to the socket's name, from a socket of criu's. */
static int refill_by_name(const FileDesc *d)
{
	int from = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;
	struct sockaddr_un sa;

	if (from < 0) {
		pr_perror("Can't make a socket to refill socket:[%lu]", d->usk->ino);
		return -1;
	}
	ret = unix_refill(from, d, &sa, sk_addr(d->usk, &sa));
	close(from);
	return ret;
}

/*
 * A socket whose file was deleted: bound, its connections made and its
 * datagrams sent while the file is there, then the file goes again.
 */
static int make_deleted(struct graph *g, int i)
{
	const UnixSkEntry *e = g->d[i]->usk;
	char path[UNIX_NAME_MAX + 1] = "";

	memcpy(path, e->name.data, e->name.len);
	if (name_one(g, i) || link_to(g, i) ||
	    (e->type == SOCK_DGRAM && e->n_queue && refill_by_name(g->d[i])))
		return -1;
	if (unlink(path)) {
		pr_perror("Can't remove the socket file %s of socket:[%lu] again", path, e->ino);
		return -1;
	}
	return 0;
}

static int connect_all(struct graph *g)
{
	const UnixSkEntry *e;
	int i;

	/* an accepted socket has its listener's name, and file: not its own to delete */
	for (i = 0; i < g->n; i++)
		if (g->d[i]->usk->deleted && !g->d[i]->usk->has_accepted_by && make_deleted(g, i))
			return -1;
	for (i = 0; i < g->n; i++)
		if (name_one(g, i))
			return -1;
	for (i = 0; i < g->n; i++)
		if (!g->d[i]->usk->deleted && link_to(g, i))
			return -1;
	/* a peer outside the tree (--ext-unix-sk): by the name it had */
	for (i = 0; i < g->n; i++) {
		e = g->d[i]->usk;
		if (e->external && connect_name(g->fds[i], &e->peer_name, e->peer))
			return -1;
	}
	return 0;
}

/* Every queue sent again by the peer, or to the receiver's name. */
static int refill_all(struct graph *g)
{
	const UnixSkEntry *e;
	struct sockaddr_un sa;
	int i, p;

	for (i = 0; i < g->n; i++) {
		e = g->d[i]->usk;
		p = index_of(g, e->peer);
		if (!e->n_queue || (e->has_accepted_by && p < 0) ||
		    (e->deleted && !e->has_accepted_by && e->type == SOCK_DGRAM))
			continue;	/* sent by accept_one() or make_deleted() */
		if (e->type != SOCK_DGRAM && p < 0) {
			pr_err("Image files.img: unix socket:[%lu] has data but no peer", e->ino);
			return -1;
		}
		/* a connected datagram socket hears only its peer */
		if (p < 0 ? refill_by_name(g->d[i]) :
		    unix_refill(g->fds[p], g->d[i], e->type == SOCK_DGRAM ? &sa : NULL,
				e->type == SOCK_DGRAM ? sk_addr(e, &sa) : 0))
			return -1;
	}
	return 0;
}

int unix_open_bound(const struct idmap *ids, void **data, FileDesc **d, int n, int *fds)
{
	struct graph g = { .d = d, .n = n, .fds = fds, .named = xzalloc(n + 1),
			   .created = created_of(data), .ids = ids };
	int i, mark = g.created ? g.created->nr : 0;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	if (!g.named || !g.created || check_graph(&g) || make_all(&g) || connect_all(&g) || refill_all(&g))
		goto err;
	for (i = 0; i < n; i++)
		if (unix_set_options(fds[i], d[i]))
			goto err;
	free(g.named);
	return 0;
err:
	free(g.named);
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	forget_created(g.created, mark, 1);
	return -1;
}
