// SPDX-License-Identifier: LGPL-2.1
/*
 * libcriu: the options are a criu_opts message filled in by the setters;
 * each request starts `criu swrk FD` (or connects to a service), sends one
 * criu_req, answers the notifications through the callback and returns
 * what the final criu_resp says, with CRIU's return conventions (criu.h).
 *
 * The library keeps no state between requests but the options, the cr_errno
 * of the last answer (errno on return) and the fd of the last
 * orphan-pts-master notification, as CRIU's does. This file holds the
 * options; request.c talks to criu, calls.c makes the requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu.h"
#include "internal.h"

#define DEFAULT_BINARY		"criu"
#define DEFAULT_ADDRESS		"/var/run/criu_service.socket"

criu_opts *libcriu_global;
#define global libcriu_global

/* --------------------------------------------------------- the options */

static int set_str(char **dst, const char *src)
{
	char *s = src ? strdup(src) : NULL;

	if (src && !s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* Appends @item to a repeated field (@arr, @n): 0 or -ENOMEM. */
static int push(void ***arr, size_t *n, void *item)
{
	void **a;

	if (!item)
		return -ENOMEM;
	a = realloc(*arr, (*n + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	a[(*n)++] = item;
	*arr = a;
	return 0;
}

static int push_str(char ***arr, size_t *n, const char *s)
{
	char *copy = s ? strdup(s) : NULL;
	int ret = push((void ***)arr, n, copy);

	if (ret)
		free(copy);
	return ret;
}

int criu_local_init_opts(criu_opts **o)
{
	criu_opts *opts;

	criu_local_free_opts(*o);
	*o = NULL;
	opts = calloc(1, sizeof(*opts));
	if (!opts)
		return -1;
	opts->rpc = malloc(sizeof(*opts->rpc));
	opts->binary = strdup(DEFAULT_BINARY);
	if (!opts->rpc || !opts->binary) {
		free(opts->rpc);
		free(opts->binary);
		free(opts);
		return -1;
	}
	criu_opts__init(opts->rpc);
	opts->comm = CRIU_COMM_BIN;
	opts->fd = -1;
	*o = opts;
	return 0;
}

void criu_local_free_opts(criu_opts *opts)
{
	if (!opts)
		return;
	/* the message owns every string and list the setters made */
	if (opts->rpc)
		protobuf_c_message_free_unpacked(&opts->rpc->base, NULL);
	free(opts->address);
	free(opts->binary);
	free(opts);
}

int criu_init_opts(void)
{
	return criu_local_init_opts(&global);
}

void criu_free_opts(void)
{
	criu_local_free_opts(global);
	global = NULL;
}

int criu_local_set_service_address(criu_opts *opts, const char *path)
{
	opts->comm = CRIU_COMM_SK;
	return set_str(&opts->address, path ? path : DEFAULT_ADDRESS);
}

void criu_local_set_service_fd(criu_opts *opts, int fd)
{
	opts->comm = CRIU_COMM_FD;
	opts->fd = fd;
}

int criu_local_set_service_binary(criu_opts *opts, const char *path)
{
	opts->comm = CRIU_COMM_BIN;
	return set_str(&opts->binary, path ? path : DEFAULT_BINARY);
}

void criu_local_set_service_comm(criu_opts *opts, enum criu_service_comm comm)
{
	opts->comm = comm;
}

/* An optional scalar: criu_local_set_NAME and criu_set_NAME. */
#define SCALAR(name, field, type)						\
	void criu_local_set_##name(criu_opts *opts, type v)			\
	{									\
		opts->rpc->has_##field = 1;					\
		opts->rpc->field = v;						\
	}									\
	void criu_set_##name(type v)						\
	{									\
		criu_local_set_##name(global, v);				\
	}

/* A string: criu_local_set_NAME and criu_set_NAME, 0 or -ENOMEM. */
#define STRING(name, field)							\
	int criu_local_set_##name(criu_opts *opts, const char *s)		\
	{									\
		return set_str(&opts->rpc->field, s);				\
	}									\
	int criu_set_##name(const char *s)					\
	{									\
		return criu_local_set_##name(global, s);			\
	}

SCALAR(pid, pid, int)
SCALAR(leave_running, leave_running, bool)
SCALAR(ext_unix_sk, ext_unix_sk, bool)
SCALAR(tcp_established, tcp_established, bool)
SCALAR(tcp_skip_in_flight, tcp_skip_in_flight, bool)
SCALAR(tcp_close, tcp_close, bool)
SCALAR(weak_sysctls, weak_sysctls, bool)
SCALAR(evasive_devices, evasive_devices, bool)
SCALAR(shell_job, shell_job, bool)
SCALAR(skip_file_rwx_check, skip_file_rwx_check, bool)
SCALAR(unprivileged, unprivileged, bool)
SCALAR(orphan_pts_master, orphan_pts_master, bool)
SCALAR(file_locks, file_locks, bool)
SCALAR(track_mem, track_mem, bool)
SCALAR(auto_dedup, auto_dedup, bool)
SCALAR(force_irmap, force_irmap, bool)
SCALAR(link_remap, link_remap, bool)
SCALAR(work_dir_fd, work_dir_fd, int)
SCALAR(log_level, log_level, int)
SCALAR(cpu_cap, cpu_cap, unsigned int)
SCALAR(manage_cgroups, manage_cgroups, bool)
SCALAR(timeout, timeout, unsigned int)
SCALAR(auto_ext_mnt, auto_ext_mnt, bool)
SCALAR(ext_sharing, ext_sharing, bool)
SCALAR(ext_masters, ext_masters, bool)
SCALAR(ghost_limit, ghost_limit, unsigned int)
SCALAR(pidfd_store_sk, pidfd_store_sk, int)
SCALAR(mntns_compat_mode, mntns_compat_mode, bool)
SCALAR(empty_ns, empty_ns, int)

STRING(parent_images, parent_img)
STRING(log_file, log_file)
STRING(root, root)
STRING(freeze_cgroup, freeze_cgroup)
STRING(lsm_profile, lsm_profile)
STRING(lsm_mount_context, lsm_mount_context)
STRING(config_file, config_file)

/* images_dir_fd is required: it has no has_ */
void criu_local_set_images_dir_fd(criu_opts *opts, int fd)
{
	opts->rpc->images_dir_fd = fd;
}

void criu_set_images_dir_fd(int fd)
{
	criu_local_set_images_dir_fd(global, fd);
}

void criu_local_set_manage_cgroups_mode(criu_opts *opts, enum criu_cg_mode mode)
{
	opts->rpc->has_manage_cgroups_mode = 1;
	opts->rpc->manage_cgroups_mode = (CriuCgMode)mode;
}

void criu_set_manage_cgroups_mode(enum criu_cg_mode mode)
{
	criu_local_set_manage_cgroups_mode(global, mode);
}

int criu_local_set_pre_dump_mode(criu_opts *opts, enum criu_pre_dump_mode mode)
{
	if (mode != CRIU_PRE_DUMP_SPLICE && mode != CRIU_PRE_DUMP_READ)
		return -1;
	opts->rpc->has_pre_dump_mode = 1;
	opts->rpc->pre_dump_mode = (CriuPreDumpMode)mode;
	return 0;
}

int criu_set_pre_dump_mode(enum criu_pre_dump_mode mode)
{
	return criu_local_set_pre_dump_mode(global, mode);
}

int criu_local_set_network_lock(criu_opts *opts, enum criu_network_lock_method method)
{
	if (method < CRIU_NETWORK_LOCK_IPTABLES || method > CRIU_NETWORK_LOCK_SKIP)
		return -1;
	opts->rpc->has_network_lock = 1;
	opts->rpc->network_lock = (CriuNetworkLockMethod)method;
	return 0;
}

int criu_set_network_lock(enum criu_network_lock_method method)
{
	return criu_local_set_network_lock(global, method);
}

int criu_local_set_exec_cmd(criu_opts *opts, int argc, char *argv[])
{
	int i;

	for (i = 0; i < argc; i++)
		if (push_str(&opts->rpc->exec_cmd, &opts->rpc->n_exec_cmd, argv[i]))
			return -ENOMEM;
	return 0;
}

int criu_set_exec_cmd(int argc, char *argv[])
{
	return criu_local_set_exec_cmd(global, argc, argv);
}

/* A repeated string: criu_local_add_NAME and criu_add_NAME. */
#define LIST(name, field)							\
	int criu_local_add_##name(criu_opts *opts, const char *s)		\
	{									\
		return push_str(&opts->rpc->field, &opts->rpc->n_##field, s);	\
	}									\
	int criu_add_##name(const char *s)					\
	{									\
		return criu_local_add_##name(global, s);			\
	}

LIST(enable_fs, enable_fs)
LIST(skip_mnt, skip_mnt)
LIST(irmap_path, irmap_scan_paths)
LIST(external, external)

int criu_local_add_cg_dump_controller(criu_opts *opts, const char *name)
{
	return push_str(&opts->rpc->cgroup_dump_controller,
			&opts->rpc->n_cgroup_dump_controller, name);
}

int criu_local_add_cg_props(criu_opts *opts, const char *stream)
{
	return set_str(&opts->rpc->cgroup_props, stream);
}

int criu_local_add_cg_props_file(criu_opts *opts, const char *path)
{
	return set_str(&opts->rpc->cgroup_props_file, path);
}

int criu_local_add_cg_yard(criu_opts *opts, const char *path)
{
	return set_str(&opts->rpc->cgroup_yard, path);
}

int criu_local_add_unix_sk(criu_opts *opts, unsigned int inode)
{
	UnixSk *u;

	/* CRIU's rule: adding one turns ext_unix_sk on, unless it was turned off */
	if (!opts->rpc->has_ext_unix_sk)
		criu_local_set_ext_unix_sk(opts, true);
	if (!opts->rpc->ext_unix_sk)
		return -1;
	u = malloc(sizeof(*u));
	if (u) {
		unix_sk__init(u);
		u->inode = inode;
	}
	if (push((void ***)&opts->rpc->unix_sk_ino, &opts->rpc->n_unix_sk_ino, u)) {
		free(u);
		return -ENOMEM;
	}
	return 0;
}

int criu_add_unix_sk(unsigned int inode)
{
	return criu_local_add_unix_sk(global, inode);
}

/* A two-string item of a repeated message field. */
static int push_pair(void ***arr, size_t *n, void *item, char **a, const char *va,
		     char **b, const char *vb)
{
	if (!item)
		return -ENOMEM;
	if ((va && !(*a = strdup(va))) || (vb && !(*b = strdup(vb))) ||
	    push(arr, n, item)) {
		protobuf_c_message_free_unpacked(item, NULL);
		return -ENOMEM;
	}
	return 0;
}

int criu_local_add_ext_mount(criu_opts *opts, const char *key, const char *val)
{
	ExtMountMap *m = malloc(sizeof(*m));

	if (m)
		ext_mount_map__init(m);
	return push_pair((void ***)&opts->rpc->ext_mnt, &opts->rpc->n_ext_mnt, m,
			 m ? &m->key : NULL, key, m ? &m->val : NULL, val);
}

int criu_add_ext_mount(const char *key, const char *val)
{
	return criu_local_add_ext_mount(global, key, val);
}

int criu_local_add_veth_pair(criu_opts *opts, const char *in, const char *out)
{
	CriuVethPair *p = malloc(sizeof(*p));

	if (p)
		criu_veth_pair__init(p);
	return push_pair((void ***)&opts->rpc->veths, &opts->rpc->n_veths, p,
			 p ? &p->if_in : NULL, in, p ? &p->if_out : NULL, out);
}

int criu_add_veth_pair(const char *in, const char *out)
{
	return criu_local_add_veth_pair(global, in, out);
}

int criu_local_add_cg_root(criu_opts *opts, const char *ctrl, const char *path)
{
	CgroupRoot *r = malloc(sizeof(*r));

	if (r)
		cgroup_root__init(r);
	return push_pair((void ***)&opts->rpc->cg_root, &opts->rpc->n_cg_root, r,
			 r ? &r->ctrl : NULL, ctrl, r ? &r->path : NULL, path);
}

int criu_add_cg_root(const char *ctrl, const char *path)
{
	return criu_local_add_cg_root(global, ctrl, path);
}

/* CRIU allows inherited fds with swrk only: they are the swrk's own fds. */
int criu_local_add_inherit_fd(criu_opts *opts, int fd, const char *key)
{
	InheritFd *f;

	if (opts->comm != CRIU_COMM_BIN)
		return -1;
	f = malloc(sizeof(*f));
	if (f) {
		inherit_fd__init(f);
		f->fd = fd;
	}
	return push_pair((void ***)&opts->rpc->inherit_fd, &opts->rpc->n_inherit_fd, f,
			 f ? &f->key : NULL, key, NULL, NULL);
}

int criu_add_inherit_fd(int fd, const char *key)
{
	return criu_local_add_inherit_fd(global, fd, key);
}

int criu_local_join_ns_add(criu_opts *opts, const char *ns, const char *ns_file,
			   const char *extra_opt)
{
	JoinNamespace *j;
	int ret;

	if (!ns || !ns_file)
		return -1;
	j = malloc(sizeof(*j));
	if (j)
		join_namespace__init(j);
	ret = push_pair((void ***)&opts->rpc->join_ns, &opts->rpc->n_join_ns, j,
			j ? &j->ns : NULL, ns, j ? &j->ns_file : NULL, ns_file);
	if (!ret && extra_opt && !(j->extra_opt = strdup(extra_opt)))
		ret = -ENOMEM;
	return ret ? -1 : 0;
}

int criu_join_ns_add(const char *ns, const char *ns_file, const char *extra_opt)
{
	return criu_local_join_ns_add(global, ns, ns_file, extra_opt);
}

int criu_local_set_page_server_address_port(criu_opts *opts, const char *address, int port)
{
	CriuPageServerInfo *ps = malloc(sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	criu_page_server_info__init(ps);
	ps->has_port = 1;
	ps->port = port;
	if (address && !(ps->address = strdup(address))) {
		free(ps);
		return -ENOMEM;
	}
	if (opts->rpc->ps)
		protobuf_c_message_free_unpacked(&opts->rpc->ps->base, NULL);
	opts->rpc->ps = ps;
	return 0;
}

int criu_set_page_server_address_port(const char *address, int port)
{
	return criu_local_set_page_server_address_port(global, address, port);
}

void criu_local_set_notify_cb(criu_opts *opts, int (*cb)(char *action, criu_notify_arg_t na))
{
	opts->notify = cb;
	opts->rpc->has_notify_scripts = 1;
	opts->rpc->notify_scripts = 1;
}

void criu_set_notify_cb(int (*cb)(char *action, criu_notify_arg_t na))
{
	criu_local_set_notify_cb(global, cb);
}

int criu_notify_pid(criu_notify_arg_t na)
{
	return na->has_pid ? na->pid : 0;
}

int criu_get_orphan_pts_master_fd(void)
{
	return libcriu_orphan_fd();
}

void criu_set_service_fd(int fd)
{
	criu_local_set_service_fd(global, fd);
}

int criu_set_service_address(const char *path)
{
	return criu_local_set_service_address(global, path);
}

int criu_set_service_binary(const char *path)
{
	return criu_local_set_service_binary(global, path);
}

void criu_set_service_comm(enum criu_service_comm comm)
{
	criu_local_set_service_comm(global, comm);
}
