/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libcriu: CRIU's C API (the names, signatures, enum values and return
 * conventions of CRIU's criu.h, so that crun and other programs built
 * against CRIU's header use this library unchanged). Each call starts
 * `criu swrk` (or connects to `criu service`) and speaks the RPC of
 * rpc.proto; Documentation/rpc.md describes it.
 *
 * Return values of the requests (criu_check, criu_dump, criu_restore...):
 *   >= 0           success (criu_restore*: the restored root's pid;
 *                  criu_dump: 1 when a self-dump came back restored)
 *   -EBADE         criu answered that it failed; errno is its cr_errno
 *   -ECONNREFUSED  criu could not be started or reached
 *   -ECOMM         the request or its answer was lost
 *   -EINVAL        criu does not know this request
 *   -EBADMSG       criu answered something unexpected
 */
#ifndef __CRIU_LIB_H__
#define __CRIU_LIB_H__

#include <stdbool.h>
#include <stddef.h>

#include "version.h"
#include "rpc.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CRIU_LOG_UNSET	(-1)
#define CRIU_LOG_MSG	(0)
#define CRIU_LOG_ERROR	(1)
#define CRIU_LOG_WARN	(2)
#define CRIU_LOG_INFO	(3)
#define CRIU_LOG_DEBUG	(4)

enum criu_service_comm {
	CRIU_COMM_SK,	/* connect to a criu service */
	CRIU_COMM_FD,	/* a connected socket the caller has */
	CRIU_COMM_BIN,	/* start `BINARY swrk FD` for each request (the default) */
};

enum criu_cg_mode {
	CRIU_CG_MODE_IGNORE,
	CRIU_CG_MODE_NONE,
	CRIU_CG_MODE_PROPS,
	CRIU_CG_MODE_SOFT,
	CRIU_CG_MODE_FULL,
	CRIU_CG_MODE_STRICT,
	CRIU_CG_MODE_DEFAULT,
};

enum criu_network_lock_method {
	CRIU_NETWORK_LOCK_IPTABLES = 1,
	CRIU_NETWORK_LOCK_NFTABLES = 2,
	CRIU_NETWORK_LOCK_SKIP = 3,
};

enum criu_pre_dump_mode {
	CRIU_PRE_DUMP_SPLICE = 1,
	CRIU_PRE_DUMP_READ = 2,
};

struct criu_feature_check {
	bool mem_track;
	bool lazy_pages;
	bool pidfd_store;
};

typedef CriuNotify *criu_notify_arg_t;
typedef void *criu_predump_info;
typedef struct criu_opts criu_opts;

/* ------------------------------------------ the global set of options */

int criu_init_opts(void);	/* first of all; 0 or -1 */
void criu_free_opts(void);

int criu_set_service_address(const char *path);
void criu_set_service_fd(int fd);
int criu_set_service_binary(const char *path);
void criu_set_service_comm(enum criu_service_comm comm);

