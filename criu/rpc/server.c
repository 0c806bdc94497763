// SPDX-License-Identifier: GPL-2.0
/*
 * The RPC server: `criu swrk FD` serves the client at the other end of a
 * socketpair (runc, crun through libcriu, podman, containerd), and each
 * connection of `criu service` is served the same way (service.c).
 *
 * A request is decoded and its options mapped before anything happens;
 * what can't be done is answered with success=false, cr_errno and the one
 * line that says why (cr_errmsg), and written to the request's log too: runc
 * shows the user the log, not the message. The client's fds are opened
 * through /proc/PEER/fd/N: the numbers in a request are the client's.
 *
 * DUMP and RESTORE run in this process, and end the connection: a dump
 * changes the tree, a restore leaves children, and a second one in the
 * same process would start from what the first left. CHECK and CPUINFO run
 * in a child that answers by itself, so that keep_open can go on after them
 * in a clean process; VERSION, FEATURE_CHECK and WAIT_PID are answered here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "core/log.h"
#include "core/util.h"
#include "hooks.h"
#include "rpc/rpc.h"
#include "rpc/server.h"
#include "rpc/wire.h"

#define DEFAULT_LOG	"criu.log"	/* CRIU's, in the work directory */

struct rpc_conn {
	int sk;
	enum rpc_mode mode;
	pid_t peer;		/* the client, as SO_PEERCRED names it */
	int notify;		/* the request asked to be notified */
	pid_t root;		/* restore: the root, told by post-restore */
	char images[32];	/* /proc/self/fd/N of the client's directories */
	char work[32];
	char log[PATH_MAX];
};

static const char *type_name(CriuReqType t)
{
	const ProtobufCEnumValue *v =
		protobuf_c_enum_descriptor_get_value(&criu_req_type__descriptor, t);

	return v ? v->name : "?";
}

static int respond(struct rpc_conn *c, CriuResp *resp)
{
	if (!rpc_send(c->sk, resp, -1))
		return 0;
	/* not an error of the request: the client is gone, nobody to tell */
	pr_warn("Can't send the %s response: %s", type_name(resp->type), strerror(errno));
	return -1;
}

/* success=false with cr_errno and cr_errmsg: always the line that says why. */
static int respond_error(struct rpc_conn *c, CriuResp *resp, int cr_errno, const char *why)
{
	resp->success = 0;
	if (cr_errno) {
		resp->has_cr_errno = 1;
		resp->cr_errno = cr_errno;
	}
	resp->cr_errmsg = (char *)(why ? why : "failed");
	respond(c, resp);
	return -1;
}

static int answer_error(struct rpc_conn *c, CriuReqType type, int cr_errno, const char *why)
{
	CriuResp resp = CRIU_RESP__INIT;

	resp.type = type;
	return respond_error(c, &resp, cr_errno, why);
}

/* The first error of the work just done, for cr_errmsg. */
static const char *failure(struct rpc_conn *c, const char *what)
{
	static char buf[PATH_MAX + 64];
	const char *err = log_first_error();

	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%s failed; see %s", what, c->log[0] ? c->log : "the log");
	return buf;
}

/* ------------------------------------------------------------ the setup */

/* A directory of the client's, as an fd of ours named /proc/self/fd/N. */
static int open_client_dir(struct rpc_conn *c, int fd, char *name, size_t len,
			   struct rpc_setup *rs, const char *what)
{
	char path[64];
	int our;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->peer, fd);
	our = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (our < 0) {
		snprintf(rs->err, sizeof(rs->err), "Can't open the %s (fd %d of client %d): %s",
			 what, fd, c->peer, strerror(errno));
		rs->cr_errno = errno;
		return -1;
	}
	snprintf(name, len, "/proc/self/fd/%d", our);
	return our;
}

/*
 * The request's directories as the command line's: o.images_dirfd and
 * o.work_dirfd, in which every file is created by fd. A dump may name an
 * images directory by path that is still to be made.
 */
