// SPDX-License-Identifier: GPL-2.0
/*
 * The forms of security labels (core/lsm.c): what /proc/PID/attr/current
 * shows made the value that sets it again, CRIU's --lsm-profile TYPE:NAME,
 * and what restore writes for each module.
 */
#include <string.h>

#include "core/log.h"
#include "core/lsm.h"
#include "core/util.h"
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
	memcpy(buf, "system_u:system_r:container_t:s0:c1,c2\0", 40);
	expect(!lsm_label_norm("selinux", buf, 39) &&
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

/*
 * A mount's options as restore hands them to fsconfig() (core/util.c's
 * opt_next(), core/lsm.c's --lsm-mount-context), joined "k=v|flag|..." to
 * compare at once.
 */
static void split(const char *opts, const char *context, char *out, size_t size)
{
	char *copy = strdup(opts), *p = copy, *w, *v;
	const char *val;

	out[0] = '\0';
	while ((w = opt_next(&p, &v))) {
		val = lsm_mount_option(context, w, v);
		snprintf(out + strlen(out), size - strlen(out), "%s%s%s%s", out[0] ? "|" : "",
			 w, val ? "=" : "", val ? val : "");
	}
	free(copy);
}

static void test_mount_options(void)
{
	char buf[256];

	split("rw,size=65536k,mode=755", NULL, buf, sizeof(buf));
	expect(!strcmp(buf, "rw|size=65536k|mode=755"), "%s", buf);
	split("context=\"system_u:object_r:container_file_t:s0:c1,c2\",mode=700", NULL,
	      buf, sizeof(buf));
	expect(!strcmp(buf, "context=system_u:object_r:container_file_t:s0:c1,c2|mode=700"),
	       "quoted commas kept: %s", buf);
	split("mode=700,context=\"u:r:t:s0:c1,c2\"", NULL, buf, sizeof(buf));
	expect(!strcmp(buf, "mode=700|context=u:r:t:s0:c1,c2"), "quoted at the end: %s", buf);
	split("context=\"u:r:t:s0:c1,c2\",ro", "u:r:new_t:s0:c5", buf, sizeof(buf));
	expect(!strcmp(buf, "context=u:r:new_t:s0:c5|ro"), "replaced: %s", buf);
	split("fscontext=\"u:r:t:s0\",ro", "u:r:new_t:s0", buf, sizeof(buf));
	expect(!strcmp(buf, "fscontext=u:r:t:s0|ro"), "only context= is replaced: %s", buf);
	split("context,ro", "u:r:new_t:s0", buf, sizeof(buf));
	expect(!strcmp(buf, "context|ro"), "a flag has no value to replace: %s", buf);
	split("a=\"unterminated,b", NULL, buf, sizeof(buf));
	expect(!strcmp(buf, "a=\"unterminated|b"), "a lone quote is a byte: %s", buf);
	split("x=1=2,,y", NULL, buf, sizeof(buf));
	expect(!strcmp(buf, "x=1=2||y"), "a second = is the value's: %s", buf);
	split("", NULL, buf, sizeof(buf));
	expect(!strcmp(buf, ""), "none: %s", buf);
}

static void unit_setup(void)
{
	log_open(NULL, LOG_ERR);
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_label_norm),
	UNIT_TEST(test_profile_parse),
	UNIT_TEST(test_set_value),
	UNIT_TEST(test_mount_options),
};

UNIT_MAIN(tests)
