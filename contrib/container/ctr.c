// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctr: the command line.
 *
 *	ctr run [OPTIONS] ROOTFS [--] CMD [ARGS...]
 *	ctr delete [--state FILE] [--pid PID] [--keep-state] NAME
 *	ctr init [--] CMD [ARGS...]
 *
 * `run` starts a container (see ctr.h and README.md); in the foreground it
 * waits for it, passes the signals it gets on to it and tears it down when
 * it exits, with its exit status.  With -d it prints the init's host pid
 * (the pid to give `criu dump -t`), records what it changed on the host in
 * the state file and exits; `delete` kills the container and undoes that.
 * Errors: one line on stderr, "ctr: NAME: what failed: why", exit 1 (2 for
 * a bad command line).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctr.h"

#define STATE_DIR "/run/ctr"

static const char run_usage[] =
"usage: ctr run [OPTIONS] ROOTFS [--] CMD [ARGS...]\n"
"  -n, --name NAME            name, hostname and default state file (ctr-PID)\n"
"  -d, --detach               print the init's host pid and exit\n"
"      --init[=PATH]          pid 1 is PATH (default /sbin/ctr) `init`, CMD its child\n"
"      --state FILE           what `ctr delete` undoes (" STATE_DIR "/NAME)\n"
"      --pid-file FILE        write the init's host pid to FILE\n"
"  -o, --output PATH          stdout and stderr: PATH in the container\n"
"      --hostname NAME        (default: the name)\n"
"  -w, --cwd DIR              working directory in the container (/)\n"
"  -e, --env VAR=VALUE        add to runc's default environment\n"
"      --userns               a user namespace too, with the maps below\n"
"      --uidmap IN:OUT:COUNT  (default 0:100000:65536), repeatable\n"
"      --gidmap IN:OUT:COUNT  (default 0:100000:65536), repeatable\n"
"      --cgroupfs MODE        /sys/fs/cgroup: auto (v1 unless the host is pure v2),\n"
"                             v1, v2 or none\n"
"      --cgroup PATH          a cgroup for the container (relative: below ctr's own)\n"
"      --cgroup-controllers L v1 hierarchies to use (cpu,memory,pids,freezer)\n"
"      --memory BYTES[k|m|g]  --pids N  --cpu-shares N\n"
"      --cpu-quota US         with --cpu-period US (100000)\n"
"      --veth HOST[:INSIDE]   a veth pair, its inside end (eth0) in the container\n"
"      --ip CIDR              an address of the inside end, repeatable\n"
"      --host-ip CIDR         an address of the host end (none by default)\n"
"      --gw ADDR              a default route inside, via ADDR\n"
"  -v, --volume SRC:DST[:ro]  bind a host path into the container, repeatable\n"
"      --console-socket PATH  send a console pty's master to this unix socket\n"
"      --propagation MODE     of the host's mounts as the container sees them:\n"
"                             slave (default, as runc) or private\n"
"      --read-only            the root read-only (runc spec's root.readonly)\n"
"      --restrict             runc spec's process: 3 capabilities, no_new_privs,\n"
"                             RLIMIT_NOFILE 1024\n"
"      --share KIND[,KIND]    keep the host's net and/or cgroup namespace (as a spec\n"
"                             without them does), to test the other pieces alone\n";

enum {
	OPT_INIT = 256, OPT_STATE, OPT_PIDFILE, OPT_HOSTNAME, OPT_USERNS, OPT_UIDMAP,
	OPT_GIDMAP, OPT_CGFS, OPT_CGROUP, OPT_CGCTL, OPT_MEMORY, OPT_PIDS, OPT_CPUQ,
	OPT_CPUP, OPT_CPUS, OPT_VETH, OPT_IP, OPT_HOSTIP, OPT_GW, OPT_CONSOLE, OPT_PROP,
	OPT_RO, OPT_RESTRICT, OPT_PID, OPT_KEEP, OPT_SHARE,
};

