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

#include "core/file.h"
#include "core/log.h"
#include "core/util.h"
#include "image/crc32c.h"
#include "image/image.h"
#include "image/imgout.h"

struct img_desc {
	const char *fmt;	/* file name; %d is the task's pid */
	uint32_t magic;
	const ProtobufCMessageDescriptor *pb;
};

/* protobuf-c's descriptor of each message an image holds */
#define IMAGE(name, NAME, nr, file, magic, message) \
	extern const ProtobufCMessageDescriptor message##__descriptor;
#define KIND IMAGE
#include "kinds.def"

static const struct img_desc descs[IMG_NR] = {
#define IMAGE(name, NAME, nr, file, magic, message) \
	[IMG_##NAME] = { file, magic, &message##__descriptor },
#define KIND IMAGE
#define RAW(name, NAME, nr, file) [IMG_##NAME] = { file, 0, NULL },
#include "kinds.def"
};

/*
 * The registry's numbers leave no gap: each is below the count, and two
 * kinds with one number (or one magic) would declare one enumerator twice.
 */
#define IMAGE(name, NAME, nr, ...) \
	_Static_assert(nr < IMG_NR, "images/kinds.def: " #name ": number past the end");
#define KIND IMAGE
#define RAW IMAGE
#include "kinds.def"
enum {
#define IMAGE(name, NAME, nr, file, magic, message) \
	IMG_NUMBER_TAKEN_##nr, IMG_MAGIC_TAKEN_##magic,
#define KIND IMAGE
#define RAW(name, NAME, nr, file) IMG_NUMBER_TAKEN_##nr,
#include "kinds.def"
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

const char *const *img_staged_stores(void)
{
	static const char *names[IMG_NR];
	int i, nr = 0;

	if (names[0])
		return names;
	for (i = 0; i < IMG_NR; i++)
		if (!descs[i].pb && i != IMG_PAGES)
			names[nr++] = descs[i].fmt;
	return names;
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

/* @msg framed (header and message) in a new buffer of *@len bytes; NULL logged. */
static uint8_t *img_pack(enum img_type t, const ProtobufCMessage *msg, const char *name,
			 size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf;

	if (n > IMG_MAX_MSG) {
		pr_err("Image %s: message of %zu bytes is too large", name, n);
		return NULL;
	}
	buf = xmalloc(n + IMG_HDR_SIZE);
	if (!buf)
		return NULL;
	protobuf_c_message_pack(msg, buf + IMG_HDR_SIZE);
	img_frame_header(t, buf + IMG_HDR_SIZE, n, buf);
	*len = n + IMG_HDR_SIZE;
	return buf;
}

int img_write(int dirfd, enum img_type t, int id, const ProtobufCMessage *msg)
{
	struct imgout_file f;
	char name[64];
	uint8_t *buf;
	size_t len;
	int ret = -1;

	img_name(t, id, name, sizeof(name));
	buf = img_pack(t, msg, name, &len);
	if (!buf)
		return -1;
	if (imgout_create(dirfd, name, &f))
		goto out;
	if (imgout_write(&f, buf, len)) {
		pr_perror("Can't write image %s%s", name, imgout_where());
		imgout_close(&f);
		goto out;
	}
	ret = imgout_close(&f);
	if (ret)
		pr_perror("Can't write image %s%s", name, imgout_where());
out:
	free(buf);
	return ret;
}

int img_write_here(int dirfd, enum img_type t, int id, const ProtobufCMessage *msg)
{
	char name[64];
	uint8_t *buf;
	size_t len;
	int fd, ret = -1;

	img_name(t, id, name, sizeof(name));
	buf = img_pack(t, msg, name, &len);
	if (!buf)
		return -1;
	fd = create_file_at(dirfd, name, O_WRONLY);
	if (fd >= 0 && !write_full(fd, buf, len))
		ret = 0;
	if (ret)
		pr_perror("Can't write image %s in the images directory", name);
	if (fd >= 0 && close(fd) && !ret) {
		pr_perror("Can't write image %s in the images directory", name);
		ret = -1;
	}
	free(buf);
	return ret;
}

int img_link_parent(int dirfd, const char *prev)
{
	int d = openat(dirfd, prev, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (d < 0) {
		pr_perror("Can't open the previous images %s (relative to the images dir)", prev);
		return -1;
	}
	close(d);
	/* restore follows DIR/parent, as CRIU's */
	if ((unlinkat(dirfd, "parent", 0) && errno != ENOENT) ||
	    symlinkat(prev, dirfd, "parent")) {
		pr_perror("Can't link the images to their parent %s", prev);
		return -1;
	}
	return 0;
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
