// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/image.h"
#include "image/pagestore.h"

struct pstore {
	int fd;
	uint8_t *buf[2];
	size_t len[2];
	sem_t filled[2], empty[2];
	int cur;		/* the buffer the caller fills */
	int werr;		/* errno of the first failed write */
	uint64_t total;
	pthread_t writer;
	int running;
};

static void *writer_main(void *arg)
{
	struct pstore *ps = arg;
	int i = 0;

	for (;;) {
		sem_wait(&ps->filled[i]);
		if (!ps->len[i])
			break;	/* the end */
		if (ps->werr)
			;	/* after a failed write, the rest is dropped */
		else if (write_full(ps->fd, ps->buf[i], ps->len[i]))
			ps->werr = errno;
		else
			ps->total += ps->len[i];
		sem_post(&ps->empty[i]);
		i ^= 1;
	}
	return NULL;
}

struct pstore *pstore_create(int dirfd, int id)
{
	struct pstore *ps = xzalloc(sizeof(*ps));
	int i;

	if (!ps)
		return NULL;
	ps->fd = img_open_raw(dirfd, IMG_PAGES, id, 1);
	if (ps->fd < 0)
		goto err;
	for (i = 0; i < 2; i++) {
		ps->buf[i] = mmap(NULL, PSTORE_BUF, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ps->buf[i] == MAP_FAILED) {
			ps->buf[i] = NULL;
			pr_perror("Can't allocate a page store buffer");
			goto err;
		}
		sem_init(&ps->filled[i], 0, 0);
		sem_init(&ps->empty[i], 0, 1);
	}
	if (pthread_create(&ps->writer, NULL, writer_main, ps)) {
		pr_err("Can't start the page store writer");
		goto err;
	}
	ps->running = 1;
	return ps;
err:
	pstore_close(ps, NULL);
	return NULL;
}

void *pstore_buf(struct pstore *ps)
{
	sem_wait(&ps->empty[ps->cur]);
	sem_post(&ps->empty[ps->cur]);	/* still ours until submitted */
	return ps->werr ? NULL : ps->buf[ps->cur];
}

int pstore_submit(struct pstore *ps, size_t len)
{
	if (!len)
		return 0;
	sem_wait(&ps->empty[ps->cur]);
	ps->len[ps->cur] = len;
	sem_post(&ps->filled[ps->cur]);
	ps->cur ^= 1;
	return 0;
}

int pstore_close(struct pstore *ps, uint64_t *total)
{
	int i, ret = 0;

	if (!ps)
		return -1;
	if (ps->running) {
		sem_wait(&ps->empty[ps->cur]);
		ps->len[ps->cur] = 0;
		sem_post(&ps->filled[ps->cur]);
		pthread_join(ps->writer, NULL);
	}
	if (ps->werr) {
		errno = ps->werr;
		pr_perror("Can't write the page store");
		ret = -1;
	}
	if (total)
		*total = ps->total;
	for (i = 0; i < 2; i++)
		if (ps->buf[i]) {
			munmap(ps->buf[i], PSTORE_BUF);
			sem_destroy(&ps->filled[i]);
			sem_destroy(&ps->empty[i]);
		}
	if (ps->fd >= 0)
		close(ps->fd);
	free(ps);
	return ret;
}
