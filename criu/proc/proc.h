/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PROC_PROC_H
#define CRIU_PROC_PROC_H

/*
 * Parsers for /proc/PID files. Each fills a plain struct and knows nothing
 * about images or ptrace. Functions taking a buffer are the parsers proper
 * (unit tested); the ones taking a pid read the file first.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

/*
 * Reads /proc file @path and hands its text to @parse(text, ...): what
 * the parser returns, or -1 after "Can't read PATH" (errno), or after
 * "Can't parse PATH" when the parser returned less than 0. The text is
 * the parser's to cut up and is freed after it. Every proc_read_*() and
 * proc_list_children() is one.
 */
#define proc_read(path, parse, ...)					\
	({								\
		char *__text = proc_read_text(path);			\
		int __ret = -1;						\
									\
		if (__text) {						\
			__ret = (parse)(__text, __VA_ARGS__);		\
			if (__ret < 0)					\
				proc_parse_failed(path);		\
			free(__text);					\
		}							\
		__ret;							\
	})
char *proc_read_text(const char *path);
void proc_parse_failed(const char *path);

/* VmFlags from smaps that restore must reproduce. */
#define VMF_GROWSDOWN	(1u << 0)	/* gd */
#define VMF_DONTCOPY	(1u << 1)	/* dc */
#define VMF_DONTEXPAND	(1u << 2)	/* de */
#define VMF_DONTDUMP	(1u << 3)	/* dd */
#define VMF_HUGEPAGE	(1u << 4)	/* hg */
#define VMF_NOHUGEPAGE	(1u << 5)	/* nh */
#define VMF_MERGEABLE	(1u << 6)	/* mg */
#define VMF_WIPEONFORK	(1u << 7)	/* wf */
#define VMF_LOCKED	(1u << 8)	/* lo */
#define VMF_SHARED	(1u << 9)	/* sh */
#define VMF_MAYREAD	(1u << 10)	/* mr */
#define VMF_IO		(1u << 11)	/* io */
#define VMF_PFNMAP	(1u << 12)	/* pf */
#define VMF_SEALED	(1u << 13)	/* sl */
#define VMF_MAYWRITE	(1u << 14)	/* mw */
#define VMF_LOCKONFAULT	(1u << 15)	/* lf: mlock2(MLOCK_ONFAULT), MCL_ONFAULT */
#define VMF_UFFD	(1u << 16)	/* um, ui: registered with a userfaultfd */
#define VMF_HUGETLB	(1u << 17)	/* ht */
#define VMF_UFFD_WP	(1u << 18)	/* uw: registered for write-protection */

struct proc_vma {
	uint64_t start, end;
	uint64_t pgoff;
	unsigned int prot;	/* PROT_* */
	int shared;		/* 's' in the perms column */
	unsigned int dev_major, dev_minor;
	uint64_t ino;
	unsigned int vmflags;	/* VMF_* (only when parsed from smaps) */
	int pkey;		/* smaps' ProtectionKey (pkey_mprotect()); 0: none */
	unsigned int page_kb;	/* smaps' KernelPageSize (hugetlb: its huge page); 0: not read */
	char *path;		/* NULL for anonymous; "[heap]" etc. for special */
};

struct proc_maps {
	struct proc_vma *vma;
	int nr;
};

int proc_parse_maps(char *buf, struct proc_maps *maps);
int proc_read_maps(pid_t pid, int smaps, struct proc_maps *maps);
void proc_maps_free(struct proc_maps *maps);

