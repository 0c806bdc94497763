/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CPU_INFO_H
#define CRIU_PARTS_CPU_INFO_H

/*
 * What a CPU offers (CPUID, XCR0, XSAVE sizes) and whether this CPU offers
 * what a checkpoint needs. Used by the cpu part on dump and restore and by
 * the "criu cpuinfo" commands. Documentation/cpu.md has the rules.
 */
#include <stddef.h>
#include <stdint.h>

#include "cpu.pb-c.h"

#define CPUINFO_NR_LEAVES	6	/* the fixed ones */
#define CPUINFO_MAX_LEAVES	(CPUINFO_NR_LEAVES + 62)	/* and 0xD.2..0xD.63 */

/* CPUID and XCR0 of the CPU criu runs on, as an image entry. */
struct cpuinfo_host {
	CpuinfoEntry e;
	CpuidLeaf leaf[CPUINFO_MAX_LEAVES];
	CpuidLeaf *pleaf[CPUINFO_MAX_LEAVES];
	char vendor[13];
	char model_name[49];
};

/* What the dumped threads need of the restoring CPU. */
struct cpu_need {
	uint64_t xfeatures;	/* XSAVE components their registers use */
	/* what the task chose its code by (parts/cpu-use.c); none: the CPU's all */
	const char *mask;	/* glibc.cpu.hwcaps it was started with */
	const char *jit;	/* its code generated at run time */
	uint32_t hwcaps_level;	/* x86-64-vN of its libraries' glibc-hwcaps */
	const char *hwcaps_path;
	char excused[512];	/* out: missing instructions the mask excused */
};

#define CPU_ONLINE_PATH		"/sys/devices/system/cpu/online"

/* The online CPUs as a list ("0-3,6"), malloc'ed; NULL (logged) on error. */
char *cpuinfo_read_online(void);

/* Fills @h for this CPU; @online is the CPU list to record, or NULL. */
int cpuinfo_host_read(struct cpuinfo_host *h, const char *online);

/* Refuses an image entry that can't be a CPU description (fuzzed, foreign). */
int cpuinfo_validate(const CpuinfoEntry *e);

/*
 * Compares a dumped CPU with this one for the CPU_CAP_* checks in @caps.
 * Returns 0 when compatible, 1 when not, with the missing features in
 * @why, -1 on error.
 */
int cpuinfo_compare(const CpuinfoEntry *img, struct cpu_need *need,
		    unsigned int caps, char *why, size_t len);
/* The same against a CPU read earlier with cpuinfo_host_read(). */
int cpuinfo_compare_host(const CpuinfoEntry *img, const struct cpuinfo_host *h,
			 struct cpu_need *need, unsigned int caps, char *why, size_t len);

/* The x86-64 psABI level (0-4) a CPU meets, its XCR0 included. */
int cpuinfo_level(const CpuinfoEntry *e);

#endif
