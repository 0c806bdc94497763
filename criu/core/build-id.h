/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_CORE_BUILD_ID_H
#define CRIU_CORE_BUILD_ID_H

/*
 * The GNU build-id of an ELF file (NT_GNU_BUILD_ID in a PT_NOTE segment):
 * what tells a copy of a mapped binary or library from a changed one when
 * its mtime differs (mm.c). The linker computes it over the output it
 * writes, so two files of the same build-id and the same size hold what
 * the loader mapped, byte for byte, as far as anyone can tell short of
 * hashing them whole.
 */
#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX	64	/* GNU ld writes 20 (sha1) or 16 (md5, uuid) bytes */

/*
 * Reads the build-id of the file open at @fd into @id (*@len bytes).
 * 0: found; 1: not a 64-bit ELF file or none there; -1: a read failed.
 * The file may be anything: every size and offset is checked.
 */
int file_build_id(int fd, uint8_t *id, size_t *len);

#endif