static int open_dirs(struct rpc_conn *c, struct rpc_setup *rs, int need_images, int create)
{
	rs->o.images_dirfd = -1;
	rs->o.work_dirfd = AT_FDCWD;
	if (rs->images_dir_fd >= 0) {
		rs->o.images_dirfd = open_client_dir(c, rs->images_dir_fd, c->images,
						     sizeof(c->images), rs, "images directory");
		if (rs->o.images_dirfd < 0)
			return -1;
		rs->o.images_dir = c->images;
	} else if (rs->images_dir) {
		rs->o.images_dir = rs->images_dir;
		rs->o.images_dirfd = open_dir(rs->images_dir, create, "images");
		if (rs->o.images_dirfd < 0) {
			snprintf(rs->err, sizeof(rs->err), "%s", log_first_error());
			return -1;
		}
	} else if (need_images) {
		snprintf(rs->err, sizeof(rs->err), "The request names no images directory "
			 "(images_dir_fd or images_dir)");
		rs->cr_errno = EBADRQC;
		return -1;
	}
	rs->o.work_dirfd = rs->o.images_dirfd >= 0 ? rs->o.images_dirfd : AT_FDCWD;
	if (rs->work_dir_fd >= 0) {
		rs->o.work_dirfd = open_client_dir(c, rs->work_dir_fd, c->work,
						   sizeof(c->work), rs, "work directory");
		if (rs->o.work_dirfd < 0)
			return -1;
		rs->o.work_dir = c->work;
	}
	return 0;
}

/* The request's log: log_file (or criu.log) in the work directory. */
static int open_log(struct rpc_conn *c, struct rpc_setup *rs)
{
	const char *dir = rs->o.work_dir ? rs->o.work_dir : rs->o.images_dir;
	int logged = !rs->log_to_stderr && rs->o.work_dirfd != AT_FDCWD;
	const char *name = rs->log_file ? rs->log_file : DEFAULT_LOG;

	c->log[0] = '\0';
	if (logged)
		snprintf(c->log, sizeof(c->log), "%s/%s", dir, name);
	log_set_stderr_errors(1);
	if (log_open_at(rs->o.work_dirfd, logged ? name : NULL, rs->log_level)) {
		snprintf(rs->err, sizeof(rs->err), "%s", log_first_error());
		return -1;
	}
	return 0;
}

static int open_status_fd(struct rpc_conn *c, struct rpc_setup *rs)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->peer, rs->status_fd);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(rs->err, sizeof(rs->err), "Can't open the status fd %d of client %d: %s",
			 rs->status_fd, c->peer, strerror(errno));
		return -1;
	}
	rs->status_fd = fd;
	return 0;
}

/*
 * inherit_fd: the client's fds (the namespace a runtime gives by path),
 * opened as ours through /proc, as its directories are.
 */
static int open_inherited(struct rpc_conn *c, struct rpc_setup *rs)
{
	char path[64];
	int i, fd;

	for (i = 0; i < rs->o.nr_inherit_fds; i++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", c->peer, rs->o.inherit_fds[i].fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(rs->err, sizeof(rs->err), "Can't open inherit_fd %s (fd %d of "
				 "client %d): %s", rs->o.inherit_fds[i].key,
				 rs->o.inherit_fds[i].fd, c->peer, strerror(errno));
			rs->o.nr_inherit_fds = i;
			rs->inherited_open = 1;
			return -1;
		}
		rs->o.inherit_fds[i].fd = fd;
	}
	rs->inherited_open = 1;
	return 0;
}

static void close_inherited(struct rpc_setup *rs)
{
	int i;

	for (i = 0; rs->inherited_open && i < rs->o.nr_inherit_fds; i++)
		close(rs->o.inherit_fds[i].fd);
	rs->inherited_open = 0;
}

/*
 * Everything a request with options needs before the work: the options
 * mapped, the config file read, the client's directories opened and the
 * log started in them. A refusal still goes to that log when there is one.
 */
