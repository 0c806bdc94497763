// SPDX-License-Identifier: GPL-2.0
/* criu check: does this kernel (and do we) have what dump and restore use? */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "core/caps.h"
#include "core/log.h"
#include "core/util.h"
#include "parts/mm-lazy.h"
#include "parts/mm-track.h"
#include "parts/ns-net-lock.h"
#include "proc/proc.h"
#include "task/ptrace.h"

/* PAGEMAP_SCAN: Linux 6.7; PR_TIMER_CREATE_RESTORE_IDS: Linux 6.16. */
#define PAGEMAP_SCAN_NR			_IOWR('f', 16, char[96])
#define PR_TIMER_CREATE_RESTORE_IDS	77
#define PR_TIMER_CREATE_RESTORE_IDS_GET	2

struct feature {
	const char *name;
	int required;
	int (*probe)(void);
};

static int probe_timens(void)
{
	return access("/proc/self/timens_offsets", R_OK) == 0;
}

static int probe_cgroupns(void)
{
	return access("/proc/self/ns/cgroup", F_OK) == 0;
}

static int probe_userns(void)
{
	return access("/proc/self/ns/user", F_OK) == 0;
}

static int probe_kcmp(void)
{
	return syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0) >= 0 || errno != ENOSYS;
}

static int probe_mm_map(void)
{
	unsigned int size = 0;

	return prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, &size, 0, 0) == 0 && size;
}

static int probe_vm_readv(void)
{
	char a = 1, b = 0;
	struct iovec l = { &b, 1 }, r = { &a, 1 };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 1 && b == 1;
}

/*
 * aio rings are made anew and moved where they were (parts/mm-aio.c): the
 * kernel must follow a ring moved with mremap (aio_ring_mremap, Linux 3.19).
 */
static int probe_aio_remap(void)
{
	unsigned long ctx = 0, to, len;
	struct timespec zero = { 0 };
	void *hole;
	int ok;

	if (syscall(SYS_io_setup, 1, &ctx))
		return 0;
	/* the header's nr, events of 32 bytes after its 32 */
	len = (32 + 32UL * ((unsigned int *)ctx)[1] + PAGE_SIZE - 1) & PAGE_MASK;
	hole = mmap(NULL, 4 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	to = hole == MAP_FAILED ? 0 : (unsigned long)hole + len;
	ok = to && mremap((void *)ctx, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			  (void *)to) == (void *)to &&
	     syscall(SYS_io_getevents, to, 0, 1, NULL, &zero) == 0;
	syscall(SYS_io_destroy, ok ? to : ctx);
	if (hole != MAP_FAILED)
		munmap(hole, 4 * len);
	return ok;
}

static int probe_clone3(void)
{
	/* an invalid size is refused with EINVAL only where clone3 exists */
	return syscall(SYS_clone3, NULL, 0) < 0 && errno == EINVAL;
}

static int probe_pagemap_scan(void)
{
	char arg[96] = { 0 };
	int fd = open("/proc/self/pagemap", O_RDONLY), ret;

	if (fd < 0)
		return 0;
	ret = ioctl(fd, PAGEMAP_SCAN_NR, arg);
	close(fd);
	return ret == 0 || errno != ENOTTY;
}

static int probe_rseq_conf(void)
{
	return access("/proc/self/status", R_OK) == 0;	/* probed by ptrace at dump */
}

static int probe_timer_ids(void)
{
	return prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_GET, 0, 0, 0) >= 0;
}

static int probe_cap_ptrace(void)
{
	return cap_have(CAP_SYS_PTRACE);
}

static int probe_cap_cr(void)
{
	return cap_have(CAP_CHECKPOINT_RESTORE) || cap_have(CAP_SYS_ADMIN);
}

/* The primitives of the kernel/ patch series (see kernel/README.md). */
static int probe_start_time(void)
{
	return access("/proc/self/start_time", F_OK) == 0;
}

static int probe_cpu_ns(void)
{
	return access("/proc/self/ns/cpu", F_OK) == 0;
}

