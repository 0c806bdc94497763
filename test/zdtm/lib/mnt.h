/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the mount tests (mnt_*.c): a mount namespace of the test's
 * own, and its lines of /proc/self/mountinfo.
 */
#ifndef ZDTM_MNT_H
#define ZDTM_MNT_H

/*
 * A mount namespace of the test's own, every mount in it private: what it
 * mounts lives only there (the host never sees it). skip() where the
 * kernel refuses.
 */
void mnt_enter_ns(void);

/* One line of /proc/self/mountinfo, unescaped. */
struct mnt_line {
	int id, parent;
	unsigned int major, minor;
	char root[512], mountpoint[512], opts[256], fstype[64], source[256], sb[512];
	int shared, master, unbindable;
};

/*
 * The @nth (0: the first) mount at absolute path @mountpoint, in
 * mountinfo's order (the order they were mounted in); 0, or -1 if none.
 */
int mnt_find(const char *mountpoint, int nth, struct mnt_line *out);
/* All lines whose mount point starts with @prefix, in order; their number. */
int mnt_list(const char *prefix, struct mnt_line *out, int max);
/* The mount a path is on (statx), or -1. */
int mnt_id_of_path(const char *path);
/* "/cwd/@name": an absolute path below the test's directory. */
const char *mnt_abs(const char *name);
/* "@base/@name", in one of a few rotating buffers (several in one call). */
const char *mnt_at(const char *base, const char *name);
/* fail()s unless @b (nb lines) are the mounts @a (na) were, below @base. */
void mnt_compare(const char *base, const struct mnt_line *a, int na,
		 const struct mnt_line *b, int nb);

/*
 * A child running @fn(ready) (it must not return), once it wrote a byte
 * on @ready; -1 if it could not start or died first.
 */
#include <sys/types.h>
pid_t mnt_fork_ready(void (*fn)(int ready));
/* @text into file @path, made or emptied first: 0, or -1 with errno. */
int mnt_write(const char *path, const char *text);
/* Is absolute path @path a mount point in our view? */
int mnt_is_mount(const char *path);
/* A child's SIGTERM: caught from now on; mnt_until_term() returns once it came. */
void mnt_catch_term(void);
void mnt_until_term(void);
/* SIGTERM to child @kid, reaped: its exit code (0: it passed), -1 if it can't be. */
int mnt_stop_child(pid_t kid);

#endif