static int prepare(struct rpc_conn *c, CriuReq *req, struct rpc_setup *rs, int need_images)
{
	int bad;

	bad = rpc_setup_from_opts(rs, req->opts, req->type, c->mode);
	if (!bad && rs->config_file)
		bad = rpc_setup_config_file(rs, rs->config_file);
	if (!rs->has_pid)
		rs->o.pid = c->peer;
	if (!bad)
		bad = open_dirs(c, rs, need_images, req->type == CRIU_REQ_TYPE__DUMP ||
				req->type == CRIU_REQ_TYPE__PRE_DUMP ||
				req->type == CRIU_REQ_TYPE__SINGLE_PRE_DUMP);
	else
		open_dirs(c, rs, 0, 0);
	if (open_log(c, rs))
		return -1;
	pr_info("RPC %s from client %d (%s)", type_name(req->type), c->peer,
		c->mode == RPC_SWRK ? "swrk" : "service");
	rpc_log_opts(req->opts);
	if (!bad && rs->status_fd >= 0)
		bad = open_status_fd(c, rs);
	if (!bad)
		bad = open_inherited(c, rs);
	if (bad) {
		pr_err("%s", rs->err);
		if (!rs->cr_errno)
			rs->cr_errno = EBADRQC;
		return -1;
	}
	c->notify = rs->notify;
	hooks_set_images_dir(rs->o.images_dir);
	return 0;
}

static void status_ready(struct rpc_setup *rs)
{
	char zero = 0;

	if (rs->status_fd < 0)
		return;
	if (write(rs->status_fd, &zero, 1) != 1)
		pr_warn("Can't write to the status fd: %s", strerror(errno));
	close(rs->status_fd);
	rs->status_fd = -1;
}

/* ------------------------------------------------------- notifications */

static int notify_answer(struct rpc_conn *c, enum hook h)
{
	char err[256];
	CriuReq *req;
	uint8_t *buf;
	ssize_t len;
	int ret = -1;

	len = rpc_recv(c->sk, &buf);
	if (len <= 0) {
		pr_err("The RPC client went away during the %s notification", hook_name(h));
		return -1;
	}
	req = rpc_decode(buf, len, err, sizeof(err));
	free(buf);
	if (!req)
		pr_err("The RPC client's answer to %s: %s", hook_name(h), err);
	else if (req->type != CRIU_REQ_TYPE__NOTIFY)
		pr_err("The RPC client answered %s to the %s notification", type_name(req->type),
		       hook_name(h));
	else if (!req->notify_success)
		pr_err("The RPC client said no to %s", hook_name(h));
	else
		ret = 0;
	if (req)
		criu_req__free_unpacked(req, NULL);
	return ret;
}

/* CRIU's notification: the action's name, the root's pid where it has one. */
static int rpc_notify(void *arg, enum hook h, pid_t pid, int fd)
{
	struct rpc_conn *c = arg;
	CriuResp resp = CRIU_RESP__INIT;
	CriuNotify n = CRIU_NOTIFY__INIT;

	if (h == HOOK_POST_RESTORE)
		c->root = pid;
	if (!c->notify)
		return 0;
	resp.type = CRIU_REQ_TYPE__NOTIFY;
	resp.success = 1;
	resp.notify = &n;
	n.script = (char *)hook_name(h);
	if (h == HOOK_SETUP_NS || h == HOOK_POST_RESTORE) {
		n.has_pid = 1;
		n.pid = pid;
	}
	if (rpc_send(c->sk, &resp, fd)) {
		pr_perror("Can't send the %s notification", hook_name(h));
		return -1;
	}
	return notify_answer(c, h);
}

/* ------------------------------------------------------------- requests */

static int do_version(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuVersion v = CRIU_VERSION__INIT;
	int a = 0, b = 0, d = 0;

	resp.type = req->type;
	resp.success = 1;
	resp.version = &v;
	v.major_number = RPC_CRIU_MAJOR;
	v.minor_number = RPC_CRIU_MINOR;
	v.has_sublevel = 1;
	v.sublevel = RPC_CRIU_SUBLEVEL;
	/* no gitid: clients would count one minor more */
	v.name = "criu, a reimplementation, " CRIU_VERSION;
	sscanf(CRIU_VERSION, "%d.%d.%d", &a, &b, &d);
	v.has_extra = 1;
	v.extra = a * 10000 + b * 100 + d;
	return respond(c, &resp);
}

