// SPDX-License-Identifier: GPL-2.0-only
/*
 * memfd_create() files shared by a parent and its child, mapped and held
 * open: "zdtm-shared" (MFD_CLOEXEC|MFD_ALLOW_SEALING, 5 pages and 100
 * bytes, a page never written, sealed against shrinking and growing) is
 * mapped shared by both and open in both through one description (its
 * offset is shared); a write-sealed one, with an odd name, is only mapped
 * (read-only); one made without MFD_ALLOW_SEALING is only open; the child
 * has one of its own, MFD_NOEXEC_SEAL, mapped privately with a page
 * changed (the copy differs from the file); the root has one sealed with
 * F_SEAL_FUTURE_WRITE after it mapped it writable (its mapping stays
 * writable, new ones can't be). Sizes, names, seals, modes,
 * close-on-exec, offsets and contents must be kept, and after the restore
 * writes through a mapping and through an fd must reach the other task.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "mem_tree.h"

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL	0x0008U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC	0x0020
#endif

#define PG		4096
#define M1_SIZE		(5 * PG + 100)
#define M1_HOLE		2		/* a page of m1 never written */
#define KID_PAGE	3		/* written by the child */
#define ACK_PAGE	4		/* the child answers there after the restore */
#define M2_SIZE		3000
#define M2_NAME		"zdtm sealed (deleted)"
#define TOKEN		0x5eed5eed12345678ULL
#define ACK		0xacacacac87654321ULL
#define M1_POS		1234
#define M1_POS2		4321

static int m1, m3, m4, m5;
static uint8_t *p1, *p2, *p4, *p5;

static uint8_t byte_at(unsigned long seed, size_t i)
{
	return test_pattern(seed, i / 8) >> (8 * (i % 8));
}

static void fill(uint8_t *p, size_t len, unsigned long seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = byte_at(seed, i);
}

/* bytes [from, len) of @p are the pattern of @seed */
static int same(const uint8_t *p, size_t from, size_t len, unsigned long seed)
{
	size_t i;

	for (i = from; i < len; i++)
		if (p[i] != byte_at(seed, i))
			return 0;
	return 1;
}

static int zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static void check_name(int fd, const char *want)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		mt_die("readlink %s: %m", path);
	link[n] = '\0';
	if (strcmp(link, want))
		mt_die("fd %d is '%s', not '%s'", fd, link, want);
}

static void check_seals(int fd, int want)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals != want)
		mt_die("fd %d has seals %#x, not %#x", fd, seals, want);
}

/* m1 and m2 as the tasks left them before the dump */
static void check_shared(void)
{
	struct stat st;
	int i;

	if (fstat(m1, &st) || st.st_size != M1_SIZE)
		mt_die("zdtm-shared is %ld bytes, not %d", (long)st.st_size, M1_SIZE);
	check_name(m1, "/memfd:zdtm-shared (deleted)");
	check_seals(m1, F_SEAL_SHRINK | F_SEAL_GROW);
	if (!(fcntl(m1, F_GETFD) & FD_CLOEXEC))
		mt_die("zdtm-shared lost its close-on-exec flag");
	for (i = 0; i < 5; i++) {
		if (i == ACK_PAGE)
			continue;
		if (i == M1_HOLE ? !zero(p1 + i * PG, PG) :
		    !same(p1 + i * PG, i ? 0 : 8, PG, i == KID_PAGE ? 30 : 10 + i))
			mt_die("zdtm-shared page %d is not what it was", i);
	}
	if (!same(p1 + 5 * PG, 0, 100, 15) || !zero(p1 + 5 * PG + 100, PG - 100))
		mt_die("the last page of zdtm-shared is not what it was");
	if (!same(p2, 0, M2_SIZE, 20) || !zero(p2 + M2_SIZE, PG - M2_SIZE))
		mt_die("the sealed memfd is not what it was");
}

static void check_m3(void)
{
	char buf[16] = "";

	check_name(m3, "/memfd:zdtm-noseal (deleted)");
	/* without MFD_ALLOW_SEALING a memfd comes sealed against sealing */
	check_seals(m3, F_SEAL_SEAL);
	if (fcntl(m3, F_ADD_SEALS, F_SEAL_GROW) == 0)
		mt_die("zdtm-noseal took a seal");
	if (fcntl(m3, F_GETFD) & FD_CLOEXEC)
		mt_die("zdtm-noseal became close-on-exec");
	if (lseek(m3, 0, SEEK_CUR) != 5 || pread(m3, buf, sizeof(buf), 0) != 5 ||
	    strcmp(buf, "hello"))
		mt_die("zdtm-noseal is not what it was");
}

/* sealed against future writes, after it was mapped writable */
static void check_future(void)
{
	char buf[8];
	void *p;

	check_seals(m5, F_SEAL_FUTURE_WRITE);
	if (!same(p5, 0, PG, 50))
		fail("zdtm-future is not what it was");
	memcpy(p5, "mapped", 6);	/* the old mapping still writes */
	if (pread(m5, buf, 6, 0) != 6 || memcmp(buf, "mapped", 6))
		fail("a write through zdtm-future's mapping did not reach the file");
	if (pwrite(m5, "x", 1, 0) != -1 || errno != EPERM)
		fail("zdtm-future could be written");
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, m5, 0);
	if (p != MAP_FAILED)
		fail("zdtm-future could be mapped writable again");
}

