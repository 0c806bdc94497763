// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container's root and mounts, as runc's default spec makes them
 * (Debian's runc 1.1.5 `runc spec`; ARCHITECTURE.md section 9 lists it).
 *
 * Runs in the container's init, in its own mount namespace, whose first
 * step makes every mount a slave (or private) of the host's: nothing done
 * here can propagate back.  The rootfs directory is bind-mounted onto
 * itself, the OCI mounts go on it in the spec's order, then the device
 * nodes, pivot_root into it, the old root detached, and last the masked
 * and read-only paths, which name paths as the container sees them.
 *
 * The host side (rootfs_prepare_host) only creates missing mount points in
 * the rootfs directory, as runc does: inside a user namespace the
 * container's root may not write there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctr.h"

struct mnt_spec {
	const char *dst;
	const char *type;
	const char *src;
	unsigned long flags;
	const char *data;
};

#define MS_OCI_HARD (MS_NOSUID | MS_NOEXEC | MS_NODEV)

static const struct mnt_spec oci_mounts[] = {
	{ "/proc", "proc", "proc", 0, NULL },
	{ "/dev", "tmpfs", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k" },
	{ "/dev/pts", "devpts", "devpts", MS_NOSUID | MS_NOEXEC,
	  "newinstance,ptmxmode=0666,mode=0620,gid=5" },
	{ "/dev/shm", "tmpfs", "shm", MS_OCI_HARD, "mode=1777,size=65536k" },
	{ "/dev/mqueue", "mqueue", "mqueue", MS_OCI_HARD, NULL },
	{ "/sys", "sysfs", "sysfs", MS_OCI_HARD | MS_RDONLY, NULL },
};

static const struct {
	const char *name;
	unsigned int major, minor;
} devices[] = {
	{ "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 },
	{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
};

static const struct {
	const char *target, *name;
} dev_links[] = {
	{ "/proc/self/fd", "fd" },
	{ "/proc/self/fd/0", "stdin" },
	{ "/proc/self/fd/1", "stdout" },
	{ "/proc/self/fd/2", "stderr" },
	{ "pts/ptmx", "ptmx" },
};

static const char *const masked_paths[] = {
	"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
	"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug", "/sys/firmware", "/proc/scsi",
};

static const char *const readonly_paths[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

static int in_root(const struct ctr_config *c, const char *path, char *out, size_t size)
{
	if (snprintf(out, size, "%s%s", c->rootfs, path) >= (int)size) {
		ctr_err("path too long: %s%s", c->rootfs, path);
		return -1;
	}
	return 0;
}

int rootfs_prepare_host(const struct ctr_config *c)
{
	static const char *const points[] = { "/proc", "/dev", "/sys" };
	char path[4200];
	struct stat st;
	unsigned int i;
	int v;

	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		if (in_root(c, points[i], path, sizeof(path)) || mkdir_p(path, 0755))
			return -1;
	for (v = 0; v < c->nr_vols; v++) {
		if (stat(c->vols[v].src, &st)) {
			ctr_perr("volume %s", c->vols[v].src);
			return -1;
		}
		if (in_root(c, c->vols[v].dst, path, sizeof(path)))
			return -1;
		if (S_ISDIR(st.st_mode)) {
			if (mkdir_p(path, 0755))
				return -1;
		} else {
			*strrchr(path, '/') = '\0';
			if (mkdir_p(path, 0755) || in_root(c, c->vols[v].dst, path, sizeof(path)) ||
			    touch(path, 0644))
				return -1;
		}
	}
	return 0;
}

static int do_mount(const char *src, const char *dst, const char *type,
		    unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data) == 0)
		return 0;
	if (flags & MS_BIND)
		ctr_perr("bind %s on %s", src, dst);
	else
		ctr_perr("mount %s (%s%s%s) on %s", type ? type : "-", src ? src : "-",
			 data ? ", " : "", data ? data : "", dst);
	return -1;
}

/* Mount flags a bind remount must keep: in a user namespace they are
 * locked, and dropping one fails with EPERM. */
static unsigned long kept_flags(const char *path)
{
	static const struct {
		unsigned long st, ms;
	} map[] = {
		{ ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME },
	};
	unsigned long flags = 0;
	struct statvfs st;
	unsigned int i;

	if (statvfs(path, &st))
		return 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (st.f_flag & map[i].st)
			flags |= map[i].ms;
	return flags;
}

static int remount_ro(const char *path)
{
	return do_mount(NULL, path, NULL,
			MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(path), NULL);
}

/* Is gid 5 (tty, devpts' gid= option) mapped into the user namespace? */
static bool tty_gid_mapped(const struct ctr_config *c)
{
	const char *p = c->gid_map;
	unsigned long in, out, n;

	if (!c->userns)
		return true;
	while (sscanf(p, "%lu %lu %lu", &in, &out, &n) == 3) {
		if (in <= 5 && 5 < in + n)
			return true;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return false;
}

static int oci_mounts_setup(const struct ctr_config *c)
{
	char dst[4200];
	const char *data;
	unsigned int i;

	for (i = 0; i < sizeof(oci_mounts) / sizeof(oci_mounts[0]); i++) {
		const struct mnt_spec *m = &oci_mounts[i];

		data = m->data;
		if (!strcmp(m->type, "devpts") && !tty_gid_mapped(c))
			data = "newinstance,ptmxmode=0666,mode=0620";
		if (in_root(c, m->dst, dst, sizeof(dst)) || mkdir_p(dst, 0755) ||
		    do_mount(m->src, dst, m->type, m->flags, data))
			return -1;
	}
	return 0;
}

/* v1: a tmpfs holding one mount per hierarchy the host has under
 * /sys/fs/cgroup (a fresh mount shows the cgroup namespace's root); in a
 * user namespace, where v1 can't be mounted, binds of the container's
 * cgroups.  The unified v2 of a hybrid host goes at its place too. */
static int cgroup_v1_setup(const struct ctr_config *c, const struct ctr_host *h,
			   const char *base)
{
	char dst[4400], src[1100];
	const char *name;
	int i;

	if (do_mount("tmpfs", base, "tmpfs", MS_OCI_HARD, "mode=755"))
		return -1;
	for (i = 0; i < h->nr_hier; i++) {
		const struct ctr_hier *x = &h->hier[i];

		if (strncmp(x->mnt, "/sys/fs/cgroup/", 15))
			continue;
		name = x->mnt + 15;
		snprintf(dst, sizeof(dst), "%s/%s", base, name);
		if (mkdir_p(dst, 0755))
			return -1;
		if (x->v2) {
			if (do_mount("cgroup", dst, "cgroup2", MS_OCI_HARD | MS_RDONLY, NULL))
				return -1;
		} else if (!c->userns) {
			if (do_mount("cgroup", dst, "cgroup", MS_OCI_HARD | MS_RDONLY, x->opts))
				return -1;
		} else {
			if (x->dir[0])
				snprintf(src, sizeof(src), "%s", x->dir);
			else
				snprintf(src, sizeof(src), "%s%s", x->mnt, x->own);
			if (do_mount(src, dst, NULL, MS_BIND | MS_REC, NULL) || remount_ro(dst))
				return -1;
		}
	}
	return do_mount(NULL, base, NULL, MS_REMOUNT | MS_OCI_HARD | MS_RDONLY, "mode=755");
}

static int cgroup_setup(const struct ctr_config *c, const struct ctr_host *h)
{
	enum ctr_cgfs mode = c->cgfs;
	char base[4200];

	if (mode == CGFS_NONE)
		return 0;
	if (mode == CGFS_AUTO)
		mode = cg_pure_v2() ? CGFS_V2 : CGFS_V1;
	if (in_root(c, "/sys/fs/cgroup", base, sizeof(base)))
		return -1;
	if (mode == CGFS_V2)
		return do_mount("cgroup", base, "cgroup2",
				MS_OCI_HARD | MS_RELATIME | MS_RDONLY, NULL);
	return cgroup_v1_setup(c, h, base);
}

static int volumes_setup(const struct ctr_config *c)
{
	char dst[4200];
	int i;

	for (i = 0; i < c->nr_vols; i++) {
		if (in_root(c, c->vols[i].dst, dst, sizeof(dst)) ||
		    do_mount(c->vols[i].src, dst, NULL, MS_BIND | MS_REC, NULL))
			return -1;
		if (c->vols[i].ro && remount_ro(dst))
			return -1;
	}
	return 0;
}

/* As root, the nodes are tmpfs contents made with mknod; a user namespace
 * may not make device nodes: the host's are bound on empty files. */
static int devices_setup(const struct ctr_config *c)
{
	char path[4200], host[64];
	unsigned int i;

	for (i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
		snprintf(path, sizeof(path), "%s/dev/%s", c->rootfs, devices[i].name);
		if (c->userns) {
			snprintf(host, sizeof(host), "/dev/%s", devices[i].name);
			if (touch(path, 0666) || do_mount(host, path, NULL, MS_BIND, NULL))
				return -1;
			continue;
		}
		if (mknod(path, S_IFCHR | 0666,
			  makedev(devices[i].major, devices[i].minor))) {
			ctr_perr("mknod /dev/%s", devices[i].name);
			return -1;
		}
		if (chmod(path, 0666)) {	/* past the umask */
			ctr_perr("chmod /dev/%s", devices[i].name);
			return -1;
		}
	}
	for (i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++) {
		snprintf(path, sizeof(path), "%s/dev/%s", c->rootfs, dev_links[i].name);
		if (symlink(dev_links[i].target, path)) {
			ctr_perr("symlink /dev/%s", dev_links[i].name);
			return -1;
		}
	}
	/* runc adds /dev/core where the kernel has /proc/kcore */
	snprintf(path, sizeof(path), "%s/dev/core", c->rootfs);
	if (access("/proc/kcore", F_OK) == 0 && symlink("/proc/kcore", path)) {
		ctr_perr("symlink /dev/core");
		return -1;
	}
	return 0;
}

/* pivot_root(".", "."): the old root ends up stacked on the new one, and
 * is detached at once; as a slave its unmount can't reach the host. */
static int enter_root(const char *root)
{
	if (chdir(root)) {
		ctr_perr("chdir %s", root);
		return -1;
	}
	if (syscall(SYS_pivot_root, ".", ".")) {
		ctr_perr("pivot_root into %s", root);
		return -1;
	}
	if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) || umount2(".", MNT_DETACH)) {
		ctr_perr("detach the old root");
		return -1;
	}
	if (chdir("/")) {
		ctr_perr("chdir /");
		return -1;
	}
	return 0;
}

/* /dev/null over files, a read-only tmpfs over directories. */
static int mask_paths(void)
{
	struct stat st;
	unsigned int i;
	const char *p;
	int ret;

	for (i = 0; i < sizeof(masked_paths) / sizeof(masked_paths[0]); i++) {
		p = masked_paths[i];
		if (stat(p, &st))
			continue;	/* this kernel has no such thing */
		if (S_ISDIR(st.st_mode))
			ret = do_mount("tmpfs", p, "tmpfs", MS_RDONLY, NULL);
		else
			ret = do_mount("/dev/null", p, NULL, MS_BIND, NULL);
		if (ret)
			return -1;
	}
	return 0;
}

static int readonly_setup(void)
{
	unsigned int i;
	const char *p;

	for (i = 0; i < sizeof(readonly_paths) / sizeof(readonly_paths[0]); i++) {
		p = readonly_paths[i];
		if (access(p, F_OK))
			continue;
		if (do_mount(p, p, NULL, MS_BIND | MS_REC, NULL) || remount_ro(p))
			return -1;
	}
	return 0;
}

int rootfs_setup(const struct ctr_config *c, const struct ctr_host *h)
{
	if (mount(NULL, "/", NULL, MS_REC | c->propagation, NULL)) {
		ctr_perr("make / %s in the container's mount namespace",
			 c->propagation == MS_PRIVATE ? "private" : "a slave");
		return -1;
	}
	if (mount(c->rootfs, c->rootfs, NULL, MS_BIND | MS_REC, NULL)) {
		ctr_perr("bind the rootfs %s on itself%s", c->rootfs,
			 c->userns && errno == EACCES ? " (with --userns, the rootfs and every "
			 "directory above it must be searchable by the mapped root)" : "");
		return -1;
	}
	if (oci_mounts_setup(c) || cgroup_setup(c, h) || volumes_setup(c) ||
	    devices_setup(c) || enter_root(c->rootfs) || mask_paths() || readonly_setup())
		return -1;
	return 0;
}

/* Last: a read-only root (runc's root.readonly) once everything is on it. */
int rootfs_finish(const struct ctr_config *c)
{
	if (!c->readonly)
		return 0;
	return remount_ro("/");
}
