// SPDX-License-Identifier: GPL-2.0-only
/*
 * A JIT in miniature: code written at run time into an anonymous
 * read-write-execute area and called before and after the checkpoint
 * (criu's "ins" check treats such a task as one that reads CPUID itself:
 * Documentation/cpu.md). It checks that the code is still there and runs.
 */
#include <string.h>
#include <sys/mman.h>

#include "zdtm.h"

typedef unsigned int (*gen_fn)(void);

int main(int argc, char **argv)
{
	/* mov eax, imm32; ret */
	unsigned char code[] = { 0xb8, 0, 0, 0, 0, 0xc3 };
	unsigned int want = (unsigned int)test_pattern(0x71, 3);
	unsigned char *area;
	gen_fn fn;

	test_init(argc, argv);
	area = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		fail("mmap rwx: %m");
	memcpy(code + 1, &want, 4);
	memcpy(area, code, sizeof(code));
	fn = (gen_fn)(void *)area;
	if (fn() != want)
		fail("the generated code returned %#x before", fn());

	test_ready();
	test_waitsig();

	if (memcmp(area, code, sizeof(code)))
		fail("the generated code changed");
	if (fn() != want)
		fail("the generated code returned %#x, not %#x", fn(), want);
	pass();
}
