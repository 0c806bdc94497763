/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_PAGESTORE_H
#define CRIU_IMAGE_PAGESTORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writing raw page stores (pages-ID.img). The caller fills one buffer with
 * pages while a writer thread writes the previous one, so reading a task's
 * memory and writing the file overlap. The thread starts with the first
 * full buffer: a store smaller than one buffer is written by the caller,
 * without a thread. One pstore serves the stores of every task of a dump
 * in turn (pstore_open ... pstore_flush), keeping its buffers and thread.
 */
#define PSTORE_BUF	(8U << 20)

struct pstore;

/* A writer with no store open yet. */
struct pstore *pstore_new(void);
/* Starts store @id in @dirfd (created 0600, truncated). */
int pstore_open(struct pstore *ps, int dirfd, int id);
/* A free buffer of PSTORE_BUF bytes to fill; NULL after a write error. */
void *pstore_buf(struct pstore *ps);
/*
 * Sums @len bytes the caller just put into the buffer, after those it
 * summed before (the store's checksums, sums.h), while they are in the
 * cache. A caller that sums once sums the whole store so; else the writer
 * sums each buffer before it writes it.
 */
void pstore_sum(struct pstore *ps, const void *p, size_t len);
/* Queues the first @len bytes of the buffer last returned by pstore_buf. */
int pstore_submit(struct pstore *ps, size_t len);
/*
 * Waits for every write of the open store and closes it; @total gets the
 * bytes written. Returns -1 if any write failed. The writer stays ready
 * for the next pstore_open.
 */
int pstore_flush(struct pstore *ps, uint64_t *total);
/* Stops the writer (flushing an open store, errors ignored) and frees @ps. */
void pstore_free(struct pstore *ps);

/* One store: pstore_new + pstore_open; pstore_flush + pstore_free. */
struct pstore *pstore_create(int dirfd, int id);
int pstore_close(struct pstore *ps, uint64_t *total);

/* The most one run of pages holds: every image counts them in 32 bits. */
#define STORE_MAX_RUN	((uint64_t)(1U << 31) * 4096)

/*
 * A file's pages that hold data (SEEK_DATA knows them: in memory or
 * swapped), copied by the kernel to the end of the raw store @out (a
 * shmem object, a System V segment), which stays page-aligned. @fd's
 * first @size bytes are looked at; each run of them (at most
 * STORE_MAX_RUN) is told to @run, its offset in the file and its length,
 * before it is copied; *@total counts the store's bytes. @what names the
 * file in errors. 0, or -1 logged.
 */
int pstore_copy_file(int out, int fd, uint64_t size,
		     int (*run)(void *arg, uint64_t off, uint64_t len), void *arg,
		     const char *what, uint64_t *total);

#endif
