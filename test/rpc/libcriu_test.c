// SPDX-License-Identifier: GPL-2.0
/*
 * A client of libcriu (lib/c), linked as crun links it: every function of
 * criu.h against our criu. It dumps and restores a real process of its own
 * (a child that answers SIGUSR1 with exit status 42, a handler it set
 * before the dump), counts the notifications in order, and sends every
 * option setter to criu alone, so that each field number is checked end to
 * end: a refused option must come back refused (EBADRQC), an accepted one
 * must let the dump through. Prints TAP.
 *
 *   libcriu_test CRIU WORKDIR [SERVICE_ADDRESS]
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu.h"

static int nr_test, failed;
static const char *criu_bin, *workdir;
static char actions[512];
static int notify_pid, refuse_at_pre_dump;

#define ok(cond, ...) report(!!(cond), __VA_ARGS__)

static void report(int good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(int good, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", good ? "" : "not ", ++nr_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed |= !good;
}

static int on_notify(char *action, criu_notify_arg_t na)
{
	size_t len = strlen(actions);

	snprintf(actions + len, sizeof(actions) - len, "%s%s", len ? "," : "", action);
	if (!strcmp(action, "post-restore"))
		notify_pid = criu_notify_pid(na);
	if (refuse_at_pre_dump && !strcmp(action, "pre-dump"))
		return 7;
	return 0;
}

static void on_usr1(int sig)
{
	_exit(42);
}

/* A session leader with nothing open but /dev/null, waiting for SIGUSR1. */
static pid_t start_victim(void)
{
	pid_t pid = fork();
	int null;

	if (pid)
		return pid;
	setsid();
	null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);
	signal(SIGUSR1, on_usr1);
	for (;;)
		pause();
}

static int victim_runs(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[2] != 'Z' && p[2] != 'X' && p[2] != 't' && p[2] != 'T';
}

