// SPDX-License-Identifier: GPL-2.0
/*
 * Integrity and safety of what criu writes and reads: the CRC32C, the
 * checksum of every frame and of every chunk of a raw store (and the
 * restore's check of them), files created without following what someone
 * planted under their names, images never read through a symlink, and
 * log lines that carry no raw control bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/crc32c.h"
#include "image/image.h"
#include "image/pagestore.h"
#include "image/sums.h"

#include "fs.pb-c.h"
#include "inventory.pb-c.h"

#include "unit.h"

#define ID	4343

static char tmpdir[] = "/tmp/criu-unit-integrity-XXXXXX";
static int dirfd_ = -1;
static int logfd = -1;

static void cleanup(void)
{
	struct dirent *de;
	DIR *d;

	if (dirfd_ < 0)
		return;
	d = fdopendir(dup(dirfd_));
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd_, de->d_name, 0);
	if (d)
		closedir(d);
	close(dirfd_);
	rmdir(tmpdir);
}

static off_t log_mark(void)
{
	return lseek(logfd, 0, SEEK_END);
}

static const char *log_since(off_t mark)
{
	static char buf[8192];
	ssize_t n = pread(logfd, buf, sizeof(buf) - 1, mark);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static uint32_t rnd_state = 0x2545f491;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static uint8_t *file_bytes(const char *name, size_t *len)
{
	return (uint8_t *)read_file(dirfd_, name, len);
}

static void put_bytes(const char *name, const void *buf, size_t len)
{
	int fd;

	unlinkat(dirfd_, name, 0);
	fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	expect(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "write %s: %m", name);
	if (fd >= 0)
		close(fd);
}

/* ---------------------------------------------------------------- CRC32C */

/* The check value of the catalogue, and RFC 3720's (iSCSI) B.4 examples. */
static void test_crc32c_vectors(void)
{
	uint8_t buf[32];
	int i;

	expect(crc32c(0, "123456789", 9) == 0xe3069283, "%#x", crc32c(0, "123456789", 9));
	expect(crc32c_sw(0, "123456789", 9) == 0xe3069283, "sw %#x",
	       crc32c_sw(0, "123456789", 9));
	expect(crc32c(0, NULL, 0) == 0, "empty");
	memset(buf, 0, sizeof(buf));
	expect(crc32c(0, buf, 32) == 0x8a9136aa, "32 zeros: %#x", crc32c(0, buf, 32));
	memset(buf, 0xff, sizeof(buf));
	expect(crc32c(0, buf, 32) == 0x62a8ab43, "32 0xff: %#x", crc32c(0, buf, 32));
	for (i = 0; i < 32; i++)
		buf[i] = i;
	expect(crc32c(0, buf, 32) == 0x46dd794e, "0..31: %#x", crc32c(0, buf, 32));
	printf("# crc32c uses %s\n", crc32c_hw() ? "the SSE4.2 instruction" : "tables");
}

/*
 * The fast path (three interleaved streams joined by the shift tables)
 * against the plain tables: any length, any alignment, any split.
 */
static void test_crc32c_streams(void)
{
	size_t n = 200000, i, off, len, cut;
	uint8_t *buf = malloc(n + 64);
	uint32_t a, b, c;
	int k, bad = 0;

	require(buf, "malloc");
	for (i = 0; i < n + 64; i++)
		buf[i] = rnd();
	for (k = 0; k < 3000 && bad < 5; k++) {
		off = rnd() % 64;
		len = k < 200 ? (size_t)k : rnd() % (k < 2000 ? 40000 : n);
		cut = len ? rnd() % len : 0;
		a = crc32c(0, buf + off, len);
		b = crc32c_sw(0, buf + off, len);
		c = crc32c(crc32c(0, buf + off, cut), buf + off + cut, len - cut);
		if (a != b || a != c) {
			bad++;
			expect(0, "offset %zu length %zu cut %zu: %#x, tables %#x, split %#x",
			       off, len, cut, a, b, c);
		}
	}
	free(buf);
}

