// SPDX-License-Identifier: GPL-2.0
/*
 * Every option of CRIU's RPC, in one table: what criu does with it. An
 * option is honoured (it sets what the CLI option of the same name sets),
 * accepted (whatever it asks for cannot make a difference here, and the log
 * says why), or refused when it asks for something criu does not do yet,
 * with a line naming it and what is missing. Nothing is ignored silently:
 * test_rpc_opts checks that every field of criu_opts has a row, and a
 * container feature that lands flips its rows to honoured.
 *
 * A configuration file (runc names /etc/criu/runc.conf) is read with the
 * same rows, by CRIU's long option names: a refused option is refused
 * whether the request or the file asks for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cgroupfs.h"
#include "core/external.h"
#include "core/log.h"
#include "core/lsm.h"
#include "core/util.h"
#include "rpc/rpc.h"

enum policy {
	HONOURED,
	ACCEPTED,
	REFUSED,
};

struct rule {
	const char *field;	/* of criu_opts */
	const char *cli;	/* CRIU's long option, in config files; NULL: none */
	enum policy policy;
	const char *why;	/* refused: what is missing; accepted: why it is harmless */
	/* honoured: an int or a const char * in struct rpc_setup (offset + 1) */
	size_t at;
	/* honoured otherwise, from the request and from a config file */
	int (*apply)(struct rpc_setup *rs, const CriuOpts *ro);
	int (*conf)(struct rpc_setup *rs, const char *val);
	/* refused only for some values: 1 when this one is */
	int (*refuses)(const CriuOpts *ro);
};

#define AT(member)	(offsetof(struct rpc_setup, member) + 1)

#define MNTNS	"is not implemented (Documentation/mounts.md says what is)"
#define CGROUPS	"criu keeps its own set of cgroup properties; other sets and cgroup yards " \
		"are not supported"

/* ------------------------------------------------------ honoured, by hand */

static int set_images_fd(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->images_dir_fd = ro->images_dir_fd;
	return 0;
}

static int set_work_fd(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->work_dir_fd = ro->work_dir_fd;
	return 0;
}

static int set_status_fd(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->status_fd = ro->status_fd;
	return 0;
}

static int conf_lsm_profile(struct rpc_setup *rs, const char *val)
{
	const char *kind, *name;

	if (!val || lsm_profile_parse(val, &kind, &name)) {
		snprintf(rs->err, sizeof(rs->err), "Option lsm_profile '%.200s' is not "
			 "apparmor:NAME, selinux:CONTEXT or smack:LABEL", val ? val : "");
		return -1;
	}
	rs->o.lsm_profile = val;
	return 0;
}

static int set_lsm_profile(struct rpc_setup *rs, const CriuOpts *ro)
{
	return conf_lsm_profile(rs, ro->lsm_profile);
}

static int conf_lsm_mount_context(struct rpc_setup *rs, const char *val)
{
	if (!val || !*val) {
		snprintf(rs->err, sizeof(rs->err), "Option lsm_mount_context needs a context");
		return -1;
	}
	rs->o.lsm_mount_context = val;
	return 0;
}

static int set_lsm_mount_context(struct rpc_setup *rs, const CriuOpts *ro)
{
	return conf_lsm_mount_context(rs, ro->lsm_mount_context);
}

static int set_pid(struct rpc_setup *rs, const CriuOpts *ro)
{
	if (ro->pid <= 0) {
		snprintf(rs->err, sizeof(rs->err), "Option pid %d is not a task", ro->pid);
		return -1;
	}
	rs->o.pid = ro->pid;
	rs->has_pid = 1;
	return 0;
}

static int conf_pid(struct rpc_setup *rs, const char *val)
{
	CriuOpts ro = CRIU_OPTS__INIT;
	char *end;

	ro.pid = val ? strtol(val, &end, 10) : 0;
	if (!val || *end)
		ro.pid = 0;
	return set_pid(rs, &ro);
}

/* CRIU writes the log into the work directory and nowhere else. */
static int log_name_ok(struct rpc_setup *rs, const char *name)
{
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		snprintf(rs->err, sizeof(rs->err), "Option log_file '%s' must be a file name "
			 "in the work directory, without '/'", name ? name : "");
		return -1;
	}
	rs->log_file = name;
	return 0;
}

static int set_log_file(struct rpc_setup *rs, const CriuOpts *ro)
{
	return log_name_ok(rs, ro->log_file);
}

static int conf_log_file(struct rpc_setup *rs, const char *val)
{
	return log_name_ok(rs, val);
}

static int set_cpu_cap(struct rpc_setup *rs, const CriuOpts *ro)
{
	/* CRIU's bits are ours; its "write the capabilities" bit means nothing here */
	rs->o.cpu_cap = ro->cpu_cap & CPU_CAP_ALL;
	return 0;
}

static int conf_cpu_cap(struct rpc_setup *rs, const char *val)
{
	snprintf(rs->err, sizeof(rs->err), "Option cpu-cap of a config file: give it in the "
		 "request (cpu_cap) instead");
	return -1;
}

static int set_sibling(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->o.restore_sibling = ro->rst_sibling;
	return 0;
}

static int set_config(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->config_file = ro->config_file;
	return 0;
}

