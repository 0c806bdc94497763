// SPDX-License-Identifier: GPL-2.0-only
/* mem_mlockall with MCL_ONFAULT (see its .desc). */
#include "mem_mlockall.c"