/* ---------------------------------------------------------------- frames */

static void write_fs(const char *cwd)
{
	FsEntry e = FS_ENTRY__INIT;

	e.cwd = (char *)cwd;
	e.root = "/";
	e.umask = 022;
	require(!img_write(dirfd_, IMG_FS, ID, &e.base), "img_write");
}

/* Every single flipped bit of a framed image is refused, header or message. */
static void test_frame_every_flip(void)
{
	char name[64];
	size_t len, i;
	uint8_t *good;
	void *msg;
	int bit, accepted = 0;

	write_fs("/some/where/else");
	img_name(IMG_FS, ID, name, sizeof(name));
	good = file_bytes(name, &len);
	require(good && len > IMG_HDR_SIZE, "read back");
	for (i = 0; i < len; i++)
		for (bit = 0; bit < 8; bit++) {
			good[i] ^= 1 << bit;
			msg = img_unpack(IMG_FS, good, len, name);
			accepted += !!msg;
			expect(!msg, "byte %zu bit %d flipped: decoded", i, bit);
			img_free(IMG_FS, msg);
			good[i] ^= 1 << bit;
		}
	msg = img_unpack(IMG_FS, good, len, name);
	expect(msg, "the good image is refused");
	img_free(IMG_FS, msg);

	/* --skip-checksum: a changed letter of the path decodes */
	good[len - 10] ^= 0x01;
	img_set_checksum(0);
	msg = img_unpack(IMG_FS, good, len, name);
	img_set_checksum(1);
	expect(msg, "with checksums off a changed letter is refused");
	img_free(IMG_FS, msg);
	free(good);
}

static void test_frame_checksum_logged(void)
{
	char name[64];
	size_t len;
	uint8_t *buf;
	off_t mark;
	void *msg = NULL;

	write_fs("/a/b/c");
	img_name(IMG_FS, ID, name, sizeof(name));
	buf = file_bytes(name, &len);
	require(buf, "read back");
	buf[len - 3] ^= 0x20;
	put_bytes(name, buf, len);
	mark = log_mark();
	expect(img_read(dirfd_, IMG_FS, ID, &msg, 0) == -1, "a flipped byte is read");
	expect(strstr(log_since(mark), name) && strstr(log_since(mark), "checksum"),
	       "log: '%s'", log_since(mark));
	free(buf);
}

/* A file of format version 1 (8-byte header, no checksum) is named as such. */
static void test_frame_version1(void)
{
	FsEntry e = FS_ENTRY__INIT;
	uint32_t hdr[2] = { img_magic(IMG_FS), 0 };
	uint8_t buf[64];
	char name[64];
	off_t mark;
	void *msg = NULL;

	e.cwd = "/old";
	e.root = "/";
	hdr[1] = protobuf_c_message_pack(&e.base, buf + 8);
	memcpy(buf, hdr, 8);
	img_name(IMG_FS, ID, name, sizeof(name));
	put_bytes(name, buf, 8 + hdr[1]);
	mark = log_mark();
	expect(img_read(dirfd_, IMG_FS, ID, &msg, 0) == -1, "a version 1 frame is read");
	expect(strstr(log_since(mark), "format version 1"), "log: '%s'", log_since(mark));
}

/* ------------------------------------------------------------ raw stores */