static const struct option run_opts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "detach", no_argument, NULL, 'd' },
	{ "init", optional_argument, NULL, OPT_INIT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "pid-file", required_argument, NULL, OPT_PIDFILE },
	{ "output", required_argument, NULL, 'o' },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "cwd", required_argument, NULL, 'w' },
	{ "env", required_argument, NULL, 'e' },
	{ "userns", no_argument, NULL, OPT_USERNS },
	{ "uidmap", required_argument, NULL, OPT_UIDMAP },
	{ "gidmap", required_argument, NULL, OPT_GIDMAP },
	{ "cgroupfs", required_argument, NULL, OPT_CGFS },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "cgroup-controllers", required_argument, NULL, OPT_CGCTL },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "cpu-quota", required_argument, NULL, OPT_CPUQ },
	{ "cpu-period", required_argument, NULL, OPT_CPUP },
	{ "cpu-shares", required_argument, NULL, OPT_CPUS },
	{ "veth", required_argument, NULL, OPT_VETH },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "host-ip", required_argument, NULL, OPT_HOSTIP },
	{ "gw", required_argument, NULL, OPT_GW },
	{ "volume", required_argument, NULL, 'v' },
	{ "console-socket", required_argument, NULL, OPT_CONSOLE },
	{ "propagation", required_argument, NULL, OPT_PROP },
	{ "read-only", no_argument, NULL, OPT_RO },
	{ "restrict", no_argument, NULL, OPT_RESTRICT },
	{ "share", required_argument, NULL, OPT_SHARE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "ctr: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (ctr run --help)\n");
	return -1;
}

static int parse_size(const char *s, long long *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (end == s || v <= 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* IN:OUT:COUNT appended to a map as the kernel reads it: "IN OUT COUNT\n". */
static int add_idmap(char *map, size_t size, const char *arg)
{
	unsigned long in, out, n;
	size_t len = strlen(map);
	char extra;

	if (sscanf(arg, "%lu:%lu:%lu%c", &in, &out, &n, &extra) != 3 || !n)
		return usage_error("bad id map %s (IN:OUT:COUNT)", arg);
	if (snprintf(map + len, size - len, "%lu %lu %lu\n", in, out, n) >= (int)(size - len))
		return usage_error("too many id maps at %s", arg);
	return 0;
}

/* A path in the container: absolute, without "..", trailing '/' dropped. */
static int clean_inside(char *p, const char *what)
{
	size_t n = strlen(p);

	if (p[0] != '/' || strstr(p, "/../") || (n >= 3 && !strcmp(p + n - 3, "/..")))
		return usage_error(what, p);
	for (; n > 1 && p[n - 1] == '/'; n--)
		p[n - 1] = '\0';
	return 0;
}

static int parse_volume(struct ctr_config *c, char *arg)
{
	struct ctr_volume *v;
	char *dst, *mode, *src;

	if (c->nr_vols == CTR_MAX_VOLUMES)
		return usage_error("too many volumes at %s", arg);
	v = &c->vols[c->nr_vols];
	dst = strchr(arg, ':');
	if (!dst)
		return usage_error("bad volume %s (SRC:DST[:ro])", arg);
	*dst++ = '\0';
	mode = strchr(dst, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "ro") && strcmp(mode, "rw"))
			return usage_error("bad volume mode %s (ro or rw)", mode);
		v->ro = !strcmp(mode, "ro");
	}
	src = realpath(arg, NULL);
	if (!src) {
		fprintf(stderr, "ctr: volume %s: %s\n", arg, strerror(errno));
		return -1;
	}
	if (clean_inside(dst, "bad volume destination %s (an absolute path, no ..)"))
		return -1;
	v->src = src;
	v->dst = dst;
	c->nr_vols++;
	return 0;
}

static int parse_veth(struct ctr_config *c, char *arg)
{
	char *inside = strchr(arg, ':');

	if (inside)
		*inside++ = '\0';
	c->veth_host = arg;
	c->veth_ctr = inside && *inside ? inside : "eth0";
	if (!arg[0] || strlen(arg) > 15 || strlen(c->veth_ctr) > 15)
		return usage_error("bad --veth %s (interface names of 1-15 characters)", arg);
	return 0;
}

static int parse_number(const char *arg, long long *out)
{
	char *end;

	*out = strtoll(arg, &end, 10);
	if (end == arg || *end || *out <= 0)
		return usage_error("bad number %s", arg);
	return 0;
}

static int parse_cgfs(struct ctr_config *c, const char *arg)
{
	static const char *const names[] = { "auto", "v1", "v2", "none" };
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(arg, names[i])) {
			c->cgfs = (enum ctr_cgfs)i;
			return 0;
		}
	return usage_error("bad --cgroupfs %s (auto, v1, v2 or none)", arg);
}

/* --share net,cgroup: namespaces the container keeps from the host */
static int parse_share(struct ctr_config *c, const char *arg)
{
	const char *w, *e;

	for (w = arg; *w; w = *e ? e + 1 : e) {
		e = strchrnul(w, ',');
		if (e - w == 3 && !strncmp(w, "net", 3))
			c->share_net = true;
		else if (e - w == 6 && !strncmp(w, "cgroup", 6))
			c->share_cgroup = true;
		else
			return usage_error("bad --share %s (net, cgroup)", arg);
	}
	return 0;
}

