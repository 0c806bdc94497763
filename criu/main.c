// SPDX-License-Identifier: GPL-2.0
/* Command line, CRIU-compatible: criu COMMAND [OPTIONS]. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "core/cgroupfs.h"
#include "core/lsm.h"
#include "core/external.h"
#include "core/log.h"
#include "core/opts.h"
#include "core/util.h"
#include "hooks.h"
#include "image/image.h"
#include "parts/mm-jobs.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage:\n"
"  criu dump -t PID -D DIR [options]\n"
"  criu pre-dump -t PID -D DIR [--track-mem] [--prev-images-dir DIR] [options]\n"
"  criu restore -D DIR [-d] [options]\n"
"  criu check [--feature NAME]\n"
"  criu cpuinfo dump|check -D DIR\n"
"  criu swrk FD\n"
"  criu service --address PATH [-d] [--pidfile FILE]\n"
"  criu page-server -D DIR --port PORT [--address ADDR] [-d] [--pidfile FILE]\n"
"  criu lazy-pages -D DIR [-W DIR] [--status-fd FD] [-d] [--pidfile FILE]\n"
"\n"
"Commands:\n"
"  dump           checkpoint a process into a directory of images\n"
"  pre-dump       save the memory (and the rest) while the tree runs on, for\n"
"                 a later dump --prev-images-dir (docs: pre-dump.md)\n"
"  restore        restore a process from images\n"
"  check          check that the kernel has what criu needs\n"
"  cpuinfo dump   save this CPU's description into DIR/cpuinfo.img\n"
"  cpuinfo check  check that this CPU can run what DIR/cpuinfo.img describes\n"
"  swrk           serve CRIU's RPC to the client at the other end of socket FD\n"
"  service        serve CRIU's RPC on a unix socket (-d: as a daemon)\n"
"  page-server    receive one dump's images over TCP into DIR (-d: as a daemon)\n"
"  lazy-pages     serve the pages of DIR to a restore --lazy-pages (userfaultfd)\n"
"\n"
"Options:\n"
"  -t|--tree PID           the task to dump (a session leader, or see --shell-job)\n"
"  -D|--images-dir DIR     directory of the images\n"
"  -W|--work-dir DIR       directory for logs and pidfile (default: images dir)\n"
"  -o|--log-file FILE      log file, relative to the work dir\n"
"  -v[NUM]|--verbosity NUM 0 none, 1 errors, 2 +warnings (default), 3 +info, 4 +debug\n"
"  --leave-running         keep the task running after dump\n"
"  --leave-stopped         leave the task stopped after dump\n"
"  -j|--shell-job          the task is not a session leader (a job of a shell)\n"
"  --orphan-pts-master     a pty slave whose master is outside the tree: dumped;\n"
"                          restore makes a new pair and hands the master over (RPC)\n"
"  -l|--file-locks         dump: save the file locks the tree holds (else refused)\n"
"  -d|--restore-detached   return once the restored task runs\n"
"  --pidfile FILE          write the restored task's pid to FILE\n"
"  --cpu-cap[=CAP[,CAP]]   CPU checks on restore and cpuinfo check: fpu, ins, cpu,\n"
"                          all, none, ^CAP to drop one (default fpu,ins)\n"
"  --cpu-map SRC:DST[,...] run on CPU DST what was allowed on CPU SRC\n"
"  --cpu-ns=ignore         restore a tree dumped in a CPU namespace without one\n"
"                          (its affinities go to this machine's CPUs)\n"
"  --action-script PATH    run PATH at each hook (pre-dump, post-restore...)\n"
"  --display-stats         log what stats-dump / stats-restore hold\n"
"  --feature NAME          check: only this feature (CRIU's names)\n"
"  --address PATH          service: the socket to listen on\n"
"  --address ADDR          page-server: the address to listen on (default any);\n"
"                          dump --page-server: the page server's host\n"
"  --port PORT             the page server's TCP port (page-server: 0 picks one\n"
"                          and prints it)\n"
"  --page-server           dump: send the images to the page server at\n"
"                          --address:--port; DIR keeps the logs only\n"
"  --status-fd FD          page-server, lazy-pages: write one '\\0' to FD once\n"
"                          listening\n"
"  --lazy-pages            restore: private anonymous memory comes from criu\n"
"                          lazy-pages (its socket in the work dir) as it is used\n"
"  --tls                   page-server, dump --page-server: TLS on the connection,\n"
"                          each side's certificate checked against the CA\n"
"  --tls-cacert FILE       the CA (default: the system's and /etc/pki/CA/cacert.pem)\n"
"  --tls-cacrl FILE        revoked certificates (default /etc/pki/CA/cacrl.pem)\n"
"  --tls-cert FILE         our certificate (default /etc/pki/criu/cert.pem)\n"
"  --tls-key FILE          its key (default /etc/pki/criu/private/key.pem)\n"
"  --tls-no-cn-verify      dump: the server's certificate need not name --address\n"
"  --tls-no-cert-verify    the peer's certificate is not checked at all (insecure)\n"
"  --skip-checksum         dump: no checksums of the page stores; restore: check\n"
"                          no checksum (the images are trusted as they are)\n"
"  --manage-cgroups[=MODE] restore: what criu does with the tree's cgroups: none,\n"
"                          props, soft (default), full, strict, ignore\n"
"  --cgroup-root [CTRL:]PATH  the tree's cgroup root (in hierarchy CTRL, else in\n"
"                          every other one): where it was (dump), where it goes\n"
"                          (restore)\n"
"  --freeze-cgroup PATH    dump: freeze the tree with this cgroup's freezer first\n"
"  --external net[INODE]:KEY  dump: network namespace INODE is not dumped\n"
"  --external veth[IF]:OUT[@BR]  restore: the peer of veth IF is OUT (in bridge BR)\n"
"  --external macvlan[IF]:LOWER  restore: macvlan/ipvlan IF sits on link LOWER\n"
"  --veth-pair IF=OUT[@BR] restore: as --external veth[IF]:OUT[@BR]\n"
"  --inherit-fd fd[N]:KEY  restore: fd N is the resource KEY (a network namespace)\n"
"  --empty-ns net          restore: an empty network namespace (loopback up)\n"
"  --network-lock METHOD   nftables (default), iptables or skip\n"
"  --root DIR              restore: the root filesystem of the tree's mount namespace\n"
"  --lsm-profile TYPE:NAME restore: every task gets this security label (apparmor,\n"
"                          selinux or smack) instead of its own\n"
"  --lsm-mount-context CTX restore: mounts that had an SELinux context= get CTX\n"
"  --external mnt[MNT]:KEY dump: the mount at MNT comes from outside, named KEY;\n"
"                          mnt[] names every such mount by its path\n"
"  --external mnt[KEY]:PATH  restore: mount KEY is bound from PATH\n"
"  --ext-mount-map A:B     the same as --external mnt[A]:B (auto: mnt[])\n"
"  --ext-unix-sk[=INO,...] dump: unix datagram sockets may be connected outside the\n"
"                          tree (INO: only these); restore connects them again\n"
"  --external unix[INO]    the same as --ext-unix-sk=INO\n"
"  --tcp-established       dump: TCP connections too (TCP_REPAIR), restored as they were\n"
"  --tcp-close             dump: TCP connections without their state; restore: every\n"
"                          connection as a closed socket\n"
"  --skip-in-flight        dump: a listening TCP socket with connections queued and\n"
"                          not accepted yet is saved without them (their peers get\n"
"                          a reset when the tree goes)\n"
"  --ghost-limit SIZE      dump: save deleted files held open or mapped up to SIZE\n"
"                          bytes each (K, M, G suffixes; default 1M)\n"
"  --track-mem             pre-dump: track the pages the tree writes, for the next\n"
"                          round; dump: take the tracking over and end it\n"
"  --prev-images-dir DIR   (pre-)dump: the previous round's images, relative to -D;\n"
"                          only pages written since are saved\n"
"  --auto-dedup            (pre-)dump --prev-images-dir: free in the parent images\n"
"                          the pages this round stored again\n"
"  --jobs N                (pre-)dump: threads that copy each task's pages (1: one\n"
"                          stream; default: half the CPUs the task may use, at\n"
"                          most 8)\n"
"  --link-remap            dump: a deleted file still linked elsewhere is linked\n"
"                          back in its directory, restore opens it and unlinks it\n"
"  --force-irmap           dump: the paths of inotify watches and fanotify marks by\n"
"                          walking directories (the irmap), not by file handles\n"
"  --irmap-scan-path DIR   dump: the irmap walks DIR first (repeatable)\n"
"  -h|--help               this text\n"
"  -V|--version            the version\n");
}

enum {
	OPT_LEAVE_RUNNING = 256,
	OPT_ORPHAN_PTS_MASTER,
	OPT_LEAVE_STOPPED,
	OPT_PIDFILE,
	OPT_CPU_CAP,
	OPT_CPU_MAP,
	OPT_CPU_NS,
	OPT_ACTION_SCRIPT,
	OPT_DISPLAY_STATS,
	OPT_FEATURE,
	OPT_ADDRESS,
	OPT_SKIP_CHECKSUM,
	OPT_MANAGE_CGROUPS,
	OPT_CGROUP_ROOT,
	OPT_FREEZE_CGROUP,
	OPT_EXTERNAL,
	OPT_VETH_PAIR,
	OPT_INHERIT_FD,
	OPT_EMPTY_NS,
	OPT_NETWORK_LOCK,
	OPT_ROOT,
	OPT_LSM_PROFILE,
	OPT_LSM_MOUNT_CONTEXT,
	OPT_EXT_MOUNT_MAP,
	OPT_EXT_UNIX_SK,
	OPT_TCP_ESTABLISHED,
	OPT_TCP_CLOSE,
	OPT_SKIP_IN_FLIGHT,
	OPT_GHOST_LIMIT,
	OPT_LINK_REMAP,
	OPT_FORCE_IRMAP,
	OPT_IRMAP_SCAN_PATH,
	OPT_TRACK_MEM,
	OPT_PREV_IMAGES_DIR,
	OPT_AUTO_DEDUP,
	OPT_JOBS,
	OPT_PAGE_SERVER,
	OPT_LAZY_PAGES,
	OPT_PORT,
	OPT_STATUS_FD,
	OPT_TLS,
	OPT_TLS_CACERT,
	OPT_TLS_CACRL,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_NO_CN_VERIFY,
	OPT_TLS_NO_CERT_VERIFY,
};

static const struct option long_opts[] = {
	{ "tree", required_argument, NULL, 't' },
	{ "images-dir", required_argument, NULL, 'D' },
	{ "work-dir", required_argument, NULL, 'W' },
	{ "log-file", required_argument, NULL, 'o' },
	{ "verbosity", optional_argument, NULL, 'v' },
	{ "leave-running", no_argument, NULL, OPT_LEAVE_RUNNING },
	{ "leave-stopped", no_argument, NULL, OPT_LEAVE_STOPPED },
	{ "shell-job", no_argument, NULL, 'j' },
	{ "orphan-pts-master", no_argument, NULL, OPT_ORPHAN_PTS_MASTER },
	{ "file-locks", no_argument, NULL, 'l' },
	{ "restore-detached", no_argument, NULL, 'd' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "cpu-cap", optional_argument, NULL, OPT_CPU_CAP },
	{ "cpu-map", required_argument, NULL, OPT_CPU_MAP },
	{ "cpu-ns", required_argument, NULL, OPT_CPU_NS },
	{ "action-script", required_argument, NULL, OPT_ACTION_SCRIPT },
	{ "display-stats", no_argument, NULL, OPT_DISPLAY_STATS },
	{ "feature", required_argument, NULL, OPT_FEATURE },
	{ "address", required_argument, NULL, OPT_ADDRESS },
	{ "skip-checksum", no_argument, NULL, OPT_SKIP_CHECKSUM },
	{ "manage-cgroups", optional_argument, NULL, OPT_MANAGE_CGROUPS },
	{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
	{ "freeze-cgroup", required_argument, NULL, OPT_FREEZE_CGROUP },
	{ "external", required_argument, NULL, OPT_EXTERNAL },
	{ "veth-pair", required_argument, NULL, OPT_VETH_PAIR },
	{ "inherit-fd", required_argument, NULL, OPT_INHERIT_FD },
	{ "empty-ns", required_argument, NULL, OPT_EMPTY_NS },
	{ "network-lock", required_argument, NULL, OPT_NETWORK_LOCK },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "lsm-profile", required_argument, NULL, OPT_LSM_PROFILE },
	{ "lsm-mount-context", required_argument, NULL, OPT_LSM_MOUNT_CONTEXT },
	{ "ext-mount-map", required_argument, NULL, OPT_EXT_MOUNT_MAP },
	{ "ext-unix-sk", optional_argument, NULL, OPT_EXT_UNIX_SK },
	{ "tcp-established", no_argument, NULL, OPT_TCP_ESTABLISHED },
	{ "tcp-close", no_argument, NULL, OPT_TCP_CLOSE },
	{ "skip-in-flight", no_argument, NULL, OPT_SKIP_IN_FLIGHT },
	{ "ghost-limit", required_argument, NULL, OPT_GHOST_LIMIT },
	{ "link-remap", no_argument, NULL, OPT_LINK_REMAP },
	{ "force-irmap", no_argument, NULL, OPT_FORCE_IRMAP },
	{ "irmap-scan-path", required_argument, NULL, OPT_IRMAP_SCAN_PATH },
	{ "track-mem", no_argument, NULL, OPT_TRACK_MEM },
	{ "prev-images-dir", required_argument, NULL, OPT_PREV_IMAGES_DIR },
	{ "auto-dedup", no_argument, NULL, OPT_AUTO_DEDUP },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "page-server", no_argument, NULL, OPT_PAGE_SERVER },
	{ "lazy-pages", no_argument, NULL, OPT_LAZY_PAGES },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "status-fd", required_argument, NULL, OPT_STATUS_FD },
	{ "tls", no_argument, NULL, OPT_TLS },
	{ "tls-cacert", required_argument, NULL, OPT_TLS_CACERT },
	{ "tls-cacrl", required_argument, NULL, OPT_TLS_CACRL },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "tls-no-cn-verify", no_argument, NULL, OPT_TLS_NO_CN_VERIFY },
	{ "tls-no-cert-verify", no_argument, NULL, OPT_TLS_NO_CERT_VERIFY },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int parse_int(const char *s, int *v)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (!*s || *end || n < 0 || n > INT_MAX)
		return -1;
	*v = n;
	return 0;
}

/*
 * --cpu-cap: CRIU's comma-separated words, left to right; "^CAP" removes
 * one. Without a value: all.
 */
