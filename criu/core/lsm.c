// SPDX-License-Identifier: GPL-2.0
/*
 * Which security module labels tasks here, and the forms of its labels.
 *
 * /proc/PID/attr/current belongs to the first of the modules that keep
 * task labels in the kernel's order of modules, which
 * /sys/kernel/security/lsm lists. Where securityfs is not mounted (a
 * container), each module's own traces say whether it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "core/lsm.h"

static const char *const known[] = { "selinux", "smack", "apparmor" };

static const char *known_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i]) == n && !strncmp(s, known[i], n))
			return known[i];
	return NULL;
}

static const char *from_securityfs(int *found)
{
	char *list = read_file(-1, "/sys/kernel/security/lsm", NULL), *p;
	const char *kind = NULL;
	size_t n;

	*found = list != NULL;
	for (p = list; p && *p && !kind; p += n + !!p[n]) {
		n = strcspn(p, ",\n");
		kind = known_name(p, n);
	}
	free(list);
	return kind;
}

static const char *from_traces(void)
{
	char *on;
	int yes;

	if (!access("/sys/fs/selinux/enforce", F_OK))
		return "selinux";
	if (!access("/sys/fs/smackfs/load2", F_OK))
		return "smack";
	on = read_file(-1, "/sys/module/apparmor/parameters/enabled", NULL);
	yes = on && on[0] == 'Y';
	free(on);
	return yes ? "apparmor" : NULL;
}

const char *lsm_active(void)
{
	static const char *kind;
	static int known_yet;
	int found;

	if (!known_yet) {
		kind = from_securityfs(&found);
		if (!found)
			kind = from_traces();
		known_yet = 1;
	}
	return kind;
}

int lsm_label_norm(const char *kind, char *label, size_t len)
{
	char *mode;
	size_t i;

	while (len && (label[len - 1] == '\n' || label[len - 1] == '\0'))
		len--;
	label[len] = '\0';
	for (i = 0; i < len; i++)
		if ((unsigned char)label[i] < 0x20 || label[i] == 0x7f)
			return -1;
	/* "profile (enforce)": the mode is the profile's, not the task's */
	mode = strrchr(label, ' ');
	if (!strcmp(kind, "apparmor") && mode && mode[1] == '(' && label[len - 1] == ')')
		*mode = '\0';
	return label[0] ? 0 : -1;
}

int lsm_profile_parse(const char *arg, const char **kind, const char **name)
{
	const char *colon = strchr(arg, ':');

	if (!colon || !colon[1])
		return -1;
	*kind = known_name(arg, colon - arg);
	*name = colon + 1;
	return *kind ? 0 : -1;
}

int lsm_set_value(const char *kind, const char *label, char *buf, size_t size)
{
	int n;

	/* AppArmor changes a running task's profile by this command */
	if (!strcmp(kind, "apparmor"))
		n = snprintf(buf, size, "changeprofile %s", label);
	else
		n = snprintf(buf, size, "%s", label);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

const char *lsm_mount_option(const char *context, const char *key, const char *val)
{
	if (!context || !val || strcmp(key, "context"))
		return val;
	return context;
}
