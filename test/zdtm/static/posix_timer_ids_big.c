// SPDX-License-Identifier: GPL-2.0-only
/* posix_timer_ids with a timer of id 1000000 as well (see its .desc). */
#include "posix_timer_ids.c"