void criu_set_pid(int pid);
void criu_set_images_dir_fd(int fd);
int criu_set_parent_images(const char *path);
void criu_set_work_dir_fd(int fd);
void criu_set_leave_running(bool leave_running);
void criu_set_ext_unix_sk(bool ext_unix_sk);
int criu_add_unix_sk(unsigned int inode);
void criu_set_tcp_established(bool tcp_established);
void criu_set_tcp_skip_in_flight(bool tcp_skip_in_flight);
void criu_set_tcp_close(bool tcp_close);
void criu_set_weak_sysctls(bool val);
void criu_set_evasive_devices(bool evasive_devices);
void criu_set_shell_job(bool shell_job);
void criu_set_skip_file_rwx_check(bool skip_file_rwx_check);
void criu_set_unprivileged(bool unprivileged);
void criu_set_orphan_pts_master(bool orphan_pts_master);
void criu_set_file_locks(bool file_locks);
void criu_set_track_mem(bool track_mem);
void criu_set_auto_dedup(bool auto_dedup);
void criu_set_force_irmap(bool force_irmap);
void criu_set_link_remap(bool link_remap);
void criu_set_log_level(int log_level);
int criu_set_log_file(const char *log_file);
void criu_set_cpu_cap(unsigned int cap);
int criu_set_root(const char *root);
void criu_set_manage_cgroups(bool manage);
void criu_set_manage_cgroups_mode(enum criu_cg_mode mode);
int criu_set_freeze_cgroup(const char *name);
int criu_set_lsm_profile(const char *name);
int criu_set_lsm_mount_context(const char *name);
void criu_set_timeout(unsigned int timeout);
void criu_set_auto_ext_mnt(bool val);
void criu_set_ext_sharing(bool val);
void criu_set_ext_masters(bool val);
int criu_set_exec_cmd(int argc, char *argv[]);
int criu_add_ext_mount(const char *key, const char *val);
int criu_add_veth_pair(const char *in, const char *out);
int criu_add_cg_root(const char *ctrl, const char *path);
int criu_add_enable_fs(const char *fs);
int criu_add_skip_mnt(const char *mnt);
void criu_set_ghost_limit(unsigned int limit);
int criu_add_irmap_path(const char *path);
int criu_add_inherit_fd(int fd, const char *key);
int criu_add_external(const char *key);
int criu_set_page_server_address_port(const char *address, int port);
int criu_set_pre_dump_mode(enum criu_pre_dump_mode mode);
void criu_set_pidfd_store_sk(int sk);
int criu_set_network_lock(enum criu_network_lock_method method);
int criu_join_ns_add(const char *ns, const char *ns_file, const char *extra_opt);
void criu_set_mntns_compat_mode(bool val);
void criu_set_empty_ns(int namespaces);
int criu_set_config_file(const char *path);

/*
 * The callback of notify_scripts: @action is CRIU's name of the hook
 * ("pre-dump", "post-restore"...); 0 lets criu go on, anything else fails
 * the request (and is what the request returns).
 */
void criu_set_notify_cb(int (*cb)(char *action, criu_notify_arg_t na));
/* The root's pid of a notification (setup-namespaces, post-restore), or 0. */
int criu_notify_pid(criu_notify_arg_t na);
/* The pty master of the last orphan-pts-master notification, or -1. */
int criu_get_orphan_pts_master_fd(void);

int criu_check(void);
int criu_dump(void);
int criu_pre_dump(void);
int criu_restore(void);
/* The restored root becomes the caller's child (always through swrk). */
int criu_restore_child(void);
/*
 * Pre-dumps, then a dump: after each pre-dump @more says whether another
 * one follows (> 0), the final dump (0) or to stop (< 0, returned).
 */
int criu_dump_iters(int (*more)(criu_predump_info pi));

/* major * 10000 + minor * 100 + sublevel of the criu binary, or < 0. */
int criu_get_version(void);
/* 1: the binary is at least @minimum, 0: older, < 0: an error. */
int criu_check_version(int minimum);
/*
 * Asks about the features marked true in @features (@size bytes of it);
 * on success each is left true only where criu has it.
 */
int criu_feature_check(struct criu_feature_check *features, size_t size);

/* ------------------------------------------- the same, on own options */

int criu_local_init_opts(criu_opts **opts);
void criu_local_free_opts(criu_opts *opts);

int criu_local_set_service_address(criu_opts *opts, const char *path);
void criu_local_set_service_fd(criu_opts *opts, int fd);
int criu_local_set_service_binary(criu_opts *opts, const char *path);
void criu_local_set_service_comm(criu_opts *opts, enum criu_service_comm comm);