static int probe_mem_track(void)
{
	const char *why;

	return mtrack_supported(&why);
}

static const struct feature features[] = {
	{ "time namespaces", 1, probe_timens },
	{ "clone3 with set_tid", 1, probe_clone3 },
	{ "prctl(PR_SET_MM_MAP)", 1, probe_mm_map },
	{ "process_vm_readv", 1, probe_vm_readv },
	{ "kcmp", 1, probe_kcmp },
	{ "CAP_SYS_PTRACE", 1, probe_cap_ptrace },
	{ "CAP_CHECKPOINT_RESTORE", 1, probe_cap_cr },
	{ "PAGEMAP_SCAN (6.7+, else pagemap is read)", 0, probe_pagemap_scan },
	{ "userfaultfd WP_ASYNC (6.7+, for pre-dump)", 0, probe_mem_track },
	{ "PR_TIMER_CREATE_RESTORE_IDS (6.16+)", 0, probe_timer_ids },
	{ "/proc", 1, probe_rseq_conf },
	{ "start time restore (kernel/ patches)", 0, probe_start_time },
	{ "CPU namespaces (kernel/ patches)", 0, probe_cpu_ns },
};

static int probe_seccomp(void)
{
	int err;

	return ptrace_seccomp_probe(&err) == 1;
}

static int probe_pidfd(void)
{
	int fd = syscall(SYS_pidfd_open, getpid(), 0), dup, ok;

	if (fd < 0)
		return 0;
	/* a copy of the pidfd itself, taken through it */
	dup = syscall(SYS_pidfd_getfd, fd, fd, 0);
	ok = dup >= 0 || errno != ENOSYS;
	if (dup >= 0)
		close(dup);
	close(fd);
	return ok;
}

static int probe_openat2(void)
{
	return syscall(SYS_openat2, AT_FDCWD, NULL, NULL, 0) < 0 && errno != ENOSYS;
}

/* the audit loginuid, which task_props saves and sets again */
static int probe_loginuid(void)
{
	return access("/proc/self/loginuid", F_OK) == 0;
}

/* network namespaces: RTM_GETNSID, IFLA_LINK_NETNSID, a new link's ifindex */
static int probe_netns(void)
{
	return access("/proc/self/ns/net", F_OK) == 0;
}

/* the lock's table is made over nfnetlink: nf_tables must answer */
static int probe_nftables(void)
{
	struct net_who w = { getpid(), 0 };

	return net_nft_has_tables(&w) >= 0;
}

static int probe_ipt_legacy(void)
{
	return access("/proc/net/ip_tables_names", F_OK) == 0 &&
	       (access("/usr/sbin/iptables-legacy-restore", X_OK) == 0 ||
		access("/sbin/iptables-legacy-restore", X_OK) == 0);
}

static int probe_fdinfo_mnt_id(void)
{
	char *buf = read_file(-1, "/proc/self/fdinfo/0", NULL);
	int ok = buf && strstr(buf, "mnt_id:");

	free(buf);
	return ok;
}

/* The dump finds file locks in the fdinfo of the fds that hold them. */
static int probe_fdinfo_lock(void)
{
	char path[64], *buf;
	int fd = syscall(SYS_memfd_create, "criu-check-lock", MFD_CLOEXEC), ok;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf = flock(fd, LOCK_EX) ? NULL : read_file(-1, path, NULL);
	ok = buf && strstr(buf, "lock:\t") && strstr(buf, "FLOCK");
	free(buf);
	close(fd);
	return ok;
}

/*
 * `criu check --feature NAME`, by CRIU's names: yes only when the
 * checkpoint/restore the name stands for works with this criu on this
 * kernel. A kernel feature criu does not use yet says no, with why.
 */
