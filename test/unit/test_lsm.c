// SPDX-License-Identifier: GPL-2.0
/*
 * The forms of security labels (core/lsm.c): what /proc/PID/attr/current
 * shows made the value that sets it again, CRIU's --lsm-profile TYPE:NAME,
 * and what restore writes for each module.
 */
#include <string.h>

#include "core/log.h"
#include "core/lsm.h"
#include "unit.h"

static int norm(const char *kind, const char *shown, char *out, size_t size)
{
	size_t len = strlen(shown);

	memcpy(out, shown, len + 1);
	(void)size;
	return lsm_label_norm(kind, out, len);
}

static void test_label_norm(void)
{
	char buf[128];

	expect(!norm("apparmor", "docker-default (enforce)\n", buf, sizeof(buf)) &&
	       !strcmp(buf, "docker-default"), "%s", buf);
	expect(!norm("apparmor", "my profile (complain)\n", buf, sizeof(buf)) &&
	       !strcmp(buf, "my profile"), "%s", buf);
	expect(!norm("apparmor", "unconfined\n", buf, sizeof(buf)) &&
	       !strcmp(buf, "unconfined"), "%s", buf);
	/* SELinux ends its context with a NUL, and may have spaces nowhere */
	memcpy(buf, "system_u:system_r:container_t:s0:c1,c2\0", 41);
	expect(!lsm_label_norm("selinux", buf, 40) &&
	       !strcmp(buf, "system_u:system_r:container_t:s0:c1,c2"), "%s", buf);
	/* a mode is AppArmor's only */
	expect(!norm("smack", "label (x)", buf, sizeof(buf)) && !strcmp(buf, "label (x)"),
	       "%s", buf);
	expect(norm("apparmor", "\n", buf, sizeof(buf)) < 0, "an empty label");
	expect(norm("selinux", "a\033[2Jb", buf, sizeof(buf)) < 0, "a control byte");
}

static void test_profile_parse(void)
{
	const char *kind, *name;

	expect(!lsm_profile_parse("apparmor:docker-default", &kind, &name) &&
	       !strcmp(kind, "apparmor") && !strcmp(name, "docker-default"), "apparmor");
	expect(!lsm_profile_parse("selinux:u:r:t:s0", &kind, &name) &&
	       !strcmp(kind, "selinux") && !strcmp(name, "u:r:t:s0"), "a context with colons");
	expect(!lsm_profile_parse("smack:_", &kind, &name) && !strcmp(kind, "smack"), "smack");
	expect(lsm_profile_parse("apparmor:", &kind, &name) < 0, "no name");
	expect(lsm_profile_parse("tomoyo:x", &kind, &name) < 0, "a module that labels no task");
	expect(lsm_profile_parse("apparmorx:y", &kind, &name) < 0, "a longer type");
	expect(lsm_profile_parse("docker-default", &kind, &name) < 0, "no type");
}

static void test_set_value(void)
{
	char buf[64];

	expect(lsm_set_value("apparmor", "p", buf, sizeof(buf)) == 15 &&
	       !strcmp(buf, "changeprofile p"), "%s", buf);
	expect(lsm_set_value("selinux", "u:r:t:s0", buf, sizeof(buf)) == 8 &&
	       !strcmp(buf, "u:r:t:s0"), "%s", buf);
	expect(lsm_set_value("apparmor", "a-long-profile-name", buf, 16) < 0, "too long");
}

static void unit_setup(void)
{
	log_open(NULL, LOG_ERR);
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_label_norm),
	UNIT_TEST(test_profile_parse),
	UNIT_TEST(test_set_value),
};

UNIT_MAIN(tests)