/* CRIU's answer: every feature present, true where asked for and there. */
static int do_features(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuFeatures f = CRIU_FEATURES__INIT;
	const CriuFeatures *q = req->features;
	const char *why;

	resp.type = req->type;
	resp.success = 1;
	resp.features = &f;
	f.has_mem_track = f.has_lazy_pages = f.has_pidfd_store = 1;
	f.mem_track = q && q->has_mem_track && q->mem_track &&
		      check_feature("mem_dirty_track", &why) == 1;
	f.lazy_pages = q && q->has_lazy_pages && q->lazy_pages &&
		       check_feature("uffd-noncoop", &why) == 1;
	f.pidfd_store = q && q->has_pidfd_store && q->pidfd_store &&
			check_feature("pidfd_store", &why) == 1;
	return respond(c, &resp);
}

static int do_wait_pid(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	char why[128];
	int status;

	resp.type = req->type;
	if (!req->has_pid || !req->pid || req->pid > INT_MAX)
		return respond_error(c, &resp, EINVAL, "WAIT_PID names no pid");
	while (waitpid(req->pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		snprintf(why, sizeof(why), "Can't wait for %u: %s (only criu's own children "
			 "can be waited for)", req->pid, strerror(errno));
		return respond_error(c, &resp, errno, why);
	}
	resp.success = 1;
	resp.has_status = 1;
	resp.status = status;
	return respond(c, &resp);
}

/* In the child of in_child(): CHECK and CPUINFO, answered from there. */
static int child_work(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	struct rpc_setup rs;
	int check = req->type == CRIU_REQ_TYPE__CHECK, ret;

	resp.type = req->type;
	if (prepare(c, req, &rs, !check)) {
		respond_error(c, &resp, rs.cr_errno, rs.err);
		return -1;
	}
	/* a table on stdout is for a terminal, not for the client's stdout */
	dup2(log_fd() > 2 ? log_fd() : open("/dev/null", O_WRONLY), 1);
	if (check)
		ret = cr_check(&rs.o);
	else
		ret = cr_cpuinfo(&rs.o, req->type == CRIU_REQ_TYPE__CPUINFO_DUMP ? "dump" : "check");
	fflush(stdout);
	if (ret)
		return respond_error(c, &resp, 0, failure(c, type_name(req->type)));
	resp.success = 1;
	return respond(c, &resp);
}

static int in_child(struct rpc_conn *c, CriuReq *req)
{
	char why[128];
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		snprintf(why, sizeof(why), "Can't fork for %s: %s", type_name(req->type),
			 strerror(errno));
		return answer_error(c, req->type, errno, why);
	}
	if (!pid)
		_exit(child_work(c, req) ? 1 : 0);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return answer_error(c, req->type, errno, "Can't wait for criu's worker");
	/* it answered (0: success, 1: the error), or died before it could */
	if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		return WEXITSTATUS(status) ? -1 : 0;
	snprintf(why, sizeof(why), "criu's worker for %s died (status %#x)",
		 type_name(req->type), status);
	return answer_error(c, req->type, 0, why);
}