static int conf_config(struct rpc_setup *rs, const char *val)
{
	snprintf(rs->err, sizeof(rs->err), "A config file can't name another one (config %s)",
		 val ? val : "");
	return -1;
}

static int set_log_stderr(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->log_to_stderr = ro->log_to_stderr;
	return 0;
}

/* A string the setup keeps (freed with it): values made up from the request. */
static const char *keep_str(struct rpc_setup *rs, char *s)
{
	if (!s || xgrow(rs->conf_strs, rs->nr_conf_strs)) {
		free(s);
		return NULL;
	}
	rs->conf_strs[rs->nr_conf_strs++] = s;
	return s;
}

/* manage_cgroups alone is CRIU's soft mode (the default here anyway). */
static int set_manage_cgroups(struct rpc_setup *rs, const CriuOpts *ro)
{
	if (ro->manage_cgroups && !ro->has_manage_cgroups_mode)
		rs->o.manage_cgroups = CG_MODE_SOFT;
	return 0;
}

static int set_cg_mode(struct rpc_setup *rs, const CriuOpts *ro)
{
	static const int modes[] = {
		[CRIU_CG_MODE__IGNORE] = CG_MODE_IGNORE, [CRIU_CG_MODE__CG_NONE] = CG_MODE_NONE,
		[CRIU_CG_MODE__PROPS] = CG_MODE_PROPS, [CRIU_CG_MODE__SOFT] = CG_MODE_SOFT,
		[CRIU_CG_MODE__FULL] = CG_MODE_FULL, [CRIU_CG_MODE__STRICT] = CG_MODE_STRICT,
		[CRIU_CG_MODE__DEFAULT] = CG_MODE_SOFT,
	};

	if ((unsigned int)ro->manage_cgroups_mode >= ARRAY_SIZE(modes)) {
		snprintf(rs->err, sizeof(rs->err), "Option manage_cgroups_mode %d is no mode",
			 ro->manage_cgroups_mode);
		return -1;
	}
	rs->o.manage_cgroups = modes[ro->manage_cgroups_mode];
	return 0;
}

/* "manage-cgroups [MODE]" in a config file: CRIU's names, soft alone. */
static int conf_cg_mode(struct rpc_setup *rs, const char *val)
{
	int mode = val ? cg_mode_parse(val) : CG_MODE_SOFT;

	if (mode < 0) {
		snprintf(rs->err, sizeof(rs->err), "Config option manage-cgroups: bad mode '%.64s'",
			 val);
		return -1;
	}
	rs->o.manage_cgroups = mode;
	return 0;
}

static int add_cg_root(struct rpc_setup *rs, const char *ctrl, const char *path)
{
	struct cg_root *n = xrealloc(rs->cg_roots, (rs->o.nr_cg_roots + 1) * sizeof(*n));

	if (!n)
		return -1;
	rs->cg_roots = n;
	rs->o.cg_roots = n;
	if (!path || path[0] != '/' || (ctrl && !*ctrl)) {
		snprintf(rs->err, sizeof(rs->err), "Option cg_root: '%.64s%s%.200s' is not "
			 "[CONTROLLER:]/PATH", ctrl ? ctrl : "", ctrl ? ":" : "", path ? path : "");
		return -1;
	}
	n[rs->o.nr_cg_roots].ctrl = ctrl;
	n[rs->o.nr_cg_roots++].path = path;
	return 0;
}

static int set_cg_root(struct rpc_setup *rs, const CriuOpts *ro)
{
	size_t i;

	for (i = 0; i < ro->n_cg_root; i++)
		if (add_cg_root(rs, ro->cg_root[i]->ctrl && *ro->cg_root[i]->ctrl ?
				ro->cg_root[i]->ctrl : NULL, ro->cg_root[i]->path))
			return -1;
	return 0;
}

static int conf_cg_root(struct rpc_setup *rs, const char *val)
{
	struct cg_root r;
	char *copy = val ? (char *)keep_str(rs, xstrdup(val)) : NULL;

	if (!copy || cg_root_parse(copy, &r)) {
		snprintf(rs->err, sizeof(rs->err), "Config option cgroup-root: '%.200s' is not "
			 "[CONTROLLER:]/PATH", val ? val : "");
		return -1;
	}
	return add_cg_root(rs, r.ctrl, r.path);
}

/* ---------------------------------------------------- network namespaces */

/* --external and --ext-mount-map: criu's own list, whatever sent them. */
static int add_external(struct rpc_setup *rs, const char *v, int map)
{
	char err[256];

	if (!v || external_add(&rs->o, v, map, err, sizeof(err))) {
		snprintf(rs->err, sizeof(rs->err), "Option %s refused: %s",
			 map ? "ext_mnt" : "external", v ? err : "it needs a value");
		return -1;
	}
	return 0;
}

/* irmap_scan_paths: absolute paths, as the tree sees them */
static int add_irmap_path(struct rpc_setup *rs, const char *v)
{
	const char **n;

	if (!v || v[0] != '/') {
		snprintf(rs->err, sizeof(rs->err), "Option irmap_scan_paths refused: '%.200s' is "
			 "not an absolute path", v ? v : "");
		return -1;
	}
	n = xrealloc(rs->o.irmap_paths, (rs->o.nr_irmap_paths + 1) * sizeof(*n));
	if (!n)
		return -1;
	rs->o.irmap_paths = n;
	n[rs->o.nr_irmap_paths++] = v;
	return 0;
}

