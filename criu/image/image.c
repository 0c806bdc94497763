// SPDX-License-Identifier: GPL-2.0
/*
 * Framed protobuf images: a 32-bit magic naming the image kind, then one
 * message prefixed by its 32-bit length. Readers check every length against
 * the file size before trusting it, so a truncated or corrupted image is
 * reported instead of read past.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "image/crc32c.h"
#include "image/image.h"
#include "image/sums.h"

#include "inventory.pb-c.h"
#include "pstree.pb-c.h"
#include "timens.pb-c.h"
#include "regs.pb-c.h"
#include "mm.pb-c.h"
#include "pagemap.pb-c.h"
#include "sigact.pb-c.h"
#include "signal.pb-c.h"
#include "itimer.pb-c.h"
#include "rlimit.pb-c.h"
#include "sched.pb-c.h"
#include "creds.pb-c.h"
#include "fs.pb-c.h"
#include "task.pb-c.h"
#include "fdinfo.pb-c.h"
#include "cpu.pb-c.h"
#include "posix_timer.pb-c.h"
#include "shmem.pb-c.h"
#include "sysvipc.pb-c.h"
#include "uts.pb-c.h"
#include "seccomp.pb-c.h"
#include "vdso.pb-c.h"

struct img_desc {
	const char *fmt;	/* file name; %d is the task's pid */
	uint32_t magic;
	const ProtobufCMessageDescriptor *pb;
};

static const struct img_desc descs[IMG_NR] = {
	[IMG_INVENTORY] = { "inventory.img", 0x58313116, &inventory_entry__descriptor },
	[IMG_PSTREE]	= { "pstree.img", 0x50273030, &pstree_entry__descriptor },
	[IMG_TIMENS]	= { "timens.img", 0x54490001, &timens_entry__descriptor },
	[IMG_REGS]	= { "regs-%d.img", 0x52470002, &regs_entry__descriptor },
	[IMG_MM]	= { "mm-%d.img", 0x4d4d0003, &mm_entry__descriptor },
	[IMG_PAGEMAP]	= { "pagemap-%d.img", 0x50470004, &pagemap_entry__descriptor },
	[IMG_PAGES]	= { "pages-%d.img", 0, NULL },
	[IMG_SIGACT]	= { "sigact-%d.img", 0x53410005, &sigact_entry__descriptor },
	[IMG_SIGNAL]	= { "signal-%d.img", 0x53470006, &signal_entry__descriptor },
	[IMG_ITIMER]	= { "itimer-%d.img", 0x49540007, &itimer_entry__descriptor },
	[IMG_RLIMIT]	= { "rlimit-%d.img", 0x524c0008, &rlimit_entry__descriptor },
	[IMG_SCHED]	= { "sched-%d.img", 0x53430009, &sched_entry__descriptor },
	[IMG_CREDS]	= { "creds-%d.img", 0x4352000a, &creds_entry__descriptor },
	[IMG_FS]	= { "fs-%d.img", 0x4653000b, &fs_entry__descriptor },
	[IMG_TASK]	= { "task-%d.img", 0x5441000c, &task_entry__descriptor },
	[IMG_FDINFO]	= { "fdinfo-%d.img", 0x4644000d, &fdinfo_entry__descriptor },
	[IMG_CPUINFO]	= { "cpuinfo.img", 0x43490020, &cpuinfo_entry__descriptor },
	[IMG_CPU]	= { "cpu-%d.img", 0x43500021, &cpu_entry__descriptor },
	[IMG_POSIX_TIMER] = { "posix_timer-%d.img", 0x50540030, &posix_timer_entry__descriptor },
	[IMG_FILES]	= { "files.img", 0x464c0040, &files_entry__descriptor },
	[IMG_SHMEM]	= { "shmem.img", 0x53480040, &shmem_entry__descriptor },
	[IMG_SHMEM_PAGES] = { "shmem-pages.img", 0, NULL },
	[IMG_SYSVIPC]	= { "sysvipc.img", 0x53560041, &sysvipc_entry__descriptor },
	[IMG_SYSVIPC_PAGES] = { "sysvipc-pages.img", 0, NULL },
	[IMG_UTS]	= { "uts-%d.img", 0x55540040, &uts_entry__descriptor },
	[IMG_SECCOMP]	= { "seccomp.img", 0x53430050, &seccomp_entry__descriptor },
	[IMG_SECCOMP_TASK] = { "seccomp-%d.img", 0x53430051, &seccomp_task_entry__descriptor },
	[IMG_VDSO]	= { "vdso.img", 0x56440060, &vdso_entry__descriptor },
};

const char *img_name(enum img_type t, int id, char *buf, size_t len)
{
	snprintf(buf, len, descs[t].fmt, id);
	return buf;
}

