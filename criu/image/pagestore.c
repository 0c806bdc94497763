// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/sendfile.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/imgout.h"
#include "image/pagestore.h"
#include "image/sums.h"

/*
 * What the writer writes at once: summed just before, so write() copies
 * bytes the checksum brought into the cache.
 */
#define PIECE	(512U << 10)

struct pstore {
	struct imgout_file f;	/* the open store: a file, or on the page server */
	int open;
	int id;
	int summed;		/* checksums on: sum is the open store's */
	int caller_sums;	/* the caller sums what it writes (pstore_sum) */
	struct store_sum sum;
	uint8_t *buf[2];	/* mapped when first handed out */
	size_t len[2];
	sem_t filled[2], empty[2];
	int cur;		/* the buffer the caller fills */
	int first;		/* the buffer the writer takes first */
	int werr;		/* errno of the first failed write to this store */
	uint64_t total;
	pthread_t writer;
	int running;
};

/* Writes one buffer to the open store, or drops it after a failed write. */
static void put(struct pstore *ps, int i)
{
	const uint8_t *p = ps->buf[i];
	size_t left = ps->len[i], n;

	for (; left && !ps->werr; p += n, left -= n) {
		n = min(left, (size_t)PIECE);
		if (ps->summed && !ps->caller_sums)
			store_sum_add(&ps->sum, p, n);
		if (imgout_write(&ps->f, p, n))
			ps->werr = errno;
		else
			ps->total += n;
	}
}

static void *writer_main(void *arg)
{
	struct pstore *ps = arg;
	int i = ps->first;

	for (;;) {
		sem_wait(&ps->filled[i]);
		if (!ps->len[i])
			break;	/* the end */
		put(ps, i);
		sem_post(&ps->empty[i]);
		i ^= 1;
	}
	return NULL;
}

struct pstore *pstore_new(void)
{
	struct pstore *ps = xzalloc(sizeof(*ps));
	int i;

	if (!ps)
		return NULL;
	for (i = 0; i < 2; i++) {
		sem_init(&ps->filled[i], 0, 0);
		sem_init(&ps->empty[i], 0, 1);
	}
	return ps;
}

int pstore_open(struct pstore *ps, int dirfd, int id)
{
	char name[64];

	if (imgout_create(dirfd, img_name(IMG_PAGES, id, name, sizeof(name)), &ps->f))
		return -1;
	ps->open = 1;
	ps->id = id;
	ps->werr = 0;
	ps->total = 0;
	ps->summed = img_checksum_on();
	ps->caller_sums = 0;
	store_sum_init(&ps->sum);
	return 0;
}

void *pstore_buf(struct pstore *ps)
{
	int i = ps->cur;

	sem_wait(&ps->empty[i]);
	sem_post(&ps->empty[i]);	/* still ours until submitted */
	if (ps->werr)
		return NULL;
	if (!ps->buf[i]) {
		ps->buf[i] = mmap(NULL, PSTORE_BUF, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ps->buf[i] == MAP_FAILED) {
			ps->buf[i] = NULL;
			pr_perror("Can't allocate a page store buffer");
			return NULL;
		}
	}
	return ps->buf[i];
}

void pstore_sum(struct pstore *ps, const void *p, size_t len)
{
	ps->caller_sums = 1;
	if (ps->summed)
		store_sum_add(&ps->sum, p, len);
}

int pstore_submit(struct pstore *ps, size_t len)
{
	int i = ps->cur;

	if (!len)
		return 0;
	/*
	 * Until a buffer is full, write here: starting a thread and handing
	 * over costs more than writing a few pages. Nothing is queued then,
	 * so the file's order is kept.
	 */
	if (!ps->running && len < PSTORE_BUF) {
		ps->len[i] = len;
		put(ps, i);
		return 0;
	}
	if (!ps->running) {
		ps->first = i;
		if (pthread_create(&ps->writer, NULL, writer_main, ps)) {
			pr_err("Can't start the page store writer");
			ps->werr = EAGAIN;
			return -1;
		}
		ps->running = 1;
	}
	sem_wait(&ps->empty[i]);
	ps->len[i] = len;
	sem_post(&ps->filled[i]);
	ps->cur ^= 1;
	return 0;
}