/* Pieces of any size make the same sums as the chunks summed whole. */
static void test_store_sum_chunks(void)
{
	size_t n = 3 * IMG_SUM_CHUNK + 12345, off, len, i;
	uint8_t *buf = malloc(n);
	struct store_sum s;

	require(buf, "malloc");
	for (i = 0; i < n; i++)
		buf[i] = rnd();
	store_sum_init(&s);
	for (off = 0; off < n; off += len) {
		len = rnd() % (IMG_SUM_CHUNK / 3) + 1;
		len = min(len, n - off);
		store_sum_add(&s, buf + off, len);
	}
	expect(s.size == n, "size %lu", s.size);
	expect(s.nr == 3 && s.fill == 12345, "%zu chunks + %u bytes", s.nr, s.fill);
	for (i = 0; i < s.nr; i++)
		expect(s.crc[i] == crc32c(0, buf + i * IMG_SUM_CHUNK, IMG_SUM_CHUNK),
		       "chunk %zu", i);
	expect(s.cur == crc32c(0, buf + 3 * IMG_SUM_CHUNK, 12345), "the last chunk");
	store_sum_free(&s);
	free(buf);
}

/* A page store of 2.5 chunks through the writer, and a raw store summed back. */
static void make_stores(void)
{
	static const size_t sizes[] = { PSTORE_BUF / 4, 7 * 4096, PSTORE_BUF / 4 + 4096 };
	struct pstore *ps = pstore_create(dirfd_, ID);
	uint8_t page[4096];
	size_t i, j;
	uint8_t *buf;
	int fd;

	require(ps, "pstore_create");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		buf = pstore_buf(ps);
		require(buf, "pstore_buf");
		for (j = 0; j < sizes[i]; j++)
			buf[j] = rnd();
		require(!pstore_submit(ps, sizes[i]), "submit");
	}
	require(!pstore_close(ps, NULL), "pstore_close");

	fd = img_open_raw(dirfd_, IMG_SHMEM_PAGES, 0, 1);
	require(fd >= 0, "img_open_raw");
	memset(page, 0x5a, sizeof(page));
	for (i = 0; i < 3; i++)
		expect(write(fd, page, sizeof(page)) == sizeof(page), "write");
	close(fd);
	require(!img_sums_file(dirfd_, IMG_SHMEM_PAGES, 0), "img_sums_file");
}

/*
 * A store whose caller sums what it puts into the buffer (as the dump does
 * after each read of a task's memory) has the sums of the file's chunks.
 */
static void test_store_caller_sums(void)
{
	InventoryEntry e = INVENTORY_ENTRY__INIT;
	struct pstore *ps = pstore_create(dirfd_, ID + 9);
	const StoreChecksum *c = NULL;
	size_t i, j, len, off;
	uint8_t *buf, *file;
	char name[64];

	require(ps, "pstore_create");
	for (i = 0; i < 2; i++) {
		buf = pstore_buf(ps);
		require(buf, "pstore_buf");
		for (off = 0; off < PSTORE_BUF; off += len) {
			len = rnd() % (300 << 10) + 1;	/* min() evaluates twice */
			len = min(len, PSTORE_BUF - off);
			for (j = 0; j < len; j++)
				buf[off + j] = rnd();
			pstore_sum(ps, buf + off, len);
		}
		require(!pstore_submit(ps, PSTORE_BUF), "submit");
	}
	require(!pstore_close(ps, NULL), "pstore_close");
	img_sums_fill(&e);
	img_name(IMG_PAGES, ID + 9, name, sizeof(name));
	for (i = 0; i < e.n_stores; i++)
		if (!strcmp(e.stores[i]->name, name))
			c = e.stores[i];
	require(c && c->n_crc32c == 2 * PSTORE_BUF / IMG_SUM_CHUNK, "sums of %s: %zu chunks, %lu bytes", name,
		c ? c->n_crc32c : 0, c ? c->size : 0);
	file = file_bytes(name, &len);
	require(file && len == 2 * PSTORE_BUF, "read back");
	for (i = 0; i < c->n_crc32c; i++)
		expect(c->crc32c[i] == crc32c(0, file + i * IMG_SUM_CHUNK, IMG_SUM_CHUNK),
		       "chunk %zu", i);
	free(file);
	unlinkat(dirfd_, name, 0);
}

