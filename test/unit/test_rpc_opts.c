// SPDX-License-Identifier: GPL-2.0
/*
 * The RPC's decoding and option table (criu/rpc), without a socket:
 * every field of criu_opts has one rule (a new field can't be ignored
 * silently), refusals name the option and what is missing, the config file
 * syntax, and requests that must not decode.
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "rpc/rpc.h"
#include "unit.h"

static void unit_setup(void)
{
	log_open(NULL, 0);
}

static void every_field_has_one_rule(void)
{
	const ProtobufCMessageDescriptor *d = &criu_opts__descriptor;
	unsigned i;
	int j, n;

	for (i = 0; i < d->n_fields; i++) {
		for (j = n = 0; j < rpc_opts_rule_count(); j++)
			n += !strcmp(rpc_opts_rule_field(j), d->fields[i].name);
		expect(n == 1, "criu_opts.%s has %d rules", d->fields[i].name, n);
	}
	for (j = 0; j < rpc_opts_rule_count(); j++)
		expect(protobuf_c_message_descriptor_get_field_by_name(d, rpc_opts_rule_field(j)),
		       "rule %s names no field", rpc_opts_rule_field(j));
	expect(rpc_opts_rule_count() == (int)d->n_fields, "%d rules, %u fields",
	       rpc_opts_rule_count(), d->n_fields);
}

static void honoured_options_land(void)
{
	CriuOpts ro = CRIU_OPTS__INIT;
	CgroupRoot r0 = CGROUP_ROOT__INIT, r1 = CGROUP_ROOT__INIT, *roots[] = { &r0, &r1 };
	struct rpc_setup rs;

	r0.path = "/ct";
	r1.ctrl = "cpu";
	r1.path = "/x";
	ro.images_dir_fd = 7;
	ro.has_work_dir_fd = ro.has_pid = ro.has_leave_running = ro.has_shell_job = 1;
	ro.work_dir_fd = 8;
	ro.pid = 1234;
	ro.leave_running = ro.shell_job = 1;
	ro.has_log_level = ro.has_cpu_cap = ro.has_rst_sibling = 1;
	ro.log_level = 4;
	ro.cpu_cap = 0xffffffff;
	ro.rst_sibling = 1;
	ro.log_file = "dump.log";
	ro.has_evasive_devices = ro.evasive_devices = 1;
	ro.has_manage_cgroups_mode = 1;
	ro.manage_cgroups_mode = CRIU_CG_MODE__CG_NONE;
	ro.has_manage_cgroups = ro.manage_cgroups = 1;
	ro.n_cg_root = 2;
	ro.cg_root = roots;
	ro.freeze_cgroup = "/sys/fs/cgroup/freezer/ct";
	ro.root = "/";
	require(!rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__DUMP, RPC_SWRK), "%s", rs.err);
	expect(rs.o.manage_cgroups == CG_MODE_NONE, "mode %d", rs.o.manage_cgroups);
	expect(rs.o.nr_cg_roots == 2 && !rs.o.cg_roots[0].ctrl &&
	       !strcmp(rs.o.cg_roots[0].path, "/ct") && !strcmp(rs.o.cg_roots[1].ctrl, "cpu") &&
	       !strcmp(rs.o.cg_roots[1].path, "/x"), "cg_root");
	expect(rs.o.freeze_cgroup && !strcmp(rs.o.freeze_cgroup, "/sys/fs/cgroup/freezer/ct"),
	       "freeze_cgroup");
	expect(rs.images_dir_fd == 7 && rs.work_dir_fd == 8, "fds %d %d", rs.images_dir_fd,
	       rs.work_dir_fd);
	expect(rs.o.pid == 1234 && rs.has_pid && rs.o.leave_running && rs.o.shell_job, "flags");
	expect(rs.log_level == 4 && !strcmp(rs.log_file, "dump.log"), "log");
	expect(rs.o.cpu_cap == 7 && rs.o.restore_sibling, "cpu_cap %#x", rs.o.cpu_cap);
	rpc_setup_free(&rs);
}

static void refusals_name_everything(void)
{
	CriuOpts ro = CRIU_OPTS__INIT;
	ExtMountMap m = EXT_MOUNT_MAP__INIT, *mp = &m;
	struct rpc_setup rs;

	ro.root = "/run/runc/x/rootfs";
	ro.cgroup_props = "\"cpu\": []";
	ro.n_ext_mnt = 1;
	ro.ext_mnt = &mp;
	m.key = m.val = "/proc/sys";
	ro.has_tcp_established = 1;	/* false: nothing asked */
	expect(rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__DUMP, RPC_SWRK) == -1, "accepted");
	expect(rs.cr_errno == EBADRQC, "cr_errno %d", rs.cr_errno);
	expect(strstr(rs.err, "cgroup_props") && strstr(rs.err, "refused") &&
	       !strstr(rs.err, "root") && !strstr(rs.err, "ext_mnt") && !strstr(rs.err, "tcp"),
	       "%s", rs.err);
	rpc_setup_free(&rs);
}