static int do_dump(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuDumpResp d = CRIU_DUMP_RESP__INIT;
	struct rpc_setup rs;
	int ret;

	resp.type = req->type;
	resp.dump = &d;
	d.has_restored = 1;
	if (prepare(c, req, &rs, 1)) {
		ret = respond_error(c, &resp, rs.cr_errno, rs.err);
		goto out;
	}
	/*
	 * CRIU's pre-dump: the memory is saved, the tree runs on, its writes
	 * tracked. SINGLE_PRE_DUMP (libcriu's criu_pre_dump(), crun's
	 * --pre-dump) is one such round with the connection's end after it,
	 * as every request here is.
	 */
	if (req->type == CRIU_REQ_TYPE__PRE_DUMP || req->type == CRIU_REQ_TYPE__SINGLE_PRE_DUMP)
		rs.o.pre_dump = rs.o.leave_running = rs.o.track_mem = 1;
	if (check_privileges(&rs.o, "dump")) {
		ret = respond_error(c, &resp, EPERM, failure(c, "dump"));
		goto out;
	}
	hooks_set_notifier(rpc_notify, c);
	ret = cr_dump(&rs.o);
	hooks_set_notifier(NULL, NULL);
	if (ret) {
		ret = respond_error(c, &resp, 0, failure(c, "dump"));
		goto out;
	}
	status_ready(&rs);
	resp.success = 1;
	/* a dump of the client itself leaves nobody to answer */
	if (rs.o.pid == c->peer && !rs.o.leave_running && !rs.o.leave_stopped)
		goto out;
	respond(c, &resp);
out:
	close_inherited(&rs);
	rpc_setup_free(&rs);
	return ret;
}

static int do_restore(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuRestoreResp r = CRIU_RESTORE_RESP__INIT;
	struct rpc_setup rs;
	int ret;

	resp.type = req->type;
	resp.restore = &r;
	r.pid = -1;
	if (prepare(c, req, &rs, 1)) {
		ret = respond_error(c, &resp, rs.cr_errno, rs.err);
		goto out;
	}
	/* the client owns the restored tree: criu answers and goes */
	rs.o.restore_detached = 1;
	if (check_privileges(&rs.o, "restore")) {
		ret = respond_error(c, &resp, EPERM, failure(c, "restore"));
		goto out;
	}
	hooks_set_notifier(rpc_notify, c);
	ret = cr_restore(&rs.o);
	hooks_set_notifier(NULL, NULL);
	if (ret) {
		ret = respond_error(c, &resp, 0, failure(c, "restore"));
		goto out;
	}
	status_ready(&rs);
	resp.success = 1;
	r.pid = c->root;
	respond(c, &resp);
out:
	close_inherited(&rs);
	rpc_setup_free(&rs);
	return ret;
}

/*
 * PAGE_SERVER: a page server for one dump into the images directory, run
 * by a child of ours that outlives us; the answer gives its port and pid.
 */
static int do_page_server(struct rpc_conn *c, CriuReq *req)
{
	CriuResp resp = CRIU_RESP__INIT;
	CriuPageServerInfo ps = CRIU_PAGE_SERVER_INFO__INIT;
	struct rpc_setup rs;
	int ret = -1, lsk = -1, port;
	pid_t pid;

	resp.type = req->type;
	if (prepare(c, req, &rs, 1)) {
		ret = respond_error(c, &resp, rs.cr_errno, rs.err);
		goto out;
	}
	if (rs.o.port < 0)
		rs.o.port = 0;	/* no ps.port: any free one, told in the answer */
	lsk = page_server_listen(&rs.o, &port);
	pid = lsk < 0 ? -1 : fork();
	if (pid < 0) {
		if (lsk >= 0)
			pr_perror("Can't start the page server");
		ret = respond_error(c, &resp, 0, failure(c, "page server"));
		goto out;
	}
	if (!pid) {
		setsid();
		_exit(page_server_serve(&rs.o, lsk) ? 1 : 0);
	}
	status_ready(&rs);
	resp.success = 1;
	resp.ps = &ps;
	ps.has_port = ps.has_pid = 1;
	ps.port = port;
	ps.pid = pid;
	ret = respond(c, &resp);
out:
	if (lsk >= 0)
		close(lsk);
	close_inherited(&rs);
	rpc_setup_free(&rs);
	return ret;
}

/* A request criu knows but does not do (yet): said so, by its own type. */
static int refuse_type(struct rpc_conn *c, CriuReq *req)
{
	const char *why;

	switch (req->type) {
	case CRIU_REQ_TYPE__PAGE_SERVER_CHLD:
		why = "PAGE_SERVER_CHLD is not implemented: send PAGE_SERVER, whose server "
		      "runs on after criu answers";
		break;
	case CRIU_REQ_TYPE__NOTIFY:
		return answer_error(c, CRIU_REQ_TYPE__EMPTY, EBADRQC, "NOTIFY answers a "
				    "notification, and none was sent");
	default:
		return answer_error(c, CRIU_REQ_TYPE__EMPTY, EBADRQC, "Request of type EMPTY "
				    "asks for nothing");
	}
	return answer_error(c, req->type, ENOTSUP, why);
}