/* The inventory the dump would write, as restore reads it back. */
static InventoryEntry *inventory(void)
{
	InventoryEntry e = INVENTORY_ENTRY__INIT, *back = NULL;

	e.fmt_version = IMG_FMT_VERSION;
	e.root_pid = ID;
	img_sums_fill(&e);
	if (img_write(dirfd_, IMG_INVENTORY, 0, &e.base) ||
	    img_read(dirfd_, IMG_INVENTORY, 0, (void **)&back, 0) != 1)
		return NULL;
	return back;
}

static int verify(InventoryEntry *inv)
{
	return img_verify_start(dirfd_, inv) ? -1 : img_verify_wait();
}

static void flip_at(const char *name, uint64_t off)
{
	uint8_t b;
	int fd = openat(dirfd_, name, O_RDWR);

	expect(fd >= 0 && pread(fd, &b, 1, off) == 1, "read %s", name);
	b ^= 0x80;
	expect(fd >= 0 && pwrite(fd, &b, 1, off) == 1, "write %s", name);
	if (fd >= 0)
		close(fd);
}

static void test_verify_stores(void)
{
	InventoryEntry *inv;
	char name[64], want[160];
	off_t mark;

	make_stores();
	inv = inventory();
	require(inv, "inventory");
	expect(inv->store_checksums && inv->n_stores == 2, "%zu stores", inv->n_stores);
	/* 4 MiB + 32 KiB of pages */
	expect(inv->n_stores == 2 && inv->stores[0]->n_crc32c == 5 &&
	       inv->stores[1]->n_crc32c == 1, "chunks");
	expect(!verify(inv), "good stores refused: %s", log_since(0));
	expect(!img_sums_expect("pages-4343.img"), "a listed store is refused");

	img_name(IMG_PAGES, ID, name, sizeof(name));
	flip_at(name, IMG_SUM_CHUNK + 4097);
	mark = log_mark();
	expect(verify(inv) == -1, "a flipped byte in chunk 1 is not seen");
	snprintf(want, sizeof(want), "%s is corrupted: chunk 1 (bytes %u-%u)", name,
		 IMG_SUM_CHUNK, 2 * IMG_SUM_CHUNK - 1);
	expect(strstr(log_since(mark), want), "log: '%s'", log_since(mark));
	flip_at(name, IMG_SUM_CHUNK + 4097);
	expect(!verify(inv), "flipped back, refused");

	/* one byte more at the end of the shmem store */
	flip_at("shmem-pages.img", 3 * 4096 - 1);
	mark = log_mark();
	expect(verify(inv) == -1, "the last byte of a store is not checked");
	expect(strstr(log_since(mark), "shmem-pages.img is corrupted: chunk 0"), "log: '%s'",
	       log_since(mark));
	flip_at("shmem-pages.img", 3 * 4096 - 1);

	expect(!verify(inv), "the stores as they were are refused");
	mark = log_mark();
	expect(img_sums_expect("sysvipc-pages.img") == -1, "an unlisted store is accepted");
	expect(strstr(log_since(mark), "sysvipc-pages.img has no checksum"), "log: '%s'",
	       log_since(mark));

	/* --skip-checksum: nothing checked, nothing refused */
	flip_at(name, 5);
	img_set_checksum(0);
	expect(!verify(inv), "checked with checksums off");
	expect(!img_sums_expect("sysvipc-pages.img"), "refused with checksums off");
	img_set_checksum(1);
	expect(verify(inv) == -1, "a flipped byte in chunk 0 is not seen");
	flip_at(name, 5);
	img_free(IMG_INVENTORY, inv);
}

