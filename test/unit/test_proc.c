// SPDX-License-Identifier: GPL-2.0
/*
 * /proc parser tests: fixed sample texts in the kernel's formats (including
 * the awkward cases: a comm with spaces and parentheses, "unlimited" limits,
 * file names with spaces, smaps detail lines), then the same parsers on the
 * live files of this very process, checked against what the system calls
 * say.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"
#include "core/util.h"
#include "proc/proc.h"

#include "unit.h"

#define PG	4096UL

/* ------------------------------------------------------------- maps */

static const char maps_sample[] =
	"55d0c2a00000-55d0c2a02000 r--p 00000000 fe:00 247026                     /usr/bin/cat\n"
	"55d0c2a02000-55d0c2a07000 r-xp 00002000 fe:00 247026                     /usr/bin/cat\n"
	"55d0c3c0b000-55d0c3c2c000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f3e1c000000-7f3e1c021000 rw-p 00000000 00:00 0 \n"
	"7f3e1c021000-7f3e20000000 ---p 00000000 00:00 0 \n"
	"7f3e2a5f8000-7f3e2a5ff000 r--s 00000000 fe:00 325737                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache\n"
	"7f3e2a600000-7f3e2a700000 rw-s 00000000 00:01 1033                       /dev/zero (deleted)\n"
	"7f3e2a800000-7f3e2a801000 rw-p 7fffffffff000 103:02 1234567890123       /tmp/my file: (deleted)\n"
	"7ffc5b4e1000-7ffc5b502000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffc5b5f0000-7ffc5b5f4000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffc5b5f4000-7ffc5b5f6000 r--p 00000000 00:00 0                          [vvar_vclock]\n"
	"7ffc5b5f6000-7ffc5b5f8000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static const struct {
	uint64_t start, end, pgoff, ino;
	unsigned int prot, major, minor;
	int shared;
	const char *path;
} maps_want[] = {
	{ 0x55d0c2a00000, 0x55d0c2a02000, 0, 247026, PROT_READ, 0xfe, 0, 0, "/usr/bin/cat" },
	{ 0x55d0c2a02000, 0x55d0c2a07000, 0x2000, 247026, PROT_READ | PROT_EXEC, 0xfe, 0, 0,
	  "/usr/bin/cat" },
	{ 0x55d0c3c0b000, 0x55d0c3c2c000, 0, 0, PROT_READ | PROT_WRITE, 0, 0, 0, "[heap]" },
	{ 0x7f3e1c000000, 0x7f3e1c021000, 0, 0, PROT_READ | PROT_WRITE, 0, 0, 0, NULL },
	{ 0x7f3e1c021000, 0x7f3e20000000, 0, 0, 0, 0, 0, 0, NULL },
	{ 0x7f3e2a5f8000, 0x7f3e2a5ff000, 0, 325737, PROT_READ, 0xfe, 0, 1,
	  "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache" },
	{ 0x7f3e2a600000, 0x7f3e2a700000, 0, 1033, PROT_READ | PROT_WRITE, 0, 1, 1,
	  "/dev/zero (deleted)" },
	{ 0x7f3e2a800000, 0x7f3e2a801000, 0x7fffffffff000, 1234567890123ULL,
	  PROT_READ | PROT_WRITE, 0x103, 2, 0, "/tmp/my file: (deleted)" },
	{ 0x7ffc5b4e1000, 0x7ffc5b502000, 0, 0, PROT_READ | PROT_WRITE, 0, 0, 0, "[stack]" },
	{ 0x7ffc5b5f0000, 0x7ffc5b5f4000, 0, 0, PROT_READ, 0, 0, 0, "[vvar]" },
	{ 0x7ffc5b5f4000, 0x7ffc5b5f6000, 0, 0, PROT_READ, 0, 0, 0, "[vvar_vclock]" },
	{ 0x7ffc5b5f6000, 0x7ffc5b5f8000, 0, 0, PROT_READ | PROT_EXEC, 0, 0, 0, "[vdso]" },
	{ 0xffffffffff600000ULL, 0xffffffffff601000ULL, 0, 0, PROT_EXEC, 0, 0, 0, "[vsyscall]" },
};

static void test_maps_sample(void)
{
	char *buf = strdup(maps_sample);
	struct proc_maps maps;
	size_t i;

	require(!proc_parse_maps(buf, &maps), "the sample does not parse");
	require(maps.nr == (int)ARRAY_SIZE(maps_want), "%d areas, want %zu", maps.nr,
		ARRAY_SIZE(maps_want));
	for (i = 0; i < ARRAY_SIZE(maps_want); i++) {
		struct proc_vma *v = &maps.vma[i];

		expect(v->start == maps_want[i].start && v->end == maps_want[i].end,
		       "area %zu: %#llx-%#llx", i, (unsigned long long)v->start,
		       (unsigned long long)v->end);
		expect(v->prot == maps_want[i].prot, "area %zu: prot %#x", i, v->prot);
		expect(v->shared == maps_want[i].shared, "area %zu: shared %d", i, v->shared);
		expect(v->pgoff == maps_want[i].pgoff, "area %zu: pgoff %#llx", i,
		       (unsigned long long)v->pgoff);
		expect(v->dev_major == maps_want[i].major && v->dev_minor == maps_want[i].minor,
		       "area %zu: dev %x:%x", i, v->dev_major, v->dev_minor);
		expect(v->ino == maps_want[i].ino, "area %zu: ino %llu", i,
		       (unsigned long long)v->ino);
		if (maps_want[i].path)
			expect(v->path && !strcmp(v->path, maps_want[i].path),
			       "area %zu: path '%s', want '%s'", i, v->path ? v->path : "(null)",
			       maps_want[i].path);
		else
			expect(!v->path, "area %zu: anonymous, but path '%s'", i, v->path);
		expect(v->vmflags == 0, "area %zu: VmFlags from a maps file", i);
	}
	proc_maps_free(&maps);
	expect(maps.nr == 0 && !maps.vma, "proc_maps_free leaves a usable empty map");
	free(buf);
}

static const char smaps_sample[] =
	"55d0c3c0b000-55d0c3c2c000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:                132 kB\n"
	"KernelPageSize:        4 kB\n"
	"MMUPageSize:           4 kB\n"
	"Rss:                   8 kB\n"
	"Pss:                   8 kB\n"
	"Pss_Dirty:             8 kB\n"
	"Anonymous:             8 kB\n"
	"THPeligible:           0\n"
	"ProtectionKey:         0\n"
	"VmFlags: rd wr mr mw me ac \n"
	"7f3e1c000000-7f3e1c004000 rw-p 00000000 00:00 0 \n"
	"Size:                 16 kB\n"
	"Rss:                   0 kB\n"
	"VmFlags: rd wr mr mw me dc ac dd wf lo mg hg \n"
	"7f3e2a600000-7f3e2a700000 rw-s 00000000 00:01 1033                       /dev/zero (deleted)\n"
	"Size:               1024 kB\n"
	"VmFlags: rd wr sh mr mw me ms sd nh io pf \n"
	"7ffc5b4e1000-7ffc5b502000 rw-p 00000000 00:00 0                          [stack]\n"
	"Size:                132 kB\n"
	"VmFlags: rd wr mr mw me gd ac \n"
	"7ffc5b5f6000-7ffc5b5f8000 r-xp 00000000 00:00 0                          [vdso]\n"
	"Size:                  8 kB\n"
	"VmFlags: rd ex mr mw me de sd sl\n"
	"7f0000000000-7f0000400000 rw-p 00000000 00:0f 2048                       /anon_hugepage (deleted)\n"
	"Size:               4096 kB\n"
	"KernelPageSize:     2048 kB\n"
	"MMUPageSize:        2048 kB\n"
	"VmFlags: rd wr mr mw me de ht \n";

