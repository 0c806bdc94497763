// SPDX-License-Identifier: GPL-2.0
/*
 * Restore of the tree's mount namespace, in its root task before it forks
 * (ns-mnt.c's early hook): the task was born in a copy of criu's namespace.
 *
 * Everything in the copy is first made a slave: nothing done here reaches
 * criu's namespace (or any other), whatever happens. Then either
 *   - the namespace had a root of its own (a container): --root DIR is
 *     cloned and mounted over "/" of the copy, every mount is made on it
 *     in the order they were made at dump, and pivot_root() enters it,
 *     detaching the copy of criu's tree; or
 *   - the namespace was a copy of criu's (unshare -m): the mounts it kept
 *     are criu's own again, those it dropped are unmounted, and the others
 *     are made as above.
 *
 * Each mount is made with the new mount API, detached: fsopen()/fsmount()
 * for a new filesystem (a tmpfs is filled before it is attached),
 * open_tree(OPEN_TREE_CLONE) of the mount it is a bind of (through a bare
 * clone first, so a mount on top of the source's path is not in the way),
 * its attributes set with mount_setattr(), then attached on its parent's
 * root fd + the path below it (move_mount()), and its propagation set.
 * Failure anywhere kills the task, and the namespace goes with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "core/log.h"
#include "core/lsm.h"
#include "core/util.h"
#include "image/image.h"
#include "image/sums.h"
#include "parts/ns-mnt-build.h"
#include "parts/ns-mnt-tmpfs.h"
#include "proc/proc.h"
#include "task/idmap.h"
#include "task/pty.h"

static struct rmount *find(struct mnt_restore *r, uint32_t id)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->m[i].e->id == id)
			return &r->m[i];
	return NULL;
}

static int setattr(int fd, uint64_t set, uint64_t clr, uint64_t prop)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr, .propagation = prop };

	return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &a, sizeof(a));
}

static int set_attrs(struct rmount *m)
{
	uint64_t set = m->e->attrs & MNT_ATTR_MASK;
	/* the access time mode is one field: cleared whole, set to ours */
	uint64_t clr = (MNT_ATTR_MASK & ~set) | MOUNT_ATTR__ATIME;

	if (m->attrs == (int64_t)set)
		return 0;	/* made so, or cloned from one that is */
	if (setattr(m->fd, set, clr, 0)) {
		pr_perror("Can't set the attributes %#lx of mount %u at %s", set, m->e->id,
			  m->e->mountpoint);
		return -1;
	}
	return 0;
}

/*
 * Propagation as dumped, right after the attach. A clone is what its
 * source is (a peer of its peers, a slave of its master), so binds that
 * were peers or slaves are made from a mount of the right group (ns-mnt.c
 * chose their source) before anything else is cloned from it.
 */
static int propagate(struct rmount *m, struct rmount *src)
{
	MountEntry *e = m->e;
	uint32_t has_shared = src ? src->e->shared : 0, has_master = src ? src->e->master : 0;
	const char *step = "private";
	int ret = 0, peer;

	if (src && has_shared == e->shared && has_master == e->master)
		return 0;	/* the clone is just that */
	if (!src && e->kind == MOUNT_KIND__MNT_NEW && !e->shared && !e->master)
		return 0;	/* a new mount is private */
	if (e->master && !e->master_outside) {
		step = "a slave";
		if (has_shared == e->master)
			ret = setattr(m->fd, 0, 0, MS_SLAVE);
		else if (has_master != e->master || has_shared) {
			pr_warn("Mount %u at %s: no mount of peer group %u to be a slave of; "
				"made private", e->id, e->mountpoint, e->master);
			ret = setattr(m->fd, 0, 0, MS_PRIVATE);
		}
		peer = 0;
	} else {
		peer = has_shared && has_shared == e->shared && !has_master;
		if (!e->master_outside && !peer)
			ret = setattr(m->fd, 0, 0, MS_PRIVATE);
	}
	if (!ret && e->shared && !peer) {
		step = "shared";
		ret = setattr(m->fd, 0, 0, MS_SHARED);
	}
	if (ret)
		pr_perror("Can't make mount %u at %s %s", e->id, e->mountpoint, step);
	return ret;
}

/*
 * An option uid=N or gid=N (tmpfs, devpts, proc) as the tree's user
 * namespace names the id: mountinfo shows them as criu's namespace does,
 * the kernel parses them in the mounter's, and the tree mounts its own.
 */
