// SPDX-License-Identifier: GPL-2.0
/*
 * --external and --inherit-fd: CRIU's syntax, checked here, looked up by
 * the part that owns each kind. Only the kinds some part implements are
 * accepted: an external resource criu would not know what to do with is
 * an error, not a silent no-op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/external.h"
#include "core/util.h"

static const char *const kinds[] = {
	"net",		/* parts/ns-net.c */
	"veth",		/* parts/ns-net-link.c */
	"macvlan",	/* parts/ns-net-link.c */
	"mnt",		/* parts/ns-mnt.c */
	"unix",		/* parts/file-unix.c */
};

static int kind_known(const char *arg, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == n && !strncmp(arg, kinds[i], n))
			return 1;
	return 0;
}

int external_check(const char *arg, char *err, size_t len)
{
	const char *open = strchr(arg, '['), *close;

	int mnt = open && open - arg == 3 && !strncmp(arg, "mnt", 3);
	int unix_sk = open && open - arg == 4 && !strncmp(arg, "unix", 4);

	/* mnt[] alone, and mnt[ID] and unix[INO] without a value, are CRIU's too */
	if (!open || !(close = strchr(open, ']')) || (close == open + 1 && !mnt) ||
	    (close[1] && (close[1] != ':' || !close[2])) || (!close[1] && !mnt && !unix_sk)) {
		snprintf(err, len, "--external %s: not KIND[ID]:VALUE", arg);
		return -1;
	}
	if (!kind_known(arg, open - arg)) {
		snprintf(err, len, "--external %s: unknown kind %.*s (criu knows net, veth, "
			 "macvlan, mnt, unix)", arg, (int)(open - arg), arg);
		return -1;
	}
	return 0;
}

static char *from_mount_map(const char *arg, char *err, size_t len)
{
	const char *colon = strchr(arg, ':');
	char *s;

	if (!strcmp(arg, "auto"))
		return xstrdup("mnt[]");
	if (!colon || colon == arg || !colon[1]) {
		snprintf(err, len, "--ext-mount-map %s: not KEY:VALUE (or auto)", arg);
		return NULL;
	}
	if (asprintf(&s, "mnt[%.*s]%s", (int)(colon - arg), arg, colon) < 0)
		return NULL;
	return s;
}

int external_add(struct opts *o, const char *arg, int map, char *err, size_t len)
{
	char *s = map ? from_mount_map(arg, err, len) : NULL;
	const char **n;

	if (map && !s)
		return -1;
	if (!map && external_check(arg, err, len))
		return -1;
	if (!s)
		s = xstrdup(arg);
	n = s ? xrealloc(o->external, (o->nr_external + 1) * sizeof(*n)) : NULL;
	if (!n) {
		free(s);
		snprintf(err, len, "--external %s: out of memory", arg);
		return -1;
	}
	o->external = n;
	o->external[o->nr_external++] = s;
	return 0;
}

void external_free(struct opts *o)
{
	int i;

	for (i = 0; i < o->nr_external; i++)
		free((char *)o->external[i]);
	free(o->external);
	o->external = NULL;
	o->nr_external = 0;
}

int external_has(const struct opts *o, const char *kind, const char *id)
{
	char want[128];
	int i, n = snprintf(want, sizeof(want), "%s[%s]", kind, id);

	for (i = 0; n < (int)sizeof(want) && i < o->nr_external; i++)
		if (!strncmp(o->external[i], want, n) &&
		    (!o->external[i][n] || o->external[i][n] == ':'))
			return 1;
	return 0;
}

const char *external_lookup(const struct opts *o, const char *kind, const char *id)
{
	size_t k = strlen(kind), n = strlen(id);
	const char *e;
	int i;

	for (i = 0; i < o->nr_external; i++) {
		e = o->external[i];
		if (!strncmp(e, kind, k) && e[k] == '[' && !strncmp(e + k + 1, id, n) &&
		    e[k + 1 + n] == ']' && e[k + 2 + n] == ':')
			return e + k + 3 + n;
	}
	return NULL;
}

int inherit_fd_parse(const char *arg, struct inherit_fd *ifd, char *err, size_t len)
{
	char *end;
	long fd;

	if (strncmp(arg, "fd[", 3))
		goto bad;
	fd = strtol(arg + 3, &end, 10);
	if (end == arg + 3 || fd < 0 || fd > 1 << 30 || end[0] != ']' || end[1] != ':' ||
	    !end[2])
		goto bad;
	ifd->fd = fd;
	ifd->key = end + 2;
	return 0;
bad:
	snprintf(err, len, "--inherit-fd %s: not fd[N]:KEY", arg);
	return -1;
}

int inherit_fd_lookup(const struct opts *o, const char *key)
{
	int i;

	for (i = 0; i < o->nr_inherit_fds; i++)
		if (!strcmp(o->inherit_fds[i].key, key))
			return o->inherit_fds[i].fd;
	return -1;
}

int external_add_unix(struct opts *o, const char *list, char *err, size_t len)
{
	char ext[64];
	const char *p;
	size_t n;

	if (!list || !*list) {
		o->ext_unix_sk = 1;
		return 0;
	}
	for (p = list; *p; p += n + !!p[n]) {
		n = strcspn(p, ",");
		if (!n || n != strspn(p, "0123456789") || n > 20) {
			snprintf(err, len, "--ext-unix-sk %.100s: not a list of inodes", list);
			return -1;
		}
		snprintf(ext, sizeof(ext), "unix[%.*s]", (int)n, p);
		if (external_add(o, ext, 0, err, len))
			return -1;
	}
	return 0;
}
