// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the image reader: the first input byte picks the
 * image type (modulo IMG_NR, so the raw page store and the error path for
 * it are reached too), the rest is the file as img_read() would have read
 * it, its checksum made right first (else nearly every mutation would stop
 * there, and the unit tests cover that check), handed to img_unpack() in a
 * buffer of exactly that size.
 *
 * A message that decodes is then held to what the code after img_read()
 * relies on:
 *  - it is complete: every required field and string is there
 *    (protobuf_c_message_check), and every field can be walked, strings to
 *    their NUL, arrays to their counts (ASan sees any bad pointer or count);
 *  - it can be written again: packing it gives the announced size, the
 *    result frames into an image that img_unpack() takes, and that decodes
 *    to a message packing to the very same bytes.
 * Any violation aborts, which libFuzzer reports as a crash with the input.
 *
 * Restore's own checks of mm and pagemap (validate() in criu/parts/mm.c)
 * need a task context and are static there, so this target stops at the
 * image layer.
 *
 * Build and run: test/fuzz/build.sh, test/fuzz/run.sh [seconds].
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "image/crc32c.h"
#include "image/image.h"

static void die(const char *what, const ProtobufCMessage *msg)
{
	fprintf(stderr, "fuzz_image: %s (%s)\n", what,
		msg ? msg->descriptor->name : "no message");
	abort();
}

static uint64_t walk_message(const ProtobufCMessage *msg, int depth);

static uint64_t walk_value(const ProtobufCFieldDescriptor *f, const void *p, int depth)
{
	const ProtobufCBinaryData *b;
	uint64_t sum = 0;
	size_t i;

	switch (f->type) {
	case PROTOBUF_C_TYPE_STRING:
		if (!*(char *const *)p)
			return 0;
		return strlen(*(char *const *)p);
	case PROTOBUF_C_TYPE_BYTES:
		b = p;
		if (b->len && !b->data)
			die("bytes field with a length and no data", NULL);
		for (i = 0; i < b->len; i++)
			sum += b->data[i];
		return sum;
	case PROTOBUF_C_TYPE_MESSAGE:
		if (!*(ProtobufCMessage *const *)p)
			return 0;
		return walk_message(*(ProtobufCMessage *const *)p, depth + 1);
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		memcpy(&sum, p, 8);
		return sum;
	default:
		return *(const uint32_t *)p;
	}
}

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default:
		return 4;
	}
}

/* Reads every field of @msg, as restore code would; returns a checksum. */
static uint64_t walk_message(const ProtobufCMessage *msg, int depth)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *base = (const char *)msg;
	uint64_t sum = 0;
	size_t n, j;
	unsigned int i;
	const char *arr;

	if (depth > 16)
		die("messages nested deeper than the .proto files allow", msg);
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			arr = *(const char *const *)(base + f->offset);
			if (n && !arr)
				die("repeated field with a count and no array", msg);
			for (j = 0; j < n; j++)
				sum += walk_value(f, arr + j * elem_size(f->type), depth);
			continue;
		}
		sum += walk_value(f, base + f->offset, depth);
	}
	return sum;
}

/*
 * protobuf-c (1.4) takes field number 0 when its key is written in more than
 * one byte (0x80 0x00), keeps it as an unknown field, then writes it back as
 * the one byte 0x00 that its own reader refuses. Restore only reads images,
 * so this is harmless here; such messages are not repacked.
 */
static int has_field_zero(const ProtobufCMessage *msg)
{
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *base = (const char *)msg;
	ProtobufCMessage *const *arr;
	unsigned int i;
	size_t j, n;

	for (i = 0; i < msg->n_unknown_fields; i++)
		if (msg->unknown_fields[i].tag == 0)
			return 1;
	for (i = 0; i < d->n_fields; i++) {
		f = &d->fields[i];
		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			n = *(const size_t *)(base + f->quantifier_offset);
			arr = *(ProtobufCMessage *const *const *)(base + f->offset);
		} else {
			n = 1;
			arr = (ProtobufCMessage *const *)(base + f->offset);
		}
		for (j = 0; j < n; j++)
			if (arr[j] && has_field_zero(arr[j]))
				return 1;
	}
	return 0;
}

/* Pack, frame, unpack, pack again: the bytes must not change. */
static void repack(enum img_type t, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg), len2;
	uint8_t *buf, *buf2;
	ProtobufCMessage *again;

	if (len > IMG_MAX_MSG)
		die("a decoded message packs larger than any image", msg);
	buf = malloc(len + IMG_HDR_SIZE);
	if (!buf)
		abort();
	if (protobuf_c_message_pack(msg, buf + IMG_HDR_SIZE) != len)
		die("pack() wrote another size than get_packed_size() said", msg);
	img_frame_header(t, buf + IMG_HDR_SIZE, len, buf);

	again = img_unpack(t, buf, len + IMG_HDR_SIZE, "fuzz-repacked");
	if (!again)
		die("a repacked message does not decode", msg);
	len2 = protobuf_c_message_get_packed_size(again);
	buf2 = malloc(len2 ? len2 : 1);
	if (!buf2)
		abort();
	protobuf_c_message_pack(again, buf2);
	if (len2 != len || memcmp(buf + IMG_HDR_SIZE, buf2, len))
		die("decode(pack(m)) packs to other bytes than m", msg);
	if (walk_message(again, 0) != walk_message(msg, 0))
		die("decode(pack(m)) reads differently from m", msg);
	img_free(t, again);
	free(buf2);
	free(buf);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* refusals are the common case: keep their log lines out of the way */
	if (!getenv("FUZZ_IMAGE_LOG")) {
		log_open(NULL, LOG_ERR);
		log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	}
	return 0;
}

/* A copy of the file @in with the checksum its header and message need. */
static uint8_t *frame_input(const uint8_t *in, size_t n)
{
	uint8_t *buf = malloc(n ? n : 1);
	uint32_t sum;

	if (!buf)
		abort();
	memcpy(buf, in, n);
	if (n >= IMG_HDR_SIZE) {
		sum = crc32c(crc32c(0, buf, 8), buf + IMG_HDR_SIZE, n - IMG_HDR_SIZE);
		memcpy(buf + 8, &sum, 4);
	}
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *msg;
	enum img_type t;
	uint8_t *file;

	if (size < 1)
		return 0;
	t = data[0] % IMG_NR;
	file = frame_input(data + 1, size - 1);
	msg = img_unpack(t, file, size - 1, "fuzz");
	free(file);
	if (!msg)
		return 0;
	if (!protobuf_c_message_check(msg))
		die("img_unpack() returned an incomplete message", msg);
	walk_message(msg, 0);
	if (!has_field_zero(msg))
		repack(t, msg);
	img_free(t, msg);
	return 0;
}
