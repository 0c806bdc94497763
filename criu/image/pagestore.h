/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_PAGESTORE_H
#define CRIU_IMAGE_PAGESTORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writing the raw page store (pages-ID.img) with a writer thread: the
 * caller fills one buffer with pages while the previous one is written,
 * so reading the task's memory and writing the file overlap.
 */
#define PSTORE_BUF	(8U << 20)

struct pstore;

struct pstore *pstore_create(int dirfd, int id);
/* A free buffer of PSTORE_BUF bytes to fill; NULL after a write error. */
void *pstore_buf(struct pstore *ps);
/* Queues the first @len bytes of the buffer last returned by pstore_buf. */
int pstore_submit(struct pstore *ps, size_t len);
/* Waits for every write; returns -1 if any failed. Frees @ps. */
int pstore_close(struct pstore *ps, uint64_t *total);

#endif