struct proc_status {
	char name[64];
	int tgid, pid, ppid, tracer;
	unsigned int uid[4], gid[4];	/* real, effective, saved, fs */
	unsigned int *groups;
	int ngroups;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	uint64_t sig_pnd, shd_pnd, sig_blk, sig_ign, sig_cgt;
	int64_t sigq_used, sigq_max;	/* SigQ: its user's queued signals, RLIMIT_SIGPENDING */
	int threads;
	int umask;		/* -1 when the kernel does not show it */
	int no_new_privs;
	int seccomp;
	char state;
	/*
	 * The last value of NStgid, NSpid, NSpgid, NSsid: the ids in the task's
	 * own pid namespace (0: that group or session is outside it);
	 * ns_levels counts the namespaces from /proc's down to the task's.
	 * Without those lines (old kernels): tgid and pid, one level.
	 */
	int ns_tgid, ns_pid, ns_pgid, ns_sid, ns_levels;
};

int proc_parse_status(char *buf, struct proc_status *st);
int proc_read_status(pid_t pid, struct proc_status *st);
/*
 * Task or thread @pid (criu's view) as its own pid namespace sees it, as
 * images record it (dtask.ns_pid has it for the tasks); 0 on error.
 */
pid_t proc_ns_pid(pid_t pid);
void proc_status_free(struct proc_status *st);

struct proc_stat {
	int pid;
	char comm[64];
	char state;
	int ppid, pgid, sid;
	long priority, nice;
	long num_threads;
	uint64_t starttime;
	uint64_t start_code, end_code, start_stack;
	uint64_t start_data, end_data, start_brk;
	uint64_t arg_start, arg_end, env_start, env_end;
	unsigned int rt_priority, policy;
	int exit_code;
};

int proc_parse_stat(const char *buf, struct proc_stat *st);
int proc_read_stat(pid_t pid, pid_t tid, struct proc_stat *st);

struct proc_rlimit {
	int resource;
	uint64_t cur, max;	/* RLIM_INFINITY for "unlimited" */
};

/* Fills lim[RLIM_NLIMITS]; returns the number found or -1. */
int proc_parse_limits(const char *buf, struct proc_rlimit *lim, int nr);
int proc_read_limits(pid_t pid, struct proc_rlimit *lim, int nr);

struct proc_fdinfo {
	uint64_t pos;
	unsigned int flags;	/* O_* as the kernel shows them, octal */
	int mnt_id;
};

int proc_parse_fdinfo(const char *buf, struct proc_fdinfo *fi);
int proc_read_fdinfo(pid_t pid, int fd, struct proc_fdinfo *fi);
/* The value after "@key" (e.g. "eventfd-count:") in an fdinfo text, or NULL. */
const char *proc_fdinfo_field(const char *fdinfo, const char *key);

/*
 * A file lock as an fdinfo "lock:" line shows it (fs/locks.c,
 * lock_get_status()): a POSIX lock only in the fdinfo of its owner's fds
 * on the open file it was taken through; flock, OFD locks and leases in
 * that of every fd on their open file description.
 */
enum proc_lock_kind {
	PROC_LOCK_POSIX = 1,	/* fcntl(F_SETLK) */
	PROC_LOCK_OFD,		/* fcntl(F_OFD_SETLK) */
	PROC_LOCK_FLOCK,	/* flock() */
	PROC_LOCK_LEASE,	/* fcntl(F_SETLEASE) */
	PROC_LOCK_OTHER,	/* ACCESS, DELEG, UNKNOWN...: @word says which */
};

struct proc_lock {
	enum proc_lock_kind kind;
	char word[16];		/* the kernel's name of the kind: POSIX, FLOCK... */
	char state[16];		/* ADVISORY; a lease's ACTIVE, BREAKING, BREAKER */
	int type;		/* F_RDLCK, F_WRLCK or F_UNLCK */
	unsigned int major, minor;	/* the device, as the kernel prints it */
	uint64_t ino;
	int64_t start;
	int64_t end;		/* the last byte, -1: to the end of the file */
};

/* Parses the text after "lock:" of one line; 0, or -1 when it is not a lock line. */
int proc_parse_lock(const char *line, struct proc_lock *l);
/* The text after "lock:" of the first lock line at or after @p in an fdinfo text, or NULL. */
const char *proc_next_lock(const char *p);