static int set_irmap_paths(struct rpc_setup *rs, const CriuOpts *ro)
{
	size_t i;

	for (i = 0; i < ro->n_irmap_scan_paths; i++)
		if (add_irmap_path(rs, ro->irmap_scan_paths[i]))
			return -1;
	return 0;
}

static int conf_irmap_path(struct rpc_setup *rs, const char *val)
{
	return add_irmap_path(rs, val ? keep_str(rs, xstrdup(val)) : NULL);
}

/* CRIU's veth_pair {if_in, if_out} is --external veth[IF_IN]:IF_OUT */
static int set_veths(struct rpc_setup *rs, const CriuOpts *ro)
{
	char *s;
	size_t i;
	int ret;

	for (i = 0; i < ro->n_veths; i++) {
		if (asprintf(&s, "veth[%s]:%s", ro->veths[i]->if_in, ro->veths[i]->if_out) < 0)
			return -1;
		ret = add_external(rs, s, 0);
		free(s);
		if (ret)
			return -1;
	}
	return 0;
}

/* --veth-pair IN=OUT[@BRIDGE] */
static int conf_veths(struct rpc_setup *rs, const char *val)
{
	const char *eq = val ? strchr(val, '=') : NULL;
	char *s;
	int ret;

	if (!eq) {
		snprintf(rs->err, sizeof(rs->err), "Config option veth-pair: not IN=OUT[@BRIDGE]");
		return -1;
	}
	if (asprintf(&s, "veth[%.*s]:%s", (int)(eq - val), val, eq + 1) < 0)
		return -1;
	ret = add_external(rs, s, 0);
	free(s);
	return ret;
}

/*
 * The client's fds (swrk: inherited, service: its own): numbers of the
 * client's, opened as ours by the server (rpc_open_inherited()).
 */
static int add_inherit(struct rpc_setup *rs, const char *key, int fd)
{
	struct inherit_fd *n;

	if (!key || !*key || fd < 0) {
		snprintf(rs->err, sizeof(rs->err), "Option inherit_fd refused: fd %d with key "
			 "'%.64s' is not an fd and a key", fd, key ? key : "");
		return -1;
	}
	n = xrealloc(rs->o.inherit_fds, (rs->o.nr_inherit_fds + 1) * sizeof(*n));
	if (!n)
		return -1;
	rs->o.inherit_fds = n;
	n[rs->o.nr_inherit_fds].fd = fd;
	n[rs->o.nr_inherit_fds++].key = key;
	return 0;
}

static int set_inherit_fd(struct rpc_setup *rs, const CriuOpts *ro)
{
	size_t i;

	for (i = 0; i < ro->n_inherit_fd; i++)
		if (add_inherit(rs, ro->inherit_fd[i]->key, ro->inherit_fd[i]->fd))
			return -1;
	return 0;
}

static int conf_inherit_fd(struct rpc_setup *rs, const char *val)
{
	struct inherit_fd ifd;
	const char *v = val ? keep_str(rs, xstrdup(val)) : NULL;
	char err[256];

	if (!v || inherit_fd_parse(v, &ifd, err, sizeof(err))) {
		snprintf(rs->err, sizeof(rs->err), "Config option inherit-fd: %s",
			 v ? err : "needs a value");
		return -1;
	}
	return add_inherit(rs, ifd.key, ifd.fd);
}

static int set_empty_ns(struct rpc_setup *rs, const CriuOpts *ro)
{
	if (ro->empty_ns & ~CLONE_NEWNET) {
		snprintf(rs->err, sizeof(rs->err), "Option empty_ns 0x%x refused: only the "
			 "network namespace (CLONE_NEWNET) can be empty", ro->empty_ns);
		return -1;
	}
	rs->o.empty_ns = ro->empty_ns;
	return 0;
}

static int conf_empty_ns(struct rpc_setup *rs, const char *val)
{
	if (!val || strcmp(val, "net")) {
		snprintf(rs->err, sizeof(rs->err), "Config option empty-ns: only net");
		return -1;
	}
	rs->o.empty_ns |= CLONE_NEWNET;
	return 0;
}

static int set_network_lock(struct rpc_setup *rs, const CriuOpts *ro)
{
	switch (ro->network_lock) {
	case CRIU_NETWORK_LOCK_METHOD__IPTABLES: rs->o.network_lock = NETLOCK_IPTABLES; break;
	case CRIU_NETWORK_LOCK_METHOD__NFTABLES: rs->o.network_lock = NETLOCK_NFTABLES; break;
	case CRIU_NETWORK_LOCK_METHOD__SKIP: rs->o.network_lock = NETLOCK_SKIP; break;
	default:
		snprintf(rs->err, sizeof(rs->err), "Option network_lock %d refused: not a "
			 "method", ro->network_lock);
		return -1;
	}
	return 0;
}

static int conf_network_lock(struct rpc_setup *rs, const char *val)
{
	static const char *const names[] = { "iptables", "nftables", "skip" };
	CriuOpts ro = CRIU_OPTS__INIT;
	size_t i;

	for (i = 0; val && i < ARRAY_SIZE(names); i++)
		if (!strcmp(val, names[i])) {
			ro.network_lock = i + CRIU_NETWORK_LOCK_METHOD__IPTABLES;
			return set_network_lock(rs, &ro);
		}
	snprintf(rs->err, sizeof(rs->err), "Config option network-lock: iptables, nftables "
		 "or skip");
	return -1;
}

