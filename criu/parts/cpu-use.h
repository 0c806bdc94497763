/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_CPU_USE_H
#define CRIU_PARTS_CPU_USE_H

/*
 * What a task may have chosen its code by, read at dump for the "ins"
 * check of restore (Documentation/cpu.md, "Moving to another CPU model").
 */
#include "parts/part.h"
#include "cpu.pb-c.h"

/*
 * Fills the hwcaps_level/hwcaps_path, cpu_mask and jit fields of @e for
 * task @t (its maps are read); the strings are malloc'ed, freed by
 * cpu_use_free(). 0, or -1 (logged).
 */
int cpu_use_read(const struct dtask *t, CpuEntry *e);
void cpu_use_free(CpuEntry *e);

#endif