static void kid_setup(void)
{
	fill(p1 + KID_PAGE * PG, PG, 30);
	m4 = memfd_create("kid-own", MFD_NOEXEC_SEAL);
	if (m4 < 0)
		mt_die("memfd_create: %m");
	if (ftruncate(m4, 2 * PG))
		mt_die("ftruncate: %m");
	p4 = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, m4, 0);
	if (p4 == MAP_FAILED)
		mt_die("mmap: %m");
	fill(p4, PG, 40);		/* the task's copy */
	if (pwrite(m4, "file", 4, PG) != 4)	/* the file, seen in page 1 */
		mt_die("pwrite: %m");
}

static void kid_check(void)
{
	struct stat st;
	char buf[8] = "";

	check_shared();
	check_m3();
	if (*(uint64_t *)p1 != TOKEN)
		mt_die("the parent's write after the restore is not seen");
	/* one description: the parent moved the offset we share */
	if (lseek(m1, 0, SEEK_CUR) != M1_POS2)
		mt_die("zdtm-shared is at %ld, the parent left it at %d",
		       (long)lseek(m1, 0, SEEK_CUR), M1_POS2);
	check_name(m4, "/memfd:kid-own (deleted)");
	check_seals(m4, F_SEAL_EXEC);
	if (fstat(m4, &st) || (st.st_mode & 07777) != 0666 || st.st_size != 2 * PG)
		mt_die("kid-own has mode %o, size %ld", st.st_mode & 07777, (long)st.st_size);
	if (!same(p4, 0, PG, 40) || memcmp(p4 + PG, "file", 4))
		mt_die("kid-own's mapping is not what it was");
	if (pread(m4, buf, 4, 0) != 4 || !zero((uint8_t *)buf, 4) ||
	    pread(m4, buf, 4, PG) != 4 || memcmp(buf, "file", 4))
		mt_die("kid-own's file is not what it was");
	if (pwrite(m1, &(uint64_t){ ACK }, 8, ACK_PAGE * PG) != 8)
		mt_die("pwrite: %m");
}

/* The child's memfd is made with MFD_NOEXEC_SEAL: skips where it can't be. */
static void need_noexec_seal(void)
{
	int fd = memfd_create("zdtm-probe", MFD_NOEXEC_SEAL);

	if (fd < 0 && errno == EINVAL)
		skip("no MFD_NOEXEC_SEAL (Linux 6.3+)");
	if (fd < 0)
		fail_errno("memfd_create(MFD_NOEXEC_SEAL)");
	close(fd);
}

int main(int argc, char **argv)
{
	int m2, i;

	test_init(argc, argv);
	need_noexec_seal();
	mt_init();
	m1 = memfd_create("zdtm-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	m2 = memfd_create(M2_NAME, MFD_ALLOW_SEALING);
	m3 = memfd_create("zdtm-noseal", 0);
	if (m1 < 0 || m2 < 0 || m3 < 0)
		fail_errno("memfd_create");
	if (ftruncate(m1, M1_SIZE))
		fail_errno("ftruncate");
	p1 = mmap(NULL, 6 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, m1, 0);
	if (p1 == MAP_FAILED)
		fail_errno("mmap");
	for (i = 0; i < 5; i++)
		if (i != M1_HOLE)
			fill(p1 + i * PG, PG, 10 + i);
	fill(p1 + 5 * PG, 100, 15);
	if (fcntl(m1, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) ||
	    lseek(m1, M1_POS, SEEK_SET) != M1_POS)
		fail_errno("sealing zdtm-shared");

	p2 = malloc(M2_SIZE);
	if (!p2)
		fail("out of memory");
	fill(p2, M2_SIZE, 20);
	if (write(m2, p2, M2_SIZE) != M2_SIZE)
		fail_errno("write");
	free(p2);
	if (fcntl(m2, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL))
		fail_errno("sealing " M2_NAME);
	p2 = mmap(NULL, PG, PROT_READ, MAP_SHARED, m2, 0);
	if (p2 == MAP_FAILED)
		fail_errno("mmap");
	close(m2);			/* mapped only */
	if (write(m3, "hello", 5) != 5)
		fail_errno("write");
	m5 = memfd_create("zdtm-future", MFD_ALLOW_SEALING);
	if (m5 < 0 || ftruncate(m5, PG))
		fail_errno("zdtm-future");
	p5 = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, m5, 0);
	if (p5 == MAP_FAILED)
		fail_errno("mmap");
	fill(p5, PG, 50);
	if (fcntl(m5, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
		fail_errno("sealing zdtm-future");

	mt_fork("kid", kid_setup, kid_check);
	mt_wait_ready(1);
	test_ready();
	test_waitsig();

	if (lseek(m1, 0, SEEK_CUR) != M1_POS)
		fail("zdtm-shared is at %ld, not %d", (long)lseek(m1, 0, SEEK_CUR), M1_POS);
	check_shared();
	check_m3();
	check_future();
	if (mprotect(p2, PG, PROT_READ | PROT_WRITE) == 0)
		fail("the write-sealed memfd could be made writable");
	*(uint64_t *)p1 = TOKEN;
	lseek(m1, M1_POS2, SEEK_SET);
	mt_kids_check();
	if (*(uint64_t *)(p1 + ACK_PAGE * PG) != ACK)
		fail("the child's write after the restore is not seen");
	pass();
}
