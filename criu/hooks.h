/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_HOOKS_H
#define CRIU_HOOKS_H

#include <sys/types.h>

/*
 * The points where criu stops and asks: CRIU's notifications (RPC, with
 * notify_scripts) and action scripts (--action-script), by CRIU's names,
 * in the order the drivers reach them. Each is answered before criu goes
 * on; a "no" fails the dump or the restore, which then undoes what it did.
 */
enum hook {
	HOOK_PRE_DUMP,
	HOOK_NETWORK_LOCK,	/* the tree has a network namespace of its own */
	HOOK_POST_DUMP,		/* images written and synced, the tree still frozen */
	HOOK_NETWORK_UNLOCK,	/* dump: after a lock, failed or left running; restore */
	HOOK_PRE_RESTORE,
	HOOK_SETUP_NS,		/* the tree has namespaces of its own; pid: the root */
	HOOK_POST_SETUP_NS,
	HOOK_ORPHAN_PTS_MASTER,	/* fd: a pty master nobody in the tree holds */
	HOOK_POST_RESTORE,	/* everything restored, nothing runs yet; pid: the root */
	HOOK_PRE_RESUME,
	HOOK_POST_RESUME,	/* the tree runs: a "no" is only logged */
	HOOK_NR,
};

/* CRIU's name of the action ("pre-dump", "setup-namespaces"...). */
const char *hook_name(enum hook h);

/*
 * Whoever else must agree (the RPC client): called for every hook, before
 * the action scripts; returns 0 to go on. @pid is the tree's root, 0 when
 * not known yet; @fd an fd to hand over, or -1.
 */
typedef int (*hook_notifier)(void *arg, enum hook h, pid_t pid, int fd);
void hooks_set_notifier(hook_notifier fn, void *arg);

/* --action-script PATH: run with CRTOOLS_SCRIPT_ACTION and friends. */
int hooks_add_script(const char *path);
/* CRTOOLS_IMAGE_DIR for the scripts (resolved once, while criu runs). */
void hooks_set_images_dir(const char *dir);
/* Whether anyone listens: a driver skips work only a listener needs. */
int hooks_wanted(void);

/* 0: everyone agreed; -1 (logged, naming the hook and who said no). */
int hook_run(enum hook h, pid_t pid, int fd);

#endif
