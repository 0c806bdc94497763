// SPDX-License-Identifier: GPL-2.0
/*
 * What a task may have chosen its code by, at its start, among what its
 * CPU offered. A program built for one CPU runs on another that has every
 * instruction it uses; but programs pick code paths at run time: glibc's
 * dynamic loader takes each library from the glibc-hwcaps/x86-64-vN
 * directory of the highest level the CPU meets, glibc's ifuncs pick
 * memcpy, strlen, libm's functions... by single features, and JITs and
 * some libraries execute CPUID themselves. Three things a dump can see
 * (parts/cpu-info.c judges them at restore):
 *
 *  - hwcaps_level: the highest N of glibc-hwcaps/x86-64-vN in the paths
 *    of its file mappings: those libraries need an x86-64-vN CPU;
 *  - cpu_mask: GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,... in its
 *    environment (the value glibc took: the last one): the features its
 *    glibc was told to ignore, so that neither the loader nor the ifuncs
 *    chose by them (only the names glibc honours count). Recorded only when
 *    its glibc honoured the variable: glibc is mapped (a static or
 *    non-glibc program ignores it) and the task is not AT_SECURE (glibc
 *    drops the tunable for set-user-ID programs);
 *  - jit: executable memory that is not a file mapped read-only (an
 *    anonymous or writable executable area): code generated at run time,
 *    by a JIT that read CPUID itself; no mask binds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/log.h"
#include "core/util.h"
#include "parts/cpu-use.h"

#define AT_SECURE_KEY		23	/* <elf.h> AT_SECURE */
#define HWCAPS_DIR		"/glibc-hwcaps/x86-64-v"
#define TUNABLES_VAR		"GLIBC_TUNABLES="
#define HWCAPS_TUNABLE		"glibc.cpu.hwcaps="
#define TUNABLE_PREFIX		"glibc."
#define MASK_MAX		4096

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* glibc itself: the C library or the dynamic loader. */
static int is_glibc(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libc.so.6", 9) || !strncmp(b, "libc-2.", 7) ||
	       !strncmp(b, "ld-linux-x86-64.so.2", 20);
}

/* Code generated at run time: executable, but not a file's read-only text. */
static int is_jit(const struct proc_vma *v)
{
	if (!(v->prot & PROT_EXEC))
		return 0;
	if (!v->path)
		return 1;
	if (!strcmp(v->path, "[vdso]") || !strcmp(v->path, "[vsyscall]") ||
	    !strcmp(v->path, "[uprobes]"))
		return 0;
	return v->path[0] != '/' || !strncmp(v->path, "/memfd:", 7) ||
	       (v->prot & PROT_WRITE) || v->shared;
}

static void scan_maps(const struct dtask *t, CpuEntry *e, int *glibc)
{
	const char *p;
	char buf[160];
	int i;
	long n;

	for (i = 0; i < t->maps.nr; i++) {
		const struct proc_vma *v = &t->maps.vma[i];

		if (!e->jit && is_jit(v)) {
			snprintf(buf, sizeof(buf), "%s%s%s at %#llx-%#llx",
				 v->path ? v->path : "anonymous",
				 v->prot & PROT_WRITE ? " writable" : "", " executable memory",
				 (unsigned long long)v->start, (unsigned long long)v->end);
			e->jit = xstrdup(buf);
		}
		if (!v->path)
			continue;
		*glibc |= is_glibc(v->path);
		p = strstr(v->path, HWCAPS_DIR);
		if (!p)
			continue;
		n = strtol(p + strlen(HWCAPS_DIR), NULL, 10);
		if (n > 1 && n <= 4 && (uint32_t)n > e->hwcaps_level) {
			e->has_hwcaps_level = 1;
			e->hwcaps_level = n;
			free(e->hwcaps_path);
			e->hwcaps_path = xstrdup(v->path);
		}
	}
}