static int has_external(const struct rpc_setup *rs, const char *want)
{
	int i;

	for (i = 0; i < rs->o.nr_external; i++)
		if (!strcmp(rs->o.external[i], want))
			return 1;
	return 0;
}

/* runc's mount options: the root, and ext_mnt for every bind mount and masked path */
static void mount_options_honoured(void)
{
	CriuOpts ro = CRIU_OPTS__INIT;
	ExtMountMap m = EXT_MOUNT_MAP__INIT, *mp = &m;
	char *ext[] = { "mnt[/etc/hosts]:hosts", "dev[/dev/nvidia0]:gpu" };
	struct rpc_setup rs;

	ro.root = "/run/runc/x/rootfs";
	ro.n_ext_mnt = 1;
	ro.ext_mnt = &mp;
	m.key = "/proc/sys";
	m.val = "/proc/sys";
	ro.n_external = 1;
	ro.external = ext;
	ro.has_auto_ext_mnt = ro.auto_ext_mnt = 1;
	expect(!rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__RESTORE, RPC_SWRK), "%s", rs.err);
	expect(rs.o.root && !strcmp(rs.o.root, "/run/runc/x/rootfs"), "root");
	expect(rs.o.nr_external == 3 && has_external(&rs, "mnt[/proc/sys]:/proc/sys") &&
	       has_external(&rs, "mnt[/etc/hosts]:hosts") && has_external(&rs, "mnt[]"),
	       "%d externals", rs.o.nr_external);
	rpc_setup_free(&rs);
	ro.n_external = 2;	/* a kind no part reads: refused by name */
	ro.n_ext_mnt = 0;
	expect(rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__DUMP, RPC_SWRK) == -1 &&
	       strstr(rs.err, "dev[/dev/nvidia0]"), "%s", rs.err);
	rpc_setup_free(&rs);
}

static void service_refuses_rst_sibling(void)
{
	CriuOpts ro = CRIU_OPTS__INIT;
	struct rpc_setup rs;

	ro.has_rst_sibling = ro.rst_sibling = 1;
	expect(!rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__RESTORE, RPC_SWRK), "%s", rs.err);
	expect(rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__RESTORE, RPC_SERVICE) &&
	       strstr(rs.err, "rst_sibling"), "%s", rs.err);
	ro.log_file = "../escape.log";
	ro.rst_sibling = 0;
	expect(rpc_setup_from_opts(&rs, &ro, CRIU_REQ_TYPE__DUMP, RPC_SWRK) &&
	       strstr(rs.err, "log_file"), "a log file outside the work dir: %s", rs.err);
}

