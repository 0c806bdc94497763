// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/mountinfo: the mounts of the task's mount namespace that its
 * root reaches, as it sees them, in the order the kernel keeps them (since
 * 6.8, the order they were made in: the namespace is a tree sorted by the
 * mounts' unique ids).
 *
 * statmount()/listmount() (6.8+) give the same fields; what they add
 * (64-bit ids, the namespace's id) the dump has no use for, and a file
 * read once serves every kernel alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

/* Undoes the kernel's octal escapes (\040 for a space...) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* The next space-separated word of *@p, NUL-terminated in place; NULL at the end. */
static char *word(char **p)
{
	char *w = *p, *e;

	if (!w || !*w)
		return NULL;
	e = strchr(w, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = NULL;
	}
	return w;
}

/* shared:N, master:N, propagate_from:N, unbindable */
static int tag(struct proc_mount *m, const char *w)
{
	if (!strncmp(w, "shared:", 7))
		m->shared = atoi(w + 7);
	else if (!strncmp(w, "master:", 7))
		m->master = atoi(w + 7);
	else if (!strncmp(w, "propagate_from:", 15))
		m->propagate_from = atoi(w + 15);
	else if (!strcmp(w, "unbindable"))
		m->unbindable = 1;
	return 0;	/* tags a newer kernel adds are not ours to refuse */
}

static int parse_line(char *line, struct proc_mount *m)
{
	char *p = line, *w, *fields[6];
	int i;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%d %d %u:%u", &m->id, &m->parent, &m->major, &m->minor) != 4)
		return -1;
	for (i = 0; i < 3; i++)
		word(&p);	/* id, parent, major:minor: read above */
	fields[0] = word(&p);	/* root */
	fields[1] = word(&p);	/* mount point */
	fields[2] = word(&p);	/* mount options */
	while ((w = word(&p)) && strcmp(w, "-"))
		tag(m, w);
	if (!w)
		return -1;
	fields[3] = word(&p);	/* fstype */
	fields[4] = word(&p);	/* source */
	fields[5] = p;		/* super options: the rest */
	for (i = 0; i < 6; i++)
		if (!fields[i])
			return -1;
	for (i = 0; i < 6; i++)
		unescape(fields[i]);
	m->root = fields[0];
	m->mountpoint = fields[1];
	m->mnt_opts = fields[2];
	m->fstype = fields[3];
	m->source = fields[4];
	m->sb_opts = fields[5];
	return 0;
}

int proc_parse_mountinfo(char *buf, struct proc_mounts *out)
{
	char *line = buf, *next;
	int nr = 0;

	out->m = NULL;
	out->nr = 0;
	out->buf = buf;
	for (; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (xgrow(out->m, nr))
			return -1;
		if (parse_line(line, &out->m[nr])) {
			pr_err("Can't parse mountinfo line %d", nr + 1);
			return -1;
		}
		nr++;
		out->nr = nr;
	}
	return 0;
}

int proc_read_mountinfo(pid_t pid, struct proc_mounts *out)
{
	char path[64], *buf;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	/* not proc_read(): the list keeps the text its strings point into */
	buf = proc_read_text(path);
	if (!buf)
		return -1;
	if (proc_parse_mountinfo(buf, out)) {
		proc_mounts_free(out);
		return -1;
	}
	return 0;
}

void proc_mounts_free(struct proc_mounts *ms)
{
	free(ms->m);
	free(ms->buf);
	ms->m = NULL;
	ms->buf = NULL;
	ms->nr = 0;
}

struct proc_mount *proc_mount_by_id(struct proc_mounts *ms, int id)
{
	int i;

	for (i = 0; i < ms->nr; i++)
		if (ms->m[i].id == id)
			return &ms->m[i];
	return NULL;
}

/* Is @word one of the comma-separated words of @opts? */
int proc_mount_has_opt(const char *opts, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	for (p = opts; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, len) && (p[len] == ',' || !p[len]))
			return 1;
	return 0;
}