static void test_smaps_sample(void)
{
	static const unsigned int want[] = {
		VMF_MAYREAD | VMF_MAYWRITE,
		VMF_MAYREAD | VMF_MAYWRITE | VMF_DONTCOPY | VMF_DONTDUMP | VMF_WIPEONFORK |
			VMF_LOCKED | VMF_MERGEABLE | VMF_HUGEPAGE,
		VMF_SHARED | VMF_MAYREAD | VMF_MAYWRITE | VMF_NOHUGEPAGE | VMF_IO | VMF_PFNMAP,
		VMF_MAYREAD | VMF_MAYWRITE | VMF_GROWSDOWN,
		VMF_MAYREAD | VMF_MAYWRITE | VMF_DONTEXPAND | VMF_SEALED,
		VMF_MAYREAD | VMF_MAYWRITE | VMF_DONTEXPAND | VMF_HUGETLB,
	};
	static const unsigned int page_kb[] = { 4, 0, 0, 0, 0, 2048 };
	char *buf = strdup(smaps_sample);
	struct proc_maps maps;
	size_t i;

	require(!proc_parse_maps(buf, &maps), "the sample does not parse");
	require(maps.nr == (int)ARRAY_SIZE(want), "%d areas: detail lines taken for areas?",
		maps.nr);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		expect(maps.vma[i].vmflags == want[i], "area %zu: VmFlags %#x, want %#x", i,
		       maps.vma[i].vmflags, want[i]);
		expect(maps.vma[i].page_kb == page_kb[i], "area %zu: KernelPageSize %u kB, want %u",
		       i, maps.vma[i].page_kb, page_kb[i]);
	}
	expect(maps.vma[2].shared && !strcmp(maps.vma[2].path, "/dev/zero (deleted)"),
	       "shared area");
	expect(maps.vma[4].end == 0x7ffc5b5f8000ULL && !strcmp(maps.vma[4].path, "[vdso]"),
	       "last area");
	proc_maps_free(&maps);
	free(buf);
}

static void test_maps_bad(void)
{
	static const char *const bad[] = {
		"garbage\n",
		"55d0c2a00000 r--p 00000000 fe:00 1 /x\n",			/* no end */
		"55d0c2a02000-55d0c2a00000 r--p 00000000 fe:00 1 /x\n",		/* start > end */
		"55d0c2a00000-55d0c2a00000 r--p 00000000 fe:00 1 /x\n",		/* empty */
		"55d0c2a00001-55d0c2a02000 r--p 00000000 fe:00 1 /x\n",		/* unaligned */
		"55d0c2a00000-55d0c2a02001 r--p 00000000 fe:00 1 /x\n",
		"55d0c2a00000-55d0c2a02000 r--p 00000000 fe 1 /x\n",		/* no minor */
		"55d0c2a00000-55d0c2a02000 r--p\n",
		/* a good line, then a bad one: nothing half-parsed is returned */
		"55d0c2a00000-55d0c2a02000 r--p 00000000 fe:00 1 /x\nxyz 1 2\n",
	};
	struct proc_maps maps;
	char *buf;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		buf = strdup(bad[i]);
		maps.nr = 12345;
		expect(proc_parse_maps(buf, &maps) == -1, "bad sample %zu parsed", i);
		expect(maps.nr == 0 && !maps.vma, "bad sample %zu: leftovers", i);
		free(buf);
	}
	buf = strdup("");
	expect(!proc_parse_maps(buf, &maps) && maps.nr == 0, "an empty maps file");
	proc_maps_free(&maps);
	free(buf);
	/* no final newline */
	buf = strdup("1000-2000 r--p 00000000 00:00 0");
	expect(!proc_parse_maps(buf, &maps) && maps.nr == 1 && !maps.vma[0].path,
	       "a last line without a newline");
	proc_maps_free(&maps);
	free(buf);
}

static struct proc_vma *find_vma(struct proc_maps *maps, uint64_t addr)
{
	int i;

	for (i = 0; i < maps->nr; i++)
		if (maps->vma[i].start <= addr && addr < maps->vma[i].end)
			return &maps->vma[i];
	return NULL;
}

static void check_sorted(struct proc_maps *maps, const char *what)
{
	int i;

	for (i = 1; i < maps->nr; i++)
		expect(maps->vma[i - 1].end <= maps->vma[i].start, "%s: areas %d and %d "
		       "overlap or are out of order", what, i - 1, i);
}

static void test_maps_live(void)
{
	char exe[4096];
	struct proc_maps maps;
	struct proc_vma *v;
	ssize_t n;
	int local = 0;
	char *p;

	p = mmap(NULL, 3 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	require(p != MAP_FAILED, "mmap: %m");
	require(!mprotect(p + PG, PG, PROT_READ | PROT_WRITE), "mprotect: %m");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';

	require(!proc_read_maps(getpid(), 0, &maps), "can't read our maps");
	expect(maps.nr > 5, "only %d areas", maps.nr);
	check_sorted(&maps, "maps");

	v = find_vma(&maps, (uintptr_t)p);
	expect(v && v->start == (uintptr_t)p && v->end == (uintptr_t)p + PG &&
	       v->prot == PROT_READ && !v->shared && !v->path, "first page of our mapping");
	v = find_vma(&maps, (uintptr_t)p + PG);
	expect(v && v->start == (uintptr_t)p + PG && v->end == (uintptr_t)p + 2 * PG &&
	       v->prot == (PROT_READ | PROT_WRITE), "the mprotect()ed page");
	v = find_vma(&maps, (uintptr_t)p + 2 * PG);
	expect(v && v->start == (uintptr_t)p + 2 * PG && v->prot == PROT_READ, "third page");

	v = find_vma(&maps, (uintptr_t)test_maps_live);
	expect(v && (v->prot & PROT_EXEC) && v->path && !strcmp(v->path, exe),
	       "our code is not in an executable mapping of %s (%s)", exe,
	       v && v->path ? v->path : "none");
	expect(v && v->ino != 0 && v->dev_major + v->dev_minor != 0, "code area: no dev/ino");
	v = find_vma(&maps, (uintptr_t)&local);
	expect(v && v->path && !strcmp(v->path, "[stack]") &&
	       v->prot == (PROT_READ | PROT_WRITE), "our stack variable is not in [stack]");
	proc_maps_free(&maps);
	munmap(p, 3 * PG);
}

static void test_smaps_live(void)
{
	struct proc_maps maps;
	struct proc_vma *v;
	char *p, *shared, *gd;

	p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gd = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
	require(p != MAP_FAILED && shared != MAP_FAILED && gd != MAP_FAILED, "mmap: %m");
	expect(!madvise(p, PG, MADV_DONTDUMP), "MADV_DONTDUMP: %m");
	expect(!madvise(p + PG, PG, MADV_DONTFORK), "MADV_DONTFORK: %m");
	expect(!madvise(p + 2 * PG, PG, MADV_WIPEONFORK), "MADV_WIPEONFORK: %m");
	/* the system call itself: sanitizers turn mlock() into a no-op */
	expect(!syscall(SYS_mlock, p + 3 * PG, PG), "mlock: %m");

	require(!proc_read_maps(getpid(), 1, &maps), "can't read our smaps");
	check_sorted(&maps, "smaps");
	v = find_vma(&maps, (uintptr_t)p);
	expect(v && v->end == (uintptr_t)p + PG && (v->vmflags & VMF_DONTDUMP) &&
	       !(v->vmflags & VMF_DONTCOPY), "MADV_DONTDUMP page: flags %#x",
	       v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)p + PG);
	expect(v && (v->vmflags & VMF_DONTCOPY) && !(v->vmflags & VMF_DONTDUMP),
	       "MADV_DONTFORK page: flags %#x", v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)p + 2 * PG);
	expect(v && (v->vmflags & VMF_WIPEONFORK), "MADV_WIPEONFORK page: flags %#x",
	       v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)p + 3 * PG);
	expect(v && (v->vmflags & VMF_LOCKED), "mlock()ed page: flags %#x",
	       v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)shared);
	expect(v && v->shared && (v->vmflags & VMF_SHARED) && v->path &&
	       !strncmp(v->path, "/dev/zero", 9), "shared anonymous page: %s flags %#x",
	       v && v->path ? v->path : "", v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)gd);
	expect(v && (v->vmflags & VMF_GROWSDOWN), "MAP_GROWSDOWN area: flags %#x",
	       v ? v->vmflags : 0);
	v = find_vma(&maps, (uintptr_t)&maps);
	expect(v && (v->vmflags & VMF_GROWSDOWN) && (v->vmflags & VMF_MAYREAD),
	       "[stack]: flags %#x", v ? v->vmflags : 0);
	proc_maps_free(&maps);
	syscall(SYS_munlock, p + 3 * PG, PG);
	munmap(p, 4 * PG);
	munmap(shared, PG);
	munmap(gd, 2 * PG);
}