/* SIGUSR1 to a restored @pid and its exit status, reaped by us. */
static int usr1_status(pid_t pid)
{
	int status;

	kill(pid, SIGUSR1);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int open_dir(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", workdir, name);
	mkdir(path, 0700);
	return open(path, O_RDONLY | O_DIRECTORY);
}

static int file_in(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/%s", workdir, dir, name);
	return access(path, F_OK) == 0;
}

static void test_version_and_features(void)
{
	struct criu_feature_check f = { true, true, true };
	/* what `criu check --feature mem_dirty_track` said (test_rpc_libcriu.py) */
	bool mt = getenv("CRIU_MEM_TRACK") && atoi(getenv("CRIU_MEM_TRACK"));
	/* and `criu check --feature lazy_pages` */
	bool lp = getenv("CRIU_LAZY_PAGES") && atoi(getenv("CRIU_LAZY_PAGES"));
	int v;

	v = criu_get_version();
	ok(v == 40000, "criu_get_version: %d (CRIU 4.0)", v);
	ok(criu_check_version(30000) == 1, "criu_check_version(30000): at least");
	ok(criu_check_version(40001) == 0, "criu_check_version(40001): older");
	ok(criu_feature_check(&f, sizeof(f)) == 0, "criu_feature_check answers");
	ok(f.mem_track == mt && f.lazy_pages == lp && !f.pidfd_store,
	   "dirty tracking (%d) and lazy pages (%d) as criu check says, no pidfd store "
	   "(%d %d %d)", mt, lp, f.mem_track, f.lazy_pages, f.pidfd_store);
	f.mem_track = true;
	f.lazy_pages = true;
	ok(criu_feature_check(&f, 1) == 0 && f.mem_track == mt && f.lazy_pages,
	   "criu_feature_check with size 1 touches only mem_track");
	ok(criu_feature_check(NULL, sizeof(f)) == -EINVAL, "criu_feature_check(NULL): -EINVAL");
	ok(criu_check() == 0, "criu_check");
}

static void test_dump_restore_child(int img, int work)
{
	pid_t victim = start_victim(), pid;
	int status, ret;

	usleep(100000);
	criu_set_pid(victim);
	criu_set_images_dir_fd(img);
	criu_set_work_dir_fd(work);
	criu_set_log_level(4);
	ok(criu_set_log_file("dump.log") == 0, "criu_set_log_file");
	criu_set_shell_job(false);
	criu_set_leave_running(false);
	criu_set_notify_cb(on_notify);
	actions[0] = '\0';
	ret = criu_dump();
	ok(ret == 0, "criu_dump of %d: %d (errno %d)", victim, ret, errno);
	ok(waitpid(victim, &status, 0) == victim && WIFSIGNALED(status) &&
	   WTERMSIG(status) == SIGKILL, "the dumped task was killed");
	ok(!strcmp(actions, "pre-dump,post-dump"), "dump notifications in order: %s", actions);
	ok(file_in("work", "stats-dump") && file_in("work", "dump.log"),
	   "stats-dump and dump.log in the work directory");

	actions[0] = '\0';
	notify_pid = 0;
	criu_set_log_file("restore.log");
	pid = criu_restore_child();
	ok(pid == victim, "criu_restore_child: pid %d", pid);
	ok(!strcmp(actions, "pre-restore,post-restore,pre-resume,post-resume"),
	   "restore notifications in order: %s", actions);
	ok(notify_pid == victim, "post-restore names the root: %d", notify_pid);
	ok(criu_get_orphan_pts_master_fd() == -1, "no orphan pty master without a pty");
	ok(file_in("work", "stats-restore"), "stats-restore in the work directory");
	ok(victim_runs(pid), "the restored task runs");
	ok(usr1_status(pid) == 42, "restored as our child, its SIGUSR1 handler intact");
}

static void test_leave_running_and_restore(int img)
{
	pid_t victim = start_victim(), pid;
	int status;

	usleep(100000);
	criu_set_pid(victim);
	criu_set_images_dir_fd(img);
	criu_set_leave_running(true);
	ok(criu_dump() == 0, "criu_dump with leave_running");
	ok(victim_runs(victim), "the task runs on after the dump");
	kill(victim, SIGKILL);
	waitpid(victim, &status, 0);
	criu_set_leave_running(false);
	/* not our child: restored by criu swrk, which exits; we are a subreaper */
	pid = criu_restore();
	ok(pid == victim, "criu_restore: pid %d", pid);
	ok(pid > 0 && usr1_status(pid) == 42, "the restored task reparented to us and works");
}

static void test_refusals(int img)
{
	pid_t victim = start_victim();
	int ret, status;

	usleep(100000);
	criu_set_pid(victim);
	criu_set_images_dir_fd(img);
	refuse_at_pre_dump = 1;
	ret = criu_dump();
	refuse_at_pre_dump = 0;
	ok(ret == 7, "a callback's no at pre-dump fails the dump with its value: %d", ret);
	ok(victim_runs(victim), "and the task runs on");
	ret = criu_pre_dump();
	ok(ret == 0 && victim_runs(victim), "criu_pre_dump (SINGLE_PRE_DUMP): done, the task "
	   "runs on (%d, %d)", ret, errno);
	ret = criu_dump_iters(NULL);
	ok(ret == -EINVAL, "criu_dump_iters without a callback: -EINVAL");
	kill(victim, SIGKILL);
	waitpid(victim, &status, 0);
}

static int more_once(criu_predump_info pi)
{
	return 0;
}

/*
 * Every setter, in its local and its global form, sent alone with a dump
 * of a task left running: REFUSED says whether criu must refuse it (1),
 * take it (0), or take it and fail the dump for what it names (2: a
 * cgroup that is not there), the task running on either way.
 */
#define SETTERS(X)								\
	X(ext_unix_sk, 0, set_ext_unix_sk(O true))				\
	X(unix_sk, 0, add_unix_sk(O 1234))					\
	X(tcp_established, 0, set_tcp_established(O true))			\
	X(tcp_skip_in_flight, 0, set_tcp_skip_in_flight(O true))		\
	X(tcp_close, 0, set_tcp_close(O true))					\
	X(weak_sysctls, 1, set_weak_sysctls(O true))				\
	X(evasive_devices, 0, set_evasive_devices(O true))			\
	X(shell_job, 0, set_shell_job(O true))					\
	X(skip_file_rwx_check, 1, set_skip_file_rwx_check(O true))		\
	X(unprivileged, 1, set_unprivileged(O true))				\
	X(orphan_pts_master, 0, set_orphan_pts_master(O true))			\
	X(file_locks, 0, set_file_locks(O true))				\
	X(track_mem, 0, set_track_mem(O true))					\
	X(auto_dedup, 2, set_auto_dedup(O true))				\
	X(force_irmap, 0, set_force_irmap(O true))				\
	X(link_remap, 0, set_link_remap(O true))				\
	X(log_level, 0, set_log_level(O 1))					\
	X(cpu_cap, 0, set_cpu_cap(O 0))						\
	X(root_slash, 0, set_root(O "/"))					\
	X(root, 0, set_root(O "/tmp"))						\
	X(manage_cgroups_off, 0, set_manage_cgroups(O false))			\
	X(manage_cgroups, 0, set_manage_cgroups(O true))			\
	X(cg_mode_ignore, 0, set_manage_cgroups_mode(O CRIU_CG_MODE_IGNORE))	\
	X(cg_mode_none, 0, set_manage_cgroups_mode(O CRIU_CG_MODE_NONE))	\
	X(cg_mode_soft, 0, set_manage_cgroups_mode(O CRIU_CG_MODE_SOFT))	\
	X(freeze_cgroup, 2, set_freeze_cgroup(O "/sys/fs/cgroup/no-such-cgroup"))	\
	X(lsm_profile, 0, set_lsm_profile(O "apparmor:x"))			\
	X(lsm_mount_context, 0, set_lsm_mount_context(O "ctx"))			\
	X(timeout, 1, set_timeout(O 10))					\
	X(auto_ext_mnt, 0, set_auto_ext_mnt(O true))				\
	X(ext_sharing, 1, set_ext_sharing(O true))				\
	X(ext_masters, 1, set_ext_masters(O true))				\
	X(exec_cmd, 1, set_exec_cmd(O 1, argv_cmd))				\
	X(ext_mount, 0, add_ext_mount(O "/a", "/b"))				\
	X(veth_pair, 0, add_veth_pair(O "eth0", "veth0"))			\
	X(cg_root, 0, add_cg_root(O "cpu", "/"))				\
	X(enable_fs, 1, add_enable_fs(O "tmpfs"))				\
	X(skip_mnt, 1, add_skip_mnt(O "/x"))					\
	X(ghost_limit, 0, set_ghost_limit(O 1 << 20))				\
	X(irmap_path, 0, add_irmap_path(O "/x"))				\
	X(inherit_fd, 0, add_inherit_fd(O 0, "pipe:[1]"))			\
	X(external_net, 0, add_external(O "net[1]:x"))				\
	X(external, 1, add_external(O "dev[1/2]:x"))				\
	X(page_server, 2, set_page_server_address_port(O "127.0.0.1", 1))	\
	X(pre_dump_mode, 0, set_pre_dump_mode(O CRIU_PRE_DUMP_READ))		\
	X(pidfd_store_sk, 0, set_pidfd_store_sk(O 0))				\
	X(network_lock, 0, set_network_lock(O CRIU_NETWORK_LOCK_SKIP))		\
	X(join_ns, 1, join_ns_add(O "net", "/proc/1/ns/net", NULL))		\
	X(mntns_compat_mode, 0, set_mntns_compat_mode(O true))			\
	X(empty_ns, 0, set_empty_ns(O 0x40000000))				\
	X(empty_ns_mnt, 1, set_empty_ns(O 0x20000))				\
	X(parent_images, 2, set_parent_images(O "../parent"))			\
	X(config_missing, 0, set_config_file(O "/nonexistent/runc.conf"))

/* setters only criu_local_* has */
#define LOCAL_ONLY(X)								\
	X(cg_props, 1, add_cg_props(O "x"))					\
	X(cg_props_file, 1, add_cg_props_file(O "/x"))				\
	X(cg_dump_controller, 1, add_cg_dump_controller(O "cpu"))		\
	X(cg_yard, 1, add_cg_yard(O "/x"))

static char *argv_cmd[] = { "true", NULL };

#define ROW(name, refused, call) { #name, refused },
static const struct {
	const char *name;
	int refused;
} setters[] = { SETTERS(ROW) LOCAL_ONLY(ROW) };

/* (void) for the setters that return nothing, 0 after them */
#define O o,
#define CALL_LOCAL(name, refused, call) if (i == n++) return (criu_local_##call, 0);
static int set_local(criu_opts *o, int i)
{
	int n = 0;

	SETTERS(CALL_LOCAL)
	LOCAL_ONLY(CALL_LOCAL)
	return -1;
}
#undef O

#define O
#define CALL_GLOBAL(name, refused, call) if (i == n++) return (criu_##call, 0);
static int set_global(int i)
{
	int n = 0;

	SETTERS(CALL_GLOBAL)
	return -1;
}
#undef O

static int nr_global(void)
{
#define ONE(name, refused, call) + 1
	return 0 SETTERS(ONE);
#undef ONE
}

static void check_setter(int i, const char *form, int ret, pid_t victim)
{
	if (setters[i].refused == 2)
		ok(ret == -EBADE && errno != EBADRQC && victim_runs(victim),
		   "%s %s: taken, and the dump fails (%d, errno %d)", form, setters[i].name,
		   ret, errno);
	else if (setters[i].refused)
		ok(ret == -EBADE && errno == EBADRQC && victim_runs(victim),
		   "%s %s: refused (%d, errno %d)", form, setters[i].name, ret, errno);
	else
		ok(ret == 0 && victim_runs(victim), "%s %s: accepted (%d, errno %d)", form,
		   setters[i].name, ret, errno);
}

static void test_every_setter(int img)
{
	pid_t victim = start_victim();
	criu_opts *o = NULL;
	int i, ret, status;

	usleep(100000);
	for (i = 0; i < (int)(sizeof(setters) / sizeof(setters[0])); i++) {
		if (criu_local_init_opts(&o) || criu_local_set_service_binary(o, criu_bin))
			break;
		criu_local_set_pid(o, victim);
		criu_local_set_images_dir_fd(o, img);
		criu_local_set_leave_running(o, true);
		ret = set_local(o, i) ? -1000 : criu_local_dump(o);
		check_setter(i, "criu_local", ret, victim);
	}
	for (i = 0; i < nr_global(); i++) {
		if (criu_init_opts() || criu_set_service_binary(criu_bin))
			break;
		criu_set_pid(victim);
		criu_set_images_dir_fd(img);
		criu_set_leave_running(true);
		ret = set_global(i) ? -1000 : criu_dump();
		check_setter(i, "criu", ret, victim);
	}
	/* options of their own: the loop's last ones are a setter's */
	if (!criu_local_init_opts(&o) && !criu_local_set_service_binary(o, criu_bin)) {
		criu_local_set_pid(o, victim);
		criu_local_set_images_dir_fd(o, img);
		criu_local_set_leave_running(o, true);
		ret = criu_local_dump_iters(o, more_once);
		ok(ret == 0 && victim_runs(victim),
		   "criu_local_dump_iters: a pre-dump, then the dump, the task runs on (%d)", ret);
	}
	criu_local_free_opts(o);
	kill(victim, SIGKILL);
	waitpid(victim, &status, 0);
}

static void test_service(const char *address)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	criu_opts *o = NULL;
	int sk;

	ok(criu_local_init_opts(&o) == 0, "criu_local_init_opts");
	ok(criu_local_set_service_address(o, address) == 0, "criu_local_set_service_address");
	ok(criu_local_check(o) == 0, "criu_local_check through criu service");
	ok(criu_local_get_version(o) == 40000, "criu_local_get_version through the service");
	ok(criu_local_check_version(o, 31600) == 1, "criu_local_check_version(31600)");
	strncpy(addr.sun_path, address, sizeof(addr.sun_path) - 1);
	sk = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ok(sk >= 0 && !connect(sk, (struct sockaddr *)&addr, sizeof(addr)), "connected");
	criu_local_set_service_fd(o, sk);
	ok(criu_local_check(o) == 0, "criu_local_check on a connection of ours (service fd)");
	close(sk);
	criu_local_set_service_comm(o, CRIU_COMM_BIN);
	ok(criu_local_set_service_binary(o, criu_bin) == 0 && criu_local_check(o) == 0,
	   "back to swrk with criu_local_set_service_comm");
	criu_local_free_opts(o);
	criu_set_service_address(address);
	ok(criu_check() == 0, "criu_check through the service (global options)");
	criu_set_service_fd(-1);
	criu_set_service_comm(CRIU_COMM_BIN);
	criu_set_service_binary(criu_bin);
}

int main(int argc, char **argv)
{
	int img, work;

	if (argc < 3) {
		fprintf(stderr, "usage: %s CRIU WORKDIR [SERVICE_ADDRESS]\n", argv[0]);
		return 2;
	}
	criu_bin = argv[1];
	workdir = argv[2];
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (criu_init_opts() || criu_set_service_binary(criu_bin)) {
		printf("Bail out! criu_init_opts\n");
		return 1;
	}
	img = open_dir("img");
	work = open_dir("work");
	test_version_and_features();
	test_dump_restore_child(img, work);
	test_leave_running_and_restore(img);
	test_refusals(img);
	test_every_setter(img);
	if (argc > 3)
		test_service(argv[3]);
	criu_free_opts();
	printf("1..%d\n", nr_test);
	return failed;
}
