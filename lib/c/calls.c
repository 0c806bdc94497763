// SPDX-License-Identifier: LGPL-2.1
/* libcriu's requests, each in both forms: criu_NAME and criu_local_NAME. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "criu.h"
#include "internal.h"

/* A request whose answer is success or not. */
static int simple(criu_opts *opts, CriuReqType type, int with_opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = type;
	if (with_opts)
		req.opts = opts->rpc;
	ret = libcriu_call(opts, &req, &resp);
	if (!ret && !resp->success)
		ret = -EBADE;
	return libcriu_finish(resp, ret);
}

int criu_local_check(criu_opts *opts)
{
	return simple(opts, CRIU_REQ_TYPE__CHECK, 0);
}

int criu_local_pre_dump(criu_opts *opts)
{
	return simple(opts, CRIU_REQ_TYPE__SINGLE_PRE_DUMP, 1);
}

int criu_local_dump(criu_opts *opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = CRIU_REQ_TYPE__DUMP;
	req.opts = opts->rpc;
	ret = libcriu_call(opts, &req, &resp);
	if (!ret)
		ret = !resp->success ? -EBADE :
		      resp->dump && resp->dump->has_restored && resp->dump->restored;
	return libcriu_finish(resp, ret);
}

static int restore(criu_opts *opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = CRIU_REQ_TYPE__RESTORE;
	req.opts = opts->rpc;
	ret = libcriu_call(opts, &req, &resp);
	if (!ret)
		ret = resp->success && resp->restore ? resp->restore->pid : -EBADE;
	return libcriu_finish(resp, ret);
}

int criu_local_restore(criu_opts *opts)
{
	return restore(opts);
}

/* Only a criu of our own (swrk) can make the root our child: CRIU's rule. */
int criu_local_restore_child(criu_opts *opts)
{
	enum criu_service_comm comm = opts->comm;
	int ret;

	/* opts->binary is kept when another comm is chosen: "criu" or the caller's */
	opts->comm = CRIU_COMM_BIN;
	opts->rpc->has_rst_sibling = 1;
	opts->rpc->rst_sibling = 1;
	ret = restore(opts);
	opts->rpc->has_rst_sibling = 0;
	opts->rpc->rst_sibling = 0;
	opts->comm = comm;
	return ret;
}

int criu_local_dump_iters(criu_opts *opts, int (*more)(criu_predump_info pi))
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp = NULL;
	int sk, ret, go = 1;

	/* iterations of a self-dump are not possible, nor without a callback */
	if (!more || !opts->rpc->has_pid)
		return libcriu_finish(NULL, -EINVAL);
	sk = libcriu_connect(opts);
	if (sk < 0)
		return libcriu_finish(NULL, -ECONNREFUSED);
	req.opts = opts->rpc;
	req.type = CRIU_REQ_TYPE__PRE_DUMP;
	while (go > 0) {
		ret = libcriu_call_on(opts, sk, &req, &resp);
		if (!ret && !resp->success)
			ret = -EBADE;
		if (ret)
			goto out;
		criu_resp__free_unpacked(resp, NULL);
		resp = NULL;
		go = more(NULL);
		if (go < 0) {
			ret = go;
			goto out;
		}
	}
	req.type = CRIU_REQ_TYPE__DUMP;
	ret = libcriu_call_on(opts, sk, &req, &resp);
	if (!ret && !resp->success)
		ret = -EBADE;
out:
	libcriu_disconnect(opts, sk);
	return libcriu_finish(resp, ret);
}

int criu_local_get_version(criu_opts *opts)
{
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	req.type = CRIU_REQ_TYPE__VERSION;
	ret = libcriu_call(opts, &req, &resp);
	if (!ret && (!resp->success || !resp->version))
		ret = -EBADE;
	if (!ret) {
		ret = resp->version->major_number * 10000 + resp->version->minor_number * 100;
		if (resp->version->has_sublevel)
			ret += resp->version->sublevel;
		/* CRIU's and runc's convention: a git build counts as the next minor */
		if (resp->version->gitid)
			ret = ret - ret % 100 + 100;
	}
	return libcriu_finish(resp, ret);
}

int criu_local_check_version(criu_opts *opts, int minimum)
{
	int v = criu_local_get_version(opts);

	return v < 0 ? v : v >= minimum;
}

int criu_local_feature_check(criu_opts *opts, struct criu_feature_check *features,
			     size_t size)
{
	struct criu_feature_check ask = { 0 };
	CriuFeatures f = CRIU_FEATURES__INIT;
	CriuReq req = CRIU_REQ__INIT;
	CriuResp *resp;
	int ret;

	if (!features || size > sizeof(ask))
		return libcriu_finish(NULL, -EINVAL);
	memcpy(&ask, features, size);
	f.has_mem_track = f.mem_track = ask.mem_track;
	f.has_lazy_pages = f.lazy_pages = ask.lazy_pages;
	f.has_pidfd_store = f.pidfd_store = ask.pidfd_store;
	req.type = CRIU_REQ_TYPE__FEATURE_CHECK;
	req.features = &f;
	ret = libcriu_call(opts, &req, &resp);
	if (!ret && (!resp->success || !resp->features))
		ret = -EBADE;
	if (!ret) {
		memset(&ask, 0, sizeof(ask));
		ask.mem_track = resp->features->has_mem_track && resp->features->mem_track;
		ask.lazy_pages = resp->features->has_lazy_pages && resp->features->lazy_pages;
		ask.pidfd_store = resp->features->has_pidfd_store && resp->features->pidfd_store;
		memcpy(features, &ask, size);
	}
	return libcriu_finish(resp, ret);
}

#define GLOBAL(name)						\
	int criu_##name(void)					\
	{							\
		return criu_local_##name(libcriu_global);	\
	}

GLOBAL(check)
GLOBAL(dump)
GLOBAL(pre_dump)
GLOBAL(restore)
GLOBAL(restore_child)
GLOBAL(get_version)

int criu_dump_iters(int (*more)(criu_predump_info pi))
{
	return criu_local_dump_iters(libcriu_global, more);
}

int criu_check_version(int minimum)
{
	return criu_local_check_version(libcriu_global, minimum);
}

int criu_feature_check(struct criu_feature_check *features, size_t size)
{
	return criu_local_feature_check(libcriu_global, features, size);
}