/* ----------------------------------------------------------- status */

static const char status_sample[] =
	"Name:\tmy prog: x\n"
	"Umask:\t0027\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t4321\n"
	"Ngid:\t0\n"
	"Pid:\t4322\n"
	"PPid:\t1\n"
	"TracerPid:\t77\n"
	"Uid:\t1000\t1001\t1002\t1003\n"
	"Gid:\t2000\t2001\t2002\t2003\n"
	"FDSize:\t64\n"
	"Groups:\t4 24 27 1000 \n"
	"NStgid:\t4321\n"
	"NSpid:\t4322\n"
	"VmPeak:\t    3060 kB\n"
	"VmSize:\t    3060 kB\n"
	"Threads:\t3\n"
	"SigQ:\t2/96365\n"
	"SigPnd:\t0000000000000100\n"
	"ShdPnd:\t0000000000004000\n"
	"SigBlk:\t0000000000010000\n"
	"SigIgn:\t0000000000001000\n"
	"SigCgt:\t0000000180004a02\n"
	"CapInh:\t0000000000000000\n"
	"CapPrm:\t000001fffeffffff\n"
	"CapEff:\t000001fffeffffff\n"
	"CapBnd:\t000001ffffffffff\n"
	"CapAmb:\t0000000000000400\n"
	"NoNewPrivs:\t1\n"
	"Seccomp:\t2\n"
	"Seccomp_filters:\t1\n"
	"Speculation_Store_Bypass:\tvulnerable\n"
	"Cpus_allowed:\t3\n"
	"Cpus_allowed_list:\t0-1\n"
	"voluntary_ctxt_switches:\t10\n"
	"nonvoluntary_ctxt_switches:\t0\n";

static void test_status_sample(void)
{
	static const unsigned int groups[] = { 4, 24, 27, 1000 };
	char *buf = strdup(status_sample);
	struct proc_status st;

	require(!proc_parse_status(buf, &st), "the sample does not parse");
	expect(!strcmp(st.name, "my prog: x"), "name '%s'", st.name);
	expect(st.umask == 027, "umask %o", st.umask);
	expect(st.state == 'S', "state %c", st.state);
	expect(st.tgid == 4321 && st.pid == 4322 && st.ppid == 1 && st.tracer == 77,
	       "ids %d %d %d %d", st.tgid, st.pid, st.ppid, st.tracer);
	expect(st.uid[0] == 1000 && st.uid[1] == 1001 && st.uid[2] == 1002 && st.uid[3] == 1003,
	       "uids");
	expect(st.gid[0] == 2000 && st.gid[1] == 2001 && st.gid[2] == 2002 && st.gid[3] == 2003,
	       "gids");
	expect(st.ngroups == 4 && !memcmp(st.groups, groups, sizeof(groups)),
	       "%d groups", st.ngroups);
	expect(st.threads == 3, "threads %d", st.threads);
	expect(st.sig_pnd == 0x100 && st.shd_pnd == 0x4000 && st.sig_blk == 0x10000 &&
	       st.sig_ign == 0x1000 && st.sig_cgt == 0x180004a02ULL, "signal masks");
	expect(st.cap_inh == 0 && st.cap_prm == 0x1fffeffffffULL &&
	       st.cap_eff == 0x1fffeffffffULL && st.cap_bnd == 0x1ffffffffffULL &&
	       st.cap_amb == 0x400, "capabilities");
	expect(st.no_new_privs == 1 && st.seccomp == 2, "nnp %d seccomp %d",
	       st.no_new_privs, st.seccomp);
	proc_status_free(&st);
	free(buf);
}

/* /proc/net/raw and raw6: a raw socket found by inode, its peer and state. */
static void test_net_raw(void)
{
	char v4[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
	"  1: 0100007F:0001 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4242 2 0000000000000000 0\n"
	"253: 00000000:00FD 0100007F:0000 01 00000000:00000000 00:00000000 00000000     0        0 4343 2 0000000000000000 0\n";
	char v6[] =
	"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
	"   58: 00000000000000000000000001000000:003A 00000000000000000000000001000000:0000 01 00000000:00000000 00:00000000 00000000     0        0 77 2 0000000000000000 0\n";
	char *copy = strdup(v4);
	struct proc_raw_sk r;

	expect(proc_parse_net_raw(copy, 4343, &r) == 1 && r.state == 1 && r.rem[0] == 0x0100007f,
	       "v4 connected: state %u peer %#x", r.state, r.rem[0]);
	free(copy);
	copy = strdup(v4);
	expect(proc_parse_net_raw(copy, 4242, &r) == 1 && r.state == 7 && !r.rem[0],
	       "v4 unconnected: state %u", r.state);
	free(copy);
	copy = strdup(v4);
	expect(proc_parse_net_raw(copy, 99, &r) == 0, "an inode not there is found");
	free(copy);
	expect(proc_parse_net_raw(v6, 77, &r) == 1 && r.state == 1 && !r.rem[0] && !r.rem[2] &&
	       r.rem[3] == 0x01000000, "v6: state %u, last word %#x", r.state, r.rem[3]);
}

/* A task two pid namespaces down: the last NS* value is its own view. */
static void test_status_nested_ns(void)
{
	char buf[] = "Name:\tinit\nTgid:\t4321\nPid:\t4322\nPPid:\t4000\n"
		     "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
		     "NStgid:\t4321\t17\t1\nNSpid:\t4322\t18\t2\n"
		     "NSpgid:\t4300\t0\t0\nNSsid:\t4321\t17\t1\nCapInh:\t0\n";
	char flat[] = "Name:\tx\nTgid:\t9\nPid:\t9\nUid:\t0\t0\t0\t0\n"
		      "Gid:\t0\t0\t0\t0\nCapInh:\t0\n";
	struct proc_status st;

	require(!proc_parse_status(buf, &st), "the nested sample does not parse");
	expect(st.ns_levels == 3, "%d levels", st.ns_levels);
	expect(st.ns_tgid == 1 && st.ns_pid == 2 && st.ns_pgid == 0 && st.ns_sid == 1,
	       "ns ids %d %d %d %d", st.ns_tgid, st.ns_pid, st.ns_pgid, st.ns_sid);
	expect(st.pid == 4322 && st.tgid == 4321, "ids %d %d", st.pid, st.tgid);
	proc_status_free(&st);
	/* no NS lines (kernels before 4.1): the ids themselves, one level */
	require(!proc_parse_status(flat, &st), "the flat sample does not parse");
	expect(st.ns_levels == 1 && st.ns_pid == 9 && st.ns_tgid == 9, "levels %d pid %d",
	       st.ns_levels, st.ns_pid);
	proc_status_free(&st);
}

static void test_timens_offsets(void)
{
	int64_t m, b;

	expect(!proc_parse_timens_offsets("monotonic    864000         0\n"
					  "boottime   -86400 500000000\n", &m, &b) &&
	       m == 864000LL * 1000000000 && b == -86400LL * 1000000000 + 500000000,
	       "names: %lld %lld", (long long)m, (long long)b);
	expect(!proc_parse_timens_offsets("1 5 1\n7 0 2\n", &m, &b) && m == 5000000001LL &&
	       b == 2, "clock ids: %lld %lld", (long long)m, (long long)b);
	expect(proc_parse_timens_offsets("monotonic 1 0\n", &m, &b) == -1, "boottime missing");
	expect(proc_parse_timens_offsets("", &m, &b) == -1, "empty");
	/* out of the kernel's range: refused, not overflowed (test/fuzz/fuzz_proc) */
	expect(proc_parse_timens_offsets("monotonic 9223372036854775807 0\n"
					 "boottime 0 0\n", &m, &b) == -1, "seconds overflow");
	expect(proc_parse_timens_offsets("monotonic 0 -1\nboottime 0 0\n", &m, &b) == -1 &&
	       proc_parse_timens_offsets("monotonic 0 1000000000\nboottime 0 0\n", &m, &b) == -1,
	       "nanoseconds out of a second");
	expect(!proc_parse_timens_offsets("monotonic -9223372035 999999999\n"
					  "boottime 9223372035 999999999\n", &m, &b) &&
	       b == 9223372035999999999LL, "the widest offsets: %lld", (long long)b);
}

/* Strips the line starting with @key from a copy of the status sample. */
static char *status_without(const char *key)
{
	char *buf = strdup(status_sample), *p = strstr(buf, key), *nl;

	if (p) {
		nl = strchr(p, '\n');
		memmove(p, nl + 1, strlen(nl + 1) + 1);
	}
	return buf;
}

static void test_status_variants(void)
{
	static const char *const required[] = { "Pid:", "Uid:", "Gid:", "CapInh:" };
	struct proc_status st;
	char *buf, *g;
	size_t i;

	/* kernels before 4.7 have no Umask line */
	buf = status_without("Umask:");
	expect(!proc_parse_status(buf, &st) && st.umask == -1, "no Umask: umask %d", st.umask);
	proc_status_free(&st);
	free(buf);

	/* no supplementary groups: "Groups:\t\n" (the kernel prints a space too) */
	g = status_without("Groups:");
	buf = malloc(strlen(g) + 16);
	sprintf(buf, "Groups:\t \n%s", g);
	expect(!proc_parse_status(buf, &st) && st.ngroups == 0 && !st.groups,
	       "empty Groups: %d groups", st.ngroups);
	proc_status_free(&st);
	free(buf);
	free(g);

	for (i = 0; i < ARRAY_SIZE(required); i++) {
		buf = status_without(required[i]);
		expect(proc_parse_status(buf, &st) == -1, "status without %s parsed",
		       required[i]);
		expect(!st.groups, "status without %s: groups leaked", required[i]);
		free(buf);
	}
	buf = strdup("Uid:\t1 2 3\n");
	expect(proc_parse_status(buf, &st) == -1, "a short Uid line parsed");
	free(buf);
}

static void dummy_handler(int sig)
{
}

static void test_status_live(void)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid, groups[256];
	struct proc_status st;
	struct sigaction sa;
	sigset_t set, old;
	int ngroups, i, ok;
	mode_t um;

	ngroups = getgroups(ARRAY_SIZE(groups), groups);
	getresuid(&ruid, &euid, &suid);
	getresgid(&rgid, &egid, &sgid);
	um = umask(027);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGUSR2, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dummy_handler;
	sigaction(SIGWINCH, &sa, NULL);

	ok = !proc_read_status(getpid(), &st);

	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGWINCH, SIG_DFL);
	umask(um);
	require(ok, "can't read our status");

	expect(st.pid == getpid() && st.tgid == getpid() && st.ppid == getppid(),
	       "pid %d tgid %d ppid %d", st.pid, st.tgid, st.ppid);
	expect(st.tracer == 0, "TracerPid %d", st.tracer);
	expect(st.state == 'R', "state %c", st.state);
	expect(st.uid[0] == ruid && st.uid[1] == euid && st.uid[2] == suid, "uids");
	expect(st.gid[0] == rgid && st.gid[1] == egid && st.gid[2] == sgid, "gids");
	expect(st.ngroups == ngroups, "%d groups, getgroups says %d", st.ngroups, ngroups);
	for (i = 0; i < st.ngroups && i < ngroups; i++)
		expect(st.groups[i] == groups[i], "group %d: %u vs %u", i, st.groups[i],
		       groups[i]);
	expect(st.umask == 027, "umask %o", st.umask);
	expect(st.threads == 1, "threads %d", st.threads);
	expect(st.sig_blk & (1ULL << (SIGUSR1 - 1)), "SigBlk %#llx lacks SIGUSR1",
	       (unsigned long long)st.sig_blk);
	expect(st.sig_ign & (1ULL << (SIGUSR2 - 1)), "SigIgn %#llx lacks SIGUSR2",
	       (unsigned long long)st.sig_ign);
	expect(st.sig_cgt & (1ULL << (SIGWINCH - 1)), "SigCgt %#llx lacks SIGWINCH",
	       (unsigned long long)st.sig_cgt);
	expect(st.no_new_privs == prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), "NoNewPrivs");
	expect(st.cap_bnd != 0, "empty bounding set");
	expect((st.cap_eff & ~st.cap_prm) == 0, "effective caps outside permitted");
	proc_status_free(&st);
}