static int parse_cpu_cap(const char *s, unsigned int *caps)
{
	static const struct {
		const char *name;
		unsigned int bits;
	} w[] = {
		{ "none", CPU_CAP_NONE }, { "fpu", CPU_CAP_FPU }, { "cpu", CPU_CAP_CPU },
		{ "ins", CPU_CAP_INS }, { "all", CPU_CAP_ALL },
	};
	size_t i, n;
	int inv;

	if (!s) {
		*caps = CPU_CAP_ALL;
		return 0;
	}
	*caps = CPU_CAP_NONE;
	while (*s) {
		inv = *s == '^';
		s += inv;
		n = strcspn(s, ",");
		for (i = 0; i < ARRAY_SIZE(w); i++)
			if (strlen(w[i].name) == n && !strncmp(s, w[i].name, n))
				break;
		if (i == ARRAY_SIZE(w))
			return -1;
		if (inv)
			*caps &= ~w[i].bits;
		else
			*caps = w[i].bits ? *caps | w[i].bits : CPU_CAP_NONE;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* --manage-cgroups[=MODE], also "--manage-cgroups MODE"; alone: soft. */
static int parse_cg_mode(int argc, char **argv, struct opts *o)
{
	int mode;

	if (!optarg && optind < argc && cg_mode_parse(argv[optind]) >= 0)
		optarg = argv[optind++];
	mode = optarg ? cg_mode_parse(optarg) : CG_MODE_SOFT;
	o->manage_cgroups = mode;
	if (mode >= 0)
		return 0;
	fprintf(stderr, "Error: bad value '%s' for option --manage-cgroups (none, props, "
		"soft, full, strict or ignore)\n", optarg);
	return -1;
}

/* --cgroup-root, repeatable: the last one for a hierarchy counts. */
static int add_cg_root(struct opts *o, char *arg)
{
	static struct cg_root *roots;
	struct cg_root *n = xrealloc(roots, (o->nr_cg_roots + 1) * sizeof(*n));

	if (!n)
		return -1;
	roots = n;
	if (cg_root_parse(arg, &n[o->nr_cg_roots])) {
		fprintf(stderr, "Error: bad value '%s' for option --cgroup-root "
			"([CONTROLLER:]/PATH)\n", arg);
		return -1;
	}
	o->cg_roots = roots;
	o->nr_cg_roots++;
	return 0;
}

/* --external KIND[ID]:VALUE, or --ext-mount-map (@map): core/external.c */
static int add_external(struct opts *o, const char *arg, int map)
{
	char err[256];

	if (external_add(o, arg, map, err, sizeof(err))) {
		fprintf(stderr, "Error: %s\n", err);
		return -1;
	}
	return 0;
}

/* CRIU's --ext-unix-sk[=INO[,INO...]]: every socket, or unix[INO] for each */
static int add_ext_unix_sk(struct opts *o, const char *arg)
{
	char err[256];

	if (external_add_unix(o, arg, err, sizeof(err))) {
		fprintf(stderr, "Error: %s\n", err);
		return -1;
	}
	return 0;
}

/* CRIU's older --veth-pair IF=OUT[@BRIDGE] */
static int add_veth_pair(struct opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *ext;
	int ret;

	if (!eq || eq == arg || !eq[1]) {
		fprintf(stderr, "Error: --veth-pair %s: not IF=OUT[@BRIDGE]\n", arg);
		return -1;
	}
	if (asprintf(&ext, "veth[%.*s]:%s", (int)(eq - arg), arg, eq + 1) < 0)
		return -1;
	ret = add_external(o, ext, 0);
	free(ext);
	return ret;
}

/* --inherit-fd fd[N]:KEY: N is one of our own fds, from whoever started us */
static int add_inherit_fd(struct opts *o, const char *arg)
{
	struct inherit_fd ifd, *n;
	char err[256];

	if (inherit_fd_parse(arg, &ifd, err, sizeof(err))) {
		fprintf(stderr, "Error: %s\n", err);
		return -1;
	}
	if (fcntl(ifd.fd, F_GETFD) < 0) {
		fprintf(stderr, "Error: --inherit-fd %s: fd %d is not open\n", arg, ifd.fd);
		return -1;
	}
	n = xrealloc(o->inherit_fds, (o->nr_inherit_fds + 1) * sizeof(*n));
	if (!n)
		return -1;
	o->inherit_fds = n;
	o->inherit_fds[o->nr_inherit_fds++] = ifd;
	return 0;
}

/* --irmap-scan-path DIR: an absolute path, as the tree sees it */
static int add_irmap_path(struct opts *o, const char *arg)
{
	const char **n;

	if (arg[0] != '/') {
		fprintf(stderr, "Error: --irmap-scan-path %s: not an absolute path\n", arg);
		return -1;
	}
	n = xrealloc(o->irmap_paths, (o->nr_irmap_paths + 1) * sizeof(*n));
	if (!n)
		return -1;
	o->irmap_paths = n;
	o->irmap_paths[o->nr_irmap_paths++] = arg;
	return 0;
}

static int parse_network_lock(const char *arg, struct opts *o)
{
	static const char *const names[] = {
		[NETLOCK_NFTABLES] = "nftables",
		[NETLOCK_IPTABLES] = "iptables",
		[NETLOCK_SKIP] = "skip",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i])) {
			o->network_lock = i;
			return 0;
		}
	fprintf(stderr, "Error: bad value '%s' for option --network-lock (nftables, "
		"iptables or skip)\n", arg);
	return -1;
}

