// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fs base (thread pointer): TLS variables keep their values, the base
 * read with arch_prctl(ARCH_GET_FS) and through %fs:0 is unchanged.
 */
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtm.h"

static __thread unsigned long long tls_data = 0x1122334455667788ULL;
static __thread char tls_bss[256];

static unsigned long get_fs(void)
{
	unsigned long fs = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs))
		fail_errno("arch_prctl(ARCH_GET_FS)");
	return fs;
}

static unsigned long fs_self(void)
{
	unsigned long v;

	asm volatile("movq %%fs:0, %0" : "=r"(v));
	return v;
}

int main(int argc, char **argv)
{
	unsigned long fs, fs2;
	int i;

	test_init(argc, argv);
	tls_data ^= 0xffff;
	for (i = 0; i < 256; i++)
		tls_bss[i] = i * 3;
	fs = get_fs();
	if (fs_self() != fs)
		fail("%%fs:0 is not the thread pointer");

	test_ready();
	test_waitsig();

	fs2 = get_fs();
	if (fs2 != fs)
		fail("fs base is %#lx, was %#lx", fs2, fs);
	if (fs_self() != fs)
		fail("%%fs:0 is %#lx, not %#lx", fs_self(), fs);
	if (tls_data != (0x1122334455667788ULL ^ 0xffff))
		fail("TLS variable is %#llx", tls_data);
	for (i = 0; i < 256; i++)
		if (tls_bss[i] != (char)(i * 3))
			fail("TLS array byte %d differs", i);
	pass();
}