/* ------------------------------------------------------------- stat */

/*
 * A stat line of @nfields fields whose number fields are 1000 + their
 * position (so a shifted field shows), except a few realistic negatives.
 */
static void make_stat(char *buf, size_t size, const char *comm, int nfields)
{
	int off, i;
	long v;

	off = snprintf(buf, size, "4321 (%s) S", comm);
	for (i = 4; i <= nfields; i++) {
		v = 1000 + i;
		if (i == 8)
			v = -1;		/* tpgid: no controlling terminal */
		else if (i == 19)
			v = -5;		/* nice */
		off += snprintf(buf + off, size - off, " %ld", v);
	}
	snprintf(buf + off, size - off, "\n");
}

static void test_stat_sample(void)
{
	static const char *const comms[] = {
		"(a) b)", "sleep", "", "a) R 1 2 3 (", "x y z", ")(", "with\ttab",
	};
	struct proc_stat st;
	char buf[1024];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(comms); i++) {
		make_stat(buf, sizeof(buf), comms[i], 52);
		require(!proc_parse_stat(buf, &st), "comm '%s': does not parse", comms[i]);
		expect(!strcmp(st.comm, comms[i]), "comm '%s', want '%s'", st.comm, comms[i]);
		expect(st.pid == 4321 && st.state == 'S', "comm '%s': pid %d state %c",
		       comms[i], st.pid, st.state);
		expect(st.ppid == 1004 && st.pgid == 1005 && st.sid == 1006,
		       "comm '%s': ppid %d pgid %d sid %d", comms[i], st.ppid, st.pgid, st.sid);
	}
	make_stat(buf, sizeof(buf), "(a) b)", 52);
	proc_parse_stat(buf, &st);
	expect(st.priority == 1018 && st.nice == -5, "priority %ld nice %ld", st.priority,
	       st.nice);
	expect(st.num_threads == 1020 && st.starttime == 1022, "threads, starttime");
	expect(st.start_code == 1026 && st.end_code == 1027 && st.start_stack == 1028,
	       "code and stack");
	expect(st.rt_priority == 1040 && st.policy == 1041, "rt_priority %u policy %u",
	       st.rt_priority, st.policy);
	expect(st.start_data == 1045 && st.end_data == 1046 && st.start_brk == 1047,
	       "data and brk: %llu %llu %llu", (unsigned long long)st.start_data,
	       (unsigned long long)st.end_data, (unsigned long long)st.start_brk);
	expect(st.arg_start == 1048 && st.arg_end == 1049 && st.env_start == 1050 &&
	       st.env_end == 1051, "args and env");
	expect(st.exit_code == 1052, "exit_code %d", st.exit_code);

	/* a real line: a 64-bit rsslim and a comm that tries to fool the parser */
	expect(!proc_parse_stat("13414 ((a) b)) R 13407 13407 4335 0 -1 4194304 99 0 0 0 0 0 "
				"0 0 20 0 1 0 105985 3133440 416 18446744073709551615 "
				"94002580537344 94002580557225 140726684557936 0 0 0 0 0 0 0 0 "
				"0 17 1 0 0 0 0 0 94002580573232 94002580574848 94003352416256 "
				"140726684559871 140726684559891 140726684559891 "
				"140726684561387 0\n", &st), "the real line");
	expect(!strcmp(st.comm, "(a) b)") && st.pid == 13414 && st.state == 'R' &&
	       st.ppid == 13407 && st.sid == 4335 && st.priority == 20 && st.nice == 0,
	       "the real line's fields");
	expect(st.start_brk == 94003352416256ULL && st.env_end == 140726684561387ULL,
	       "the real line's brk/env");

	/* a comm of 64+ bytes can't come from the kernel but must not overflow */
	memset(buf, 'x', 200);
	memcpy(buf, "1 (", 3);
	strcpy(buf + 150, ") S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 "
	       "24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39");
	expect(!proc_parse_stat(buf, &st) && strlen(st.comm) == sizeof(st.comm) - 1,
	       "a long comm");
}