static const struct cr_feature {
	const char *name;
	int (*probe)(void);	/* NULL: not implemented in criu */
	const char *why;	/* when the answer is no */
	int (*probe_why)(const char **why);	/* instead: a probe that says why not */
} cr_features[] = {
	{ "mnt_id", probe_fdinfo_mnt_id, "the kernel shows no mnt_id in fdinfo" },
	/* pre-dump --track-mem: userfaultfd WP_ASYNC and PAGEMAP_SCAN (parts/mm-track.c) */
	{ "mem_dirty_track", NULL, NULL, mtrack_supported },
	{ "aio_remap", probe_aio_remap, "the kernel can't move an aio ring with mremap" },
	{ "timerfd", probe_vm_readv, "timerfds need process_vm_readv" },
	{ "tun", NULL, "tun devices are not dumped" },
	{ "tun_ns", NULL, "tun devices are not dumped" },
	{ "userns", probe_userns, "the kernel has no user namespaces" },
	{ "fdinfo_lock", probe_fdinfo_lock, "the kernel shows no file locks in fdinfo" },
	{ "seccomp_suspend", probe_seccomp, "the kernel refuses PTRACE_O_SUSPEND_SECCOMP" },
	{ "seccomp_filters", probe_seccomp, "the kernel refuses PTRACE_O_SUSPEND_SECCOMP" },
	{ "loginuid", probe_loginuid, "the kernel has no audit loginuid" },
	{ "cgroupns", probe_cgroupns, "the kernel has no cgroup namespaces" },
	{ "autofs", NULL, "autofs mounts are not supported" },
	{ "tcp_half_closed", NULL, "TCP connections are not dumped" },
	{ "compat_cr", NULL, "32-bit tasks are not supported" },
	{ "uffd", lazy_supported, "the kernel's userfaultfd lacks the fork, remap, remove and "
	  "unmap events (or userfaultfd is not allowed)" },
	{ "uffd-noncoop", lazy_supported, "the kernel's userfaultfd lacks the fork, remap, "
	  "remove and unmap events (or userfaultfd is not allowed)" },
	{ "lazy_pages", lazy_supported, "the kernel's userfaultfd lacks the fork, remap, "
	  "remove and unmap events (or userfaultfd is not allowed)" },
	{ "can_map_vdso", probe_mm_map, "the vDSO is moved with mremap and PR_SET_MM_MAP" },
	{ "sk_ns", NULL, "network sockets are not dumped" },
	{ "sk_unix_file", NULL, "unix sockets bound to files are not dumped" },
	{ "net_diag_raw", NULL, "raw sockets are not dumped" },
	{ "nsid", probe_netns, "the kernel has no network namespaces" },
	{ "link_nsid", probe_netns, "the kernel has no network namespaces" },
	{ "kcmp_epoll", probe_kcmp, "kcmp is missing" },
	{ "timens", probe_timens, "the kernel has no time namespaces" },
	{ "external_net_ns", probe_netns, "the kernel has no network namespaces" },
	{ "clone3_set_tid", probe_clone3, "the kernel has no clone3 set_tid" },
	{ "newifindex", probe_netns, "the kernel has no network namespaces" },
	{ "nftables", probe_nftables, "nf_tables does not answer (for --network-lock nftables)" },
	{ "has_ipt_legacy", probe_ipt_legacy, "no legacy iptables (iptables-legacy-restore and "
	  "the kernel's ip_tables)" },
	{ "pidfd_store", NULL, "the pidfd store serves iterative pre-dumps, not implemented" },
	{ "ns_pid", probe_rseq_conf, "/proc is missing" },
	{ "apparmor_stacking", NULL, "AppArmor policy namespaces (stacked profiles) are not "
	  "restored, only a task's own profile" },
	{ "network_lock_nftables", probe_nftables, "nf_tables does not answer" },
	{ "sockopt_buf_lock", NULL, "TCP connections are not dumped" },
	{ "memfd_hugetlb", NULL, "hugetlb memfds are not dumped" },
	{ "move_mount_set_group", NULL, "mount namespaces are not supported" },
	{ "openat2", probe_openat2, "the kernel has no openat2" },
	{ "get_rseq_conf", probe_rseq_conf, "/proc is missing" },
	{ "pagemap_scan", probe_pagemap_scan, "the kernel has no PAGEMAP_SCAN (6.7+)" },
	{ "timer_cr_ids", probe_timer_ids, "the kernel has no PR_TIMER_CREATE_RESTORE_IDS" },
	{ "pidfd_getfd", probe_pidfd, "the kernel has no pidfd_getfd" },
};

