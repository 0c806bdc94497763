/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_PARTS_MM_DEDUP_H
#define CRIU_PARTS_MM_DEDUP_H

#include <stdint.h>
#include <sys/types.h>

/*
 * --auto-dedup (mm-dedup.c), once a round's images in @dirfd are complete:
 * frees in the parent images the pages task @pid's new images stored
 * again; *@freed counts the bytes. 0, or -1 logged.
 */
int mm_dedup(int dirfd, pid_t pid, uint64_t *freed);

#endif