/* A store cut short, a symlink in a store's place, a forged table. */
static void test_verify_refusals(void)
{
	InventoryEntry *inv = inventory();
	char name[64], *keep;
	uint64_t size;
	off_t mark;

	require(inv && inv->n_stores == 2, "inventory");
	img_name(IMG_PAGES, ID, name, sizeof(name));
	size = inv->stores[0]->size;
	require(!truncate(name, size - 4096), "truncate: %m");
	mark = log_mark();
	expect(verify(inv) == -1, "a truncated store");
	expect(strstr(log_since(mark), "is truncated"), "log: '%s'", log_since(mark));

	unlinkat(dirfd_, name, 0);
	require(!symlinkat("shmem-pages.img", dirfd_, name), "symlink");
	mark = log_mark();
	expect(verify(inv) == -1, "a symlink in a store's place");
	expect(img_open_raw(dirfd_, IMG_PAGES, ID, 0) < 0, "a symlinked store opened");
	expect(strstr(log_since(mark), "symbolic link"), "log: '%s'", log_since(mark));
	unlinkat(dirfd_, name, 0);

	keep = inv->stores[1]->name;
	inv->stores[1]->name = "../etc/passwd";
	mark = log_mark();
	expect(verify(inv) == -1, "a path in the table");
	expect(strstr(log_since(mark), "inventory.img is corrupted"), "log: '%s'",
	       log_since(mark));
	inv->stores[1]->name = keep;
	inv->stores[1]->n_crc32c--;
	expect(verify(inv) == -1, "a table one chunk short");
	inv->stores[1]->n_crc32c++;
	img_free(IMG_INVENTORY, inv);
}

/* ---------------------------------------------------- no planted link */

static int victim(const char *content)
{
	int fd = openat(dirfd_, "victim", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	expect(fd >= 0 && write(fd, content, strlen(content)) == (ssize_t)strlen(content),
	       "victim: %m");
	if (fd >= 0)
		close(fd);
	return fchmodat(dirfd_, "victim", 0644, 0);
}

static void expect_victim(const char *content, const char *what)
{
	struct stat st;
	size_t len;
	char *got = read_file(dirfd_, "victim", &len);

	expect(got && !strcmp(got, content), "%s: the target now holds '%s'", what,
	       got ? got : "?");
	expect(!fstatat(dirfd_, "victim", &st, 0) && (st.st_mode & 07777) == 0644,
	       "%s: the target's mode is now %o", what, st.st_mode & 07777);
	free(got);
}

static void expect_own_file(const char *name, const char *what)
{
	struct stat st;

	expect(!fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
	       st.st_nlink == 1 && (st.st_mode & 07777) == 0600,
	       "%s: %s is not a file of its own, 0600 (mode %o, links %lu)", what, name,
	       st.st_mode & 07777, (unsigned long)st.st_nlink);
}

static void test_create_over_links(void)
{
	char name[64];
	struct pstore *ps;
	int fd;

	img_name(IMG_FS, ID, name, sizeof(name));
	victim("secret");
	unlinkat(dirfd_, name, 0);
	require(!symlinkat("victim", dirfd_, name), "symlink");
	write_fs("/x");
	expect_victim("secret", "img_write over a symlink");
	expect_own_file(name, "img_write over a symlink");

	unlinkat(dirfd_, name, 0);
	require(!linkat(dirfd_, "victim", dirfd_, name, 0), "link");
	write_fs("/x");
	expect_victim("secret", "img_write over a hard link");
	expect_own_file(name, "img_write over a hard link");

	img_name(IMG_PAGES, ID + 1, name, sizeof(name));
	require(!symlinkat("victim", dirfd_, name), "symlink");
	ps = pstore_create(dirfd_, ID + 1);
	expect(ps && pstore_buf(ps) && !pstore_submit(ps, 4096) && !pstore_close(ps, NULL),
	       "pstore over a symlink");
	expect_victim("secret", "a page store over a symlink");
	expect_own_file(name, "a page store over a symlink");
	unlinkat(dirfd_, name, 0);

	/* a path with a directory part, as a log or pidfile may be given */
	require(!symlinkat("victim", dirfd_, "some.log"), "symlink");
	snprintf(name, sizeof(name), "%s/some.log", tmpdir);
	fd = create_file_at(AT_FDCWD, name, O_WRONLY | O_APPEND);
	expect(fd >= 0 && write(fd, "x", 1) == 1, "create_file_at: %m");
	if (fd >= 0)
		close(fd);
	expect_victim("secret", "create_file_at of an absolute path");
	expect_own_file("some.log", "create_file_at of an absolute path");
	unlinkat(dirfd_, "some.log", 0);
}

static void test_read_refuses_links(void)
{
	char name[64];
	off_t mark;
	void *msg = NULL;

	write_fs("/y");
	img_name(IMG_FS, ID, name, sizeof(name));
	require(!renameat(dirfd_, name, dirfd_, "real.img"), "rename");
	require(!symlinkat("real.img", dirfd_, name), "symlink");
	mark = log_mark();
	expect(img_read(dirfd_, IMG_FS, ID, &msg, 0) == -1, "an image read through a symlink");
	expect(img_read(dirfd_, IMG_FS, ID, &msg, 1) == -1, "an optional one, too");
	expect(strstr(log_since(mark), "is a symbolic link"), "log: '%s'", log_since(mark));
	unlinkat(dirfd_, name, 0);
	unlinkat(dirfd_, "real.img", 0);
}

/* ------------------------------------------------------------------ log */

static void test_log_escape(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain /path", "plain /path" },
		{ "\x1b[31mred\a\r", "\\x1b[31mred\\x07\\x0d" },
		{ "new\nline\ttab\x7f", "new\\x0aline\\x09tab\\x7f" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },	/* é € */
		{ "c1 \xc2\x9b csi", "c1 \\xc2\\x9b csi" },	/* U+009B, a C1 control */
		{ "raw \x9b", "raw \\x9b" },
		{ "cut \xc3", "cut \\xc3" },
		{ "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
		{ "surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80" },
	};
	char out[64];
	size_t i;
	off_t mark;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		log_escape(out, sizeof(out), cases[i].in);
		expect(!strcmp(out, cases[i].out), "case %zu: '%s'", i, out);
	}
	/* never past the end, never half an escape */
	expect(log_escape(out, 6, "\x1b\x1b") == 4 && !strcmp(out, "\\x1b"), "'%s'", out);
	expect(log_escape(out, 1, "abc") == 0 && !out[0], "size 1");

	mark = log_mark();
	pr_err("path %s", "/tmp/\x1b]0;owned\a\r");
	expect(strstr(log_since(mark), "path /tmp/\\x1b]0;owned\\x07\\x0d\n"), "log: '%s'",
	       log_since(mark));
	expect(!strchr(log_since(mark), '\x1b') && !strchr(log_since(mark), '\r'),
	       "raw control bytes in the log");
}