/* AT_SECURE in its auxiliary vector: glibc ignored GLIBC_TUNABLES' CPU mask. */
static int is_secure(pid_t pid)
{
	char path[64];
	uint64_t *av;
	size_t len, i;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	av = (uint64_t *)read_file(-1, path, &len);
	if (!av)
		return -1;
	for (i = 0; i + 1 < len / 8; i += 2)
		if (av[i] == AT_SECURE_KEY)
			ret = av[i + 1] != 0;
	free(av);
	return ret;
}

/*
 * The glibc.cpu.hwcaps value of one GLIBC_TUNABLES string into @mask: glibc
 * reads the variables in order and a later value replaces an earlier one.
 */
static void add_tunables(const char *val, char *mask, size_t len)
{
	const char *p = val, *end;
	size_t n, k = strlen(HWCAPS_TUNABLE);

	while (*p) {
		end = strchrnul(p, ':');
		n = end - p;
		if (n > k && !strncmp(p, HWCAPS_TUNABLE, k))
			snprintf(mask, len, "%.*s", (int)(n - k), p + k);
		p = *end ? end + 1 : end;
	}
}

static int read_mask(pid_t pid, CpuEntry *e)
{
	char path[64], *env, *p, mask[MASK_MAX] = "";
	size_t len;
	int secure, in_var = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = read_file(-1, path, &len);
	if (!env) {
		pr_perror("Task %d: can't read %s", pid, path);
		return -1;
	}
	for (p = env; p < env + len; p += strlen(p) + 1) {
		if (!strncmp(p, TUNABLES_VAR, strlen(TUNABLES_VAR))) {
			in_var = 1;
			add_tunables(p + strlen(TUNABLES_VAR), mask, sizeof(mask));
		} else if (in_var && !strncmp(p, TUNABLE_PREFIX, strlen(TUNABLE_PREFIX))) {
			/* glibc 2.36 parsed the variable in place: each ':' became a NUL */
			add_tunables(p, mask, sizeof(mask));
		} else {
			in_var = 0;
		}
	}
	free(env);
	if (!mask[0])
		return 0;
	secure = is_secure(pid);
	if (secure < 0)
		return -1;
	if (secure) {
		pr_info("Task %d: its glibc ignored glibc.cpu.hwcaps=%s (AT_SECURE)", pid, mask);
		return 0;
	}
	e->cpu_mask = xstrdup(mask);
	return e->cpu_mask ? 0 : -1;
}

/*
 * Memory with a protection key (pkey_mprotect()) would come back without
 * it, unprotected, and the key's allocation with it: refused. It also
 * makes the PKU instructions and PKRU matter to a task, which nothing
 * else does; so a CPU or kernel without them takes every task this let
 * through (parts/cpu-info.c).
 */
static int check_pkeys(const struct dtask *t)
{
	int i;

	for (i = 0; i < t->maps.nr; i++) {
		const struct proc_vma *v = &t->maps.vma[i];

		/*
		 * execute-only memory: the kernel gives it a key of its own,
		 * and gives it again to what restore maps PROT_EXEC alone
		 */
		if (!v->pkey || (v->prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) == PROT_EXEC)
			continue;
		pr_err("Task %d: its memory at %#llx-%#llx has protection key %d "
		       "(pkey_mprotect); protection keys are not saved", t->pid,
		       (unsigned long long)v->start, (unsigned long long)v->end, v->pkey);
		return -1;
	}
	return 0;
}

int cpu_use_read(const struct dtask *t, CpuEntry *e)
{
	int glibc = 0;

	if (check_pkeys(t))
		return -1;

	scan_maps(t, e, &glibc);
	if (e->jit)
		pr_info("Task %d runs code generated at run time: %s", t->pid, e->jit);
	if (!glibc)
		return 0;
	return read_mask(t->pid, e);
}

void cpu_use_free(CpuEntry *e)
{
	free(e->hwcaps_path);
	free(e->cpu_mask);
	free(e->jit);
	e->hwcaps_path = e->cpu_mask = e->jit = NULL;
}