static int set_ghost_limit(struct rpc_setup *rs, const CriuOpts *ro)
{
	rs->o.ghost_limit = ro->ghost_limit;
	rs->o.ghost_limit_set = 1;
	return 0;
}

static int conf_ghost_limit(struct rpc_setup *rs, const char *val)
{
	if (!val || parse_size(val, &rs->o.ghost_limit)) {
		snprintf(rs->err, sizeof(rs->err), "Config option ghost-limit: a size (bytes, "
			 "or with K, M or G)");
		return -1;
	}
	rs->o.ghost_limit_set = 1;
	return 0;
}

/* ext_unix_sk (every socket) and unix_sk_ino (these): --ext-unix-sk */
static int add_ext_unix(struct rpc_setup *rs, const char *list)
{
	char err[256];

	if (external_add_unix(&rs->o, list, err, sizeof(err))) {
		snprintf(rs->err, sizeof(rs->err), "Option ext_unix_sk refused: %s", err);
		return -1;
	}
	return 0;
}

static int set_ext_unix_sk(struct rpc_setup *rs, const CriuOpts *ro)
{
	return ro->ext_unix_sk ? add_ext_unix(rs, NULL) : 0;
}

static int set_unix_sk_ino(struct rpc_setup *rs, const CriuOpts *ro)
{
	char ino[16];
	size_t i;

	for (i = 0; i < ro->n_unix_sk_ino; i++) {
		snprintf(ino, sizeof(ino), "%u", ro->unix_sk_ino[i]->inode);
		if (add_ext_unix(rs, ino))
			return -1;
	}
	return 0;
}

static int conf_ext_unix_sk(struct rpc_setup *rs, const char *val)
{
	return add_ext_unix(rs, val);
}

static int set_external(struct rpc_setup *rs, const CriuOpts *ro)
{
	size_t i;

	for (i = 0; i < ro->n_external; i++)
		if (add_external(rs, ro->external[i], 0))
			return -1;
	return 0;
}

static int conf_external(struct rpc_setup *rs, const char *val)
{
	return add_external(rs, val, 0);
}

static int set_ext_mnt(struct rpc_setup *rs, const CriuOpts *ro)
{
	char buf[PATH_MAX * 2 + 8];
	size_t i;

	for (i = 0; i < ro->n_ext_mnt; i++) {
		snprintf(buf, sizeof(buf), "%s:%s", ro->ext_mnt[i]->key, ro->ext_mnt[i]->val);
		if (add_external(rs, buf, 1))
			return -1;
	}
	return 0;
}

static int conf_ext_mnt(struct rpc_setup *rs, const char *val)
{
	return add_external(rs, val, 1);
}

static int set_auto_ext_mnt(struct rpc_setup *rs, const CriuOpts *ro)
{
	return ro->auto_ext_mnt ? add_external(rs, "auto", 1) : 0;
}

/*
 * ps: the dump's images go to the page server at address:port. CRIU takes
 * ps.fd only from a lazy restore's client; so do we (refused).
 */
static int set_ps(struct rpc_setup *rs, const CriuOpts *ro)
{
	if (ro->ps->has_fd) {
		snprintf(rs->err, sizeof(rs->err), "Option ps.fd refused: a connected socket "
			 "is for lazy restores, which are not implemented");
		return -1;
	}
	rs->o.page_server = 1;
	rs->o.address = ro->ps->address;
	rs->o.port = ro->ps->has_port ? ro->ps->port : -1;
	return 0;
}

/* "page-server" in a config file: a flag, with address and port given otherwise */
static int conf_ps(struct rpc_setup *rs, const char *val)
{
	(void)val;
	rs->o.page_server = 1;
	return 0;
}

/* ------------------------------------------------ refused for some values */