uint32_t img_magic(enum img_type t)
{
	return descs[t].magic;
}

static int checksums = 1;

void img_set_checksum(int on)
{
	checksums = on;
}

int img_checksum_on(void)
{
	return checksums;
}

void img_frame_header(enum img_type t, const uint8_t *msg, size_t len, uint8_t *hdr)
{
	uint32_t h[3] = { descs[t].magic, (uint32_t)len, 0 };

	h[2] = crc32c(crc32c(0, h, 8), msg, len);
	memcpy(hdr, h, IMG_HDR_SIZE);
}

int img_write(int dirfd, enum img_type t, int id, const ProtobufCMessage *msg)
{
	char name[64];
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf;
	int fd, ret = -1;

	img_name(t, id, name, sizeof(name));
	if (len > IMG_MAX_MSG) {
		pr_err("Image %s: message of %zu bytes is too large", name, len);
		return -1;
	}
	buf = xmalloc(len + IMG_HDR_SIZE);
	if (!buf)
		return -1;
	protobuf_c_message_pack(msg, buf + IMG_HDR_SIZE);
	img_frame_header(t, buf + IMG_HDR_SIZE, len, buf);

	fd = create_file_at(dirfd, name, O_WRONLY);
	if (fd < 0) {
		pr_perror("Can't create image %s", name);
		goto out;
	}
	if (write_full(fd, buf, len + IMG_HDR_SIZE)) {
		pr_perror("Can't write image %s", name);
		close(fd);
		goto out;
	}
	close(fd);
	ret = 0;
out:
	free(buf);
	return ret;
}

void *img_unpack(enum img_type t, const uint8_t *buf, size_t len, const char *name)
{
	uint32_t hdr[3], sum;
	void *msg;

	if (t < 0 || t >= IMG_NR || !descs[t].pb) {
		pr_err("Image %s: type %d has no message to unpack", name, t);
		return NULL;
	}
	if (len < IMG_HDR_SIZE) {
		pr_err("Image %s is truncated: %zu bytes, no header", name, len);
		return NULL;
	}
	memcpy(hdr, buf, IMG_HDR_SIZE);
	if (hdr[0] != descs[t].magic) {
		pr_err("Image %s is corrupted: magic %#x, expected %#x",
		       name, hdr[0], descs[t].magic);
		return NULL;
	}
	if (hdr[1] > IMG_MAX_MSG || hdr[1] != len - IMG_HDR_SIZE) {
		if (hdr[1] == len - IMG_OLD_HDR_SIZE)
			pr_err("Image %s is framed as in format version 1 (no checksum); "
			       "this criu reads version %d", name, IMG_FMT_VERSION);
		else
			pr_err("Image %s is %s: message of %u bytes in a %zu-byte file",
			       name, hdr[1] > len - IMG_HDR_SIZE ? "truncated" : "corrupted",
			       hdr[1], len);
		return NULL;
	}
	sum = crc32c(crc32c(0, hdr, 8), buf + IMG_HDR_SIZE, hdr[1]);
	if (checksums && sum != hdr[2]) {
		pr_err("Image %s is corrupted: its checksum is %#x, its bytes sum to %#x",
		       name, hdr[2], sum);
		return NULL;
	}
	msg = protobuf_c_message_unpack(descs[t].pb, NULL, hdr[1], buf + IMG_HDR_SIZE);
	if (!msg)
		pr_err("Image %s is corrupted: can't decode its %s message",
		       name, descs[t].pb->name);
	return msg;
}

int img_open_read(int dirfd, const char *name)
{
	struct stat st;
	int fd;

	/* a FIFO planted under an image name must not block us */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			pr_err("Image %s is a symbolic link: refused (images are never "
			       "followed)", name);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pr_err("Image %s is not a regular file: refused", name);
		close(fd);
		errno = EINVAL;
		return -1;
	}
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

int img_read(int dirfd, enum img_type t, int id, void **msg, int optional)
{
	char name[64];
	size_t len;
	uint8_t *buf = NULL;
	int fd;

	img_name(t, id, name, sizeof(name));
	fd = img_open_read(dirfd, name);
	if (fd >= 0)
		buf = (uint8_t *)read_fd(fd, &len);
	if (!buf) {
		if (errno == ENOENT && optional)
			return 0;
		if (errno != ELOOP && errno != EINVAL)
			pr_perror("Can't read image %s", name);
		return -1;
	}
	*msg = img_unpack(t, buf, len, name);
	free(buf);
	return *msg ? 1 : -1;
}

void img_free(enum img_type t, void *msg)
{
	if (msg)
		protobuf_c_message_free_unpacked(msg, NULL);
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