static int parse_lsm_profile(const char *arg, struct opts *o)
{
	const char *kind, *name;

	if (lsm_profile_parse(arg, &kind, &name)) {
		fprintf(stderr, "Error: bad value '%s' for option --lsm-profile (apparmor:NAME, "
			"selinux:CONTEXT or smack:LABEL)\n", arg);
		return -1;
	}
	o->lsm_profile = arg;
	return 0;
}

/* 0, -1 when the error is said, 1 when help or the version is printed. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	o->verbosity = LOG_WARN;
	o->cpu_cap = CPU_CAP_DEFAULT;
	o->port = o->status_fd = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:D:W:o:v::jldhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_int(optarg, &o->pid))
				goto bad_value;
			break;
		case 'D': o->images_dir = optarg; break;
		case 'W': o->work_dir = optarg; break;
		case 'o': o->log_file = optarg; break;
		case 'v':
			if (!optarg)
				o->verbosity++;
			else if (optarg[0] == 'v')
				o->verbosity += 1 + strspn(optarg, "v");
			else if (parse_int(optarg, &o->verbosity))
				goto bad_value;
			/* more says no more; and -v2147483647 -v must not overflow */
			o->verbosity = min(o->verbosity, LOG_DEBUG);
			break;
		case OPT_LEAVE_RUNNING: o->leave_running = 1; break;
		case OPT_LEAVE_STOPPED: o->leave_stopped = 1; break;
		case 'j': o->shell_job = 1; break;
		case OPT_ORPHAN_PTS_MASTER: o->orphan_pts_master = 1; break;
		case 'l': o->file_locks = 1; break;
		case 'd': o->restore_detached = 1; break;
		case OPT_PIDFILE: o->pidfile = optarg; break;
		case OPT_CPU_CAP:
			/* also "--cpu-cap LIST", not only "--cpu-cap=LIST" */
			if (!optarg && optind < argc && !parse_cpu_cap(argv[optind], &o->cpu_cap))
				optarg = argv[optind++];
			if (parse_cpu_cap(optarg, &o->cpu_cap)) {
				fprintf(stderr, "Error: bad value '%s' for option --cpu-cap\n",
					optarg);
				return -1;
			}
			break;
		case OPT_CPU_MAP: o->cpu_map = optarg; break;
		case OPT_CPU_NS:
			if (strcmp(optarg, "ignore") && strcmp(optarg, "restore")) {
				fprintf(stderr, "Error: bad value '%s' for option --cpu-ns "
					"(restore or ignore)\n", optarg);
				return -1;
			}
			o->cpu_ns_ignore = !strcmp(optarg, "ignore");
			break;
		case OPT_ACTION_SCRIPT:
			if (hooks_add_script(optarg))
				return -1;
			break;
		case OPT_DISPLAY_STATS: o->display_stats = 1; break;
		case OPT_FEATURE: o->feature = optarg; break;
		case OPT_ADDRESS: o->address = optarg; break;
		case OPT_PAGE_SERVER: o->page_server = 1; break;
		case OPT_LAZY_PAGES: o->lazy_pages = 1; break;
		case OPT_PORT:
			if (parse_int(optarg, &o->port) || o->port < 0 || o->port > 65535) {
				fprintf(stderr, "Error: bad value '%s' for option --port "
					"(0-65535)\n", optarg);
				return -1;
			}
			break;
		case OPT_STATUS_FD:
			if (parse_int(optarg, &o->status_fd) || o->status_fd < 0) {
				fprintf(stderr, "Error: bad value '%s' for option --status-fd\n",
					optarg);
				return -1;
			}
			break;
		case OPT_TLS: o->tls.on = 1; break;
		case OPT_TLS_CACERT: o->tls.cacert = optarg; break;
		case OPT_TLS_CACRL: o->tls.cacrl = optarg; break;
		case OPT_TLS_CERT: o->tls.cert = optarg; break;
		case OPT_TLS_KEY: o->tls.key = optarg; break;
		case OPT_TLS_NO_CN_VERIFY: o->tls.no_cn_verify = 1; break;
		case OPT_TLS_NO_CERT_VERIFY: o->tls.no_cert_verify = 1; break;
		case OPT_SKIP_CHECKSUM: o->skip_checksum = 1; break;
		case OPT_MANAGE_CGROUPS:
			if (parse_cg_mode(argc, argv, o))
				return -1;
			break;
		case OPT_CGROUP_ROOT:
			if (add_cg_root(o, optarg))
				return -1;
			break;
		case OPT_FREEZE_CGROUP: o->freeze_cgroup = optarg; break;
		case OPT_EXTERNAL:
		case OPT_EXT_MOUNT_MAP:
			if (add_external(o, optarg, c == OPT_EXT_MOUNT_MAP))
				return -1;
			break;
		case OPT_EXT_UNIX_SK:
			if (add_ext_unix_sk(o, optarg))
				return -1;
			break;
		case OPT_TCP_ESTABLISHED:
			o->tcp_established = 1;
			break;
		case OPT_TCP_CLOSE:
			o->tcp_close = 1;
			break;
		case OPT_SKIP_IN_FLIGHT:
			o->tcp_skip_in_flight = 1;
			break;
		case OPT_GHOST_LIMIT:
			if (parse_size(optarg, &o->ghost_limit))
				goto bad_value;
			o->ghost_limit_set = 1;
			break;
		case OPT_LINK_REMAP: o->link_remap = 1; break;
		case OPT_FORCE_IRMAP: o->force_irmap = 1; break;
		case OPT_IRMAP_SCAN_PATH:
			if (add_irmap_path(o, optarg))
				return -1;
			break;
		case OPT_TRACK_MEM: o->track_mem = 1; break;
		case OPT_PREV_IMAGES_DIR: o->prev_images_dir = optarg; break;
		case OPT_AUTO_DEDUP: o->auto_dedup = 1; break;
		case OPT_JOBS:
			if (parse_int(optarg, &o->jobs) || o->jobs < 1 || o->jobs > MM_JOBS_MAX) {
				fprintf(stderr, "Error: bad value '%s' for option --jobs (1-%d)\n",
					optarg, MM_JOBS_MAX);
				return -1;
			}
			break;
		case OPT_VETH_PAIR:
			if (add_veth_pair(o, optarg))
				return -1;
			break;
		case OPT_INHERIT_FD:
			if (add_inherit_fd(o, optarg))
				return -1;
			break;
		case OPT_EMPTY_NS:
			/* CRIU's only value: the network namespace */
			if (strcmp(optarg, "net")) {
				fprintf(stderr, "Error: bad value '%s' for option --empty-ns "
					"(only net)\n", optarg);
				return -1;
			}
			o->empty_ns |= CLONE_NEWNET;
			break;
		case OPT_NETWORK_LOCK:
			if (parse_network_lock(optarg, o))
				return -1;
			break;
		case OPT_ROOT: o->root = optarg;
			break;
		case OPT_LSM_PROFILE:
			if (parse_lsm_profile(optarg, o))
				return -1;
			break;
		case OPT_LSM_MOUNT_CONTEXT:
			if (!*optarg) {
				fprintf(stderr, "Error: --lsm-mount-context needs a context\n");
				return -1;
			}
			o->lsm_mount_context = optarg;
			break;
		/* done: 1, and main() returns 0 (a fuzzer calls this too) */
		case 'h': usage(stdout); return 1;
		case 'V': printf("Version: %s\n", CRIU_VERSION); return 1;
		case ':':
			fprintf(stderr, "Error: option %s needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "Error: unknown option %s\n", argv[optind - 1]);
			return -1;
		}
	}
	return 0;