static void unit_setup(void)
{
	char logname[PATH_MAX];

	umask(0);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
	dirfd_ = open(tmpdir, O_RDONLY | O_DIRECTORY);
	snprintf(logname, sizeof(logname), "%s.log", tmpdir);
	logfd = open(logname, O_RDWR | O_CREAT | O_APPEND | O_TRUNC, 0600);
	unlink(logname);
	if (dirfd_ < 0 || logfd < 0 || fchdir(dirfd_)) {
		perror("open");
		exit(1);
	}
	atexit(cleanup);
	log_open(NULL, LOG_DEBUG);
	log_set_fd(logfd);
}

static const struct unit_test tests[] = {
	UNIT_TEST(test_crc32c_vectors),
	UNIT_TEST(test_crc32c_streams),
	UNIT_TEST(test_frame_every_flip),
	UNIT_TEST(test_frame_checksum_logged),
	UNIT_TEST(test_frame_version1),
	UNIT_TEST(test_store_sum_chunks),
	UNIT_TEST(test_verify_stores),
	UNIT_TEST(test_verify_refusals),
	UNIT_TEST(test_store_caller_sums),	/* adds a store to the inventory */
	UNIT_TEST(test_create_over_links),
	UNIT_TEST(test_read_refuses_links),
	UNIT_TEST(test_log_escape),
};

UNIT_MAIN(tests)
