/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_CRC32C_H
#define CRIU_IMAGE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82f63b78), as iSCSI, ext4 and
 * SSE4.2's crc32 instruction compute it: crc32c(0, "123456789", 9) is
 * 0xe3069283. Chained: crc32c(crc32c(0, a, n), b, m) is the CRC of a then b.
 * It catches every error burst of up to 32 bits, so any one corrupted byte.
 */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
/* The same, table-driven, whatever the CPU has (for tests). */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* Whether crc32c() uses the crc32 instruction. */
int crc32c_hw(void);

#endif
