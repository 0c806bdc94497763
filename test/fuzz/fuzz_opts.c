// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for criu's command line: the input, split at NUL bytes,
 * is argv after "criu"; parse_opts() of criu/main.c parses it (main.c is
 * compiled into this file, its main() renamed and dropped by the linker
 * with the commands it calls, so the parser is the one criu runs and no
 * command is even linked in).
 *
 * Besides what ASan and UBSan see, a parse must answer 0, -1 or 1 (help or
 * version printed), and what it accepted must be what the commands rely
 * on: the pid and the verbosity not negative, only known --cpu-cap bits,
 * every path an argument given or a part of one, and the log and pidfile
 * paths made of them (in_work_dir) either absolute or under the work dir.
 *
 * run.sh runs it with -close_fd_mask=3: the errors it prints are its job.
 */
/* static and unused: the optimiser drops it, and the commands with it */
#define main static __attribute__((unused)) criu_main
#include "../../criu/main.c"
#undef main

#define MAX_ARGS	64

/* --action-script: kept by criu/hooks.c, which is no parser */
int hooks_add_script(const char *path)
{
	if (!path)
		abort();
	return 0;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz_opts: %s\n", what);
	abort();
}

/* NULL, or a pointer into one of the arguments */
static int from_args(const char *s, char **argv, int argc)
{
	int i;

	if (!s)
		return 1;
	for (i = 0; i < argc; i++)
		if (s >= argv[i] && s <= argv[i] + strlen(argv[i]))
			return 1;
	return 0;
}

static void check_path(const struct opts *o, const char *path)
{
	const char *dir = o->work_dir ? o->work_dir : o->images_dir;
	char *full = in_work_dir(o, path);

	if (!path) {
		if (full)
			die("a path made of nothing");
		return;
	}
	if (!full)
		die("in_work_dir failed");
	if (path[0] != '/' && dir && (strncmp(full, dir, strlen(dir)) ||
				      full[strlen(dir)] != '/'))
		die("a relative path outside the work dir");
	free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *copy, *p, *end;
	struct opts o;
	int argc = 1, ret;

	copy = malloc(size + 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "criu";
	for (p = copy, end = copy + size; p <= end && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	memset(&o, 0, sizeof(o));
	optind = 0;	/* glibc: start over, forgetting the last argv */
	ret = parse_opts(argc, argv, &o);
	if (ret != 0 && ret != -1 && ret != 1)
		die("parse_opts answered neither 0, -1 nor 1");
	if (ret == 0) {
		if (o.pid < 0 || o.verbosity < 0)
			die("a negative pid or verbosity");
		if (o.cpu_cap & ~CPU_CAP_ALL)
			die("unknown --cpu-cap bits");
		if (!from_args(o.images_dir, argv, argc) || !from_args(o.work_dir, argv, argc) ||
		    !from_args(o.log_file, argv, argc) || !from_args(o.pidfile, argv, argc) ||
		    !from_args(o.cpu_map, argv, argc) || !from_args(o.feature, argv, argc) ||
		    !from_args(o.address, argv, argc))
			die("a path that is no argument");
		if (optind < 0 || optind > argc)
			die("optind beyond the arguments");
		check_path(&o, o.log_file);
		check_path(&o, o.pidfile);
	}
	/* what parse_opts allocated, kept by criu for its whole life (a leak
	 * report here would be the harness's, not criu's) */
	external_free(&o);
	free(o.inherit_fds);
	free(copy);
	return 0;
}