int check_feature(const char *name, const char **why)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cr_features); i++) {
		if (strcmp(cr_features[i].name, name))
			continue;
		*why = cr_features[i].why;
		if (cr_features[i].probe_why)
			return cr_features[i].probe_why(why);
		return cr_features[i].probe && cr_features[i].probe();
	}
	*why = "no such feature";
	return -1;
}

static int check_one(const char *name)
{
	char known[1024], *p = known;
	const char *why;
	size_t i;

	switch (check_feature(name, &why)) {
	case 1:
		printf("%s is supported\n", name);
		return 0;
	case 0:
		pr_err("Feature %s is not supported: %s", name, why);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(cr_features) && p < known + sizeof(known); i++)
		p += snprintf(p, known + sizeof(known) - p, "%s%s", i ? " " : "",
			      cr_features[i].name);
	pr_err("Unknown feature %s (CRIU's names: %s)", name, known);
	return -1;
}

int cr_check(const struct opts *o)
{
	size_t i;
	int ok, bad = 0;

	if (o->feature)
		return check_one(o->feature);
	for (i = 0; i < ARRAY_SIZE(features); i++) {
		ok = features[i].probe();
		printf("%-45s %s\n", features[i].name, ok ? "yes" :
		       features[i].required ? "MISSING" : "no");
		if (!ok && features[i].required) {
			pr_err("The kernel or criu's privileges lack %s", features[i].name);
			bad = 1;
		}
	}
	if (bad)
		return -1;
	printf("Looks good.\n");
	return 0;
}

/*
 * Whether criu may trace task @pid without CAP_SYS_PTRACE: the kernel lets
 * a tracer whose real ids are all of the task's, who holds every capability
 * the task may use, and only while the task is dumpable (/proc/PID is then
 * the task's, else root's).
 */
static int traceable(pid_t pid, const struct proc_status *st)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	char path[32];
	struct stat pst;
	int i;

	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs))
		return 0;
	for (i = 0; i < 3; i++)
		if (st->uid[i] != r || st->gid[i] != gr)
			return 0;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &pst) || pst.st_uid != st->uid[1])
		return 0;
	return !(st->cap_prm & ~caps_permitted());
}

/* "root" for someone else, what is missing for root itself. */
static int lacking(const char *cmd, const char *caps)
{
	if (geteuid())
		pr_err("%s needs root: criu runs as uid %u, without %s", cmd, geteuid(), caps);
	else
		pr_err("%s needs %s, which criu runs without", cmd, caps);
	return -1;
}

static int check_dump_privileges(pid_t pid)
{
	int cr = cap_have(CAP_CHECKPOINT_RESTORE) || cap_have(CAP_SYS_ADMIN);
	int trace = cap_have(CAP_SYS_PTRACE);
	char what[256], ptr[64] = "";
	struct proc_status st;

	/* no such task: the dump says so */
	if (!trace && !proc_read_status(pid, &st)) {
		trace = traceable(pid, &st);
		snprintf(ptr, sizeof(ptr), "CAP_SYS_PTRACE (to trace task %d of uid %u)",
			 pid, st.uid[1]);
		proc_status_free(&st);
	} else {
		trace = 1;
	}
	if (trace && cr)
		return 0;
	snprintf(what, sizeof(what), "%s%s%s", trace ? "" : ptr, trace || cr ? "" : " and ",
		 cr ? "" : "CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN (to read the tasks' "
		 "mappings in /proc/PID/map_files)");
	return lacking("dump", what);
}

int check_privileges(const struct opts *o, const char *cmd)
{
	if (!strcmp(cmd, "dump"))
		return check_dump_privileges(o->pid);
	if (!strcmp(cmd, "restore") && !cap_have(CAP_SYS_ADMIN))
		return lacking("restore", "CAP_SYS_ADMIN (to create the time and pid "
			       "namespaces and give the tasks their pids with clone3)");
	return 0;
}
