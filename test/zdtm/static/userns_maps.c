// SPDX-License-Identifier: GPL-2.0-only
/*
 * The task is in a user namespace of its own (the tree's root, as a
 * container's init is), with maps of several extents, setgroups denied or
 * allowed (argument "deny" or "allow"), a UTS namespace it made inside it
 * (argument "uts": the user namespace owns it), and ids inside that differ from
 * those outside: saved uid 5, effective gid 7, saved gid 3 (criu sees
 * 200005, 300007, 300003). Root inside is root outside (the first extent),
 * so that the task can still reach the runner's files. After SIGTERM it
 * must see the same maps, setgroups and ids (test_userns.py checks from
 * outside that its namespace is a child of the runner's).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "userns_lib.h"
#include "zdtm.h"

#define UID_MAP	"0 0 1\n1 200001 1000\n"
#define GID_MAP	"0 0 1\n1 300001 1000\n"

struct view {
	char uid_map[512], gid_map[512], setgroups[32];
	uid_t u[3];
	gid_t g[3];
};

static void take(struct view *v)
{
	memset(v, 0, sizeof(*v));
	if (test_read_file("/proc/self/uid_map", v->uid_map, sizeof(v->uid_map)) < 0 ||
	    test_read_file("/proc/self/gid_map", v->gid_map, sizeof(v->gid_map)) < 0 ||
	    test_read_file("/proc/self/setgroups", v->setgroups, sizeof(v->setgroups)) < 0)
		fail_errno("read the maps");
	if (getresuid(&v->u[0], &v->u[1], &v->u[2]) || getresgid(&v->g[0], &v->g[1], &v->g[2]))
		fail_errno("getres*id");
}

int main(int argc, char **argv)
{
	struct view before, after;
	const char *sg;

	test_init(argc, argv);
	sg = optind < argc ? argv[optind] : "allow";
	make_userns(UID_MAP, GID_MAP, sg);
	if (optind + 1 < argc && !strcmp(argv[optind + 1], "uts") &&
	    (unshare(CLONE_NEWUTS) || sethostname("zdtm-userns", 11)))
		fail_errno("a UTS namespace inside");
	if (setresgid(0, 7, 3) || setresuid(0, 0, 5))
		fail_errno("setres*id inside");
	take(&before);
	test_ready();
	test_waitsig();
	take(&after);
	if (strcmp(before.uid_map, after.uid_map) || strcmp(before.gid_map, after.gid_map))
		fail("maps were\n%s%s and are\n%s%s", before.uid_map, before.gid_map,
		     after.uid_map, after.gid_map);
	if (strcmp(before.setgroups, after.setgroups))
		fail("setgroups was %s, is %s", before.setgroups, after.setgroups);
	if (memcmp(before.u, after.u, sizeof(before.u)) || memcmp(before.g, after.g, sizeof(before.g)))
		fail("ids were %u %u %u / %u %u %u, are %u %u %u / %u %u %u", before.u[0],
		     before.u[1], before.u[2], before.g[0], before.g[1], before.g[2], after.u[0],
		     after.u[1], after.u[2], after.g[0], after.g[1], after.g[2]);
	if (setresgid(0, 0, 0))
		fail_errno("setresgid back to 0");
	pass();
}
