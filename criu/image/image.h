/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_IMAGE_IMAGE_H
#define CRIU_IMAGE_IMAGE_H

#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/*
 * Bumped when an image changes incompatibly; restore refuses others.
 * 2: a CRC32C in every frame, checksums of the raw stores in the inventory.
 */
#define IMG_FMT_VERSION		2

/* magic, length, CRC32C of both and of the message; version 1 had no CRC */
#define IMG_HDR_SIZE		12
#define IMG_OLD_HDR_SIZE	8

/* The image kinds, numbered as the registry (images/kinds.def) says. */
enum img_type {
#define IMAGE(name, NAME, nr, file, magic, message)	IMG_##NAME = nr,
#define KIND IMAGE
#define RAW(name, NAME, nr, file)			IMG_##NAME = nr,
#include "kinds.def"
	/* how many: image.c checks that the numbers leave no gap */
	IMG_NR = 0
#define IMAGE(...) + 1
#define KIND IMAGE
#define RAW IMAGE
#include "kinds.def"
};

/* Largest framed message we accept; protects restore from absurd lengths. */
#define IMG_MAX_MSG	(256U << 20)

const char *img_name(enum img_type t, int id, char *buf, size_t len);
uint32_t img_magic(enum img_type t);

/*
 * Checksums: written at dump and checked at restore unless --skip-checksum
 * turned them off (then a dump sums no raw store, a restore checks nothing).
 */
void img_set_checksum(int on);
int img_checksum_on(void);
/* The header of a frame of @len bytes of message @msg (IMG_HDR_SIZE bytes). */
void img_frame_header(enum img_type t, const uint8_t *msg, size_t len, uint8_t *hdr);

/*
 * The raw stores the kernel fills by fd (sendfile; some from a helper in
 * the tree's namespaces), NULL-terminated: with a page server they are
 * made in the images directory and sent at the commit (imgout.h). The
 * page stores (pages-PID.img) are not among them: they are streamed.
 */
const char *const *img_staged_stores(void);

/* Writes magic + one length-prefixed message, file mode 0600. */
int img_write(int dirfd, enum img_type t, int id, const ProtobufCMessage *msg);
/* The same, always in @dirfd itself, even when the images go to a page server */
int img_write_here(int dirfd, enum img_type t, int id, const ProtobufCMessage *msg);
/*
 * @dirfd/parent made a link to @prev (relative to @dirfd; it must be a
 * directory), which restore follows to pages "in the parent"; -1 logged
 */
int img_link_parent(int dirfd, const char *prev);
/*
 * Reads and unpacks the one message of an image. Returns 1 and *msg on
 * success, 0 when the file does not exist and @optional is set, -1 on any
 * error (already logged with the file name and the reason).
 */
int img_read(int dirfd, enum img_type t, int id, void **msg, int optional);
/* Same, from a buffer; used by img_read and by the fuzz target. */
void *img_unpack(enum img_type t, const uint8_t *buf, size_t len, const char *name);
void img_free(enum img_type t, void *msg);

/*
 * Opens image @name for reading: never through a symbolic link, only a
 * regular file (a refusal is logged; errno ELOOP or EINVAL then).
 */
int img_open_read(int dirfd, const char *name);

#endif
