// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mount propagation in a mount namespace of the test's own:
 *   a   a tmpfs, shared
 *   b   a bind of a: its peer
 *   c   a bind of a made a slave of a's peer group
 *   d   a bind of a made private
 *   e   a tmpfs, unbindable
 *   f   a tmpfs, shared; g a bind of f made a slave of it, then shared
 *       itself (a slave with peers of its own): h, a bind of g, its peer
 * After restore the same relations hold (the group numbers are new), and
 * they work: a mount under a shows up under b and c, not d; one under c
 * does not show up under a; one under g shows up under h, not f; e can't
 * be bound.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnt.h"
#include "zdtm.h"

static char base[4096];

static const char *at(const char *name)
{
	return mnt_at(base, name);
}

static void do_mount(const char *src, const char *dst, const char *type, unsigned long flags)
{
	if (mount(src, dst, type, flags, NULL))
		fail_errno("mount %s on %s (%#lx)", src ? src : "-", dst, flags);
}

static void line(const char *name, struct mnt_line *m)
{
	if (mnt_find(at(name), 0, m))
		fail("%s is not mounted", name);
}

/* What the test checks, from mountinfo: the relations, not the numbers. */
static void relations(char *out, size_t size)
{
	struct mnt_line a, b, c, d, e, f, g, h;

	line("a", &a);
	line("b", &b);
	line("c", &c);
	line("d", &d);
	line("e", &e);
	line("f", &f);
	line("g", &g);
	line("h", &h);
	snprintf(out, size, "a shared %d b peer %d c slave %d not-shared %d d private %d "
		 "e unbindable %d f shared %d g slave %d shared-other %d h peer %d",
		 a.shared > 0, b.shared == a.shared, c.master == a.shared, !c.shared,
		 !d.shared && !d.master, e.unbindable, f.shared > 0, g.master == f.shared,
		 g.shared > 0 && g.shared != f.shared, h.shared == g.shared && !h.master == !g.master);
}

static void shows(const char *name, int want)
{
	int found = access(at(name), F_OK) == 0;

	if (found != want)
		fail("%s %s after the restore", name, want ? "is missing" : "shows up");
}

int main(int argc, char **argv)
{
	static const char *const dirs[] = { "a", "b", "c", "d", "e", "f", "g", "h", "ebind" };
	char before[512], after[512];
	size_t i;

	test_init(argc, argv);
	mnt_enter_ns();
	snprintf(base, sizeof(base), "%s", mnt_abs("mnt_prop.d"));
	if (mkdir(base, 0755) && errno != EEXIST)
		fail_errno("mkdir %s", base);
	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (mkdir(at(dirs[i]), 0755) && errno != EEXIST)
			fail_errno("mkdir %s", dirs[i]);
	do_mount("zdtm-a", at("a"), "tmpfs", 0);
	if (mkdir(at("a/sub"), 0755) || mkdir(at("a/csub"), 0755))
		fail_errno("mkdir in a");
	do_mount(NULL, at("a"), NULL, MS_SHARED);
	do_mount(at("a"), at("b"), NULL, MS_BIND);
	do_mount(at("a"), at("c"), NULL, MS_BIND);
	do_mount(NULL, at("c"), NULL, MS_SLAVE);
	do_mount(at("a"), at("d"), NULL, MS_BIND);
	do_mount(NULL, at("d"), NULL, MS_PRIVATE);
	do_mount("zdtm-e", at("e"), "tmpfs", 0);
	do_mount(NULL, at("e"), NULL, MS_UNBINDABLE);
	do_mount("zdtm-f", at("f"), "tmpfs", 0);
	if (mkdir(at("f/sub"), 0755))
		fail_errno("mkdir in f");
	do_mount(NULL, at("f"), NULL, MS_SHARED);
	do_mount(at("f"), at("g"), NULL, MS_BIND);
	do_mount(NULL, at("g"), NULL, MS_SLAVE);
	do_mount(NULL, at("g"), NULL, MS_SHARED);
	do_mount(at("g"), at("h"), NULL, MS_BIND);
	relations(before, sizeof(before));
	if (strstr(before, " 0"))
		fail("not set up as meant: %s", before);

	test_ready();
	test_waitsig();

	relations(after, sizeof(after));
	if (strcmp(before, after))
		fail("propagation changed: %s", after);
	do_mount("zdtm-new", at("a/sub"), "tmpfs", 0);
	if (mkdir(at("a/sub/mark"), 0755))
		fail_errno("mkdir a/sub/mark");
	shows("b/sub/mark", 1);
	shows("c/sub/mark", 1);
	shows("d/sub/mark", 0);
	do_mount("zdtm-slave", at("c/csub"), "tmpfs", 0);
	if (mkdir(at("c/csub/mark"), 0755))
		fail_errno("mkdir c/csub/mark");
	shows("a/csub/mark", 0);
	do_mount("zdtm-g", at("g/sub"), "tmpfs", 0);
	if (mkdir(at("g/sub/mark"), 0755))
		fail_errno("mkdir g/sub/mark");
	shows("h/sub/mark", 1);
	shows("f/sub/mark", 0);
	if (!mount(at("e"), at("ebind"), NULL, MS_BIND, NULL) || errno != EINVAL)
		fail("e could be bound: it is not unbindable any more");
	pass();
}