static const struct rule rules[] = {
	{ "images_dir_fd", NULL, HONOURED, NULL, 0, set_images_fd, NULL, NULL },
	{ "images_dir", "images-dir", HONOURED, NULL, AT(images_dir), NULL, NULL, NULL },
	{ "pid", "tree", HONOURED, NULL, 0, set_pid, conf_pid, NULL },
	{ "leave_running", "leave-running", HONOURED, NULL, AT(o.leave_running), NULL, NULL, NULL },
	{ "ext_unix_sk", "ext-unix-sk", HONOURED, NULL, 0, set_ext_unix_sk, conf_ext_unix_sk,
	  NULL },
	{ "tcp_established", "tcp-established", HONOURED, NULL, AT(o.tcp_established), NULL, NULL,
	  NULL },
	{ "evasive_devices", "evasive-devices", ACCEPTED,
	  "a device is reopened by its path; with the path gone the restore fails, evasive or not",
	  0, NULL, NULL, NULL },
	{ "shell_job", "shell-job", HONOURED, NULL, AT(o.shell_job), NULL, NULL, NULL },
	{ "file_locks", "file-locks", HONOURED, NULL, AT(o.file_locks), NULL, NULL, NULL },
	{ "log_level", "verbosity", HONOURED, NULL, AT(log_level), NULL, NULL, NULL },
	{ "log_file", "log-file", HONOURED, NULL, 0, set_log_file, conf_log_file, NULL },
	{ "ps", "page-server", HONOURED, NULL, 0, set_ps, conf_ps, NULL },
	{ "notify_scripts", NULL, HONOURED, NULL, AT(notify), NULL, NULL, NULL },
	{ "root", "root", HONOURED, NULL, AT(o.root), NULL, NULL, NULL },
	{ "parent_img", "prev-images-dir", HONOURED, NULL, AT(o.prev_images_dir), NULL, NULL,
	  NULL },
	{ "track_mem", "track-mem", HONOURED, NULL, AT(o.track_mem), NULL, NULL, NULL },
	{ "auto_dedup", "auto-dedup", HONOURED, NULL, AT(o.auto_dedup), NULL, NULL, NULL },
	{ "work_dir_fd", NULL, HONOURED, NULL, 0, set_work_fd, NULL, NULL },
	{ "link_remap", "link-remap", HONOURED, NULL, AT(o.link_remap), NULL, NULL, NULL },
	{ "veths", "veth-pair", HONOURED, NULL, 0, set_veths, conf_veths, NULL },
	{ "cpu_cap", "cpu-cap", HONOURED, NULL, 0, set_cpu_cap, conf_cpu_cap, NULL },
	{ "force_irmap", "force-irmap", HONOURED, NULL, AT(o.force_irmap), NULL, NULL, NULL },
	{ "exec_cmd", "exec-cmd", REFUSED, "running a command after the restore is not "
	  "implemented", 0, NULL, NULL, NULL },
	{ "ext_mnt", "ext-mount-map", HONOURED, NULL, 0, set_ext_mnt, conf_ext_mnt, NULL },
	{ "manage_cgroups", "manage-cgroups", HONOURED, NULL, 0, set_manage_cgroups,
	  conf_cg_mode, NULL },
	{ "cg_root", "cgroup-root", HONOURED, NULL, 0, set_cg_root, conf_cg_root, NULL },
	{ "rst_sibling", NULL, HONOURED, NULL, 0, set_sibling, NULL, NULL },
	{ "inherit_fd", "inherit-fd", HONOURED, NULL, 0, set_inherit_fd, conf_inherit_fd, NULL },
	{ "auto_ext_mnt", NULL, HONOURED, NULL, 0, set_auto_ext_mnt, NULL, NULL },
	{ "ext_sharing", "enable-external-sharing", REFUSED, "external mounts " MNTNS, 0, NULL,
	  NULL, NULL },
	{ "ext_masters", "enable-external-masters", REFUSED, "external mounts " MNTNS, 0, NULL,
	  NULL, NULL },
	{ "skip_mnt", "skip-mnt", REFUSED, "skipping mounts " MNTNS, 0, NULL, NULL, NULL },
	{ "enable_fs", "enable-fs", REFUSED, "filesystems to mount " MNTNS, 0, NULL, NULL,
	  NULL },
	{ "unix_sk_ino", NULL, HONOURED, NULL, 0, set_unix_sk_ino, NULL, NULL },
	{ "manage_cgroups_mode", NULL, HONOURED, NULL, 0, set_cg_mode, NULL, NULL },
	{ "ghost_limit", "ghost-limit", HONOURED, NULL, 0, set_ghost_limit, conf_ghost_limit,
	  NULL },
	{ "irmap_scan_paths", "irmap-scan-path", HONOURED, NULL, 0, set_irmap_paths,
	  conf_irmap_path, NULL },
	{ "external", "external", HONOURED, NULL, 0, set_external, conf_external, NULL },
	{ "empty_ns", "empty-ns", HONOURED, NULL, 0, set_empty_ns, conf_empty_ns, NULL },
	{ "join_ns", "join-ns", REFUSED, "joining namespaces on restore is not supported yet",
	  0, NULL, NULL, NULL },
	{ "cgroup_props", "cgroup-props", REFUSED, CGROUPS, 0, NULL, NULL, NULL },
	{ "cgroup_props_file", "cgroup-props-file", REFUSED, CGROUPS, 0, NULL, NULL, NULL },
	{ "cgroup_dump_controller", "cgroup-dump-controller", REFUSED, CGROUPS, 0, NULL, NULL,
	  NULL },
	{ "freeze_cgroup", "freeze-cgroup", HONOURED, NULL, AT(o.freeze_cgroup), NULL, NULL,
	  NULL },
	{ "timeout", "timeout", REFUSED, "a time limit on freezing is not implemented", 0,
	  NULL, NULL, NULL },
	{ "tcp_skip_in_flight", "skip-in-flight", HONOURED, NULL, AT(o.tcp_skip_in_flight), NULL,
	  NULL, NULL },
	{ "weak_sysctls", "weak-sysctls", REFUSED, "skipping sysctls the kernel lacks is not "
	  "implemented", 0, NULL, NULL, NULL },
	{ "lazy_pages", "lazy-pages", REFUSED, "lazy restore through RPC is not implemented "
	  "(criu restore --lazy-pages is)",
	  0, NULL, NULL, NULL },
	{ "status_fd", "status-fd", HONOURED, NULL, 0, set_status_fd, NULL, NULL },
	{ "orphan_pts_master", "orphan-pts-master", HONOURED, NULL, AT(o.orphan_pts_master),
	  NULL, NULL, NULL },
	{ "config_file", "config", HONOURED, NULL, 0, set_config, conf_config, NULL },
	{ "tcp_close", "tcp-close", HONOURED, NULL, AT(o.tcp_close), NULL, NULL, NULL },
	{ "lsm_profile", "lsm-profile", HONOURED, NULL, 0, set_lsm_profile, conf_lsm_profile,
	  NULL },
	{ "tls_cacert", "tls-cacert", HONOURED, NULL, AT(o.tls.cacert), NULL, NULL, NULL },
	{ "tls_cacrl", "tls-cacrl", HONOURED, NULL, AT(o.tls.cacrl), NULL, NULL, NULL },
	{ "tls_cert", "tls-cert", HONOURED, NULL, AT(o.tls.cert), NULL, NULL, NULL },
	{ "tls_key", "tls-key", HONOURED, NULL, AT(o.tls.key), NULL, NULL, NULL },
	{ "tls", "tls", HONOURED, NULL, AT(o.tls.on), NULL, NULL, NULL },
	{ "tls_no_cn_verify", "tls-no-cn-verify", HONOURED, NULL, AT(o.tls.no_cn_verify), NULL,
	  NULL, NULL },
	{ "cgroup_yard", "cgroup-yard", REFUSED, CGROUPS, 0, NULL, NULL, NULL },
	{ "pre_dump_mode", "pre-dump-mode", ACCEPTED, "it matters to pre-dumps only, which are "
	  "refused", 0, NULL, NULL, NULL },
	{ "pidfd_store_sk", NULL, ACCEPTED, "pidfds are kept for iterative pre-dumps only, "
	  "which are refused", 0, NULL, NULL, NULL },
	{ "lsm_mount_context", "lsm-mount-context", HONOURED, NULL, 0, set_lsm_mount_context,
	  conf_lsm_mount_context, NULL },
	{ "network_lock", "network-lock", HONOURED, NULL, 0, set_network_lock, conf_network_lock,
	  NULL },
	{ "mntns_compat_mode", "mntns-compat-mode", ACCEPTED, "criu has one way of making mounts, "
	  "neither of CRIU's two engines", 0, NULL, NULL, NULL },
	{ "skip_file_rwx_check", "skip-file-rwx-check", REFUSED, "restore checks file modes "
	  "strictly", 0, NULL, NULL, NULL },
	{ "unprivileged", "unprivileged", REFUSED, "criu needs CAP_SYS_PTRACE and "
	  "CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN)", 0, NULL, NULL, NULL },
	{ "leave_stopped", "leave-stopped", HONOURED, NULL, AT(o.leave_stopped), NULL, NULL,
	  NULL },
	{ "display_stats", "display-stats", HONOURED, NULL, AT(o.display_stats), NULL, NULL,
	  NULL },
	{ "log_to_stderr", NULL, HONOURED, NULL, 0, set_log_stderr, NULL, NULL },
	{ "allow_uprobes", "allow-uprobes", REFUSED, "uprobes areas are not dumped", 0, NULL,
	  NULL, NULL },
	{ "ghost_fiemap", "ghost-fiemap", ACCEPTED, "the holes of a deleted file are found with "
	  "SEEK_DATA/SEEK_HOLE, whatever the filesystem", 0, NULL, NULL, NULL },
	{ "file_validation_method", "file-validation", ACCEPTED, "restore checks files its own "
	  "way (Documentation/files.md), neither by size alone nor by build-id", 0, NULL, NULL,
	  NULL },
};