static int id_option(struct mnt_restore *r, const MountEntry *e, const char *w, char **v,
		     char *buf, size_t len)
{
	uint32_t id;
	char *end;

	if (strcmp(w, "uid") && strcmp(w, "gid"))
		return 0;
	id = strtoul(*v, &end, 10);
	if (*end || idmap_inside(r->ids, *w == 'g', id, &id)) {
		pr_err("Mount %u at %s: its option %s=%s is no id mapped into the tree's user "
		       "namespace", e->id, e->mountpoint, w, *v);
		return -1;
	}
	snprintf(buf, len, "%u", id);
	*v = buf;
	return 0;
}

/* --lsm-mount-context in place of the dumped context= (core/lsm.c). */
static void context_option(struct mnt_restore *r, const MountEntry *e, const char *w,
			   char **v)
{
	const char *c = lsm_mount_option(r->context, w, *v);

	if (c == *v)
		return;
	pr_info("Mount %u at %s: context=%s instead of %s (--lsm-mount-context)", e->id,
		e->mountpoint, c, *v);
	*v = (char *)c;
}

/* "k=v,flag,..." of a superblock, one fsconfig() each. */
static int configure(struct mnt_restore *r, int fs, const MountEntry *e)
{
	char *opts = xstrdup(e->options), *w, *p = opts, *v, id[16];
	int ret = 0;

	if (!opts)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "source", e->source, 0)) {
		pr_perror("Can't give %s at %s its source %s", e->fstype, e->mountpoint,
			  e->source);
		ret = -1;
	}
	while (!ret && (w = opt_next(&p, &v))) {
		if (!*w)
			continue;
		if (v && id_option(r, e, w, &v, id, sizeof(id))) {
			ret = -1;
			break;
		}
		if (v)
			context_option(r, e, w, &v);
		ret = v ? fsconfig(fs, FSCONFIG_SET_STRING, w, v, 0) :
			  fsconfig(fs, FSCONFIG_SET_FLAG, w, NULL, 0);
		if (ret)
			pr_perror("Can't mount %s at %s with option %s%s%s", e->fstype,
				  e->mountpoint, w, v ? "=" : "", v ? v : "");
	}
	free(opts);
	return ret;
}

/* The kernel's own words about a failed fsconfig(), in the log. */
static void log_fs_messages(int fs)
{
	char buf[256];
	ssize_t n;

	while ((n = read(fs, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		pr_err("  the kernel says: %s", buf);
	}
}

/* The superblock made read-only once its files are in. */
static int make_ro(struct rmount *m)
{
	int fs = fspick(m->fd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC);

	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) ||
	    fsconfig(fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0)) {
		pr_perror("Can't make %s at %s read-only", m->e->fstype, m->e->mountpoint);
		if (fs >= 0)
			close(fs);
		return -1;
	}
	close(fs);
	return 0;
}

/*
 * A namespace whose root is the true one (the initramfs' rootfs, which
 * nothing is mounted under) lists that root as its own parent; every other
 * root hangs off a mount it does not see. Made alike, parentless (-1: no
 * mount has that id), so that a walk up the tree ends.
 */
int mnt_read_mountinfo(pid_t pid, struct proc_mounts *ms)
{
	int i;

	if (proc_read_mountinfo(pid, ms))
		return -1;
	for (i = 0; i < ms->nr; i++)
		if (ms->m[i].parent == ms->m[i].id)
			ms->m[i].parent = -1;
	return 0;
}

/*
 * Linux before 6.15 clones no detached mount (EINVAL): @rel is found in
 * @fd's own mount instead, which works while nothing is mounted on the way.
 */
static int clone_in_place(int fd, const char *rel)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
	};
	int at, sub;

	at = syscall(SYS_openat2, fd, rel, &how, sizeof(how));
	if (at < 0) {
		if (errno == EXDEV)
			pr_err("%s is under a mount made over it: this kernel clones no detached "
			       "mount (Linux 6.15) to reach it", rel);
		return -1;
	}
	sub = open_tree(at, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	close(at);
	return sub;
}

