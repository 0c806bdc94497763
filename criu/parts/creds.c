// SPDX-License-Identifier: GPL-2.0
/* SCAFFOLD: being written; replaced before commit. */
#include "parts/part.h"

const struct part part_creds = {
	.name = "creds",
	.id = PART_CREDS,
};
