/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ctr: a container launcher for tests, made without any container runtime.
 *
 * It builds what runc's default spec builds (pid, mount, network, ipc, uts
 * and cgroup namespaces, a root entered with pivot_root, the OCI default
 * mounts, masked and read-only paths) so that criu's container support can
 * be tested against a container whose every piece is known.  Options add
 * the rest a container may have: a user namespace, cgroups with limits, a
 * veth pair, volumes, a console pty.  See README.md beside this file.
 *
 * The code is split by the side it runs on: the host side (ctr.c, cgroup.c,
 * state.c, and net.c's veth creation) changes the host and records each
 * change so that it can be undone; the container side (mounts.c, console.c,
 * process.c) runs in the new namespaces only and never touches the host.
 */
#ifndef CTR_H
#define CTR_H

#include <stdbool.h>
#include <sys/types.h>

#define CTR_MAX_VOLUMES	16
#define CTR_MAX_ENV	64
#define CTR_MAX_IPS	8
#define CTR_MAX_CGDIRS	64	/* directories created, over all hierarchies */
#define CTR_MAX_HIER	16	/* cgroup hierarchies mounted on the host */

enum ctr_cgfs {
	CGFS_AUTO,		/* what runc does on this host: v1 unless pure v2 */
	CGFS_V1,		/* a ro tmpfs with one cgroup v1 mount per hierarchy */
	CGFS_V2,		/* one ro cgroup2 mount */
	CGFS_NONE,
};

struct ctr_volume {
	const char *src;	/* host path */
	const char *dst;	/* path in the container */
	bool ro;
};

struct ctr_limits {
	long long memory;	/* bytes, 0: none */
	long long pids;
	long long cpu_quota;	/* microseconds per period */
	long long cpu_period;
	long long cpu_shares;
};

struct ctr_config {
	const char *name;
	char rootfs[4096];	/* absolute, resolved */
	char **argv;
	bool detach;
	const char *init;	/* --init: the reaper inside the rootfs, or NULL */
	bool userns;
	bool readonly;
	bool restrict_process;
	bool made_state_dir;	/* ctr made the default state directory */
	const char *state_path;
	const char *pid_file;
	const char *output;	/* in the container */
	const char *hostname;
	const char *cwd;
	const char *env[CTR_MAX_ENV];
	int nr_env;
	char uid_map[512];
	char gid_map[512];
	enum ctr_cgfs cgfs;
	const char *cgroup;
	const char *cg_controllers;
	struct ctr_limits lim;
	const char *veth_host;
	const char *veth_ctr;
	const char *ips[CTR_MAX_IPS];
	int nr_ips;
	const char *host_ip;
	const char *gw;
	struct ctr_volume vols[CTR_MAX_VOLUMES];
	int nr_vols;
	const char *console_socket;
	unsigned long propagation;	/* MS_SLAVE or MS_PRIVATE */
	bool share_net, share_cgroup;	/* --share: the host's namespaces */
};

/* One cgroup hierarchy mounted on the host, and ctr's place in it. */
struct ctr_hier {
	char mnt[256];		/* mount point */
	char opts[128];		/* v1: controllers as mount options ("cpu", "name=systemd") */
	char own[512];		/* the cgroup ctr runs in, from /proc/self/cgroup */
	char dir[1024];		/* the container's cgroup, once created */
	bool v2;
	bool used;
};

/* What the host side changed, to be undone by teardown (and `ctr delete`). */
struct ctr_host {
	pid_t pid;			/* the container's init */
	unsigned long long start;	/* its start time, against pid reuse */
	struct {
		char path[1024];
		bool leaf;		/* the container's own, not a parent */
	} cgdirs[CTR_MAX_CGDIRS];	/* in the order created */
	int nr_cgdirs;
	char veth[16];			/* the host end, when ctr created it */
	struct ctr_hier hier[CTR_MAX_HIER];
	int nr_hier;
};

/* errors: the first one set is the one reported, by the side that knows */
void ctr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ctr_perr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ctr_errmsg(void);
void ctr_err_clear(void);

/* small helpers (util.c) */
int write_file(const char *path, const char *data);
int read_file(const char *path, char *buf, size_t size);
int mkdir_p(const char *path, mode_t mode);
int touch(const char *path, mode_t mode);
unsigned long long proc_start_time(pid_t pid);
char proc_state(pid_t pid);
int wait_gone(pid_t pid, int ms);

/* host side: cgroups (cgroup.c) */
int cg_discover(struct ctr_host *h, const char *controllers);
int cg_create(const struct ctr_config *c, struct ctr_host *h);
int cg_join(struct ctr_host *h, pid_t pid);
int cg_remove(struct ctr_host *h);
bool cg_pure_v2(void);

/* rtnetlink (net.c): the host end, then the container's side from inside */
int net_veth_create(const char *host, const char *peer, pid_t peer_pid);
int net_link_up(const char *ifname);
int net_addr_add(const char *ifname, const char *cidr);
int net_route_default(const char *gw);
int net_link_del(const char *ifname);
bool net_link_exists(const char *ifname);

/* container side: the root and its mounts (mounts.c) */
int rootfs_prepare_host(const struct ctr_config *c);
int rootfs_setup(const struct ctr_config *c, const struct ctr_host *h);
int rootfs_finish(const struct ctr_config *c);

/* container side: console and process (console.c, process.c) */
int console_setup(int sock);
int process_stdio(const struct ctr_config *c);
int process_restrict(void);
int process_env(const struct ctr_config *c);
int init_main(int argc, char **argv);

/* the state file of a detached container (state.c) */
int state_write(const char *path, const struct ctr_config *c, const struct ctr_host *h);
int state_read(const char *path, struct ctr_host *h);
int teardown(struct ctr_host *h, int timeout_ms);

/* the whole start (run.c): returns the init's pid with a socket to wait on */
int ctr_start(struct ctr_config *c, struct ctr_host *h);

#endif