int rpc_opts_rule_count(void)
{
	return ARRAY_SIZE(rules);
}

const char *rpc_opts_rule_field(int i)
{
	return i >= 0 && i < (int)ARRAY_SIZE(rules) ? rules[i].field : NULL;
}

/* ------------------------------------------------------- generic access */

static const ProtobufCFieldDescriptor *field_of(const struct rule *r)
{
	return protobuf_c_message_descriptor_get_field_by_name(&criu_opts__descriptor, r->field);
}

/* Was the field sent at all? */
static int field_sent(const CriuOpts *ro, const ProtobufCFieldDescriptor *f)
{
	const char *base = (const char *)ro;

	if (f->label == PROTOBUF_C_LABEL_REQUIRED)
		return 1;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return *(const size_t *)(base + f->quantifier_offset) > 0;
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
		return *(void *const *)(base + f->offset) != NULL;
	return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
}

/* Does it ask for something: true, non-zero, a non-empty string or list? */
static int field_asks(const CriuOpts *ro, const ProtobufCFieldDescriptor *f)
{
	const char *p = (const char *)ro + f->offset;

	if (!field_sent(ro, f))
		return 0;
	switch (f->type) {
	case PROTOBUF_C_TYPE_BOOL:
		return f->label == PROTOBUF_C_LABEL_REPEATED || *(const protobuf_c_boolean *)p;
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_ENUM:
		return f->label == PROTOBUF_C_LABEL_REPEATED || *(const uint32_t *)p;
	case PROTOBUF_C_TYPE_STRING:
		return f->label == PROTOBUF_C_LABEL_REPEATED || **(char *const *)p;
	default:
		return 1;
	}
}

