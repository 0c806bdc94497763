/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_OPTS_H
#define CRIU_CORE_OPTS_H

/* The parsed command line; read-only for everything below main.c. */
struct opts {
	int pid;			/* -t */
	const char *images_dir;		/* -D */
	const char *work_dir;		/* -W */
	const char *log_file;		/* -o */
	const char *pidfile;		/* --pidfile */
	int verbosity;			/* -v */
	int leave_running;
	int leave_stopped;
	int shell_job;
	int restore_detached;		/* -d */
};

#endif
