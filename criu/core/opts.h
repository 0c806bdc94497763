/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_OPTS_H
#define CRIU_CORE_OPTS_H

#include <stdint.h>

/* --cpu-cap: which CPU compatibility checks restore makes (CRIU's words) */
#define CPU_CAP_NONE		0u
#define CPU_CAP_FPU		1u	/* the XSAVE components registers use */
#define CPU_CAP_CPU		2u	/* CPUID feature words identical */
#define CPU_CAP_INS		4u	/* the instruction sets of cpu.md */
#define CPU_CAP_ALL		(CPU_CAP_FPU | CPU_CAP_CPU | CPU_CAP_INS)
#define CPU_CAP_DEFAULT		(CPU_CAP_FPU | CPU_CAP_INS)

/* --manage-cgroups[=MODE]: CRIU's modes; soft is the default, as in CRIU */
enum cg_mode {
	CG_MODE_SOFT,		/* create what is missing; properties of what criu created */
	CG_MODE_IGNORE,		/* no cgroup is touched: the tree stays in criu's */
	CG_MODE_NONE,		/* every cgroup must exist; no property is written */
	CG_MODE_PROPS,		/* every cgroup must exist; properties written */
	CG_MODE_FULL,		/* create what is missing; every property written */
	CG_MODE_STRICT,		/* every cgroup is created: none may exist */
};

/* --cgroup-root [CONTROLLER:]PATH */
struct cg_root {
	const char *ctrl;		/* NULL: every hierarchy not named otherwise */
	const char *path;
};

/* --network-lock: how a tree's own network namespace is kept quiet */
#define NETLOCK_NFTABLES	0	/* the default: an nftables table of criu's */
#define NETLOCK_IPTABLES	1	/* iptables-legacy-restore in the namespace */
#define NETLOCK_SKIP		2	/* not at all (the caller does it) */

/* --inherit-fd fd[N]:KEY: an fd criu was given, for the resource KEY */
struct inherit_fd {
	int fd;
	const char *key;
};

/* --tls and its files: the page server's connection (image/tls.c) */
struct tls_opts {
	int on;				/* --tls */
	const char *cacert;		/* --tls-cacert; NULL: the default path */
	const char *cacrl;		/* --tls-cacrl; NULL: the default, if present */
	const char *cert;		/* --tls-cert; NULL: the default path */
	const char *key;		/* --tls-key; NULL: the default path */
	int no_cn_verify;		/* --tls-no-cn-verify: the server's name not matched */
	int no_cert_verify;		/* --tls-no-cert-verify: the peer's certificate not checked */
};

/* The parsed command line; read-only for everything below main.c. */
struct opts {
	int pid;			/* -t */
	const char *images_dir;		/* -D */
	const char *work_dir;		/* -W */
	const char *log_file;		/* -o */
	const char *pidfile;		/* --pidfile */
	int verbosity;			/* -v */
	int leave_running;
	int leave_stopped;
	int shell_job;
	int orphan_pts_master;		/* --orphan-pts-master: a pty whose master is outside */
	int file_locks;			/* --file-locks: dump the locks the tree holds */
	int restore_detached;		/* -d */
	unsigned int cpu_cap;		/* --cpu-cap: CPU_CAP_* */
	const char *cpu_map;		/* --cpu-map SRC:DST[,SRC:DST...] */
	int cpu_ns_ignore;		/* --cpu-ns=ignore: restore without the CPU namespace */
	int restore_sibling;		/* RPC rst_sibling: the root becomes our parent's child */
	int display_stats;		/* --display-stats: log what the stats files hold */
	const char *feature;		/* check --feature NAME */
	const char *address;		/* service --address PATH; page server: its host */
	int lazy_pages;			/* restore --lazy-pages: criu lazy-pages fills private areas */
	int page_server;		/* dump --page-server: images go to --address:--port */
	int port;			/* --port; -1: not given */
	int status_fd;			/* page-server --status-fd: '\0' once listening; -1 */
	struct tls_opts tls;		/* --tls...: page-server and dump --page-server */
	int skip_checksum;		/* --skip-checksum */
	enum cg_mode manage_cgroups;	/* --manage-cgroups[=MODE] */
	const struct cg_root *cg_roots;	/* --cgroup-root, in the order given */
	int nr_cg_roots;
	const char *freeze_cgroup;	/* --freeze-cgroup PATH: a cgroup directory */
	/*
	 * --external, in order: "KIND[INSIDE]:OUTSIDE" (CRIU's forms), copies
	 * (core/external.c); each part looks up the kinds it knows.
	 */
	int ext_unix_sk;		/* --ext-unix-sk: any unix socket's peer may be outside */
	int tcp_established;		/* --tcp-established: TCP connections are dumped */
	int tcp_close;			/* --tcp-close: TCP connections are restored closed */
	int tcp_skip_in_flight;		/* --skip-in-flight: a listener's queue is not saved */
	const char **external;
	int nr_external;
	struct inherit_fd *inherit_fds;	/* --inherit-fd */
	int nr_inherit_fds;
	unsigned int empty_ns;		/* --empty-ns net: CLONE_NEWNET */
	int network_lock;		/* --network-lock: NETLOCK_* */
	const char *root;		/* --root: restore: the tree's root filesystem */
	const char *lsm_profile;	/* --lsm-profile TYPE:NAME: every task's label */
	const char *lsm_mount_context;	/* --lsm-mount-context CTX: mounts' context= */
	uint64_t ghost_limit;		/* --ghost-limit: bytes of a deleted file saved, at most */
	int ghost_limit_set;		/* 0: CRIU's default (parts/shmem-ghost.h) */
	int link_remap;			/* --link-remap: link deleted files back at dump */
	int force_irmap;		/* --force-irmap: watches' paths by the irmap */
	const char **irmap_paths;	/* --irmap-scan-path, in the order given */
	int nr_irmap_paths;
	int pre_dump;			/* criu pre-dump: memory saved, the tree runs on */
	int track_mem;			/* --track-mem: track writes for the next round */
	const char *prev_images_dir;	/* --prev-images-dir, relative to -D */
	int auto_dedup;			/* --auto-dedup: free superseded parent pages */
	int jobs;			/* --jobs N: page copy threads; 0: the default */
	/* opened once by main(): every file criu writes is created in these */
	int images_dirfd;		/* -D, or -1 */
	int work_dirfd;			/* -W, else -D, else AT_FDCWD */
};

#endif