/* A plain honoured field: copied as an int or a string into @rs. */
static void copy_plain(struct rpc_setup *rs, const struct rule *r, const CriuOpts *ro,
		       const ProtobufCFieldDescriptor *f)
{
	char *dst = (char *)rs + r->at - 1;
	const char *src = (const char *)ro + f->offset;

	if (f->type == PROTOBUF_C_TYPE_STRING)
		*(const char **)dst = *(char *const *)src;
	else if (f->type == PROTOBUF_C_TYPE_BOOL)
		*(int *)dst = *(const protobuf_c_boolean *)src;
	else
		*(int *)dst = *(const int32_t *)src;
}

/* What the request asked, one debug line per field sent: clients differ. */
void rpc_log_opts(const CriuOpts *ro)
{
	const ProtobufCFieldDescriptor *f;
	const char *p;
	unsigned i;

	for (i = 0; ro && i < criu_opts__descriptor.n_fields; i++) {
		f = &criu_opts__descriptor.fields[i];
		p = (const char *)ro + f->offset;
		if (!field_sent(ro, f))
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			pr_debug("  opts.%s: %zu item(s)", f->name,
				 *(const size_t *)((const char *)ro + f->quantifier_offset));
		else if (f->type == PROTOBUF_C_TYPE_STRING)
			pr_debug("  opts.%s: '%s'", f->name, *(char *const *)p);
		else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
			pr_debug("  opts.%s: a %s", f->name,
				 ((const ProtobufCMessageDescriptor *)f->descriptor)->name);
		else if (f->type == PROTOBUF_C_TYPE_BOOL)
			pr_debug("  opts.%s: %s", f->name,
				 *(const protobuf_c_boolean *)p ? "true" : "false");
		else
			pr_debug("  opts.%s: %d", f->name, *(const int32_t *)p);
	}
}

/* ---------------------------------------------------------- the mapping */

static void setup_init(struct rpc_setup *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->images_dir_fd = rs->work_dir_fd = rs->status_fd = -1;
	rs->o.port = rs->o.status_fd = -1;
	rs->log_level = LOG_WARN;		/* CRIU's default: 2 */
	rs->o.cpu_cap = CPU_CAP_DEFAULT;
	rs->o.restore_detached = 1;		/* the client owns the tree, criu returns */
}

/* Adds @r, asked for as @what, to the refusal line of @rs. */
static void refuse(struct rpc_setup *rs, const struct rule *r, const char *what, int *nr)
{
	size_t len = strlen(rs->err);

	if (!(*nr)++)
		snprintf(rs->err, sizeof(rs->err), "Option %s%s refused: %s", r->field,
			 what, r->why);
	else
		snprintf(rs->err + len, sizeof(rs->err) - len, "%s%s",
			 *nr == 2 ? "; also refused: " : ", ", r->field);
}

static int mode_allows(struct rpc_setup *rs, const CriuOpts *ro, enum rpc_mode mode)
{
	/* the worker of a service is not the client's child: it can't adopt */
	if (mode == RPC_SERVICE && ro->has_rst_sibling && ro->rst_sibling) {
		snprintf(rs->err, sizeof(rs->err), "Option rst_sibling refused: only criu swrk, "
			 "the client's child, can make the restored root the client's child");
		return -1;
	}
	return 0;
}

static int apply_rule(struct rpc_setup *rs, const struct rule *r, const CriuOpts *ro,
		      int *refused)
{
	const ProtobufCFieldDescriptor *f = field_of(r);
	char what[96] = "";

	if (!f || !field_sent(ro, f))
		return 0;
	switch (r->policy) {
	case HONOURED:
		if (r->apply)
			return r->apply(rs, ro);
		copy_plain(rs, r, ro, f);
		return 0;
	case ACCEPTED:
		if (field_asks(ro, f))
			pr_info("Option %s accepted: %s", r->field, r->why);
		return 0;
	case REFUSED:
		if (r->refuses ? !r->refuses(ro) : !field_asks(ro, f))
			return 0;
		if (f->type == PROTOBUF_C_TYPE_STRING && f->label != PROTOBUF_C_LABEL_REPEATED)
			snprintf(what, sizeof(what), " '%.64s'", *(char *const *)((char *)ro +
										  f->offset));
		refuse(rs, r, what, refused);
		return 0;
	}
	return 0;
}

int rpc_setup_from_opts(struct rpc_setup *rs, const CriuOpts *ro, CriuReqType type,
			enum rpc_mode mode)
{
	int i, refused = 0;

	setup_init(rs);
	if (!ro)
		return 0;
	if (mode_allows(rs, ro, mode))
		goto bad;
	for (i = 0; i < (int)ARRAY_SIZE(rules); i++)
		if (apply_rule(rs, &rules[i], ro, &refused))
			goto bad;
	if (refused)
		goto bad;
	if (rs->log_level < 0 || rs->log_level > LOG_DEBUG)
		rs->log_level = rs->log_level < 0 ? 0 : LOG_DEBUG;
	return 0;
bad:
	rs->cr_errno = EBADRQC;
	return -1;
}

/* ---------------------------------------------------------- config file */

static const struct rule *rule_by_cli(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rules); i++)
		if (rules[i].cli && !strcmp(rules[i].cli, name))
			return &rules[i];
	return NULL;
}