static int parse_run_opt(struct ctr_config *c, int opt, char *arg)
{
	switch (opt) {
	case 'n': c->name = arg; return 0;
	case 'd': c->detach = true; return 0;
	case OPT_INIT: c->init = arg ? arg : "/sbin/ctr"; return 0;
	case OPT_STATE: c->state_path = arg; return 0;
	case OPT_PIDFILE: c->pid_file = arg; return 0;
	case 'o': c->output = arg; return 0;
	case OPT_HOSTNAME: c->hostname = arg; return 0;
	case 'w': c->cwd = arg; return 0;
	case 'e':
		if (c->nr_env == CTR_MAX_ENV || !strchr(arg, '='))
			return usage_error("bad or too many -e %s (VAR=VALUE)", arg);
		c->env[c->nr_env++] = arg;
		return 0;
	case OPT_USERNS: c->userns = true; return 0;
	case OPT_UIDMAP: return add_idmap(c->uid_map, sizeof(c->uid_map), arg);
	case OPT_GIDMAP: return add_idmap(c->gid_map, sizeof(c->gid_map), arg);
	case OPT_CGFS: return parse_cgfs(c, arg);
	case OPT_CGROUP:
		c->cgroup = arg;
		if (!arg[0] || strstr(arg, "..") || !strcmp(arg, "/"))
			return usage_error("bad --cgroup %s (a path without ..)", arg);
		return 0;
	case OPT_CGCTL: c->cg_controllers = arg; return 0;
	case OPT_MEMORY:
		return parse_size(arg, &c->lim.memory) ?
		       usage_error("bad --memory %s (BYTES[k|m|g])", arg) : 0;
	case OPT_PIDS: return parse_number(arg, &c->lim.pids);
	case OPT_CPUQ: return parse_number(arg, &c->lim.cpu_quota);
	case OPT_CPUP: return parse_number(arg, &c->lim.cpu_period);
	case OPT_CPUS: return parse_number(arg, &c->lim.cpu_shares);
	case OPT_VETH: return parse_veth(c, arg);
	case OPT_IP:
		if (c->nr_ips == CTR_MAX_IPS)
			return usage_error("too many --ip at %s", arg);
		c->ips[c->nr_ips++] = arg;
		return 0;
	case OPT_HOSTIP: c->host_ip = arg; return 0;
	case OPT_GW: c->gw = arg; return 0;
	case 'v': return parse_volume(c, arg);
	case OPT_CONSOLE: c->console_socket = arg; return 0;
	case OPT_PROP:
		if (strcmp(arg, "slave") && strcmp(arg, "private"))
			return usage_error("bad --propagation %s (slave or private)", arg);
		c->propagation = strcmp(arg, "slave") ? MS_PRIVATE : MS_SLAVE;
		return 0;
	case OPT_RO: c->readonly = true; return 0;
	case OPT_RESTRICT: c->restrict_process = true; return 0;
	case OPT_SHARE: return parse_share(c, arg);
	case 'h': fputs(run_usage, stdout); exit(0);
	}
	return usage_error("%s", "unknown option");
}

static int check_run(struct ctr_config *c)
{
	static char name[32], state[4200];
	const char *p;

	if (!c->name) {
		snprintf(name, sizeof(name), "ctr-%d", getpid());
		c->name = name;
	}
	for (p = c->name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.",
			    *p) || p - c->name > 63)
			return usage_error("bad name %s ([A-Za-z0-9._-], at most 64)", c->name);
	if ((c->nr_ips || c->host_ip || c->gw) && !c->veth_host)
		return usage_error("%s needs --veth", c->gw ? "--gw" : "--ip");
	if (c->veth_host && c->share_net)
		return usage_error("%s", "--veth needs a network namespace (not --share net)");
	if (c->lim.cpu_quota && !c->lim.cpu_period)
		c->lim.cpu_period = 100000;
	if ((c->lim.memory || c->lim.pids || c->lim.cpu_quota || c->lim.cpu_shares) &&
	    !c->cgroup)
		return usage_error("%s", "limits need --cgroup");
	if (c->cwd && clean_inside((char *)c->cwd, "bad --cwd %s (an absolute path)"))
		return -1;
	if (c->userns && !c->uid_map[0])
		add_idmap(c->uid_map, sizeof(c->uid_map), "0:100000:65536");
	if (c->userns && !c->gid_map[0])
		add_idmap(c->gid_map, sizeof(c->gid_map), "0:100000:65536");
	if (c->detach && !c->state_path) {
		snprintf(state, sizeof(state), STATE_DIR "/%s", c->name);
		c->made_state_dir = access(STATE_DIR, F_OK) != 0;
		if (mkdir_p(STATE_DIR, 0700)) {
			fprintf(stderr, "ctr: %s\n", ctr_errmsg());
			return -1;
		}
		c->state_path = state;
	}
	return 0;
}

