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

static const char *const kinds[] = {
	"net",		/* parts/net.c */
	"veth",		/* parts/net-link.c */
	"macvlan",	/* parts/net-link.c */
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

	if (!open || !(close = strchr(open, ']')) || close == open + 1 ||
	    close[1] != ':' || !close[2]) {
		snprintf(err, len, "--external %s: not KIND[ID]:VALUE", arg);
		return -1;
	}
	if (!kind_known(arg, open - arg)) {
		snprintf(err, len, "--external %s: unknown kind %.*s (criu knows net, veth, "
			 "macvlan)", arg, (int)(open - arg), arg);
		return -1;
	}
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