/* Clone of @fd's mount at @rel below its root, without what is mounted on it. */
static int clone_at(int fd, const char *rel)
{
	int bare, sub;

	bare = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (bare < 0 || !*rel)
		return bare;
	sub = open_tree(bare, rel, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
	close(bare);
	if (sub < 0 && errno == EINVAL)
		return clone_in_place(fd, rel);
	return sub;
}

static int new_fs(struct mnt_restore *r, struct rmount *m)
{
	MountEntry *e = m->e;
	int contents = e->has_contents && e->contents;
	int fs, whole = -1;

	fs = fsopen(e->fstype, FSOPEN_CLOEXEC);
	if (fs < 0) {
		pr_perror("Can't mount %s at %s", e->fstype, e->mountpoint);
		return -1;
	}
	/* its attributes at once, but read-only once its files are in */
	m->attrs = e->attrs & MNT_ATTR_MASK & ~(contents ? MOUNT_ATTR_RDONLY : 0);
	if (configure(r, fs, e) ||
	    (e->sb_ro && !contents && fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0)) ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ||
	    (whole = fsmount(fs, FSMOUNT_CLOEXEC, m->attrs)) < 0) {
		pr_perror("Can't mount %s at %s (%s)", e->fstype, e->mountpoint, e->options);
		log_fs_messages(fs);
		close(fs);
		return -1;
	}
	close(fs);
	m->fd = whole;
	if (contents && (tmpfs_restore(r->ids, r->dirfd, r->store, e->contents, whole,
					 e->mountpoint) ||
			 (e->sb_ro && make_ro(m))))
		return -1;
	if (!strcmp(e->root, "/"))
		return 0;
	m->fd = clone_at(whole, e->root + 1);
	close(whole);
	if (m->fd < 0)
		pr_perror("Can't find %s in the %s mounted at %s", e->root, e->fstype,
			  e->mountpoint);
	return m->fd < 0 ? -1 : 0;
}

/* The path of fs path @root in a mount whose root is fs path @src_root. */
static const char *within(const char *src_root, const char *root)
{
	size_t n = strlen(src_root);

	if (!strcmp(src_root, "/"))
		return root + 1;
	return root[n] == '/' ? root + n + 1 : root + n;
}