static int parse_run(struct ctr_config *c, int argc, char **argv)
{
	int opt;

	memset(c, 0, sizeof(*c));
	c->cg_controllers = "cpu,memory,pids,freezer";
	c->propagation = MS_SLAVE;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+n:do:w:e:v:h", run_opts, NULL)) != -1)
		if (opt == '?' || parse_run_opt(c, opt, optarg))
			return -1;
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (argc - optind < 2)
		return usage_error("%s", "ROOTFS and CMD are needed");
	if (!realpath(argv[optind], c->rootfs)) {
		fprintf(stderr, "ctr: rootfs %s: %s\n", argv[optind], strerror(errno));
		return -1;
	}
	optind++;
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind == argc)
		return usage_error("%s", "CMD is needed");
	c->argv = argv + optind;
	return check_run(c);
}

static pid_t fg_pid;

static void fg_forward(int sig)
{
	kill(fg_pid, sig);
}

/* Foreground: wait for the init, forwarding signals; then undo. */
static int run_foreground(struct ctr_host *h)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = fg_forward };
	int status = 0, ret;
	unsigned int i;

	fg_pid = h->pid;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaction(fwd[i], &sa, NULL);
	while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
		;
	h->start = 0;		/* gone: nothing to kill */
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (teardown(h, 5000))
		return -1;
	return ret;
}

static int write_pid_file(const char *path, pid_t pid)
{
	FILE *f = fopen(path, "we");

	if (!f || fprintf(f, "%d\n", pid) < 0 || fclose(f)) {
		ctr_perr("write the pid file %s", path);
		return -1;
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	static struct ctr_config c;
	static struct ctr_host h;
	int ret;

	if (parse_run(&c, argc, argv))
		return 2;
	if (ctr_start(&c, &h))
		goto err;
	if (!c.detach) {
		ret = run_foreground(&h);
		if (ret < 0)
			goto err;
		return ret;
	}
	if (state_write(c.state_path, &c, &h))
		goto err_teardown;
	if (c.pid_file && write_pid_file(c.pid_file, h.pid)) {
		unlink(c.state_path);
		goto err_teardown;
	}
	printf("%d\n", h.pid);
	return 0;
err_teardown:
	teardown(&h, 5000);
err:
	if (c.made_state_dir)
		rmdir(STATE_DIR);
	fprintf(stderr, "ctr: %s: %s\n", c.name, ctr_errmsg());
	return 1;
}

static const struct option delete_opts[] = {
	{ "state", required_argument, NULL, OPT_STATE },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "keep-state", no_argument, NULL, OPT_KEEP },
	{ NULL, 0, NULL, 0 },
};

/*
 * ctr delete NAME: kill the container and undo what run did.  --pid names
 * the init when it is another than the one run started (a restored one);
 * --keep-state keeps the state file for a later delete (of a container
 * restored after this one was torn down).
 */
static int cmd_delete(int argc, char **argv)
{
	char path[4200];
	const char *state = NULL;
	struct ctr_host h;
	bool keep = false;
	long long pid = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+", delete_opts, NULL)) != -1) {
		if (opt == OPT_STATE)
			state = optarg;
		else if (opt == OPT_PID && parse_number(optarg, &pid) == 0)
			continue;
		else if (opt == OPT_KEEP)
			keep = true;
		else
			goto usage;
	}
	if (argc - optind != 1)
		goto usage;
	if (!state) {
		snprintf(path, sizeof(path), STATE_DIR "/%s", argv[optind]);
		state = path;
	}
	if (state_read(state, &h))
		goto err;
	if (pid) {
		h.pid = pid;
		h.start = proc_start_time(pid);
	}
	if (teardown(&h, 10000))
		goto err;
	if (!keep && unlink(state) && errno != ENOENT) {
		ctr_perr("remove the state file %s", state);
		goto err;
	}
	if (!keep && state == path)
		rmdir(STATE_DIR);	/* only if no other container is left */
	return 0;
err:
	fprintf(stderr, "ctr: %s: %s\n", argv[optind], ctr_errmsg());
	return 1;
usage:
	fprintf(stderr, "usage: ctr delete [--state FILE] [--pid PID] [--keep-state] NAME\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "delete"))
		return cmd_delete(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "init"))
		return init_main(argc - 2, argv + 2);
	fprintf(stderr, "usage: ctr run [OPTIONS] ROOTFS [--] CMD [ARGS...]\n"
		"       ctr delete [--state FILE] [--pid PID] [--keep-state] NAME\n"
		"       ctr init [--] CMD [ARGS...]\n");
	return 2;
}