bad_value:
	fprintf(stderr, "Error: bad value '%s' for option -%c\n", optarg, c);
	return -1;
}

/* Log file and pidfile are relative to the work dir, as in CRIU. */
static char *in_work_dir(const struct opts *o, const char *path)
{
	const char *dir = o->work_dir ? o->work_dir : o->images_dir;
	char *full;

	if (!path || path[0] == '/' || !dir)
		return path ? xstrdup(path) : NULL;
	if (asprintf(&full, "%s/%s", dir, path) < 0)
		return NULL;
	return full;
}

/* check, swrk and service have no directories of their own */
static int dirs_needed(const char *cmd)
{
	return strcmp(cmd, "check") && strcmp(cmd, "swrk") && strcmp(cmd, "service");
}

static int run_cmd(const struct opts *o, const char *cmd, const char *sub)
{
	if (!strcmp(cmd, "dump") || !strcmp(cmd, "pre-dump"))
		return cr_dump(o);
	if (!strcmp(cmd, "restore"))
		return cr_restore(o);
	if (!strcmp(cmd, "check"))
		return cr_check(o);
	if (!strcmp(cmd, "swrk"))
		return cr_swrk(sub);	/* > 0: a request failed, and the client was told */
	if (!strcmp(cmd, "service"))
		return cr_service(o);
	if (!strcmp(cmd, "page-server"))
		return cr_page_server(o);
	if (!strcmp(cmd, "lazy-pages"))
		return cr_lazy_pages(o);
	return cr_cpuinfo(o, sub);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	const char *cmd, *sub = NULL, *err;
	char *log_path;
	int ret, logged = 0, cmd_dump = 0;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret < 0;
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	cmd = argv[optind];
	/* criu cpuinfo dump|check, criu swrk FD */
	if ((!strcmp(cmd, "cpuinfo") || !strcmp(cmd, "swrk")) && optind + 1 < argc)
		sub = argv[++optind];
	if (optind + 1 < argc) {
		fprintf(stderr, "Error: unexpected argument '%s'\n", argv[optind + 1]);
		return 1;
	}
	if (!strcmp(cmd, "pre-dump")) {
		/* the tree runs on, its writes tracked: CRIU's pre-dump */
		o.pre_dump = o.leave_running = o.track_mem = 1;
		cmd_dump = 1;
	}
	if (!strcmp(cmd, "dump"))
		cmd_dump = 1;
	if (!cmd_dump && strcmp(cmd, "restore") && strcmp(cmd, "check") &&
	    strcmp(cmd, "cpuinfo") && strcmp(cmd, "swrk") && strcmp(cmd, "service") &&
	    strcmp(cmd, "page-server") && strcmp(cmd, "lazy-pages")) {
		fprintf(stderr, "Error: unknown command '%s'\n", cmd);
		return 1;
	}
	if (dirs_needed(cmd) && !o.images_dir) {
		fprintf(stderr, "Error: %s needs -D|--images-dir\n", cmd);
		return 1;
	}
	if (o.page_server && !cmd_dump) {
		fprintf(stderr, "Error: --page-server is for dump (a lazy restore from a page "
			"server is not implemented)\n");
		return 1;
	}
	if (o.lazy_pages && strcmp(cmd, "restore")) {
		fprintf(stderr, "Error: --lazy-pages is for restore (dump --lazy-pages is not "
			"implemented)\n");
		return 1;
	}
	if (o.auto_dedup && o.page_server) {
		fprintf(stderr, "Error: --auto-dedup with --page-server: the parent images' "
			"pages are on the page server, out of this dump's reach\n");
		return 1;
	}
	if (o.tls.on && !o.page_server && strcmp(cmd, "page-server")) {
		fprintf(stderr, "Error: --tls is for page-server and dump --page-server\n");
		return 1;
	}
	if (cmd_dump && !o.pid) {
		fprintf(stderr, "Error: %s needs -t|--tree PID\n", cmd);
		return 1;
	}
	img_set_checksum(!o.skip_checksum);
	log_path = in_work_dir(&o, o.log_file);
	/* until the log is open, errors only wait for the one line below */
	log_set_stderr_errors(0);
	ret = check_privileges(&o, cmd_dump ? "dump" : cmd);
	o.images_dirfd = -1;
	o.work_dirfd = AT_FDCWD;
	/* a dump (and cpuinfo dump) creates its images directory */
	if (!ret && dirs_needed(cmd))
		ret = opts_open_dirs(&o, cmd_dump || !strcmp(cmd, "page-server") ||
				     (!strcmp(cmd, "cpuinfo") && sub && !strcmp(sub, "dump")));
	/* without a log file, errors are kept for the one line printed below */
	if (!ret)
		ret = log_open_at(o.work_dirfd, o.log_file,
				  o.log_file ? o.verbosity : min(o.verbosity, LOG_WARN));
	if (!ret) {
		logged = !!o.log_file;
		log_set_stderr_errors(logged);
		opts_warn_dirs(&o);
		ret = run_cmd(&o, cmd, sub);
	}
	if (ret < 0) {
		err = log_first_error();
		fprintf(stderr, "Error: %s failed: %s%s%s\n", cmd,
			err ? err : "unknown error", logged ? "; see " : "",
			logged ? log_path : "");
		ret = 1;
	}
	log_close();
	free(log_path);
	return ret;
}