int pstore_flush(struct pstore *ps, uint64_t *total)
{
	int i, ret = 0;

	if (!ps->open)
		return -1;
	/* both buffers free again: every queued write is done */
	for (i = 0; i < 2; i++) {
		sem_wait(&ps->empty[i]);
		sem_post(&ps->empty[i]);
	}
	if (ps->werr) {
		errno = ps->werr;
		pr_perror("Can't write page store %d%s", ps->id, imgout_where());
		ret = -1;
	}
	if (ps->summed && !ret)
		ret = img_sums_record(IMG_PAGES, ps->id, &ps->sum);
	store_sum_free(&ps->sum);
	if (total)
		*total = ps->total;
	if (imgout_close(&ps->f) && !ret) {
		pr_perror("Can't write page store %d%s", ps->id, imgout_where());
		ret = -1;
	}
	ps->open = 0;
	return ret;
}

void pstore_free(struct pstore *ps)
{
	int i;

	if (!ps)
		return;
	if (ps->open)
		pstore_flush(ps, NULL);
	if (ps->running) {
		sem_wait(&ps->empty[ps->cur]);
		ps->len[ps->cur] = 0;
		sem_post(&ps->filled[ps->cur]);
		pthread_join(ps->writer, NULL);
	}
	for (i = 0; i < 2; i++) {
		if (ps->buf[i])
			munmap(ps->buf[i], PSTORE_BUF);
		sem_destroy(&ps->filled[i]);
		sem_destroy(&ps->empty[i]);
	}
	free(ps);
}

struct pstore *pstore_create(int dirfd, int id)
{
	struct pstore *ps = pstore_new();

	if (ps && pstore_open(ps, dirfd, id)) {
		pstore_free(ps);
		return NULL;
	}
	return ps;
}

int pstore_close(struct pstore *ps, uint64_t *total)
{
	int ret;

	if (!ps)
		return -1;
	ret = pstore_flush(ps, total);
	pstore_free(ps);
	return ret;
}

/*
 * Up to @len bytes at @at of @fd to the end of @out, by the kernel. Past
 * the biggest file the store's filesystem can hold (16 TiB on ext4), the
 * kernel refuses to read the object at all (EOVERFLOW): those go through
 * a buffer here.
 */
static ssize_t copy_out(int out, int fd, off_t at, size_t len)
{
	char buf[64 << 10];
	ssize_t n = sendfile(out, fd, &at, len);

	if (n >= 0 || errno != EOVERFLOW)
		return n;
	n = pread(fd, buf, min(len, sizeof(buf)), at);
	if (n > 0 && write_full(out, buf, n))
		return -1;
	return n;
}

int pstore_copy_file(int out, int fd, uint64_t size,
		     int (*run)(void *arg, uint64_t off, uint64_t len), void *arg,
		     const char *what, uint64_t *total)
{
	off_t data, hole, from;
	uint64_t len, chunk;
	ssize_t n;

	for (data = 0; data < (off_t)size; data = hole) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0) {
			pr_perror("Can't find the data of %s", what);
			return -1;
		}
		data &= PAGE_MASK;
		hole = min((uint64_t)hole + PAGE_SIZE - 1, size + PAGE_SIZE - 1) & PAGE_MASK;
		for (from = data; from < hole; from += len) {
			len = min((uint64_t)(hole - from), STORE_MAX_RUN);
			if (run(arg, from, len))
				return -1;
			for (chunk = 0; chunk < len; chunk += n) {
				n = copy_out(out, fd, from + chunk, len - chunk);
				if (n < 0) {
					pr_perror("Can't copy %s into the store", what);
					return -1;
				}
				if (!n)
					break;	/* the end of the file, in its last page */
			}
			/* the store stays page-aligned: the tail of a last page is a hole */
			if (chunk < len && lseek(out, len - chunk, SEEK_CUR) < 0)
				return -1;
			*total += len;
		}
	}
	return 0;
}