static void config_text(void)
{
	char good[] = "# runc.conf\n\n   leave-running  # here\nv 3\nlog-file \"x y.log\"\n"
		      "tree 42\nmanage-cgroups=ignore\nghost-limit 10\ncgroup-root cpu:/a b\n";
	char refused[] = "shell-job\nweak-sysctls\ncgroup-yard /y\n";
	char unknown[] = "leave-running\n\nfoo-bar 1\n";
	char bad[] = "verbosity lots\n";
	char secret[] = "root:$6$salt$hash:19000:0:99999:7:::\n";
	char status_fd[] = "status-fd 6666\n";
	struct rpc_setup rs;

	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	require(!rpc_setup_config_text(&rs, good, "good.conf"), "%s", rs.err);
	expect(rs.o.leave_running && rs.log_level == 3 && rs.o.pid == 42 && rs.has_pid, "values");
	expect(rs.log_file && !strcmp(rs.log_file, "x y.log"), "log-file '%s'", rs.log_file);
	expect(rs.o.manage_cgroups == CG_MODE_IGNORE && rs.o.nr_cg_roots == 1 &&
	       !strcmp(rs.o.cg_roots[0].ctrl, "cpu") && !strcmp(rs.o.cg_roots[0].path, "/a b"),
	       "manage-cgroups, cgroup-root");
	rpc_setup_free(&rs);
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(rpc_setup_config_text(&rs, refused, "r.conf") && rs.o.shell_job &&
	       strstr(rs.err, "weak_sysctls") && strstr(rs.err, "config") &&
	       strstr(rs.err, "cgroup_yard"), "%s", rs.err);
	rpc_setup_free(&rs);
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(rpc_setup_config_text(&rs, unknown, "u.conf") &&
	       strstr(rs.err, "u.conf, line 3") && strstr(rs.err, "foo-bar"), "%s", rs.err);
	rpc_setup_free(&rs);
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(rpc_setup_config_text(&rs, bad, "b.conf") && strstr(rs.err, "lots"), "%s",
	       rs.err);
	rpc_setup_free(&rs);
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(rpc_setup_config_text(&rs, secret, "/etc/shadow") && !strstr(rs.err, "salt") &&
	       strstr(rs.err, "line 1"), "a file that is no config is not echoed: %s", rs.err);
	rpc_setup_free(&rs);
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(!rpc_setup_config_file(&rs, "/nonexistent/runc.conf"), "a missing file: %s",
	       rs.err);
	rpc_setup_free(&rs);
	/* an option with no place in rs but its setter's (test/fuzz/fuzz_rpc) */
	rpc_setup_from_opts(&rs, NULL, CRIU_REQ_TYPE__DUMP, RPC_SWRK);
	expect(rpc_setup_config_text(&rs, status_fd, "s.conf") && rs.status_fd == -1 &&
	       strstr(rs.err, "s.conf, line 1") && strstr(rs.err, "status-fd"),
	       "status-fd from a config file: %s", rs.err);
	rpc_setup_free(&rs);
}

static void decoding(void)
{
	static const uint8_t version[] = { 0x08, 0x0a, 0x20, 0x01 };
	static const uint8_t unknown[] = { 0x08, 0x0a, 0xf8, 0x01, 0x05 };
	static const uint8_t bad_enum[] = { 0x08, 0x0e };
	static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff };
	char err[256];
	CriuReq *req;

	req = rpc_decode(version, sizeof(version), err, sizeof(err));
	require(req, "%s", err);
	expect(req->type == CRIU_REQ_TYPE__VERSION && req->keep_open, "decoded");
	criu_req__free_unpacked(req, NULL);
	expect(!rpc_decode(unknown, sizeof(unknown), err, sizeof(err)) &&
	       strstr(err, "field 31"), "%s", err);
	expect(!rpc_decode(bad_enum, sizeof(bad_enum), err, sizeof(err)) &&
	       strstr(err, "14"), "%s", err);
	expect(!rpc_decode(garbage, sizeof(garbage), err, sizeof(err)), "garbage decoded");
	expect(!rpc_decode(garbage, 0, err, sizeof(err)) && strstr(err, "empty"), "%s", err);
}

static const struct unit_test tests[] = {
	UNIT_TEST(every_field_has_one_rule),
	UNIT_TEST(honoured_options_land),
	UNIT_TEST(refusals_name_everything),
	UNIT_TEST(mount_options_honoured),
	UNIT_TEST(service_refuses_rst_sibling),
	UNIT_TEST(config_text),
	UNIT_TEST(decoding),
};

UNIT_MAIN(tests)