static int open_ptmx(const void *arg)
{
	int fd = openat(*(const int *)arg, "ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		pr_perror("Can't open the ptmx of a devpts");
	return fd;
}

/*
 * A bind of a pty's slave (a container's /dev/console) on a devpts made
 * anew: the pty is made first, its master kept for the tty kind.
 */
static int make_pty(struct rmount *src, const char *rel)
{
	unsigned int index;
	char end;
	int master;

	if (strcmp(src->e->fstype, "devpts") || sscanf(rel, "%u%c", &index, &end) != 1)
		return -1;
	master = pty_open_index(open_ptmx, &src->fd, index);
	if (master < 0)
		return -1;
	if (pty_keep(index, master)) {
		close(master);
		return -1;
	}
	return 0;
}

static int make(struct mnt_restore *r, struct rmount *m, struct rmount **src)
{
	MountEntry *e = m->e;
	int i = m - r->m;

	*src = NULL;
	switch (e->kind) {
	case MOUNT_KIND__MNT_NEW:
		return new_fs(r, m);
	case MOUNT_KIND__MNT_BIND:
		*src = find(r, e->bind_of);
		m->fd = clone_at((*src)->fd, within((*src)->e->root, e->root));
		if (m->fd < 0 && errno == ENOENT && !make_pty(*src, within((*src)->e->root, e->root)))
			m->fd = clone_at((*src)->fd, within((*src)->e->root, e->root));
		m->attrs = (*src)->e->attrs & MNT_ATTR_MASK;	/* a clone has them */
		break;
	case MOUNT_KIND__MNT_EXTERNAL:
		m->fd = clone_at(r->ext_fd[i], "");
		break;
	default:
		return -1;
	}
	if (m->fd < 0)
		pr_perror("Can't clone %s for mount %u at %s",
			  e->kind == MOUNT_KIND__MNT_EXTERNAL ? r->ext_path[i] : e->root,
			  e->id, e->mountpoint);
	return m->fd < 0 ? -1 : 0;
}

/*
 * The mount point of an external mount the root lacks (a fresh copy of a
 * rootfs, which the runtime made the volume's mount point in when the
 * container started), made as the runtime makes it: the directories on
 * the way, then a directory or an empty file, as its source is.
 */
static int make_point(int dir, const char *rel, int is_dir)
{
	char path[PATH_MAX], *c, *slash;
	int ret = 0;

	snprintf(path, sizeof(path), "%s", rel);
	for (c = path; !ret && (slash = strchr(c, '/')); c = slash + 1) {
		*slash = '\0';
		ret = mkdirat(dir, path, 0755) && errno != EEXIST;
		*slash = '/';
	}
	if (ret)
		return -1;
	if (is_dir)
		return mkdirat(dir, path, 0755) && errno != EEXIST ? -1 : 0;
	ret = openat(dir, path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	return ret < 0 ? -1 : close(ret);
}

static int external_point(struct mnt_restore *r, struct rmount *m, struct rmount *parent,
			  const char *rel)
{
	struct stat st;

	if (m->e->kind != MOUNT_KIND__MNT_EXTERNAL || errno != ENOENT ||
	    fstat(r->ext_fd[m - r->m], &st) || make_point(parent->fd, rel, S_ISDIR(st.st_mode)))
		return -1;
	pr_info("Made the mount point %s of the external mount %s", m->e->mountpoint,
		r->ext_path[m - r->m]);
	return 0;
}

/* Onto its parent, exactly where it was: not on a mount that came since. */
static int attach(struct mnt_restore *r, struct rmount *m, struct rmount *parent)
{
	const char *rel = mnt_below(parent->e->mountpoint, m->e->mountpoint);
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int at, ret;

	if (!rel) {
		pr_err("Image mnt.img: mount %u at %s is not below its parent's %s", m->e->id,
		       m->e->mountpoint, parent->e->mountpoint);
		return -1;
	}
	at = *rel ? syscall(SYS_openat2, parent->fd, rel, &how, sizeof(how)) : parent->fd;
	if (at < 0 && !external_point(r, m, parent, rel))
		at = syscall(SYS_openat2, parent->fd, rel, &how, sizeof(how));
	if (at < 0) {
		pr_perror("Can't find the mount point of mount %u: %s in mount %u",
			  m->e->id, m->e->mountpoint, parent->e->id);
		return -1;
	}
	ret = move_mount(m->fd, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	if (ret)
		pr_perror("Can't mount %s at %s", m->e->fstype, m->e->mountpoint);
	if (at != parent->fd)
		close(at);
	return ret;
}

static int ready(struct mnt_restore *r, struct rmount *m)
{
	struct rmount *p = find(r, m->e->parent);

	if (!p || !p->done)
		return 0;
	return m->e->kind != MOUNT_KIND__MNT_BIND || find(r, m->e->bind_of)->done;
}

/*
 * Every mount not made yet, in the dump's order, each once its parent
 * (and the mount it is a bind of) exists: the order they were made in.
 */
static int make_all(struct mnt_restore *r)
{
	struct rmount *m, *src;
	int i, made, left;

	do {
		made = left = 0;
		for (i = 0; i < r->nr; i++) {
			m = &r->m[i];
			if (m->done)
				continue;
			if (!ready(r, m)) {
				left++;
				continue;
			}
			if (make(r, m, &src) || set_attrs(m) || attach(r, m, find(r, m->e->parent)) ||
			    propagate(m, src) || mnt_open_hidden_on(r, m))
				return -1;
			pr_debug("Mount %u: %s at %s", m->e->id, m->e->fstype, m->e->mountpoint);
			m->done = 1;
			made++;
		}
	} while (made && left);
	if (left) {
		pr_err("Image mnt.img: %d mounts hang off mounts that are never made", left);
		return -1;
	}
	return 0;
}

/* Unbindable last: until then others may still be cloned from them. */
static int unbindable(struct mnt_restore *r)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->m[i].e->unbindable && r->m[i].fd >= 0 &&
		    setattr(r->m[i].fd, 0, 0, MS_UNBINDABLE)) {
			pr_perror("Can't make mount %u at %s unbindable", r->m[i].e->id,
				  r->m[i].e->mountpoint);
			return -1;
		}
	return 0;
}

/* What the mounts from outside are bound from, while criu's paths are still in view. */
static int open_sources(struct mnt_restore *r)
{
	int i;

	for (i = 0; i < r->nr; i++) {
		r->ext_fd[i] = -1;
		if (r->m[i].e->kind != MOUNT_KIND__MNT_EXTERNAL)
			continue;
		r->ext_fd[i] = open(r->ext_path[i], O_PATH | O_CLOEXEC);
		if (r->ext_fd[i] < 0) {
			pr_perror("Can't open %s for the external mount at %s", r->ext_path[i],
				  r->m[i].e->mountpoint);
			return -1;
		}
	}
	return 0;
}

static struct rmount *root_of(struct mnt_restore *r)
{
	int i;

	for (i = 0; i < r->nr; i++)
		if (!r->m[i].e->parent)
			return &r->m[i];
	return NULL;
}

/* The container's root, --root, over "/" of the copy; entered at the end. */
static int build_on_root(struct mnt_restore *r, struct rmount *root)
{
	root->fd = open_tree(AT_FDCWD, r->root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (root->fd < 0) {
		pr_perror("Can't use --root %s", r->root);
		return -1;
	}
	if (move_mount(root->fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH)) {
		pr_perror("Can't mount --root %s", r->root);
		return -1;
	}
	if (set_attrs(root) || propagate(root, NULL) || mnt_open_hidden_on(r, root))
		return -1;
	root->done = 1;
	if (make_all(r) || unbindable(r))
		return -1;
	if (fchdir(root->fd) || syscall(SYS_pivot_root, ".", ".") || umount2(".", MNT_DETACH) ||
	    chdir("/")) {
		pr_perror("Can't enter the restored root %s", r->root);
		return -1;
	}
	return 0;
}

/* The copy's mount @k for inherited mount @m: the same filesystem at the same place. */
static int twin(struct proc_mounts *now, const struct rmount *m, char *used)
{
	const MountEntry *e = m->e;
	const char *root = m->live ? m->live->root : e->root;
	const char *source = m->live ? m->live->source : e->source;
	int k;

	for (k = 0; k < now->nr; k++) {
		struct proc_mount *c = &now->m[k];

		if (!used[k] && !strcmp(c->mountpoint, e->mountpoint) &&
		    !strcmp(c->fstype, e->fstype) && !strcmp(c->root, root) &&
		    !strcmp(c->source, source))
			return k;
	}
	pr_err("Mount %u at %s (%s %s) came from the mount namespace this one is a copy of "
	       "(criu's, or its maker's parent's), which has no such mount any more", e->id,
	       e->mountpoint, e->fstype, e->source);
	return -1;
}

static uint64_t mnt_id_at(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) || !(sx.stx_mask & STATX_MNT_ID))
		return 0;
	return sx.stx_mnt_id;
}