/*
 * Runs of pages in [start, end): PM_SCAN_DATA, those worth saving (present
 * or swapped, not the zero page, not guard markers); PM_SCAN_ANON, the same
 * but only copies (not pages of the file); PM_SCAN_GUARDS, guard regions
 * (MADV_GUARD_INSTALL). Uses the PAGEMAP_SCAN ioctl where the kernel has
 * it, else reads /proc/PID/pagemap.
 */
enum {
	PM_SCAN_DATA,
	PM_SCAN_ANON,
	PM_SCAN_GUARDS,
};

typedef int (*pagemap_cb)(void *arg, uint64_t start, uint64_t end);
int pagemap_scan(int pagemap_fd, uint64_t start, uint64_t end, int what,
		 pagemap_cb cb, void *arg);
/*
 * Pages of [start, end) written since they were last write-protected, in
 * an area registered with a userfaultfd in asynchronous write-protect mode
 * (UFFD_FEATURE_WP_ASYNC, Linux 6.7), write-protected again in the same
 * walk (PAGEMAP_SCAN with PM_SCAN_WP_MATCHING). 0; 1 when some area of the
 * range is not so registered (nothing was protected); -1 logged.
 */
int pagemap_scan_written(int pagemap_fd, uint64_t start, uint64_t end, pagemap_cb cb,
			 void *arg);
/* The pfn of the zero page as pagemap shows it (0: hidden, not root). */
uint64_t pagemap_zero_pfn(void);

/* Returns the tids of /proc/PID/task (sorted) or the pids of .../children. */
int proc_list_threads(pid_t pid, pid_t **tids);
int proc_list_children(pid_t pid, pid_t tid, pid_t **pids);
/* The pids of a children file; their number, or -1. */
int proc_parse_children(const char *buf, pid_t **pids);

/* One POSIX timer of /proc/PID/timers. */
struct proc_timer {
	int id;
	int signo;
	uint64_t value;		/* sigev_value */
	int notify;		/* SIGEV_*, with SIGEV_THREAD_ID for "tid" */
	int target;		/* the pid, or the tid with SIGEV_THREAD_ID */
	int clockid;
};

/* Returns the number of timers and a malloc()ed array, or -1. */
int proc_parse_timers(char *buf, struct proc_timer **out);
int proc_read_timers(pid_t pid, struct proc_timer **out);

/*
 * The id (nsfs inode number) of the namespace NAME ("pid", "time_for_children"...)
 * of task @pid (0: criu itself), or of its thread @tid; 0 on error, logged.
 */
uint64_t proc_ns_id(pid_t pid, pid_t tid, const char *name);
/* The ID of a link "NAME:[ID]"; 0 when it is not one. */
uint64_t proc_parse_ns_link(const char *link);

/*
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME offsets, in ns, of the time namespace
 * task @pid (0: criu) is in, relative to the host's clocks; 0 on kernels
 * without time namespaces. The parser takes a timens_offsets file.
 */
int proc_parse_timens_offsets(const char *buf, int64_t *mono, int64_t *boot);
int proc_timens_offsets(pid_t pid, int64_t *mono, int64_t *boot);

/* Shared memory objects, by the names the kernel gives them (shmem.c). */
#define PROC_MEMFD_PREFIX	"/memfd:"
#define PROC_ANON_HUGEPAGE	"/anon_hugepage (deleted)"	/* MAP_ANONYMOUS|MAP_HUGETLB */

enum {
	SHMO_NONE,
	SHMO_ANON,	/* "/dev/zero (deleted)", MAP_SHARED|MAP_ANONYMOUS */
	SHMO_MEMFD,	/* "/memfd:NAME (deleted)" */
	SHMO_SYSV,	/* "/SYSV%08x (deleted)", a System V segment (key) */
	SHMO_HUGETLB,	/* on hugetlbfs: not supported */
	SHMO_GHOST,	/* "/PATH (deleted)", any other: a deleted file (file-ghost.c) */
};

