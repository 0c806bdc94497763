// SPDX-License-Identifier: GPL-2.0-only
/* Two aio rings of different sizes, the events left in the second wrapping past its end. */
#define AIO_RINGS	2
#include "aio_ring.c"