/* Criu's mounts the tree had unmounted: gone again, top ones first. */
static int drop_others(struct proc_mounts *now, const char *used)
{
	struct proc_mount *p;
	int k, fd;

	for (k = 0; k < now->nr; k++) {
		for (p = proc_mount_by_id(now, now->m[k].parent); used[k] && p;
		     p = proc_mount_by_id(now, p->parent))
			if (!used[p - now->m]) {
				pr_err("Mount %s is gone from the tree's namespace, but %s on it is "
				       "not: not supported", p->mountpoint, now->m[k].mountpoint);
				return -1;
			}
	}
	for (k = now->nr - 1; k >= 0; k--) {
		p = proc_mount_by_id(now, now->m[k].parent);
		if (used[k] || (p && !used[p - now->m]))
			continue;	/* kept, or goes with the one it is on */
		fd = open(now->m[k].mountpoint, O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || mnt_id_at(fd) != (uint64_t)now->m[k].id ||
		    umount2(now->m[k].mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW)) {
			pr_perror("Can't unmount %s (%s), which the tree had unmounted",
				  now->m[k].mountpoint, now->m[k].fstype);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* An inherited mount: its root, if no other mount hides it; as dumped. */
static int adopt(struct rmount *m, struct proc_mount *c)
{
	m->fd = open(c->mountpoint, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (m->fd >= 0 && mnt_id_at(m->fd) != (uint64_t)c->id) {
		close(m->fd);
		m->fd = -1;	/* hidden: its files are opened by path */
		return 0;
	}
	if (m->fd < 0) {
		pr_perror("Can't open mount %s", c->mountpoint);
		return -1;
	}
	m->done = 1;
	if (mnt_attrs_of(c->mnt_opts) != m->e->attrs && set_attrs(m))
		return -1;
	return propagate(m, NULL);
}

/* unshare -m: criu's own tree again, less what the tree unmounted, plus its own. */
static int build_inherited(struct mnt_restore *r)
{
	struct proc_mounts now;
	char *used = NULL;
	int i, k, ret = -1;

	if (mnt_read_mountinfo(0, &now))
		return -1;
	used = xzalloc(now.nr + 1);
	if (!used)
		goto out;
	for (i = 0; i < r->nr; i++) {
		if (r->m[i].e->kind != MOUNT_KIND__MNT_INHERITED)
			continue;
		k = twin(&now, &r->m[i], used);
		if (k < 0)
			goto out;
		used[k] = 1;
	}
	if (drop_others(&now, used))
		goto out;
	memset(used, 0, now.nr);
	for (i = 0; i < r->nr; i++) {
		if (r->m[i].e->kind != MOUNT_KIND__MNT_INHERITED)
			continue;
		k = twin(&now, &r->m[i], used);
		used[k] = 1;
		if (adopt(&r->m[i], &now.m[k]))
			goto out;
		r->m[i].done = 1;
	}
	ret = make_all(r) || unbindable(r) ? -1 : 0;
out:
	free(used);
	proc_mounts_free(&now);
	return ret;
}

int mnt_build(struct mnt_restore *r)
{
	struct rmount *root = root_of(r);
	int i, ret;

	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) {
		pr_perror("Can't make the new mount namespace a slave of criu's");
		return -1;
	}
	for (i = 0; i < r->nr; i++)
		if (r->m[i].e->has_contents && r->m[i].e->contents)
			break;
	r->store = i < r->nr ? img_open_raw(r->dirfd, IMG_TMPFS_DATA, 0, 0) : -1;
	if (i < r->nr && r->store < 0)
		return -1;
	if (open_sources(r))
		return -1;
	if (root->e->kind == MOUNT_KIND__MNT_ROOT)
		ret = build_on_root(r, root);
	else
		ret = build_inherited(r);
	for (i = 0; i < r->nr; i++)
		if (r->ext_fd[i] >= 0)
			close(r->ext_fd[i]);
	if (r->store >= 0)
		close(r->store);
	r->store = -1;
	return ret;
}

uint32_t mnt_attrs_of(const char *o)
{
	uint32_t a = 0;

	if (proc_mount_has_opt(o, "ro"))
		a |= MOUNT_ATTR_RDONLY;
	if (proc_mount_has_opt(o, "nosuid"))
		a |= MOUNT_ATTR_NOSUID;
	if (proc_mount_has_opt(o, "nodev"))
		a |= MOUNT_ATTR_NODEV;
	if (proc_mount_has_opt(o, "noexec"))
		a |= MOUNT_ATTR_NOEXEC;
	if (proc_mount_has_opt(o, "noatime"))
		a |= MOUNT_ATTR_NOATIME;
	else if (!proc_mount_has_opt(o, "relatime"))
		a |= MOUNT_ATTR_STRICTATIME;	/* the kernel shows no word for it */
	if (proc_mount_has_opt(o, "nodiratime"))
		a |= MOUNT_ATTR_NODIRATIME;
	if (proc_mount_has_opt(o, "nosymfollow"))
		a |= MNT_ATTR_NOSYMFOLLOW;
	return a;
}

const char *mnt_below(const char *mountpoint, const char *path)
{
	size_t n = strlen(mountpoint);

	if (!strcmp(mountpoint, "/"))
		return path + 1;
	if (strncmp(path, mountpoint, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] ? path + n + 1 : path + n;
}

int mnt_open_hidden_on(struct mnt_restore *r, struct rmount *m)
{
	struct open_how how = { .resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS };
	size_t i;

	for (i = 0; i < r->n_hidden; i++) {
		HiddenFile *h = r->hidden[i];

		if (h->mnt != m->e->id)
			continue;
		how.flags = (h->flags & ~(O_CREAT | O_TRUNC | O_EXCL)) | O_CLOEXEC | O_NOCTTY;
		/* an inotify watch's (O_PATH): openat2() takes no other flag with it */
		if (how.flags & O_PATH)
			how.flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
		r->hidden_fd[i] = syscall(SYS_openat2, m->fd, h->path, &how, sizeof(how));
		if (r->hidden_fd[i] < 0) {
			pr_perror("Can't open %s on mount %u at %s, which another mount will hide",
				  h->path, m->e->id, m->e->mountpoint);
			return -1;
		}
	}
	return 0;
}
