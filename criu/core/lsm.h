/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_LSM_H
#define CRIU_CORE_LSM_H

#include <stddef.h>

/*
 * Linux security modules that label tasks (AppArmor, SELinux, Smack): which
 * one this machine runs, and the labels' forms. No logging here: callers
 * say which task and option a failure is about.
 */

/*
 * The module that owns /proc/PID/attr/current on this machine ("apparmor",
 * "selinux" or "smack"), or NULL when none does. Read once.
 */
const char *lsm_active(void);
/*
 * A label as /proc/PID/attr/current shows it, made in place the value that
 * sets it again: the trailing newline or NUL dropped, and for AppArmor the
 * " (enforce)"-style mode, which the profile itself carries. -1 when
 * nothing is left or a byte can't be in a label.
 */
int lsm_label_norm(const char *kind, char *label, size_t len);
/*
 * CRIU's --lsm-profile TYPE:NAME. *kind points to a constant of the known
 * modules' names, *name into @arg. -1 when TYPE is unknown or NAME empty.
 */
int lsm_profile_parse(const char *arg, const char **kind, const char **name);
/* What restore writes to /proc/thread-self/attr/current for @label. */
int lsm_set_value(const char *kind, const char *label, char *buf, size_t size);

/*
 * The value a mount option @key=@val gets at restore: @context
 * (--lsm-mount-context, or NULL) in place of SELinux's context=, @val
 * itself otherwise.
 */
const char *lsm_mount_option(const char *context, const char *key, const char *val);

#endif
