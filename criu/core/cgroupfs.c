// SPDX-License-Identifier: GPL-2.0
/*
 * Reaching cgroup hierarchies from criu (cgroupfs.h). A mount that shows a
 * whole hierarchy is found in /proc/self/mountinfo; without one, criu makes
 * a detached mount of it (fsopen/fsmount, 5.2+): nothing appears in any
 * mount namespace and it goes with its last fd. The detached mount costs
 * about half a millisecond per hierarchy here, the lookup far less, so it
 * is the fallback only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/log.h"
#include "core/util.h"

const char *cgfs_name(const char *controllers)
{
	return *controllers ? controllers : "unified";
}

/* Super options of a v1 mount that are not controllers. */
static int mount_flag(const char *tok, size_t len)
{
	static const char *const flags[] = {
		"rw", "ro", "noprefix", "xattr", "clone_children", "cpuset_v2_mode",
		"favordynmods", "none",
	};
	size_t i;

	if (len > 14 && !strncmp(tok, "release_agent=", 14))
		return 1;
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		if (strlen(flags[i]) == len && !strncmp(tok, flags[i], len))
			return 1;
	return 0;
}

static int has_token(const char *list, const char *tok, size_t len)
{
	const char *p = list;
	size_t n;

	while (*p) {
		n = strcspn(p, ",");
		if (n == len && !strncmp(p, tok, len))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* The v1 super options @sopts name exactly the controllers @want. */
static int same_controllers(const char *sopts, const char *want)
{
	const char *p;
	int nr_want = 0, nr_have = 0;
	size_t n;

	for (p = want; *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		if (!has_token(sopts, p, n))
			return 0;
		nr_want++;
	}
	for (p = sopts; *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		nr_have += !mount_flag(p, n);
	}
	return nr_want == nr_have;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* A mount point of the whole hierarchy, malloc'ed; NULL when none. */
static char *find_mount(const char *controllers)
{
	char *buf = read_file(-1, "/proc/self/mountinfo", NULL), *line, *next, *f[10];
	char *found = NULL, *sep, *post;
	int i;

	for (line = buf; line && *line && !found; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		post = sep + 3;
		for (i = 0, f[0] = strtok(line, " "); f[i] && i < 4; f[++i] = strtok(NULL, " "))
			;
		if (i < 4)
			continue;
		f[5] = strtok(post, " ");	/* fstype, source, super options */
		f[6] = strtok(NULL, " ");
		f[7] = strtok(NULL, " ");
		if (!f[5] || !f[7] || strcmp(f[3], "/"))
			continue;
		if (*controllers ? !strcmp(f[5], "cgroup") && same_controllers(f[7], controllers) :
				   !strcmp(f[5], "cgroup2")) {
			unescape(f[4]);
			found = xstrdup(f[4]);
		}
	}
	free(buf);
	return found;
}

static int detached_mount(const char *controllers)
{
	char *copy = xstrdup(controllers), *tok, *save = NULL;
	int fd, mnt = -1;

	if (!copy)
		return -1;
	fd = fsopen(*controllers ? "cgroup" : "cgroup2", FSOPEN_CLOEXEC);
	if (fd < 0)
		goto out;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strncmp(tok, "name=", 5) ?
		    fsconfig(fd, FSCONFIG_SET_STRING, "name", tok + 5, 0) :
		    fsconfig(fd, FSCONFIG_SET_FLAG, tok, NULL, 0))
			goto out;
	if (!fsconfig(fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		mnt = fsmount(fd, FSMOUNT_CLOEXEC, 0);
out:
	if (fd >= 0)
		close(fd);
	free(copy);
	return mnt;
}

int cgfs_open(const char *controllers)
{
	char *dir = find_mount(controllers);
	int fd;

	if (dir) {
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			pr_perror("Can't open the %s cgroup hierarchy at %s",
				  cgfs_name(controllers), dir);
		free(dir);
		return fd;
	}
	fd = detached_mount(controllers);
	if (fd < 0)
		pr_perror("Can't mount the %s cgroup hierarchy", cgfs_name(controllers));
	else
		pr_info("The %s cgroup hierarchy is not mounted here: criu mounted it for "
			"itself", cgfs_name(controllers));
	return fd;
}

int cgfs_write(int dirfd, const char *file, const char *val)
{
	int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	err = errno;
	close(fd);
	errno = err;
	if (n < 0)
		return -1;
	return 0;
}

char *cgfs_read(int dirfd, const char *file)
{
	size_t len;
	char *buf;

	buf = read_file(dirfd, file, &len);
	if (buf && len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return buf;
}

static const char *const mode_names[] = {
	[CG_MODE_SOFT] = "soft", [CG_MODE_IGNORE] = "ignore", [CG_MODE_NONE] = "none",
	[CG_MODE_PROPS] = "props", [CG_MODE_FULL] = "full", [CG_MODE_STRICT] = "strict",
};

int cg_mode_parse(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -1;
}

const char *cg_mode_name(int mode)
{
	return mode >= 0 && mode < (int)ARRAY_SIZE(mode_names) ? mode_names[mode] : "?";
}

int cg_root_parse(char *arg, struct cg_root *r)
{
	char *colon = strchr(arg, ':'), *slash = strchr(arg, '/');

	r->ctrl = NULL;
	r->path = arg;
	if (colon && (!slash || colon < slash)) {
		*colon = '\0';
		r->ctrl = arg;
		r->path = colon + 1;
		if (!*r->ctrl)
			return -1;
	}
	return r->path[0] == '/' ? 0 : -1;
}

static int cg_root_names(const char *ctrl, const char *controllers)
{
	if (!*controllers)
		return !strcmp(ctrl, "unified");
	return has_token(controllers, ctrl, strlen(ctrl));
}

const char *cg_root_for(const struct opts *o, const char *controllers)
{
	const char *named = NULL, *any = NULL;
	int i;

	for (i = 0; i < o->nr_cg_roots; i++) {
		if (!o->cg_roots[i].ctrl)
			any = o->cg_roots[i].path;
		else if (cg_root_names(o->cg_roots[i].ctrl, controllers))
			named = o->cg_roots[i].path;
	}
	return named ? named : any;
}

/* ------------------------------------------------------- cgroup paths */

int cg_path_ok(const char *p, int absolute)
{
	const char *c = p;
	size_t n;

	if (absolute ? *p != '/' : *p == '/')
		return 0;
	if (absolute && !strcmp(p, "/"))
		return 1;
	c += absolute;
	if (!absolute && !*c)
		return 1;
	while (*c) {
		n = strcspn(c, "/");
		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += n;
		if (*c == '/' && !*++c)
			return 0;	/* a trailing slash */
	}
	return strlen(p) < 2048;
}

int cg_is_under(const char *path, const char *root)
{
	size_t len = strlen(root);

	if (!strcmp(root, "/"))
		return 1;
	return !strncmp(path, root, len) && (path[len] == '\0' || path[len] == '/');
}

const char *cg_rel(const char *path, const char *root)
{
	if (!strcmp(root, "/"))
		return path + 1;
	return path[strlen(root)] ? path + strlen(root) + 1 : "";
}

char *cg_join(const char *root, const char *rel)
{
	char *s;

	if (!*rel)
		return xstrdup(root);
	if (asprintf(&s, "%s/%s", strcmp(root, "/") ? root : "", rel) < 0)
		return NULL;
	return s;
}
