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
 * criu's own lock tables (ns-net-lock.c) are cut out of the text: the lock is
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
#include "parts/ns-net-lock.h"
#include "parts/ns-net-nft.h"

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
