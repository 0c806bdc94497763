// SPDX-License-Identifier: GPL-2.0-only
/* cpu_affinity where the CPU exists: the affinity is kept (see its .desc). */
#include "cpu_affinity.c"
