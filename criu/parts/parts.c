// SPDX-License-Identifier: GPL-2.0
/*
 * The table the drivers walk. Order matters on restore: files and the
 * filesystem context are set up by the new task itself, then the batch
 * builds memory first, task attributes and signals next, credentials last;
 * registers are put in by criu once the trampoline is gone.
 */
#include "parts/part.h"

extern const struct part part_fdinfo, part_fs, part_sched, part_rlimit, part_mm,
	part_task, part_sigact, part_signal, part_itimer, part_regs, part_creds, part_cpu;

extern const struct part part_posix_timer;
extern const struct part part_ns, part_ns_pid, part_ns_uts, part_timens;
extern const struct part part_shmem, part_sysvipc;
extern const struct part part_seccomp, part_seccomp_strict;
extern const struct part part_vdso;

const struct part *const parts[PART_NR] = {
	[PART_NS] = &part_ns,
	[PART_NS_PID] = &part_ns_pid,
	[PART_NS_UTS] = &part_ns_uts,
	[PART_TIMENS] = &part_timens,
	[PART_FDINFO] = &part_fdinfo,
	[PART_FS] = &part_fs,
	[PART_SCHED] = &part_sched,
	[PART_CPU] = &part_cpu,
	[PART_SHMEM] = &part_shmem,
	[PART_VDSO] = &part_vdso,
	[PART_MM] = &part_mm,
	[PART_SYSVIPC] = &part_sysvipc,
	[PART_RLIMIT] = &part_rlimit,
	[PART_TASK] = &part_task,
	[PART_SIGACT] = &part_sigact,
	[PART_SIGNAL] = &part_signal,
	[PART_ITIMER] = &part_itimer,
	[PART_POSIX_TIMER] = &part_posix_timer,
	[PART_REGS] = &part_regs,
	[PART_SECCOMP] = &part_seccomp,
	[PART_CREDS] = &part_creds,
	[PART_SECCOMP_STRICT] = &part_seccomp_strict,
};
