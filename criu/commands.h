/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_COMMANDS_H
#define CRIU_COMMANDS_H

/*
 * One entry point per command: main() parses the command line into
 * struct opts and calls one of these; the RPC server maps a request onto
 * the same. Each returns 0 on success, -1 after logging why (restore
 * without -d: the restored root's exit status).
 */
#include "core/opts.h"

int cr_dump(const struct opts *o);
int cr_restore(const struct opts *o);
/* criu check; with o->feature, criu check --feature NAME */
int cr_check(const struct opts *o);
/*
 * What dump or restore (@cmd) needs of criu's privileges, checked before
 * anything is created or changed: one error naming what is missing.
 */
int check_privileges(const struct opts *o, const char *cmd);
/* criu cpuinfo dump|check (cpuinfo.c) in o->images_dirfd, which dump created */
int cr_cpuinfo(const struct opts *o, const char *sub);
/*
 * criu swrk FD: CRIU's RPC with the client at the other end of FD
 * (rpc/server.c); 1 when the last request failed (the client was told).
 */
int cr_swrk(const char *fd);
/* criu service --address PATH: the same RPC on a unix socket (rpc/service.c) */
int cr_service(const struct opts *o);
/* criu page-server: one dump's images received into o->images_dirfd (pagesrv.c) */
int cr_page_server(const struct opts *o);
/* criu lazy-pages (lazy.c): serves a restore --lazy-pages */
int cr_lazy_pages(const struct opts *o);
/* Its halves, for the RPC: the listening socket (*@port its port), then one dump. */
int page_server_listen(const struct opts *o, int *port);
int page_server_serve(const struct opts *o, int lsk);

#endif