/* What kind of shared memory object an area maps, if any. */
int proc_vma_shmem(const struct proc_vma *v);
/* The same for @path (an fd's link) on device @dev (its st_dev). */
int proc_shmem_kind(const char *path, uint64_t dev);
/* A regular file (@mode) whose @link says it was deleted: a ghost (shmem-ghost.c). */
int proc_is_ghost(const char *link, mode_t mode, uint64_t dev);
/*
 * An aio ring (io_setup): the kernel maps it from a file of its internal
 * aio mount, "/[aio] (deleted)" on an anonymous device (major 0). A
 * deleted "/[aio]" of a tmpfs root looks the same: the aio part reads the
 * ring's header and refuses what is not one.
 */
int proc_is_aio(const char *path, unsigned int dev_major);
/* NAME of a memfd's link "/memfd:NAME (deleted)", malloc'ed (SHMO_MEMFD only). */
char *proc_memfd_name(const char *link);

/*
 * /proc/PID/cgroup: one line per hierarchy, its controllers ("" for the
 * unified one) and the path, relative to the reader's cgroup namespace.
 * Strings point into buf.
 */
struct proc_cgroup_line {
	const char *controllers;
	const char *path;
};

struct proc_cgroup {
	struct proc_cgroup_line *line;
	int nr;
	char *buf;
};

/*
 * One line of /proc/PID/mountinfo; the strings point into the buffer the
 * list keeps, unescaped (a mount point with a space has a space).
 */
struct proc_mount {
	int id, parent;
	unsigned int major, minor;
	char *root;		/* in the filesystem */
	char *mountpoint;	/* as the reading task's root sees it */
	char *mnt_opts;		/* per mount: rw/ro, nosuid, relatime... */
	char *fstype, *source;
	char *sb_opts;		/* per superblock */
	int shared, master, propagate_from;	/* peer groups, 0: none */
	int unbindable;
};

struct proc_mounts {
	struct proc_mount *m;
	int nr;
	char *buf;
};

/* Takes @buf (malloc'ed) on success. */
int proc_parse_cgroup(char *buf, struct proc_cgroup *cg);
/* Of task @pid (0: criu), or of its thread @tid; -1 logged. */
int proc_read_cgroup(pid_t pid, pid_t tid, struct proc_cgroup *cg);
/* The path in the hierarchy of @controllers, or NULL. */
const char *proc_cgroup_path(const struct proc_cgroup *cg, const char *controllers);
void proc_cgroup_free(struct proc_cgroup *cg);

/* @buf is taken over (freed by proc_mounts_free()), also on error. */
int proc_parse_mountinfo(char *buf, struct proc_mounts *out);
/* Of task @pid, 0: criu's own. */
int proc_read_mountinfo(pid_t pid, struct proc_mounts *out);
void proc_mounts_free(struct proc_mounts *ms);
struct proc_mount *proc_mount_by_id(struct proc_mounts *ms, int id);
/* Is @word one of the comma-separated words of @opts? */
int proc_mount_has_opt(const char *opts, const char *word);

/* A raw socket's line of /proc/PID/net/raw or raw6. */
struct proc_raw_sk {
	unsigned int state;	/* TCP_ESTABLISHED (1): connected */
	uint32_t rem[4];	/* the peer's address, as in memory (v4: rem[0]) */
};
/* 1: the socket of inode @ino was found (into @sk), 0: not there, -1: bad line */
int proc_parse_net_raw(char *text, unsigned long ino, struct proc_raw_sk *sk);

/* Device numbers as fdinfo's "sdev:" gives them (the kernel's own encoding). */
#define KDEV_MAJOR(sdev)	((unsigned int)(sdev) >> 20)
#define KDEV_MINOR(sdev)	((unsigned int)(sdev) & 0xfffff)

#endif