static void test_stat_fields_count(void)
{
	struct proc_stat st;
	char buf[1024];

	/* kernels before 3.3 end after field 44 */
	make_stat(buf, sizeof(buf), "old", 44);
	expect(!proc_parse_stat(buf, &st) && st.policy == 1041 && st.start_brk == 0 &&
	       st.exit_code == 0, "a 44-field line");
	make_stat(buf, sizeof(buf), "short", 41);
	expect(!proc_parse_stat(buf, &st) && st.policy == 1041, "a 41-field line");
	make_stat(buf, sizeof(buf), "shorter", 40);
	expect(proc_parse_stat(buf, &st) == -1, "a 40-field line has no policy");
	make_stat(buf, sizeof(buf), "x", 3);
	expect(proc_parse_stat(buf, &st) == -1, "state only");

	expect(proc_parse_stat("", &st) == -1, "empty");
	expect(proc_parse_stat("1 x S 1 2 3", &st) == -1, "no parentheses");
	expect(proc_parse_stat("1 (x", &st) == -1, "no closing parenthesis");
	expect(proc_parse_stat("1 (x)", &st) == -1, "nothing after the comm");
	expect(proc_parse_stat("1 (x) ", &st) == -1, "no state");
	expect(proc_parse_stat("1 )x( S 1 2 3", &st) == -1, "parentheses reversed");
	make_stat(buf, sizeof(buf), "x", 52);
	memcpy(strstr(buf, " 1020 "), " abcd ", 6);
	expect(proc_parse_stat(buf, &st) == -1, "a word where a number should be");
}

static void test_stat_live(void)
{
	char old[17] = "", want[] = "(a) b)";
	struct proc_stat st, tst;
	int ok, tok, nice;

	prctl(PR_GET_NAME, old, 0, 0, 0);
	prctl(PR_SET_NAME, want, 0, 0, 0);
	ok = !proc_read_stat(getpid(), 0, &st);
	tok = !proc_read_stat(getpid(), getpid(), &tst);
	prctl(PR_SET_NAME, old, 0, 0, 0);
	require(ok && tok, "can't read our stat");

	expect(!strcmp(st.comm, want), "comm '%s'", st.comm);
	expect(st.pid == getpid() && st.ppid == getppid() && st.pgid == getpgrp() &&
	       st.sid == getsid(0), "ids %d %d %d %d", st.pid, st.ppid, st.pgid, st.sid);
	expect(st.state == 'R', "state %c", st.state);
	expect(st.num_threads == 1, "threads %ld", st.num_threads);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	expect(st.nice == nice, "nice %ld, getpriority %d", st.nice, nice);
	expect(st.start_code <= (uintptr_t)test_stat_live &&
	       (uintptr_t)test_stat_live < st.end_code, "our code at %p outside %#llx-%#llx",
	       (void *)test_stat_live, (unsigned long long)st.start_code,
	       (unsigned long long)st.end_code);
	expect(st.start_brk && st.start_brk <= (uintptr_t)sbrk(0), "start_brk %#llx",
	       (unsigned long long)st.start_brk);
	expect(st.arg_start < st.arg_end && st.arg_end <= st.env_start &&
	       st.env_start < st.env_end, "args/env %#llx %#llx %#llx %#llx",
	       (unsigned long long)st.arg_start, (unsigned long long)st.arg_end,
	       (unsigned long long)st.env_start, (unsigned long long)st.env_end);
	expect(st.start_stack > st.end_code, "start_stack %#llx",
	       (unsigned long long)st.start_stack);
	expect(st.policy == SCHED_OTHER || st.policy == SCHED_BATCH || st.policy == SCHED_IDLE,
	       "policy %u", st.policy);
	expect(st.starttime > 0, "starttime");
	expect(tst.pid == st.pid && !strcmp(tst.comm, st.comm) && tst.starttime == st.starttime,
	       "the task/TID/stat of the leader differs");
	expect(proc_read_stat(getpid(), 1, &tst) == -1, "a tid that is not ours");
}

/* ----------------------------------------------------------- limits */

static const char limits_sample[] =
	"Limit                     Soft Limit           Hard Limit           Units     \n"
	"Max cpu time              unlimited            unlimited            seconds   \n"
	"Max file size             unlimited            unlimited            bytes     \n"
	"Max data size             unlimited            unlimited            bytes     \n"
	"Max stack size            8388608              unlimited            bytes     \n"
	"Max core file size        0                    unlimited            bytes     \n"
	"Max resident set          unlimited            unlimited            bytes     \n"
	"Max processes             96365                96365                processes \n"
	"Max open files            20000                1048576              files     \n"
	"Max locked memory         8388608              8388608              bytes     \n"
	"Max address space         unlimited            unlimited            bytes     \n"
	"Max file locks            unlimited            unlimited            locks     \n"
	"Max pending signals       96365                96365                signals   \n"
	"Max msgqueue size         819200               819200               bytes     \n"
	"Max nice priority         0                    0                    \n"
	"Max realtime priority     0                    0                    \n"
	"Max realtime timeout      unlimited            unlimited            us        \n";

static const struct proc_rlimit *find_limit(const struct proc_rlimit *lim, int nr, int res)
{
	int i;

	for (i = 0; i < nr; i++)
		if (lim[i].resource == res)
			return &lim[i];
	return NULL;
}

static void test_limits_sample(void)
{
	struct proc_rlimit lim[RLIM_NLIMITS];
	const struct proc_rlimit *l;
	int nr, i, j;

	nr = proc_parse_limits(limits_sample, lim, RLIM_NLIMITS);
	require(nr == RLIM_NLIMITS, "%d limits, want %d", nr, RLIM_NLIMITS);
	for (i = 0; i < nr; i++)
		for (j = 0; j < i; j++)
			expect(lim[i].resource != lim[j].resource, "resource %d twice",
			       lim[i].resource);
	l = find_limit(lim, nr, RLIMIT_CPU);
	expect(l && l->cur == RLIM_INFINITY && l->max == RLIM_INFINITY, "cpu");
	l = find_limit(lim, nr, RLIMIT_STACK);
	expect(l && l->cur == 8388608 && l->max == RLIM_INFINITY, "stack");
	l = find_limit(lim, nr, RLIMIT_CORE);
	expect(l && l->cur == 0 && l->max == RLIM_INFINITY, "core");
	l = find_limit(lim, nr, RLIMIT_NOFILE);
	expect(l && l->cur == 20000 && l->max == 1048576, "nofile");
	l = find_limit(lim, nr, RLIMIT_FSIZE);
	expect(l && l->cur == RLIM_INFINITY, "fsize (not confused with file locks)");
	l = find_limit(lim, nr, RLIMIT_LOCKS);
	expect(l && l->cur == RLIM_INFINITY, "locks");
	l = find_limit(lim, nr, RLIMIT_NICE);
	expect(l && l->cur == 0 && l->max == 0, "nice (no units column)");
	l = find_limit(lim, nr, RLIMIT_RTTIME);
	expect(l && l->cur == RLIM_INFINITY && l->max == RLIM_INFINITY, "rttime");

	/* a smaller table: only the resources that fit are reported */
	nr = proc_parse_limits(limits_sample, lim, RLIMIT_NOFILE + 1);
	expect(nr == RLIMIT_NOFILE + 1, "%d limits with room for %d", nr, RLIMIT_NOFILE + 1);
	for (i = 0; i < nr; i++)
		expect(lim[i].resource <= RLIMIT_NOFILE, "resource %d reported",
		       lim[i].resource);

	expect(proc_parse_limits("Max cpu time    12 abc seconds\n", lim, RLIM_NLIMITS) == -1,
	       "a word for a hard limit");
	expect(proc_parse_limits("Max cpu time    x 12 seconds\n", lim, RLIM_NLIMITS) == -1,
	       "a word for a soft limit");
	expect(proc_parse_limits("", lim, RLIM_NLIMITS) == 0, "an empty file");
	expect(proc_parse_limits("Max cpu timeout 1 2\n", lim, RLIM_NLIMITS) == 0,
	       "an unknown limit");
}

