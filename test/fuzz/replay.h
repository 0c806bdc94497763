/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* What each target defines (libFuzzer's entry point). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The seeds in @argv and their mutations; 0 when there was a seed. */
int fuzz_replay(const char *name, int argc, char **argv);

#endif
