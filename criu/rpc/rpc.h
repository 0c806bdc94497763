/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_RPC_RPC_H
#define CRIU_RPC_RPC_H

/*
 * CRIU's RPC (criu swrk, criu service): decoding a request and mapping its
 * options, both free of side effects (the fuzz target runs them), and the
 * server that acts on it. Documentation/rpc.md describes the protocol.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/opts.h"
#include "rpc.pb-c.h"

/*
 * The version we answer: CRIU 4.0, whose RPC (criu_opts up to field 74,
 * FEATURE_CHECK with pidfd_store, SINGLE_PRE_DUMP, NOTIFY with fds) this
 * server speaks. Clients gate features on it: runc needs 3.0 (and looks for
 * 3.11, 3.14, 3.15, 3.16), podman 3.11, crun 3.15, containerd and CRI-O
 * 3.16. What we can't do yet is refused by option, not by version.
 */
#define RPC_CRIU_MAJOR		4
#define RPC_CRIU_MINOR		0
#define RPC_CRIU_SUBLEVEL	0

/* Largest request accepted: runc sends a few KiB, a hundred mounts and more. */
#define RPC_MAX_MSG		(128 << 10)

enum rpc_mode {
	RPC_SWRK,		/* criu swrk FD: the client is our parent */
	RPC_SERVICE,		/* criu service: a connection of a daemon */
};

/* What a request asks for, checked; nothing is opened yet. */
struct rpc_setup {
	struct opts o;			/* what the drivers read */
	int images_dir_fd;		/* the client's fd numbers, -1: none */
	int work_dir_fd;
	int status_fd;
	const char *images_dir;		/* a path, when images_dir_fd is -1 */
	const char *log_file;		/* a name in the work directory */
	int log_level;
	int log_to_stderr;
	int notify;			/* notify_scripts: ask the client at each hook */
	int has_pid;
	const char *config_file;
	char *conf_buf;			/* the config file's text; strings point into it */
	char **conf_strs;		/* values copied out of it */
	int nr_conf_strs;
	struct cg_root *cg_roots;	/* o.cg_roots: cg_root and cgroup-root lines */
	int inherited_open;		/* o.inherit_fds are ours now, not the client's */
	int cr_errno;			/* for the response */
	char err[1024];			/* the one line that says why not */
};

/*
 * Decodes one packet. Returns the request, or NULL with @err set: garbage,
 * a truncated message, a missing required field, an unknown field, a
 * request type this protocol does not have.
 */
CriuReq *rpc_decode(const uint8_t *buf, size_t len, char *err, size_t errlen);

/*
 * Maps @ro (NULL: no options) onto @rs for a request of @type. Every field
 * of criu_opts is in one table (options.c): honoured, accepted (it changes
 * nothing here, and the log says why) or refused with what is missing.
 * 0, or -1 with rs->err naming every refused option.
 */
int rpc_setup_from_opts(struct rpc_setup *rs, const CriuOpts *ro, CriuReqType type,
			enum rpc_mode mode);
/*
 * CRIU's configuration file syntax (one long option per line, without the
 * dashes, an optional value after blanks, # comments), applied over the
 * request's options as CRIU does. @text is modified and must stay alive.
 */
int rpc_setup_config_text(struct rpc_setup *rs, char *text, const char *name);
/* The same from a file; a missing file is fine (runc always names one). */
int rpc_setup_config_file(struct rpc_setup *rs, const char *path);
void rpc_setup_free(struct rpc_setup *rs);
/* Logs (debug) every field @ro carries: what a client really sent. */
void rpc_log_opts(const CriuOpts *ro);

/* Every criu_opts field has a rule (the unit test checks the table). */
int rpc_opts_rule_count(void);
const char *rpc_opts_rule_field(int i);

#endif
