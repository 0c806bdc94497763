// SPDX-License-Identifier: GPL-2.0-only
/* cpu_affinity, restored with --cpu-map (see its .desc). */
#include "cpu_affinity.c"
