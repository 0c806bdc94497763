// SPDX-License-Identifier: GPL-2.0
/*
 * The tree planner (criu/tree/plan.c): who forks whom at restore, which
 * helpers stand in for gone leaders, and which trees are refused.
 */
#include <fcntl.h>
#include <string.h>

#include "core/log.h"
#include "tree/plan.h"
#include "unit.h"

#define T(p, pp, s, g)	{ .pid = p, .ppid = pp, .sid = s, .pgid = g }
#define Z(p, pp, s, g)	{ .pid = p, .ppid = pp, .sid = s, .pgid = g, .zombie = 1 }
#define CAP		32

static struct plan_task buf[CAP];

static int plan(const struct plan_task *t, int nr)
{
	memset(buf, 0, sizeof(buf));
	memcpy(buf, t, nr * sizeof(*t));
	return tree_plan(buf, nr, CAP);
}

static int idx(int nr, unsigned int pid)
{
	int i;

	for (i = 0; i < nr; i++)
		if (buf[i].pid == pid)
			return i;
	return -1;
}

static void test_plain_tree(void)
{
	const struct plan_task t[] = {
		T(10, 1, 10, 10), T(11, 10, 10, 10), T(12, 11, 10, 12), T(13, 12, 10, 10),
	};
	int nr = plan(t, 4), i;

	require(nr == 4, "no helpers in a plain tree, got %d tasks", nr);
	for (i = 1; i < nr; i++) {
		expect(buf[i].creator == buf[i].parent, "task %u forked by %d", buf[i].pid,
		       buf[i].creator);
		expect(!buf[i].helper, "task %u", buf[i].pid);
	}
	expect(buf[0].parent == -1, "root parent %d", buf[0].parent);
}

/* The double-forked daemon: its session and group leader is gone. */
static void test_daemon(void)
{
	const struct plan_task t[] = { T(1, 0, 1, 1), T(7, 1, 5, 5), T(8, 7, 5, 5) };
	int nr = plan(t, 3), h;

	require(nr == 4, "one helper expected, got %d tasks", nr);
	h = idx(nr, 5);
	require(h == 3 && buf[h].helper, "helper 5 at %d", h);
	expect(buf[h].sid == 5 && buf[h].pgid == 5, "helper ids %u %u", buf[h].sid,
	       buf[h].pgid);
	expect(buf[h].parent == 0 && buf[h].creator == 0, "helper parent %d creator %d",
	       buf[h].parent, buf[h].creator);
	expect(buf[1].creator == h && buf[1].parent == 0, "daemon creator %d parent %d",
	       buf[1].creator, buf[1].parent);
	expect(buf[2].creator == 1, "the daemon's child is its own: %d", buf[2].creator);
}

/* A group in the root's session whose leader is gone. */
static void test_dead_group(void)
{
	const struct plan_task t[] = {
		T(10, 1, 10, 10), T(20, 10, 10, 15), T(21, 10, 10, 15), T(22, 20, 10, 15),
	};
	int nr = plan(t, 4), h;

	require(nr == 5, "one helper expected, got %d tasks", nr);
	h = idx(nr, 15);
	require(h >= 0 && buf[h].helper, "helper 15");
	expect(buf[h].sid == 10 && buf[h].creator == 0, "helper sid %u creator %d",
	       buf[h].sid, buf[h].creator);
	expect(buf[1].creator == h && buf[2].creator == h, "members forked by %d %d",
	       buf[1].creator, buf[2].creator);
	expect(buf[3].creator == 1, "inherits from its parent: %d", buf[3].creator);
}

/* Zombies that lead: they fork the members that need their session. */
static void test_zombie_leaders(void)
{
	const struct plan_task t[] = {
		T(10, 1, 10, 10), Z(11, 10, 11, 11), Z(12, 10, 10, 12), T(13, 10, 11, 11),
		T(14, 10, 10, 12),
	};
	int nr = plan(t, 5);

	require(nr == 5, "zombies are their own leaders: %d tasks", nr);
	expect(buf[3].creator == 1, "the zombie session leader forks 13: %d",
	       buf[3].creator);
	expect(buf[4].creator == 0, "14 joins the zombie's group later: %d",
	       buf[4].creator);
}

/* A leader that lives but is no sibling can't fork the orphan. */
static void test_cousin_refused(void)
{
	const struct plan_task t[] = {
		T(10, 1, 10, 10), T(11, 10, 10, 10), T(12, 11, 12, 12), T(14, 10, 12, 12),
	};

	expect(plan(t, 4) < 0, "refused");
}

static void test_left_group_refused(void)
{
	const struct plan_task t[] = { T(10, 1, 10, 10), T(11, 10, 10, 10), T(12, 10, 10, 11) };

	expect(plan(t, 3) < 0, "group 11 whose leader left it: refused");
}

/* --shell-job: the root's session and group are criu's, outside the tree. */
static void test_shell_job(void)
{
	const struct plan_task ok[] = { T(10, 1, 3, 3), T(11, 10, 3, 3), T(12, 10, 3, 12) };
	const struct plan_task bad[] = { T(10, 1, 3, 3), T(11, 10, 11, 11), T(12, 11, 13, 13),
					 T(14, 12, 3, 3) };

	expect(plan(ok, 3) == 3, "inherited from the root");
	expect(plan(bad, 4) < 0, "criu's session can't be made again");
}

/* A leader's child forked before its setsid stays in the old session. */
static void test_before_setsid(void)
{
	const struct plan_task t[] = { T(10, 1, 10, 10), T(11, 10, 11, 11), T(12, 11, 10, 10) };
	int nr = plan(t, 3);

	require(nr == 3, "no helper: %d", nr);
	expect(buf[2].creator == 1, "forked by its parent before setsid: %d", buf[2].creator);
}

static void test_bad_input(void)
{
	const struct plan_task orphan[] = { T(10, 1, 10, 10), T(11, 99, 10, 10) };
	const struct plan_task twice[] = { T(10, 1, 10, 10), T(10, 10, 10, 10) };
	const struct plan_task zparent[] = { T(10, 1, 10, 10), Z(11, 10, 10, 10),
					     T(12, 11, 10, 10) };

	expect(plan(orphan, 2) < 0, "parent not in the tree");
	expect(plan(twice, 2) < 0, "pid twice");
	expect(plan(zparent, 3) < 0, "a zombie with children");
}

static void unit_setup(void)
{
	/* refusals are expected; keep their lines off the TAP output */
	log_open(NULL, LOG_ERR);
	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_plain_tree),
	UNIT_TEST(test_daemon),
	UNIT_TEST(test_dead_group),
	UNIT_TEST(test_zombie_leaders),
	UNIT_TEST(test_cousin_refused),
	UNIT_TEST(test_left_group_refused),
	UNIT_TEST(test_shell_job),
	UNIT_TEST(test_before_setsid),
	UNIT_TEST(test_bad_input),
};

UNIT_MAIN(tests)
