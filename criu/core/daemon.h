/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_DAEMON_H
#define CRIU_CORE_DAEMON_H

#include <sys/types.h>

/* Writes @pid into @path (relative to the cwd), created anew; -1 logged. */
int write_pid(const char *path, pid_t pid);
/*
 * -d of service and page-server: the caller's parent returns 0 once
 * @pidfile (if any) names the child, which goes on in a session of its
 * own, stdin and stdout on /dev/null (stderr too when it was the log; with
 * a log file it keeps stderr for its errors). 0 in the child, -1 logged.
 */
int cr_daemonize(const char *pidfile);

#endif
