/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_SUMS_H
#define CRIU_IMAGE_SUMS_H

/*
 * The raw stores (pages-PID.img, shmem-pages.img, sysvipc-pages.img):
 * opening them, and their checksums, a CRC32C per 1 MiB chunk, computed
 * at dump as the bytes are written and kept in inventory.img (written
 * last, itself framed with a checksum like every other image). Restore checks every
 * store against them on a thread of its own while it loads and forks,
 * and waits for the verdict before it lets any task go.
 */
#include <stddef.h>
#include <stdint.h>

#include "image/image.h"
#include "inventory.pb-c.h"

#define IMG_SUM_CHUNK	(1U << 20)

/*
 * The raw page store: created 0600 for writing (as create_file_at() does),
 * opened read-only otherwise (only one the inventory has sums of).
 */
int img_open_raw(int dirfd, enum img_type t, int id, int write);
/* The size of raw store @t/@id, checked as img_open_read() does; -1 logged. */
int64_t img_raw_size(int dirfd, enum img_type t, int id);

/* A store being written, summed chunk by chunk. */
struct store_sum {
	uint32_t *crc;
	size_t nr, max;
	uint32_t cur;		/* CRC of the chunk being summed */
	uint32_t fill;		/* its bytes so far */
	uint64_t size;
	int nomem;
};

void store_sum_init(struct store_sum *s);
/* @len more bytes at the end of the store. */
void store_sum_add(struct store_sum *s, const void *buf, size_t len);
void store_sum_free(struct store_sum *s);

/*
 * Dump. Store @t/@id is complete as @s summed it: its sums go into the
 * inventory (@s is taken over and emptied).
 */
int img_sums_record(enum img_type t, int id, struct store_sum *s);
/* Sums store @t/@id from the file, for stores the kernel copied (sendfile). */
int img_sums_file(int dirfd, enum img_type t, int id);
/* Sets the inventory's store_checksums and stores (valid until exit). */
void img_sums_fill(InventoryEntry *e);

/*
 * Restore. Takes the sums from the inventory and starts checking every
 * store listed, in the background; refuses a malformed table at once.
 */
int img_verify_start(int dirfd, const InventoryEntry *inv);
/* A raw store about to be opened for reading must have sums; -1 logged. */
int img_sums_expect(const char *name);
/* Waits for the check: 0, or -1 with the store and chunk logged. */
int img_verify_wait(void);
/* Stops a check still running (a restore that failed otherwise). */
void img_verify_stop(void);

#endif
