/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_TEST_UNIT_H
#define CRIU_TEST_UNIT_H

/*
 * A tiny TAP harness for the C unit tests. expect() records a failure with
 * the file, line, the failed condition and a message, and lets the test go
 * on so that one run shows every broken check; a test "passes" when it
 * recorded no failure. meson runs the executables with protocol 'tap'.
 */
#include <stdio.h>
#include <stdlib.h>

extern int unit_failures;

#define expect(cond, fmt, ...)							\
	do {									\
		if (!(cond)) {							\
			unit_failures++;					\
			printf("# %s:%d: FAILED: %s: " fmt "\n",		\
			       __FILE__, __LINE__, #cond, ##__VA_ARGS__);	\
		}								\
	} while (0)

/* Stops the current test: for checks the rest of the test depends on. */
#define require(cond, fmt, ...)							\
	do {									\
		if (!(cond)) {							\
			expect(cond, fmt, ##__VA_ARGS__);			\
			return;							\
		}								\
	} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

#define UNIT_TEST(fn) { #fn, fn }

/* Runs every test, prints TAP, returns the exit status for main(). */
static inline int unit_run(const struct unit_test *tests, int nr)
{
	int i, before, failed = 0;

	printf("1..%d\n", nr);
	for (i = 0; i < nr; i++) {
		before = unit_failures;
		tests[i].fn();
		if (unit_failures != before)
			failed++;
		printf("%s %d - %s\n", unit_failures == before ? "ok" : "not ok",
		       i + 1, tests[i].name);
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define UNIT_MAIN(tests)							\
	int unit_failures;							\
	int main(void)								\
	{									\
		unit_setup();							\
		return unit_run(tests, (int)(sizeof(tests) / sizeof(tests[0])));\
	}

#endif