void criu_local_set_pid(criu_opts *opts, int pid);
void criu_local_set_images_dir_fd(criu_opts *opts, int fd);
int criu_local_set_parent_images(criu_opts *opts, const char *path);
void criu_local_set_work_dir_fd(criu_opts *opts, int fd);
void criu_local_set_leave_running(criu_opts *opts, bool leave_running);
void criu_local_set_ext_unix_sk(criu_opts *opts, bool ext_unix_sk);
int criu_local_add_unix_sk(criu_opts *opts, unsigned int inode);
void criu_local_set_tcp_established(criu_opts *opts, bool tcp_established);
void criu_local_set_tcp_skip_in_flight(criu_opts *opts, bool tcp_skip_in_flight);
void criu_local_set_tcp_close(criu_opts *opts, bool tcp_close);
void criu_local_set_weak_sysctls(criu_opts *opts, bool val);
void criu_local_set_evasive_devices(criu_opts *opts, bool evasive_devices);
void criu_local_set_shell_job(criu_opts *opts, bool shell_job);
void criu_local_set_skip_file_rwx_check(criu_opts *opts, bool skip_file_rwx_check);
void criu_local_set_unprivileged(criu_opts *opts, bool unprivileged);
void criu_local_set_orphan_pts_master(criu_opts *opts, bool orphan_pts_master);
void criu_local_set_file_locks(criu_opts *opts, bool file_locks);
void criu_local_set_track_mem(criu_opts *opts, bool track_mem);
void criu_local_set_auto_dedup(criu_opts *opts, bool auto_dedup);
void criu_local_set_force_irmap(criu_opts *opts, bool force_irmap);
void criu_local_set_link_remap(criu_opts *opts, bool link_remap);
void criu_local_set_log_level(criu_opts *opts, int log_level);
int criu_local_set_log_file(criu_opts *opts, const char *log_file);
void criu_local_set_cpu_cap(criu_opts *opts, unsigned int cap);
int criu_local_set_root(criu_opts *opts, const char *root);
void criu_local_set_manage_cgroups(criu_opts *opts, bool manage);
void criu_local_set_manage_cgroups_mode(criu_opts *opts, enum criu_cg_mode mode);
int criu_local_set_freeze_cgroup(criu_opts *opts, const char *name);
int criu_local_set_lsm_profile(criu_opts *opts, const char *name);
int criu_local_set_lsm_mount_context(criu_opts *opts, const char *name);
void criu_local_set_timeout(criu_opts *opts, unsigned int timeout);
void criu_local_set_auto_ext_mnt(criu_opts *opts, bool val);
void criu_local_set_ext_sharing(criu_opts *opts, bool val);
void criu_local_set_ext_masters(criu_opts *opts, bool val);
int criu_local_set_exec_cmd(criu_opts *opts, int argc, char *argv[]);
int criu_local_add_ext_mount(criu_opts *opts, const char *key, const char *val);
int criu_local_add_veth_pair(criu_opts *opts, const char *in, const char *out);
int criu_local_add_cg_root(criu_opts *opts, const char *ctrl, const char *path);
int criu_local_add_enable_fs(criu_opts *opts, const char *fs);
int criu_local_add_skip_mnt(criu_opts *opts, const char *mnt);
void criu_local_set_ghost_limit(criu_opts *opts, unsigned int limit);
int criu_local_add_irmap_path(criu_opts *opts, const char *path);
int criu_local_add_cg_props(criu_opts *opts, const char *stream);
int criu_local_add_cg_props_file(criu_opts *opts, const char *path);
int criu_local_add_cg_dump_controller(criu_opts *opts, const char *name);
int criu_local_add_cg_yard(criu_opts *opts, const char *path);
int criu_local_add_inherit_fd(criu_opts *opts, int fd, const char *key);
int criu_local_add_external(criu_opts *opts, const char *key);
int criu_local_set_page_server_address_port(criu_opts *opts, const char *address, int port);
int criu_local_set_pre_dump_mode(criu_opts *opts, enum criu_pre_dump_mode mode);
void criu_local_set_pidfd_store_sk(criu_opts *opts, int sk);
int criu_local_set_network_lock(criu_opts *opts, enum criu_network_lock_method method);
int criu_local_join_ns_add(criu_opts *opts, const char *ns, const char *ns_file,
			   const char *extra_opt);
void criu_local_set_mntns_compat_mode(criu_opts *opts, bool val);
void criu_local_set_empty_ns(criu_opts *opts, int namespaces);
int criu_local_set_config_file(criu_opts *opts, const char *path);

void criu_local_set_notify_cb(criu_opts *opts, int (*cb)(char *action, criu_notify_arg_t na));

int criu_local_check(criu_opts *opts);
int criu_local_dump(criu_opts *opts);
int criu_local_pre_dump(criu_opts *opts);
int criu_local_restore(criu_opts *opts);
int criu_local_restore_child(criu_opts *opts);
int criu_local_dump_iters(criu_opts *opts, int (*more)(criu_predump_info pi));
int criu_local_get_version(criu_opts *opts);
int criu_local_check_version(criu_opts *opts, int minimum);
int criu_local_feature_check(criu_opts *opts, struct criu_feature_check *features,
			     size_t size);

#ifdef __cplusplus
}
#endif

#endif /* __CRIU_LIB_H__ */
