// SPDX-License-Identifier: GPL-2.0
/*
 * The nftables ruleset of the tree's namespace, saved as the text of
 * `nft list ruleset` and loaded back with `nft -f -`, both run by criu
 * in the namespace. The text is nft's own format for exactly this round
 * trip (what `nft -f` reads is what `list ruleset` writes), counters and
 * set elements included. nft, the tool, rather than libnftables in criu:
 * criu is a static binary (fork-heavy restores, design.md), Debian ships
 * libnftables as a shared library only, and the tool runs only when the
 * namespace has tables (criu asks the kernel over nfnetlink first).
 *
 * criu's own lock tables (net-lock.c) are cut out of the text: the lock is
 * criu's business, not the tree's. Rules of iptables-nft are nftables
 * rules too and come along; the legacy x_tables are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/net.h"

static const char *const tool_dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

/* The tool's path in the usual places (criu's PATH may lack sbin); 0 or -1. */
static int find_tool(const char *name, char *path, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tool_dirs); i++) {
		snprintf(path, len, "%s/%s", tool_dirs[i], name);
		if (!access(path, X_OK))
			return 0;
	}
	return -1;
}

/*
 * posix_spawn (a vfork): the child shares criu's memory until it execs,
 * where a fork would copy every mapping of a static criu first. It is
 * born in the namespaces of the calling thread.
 */
static pid_t spawn_tool(const char *path, char *const argv[], int in, int out, int err)
{
	static char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int e;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	e = posix_spawn_file_actions_adddup2(&fa, in, 0) ||
	    posix_spawn_file_actions_adddup2(&fa, out, 1) ||
	    posix_spawn_file_actions_adddup2(&fa, err, 2) ||
	    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!e)
		e = posix_spawn(&pid, path, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		errno = e;
		return -1;
	}
	return pid;
}

static int memfd_with(const char *name, const char *data)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (data && write_full(fd, data, strlen(data))) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The tool's stderr, one line, for the error message (a debug line if @quiet). */
static void tool_failed(const struct net_who *w, const char *tool, int status, int err,
			int quiet)
{
	char *msg, *nl;

	lseek(err, 0, SEEK_SET);
	msg = read_fd(dup(err), NULL);
	nl = msg ? strchr(msg, '\n') : NULL;
	if (nl)
		*nl = '\0';
	if (quiet)
		pr_debug(NET_FMT ": %s failed: %s", NET_ARGS(w), tool, msg ? msg : "");
	else
		pr_err(NET_FMT ": %s failed (status %d): %s", NET_ARGS(w), tool,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		       msg && *msg ? msg : "no message");
	free(msg);
}

int net_run_tool(const struct net_who *w, char *const argv[], const char *in, char **out,
		 int quiet)
{
	int fin = memfd_with("criu-in", in), fout = memfd_with("criu-out", NULL);
	int ferr = memfd_with("criu-err", NULL), status = -1, ret = -1;
	char path[256];
	pid_t pid;

	if (fin < 0 || fout < 0 || ferr < 0) {
		pr_perror(NET_FMT ": can't run %s", NET_ARGS(w), argv[0]);
		goto out;
	}
	if (find_tool(argv[0], path, sizeof(path))) {
		if (!quiet)
			pr_err(NET_FMT ": can't find %s in /usr/sbin, /sbin, /usr/bin or /bin "
			       "(not installed?)", NET_ARGS(w), argv[0]);
		goto out;
	}
	pid = spawn_tool(path, argv, fin, fout, ferr);
	if (pid < 0) {
		pr_perror(NET_FMT ": can't run %s", NET_ARGS(w), path);
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			pr_perror(NET_FMT ": can't wait for %s", NET_ARGS(w), argv[0]);
			goto out;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tool_failed(w, argv[0], status, ferr, quiet);
		goto out;
	}
	ret = 0;
	if (out) {
		lseek(fout, 0, SEEK_SET);
		*out = read_fd(dup(fout), NULL);
		ret = *out ? 0 : -1;
	}
out:
	if (fin >= 0)
		close(fin);
	if (fout >= 0)
		close(fout);
	if (ferr >= 0)
		close(ferr);
	return ret;
}

/*
 * Drops the blocks "table FAMILY NAME {" ... "}" of criu's lock tables:
 * nft writes each table from column 0 and closes it with "}" alone there.
 */
static void cut_lock_tables(char *text)
{
	char fam[32], name[256], *line = text, *dst = text, *next;
	int skipping = 0;

	while (*line) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (skipping) {
			skipping = line[0] != '}';
		} else if (sscanf(line, "table %31s %255s {", fam, name) == 2 &&
			   net_lock_table(fam, name)) {
			skipping = 1;
		} else {
			memmove(dst, line, next - line);
			dst += next - line;
		}
		line = next;
	}
	*dst = '\0';
}

int net_dump_nft(const struct net_who *w, NetnsEntry *e)
{
	char *argv[] = { "nft", "list", "ruleset", NULL };
	char *text = NULL;
	int has;

	has = net_nft_has_tables(w);
	if (has <= 0)
		return has;
	if (net_run_tool(w, argv, NULL, &text, 0))
		return -1;
	cut_lock_tables(text);
	if (!text[strspn(text, " \t\n")]) {
		free(text);
		return 0;
	}
	e->nft = text;
	pr_info(NET_FMT ": nftables ruleset, %zu bytes", NET_ARGS(w), strlen(text));
	return 0;
}

int net_restore_nft(const struct net_who *w, const NetnsEntry *e)
{
	char *argv[] = { "nft", "-f", "-", NULL };

	if (!e->nft || !*e->nft)
		return 0;
	if (net_run_tool(w, argv, e->nft, NULL, 0)) {
		pr_err(NET_FMT ": can't load the nftables ruleset", NET_ARGS(w));
		return -1;
	}
	return 0;
}