/* CRIU's rule, widened to the requests that leave nothing behind here. */
static int keep_open_ok(CriuReqType t)
{
	switch (t) {
	case CRIU_REQ_TYPE__VERSION:
	case CRIU_REQ_TYPE__FEATURE_CHECK:
	case CRIU_REQ_TYPE__CHECK:
	case CRIU_REQ_TYPE__CPUINFO_DUMP:
	case CRIU_REQ_TYPE__CPUINFO_CHECK:
	case CRIU_REQ_TYPE__WAIT_PID:
		return 1;
	default:
		return 0;
	}
}

static int serve_one(struct rpc_conn *c, CriuReq *req)
{
	char why[128];

	if (req->keep_open && !keep_open_ok(req->type)) {
		snprintf(why, sizeof(why), "keep_open is not allowed with %s: it ends the "
			 "connection", type_name(req->type));
		return answer_error(c, req->type, EBADRQC, why);
	}
	switch (req->type) {
	case CRIU_REQ_TYPE__VERSION:
		return do_version(c, req);
	case CRIU_REQ_TYPE__FEATURE_CHECK:
		return do_features(c, req);
	case CRIU_REQ_TYPE__WAIT_PID:
		return do_wait_pid(c, req);
	case CRIU_REQ_TYPE__CHECK:
	case CRIU_REQ_TYPE__CPUINFO_DUMP:
	case CRIU_REQ_TYPE__CPUINFO_CHECK:
		return in_child(c, req);
	case CRIU_REQ_TYPE__DUMP:
	case CRIU_REQ_TYPE__PRE_DUMP:
	case CRIU_REQ_TYPE__SINGLE_PRE_DUMP:
		return do_dump(c, req);
	case CRIU_REQ_TYPE__RESTORE:
		return do_restore(c, req);
	case CRIU_REQ_TYPE__PAGE_SERVER:
		return do_page_server(c, req);
	default:
		return refuse_type(c, req);
	}
}

int rpc_serve(int sk, enum rpc_mode mode)
{
	struct rpc_conn c = { .sk = sk, .mode = mode };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char err[256];
	CriuReq *req;
	uint8_t *buf;
	ssize_t n;
	int ret = 0, more;

	if (getsockopt(sk, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0) {
		pr_perror("Can't tell who the RPC client on fd %d is", sk);
		return -1;
	}
	c.peer = cred.pid;
	do {
		n = rpc_recv(sk, &buf);
		if (n <= 0)
			return n ? -1 : ret;	/* the client is done */
		req = rpc_decode(buf, n, err, sizeof(err));
		free(buf);
		if (!req)
			return answer_error(&c, CRIU_REQ_TYPE__EMPTY, EBADMSG, err);
		ret = serve_one(&c, req);
		/* CRIU's iterative dump: after a PRE_DUMP the next round or the DUMP comes */
		more = !ret && (req->keep_open || req->type == CRIU_REQ_TYPE__PRE_DUMP);
		criu_req__free_unpacked(req, NULL);
	} while (more);
	return ret;
}

int cr_swrk(const char *arg)
{
	int fd, type;
	socklen_t len = sizeof(type);
	char *end;

	fd = arg ? strtol(arg, &end, 10) : -1;
	if (!arg || *end || fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    type != SOCK_SEQPACKET) {
		pr_err("criu swrk needs the fd of a SOCK_SEQPACKET socket, not '%s'",
		       arg ? arg : "");
		return -1;
	}
	/* nothing criu starts (scripts, restored tasks) may hold it */
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* a failed request was answered: the exit status only repeats it */
	return rpc_serve(fd, RPC_SWRK) ? 1 : 0;
}