/* The value of a config line: the rest after blanks, quotes removed. */
static char *line_value(char *p)
{
	size_t n;

	p += strspn(p, " \t");
	n = strlen(p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		p[--n] = '\0';
	if (n >= 2 && (p[0] == '"' || p[0] == '\'') && p[n - 1] == p[0]) {
		p[n - 1] = '\0';
		p++;
	}
	return *p ? p : NULL;
}

static int conf_plain(struct rpc_setup *rs, const struct rule *r, const char *key,
		      const char *val)
{
	const ProtobufCFieldDescriptor *f = field_of(r);
	char *dst = (char *)rs + r->at - 1, *end;
	long v;

	/*
	 * An option a setter takes from the request (status-fd: a client's fd)
	 * has no place of its own here: writing at r->at - 1 hit the byte
	 * before rs (found by test/fuzz/fuzz_rpc).
	 */
	if (!r->at) {
		snprintf(rs->err, sizeof(rs->err), "Config option %s: give it in the request "
			 "instead", key);
		return -1;
	}
	if (f->type == PROTOBUF_C_TYPE_STRING) {
		if (xgrow(rs->conf_strs, rs->nr_conf_strs) || !val ||
		    !(rs->conf_strs[rs->nr_conf_strs] = xstrdup(val))) {
			snprintf(rs->err, sizeof(rs->err), "Config option %s needs a value", key);
			return -1;
		}
		*(const char **)dst = rs->conf_strs[rs->nr_conf_strs++];
		return 0;
	}
	if (f->type == PROTOBUF_C_TYPE_BOOL) {
		*(int *)dst = 1;
		return 0;
	}
	v = val ? strtol(val, &end, 10) : -1;
	if (!val || *end || v < 0 || v > INT_MAX) {
		snprintf(rs->err, sizeof(rs->err), "Config option %s: bad value '%s'", key,
			 val ? val : "");
		return -1;
	}
	*(int *)dst = v;
	return 0;
}

static int conf_line(struct rpc_setup *rs, char *line, int *refused)
{
	const struct rule *r;
	char *key = line, *val, *eq;

	key += strspn(key, " \t");
	eq = key + strcspn(key, " \t\r=");
	val = *eq ? line_value(eq + 1) : NULL;
	*eq = '\0';
	if (!strcmp(key, "v"))
		key = "verbosity";
	if (!strcmp(key, "work-dir")) {
		snprintf(rs->err, sizeof(rs->err), "Config option work-dir: give work_dir_fd "
			 "in the request instead");
		return -1;
	}
	r = rule_by_cli(key);
	/* only an option's name is echoed: the file may be anything readable */
	if (!r && (strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(key) ||
		   strlen(key) > 40)) {
		snprintf(rs->err, sizeof(rs->err), "Config line is not an option");
		return -1;
	}
	if (!r) {
		snprintf(rs->err, sizeof(rs->err), "Config option %s is not known", key);
		return -1;
	}
	switch (r->policy) {
	case HONOURED:
		return r->conf ? r->conf(rs, val) : conf_plain(rs, r, key, val);
	case ACCEPTED:
		pr_info("Config option %s accepted: %s", key, r->why);
		return 0;
	case REFUSED:
		refuse(rs, r, " (from the config file)", refused);
		return 0;
	}
	return 0;
}

int rpc_setup_config_text(struct rpc_setup *rs, char *text, const char *name)
{
	char *line, *next, *hash;
	int nr = 0, refused = 0;
	char err[sizeof(rs->err)];

	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		nr++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (!line[strspn(line, " \t\r")])
			continue;
		if (conf_line(rs, line, &refused)) {
			snprintf(err, sizeof(err), "%s", rs->err);
			snprintf(rs->err, sizeof(rs->err), "%.200s, line %d: %.280s", name, nr, err);
			rs->cr_errno = EBADRQC;
			return -1;
		}
	}
	if (!refused)
		return 0;
	rs->cr_errno = EBADRQC;
	return -1;
}

int rpc_setup_config_file(struct rpc_setup *rs, const char *path)
{
	size_t len;

	rs->conf_buf = read_file(-1, path, &len);
	if (!rs->conf_buf) {
		if (errno == ENOENT) {
			pr_info("Config file %s is not there: nothing to apply", path);
			return 0;
		}
		snprintf(rs->err, sizeof(rs->err), "Can't read config file %s: %s", path,
			 strerror(errno));
		rs->cr_errno = errno;
		return -1;
	}
	if (strlen(rs->conf_buf) != len) {
		snprintf(rs->err, sizeof(rs->err), "Config file %s is not text", path);
		rs->cr_errno = EBADRQC;
		return -1;
	}
	return rpc_setup_config_text(rs, rs->conf_buf, path);
}

void rpc_setup_free(struct rpc_setup *rs)
{
	int i;

	for (i = 0; i < rs->nr_conf_strs; i++)
		free(rs->conf_strs[i]);
	free(rs->conf_strs);
	free(rs->o.inherit_fds);
	rs->o.inherit_fds = NULL;
	free(rs->o.irmap_paths);
	rs->o.irmap_paths = NULL;
	rs->o.nr_irmap_paths = 0;
	free(rs->conf_buf);
	free(rs->cg_roots);
	rs->cg_roots = NULL;
	rs->conf_strs = NULL;
	rs->conf_buf = NULL;
	rs->nr_conf_strs = 0;
	external_free(&rs->o);
}
