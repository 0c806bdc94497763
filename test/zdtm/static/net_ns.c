// SPDX-License-Identifier: GPL-2.0-only
/*
 * A network namespace of the test's own (unshare(CLONE_NEWNET) before it
 * is ready), set up with ip(8), sysctl(8) and nft(8):
 *
 *   lo up; d0, a dummy link where the kernel has the driver, else one end
 *   of a veth pair whose other end d1 is inside too, with a MAC, an MTU,
 *   an alias, IPv4 and IPv6 addresses (one IPv4 address with finite
 *   lifetimes) and a permanent neighbour; routes in the main table
 *   (through a gateway, v4 and v6) and in table 100; a rule to table 100;
 *   sysctls of the namespace (ip_forward, somaxconn, ip_local_port_range)
 *   and of d0 (rp_filter, IPv6 hop_limit); an nftables table with a set,
 *   a chain and rules with counters.
 *
 * What ip, sysctl and nft show of it is written before test_ready() and
 * again after SIGTERM (sorted: the kernel lists routes in the order they
 * came); both must be the same. The address with lifetimes must still
 * have them, counting down from what they were (not "forever", not more).
 * IPv6 duplicate address detection is off in the namespace, so addresses
 * are never tentative when looked at.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zdtm.h"

#define LIFETIME	3600	/* valid_lft of 10.77.1.2, seconds */

static const char setup[] =
	"set -e\n"
	"sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0\n"
	"ip link set lo up\n"
	"if ip link add d0 type dummy 2>/dev/null; then echo dummy; else\n"
	"  ip link add d0 type veth peer name d1; ip link set d1 up; echo veth; fi\n"
	"ip link set d0 address 02:11:22:33:44:55 mtu 1400 alias zdtm-net-ns\n"
	"sysctl -qw net.ipv4.conf.d0.rp_filter=2 net.ipv6.conf.d0.hop_limit=33\n"
	"ip link set d0 up\n"
	"ip addr add 10.77.0.2/24 dev d0\n"
	"ip addr add 10.77.1.2/24 dev d0 valid_lft 3600 preferred_lft 1800\n"
	"ip addr add fd00:77::2/64 dev d0\n"
	"ip route add 10.88.0.0/16 via 10.77.0.1\n"
	"ip route add 10.99.0.0/16 dev d0 table 100\n"
	"ip route add default via 10.77.0.254 table 100\n"
	"ip -6 route add fd00:99::/64 via fd00:77::1\n"
	"ip rule add from 10.77.0.0/24 table 100 priority 1000\n"
	"ip -6 rule add to fd00:99::/64 table 100 priority 1001\n"
	"ip neigh add 10.77.0.9 lladdr 02:00:00:00:00:09 dev d0 nud permanent\n"
	"sysctl -qw net.ipv4.ip_forward=1 net.core.somaxconn=777 "
	"net.ipv4.ip_local_port_range='20000 29999'\n"
	"nft -f - <<EOF\n"
	"table inet zdtm {\n"
	"  set blocked { type ipv4_addr; elements = { 10.66.0.1, 10.66.0.2 } }\n"
	"  chain in {\n"
	"    type filter hook input priority 0; policy accept;\n"
	"    ip saddr @blocked counter drop\n"
	"    udp dport 5353 counter accept\n"
	"  }\n"
	"}\n"
	"EOF\n";

/* everything but the lifetimes of 10.77.1.2, which count down */
static const char show[] =
	"{ ip -o link show; ip -o addr show | grep -v 10.77.1.2;"
	"  ip -4 route show table all; ip -6 route show table all;"
	"  ip -4 rule show; ip -6 rule show; ip neigh show nud permanent;"
	"  sysctl net.ipv4.ip_forward net.core.somaxconn net.ipv4.ip_local_port_range"
	"    net.ipv4.conf.d0.rp_filter net.ipv6.conf.d0.hop_limit; } | sort;"
	" nft list ruleset";

/* @script, written to @out.sh, run with its output into @out */
static int run(const char *script, const char *out)
{
	char cmd[256], path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s.sh", out);
	f = fopen(path, "w");
	if (!f || fputs(script, f) < 0 || fclose(f))
		fail("can't write %s: %m", path);
	snprintf(cmd, sizeof(cmd), "sh %s > %s 2>&1", path, out);
	return system(cmd);
}

static char *slurp(const char *path)
{
	static char buf[2][65536];
	static int n;
	char *b = buf[n++ & 1];
	ssize_t len = test_read_file(path, b, sizeof(buf[0]) - 1);

	if (len < 0)
		fail("can't read %s: %m", path);
	b[len] = '\0';
	return b;
}

/* The first line where @a and @b differ, for the verdict. */
static void first_difference(const char *a, const char *b, char *la, char *lb, size_t len)
{
	size_t i = 0, start = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n')
			start = i + 1;
		i++;
	}
	snprintf(la, len, "%.*s", (int)strcspn(a + start, "\n"), a + start);
	snprintf(lb, len, "%.*s", (int)strcspn(b + start, "\n"), b + start);
}

/* The lifetimes left, from `ip -o addr show to 10.77.1.2`. */
static int valid_left(const char *out)
{
	const char *p = strstr(out, "valid_lft ");

	if (!p || !strncmp(p + 10, "forever", 7))
		return -1;
	return atoi(p + 10);
}

static void check_lifetime(void)
{
	char *out;
	int left;

	if (run("ip -o addr show to 10.77.1.2", "net_ns.lft"))
		fail("ip addr show failed");
	out = slurp("net_ns.lft");
	left = valid_left(out);
	if (left <= 0 || left > LIFETIME)
		fail("10.77.1.2 should have a valid lifetime of at most %d s, has: %s", LIFETIME,
		     out);
	test_msg("10.77.1.2: valid for %d s more", left);
}

int main(int argc, char **argv)
{
	char la[512], lb[512], *before, *after;

	test_init(argc, argv);
	if (system("command -v ip >/dev/null && command -v nft >/dev/null && "
		   "command -v sysctl >/dev/null"))
		skip("ip, nft or sysctl is not installed");
	if (unshare(CLONE_NEWNET))
		skip("unshare(CLONE_NEWNET): %m");
	if (run(setup, "net_ns.setup")) {
		test_msg("%s", slurp("net_ns.setup"));
		fail("setting the namespace up failed (net_ns.setup)");
	}
	test_msg("d0 is a %s", slurp("net_ns.setup"));
	check_lifetime();
	if (run(show, "net_ns.before"))
		fail("looking at the namespace failed");
	test_ready();
	test_waitsig();
	if (run(show, "net_ns.after"))
		fail("looking at the namespace after restore failed");
	before = slurp("net_ns.before");
	after = slurp("net_ns.after");
	if (strcmp(before, after)) {
		first_difference(before, after, la, lb, sizeof(la));
		fail("the namespace changed: '%s' became '%s' (net_ns.before, net_ns.after)",
		     la, lb);
	}
	check_lifetime();
	pass();
}