static void test_limits_live(void)
{
	struct proc_rlimit lim[RLIM_NLIMITS];
	struct rlimit rl, old;
	int nr, i;

	getrlimit(RLIMIT_CORE, &old);
	rl.rlim_cur = 12345 < old.rlim_max ? 12345 : old.rlim_max;
	rl.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_CORE, &rl);
	nr = proc_read_limits(getpid(), lim, RLIM_NLIMITS);
	setrlimit(RLIMIT_CORE, &old);

	require(nr == RLIM_NLIMITS, "%d limits", nr);
	for (i = 0; i < nr; i++) {
		int res = lim[i].resource;

		if (res == RLIMIT_CORE) {
			expect(lim[i].cur == rl.rlim_cur, "core soft %llu",
			       (unsigned long long)lim[i].cur);
			continue;
		}
		getrlimit(res, &old);
		expect(lim[i].cur == old.rlim_cur && lim[i].max == old.rlim_max,
		       "resource %d: %llu/%llu, getrlimit %llu/%llu", res,
		       (unsigned long long)lim[i].cur, (unsigned long long)lim[i].max,
		       (unsigned long long)old.rlim_cur, (unsigned long long)old.rlim_max);
	}
}

/* ----------------------------------------------------------- fdinfo */

static void test_fdinfo_sample(void)
{
	struct proc_fdinfo fi;

	expect(!proc_parse_fdinfo("pos:\t4096\nflags:\t02100002\nmnt_id:\t29\nino:\t131\n", &fi),
	       "a file");
	expect(fi.pos == 4096 && fi.flags == 02100002 && fi.mnt_id == 29, "pos %llu flags %o "
	       "mnt_id %d", (unsigned long long)fi.pos, fi.flags, fi.mnt_id);
	expect(fi.flags & O_CLOEXEC && (fi.flags & O_ACCMODE) == O_RDWR, "flags are octal");

	/* an eventfd: extra lines after the common ones */
	expect(!proc_parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t15\nino:\t1057\n"
				  "eventfd-count:                5\neventfd-id: 3\n", &fi) &&
	       fi.pos == 0 && fi.flags == 2 && fi.mnt_id == 15, "an eventfd");
	expect(!proc_parse_fdinfo("pos:\t9223372036854775807\nflags:\t0100000\n", &fi) &&
	       fi.pos == 9223372036854775807ULL && fi.mnt_id == 0, "a huge pos, no mnt_id");
	expect(proc_parse_fdinfo("flags:\t02\nmnt_id:\t15\n", &fi) == -1, "no pos");
	expect(proc_parse_fdinfo("pos:\t0\nmnt_id:\t15\n", &fi) == -1, "no flags");
	expect(proc_parse_fdinfo("pos:\tx\nflags:\t02\n", &fi) == -1, "a bad pos");
	expect(proc_parse_fdinfo("", &fi) == -1, "empty");
}

static void test_fdinfo_live(void)
{
	char name[] = "/tmp/criu-unit-fdinfo-XXXXXX", buf[100] = { 0 };
	struct proc_fdinfo fi;
	int fd, rw, ok;

	fd = mkostemp(name, O_APPEND | O_CLOEXEC);
	require(fd >= 0, "mkostemp: %m");
	unlink(name);
	rw = write(fd, buf, sizeof(buf)) == sizeof(buf) && lseek(fd, 77, SEEK_SET) == 77;
	ok = !proc_read_fdinfo(getpid(), fd, &fi);
	expect(rw, "write/lseek: %m");
	expect(ok, "can't read our fdinfo");
	expect(fi.pos == 77, "pos %llu", (unsigned long long)fi.pos);
	expect((fi.flags & O_ACCMODE) == O_RDWR, "access mode %o", fi.flags);
	expect(fi.flags & O_APPEND, "O_APPEND missing from %o", fi.flags);
	expect(fi.flags & O_CLOEXEC, "O_CLOEXEC missing from %o", fi.flags);
	expect(fi.mnt_id > 0, "mnt_id %d", fi.mnt_id);
	close(fd);

	expect(proc_read_fdinfo(getpid(), fd, &fi) == -1, "a closed fd");
}

/* The kernel's lines (fs/locks.c, lock_get_status()), as 6.18 prints them. */
static void test_fdinfo_locks_sample(void)
{
	const char *fdinfo = "pos:\t0\nflags:\t0100002\nmnt_id:\t27\nino:\t10037564\n"
			     "lock:\t1: POSIX  ADVISORY  WRITE 12841 fe:00:10037564 10 29\n"
			     "lock:\t2: POSIX  ADVISORY  READ 12841 fe:00:10037564 100 EOF\n";
	struct proc_lock l;
	const char *p;

	p = proc_next_lock(fdinfo);
	expect(p && !proc_parse_lock(p, &l), "the first lock line");
	expect(l.kind == PROC_LOCK_POSIX && l.type == F_WRLCK && l.start == 10 && l.end == 29 &&
	       l.major == 0xfe && l.minor == 0 && l.ino == 10037564, "a POSIX write lock: "
	       "kind %d type %d %lld-%lld", l.kind, l.type, (long long)l.start, (long long)l.end);
	p = proc_next_lock(p);
	expect(p && !proc_parse_lock(p, &l) && l.type == F_RDLCK && l.start == 100 && l.end == -1,
	       "a read lock to the end of the file");
	expect(!proc_next_lock(p), "a third lock in two lines");
	expect(!proc_next_lock("pos:\t0\nflags:\t02\n"), "a lock where there is none");

	expect(!proc_parse_lock("\t1: OFDLCK ADVISORY  WRITE -1 fe:00:10037566 5 5\n", &l) &&
	       l.kind == PROC_LOCK_OFD && l.start == 5 && l.end == 5, "an OFD lock");
	expect(!proc_parse_lock("\t1: FLOCK  ADVISORY  READ 77 08:01:12 0 EOF", &l) &&
	       l.kind == PROC_LOCK_FLOCK && l.type == F_RDLCK && !strcmp(l.state, "ADVISORY"),
	       "a shared flock");
	expect(!proc_parse_lock("\t1: LEASE  BREAKING  READ 77 08:01:12 0 EOF\n", &l) &&
	       l.kind == PROC_LOCK_LEASE && !strcmp(l.state, "BREAKING"), "a lease being broken");
	expect(!proc_parse_lock("\t1: DELEG  ACTIVE    READ 77 08:01:12 0 EOF\n", &l) &&
	       l.kind == PROC_LOCK_OTHER && !strcmp(l.word, "DELEG"), "a delegation");
	expect(proc_parse_lock("\t1: POSIX  *NOINODE* WRITE 7 <none>:0 0 EOF\n", &l) == -1,
	       "a lock without an inode");
	expect(proc_parse_lock("\t1: POSIX  ADVISORY  WRITE 7 08:01:12 30 29\n", &l) == -1,
	       "an end before the start");
	expect(proc_parse_lock("\t1: POSIX  ADVISORY  WRITE 7 08:01:12 -3 EOF\n", &l) == -1,
	       "a negative start");
	expect(proc_parse_lock("\t1: POSIX  ADVISORY  WRITE 7 08:01:12 0 EOF junk\n", &l) == -1,
	       "more after the range");
	expect(proc_parse_lock("\t1: POSIX  ADVISORY  MAYBE 7 08:01:12 0 EOF\n", &l) == -1,
	       "an unknown type");
	expect(proc_parse_lock("", &l) == -1, "empty");
}

static void test_fdinfo_locks_live(void)
{
	char name[] = "/tmp/criu-unit-locks-XXXXXX", path[64], *buf;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 3, .l_len = 4 };
	struct proc_lock l;
	const char *p;
	int fd;

	fd = mkstemp(name);
	require(fd >= 0, "mkstemp: %m");
	unlink(name);
	expect(!fcntl(fd, F_SETLK, &fl), "F_SETLK: %m");
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf = read_file(-1, path, NULL);
	p = buf ? proc_next_lock(buf) : NULL;
	expect(p && !proc_parse_lock(p, &l), "our lock line: %s", buf ? buf : "(unread)");
	expect(l.kind == PROC_LOCK_POSIX && l.type == F_WRLCK && l.start == 3 && l.end == 6,
	       "our lock: kind %d type %d %lld-%lld", l.kind, l.type, (long long)l.start,
	       (long long)l.end);
	free(buf);
	close(fd);
}

