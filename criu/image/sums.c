// SPDX-License-Identifier: GPL-2.0
/*
 * The raw stores, opened only here (a store read must have sums), and
 * their checksums: summed at dump while the pages are written,
 * checked at restore by a second thread that reads every store once more
 * through a mapping, while the main thread loads the images and forks the
 * tree. The restore waits for it before it releases a single task.
 *
 * The checking thread must not change criu's layout after the restore
 * noted it (the new tasks are forks of criu, and their trampolines go
 * where criu has nothing): it maps each piece of a store over a window
 * reserved before the thread starts. It takes no lock a forked task could
 * inherit held: no malloc, no logging; the main thread reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/crc32c.h"
#include "image/sums.h"

#define WINDOW		(4U << 20)	/* mapped at once; a multiple of any chunk size */
#define MIN_CHUNK	4096U

/* ------------------------------------------------------------------ dump */

static struct {
	StoreChecksum **v;
	size_t nr;
} dumped;

void store_sum_init(struct store_sum *s)
{
	memset(s, 0, sizeof(*s));
}

static void push(struct store_sum *s)
{
	uint32_t *n;

	if (s->nr == s->max) {
		s->max = s->max ? 2 * s->max : 64;
		n = realloc(s->crc, s->max * sizeof(*n));
		if (!n) {
			s->nomem = 1;
			return;
		}
		s->crc = n;
	}
	s->crc[s->nr++] = s->cur;
	s->cur = 0;
	s->fill = 0;
}

void store_sum_add(struct store_sum *s, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t n;

	while (len && !s->nomem) {
		n = min(len, (size_t)(IMG_SUM_CHUNK - s->fill));
		s->cur = crc32c(s->cur, p, n);
		s->fill += n;
		s->size += n;
		p += n;
		len -= n;
		if (s->fill == IMG_SUM_CHUNK)
			push(s);
	}
}

void store_sum_free(struct store_sum *s)
{
	free(s->crc);
	store_sum_init(s);
}

int img_sums_record(enum img_type t, int id, struct store_sum *s)
{
	char name[64];
	StoreChecksum *c;
	size_t i;

	if (s->fill)
		push(s);
	img_name(t, id, name, sizeof(name));
	if (s->nomem) {
		pr_err("Out of memory for the checksums of %s", name);
		goto err;
	}
	for (i = 0; i < dumped.nr; i++)	/* written again: the last one counts */
		if (!strcmp(dumped.v[i]->name, name))
			break;
	if (i == dumped.nr) {
		if (xgrow(dumped.v, dumped.nr))
			goto err;
		c = xmalloc(sizeof(*c));
		if (!c)
			goto err;
		store_checksum__init(c);
		c->name = xstrdup(name);
		if (!c->name) {
			free(c);
			goto err;
		}
		dumped.v[dumped.nr++] = c;
	}
	c = dumped.v[i];
	free(c->crc32c);
	c->size = s->size;
	c->chunk_size = IMG_SUM_CHUNK;
	c->crc32c = s->crc;
	c->n_crc32c = s->nr;
	store_sum_init(s);
	return 0;
err:
	store_sum_free(s);
	return -1;
}

int img_sums_file(int dirfd, enum img_type t, int id)
{
	struct store_sum s;
	char name[64];
	struct stat st;
	void *p = NULL;
	int fd;

	img_name(t, id, name, sizeof(name));
	fd = img_open_read(dirfd, name);
	if (fd < 0 || fstat(fd, &st)) {
		pr_perror("Can't read image %s back to sum it", name);
		goto err;
	}
	if (st.st_size) {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			pr_perror("Can't map image %s to sum it", name);
			goto err;
		}
	}
	store_sum_init(&s);
	store_sum_add(&s, p, st.st_size);
	if (p)
		munmap(p, st.st_size);
	close(fd);
	return img_sums_record(t, id, &s);
err:
	if (fd >= 0)
		close(fd);
	return -1;
}

void img_sums_fill(InventoryEntry *e)
{
	e->has_store_checksums = 1;
	e->store_checksums = img_checksum_on();
	e->stores = dumped.v;
	e->n_stores = dumped.nr;
}

/* --------------------------------------------------------------- restore */

enum {
	V_OK,
	V_OPEN,		/* can't open or stat: err */
	V_SIZE,		/* not the size it had: size */
	V_MAP,		/* can't map: err */
	V_SUM,		/* chunk does not match */
};

