// SPDX-License-Identifier: GPL-2.0
/*
 * The table the drivers walk, made of the registry (images/kinds.def),
 * whose order is the restore's: namespaces first, shared objects before
 * the fds and areas that name them, memory before what points into it,
 * credentials last; registers are put in by criu once the trampoline is
 * gone (the final hooks).
 */
#include "parts/part.h"

#define KIND(name, NAME, ...)	extern const struct part part_##name;
#define PART(name, NAME)	extern const struct part part_##name;
#include "kinds.def"

const struct part *const parts[PART_NR] = {
#define KIND(name, NAME, ...)	[PART_##NAME] = &part_##name,
#define PART(name, NAME)	[PART_##NAME] = &part_##name,
#include "kinds.def"
};