/* ------------------------------------------------ threads, children */

static int thread_pipe[2];

static void *thread_fn(void *arg)
{
	char c;

	(void)!read(thread_pipe[0], &c, 1);
	return arg;
}

static void test_threads_children_live(void)
{
	pid_t *tids = NULL, *pids = NULL, child;
	pthread_t th;
	int nr, i, found = 0;

	require(!pipe(thread_pipe), "pipe: %m");
	require(!pthread_create(&th, NULL, thread_fn, NULL), "pthread_create");
	nr = proc_list_threads(getpid(), &tids);
	expect(nr == 2, "%d threads", nr);
	expect(nr >= 1 && tids[0] == getpid(), "the leader is not first (sorted)");
	expect(nr < 2 || tids[1] > tids[0], "threads not sorted");
	(void)!write(thread_pipe[1], "x", 1);
	pthread_join(th, NULL);
	close(thread_pipe[0]);
	close(thread_pipe[1]);
	free(tids);

	child = fork();
	require(child >= 0, "fork: %m");
	if (!child) {
		pause();
		_exit(0);
	}
	nr = proc_list_children(getpid(), getpid(), &pids);
	for (i = 0; i < nr; i++)
		found |= pids[i] == child;
	expect(found, "child %d not among %d children", child, nr);
	free(pids);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	expect(proc_list_threads(999999999, &tids) == -1, "a task that does not exist");
}

/* ----------------------------------------------------------- timers */

/* As fs/proc/base.c prints them: the newest timer first. */
static const char timers_sample[] =
	"ID: 2\n"
	"signal: 36/000000001234abcd\n"
	"notify: signal/tid.31844\n"
	"ClockID: -6\n"
	"ID: 1\n"
	"signal: 10/0000000000000000\n"
	"notify: none/pid.31840\n"
	"ClockID: 7\n"
	"ID: 2147483647\n"
	"signal: 14/ffffffffffffffff\n"
	"notify: thread/pid.31840\n"
	"ClockID: 0\n";

static void test_timers_sample(void)
{
	char *buf = strdup(timers_sample);
	struct proc_timer *t = NULL;
	int nr;

	nr = proc_parse_timers(buf, &t);
	free(buf);
	require(nr == 3, "%d timers, want 3", nr);
	expect(t[0].id == 2 && t[0].signo == 36 && t[0].value == 0x1234abcd &&
	       t[0].notify == (SIGEV_SIGNAL | 4) && t[0].target == 31844 && t[0].clockid == -6,
	       "timer 0: id %d signo %d value %#llx notify %d target %d clock %d", t[0].id,
	       t[0].signo, (unsigned long long)t[0].value, t[0].notify, t[0].target,
	       t[0].clockid);
	expect(t[1].id == 1 && t[1].notify == SIGEV_NONE && t[1].target == 31840 &&
	       t[1].clockid == 7 && t[1].value == 0, "timer 1");
	expect(t[2].id == 2147483647 && t[2].notify == SIGEV_THREAD &&
	       t[2].value == UINT64_MAX && t[2].clockid == 0, "timer 2: value %#llx",
	       (unsigned long long)t[2].value);
	free(t);
}

static void test_timers_bad(void)
{
	static const char *const bad[] = {
		"signal: 14/0\n",					/* before any ID */
		"ID: 1\nsignal: 14/0\nnotify: signal/pid.1\n",		/* no ClockID */
		"ID: 1\nsignal: 14/0\nnotify: signal/pid.1\nID: 2\nClockID: 1\n",
		"ID: 1\nsignal: 14/0\nnotify: sig/pid.1\nClockID: 1\n",
		"ID: 1\nsignal: 14/0\nnotify: signal/pgid.1\nClockID: 1\n",
		"ID: 1\nsignal: x/0\nnotify: signal/pid.1\nClockID: 1\n",
		"ID: -1\nsignal: 14/0\nnotify: signal/pid.1\nClockID: 1\n",
	};
	struct proc_timer *t = NULL;
	char *buf;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		buf = strdup(bad[i]);
		expect(proc_parse_timers(buf, &t) == -1, "bad sample %zu parsed", i);
		free(buf);
	}
	buf = strdup("");
	expect(proc_parse_timers(buf, &t) == 0, "no timers");
	free(buf);
	free(t);
}

static void test_timers_live(void)
{
	struct sigevent se;
	struct proc_timer *t = NULL;
	timer_t ids[3];
	int nr, i, j, created = 0, found = 0;

	memset(&se, 0, sizeof(se));
	se.sigev_notify = SIGEV_SIGNAL;
	se.sigev_signo = SIGUSR1;
	se.sigev_value.sival_ptr = (void *)0x1234abcd;
	created += !timer_create(CLOCK_MONOTONIC, &se, &ids[0]);
	se.sigev_notify = SIGEV_NONE;
	created += !timer_create(CLOCK_BOOTTIME, &se, &ids[1]);
	se.sigev_notify = SIGEV_THREAD_ID | SIGEV_SIGNAL;
	se.sigev_signo = SIGRTMIN + 2;
	se._sigev_un._tid = gettid();
	created += !timer_create(CLOCK_PROCESS_CPUTIME_ID, &se, &ids[2]);
	require(created == 3, "timer_create: %m");

	nr = proc_read_timers(getpid(), &t);
	expect(nr == 3, "%d timers, want 3", nr);
	for (i = 0; i < nr; i++) {
		for (j = 0; j < 3; j++)
			if (t[i].id == (int)(intptr_t)ids[j])
				break;
		if (j == 3)
			continue;
		found++;
		expect(t[i].value == 0x1234abcd, "timer %d: value %#llx", t[i].id,
		       (unsigned long long)t[i].value);
		expect(t[i].target == getpid(), "timer %d: target %d", t[i].id, t[i].target);
		if (j == 0)
			expect(t[i].clockid == CLOCK_MONOTONIC && t[i].notify == SIGEV_SIGNAL &&
			       t[i].signo == SIGUSR1, "monotonic timer");
		else if (j == 1)
			expect(t[i].clockid == CLOCK_BOOTTIME && t[i].notify == SIGEV_NONE,
			       "boottime timer");
		else
			/* the kernel shows CPU clocks encoded: pid 0, CPUCLOCK_SCHED */
			expect(t[i].clockid == -6 &&
			       t[i].notify == (SIGEV_THREAD_ID | SIGEV_SIGNAL) &&
			       t[i].signo == SIGRTMIN + 2, "cpu timer: clock %d notify %d",
			       t[i].clockid, t[i].notify);
	}
	expect(found == 3, "found %d of our 3 timers", found);
	free(t);
	for (i = 0; i < 3; i++)
		timer_delete(ids[i]);
}

/* ----------------------------------------------------------- pagemap */

struct runs {
	uint64_t start[16], end[16];
	int nr;
};

static int collect(void *arg, uint64_t start, uint64_t end)
{
	struct runs *r = arg;

	if (r->nr < 16) {
		r->start[r->nr] = start;
		r->end[r->nr] = end;
	}
	r->nr++;
	return 0;
}

static int stop_at_first(void *arg, uint64_t start, uint64_t end)
{
	return 1;
}

/* -------------------------------------------------------- mountinfo */

static const char mountinfo_sample[] =
	"64 42 254:0 /tmp/my\\040root / rw,relatime master:1 - ext4 /dev/vda rw,discard\n"
	"66 64 0:41 / /dev rw,nosuid shared:7 - tmpfs tmpfs rw,size=65536k,mode=755\n"
	"44 65 0:41 /null /proc/keys rw,nosuid shared:7 master:3 propagate_from:2 - tmpfs "
	"tmpfs rw,size=65536k,mode=755\n"
	"50 65 0:40 /sys /proc/sys ro,relatime unbindable - proc proc rw\n"
	"70 64 0:44 / /mnt/a\\040b\\011c ro,nosuid,nodev,noexec,noatime - sysfs sysfs ro\n"
	"81 71 0:38 / /sys/fs/cgroup/unified ro,relatime - cgroup2 cgroup rw,nsdelegate\n";