static struct {
	StoreChecksum *v;	/* our copy of the inventory's table */
	size_t nr;
	int listed;		/* the inventory has sums of every store */
	int dirfd;
	uint8_t *win;
	pthread_t th;
	int running;
	volatile int stop;
	/* the verdict, set by the thread */
	int bad;
	size_t which;
	uint64_t chunk, size;
	int err;
	uint64_t bytes;
	int64_t ns;
} ver = { .dirfd = -1 };

static int fail(int why, size_t which, int err)
{
	ver.bad = why;
	ver.which = which;
	ver.err = err;
	return -1;
}

static int check_window(const StoreChecksum *c, size_t which, uint64_t off, size_t len)
{
	uint64_t i, k = off / c->chunk_size, n;

	for (i = 0; i < len; i += n, k++) {
		n = min((uint64_t)c->chunk_size, len - i);
		if (crc32c(0, ver.win + i, n) != c->crc32c[k]) {
			ver.chunk = k;
			return fail(V_SUM, which, 0);
		}
	}
	return 0;
}

static int check_store(size_t which)
{
	const StoreChecksum *c = &ver.v[which];
	struct stat st;
	uint64_t off;
	size_t len;
	void *p;
	int fd, ret = 0;

	fd = openat(ver.dirfd, c->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = fail(V_OPEN, which, fd < 0 ? errno : EINVAL);
		goto out;
	}
	if ((uint64_t)st.st_size != c->size) {
		ver.size = st.st_size;
		ret = fail(V_SIZE, which, 0);
		goto out;
	}
	for (off = 0; off < c->size && !ver.stop && !ret; off += len) {
		len = min((uint64_t)WINDOW, c->size - off);
		p = mmap(ver.win, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, off);
		if (p == MAP_FAILED) {
			ret = fail(V_MAP, which, errno);
			break;
		}
		ret = check_window(c, which, off, len);
		ver.bytes += len;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static void *verifier(void *arg)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	size_t i;

	for (i = 0; i < ver.nr && !ver.stop; i++)
		if (check_store(i))
			break;
	/* the window stays reserved, the store no longer mapped */
	mmap(ver.win, WINDOW, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
	     -1, 0);
	ver.ns = clock_ns(CLOCK_MONOTONIC) - t0;
	return NULL;
}

/* A file name of one of the raw stores, nothing else (no path). */
static int raw_store_name(const char *name)
{
	static const enum img_type raw[] = { IMG_PAGES, IMG_SHMEM_PAGES, IMG_SYSVIPC_PAGES,
						 IMG_TMPFS_DATA };
	char want[64];
	size_t i;
	int id, n;

	for (i = 0; i < ARRAY_SIZE(raw); i++) {
		if (!strcmp(name, img_name(raw[i], 0, want, sizeof(want))))
			return 1;
		n = 0;
		if (raw[i] == IMG_PAGES && sscanf(name, "pages-%d.img%n", &id, &n) == 1 &&
		    !name[n] && id > 0 && !strcmp(name, img_name(raw[i], id, want, sizeof(want))))
			return 1;
	}
	return 0;
}

static int valid_entry(const StoreChecksum *c)
{
	uint64_t chunks;

	if (!raw_store_name(c->name) || c->chunk_size < MIN_CHUNK || c->chunk_size > WINDOW ||
	    (c->chunk_size & (c->chunk_size - 1)))
		return 0;
	chunks = c->size / c->chunk_size + !!(c->size % c->chunk_size);
	return chunks == c->n_crc32c;
}

static int copy_table(const InventoryEntry *inv)
{
	size_t i, j;

	ver.v = xzalloc(inv->n_stores * sizeof(*ver.v));
	if (!ver.v)
		return -1;
	for (i = 0; i < inv->n_stores; i++) {
		const StoreChecksum *c = inv->stores[i];

		for (j = 0; j < i; j++)
			if (!strcmp(c->name, inv->stores[j]->name))
				break;
		if (!valid_entry(c) || j < i) {
			pr_err("Image inventory.img is corrupted: bad checksums of store #%zu "
			       "(%s)", i, c->name);
			return -1;
		}
		ver.v[i] = *c;
		ver.v[i].name = xstrdup(c->name);
		ver.v[i].crc32c = xmalloc(c->n_crc32c * sizeof(uint32_t) + 1);
		ver.nr = i + 1;
		if (!ver.v[i].name || !ver.v[i].crc32c)
			return -1;
		memcpy(ver.v[i].crc32c, c->crc32c, c->n_crc32c * sizeof(uint32_t));
	}
	return 0;
}

/* Forgets an earlier check (there is one per restore; tests run several). */
static void reset(void)
{
	size_t i;

	img_verify_stop();
	for (i = 0; i < ver.nr; i++) {
		free(ver.v[i].name);
		free(ver.v[i].crc32c);
	}
	free(ver.v);
	ver.v = NULL;
	ver.nr = 0;
	ver.listed = ver.stop = ver.bad = 0;
	ver.bytes = 0;
}

int img_verify_start(int dirfd, const InventoryEntry *inv)
{
	sigset_t all, old;
	int ret;

	reset();
	if (!img_checksum_on())
		return 0;
	ver.listed = inv->has_store_checksums && inv->store_checksums;
	if (!ver.listed) {
		pr_warn("The page stores have no checksums (dumped with --skip-checksum): "
			"they are not checked");
		return 0;
	}
	if (copy_table(inv))
		return -1;
	if (!ver.nr)
		return 0;
	ver.dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	ver.win = mmap(NULL, WINDOW, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (ver.dirfd < 0 || ver.win == MAP_FAILED) {
		ver.win = NULL;
		pr_perror("Can't prepare the check of the page stores");
		return -1;
	}
	/* signals are the main thread's business */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&ver.th, NULL, verifier, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		errno = ret;
		pr_perror("Can't start the check of the page stores");
		return -1;
	}
	ver.running = 1;
	return 0;
}

int img_sums_expect(const char *name)
{
	size_t i;

	if (!img_checksum_on() || !ver.listed)
		return 0;
	for (i = 0; i < ver.nr; i++)
		if (!strcmp(ver.v[i].name, name))
			return 0;
	pr_err("Image %s has no checksum in inventory.img: refused", name);
	return -1;
}

static void report(void)
{
	const StoreChecksum *c = &ver.v[ver.which];
	uint64_t from = ver.chunk * c->chunk_size;

	errno = ver.err;
	switch (ver.bad) {
	case V_OPEN:
		pr_perror("Can't check image %s", c->name);
		break;
	case V_SIZE:
		pr_err("Image %s is %s: %lu bytes, its checksums cover %lu", c->name,
		       ver.size < c->size ? "truncated" : "corrupted", ver.size, c->size);
		break;
	case V_MAP:
		pr_perror("Can't map image %s to check it", c->name);
		break;
	default:
		pr_err("Image %s is corrupted: chunk %lu (bytes %lu-%lu) does not match its "
		       "checksum", c->name, ver.chunk, from,
		       min(from + c->chunk_size, c->size) - 1);
	}
}

static void join(void)
{
	if (!ver.running)
		return;
	pthread_join(ver.th, NULL);
	ver.running = 0;
	munmap(ver.win, WINDOW);
	ver.win = NULL;
	close(ver.dirfd);
	ver.dirfd = -1;
}

int img_verify_wait(void)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int was = ver.running;

	join();
	if (ver.bad) {
		report();
		return -1;
	}
	if (was)
		pr_info("Page stores checked: %zu, %lu MiB in %ld ms (waited %ld ms)", ver.nr,
			ver.bytes >> 20, ver.ns / 1000000,
			(clock_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	return 0;
}

void img_verify_stop(void)
{
	ver.stop = 1;
	join();
}

int img_open_raw(int dirfd, enum img_type t, int id, int write)
{
	char name[64];
	int fd;

	img_name(t, id, name, sizeof(name));
	if (write) {
		fd = create_file_at(dirfd, name, O_RDWR);
		if (fd < 0)
			pr_perror("Can't create image %s", name);
		return fd;
	}
	if (img_sums_expect(name))
		return -1;
	fd = img_open_read(dirfd, name);
	if (fd < 0 && errno != ELOOP && errno != EINVAL)
		pr_perror("Can't open image %s", name);
	return fd;
}

int64_t img_raw_size(int dirfd, enum img_type t, int id)
{
	char name[64];
	struct stat st;
	int fd;

	img_name(t, id, name, sizeof(name));
	fd = img_open_read(dirfd, name);
	if (fd < 0 || fstat(fd, &st)) {
		if (errno != ELOOP && errno != EINVAL)
			pr_perror("Can't stat image %s", name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return st.st_size;
}