static void test_mountinfo_sample(void)
{
	struct proc_mounts ms;
	struct proc_mount *m;

	require(!proc_parse_mountinfo(xstrdup(mountinfo_sample), &ms), "parse");
	require(ms.nr == 6, "%d mounts", ms.nr);
	m = &ms.m[0];
	expect(m->id == 64 && m->parent == 42 && m->major == 254 && m->minor == 0, "ids");
	expect(!strcmp(m->root, "/tmp/my root") && !strcmp(m->mountpoint, "/"), "%s", m->root);
	expect(m->master == 1 && !m->shared && !strcmp(m->fstype, "ext4") &&
	       !strcmp(m->source, "/dev/vda") && !strcmp(m->sb_opts, "rw,discard"), "root");
	expect(ms.m[1].shared == 7 && !strcmp(ms.m[1].sb_opts, "rw,size=65536k,mode=755"), "dev");
	m = &ms.m[2];
	expect(m->shared == 7 && m->master == 3 && m->propagate_from == 2 &&
	       !strcmp(m->root, "/null"), "tags");
	expect(ms.m[3].unbindable && !strcmp(ms.m[3].mnt_opts, "ro,relatime"), "unbindable");
	expect(!strcmp(ms.m[4].mountpoint, "/mnt/a b\tc"), "%s", ms.m[4].mountpoint);
	expect(proc_mount_has_opt(ms.m[4].mnt_opts, "noatime") &&
	       !proc_mount_has_opt(ms.m[4].mnt_opts, "noat") &&
	       proc_mount_has_opt(ms.m[4].mnt_opts, "ro"), "options");
	expect(proc_mount_by_id(&ms, 81) == &ms.m[5] && !proc_mount_by_id(&ms, 1), "by id");
	proc_mounts_free(&ms);
}

static void test_mountinfo_bad(void)
{
	static const char *const bad[] = {
		"64 42 254:0 / /\n",				/* no separator */
		"64 42 254:0 / / rw - ext4\n",			/* no source */
		"x 42 254:0 / / rw - ext4 /dev/vda rw\n",	/* not a number */
	};
	struct proc_mounts ms;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect(proc_parse_mountinfo(xstrdup(bad[i]), &ms) == -1, "accepted %s", bad[i]);
		proc_mounts_free(&ms);
	}
}

/* Ours: the root is there, and each mount's parent but the root's. */
static void test_mountinfo_live(void)
{
	struct proc_mounts ms;
	int i, roots = 0;

	require(!proc_read_mountinfo(0, &ms), "read");
	for (i = 0; i < ms.nr; i++) {
		if (!proc_mount_by_id(&ms, ms.m[i].parent))
			roots++;
		expect(ms.m[i].mountpoint[0] == '/' && ms.m[i].fstype[0], "line %d", i);
	}
	expect(roots >= 1, "no root");
	proc_mounts_free(&ms);
}

static void test_pagemap_live(void)
{
	char name[] = "/tmp/criu-unit-pagemap-XXXXXX", page[PG];
	volatile char *p, *f;
	struct runs r = { .nr = 0 };
	uintptr_t b;
	int fd, tfd;

	fd = open("/proc/self/pagemap", O_RDONLY);
	require(fd >= 0, "open pagemap: %m");

	/* anonymous: written pages 0, 1 and 5; page 3 only read (the zero page) */
	p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	require(p != MAP_FAILED, "mmap: %m");
	b = (uintptr_t)p;
	p[0] = 1;
	p[PG] = 1;
	p[5 * PG] = 1;
	(void)p[3 * PG];
	expect(!pagemap_scan(fd, b, b + 8 * PG, 1, collect, &r), "scan failed");
	expect(r.nr == 2, "%d runs, want 2", r.nr);
	expect(r.nr >= 1 && r.start[0] == b && r.end[0] == b + 2 * PG, "run 0");
	expect(r.nr >= 2 && r.start[1] == b + 5 * PG && r.end[1] == b + 6 * PG, "run 1");
	expect(pagemap_scan(fd, b, b + 8 * PG, 1, stop_at_first, NULL) == -1,
	       "a callback's error is not passed on");

	/* private file mapping: page 0 read (page cache), page 1 written (a copy) */
	tfd = mkstemp(name);
	require(tfd >= 0, "mkstemp: %m");
	unlink(name);
	memset(page, 0x11, sizeof(page));
	expect(write(tfd, page, PG) == PG && write(tfd, page, PG) == PG, "write");
	f = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, tfd, 0);
	require(f != MAP_FAILED, "mmap file: %m");
	(void)f[0];
	f[PG] = 2;
	r.nr = 0;
	expect(!pagemap_scan(fd, (uintptr_t)f, (uintptr_t)f + 2 * PG, 1, collect, &r) &&
	       r.nr == 1 && r.start[0] == (uintptr_t)f + PG && r.end[0] == (uintptr_t)f + 2 * PG,
	       "anon_only: %d runs, want only the written page", r.nr);
	r.nr = 0;
	expect(!pagemap_scan(fd, (uintptr_t)f, (uintptr_t)f + 2 * PG, 0, collect, &r) &&
	       r.nr == 1 && r.start[0] == (uintptr_t)f && r.end[0] == (uintptr_t)f + 2 * PG,
	       "all present pages: %d runs", r.nr);

	munmap((void *)f, 2 * PG);
	munmap((void *)p, 8 * PG);
	close(tfd);
	close(fd);
}

/*
 * The pagemap reader of kernels before 6.7, on a file of made-up entries
 * (a memfd has no PAGEMAP_SCAN): a run that starts at address 0 (a task
 * may map page 0 where vm.mmap_min_addr is 0) is a run like any other.
 * Found by test/fuzz/fuzz_proc.
 */
static void test_pagemap_read_from_page_zero(void)
{
	uint64_t e[4] = { 1ULL << 63 | 1234, 1ULL << 63 | 1235, 0, 1ULL << 62 };
	struct runs r = { .nr = 0 };
	int fd = memfd_create("pagemap", MFD_CLOEXEC);

	require(fd >= 0, "memfd_create: %m");
	require(write(fd, e, sizeof(e)) == sizeof(e), "write: %m");
	expect(!pagemap_scan(fd, 0, 4 * PG, PM_SCAN_DATA, collect, &r), "scan failed");
	expect(r.nr == 2, "%d runs, want 2", r.nr);
	expect(r.nr >= 1 && r.start[0] == 0 && r.end[0] == 2 * PG,
	       "run 0 is %#lx-%#lx, want 0-%#lx", r.nr >= 1 ? (unsigned long)r.start[0] : 0,
	       r.nr >= 1 ? (unsigned long)r.end[0] : 0, 2 * PG);
	expect(r.nr >= 2 && r.start[1] == 3 * PG && r.end[1] == 4 * PG, "run 1 (swapped)");
	close(fd);
}

static void unit_setup(void)
{
	/* parse errors are expected; keep them off the TAP output */
	log_open(NULL, LOG_ERR);
	log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_maps_sample),
	UNIT_TEST(test_smaps_sample),
	UNIT_TEST(test_maps_bad),
	UNIT_TEST(test_maps_live),
	UNIT_TEST(test_smaps_live),
	UNIT_TEST(test_status_sample),
	UNIT_TEST(test_net_raw),
	UNIT_TEST(test_status_variants),
	UNIT_TEST(test_status_nested_ns),
	UNIT_TEST(test_timens_offsets),
	UNIT_TEST(test_status_live),
	UNIT_TEST(test_stat_sample),
	UNIT_TEST(test_stat_fields_count),
	UNIT_TEST(test_stat_live),
	UNIT_TEST(test_limits_sample),
	UNIT_TEST(test_limits_live),
	UNIT_TEST(test_fdinfo_sample),
	UNIT_TEST(test_fdinfo_live),
	UNIT_TEST(test_fdinfo_locks_sample),
	UNIT_TEST(test_fdinfo_locks_live),
	UNIT_TEST(test_threads_children_live),
	UNIT_TEST(test_mountinfo_sample),
	UNIT_TEST(test_mountinfo_bad),
	UNIT_TEST(test_mountinfo_live),
	UNIT_TEST(test_timers_sample),
	UNIT_TEST(test_timers_bad),
	UNIT_TEST(test_timers_live),
	UNIT_TEST(test_pagemap_live),
	UNIT_TEST(test_pagemap_read_from_page_zero),
};

UNIT_MAIN(tests)
